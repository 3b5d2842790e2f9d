"""``scipy.signal.detrend``: its own module so that ``funcgrad.scipy.signal`` and the
spectral functions (:mod:`funcgrad.scipy._signal_spectral`) both use it.

Example:
    >>> import numpy as np
    >>> from funcgrad.scipy.signal import detrend
    >>> detrend(np.array([1.0, 2.0, 3.0])).round(12) + 0.0
    array([0., 0., 0.])
"""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.avals import get_aval
from funcgrad.backend import device_put, get_default_device

__all__ = ["detrend"]


def detrend(data: Any, axis: int = -1, type: str = "linear", bp: Any = 0,  # noqa: A002
            overwrite_data: bool = False) -> Any:
    """Remove the mean (``type="constant"``) or the least-squares line (``"linear"``,
    piecewise between the breakpoints ``bp``) along ``axis``.

    Example:
        >>> import numpy as np, funcgrad.scipy.signal as fss
        >>> fss.detrend(np.array([1.0, 2.0, 4.0])).round(6)
        array([ 0.166667, -0.333333,  0.166667])
    """
    if type not in ("linear", "l", "constant", "c"):
        raise ValueError(f"detrend: trend type must be 'linear' or 'constant', got {type!r}")
    data = fnp.asarray(data)
    dt = get_aval(data).dtype
    if dt.kind not in "fc":
        data = data.astype(numpy.float64)
    if type in ("constant", "c"):
        return data - fnp.mean(data, axis=axis, keepdims=True)
    nd = get_aval(data).ndim
    axis = axis % nd
    x = fnp.moveaxis(data, axis, 0)
    n = get_aval(x).shape[0]
    bps = numpy.sort(numpy.unique(numpy.r_[0, numpy.atleast_1d(bp), n]))
    if numpy.any(bps > n):
        raise ValueError("detrend: breakpoints must be less than the length of data along axis")
    pieces = []
    for lo, hi in zip(bps[:-1], bps[1:]):
        seg = x[int(lo):int(hi)]
        m = int(hi - lo)
        t = numpy.arange(1, m + 1, dtype=numpy.float64) / m
        design = numpy.stack([t, numpy.ones(m)], axis=1)
        proj = numpy.eye(m) - design @ numpy.linalg.pinv(design)  # residual projector
        flat = fnp.reshape(seg, (m, -1))
        proj = device_put(proj.astype(get_aval(flat).dtype),
                          get_aval(flat).device or get_default_device())
        pieces.append(fnp.reshape(fnp.matmul(proj, flat),
                                  get_aval(seg).shape))
    return fnp.moveaxis(fnp.concatenate(pieces, axis=0), 0, axis)
