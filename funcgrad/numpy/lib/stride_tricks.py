"""funcgrad.numpy.lib.stride_tricks: ``sliding_window_view`` as NumPy's.

NumPy builds the windows as a strided view of ``x``'s memory; funcgrad's arrays are values, so
here each windowed axis is one gather (``take`` of an ``(n - w + 1, w)`` index table), which
differentiates (overlapping windows add their cotangents back), batches and traces.
``as_strided`` is not provided: strides in bytes describe memory, which funcgrad's results do
not expose (``sliding_window_view`` covers its usual use).

Example:
    >>> import numpy as np
    >>> from funcgrad.numpy.lib.stride_tricks import sliding_window_view
    >>> sliding_window_view(np.arange(6.0).reshape(2, 3), (2, 2)).shape
    (1, 2, 2, 2)
"""

from __future__ import annotations

from typing import Any

import numpy

from funcgrad.avals import get_aval
from funcgrad.backend import device_put, get_default_device, operator_index
from funcgrad.core import Tracer, concrete_or_error
from funcgrad.errors import AxisError
from funcgrad.numpy import _indexing as _fi
from funcgrad.numpy import _shape as _fs

__all__ = ["sliding_window_view"]


def _int_tuple(v: Any, what: str) -> tuple[int, ...]:
    if isinstance(v, Tracer):
        v = concrete_or_error(v, f"sliding_window_view: {what}")
    seq = tuple(numpy.atleast_1d(numpy.asarray(v)).tolist()) if not isinstance(
        v, list | tuple) else tuple(v)
    try:
        return tuple(operator_index(e) for e in seq)
    except TypeError:
        raise TypeError(f"sliding_window_view: {what} must be integers, got {v!r}") from None


def sliding_window_view(x: Any, window_shape: Any, axis: Any = None, *, subok: bool = False,
                        writeable: bool = False) -> Any:
    """All windows of shape ``window_shape`` sliding over ``x``, as
    :func:`numpy.lib.stride_tricks.sliding_window_view`: the windowed axes shrink to
    ``n - w + 1`` and the window's own axes are appended, in the order of ``axis`` (all axes by
    default; an axis may repeat). ``subok`` and ``writeable`` are NumPy's view options: the
    result is a new immutable array, so ``writeable=True`` raises.

    Example:
        >>> import numpy as np
        >>> sliding_window_view(np.arange(5), 3)
        array([[0, 1, 2],
               [1, 2, 3],
               [2, 3, 4]])
        >>> sliding_window_view(np.arange(6).reshape(2, 3), 2, axis=1).tolist()
        [[[0, 1], [1, 2]], [[3, 4], [4, 5]]]
    """
    if writeable:
        raise ValueError("sliding_window_view: writeable=True is not supported (funcgrad arrays "
                         "are immutable; use x.at[...].set for functional updates)")
    x = _fs._arr(x)
    xa = get_aval(x)
    shape = _int_tuple(window_shape, "window_shape")
    if any(w < 0 for w in shape):
        raise ValueError("sliding_window_view: `window_shape` cannot contain negative values")
    if axis is None:
        if len(shape) != xa.ndim:
            raise ValueError(f"sliding_window_view: since axis is `None`, must provide "
                             f"window_shape for all dimensions of `x`; got {len(shape)} "
                             f"window_shape elements and `x.ndim` is {xa.ndim}.")
        axes = tuple(range(xa.ndim))
    else:
        axes = _int_tuple(axis, "axis")
        if len(axes) != len(shape):
            raise ValueError(f"sliding_window_view: must provide matching length window_shape "
                             f"and axis; got {len(shape)} window_shape elements and "
                             f"{len(axes)} axes elements.")
        for a in axes:
            if not -xa.ndim <= a < xa.ndim:
                raise AxisError(f"sliding_window_view: axis {a} is out of bounds for array of "
                                f"dimension {xa.ndim}")
        axes = tuple(a % xa.ndim for a in axes)
    trimmed = list(xa.shape)
    for a, w in zip(axes, shape):
        if trimmed[a] < w:
            raise ValueError("sliding_window_view: window shape cannot be larger than input "
                             "array shape")
        trimmed[a] -= w - 1
    device = xa.device or get_default_device()
    y = x
    for a, w in zip(axes, shape):
        n = get_aval(y).shape[a] - w + 1
        table = numpy.arange(n)[:, None] + numpy.arange(w)[None, :]
        # (n, w) indices put the starts at axis a and the window right after it: to the end
        y = _fi.take(y, device_put(table, device), axis=a, mode="clip")
        y = _fs.moveaxis(y, a + 1, -1)
    return y
