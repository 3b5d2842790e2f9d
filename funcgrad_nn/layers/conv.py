"""Conv1d and Conv2d (im2col over funcgrad.numpy; PyTorch weight layout and init)."""

from __future__ import annotations

import math
from typing import Any

import funcgrad.numpy as fnp
from funcgrad_nn import functional as F
from funcgrad_nn import init
from funcgrad_nn.layers._util import empty, place
from funcgrad_nn.module import Module, Parameter

__all__ = ["Conv1d", "Conv2d"]


def _ntuple(v: Any, n: int) -> tuple[int, ...]:
    return (int(v),) * n if isinstance(v, int) else tuple(int(i) for i in v)


# PyTorch's padding modes, as numpy.pad names them.
_PAD_MODES = {"zeros": "constant", "reflect": "reflect", "replicate": "edge",
              "circular": "wrap"}


class _ConvNd(Module):
    _n = 0

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: str | None = None,
                 dtype: Any = None) -> None:
        super().__init__()
        name = type(self).__name__
        if padding_mode not in _PAD_MODES:
            raise ValueError(f"{name}: padding_mode must be one of {sorted(_PAD_MODES)}, got "
                             f"{padding_mode!r}")
        if groups < 1 or in_channels % groups or out_channels % groups:
            raise ValueError(f"{name}: in_channels ({in_channels}) and out_channels "
                             f"({out_channels}) must be divisible by groups ({groups})")
        n = self._n
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = _ntuple(kernel_size, n)
        self.stride = _ntuple(stride, n)
        self.padding = padding if isinstance(padding, str) else _ntuple(padding, n)
        self.dilation = _ntuple(dilation, n)
        self.groups, self.padding_mode = groups, padding_mode
        self.weight = Parameter(empty((out_channels, in_channels // groups)
                                      + self.kernel_size, dtype))
        if bias:
            self.bias = Parameter(empty((out_channels,), dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()
        place(self, device)

    def _padded(self, x: Any) -> tuple[Any, Any]:
        """(input, padding for the convolution): other padding modes pad explicitly first."""
        if self.padding_mode == "zeros":
            return x, self.padding
        if self.padding == "valid":
            return x, 0
        if self.padding == "same":
            pads = []
            for k, d in zip(self.kernel_size, self.dilation):
                total = d * (k - 1)
                pads.append((total // 2, total - total // 2))
        else:
            pads = [(p, p) for p in self.padding]
        x = fnp.pad(x, [(0, 0)] * (fnp.ndim(x) - self._n) + pads,
                    mode=_PAD_MODES[self.padding_mode])
        return x, 0

    def reset_parameters(self, generator: Any = None) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5), generator=generator)
        if self.bias is not None:
            fan_in = self.weight.shape[1] * math.prod(self.kernel_size)
            if fan_in:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound, generator=generator)

    def extra_repr(self) -> str:
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding not in ((0,) * self._n, "valid"):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * self._n:
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        return s


class Conv1d(_ConvNd):
    """1-D convolution over ``(N, C, L)``; weight ``(out, in // groups, k)``.

    >>> import numpy as np
    >>> Conv1d(2, 4, 3, padding=1)(np.ones((1, 2, 5), np.float32)).shape
    (1, 4, 5)
    """

    _n = 1

    def forward(self, input: Any) -> Any:
        x, padding = self._padded(input)
        return F.conv1d(x, self.weight, self.bias, self.stride, padding, self.dilation,
                        self.groups)


class Conv2d(_ConvNd):
    """2-D convolution over ``(N, C, H, W)``; weight ``(out, in // groups, kh, kw)``; stride,
    padding (int, pair, 'same', 'valid'), dilation and groups as in PyTorch.

    >>> import numpy as np
    >>> Conv2d(3, 8, 3, stride=2, padding=1)(np.ones((2, 3, 8, 8), np.float32)).shape
    (2, 8, 4, 4)
    """

    _n = 2

    def forward(self, input: Any) -> Any:
        x, padding = self._padded(input)
        return F.conv2d(x, self.weight, self.bias, self.stride, padding, self.dilation,
                        self.groups)
