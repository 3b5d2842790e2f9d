"""Layer modules: linear, activations, dropout, normalisation, embedding, conv, pooling."""

from funcgrad_nn.layers.activation import (
    ELU,
    GELU,
    LeakyReLU,
    LogSoftmax,
    ReLU,
    ReLU6,
    Sigmoid,
    SiLU,
    Softmax,
    Softplus,
    Tanh,
)
from funcgrad_nn.layers.attention import MultiheadAttention
from funcgrad_nn.layers.conv import Conv1d, Conv2d
from funcgrad_nn.layers.dropout import Dropout
from funcgrad_nn.layers.embedding import Embedding
from funcgrad_nn.layers.linear import Bilinear, Flatten, Identity, Linear, Unflatten
from funcgrad_nn.layers.normalization import BatchNorm1d, BatchNorm2d, GroupNorm, LayerNorm
from funcgrad_nn.layers.pooling import (
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
    AvgPool1d,
    AvgPool2d,
    MaxPool1d,
    MaxPool2d,
)
from funcgrad_nn.layers.recurrent import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell
from funcgrad_nn.layers.transformer import (
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)

__all__ = [
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
    "AvgPool1d", "GroupNorm", "MaxPool1d", "MultiheadAttention",
    "AvgPool2d", "BatchNorm1d", "BatchNorm2d", "Bilinear", "Conv1d", "Conv2d", "Dropout", "ELU",
    "Embedding", "Flatten", "GELU", "Identity", "LayerNorm", "LeakyReLU", "Linear",
    "LogSoftmax", "MaxPool2d", "ReLU", "ReLU6", "SiLU", "Sigmoid", "Softmax", "Softplus",
    "Tanh", "Unflatten",
    "GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell", "Transformer",
    "TransformerDecoder", "TransformerDecoderLayer", "TransformerEncoder",
    "TransformerEncoderLayer",
]
