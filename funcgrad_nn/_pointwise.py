"""More activations and normalisations, and distances (re-exported by ``functional``).

Each activation is written so its derivative at the kinks is PyTorch's (the branch PyTorch's
backward takes at the boundary is the branch the ``where`` selects there).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy

import funcgrad
import funcgrad.numpy as fnp
import funcgrad.scipy.special as fsp
from funcgrad_nn.amp import autocast_inputs

__all__ = [
    "cdist", "celu", "cosine_similarity", "glu", "hardshrink", "hardsigmoid", "hardswish",
    "hardtanh", "instance_norm", "local_response_norm", "mish", "normalize",
    "pairwise_distance", "pdist", "prelu", "rms_norm", "selu", "softmin", "softshrink", "softsign", "tanhshrink", "threshold",
]

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _zero(x: Any) -> Any:
    return fnp.zeros_like(x, shape=())


def check_dim(fname: str, dim: Any, ndim: int, arg: str = "dim") -> int:
    """``dim`` as a non-negative axis of an ``ndim``-D input, else PyTorch's ``IndexError``
    ("Dimension out of range"), naming the function and the argument. A 0-d input takes
    ``dim`` 0 or -1, as PyTorch (it wraps a scalar as one element).

    >>> check_dim("softmax", -1, 3)
    2
    >>> check_dim("softmax", 3, 3)
    Traceback (most recent call last):
    ...
    IndexError: softmax: Dimension out of range for dim (expected to be in range of [-3, 2], but got 3)
    """
    if isinstance(dim, bool) or not isinstance(dim, int | numpy.integer):
        raise TypeError(f"{fname}: {arg} must be an int, got {dim!r}")
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"{fname}: Dimension out of range for {arg} (expected to be in range "
                         f"of [{-n}, {n - 1}], but got {dim})")
    return int(dim) % n


def keep_float_dtype(out: Any, like: Any) -> Any:
    """``out`` in ``like``'s floating dtype: ``funcgrad.scipy.special`` computes float16 in
    float64 (SciPy's rule), while every ``F`` function keeps a floating input's dtype, as
    PyTorch (float16 in, float16 out).

    >>> import numpy as np
    >>> import funcgrad.scipy.special as fsp
    >>> x = np.array([0.0], np.float16)
    >>> keep_float_dtype(fsp.expit(x), x).dtype
    dtype('float16')
    """
    dt = getattr(like, "dtype", None)
    if dt is not None and numpy.dtype(dt).kind == "f" and out.dtype != dt:
        return out.astype(dt)
    return out


def elu_family(input: Any, alpha: float, scale: float = 1.0, input_scale: float = 1.0) -> Any:
    """scale * x where x > 0, else scale * alpha * (exp(input_scale * x) - 1): PyTorch's one
    kernel behind ``elu``, ``selu`` and ``celu``, with its derivative at 0 (the exponential
    branch's, ``scale * alpha * input_scale``) and NaN taking the linear branch.

    >>> import numpy as np
    >>> elu_family(np.array([-1.0, 0.0, 2.0]), 1.0).round(4)
    array([-0.6321,  0.    ,  2.    ])
    """
    neg = input <= 0
    # expm1 of the clamped value keeps the unselected branch finite (no inf * 0 in grads).
    curve = (scale * alpha) * fnp.expm1(fnp.where(neg, input, 0) * input_scale)
    return fnp.where(neg, curve, input * scale if scale != 1.0 else input)


def _bad_input(message: str) -> Exception:
    """The error for a bad argument: a ``ValueError`` and, as PyTorch raises there, a
    ``RuntimeError`` (``BadInputError``; imported here, as its module imports this one's
    users)."""
    from funcgrad_nn.module import BadInputError
    return BadInputError(message)


def prelu(input: Any, weight: Any) -> Any:
    """x if x > 0 else weight * x, ``weight`` per channel (axis 1) or a single value.

    >>> import numpy as np
    >>> prelu(np.array([[-2.0, 3.0]]), np.array([0.25]))
    array([[-0.5,  3. ]])
    """
    input, weight = autocast_inputs("prelu", input, weight)
    xdt, wdt = getattr(input, "dtype", None), getattr(weight, "dtype", None)
    if xdt is not None and wdt is not None and numpy.dtype(xdt) != numpy.dtype(wdt):
        from funcgrad_nn.module import BadInputError
        # PyTorch: "prelu: Type promoting not supported"; NumPy's promotion would silently
        # make a float32 model's activations float64.
        raise BadInputError(f"prelu: input dtype {numpy.dtype(xdt)} does not match weight "
                            f"dtype {numpy.dtype(wdt)} (type promotion is not supported, as "
                            f"in PyTorch). Fix: cast the input, e.g. x.astype(np."
                            f"{numpy.dtype(wdt)}), or the module, e.g. model.to(np."
                            f"{numpy.dtype(xdt)})")
    w = weight
    nw = math.prod(fnp.shape(weight))
    if nw != 1:
        if fnp.ndim(input) < 2 or fnp.shape(input)[1] != nw:
            raise _bad_input(f"prelu: weight has {nw} values, which needs input (N, {nw}, ...) "
                             f"(one per channel, axis 1), got shape {tuple(fnp.shape(input))}")
        w = fnp.reshape(weight, (nw,) + (1,) * (fnp.ndim(input) - 2))
    else:
        w = fnp.reshape(weight, ())
    return fnp.where(input > 0, input, w * input)


def selu(input: Any, inplace: bool = False) -> Any:
    """scale * (x if x > 0 else alpha * (exp(x) - 1)) with the self-normalising constants.

    >>> import numpy as np
    >>> np.round(selu(np.array([-1.0, 1.0])), 4)
    array([-1.1113,  1.0507])
    """
    return elu_family(input, _SELU_ALPHA, _SELU_SCALE)


def celu(input: Any, alpha: float = 1.0, inplace: bool = False) -> Any:
    """x if x > 0 else alpha * (exp(x / alpha) - 1).

    >>> import numpy as np
    >>> np.round(celu(np.array([-1.0, 1.0]), 2.0), 4)
    array([-0.7869,  1.    ])
    """
    if alpha == 0:
        raise ValueError("celu: alpha must be non-zero (it divides the input)")
    return elu_family(input, alpha, 1.0, 1.0 / alpha)


def glu(input: Any, dim: int = -1) -> Any:
    """Gated linear unit: the first half of ``dim`` times the sigmoid of the second half.

    >>> import numpy as np
    >>> glu(np.array([[1.0, 2.0, 0.0, 0.0]]))
    array([[0.5, 1. ]])
    """
    dim = check_dim("glu", dim, fnp.ndim(input))
    if fnp.ndim(input) == 0:
        raise _bad_input("glu: glu does not support scalars because the halving size must "
                         "be even")
    n = fnp.shape(input)[dim]
    if n % 2:
        raise _bad_input(f"glu: halving dimension {dim} needs an even size, got shape "
                         f"{tuple(fnp.shape(input))}")
    a, b = fnp.split(input, 2, axis=dim)
    return a * keep_float_dtype(fsp.expit(b), b)


def mish(input: Any, inplace: bool = False) -> Any:
    """x * tanh(softplus(x)).

    >>> import numpy as np
    >>> np.round(mish(np.array([1.0])), 4)
    array([0.8651])
    """
    return input * fnp.tanh(fnp.logaddexp(_zero(input), input))


def hardswish(input: Any, inplace: bool = False) -> Any:
    """x * relu6(x + 3) / 6 (at -3 and 3 the gradient is PyTorch's: 0 and 1).

    >>> import numpy as np
    >>> hardswish(np.array([-4.0, 0.0, 1.0, 4.0]))
    array([-0.        ,  0.        ,  0.66666667,  4.        ])
    """
    inside = (input > -3) & (input < 3)
    x = fnp.where(inside, input, 0)  # the quadratic only sees its own range: no inf * 0
    # NaN and +inf take the identity branch (value NaN/inf, gradient 1, not NaN).
    return fnp.where(input <= -3, input * 0, fnp.where(inside, x * (x + 3) / 6, input))


def hardsigmoid(input: Any, inplace: bool = False) -> Any:
    """relu6(x + 3) / 6 (zero gradient at -3 and 3, as PyTorch).

    The slope in between is PyTorch's float32 constant ``1/6`` (its backward multiplies by
    it in every dtype), while the value is exact: ``x/6 + 0.5``.

    >>> import numpy as np
    >>> hardsigmoid(np.array([-4.0, 0.0, 4.0]))
    array([0. , 0.5, 1. ])
    """
    fixed = funcgrad.stop_gradient(input)
    mid = (fixed / 6 + 0.5) + (input - fixed) * float(numpy.float32(1.0 / 6.0))
    zero, one = _zero(input), fnp.ones_like(input, shape=())
    return fnp.where(input <= -3, zero, fnp.where(input >= 3, one, mid))


def hardtanh(input: Any, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Any:
    """x clipped to ``[min_val, max_val]`` (zero gradient at the ends, as PyTorch).

    >>> import numpy as np
    >>> hardtanh(np.array([-2.0, 0.5, 2.0]))
    array([-1. ,  0.5,  1. ])
    """
    if min_val > max_val:
        raise ValueError(f"hardtanh: min_val ({min_val}) must not exceed max_val ({max_val})")
    lo = fnp.full_like(input, min_val, shape=())
    hi = fnp.full_like(input, max_val, shape=())
    return fnp.where(input <= min_val, lo, fnp.where(input >= max_val, hi, input))


def softsign(input: Any) -> Any:
    """x / (1 + |x|).

    >>> import numpy as np
    >>> softsign(np.array([-1.0, 3.0]))
    array([-0.5 ,  0.75])
    """
    return input / (1 + fnp.abs(input))


def softmax_family(op: Any, input: Any, dim: Any, dtype: Any, fname: str) -> Any:
    """``op(input, axis=dim)`` with the softmax family's rules: without ``dim``, PyTorch's
    deprecated implicit choice (axis 0 for 0-, 1- and 3-D inputs, else 1) with its
    ``UserWarning``; ``dtype=`` casts the input before the operation, as PyTorch (a float32
    input gives a float64 result, computed in float64, with ``dtype=float64``), and a 0-d
    input takes ``dim`` 0 or -1 (PyTorch treats it as one element)."""
    if dim is None:
        warnings.warn(f"Implicit dimension choice for {fname} has been deprecated. Change the "
                      "call to include dim=X as an argument.", UserWarning, stacklevel=3)
        dim = 0 if fnp.ndim(input) in (0, 1, 3) else 1
    # autocast's float32 ops (CUDA's softmax family) leave an explicit dtype= alone
    x = autocast_inputs(fname, input)[0] if dtype is None else \
        fnp.asarray(input).astype(dtype)
    dim = check_dim(fname, dim, fnp.ndim(x))
    if fnp.ndim(x) == 0:
        return keep_float_dtype(fnp.reshape(op(fnp.reshape(x, (1,)), axis=0), ()), x)
    if fnp.shape(x)[dim] == 0:
        return fnp.zeros_like(x)  # nothing to normalise (SciPy's max-shift raises there)
    return keep_float_dtype(op(x, axis=dim), x)


def softmin(input: Any, dim: int | None = None, _stacklevel: int = 3,
            dtype: Any = None) -> Any:
    """softmax(-x) along ``dim`` (without it, PyTorch's deprecated implicit choice and
    warning); ``dtype=`` casts the input first.

    >>> import numpy as np
    >>> softmin(np.array([0.0, 0.0]), dim=0)
    array([0.5, 0.5])
    """
    return softmax_family(lambda x, axis: fsp.softmax(-x, axis=axis), input, dim, dtype,
                          "softmin")


def softshrink(input: Any, lambd: float = 0.5) -> Any:
    """x - lambd if x > lambd, x + lambd if x < -lambd, else 0.

    >>> import numpy as np
    >>> softshrink(np.array([-1.0, 0.2, 1.0]))
    array([-0.5,  0. ,  0.5])
    """
    if lambd < 0:
        raise ValueError(f"softshrink: lambd must be non-negative, got {lambd}")
    # NaN takes the last branch: it stays NaN, as PyTorch.
    return fnp.where((input >= -lambd) & (input <= lambd), input * 0,
                     fnp.where(input > lambd, input - lambd, input + lambd))


def hardshrink(input: Any, lambd: float = 0.5) -> Any:
    """x if |x| > lambd else 0.

    >>> import numpy as np
    >>> hardshrink(np.array([-1.0, 0.2, 1.0]))
    array([-1.,  0.,  1.])
    """
    return fnp.where((input >= -lambd) & (input <= lambd), _zero(input), input)  # NaN stays


def tanhshrink(input: Any) -> Any:
    """x - tanh(x).

    >>> import numpy as np
    >>> tanhshrink(np.array([0.0]))
    array([0.])
    """
    return input - fnp.tanh(input)


def threshold(input: Any, threshold: float, value: float, inplace: bool = False) -> Any:
    """x if x > threshold else value.

    >>> import numpy as np
    >>> threshold(np.array([0.5, 2.0]), 1.0, -1.0)
    array([-1.,  2.])
    """
    return fnp.where(input <= threshold, fnp.full_like(input, value, shape=()), input)


# -- normalisation ---------------------------------------------------------------------------


def instance_norm(input: Any, running_mean: Any = None, running_var: Any = None,
                  weight: Any = None, bias: Any = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Any:
    """Normalise each ``(n, c)`` slice of ``(N, C, *S)`` over its spatial axes (biased
    variance), then per-channel affine. ``use_input_stats=False`` normalises with the running
    statistics instead. Pure: the running statistics are not updated (``InstanceNorm*d``
    does that).

    >>> import numpy as np
    >>> np.round(instance_norm(np.array([[[1.0, 3.0]]])), 3)
    array([[[-1.,  1.]]])
    """
    if fnp.ndim(input) < 3:
        raise ValueError(f"instance_norm: expected input (N, C, *spatial) with at least 3 "
                         f"dims, got shape {tuple(fnp.shape(input))}")
    from funcgrad_nn._convolution import norm_params_dtype  # (it imports this module's users)
    cdt = norm_params_dtype("instance_norm", input, weight, bias)
    if cdt is not None:  # float16 with float32 parameters: PyTorch computes in float32
        def cast(v: Any) -> Any:
            return None if v is None else fnp.asarray(v).astype(cdt)

        return instance_norm(input.astype(cdt), cast(running_mean), cast(running_var),
                             cast(weight), cast(bias), use_input_stats, momentum,
                             eps).astype(input.dtype)
    c = fnp.shape(input)[1]
    cshape = (1, c) + (1,) * (fnp.ndim(input) - 2)
    if use_input_stats:
        axes = tuple(range(2, fnp.ndim(input)))
        if math.prod(fnp.shape(input)[2:]) <= 1:
            # One value per instance normalises to 0 whatever it is: PyTorch refuses.
            raise ValueError(f"instance_norm: expected more than 1 spatial element when "
                             f"using the input's statistics, got shape "
                             f"{tuple(fnp.shape(input))}")
        mean = fnp.mean(input, axis=axes, keepdims=True)
        centered = input - mean
        var = fnp.mean(centered * centered, axis=axes, keepdims=True)
        out = centered / fnp.sqrt(var + eps)
    else:
        if running_mean is None or running_var is None:
            raise ValueError("instance_norm: use_input_stats=False needs running_mean and "
                             "running_var")
        out = (input - fnp.reshape(running_mean, cshape)) / fnp.sqrt(
            fnp.reshape(running_var, cshape) + eps)
    if weight is not None:
        out = out * fnp.reshape(weight, cshape)
    if bias is not None:
        out = out + fnp.reshape(bias, cshape)
    return out


def rms_norm(input: Any, normalized_shape: int | Sequence[int], weight: Any = None,
             eps: float | None = None) -> Any:
    """x / sqrt(mean(x**2) + eps) over the trailing ``normalized_shape`` dims, times
    ``weight``; ``eps=None`` uses the machine epsilon of the dtype it computes in (as
    PyTorch: float32's for a float16 input, which is computed in float32).

    >>> import numpy as np
    >>> np.round(rms_norm(np.array([[3.0, 4.0]]), 2), 4)
    array([[0.8485, 1.1314]])
    """
    input, weight = autocast_inputs("rms_norm", input, weight)
    if isinstance(normalized_shape, (int, numpy.integer)):
        normalized_shape = (int(normalized_shape),)
    shape = tuple(normalized_shape)
    k = len(shape)
    if tuple(fnp.shape(input)[fnp.ndim(input) - k:]) != shape:
        raise _bad_input(f"rms_norm: input shape {tuple(fnp.shape(input))} does not end with "
                         f"normalized_shape {shape}")
    if eps is None:
        # PyTorch: numeric_limits<opmath_type<scalar_t>>::epsilon(), float32's for half
        dt = input.dtype if numpy.dtype(input.dtype).kind == "f" else numpy.float32
        dt = numpy.float32 if numpy.dtype(dt) == numpy.float16 else dt
        eps = float(numpy.finfo(dt).eps)
    axes = tuple(range(fnp.ndim(input) - k, fnp.ndim(input)))
    dt = numpy.dtype(input.dtype)
    if dt == numpy.float16:  # PyTorch computes a half input in float32 ...
        return rms_norm(input.astype(numpy.float32), shape, weight, eps).astype(dt)
    out = input / fnp.sqrt(fnp.mean(input * input, axis=axes, keepdims=True) + eps)
    out = out if weight is None else out * weight
    # ... and returns the input's dtype whatever the weight's (type_as(input) in its
    # composite kernel): a float32 input to a float64 RMSNorm stays float32.
    return out.astype(dt) if dt.kind == "f" and numpy.dtype(out.dtype) != dt else out


def local_response_norm(input: Any, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Any:
    """x / (k + alpha * mean of x**2 over ``size`` neighbouring channels)**beta, PyTorch's
    formula (the window is zero-padded by ``size // 2`` before and ``(size - 1) // 2`` after).

    >>> import numpy as np
    >>> local_response_norm(np.ones((1, 3, 2)), 2).shape
    (1, 3, 2)
    """
    (input,) = autocast_inputs("local_response_norm", input)
    if fnp.ndim(input) < 3:
        raise ValueError(f"local_response_norm: expected input (N, C, *spatial) with at least "
                         f"3 dims, got shape {tuple(fnp.shape(input))}")
    shape = tuple(fnp.shape(input))
    n, c = shape[:2]
    sq = fnp.reshape(input * input, (n, 1, c, math.prod(shape[2:])))  # (no -1: n may be 0)
    sq = fnp.pad(sq, ((0, 0), (0, 0), (size // 2, (size - 1) // 2), (0, 0)))
    from funcgrad_nn._convolution import avg_pool2d
    div = fnp.reshape(avg_pool2d(sq, (size, 1), stride=1), shape)
    return input / (div * alpha + k) ** beta


# -- distances -------------------------------------------------------------------------------


def normalize(input: Any, p: float = 2.0, dim: int = 1, eps: float = 1e-12,
              out: Any = None) -> Any:
    """x / max(||x||_p, eps) along ``dim``; with ``out`` (a concrete writable array of the
    result's shape, as PyTorch's ``out=``) the result is written into it and it is returned.

    >>> import numpy as np
    >>> normalize(np.array([[3.0, 4.0]]))
    array([[0.6, 0.8]])
    >>> buf = np.zeros((1, 2)); normalize(np.array([[3.0, 4.0]]), out=buf) is buf, buf
    (True, array([[0.6, 0.8]]))
    """
    (input,) = autocast_inputs("normalize", input)
    dim = check_dim("normalize", dim, fnp.ndim(input))
    norm = _pnorm(input, p, dim if fnp.ndim(input) else None, keepdims=True)
    result = input / fnp.maximum(norm, eps)
    if out is None:
        return result
    if funcgrad.core.is_tracer(out) or not hasattr(out, "__setitem__") or (
            isinstance(out, numpy.ndarray) and not out.flags.writeable):
        raise TypeError("normalize: out= must be a concrete writable array (arrays under "
                        "grad/jit/vmap are immutable); use the returned value instead")
    if tuple(fnp.shape(out)) != tuple(fnp.shape(result)):
        raise _bad_input(f"normalize: out has shape {tuple(fnp.shape(out))}, the result "
                         f"{tuple(fnp.shape(result))}")
    out[...] = result
    return out


def _pnorm(x: Any, p: float, dim: Any, keepdims: bool = False) -> Any:
    if numpy.dtype(x.dtype) == numpy.float16:
        # PyTorch accumulates a half norm in float32 (its opmath type) and returns half: the
        # squares of values above 256 overflow float16.
        return _pnorm(x.astype(numpy.float32), p, dim, keepdims).astype(numpy.float16)
    a = fnp.abs(x)
    if p == 2:
        # sqrt of the sum of squares has an infinite derivative at 0; PyTorch's norm
        # backward gives 0 there (its subgradient), so guard the zero case.
        s = fnp.sum(x * x, axis=dim, keepdims=keepdims)
        safe = fnp.where(s > 0, s, fnp.ones_like(s))
        return fnp.where(s > 0, fnp.sqrt(safe), s * 0)
    if p == 1:
        return fnp.sum(a, axis=dim, keepdims=keepdims)
    if p == math.inf:
        return fnp.max(a, axis=dim, keepdims=keepdims)
    if p == -math.inf:
        return fnp.min(a, axis=dim, keepdims=keepdims)
    if p == 0:
        return fnp.sum((a != 0).astype(x.dtype), axis=dim, keepdims=keepdims)
    # |x|**p has an infinite derivative at 0 for p < 1; PyTorch's is 0 there.
    pos = a > 0
    s = fnp.sum(fnp.where(pos, fnp.where(pos, a, 1) ** p, 0), axis=dim, keepdims=keepdims)
    safe = fnp.where(s > 0, s, fnp.ones_like(s))
    return fnp.where(s > 0, safe ** (1.0 / p), s * 0)


def cosine_similarity(x1: Any, x2: Any, dim: int = 1, eps: float = 1e-8) -> Any:
    """sum(x1 / max(||x1||, eps) * x2 / max(||x2||, eps)) along ``dim`` (broadcasting),
    PyTorch's formula: each norm is clamped separately (for the value; the gradient is the
    unclamped norm's, as PyTorch's).

    >>> import numpy as np
    >>> cosine_similarity(np.array([[1.0, 0.0]]), np.array([[1.0, 1.0]])).round(4)
    array([0.7071])
    """
    x1, x2 = autocast_inputs("cosine_similarity", x1, x2)
    try:
        shape = numpy.broadcast_shapes(tuple(fnp.shape(x1)), tuple(fnp.shape(x2)))
    except ValueError:
        raise _bad_input(f"cosine_similarity: shapes {tuple(fnp.shape(x1))} and "
                         f"{tuple(fnp.shape(x2))} do not broadcast") from None
    dim = check_dim("cosine_similarity", dim, len(shape))
    x1 = fnp.broadcast_to(x1, shape)
    x2 = fnp.broadcast_to(x2, shape)
    return fnp.sum((x1 / _clamped_norm(x1, dim, eps)) * (x2 / _clamped_norm(x2, dim, eps)),
                   axis=dim)


def _clamped_norm(x: Any, dim: int, eps: float) -> Any:
    # PyTorch clamps the norm in place under no_grad: the value is max(||x||, eps), the
    # derivative that of the unclamped norm (so a norm below eps still passes a gradient).
    # (Selected with where rather than n + stop_gradient(max(n, eps) - n), which is NaN for
    # an overflowing norm: PyTorch's clamp keeps inf, and x / inf is 0.)
    n = _pnorm(x, 2, dim, keepdims=True)
    return fnp.where(n < eps, (n - funcgrad.stop_gradient(n)) + eps, n).astype(n.dtype)


def pairwise_distance(x1: Any, x2: Any, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Any:
    """||x1 - x2 + eps||_p over the last dim (PyTorch adds ``eps`` to the difference).

    >>> import numpy as np
    >>> pairwise_distance(np.array([[0.0, 0.0]]), np.array([[3.0, 4.0]]), eps=0.0)
    array([5.])
    """
    d = x1 - x2 + eps
    return _pnorm(d, p, -1, keepdims=keepdim)



#: torch.cdist's compute modes: whether p=2 distances come from one matrix product
#: (||a||^2 + ||b||^2 - 2 a.b, fast, less exact for close points) or from the differences
_CDIST_MODES = {
    "use_mm_for_euclid_dist_if_necessary": lambda r1, r2: r1 > 25 or r2 > 25,
    "use_mm_for_euclid_dist": lambda r1, r2: True,
    "donot_use_mm_for_euclid_dist": lambda r1, r2: False,
}


def _euclid_by_matmul(x1: Any, x2: Any) -> Any:
    # PyTorch's _euclidean_dist: one product of [-2 x1, ||x1||^2, 1] and [x2, 1, ||x2||^2],
    # clamped at 0 (rounding can make it negative) before the square root; where the
    # clamp binds the gradient is 0, as PyTorch's backward masks res == 0.
    n1 = fnp.sum(x1 * x1, axis=-1, keepdims=True)
    n2 = fnp.sum(x2 * x2, axis=-1, keepdims=True)
    a = fnp.concatenate([x1 * -2, n1, fnp.ones_like(n1)], axis=-1)
    b = fnp.concatenate([x2, fnp.ones_like(n2), n2], axis=-1)
    sq = fnp.matmul(a, fnp.swapaxes(b, -1, -2))
    pos = sq > 0
    return fnp.where(pos, fnp.sqrt(fnp.where(pos, sq, fnp.ones_like(sq))), fnp.zeros_like(sq))


def cdist(x1: Any, x2: Any, p: float = 2.0,
          compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Any:
    """p-norm distances between each row of ``x1`` ``(B..., P, M)`` and each row of ``x2``
    ``(B..., R, M)``: ``(B..., P, R)``, the batch dimensions broadcast (``torch.cdist``).

    ``p`` is any non-negative number or ``inf`` (``0`` counts differing entries). For
    ``p=2``, ``compute_mode`` says, as PyTorch's, whether the distances come from one matrix
    product (``"use_mm_for_euclid_dist"``; by default when ``P > 25`` or ``R > 25``: faster
    for many rows, but close points lose digits to cancellation) or from the differences
    (``"donot_use_mm_for_euclid_dist"``). Gradients are PyTorch's: 0 at coincident rows,
    and for ``p=inf`` every tied largest difference gets the whole gradient.

    >>> import numpy as np
    >>> cdist(np.array([[0.0, 0.0], [1.0, 1.0]]), np.array([[3.0, 4.0]]))
    array([[5.        ],
           [3.60555128]])
    >>> cdist(np.array([[0.0, 0.0]]), np.array([[3.0, 4.0]]), p=1)
    array([[7.]])
    """
    x1, x2 = autocast_inputs("cdist", x1, x2)
    use_mm = _CDIST_MODES.get(compute_mode) if isinstance(compute_mode, str) else None
    if use_mm is None:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode (one of "
                         f"{', '.join(map(repr, _CDIST_MODES))})")
    for name, x in (("X1", x1), ("X2", x2)):
        if fnp.ndim(x) < 2:
            raise _bad_input(f"cdist only supports at least 2D tensors, {name} got: "
                             f"{fnp.ndim(x)}D")
        if numpy.dtype(x.dtype).kind != "f":
            raise _bad_input(f"cdist only supports floating-point dtypes, {name} got: "
                             f"{numpy.dtype(x.dtype)}")
    if numpy.dtype(x1.dtype) != numpy.dtype(x2.dtype):
        raise _bad_input(f"cdist: X1 and X2 must have the same dtype, got "
                         f"{numpy.dtype(x1.dtype)} and {numpy.dtype(x2.dtype)}")
    s1, s2 = tuple(fnp.shape(x1)), tuple(fnp.shape(x2))
    if s1[-1] != s2[-1]:
        raise _bad_input(f"X1 and X2 must have the same number of columns. X1: {s1[-1]} "
                         f"X2: {s2[-1]}")
    if not p >= 0:
        raise _bad_input(f"cdist only supports non-negative p values, got {p}")
    try:
        batch = numpy.broadcast_shapes(s1[:-2], s2[:-2])
    except ValueError:
        raise _bad_input(f"cdist: the batch dimensions of X1 {s1} and X2 {s2} do not "
                         "broadcast") from None
    (r1, m), r2 = s1[-2:], s2[-2]
    x1 = fnp.broadcast_to(x1, batch + (r1, m))
    x2 = fnp.broadcast_to(x2, batch + (r2, m))
    if m == 0:  # no coordinates: every distance is 0 (PyTorch's, for any p)
        return fnp.zeros_like(x1, shape=batch + (r1, r2))
    if p == 2 and use_mm(r1, r2):
        return _euclid_by_matmul(x1, x2)
    diff = x1[..., :, None, :] - x2[..., None, :, :]
    if p == math.inf:
        return _inf_norm_ties_share_all(diff)
    return _pnorm(diff, p, -1)


def _inf_norm_ties_share_all(diff: Any) -> Any:
    # PyTorch's pdist/cdist backward for p=inf gives every tied maximum the whole gradient
    # (sign(diff) where |diff| == dist), where a max (and pairwise_distance) shares it:
    # the value is the max, the derivative the sum of the ties' |diff| derivatives.
    a = fnp.abs(diff)
    top = funcgrad.stop_gradient(fnp.max(a, axis=-1, keepdims=True))
    ties = funcgrad.stop_gradient(a == top)
    return top[..., 0] + fnp.sum(fnp.where(ties, a - funcgrad.stop_gradient(a), 0), axis=-1)


def pdist(input: Any, p: float = 2.0) -> Any:
    """p-norm distances between the rows of an ``(N, M)`` input, condensed: pairs ``(i, j)``
    with ``i < j`` in row-major order, ``N * (N - 1) / 2`` of them (PyTorch's and SciPy's
    layout). Identical rows have distance 0 and gradient 0 there.

    >>> import numpy as np
    >>> pdist(np.array([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]]))
    array([5.        , 1.        , 4.24264069])
    """
    (input,) = autocast_inputs("pdist", input)
    if fnp.ndim(input) != 2:
        raise _bad_input(f"pdist: only supports 2D tensors, got: {fnp.ndim(input)}D")
    if p < 0:
        raise ValueError(f"pdist: only supports non-negative p values, got {p}")
    from funcgrad_nn.functional import _on_device_of
    n = fnp.shape(input)[0]
    i, j = numpy.triu_indices(n, 1)
    rows_i = fnp.take(input, _on_device_of(i, input), axis=0)
    rows_j = fnp.take(input, _on_device_of(j, input), axis=0)
    diff = rows_i - rows_j
    if p == math.inf:
        return _inf_norm_ties_share_all(diff)
    return _pnorm(diff, p, -1)
