"""More of ``jax.random``'s samplers, each a transform of the basic ones in JAX's
construction (same key splits, same formulas): ``t``, ``f``, ``pareto``, ``rayleigh``,
``maxwell``, ``double_sided_maxwell``, ``weibull_min``, ``geometric``, ``triangular``,
``wald``, ``generalized_normal``, ``ball``, ``clone``, ``binomial`` and ``multinomial``.

They are written with differentiable funcgrad operations, so draws differentiate in their
float parameters by reparameterisation (``t`` and ``f`` through ``gamma``'s implicit
derivative), and work under ``jit`` and ``vmap``.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy

import funcgrad.numpy as fnp
import funcgrad.ops.elementwise as _ew
import funcgrad.ops.shape as _sh
from funcgrad.avals import get_aval
from funcgrad.ops.control_flow import while_loop
from funcgrad.random._core import check_key, shape_arg, split2
from funcgrad.random._gamma import beta, chisquare, gamma
from funcgrad.random._keys import PRNGKeyArray
from funcgrad.random._reuse import consumes
from funcgrad.random._samplers import (
    _exponential,
    _normal_real,
    _shape_or_params,
    _uniform,
    as_param,
    float_dtype,
    rademacher,
)

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
    return _ew.mul(n, fnp.sqrt(_ew.div(half_df, g)))


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
    num = _ew.div(chisquare(key_dfn, _sh.broadcast_to(dfnum, shape), shape, dt), dfnum)
    den = _ew.div(chisquare(key_dfd, _sh.broadcast_to(dfden, shape), shape, dt), dfden)
    return _ew.div(num, den)


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
    return fnp.exp(_ew.div(_exponential(key, shape, dt), b))


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
    return _ew.mul(fnp.power(_ew.neg(_ew.log1p(_ew.neg(u))), _ew.div(dt.type(1), conc)), scale)


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
        raise TypeError(f"geometric: dtype must be an integer type, got {odt}")
    p = as_param(p, numpy.dtype(numpy.float64), key)
    shape = _shape_or_params("geometric", shape, p)
    u = _uniform(key, shape, numpy.dtype(numpy.float64), 0.0, 1.0)
    g = _ew.add(_ew.floor(_ew.div(_ew.log(u), _ew.log1p(_ew.neg(p)))), 1.0)
    return _ew.convert_element_type(_ew.stop_gradient(g), odt)


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
    fc = _ew.div(_ew.sub(mo, lo), _ew.sub(hi, lo))
    u = _uniform(key, shape, dt, 0.0, 1.0)
    width = _ew.sub(hi, lo)
    lv = _ew.add(lo, fnp.sqrt(_ew.mul(_ew.mul(u, width), _ew.sub(mo, lo))))
    rv = _ew.sub(hi, fnp.sqrt(_ew.mul(_ew.mul(_ew.sub(dt.type(1), u), width), _ew.sub(hi, mo))))
    return fnp.where(_ew.lt(u, fc), lv, rv)


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
    return fnp.where(_ew.le(z, _ew.div(mean, _ew.add(mean, x))), x, _ew.div(mean_sq, x))


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
    inv_p = _ew.div(dt.type(1), p)
    g = gamma(k1, _sh.broadcast_to(inv_p, shape), shape, dt)
    r = rademacher(k2, shape, dt)
    return _ew.mul(r, fnp.power(g, inv_p))


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
    d = operator.index(d)
    if d < 1:
        raise ValueError(f"ball: the dimension d must be a positive integer, got {d}")
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
    if isinstance(key, PRNGKeyArray):
        return PRNGKeyArray(clone(check_key("clone", key)))
    key = check_key("clone", key)
    return fnp.copy(key) if not hasattr(key, "aval") else _ew.add(key, numpy.uint32(0))


# ---------------------------------------------------------------------------------------------
# binomial: halving by beta order statistics, then inversion by geometric waiting times

_INVERSION_MEAN = 10.0  # below this n * min(p, 1 - p), count geometric waiting times


def _binomial_inversion(key: Any, n: Any, q: Any, shape: tuple[int, ...],
                        dt: numpy.dtype) -> Any:
    """Binomial(n, q) by the second waiting-time method: the number of Geometric(q) waiting
    times whose sum stays within ``n`` (the loop runs about ``n q + 1`` times)."""
    log1mq = _ew.log1p(_ew.neg(q))

    def cond(carry: Any) -> Any:
        return fnp.any(_ew.le(carry[1], n))

    def body(carry: Any) -> Any:
        count, total, rng = carry
        rng, sub = split2(rng)
        count = fnp.where(_ew.le(total, n), _ew.add(count, dt.type(1)), count)
        u = _uniform(sub, shape, dt, 0.0, 1.0)
        wait = _ew.ceil(_ew.div(_ew.log(u), log1mq))
        return count, _ew.add(total, wait), rng

    zero = fnp.zeros_like(q)
    count = while_loop(cond, body, (zero, zero, key))[0]
    return _ew.sub(count, dt.type(1))


@consumes
def binomial(key: Any, n: Any, p: Any, shape: Any = None, dtype: Any = None) -> Array:
    """Binomial(``n``, ``p``) counts, as floats of ``dtype`` (float64), as ``jax.random``.

    Exact for every ``n``: while ``n min(p, 1 - p) > 10`` the count is halved by a Beta
    order statistic (``X ~ Beta(a, n + 1 - a)``, ``a = n // 2 + 1``: below ``X`` lie
    Binomial(``a - 1``, ``p / X``) successes, else ``a`` plus Binomial(``n - a``,
    ``(p - X) / (1 - X)``)), then geometric waiting times count the rest. Non-integer ``n`` is
    floored (NumPy's rule); ``n < 0``, NaN or ``p`` outside ``[0, 1]`` give NaN, as JAX.

    Example:
        >>> from funcgrad import random
        >>> x = random.binomial(random.PRNGKey(0), 20, 0.3, (2000,))
        >>> 5.7 < float(x.mean()) < 6.3
        True
    """
    key, dt, shape, (n, p) = _setup("binomial", key, dtype, shape, n, p)
    n = _ew.stop_gradient(_sh.broadcast_to(fnp.floor(n), shape))
    p = _ew.stop_gradient(_sh.broadcast_to(p, shape))
    invalid = _ew.or_(_ew.or_(_ew.ne(n, n), _ew.lt(n, dt.type(0))),
                      _ew.or_(_ew.ne(p, p), _ew.or_(_ew.lt(p, dt.type(0)),
                                                    _ew.gt(p, dt.type(1)))))
    n_ok = fnp.where(invalid, dt.type(0), fnp.where(fnp.isinf(n), dt.type(0), n))
    p_ok = fnp.where(invalid, dt.type(0.5), p)
    key_split, key_inv = split2(key)

    def big(n: Any, p: Any) -> Any:
        return _ew.gt(_ew.mul(n, fnp.minimum(p, _ew.sub(dt.type(1), p))),
                      dt.type(_INVERSION_MEAN))

    def cond(carry: Any) -> Any:
        return fnp.any(big(carry[0], carry[1]))

    def body(carry: Any) -> Any:
        n, p, acc, rng = carry
        rng, sub = split2(rng)
        active = big(n, p)
        a = _ew.add(fnp.floor(_ew.mul(n, dt.type(0.5))), dt.type(1))
        b = _ew.sub(_ew.add(n, dt.type(1)), a)
        x = beta(sub, fnp.where(active, a, dt.type(1)), fnp.where(active, b, dt.type(1)),
                 shape, dt)
        below = _ew.ge(x, p)
        n_new = fnp.where(below, _ew.sub(a, dt.type(1)), _ew.sub(n, a))
        p_new = fnp.where(below, _ew.div(p, x),
                          _ew.div(_ew.sub(p, x), _ew.sub(dt.type(1), x)))
        acc_new = fnp.where(below, acc, _ew.add(acc, a))
        p_new = fnp.clip(p_new, dt.type(0), dt.type(1))
        return (fnp.where(active, n_new, n), fnp.where(active, p_new, p),
                fnp.where(active, acc_new, acc), rng)

    n_rest, p_rest, acc, _ = while_loop(cond, body, (n_ok, p_ok, fnp.zeros_like(n_ok),
                                                     key_split))
    flip = _ew.gt(p_rest, dt.type(0.5))
    q = fnp.where(flip, _ew.sub(dt.type(1), p_rest), p_rest)
    q_safe = fnp.where(_ew.eq(q, dt.type(0)), dt.type(0.5), q)
    k = _binomial_inversion(key_inv, fnp.where(_ew.eq(q, dt.type(0)), dt.type(0), n_rest),
                            q_safe, shape, dt)
    k = fnp.where(flip, _ew.sub(n_rest, k), k)
    k = fnp.where(_ew.eq(q, dt.type(0)), fnp.where(flip, n_rest, dt.type(0)), k)
    out = _ew.add(acc, k)
    out = fnp.where(fnp.isinf(n), dt.type(numpy.inf), out)
    return fnp.where(invalid, dt.type(numpy.nan), out)


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
    dt = float_dtype("multinomial", dtype)
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
    return fnp.stack(counts, axis=-1)
