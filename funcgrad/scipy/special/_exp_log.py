"""Exponential and logarithm helpers: expit, logit, log_expit, softmax, log_softmax,
logsumexp, softplus, exprel, cosm1, cbrt, exp2, exp10, expm1, log1p."""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy

import funcgrad.numpy as _fnp_module
import funcgrad.ops.elementwise as _ew
import funcgrad.ops.shape as _shape
from funcgrad.avals import get_aval
from funcgrad.core import Tracer
from funcgrad.numpy import _elementwise as _fe
from funcgrad.numpy import _reductions as _fr
from funcgrad.ops.custom_derivatives import custom_jvp
from funcgrad.scipy import _quiet
from funcgrad.scipy.special._common import _floats, _fnp, _fnpm

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


def _exprel(t: Any) -> Any:
    """``expm1(t) / t`` (1 at 0), smooth through 0 so derivatives there are right."""
    small = _fnpm.abs(t) < 1e-3
    ts = _fnpm.where(small, 1.0, t)
    th = _fnpm.where(small, t, 0.0)  # the series on its own lanes (t^5 overflows far out)
    series = 1.0 + th * (1 / 2 + th * (1 / 6 + th * (1 / 24 + th * (1 / 120 + th / 720))))
    return _fnpm.where(small, series, _fnpm.expm1(ts) / ts)

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
    # logaddexp(0, nan) warns (SciPy's softplus(nan) is nan, silently)
    nan = _fnp().isnan(x)
    return _fnp().where(nan, x, _fnp().logaddexp(0.0, _fnp().where(nan, 0.0, x)))


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


def _overflow_silently(fn: Any, x: Any, limit: Any) -> Any:
    """``fn(x)`` with ``inf`` past ``limit(largest float of x's dtype)`` and no overflow
    warning (SciPy's are silent)."""
    fnp = _fnp()
    x = fnp.asarray(x)
    over = x > limit(float(numpy.finfo(get_aval(x).dtype).max))
    return fnp.where(over, numpy.inf, fn(fnp.where(over, 0.0, x)))


def exp2(x: Any) -> Any:
    """``2**x``, as ``scipy.special.exp2``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import exp2
        >>> exp2(np.array([3.0, -1.0]))
        array([8. , 0.5])
    """
    (x,) = _floats("exp2", x)
    return _overflow_silently(_fnp().exp2, x, math.log2)


def exp10(x: Any) -> Any:
    """``10**x``, as ``scipy.special.exp10``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import exp10
        >>> exp10(np.array([-1.0, 2.0]))
        array([  0.1, 100. ])
    """
    (x,) = _floats("exp10", x)
    return _overflow_silently(lambda v: _fnp().power(10.0, v), x, math.log10)


def expm1(x: Any) -> Any:
    """``exp(x) - 1``, accurate for small ``x``, as ``scipy.special.expm1``.

    Example:
        >>> from funcgrad.scipy.special import expm1
        >>> float(expm1(1e-10))
        1.00000000005e-10
    """
    (x,) = _floats("expm1", x)
    return _overflow_silently(_fnp().expm1, x, math.log)


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


def powm1(x: Any, y: Any) -> Any:
    """``x**y - 1`` without the cancellation near ``x**y = 1`` (``expm1(y log x)``), as
    ``scipy.special.powm1``: ``powm1(x, 0) = 0`` for every ``x``, ``powm1(1, y) = 0``;
    a negative ``x`` needs an integer ``y`` (nan otherwise); differentiable.

    Example:
        >>> from funcgrad.scipy.special import powm1
        >>> float(powm1(2.0, 1e-10))   # 2**1e-10 - 1 keeps its digits
        6.931471805839679e-11
    """
    fnp = _fnpm
    x, y = _floats("powm1", x, y)
    x, y = fnp.broadcast_arrays(fnp.asarray(x), fnp.asarray(y))
    pos = x > 0
    xs = fnp.where(pos, x, 1.0)
    out = fnp.expm1(y * fnp.log(xs))
    # x < 0: the plain power (SciPy's), nan for a non-integer y; x = 0: -1, or inf for y < 0
    whole = y == fnp.floor(y)
    negw = (x < 0) & whole
    plain = fnp.where(negw, x, 1.0) ** fnp.where(negw, y, 1.0) - 1.0
    at0 = fnp.where(y < 0, numpy.inf, -1.0)
    out = fnp.where(pos, out, fnp.where(x == 0, at0, fnp.where(negw, plain, numpy.nan)))
    out = fnp.where((y == 0) | (x == 1), 0.0, out)
    return out
