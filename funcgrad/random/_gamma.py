"""Gamma, log-gamma, beta, Dirichlet and Poisson samplers.

``gamma`` is JAX's: Marsaglia and Tsang's rejection method, one key per element
(``split(key, a.size)``), each element's rejection loop a ``while_loop`` (run for all elements
at once through ``vmap``). Its derivative in ``a`` is the implicit reparameterisation gradient
``dx/da = -(dP/da)(a, x) / p(x; a)`` with ``P`` the regularised incomplete gamma function,
whose ``a``-derivative comes from differentiating :func:`funcgrad.scipy.special.gammainc`.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy

import funcgrad.numpy as fnp
import funcgrad.ops.elementwise as _ew
import funcgrad.ops.shape as _sh
from funcgrad import lax
from funcgrad.api import jvp
from funcgrad.api_vmap import vmap
from funcgrad.avals import get_aval
from funcgrad.numpy._creation import with_out_sharding
from funcgrad.ops.control_flow import while_loop
from funcgrad.ops.custom_derivatives import custom_jvp
from funcgrad.ops.special import lgamma
from funcgrad.random._core import check_key, shape_arg, split, split2
from funcgrad.random._reuse import consumes
from funcgrad.random._samplers import (
    _normal_real,
    _shape_or_params,
    _uniform,
    as_param,
    check_shape,
    float_dtype,
)
from funcgrad.scipy import _quiet
from funcgrad.scipy.special import gammainc, gammaln

__all__ = ["gamma", "loggamma", "beta", "dirichlet", "poisson", "chisquare"]

Array = Any


def _gamma_one(key: Any, alpha: Any, log_space: bool) -> Any:
    """One Gamma(alpha) draw (``alpha`` a scalar) by Marsaglia-Tsang rejection."""
    dt = get_aval(alpha).dtype
    zero = fnp.zeros_like(alpha)
    one, two = _ew.add(zero, dt.type(1)), _ew.add(zero, dt.type(2))
    # alpha < 1 samples Gamma(alpha + 1) and multiplies by U**(1/alpha).
    boost_mask = _ew.ge(alpha, dt.type(1))
    alpha_orig = alpha
    alpha = _ew.select_n(boost_mask, _ew.add(alpha, dt.type(1)), alpha)
    d = _ew.sub(alpha, dt.type(1.0 / 3.0))
    # alpha <= -2/3 (invalid) gives NaN, as JAX's, without NumPy's sqrt/divide warnings
    c = _ew.div(dt.type(1.0 / 3.0),
                _ew.sqrt(fnp.where(_ew.gt(d, dt.type(0)), d, dt.type(numpy.nan))))
    # 1 / alpha for the boost: inf at alpha = 0 (the draw is then 0, as JAX's), no warning
    nonzero = _ew.ne(alpha_orig, dt.type(0))
    inv_alpha = fnp.where(nonzero, _ew.div(dt.type(1), fnp.where(nonzero, alpha_orig, one)),
                          dt.type(numpy.inf))

    def cond(carry: Any) -> Any:
        _, x2, v, u = carry
        squeeze = _ew.ge(u, _ew.sub(dt.type(1), _ew.mul(dt.type(0.0331), _ew.mul(x2, x2))))
        full = _ew.ge(_ew.log(u), _ew.add(_ew.mul(x2, dt.type(0.5)),
                                          _ew.mul(d, _ew.add(_ew.sub(dt.type(1), v),
                                                             _ew.log(v)))))
        return _ew.and_(squeeze, full)

    def next_xv(kxv: Any) -> Any:
        k, sub = split2(kxv[0])
        x = _normal_real(sub, (), dt)
        return k, x, _ew.add(dt.type(1), _ew.mul(x, c))

    def body(carry: Any) -> Any:
        k, x_key, u_key = split2(carry[0], 3)
        _, x, v = while_loop(lambda kxv: _ew.le(kxv[2], dt.type(0)), next_xv,
                             (x_key, zero, _ew.neg(one)))
        u = _uniform(u_key, (), dt, 0.0, 1.0)
        return k, _ew.mul(x, x), _ew.mul(_ew.mul(v, v), v), u

    key, sub = split2(key)
    _, _, v, _ = while_loop(cond, body, (key, zero, one, two))
    if log_space:
        u = _uniform(sub, (), dt, 0.0, 1.0)
        log_u = _ew.log1p(_ew.neg(u))  # -Exponential, as JAX (so both spaces agree)
        skip = _ew.or_(boost_mask, _ew.eq(log_u, dt.type(0)))
        log_boost = _ew.select_n(skip, _ew.mul(log_u, inv_alpha), zero)
        return _ew.add(_ew.add(_ew.log(d), _ew.log(v)), log_boost)
    samples = _ew.sub(dt.type(1), _uniform(sub, (), dt, 0.0, 1.0))
    boost = _ew.select_n(boost_mask, _ew.pow(samples, inv_alpha), one)
    return _ew.mul(_ew.mul(d, v), boost)


def _gamma_impl(key: Any, a: Any, log_space: bool) -> Any:
    shape = tuple(get_aval(a).shape)
    size = int(numpy.prod(shape, dtype=numpy.int64))
    if size == 0:
        return a
    keys = split(key, size)
    flat = _sh.reshape(a, (size,))
    out = vmap(lambda k, al: _gamma_one(k, al, log_space))(keys, flat)
    return _sh.reshape(out, shape)


def _dsample_da(sample: Any, a: Any, log_space: bool) -> Any:
    """``d sample / d a`` at fixed CDF value (implicit reparameterisation)."""
    dt = get_aval(a).dtype
    if log_space:
        x = _ew.exp(sample)
        x = _ew.select_n(_ew.eq(x, dt.type(0)), x, dt.type(numpy.finfo(dt).tiny))
        at_zero = None
    else:
        # A draw of 0 (tiny a, underflowed): P(a, 0) = 0 for every a > 0, so the draw stays 0
        # and its derivative is 0 (JAX's), where the formula is 0 / 0. Evaluated at a safe x.
        at_zero = _ew.and_(_ew.eq(sample, dt.type(0)), _ew.gt(a, dt.type(0)))
        x = _ew.select_n(at_zero, sample, dt.type(1))
    _, dp_da = jvp(lambda al: gammainc(al, x), (a,), (fnp.ones_like(a),))
    log_pdf = _ew.sub(_ew.sub(_ew.mul(_ew.sub(a, dt.type(1)), _ew.log(x)), x), gammaln(a))
    out = _ew.neg(_ew.div(dp_da, _ew.exp(log_pdf)))
    if log_space:
        return _ew.div(out, x)
    return _ew.select_n(at_zero, out, dt.type(0))


@functools.partial(custom_jvp, nondiff_argnums=(2,))
def _gamma_p(key: Any, a: Any, log_space: bool) -> Any:
    return _gamma_impl(key, a, log_space)


@_gamma_p.defjvp
def _gamma_jvp(log_space: bool, primals: Any, tangents: Any) -> Any:
    key, a = primals
    _, ta = tangents
    out = _gamma_p(key, a, log_space)
    # not stop_gradient'ed: d sample / d a depends on a (directly and through the sample), and
    # JAX's second derivatives (hessian of gamma in a) see that dependence
    return out, _ew.mul(ta, _dsample_da(out, a, log_space))


def _gamma(name: str, key: Any, a: Any, shape: Any, dtype: Any, log_space: bool) -> Any:
    key = check_key(name, key)
    dt = float_dtype(name, dtype)
    a = as_param(a, dt, key)
    shape = _shape_or_params(name, shape, a)
    if tuple(get_aval(a).shape) != shape:
        a = _sh.broadcast_to(a, shape)
    return _gamma_p(key, a, log_space)


@with_out_sharding
@consumes
def gamma(key: Any, a: Any, shape: Any = None, dtype: Any = None) -> Array:
    """Gamma(``a``, 1) samples (shape defaults to ``a``'s); differentiable in ``a``.

    Example:
        >>> from funcgrad import random
        >>> x = random.gamma(random.PRNGKey(0), 2.0, (3,))
        >>> x.shape, bool((x > 0).all())
        ((3,), True)
    """
    return _gamma("gamma", key, a, shape, dtype, False)


@with_out_sharding
@consumes
def loggamma(key: Any, a: Any, shape: Any = None, dtype: Any = None) -> Array:
    """``log`` of Gamma(``a``) samples, computed in log space (accurate for tiny ``a``).

    Example:
        >>> from funcgrad import random
        >>> float(random.loggamma(random.PRNGKey(0), 1e-3)) < 0
        True
    """
    return _gamma("loggamma", key, a, shape, dtype, True)


@with_out_sharding
@consumes
def chisquare(key: Any, df: Any, shape: Any = None, dtype: Any = None) -> Array:
    """Chi-square samples with ``df`` degrees of freedom (``2 Gamma(df / 2)``).

    Example:
        >>> from funcgrad import random
        >>> random.chisquare(random.PRNGKey(0), 3.0, (2,)).shape
        (2,)
    """
    key = check_key("chisquare", key)
    dt = float_dtype("chisquare", dtype)
    df = as_param(df, dt, key)
    shape = _shape_or_params("chisquare", shape, df)
    return _ew.mul(dt.type(2), gamma(key, _ew.mul(df, dt.type(0.5)), shape, dt))


@with_out_sharding
@consumes
def beta(key: Any, a: Any, b: Any, shape: Any = None, dtype: Any = None) -> Array:
    """Beta(``a``, ``b``) samples, from two log-gamma draws; differentiable in ``a``, ``b``.

    Example:
        >>> from funcgrad import random
        >>> x = random.beta(random.PRNGKey(0), 2.0, 3.0, (4,))
        >>> bool(((0 <= x) & (x <= 1)).all())
        True
    """
    key = check_key("beta", key)
    dt = float_dtype("beta", dtype)
    a, b = as_param(a, dt, key), as_param(b, dt, key)
    shape = _shape_or_params("beta", shape, a, b)
    key_a, key_b = split2(key)
    la = loggamma(key_a, _sh.broadcast_to(a, shape), shape, dt)
    lb = loggamma(key_b, _sh.broadcast_to(b, shape), shape, dt)
    m = _ew.max(la, lb)
    # both log-draws -inf (a = b = 0): no shift, and 0 / 0 is JAX's nan, without NumPy's warnings
    m = fnp.where(fnp.isfinite(m), m, dt.type(0))
    ga, gb = _ew.exp(_ew.sub(la, m)), _ew.exp(_ew.sub(lb, m))
    return _quiet.div(ga, _ew.add(ga, gb))


@with_out_sharding
@consumes
def dirichlet(key: Any, alpha: Any, shape: Any = None, dtype: Any = None) -> Array:
    """Dirichlet(``alpha``) samples over the last axis of ``alpha``; shape ``(*shape, k)``.

    Normalised log-gamma draws (stable for small ``alpha``); differentiable in ``alpha``.

    Example:
        >>> import numpy as np
        >>> from funcgrad import random
        >>> x = random.dirichlet(random.PRNGKey(0), np.array([1.0, 2.0, 3.0]), (2,))
        >>> x.shape, bool(np.allclose(x.sum(-1), 1))
        ((2, 3), True)
    """
    key = check_key("dirichlet", key)
    dt = float_dtype("dirichlet", dtype)
    alpha = as_param(alpha, dt, key)
    ash = tuple(get_aval(alpha).shape)
    if len(ash) < 1:
        raise ValueError(f"dirichlet: alpha must have at least one dimension, got shape {ash}")
    if shape is None:
        shape = ash[:-1]
    else:

        shape = shape_arg("dirichlet", shape)
        check_shape("dirichlet", shape, ash[:-1])
    full = (*shape, ash[-1])
    lg = loggamma(key, _sh.broadcast_to(alpha, full), full, dt)
    m = _ew.stop_gradient(fnp.max(lg, axis=-1, keepdims=True))
    m = fnp.where(fnp.isfinite(m), m, dt.type(0))  # all alpha 0: nan, as JAX, without warnings
    e = _ew.exp(_ew.sub(lg, m))
    return _quiet.div(e, fnp.sum(e, axis=-1, keepdims=True))


# ---------------------------------------------------------------------------------------------
# Poisson: Knuth's product of uniforms below 10, Hormann's transformed rejection above


def _poisson_knuth(key: Any, lam: Any, shape: tuple[int, ...], dt: numpy.dtype) -> Any:
    f32 = numpy.dtype(numpy.float32)

    def body(carry: Any) -> Any:
        k, rng, log_prod = carry
        rng, sub = split2(rng)
        k = _ew.select_n(_ew.gt(log_prod, _ew.neg(lam)), k, _ew.add(k, dt.type(1)))
        u = _uniform(sub, shape, f32, 0.0, 1.0)
        return k, rng, _ew.add(log_prod, _ew.log(u))

    def cond(carry: Any) -> Any:
        return fnp.any(_ew.gt(carry[2], _ew.neg(lam)))

    k0 = _ew.convert_element_type(fnp.zeros_like(lam), dt)
    lp0 = fnp.zeros_like(lam)
    k = while_loop(cond, body, (k0, key, lp0))[0]
    return _ew.sub(k, dt.type(1))


def _poisson_rejection(key: Any, lam: Any, shape: tuple[int, ...], dt: numpy.dtype) -> Any:
    f = get_aval(lam).dtype.type
    log_lam = _ew.log(lam)
    b = _ew.add(f(0.931), _ew.mul(f(2.53), _ew.sqrt(lam)))
    a = _ew.add(f(-0.059), _ew.mul(f(0.02483), b))
    inv_alpha = _ew.add(f(1.1239), _ew.div(f(1.1328), _ew.sub(b, f(3.4))))
    v_r = _ew.sub(f(0.9277), _ew.div(f(3.6224), _ew.sub(b, f(2))))

    def body(carry: Any) -> Any:
        k_out, accepted, rng = carry
        rng, k0, k1 = split2(rng, 3)
        u = _ew.sub(_uniform(k0, shape, get_aval(lam).dtype, 0.0, 1.0), f(0.5))
        v = _uniform(k1, shape, get_aval(lam).dtype, 0.0, 1.0)
        us = _ew.sub(f(0.5), _ew.abs(u))
        k = _ew.floor(_ew.add(_ew.add(_ew.mul(_ew.add(_ew.div(_ew.mul(f(2), a), us), b), u),
                                      lam), f(0.43)))
        s = _ew.log(_ew.div(_ew.mul(v, inv_alpha), _ew.add(_ew.div(a, _ew.mul(us, us)), b)))
        t = _ew.sub(_ew.add(_ew.neg(lam), _ew.mul(k, log_lam)), lgamma(_ew.add(k, f(1))))
        accept1 = _ew.and_(_ew.ge(us, f(0.07)), _ew.le(v, v_r))
        reject = _ew.or_(_ew.lt(k, f(0)), _ew.and_(_ew.lt(us, f(0.013)), _ew.gt(v, us)))
        accept = _ew.or_(accept1, _ew.and_(_ew.not_(reject), _ew.le(s, t)))
        k_out = _ew.select_n(accept, k_out, k)
        return k_out, _ew.or_(accepted, accept), rng

    def cond(carry: Any) -> Any:
        return fnp.any(_ew.not_(carry[1]))

    k_init = _ew.sub(fnp.zeros_like(lam), f(1))
    acc = _ew.lt(lam, f(-numpy.inf))  # all False, on lam's device
    k = while_loop(cond, body, (k_init, acc, key))[0]
    # saturating, as JAX's convert: a count past dt's range is its maximum (NumPy's cast
    # would wrap to the minimum)
    return lax.convert_element_type(k, dt)


@with_out_sharding
@consumes
def poisson(key: Any, lam: Any, shape: Any = None, dtype: Any = None) -> Array:
    """Poisson(``lam``) counts (default dtype ``int64``; ``lam`` computed in float32, as JAX).

    A negative or NaN rate gives ``-1`` (JAX's answer), under ``jit`` as eagerly.

    Example:
        >>> from funcgrad import random
        >>> x = random.poisson(random.PRNGKey(0), 3.0, (1000,))
        >>> 2.8 < float(x.mean()) < 3.2
        True
    """
    key = check_key("poisson", key)
    dt = numpy.dtype(numpy.int64) if dtype is None else numpy.dtype(dtype)
    if dt.kind not in "iu":
        raise ValueError(f"dtype argument to `poisson` must be an int dtype, got {dt}")
    f32 = numpy.dtype(numpy.float32)
    lam = as_param(lam, f32, key)
    shape = _shape_or_params("poisson", shape, lam)
    lam = _ew.stop_gradient(_sh.broadcast_to(lam, shape))

    # A negative (or NaN) rate gives -1, as JAX's, eager and under jit alike: Knuth's loop
    # stops before its first step (the product of no uniforms already lies below exp(-lam)).
    use_knuth = _ew.or_(_ew.ne(lam, lam), _ew.lt(lam, f32.type(10)))
    lam_knuth = _ew.select_n(use_knuth, fnp.zeros_like(lam), lam)
    lam_rej = _ew.select_n(use_knuth, lam, _ew.add(fnp.zeros_like(lam), f32.type(1e5)))
    result = _ew.select_n(use_knuth, _poisson_rejection(key, lam_rej, shape, dt),
                          _poisson_knuth(key, lam_knuth, shape, dt))
    return _ew.select_n(_ew.eq(lam, f32.type(0)), result, fnp.zeros_like(result))
