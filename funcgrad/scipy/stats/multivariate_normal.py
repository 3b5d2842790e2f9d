"""The multivariate normal distribution, as ``scipy.stats.multivariate_normal``.

Example:
    >>> import numpy as np
    >>> from funcgrad.scipy.stats import multivariate_normal
    >>> round(float(multivariate_normal.logpdf(np.zeros(2), np.zeros(2), np.eye(2))), 12)
    -1.837877066409
"""

from __future__ import annotations

from typing import Any

import funcgrad.numpy as fnp
from funcgrad.avals import get_aval
from funcgrad.ops.linalg_decomp import triangular_solve
from funcgrad.scipy.stats._util import HALF_LOG_2PI, promote

__all__ = ["logpdf", "pdf"]


def logpdf(x: Any, mean: Any, cov: Any, allow_singular: Any = None) -> Any:
    """Log density of ``N(mean, cov)`` at points ``x`` of shape ``(..., d)`` (the result has
    shape ``...``). ``mean`` broadcasts against ``x`` (last axis ``d``); ``cov`` is a ``(d, d)``
    positive-definite matrix, or a ``(d,)`` diagonal or a scalar multiple of the identity.

    Through a Cholesky factor: differentiable in ``x``, ``mean`` and ``cov``.
    ``allow_singular=True`` is not supported (a singular ``cov`` gives nan).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import multivariate_normal
        >>> x = np.array([[1.0, 0.0], [0.0, 2.0]])
        >>> multivariate_normal.logpdf(x, np.zeros(2), np.diag([1.0, 4.0]))
        array([-3.03102425, -3.03102425])
    """
    if allow_singular:
        raise NotImplementedError(
            "funcgrad.scipy.stats.multivariate_normal.logpdf: allow_singular=True is not "
            "supported")
    x, mean, cov = promote("multivariate_normal.logpdf", x, mean, cov)
    xs, ms, cs = get_aval(x).shape, get_aval(mean).shape, get_aval(cov).shape
    if len(ms) == 0 or len(xs) == 0:
        raise ValueError(
            "multivariate_normal.logpdf: x and mean need a last axis of length d (shapes "
            f"{xs} and {ms}); for one dimension use shape (..., 1)")
    d = ms[-1]
    if xs[-1] != d:
        raise ValueError(f"multivariate_normal.logpdf: x has last axis {xs[-1]}, mean {d}")
    if len(cs) == 0:
        cov = cov * fnp.eye(d, dtype=get_aval(cov).dtype)
    elif len(cs) == 1 and cs[0] == d:
        cov = fnp.diag(cov)
    elif cs != (d, d):
        raise ValueError(
            f"multivariate_normal.logpdf: cov must have shape ({d}, {d}), ({d},) or (), got "
            f"{cs}")
    diff = x - mean
    batch = get_aval(diff).shape[:-1]
    low = fnp.linalg.cholesky(cov)
    z = triangular_solve(low, fnp.reshape(diff, (-1, d)).T, lower=True)
    maha = fnp.reshape(fnp.sum(z * z, axis=0), batch)
    half_logdet = fnp.sum(fnp.log(fnp.diagonal(low)))
    return -0.5 * maha - half_logdet - d * HALF_LOG_2PI


def pdf(x: Any, mean: Any, cov: Any, allow_singular: Any = None) -> Any:
    """Density of ``N(mean, cov)``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import multivariate_normal
        >>> round(float(multivariate_normal.pdf(np.zeros(2), np.zeros(2), np.eye(2))), 12)
        0.159154943092
    """
    return fnp.exp(logpdf(x, mean, cov, allow_singular))
