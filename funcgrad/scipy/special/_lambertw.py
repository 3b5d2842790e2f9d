"""The Lambert W function."""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy

from funcgrad.avals import get_aval
from funcgrad.backend import device_put, get_default_device
from funcgrad.core import Tracer
from funcgrad.errors import DTypeError
from funcgrad.lax import while_loop
from funcgrad.ops.custom_derivatives import custom_jvp
from funcgrad.scipy.special._common import _counter, _fnpm

# =============================================================================================
# Lambert W (SciPy's algorithm: an initial guess by region, then Halley's iteration)

_EXPN1 = math.exp(-1.0)
_OMEGA = 0.56714329040978387299997


def _lambertw_guess(z: Any, k: Any) -> tuple[Any, Any]:
    """(SciPy's initial guess, where it is already exact: next to the branch point -1/e the
    series in m = sqrt(2 (e z + 1)) to m^3 is right to rounding once |m| < 1e-4)."""
    fnp = _fnpm
    near = fnp.abs(z + _EXPN1) < 0.3
    zr, zi = fnp.real(z), fnp.imag(z)
    pade_zone = (zr > -1.0) & (zr < 1.5) & (fnp.abs(zi) < 1.0) & (-2.5 * fnp.abs(zi) - 0.2 < zr)
    # Each guess on its own region's z (stand-ins elsewhere: z^3 of a huge z overflows).
    z_b = fnp.where(near, z, -_EXPN1 + 0j)
    m = fnp.sqrt(2.0 * (math.e * z_b + 1.0))
    branch0 = -1.0 + m * (1.0 + m * (-1.0 / 3.0 + m * (11.0 / 72.0)))
    branch1 = -1.0 - m * (1.0 + m * (1.0 / 3.0 + m * (11.0 / 72.0)))  # W_-1: m -> -m
    z_p = fnp.where(pade_zone, z, 0.0 + 0j)
    pade = z_p * (12.85106382978723404255 + z_p * (12.34042553191489361902 + z_p)) / (
        32.53191489361702127660 + z_p * (14.34042553191489361702 + z_p))
    lw = fnp.log(z) + (2j * math.pi) * k
    asy = lw - fnp.log(lw)
    w0 = fnp.where(near, branch0, fnp.where(pade_zone, pade, asy))
    w1 = fnp.where(near & (zi == 0) & (zr < 0), branch1, asy)
    w = fnp.where(k == 0, w0, fnp.where(k == -1, w1, asy))
    exact = near & (fnp.abs(m) < 1e-4) & ((k == 0) | ((k == -1) & (zi == 0) & (zr < 0)))
    return w, exact


def _lambertw_values(z: Any, k: Any, tol: float) -> Any:
    fnp = _fnpm
    special = fnp.isnan(z) | fnp.isinf(fnp.real(z)) | (z == 0) | ((z == 1) & (k == 0))
    z_s = fnp.where(special, 0.5 + 0j, z)  # not 1: log(log(1)) in the asymptotic guess
    w, exact = _lambertw_guess(z_s, k)

    def cond(s: tuple) -> Any:
        return (s[0] < 100) & fnp.logical_not(fnp.all(s[2]))

    def body(s: tuple) -> tuple:
        i, w, done = s
        # Re w >= 0: the formula in exp(-w) (exp(w) could overflow), else in exp(w).
        pos = fnp.real(w) >= 0
        e_neg = fnp.exp(fnp.where(pos, -w, 0.0 + 0j))
        wewz_p = w - z_s * e_neg
        e_pos = fnp.exp(fnp.where(pos, 0.0 + 0j, w))
        wew = w * e_pos
        wewz_n = wew - z_s
        two = 2.0 * w + 2.0
        wn = fnp.where(pos, w - wewz_p / (w + 1.0 - (w + 2.0) * wewz_p / two),
                       w - wewz_n / (wew + e_pos - (w + 2.0) * wewz_n / two))
        conv = fnp.abs(wn - w) <= tol * fnp.abs(wn)
        return i + 1, fnp.where(done, w, wn), done | conv

    init = (_counter(w), w, special | exact)
    i, w, done = while_loop(cond, body, init)
    # Not converged in 100 steps: nan (SciPy's, with its warning).
    w = fnp.where(done, w, numpy.nan + 0j)
    # SciPy's special values: z = +inf -> inf + 2 pi k i, -inf -> inf + (2k + 1) pi i,
    # 0 -> 0 (k = 0) or -inf, 1 -> omega (k = 0), nan -> nan.
    zr = fnp.real(z)
    kf = fnp.real(k + 0j)
    w = fnp.where(zr == numpy.inf, z + (2j * math.pi) * kf, w)
    w = fnp.where(zr == -numpy.inf, -z + (2j * math.pi) * kf + 1j * math.pi, w)
    w = fnp.where(z == 0, fnp.where(k == 0, z, -numpy.inf + 0j), w)
    w = fnp.where((z == 1) & (k == 0), _OMEGA + 0j, w)
    return fnp.where(fnp.isnan(z), z, w)


@functools.partial(custom_jvp, nondiff_argnums=(2,))
def _lambertw(z: Any, k: Any, tol: float) -> Any:
    return _lambertw_values(z, k, tol)


@_lambertw.defjvp
def _lambertw_jvp(tol: float, primals: tuple, tangents: tuple) -> tuple:
    # Holomorphic: W'(z) = 1 / (exp(W) (1 + W)) (k is an integer: no tangent).
    (z, k), (tz, _) = primals, tangents
    w = _lambertw(z, k, tol)
    return w, tz / (_fnpm.exp(w) * (1.0 + w))


def lambertw(z: Any, k: Any = 0, tol: float = 1e-8) -> Any:
    """The Lambert W function, branch ``k`` (an integer, or integer array broadcasting with
    ``z``): the solution ``w`` of ``w exp(w) = z``, as ``scipy.special.lambertw`` (complex128
    output for real or complex input; SciPy's initial guesses and Halley's iteration, stopped
    at relative step ``tol``, after which the cubic convergence has settled the last digits).
    At ``z = -1/e`` the value is -1 (SciPy's nan there is its iteration's 0/0).
    Differentiable in ``z``: ``W'(z) = 1 / (exp(W) (1 + W))`` (holomorphic).

    Example:
        >>> from funcgrad.scipy.special import lambertw
        >>> complex(lambertw(1.0).round(12)), complex(lambertw(-0.2, -1).round(12))
        ((0.56714329041+0j), (-2.542641357774+0j))
    """
    fnp = _fnpm
    z = fnp.asarray(z)
    if get_aval(z).dtype.kind not in "biufc":
        raise DTypeError(f"funcgrad.scipy.special.lambertw: numeric z expected, got {z.dtype}")
    if isinstance(k, Tracer):
        k = k._concrete("lambertw's branch k")
    k_host = numpy.asarray(k.get() if hasattr(k, "get") else k)
    if k_host.dtype.kind not in "iub" and not (
            k_host.dtype.kind == "f" and numpy.all(k_host == numpy.floor(k_host))):
        raise TypeError(f"lambertw: the branch k must be an integer (array), got {k!r}")
    k_arr = fnp.asarray(device_put(k_host.astype(numpy.int64),
                                   get_aval(z).device or get_default_device()))
    z, k_arr = fnp.broadcast_arrays(z.astype(numpy.complex128), k_arr)
    return _lambertw(z, k_arr, float(tol))
