"""Carlson's symmetric elliptic integrals elliprf, elliprc, elliprd, elliprj, elliprg (real
arguments), as ``scipy.special``: Carlson's duplication algorithm (Numer. Algorithms 10, 1995)
in a ``while_loop`` until its error bound is below rounding, then his series; float32 is
computed in float64 and rounded once. Differentiable (through the duplication steps, each an
exact identity of the integral)."""

from __future__ import annotations

from typing import Any

import numpy

from funcgrad.scipy.special._common import _back, _counter, _f64, _floats, _fnpm, _while

_EPS = float(numpy.finfo(numpy.float64).eps)
# Carlson's bounds: after m steps the series' error is below eps once 4^-m Q < |A|.
_Q_RF = (3.0 * _EPS) ** (-1.0 / 6.0)
_Q_RC = (3.0 * _EPS) ** (-1.0 / 8.0)
_Q_RD = (0.25 * _EPS) ** (-1.0 / 6.0)
_MAX_STEPS = 100.0  # each step divides the spread by 4: 4^-100 is far below any bound


def _args(name: str, *xs: Any) -> tuple[Any, list[Any]]:
    xs = [_fnpm.asarray(v) for v in _floats(name, *xs)]
    xs = _fnpm.broadcast_arrays(*xs)
    return xs[0], [_f64(v) for v in xs]


def _duplicate(state: tuple, q: Any, step: Any) -> tuple:
    """Run ``step`` on ``state = (scale, A, ...)`` (``scale = 4^-m``) until every lane's
    ``scale * q < |A|`` (lanes that are not finite do not hold the loop)."""
    def cond(s: tuple) -> Any:
        scale, a = s[0], s[1]
        going = (scale * q >= _fnpm.abs(a)) & _fnpm.isfinite(a) & _fnpm.isfinite(q)
        return _fnpm.any(going) & (s[-1] < _MAX_STEPS)

    def body(s: tuple) -> tuple:
        return (*step(s[:-1]), s[-1] + 1.0)

    return _while(cond, body, (*state, _counter(state[1], numpy.float64)))[:-1]


def _scaled(args: tuple, degree: float, fn: Any) -> Any:
    """``fn(*args)`` for a homogeneous ``fn`` of ``degree`` (a multiple of -1/2), with the
    arguments scaled by an exact power of 4 first where the largest is beyond 1e+-100: the
    duplication steps multiply arguments together (1e300 * 1e300 would overflow). The
    scaling is exact, and is undone by a power of 2: no digits are lost."""
    fnp = _fnpm
    mx = args[0]
    for v in args[1:]:
        mx = fnp.maximum(mx, fnp.abs(v))
    # (Only the largest is looked at: an argument 1e200 times smaller than it may underflow
    # to 0 on the way, which for R_D's z and R_J's p is a pole: inf there.)
    far = (mx > 1e100) | ((mx < 1e-100) & (mx > 0))
    k = fnp.where(far, fnp.floor(0.5 * fnp.log2(fnp.where(far, mx, 1.0))), 0.0)
    down = fnp.exp2(-2.0 * k)
    return fn(*(v * down for v in args)) * fnp.exp2(2.0 * degree * k)


def _lam(x: Any, y: Any, z: Any) -> Any:
    sx, sy, sz = _fnpm.sqrt(x), _fnpm.sqrt(y), _fnpm.sqrt(z)
    return sx * sy + sy * sz + sz * sx


def _rf(x: Any, y: Any, z: Any) -> Any:
    """R_F for ``x, y, z >= 0`` (finite, at most one 0) in float64."""
    fnp = _fnpm
    a0 = (x + y + z) / 3.0
    q = _Q_RF * fnp.maximum(fnp.maximum(fnp.abs(a0 - x), fnp.abs(a0 - y)), fnp.abs(a0 - z))

    def step(s: tuple) -> tuple:
        scale, a, xx, yy, zz = s
        lam = _lam(xx, yy, zz)
        return (0.25 * scale, 0.25 * (a + lam), 0.25 * (xx + lam), 0.25 * (yy + lam),
                0.25 * (zz + lam))

    scale, a, *_ = _duplicate((fnp.ones_like(a0), a0, x, y, z), q, step)
    xs = (a0 - x) * scale / a
    ys = (a0 - y) * scale / a
    zs = -(xs + ys)
    e2 = xs * ys - zs * zs
    e3 = xs * ys * zs
    return (1.0 - e2 / 10.0 + e3 / 14.0 + e2 * e2 / 24.0 - 3.0 * e2 * e3 / 44.0) / fnp.sqrt(a)


def _rc(x: Any, y: Any) -> Any:
    """R_C for ``x >= 0``, ``y > 0`` in float64."""
    fnp = _fnpm
    a0 = (x + 2.0 * y) / 3.0
    q = _Q_RC * fnp.abs(a0 - x)

    def step(s: tuple) -> tuple:
        scale, a, xx, yy = s
        lam = 2.0 * fnp.sqrt(xx) * fnp.sqrt(yy) + yy
        return 0.25 * scale, 0.25 * (a + lam), 0.25 * (xx + lam), 0.25 * (yy + lam)

    scale, a, *_ = _duplicate((fnp.ones_like(a0), a0, x, y), q, step)
    s = (y - a0) * scale / a
    poly = 1.0 + s * s * (3.0 / 10.0 + s * (1.0 / 7.0 + s * (3.0 / 8.0 + s * (
        9.0 / 22.0 + s * (159.0 / 208.0 + s * (9.0 / 8.0))))))
    return poly / fnp.sqrt(a)


def _rd_series(xs: Any, ys: Any, zs: Any, ps: Any, e2: Any, e3: Any, e4: Any, e5: Any) -> Any:
    return (1.0 - 3.0 * e2 / 14.0 + e3 / 6.0 + 9.0 * e2 * e2 / 88.0 - 3.0 * e4 / 22.0
            - 9.0 * e2 * e3 / 52.0 + 3.0 * e5 / 26.0)


def _rd(x: Any, y: Any, z: Any) -> Any:
    """R_D for ``x, y >= 0`` (at most one 0), ``z > 0`` in float64."""
    fnp = _fnpm
    a0 = (x + y + 3.0 * z) / 5.0
    q = _Q_RD * fnp.maximum(fnp.maximum(fnp.abs(a0 - x), fnp.abs(a0 - y)), fnp.abs(a0 - z))

    def step(s: tuple) -> tuple:
        scale, a, xx, yy, zz, acc = s
        lam = _lam(xx, yy, zz)
        den = fnp.sqrt(zz) * (zz + lam)
        acc = fnp.where(den == 0, numpy.inf, acc + scale / fnp.where(den == 0, 1.0, den))
        return (0.25 * scale, 0.25 * (a + lam), 0.25 * (xx + lam), 0.25 * (yy + lam),
                0.25 * (zz + lam), acc)

    scale, a, _, _, _, acc = _duplicate(
        (fnp.ones_like(a0), a0, x, y, z, fnp.zeros_like(a0)), q, step)
    xs = (a0 - x) * scale / a
    ys = (a0 - y) * scale / a
    zs = -(xs + ys) / 3.0
    e2 = xs * ys - 6.0 * zs * zs
    e3 = (3.0 * xs * ys - 8.0 * zs * zs) * zs
    e4 = 3.0 * (xs * ys - zs * zs) * zs * zs
    e5 = xs * ys * zs * zs * zs
    series = _rd_series(xs, ys, zs, zs, e2, e3, e4, e5)
    return scale * series / (a * fnp.sqrt(a)) + 3.0 * acc


def _rc1(t: Any) -> Any:
    """R_C(1, t) for ``t > 0``: atan(sqrt(t - 1)) / sqrt(t - 1), atanh(sqrt(1 - t)) / sqrt(1 - t),
    and near 1 their series sum_k (1 - t)^k / (2k + 1) (both forms cancel there)."""
    fnp = _fnpm
    e = t - 1.0
    small = fnp.abs(e) < 1e-3
    es = fnp.where(small, 0.5, e)
    pos = es > 0
    r = fnp.sqrt(fnp.abs(es))
    # below 1/2, atanh(r) = log((1 + r) / sqrt(t)): 1 - r would lose t's digits (and t tiny
    # would round r to 1, atanh(1) = inf)
    ts = fnp.where(pos | small, 0.25, t)
    low = fnp.log((1.0 + r) / fnp.sqrt(ts))
    mid = fnp.arctanh(fnp.where(pos | (t < 0.5), 0.5, r))
    big = fnp.where(pos, fnp.arctan(r), fnp.where(t < 0.5, low, mid)) / r
    eh = fnp.where(small, e, 0.0)
    series = 1.0 + eh * (-1.0 / 3.0 + eh * (1.0 / 5.0 + eh * (-1.0 / 7.0 + eh * (
        1.0 / 9.0 + eh * (-1.0 / 11.0 + eh / 13.0)))))
    return fnp.where(small, series, big)


def _rj_pos(x: Any, y: Any, z: Any, p: Any) -> Any:
    """R_J for ``x, y, z >= 0`` (at most one 0), ``p > 0`` in float64."""
    fnp = _fnpm
    a0 = (x + y + z + 2.0 * p) / 5.0
    q = _Q_RD * fnp.maximum(fnp.maximum(fnp.abs(a0 - x), fnp.abs(a0 - y)),
                            fnp.maximum(fnp.abs(a0 - z), fnp.abs(a0 - p)))

    def step(s: tuple) -> tuple:
        scale, a, xx, yy, zz, pp, acc = s
        sx, sy, sz = fnp.sqrt(xx), fnp.sqrt(yy), fnp.sqrt(zz)
        lam = sx * sy + sy * sz + sz * sx
        # Carlson's (1979) R_C(alpha, beta) = R_C(1, beta / alpha) / sqrt(alpha) with
        # sqrt(alpha) = p (sx + sy + sz) + sx sy sz, beta = p (p + lam)^2: the same term as
        # his 1995 R_C(1, 1 + e) / d, but beta / alpha is a ratio of sums, where 1 + e
        # cancelled for small p (e near -1).
        sa = pp * (sx + sy + sz) + sx * sy * sz
        beta = pp * (pp + lam) * (pp + lam)
        acc = acc + scale * _rc1(beta / (sa * sa)) / sa
        return (0.25 * scale, 0.25 * (a + lam), 0.25 * (xx + lam), 0.25 * (yy + lam),
                0.25 * (zz + lam), 0.25 * (pp + lam), acc)

    scale, a, _, _, _, _, acc = _duplicate(
        (fnp.ones_like(a0), a0, x, y, z, p, fnp.zeros_like(a0)), q, step)
    xs = (a0 - x) * scale / a
    ys = (a0 - y) * scale / a
    zs = (a0 - z) * scale / a
    ps = -(xs + ys + zs) / 2.0
    e2 = xs * ys + xs * zs + ys * zs - 3.0 * ps * ps
    e3 = xs * ys * zs + 2.0 * e2 * ps + 4.0 * ps * ps * ps
    e4 = (2.0 * xs * ys * zs + e2 * ps + 3.0 * ps * ps * ps) * ps
    e5 = xs * ys * zs * ps * ps
    series = _rd_series(xs, ys, zs, ps, e2, e3, e4, e5)
    return scale * series / (a * fnp.sqrt(a)) + 3.0 * acc


def elliprf(x: Any, y: Any, z: Any) -> Any:
    """Carlson's symmetric integral of the first kind
    ``R_F(x, y, z) = 1/2 int_0^inf ((t + x)(t + y)(t + z))^(-1/2) dt`` for real ``x, y, z >= 0``
    (``inf`` where two are 0, 0 where one is ``inf``, nan for a negative one), as
    ``scipy.special.elliprf``; differentiable.

    Example:
        >>> from funcgrad.scipy.special import elliprf
        >>> round(float(elliprf(0.0, 1.0, 1.0)), 15)   # pi / 2
        1.570796326794897
    """
    like, (x, y, z) = _args("elliprf", x, y, z)
    fnp = _fnpm
    bad = (x < 0) | (y < 0) | (z < 0) | fnp.isnan(x) | fnp.isnan(y) | fnp.isnan(z)
    zeros = (x == 0).astype(numpy.int64) + (y == 0) + (z == 0)
    inf = fnp.isinf(x) | fnp.isinf(y) | fnp.isinf(z)
    ok = ~bad & (zeros < 2) & ~inf
    out = _scaled(tuple(fnp.where(ok, v, 1.0) for v in (x, y, z)), -0.5, _rf)
    out = fnp.where(inf, 0.0, fnp.where(zeros >= 2, numpy.inf, out))
    return _back(fnp.where(bad, numpy.nan, out), like)


def elliprc(x: Any, y: Any) -> Any:
    """Carlson's degenerate integral ``R_C(x, y) = R_F(x, y, y)`` for real ``x >= 0``,
    ``y != 0`` (the Cauchy principal value for ``y < 0``; nan at ``y = 0``, as SciPy), as
    ``scipy.special.elliprc``; differentiable.

    Example:
        >>> from funcgrad.scipy.special import elliprc
        >>> round(float(elliprc(0.0, 1.0)), 15)   # pi / 2
        1.570796326794897
    """
    like, (x, y) = _args("elliprc", x, y)
    fnp = _fnpm
    # SciPy's order: x = inf gives 0 even for a nan y (but nan for y < 0)
    bad = (((x < 0) | (y == 0) | fnp.isnan(x) | fnp.isnan(y))
           & ~((x == numpy.inf) & fnp.isnan(y))) | ((x == numpy.inf) & (y < 0))
    inf = (fnp.isinf(x) | fnp.isinf(y)) & ~bad
    neg = y < 0
    # y < 0: R_C(x, y) = sqrt(x / (x - y)) R_C(x - y, -y) (DLMF 19.2.20)
    ok = ~bad & ~inf
    x, y = fnp.where(ok, x, 1.0), fnp.where(ok, y, 1.0)
    neg = neg & ok
    xs = fnp.where(neg, x - y, x)
    ys = fnp.where(neg, -y, y)
    out = _scaled((xs, ys), -0.5, _rc)
    out = fnp.where(neg, fnp.sqrt(x / fnp.where(neg, xs, 1.0)) * out, out)
    out = fnp.where(inf, 0.0, out)
    return _back(fnp.where(bad, numpy.nan, out), like)


def elliprd(x: Any, y: Any, z: Any) -> Any:
    """Carlson's symmetric integral of the second kind
    ``R_D(x, y, z) = 3/2 int_0^inf ((t + x)(t + y))^(-1/2) (t + z)^(-3/2) dt`` for real
    ``x, y >= 0``, ``z > 0`` (``inf`` where ``x = y = 0`` or ``z = 0``), as
    ``scipy.special.elliprd``; differentiable.

    Example:
        >>> from funcgrad.scipy.special import elliprd
        >>> round(float(elliprd(0.0, 2.0, 1.0)), 12)
        1.797210352103
    """
    like, (x, y, z) = _args("elliprd", x, y, z)
    fnp = _fnpm
    bad = (x < 0) | (y < 0) | (z < 0) | fnp.isnan(x) | fnp.isnan(y) | fnp.isnan(z)
    pole = ((x == 0) & (y == 0)) | (z == 0)
    inf = fnp.isinf(x) | fnp.isinf(y) | fnp.isinf(z)
    ok = ~bad & ~pole & ~inf
    out = _scaled(tuple(fnp.where(ok, v, 1.0) for v in (x, y, z)), -1.5, _rd)
    # SciPy's order: z = 0 is a pole even where x or y is inf; otherwise inf gives 0.
    out = fnp.where(z == 0, numpy.inf, fnp.where(inf, 0.0, fnp.where(pole, numpy.inf, out)))
    return _back(fnp.where(bad, numpy.nan, out), like)


def elliprj(x: Any, y: Any, z: Any, p: Any) -> Any:
    """Carlson's symmetric integral of the third kind
    ``R_J(x, y, z, p) = 3/2 int_0^inf ((t + x)(t + y)(t + z))^(-1/2) (t + p)^-1 dt`` for real
    ``x, y, z >= 0`` (at most one 0) and ``p != 0`` (the Cauchy principal value for ``p < 0``,
    DLMF 19.20.14), as ``scipy.special.elliprj``; differentiable.

    Example:
        >>> from funcgrad.scipy.special import elliprj
        >>> round(float(elliprj(2.0, 3.0, 4.0, 5.0)), 12)
        0.142975796672
    """
    like, (x, y, z, p) = _args("elliprj", x, y, z, p)
    fnp = _fnpm
    # SciPy's order of the special cases: nan or negative x, y, z; two zeros (a pole, unless
    # p = 0); an infinite argument (0, even at p = 0); p = 0 or nan (nan).
    xyz_bad = (x < 0) | (y < 0) | (z < 0) | fnp.isnan(x) | fnp.isnan(y) | fnp.isnan(z)
    xyz_inf = (fnp.isinf(x) | fnp.isinf(y) | fnp.isinf(z)) & ~xyz_bad
    zeros = (x == 0).astype(numpy.int64) + (y == 0) + (z == 0)
    pole = (zeros >= 2) & ~xyz_bad & (p != 0)
    bad = xyz_bad | (~xyz_inf & ~pole & ((p == 0) | fnp.isnan(p)))
    inf = (xyz_inf | fnp.isinf(p)) & ~bad & ~pole
    ok = ~bad & ~pole & ~inf
    x, y, z = (fnp.where(ok, v, 1.0) for v in (x, y, z))
    neg = (p < 0) & ok
    # p < 0 (Numerical Recipes' rj): with x <= y <= z sorted, q = y + (z - y)(y - x)/(y - p) > 0
    # and (y - p) R_J(p) = (q - y) R_J(q) - 3 R_F + 3 R_C(x z / y, p q / y).
    lo = fnp.minimum(fnp.minimum(x, y), z)
    hi = fnp.maximum(fnp.maximum(x, y), z)
    mid = fnp.maximum(fnp.minimum(x, y), fnp.minimum(fnp.maximum(x, y), z))  # exact
    pn = fnp.where(neg, p, -1.0)
    inv = 1.0 / (mid - pn)
    b = inv * (hi - mid) * (mid - lo)
    pt = mid + b
    p_pos = fnp.where(neg, pt, fnp.where(ok, p, 1.0))
    rj = _scaled((x, y, z, p_pos), -1.5, _rj_pos)
    # (on stand-ins off the p < 0 lanes, and each product as a ratio first: 1e300 * 1e300)
    lo_n, hi_n, mid_n, pt_n = (fnp.where(neg, v, 1.0) for v in (lo, hi, mid, pt))
    rho = lo_n * (hi_n / mid_n)
    tau = fnp.where(neg, pn, -1.0) * (pt_n / mid_n)
    # R_C(rho, tau) for tau < 0 as in elliprc
    rc = fnp.sqrt(rho / (rho - tau)) * _scaled((rho - tau, -tau), -0.5, _rc)
    rf = _scaled((lo, mid, hi), -0.5, _rf)
    out = fnp.where(neg, inv * (b * rj + 3.0 * (rc - rf)), rj)
    out = fnp.where(inf, 0.0, fnp.where(pole, numpy.inf, out))
    return _back(fnp.where(bad, numpy.nan, out), like)


def elliprg(x: Any, y: Any, z: Any) -> Any:
    """Carlson's completely symmetric integral
    ``R_G(x, y, z) = 1/4 int_0^inf ((t + x)(t + y)(t + z))^(-1/2)
    (x/(t + x) + y/(t + y) + z/(t + z)) t dt`` for real ``x, y, z >= 0``, as
    ``scipy.special.elliprg``: ``(z R_F - (x - z)(y - z) R_D / 3 + sqrt(x y / z)) / 2`` with
    the middle argument as ``z``; differentiable.

    Example:
        >>> from funcgrad.scipy.special import elliprg
        >>> round(float(elliprg(0.0, 1.0, 1.0)), 15)   # pi / 4
        0.785398163397448
    """
    like, (x, y, z) = _args("elliprg", x, y, z)
    fnp = _fnpm
    bad = (x < 0) | (y < 0) | (z < 0) | fnp.isnan(x) | fnp.isnan(y) | fnp.isnan(z)
    inf = (fnp.isinf(x) | fnp.isinf(y) | fnp.isinf(z)) & ~bad
    x, y, z = (fnp.where(bad | inf, 1.0, v) for v in (x, y, z))
    hi = fnp.maximum(fnp.maximum(x, y), z)
    lo = fnp.minimum(fnp.minimum(x, y), z)
    mid = fnp.maximum(fnp.minimum(x, y), fnp.minimum(fnp.maximum(x, y), z))  # exact
    # lo = mid = 0: R_G(0, 0, z) = sqrt(z) / 2; all 0: 0.
    flat = (mid == 0) & ~bad & ~inf
    ok = ~bad & ~inf & ~flat
    lo, mid, hi = (fnp.where(ok, v, 1.0) for v in (lo, mid, hi))
    # (x - z)(y - z) <= 0 and z > 0 here: no cancellation, and R_D(lo, mid, hi) is finite.
    # DLMF 19.21.10 with the middle argument as z: (x - z)(y - z) <= 0, so the three terms
    # add (no cancellation), and z > 0 keeps R_D finite.
    rf = _scaled((lo, hi, mid), -0.5, _rf)
    rd = _scaled((lo, hi, mid), -1.5, _rd)
    out = 0.5 * (mid * rf + (mid - lo) * ((hi - mid) * rd) / 3.0
                 + fnp.sqrt(lo) * fnp.sqrt(hi / mid))
    sqrt_hi = fnp.sqrt(fnp.where(flat, fnp.maximum(fnp.maximum(x, y), z), 1.0))
    out = fnp.where(flat, 0.5 * sqrt_hi, out)
    out = fnp.where(inf, numpy.inf, out)
    return _back(fnp.where(bad, numpy.nan, out), like)


