"""``torch.nn.utils.memory_format``: converting convolution weights to a memory format.

PyTorch's memory formats (``torch.channels_last``...) choose how a tensor's elements are laid
out in memory for faster kernels; shapes, indexing and values stay the same. funcgrad arrays
have no such layout choice (XLA-style compilation picks layouts itself), so these functions
keep every weight as it is and return the module, which is what ported code observes in
PyTorch: the same module, computing the same values."""

from __future__ import annotations

from typing import Any, TypeVar

from funcgrad_nn.module import Module

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]

_M = TypeVar("_M", bound=Module)


def _convert(module: Any, memory_format: Any, fname: str) -> Any:
    if not isinstance(module, Module):
        raise TypeError(f"{fname}: expected a Module, got {type(module).__name__}")
    del memory_format  # (a layout hint with nothing to act on here; see the module docstring)
    return module


def convert_conv2d_weight_memory_format(module: _M, memory_format: Any) -> _M:
    """PyTorch's conversion of every ``Conv2d``/``ConvTranspose2d`` weight in ``module`` to
    ``memory_format``; the weights keep their values and shapes (funcgrad arrays have no memory
    format to change), and ``module`` itself is returned, as PyTorch returns it.

    >>> import funcgrad_nn as nn
    >>> m = nn.Sequential(nn.Conv2d(3, 4, 3))
    >>> convert_conv2d_weight_memory_format(m, "channels_last") is m
    True
    """
    return _convert(module, memory_format, "convert_conv2d_weight_memory_format")


def convert_conv3d_weight_memory_format(module: _M, memory_format: Any) -> _M:
    """PyTorch's conversion of every ``Conv3d``/``ConvTranspose3d`` weight in ``module`` to
    ``memory_format`` (``channels_last_3d``); as
    :func:`convert_conv2d_weight_memory_format`, a module whose weights keep their values.

    >>> import funcgrad_nn as nn
    >>> m = nn.Conv3d(1, 2, 1)
    >>> convert_conv3d_weight_memory_format(m, "channels_last_3d") is m
    True
    """
    return _convert(module, memory_format, "convert_conv3d_weight_memory_format")
