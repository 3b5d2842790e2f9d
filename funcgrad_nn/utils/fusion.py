"""Folding an eval-mode batch norm into the convolution or linear layer before it, as
``torch.nn.utils.fusion`` (``fuse_conv_bn_eval``, ``fuse_linear_bn_eval`` and their
``*_weights`` forms): ``W' = W * gamma / sqrt(var + eps)`` per output channel and
``b' = (b - mean) * gamma / sqrt(var + eps) + beta``, in the layer's dtypes.
"""

from __future__ import annotations

import copy
from typing import Any

import funcgrad.numpy as fnp
from funcgrad_nn.module import Module, Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights"]


def fuse_conv_bn_weights(conv_w: Any, conv_b: Any, bn_rm: Any, bn_rv: Any, bn_eps: float,
                         bn_w: Any, bn_b: Any, transpose: bool = False
                         ) -> tuple[Parameter, Parameter]:
    """The convolution's weight and bias with the batch norm folded in (``transpose``: a
    transposed convolution, whose output channels are axis 1), as Parameters.

    >>> import numpy as np
    >>> w, b = fuse_conv_bn_weights(np.ones((2, 1, 3)), None, np.zeros(2), np.full(2, 3.0),
    ...                             1.0, np.array([2.0, 4.0]), np.ones(2))
    >>> w.data[:, 0, 0], b.data
    (array([1., 2.]), array([1., 1.]))
    """
    w_dtype = conv_w.dtype
    b_dtype = conv_b.dtype if conv_b is not None else w_dtype
    b_trainable = conv_b is not None  # a new bias of zeros: no gradient, as PyTorch's
    if conv_b is None:
        conv_b = fnp.zeros_like(bn_rm)
    if bn_w is None:
        bn_w = fnp.ones_like(bn_rm)
    if bn_b is None:
        bn_b = fnp.zeros_like(bn_rm)
    rsqrt = 1 / fnp.sqrt(bn_rv + bn_eps)
    scale = bn_w * rsqrt  # one factor per output channel
    kernel = tuple(fnp.shape(conv_w)[2:])
    per_group = fnp.shape(conv_w)[1]
    groups = fnp.shape(scale)[0] // per_group if transpose and per_group else 1
    if transpose and groups > 1 and groups * per_group == fnp.shape(scale)[0]:
        # a grouped transposed convolution's weight is (in, out/groups, *k): output channel
        # g*out/groups + j of input group g is column j of rows g*in/groups.. (PyTorch's own
        # fusion fails here with a shape error)
        w = fnp.reshape(conv_w, (groups, -1, per_group) + kernel)
        w = w * fnp.reshape(scale, (groups, 1, per_group) + (1,) * len(kernel))
        fused_w = fnp.reshape(w, fnp.shape(conv_w)).astype(w_dtype)
    else:
        shape = ((1, -1) if transpose else (-1, 1)) + (1,) * len(kernel)
        fused_w = (conv_w * fnp.reshape(scale, shape)).astype(w_dtype)
    fused_b = ((conv_b - bn_rm) * rsqrt * bn_w + bn_b).astype(b_dtype)
    return Parameter(fused_w), Parameter(fused_b, b_trainable)


def fuse_conv_bn_eval(conv: Module, bn: Module, transpose: bool = False) -> Module:
    """A copy of ``conv`` (in eval mode, as ``bn``) computing ``bn(conv(x))``.

    >>> import numpy as np, funcgrad_nn as nn
    >>> conv, bn = nn.Conv1d(2, 3, 3).eval(), nn.BatchNorm1d(3).eval()
    >>> x = np.ones((1, 2, 5), np.float32)
    >>> bool(np.allclose(fuse_conv_bn_eval(conv, bn)(x), bn(conv(x)), atol=1e-6))
    True
    """
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("fuse_conv_bn_eval: the batch norm tracks no running statistics")
    fused = copy.deepcopy(conv)
    w, b = fuse_conv_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                bn.eps, bn.weight, bn.bias, transpose)
    _assign(fused, w, b)
    return fused


def _assign(layer: Module, w: Parameter, b: Parameter) -> None:
    # The fused arrays keep the layer's frozen/trainable flags (PyTorch's requires_grad).
    w.requires_grad = "weight" not in layer._frozen
    b.requires_grad = b.requires_grad and "bias" not in layer._frozen
    layer.weight, layer.bias = w, b


def fuse_linear_bn_weights(linear_w: Any, linear_b: Any, bn_rm: Any, bn_rv: Any,
                           bn_eps: float, bn_w: Any, bn_b: Any) -> tuple[Parameter, Parameter]:
    """The linear layer's weight and bias with the batch norm folded in, as Parameters.

    >>> import numpy as np
    >>> w, b = fuse_linear_bn_weights(np.ones((2, 3)), np.zeros(2), np.zeros(2), np.ones(2),
    ...                               0.0, np.array([2.0, 3.0]), np.zeros(2))
    >>> w.data[:, 0], b.data
    (array([2., 3.]), array([0., 0.]))
    """
    w_dtype = linear_w.dtype
    b_dtype = linear_b.dtype if linear_b is not None else w_dtype
    b_trainable = linear_b is not None
    if linear_b is None:
        linear_b = fnp.zeros_like(bn_rm)
    scale = bn_w * (1 / fnp.sqrt(bn_rv + bn_eps))
    fused_w = linear_w * scale[..., None].astype(w_dtype)
    fused_b = ((linear_b - bn_rm) * scale + bn_b).astype(b_dtype)
    return Parameter(fused_w), Parameter(fused_b, b_trainable)


def fuse_linear_bn_eval(linear: Module, bn: Module) -> Module:
    """A copy of ``linear`` (in eval mode, as ``bn``) computing ``bn(linear(x))``.

    >>> import numpy as np, funcgrad_nn as nn
    >>> lin, bn = nn.Linear(2, 3).eval(), nn.BatchNorm1d(3).eval()
    >>> x = np.ones((4, 2), np.float32)
    >>> bool(np.allclose(fuse_linear_bn_eval(lin, bn)(x), bn(lin(x)), atol=1e-6))
    True
    """
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if not (linear.out_features == bn.num_features or bn.num_features == 1):
        raise AssertionError("To fuse, linear.out_features must equal bn.num_features or "
                             "bn.num_features must be 1")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("fuse_linear_bn_eval: the batch norm tracks no running statistics")
    fused = copy.deepcopy(linear)
    w, b = fuse_linear_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                  bn.eps, bn.weight, bn.bias)
    _assign(fused, w, b)
    return fused
