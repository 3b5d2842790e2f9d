"""The multinomial distribution, as ``scipy.stats.multinomial`` (``n`` trials, category
probabilities ``p`` along the last axis).

``p`` is used as given, as in ``jax.scipy.stats.multinomial`` (so the gradient with respect to
every entry of ``p`` is ``x / p``); SciPy replaces its last entry by ``1 - sum(p[:-1])``, which
only differs when ``p`` does not sum to 1.

Example:
    >>> import numpy as np
    >>> from funcgrad.scipy.stats import multinomial
    >>> round(float(multinomial.pmf(np.array([1, 1]), 2, np.array([0.5, 0.5]))), 12)
    0.5
"""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.scipy import special as _sp
from funcgrad.scipy.stats._util import is_integer, promote

__all__ = ["logpmf", "pmf", "mean", "cov"]


def logpmf(x: Any, n: Any, p: Any) -> Any:
    """``gammaln(n + 1) + sum(x log p - gammaln(x + 1))`` over the last axis, ``-inf`` unless
    the counts ``x`` are non-negative integers summing to ``n``; nan for a negative or
    non-integer ``n`` or a ``p`` outside ``[0, 1]``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import multinomial
        >>> round(float(multinomial.logpmf(np.array([2, 1, 0]), 3, np.array([0.2, 0.3, 0.5]))), 12)
        -3.324236340526
    """
    x, n, p = promote("multinomial.logpmf", x, n, p)
    if x.ndim == 0 or p.ndim == 0:
        raise ValueError("multinomial.logpmf: x and p need a last axis of categories, got "
                         f"shapes {x.shape} and {p.shape}")
    counts_ok = fnp.all(is_integer(x) & (x >= 0), axis=-1) & (fnp.sum(x, axis=-1) == n)
    xs = fnp.where(x >= 0, x, 0.0)
    out = _sp.gammaln(n + 1.0) + fnp.sum(_sp.xlogy(xs, p) - _sp.gammaln(xs + 1.0), axis=-1)
    out = fnp.where(counts_ok, out, -numpy.inf)
    params_ok = (n >= 0) & is_integer(n) & fnp.all((p >= 0) & (p <= 1), axis=-1)
    return fnp.where(params_ok, out, numpy.nan)


def pmf(x: Any, n: Any, p: Any) -> Any:
    """Probability mass function.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import multinomial
        >>> round(float(multinomial.pmf(np.array([2, 0]), 2, np.array([0.3, 0.7]))), 12)
        0.09
    """
    return fnp.exp(logpmf(x, n, p))


def mean(n: Any, p: Any) -> Any:
    """The mean counts ``n p`` (categories on the last axis).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import multinomial
        >>> multinomial.mean(4, np.array([0.25, 0.75]))
        array([1., 3.])
    """
    n, p = promote("multinomial.mean", n, p)
    return n[..., None] * p


def cov(n: Any, p: Any) -> Any:
    """The covariance of the counts ``n (diag(p) - p p^T)``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import multinomial
        >>> multinomial.cov(4, np.array([0.25, 0.75]))
        array([[ 0.75, -0.75],
               [-0.75,  0.75]])
    """
    n, p = promote("multinomial.cov", n, p)
    outer = p[..., :, None] * p[..., None, :]
    eye = fnp.eye(p.shape[-1], dtype=p.dtype)
    return n[..., None, None] * (eye * p[..., None, :] - outer)
