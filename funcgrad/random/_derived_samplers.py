"""More of ``jax.random``'s samplers, each a transform of the basic ones in JAX's
construction (same key splits, same formulas): ``t``, ``f``, ``pareto``, ``rayleigh``,
``maxwell``, ``double_sided_maxwell``, ``weibull_min``, ``geometric``, ``triangular``,
``wald``, ``generalized_normal``, ``ball``, ``clone``, ``binomial`` and ``multinomial``.

They are written with differentiable funcgrad operations, so draws differentiate in their
float parameters by reparameterisation (``t`` and ``f`` through ``gamma``'s implicit
derivative), and work under ``jit`` and ``vmap``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy

import funcgrad.numpy as fnp
import funcgrad.ops.elementwise as _ew
import funcgrad.ops.shape as _sh
from funcgrad import lax
from funcgrad.avals import get_aval
from funcgrad.backend import operator_index
from funcgrad.numpy._creation import with_out_sharding
from funcgrad.ops.control_flow import while_loop
from funcgrad.random._core import check_key, shape_arg, split2
from funcgrad.random._gamma import chisquare, gamma
from funcgrad.random._keys import IMPLS, PRNGKeyArray, default_impl
from funcgrad.random._reuse import consumes
from funcgrad.random._samplers import (
    _SCALARS,
    _exponential,
    _normal_real,
    _shape_or_params,
    _uniform,
    as_param,
    float_dtype,
    rademacher,
)
from funcgrad.scipy import _quiet

__all__ = [
    "t", "f", "pareto", "rayleigh", "maxwell", "double_sided_maxwell", "weibull_min",
    "geometric", "triangular", "wald", "generalized_normal", "ball", "clone", "binomial", "multinomial",
]

Array = Any


def _setup(name: str, key: Any, dtype: Any, shape: Any, *params: Any) -> tuple:
    """(key, dtype, shape, params as arrays of dtype): shape defaults to the parameters'
    broadcast shape and must be broadcast-compatible with them, as in JAX."""
    key = check_key(name, key)
    dt = float_dtype(name, dtype)
    ps = [as_param(p, dt, key) for p in params]
    return key, dt, _shape_or_params(name, shape, *ps), ps


def _inexact_work_dtype(*params: Any) -> numpy.dtype:
    """JAX's ``promote_dtypes_inexact`` of the parameters: the promotion of the arrays'
    and NumPy scalars' float dtypes (integers and Python numbers count as float64,
    funcgrad's default)."""
    out = None
    for x in params:
        if isinstance(x, numpy.generic):
            d = x.dtype
        elif isinstance(x, _SCALARS + (list, tuple)):
            d = None
        else:
            d = get_aval(x).dtype
        d = d if d is not None and d.kind == "f" else numpy.dtype(numpy.float64)
        out = d if out is None else numpy.promote_types(out, d)
    return out


@with_out_sharding
@consumes
def t(key: Any, df: Any, shape: Any = None, dtype: Any = None) -> Array:
    """Student's t samples with ``df`` degrees of freedom: ``n * sqrt(df/2 / g)`` with
    ``n ~ N(0, 1)`` and ``g ~ Gamma(df / 2)`` (JAX's construction).

    Example:
        >>> from funcgrad import random
        >>> random.t(random.PRNGKey(0), 3.0, (2, 3)).shape
        (2, 3)
    """
    key, dt, shape, (df,) = _setup("t", key, dtype, shape, df)
    key_n, key_g = split2(key)
    n = _normal_real(key_n, shape, dt)
    half_df = _ew.div(df, dt.type(2))
    g = gamma(key_g, _sh.broadcast_to(half_df, shape), shape, dt)
    return _ew.mul(n, fnp.sqrt(_quiet.div(half_df, g)))


@with_out_sharding
@consumes
def f(key: Any, dfnum: Any, dfden: Any, shape: Any = None, dtype: Any = None) -> Array:
    """F-distribution samples: ``(chi2(dfnum) / dfnum) / (chi2(dfden) / dfden)``.

    Example:
        >>> from funcgrad import random
        >>> bool((random.f(random.PRNGKey(0), 2.0, 5.0, (4,)) > 0).all())
        True
    """
    key, dt, shape, (dfnum, dfden) = _setup("f", key, dtype, shape, dfnum, dfden)
    key_dfd, key_dfn = split2(key)
    num = _quiet.div(chisquare(key_dfn, _sh.broadcast_to(dfnum, shape), shape, dt), dfnum)
    den = _quiet.div(chisquare(key_dfd, _sh.broadcast_to(dfden, shape), shape, dt), dfden)
    return _ew.div(num, den)


@with_out_sharding
@consumes
def pareto(key: Any, b: Any, shape: Any = None, dtype: Any = None) -> Array:
    """Pareto samples with shape parameter ``b`` (support ``[1, inf)``): ``exp(e / b)``,
    ``e ~ Exp(1)``.

    Example:
        >>> from funcgrad import random
        >>> bool((random.pareto(random.PRNGKey(0), 3.0, (4,)) >= 1).all())
        True
    """
    key, dt, shape, (b,) = _setup("pareto", key, dtype, shape, b)
    return fnp.exp(_quiet.div(_exponential(key, shape, dt), b))


@with_out_sharding
@consumes
def rayleigh(key: Any, scale: Any, shape: Any = None, dtype: Any = None) -> Array:
    """Rayleigh samples: ``scale * sqrt(-2 log u)``, ``u ~ U[0, 1)``.

    Example:
        >>> from funcgrad import random
        >>> random.rayleigh(random.PRNGKey(0), 2.0, (3,)).shape
        (3,)
    """
    key, dt, shape, (scale,) = _setup("rayleigh", key, dtype, shape, scale)
    u = _uniform(key, shape, dt, 0.0, 1.0)
    return _ew.mul(scale, fnp.sqrt(_ew.mul(_ew.log(u), dt.type(-2))))


@with_out_sharding
@consumes
def maxwell(key: Any, shape: int | Sequence[int] = (), dtype: Any = None) -> Array:
    """Maxwell (one-sided) samples: the length of a standard normal 3-vector.

    Example:
        >>> from funcgrad import random
        >>> random.maxwell(random.PRNGKey(0), (2,)).shape
        (2,)
    """
    key = check_key("maxwell", key)
    dt = float_dtype("maxwell", dtype)
    shape = shape_arg("maxwell", shape)
    return fnp.linalg.norm(_normal_real(key, shape + (3,), dt), axis=-1)


@consumes
def double_sided_maxwell(key: Any, loc: Any, scale: Any, shape: Sequence[int] = (),
                         dtype: Any = None) -> Array:
    """Double-sided Maxwell samples: a Maxwell draw with a random sign, ``* scale + loc``.

    As in JAX, the result has shape ``shape + broadcast(loc, scale).shape``.

    Example:
        >>> from funcgrad import random
        >>> random.double_sided_maxwell(random.PRNGKey(0), 0.0, 1.0, (4,)).shape
        (4,)
    """
    key = check_key("double_sided_maxwell", key)
    dt = float_dtype("double_sided_maxwell", dtype)
    loc, scale = as_param(loc, dt, key), as_param(scale, dt, key)
    params = tuple(numpy.broadcast_shapes(get_aval(loc).shape, get_aval(scale).shape))
    shape = shape_arg("double_sided_maxwell", shape) + params
    key_m, key_r = split2(key)
    m = maxwell(key_m, shape, dt)
    sign = rademacher(key_r, shape, dt)
    return _ew.add(_ew.mul(_ew.mul(sign, m), scale), loc)


@consumes
def weibull_min(key: Any, scale: Any, concentration: Any, shape: Sequence[int] = (),
                dtype: Any = None) -> Array:
    """Weibull samples by the inverse CDF: ``scale * (-log1p(-u)) ** (1 / concentration)``.

    Example:
        >>> from funcgrad import random
        >>> random.weibull_min(random.PRNGKey(0), 1.0, 2.0, (3,)).shape
        (3,)
    """
    key = check_key("weibull_min", key)
    dt = float_dtype("weibull_min", dtype)
    scale, conc = as_param(scale, dt, key), as_param(concentration, dt, key)
    shape = shape_arg("weibull_min", shape)
    u = _uniform(key, shape, dt, 0.0, 1.0)
    return _ew.mul(fnp.power(_ew.neg(_ew.log1p(_ew.neg(u))), _quiet.reciprocal(conc)), scale)


@with_out_sharding
@consumes
def geometric(key: Any, p: Any, shape: Any = None, dtype: Any = None) -> Array:
    """Geometric samples (the number of Bernoulli(``p``) trials up to the first success,
    support ``1, 2, ...``): ``floor(log u / log1p(-p)) + 1``; integer ``dtype`` (int64).

    Example:
        >>> from funcgrad import random
        >>> bool((random.geometric(random.PRNGKey(0), 0.3, (5,)) >= 1).all())
        True
    """
    key = check_key("geometric", key)
    odt = numpy.dtype(numpy.int64) if dtype is None else numpy.dtype(dtype)
    if odt.kind not in "iu":
        raise ValueError(f"dtype argument to `geometric` must be an int dtype, got {odt}")
    p = as_param(p, numpy.dtype(numpy.float64), key)
    shape = _shape_or_params("geometric", shape, p)
    u = _uniform(key, shape, numpy.dtype(numpy.float64), 0.0, 1.0)
    g = _ew.add(_ew.floor(_quiet.div(_quiet.log(u), _quiet.log1p(_ew.neg(p)))), 1.0)
    # saturating, as JAX's convert: p -> 0 waits past dt's range, its maximum (NumPy's
    # cast would wrap to the minimum)
    return lax.convert_element_type(_ew.stop_gradient(g), odt)


@with_out_sharding
@consumes
def triangular(key: Any, left: Any, mode: Any, right: Any, shape: Any = None,
               dtype: Any = None) -> Array:
    """Triangular samples on ``[left, right]`` with peak at ``mode``, by the inverse CDF.

    Example:
        >>> from funcgrad import random
        >>> x = random.triangular(random.PRNGKey(0), 0.0, 0.5, 2.0, (4,))
        >>> bool(((0 <= x) & (x <= 2)).all())
        True
    """
    key, dt, shape, (lo, mo, hi) = _setup("triangular", key, dtype, shape, left, mode, right)
    fc = _quiet.div(_ew.sub(mo, lo), _ew.sub(hi, lo))
    u = _uniform(key, shape, dt, 0.0, 1.0)
    width = _ew.sub(hi, lo)
    lv = _ew.add(lo, fnp.sqrt(_ew.mul(_ew.mul(u, width), _ew.sub(mo, lo))))
    rv = _ew.sub(hi, fnp.sqrt(_ew.mul(_ew.mul(_ew.sub(dt.type(1), u), width), _ew.sub(hi, mo))))
    return fnp.where(_ew.lt(u, fc), lv, rv)


@with_out_sharding
@consumes
def wald(key: Any, mean: Any, shape: Any = None, dtype: Any = None) -> Array:
    """Wald (inverse Gaussian, unit shape) samples with the given ``mean`` (Michael, Schucany
    and Haas's method, as JAX).

    Example:
        >>> from funcgrad import random
        >>> bool((random.wald(random.PRNGKey(0), 2.0, (4,)) > 0).all())
        True
    """
    key, dt, shape, (mean,) = _setup("wald", key, dtype, shape, mean)
    k1, k2 = split2(key)
    v = _normal_real(k1, shape, dt)
    z = _uniform(k2, shape, dt, 0.0, 1.0)
    y = _ew.mul(v, v)
    mean_sq = _ew.mul(mean, mean)
    root = fnp.sqrt(_ew.add(_ew.mul(_ew.mul(dt.type(4), mean), y),
                            _ew.mul(mean_sq, _ew.mul(y, y))))
    x = _ew.sub(_ew.add(mean, _ew.div(_ew.mul(mean_sq, y), dt.type(2))),
                _ew.div(_ew.mul(mean, root), dt.type(2)))
    return fnp.where(_ew.le(z, _quiet.div(mean, _ew.add(mean, x))), x, _quiet.div(mean_sq, x))


@with_out_sharding
@consumes
def generalized_normal(key: Any, p: Any, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """Generalized normal samples, density ``∝ exp(-|x| ** p)``: ``r * g ** (1 / p)`` with
    ``g ~ Gamma(1 / p)`` and a random sign ``r``.

    Example:
        >>> from funcgrad import random
        >>> random.generalized_normal(random.PRNGKey(0), 1.5, (3,)).shape
        (3,)
    """
    key = check_key("generalized_normal", key)
    dt = float_dtype("generalized_normal", dtype)
    p = as_param(p, dt, key)
    shape = shape_arg("generalized_normal", shape)
    k1, k2 = split2(key)
    inv_p = _quiet.reciprocal(p)
    g = gamma(k1, _sh.broadcast_to(inv_p, shape), shape, dt)
    r = rademacher(k2, shape, dt)
    return _ew.mul(r, fnp.power(g, inv_p))


@with_out_sharding
@consumes
def ball(key: Any, d: int, p: float = 2, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """Points uniform in the unit ``p``-norm ball of dimension ``d``; shape ``(*shape, d)``.

    Example:
        >>> import funcgrad.numpy as fnp
        >>> from funcgrad import random
        >>> x = random.ball(random.PRNGKey(0), 3, shape=(5,))
        >>> x.shape, bool((fnp.linalg.norm(x, axis=-1) <= 1).all())
        ((5, 3), True)
    """
    key = check_key("ball", key)
    dt = float_dtype("ball", dtype)
    d = operator_index(d)
    if d < 0:  # d = 0 gives empty points, as JAX's
        raise ValueError(f"ball: the dimension d must be a non-negative integer, got {d}")
    shape = shape_arg("ball", shape)
    k1, k2 = split2(key)
    g = generalized_normal(k1, p, shape + (d,), dt)
    e = _exponential(k2, shape, dt)
    pp = dt.type(p)
    r = fnp.power(_ew.add(fnp.sum(fnp.power(fnp.abs(g), pp), axis=-1), e), dt.type(1) / pp)
    return _ew.div(g, fnp.expand_dims(r, -1))


def clone(key: Any) -> Array:
    """A copy of ``key`` that the key-reuse check counts as a new key (JAX's ``clone``: the
    same bits, so the same draws).

    Example:
        >>> from funcgrad import random
        >>> k = random.PRNGKey(0)
        >>> bool((random.clone(k) == k).all())
        True
    """
    # any shape of keys, as JAX's (its clone is elementwise)
    if isinstance(key, PRNGKeyArray):
        return key._rewrap(_clone_data(key._data))
    if isinstance(key, list | tuple):
        check_key("clone", key)  # names what is wrong
    aval = get_aval(key)
    if aval.dtype != numpy.uint32 or aval.shape[-1:] != (IMPLS[default_impl()][1],):
        check_key("clone", key)  # names what is wrong (dtype or shape)
    return _clone_data(key)


def _clone_data(data: Any) -> Any:
    return fnp.copy(data) if not hasattr(data, "aval") else _ew.add(data, numpy.uint32(0))


# ---------------------------------------------------------------------------------------------
# binomial: JAX's algorithm (TensorFlow's): geometric waiting times while n min(p, 1 - p) <= 10,
# else BTRS transformed rejection (Hormann 1993), O(1) expected work per draw for every n

_INVERSION_MEAN = 10.0  # up to this n * min(p, 1 - p), count geometric waiting times

# log(k!) - Stirling's formula's value for k = 0..9; beyond, its series (TensorFlow's table)
_STIRLING_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                  0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                  0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                  0.00833056343336287)


def _stirling_approx_tail(k: Any, dt: numpy.dtype, like: Any) -> Any:
    """``log(k!) - (k + 1/2) log(k + 1) + (k + 1) - log(sqrt(2 pi))``: the table for
    ``k <= 9``, the asymptotic series above. JAX 0.10 evaluates the series at ``k`` clamped to
    9 (a constant for every larger ``k``, which biases BTRS's acceptance bound slightly); this
    is TensorFlow's (and the paper's) formula at ``k`` itself."""
    table = as_param(list(_STIRLING_TAIL), dt, like)
    small = _ew.le(k, dt.type(9))
    idx = _ew.convert_element_type(fnp.clip(k, dt.type(0), dt.type(9)), numpy.dtype(numpy.int32))
    kp1 = _ew.add(fnp.where(small, dt.type(0), k), dt.type(1))
    kp1sq = _ew.mul(kp1, kp1)
    approx = _ew.div(
        _ew.sub(dt.type(1.0 / 12),
                _ew.div(_ew.sub(dt.type(1.0 / 360), _ew.div(dt.type(1.0 / 1260), kp1sq)), kp1sq)),
        kp1)
    return fnp.where(small, fnp.take(table, idx), approx)


def _binomial_inversion(key: Any, n: Any, q: Any, shape: tuple[int, ...],
                        dt: numpy.dtype) -> Any:
    """Binomial(n, q) by the second waiting-time method: the number of Geometric(q) waiting
    times whose sum stays within ``n`` (the loop runs about ``n q + 1`` times)."""
    log1mq = _ew.log1p(_ew.neg(q))

    def cond(carry: Any) -> Any:
        return fnp.any(_ew.le(carry[1], n))

    def body(carry: Any) -> Any:
        count, total, rng = carry
        sub, rng = split2(rng)
        count = fnp.where(_ew.le(total, n), _ew.add(count, dt.type(1)), count)
        u = _uniform(sub, shape, dt, 0.0, 1.0)
        wait = _ew.ceil(_ew.div(_ew.log(u), log1mq))
        return count, _ew.add(total, wait), rng

    zero = fnp.zeros_like(q)
    count = while_loop(cond, body, (zero, zero, key))[0]
    return _ew.sub(count, dt.type(1))


def _btrs(key: Any, n: Any, q: Any, shape: tuple[int, ...], dt: numpy.dtype) -> Any:
    """Binomial(n, q) for ``n q > 10``, ``q <= 1/2``, by Hormann's BTRS: a transformed
    uniform proposes ``k``; a squeeze accepts most proposals at once, the rest are checked
    against the exact log-density ratio (Stirling tails). About 1.15 rounds per draw."""
    c = dt.type
    one = c(1)
    stddev = fnp.sqrt(_ew.mul(_ew.mul(n, q), _ew.sub(one, q)))
    b = _ew.add(c(1.15), _ew.mul(c(2.53), stddev))
    a = _ew.add(_ew.add(c(-0.0873), _ew.mul(c(0.0248), b)), _ew.mul(c(0.01), q))
    cc = _ew.add(_ew.mul(n, q), c(0.5))
    v_r = _ew.sub(c(0.92), _ew.div(c(4.2), b))
    r = _ew.div(q, _ew.sub(one, q))
    alpha = _ew.mul(_ew.add(c(2.83), _ew.div(c(5.1), b)), stddev)
    m = fnp.floor(_ew.mul(_ew.add(n, one), q))
    n1 = _ew.add(n, one)
    # the terms of the log bound that depend on the mode m only
    ub_m = _ew.add(
        _ew.add(_ew.mul(_ew.add(m, c(0.5)),
                        _ew.log(_ew.div(_ew.add(m, one), _ew.mul(r, _ew.add(_ew.sub(n, m), one))))),
                _stirling_approx_tail(m, dt, key)),
        _stirling_approx_tail(_ew.sub(n, m), dt, key))
    n_m1 = _ew.add(_ew.sub(n, m), one)

    def cond(carry: Any) -> Any:
        return fnp.any(_ew.not_(carry[1]))

    def body(carry: Any) -> Any:
        k_out, accepted, rng = carry
        rng, sub0, sub1 = split2(rng, 3)
        u = _ew.sub(_uniform(sub0, shape, dt, 0.0, 1.0), c(0.5))
        v = _uniform(sub1, shape, dt, 0.0, 1.0)
        us = _ew.sub(c(0.5), fnp.abs(u))
        accept1 = _ew.and_(_ew.ge(us, c(0.07)), _ew.le(v, v_r))
        k = fnp.floor(_ew.add(_ew.mul(_ew.add(_ew.div(_ew.mul(c(2), a), us), b), u), cc))
        reject = _ew.or_(_ew.lt(k, c(0)), _ew.gt(k, n))
        v = _ew.log(_ew.div(_ew.mul(v, alpha), _ew.add(_ew.div(a, _ew.mul(us, us)), b)))
        # rejected proposals outside [0, n] would only feed logs of negatives (no warnings)
        k_in = fnp.clip(k, c(0), n)
        n_k1 = _ew.add(_ew.sub(n, k_in), one)
        ub = _ew.sub(
            _ew.sub(
                _ew.add(_ew.add(_ew.mul(n1, _ew.log(_ew.div(n_m1, n_k1))),
                                _ew.mul(_ew.add(k_in, c(0.5)),
                                        _ew.log(_ew.div(_ew.mul(r, n_k1), _ew.add(k_in, one))))),
                        ub_m),
                _stirling_approx_tail(k_in, dt, key)),
            _stirling_approx_tail(_ew.sub(n, k_in), dt, key))
        accept = _ew.or_(accept1, _ew.and_(_ew.not_(reject), _ew.le(v, ub)))
        return fnp.where(accept, k, k_out), _ew.or_(accepted, accept), rng

    start = (fnp.full_like(q, -1), fnp.zeros_like(q, dtype=bool), key)
    return while_loop(cond, body, start)[0]


@consumes
def binomial(key: Any, n: Any, p: Any, shape: Any = None, dtype: Any = None) -> Array:
    """Binomial(``n``, ``p``) counts, as floats of ``dtype`` (float64), as ``jax.random``.

    JAX's algorithm with the same keys: with ``q = min(p, 1 - p)``, geometric waiting times
    count the successes while ``n q <= 10``, else BTRS rejection sampling (about 1.15 rounds
    per draw, whatever ``n``); draws for ``p > 1/2`` are ``n`` minus those for ``q``.
    Non-integer ``n`` is floored (NumPy's rule); ``n < 0``, NaN or ``p`` outside ``[0, 1]``
    give NaN, and ``n = inf`` gives inf, as JAX (where JAX never returns for ``n = inf`` with
    ``p`` 0 or 1, this gives inf too).

    Example:
        >>> from funcgrad import random
        >>> x = random.binomial(random.PRNGKey(0), 20, 0.3, (2000,))
        >>> 5.7 < float(x.mean()) < 6.3
        True
    """
    out_dt = float_dtype("binomial", dtype)
    # JAX computes in p's inexact dtype (a Python float: float64) and casts the counts to
    # dtype at the end: float32 counts from a float64 p are the float64 draws
    key, dt, shape, (n, p) = _setup("binomial", key, _inexact_work_dtype(p), shape, n, p)
    count = _ew.stop_gradient(_sh.broadcast_to(n, shape))
    prob = _ew.stop_gradient(_sh.broadcast_to(p, shape))
    one, ten = dt.type(1), dt.type(_INVERSION_MEAN)
    p_lt_half = _ew.lt(prob, dt.type(0.5))
    q = fnp.where(p_lt_half, prob, _ew.sub(one, prob))
    count_nan_or_neg = _ew.or_(_ew.ne(count, count), _ew.lt(count, dt.type(0)))
    count_inf = fnp.isinf(count)
    q_bad = _ew.or_(_ew.ne(q, q), _ew.lt(q, dt.type(0)))
    q = fnp.where(q_bad, dt.type(0.01), q)
    # inf counts draw nothing (their draw is inf): JAX sends them to BTRS, which never
    # accepts when q is 0
    count = fnp.where(count_inf, dt.type(0), fnp.floor(count))
    use_inversion = _ew.or_(count_nan_or_neg, _ew.le(_ew.mul(count, q), ten))
    # q = 0 draws 0 after one round (JAX's geometric wait is log(u) / -0.0 = inf); here
    # without dividing by zero
    q_zero = _ew.eq(q, dt.type(0))
    count_inv = fnp.where(_ew.and_(use_inversion, _ew.not_(q_zero)), count, dt.type(0))
    q_inv = fnp.where(q_zero, dt.type(0.5), q)
    count_btrs = fnp.where(use_inversion, dt.type(1e4), count)
    q_btrs = fnp.where(use_inversion, dt.type(0.5), q)
    samples = fnp.where(use_inversion, _binomial_inversion(key, count_inv, q_inv, shape, dt),
                        _btrs(key, count_btrs, q_btrs, shape, dt))
    invalid = _ew.or_(q_bad, count_nan_or_neg)
    samples = fnp.where(invalid, dt.type(numpy.nan), samples)
    samples = fnp.where(_ew.and_(count_inf, _ew.not_(invalid)), dt.type(numpy.inf), samples)
    keep = _ew.or_(_ew.or_(p_lt_half, count_nan_or_neg), _ew.or_(q_bad, count_inf))
    out = fnp.where(keep, samples, _ew.sub(count, samples))
    return out if out_dt == dt else _ew.convert_element_type(out, out_dt)


@consumes
def multinomial(key: Any, n: Any, p: Any, *, shape: Any = None, dtype: Any = None,
                unroll: Any = 1) -> Array:
    """Multinomial counts of ``n`` trials over the ``k`` categories of ``p``'s last axis (as
    floats of ``dtype``, float64, as JAX). ``shape`` is the whole result shape, ending with
    ``k`` (what JAX 0.10 does; its docstring calls it the prefix); by default
    ``(*broadcast(n, p[..., 0]).shape, k)``.

    As JAX: category ``i`` takes Binomial(remaining trials, ``p_i / sum(p[i:])``) of the
    trials left by the ones before it (one key each). ``unroll`` is accepted (a loop-unrolling
    hint in JAX).

    Example:
        >>> import numpy as np
        >>> from funcgrad import random
        >>> c = random.multinomial(random.PRNGKey(0), 10, np.array([0.2, 0.3, 0.5]))
        >>> c.shape, float(c.sum())
        ((3,), 10.0)
    """
    del unroll
    key = check_key("multinomial", key)
    out_dt = float_dtype("multinomial", dtype)
    # JAX draws in the inexact promotion of n and p and casts the counts to dtype at the end
    dt = _inexact_work_dtype(n, p)
    n, p = as_param(n, dt, key), as_param(p, dt, key)
    pa = get_aval(p)
    if pa.ndim < 1:
        raise ValueError("multinomial: p must have at least one dimension (the categories)")
    k = pa.shape[-1]
    batch = tuple(numpy.broadcast_shapes(get_aval(n).shape, pa.shape[:-1]))
    if shape is None:
        shape = batch
    else:
        full = shape_arg("multinomial", shape)
        shape = full[:-1]
        try:
            ok = bool(full) and full[-1] == k and tuple(
                numpy.broadcast_shapes(shape, batch)) == shape
        except ValueError:
            ok = False
        if not ok:
            raise ValueError(f"multinomial: shape {full} must end with the {k} categories and "
                             f"be broadcast-compatible with n {get_aval(n).shape} and p "
                             f"{pa.shape}")
    p = _ew.stop_gradient(p)
    remaining = fnp.flip(fnp.cumsum(fnp.flip(p, -1), axis=-1), -1)
    ratios = _ew.div(p, fnp.where(_ew.eq(remaining, dt.type(0)), dt.type(1), remaining))
    keys = split2(key, k)
    left = _sh.broadcast_to(fnp.floor(_ew.stop_gradient(n)), shape)
    counts = []
    for i in range(k):
        ratio = _sh.broadcast_to(fnp.clip(ratios[..., i], dt.type(0), dt.type(1)), shape)
        c = binomial(keys[i], left, ratio, shape, dt)
        counts.append(c)
        left = _ew.sub(left, c)
    out = fnp.stack(counts, axis=-1)
    return out if out_dt == dt else _ew.convert_element_type(out, out_dt)
