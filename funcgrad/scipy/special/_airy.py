"""Airy functions airy (Ai, Ai', Bi, Bi') and airye (exponentially scaled), as
``scipy.special`` for real arguments: their Maclaurin series on ``|x| <= 1``, the Bessel
functions of orders 1/3 and 2/3 of ``zeta = (2/3) |x|^(3/2)`` beyond (DLMF 9.6). Each output
is differentiable (the chain rule through the Bessel functions' closed-form derivatives)."""

from __future__ import annotations

import math
from typing import Any

import numpy

from funcgrad.avals import get_aval
from funcgrad.scipy.special._bessel_real import iv, ive, jv, kv, kve, yv
from funcgrad.scipy.special._common import _F64, _floats, _fnpm

_C1 = 0.355028053887817239260  # Ai(0)
_C2 = 0.258819403792806798405  # -Ai'(0)
_SQRT3 = math.sqrt(3.0)
_SERIES_TO = 1.0


def _maclaurin(x: Any) -> tuple[Any, Any, Any, Any]:
    """(Ai, Ai', Bi, Bi') from f, g (DLMF 9.4.1-4) for |x| <= 1 (x^36 / 36! is negligible)."""
    fnp = _fnpm
    x3 = x * x * x
    a, b = fnp.ones_like(x), x
    f, g = a, b
    fp, gp = fnp.zeros_like(x), fnp.ones_like(x)
    xp = fnp.ones_like(x)  # x^(3k - 1), built up (x^(3k) / x would divide by 0)
    x2 = x * x
    for k in range(1, 13):
        a = a * x3 / ((3.0 * k - 1.0) * (3.0 * k))
        b = b * x3 / ((3.0 * k) * (3.0 * k + 1.0))
        f, g = f + a, g + b
        xp = x2 if k == 1 else xp * x3           # x^(3k - 1)
        fp = fp + 3.0 * k * _coef_f(k) * xp
        gp = gp + (3.0 * k + 1.0) * _coef_g(k) * xp * x
    ai = _C1 * f - _C2 * g
    bi = _SQRT3 * (_C1 * f + _C2 * g)
    aip = _C1 * fp - _C2 * gp
    bip = _SQRT3 * (_C1 * fp + _C2 * gp)
    return ai, aip, bi, bip


def _coef_f(k: int) -> float:
    c = 1.0
    for j in range(1, k + 1):
        c /= (3.0 * j - 1.0) * (3.0 * j)
    return c


def _coef_g(k: int) -> float:
    c = 1.0
    for j in range(1, k + 1):
        c /= (3.0 * j) * (3.0 * j + 1.0)
    return c


def _needed(mask: Any) -> bool:
    return not (isinstance(mask, numpy.ndarray) and not mask.any())


def _airy_values(x: Any, scaled: bool) -> tuple[Any, Any, Any, Any]:
    fnp = _fnpm
    ax = fnp.abs(x)
    series = ax <= _SERIES_TO
    fin = fnp.isfinite(x)
    xs = fnp.where(series, x, 0.0)
    s_ai, s_aip, s_bi, s_bip = _maclaurin(xs)
    pos = (x > _SERIES_TO) & fin
    neg = (x < -_SERIES_TO) & fin
    zp = fnp.where(pos, x, 2.0)
    zn = fnp.where(neg, -x, 2.0)
    zeta_p = (2.0 / 3.0) * zp * fnp.sqrt(zp)
    zeta_n = (2.0 / 3.0) * zn * fnp.sqrt(zn)
    rp, rn = fnp.sqrt(zp), fnp.sqrt(zn)
    k13 = kve if scaled else kv
    i13 = ive if scaled else iv
    nan = fnp.full_like(x, numpy.nan)
    # (concrete inputs skip the Bessel branches no lane takes: each is a few while loops)
    if _needed(pos):
        ai_p = rp / (math.pi * _SQRT3) * k13(1.0 / 3.0, zeta_p)
        aip_p = -zp / (math.pi * _SQRT3) * k13(2.0 / 3.0, zeta_p)
        bi_p = rp / _SQRT3 * (i13(-1.0 / 3.0, zeta_p) + i13(1.0 / 3.0, zeta_p))
        bip_p = zp / _SQRT3 * (i13(-2.0 / 3.0, zeta_p) + i13(2.0 / 3.0, zeta_p))
    else:
        ai_p = aip_p = bi_p = bip_p = nan
    if _needed(neg):
        j1, y1 = jv(1.0 / 3.0, zeta_n), yv(1.0 / 3.0, zeta_n)
        j2, y2 = jv(2.0 / 3.0, zeta_n), yv(2.0 / 3.0, zeta_n)
        ai_n = 0.5 * rn * (j1 - y1 / _SQRT3)
        aip_n = 0.5 * zn * (j2 + y2 / _SQRT3)
        bi_n = -0.5 * rn * (j1 / _SQRT3 + y1)
        bip_n = 0.5 * zn * (j2 / _SQRT3 - y2)
    else:
        ai_n = aip_n = bi_n = bip_n = nan
    if scaled:
        # the series region scaled too: Ai e^zeta, Bi e^-zeta for x > 0 (zeta = 0 at x <= 0)
        zs = fnp.where(xs > 0, (2.0 / 3.0) * xs * fnp.sqrt(fnp.where(xs > 0, xs, 0.0)), 0.0)
        up, down = fnp.exp(zs), fnp.exp(-zs)
        s_ai, s_aip, s_bi, s_bip = s_ai * up, s_aip * up, s_bi * down, s_bip * down
        # SciPy's real airye: e^(2/3 x^(3/2)) is complex for x < 0, so eAi, eAi' are nan
        ai_n = aip_n = fnp.full_like(x, numpy.nan)
        s_ai = fnp.where(xs < 0, numpy.nan, s_ai)
        s_aip = fnp.where(xs < 0, numpy.nan, s_aip)
    outs = []
    for s_v, p_v, n_v in ((s_ai, ai_p, ai_n), (s_aip, aip_p, aip_n), (s_bi, bi_p, bi_n),
                          (s_bip, bip_p, bip_n)):
        out = fnp.where(series, s_v, fnp.where(pos, p_v, n_v))
        outs.append(fnp.where(fin, out, numpy.nan))  # SciPy: nan at +-inf
    return tuple(outs)


def _airy(name: str, x: Any, scaled: bool) -> tuple[Any, Any, Any, Any]:
    (x,) = _floats(name, x)
    x = _fnpm.asarray(x)
    dt = get_aval(x).dtype
    return tuple(v.astype(dt) for v in _airy_values(x.astype(_F64), scaled))


def airy(x: Any) -> tuple[Any, Any, Any, Any]:
    """Airy functions and their derivatives ``(Ai, Ai', Bi, Bi')`` of real ``x``, as
    ``scipy.special.airy`` (nan at ``+-inf``; ``Bi`` overflows to ``inf`` for large ``x``,
    where SciPy gives nan); differentiable (``Ai'' = x Ai``).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import airy
        >>> ai, aip, bi, bip = airy(np.array([-2.0, 0.0, 1.0]))
        >>> ai.round(6), bi.round(6)
        (array([0.227407, 0.355028, 0.135292]), array([-0.412303,  0.614927,  1.207424]))
    """
    return _airy("airy", x, scaled=False)


def airye(x: Any) -> tuple[Any, Any, Any, Any]:
    """Exponentially scaled Airy functions ``(eAi, eAi', eBi, eBi')``: ``Ai e^zeta``,
    ``Bi e^-|zeta|`` with ``zeta = (2/3) x^(3/2)``, as ``scipy.special.airye`` for real ``x``
    (``eAi``, ``eAi'`` are nan for ``x < 0``, as SciPy's: the scale is complex there).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import airye
        >>> eai, _, ebi, _ = airye(np.array([1.0, 200.0]))
        >>> eai.round(6), ebi.round(6)
        (array([0.263514, 0.07501 ]), array([0.619912, 0.150032]))
    """
    return _airy("airye", x, scaled=True)
