"""Contingency-table tests of ``scipy.stats``: ``chi2_contingency`` (Pearson's test of
independence with Yates' correction, or any Cressie-Read ``lambda_``) and ``fisher_exact``
(2 x 2: the conditional odds ratio is SciPy's sample one, the p-value exact).

``chi2_contingency`` is a formula (differentiable in the counts, ``jit``-able; the zero
expected-frequency check needs concrete values). ``fisher_exact`` sums hypergeometric
probabilities exactly (Python integers) on the host.

Example:
    >>> import numpy as np
    >>> from funcgrad.scipy.stats import chi2_contingency
    >>> res = chi2_contingency(np.array([[10, 20], [20, 10]]))
    >>> round(float(res.statistic), 6), round(float(res.pvalue), 6), res.dof
    (5.4, 0.020137, 1)
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, NamedTuple

import numpy

import funcgrad.numpy as fnp
from funcgrad.api_devices import device_get
from funcgrad.avals import get_aval
from funcgrad.backend import device_put, get_default_device, is_array
from funcgrad.core import Tracer
from funcgrad.scipy.stats import chi2 as _chi2
from funcgrad.scipy.stats._tests import SignificanceResult

__all__ = ["Chi2ContingencyResult", "chi2_contingency", "fisher_exact", "expected_freq"]


class Chi2ContingencyResult(NamedTuple):
    """``(statistic, pvalue, dof, expected_freq)`` of :func:`chi2_contingency`."""

    statistic: Any
    pvalue: Any
    dof: int
    expected_freq: Any


def expected_freq(observed: Any) -> Any:
    """The expected frequencies under independence: the outer product of the table's margins
    over its total, as ``scipy.stats.contingency.expected_freq``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import expected_freq
        >>> expected_freq(np.array([[10, 10], [20, 20]]))
        array([[10., 10.],
               [20., 20.]])
    """
    o = fnp.asarray(observed).astype(numpy.float64)
    total = fnp.sum(o)
    nd = get_aval(o).ndim
    out = None
    for k in range(nd):
        margin = fnp.sum(o, axis=tuple(a for a in range(nd) if a != k), keepdims=True)
        out = margin if out is None else out * margin
    return out / total ** (nd - 1)


_LAMBDAS = {"pearson": 1.0, "log-likelihood": 0.0, "freeman-tukey": -0.5, "mod-log-likelihood":
            -1.0, "neyman": -2.0, "cressie-read": 2.0 / 3.0}


def _power_divergence(o: Any, e: Any, lam: float) -> Any:
    if lam == 1:
        return fnp.sum((o - e) ** 2 / e)
    if lam == 0:
        return 2.0 * fnp.sum(fnp.where(o == 0, 0.0, o * fnp.log(fnp.where(o == 0, 1.0, o) / e)))
    if lam == -1:
        return 2.0 * fnp.sum(e * fnp.log(e / o))
    return 2.0 * fnp.sum(o * ((o / e) ** lam - 1)) / (lam * (lam + 1))


def chi2_contingency(observed: Any, correction: bool = True, lambda_: Any = None, *,
                     method: Any = None) -> Chi2ContingencyResult:
    """The chi-square test of independence of the variables of a contingency table, as
    ``scipy.stats.chi2_contingency``: ``(statistic, pvalue, dof, expected_freq)``, with
    Yates' continuity correction when ``dof == 1`` (``correction``) and ``lambda_`` a
    Cressie-Read power or name (``"log-likelihood"`` is the G-test).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import chi2_contingency
        >>> chi2_contingency(np.array([[10, 20, 30], [6, 9, 17]])).dof
        2
    """
    if method is not None:
        raise ValueError("chi2_contingency: method= (permutation / Monte Carlo) is not "
                         "provided by funcgrad")
    o = fnp.asarray(observed)
    if not isinstance(o, Tracer) and bool(fnp.any(o < 0)):
        raise ValueError("All values in `observed` must be nonnegative.")
    if get_aval(o).size == 0:
        raise ValueError("No data; `observed` has size 0.")
    o = o.astype(numpy.float64)
    e = expected_freq(o)
    if not isinstance(e, Tracer) and bool(fnp.any(e == 0)):
        where = numpy.argwhere(numpy.asarray(device_get(e)) == 0)[0]
        raise ValueError("The internally computed table of expected frequencies has a zero "
                         f"element at {tuple(int(i) for i in where)}.")
    shape = get_aval(o).shape
    dof = int(numpy.prod(shape)) - sum(shape) + len(shape) - 1
    if dof == 0:
        zero = fnp.zeros((), numpy.float64)
        return Chi2ContingencyResult(zero, zero + 1.0, 0, e)
    if dof == 1 and correction:
        diff = e - o
        o = o + fnp.minimum(0.5, fnp.abs(diff)) * fnp.sign(diff)
    lam = 1.0 if lambda_ is None else _LAMBDAS.get(lambda_, lambda_)
    if isinstance(lam, str):
        raise ValueError(f"invalid string for lambda_: {lambda_!r}")
    stat = _power_divergence(o, e, float(lam))
    return Chi2ContingencyResult(stat, _chi2.sf(stat, dof), dof, e)


def _hypergeom_pmfs(total: int, good: int, draws: int) -> tuple[int, list[Fraction]]:
    """The exact pmf of the hypergeometric count on its support ``lo..hi``."""
    lo, hi = max(0, draws - (total - good)), min(good, draws)
    denom = math.comb(total, draws)
    return lo, [Fraction(math.comb(good, k) * math.comb(total - good, draws - k), denom)
                for k in range(lo, hi + 1)]


def fisher_exact(table: Any, alternative: str | None = None, *, method: Any = None
                 ) -> SignificanceResult:
    """Fisher's exact test on a 2 x 2 contingency table, as ``scipy.stats.fisher_exact``:
    ``statistic`` is the sample odds ratio ``(a d) / (b c)``, the p-value sums the exact
    hypergeometric probabilities (two-sided: of the tables no more likely than the observed
    one). A host computation.

    Example:
        >>> from funcgrad.scipy.stats import fisher_exact
        >>> res = fisher_exact([[8, 2], [1, 5]])
        >>> float(res.statistic), round(float(res.pvalue), 12)
        (20.0, 0.034965034965)
    """
    if method is not None:
        raise ValueError("fisher_exact: method= is not provided by funcgrad")
    alternative = "two-sided" if alternative is None else alternative
    if alternative not in ("two-sided", "less", "greater"):
        raise ValueError("`alternative` should be one of {'two-sided', 'less', 'greater'}")
    if isinstance(table, Tracer):
        raise TypeError("fisher_exact: needs a concrete table; call it outside jit/vmap/grad")
    dev = (get_aval(table).device or get_default_device()) if is_array(table) and not \
        isinstance(table, numpy.ndarray) else get_default_device()
    c = numpy.asarray(device_get(table))
    if c.shape != (2, 2):
        raise ValueError("The input `table` must be of shape (2, 2) (funcgrad provides no "
                         "larger tables).")
    if not numpy.issubdtype(c.dtype, numpy.integer):
        if numpy.any(c != numpy.round(c)):
            raise ValueError("`table` must contain integers.")
        c = c.astype(numpy.int64)
    if numpy.any(c < 0):
        raise ValueError("All values in `table` must be nonnegative.")

    def out(stat: float, p: float) -> SignificanceResult:
        return SignificanceResult(device_put(numpy.float64(stat), dev),
                                  device_put(numpy.float64(p), dev))

    if 0 in c.sum(axis=0) or 0 in c.sum(axis=1):
        return out(numpy.nan, 1.0)
    a, b, cc, d = (int(v) for v in c.ravel())
    odds = a * d / (cc * b) if cc > 0 and b > 0 else numpy.inf
    n1, n2, n = a + b, cc + d, a + cc
    lo, pmf = _hypergeom_pmfs(n1 + n2, n1, n)
    k = a - lo
    if alternative == "less":
        p = sum(pmf[:k + 1])
    elif alternative == "greater":
        p = sum(pmf[k:])
    else:
        # SciPy's tolerance for "no more likely": a relative 1e-14 (its float pmfs)
        cut = pmf[k] * Fraction(1) * (1 + Fraction(1, 10 ** 14))
        p = sum(q for q in pmf if q <= cut)
    return out(odds, min(float(p), 1.0))
