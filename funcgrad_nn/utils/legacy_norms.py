"""PyTorch's older, hook-based ``torch.nn.utils.weight_norm`` / ``spectral_norm`` and their
``remove_*``, with their state-dict names: weight norm keeps ``<name>_g`` and ``<name>_v``
as parameters; spectral norm keeps ``<name>_orig`` and the power-iteration vectors
``<name>_u`` / ``<name>_v`` as buffers. ``module.<name>`` is computed from them on every
access (see :mod:`.parametrizations` for the newer forms, which PyTorch recommends).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy

import funcgrad
import funcgrad.numpy as fnp
from funcgrad_nn import init
from funcgrad_nn.module import Module, Parameter
from funcgrad_nn.utils.parametrizations import _norm_except_dim, computed_attribute

__all__ = ["remove_spectral_norm", "remove_weight_norm", "spectral_norm", "weight_norm"]


def _take(module: Module, name: str, fname: str, dim: int | None) -> tuple[Any, bool]:
    w = module._parameters.get(name)
    if w is None:
        raise ValueError(f"{fname}: {type(module).__name__} has no parameter {name!r} "
                         f"(parameters: {list(module._parameters)})")
    nd = fnp.ndim(w)
    if dim is not None and nd and not -nd <= dim < nd:  # checked before the module changes
        raise IndexError(f"{fname}: dimension out of range (expected to be in range of "
                         f"[{-nd}, {nd - 1}], but got {dim})")
    trainable = name not in module._frozen
    delattr(module, name)
    return w, trainable


def _restore(module: Module, name: str, value: Any, trainable: bool, *owned: str) -> None:
    for attr in owned:
        delattr(module, attr)
    cls = type(module)
    delattr(cls, name)  # the computing property
    if not any(isinstance(v, property) for v in vars(cls).values()):
        module.__class__ = cls.__bases__[0]  # nothing computed left: its class again
    module.register_parameter(name, Parameter(value, trainable))


def _axis(dim: int | None, ndim: int) -> int | None:
    # PyTorch's norm_except_dim: -1 is the whole array; other negative dims count from the end.
    if dim is None or dim == -1:
        return None
    return dim + ndim if dim < 0 else dim


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """``module.<name> = g * v / ||v||`` from the parameters ``<name>_g`` and ``<name>_v``
    (PyTorch's deprecated ``torch.nn.utils.weight_norm``, which warns the same way; the norm
    is over every axis but ``dim``, the whole array for ``dim=None`` or ``-1``).

    >>> import numpy as np, funcgrad_nn as nn
    >>> lin = nn.utils.weight_norm(nn.Linear(3, 2))
    >>> list(lin.state_dict()), lin.weight_g.shape
    (['bias', 'weight_g', 'weight_v'], (2, 1))
    """
    warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                  "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=2)
    if f"{name}_g" in module._parameters and f"{name}_v" in module._parameters:
        raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
    w, trainable = _take(module, name, "weight_norm", dim)
    axis = _axis(dim, fnp.ndim(w))
    g = _norm_except_dim(w, axis).astype(w.dtype)  # on w's device
    module.register_parameter(f"{name}_g", Parameter(g, trainable))
    module.register_parameter(f"{name}_v", Parameter(w, trainable))

    def compute(m: Module) -> Any:
        v = getattr(m, f"{name}_v")
        return v * (getattr(m, f"{name}_g") / _norm_except_dim(v, axis))

    computed_attribute(module, name, compute)
    module.__dict__.setdefault("_legacy_norms", {})[name] = ("weight_norm", trainable)
    return module


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    """Undo :func:`weight_norm`: ``<name>`` becomes a plain parameter again (its current value).

    >>> import funcgrad_nn as nn
    >>> lin = nn.utils.remove_weight_norm(nn.utils.weight_norm(nn.Linear(3, 2)))
    >>> list(lin.state_dict())
    ['bias', 'weight']
    """
    kind, trainable = module.__dict__.get("_legacy_norms", {}).get(name, (None, True))
    if kind != "weight_norm":
        raise ValueError(f"weight_norm of '{name}' not found in {module}")
    value = getattr(module, name)
    _restore(module, name, value, trainable, f"{name}_g", f"{name}_v")
    del module._legacy_norms[name]
    return module


def _matrix(w: Any, dim: int) -> Any:
    if dim != 0:
        w = fnp.moveaxis(w, dim, 0)
    return fnp.reshape(w, (fnp.shape(w)[0], -1))


def _normalize(x: Any, eps: float) -> Any:
    return x / fnp.maximum(fnp.sqrt(fnp.sum(x * x)), eps)


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """``module.<name> = W / sigma(W)`` from the parameter ``<name>_orig``, ``sigma``
    estimated by power iteration on the buffers ``<name>_u`` / ``<name>_v``
    (``n_power_iterations`` per access in training mode, ``v`` then ``u``, none in eval mode),
    as PyTorch's deprecated ``torch.nn.utils.spectral_norm``; ``dim`` defaults to 1 for
    transposed convolutions, else 0.

    >>> import funcgrad_nn as nn
    >>> lin = nn.utils.spectral_norm(nn.Linear(4, 3))
    >>> list(lin.state_dict()), lin.weight_u.shape, lin.weight_v.shape
    (['bias', 'weight_orig', 'weight_u', 'weight_v'], (3,), (4,))
    """
    if n_power_iterations <= 0:
        raise ValueError("Expected n_power_iterations to be positive, but got "
                         f"n_power_iterations={n_power_iterations}")
    if f"{name}_orig" in module._parameters:
        raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter {name}")
    if dim is None:
        dim = 1 if type(module).__name__.startswith("ConvTranspose") else 0
    w, trainable = _take(module, name, "spectral_norm", dim)
    dim = dim + fnp.ndim(w) if dim < 0 else dim
    h = fnp.shape(w)[dim]
    rest = int(numpy.prod(fnp.shape(w))) // h
    rng = init.default_generator()  # nn.manual_seed makes it repeatable

    def unit(x: numpy.ndarray) -> numpy.ndarray:
        return (x / max(float(numpy.linalg.norm(x)), eps)).astype(w.dtype)

    module.register_parameter(f"{name}_orig", Parameter(w, trainable))
    module.register_buffer(f"{name}_u", unit(rng.standard_normal(h)))
    module.register_buffer(f"{name}_v", unit(rng.standard_normal(rest)))

    def compute(m: Module) -> Any:
        weight = getattr(m, f"{name}_orig")
        mat = _matrix(weight, dim)
        u, v = getattr(m, f"{name}_u"), getattr(m, f"{name}_v")
        if m.training:
            frozen = funcgrad.stop_gradient(mat)
            for _ in range(n_power_iterations):
                v = _normalize(fnp.matmul(fnp.swapaxes(frozen, 0, 1), u), eps)
                u = _normalize(fnp.matmul(frozen, v), eps)
            setattr(m, f"{name}_u", u)
            setattr(m, f"{name}_v", v)
        return weight / fnp.sum(u * fnp.matmul(mat, v))

    computed_attribute(module, name, compute)
    module.__dict__.setdefault("_legacy_norms", {})[name] = ("spectral_norm", trainable)
    return module


def remove_spectral_norm(module: Module, name: str = "weight") -> Module:
    """Undo :func:`spectral_norm`: ``<name>`` becomes a plain parameter holding
    ``W / sigma`` from the current vectors (no further power iteration).

    >>> import funcgrad_nn as nn
    >>> lin = nn.utils.remove_spectral_norm(nn.utils.spectral_norm(nn.Linear(4, 3)))
    >>> list(lin.state_dict())
    ['bias', 'weight']
    """
    kind, trainable = module.__dict__.get("_legacy_norms", {}).get(name, (None, True))
    if kind != "spectral_norm":
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")
    was_training = module.training
    module.training = False  # no power iteration, as PyTorch's remove
    try:
        value = getattr(module, name)
    finally:
        module.training = was_training
    _restore(module, name, value, trainable, f"{name}_orig", f"{name}_u", f"{name}_v")
    del module._legacy_norms[name]
    return module
