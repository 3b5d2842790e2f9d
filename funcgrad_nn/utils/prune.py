"""Pruning, as ``torch.nn.utils.prune``: zero a share of a parameter through a mask.

Pruning ``module.<name>`` moves the parameter to ``<name>_orig`` and adds the buffer
``<name>_mask`` (PyTorch's state-dict names); ``module.<name>`` is then ``<name>_orig *
<name>_mask``, computed on every access, so gradients reach only the kept entries. Pruning the
same attribute again prunes among the entries (or, for structured methods, the channels) still
kept, as PyTorch's ``PruningContainer``; :func:`remove` makes the pruned value a plain
parameter again. Masks are computed eagerly on the host: the magnitude methods give PyTorch's
masks; the random ones draw from ``nn.init``'s generator (``nn.manual_seed``), so they have
PyTorch's distribution, not its random stream.

>>> import numpy as np, funcgrad_nn as nn
>>> lin = nn.Linear(3, 2)
>>> lin.weight[...] = [[1.0, -5.0, 2.0], [0.5, 3.0, -4.0]]
>>> _ = l1_unstructured(lin, "weight", amount=0.5)
>>> lin.weight.tolist(), sorted(lin.state_dict())
([[0.0, -5.0, 0.0], [0.0, 3.0, -4.0]], ['bias', 'weight_mask', 'weight_orig'])
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable
from typing import Any

import numpy

import funcgrad
from funcgrad.backend import device_of
from funcgrad_nn import init
from funcgrad_nn.module import Module, Parameter
from funcgrad_nn.utils.parametrizations import computed_attribute

__all__ = ["BasePruningMethod", "CustomFromMask", "Identity", "L1Unstructured", "LnStructured",
           "PruningContainer", "RandomStructured", "RandomUnstructured", "custom_from_mask",
           "global_unstructured", "identity", "is_pruned", "l1_unstructured", "ln_structured",
           "random_structured", "random_unstructured", "remove"]


def _host(x: Any) -> numpy.ndarray:
    return numpy.asarray(funcgrad.to_numpy(funcgrad.stop_gradient(x)))


def _validate_amount_init(amount: Any) -> None:
    if isinstance(amount, bool) or not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
            not isinstance(amount, numbers.Integral) and not 0.0 <= float(amount) <= 1.0):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a "
                         "non-negative integer")


def _nparams_toprune(amount: Any, size: int) -> int:
    """An int amount is a count; a float a fraction of ``size``, rounded as Python's
    ``round`` (half to even), as PyTorch."""
    n = int(amount) if isinstance(amount, numbers.Integral) else round(float(amount) * size)
    if n > size:
        raise ValueError(f"amount={amount} should be smaller than the number of parameters to "
                         f"prune={size}")
    return n


def _validate_structured(t: numpy.ndarray, dim: int) -> None:
    if t.ndim <= 1:
        raise ValueError("Structured pruning can only be applied to multidimensional tensors. "
                         f"Found tensor of shape {t.shape} with {t.ndim} dims")
    if dim >= t.ndim:
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")


def _smallest(values: numpy.ndarray, k: int) -> numpy.ndarray:
    """Indices of the ``k`` smallest values (stable: ties go to the lower index)."""
    return numpy.argsort(values, kind="stable")[:k]


def _channel_mask(t: numpy.ndarray, dim: int, keep: numpy.ndarray) -> numpy.ndarray:
    mask = numpy.zeros_like(t)
    index: list[Any] = [slice(None)] * t.ndim
    index[dim] = keep
    mask[tuple(index)] = 1
    return mask


class BasePruningMethod:
    """A way to compute a mask: subclasses set ``PRUNING_TYPE`` (``"unstructured"``,
    ``"structured"`` with a ``dim``, or ``"global"``) and define ``compute_mask(t,
    default_mask)`` on host NumPy arrays; :meth:`apply` prunes a module's attribute.

    >>> import numpy as np
    >>> class Odd(BasePruningMethod):
    ...     PRUNING_TYPE = "unstructured"
    ...     def compute_mask(self, t, default_mask):
    ...         mask = default_mask.copy(); mask.reshape(-1)[1::2] = 0; return mask
    >>> Odd().compute_mask(np.ones(4), np.ones(4)).tolist()
    [1.0, 0.0, 1.0, 0.0]
    """

    PRUNING_TYPE: str = "unstructured"
    _tensor_name: str

    def compute_mask(self, t: numpy.ndarray, default_mask: numpy.ndarray) -> numpy.ndarray:
        """The new mask for ``t`` (``default_mask`` is the one in place)."""
        raise NotImplementedError(f"{type(self).__name__} must define compute_mask")

    def apply_mask(self, module: Module) -> Any:
        """``<name>_orig * <name>_mask`` of ``module``."""
        orig = getattr(module, self._tensor_name + "_orig")
        mask = getattr(module, self._tensor_name + "_mask")
        return mask.astype(orig.dtype) * orig

    def prune(self, t: Any, default_mask: Any = None,
              importance_scores: Any = None) -> numpy.ndarray:
        """``t`` times the mask computed from ``importance_scores`` (default ``t``)."""
        scores = _host(t if importance_scores is None else importance_scores)
        mask = numpy.ones_like(scores) if default_mask is None else _host(default_mask)
        return _host(t) * self.compute_mask(scores, mask)

    @classmethod
    def apply(cls, module: Module, name: str, *args: Any, importance_scores: Any = None,
              **kwargs: Any) -> BasePruningMethod:
        """Prune ``module.<name>`` with ``cls(*args, **kwargs)`` (combined with earlier pruning
        of the same attribute); returns the method in place."""
        pruning = module.__dict__.setdefault("_pruning", {})
        old = pruning.get(name)
        method: BasePruningMethod = cls(*args, **kwargs)
        method._tensor_name = name
        if old is not None:  # a new container: an error leaves the old one as it was
            earlier = tuple(old) if isinstance(old, PruningContainer) else (old,)
            method = PruningContainer(*earlier, method)
        orig = getattr(module, name, None)
        if orig is None or not hasattr(orig, "shape"):
            raise AttributeError(f"module '{type(module).__name__}' has no parameter or buffer "
                                 f"with name '{name}'")
        scores = orig if importance_scores is None else importance_scores
        if tuple(numpy.shape(scores)) != tuple(orig.shape):
            raise ValueError(f"importance_scores should have the same shape as parameter "
                             f"{name} of {type(module).__name__}")
        if old is None:
            if name not in module._parameters:
                raise ValueError(f"prune: {type(module).__name__}.{name} is not a parameter")
            default_mask = numpy.ones(orig.shape, dtype=_host(orig).dtype)
        else:
            default_mask = _host(getattr(module, name + "_mask")).copy()
        # the mask first: an error leaves the module as it was
        mask = method.compute_mask(_host(scores), default_mask)
        mask = funcgrad.device_put(numpy.ascontiguousarray(mask, dtype=default_mask.dtype),
                                   device_of(orig) or "cpu")
        if old is None:
            trainable = name not in module._frozen
            delattr(module, name)
            module.register_parameter(name + "_orig", Parameter(orig, trainable))
        module.register_buffer(name + "_mask", mask)
        pruning[name] = method
        if old is None:
            computed_attribute(module, name, lambda m: m._pruning[name].apply_mask(m))
        return method

    def remove(self, module: Module) -> None:
        """Make ``module.<name>`` the plain parameter ``orig * mask`` again."""
        name = self._tensor_name
        weight = self.apply_mask(module)
        trainable = name + "_orig" not in module._frozen
        delattr(module, name + "_orig")
        delattr(module, name + "_mask")
        del module._pruning[name]
        cls = type(module)
        delattr(cls, name)
        if not any(isinstance(v, property) for v in vars(cls).values()):
            module.__class__ = cls.__bases__[0]
        module.register_parameter(name, Parameter(weight, trainable))


class PruningContainer(BasePruningMethod):
    """The pruning methods applied to one attribute in turn; each new one prunes among what
    the earlier ones kept (the kept entries, or for a structured method the kept channels)."""

    def __init__(self, *methods: BasePruningMethod) -> None:
        self._pruning_methods: tuple[BasePruningMethod, ...] = ()
        for m in methods:
            self.add_pruning_method(m)

    def add_pruning_method(self, method: BasePruningMethod) -> None:
        """Append ``method`` (it must prune the same attribute)."""
        if not isinstance(method, BasePruningMethod):
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if self._pruning_methods and method._tensor_name != self._tensor_name:
            raise ValueError(f"Can only add pruning methods acting on the parameter named "
                             f"'{self._tensor_name}' to PruningContainer. Found "
                             f"'{method._tensor_name}'")
        self._tensor_name = method._tensor_name
        self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self) -> Any:
        return iter(self._pruning_methods)

    def __getitem__(self, i: int) -> BasePruningMethod:
        return self._pruning_methods[i]

    def compute_mask(self, t: numpy.ndarray, default_mask: numpy.ndarray) -> numpy.ndarray:
        method = self._pruning_methods[-1]
        new_mask = default_mask.astype(t.dtype)
        kind = method.PRUNING_TYPE
        if kind == "unstructured":
            index: Any = default_mask == 1
        elif kind == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError("Pruning methods of PRUNING_TYPE 'structured' need to "
                                     "have the attribute `dim` defined.")
            dim = method.dim + t.ndim if method.dim < 0 else method.dim
            others = tuple(d for d in range(t.ndim) if d != dim)
            keep = default_mask.sum(axis=others) != 0
            index = [slice(None)] * t.ndim
            index[dim] = keep
            index = tuple(index)
        elif kind == "global":
            index = (slice(None),) * t.ndim
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")
        new_mask[index] = method.compute_mask(t[index], default_mask[index])
        return new_mask


class Identity(BasePruningMethod):
    """Keeps everything (a mask of ones)."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t: numpy.ndarray, default_mask: numpy.ndarray) -> numpy.ndarray:
        return default_mask


class RandomUnstructured(BasePruningMethod):
    """Prunes ``amount`` (a count, or a fraction) of the entries at random."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount: float) -> None:
        _validate_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t: numpy.ndarray, default_mask: numpy.ndarray) -> numpy.ndarray:
        k = _nparams_toprune(self.amount, t.size)
        mask = default_mask.copy()
        if k:
            mask.reshape(-1)[init.default_generator().permutation(t.size)[:k]] = 0
        return mask


class L1Unstructured(BasePruningMethod):
    """Prunes the ``amount`` entries of smallest magnitude."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount: float) -> None:
        _validate_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t: numpy.ndarray, default_mask: numpy.ndarray) -> numpy.ndarray:
        k = _nparams_toprune(self.amount, t.size)
        mask = default_mask.copy()
        if k:
            mask.reshape(-1)[_smallest(numpy.abs(t).reshape(-1), k)] = 0
        return mask


class RandomStructured(BasePruningMethod):
    """Prunes ``amount`` whole channels along ``dim`` at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount: float, dim: int = -1) -> None:
        _validate_amount_init(amount)
        self.amount, self.dim = amount, dim

    def compute_mask(self, t: numpy.ndarray, default_mask: numpy.ndarray) -> numpy.ndarray:
        _validate_structured(t, self.dim)
        size = t.shape[self.dim]
        k = _nparams_toprune(self.amount, size)
        if k == 0:
            return default_mask
        keep = numpy.ones(size, bool)
        keep[init.default_generator().permutation(size)[:k]] = False
        return _channel_mask(t, self.dim, keep) * default_mask.astype(t.dtype)


def _ln_norm(t: numpy.ndarray, n: Any, dim: int) -> numpy.ndarray:
    axes = tuple(d for d in range(t.ndim) if d != dim % t.ndim)
    a = numpy.abs(t)
    if n == "fro" or n == 2:
        return numpy.sqrt((a * a).sum(axis=axes))
    if n == numpy.inf:
        return a.max(axis=axes)
    if n == -numpy.inf:
        return a.min(axis=axes)
    if n == 0:
        return (a != 0).sum(axis=axes).astype(t.dtype)
    if isinstance(n, numbers.Real) and not isinstance(n, bool):
        return (a ** float(n)).sum(axis=axes) ** (1.0 / float(n))
    raise ValueError(f"ln_structured: unsupported norm n={n!r} (a number, inf or 'fro')")


class LnStructured(BasePruningMethod):
    """Prunes the ``amount`` channels along ``dim`` of smallest ``n``-norm."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount: float, n: Any, dim: int = -1) -> None:
        _validate_amount_init(amount)
        self.amount, self.n, self.dim = amount, n, dim

    def compute_mask(self, t: numpy.ndarray, default_mask: numpy.ndarray) -> numpy.ndarray:
        _validate_structured(t, self.dim)
        size = t.shape[self.dim]
        k = _nparams_toprune(self.amount, size)
        if k == 0:
            return default_mask
        norm = _ln_norm(t, self.n, self.dim)
        keep = numpy.ones(size, bool)
        keep[_smallest(norm, k)] = False  # PyTorch keeps the size - k largest
        return _channel_mask(t, self.dim, keep) * default_mask.astype(t.dtype)


class CustomFromMask(BasePruningMethod):
    """Prunes where the given ``mask`` is 0."""

    PRUNING_TYPE = "global"

    def __init__(self, mask: Any) -> None:
        self.mask = _host(mask)

    def compute_mask(self, t: numpy.ndarray, default_mask: numpy.ndarray) -> numpy.ndarray:
        if default_mask.shape != self.mask.shape:
            raise ValueError(f"custom_from_mask: the mask has shape {self.mask.shape}, the "
                             f"pruned array {default_mask.shape}")
        return default_mask * self.mask.astype(default_mask.dtype)


def identity(module: Module, name: str) -> Module:
    """Prune nothing, but set up ``<name>_orig`` / ``<name>_mask`` (a mask of ones).

    >>> import funcgrad_nn as nn
    >>> sorted(identity(nn.Linear(2, 1), "bias").state_dict())
    ['bias_mask', 'bias_orig', 'weight']
    """
    Identity.apply(module, name)
    return module


def random_unstructured(module: Module, name: str, amount: float) -> Module:
    """Prune ``amount`` entries of ``module.<name>`` at random (an int: a count; a float in
    [0, 1]: a fraction).

    >>> import funcgrad_nn as nn
    >>> lin = random_unstructured(nn.Linear(4, 5), "weight", amount=0.25)
    >>> int((lin.weight == 0).sum())
    5
    """
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module: Module, name: str, amount: float,
                    importance_scores: Any = None) -> Module:
    """Prune the ``amount`` entries of ``module.<name>`` of smallest magnitude (of
    ``importance_scores`` when given).

    >>> import numpy as np, funcgrad_nn as nn
    >>> lin = nn.Linear(2, 1, bias=False); lin.weight[...] = [[0.1, -3.0]]
    >>> l1_unstructured(lin, "weight", amount=1).weight.tolist()
    [[0.0, -3.0]]
    """
    L1Unstructured.apply(module, name, amount, importance_scores=importance_scores)
    return module


def random_structured(module: Module, name: str, amount: float, dim: int) -> Module:
    """Prune ``amount`` channels (slices along ``dim``) of ``module.<name>`` at random.

    >>> import numpy as np, funcgrad_nn as nn
    >>> lin = random_structured(nn.Linear(3, 4), "weight", amount=2, dim=0)
    >>> int((np.abs(lin.weight).sum(axis=1) == 0).sum())
    2
    """
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module: Module, name: str, amount: float, n: Any, dim: int,
                  importance_scores: Any = None) -> Module:
    """Prune the ``amount`` channels along ``dim`` of ``module.<name>`` with the smallest
    ``n``-norm (``n``: a number, ``inf``, ``-inf`` or ``"fro"``).

    >>> import numpy as np, funcgrad_nn as nn
    >>> lin = nn.Linear(2, 3, bias=False); lin.weight[...] = [[1, 1], [0.1, 0], [3, 0]]
    >>> ln_structured(lin, "weight", amount=1, n=2, dim=0).weight.tolist()
    [[1.0, 1.0], [0.0, 0.0], [3.0, 0.0]]
    """
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def custom_from_mask(module: Module, name: str, mask: Any) -> Module:
    """Prune ``module.<name>`` where ``mask`` is 0.

    >>> import numpy as np, funcgrad_nn as nn
    >>> lin = custom_from_mask(nn.Linear(2, 1), "bias", mask=np.array([0.0]))
    >>> lin.bias_mask.tolist(), bool(lin.bias[0] == 0)
    ([0.0], True)
    """
    CustomFromMask.apply(module, name, mask)
    return module


def global_unstructured(parameters: Iterable[tuple[Module, str]], pruning_method: type,
                        importance_scores: dict[tuple[Module, str], Any] | None = None,
                        **kwargs: Any) -> None:
    """Prune the ``(module, name)`` pairs together: ``pruning_method`` (an unstructured method
    class, e.g. :class:`L1Unstructured`, with its ``**kwargs`` such as ``amount``) chooses
    among all their entries at once.

    >>> import numpy as np, funcgrad_nn as nn
    >>> a, b = nn.Linear(2, 1, bias=False), nn.Linear(2, 1, bias=False)
    >>> a.weight[...] = [[1.0, 2.0]]; b.weight[...] = [[0.5, 4.0]]
    >>> global_unstructured([(a, "weight"), (b, "weight")], L1Unstructured, amount=2)
    >>> a.weight.tolist(), b.weight.tolist()
    ([[0.0, 2.0]], [[0.0, 4.0]])
    """
    params = list(parameters)
    if not params:
        raise TypeError("global_unstructured: parameters must be a non-empty iterable of "
                        "(module, name) pairs")
    scores = importance_scores or {}
    method = pruning_method(**kwargs)
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. '
                        f"Found method {pruning_method} of type {method.PRUNING_TYPE}")
    flat = numpy.concatenate([_host(scores.get((m, n), getattr(m, n))).reshape(-1)
                              for m, n in params])
    default = numpy.concatenate([
        _host(getattr(m, n + "_mask")).reshape(-1) if hasattr(m, n + "_mask")
        else numpy.ones(getattr(m, n).size, dtype=flat.dtype) for m, n in params])
    method._tensor_name = "temp"
    final = PruningContainer(method).compute_mask(flat, default)
    start = 0
    for m, n in params:
        size = getattr(m, n).size
        custom_from_mask(m, n, final[start:start + size].reshape(getattr(m, n).shape))
        start += size


def remove(module: Module, name: str) -> Module:
    """Make the pruned ``module.<name>`` a plain parameter (``orig * mask``) again, dropping
    ``<name>_orig`` and ``<name>_mask``.

    >>> import funcgrad_nn as nn
    >>> lin = remove(identity(nn.Linear(2, 1), "weight"), "weight")
    >>> type(lin).__name__, sorted(lin.state_dict())
    ('Linear', ['bias', 'weight'])
    """
    method = module.__dict__.get("_pruning", {}).get(name)
    if method is None:
        raise ValueError(f"Parameter '{name}' of module {type(module).__name__} has to be "
                         "pruned before pruning can be removed")
    method.remove(module)
    return module


def is_pruned(module: Module) -> bool:
    """Whether ``module`` or a submodule has a pruned attribute.

    >>> import funcgrad_nn as nn
    >>> m = nn.Sequential(nn.Linear(2, 2))
    >>> is_pruned(m), is_pruned(identity(m[0], "weight") and m)
    (False, True)
    """
    return any(m.__dict__.get("_pruning") for m in module.modules())
