"""The only door to array libraries.

Every primitive implementation asks this module for its array module (``xp``) instead of
importing NumPy, so the same code runs on NumPy (device ``"cpu"``), CuPy (``"gpu"``, imported
lazily, only when a CuPy array or device is used) and the strict test backend (``"strict"``): a
distinct array type over NumPy that, like CuPy, refuses implicit conversion, so host/device
mixing bugs show up on a CPU-only machine.
"""

from __future__ import annotations

import contextlib
import operator as _operator
from collections.abc import Iterator
from typing import Any

import numpy

from funcgrad import config as _config
from funcgrad.errors import DeviceMismatchError

__all__ = [
    "Device",
    "devices",
    "canonical_device",
    "platform_name",
    "device_put",
    "device_of",
    "default_device",
    "get_default_device",
    "xp_for",
    "xp_for_device",
    "to_numpy",
    "scalar_array",
    "is_array",
    "cuda_available",
    "available_devices",
    "memory_owner",
    "operator_index",
]

_PY_SCALARS = (bool, int, float, complex)
_default_device = _config.default_device

#: types whose values are traced (no concrete array inside): ``funcgrad.core`` registers its
#: ``Tracer``. ``device_put`` leaves them where they are; ``to_numpy`` refuses them.
traced_types: list[type] = []

# device name -> array module, filled lazily for the optional ones.
_modules: dict[str, Any] = {"cpu": numpy}
# concrete array type -> device name; the hot path of device_of is one dict lookup.
_type_to_device: dict[type, str] = {numpy.ndarray: "cpu"}


def _load_strict() -> Any:
    if "strict" not in _modules:
        from funcgrad import _strict_array

        _modules["strict"] = _strict_array.strict_numpy
        _type_to_device[_strict_array.StrictArray] = "strict"
    return _modules["strict"]


def _load_cupy() -> Any:
    if "gpu" not in _modules:
        try:
            import cupy
        except ImportError as e:  # pragma: no cover - depends on the machine
            raise RuntimeError(
                "device 'gpu' needs CuPy: pip install 'funcgrad[cuda]' (cupy-cuda12x)"
            ) from e
        _modules["gpu"] = cupy
        _type_to_device[cupy.ndarray] = "gpu"
    return _modules["gpu"]


_loaders = {"strict": _load_strict, "gpu": _load_cupy}


def cuda_available() -> bool:
    """Whether CuPy imports and sees at least one CUDA device.

    Example:
        >>> isinstance(cuda_available(), bool)
        True
    """
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


class Device(str):
    """One of funcgrad's devices: its name (``"cpu"``, ``"gpu"``, ``"strict"``), a ``str``
    that compares equal to the name, with the attributes JAX code reads from a
    ``jax.Device``: ``platform`` (``"cpu"``, ``"gpu"``; ``"strict"`` for the CPU test backend),
    ``id`` (CuPy's current GPU's index on a GPU, else 0), ``device_kind`` (the GPU's model name;
    ``"cpu"`` for a CPU) and ``process_index`` / ``host_id`` (0: one process).

    Example:
        >>> d = devices()[0]
        >>> d == "cpu", d.platform, d.id, d.device_kind, d.process_index
        (True, 'cpu', 0, 'cpu', 0)
    """

    __slots__ = ()

    @property
    def platform(self) -> str:
        return str(self)

    @property
    def id(self) -> int:
        return int(_load_cupy().cuda.Device().id) if self == "gpu" else 0

    @property
    def device_kind(self) -> str:
        if self != "gpu":
            return "cpu"
        cupy = _load_cupy()
        name = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)["name"]
        return name.decode() if isinstance(name, bytes) else str(name)

    @property
    def process_index(self) -> int:
        return 0

    host_id = process_index


def _platform_devices(backend: Any, available: list[Device]) -> list[Device]:
    try:
        want = canonical_device(backend)
    except ValueError:
        want = None
    found = [d for d in available if d == want]
    if not found:
        raise RuntimeError(f"Unknown backend {backend!r}: funcgrad's devices here are "
                           f"{[str(d) for d in available]}")
    return found


def available_devices() -> list[Device]:
    """Every device usable now: always ``"cpu"``, ``"gpu"`` when CuPy sees CUDA (and the
    strict test backend while it is the default).

    Example:
        >>> "cpu" in available_devices()
        True
    """
    out = [Device("cpu")]
    if cuda_available():
        out.append(Device("gpu"))
    if default_backend() == "strict":
        out.append(Device("strict"))
    return out


def devices(backend: Any = None) -> list[Device]:
    """The devices of ``backend`` (``jax.devices(backend=None)``), by default of the default
    backend (:func:`default_backend`), as JAX's: ``devices()[0]`` is where arrays made from
    Python data go. ``backend`` is a platform name (``"cpu"``, ``"gpu"``/``"cuda"``); one
    without devices here is a ``RuntimeError``, as in JAX (:func:`available_devices` lists
    them all). Each is a :class:`Device`; funcgrad uses one per platform.

    Example:
        >>> devices()
        ['cpu']
        >>> devices("cpu")[0].platform
        'cpu'
    """
    if backend is None:
        return [Device(default_backend())]
    return _platform_devices(backend, available_devices())


def default_backend() -> str:
    """The platform arrays made from Python data go to (``jax.default_backend()``): ``"cpu"``,
    ``"gpu"`` or ``"strict"`` (see :func:`default_device`).

    Example:
        >>> default_backend()
        'cpu'
    """
    return _default_device.get()


def local_devices(process_index: int | None = None, backend: Any = None,
                  host_id: int | None = None) -> list[Device]:
    """The devices of the default backend (``jax.local_devices()``), or of ``backend``:
    funcgrad uses one device per platform (CuPy's current GPU), so this is
    ``[default_backend()]`` (a :class:`Device`). ``process_index`` / ``host_id`` may only be
    0 (one process).

    Example:
        >>> local_devices()
        ['cpu']
    """
    for name, index in (("process_index", process_index), ("host_id", host_id)):
        if index not in (None, 0):
            raise ValueError(f"local_devices({name}={index!r}): funcgrad runs one process, "
                             "whose index is 0")
    return devices(backend)


def device_count(backend: Any = None) -> int:
    """How many devices ``backend`` has (``jax.device_count()``; the default backend): 1.

    Example:
        >>> device_count()
        1
    """
    return len(devices(backend))


def local_device_count(backend: Any = None) -> int:
    """How many devices this process uses on ``backend`` (``jax.local_device_count()``; the
    default backend).

    Example:
        >>> local_device_count()
        1
    """
    return device_count(backend)


def process_index() -> int:
    """This process's index in JAX's multi-process runtime (``jax.process_index()``): 0.
    funcgrad runs one process per program; under ``mpiexec`` the MPI rank is
    ``funcgrad.distributed.world().rank`` (docs/distributed.md).

    Example:
        >>> process_index()
        0
    """
    return 0


def process_indices(backend: Any = None) -> list[int]:
    """The indices of the processes of JAX's multi-process runtime
    (``jax.process_indices()``): ``[0]`` (see :func:`process_index`).

    Example:
        >>> process_indices()
        [0]
    """
    del backend  # one process whatever the backend
    return [0]


def process_count() -> int:
    """How many processes JAX's multi-process runtime has (``jax.process_count()``): 1 (see
    :func:`process_index`).

    Example:
        >>> process_count()
        1
    """
    return 1


#: the names PyTorch users write for funcgrad's devices
_DEVICE_ALIASES = {"cuda": "gpu"}


#: JAX's platform names (lowering platforms, ``platform_dependent``'s keywords) of funcgrad's
#: devices: the strict test backend is a CPU
_PLATFORMS = {"cpu": "cpu", "strict": "cpu", "gpu": "cuda"}


def platform_name(device: str | None = None) -> str:
    """JAX's name of the platform of ``device`` (default: the default device): ``"cpu"`` or
    ``"cuda"``. JAX's own names pass through (``"cuda"``, ``"gpu"`` -> ``"cuda"``), so a
    platform a user wrote and one of funcgrad's devices compare equal.

    Example:
        >>> platform_name("gpu"), platform_name("cpu:0"), platform_name("cuda")
        ('cuda', 'cpu', 'cuda')
    """
    base = (device or get_default_device()).split(":")[0].lower()
    return _PLATFORMS.get(_DEVICE_ALIASES.get(base, base), base)


def canonical_device(device: Any) -> str:
    """funcgrad's name ("cpu", "gpu", "strict") of a device named as PyTorch or CuPy users do.

    ``"cuda"`` is ``"gpu"``; an index (``"cuda:0"``, ``"cpu:0"``) is accepted when it names
    the device funcgrad uses: GPU arrays live on CuPy's current device (select another with
    ``cupy.cuda.Device(n).use()``). Anything whose ``str`` is such a name works too.

    Example:
        >>> canonical_device("cuda:0"), canonical_device("cpu"), canonical_device("gpu")
        ('gpu', 'cpu', 'gpu')
    """
    name = device if isinstance(device, str) else str(device)
    base, sep, index = name.strip().lower().partition(":")
    base = _DEVICE_ALIASES.get(base, base)
    if base not in ("cpu", "gpu", "strict"):
        raise ValueError(
            f"unknown device {device!r}; expected 'cpu', 'cuda' (or 'gpu'), 'cuda:N' or "
            "'strict' (the CPU test backend)"
        )
    if sep:
        if not index.isdigit():
            raise ValueError(f"device {device!r}: the index after ':' must be an integer")
        wanted, current = int(index), 0
        if base == "gpu" and wanted != 0:
            current = _load_cupy().cuda.Device().id
        if wanted != current:
            raise ValueError(
                f"device {device!r}: funcgrad uses one {base} device, index {current}"
                + (f" (CuPy's current device); make device {wanted} current with "
                   f"cupy.cuda.Device({wanted}).use() and name it 'cuda'"
                   if base == "gpu" else "")
            )
    return base


def xp_for_device(device: str) -> Any:
    """The array module of ``device`` ("cpu", "gpu" or "strict"; "cuda", "cuda:N" too).

    Example:
        >>> xp_for_device("cpu").__name__
        'numpy'
    """
    mod = _modules.get(device)
    if mod is not None:
        return mod
    device = canonical_device(device)
    mod = _modules.get(device)
    return mod if mod is not None else _loaders[device]()


def device_of(x: Any) -> str | None:
    """The device an array lives on, or None for Python scalars (which go anywhere).

    NumPy scalars (``numpy.float32(1)``) count as host values that any device accepts, as
    CuPy accepts them.

    Example:
        >>> device_of(numpy.ones(2)), device_of(1.0)
        ('cpu', None)
    """
    d = _type_to_device.get(type(x))
    if d is not None:
        return d
    if isinstance(x, _PY_SCALARS) or isinstance(x, numpy.generic):
        return None
    if isinstance(x, numpy.ndarray):
        return "cpu"
    mod = type(x).__module__.split(".")[0]
    if mod == "cupy":
        _load_cupy()
        return "gpu"
    if mod == "funcgrad" and type(x).__name__ == "StrictArray":
        _load_strict()
        return "strict"
    return None


def is_array(x: Any) -> bool:
    """Whether ``x`` is an array of a known backend (not a Python or NumPy scalar).

    Example:
        >>> is_array(numpy.zeros(3)), is_array(3.0)
        (True, False)
    """
    return device_of(x) is not None


def operator_index(v: Any) -> int:
    """``operator.index(v)``, also for a 0-d integer array of a device.

    NumPy and JAX take a concrete 0-d integer array where an int is meant (an axis, a slice
    bound, ``decimals``); CuPy's arrays have no ``__index__`` (it would synchronise the
    device), so ``operator.index`` refuses them: this reads the one element instead. Anything
    else (a float, a bool, an array of another shape) raises ``operator.index``'s TypeError.

    Example:
        >>> operator_index(numpy.array(2)), operator_index(numpy.int8(-1))
        (2, -1)
    """
    try:
        return _operator.index(v)
    except TypeError:
        if (device_of(v) not in (None, "cpu") and v.ndim == 0
                and v.dtype.kind in "iu"):
            return int(v)
        raise


def get_default_device() -> str:
    """The device used for arrays created from Python data (see :func:`default_device`).

    Example:
        >>> get_default_device()
        'cpu'
    """
    return _default_device.get()


def _write_platforms(value: Any) -> None:
    """JAX's ``jax_platforms`` ("cpu", "cuda,cpu": the first is the default) and
    ``jax_platform_name``: where arrays made from Python data go, in this context."""
    first = str(value).split(",")[0].strip() if value else "cpu"
    device = canonical_device(first)
    xp_for_device(device)
    _default_device.set(device)


_config.register_flag("jax_platforms", get_default_device, _write_platforms)
_config.register_flag("jax_platform_name", get_default_device, _write_platforms)


def _write_default_device(value: Any) -> None:
    """JAX's ``jax_default_device`` (a device, or its name; None: the platform default, the
    CPU here): where arrays made from Python data go, in this context."""
    device = "cpu" if value is None else canonical_device(value)
    xp_for_device(device)
    _default_device.set(device)


_config.register_flag("jax_default_device", get_default_device, _write_default_device)


@contextlib.contextmanager
def default_device(device: str) -> Iterator[None]:
    """Context manager: arrays created from scalars or lists inside go to ``device``.

    Example:
        >>> import funcgrad.numpy as fnp
        >>> with default_device("cpu"):
        ...     type(fnp.zeros(2)).__name__
        'ndarray'
    """
    device = canonical_device(device)
    xp_for_device(device)
    token = _default_device.set(device)
    try:
        yield
    finally:
        _default_device.reset(token)


def common_device(values: Any, what: str = "operation") -> str:
    """The one device of the arrays in ``values``; raises naming both when they differ."""
    dev = None
    for v in values:
        d = _type_to_device.get(type(v))
        if d is None:
            d = device_of(v)
            if d is None:
                continue
        if dev is None:
            dev = d
        elif d != dev:
            raise DeviceMismatchError(
                f"{what}: arrays on different devices met: {dev!r} and {d!r}. "
                f"Move them to one device first with funcgrad.device_put(x, {dev!r})."
            )
    return dev if dev is not None else _default_device.get()


def xp_for(*values: Any, what: str = "operation") -> Any:
    """The array module for computing on ``values`` (NumPy, CuPy or the strict backend).

    Raises :class:`~funcgrad.errors.DeviceMismatchError` when arrays of two devices meet.

    Example:
        >>> xp_for(numpy.ones(2), 2.0).__name__
        'numpy'
    """
    # Fast path: host arrays compute on the host. Python and NumPy scalars go anywhere (as
    # CuPy treats them); alone, they go to the default device.
    host = False
    for v in values:
        t = type(v)
        if t is numpy.ndarray:
            host = True
        elif t not in _PY_SCALARS and not isinstance(v, numpy.generic):
            return _modules[common_device(values, what)]
    if host:
        return numpy
    dev = _default_device.get()
    return numpy if dev == "cpu" else xp_for_device(dev)


def is_writeable(x: Any) -> bool:
    """Whether ``x`` may be written in place: False only for arrays flagged read-only (NumPy's
    ``flags.writeable``); CuPy arrays have no such flag and are always writeable.

    Example:
        >>> a = numpy.zeros(2); a.flags.writeable = False
        >>> is_writeable(a), is_writeable(numpy.zeros(2))
        (False, True)
    """
    return getattr(getattr(x, "flags", None), "writeable", True)


def device_put(x: Any, device: str | None = None) -> Any:
    """Copy one array (or scalar) to ``device`` ("cpu", "gpu"/"cuda" or "strict"; the default
    device when None). Traced values stay where they are. ``funcgrad.device_put`` also takes
    pytrees.

    Example:
        >>> type(device_put(numpy.ones(2), "strict")).__name__
        'StrictArray'
    """
    device = canonical_device(device) if device else _default_device.get()
    if traced_types and isinstance(x, tuple(traced_types)):
        return x
    src = device_of(x)
    if src == device:
        return x
    if src is not None and src != "cpu":
        x = to_numpy(x)
    elif isinstance(x, (*_PY_SCALARS, numpy.generic)) or (
            type(x) is numpy.ndarray and x.ndim == 0):
        return scalar_array(xp_for_device(device), x)
    return xp_for_device(device).asarray(x)


def scalar_array(xp: Any, x: Any) -> Any:
    """The Python or NumPy scalar ``x`` as a 0-d array of the array module ``xp``, bit for
    bit: CuPy's ``asarray`` of a scalar, and of a 0-d host array, drops the sign of ``-0.0``
    (seen with CuPy 14.2); a one-element host array is copied over as bytes, then reshaped.

    Example:
        >>> scalar_array(numpy, -0.0)
        array(-0.)
    """
    if xp is numpy:
        return xp.asarray(x)
    return xp.asarray(numpy.asarray(x).reshape(1)).reshape(())


def to_numpy(x: Any) -> Any:
    """A host ``numpy.ndarray`` view or copy of ``x`` (from any device); scalars pass through.

    Example:
        >>> to_numpy(numpy.arange(3)).tolist()
        [0, 1, 2]
    """
    if isinstance(x, numpy.ndarray | numpy.generic) or isinstance(x, _PY_SCALARS):
        return x
    get = getattr(x, "get", None)
    if get is not None and device_of(x) in ("gpu", "strict"):
        return get()
    if traced_types and isinstance(x, tuple(traced_types)):
        raise TypeError(
            "to_numpy got a traced value; it has no concrete array inside a transformation"
        )
    return numpy.asarray(x)



def may_share_memory(a: Any, b: Any) -> bool:
    """Whether arrays ``a`` and ``b`` may share memory: never when they are of different array
    types (a host and a device array, a loop's tape), which CuPy's ``may_share_memory``
    refuses to compare.

    Example:
        >>> a = numpy.zeros(4)
        >>> may_share_memory(a[1:], a), may_share_memory(a, a.copy())
        (True, False)
    """
    if type(a) is not type(b) or not is_array(a):
        return False
    return bool(xp_for_device(device_of(a)).may_share_memory(a, b))


def memory_owner(x: Any) -> Any:
    """A hashable key of the allocation ``x``'s memory belongs to, or None when that cannot
    be told cheaply (a NumPy array over a foreign buffer, an unknown array type).

    Arrays with different keys share no memory; arrays with equal keys may (a view and its
    base, two slices of one array). One call per array makes "does any of these alias
    another" O(n) (``jit``'s buffer donation), where ``may_share_memory`` is pairwise.

    Example:
        >>> a = numpy.zeros(4)
        >>> memory_owner(a[1:]) == memory_owner(a), memory_owner(a) == memory_owner(a.copy())
        (True, False)
    """
    if isinstance(x, numpy.ndarray):
        root, base = x, x.base
        while base is not None:
            if not isinstance(base, numpy.ndarray):
                return None  # frombuffer / mmap: another object owns the bytes
            root, base = base, base.base
        # (codegen._effective_donation inlines this for base-less arrays: same keys)
        return ("host", id(root)) if root.flags.owndata else None
    dev = device_of(x)
    if dev == "strict":
        return memory_owner(x._a)  # the host array it wraps
    if dev == "gpu":
        mem = getattr(getattr(x, "data", None), "mem", None)  # CuPy: views share .data.mem
        return None if mem is None else ("gpu", id(mem))
    return None
