"""Shared helpers for the layer modules."""

from __future__ import annotations

from typing import Any

import numpy

from funcgrad_nn.init import get_default_dtype


def empty(shape: tuple[int, ...], dtype: Any = None, device: str | None = None) -> Any:
    """A host array for a new parameter (filled by an initialiser right after)."""
    del device  # moved with Module.to(); creation is always on the host
    return numpy.zeros(shape, dtype=get_default_dtype() if dtype is None else dtype)


def ntuple(v: Any, n: int) -> tuple[int, ...]:
    """``v`` as an ``n``-tuple of ints (PyTorch's ``_single``/``_pair``/``_triple``)."""
    # (NumPy integers too: sizes computed with NumPy, which PyTorch's _ntuple repeats)
    if isinstance(v, (int, numpy.integer)):
        return (int(v),) * n
    return tuple(int(i) for i in v)


def place(module: Any, device: str | None) -> None:
    if device is not None and device != "cpu":
        module.to(device)
