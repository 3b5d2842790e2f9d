"""``jax.nn``: activation functions, softmax and friends, ``one_hot``, attention, and
:mod:`funcgrad.nn.initializers`.

The functions follow ``jax.nn``'s definitions (names, defaults, the derivatives JAX chooses at
kinks: ``relu`` has derivative 0 at 0, ``relu6`` 0 at 0 and 6), built on ``funcgrad.numpy``,
so they differentiate, batch and jit. funcgrad_nn has the PyTorch-named equivalents
(``funcgrad_nn.functional``).

Example:
    >>> import numpy as np, funcgrad, funcgrad.nn as nn
    >>> nn.relu(np.array([-1.0, 2.0]))
    array([0., 2.])
    >>> funcgrad.grad(lambda x: nn.softplus(x))(0.0)
    array(0.5)
    >>> nn.one_hot(np.array([0, 2]), 3)
    array([[1., 0., 0.],
           [0., 0., 1.]])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy

from funcgrad import lax as _lax
from funcgrad import numpy as fnp
from funcgrad.nn import initializers as initializers
from funcgrad.ops.activations import relu as _relu
from funcgrad.ops.custom_derivatives import custom_jvp
from funcgrad.scipy import special as _special

__all__ = [
    "celu", "dot_product_attention", "elu", "gelu", "glu", "hard_sigmoid", "hard_silu",
    "hard_swish", "hard_tanh", "identity", "initializers", "leaky_relu", "log1mexp",
    "log_sigmoid", "log_softmax", "logmeanexp", "logsumexp", "mish", "one_hot", "relu", "relu6", "selu", "sigmoid", "silu",
    "soft_sign", "softmax", "softplus", "sparse_plus", "sparse_sigmoid", "squareplus",
    "standardize", "swish", "tanh",
]


def relu(x: Any) -> Any:
    """``max(x, 0)``; the derivative at 0 is 0 (``jax.nn.relu``).

    Example:
        >>> import numpy as np
        >>> relu(np.array([-2.0, 0.0, 3.0]))
        array([0., 0., 3.])
    """
    return _relu(fnp.asarray(x))


@custom_jvp
def relu6(x: Any) -> Any:
    """``min(max(x, 0), 6)``; the derivative is 0 at 0 and at 6 (``jax.nn.relu6``).

    Example:
        >>> import numpy as np
        >>> relu6(np.array([-1.0, 3.0, 7.0]))
        array([0., 3., 6.])
    """
    return fnp.minimum(fnp.maximum(x, 0), 6.0)


relu6.defjvps(lambda g, ans, x: fnp.where((x > 0) & (x < 6), g, fnp.zeros_like(g)))


def sigmoid(x: Any) -> Any:
    """``1 / (1 + exp(-x))`` (``jax.nn.sigmoid``).

    Example:
        >>> sigmoid(0.0)
        array(0.5)
    """
    return _special.expit(fnp.asarray(x))


def softplus(x: Any) -> Any:
    """``log(1 + exp(x))``, computed as ``logaddexp(x, 0)`` (``jax.nn.softplus``).

    Example:
        >>> import numpy as np
        >>> np.round(softplus(np.array([0.0, 100.0])), 4)
        array([  0.6931, 100.    ])
    """
    return fnp.logaddexp(x, 0)


def soft_sign(x: Any) -> Any:
    """``x / (|x| + 1)`` (``jax.nn.soft_sign``).

    Example:
        >>> soft_sign(1.0)
        array(0.5)
    """
    x = fnp.asarray(x)
    return fnp.divide(x, fnp.add(fnp.abs(x), 1))


def silu(x: Any) -> Any:
    """``x * sigmoid(x)`` (``jax.nn.silu``, also ``swish``).

    Example:
        >>> round(float(silu(1.0)), 4)
        0.7311
    """
    x = fnp.asarray(x)
    return x * sigmoid(x)


swish = silu


def log_sigmoid(x: Any) -> Any:
    """``log(sigmoid(x)) = -softplus(-x)`` (``jax.nn.log_sigmoid``).

    Example:
        >>> round(float(log_sigmoid(0.0)), 4)
        -0.6931
    """
    return -softplus(-fnp.asarray(x))


def elu(x: Any, alpha: Any = 1.0) -> Any:
    """``x`` where ``x > 0``, else ``alpha * (exp(x) - 1)`` (``jax.nn.elu``).

    Example:
        >>> import numpy as np
        >>> np.round(elu(np.array([-1.0, 2.0])), 4)
        array([-0.6321,  2.    ])
    """
    x = fnp.asarray(x)
    safe_x = fnp.where(x > 0, 0.0, x)  # exp never sees a large x (its derivative stays finite)
    return fnp.where(x > 0, x, alpha * fnp.expm1(safe_x))


def leaky_relu(x: Any, negative_slope: Any = 1e-2) -> Any:
    """``x`` where ``x >= 0``, else ``negative_slope * x`` (``jax.nn.leaky_relu``).

    Example:
        >>> import numpy as np
        >>> leaky_relu(np.array([-1.0, 2.0]), 0.1)
        array([-0.1,  2. ])
    """
    x = fnp.asarray(x)
    return fnp.where(x >= 0, x, negative_slope * x)


def hard_tanh(x: Any) -> Any:
    """``x`` clipped to ``[-1, 1]`` (``jax.nn.hard_tanh``).

    Example:
        >>> import numpy as np
        >>> hard_tanh(np.array([-3.0, 0.5, 2.0]))
        array([-1. ,  0.5,  1. ])
    """
    x = fnp.asarray(x)
    return fnp.where(x > 1, 1, fnp.where(x < -1, -1, x)).astype(x.dtype)


def celu(x: Any, alpha: Any = 1.0) -> Any:
    """``max(x, 0) + alpha * expm1(min(x, 0) / alpha)`` (``jax.nn.celu``).

    Example:
        >>> import numpy as np
        >>> np.round(celu(np.array([-1.0, 2.0]), 2.0), 4)
        array([-0.7869,  2.    ])
    """
    x = fnp.asarray(x)
    return fnp.maximum(x, 0.0) + alpha * fnp.expm1(fnp.minimum(x, 0.0) / alpha)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(x: Any) -> Any:
    """Scaled ELU, ``scale * elu(x, alpha)`` with the constants of Klambauer et al.
    (``jax.nn.selu``).

    Example:
        >>> import numpy as np
        >>> np.round(selu(np.array([-1.0, 1.0])), 4)
        array([-1.1113,  1.0507])
    """
    return _SELU_SCALE * elu(x, _SELU_ALPHA)


def gelu(x: Any, approximate: bool = True) -> Any:
    """Gaussian error linear unit: ``x * Phi(x)``; by default (as ``jax.nn.gelu``) the tanh
    approximation, ``approximate=False`` the exact erf form.

    Example:
        >>> round(float(gelu(1.0)), 6), round(float(gelu(1.0, approximate=False)), 6)
        (0.841192, 0.841345)
    """
    x = fnp.asarray(x)
    if approximate:
        cdf = 0.5 * (1.0 + fnp.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * (x ** 3))))
        return x * cdf
    return (x * (_special.erf(x / math.sqrt(2)) + 1) / 2).astype(x.dtype)


def glu(x: Any, axis: int = -1) -> Any:
    """Gated linear unit: the first half of ``x`` along ``axis`` times the sigmoid of the
    second (``jax.nn.glu``); that axis must have an even size.

    Example:
        >>> import numpy as np
        >>> np.round(glu(np.array([1.0, 2.0, 0.0, 100.0])), 4)
        array([0.5, 2. ])
    """
    x = fnp.asarray(x)
    size = x.shape[axis]
    if size % 2:
        raise ValueError(f"glu: axis {axis} of x (shape {x.shape}) must have an even size, "
                         f"got {size}")
    x1, x2 = fnp.split(x, 2, axis)
    return x1 * sigmoid(x2)


def hard_sigmoid(x: Any) -> Any:
    """``relu6(x + 3) / 6`` (``jax.nn.hard_sigmoid``).

    Example:
        >>> hard_sigmoid(0.0)
        array(0.5)
    """
    return fnp.divide(relu6(fnp.add(x, 3.0)), 6.0)


def hard_silu(x: Any) -> Any:
    """``x * hard_sigmoid(x)`` (``jax.nn.hard_silu``, also ``hard_swish``).

    Example:
        >>> hard_silu(3.0)
        array(3.)
    """
    return fnp.multiply(x, hard_sigmoid(x))


hard_swish = hard_silu


def tanh(x: Any) -> Any:
    """Hyperbolic tangent (``jax.nn.tanh``).

    Example:
        >>> tanh(0.0)
        array(0.)
    """
    return fnp.tanh(x)


def mish(x: Any) -> Any:
    """``x * tanh(softplus(x))`` (``jax.nn.mish``).

    Example:
        >>> round(float(mish(1.0)), 4)
        0.8651
    """
    x = fnp.asarray(x)
    return x * fnp.tanh(softplus(x))


def sparse_plus(x: Any) -> Any:
    """0 for ``x <= -1``, ``x`` for ``x >= 1``, ``(x + 1)**2 / 4`` between
    (``jax.nn.sparse_plus``).

    Example:
        >>> import numpy as np
        >>> sparse_plus(np.array([-2.0, 0.0, 2.0]))
        array([0.  , 0.25, 2.  ])
    """
    x = fnp.asarray(x)
    return fnp.where(x <= -1.0, fnp.zeros_like(x),
                     fnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


def sparse_sigmoid(x: Any) -> Any:
    """``clip(x + 1, 0, 2) / 2`` (``jax.nn.sparse_sigmoid``).

    Example:
        >>> import numpy as np
        >>> sparse_sigmoid(np.array([-2.0, 0.0, 2.0]))
        array([0. , 0.5, 1. ])
    """
    return 0.5 * fnp.clip(fnp.asarray(x) + 1.0, 0.0, 2.0)


def squareplus(x: Any, b: Any = 4) -> Any:
    """``(x + sqrt(x**2 + b)) / 2`` (``jax.nn.squareplus``).

    Example:
        >>> squareplus(0.0)
        array(1.)
    """
    x = fnp.asarray(x)
    return fnp.divide(fnp.add(x, fnp.sqrt(fnp.add(fnp.square(x), b))), 2)


def log1mexp(x: Any) -> Any:
    """``log(1 - exp(-x))`` for ``x > 0``, stably: ``log(-expm1(-x))`` below ``log 2`` and
    ``log1p(-exp(-x))`` above (``jax.nn.log1mexp``).

    Example:
        >>> round(float(log1mexp(2.0)), 6)
        -0.145413
    """
    x = fnp.asarray(x)
    return fnp.where(x < math.log(2), fnp.log(-fnp.expm1(-x)), fnp.log1p(-fnp.exp(-x)))


def _max_for_softmax(x: Any, axis: Any, where: Any) -> Any:
    if where is None:
        return fnp.max(x, axis, keepdims=True)
    return fnp.max(x, axis, where=where, initial=-numpy.inf, keepdims=True)


def _masked_shift(x: Any, x_max: Any, where: Any) -> Any:
    # x - max on the kept entries, -inf on the masked ones: masked entries are not shifted, so
    # a row with nothing kept (max -inf) does not compute -inf - -inf (a NaN and NumPy's
    # "invalid value" warning, where XLA computes silently)
    return fnp.where(where, x - x_max, -numpy.inf)


def _nonzero(total: Any) -> Any:
    # the sum over the kept entries is >= 1 (the max contributes exp(0)) or NaN, except for a
    # row with nothing kept: 1 there, whose entries are all masked out afterwards anyway
    return fnp.where(total == 0, fnp.ones_like(total), total)


def softmax(x: Any, axis: int | Sequence[int] | None = -1, where: Any = None) -> Any:
    """``exp(x) / sum(exp(x))`` along ``axis`` (default the last; ``None``: all), computed
    stably; ``where=`` masks entries out (they get 0) (``jax.nn.softmax``).

    Example:
        >>> import numpy as np
        >>> softmax(np.array([0.0, 0.0]))
        array([0.5, 0.5])
        >>> softmax(np.array([1.0, 5.0, 1.0]), where=np.array([True, False, True]))
        array([0.5, 0. , 0.5])
    """
    x = fnp.asarray(x)
    if where is None:
        return _special.softmax(x, axis=axis)
    x_max = _lax.stop_gradient(_max_for_softmax(x, axis, where))
    unnormalized = fnp.exp(_masked_shift(x, x_max, where))
    result = unnormalized / _nonzero(fnp.sum(unnormalized, axis, where=where, keepdims=True))
    return fnp.where(where, result, 0)


def log_softmax(x: Any, axis: int | Sequence[int] | None = -1, where: Any = None) -> Any:
    """``x - logsumexp(x)`` along ``axis`` (default the last; ``None``: all); ``where=`` masks
    entries out (they get ``-inf``) (``jax.nn.log_softmax``).

    Example:
        >>> import numpy as np
        >>> np.round(log_softmax(np.array([0.0, 0.0])), 4)
        array([-0.6931, -0.6931])
    """
    x = fnp.asarray(x)
    if where is None:
        return _special.log_softmax(x, axis=axis)
    x_max = _lax.stop_gradient(_max_for_softmax(x, axis, where))
    shifted = _masked_shift(x, x_max, where)
    total = fnp.sum(fnp.exp(shifted), axis, where=where, keepdims=True)
    result = shifted - fnp.log(_nonzero(total))
    return fnp.where(where, result, -numpy.inf)


logsumexp = _special.logsumexp


def logmeanexp(x: Any, axis: Any = None, where: Any = None, keepdims: bool = False) -> Any:
    """``log(mean(exp(x)))`` over ``axis`` (the elements where ``where`` is True), computed
    stably as ``logsumexp(x) - log(n)`` (``jax.nn.logmeanexp``).

    Example:
        >>> import numpy as np
        >>> round(float(logmeanexp(np.array([1.0, 2.0, 3.0]), where=np.array([True, False, True]))), 6)
        2.433781
    """
    lse = logsumexp(x, axis=axis, where=where, keepdims=keepdims)
    ones = fnp.ones(fnp.shape(x), dtype=fnp.result_type(lse))
    count = fnp.sum(ones, axis=axis, where=where, keepdims=keepdims)
    return fnp.subtract(lse, fnp.log(count))  # (count is made on the default device)


def identity(x: Any) -> Any:
    """``x`` itself, as an array (``jax.nn.identity``: the activation that does nothing).

    Example:
        >>> identity(2.0)
        array(2.)
    """
    return fnp.asarray(x)


def standardize(x: Any, axis: int | Sequence[int] | None = -1, mean: Any = None,
                variance: Any = None, epsilon: Any = 1e-5, where: Any = None, *,
                algorithm: str = "fast") -> Any:
    """``(x - mean) / sqrt(variance + epsilon)`` with the mean and variance over ``axis``
    unless given (``jax.nn.standardize``). ``algorithm`` computes the variance as JAX's:
    ``"fast"`` (the default) as ``mean(x**2) - mean(x)**2`` clipped at 0 (rounding can make
    it negative), ``"stable"`` as ``mean((x - mean)**2)``.

    Example:
        >>> import numpy as np
        >>> np.round(standardize(np.array([1.0, 3.0])), 4)
        array([-1.,  1.])
    """
    if algorithm not in ("fast", "stable"):
        raise ValueError(f"standardize: unknown algorithm {algorithm!r}; expected 'fast' or "
                         "'stable'")
    x = fnp.asarray(x)
    if mean is None:
        mean = fnp.mean(x, axis, keepdims=True, where=where)
    if variance is None:
        if algorithm == "stable":
            variance = fnp.mean(fnp.square(x - mean), axis, keepdims=True, where=where)
        else:
            # E[x**2] - E[x]**2, as JAX (one pass over x), clipped: cancellation may leave it
            # below 0, where rsqrt(variance + epsilon) would be NaN
            variance = fnp.clip(fnp.mean(fnp.square(x), axis, keepdims=True, where=where)
                                - fnp.square(mean), 0)
    return (x - mean) * _lax.rsqrt(variance + epsilon)


def one_hot(x: Any, num_classes: int, *, dtype: Any = None, axis: int | Sequence[int] = -1
            ) -> Any:
    """A one-hot encoding of the integers ``x`` over ``num_classes`` classes, as a new axis
    at ``axis``; entries out of ``[0, num_classes)`` encode as all zeros (``jax.nn.one_hot``).
    ``dtype`` defaults to float64 (NumPy's default float, JAX's with x64 on).

    Example:
        >>> import numpy as np
        >>> one_hot(np.array([1, 5]), 3, dtype=np.int32)
        array([[0, 1, 0],
               [0, 0, 0]], dtype=int32)
    """
    try:
        num_classes = int(num_classes)
    except TypeError:
        raise TypeError(
            "one_hot: num_classes must be a concrete int (it sets the result's shape), got "
            f"{type(num_classes).__name__}; under jit mark it static") from None
    x = fnp.asarray(x)
    dtype = numpy.dtype(numpy.float64 if dtype is None else dtype)
    out_ndim = x.ndim + 1
    out_axis = axis if isinstance(axis, int) else tuple(axis)
    if not isinstance(out_axis, int):
        raise ValueError("one_hot: axis must be an int (named axes are not supported)")
    if not -out_ndim <= out_axis < out_ndim:
        raise ValueError(f"one_hot: axis {axis} is out of range for a result of rank {out_ndim}")
    out_axis %= out_ndim
    classes = fnp.arange(num_classes).reshape(
        (num_classes,) + (1,) * (out_ndim - 1 - out_axis))
    # (funcgrad's equal: the classes are made on the default device, x may be NumPy's)
    return fnp.equal(fnp.expand_dims(x, out_axis), classes).astype(dtype)


def dot_product_attention(query: Any, key: Any, value: Any, bias: Any = None, mask: Any = None,
                          *, scale: float | None = None, is_causal: bool = False,
                          query_seq_lengths: Any = None, key_value_seq_lengths: Any = None,
                          local_window_size: int | tuple[int, int] | None = None,
                          implementation: str | None = None, return_residual: bool = False
                          ) -> Any:
    """Scaled dot-product attention, ``softmax(q k^T * scale + bias, masked) v``
    (``jax.nn.dot_product_attention``).

    ``query`` is ``[B, T, N, H]`` (or ``[T, N, H]``), ``key`` and ``value`` ``[B, S, K, H]``
    with ``N`` a multiple of ``K`` (grouped-query attention); ``bias`` and ``mask`` broadcast to
    ``[B, N, T, S]`` (``mask`` True where attention is allowed); ``scale`` defaults to
    ``1/sqrt(H)``; ``is_causal`` masks the future; ``query_seq_lengths`` and
    ``key_value_seq_lengths`` (``[B]`` integers) mask the padding past each sequence's length
    (query rows past it are zeros); ``local_window_size=(left, right)`` (or one int for both)
    lets query ``t`` see keys ``t - left .. t + right``. Returns ``[B, T, N, H]``, and with
    ``return_residual=True`` also the logits' logsumexp over the keys, ``[B, T, N]`` (not
    differentiated, as JAX's). The logits and
    the softmax are computed in the inputs' precision (JAX computes them in float32 even for
    float64 inputs, so float64 results agree with JAX's to about 1e-7).

    Example:
        >>> import numpy as np
        >>> q = k = v = np.ones((1, 2, 1, 4))
        >>> dot_product_attention(q, k, v).shape
        (1, 2, 1, 4)
    """
    if implementation == "cudnn":
        # JAX's exception where cuDNN is absent (a RuntimeError): funcgrad has no cuDNN kernel
        raise RuntimeError("dot_product_attention: implementation='cudnn' is not available "
                           "(cuDNN is not detected); funcgrad has the 'xla' (reference) "
                           "computation: pass implementation=None or 'xla'")
    if implementation not in (None, "xla"):
        raise ValueError(f"dot_product_attention: Unsupported implementation option: "
                         f"{implementation} (None, 'xla' or 'cudnn')")
    q, k, v = fnp.asarray(query), fnp.asarray(key), fnp.asarray(value)
    unbatched = q.ndim == 3
    if unbatched:
        q, k, v = q[None], k[None], v[None]
    if q.ndim != 4 or k.ndim != 4 or v.ndim != 4:
        raise ValueError("dot_product_attention: query, key and value must all be "
                         f"[B, T, N, H] or [T, N, H]; got shapes {query.shape}, {key.shape}, "
                         f"{value.shape}")
    if k.shape != v.shape:
        raise ValueError(f"dot_product_attention: key {k.shape} and value {v.shape} must have "
                         "the same shape")
    n_heads, kv_heads = q.shape[2], k.shape[2]
    if q.shape[0] != k.shape[0] or q.shape[3] != k.shape[3] or n_heads % kv_heads:
        raise ValueError(
            f"dot_product_attention: query {q.shape} and key {k.shape} need the same batch "
            "size and head size, and the query's number of heads a multiple of the key's")
    if n_heads != kv_heads:
        k = fnp.repeat(k, n_heads // kv_heads, axis=2)
        v = fnp.repeat(v, n_heads // kv_heads, axis=2)
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    logits = fnp.einsum("BTNH,BSNH->BNTS", q, k) * scale
    if bias is not None:
        logits = logits + (fnp.asarray(bias)[None] if unbatched and fnp.ndim(bias) == 3
                           else bias)
    allowed = None
    if mask is not None:
        allowed = fnp.asarray(mask, dtype=bool)
        if unbatched and allowed.ndim == 3:
            allowed = allowed[None]
    t, s = logits.shape[-2], logits.shape[-1]
    if is_causal:
        causal = fnp.tril(fnp.ones((t, s), dtype=bool))
        allowed = causal if allowed is None else allowed & causal
    if local_window_size is not None:
        left, right = ((local_window_size, local_window_size)
                       if isinstance(local_window_size, int) else local_window_size)
        qpos, kpos = fnp.arange(t)[:, None], fnp.arange(s)[None, :]
        window = (qpos <= kpos + left) & (qpos >= kpos - right)
        allowed = window if allowed is None else allowed & window
    q_len = kv_len = None
    for name, lengths in (("query_seq_lengths", query_seq_lengths),
                          ("key_value_seq_lengths", key_value_seq_lengths)):
        if lengths is not None:
            lengths = fnp.asarray(lengths)
            if lengths.shape != (q.shape[0],) or not fnp.issubdtype(lengths.dtype, fnp.integer):
                raise ValueError(f"dot_product_attention: {name} must be integers of shape "
                                 f"({q.shape[0]},) (one per batch element), got "
                                 f"{lengths.dtype}{list(lengths.shape)}")
            if name == "query_seq_lengths":
                q_len = lengths
            else:
                kv_len = lengths
    if q_len is not None or kv_len is not None:
        pad = fnp.ones((q.shape[0], 1, t, s), dtype=bool)
        if q_len is not None:
            pad = pad & (fnp.arange(t)[None, None, :, None] < q_len[:, None, None, None])
        if kv_len is not None:
            pad = pad & (fnp.arange(s)[None, None, None, :] < kv_len[:, None, None, None])
        allowed = pad if allowed is None else allowed & pad
    if allowed is not None:
        # JAX's large negative (not -inf): a fully masked row becomes uniform, never NaN
        big_neg = float(numpy.finfo(numpy.dtype(logits.dtype)).min) * 0.7
        logits = fnp.where(allowed, logits, big_neg)
    probs = softmax(logits, axis=-1)
    out = fnp.einsum("BNTS,BSNH->BTNH", probs, v)
    if q_len is not None:  # query rows past their sequence's end are zeros
        out = out * (fnp.arange(t)[None, :] < q_len[:, None])[:, :, None, None].astype(out.dtype)
    if return_residual:
        lse = fnp.transpose(_lax.stop_gradient(logsumexp(logits, axis=-1)), (0, 2, 1))  # BTN
        return (out[0], lse[0]) if unbatched else (out, lse)
    return out[0] if unbatched else out
