"""Cephes-style distribution functions over the incomplete gamma and beta functions: pdtr,
chdtr, gdtr, bdtr, nbdtr, fdtr and their complements and inverses."""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.ops.elementwise as _ew
from funcgrad.scipy import _quiet
from funcgrad.scipy.special._common import _floats, _fnp
from funcgrad.scipy.special._incomplete_beta import _betaincinv_pair, betainc
from funcgrad.scipy.special._incomplete_gamma import (
    _gammainc_const_a,
    _gammaincc_const_a,
    _igam_args,
    gammainc,
    gammaincc,
    gammainccinv,
)

# =============================================================================================
# Cephes-style distribution functions (scipy.special's names over the incomplete gammas)


def pdtr(k: Any, m: Any) -> Any:
    """Poisson CDF: ``P(K <= k) = gammaincc(floor(k) + 1, m)`` (nan for ``k < 0`` or
    ``m < 0``), as ``scipy.special.pdtr``.

    Example:
        >>> from funcgrad.scipy.special import pdtr
        >>> round(float(pdtr(2.5, 3.0)), 12)
        0.423190081127
    """
    k, m = _igam_args("pdtr", k, m)
    fnp = _fnp()
    kf = _ew.stop_gradient(fnp.floor(k))
    out = _gammaincc_const_a(fnp.where(kf >= 0, kf, 0.0) + 1.0, m)
    return fnp.where((k < 0) | (m < 0) | fnp.isnan(k), numpy.nan, out)


def pdtrc(k: Any, m: Any) -> Any:
    """Poisson survival function ``P(K > k) = gammainc(floor(k) + 1, m)``.

    Example:
        >>> from funcgrad.scipy.special import pdtrc
        >>> round(float(pdtrc(2.5, 3.0)), 12)
        0.576809918873
    """
    k, m = _igam_args("pdtrc", k, m)
    fnp = _fnp()
    kf = _ew.stop_gradient(fnp.floor(k))
    out = _gammainc_const_a(fnp.where(kf >= 0, kf, 0.0) + 1.0, m)
    return fnp.where((k < 0) | (m < 0) | fnp.isnan(k), numpy.nan, out)


def chdtr(v: Any, x: Any) -> Any:
    """Chi-square CDF with ``v`` degrees of freedom: ``gammainc(v / 2, x / 2)``.

    Example:
        >>> from funcgrad.scipy.special import chdtr
        >>> round(float(chdtr(3.0, 2.0)), 12)
        0.427593295529
    """
    v, x = _igam_args("chdtr", v, x)
    return _fnp().where(v >= 0, gammainc(0.5 * v, 0.5 * x), numpy.nan)


def chdtrc(v: Any, x: Any) -> Any:
    """Chi-square survival function ``gammaincc(v / 2, x / 2)``.

    Example:
        >>> from funcgrad.scipy.special import chdtrc
        >>> round(float(chdtrc(3.0, 2.0)), 12)
        0.572406704471
    """
    v, x = _igam_args("chdtrc", v, x)
    return _fnp().where(v >= 0, gammaincc(0.5 * v, 0.5 * x), numpy.nan)


def chdtri(v: Any, p: Any) -> Any:
    """Inverse of :func:`chdtrc` in ``x``: ``2 gammainccinv(v / 2, p)`` (the critical value
    of a chi-square test at level ``p``).

    Example:
        >>> from funcgrad.scipy.special import chdtri
        >>> round(float(chdtri(3.0, 0.05)), 10)
        7.8147279033
    """
    v, p = _igam_args("chdtri", v, p)
    fnp = _fnp()
    # v = 0: all the mass at 0 (SciPy's 0 for 0 < p <= 1, inf at p = 0)
    at_zero = fnp.where(p == 0, numpy.inf, fnp.where((p > 0) & (p <= 1), 0.0, numpy.nan))
    out = 2.0 * gammainccinv(fnp.where(v > 0, 0.5 * v, 1.0), p)
    return fnp.where(v > 0, out, fnp.where(v == 0, at_zero, numpy.nan))


def gdtr(a: Any, b: Any, x: Any) -> Any:
    """Gamma CDF with rate ``a`` and shape ``b``: ``gammainc(b, a x)``.

    Example:
        >>> from funcgrad.scipy.special import gdtr
        >>> round(float(gdtr(2.0, 3.0, 1.5)), 12)
        0.576809918873
    """
    a, b, x = _floats("gdtr", a, b, x)
    return _fnp().where(x < 0, numpy.nan, gammainc(b, a * x))


def gdtrc(a: Any, b: Any, x: Any) -> Any:
    """Gamma survival function ``gammaincc(b, a x)``.

    Example:
        >>> from funcgrad.scipy.special import gdtrc
        >>> round(float(gdtrc(2.0, 3.0, 1.5)), 12)
        0.423190081127
    """
    a, b, x = _floats("gdtrc", a, b, x)
    return _fnp().where(x < 0, numpy.nan, gammaincc(b, a * x))


def _kfloor(k: Any) -> Any:
    """``floor(k)`` as a count: no derivative (as SciPy, a fractional count is truncated)."""
    return _ew.stop_gradient(_fnp().floor(k))


def bdtr(k: Any, n: Any, p: Any) -> Any:
    """Binomial CDF ``P(K <= floor(k))`` for ``n`` trials of probability ``p``:
    ``betainc(n - k, k + 1, 1 - p)`` (nan unless ``0 <= k <= n``, ``0 <= p <= 1``), as
    ``scipy.special.bdtr``. Differentiable in ``p`` (and ``n``).

    Example:
        >>> from funcgrad.scipy.special import bdtr
        >>> round(float(bdtr(2, 5, 0.3)), 12)
        0.83692
    """
    k, n, p = _floats("bdtr", k, n, p)
    fnp = _fnp()
    k, n, p = fnp.broadcast_arrays(fnp.asarray(k), fnp.asarray(n), fnp.asarray(p))
    kf = _kfloor(k)
    bad = ~((kf >= 0) & (kf <= n) & (p >= 0) & (p <= 1))
    inner = ~bad & (kf < n) & (kf > 0)
    dn = fnp.where(inner, n - kf, 1.0)
    out = betainc(dn, fnp.where(inner, kf + 1.0, 1.0), fnp.where(inner, 1.0 - p, 0.5))
    # k = 0: (1 - p)^n directly (as SciPy; betainc(n, 1, 1 - p) is the same value).
    zero = ~bad & (kf == 0) & (kf < n)
    n0, p0 = fnp.where(zero, n, 1.0), fnp.where(zero, p, 0.5)
    out = fnp.where(zero, fnp.exp(n0 * _quiet.log1p(-p0)), out)
    out = fnp.where(~bad & (kf == n), 1.0, out)
    return fnp.where(bad, numpy.nan, out)


def bdtrc(k: Any, n: Any, p: Any) -> Any:
    """Binomial survival function ``P(K > floor(k)) = betainc(k + 1, n - k, p)`` (1 for
    ``k < 0``, 0 at ``k = n``), as ``scipy.special.bdtrc``.

    Example:
        >>> from funcgrad.scipy.special import bdtrc
        >>> round(float(bdtrc(2, 5, 0.3)), 12)
        0.16308
    """
    k, n, p = _floats("bdtrc", k, n, p)
    fnp = _fnp()
    k, n, p = fnp.broadcast_arrays(fnp.asarray(k), fnp.asarray(n), fnp.asarray(p))
    kf = _kfloor(k)
    bad = ~((kf <= n) & (p >= 0) & (p <= 1) & (n >= 0))
    inner = ~bad & (kf < n) & (kf > 0)
    out = betainc(fnp.where(inner, kf + 1.0, 1.0), fnp.where(inner, n - kf, 1.0),
                  fnp.where(inner, p, 0.5))
    # k = 0: 1 - (1 - p)^n without the cancellation at small p.
    zero = ~bad & (kf == 0) & (kf < n)
    n0, p0 = fnp.where(zero, n, 1.0), fnp.where(zero, p, 0.5)
    out = fnp.where(zero, -fnp.expm1(n0 * _quiet.log1p(-p0)), out)
    out = fnp.where(~bad & (kf == n), 0.0, out)
    out = fnp.where(~bad & (kf < 0), 1.0, out)
    return fnp.where(bad | fnp.isnan(k), numpy.nan, out)


def bdtri(k: Any, n: Any, y: Any) -> Any:
    """Inverse of :func:`bdtr` in ``p``: the ``p`` with ``bdtr(k, n, p) = y`` (nan unless
    ``0 <= k < n``, ``0 <= y <= 1``), as ``scipy.special.bdtri``; ``p`` keeps full relative
    precision near both ends (both tails come from :func:`betaincinv`).

    Example:
        >>> from funcgrad.scipy.special import bdtri
        >>> round(float(bdtri(2, 5, 0.83692)), 12)
        0.3
    """
    k, n, y = _floats("bdtri", k, n, y)
    fnp = _fnp()
    k, n, y = fnp.broadcast_arrays(fnp.asarray(k), fnp.asarray(n), fnp.asarray(y))
    kf = _kfloor(k)
    bad = ~((kf >= 0) & (kf < n) & (y >= 0) & (y <= 1))
    dn = fnp.where(bad, 1.0, n - kf)
    # I_{1-p}(n - k, k + 1) = y: 1 - p is the inverse's x, p its complement.
    _, p = _betaincinv_pair("bdtri", dn, fnp.where(bad, 1.0, kf + 1.0),
                            fnp.where(bad, 0.5, y), fnp.where(bad, 0.5, 1.0 - y))
    return fnp.where(bad, numpy.nan, p)


def nbdtr(k: Any, n: Any, p: Any) -> Any:
    """Negative binomial CDF: probability of at most ``floor(k)`` failures before the
    ``n``-th success, ``betainc(n, k + 1, p)``, as ``scipy.special.nbdtr``.

    Example:
        >>> from funcgrad.scipy.special import nbdtr
        >>> round(float(nbdtr(2, 3, 0.4)), 12)
        0.31744
    """
    k, n, p = _floats("nbdtr", k, n, p)
    fnp = _fnp()
    k, n, p = fnp.broadcast_arrays(fnp.asarray(k), fnp.asarray(n), fnp.asarray(p))
    kf = _kfloor(k)
    bad = ~((kf >= 0) & (n > 0) & (p >= 0) & (p <= 1))
    out = betainc(fnp.where(bad, 1.0, n), fnp.where(bad, 1.0, kf + 1.0), fnp.where(bad, 0.5, p))
    return fnp.where(bad, numpy.nan, out)


def nbdtrc(k: Any, n: Any, p: Any) -> Any:
    """Negative binomial survival function ``betainc(k + 1, n, 1 - p)``, as
    ``scipy.special.nbdtrc``.

    Example:
        >>> from funcgrad.scipy.special import nbdtrc
        >>> round(float(nbdtrc(2, 3, 0.4)), 12)
        0.68256
    """
    k, n, p = _floats("nbdtrc", k, n, p)
    fnp = _fnp()
    k, n, p = fnp.broadcast_arrays(fnp.asarray(k), fnp.asarray(n), fnp.asarray(p))
    kf = _kfloor(k)
    bad = ~((kf >= 0) & (n > 0) & (p >= 0) & (p <= 1))
    out = betainc(fnp.where(bad, 1.0, kf + 1.0), fnp.where(bad, 1.0, n),
                  fnp.where(bad, 0.5, 1.0 - p))
    return fnp.where(bad, numpy.nan, out)


def nbdtri(k: Any, n: Any, y: Any) -> Any:
    """Inverse of :func:`nbdtr` in ``p``: ``betaincinv(n, k + 1, y)``, as
    ``scipy.special.nbdtri``.

    Example:
        >>> from funcgrad.scipy.special import nbdtri
        >>> round(float(nbdtri(2, 3, 0.31744)), 12)
        0.4
    """
    k, n, y = _floats("nbdtri", k, n, y)
    fnp = _fnp()
    k, n, y = fnp.broadcast_arrays(fnp.asarray(k), fnp.asarray(n), fnp.asarray(y))
    kf = _kfloor(k)
    bad = ~((kf >= 0) & (n > 0) & (y >= 0) & (y <= 1))
    x, _ = _betaincinv_pair("nbdtri", fnp.where(bad, 1.0, n), fnp.where(bad, 1.0, kf + 1.0),
                            fnp.where(bad, 0.5, y), fnp.where(bad, 0.5, 1.0 - y))
    return fnp.where(bad, numpy.nan, x)


def _fdtr_args(name: str, a: Any, b: Any, x: Any) -> tuple[Any, Any, Any, Any]:
    a, b, x = _floats(name, a, b, x)
    fnp = _fnp()
    a, b, x = fnp.broadcast_arrays(fnp.asarray(a), fnp.asarray(b), fnp.asarray(x))
    bad = ~((a > 0) & (b > 0) & (x >= 0))
    return fnp.where(bad, 1.0, a), fnp.where(bad, 1.0, b), x, bad


def _fdtr_pair(name: str, dfn: Any, dfd: Any, x: Any) -> tuple[Any, Any]:
    """(cdf, sf) of the F distribution: ``I_w(dfn/2, dfd/2)`` with ``w = dfn x / (dfd +
    dfn x)`` and ``I_{1-w}(dfd/2, dfn/2)`` with ``1 - w = dfd / (dfd + dfn x)``, each computed
    from its own argument unless that rounds near 1 (above 0.9, where ``1 - w`` would lose
    digits): then as 1 minus the other one."""
    a, b, x, bad = _fdtr_args(name, dfn, dfd, x)
    fnp = _fnp()
    fin = fnp.isfinite(x)
    xs = fnp.where(fin & ~bad, x, 1.0)
    ax = a * xs
    w1, w2 = ax / (b + ax), b / (b + ax)
    i1 = betainc(0.5 * a, 0.5 * b, w1)
    i2 = betainc(0.5 * b, 0.5 * a, w2)
    cdf = fnp.where(w1 <= 0.9, i1, 1.0 - i2)
    sf = fnp.where(w2 <= 0.9, i2, 1.0 - i1)
    cdf = fnp.where(fin, cdf, 1.0)
    sf = fnp.where(fin, sf, 0.0)
    return fnp.where(bad, numpy.nan, cdf), fnp.where(bad, numpy.nan, sf)


def fdtr(dfn: Any, dfd: Any, x: Any) -> Any:
    """F distribution CDF: ``betainc(dfn/2, dfd/2, dfn x / (dfd + dfn x))`` (nan unless
    ``dfn, dfd > 0`` and ``x >= 0``), as ``scipy.special.fdtr``.

    Example:
        >>> from funcgrad.scipy.special import fdtr
        >>> round(float(fdtr(2.0, 4.0, 2.0)), 12)
        0.75
    """
    return _fdtr_pair("fdtr", dfn, dfd, x)[0]


def fdtrc(dfn: Any, dfd: Any, x: Any) -> Any:
    """F distribution survival function ``betainc(dfd/2, dfn/2, dfd / (dfd + dfn x))``,
    accurate in the upper tail, as ``scipy.special.fdtrc``.

    Example:
        >>> from funcgrad.scipy.special import fdtrc
        >>> round(float(fdtrc(2.0, 4.0, 2.0)), 12)
        0.25
    """
    return _fdtr_pair("fdtrc", dfn, dfd, x)[1]


def fdtri(dfn: Any, dfd: Any, p: Any) -> Any:
    """Inverse of :func:`fdtr` in ``x`` (the F distribution's quantile), as
    ``scipy.special.fdtri``: ``dfd w / (dfn (1 - w))`` with ``w = betaincinv(dfn/2, dfd/2, p)``
    and ``1 - w`` from the inverse too (no cancellation in either tail).

    Example:
        >>> from funcgrad.scipy.special import fdtri
        >>> round(float(fdtri(2.0, 4.0, 0.75)), 12)
        2.0
    """
    dfn, dfd, p = _floats("fdtri", dfn, dfd, p)
    fnp = _fnp()
    a, b, p = fnp.broadcast_arrays(fnp.asarray(dfn), fnp.asarray(dfd), fnp.asarray(p))
    bad = ~((a > 0) & (b > 0) & (p >= 0) & (p <= 1))
    a, b = fnp.where(bad, 1.0, a), fnp.where(bad, 1.0, b)
    w, wc = _betaincinv_pair("fdtri", 0.5 * a, 0.5 * b, fnp.where(bad, 0.5, p),
                             fnp.where(bad, 0.5, 1.0 - p))
    return fnp.where(bad, numpy.nan, _quiet.div(b * w, a * wc))
