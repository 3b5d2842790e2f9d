"""Spherical harmonics: sph_harm_y."""

from __future__ import annotations

import math
from typing import Any

import numpy

from funcgrad.avals import get_aval
from funcgrad.core import Tracer
from funcgrad.scipy.special._common import _F32, _F64, _floats, _fnpm

# ---------------------------------------------------------------------------------------------
# Spherical harmonics


def _concrete_int_max(name: str, v: Any) -> int:
    if isinstance(v, Tracer):
        raise TypeError(f"funcgrad.scipy.special.sph_harm_y: {name} is traced; pass n_max (the "
                        f"largest degree) so the recurrence has a static length")
    host = numpy.asarray(v.get() if hasattr(v, "get") else v)
    return int(numpy.max(numpy.abs(host))) if host.size else 0


def sph_harm_y(n: Any, m: Any, theta: Any, phi: Any, *, diff_n: int = 0,
               n_max: int | None = None) -> Any:
    """Spherical harmonics ``Y_n^m(theta, phi) = N P_n^m(cos theta) exp(i m phi)``
    (orthonormal on the sphere, Condon-Shortley phase), as ``scipy.special.sph_harm_y``:
    ``n``, ``m`` integers (0 where ``|m| > n``), ``theta`` the polar angle, ``phi`` the
    azimuth, all broadcast together. The normalized Legendre functions come from the stable
    three-term recurrence in ``n`` (no factorials, no overflow), run to ``n_max`` (default
    ``max(n)``; required, as in JAX, when ``n`` is traced). Complex128 (complex64 for float32
    angles); differentiable in ``theta`` and ``phi`` (``diff_n`` is SciPy's way of asking for
    those derivatives: use ``funcgrad.grad``/``jacfwd`` instead).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import sph_harm_y
        >>> complex(sph_harm_y(1, 1, np.pi / 2, 0.0).round(10))   # -sqrt(3 / (8 pi))
        (-0.3454941495+0j)
    """
    if diff_n:
        raise TypeError("funcgrad.scipy.special.sph_harm_y: diff_n is not supported; "
                        "differentiate with funcgrad.grad / jacfwd in theta and phi instead")
    n, m = _fnpm.asarray(n), _fnpm.asarray(m)
    for name, v in (("n", n), ("m", m)):
        if get_aval(v).dtype.kind not in "iub":
            raise TypeError(f"funcgrad.scipy.special.sph_harm_y: {name} must be an integer "
                            f"array, got {get_aval(v).dtype}")
    theta, phi = _floats("sph_harm_y", theta, phi)
    theta, phi = _fnpm.asarray(theta), _fnpm.asarray(phi)
    dt = get_aval(theta).dtype
    l_max = _concrete_int_max("n", n) if n_max is None else int(n_max)
    n, m, theta, phi = _fnpm.broadcast_arrays(n, m, theta.astype(_F64), phi.astype(_F64))
    am = _fnpm.abs(m).astype(_F64)
    nf = n.astype(_F64)
    x, s = _fnpm.cos(theta), _fnpm.sin(theta)
    # P_m^m: (-1)^m sqrt((2m + 1) / (4 pi) prod_{k<=m} (2k - 1) / (2k)) sin^m(theta)
    pmm = _fnpm.full_like(x, 1.0 / math.sqrt(4.0 * math.pi))
    for k in range(1, l_max + 1):
        step = -_fnpm.sqrt((2.0 * k + 1.0) / (2.0 * k)) * s  # ratio P_k^k / P_{k-1}^{k-1}
        pmm = _fnpm.where(k <= am, pmm * step, pmm)
    # up in degree: P_{m+1}^m = sqrt(2m + 3) x P_m^m, then the three-term recurrence
    prev, cur = _fnpm.zeros_like(x), pmm
    out = _fnpm.where(nf == am, pmm, 0.0)
    for deg in range(1, l_max + 1):
        ll = float(deg)
        active = ll > am
        num = 4.0 * ll * ll - 1.0
        den = _fnpm.where(active, ll * ll - am * am, 1.0)
        a_lm = _fnpm.sqrt(num / den)
        b_lm = _fnpm.sqrt(_fnpm.maximum((ll - 1.0) ** 2 - am * am, 0.0) / (4.0 * (ll - 1.0) ** 2 - 1.0)
                          ) if deg > 1 else 0.0
        nxt = a_lm * (x * cur - b_lm * prev)
        prev, cur = _fnpm.where(active, cur, prev), _fnpm.where(active, nxt, cur)
        out = _fnpm.where(active & (nf == ll), cur, out)
    out = _fnpm.where(am > nf, 0.0, out)
    angle = m.astype(_F64) * phi
    y = out * (_fnpm.cos(angle) + 1j * _fnpm.sin(angle))
    # m < 0: Y_n^{-|m|} = (-1)^m conj(Y_n^{|m|}), i.e. P with (-1)^|m| and exp(-i|m|phi)
    y = _fnpm.where(m < 0, _fnpm.where(am % 2 == 1, -1.0, 1.0) * y, y)
    cdt = numpy.dtype(numpy.complex64) if dt == _F32 else numpy.dtype(numpy.complex128)
    return y.astype(cdt)
