"""``funcgrad.numpy.astype``: NumPy 2's function form of ``ndarray.astype``."""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.ops.elementwise as _ew
from funcgrad.avals import canonical_dtype, get_aval
from funcgrad.backend import device_of, device_put, xp_for_device
from funcgrad.core import Tracer

__all__ = ["astype"]


def astype(x: Any, dtype: Any, /, *, copy: bool = True, device: Any = None) -> Any:
    """``x`` converted to ``dtype`` (complex to real keeps the real part), differentiably.

    As in NumPy, ``x`` must be an array (or a NumPy scalar); ``copy=False`` returns ``x``
    itself when no conversion is needed. ``device`` moves a concrete array to that device.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> fnp.astype(np.array([1.5, 2.5]), np.int64)
        array([1, 2])
    """
    if not (isinstance(x, Tracer | numpy.generic) or device_of(x) is not None):
        raise TypeError(
            f"astype: input should be an array or a NumPy scalar, got {type(x).__name__}"
        )
    dt = canonical_dtype(dtype, "astype")
    if device is not None:
        if isinstance(x, Tracer):
            raise TypeError("astype: device= needs a concrete array, not a traced one")
        x = device_put(x, str(device))
    if isinstance(x, numpy.generic):
        return x.astype(dt)
    if get_aval(x).dtype == dt:
        if not copy or isinstance(x, Tracer):
            return x  # traced values are immutable: no copy is ever observable
        return xp_for_device(device_of(x)).array(x, copy=True)
    return _ew.convert_element_type(x, dt)
