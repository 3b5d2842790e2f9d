"""The chi-squared distribution, as ``scipy.stats.chi2`` (``df``, ``loc``, ``scale``): a gamma
distribution with shape ``df/2`` and scale ``2 scale``.

Example:
    >>> from funcgrad.scipy.stats import chi2
    >>> round(float(chi2.pdf(1.0, 2.0)), 12)
    0.303265329856
"""

from __future__ import annotations

from typing import Any

from funcgrad.scipy.stats import gamma as _gamma
from funcgrad.scipy.stats._util import promote

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]


def _args(name: str, x: Any, df: Any, loc: Any, scale: Any) -> tuple[Any, Any, Any, Any]:
    x, df, loc, scale = promote(name, x, df, loc, scale)
    return x, 0.5 * df, loc, 2.0 * scale


def logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log density.

    Example:
        >>> from funcgrad.scipy.stats import chi2
        >>> round(float(chi2.logpdf(1.0, 2.0)), 12)
        -1.19314718056
    """
    return _gamma.logpdf(*_args("chi2.logpdf", x, df, loc, scale))


def pdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Density.

    Example:
        >>> from funcgrad.scipy.stats import chi2
        >>> round(float(chi2.pdf(2.0, 2.0)), 12)
        0.183939720586
    """
    return _gamma.pdf(*_args("chi2.pdf", x, df, loc, scale))


def cdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Cumulative distribution function ``gammainc(df/2, y/2)``.

    Example:
        >>> from funcgrad.scipy.stats import chi2
        >>> round(float(chi2.cdf(2.0, 2.0)), 12)
        0.632120558829
    """
    return _gamma.cdf(*_args("chi2.cdf", x, df, loc, scale))


def logcdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the CDF.

    Example:
        >>> from funcgrad.scipy.stats import chi2
        >>> round(float(chi2.logcdf(2.0, 2.0)), 12)
        -0.458675145387
    """
    return _gamma.logcdf(*_args("chi2.logcdf", x, df, loc, scale))


def sf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Survival function.

    Example:
        >>> from funcgrad.scipy.stats import chi2
        >>> round(float(chi2.sf(2.0, 2.0)), 12)
        0.367879441171
    """
    return _gamma.sf(*_args("chi2.sf", x, df, loc, scale))


def logsf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the survival function.

    Example:
        >>> from funcgrad.scipy.stats import chi2
        >>> round(float(chi2.logsf(2.0, 2.0)), 12)
        -1.0
    """
    return _gamma.logsf(*_args("chi2.logsf", x, df, loc, scale))


def ppf(q: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Quantile function (inverse of :func:`cdf`).

    Example:
        >>> from funcgrad.scipy.stats import chi2
        >>> round(float(chi2.ppf(0.95, 3.0)), 10)
        7.8147279033
    """
    return _gamma.ppf(*_args("chi2.ppf", q, df, loc, scale))


def isf(q: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Inverse survival function (``chi2.isf(alpha, df)`` is the critical value of a test).

    Example:
        >>> from funcgrad.scipy.stats import chi2
        >>> round(float(chi2.isf(0.05, 3.0)), 10)
        7.8147279033
    """
    return _gamma.isf(*_args("chi2.isf", q, df, loc, scale))
