"""The Dirichlet distribution, as ``scipy.stats.dirichlet``.

Example:
    >>> import numpy as np
    >>> from funcgrad.scipy.stats import dirichlet
    >>> round(float(dirichlet.pdf(np.array([0.5, 0.5]), np.array([1.0, 1.0]))), 12)
    1.0
"""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.avals import get_aval
from funcgrad.scipy import special as _sp
from funcgrad.scipy.stats._util import promote

__all__ = ["logpdf", "pdf", "mean", "var", "entropy"]


def logpdf(x: Any, alpha: Any) -> Any:
    """Log density at ``x`` of shape ``(K, ...)`` (points along the first axis, as SciPy; a
    first axis of length ``K - 1`` implies the last component), concentration ``alpha`` of
    shape ``(K,)``. ``-inf`` off the simplex (SciPy raises there); nan unless ``alpha > 0``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import dirichlet
        >>> round(float(dirichlet.logpdf(np.array([0.2, 0.3, 0.5]), np.array([1., 2., 3.]))), 12)
        1.504077396776
    """
    x, alpha = promote("dirichlet.logpdf", x, alpha)
    a_shape, x_shape = get_aval(alpha).shape, get_aval(x).shape
    if len(a_shape) != 1:
        raise ValueError(f"dirichlet.logpdf: alpha must be 1-D (K,), got shape {a_shape}")
    k = a_shape[0]
    if len(x_shape) == 0 or x_shape[0] not in (k, k - 1):
        raise ValueError(
            f"dirichlet.logpdf: x must have shape (K, ...) or (K-1, ...) with K = {k}, got "
            f"shape {x_shape}")
    if x_shape[0] == k - 1:
        x = fnp.concatenate([x, (1.0 - fnp.sum(x, axis=0))[None]], axis=0)
    a = fnp.reshape(alpha, (k,) + (1,) * (len(x_shape) - 1))
    eps = float(numpy.finfo(get_aval(x).dtype).eps)
    on_simplex = fnp.all(x >= 0, axis=0) & (fnp.abs(fnp.sum(x, axis=0) - 1.0) <= 1e3 * eps * k)
    norm = fnp.sum(_sp.gammaln(alpha)) - _sp.gammaln(fnp.sum(alpha))
    out = fnp.sum(_sp.xlogy(a - 1.0, x), axis=0) - norm
    out = fnp.where(on_simplex, out, -numpy.inf)
    return fnp.where(fnp.all(alpha > 0), out, numpy.nan)


def pdf(x: Any, alpha: Any) -> Any:
    """Density.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import dirichlet
        >>> round(float(dirichlet.pdf(np.array([0.2, 0.3, 0.5]), np.array([1., 2., 3.]))), 12)
        4.5
    """
    return fnp.exp(logpdf(x, alpha))


def _alpha(name: str, alpha: Any) -> Any:
    (alpha,) = promote(f"dirichlet.{name}", alpha)
    if alpha.ndim != 1 or alpha.shape[0] < 2:
        raise ValueError(f"dirichlet.{name}: alpha must be 1-D with at least 2 entries, got "
                         f"shape {alpha.shape}")
    return fnp.where(fnp.all(alpha > 0), alpha, numpy.nan)


def mean(alpha: Any) -> Any:
    """The mean ``alpha / sum(alpha)``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import dirichlet
        >>> dirichlet.mean(np.array([1.0, 3.0]))
        array([0.25, 0.75])
    """
    alpha = _alpha("mean", alpha)
    return alpha / fnp.sum(alpha)


def var(alpha: Any) -> Any:
    """The variances ``alpha (a0 - alpha) / (a0**2 (a0 + 1))``, ``a0 = sum(alpha)``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import dirichlet
        >>> dirichlet.var(np.array([1.0, 3.0]))
        array([0.0375, 0.0375])
    """
    alpha = _alpha("var", alpha)
    a0 = fnp.sum(alpha)
    return alpha * (a0 - alpha) / (a0 * a0 * (a0 + 1.0))


def entropy(alpha: Any) -> Any:
    """The differential entropy
    ``log B(alpha) + (a0 - K) digamma(a0) - sum((alpha - 1) digamma(alpha))``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import dirichlet
        >>> round(float(dirichlet.entropy(np.array([1.0, 1.0]))), 12)   # uniform on a segment
        0.0
    """
    alpha = _alpha("entropy", alpha)
    a0 = fnp.sum(alpha)
    k = alpha.shape[0]
    lnb = fnp.sum(_sp.gammaln(alpha)) - _sp.gammaln(a0)
    return lnb + (a0 - k) * _sp.digamma(a0) - fnp.sum((alpha - 1.0) * _sp.digamma(alpha))
