"""funcgrad.scipy.special: differentiable versions of ``scipy.special`` functions.

SciPy itself is not needed. Error and gamma functions are primitives
(:mod:`funcgrad.ops.special`, accurate to a few ulps in float64); the rest are stable
compositions: ``logsumexp`` (``b``, ``return_sign``, the max term kept separate so results
near zero stay accurate), ``softmax``/``log_softmax``, ``expit``/``logit``/``log_expit``,
``xlogy``/``xlog1py``/``entr`` (0 where ``x == 0``, with gradients that stay finite there),
``ndtr``/``ndtri``.

Dtypes: float32 stays float32, other real inputs (integers, bool, float16) give float64;
Python scalars are weak (NEP 50). Complex input is not supported.

Example:
    >>> import numpy as np, funcgrad
    >>> from funcgrad.scipy.special import logsumexp
    >>> float(logsumexp(np.array([1000.0, 1000.0])))   # no overflow
    1000.6931471805599
    >>> funcgrad.grad(logsumexp)(np.array([1000.0, 1000.0]))
    array([0.5, 0.5])
"""

from __future__ import annotations

import math
from typing import Any

import numpy

import funcgrad.ops.elementwise as _ew
import funcgrad.ops.shape as _shape
from funcgrad.avals import get_aval, result_dtype
from funcgrad.backend import device_put, get_default_device
from funcgrad.core import Tracer
from funcgrad.errors import DTypeError
from funcgrad.numpy import _elementwise as _fe
from funcgrad.numpy import _linalg_ops as _fl
from funcgrad.numpy import _reductions as _fr
from funcgrad.ops import special as _sp

__all__ = [
    "erf", "erfc", "erfinv", "erfcinv", "gammaln", "digamma", "psi", "polygamma",
    "expit", "logit", "log_expit", "softmax", "log_softmax", "logsumexp", "xlogy",
    "xlog1py", "entr", "ndtr", "ndtri",
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
    if n_host.dtype.kind not in "iu":
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
    # x - log1p(exp(x)) for x < 0, -log1p(exp(-x)) otherwise: exp never overflows.
    e = _ew.exp(_ew.neg(_ew.abs(x)))
    soft = _ew.log1p(e)
    return _ew.select_n(neg, _ew.neg(soft), _ew.sub(x, soft))


def logit(x: Any) -> Any:
    """``log(x / (1 - x))``, the inverse of :func:`expit` (accurate near ``x = 1/2``).

    Example:
        >>> from funcgrad.scipy.special import logit
        >>> round(float(logit(0.75)), 12)
        1.098612288668
    """
    (x,) = _floats("logit", x)
    s = _ew.mul(_ew.sub(x, 0.5), 2.0)
    near_half = _ew.and_(_ew.ge(x, 0.3), _ew.le(x, 0.65))
    # Each branch sees a safe argument where the other is chosen, so neither leaks nan
    # into the gradient.
    s_mid = _ew.select_n(near_half, 0.0, s)
    x_out = _ew.select_n(near_half, x, 0.25)
    mid = _ew.sub(_ew.log1p(s_mid), _ew.log1p(_ew.neg(s_mid)))
    out = _ew.log(_ew.div(x_out, _ew.sub(1.0, x_out)))
    return _ew.select_n(near_half, out, mid)


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
              return_sign: bool = False) -> Any:
    """``log(sum(b * exp(a)))`` over ``axis``, without overflow or underflow.

    ``b`` (broadcasting with ``a``) weights the terms; entries with ``b == 0`` add nothing,
    even when ``a`` is infinite. With ``return_sign=True`` returns ``(log|s|, sign(s))``;
    otherwise a negative sum gives nan. The gradient is the (weighted) softmax.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import logsumexp
        >>> float(logsumexp(np.array([0.0, -50.0])))   # the tiny term is kept
        1.9287498479639178e-22
        >>> logsumexp(np.array([1.0, 2.0]), b=np.array([1.0, -1.0]), return_sign=True)
        (array(1.54132485), array(-1.))
    """
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
    s = _ew.select_n(_ew.lt(s, -1.0), s, _ew.sub(_ew.neg(s), 2.0))
    out = _ew.add(_ew.add(_ew.log1p(s), _ew.log(_ew.abs(m))), a_max)
    if not return_sign:
        out = _ew.select_n(_ew.lt(sgn, 0), out, numpy.nan)
    if not keepdims:
        out = _shape.squeeze(out, axes)
        sgn = _shape.squeeze(sgn, axes)
    return (out, sgn) if return_sign else out


def xlogy(x: Any, y: Any) -> Any:
    """``x * log(y)``, taken as 0 where ``x == 0`` (unless ``y`` is nan).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import xlogy
        >>> xlogy(np.array([0.0, 2.0]), np.array([0.0, np.e]))
        array([0., 2.])
    """
    x, y = _floats("xlogy", x, y)
    zero = _ew.and_(_ew.eq(x, 0), _ew.logical_not(_ew.is_nan(y)))
    y_safe = _ew.select_n(zero, y, 1.0)
    return _ew.select_n(zero, _ew.mul(x, _ew.log(y_safe)), 0.0)


def xlog1py(x: Any, y: Any) -> Any:
    """``x * log1p(y)``, taken as 0 where ``x == 0`` (unless ``y`` is nan).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import xlog1py
        >>> xlog1py(np.array([0.0, 1.0]), np.array([-1.0, 0.0]))
        array([0., 0.])
    """
    x, y = _floats("xlog1py", x, y)
    zero = _ew.and_(_ew.eq(x, 0), _ew.logical_not(_ew.is_nan(y)))
    y_safe = _ew.select_n(zero, y, 0.0)
    return _ew.select_n(zero, _ew.mul(x, _ew.log1p(y_safe)), 0.0)


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
