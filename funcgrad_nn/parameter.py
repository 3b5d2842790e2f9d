"""``torch.nn.parameter``'s names, for code that imports them from there
(``from torch.nn.parameter import Parameter``): funcgrad_nn's :class:`Parameter` and
:class:`Buffer`, the same classes as ``funcgrad_nn.Parameter`` and ``funcgrad_nn.Buffer``,
and the lazy layers' :class:`UninitializedParameter` / :class:`UninitializedBuffer` with
:func:`is_lazy`.

>>> import numpy as np
>>> import funcgrad_nn as nn
>>> from funcgrad_nn.parameter import Parameter
>>> m = nn.Module()
>>> m.scale = Parameter(np.ones(2, np.float32))
>>> Parameter is nn.Parameter, [name for name, _ in m.named_parameters()]
(True, ['scale'])
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy

import funcgrad
from funcgrad.backend import device_of
from funcgrad_nn.init import get_default_dtype
from funcgrad_nn.module import (
    _PLACEHOLDER_VIEW,
    Buffer,
    Parameter,
    mark_uninitialized,
    placeholder_kind,
)

__all__ = ["Buffer", "Parameter", "UninitializedBuffer", "UninitializedParameter", "is_lazy"]


def _placeholder(kind: str, device: Any, dtype: Any) -> Any:
    data = numpy.zeros((0,), get_default_dtype() if dtype is None else dtype)
    if device is not None and device != "cpu":
        data = funcgrad.device_put(data, device)
    return mark_uninitialized(data, kind)


#: the module entry (module held weakly, attribute name) that an UninitializedParameter /
#: UninitializedBuffer read off a module stands for: its ``materialize`` replaces that entry
_OWNER: weakref.WeakKeyDictionary[Any, tuple[weakref.ref[Any], str]] = \
    weakref.WeakKeyDictionary()


def _shape_tuple(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, (int, numpy.integer)):
        return (int(shape),)
    try:
        out = tuple(int(s) for s in shape)
    except TypeError:
        raise TypeError(f"materialize: shape must be an int or a sequence of ints, got "
                        f"{shape!r}") from None
    if any(s < 0 for s in out):
        raise ValueError(f"materialize: negative dimension in shape {out}")
    return out


class _UninitializedMeta(type):
    # A module stores the placeholder array itself: the array is an instance too, so
    # PyTorch's ``isinstance(p, UninitializedParameter)`` filters over ``parameters()`` work.
    _kind = ""

    def __instancecheck__(cls, obj: Any) -> bool:
        return type.__instancecheck__(cls, obj) or placeholder_kind(obj) == cls._kind


class _Uninitialized:
    """What UninitializedParameter and UninitializedBuffer share: ``materialize``, and
    ``dtype``/``device`` (their shape is not known yet, so, as PyTorch's, they have none)."""

    __slots__ = ()
    cls_to_become: type = object

    data: Any

    @property
    def dtype(self) -> numpy.dtype:
        """The dtype :meth:`materialize` creates the array in (``.double()`` etc. change it)."""
        return self.data.dtype

    @property
    def device(self) -> str:
        """Where :meth:`materialize` creates the array (``.to(device)`` changes it)."""
        return device_of(self.data) or "cpu"

    @property
    def shape(self) -> Any:
        raise RuntimeError(f"Can't access the shape of an uninitialized parameter or buffer "
                         f"({type(self).__name__}): call materialize(shape) first (or, for a "
                         "lazy layer, call the module once)")

    def materialize(self, shape: Any, device: Any = None, dtype: Any = None) -> None:
        """Create the real array, of ``shape`` (PyTorch's ``materialize``: its values are not
        initialised, here zeros; fill it with an ``nn.init`` function), on ``device`` and in
        ``dtype`` (by default the placeholder's, which follow ``.to()``/``.double()``). Read
        off a module (``self.weight.materialize(...)`` in ``initialize_parameters``) it
        replaces the module's entry, keeping its hooks and frozen flag; it then becomes a
        plain :class:`Parameter`/:class:`Buffer`, as in PyTorch.

        >>> import numpy as np, funcgrad_nn as nn
        >>> m = nn.LazyLinear(2)
        >>> m.weight.materialize((2, 3)); m.weight.shape
        (2, 3)
        >>> p = UninitializedParameter(dtype=np.float64)
        >>> p.materialize(4); type(p).__name__, p.data.shape, p.data.dtype
        ('Parameter', (4,), dtype('float64'))
        """
        old = self.data
        if placeholder_kind(old) is None:
            raise RuntimeError(f"materialize: this {type(self).__name__} was already "
                               "materialized")
        new = numpy.zeros(_shape_tuple(shape), old.dtype if dtype is None else dtype)
        where = device_of(old) if device is None else device
        if where not in (None, "cpu"):
            new = funcgrad.device_put(new, where)
        owner = _OWNER.pop(self, None)
        module = None if owner is None else owner[0]()
        if module is not None and placeholder_kind(getattr(module, "_parameters", {}).get(
                owner[1], getattr(module, "_buffers", {}).get(owner[1]))) is not None:
            setattr(module, owner[1], new)  # the registry entry (frozen flag, hooks) stays
        self.data = new
        self.__class__ = self.cls_to_become  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


class UninitializedParameter(_Uninitialized, Parameter, metaclass=_UninitializedMeta):
    """A parameter whose shape is not known yet (PyTorch's, what a lazy layer holds before
    its first call): assigned to a module it registers an empty placeholder array, which
    ``to(device)``/``double()`` move and cast, and which is in ``state_dict()``. Read off
    the module it is an ``UninitializedParameter`` again, whose :meth:`materialize` creates
    the real array in the module (a custom lazy module's ``initialize_parameters`` does
    that, or assigns a :class:`Parameter`); a lazy layer's first call does it for it.

    >>> import funcgrad_nn as nn
    >>> m = nn.LazyLinear(4)
    >>> isinstance(m.weight, UninitializedParameter), is_lazy(m.weight), m.weight
    (True, True, <UninitializedParameter>)
    >>> import numpy as np
    >>> _ = m(np.ones((2, 3), np.float32))
    >>> isinstance(m.weight, UninitializedParameter), m.weight.shape
    (False, (4, 3))
    """

    __slots__ = ()
    _kind = "parameter"
    cls_to_become = Parameter

    def __init__(self, requires_grad: bool = True, device: Any = None, dtype: Any = None
                 ) -> None:
        super().__init__(_placeholder("parameter", device, dtype), requires_grad)


class UninitializedBuffer(_Uninitialized, Buffer, metaclass=_UninitializedMeta):
    """A buffer whose shape is not known yet (PyTorch's; see
    :class:`UninitializedParameter`): an empty placeholder array until materialized or
    replaced.

    >>> import funcgrad_nn as nn
    >>> m = nn.Module()
    >>> m.stats = UninitializedBuffer()
    >>> is_lazy(m.stats), list(m.state_dict())
    (True, ['stats'])
    >>> m.stats.materialize((2, 2)); m.stats.shape, is_lazy(m.stats)
    ((2, 2), False)
    """

    __slots__ = ()
    _kind = "buffer"
    cls_to_become = Buffer

    def __init__(self, requires_grad: bool = False, device: Any = None, dtype: Any = None,
                 persistent: bool = True) -> None:
        del requires_grad  # buffers take no gradient here
        super().__init__(_placeholder("buffer", device, dtype), persistent=persistent)


def _view(module: Any, name: str, data: Any, kind: str) -> Any:
    """The UninitializedParameter/UninitializedBuffer standing for ``module``'s placeholder
    entry ``name`` (see ``Module.__getattr__``)."""
    if kind == "parameter":
        view: Any = UninitializedParameter.__new__(UninitializedParameter)
        Parameter.__init__(view, data, name not in module._frozen)
    else:
        view = UninitializedBuffer.__new__(UninitializedBuffer)
        Buffer.__init__(view, data, persistent=name not in module._non_persistent)
    _OWNER[view] = (weakref.ref(module), name)
    return view


_PLACEHOLDER_VIEW.append(_view)


def is_lazy(param: Any) -> bool:
    """True for an uninitialised parameter or buffer (PyTorch's ``is_lazy``): an
    :class:`UninitializedParameter`/:class:`UninitializedBuffer` not yet materialized, or the
    placeholder array a module holds for one.

    >>> import numpy as np, funcgrad_nn as nn
    >>> is_lazy(nn.LazyConv2d(4, 3).weight), is_lazy(nn.Conv2d(2, 4, 3).weight)
    (True, False)
    """
    if isinstance(param, (Parameter, Buffer)):
        return placeholder_kind(param.data) is not None
    return placeholder_kind(param) is not None
