"""The logistic distribution, as ``scipy.stats.logistic``.

Example:
    >>> from funcgrad.scipy.stats import logistic
    >>> float(logistic.cdf(0.0))
    0.5
"""

from __future__ import annotations

from typing import Any

import funcgrad.numpy as fnp
from funcgrad.scipy import _quiet as _q
from funcgrad.scipy import special as _sp
from funcgrad.scipy.stats._util import promote, scale_ok, standardize

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log density ``log_expit(y) + log_expit(-y) - log(scale)``, stable for large ``|y|``.

    Example:
        >>> from funcgrad.scipy.stats import logistic
        >>> round(float(logistic.logpdf(0.0)), 12)
        -1.38629436112
    """
    x, loc, scale = promote("logistic.logpdf", x, loc, scale)
    y = standardize(x, loc, scale)
    return scale_ok(_sp.log_expit(y) + _sp.log_expit(-y) - _q.log(scale), scale)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The logistic density.

    Example:
        >>> from funcgrad.scipy.stats import logistic
        >>> float(logistic.pdf(0.0))
        0.25
    """
    return fnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``expit((x - loc) / scale)``.

    Example:
        >>> from funcgrad.scipy.stats import logistic
        >>> round(float(logistic.cdf(1.0)), 12)
        0.73105857863
    """
    x, loc, scale = promote("logistic.cdf", x, loc, scale)
    return scale_ok(_sp.expit(standardize(x, loc, scale)), scale)


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the CDF.

    Example:
        >>> from funcgrad.scipy.stats import logistic
        >>> float(logistic.logcdf(-1000.0))
        -1000.0
    """
    x, loc, scale = promote("logistic.logcdf", x, loc, scale)
    return scale_ok(_sp.log_expit(standardize(x, loc, scale)), scale)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Survival function.

    Example:
        >>> from funcgrad.scipy.stats import logistic
        >>> round(float(logistic.sf(1.0)), 12)
        0.26894142137
    """
    x, loc, scale = promote("logistic.sf", x, loc, scale)
    return scale_ok(_sp.expit(-standardize(x, loc, scale)), scale)


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the survival function.

    Example:
        >>> from funcgrad.scipy.stats import logistic
        >>> float(logistic.logsf(1000.0))
        -1000.0
    """
    x, loc, scale = promote("logistic.logsf", x, loc, scale)
    return scale_ok(_sp.log_expit(-standardize(x, loc, scale)), scale)


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Quantile function ``loc + scale * logit(q)``.

    Example:
        >>> from funcgrad.scipy.stats import logistic
        >>> round(float(logistic.ppf(0.75)), 12)
        1.098612288668
    """
    q, loc, scale = promote("logistic.ppf", q, loc, scale)
    return scale_ok(loc + scale * _sp.logit(q), scale)


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Inverse survival function ``loc - scale * logit(q)``.

    Example:
        >>> from funcgrad.scipy.stats import logistic
        >>> round(float(logistic.isf(0.25)), 12)
        1.098612288668
    """
    q, loc, scale = promote("logistic.isf", q, loc, scale)
    return scale_ok(loc - scale * _sp.logit(q), scale)
