"""Activation primitives: ``relu`` and its derivative ``relu_grad``.

``relu(x) = max(x, 0)`` is one pass (``maximum``; a NaN stays NaN, as in PyTorch), where
``where(x > 0, x, 0)`` is two and NumPy's ``where`` with a data-dependent mask runs about ten
times slower than ``maximum``. Its derivative is 0 at ``x = 0`` (PyTorch's and JAX's choice;
``maximum`` would split it). ``relu_grad(g, x) = where(x > 0, g, 0)`` exactly (an infinite or
NaN ``g`` where ``x <= 0`` still gives 0, which ``g * (x > 0)`` would not); on the host it
selects bit patterns (``g & -(x > 0)``), which is branch-free.
"""

from __future__ import annotations

from typing import Any

import numpy

from funcgrad.core import bind1
from funcgrad.interpreters.jvp import defjvp
from funcgrad.interpreters.transpose import deftranspose, is_undefined
from funcgrad.ops.elementwise import (
    _broadcasting_batch,
    _vectorized_batch,
    naryop,
    unbroadcast_ct,
    unop,
)

__all__ = ["relu", "relu_grad", "relu_grad_p", "relu_p"]

#: signed integer of each float width, for selecting a float's bit pattern with a mask
_SAME_WIDTH_INT = {2: numpy.dtype(numpy.int16), 4: numpy.dtype(numpy.int32),
                   8: numpy.dtype(numpy.int64)}


def _relu_grad_fn(xp: Any, g: Any, x: Any) -> Any:
    hit = xp.greater(x, 0)
    dt = getattr(g, "dtype", None)
    if xp is numpy and type(g) is numpy.ndarray and dt.kind == "f" \
            and dt.itemsize in _SAME_WIDTH_INT:
        it = _SAME_WIDTH_INT[dt.itemsize]
        bits = xp.negative(hit, dtype=it)  # True -> all ones, False -> 0
        # (reused unless g broadcasts, or is 0-d: then bits is a NumPy scalar, no out=)
        out = bits if type(bits) is numpy.ndarray and bits.shape == g.shape else None
        return xp.bitwise_and(bits, g.view(it), out=out).view(dt)
    return xp.where(hit, g, xp.zeros((), dtype=dt) if dt is not None else 0)


relu_grad_p = naryop("relu_grad", _relu_grad_fn)


def relu_grad(g: Any, x: Any) -> Any:
    """``where(x > 0, g, 0)``: the derivative of :func:`relu` at ``x`` applied to ``g``
    (linear in ``g``).

    Example:
        >>> import numpy
        >>> relu_grad(numpy.array([5.0, numpy.inf, 7.0]), numpy.array([1.0, -1.0, 0.0]))
        array([5., 0., 0.])
    """
    return bind1(relu_grad_p, g, x)


def _relu_grad_transpose(ct: Any, g: Any, x: Any) -> list:
    if is_undefined(x):
        raise ValueError("relu_grad: transpose with respect to x (not linear)")
    return [unbroadcast_ct(relu_grad(ct, x), g), None]


defjvp(relu_grad_p, lambda t, ans, g, x: relu_grad(t, x), None)
deftranspose(relu_grad_p, _relu_grad_transpose)
_broadcasting_batch(relu_grad_p)


relu_p = unop("relu", lambda xp, x: xp.maximum(x, 0))


def relu(x: Any) -> Any:
    """``max(x, 0)`` elementwise; the derivative at 0 is 0 and a NaN stays NaN (as PyTorch).

    Example:
        >>> import numpy, funcgrad
        >>> relu(numpy.array([-1.0, 0.0, 2.0]))
        array([0., 0., 2.])
        >>> funcgrad.grad(lambda v: relu(v).sum())(numpy.array([-1.0, 0.0, 2.0]))
        array([0., 0., 1.])
    """
    return bind1(relu_p, x)


defjvp(relu_p, lambda g, ans, x: relu_grad(g, x),
       fast_vjp=(lambda xp, ct, ans, x: _relu_grad_fn(xp, ct, x),))
_vectorized_batch(relu_p)
