"""Hypothesis tests and regression of ``scipy.stats`` (JAX has none): ``ttest_1samp``,
``ttest_ind`` (Student's and Welch's), ``ttest_rel``, ``spearmanr`` and ``linregress``.

Statistics and p-values are SciPy's formulas on funcgrad operations: differentiable (except
through ranks), under ``jit`` and ``vmap``. The t tests' results carry SciPy's
``confidence_interval(confidence_level=0.95)`` (through :func:`funcgrad.scipy.stats.t.ppf`).

Example:
    >>> import numpy as np
    >>> from funcgrad.scipy.stats import ttest_1samp
    >>> res = ttest_1samp(np.array([5.1, 4.9, 5.6, 5.8, 6.0]), 5.0)
    >>> round(float(res.statistic), 10), round(float(res.pvalue), 10), float(res.df)
    (2.3040737315, 0.0825682967, 4.0)
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy

import funcgrad.numpy as fnp
from funcgrad import tree_util
from funcgrad.avals import get_aval
from funcgrad.backend import device_put, get_default_device
from funcgrad.core import Tracer
from funcgrad.ops.elementwise import stop_gradient
from funcgrad.scipy import _quiet as _q
from funcgrad.scipy.special import ndtr as _ndtr
from funcgrad.scipy.stats import chi2 as _chi2
from funcgrad.scipy.stats import f as _f
from funcgrad.scipy.stats import t as _t
from funcgrad.scipy.stats._descriptive import (
    _ALTERNATIVES,
    ConfidenceInterval,
    _check_nan_policy,
    _float_array,
    _norm_axis,
    pearsonr,
    rankdata,
)

__all__ = ["TtestResult", "ConfidenceInterval", "ttest_1samp", "ttest_ind", "ttest_rel",
           "SignificanceResult", "spearmanr", "kendalltau", "LinregressResult", "linregress",
           "pointbiserialr"]


class SignificanceResult(NamedTuple):
    """A test statistic and its p-value (SciPy's ``SignificanceResult``)."""

    statistic: Any
    pvalue: Any


def _pvalue(stat: Any, df: Any, alternative: str) -> Any:
    if alternative == "less":
        return _t.cdf(stat, df)
    if alternative == "greater":
        return _t.sf(stat, df)
    return 2.0 * _t.sf(fnp.abs(stat), df)


def _check_alternative(name: str, alternative: str) -> None:
    if alternative not in _ALTERNATIVES:
        raise ValueError(f"{name}: alternative must be one of {_ALTERNATIVES}, got "
                         f"{alternative!r}")


@tree_util.register_pytree_node_class
class TtestResult:
    """The result of a t test, as SciPy's: unpacks as ``(statistic, pvalue)``; ``df`` the
    degrees of freedom; :meth:`confidence_interval` the interval of the estimated quantity
    (the mean, the difference of means, the mean difference). A pytree (through ``jit``)."""

    def __init__(self, statistic: Any, pvalue: Any, df: Any, estimate: Any,
                 standard_error: Any, alternative: str) -> None:
        self.statistic, self.pvalue, self.df = statistic, pvalue, df
        self._estimate, self._standard_error = estimate, standard_error
        self._alternative = alternative

    def __iter__(self) -> Any:
        return iter((self.statistic, self.pvalue))

    def __len__(self) -> int:
        return 2

    def __getitem__(self, i: int) -> Any:
        return (self.statistic, self.pvalue)[i]

    def __repr__(self) -> str:
        return (f"TtestResult(statistic={self.statistic!r}, pvalue={self.pvalue!r}, "
                f"df={self.df!r})")

    def tree_flatten(self) -> tuple[tuple, str]:
        return ((self.statistic, self.pvalue, self.df, self._estimate, self._standard_error),
                self._alternative)

    @classmethod
    def tree_unflatten(cls, aux: str, children: tuple) -> TtestResult:
        return cls(*children, alternative=aux)

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        """The ``confidence_level`` interval of the estimate: two-sided, or one-sided (down
        to ``-inf`` / up to ``inf``) for the alternatives ``"less"`` / ``"greater"``.

        Example:
            >>> import numpy as np
            >>> from funcgrad.scipy.stats import ttest_1samp
            >>> ci = ttest_1samp(np.array([1.0, 2.0, 3.0, 4.0]), 0.0).confidence_interval()
            >>> round(float(ci.low), 10), round(float(ci.high), 10)
            (0.4457397432, 4.5542602568)
        """
        cl = float(confidence_level)
        if not 0.0 < cl < 1.0:
            raise ValueError(f"confidence_level must be a number between 0 and 1, got "
                             f"{confidence_level!r}")
        est, se, df = self._estimate, self._standard_error, self.df
        if self._alternative == "less":
            low = fnp.full_like(est, -numpy.inf)
            high = est + _t.ppf(cl, df) * se
        elif self._alternative == "greater":
            low = est - _t.ppf(cl, df) * se
            high = fnp.full_like(est, numpy.inf)
        else:
            crit = _t.ppf(0.5 + cl / 2.0, df) * se
            low, high = est - crit, est + crit
        return ConfidenceInterval(low, high)


def _prepared(name: str, a: Any, axis: Any, nan_policy: str) -> tuple[Any, int]:
    """``a`` as floats with the test's axis last (flattened for ``axis=None``)."""
    a = _float_array(a)
    _check_nan_policy(name, a, nan_policy)
    if axis is None or a.ndim == 0:
        return fnp.reshape(a, (-1,)), -1
    return fnp.moveaxis(a, _norm_axis(name, axis, a.ndim), -1), -1


def _mean_var_n(a: Any, omit: bool) -> tuple[Any, Any, Any]:
    """Mean, variance (ddof 1) and count along the last axis; ``omit``: nans left out."""
    if omit:
        n = fnp.sum(~fnp.isnan(a), axis=-1).astype(a.dtype)
        return fnp.nanmean(a, axis=-1), fnp.nanvar(a, axis=-1, ddof=1), n
    n = a.shape[-1]
    # (the count on a's device: made from Python data it would go to the default device)
    return (fnp.mean(a, axis=-1), fnp.var(a, axis=-1, ddof=1),
            fnp.full_like(a, n, shape=a.shape[:-1]))


def _keep(v: Any, axis: Any, ndim: int, keepdims: bool) -> Any:
    if not keepdims:
        return v
    if axis is None:
        return fnp.reshape(v, (1,) * ndim)
    return fnp.expand_dims(v, _norm_axis("keepdims", axis, ndim))


def _finish(diff: Any, se: Any, df: Any, est: Any, alternative: str, axis: Any, ndim: int,
            keepdims: bool) -> TtestResult:
    """``t = diff / se``, its p-value, and the estimate whose interval the result gives."""
    stat = _q.div(diff, se)  # a zero standard error: +-inf (or nan for 0 / 0), quietly
    # A slice with a nan (nan_policy="propagate") has every output nan, df too (SciPy's).
    df = fnp.where(fnp.isnan(diff) | fnp.isnan(se), numpy.nan, df)
    p = _pvalue(stat, df, alternative).astype(stat.dtype)
    k = [_keep(v, axis, ndim, keepdims) for v in (stat, p, df, est, se)]
    return TtestResult(*k, alternative=alternative)


def ttest_1samp(a: Any, popmean: Any, axis: Any = 0, nan_policy: str = "propagate",
                alternative: str = "two-sided", *, keepdims: bool = False) -> TtestResult:
    """One-sample t test of ``mean(a) == popmean`` along ``axis``, as ``scipy.stats``:
    ``t = (mean - popmean) / (s / sqrt(n))`` with ``n - 1`` degrees of freedom;
    ``nan_policy="omit"`` leaves nans out. Differentiable in ``a`` and ``popmean``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import ttest_1samp
        >>> t, p = ttest_1samp(np.array([1.0, 2.0, 3.0, 4.0]), 1.0)
        >>> round(float(t), 10), round(float(p), 10)
        (2.3237900077, 0.1027280789)
    """
    _check_alternative("ttest_1samp", alternative)
    nd = fnp.ndim(a)
    x, _ = _prepared("ttest_1samp", a, axis, nan_policy)
    mean, var, n = _mean_var_n(x, nan_policy == "omit")
    pop = fnp.asarray(popmean)
    if type(popmean) in (int, float):  # a Python number goes where the sample is
        pop = fnp.full_like(x, popmean, shape=())
    if axis is not None and pop.ndim == nd and nd > 0:
        pop = fnp.squeeze(pop, _norm_axis("ttest_1samp", axis, nd))  # SciPy's keepdims form
    se = fnp.sqrt(var / n)
    d = mean - pop.astype(mean.dtype)
    # The interval is of the mean itself (SciPy's estimate), not of the difference.
    mean = fnp.broadcast_to(mean, d.shape)
    return _finish(d, se, fnp.broadcast_to(n - 1.0, d.shape), mean, alternative, axis, nd,
                   keepdims)


def ttest_rel(a: Any, b: Any, axis: Any = 0, nan_policy: str = "propagate",
              alternative: str = "two-sided", *, keepdims: bool = False) -> TtestResult:
    """Paired t test: :func:`ttest_1samp` of ``a - b`` against 0 (``omit`` leaves out the
    pairs with a nan).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import ttest_rel
        >>> t, p = ttest_rel(np.array([5.0, 6.0, 7.0, 9.0]), np.array([4.0, 6.5, 5.0, 7.0]))
        >>> round(float(t), 10), round(float(p), 10)
        (1.9044331628, 0.1529619725)
    """
    _check_alternative("ttest_rel", alternative)
    a, b = _float_array(a), _float_array(b)
    if fnp.shape(a) != fnp.shape(b):
        raise ValueError(f"ttest_rel: a and b must have the same shape, got {fnp.shape(a)} "
                         f"and {fnp.shape(b)}")
    return ttest_1samp(a - b, 0.0, axis, nan_policy, alternative, keepdims=keepdims)


def ttest_ind(a: Any, b: Any, *, axis: Any = 0, equal_var: bool = True,
              nan_policy: str = "propagate", alternative: str = "two-sided", trim: float = 0,
              method: Any = None, keepdims: bool = False) -> TtestResult:
    """Two-sample t test of equal means along ``axis``: Student's (pooled variance,
    ``n1 + n2 - 2`` degrees of freedom) or, with ``equal_var=False``, Welch's
    (Welch-Satterthwaite degrees of freedom). The other axes broadcast. SciPy's resampling
    (``method=``) and trimmed (Yuen, ``trim=``) variants are not provided: both must keep
    their defaults.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import ttest_ind
        >>> a, b = np.array([1.0, 2.0, 3.0, 4.0]), np.array([3.0, 5.0, 6.0, 8.0, 9.0])
        >>> res = ttest_ind(a, b, equal_var=False)
        >>> round(float(res.statistic), 10), round(float(res.pvalue), 10), round(float(res.df), 6)
        (-2.9655408526, 0.0235509238, 6.330718)
    """
    _check_alternative("ttest_ind", alternative)
    for what, v, default in (("method", method, None), ("trim", trim, 0)):
        if not (v is default or v == default):
            raise ValueError(f"ttest_ind: {what}={v!r} (SciPy's resampling / trimmed "
                             f"tests) is not available; leave {what} at {default!r}")
    nd = max(fnp.ndim(a), fnp.ndim(b))
    x, _ = _prepared("ttest_ind", a, axis, nan_policy)
    y, _ = _prepared("ttest_ind", b, axis, nan_policy)
    omit = nan_policy == "omit"
    m1, v1, n1 = _mean_var_n(x, omit)
    m2, v2, n2 = _mean_var_n(y, omit)
    dt = numpy.result_type(m1.dtype, m2.dtype)
    if equal_var:
        df = n1 + n2 - 2.0
        svar = ((n1 - 1.0) * v1 + (n2 - 1.0) * v2) / df
        se = fnp.sqrt(svar * (1.0 / n1 + 1.0 / n2))
    else:
        vn1, vn2 = v1 / n1, v2 / n2
        df = _q.div((vn1 + vn2) ** 2, vn1 ** 2 / (n1 - 1.0) + vn2 ** 2 / (n2 - 1.0))
        df = fnp.where(fnp.isnan(df), 1.0, df)  # both variances 0: any df (SciPy's 1)
        se = fnp.sqrt(vn1 + vn2)
    est = (m1 - m2).astype(dt)
    df = fnp.broadcast_to(df, est.shape).astype(dt)
    return _finish(est, se.astype(dt), df, est, alternative, axis, nd, keepdims)


def spearmanr(a: Any, b: Any = None, axis: Any = 0, nan_policy: str = "propagate",
              alternative: str = "two-sided") -> SignificanceResult:
    """Spearman's rank correlation: Pearson's correlation of the ranks (ties averaged), with
    the p-value of SciPy (``t = r sqrt((n - 2) / ((1 + r)(1 - r)))``, ``n - 2`` degrees of
    freedom). Two 1-D samples give one coefficient; a 2-D ``a`` (variables along the other
    axis than ``axis``, and ``b``'s appended) gives the matrix, or one coefficient for two
    variables. ``nan_policy`` ``"propagate"`` (nan results) or ``"raise"``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import spearmanr
        >>> res = spearmanr(np.array([1, 2, 3, 4, 5]), np.array([5, 6, 7, 8, 7]))
        >>> round(float(res.statistic), 10), round(float(res.pvalue), 10)
        (0.8207826817, 0.0885870053)
    """
    _check_alternative("spearmanr", alternative)
    if nan_policy == "omit":
        raise ValueError("spearmanr: nan_policy='omit' is not available (it drops whole "
                         "observations); use 'propagate' or 'raise'")
    if axis is None:
        raise ValueError("spearmanr: axis=None is not available; pass 0 or 1")
    a = _float_array(a)
    _check_nan_policy("spearmanr", a, nan_policy)
    if a.ndim > 2 or (b is not None and fnp.ndim(b) > 2):
        raise ValueError("spearmanr: only 1-D and 2-D inputs are supported (as SciPy)")
    ax = int(axis)
    if ax not in (0, 1, -1, -2):
        raise ValueError(f"spearmanr: axis must be 0 or 1, got {axis!r}")

    def columns(v: Any) -> Any:  # observations along rows, variables along columns
        if v.ndim == 1:
            return v[:, None]
        return v if ax in (0, -2) else v.T

    cols = columns(a)
    if b is not None:
        bb = _float_array(b)
        _check_nan_policy("spearmanr", bb, nan_policy)
        cols = fnp.concatenate([cols, columns(bb).astype(cols.dtype)], axis=1)
    n, k = cols.shape
    if k < 2:
        raise ValueError("spearmanr: needs at least two variables (a 1-D a and b, or a 2-D a)")
    if n < 2:
        raise ValueError("spearmanr: needs at least two observations")
    ranks = rankdata(cols, axis=0).astype(cols.dtype)
    nan_col = fnp.any(fnp.isnan(cols), axis=0)
    ranks = fnp.where(nan_col[None, :], numpy.nan, ranks)
    dev = ranks - fnp.mean(ranks, axis=0, keepdims=True)
    cov = dev.T @ dev
    sd = fnp.sqrt(fnp.diagonal(cov))
    rho = fnp.clip(_q.div(cov, sd[:, None] * sd[None, :]), -1.0, 1.0)
    dof = n - 2.0
    tstat = rho * fnp.sqrt(fnp.clip(_q.div(dof, (rho + 1.0) * (1.0 - rho)), 0.0, None))
    p = _pvalue(tstat, dof, alternative)
    if k == 2:
        return SignificanceResult(rho[0, 1], p[0, 1])
    return SignificanceResult(rho, p)


@tree_util.register_pytree_node_class
class LinregressResult:
    """The result of :func:`linregress`, as SciPy's: unpacks as ``(slope, intercept, rvalue,
    pvalue, stderr)``; ``intercept_stderr`` is an attribute only. A pytree."""

    _fields = ("slope", "intercept", "rvalue", "pvalue", "stderr")

    def __init__(self, slope: Any, intercept: Any, rvalue: Any, pvalue: Any, stderr: Any,
                 intercept_stderr: Any) -> None:
        self.slope, self.intercept, self.rvalue = slope, intercept, rvalue
        self.pvalue, self.stderr, self.intercept_stderr = pvalue, stderr, intercept_stderr

    def _five(self) -> tuple:
        return (self.slope, self.intercept, self.rvalue, self.pvalue, self.stderr)

    def __iter__(self) -> Any:
        return iter(self._five())

    def __len__(self) -> int:
        return 5

    def __getitem__(self, i: int) -> Any:
        return self._five()[i]

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={getattr(self, k)!r}" for k in
                          (*self._fields, "intercept_stderr"))
        return f"LinregressResult({inner})"

    def tree_flatten(self) -> tuple[tuple, None]:
        return (*self._five(), self.intercept_stderr), None

    @classmethod
    def tree_unflatten(cls, aux: None, children: tuple) -> LinregressResult:
        return cls(*children)


def linregress(x: Any, y: Any, alternative: str = "two-sided", *, axis: Any = 0,
               nan_policy: str = "propagate", keepdims: bool = False) -> LinregressResult:
    """Least-squares line ``y = slope x + intercept`` along ``axis`` (other axes broadcast)
    with the correlation ``rvalue``, the p-value of ``slope == 0`` (t test, ``n - 2`` degrees
    of freedom) and the standard errors of slope and intercept, as ``scipy.stats.linregress``
    (SciPy 1.17's signature); ``nan_policy="omit"`` leaves out the pairs with a nan.
    Differentiable in ``x`` and ``y``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import linregress
        >>> res = linregress(np.array([0.0, 1.0, 2.0, 3.0]), np.array([1.0, 3.2, 4.9, 7.1]))
        >>> round(float(res.slope), 10), round(float(res.intercept), 10)
        (2.0, 1.05)
    """
    _check_alternative("linregress", alternative)
    x, y = _float_array(x), _float_array(y)
    _check_nan_policy("linregress", x, nan_policy)
    _check_nan_policy("linregress", y, nan_policy)
    nd = max(x.ndim, y.ndim, 1)
    try:
        shape = numpy.broadcast_shapes(x.shape, y.shape)
    except ValueError:
        raise ValueError(f"linregress: x and y must be broadcastable, got shapes {x.shape} "
                         f"and {y.shape}") from None
    dt = numpy.result_type(x.dtype, y.dtype)
    x, y = (fnp.broadcast_to(v, shape).astype(dt) for v in (x, y))
    if axis is None:
        x, y = fnp.reshape(x, (-1,)), fnp.reshape(y, (-1,))
    else:
        ax = _norm_axis("linregress", axis, max(len(shape), 1))
        x, y = fnp.moveaxis(fnp.atleast_1d(x), ax, -1), fnp.moveaxis(fnp.atleast_1d(y), ax, -1)
    n_all = x.shape[-1]
    if n_all < 2:
        raise ValueError("linregress: needs at least two points")
    if not isinstance(x, Tracer) and nan_policy != "omit" and \
            bool(fnp.any(fnp.all(x == x[..., :1], axis=-1))):
        raise ValueError("Cannot calculate a linear regression if all x values are identical")
    if nan_policy == "omit":
        keep = ~(fnp.isnan(x) | fnp.isnan(y))
        w = keep.astype(dt)
        x, y = fnp.where(keep, x, 0.0), fnp.where(keep, y, 0.0)
        n = fnp.sum(w, axis=-1)
    else:
        w = None
        n = fnp.full_like(x, float(n_all), dtype=dt, shape=x.shape[:-1])

    def mean(v: Any) -> Any:
        return fnp.sum(v if w is None else v * w, axis=-1) / n

    xmean, ymean = mean(x), mean(y)
    dx, dy = x - xmean[..., None], y - ymean[..., None]
    ssxm, ssym, ssxym = mean(dx * dx), mean(dy * dy), mean(dx * dy)
    r_den = fnp.sqrt(ssxm * ssym)
    # A flat x or y: r is nan if the covariance is 0 too, else 0 (SciPy's).
    r = fnp.where(r_den == 0.0, fnp.where(ssxym == 0.0, numpy.nan, 0.0),
                  fnp.clip(_q.div(ssxym, fnp.where(r_den == 0.0, 1.0, r_den)), -1.0, 1.0))
    slope = _q.div(ssxym, ssxm)
    intercept = ymean - slope * xmean
    df = n - 2.0
    tiny = 1.0e-20
    two = n == 2.0
    df_s = fnp.where(two, 1.0, df)
    tstat = r * fnp.sqrt(df_s / ((1.0 - r + tiny) * (1.0 + r + tiny)))
    p = _pvalue(tstat, df_s, alternative).astype(dt)
    stderr = fnp.sqrt(fnp.maximum(1.0 - r ** 2, 0.0) * _q.div(ssym, ssxm) / df_s)
    # Two points: an exact line, p-value 1 for a flat one and 0 otherwise (SciPy's).
    p = fnp.where(two, fnp.where(ssym == 0.0, 1.0, 0.0), p)
    stderr = fnp.where(two, 0.0, stderr)
    istderr = stderr * fnp.sqrt(ssxm + xmean ** 2)
    out = [slope, intercept, r, p, stderr, istderr]
    if nan_policy == "propagate":
        bad = fnp.isnan(xmean) | fnp.isnan(ymean)
        out = [fnp.where(bad, numpy.nan, v) for v in out]
    return LinregressResult(*(_keep(v.astype(dt), axis, nd, keepdims) for v in out))


def _mahonian_cdf(n: int) -> numpy.ndarray:
    """P(D <= d) for the number D of discordant pairs of a random permutation of ``n``
    (inversions: the Mahonian numbers / n!), d = 0 .. n(n-1)/2, built by the recurrence
    that inserts element k into a permutation of k - 1 (0 .. k-1 new inversions)."""
    counts = numpy.ones(1)
    for k in range(2, n + 1):
        new = numpy.zeros(len(counts) + k - 1)
        for j in range(k):
            new[j:j + len(counts)] += counts
        counts = new / k  # divided as we go: probabilities, no factorial overflow
    return numpy.cumsum(counts)


def kendalltau(x: Any, y: Any, *, nan_policy: str = "propagate", method: str = "auto",
               variant: str = "b", alternative: str = "two-sided") -> SignificanceResult:
    """Kendall's tau (``variant`` ``"b"``, tie-adjusted, or ``"c"``) of two 1-D samples and
    its p-value, as ``scipy.stats.kendalltau``: ``method="exact"`` (the permutation
    distribution of the discordant pairs; SciPy's choice under ``"auto"`` without ties and
    for ``n <= 33``) or ``"asymptotic"`` (normal, with SciPy's tie-corrected variance).
    Pairs are compared all at once (O(n^2) memory). Zero derivative (a count of pairs).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import kendalltau
        >>> res = kendalltau(np.array([12, 2, 1, 12, 2]), np.array([1, 4, 7, 1, 0]))
        >>> round(float(res.statistic), 12), round(float(res.pvalue), 12)
        (-0.471404520791, 0.282745459933)
    """
    _check_alternative("kendalltau", alternative)
    if variant not in ("b", "c"):
        raise ValueError(f"kendalltau: variant must be 'b' or 'c', got {variant!r}")
    if method not in ("auto", "exact", "asymptotic"):
        raise ValueError(f"kendalltau: method must be 'auto', 'exact' or 'asymptotic', got "
                         f"{method!r}")
    if nan_policy == "omit":
        raise ValueError("kendalltau: nan_policy='omit' is not available; use 'propagate' or "
                         "'raise'")
    x, y = _float_array(x), _float_array(y)
    _check_nan_policy("kendalltau", x, nan_policy)
    _check_nan_policy("kendalltau", y, nan_policy)
    x, y = fnp.reshape(x, (-1,)), fnp.reshape(y, (-1,))
    if x.shape != y.shape:
        raise ValueError(f"kendalltau: all inputs must be of the same size, found x-size "
                         f"{x.shape[0]} and y-size {y.shape[0]}")
    n = x.shape[0]
    if n < 2:
        raise ValueError("kendalltau: needs at least two observations")
    dt = numpy.result_type(x.dtype, y.dtype)
    x, y = stop_gradient(x.astype(dt)), stop_gradient(y.astype(dt))
    sx = fnp.sign(x[None, :] - x[:, None])
    sy = fnp.sign(y[None, :] - y[:, None])
    prod = sx * sy
    up = fnp.triu(fnp.ones_like(prod), 1)
    con = fnp.sum(up * (prod > 0), axis=None)
    dis = fnp.sum(up * (prod < 0), axis=None)
    # Tie groups through each element's count of equals: sum over groups of t(t-1) is the
    # sum over elements of (count - 1), and so on for the higher tie moments.
    cx = fnp.sum(x[None, :] == x[:, None], axis=1).astype(dt)
    cy = fnp.sum(y[None, :] == y[:, None], axis=1).astype(dt)
    xtie = 0.5 * fnp.sum(cx - 1.0)
    ytie = 0.5 * fnp.sum(cy - 1.0)
    tot = n * (n - 1) / 2.0
    cmd = con - dis
    if variant == "b":
        tau = cmd / fnp.sqrt((tot - xtie) * (tot - ytie))
    else:
        m = fnp.minimum(fnp.sum(1.0 / cx), fnp.sum(1.0 / cy))  # distinct values
        tau = 2.0 * cmd / (n * n * (m - 1.0) / m)
    tau = fnp.clip(tau, -1.0, 1.0)
    nan = (xtie == tot) | (ytie == tot) | fnp.any(fnp.isnan(x)) | fnp.any(fnp.isnan(y))
    tau = fnp.where(nan, numpy.nan, tau)
    ties = (xtie > 0) | (ytie > 0)
    if method == "exact" and not isinstance(ties, Tracer) and bool(ties):
        raise ValueError("kendalltau: ties found, exact method cannot be used.")
    # Asymptotic: normal with SciPy's tie-corrected variance of con - dis.
    x0 = fnp.sum((cx - 1.0) * (cx - 2.0))
    y0 = fnp.sum((cy - 1.0) * (cy - 2.0))
    x1 = fnp.sum((cx - 1.0) * (2.0 * cx + 5.0))
    y1 = fnp.sum((cy - 1.0) * (2.0 * cy + 5.0))
    var = ((n * (n - 1) * (2.0 * n + 5) - x1 - y1) / 18.0
           + 2.0 * xtie * ytie / (n * (n - 1))
           + (x0 * y0 / (9.0 * n * (n - 1) * (n - 2)) if n > 2 else 0.0))
    z = cmd / fnp.sqrt(var)
    from_norm = {"less": _ndtr(z), "greater": _ndtr(-z),
                 "two-sided": 2.0 * _ndtr(-fnp.abs(z))}[alternative]
    use_exact = method == "exact" or (method == "auto" and n <= 33)
    p = from_norm
    if use_exact and n > 2:
        # The host table goes where the data is (a device refuses host operands).
        cdf = device_put(_mahonian_cdf(n).astype(dt), get_aval(x).device or
                         get_default_device())
        top = int(tot)

        def p_le(d: Any) -> Any:  # P(D <= d), d an integer count
            return fnp.take(cdf, fnp.clip(d, 0, top).astype(numpy.int32))

        dis_i = fnp.round(dis)
        exact = {"greater": p_le(dis_i), "less": p_le(top - dis_i),
                 "two-sided": fnp.minimum(1.0, 2.0 * p_le(fnp.minimum(dis_i, top - dis_i)))
                 }[alternative]
        p = fnp.where(ties, from_norm, exact) if method == "auto" else exact
    p = fnp.where(nan, numpy.nan, p).astype(dt)
    return SignificanceResult(tau.astype(dt), p)


class Power_divergenceResult(NamedTuple):  # noqa: N801 (SciPy's name)
    """``(statistic, pvalue)`` of :func:`chisquare` (SciPy's ``Power_divergenceResult``)."""

    statistic: Any
    pvalue: Any


def chisquare(f_obs: Any, f_exp: Any = None, ddof: int = 0, axis: Any = 0, *,
              sum_check: bool = True) -> Power_divergenceResult:
    """Pearson's chi-squared test that the counts ``f_obs`` follow ``f_exp`` (equal
    frequencies by default), as ``scipy.stats.chisquare``: ``sum((o - e)**2 / e)`` against
    ``chi2(k - 1 - ddof)``. With ``sum_check``, concrete totals of ``f_obs`` and ``f_exp``
    must agree to ``1e-8`` relatively (SciPy's ``ValueError``). Differentiable.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import chisquare
        >>> res = chisquare(np.array([16.0, 18.0, 16.0, 14.0, 12.0, 12.0]))
        >>> round(float(res.statistic), 12), round(float(res.pvalue), 12)
        (2.0, 0.849145036085)
    """
    obs = _float_array(f_obs)
    if axis is None:
        obs, axis = fnp.reshape(obs, (-1,)), 0
    k = obs.shape[axis]
    if f_exp is None:
        exp = fnp.mean(obs, axis=axis, keepdims=True)
    else:
        exp = _float_array(f_exp)
        if axis is None:
            exp = fnp.reshape(exp, (-1,))
        exp = fnp.broadcast_to(exp, numpy.broadcast_shapes(exp.shape, obs.shape))
        if sum_check and not isinstance(obs, Tracer) and not isinstance(exp, Tracer):
            so = numpy.asarray(fnp.sum(obs, axis=axis).tolist())
            se = numpy.asarray(fnp.sum(exp, axis=axis).tolist())
            rel = numpy.abs(so - se) / numpy.minimum(so, se)
            if numpy.any(rel > numpy.sqrt(numpy.finfo(numpy.float64).eps)):
                raise ValueError("For each axis slice, the sum of the observed frequencies "
                                 "must agree with the sum of the expected frequencies to a "
                                 "relative tolerance of 1.4901161193847656e-08, but the "
                                 f"percent differences are:\n{rel}")
    stat = fnp.sum((obs - exp) ** 2 / exp, axis=axis)
    df = k - 1 - ddof
    return Power_divergenceResult(stat, _chi2.sf(stat, df))


class F_onewayResult(NamedTuple):  # noqa: N801 (SciPy's name)
    """``(statistic, pvalue)`` of :func:`f_oneway`."""

    statistic: Any
    pvalue: Any


def f_oneway(*samples: Any, axis: int = 0) -> F_onewayResult:
    """One-way ANOVA of two or more samples along ``axis``, as ``scipy.stats.f_oneway``: the
    ratio of the between-group to the within-group mean squares against
    ``f(k - 1, N - k)``. Differentiable.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import f_oneway
        >>> res = f_oneway(np.array([1.0, 2.0, 3.0]), np.array([2.0, 4.0, 6.0]))
        >>> round(float(res.statistic), 12), round(float(res.pvalue), 12)
        (2.4, 0.196261178149)
    """
    if len(samples) < 2:
        raise TypeError(f"f_oneway: at least two inputs are required; got {len(samples)}.")
    groups = [fnp.moveaxis(_float_array(g), axis, -1) for g in samples]
    sizes = [g.shape[-1] for g in groups]
    total = sum(sizes)
    k = len(groups)
    grand = sum(fnp.sum(g, axis=-1) for g in groups) / total
    ss_between = sum(n * (fnp.mean(g, axis=-1) - grand) ** 2 for g, n in zip(groups, sizes))
    ss_within = sum(fnp.sum((g - fnp.mean(g, axis=-1, keepdims=True)) ** 2, axis=-1)
                    for g in groups)
    dfb, dfw = k - 1, total - k
    stat = _q.div(ss_between / dfb, ss_within / dfw)
    return F_onewayResult(stat, _f.sf(stat, dfb, dfw))


def pointbiserialr(x: Any, y: Any, *, axis: Any = 0) -> SignificanceResult:
    """The point-biserial correlation of a binary ``x`` with ``y`` and its p-value, as
    ``scipy.stats.pointbiserialr`` (Pearson's correlation of the two). Differentiable in
    ``y``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import pointbiserialr
        >>> res = pointbiserialr(np.array([0, 0, 1, 1, 1]), np.array([1.0, 2.0, 4.0, 5.0, 6.0]))
        >>> round(float(res.statistic), 6), round(float(res.pvalue), 6)
        (0.924473, 0.024632)
    """
    r = pearsonr(fnp.asarray(x).astype(numpy.float64), y, axis=axis)
    return SignificanceResult(r.statistic, r.pvalue)
