"""``weight_norm`` and ``spectral_norm`` parametrizations (as
``torch.nn.utils.parametrizations``), with PyTorch's state-dict names.

A parametrized module keeps the raw arrays under ``parametrizations.<name>`` (``original0``
and ``original1`` for weight norm's magnitude ``g`` and direction ``v``; ``original`` for
spectral norm, whose power-iteration vectors are the buffers ``0._u`` and ``0._v``) and
computes ``module.<name>`` from them on every access, so gradients reach the raw arrays and
PyTorch checkpoints load through ``load_state_dict`` unchanged.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

import numpy

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.backend import device_of
from funcgrad_nn import init
from funcgrad_nn.containers import ModuleDict
from funcgrad_nn.module import Module, Parameter

__all__ = ["is_parametrized", "orthogonal", "spectral_norm", "weight_norm"]


def _norm_except_dim(v: Any, dim: int | None) -> Any:
    if dim is None:
        return fnp.sqrt(fnp.sum(v * v))
    axes = tuple(i for i in range(fnp.ndim(v)) if i != dim)
    return fnp.sqrt(fnp.sum(v * v, axis=axes, keepdims=True))


class _WeightNorm(Module):
    def __init__(self, dim: int | None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, g: Any, v: Any) -> Any:
        return v * (g / _norm_except_dim(v, self.dim))

    def right_inverse(self, weight: Any) -> tuple[Any, Any]:
        return _norm_except_dim(weight, self.dim).astype(weight.dtype), weight


def _normalize(x: Any, eps: float) -> Any:
    return x / fnp.maximum(fnp.sqrt(fnp.sum(x * x)), eps)


class _SpectralNorm(Module):
    def __init__(self, weight: numpy.ndarray, n_power_iterations: int, dim: int,
                 eps: float) -> None:
        super().__init__()
        self.n_power_iterations, self.dim, self.eps = n_power_iterations, dim, eps
        if weight.ndim > 1:
            # Host NumPy at construction (parameters are created on the host; Module.to()
            # moves these buffers with them): random unit vectors, then 15 power iterations.
            w = numpy.moveaxis(numpy.asarray(funcgrad.to_numpy(weight)), dim, 0)
            mat = w.reshape(w.shape[0], -1)
            rng = init.default_generator()  # nn.manual_seed makes it repeatable

            def unit(x: numpy.ndarray) -> numpy.ndarray:
                return x / max(float(numpy.linalg.norm(x)), eps)

            u = unit(rng.standard_normal(mat.shape[0]))
            v = unit(rng.standard_normal(mat.shape[1]))
            for _ in range(15):
                u = unit(mat @ v)
                v = unit(mat.T @ u)
            device = device_of(weight) or "cpu"  # the buffers live with the weight
            self.register_buffer("_u", funcgrad.device_put(u.astype(weight.dtype), device))
            self.register_buffer("_v", funcgrad.device_put(v.astype(weight.dtype), device))

    def _matrix(self, w: Any) -> Any:
        if self.dim != 0:
            w = fnp.moveaxis(w, self.dim, 0)
        return fnp.reshape(w, (fnp.shape(w)[0], -1))

    def _power_method(self, mat: Any, n: int) -> None:
        mat = funcgrad.stop_gradient(mat)
        u, v = self._u, self._v
        for _ in range(n):
            u = _normalize(fnp.matmul(mat, v), self.eps)
            v = _normalize(fnp.matmul(fnp.swapaxes(mat, 0, 1), u), self.eps)
        self._u, self._v = u, v

    def right_inverse(self, value: Any) -> Any:
        return value  # as PyTorch: the value is taken to be normalised already

    def forward(self, weight: Any) -> Any:
        if fnp.ndim(weight) == 1:
            return _normalize(weight, self.eps)
        mat = self._matrix(weight)
        if self.training:
            self._power_method(mat, self.n_power_iterations)
        sigma = fnp.sum(self._u * fnp.matmul(mat, self._v))
        return weight / sigma


class ParametrizationList(Module):
    """The raw arrays of one parametrized attribute and the parametrizations (submodules
    ``0``, ``1``, ...) that compute the attribute from them, applied in turn."""

    def __init__(self, parametrization: Module, originals: dict[str, Any]) -> None:
        super().__init__()
        for name, value in originals.items():
            if isinstance(value, Parameter):
                setattr(self, name, value)
            else:  # the original of a parametrized buffer
                self.register_buffer(name, value)
        self.add_module("0", parametrization)
        self._names = tuple(originals)
        self.unsafe = False

    def __getitem__(self, index: int) -> Module:
        return self._modules[str(index)]  # as torch's ModuleList: [0] is the first one

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Any:
        return (self._modules[str(i)] for i in range(len(self._modules)))

    def append(self, parametrization: Module) -> None:
        """Apply ``parametrization`` after the ones already here."""
        self.add_module(str(len(self._modules)), parametrization)

    def right_inverse(self, value: Any) -> None:
        """Store the originals that give ``value``: each parametrization's
        ``right_inverse``, last one first (what assigning ``module.<name> = value`` does)."""
        for i in reversed(range(len(self._modules))):
            inverse = getattr(self._modules[str(i)], "right_inverse", None)
            if inverse is None:
                raise RuntimeError(f"parametrization {type(self._modules[str(i)]).__name__} "
                                   "does not implement right_inverse.")
            value = inverse(value)
        values = (value,) if len(self._names) == 1 and self._names[0] == "original" else value
        if not isinstance(values, tuple | list) or len(values) != len(self._names):
            raise ValueError(f"'right_inverse' must return {len(self._names)} array(s) for "
                             f"the originals {list(self._names)}, got "
                             f"{type(value).__name__}")
        for name, new in zip(self._names, values, strict=True):
            old = getattr(self, name)
            if new.dtype != old.dtype:
                raise ValueError(f"The tensor returned by 'right_inverse' for {name} has dtype "
                                 f"{new.dtype}, while the original has dtype {old.dtype}")
            setattr(self, name, new)

    def value(self) -> Any:
        x = self._modules["0"](*(getattr(self, n) for n in self._names))
        for i in range(1, len(self._modules)):
            x = self._modules[str(i)](x)
        return x


def _parametrize(module: Module, name: str, parametrization: Module,
                 originals: dict[str, Any], fname: str) -> Module:
    if "parametrizations" in module._modules and name in module.parametrizations._modules:
        raise ValueError(f"{fname}: {type(module).__name__}.{name} is already parametrized")
    if "parametrizations" not in module._modules:
        module.parametrizations = ModuleDict()
    module.parametrizations[name] = ParametrizationList(parametrization, originals)
    computed_attribute(module, name, lambda m: _cached_value(m, name),
                       lambda m, v: _assign(m, name, v))
    name_own_class(module)
    return module


#: inside ``parametrize.cached()``: (id(module), name) -> (module, value); the module is kept
#: so that its id cannot be reused by another object while the cache lives
parametrization_cache: ContextVar[dict[tuple[int, str], tuple[Module, Any]] | None] = ContextVar(
    "funcgrad_nn_parametrization_cache", default=None)


def _cached_value(module: Module, name: str) -> Any:
    cache = parametrization_cache.get()
    if cache is None:
        return module.parametrizations[name].value()
    hit = cache.get((id(module), name))
    if hit is not None and hit[0] is module:
        return hit[1]
    value = module.parametrizations[name].value()
    cache[(id(module), name)] = (module, value)
    return value


def _assign(module: Module, name: str, value: Any) -> None:
    module.parametrizations[name].right_inverse(value)
    cache = parametrization_cache.get()
    if cache is not None:
        cache.pop((id(module), name), None)


def computed_attribute(module: Module, name: str, compute: Any, assign: Any = None) -> None:
    """Make ``module.<name>`` read ``compute(module)`` on every access (and, given
    ``assign``, ``module.<name> = v`` call ``assign(module, v)``): a property on a class of
    this module's own (made once, a subclass of its class), so other instances are untouched.
    The class keeps its base's name (pruning and the hook-based norms leave PyTorch's module
    class as it was, so its repr and error messages say ``Linear``) until
    :func:`name_own_class` names it ``Parametrized<Class>``, as ``register_parametrization``
    does."""
    if not getattr(type(module), "_funcgrad_own_class", False):
        base = type(module)
        module.__class__ = type(base.__name__, (base,), {
            "__module__": base.__module__, "__doc__": base.__doc__,
            "__qualname__": base.__qualname__, "_funcgrad_own_class": True,
        })
    setattr(type(module), name, property(compute, assign))


def name_own_class(module: Module) -> None:
    """Name the module's own class (see :func:`computed_attribute`) as PyTorch names it:
    ``Parametrized<Class>`` while it has parametrizations, its base's name otherwise."""
    cls = type(module)
    if getattr(cls, "_funcgrad_own_class", False):
        base = cls.__bases__[0]
        prefix = "Parametrized" if "parametrizations" in module._modules else ""
        cls.__name__, cls.__qualname__ = prefix + base.__name__, prefix + base.__qualname__


def _take_parameter(module: Module, name: str, fname: str) -> tuple[Any, bool]:
    if is_parametrized(module, name):
        raise ValueError(f"{fname}: {type(module).__name__}.{name} is already parametrized")
    if name not in module._parameters or module._parameters[name] is None:
        raise ValueError(f"{fname}: {type(module).__name__} has no parameter {name!r} "
                         f"(parameters: {list(module._parameters)})")
    w = module._parameters[name]
    trainable = name not in module._frozen
    delattr(module, name)
    return w, trainable


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Reparametrize ``module.<name>`` as ``g * v / ||v||`` (norm over every axis but
    ``dim``; ``dim=None`` or, as in PyTorch, ``dim=-1``: the whole array); ``g`` is
    ``parametrizations.<name>.original0``, ``v`` is ``...original1``, as PyTorch.

    >>> import numpy as np, funcgrad_nn as nn
    >>> lin = weight_norm(nn.Linear(3, 2))
    >>> sorted(lin.state_dict())
    ['bias', 'parametrizations.weight.original0', 'parametrizations.weight.original1']
    >>> lin(np.ones((1, 3), np.float32)).shape
    (1, 2)
    """
    if dim == -1:  # PyTorch's norm_except_dim: -1 means the whole array, not the last axis
        dim = None
    shape = tuple(fnp.shape(module._parameters.get(name, numpy.zeros(()))))
    if dim is not None and shape and not -len(shape) <= dim < len(shape):
        raise IndexError(f"weight_norm: dim {dim} is out of range for {name} of shape {shape}")
    w, trainable = _take_parameter(module, name, "weight_norm")
    if dim is not None and dim < 0:
        dim += w.ndim
    g = _norm_except_dim(w, dim).astype(w.dtype)  # on w's device, as w.copy()
    originals = {"original0": Parameter(g, trainable), "original1": Parameter(w.copy(), trainable)}
    return _parametrize(module, name, _WeightNorm(dim), originals, "weight_norm")


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """Reparametrize ``module.<name>`` as ``W / sigma(W)``, ``sigma`` estimated by power
    iteration (``n_power_iterations`` per forward in training mode, vectors in the buffers
    ``parametrizations.<name>.0._u``/``_v``); ``dim`` defaults to 1 for transposed
    convolutions, else 0, as PyTorch.

    >>> import numpy as np, funcgrad_nn as nn
    >>> _ = nn.manual_seed(0)
    >>> lin = spectral_norm(nn.Linear(4, 3))
    >>> s = np.linalg.svd(lin.weight, compute_uv=False)[0]
    >>> bool(abs(s - 1) < 1e-2)
    True
    """
    from funcgrad_nn.utils import parametrize

    if n_power_iterations <= 0:
        raise ValueError("Expected n_power_iterations to be positive, but got "
                         f"n_power_iterations={n_power_iterations}")
    if dim is None:
        base = parametrize.type_before_parametrizations(module)
        dim = 1 if base.__name__.startswith("ConvTranspose") else 0
    chained = is_parametrized(module, name)  # e.g. spectral_norm(weight_norm(conv))
    current = getattr(module, name) if chained else module._parameters.get(name)
    ndim = fnp.ndim(current if current is not None else numpy.zeros(()))
    if ndim and not -ndim <= dim < ndim:
        raise IndexError(f"spectral_norm: dimension out of range (expected to be in range of "
                         f"[{-ndim}, {ndim - 1}], but got {dim})")
    if chained:  # as PyTorch: applied after the parametrizations already there
        sn = _SpectralNorm(current, n_power_iterations, dim % max(ndim, 1), eps)
        return parametrize.register_parametrization(module, name, sn, unsafe=True)
    w, trainable = _take_parameter(module, name, "spectral_norm")
    if dim < 0:
        dim += w.ndim
    sn = _SpectralNorm(w, n_power_iterations, dim, eps)
    return _parametrize(module, name, sn, {"original": Parameter(w, trainable)},
                        "spectral_norm")


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:
    """Reparametrize ``module.<name>`` (a matrix or a batch of them, ``(..., m, n)``) to have
    orthonormal columns (rows if ``m < n``), as ``torch.nn.utils.parametrizations.orthogonal``.
    ``orthogonal_map`` is ``"matrix_exp"`` or ``"cayley"`` (of a skew-symmetric matrix built
    from the lower triangle) or ``"householder"`` (a product of reflectors); by default
    ``"matrix_exp"`` for square (or complex) matrices, else ``"householder"``. With
    ``use_trivialization`` (default) the map's result is multiplied by the buffer
    ``parametrizations.<name>.0.base``, and the initial value is the weight itself when
    orthogonal, else its QR orthogonalisation; assigning ``module.<name> = Q`` sets it
    again. The raw array is ``parametrizations.<name>.original``, as PyTorch.

    >>> import numpy as np, funcgrad_nn as nn
    >>> lin = orthogonal(nn.Linear(3, 5))
    >>> q = lin.weight
    >>> bool(np.allclose(q.T @ q, np.eye(3), atol=1e-5)), sorted(lin.state_dict())
    (True, ['bias', 'parametrizations.weight.0.base', 'parametrizations.weight.original'])
    """
    from funcgrad_nn.utils._orthogonal import MAPS, Orthogonal
    from funcgrad_nn.utils.parametrize import register_parametrization

    weight = getattr(module, name, None)
    if weight is None or not hasattr(weight, "shape"):
        raise ValueError(f"Module '{type(module).__name__}' has no parameter or buffer with "
                         f"name '{name}'")
    if fnp.ndim(weight) < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of "
                         f"{fnp.ndim(weight)} dimensions.")
    if orthogonal_map is None:
        square = fnp.shape(weight)[-2] == fnp.shape(weight)[-1]
        orthogonal_map = "matrix_exp" if square or fnp.iscomplexobj(weight) else "householder"
    if orthogonal_map not in MAPS:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')
    orth = Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization)
    return register_parametrization(module, name, orth, unsafe=True)


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` (or its attribute ``tensor_name``, PyTorch's keyword) is
    parametrized.

    >>> import funcgrad_nn as nn
    >>> is_parametrized(weight_norm(nn.Linear(1, 1)), tensor_name="weight")
    True
    """
    p = module._modules.get("parametrizations")
    if p is None:
        return False
    return True if tensor_name is None else tensor_name in p._modules
