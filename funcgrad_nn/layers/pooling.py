"""MaxPool2d and AvgPool2d."""

from __future__ import annotations

from typing import Any

from funcgrad_nn import functional as F
from funcgrad_nn.module import Module

__all__ = ["AvgPool2d", "MaxPool2d"]


class MaxPool2d(Module):
    """2-D max pooling (``stride`` defaults to ``kernel_size``; no ``ceil_mode``).

    >>> import numpy as np
    >>> MaxPool2d(2)(np.zeros((1, 1, 4, 6))).shape
    (1, 1, 2, 3)
    """

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 dilation: Any = 1, return_indices: bool = False,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        if return_indices:
            raise NotImplementedError("MaxPool2d: return_indices=True is not supported")
        if ceil_mode:
            raise NotImplementedError("MaxPool2d: ceil_mode=True is not supported")
        self.kernel_size, self.stride = kernel_size, stride
        self.padding, self.dilation = padding, dilation

    def forward(self, input: Any) -> Any:
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, "
                f"padding={self.padding}, dilation={self.dilation}")


class AvgPool2d(Module):
    """2-D average pooling (``count_include_pad``, ``divisor_override``; no ``ceil_mode``).

    >>> import numpy as np
    >>> AvgPool2d(2)(np.ones((1, 1, 4, 4))).ravel()
    array([1., 1., 1., 1.])
    """

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: int | None = None) -> None:
        super().__init__()
        if ceil_mode:
            raise NotImplementedError("AvgPool2d: ceil_mode=True is not supported")
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input: Any) -> Any:
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, False,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"
