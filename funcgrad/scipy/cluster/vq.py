"""Vector quantization, as ``scipy.cluster.vq`` (the part ``jax.scipy.cluster.vq`` has).

Example:
    >>> import numpy as np
    >>> from funcgrad.scipy.cluster.vq import vq
    >>> code, dist = vq(np.array([1.0, 5.0, 2.0]), np.array([0.0, 4.0]))
    >>> code, dist
    (array([0, 1, 0], dtype=int32), array([1., 1., 2.]))
"""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.scipy._device import keep_host_inputs_on_host as _keep_host_inputs_on_host

__all__ = ["vq"]


def vq(obs: Any, code_book: Any, check_finite: bool = True) -> tuple[Any, Any]:
    """Assign each observation (row of ``obs``, shape ``(M, N)``, or an entry of a 1-D
    ``obs``) to the nearest code (row of ``code_book``) in Euclidean distance: ``(code,
    dist)``, the index of the nearest code (the first of equally near ones) and the distance
    to it. As ``scipy.cluster.vq.vq``: codes are int32 for float input (int64 for integer
    input), distances float (float32 stays float32). ``check_finite`` has no effect (as in
    JAX). ``dist`` is differentiable in ``obs`` and ``code_book`` away from ties and zero
    distances.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.cluster.vq import vq
        >>> vq(np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[0.0, 0.0], [3.0, 3.0]]))[1]
        array([2.23606798, 1.        ])
    """
    del check_finite
    obs, code_book = fnp.asarray(obs), fnp.asarray(code_book)
    if obs.dtype.kind == "c" or code_book.dtype.kind == "c":
        raise TypeError("vq: complex input is not supported")
    dt = numpy.result_type(obs.dtype, code_book.dtype)
    integer = dt.kind not in "f"
    if integer:
        dt = numpy.dtype(numpy.float64)
    obs, code_book = obs.astype(dt), code_book.astype(dt)
    if obs.ndim != code_book.ndim:
        raise ValueError(f"vq: observation and code_book should have the same rank, got "
                         f"{obs.ndim} and {code_book.ndim}")
    if obs.ndim == 1:
        obs, code_book = obs[:, None], code_book[:, None]
    if obs.ndim != 2:
        raise ValueError(f"vq: ndim different than 1 or 2 are not supported, got {obs.ndim}")
    if obs.shape[1] != code_book.shape[1]:
        raise ValueError(f"vq: observation and code_book should have the same number of "
                         f"features, got {obs.shape[1]} and {code_book.shape[1]}")
    dist = fnp.sqrt(fnp.sum((obs[:, None, :] - code_book[None, :, :]) ** 2, axis=-1))
    code = fnp.argmin(dist, axis=-1)
    best = fnp.take_along_axis(dist, code[:, None], axis=-1)[:, 0]
    return code.astype(numpy.int64 if integer else numpy.int32), best

# NumPy inputs compute on the host whatever the default device (funcgrad.scipy._device)
_keep_host_inputs_on_host(globals(), __all__)
