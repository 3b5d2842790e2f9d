"""Fold and Unfold: sliding blocks to columns and back (PyTorch's im2col / col2im layers)."""

from __future__ import annotations

from typing import Any

from funcgrad_nn import functional as F
from funcgrad_nn.module import Module

__all__ = ["Fold", "Unfold"]


class Unfold(Module):
    """Extract sliding blocks of ``(N, C, H, W)`` as columns ``(N, C * prod(kernel), L)``.

    >>> import numpy as np
    >>> Unfold(kernel_size=2, stride=2)(np.ones((1, 3, 4, 4))).shape
    (1, 12, 4)
    """

    def __init__(self, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:
        super().__init__()
        self.kernel_size, self.dilation = kernel_size, dilation
        self.padding, self.stride = padding, stride

    def forward(self, input: Any) -> Any:
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class Fold(Module):
    """Sum columns ``(N, C * prod(kernel), L)`` back into ``(N, C, *output_size)``.

    >>> import numpy as np
    >>> Fold(output_size=(4, 4), kernel_size=2, stride=2)(np.ones((1, 12, 4))).shape
    (1, 3, 4, 4)
    """

    def __init__(self, output_size: Any, kernel_size: Any, dilation: Any = 1,
                 padding: Any = 0, stride: Any = 1) -> None:
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input: Any) -> Any:
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                      self.stride)

    def extra_repr(self) -> str:
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
                f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}")
