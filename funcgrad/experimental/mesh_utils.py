"""``jax.experimental.mesh_utils``: device arrays for :class:`funcgrad.sharding.Mesh`.

Example:
    >>> import funcgrad
    >>> create_device_mesh((funcgrad.device_count(),)).shape
    (1,)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy

from funcgrad import backend

__all__ = ["create_device_mesh"]


def create_device_mesh(mesh_shape: Sequence[int], devices: Sequence[Any] | None = None, *,
                       contiguous_submeshes: bool = False,
                       allow_split_physical_axes: bool = False) -> numpy.ndarray:
    """``devices`` (default: the default backend's) as an array of ``mesh_shape``, as JAX's:
    their number must be the product of the shape (funcgrad has one device per platform;
    list a device several times for a bigger mesh to run shards on).

    Example:
        >>> create_device_mesh((2, 1), ["cpu", "cpu"]).shape
        (2, 1)
    """
    shape = tuple(int(s) for s in mesh_shape)
    devs = list(backend.local_devices() if devices is None else devices)
    if math.prod(shape) != len(devs):
        raise ValueError(f"create_device_mesh: {len(devs)} devices ({devs}) for a mesh of "
                         f"shape {shape}, whose product is {math.prod(shape)}")
    out = numpy.empty(len(devs), dtype=object)
    out[:] = devs
    return out.reshape(shape)
