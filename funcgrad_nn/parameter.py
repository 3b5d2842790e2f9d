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

from typing import Any

import numpy

import funcgrad
from funcgrad_nn.init import get_default_dtype
from funcgrad_nn.module import Buffer, Parameter, mark_uninitialized, placeholder_kind

__all__ = ["Buffer", "Parameter", "UninitializedBuffer", "UninitializedParameter", "is_lazy"]


def _placeholder(kind: str, device: Any, dtype: Any) -> Any:
    data = numpy.zeros((0,), get_default_dtype() if dtype is None else dtype)
    if device is not None and device != "cpu":
        data = funcgrad.device_put(data, device)
    return mark_uninitialized(data, kind)


class _UninitializedMeta(type):
    # A module returns the array it stores, not the marker it was given: a lazy layer's
    # placeholder array is an instance too, so PyTorch's
    # ``isinstance(m.weight, UninitializedParameter)`` filters work.
    _kind = ""

    def __instancecheck__(cls, obj: Any) -> bool:
        return type.__instancecheck__(cls, obj) or placeholder_kind(obj) == cls._kind


class UninitializedParameter(Parameter, metaclass=_UninitializedMeta):
    """A parameter whose shape is not known yet (PyTorch's, what a lazy layer holds before
    its first call): assigned to a module it registers an empty placeholder array, which
    ``to(device)``/``double()`` move and cast, and which is in ``state_dict()``. A lazy
    layer's first call replaces it with the real array; a custom module replaces it by
    assigning a :class:`Parameter` (``self.weight = Parameter(array)``).

    >>> import funcgrad_nn as nn
    >>> m = nn.LazyLinear(4)
    >>> isinstance(m.weight, UninitializedParameter), is_lazy(m.weight)
    (True, True)
    >>> import numpy as np
    >>> _ = m(np.ones((2, 3), np.float32))
    >>> isinstance(m.weight, UninitializedParameter), m.weight.shape
    (False, (4, 3))
    """

    _kind = "parameter"
    cls_to_become = Parameter

    def __init__(self, requires_grad: bool = True, device: Any = None, dtype: Any = None
                 ) -> None:
        super().__init__(_placeholder("parameter", device, dtype), requires_grad)


class UninitializedBuffer(Buffer, metaclass=_UninitializedMeta):
    """A buffer whose shape is not known yet (PyTorch's; see
    :class:`UninitializedParameter`): an empty placeholder array until replaced.

    >>> import funcgrad_nn as nn
    >>> m = nn.Module()
    >>> m.stats = UninitializedBuffer()
    >>> is_lazy(m.stats), list(m.state_dict())
    (True, ['stats'])
    """

    _kind = "buffer"

    def __init__(self, requires_grad: bool = False, device: Any = None, dtype: Any = None,
                 persistent: bool = True) -> None:
        del requires_grad  # buffers take no gradient here
        super().__init__(_placeholder("buffer", device, dtype), persistent=persistent)


def is_lazy(param: Any) -> bool:
    """True for an uninitialised parameter or buffer (PyTorch's ``is_lazy``): an
    :class:`UninitializedParameter`/:class:`UninitializedBuffer`, or the placeholder array a
    module holds for one.

    >>> import numpy as np, funcgrad_nn as nn
    >>> is_lazy(nn.LazyConv2d(4, 3).weight), is_lazy(nn.Conv2d(2, 4, 3).weight)
    (True, False)
    """
    return isinstance(param, (UninitializedParameter, UninitializedBuffer))
