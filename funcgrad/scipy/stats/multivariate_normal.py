"""The multivariate normal distribution, as ``scipy.stats.multivariate_normal``.

Example:
    >>> import numpy as np
    >>> from funcgrad.scipy.stats import multivariate_normal
    >>> round(float(multivariate_normal.logpdf(np.zeros(2), np.zeros(2), np.eye(2))), 12)
    -1.837877066409
"""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.avals import get_aval
from funcgrad.ops.linalg_decomp import triangular_solve
from funcgrad.scipy.stats._util import HALF_LOG_2PI, promote

__all__ = ["logpdf", "pdf", "entropy"]


def logpdf(x: Any, mean: Any = None, cov: Any = 1, allow_singular: Any = None) -> Any:
    """Log density of ``N(mean, cov)`` at points ``x`` of shape ``(..., d)`` (the result has
    shape ``...``). ``mean`` broadcasts against ``x`` (last axis ``d``; a scalar ``mean`` is the
    same in every coordinate); ``cov`` is a ``(d, d)`` positive-definite matrix (or, as JAX, a
    stack ``(..., d, d)`` of them whose batch dims broadcast against ``x``'s), or a ``(d,)``
    diagonal or a scalar multiple of the identity. As SciPy, in one dimension (``d = 1``) an
    ``x`` of shape ``(n,)`` is ``n`` points; SciPy's defaults ``mean=None`` (zero) and
    ``cov=1`` are accepted (JAX requires both).

    Through a Cholesky factor: differentiable in ``x``, ``mean`` and ``cov``. With
    ``allow_singular=True``, as SciPy: the pseudo-inverse and pseudo-determinant from an
    eigendecomposition (eigenvalues below SciPy's cutoff count as zero), and ``-inf`` off the
    support (points whose ``x - mean`` leaves the column space of ``cov``).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import multivariate_normal
        >>> x = np.array([[1.0, 0.0], [0.0, 2.0]])
        >>> multivariate_normal.logpdf(x, np.zeros(2), np.diag([1.0, 4.0]))
        array([-3.03102425, -3.03102425])
    """
    if mean is None:  # SciPy's default: zero, of the dimension cov gives (1 for a scalar)
        mean = 0.0
    x, mean, cov = promote("multivariate_normal.logpdf", x, mean, cov)
    xs, ms, cs = get_aval(x).shape, get_aval(mean).shape, get_aval(cov).shape
    # The dimension as SciPy infers it: from mean, else from cov, else 1; a scalar mean is
    # the same in every coordinate.
    d = ms[-1] if ms else cs[0] if cs else 1
    if not ms:
        mean = fnp.broadcast_to(mean, (d,))
    if d == 1 and (not xs or xs[-1] != 1):
        # One dimension: x of shape (n,) is n points (SciPy), a scalar one point.
        x = fnp.expand_dims(x, -1)
        xs = get_aval(x).shape
    if not xs:
        raise ValueError(
            f"multivariate_normal.logpdf: x needs a last axis of length d = {d}, got a scalar")
    if xs[-1] != d:
        raise ValueError(f"multivariate_normal.logpdf: x has last axis {xs[-1]}, mean {d}")
    if len(cs) == 0:
        cov = cov * fnp.eye(d, dtype=get_aval(cov).dtype)
    elif len(cs) == 1 and cs[0] == d:
        cov = fnp.diag(cov)
    elif cs[-2:] != (d, d):
        raise ValueError(
            f"multivariate_normal.logpdf: cov must have shape (..., {d}, {d}), ({d},) or (), "
            f"got {cs}")
    diff = x - mean
    if len(cs) > 2:
        return _batched_logpdf(diff, cov, d, bool(allow_singular))
    batch = get_aval(diff).shape[:-1]
    if allow_singular:
        return _singular_logpdf(diff, cov, d, batch)
    low = fnp.linalg.cholesky(cov)
    z = triangular_solve(low, fnp.reshape(diff, (-1, d)).T, lower=True)
    maha = fnp.reshape(fnp.sum(z * z, axis=0), batch)
    half_logdet = fnp.sum(fnp.log(fnp.diagonal(low)))
    return -0.5 * maha - half_logdet - d * HALF_LOG_2PI


def _batched_logpdf(diff: Any, cov: Any, d: int, allow_singular: bool) -> Any:
    # A stack of covariances (..., d, d), as JAX: its batch dims broadcast against x's.
    batch = fnp.broadcast_shapes(get_aval(diff).shape[:-1], get_aval(cov).shape[:-2])
    diff = fnp.broadcast_to(diff, (*batch, d))
    cov = fnp.broadcast_to(cov, (*batch, d, d))
    if allow_singular:
        flat = fnp.vectorize(lambda v, c: _singular_logpdf(v, c, d, ()),
                             signature="(d),(d,d)->()")
        return flat(diff, cov)
    low = fnp.linalg.cholesky(cov)
    z = triangular_solve(low, diff[..., None], lower=True)[..., 0]
    half_logdet = fnp.sum(fnp.log(fnp.diagonal(low, axis1=-2, axis2=-1)), axis=-1)
    return -0.5 * fnp.sum(z * z, axis=-1) - half_logdet - d * HALF_LOG_2PI


def _singular_logpdf(diff: Any, cov: Any, d: int, batch: tuple) -> Any:
    # SciPy's _PSD: eigenvalues at most cond * max|s| are zero (cond 1e6 * eps for float64,
    # 1e3 * eps for float32), the rest give the pseudo-inverse and pseudo-determinant.
    s, u = fnp.linalg.eigh(cov)
    dt = get_aval(s).dtype
    cond = (1e3 if dt == fnp.float32 else 1e6) * fnp.finfo(dt).eps
    keep = s > cond * fnp.max(fnp.abs(s))
    safe = fnp.where(keep, s, 1.0)
    rank = fnp.sum(keep)
    log_pdet = fnp.sum(fnp.where(keep, fnp.log(safe), 0.0))
    proj = fnp.reshape(diff, (-1, d)) @ u
    maha = fnp.reshape(fnp.sum(fnp.where(keep, proj * proj / safe, 0.0), axis=-1), batch)
    # Off the support: a component along a zero-eigenvalue direction (absolute tolerance 1e-8).
    residual = fnp.reshape(fnp.sqrt(fnp.sum(fnp.where(keep, 0.0, proj * proj), axis=-1)),
                           batch)
    out = -0.5 * (rank * (2.0 * HALF_LOG_2PI) + log_pdet + maha)
    return fnp.where(residual <= 1e-8, out, -fnp.inf)


def pdf(x: Any, mean: Any = None, cov: Any = 1, allow_singular: Any = None) -> Any:
    """Density of ``N(mean, cov)``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import multivariate_normal
        >>> round(float(multivariate_normal.pdf(np.zeros(2), np.zeros(2), np.eye(2))), 12)
        0.159154943092
    """
    return fnp.exp(logpdf(x, mean, cov, allow_singular))


def entropy(mean: Any = None, cov: Any = 1) -> Any:
    """The differential entropy ``(d log(2 pi e) + log det cov) / 2``; ``cov`` a matrix, a
    vector (the diagonal) or a scalar (times the identity of ``mean``'s size).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import multivariate_normal
        >>> round(float(multivariate_normal.entropy(np.zeros(2), np.eye(2))), 12)
        2.837877066409
    """
    import math
    (cov,) = promote("multivariate_normal.entropy", cov)
    if cov.ndim == 2:
        d = cov.shape[0]
        logdet = fnp.linalg.slogdet(cov)[1]
    else:
        d = (1 if mean is None else int(numpy.size(fnp.asarray(mean)))) if cov.ndim == 0 \
            else cov.shape[0]
        logdet = d * fnp.log(cov) if cov.ndim == 0 else fnp.sum(fnp.log(cov))
    return 0.5 * (d * (1.0 + math.log(2.0 * math.pi)) + logdet)
