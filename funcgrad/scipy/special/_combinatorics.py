"""Combinatorial functions: factorial, comb, binom, poch, bernoulli."""

from __future__ import annotations

import fractions
import functools
import math
from typing import Any

import numpy

import funcgrad.ops.elementwise as _ew
from funcgrad.avals import get_aval
from funcgrad.backend import device_put, get_default_device
from funcgrad.core import Tracer
from funcgrad.scipy import _quiet
from funcgrad.scipy.special._common import _floats, _fnp, _fnpm
from funcgrad.scipy.special._gamma import beta, betaln, gamma, gammaln, gammasgn


def factorial(n: Any, exact: bool = False) -> Any:
    """``n!`` as ``gamma(n + 1)`` (0 for negative ``n``), as ``scipy.special.factorial`` with
    ``exact=False``; ``exact=True`` (Python integers) is not supported (``ValueError``).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import factorial
        >>> factorial(np.array([-1, 0, 3, 5]))
        array([  0.,   1.,   6., 120.])
    """
    if exact:
        raise ValueError("factorial: exact=True (arbitrary-precision integers) is not "
                         "supported; use exact=False (floating point)")
    (n,) = _floats("factorial", n)
    n = _fnpm.asarray(n)
    return _fnpm.where(n < 0, 0.0, gamma(_fnpm.where(n < 0, 0.0, n) + 1.0)).astype(get_aval(n).dtype)


def _exp_gammaln_diff(num: Any, den: Any) -> Any:
    """gamma(num) / prod(gamma(d) for d in den) through gammaln, with the signs."""
    out = gammaln(num)
    sign = gammasgn(num)
    for d in den:
        out = out - gammaln(d)
        sign = sign * gammasgn(d)
    # A pole in the denominator (and none above) gives 0, whatever its sign.
    return _fnpm.where(out == -_fnpm.inf, 0.0, sign * _fnpm.exp(out))


def _round_integral(val: Any, integral: Any) -> Any:
    """``val`` rounded where ``integral`` (an integral count: exp/log's last-digit noise goes),
    with the derivative of the smooth formula; an overflowed ``inf`` stays ``inf``."""
    keep = integral & _fnpm.isfinite(val)
    safe = _fnpm.where(keep, val, 0.0)
    return val + _ew.stop_gradient(_fnpm.round(safe) - safe)


def comb(N: Any, k: Any, *, exact: bool = False, repetition: bool = False) -> Any:  # noqa: N803
    """Number of combinations of ``N`` things taken ``k`` at a time (``binom(N, k)``, 0 unless
    ``0 <= k <= N``), as ``scipy.special.comb`` with ``exact=False``; integer arguments give
    integer values. ``repetition=True`` counts with repetition (``comb(N + k - 1, k)``).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import comb
        >>> comb(10, np.array([0, 3, 11]))
        array([  1., 120.,   0.])
    """
    if exact:
        raise ValueError("comb: exact=True (arbitrary-precision integers) is not supported; "
                         "use exact=False (floating point)")
    n_, k_ = _floats("comb", N, k)
    n_, k_ = _fnpm.asarray(n_), _fnpm.asarray(k_)
    if repetition:
        # comb(N + k - 1, k), with SciPy's special case: choosing 0 of N >= 0 things is 1.
        empty = (k_ == 0) & (n_ >= 0)
        return _fnpm.where(empty, 1.0, comb(n_ + k_ - 1.0, k_))
    return _count(n_, k_, choose=True)


def _count(n_: Any, k_: Any, choose: bool) -> Any:
    """N! / ((N - k)! k!) (``choose``) or N! / (N - k)!, 0 unless 0 <= k <= N."""
    ok = (k_ <= n_) & (n_ >= 0) & (k_ >= 0)
    ns = _fnpm.where(ok, n_, 1.0)
    ks = _fnpm.where(ok, k_, 0.0)
    den = [ks + 1.0, ns - ks + 1.0] if choose else [ns - ks + 1.0]
    val = _exp_gammaln_diff(ns + 1.0, den)
    # Integral arguments have an integral count: round away exp/log's last-digit noise
    # (the derivative is that of the smooth formula).
    integral = (ns == _fnpm.floor(ns)) & (ks == _fnpm.floor(ks))
    return _fnpm.where(ok, _round_integral(val, integral), 0.0)


def perm(N: Any, k: Any, exact: bool = False) -> Any:  # noqa: N803
    """Number of ``k``-permutations of ``N`` things, ``N! / (N - k)!`` (0 unless
    ``0 <= k <= N``), as ``scipy.special.perm`` with ``exact=False``: ``poch(N - k + 1, k)``;
    integer arguments give integer values.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import perm
        >>> perm(10, np.array([0, 3, 11]))
        array([  1., 720.,   0.])
    """
    if exact:
        raise ValueError("perm: exact=True (arbitrary-precision integers) is not supported; "
                         "use exact=False (floating point)")
    n_, k_ = _floats("perm", N, k)
    return _count(_fnpm.asarray(n_), _fnpm.asarray(k_), choose=False)


def binom(n: Any, k: Any) -> Any:
    """The binomial coefficient ``n choose k`` for real ``n`` and ``k``, as
    ``scipy.special.binom``: ``1 / ((n + 1) B(n - k + 1, k + 1))``, with SciPy's special
    cases (nan at a negative integer ``n``; an integer ``0 <= k < 20`` by the exact product
    ``(n - k + 1) ... n / k!``, so integer counts come out integral; asymptotic forms for
    ``n >> k`` and ``k >> |n|``). Differentiable in both arguments (the derivative is the
    smooth formula's, ``binom * (psi(n + 1) - psi(n - k + 1))`` in ``n``).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import binom
        >>> binom(np.array([5.0, 2.5, -1.5]), np.array([2.0, 1.5, 2.0]))
        array([10.   ,  2.5  ,  1.875])
    """
    n, k = _floats("binom", n, k)
    fnp = _fnp()
    n, k = fnp.broadcast_arrays(fnp.asarray(n), fnp.asarray(k))
    bad = (n < 0) & (n == fnp.floor(n))
    kx = _ew.stop_gradient(fnp.floor(k))
    nx = _ew.stop_gradient(fnp.floor(n))
    int_k = (k == kx) & ((fnp.abs(n) > 1e-8) | (n == 0)) & ~bad
    # By symmetry the shorter product (SciPy's choice, so the same rounding).
    kr = fnp.where(int_k & (nx == n) & (kx > 0.5 * nx) & (nx > 0), nx - kx, kx)
    prod = int_k & (kr >= 0) & (kr < 20)
    kp = fnp.where(prod, kr, 0.0)
    np_ = _ew.stop_gradient(fnp.where(prod, n, 0.0))
    num, den = fnp.ones_like(np_), fnp.ones_like(np_)
    for i in range(1, 20):
        on = prod & (kp >= i)
        fac = float(i) + np_ - kp
        # A product past the float range is inf (SciPy's), without the overflow warning.
        over = on & (fnp.abs(num) > 1e300 / fnp.maximum(fnp.abs(fac), 1.0))
        num = fnp.where(on & ~over, num * fnp.where(over, 1.0, fac), num)
        num = fnp.where(over, fnp.where((num < 0) != (fac < 0), -numpy.inf, numpy.inf), num)
        den = fnp.where(on, den * float(i), den)
        # Keep the partial products in range (n ~ 1e20 and k = 19 would overflow num).
        rescale = fnp.abs(num) > 1e50
        num = fnp.where(rescale, num / den, num)
        den = fnp.where(rescale, 1.0, den)
    exact = num / den
    # The general formula, and its far-out asymptotic forms; stand-ins elsewhere.
    gen = ~prod & ~bad
    ng = fnp.where(gen, n, 1.0)
    kg = fnp.where(gen, k, 0.5)
    big_n = gen & (ng >= 1e10 * kg) & (kg > 0)
    big_k = gen & ~big_n & (kg > 1e8 * fnp.abs(ng))
    plain = gen & ~big_n & ~big_k
    n1, k1 = fnp.where(big_n, ng, 2.0), fnp.where(big_n, kg, 1.0)
    v_big_n = fnp.exp(-betaln(1.0 + n1 - k1, 1.0 + k1) - fnp.log(n1 + 1.0))
    n2, k2 = fnp.where(big_k, ng, 0.5), fnp.where(big_k, kg, 1e9)
    g1 = gamma(1.0 + n2)
    mag = (g1 / fnp.abs(k2) + g1 * n2 / (2.0 * k2 * k2)) / (math.pi * fnp.abs(k2) ** n2)
    k2x = fnp.floor(k2)
    # SciPy's (int) cast: beyond the int range k counts as non-integral.
    k2_int = (k2 == k2x) & (fnp.abs(k2x) < 2.0 ** 31)
    sgn = fnp.where(k2_int, 1.0 - 2.0 * fnp.fmod(fnp.abs(k2x), 2.0), 1.0)
    dk = fnp.where(k2_int, 0.0, k2)
    v_big_k = fnp.where(k2 > 0, mag * fnp.sin((dk - n2) * math.pi) * sgn,
                        fnp.where(k2_int, 0.0, mag * fnp.sin(k2 * math.pi)))
    n3, k3 = fnp.where(plain, ng, 1.0), fnp.where(plain, kg, 0.5)
    v_plain = _quiet.reciprocal((n3 + 1.0) * beta(1.0 + n3 - k3, 1.0 + k3))
    out = fnp.where(big_n, v_big_n, fnp.where(big_k, v_big_k, v_plain))
    # The product's lanes take their derivative from the smooth formula (the product itself
    # treats k as the constant count it is).
    n4, k4 = fnp.where(prod, n, 2.0), fnp.where(prod, k, 1.0)
    smooth = _exp_gammaln_diff(n4 + 1.0, [k4 + 1.0, n4 - k4 + 1.0])
    exact = exact + (smooth - _ew.stop_gradient(smooth))
    out = fnp.where(prod, exact, out)
    return fnp.where(bad | fnp.isnan(n) | fnp.isnan(k), numpy.nan, out)


def poch(z: Any, m: Any) -> Any:
    """Pochhammer symbol (rising factorial) ``gamma(z + m) / gamma(z)``, finite at the poles
    of ``gamma(z)`` for integer ``m`` (``poch(-3, 2) = 6``), as ``scipy.special.poch``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import poch
        >>> poch(np.array([2.0, -3.0, 0.5]), np.array([3.0, 2.0, 0.0]))
        array([24.,  6.,  1.])
    """
    z, m = _floats("poch", z, m)
    z, m = _fnpm.broadcast_arrays(_fnpm.asarray(z), _fnpm.asarray(m))
    # z = +inf: z^m (inf, or 0 for m < 0); z = -inf: nan (Cephes' values). Those lanes
    # compute on a stand-in, so no inf - inf (and its warning) in the gammas.
    z_inf = _fnpm.isinf(z)
    at_inf = _fnpm.where((z == _fnpm.inf) & (m > 0), _fnpm.inf,
                         _fnpm.where((z == _fnpm.inf) & (m < 0), 0.0, _fnpm.nan)).astype(z.dtype)
    z = _fnpm.where(z_inf, 1.0, z)
    integer_m = m == _fnpm.floor(m)
    reflect = (z <= 0) & (z == _fnpm.floor(z)) & integer_m
    direct = _exp_gammaln_diff(_fnpm.where(reflect, 1.0, z + m), [_fnpm.where(reflect, 1.0, z)])
    # gamma(z + m) / gamma(z) = (-1)^m gamma(1 - z) / gamma(1 - z - m) for integer m.
    zr = _fnpm.where(reflect, z, 0.0)
    mr = _fnpm.where(reflect, m, 0.0)
    parity = 1.0 - 2.0 * _fnpm.fmod(_fnpm.abs(mr), 2.0)  # +-1: mr is integral here
    reflected = parity * _exp_gammaln_diff(1.0 - zr, [1.0 - zr - mr])
    val = _fnpm.where(reflect, reflected, direct)
    # Integral values: the products (z)(z + 1)...(z + m - 1) of integers for m >= 0 (with m < 0
    # the value is 1 / such a product: poch(0, -10) = 1/10!, not to be rounded to 0).
    integral = (z == _fnpm.floor(z)) & integer_m & (m >= 0)
    # A pole of gamma(z + m) over a finite gamma(z): inf, unsigned, as SciPy.
    zm = z + m
    val = _fnpm.where((zm <= 0) & (zm == _fnpm.floor(zm)) & ~reflect, _fnpm.inf, val)
    val = _fnpm.where(z_inf, at_inf, _round_integral(val, integral))
    return _fnpm.where(m == 0, 1.0, val)


_BERNOULLI_EXACT_UP_TO = 300  # B_260 and above overflow float64 anyway


@functools.cache
def _bernoulli_table() -> tuple[float, ...]:
    """``B_0 .. B_300`` as floats, from the exact rationals ``B_m = -sum_{k<m} C(m+1, k) B_k
    / (m + 1)`` (``B_1 = -1/2``), each rounded once (``+-inf`` past float64's range)."""
    exact = [fractions.Fraction(1)]
    for m in range(1, _BERNOULLI_EXACT_UP_TO + 1):
        if m > 1 and m % 2:
            exact.append(fractions.Fraction(0))
            continue
        total = sum(math.comb(m + 1, k) * exact[k] for k in range(m) if exact[k])
        exact.append(-total / (m + 1))
    out = []
    for b in exact:
        try:
            out.append(float(b))
        except OverflowError:
            out.append(math.inf if b > 0 else -math.inf)
    return tuple(out)


def _bernoulli_float(m: int) -> float:
    if m <= _BERNOULLI_EXACT_UP_TO:
        return _bernoulli_table()[m]
    if m % 2:
        return 0.0
    return math.inf if (m // 2) % 2 else -math.inf  # sign of B_2k: (-1)**(k + 1)


def bernoulli(n: Any) -> Any:
    """The Bernoulli numbers ``B_0, ..., B_n`` (``B_1 = -1/2``), as
    ``scipy.special.bernoulli``: a float64 array of ``n + 1`` values, exact rationals rounded
    once (``inf`` in magnitude from ``B_260`` on; JAX's zeta-series formula is off by 2.5e-6
    relative from ``B_4``). ``n`` must be a concrete non-negative integer.

    Example:
        >>> from funcgrad.scipy.special import bernoulli
        >>> bernoulli(4).round(6)
        array([ 1.      , -0.5     ,  0.166667,  0.      , -0.033333])
    """
    if isinstance(n, Tracer):
        raise TypeError("bernoulli: n must be a concrete integer (it sets the result's size)")
    try:
        n = int(numpy.asarray(n).item()) if not isinstance(n, int) else n
    except (TypeError, ValueError):
        raise TypeError(f"bernoulli: n must be an integer, got {n!r}") from None
    if n < 0:
        raise ValueError(f"bernoulli: n must be a non-negative integer, got {n}")
    out = numpy.array([_bernoulli_float(m) for m in range(n + 1)])
    return device_put(out[:n + 1], get_default_device())
