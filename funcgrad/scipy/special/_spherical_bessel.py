"""Spherical Bessel functions spherical_jn, spherical_yn, spherical_in, spherical_kn (real
argument, ``derivative=``), as ``scipy.special``: the real-order Bessel functions of order
``n + 1/2`` times ``sqrt(pi / (2 z))``, SciPy's values at 0 and for ``z < 0`` (the parity
relations; ``k_n`` continued analytically); derivatives by the recurrences DLMF 10.51.2."""

from __future__ import annotations

import math
from typing import Any

import numpy

from funcgrad.avals import get_aval
from funcgrad.scipy.special._bessel_real import iv, jv, kv, yv
from funcgrad.scipy.special._common import _F64, _floats, _fnpm


def _parity(n: Any) -> Any:
    return _fnpm.where(_fnpm.fmod(_fnpm.abs(n), 2.0) == 1.0, -1.0, 1.0)


def _values(kind: str, n: Any, z: Any) -> Any:
    """The function of integer order ``n >= 0`` (float64 arrays), SciPy's special values."""
    fnp = _fnpm
    az = fnp.abs(z)
    ok = (az > 0) & fnp.isfinite(az)
    zs = fnp.where(ok, az, 1.0)
    nu = n + 0.5
    root = fnp.sqrt(0.5 * math.pi / zs)
    sign = _parity(n)
    if kind == "j":
        out = root * jv(nu, zs) * fnp.where(z < 0, sign, 1.0)
        at0, at_inf = fnp.where(n == 0, 1.0, 0.0), 0.0
    elif kind == "y":
        out = root * yv(nu, zs) * fnp.where(z < 0, -sign, 1.0)
        at0, at_inf = -numpy.inf, 0.0
    elif kind == "i":
        out = root * iv(nu, zs) * fnp.where(z < 0, sign, 1.0)
        at0, at_inf = fnp.where(n == 0, 1.0, 0.0), numpy.inf
    else:
        # k_n(-z) = -(pi/2) (i_n(z) + i_(-n-1)(z)): the analytic continuation, as SciPy
        neg = -0.5 * math.pi * root * (iv(nu, zs) + iv(-nu, zs))
        out = fnp.where(z < 0, neg, root * kv(nu, zs))
        at0, at_inf = numpy.inf, 0.0
    out = fnp.where(z == 0, at0, out)
    if kind == "i":
        out = fnp.where(fnp.isinf(z), fnp.where(z < 0, sign, 1.0) * numpy.inf, out)
    else:
        # j, y, k vanish at inf; SciPy's k_n(-inf) is -inf (e^-z / z there)
        at_ninf = -numpy.inf if kind == "k" else at_inf
        out = fnp.where(fnp.isinf(z), fnp.where(z < 0, at_ninf, at_inf), out)
    return fnp.where(fnp.isnan(z) | (n < 0), numpy.nan, out)


def _derivative(kind: str, n: Any, z: Any) -> Any:
    """DLMF 10.51.2 (f_n' = f_(n-1) - (n + 1)/z f_n; j_0' = -j_1, i_0' = i_1, k_0' = -k_1,
    k_n' = -k_(n-1) - (n + 1)/z k_n), SciPy's values at 0."""
    fnp = _fnpm
    zero = z == 0
    zs = fnp.where(zero, 1.0, z)
    n0 = n == 0
    nm1 = fnp.where(n0, 1.0, n - 1.0)
    f_n = _values(kind, n, zs)
    f_prev = _values(kind, nm1, zs)  # at n = 0 the order-1 function (a stand-in below)
    k_sign = -1.0 if kind == "k" else 1.0
    fin = fnp.isfinite(f_n) & fnp.isfinite(f_prev)
    out = k_sign * fnp.where(fin, f_prev, 0.0) - (n + 1.0) / zs * fnp.where(fin, f_n, 0.0)
    # overflowed values (y_300(10) = -inf): SciPy's arithmetic, inf - inf = nan for j, y, i;
    # k's two terms are both -inf there
    out = fnp.where(fin, out, -numpy.inf if kind == "k" else numpy.nan)
    first = {"j": -1.0, "y": -1.0, "i": 1.0, "k": -1.0}[kind]
    out = fnp.where(n0, first * f_prev, out)
    if kind in ("j", "i"):
        at0 = fnp.where(n == 1, 1.0 / 3.0, 0.0)
    elif kind == "y":
        at0 = fnp.where(n == 0, numpy.inf, numpy.nan)  # SciPy's (inf - inf beyond n = 0)
    else:
        at0 = -numpy.inf
    out = fnp.where(zero, at0, out)
    return fnp.where(fnp.isnan(z) | (n < 0), numpy.nan, out)


def _spherical(kind: str, name: str, n: Any, z: Any, derivative: bool) -> Any:
    n, z = _floats(name, n, z)
    n, z = _fnpm.broadcast_arrays(_fnpm.asarray(n), _fnpm.asarray(z))
    dt = get_aval(z).dtype
    n64, z64 = n.astype(_F64), z.astype(_F64)
    out = _derivative(kind, n64, z64) if derivative else _values(kind, n64, z64)
    return out.astype(dt)


def spherical_jn(n: Any, z: Any, derivative: bool = False) -> Any:
    """Spherical Bessel function of the first kind ``j_n(z) = sqrt(pi/(2z)) J_(n+1/2)(z)``
    (or its derivative), as ``scipy.special.spherical_jn`` for real ``z`` (``j_n(-z) =
    (-1)^n j_n(z)``; nan for ``n < 0``); differentiable in ``z``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import spherical_jn
        >>> spherical_jn(np.array([0, 1, 2]), 1.5).round(6)   # sin(z)/z, ...
        array([0.664997, 0.396173, 0.127349])
    """
    return _spherical("j", "spherical_jn", n, z, derivative)


def spherical_yn(n: Any, z: Any, derivative: bool = False) -> Any:
    """Spherical Bessel function of the second kind ``y_n(z) = sqrt(pi/(2z)) Y_(n+1/2)(z)``
    (or its derivative), as ``scipy.special.spherical_yn`` (``-inf`` at 0,
    ``y_n(-z) = (-1)^(n+1) y_n(z)``).

    Example:
        >>> from funcgrad.scipy.special import spherical_yn
        >>> round(float(spherical_yn(0, 1.5)), 12)   # -cos(z)/z
        -0.047158134445
    """
    return _spherical("y", "spherical_yn", n, z, derivative)


def spherical_in(n: Any, z: Any, derivative: bool = False) -> Any:
    """Modified spherical Bessel function of the first kind
    ``i_n(z) = sqrt(pi/(2z)) I_(n+1/2)(z)`` (or its derivative), as
    ``scipy.special.spherical_in``.

    Example:
        >>> from funcgrad.scipy.special import spherical_in
        >>> round(float(spherical_in(0, 1.5)), 12)   # sinh(z)/z
        1.41951963673
    """
    return _spherical("i", "spherical_in", n, z, derivative)


def spherical_kn(n: Any, z: Any, derivative: bool = False) -> Any:
    """Modified spherical Bessel function of the second kind
    ``k_n(z) = sqrt(pi/(2z)) K_(n+1/2)(z)`` (or its derivative), as
    ``scipy.special.spherical_kn`` (``inf`` at 0; for ``z < 0`` the analytic continuation,
    as SciPy).

    Example:
        >>> from funcgrad.scipy.special import spherical_kn
        >>> round(float(spherical_kn(0, 1.5)), 12)   # (pi/2) exp(-z)/z
        0.233661357306
    """
    return _spherical("k", "spherical_kn", n, z, derivative)
