"""``jax.lax``'s special functions that ``funcgrad.scipy.special`` computes (regularized
incomplete gamma and beta, Hurwitz zeta, exponentially scaled Bessel I0/I1), with ``lax``'s
strictness: float operands of one dtype (Python scalars adopt it), an error naming the ``lax``
function otherwise. One implementation each, SciPy's module's: derivatives, ``vmap`` and
``jit`` come with it.
"""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.numpy as fnp
import funcgrad.ops.elementwise as _ew

# funcgrad.scipy.special uses lax.while_loop: funcgrad/lax/__init__.py imports this module
# last, once the control flow it needs is bound.
import funcgrad.scipy.special as _sp
from funcgrad.api import jvp
from funcgrad.avals import get_aval
from funcgrad.lax import _elementwise as _lew
from funcgrad.lax._common import FLOATING, aval_of, check_kind, same_dtypes

Array = Any

__all__ = ["igamma", "igammac", "igamma_grad_a", "random_gamma_grad", "betainc", "zeta",
           "bessel_i0e", "bessel_i1e", "polygamma"]


def _checked(name: str, args: dict[str, Any]) -> numpy.dtype | None:
    """Check the operands; return their (strong) float dtype, None for Python scalars only."""
    if len(args) == 1:
        (arg, x), = args.items()
        a = aval_of(name, x, arg)
        check_kind(name, a, FLOATING, arg)
        avals = [a]
    else:
        avals = same_dtypes(name, args, FLOATING)
    return next((a.dtype for a in avals if not a.weak_type), None)


def _call(name: str, scipy_name: str, **args: Any) -> Array:
    dt = _checked(name, args)
    return _as_dtype(_ew.strong(getattr(_sp, scipy_name)(*args.values())), dt)


def _as_dtype(out: Array, dt: numpy.dtype | None) -> Array:
    # SciPy's float16 loops give a wider type; lax keeps the operands' dtype, as JAX.
    if dt is not None and get_aval(out).dtype != dt:
        return _ew.convert_element_type(out, dt)
    return out


def igamma(a: Array, x: Array) -> Array:
    """The regularized lower incomplete gamma function P(a, x) (SciPy's gammainc).

    Example:
        >>> from funcgrad import lax
        >>> round(float(lax.igamma(2.0, 3.0)), 6)
        0.800852
    """
    return _call("igamma", "gammainc", a=a, x=x)


def igammac(a: Array, x: Array) -> Array:
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x).

    Example:
        >>> from funcgrad import lax
        >>> round(float(lax.igammac(2.0, 3.0)), 6)
        0.199148
    """
    return _call("igammac", "gammaincc", a=a, x=x)


def betainc(a: Array, b: Array, x: Array) -> Array:
    """The regularized incomplete beta function I_x(a, b).

    Example:
        >>> from funcgrad import lax
        >>> round(float(lax.betainc(0.5, 2.0, 0.3)), 6)
        0.739425
    """
    return _call("betainc", "betainc", a=a, b=b, x=x)


def zeta(x: Array, q: Array) -> Array:
    """The Hurwitz zeta function: the sum over n >= 0 of (n + q) ** -x.

    Example:
        >>> from funcgrad import lax
        >>> round(float(lax.zeta(2.0, 1.0)), 6)
        1.644934
    """
    return _call("zeta", "zeta", x=x, q=q)


def bessel_i0e(x: Array) -> Array:
    """The exponentially scaled modified Bessel function of order 0: exp(-|x|) I0(x).

    Example:
        >>> from funcgrad import lax
        >>> round(float(lax.bessel_i0e(1.0)), 6)
        0.46576
    """
    return _call("bessel_i0e", "i0e", x=x)


def bessel_i1e(x: Array) -> Array:
    """The exponentially scaled modified Bessel function of order 1: exp(-|x|) I1(x).

    Example:
        >>> from funcgrad import lax
        >>> round(float(lax.bessel_i1e(1.0)), 6)
        0.20791
    """
    return _call("bessel_i1e", "i1e", x=x)


def polygamma(m: Array, x: Array) -> Array:
    """The ``m``-th derivative of digamma at ``x``. ``m`` is a float array of ``x``'s dtype,
    as in JAX (NaN where it is not a non-negative integer), computed as
    ``(-1) ** (m + 1) * m! * zeta(m + 1, x)`` (digamma where ``m`` is 0), so ``m`` may be
    traced; a static Python or NumPy integer ``m`` (funcgrad also takes it) uses the
    dedicated series.

    Example:
        >>> import numpy
        >>> from funcgrad import lax
        >>> f'{float(lax.polygamma(1, 1.0)):.6f}'
        '1.644934'
        >>> [round(v, 6) for v in lax.polygamma(numpy.array([0.0, 2.0]),
        ...                                      numpy.array([0.5, 2.0])).tolist()]
        [-1.96351, -0.404114]
    """
    if isinstance(m, int | numpy.integer) and not isinstance(m, bool):
        return _lew.polygamma_static(m, x)
    dt = next((a.dtype for a in same_dtypes("polygamma", {"m": m, "x": x}, FLOATING)
               if not a.weak_type), numpy.dtype(numpy.float64))
    n = _ew.convert_element_type(m, dt)
    whole = _ew.and_(_ew.eq(n, _ew.floor(n)), _ew.ge(n, 0))
    sign = _ew.select_n(_ew.eq(_ew.sub(n, _ew.mul(2.0, _ew.floor(_ew.mul(n, 0.5)))), 1.0),
                        -1.0, 1.0)   # (-1) ** (n + 1): +1 for odd n
    n1 = _ew.add(n, 1.0)
    series = _ew.mul(_ew.mul(sign, _ew.exp(_lew.lgamma(n1))), _sp.zeta(n1, x))
    out = _ew.select_n(_ew.eq(n, 0), series, _lew.digamma(x))
    out = _ew.select_n(whole, dt.type(numpy.nan), out)
    return _ew.strong(_ew.convert_element_type(out, dt))  # the constants above are float64


def _at_zero(a: Array, x: Array) -> tuple[Array, Array]:
    """Where ``x == 0 < a``, and ``x`` with 1 there: ``P(a, 0) = 0`` for every ``a > 0``, so
    the derivatives in ``a`` are 0 there (JAX's), where the series gives ``0 * log 0``."""
    zero = _ew.and_(_ew.eq(x, 0), _ew.gt(a, 0))
    return zero, _ew.select_n(zero, x, _ew.add(_ew.mul(x, 0), 1))


def _d_gammainc_da(a: Array, x: Array) -> Array:
    # Elementwise, so the JVP with unit tangents is the derivative at every element; it
    # differentiates again like any JVP.
    a, x = fnp.broadcast_arrays(a, x)
    zero, x = _at_zero(a, x)
    d = jvp(lambda a: _sp.gammainc(a, x), (a,), (fnp.ones_like(a),))[1]
    return _ew.select_n(zero, d, fnp.zeros_like(d))


def igamma_grad_a(a: Array, x: Array) -> Array:
    """The derivative of the regularized lower incomplete gamma function ``igamma(a, x)``
    with respect to ``a``, as ``jax.lax.igamma_grad_a``.

    Example:
        >>> from funcgrad import lax
        >>> round(float(lax.igamma_grad_a(2.0, 3.0)), 6)
        -0.197425
    """
    dt = _checked("igamma_grad_a", {"a": a, "x": x})
    return _as_dtype(_ew.strong(_d_gammainc_da(a, x)), dt)


def random_gamma_grad(a: Array, x: Array) -> Array:
    """The derivative of a standard gamma sample ``x`` (shape ``a``, scale 1) with respect
    to ``a`` at fixed probability, ``-(dP/da) / (dP/dx)`` for ``P = igamma(a, x)``: the
    implicit reparameterisation gradient ``jax.random.gamma`` uses (``jax.lax``'s
    ``random_gamma_grad``).

    Example:
        >>> from funcgrad import lax
        >>> round(float(lax.random_gamma_grad(2.0, 3.0)), 6)
        1.321799
    """
    dt = _checked("random_gamma_grad", {"a": a, "x": x})
    a, x = fnp.broadcast_arrays(a, x)
    zero, x = _at_zero(a, x)  # a draw of 0 stays 0: derivative 0, not 0 / 0
    # dP/dx = x^(a-1) e^-x / Gamma(a), in logs for range
    log_density = _ew.sub(_ew.sub(_ew.mul(_ew.sub(a, 1.0), _ew.log(x)), x), _lew.lgamma(a))
    d = _ew.neg(_ew.div(_d_gammainc_da(a, x), _ew.exp(log_density)))
    return _as_dtype(_ew.strong(_ew.select_n(zero, d, fnp.zeros_like(d))), dt)
