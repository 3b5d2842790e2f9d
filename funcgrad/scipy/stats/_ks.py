"""Kolmogorov-Smirnov: the exact finite-``n`` distributions of the statistics (``kstwo``: two
sided, ``ksone``: one sided) and the tests ``ks_1samp``, ``ks_2samp``, ``kstest``, as SciPy's.

These are host computations on concrete data, as SciPy's own (integer lattice counts, matrix
powers whose size depends on the value, Python-level dispatch between algorithms): a traced
argument raises ``TypeError``. The limiting distribution, smooth and jit-safe, is
:mod:`funcgrad.scipy.stats.kstwobign`.

Algorithms (those SciPy uses, after Simard & L'Ecuyer 2011): Ruben-Gambino's closed forms at
the ends of the support, the Durbin matrix (Marsaglia-Tsang-Wang) in the body, Pelz-Good's
asymptotic series for large ``n``, and ``2 * smirnov`` (Birnbaum-Tingey's exact one-sided
sum) where the two-sided tail is the sum of two disjoint one-sided ones. Two-sample exact
p-values walk the lattice of the two empirical CDFs with transition probabilities (no
binomial overflow, no ``1 - p`` cancellation in small tails).

Example:
    >>> import numpy as np
    >>> from funcgrad.scipy.stats import ks_2samp
    >>> res = ks_2samp(np.array([0.1, 0.4, 0.7]), np.array([0.2, 0.9, 1.3, 1.8]))
    >>> round(float(res.statistic), 12), round(float(res.pvalue), 12)
    (0.75, 0.228571428571)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy

from funcgrad.api_devices import device_get
from funcgrad.avals import get_aval
from funcgrad.backend import device_put, get_default_device, is_array
from funcgrad.core import Tracer
from funcgrad.scipy.stats import kstwobign

__all__ = ["KstestResult", "ks_1samp", "ks_2samp", "kstest"]

_SCALE = 2.0 ** 128
_PI2 = math.pi ** 2


def host(name: str, v: Any) -> numpy.ndarray:
    """``v`` as a host float64 array; a traced value cannot be (the algorithms branch on it)."""
    if isinstance(v, Tracer):
        raise TypeError(f"{name}: needs concrete values (the exact Kolmogorov-Smirnov "
                        "computations branch on the data, on the host), not a traced value; "
                        "call it outside jit/vmap/grad")
    return numpy.asarray(device_get(v), dtype=numpy.float64)


def device_of(*vs: Any) -> str:
    for v in vs:
        if is_array(v):
            return get_aval(v).device or get_default_device()
    return get_default_device()


def _clip_pair(cdf: float, sf: float, want_cdf: bool) -> float:
    return min(max(cdf if want_cdf else sf, 0.0), 1.0)


def smirnov(n: int, d: float) -> float:
    """``P(D+_n >= d)`` (SciPy's ``special.smirnov``): Birnbaum-Tingey's exact sum
    ``d sum_j C(n, j) (d + j/n)**(j-1) (1 - d - j/n)**(n-j)``, term by term in logs (all
    terms positive: no cancellation)."""
    if math.isnan(d):
        return math.nan
    if d <= 0.0:
        return 1.0
    if d >= 1.0:
        return 0.0
    if n == 1:
        return 1.0 - d
    top = int(math.floor(n * (1.0 - d)))
    js = numpy.arange(top + 1, dtype=numpy.float64)
    rest = (n - js) - n * d  # n (1 - d - j/n), without the rounding of 1 - d - j/n
    keep = rest > 0
    js, rest = js[keep], rest[keep]
    lgam = numpy.array([math.lgamma(j + 1.0) + math.lgamma(n - j + 1.0) for j in js])
    logs = (math.lgamma(n + 1.0) - lgam + (js - 1.0) * numpy.log(d + js / n)
            + (n - js) * (numpy.log(rest) - math.log(n)))
    top_log = float(numpy.max(logs))
    return min(d * math.exp(top_log) * float(numpy.sum(numpy.exp(logs - top_log))), 1.0)


def _durbin(n: int, d: float) -> float:
    """``P(D_n < d)`` by the Durbin matrix (Marsaglia, Tsang & Wang 2003): entry ``(k, k)`` of
    ``n!/n**n H**n`` for ``d = (k - h)/n``, with ``H`` of order ``2k - 1``; powers scaled by
    ``2**128`` as they grow."""
    nd = n * d
    k = int(math.ceil(nd))
    h = k - nd
    m = 2 * k - 1
    j = numpy.arange(1, m + 1, dtype=numpy.float64)
    fact = numpy.cumprod(numpy.concatenate([[1.0], 1.0 / j]))  # 1/i!, i = 0..m
    v = (1.0 - h ** j) * fact[1:]
    v[-1] = (1.0 + max(2.0 * h - 1.0, 0.0) ** m - 2.0 * h ** m) * fact[m]
    hmat = numpy.zeros((m, m))
    for i in range(1, m):
        hmat[i - 1:, i] = fact[:m - i + 1]
    hmat[:, 0] = v
    hmat[-1, :] = v[::-1]
    power = numpy.eye(m)
    expnt = 0
    h_expnt = 0
    nn = n
    while nn > 0:
        if nn % 2:
            power = power @ hmat
            expnt += h_expnt
        hmat = hmat @ hmat
        h_expnt *= 2
        if abs(hmat[k - 1, k - 1]) > _SCALE:
            hmat /= _SCALE
            h_expnt += 128
        nn //= 2
    p = power[k - 1, k - 1]
    for i in range(1, n + 1):
        p = i * p / n
        if abs(p) < 1.0 / _SCALE:
            p *= _SCALE
            expnt -= 128
    return math.ldexp(p, expnt)


def _pelz_good(n: int, x: float, want_cdf: bool) -> float:
    """Pelz & Good's (1976) expansion of ``P(D_n <= x)`` in powers of ``1/sqrt(n)`` (large
    ``n``), each term a theta series fast for small ``z = x sqrt(n)``."""
    z = math.sqrt(n) * x
    z2 = z * z
    qlog = -_PI2 / 8.0 / z2
    if qlog < -708:
        return _clip_pair(0.0, 1.0, want_cdf)
    q = math.exp(qlog)
    k1a, k1b = -z2, _PI2 / 4.0
    k2a = 6.0 * z2 ** 3 + 2.0 * z2 ** 2
    k2b = (2.0 * z2 ** 2 - 5.0 * z2) * _PI2 / 4.0
    k2c = _PI2 ** 2 * (1.0 - 2.0 * z2) / 16.0
    k3d = _PI2 ** 3 * (5.0 - 30.0 * z2) / 64.0
    k3c = _PI2 ** 2 * (-60.0 * z2 + 212.0 * z2 ** 2) / 16.0
    k3b = _PI2 * (135.0 * z2 ** 2 - 96.0 * z2 ** 3) / 4.0
    k3a = -30.0 * z2 ** 3 - 90.0 * z2 ** 4
    terms = numpy.zeros(4)
    maxk = int(math.ceil(16.0 * z / math.pi))
    for k in range(maxk, 0, -1):  # Horner in q**(8k) over the odd m = 2k - 1
        mm = (2 * k - 1) ** 2
        coef = numpy.array([1.0, k1a + k1b * mm, k2a + k2b * mm + k2c * mm ** 2,
                            k3a + k3b * mm + k3c * mm ** 2 + k3d * mm ** 3])
        terms = terms * q ** (8 * k) + coef
    terms *= q * math.sqrt(2.0 * math.pi)
    terms /= numpy.array([z, 6.0 * z2 ** 2, 72.0 * z ** 7, 6480.0 * z ** 10])
    q2 = math.exp(-_PI2 / 2.0 / z2)
    ks = numpy.arange(maxk, 0, -1, dtype=numpy.float64)
    qp = q2 ** (ks * ks)
    terms[2] += numpy.sum(ks * ks * qp) * _PI2 * math.sqrt(2.0 * math.pi) / (-36.0 * z ** 3)
    s3 = math.sqrt(3.0) * z
    terms[3] += (numpy.sum((s3 + math.pi * ks) * (s3 - math.pi * ks) * ks * ks * qp)
                 * _PI2 * math.sqrt(2.0 * math.pi) / (216.0 * z ** 6))
    terms /= float(n) ** (numpy.arange(4) / 2.0)
    if not want_cdf:
        terms = -terms
        terms[0] += 1.0
    return float(numpy.sum(terms))


def kolmogn(n: int, x: float, want_cdf: bool = True) -> float:
    """``P(D_n <= x)`` (or ``P(D_n > x)``) of the two-sided statistic, SciPy's dispatch
    (``scipy.stats._ksstats._kolmogn``)."""
    if math.isnan(x):
        return math.nan
    if x >= 1.0:
        return _clip_pair(1.0, 0.0, want_cdf)
    if x <= 0.0:
        return _clip_pair(0.0, 1.0, want_cdf)
    t = n * x
    if t <= 1.0:  # Ruben-Gambino: 1/(2n) <= x <= 1/n
        if t <= 0.5:
            return _clip_pair(0.0, 1.0, want_cdf)
        p = math.exp(math.lgamma(n + 1.0) - n * math.log(n) + n * math.log(2.0 * t - 1.0))
        return _clip_pair(p, 1.0 - p, want_cdf)
    if t >= n - 1:  # Ruben-Gambino
        p = 2.0 * (1.0 - x) ** n
        return _clip_pair(1.0 - p, p, want_cdf)
    if x >= 0.5:  # the two one-sided excursions cannot both happen
        p = 2.0 * smirnov(n, x)
        return _clip_pair(1.0 - p, p, want_cdf)
    nx2 = t * x
    if n <= 140:
        if nx2 <= 4.0:
            p = _durbin(n, x)
            return _clip_pair(p, 1.0 - p, want_cdf)
        p = 2.0 * smirnov(n, x)
        return _clip_pair(1.0 - p, p, want_cdf)
    if not want_cdf:
        if nx2 >= 370.0:
            return 0.0
        if nx2 >= 2.2:
            return min(max(2.0 * smirnov(n, x), 0.0), 1.0)
    if nx2 >= 18.0:
        p = 1.0
    elif n <= 100000 and n * x ** 1.5 <= 1.4:
        p = _durbin(n, x)
    else:
        p = _pelz_good(n, x, True)
    return _clip_pair(p, 1.0 - p, want_cdf)


def bisect(f: Callable[[float], float], target: float, increasing: bool) -> float:
    """The ``x`` in ``[0, 1]`` where the monotone ``f`` crosses ``target`` (to the last bit)."""
    lo, hi = 0.0, 1.0
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if (f(mid) < target) == increasing:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


class KstestResult(tuple):
    """SciPy's ``KstestResult``: unpacks as ``(statistic, pvalue)``; also
    ``statistic_location`` (the data value where the largest gap is) and ``statistic_sign``
    (+1: the empirical CDF above the reference / the second sample's, -1 below)."""

    def __new__(cls, statistic: Any, pvalue: Any, statistic_location: Any = None,
                statistic_sign: Any = None) -> KstestResult:
        obj = super().__new__(cls, (statistic, pvalue))
        obj.statistic_location = statistic_location
        obj.statistic_sign = statistic_sign
        return obj

    @property
    def statistic(self) -> Any:
        return self[0]

    @property
    def pvalue(self) -> Any:
        return self[1]

    def __repr__(self) -> str:
        return (f"KstestResult(statistic={self[0]!r}, pvalue={self[1]!r}, "
                f"statistic_location={self.statistic_location!r}, "
                f"statistic_sign={self.statistic_sign!r})")


_ALTERNATIVES = {"t": "two-sided", "g": "greater", "l": "less"}


def _alternative(name: str, alternative: str) -> str:
    alt = _ALTERNATIVES.get(str(alternative).lower()[:1], alternative)
    if alt not in ("two-sided", "greater", "less"):
        raise ValueError(f"{name}: alternative must be 'two-sided', 'greater' or 'less', got "
                         f"{alternative!r}")
    return alt


def _rows(name: str, a: numpy.ndarray, axis: int | None) -> tuple[numpy.ndarray, tuple]:
    """The samples along ``axis`` as rows of a 2-D array, and the shape of the rest."""
    if axis is None:
        a = a.reshape(-1)
        axis = 0
    if a.ndim == 0:
        raise ValueError(f"{name}: needs at least one dimension of data")
    a = numpy.moveaxis(a, axis, -1)
    return a.reshape(-1, a.shape[-1]), a.shape[:-1]


def _nan_rows(name: str, rows: list[numpy.ndarray], nan_policy: str) -> list[numpy.ndarray]:
    if nan_policy not in ("propagate", "omit", "raise"):
        raise ValueError(f"{name}: nan_policy must be 'propagate', 'omit' or 'raise', got "
                         f"{nan_policy!r}")
    if nan_policy == "raise" and any(numpy.isnan(r).any() for r in rows):
        raise ValueError(f"{name}: the input contains nan values")
    if nan_policy == "omit":
        return [r[~numpy.isnan(r)] for r in rows]
    return rows


def _finish(values: list[tuple], shape: tuple, device: str) -> KstestResult:
    out = []
    for i, dt in enumerate((numpy.float64, numpy.float64, numpy.float64, numpy.int8)):
        arr = numpy.array([v[i] for v in values], dtype=dt).reshape(shape)
        out.append(device_put(arr, device) if shape else device_put(arr[()], device))
    return KstestResult(*out)


def _one_sample(x: numpy.ndarray, cdf: Callable[..., Any], args: tuple, alternative: str,
                method: str) -> tuple:
    n = x.shape[0]
    if n == 0 or numpy.isnan(x).any():
        return (math.nan, math.nan, math.nan, 0)
    x = numpy.sort(x)
    cdfvals = numpy.asarray(device_get(cdf(x, *args)), dtype=numpy.float64).reshape(-1)
    d_plus = numpy.arange(1.0, n + 1) / n - cdfvals
    d_minus = cdfvals - numpy.arange(0.0, n) / n
    ip, im = int(numpy.argmax(d_plus)), int(numpy.argmax(d_minus))
    if alternative == "greater":
        return (d_plus[ip], smirnov(n, d_plus[ip]), x[ip], 1)
    if alternative == "less":
        return (d_minus[im], smirnov(n, d_minus[im]), x[im], -1)
    plus = d_plus[ip] > d_minus[im]
    d, loc, sign = (d_plus[ip], x[ip], 1) if plus else (d_minus[im], x[im], -1)
    if method in ("auto", "exact"):
        p = kolmogn(n, d, want_cdf=False)
    elif method == "asymp":
        p = float(device_get(kstwobign.sf(numpy.float64(d * math.sqrt(n)))))
    else:  # approx
        p = 2.0 * smirnov(n, d)
    return (d, min(max(p, 0.0), 1.0), loc, sign)


def _resolve_cdf(name: str, cdf: Any) -> Callable[..., Any]:
    if isinstance(cdf, str):
        import funcgrad.scipy.stats as _stats
        dist = getattr(_stats, cdf, None)
        if dist is None or not hasattr(dist, "cdf"):
            raise ValueError(f"{name}: {cdf!r} is not a distribution of funcgrad.scipy.stats "
                             "with a cdf")
        return dist.cdf
    if not callable(cdf):
        raise TypeError(f"{name}: cdf must be a callable or the name of a distribution, got "
                        f"{type(cdf).__name__}")
    return cdf


def ks_1samp(x: Any, cdf: Any, args: tuple = (), alternative: str = "two-sided",
             method: str = "auto", *, axis: int | None = 0,
             nan_policy: str = "propagate") -> KstestResult:
    """The one-sample Kolmogorov-Smirnov test of ``x`` against the continuous distribution
    ``cdf`` (a callable ``cdf(x, *args)`` or the name of a ``funcgrad.scipy.stats``
    distribution), as ``scipy.stats.ks_1samp``. ``alternative``: ``"two-sided"`` (statistic
    ``D = max |F_n - F|``), ``"greater"`` (``D+``) or ``"less"`` (``D-``); the two-sided p-value
    is exact (``kstwo``) for ``method="auto"``/``"exact"``, ``kstwobign``'s for ``"asymp"``,
    ``2 * ksone`` for ``"approx"``. Samples run along ``axis``. Concrete data only.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import ks_1samp
        >>> res = ks_1samp(np.array([-1.2, -0.3, 0.1, 0.4, 1.9]), "norm")
        >>> round(float(res.statistic), 12), round(float(res.pvalue), 12)
        (0.182088577811, 0.985686531646)
    """
    name = "ks_1samp"
    alternative = _alternative(name, alternative)
    if method not in ("auto", "exact", "approx", "asymp"):
        raise ValueError(f"{name}: method must be 'auto', 'exact', 'approx' or 'asymp', got "
                         f"{method!r}")
    fn = _resolve_cdf(name, cdf)
    rows, shape = _rows(name, host(name, x), axis)
    rows = _nan_rows(name, list(rows), nan_policy)
    values = [_one_sample(r, fn, tuple(args), alternative, method) for r in rows]
    return _finish(values, shape, device_of(x))


def _lattice_outside(m: int, n: int, g: int, h: int, two_sided: bool) -> float:
    """``P(sup (F_m - G_n) >= h / lcm)`` (or ``sup |F_m - G_n|``) for the uniformly random
    interleaving of the two samples: the probability mass of the lattice walk from ``(0, 0)``
    to ``(m, n)`` (a step right: the next value is from the first sample) absorbed where it
    first reaches the boundary ``n x - m y >= h g`` (or ``|n x - m y| >= h g``). Anti-diagonal
    by anti-diagonal: exact probabilities, no binomial counts to overflow."""
    bound = h * g
    # p[x]: the mass at (x, s - x) that has not touched the boundary
    p = numpy.zeros(m + 1)
    p[0] = 1.0
    absorbed = 0.0
    xs = numpy.arange(m + 1, dtype=numpy.int64)
    for s in range(1, m + n + 1):
        left = m + n - (s - 1)  # steps left before the end, from the previous diagonal
        ys_prev = (s - 1) - xs
        live = (ys_prev >= 0) & (ys_prev <= n)
        right_w = numpy.where(live, (m - xs) / left, 0.0)
        up_w = numpy.where(live, (n - ys_prev) / left, 0.0)
        new = p * up_w
        new[1:] += p[:-1] * right_w[:-1]
        ys = s - xs
        valid = (ys >= 0) & (ys <= n)
        new = numpy.where(valid, new, 0.0)
        gap = n * xs - m * ys
        hit = valid & ((numpy.abs(gap) >= bound) if two_sided else (gap >= bound))
        absorbed += float(numpy.sum(new[hit]))
        p = numpy.where(hit, 0.0, new)
    return min(absorbed, 1.0)


def _two_sample(d1: numpy.ndarray, d2: numpy.ndarray, alternative: str, method: str
                ) -> tuple:
    import warnings
    n1, n2 = d1.shape[0], d2.shape[0]
    if numpy.isnan(d1).any() or numpy.isnan(d2).any():
        return (math.nan, math.nan, math.nan, 0)
    if min(n1, n2) == 0:
        raise ValueError("ks_2samp: data passed to ks_2samp must not be empty")
    d1, d2 = numpy.sort(d1), numpy.sort(d2)
    both = numpy.concatenate([d1, d2])
    diffs = (numpy.searchsorted(d1, both, side="right") / n1
             - numpy.searchsorted(d2, both, side="right") / n2)
    imin, imax = int(numpy.argmin(diffs)), int(numpy.argmax(diffs))
    min_s = min(max(-diffs[imin], 0.0), 1.0)
    max_s = diffs[imax]
    if alternative == "less" or (alternative == "two-sided" and min_s > max_s):
        d, loc, sign = min_s, both[imin], -1
    else:
        d, loc, sign = max_s, both[imax], 1
    g = math.gcd(n1, n2)
    mode = method
    if mode == "auto":
        mode = "exact" if max(n1, n2) <= 10000 else "asymp"
    elif mode == "exact" and n1 // g >= numpy.iinfo(numpy.int32).max / (n2 // g):
        warnings.warn(f"Exact ks_2samp calculation not possible with samples sizes {n1} and "
                      f"{n2}. Switching to 'asymp'.", RuntimeWarning, stacklevel=3)
        mode = "asymp"
    if mode == "exact":
        lcm = (n1 // g) * n2
        h = int(round(d * lcm))
        d = h / lcm
        if h == 0:
            p = 1.0
        elif alternative == "less":  # the walk with the samples' roles swapped
            p = _lattice_outside(n2, n1, g, h, False)
        else:
            p = _lattice_outside(n1, n2, g, h, alternative == "two-sided")
    else:
        big, small = max(n1, n2), min(n1, n2)
        en = big * small / (big + small)
        if alternative == "two-sided":
            p = kolmogn(int(round(en)), d, want_cdf=False)
        else:
            z = math.sqrt(en) * d
            p = math.exp(-2.0 * z * z - 2.0 * z * (big + 2.0 * small)
                         / math.sqrt(big * small * (big + small)) / 3.0)
    return (d, min(max(p, 0.0), 1.0), loc, sign)


def ks_2samp(data1: Any, data2: Any, alternative: str = "two-sided", method: str = "auto",
             *, axis: int | None = 0, nan_policy: str = "propagate") -> KstestResult:
    """The two-sample Kolmogorov-Smirnov test, as ``scipy.stats.ks_2samp``: the statistic
    is the largest gap between the empirical CDFs (``"greater"``: of ``F1 - F2``, ``"less"``:
    of ``F2 - F1``); ``method="exact"`` (SciPy's choice under ``"auto"`` up to 10000 samples)
    counts the interleavings exactly, ``"asymp"`` uses ``kstwo`` at the effective size (two
    sided) or SciPy's corrected exponential (one sided). Samples run along ``axis``.
    Concrete data only.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import ks_2samp
        >>> res = ks_2samp(np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0, 6.0]))
        >>> float(res.statistic), round(float(res.pvalue), 12), int(res.statistic_sign)
        (1.0, 0.1, 1)
    """
    name = "ks_2samp"
    alternative = _alternative(name, alternative)
    if method not in ("auto", "exact", "asymp"):
        raise ValueError(f"{name}: method must be 'auto', 'exact' or 'asymp', got {method!r}")
    a, b = host(name, data1), host(name, data2)
    rows1, shape1 = _rows(name, a, axis)
    rows2, shape2 = _rows(name, b, axis)
    shape = numpy.broadcast_shapes(shape1, shape2)
    rows1 = numpy.broadcast_to(rows1.reshape(*shape1, -1), (*shape, rows1.shape[-1]))
    rows2 = numpy.broadcast_to(rows2.reshape(*shape2, -1), (*shape, rows2.shape[-1]))
    r1 = _nan_rows(name, list(rows1.reshape(-1, rows1.shape[-1])), nan_policy)
    r2 = _nan_rows(name, list(rows2.reshape(-1, rows2.shape[-1])), nan_policy)
    values = [_two_sample(u, v, alternative, method) for u, v in zip(r1, r2)]
    return _finish(values, tuple(shape), device_of(data1, data2))


def kstest(rvs: Any, cdf: Any, args: tuple = (), N: int = 20,  # noqa: N803
           alternative: str = "two-sided", method: str = "auto", *, axis: int | None = 0,
           nan_policy: str = "propagate") -> KstestResult:
    """``scipy.stats.kstest``: :func:`ks_1samp` when ``cdf`` is a callable or a distribution
    name, :func:`ks_2samp` when it is a second sample. ``rvs`` must be data (SciPy also takes
    a sampler; funcgrad's distributions have none -- draw with :mod:`funcgrad.random`).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import kstest
        >>> round(float(kstest(np.array([0.1, 0.5, 0.9]), "uniform").pvalue), 12)
        0.985777777778
    """
    if isinstance(rvs, str) or callable(rvs):
        raise TypeError("kstest: rvs must be the data (an array); drawing samples from a "
                        "named distribution or a sampler is not supported -- draw them with "
                        "funcgrad.random and pass the array")
    if isinstance(cdf, str) or callable(cdf):
        return ks_1samp(rvs, cdf, args, alternative, method, axis=axis, nan_policy=nan_policy)
    return ks_2samp(rvs, cdf, alternative, method if method != "approx" else "auto",
                    axis=axis, nan_policy=nan_policy)
