"""funcgrad.numpy: arrays from buffers, iterators, files and other libraries (DLPack).

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
from funcgrad.backend import available_devices, get_default_device, to_numpy, xp_for_device
from funcgrad.core import Tracer
from funcgrad.errors import ConcretizationError, DTypeError
from funcgrad.numpy import _creation

__all__ = ["from_dlpack", "frombuffer", "fromiter", "asfortranarray", "require", "fromfile",
           "fromstring", "load", "save", "savez", "iterable", "ComplexWarning", "errstate",
           "geterr", "seterr", "asarray_chkfinite", "__array_api_version__",
           "__array_namespace_info__"]

#: the array API standard revision funcgrad.numpy follows: NumPy 2's, whose functions it has
__array_api_version__: str = _np.__array_api_version__

# NumPy's own floating-point error state: it governs the warnings of computations on the host
# (funcgrad's CPU arrays are NumPy's), so `with fnp.errstate(divide="ignore"):` works as in
# NumPy code.
errstate, geterr, seterr = _np.errstate, _np.geterr, _np.seterr

#: ``jax.numpy.ComplexWarning``: NumPy's warning for a complex value cast to a real type
ComplexWarning = _np.exceptions.ComplexWarning

# DLPack device types (the DLDeviceType enum)
_DL_CPU, _DL_CUDA, _DL_CUDA_HOST, _DL_ROCM = 1, 2, 3, 10


def from_dlpack(x: Any, *, device: Any = None, copy: bool | None = None) -> Any:
    """The array ``x`` (any object with ``__dlpack__``: a torch tensor, a CuPy/JAX/NumPy
    array) as a NumPy array, or a CuPy array for a GPU producer, sharing its memory.

    ``device`` places the result there, as ``jax.numpy.from_dlpack``'s (a copy when it is
    another device than the producer's; ``copy=False`` then raises, as the array API says).
    A dtype NumPy and CuPy have no arithmetic for (``torch.bfloat16``, the float8 types) is
    a ``DTypeError`` naming it: convert first (``tensor.float()``).

    Example:
        >>> import numpy as np
        >>> a = np.arange(4.0); b = from_dlpack(a); b[0] = 7.0; float(a[0])   # shared
        7.0
    """
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"from_dlpack: {type(x).__name__} does not implement __dlpack__")
    kind = x.__dlpack_device__()[0] if hasattr(x, "__dlpack_device__") else _DL_CPU
    kwargs = {} if copy is None else {"copy": copy}
    try:
        if kind in (_DL_CPU, _DL_CUDA_HOST):
            out = _np.from_dlpack(x, **kwargs)
        elif kind in (_DL_CUDA, _DL_ROCM):
            import cupy  # a GPU producer implies CuPy is the array library to hold it

            out = cupy.from_dlpack(x, **kwargs)
        else:
            raise ValueError(
                f"from_dlpack: unsupported DLPack device type {kind} (CPU and CUDA are)")
    except (RuntimeError, BufferError, TypeError) as e:
        if "dtype" not in str(e).lower():
            raise
        raise DTypeError(
            f"from_dlpack: the producer's dtype ({getattr(x, 'dtype', 'unknown')}) has no "
            "NumPy/CuPy arithmetic, so funcgrad cannot hold it (bfloat16 and the float8 types "
            "come from ml_dtypes in JAX); convert it first, e.g. tensor.float() or "
            "tensor.to(torch.float16)") from e
    if device is None:
        return out
    moved = fnp.asarray(out, device=device)
    if copy is False and moved is not out:
        raise ValueError(f"from_dlpack: copy=False, but the array is not on {device!r}: "
                         "putting it there copies it")
    return moved


def frombuffer(buffer: Any, dtype: Any = float, count: int = -1, offset: int = 0, *,
               like: Any = None) -> Any:
    """``numpy.frombuffer``, placed on the default device (a copy there when it is a GPU).

    Example:
        >>> import numpy as np
        >>> frombuffer(np.arange(3, dtype=np.int32).tobytes(), dtype=np.int32).tolist()
        [0, 1, 2]
    """
    host = _np.frombuffer(buffer, dtype=dtype, count=count, offset=offset)
    return _on_default_device(host, _like("frombuffer", like))


def fromiter(iterable: Iterable[Any], dtype: Any, count: int = -1, *, like: Any = None) -> Any:
    """``numpy.fromiter`` (values from a Python iterator), on the default device.

    Example:
        >>> import numpy as np
        >>> fromiter((i * i for i in range(4)), dtype=np.int64).tolist()
        [0, 1, 4, 9]
    """
    return _on_default_device(_np.fromiter(iterable, dtype=dtype, count=count),
                              _like("fromiter", like))


def fromstring(string: str, dtype: Any = float, count: int = -1, *, sep: str,
               like: Any = None) -> Any:
    """``numpy.fromstring`` of text (``sep`` is required: the binary mode NumPy deprecated is
    :func:`frombuffer`), on the default device.

    Example:
        >>> fromstring("1 2 3", sep=" ").tolist()
        [1.0, 2.0, 3.0]
    """
    return _on_default_device(_np.fromstring(string, dtype=dtype, count=count, sep=sep),
                              _like("fromstring", like))


def fromfile(file: Any, dtype: Any = float, count: int = -1, sep: str = "", offset: int = 0
             ) -> Any:
    """``numpy.fromfile``, read now (a file read is not part of a traced program: under
    ``jit`` it happens once, at tracing), on the default device.

    Example:
        >>> import numpy as np, tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "a.bin")
        >>> np.arange(3, dtype=np.int32).tofile(path)
        >>> fromfile(path, dtype=np.int32).tolist()
        [0, 1, 2]
    """
    return _on_default_device(_np.fromfile(file, dtype=dtype, count=count, sep=sep,
                                           offset=offset))


def load(file: Any, *args: Any, **kwargs: Any) -> Any:
    """``numpy.load``: a ``.npy`` array comes back on the default device (as ``jnp.load``);
    a ``.npz`` archive is NumPy's lazy ``NpzFile`` of host arrays, as in JAX.

    Example:
        >>> import io, numpy as np
        >>> buf = io.BytesIO(); save(buf, np.arange(3.0)); _ = buf.seek(0)
        >>> load(buf).tolist()
        [0.0, 1.0, 2.0]
    """
    out = _np.load(file, *args, **kwargs)
    return _on_default_device(out) if isinstance(out, _np.ndarray) else out


def save(file: Any, arr: Any, allow_pickle: bool = True) -> None:
    """``numpy.save`` of an array on any device (copied to the host to be written).

    Example:
        >>> import io, funcgrad.numpy as fnp
        >>> save(io.BytesIO(), fnp.ones(2))
    """
    _np.save(file, _host(arr), allow_pickle=allow_pickle)


def savez(file: Any, *args: Any, allow_pickle: bool = True, **kwds: Any) -> None:
    """``numpy.savez`` of arrays on any device (copied to the host to be written).

    Example:
        >>> import io, numpy as np, funcgrad.numpy as fnp
        >>> buf = io.BytesIO(); savez(buf, w=fnp.ones(2)); _ = buf.seek(0)
        >>> load(buf)["w"].tolist()
        [1.0, 1.0]
    """
    _np.savez(file, *[_host(a) for a in args], allow_pickle=allow_pickle,
              **{k: _host(v) for k, v in kwds.items()})


def iterable(y: Any) -> bool:
    """Whether ``iter(y)`` works (``numpy.iterable``): a 0-d array is not iterable.

    Example:
        >>> iterable([1, 2]), iterable(2.0)
        (True, False)
    """
    return bool(_np.iterable(y)) if not hasattr(y, "ndim") else y.ndim > 0


def _host(x: Any) -> Any:
    if isinstance(x, Tracer):
        raise ConcretizationError(
            "funcgrad.numpy.save/savez: a traced array has no value to write while a "
            "transformation traces the function; save outside it, or return the array")
    return to_numpy(x) if hasattr(x, "shape") else x


def _on_default_device(host: _np.ndarray, device: Any = None) -> Any:
    """``host`` on ``device`` (a ``like=`` array's), else on the default device."""
    xp = xp_for_device(device or get_default_device())
    return host if xp is _np else xp.asarray(host)


def _like(fname: str, like: Any) -> Any:
    return _creation._like(fname, like, None)


def asfortranarray(a: Any, dtype: Any = None, *, like: Any = None) -> Any:
    """``a`` as an array of at least one dimension (memory order is the backend's business:
    funcgrad's results do not depend on it).

    Example:
        >>> asfortranarray(3.0).shape
        (1,)
    """
    return fnp.atleast_1d(fnp.asarray(a, dtype=dtype, like=like))


def require(a: Any, dtype: Any = None, requirements: Any = None, *, like: Any = None) -> Any:
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
    return fnp.asarray(a, dtype=dtype, like=like)


def asarray_chkfinite(a: Any, dtype: Any = None, order: Any = None) -> Any:
    """``asarray(a)``, refusing NaNs and infinities with NumPy's ``ValueError``.

    The check needs the values: a traced ``a`` (under ``jit``/``vmap``) raises a
    ``ConcretizationError`` (check with ``funcgrad.experimental.checkify`` there).

    Example:
        >>> asarray_chkfinite([1.0, 2.0]).tolist()
        [1.0, 2.0]
    """
    x = fnp.asarray(a, dtype=dtype, order=order)
    value = x.to_concrete_value() if isinstance(x, Tracer) else x
    if value is None:
        raise ConcretizationError(
            f"asarray_chkfinite needs the values of a traced array ({x.aval.str_short()}) to "
            "check them; check with funcgrad.experimental.checkify(..., "
            "errors=float_checks) under jit, or outside the transformation")
    if value.dtype.kind in "fc" and not bool(fnp.isfinite(value).all()):
        raise ValueError("array must not contain infs or NaNs")
    return x


class __array_namespace_info__:  # noqa: N801  (the array API's name)
    """The array API's inspection namespace (``xp.__array_namespace_info__()``): what
    array-API libraries (SciPy, scikit-learn, ``array_api_compat``) ask a namespace for its
    devices and default dtypes. The dtypes are NumPy 2's (float64 by default), the devices
    funcgrad's (``"cpu"``, and ``"gpu"`` where CuPy sees CUDA).

    Example:
        >>> import funcgrad.numpy as fnp
        >>> info = fnp.__array_namespace_info__()
        >>> info.default_dtypes()["real floating"], info.default_device()
        (dtype('float64'), 'cpu')
    """

    __module__ = "funcgrad.numpy"

    def capabilities(self) -> dict[str, Any]:
        """Boolean-mask indexing and value-dependent output shapes (``unique``,
        ``nonzero``) work on concrete arrays, as NumPy's; under ``jit``/``vmap`` they need a
        concrete mask or a static ``size=``."""
        return {"boolean indexing": True, "data-dependent shapes": True,
                "max dimensions": 64}

    def default_device(self) -> str:
        """The device arrays made from Python data go to."""
        return str(get_default_device())

    def devices(self) -> list[str]:
        """Every device usable now."""
        return [str(d) for d in available_devices()]

    def _check(self, device: Any) -> None:
        if device is not None and str(device) not in self.devices():
            raise ValueError(f"__array_namespace_info__: device {device!r} is not one of "
                             f"{self.devices()}")

    def default_dtypes(self, *, device: Any = None) -> dict[str, _np.dtype]:
        """NumPy 2's defaults: float64, complex128, int64 (and int64 indices)."""
        self._check(device)
        return _np.__array_namespace_info__().default_dtypes()

    def dtypes(self, *, device: Any = None, kind: Any = None) -> dict[str, _np.dtype]:
        """The array API dtypes (of ``kind``: ``"bool"``, ``"signed integer"``,
        ``"unsigned integer"``, ``"integral"``, ``"real floating"``, ``"complex floating"``,
        ``"numeric"`` or a tuple of them), as NumPy lists them."""
        self._check(device)
        return _np.__array_namespace_info__().dtypes(kind=kind)

