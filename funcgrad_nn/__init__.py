"""funcgrad_nn: PyTorch-flavoured neural-network modules over funcgrad.

Modules are stateful, mutable and pytrees (leaves: parameters and buffers); the
module-aware transforms (:func:`grad`, :func:`value_and_grad`, :func:`jit`, :func:`vmap`, :func:`vjp`)
differentiate trainable parameters and write buffer updates back. Parameters are float32
NumPy arrays by default (:func:`set_default_dtype`), initialised with PyTorch's default
schemes from a global generator (:func:`manual_seed`). Optimizers live in
``funcgrad_nn.optim``.

>>> import numpy as np, funcgrad_nn as nn
>>> _ = nn.manual_seed(0)
>>> model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
>>> x, y = np.ones((5, 4), np.float32), np.array([0, 1, 2, 0, 1])
>>> loss, grads = nn.value_and_grad(lambda m: nn.F.cross_entropy(m(x), y))(model)
>>> for p, g in zip(model.parameters(), nn.tree_leaves(grads)):
...     p -= 0.1 * g
>>> loss.dtype
dtype('float32')
"""

from funcgrad.tree_util import tree_leaves

# Subpackages last: they build on the names above.
from funcgrad_nn import (  # noqa: E402  (after the layers they wrap)
    amp,
    attention,
    autograd,
    data,
    distributed,
    distributions,
    func,
    functional,
    init,
    optim,
    parallel,
    random,
    train,
    utils,
)
from funcgrad_nn import functional as F
from funcgrad_nn.amp import autocast, get_autocast_dtype, is_autocast_enabled
from funcgrad_nn.autograd import (  # torch's own top-level names: `with torch.no_grad():`
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from funcgrad_nn.containers import (
    ModuleDict,
    ModuleList,
    ParameterDict,
    ParameterList,
    Sequential,
)
from funcgrad_nn.data.samplers import Generator  # torch.Generator, for the data utilities
from funcgrad_nn.distributed import SyncBatchNorm  # noqa: E402
from funcgrad_nn.functional import cdist  # torch.cdist (a torch-level function)
from funcgrad_nn.hooks import (
    register_module_forward_hook,
    register_module_forward_pre_hook,
    register_module_full_backward_hook,
    register_module_full_backward_pre_hook,
)
from funcgrad_nn.init import (
    get_default_dtype,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_default_dtype,
    set_rng_state,
)
from funcgrad_nn.layers import *  # noqa: E402, F403  (every layer, incl. the lists below)
from funcgrad_nn.layers import (
    ELU,
    GELU,
    GRU,
    LSTM,
    RNN,
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
    AvgPool1d,
    AvgPool2d,
    BatchNorm1d,
    BatchNorm2d,
    Bilinear,
    Conv1d,
    Conv2d,
    Dropout,
    Embedding,
    Flatten,
    GroupNorm,
    GRUCell,
    Identity,
    LayerNorm,
    LeakyReLU,
    Linear,
    LogSoftmax,
    LSTMCell,
    MaxPool1d,
    MaxPool2d,
    MultiheadAttention,
    ReLU,
    ReLU6,
    RNNBase,
    RNNCell,
    Sigmoid,
    SiLU,
    Softmax,
    Softplus,
    Tanh,
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
    Unflatten,
)
from funcgrad_nn.layers import __all__ as _layer_names  # noqa: E402
from funcgrad_nn.losses import (
    BCELoss,
    BCEWithLogitsLoss,
    CosineEmbeddingLoss,
    CrossEntropyLoss,
    CTCLoss,
    GaussianNLLLoss,
    HingeEmbeddingLoss,
    HuberLoss,
    KLDivLoss,
    L1Loss,
    LinearCrossEntropyLoss,
    MarginRankingLoss,
    MSELoss,
    MultiLabelMarginLoss,
    MultiLabelSoftMarginLoss,
    MultiMarginLoss,
    NLLLoss,
    NLLLoss2d,
    PoissonNLLLoss,
    SmoothL1Loss,
    SoftMarginLoss,
    TripletMarginLoss,
    TripletMarginWithDistanceLoss,
)
from funcgrad_nn.module import Buffer, BufferUpdateLostWarning, Module, Parameter
from funcgrad_nn.parallel import DataParallel  # noqa: E402
from funcgrad_nn.serialization import load, save
from funcgrad_nn.transforms import checkpoint, compile, grad, jit, value_and_grad, vjp, vmap  # noqa: A004

__all__ = [
    "amp", "autocast", "get_autocast_dtype", "is_autocast_enabled", "attention", "autograd", "data", "distributions", "func", "optim", "distributed", "parallel", "SyncBatchNorm", "DataParallel", "train", "utils",
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
    "AvgPool1d", "GroupNorm", "MaxPool1d", "MultiheadAttention",
    "AvgPool2d", "BCELoss", "BCEWithLogitsLoss", "BatchNorm1d", "BatchNorm2d", "Bilinear",
    "Conv1d", "Conv2d", "CrossEntropyLoss", "Dropout", "ELU", "Embedding", "F", "Flatten",
    "GELU", "HuberLoss", "Identity", "KLDivLoss", "L1Loss", "LayerNorm", "LeakyReLU", "Linear",
    "LogSoftmax", "MSELoss", "MaxPool2d", "Module", "ModuleDict", "ModuleList", "NLLLoss",
    "Buffer", "BufferUpdateLostWarning", "Parameter", "ParameterDict", "ParameterList", "ReLU", "ReLU6", "Sequential", "SiLU",
    "Sigmoid", "SmoothL1Loss",
    "Softmax", "Softplus", "Tanh", "Unflatten", "functional", "get_default_dtype", "grad",
    "cdist", "init", "jit", "load", "manual_seed", "save", "set_default_dtype", "tree_leaves",
    "get_rng_state", "set_rng_state", "seed", "initial_seed", "random",
    "value_and_grad", "vjp", "vmap", "checkpoint", "compile", "register_module_forward_hook", "register_module_forward_pre_hook",
    "Generator",
    "register_module_full_backward_hook", "register_module_full_backward_pre_hook",
    "GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell", "Transformer",
    "TransformerDecoder", "TransformerDecoderLayer", "TransformerEncoder",
    "TransformerEncoderLayer",
    "CTCLoss", "CosineEmbeddingLoss", "GaussianNLLLoss", "HingeEmbeddingLoss",
    "MarginRankingLoss", "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss",
    "PoissonNLLLoss", "SoftMarginLoss", "TripletMarginLoss", "TripletMarginWithDistanceLoss",
    "LinearCrossEntropyLoss", "NLLLoss2d",
]
__all__ += [n for n in _layer_names if n not in __all__]

# torch.nn.modules' and torch.nn.parameter's layouts, last: they look the classes up here.
from funcgrad_nn import modules, parameter  # noqa: E402
from funcgrad_nn.parameter import UninitializedBuffer, UninitializedParameter  # noqa: E402

__all__ += ["modules", "parameter", "UninitializedBuffer", "UninitializedParameter",
            "no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
            "is_inference_mode_enabled"]
