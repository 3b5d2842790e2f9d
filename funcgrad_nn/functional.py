"""``funcgrad_nn.functional`` (``F``): stateless layer functions and losses, PyTorch numerics.

Everything is composed from ``funcgrad.numpy`` operations, so it works on plain arrays and
under every funcgrad transformation (grad, jit, vmap, ...). Arrays keep their dtype (float32
in, float32 out).
PyTorch's ``inplace=`` arguments are accepted and ignored: arrays are never mutated, the
result is a new array.

>>> import numpy as np
>>> import funcgrad_nn.functional as F
>>> logits = np.array([[2.0, 0.0, -1.0]], dtype=np.float32)
>>> round(float(F.cross_entropy(logits, np.array([0]))), 4)
0.1698
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Sequence
from contextvars import ContextVar
from typing import Any

import numpy

import funcgrad
import funcgrad.numpy as fnp
import funcgrad.scipy.special as fsp
from funcgrad.backend import device_of
from funcgrad.core import concrete_or_error, current_trace, is_tracer
from funcgrad.errors import ConcretizationError
from funcgrad.experimental import checkify
from funcgrad.interpreters.batching import BatchTracer
from funcgrad.ops.activations import relu as _relu
from funcgrad_nn import amp
from funcgrad_nn._convolution import check_bias_dtype, norm_params_dtype
from funcgrad_nn._pointwise import (
    celu,
    check_dim,
    elu_family,
    hardtanh,
    keep_float_dtype,
    selu,
    softmax_family,
)
from funcgrad_nn._pointwise import threshold as _threshold
from funcgrad_nn.amp import autocast_inputs
from funcgrad_nn.module import BadInputError

__all__ = [
    "group_norm", "scaled_dot_product_attention",
    "batch_norm", "binary_cross_entropy", "binary_cross_entropy_with_logits",
    "cross_entropy", "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
    "feature_alpha_dropout", "rrelu", "relu_", "elu_", "celu_", "selu_", "leaky_relu_",
    "hardtanh_", "threshold_", "rrelu_", "gumbel_softmax", "bilinear", "elu", "embedding", "gelu", "huber_loss",
    "kl_div", "l1_loss", "layer_norm", "leaky_relu", "linear", "linear_cross_entropy",
    "log_softmax", "logsigmoid",
    "mse_loss", "nll_loss", "one_hot", "relu", "relu6", "sigmoid", "silu",
    "smooth_l1_loss", "softmax", "softplus", "tanh",
    "cosine_embedding_loss", "ctc_loss", "gaussian_nll_loss", "hinge_embedding_loss",
    "margin_ranking_loss", "multi_margin_loss", "multilabel_margin_loss",
    "multilabel_soft_margin_loss", "poisson_nll_loss", "soft_margin_loss",
    "triplet_margin_loss", "triplet_margin_with_distance_loss",
]

_REDUCTIONS = ("none", "mean", "sum")


def _reduce(loss: Any, reduction: str, fname: str) -> Any:
    if reduction == "mean":
        return fnp.mean(loss)
    if reduction == "sum":
        return fnp.sum(loss)
    if reduction == "none":
        # An unbatched loss is 0-d: an array, as PyTorch's 0-d tensor (NumPy's operators on
        # 0-d arrays give scalars).
        return fnp.asarray(loss) if isinstance(loss, numpy.generic) else loss
    raise ValueError(f"{fname}: reduction must be one of {_REDUCTIONS}, got {reduction!r}")


def _check_reduction(reduction: str, fname: str, extra: tuple[str, ...] = ()) -> None:
    if reduction not in _REDUCTIONS + extra:
        raise ValueError(f"{fname}: reduction must be one of {_REDUCTIONS + extra}, "
                         f"got {reduction!r}")


def _same_shape(a: Any, b: Any, fname: str) -> None:
    if tuple(fnp.shape(a)) != tuple(fnp.shape(b)):
        raise ValueError(f"{fname}: input shape {tuple(fnp.shape(a))} and target shape "
                         f"{tuple(fnp.shape(b))} must match")


def _broadcast_target(input: Any, target: Any, fname: str) -> tuple[Any, Any]:
    """``input`` and ``target`` broadcast together, with PyTorch's warning when their shapes
    differ (the regression losses broadcast; a ``(N, 1)`` against ``(N,)`` mix-up is the usual
    cause, hence the warning)."""
    a, b = tuple(fnp.shape(input)), tuple(fnp.shape(target))
    if a == b:
        return input, target
    try:
        shape = numpy.broadcast_shapes(a, b)
    except ValueError:
        raise BadInputError(f"{fname}: input shape {a} and target shape {b} do not broadcast")\
            from None
    warnings.warn(f"{fname}: Using a target size {b} that is different to the input size {a}. "
                  "This will likely lead to incorrect results due to broadcasting. Please "
                  "ensure they have the same size.", UserWarning, stacklevel=3)
    return fnp.broadcast_to(input, shape), fnp.broadcast_to(target, shape)


def _check_broadcast(input: Any, target: Any, fname: str) -> None:
    """PyTorch's RuntimeError (here a ``BadInputError``) for a target that does not broadcast
    against the input, named, instead of the array library's anonymous one."""
    a, b = tuple(fnp.shape(input)), tuple(fnp.shape(target))
    try:
        numpy.broadcast_shapes(a, b)
    except ValueError:
        raise BadInputError(f"{fname}: input shape {a} and target shape {b} do not "
                            f"broadcast") from None


class _InputDtypeError(TypeError, RuntimeError):
    """An argument of a dtype the function refuses (a float class-index target, attention
    operands of different dtypes): a ``TypeError``, and the ``RuntimeError`` PyTorch raises
    there ("expected target dtype to be Long or Byte", "Expected query, key, and value to have
    the same dtype")."""


def _as_input_dtype(x: Any, input: Any, always: bool = False) -> Any:
    """``x`` (a target, class weights) in ``input``'s floating dtype, as PyTorch computes a
    loss: integer and bool targets take the input's dtype (int64 labels do not make a float32
    loss float64, unlike NumPy's promotion), and with ``always`` so do floating ``weight``/
    ``pos_weight`` arrays (a float64 NumPy weight keeps a float32 loss float32)."""
    dt = getattr(input, "dtype", None)
    xdt = getattr(x, "dtype", None)
    if x is None or dt is None or xdt is None or numpy.dtype(dt).kind != "f" \
            or numpy.dtype(xdt) == numpy.dtype(dt):
        return x
    if numpy.dtype(xdt).kind in "biu" or (always and numpy.dtype(xdt).kind == "f"):
        return fnp.asarray(x).astype(dt)
    return x


def _mean_over(total: Any, valid: Any, denom: Any) -> Any:
    """total / denom (the summed weights of the ``valid`` targets), as PyTorch: NaN with a
    zero gradient when every target is ignored (its backward skips them; a plain 0/0 would
    make every input gradient NaN), but a plain 0/0, NaN with NaN gradients, when targets
    count and their class weights sum to 0."""
    empty = ~fnp.any(valid)
    return fnp.where(empty, math.nan, fnp.divide(total, fnp.where(empty, 1, denom)))


def _on_device_of(x: Any, like: Any) -> Any:
    """Host values ``x`` (an index array, lengths) moved to ``like``'s device: device arrays
    (CuPy, the strict test backend) refuse host operands."""
    dev = device_of(like)
    if dev is None:
        dev = getattr(getattr(like, "aval", None), "device", None)
    if dev is None or is_tracer(x) or device_of(x) == dev:
        return x
    # Lists and host arrays too: left as lists they would land on the default device, which
    # need not be ``like``'s.
    return funcgrad.device_put(numpy.asarray(x), dev)


def _host_value(x: Any) -> numpy.ndarray | None:
    """``x`` as a host array when its value is known (not traced), else None."""
    if is_tracer(x):
        return None
    return numpy.asarray(funcgrad.to_numpy(x))


# -- activations -------------------------------------------------------------------------


def relu(input: Any, inplace: bool = False) -> Any:
    """max(x, 0); the derivative at 0 is 0 and NaN stays NaN, as in PyTorch.

    >>> import numpy as np
    >>> relu(np.array([-1.0, 2.0]))
    array([0., 2.])
    """
    return _relu(input)


def relu6(input: Any, inplace: bool = False) -> Any:
    """min(max(x, 0), 6).

    >>> import numpy as np
    >>> relu6(np.array([-1.0, 7.0]))
    array([0., 6.])
    """
    return hardtanh(input, 0.0, 6.0)  # PyTorch's: zero gradient at 0 and at 6


def leaky_relu(input: Any, negative_slope: float = 0.01, inplace: bool = False) -> Any:
    """x if x > 0 else negative_slope * x.

    >>> import numpy as np
    >>> leaky_relu(np.array([-1.0, 2.0]), 0.1)
    array([-0.1,  2. ])
    """
    return fnp.where(input > 0, input, input * negative_slope)


def elu(input: Any, alpha: float = 1.0, inplace: bool = False) -> Any:
    """x if x > 0 else alpha * (exp(x) - 1).

    >>> import numpy as np
    >>> np.round(elu(np.array([-1.0, 2.0])), 4)
    array([-0.6321,  2.    ])
    """
    return elu_family(input, alpha)


def gelu(input: Any, approximate: str = "none") -> Any:
    """Gaussian error linear unit: x * Phi(x) (``approximate="tanh"``: the tanh formula).

    >>> import numpy as np
    >>> np.round(gelu(np.array([1.0])), 4), np.round(gelu(np.array([1.0]), "tanh"), 4)
    (array([0.8413]), array([0.8412]))
    """
    if approximate == "none":
        phi = fsp.erf(input * (1.0 / math.sqrt(2.0)))
        return 0.5 * input * (1.0 + keep_float_dtype(phi, input))
    if approximate == "tanh":
        inner = math.sqrt(2.0 / math.pi) * (input + 0.044715 * input * input * input)
        return 0.5 * input * (1.0 + fnp.tanh(inner))
    raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")


def sigmoid(input: Any) -> Any:
    """1 / (1 + exp(-x)).

    >>> import numpy as np
    >>> sigmoid(np.array([0.0]))
    array([0.5])
    """
    return keep_float_dtype(fsp.expit(input), input)


def logsigmoid(input: Any) -> Any:
    """log(sigmoid(x)), computed stably.

    >>> import numpy as np
    >>> np.round(logsigmoid(np.array([0.0])), 4)
    array([-0.6931])
    """
    return keep_float_dtype(fsp.log_expit(input), input)


def silu(input: Any, inplace: bool = False) -> Any:
    """x * sigmoid(x) (a.k.a. swish).

    >>> import numpy as np
    >>> np.round(silu(np.array([1.0])), 4)
    array([0.7311])
    """
    return input * keep_float_dtype(fsp.expit(input), input)


def tanh(input: Any) -> Any:
    """Hyperbolic tangent.

    >>> import numpy as np
    >>> tanh(np.array([0.0]))
    array([0.])
    """
    return fnp.tanh(input)


def softplus(input: Any, beta: float = 1.0, threshold: float = 20.0) -> Any:
    """log(1 + exp(beta * x)) / beta; linear where beta * x > threshold (as PyTorch).

    >>> import numpy as np
    >>> np.round(softplus(np.array([0.0, 30.0])), 4)
    array([ 0.6931, 30.    ])
    """
    (input,) = autocast_inputs("softplus", input)
    bx = input * beta
    linear = bx > threshold
    safe = fnp.where(linear, 0, bx)  # the log branch never sees +inf (its gradient would be NaN)
    return fnp.where(linear, input, fnp.logaddexp(fnp.zeros_like(bx), safe) / beta)


def softmax(input: Any, dim: int | None = None, _stacklevel: int = 3,
            dtype: Any = None) -> Any:
    """exp(x) / sum(exp(x)) along ``dim`` (without it, PyTorch's deprecated implicit choice
    and warning); ``dtype=`` casts the input first.

    >>> import numpy as np
    >>> softmax(np.array([0.0, 0.0], np.float32), dim=0, dtype=np.float64)
    array([0.5, 0.5])
    """
    return softmax_family(fsp.softmax, input, dim, dtype, "softmax")


def log_softmax(input: Any, dim: int | None = None, _stacklevel: int = 3,
                dtype: Any = None) -> Any:
    """log(softmax(x)) along ``dim`` (without it, PyTorch's deprecated implicit choice and
    warning), computed stably; ``dtype=`` casts the input first.

    >>> import numpy as np
    >>> np.round(log_softmax(np.array([0.0, 0.0]), dim=0), 4)
    array([-0.6931, -0.6931])
    """
    return softmax_family(fsp.log_softmax, input, dim, dtype, "log_softmax")


# -- linear, embedding, normalisation -----------------------------------------------------


def _broadcasts_to(shape: tuple, target: tuple) -> bool:
    """Whether ``shape`` broadcasts to ``target`` without growing it."""
    return len(shape) <= len(target) and all(
        a in (1, b) for a, b in zip(reversed(shape), reversed(target)))


def linear(input: Any, weight: Any, bias: Any = None) -> Any:
    """x @ weight.T + bias, with PyTorch's ``(out_features, in_features)`` weight layout.

    >>> import numpy as np
    >>> linear(np.ones((1, 2)), np.array([[1.0, 2.0]]), np.array([0.5]))
    array([[3.5]])
    """
    input, weight, bias = autocast_inputs("linear", input, weight, bias)
    from funcgrad_nn._convolution import dtype_mismatch

    problem = dtype_mismatch(input, weight)
    if problem is not None:
        raise BadInputError(f"linear: {problem}")
    xs, ws = tuple(fnp.shape(input)), tuple(fnp.shape(weight))
    if not xs or not ws:
        raise BadInputError(f"linear: both arguments to linear need to be at least 1D, but "
                            f"input is {len(xs)}D and weight {len(ws)}D")
    if len(ws) > 2 or (len(ws) == 1 and bias is not None
                        and (len(xs) > 1 or fnp.ndim(bias) > 0)):
        # PyTorch's RuntimeError ("mat2 must be a matrix" / "t() expects ... <= 2 dims").
        raise BadInputError(f"linear: weight must be a matrix (out_features, in_features), "
                            f"got shape {ws}")
    if xs[-1] != ws[-1]:
        # PyTorch's RuntimeError ("mat1 and mat2 shapes cannot be multiplied"), said early.
        raise BadInputError(f"linear: input of shape {xs} does not end in in_features="
                            f"{ws[-1]} of weight {ws} (mat1 and mat2 shapes cannot be "
                            f"multiplied)")
    check_bias_dtype(bias, weight, "linear")
    out_shape = xs[:-1] + ws[:-1]
    if bias is not None and len(xs) > 1 and not _broadcasts_to(tuple(fnp.shape(bias)),
                                                               out_shape):
        raise BadInputError(f"linear: bias of shape {tuple(fnp.shape(bias))} does not "
                            f"broadcast to the output shape {out_shape} (input {xs}, weight "
                            f"{ws})")
    out = fnp.matmul(input, fnp.swapaxes(weight, -1, -2) if fnp.ndim(weight) > 1 else weight)
    if bias is not None:
        out = out + bias
    return out


def bilinear(input1: Any, input2: Any, weight: Any, bias: Any = None) -> Any:
    """y_k = x1 @ weight[k] @ x2 + bias[k] over the last axes, ``weight`` ``(out, in1, in2)``
    (PyTorch's layout; the leading axes of the inputs broadcast).

    >>> import numpy as np
    >>> bilinear(np.ones((1, 2)), np.ones((1, 3)), np.ones((4, 2, 3))).shape
    (1, 4)
    """
    input1, input2, weight, bias = autocast_inputs("bilinear", input1, input2, weight, bias)
    if fnp.ndim(weight) != 3 or fnp.shape(input1)[-1:] != fnp.shape(weight)[1:2] \
            or fnp.shape(input2)[-1:] != fnp.shape(weight)[2:3]:
        raise BadInputError(f"bilinear: weight must be (out, in1, in2) matching input1's and "
                            f"input2's last dims, got weight {tuple(fnp.shape(weight))}, inputs "
                            f"{tuple(fnp.shape(input1))} and {tuple(fnp.shape(input2))}")
    from funcgrad_nn._convolution import dtype_mismatch

    for x in (input1, input2):  # PyTorch: "All tensors must have the same dtype"
        problem = dtype_mismatch(x, weight)
        if problem is not None:
            raise BadInputError(f"bilinear: {problem}")
    check_bias_dtype(bias, weight, "bilinear")
    out = fnp.einsum("...i,oij,...j->...o", input1, weight, input2)
    return out if bias is None else out + bias


def embedding(input: Any, weight: Any, padding_idx: int | None = None,
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Any:
    """Rows of ``weight`` picked by the integer array ``input``.

    Rows at ``padding_idx`` get no gradient (as in PyTorch). With ``max_norm``, each looked-up
    row whose ``norm_type``-norm exceeds it is scaled by ``max_norm / (norm + 1e-7)``, as
    PyTorch's in-place renormalisation; the gradient is PyTorch's too (that of a plain
    lookup of the renormalised table: the scale is not differentiated). This function is
    pure: it does not write the renormalised rows into ``weight`` (``nn.Embedding`` does,
    in eager calls). ``scale_grad_by_freq`` divides each looked-up row's gradient by how often
    its index occurs in ``input``, as PyTorch; ``sparse`` is accepted (gradients are dense
    arrays with the same values).

    >>> import numpy as np
    >>> embedding(np.array([1, 0]), np.array([[0.0, 1.0], [2.0, 3.0]]))
    array([[2., 3.],
           [0., 1.]])
    >>> embedding(np.array([0]), np.array([[3.0, 4.0]]), max_norm=1.0).round(6)
    array([[0.6, 0.8]])
    """
    dt = getattr(input, "dtype", None)
    if dt is None or numpy.dtype(dt).kind not in "iu":
        raise _InputDtypeError(f"embedding: input must be an integer array, got dtype {dt}")
    num = weight.shape[0]
    hv = _host_value(input)
    msg = (f"embedding: index out of range for {num} embeddings: indices must be in "
           f"[0, {num}) (got min {{}}, max {{}})")
    if hv is not None and hv.size and (hv.min() < 0 or hv.max() >= num):
        raise IndexError(msg.format(hv.min(), hv.max()))
    if hv is None:
        _check_when_run(input, num, msg)
    out = fnp.take(weight, input, axis=0)
    if max_norm is not None:
        out = _renorm_rows(out, max_norm, norm_type)
    if scale_grad_by_freq:
        counts = fnp.at(fnp.zeros_like(weight, shape=(num,)))[fnp.ravel(input)].add(1.0, mode="raise")
        freq = fnp.expand_dims(fnp.take(counts, input, axis=0), -1)
        fixed = funcgrad.stop_gradient(out)
        out = fixed + (out - fixed) / freq  # the value is unchanged; the gradient is scaled
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise ValueError(f"embedding: padding_idx must be within num_embeddings "
                             f"[-{num}, {num}), got {padding_idx}")
        if padding_idx < 0:
            padding_idx += num
        pad = fnp.expand_dims(input == padding_idx, -1)
        out = fnp.where(pad, funcgrad.stop_gradient(out), out)
    return out


def _renorm_rows(rows: Any, max_norm: float, norm_type: float) -> Any:
    if isinstance(max_norm, bool) or not isinstance(max_norm, numbers.Real):
        raise TypeError(f"embedding: max_norm must be a number or None, got "
                        f"{type(max_norm).__name__}")
    if isinstance(norm_type, bool) or not isinstance(norm_type, numbers.Real):
        raise TypeError(f"embedding: norm_type must be a number, got "
                        f"{type(norm_type).__name__}")
    p = float(norm_type)
    r = funcgrad.stop_gradient(rows)
    a = fnp.abs(r)
    if p == 2:
        norm = fnp.sqrt(fnp.sum(r * r, axis=-1, keepdims=True))
    elif p == 1:
        norm = fnp.sum(a, axis=-1, keepdims=True)
    elif p == math.inf:
        norm = fnp.max(a, axis=-1, keepdims=True)
    elif p == 0:
        norm = fnp.sum((a != 0).astype(r.dtype), axis=-1, keepdims=True)
    else:
        norm = fnp.sum(a ** p, axis=-1, keepdims=True) ** (1.0 / p)
    scale = fnp.where(norm > max_norm, max_norm / (norm + 1e-7), fnp.ones_like(norm))
    # Value of the renormalised rows, gradient of the plain lookup (PyTorch renormalises the
    # table in place under no_grad, so the scale never enters the backward pass);
    # rows - stop_gradient(rows) is exactly 0, so the value is exact.
    return funcgrad.stop_gradient(r * scale) + (rows - r)


def one_hot(tensor: Any, num_classes: int = -1) -> Any:
    """int64 one-hot encoding with a trailing class axis (``num_classes=-1``: max + 1,
    which needs a concrete input).

    >>> import numpy as np
    >>> one_hot(np.array([0, 2]), 3)
    array([[1, 0, 0],
           [0, 0, 1]])
    """
    dt = getattr(tensor, "dtype", None)
    if dt is None or numpy.dtype(dt).kind not in "iu":
        raise _InputDtypeError(f"one_hot: input must be an integer array, got dtype {dt}")
    if num_classes == -1:
        hv = numpy.asarray(funcgrad.to_numpy(concrete_or_error(
            tensor, "one_hot(num_classes=-1) (pass num_classes= under jit/vmap)")))
        if not hv.size:
            raise BadInputError("one_hot: can not infer the number of classes from an empty "
                                "input; pass num_classes=")
        num_classes = int(hv.max()) + 1
    hv = _host_value(tensor)
    msg = (f"one_hot: class values must be in [0, num_classes={num_classes}), got min {{}}, "
           "max {}")
    if hv is not None and hv.size and (hv.min() < 0 or hv.max() >= num_classes):
        raise BadInputError(msg.format(hv.min(), hv.max()))
    if hv is None:
        _check_when_run(tensor, num_classes, msg)
    iota = _iota_like(tensor, num_classes, tensor.dtype)
    return (fnp.expand_dims(tensor, -1) == iota).astype(numpy.int64)


def _check_when_run(indices: Any, n: int, msg: str) -> None:
    """For traced ``indices`` (under jit/vmap): check ``0 <= indices < n`` when the program
    runs (``msg`` formatted with their min and max), as PyTorch's kernels check, where a
    gather would otherwise read a clamped row and give a plausible result."""
    if fnp.size(indices):
        checkify.check(fnp.all((indices >= 0) & (indices < n)), msg, fnp.min(indices),
                       fnp.max(indices))


def _iota_like(x: Any, n: int, dtype: Any) -> Any:
    # Built from ones_like so the counter lives on x's device (no host constant).
    ones = fnp.ones_like(x, dtype=dtype, shape=(n,))
    return fnp.cumsum(ones, dtype=dtype) - 1


def layer_norm(input: Any, normalized_shape: int | Sequence[int], weight: Any = None,
               bias: Any = None, eps: float = 1e-5) -> Any:
    """Normalise over the trailing ``normalized_shape`` dims (biased variance), then scale
    and shift.

    >>> import numpy as np
    >>> np.round(layer_norm(np.array([[1.0, 3.0]]), 2), 3)
    array([[-1.,  1.]])
    """
    input, weight, bias = autocast_inputs("layer_norm", input, weight, bias)
    if isinstance(normalized_shape, (int, numpy.integer)):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(int(n) for n in normalized_shape)
    k = len(normalized_shape)
    if tuple(input.shape[input.ndim - k:]) != normalized_shape:
        raise BadInputError(f"layer_norm: input shape {tuple(input.shape)} does not end with "
                         f"normalized_shape {normalized_shape}")
    cdt = norm_params_dtype("layer_norm", input, weight, bias)
    if cdt is not None:  # float16 with float32 parameters: PyTorch computes in float32
        return layer_norm(input.astype(cdt), normalized_shape, _cast(weight, cdt),
                          _cast(bias, cdt), eps).astype(input.dtype)
    axes = tuple(range(input.ndim - k, input.ndim))
    mean = fnp.mean(input, axis=axes, keepdims=True)
    centered = input - mean
    var = fnp.mean(centered * centered, axis=axes, keepdims=True)
    out = centered / fnp.sqrt(var + eps)
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


def _cast(x: Any, dtype: Any) -> Any:
    """``x`` (a parameter or running statistic, or None) in ``dtype``."""
    return None if x is None else fnp.asarray(x).astype(dtype)


def _channel_shape(x: Any) -> tuple[int, ...]:
    return (1, x.shape[1]) + (1,) * (x.ndim - 2)


def batch_norm(input: Any, running_mean: Any, running_var: Any, weight: Any = None,
               bias: Any = None, training: bool = False, momentum: float = 0.1,
               eps: float = 1e-5) -> Any:
    """Batch normalisation over all axes but the channel axis 1.

    With ``training=True`` the batch statistics (biased variance) normalise; otherwise the
    running ones. Pure: it never updates ``running_mean``/``running_var`` (``BatchNorm1d``
    does that; given with ``training=True``, where PyTorch would update them in place, they
    draw a warning saying so); ``momentum`` is accepted for signature compatibility.

    >>> import numpy as np
    >>> x = np.array([[1.0], [3.0]])
    >>> np.round(batch_norm(x, None, None, training=True), 3)
    array([[-1.],
           [ 1.]])
    """
    if input.ndim < 2:
        raise ValueError(f"batch_norm: expected input with at least 2 dims (N, C, ...), got "
                         f"shape {tuple(input.shape)}")
    cdt = norm_params_dtype("batch_norm", input, weight, bias,
                            *((running_mean, running_var) if not training else ()))
    if cdt is not None:  # float16 with float32 parameters: PyTorch computes in float32
        return batch_norm(input.astype(cdt), _cast(running_mean, cdt), _cast(running_var, cdt),
                          _cast(weight, cdt), _cast(bias, cdt), training, momentum,
                          eps).astype(input.dtype)
    cshape = _channel_shape(input)
    if training and (running_mean is not None or running_var is not None):
        # PyTorch's kernel blends the batch statistics into these in place; a port of a
        # custom norm layer (a GAN's conditional BatchNorm) relying on that would evaluate
        # with statistics that never moved, silently.
        warnings.warn("batch_norm(training=True) does not update running_mean/running_var "
                      "(arrays are values here, PyTorch updates them in place): blend the batch "
                      "statistics into your buffers yourself, e.g. self.running_mean = "
                      "(1 - momentum) * self.running_mean + momentum * x.mean(axis=(0, 2, 3)), "
                      "or use nn.BatchNorm1d/2d/3d", UserWarning, stacklevel=2)
    if training:
        if math.prod(input.shape) == input.shape[1]:
            raise ValueError(f"batch_norm: expected more than 1 value per channel when "
                             f"training, got input shape {tuple(input.shape)}")
        if math.prod(input.shape) == 0:  # no statistics, and an empty output whatever they are
            c = input.shape[1]
            mean, var = fnp.zeros_like(input, shape=(c,)), fnp.ones_like(input, shape=(c,))
        else:
            mean, var = _batch_stats(input)
    else:
        if running_mean is None or running_var is None:
            raise BadInputError("batch_norm: running_mean and running_var are needed when "
                             "training=False")
        mean, var = running_mean, running_var
    out = (input - fnp.reshape(mean, cshape)) / fnp.sqrt(fnp.reshape(var, cshape) + eps)
    if weight is not None:
        out = out * fnp.reshape(weight, cshape)
    if bias is not None:
        out = out + fnp.reshape(bias, cshape)
    return out


def _batch_stats(x: Any) -> tuple[Any, Any]:
    if numpy.dtype(x.dtype) == numpy.float16:  # (in float32, as PyTorch; see batch_norm)
        mean, var = _batch_stats(x.astype(numpy.float32))
        return mean.astype(x.dtype), var.astype(x.dtype)
    axes = (0,) + tuple(range(2, x.ndim))
    mean = fnp.mean(x, axis=axes)
    c = x - fnp.reshape(mean, _channel_shape(x))
    return mean, fnp.mean(c * c, axis=axes)


# -- dropout -------------------------------------------------------------------------------

_M32 = 0xFFFFFFFF


def _mix32(h: Any) -> Any:
    # "lowbias32" integer hash (C. Wellons): a bijection on uint32 with good avalanche.
    h = h ^ (h >> 16)
    h = h * 0x7FEB352D
    h = h ^ (h >> 15)
    h = h * 0x846CA68B
    return h ^ (h >> 16)


def _key_parts(key: Any, like: Any) -> tuple[Any, Any]:
    if isinstance(key, (int, numpy.integer)) and not isinstance(key, bool):
        k = int(key)
        return k & _M32, (k >> 32) & _M32
    shape = tuple(getattr(key, "shape", ()))
    dt = getattr(key, "dtype", None)
    if shape != (2,) or dt is None or numpy.dtype(dt) != numpy.uint32:
        raise TypeError(f"dropout: key must be an int seed or a uint32 array of shape (2,), "
                        f"got {type(key).__name__} shape {shape} dtype {dt}")
    # The key (a module's, on the host) goes where the data lives, traced or not: under jit
    # its words would otherwise meet the data's device in the hash.
    dev = like.aval.device if is_tracer(like) else device_of(like)
    if dev is not None:
        key = funcgrad.device_put(key, dev)
    return key[0], key[1]


def random_uniform(key: Any, like: Any) -> Any:
    """Counter-based uniform [0, 1) samples shaped like ``like`` (its dtype if floating, else
    float32), reproducible from ``key`` and traceable (works under jit/vmap).

    ``key``: an int seed or a uint32 array of shape (2,) (see :func:`split_key`).

    >>> import numpy as np
    >>> u = random_uniform(0, np.zeros(1000, np.float32))
    >>> bool((u >= 0).all() and (u < 1).all()), u.dtype, round(float(u.mean()), 1)
    (True, dtype('float32'), 0.5)
    """
    k0, k1 = _key_parts(key, like)
    n = math.prod(like.shape)
    counter = fnp.reshape(_iota_like(like, n, numpy.uint32), like.shape)
    bits = _mix32(_mix32(counter ^ k0) + k1)
    bits = _mix32(bits ^ 0x9E3779B9)
    dt = like.dtype if numpy.dtype(like.dtype).kind == "f" else numpy.dtype(numpy.float32)
    # As many bits as the dtype's significand holds (24 at most: float32's and the bits a
    # float64 takes here) are exact in it and give values in [0, 1); float16 takes 11 (its
    # 24-bit integers would overflow to inf).
    width = min(numpy.finfo(dt).nmant + 1, 24)
    return (bits >> (32 - width)).astype(dt) * (1.0 / (1 << width))


#: ``funcgrad_nn.func.vmap``'s ``randomness`` while its function runs: ``(mode, index,
#: enclosing state)``, ``index`` the example's position (a value batched by that vmap), else
#: None
vmap_randomness: ContextVar[tuple[str, Any, Any] | None] = ContextVar(
    "funcgrad_nn_vmap_randomness", default=None)


#: ``funcgrad_nn.func.vmap(randomness='same', chunk_size=...)``: ``[draws, position]``, the
#: first chunk's ``split_key`` results, replayed in order by the later chunks (PyTorch
#: restores its generator's state before each chunk, so every chunk draws the same masks
#: and the generator advances as for one unchunked call)
vmap_same_chunks: ContextVar[list | None] = ContextVar("funcgrad_nn_vmap_same_chunks",
                                                       default=None)


def _replayed(draw: Any) -> tuple[Any, Any]:
    """``draw()`` (a pair of keys), or the pair the first chunk drew at this position."""
    chunks = vmap_same_chunks.get()
    if chunks is None:
        return draw()
    draws, pos = chunks
    chunks[1] = pos + 1
    if pos < len(draws) and draws[pos] is not None and _still_traced(draws[pos]):
        return draws[pos]
    out = draw()
    if pos == len(draws):
        draws.append(out)
    return out


def _still_traced(pair: Any) -> bool:
    """Whether the traced keys of ``pair`` belong to traces still running around this draw
    (the jit trace the chunks are unrolled into: yes; a finished chunk's own: no)."""
    live = set()
    trace = current_trace()
    while trace is not None:
        live.add(id(trace))
        trace = trace.parent
    return all(not is_tracer(k) or id(k._trace) in live for k in pair)


def _per_example(key: Any) -> Any:
    """``key`` as ``torch.func.vmap``'s ``randomness`` wants it inside ``func.vmap``: one
    per example for ``'different'`` (the example's index mixed in), as given for ``'same'``;
    ``'error'`` refuses a key shared by every example, as PyTorch refuses any random
    operation. A key already batched along the vmap (a stacked module's) is left alone."""
    state = vmap_randomness.get()
    while state is not None:  # innermost vmap first; nested ones each mix in their index
        mode, index, state = state
        # (index None: a transform mapping no examples of its own, jacfwd's tangent basis)
        if mode == "same" or (type(key) is BatchTracer and index is not None
                              and key._trace is index._trace):
            continue
        if mode == "error":
            raise RuntimeError(
                "vmap: called random operation while in randomness error mode. Please either "
                "use the 'same' or 'different' randomness flags on vmap or perform the "
                "randomness operation out of vmap (a training-mode Dropout's own key, shared "
                "by every example, is such an operation)")
        # hashed per level, so (outer i, inner j) and (outer j, inner i) differ. The index
        # lives with the data, the key with its module, which may stay on the host while
        # the data is on a device (PyTorch's Dropout has no state to move): the key's two
        # words are mixed in as scalars, which meet an array on any device
        idx = index.astype(key.dtype)
        key = _mix32(fnp.stack([idx ^ key[0], fnp.zeros_like(idx) ^ key[1]]))
    return key


def split_key(key: Any) -> tuple[Any, Any]:
    """Two independent uint32[2] keys derived from ``key`` (an int seed or a uint32[2] array).

    Inside ``funcgrad_nn.func.vmap(..., randomness='different')`` the first key differs per
    example (the second, a module's next key, stays shared); ``randomness='error'`` (the
    default) refuses a key shared by every example, as ``torch.func.vmap`` refuses random
    operations.

    >>> import numpy as np
    >>> a, b = split_key(np.array([1, 2], dtype=np.uint32))
    >>> a.dtype, a.shape, bool((a != b).any())
    (dtype('uint32'), (2,), True)
    """
    if isinstance(key, (int, numpy.integer)):
        key = numpy.array([int(key) & _M32, (int(key) >> 32) & _M32], dtype=numpy.uint32)
    def draw() -> tuple[Any, Any]:
        k0, k1 = _key_parts(key, key)
        base = fnp.reshape(_iota_like(key, 4, numpy.uint32), (2, 2))
        out = _mix32(_mix32(base ^ k0) + (k1 ^ 0x85EBCA6B))
        return out[0], out[1]

    first, second = _replayed(draw)
    if vmap_randomness.get() is not None:
        return _per_example(first), second
    return first, second


def dropout(input: Any, p: float = 0.5, training: bool = True, inplace: bool = False, *,
            key: Any = None) -> Any:
    """Zero elements with probability ``p`` and scale the rest by ``1 / (1 - p)``.

    Randomness is explicit: with ``training`` and ``0 < p`` a ``key=`` (int seed or uint32[2]
    array) is required, so results are reproducible and correct under jit (a hidden global
    seed would be frozen into a compiled trace). ``nn.Dropout`` manages a key for you.

    >>> import numpy as np
    >>> y = dropout(np.ones(1000, np.float32), 0.5, key=0)
    >>> sorted(set(y.tolist())), round(float((y == 0).mean()), 1)
    ([0.0, 2.0], 0.5)
    """
    _check_p(p, "dropout")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input * 0
    key = key_or_draw(key, input, "dropout")
    keep = random_uniform(key, input) >= p
    return fnp.where(keep, input * (1.0 / (1.0 - p)), 0)


def _check_p(p: float, fname: str) -> None:
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{fname}: probability has to be between 0 and 1, but got {p}")


def check_host_draw(like: Any, fname: str, arg: str = "key") -> None:
    """Refuse a draw from the global generator where ``like`` is traced by jit/vmap (the
    draw would be frozen into the compiled program), naming ``arg=`` and the modules.

    >>> import numpy as np
    >>> check_host_draw(np.ones(2), "dropout")
    """
    try:
        concrete_or_error(like, f"{fname} without {arg}=")
    except ConcretizationError:
        raise TypeError(
            f"{fname}: under jit/vmap the random draw needs {arg}= (an int seed or a "
            "uint32[2] array): a seed drawn while tracing would be frozen into the compiled "
            "program. Use the module (nn.Dropout, nn.RReLU, nn.MultiheadAttention... keep "
            f"and advance their own key) or pass {arg}=") from None


class NeedsImplicitKey(Exception):  # noqa: N818 (a signal to nn.jit, not an error)
    """Raised while ``nn.jit`` traces a function not yet known to draw random numbers
    without a key: ``nn.jit`` then traces it again with a fresh key per call."""


#: ``nn.jit``'s implicit random key: None outside it; ``PROBE`` while it traces a function
#: not known to need one; else a one-element list holding the traced key, split at each draw
implicit_key: ContextVar[Any] = ContextVar("funcgrad_nn_implicit_key", default=None)
PROBE = "probe"


def key_or_draw(key: Any, like: Any, fname: str, arg: str = "key") -> Any:
    """``key``, or without one a fresh uint32[2] key from the global generator (seeded by
    ``nn.manual_seed``) when ``like`` is a concrete value: PyTorch's ``F.dropout(x, p,
    training=True)`` draws from its global generator. Under ``nn.jit`` the key comes from
    one ``nn.jit`` passes in at every call (drawn from that generator); under plain jit/vmap
    a key drawn while tracing would be frozen into the compiled program (the same mask at
    every call), so there ``key`` is required: the modules (``nn.Dropout``...) keep and
    advance their own.

    >>> import numpy as np
    >>> key_or_draw(7, np.ones(2), "dropout")
    7
    >>> key_or_draw(None, np.ones(2), "dropout").dtype
    dtype('uint32')
    """
    if key is not None:
        return key
    state = implicit_key.get()
    if state == PROBE:
        raise NeedsImplicitKey(fname)
    if state is not None:
        # under nn.jit: a key it passes in at every call, split once per draw in trace order
        sub, state[0] = split_key(state[0])
        return sub
    check_host_draw(like, fname, arg)
    from funcgrad_nn.init import default_generator
    return default_generator().integers(0, 2**32, size=2, dtype=numpy.uint32)


def _feature_keep(input: Any, p: float, key: Any, batched: bool) -> Any:
    """One keep/drop draw per channel: shape (N, C, 1, ...) (or (C, 1, ...) unbatched)."""
    lead = 2 if batched else 1
    shape = tuple(input.shape[:lead]) + (1,) * (input.ndim - lead)
    return random_uniform(key, fnp.zeros_like(input, shape=shape)) >= p


def _feature_dropout(input: Any, p: float, training: bool, key: Any, spatial: int,
                     fname: str) -> Any:
    # PyTorch's dropout1d/2d/3d: whole channels are zeroed; (spatial + 1)-D inputs are
    # unbatched, except dropout2d's 3-D ones (PyTorch treats those as (N, C, L), warning).
    _check_p(p, fname)
    nd = fnp.ndim(input)
    if spatial == 1 and nd not in (2, 3):
        raise BadInputError(f"{fname}: Expected 2D or 3D input, but received a {nd}D input")
    if spatial != 1 and nd not in (spatial + 1, spatial + 2):
        warnings.warn(f"{fname}: Received a {nd}-D input to {fname}, which is deprecated (PyTorch"
                      f"); expected {spatial + 1}D or {spatial + 2}D inputs", UserWarning,
                      stacklevel=3)
    batched = nd != spatial + 1 or (spatial == 2 and nd == 3)
    if spatial == 2 and nd == 3:
        warnings.warn(f"{fname}: Received a 3D input to {fname}; as PyTorch, it is interpreted "
                      "as (N, C, L) (channel-wise 1D dropout; use dropout1d for that)",
                      UserWarning, stacklevel=3)
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input * 0
    key = key_or_draw(key, input, fname)
    keep = _feature_keep(input, p, key, batched and nd > 1)
    return fnp.where(keep, input * (1.0 / (1.0 - p)), 0)


def dropout1d(input: Any, p: float = 0.5, training: bool = True, inplace: bool = False, *,
              key: Any = None) -> Any:
    """Zero whole channels of ``(N, C, L)`` (or unbatched ``(C, L)``) with probability ``p``,
    scaling the rest by ``1 / (1 - p)``; ``key=`` as :func:`dropout`.

    >>> import numpy as np
    >>> y = dropout1d(np.ones((1, 64, 3), np.float32), key=0)
    >>> bool(((y == 0).all(-1) | (y == 2).all(-1)).all())
    True
    """
    return _feature_dropout(input, p, training, key, 1, "dropout1d")


def dropout2d(input: Any, p: float = 0.5, training: bool = True, inplace: bool = False, *,
              key: Any = None) -> Any:
    """Zero whole channels of ``(N, C, H, W)`` (or unbatched ``(C, H, W)``... but a 3-D input
    is ``(N, C, L)``, as PyTorch) with probability ``p``; ``key=`` as :func:`dropout`.

    >>> import numpy as np
    >>> dropout2d(np.ones((2, 4, 3, 3)), training=False).shape
    (2, 4, 3, 3)
    """
    return _feature_dropout(input, p, training, key, 2, "dropout2d")


def dropout3d(input: Any, p: float = 0.5, training: bool = True, inplace: bool = False, *,
              key: Any = None) -> Any:
    """Zero whole channels of ``(N, C, D, H, W)`` (or unbatched ``(C, D, H, W)``) with
    probability ``p``; ``key=`` as :func:`dropout`.

    >>> import numpy as np
    >>> y = dropout3d(np.ones((2, 8, 2, 2, 2)), 0.5, key=1)
    >>> sorted(set(y.ravel().tolist()))
    [0.0, 2.0]
    """
    return _feature_dropout(input, p, training, key, 3, "dropout3d")


_ALPHA_PRIME = 1.7580993408473766  # SELU's scale * alpha: the value a dropped unit takes, negated


def _alpha_dropout(input: Any, p: float, training: bool, key: Any, feature: bool,
                   fname: str) -> Any:
    # PyTorch's formula: dropped units go to SELU's negative saturation, then an affine map
    # a * x + b restores zero mean and unit variance.
    _check_p(p, fname)
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input * 0
    key = key_or_draw(key, input, fname)
    if feature:
        keep = _feature_keep(input, p, key, fnp.ndim(input) > 1)
    else:
        keep = random_uniform(key, input) >= p
    keep = keep.astype(input.dtype)
    a = 1.0 / math.sqrt((_ALPHA_PRIME ** 2 * p + 1) * (1 - p))
    return input * (keep * a) + ((keep - 1) * (_ALPHA_PRIME * a) + _ALPHA_PRIME * a * p)


def alpha_dropout(input: Any, p: float = 0.5, training: bool = False, inplace: bool = False,
                  *, key: Any = None) -> Any:
    """Dropout for SELU networks (keeps zero mean and unit variance); PyTorch's default
    ``training=False``; ``key=`` as :func:`dropout`.

    >>> import numpy as np
    >>> x = np.random.default_rng(0).standard_normal(100000)
    >>> y = alpha_dropout(x, 0.2, training=True, key=0)
    >>> abs(float(y.mean())) < 0.05, round(float(y.std()), 1)
    (True, 1.0)
    """
    return _alpha_dropout(input, p, training, key, False, "alpha_dropout")


def feature_alpha_dropout(input: Any, p: float = 0.5, training: bool = False,
                          inplace: bool = False, *, key: Any = None) -> Any:
    """:func:`alpha_dropout` of whole channels (axis 1; one draw per ``(n, c)``).

    >>> import numpy as np
    >>> feature_alpha_dropout(np.ones((2, 3, 4)), 0.5).shape
    (2, 3, 4)
    """
    return _alpha_dropout(input, p, training, key, True, "feature_alpha_dropout")


def rrelu(input: Any, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False, *, key: Any = None) -> Any:
    """Randomised leaky ReLU: negative inputs times a slope drawn uniformly from
    ``[lower, upper]`` per element in training (``key=`` as :func:`dropout`), times
    ``(lower + upper) / 2`` otherwise (PyTorch's default ``training=False``).

    >>> import numpy as np
    >>> rrelu(np.array([-1.0, 2.0]), 0.2, 0.4)
    array([-0.3,  2. ])
    """
    if not training:
        return leaky_relu(input, (lower + upper) / 2)
    key = key_or_draw(key, input, "rrelu")
    slope = lower + (upper - lower) * random_uniform(key, input)
    return fnp.where(input > 0, input, input * slope.astype(input.dtype))


# -- PyTorch's in-place activations (F.relu_ ...) -------------------------------------------


def _write_into(input: Any, compute: Any, fname: str) -> Any:
    """Write ``compute()`` into ``input`` and return ``input``, as PyTorch's ``F.<name>_`` do;
    only a concrete writable array (NumPy or device) can take it (checked first)."""
    base = fname[:-1]
    hint = f"use F.{base}(...) and its result instead"
    if is_tracer(input):
        raise TypeError(f"F.{fname} writes into its input, which is traced here (arrays under "
                        f"grad/jit/vmap are immutable); {hint}")
    if isinstance(input, numpy.ndarray):
        if not input.flags.writeable:
            raise ValueError(f"F.{fname}: the input array is read-only; {hint}")
    elif (device_of(input) is None or isinstance(input, numpy.generic)
          or not hasattr(input, "__setitem__")):
        raise TypeError(f"F.{fname} needs an array to write into, got {type(input).__name__}; "
                        f"{hint}")
    input[...] = compute()
    return input


def relu_(input: Any) -> Any:
    """In-place :func:`relu`: writes into the (concrete, writable) ``input`` and returns it.

    >>> import numpy as np
    >>> x = np.array([-1.0, 2.0])
    >>> relu_(x) is x, x
    (True, array([0., 2.]))
    """
    return _write_into(input, lambda: relu(input), "relu_")


def elu_(input: Any, alpha: float = 1.0) -> Any:
    """In-place :func:`elu` (writes into ``input``, returns it).

    >>> import numpy as np
    >>> x = np.array([0.0, 2.0])
    >>> elu_(x).tolist()
    [0.0, 2.0]
    """
    return _write_into(input, lambda: elu(input, alpha), "elu_")


def celu_(input: Any, alpha: float = 1.0) -> Any:
    """In-place :func:`celu` (writes into ``input``, returns it).

    >>> import numpy as np
    >>> celu_(np.array([0.0, 2.0])).tolist()
    [0.0, 2.0]
    """
    return _write_into(input, lambda: celu(input, alpha), "celu_")


def selu_(input: Any) -> Any:
    """In-place :func:`selu` (writes into ``input``, returns it).

    >>> import numpy as np
    >>> selu_(np.array([0.0])).tolist()
    [0.0]
    """
    return _write_into(input, lambda: selu(input), "selu_")


def leaky_relu_(input: Any, negative_slope: float = 0.01) -> Any:
    """In-place :func:`leaky_relu` (writes into ``input``, returns it).

    >>> import numpy as np
    >>> leaky_relu_(np.array([-1.0, 2.0]), 0.5).tolist()
    [-0.5, 2.0]
    """
    return _write_into(input, lambda: leaky_relu(input, negative_slope), "leaky_relu_")


def hardtanh_(input: Any, min_val: float = -1.0, max_val: float = 1.0) -> Any:
    """In-place :func:`hardtanh` (writes into ``input``, returns it).

    >>> import numpy as np
    >>> hardtanh_(np.array([-3.0, 0.5, 3.0])).tolist()
    [-1.0, 0.5, 1.0]
    """
    return _write_into(input, lambda: hardtanh(input, min_val, max_val), "hardtanh_")


def threshold_(input: Any, threshold: float, value: float) -> Any:
    """In-place :func:`threshold` (writes into ``input``, returns it).

    >>> import numpy as np
    >>> threshold_(np.array([0.5, 2.0]), 1.0, -9.0).tolist()
    [-9.0, 2.0]
    """
    return _write_into(input, lambda: _threshold(input, threshold, value), "threshold_")


def rrelu_(input: Any, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
           *, key: Any = None) -> Any:
    """In-place :func:`rrelu` (writes into ``input``, returns it; ``key=`` when training).

    >>> import numpy as np
    >>> rrelu_(np.array([-1.0, 2.0]), 0.2, 0.4).tolist()
    [-0.30000000000000004, 2.0]
    """
    return _write_into(input, lambda: rrelu(input, lower, upper, training, key=key), "rrelu_")


def gumbel_softmax(logits: Any, tau: float = 1.0, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1, *, key: Any = None) -> Any:
    """softmax((logits + g) / tau) along ``dim`` with Gumbel(0, 1) noise ``g`` drawn from
    ``key=`` (required: an int seed or a uint32[2] array). ``hard=True`` returns the one-hot
    of the argmax with the soft sample's gradient (straight-through), as PyTorch.

    >>> import numpy as np
    >>> y = gumbel_softmax(np.zeros((2, 3)), hard=True, key=0)
    >>> y.sum(-1), sorted(set(y.ravel().tolist()))
    (array([1., 1.]), [0.0, 1.0])
    """
    key = key_or_draw(key, logits, "gumbel_softmax")
    dim = check_dim("gumbel_softmax", dim, fnp.ndim(logits))
    u = random_uniform(key, logits)
    # Exponential(1) samples -log(1 - u) (u in [0, 1)), kept above 0 so the log is finite.
    tiny = float(numpy.finfo(u.dtype).tiny)
    gumbels = -fnp.log(fnp.maximum(-fnp.log1p(-u), tiny)).astype(logits.dtype)
    y_soft = keep_float_dtype(fsp.softmax((logits + gumbels) / tau, axis=dim), logits)
    if not hard:
        return y_soft
    n = logits.shape[dim]
    index = fnp.argmax(y_soft, axis=dim, keepdims=True)
    shape = [1] * logits.ndim
    shape[dim] = n
    classes = fnp.reshape(_iota_like(index, n, index.dtype), shape)
    y_hard = (index == classes).astype(y_soft.dtype)
    return y_hard - funcgrad.stop_gradient(y_soft) + y_soft


def group_norm(input: Any, num_groups: int, weight: Any = None, bias: Any = None,
               eps: float = 1e-5) -> Any:
    """Normalise ``(N, C, ...)`` over each group of ``C // num_groups`` channels and the
    spatial axes (biased variance), then per-channel affine ``weight``/``bias``.

    >>> import numpy as np
    >>> np.round(group_norm(np.array([[1.0, 3.0, 0.0, 2.0]]), 2), 3)
    array([[-1.,  1., -1.,  1.]])
    """
    input, weight, bias = autocast_inputs("group_norm", input, weight, bias)
    if input.ndim < 2:
        raise BadInputError(f"group_norm: expected input (N, C, ...), got shape "
                            f"{tuple(input.shape)}")
    n, c = input.shape[0], input.shape[1]
    if num_groups <= 0 or c % num_groups:
        raise BadInputError(f"group_norm: num_channels {c} must be divisible by num_groups "
                         f"{num_groups}")
    if n * c // num_groups * math.prod(input.shape[2:]) == 1:
        # PyTorch's check (its _verify_batch_size on the (N * C / G, G, *S) view).
        raise ValueError(f"group_norm: expected more than 1 value per channel when training, "
                         f"got input shape {tuple(input.shape)} with {num_groups} groups")
    cdt = norm_params_dtype("group_norm", input, weight, bias)
    if cdt is not None:  # float16 with float32 parameters: PyTorch computes in float32
        return group_norm(input.astype(cdt), num_groups, _cast(weight, cdt), _cast(bias, cdt),
                          eps).astype(input.dtype)
    # Sizes spelled out: -1 cannot be inferred from an empty batch.
    g = fnp.reshape(input, (n, num_groups, math.prod(input.shape[1:]) // num_groups))
    mean = fnp.mean(g, axis=-1, keepdims=True)
    centered = g - mean
    var = fnp.mean(centered * centered, axis=-1, keepdims=True)
    out = fnp.reshape(centered / fnp.sqrt(var + eps), input.shape)
    cshape = _channel_shape(input)
    if weight is not None:
        out = out * fnp.reshape(weight, cshape)
    if bias is not None:
        out = out + fnp.reshape(bias, cshape)
    return out


def scaled_dot_product_attention(query: Any, key: Any, value: Any, attn_mask: Any = None,
                                 dropout_p: float = 0.0, is_causal: bool = False,
                                 scale: float | None = None, enable_gqa: bool = False, *,
                                 dropout_key: Any = None) -> Any:
    """softmax(query @ key^T * scale + bias) @ value over ``(..., L, E)``/``(..., S, E)``/
    ``(..., S, Ev)`` (PyTorch's reference formula).

    ``attn_mask``: bool (True = may attend) or float (added), broadcast to ``(..., L, S)``,
    or a :mod:`funcgrad_nn.attention.bias` causal mask (``causal_lower_right(L, S)``);
    ``is_causal``: top-left aligned lower-triangular mask (not with ``attn_mask``);
    ``scale`` defaults to ``1 / sqrt(E)``; ``enable_gqa`` repeats key/value heads (dim -3).
    ``dropout_p > 0`` drops attention weights and needs ``dropout_key=`` (see
    :func:`dropout`). A row with every key masked (or no keys at all) gives zeros, as
    PyTorch's math kernel (its ``_safe_softmax``), and passes no gradient.

    >>> import numpy as np
    >>> q = k = v = np.eye(2)[None]
    >>> np.round(scaled_dot_product_attention(q, k, v, is_causal=True), 3)
    array([[[1.  , 0.  ],
            [0.33, 0.67]]])
    """
    query, key, value, attn_mask = autocast_inputs(
        "scaled_dot_product_attention", query, key, value, attn_mask)
    fname = "scaled_dot_product_attention"
    if hasattr(attn_mask, "_dispatch"):  # a CausalBias (funcgrad_nn.attention.bias) picks
        return attn_mask._dispatch(query, key, value, dropout_p, is_causal, scale,  # the path
                                   enable_gqa, dropout_key=dropout_key)
    if query.ndim < 2 or key.ndim < 2 or value.ndim < 2:
        raise BadInputError(f"{fname}: query, key and value need at least 2 dims, got shapes "
                         f"{tuple(query.shape)}, {tuple(key.shape)}, {tuple(value.shape)}")
    if query.shape[-1] != key.shape[-1] or key.shape[-2] != value.shape[-2]:
        raise BadInputError(f"{fname}: query {tuple(query.shape)} and key {tuple(key.shape)} "
                         f"need the same last dim, key and value {tuple(value.shape)} the "
                         "same sequence length")
    dtypes = {numpy.dtype(t.dtype) for t in (query, key, value)}
    if len(dtypes) > 1:
        raise _InputDtypeError(f"{fname}: query, key and value must have the same dtype (PyTorch's "
                        f"rule; no silent promotion), got {query.dtype}, {key.dtype} and "
                        f"{value.dtype}")
    if numpy.dtype(query.dtype) == numpy.float16:
        # PyTorch's CPU math kernel computes half attention in float32 (scores of a few
        # hundred overflow float16 to inf, and the softmax to NaN).
        mask = attn_mask
        if mask is not None and numpy.dtype(mask.dtype) == numpy.float16:
            mask = mask.astype(numpy.float32)
        with amp.suspended():  # (autocast would cast the float32 copies back to float16)
            out = scaled_dot_product_attention(
                query.astype(numpy.float32), key.astype(numpy.float32),
                value.astype(numpy.float32), mask, dropout_p, is_causal, scale, enable_gqa,
                dropout_key=dropout_key)
        return out.astype(numpy.float16)
    if enable_gqa and query.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        hq, hk = query.shape[-3], key.shape[-3]
        if hq % hk or value.shape[-3] != hk:
            raise BadInputError(f"{fname}: with enable_gqa the query heads {hq} must be a "
                             f"multiple of the key/value heads {hk}")
        key = fnp.repeat(key, hq // hk, axis=-3)
        value = fnp.repeat(value, hq // hk, axis=-3)
    try:
        numpy.broadcast_shapes(*(tuple(t.shape[:-2]) for t in (query, key, value)))
    except ValueError:
        hint = " (fewer key/value heads than query heads need enable_gqa=True)" \
            if not enable_gqa and query.ndim >= 3 and key.ndim >= 3 else ""
        raise BadInputError(f"{fname}: the batch dims of query {tuple(query.shape)}, key "
                            f"{tuple(key.shape)} and value {tuple(value.shape)} do not "
                            f"broadcast{hint}") from None
    if scale is None:
        scale = 1.0 / math.sqrt(query.shape[-1])
    scores = fnp.matmul(query, fnp.swapaxes(key, -1, -2)) * scale
    if is_causal:
        if attn_mask is not None:
            raise BadInputError(f"{fname}: explicit attn_mask should not be set when "
                             "is_causal=True")
        lq, sk = query.shape[-2], key.shape[-2]
        attn_mask = (_iota_like(scores, sk, numpy.int64)
                     <= _iota_like(scores, lq, numpy.int64)[:, None])
    if attn_mask is not None:
        try:
            fits = numpy.broadcast_shapes(tuple(attn_mask.shape), tuple(scores.shape)) \
                == tuple(scores.shape)
        except ValueError:
            fits = False
        if not fits:
            raise BadInputError(f"{fname}: attn_mask of shape {tuple(attn_mask.shape)} does not "
                             f"broadcast to the attention scores' shape "
                             f"{tuple(scores.shape)} (..., L, S)")
        scores = _apply_mask(scores, attn_mask, allowed=True)
    weights = _safe_softmax(scores)
    if dropout_p > 0.0:
        _check_p(dropout_p, fname)  # (PyTorch's range error comes before any other)
        dropout_key = key_or_draw(dropout_key, weights, fname, "dropout_key")
        weights = dropout(weights, dropout_p, True, key=dropout_key)
    return fnp.matmul(weights, value)


def _safe_softmax(scores: Any) -> Any:
    """Softmax over the last axis, with zeros (not NaN) in rows where every score is -inf,
    as PyTorch's ``_safe_softmax`` in its attention kernels. The masked rows are replaced
    before the softmax too, so their gradient is zero rather than NaN."""
    if scores.shape[-1] == 0:
        return scores
    dead = fnp.all(scores == -numpy.inf, axis=-1, keepdims=True)
    weights = fsp.softmax(fnp.where(dead, 0.0, scores).astype(scores.dtype), axis=-1)
    return fnp.where(dead, 0.0, weights).astype(scores.dtype)


def _apply_mask(scores: Any, mask: Any, allowed: bool) -> Any:
    """Add a float mask, or set -inf where a bool mask says a position may not be attended
    (``allowed``: True marks attendable positions (SDPA), else masked ones (MHA))."""
    if numpy.dtype(mask.dtype) == numpy.bool_:
        return fnp.where(mask if allowed else ~mask, scores, -numpy.inf)
    if numpy.dtype(mask.dtype).kind != "f":
        raise _InputDtypeError(f"attention: masks must be bool or floating, got dtype {mask.dtype}")
    # Cast so a float64 mask does not promote float32 attention scores.
    return scores + mask.astype(scores.dtype)


# -- losses --------------------------------------------------------------------------------


def _weighted(loss: Any, weight: Any, input: Any, reduction: str, fname: str,
              mean_by_weight: bool) -> Any:
    """The elementwise ``loss`` times ``weight`` (the input's shape), reduced as PyTorch:
    ``mean`` divides by the summed weights (``mse_loss``, ``l1_loss``) or by the count
    (``huber_loss``)."""
    if tuple(fnp.shape(weight)) != tuple(fnp.shape(input)):
        raise BadInputError(f"{fname}: weight and input must have the same size, got "
                            f"{tuple(fnp.shape(weight))} and {tuple(fnp.shape(input))}")
    loss = loss * _as_input_dtype(weight, input, always=True)
    if reduction == "mean" and mean_by_weight:
        return fnp.divide(fnp.sum(loss), fnp.sum(weight))
    return _reduce(loss, reduction, fname)


def _regression_operands(input: Any, target: Any, fname: str) -> tuple[Any, Any]:
    return _broadcast_target(input, _as_input_dtype(target, input), fname)


def mse_loss(input: Any, target: Any, size_average: Any = None, reduce: Any = None,
             reduction: str = "mean", weight: Any = None) -> Any:
    """Mean squared error; ``weight`` (the input's shape) weighs each element, and then
    ``mean`` divides by the summed weights (PyTorch's signature and rules).

    >>> import numpy as np
    >>> mse_loss(np.array([1.0, 2.0]), np.array([1.0, 4.0]))
    array(2.)
    """
    input, target = autocast_inputs("mse_loss", input, target)
    reduction = _legacy_reduction(size_average, reduce, reduction, "mse_loss")
    a, b = _regression_operands(input, target, "mse_loss")
    d = a - b
    if weight is not None:
        return _weighted(d * d, weight, input, reduction, "mse_loss", True)
    return _reduce(d * d, reduction, "mse_loss")


def l1_loss(input: Any, target: Any, size_average: Any = None, reduce: Any = None,
            reduction: str = "mean", weight: Any = None) -> Any:
    """Mean absolute error; ``weight`` as :func:`mse_loss`'s.

    >>> import numpy as np
    >>> l1_loss(np.array([1.0, 2.0]), np.array([1.0, 4.0]))
    array(1.)
    """
    input, target = autocast_inputs("l1_loss", input, target)
    reduction = _legacy_reduction(size_average, reduce, reduction, "l1_loss")
    a, b = _regression_operands(input, target, "l1_loss")
    if weight is not None:
        return _weighted(fnp.abs(a - b), weight, input, reduction, "l1_loss", True)
    return _reduce(fnp.abs(a - b), reduction, "l1_loss")


def huber_loss(input: Any, target: Any, reduction: str = "mean", delta: float = 1.0,
               weight: Any = None) -> Any:
    """0.5 d**2 if |d| < delta else delta * (|d| - 0.5 delta); ``weight`` (the input's shape)
    weighs each element, and ``mean`` then averages over the elements (PyTorch's rule).

    >>> import numpy as np
    >>> huber_loss(np.array([0.5, 3.0]), np.zeros(2), reduction="none")
    array([0.125, 2.5  ])
    """
    input, target = autocast_inputs("huber_loss", input, target)
    _check_reduction(reduction, "huber_loss")
    # PyTorch's kernel writes into an array like the input: a float64 target still gives a
    # float32 loss for a float32 input (unlike mse/l1/smooth_l1, which promote).
    target = _as_input_dtype(target, input, always=True)
    a, b = _regression_operands(input, target, "huber_loss")
    if delta <= 0:
        raise BadInputError(f"huber_loss: delta must be positive, got {delta}")
    ad = fnp.abs(a - b)
    small = fnp.minimum(ad, delta)
    # Written without a branch: 0.5 s**2 + delta * (|d| - s), s = min(|d|, delta).
    loss = 0.5 * small * small + delta * (ad - small)
    if weight is not None:
        return _weighted(loss, weight, input, reduction, "huber_loss", False)
    return _reduce(loss, reduction, "huber_loss")


def smooth_l1_loss(input: Any, target: Any, size_average: Any = None, reduce: Any = None,
                   reduction: str = "mean", beta: float = 1.0) -> Any:
    """0.5 d**2 / beta if |d| < beta else |d| - 0.5 beta (``beta=0``: L1).

    >>> import numpy as np
    >>> smooth_l1_loss(np.array([0.5, 3.0]), np.zeros(2), reduction="none")
    array([0.125, 2.5  ])
    """
    input, target = autocast_inputs("smooth_l1_loss", input, target)
    reduction = _legacy_reduction(size_average, reduce, reduction, "smooth_l1_loss")
    if beta < 0:
        raise BadInputError(f"smooth_l1_loss: beta must be non-negative, got {beta}")
    a, b = _regression_operands(input, target, "smooth_l1_loss")
    ad = fnp.abs(a - b)
    if beta == 0:
        return _reduce(ad, reduction, "smooth_l1_loss")
    small = fnp.minimum(ad, beta)
    return _reduce(0.5 * small * small / beta + (ad - small), reduction, "smooth_l1_loss")


def binary_cross_entropy(input: Any, target: Any, weight: Any = None, size_average: Any = None,
                         reduce: Any = None, reduction: str = "mean") -> Any:
    """-w (t log p + (1 - t) log(1 - p)) on probabilities; logs clamped at -100 like PyTorch.

    >>> import numpy as np
    >>> round(float(binary_cross_entropy(np.array([0.8]), np.array([1.0]))), 4)
    0.2231
    """
    input, target, weight = autocast_inputs("binary_cross_entropy", input, target, weight)
    reduction = _legacy_reduction(size_average, reduce, reduction, "binary_cross_entropy")
    _same_shape(input, target, "binary_cross_entropy")
    hv = _host_value(input)
    if hv is not None and ((hv < 0) | (hv > 1)).any():
        raise BadInputError("binary_cross_entropy: all elements of input should be between 0 and "
                         f"1 (probabilities; use binary_cross_entropy_with_logits for logits), "
                         f"got values in [{hv.min()}, {hv.max()}]")
    tv = _host_value(target)
    if tv is not None and ((tv < 0) | (tv > 1)).any():  # (PyTorch checks both)
        raise BadInputError("binary_cross_entropy: all elements of target should be between 0 "
                            f"and 1, got values in [{tv.min()}, {tv.max()}]")
    loss = _bce_terms(input, _as_input_dtype(target, input))
    if weight is not None:
        loss = loss * _as_input_dtype(weight, input, always=True)
    return _reduce(loss, reduction, "binary_cross_entropy")


@funcgrad.custom_jvp
def _bce_terms(p: Any, t: Any) -> Any:
    # -(t log p + (1 - t) log(1 - p)), each log clamped at -100 like PyTorch.
    return -(t * fnp.maximum(fnp.log(p), -100.0) + (1 - t) * fnp.maximum(fnp.log1p(-p), -100.0))


# PyTorch's input derivative, (p - t) / max(p (1 - p), 1e-12): finite where p is exactly 0 or
# 1 (a saturated float32 sigmoid), where the clamped formula's own derivative is 0 * inf.
# Its target derivative is PyTorch's too: -logit(p), unclamped.
_BCE_EPS = float(numpy.float32(1e-12))  # PyTorch's EPSILON is a C float
_bce_terms.defjvps(
    lambda dp, out, p, t: dp * (p - t) / fnp.maximum(p * (1 - p), _BCE_EPS),
    lambda dt, out, p, t: dt * (fnp.log1p(-p) - fnp.log(p)))


def binary_cross_entropy_with_logits(input: Any, target: Any, weight: Any = None,
                                     size_average: Any = None, reduce: Any = None,
                                     reduction: str = "mean", pos_weight: Any = None) -> Any:
    """Sigmoid + binary cross entropy, computed stably from logits (PyTorch's formula,
    including ``pos_weight`` broadcast over the last axis).

    >>> import numpy as np
    >>> round(float(binary_cross_entropy_with_logits(np.array([0.0]), np.array([1.0]))), 4)
    0.6931
    """
    input, target, weight, pos_weight = autocast_inputs(
        "binary_cross_entropy_with_logits", input, target, weight, pos_weight)
    reduction = _legacy_reduction(size_average, reduce, reduction,
                                  "binary_cross_entropy_with_logits")
    _same_shape(input, target, "binary_cross_entropy_with_logits")
    target = _as_input_dtype(target, input)
    weight = _as_input_dtype(weight, input, always=True)
    pos_weight = _as_input_dtype(pos_weight, input, always=True)
    # log(1 + exp(-x)) stably = softplus(-x) = log1p(exp(-|x|)) + max(-x, 0)
    sp_neg = fnp.log1p(fnp.exp(-fnp.abs(input))) + fnp.maximum(-input, 0)
    if pos_weight is not None:
        loss = (1 - target) * input + (1 + (pos_weight - 1) * target) * sp_neg
    else:
        loss = (1 - target) * input + sp_neg
    if weight is not None:
        loss = loss * weight
    # PyTorch builds the loss in place on (1 - target): a floating target's dtype is the
    # result's, so float64 logits with a float32 target give a float32 loss.
    loss = keep_float_dtype(loss, target)
    return _reduce(loss, reduction, "binary_cross_entropy_with_logits")


def _class_axis(input: Any) -> int:
    return 0 if input.ndim == 1 else 1


def _check_targets(target: Any, n_classes: int, ignore_index: int, fname: str) -> None:
    hv = _host_value(target)
    if hv is not None:
        if hv.size:
            bad = (hv != ignore_index) & ((hv < 0) | (hv >= n_classes))
            if bad.any():
                raise IndexError(f"{fname}: target {int(hv[bad].flat[0])} is out of bounds "
                                 f"for {n_classes} classes")
        return
    if not fnp.size(target):
        return
    # Traced (under jit): the same check when the program runs, as PyTorch's kernel checks
    # (the gather below would otherwise read a clamped class and give a plausible loss).
    bad = (target != ignore_index) & ((target < 0) | (target >= n_classes))
    first = fnp.ravel(target)[fnp.argmax(fnp.ravel(bad))]
    checkify.check(~fnp.any(bad), f"{fname}: target {{}} is out of bounds for {n_classes} "
                   "classes", first)


def _pick(logp: Any, target: Any, axis: int) -> Any:
    return fnp.squeeze(fnp.take_along_axis(logp, fnp.expand_dims(target, axis), axis=axis),
                       axis)


def nll_loss(input: Any, target: Any, weight: Any = None, size_average: Any = None,
             ignore_index: int = -100, reduce: Any = None, reduction: str = "mean") -> Any:
    """Negative log-likelihood of class indices given log-probabilities ``(N, C, ...)``.

    ``mean`` divides by the summed weights of the non-ignored targets (PyTorch).

    >>> import numpy as np
    >>> round(float(nll_loss(np.log(np.array([[0.5, 0.5]])), np.array([1]))), 4)
    0.6931
    """
    input, target, weight = autocast_inputs("nll_loss", input, target, weight)
    reduction = _legacy_reduction(size_average, reduce, reduction, "nll_loss")
    axis = _class_axis(input)
    n_classes = input.shape[axis]
    tdt = getattr(target, "dtype", None)
    if tdt is None or numpy.dtype(tdt).kind not in "iu":
        raise _InputDtypeError(f"nll_loss: target must be an integer array of class indices, got "
                        f"dtype {tdt}")
    expected = tuple(input.shape[:axis]) + tuple(input.shape[axis + 1:])
    if tuple(target.shape) != expected:
        raise ValueError(f"nll_loss: input shape {tuple(input.shape)} needs target shape "
                         f"{expected}, got {tuple(target.shape)}")
    _check_targets(target, n_classes, ignore_index, "nll_loss")
    weight = _class_weight(weight, input, n_classes, "nll_loss")
    valid = target != ignore_index
    safe = fnp.where(valid, target, 0)
    picked = _pick(input, safe, axis)
    w = fnp.where(valid, 1, 0).astype(input.dtype) if weight is None else \
        fnp.where(valid, fnp.take(weight, safe), 0)
    loss = -picked * w
    if reduction == "mean":
        return _mean_over(fnp.sum(loss), valid, fnp.sum(w))
    return _reduce(loss, reduction, "nll_loss")


def _class_weight(weight: Any, input: Any, n_classes: int, fname: str) -> Any:
    """The per-class ``weight`` checked to be ``(C,)`` (a shorter one would silently clamp
    class indices) and in the input's dtype."""
    if weight is None:
        return None
    if tuple(fnp.shape(weight)) != (n_classes,):
        # BadInputError: a ValueError, and the RuntimeError PyTorch raises here.
        raise BadInputError(f"{fname}: weight should be defined for all {n_classes} classes (shape "
                         f"({n_classes},)) or none, got shape {tuple(fnp.shape(weight))}")
    return _as_input_dtype(weight, input, always=True)


def cross_entropy(input: Any, target: Any, weight: Any = None, size_average: Any = None,
                  ignore_index: int = -100, reduce: Any = None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Any:
    """Cross entropy of logits ``(N, C, ...)`` (or ``(C,)``) against class indices or
    class probabilities, with PyTorch's ``weight``/``ignore_index``/``label_smoothing``
    semantics and normalisation.

    >>> import numpy as np
    >>> x = np.array([[1.0, 2.0, 0.5]])
    >>> bool(np.isclose(cross_entropy(x, np.array([1])),
    ...                 cross_entropy(x, np.array([[0.0, 1.0, 0.0]]))))
    True
    """
    input, target, weight = autocast_inputs("cross_entropy", input, target, weight)
    reduction = _legacy_reduction(size_average, reduce, reduction, "cross_entropy")
    if not 0.0 <= label_smoothing <= 1.0:
        raise BadInputError(f"cross_entropy: label_smoothing must be in [0, 1], got "
                            f"{label_smoothing}")
    axis = _class_axis(input)
    n_classes = input.shape[axis]
    weight = _class_weight(weight, input, n_classes, "cross_entropy")
    logp = keep_float_dtype(fsp.log_softmax(input, axis=axis), input)
    wshape = [1] * input.ndim
    wshape[axis] = n_classes
    tdt = getattr(target, "dtype", None)
    if tdt is not None and numpy.dtype(tdt).kind == "f":
        if tuple(target.shape) != tuple(input.shape):
            raise ValueError(f"cross_entropy: probability targets must have the input's shape "
                             f"{tuple(input.shape)}, got {tuple(target.shape)}")
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / n_classes
        prod = logp * target
        if weight is not None:
            prod = prod * fnp.reshape(weight, wshape)
        loss = -fnp.sum(prod, axis=axis)
        return _reduce(loss, reduction, "cross_entropy")
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing == 0:
        return nll
    valid = target != ignore_index
    lw = logp if weight is None else logp * fnp.reshape(weight, wshape)
    smooth = fnp.where(valid, -fnp.sum(lw, axis=axis), 0)
    if reduction == "mean":
        if weight is None:
            denom = fnp.sum(valid.astype(input.dtype))
        else:
            denom = fnp.sum(fnp.where(valid, fnp.take(weight, fnp.where(valid, target, 0)), 0))
        smooth = _mean_over(fnp.sum(smooth), valid, denom)
    elif reduction == "sum":
        smooth = fnp.sum(smooth)
    # fnp ops (not operators) so eager 0-d results stay arrays, not NumPy scalars.
    return fnp.add(fnp.multiply(nll, 1 - label_smoothing),
                   fnp.multiply(smooth, label_smoothing / n_classes))


def linear_cross_entropy(input: Any, linear_weight: Any, target: Any, *,
                         linear_bias: Any = None, weight: Any = None, reduction: str = "mean",
                         ignore_index: int | None = None, label_smoothing: float = 0.0,
                         options: Any = None) -> Any:
    """:func:`cross_entropy` of the logits ``linear(input, linear_weight, linear_bias)``
    (PyTorch 2.13's ``F.linear_cross_entropy``).

    ``input`` is ``(in_features,)`` or ``(N, in_features)``; ``linear_weight`` is
    ``(C, in_features)``, or ``(C, d_1, ..., d_K, in_features)`` for a K-dimensional loss
    (logits ``(N, C, d_1, ..., d_K)``, batched input only); ``linear_bias`` has the weight's
    shape without ``in_features``. A target of the logits' shape holds class probabilities
    (then ``ignore_index`` must stay ``None``); otherwise class indices, with ``ignore_index``
    ``None`` meaning -100. ``options`` (PyTorch's chunking strategy, which saves memory and
    gives the same values) is accepted and ignored.

    >>> import numpy as np
    >>> x, w = np.array([[1.0, 0.0]]), np.array([[2.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    >>> bool(np.isclose(linear_cross_entropy(x, w, np.array([0])),
    ...                 cross_entropy(x @ w.T, np.array([0]))))
    True
    """
    fname = "linear_cross_entropy"
    nd = fnp.ndim(input)
    if nd not in (1, 2):
        raise ValueError(f"{fname}: expected input with dimensionality 1 or 2, got {nd}")
    wshape = tuple(fnp.shape(linear_weight))
    if len(wshape) < 2:
        raise ValueError(f"{fname}: expected linear_weight with dimensionality at least 2, "
                         f"got {len(wshape)}")
    in_features = fnp.shape(input)[-1]
    if wshape[-1] != in_features:
        raise ValueError(f"{fname}: expected equal input and linear_weight last dimensions "
                         f"(in_features), got {in_features} and {wshape[-1]}, respectively")
    out_features = wshape[1:-1]
    if linear_bias is not None and tuple(fnp.shape(linear_bias)) != wshape[:-1]:
        raise ValueError(f"{fname}: expected linear_bias shape {wshape[:-1]}, got "
                         f"{tuple(fnp.shape(linear_bias))}")
    if out_features and nd == 1:
        raise ValueError(f"{fname}: K-dimensional loss defined by linear_weight shape {wshape} "
                         f"requires batched input (N, {in_features}), got unbatched input with "
                         f"shape {tuple(fnp.shape(input))}")
    logits_shape = (*fnp.shape(input)[:-1], *wshape[:-1])
    if tuple(fnp.shape(target)) == logits_shape and ignore_index is not None:
        raise ValueError(f"{fname}: ignore_index cannot be specified when target contains "
                         "probabilities")
    rows = math.prod(wshape[:-1])
    bias = None if linear_bias is None else fnp.reshape(linear_bias, (rows,))
    logits = linear(input, fnp.reshape(linear_weight, (rows, in_features)), bias)
    return cross_entropy(fnp.reshape(logits, logits_shape), target, weight,
                         ignore_index=-100 if ignore_index is None else ignore_index,
                         reduction=reduction, label_smoothing=label_smoothing)


def kl_div(input: Any, target: Any, size_average: Any = None, reduce: Any = None,
           reduction: str = "mean", log_target: bool = False) -> Any:
    """KL divergence with ``input`` as log-probabilities: target * (log target - input)
    (0 where target is 0). ``reduction="batchmean"`` divides the sum by the batch size.

    >>> import numpy as np
    >>> p = np.array([[0.5, 0.5]])
    >>> kl_div(np.log(p), p, reduction="batchmean")
    array(0.)
    """
    input, target = autocast_inputs("kl_div", input, target)
    reduction = _legacy_reduction(size_average, reduce, reduction, "kl_div", ("batchmean",))
    if reduction == "mean":  # PyTorch's warning (its nn.KLDivLoss() default too)
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the "
                      "support size.'batchmean' divides only by the batch size, and aligns "
                      "with the KL div math definition.'mean' will be changed to behave the "
                      "same as 'batchmean' in the next major release.", stacklevel=2)
    _check_broadcast(input, target, "kl_div")  # (PyTorch broadcasts here without a warning)
    target = _as_input_dtype(target, input)
    if log_target:
        loss = fnp.exp(target) * (target - input)
    else:
        loss = _kl_terms(input, target)
    if reduction == "batchmean":
        return fnp.divide(fnp.sum(loss), input.shape[0] if input.ndim else 1)
    return _reduce(loss, reduction, "kl_div")


@funcgrad.custom_jvp
def _kl_terms(input: Any, target: Any) -> Any:
    # target * (log target - input), 0 where target is 0.
    return keep_float_dtype(fsp.xlogy(target, target), input) - target * input


def _kl_target_slope(input: Any, target: Any) -> Any:
    # PyTorch's target derivative of xlogy(t, t) - t * input: xlogy(t != 0, t) + t / t - input,
    # NaN at t == 0 (as JAX's xlogy too: the slope of t log t is unbounded there), written
    # without evaluating log(0) or 0 / 0.
    nonzero = target != 0
    log_t = fnp.log(fnp.where(nonzero, target, 1).astype(target.dtype))
    return fnp.where(nonzero, log_t + 1 - input, numpy.nan).astype(input.dtype)


_kl_terms.defjvps(
    lambda dx, out, x, t: -t * dx,
    lambda dt, out, x, t: _kl_target_slope(x, t) * dt)


# -- margin, embedding, count and sequence losses ---------------------------------------------


def _legacy_reduction(size_average: Any, reduce: Any, reduction: str, fname: str,
                      extra: tuple[str, ...] = ()) -> str:
    # PyTorch's deprecated size_average/reduce flags, when given, decide the reduction.
    if size_average is None and reduce is None:
        _check_reduction(reduction, fname, extra)
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = "mean" if size_average and reduce else ("sum" if reduce else "none")
    # PyTorch's deprecation warning (functional and loss modules alike)
    warnings.warn(f"size_average and reduce args will be deprecated, please use "
                  f"reduction='{ret}' instead.", UserWarning, stacklevel=3)
    return ret


def _relu0(z: Any) -> Any:
    # max(z, 0) with gradient 0 at z == 0, as PyTorch's `z > 0` kernels (multi_margin_loss,
    # multilabel_margin_loss).
    return fnp.where(z > 0, z, 0)


def _clamp_min0(z: Any) -> Any:
    # max(z, 0) with gradient 1 at z == 0, as PyTorch's clamp_min (the margin, hinge,
    # cosine embedding and triplet losses).
    return fnp.where(z >= 0, z, 0)


def margin_ranking_loss(input1: Any, input2: Any, target: Any, margin: float = 0.0,
                        size_average: Any = None, reduce: Any = None,
                        reduction: str = "mean") -> Any:
    """max(0, -target * (input1 - input2) + margin); ``target`` is 1 or -1.

    >>> import numpy as np
    >>> margin_ranking_loss(np.array([1.0, 0.0]), np.array([0.0, 1.0]), np.array([1.0, 1.0]))
    array(0.5)
    """
    input1, input2, target = autocast_inputs("margin_ranking_loss", input1, input2, target)
    fname = "margin_ranking_loss"
    reduction = _legacy_reduction(size_average, reduce, reduction, fname)
    if not (fnp.ndim(input1) == fnp.ndim(input2) == fnp.ndim(target)):
        raise BadInputError(f"{fname}: All input tensors should have same dimension but got "
                            f"sizes: input1: {tuple(fnp.shape(input1))}, input2: "
                            f"{tuple(fnp.shape(input2))}, target: {tuple(fnp.shape(target))}")
    target = _as_input_dtype(target, input1)
    return _reduce(_clamp_min0(-target * (input1 - input2) + margin), reduction, fname)


def hinge_embedding_loss(input: Any, target: Any, margin: float = 1.0, size_average: Any = None,
                         reduce: Any = None, reduction: str = "mean") -> Any:
    """``input`` where target is 1, max(0, margin - input) where target is -1.

    >>> import numpy as np
    >>> hinge_embedding_loss(np.array([0.3, 0.2]), np.array([1.0, -1.0]), reduction="sum")
    array(1.1)
    """
    input, target = autocast_inputs("hinge_embedding_loss", input, target)
    fname = "hinge_embedding_loss"
    reduction = _legacy_reduction(size_average, reduce, reduction, fname)
    _check_broadcast(input, target, fname)
    # PyTorch's formula: entries with a target other than +-1 get both terms.
    loss = fnp.where(target != 1, _clamp_min0(margin - input), 0) + \
        fnp.where(target != -1, input, 0)
    return _reduce(loss, reduction, fname)


def soft_margin_loss(input: Any, target: Any, size_average: Any = None, reduce: Any = None,
                     reduction: str = "mean") -> Any:
    """log(1 + exp(-target * input)), averaged over all elements by default.

    >>> import numpy as np
    >>> round(float(soft_margin_loss(np.array([0.0]), np.array([1.0]))), 4)
    0.6931
    """
    input, target = autocast_inputs("soft_margin_loss", input, target)
    fname = "soft_margin_loss"
    reduction = _legacy_reduction(size_average, reduce, reduction, fname)
    _check_broadcast(input, target, fname)
    target = _as_input_dtype(target, input, always=True)  # the input's dtype, as huber_loss
    return _reduce(fnp.logaddexp(0, -target * input), reduction, fname)


def cosine_embedding_loss(input1: Any, input2: Any, target: Any, margin: float = 0.0,
                          size_average: Any = None, reduce: Any = None,
                          reduction: str = "mean") -> Any:
    """1 - cos(x1, x2) where target is 1, max(0, cos(x1, x2) - margin) where it is -1
    (rows of ``(N, D)`` inputs, or two ``(D,)`` vectors).

    >>> import numpy as np
    >>> x = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> cosine_embedding_loss(x, x, np.array([1.0, -1.0]))
    array(0.5)
    """
    input1, input2, target = autocast_inputs("cosine_embedding_loss", input1, input2, target)
    fname = "cosine_embedding_loss"
    reduction = _legacy_reduction(size_average, reduce, reduction, fname)
    nd = fnp.ndim(input1)
    if nd not in (1, 2) or fnp.shape(input1) != fnp.shape(input2):
        raise BadInputError(f"{fname}: expected 1-D or 2-D inputs of equal shape, got "
                            f"{tuple(fnp.shape(input1))} and {tuple(fnp.shape(input2))}")
    if fnp.ndim(target) != nd - 1:
        raise BadInputError(f"{fname}: {nd}D target tensor expects {nd - 1}D target tensor, got "
                            f"target shape {tuple(fnp.shape(target))}")
    eps = 1e-12  # PyTorch's EPSILON, added to each squared magnitude
    prod = fnp.sum(input1 * input2, axis=-1)
    mag = (fnp.sum(input1 * input1, axis=-1) + eps) * (fnp.sum(input2 * input2, axis=-1) + eps)
    cos = prod / fnp.sqrt(mag)
    loss = fnp.where(target == 1, 1 - cos, 0) + fnp.where(target == -1, _clamp_min0(cos - margin), 0)
    return _reduce(loss, reduction, fname)


def triplet_margin_loss(anchor: Any, positive: Any, negative: Any, margin: float = 1.0,
                        p: float = 2, eps: float = 1e-6, swap: bool = False,
                        size_average: Any = None, reduce: Any = None,
                        reduction: str = "mean") -> Any:
    """max(0, margin + d(a, p) - d(a, n)) with d the p-norm distance ``||x - y + eps||_p``;
    ``swap`` uses min(d(a, n), d(p, n)).

    >>> import numpy as np
    >>> a, pos, neg = np.zeros((1, 2)), np.zeros((1, 2)), np.ones((1, 2))
    >>> round(float(triplet_margin_loss(a, pos, neg, margin=2.0)), 4)
    0.5858
    """
    anchor, positive, negative = autocast_inputs("triplet_margin_loss", anchor, positive, negative)
    fname = "triplet_margin_loss"
    reduction = _legacy_reduction(size_average, reduce, reduction, fname)
    dims = (fnp.ndim(anchor), fnp.ndim(positive), fnp.ndim(negative))
    if len(set(dims)) != 1 or dims[0] not in (1, 2):
        raise BadInputError(f"{fname}: The anchor, positive, and negative tensors are expected "
                            f"to have the same number of dimensions (1 or 2), but got: anchor "
                            f"{dims[0]}D, positive {dims[1]}D, and negative {dims[2]}D inputs")
    if margin <= 0:
        raise ValueError(f"{fname}: margin must be greater than 0, got {margin}")
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = fnp.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce(_clamp_min0(margin + d_pos - d_neg), reduction, fname)


def triplet_margin_with_distance_loss(anchor: Any, positive: Any, negative: Any, *,
                                      distance_function: Any = None, margin: float = 1.0,
                                      swap: bool = False, reduction: str = "mean") -> Any:
    """:func:`triplet_margin_loss` with any ``distance_function(x, y)`` (default: the
    Euclidean pairwise distance).

    >>> import numpy as np
    >>> d = lambda x, y: np.abs(x - y).sum(-1)
    >>> triplet_margin_with_distance_loss(np.zeros((1, 2)), np.zeros((1, 2)),
    ...                                   np.ones((1, 2)), distance_function=d, margin=3.0)
    array(1.)
    """
    fname = "triplet_margin_with_distance_loss"
    _check_reduction(reduction, fname)
    if margin <= 0:
        raise ValueError(f"{fname}: margin must be greater than 0, got {margin}")
    dist = distance_function if distance_function is not None else pairwise_distance
    d_pos, d_neg = dist(anchor, positive), dist(anchor, negative)
    if swap:
        d_neg = fnp.minimum(d_neg, dist(positive, negative))
    return _reduce(_clamp_min0(margin + d_pos - d_neg), reduction, fname)


def _class_rows(input: Any, target: Any, fname: str) -> tuple[Any, Any, bool]:
    if fnp.ndim(input) not in (1, 2):
        raise BadInputError(f"{fname}: expected input of shape (N, C) or (C,), got "
                            f"{tuple(fnp.shape(input))}")
    batched = fnp.ndim(input) == 2
    return (input if batched else input[None]), target, batched


def multi_margin_loss(input: Any, target: Any, p: int = 1, margin: float = 1.0,
                      weight: Any = None, size_average: Any = None, reduce: Any = None,
                      reduction: str = "mean") -> Any:
    """Multi-class hinge loss: sum over i != y of max(0, margin - x[y] + x[i])^p (times
    ``weight[y]``), divided by the number of classes.

    >>> import numpy as np
    >>> round(float(multi_margin_loss(np.array([[0.1, 0.2, 0.4, 0.8]]), np.array([3]))), 4)
    0.325
    """
    input, target, weight = autocast_inputs("multi_margin_loss", input, target, weight)
    fname = "multi_margin_loss"
    reduction = _legacy_reduction(size_average, reduce, reduction, fname)
    if p not in (1, 2):
        raise ValueError(f"{fname}: only p == 1 and p == 2 supported, got {p}")
    x, _, batched = _class_rows(input, target, fname)
    n, c = x.shape
    tdt = getattr(target, "dtype", None)
    if tdt is None or numpy.dtype(tdt).kind not in "iu":
        raise _InputDtypeError(f"{fname}: target must be an integer array of class indices, got "
                        f"dtype {tdt}")
    if tuple(fnp.shape(target)) != ((n,) if batched else ()):
        raise BadInputError(f"{fname}: inconsistent target size: expected "
                            f"{(n,) if batched else ()} for input {tuple(input.shape)}, got "
                            f"{tuple(fnp.shape(target))}")
    t = fnp.reshape(target, (n,))
    _check_targets(t, c, -(2**62), fname)
    if weight is not None and tuple(fnp.shape(weight)) != (c,):
        raise BadInputError(f"{fname}: weight must have shape ({c},), got "
                         f"{tuple(fnp.shape(weight))}")
    x_y = _pick(x, t, 1)[:, None]
    z = margin - x_y + x
    h = _relu0(z)
    if p == 2:
        h = h * h
    if weight is not None:
        h = h * fnp.take(_as_input_dtype(weight, input, always=True), t)[:, None]
    other = _iota_like(x, c, t.dtype)[None, :] != t[:, None]
    loss = fnp.sum(fnp.where(other, h, 0), axis=1) / c
    return _reduce(loss if batched else loss[0], reduction, fname)


def multilabel_margin_loss(input: Any, target: Any, size_average: Any = None,
                           reduce: Any = None, reduction: str = "mean") -> Any:
    """Multi-label hinge loss: ``target`` holds each sample's class indices, ended by the
    first -1; sum over targets j and non-targets i of max(0, 1 - (x[j] - x[i])), over C.

    >>> import numpy as np
    >>> round(float(multilabel_margin_loss(np.array([[0.1, 0.2, 0.4, 0.8]]),
    ...                                    np.array([[3, 0, -1, 1]]))), 4)
    0.85
    """
    input, target = autocast_inputs("multilabel_margin_loss", input, target)
    fname = "multilabel_margin_loss"
    reduction = _legacy_reduction(size_average, reduce, reduction, fname)
    x, _, batched = _class_rows(input, target, fname)
    n, c = x.shape
    if tuple(fnp.shape(target)) != tuple(fnp.shape(input)):
        raise BadInputError(f"{fname}: inconsistent target size: expected "
                            f"{tuple(fnp.shape(input))}, got {tuple(fnp.shape(target))}")
    tdt = getattr(target, "dtype", None)
    if tdt is None or numpy.dtype(tdt).kind not in "iu":
        raise TypeError(f"{fname}: target must be an integer array, got dtype {tdt}")
    t = fnp.reshape(target, (n, c))
    hv = _host_value(t)
    if hv is not None and hv.size:
        live = numpy.cumprod(hv != -1, axis=1).astype(bool)
        if ((hv[live] < 0) | (hv[live] >= c)).any():
            raise IndexError(f"{fname}: target index out of range for {c} classes (entries "
                             "before the first -1 must be in [0, C))")
    valid = fnp.cumprod((t != -1).astype(numpy.int32), axis=1) > 0     # (n, J)
    safe = fnp.where(valid, t, 0)
    classes = _iota_like(x, c, t.dtype)
    is_target = fnp.any(valid[:, :, None] & (safe[:, :, None] == classes[None, None, :]),
                        axis=1)                                          # (n, C)
    x_j = fnp.take_along_axis(x, safe, axis=1)                          # (n, J)
    z = 1 - x_j[:, :, None] + x[:, None, :]                             # (n, J, C)
    keep = valid[:, :, None] & ~is_target[:, None, :]
    loss = fnp.sum(fnp.where(keep, _relu0(z), 0), axis=(1, 2)) / c
    return _reduce(loss if batched else loss[0], reduction, fname)


def multilabel_soft_margin_loss(input: Any, target: Any, weight: Any = None,
                                size_average: Any = None, reduce: Any = None,
                                reduction: str = "mean") -> Any:
    """Per-class logistic loss averaged over the C classes (``weight`` per class).

    >>> import numpy as np
    >>> round(float(multilabel_soft_margin_loss(np.zeros((1, 3)), np.ones((1, 3)))), 4)
    0.6931
    """
    input, target, weight = autocast_inputs("multilabel_soft_margin_loss", input, target, weight)
    fname = "multilabel_soft_margin_loss"
    reduction = _legacy_reduction(size_average, reduce, reduction, fname)
    _check_broadcast(input, target, fname)
    target = _as_input_dtype(target, input)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * _as_input_dtype(weight, input, always=True)
    c = input.shape[-1] if fnp.ndim(input) else 1
    loss = fnp.sum(loss, axis=-1) / c if fnp.ndim(input) else loss
    return _reduce(loss, reduction, fname)


def poisson_nll_loss(input: Any, target: Any, log_input: bool = True, full: bool = False,
                     size_average: Any = None, eps: float = 1e-8, reduce: Any = None,
                     reduction: str = "mean") -> Any:
    """Poisson negative log-likelihood: exp(input) - target * input (``log_input``), else
    input - target * log(input + eps); ``full`` adds Stirling's term for target > 1.

    >>> import numpy as np
    >>> poisson_nll_loss(np.zeros(2), np.ones(2))
    array(1.)
    """
    input, target = autocast_inputs("poisson_nll_loss", input, target)
    fname = "poisson_nll_loss"
    reduction = _legacy_reduction(size_average, reduce, reduction, fname)
    _check_broadcast(input, target, fname)
    target = _as_input_dtype(target, input)
    if log_input:
        loss = fnp.exp(input) - target * input
    else:
        loss = input - target * fnp.log(input + eps)
    if full:
        big = target > 1
        t = fnp.where(big, target, 1)
        stirling = t * fnp.log(t) - t + 0.5 * fnp.log(2 * math.pi * t)
        loss = loss + fnp.where(big, stirling, 0)
    return _reduce(loss, reduction, fname)


def gaussian_nll_loss(input: Any, target: Any, var: Any, full: bool = False,
                      eps: float = 1e-6, reduction: str = "mean") -> Any:
    """Gaussian negative log-likelihood 0.5 * (log var + (input - target)^2 / var) (+ 0.5
    log 2 pi with ``full``). ``var``: the input's shape, one dim of size 1 (or the last dim
    missing) for shared variances, or a float. Variances below ``eps`` are clamped for the
    value only (the gradient passes through, as PyTorch).

    >>> import numpy as np
    >>> round(float(gaussian_nll_loss(np.zeros(3), np.ones(3), np.ones(3))), 4)
    0.5
    """
    fname = "gaussian_nll_loss"
    _check_broadcast(input, target, fname)
    if isinstance(var, (int, float)) and not isinstance(var, bool):
        if var < 0:
            raise ValueError(f"{fname}: var has negative entry/entries")
        var = fnp.full_like(input, var)
    else:
        hv = _host_value(var)
        if hv is not None and (hv < 0).any():
            raise ValueError(f"{fname}: var has negative entry/entries")
    ishape, vshape = tuple(fnp.shape(input)), tuple(fnp.shape(var))
    if vshape != ishape:
        if ishape[:-1] == vshape:
            var = fnp.expand_dims(var, -1)
        elif len(ishape) == len(vshape) and sum(
                v for i, v in zip(ishape, vshape) if i != v) == 1:
            pass
        else:
            raise ValueError(f"{fname}: var is of incorrect size: input shape {ishape} needs "
                             f"var of shape {ishape}, {ishape[:-1]} or with one dim of size 1,"
                             f" got {vshape}")
    _check_reduction(reduction, fname)
    var = var + funcgrad.stop_gradient(fnp.maximum(var, eps) - var)
    loss = 0.5 * (fnp.log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction, fname)


def _lse3(a: Any, b: Any, c: Any) -> Any:
    m = fnp.maximum(fnp.maximum(a, b), c)
    return m + fnp.log(fnp.exp(a - m) + fnp.exp(b - m) + fnp.exp(c - m))


def _ctc_targets(targets: Any, target_lengths: Any, n: int, fname: str) -> Any:
    """Targets as a padded ``(N, S)`` integer array."""
    tdt = getattr(targets, "dtype", None)
    if tdt is None or numpy.dtype(tdt).kind not in "iu":
        raise TypeError(f"{fname}: targets must be an integer array, got dtype {tdt}")
    if fnp.ndim(targets) == 2:
        if targets.shape[0] != n:
            raise BadInputError(f"{fname}: targets of shape {tuple(targets.shape)} need {n} rows "
                                "(the batch size)")
        return targets
    if fnp.ndim(targets) != 1:
        raise BadInputError(f"{fname}: targets must be (N, S) padded or 1-D concatenated, got "
                            f"shape {tuple(targets.shape)}")
    # Concatenated targets: gather each sequence's labels into a padded row.
    lens_h = _host_value(target_lengths)
    width = int(lens_h.max()) if lens_h is not None and lens_h.size else targets.shape[0]
    if lens_h is not None and int(lens_h.sum()) != targets.shape[0]:
        raise BadInputError(f"{fname}: 1-D targets hold {targets.shape[0]} labels but "
                            f"target_lengths sum to {int(lens_h.sum())}")
    tl = fnp.asarray(target_lengths)
    starts = fnp.cumsum(tl) - tl
    pos = starts[:, None] + _iota_like(targets, max(width, 1), tl.dtype)[None, :width]
    inside = _iota_like(targets, max(width, 1), tl.dtype)[None, :width] < tl[:, None]
    safe = fnp.where(inside, pos, 0)
    if targets.shape[0] == 0:
        return fnp.zeros_like(targets, shape=(n, width))
    return fnp.where(inside, fnp.take(targets, safe), 0)


@funcgrad.custom_jvp
def _nan_derivative_where(nll: Any, log_probs: Any, live: Any) -> Any:
    """``nll``, whose derivative with respect to ``log_probs[t, n, :]`` is NaN where
    ``live[t, n]``: PyTorch's gradient of an impossible alignment's infinite CTC loss (inf
    minus inf in its backward) at the frames the sample uses, and 0 at the others."""
    return nll


_nan_derivative_where.defjvps(
    lambda d, out, nll, lp, live: d,
    lambda d, out, nll, lp, live: fnp.sum(fnp.where(live[:, :, None], math.nan, 0) * d,
                                          axis=(0, 2)),
    None)


def ctc_loss(log_probs: Any, targets: Any, input_lengths: Any, target_lengths: Any,
             blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> Any:
    """Connectionist Temporal Classification loss: -log of the total probability of all
    alignments of each target with its input, summed in log space by the forward recursion
    (a :func:`funcgrad.scan` over time); reverse mode through it is the forward-backward
    algorithm.

    ``log_probs`` ``(T, N, C)`` (or unbatched ``(T, C)``) are log-softmax outputs, as
    PyTorch requires; they are renormalised over classes (``log_softmax``, a no-op on such
    inputs), so the loss is that of ``log_softmax(log_probs)``: on log-softmax inputs loss
    and gradient are PyTorch's, and the gradient is the true derivative of the returned
    loss. (On unnormalised scores PyTorch's kernel runs the recursion on them as given, a
    loss that can be negative, with a gradient that is not its derivative; here they are
    PyTorch's values for ``ctc_loss(log_softmax(x), ...)``.)
    ``targets`` ``(N, S)`` padded or 1-D concatenated (not containing ``blank``);
    ``input_lengths``/``target_lengths`` ``(N,)``. ``reduction="mean"`` divides each loss by
    its target length, then averages (PyTorch). Impossible alignments give ``inf`` with a NaN
    gradient at the frames the sample uses, as PyTorch (0, with zero gradient, under
    ``zero_infinity``).

    >>> import numpy as np
    >>> lp = np.log(np.full((2, 1, 2), 0.5))       # T=2, one sequence, 2 classes
    >>> round(float(ctc_loss(lp, np.array([[1]]), [2], [1], reduction="sum")), 4)  # -log 0.75
    0.2877
    """
    (log_probs,) = autocast_inputs("ctc_loss", log_probs)
    fname = "ctc_loss"
    _check_reduction(reduction, fname)
    if fnp.ndim(log_probs) not in (2, 3):
        raise BadInputError(f"{fname}: log_probs must be (T, N, C) or unbatched (T, C), got "
                            f"shape {tuple(fnp.shape(log_probs))}")
    unbatched = fnp.ndim(log_probs) == 2
    lp = log_probs[:, None] if unbatched else log_probs
    t_len, n, c = lp.shape
    if not 0 <= blank < c:
        raise BadInputError(f"{fname}: blank must be in label range [0, {c}), got {blank}")
    il = fnp.reshape(fnp.asarray(_on_device_of(input_lengths, lp)), (-1,))
    tl = fnp.reshape(fnp.asarray(_on_device_of(target_lengths, lp)), (-1,))
    targets = _on_device_of(targets, lp)
    if unbatched and fnp.ndim(targets) == 1:
        targets = targets[None]
    for what, v in (("input_lengths", il), ("target_lengths", tl)):
        if tuple(v.shape) != (n,):
            raise BadInputError(f"{fname}: {what} must have one entry per sequence ({n}), got "
                                f"shape {tuple(fnp.shape(v))}")
    tgt = _ctc_targets(targets, tl, n, fname)
    s_len = tgt.shape[1]
    il_h, tl_h, tg_h = _host_value(il), _host_value(tl), _host_value(tgt)
    if il_h is not None and ((il_h > t_len).any() or (il_h < 0).any()):
        raise BadInputError(f"{fname}: Expected input_lengths to have value at most {t_len} "
                            f"(and >= 0), but got {il_h.tolist()}")
    if tl_h is not None and ((tl_h > s_len).any() or (tl_h < 0).any()):
        raise BadInputError(f"{fname}: Expected target_lengths to be in [0, {s_len}] (the "
                            f"target width), but got {tl_h.tolist()}")
    if tg_h is not None and tl_h is not None and tg_h.size:
        live = numpy.arange(s_len)[None, :] < tl_h[:, None]
        if ((tg_h[live] < 0) | (tg_h[live] >= c)).any():
            raise IndexError(f"{fname}: target labels must be in [0, {c})")
    # Renormalise over classes: a no-op on log-softmax outputs (what PyTorch requires), and
    # it makes the gradient with respect to log_probs PyTorch's (its kernel returns the
    # derivative of CTC composed with log_softmax).
    raw = lp
    lp = log_softmax(lp, dim=-1)
    dt = lp.dtype
    neg = float(numpy.finfo(dt).min) / 4  # a finite -inf: keeps exp/log gradients NaN-free
    ext_len = 2 * s_len + 1
    # Extended labels: blank, l1, blank, l2, ..., blank.
    blanks = fnp.full_like(tgt, blank, shape=(n, s_len))
    ext = fnp.concatenate([fnp.reshape(fnp.stack([blanks, tgt], axis=-1), (n, 2 * s_len)),
                           fnp.full_like(tgt, blank, shape=(n, 1))], axis=1)
    em = fnp.take_along_axis(lp, fnp.broadcast_to(ext[None], (t_len, n, ext_len)), axis=2)
    em = fnp.maximum(em, neg)
    if s_len:
        skip = fnp.concatenate([fnp.zeros_like(ext, dtype=bool, shape=(n, 2)),
                                (ext[:, 2:] != ext[:, :-2]) & (ext[:, 2:] != blank)], axis=1)
    else:
        skip = fnp.zeros_like(ext, dtype=bool, shape=(n, 1))
    pos = _iota_like(lp, ext_len, numpy.int64)
    first = fnp.where(pos[None, :] < 2, em[0], neg) if t_len else None
    empty_start = fnp.where(pos[None, :] == 0, fnp.zeros_like(lp, shape=()), neg)
    alpha0 = empty_start if first is None else fnp.where((il > 0)[:, None], first, empty_start)
    pad1 = fnp.full_like(lp, neg, shape=(n, 1))
    pad2 = fnp.full_like(lp, neg, shape=(n, min(2, ext_len)))

    def step(alpha: Any, inp: Any) -> tuple[Any, None]:
        em_t, t = inp
        a1 = fnp.concatenate([pad1, alpha[:, :-1]], axis=1)
        a2 = fnp.concatenate([pad2, alpha[:, :-2]], axis=1)[:, :ext_len]
        a2 = fnp.where(skip, a2, neg)
        new = _lse3(alpha, a1, a2) + em_t
        return fnp.where((t < il)[:, None], new, alpha), None

    alpha = alpha0
    if t_len > 1:
        steps = _iota_like(il, t_len, il.dtype)[1:]
        alpha, _ = funcgrad.scan(step, alpha0, (em[1:], steps))
    last = fnp.take_along_axis(alpha, (2 * tl)[:, None], axis=1)[:, 0]
    before = fnp.take_along_axis(alpha, fnp.maximum(2 * tl - 1, 0)[:, None], axis=1)[:, 0]
    before = fnp.where(tl > 0, before, neg)
    m = fnp.maximum(last, before)
    ll = m + fnp.log(fnp.exp(last - m) + fnp.exp(before - m))
    impossible = ll < neg / 2
    nll = fnp.where(impossible, 0 if zero_infinity else math.inf, -ll)
    if not zero_infinity and t_len:
        frames = _iota_like(il, t_len, il.dtype)[:, None] < il[None, :]
        nll = _nan_derivative_where(nll, raw, frames & impossible[None, :])
    if reduction == "mean":  # over the batch of one too: the same value when unbatched
        return fnp.mean(nll / fnp.maximum(tl, 1).astype(dt))
    return _reduce(nll[0] if unbatched else nll, reduction, fname)


# -- convolution, pooling, fold/unfold (one module each; re-exported here) -------------------
from funcgrad_nn._convolution import *  # noqa: E402, F403
from funcgrad_nn._convolution import __all__ as _conv_all  # noqa: E402

__all__ += _conv_all
from funcgrad_nn._resampling import *  # noqa: E402, F403
from funcgrad_nn._resampling import __all__ as _resampling_all  # noqa: E402

__all__ += _resampling_all
from funcgrad_nn._pointwise import *  # noqa: E402, F403
from funcgrad_nn._pointwise import __all__ as _pointwise_all  # noqa: E402
from funcgrad_nn._pointwise import pairwise_distance  # noqa: E402  (the triplet losses)

__all__ += _pointwise_all
from funcgrad_nn._embedding_bag import embedding_bag  # noqa: E402
from funcgrad_nn._multi_head_attention import multi_head_attention_forward  # noqa: E402

__all__ += ["multi_head_attention_forward"]

__all__ += ["embedding_bag"]
from funcgrad_nn import _conv_grad as grad  # noqa: E402  (torch.nn.grad, as F.grad)
from funcgrad_nn._grouped_mm import grouped_mm  # noqa: E402

__all__ += ["grad", "grouped_mm"]
