"""SciPy's fast Hankel transform (FFTLog, Hamilton 2000) for funcgrad.scipy.fft: ``fht``,
``ifht`` and ``fhtoffset``.

The transform of a logarithmically spaced sequence is a real FFT, a product with the
coefficients ``u_m = (kr)^(-i 2 pi m / (n dln)) U_mu(q + i 2 pi m / (n dln))`` and an inverse
real FFT, reversed: linear in the sequence, so it differentiates, batches over leading axes
and traces. The coefficients depend only on the (static, Python number) parameters and are
computed on the host in float64 with a complex log-gamma of our own (NumPy has none).
"""

from __future__ import annotations

import cmath
import math
import operator
import warnings
from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.avals import get_aval
from funcgrad.backend import device_put, get_default_device
from funcgrad.core import Tracer
from funcgrad.numpy import fft as _npfft
from funcgrad.scipy._fft_backend import check_backend

__all__ = ["fht", "ifht", "fhtoffset"]

_LN_2 = math.log(2.0)
# Stirling's series coefficients B_2k / (2k (2k - 1)), k = 1..8.
_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156,
             -3617 / 122400)


def _loggamma(z: complex) -> complex:
    """log Gamma(z) for complex ``z`` off the poles, to double precision; its imaginary part
    may differ from SciPy's ``loggamma`` by a multiple of 2 pi, which the transform (through
    ``exp``) and ``fhtoffset`` (through rounding) do not see."""
    shift = 0j
    while z.real < 20.0:
        shift += cmath.log(z)
        z += 1
    inv = 1 / z
    inv2 = inv * inv
    series, power = 0j, inv
    for c in _STIRLING:
        series += c * power
        power *= inv2
    return (z - 0.5) * cmath.log(z) - z + 0.5 * math.log(2 * math.pi) + series - shift


def _gamma_ratio(p: float, m: float) -> float:
    """Gamma(p) / Gamma(m) for real ``p``, ``m`` (SciPy's ``poch(m, p - m)``), poles included:
    inf over a finite value, 0 under one, the limit when both are poles."""
    p_pole, m_pole = p <= 0 and p == int(p), m <= 0 and m == int(m)
    if p_pole and m_pole:
        k1, k2 = -int(m), -int(p)
        return (-1.0) ** (k1 - k2) * math.factorial(k1) / math.factorial(k2)
    if p_pole:
        return math.inf
    if m_pole:
        return 0.0

    def sign(x: float) -> float:
        return 1.0 if x > 0 else (-1.0) ** (math.floor(-x) + 1)

    return sign(p) * sign(m) * math.exp(math.lgamma(p) - math.lgamma(m))


def _coefficients(n: int, dln: float, mu: float, offset: float, bias: float,
                  inverse: bool) -> numpy.ndarray:
    """SciPy's ``fhtcoeff``: the ``n // 2 + 1`` complex coefficients of the transform."""
    xp, xm = (mu + 1 + bias) / 2, (mu + 1 - bias) / 2
    ys = numpy.linspace(0, numpy.pi * (n // 2) / (n * dln), n // 2 + 1)
    u = numpy.empty(n // 2 + 1, numpy.complex128)
    for i, y in enumerate(ys):
        if y == 0.0:
            # u_0 = 2^q Gamma(xp) / Gamma(xm): real, possibly 0 or inf (a singular transform).
            u[i] = 2.0 ** bias * _gamma_ratio(xp, xm)
            continue
        lg = _loggamma(complex(xp, y)) - _loggamma(complex(xm, y)).conjugate()
        # As SciPy: the real part Re lg(xp) - Re lg(xm), the imaginary Im lg(xp) + Im lg(xm).
        lg = complex(lg.real + _LN_2 * bias, lg.imag + 2 * y * (_LN_2 - offset))
        u[i] = cmath.exp(lg)
    if n % 2 == 0:
        u[-1] = u[-1].real     # the Nyquist coefficient of a real transform is real
    if numpy.isinf(u[0]) and not inverse:
        warnings.warn("fht: singular transform; consider changing the bias", stacklevel=4)
        u[0] = 0
    elif u[0] == 0 and inverse:
        warnings.warn("ifht: singular inverse transform; consider changing the bias",
                      stacklevel=4)
        u[0] = numpy.inf
    return u


def _static(name: str, **params: Any) -> list[float]:
    out = []
    for key, v in params.items():
        if isinstance(v, Tracer):
            raise TypeError(f"{name}: {key} must be a concrete number (it fixes the "
                            "transform's coefficients), not a traced value")
        try:
            out.append(float(operator.index(v) if isinstance(v, int | numpy.integer) else v))
        except (TypeError, ValueError):
            raise TypeError(f"{name}: {key} must be a real number, got {v!r}") from None
    return out


def _real_operand(name: str, a: Any) -> Any:
    a = fnp.asarray(a)
    dt = get_aval(a).dtype
    if dt.kind == "c":
        raise TypeError(f"{name}: the input must be real (SciPy's rfft refuses complex "
                        f"input), got {dt}")
    if dt.kind in "biu":
        return a.astype(numpy.float64)
    if dt == numpy.float16:
        return a.astype(numpy.float32)
    return a


def _const(x: numpy.ndarray, dtype: Any, like: Any) -> Any:
    """The host constant ``x`` on the device of ``like`` (whatever the default device: CuPy
    refuses a host array met by an operator)."""
    return device_put(numpy.asarray(x, dtype), get_aval(like).device or get_default_device())


def _fhtq(name: str, a: Any, dln: float, mu: float, offset: float, bias: float,
          inverse: bool) -> Any:
    # fht/ifht are uarray-dispatched in SciPy: inside skip_backend("scipy") they raise as the
    # other transforms do
    check_backend()
    a = _real_operand(name, a)
    aval = get_aval(a)
    if aval.ndim == 0:
        raise ValueError(f"{name}: the input must have at least one dimension")
    n = aval.shape[-1]
    real_dt = aval.dtype
    complex_dt = numpy.result_type(real_dt, numpy.complex64)
    j = numpy.arange(n, dtype=numpy.float64) - (n - 1) / 2
    # The power-law bias (r / r_c)^-q before and (k / k_c)^-q (k_c r_c)^-q after, as SciPy.
    if bias != 0:
        before = numpy.exp(bias * j * dln) if inverse else numpy.exp(-bias * j * dln)
        a = a * _const(before * (numpy.exp(bias * offset) if inverse else 1.0), real_dt, a)
    u = _coefficients(n, dln, mu, offset, bias, inverse)
    spectrum = _npfft.rfft(a, axis=-1)
    factor = 1 / numpy.conj(u) if inverse else u
    spectrum = spectrum * _const(factor, complex_dt, spectrum)
    out = fnp.flip(_npfft.irfft(spectrum, n, axis=-1), axis=-1)
    if bias != 0:
        after = numpy.exp(bias * j * dln) if inverse else numpy.exp(-bias * (j * dln + offset))
        out = out * _const(after, real_dt, out)
    return out


def fht(a: Any, dln: float, mu: float, offset: float = 0.0, bias: float = 0.0) -> Any:
    """The fast Hankel transform of the logarithmically spaced sequence ``a`` (its last axis),
    as ``scipy.fft.fht``: spacing ``dln``, order ``mu``, offset ``ln(k_c r_c)`` and power-law
    ``bias``. Linear in ``a``: differentiable, ``jit``/``vmap``-able; the parameters are
    Python numbers. float32 stays float32 (SciPy returns float64), integers become float64.

    Example:
        >>> import numpy as np, funcgrad.scipy.fft as fsf
        >>> r = np.logspace(-2, 2, 8)
        >>> fsf.fht(r * np.exp(-r ** 2 / 2), dln=np.log(r[1] / r[0]), mu=0.0).round(4)
        array([ 0.0116,  0.0378,  0.1573,  0.437 ,  0.3119, -0.0246,  0.0088,
               -0.0025])
    """
    dln, mu, offset, bias = _static("fht", dln=dln, mu=mu, offset=offset, bias=bias)
    return _fhtq("fht", a, dln, mu, offset, bias, inverse=False)


def ifht(A: Any, dln: float, mu: float, offset: float = 0.0, bias: float = 0.0) -> Any:  # noqa: N803
    """The inverse fast Hankel transform, as ``scipy.fft.ifht`` (``fht``'s arguments): undoes
    ``fht`` for the same parameters.

    Example:
        >>> import numpy as np, funcgrad.scipy.fft as fsf
        >>> a = np.array([1.0, 2.0, 3.0, 4.0])
        >>> fsf.ifht(fsf.fht(a, 0.5, 1.0, bias=0.3), 0.5, 1.0, bias=0.3).round(10)
        array([1., 2., 3., 4.])
    """
    dln, mu, offset, bias = _static("ifht", dln=dln, mu=mu, offset=offset, bias=bias)
    return _fhtq("ifht", A, dln, mu, offset, bias, inverse=True)


def fhtoffset(dln: float, mu: float, initial: float = 0.0, bias: float = 0.0) -> float:
    """The offset closest to ``initial`` that meets FFTLog's low-ringing condition for
    ``fht`` with spacing ``dln``, order ``mu`` and ``bias``, as ``scipy.fft.fhtoffset``
    (a Python float).

    Example:
        >>> import funcgrad.scipy.fft as fsf
        >>> round(fsf.fhtoffset(0.1, 2.0, initial=0.5), 12)
        0.545458147768
    """
    dln, mu, initial, bias = _static("fhtoffset", dln=dln, mu=mu, initial=initial, bias=bias)
    xp, xm = (mu + 1 + bias) / 2, (mu + 1 - bias) / 2
    y = math.pi / (2 * dln)
    arg = ((_LN_2 - initial) / dln
           + (_loggamma(complex(xp, y)).imag + _loggamma(complex(xm, y)).imag) / math.pi)
    return initial + (arg - round(arg)) * dln
