"""Convolutions, transposed convolutions, pooling, fold/unfold (re-exported by ``functional``).

PyTorch's functional forms on top of ``funcgrad.lax``: this module turns PyTorch's arguments
(symmetric padding, ``'same'``, groups, ``output_padding``/``output_size``, ``ceil_mode``,
``count_include_pad``, flat ``return_indices``) into lax's, with PyTorch's checks and error
messages, and leaves the computing to lax. A convolution is ``lax.conv_general_dilated`` with
NCHW/OIHW dimension numbers (``groups`` is ``feature_group_count``); a transposed convolution
is the same with ``lhs_dilation = stride`` and the weight read as the reversed kernel (no
copy flips it); average pooling is lax's window sum (``reduce_window`` add); max pooling is
lax's window max, which ends on the ``window_argmax``/``window_gather`` primitives and hands
out the argmax that ``return_indices`` needs. ``ceil_mode`` is extra high padding. Derivatives,
batching and jit come from lax; there is no second copy of any of it here.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.avals import get_aval
from funcgrad.lax._convolution import ConvDimensionNumbers, conv_general_dilated_reversed
from funcgrad.lax._windows import window_max, window_sum
from funcgrad.ops.windows import fold as _fold_windows
from funcgrad.ops.windows import window_counts
from funcgrad_nn.amp import autocast_inputs
from funcgrad_nn.module import BadInputError

__all__ = [
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
    "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
    "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d_with_indices", "avg_pool1d", "avg_pool2d", "avg_pool3d",
    "conv1d", "conv2d", "conv3d", "conv_tbc", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "fold", "fractional_max_pool2d", "fractional_max_pool3d",
    "fractional_max_pool2d_with_indices", "fractional_max_pool3d_with_indices", "lp_pool1d",
    "lp_pool2d", "lp_pool3d", "max_pool1d", "max_pool2d", "max_pool3d",
    "max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d_with_indices",
    "max_unpool1d", "max_unpool2d", "max_unpool3d", "unfold",
]

_SHAPES = {1: "(N, C, L)", 2: "(N, C, H, W)", 3: "(N, C, D, H, W)"}


def ntuple(v: Any, n: int, name: str, fname: str) -> tuple[int, ...]:
    """``v`` (an int or a sequence of ``n`` ints) as an ``n``-tuple; a clear error otherwise."""
    if isinstance(v, (int, numpy.integer)) and not isinstance(v, bool):
        return (int(v),) * n
    try:
        t = tuple(int(i) for i in v)
    except TypeError:
        raise TypeError(f"{fname}: {name} must be an int or a tuple of {n} ints, got "
                        f"{v!r}") from None
    if len(t) == 1 and n > 1:
        t = t * n
    if len(t) != n:
        raise BadInputError(f"{fname}: {name} must be an int or a tuple of {n} ints, got {v!r}")
    return t


def _batched(input: Any, nd: int, fname: str, what: str = "input") -> tuple[Any, bool]:
    """``input`` with a batch axis, and whether it had none (``(C, *S)`` inputs)."""
    r = fnp.ndim(input)
    if r not in (nd + 1, nd + 2):
        unb = _SHAPES[nd].replace("N, ", "")
        raise BadInputError(f"{fname}: expected {what} {_SHAPES[nd]} or {unb} ({nd + 2}-D or "
                         f"{nd + 1}-D), got shape {tuple(fnp.shape(input))} ({r}-D)")
    if r == nd + 1:
        return fnp.expand_dims(input, 0), True
    return input, False


def _const_like(value: numpy.ndarray, like: Any) -> Any:
    """A host constant placed on ``like``'s device (matrices built from static sizes)."""
    dev = get_aval(like).device
    return value if dev in (None, "cpu") else funcgrad.device_put(value, dev)


# -- convolution ---------------------------------------------------------------------------


def _conv_padding(padding: Any, kernel: tuple, dilation: tuple, stride: tuple, nd: int,
                  fname: str) -> tuple[tuple[int, int], ...]:
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * nd
        if padding == "same":
            if any(s != 1 for s in stride):
                raise ValueError(f"{fname}: padding='same' is not supported for strided "
                                 "convolutions (use an explicit padding)")
            # PyTorch puts the odd element of the total on the right.
            return tuple((d * (k - 1) // 2, d * (k - 1) - d * (k - 1) // 2)
                         for k, d in zip(kernel, dilation))
        raise BadInputError(f"{fname}: padding must be 'valid', 'same', an int or a tuple, got "
                            f"{padding!r}")
    p = ntuple(padding, nd, "padding", fname)
    if any(v < 0 for v in p):
        raise BadInputError(f"{fname}: negative padding {padding!r}")
    return tuple((v, v) for v in p)


def dtype_mismatch(input: Any, weight: Any) -> str | None:
    """Why ``input`` cannot meet ``weight`` in a linear/convolution/recurrent layer, or None.

    Any difference of dtypes is refused, as PyTorch raises there ("mat1 and mat2 must have
    the same dtype, but got Double and Float"): a float64 NumPy input to a float32 layer
    would otherwise silently compute (and return) float64, and an integer one would be
    promoted. A weakly typed input (a Python scalar's) follows the weight.

    >>> import numpy as np
    >>> dtype_mismatch(np.ones(2, np.int64), np.ones(2, np.float32)).split(" (")[0]
    'input dtype int64 does not match weight dtype float32'
    >>> dtype_mismatch(np.ones(2, np.float64), np.ones(2, np.float32)).split(" (")[0]
    'input dtype float64 does not match weight dtype float32'
    >>> dtype_mismatch(np.ones(2, np.float32), np.ones(2, np.float32)) is None
    True
    """
    xa, wa = get_aval(input), get_aval(weight)  # a non-array fails here, by name
    xd, wd = xa.dtype, wa.dtype
    if xd == wd or (getattr(xa, "weak_type", False) and xd.kind in "biuf"
                    and wd.kind in "fc"):
        return None
    why = ("an integer/bool input to a floating layer" if xd.kind in "biu" else
           "an integer/bool weight with a floating input" if wd.kind in "biu" else
           "the input and the weights must have one dtype, as in PyTorch")
    return (f"input dtype {xd} does not match weight dtype {wd} ({why}). Fix: cast the "
            f"input, e.g. x.astype(np.{wd})"
            + (f", or the module, e.g. model.to(np.{xd})" if xd.kind in "fc" else ""))


def norm_params_dtype(fname: str, input: Any, *params: Any) -> Any:
    """The dtype a normalisation computes in, after PyTorch's "mixed dtype" check of its
    parameters (weight, bias, running statistics; None ones skipped).

    Every parameter must have the input's dtype, as PyTorch's CPU kernels refuse anything
    else (a float64 NumPy input to a float32 ``LayerNorm`` would otherwise silently compute
    and return float64), except its mixed-precision case: a float16 input with float32
    parameters computes in float32 and returns float16 (as does a float16 input with float16
    parameters: PyTorch's half kernels compute in float32). Returns None when the input's
    dtype is the one to compute in, else that dtype (float32; the caller casts the input and
    the parameters to it and the result back).

    >>> import numpy as np
    >>> norm_params_dtype("layer_norm", np.ones(2), np.ones(2)) is None
    True
    >>> norm_params_dtype("layer_norm", np.ones(2, np.float16), np.ones(2, np.float32))
    dtype('float32')
    >>> norm_params_dtype("layer_norm", np.ones(2), np.ones(2, np.float32))
    Traceback (most recent call last):
    ...
    funcgrad_nn.module.BadInputError: layer_norm: mixed dtype: input dtype float64 ...
    """
    xd = numpy.dtype(get_aval(input).dtype)
    pds = [numpy.dtype(get_aval(p).dtype) for p in params if p is not None]
    if xd == numpy.float16 and all(pd in (numpy.float16, numpy.float32) for pd in pds):
        # PyTorch computes half normalisations in float32 (its opmath type), whatever the
        # parameters: the variance of values above 256 overflows float16.
        return numpy.dtype(numpy.float32)
    if all(pd == xd for pd in pds):
        return None
    pd = next(pd for pd in pds if pd != xd)
    raise BadInputError(
        f"{fname}: mixed dtype: input dtype {xd} with a parameter (weight, bias or running "
        f"statistic) of dtype {pd}; as in PyTorch they must all have the input's dtype "
        f"(float32 ones may meet a float16 input). Fix: cast the input, e.g. "
        f"x.astype(np.{pd}), or the module, e.g. model.to(np.{xd})")


def check_bias_dtype(bias: Any, weight: Any, fname: str) -> None:
    """Refuse a ``bias`` whose dtype differs from ``weight``'s, as PyTorch does ("Input type
    (float) and bias type (double) should be the same"); a float64 NumPy bias would otherwise
    make a float32 layer's output float64. None and weakly typed values (Python scalars) pass.

    >>> import numpy as np
    >>> check_bias_dtype(np.ones(2, np.float32), np.ones((2, 2), np.float32), "linear")
    >>> check_bias_dtype(np.ones(2), np.ones((2, 2), np.float32), "linear")
    Traceback (most recent call last):
    ...
    funcgrad_nn.module.BadInputError: linear: bias dtype float64 does not match weight dtype ...
    """
    if bias is None or not hasattr(bias, "dtype"):
        return
    ba, wd = get_aval(bias), numpy.dtype(get_aval(weight).dtype)
    if numpy.dtype(ba.dtype) != wd and not getattr(ba, "weak_type", False):
        raise BadInputError(f"{fname}: bias dtype {numpy.dtype(ba.dtype)} does not match "
                            f"weight dtype {wd} (PyTorch refuses it too). Fix: cast the bias, "
                            f"e.g. bias.astype(np.{wd})")


def _same_dtype(x: Any, w: Any, fname: str) -> tuple[Any, Any]:
    """Input and weight in one dtype (lax wants one): a mismatch is refused as PyTorch
    refuses it, a weakly typed input takes the weight's dtype."""
    problem = dtype_mismatch(x, w)
    if problem is not None:
        raise BadInputError(f"{fname}: {problem}")
    xd, wd = get_aval(x).dtype, get_aval(w).dtype
    if xd == wd:
        return x, w
    dt = fnp.result_type(xd, wd)
    return (x if xd == dt else x.astype(dt)), (w if wd == dt else w.astype(dt))


def _conv(input: Any, weight: Any, bias: Any, stride: Any, padding: Any, dilation: Any,
          groups: int, nd: int, fname: str) -> Any:
    input, weight, bias = autocast_inputs(fname, input, weight, bias)
    x, unbatched = _batched(input, nd, fname)
    if fnp.ndim(weight) != nd + 2:
        raise BadInputError(f"{fname}: expected weight (out_channels, in_channels/groups, "
                         f"*kernel) with {nd + 2} dims, got shape {tuple(fnp.shape(weight))}")
    c = fnp.shape(x)[1]
    o, cg = fnp.shape(weight)[:2]
    kernel = tuple(fnp.shape(weight)[2:])
    if not isinstance(groups, (int, numpy.integer)) or groups < 1 or o % groups \
            or cg * groups != c:
        raise BadInputError(f"{fname}: input {tuple(fnp.shape(input))} has {c} channels but "
                         f"weight {tuple(fnp.shape(weight))} with groups={groups} expects "
                         f"{cg * groups} (in_channels = weight.shape[1] * groups; out_channels "
                         f"{o} must be divisible by groups)")
    st = ntuple(stride, nd, "stride", fname)
    dil = ntuple(dilation, nd, "dilation", fname)
    if any(v < 1 for v in st + dil):
        raise BadInputError(f"{fname}: stride {st} and dilation {dil} must be positive")
    pads = _conv_padding(padding, kernel, dil, st, nd, fname)
    spatial = tuple(fnp.shape(x)[2:])
    if any(n <= 0 for n in window_counts(spatial, kernel, st, dil, pads)):
        raise BadInputError(f"{fname}: kernel size {kernel} (dilation {dil}) is larger than the "
                         f"padded input {tuple(n + a + b for n, (a, b) in zip(spatial, pads))}")
    x, weight = _same_dtype(x, weight, fname)
    # NCHW / OIHW / NCHW: lax's default dimension numbers.
    out = lax.conv_general_dilated(x, weight, st, pads, rhs_dilation=dil,
                                   feature_group_count=groups)
    if bias is not None:
        check_bias_dtype(bias, weight, fname)
        out = out + fnp.reshape(bias, (1, o) + (1,) * nd)
    return out[0] if unbatched else out


def conv1d(input: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0,
           dilation: Any = 1, groups: int = 1) -> Any:
    """1-D cross-correlation: input ``(N, C, L)`` or ``(C, L)``, weight ``(O, C // groups, k)``.

    >>> import numpy as np
    >>> conv1d(np.arange(5.0).reshape(1, 1, 5), np.ones((1, 1, 2)))
    array([[[1., 3., 5., 7.]]])
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv2d(input: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0,
           dilation: Any = 1, groups: int = 1) -> Any:
    """2-D cross-correlation (PyTorch's conv2d): input ``(N, C, H, W)`` or ``(C, H, W)``,
    weight ``(O, C // groups, kh, kw)``; zero padding (int, pair, 'valid' or 'same').

    >>> import numpy as np
    >>> x = np.arange(16.0).reshape(1, 1, 4, 4)
    >>> conv2d(x, np.ones((1, 1, 2, 2)), stride=2)
    array([[[[10., 18.],
             [42., 50.]]]])
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def conv3d(input: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0,
           dilation: Any = 1, groups: int = 1) -> Any:
    """3-D cross-correlation: input ``(N, C, D, H, W)`` or ``(C, D, H, W)``, weight
    ``(O, C // groups, kd, kh, kw)``.

    >>> import numpy as np
    >>> conv3d(np.ones((1, 1, 2, 3, 3)), np.ones((2, 1, 2, 2, 2))).shape
    (1, 2, 1, 2, 2)
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


def conv_tbc(input: Any, weight: Any, bias: Any, pad: int = 0) -> Any:
    """1-D cross-correlation in time-batch-channel layout (PyTorch's ``conv_tbc``): input
    ``(T, B, Cin)``, weight ``(k, Cin, Cout)``, bias ``(Cout,)`` (or None), ``pad`` zeros
    at both ends of time; output ``(T + 2 * pad - k + 1, B, Cout)``.

    >>> import numpy as np
    >>> conv_tbc(np.arange(4.0).reshape(4, 1, 1), np.ones((2, 1, 1)), np.zeros(1))[:, 0, 0]
    array([1., 3., 5.])
    """
    if fnp.ndim(input) != 3 or fnp.ndim(weight) != 3:
        raise BadInputError(f"conv_tbc: expected input (time, batch, in_channels) and weight "
                            f"(kernel, in_channels, out_channels), got shapes "
                            f"{tuple(fnp.shape(input))} and {tuple(fnp.shape(weight))}")
    if bias is not None and tuple(fnp.shape(bias)) != (fnp.shape(weight)[2],):
        raise BadInputError(f"conv_tbc: expected bias of shape ({fnp.shape(weight)[2]},), got "
                            f"{tuple(fnp.shape(bias))}")
    out = _conv(fnp.transpose(input, (1, 2, 0)), fnp.transpose(weight, (2, 1, 0)), bias, 1,
                int(pad), 1, 1, 1, "conv_tbc")
    return fnp.transpose(out, (2, 0, 1))


def transposed_output_padding(in_sizes: tuple, kernel: tuple, stride: tuple, padding: tuple,
                              dilation: tuple, output_padding: tuple, output_size: Any,
                              nd: int, fname: str) -> tuple[int, ...]:
    """The output padding of a transposed convolution, from ``output_padding`` or from a
    requested ``output_size`` (PyTorch's rules, with its errors)."""
    if output_size is None:
        for op, s, d in zip(output_padding, stride, dilation):
            if op < 0 or (op >= s and op >= d):
                raise BadInputError(f"{fname}: output_padding {output_padding} must be smaller "
                                 f"than either stride {stride} or dilation {dilation} (and "
                                 "non-negative); use output_size= to pick among the possible "
                                 "output sizes")
        return output_padding
    size = list(output_size)
    if len(size) == nd + 2:
        size = size[2:]
    elif len(size) == nd + 1:
        size = size[1:]
    if len(size) != nd:
        raise ValueError(f"{fname}: output_size must have {nd} or {nd + 2} elements, got "
                         f"{tuple(output_size)}")
    out = []
    for i in range(nd):
        lo = (in_sizes[i] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (kernel[i] - 1) + 1
        hi = lo + stride[i] - 1
        if not lo <= int(size[i]) <= hi:
            raise ValueError(f"{fname}: requested an output size of {tuple(size)}, but valid "
                             f"sizes for input spatial size {tuple(in_sizes)} range from "
                             f"{lo} to {hi} on axis {i}")
        out.append(int(size[i]) - lo)
    return tuple(out)


def _conv_transpose(input: Any, weight: Any, bias: Any, stride: Any, padding: Any,
                    output_padding: Any, groups: int, dilation: Any, nd: int, fname: str,
                    output_size: Any = None) -> Any:
    input, weight, bias = autocast_inputs(fname, input, weight, bias)
    x, unbatched = _batched(input, nd, fname)
    if fnp.ndim(weight) != nd + 2:
        raise BadInputError(f"{fname}: expected weight (in_channels, out_channels/groups, "
                         f"*kernel) with {nd + 2} dims, got shape {tuple(fnp.shape(weight))}")
    c = fnp.shape(x)[1]
    ci, og = fnp.shape(weight)[:2]
    kernel = tuple(fnp.shape(weight)[2:])
    if not isinstance(groups, (int, numpy.integer)) or groups < 1 or ci % groups or ci != c:
        raise BadInputError(f"{fname}: input {tuple(fnp.shape(input))} has {c} channels but "
                         f"weight {tuple(fnp.shape(weight))} expects {ci} (weight is "
                         f"(in_channels, out_channels/groups, *kernel); in_channels must be "
                         f"divisible by groups={groups})")
    st = ntuple(stride, nd, "stride", fname)
    dil = ntuple(dilation, nd, "dilation", fname)
    pad = ntuple(padding, nd, "padding", fname)
    opad = ntuple(output_padding, nd, "output_padding", fname)
    if any(v < 1 for v in st + dil) or any(v < 0 for v in pad):
        raise BadInputError(f"{fname}: stride {st} and dilation {dil} must be positive, padding "
                         f"{pad} non-negative")
    in_sizes = tuple(fnp.shape(x)[2:])
    opad = transposed_output_padding(in_sizes, kernel, st, pad, dil, opad, output_size, nd,
                                     fname)
    out_sizes = tuple((n - 1) * s - 2 * p + d * (k - 1) + op + 1
                      for n, s, p, d, k, op in zip(in_sizes, st, pad, dil, kernel, opad))
    if any(v <= 0 for v in out_sizes):
        raise BadInputError(f"{fname}: the output size {out_sizes} is not positive (padding "
                         f"{pad} too large for input {in_sizes} and kernel {kernel})")
    # PyTorch's transposed convolution is lax's convolution of the input dilated by the
    # stride with the kernel (Cout, Cin/G, *K) reversed: weight (Cin, Cout/G, *K) is that
    # reversed kernel with its feature axes swapped per group (for one group a change of
    # dimension numbers, no copy). Padding p on the output is d*(k-1) - p on the dilated
    # input, output_padding more at the end.
    x, weight = _same_dtype(x, weight, fname)
    iota = tuple(range(nd + 2))
    if groups == 1:
        w, dn = weight, ConvDimensionNumbers(iota, (1, 0) + iota[2:], iota)
    else:
        w = fnp.reshape(fnp.swapaxes(fnp.reshape(weight, (groups, ci // groups, og) + kernel),
                                     1, 2), (groups * og, ci // groups) + kernel)
        dn = ConvDimensionNumbers(iota, iota, iota)
    pads = tuple((d * (k - 1) - p, d * (k - 1) - p + op)
                 for k, p, d, op in zip(kernel, pad, dil, opad))
    out = conv_general_dilated_reversed(x, w, (1,) * nd, pads, st, dil, dn,
                                        feature_group_count=groups)
    if bias is not None:
        check_bias_dtype(bias, weight, fname)
        out = out + fnp.reshape(bias, (1, groups * og) + (1,) * nd)
    return out[0] if unbatched else out


def conv_transpose1d(input: Any, weight: Any, bias: Any = None, stride: Any = 1,
                     padding: Any = 0, output_padding: Any = 0, groups: int = 1,
                     dilation: Any = 1, *, output_size: Any = None) -> Any:
    """1-D transposed convolution (the gradient of :func:`conv1d` w.r.t. its input): input
    ``(N, Cin, L)``, weight ``(Cin, Cout // groups, k)``; output length
    ``(L - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1``.

    >>> import numpy as np
    >>> conv_transpose1d(np.ones((1, 1, 3)), np.ones((1, 1, 2)), stride=2)
    array([[[1., 1., 1., 1., 1., 1.]]])
    """
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 1, "conv_transpose1d", output_size)


def conv_transpose2d(input: Any, weight: Any, bias: Any = None, stride: Any = 1,
                     padding: Any = 0, output_padding: Any = 0, groups: int = 1,
                     dilation: Any = 1, *, output_size: Any = None) -> Any:
    """2-D transposed convolution: input ``(N, Cin, H, W)``, weight ``(Cin, Cout // groups,
    kh, kw)`` (PyTorch's layout); ``output_size=`` picks ``output_padding`` as PyTorch.

    >>> import numpy as np
    >>> conv_transpose2d(np.ones((1, 2, 3, 3)), np.ones((2, 4, 4, 4)), stride=2,
    ...                  padding=1).shape
    (1, 4, 6, 6)
    """
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 2, "conv_transpose2d", output_size)


def conv_transpose3d(input: Any, weight: Any, bias: Any = None, stride: Any = 1,
                     padding: Any = 0, output_padding: Any = 0, groups: int = 1,
                     dilation: Any = 1, *, output_size: Any = None) -> Any:
    """3-D transposed convolution: input ``(N, Cin, D, H, W)``, weight
    ``(Cin, Cout // groups, kd, kh, kw)``.

    >>> import numpy as np
    >>> conv_transpose3d(np.ones((1, 1, 2, 2, 2)), np.ones((1, 3, 2, 2, 2)), stride=2).shape
    (1, 3, 4, 4, 4)
    """
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 3, "conv_transpose3d", output_size)


# -- unfold / fold ---------------------------------------------------------------------------


def unfold(input: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
           stride: Any = 1) -> Any:
    """Sliding blocks of ``(N, C, H, W)`` (or ``(C, H, W)``) as columns
    ``(N, C * kh * kw, L)`` (PyTorch's ``F.unfold``/im2col).

    >>> import numpy as np
    >>> unfold(np.arange(9.0).reshape(1, 1, 3, 3), 2)[0]
    array([[0., 1., 3., 4.],
           [1., 2., 4., 5.],
           [3., 4., 6., 7.],
           [4., 5., 7., 8.]])
    """
    fname = "unfold"
    x, unbatched = _batched(input, 2, fname)
    k = ntuple(kernel_size, 2, "kernel_size", fname)
    d = ntuple(dilation, 2, "dilation", fname)
    p = ntuple(padding, 2, "padding", fname)
    s = ntuple(stride, 2, "stride", fname)
    pads = tuple((v, v) for v in p)
    if any(c <= 0 for c in window_counts(tuple(fnp.shape(x)[2:]), k, s, d, pads)):
        raise BadInputError(f"{fname}: kernel {k} (dilation {d}) does not fit the input "
                         f"{tuple(fnp.shape(x))} with padding {p}")
    # PyTorch's (C, kh, kw)-major columns are lax's channel-major patch features.
    cols = lax.conv_general_dilated_patches(x, k, s, pads, rhs_dilation=d)  # (N, C*K, *O)
    sh = fnp.shape(cols)
    out = fnp.reshape(cols, (sh[0], sh[1], sh[2] * sh[3]))
    return out[0] if unbatched else out


def fold(input: Any, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
         stride: Any = 1) -> Any:
    """Sum columns ``(N, C * kh * kw, L)`` (or unbatched) back into ``(N, C, *output_size)``
    (PyTorch's ``F.fold``/col2im; the adjoint of :func:`unfold`).

    >>> import numpy as np
    >>> fold(np.ones((1, 4, 4)), (3, 3), 2)[0, 0]
    array([[1., 2., 1.],
           [2., 4., 2.],
           [1., 2., 1.]])
    """
    fname = "fold"
    r = fnp.ndim(input)
    if r not in (2, 3):
        raise BadInputError(f"{fname}: expected input (N, C * prod(kernel_size), L) or "
                         f"(C * prod(kernel_size), L), got shape {tuple(fnp.shape(input))}")
    x = fnp.expand_dims(input, 0) if r == 2 else input
    size = ntuple(output_size, 2, "output_size", fname)
    k = ntuple(kernel_size, 2, "kernel_size", fname)
    d = ntuple(dilation, 2, "dilation", fname)
    p = ntuple(padding, 2, "padding", fname)
    s = ntuple(stride, 2, "stride", fname)
    pads = tuple((v, v) for v in p)
    counts = window_counts(size, k, s, d, pads)
    n, ck, length = fnp.shape(x)
    if ck % (k[0] * k[1]) or length != counts[0] * counts[1] or min(counts) <= 0:
        raise BadInputError(f"{fname}: input {tuple(fnp.shape(input))} needs dim 1 divisible by "
                         f"prod(kernel_size) = {k[0] * k[1]} and L = {max(counts[0], 0) * max(counts[1], 0)} "
                         f"blocks for output_size {size}, kernel {k}, dilation {d}, padding "
                         f"{p}, stride {s}")
    cols = fnp.reshape(fnp.moveaxis(x, 0, 1), (ck // (k[0] * k[1]),) + k + (n,) + counts)
    out = _fold_windows(cols, size, k, s, d, pads)
    return out[0] if r == 2 else out


# -- pooling ---------------------------------------------------------------------------------


def _pool_out_size(size: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    # PyTorch's pooling_output_shape: in ceil mode the last window must still start inside
    # the input or the left padding.
    num = size + 2 * p - d * (k - 1) - 1
    if ceil_mode:
        out = -(-num // s) + 1
        if (out - 1) * s >= size + p:
            out -= 1
    else:
        out = num // s + 1
    return out


def _pool_setup(input: Any, nd: int, kernel_size: Any, stride: Any, padding: Any,
                dilation: Any, ceil_mode: bool, fname: str) -> tuple:
    """Batched input, whether it was unbatched, kernel/stride/padding/dilation and the output
    sizes (PyTorch's checks and errors)."""
    x, unbatched = _batched(input, nd, fname)
    k = ntuple(kernel_size, nd, "kernel_size", fname)
    # PyTorch's functional forms also take an empty stride list for "same as kernel".
    s = k if stride is None or (isinstance(stride, (list, tuple)) and not stride) else \
        ntuple(stride, nd, "stride", fname)
    p = ntuple(padding, nd, "padding", fname)
    d = ntuple(dilation, nd, "dilation", fname)
    if any(v <= 0 for v in k + s + d):
        raise BadInputError(f"{fname}: kernel_size {k}, stride {s} and dilation {d} must be "
                         "positive")
    if any(pi < 0 or pi > ki // 2 for pi, ki in zip(p, k)):
        raise BadInputError(f"{fname}: padding {p} should be non-negative and at most half of "
                         f"kernel size {k}")
    sizes = tuple(fnp.shape(x)[2:])
    out = tuple(_pool_out_size(n, *a, ceil_mode) for n, a in zip(sizes, zip(k, s, p, d)))
    if any(o <= 0 for o in out):
        raise BadInputError(f"{fname}: given input size {sizes}, the calculated output size "
                         f"{out} is too small")
    return x, unbatched, k, s, p, d, out


def _right_pads(x: Any, k: tuple, s: tuple, p: tuple, d: tuple, out: tuple) -> tuple:
    """(lo, hi) padding of every axis of ``x`` so exactly ``out`` windows fit: PyTorch's
    symmetric ``p`` with the ``ceil_mode`` overhang as extra high padding (negative: the
    tail that no window reaches)."""
    return ((0, 0), (0, 0)) + tuple(
        (pi, (oi - 1) * si + di * (ki - 1) + 1 - n - pi)
        for n, ki, si, pi, di, oi in zip(fnp.shape(x)[2:], k, s, p, d, out))


def _lowest(dtype: Any) -> Any:
    dt = numpy.dtype(dtype)
    if dt.kind == "f":
        return dt.type(-numpy.inf)
    if dt.kind in "iu":
        return dt.type(numpy.iinfo(dt).min)
    raise TypeError(f"max pooling: unsupported dtype {dt}")


def _iota(like: Any, n: int, shape: tuple) -> Any:
    """0..n-1 as int64 on ``like``'s device, reshaped to ``shape`` (which holds n elements)."""
    ones = fnp.ones_like(like, dtype=numpy.int64, shape=(n,))
    return fnp.reshape(fnp.cumsum(ones) - 1, shape)


def _max_pool(input: Any, nd: int, kernel_size: Any, stride: Any, padding: Any,
              dilation: Any, ceil_mode: bool, return_indices: bool, fname: str) -> Any:
    x, unbatched, k, s, p, d, out = _pool_setup(input, nd, kernel_size, stride, padding,
                                                dilation, ceil_mode, fname)
    if 0 in fnp.shape(x)[:2]:  # no planes: nothing to pool (lax wants a window per axis)
        res = fnp.zeros_like(x, shape=tuple(fnp.shape(x)[:2]) + out)
        idx = fnp.zeros_like(x, dtype=numpy.int64, shape=tuple(fnp.shape(x)[:2]) + out)
        if unbatched:
            res, idx = res[0], idx[0]
        return (res, idx) if return_indices else res
    # Padding holds the dtype's lowest value, so a padded element is never the maximum.
    # lax's window max picks each window's first maximum (PyTorch's choice among ties; a NaN
    # is a maximum) and routes the gradient to that one element.
    one = (1, 1)
    lowest = _lowest(x.dtype)
    res, arg = window_max(x, lowest, one + k, one + s, _right_pads(x, k, s, p, d, out), None,
                          one + d)
    if not return_indices:
        return res[0] if unbatched else res
    # Flat index of each maximum within its (unpadded) input's spatial plane.
    arg = arg.astype(numpy.int64)
    sizes = tuple(fnp.shape(input)[-nd:])
    idx = None
    rem = arg
    first = numpy.zeros((1,) * nd, dtype=numpy.int64)
    for i in range(nd):
        inner = math.prod(k[i + 1:])
        ki = rem // inner
        rem = rem % inner
        pos = _iota(arg, out[i], (out[i],) + (1,) * (nd - 1 - i)) * s[i] - p[i] + ki * d[i]
        idx = pos if idx is None else idx * sizes[i] + pos
        start = numpy.arange(out[i]) * s[i] - p[i]
        tap = start + (numpy.maximum(-start, 0) + d[i] - 1) // d[i] * d[i]
        first = first * sizes[i] + tap.reshape((out[i],) + (1,) * (nd - 1 - i))
    # A window with nothing above the dtype's lowest value (all -inf, or only padding) has,
    # in PyTorch, the index of its first tap inside the input or past its left padding.
    idx = fnp.where(res == lowest, _const_like(first, idx), idx)
    return (res[0], idx[0]) if unbatched else (res, idx)


def max_pool1d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False
               ) -> Any:
    """1-D max pooling over ``(N, C, L)`` or ``(C, L)`` (see :func:`max_pool2d`).

    >>> import numpy as np
    >>> max_pool1d(np.array([[1.0, 3.0, 2.0, 5.0, 4.0]]), 2, ceil_mode=True)
    array([[3., 5., 4.]])
    """
    return _max_pool(input, 1, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices, "max_pool1d")


def max_pool2d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False
               ) -> Any:
    """2-D max pooling over ``(N, C, H, W)`` or ``(C, H, W)`` (padding counts as -inf).

    ``ceil_mode`` uses PyTorch's output-size rule; ``return_indices=True`` also returns the
    int64 flat index of each maximum within its input's ``H * W`` plane. NaNs propagate;
    the gradient goes to the (first) maximum only, as in PyTorch.

    >>> import numpy as np
    >>> max_pool2d(np.arange(16.0).reshape(1, 1, 4, 4), 2)
    array([[[[ 5.,  7.],
             [13., 15.]]]])
    >>> max_pool2d(np.arange(9.0).reshape(1, 3, 3), 2, ceil_mode=True, return_indices=True)[1]
    array([[[4, 5],
            [7, 8]]])
    """
    return _max_pool(input, 2, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices, "max_pool2d")


def max_pool3d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False
               ) -> Any:
    """3-D max pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)`` (indices flat within
    each ``D * H * W`` volume).

    >>> import numpy as np
    >>> max_pool3d(np.arange(8.0).reshape(1, 2, 2, 2), 2).ravel()
    array([7.])
    """
    # autocast: the CPU runs max_pool3d in float32, not max_pool3d_with_indices (PyTorch's)
    input = autocast_inputs("max_pool3d_with_indices" if return_indices else "max_pool3d",
                            input)[0]
    return _max_pool(input, 3, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices, "max_pool3d")


def _avg_pool(input: Any, nd: int, kernel_size: Any, stride: Any, padding: Any,
              ceil_mode: bool, count_include_pad: bool, divisor_override: int | None,
              fname: str) -> Any:
    x, unbatched, k, s, p, d, out = _pool_setup(input, nd, kernel_size, stride, padding, 1,
                                                ceil_mode, fname)
    if nd == 3 and any(n < ki for n, ki in zip(fnp.shape(x)[2:], k)):
        # PyTorch's 3-D average pooling (only) wants the unpadded input to hold a window.
        raise BadInputError(f"{fname}: input image {tuple(fnp.shape(x)[2:])} smaller than kernel "
                         f"size {k}")
    # PyTorch averages int64 in int64 (the sum divided with truncation toward zero); other
    # integer inputs (which PyTorch refuses) average in float64, whose sum cannot wrap.
    int64 = numpy.dtype(x.dtype) == numpy.int64
    if numpy.dtype(x.dtype).kind not in "fc" and not int64:
        x = x.astype(numpy.float64)
    one = (1, 1)
    total = window_sum(x, 0, one + k, one + s, _right_pads(x, k, s, p, d, out))
    if int64:
        div = _avg_divisor(total, nd, k, s, p, out, tuple(fnp.shape(x)[2:]), count_include_pad,
                           divisor_override, fname)
        res = fnp.sign(total) * (fnp.abs(total) // _const_like(div.astype(numpy.int64), total))
    elif divisor_override is not None:
        if divisor_override == 0:
            raise BadInputError(f"{fname}: divisor_override must be non-zero")
        res = total / divisor_override
    else:
        sizes = tuple(fnp.shape(x)[2:])
        exact = all((o - 1) * si + ki <= n + 2 * pi
                    for o, si, ki, n, pi in zip(out, s, k, sizes, p))
        if exact and (count_include_pad or not any(p)):
            res = total / math.prod(k)
        else:
            div = _avg_divisor(total, nd, k, s, p, out, sizes, count_include_pad, None, fname)
            dt = total.dtype if numpy.dtype(total.dtype).kind == "f" else numpy.float64
            res = total / _const_like(div.astype(dt), total)
    return res[0] if unbatched else res


def _avg_divisor(total: Any, nd: int, k: tuple, s: tuple, p: tuple, out: tuple, sizes: tuple,
                 count_include_pad: bool, divisor_override: int | None, fname: str
                 ) -> numpy.ndarray:
    """PyTorch's divisor of each window (host, shaped like the output's spatial axes): the
    window clipped to the padded input (padding counts with ``count_include_pad``, the
    ceil-mode overhang never does), or to the input itself; or ``divisor_override``."""
    if divisor_override is not None:
        if divisor_override == 0:
            raise BadInputError(f"{fname}: divisor_override must be non-zero")
        return numpy.full(out, divisor_override)
    div = numpy.ones(out, dtype=numpy.int64)
    for i, (o, si, ki, n, pi) in enumerate(zip(out, s, k, sizes, p)):
        start = numpy.arange(o) * si - pi
        end = numpy.minimum(start + ki, n + pi)
        if not count_include_pad:
            start, end = numpy.maximum(start, 0), numpy.minimum(end, n)
        div = div * (end - start).reshape((o,) + (1,) * (nd - 1 - i))
    return div


def avg_pool1d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True) -> Any:
    """1-D average pooling over ``(N, C, L)`` or ``(C, L)`` (see :func:`avg_pool2d`).

    >>> import numpy as np
    >>> avg_pool1d(np.array([[1.0, 3.0, 2.0, 6.0]]), 2)
    array([[2., 4.]])
    """
    return _avg_pool(input, 1, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     None, "avg_pool1d")


def avg_pool2d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Any:
    """2-D average pooling with PyTorch's divisor rules (``count_include_pad`` counts the
    zero padding but never the ``ceil_mode`` overhang; ``divisor_override`` replaces both).

    >>> import numpy as np
    >>> avg_pool2d(np.arange(16.0).reshape(1, 1, 4, 4), 2)
    array([[[[ 2.5,  4.5],
             [10.5, 12.5]]]])
    >>> avg_pool2d(np.ones((1, 3, 3)), 2, ceil_mode=True)
    array([[[1., 1.],
            [1., 1.]]])
    """
    return _avg_pool(input, 2, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override, "avg_pool2d")


def avg_pool3d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Any:
    """3-D average pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)`` (rules of
    :func:`avg_pool2d`).

    >>> import numpy as np
    >>> avg_pool3d(np.arange(8.0).reshape(1, 2, 2, 2), 2).ravel()
    array([3.5])
    """
    input = autocast_inputs("avg_pool3d", input)[0]
    return _avg_pool(input, 3, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override, "avg_pool3d")


def _lp_pool(input: Any, nd: int, norm_type: Any, kernel_size: Any, stride: Any,
             ceil_mode: bool, fname: str) -> Any:
    # PyTorch's definition, step for step: the window sum of x**p (an average pool times the
    # window size: with ceil_mode the clipped edge windows are scaled as PyTorch scales them),
    # negative sums clamped to 0 (their gradient is 0, as relu's), then the p-th root.
    # p = +-inf is a max pool of |x| (of -|x|, negated).
    if norm_type in (numpy.inf, -numpy.inf):
        sign = 1 if norm_type > 0 else -1
        return sign * _max_pool(sign * fnp.abs(input), nd, kernel_size, stride, 0, 1, ceil_mode,
                                False, fname)
    k = ntuple(kernel_size, nd, "kernel_size", fname)
    out = _avg_pool(input ** norm_type, nd, kernel_size, stride, 0, ceil_mode, True, None,
                    fname)
    # PyTorch's sign(s) * relu(|s|) is s, except that a window summing to exactly 0 gets a
    # zero gradient (documented) where the root's derivative is infinite: the root is taken
    # of 1 in its place and 0 selected (no inf, no NaN). A negative sum stays NaN, as there.
    total = out * math.prod(k)
    if norm_type <= 0:
        return total ** (1.0 / norm_type)
    hit = total != 0
    return fnp.where(hit, fnp.where(hit, total, 1) ** (1.0 / norm_type), 0)


def lp_pool1d(input: Any, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Any:
    """1-D power-average pooling: ``(sum of x**p over each window) ** (1/p)`` over ``(N, C, L)``
    or ``(C, L)`` (PyTorch's ``lp_pool1d``; ``p = inf`` is a max pool of ``|x|``).

    >>> import numpy as np
    >>> lp_pool1d(np.array([[3.0, 4.0, 1.0, 0.0]]), 2, 2)
    array([[5., 1.]])
    """
    return _lp_pool(input, 1, norm_type, kernel_size, stride, ceil_mode, "lp_pool1d")


def lp_pool2d(input: Any, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Any:
    """2-D power-average pooling over ``(N, C, H, W)`` or ``(C, H, W)`` (PyTorch's
    ``lp_pool2d``: no padding; a window whose sum of ``x**p`` is negative gives 0).

    >>> import numpy as np
    >>> lp_pool2d(np.full((1, 2, 2), 2.0), 2, 2)
    array([[[4.]]])
    """
    return _lp_pool(input, 2, norm_type, kernel_size, stride, ceil_mode, "lp_pool2d")


def lp_pool3d(input: Any, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Any:
    """3-D power-average pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)``.

    >>> import numpy as np
    >>> lp_pool3d(np.ones((1, 2, 2, 2)), 1, 2).ravel()
    array([8.])
    """
    input = autocast_inputs("lp_pool3d", input)[0]
    return _lp_pool(input, 3, norm_type, kernel_size, stride, ceil_mode, "lp_pool3d")


def _max_unpool(input: Any, indices: Any, nd: int, kernel_size: Any, stride: Any,
                padding: Any, output_size: Any, fname: str) -> Any:
    x, unbatched = _batched(input, nd, fname)
    if tuple(fnp.shape(indices)) != tuple(fnp.shape(input)):
        raise BadInputError(f"{fname}: indices shape {tuple(fnp.shape(indices))} must match the "
                         f"input shape {tuple(fnp.shape(input))}")
    idx = fnp.expand_dims(indices, 0) if unbatched else indices
    k = ntuple(kernel_size, nd, "kernel_size", fname)
    s = k if stride is None else ntuple(stride, nd, "stride", fname)
    p = ntuple(padding, nd, "padding", fname)
    n, c = fnp.shape(x)[:2]
    in_sizes = tuple(fnp.shape(x)[2:])
    default = tuple((i - 1) * si - 2 * pi + ki for i, si, pi, ki in zip(in_sizes, s, p, k))
    if output_size is None:
        size = default
    else:
        if len(output_size) not in (nd, nd + 2):
            raise ValueError(f"{fname}: output_size should be a sequence of {nd} or {nd + 2} "
                             f"elements, got {tuple(output_size)}")
        size = tuple(int(v) for v in output_size)[-nd:]
        for i in range(nd):
            if not default[i] - s[i] < size[i] < default[i] + s[i]:
                raise ValueError(f"{fname}: output_size {size} must be within one stride "
                                 f"{s} of the default size {default}")
    plane = math.prod(size)
    hv = None if funcgrad.core.is_tracer(idx) else numpy.asarray(funcgrad.to_numpy(idx))
    if hv is not None and hv.size and (hv.min() < 0 or hv.max() >= plane):
        raise IndexError(f"{fname}: an index in indices is out of range for the output size "
                         f"{size} (found {int(hv.min())}..{int(hv.max())}, plane {plane})")
    flat_x = fnp.reshape(x, (n * c, math.prod(in_sizes)))  # (no -1: n * c may be 0)
    flat_i = fnp.reshape(idx, (n * c, math.prod(in_sizes))).astype(numpy.int64)
    out = fnp.reshape(_unpool_scatter(flat_x, flat_i, plane), (n, c) + size)
    return out[0] if unbatched else out


def _unpool_scatter_fun(flat_x: Any, flat_i: Any, plane: int) -> Any:
    """Rows of ``flat_x`` written at columns ``flat_i`` of zero rows ``plane`` long."""
    rows = _iota(flat_i, fnp.shape(flat_i)[0], (fnp.shape(flat_i)[0], 1))
    return fnp.at(fnp.zeros_like(flat_x, shape=(fnp.shape(flat_x)[0], plane)))[
        rows, flat_i].set(flat_x, mode="raise")


# PyTorch's max_unpool gradient reads the output's gradient at every index: an index that
# occurs twice (overlapping pooling windows that share a maximum) passes the gradient to both
# inputs, where the derivative of a scatter would give it to the one written last.
_unpool_scatter = funcgrad.custom_vjp(_unpool_scatter_fun, nondiff_argnums=(2,))
_unpool_scatter.defvjp(
    lambda flat_x, flat_i, plane: (_unpool_scatter_fun(flat_x, flat_i, plane), flat_i),
    lambda plane, flat_i, ct: (fnp.take_along_axis(ct, flat_i, axis=1), None))


def max_unpool1d(input: Any, indices: Any, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Any:
    """Partial inverse of :func:`max_pool1d`: values written at ``indices``, zeros elsewhere.

    >>> import numpy as np
    >>> v, i = max_pool1d(np.array([[[1.0, 3.0, 2.0, 5.0]]]), 2, return_indices=True)
    >>> max_unpool1d(v, i, 2)
    array([[[0., 3., 0., 5.]]])
    """
    input = autocast_inputs("max_unpool1d", input)[0]
    return _max_unpool(input, indices, 1, kernel_size, stride, padding, output_size,
                       "max_unpool1d")


def max_unpool2d(input: Any, indices: Any, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Any:
    """Partial inverse of :func:`max_pool2d` (indices flat within each ``H * W`` plane).

    >>> import numpy as np
    >>> v, i = max_pool2d(np.arange(16.0).reshape(1, 1, 4, 4), 2, return_indices=True)
    >>> max_unpool2d(v, i, 2)[0, 0, 1]
    array([0., 5., 0., 7.])
    """
    input = autocast_inputs("max_unpool2d", input)[0]
    return _max_unpool(input, indices, 2, kernel_size, stride, padding, output_size,
                       "max_unpool2d")


def max_unpool3d(input: Any, indices: Any, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Any:
    """Partial inverse of :func:`max_pool3d`.

    >>> import numpy as np
    >>> v, i = max_pool3d(np.arange(8.0).reshape(1, 1, 2, 2, 2), 2, return_indices=True)
    >>> max_unpool3d(v, i, 2).ravel()
    array([0., 0., 0., 0., 0., 0., 0., 7.])
    """
    input = autocast_inputs("max_unpool3d", input)[0]
    return _max_unpool(input, indices, 3, kernel_size, stride, padding, output_size,
                       "max_unpool3d")


# -- adaptive pooling ------------------------------------------------------------------------


def _adaptive_sizes(input: Any, nd: int, output_size: Any, fname: str) -> tuple:
    x, unbatched = _batched(input, nd, fname)
    if output_size is None:  # (PyTorch's TypeError: None only keeps one axis, in a tuple)
        raise TypeError(f"{fname}: output_size must be an int or a tuple of {nd} (None inside "
                        "the tuple keeps that axis's size), got None")
    if isinstance(output_size, (int, numpy.integer)):
        output_size = (output_size,) * nd
    output_size = tuple(output_size)
    if len(output_size) != nd:
        raise BadInputError(f"{fname}: output_size must be an int or a tuple of {nd}, got "
                            f"{output_size!r}")
    out = tuple(fnp.shape(x)[2 + i] if o is None else int(o) for i, o in enumerate(output_size))
    # An output size of 0 gives an empty result, as PyTorch; an empty input plane has nothing
    # to pool from (PyTorch refuses it too).
    if any(o < 0 for o in out) or any(n == 0 for n in fnp.shape(x)[2:]):
        raise BadInputError(f"{fname}: output size {out} must be non-negative and input "
                            f"spatial size {tuple(fnp.shape(x)[2:])} positive")
    return x, unbatched, out


def _empty_along(x: Any, axis: int) -> Any:
    """``x`` with no entries along ``axis`` (the pool of an output size of 0)."""
    return x[(slice(None),) * axis + (slice(0, 0),)]


def _adaptive_bounds(n: int, out: int) -> list[tuple[int, int]]:
    return [((i * n) // out, -((-(i + 1) * n) // out)) for i in range(out)]


def _adaptive_mean_axis(x: Any, axis: int, out: int) -> Any:
    """Adaptive mean of ``axis`` to ``out`` windows [floor(i*L/out), ceil((i+1)*L/out)):
    a reshape when they tile, else one matrix product with the averaging matrix."""
    n = fnp.shape(x)[axis]
    dt = x.dtype if numpy.dtype(x.dtype).kind in "fc" else numpy.float64
    if out == 0:
        return _empty_along(x, axis).astype(dt)
    if n % out == 0:
        shp = tuple(fnp.shape(x)[:axis]) + (out, n // out) + tuple(fnp.shape(x)[axis + 1:])
        return fnp.mean(fnp.reshape(x, shp), axis=axis + 1)
    m = numpy.zeros((n, out), dtype=dt)
    for i, (lo, hi) in enumerate(_adaptive_bounds(n, out)):
        m[lo:hi, i] = 1.0 / (hi - lo)
    res = fnp.tensordot(fnp.moveaxis(x, axis, -1), _const_like(m, x), axes=1)
    return fnp.moveaxis(res, -1, axis)


def _adaptive_max_axis(x: Any, axis: int, out: int) -> tuple[Any, Any]:
    """Adaptive max of ``axis``: (max, absolute argmax along ``axis``)."""
    n = fnp.shape(x)[axis]
    if out == 0:
        empty = _empty_along(x, axis)
        return empty, empty.astype(numpy.int64)
    if n % out == 0:
        kk = n // out
        shp = tuple(fnp.shape(x)[:axis]) + (out, kk) + tuple(fnp.shape(x)[axis + 1:])
        w = fnp.reshape(x, shp)
        a = fnp.argmax(w, axis=axis + 1, keepdims=True)
        v = fnp.squeeze(fnp.take_along_axis(w, a, axis=axis + 1), axis + 1)
        off = _iota(a, out, (out,) + (1,) * (fnp.ndim(x) - axis - 1)) * kk
        return v, fnp.squeeze(a, axis + 1).astype(numpy.int64) + off
    vals, args = [], []
    for lo, hi in _adaptive_bounds(n, out):
        seg = x[(slice(None),) * axis + (slice(lo, hi),)]
        a = fnp.argmax(seg, axis=axis, keepdims=True)
        vals.append(fnp.take_along_axis(seg, a, axis=axis))
        args.append(a.astype(numpy.int64) + lo)
    return fnp.concatenate(vals, axis=axis), fnp.concatenate(args, axis=axis)


def _adaptive_avg(input: Any, nd: int, output_size: Any, fname: str) -> Any:
    x, unbatched, out = _adaptive_sizes(input, nd, output_size, fname)
    # Windows are products of per-axis intervals, so the mean separates by axis.
    res = x
    for i in reversed(range(nd)):
        res = _adaptive_mean_axis(res, 2 + i, out[i])
    return res[0] if unbatched else res


def adaptive_avg_pool1d(input: Any, output_size: Any) -> Any:
    """Adaptive average pooling of ``(N, C, L)``/``(C, L)`` to ``output_size`` windows
    (PyTorch's ``floor(i*L/out)`` .. ``ceil((i+1)*L/out)`` bounds).

    >>> import numpy as np
    >>> adaptive_avg_pool1d(np.array([[1.0, 2.0, 3.0, 4.0, 5.0]]), 2)
    array([[2., 4.]])
    """
    return _adaptive_avg(input, 1, output_size, "adaptive_avg_pool1d")


def adaptive_avg_pool2d(input: Any, output_size: Any) -> Any:
    """Adaptive average pooling of ``(N, C, H, W)``/``(C, H, W)`` to ``output_size`` (an int,
    or a pair whose None entries keep that input size).

    >>> import numpy as np
    >>> adaptive_avg_pool2d(np.arange(16.0).reshape(1, 4, 4), 1)
    array([[[7.5]]])
    """
    return _adaptive_avg(input, 2, output_size, "adaptive_avg_pool2d")


def adaptive_avg_pool3d(input: Any, output_size: Any) -> Any:
    """Adaptive average pooling of ``(N, C, D, H, W)``/``(C, D, H, W)`` to ``output_size``.

    >>> import numpy as np
    >>> adaptive_avg_pool3d(np.arange(8.0).reshape(1, 2, 2, 2), 1).ravel()
    array([3.5])
    """
    input = autocast_inputs("adaptive_avg_pool3d", input)[0]
    return _adaptive_avg(input, 3, output_size, "adaptive_avg_pool3d")


def adaptive_max_pool1d(input: Any, output_size: Any, return_indices: bool = False) -> Any:
    """Adaptive max pooling of ``(N, C, L)``/``(C, L)`` (``return_indices``: int64 positions).

    >>> import numpy as np
    >>> adaptive_max_pool1d(np.array([[1.0, 5.0, 3.0, 4.0, 2.0]]), 2)
    array([[5., 4.]])
    """
    x, unbatched, out = _adaptive_sizes(input, 1, output_size, "adaptive_max_pool1d")
    res, idx = _adaptive_max_axis(x, 2, out[0])
    if unbatched:
        res, idx = res[0], idx[0]
    return (res, idx) if return_indices else res


def adaptive_max_pool2d(input: Any, output_size: Any, return_indices: bool = False) -> Any:
    """Adaptive max pooling of ``(N, C, H, W)``/``(C, H, W)``; ``return_indices``: int64 flat
    indices into each ``H * W`` plane (first maximum in row-major order, as PyTorch).

    >>> import numpy as np
    >>> adaptive_max_pool2d(np.arange(9.0).reshape(1, 3, 3), 2, return_indices=True)[1]
    array([[[4, 5],
            [7, 8]]])
    """
    x, unbatched, out = _adaptive_sizes(input, 2, output_size, "adaptive_max_pool2d")
    # The max separates by axis; taking the first maximum per row, then the first row,
    # finds the first maximum of the window in row-major order.
    v1, col = _adaptive_max_axis(x, 3, out[1])
    res, row = _adaptive_max_axis(v1, 2, out[0])
    if unbatched:
        res = res[0]
    if not return_indices:
        return res
    idx = row * fnp.shape(x)[3] + fnp.take_along_axis(col, row, axis=2)
    return res, (idx[0] if unbatched else idx)


def adaptive_max_pool3d(input: Any, output_size: Any, return_indices: bool = False) -> Any:
    """Adaptive max pooling of ``(N, C, D, H, W)``/``(C, D, H, W)``; ``return_indices``: int64
    flat indices into each ``D * H * W`` volume (first maximum in row-major order).

    >>> import numpy as np
    >>> adaptive_max_pool3d(np.arange(8.0).reshape(1, 2, 2, 2), 1, return_indices=True)
    (array([[[[7.]]]]), array([[[[7]]]]))
    """
    input = autocast_inputs("adaptive_max_pool3d", input)[0]
    x, unbatched, out = _adaptive_sizes(input, 3, output_size, "adaptive_max_pool3d")
    # Separable, innermost axis first: the first maximum per W row, then the first H row
    # holding the maximum, then the first D slice: the row-major first maximum.
    v1, w_arg = _adaptive_max_axis(x, 4, out[2])
    v2, h_arg = _adaptive_max_axis(v1, 3, out[1])
    res, d_arg = _adaptive_max_axis(v2, 2, out[0])
    if unbatched:
        res = res[0]
    if not return_indices:
        return res
    h_sel = fnp.take_along_axis(h_arg, d_arg, axis=2)
    w_sel = _pick_w(w_arg, d_arg, h_sel)
    shape = fnp.shape(x)
    idx = (d_arg * shape[3] + h_sel) * shape[4] + w_sel
    return res, (idx[0] if unbatched else idx)


def _pick_w(w_arg: Any, d_arg: Any, h_sel: Any) -> Any:
    """w_arg (N, C, D, H, Ow) at the chosen D (d_arg, (N, C, Od, Oh, Ow)) and H (h_sel)."""
    n, c, dd, hh, ow = fnp.shape(w_arg)
    od, oh = fnp.shape(d_arg)[2:4]
    flat = fnp.reshape(w_arg, (n, c, dd * hh, ow))
    pos = fnp.reshape(d_arg * hh + h_sel, (n, c, od * oh, ow))
    return fnp.reshape(fnp.take_along_axis(flat, pos, axis=2), (n, c, od, oh, ow))


# -- fractional max pooling ------------------------------------------------------------------


def _fractional_max_pool(input: Any, nd: int, kernel_size: Any, output_size: Any,
                         output_ratio: Any, return_indices: bool, samples: Any, key: Any,
                         fname: str) -> Any:
    x, unbatched = _batched(input, nd, fname)
    k = ntuple(kernel_size, nd, "kernel_size", fname)
    sizes = tuple(fnp.shape(x)[2:])
    if (output_size is None) == (output_ratio is None):
        raise ValueError(f"{fname}: exactly one of output_size and output_ratio must be given")
    if output_size is None:
        ratio = (float(output_ratio),) * nd if isinstance(output_ratio, numbers.Real) else \
            tuple(float(r) for r in output_ratio)
        if len(ratio) != nd or not all(0 < r < 1 for r in ratio):
            raise ValueError(f"{fname}: output_ratio must be {nd} numbers in (0, 1), got "
                             f"{output_ratio!r}")
        out = tuple(int(n * r) for n, r in zip(sizes, ratio))
    else:
        out = ntuple(output_size, nd, "output_size", fname)
    # PyTorch's 3-D check is strict (its 2-D one is not).
    slack = 0 if nd == 2 else 1
    if any(v < 1 for v in k + out) or \
            any(o + ki - 1 > n - slack for o, ki, n in zip(out, k, sizes)):
        raise BadInputError(f"{fname}: output size {out} and kernel size {k} must be positive "
                         f"with output + kernel - 1 {'<=' if nd == 2 else '<'} input size "
                         f"{sizes}")
    n_, c = fnp.shape(x)[:2]
    dt = x.dtype if numpy.dtype(x.dtype).kind == "f" else numpy.dtype(numpy.float32)
    if samples is None:
        from funcgrad_nn.functional import check_host_draw, implicit_key, key_or_draw
        if key is None and implicit_key.get() is not None:  # under nn.jit: its key
            key = key_or_draw(None, x, fname)
        if key is None:
            # PyTorch draws the windows from its global generator at every call; under
            # jit/vmap a draw made while tracing would be frozen into the program
            check_host_draw(x, fname, "key")
            from funcgrad_nn.init import default_generator
            samples = default_generator().random((n_, c, nd)).astype(dt)
        else:
            from funcgrad_nn.functional import random_uniform
            samples = random_uniform(key, fnp.zeros_like(x, dtype=dt, shape=(n_, c, nd)))
    if tuple(fnp.shape(samples)) != (n_, c, nd):
        raise BadInputError(f"{fname}: _random_samples must have shape {(n_, c, nd)} (one "
                            f"sample in [0, 1) per plane and axis), got "
                         f"{tuple(fnp.shape(samples))}")
    samples = funcgrad.stop_gradient(fnp.asarray(samples).astype(dt))
    # PyTorch's generate_intervals: window i of an axis starts at
    # int((i + u) * alpha) - int(u * alpha), alpha = (n - k) / (out - 1), the last at n - k;
    # the 2-D samples are in (W, H) order, the 3-D ones in (T, H, W).
    lin = None
    for a in range(nd):
        u = samples[..., (nd - 1 - a) if nd == 2 else a][..., None]          # (N, C, 1)
        n, ki, o = sizes[a], k[a], out[a]
        i = _iota(u, o, (o,)).astype(dt)
        if o > 1:
            alpha = dt.type(n - ki) / dt.type(o - 1)
            start = fnp.floor((i + u) * alpha) - fnp.floor(u * alpha)
            start = fnp.where(i < o - 1, start, n - ki).astype(numpy.int64)
        else:
            start = fnp.full_like(u, n - ki, dtype=numpy.int64, shape=(n_, c, 1))
        pos = start[..., None] + _iota(start, ki, (ki,))                     # (N, C, o, k)
        shape = [n_, c] + [1] * (2 * nd)
        shape[2 + a], shape[2 + nd + a] = o, ki
        pos = fnp.reshape(pos, tuple(shape))
        lin = pos if lin is None else lin * n + pos
    lin = fnp.broadcast_to(lin, (n_, c) + out + k)
    lin = fnp.reshape(lin, (n_, c, math.prod(out), math.prod(k)))
    flat = fnp.reshape(x, (n_, c, math.prod(sizes)))
    vals = fnp.reshape(fnp.take_along_axis(
        flat, fnp.reshape(lin, (n_, c, math.prod(out) * math.prod(k))), axis=2),
                       (n_, c, math.prod(out), math.prod(k)))
    # The first maximum of each window in row-major order (a NaN is a maximum), as PyTorch.
    best = fnp.argmax(funcgrad.stop_gradient(vals), axis=3, keepdims=True)
    res = fnp.reshape(fnp.take_along_axis(vals, best, axis=3), (n_, c) + out)
    if unbatched:
        res = res[0]
    if not return_indices:
        return res
    idx = fnp.reshape(fnp.take_along_axis(lin, best, axis=3), (n_, c) + out)
    return res, (idx[0] if unbatched else idx)


def fractional_max_pool2d(input: Any, kernel_size: Any, output_size: Any = None,
                          output_ratio: Any = None, return_indices: bool = False,
                          _random_samples: Any = None, *, key: Any = None) -> Any:
    """Fractional max pooling (Graham, 2014) of ``(N, C, H, W)`` or ``(C, H, W)``: windows
    of ``kernel_size`` at pseudo-random starts that reach ``output_size`` (or
    ``int(input * output_ratio)``) outputs, PyTorch's interval rule. The randomness is one
    sample in [0, 1) per plane and axis: ``_random_samples`` ``(N, C, 2)`` as PyTorch's, else
    drawn from ``key=`` (an int seed or uint32[2] key; traceable), else from the global
    generator (``nn.manual_seed``; eager code only: under jit pass ``key=``).
    ``return_indices`` gives flat int64 indices into each ``H * W`` plane.

    >>> import numpy as np
    >>> x = np.arange(25.0).reshape(1, 1, 5, 5)
    >>> fractional_max_pool2d(x, 2, output_size=2, _random_samples=np.full((1, 1, 2), 0.5))
    array([[[[ 6.,  9.],
             [21., 24.]]]])
    """
    return _fractional_max_pool(input, 2, kernel_size, output_size, output_ratio,
                                return_indices, _random_samples, key, "fractional_max_pool2d")


def fractional_max_pool3d(input: Any, kernel_size: Any, output_size: Any = None,
                          output_ratio: Any = None, return_indices: bool = False,
                          _random_samples: Any = None, *, key: Any = None) -> Any:
    """3-D fractional max pooling of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` (see
    :func:`fractional_max_pool2d`; ``_random_samples`` ``(N, C, 3)``).

    >>> import numpy as np
    >>> x = np.arange(27.0).reshape(1, 1, 3, 3, 3)
    >>> fractional_max_pool3d(x, 2, output_size=1, _random_samples=np.zeros((1, 1, 3)))
    array([[[[[26.]]]]])
    """
    input = autocast_inputs("fractional_max_pool3d", input)[0]
    return _fractional_max_pool(input, 3, kernel_size, output_size, output_ratio,
                                return_indices, _random_samples, key, "fractional_max_pool3d")


# PyTorch's ``*_with_indices`` forms: the pooling with ``return_indices=True``.


def max_pool1d_with_indices(input: Any, kernel_size: Any, stride: Any = None,
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = True) -> Any:
    """:func:`max_pool1d` returning ``(values, indices)``.

    >>> import numpy as np
    >>> max_pool1d_with_indices(np.array([[1.0, 3.0, 2.0, 0.0]]), 2)[1]
    array([[1, 2]])
    """
    return _max_pool(input, 1, kernel_size, stride, padding, dilation, ceil_mode, True,
                     "max_pool1d_with_indices")


def max_pool2d_with_indices(input: Any, kernel_size: Any, stride: Any = None,
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = True) -> Any:
    """:func:`max_pool2d` returning ``(values, indices)``.

    >>> import numpy as np
    >>> max_pool2d_with_indices(np.arange(4.0).reshape(1, 2, 2), 2)[1]
    array([[[3]]])
    """
    return _max_pool(input, 2, kernel_size, stride, padding, dilation, ceil_mode, True,
                     "max_pool2d_with_indices")


def max_pool3d_with_indices(input: Any, kernel_size: Any, stride: Any = None,
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = True) -> Any:
    """:func:`max_pool3d` returning ``(values, indices)``.

    >>> import numpy as np
    >>> max_pool3d_with_indices(np.arange(8.0).reshape(1, 2, 2, 2), 2)[1]
    array([[[[7]]]])
    """
    return _max_pool(input, 3, kernel_size, stride, padding, dilation, ceil_mode, True,
                     "max_pool3d_with_indices")


def adaptive_max_pool1d_with_indices(input: Any, output_size: Any,
                                     return_indices: bool = True) -> Any:
    """:func:`adaptive_max_pool1d` returning ``(values, indices)``.

    >>> import numpy as np
    >>> adaptive_max_pool1d_with_indices(np.array([[1.0, 3.0, 2.0]]), 1)[1]
    array([[1]])
    """
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input: Any, output_size: Any,
                                     return_indices: bool = True) -> Any:
    """:func:`adaptive_max_pool2d` returning ``(values, indices)``.

    >>> import numpy as np
    >>> adaptive_max_pool2d_with_indices(np.arange(4.0).reshape(1, 2, 2), 1)[1]
    array([[[3]]])
    """
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(input: Any, output_size: Any,
                                     return_indices: bool = True) -> Any:
    """:func:`adaptive_max_pool3d` returning ``(values, indices)``.

    >>> import numpy as np
    >>> adaptive_max_pool3d_with_indices(np.arange(8.0).reshape(1, 2, 2, 2), 1)[1]
    array([[[[7]]]])
    """
    return adaptive_max_pool3d(input, output_size, True)


def fractional_max_pool2d_with_indices(input: Any, kernel_size: Any, output_size: Any = None,
                                       output_ratio: Any = None, return_indices: bool = True,
                                       _random_samples: Any = None, *, key: Any = None
                                       ) -> Any:
    """:func:`fractional_max_pool2d` returning ``(values, indices)``.

    >>> import numpy as np
    >>> fractional_max_pool2d_with_indices(np.arange(4.0).reshape(1, 1, 2, 2), 2, 1)[1]
    array([[[[3]]]])
    """
    return _fractional_max_pool(input, 2, kernel_size, output_size, output_ratio, True,
                                _random_samples, key, "fractional_max_pool2d_with_indices")


def fractional_max_pool3d_with_indices(input: Any, kernel_size: Any, output_size: Any = None,
                                       output_ratio: Any = None, return_indices: bool = True,
                                       _random_samples: Any = None, *, key: Any = None
                                       ) -> Any:
    """:func:`fractional_max_pool3d` returning ``(values, indices)``.

    >>> import numpy as np
    >>> x = np.arange(8.0).reshape(1, 1, 2, 2, 2)
    >>> fractional_max_pool3d_with_indices(x, 1, 1, _random_samples=np.zeros((1, 1, 3)))[1]
    array([[[[[7]]]]])
    """
    return _fractional_max_pool(input, 3, kernel_size, output_size, output_ratio, True,
                                _random_samples, key, "fractional_max_pool3d_with_indices")
