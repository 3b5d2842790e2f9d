"""Utilities as ``torch.nn.utils``: ``rnn`` (packing variable-length sequences), gradient
clipping, parameter/vector conversion, the ``parametrizations`` (``weight_norm``,
``spectral_norm``, ``orthogonal``) and ``prune``; ``checkpoint`` holds
``torch.utils.checkpoint``'s ``checkpoint`` and ``checkpoint_sequential``."""

from funcgrad_nn.utils import (
    checkpoint,
    fusion,
    parametrizations,
    parametrize,
    prune,
    rnn,
    stateless,
)
from funcgrad_nn.utils._skip_init import skip_init
from funcgrad_nn.utils.clip_grad import (
    clip_grad_norm,
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_by_norm,
    clip_grads_with_norm_,
    get_total_norm,
)
from funcgrad_nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters
from funcgrad_nn.utils.fusion import (
    fuse_conv_bn_eval,
    fuse_conv_bn_weights,
    fuse_linear_bn_eval,
    fuse_linear_bn_weights,
)
from funcgrad_nn.utils.legacy_norms import (
    remove_spectral_norm,
    remove_weight_norm,
    spectral_norm,
    weight_norm,
)
from funcgrad_nn.utils.memory_format import (
    convert_conv2d_weight_memory_format,
    convert_conv3d_weight_memory_format,
)

__all__ = ["checkpoint", "clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_by_norm",
           "clip_grads_with_norm_", "convert_conv2d_weight_memory_format",
           "convert_conv3d_weight_memory_format", "fuse_conv_bn_eval", "fuse_conv_bn_weights",
           "fuse_linear_bn_eval", "fuse_linear_bn_weights", "fusion", "get_total_norm",
           "parameters_to_vector", "parametrizations", "parametrize", "prune", "remove_spectral_norm",
           "remove_weight_norm", "rnn", "skip_init", "spectral_norm", "stateless", "vector_to_parameters",
           "weight_norm"]
