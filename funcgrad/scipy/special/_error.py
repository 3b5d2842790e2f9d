"""Error functions and their relatives: erf, erfc, erfinv, erfcinv, erfcx, Dawson's integral
(dawsn), the Fresnel integrals and the Faddeeva function wofz."""

from __future__ import annotations

import math
from typing import Any

import numpy

from funcgrad.avals import get_aval
from funcgrad.ops import special as _sp
from funcgrad.ops.custom_derivatives import custom_jvp
from funcgrad.scipy.special._common import _F32, _F64, _floats, _fnpm, _polyval

# ---------------------------------------------------------------------------------------------
# Primitives


def erf(z: Any) -> Any:
    """Error function.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import erf
        >>> erf(np.array([-1.0, 0.0, 1.0]))
        array([-0.84270079,  0.        ,  0.84270079])
    """
    return _sp.erf(_floats("erf", z)[0])


def erfc(x: Any) -> Any:
    """Complementary error function ``1 - erf(x)`` (accurate in the tail).

    Example:
        >>> from funcgrad.scipy.special import erfc
        >>> print(f"{float(erfc(5.0)):.12e}")
        1.537459794428e-12
    """
    return _sp.erfc(_floats("erfc", x)[0])


def erfinv(y: Any) -> Any:
    """Inverse error function on ``[-1, 1]``.

    Example:
        >>> from funcgrad.scipy.special import erfinv
        >>> round(float(erfinv(0.5)), 10)
        0.4769362762
    """
    return _sp.erfinv(_floats("erfinv", y)[0])


def erfcinv(y: Any) -> Any:
    """Inverse complementary error function on ``[0, 2]``.

    Example:
        >>> from funcgrad.scipy.special import erfcinv
        >>> round(float(erfcinv(0.5)), 10)
        0.4769362762
    """
    return _sp.erfcinv(_floats("erfcinv", y)[0])

_SQRT_PI = math.sqrt(math.pi)


def _erfcx_value(x: Any) -> Any:
    """exp(x^2) erfc(x) in float64: directly below 25 (exp(x^2) erfc(x) loses only the
    rounding of x^2 there), the asymptotic series above (its ninth term is below 1e-17)."""
    small = x < 25.0
    # Below -26 erfc(x) is 2 exactly: 2 exp(x^2) as one exp, which overflows (to SciPy's
    # inf) only where the value does; the stand-in keeps exp's overflow warning out.
    neg = x < -26.0
    xs = _fnpm.where(small & ~neg, x, 0.0)
    xc = _fnpm.where(neg, _fnpm.maximum(x, -27.0), 0.0)  # x * x itself would overflow far out
    over = neg & (xc * xc + math.log(2.0) > math.log(numpy.finfo(_F64).max))
    xn = _fnpm.where(neg & ~over, x, 0.0)
    direct = _fnpm.where(neg, _fnpm.where(over, _fnpm.inf, _fnpm.exp(xn * xn + math.log(2.0))),
                         _fnpm.exp(xs * xs) * erfc(xs))
    xl = _fnpm.where(small, 25.0, x)
    inv2 = 0.5 * (1.0 / xl) * (1.0 / xl)  # (x^2 overflows, with a warning, past 1e154)
    series = _fnpm.ones_like(xl)
    term = _fnpm.ones_like(xl)
    for k in range(1, 9):
        term = -term * (2 * k - 1) * inv2
        series = series + term
    asym = _fnpm.where(_fnpm.isinf(xl), 0.0, series / (xl * _SQRT_PI))
    return _fnpm.where(small, direct, asym)


@custom_jvp
def _erfcx(x: Any) -> Any:
    return _erfcx_value(x)


@_erfcx.defjvp
def _erfcx_jvp(primals: tuple, tangents: tuple) -> tuple:
    (x,), (tx,) = primals, tangents
    y = _erfcx(x)
    return y, (2.0 * x * y - 2.0 / _SQRT_PI) * tx


def erfcx(x: Any) -> Any:
    """Scaled complementary error function ``exp(x**2) * erfc(x)``, accurate for large ``x``
    (where ``erfc`` underflows); ``inf`` below about -26.6, as SciPy. Its derivative is
    ``2 x erfcx(x) - 2 / sqrt(pi)``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import erfcx
        >>> erfcx(np.array([0.0, 1.0, 30.0]))
        array([1.        , 0.42758358, 0.01879589])
    """
    (x,) = _floats("erfcx", x)
    dt = get_aval(_fnpm.asarray(x)).dtype
    return _erfcx(_fnpm.asarray(x).astype(_F64)).astype(dt)


# Dawson's integral: Cephes' rational approximations (Cody, Paciorek & Thacher 1970) on
# |x| < 3.25, [3.25, 6.25) and above, highest power first.
_DAWSN_AN = (1.13681498971755972054e-11, 8.49262267667473811108e-10,
             1.94434204175553054283e-8, 9.53151741254484363489e-7,
             3.07828309874913200438e-6, 3.52513368520288738649e-4,
             -8.50149846724410912031e-4, 4.22618223005546594270e-2,
             -9.17480371773452345351e-2, 9.99999999999999994612e-1)
_DAWSN_AD = (2.40372073066762605484e-11, 1.48864681368493396752e-9,
             5.21265281010541664570e-8, 1.27258478273186970203e-6,
             2.32490249820789513991e-5, 3.25524741826057911661e-4,
             3.48805814657162590916e-3, 2.79448531198828973716e-2,
             1.58874241960120565368e-1, 5.74918629489320327824e-1,
             1.00000000000000000539e0)
_DAWSN_BN = (5.08955156417900903354e-1, -2.44754418142697847934e-1,
             9.41512335303534411857e-2, -2.18711255142039025206e-2,
             3.66207612329569181322e-3, -4.23209114460388756528e-4,
             3.59641304793896631888e-5, -2.14640351719968974225e-6,
             9.10010780076391431042e-8, -2.40274520828250956942e-9,
             3.59233385440928410398e-11)
_DAWSN_BD = (1.00000000000000000000e0, -6.31839869873368190192e-1,
             2.36706788228248691528e-1, -5.31806367003223277662e-2,
             8.48041718586295374409e-3, -9.47996768486665330168e-4,
             7.81025592944552338085e-5, -4.55875153252442634831e-6,
             1.89100358111421846170e-7, -4.91324691331920606875e-9,
             7.18466403235734541950e-11)
_DAWSN_CN = (-5.90592860534773254987e-1, 6.29235242724368800674e-1,
             -1.72858975380388136411e-1, 1.64837047825189632310e-2,
             -4.86827613020462700845e-4)
_DAWSN_CD = (1.00000000000000000000e0, -2.69820057197544900361e0,
             1.73270799045947845857e0, -3.93708582281939493482e-1,
             3.44278924041233391079e-2, -9.73655226040941223894e-4)


def _dawsn_value(x: Any) -> Any:
    ax = _fnpm.abs(x)
    r1 = ax < 3.25
    r2 = (ax >= 3.25) & (ax < 6.25)
    a1 = _fnpm.where(r1, ax, 1.0)
    v1 = a1 * _polyval(_DAWSN_AN, a1 * a1) / _polyval(_DAWSN_AD, a1 * a1)
    a2 = _fnpm.where(r1, 4.0, ax)  # regions 2 and 3, away from 0
    t = (1.0 / a2) ** 2  # no overflow of a2 * a2
    v2 = 0.5 / a2 * (1.0 + t * _polyval(_DAWSN_BN, t) / _polyval(_DAWSN_BD, t))
    v3 = 0.5 / a2 * (1.0 + t * _polyval(_DAWSN_CN, t) / _polyval(_DAWSN_CD, t))
    v = _fnpm.where(r1, v1, _fnpm.where(r2, v2, v3))
    v = _fnpm.where(_fnpm.isinf(ax), 0.0, v)
    return _fnpm.copysign(v, x)  # odd; -0.0 keeps its sign


@custom_jvp
def _dawsn(x: Any) -> Any:
    return _dawsn_value(x)


@_dawsn.defjvp
def _dawsn_jvp(primals: tuple, tangents: tuple) -> tuple:
    (x,), (tx,) = primals, tangents
    y = _dawsn(x)
    return y, (1.0 - 2.0 * x * y) * tx


def dawsn(x: Any) -> Any:
    """Dawson's integral ``exp(-x**2) * integral_0^x exp(t**2) dt``, as
    ``scipy.special.dawsn`` (Cephes' rational approximations, computed in float64; float32
    stays float32). Its derivative is ``1 - 2 x dawsn(x)``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import dawsn
        >>> dawsn(np.array([0.0, 1.0, -10.0])).round(9)
        array([ 0.        ,  0.53807951, -0.05025385])
    """
    (x,) = _floats("dawsn", x)
    dt = get_aval(_fnpm.asarray(x)).dtype
    return _dawsn(_fnpm.asarray(x).astype(_F64)).astype(dt)


_FRESNEL_SN = (-2.99181919401019853726e3, 7.08840045257738576863e5, -6.29741486205862506537e7,
               2.54890880573376359104e9, -4.42979518059697779103e10, 3.18016297876567817986e11)
_FRESNEL_SD = (1.0, 2.81376268889994315696e2, 4.55847810806532581675e4,
               5.17343888770096400730e6, 4.19320245898111231129e8, 2.24411795645340920940e10,
               6.07366389490084639049e11)
_FRESNEL_CN = (-4.98843114573573548651e-8, 9.50428062829859605134e-6, -6.45191435683965050962e-4,
               1.88843319396703850064e-2, -2.05525900955013891793e-1, 9.99999999999999998822e-1)
_FRESNEL_CD = (3.99982968972495980367e-12, 9.15439215774657478799e-10, 1.25001862479598821474e-7,
               1.22262789024179030997e-5, 8.68029542941784300606e-4, 4.12142090722199792936e-2,
               1.00000000000000000118e0)
_FRESNEL_FN = (4.21543555043677546506e-1, 1.43407919780758885261e-1, 1.15220955073585758835e-2,
               3.45017939782574027900e-4, 4.63613749287867322088e-6, 3.05568983790257605827e-8,
               1.02304514164907233465e-10, 1.72010743268161828879e-13,
               1.34283276233062758925e-16, 3.76329711269987889006e-20)
_FRESNEL_FD = (1.0, 7.51586398353378947175e-1, 1.16888925859191382142e-1,
               6.44051526508858611005e-3, 1.55934409164153020873e-4, 1.84627567348930545870e-6,
               1.12699224763999035261e-8, 3.60140029589371370404e-11,
               5.88754533621578410010e-14, 4.52001434074129701496e-17,
               1.25443237090011264384e-20)
_FRESNEL_GN = (5.04442073643383265887e-1, 1.97102833525523411709e-1, 1.87648584092575249293e-2,
               6.84079380915393090172e-4, 1.15138826111884280931e-5, 9.82852443688422223854e-8,
               4.45344415861750144738e-10, 1.08268041139020870318e-12,
               1.37555460633261799868e-15, 8.36354435630677421531e-19,
               1.86958710162783235106e-22)
_FRESNEL_GD = (1.0, 1.47495759925128324529e0, 3.37748989120019970451e-1,
               2.53603741420338795122e-2, 8.14679107184306179049e-4, 1.27545075667729118702e-5,
               1.04314589657571990585e-7, 4.60680728146520428211e-10,
               1.10273215066240270757e-12, 1.38796531259578871258e-15,
               8.39158816283118707363e-19, 1.86958710162783236342e-22)


@custom_jvp
def _sincos_pi_half_sq(x: Any) -> tuple[Any, Any]:
    """``sin(pi x^2 / 2)`` and ``cos(pi x^2 / 2)`` without the rounding of ``x^2`` blowing
    up: ``x^2 / 2`` reduced modulo 2 exactly first (SciPy's sinpi/cospi). Its derivatives
    are closed-form (the branch selects would lose them where ``r`` hits a branch value)."""
    x = _fnpm.abs(x)
    s = _fnpm.fmod(x, 2.0)
    r = _fnpm.fmod(s * (x - s / 2), 2.0)
    sinpi = _fnpm.where(r < 0.5, _fnpm.sin(math.pi * r),
                        _fnpm.where(r > 1.5, _fnpm.sin(math.pi * (r - 2.0)),
                                    -_fnpm.sin(math.pi * (r - 1.0))))
    cospi = _fnpm.where(r == 0.5, 0.0,
                        _fnpm.where(r < 1.0, -_fnpm.sin(math.pi * (r - 0.5)),
                                    _fnpm.sin(math.pi * (r - 1.5))))
    return sinpi, cospi


@_sincos_pi_half_sq.defjvp
def _sincos_pi_half_sq_jvp(primals: tuple, tangents: tuple) -> tuple:
    (x,), (tx,) = primals, tangents
    sinpi, cospi = _sincos_pi_half_sq(x)
    return (sinpi, cospi), (math.pi * x * cospi * tx, -math.pi * x * sinpi * tx)


def _fresnel_value(x: Any) -> tuple[Any, Any]:
    ax = _fnpm.abs(x)
    x2 = ax * ax
    small = x2 < 2.5625
    xs = _fnpm.where(small, ax, 0.0)
    t = xs * xs * xs * xs
    s_small = xs * xs * xs * _polyval(_FRESNEL_SN, t) / _polyval(_FRESNEL_SD, t)
    c_small = xs * _polyval(_FRESNEL_CN, t) / _polyval(_FRESNEL_CD, t)
    finite = _fnpm.isfinite(ax)
    xl = _fnpm.where(small | ~finite, 2.0, ax)
    sinpi, cospi = _sincos_pi_half_sq(xl)
    large = xl > 36974.0
    s_large = 0.5 - cospi / (math.pi * xl)
    c_large = 0.5 + sinpi / (math.pi * xl)
    tl = math.pi * xl * xl
    u = 1.0 / (tl * tl)
    f = 1.0 - u * _polyval(_FRESNEL_FN, u) / _polyval(_FRESNEL_FD, u)
    g = (1.0 / tl) * _polyval(_FRESNEL_GN, u) / _polyval(_FRESNEL_GD, u)
    tt = math.pi * xl
    s_mid = 0.5 - (f * cospi + g * sinpi) / tt
    c_mid = 0.5 + (f * sinpi - g * cospi) / tt
    s = _fnpm.where(small, s_small, _fnpm.where(large, s_large, s_mid))
    c = _fnpm.where(small, c_small, _fnpm.where(large, c_large, c_mid))
    s = _fnpm.where(_fnpm.isinf(ax), 0.5, s)
    c = _fnpm.where(_fnpm.isinf(ax), 0.5, c)
    s, c = _fnpm.copysign(s, x), _fnpm.copysign(c, x)  # odd
    nan = _fnpm.isnan(x)
    return _fnpm.where(nan, numpy.nan, s), _fnpm.where(nan, numpy.nan, c)


@custom_jvp
def _fresnel(x: Any) -> tuple[Any, Any]:
    return _fresnel_value(x)


@_fresnel.defjvp
def _fresnel_jvp(primals: tuple, tangents: tuple) -> tuple:
    (x,), (tx,) = primals, tangents
    sinpi, cospi = _sincos_pi_half_sq(x)
    return _fresnel(x), (sinpi * tx, cospi * tx)


def fresnel(x: Any) -> tuple[Any, Any]:
    """Fresnel integrals ``(S(x), C(x))``: ``S(x) = integral_0^x sin(pi t^2 / 2) dt``,
    ``C(x) = integral_0^x cos(pi t^2 / 2) dt``, as ``scipy.special.fresnel`` for real ``x``
    (Cephes' approximations, computed in float64; float32 stays float32). Derivatives
    ``sin(pi x^2 / 2)`` and ``cos(pi x^2 / 2)``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import fresnel
        >>> s, c = fresnel(np.array([0.5, 2.0]))
        >>> s.round(6), c.round(6)
        (array([0.064732, 0.343416]), array([0.492344, 0.488253]))
    """
    (x,) = _floats("fresnel", x)
    x = _fnpm.asarray(x)
    dt = get_aval(x).dtype
    s, c = _fresnel(x.astype(_F64))
    return s.astype(dt), c.astype(dt)


# ---------------------------------------------------------------------------------------------
# Faddeeva function (the one complex function here)

# Weideman's (1994) N = 32 rational approximation, as JAX: w(z) = 2 p(Z) / (L - iz)^2 +
# 1 / (sqrt(pi) (L - iz)), Z = (L + iz) / (L - iz), for Im z >= 0; p's coefficients highest first.
_WOFZ_L = 4.7568284600108841
_WOFZ_C = (
    -1.3034426067909105e-12, 3.7411838373738471e-12, 8.030427700497756e-12,
    -2.1543593557490879e-11, -5.5442449963237932e-11, 1.165824698850374e-10,
    4.1537441121999766e-10, -5.2310202114920615e-10, -3.2080151339721323e-09,
    8.1248864216535907e-10, 2.3797556530014025e-08, 2.2930438438915445e-08,
    -1.4813078929137642e-07, -4.1840763750512053e-07, 4.2558331397138446e-07,
    4.4015317312832251e-06, 6.8210319443575151e-06, -2.1409619201999998e-05,
    -0.00013075449254579421, -0.00024532980270038237, 0.00039259136070109705,
    0.0045195411053493093, 0.019006155784845501, 0.057304403529837282, 0.14060716226893755,
    0.29544451071508743, 0.54601397206393376, 0.9019254893648001, 1.3455441692345449,
    1.8256696296324815, 2.2635372999002676, 2.5722534081245696)


def _wofz_upper(z: Any) -> Any:
    iz = 1j * z
    denom = _WOFZ_L - iz
    big_z = (_WOFZ_L + iz) / denom
    p = _polyval(_WOFZ_C, big_z)
    return 2.0 * p / (denom * denom) + (1.0 / _SQRT_PI) / denom


@custom_jvp
def _wofz(z: Any) -> Any:
    upper = _fnpm.imag(z) >= 0
    w_upper = _wofz_upper(_fnpm.where(upper, z, -z))
    # the lower half-plane by reflection: w(z) = 2 exp(-z^2) - w(-z)
    return _fnpm.where(upper, w_upper, 2.0 * _fnpm.exp(-z * z) - w_upper)


@_wofz.defjvp
def _wofz_jvp(primals: tuple, tangents: tuple) -> tuple:
    (z,), (tz,) = primals, tangents
    w = _wofz(z)
    return w, (-2.0 * z * w + 2j / _SQRT_PI) * tz  # holomorphic: w' = -2 z w + 2i / sqrt(pi)


def wofz(z: Any) -> Any:
    """The Faddeeva function ``w(z) = exp(-z**2) erfc(-i z)``, as ``scipy.special.wofz``:
    complex (real input becomes complex128, float32 and complex64 give complex64).
    Weideman's 32-term rational approximation (JAX's: relative error about 1e-13 near the
    real axis), reflected into the lower half-plane; its derivative ``-2 z w(z) + 2i /
    sqrt(pi)`` is a closed form (holomorphic).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import wofz
        >>> complex(wofz(1.0 + 1.0j).round(10))
        (0.3047442053+0.2082189382j)
    """
    z = _fnpm.asarray(z)
    dt = get_aval(z).dtype
    cdt = numpy.dtype(numpy.complex64) if dt in (_F32, numpy.complex64) else numpy.dtype(
        numpy.complex128)
    return _wofz(z.astype(numpy.complex128)).astype(cdt)


_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_LOG_MAX = math.log(float(numpy.finfo(numpy.float64).max))


def erfi(x: Any) -> Any:
    """Imaginary error function ``erfi(x) = -i erf(ix) = 2/sqrt(pi) exp(x^2) dawsn(x)``, as
    ``scipy.special.erfi`` for real ``x`` (``+-inf`` beyond the largest float, silently);
    derivative ``2/sqrt(pi) exp(x^2)``.

    Example:
        >>> from funcgrad.scipy.special import erfi
        >>> round(float(erfi(1.0)), 12)
        1.650425758798
    """
    fnp = _fnpm
    (x,) = _floats("erfi", x)
    x = fnp.asarray(x)
    dt = get_aval(x).dtype
    xd = x.astype(_F64)
    fin = fnp.isfinite(xd) & (fnp.abs(xd) < 40.0)  # |x| >= 40 overflows: set below
    xs = fnp.where(fin, xd, 0.0)
    half = 0.5 * xs * xs
    # exp(x^2) as exp(x^2/2)^2 around the product: exp(x^2) alone overflows before erfi does
    ok = half < 0.5 * _LOG_MAX + 1.0
    hs = fnp.where(ok, half, 0.0)
    e = fnp.exp(hs)
    a = _TWO_OVER_SQRT_PI * dawsn(xs) * e
    log_out = fnp.log(fnp.where(a != 0, fnp.abs(a), 1.0)) + hs
    over = ~ok | (log_out > _LOG_MAX)
    out = fnp.where(over, fnp.where(xs < 0, -numpy.inf, numpy.inf), a * fnp.where(over, 1.0, e))
    big = fnp.where(xd < 0, -numpy.inf, numpy.inf)
    out = fnp.where(fin, out, fnp.where(fnp.isnan(xd), xd, big))
    return out.astype(dt)


def voigt_profile(x: Any, sigma: Any, gamma: Any) -> Any:
    """The Voigt profile, the convolution of a normal density (standard deviation ``sigma``)
    and a Cauchy density (half-width ``gamma``), as ``scipy.special.voigt_profile``:
    ``Re wofz((x + i gamma) / (sigma sqrt 2)) / (sigma sqrt(2 pi))``, the pure Cauchy or
    normal density where ``sigma`` or ``gamma`` is 0 (a delta, ``inf`` at 0, where both are);
    differentiable.

    Example:
        >>> from funcgrad.scipy.special import voigt_profile
        >>> round(float(voigt_profile(1.0, 1.0, 0.5)), 10)
        0.2001796376
    """
    fnp = _fnpm
    x, sigma, gamma = _floats("voigt_profile", x, sigma, gamma)
    x, sigma, gamma = fnp.broadcast_arrays(fnp.asarray(x), fnp.asarray(sigma), fnp.asarray(gamma))
    dt = get_aval(x).dtype
    x, s, g = x.astype(_F64), sigma.astype(_F64), gamma.astype(_F64)
    # (SciPy's formula taken literally for negative sigma or gamma, too)
    both = (s != 0) & (g != 0)
    fin = fnp.isfinite(x)
    ss = fnp.where(both, s, 1.0)
    z = (fnp.where(both & fin, x, 0.0) + 1j * fnp.where(both, g, 1.0)) / (ss * math.sqrt(2.0))
    voigt = fnp.real(wofz(z)) / (ss * math.sqrt(2.0 * math.pi))
    # gamma = 0: the normal density; sigma = 0: the Cauchy density; both: a delta at 0
    sn = fnp.where(s != 0, s, 1.0)
    gn = fnp.where(g != 0, g, 1.0)
    xf = fnp.where(fin, x, 0.0)
    normal = fnp.exp(-0.5 * (xf / sn) ** 2) / (sn * math.sqrt(2.0 * math.pi))
    cauchy = gn / (math.pi * (xf * xf + gn * gn))
    out = fnp.where(both, voigt, fnp.where(s != 0, normal, fnp.where(g != 0, cauchy, fnp.where(
        x == 0, numpy.inf, 0.0))))
    out = fnp.where(fin, out, fnp.where(fnp.isnan(x), numpy.nan, 0.0))
    return out.astype(dt)
