"""Hypergeometric functions: hyp1f1 (Kummer's M) and hyp2f1 (Gauss)."""

from __future__ import annotations

from typing import Any

import numpy

from funcgrad.avals import get_aval
from funcgrad.core import Tracer
from funcgrad.ops import special as _sp
from funcgrad.ops.custom_derivatives import custom_jvp
from funcgrad.scipy.special._common import _F64, _counter, _floats, _fnpm, _jvp, _while
from funcgrad.scipy.special._gamma import gamma, gammasgn, rgamma

# ---------------------------------------------------------------------------------------------
# Confluent hypergeometric function 1F1 (Kummer's M)

_HYP1F1_MAX_TERMS = 1000


def _nonpos_int(v: Any) -> Any:
    return (v <= 0) & (v == _fnpm.floor(v))


def _hyp1f1_series(a: Any, b: Any, y: Any) -> Any:
    """``sum_k (a)_k / (b)_k y^k / k!``, one vectorised ``while_loop`` until every lane's
    term is below ``eps`` of its sum (a polynomial's terms become exactly 0)."""
    eps = float(numpy.finfo(_F64).eps)

    def cond(s: tuple) -> Any:
        return (s[0] < _HYP1F1_MAX_TERMS) & ~_fnpm.all(s[3])

    def body(s: tuple) -> tuple:
        k, total, term, done = s
        term = term * (a + k) / (b + k) * y / (k + 1.0)
        total = _fnpm.where(done, total, total + term)
        done = done | (_fnpm.abs(term) <= eps * _fnpm.abs(total)) | ~_fnpm.isfinite(total)
        return k + 1.0, total, term, done

    one = _fnpm.ones_like(y)
    init = (_counter(y, float), one, one, _fnpm.zeros_like(y, dtype=bool))
    return _while(cond, body, init)[1]


def _hyp1f1_asymptotic_sum(a: Any, b: Any, y: Any) -> Any:
    """``sum_k (b - a)_k (1 - a)_k / k! y^-k``, the divergent series of ``M(a, b, y)
    Gamma(a) / (Gamma(b) e^y y^(a - b))`` for large ``y``, cut at its smallest term."""
    eps = float(numpy.finfo(_F64).eps)

    def cond(s: tuple) -> Any:
        return (s[0] < _HYP1F1_MAX_TERMS) & ~_fnpm.all(s[3])

    def body(s: tuple) -> tuple:
        k, total, term, done = s
        new = term * (b - a + k) * (1.0 - a + k) / ((k + 1.0) * y)
        growing = _fnpm.abs(new) > _fnpm.abs(term)  # past the smallest term: stop
        done = done | growing
        total = _fnpm.where(done, total, total + new)
        done = done | (_fnpm.abs(new) <= eps * _fnpm.abs(total)) | ~_fnpm.isfinite(total)
        return k + 1.0, total, _fnpm.where(done, term, new), done

    one = _fnpm.ones_like(y)
    init = (_counter(y, float), one, one, _fnpm.zeros_like(y, dtype=bool))
    return _while(cond, body, init)[1]


def _hyp1f1_values(a: Any, b: Any, x: Any) -> Any:
    """M(a, b, x) in float64. Negative ``x`` goes through Kummer's transformation
    ``M(a, b, x) = e^x M(b - a, b, -x)`` (no cancellation; JAX sums the alternating series
    directly and loses everything below about -30) unless ``a`` is a non-positive integer
    (a polynomial: no cancellation either); then the power series below 100, the asymptotic
    series above, with ``e^x`` folded into its logarithmic prefactor."""
    primal_a, primal_b = a, b
    poly_a = _nonpos_int(a)
    pole = _nonpos_int(b) & ~(poly_a & (a > b) & (a != 0))  # the series meets 1/(b)_k = 1/0
    bad = _fnpm.isnan(a) | _fnpm.isnan(b) | _fnpm.isnan(x) | _fnpm.isinf(x)
    special = bad | pole | (x == 0) | (a == b) | (a == 0) | _fnpm.isinf(a) | _fnpm.isinf(b)
    # the special lanes run the loops on a harmless stand-in (so every lane converges)
    a = _fnpm.where(special, 0.5, a)
    b = _fnpm.where(special, 1.5, b)
    x0 = x
    x = _fnpm.where(special, 1.0, x)
    kummer = (x < 0) & ~poly_a
    a2 = _fnpm.where(kummer, b - a, a)
    y = _fnpm.where(kummer, -x, x)
    poly = _nonpos_int(a2)
    asym = (y >= 100.0) & ~poly
    # power series lanes (the asymptotic ones run it on a harmless stand-in)
    ys = _fnpm.where(asym, 1.0, y)
    series = _hyp1f1_series(a2, b, ys) * _fnpm.where(kummer, _fnpm.exp(-ys), 1.0)
    # asymptotic lanes: Gamma(b)/Gamma(a2) e^y y^(a2 - b) S, times e^-y after Kummer
    ya = _fnpm.where(asym, y, 100.0)
    aa = _fnpm.where(asym, a2, 0.5)
    log_pre = (_sp.lgamma(b) - _sp.lgamma(aa) + (aa - b) * _fnpm.log(ya)
               + _fnpm.where(kummer, 0.0, ya))
    sign = gammasgn(b) * gammasgn(aa)
    asymptotic = sign * _fnpm.exp(log_pre) * _hyp1f1_asymptotic_sum(aa, b, ya)
    out = _fnpm.where(asym, asymptotic, series)
    # SciPy's special values (on the original arguments)
    a_, b_ = primal_a, primal_b
    out = _fnpm.where(x0 == 0, 1.0, out)
    out = _fnpm.where(a_ == b_, _fnpm.exp(x0), out)
    out = _fnpm.where(a_ == 0, 1.0, out)
    out = _fnpm.where(pole, numpy.inf, out)
    return _fnpm.where(bad, numpy.nan, out)


def _hyp1f1_ab_partials_at_special(a: Any, b: Any, x: Any) -> tuple[Any, Any]:
    """``(dM/da, dM/db)`` where ``_hyp1f1_values`` returns a closed form whose derivative in
    ``a`` and ``b`` it does not carry: ``a == b`` (``e^x``) and ``a == 0`` (1). With
    ``H_n(c) = sum_{j<n} 1/(c + j)`` and ``y = |x|``: at ``a == b``, ``x >= 0``,
    ``dM/da = sum_n H_n(a) x^n / n! = -dM/db``; at ``a == 0``, ``x >= 0``,
    ``dM/da = sum_n x^n / (n (b)_n)`` and ``dM/db = 0``; negative ``x`` through Kummer's
    ``M(a, b, x) = e^x M(b - a, b, -x)``, which swaps the two series (all terms of one sign
    for positive parameters: no cancellation)."""
    eps = float(numpy.finfo(_F64).eps)
    neg = x < 0
    y = _fnpm.abs(x)
    same = a == b
    # a == b with x >= 0, or a == 0 with x < 0 (M(b, b, y) after Kummer): the H_n series in c
    use_h = same != neg
    c = _fnpm.where(same, a, b)

    def cond(s: tuple) -> Any:
        return (s[0] < 4 * _HYP1F1_MAX_TERMS) & ~_fnpm.all(s[4])

    def body(s: tuple) -> tuple:
        n, total, pw, h, done = s  # pw: y^n / n! (H series) or y^n / (b)_n (other)
        n1 = n + 1.0
        h = h + 1.0 / (c + n)
        pw = _fnpm.where(use_h, pw * y / n1, pw * y / (b + n))
        term = _fnpm.where(use_h, h * pw, pw / n1)
        total = _fnpm.where(done, total, total + term)
        done = done | (_fnpm.abs(term) <= eps * _fnpm.abs(total)) | ~_fnpm.isfinite(total)
        return n1, total, pw, h, done

    zero = _fnpm.zeros_like(y)
    init = (_counter(y, float), zero, _fnpm.ones_like(y), zero,
            _fnpm.zeros(get_aval(y).shape, bool))
    series = _while(cond, body, init)[1]
    da = _fnpm.where(neg, -_fnpm.exp(x) * series, series)
    db = _fnpm.where(same, -da, 0.0)
    return da, db


@custom_jvp
def _hyp1f1(a: Any, b: Any, x: Any) -> Any:
    return _hyp1f1_values(a, b, x)


@_hyp1f1.defjvp
def _hyp1f1_jvp(primals: tuple, tangents: tuple) -> tuple:
    (a, b, x), (ta, tb, tx) = primals, tangents
    # In a and b: forward mode through the series (which converges with the values); in x
    # the closed form dM/dx = a/b M(a + 1, b + 1, x).
    out, t_ab = _jvp(lambda a_, b_: _hyp1f1_values(a_, b_, x), (a, b), (ta, tb))
    # Where the value is a closed form (a == b, a == 0) the series' tangent is lost with it.
    closed = (((a == b) | (a == 0)) & (x != 0) & _fnpm.isfinite(x) & _fnpm.isfinite(a)
              & _fnpm.isfinite(b) & ~_nonpos_int(b))
    if _fnpm.any(closed) if not isinstance(closed, Tracer) else True:
        sa = _fnpm.where(closed, a, 0.5)
        sb = _fnpm.where(closed, b, 1.5)
        da, db = _hyp1f1_ab_partials_at_special(sa, sb, _fnpm.where(closed, x, 1.0))
        t_ab = _fnpm.where(closed, da * ta + db * tb, t_ab)
    return out, t_ab + tx * (a / b) * _hyp1f1(a + 1.0, b + 1.0, x)


@custom_jvp
def _hyp1f1_x(a: Any, b: Any, x: Any) -> Any:
    return _hyp1f1_values(a, b, x)


@_hyp1f1_x.defjvp
def _hyp1f1_x_jvp(primals: tuple, tangents: tuple) -> tuple:
    # Only used where a and b are constants of every transformation: the loop is never
    # differentiated.
    (a, b, x), (_, _, tx) = primals, tangents
    return _hyp1f1_x(a, b, x), tx * (a / b) * _hyp1f1_x(a + 1.0, b + 1.0, x)


def hyp1f1(a: Any, b: Any, x: Any) -> Any:
    """Kummer's confluent hypergeometric function ``1F1(a; b; x) = sum_k (a)_k / (b)_k x^k /
    k!`` for real arguments, as ``scipy.special.hyp1f1`` (SciPy's values at ``a = 0``,
    ``a = b``, the poles of non-positive integer ``b``: ``inf``, and ``nan`` for infinite
    ``x``). Negative ``x`` uses Kummer's transformation, so it stays accurate where JAX's
    series cancels. Differentiable in all three arguments: in ``x`` by ``a/b 1F1(a + 1;
    b + 1; x)``, in ``a`` and ``b`` by differentiating the series. Computed in float64;
    float32 stays float32.

    Example:
        >>> import funcgrad
        >>> from funcgrad.scipy.special import hyp1f1
        >>> round(float(hyp1f1(1.0, 2.0, 1.0)), 12)   # (e - 1) / 1
        1.718281828459
        >>> round(float(hyp1f1(0.5, 1.5, -30.0)), 12)
        0.16180215938
        >>> round(float(funcgrad.grad(hyp1f1, argnums=2)(1.0, 2.0, 1.0)), 12)   # M(2, 3, 1) / 2
        1.0
    """
    a, b, x = _floats("hyp1f1", a, b, x)
    a, b, x = _fnpm.broadcast_arrays(_fnpm.asarray(a), _fnpm.asarray(b), _fnpm.asarray(x))
    dt = get_aval(x).dtype
    a64, b64, x64 = a.astype(_F64), b.astype(_F64), x.astype(_F64)
    if isinstance(a, Tracer) or isinstance(b, Tracer):
        return _hyp1f1(a64, b64, x64).astype(dt)
    return _hyp1f1_x(a64, b64, x64).astype(dt)


# ---------------------------------------------------------------------------------------------
# Gauss' hypergeometric function 2F1

_HYP2F1_MAX_TERMS = 60000  # the direct series at z -> 1 when c - a - b is an integer


def _hyp2f1_series(a: Any, b: Any, c: Any, z: Any) -> Any:
    """``sum_k (a)_k (b)_k / (c)_k z^k / k!`` for ``|z| < 1`` (or a terminating one), one
    vectorised ``while_loop`` until every lane's term is below ``eps`` of its sum."""
    eps = float(numpy.finfo(_F64).eps)

    def cond(s: tuple) -> Any:
        return (s[0] < _HYP2F1_MAX_TERMS) & ~_fnpm.all(s[3])

    def body(s: tuple) -> tuple:
        k, total, term, done = s
        term = term * (a + k) * (b + k) / ((c + k) * (k + 1.0)) * z
        total = _fnpm.where(done, total, total + term)
        done = done | (_fnpm.abs(term) <= eps * _fnpm.abs(total)) | ~_fnpm.isfinite(total)
        return k + 1.0, total, term, done

    one = _fnpm.ones_like(z)
    init = (_counter(z, float), one, one, _fnpm.zeros_like(z, dtype=bool))
    return _while(cond, body, init)[1]


def _hyp2f1_values(a: Any, b: Any, c: Any, x: Any) -> Any:
    """2F1(a, b; c; x) in float64 for real ``x <= 1`` (SciPy's ``inf`` above, unless the
    series terminates). ``x < 0``: Pfaff's transformation ``(1 - x)^-a 2F1(a, c - b; c;
    x / (x - 1))`` onto ``[0, 1)``; there the series up to 0.9 and, above, the ``1 - z``
    connection formula (two series in ``1 - z``) where ``c - a - b`` is not an integer, else
    the series itself (slow but exact: its terms fall like ``z^k``)."""
    pa, pb = _nonpos_int(a), _nonpos_int(b)
    poly = pa | pb
    pole = _nonpos_int(c) & ~((pa & (a > c)) | (pb & (b > c)))
    bad = _fnpm.isnan(a) | _fnpm.isnan(b) | _fnpm.isnan(c) | _fnpm.isnan(x)
    trivial = (a == 0) | (b == 0) | (x == 0)
    d = c - a - b
    at_one = (x == 1) & ~poly
    above = (x > 1) & ~poly
    special = bad | pole | trivial | at_one | above | _fnpm.isinf(x)
    a0, b0, c0, x0 = a, b, c, x
    a = _fnpm.where(special, 0.5, a)
    b = _fnpm.where(special, 0.5, b)
    c = _fnpm.where(special, 1.5, c)
    x = _fnpm.where(special, 0.25, x)
    d = c - a - b
    # polynomial lanes: the terminating series at x itself
    pfaff = (x < 0) & ~poly
    z = _fnpm.where(pfaff, x / (x - 1.0), x)
    b2 = _fnpm.where(pfaff, c - b, b)
    pre = _fnpm.where(pfaff, _fnpm.exp(-a * _fnpm.log1p(-_fnpm.where(pfaff, x, 0.0))), 1.0)
    d2 = c - a - b2
    near_int = _fnpm.abs(d2 - _fnpm.round(d2)) < 1e-9
    connect = (z > 0.9) & ~poly & ~near_int
    zs = _fnpm.where(connect, 0.5, z)
    direct = _hyp2f1_series(a, b2, c, zs)
    # the 1 - z connection formula on its lanes (stand-ins elsewhere)
    ac = _fnpm.where(connect, a, 0.5)
    bc = _fnpm.where(connect, b2, 0.5)
    cc = _fnpm.where(connect, c, 1.7)
    dc = cc - ac - bc
    w = _fnpm.where(connect, 1.0 - z, 0.05)
    t1 = gamma(cc) * gamma(dc) / (gamma(cc - ac) * gamma(cc - bc)) * _hyp2f1_series(
        ac, bc, 1.0 - dc, w)
    t2 = (_fnpm.exp(dc * _fnpm.log(w)) * gamma(cc) * gamma(-dc) / (gamma(ac) * gamma(bc))
          * _hyp2f1_series(cc - ac, cc - bc, dc + 1.0, w))
    out = pre * _fnpm.where(connect, t1 + t2, direct)
    # SciPy's special values, on the original arguments
    a, b, c, x, d = a0, b0, c0, x0, c0 - a0 - b0
    gauss_ok = at_one & (d > 0)
    ag = _fnpm.where(gauss_ok, a, 0.5)
    bg = _fnpm.where(gauss_ok, b, 0.5)
    cg = _fnpm.where(gauss_ok, c, 2.0)
    # 1 / Gamma: Gauss' sum is 0 where c - a or c - b is a pole (hyp2f1(-2.5, 2.5, 0.5, 1)).
    gauss = gamma(cg) * gamma(cg - ag - bg) * rgamma(cg - ag) * rgamma(cg - bg)
    # d <= 0: the sum diverges with the sign of its leading term as x -> 1,
    # Gamma(c) Gamma(-d) / (Gamma(a) Gamma(b)) (Gamma(c) / (Gamma(a) Gamma(b)) at d = 0).
    dd = _fnpm.where(gauss_ok | (d >= 0), -1.0, d)
    sign = gammasgn(c) * gammasgn(a) * gammasgn(b) * gammasgn(-dd)
    out = _fnpm.where(at_one, _fnpm.where(d > 0, gauss, sign * numpy.inf), out)
    out = _fnpm.where(above | (_fnpm.isinf(x) & ~poly), numpy.inf, out)
    out = _fnpm.where(trivial, 1.0, out)
    out = _fnpm.where(pole, numpy.inf, out)
    return _fnpm.where(bad, numpy.nan, out)


@custom_jvp
def _hyp2f1(a: Any, b: Any, c: Any, x: Any) -> Any:
    return _hyp2f1_values(a, b, c, x)


@_hyp2f1.defjvp
def _hyp2f1_jvp(primals: tuple, tangents: tuple) -> tuple:
    (a, b, c, x), (ta, tb, tc, tx) = primals, tangents
    # In a, b, c: forward mode through the series and transformations; in x the closed form
    # d/dx 2F1 = a b / c 2F1(a + 1, b + 1; c + 1; x).
    out, t_abc = _jvp(lambda a_, b_, c_: _hyp2f1_values(a_, b_, c_, x), (a, b, c), (ta, tb, tc))
    return out, t_abc + tx * (a * b / c) * _hyp2f1(a + 1.0, b + 1.0, c + 1.0, x)


@custom_jvp
def _hyp2f1_x(a: Any, b: Any, c: Any, x: Any) -> Any:
    return _hyp2f1_values(a, b, c, x)


@_hyp2f1_x.defjvp
def _hyp2f1_x_jvp(primals: tuple, tangents: tuple) -> tuple:
    # Only used where a, b and c are constants of every transformation.
    (a, b, c, x), (_, _, _, tx) = primals, tangents
    return _hyp2f1_x(a, b, c, x), tx * (a * b / c) * _hyp2f1_x(a + 1.0, b + 1.0, c + 1.0, x)


def hyp2f1(a: Any, b: Any, c: Any, x: Any) -> Any:
    """Gauss' hypergeometric function ``2F1(a, b; c; x) = sum_k (a)_k (b)_k / (c)_k x^k / k!``
    for real arguments and ``x <= 1``, as ``scipy.special.hyp2f1`` (``inf`` for ``x > 1``
    unless ``a`` or ``b`` is a non-positive integer, at the poles of ``c``, and at ``x = 1``
    when ``c - a - b <= 0``; Gauss' sum at ``x = 1`` otherwise). Negative ``x`` goes through
    Pfaff's transformation, ``x`` near 1 through the ``1 - x`` connection formula, so both
    ends stay accurate. Differentiable in all four arguments (in ``x`` by ``a b / c
    2F1(a + 1, b + 1; c + 1; x)``). Computed in float64; float32 stays float32.

    Example:
        >>> import funcgrad
        >>> from funcgrad.scipy.special import hyp2f1
        >>> round(float(hyp2f1(1.0, 1.0, 2.0, -1.0)), 12)   # log(2)
        0.69314718056
        >>> round(float(funcgrad.grad(hyp2f1, argnums=3)(1.0, 2.0, 2.0, 0.5)), 12)   # 1/(1-x)^2
        4.0
    """
    a, b, c, x = _floats("hyp2f1", a, b, c, x)
    a, b, c, x = _fnpm.broadcast_arrays(*(_fnpm.asarray(v) for v in (a, b, c, x)))
    dt = get_aval(x).dtype
    args = [v.astype(_F64) for v in (a, b, c, x)]
    if any(isinstance(v, Tracer) for v in (a, b, c)):
        return _hyp2f1(*args).astype(dt)
    return _hyp2f1_x(*args).astype(dt)
