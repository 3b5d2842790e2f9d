"""Gamma and beta functions: gammaln, digamma/psi, polygamma, gamma, gammasgn, loggamma,
rgamma, beta, betaln, multigammaln."""

from __future__ import annotations

import math
from typing import Any

import numpy

import funcgrad.ops.elementwise as _ew
import funcgrad.ops.shape as _shape
from funcgrad.avals import get_aval
from funcgrad.backend import device_put, get_default_device
from funcgrad.core import Tracer
from funcgrad.numpy import _elementwise as _fe
from funcgrad.ops import special as _sp
from funcgrad.scipy.special._common import _F64, _floats, _fnp, _fnpm, _like


def gammaln(x: Any) -> Any:
    """``log|Gamma(x)|``.

    Example:
        >>> from funcgrad.scipy.special import gammaln
        >>> round(float(gammaln(5.0)), 12)   # log(4!)
        3.178053830348
    """
    return _sp.lgamma(_floats("gammaln", x)[0])


def digamma(x: Any) -> Any:
    """The digamma function ``d/dx log Gamma(x)``.

    Example:
        >>> from funcgrad.scipy.special import digamma
        >>> round(float(digamma(1.0)), 12)
        -0.577215664902
    """
    return _sp.digamma(_floats("digamma", x)[0])


psi = digamma


def polygamma(n: Any, x: Any) -> Any:
    """``n``-th derivative of the digamma function; ``n`` a non-negative integer (or a
    concrete integer array broadcasting with ``x``).

    Example:
        >>> from funcgrad.scipy.special import polygamma
        >>> round(float(polygamma(1, 1.0)), 12)   # pi^2 / 6
        1.644934066848
    """
    (x,) = _floats("polygamma", x)
    # SciPy's polygamma is float64 whatever the input (it multiplies by gamma(n + 1.0)).
    x = _ew.convert_element_type(x, _F64) if not isinstance(x, float) else x
    if isinstance(n, Tracer):
        n = n._concrete("polygamma's order n")
    if isinstance(n, bool | int | numpy.integer):
        return _sp.polygamma(int(n), x)
    n_host = numpy.asarray(n.get() if hasattr(n, "get") else n)
    # As SciPy, a float order is fine when it is a whole number (polygamma(1.0, x)); a
    # fractional one is an error here (SciPy's nan would hide the mistake).
    if n_host.dtype.kind not in "iufb" or (
            n_host.dtype.kind == "f" and not numpy.all(n_host == numpy.floor(n_host))):
        raise TypeError(f"polygamma: n must be a non-negative integer (array), got {n!r}")
    if n_host.ndim == 0:
        return _sp.polygamma(int(n_host), x)
    ks = sorted({int(k) for k in n_host.ravel()})
    shape = numpy.broadcast_shapes(n_host.shape, get_aval(x).shape)
    out: Any = None
    for k in ks:
        val = _shape.broadcast_to(_sp.polygamma(k, x), shape)
        if out is None:
            out = val
            continue
        where_k = device_put(n_host == k, get_aval(val).device or get_default_device())
        out = _fe.where(where_k, val, out)
    return out


def gammasgn(x: Any) -> Any:
    """Sign of the gamma function: 1 or -1; nan at the poles ``0, -1, -2, ...`` (but
    ``copysign(1, x)`` at ``x = ±0``), at ``-inf`` and nan. Its derivative is zero.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import gammasgn
        >>> gammasgn(np.array([2.5, -0.5, -1.5, -2.0]))
        array([ 1., -1.,  1., nan])
    """
    (x,) = _floats("gammasgn", x)
    fnp = _fnp()
    x = fnp.asarray(x)
    x = _ew.stop_gradient(x)
    fl = fnp.floor(x)
    # fmod(+-inf, 2) is nan with NumPy's warning: the infinities are settled below anyway
    odd = fnp.not_equal(fnp.fmod(fnp.where(fnp.isinf(fl), 0.0, fl), 2.0), 0.0)
    neg = fnp.where(odd, _like(x, -1.0), _like(x, 1.0))
    out = fnp.where(fnp.equal(x, fl), _like(x, numpy.nan), neg)
    out = fnp.where(fnp.equal(x, 0.0), fnp.copysign(_like(x, 1.0), x), out)
    out = fnp.where(fnp.greater(x, 0.0), _like(x, 1.0), out)
    return fnp.where(fnp.isnan(x), x, out)


def gamma(x: Any) -> Any:
    """The gamma function for real ``x`` (``±inf`` at ``±0``, nan at the negative integers).

    Computed as ``gammasgn(x) * exp(gammaln(x))`` (relative error grows like
    ``|gammaln(x)| * eps``, about 1e-13 near the float64 overflow at 171.6); its derivative
    is ``gamma(x) * digamma(x)``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import gamma
        >>> gamma(np.array([5.0, 0.5, -0.5]))
        array([24.        ,  1.77245385, -3.5449077 ])
    """
    (x,) = _floats("gamma", x)
    lg = _sp.lgamma(x)
    # Past the overflow (x > 171.6 in float64) gamma is +-inf, without exp's warning (SciPy).
    dt = get_aval(_fnpm.asarray(lg)).dtype
    big = _ew.gt(lg, float(numpy.log(numpy.finfo(dt).max)))
    mag = _ew.select_n(big, _ew.exp(_ew.select_n(big, lg, 0.0)), numpy.inf)
    return _ew.mul(gammasgn(x), mag)


def loggamma(x: Any) -> Any:
    """``log(Gamma(x))`` for real ``x``: equal to :func:`gammaln` for ``x >= 0``, nan for
    ``x < 0`` (where the real logarithm of a negative gamma is undefined; complex input is not
    supported).

    Example:
        >>> from funcgrad.scipy.special import loggamma
        >>> round(float(loggamma(5.0)), 12)
        3.178053830348
    """
    (x,) = _floats("loggamma", x)
    neg = _ew.lt(x, 0)
    x_safe = _ew.select_n(neg, x, 1.0)
    return _ew.select_n(neg, _sp.lgamma(x_safe), numpy.nan)


# TOMS 708 (Didonato & Morris), ALGDIV: log(Gamma(b) / Gamma(a + b)) for b >= 8 without the
# cancellation of two large gammaln values.
_ALGDIV_C = (0.833333333333333e-01, -0.277777777760991e-02, 0.793650666825390e-03,
             -0.595202931351870e-03, 0.837308034031215e-03, -0.165322962780713e-02)


def _algdiv(a: Any, b: Any) -> Any:
    fnp = _fnp()
    c0, c1, c2, c3, c4, c5 = _ALGDIV_C
    a_big = fnp.greater(a, b)
    h = fnp.where(a_big, b / a, a / b)
    c = fnp.where(a_big, 1.0 / (1.0 + h), h / (1.0 + h))
    x = fnp.where(a_big, h / (1.0 + h), 1.0 / (1.0 + h))
    d = fnp.where(a_big, a + (b - 0.5), b + (a - 0.5))
    x2 = x * x
    s3 = 1.0 + (x + x2)
    s5 = 1.0 + (x + x2 * s3)
    s7 = 1.0 + (x + x2 * s5)
    s9 = 1.0 + (x + x2 * s7)
    s11 = 1.0 + (x + x2 * s9)
    t = (1.0 / b) ** 2
    w = ((((c5 * s11 * t + c4 * s9) * t + c3 * s7) * t + c2 * s5) * t + c1 * s3) * t + c0
    w = w * (c / b)
    u = d * fnp.log1p(a / b)
    v = a * (fnp.log(b) - 1.0)
    return fnp.where(fnp.greater(u, v), (w - v) - u, (w - u) - v)


def betaln(a: Any, b: Any) -> Any:
    """``log|B(a, b)|``, the logarithm of the absolute value of the beta function.

    For ``max(a, b) >= 8`` (and positive arguments) the difference of the two large gammaln
    terms is computed directly (TOMS 708's ``algdiv``), so e.g. ``betaln(1, 1e8)`` keeps full
    precision.

    Example:
        >>> from funcgrad.scipy.special import betaln
        >>> round(float(betaln(2.0, 3.0)), 12)   # log(1/12)
        -2.484906649788
    """
    a, b = _floats("betaln", a, b)
    a, (a_m, b_m), sgn, at_inf = _beta_negint(a, b)
    fnp = _fnp()
    a, b = a_m, b_m
    # One infinite argument beside a positive finite one: B -> 0 (SciPy's -inf; the
    # formulas would give inf - inf); those lanes compute on stand-ins, quietly.
    inf_pos = (((a == numpy.inf) & (b > 0) & (b < numpy.inf))
               | ((b == numpy.inf) & (a > 0) & (a < numpy.inf)))
    # Beside a negative (non-integer) one, B grows like inf^-b: |B| = inf.
    inf_neg = (((a == numpy.inf) & (b < 0) & (b > -numpy.inf))
               | ((b == numpy.inf) & (a < 0) & (a > -numpy.inf)))
    at_inf = at_inf | inf_neg
    a = fnp.where(inf_pos | inf_neg, 1.0, a)
    b = fnp.where(inf_pos | inf_neg, 1.0, b)
    lo, hi = fnp.minimum(a, b), fnp.maximum(a, b)
    big = fnp.logical_and(fnp.greater_equal(hi, 8.0), fnp.greater(lo, 0.0)) & (hi < numpy.inf)
    # Safe stand-ins where a branch is not taken keep nan out of the other's derivative.
    lo_a, hi_a = fnp.where(big, lo, 1.0), fnp.where(big, hi, 8.0)
    asym = _sp.lgamma(lo_a) + _algdiv(lo_a, hi_a)
    # A negative lo beside a huge hi (Cephes' lbeta_asymp): lgamma(hi + lo) - lgamma(hi) as
    # lo log(hi) plus its 1/hi series, without the cancellation of two huge values.
    far = (lo < 0) & (hi > 1e6) & (hi > 1e6 * fnp.abs(lo)) & (hi < numpy.inf)
    lo_f, hi_f = fnp.where(far, lo, -0.5), fnp.where(far, hi, 1e7)
    far_v = (_sp.lgamma(lo_f) - lo_f * fnp.log(hi_f)
             + lo_f * (1.0 - lo_f) / (2.0 * hi_f)
             + lo_f * (1.0 - lo_f) * (1.0 - 2.0 * lo_f) / (12.0 * hi_f * hi_f)
             - lo_f * lo_f * (1.0 - lo_f) * (1.0 - lo_f) / (12.0 * hi_f ** 3))
    ok = ~(big | far) & fnp.isfinite(a) & fnp.isfinite(b)
    a_d, b_d = fnp.where(ok, a, 1.0), fnp.where(ok, b, 1.0)
    direct = _sp.lgamma(a_d) + _sp.lgamma(b_d) - _sp.lgamma(a_d + b_d)
    out = fnp.where(big, asym, fnp.where(far, far_v, direct))
    # What is left outside (inf beside inf, nan beside a non-pole) is nan, as SciPy.
    out = fnp.where(big | far | ok, out, numpy.nan)
    out = fnp.where(inf_pos, -numpy.inf, out)
    return fnp.where(at_inf, numpy.inf, out)


def _beta_negint(a: Any, b: Any) -> tuple[Any, tuple[Any, Any], Any, Any]:
    """SciPy's (Cephes') rule at a non-positive integer argument, where Gamma has a pole:
    with ``a`` such a pole (else ``b``) and the other argument ``c`` a positive integer below
    ``1 - a``, ``B(a, c) = (-1)^c B(1 - a - c, c)`` (the poles cancel); otherwise ``|B| = inf``
    (signed by ``(-1)^c`` where ``c`` is an integer with ``1 - a - c > 0``).

    Returns ``(a, (a', b'), sign, at_inf)``: the arguments to evaluate B at (stand-ins 1, 1 in
    the infinite lanes), the sign factor, and where the magnitude is infinite."""
    fnp = _fnp()

    def negint(v: Any) -> Any:
        # Cephes casts to int: a pole beyond the int range is simply inf.
        return (v <= 0) & (v == fnp.floor(v))

    na, nb = negint(a), negint(b)
    pole = na | nb
    p_arg = fnp.where(na, a, b)
    c = fnp.where(na, b, a)
    ok = fnp.isfinite(a) & fnp.isfinite(b)  # stand-ins keep inf - inf (and its warning) out
    a_f, b_f = fnp.where(ok, a, 0.0), fnp.where(ok, b, 0.0)
    c_int = (c == fnp.floor(c)) & ok
    reflect = pole & c_int & (1.0 - a_f - b_f > 0) & (p_arg > -2.0 ** 31)
    finite = reflect & (c >= 1)
    c_s = fnp.where(reflect, c, 0.0)
    sgn = fnp.where(reflect, 1.0 - 2.0 * fnp.fmod(fnp.abs(c_s), 2.0), 1.0)
    a_m = fnp.where(finite, 1.0 - a_f - b_f, fnp.where(pole, 1.0, a))
    b_m = fnp.where(finite, c, fnp.where(pole, 1.0, b))
    return a, (a_m, b_m), sgn, pole & ~finite


def beta(a: Any, b: Any) -> Any:
    """The beta function ``Gamma(a) Gamma(b) / Gamma(a + b)`` (real arguments).

    At a pole of ``Gamma(a)`` or ``Gamma(b)`` the value is SciPy's limit: finite where the
    poles cancel (``beta(1, -1) = -1``, ``beta(-3, 1) = -1/3``), else ``+-inf``.

    Example:
        >>> from funcgrad.scipy.special import beta
        >>> round(float(beta(2.0, 3.0)), 12)
        0.083333333333
    """
    a, b = _floats("beta", a, b)
    fnp = _fnp()
    _, (a_m, b_m), sgn_p, at_inf = _beta_negint(a, b)
    ab = a_m + b_m
    # A pole of Gamma(a + b) alone: B = 0 (gammasgn is nan there).
    ab_pole = (ab <= 0) & (ab == fnp.floor(ab))
    sgn = gammasgn(a_m) * gammasgn(b_m) * gammasgn(fnp.where(ab_pole, 1.0, ab))
    val = sgn * fnp.exp(betaln(a_m, b_m))
    return sgn_p * fnp.where(at_inf, numpy.inf, val)


def multigammaln(a: Any, d: int) -> Any:
    """Log of the multivariate gamma function of dimension ``d`` (a Python int):
    ``d(d-1)/4 log(pi) + sum_j gammaln(a - j/2)``, ``j = 0 .. d-1``.

    SciPy raises ``ValueError`` unless ``a > (d - 1)/2`` everywhere; here (values may be traced)
    those elements are nan. float32 stays float32 (SciPy returns float64).

    Example:
        >>> from funcgrad.scipy.special import multigammaln
        >>> round(float(multigammaln(3.0, 2)), 12)
        1.550194993958
    """
    if isinstance(d, Tracer):
        d = d._concrete("multigammaln's dimension d")
    if isinstance(d, bool) or not isinstance(d, int | numpy.integer) or int(d) < 1:
        raise ValueError(f"multigammaln: d must be a positive integer, got {d!r}")
    d = int(d)
    (a,) = _floats("multigammaln", a)
    fnp = _fnp()
    ok = fnp.greater(a, 0.5 * (d - 1))
    a_safe = fnp.where(ok, a, float(d))
    out = sum(_sp.lgamma(a_safe - 0.5 * j) for j in range(d)) + d * (d - 1) * 0.25 * math.log(
        math.pi)
    return fnp.where(ok, out, numpy.nan)


def rgamma(x: Any) -> Any:
    """Reciprocal of the gamma function, ``1 / gamma(x)`` (entire: 0 at the poles
    ``0, -1, -2, ...`` and at ``+-inf``), as ``scipy.special.rgamma``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import rgamma
        >>> rgamma(np.array([1.0, 5.0, 0.0, -2.0]))
        array([1.        , 0.04166667, 0.        , 0.        ])
    """
    (x,) = _floats("rgamma", x)
    fnp = _fnp()
    x = fnp.asarray(x)
    pole = (x <= 0) & (x == fnp.floor(x)) & (x > -numpy.inf)
    big = x == numpy.inf
    xs = fnp.where(pole | big | fnp.isnan(x), 0.5, x)
    val = gammasgn(xs) * fnp.exp(-gammaln(xs))
    val = fnp.where(pole | big, 0.0, val)
    val = fnp.where(x == -numpy.inf, 0.0, val)  # SciPy's 0 at -inf
    return fnp.where(fnp.isnan(x), numpy.nan, val)
