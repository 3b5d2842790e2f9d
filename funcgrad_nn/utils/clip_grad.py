"""``clip_grad_norm_`` / ``clip_grad_value_`` over a gradient pytree (PyTorch's rules).

Gradients here are arrays in a pytree (the module ``nn.grad`` returns, a list, a dict), not
``.grad`` attributes (the first argument keeps PyTorch's name, ``parameters`` / ``tensors``,
so keyword calls port, but it holds the gradients): the functions scale or clip those arrays IN PLACE (eager NumPy/CuPy
arrays) and, like PyTorch, return the total norm. Under ``jit``/``vmap`` arrays cannot be
changed in place: use :func:`clip_grads_by_norm`, which returns the clipped pytree.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator
from typing import Any

import funcgrad.numpy as fnp
from funcgrad import tree_util
from funcgrad.backend import is_writeable
from funcgrad.core import is_tracer
from funcgrad_nn.module import ParameterIterator, is_parameter_array

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_by_norm", "clip_grads_with_norm_",
           "get_total_norm"]


def _materialized(grads: Any) -> Any:
    # an iterator (a generator, ``iter(list)``) is read once, as PyTorch's iterables of tensors
    return list(grads) if isinstance(grads, Iterator) else grads


def _leaves(grads: Any) -> list[Any]:
    return [g for g in tree_util.tree_leaves(_materialized(grads)) if g is not None]


def _grad_leaves(grads: Any, fname: str) -> list[Any]:
    """The arrays an in-place clip changes: PyTorch's ``clip_grad_norm_(model.parameters(),
    ...)`` clips the parameters' ``.grad``; here it would scale the weights themselves, so
    ``model.parameters()``, and any list holding a module's parameter array, is refused;
    ``grads.parameters()`` of a gradient module (what ``nn.grad`` returns) is accepted."""
    if isinstance(grads, ParameterIterator):
        # grads.parameters() of the gradient module nn.grad returns is the natural port of
        # PyTorch's clip_grad_norm_(model.parameters()): its arrays are gradients. Only the
        # live model's own parameters (the weights) are refused.
        grads = list(grads)
        if any(is_parameter_array(g) for g in grads):
            raise TypeError(
                f"{fname}: got model.parameters(), but funcgrad stores no .grad on parameters "
                "(this would change the weights): pass the gradients, e.g. grads = "
                f"nn.grad(loss_fn)(model, ...); nn.utils.{fname}(grads.parameters(), ...) "
                f"(or nn.utils.{fname}(grads, ...))")
    leaves = _leaves(grads)
    # A list of the parameters themselves (list(model.parameters()), [model.weight]) means
    # "their .grad" in PyTorch; here the arrays are the weights, which must not be scaled.
    for g in leaves:
        if is_parameter_array(g):
            raise TypeError(
                f"{fname}: got a parameter array of a module (a {g.dtype} array of shape "
                f"{tuple(g.shape)}), but funcgrad stores no .grad on parameters (this would "
                "change the weights): pass the gradients instead, e.g. grads = "
                f"nn.grad(loss_fn)(model, ...); nn.utils.{fname}(grads, ...)")
    return leaves


def _vector_norm(x: Any, p: float) -> Any:
    """``torch.linalg.vector_norm(x, p)`` of all entries: the count of non-zeros for
    ``p == 0``, the largest (``inf``) or smallest (``-inf``) magnitude, else
    ``sum(|x|**p)**(1/p)``; 0 for an empty array."""
    if x.size == 0:
        return fnp.zeros_like(x, shape=())
    a = fnp.abs(x)
    if p == math.inf:
        return fnp.max(a)
    if p == -math.inf:
        return fnp.min(a)
    if p == 0:
        return fnp.sum((x != 0).astype(x.dtype))
    if p < 0:  # |0|**p is inf: said without dividing by zero
        zero = a == 0
        return fnp.sum(fnp.where(zero, math.inf, fnp.where(zero, 1, a) ** p)) ** (1.0 / p)
    return fnp.sum(a**p) ** (1.0 / p)


def get_total_norm(tensors: Any, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach: bool | None = None) -> Any:
    """The ``norm_type``-norm of all gradient leaves together (a 0-d value: a NumPy scalar for
    NumPy gradients, as a NumPy reduction; float() or .item() it), as
    ``torch.nn.utils.get_total_norm``: the same norm of the stacked per-leaf norms (so
    ``norm_type=0`` counts the leaves with a non-zero entry, as PyTorch's).

    >>> import numpy as np
    >>> float(get_total_norm([np.array([3.0]), np.array([4.0])]))
    5.0
    """
    del foreach  # PyTorch's kernel choice; one implementation here
    leaves = _leaves(tensors)
    p = float(norm_type)
    if not leaves:
        return fnp.asarray(0.0, dtype=fnp.float32)  # PyTorch's torch.tensor(0.0)
    total = _vector_norm(fnp.stack([_vector_norm(g, p) for g in leaves]), p)
    if error_if_nonfinite and not is_tracer(total) and not bool(fnp.isfinite(total)):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from "
                           "`parameters` is non-finite, so it cannot be clipped. To disable "
                           "this error and scale the gradients by the non-finite norm "
                           "anyway, set `error_if_nonfinite=False`")
    return total


def clip_grads_by_norm(grads: Any, max_norm: float, norm_type: float = 2.0,
                       error_if_nonfinite: bool = False) -> tuple[Any, Any]:
    """``(clipped grads, total norm)``: every leaf times ``min(1, max_norm / (norm + 1e-6))``
    (PyTorch's coefficient); pure, so it works under ``jit``.

    >>> import numpy as np
    >>> g, n = clip_grads_by_norm([np.array([3.0, 4.0])], 1.0)
    >>> float(n), g[0].round(4)
    (5.0, array([0.6, 0.8]))
    """
    grads = _materialized(grads)
    total = get_total_norm(grads, norm_type, error_if_nonfinite)
    coef = fnp.minimum(float(max_norm) / (total + 1e-6), 1.0)

    def scale(g: Any) -> Any:
        return None if g is None else g * coef.astype(g.dtype)

    return tree_util.tree_map(scale, grads), total


def clip_grad_norm_(parameters: Any, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach: bool | None = None) -> Any:
    """Scale the gradient arrays in place so their total ``norm_type``-norm is at most
    ``max_norm``; returns the total norm before clipping (see :func:`get_total_norm`), as
    PyTorch.

    >>> import numpy as np
    >>> grads = {"w": np.array([3.0, 4.0])}
    >>> float(clip_grad_norm_(grads, 1.0)), grads["w"].round(4)
    (5.0, array([0.6, 0.8]))
    """
    leaves = _grad_leaves(parameters, "clip_grad_norm_")
    _check_writable(leaves, "clip_grad_norm_", "clip_grads_by_norm(grads, max_norm)")
    total = get_total_norm(leaves, norm_type, error_if_nonfinite)
    clip_grads_with_norm_(leaves, max_norm, total, foreach)
    return total


def clip_grad_norm(parameters: Any, max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> Any:
    """Deprecated alias of :func:`clip_grad_norm_` (PyTorch warns the same way).

    >>> import numpy as np, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     float(clip_grad_norm([np.array([3.0, 4.0])], 1.0))
    5.0
    """
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grads_with_norm_(parameters: Any, max_norm: float, total_norm: Any,
                          foreach: bool | None = None) -> None:
    """Scale the gradient arrays in place by ``min(1, max_norm / (total_norm + 1e-6))``, a
    norm computed beforehand (:func:`get_total_norm`), as PyTorch's.

    >>> import numpy as np
    >>> g = [np.array([3.0, 4.0])]
    >>> clip_grads_with_norm_(g, 1.0, get_total_norm(g)); g[0].round(4)
    array([0.6, 0.8])
    """
    del foreach
    leaves = _grad_leaves(parameters, "clip_grads_with_norm_")
    _check_writable(leaves, "clip_grads_with_norm_", "clip_grads_by_norm(grads, max_norm)")
    coef = fnp.minimum(float(max_norm) / (total_norm + 1e-6), 1.0)
    for g in leaves:
        g *= coef.astype(g.dtype)


def clip_grad_value_(parameters: Any, clip_value: float, foreach: bool | None = None) -> None:
    """Clip every gradient entry to ``[-clip_value, clip_value]`` in place (PyTorch returns
    None too).

    >>> import numpy as np
    >>> g = [np.array([-3.0, 0.5])]
    >>> clip_grad_value_(g, 1.0); g[0]
    array([-1. ,  0.5])
    """
    del foreach
    leaves = _grad_leaves(parameters, "clip_grad_value_")
    _check_writable(leaves, "clip_grad_value_",
                    "tree_map(lambda g: fnp.clip(g, -v, v), grads)")
    for g in leaves:
        if fnp.iscomplexobj(g):  # NumPy would clip lexicographically: say no, as PyTorch
            raise TypeError("clip_grad_value_: complex gradients cannot be clipped by value "
                            f"(got a {g.dtype} array); clip their norm instead")
    v = float(clip_value)
    for g in leaves:
        g[...] = g.clip(-v, v)


def _check_writable(leaves: list[Any], fname: str, alternative: str) -> None:
    for g in leaves:
        if is_tracer(g) or not is_writeable(g):
            raise TypeError(f"{fname}: changes gradient arrays in place, which traced values "
                            f"(under jit/vmap/grad) and read-only arrays cannot be; use the "
                            f"pure form {alternative} instead")
