"""Layer modules: linear, activations, dropout, normalisation, embedding, conv, pooling,
padding, upsampling, fold/unfold."""

from funcgrad_nn.layers.activation import (
    CELU,
    ELU,
    GELU,
    GLU,
    SELU,
    Hardshrink,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    LeakyReLU,
    LogSigmoid,
    LogSoftmax,
    Mish,
    PReLU,
    ReLU,
    ReLU6,
    RReLU,
    Sigmoid,
    SiLU,
    Softmax,
    Softmax2d,
    Softmin,
    Softplus,
    Softshrink,
    Softsign,
    Tanh,
    Tanhshrink,
    Threshold,
)
from funcgrad_nn.layers.adaptive import AdaptiveLogSoftmaxWithLoss
from funcgrad_nn.layers.attention import MultiheadAttention
from funcgrad_nn.layers.conv import (
    Conv1d,
    Conv2d,
    Conv3d,
    ConvTranspose1d,
    ConvTranspose2d,
    ConvTranspose3d,
    LazyConv1d,
    LazyConv2d,
    LazyConv3d,
    LazyConvTranspose1d,
    LazyConvTranspose2d,
    LazyConvTranspose3d,
)
from funcgrad_nn.layers.distance import CosineSimilarity, PairwiseDistance
from funcgrad_nn.layers.dropout import (
    AlphaDropout,
    Dropout,
    Dropout1d,
    Dropout2d,
    Dropout3d,
    FeatureAlphaDropout,
)
from funcgrad_nn.layers.embedding import Embedding, EmbeddingBag
from funcgrad_nn.layers.fold import Fold, Unfold
from funcgrad_nn.layers.linear import Bilinear, Flatten, Identity, LazyLinear, Linear, Unflatten
from funcgrad_nn.layers.normalization import (
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
    CrossMapLRN2d,
    GroupNorm,
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
    LayerNorm,
    LazyBatchNorm1d,
    LazyBatchNorm2d,
    LazyBatchNorm3d,
    LazyInstanceNorm1d,
    LazyInstanceNorm2d,
    LazyInstanceNorm3d,
    LocalResponseNorm,
    RMSNorm,
)
from funcgrad_nn.layers.padding import (
    CircularPad1d,
    CircularPad2d,
    CircularPad3d,
    ConstantPad1d,
    ConstantPad2d,
    ConstantPad3d,
    ReflectionPad1d,
    ReflectionPad2d,
    ReflectionPad3d,
    ReplicationPad1d,
    ReplicationPad2d,
    ReplicationPad3d,
    ZeroPad1d,
    ZeroPad2d,
    ZeroPad3d,
)
from funcgrad_nn.layers.pooling import (
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AdaptiveAvgPool3d,
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
    AdaptiveMaxPool3d,
    AvgPool1d,
    AvgPool2d,
    AvgPool3d,
    FractionalMaxPool2d,
    FractionalMaxPool3d,
    LPPool1d,
    LPPool2d,
    LPPool3d,
    MaxPool1d,
    MaxPool2d,
    MaxPool3d,
    MaxUnpool1d,
    MaxUnpool2d,
    MaxUnpool3d,
)
from funcgrad_nn.layers.recurrent import (
    GRU,
    LSTM,
    RNN,
    GRUCell,
    LSTMCell,
    RNNBase,
    RNNCell,
    RNNCellBase,
)
from funcgrad_nn.layers.transformer import (
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)
from funcgrad_nn.layers.upsampling import (
    ChannelShuffle,
    PixelShuffle,
    PixelUnshuffle,
    Upsample,
    UpsamplingBilinear2d,
    UpsamplingNearest2d,
)

__all__ = [
    "AdaptiveLogSoftmaxWithLoss",
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
    "AvgPool1d", "GroupNorm", "MaxPool1d", "MultiheadAttention",
    "AvgPool2d", "BatchNorm1d", "BatchNorm2d", "Bilinear", "Conv1d", "Conv2d", "Dropout", "ELU",
    "Embedding", "Flatten", "GELU", "Identity", "LayerNorm", "LazyLinear", "LeakyReLU",
    "Linear",
    "LogSoftmax", "MaxPool2d", "ReLU", "ReLU6", "SiLU", "Sigmoid", "Softmax", "Softplus",
    "Tanh", "Unflatten",
    "GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell", "RNNCellBase", "Transformer",
    "TransformerDecoder", "TransformerDecoderLayer", "TransformerEncoder",
    "TransformerEncoderLayer",
]

# Convolution family (funcgrad_nn.layers.conv, pooling, padding, upsampling, fold).
__all__ += [
    "AdaptiveAvgPool3d", "AdaptiveMaxPool3d", "AvgPool3d", "ChannelShuffle",
    "FractionalMaxPool2d", "FractionalMaxPool3d", "LazyConv1d", "LazyConv2d", "LazyConv3d",
    "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d", "CircularPad1d", "CircularPad2d", "CircularPad3d",
    "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "Conv3d", "ConvTranspose1d",
    "ConvTranspose2d", "ConvTranspose3d", "Fold", "MaxPool3d", "LPPool1d", "LPPool2d", "LPPool3d", "MaxUnpool1d", "MaxUnpool2d",
    "MaxUnpool3d", "PixelShuffle", "PixelUnshuffle", "ReflectionPad1d", "ReflectionPad2d",
    "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "Unfold",
    "Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d", "ZeroPad1d", "ZeroPad2d",
    "ZeroPad3d",
]

# Normalisation and activations (funcgrad_nn.layers.normalization, activation).
__all__ += [
    "BatchNorm3d", "CELU", "EmbeddingBag", "GLU", "Hardshrink", "Hardsigmoid", "Hardswish", "Hardtanh",
    "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LocalResponseNorm", "CrossMapLRN2d",
    "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d",
    "LazyInstanceNorm2d", "LazyInstanceNorm3d", "LogSigmoid",
    "Mish", "PReLU", "RMSNorm", "SELU", "Softmax2d", "Softmin", "Softshrink", "Softsign",
    "Tanhshrink", "Threshold",
    "AlphaDropout", "CosineSimilarity", "Dropout1d", "Dropout2d", "Dropout3d",
    "FeatureAlphaDropout", "PairwiseDistance", "RReLU",
]
