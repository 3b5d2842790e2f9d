"""``torch.nn.modules``'s layout over funcgrad_nn's classes, for code ported from PyTorch that
reaches into it: ``isinstance(m, nn.modules.batchnorm._BatchNorm)`` (weight-decay filters),
``from funcgrad_nn.modules.conv import _ConvNd``, ``nn.modules.loss._Loss``,
``nn.modules.utils._pair``. Each submodule (``activation``, ``batchnorm``, ``conv``, ``loss``,
``pooling``, ``rnn``, ``transformer``, ...) holds the same classes as PyTorch's of that name,
where funcgrad_nn has them (the very same objects as ``funcgrad_nn.Conv2d`` and so on, so
``isinstance`` agrees); the table below is the whole mapping.

>>> import funcgrad_nn as nn
>>> from funcgrad_nn.modules.batchnorm import _BatchNorm
>>> isinstance(nn.BatchNorm2d(3), _BatchNorm), isinstance(nn.SyncBatchNorm(3), _BatchNorm)
(True, True)
>>> nn.modules.conv.Conv2d is nn.Conv2d, nn.modules.utils._pair(3)
(True, (3, 3))
"""

from __future__ import annotations

import collections.abc
import importlib
import itertools
import sys
import types
from typing import Any


def _ntuple(n: int, name: str = "parse") -> Any:
    """PyTorch's ``_ntuple(n)``: an iterable as a tuple, anything else repeated ``n`` times."""

    def parse(x: Any) -> tuple:
        if isinstance(x, collections.abc.Iterable):  # strings too, as PyTorch
            return tuple(x)
        return tuple(itertools.repeat(x, n))

    parse.__name__ = parse.__qualname__ = name
    return parse


_single, _pair, _triple, _quadruple = (_ntuple(n, f"_{w}") for n, w in
                                       ((1, "single"), (2, "pair"), (3, "triple"),
                                        (4, "quadruple")))


def _reverse_repeat_tuple(t: Any, n: int) -> tuple:
    """PyTorch's helper: the elements of ``t`` last first, each repeated ``n`` times (a
    padding tuple in ``F.pad``'s order, as custom convolutions build
    ``_reversed_padding_repeated_twice``).

    >>> _reverse_repeat_tuple((1, 2), 2)
    (2, 2, 1, 1)
    """
    return tuple(x for x in reversed(t) for _ in range(n))


def consume_prefix_in_state_dict_if_present(state_dict: Any, prefix: str) -> None:
    """Strip ``prefix`` from the keys of ``state_dict`` that have it, in place (PyTorch's:
    a checkpoint saved from a ``DistributedDataParallel``/``DataParallel`` wrapper has
    ``"module."`` keys), and from its ``_metadata`` keys.

    >>> import numpy as np
    >>> sd = {"module.weight": np.ones(2), "bias": np.zeros(2)}
    >>> consume_prefix_in_state_dict_if_present(sd, "module."); sorted(sd)
    ['bias', 'weight']
    """
    for key in list(state_dict.keys()):
        if key.startswith(prefix):
            state_dict[key[len(prefix):]] = state_dict.pop(key)
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is not None:
        for key in list(metadata.keys()):
            # '' is the wrapper's own entry (kept, as PyTorch); 'module' the model's
            if key and (key == prefix.replace(".", "") or key.startswith(prefix)):
                metadata[key[len(prefix):]] = metadata.pop(key)

# torch.nn.modules.<submodule>: (where funcgrad_nn defines the private bases, the names).
_SUBMODULES: dict[str, tuple[str | None, tuple[str, ...]]] = {
    "activation": ("funcgrad_nn.layers.activation", (
        "Threshold", "ReLU", "RReLU", "Hardtanh", "ReLU6", "Sigmoid", "Hardsigmoid", "Tanh",
        "SiLU", "Mish", "Hardswish", "ELU", "CELU", "SELU", "GLU", "GELU", "Hardshrink",
        "LeakyReLU", "LogSigmoid", "Softplus", "Softshrink", "MultiheadAttention", "PReLU",
        "Softsign", "Tanhshrink", "Softmin", "Softmax", "Softmax2d", "LogSoftmax")),
    "adaptive": (None, ("AdaptiveLogSoftmaxWithLoss",)),
    "batchnorm": ("funcgrad_nn.layers.normalization", (
        "_NormBase", "_BatchNorm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d",
        "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "SyncBatchNorm")),
    "channelshuffle": (None, ("ChannelShuffle",)),
    "container": (None, ("Sequential", "ModuleList", "ModuleDict", "ParameterList",
                         "ParameterDict")),
    "conv": ("funcgrad_nn.layers.conv", (
        "_ConvNd", "_ConvTransposeNd", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d",
        "ConvTranspose2d", "ConvTranspose3d", "LazyConv1d", "LazyConv2d", "LazyConv3d",
        "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d")),
    "distance": (None, ("PairwiseDistance", "CosineSimilarity")),
    "dropout": ("funcgrad_nn.modules", ("_DropoutNd", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
                       "FeatureAlphaDropout")),
    "flatten": (None, ("Flatten", "Unflatten")),
    "fold": (None, ("Fold", "Unfold")),
    "instancenorm": ("funcgrad_nn.layers.normalization", (
        "_InstanceNorm", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d",
        "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d")),
    "lazy": ("funcgrad_nn.layers.lazy", ("LazyModuleMixin",)),
    "linear": ("funcgrad_nn.layers.linear", ("Identity", "Linear", "Bilinear", "LazyLinear",
                                              "NonDynamicallyQuantizableLinear")),
    "loss": ("funcgrad_nn.losses", (
        "_Loss", "_WeightedLoss", "L1Loss", "NLLLoss", "NLLLoss2d", "PoissonNLLLoss", "GaussianNLLLoss",
        "KLDivLoss", "MSELoss", "BCELoss", "BCEWithLogitsLoss", "HingeEmbeddingLoss",
        "MultiLabelMarginLoss", "SmoothL1Loss", "HuberLoss", "SoftMarginLoss",
        "CrossEntropyLoss", "LinearCrossEntropyLoss", "MultiLabelSoftMarginLoss",
        "CosineEmbeddingLoss", "MarginRankingLoss", "MultiMarginLoss", "TripletMarginLoss",
        "TripletMarginWithDistanceLoss", "CTCLoss")),
    "module": (None, ("Module", "register_module_forward_pre_hook",
                      "register_module_forward_hook", "register_module_full_backward_pre_hook",
                      "register_module_full_backward_hook")),
    "normalization": (None, ("LocalResponseNorm", "CrossMapLRN2d", "LayerNorm", "GroupNorm",
                             "RMSNorm")),
    "padding": (None, (
        "CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d",
        "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
        "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d",
        "ZeroPad3d")),
    "pixelshuffle": (None, ("PixelShuffle", "PixelUnshuffle")),
    "pooling": ("funcgrad_nn.layers.pooling", (
        "_MaxPoolNd", "_MaxUnpoolNd", "_LPPoolNd", "MaxPool1d", "MaxPool2d", "MaxPool3d",
        "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
        "FractionalMaxPool2d", "FractionalMaxPool3d", "LPPool1d", "LPPool2d", "LPPool3d",
        "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "AdaptiveAvgPool1d",
        "AdaptiveAvgPool2d", "AdaptiveAvgPool3d")),
    "rnn": (None, ("RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell",
                   "GRUCell")),
    "sparse": (None, ("Embedding", "EmbeddingBag")),
    "transformer": ("funcgrad_nn.modules", ("_get_clones", "_get_activation_fn", "Transformer", "TransformerEncoder", "TransformerDecoder",
                           "TransformerEncoderLayer", "TransformerDecoderLayer")),
    "upsampling": (None, ("Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d")),
}


def _get_clones(module: Any, N: int) -> Any:  # noqa: N803 (PyTorch's name)
    """PyTorch's ``torch.nn.modules.transformer._get_clones``: ``N`` deep copies of
    ``module`` in a ``ModuleList`` (DETR-style code imports it)."""
    import copy

    import funcgrad_nn
    return funcgrad_nn.ModuleList([copy.deepcopy(module) for _ in range(N)])


def _get_activation_fn(activation: str) -> Any:
    """PyTorch's ``torch.nn.modules.transformer._get_activation_fn``: ``"relu"`` or
    ``"gelu"`` as the functional."""
    from funcgrad_nn import functional as F
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _dropout_base() -> Any:
    # torch's _DropoutNd is the base of every dropout module; here they all derive from
    # Dropout, so it stands for them in isinstance filters (``isinstance(m, _DropoutNd)``)
    import funcgrad_nn
    return funcgrad_nn.Dropout


def _lookup(name: str, private_home: str | None) -> Any:
    if name == "_DropoutNd":
        return _dropout_base()
    import funcgrad_nn
    if name.startswith("_") or not hasattr(funcgrad_nn, name):  # (LazyModuleMixin too)
        return getattr(importlib.import_module(private_home), name)  # type: ignore[arg-type]
    return getattr(funcgrad_nn, name)


def _build() -> dict[str, types.ModuleType]:
    out = {}
    for sub, (home, names) in _SUBMODULES.items():
        mod = types.ModuleType(f"{__name__}.{sub}", f"funcgrad_nn's classes at torch.nn.modules."
                                                    f"{sub}'s names.")
        for n in names:
            setattr(mod, n, _lookup(n, home))
        mod.__all__ = [n for n in names if not n.startswith("_")]
        out[sub] = mod
    utils = types.ModuleType(f"{__name__}.utils", "torch.nn.modules.utils' tuple helpers.")
    for n in ("_ntuple", "_single", "_pair", "_triple", "_quadruple", "_reverse_repeat_tuple",
              "consume_prefix_in_state_dict_if_present"):
        setattr(utils, n, globals()[n])
    out["utils"] = utils
    return out


_SUB = _build()
for _name, _mod in _SUB.items():
    sys.modules[_mod.__name__] = _mod  # `from funcgrad_nn.modules.conv import ...` works
    globals()[_name] = _mod
# The public classes at the package level too, as torch.nn.modules has them.
__all__ = sorted({n for m in _SUB.values() for n in getattr(m, "__all__", ())}) + sorted(_SUB)
for _n in __all__:
    if _n not in _SUB:
        globals()[_n] = next(getattr(m, _n) for m in _SUB.values() if hasattr(m, _n))
del _name, _mod, _n
