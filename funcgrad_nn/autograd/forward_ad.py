"""``torch.autograd.forward_ad``: dual numbers in a ``with dual_level():`` block.

PyTorch's forward-mode API, on funcgrad's forward-mode trace: entering a dual level makes a
:class:`funcgrad.interpreters.jvp.JVPTrace` the current trace; ``make_dual(x, t)`` is a dual
number of that trace, every operation on it (``funcgrad.numpy``, modules, ``Function``\\ s)
pushes its tangent forward, and ``unpack_dual(y)`` reads ``(primal, tangent)`` back. This is
what :func:`funcgrad.jvp` does for a whole function, written PyTorch's way.

Dual arrays belong to their level: unpack them inside the block (PyTorch's dual tensors lose
their tangent on exit; here a dual array used after its level has ended raises funcgrad's
escaped-tracer error). Levels may nest (PyTorch allows one at a time).
"""

from __future__ import annotations

import weakref
from contextvars import ContextVar
from typing import Any, NamedTuple

import numpy

from funcgrad.avals import get_aval
from funcgrad.core import _trace_var
from funcgrad.interpreters.jvp import JVPTrace, JVPTracer
from funcgrad.numpy import asarray

__all__ = ["dual_level", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual",
           "UnpackedDualTensor"]

#: the active levels, innermost last: (trace, token restoring the trace before it)
_levels: ContextVar[tuple[tuple[JVPTrace, Any], ...]] = ContextVar(
    "funcgrad_nn_forward_ad_levels", default=())


#: the traces of levels that have ended: their dual arrays are plain arrays to unpack_dual
#: (PyTorch's dual tensors lose their tangent when their level exits)
_ended: weakref.WeakSet[JVPTrace] = weakref.WeakSet()


class UnpackedDualTensor(NamedTuple):
    """``(primal, tangent)`` of a dual array; ``tangent`` is None for a plain array."""

    primal: Any
    tangent: Any


def enter_dual_level() -> int:
    """Start a dual level (prefer ``with dual_level():``); returns its index.

    Example:
        >>> lvl = enter_dual_level()
        >>> exit_dual_level(level=lvl)
    """
    trace = JVPTrace(_trace_var.get())
    token = _trace_var.set(trace)
    levels = _levels.get()
    _levels.set(levels + ((trace, token),))
    return len(levels)


def exit_dual_level(*, level: int | None = None) -> None:
    """End the innermost dual level (``level``, when given, must be that one).

    Example:
        >>> exit_dual_level(level=enter_dual_level())
    """
    levels = _levels.get()
    if not levels:
        raise RuntimeError("exit_dual_level: no dual level is active")
    if level is not None and level != len(levels) - 1:
        raise RuntimeError(f"exit_dual_level: trying to exit level {level}, but the "
                           f"innermost active level is {len(levels) - 1}")
    trace, token = levels[-1]
    _trace_var.reset(token)
    trace.memo = None
    _ended.add(trace)
    _levels.set(levels[:-1])


class dual_level:  # noqa: N801  (PyTorch's name)
    """Context manager for forward-mode AD; ``as`` gives the level's index.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> with dual_level():
        ...     x = make_dual(np.array([0.0, 1.0]), np.array([1.0, 1.0]))
        ...     y = fnp.sin(x) * 2.0
        ...     primal, tangent = unpack_dual(y)
        >>> tangent.round(4).tolist()
        [2.0, 1.0806]
    """

    def __enter__(self) -> int:
        self._level = enter_dual_level()
        return self._level

    def __exit__(self, *exc: Any) -> None:
        exit_dual_level(level=self._level)


def _level(level: int | None, who: str) -> JVPTrace | None:
    levels = _levels.get()
    if not levels:
        return None
    if level is None:
        return levels[-1][0]
    if not 0 <= level < len(levels):
        raise RuntimeError(f"{who}: level {level} is not active (active levels: "
                           f"0..{len(levels) - 1})")
    return levels[level][0]


def make_dual(tensor: Any, tangent: Any, *, level: int | None = None) -> Any:
    """The dual number ``tensor + tangent * eps`` of the current (or given) dual level.

    ``tangent`` must have ``tensor``'s shape; it takes ``tensor``'s dtype. ``tensor`` must be
    floating or complex.

    Example:
        >>> import numpy as np
        >>> with dual_level():
        ...     d = make_dual(np.array(3.0), np.array(1.0))
        ...     float(unpack_dual(d * d).tangent)
        6.0
    """
    trace = _level(level, "make_dual")
    if trace is None:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level "
                           "exists, make sure to enter_dual_level() first (with "
                           "dual_level(): ...).")
    if type(tensor) is JVPTracer and tensor._trace is trace:
        idx = next(i for i, (t, _) in enumerate(_levels.get()) if t is trace)
        raise RuntimeError(f"Making a dual Tensor based on a Tensor that already has a forward "
                           f"gradient at the same level {idx} is not supported.")
    tensor = asarray(tensor)
    tangent = asarray(tangent)
    pa, ta = get_aval(tensor), get_aval(tangent)
    if numpy.dtype(pa.dtype).kind not in "fc":
        raise ValueError(f"Expected primal to be floating point or complex, but got: "
                         f"{pa.dtype}")
    if tuple(ta.shape) != tuple(pa.shape):
        raise RuntimeError(f"Trying to set a forward gradient that has a different size than "
                           f"that of the original Tensor, this is not supported. Tensor is "
                           f"of size {list(pa.shape)} while the given forward gradient is of "
                           f"size {list(ta.shape)}.")
    if ta.dtype != pa.dtype:
        tangent = asarray(tangent, dtype=pa.dtype)
    return JVPTracer(trace, tensor, tangent)


def unpack_dual(tensor: Any, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal, tangent)`` of a dual array of the current (or given) level; a plain array
    gives ``(tensor, None)``.

    Example:
        >>> import numpy as np
        >>> unpack_dual(np.ones(2))
        UnpackedDualTensor(primal=array([1., 1.]), tangent=None)
    """
    trace = _level(level, "unpack_dual")
    if trace is not None and type(tensor) is JVPTracer and tensor._trace is trace:
        return UnpackedDualTensor(tensor.primal, tensor.tangent)
    # a dual array whose level has ended is its primal (the tangent is gone, as PyTorch's)
    while type(tensor) is JVPTracer and tensor._trace in _ended:
        tensor = tensor.primal
    return UnpackedDualTensor(tensor, None)
