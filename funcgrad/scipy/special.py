"""funcgrad.scipy.special: differentiable versions of ``scipy.special`` functions.

SciPy itself is not needed. Error and gamma functions are primitives
(:mod:`funcgrad.ops.special`, accurate to a few ulps in float64); the rest are stable
compositions: ``logsumexp`` (``b``, ``return_sign``, the max term kept separate so results
near zero stay accurate), ``softmax``/``log_softmax``, ``expit``/``logit``/``log_expit``,
``xlogy``/``xlog1py``/``entr`` (0 where ``x == 0``, with gradients that stay finite there),
``ndtr``/``ndtri``/``log_ndtr``, ``gamma``/``gammasgn``/``loggamma``, ``beta``/``betaln``,
``multigammaln``, ``rel_entr``/``kl_div``. The Bessel functions ``i0``/``i0e``/``i1``/``i1e``
(Cephes' Chebyshev series) and ``gammainc``/``gammaincc`` (series / continued fraction in a
``while_loop``; in ``a`` the loop itself is differentiated) carry closed-form derivatives
(``custom_jvp``), right to every order (the Bessel ones also at 0). ``betainc`` (continued fraction; differentiable in all three
arguments), ``zeta`` (Hurwitz / Riemann, Euler-Maclaurin) and the exponential integrals
``exp1``/``expi``/``expn`` follow the same pattern.

Dtypes: float32 stays float32, other real inputs (integers, bool, float16) give float64;
Python scalars are weak (NEP 50). Complex input is not supported, except by ``wofz``
(the Faddeeva function, complex by nature); ``wofz`` and ``sph_harm_y`` return complex.

Example:
    >>> import numpy as np, funcgrad
    >>> from funcgrad.scipy.special import logsumexp
    >>> float(logsumexp(np.array([1000.0, 1000.0])))   # no overflow
    1000.6931471805599
    >>> funcgrad.grad(logsumexp)(np.array([1000.0, 1000.0]))
    array([0.5, 0.5])
"""

from __future__ import annotations

import fractions
import functools
import math
from typing import Any

import numpy

import funcgrad.numpy as _fnp_module
import funcgrad.ops.elementwise as _ew
import funcgrad.ops.shape as _shape
from funcgrad.api import jvp
from funcgrad.avals import get_aval, result_dtype
from funcgrad.backend import device_put, get_default_device
from funcgrad.core import Tracer
from funcgrad.errors import DTypeError
from funcgrad.lax import while_loop
from funcgrad.numpy import _elementwise as _fe
from funcgrad.numpy import _linalg_ops as _fl
from funcgrad.numpy import _reductions as _fr
from funcgrad.ops import special as _sp
from funcgrad.ops.custom_derivatives import custom_jvp
from funcgrad.scipy import _bessel_tables as _bt
from funcgrad.scipy import _quiet

__all__ = [
    "erf", "erfc", "erfinv", "erfcinv", "gammaln", "digamma", "psi", "polygamma",
    "expit", "logit", "log_expit", "softmax", "log_softmax", "logsumexp", "xlogy",
    "xlog1py", "entr", "ndtr", "ndtri",
    "gamma", "gammasgn", "loggamma", "beta", "betaln", "multigammaln", "log_ndtr", "ndtri_exp",
    "i0", "i0e", "i1", "i1e", "gammainc", "gammaincc", "gammaincinv", "gammainccinv", "pdtr", "pdtrc", "chdtr", "chdtrc", "chdtri",
    "gdtr", "gdtrc", "bdtr", "bdtrc", "bdtri", "nbdtr", "nbdtrc", "nbdtri", "fdtr", "fdtrc",
    "fdtri", "binom", "rel_entr", "kl_div",
    "betainc", "betaincinv", "zeta", "exp1", "expi", "expn", "erfcx", "factorial", "comb", "poch", "boxcox",
    "boxcox1p", "inv_boxcox", "inv_boxcox1p", "exprel", "spence", "bernoulli", "bessel_jn",
    "dawsn", "owens_t", "sici", "fresnel",
    "hyp1f1", "hyp2f1", "wofz", "sph_harm_y", "huber", "pseudo_huber", "softplus", "cbrt",
    "exp2", "exp10", "expm1", "log1p", "j0", "j1", "y0", "y1", "k0", "k1", "k0e", "k1e",
    "ellipk", "ellipkm1", "ellipe", "lambertw", "rgamma", "cosm1", "zetac",
    "agm",
]

_F32 = numpy.dtype(numpy.float32)
_F64 = numpy.dtype(numpy.float64)


def _to_float(name: str, x: Any) -> Any:
    """``x`` as float32/float64 (others become float64); Python scalars stay weak floats."""
    t = type(x)
    if t is float:
        return x
    if t is int or t is bool:
        return float(x)
    dt = get_aval(x).dtype
    if dt == _F32 or dt == _F64:
        return x
    if dt.kind == "c":
        raise DTypeError(f"funcgrad.scipy.special.{name}: complex input is not supported")
    return _ew.convert_element_type(x, _F64)


def _floats(name: str, *xs: Any) -> list[Any]:
    xs = _fe._colocate(*_fe.asarray_operands(*xs))
    out = [_to_float(name, x) for x in xs]
    if len(out) > 1:
        dt, _ = result_dtype(*(get_aval(v) for v in out))  # NEP 50: Python scalars are weak
        if dt != _F32 and dt != _F64:  # float16 met float16: compute in float64
            dt = _F64
        # Arrays from here on: selects between a Python scalar and a constant would
        # otherwise make a float64 array and promote the result.
        out = [_ew.convert_element_type(v, dt) for v in _fl._arrs(*out)]
    return out


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


# ---------------------------------------------------------------------------------------------
# Compositions


def expit(x: Any) -> Any:
    """The logistic sigmoid ``1 / (1 + exp(-x))``, stable for large ``|x|``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import expit
        >>> expit(np.array([-1000.0, 0.0, 1000.0]))
        array([0. , 0.5, 1. ])
    """
    return _ew.logistic(_floats("expit", x)[0])


def log_expit(x: Any) -> Any:
    """``log(expit(x))``, without underflow for very negative ``x``.

    Example:
        >>> from funcgrad.scipy.special import log_expit
        >>> float(log_expit(-1000.0))
        -1000.0
    """
    (x,) = _floats("log_expit", x)
    neg = _ew.lt(x, 0)
    # x - log1p(exp(x)) for x < 0, -log1p(exp(-x)) otherwise: exp never overflows. Each
    # branch sees x only where it is chosen (a select, not abs: abs has slope 0 at 0, which
    # made the derivative at 0 vanish instead of being 1/2).
    zero = _fnp().zeros_like(x)
    xn = _ew.select_n(neg, zero, x)
    xp = _ew.select_n(neg, x, zero)
    return _ew.select_n(neg, _ew.neg(_ew.log1p(_ew.exp(_ew.neg(xp)))),
                        _ew.sub(xn, _ew.log1p(_ew.exp(xn))))


def logit(x: Any) -> Any:
    """``log(x / (1 - x))``, the inverse of :func:`expit` (accurate near ``x = 1/2``).

    Example:
        >>> from funcgrad.scipy.special import logit
        >>> round(float(logit(0.75)), 12)
        1.098612288668
    """
    (x,) = _floats("logit", x)
    return _logit(x)


@custom_jvp
def _logit(x: Any) -> Any:
    s = _ew.mul(_ew.sub(x, 0.5), 2.0)
    near_half = _ew.and_(_ew.ge(x, 0.3), _ew.le(x, 0.65))
    s_mid = _ew.select_n(near_half, 0.0, s)
    x_out = _ew.select_n(near_half, x, 0.25)
    mid = _ew.sub(_ew.log1p(s_mid), _ew.log1p(_ew.neg(s_mid)))
    # Quiet: -inf at 0, inf at 1, nan outside [0, 1], without NumPy's warnings (as SciPy).
    out = _quiet.log(_quiet.div(x_out, _ew.sub(1.0, x_out)))
    return _ew.select_n(near_half, out, mid)


@_logit.defjvp
def _logit_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    # 1 / (x (1 - x)): inf at 0 and 1, as JAX (a where-composed value gave nan there).
    (x,), (t,) = primals, tangents
    return _logit(x), _ew.mul(t, _quiet.reciprocal(_ew.mul(x, _ew.sub(1.0, x))))


def _reduce_axes(x: Any, axis: Any) -> tuple[int, ...]:
    nd = get_aval(x).ndim
    if axis is None:
        return tuple(range(nd))
    if isinstance(axis, int | numpy.integer):
        axis = (axis,)
    out = []
    for a in axis:
        a = int(a)
        if not -nd <= a < nd:
            raise ValueError(f"axis {a} is out of bounds for array of dimension {nd}")
        out.append(a % nd)
    if len(set(out)) != len(out):
        raise ValueError(f"repeated axis in {tuple(axis)}")
    return tuple(sorted(out))


def softmax(x: Any, axis: Any = None) -> Any:
    """``exp(x) / sum(exp(x))`` over ``axis`` (all elements when None), shifted by the max.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import softmax
        >>> softmax(np.array([0.0, np.log(3.0)]))
        array([0.25, 0.75])
    """
    (x,) = _floats("softmax", x)
    if not hasattr(x, "shape") and not isinstance(x, Tracer):
        x = _fe.asarray_operands([x])[0].reshape(())
    axes = _reduce_axes(x, axis)
    # The shift cancels exactly, so it carries no derivative.
    shift = _ew.stop_gradient(_fr.max(x, axis=axes, keepdims=True))
    e = _ew.exp(_ew.sub(x, shift))
    return _ew.div(e, _fr.sum(e, axis=axes, keepdims=True))


def log_softmax(x: Any, axis: Any = None) -> Any:
    """``log(softmax(x))`` computed as ``x - logsumexp(x)``, stable for large ``|x|``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import log_softmax
        >>> log_softmax(np.array([1000.0, 1000.0]))
        array([-0.69314718, -0.69314718])
    """
    (x,) = _floats("log_softmax", x)
    if not hasattr(x, "shape") and not isinstance(x, Tracer):
        x = _fe.asarray_operands([x])[0].reshape(())
    axes = _reduce_axes(x, axis)
    x_max = _ew.stop_gradient(_fr.max(x, axis=axes, keepdims=True))
    x_max = _ew.select_n(_ew.is_finite(x_max), 0.0, x_max)
    tmp = _ew.sub(x, x_max)
    s = _fr.sum(_ew.exp(tmp), axis=axes, keepdims=True)
    return _ew.sub(tmp, _ew.log(s))


def logsumexp(a: Any, axis: Any = None, b: Any = None, keepdims: bool = False,
              return_sign: bool = False, where: Any = None) -> Any:
    """``log(sum(b * exp(a)))`` over ``axis``, without overflow or underflow.

    ``b`` (broadcasting with ``a``) weights the terms; entries with ``b == 0`` add nothing,
    even when ``a`` is infinite. With ``return_sign=True`` returns ``(log|s|, sign(s))``;
    otherwise a negative sum gives nan. ``where`` (a boolean mask broadcasting with ``a``,
    as in ``jax.scipy.special.logsumexp``) leaves out the entries where it is False (an
    empty selection gives -inf). The gradient is the (weighted) softmax.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import logsumexp
        >>> float(logsumexp(np.array([0.0, -50.0])))   # the tiny term is kept
        1.9287498479639178e-22
        >>> logsumexp(np.array([1.0, 2.0]), b=np.array([1.0, -1.0]), return_sign=True)
        (array(1.54132485), array(-1.))
        >>> float(logsumexp(np.array([1.0, 5.0]), where=np.array([True, False])))
        1.0
    """
    if where is not None:
        mask = _fe.asarray_operands(where)[0]
        if get_aval(mask).dtype != numpy.bool_:
            raise TypeError(f"logsumexp: where must be a boolean mask, got "
                            f"{get_aval(mask).dtype}")
        b = _fnp_module.where(mask, 1.0 if b is None else b, 0.0)
    if b is None:
        (a,) = _floats("logsumexp", a)
    else:
        a, b = _floats("logsumexp", a, b)
        shape = numpy.broadcast_shapes(numpy.shape(a) if not isinstance(a, Tracer) else a.shape,
                                       numpy.shape(b) if not isinstance(b, Tracer) else b.shape)
        a = _shape.broadcast_to(a, shape)
        b = _shape.broadcast_to(b, shape)
        zero_w = _ew.eq(b, 0)
        # Zero weights take no part in the maximum (even for infinite a), but a finite a
        # stays in its (zero) term, so the derivative in that weight is still exp(a - out).
        a_terms = _ew.select_n(_ew.and_(zero_w, _ew.logical_not(_ew.is_finite(a))),
                               a, -numpy.inf)
        a = _ew.select_n(zero_w, a, -numpy.inf)
    if not hasattr(a, "shape") and not isinstance(a, Tracer):
        a = _fe.asarray_operands([a])[0].reshape(())
    axes = _reduce_axes(a, axis)
    if any(get_aval(a).shape[ax] == 0 for ax in axes):
        # An empty sum is 0: log 0 = -inf with sign 0 (as SciPy's value; and as JAX's sign).
        zero = _fr.sum(_ew.mul(a, 0.0), axis=axes, keepdims=keepdims)
        out = _ew.add(zero, -numpy.inf)
        return (out, zero) if return_sign else out
    if b is None and not return_sign:
        out = _lse_unweighted(a, axes)
        return out if keepdims else _shape.squeeze(out, axes)
    out, sgn = _lse_terms(a, a if b is None else a_terms, b, axes, return_sign)
    if not keepdims:
        out = _shape.squeeze(out, axes)
        sgn = _shape.squeeze(sgn, axes)
    return (out, sgn) if return_sign else out


@functools.partial(custom_jvp, nondiff_argnums=(1,))
def _lse_unweighted(a: Any, axes: tuple[int, ...]) -> Any:
    """``logsumexp(a, axes, keepdims=True)``: the accurate value of :func:`_lse_terms`, whose
    derivative is the softmax: differentiating the accuracy machinery (the maximal terms
    kept apart, log1p) would add ~15 primitives to every order of derivative (a Hessian 2-4x
    the cost) for the same numbers."""
    return _lse_terms(a, a, None, axes, False)[0]


@_lse_unweighted.defjvp
def _lse_unweighted_jvp(axes: tuple[int, ...], primals: tuple, tangents: tuple) -> tuple:
    (a,), (ta,) = primals, tangents
    # The softmax as exp(a - max) / sum: exp(a - out) would lose the digits out's rounding
    # costs at large |a|. Its own derivatives are those of these few primitives.
    shift = _ew.stop_gradient(_fr.max(a, axis=axes, keepdims=True))
    e = _ew.exp(_ew.sub(a, _ew.select_n(_ew.is_finite(shift), 0.0, shift)))
    p = _ew.div(e, _fr.sum(e, axis=axes, keepdims=True))
    return _lse_unweighted(a, axes), _fr.sum(_ew.mul(p, ta), axis=axes, keepdims=True)


def _lse_terms(a: Any, a_terms: Any, b: Any, axes: tuple[int, ...], return_sign: bool) -> tuple:
    """``(log|sum|, sign)`` of ``sum(b * exp(a_terms))`` over ``axes``, kept; ``a`` is
    ``a_terms`` with zero-weight entries at -inf (they take no part in the maximum)."""
    # The shift cancels exactly, so it carries no derivative: every derivative comes from
    # the exponentials, which stays right to any order, even where maxima tie.
    a_max = _ew.stop_gradient(_fr.max(a, axis=axes, keepdims=True))
    shift = _ew.select_n(_ew.is_finite(a_max), 0.0, a_max)
    is_max = _ew.eq(a, a_max)
    dt = get_aval(a_max).dtype
    if b is None:
        terms = _ew.exp(_ew.sub(a, shift))
        weights_at_max = _ew.convert_element_type(is_max, dt)
    else:
        # Capped so a zero-weight term above the maximum cannot make 0 * inf.
        cap = float(numpy.log(numpy.finfo(dt).max)) - 1.0
        terms = _ew.mul(b, _ew.exp(_ew.min(_ew.sub(a_terms, shift), cap)))
        weights_at_max = _ew.select_n(is_max, 0.0, b)
    # The maximal terms (exp(0) = 1 times their weight) are kept apart, so the rest goes
    # through log1p: accurate when it is tiny.
    m = _fr.sum(_ew.select_n(is_max, 0.0, terms), axis=axes, keepdims=True)
    m_sign = _ew.sign(_fr.sum(weights_at_max, axis=axes, keepdims=True))
    s = _fr.sum(_ew.select_n(is_max, terms, 0.0), axis=axes, keepdims=True)
    s = _ew.select_n(_ew.eq(s, 0), _ew.div(s, _ew.select_n(_ew.eq(m, 0), m, 1.0)), s)
    sgn = _ew.mul(_ew.sign(_ew.add(s, 1.0)), m_sign)
    # Every term exp(-inf) = 0: the sum is 0, whose sign is 0 (SciPy, JAX).
    sgn = _ew.select_n(_ew.eq(a_max, -numpy.inf), sgn, 0.0)
    s = _ew.select_n(_ew.lt(s, -1.0), s, _ew.sub(_ew.neg(s), 2.0))
    # Quiet logs: an all -inf (masked) row or zero weights give -inf without NumPy's warning.
    out = _ew.add(_ew.add(_quiet.log1p(s), _quiet.log(_ew.abs(m))), a_max)
    if not return_sign:
        out = _ew.select_n(_ew.lt(sgn, 0), out, numpy.nan)
    return out, sgn


def xlogy(x: Any, y: Any) -> Any:
    """``x * log(y)``, taken as 0 where ``x == 0`` (unless ``y`` is nan).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import xlogy
        >>> xlogy(np.array([0.0, 2.0]), np.array([0.0, np.e]))
        array([0., 2.])
    """
    x, y = _floats("xlogy", x, y)
    # Only where log(y) is not finite is the 0 forced: elsewhere x * log(y) is 0 by itself
    # and keeps its derivative log(y) in x.
    bad_y = _ew.logical_not(_ew.and_(_ew.gt(y, 0), _ew.is_finite(y)))
    zero = _ew.and_(_ew.and_(_ew.eq(x, 0), _ew.logical_not(_ew.is_nan(y))), bad_y)
    y_safe = _ew.select_n(zero, y, 1.0)
    # The quiet log: log(0) = -inf and log(-1) = nan silently, as SciPy and JAX.
    return _ew.select_n(zero, _ew.mul(x, _quiet.log(y_safe)), 0.0)


def xlog1py(x: Any, y: Any) -> Any:
    """``x * log1p(y)``, taken as 0 where ``x == 0`` (unless ``y`` is nan).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import xlog1py
        >>> xlog1py(np.array([0.0, 1.0]), np.array([-1.0, 0.0]))
        array([0., 0.])
    """
    x, y = _floats("xlog1py", x, y)
    bad_y = _ew.logical_not(_ew.and_(_ew.gt(y, -1.0), _ew.is_finite(y)))
    zero = _ew.and_(_ew.and_(_ew.eq(x, 0), _ew.logical_not(_ew.is_nan(y))), bad_y)
    y_safe = _ew.select_n(zero, y, 0.0)
    return _ew.select_n(zero, _ew.mul(x, _quiet.log1p(y_safe)), 0.0)


def entr(x: Any) -> Any:
    """Elementwise entropy ``-x log x`` for ``x > 0``, 0 at 0, ``-inf`` for ``x < 0``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import entr
        >>> entr(np.array([0.0, 1.0, -1.0]))
        array([  0.,  -0., -inf])
    """
    (x,) = _floats("entr", x)
    pos = _ew.gt(x, 0)
    x_safe = _ew.select_n(pos, 1.0, x)
    out = _ew.select_n(pos, -numpy.inf, _ew.neg(_ew.mul(x_safe, _ew.log(x_safe))))
    out = _ew.select_n(_ew.eq(x, 0), out, 0.0)
    return _ew.select_n(_ew.is_nan(x), out, x)


_SQRT_HALF = math.sqrt(0.5)


def ndtr(x: Any) -> Any:
    """Standard normal CDF ``(1 + erf(x / sqrt(2))) / 2``, accurate in the lower tail.

    Example:
        >>> from funcgrad.scipy.special import ndtr
        >>> float(ndtr(0.0))
        0.5
    """
    (x,) = _floats("ndtr", x)
    return _ew.mul(0.5, _sp.erfc(_ew.mul(x, -_SQRT_HALF)))


def ndtri(y: Any) -> Any:
    """Inverse of :func:`ndtr` on ``[0, 1]``.

    Example:
        >>> from funcgrad.scipy.special import ndtri
        >>> round(float(ndtri(0.975)), 10)
        1.9599639845
    """
    (y,) = _floats("ndtri", y)
    return _ew.mul(-math.sqrt(2.0), _sp.erfcinv(_ew.mul(y, 2.0)))


# =============================================================================================
# Gamma and beta functions, Bessel functions, tails and divergences (compositions of the
# primitives above; custom_jvp where a closed-form derivative is better conditioned).


def _like(x: Any, value: float) -> Any:
    """An array of ``value`` with ``x``'s shape and dtype."""
    return _fnp().full_like(x, value)


def _fnp() -> Any:
    return _fnp_module


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


def log_ndtr(x: Any) -> Any:
    """``log(ndtr(x))``, accurate in both tails: ``log1p(-ndtr(-x))`` for ``x > 0``, and the
    asymptotic series of the Mills ratio for ``x < -10`` (no underflow down to ``-1e154``).

    Example:
        >>> from funcgrad.scipy.special import log_ndtr
        >>> round(float(log_ndtr(-40.0)), 6)
        -804.608442
    """
    (x,) = _floats("log_ndtr", x)
    fnp = _fnp()
    x = fnp.asarray(x)
    upper = fnp.greater(x, 0.0)
    far = fnp.less(x, -10.0)
    x_up = fnp.where(upper, x, 1.0)
    x_mid = fnp.where(fnp.logical_or(upper, far), -1.0, x)
    x_far = fnp.where(far, x, -11.0)
    out_up = fnp.log1p(-ndtr(-x_up))
    out_mid = fnp.log(ndtr(x_mid))
    # log ndtr(x) = -x^2/2 - log(-x) - log(2 pi)/2 + log(1 + sum_n (-1)^n (2n-1)!! / x^(2n)):
    # at x <= -10 twelve terms leave a truncation error below 1e-16.
    inv2 = 1.0 / (x_far * x_far)
    s = _like(x_far, 0.0)
    for n in range(12, 0, -1):
        s = (1.0 + s) * (-(2 * n - 1) * inv2)
    out_far = (-0.5 * x_far * x_far - fnp.log(-x_far) - 0.5 * math.log(2.0 * math.pi)
               + fnp.log1p(s))
    out = fnp.where(upper, out_up, fnp.where(far, out_far, out_mid))
    return fnp.where(fnp.isnan(x), x, out)


def _ndtri_exp_value(y: Any) -> Any:
    fnp = _fnp()
    tiny_p = y < -700.0  # exp(y) would underflow towards the subnormals
    upper = y > -math.log(2.0)
    y_mid = fnp.where(tiny_p | upper, -1.0, y)
    mid = ndtri(fnp.exp(y_mid))
    y_up = fnp.where(upper, y, -1.0)
    up = -ndtri(-fnp.expm1(y_up))  # the upper tail 1 - exp(y), without cancellation
    # Far lower tail: Newton on log_ndtr(x) = y from the asymptotic start
    # x^2 = -2 y - log(-2 y) - log(2 pi); each step x -= (log_ndtr(x) - y) Phi(x) / phi(x),
    # Phi / phi = exp(log_ndtr(x) + x^2 / 2 + log(2 pi) / 2).
    y_lo = fnp.where(tiny_p & fnp.isfinite(y), y, -800.0)
    t = -2.0 * y_lo
    x = -fnp.sqrt(t - fnp.log(t) - math.log(2.0 * math.pi))
    for _ in range(6):
        ln = log_ndtr(x)
        x = x - (ln - y_lo) * fnp.exp(ln + 0.5 * x * x + 0.5 * math.log(2.0 * math.pi))
    out = fnp.where(tiny_p, x, fnp.where(upper, up, mid))
    out = fnp.where(y == 0, numpy.inf, fnp.where(y == -numpy.inf, -numpy.inf, out))
    return fnp.where(y > 0, numpy.nan, out)


@custom_jvp
def _ndtri_exp(y: Any) -> Any:
    return _ndtri_exp_value(y)


@_ndtri_exp.defjvp
def _ndtri_exp_jvp(primals: tuple, tangents: tuple) -> tuple:
    (y,), (ty,) = primals, tangents
    x = _ndtri_exp(y)
    # dx/dy = Phi(x) / phi(x) = exp(y + x^2 / 2 + log(2 pi) / 2)
    return x, ty * _fnp().exp(y + 0.5 * x * x + 0.5 * math.log(2.0 * math.pi))


def ndtri_exp(y: Any) -> Any:
    """Inverse of :func:`log_ndtr`: ``x`` with ``log(ndtr(x)) = y`` (``y <= 0``; nan above),
    accurate far in the lower tail (``y = -1e5``, where ``exp(y)`` underflows) and near
    ``y = 0`` (through ``-expm1(y)``). Differentiable: ``dx/dy = ndtr(x) / phi(x)``.

    Example:
        >>> from funcgrad.scipy.special import ndtri_exp
        >>> round(float(ndtri_exp(-1000.0)), 10)
        -44.615747732
    """
    (y,) = _floats("ndtri_exp", y)
    return _ndtri_exp(y)


# ---------------------------------------------------------------------------------------------
# Modified Bessel functions of the first kind, orders 0 and 1 (funcgrad.ops.special)


def _back(val: Any, like: Any) -> Any:
    # float32 input is computed in float64 and rounded once (as SciPy's float32 loops).
    return _ew.convert_element_type(val, get_aval(like).dtype)


def i0(x: Any) -> Any:
    """Modified Bessel function of the first kind, order 0 (Cephes' Chebyshev series).
    Its derivative is :func:`i1`, to every order (also at 0).

    Example:
        >>> import funcgrad
        >>> from funcgrad.scipy.special import i0
        >>> round(float(i0(1.0)), 12)
        1.266065877752
        >>> round(float(funcgrad.grad(funcgrad.grad(i0))(0.0)), 12)
        0.5
    """
    return _sp.i0(_floats("i0", x)[0])


def i0e(x: Any) -> Any:
    """Exponentially scaled modified Bessel function of order 0: ``exp(-|x|) i0(x)``.

    Example:
        >>> from funcgrad.scipy.special import i0e
        >>> round(float(i0e(1000.0)), 12)   # i0(1000) overflows
        0.012617240456
    """
    return _sp.i0e(_floats("i0e", x)[0])


def i1(x: Any) -> Any:
    """Modified Bessel function of the first kind, order 1; ``i1' = i0 - i1/x`` (1/2 at 0).

    Example:
        >>> import funcgrad
        >>> from funcgrad.scipy.special import i1
        >>> round(float(i1(1.0)), 12)
        0.565159103992
        >>> round(float(funcgrad.grad(i1)(0.0)), 12)
        0.5
    """
    return _sp.i1(_floats("i1", x)[0])


def i1e(x: Any) -> Any:
    """Exponentially scaled modified Bessel function of order 1: ``exp(-|x|) i1(x)``.

    Example:
        >>> from funcgrad.scipy.special import i1e
        >>> round(float(i1e(1.0)), 12)
        0.20791041535
    """
    return _sp.i1e(_floats("i1e", x)[0])


# ---------------------------------------------------------------------------------------------
# Regularized incomplete gamma functions


def _lgamma1p(a: Any) -> Any:
    """``log Gamma(1 + a)`` to full relative precision for small ``a`` (where ``1 + a``
    rounds): ``lgamma(u) + digamma(u) (a - (u - 1))``, ``u = 1 + a``, the rounding error
    ``a - (u - 1)`` exact (Fast2Sum, ``|a| < 1``); near ``u = 1`` lgamma itself is accurate
    relatively (its zero there is computed, not cancelled)."""
    u = a + 1.0
    return _sp.lgamma(u) + _sp.digamma(u) * (a - (u - 1.0))


# Temme's uniform expansion of the incomplete gamma functions (DLMF 8.12): d[k][n], the
# coefficients of C_k(eta) = sum_n d[k][n] eta^n, as SciPy's igam.h (K = 10, N = 25 here:
# used from a = 100, where a^-10 is below 1e-20); generated by
# tests/funcgrad/scipy/fixtures/make_temme_coefficients.py (exact rationals, mpmath).
_TEMME_D = (
    (
        -0.3333333333333333, 0.08333333333333333, -0.014814814814814815,
        0.0011574074074074073, 0.0003527336860670194, -0.0001787551440329218,
        3.919263178522438e-05, -2.185448510679992e-06, -1.85406221071516e-06,
        8.296711340953087e-07, -1.7665952736826078e-07, 6.707853543401498e-09,
        1.0261809784240309e-08, -4.382036018453353e-09, 9.14769958223679e-10,
        -2.5514193994946248e-11, -5.830772132550426e-11, 2.4361948020667415e-11,
        -5.0276692801141755e-12, 1.1004392031956135e-13, 3.371763262400985e-13,
        -1.392388722418162e-13, 2.8534893807047445e-14, -5.139111834242572e-16,
        -1.9752288294349442e-15,
    ),
    (
        -0.001851851851851852, -0.003472222222222222, 0.0026455026455026454,
        -0.0009902263374485596, 0.00020576131687242798, -4.018775720164609e-07,
        -1.8098550334489977e-05, 7.64916091608111e-06, -1.6120900894563446e-06,
        4.647127802807434e-09, 1.378633446915721e-07, -5.752545603517705e-08,
        1.1951628599778148e-08, -1.7543241719747647e-11, -1.0091543710600413e-09,
        4.162792991842583e-10, -8.56390702649298e-11, 6.067215101604758e-14,
        7.1624989648114856e-12, -2.933186643771437e-12, 5.996696365683689e-13,
        -2.1671786527323313e-16, -4.978339972369262e-14, 2.0291628823713425e-14,
        -4.13125571381061e-15,
    ),
    (
        0.004133597883597883, -0.0026813271604938273, 0.0007716049382716049,
        2.0093878600823047e-06, -0.0001073665322636516, 5.2923448829120125e-05,
        -1.2760635188618728e-05, 3.423578734096138e-08, 1.3721957309062934e-06,
        -6.298992138380055e-07, 1.4280614206064242e-07, -2.0477098421990866e-10,
        -1.409252991086752e-08, 6.228974084922022e-09, -1.3670488396617114e-09,
        9.428356159014678e-13, 1.2872252400089318e-10, -5.5645956134363323e-11,
        1.197593554636698e-11, -4.1689782251838634e-15, -1.0940640427884595e-12,
        4.662239946390136e-13, -9.905105763906907e-14, 1.8931876768373515e-17,
        8.859221872591127e-15,
    ),
    (
        0.0006494341563786008, 0.00022947209362139917, -0.0004691894943952557,
        0.00026772063206283885, -7.561801671883977e-05, -2.396505113867297e-07,
        1.1082654115347302e-05, -5.6749528269915965e-06, 1.4230900732435883e-06,
        -2.7861080291528143e-11, -1.6958404091930278e-07, 8.099464905388083e-08,
        -1.9111168485973655e-08, 2.3928620439808118e-12, 2.0620131815488797e-09,
        -9.460496661855133e-10, 2.1541049775774907e-10, -1.388823336813903e-14,
        -2.1894761681963938e-11, 9.790998951171684e-12, -2.178219188018096e-12,
        6.208819573407901e-17, 2.126978363279737e-13, -9.344688791517433e-14,
        2.045367122678285e-14,
    ),
    (
        -0.0008618882909167117, 0.0007840392217200666, -0.0002990724803031902,
        -1.4638452578843418e-06, 6.641498215465122e-05, -3.968365047179435e-05,
        1.1375726970678419e-05, 2.507497226237533e-10, -1.6954149536558305e-06,
        8.907507532205309e-07, -2.292934834000805e-07, 2.956794137544049e-11,
        2.8865829742708783e-08, -1.4189739437803219e-08, 3.4463580499464896e-09,
        -2.3024517174528067e-13, -3.9409233028046403e-10, 1.86023389685045e-10,
        -4.356323005056618e-11, 1.278600101629623e-15, 4.67927502665792e-12,
        -2.149246470613483e-12, 4.908815614809652e-13, -6.33859148489156e-18,
        -5.045332069080094e-14,
    ),
    (
        -0.00033679855336635813, -6.972813758365857e-05, 0.0002772753244959392,
        -0.00019932570516188847, 6.797780477937208e-05, 1.419062920643967e-07,
        -1.3594048189768693e-05, 8.018470256334202e-06, -2.291481176508095e-06,
        -3.252473551298454e-10, 3.4652846491085265e-07, -1.8447187191171344e-07,
        4.8240967037894184e-08, -1.7989466721743514e-14, -6.306194500013523e-09,
        3.162417628774568e-09, -7.840924253697429e-10, 5.192679165254041e-15,
        9.358944242306784e-11, -4.513426216163278e-11, 1.0799129993116828e-11,
        -3.661886712685252e-17, -1.210902069055155e-12, 5.680743584990564e-13,
        -1.3249659916340829e-13,
    ),
    (
        0.0005313079364639922, -0.0005921664373536939, 0.0002708782096718045,
        7.902353232660328e-07, -8.153969367561969e-05, 5.61168275310625e-05,
        -1.8329116582843375e-05, -3.0796134506033047e-09, 3.465155368803609e-06,
        -2.0291327396058603e-06, 5.788792863149004e-07, 2.338630673826657e-13,
        -8.828600746330484e-08, 4.7435958880408125e-08, -1.2545415020710383e-08,
        8.649648858010293e-14, 1.6846058979264062e-09, -8.575492823577594e-10,
        2.1598224929232125e-10, -7.613230520476153e-16, -2.6639822008536144e-11,
        1.3065700536611057e-11, -3.1799163902367977e-12, 4.710976121367431e-18,
        3.6902800842763465e-13,
    ),
    (
        0.00034436760689237765, 5.171790908260592e-05, -0.00033493161081142234,
        0.0002812695154763237, -0.00010976582244684731, -1.2741009095484485e-07,
        2.7744451511563645e-05, -1.8263488805711332e-05, 5.7876949497350525e-06,
        4.93875893393627e-10, -1.0595367014026043e-06, 6.166714376110408e-07,
        -1.7562973359060463e-07, -1.297447328701544e-12, 2.695423606288966e-08,
        -1.4578352908731272e-08, 3.887645959386175e-09, -3.881002251019412e-17,
        -5.327994173877286e-10, 2.7437977643314844e-10, -6.995796092070568e-11,
        2.589986387486848e-17, 8.856689099669639e-12, -4.403168815871311e-12,
        1.0865561947091654e-12,
    ),
    (
        -0.0006526239185953094, 0.0008394987206720873, -0.000438297098541721,
        -6.969091458420552e-07, 0.00016644846642067547, -0.00012783517679769218,
        4.629953263691304e-05, 4.557909867922708e-09, -1.0595271125805195e-05,
        6.783342904865167e-06, -2.1075476666258803e-06, -1.7213731432817144e-11,
        3.773587741611098e-07, -2.1867506700122867e-07, 6.220228804018927e-08,
        6.597703826733e-16, -9.590386497425686e-09, 5.213214492280807e-09,
        -1.3991589583935709e-09, 5.382058999060575e-16, 1.9484714275467745e-10,
        -1.0127287556389682e-10, 2.6077347197254926e-11, -5.090418699993299e-18,
        -3.3721464474854593e-12,
    ),
    (
        -0.0005967612901927463, -7.204895416020011e-05, 0.0006782308837667328,
        -0.0006401475260262758, 0.00027750107634328704, 1.819700838046515e-07,
        -8.479507117068503e-05, 6.105192082501531e-05, -2.1073920183404862e-05,
        -8.858589014125599e-10, 4.5284535953805374e-06, -2.8427815022504407e-06,
        8.708234177864641e-07, 3.6886101871706966e-12, -1.534469519070206e-07,
        8.862466778790695e-08, -2.5184812301826817e-08, -1.0225912098215092e-14,
        3.896947075815478e-09, -2.1267304792235634e-09, 5.737013552805138e-10,
        -1.8877498501697116e-19, -8.093153869465787e-11, 4.23827232834492e-11,
        -1.1002224534207725e-11,
    ),
)
_TEMME_MIN_A = 100.0
_TEMME_RATIO = 0.3


def _log1pmx_over_sq(s: Any) -> Any:
    """``(log(1 + s) - s) / s^2`` for ``|s| <= 0.3`` by its series (-1/2 at 0)."""
    acc: Any = 0.0
    for n in range(40, 1, -1):
        acc = acc * s + (-1.0) ** (n + 1) / n
    return acc


def _igam_temme(a: Any, x: Any) -> tuple[Any, Any]:
    """(P, Q) by Temme's uniform asymptotic expansion, for ``a >= 100`` and ``|x - a| < 0.3 a``
    (Cephes' asymptotic_series): ``Q = erfc(eta sqrt(a/2)) / 2 + exp(-a eta^2/2) /
    sqrt(2 pi a) sum_k C_k(eta) a^-k`` and P likewise with the signs turned, each tail
    directly. The series and continued fraction need O(sqrt(a)) steps here, and their
    prefactor exp(a log x - x - lgamma(a)) loses a * eps; this needs neither."""
    fnp = _fnp()
    sigma = (x - a) / a
    # eta = sign(sigma) sqrt(-2 log1pmx(sigma)), written so it is smooth through sigma = 0
    # (a sqrt of 0 there would give the derivatives in a and x an inf).
    eta = sigma * fnp.sqrt(-2.0 * _log1pmx_over_sq(sigma))
    total: Any = 0.0
    afac: Any = 1.0
    for row in _TEMME_D:
        ck: Any = 0.0
        for c in reversed(row):
            ck = ck * eta + c
        total = total + ck * afac
        afac = afac / a
    tail = fnp.exp(-0.5 * a * eta * eta) * total / fnp.sqrt(2.0 * math.pi * a)
    root = eta * fnp.sqrt(0.5 * a)
    return 0.5 * erfc(-root) - tail, 0.5 * erfc(root) + tail


def _igam_values(a: Any, x: Any, shadow: bool = False, logs: bool = False) -> tuple[Any, Any]:
    """(P(a, x), Q(a, x)): the power series where ``x < a + 1``, Lentz's continued fraction
    for Q elsewhere (the other one by ``1 - .``, never near cancellation), one vectorised
    ``while_loop`` until every element has converged. Plain funcgrad operations, so forward
    mode through the loop gives the derivatives in ``a``; ``shadow`` (set when differentiating
    in ``a``) keeps the fraction lanes going until a copy at ``a + 1/2`` has converged too:
    at an integer ``a`` the fraction terminates (its ``n = a`` coefficient is 0) but its
    derivatives in ``a`` do not. ``logs``: ``(log P, log Q)`` instead, for ``a, x`` inside the
    domain only, without underflow (the inverse's Newton steps need them far in the tails)."""
    fnp = _fnp()

    dt = get_aval(x).dtype
    eps = float(numpy.finfo(dt).eps)
    tiny = float(numpy.finfo(dt).tiny) * 1e3
    valid = (a > 0) & (x > 0) & fnp.isfinite(x) & fnp.isfinite(a)
    temme = valid & (a >= _TEMME_MIN_A) & (fnp.abs(x - a) < _TEMME_RATIO * a)
    if not (isinstance(temme, numpy.ndarray) and not temme.any()):
        a_t, x_t = fnp.where(temme, a, _TEMME_MIN_A), fnp.where(temme, x, _TEMME_MIN_A)
        p_t, q_t = _igam_temme(a_t, x_t)
        if logs:
            # Far down a tail the expansion's value underflows: there the logs come from
            # the loop below as before.
            temme = temme & (p_t > 1e-250) & (q_t > 1e-250)
        valid = valid & ~temme  # those lanes skip the loop (stand-ins below)
    else:
        temme = None
    series = x < a + 1.0
    a_s = fnp.where(valid, a, 1.0)
    x_s = fnp.where(valid, x, 1.0)
    zero = fnp.zeros_like(x_s)
    b0 = x_s + 1.0 - a_s
    b0 = fnp.where(series, 1.0, b0)  # the series lanes never use the fraction
    # Where P is near 1 (a small, x <= 1.1: Cephes' igamc choice), Q = 1 - P would cancel:
    # there Q comes from its own series (DLMF 8.7.3), sum_n (-x)^n / (n! (a + n)), n >= 1.
    log_x = fnp.log(x_s)
    q_series = series & valid & (x_s <= 1.1) & fnp.where(
        x_s <= 0.5, a_s * log_x > -0.4, a_s < x_s * 1.1)
    x_q = fnp.where(q_series, x_s, 0.0)  # the other lanes' x^n / n! could overflow
    init = (fnp.asarray(0, dtype=numpy.int32), 1.0 / a_s, 1.0 / a_s, b0,
            zero + 1.0 / tiny, 1.0 / b0, 1.0 / b0, fnp.logical_not(valid), zero + 1.0, zero)
    if shadow:
        a_c = _ew.stop_gradient(a_s + 0.5)
        x_c = _ew.stop_gradient(x_s)
        b_c = fnp.where(series, 1.0, x_c + 1.0 - a_c)
        init = init + (b_c, zero + 1.0 / tiny, 1.0 / b_c)

    def cond(s: tuple) -> Any:
        return (s[0] < 2000) & fnp.logical_not(fnp.all(s[7]))

    def fraction(nf: Any, a_f: Any, b: Any, c: Any, d: Any) -> tuple[Any, Any, Any, Any]:
        an = -nf * (nf - a_f)
        b = b + 2.0
        d = an * d + b
        d = fnp.where(fnp.abs(d) < tiny, tiny, d)
        c = b + an / c
        c = fnp.where(fnp.abs(c) < tiny, tiny, c)
        d = 1.0 / d
        return b, c, d, d * c

    def body(s: tuple) -> tuple:
        i, term, total, b, c, d, h, done, fac, q_sum = s[:10]
        n = i + 1
        nf = fnp.asarray(n, dtype=dt)  # int32 + float32 would promote to float64
        term = term * x_s / (a_s + nf)
        total = total + term
        fac = fac * -x_q / nf
        q_term = fac / (a_s + nf)
        q_sum = q_sum + q_term
        b, c, d, delta = fraction(nf, a_s, b, c, d)
        h = h * delta
        cf_conv = fnp.abs(delta - 1.0) <= eps
        rest: tuple = ()
        if shadow:
            b_c, c_c, d_c, delta_c = fraction(nf, a_c, *s[10:])
            cf_conv = cf_conv & (fnp.abs(delta_c - 1.0) <= eps)
            rest = (b_c, c_c, d_c)
        s_conv = (fnp.abs(term) <= fnp.abs(total) * eps) & (
            fnp.logical_not(q_series) | (fnp.abs(q_term) <= fnp.abs(q_sum) * eps))
        conv = fnp.where(series, s_conv, cf_conv)
        return (n, term, total, b, c, d, h, done | conv, fac, q_sum) + rest

    out = while_loop(cond, body, init)
    total, h, q_sum = out[2], out[6], out[9]
    log_pre = a_s * log_x - x_s - _sp.lgamma(a_s)
    # Q = -expm1(a log x - log Gamma(1 + a)) - x^a / Gamma(a) * sum (Cephes' igamc_series).
    a_q = fnp.where(q_series, a_s, 0.5)
    q_small = (-fnp.expm1(a_q * log_x - _lgamma1p(a_q))
               - fnp.exp(a_q * log_x - _sp.lgamma(a_q)) * q_sum)
    if logs:
        log_small = log_pre + fnp.log(fnp.where(series, total, h))  # the series' P, else Q
        log_big = fnp.log1p(-fnp.exp(log_small))
        log_big = fnp.where(q_series, fnp.log(fnp.where(q_series, q_small, 1.0)), log_big)
        log_p = fnp.where(series, log_small, log_big)
        log_q = fnp.where(series, log_big, log_small)
        if temme is not None:
            log_p = fnp.where(temme, fnp.log(fnp.where(temme, p_t, 1.0)), log_p)
            log_q = fnp.where(temme, fnp.log(fnp.where(temme, q_t, 1.0)), log_q)
        return log_p, log_q
    p_series = fnp.exp(log_pre) * total
    q_cf = fnp.exp(log_pre) * h
    p = fnp.where(series, p_series, 1.0 - q_cf)
    q = fnp.where(series, fnp.where(q_series, q_small, 1.0 - p_series), q_cf)
    if temme is not None:
        p = fnp.where(temme, p_t, p)
        q = fnp.where(temme, q_t, q)
    # Boundaries as SciPy: P(a, 0) = 0, P(0, x > 0) = 1, P(a, inf) = 1, nan outside.
    nan = (a < 0) | (x < 0) | ((a == 0) & (x == 0)) | fnp.isnan(a) | fnp.isnan(x)
    one = ((a == 0) & (x > 0)) | ((x == numpy.inf) & (a >= 0))
    p = fnp.where(x == 0, 0.0, p)
    q = fnp.where(x == 0, 1.0, q)
    p = fnp.where(one, 1.0, p)
    q = fnp.where(one, 0.0, q)
    a_inf = a == numpy.inf
    p = fnp.where(a_inf, 0.0, p)
    q = fnp.where(a_inf, 1.0, q)
    nan = nan | (a_inf & (x == numpy.inf))
    return fnp.where(nan, numpy.nan, p), fnp.where(nan, numpy.nan, q)


# Stirling's series for lgamma(a) - ((a - 1/2) log a - a + log(2 pi) / 2), a >= 10: B_2k /
# (2k (2k - 1) a^(2k - 1)), seven terms (the next is below 1e-17 there).
_STIRLING = (1.0 / 12.0, -1.0 / 360.0, 1.0 / 1260.0, -1.0 / 1680.0, 1.0 / 1188.0,
             -691.0 / 360360.0, 1.0 / 156.0)


def _igam_density(a: Any, x: Any) -> Any:
    """d/dx P(a, x) = x^(a-1) exp(-x) / Gamma(a). For a >= 10 its log is written as
    ``a (log(x/a) - (x/a - 1)) - log x + log(a / 2 pi) / 2 - stirling(a)``: the direct
    ``(a - 1) log x - x - lgamma(a)`` cancels terms of size a (a relative error a * eps in the
    density: 7e-10 at a = 1e6)."""
    fnp = _fnp()
    plain = _ew.exp(_ew.sub(_ew.sub(xlogy(_ew.sub(a, 1.0), x), x), _sp.lgamma(a)))
    big = (a >= 10.0) & (x > 0) & fnp.isfinite(x) & fnp.isfinite(a)
    if isinstance(big, numpy.ndarray) and not big.any():
        return plain
    a_b, x_b = fnp.where(big, a, 10.0), fnp.where(big, x, 10.0)
    sigma = (x_b - a_b) / a_b
    near = fnp.abs(sigma) <= 0.3
    s_n = fnp.where(near, sigma, 0.0)
    lam_f = fnp.where(near, 2.0, x_b / a_b)
    dev = fnp.where(near, s_n * s_n * _log1pmx_over_sq(s_n), fnp.log(lam_f) - (lam_f - 1.0))
    inv = 1.0 / a_b
    inv2 = inv * inv
    corr: Any = 0.0
    for c in reversed(_STIRLING):
        corr = corr * inv2 + c
    corr = corr * inv
    log_d = a_b * dev - fnp.log(x_b) + 0.5 * fnp.log(a_b / (2.0 * math.pi)) - corr
    return fnp.where(big, fnp.exp(log_d), plain)


def _igam_jvp(which: int, primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    (a, x), (ta, tx) = primals, tangents
    # The derivative in a differentiates the series / continued fraction itself (forward mode
    # through the loop, which converges with the values); the one in x is closed form.
    out, t_a = _jvp(lambda a_: _igam_values(a_, x, shadow=True)[which], (a,), (ta,))
    t_x = _ew.mul(tx, _igam_density(a, x))
    return out, _ew.add(t_a, t_x if which == 0 else _ew.neg(t_x))


@custom_jvp
def _gammainc(a: Any, x: Any) -> Any:
    return _igam_values(a, x)[0]


@custom_jvp
def _gammaincc(a: Any, x: Any) -> Any:
    return _igam_values(a, x)[1]


_gammainc.defjvp(functools.partial(_igam_jvp, 0))
_gammaincc.defjvp(functools.partial(_igam_jvp, 1))


@custom_jvp
def _gammainc_x(a: Any, x: Any) -> Any:
    return _igam_values(a, x)[0]


@custom_jvp
def _gammaincc_x(a: Any, x: Any) -> Any:
    return _igam_values(a, x)[1]


@_gammainc_x.defjvp
def _gammainc_x_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    # Only used where a is a constant of every transformation (not a tracer), so its tangent
    # is zero and the loop need not be differentiated.
    (a, x), (_, tx) = primals, tangents
    return _gammainc_x(a, x), _ew.mul(tx, _igam_density(a, x))


@_gammaincc_x.defjvp
def _gammaincc_x_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    (a, x), (_, tx) = primals, tangents
    return _gammaincc_x(a, x), _ew.mul(tx, _ew.neg(_igam_density(a, x)))


def _igam_args(name: str, a: Any, x: Any) -> tuple[Any, Any]:
    a, x = _floats(name, a, x)
    fnp = _fnp()
    a, x = fnp.broadcast_arrays(fnp.asarray(a), fnp.asarray(x))
    return a, x


def _gammaincc_const_a(a: Any, x: Any) -> Any:
    """gammaincc for callers whose ``a`` has a zero derivative by construction (e.g. a floor),
    which some transformations still carry as an explicit zero tangent: the loop is never
    differentiated."""
    a, x = _igam_args("gammaincc", a, x)
    return _gammaincc_x(_ew.stop_gradient(a), x)


def _gammainc_const_a(a: Any, x: Any) -> Any:
    """gammainc for callers whose ``a`` has a zero derivative by construction (see
    :func:`_gammaincc_const_a`)."""
    a, x = _igam_args("gammainc", a, x)
    return _gammainc_x(_ew.stop_gradient(a), x)


def gammainc(a: Any, x: Any) -> Any:
    """Regularized lower incomplete gamma function ``P(a, x)`` (``a >= 0``, ``x >= 0``).

    Differentiable to any order in ``x`` (``dP/dx = x^(a-1) e^(-x) / Gamma(a)``) and in ``a``
    (by differentiating the series / continued fraction, which converges with the values;
    when ``a`` is not traced the loop is never differentiated). Values are accurate to ~1e-14
    for moderate ``a`` (the series / continued fraction take O(sqrt(a)) steps; very large
    ``a`` loses a little through ``exp(a log x - x - gammaln(a))``).

    Example:
        >>> import funcgrad
        >>> from funcgrad.scipy.special import gammainc
        >>> round(float(gammainc(1.0, 2.0)), 12)   # 1 - exp(-2)
        0.864664716763
        >>> round(float(funcgrad.grad(gammainc)(1.0, 2.0)), 12)   # d/da
        -0.220825426212
    """
    a, x = _igam_args("gammainc", a, x)
    if isinstance(a, Tracer):
        return _gammainc(a, x)
    return _gammainc_x(a, x)


def gammaincc(a: Any, x: Any) -> Any:
    """Regularized upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)``, accurate in the
    upper tail. Differentiable in ``a`` and ``x`` (see :func:`gammainc`).

    Example:
        >>> from funcgrad.scipy.special import gammaincc
        >>> print(f"{float(gammaincc(1.0, 50.0)):.10e}")   # exp(-50)
        1.9287498480e-22
    """
    a, x = _igam_args("gammaincc", a, x)
    if isinstance(a, Tracer):
        return _gammaincc(a, x)
    return _gammaincc_x(a, x)


# ---------------------------------------------------------------------------------------------
# Divergences


def rel_entr(x: Any, y: Any) -> Any:
    """Elementwise relative entropy: ``x log(x / y)`` for ``x, y > 0``; 0 for ``x = 0,
    y >= 0``; ``inf`` otherwise.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import rel_entr
        >>> rel_entr(np.array([0.5, 0.0, 1.0]), np.array([0.25, 1.0, 0.0]))
        array([0.34657359, 0.        ,        inf])
    """
    x, y = _floats("rel_entr", x, y)
    fnp = _fnp()
    both = (x > 0) & (y > 0)
    x_s, y_s = fnp.where(both, x, 1.0), fnp.where(both, y, 1.0)
    out = fnp.where(both, x_s * _log_ratio(x_s, y_s), numpy.inf)
    out = fnp.where((x == 0) & (y >= 0), 0.0, out)
    return fnp.where(fnp.isnan(x) | fnp.isnan(y), numpy.nan, out)


def _log_ratio(x: Any, y: Any) -> Any:
    """``log(x / y)`` for ``x, y > 0`` as SciPy's rel_entr: ``log1p((x - y) / y)`` near 1 (x - y
    is exact there), ``log x - log y`` where ``x / y`` overflows or underflows."""
    fnp = _fnp()
    r = x / y
    near = (r > 0.5) & (r < 2.0)
    ranged = (r > numpy.finfo(get_aval(r).dtype).tiny) & (r < numpy.inf)
    r_s = fnp.where(ranged, r, 1.0)
    # Each branch on arguments that are safe where it is not chosen (no log1p(-1) or
    # inf / inf warnings from the branches thrown away).
    x_n, y_n = fnp.where(near, x, 1.0), fnp.where(near, y, 1.0)
    x_f, y_f = fnp.where(ranged, 1.0, x), fnp.where(ranged, 1.0, y)
    return fnp.where(near, fnp.log1p((x_n - y_n) / y_n),
                     fnp.where(ranged, fnp.log(r_s), fnp.log(x_f) - fnp.log(y_f)))


def kl_div(x: Any, y: Any) -> Any:
    """Elementwise ``x log(x / y) - x + y`` for ``x, y > 0``; ``y`` for ``x = 0, y >= 0``;
    ``inf`` otherwise.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import kl_div
        >>> kl_div(np.array([0.5, 0.0]), np.array([0.25, 2.0]))
        array([0.09657359, 2.        ])
    """
    x, y = _floats("kl_div", x, y)
    fnp = _fnp()
    both = (x > 0) & (y > 0)
    # An infinite x or y beside a positive other is inf - inf: nan (SciPy's), computed on
    # stand-ins without the warning.
    inf_lane = both & (fnp.isinf(x) | fnp.isinf(y))
    both = both & ~inf_lane
    x_s, y_s = fnp.where(both, x, 1.0), fnp.where(both, y, 1.0)
    # x / y may underflow to 0 or overflow to inf: the quiet log's value.
    out = fnp.where(both, x_s * _quiet.log(x_s / y_s) - x_s + y_s,
                    fnp.where(inf_lane, _like(x_s, numpy.nan), _like(x_s, numpy.inf)))
    out = fnp.where((x == 0) & (y >= 0), y, out)
    return fnp.where(fnp.isnan(x) | fnp.isnan(y), numpy.nan, out)


# =============================================================================================
# Regularized incomplete beta function


def _while(cond: Any, body: Any, init: Any) -> Any:
    return while_loop(cond, body, init)


def _jvp(fun: Any, primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    return jvp(fun, primals, tangents)


def _f64(x: Any) -> Any:
    return _ew.convert_element_type(x, _F64)


def _clamp_tiny(v: Any, tiny: float) -> Any:
    fnp = _fnp()
    return fnp.where(fnp.abs(v) < tiny, tiny, v)


def _betainc_values(a: Any, b: Any, x: Any, log: bool = False) -> Any:
    """``I_x(a, b)`` in float64 from plain funcgrad operations (so autodiff through the loop
    gives the derivatives in ``a`` and ``b``): the continued fraction of Numerical Recipes'
    ``betacf`` (modified Lentz), on ``I_{1-x}(b, a)`` where ``x > (a + 1) / (a + b + 2)`` so it
    converges in O(sqrt(max(a, b))) steps; one vectorised ``while_loop`` for all elements.
    ``log``: ``log I`` instead, for arguments inside the domain only, without underflow."""
    fnp = _fnp()
    eps = float(numpy.finfo(_F64).eps)
    tiny = 1e-300
    valid = ((a > 0) & (b > 0) & (x > 0) & (x < 1) & fnp.isfinite(a) & fnp.isfinite(b))
    swap = x * (a + b + 2.0) > a + 1.0
    a_s = fnp.where(valid, fnp.where(swap, b, a), 1.0)
    b_s = fnp.where(valid, fnp.where(swap, a, b), 1.0)
    x_s = fnp.where(valid, fnp.where(swap, 1.0 - x, x), 0.5)
    qab, qap = a_s + b_s, a_s + 1.0
    # At an integer b the fraction terminates (its value is exact after b steps), but its
    # derivatives in a and b do not: a shadow fraction at b + 1/2 (no derivatives) must have
    # converged too, so lanes stop only when the tail is negligible for both.
    a_c, b_c, x_c = (_ew.stop_gradient(v) for v in (a_s, b_s + 0.5, x_s))
    d = 1.0 / _clamp_tiny(1.0 - qab * x_s / qap, tiny)
    d_c = 1.0 / _clamp_tiny(1.0 - (a_c + b_c) * x_c / (a_c + 1.0), tiny)
    one = fnp.ones_like(x_s)
    init = (fnp.asarray(0, dtype=numpy.int32), one, d, d, one, d_c,
            fnp.logical_not(valid))

    def cond(s: tuple) -> Any:
        return (s[0] < 5000) & fnp.logical_not(fnp.all(s[-1]))

    def step(a_s: Any, b_s: Any, x_s: Any, mf: Any, c: Any, d: Any) -> tuple[Any, Any, Any]:
        m2 = 2.0 * mf
        aa = mf * (b_s - mf) * x_s / ((a_s - 1.0 + m2) * (a_s + m2))
        d = 1.0 / _clamp_tiny(1.0 + aa * d, tiny)
        c = _clamp_tiny(1.0 + aa / c, tiny)
        factor = d * c
        aa = -(a_s + mf) * (a_s + b_s + mf) * x_s / ((a_s + m2) * (a_s + 1.0 + m2))
        d = 1.0 / _clamp_tiny(1.0 + aa * d, tiny)
        c = _clamp_tiny(1.0 + aa / c, tiny)
        delta = d * c
        return c, d, factor * delta, delta

    def body(s: tuple) -> tuple:
        i, c, d, h, c_c, d_c, done = s
        m = i + 1
        mf = fnp.asarray(m, dtype=_F64)
        c, d, factor, delta = step(a_s, b_s, x_s, mf, c, d)
        c_c, d_c, _, delta_c = step(a_c, b_c, x_c, mf, c_c, d_c)
        conv = (fnp.abs(delta - 1.0) <= eps) & (fnp.abs(delta_c - 1.0) <= eps)
        return m, c, d, h * factor, c_c, d_c, done | conv

    h = _while(cond, body, init)[3]
    log_pre = (a_s * fnp.log(x_s) + b_s * fnp.log1p(-x_s) - fnp.log(a_s)
               - betaln(a_s, b_s))
    if log:
        log_w = log_pre + fnp.log(h)
        return fnp.where(swap, fnp.log1p(-fnp.exp(log_w)), log_w)
    w = fnp.exp(log_pre) * h
    out = fnp.where(swap, 1.0 - w, w)
    # Boundaries as SciPy: I_0 = 0, I_1 = 1, a = 0 (or b = inf) gives 1 for x > 0, b = 0
    # (or a = inf) gives 0 for x < 1; nan outside the domain.
    one = (x == 1.0) | (((a == 0) | (b == numpy.inf)) & (x > 0))
    zero = (x == 0.0) | (((b == 0) | (a == numpy.inf)) & (x < 1))
    out = fnp.where(one, 1.0, fnp.where(zero, 0.0, out))
    nan = ((a < 0) | (b < 0) | (x < 0) | (x > 1) | ((a == 0) & (b == 0))
           | ((a == numpy.inf) & (b == numpy.inf)) | fnp.isnan(a) | fnp.isnan(b)
           | fnp.isnan(x))
    return fnp.where(nan, numpy.nan, out)


def _betainc_eval(a: Any, b: Any, x: Any) -> Any:
    return _back(_betainc_values(_f64(a), _f64(b), _f64(x)), x)


def _beta_density(a: Any, b: Any, x: Any) -> Any:
    """d/dx I_x(a, b) = x^(a-1) (1-x)^(b-1) / B(a, b)."""
    return _fnp().exp(xlogy(a - 1.0, x) + xlog1py(b - 1.0, -x) - betaln(a, b))


@custom_jvp
def _betainc(a: Any, b: Any, x: Any) -> Any:
    return _betainc_eval(a, b, x)


@_betainc.defjvp
def _betainc_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    (a, b, x), (ta, tb, tx) = primals, tangents
    # The derivatives in a and b differentiate the continued fraction itself (forward mode
    # through the loop, which converges with the values); the one in x is closed form.
    out, t_ab = _jvp(lambda a_, b_: _betainc_eval(a_, b_, x), (a, b), (ta, tb))
    return out, t_ab + tx * _beta_density(a, b, x)


@custom_jvp
def _betainc_x(a: Any, b: Any, x: Any) -> Any:
    return _betainc_eval(a, b, x)


@_betainc_x.defjvp
def _betainc_x_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    # Only used where a and b are constants of every transformation (not tracers), so their
    # tangents are zero and the loop need not be differentiated.
    (a, b, x), (_, _, tx) = primals, tangents
    return _betainc_x(a, b, x), tx * _beta_density(a, b, x)


def betainc(a: Any, b: Any, x: Any) -> Any:
    """Regularized incomplete beta function
    ``I_x(a, b) = B(a, b)^-1 int_0^x t^(a-1) (1-t)^(b-1) dt`` (``a, b >= 0``, ``0 <= x <= 1``).

    Evaluated with the continued fraction (modified Lentz), on ``1 - I_{1-x}(b, a)`` where
    ``x > (a + 1) / (a + b + 2)``. Differentiable to any order in all three arguments: in
    ``x`` by the closed form ``x^(a-1) (1-x)^(b-1) / B(a, b)``, in ``a`` and ``b`` by
    differentiating the continued fraction (which converges with the values). float32 input
    is computed in float64 and rounded. Values agree with SciPy to ~1e-13 for moderate
    ``a, b`` (the fraction takes O(sqrt(max(a, b))) steps).

    Example:
        >>> import funcgrad
        >>> from funcgrad.scipy.special import betainc
        >>> round(float(betainc(2.0, 3.0, 0.4)), 12)
        0.5248
        >>> round(float(funcgrad.grad(betainc, argnums=2)(2.0, 3.0, 0.4)), 12)   # density
        1.728
    """
    a, b, x = _floats("betainc", a, b, x)
    fnp = _fnp()
    a, b, x = fnp.broadcast_arrays(fnp.asarray(a), fnp.asarray(b), fnp.asarray(x))
    if isinstance(a, Tracer) or isinstance(b, Tracer):
        return _betainc(a, b, x)
    return _betainc_x(a, b, x)


def _betainc_const_ab(a: Any, b: Any, x: Any) -> Any:
    """betainc for callers whose ``a`` and ``b`` have a zero derivative by construction
    (integer parameters of discrete distributions): the loop is never differentiated."""
    a, b, x = _floats("betainc", a, b, x)
    fnp = _fnp()
    a, b, x = fnp.broadcast_arrays(fnp.asarray(a), fnp.asarray(b), fnp.asarray(x))
    return _betainc_x(_ew.stop_gradient(a), _ew.stop_gradient(b), x)


# =============================================================================================
# Inverses of the regularized incomplete gamma and beta functions


def _lower_tail_guess(small: Any) -> Any:
    """The standard normal quantile of ``small <= 1/2`` to ~3 digits (A&S 26.2.22), negative."""
    fnp = _fnp()
    t = fnp.sqrt(-2.0 * fnp.log(small))
    return (2.30753 + t * 0.27061) / (1.0 + t * (0.99229 + t * 0.04481)) - t


def _newton_done(step: Any, prev: Any, eps: float) -> Any:
    """Whether Newton's relative step has converged: down to rounding, or stalled at the
    level of the function's own rounding error (P at a large shape has only ~12 digits: its
    log carries a log x - x - log Gamma(a)), where a step no longer halves the previous."""
    return (step <= 4.0 * eps) | ((step < 1e-9) & (step > 0.5 * prev))


def _gammaincinv_values(a: Any, p: Any, q: Any) -> Any:
    """``x`` with ``P(a, x) = p`` where ``q = 1 - p`` (both given, each accurate), float64.

    Newton's method on the logarithm of the smaller tail: on ``log P`` in ``log x`` where
    ``p <= q`` (where ``P`` behaves as ``x^a``, so a tiny ``p`` costs no extra steps), on
    ``log Q`` in ``x`` otherwise (where ``Q`` behaves as ``e^-x``); each converges
    quadratically from Numerical Recipes' starting values (``invgammp``)."""
    fnp = _fnp()
    eps = float(numpy.finfo(_F64).eps)
    valid = (a > 0) & (p > 0) & (q > 0) & fnp.isfinite(a)
    upper = q < p
    a_s = fnp.where(valid, a, 1.0)
    p_s = fnp.where(valid, p, 0.5)
    q_s = fnp.where(valid, q, 0.5)
    lg = _sp.lgamma(a_s)
    # Starting values: Wilson-Hilferty for a > 1, the two tails' leading terms otherwise.
    z = _lower_tail_guess(fnp.minimum(p_s, q_s))
    z = fnp.where(upper, -z, z)
    a_big = fnp.maximum(a_s, 1.0)
    wh = a_big * (1.0 - 1.0 / (9.0 * a_big) + z / (3.0 * fnp.sqrt(a_big))) ** 3
    x_big = fnp.maximum(wh, 1e-3)
    t = 1.0 - a_s * (0.253 + a_s * 0.12)
    t_pos = fnp.where(t > 0, t, 0.5)
    x_small = fnp.where(p_s < t, fnp.exp((fnp.log(p_s) - fnp.log(t_pos)) / a_s),
                        1.0 - fnp.log(q_s / (1.0 - t)))
    x0 = fnp.where(a_s > 1.0, x_big, x_small)
    # The lower tail's leading term x^a / Gamma(a + 1) bounds P from above, so its inverse
    # x_pow is at most the root: Newton on log P (concave in log x) converges from there
    # monotonically, also where p is tiny and Wilson-Hilferty is far off.
    x_pow = fnp.exp((fnp.log(p_s) + _sp.lgamma(a_s + 1.0)) / a_s)
    x0 = fnp.where(upper, x0, x_pow)
    log_p, log_q = fnp.log(p_s), fnp.log(q_s)
    tiny = float(numpy.finfo(_F64).tiny)
    x0 = fnp.maximum(x0, tiny)
    # A root below the smallest normal number is 0 (see below): nothing to iterate.
    underflow = ~upper & (x_pow < tiny)
    init = (fnp.asarray(0, dtype=numpy.int32), x0, fnp.logical_not(valid) | underflow,
            fnp.ones_like(x0))

    def cond(s: tuple) -> Any:
        return (s[0] < 100) & fnp.logical_not(fnp.all(s[2]))

    def body(s: tuple) -> tuple:
        i, x, done, prev = s
        log_pv, log_qv = _igam_values(a_s, x, logs=True)
        log_kernel = a_s * fnp.log(x) - x - lg  # x * density
        # lower: d log P / d log x = x dens / P; upper: d log Q / dx = -dens / Q.
        # Far from the root the ratios can overflow; the steps are clipped anyway.
        du = (log_pv - log_p) * fnp.exp(fnp.minimum(log_pv - log_kernel, 700.0))
        du = fnp.clip(du, -5.0, 5.0)
        x_lo = fnp.maximum(x * fnp.exp(-du), tiny)
        dx = (log_qv - log_q) * fnp.exp(fnp.minimum(log_qv - log_kernel + fnp.log(x), 700.0))
        x_up = fnp.clip(x + dx, 0.5 * x, 2.0 * x + 10.0)
        x_new = fnp.where(done, x, fnp.where(upper, x_up, x_lo))
        step = fnp.where(upper, fnp.abs(x_up - x) / x, fnp.abs(du))
        return i + 1, x_new, done | _newton_done(step, prev, eps), step

    x = _while(cond, body, init)[1]
    # The root is at least x_pow (P <= x^a / Gamma(a + 1)), and about it when that is tiny:
    # an x below the smallest normal number is 0.
    x = fnp.where(underflow, 0.0, x)
    x = fnp.where(p == 0, 0.0, fnp.where(q == 0, numpy.inf, x))
    nan = ((a <= 0) | (a == numpy.inf) | (p < 0) | (q < 0) | fnp.isnan(a) | fnp.isnan(p)
           | fnp.isnan(q))
    return fnp.where(nan, numpy.nan, x)


def _gammaincinv_eval(a: Any, p: Any, q: Any) -> Any:
    return _back(_gammaincinv_values(_f64(a), _f64(p), _f64(q)), p)


def _gammaincinv_tangent(a: Any, x: Any, tp: Any, ta: Any) -> Any:
    """dx from ``P(a, x) = p``: ``(dp - dP/da da) / (dP/dx)``."""
    num = tp if ta is None else tp - _jvp(lambda a_: _gammainc(a_, x), (a,), (ta,))[1]
    return num / _igam_density(a, x)


@custom_jvp
def _gammaincinv(a: Any, p: Any, q: Any) -> Any:
    return _gammaincinv_eval(a, p, q)


@_gammaincinv.defjvp
def _gammaincinv_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    (a, p, q), (ta, tp, tq) = primals, tangents
    x = _gammaincinv(a, p, q)
    # p and q = 1 - p are one input given twice: the accurate one carries the tangent.
    dp = _fnp().where(q < p, -tq, tp)
    return x, _gammaincinv_tangent(a, x, dp, ta)


@custom_jvp
def _gammaincinv_x(a: Any, p: Any, q: Any) -> Any:
    return _gammaincinv_eval(a, p, q)


@_gammaincinv_x.defjvp
def _gammaincinv_x_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    # Only used where a is a constant of every transformation: no derivative in a.
    (a, p, q), (_, tp, tq) = primals, tangents
    x = _gammaincinv_x(a, p, q)
    return x, _gammaincinv_tangent(a, x, _fnp().where(q < p, -tq, tp), None)


def _gammaincinv_pq(name: str, a: Any, p: Any, q: Any) -> Any:
    """The inverse of ``P(a, .)`` at ``p``, given ``q = 1 - p`` too (callers that have the
    accurate complement pass it; the smaller of the two drives the iteration)."""
    a, p, q = _floats(name, a, p, q)
    fnp = _fnp()
    a, p, q = fnp.broadcast_arrays(fnp.asarray(a), fnp.asarray(p), fnp.asarray(q))
    if isinstance(a, Tracer):
        return _gammaincinv(a, p, q)
    return _gammaincinv_x(a, p, q)


def gammaincinv(a: Any, y: Any) -> Any:
    """Inverse of :func:`gammainc` in ``x``: ``x`` with ``P(a, x) = y`` (``a > 0``,
    ``0 <= y <= 1``; ``0`` at ``y = 0``, ``inf`` at ``y = 1``, nan outside).

    Newton's method on the logarithm of the smaller tail, so tiny ``y`` keeps full relative
    precision. Differentiable to any order in ``y`` (``1 / (dP/dx)``) and in ``a`` (through
    :func:`gammainc`'s derivative in ``a``).

    Example:
        >>> import funcgrad
        >>> from funcgrad.scipy.special import gammaincinv
        >>> round(float(gammaincinv(1.0, 0.5)), 12)   # exponential median: log 2
        0.69314718056
        >>> round(float(funcgrad.grad(gammaincinv, argnums=1)(1.0, 0.5)), 12)   # 1 / (1 - y)
        2.0
    """
    a, y = _igam_args("gammaincinv", a, y)
    return _gammaincinv_pq("gammaincinv", a, y, 1.0 - y)


def gammainccinv(a: Any, y: Any) -> Any:
    """Inverse of :func:`gammaincc` in ``x``: ``x`` with ``Q(a, x) = y`` (``inf`` at
    ``y = 0``, ``0`` at ``y = 1``), accurate for tiny ``y`` (far upper tail).

    Example:
        >>> from funcgrad.scipy.special import gammainccinv
        >>> round(float(gammainccinv(1.0, 1e-300)), 10)   # -log(1e-300)
        690.7755278982
    """
    a, y = _igam_args("gammainccinv", a, y)
    return _gammaincinv_pq("gammainccinv", a, 1.0 - y, y)


def _betaincinv_values(a: Any, b: Any, y: Any, yc: Any) -> tuple[Any, Any]:
    """``(x, 1 - x)`` with ``I_x(a, b) = y``, ``yc = 1 - y`` (both accurate), float64.

    The smaller tail is solved (``I_{1-x}(b, a) = yc`` where ``yc < y``), by Newton's method
    on ``log I`` in ``log x``: quadratic from Numerical Recipes' starting values
    (``invbetai``), and a tiny probability costs no extra steps. Both ``x`` and ``1 - x`` come
    out with full relative precision (the solved one as ``exp(u)``, its complement as
    ``-expm1(u)``)."""
    fnp = _fnp()
    eps = float(numpy.finfo(_F64).eps)
    tiny = float(numpy.finfo(_F64).tiny)
    valid = (a > 0) & (b > 0) & (y > 0) & (yc > 0) & fnp.isfinite(a) & fnp.isfinite(b)
    swap = yc < y
    a_s = fnp.where(valid, fnp.where(swap, b, a), 1.0)
    b_s = fnp.where(valid, fnp.where(swap, a, b), 1.0)
    p_s = fnp.where(valid, fnp.where(swap, yc, y), 0.5)
    lbeta = betaln(a_s, b_s)
    # Starting values (NR's invbetai): a normal approximation when both shapes are >= 1,
    # else the two tails' leading terms.
    z = _lower_tail_guess(p_s)
    a1 = fnp.maximum(a_s, 1.0)
    b1 = fnp.maximum(b_s, 1.0)
    al = (z * z - 3.0) / 6.0
    h = 2.0 / (1.0 / (2.0 * a1 - 1.0) + 1.0 / (2.0 * b1 - 1.0))
    w = (z * fnp.sqrt(fnp.maximum(al + h, 0.0)) / h
         - (1.0 / (2.0 * b1 - 1.0) - 1.0 / (2.0 * a1 - 1.0)) * (al + 5.0 / 6.0 - 2.0 / (3.0 * h)))
    u_big = fnp.log(a1) - fnp.logaddexp(fnp.log(a1), fnp.log(b1) + 2.0 * w)
    lab = fnp.log(a_s + b_s)
    lt = a_s * (fnp.log(a_s) - lab) - fnp.log(a_s)
    lu = b_s * (fnp.log(b_s) - lab) - fnp.log(b_s)
    lw = fnp.logaddexp(lt, lu)
    left = fnp.log(p_s) < lt - lw
    u_left = (fnp.log(a_s) + lw + fnp.log(p_s)) / a_s
    xc_right = fnp.exp((fnp.log(b_s) + lw + fnp.log1p(-fnp.where(left, 0.0, p_s))) / b_s)
    u_right = fnp.log1p(-fnp.minimum(xc_right, 0.5))
    u_small = fnp.where(left, u_left, u_right)
    u0 = fnp.where((a_s >= 1.0) & (b_s >= 1.0), u_big, u_small)
    # As for the gamma: x^a / (a B(a, b)) bounds I_x(a, b) from above near 0.
    u_pow = (fnp.log(p_s) + fnp.log(a_s) + lbeta) / a_s
    u0 = fnp.minimum(fnp.minimum(u0, u_pow), -tiny)
    log_p = fnp.log(p_s)
    # Near 0 the root is about u_pow: below the smallest normal number it is 0 (no steps).
    underflow = u_pow < math.log(tiny)
    init = (fnp.asarray(0, dtype=numpy.int32), u0, fnp.logical_not(valid) | underflow,
            fnp.ones_like(u0))

    def cond(s: tuple) -> Any:
        return (s[0] < 100) & fnp.logical_not(fnp.all(s[2]))

    def body(s: tuple) -> tuple:
        i, u, done, prev = s
        x = fnp.exp(u)
        log_i = _betainc_values(a_s, b_s, x, log=True)
        # x * density = x^a (1 - x)^(b-1) / B(a, b)
        log_kernel = a_s * u + (b_s - 1.0) * fnp.log(-fnp.expm1(u)) - lbeta
        du = fnp.clip((log_i - log_p) * fnp.exp(fnp.minimum(log_i - log_kernel, 700.0)),
                      -5.0, 5.0)
        u_new = u - du
        # x stays below 1 (u < 0): halve the distance to 0 instead of stepping past it.
        u_new = fnp.where(u_new < 0.0, u_new, 0.5 * u)
        step = fnp.abs(u_new - u) / fnp.maximum(fnp.abs(u), 1.0)
        return i + 1, fnp.where(done, u, u_new), done | _newton_done(step, prev, eps), step

    u = _while(cond, body, init)[1]
    u = fnp.where(underflow, -numpy.inf, u)
    x_s, xc_s = fnp.exp(u), -fnp.expm1(u)
    x = fnp.where(swap, xc_s, x_s)
    xc = fnp.where(swap, x_s, xc_s)
    zero, one = y == 0, yc == 0
    x = fnp.where(zero, 0.0, fnp.where(one, 1.0, x))
    xc = fnp.where(zero, 1.0, fnp.where(one, 0.0, xc))
    nan = ((a <= 0) | (b <= 0) | (a == numpy.inf) | (b == numpy.inf) | (y < 0) | (yc < 0)
           | fnp.isnan(a) | fnp.isnan(b) | fnp.isnan(y) | fnp.isnan(yc))
    return fnp.where(nan, numpy.nan, x), fnp.where(nan, numpy.nan, xc)


def _betaincinv_eval(a: Any, b: Any, y: Any, yc: Any) -> tuple[Any, Any]:
    x, xc = _betaincinv_values(_f64(a), _f64(b), _f64(y), _f64(yc))
    return _back(x, y), _back(xc, y)


def _betaincinv_tangents(a: Any, b: Any, x: Any, xc: Any, dy: Any,
                         ta: Any, tb: Any) -> tuple[Any, Any]:
    """dx from ``I_x(a, b) = y``: ``(dy - dI/da da - dI/db db) / (dI/dx)``; d(1-x) = -dx."""
    num = dy
    if ta is not None:
        num = num - _jvp(lambda a_, b_: _betainc(a_, b_, x), (a, b), (ta, tb))[1]
    fnp = _fnp()
    dens = fnp.exp(xlogy(a - 1.0, x) + xlogy(b - 1.0, xc) - betaln(a, b))
    dx = num / dens
    return dx, -dx


@custom_jvp
def _betaincinv(a: Any, b: Any, y: Any, yc: Any) -> tuple[Any, Any]:
    return _betaincinv_eval(a, b, y, yc)


@_betaincinv.defjvp
def _betaincinv_jvp(primals: tuple, tangents: tuple) -> tuple:
    (a, b, y, yc), (ta, tb, ty, tyc) = primals, tangents
    x, xc = _betaincinv(a, b, y, yc)
    dy = _fnp().where(yc < y, -tyc, ty)
    return (x, xc), _betaincinv_tangents(a, b, x, xc, dy, ta, tb)


@custom_jvp
def _betaincinv_x(a: Any, b: Any, y: Any, yc: Any) -> tuple[Any, Any]:
    return _betaincinv_eval(a, b, y, yc)


@_betaincinv_x.defjvp
def _betaincinv_x_jvp(primals: tuple, tangents: tuple) -> tuple:
    # Only used where a and b are constants of every transformation.
    (a, b, y, yc), (_, _, ty, tyc) = primals, tangents
    x, xc = _betaincinv_x(a, b, y, yc)
    dy = _fnp().where(yc < y, -tyc, ty)
    return (x, xc), _betaincinv_tangents(a, b, x, xc, dy, None, None)


def _betaincinv_pair(name: str, a: Any, b: Any, y: Any, yc: Any) -> tuple[Any, Any]:
    """``(x, 1 - x)`` with ``I_x(a, b) = y`` given ``yc = 1 - y`` too, each to full relative
    precision (for the quantiles of t and F, which need both)."""
    a, b, y, yc = _floats(name, a, b, y, yc)
    fnp = _fnp()
    a, b, y, yc = fnp.broadcast_arrays(fnp.asarray(a), fnp.asarray(b), fnp.asarray(y),
                                       fnp.asarray(yc))
    if isinstance(a, Tracer) or isinstance(b, Tracer):
        return _betaincinv(a, b, y, yc)
    return _betaincinv_x(a, b, y, yc)


def betaincinv(a: Any, b: Any, y: Any) -> Any:
    """Inverse of :func:`betainc` in ``x``: ``x`` with ``I_x(a, b) = y`` (``a, b > 0``,
    ``0 <= y <= 1``; nan outside).

    Newton's method on the logarithm of the smaller tail (``I_{1-x}(b, a) = 1 - y`` above
    ``y = 1/2``), so tiny tail probabilities keep full relative precision. Differentiable to
    any order in all three arguments (by the implicit function theorem on :func:`betainc`).

    Example:
        >>> import funcgrad
        >>> from funcgrad.scipy.special import betaincinv
        >>> round(float(betaincinv(2.0, 3.0, 0.5248)), 12)
        0.4
        >>> round(float(funcgrad.grad(betaincinv, argnums=2)(2.0, 3.0, 0.5248)), 12)
        0.578703703704
    """
    a, b, y = _floats("betaincinv", a, b, y)
    return _betaincinv_pair("betaincinv", a, b, y, 1.0 - y)[0]


# =============================================================================================
# Cephes-style distribution functions (scipy.special's names over the incomplete gammas)


def pdtr(k: Any, m: Any) -> Any:
    """Poisson CDF: ``P(K <= k) = gammaincc(floor(k) + 1, m)`` (nan for ``k < 0`` or
    ``m < 0``), as ``scipy.special.pdtr``.

    Example:
        >>> from funcgrad.scipy.special import pdtr
        >>> round(float(pdtr(2.5, 3.0)), 12)
        0.423190081127
    """
    k, m = _igam_args("pdtr", k, m)
    fnp = _fnp()
    kf = _ew.stop_gradient(fnp.floor(k))
    out = _gammaincc_const_a(fnp.where(kf >= 0, kf, 0.0) + 1.0, m)
    return fnp.where((k < 0) | (m < 0) | fnp.isnan(k), numpy.nan, out)


def pdtrc(k: Any, m: Any) -> Any:
    """Poisson survival function ``P(K > k) = gammainc(floor(k) + 1, m)``.

    Example:
        >>> from funcgrad.scipy.special import pdtrc
        >>> round(float(pdtrc(2.5, 3.0)), 12)
        0.576809918873
    """
    k, m = _igam_args("pdtrc", k, m)
    fnp = _fnp()
    kf = _ew.stop_gradient(fnp.floor(k))
    out = _gammainc_const_a(fnp.where(kf >= 0, kf, 0.0) + 1.0, m)
    return fnp.where((k < 0) | (m < 0) | fnp.isnan(k), numpy.nan, out)


def chdtr(v: Any, x: Any) -> Any:
    """Chi-square CDF with ``v`` degrees of freedom: ``gammainc(v / 2, x / 2)``.

    Example:
        >>> from funcgrad.scipy.special import chdtr
        >>> round(float(chdtr(3.0, 2.0)), 12)
        0.427593295529
    """
    v, x = _igam_args("chdtr", v, x)
    return _fnp().where(v >= 0, gammainc(0.5 * v, 0.5 * x), numpy.nan)


def chdtrc(v: Any, x: Any) -> Any:
    """Chi-square survival function ``gammaincc(v / 2, x / 2)``.

    Example:
        >>> from funcgrad.scipy.special import chdtrc
        >>> round(float(chdtrc(3.0, 2.0)), 12)
        0.572406704471
    """
    v, x = _igam_args("chdtrc", v, x)
    return _fnp().where(v >= 0, gammaincc(0.5 * v, 0.5 * x), numpy.nan)


def chdtri(v: Any, p: Any) -> Any:
    """Inverse of :func:`chdtrc` in ``x``: ``2 gammainccinv(v / 2, p)`` (the critical value
    of a chi-square test at level ``p``).

    Example:
        >>> from funcgrad.scipy.special import chdtri
        >>> round(float(chdtri(3.0, 0.05)), 10)
        7.8147279033
    """
    v, p = _igam_args("chdtri", v, p)
    fnp = _fnp()
    # v = 0: all the mass at 0 (SciPy's 0 for 0 < p <= 1, inf at p = 0)
    at_zero = fnp.where(p == 0, numpy.inf, fnp.where((p > 0) & (p <= 1), 0.0, numpy.nan))
    out = 2.0 * gammainccinv(fnp.where(v > 0, 0.5 * v, 1.0), p)
    return fnp.where(v > 0, out, fnp.where(v == 0, at_zero, numpy.nan))


def gdtr(a: Any, b: Any, x: Any) -> Any:
    """Gamma CDF with rate ``a`` and shape ``b``: ``gammainc(b, a x)``.

    Example:
        >>> from funcgrad.scipy.special import gdtr
        >>> round(float(gdtr(2.0, 3.0, 1.5)), 12)
        0.576809918873
    """
    a, b, x = _floats("gdtr", a, b, x)
    return _fnp().where(x < 0, numpy.nan, gammainc(b, a * x))


def gdtrc(a: Any, b: Any, x: Any) -> Any:
    """Gamma survival function ``gammaincc(b, a x)``.

    Example:
        >>> from funcgrad.scipy.special import gdtrc
        >>> round(float(gdtrc(2.0, 3.0, 1.5)), 12)
        0.423190081127
    """
    a, b, x = _floats("gdtrc", a, b, x)
    return _fnp().where(x < 0, numpy.nan, gammaincc(b, a * x))


def _kfloor(k: Any) -> Any:
    """``floor(k)`` as a count: no derivative (as SciPy, a fractional count is truncated)."""
    return _ew.stop_gradient(_fnp().floor(k))


def bdtr(k: Any, n: Any, p: Any) -> Any:
    """Binomial CDF ``P(K <= floor(k))`` for ``n`` trials of probability ``p``:
    ``betainc(n - k, k + 1, 1 - p)`` (nan unless ``0 <= k <= n``, ``0 <= p <= 1``), as
    ``scipy.special.bdtr``. Differentiable in ``p`` (and ``n``).

    Example:
        >>> from funcgrad.scipy.special import bdtr
        >>> round(float(bdtr(2, 5, 0.3)), 12)
        0.83692
    """
    k, n, p = _floats("bdtr", k, n, p)
    fnp = _fnp()
    k, n, p = fnp.broadcast_arrays(fnp.asarray(k), fnp.asarray(n), fnp.asarray(p))
    kf = _kfloor(k)
    bad = ~((kf >= 0) & (kf <= n) & (p >= 0) & (p <= 1))
    inner = ~bad & (kf < n) & (kf > 0)
    dn = fnp.where(inner, n - kf, 1.0)
    out = betainc(dn, fnp.where(inner, kf + 1.0, 1.0), fnp.where(inner, 1.0 - p, 0.5))
    # k = 0: (1 - p)^n directly (as SciPy; betainc(n, 1, 1 - p) is the same value).
    zero = ~bad & (kf == 0) & (kf < n)
    n0, p0 = fnp.where(zero, n, 1.0), fnp.where(zero, p, 0.5)
    out = fnp.where(zero, fnp.exp(n0 * _quiet.log1p(-p0)), out)
    out = fnp.where(~bad & (kf == n), 1.0, out)
    return fnp.where(bad, numpy.nan, out)


def bdtrc(k: Any, n: Any, p: Any) -> Any:
    """Binomial survival function ``P(K > floor(k)) = betainc(k + 1, n - k, p)`` (1 for
    ``k < 0``, 0 at ``k = n``), as ``scipy.special.bdtrc``.

    Example:
        >>> from funcgrad.scipy.special import bdtrc
        >>> round(float(bdtrc(2, 5, 0.3)), 12)
        0.16308
    """
    k, n, p = _floats("bdtrc", k, n, p)
    fnp = _fnp()
    k, n, p = fnp.broadcast_arrays(fnp.asarray(k), fnp.asarray(n), fnp.asarray(p))
    kf = _kfloor(k)
    bad = ~((kf <= n) & (p >= 0) & (p <= 1) & (n >= 0))
    inner = ~bad & (kf < n) & (kf > 0)
    out = betainc(fnp.where(inner, kf + 1.0, 1.0), fnp.where(inner, n - kf, 1.0),
                  fnp.where(inner, p, 0.5))
    # k = 0: 1 - (1 - p)^n without the cancellation at small p.
    zero = ~bad & (kf == 0) & (kf < n)
    n0, p0 = fnp.where(zero, n, 1.0), fnp.where(zero, p, 0.5)
    out = fnp.where(zero, -fnp.expm1(n0 * _quiet.log1p(-p0)), out)
    out = fnp.where(~bad & (kf == n), 0.0, out)
    out = fnp.where(~bad & (kf < 0), 1.0, out)
    return fnp.where(bad | fnp.isnan(k), numpy.nan, out)


def bdtri(k: Any, n: Any, y: Any) -> Any:
    """Inverse of :func:`bdtr` in ``p``: the ``p`` with ``bdtr(k, n, p) = y`` (nan unless
    ``0 <= k < n``, ``0 <= y <= 1``), as ``scipy.special.bdtri``; ``p`` keeps full relative
    precision near both ends (both tails come from :func:`betaincinv`).

    Example:
        >>> from funcgrad.scipy.special import bdtri
        >>> round(float(bdtri(2, 5, 0.83692)), 12)
        0.3
    """
    k, n, y = _floats("bdtri", k, n, y)
    fnp = _fnp()
    k, n, y = fnp.broadcast_arrays(fnp.asarray(k), fnp.asarray(n), fnp.asarray(y))
    kf = _kfloor(k)
    bad = ~((kf >= 0) & (kf < n) & (y >= 0) & (y <= 1))
    dn = fnp.where(bad, 1.0, n - kf)
    # I_{1-p}(n - k, k + 1) = y: 1 - p is the inverse's x, p its complement.
    _, p = _betaincinv_pair("bdtri", dn, fnp.where(bad, 1.0, kf + 1.0),
                            fnp.where(bad, 0.5, y), fnp.where(bad, 0.5, 1.0 - y))
    return fnp.where(bad, numpy.nan, p)


def nbdtr(k: Any, n: Any, p: Any) -> Any:
    """Negative binomial CDF: probability of at most ``floor(k)`` failures before the
    ``n``-th success, ``betainc(n, k + 1, p)``, as ``scipy.special.nbdtr``.

    Example:
        >>> from funcgrad.scipy.special import nbdtr
        >>> round(float(nbdtr(2, 3, 0.4)), 12)
        0.31744
    """
    k, n, p = _floats("nbdtr", k, n, p)
    fnp = _fnp()
    k, n, p = fnp.broadcast_arrays(fnp.asarray(k), fnp.asarray(n), fnp.asarray(p))
    kf = _kfloor(k)
    bad = ~((kf >= 0) & (n > 0) & (p >= 0) & (p <= 1))
    out = betainc(fnp.where(bad, 1.0, n), fnp.where(bad, 1.0, kf + 1.0), fnp.where(bad, 0.5, p))
    return fnp.where(bad, numpy.nan, out)


def nbdtrc(k: Any, n: Any, p: Any) -> Any:
    """Negative binomial survival function ``betainc(k + 1, n, 1 - p)``, as
    ``scipy.special.nbdtrc``.

    Example:
        >>> from funcgrad.scipy.special import nbdtrc
        >>> round(float(nbdtrc(2, 3, 0.4)), 12)
        0.68256
    """
    k, n, p = _floats("nbdtrc", k, n, p)
    fnp = _fnp()
    k, n, p = fnp.broadcast_arrays(fnp.asarray(k), fnp.asarray(n), fnp.asarray(p))
    kf = _kfloor(k)
    bad = ~((kf >= 0) & (n > 0) & (p >= 0) & (p <= 1))
    out = betainc(fnp.where(bad, 1.0, kf + 1.0), fnp.where(bad, 1.0, n),
                  fnp.where(bad, 0.5, 1.0 - p))
    return fnp.where(bad, numpy.nan, out)


def nbdtri(k: Any, n: Any, y: Any) -> Any:
    """Inverse of :func:`nbdtr` in ``p``: ``betaincinv(n, k + 1, y)``, as
    ``scipy.special.nbdtri``.

    Example:
        >>> from funcgrad.scipy.special import nbdtri
        >>> round(float(nbdtri(2, 3, 0.31744)), 12)
        0.4
    """
    k, n, y = _floats("nbdtri", k, n, y)
    fnp = _fnp()
    k, n, y = fnp.broadcast_arrays(fnp.asarray(k), fnp.asarray(n), fnp.asarray(y))
    kf = _kfloor(k)
    bad = ~((kf >= 0) & (n > 0) & (y >= 0) & (y <= 1))
    x, _ = _betaincinv_pair("nbdtri", fnp.where(bad, 1.0, n), fnp.where(bad, 1.0, kf + 1.0),
                            fnp.where(bad, 0.5, y), fnp.where(bad, 0.5, 1.0 - y))
    return fnp.where(bad, numpy.nan, x)


def _fdtr_args(name: str, a: Any, b: Any, x: Any) -> tuple[Any, Any, Any, Any]:
    a, b, x = _floats(name, a, b, x)
    fnp = _fnp()
    a, b, x = fnp.broadcast_arrays(fnp.asarray(a), fnp.asarray(b), fnp.asarray(x))
    bad = ~((a > 0) & (b > 0) & (x >= 0))
    return fnp.where(bad, 1.0, a), fnp.where(bad, 1.0, b), x, bad


def _fdtr_pair(name: str, dfn: Any, dfd: Any, x: Any) -> tuple[Any, Any]:
    """(cdf, sf) of the F distribution: ``I_w(dfn/2, dfd/2)`` with ``w = dfn x / (dfd +
    dfn x)`` and ``I_{1-w}(dfd/2, dfn/2)`` with ``1 - w = dfd / (dfd + dfn x)``, each computed
    from its own argument unless that rounds near 1 (above 0.9, where ``1 - w`` would lose
    digits): then as 1 minus the other one."""
    a, b, x, bad = _fdtr_args(name, dfn, dfd, x)
    fnp = _fnp()
    fin = fnp.isfinite(x)
    xs = fnp.where(fin & ~bad, x, 1.0)
    ax = a * xs
    w1, w2 = ax / (b + ax), b / (b + ax)
    i1 = betainc(0.5 * a, 0.5 * b, w1)
    i2 = betainc(0.5 * b, 0.5 * a, w2)
    cdf = fnp.where(w1 <= 0.9, i1, 1.0 - i2)
    sf = fnp.where(w2 <= 0.9, i2, 1.0 - i1)
    cdf = fnp.where(fin, cdf, 1.0)
    sf = fnp.where(fin, sf, 0.0)
    return fnp.where(bad, numpy.nan, cdf), fnp.where(bad, numpy.nan, sf)


def fdtr(dfn: Any, dfd: Any, x: Any) -> Any:
    """F distribution CDF: ``betainc(dfn/2, dfd/2, dfn x / (dfd + dfn x))`` (nan unless
    ``dfn, dfd > 0`` and ``x >= 0``), as ``scipy.special.fdtr``.

    Example:
        >>> from funcgrad.scipy.special import fdtr
        >>> round(float(fdtr(2.0, 4.0, 2.0)), 12)
        0.75
    """
    return _fdtr_pair("fdtr", dfn, dfd, x)[0]


def fdtrc(dfn: Any, dfd: Any, x: Any) -> Any:
    """F distribution survival function ``betainc(dfd/2, dfn/2, dfd / (dfd + dfn x))``,
    accurate in the upper tail, as ``scipy.special.fdtrc``.

    Example:
        >>> from funcgrad.scipy.special import fdtrc
        >>> round(float(fdtrc(2.0, 4.0, 2.0)), 12)
        0.25
    """
    return _fdtr_pair("fdtrc", dfn, dfd, x)[1]


def fdtri(dfn: Any, dfd: Any, p: Any) -> Any:
    """Inverse of :func:`fdtr` in ``x`` (the F distribution's quantile), as
    ``scipy.special.fdtri``: ``dfd w / (dfn (1 - w))`` with ``w = betaincinv(dfn/2, dfd/2, p)``
    and ``1 - w`` from the inverse too (no cancellation in either tail).

    Example:
        >>> from funcgrad.scipy.special import fdtri
        >>> round(float(fdtri(2.0, 4.0, 0.75)), 12)
        2.0
    """
    dfn, dfd, p = _floats("fdtri", dfn, dfd, p)
    fnp = _fnp()
    a, b, p = fnp.broadcast_arrays(fnp.asarray(dfn), fnp.asarray(dfd), fnp.asarray(p))
    bad = ~((a > 0) & (b > 0) & (p >= 0) & (p <= 1))
    a, b = fnp.where(bad, 1.0, a), fnp.where(bad, 1.0, b)
    w, wc = _betaincinv_pair("fdtri", 0.5 * a, 0.5 * b, fnp.where(bad, 0.5, p),
                             fnp.where(bad, 0.5, 1.0 - p))
    return fnp.where(bad, numpy.nan, _quiet.div(b * w, a * wc))


# =============================================================================================
# Zeta function


# Cephes' zeta: (2k)! / B_2k, k = 1..12, the Euler-Maclaurin correction terms.
_ZETA_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
           7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
           -4.5979787224074726105e15, 1.8152105401943546773e17, -7.1661652561756670113e18)


def _hurwitz_em(x: Any, q: Any) -> Any:
    """sum_k (q + k)^-x by Euler-Maclaurin as Cephes (q > 0; any x != 1 with x > -20): ten
    direct terms, so the expansion point w = q + 9 is past 9, then up to twelve correction
    terms, each added only while the previous one still mattered."""
    fnp = _fnp()
    eps = float(numpy.finfo(_F64).eps)
    s = fnp.zeros_like(x)
    for k in range(9):
        s = s + (q + float(k)) ** (-x)
    w = q + 9.0
    b = w ** (-x)
    # w^(1-x) / (x - 1) as its own power: b * w underflows for huge q (zeta(1.5, 1e300) is
    # 2e-150, while w^-1.5 is 0).
    s = s + 0.5 * b + w ** (1.0 - x) / (x - 1.0)
    active = fnp.ones_like(x, dtype=bool)
    poch, kk = fnp.ones_like(x), 0.0
    for a_i in _ZETA_A:
        poch = poch * (x + kk)
        b = b / w
        t = fnp.where(b == 0, 0.0, poch * b / a_i)
        s = fnp.where(active, s + t, s)
        # A term that is exactly 0 (x = 0: the rising product vanishes) keeps the sum going:
        # its derivative in x is not 0.
        active = active & ((fnp.abs(t) >= eps * fnp.abs(s)) | (t == 0))
        kk += 1.0
        poch = poch * (x + kk)
        b = b / w
        kk += 1.0
    return s


def _hurwitz_values(x: Any, q: Any) -> Any:
    """zeta(x, q) for float64 ``x``, ``q`` with SciPy's domain: x > 1; q > 0, or q < 0 not an
    integer with x an integer (the terms (q + k)^-x, k < -q, summed first)."""
    fnp = _fnp()
    x_int = x == fnp.floor(x)
    neg = (q < 0) & (q != fnp.floor(q)) & x_int
    valid = (x > 1) & (x < numpy.inf) & ((q > 0) | neg) & (q < numpy.inf)
    x_s = fnp.where(valid, x, 2.0)
    q_s = fnp.where(valid, q, 1.0)
    head = fnp.zeros_like(x_s)
    n_neg = fnp.where(neg & valid, fnp.ceil(-q_s), 0.0)
    if not (isinstance(n_neg, numpy.ndarray) and not n_neg.any()):
        def cond(s: tuple) -> Any:
            return fnp.any(s[0] < n_neg)

        def body(s: tuple) -> tuple:
            k, acc = s
            # An integer power of a negative base is real; |q + k| >= frac > 0 here.
            term = fnp.where(k < n_neg, (q_s + k) ** (-x_s), 0.0)
            return k + 1.0, acc + term

        head = _while(cond, body, (fnp.zeros_like(x_s), head))[1]
    out = head + _hurwitz_em(x_s, q_s + n_neg)
    # x = 1 is a pole whatever q (SciPy gives inf even for q <= 0 or nan).
    pole = ((q <= 0) & (q == fnp.floor(q)) & (x > 1)) | (x == 1)
    out = fnp.where(pole, numpy.inf, out)
    # x = inf: 1 at q = 1, inf for 0 < q < 1 (nan otherwise, as SciPy).
    out = fnp.where((x == numpy.inf) & (q == 1), 1.0, out)
    out = fnp.where((x == numpy.inf) & (q > 0) & (q < 1), numpy.inf, out)
    out = fnp.where((q == numpy.inf) & (x > 1), 0.0, out)
    ok = valid | pole | ((x == numpy.inf) & (q > 0) & (q <= 1)) | ((q == numpy.inf) & (x > 1))
    return fnp.where(ok, out, numpy.nan)


def _riemann_values(x: Any) -> Any:
    """zeta(x) for every real x: Euler-Maclaurin for x >= 0, the reflection formula
    zeta(x) = 2^x pi^(x-1) sin(pi x / 2) Gamma(1 - x) zeta(1 - x) below (in logs, so the
    values far out, up to ~1e300, neither overflow early nor lose precision)."""
    fnp = _fnp()
    neg = x < 0
    x_pos = fnp.where(neg | (x == 1) | fnp.isnan(x) | (x == numpy.inf), 2.0, x)
    pos = _hurwitz_em(x_pos, fnp.ones_like(x_pos))
    x_n = fnp.where(neg & fnp.isfinite(x), x, -1.0)
    half = 0.5 * x_n
    even = half == fnp.floor(half)
    # sin(pi x / 2) with x reduced modulo 4 first: exact for large |x|.
    r = x_n - 4.0 * fnp.floor(0.25 * x_n)
    sin = fnp.sin(0.5 * math.pi * r)
    mag = fnp.exp(x_n * math.log(2.0) + (x_n - 1.0) * math.log(math.pi) + _sp.lgamma(1.0 - x_n))
    refl = sin * mag * _hurwitz_em(1.0 - x_n, fnp.ones_like(x_n))
    # The trivial zeros are exactly 0 (sin(pi) rounds to 1e-16), with the formula's
    # derivative (zeta'(-2n) is not 0).
    refl = fnp.where(even, refl - _ew.stop_gradient(refl), refl)
    out = fnp.where(neg, refl, pos)
    out = fnp.where(x == 1, numpy.inf, out)
    out = fnp.where(x == numpy.inf, 1.0, out)
    return fnp.where(fnp.isnan(x) | (x == -numpy.inf), numpy.nan, out)


@custom_jvp
def _hurwitz(x: Any, q: Any) -> Any:
    return _back(_hurwitz_values(_f64(x), _f64(q)), q)


def _hurwitz_dx(x: Any, q: Any) -> Any:
    """d/dx zeta(x, q) = -sum_k log(q + k) (q + k)^-x: the Euler-Maclaurin sum differentiated
    term by term (forward mode through the same plain operations, the loop over the negative
    q's head included), as accurate as the values."""
    # At a negative q (integer x only) the terms (q + k)^-x have no real derivative in x:
    # nan there (as JAX), computed on a stand-in so no log of a negative number warns.
    fnp = _fnp()
    neg = q < 0
    q_s = fnp.where(neg, 1.0, q)
    d = _jvp(lambda x_: _hurwitz_values(x_, q_s), (x,), (fnp.ones_like(x),))[1]
    return fnp.where(neg, numpy.nan, d)


@_hurwitz.defjvp
def _hurwitz_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    (x, q), (tx, tq) = primals, tangents
    xd, qd = _f64(x), _f64(q)
    t = tq * _back(-xd * _hurwitz_values(xd + 1.0, qd), q)
    return _hurwitz(x, q), t + tx * _back(_hurwitz_dx(xd, qd), q)


def zeta(x: Any, q: Any = None) -> Any:
    """The Hurwitz zeta function ``zeta(x, q) = sum_k (q + k)^-x`` (``x > 1``; ``q > 0``, or
    negative non-integer ``q`` with integer ``x``), or with ``q=None`` the Riemann zeta
    function for every real ``x``.

    Euler-Maclaurin summation as Cephes (the reflection formula for the Riemann zeta at
    ``x < 0``); float32 is computed in float64 and rounded. Differentiable in ``q`` to any
    order (``d/dq zeta(x, q) = -x zeta(x + 1, q)``) and in ``x`` (as JAX's:
    ``-sum_k log(q + k) (q + k)^-x``, the Euler-Maclaurin sum differentiated term by term;
    for the Riemann zeta the reflection formula's derivative below 0).

    Example:
        >>> import funcgrad
        >>> from funcgrad.scipy.special import zeta
        >>> round(float(zeta(2.0)), 12)   # pi^2 / 6
        1.644934066848
        >>> round(float(funcgrad.grad(zeta, argnums=1)(2.0, 1.0)), 12)   # -2 zeta(3)
        -2.404113806319
        >>> round(float(funcgrad.grad(zeta)(2.0, 1.5)), 12)   # d/dx, as JAX
        -1.024507842616
    """
    fnp = _fnp()
    if q is None:
        (x,) = _floats("zeta", x)
        x = fnp.asarray(x)
        # Plain operations throughout (Euler-Maclaurin, the reflection formula): the
        # derivative in x is theirs.
        return _back(_riemann_values(_f64(x)), x)
    x, q = _floats("zeta", x, q)
    x, q = fnp.broadcast_arrays(fnp.asarray(x), fnp.asarray(q))
    return _hurwitz(x, q)


# =============================================================================================
# Exponential integrals

_EULER = 0.57721566490153286061


def _expn_values(n: Any, x: Any) -> Any:
    """E_n(x) for float64 ``n`` (integer valued) and ``x``: the power series (DLMF 8.19.8)
    where ``x <= 1``, the continued fraction (modified Lentz, as Numerical Recipes' expint)
    elsewhere, both in one vectorised ``while_loop``; E_0 = exp(-x)/x directly."""
    fnp = _fnp()
    eps = float(numpy.finfo(_F64).eps)
    tiny = 1e-300
    valid = (n >= 1) & (x > 0) & (x < numpy.inf) & (n < numpy.inf)
    n_s = fnp.where(valid, n, 1.0)
    x_s = fnp.where(valid, x, 1.0)
    series = x_s <= 1.0
    nm1 = n_s - 1.0
    log_x = fnp.log(x_s)
    # Only the series lanes use these and the fraction lanes the others: each gets a
    # harmless stand-in where it is not used.
    total = fnp.where(nm1 != 0, 1.0 / fnp.where(nm1 != 0, nm1, 1.0), -log_x - _EULER)
    psi_n = _sp.digamma(n_s)
    b = fnp.where(series, 1.0, x_s + n_s)
    init = (fnp.asarray(0, dtype=numpy.int32), fnp.ones_like(x_s), total, b,
            fnp.full_like(x_s, 1.0 / tiny), 1.0 / b, 1.0 / b, fnp.logical_not(valid))

    def cond(s: tuple) -> Any:
        return (s[0] < 5000) & fnp.logical_not(fnp.all(s[-1]))

    def body(s: tuple) -> tuple:
        i, fact, total, b, c, d, h, done = s
        k = i + 1
        kf = fnp.asarray(k, dtype=_F64)
        fact = fact * (-x_s / kf)
        special = kf == nm1
        den = fnp.where(special, 1.0, kf - nm1)
        term = fnp.where(special, fact * (psi_n - log_x), -fact / den)
        total = total + term
        an = -kf * (nm1 + kf)
        b = b + 2.0
        d = 1.0 / _clamp_tiny(an * d + b, tiny)
        c = _clamp_tiny(b + an / c, tiny)
        delta = c * d
        h = h * delta
        conv = fnp.where(series, fnp.abs(term) <= eps * fnp.abs(total),
                         fnp.abs(delta - 1.0) <= eps)
        return k, fact, total, b, c, d, h, done | conv

    res = _while(cond, body, init)
    out = fnp.where(series, res[2], res[6] * fnp.exp(-x_s))
    x0 = fnp.where((n == 0) & (x > 0), x, 1.0)
    out = fnp.where(n == 0, fnp.exp(-x0) / x0, out)
    out = fnp.where(x == 0, fnp.where(n >= 2, 1.0 / fnp.where(n >= 2, n - 1.0, 1.0),
                                      numpy.inf), out)
    out = fnp.where((x == numpy.inf) & (n >= 0), 0.0, out)
    bad = (n < 0) | (x < 0) | fnp.isnan(n) | fnp.isnan(x) | (n == numpy.inf)
    return fnp.where(bad, numpy.nan, out)


def _ei_pos_values(x: Any) -> Any:
    """Ei(x) for float64 x > 0: the series gamma + log x + sum x^k / (k k!) for x <= 40
    (positive terms: no cancellation past the root at 0.37), the asymptotic series
    e^x / x sum k! / x^k above (its smallest term, near k = x, is below 1e-16 there)."""
    fnp = _fnp()
    eps = float(numpy.finfo(_F64).eps)
    valid = (x > 0) & (x < numpy.inf)
    x_s = fnp.where(valid, x, 1.0)
    series = x_s <= 40.0
    init = (fnp.asarray(0, dtype=numpy.int32), fnp.ones_like(x_s), fnp.zeros_like(x_s),
            fnp.logical_not(valid))

    def cond(s: tuple) -> Any:
        return (s[0] < 1000) & fnp.logical_not(fnp.all(s[-1]))

    def body(s: tuple) -> tuple:
        i, fact, total, done = s
        k = i + 1
        kf = fnp.asarray(k, dtype=_F64)
        # series: fact = x^k / k!, term = fact / k; asymptotic: fact = term = k! / x^k
        fact = fnp.where(done, fact, fact * fnp.where(series, x_s / kf, kf / x_s))
        term = fnp.where(series, fact / kf, fact)
        term = fnp.where(done, 0.0, term)  # the asymptotic series must stop where it converged
        total = total + term
        # The asymptotic series adds to 1 and must stop by its smallest term (k ~ x).
        scale = fnp.where(series, fnp.abs(total), 1.0 + total)
        conv = (fnp.abs(term) <= eps * scale) | (fnp.logical_not(series) & (kf >= x_s))
        return k, fact, total, done | conv

    total = _while(cond, body, init)[2]
    # e^x / x (1 + total) in logs, capped: Ei overflows (to inf, without a warning) near 716.
    log_big = x_s - fnp.log(x_s) + fnp.log1p(total)
    big = fnp.where(log_big > 709.0, numpy.inf, fnp.exp(fnp.minimum(log_big, 709.0)))
    out = fnp.where(series, _EULER + fnp.log(x_s) + total, big)
    out = fnp.where(x == numpy.inf, numpy.inf, out)
    return fnp.where(valid | (x == numpy.inf), out, numpy.nan)


@custom_jvp
def _exp1(x: Any) -> Any:
    xd = _f64(x)
    return _back(_expn_values(_fnp().ones_like(xd), xd), x)


@_exp1.defjvp
def _exp1_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    y = _exp1(x)
    # -exp(-x) / x, and nan where the value is (x < 0: SciPy's real exp1 is nan there).
    return y, t * _fnp().where(_fnp().isnan(y), numpy.nan, -_fnp().exp(-x) / x)


@custom_jvp
def _expi(x: Any) -> Any:
    fnp = _fnp()
    xd = _f64(x)
    neg = xd < 0
    x_neg = fnp.where(neg, -xd, 1.0)
    x_pos = fnp.where(neg, 1.0, xd)
    out = fnp.where(neg, -_expn_values(fnp.ones_like(xd), x_neg), _ei_pos_values(x_pos))
    out = fnp.where(xd == 0, -numpy.inf, out)
    out = fnp.where(xd == -numpy.inf, -0.0, out)
    return _back(fnp.where(fnp.isnan(xd), numpy.nan, out), x)


@_expi.defjvp
def _expi_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    return _expi(x), t * (_fnp().exp(x) / x)


@custom_jvp
def _expn_pos(n: Any, x: Any) -> Any:
    return _back(_expn_values(_f64(n), _f64(x)), x)


@_expn_pos.defjvp
def _expn_pos_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    # E_n' = -E_{n-1}; n is an integer (SciPy truncates it), so its derivative is zero.
    (n, x), (_, t) = primals, tangents
    return _expn_pos(n, x), t * -_expn_any(n - 1.0, x)


def _expn_any(n: Any, x: Any) -> Any:
    """E_n for n >= 0: E_0 = exp(-x)/x as a composition (differentiable as it stands),
    the rest through the custom rule E_n' = -E_{n-1}."""
    fnp = _fnp()
    zero = n == 0
    x0 = fnp.where(zero & (x != 0), x, 1.0)
    e0 = fnp.where(x == 0, numpy.inf, fnp.exp(-x0) / x0)
    e0 = fnp.where(x < 0, numpy.nan, e0)
    return fnp.where(zero, e0, _expn_pos(fnp.where(zero, 1.0, n), x))


def exp1(x: Any) -> Any:
    """The exponential integral ``E1(x) = int_x^inf exp(-t) / t dt`` for ``x >= 0`` (nan
    below; complex input is not supported). Its derivative is ``-exp(-x) / x``.

    Example:
        >>> import funcgrad
        >>> from funcgrad.scipy.special import exp1
        >>> round(float(exp1(1.0)), 12)
        0.219383934396
        >>> round(float(funcgrad.grad(exp1)(1.0)), 12)   # -exp(-1)
        -0.367879441171
    """
    return _exp1(_floats("exp1", x)[0])


def expi(x: Any) -> Any:
    """The exponential integral ``Ei(x)`` (principal value of ``int_-inf^x exp(t) / t dt``;
    ``-E1(-x)`` for ``x < 0``). Its derivative is ``exp(x) / x``.

    Example:
        >>> from funcgrad.scipy.special import expi
        >>> round(float(expi(1.0)), 12)
        1.895117816356
    """
    return _expi(_floats("expi", x)[0])


def expn(n: Any, x: Any) -> Any:
    """The generalized exponential integral ``E_n(x) = int_1^inf exp(-x t) / t^n dt`` for
    integer ``n >= 0`` (a float ``n`` is truncated, as SciPy does) and ``x >= 0``.

    Differentiable in ``x`` to any order (``E_n' = -E_{n-1}``, ``E_0 = exp(-x)/x``); ``n`` is
    discrete (its derivative is zero). As in SciPy, an integer ``n`` gives float64 whatever
    ``x`` is; float ``n`` and ``x`` follow the usual float32/float64 rule.

    Example:
        >>> import funcgrad
        >>> from funcgrad.scipy.special import expn
        >>> round(float(expn(2, 1.0)), 12)
        0.148495506776
        >>> round(float(funcgrad.grad(expn, argnums=1)(2, 1.0)), 12)   # -E_1(1)
        -0.219383934396
    """
    fnp = _fnp()
    if isinstance(n, bool | int | numpy.integer) or (
            not isinstance(n, float) and get_aval(n).dtype.kind in "iub"):
        (x,) = _floats("expn", x)
        x = _f64(fnp.asarray(x))
        n = _f64(fnp.asarray(n))
    else:
        n, x = _floats("expn", n, x)
    n, x = fnp.broadcast_arrays(fnp.asarray(n), fnp.asarray(x))
    n = _ew.stop_gradient(fnp.trunc(n))
    return _expn_any(fnp.where(n < 0, 0.0, n), fnp.where(n < 0, numpy.nan, x))


# ---------------------------------------------------------------------------------------------
# erfcx, factorial, comb, poch, boxcox, boxcox1p (composed from the functions above)

_fnpm = _fnp_module

_SQRT_PI = math.sqrt(math.pi)


def _erfcx_value(x: Any) -> Any:
    """exp(x^2) erfc(x) in float64: directly below 25 (exp(x^2) erfc(x) loses only the
    rounding of x^2 there), the asymptotic series above (its ninth term is below 1e-17)."""
    small = x < 25.0
    # Below -26 erfc(x) is 2 exactly: 2 exp(x^2) as one exp, which overflows (to SciPy's
    # inf) only where the value does; the stand-in keeps exp's overflow warning out.
    neg = x < -26.0
    xs = _fnpm.where(small & ~neg, x, 0.0)
    xc = _fnpm.maximum(x, -27.0)  # x * x itself would overflow far out
    over = neg & (xc * xc + math.log(2.0) > math.log(numpy.finfo(_F64).max))
    xn = _fnpm.where(neg & ~over, x, 0.0)
    direct = _fnpm.where(neg, _fnpm.where(over, _fnpm.inf, _fnpm.exp(xn * xn + math.log(2.0))),
                         _fnpm.exp(xs * xs) * erfc(xs))
    xl = _fnpm.where(small, 25.0, x)
    inv2 = 1.0 / (2.0 * xl * xl)
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
    ok = (k_ <= n_) & (n_ >= 0) & (k_ >= 0)
    ns = _fnpm.where(ok, n_, 1.0)
    ks = _fnpm.where(ok, k_, 0.0)
    val = _exp_gammaln_diff(ns + 1.0, [ks + 1.0, ns - ks + 1.0])
    # Integral arguments have an integral count: round away exp/log's last-digit noise
    # (the derivative is that of the smooth formula).
    integral = (ns == _fnpm.floor(ns)) & (ks == _fnpm.floor(ks))
    return _fnpm.where(ok, _round_integral(val, integral), 0.0)


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


def _exprel(t: Any) -> Any:
    """``expm1(t) / t`` (1 at 0), smooth through 0 so derivatives there are right."""
    small = _fnpm.abs(t) < 1e-3
    ts = _fnpm.where(small, 1.0, t)
    series = 1.0 + t * (1 / 2 + t * (1 / 6 + t * (1 / 24 + t * (1 / 120 + t / 720))))
    return _fnpm.where(small, series, _fnpm.expm1(ts) / ts)


def _boxcox_of_log(logx: Any, lmbda: Any) -> Any:
    # (exp(lmbda L) - 1) / lmbda = L exprel(lmbda L): continuous in lmbda through 0, where
    # the value is L and the lmbda-derivative L**2 / 2.
    inf = _fnpm.isinf(logx)
    finite = _fnpm.where(inf, 0.0, logx)
    out = finite * _exprel(lmbda * finite)
    # L = +-inf: -1 / lmbda where lmbda L -> -inf, else L.
    safe = _fnpm.where(lmbda == 0, 1.0, lmbda)
    to_minus = (lmbda != 0) & (_fnpm.sign(lmbda) != _fnpm.sign(logx))
    return _fnpm.where(inf, _fnpm.where(to_minus, -1.0 / safe, logx), out)


def boxcox(x: Any, lmbda: Any) -> Any:
    """Box-Cox transformation: ``(x**lmbda - 1) / lmbda``, ``log(x)`` at ``lmbda == 0``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import boxcox
        >>> boxcox(np.array([1.0, 4.0]), 0.5)
        array([0., 2.])
    """
    x, lmbda = _floats("boxcox", x, lmbda)
    return _boxcox_of_log(_quiet.log(x), lmbda)


def boxcox1p(x: Any, lmbda: Any) -> Any:
    """Box-Cox transformation of ``1 + x`` (accurate for small ``x``): ``((1 + x)**lmbda - 1)
    / lmbda``, ``log1p(x)`` at ``lmbda == 0``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import boxcox1p
        >>> boxcox1p(np.array([0.0, 3.0]), 0.5)
        array([0., 2.])
    """
    x, lmbda = _floats("boxcox1p", x, lmbda)
    return _boxcox_of_log(_quiet.log1p(x), lmbda)

def exprel(x: Any) -> Any:
    """Relative error exponential ``(exp(x) - 1) / x`` (1 at 0, accurate near it), as
    ``scipy.special.exprel`` (``inf`` once ``expm1(x)`` overflows, 0 at ``-inf``).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import exprel
        >>> exprel(np.array([0.0, 1e-20, 1.0]))
        array([1.        , 1.        , 1.71828183])
    """
    (x,) = _floats("exprel", x)
    x = _fnpm.asarray(x)
    lim = math.log(float(numpy.finfo(get_aval(x).dtype).max))
    over = x > lim
    fin = _fnpm.isfinite(x)
    val = _exprel(_fnpm.where(over | ~fin, 1.0, x))
    val = _fnpm.where(x == -_fnpm.inf, 0.0, val)
    return _fnpm.where(over, _fnpm.inf, _fnpm.where(fin | (x == -_fnpm.inf), val, x))


def _log1p_rel(u: Any) -> Any:
    """``log1p(u) / u`` (1 at 0), smooth through 0; ``inf`` at ``u = -1``, nan below."""
    small = _fnpm.abs(u) < 1e-3
    us = _fnpm.where(small, 1.0, u)
    series = 1.0 + u * (-1 / 2 + u * (1 / 3 + u * (-1 / 4 + u * (1 / 5 - u / 6))))
    return _fnpm.where(small, series, _quiet.div(_quiet.log1p(us), us))


def _inv_boxcox_log(y: Any, lmbda: Any) -> Any:
    # log of the inverse: log1p(lmbda y) / lmbda = y log1p(u)/u, u = lmbda y: continuous in
    # lmbda through 0 (where it is y). Infinite y: the plain formula's value, as SciPy's.
    yf = _fnpm.where(_fnpm.isinf(y), 1.0, y)
    out = yf * _log1p_rel(lmbda * yf)
    ls = _fnpm.where(lmbda == 0, 1.0, lmbda)
    plain = _quiet.div(_quiet.log1p(ls * y), ls)
    return _fnpm.where(_fnpm.isinf(y), _fnpm.where(lmbda == 0, y, plain), out)


def inv_boxcox(y: Any, lmbda: Any) -> Any:
    """Inverse of :func:`boxcox`: ``(1 + lmbda y)**(1/lmbda)``, ``exp(y)`` at ``lmbda == 0``
    (continuous and differentiable through it), as ``scipy.special.inv_boxcox``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import inv_boxcox
        >>> inv_boxcox(np.array([0.0, 2.0]), 0.5)
        array([1., 4.])
    """
    y, lmbda = _floats("inv_boxcox", y, lmbda)
    return _fnpm.exp(_inv_boxcox_log(y, lmbda))


def inv_boxcox1p(y: Any, lmbda: Any) -> Any:
    """Inverse of :func:`boxcox1p`: ``(1 + lmbda y)**(1/lmbda) - 1``, ``expm1(y)`` at
    ``lmbda == 0``, accurate for small ``y``, as ``scipy.special.inv_boxcox1p``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import inv_boxcox1p
        >>> inv_boxcox1p(np.array([0.0, 2.0]), 0.5)
        array([0., 3.])
    """
    y, lmbda = _floats("inv_boxcox1p", y, lmbda)
    return _fnpm.expm1(_inv_boxcox_log(y, lmbda))


_SPENCE_A = (4.65128586073990045278e-5, 7.31589045238094711071e-3, 1.33847639578309018650e-1,
             8.79691311754530315341e-1, 2.71149851196553469920e0, 4.25697156008121755724e0,
             3.29771340985225106936e0, 1.00000000000000000126e0)
_SPENCE_B = (6.90990488912553276999e-4, 2.54043763932544379113e-2, 2.82974860602568089943e-1,
             1.41172597751831069617e0, 3.63800533345137075418e0, 5.03278880143316990390e0,
             3.54771340985225096217e0, 9.99999999999999998740e-1)


def _polevl(w: Any, coeffs: tuple) -> Any:
    out = _fnpm.zeros_like(w) + coeffs[0]
    for c in coeffs[1:]:
        out = out * w + c
    return out


def _spence_value(x: Any) -> Any:
    """Cephes' spence (the rational approximation SciPy uses), branch by branch with selects."""
    pi2_6 = math.pi ** 2 / 6
    bad = ~(x >= 0) | (x == _fnpm.inf)  # negative, nan or inf (SciPy's nan)
    xs = _fnpm.where(bad | (x == 0), 0.5, x)
    big = xs > 2.0
    xs = _fnpm.where(big, 1.0 / xs, xs)
    upper = xs > 1.5
    lower = ~upper & (xs < 0.5)
    w = _fnpm.where(upper, 1.0 / xs - 1.0, _fnpm.where(lower, -xs, xs - 1.0))
    y = -w * _polevl(w, _SPENCE_A) / _polevl(w, _SPENCE_B)
    x_lo = _fnpm.where(lower, xs, 0.5)
    y = _fnpm.where(lower, pi2_6 - _fnpm.log(x_lo) * _fnpm.log1p(-x_lo) - y, y)
    z = _fnpm.log(xs)
    y = _fnpm.where(big | upper, -0.5 * z * z - y, y)
    y = _fnpm.where(x == 0, pi2_6, _fnpm.where(x == 1, 0.0, y))
    return _fnpm.where(bad, _fnpm.nan, y)


@custom_jvp
def _spence(x: Any) -> Any:
    return _spence_value(x)


@_spence.defjvp
def _spence_jvp(primals: tuple, tangents: tuple) -> tuple:
    (x,), (tx,) = primals, tangents
    one = x == 1
    safe = _fnpm.where(one, 2.0, x)
    slope = _fnpm.where(one, -1.0, _fnpm.log(safe) / (1.0 - safe))  # log x / (1 - x) -> -1
    return _spence(x), slope * tx


def spence(z: Any) -> Any:
    """Spence's function (dilogarithm) ``integral from 1 to z of log(t) / (1 - t) dt`` for real
    ``z >= 0`` (nan below), as ``scipy.special.spence``; its derivative is
    ``log(z) / (1 - z)``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import spence
        >>> spence(np.array([0.0, 1.0, 2.0]))
        array([ 1.64493407,  0.        , -0.82246703])
    """
    (z,) = _floats("spence", z)
    z = _fnpm.asarray(z)
    # float32 computes in float64 (as SciPy's loop does) and rounds once.
    return _spence(z.astype(_F64)).astype(get_aval(z).dtype)


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


def bessel_jn(z: Any, *, v: int, n_iter: int = 50) -> Any:
    """Bessel functions of the first kind ``J_0(z), ..., J_v(z)``, as
    ``jax.scipy.special.bessel_jn``: shape ``(v + 1, *z.shape)``. Miller's backward
    recurrence from order ``n_iter``, normalised by ``J_0 + 2 sum J_2k = 1``: accurate (to
    SciPy's ``jv``) while ``|z|`` is well below ``n_iter``; ``J_k(0)`` is 1 for ``k = 0``,
    else 0. Differentiable in ``z``; float32 stays float32.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import bessel_jn
        >>> bessel_jn(np.array([0.0, 1.0, 2.5]), v=1).round(6)
        array([[ 1.      ,  0.765198, -0.048384],
               [ 0.      ,  0.440051,  0.497094]])
    """
    (z,) = _floats("bessel_jn", z)
    z = _fnpm.asarray(z)
    v, n_iter = int(v), int(n_iter)
    if v < 0 or n_iter < v:
        raise ValueError(f"bessel_jn: need 0 <= v <= n_iter, got v={v}, n_iter={n_iter}")
    small = _fnpm.abs(z) < 1e-3  # the series (the recurrence would overflow near 0)
    zs = _fnpm.where(small, 1.0, z)
    f0 = _fnpm.zeros_like(zs)
    f1 = _fnpm.full_like(zs, 1e-16)
    bs = _fnpm.zeros_like(zs)
    vals: list[Any] = [None] * (v + 1)
    f = f0
    big = 1e15  # rescale before the recurrence overflows (small |z| grows it fast)
    for k in range(n_iter, -1, -1):
        f = 2.0 * (k + 1.0) * f1 / zs - f0
        if k % 2 == 0:
            bs = bs + 2.0 * f
        if k <= v:
            vals[k] = f
        f0, f1 = f1, f
        shrink = _fnpm.where(_fnpm.abs(f) > big, 1.0 / big, 1.0).astype(get_aval(zs).dtype)
        f, f0, f1, bs = f * shrink, f0 * shrink, f1 * shrink, bs * shrink
        vals = [None if val is None else val * shrink for val in vals]
    norm = bs - f
    out = _fnpm.stack([val / norm for val in vals])
    # J_k(z) = (z/2)^k / k! (1 - (z/2)^2 / (k + 1) + ...): two terms hold below 1e-3.
    h = _fnpm.where(small, z, 0.0) / 2.0
    series = _fnpm.stack([h ** k / math.factorial(k) * (1.0 - h * h / (k + 1.0))
                          for k in range(v + 1)])
    return _fnpm.where(small, series, out)


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


def _polyval(coeffs: tuple, x: Any) -> Any:
    out = _fnpm.zeros_like(x) + coeffs[0]
    for c in coeffs[1:]:
        out = out * x + c
    return out


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


# Owen's T: 13-point Gauss-Legendre nodes and weights on [0, 1] of t -> a^2 t (as JAX).
_OWENS_T_PTS = numpy.array([
    0.0035082039676451715, 0.031279042338030754, 0.085266826283219451, 0.16245071730812277,
    0.25851196049125435, 0.36807553840697534, 0.48501092905604697, 0.60277514152618577,
    0.71477884217753227, 0.81475510988760099, 0.89711029755948966, 0.95723808085944262,
    0.99178832974629704])
_OWENS_T_WTS = numpy.array([
    0.018831438115323503, 0.018567086243977649, 0.018042093461223386, 0.017263829606398753,
    0.016243219975989857, 0.014994592034116705, 0.013535474469662088, 0.011886351605820165,
    0.010070377242777432, 0.0081130545742299587, 0.0060419009528470239,
    0.0038862217010742058, 0.0016793031084546090])


def _owens_t_value(h: Any, a: Any) -> Any:
    h = _fnpm.abs(h)
    abs_a = _fnpm.abs(a)
    small_a = abs_a <= 1.0
    ma = _fnpm.where(small_a, abs_a, 1.0 / _fnpm.where(abs_a == 0, 1.0, abs_a))
    inf_a = _fnpm.isinf(abs_a)
    mh = _fnpm.where(small_a, h, _fnpm.where(inf_a, 0.0, abs_a) * h)
    dev = get_aval(h).device or get_default_device()
    pts = device_put(_OWENS_T_PTS.astype(get_aval(h).dtype), dev)
    wts = device_put(_OWENS_T_WTS.astype(get_aval(h).dtype), dev)
    r = (ma * ma)[..., None] * pts
    integrand = _fnpm.exp(-0.5 * (mh * mh)[..., None] * (1.0 + r)) / (1.0 + r)
    out = ma * _fnpm.sum(integrand * wts, axis=-1)
    out = _fnpm.where(mh == 0, _fnpm.arctan(ma) / (2 * math.pi), out)
    rt2 = math.sqrt(2.0)
    out = _fnpm.where(ma == 1.0, 0.125 * erfc(-mh / rt2) * erfc(mh / rt2), out)
    # |a| > 1: T(h, a) = (Phi(h) + Phi(a h)) / 2 - Phi(h) Phi(a h) - T(a h, 1 / a) - [h < 0]/2
    normh = erfc(h / rt2)
    normah = erfc(abs_a * h / rt2)
    big = _fnpm.where(abs_a * h <= 0.67,
                      0.25 - 0.25 * erf(h / rt2) * erf(abs_a * h / rt2) - out,
                      0.25 * (normh + normah - normh * normah) - out)
    out = _fnpm.where(small_a, out, big)
    out = _fnpm.where(inf_a, 0.25 * erfc(h / rt2), out)  # T(h, inf) = (1 - Phi(|h|)) / 2
    out = _fnpm.sign(a) * out
    return _fnpm.where(_fnpm.isnan(a) | _fnpm.isnan(h), numpy.nan, out)


@custom_jvp
def _owens_t(h: Any, a: Any) -> Any:
    return _owens_t_value(h, a)


@_owens_t.defjvp
def _owens_t_jvp(primals: tuple, tangents: tuple) -> tuple:
    (h, a), (th, ta) = primals, tangents
    out = _owens_t(h, a)
    d_h = -_fnpm.exp(-0.5 * h * h) * erf(a * h / math.sqrt(2.0)) / (2.0 * math.sqrt(2 * math.pi))
    d_a = _fnpm.exp(-0.5 * (a * a + 1.0) * h * h) / (2.0 * math.pi * (a * a + 1.0))
    return out, d_h * th + d_a * ta


def owens_t(h: Any, a: Any) -> Any:
    """Owen's T function ``T(h, a) = 1/(2 pi) integral_0^a exp(-h^2 (1 + x^2) / 2) / (1 + x^2)
    dx``, as ``scipy.special.owens_t`` (JAX's 13-point Gauss-Legendre rule with the
    ``|a| > 1`` reflection: absolute error about 1e-16 against SciPy). Differentiable in
    both arguments (closed-form derivatives); float32 stays float32.

    Example:
        >>> from funcgrad.scipy.special import owens_t
        >>> round(float(owens_t(0.5, 2.0)), 12)
        0.141580603654
    """
    h, a = _floats("owens_t", h, a)
    h, a = _fnpm.broadcast_arrays(_fnpm.asarray(h), _fnpm.asarray(a))
    return _owens_t(h, a)


# ---------------------------------------------------------------------------------------------
# Sine/cosine and Fresnel integrals (Cephes' rational approximations, as SciPy and JAX),
# computed in float64; float32 rounds once at the end.

_SICI_SN = (-8.39167827910303881427e-11, 4.62591714427012837309e-8, -9.75759303843632795789e-6,
            9.76945438170435310816e-4, -4.13470316229406538752e-2, 1.00000000000000000302e0)
_SICI_SD = (2.03269266195951942049e-12, 1.27997891179943299903e-9, 4.41827842801218905784e-7,
            9.96412122043875552487e-5, 1.42085239326149893930e-2, 9.99999999999999996984e-1)
_SICI_CN = (2.02524002389102268789e-11, -1.35249504915790756375e-8, 3.59325051419993077021e-6,
            -4.74007206873407909465e-4, 2.89159652607555242092e-2, -1.00000000000000000080e0)
_SICI_CD = (4.07746040061880559506e-12, 3.06780997581887812692e-9, 1.23210355685883423679e-6,
            3.17442024775032769882e-4, 5.10028056236446052392e-2, 4.00000000000000000080e0)
_SICI_FN4 = (4.23612862892216586994e0, 5.45937717161812843388e0, 1.62083287701538329132e0,
             1.67006611831323023771e-1, 6.81020132472518137426e-3, 1.08936580650328664411e-4,
             5.48900223421373614008e-7)
_SICI_FD4 = (1.0, 8.16496634205391016773e0, 7.30828822505564552187e0, 1.86792257950184183883e0,
             1.78792052963149907262e-1, 7.01710668322789753610e-3, 1.10034357153915731354e-4,
             5.48900252756255700982e-7)
_SICI_GN4 = (8.71001698973114191777e-2, 6.11379109952219284151e-1, 3.97180296392337498885e-1,
             7.48527737628469092119e-2, 5.38868681462177273157e-3, 1.61999794598934024525e-4,
             1.97963874140963632189e-6, 7.82579040744090311069e-9)
_SICI_GD4 = (1.0, 1.64402202413355338886e0, 6.66296701268987968381e-1, 9.88771761277688796203e-2,
             6.22396345441768420760e-3, 1.73221081474177119497e-4, 2.02659182086343991969e-6,
             7.82579218933534490868e-9)
_SICI_FN8 = (4.55880873470465315206e-1, 7.13715274100146711374e-1, 1.60300158222319456320e-1,
             1.16064229408124407915e-2, 3.49556442447859055605e-4, 4.86215430826454749482e-6,
             3.20092790091004902806e-8, 9.41779576128512936592e-11, 9.70507110881952024631e-14)
_SICI_FD8 = (1.0, 9.17463611873684053703e-1, 1.78685545332074536321e-1,
             1.22253594771971293032e-2, 3.58696481881851580297e-4, 4.92435064317881464393e-6,
             3.21956939101046018377e-8, 9.43720590350276732376e-11, 9.70507110881952025725e-14)
_SICI_GN8 = (6.97359953443276214934e-1, 3.30410979305632063225e-1, 3.84878767649974295920e-2,
             1.71718239052347903558e-3, 3.48941165502279436777e-5, 3.47131167084116673800e-7,
             1.70404452782044526189e-9, 3.85945925430276600453e-12, 3.14040098946363334640e-15)
_SICI_GD8 = (1.0, 1.68548898811011640017e0, 4.87852258695304967486e-1,
             4.67913194259625806320e-2, 1.90284426674399523638e-3, 3.68475504442561108162e-5,
             3.57043223443740838771e-7, 1.72693748966316146736e-9, 3.87830166023954706752e-12,
             3.14040098946363335242e-15)


def _sici_value(x: Any) -> tuple[Any, Any]:
    ax = _fnpm.abs(x)
    small = ax <= 4.0
    # |x| <= 4: the power series as rational functions of x^2
    xs = _fnpm.where(small & (ax > 0), ax, 1.0)
    t = xs * xs
    si_s = xs * _polyval(_SICI_SN, t) / _polyval(_SICI_SD, t)
    ci_s = _EULER + _fnpm.log(xs) + t * _polyval(_SICI_CN, t) / _polyval(_SICI_CD, t)
    # 4 < |x| <= 1e9: the auxiliary functions f, g; beyond, their leading terms
    xl = _fnpm.where(small | _fnpm.isinf(ax) | _fnpm.isnan(ax), 8.0, ax)
    s, c = _fnpm.sin(xl), _fnpm.cos(xl)
    z = 1.0 / (xl * xl)
    below8 = xl < 8.0
    f = _fnpm.where(below8, _polyval(_SICI_FN4, z) / (xl * _polyval(_SICI_FD4, z)),
                    _polyval(_SICI_FN8, z) / (xl * _polyval(_SICI_FD8, z)))
    g = _fnpm.where(below8, z * _polyval(_SICI_GN4, z) / _polyval(_SICI_GD4, z),
                    z * _polyval(_SICI_GN8, z) / _polyval(_SICI_GD8, z))
    huge = xl > 1e9
    si_l = _fnpm.where(huge, math.pi / 2 - c / xl, math.pi / 2 - f * c - g * s)
    ci_l = _fnpm.where(huge, s / xl, f * s - g * c)
    si = _fnpm.where(small, si_s, si_l)
    ci = _fnpm.where(small, ci_s, ci_l)
    si = _fnpm.where(ax == 0, 0.0, _fnpm.where(_fnpm.isinf(ax), math.pi / 2, si))
    ci = _fnpm.where(ax == 0, -numpy.inf, _fnpm.where(_fnpm.isinf(ax), 0.0, ci))
    si = _fnpm.copysign(si, x)  # odd; -0.0 keeps its sign
    ci = _fnpm.where(x == -numpy.inf, numpy.nan, ci)  # Ci(-x) is Ci(x) for finite x, as SciPy
    nan = _fnpm.isnan(x)
    return _fnpm.where(nan, numpy.nan, si), _fnpm.where(nan, numpy.nan, ci)


@custom_jvp
def _sici(x: Any) -> tuple[Any, Any]:
    return _sici_value(x)


@_sici.defjvp
def _sici_jvp(primals: tuple, tangents: tuple) -> tuple:
    (x,), (tx,) = primals, tangents
    out = _sici(x)
    nz = x != 0
    safe = _fnpm.where(nz, x, 1.0)
    d_si = _fnpm.where(nz, _fnpm.sin(safe) / safe, 1.0)  # sin(x)/x -> 1
    d_ci = _fnpm.where(nz, _fnpm.cos(safe) / safe, numpy.inf)
    return out, (d_si * tx, d_ci * tx)


def sici(x: Any) -> tuple[Any, Any]:
    """Sine and cosine integrals ``(Si(x), Ci(x))``: ``Si(x) = integral_0^x sin(t)/t dt``,
    ``Ci(x) = gamma + log(x) + integral_0^x (cos(t) - 1)/t dt``, as ``scipy.special.sici``
    for real ``x`` (for ``x < 0``, ``Ci`` is ``Ci(|x|)``, SciPy's real part). Derivatives
    ``sin(x)/x`` and ``cos(x)/x``; float32 stays float32.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import sici
        >>> si, ci = sici(np.array([1.0, 10.0]))
        >>> si.round(6), ci.round(6)
        (array([0.946083, 1.658348]), array([ 0.337404, -0.045456]))
    """
    (x,) = _floats("sici", x)
    x = _fnpm.asarray(x)
    dt = get_aval(x).dtype
    si, ci = _sici(x.astype(_F64))
    return si.astype(dt), ci.astype(dt)


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
    init = (_fnpm.asarray(0.0), one, one, _fnpm.zeros(get_aval(y).shape, bool))
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
    init = (_fnpm.asarray(0.0), one, one, _fnpm.zeros(get_aval(y).shape, bool))
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
    init = (_fnpm.asarray(0.0), zero, _fnpm.ones_like(y), zero,
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
    init = (_fnpm.asarray(0.0), one, one, _fnpm.zeros(get_aval(z).shape, bool))
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
    gauss = gamma(cg) * gamma(cg - ag - bg) / (gamma(cg - ag) * gamma(cg - bg))
    out = _fnpm.where(at_one, _fnpm.where(d > 0, gauss, numpy.inf), out)
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


# ---------------------------------------------------------------------------------------------
# SciPy's elementwise conveniences: huber, pseudo_huber, softplus, cbrt, exp2, exp10, expm1,
# log1p (not in jax.scipy.special)


def huber(delta: Any, r: Any) -> Any:
    """Huber loss ``r**2 / 2`` for ``|r| <= delta``, ``delta (|r| - delta / 2)`` beyond; ``inf``
    for ``delta < 0``, as ``scipy.special.huber``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import huber
        >>> huber(1.0, np.array([-3.0, 0.5, 2.0]))
        array([2.5  , 0.125, 1.5  ])
    """
    delta, r = _floats("huber", delta, r)
    fnp = _fnp()
    ar = fnp.abs(r)
    inside = ar <= delta
    out = fnp.where(inside, 0.5 * r * r, delta * (ar - 0.5 * delta))
    return fnp.where(delta < 0, numpy.inf, out)


def pseudo_huber(delta: Any, r: Any) -> Any:
    """Pseudo-Huber loss ``delta**2 (sqrt(1 + (r / delta)**2) - 1)`` (smooth, ``r**2 / 2`` near
    0, ``delta |r|`` far out); 0 where ``delta`` or ``r`` is 0, ``inf`` for ``delta < 0``, as
    ``scipy.special.pseudo_huber``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import pseudo_huber
        >>> pseudo_huber(1.0, np.array([0.0, 2.0]))
        array([0.        , 1.23606798])
    """
    delta, r = _floats("pseudo_huber", delta, r)
    fnp = _fnp()
    zero = (delta == 0) | (r == 0)
    d = fnp.where(zero, 1.0, delta)   # the zero cases take no 0 / 0
    v = r / d
    # SciPy's form, accurate for small r / delta: expm1(log1p(v**2) / 2)
    out = fnp.where(zero, 0.0, d * d * fnp.expm1(0.5 * fnp.log1p(v * v)))
    return fnp.where(delta < 0, numpy.inf, out)


def softplus(x: Any) -> Any:
    """``log(1 + exp(x))`` without overflow, as ``scipy.special.softplus`` (``logaddexp(0,
    x)``).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import softplus
        >>> softplus(np.array([-800.0, 0.0, 800.0])).tolist()
        [0.0, 0.6931471805599453, 800.0]
    """
    (x,) = _floats("softplus", x)
    return _fnp().logaddexp(0.0, x)


def cbrt(x: Any) -> Any:
    """The real cube root (negative for negative ``x``), as ``scipy.special.cbrt``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import cbrt
        >>> cbrt(np.array([-8.0, 27.0]))
        array([-2.,  3.])
    """
    (x,) = _floats("cbrt", x)
    return _fnp().cbrt(x)


def exp2(x: Any) -> Any:
    """``2**x``, as ``scipy.special.exp2``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import exp2
        >>> exp2(np.array([3.0, -1.0]))
        array([8. , 0.5])
    """
    (x,) = _floats("exp2", x)
    return _fnp().exp2(x)


def exp10(x: Any) -> Any:
    """``10**x``, as ``scipy.special.exp10``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import exp10
        >>> exp10(np.array([-1.0, 2.0]))
        array([  0.1, 100. ])
    """
    (x,) = _floats("exp10", x)
    return _fnp().power(10.0, x)


def expm1(x: Any) -> Any:
    """``exp(x) - 1``, accurate for small ``x``, as ``scipy.special.expm1``.

    Example:
        >>> from funcgrad.scipy.special import expm1
        >>> float(expm1(1e-10))
        1.00000000005e-10
    """
    (x,) = _floats("expm1", x)
    return _fnp().expm1(x)


def log1p(x: Any) -> Any:
    """``log(1 + x)``, accurate for small ``x``; ``-inf`` at -1 and nan below, silently (as
    ``scipy.special.log1p``).

    Example:
        >>> from funcgrad.scipy.special import log1p
        >>> float(log1p(1e-10)), float(log1p(-1.0))
        (9.999999999500001e-11, -inf)
    """
    (x,) = _floats("log1p", x)
    return _quiet.log1p(_fnp().asarray(x))


# =============================================================================================
# Bessel functions of integer order 0 and 1: j0, j1, y0, y1, k0, k1, k0e, k1e
#
# Chebyshev expansions (funcgrad.scipy._bessel_tables, fitted with mpmath) of smooth
# auxiliary functions: below |x| = 8 (2 for K) the functions less their log(x/2) terms, as
# series in x^2; above, Hankel's form sqrt(2/(pi x)) (P cos chi -+ Q sin chi) with P, x Q in
# 1/x^2 (for K, exp(x) sqrt(x) K(x) in 1/x). Derivatives are the closed forms
# (j0' = -j1, j1' = j0 - j1/x, ...), to every order.


def _cheb(t: Any, coeffs: tuple) -> Any:
    """sum_k c_k T_k(t) by Clenshaw's recurrence (``coeffs`` highest first)."""
    b1: Any = 0.0
    b2: Any = 0.0
    for c in coeffs[:-1]:
        b1, b2 = 2.0 * t * b1 - b2 + c, b1
    return t * b1 - b2 + coeffs[-1]


_BIG_JY = 8.0
_BIG_K = 2.0
_TWO_OVER_PI = 2.0 / math.pi


def _hankel(n: int, ax: Any) -> tuple[Any, Any]:
    """``(J_n, Y_n)`` at ``ax >= 8`` (finite) by Hankel's form; chi = x - (2n + 1) pi / 4 from
    sin x, cos x (exact argument reduction), not by subtracting pi / 4 from a large x."""
    fnp = _fnp()
    r8 = _BIG_JY / ax
    t = 2.0 * r8 * r8 - 1.0  # (8/x)^2: x * x itself overflows far out
    p = _cheb(t, _bt.P0_BIG if n == 0 else _bt.P1_BIG)
    q = _cheb(t, _bt.Q0_BIG if n == 0 else _bt.Q1_BIG) / ax
    c, s = fnp.cos(ax), fnp.sin(ax)
    r = math.sqrt(0.5)
    cos_chi, sin_chi = ((c + s) * r, (s - c) * r) if n == 0 else ((s - c) * r, -(s + c) * r)
    amp = fnp.sqrt(_TWO_OVER_PI / ax)
    return amp * (p * cos_chi - q * sin_chi), amp * (p * sin_chi + q * cos_chi)


def _jy_split(x: Any) -> tuple[Any, Any, Any, Any]:
    """(|x| <= 8 mask, stand-in |x| for the series, for Hankel's form, |x| infinite)."""
    fnp = _fnp()
    ax = fnp.abs(x)
    small = ax <= _BIG_JY
    inf = fnp.isinf(ax)
    return small, fnp.where(small, ax, 0.0), fnp.where(small | inf, _BIG_JY, ax), inf


def _j0_value(x: Any) -> Any:
    fnp = _fnp()
    small, xs, xl, inf = _jy_split(x)
    v_small = _cheb(xs * xs / (0.5 * _BIG_JY * _BIG_JY) - 1.0, _bt.J0_SMALL)
    v = fnp.where(small, v_small, _hankel(0, xl)[0])
    return fnp.where(inf, numpy.nan, v)  # SciPy's (and torch's) nan: no phase at inf


def _j1x_value(x: Any) -> Any:
    """J_1(x) / x (1/2 at 0; even)."""
    fnp = _fnp()
    small, xs, xl, inf = _jy_split(x)
    v_small = _cheb(xs * xs / (0.5 * _BIG_JY * _BIG_JY) - 1.0, _bt.J1_SMALL)
    v = fnp.where(small, v_small, _hankel(1, xl)[0] / xl)
    return fnp.where(inf, numpy.nan, v)


def _y_small_parts(x: Any) -> tuple[Any, Any, Any, Any]:
    """(0 < x <= 8 mask, stand-in x there, for Hankel's form, x = inf)."""
    fnp = _fnp()
    small = (x > 0) & (x <= _BIG_JY)
    big = (x > _BIG_JY) & (x < numpy.inf)
    return small, fnp.where(small, x, 1.0), fnp.where(big, x, _BIG_JY), x == numpy.inf


def _y0_value(x: Any) -> Any:
    fnp = _fnp()
    small, xs, xl, inf = _y_small_parts(x)
    aux = _cheb(xs * xs / (0.5 * _BIG_JY * _BIG_JY) - 1.0, _bt.Y0_SMALL)
    v_small = aux + _TWO_OVER_PI * fnp.log(0.5 * xs) * _j0_value(xs)
    v = fnp.where(small, v_small, _hankel(0, xl)[1])
    v = fnp.where(inf, numpy.nan, v)
    v = fnp.where(x == 0, -numpy.inf, v)
    return fnp.where((x < 0) | fnp.isnan(x), numpy.nan, v)


def _y1_value(x: Any) -> Any:
    fnp = _fnp()
    small, xs, xl, inf = _y_small_parts(x)
    aux = _cheb(xs * xs / (0.5 * _BIG_JY * _BIG_JY) - 1.0, _bt.Y1_SMALL)
    v_small = aux / xs + _TWO_OVER_PI * fnp.log(0.5 * xs) * xs * _j1x_value(xs)
    v = fnp.where(small, v_small, _hankel(1, xl)[1])
    v = fnp.where(inf, numpy.nan, v)
    v = fnp.where(x == 0, -numpy.inf, v)
    return fnp.where((x < 0) | fnp.isnan(x), numpy.nan, v)


def _k_value(n: int, scaled: bool, x: Any) -> Any:
    """K_n(x) (``exp(x) K_n(x)`` when ``scaled``), n = 0, 1: inf at 0, nan below."""
    fnp = _fnp()
    small = (x > 0) & (x <= _BIG_K)
    big = (x > _BIG_K) & (x < numpy.inf)
    xs = fnp.where(small, x, 1.0)
    xl = fnp.where(big, x, 4.0)
    t = xs * xs / (0.5 * _BIG_K * _BIG_K) - 1.0
    log_half = fnp.log(0.5 * xs)
    if n == 0:
        v_small = _cheb(t, _bt.K0_SMALL) - log_half * _sp.i0(xs)
    else:
        v_small = (_cheb(t, _bt.K1_SMALL) + xs * log_half * _sp.i1(xs)) / xs
    if scaled:
        v_small = v_small * fnp.exp(xs)
    tb = 2.0 * _BIG_K / xl - 1.0
    v_big = _cheb(tb, _bt.K0_BIG if n == 0 else _bt.K1_BIG) / fnp.sqrt(xl)
    if not scaled:
        v_big = v_big * fnp.exp(-xl)
    v = fnp.where(small, v_small, v_big)
    v = fnp.where(x == numpy.inf, 0.0, v)
    v = fnp.where(x == 0, numpy.inf, v)
    return fnp.where((x < 0) | fnp.isnan(x), numpy.nan, v)


@custom_jvp
def _j0(x: Any) -> Any:
    return _j0_value(x)


@custom_jvp
def _j1x(x: Any) -> Any:
    return _j1x_value(x)


@_j0.defjvp
def _j0_jvp(primals: tuple, tangents: tuple) -> tuple:
    (x,), (tx,) = primals, tangents
    return _j0(x), -_j1(x) * tx


@_j1x.defjvp
def _j1x_jvp(primals: tuple, tangents: tuple) -> tuple:
    # (J1/x)' = (J0 - 2 J1/x) / x, which is -x/8 + ... near 0, where it cancels: there (below
    # |x| = 1/2, where the cancellation costs under a digit) the series' derivative,
    # (x/4) sum_{k>=1} (-1)^k z^(k-1) / ((k-1)! (k+1)!), z = x^2/4 (ten terms reach 1e-30).
    (x,), (tx,) = primals, tangents
    fnp = _fnp()
    near = fnp.abs(x) < 0.5
    xs = fnp.where(near, 1.0, x)
    far = (_j0(xs) - 2.0 * _j1x(xs)) / xs
    xn = fnp.where(near, x, 0.0)
    z = 0.25 * xn * xn
    acc: Any = 0.0
    for k in range(10, 0, -1):
        acc = acc * z + (-1.0) ** k / (math.factorial(k - 1) * math.factorial(k + 1))
    series = 0.25 * xn * acc
    return _j1x(x), fnp.where(near, series, far) * tx


@custom_jvp
def _y0(x: Any) -> Any:
    return _y0_value(x)


@custom_jvp
def _y1(x: Any) -> Any:
    return _y1_value(x)


@_y0.defjvp
def _y0_jvp(primals: tuple, tangents: tuple) -> tuple:
    (x,), (tx,) = primals, tangents
    return _y0(x), -_y1(x) * tx


@_y1.defjvp
def _y1_jvp(primals: tuple, tangents: tuple) -> tuple:
    (x,), (tx,) = primals, tangents
    y1 = _y1(x)
    return y1, (_y0(x) - _quiet.div(y1, x)) * tx


@functools.partial(custom_jvp, nondiff_argnums=(0, 1))
def _k(n: int, scaled: bool, x: Any) -> Any:
    return _k_value(n, scaled, x)


@_k.defjvp
def _k_jvp(n: int, scaled: bool, primals: tuple, tangents: tuple) -> tuple:
    # K0' = -K1, K1' = -K0 - K1/x; the scaled ones add themselves (d exp(x) = exp(x)).
    (x,), (tx,) = primals, tangents
    out = _k(n, scaled, x)
    k1 = out if n == 1 else _k(1, scaled, x)
    d = -k1 if n == 0 else -_k(0, scaled, x) - _quiet.div(k1, x)
    if scaled:
        d = d + out
    return out, d * tx


def _j1(x: Any) -> Any:
    # x (J1 / x) below 8; above, Hankel's form itself (J1 / x underflows at 1e300).
    fnp = _fnp()
    small, _, xl, inf = _jy_split(x)
    v = fnp.where(small, fnp.where(small, x, 0.0) * _j1x(x),
                  fnp.sign(x) * _hankel(1, xl)[0])
    return fnp.where(inf, numpy.nan, v)


def _bessel01(name: str, fn: Any, x: Any) -> Any:
    (x,) = _floats(name, x)
    x = _fnp().asarray(x)
    return _back(fn(_f64(x)), x)


def j0(x: Any) -> Any:
    """Bessel function of the first kind of order 0, as ``scipy.special.j0`` (real ``x``);
    derivative ``-j1(x)``, to every order.

    Example:
        >>> from funcgrad.scipy.special import j0
        >>> round(float(j0(1.0)), 12)
        0.765197686558
    """
    return _bessel01("j0", _j0, x)


def j1(x: Any) -> Any:
    """Bessel function of the first kind of order 1, as ``scipy.special.j1``; derivative
    ``j0(x) - j1(x) / x`` (``1/2`` at 0).

    Example:
        >>> from funcgrad.scipy.special import j1
        >>> round(float(j1(1.0)), 12)
        0.440050585745
    """
    return _bessel01("j1", _j1, x)


def y0(x: Any) -> Any:
    """Bessel function of the second kind of order 0, as ``scipy.special.y0`` (``-inf`` at 0,
    nan for ``x < 0``); derivative ``-y1(x)``.

    Example:
        >>> from funcgrad.scipy.special import y0
        >>> round(float(y0(1.0)), 12)
        0.088256964216
    """
    return _bessel01("y0", _y0, x)


def y1(x: Any) -> Any:
    """Bessel function of the second kind of order 1, as ``scipy.special.y1`` (``-inf`` at 0,
    nan for ``x < 0``); derivative ``y0(x) - y1(x) / x``.

    Example:
        >>> from funcgrad.scipy.special import y1
        >>> round(float(y1(2.0)), 12)
        -0.107032431541
    """
    return _bessel01("y1", _y1, x)


def k0(x: Any) -> Any:
    """Modified Bessel function of the second kind of order 0, as ``scipy.special.k0``
    (``inf`` at 0, nan for ``x < 0``); derivative ``-k1(x)``.

    Example:
        >>> from funcgrad.scipy.special import k0
        >>> round(float(k0(1.0)), 12)
        0.421024438241
    """
    return _bessel01("k0", functools.partial(_k, 0, False), x)


def k1(x: Any) -> Any:
    """Modified Bessel function of the second kind of order 1, as ``scipy.special.k1``;
    derivative ``-k0(x) - k1(x) / x``.

    Example:
        >>> from funcgrad.scipy.special import k1
        >>> round(float(k1(1.0)), 12)
        0.601907230197
    """
    return _bessel01("k1", functools.partial(_k, 1, False), x)


def k0e(x: Any) -> Any:
    """Exponentially scaled ``exp(x) k0(x)``, finite far beyond where ``k0`` underflows, as
    ``scipy.special.k0e``.

    Example:
        >>> from funcgrad.scipy.special import k0e
        >>> round(float(k0e(1000.0)), 12)
        0.039628321601
    """
    return _bessel01("k0e", functools.partial(_k, 0, True), x)


def k1e(x: Any) -> Any:
    """Exponentially scaled ``exp(x) k1(x)``, as ``scipy.special.k1e``.

    Example:
        >>> from funcgrad.scipy.special import k1e
        >>> round(float(k1e(1.0)), 12)
        1.636153486263
    """
    return _bessel01("k1e", functools.partial(_k, 1, True), x)


# =============================================================================================
# Complete elliptic integrals (parameter m = k^2, as SciPy): the arithmetic-geometric mean


def _agm_ke(m: Any, b: Any) -> tuple[Any, Any]:
    """(K, E) for ``0 <= m < 1`` given ``b = sqrt(1 - m)`` (passed separately, so that
    ``ellipkm1``'s tiny ``1 - m`` keeps its digits): K = pi / (2 AGM(1, b)) and
    E = K (1 - sum_n 2^(n-1) c_n^2), c_0^2 = m, c_(n+1) = (a_n - b_n) / 2. Quadratic
    convergence: twenty steps settle even b = 1e-300."""
    fnp = _fnp()
    a_n = fnp.ones_like(b)
    b_n = b
    total = 0.5 * m
    scale = 0.5
    for _ in range(20):
        c = 0.5 * (a_n - b_n)
        a_n, b_n = 0.5 * (a_n + b_n), fnp.sqrt(a_n * b_n)
        scale = scale * 2.0
        total = total + scale * c * c
    k = math.pi / (2.0 * a_n)
    return k, k * (1.0 - total)


def _ellip_values(m: Any, p: Any) -> tuple[Any, Any]:
    """(K(m), E(m)) with ``p = 1 - m`` given too: SciPy's values for every real m (m < 0 by
    DLMF 19.7.5, K(m) = K(m') / sqrt(1 - m), E(m) = sqrt(1 - m) E(m'), m' = -m / (1 - m)
    in [0, 1); inf / 1 at m = 1; nan above)."""
    fnp = _fnp()
    neg = m < 0
    ok = (p > 0) & (p < numpy.inf) & ~neg
    fin_neg = neg & (m > -numpy.inf)
    p_n = fnp.where(fin_neg, p, 2.0)
    m_s = fnp.where(ok, m, fnp.where(fin_neg, -m / p_n, 0.5))
    b_s = fnp.where(ok, fnp.sqrt(fnp.where(ok, p, 0.5)), fnp.where(fin_neg, 1.0 / fnp.sqrt(p_n), 0.5))
    k, e = _agm_ke(m_s, b_s)
    root = fnp.sqrt(p_n)
    k = fnp.where(fin_neg, k / root, k)
    e = fnp.where(fin_neg, e * root, e)
    k = fnp.where(m == -numpy.inf, 0.0, fnp.where(p == 0, numpy.inf, k))
    e = fnp.where(m == -numpy.inf, numpy.inf, fnp.where(p == 0, 1.0, e))
    bad = (p < 0) | fnp.isnan(m) | fnp.isnan(p) | ((p == numpy.inf) & ~(m == -numpy.inf))
    return fnp.where(bad, numpy.nan, k), fnp.where(bad, numpy.nan, e)


# Near m = 0 the derivatives' closed forms cancel: there their Taylor series,
# K = pi/2 sum_n c_n m^n, E = pi/2 sum_n c_n m^n / (1 - 2n), c_n = ((2n)! / (4^n n!^2))^2.
_ELLIP_C = tuple((math.comb(2 * n, n) / 4.0 ** n) ** 2 for n in range(12))


def _ellip_dm_series(m: Any, which: int) -> Any:
    acc: Any = 0.0
    for n in range(11, 0, -1):
        c = n * _ELLIP_C[n] / (1.0 if which == 0 else (1.0 - 2.0 * n))
        acc = acc * m + c
    return 0.5 * math.pi * acc


@custom_jvp
def _ellip_k(m: Any, p: Any) -> Any:
    return _ellip_values(m, p)[0]


@custom_jvp
def _ellip_e(m: Any, p: Any) -> Any:
    return _ellip_values(m, p)[1]


def _ellip_dm(which: int, m: Any, p: Any) -> Any:
    """dK/dm = (E - p K) / (2 m p), dE/dm = (E - K) / (2 m); the series below |m| = 1e-2."""
    fnp = _fnp()
    near = fnp.abs(m) < 1e-2
    m_f = fnp.where(near, 0.5, m)
    p_f = fnp.where(near, 0.5, p)
    k, e = _ellip_k(m_f, p_f), _ellip_e(m_f, p_f)
    far = (e - p_f * k) / (2.0 * m_f * p_f) if which == 0 else (e - k) / (2.0 * m_f)
    return fnp.where(near, _ellip_dm_series(fnp.where(near, m, 0.0), which), far)


@_ellip_k.defjvp
def _ellip_k_jvp(primals: tuple, tangents: tuple) -> tuple:
    # m and p = 1 - m are one variable (the callers make one from the other, so tp = -tm):
    # its tangent is (tm - tp) / 2.
    (m, p), (tm, tp) = primals, tangents
    return _ellip_k(m, p), _ellip_dm(0, m, p) * (0.5 * (tm - tp))


@_ellip_e.defjvp
def _ellip_e_jvp(primals: tuple, tangents: tuple) -> tuple:
    (m, p), (tm, tp) = primals, tangents
    return _ellip_e(m, p), _ellip_dm(1, m, p) * (0.5 * (tm - tp))


def ellipk(m: Any) -> Any:
    """Complete elliptic integral of the first kind ``K(m) = int_0^(pi/2) (1 - m sin^2 t)^(-1/2)
    dt`` (parameter ``m = k^2``), as ``scipy.special.ellipk``: every ``m < 1`` (``inf`` at 1,
    nan above). Derivative ``(E(m) - (1 - m) K(m)) / (2 m (1 - m))`` (``pi/8`` at 0).

    Example:
        >>> import funcgrad
        >>> from funcgrad.scipy.special import ellipk
        >>> round(float(ellipk(0.5)), 12), round(float(funcgrad.grad(ellipk)(0.0)), 12)
        (1.854074677301, 0.392699081699)
    """
    (m,) = _floats("ellipk", m)
    m = _fnp().asarray(m)
    md = _f64(m)
    return _back(_ellip_k(md, 1.0 - md), m)


def ellipkm1(p: Any) -> Any:
    """``K(1 - p)``, for ``m`` near 1 without the rounding of ``1 - m``, as
    ``scipy.special.ellipkm1`` (``inf`` at ``p = 0``, nan below).

    Example:
        >>> from funcgrad.scipy.special import ellipkm1
        >>> round(float(ellipkm1(1e-20)), 10)
        24.4121452911
    """
    (p,) = _floats("ellipkm1", p)
    p = _fnp().asarray(p)
    pd = _f64(p)
    # m = 1 - p; the rule differentiates through the pair (m, p).
    return _back(_ellip_k(_fnp().where(pd == numpy.inf, -numpy.inf, 1.0 - pd), pd), p)


def ellipe(m: Any) -> Any:
    """Complete elliptic integral of the second kind ``E(m) = int_0^(pi/2) (1 - m sin^2 t)^(1/2)
    dt``, as ``scipy.special.ellipe`` (every ``m <= 1``; nan above). Derivative
    ``(E(m) - K(m)) / (2 m)`` (``-pi/8`` at 0).

    Example:
        >>> from funcgrad.scipy.special import ellipe
        >>> round(float(ellipe(0.5)), 12)
        1.350643881048
    """
    (m,) = _floats("ellipe", m)
    m = _fnp().asarray(m)
    md = _f64(m)
    return _back(_ellip_e(md, 1.0 - md), m)


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

    init = (fnp.asarray(0, dtype=numpy.int32), w, special | exact)
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


def cosm1(x: Any) -> Any:
    """``cos(x) - 1``, accurate where it is small (``-2 sin(x/2)^2``), as
    ``scipy.special.cosm1``.

    Example:
        >>> from funcgrad.scipy.special import cosm1
        >>> print(f"{float(cosm1(1e-8)):.6e}")
        -5.000000e-17
    """
    (x,) = _floats("cosm1", x)
    fnp = _fnp()
    x = fnp.asarray(x)
    inf = fnp.isinf(x)  # nan there, as SciPy, without sin's invalid-value warning
    s = fnp.sin(0.5 * fnp.where(inf, 0.0, x))
    return fnp.where(inf, numpy.nan, -2.0 * s * s)


def zetac(x: Any) -> Any:
    """Riemann zeta function minus 1, ``zeta(x) - 1``, accurate for large ``x`` (where it is
    ``2^-x + 3^-x + ...``: the Hurwitz ``zeta(x, 2)`` itself), as ``scipy.special.zetac``.

    Example:
        >>> from funcgrad.scipy.special import zetac
        >>> print(f"{float(zetac(60.0)):.6e}")
        8.673617e-19
    """
    (x,) = _floats("zetac", x)
    fnp = _fnp()
    x = fnp.asarray(x)
    big = x > 1
    xb = fnp.where(big, x, 2.0)
    xs = fnp.where(big, 0.0, x)
    # SciPy's 0 at +inf (the Hurwitz zeta(inf, 2) is nan); from x = 127, where SciPy's
    # Cephes returns 0, the value 2^-x + ... is kept (zetac(200) = 6.2e-61).
    out = fnp.where(big, zeta(xb, _like(xb, 2.0)), zeta(xs) - 1.0)
    return fnp.where(x == numpy.inf, 0.0, out)


def agm(a: Any, b: Any) -> Any:
    """The arithmetic-geometric mean of ``a`` and ``b``, as ``scipy.special.agm`` (both
    negative: ``-agm(-a, -b)``; opposite signs: nan; a zero: 0). Thirty steps of the
    iteration (quadratic convergence settles even a ratio of 1e600), differentiable; a zero
    beside any finite value gives 0.

    Example:
        >>> from funcgrad.scipy.special import agm
        >>> round(float(agm(24.0, 6.0)), 12)
        13.458171481726
    """
    a, b = _floats("agm", a, b)
    fnp = _fnp()
    a, b = fnp.broadcast_arrays(fnp.asarray(a), fnp.asarray(b))
    neg = (a < 0) & (b < 0)
    sa, sb = fnp.where(neg, -a, a), fnp.where(neg, -b, b)
    ok = (sa > 0) & (sb > 0) & fnp.isfinite(sa) & fnp.isfinite(sb)
    x, y = fnp.where(ok, sa, 1.0), fnp.where(ok, sb, 1.0)
    for _ in range(30):
        # sqrt(x) sqrt(y): x * y itself could overflow or underflow.
        x, y = 0.5 * x + 0.5 * y, fnp.sqrt(x) * fnp.sqrt(y)
    out = fnp.where(ok, x, numpy.nan)
    inf = ((sa == numpy.inf) & (sb > 0)) | ((sb == numpy.inf) & (sa > 0))
    out = fnp.where(inf, numpy.inf, out)
    zero = (((a == 0) & (fnp.abs(b) < numpy.inf))  # beside any finite one, as SciPy
            | ((b == 0) & (fnp.abs(a) < numpy.inf)))
    out = fnp.where(zero, 0.0, out)
    return fnp.where(neg, -out, out)
