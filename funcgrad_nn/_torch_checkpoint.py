"""Reading ``torch.save``'s checkpoints (``model.pt``, ``checkpoint.pth``: its zip archive, and
its legacy format, ``_use_new_zipfile_serialization=False``) without torch and without
running code: the pickle (the archive's ``data.pkl``) is read by a *restricted* unpickler, as
``torch.load(weights_only=True)`` (PyTorch's default) reads it. Every global the pickle names
is looked up in :data:`_ALLOWED`, which maps PyTorch's few names (the tensor and parameter
rebuild functions, the storage classes, dtypes, ``torch.device``, ``torch.Size``,
``collections.OrderedDict``, ...) to builders here; any other name is refused with a
:class:`CheckpointError` naming it, so no class or function of the file's choosing is ever
called. Tensors come back as NumPy arrays (bfloat16 as float32, exactly, as
:func:`funcgrad_nn.load` reads a bfloat16 safetensors file), parameters as their arrays,
``torch.device`` as its string, ``torch.Size`` as a tuple and a dtype as a NumPy dtype.

>>> import io, zipfile, pickle, collections, numpy as np
>>> buf = io.BytesIO()
>>> with zipfile.ZipFile(buf, "w") as z:   # what torch.save({"w": torch.ones(2)}) writes
...     z.writestr("ck/data.pkl", b"\\x80\\x02}q\\x00X\\x01\\x00\\x00\\x00wq\\x01ctorch._utils\\n"
...                b"_rebuild_tensor_v2\\nq\\x02((X\\x07\\x00\\x00\\x00storageq\\x03ctorch\\n"
...                b"FloatStorage\\nq\\x04X\\x01\\x00\\x00\\x000q\\x05X\\x03\\x00\\x00\\x00cpuq\\x06"
...                b"K\\x02tq\\x07QK\\x00K\\x02\\x85q\\x08K\\x01\\x85q\\x09\\x89ccollections\\n"
...                b"OrderedDict\\nq\\x0a)Rq\\x0btq\\x0cRq\\x0ds.")
...     z.writestr("ck/data/0", np.ones(2, np.float32).tobytes())
>>> _ = buf.seek(0)
>>> read_torch_zip(zipfile.ZipFile(buf), "buf", lambda a: a)
{'w': array([1., 1.], dtype=float32)}
"""

from __future__ import annotations

import codecs
import collections
import functools
import pickle
import warnings
import zipfile
from collections.abc import Callable
from typing import Any

import numpy

__all__ = ["CheckpointError", "UnpickledObject", "is_torch_legacy", "is_torch_zip",
           "read_torch_legacy", "read_torch_zip"]


class CheckpointError(ValueError):
    """A file that is not, or no longer, a readable checkpoint (names the file and the fault)."""

    __module__ = "funcgrad_nn.serialization"  # its public home (tracebacks name it there)


# torch's storage classes -> the NumPy dtype their bytes hold ("bfloat16": uint16 bits,
# widened to float32 below, as NumPy has no bfloat16)
_STORAGE_DTYPES = {
    "FloatStorage": "<f4", "DoubleStorage": "<f8", "HalfStorage": "<f2",
    "BFloat16Storage": "bfloat16", "LongStorage": "<i8", "IntStorage": "<i4",
    "ShortStorage": "<i2", "CharStorage": "i1", "ByteStorage": "u1", "BoolStorage": "?",
    "ComplexFloatStorage": "<c8", "ComplexDoubleStorage": "<c16",
    "UntypedStorage": "u1", "UInt16Storage": "<u2", "UInt32Storage": "<u4",
    "UInt64Storage": "<u8",
}

# torch dtypes pickled by name (``torch.float16`` in an AMP checkpoint) -> NumPy dtypes
_TORCH_DTYPES = {
    "float32": "float32", "float": "float32", "float64": "float64", "double": "float64",
    "float16": "float16", "half": "float16", "bfloat16": "float32", "int64": "int64",
    "long": "int64", "int32": "int32", "int": "int32", "int16": "int16", "short": "int16",
    "int8": "int8", "uint8": "uint8", "uint16": "uint16", "uint32": "uint32",
    "uint64": "uint64", "bool": "bool", "complex64": "complex64", "cfloat": "complex64",
    "complex128": "complex128", "cdouble": "complex128",
}

#: torch dtypes NumPy has no dtype for (a tensor of one is a CheckpointError)
_NO_NUMPY_DTYPES = ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
                    "float8_e8m0fnu", "float4_e2m1fn_x2", "complex32", "chalf", "qint8",
                    "quint8", "qint32", "quint4x2", "quint2x4", "bits8", "bits16")


class _NoNumpyDtype:
    """A torch dtype NumPy lacks, named in the checkpoint (``torch.float8_e4m3fn``)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


class _StorageType:
    """What a pickled ``torch.FloatStorage`` (etc.) global stands for: the dtype of the bytes."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


class _Storage:
    """One storage of the archive (``<name>/data/<key>``) as a flat NumPy array."""

    __slots__ = ("array", "bfloat16", "views", "pending", "typed")

    def __init__(self, array: numpy.ndarray, bfloat16: bool, pending: bool = False) -> None:
        self.array = array
        self.bfloat16 = bfloat16
        #: this (untyped) storage's bytes read as another dtype: dtype -> _Storage
        self.typed: dict[numpy.dtype, _Storage] = {}
        # a legacy file's storage, whose bytes follow the pickle: its tensors are views
        # until then, finished by read_torch_legacy
        self.pending = pending
        # (offset, size, stride) -> the array read: a tensor saved twice (tied weights)
        # comes back as one array, as torch.load gives such tensors one storage
        self.views: dict[tuple, numpy.ndarray] = {}


class _TensorClass:
    """``torch.Tensor`` / ``torch.nn.Parameter`` named as a type (``_rebuild_from_type_v2``)."""

    __slots__ = ()


def _rebuild_tensor(storage: _Storage, offset: int, size: Any, stride: Any,
                    *rest: Any) -> numpy.ndarray:
    """``torch._utils._rebuild_tensor(_v2)``: the view of ``storage`` a tensor is, copied."""
    del rest  # requires_grad, backward hooks, metadata: nothing to keep for an array
    if not isinstance(storage, _Storage):
        raise CheckpointError("load: a tensor in the checkpoint has no storage")
    flat = storage.array
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    seen = storage.views.get((int(offset), size, stride))
    if seen is not None:
        return seen
    item = flat.dtype.itemsize
    needed = int(offset) + 1 + sum((n - 1) * s for n, s in zip(size, stride)) \
        if all(size) else int(offset)
    if any(s < 0 for s in stride) or needed > flat.size:
        raise CheckpointError(f"load: a tensor of shape {size} runs past the end of its "
                              f"storage ({flat.size} elements)")
    view = numpy.lib.stride_tricks.as_strided(
        flat[int(offset):], shape=size, strides=tuple(s * item for s in stride),
        writeable=False)
    if storage.pending:
        storage.views[int(offset), size, stride] = view
        return view
    out = _finished(view, storage.bfloat16)
    storage.views[int(offset), size, stride] = out
    return out


def _finished(view: numpy.ndarray, bfloat16: bool) -> numpy.ndarray:
    """A tensor's own array (native byte order; bfloat16 bits widened to float32)."""
    out = numpy.array(view, dtype=view.dtype.newbyteorder("="))
    if bfloat16:  # bfloat16's 16 bits are the high half of a float32's
        out = (out.astype(numpy.uint32) << 16).view(numpy.float32)
    return out


def _rebuild_tensor_v3(big_endian: bool, storage: _Storage, offset: int, size: Any,
                       stride: Any, requires_grad: Any, hooks: Any, dtype: Any,
                       *rest: Any) -> numpy.ndarray:
    """``torch._utils._rebuild_tensor_v3``: a tensor of a newer dtype (uint16/32/64, float8)
    over an untyped (byte) storage, its dtype given."""
    if isinstance(dtype, _NoNumpyDtype):
        raise CheckpointError(f"load: a tensor has dtype torch.{dtype.name}, which NumPy "
                              "cannot hold (convert it in PyTorch first, e.g. to float32)")
    if not isinstance(storage, _Storage) or not isinstance(dtype, numpy.dtype):
        raise CheckpointError("load: a tensor in the checkpoint has no storage")
    dt = dtype.newbyteorder(">" if big_endian else "<")
    typed = storage.typed.get(dt)
    if typed is None:
        if storage.array.nbytes % dt.itemsize:
            raise CheckpointError(f"load: a {dtype} tensor's storage holds "
                                  f"{storage.array.nbytes} bytes, not a whole number of them")
        typed = storage.typed[dt] = _Storage(storage.array.view(dt), False, storage.pending)
    return _rebuild_tensor(typed, offset, size, stride, requires_grad, hooks, *rest)


def _rebuild_parameter(data: Any, *rest: Any) -> Any:
    """``torch._utils._rebuild_parameter(_with_state)``: a parameter is its array here."""
    del rest
    return data


def _rebuild_from_type_v2(func: Callable[..., Any], new_type: Any, args: Any,
                          state: Any) -> Any:
    """``torch._tensor._rebuild_from_type_v2``: a tensor (subclass) rebuilt by ``func``."""
    del new_type, state
    return func(*args)


def _device(kind: Any, index: Any = None) -> str:
    """``torch.device("cuda", 0)`` -> ``"cuda:0"``: funcgrad names devices by strings."""
    return str(kind) if index is None else f"{kind}:{int(index)}"


class UnpickledObject:
    """What ``nn.load(path, weights_only=False)`` gives for an object of a class (or a call
    of a function) the checkpoint names that funcgrad_nn does not rebuild, such as the
    ``argparse.Namespace`` of a training script's arguments or a Lightning checkpoint's
    hyper-parameters: a stand-in holding what the file says about it, the class or function
    never imported nor called. ``path`` is its import path, ``args`` the arguments it was
    built with, ``state`` its pickled state (usually the instance's ``__dict__``), ``items``
    and ``elements`` what was pickled into it as into a dict or a list; attributes of a dict
    ``state`` read through (``ck["args"].lr``).

    >>> from funcgrad_nn._torch_checkpoint import _stand_in
    >>> stand_in = _stand_in("argparse", "Namespace")()   # as pickle's NEWOBJ makes it
    >>> stand_in.__setstate__({"lr": 0.1}); stand_in.lr, stand_in
    (0.1, <argparse.Namespace (not rebuilt): {'lr': 0.1}>)
    """

    __module__ = "funcgrad_nn.serialization"  # its public home
    path = ""

    def __new__(cls, *args: Any, **kwargs: Any) -> UnpickledObject:
        obj = object.__new__(cls)
        d = obj.__dict__
        d["args"], d["kwargs"], d["state"] = args, kwargs, None
        d["items"], d["elements"] = {}, []
        return obj

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass  # __new__ kept the arguments

    def __setstate__(self, state: Any) -> None:
        self.__dict__["state"] = state

    def __setitem__(self, key: Any, value: Any) -> None:
        self.items[key] = value

    def __getitem__(self, key: Any) -> Any:
        return self.items[key]

    def append(self, value: Any) -> None:
        self.elements.append(value)

    def extend(self, values: Any) -> None:
        self.elements.extend(values)

    def __getattr__(self, name: str) -> Any:
        state = self.__dict__.get("state")
        if isinstance(state, tuple) and len(state) == 2 and isinstance(state[0], dict):
            state = state[0]  # (__dict__, __slots__ values)
        if isinstance(state, dict) and name in state:
            return state[name]
        raise AttributeError(f"{type(self).__name__} stand-in of {self.path} has no "
                             f"attribute {name!r} in its pickled state")

    def __repr__(self) -> str:
        d = self.__dict__
        shown = d["state"] if d["state"] is not None else (d["items"] or d["elements"]
                                                           or d["args"])
        return f"<{self.path} (not rebuilt): {shown!r}>"


_STAND_INS: dict[tuple[str, str], type] = {}


def _stand_in(module: str, name: str) -> type:
    """The :class:`UnpickledObject` subclass standing for ``module.name`` (one per name)."""
    key = (module, name)
    if key not in _STAND_INS:
        _STAND_INS[key] = type(name, (UnpickledObject,), {
            "__module__": "funcgrad_nn.serialization", "path": f"{module}.{name}",
            "__slots__": ()})
    return _STAND_INS[key]


def _reconstructor(cls: Any, base: Any, state: Any) -> Any:
    """``copyreg._reconstructor`` (protocol 0/1's way to make an instance): only a stand-in."""
    del base, state
    if isinstance(cls, type) and issubclass(cls, UnpickledObject):
        return cls.__new__(cls)
    raise pickle.UnpicklingError(f"copyreg._reconstructor of {cls!r}")


def _numpy_globals() -> dict[tuple[str, str], Any]:
    """NumPy's scalar, dtype and array rebuilders (a checkpoint's ``best_acc``, an array of
    metrics): they build from bytes and values already read by this reader, and call
    nothing else."""
    try:
        from numpy._core import multiarray
    except ImportError:  # NumPy 1
        from numpy.core import multiarray  # type: ignore[no-redef]
    table: dict[tuple[str, str], Any] = {("numpy", "dtype"): numpy.dtype,
                                         ("numpy", "ndarray"): numpy.ndarray}
    for mod in ("numpy.core.multiarray", "numpy._core.multiarray"):
        table[mod, "scalar"] = multiarray.scalar
        table[mod, "_reconstruct"] = multiarray._reconstruct
    return table


def _allowed() -> dict[tuple[str, str], Any]:
    table: dict[tuple[str, str], Any] = {
        ("collections", "OrderedDict"): collections.OrderedDict,
        ("collections", "Counter"): collections.Counter,
        ("builtins", "set"): set,
        ("builtins", "frozenset"): frozenset,
        ("builtins", "complex"): complex,
        ("builtins", "bytearray"): bytearray,
        ("builtins", "slice"): slice,
        ("_codecs", "encode"): codecs.encode,  # how protocol 2 pickles bytes
        ("torch._utils", "_rebuild_tensor"): _rebuild_tensor,
        ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor,
        ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
        ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter,
        ("torch._tensor", "_rebuild_from_type_v2"): _rebuild_from_type_v2,
        ("torch", "Tensor"): _TensorClass,
        ("torch.nn.parameter", "Parameter"): _TensorClass,
        ("torch", "device"): _device,
        ("torch", "Size"): tuple,
    }
    for name in _STORAGE_DTYPES:
        table["torch", name] = _StorageType(name)
        table["torch.storage", name] = _StorageType(name)
    for name, dt in _TORCH_DTYPES.items():
        table["torch", name] = numpy.dtype(dt)
    for name in _NO_NUMPY_DTYPES:
        table["torch", name] = _NoNumpyDtype(name)
    table.update(_numpy_globals())
    # protocol 2 pickles written by Python 2 name the builtins module __builtin__
    table.update({("__builtin__", name): v for (mod, name), v in list(table.items())
                  if mod == "builtins"})
    return table


_ALLOWED = _allowed()


class _Unpickler(pickle.Unpickler):
    """``data.pkl``'s reader: only :data:`_ALLOWED` names, storages from the archive."""

    def __init__(self, file: Any, archive: zipfile.ZipFile | None, prefix: str, where: str,
                 big_endian: bool, stand_ins: bool = False) -> None:
        super().__init__(file)
        self._archive, self._prefix, self._where = archive, prefix, where
        self._big = big_endian
        self._storages: dict[str, _Storage] = {}
        #: weights_only=False: other names become stand-ins (collected here), not errors
        self.stand_ins: set[str] | None = set() if stand_ins else None

    def _dtype(self, storage_type: _StorageType) -> tuple[numpy.dtype, bool]:
        kind = _STORAGE_DTYPES[storage_type.name]
        dt = numpy.dtype("<u2" if kind == "bfloat16" else kind)
        return (dt.newbyteorder(">") if self._big else dt), kind == "bfloat16"

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) == ("torch._utils", "_rebuild_tensor_v3"):
            return functools.partial(_rebuild_tensor_v3, self._big)
        found = _ALLOWED.get((module, name))
        if found is not None:
            return found
        if self.stand_ins is not None:
            if (module, name) in (("copyreg", "_reconstructor"), ("copy_reg", "_reconstructor")):
                return _reconstructor
            self.stand_ins.add(f"{module}.{name}")
            return _stand_in(module, name)
        raise CheckpointError(
            f"load: {self._where} is a PyTorch checkpoint that names {module}.{name}, which "
            "is not a tensor, a dtype or a container (torch.load(weights_only=True) refuses "
            "it too): load(path, weights_only=False) reads such objects as stand-ins "
            "(funcgrad_nn.serialization.UnpickledObject; nothing of the file's choosing is "
            "run), or save a state_dict (model.state_dict(), optimizer.state_dict()) "
            "instead of the object")

    def persistent_load(self, pid: Any) -> Any:
        if not (isinstance(pid, tuple) and len(pid) >= 3 and pid[0] in ("storage", b"storage")
                and isinstance(pid[1], _StorageType)):
            raise CheckpointError(f"load: {self._where}: unknown persistent id {pid!r}")
        if self._archive is None:
            return self._legacy_storage(pid)
        key = str(pid[2])
        if key not in self._storages:
            dt, bf16 = self._dtype(pid[1])
            try:
                raw = self._archive.read(f"{self._prefix}data/{key}")
            except KeyError:
                raise CheckpointError(f"load: {self._where} is truncated: storage {key} is "
                                      "missing from the archive") from None
            if len(raw) % dt.itemsize:
                raise CheckpointError(f"load: {self._where}: storage {key} holds "
                                      f"{len(raw)} bytes, not a whole number of {dt}")
            self._storages[key] = _Storage(numpy.frombuffer(raw, dt), bf16)
        return self._storages[key]

    def _legacy_storage(self, pid: tuple) -> _Storage:
        """The legacy format's ``('storage', type, key, location, numel, view)``: an empty
        storage now, its bytes read after the pickle (a view: a slice of its root)."""
        if len(pid) != 6:
            raise CheckpointError(f"load: {self._where}: unknown persistent id {pid!r}")
        _, storage_type, key, _, numel, view = pid
        dt, bf16 = self._dtype(storage_type)
        key = str(key)
        if key not in self._storages:
            self._storages[key] = _Storage(numpy.zeros(int(numel), dt), bf16, pending=True)
        root = self._storages[key]
        if view is None:
            return root
        view_key, offset, size = view
        if str(view_key) not in self._storages:
            self._storages[str(view_key)] = _Storage(
                root.array[int(offset):int(offset) + int(size)], bf16, pending=True)
        return self._storages[str(view_key)]

    def fill_legacy(self, file: Any, keys: Any) -> dict[int, numpy.ndarray]:
        """Read the storages' bytes that follow a legacy file's pickles (each an int64
        element count, then the elements) and return each tensor's finished array by the id
        of the view standing for it."""
        for key in keys:
            storage = self._storages.get(str(key))
            if storage is None:
                raise CheckpointError(f"load: {self._where}: storage {key} was not pickled")
            head = file.read(8)
            if len(head) < 8:
                raise CheckpointError(f"load: {self._where} is truncated: storage {key} is "
                                      "missing")
            n = int.from_bytes(head, "big" if self._big else "little", signed=True)
            raw = file.read(n * storage.array.dtype.itemsize)
            if n != storage.array.size or len(raw) != storage.array.nbytes:
                raise CheckpointError(f"load: {self._where} is truncated or corrupt: storage "
                                      f"{key} holds {len(raw)} bytes of {storage.array.nbytes}")
            storage.array[...] = numpy.frombuffer(raw, storage.array.dtype)
        storages = list(self._storages.values())
        storages += [t for s in storages for t in s.typed.values()]
        return {id(view): _finished(view, s.bfloat16)
                for s in storages for view in s.views.values()}


def _placed(obj: Any, place: Callable[[numpy.ndarray], Any],
            memo: dict[int, Any]) -> Any:
    """Every array of the loaded object through ``place`` (``map_location``), an array met
    twice placed once."""
    if isinstance(obj, numpy.ndarray):
        if id(obj) not in memo:
            memo[id(obj)] = place(obj)
        return memo[id(obj)]
    if isinstance(obj, dict):
        out = type(obj)() if isinstance(obj, (collections.OrderedDict,
                                              collections.Counter)) else {}
        for k, v in obj.items():
            out[k] = _placed(v, place, memo)
        if hasattr(obj, "_metadata"):  # a state_dict's per-module versions
            out._metadata = obj._metadata  # type: ignore[attr-defined]
        return out
    if isinstance(obj, list):
        return [_placed(v, place, memo) for v in obj]
    if type(obj) is tuple:
        return tuple(_placed(v, place, memo) for v in obj)
    return obj


#: the legacy (non-zip) format's first pickle, then its protocol version
_LEGACY_MAGIC, _LEGACY_PROTOCOL = 0x1950A86A20F9469CFC6C, 1001


def is_torch_legacy(head: bytes) -> bool:
    """True for ``torch.save(..., _use_new_zipfile_serialization=False)``'s format: a file
    opening with the pickle of its magic number."""
    return head[:15] == b"\x80\x02\x8a\nl\xfc\x9cF\xf9 j\xa8P\x19."


def _named(error: CheckpointError, where: str) -> CheckpointError:
    """``error`` naming the file (the rebuild functions raise without knowing it)."""
    message = str(error)
    if where not in message:
        return CheckpointError(message.replace("load: ", f"load: {where}: ", 1))
    return error


def _warn_stand_ins(reader: _Unpickler, where: str) -> None:
    if reader.stand_ins:
        warnings.warn(f"load: {where} holds objects funcgrad_nn does not rebuild "
                      f"({', '.join(sorted(reader.stand_ins))}): they load as "
                      "UnpickledObject stand-ins holding their pickled state",
                      UserWarning, stacklevel=4)


def read_torch_legacy(buf: bytes, where: str, place: Callable[[numpy.ndarray], Any],
                      stand_ins: bool = False) -> Any:
    """The object of a legacy ``torch.save`` file (four pickles, then the storages' bytes),
    arrays passed through ``place``: read with the same restricted reader."""
    import io

    f = io.BytesIO(buf)
    try:
        header = [_Unpickler(f, None, "", where, False).load() for _ in range(3)]
        if header[0] != _LEGACY_MAGIC or header[1] != _LEGACY_PROTOCOL:
            raise CheckpointError(f"load: {where} is not a PyTorch checkpoint (magic number "
                                  f"{header[0]!r}, protocol {header[1]!r})")
        info = header[2] if isinstance(header[2], dict) else {}
        reader = _Unpickler(f, None, "", where, not info.get("little_endian", True),
                            stand_ins)
        obj = reader.load()
        keys = _Unpickler(f, None, "", where, False).load()
        finished = reader.fill_legacy(f, keys)
    except CheckpointError as e:
        raise _named(e, where) from None
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, KeyError,
            AttributeError, IndexError) as e:
        raise CheckpointError(f"load: {where} is a corrupt PyTorch checkpoint "
                              f"({type(e).__name__}: {e})") from None
    _warn_stand_ins(reader, where)
    memo = {k: place(v) for k, v in finished.items()}
    return _placed(obj, place, memo)


def is_torch_zip(archive: zipfile.ZipFile) -> bool:
    """True for ``torch.save``'s zip layout (``<name>/data.pkl``)."""
    return any(n.endswith("data.pkl") for n in archive.namelist())


def read_torch_zip(archive: zipfile.ZipFile, where: str,
                   place: Callable[[numpy.ndarray], Any], stand_ins: bool = False) -> Any:
    """The object ``torch.save`` wrote into ``archive``, arrays passed through ``place``."""
    pkl = next(n for n in archive.namelist() if n.endswith("data.pkl"))
    prefix = pkl[:-len("data.pkl")]
    try:
        order = archive.read(prefix + "byteorder").decode().strip()
    except KeyError:
        order = "little"  # archives before the byteorder record were little-endian
    try:
        with archive.open(pkl) as fh:
            reader = _Unpickler(fh, archive, prefix, where, order == "big", stand_ins)
            obj = reader.load()
    except CheckpointError as e:
        raise _named(e, where) from None
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, KeyError,
            AttributeError, IndexError, zipfile.BadZipFile) as e:
        raise CheckpointError(f"load: {where} is a corrupt PyTorch checkpoint "
                              f"({type(e).__name__}: {e})") from None
    _warn_stand_ins(reader, where)
    return _placed(obj, place, {})
