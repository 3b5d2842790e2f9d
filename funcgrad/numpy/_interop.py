"""funcgrad.numpy: arrays from buffers, iterators and other libraries (DLPack).

funcgrad's arrays *are* NumPy or CuPy arrays, so they already speak DLPack: pass one to
``torch.from_dlpack`` (or ``cupy.from_dlpack``) and the library shares its memory.
``from_dlpack`` goes the other way: a PyTorch tensor, a CuPy or JAX array becomes a NumPy
array (CPU producers) or a CuPy array (CUDA producers) without a copy.

Example:
    >>> import numpy as np
    >>> from_dlpack(np.arange(3.0)).tolist()
    [0.0, 1.0, 2.0]
    >>> frombuffer(b"\\x01\\x02", dtype=np.uint8).tolist()
    [1, 2]
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as _np

import funcgrad.numpy as fnp
from funcgrad.backend import get_default_device, xp_for_device

__all__ = ["from_dlpack", "frombuffer", "fromiter", "asfortranarray", "require"]

# DLPack device types (the DLDeviceType enum)
_DL_CPU, _DL_CUDA, _DL_CUDA_HOST, _DL_ROCM = 1, 2, 3, 10


def from_dlpack(x: Any, *, device: Any = None, copy: bool | None = None) -> Any:
    """The array ``x`` (any object with ``__dlpack__``: a torch tensor, a CuPy/JAX/NumPy
    array) as a NumPy array, or a CuPy array for a GPU producer, sharing its memory.

    Example:
        >>> import numpy as np
        >>> a = np.arange(4.0); b = from_dlpack(a); b[0] = 7.0; float(a[0])   # shared
        7.0
    """
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"from_dlpack: {type(x).__name__} does not implement __dlpack__")
    kind = x.__dlpack_device__()[0] if hasattr(x, "__dlpack_device__") else _DL_CPU
    kwargs = {} if copy is None else {"copy": copy}
    if kind in (_DL_CPU, _DL_CUDA_HOST):
        return _np.from_dlpack(x, **kwargs)
    if kind in (_DL_CUDA, _DL_ROCM):
        import cupy  # a GPU producer implies CuPy is the array library to hold it

        return cupy.from_dlpack(x)
    raise ValueError(f"from_dlpack: unsupported DLPack device type {kind} (CPU and CUDA are)")


def frombuffer(buffer: Any, dtype: Any = float, count: int = -1, offset: int = 0) -> Any:
    """``numpy.frombuffer``, placed on the default device (a copy there when it is a GPU).

    Example:
        >>> import numpy as np
        >>> frombuffer(np.arange(3, dtype=np.int32).tobytes(), dtype=np.int32).tolist()
        [0, 1, 2]
    """
    host = _np.frombuffer(buffer, dtype=dtype, count=count, offset=offset)
    return _on_default_device(host)


def fromiter(iterable: Iterable[Any], dtype: Any, count: int = -1) -> Any:
    """``numpy.fromiter`` (values from a Python iterator), on the default device.

    Example:
        >>> import numpy as np
        >>> fromiter((i * i for i in range(4)), dtype=np.int64).tolist()
        [0, 1, 4, 9]
    """
    return _on_default_device(_np.fromiter(iterable, dtype=dtype, count=count))


def _on_default_device(host: _np.ndarray) -> Any:
    xp = xp_for_device(get_default_device())
    return host if xp is _np else xp.asarray(host)


def asfortranarray(a: Any, dtype: Any = None) -> Any:
    """``a`` as an array of at least one dimension (memory order is the backend's business:
    funcgrad's results do not depend on it).

    Example:
        >>> asfortranarray(3.0).shape
        (1,)
    """
    return fnp.atleast_1d(fnp.asarray(a, dtype=dtype))


def require(a: Any, dtype: Any = None, requirements: Any = None) -> Any:
    """``a`` as an array of ``dtype``; memory-layout requirements ('C', 'F', 'A', 'W', 'O',
    'E') are accepted and need no action on funcgrad's arrays.

    Example:
        >>> import numpy as np
        >>> require([1, 2], np.float32, "C").dtype
        dtype('float32')
    """
    known = set("CFAWOE") | {"C_CONTIGUOUS", "F_CONTIGUOUS", "ALIGNED", "WRITEABLE",
                             "OWNDATA", "ENSUREARRAY", "CONTIGUOUS", "FORTRAN"}
    reqs = [requirements] if isinstance(requirements, str) else list(requirements or [])
    bad = [r for r in reqs if str(r).upper() not in known]
    if bad:
        raise ValueError(f"require: unknown requirement(s) {bad}")
    return fnp.asarray(a, dtype=dtype)
