"""Pooling layers: max/average/power-average (1-D, 2-D, 3-D), max unpooling, adaptive
average/max pooling, fractional max pooling."""

from __future__ import annotations

import numbers
from typing import Any

import numpy

import funcgrad
from funcgrad_nn import functional as F
from funcgrad_nn.init import default_generator
from funcgrad_nn.layers._util import ntuple
from funcgrad_nn.module import Module

__all__ = ["AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
           "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "FractionalMaxPool2d",
           "FractionalMaxPool3d", "LPPool1d", "LPPool2d", "LPPool3d", "MaxPool1d", "MaxPool2d",
           "MaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d"]


def _single(v: Any) -> tuple:
    return tuple(v) if isinstance(v, (tuple, list)) else (v,)


class _MaxPoolNd(Module):
    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 dilation: Any = 1, return_indices: bool = False,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = kernel_size if stride is None else stride
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, "
                f"padding={self.padding}, dilation={self.dilation}, "
                f"ceil_mode={self.ceil_mode}")


class MaxPool2d(_MaxPoolNd):
    """2-D max pooling (``stride`` defaults to ``kernel_size``); ``ceil_mode`` and
    ``return_indices`` (flat int64 indices into each ``H * W`` plane) as in PyTorch.

    >>> import numpy as np
    >>> MaxPool2d(2)(np.zeros((1, 1, 4, 6))).shape
    (1, 1, 2, 3)
    >>> MaxPool2d(2, ceil_mode=True)(np.zeros((1, 1, 5, 5))).shape
    (1, 1, 3, 3)
    """

    def forward(self, input: Any) -> Any:
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            self.ceil_mode, self.return_indices)


class MaxPool1d(_MaxPoolNd):
    """1-D max pooling over ``(N, C, L)`` or ``(C, L)`` (see :class:`MaxPool2d`).

    >>> import numpy as np
    >>> MaxPool1d(2)(np.array([[1.0, 3.0, 2.0, 5.0]]))
    array([[3., 5.]])
    """

    def forward(self, input: Any) -> Any:
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            self.ceil_mode, self.return_indices)


class AvgPool2d(Module):
    """2-D average pooling (``ceil_mode``, ``count_include_pad``, ``divisor_override`` with
    PyTorch's divisor rules).

    >>> import numpy as np
    >>> AvgPool2d(2)(np.ones((1, 1, 4, 4))).ravel()
    array([1., 1., 1., 1.])
    """

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = kernel_size if stride is None else stride
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input: Any) -> Any:
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(Module):
    """1-D average pooling over ``(N, C, L)`` or ``(C, L)`` (see :class:`AvgPool2d`).

    >>> import numpy as np
    >>> AvgPool1d(2)(np.array([[1.0, 3.0, 2.0, 6.0]]))
    array([[2., 4.]])
    """

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True) -> None:
        super().__init__()
        # PyTorch keeps the 1-D sizes as 1-tuples.
        self.kernel_size = _single(kernel_size)
        self.stride = self.kernel_size if stride is None else _single(stride)
        self.padding, self.ceil_mode = _single(padding), ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input: Any) -> Any:
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool1d(Module):
    """Adaptive average pooling to ``output_size`` windows.

    >>> import numpy as np
    >>> AdaptiveAvgPool1d(1)(np.array([[1.0, 2.0, 6.0]]))
    array([[3.]])
    """

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Any) -> Any:
        return F.adaptive_avg_pool1d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool2d(AdaptiveAvgPool1d):
    """Adaptive average pooling to ``output_size`` (int, or pair; None keeps that size).

    >>> import numpy as np
    >>> AdaptiveAvgPool2d((1, None))(np.ones((2, 3, 5, 7))).shape
    (2, 3, 1, 7)
    """

    def forward(self, input: Any) -> Any:
        return F.adaptive_avg_pool2d(input, self.output_size)


class AdaptiveMaxPool1d(Module):
    """Adaptive max pooling to ``output_size`` windows (``return_indices`` as PyTorch).

    >>> import numpy as np
    >>> AdaptiveMaxPool1d(1)(np.array([[1.0, 7.0, 6.0]]))
    array([[7.]])
    """

    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, input: Any) -> Any:
        return F.adaptive_max_pool1d(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool2d(AdaptiveMaxPool1d):
    """Adaptive 2-D max pooling (``return_indices``: flat indices into each ``H * W`` plane).

    >>> import numpy as np
    >>> AdaptiveMaxPool2d(1)(np.arange(6.0).reshape(1, 2, 3))
    array([[[5.]]])
    """

    def forward(self, input: Any) -> Any:
        return F.adaptive_max_pool2d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool3d(AdaptiveMaxPool1d):
    """Adaptive 3-D max pooling (``return_indices``: flat indices into each ``D * H * W``
    volume).

    >>> import numpy as np
    >>> AdaptiveMaxPool3d((1, 2, 2))(np.ones((1, 2, 3, 4, 5))).shape
    (1, 2, 1, 2, 2)
    """

    def forward(self, input: Any) -> Any:
        return F.adaptive_max_pool3d(input, self.output_size, self.return_indices)


class MaxPool3d(_MaxPoolNd):
    """3-D max pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)`` (see :class:`MaxPool2d`).

    >>> import numpy as np
    >>> MaxPool3d(2)(np.zeros((1, 1, 4, 4, 6))).shape
    (1, 1, 2, 2, 3)
    """

    def forward(self, input: Any) -> Any:
        return F.max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            self.ceil_mode, self.return_indices)


class AvgPool3d(AvgPool2d):
    """3-D average pooling (the divisor rules of :class:`AvgPool2d`).

    >>> import numpy as np
    >>> AvgPool3d(2)(np.ones((1, 1, 2, 4, 4))).shape
    (1, 1, 1, 2, 2)
    """

    def forward(self, input: Any) -> Any:
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class AdaptiveAvgPool3d(AdaptiveAvgPool1d):
    """Adaptive 3-D average pooling to ``output_size`` (int or triple; None keeps a size).

    >>> import numpy as np
    >>> AdaptiveAvgPool3d((1, 2, None))(np.ones((2, 3, 4, 5, 7))).shape
    (2, 3, 1, 2, 7)
    """

    def forward(self, input: Any) -> Any:
        return F.adaptive_avg_pool3d(input, self.output_size)


class _MaxUnpoolNd(Module):
    _fn = staticmethod(F.max_unpool1d)
    _n = 1

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        # tuples of the layer's rank, as PyTorch stores (and prints) them
        self.kernel_size = ntuple(kernel_size, self._n)
        self.stride = ntuple(kernel_size if stride is None else stride, self._n)
        self.padding = ntuple(padding, self._n)

    def forward(self, input: Any, indices: Any, output_size: Any = None) -> Any:
        return self._fn(input, indices, self.kernel_size, self.stride, self.padding,
                        output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """Partial inverse of :class:`MaxPool1d` (``return_indices=True``): maxima put back at
    their indices, zeros elsewhere; ``output_size=`` resolves ambiguous sizes.

    >>> import numpy as np
    >>> v, i = MaxPool1d(2, return_indices=True)(np.array([[[1.0, 3.0, 4.0, 2.0]]]))
    >>> MaxUnpool1d(2)(v, i)
    array([[[0., 3., 4., 0.]]])
    """

    _fn = staticmethod(F.max_unpool1d)


class MaxUnpool2d(_MaxUnpoolNd):
    """Partial inverse of :class:`MaxPool2d` (indices flat within each ``H * W`` plane).

    >>> import numpy as np
    >>> pool, unpool = MaxPool2d(2, return_indices=True), MaxUnpool2d(2)
    >>> unpool(*pool(np.arange(16.0).reshape(1, 1, 4, 4))).shape
    (1, 1, 4, 4)
    """

    _fn = staticmethod(F.max_unpool2d)
    _n = 2


class MaxUnpool3d(_MaxUnpoolNd):
    """Partial inverse of :class:`MaxPool3d`.

    >>> import numpy as np
    >>> pool, unpool = MaxPool3d(2, return_indices=True), MaxUnpool3d(2)
    >>> float(unpool(*pool(np.ones((1, 1, 2, 2, 2)))).sum())
    1.0
    """

    _fn = staticmethod(F.max_unpool3d)
    _n = 3


class _LPPoolNd(Module):
    _fn = staticmethod(F.lp_pool1d)

    def __init__(self, norm_type: float, kernel_size: Any, stride: Any = None,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def forward(self, input: Any) -> Any:
        return self._fn(input, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """Power-average pooling ``(sum of x**p over each window) ** (1/p)`` over ``(N, C, L)``
    (PyTorch's ``LPPool1d``; ``p = 1`` is sum pooling, ``p = inf`` max pooling of ``|x|``).

    >>> import numpy as np
    >>> LPPool1d(2, 2)(np.array([[[3.0, 4.0, 0.0, 1.0]]]))
    array([[[5., 1.]]])
    """

    _fn = staticmethod(F.lp_pool1d)


class LPPool2d(_LPPoolNd):
    """2-D power-average pooling over ``(N, C, H, W)`` (PyTorch's ``LPPool2d``).

    >>> import numpy as np
    >>> LPPool2d(1, (1, 2))(np.ones((1, 1, 2, 4)))
    array([[[[2., 2.],
             [2., 2.]]]])
    """

    _fn = staticmethod(F.lp_pool2d)


class LPPool3d(_LPPoolNd):
    """3-D power-average pooling over ``(N, C, D, H, W)`` (PyTorch's ``LPPool3d``).

    >>> import numpy as np
    >>> LPPool3d(2, 2)(np.ones((1, 1, 2, 2, 2))).ravel()
    array([2.82842712])
    """

    _fn = staticmethod(F.lp_pool3d)


class _FractionalMaxPoolNd(Module):
    _fn = staticmethod(F.fractional_max_pool2d)

    def __init__(self, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
                 return_indices: bool = False, _random_samples: Any = None) -> None:
        super().__init__()
        name = type(self).__name__
        if (output_size is None) == (output_ratio is None):
            raise ValueError(f"{name} requires specifying exactly one of output_size and "
                             "output_ratio")
        ratios = (output_ratio,) if isinstance(output_ratio, numbers.Real) else \
            (output_ratio or ())
        if not all(0 < r < 1 for r in ratios):
            raise ValueError(f"{name}: output_ratio must be between 0 and 1 (exclusive), got "
                             f"{output_ratio!r}")
        self.kernel_size, self.output_size, self.output_ratio = (kernel_size, output_size,
                                                                 output_ratio)
        self.return_indices = return_indices
        # A buffer, as PyTorch's (saved in the state dict when given; None is not saved).
        self.register_buffer("_random_samples", _random_samples)
        seed = default_generator().integers(0, 2**32, size=2, dtype=numpy.uint32)
        self.register_buffer("rng_key", seed, persistent=False)

    def forward(self, input: Any, key: Any = None) -> Any:
        if self._random_samples is None and key is None:
            key, nxt = F.split_key(self.rng_key)
            self.rng_key = funcgrad.stop_gradient(nxt)
        return self._fn(input, self.kernel_size, self.output_size, self.output_ratio,
                        self.return_indices, self._random_samples, key=key)

    # No extra_repr: PyTorch prints FractionalMaxPool2d().


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """2-D fractional max pooling (see :func:`funcgrad_nn.functional.fractional_max_pool2d`):
    new pseudo-random windows on every call, from the module's own key (a non-persistent
    uint32[2] buffer ``rng_key`` seeded from the global generator and advanced like
    :class:`Dropout`'s), or from ``forward(x, key=k)``.

    >>> import numpy as np
    >>> FractionalMaxPool2d(2, output_ratio=0.5)(np.ones((1, 3, 8, 10))).shape
    (1, 3, 4, 5)
    """

    _fn = staticmethod(F.fractional_max_pool2d)


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """3-D fractional max pooling of ``(N, C, D, H, W)`` (see :class:`FractionalMaxPool2d`).

    >>> import numpy as np
    >>> FractionalMaxPool3d(2, output_size=(2, 3, 3))(np.ones((1, 1, 4, 5, 6))).shape
    (1, 1, 2, 3, 3)
    """

    _fn = staticmethod(F.fractional_max_pool3d)
