"""``jax.extend.backend``'s names that funcgrad backs: the default device.

Example:
    >>> from funcgrad.extend.backend import get_default_device
    >>> get_default_device()
    'cpu'
"""

from __future__ import annotations

from funcgrad.backend import Device
from funcgrad.backend import get_default_device as _default

__all__ = ["get_default_device"]


def get_default_device() -> Device:
    """The device arrays made from Python data go to (JAX's
    ``jax.extend.backend.get_default_device``): a :class:`funcgrad.backend.Device`, a ``str``
    with JAX's ``.platform`` and ``.id``.

    Example:
        >>> d = get_default_device()
        >>> d.platform, d.id
        ('cpu', 0)
    """
    return Device(_default())
