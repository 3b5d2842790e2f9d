"""Rank and count tests of ``scipy.stats``: ``mannwhitneyu``, ``wilcoxon``, ``ranksums``,
``kruskal``, ``friedmanchisquare`` and ``binomtest``.

These are host computations, as SciPy's: which method applies (exact or asymptotic) depends
on the data (ties, zeros, sizes), the exact null distributions are integer recursions whose
length depends on the sample sizes, and a small tied ``wilcoxon`` sample is an exact
permutation test. A traced argument (under ``jit``, ``vmap`` or ``grad``) raises
``TypeError``. Results are float64 values on the input's device (0-d for one test, arrays for
a batch along the other axes).

Exact distributions are SciPy's: the Mann-Whitney ``U`` counts by Löffler's recurrence (the
same integer, then float, arithmetic), the Wilcoxon signed-rank statistic by convolution, and
``binomtest``'s two-sided p-value by SciPy's search for the other tail.

Example:
    >>> import numpy as np
    >>> from funcgrad.scipy.stats import mannwhitneyu
    >>> res = mannwhitneyu(np.array([19, 22, 16, 29, 24]), np.array([20, 11, 17, 12]))
    >>> float(res.statistic), round(float(res.pvalue), 12)
    (17.0, 0.111111111111)
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy

from funcgrad.api_devices import device_get
from funcgrad.avals import get_aval
from funcgrad.backend import device_put, get_default_device, is_array
from funcgrad.core import Tracer
from funcgrad.scipy.stats import beta as _beta
from funcgrad.scipy.stats import binom as _binom
from funcgrad.scipy.stats import chi2 as _chi2
from funcgrad.scipy.stats import norm as _norm
from funcgrad.scipy.stats._descriptive import ConfidenceInterval

__all__ = ["MannwhitneyuResult", "mannwhitneyu", "WilcoxonResult", "wilcoxon",
           "RanksumsResult", "ranksums", "KruskalResult", "kruskal",
           "FriedmanchisquareResult", "friedmanchisquare", "BinomTestResult", "binomtest"]

_ALTERNATIVES = ("two-sided", "less", "greater")
_NAN_POLICIES = ("propagate", "omit", "raise")


class MannwhitneyuResult(NamedTuple):
    """``(statistic, pvalue)`` of :func:`mannwhitneyu`."""

    statistic: Any
    pvalue: Any


class RanksumsResult(NamedTuple):
    """``(statistic, pvalue)`` of :func:`ranksums`."""

    statistic: Any
    pvalue: Any


class KruskalResult(NamedTuple):
    """``(statistic, pvalue)`` of :func:`kruskal`."""

    statistic: Any
    pvalue: Any


class FriedmanchisquareResult(NamedTuple):
    """``(statistic, pvalue)`` of :func:`friedmanchisquare`."""

    statistic: Any
    pvalue: Any


class WilcoxonResult(tuple):
    """``(statistic, pvalue)`` of :func:`wilcoxon`; with ``method="asymptotic"`` also
    ``zstatistic`` (SciPy's attribute)."""

    def __new__(cls, statistic: Any, pvalue: Any, zstatistic: Any = None) -> WilcoxonResult:
        self = super().__new__(cls, (statistic, pvalue))
        if zstatistic is not None:
            self.zstatistic = zstatistic
        return self

    @property
    def statistic(self) -> Any:
        return self[0]

    @property
    def pvalue(self) -> Any:
        return self[1]

    def __repr__(self) -> str:
        return f"WilcoxonResult(statistic={self[0]!r}, pvalue={self[1]!r})"


# ---- host plumbing: concrete data in, one test per 1-D slice, device values out


def _concrete(name: str, v: Any) -> numpy.ndarray:
    if isinstance(v, Tracer):
        raise TypeError(f"{name}: needs concrete values (the method and the exact "
                        "distributions depend on the data: ties, zeros, sizes), not a traced "
                        "value; call it outside jit/vmap/grad")
    a = numpy.asarray(device_get(v))
    if a.dtype.kind == "c":
        raise TypeError(f"{name}: complex data is not supported")
    return a.astype(numpy.float64)


def _device(*vs: Any) -> str:
    """The first device array's device; the default device for host (NumPy) data."""
    for v in vs:
        if is_array(v) and not isinstance(v, numpy.ndarray):
            return get_aval(v).device or get_default_device()
    return get_default_device()


def _check(name: str, what: str, value: Any, allowed: tuple) -> None:
    if value not in allowed:
        raise ValueError(f"{name}: `{what}` must be one of {allowed}, got {value!r}")


def _as_rows(name: str, arrays: list[numpy.ndarray], axis: Any
             ) -> tuple[list[numpy.ndarray], tuple[int, ...]]:
    """Each array with ``axis`` last and the other axes broadcast together, flattened to
    ``(batch, n)``; and the batch shape."""
    if axis is None:
        return [a.reshape(1, -1) for a in arrays], ()
    if int(axis) != axis:
        raise ValueError(f"{name}: `axis` must be an integer, got {axis!r}")
    moved = []
    for a in arrays:
        a = numpy.atleast_1d(a)
        if not -a.ndim <= axis < a.ndim:
            raise ValueError(f"{name}: axis {axis} is out of bounds for an array of dimension "
                             f"{a.ndim}")
        moved.append(numpy.moveaxis(a, axis, -1))
    batch = numpy.broadcast_shapes(*[a.shape[:-1] for a in moved])
    rows = [numpy.broadcast_to(a, batch + a.shape[-1:]).reshape(-1, a.shape[-1])
            for a in moved]
    return rows, tuple(batch)


def _nan_slices(name: str, slices: list[numpy.ndarray], nan_policy: str
                ) -> list[numpy.ndarray] | None:
    """The slices of one test with nans handled: ``None`` when the result is nan."""
    if not any(numpy.isnan(s).any() for s in slices):
        return slices
    if nan_policy == "raise":
        raise ValueError(f"{name}: the input contains nan values (nan_policy='raise')")
    if nan_policy == "propagate":
        return None
    return [s[~numpy.isnan(s)] for s in slices]


def _out(values: list[Any], batch: tuple[int, ...], device: str) -> Any:
    arr = numpy.asarray(values, dtype=numpy.float64).reshape(batch)
    return device_put(arr if batch else arr[()], device)


def _run(name: str, arrays: list[Any], axis: Any, nan_policy: str,
         test: Callable[..., tuple], n_out: int = 2) -> tuple[list[Any], tuple[int, ...], str]:
    """Run ``test(*slices)`` on every slice; nan slices give nan."""
    _check(name, "nan_policy", nan_policy, _NAN_POLICIES)
    device = _device(*arrays)
    rows, batch = _as_rows(name, [_concrete(name, a) for a in arrays], axis)
    results = []
    for i in range(rows[0].shape[0]):
        slices = _nan_slices(name, [r[i] for r in rows], nan_policy)
        results.append((math.nan,) * n_out if slices is None else test(*slices))
    columns = list(zip(*results, strict=True)) if results else [()] * n_out
    return [_out(list(c), batch, device) for c in columns], batch, device


def _rank(a: numpy.ndarray) -> tuple[numpy.ndarray, numpy.ndarray]:
    """Average ranks (from 1) and the sizes of the groups of ties."""
    order = numpy.argsort(a, kind="mergesort")
    srt = a[order]
    starts = numpy.flatnonzero(numpy.r_[True, srt[1:] != srt[:-1]])
    counts = numpy.diff(numpy.r_[starts, a.size])
    mean_rank = starts + (counts + 1) / 2.0  # the average of the group's 1-based ranks
    ranks = numpy.empty(a.size)
    ranks[order] = numpy.repeat(mean_rank, counts)
    return ranks, counts.astype(numpy.float64)


def _normal_p(z: float, alternative: str) -> float:
    if alternative == "less":
        return float(_norm.cdf(z))
    if alternative == "greater":
        return float(_norm.sf(z))
    return float(2.0 * _norm.sf(abs(z)))


# ---- Mann-Whitney U


class _MWUCounts:
    """The null distribution of ``U`` for sizes ``n1 <= n2``: SciPy's recurrence (Löffler
    1983) in uint64 while it fits, float64 after."""

    def __init__(self, n1: int, n2: int) -> None:
        self.n1, self.n2 = min(n1, n2), max(n1, n2)

    def pmfs(self, maxu: int) -> numpy.ndarray:
        n1, n2 = self.n1, self.n2
        sigma = numpy.zeros(maxu + 1, dtype=int)
        for d in range(1, n1 + 1):
            sigma[d::d] += d
        for d in range(n2 + 1, n2 + n1 + 1):
            sigma[d::d] -= d
        sigma = sigma[1:]
        conf = numpy.zeros(maxu + 1, dtype=numpy.uint64)
        conf[0] = 1
        is_uint = True
        for u in range(1, maxu + 1):
            val = numpy.dot(conf[:u], sigma[u - 1::-1]) / u
            if is_uint and val > numpy.iinfo(numpy.uint64).max:
                conf, is_uint = conf.astype(float), False
            conf[u] = val
        return conf / float(math.comb(n1 + n2, n1))

    def sf(self, k: int) -> float:
        """``P(U >= k)``, summed from the nearer tail (the distribution is symmetric)."""
        kc = self.n1 * self.n2 - k
        if k < kc:
            pmfs = self.pmfs(k)
            return 1.0 - float(numpy.cumsum(pmfs)[k]) + float(pmfs[k])
        return float(numpy.cumsum(self.pmfs(kc))[kc])


def mannwhitneyu(x: Any, y: Any, use_continuity: bool = True, alternative: str = "two-sided",
                 axis: Any = 0, method: str = "auto", *, nan_policy: str = "propagate"
                 ) -> MannwhitneyuResult:
    """The Mann-Whitney U rank test of two independent samples, as
    ``scipy.stats.mannwhitneyu``: ``statistic`` is ``U`` of ``x``; the p-value is exact
    (``method="exact"``: the null distribution of ``U``, no tie correction) or from the
    normal approximation with the tie correction (``"asymptotic"``, continuity correction
    with ``use_continuity``); ``"auto"`` is exact when either sample has at most 8 values and
    there are no ties. Batched along the other axes (broadcast). Not traceable.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import mannwhitneyu
        >>> x, y = np.array([19, 22, 16, 29, 24]), np.array([20, 11, 17, 12])
        >>> round(float(mannwhitneyu(x, y, method="asymptotic").pvalue), 12)
        0.111346886533
    """
    _check("mannwhitneyu", "use_continuity", use_continuity, (True, False))
    _check("mannwhitneyu", "alternative", alternative, _ALTERNATIVES)
    method = method.lower() if isinstance(method, str) else method
    _check("mannwhitneyu", "method", method, ("auto", "asymptotic", "exact"))
    pre = [_concrete("mannwhitneyu", v) for v in (x, y)]
    if any(p.size == 0 for p in pre):
        raise ValueError("mannwhitneyu: `x` and `y` must be of nonzero size.")
    rows, _ = _as_rows("mannwhitneyu", pre, axis)
    if method == "auto":  # SciPy decides once, for the whole batch
        n1, n2 = rows[0].shape[-1], rows[1].shape[-1]
        tied = any(numpy.any(_rank(numpy.r_[a, b])[1] > 1)
                   for a, b in zip(rows[0], rows[1], strict=True)
                   if not (numpy.isnan(a).any() or numpy.isnan(b).any()))
        method = "asymptotic" if (n1 > 8 and n2 > 8) or tied else "exact"

    def test(a: numpy.ndarray, b: numpy.ndarray) -> tuple[float, float]:
        n1, n2 = a.size, b.size
        if n1 == 0 or n2 == 0:
            return math.nan, math.nan
        ranks, ties = _rank(numpy.r_[a, b])
        u1 = ranks[:n1].sum() - n1 * (n1 + 1) / 2
        u2 = n1 * n2 - u1
        u, factor = {"greater": (u1, 1), "less": (u2, 1)}.get(alternative,
                                                              (max(u1, u2), 2))
        if method == "exact":
            p = _MWUCounts(n1, n2).sf(int(u))
        else:
            n = n1 + n2
            s = math.sqrt(n1 * n2 / 12 * ((n + 1) - (ties ** 3 - ties).sum() / (n * (n - 1))))
            num = u - n1 * n2 / 2 - (0.5 if use_continuity else 0.0)
            with numpy.errstate(divide="ignore", invalid="ignore"):
                z = numpy.float64(num) / s
            p = float(_norm.sf(z))
        return u1, min(max(p * factor, 0.0), 1.0)

    (stat, p), _, _ = _run("mannwhitneyu", [x, y], axis, nan_policy, test)
    return MannwhitneyuResult(stat, p)


def ranksums(x: Any, y: Any, alternative: str = "two-sided", *, axis: Any = 0,
             nan_policy: str = "propagate") -> RanksumsResult:
    """The Wilcoxon rank-sum test of two independent samples, as ``scipy.stats.ranksums``:
    the rank sum of ``x`` standardised (no tie correction) against the normal distribution.
    Not traceable.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import ranksums
        >>> res = ranksums(np.array([1.0, 2.0, 3.0, 4.0]), np.array([3.5, 5.0, 6.0, 7.0]))
        >>> round(float(res.statistic), 12), round(float(res.pvalue), 12)
        (-2.020725942164, 0.043308142811)
    """
    _check("ranksums", "alternative", alternative, _ALTERNATIVES)

    def test(a: numpy.ndarray, b: numpy.ndarray) -> tuple[float, float]:
        n1, n2 = a.size, b.size
        ranks, _ = _rank(numpy.r_[a, b])
        expected = n1 * (n1 + n2 + 1) / 2.0
        z = (ranks[:n1].sum() - expected) / math.sqrt(n1 * n2 * (n1 + n2 + 1) / 12.0)
        return z, _normal_p(z, alternative)

    (stat, p), _, _ = _run("ranksums", [x, y], axis, nan_policy, test)
    return RanksumsResult(stat, p)


# ---- Wilcoxon signed-rank


def _signed_rank_pmf(n: int) -> numpy.ndarray:
    """The null pmf of the signed-rank sum ``r_plus`` for ``n`` nonzero differences."""
    c = numpy.ones(1)
    for k in range(1, n + 1):
        prev, m = c, c.size
        c = numpy.zeros(k * (k + 1) // 2 + 1)
        c[:m] = prev * 0.5
        c[-m:] += prev * 0.5
    return c


def _signed_rank_stats(d: numpy.ndarray, zero_method: str
                       ) -> tuple[float, float, float, float, int, bool]:
    """``r_plus``, ``r_minus``, the standard error, the mean, the count, tied?"""
    zeros = d == 0
    kept = numpy.where(zeros, numpy.nan, d) if zero_method == "wilcox" else d
    valid = ~numpy.isnan(kept)
    count = int(valid.sum())
    ranks = numpy.full(d.size, numpy.nan)
    r, ties = _rank(numpy.abs(kept[valid]))
    ranks[valid] = r
    r_plus = float(numpy.nansum(numpy.where(kept > 0, ranks, 0.0)))
    r_minus = float(numpy.nansum(numpy.where(kept < 0, ranks, 0.0)))
    if zero_method == "zsplit":
        half = float(numpy.sum(numpy.where(zeros, ranks, 0.0))) / 2
        r_plus, r_minus = r_plus + half, r_minus + half
    mean = count * (count + 1.0) * 0.25
    var = count * (count + 1.0) * (2.0 * count + 1.0)
    tie_groups = ties
    if zero_method == "pratt" and zeros.any():
        nz = float(zeros.sum())
        mean -= nz * (nz + 1.0) * 0.25
        var -= nz * (nz + 1.0) * (2.0 * nz + 1.0)
        tie_groups = ties[1:]  # the zeros' group (ranked first) is not a tie of the signs
    se = math.sqrt(max(var - (tie_groups ** 3 - tie_groups).sum() / 2, 0.0) / 24)
    return r_plus, r_minus, se, mean, count, bool(numpy.any(ties > 1))


def _signed_ranks(d: numpy.ndarray, zero_method: str) -> tuple[numpy.ndarray, float]:
    """The ranks of ``|d|`` that count towards ``r_plus`` where ``d > 0`` (0 for dropped
    zeros), and the constant ``r_plus`` gets from the zeros (``"zsplit"``: half their ranks)."""
    zeros = d == 0
    if zero_method == "wilcox":
        ranks = numpy.zeros(d.size)
        ranks[~zeros] = _rank(numpy.abs(d[~zeros]))[0]
    else:
        ranks = _rank(numpy.abs(d))[0]
    const = float(ranks[zeros].sum()) / 2 if zero_method == "zsplit" else 0.0
    return ranks, const


def _permutation_p(observed: float, null: numpy.ndarray, alternative: str) -> float:
    """SciPy's exact ``permutation_test`` p-value (with its relative tolerance of ties)."""
    gamma = abs(1e-14 * observed)
    less = numpy.count_nonzero(null <= observed + gamma) / null.size
    greater = numpy.count_nonzero(null >= observed - gamma) / null.size
    if alternative == "less":
        return less
    if alternative == "greater":
        return greater
    return min(2 * min(less, greater), 1.0)


def wilcoxon(x: Any, y: Any = None, zero_method: str = "wilcox", correction: bool = False,
             alternative: str = "two-sided", method: str = "auto", *, axis: Any = 0,
             nan_policy: str = "propagate") -> WilcoxonResult:
    """The Wilcoxon signed-rank test of the differences ``x - y`` (or of ``x``), as
    ``scipy.stats.wilcoxon``: ``statistic`` is ``min(r_plus, r_minus)`` (two-sided) or
    ``r_plus``. ``zero_method`` ``"wilcox"`` (drop zeros), ``"pratt"``, ``"zsplit"``;
    ``method`` ``"exact"`` (the signed-rank distribution), ``"asymptotic"`` (normal, tie
    corrected, ``correction`` for continuity; adds ``zstatistic``) or ``"auto"`` (exact up to
    50 differences without ties or zeros; with them, an exact permutation test up to 13,
    asymptotic beyond -- SciPy's choice). Not traceable.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import wilcoxon
        >>> d = np.array([6.0, 8.0, 14.0, 16.0, 23.0, 24.0, 28.0, 29.0, 41.0, -48.0, 49.0,
        ...               56.0, 60.0, -67.0, 75.0])
        >>> res = wilcoxon(d)
        >>> float(res.statistic), round(float(res.pvalue), 12)
        (24.0, 0.041259765625)
    """
    zero_method = str(zero_method).lower()
    _check("wilcoxon", "zero_method", zero_method, ("wilcox", "pratt", "zsplit"))
    _check("wilcoxon", "correction", correction, (True, False))
    alternative = str(alternative).lower()
    _check("wilcoxon", "alternative", alternative, _ALTERNATIVES)
    method = "asymptotic" if method == "approx" else method
    _check("wilcoxon", "method", method, ("auto", "asymptotic", "exact"))
    if y is not None:
        xs, ys = _concrete("wilcoxon", x), _concrete("wilcoxon", y)
        if axis is not None and numpy.atleast_1d(xs).shape[axis] != \
                numpy.atleast_1d(ys).shape[axis]:
            raise ValueError("wilcoxon: `x` and `y` must have the same length along `axis`.")
        data = [numpy.subtract(*numpy.broadcast_arrays(xs, ys))]
    else:
        data = [_concrete("wilcoxon", x)]
    device = _device(x, y)
    rows, _ = _as_rows("wilcoxon", data, axis)
    n_zero = int(numpy.count_nonzero(rows[0] == 0))
    chosen = method
    if method == "auto" and rows[0].shape[-1] > 50:
        chosen = "asymptotic"

    def test(d: numpy.ndarray) -> tuple[float, float, float]:
        if d.size == 0:
            return math.nan, math.nan, math.nan
        r_plus, r_minus, se, mean, count, tied = _signed_rank_stats(d, zero_method)
        how = chosen
        if how == "auto":
            if not (tied or n_zero > 0):
                how = "exact"
            elif d.size <= 13:
                how = "permutation"
            else:
                how = "asymptotic"
        z = math.nan
        if how == "asymptotic":
            with numpy.errstate(divide="ignore", invalid="ignore"):
                z = float(numpy.float64(r_plus - mean) / se)
            if correction:
                sign = {"greater": 1.0, "less": -1.0}.get(alternative, numpy.sign(z))
                z -= sign * 0.5 / se
            p = _normal_p(z, alternative)
            if alternative == "two-sided":
                z = -abs(z)
        elif how == "exact":
            pmf = _signed_rank_pmf(count)
            mn = count * (count + 1) / 4

            def cdf(k: int) -> float:
                return pmf[:k + 1].sum() if k <= mn else 1 - pmf[k + 1:].sum()

            def sf(k: int) -> float:
                return pmf[k:].sum() if k <= mn else 1 - pmf[:k].sum()

            lo, hi = math.ceil(r_plus), math.floor(r_plus)
            if alternative == "less":
                p = cdf(lo)
            elif alternative == "greater":
                p = sf(hi)
            else:
                p = min(2 * min(sf(hi), cdf(lo)), 1.0)
        else:  # every sign flip of the differences: the ranks of |d| stay, the signs move
            signs = numpy.array(list(itertools.product((1.0, -1.0), repeat=d.size)))
            ranks, const = _signed_ranks(d, zero_method)
            null = ((signs * d) > 0) @ ranks + const
            p = _permutation_p(r_plus, null, alternative)
        stat = min(r_plus, r_minus) if alternative == "two-sided" else r_plus
        return stat, float(p), z

    _check("wilcoxon", "nan_policy", nan_policy, _NAN_POLICIES)
    results = []
    for row in rows[0]:
        kept = _nan_slices("wilcoxon", [row], nan_policy)
        results.append((math.nan,) * 3 if kept is None else test(kept[0]))
    batch = () if axis is None else numpy.moveaxis(numpy.atleast_1d(data[0]), axis, -1).shape[:-1]
    stat, p, z = (_out(list(c), tuple(batch), device) for c in zip(*results, strict=True))
    return WilcoxonResult(stat, p, z if method == "asymptotic" else None)


# ---- Kruskal-Wallis and Friedman


def _tie_correction(ties: numpy.ndarray, n: int) -> float:
    return 1.0 if n < 2 else 1.0 - (ties ** 3 - ties).sum() / (float(n) ** 3 - n)


def kruskal(*samples: Any, nan_policy: str = "propagate", axis: Any = 0) -> KruskalResult:
    """The Kruskal-Wallis H test that the samples come from one distribution, as
    ``scipy.stats.kruskal``: the tie-corrected ``H`` against ``chi2(k - 1)``. Not traceable.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import kruskal
        >>> res = kruskal(np.array([1.0, 3.0, 5.0, 7.0, 9.0]), np.array([2.0, 4.0, 6.0, 8.0, 10.0]))
        >>> round(float(res.statistic), 12), round(float(res.pvalue), 12)
        (0.272727272727, 0.601508134441)
    """
    if len(samples) < 2:
        raise ValueError("kruskal: need at least two groups")

    def test(*groups: numpy.ndarray) -> tuple[float, float]:
        sizes = [g.size for g in groups]
        if any(s == 0 for s in sizes):
            return (math.nan,)
        ranks, ties = _rank(numpy.concatenate(groups))
        total = sum(sizes)
        correction = _tie_correction(ties, total)
        bounds = numpy.cumsum([0, *sizes])
        ssbn = sum(ranks[lo:hi].sum() ** 2 / (hi - lo) for lo, hi in zip(bounds[:-1], bounds[1:]))
        with numpy.errstate(divide="ignore", invalid="ignore"):
            h = numpy.float64(12.0 / (total * (total + 1)) * ssbn - 3 * (total + 1)) / correction
        return (float(h),)

    (stat,), _, _ = _run("kruskal", list(samples), axis, nan_policy, test, n_out=1)
    return KruskalResult(stat, _chi2.sf(stat, len(samples) - 1))


def friedmanchisquare(*samples: Any, axis: Any = 0, nan_policy: str = "propagate"
                      ) -> FriedmanchisquareResult:
    """The Friedman test of repeated measurements (``k >= 3`` treatments of the same ``n``
    subjects), as ``scipy.stats.friedmanchisquare``: ranks within each subject, tie
    corrected, against ``chi2(k - 1)``. Not traceable.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import friedmanchisquare
        >>> res = friedmanchisquare(np.array([72.0, 96.0, 88.0, 92.0]),
        ...                         np.array([120.0, 95.0, 102.0, 110.0]),
        ...                         np.array([76.0, 97.0, 84.0, 81.0]))
        >>> round(float(res.statistic), 12), round(float(res.pvalue), 12)
        (1.5, 0.472366552741)
    """
    k = len(samples)
    if k < 3:
        raise ValueError(f"friedmanchisquare: at least 3 sets of samples must be given for "
                         f"Friedman test, got {k}.")

    def test(*groups: numpy.ndarray) -> tuple[float, float]:
        n = groups[0].size
        if any(g.size != n for g in groups):
            raise ValueError("friedmanchisquare: unequal N in friedmanchisquare.")
        data = numpy.vstack(groups).T
        ranked = numpy.empty_like(data)
        ties = 0.0
        for i, row in enumerate(data):
            ranked[i], t = _rank(row)
            ties += float((t * (t * t - 1)).sum())
        c = 1 - ties / (k * (k * k - 1) * n)
        ssbn = numpy.sum(ranked.sum(axis=0) ** 2)
        with numpy.errstate(divide="ignore", invalid="ignore"):
            stat = numpy.float64(12.0 / (k * n * (k + 1)) * ssbn - 3 * n * (k + 1)) / c
        return (float(stat),)

    (stat,), _, _ = _run("friedmanchisquare", list(samples), axis, nan_policy, test, n_out=1)
    return FriedmanchisquareResult(stat, _chi2.sf(stat, k - 1))


# ---- the binomial test


class BinomTestResult:
    """The result of :func:`binomtest`, as SciPy's: ``k``, ``n``, ``alternative``,
    ``statistic`` (``k / n``, also ``proportion_estimate``), ``pvalue``, and
    :meth:`proportion_ci`."""

    def __init__(self, k: int, n: int, alternative: str, statistic: float, pvalue: Any,
                 device: str) -> None:
        self.k, self.n, self.alternative = k, n, alternative
        self.statistic = self.proportion_estimate = statistic
        self.pvalue = pvalue
        self._device = device

    def __repr__(self) -> str:
        return (f"BinomTestResult(k={self.k}, n={self.n}, alternative={self.alternative!r}, "
                f"statistic={self.statistic!r}, pvalue={self.pvalue!r})")

    def proportion_ci(self, confidence_level: float = 0.95, method: str = "exact"
                      ) -> ConfidenceInterval:
        """A confidence interval for the success probability: ``"exact"``
        (Clopper-Pearson), ``"wilson"`` or ``"wilsoncc"`` (Wilson's score interval,
        without or with continuity correction), one-sided for a one-sided test.

        Example:
            >>> from funcgrad.scipy.stats import binomtest
            >>> ci = binomtest(7, 20).proportion_ci()
            >>> round(float(ci.low), 10), round(float(ci.high), 10)
            (0.1539092048, 0.5921885345)
        """
        _check("proportion_ci", "method", method, ("exact", "wilson", "wilsoncc"))
        if not 0 <= confidence_level <= 1:
            raise ValueError(f"proportion_ci: confidence_level must be in [0, 1], got "
                             f"{confidence_level}")
        k, n, alt = self.k, self.n, self.alternative
        if method == "exact":
            alpha = (1 - confidence_level) / 2 if alt == "two-sided" else 1 - confidence_level
            low = 0.0 if k == 0 or alt == "less" else float(_beta.ppf(alpha, k, n - k + 1))
            high = 1.0 if k == n or alt == "greater" else float(_beta.isf(alpha, k + 1, n - k))
        else:
            low, high = _wilson(k, n, confidence_level, alt, method == "wilsoncc")
        return ConfidenceInterval(device_put(numpy.float64(low), self._device),
                                  device_put(numpy.float64(high), self._device))


def _wilson(k: int, n: int, level: float, alternative: str, cc: bool) -> tuple[float, float]:
    p = k / n
    z = float(_norm.ppf(0.5 + 0.5 * level if alternative == "two-sided" else level))
    denom = 2 * (n + z ** 2)
    center = (2 * n * p + z ** 2) / denom
    q = 1 - p
    if cc:
        lo = 0.0 if alternative == "less" or k == 0 else center - (
            1 + z * math.sqrt(z ** 2 - 2 - 1 / n + 4 * p * (n * q + 1))) / denom
        hi = 1.0 if alternative == "greater" or k == n else center + (
            1 + z * math.sqrt(z ** 2 + 2 - 1 / n + 4 * p * (n * q - 1))) / denom
    else:
        delta = z / denom * math.sqrt(4 * n * p * q + z ** 2)
        lo = 0.0 if alternative == "less" or k == 0 else center - delta
        hi = 1.0 if alternative == "greater" or k == n else center + delta
    return lo, hi


def _search(a: Callable[[int], float], d: float, lo: int, hi: int) -> int:
    """SciPy's binary search for the last ``i`` in ``[lo, hi]`` with ``a(i) <= d``."""
    while lo < hi:
        mid = lo + (hi - lo) // 2
        midval = a(mid)
        if midval < d:
            lo = mid + 1
        elif midval > d:
            hi = mid - 1
        else:
            return mid
    return lo if a(lo) <= d else lo - 1


def _integer(name: str, what: str, v: Any) -> int:
    v = device_get(v) if is_array(v) else v
    if isinstance(v, bool) or int(v) != v:
        raise ValueError(f"{name}: `{what}` must be an integer, got {v!r}")
    return int(v)


_PMF_TABLE_MAX = 1_000_000


def binomtest(k: Any, n: Any, p: float = 0.5, alternative: str = "two-sided"
              ) -> BinomTestResult:
    """The exact test that ``k`` successes in ``n`` Bernoulli trials have success
    probability ``p``, as ``scipy.stats.binomtest``: the two-sided p-value adds the
    probabilities of the outcomes no more likely than ``k`` (SciPy's relative tolerance
    ``1e-7``). Host arithmetic on Python integers.

    Example:
        >>> from funcgrad.scipy.stats import binomtest
        >>> res = binomtest(3, 15, 0.1, alternative="greater")
        >>> round(float(res.pvalue), 12), res.statistic
        (0.184061069106, 0.2)
    """
    if isinstance(k, Tracer) or isinstance(n, Tracer) or isinstance(p, Tracer):
        raise TypeError("binomtest: needs concrete k, n and p (host arithmetic), not traced "
                        "values; call it outside jit/vmap/grad")
    k, n = _integer("binomtest", "k", k), _integer("binomtest", "n", n)
    if n <= 0:
        raise ValueError(f"binomtest: n must be a positive integer, got {n}")
    if not 0 <= k <= n:
        raise ValueError(f"binomtest: k ({k}) must be in range [0, n={n}]")
    p = float(device_get(p)) if is_array(p) else float(p)
    if not 0 <= p <= 1:
        raise ValueError(f"binomtest: p ({p}) must be in range [0, 1]")
    _check("binomtest", "alternative", alternative, _ALTERNATIVES)

    if n <= _PMF_TABLE_MAX:  # one table of every outcome's probability: sums and lookups
        table = numpy.asarray(device_get(_binom.pmf(numpy.arange(n + 1.0), n, p)))

        def pmf(i: float) -> float:
            return float(table[int(i)])

        def cdf(i: float) -> float:
            return float(table[:int(i) + 1].sum()) if i >= 0 else 0.0

        def sf(i: float) -> float:
            return float(table[max(int(i) + 1, 0):].sum())
    else:
        def pmf(i: float) -> float:
            return float(_binom.pmf(i, n, p))

        def cdf(i: float) -> float:
            return float(_binom.cdf(i, n, p))

        def sf(i: float) -> float:
            return float(_binom.sf(i, n, p))

    if alternative == "less":
        pval = cdf(k)
    elif alternative == "greater":
        pval = sf(k - 1)
    else:
        d = pmf(k)
        rerr = 1 + 1e-7
        if k == p * n:
            pval = 1.0
        elif k < p * n:
            ix = _search(lambda i: -pmf(i), -d * rerr, math.ceil(p * n), n)
            y = n - ix + int(d * rerr == pmf(ix))
            pval = cdf(k) + sf(n - y)
        else:
            ix = _search(pmf, d * rerr, 0, math.floor(p * n))
            pval = cdf(ix) + sf(k - 1)
        pval = min(1.0, pval)
    device = _device(k, n)
    return BinomTestResult(k, n, alternative, k / n, device_put(numpy.float64(pval), device),
                           device)
