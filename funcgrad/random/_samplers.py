"""Continuous and discrete samplers built on :mod:`funcgrad.random._core`.

Each sampler follows JAX's construction (which bits feed which transform), so the draws that
only use integer arithmetic and exact float scaling (``uniform``, ``randint``, ``bernoulli``,
``permutation``, ``choice``) match JAX bit for bit; those going through ``log``/``erf_inv``...
agree with JAX to rounding. Everything composes funcgrad primitives, so it works under ``jit``,
``vmap`` and differentiation with respect to the float parameters.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy

import funcgrad.numpy as fnp
import funcgrad.ops.elementwise as _ew
import funcgrad.ops.shape as _sh
from funcgrad import lax
from funcgrad.avals import get_aval
from funcgrad.backend import device_put, get_default_device, to_numpy
from funcgrad.core import Tracer, concrete_or_error
from funcgrad.numpy._creation import with_out_sharding
from funcgrad.ops.special import erf, erfinv
from funcgrad.random._core import check_key, random_bits, shape_arg, split2
from funcgrad.random._keys import PRNGKeyArray
from funcgrad.random._reuse import consumes

__all__ = [
    "uniform", "normal", "truncated_normal", "bernoulli", "randint", "categorical", "gumbel",
    "exponential", "laplace", "logistic", "cauchy", "permutation", "choice",
    "multivariate_normal", "orthogonal", "rademacher", "lognormal",
]

Array = Any
_F64 = numpy.dtype(numpy.float64)
_I64 = numpy.dtype(numpy.int64)
_SCALARS = (bool, int, float, complex, numpy.generic)


# ---------------------------------------------------------------------------------------------
# Helpers


def float_dtype(name: str, dtype: Any, allow_complex: bool = False) -> numpy.dtype:
    dt = _F64 if dtype is None else numpy.dtype(dtype)
    if dt.kind != "f" and not (allow_complex and dt.kind == "c"):
        # JAX's exception type and wording (a ValueError; randint's is a TypeError)
        kinds = "a float or complex" if allow_complex else "a float"
        raise ValueError(f"dtype argument to `{name}` must be {kinds} dtype, got {dt}")
    return dt


def device_of(x: Any) -> str:
    if isinstance(x, PRNGKeyArray):  # a key of another implementation than Threefry
        return x.device
    return get_aval(x).device or get_default_device()


def as_param(x: Any, dtype: numpy.dtype | None, like: Any) -> Any:
    """``x`` as an array of ``dtype`` (keeping it when None). Python and NumPy scalars and
    lists are put on ``like``'s device; arrays and tracers stay where they are (differentiable
    casts)."""
    if isinstance(x, _SCALARS) or isinstance(x, list | tuple):
        return device_put(numpy.asarray(x, dtype=dtype), device_of(like))
    if dtype is None or get_aval(x).dtype == dtype:
        return x
    return _ew.convert_element_type(x, dtype)


def check_shape(name: str, shape: tuple[int, ...], *param_shapes: tuple[int, ...]) -> None:
    if param_shapes:
        try:
            ok = numpy.broadcast_shapes(shape, *param_shapes) == shape
        except ValueError:
            ok = False
        if not ok:
            raise ValueError(
                f"{name}: shape {shape} must be broadcast-compatible with the parameter shapes "
                f"{', '.join(map(str, param_shapes))}: broadcasting them all together must "
                f"give {shape}"
            )


def _shape_or_params(name: str, shape: Any, *params: Any) -> tuple[int, ...]:
    pshapes = [tuple(get_aval(p).shape) for p in params]
    if shape is None:
        return tuple(numpy.broadcast_shapes(*pshapes)) if pshapes else ()
    out = shape_arg(name, shape)
    check_shape(name, out, *pshapes)
    return out


def _concrete(x: Any) -> Any:
    """The host value of ``x`` when known now (not traced), else None."""
    if isinstance(x, Tracer):
        return None

    return numpy.asarray(to_numpy(x))


def _iota(n: int, like: Any, dtype: Any = _I64) -> Any:
    return device_put(numpy.arange(n, dtype=dtype), device_of(like))


# ---------------------------------------------------------------------------------------------
# uniform and what is built on it


def _uniform(key: Any, shape: tuple[int, ...], dt: numpy.dtype, minval: Any, maxval: Any) -> Any:
    finfo = numpy.finfo(dt)
    nbits, nmant = finfo.bits, finfo.nmant
    ubits = random_bits(key, nbits, shape)
    mant = _ew.shift_right(ubits, numpy.dtype(f"u{nbits // 8}").type(nbits - nmant))
    # JAX ORs the mantissa into the bits of 1.0 and subtracts 1; for m < 2**nmant that float
    # is exactly m * 2**-nmant, which needs no bitcast.
    floats = _ew.mul(_ew.convert_element_type(mant, dt), dt.type(2.0 ** -nmant))
    minval = as_param(minval, dt, key)
    maxval = as_param(maxval, dt, key)
    out = _ew.add(_ew.mul(floats, _ew.sub(maxval, minval)), minval)
    if get_aval(out).shape != shape:
        out = _sh.broadcast_to(out, shape)
    return _ew.max(minval, out)


@with_out_sharding
@consumes
def uniform(key: Any, shape: int | Sequence[int] = (), dtype: Any = None,
            minval: Any = 0.0, maxval: Any = 1.0) -> Array:
    """Uniform floats in ``[minval, maxval)`` of ``shape`` (default dtype ``float64``).

    Differentiable in ``minval`` and ``maxval`` (the draw is ``minval + u (maxval - minval)``).

    Example:
        >>> from funcgrad import random
        >>> x = random.uniform(random.PRNGKey(0), (3,))
        >>> x.shape, bool(((0 <= x) & (x < 1)).all())
        ((3,), True)
    """
    key = check_key("uniform", key)
    dt = float_dtype("uniform", dtype)
    shape = shape_arg("uniform", shape)
    mn, mx = as_param(minval, dt, key), as_param(maxval, dt, key)
    check_shape("uniform", shape, get_aval(mn).shape, get_aval(mx).shape)
    return _uniform(key, shape, dt, mn, mx)


def _normal_real(key: Any, shape: tuple[int, ...], dt: numpy.dtype) -> Any:
    lo = numpy.nextafter(dt.type(-1.0), dt.type(0.0))
    u = _uniform(key, shape, dt, lo, 1.0)
    return _ew.mul(dt.type(math.sqrt(2.0)), _in_dtype(erfinv(u), dt))


def _in_dtype(x: Any, dt: numpy.dtype) -> Any:
    """``x`` in the sampler's dtype: ``erf``/``erfinv`` compute float16 in a wider type."""
    return x if get_aval(x).dtype == dt else _ew.convert_element_type(x, dt)


@with_out_sharding
@consumes
def normal(key: Any, shape: int | Sequence[int] = (), dtype: Any = None) -> Array:
    """Standard normal samples (``sqrt(2) erfinv(u)``, ``u`` uniform on ``(-1, 1)``).

    A complex ``dtype`` gives the standard complex normal (independent real and imaginary
    parts of variance 1/2). Scale and shift the result for other means and deviations.

    Example:
        >>> from funcgrad import random
        >>> random.normal(random.PRNGKey(0), (2, 3)).shape
        (2, 3)
    """
    key = check_key("normal", key)
    dt = float_dtype("normal", dtype, allow_complex=True)
    shape = shape_arg("normal", shape)
    if dt.kind == "c":
        real = numpy.dtype(f"f{dt.itemsize // 2}")
        k_re, k_im = split2(key)
        re = _normal_real(k_re, shape, real)
        im = _normal_real(k_im, shape, real)
        z = _ew.complex(re, im)
        return _ew.div(z, real.type(math.sqrt(2.0)))
    return _normal_real(key, shape, dt)


@with_out_sharding
@consumes
def lognormal(key: Any, sigma: Any = 1.0, shape: Any = None, dtype: Any = None) -> Array:
    """``exp(sigma * normal)``: log-normal samples (differentiable in ``sigma``).

    Example:
        >>> from funcgrad import random
        >>> bool((random.lognormal(random.PRNGKey(0), 0.5, (4,)) > 0).all())
        True
    """
    key = check_key("lognormal", key)
    dt = float_dtype("lognormal", dtype)
    sigma = as_param(sigma, dt, key)
    shape = _shape_or_params("lognormal", shape, sigma)
    return fnp.exp(_ew.mul(_normal_real(key, shape, dt), sigma))


@with_out_sharding
@consumes
def truncated_normal(key: Any, lower: Any, upper: Any, shape: Any = None,
                     dtype: Any = None) -> Array:
    """Standard normal samples conditioned on ``lower < x < upper`` (inverse-CDF method).

    Differentiable in ``lower`` and ``upper``; ``shape`` defaults to their broadcast shape.

    Example:
        >>> from funcgrad import random
        >>> x = random.truncated_normal(random.PRNGKey(0), -1.0, 2.0, (100,))
        >>> bool(((x > -1) & (x < 2)).all())
        True
    """
    key = check_key("truncated_normal", key)
    dt = float_dtype("truncated_normal", dtype)
    lower, upper = as_param(lower, dt, key), as_param(upper, dt, key)
    shape = _shape_or_params("truncated_normal", shape, lower, upper)

    sqrt2 = dt.type(math.sqrt(2.0))
    a = _in_dtype(erf(_ew.div(lower, sqrt2)), dt)
    b = _in_dtype(erf(_ew.div(upper, sqrt2)), dt)
    u = _uniform(key, shape, dt, a, b)
    out = _ew.mul(sqrt2, _in_dtype(erfinv(u), dt))
    # Rounding (or u landing on a) must not put a sample on or outside the bounds.
    lo = fnp.nextafter(_ew.stop_gradient(lower), dt.type(numpy.inf))
    hi = fnp.nextafter(_ew.stop_gradient(upper), dt.type(-numpy.inf))
    return fnp.clip(out, lo, hi)


def check_mode(name: str, mode: Any, modes: tuple[str, ...] = ("low", "high")) -> str:
    """JAX's ``mode=`` of the samplers (None: ``'low'``, JAX's default)."""
    if mode is None:
        return "low"
    if mode not in modes:
        raise ValueError(f"{name}: mode must be one of {', '.join(map(repr, modes))} (or "
                         f"None), got {mode!r}")
    return mode


_GUMBEL_MODES = ("low", "high", "highest")


def _bits_to_unit_f32(hi: Any, lo: Any) -> Any:
    """Float32 in (0, 1) from the 64-bit fixed-point fraction ``hi:lo`` (uint32 words),
    rounded down to 24 significant bits whatever the leading zeros (JAX's
    ``_safe_int_to_float``: the float keeps precision near 0)."""
    u32 = numpy.uint32
    hiclz, loclz = lax.clz(hi), lax.clz(lo)
    hi_zero = _ew.eq(hiclz, u32(32))
    # shifts by 32 or more give 0 (XLA's rule, which lax's shifts follow)
    mantissa = _ew.or_(lax.shift_left(hi, hiclz),
                       fnp.where(hi_zero, lax.shift_left(lo, loclz),
                                 lax.shift_right_logical(lo, _ew.sub(u32(32), hiclz))))
    mantissa = _ew.and_(lax.shift_right_logical(mantissa, u32(32 - 23 - 1)),
                        u32((1 << 23) - 1))
    lead = fnp.where(hi_zero, _ew.add(u32(32), loclz), hiclz)
    exp = lax.shift_left(_ew.sub(u32(126), lead), u32(23))
    exp = _ew.and_(exp, u32((1 << 30) - (1 << 22)))
    return lax.bitcast_convert_type(_ew.or_(exp, mantissa), numpy.dtype(numpy.float32))


def _gumbel(key: Any, shape: tuple[int, ...], dt: numpy.dtype, mode: str) -> Any:
    """JAX's Gumbel draws: ``-log(-log(u))`` with ``u`` from one uniform (``'low'``), two
    (``'high'``: 2 x nmant bits below 1/2), or, in float32, 64 random bits in fixed point
    (``'highest'``), the small side through ``log1p``."""
    info = numpy.finfo(dt)
    if dt == numpy.float32 and mode == "highest":
        bits = random_bits(key, 32, (2, *shape))
        b0, b1 = bits[0], bits[1]
        n0, n1 = _ew.not_(b0), _ew.not_(b1)
        # 1 - bits in 64-bit fixed point: the complement plus one, carried into the high word
        carry = _ew.convert_element_type(_ew.eq(n1, numpy.uint32(0xFFFFFFFF)),
                                         numpy.dtype(numpy.uint32))
        n0, n1 = _ew.add(n0, carry), _ew.add(n1, numpy.uint32(1))
        flip = _ew.lt(b0, numpy.uint32(1 << 31))
        x = _bits_to_unit_f32(fnp.where(flip, b0, n0), fnp.where(flip, b1, n1))
        return fnp.where(flip, _ew.neg(_ew.log(_ew.neg(_ew.log1p(_ew.neg(x))))),
                         _ew.neg(_ew.log(_ew.neg(_ew.log(x)))))
    if mode in ("high", "highest"):
        u = _uniform(key, (2, *shape), dt, 0.0, 1.0)
        high, low = u[0], u[1]
        x = fnp.where(_ew.ge(high, dt.type(0.5)), high,
                      _ew.add(_ew.add(high, _ew.mul(dt.type(2.0 ** -info.nmant), low)),
                              dt.type(info.tiny)))
        return _ew.neg(_ew.log(_ew.neg(_ew.log1p(_ew.neg(x)))))
    u = _uniform(key, shape, dt, info.tiny, 1.0)
    return _ew.neg(_ew.log(_ew.neg(_ew.log(u))))


@with_out_sharding
@consumes
def bernoulli(key: Any, p: Any = 0.5, shape: Any = None, mode: str = "low") -> Array:
    """Booleans that are True with probability ``p`` (``shape`` defaults to ``p``'s).

    ``p`` must have a floating dtype (an integer or bool ``p`` is a ``TypeError``, as in JAX).
    As JAX's, the draw is ``uniform < p``: ``p`` above 1 gives ``True``, below 0 or NaN gives
    ``False`` (no error: eager and traced calls agree). ``mode="high"`` (JAX's) compares with
    two uniforms' worth of bits, so float32 draws stay right for ``p`` below ``1e-7``.

    Example:
        >>> from funcgrad import random
        >>> random.bernoulli(random.PRNGKey(0), 0.5, (4,)).dtype
        dtype('bool')
    """
    key = check_key("bernoulli", key)
    mode = check_mode("bernoulli", mode)
    if isinstance(p, _SCALARS) or isinstance(p, list | tuple):
        p = as_param(p, None, key)
    dt = get_aval(p).dtype
    if dt.kind != "f":
        raise TypeError(f"bernoulli: probability p must have a floating dtype, got {dt}")
    shape = _shape_or_params("bernoulli", shape, p)
    if mode == "high":
        # u1 + u2 2**-nmant: a uniform with twice the bits, compared without rounding
        u = _uniform(key, (2, *shape), dt, 0.0, 1.0)
        u2 = _ew.mul(u[1], dt.type(2.0 ** -numpy.finfo(dt).nmant))
        return _ew.lt(u2, _ew.sub(p, u[0]))
    return _ew.lt(_uniform(key, shape, dt, 0.0, 1.0), p)


@with_out_sharding
@consumes
def rademacher(key: Any, shape: int | Sequence[int] = (), dtype: Any = None) -> Array:
    """Random signs ``-1``/``+1`` with equal probability (default dtype ``int64``).

    Example:
        >>> from funcgrad import random
        >>> sorted(set(random.rademacher(random.PRNGKey(0), (50,)).tolist()))
        [-1, 1]
    """
    key = check_key("rademacher", key)
    dt = _I64 if dtype is None else numpy.dtype(dtype)
    shape = shape_arg("rademacher", shape)
    b = bernoulli(key, 0.5, shape)
    return _ew.convert_element_type(_ew.sub(_ew.mul(_ew.convert_element_type(b, dt), 2), 1),
                                    dt)


def _exponential(key: Any, shape: tuple[int, ...], dt: numpy.dtype) -> Any:
    u = _uniform(key, shape, dt, 0.0, 1.0)
    return _ew.neg(_ew.log1p(_ew.neg(u)))


@with_out_sharding
@consumes
def exponential(key: Any, shape: int | Sequence[int] = (), dtype: Any = None) -> Array:
    """Standard exponential samples ``-log(1 - u)``.

    Example:
        >>> from funcgrad import random
        >>> bool((random.exponential(random.PRNGKey(0), (5,)) >= 0).all())
        True
    """
    key = check_key("exponential", key)
    return _exponential(key, shape_arg("exponential", shape), float_dtype("exponential", dtype))


@with_out_sharding
@consumes
def gumbel(key: Any, shape: int | Sequence[int] = (), dtype: Any = None,
           mode: str | None = None) -> Array:
    """Standard Gumbel samples ``-log(-log(u))``, as JAX's: ``mode="low"`` (the default) from
    one uniform, ``"high"`` from two (finer near ``u = 0``), ``"highest"`` (float32) from 64
    random bits in fixed point.

    Example:
        >>> from funcgrad import random
        >>> random.gumbel(random.PRNGKey(0), (2,)).shape
        (2,)
    """
    key = check_key("gumbel", key)
    mode = check_mode("gumbel", mode, _GUMBEL_MODES)
    dt = float_dtype("gumbel", dtype)
    return _gumbel(key, shape_arg("gumbel", shape), dt, mode)


@with_out_sharding
@consumes
def laplace(key: Any, shape: int | Sequence[int] = (), dtype: Any = None) -> Array:
    """Standard Laplace samples (density ``exp(-|x|) / 2``).

    Example:
        >>> from funcgrad import random
        >>> random.laplace(random.PRNGKey(0), (3,)).dtype
        dtype('float64')
    """
    key = check_key("laplace", key)
    dt = float_dtype("laplace", dtype)
    lo = dt.type(-1.0) + numpy.finfo(dt).epsneg
    u = _uniform(key, shape_arg("laplace", shape), dt, lo, 1.0)
    return _ew.mul(_ew.sign(u), _ew.log1p(_ew.neg(_ew.abs(u))))


@with_out_sharding
@consumes
def logistic(key: Any, shape: int | Sequence[int] = (), dtype: Any = None) -> Array:
    """Standard logistic samples ``log(u / (1 - u))``.

    Example:
        >>> from funcgrad import random
        >>> random.logistic(random.PRNGKey(0), (3,)).shape
        (3,)
    """
    key = check_key("logistic", key)
    dt = float_dtype("logistic", dtype)
    u = _uniform(key, shape_arg("logistic", shape), dt, numpy.finfo(dt).tiny, 1.0)
    return _ew.log(_ew.div(u, _ew.sub(dt.type(1.0), u)))


@with_out_sharding
@consumes
def cauchy(key: Any, shape: int | Sequence[int] = (), dtype: Any = None) -> Array:
    """Standard Cauchy samples ``tan(pi (u - 1/2))``.

    Example:
        >>> from funcgrad import random
        >>> random.cauchy(random.PRNGKey(0), (3,)).shape
        (3,)
    """
    key = check_key("cauchy", key)
    dt = float_dtype("cauchy", dtype)
    u = _uniform(key, shape_arg("cauchy", shape), dt, numpy.finfo(dt).eps, 1.0)
    return _ew.tan(_ew.mul(dt.type(numpy.pi), _ew.sub(u, dt.type(0.5))))


# ---------------------------------------------------------------------------------------------
# Integers


def _int_param(name: str, x: Any, like: Any) -> Any:
    if isinstance(x, _SCALARS) or isinstance(x, list | tuple):
        a = numpy.asarray(x)
        if a.dtype.kind not in "iu":
            # as JAX: float bounds truncate toward zero and saturate (NaN is 0, inf and
            # values past int64 its extremes), lax's convert rather than NumPy's wrapping cast
            a = numpy.asarray(lax.convert_element_type(a, _I64))
        return device_put(a, device_of(like))
    dt = get_aval(x).dtype
    if dt.kind in "iu":
        return x
    if dt.kind in "fb":
        return lax.convert_element_type(x, _I64)
    raise TypeError(f"{name}: bounds must be integers, got dtype {dt}")


def _clip_to(x: Any, dt: numpy.dtype) -> Any:
    """``x`` cast to the integer ``dt``, clipped to its range rather than wrapped."""
    src = get_aval(x).dtype
    if src == dt:
        return x
    si, di = numpy.iinfo(src), numpy.iinfo(dt)
    lo, hi = max(int(si.min), int(di.min)), min(int(si.max), int(di.max))
    x = _ew.min(_ew.max(x, src.type(lo)), src.type(hi))
    return _ew.convert_element_type(x, dt)


@with_out_sharding
@consumes
def randint(key: Any, shape: int | Sequence[int], minval: Any, maxval: Any,
            dtype: Any = None) -> Array:
    """Integers uniform in ``[minval, maxval)`` (default dtype ``int64``).

    As JAX: two draws of the dtype's width are combined to reduce the modulo bias; bounds
    outside the dtype's range are clipped to it, and ``maxval <= minval`` gives ``minval``.

    Example:
        >>> from funcgrad import random
        >>> x = random.randint(random.PRNGKey(0), (1000,), 0, 10)
        >>> int(x.min()), int(x.max())
        (0, 9)
    """
    key = check_key("randint", key)
    dt = _I64 if dtype is None else numpy.dtype(dtype)
    if dt.kind not in "iu":
        raise TypeError(f"randint only accepts integer dtypes, got {dt}")
    shape = shape_arg("randint", shape)
    minval = _int_param("randint", minval, key)
    maxval = _int_param("randint", maxval, key)
    check_shape("randint", shape, get_aval(minval).shape, get_aval(maxval).shape)
    info = numpy.iinfo(dt)
    if info.bits < 32:
        # As JAX: narrow types sample in int32 (bounds clipped to the type, maxval one past),
        # which avoids the bias of a span close to 2**bits.
        i32 = numpy.dtype(numpy.int32)

        def narrow(v: Any, hi: int) -> Any:
            v = _ew.convert_element_type(v, i32)
            return _ew.min(_ew.max(v, i32.type(info.min)), i32.type(hi))

        out = _randint(key, shape, narrow(minval, int(info.max)),
                       narrow(maxval, int(info.max) + 1), i32)
        return _ew.convert_element_type(out, dt)
    return _randint(key, shape, minval, maxval, dt)


def _randint(key: Any, shape: tuple[int, ...], minval: Any, maxval: Any,
             dt: numpy.dtype) -> Any:
    mx_dt = get_aval(maxval).dtype
    top = min(int(numpy.iinfo(dt).max), int(numpy.iinfo(mx_dt).max))
    maxval_out_of_range = _ew.gt(maxval, mx_dt.type(top))
    minval = _clip_to(minval, dt)
    maxval = _clip_to(maxval, dt)
    nbits = dt.itemsize * 8
    udt = numpy.dtype(f"u{dt.itemsize}")
    k1, k2 = split2(key)
    higher = random_bits(k1, nbits, shape)
    lower = random_bits(k2, nbits, shape)
    span = _ew.convert_element_type(_ew.sub(maxval, minval), udt)
    one = udt.type(1)
    span = _ew.select_n(_ew.le(maxval, minval), span, one)
    span = _ew.select_n(_ew.and_(maxval_out_of_range, _ew.gt(maxval, minval)), span,
                        _ew.add(span, one))
    # A span of 2**nbits wraps to 0; XLA's `x % 0 == x` then keeps all the bits, as wanted.
    zero_span = _ew.eq(span, udt.type(0))
    safe = _ew.select_n(zero_span, span, one)

    def rem(x: Any) -> Any:
        return _ew.select_n(zero_span, _ew.rem(x, safe), x)

    # (hi * 2**nbits + lo) mod span, with 2**nbits mod span from two half-width squares.
    mult = rem(udt.type(2 ** (nbits // 2)))
    mult = rem(_ew.mul(mult, mult))
    off = rem(_ew.add(_ew.mul(rem(higher), mult), rem(lower)))
    out = _ew.add(minval, _ew.convert_element_type(off, dt))
    if get_aval(out).shape != shape:
        out = _sh.broadcast_to(out, shape)
    return out


@with_out_sharding
@consumes
def categorical(key: Any, logits: Any, axis: int = -1, shape: Any = None, replace: bool = True,
                mode: str | None = None) -> Array:
    """Indices drawn with probabilities ``softmax(logits, axis)`` (the Gumbel-max trick).

    ``shape`` must end with ``logits``' shape without ``axis`` (its default). With
    ``replace=False`` the leading ``shape`` entries (``k`` draws in all) are distinct: the
    ``k`` largest of one Gumbel-perturbed ``logits`` (JAX's Gumbel-top-k), as ``int32``
    indices as JAX's (``int64`` with replacement). ``mode``: the Gumbel draws' (see
    :func:`gumbel`).

    Example:
        >>> import numpy as np
        >>> from funcgrad import random
        >>> random.categorical(random.PRNGKey(0), np.array([-50.0, 0.0])).tolist()
        1
    """
    key = check_key("categorical", key)
    if isinstance(logits, _SCALARS) or isinstance(logits, list | tuple):
        logits = as_param(logits, None, key)
    la = get_aval(logits)
    if la.dtype.kind != "f":
        logits = _ew.convert_element_type(logits, _F64)
        la = get_aval(logits)
    if la.ndim == 0:
        raise ValueError("categorical: logits must have at least one dimension")
    if not -la.ndim <= axis < la.ndim:
        raise ValueError(f"categorical: axis {axis} is out of bounds for logits of rank {la.ndim}")
    ax = axis - la.ndim if axis >= 0 else axis
    batch_shape = tuple(numpy.delete(la.shape, ax))
    shape = batch_shape if shape is None else shape_arg("categorical", shape)
    check_shape("categorical", shape, batch_shape)
    mode = check_mode("categorical", mode, _GUMBEL_MODES)
    prefix = shape[:len(shape) - len(batch_shape)]
    if not replace:
        k = math.prod(prefix)
        if k > la.shape[ax]:
            raise ValueError(f"categorical: number of samples without replacement ({k}) "
                             f"cannot exceed the number of categories ({la.shape[ax]})")
        perturbed = _ew.add(logits, _gumbel(key, la.shape, la.dtype, mode))
        order = fnp.argsort(_ew.neg(fnp.moveaxis(perturbed, ax, -1)), axis=-1)
        # int32 as JAX's (its indices come from lax.top_k), unlike the replace=True argmax
        top = _ew.convert_element_type(order[..., :k], numpy.dtype(numpy.int32))
        return _sh.reshape(fnp.moveaxis(top, -1, 0), shape)
    lshape = list(shape[len(shape) - len(batch_shape):])
    lshape.insert(ax % la.ndim, la.shape[ax])
    g = _gumbel(key, (*prefix, *lshape), la.dtype, mode)
    return fnp.argmax(_ew.add(g, _sh.expand_dims(logits, tuple(range(len(prefix))))), axis=ax)


# ---------------------------------------------------------------------------------------------
# Permutations and choice


def _shuffle(key: Any, x: Any, axis: int) -> Any:
    size = int(numpy.prod(get_aval(x).shape, dtype=numpy.int64))
    # Sorting by 32-bit random keys, repeated so collisions (stable ties) stay rare.
    rounds = int(numpy.ceil(3 * numpy.log(max(1, size)) / numpy.log(numpy.iinfo(numpy.uint32).max)))
    for _ in range(rounds):
        key, sub = split2(key)
        sort_keys = random_bits(sub, 32, get_aval(x).shape)
        _, x = lax.sort_key_val(sort_keys, x, axis)
    return x


@with_out_sharding
@consumes
def permutation(key: Any, x: Any, axis: int = 0, independent: bool = False) -> Array:
    """A random permutation of ``range(x)`` (integer ``x``) or of ``x`` along ``axis``.

    With ``independent=True`` each slice along ``axis`` is shuffled independently. An integer
    ``x`` must be concrete (its value is the output's length).

    Example:
        >>> from funcgrad import random
        >>> sorted(random.permutation(random.PRNGKey(0), 5).tolist())
        [0, 1, 2, 3, 4]
    """
    key = check_key("permutation", key)
    if isinstance(x, list | tuple):
        x = as_param(x, None, key)
    if isinstance(x, _SCALARS) or get_aval(x).ndim == 0:
        dt = numpy.asarray(x).dtype if isinstance(x, _SCALARS) else get_aval(x).dtype
        if dt.kind not in "iu":
            raise TypeError("permutation: x must be an integer or at least 1-dimensional")
        n = int(concrete_or_error(x, "argument x of funcgrad.random.permutation()"))
        if n < 0:
            raise ValueError(f"permutation: x must be non-negative, got {n}")
        return _shuffle(key, _iota(n, key), 0)
    nd = get_aval(x).ndim
    if not -nd <= axis < nd:
        raise ValueError(f"permutation: axis {axis} is out of bounds for an array of rank {nd}")
    axis %= nd
    if independent or nd == 1:
        return _shuffle(key, x, axis)
    ind = _shuffle(key, _iota(get_aval(x).shape[axis], key), 0)
    return fnp.take(x, ind, axis=axis)


@consumes
def choice(key: Any, a: Any, shape: Sequence[int] = (), replace: bool = True, p: Any = None,
           axis: int = 0, mode: str | None = None) -> Array:
    """Random samples from ``range(a)`` (integer ``a``) or from ``a`` along ``axis``
    (``mode``: the Gumbel draws' when sampling by ``p`` without replacement).

    ``p`` gives the probabilities (normalised by their sum; a concrete ``p`` must be
    non-negative); without replacement and with ``p`` the Gumbel top-k trick is used.

    Example:
        >>> import numpy as np
        >>> from funcgrad import random
        >>> random.choice(random.PRNGKey(0), np.array([10, 20, 30]), (2,), replace=False).shape
        (2,)
    """
    key = check_key("choice", key)
    mode = check_mode("choice", mode, _GUMBEL_MODES)
    shape = shape_arg("choice", shape)
    if isinstance(a, list | tuple):
        a = as_param(a, None, key)
    scalar = isinstance(a, _SCALARS) or get_aval(a).ndim == 0
    if scalar:
        dt = numpy.asarray(a).dtype if isinstance(a, _SCALARS) else get_aval(a).dtype
        if dt.kind not in "iu":
            raise TypeError("choice: a must be an integer or at least 1-dimensional")
        n_inputs = int(concrete_or_error(a, "argument a of funcgrad.random.choice()"))
        arr_shape: tuple[int, ...] = ()
    else:
        arr_shape = tuple(get_aval(a).shape)
        if not -len(arr_shape) <= axis < len(arr_shape):
            raise ValueError(f"choice: axis {axis} is out of bounds for a of rank "
                             f"{len(arr_shape)}")
        axis %= len(arr_shape)
        n_inputs = arr_shape[axis]
    n_draws = math.prod(shape)
    out_shape = shape if scalar else arr_shape[:axis] + shape + arr_shape[axis + 1:]
    if n_draws == 0:
        dt = _I64 if scalar else get_aval(a).dtype
        return device_put(numpy.zeros(out_shape, dt), device_of(key))
    if n_inputs <= 0:
        raise ValueError("choice: a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(
            f"choice: cannot take a larger sample ({n_draws}) than the population "
            f"({n_inputs}) when replace=False"
        )
    if p is None:
        if replace:
            ind = randint(key, shape, 0, n_inputs)
            result = ind if scalar else fnp.take(a, ind, axis=axis)
        else:
            src = n_inputs if scalar else a
            perm = permutation(key, src, axis)
            result = _sh.static_slice(perm, (0,) * perm.ndim,
                                      tuple(n_draws if i == (0 if scalar else axis) else s
                                            for i, s in enumerate(get_aval(perm).shape)))
    else:
        p = as_param(p, None, key)
        if get_aval(p).dtype.kind != "f":
            p = _ew.convert_element_type(p, _F64)
        if tuple(get_aval(p).shape) != (n_inputs,):
            raise ValueError(f"choice: p must be None or a 1-D array of length {n_inputs} "
                             f"(the size of a along axis), got shape {get_aval(p).shape}")
        cp = _concrete(p)
        if cp is not None and not bool((cp >= 0).all()):
            raise ValueError("choice: probabilities p must be non-negative")
        pdt = get_aval(p).dtype
        if replace:
            cum = fnp.cumsum(p)
            total = _sh.squeeze(_sh.static_slice(cum, (n_inputs - 1,), (n_inputs,)), (0,))
            r = _ew.mul(total, _ew.sub(pdt.type(1.0), _uniform(key, shape, pdt, 0.0, 1.0)))
            ind = _ew.convert_element_type(fnp.searchsorted(cum, r), _I64)
        else:
            # log(0) = -inf (never drawn) without NumPy's divide-by-zero warning
            pos = _ew.gt(p, pdt.type(0.0))
            logp = fnp.where(pos, _ew.log(fnp.where(pos, p, pdt.type(1.0))), pdt.type(-numpy.inf))
            g = _ew.add(_gumbel(key, (n_inputs,), pdt, mode), logp)
            ind = _ew.convert_element_type(lax.top_k(g, n_draws)[1], _I64)
        result = ind if scalar else fnp.take(a, ind, axis=axis)
    return _sh.reshape(result, out_shape)


# ---------------------------------------------------------------------------------------------
# Multivariate


@with_out_sharding
@consumes
def multivariate_normal(key: Any, mean: Any, cov: Any, shape: Any = None, dtype: Any = None,
                        method: str = "cholesky") -> Array:
    """Samples of ``N(mean, cov)``: ``mean + factor @ z`` with ``factor factor^T = cov``.

    ``method`` is ``"cholesky"`` (default), ``"eigh"`` or ``"svd"`` (the latter two accept
    singular ``cov``). ``shape`` defaults to the broadcast batch shape of ``mean[..., :]`` and
    ``cov[..., :, :]``. Without ``dtype``, draws in ``mean``'s float dtype, as JAX.
    Differentiable in ``mean`` and ``cov``.

    Example:
        >>> import numpy as np
        >>> from funcgrad import random
        >>> random.multivariate_normal(random.PRNGKey(0), np.zeros(2), np.eye(2), (5,)).shape
        (5, 2)
    """
    key = check_key("multivariate_normal", key)
    if method not in ("cholesky", "eigh", "svd"):
        raise ValueError(f"multivariate_normal: method must be 'cholesky', 'eigh' or 'svd', "
                         f"got {method!r}")
    if dtype is None and not isinstance(mean, _SCALARS + (list, tuple)):
        # JAX draws in the mean's dtype when none is given (float32 mean: float32 draws)
        mdt = get_aval(mean).dtype
        dtype = mdt if mdt.kind == "f" else None
    dt = float_dtype("multivariate_normal", dtype)
    mean, cov = as_param(mean, dt, key), as_param(cov, dt, key)
    ms, cs = tuple(get_aval(mean).shape), tuple(get_aval(cov).shape)
    if len(ms) < 1:
        raise ValueError(f"multivariate_normal: mean must have at least 1 dimension, got {ms}")
    if len(cs) < 2:
        raise ValueError(f"multivariate_normal: cov must have at least 2 dimensions, got {cs}")
    n = ms[-1]
    if cs[-2:] != (n, n):
        raise ValueError(f"multivariate_normal: cov must have shape (..., {n}, {n}) to match "
                         f"mean of shape {ms}, got {cs}")
    if shape is None:
        shape = tuple(numpy.broadcast_shapes(ms[:-1], cs[:-2]))
    else:
        shape = shape_arg("multivariate_normal", shape)
        check_shape("multivariate_normal", shape, ms[:-1], cs[:-2])
    if method == "svd":
        u, s, _ = fnp.linalg.svd(cov)
        factor = _ew.mul(u, _sh.expand_dims(_ew.sqrt(s), (len(cs) - 2,)))
    elif method == "eigh":
        w, v = fnp.linalg.eigh(cov)
        factor = _ew.mul(v, _sh.expand_dims(_ew.sqrt(w), (len(cs) - 2,)))
    else:
        factor = fnp.linalg.cholesky(cov)
    z = _normal_real(key, (*shape, n), dt)
    return _ew.add(mean, fnp.einsum("...ij,...j->...i", factor, z))


@with_out_sharding
@consumes
def orthogonal(key: Any, n: int, shape: Sequence[int] = (), dtype: Any = None,
               m: int | None = None) -> Array:
    """Haar-random matrices with orthonormal columns (rows when ``n < m``): shape
    ``(*shape, n, m)`` (``m = n`` by default).

    The Q factor of a Gaussian matrix, with the signs fixed by ``R``'s diagonal.

    Example:
        >>> import numpy as np
        >>> from funcgrad import random
        >>> q = random.orthogonal(random.PRNGKey(0), 3)
        >>> bool(np.allclose(q.T @ q, np.eye(3)))
        True
    """
    key = check_key("orthogonal", key)
    dt = float_dtype("orthogonal", dtype, allow_complex=True)
    shape = shape_arg("orthogonal", shape)
    n = int(n)
    m = n if m is None else int(m)
    # As JAX: a tall (max, min) Gaussian's Q, transposed when n < m (orthonormal rows).
    z = normal(key, (*shape, max(n, m), min(n, m)), dt)
    q, r = fnp.linalg.qr(z)
    d = fnp.diagonal(r, 0, -2, -1)
    x = _ew.mul(q, _sh.expand_dims(_ew.div(d, _ew.convert_element_type(_ew.abs(d), dt)),
                                   (len(shape),)))
    return fnp.swapaxes(x, -1, -2) if n < m else x
