"""Upsample (and its nearest/bilinear aliases), PixelShuffle, PixelUnshuffle and
ChannelShuffle."""

from __future__ import annotations

from typing import Any

from funcgrad_nn import functional as F
from funcgrad_nn.module import Module

__all__ = ["ChannelShuffle", "PixelShuffle", "PixelUnshuffle", "Upsample",
           "UpsamplingBilinear2d", "UpsamplingNearest2d"]


class Upsample(Module):
    """Resize by ``size`` or ``scale_factor`` with :func:`funcgrad_nn.functional.interpolate`
    (``mode``: nearest, nearest-exact, linear, bilinear, bicubic, trilinear, area).

    >>> import numpy as np
    >>> Upsample(scale_factor=2, mode="bilinear")(np.ones((1, 1, 2, 3))).shape
    (1, 1, 4, 6)
    """

    def __init__(self, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                 align_corners: bool | None = None,
                 recompute_scale_factor: bool | None = None) -> None:
        super().__init__()
        # PyTorch keeps the scale factors as floats (its repr shows scale_factor=2.0).
        if isinstance(scale_factor, (tuple, list)):
            scale_factor = tuple(float(f) for f in scale_factor)
        elif scale_factor is not None:
            scale_factor = float(scale_factor)
        self.size, self.scale_factor, self.mode = size, scale_factor, mode
        self.align_corners, self.recompute_scale_factor = align_corners, recompute_scale_factor

    def forward(self, input: Any) -> Any:
        return F.interpolate(input, self.size, self.scale_factor, self.mode,
                             self.align_corners, self.recompute_scale_factor)

    def extra_repr(self) -> str:
        what = f"size={self.size}" if self.scale_factor is None else \
            f"scale_factor={self.scale_factor}"
        return f"{what}, mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """Nearest-neighbour 2-D upsampling (``Upsample(mode='nearest')``).

    >>> import numpy as np
    >>> UpsamplingNearest2d(scale_factor=2)(np.ones((1, 1, 2, 2))).shape
    (1, 1, 4, 4)
    """

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, "nearest")


class UpsamplingBilinear2d(Upsample):
    """Bilinear 2-D upsampling with ``align_corners=True`` (as PyTorch's alias).

    >>> import numpy as np
    >>> UpsamplingBilinear2d(size=(3, 3))(np.ones((1, 1, 2, 2))).shape
    (1, 1, 3, 3)
    """

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, "bilinear", align_corners=True)


class PixelShuffle(Module):
    """``(*, C * r**2, H, W) -> (*, C, H * r, W * r)``.

    >>> import numpy as np
    >>> PixelShuffle(3)(np.ones((1, 9, 4, 4))).shape
    (1, 1, 12, 12)
    """

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Any) -> Any:
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """``(*, C, H * r, W * r) -> (*, C * r**2, H, W)``.

    >>> import numpy as np
    >>> PixelUnshuffle(2)(np.ones((1, 1, 4, 4))).shape
    (1, 4, 2, 2)
    """

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: Any) -> Any:
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


class ChannelShuffle(Module):
    """Interleave the channels of ``(N, C, *)`` across ``groups`` (ShuffleNet).

    >>> import numpy as np
    >>> ChannelShuffle(2)(np.arange(4.0).reshape(1, 4, 1)).ravel()
    array([0., 2., 1., 3.])
    """

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Any) -> Any:
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"
