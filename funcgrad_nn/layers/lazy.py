"""``torch.nn.modules.lazy``'s :class:`LazyModuleMixin`: a module whose parameters are
created by its first call, from the shapes of what it is called with.

A subclass holds :class:`~funcgrad_nn.parameter.UninitializedParameter` (or
``UninitializedBuffer``) placeholders and defines ``initialize_parameters(*args,
**kwargs)``, which materializes them (``self.weight.materialize(shape)``, then an
``nn.init`` function, as in PyTorch) or assigns the real ones (``self.weight =
Parameter(array)``; what it assigns is moved and cast to the placeholder's device and floating dtype, so ``.to(device)`` and
``.double()`` before the first call hold, as in PyTorch). Before the first forward the mixin
calls it; once nothing is left uninitialised the hook goes away and the
module becomes ``cls_to_become`` when that is set, as in PyTorch. ``load_state_dict`` of a
checkpoint gives each placeholder the checkpoint's shape before loading into it.

>>> import numpy as np
>>> import funcgrad_nn as nn
>>> from funcgrad_nn.parameter import UninitializedParameter
>>> class LazyScale(LazyModuleMixin, nn.Module):
...     def __init__(self):
...         super().__init__()
...         self.scale = UninitializedParameter()
...     def initialize_parameters(self, x):
...         if self.has_uninitialized_params():
...             self.scale = nn.Parameter(np.ones(x.shape[-1], np.float32))
...     def forward(self, x):
...         return x * self.scale
>>> m = LazyScale()
>>> m.has_uninitialized_params(), m(np.ones((2, 3), np.float32)).shape, m.scale.shape
(True, (2, 3), (3,))
"""

from __future__ import annotations

import itertools
import weakref
from typing import Any

import numpy

import funcgrad
from funcgrad.backend import device_of
from funcgrad_nn.layers._util import empty
from funcgrad_nn.module import Module
from funcgrad_nn.parameter import is_lazy

__all__ = ["LazyModuleMixin"]

#: each lazy module's (forward pre-hook, load pre-hook) handles, removed once it is
#: initialised (kept off the module itself: its attributes are part of its pytree structure)
_HANDLES: weakref.WeakKeyDictionary[Any, tuple[Any, Any]] = weakref.WeakKeyDictionary()


def _uninitialized(mod: Module) -> bool:
    return any(is_lazy(v) for v in itertools.chain(mod._parameters.values(),
                                                   mod._buffers.values()))


def _infer_parameters(mod: Any, args: tuple, kwargs: dict) -> None:
    # What .to(device)/.double() made of each placeholder decides where and in what
    # floating dtype its replacement lives, as PyTorch's materialize() does.
    where = {(reg, name): (device_of(v), v.dtype)
             for reg in ("_parameters", "_buffers")
             for name, v in getattr(mod, reg).items() if is_lazy(v)}
    mod.initialize_parameters(*args, **kwargs)
    for (reg, name), (device, dtype) in where.items():
        new = getattr(mod, reg).get(name)
        if new is None or is_lazy(new):
            continue
        moved = new
        if numpy.dtype(new.dtype).kind == "f" and numpy.dtype(dtype).kind == "f":
            moved = moved.astype(dtype)
        if device not in (None, "cpu") and device_of(moved) != device:
            moved = funcgrad.device_put(moved, device)
        if moved is not new:
            setattr(mod, name, moved)
    if _uninitialized(mod):
        raise RuntimeError(f"module {type(mod).__name__} has not been fully initialized: "
                           "its initialize_parameters left an UninitializedParameter or "
                           "UninitializedBuffer in place")
    for handle in _HANDLES.pop(mod, ()):
        handle.remove()
    if mod.cls_to_become is not None:
        mod.__class__ = mod.cls_to_become


def _lazy_load_hook(mod: Any, state_dict: dict[str, Any], prefix: str, *rest: Any) -> None:
    # Each placeholder the checkpoint has an entry for takes that entry's shape (in the
    # placeholder's dtype, on its device), so the ordinary loading then copies into it.
    for reg in ("_parameters", "_buffers"):
        for name, value in list(getattr(mod, reg).items()):
            saved = state_dict.get(prefix + name)
            if is_lazy(value) and saved is not None and not is_lazy(saved):
                real = empty(tuple(saved.shape), value.dtype)
                where = device_of(value)
                if where not in (None, "cpu"):
                    real = funcgrad.device_put(real, where)
                setattr(mod, name, real)  # the registry entry (frozen flag, hooks) stays


class LazyModuleMixin:
    """PyTorch's mixin for modules that create their parameters on the first call (see the
    module docstring); put it first among the bases: ``class M(LazyModuleMixin, Module)``.

    >>> import funcgrad_nn as nn
    >>> isinstance(nn.LazyLinear(2), LazyModuleMixin)  # the built-in lazy layers too
    True
    """

    cls_to_become: type | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[call-arg]
        _HANDLES[self] = (
            self.register_forward_pre_hook(_infer_parameters, with_kwargs=True),  # type: ignore[attr-defined]
            self._register_load_state_dict_pre_hook(_lazy_load_hook, with_module=True))  # type: ignore[attr-defined]

    def has_uninitialized_params(self) -> bool:
        """True while a parameter or buffer is still an uninitialised placeholder."""
        return _uninitialized(self)  # type: ignore[arg-type]

    def initialize_parameters(self, *args: Any, **kwargs: Any) -> None:
        """Create the real parameters from the first call's arguments (a subclass defines
        this; the mixin calls it before that call's forward)."""
        raise TypeError(f"{type(self).__name__}: a lazy module must define "
                        "initialize_parameters(*args, **kwargs), which assigns the real "
                        "parameters in place of its UninitializedParameters")
