"""``save``/``load`` of state dicts and whole training states as **safetensors** files.

Arrays are stored as safetensors tensors (the format the field exchanges weights in: a file
written here opens with ``safetensors.torch.load_file`` and vice versa); the nesting around
them (dicts with any hashable keys, lists, tuples, namedtuples (rebuilt as their class when
its module is imported), sets, Python scalars (complex too),
strings, bytes, None — optimizer and scheduler state, the step, RNG states) is JSON in the
file's metadata: what ``torch.load(weights_only=True)`` reads back. A flat state dict keeps its keys as the
tensor names, so ``model.safetensors`` written from PyTorch with
``safetensors.torch.save_file(model.state_dict(), path)`` loads straight into the funcgrad_nn
twin with ``load_state_dict(nn.load(path))``.

No pickle is written, and none is unpickled freely, so loading an untrusted file cannot run
code: ``torch.save``'s checkpoints (``model.pt``, zip or legacy) are read by a restricted reader that
knows only PyTorch's tensor rebuilders, dtypes and the builtin containers, as
``torch.load(weights_only=True)`` (see :mod:`funcgrad_nn._torch_checkpoint`). Saving a path is
atomic: the file is written to a temporary sibling, fsynced, then ``os.replace``-d over the
target (and the directory fsynced), so a crash or a kill never leaves a truncated checkpoint;
temporary files orphaned by a killed writer are removed by the next save of the same target.
Checkpoints in the older ``.npz`` layout still load.

>>> import os, tempfile, numpy as np, funcgrad_nn as nn
>>> m = nn.Linear(2, 2)
>>> path = os.path.join(tempfile.mkdtemp(), "model.safetensors")
>>> nn.save(m.state_dict(), path)
>>> sd = nn.load(path)
>>> list(sd), bool((sd["weight"] == m.weight).all())
(['weight', 'bias'], True)
"""

from __future__ import annotations

import base64
import collections
import io
import json
import os
import re
import struct
import sys
import tempfile
import time
import warnings
import zipfile
from collections.abc import Callable, Mapping
from typing import Any

import numpy
import safetensors
import safetensors.numpy

import funcgrad
from funcgrad.backend import canonical_device
from funcgrad_nn._torch_checkpoint import (
    CheckpointError,
    UnpickledObject,
    is_torch_legacy,
    is_torch_zip,
    read_torch_legacy,
    read_torch_zip,
)
from funcgrad_nn.module import Module, Parameter

__all__ = ["load", "save", "save_model", "load_model", "save_file", "load_file",
           "CheckpointError", "UnpickledObject"]

_FORMAT = "funcgrad_nn.save/2"
_NPZ_FORMAT = "funcgrad_nn.save/1"
_META_KEY = "funcgrad_nn"
# dtypes safetensors stores natively; complex128 travels as a float64 (..., 2) view.
_NATIVE = {numpy.dtype(t) for t in (
    "float64", "float32", "float16", "int64", "uint64", "int32", "uint32", "int16", "uint16",
    "int8", "uint8", "bool", "complex64")}
_STALE_TEMP_AGE_S = 3600.0  # a temp file without a live writer pid is stale after this


class MissingDirectoryError(FileNotFoundError, RuntimeError):
    """``save`` to a path whose directory does not exist (PyTorch: RuntimeError)."""


# -- encoding ---------------------------------------------------------------------------------

def _is_array(obj: Any) -> bool:
    return hasattr(obj, "shape") and hasattr(obj, "dtype") and not isinstance(obj, numpy.generic)


def _is_namedtuple_type(cls: Any) -> bool:
    return (isinstance(cls, type) and issubclass(cls, tuple)
            and isinstance(getattr(cls, "_fields", None), tuple)
            and all(isinstance(f, str) for f in cls._fields))


def _warn_user(message: str) -> None:
    # the decoder recurses to any depth: the warning points at the first frame outside here
    frame, level = sys._getframe(1), 2
    while frame is not None and frame.f_code.co_filename == __file__:
        frame, level = frame.f_back, level + 1
    warnings.warn(message, stacklevel=level - 1)


def _namedtuple_type(type_path: str, fields: list[str], n: int, where: str) -> Any:
    """The namedtuple class saved as ``module:qualname``, looked up among the modules already
    imported (loading never imports one: a file, however untrusted, cannot make it run a
    module's code); a class not found, not a namedtuple, or now of another length is replaced
    by a namedtuple of the saved name and fields built here, with a warning saying why."""
    module, _, qualname = type_path.partition(":")
    cls: Any = sys.modules.get(module)
    for part in qualname.split("."):
        cls = getattr(cls, part, None) if cls is not None and part != "<locals>" else None
    if _is_namedtuple_type(cls) and len(cls._fields) == n:
        return cls  # rebuilt positionally, as unpickling does (a renamed field still fits)
    if "<locals>" in qualname:
        why = "it was defined inside a function, where no import path reaches it"
    elif module not in sys.modules:
        why = f"its module {module!r} is not imported (import it before loading)"
    elif cls is None:
        why = f"module {module!r} has no {qualname!r}"
    else:
        why = f"{type_path} is now {cls!r}, not a namedtuple of {n} fields"
    _warn_user(f"load: {where}: the namedtuple type {type_path} comes back as a namedtuple of "
               f"the same name and fields built on the fly, because {why}")
    name = qualname.rpartition(".")[2]
    name = name if name.isidentifier() else "namedtuple"
    return collections.namedtuple(name, fields, rename=True)


def _encode(obj: Any, path: str, tensors: dict[str, numpy.ndarray],
            seen: dict[int, str]) -> Any:
    """The JSON structure node of ``obj``, its arrays added to ``tensors``. ``seen`` maps
    the id of each array object stored to its tensor name: an array met again (the same
    object under two keys, as torch.save keeps shared storage) is stored again under its own
    name, for readers of the plain safetensors file, and marked to load as the same object."""
    if _is_array(obj) or isinstance(obj, numpy.generic):
        a = numpy.asarray(obj if isinstance(obj, numpy.generic) else funcgrad.to_numpy(obj))
        node: dict[str, Any] = {"t": "scalar" if isinstance(obj, numpy.generic) else "array"}
        if a.dtype == numpy.complex128:
            a, node["view"] = a.reshape(a.shape + (1,)).view(numpy.float64), "complex128"
        elif a.dtype.newbyteorder("=") in _NATIVE and a.dtype not in _NATIVE:
            a = a.astype(a.dtype.newbyteorder("="))  # big-endian input: store little-endian
        elif a.dtype not in _NATIVE:
            raise TypeError(f"save: cannot store the array at {path or '<root>'!r} of dtype "
                            f"{a.dtype} (safetensors holds bool, (u)int8-64, float16-64, "
                            "complex64/128)")
        name = path or "tensor"
        while name in tensors:  # keys like "a.b" next to {"a": {"b": ...}}
            name += "#"
        tensors[name] = a if a.flags.c_contiguous else a.copy()  # keeps 0-d arrays 0-d
        node["k"] = name
        if node["t"] == "array":
            if id(obj) in seen:
                node["same"] = seen[id(obj)]
            else:
                seen[id(obj)] = name
        return node
    if obj is None or isinstance(obj, (bool, int, float, str)):
        if isinstance(obj, float) and not numpy.isfinite(obj):
            return {"t": "float", "v": repr(obj)}  # JSON has no inf/nan
        return {"t": "py", "v": obj}
    # the other builtins torch.load's weights_only unpickler accepts
    if isinstance(obj, complex):
        return {"t": "complex", "v": [repr(obj.real), repr(obj.imag)]}
    if isinstance(obj, bytes | bytearray):
        return {"t": type(obj).__name__, "v": base64.b64encode(bytes(obj)).decode("ascii")}
    if isinstance(obj, set | frozenset):
        return {"t": "set" if isinstance(obj, set) else "frozenset",
                "items": [_encode(v, f"{path}.{i}" if path else str(i), tensors, seen)
                          for i, v in enumerate(obj)]}
    if isinstance(obj, dict):
        items = []
        for k, v in obj.items():
            where = f"{path}.{k}" if path else str(k)
            if isinstance(k, bool) or not isinstance(k, (str, int)):
                # any other hashable key (a tuple, float, None...) as a structure node
                if _is_array(k):
                    raise TypeError(f"save: an array cannot be a dict key (at "
                                    f"{path or '<root>'!r})")
                items.append([_encode(k, where + "#key", tensors, seen),
                              _encode(v, where, tensors, seen), "node"])
                continue
            items.append([k, _encode(v, where, tensors, seen)])
        kind = ("odict" if isinstance(obj, collections.OrderedDict) else
                "counter" if isinstance(obj, collections.Counter) else "dict")
        node = {"t": kind, "items": items}
        metadata = getattr(obj, "_metadata", None)  # a state dict's module versions
        if isinstance(metadata, dict):
            node["meta"] = _encode(metadata, f"{path}._metadata" if path else "_metadata",
                                   tensors, seen)
        return node
    if isinstance(obj, tuple) and _is_namedtuple_type(type(obj)):
        cls = type(obj)
        return {"t": "namedtuple", "type": f"{cls.__module__}:{cls.__qualname__}",
                "fields": list(cls._fields),
                "items": [_encode(v, f"{path}.{f}" if path else f, tensors, seen)
                          for f, v in zip(cls._fields, obj)]}
    if isinstance(obj, (list, tuple)):
        return {"t": "list" if isinstance(obj, list) else "tuple",
                "items": [_encode(v, f"{path}.{i}" if path else str(i), tensors, seen)
                          for i, v in enumerate(obj)]}
    if isinstance(obj, Parameter):  # torch.save stores a Parameter's tensor; here its array
        return _encode(obj.data, path, tensors, seen)
    hint = ""
    if callable(getattr(obj, "state_dict", None)):  # torch.save pickles these whole
        hint = ("; save its state_dict() instead and load it back with load_state_dict "
                "(nothing is pickled here)")
    raise TypeError(f"save: cannot store an object of type {type(obj).__name__} at "
                    f"{path or '<root>'!r} (supported: arrays, dict/list/tuple/namedtuple/set nesting, "
                    f"Python scalars, str, bytes, None){hint}")


def _placement(map_location: Any) -> Callable[[numpy.ndarray], Any]:
    """What ``load`` does with each host array read, from ``torch.load``'s ``map_location``:
    None or "cpu" keeps it; a device ("cuda", "cuda:1", "strict", or any object printing as
    one, e.g. a ``torch.device``) moves it there; a dict maps the saved location, which is
    always "cpu" here (arrays are saved from the host), to a device; a callable is called as
    ``map_location(array, "cpu")`` and its result used (None keeps the array), as PyTorch
    calls it with each storage and its location."""
    if map_location is None:
        return lambda a: a
    if isinstance(map_location, dict):
        return _placement(map_location.get("cpu", "cpu"))
    if callable(map_location) and not isinstance(map_location, str):
        def place(a: numpy.ndarray) -> Any:
            out = map_location(a, "cpu")
            return a if out is None else out
        return place
    device = canonical_device(str(map_location))  # an unknown device fails here, early
    if device == "cpu":
        return lambda a: a
    return lambda a: funcgrad.device_put(a, device)


def _decode(node: Any, get: Any, place: Callable[[numpy.ndarray], Any], where: str,
            loaded: dict[str, Any] | None = None) -> Any:
    """The object of a structure node; ``loaded`` (tensor name -> array returned) gives an
    array saved twice (``"same"``, see :func:`_encode`) back as one object."""
    loaded = {} if loaded is None else loaded
    t = node.get("t") if isinstance(node, dict) else None
    if t in ("array", "scalar"):
        if node.get("same") in loaded:
            return loaded[node["same"]]
        a = get(node["k"] if "k" in node else f"a{node['i']}")
        if node.get("view") == "complex128":
            a = a.view(numpy.complex128).reshape(a.shape[:-1])
        if t == "scalar":
            return a[()]
        out = place(a)
        if "k" in node:
            loaded[node["k"]] = out
        return out
    if t == "py":
        return node["v"]
    if t == "float":
        return float(node["v"])
    if t == "complex":
        return complex(float(node["v"][0]), float(node["v"][1]))
    if t in ("bytes", "bytearray"):
        raw = base64.b64decode(node["v"])
        return raw if t == "bytes" else bytearray(raw)
    if t in ("set", "frozenset"):
        items = [_decode(v, get, place, where, loaded) for v in node["items"]]
        return set(items) if t == "set" else frozenset(items)
    if t in ("dict", "odict", "counter"):
        cls = collections.OrderedDict if t == "odict" else dict
        out = cls((_decode(item[0], get, place, where, loaded) if len(item) == 3 else item[0],
                   _decode(item[1], get, place, where, loaded)) for item in node["items"])
        if t == "counter":
            out = collections.Counter(out)
        if "meta" in node and isinstance(out, collections.OrderedDict):
            out._metadata = _decode(  # type: ignore[attr-defined]
                node["meta"], get, place, where, loaded)
        return out
    if t == "namedtuple":
        fields, type_path = node.get("fields"), node.get("type")
        if (not isinstance(type_path, str) or not isinstance(fields, list)
                or not all(isinstance(f, str) for f in fields)
                or len(fields) != len(node["items"])):
            raise CheckpointError(f"load: {where}: corrupt structure entry {node!r:.80}")
        cls = _namedtuple_type(type_path, fields, len(fields), where)
        return cls(*(_decode(v, get, place, where, loaded) for v in node["items"]))
    if t in ("list", "tuple"):
        seq = [_decode(v, get, place, where, loaded) for v in node["items"]]
        return seq if t == "list" else tuple(seq)
    raise CheckpointError(f"load: {where}: corrupt structure entry {node!r:.80}")


# -- saving -----------------------------------------------------------------------------------

def _temp_prefix(target: str) -> str:
    return f".tmp-{os.path.basename(target)}-"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


def _remove_stale_temps(target: str) -> None:
    # A writer killed between mkstemp and os.replace leaves its temp file behind; each temp
    # name carries its writer's pid, so a temp whose writer is gone is an orphan.
    directory = os.path.dirname(os.path.abspath(target))
    prefix = _temp_prefix(target)
    pattern = re.compile(re.escape(prefix) + r"(\d+)-[^-/]*$")
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        if not name.startswith(prefix):
            continue
        full = os.path.join(directory, name)
        m = pattern.match(name)
        try:
            if m is not None:
                stale = not _pid_alive(int(m.group(1)))
            else:  # older naming without a pid: only by age
                stale = time.time() - os.path.getmtime(full) > _STALE_TEMP_AGE_S
            if stale:
                os.unlink(full)
        except OSError:
            pass


def _fsync_dir(directory: str) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return  # e.g. Windows: directories cannot be opened
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _umask() -> int:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    old = os.umask(0o022)  # no /proc: read it the classic way
    os.umask(old)
    return old


def _file_mode(path: str) -> int:
    # mkstemp creates 0600 files; a checkpoint gets the target's mode, or the usual
    # 0666 & ~umask of a new file.
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        return 0o666 & ~_umask()


def save(obj: Any, f: str | os.PathLike | Any, pickle_module: Any = None,
         pickle_protocol: int = 2, _use_new_zipfile_serialization: bool = True,
         _disable_byteorder_record: bool = False) -> None:
    """Save a state dict (or a Module's ``state_dict()``, or a nested dict/list of arrays,
    scalars and strings) to ``f``: a path, written atomically, or a binary file object.
    ``torch.save``'s other arguments are accepted (``pickle_protocol`` and the private
    switches change nothing: nothing is pickled); a ``pickle_module`` is refused, as the file
    must load without unpickling.

    >>> import io, numpy as np
    >>> buf = io.BytesIO(); save({"w": np.ones(2)}, buf); _ = buf.seek(0)
    >>> load(buf)["w"]
    array([1., 1.])
    """
    if pickle_module is not None:
        raise TypeError("save(pickle_module=...): funcgrad_nn.save writes safetensors with "
                        "the nesting as JSON and never pickles; save plain state (arrays, "
                        "numbers, strings, dicts, lists) instead")
    del pickle_protocol, _use_new_zipfile_serialization, _disable_byteorder_record
    _save(obj, f, {})


def _save(obj: Any, f: str | os.PathLike | Any, extra_metadata: dict[str, str]) -> None:
    if isinstance(obj, Module):
        obj = obj.state_dict()
    tensors: dict[str, numpy.ndarray] = {}
    structure = {"format": _FORMAT, "root": _encode(obj, "", tensors, {})}
    # "format" says whose weight layout the tensors follow (Hugging Face loaders refuse a
    # file without "pt"/"tf"/"flax"/"mlx"): funcgrad_nn's are PyTorch's, names and shapes.
    # A caller's own "format" (save_file/save_model metadata) is kept, as safetensors does.
    metadata = {"format": "pt", **extra_metadata, _META_KEY: json.dumps(structure)}
    if not isinstance(f, (str, os.PathLike)):
        f.write(safetensors.numpy.save(tensors, metadata=metadata))
        return
    path = os.fspath(f)
    if os.path.islink(path):
        # Written through, as open(path, "wb") (torch.save) does: replacing the link itself
        # would leave e.g. latest.safetensors -> run3/ckpt.safetensors pointing at stale data.
        path = os.path.realpath(path)
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise MissingDirectoryError(f"save: parent directory {os.path.dirname(path)!r} of "
                                    f"{path!r} does not exist")
    _remove_stale_temps(path)
    fd, tmp = tempfile.mkstemp(prefix=f"{_temp_prefix(path)}{os.getpid()}-", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(safetensors.numpy.save(tensors, metadata=metadata))
            fh.flush()
            if hasattr(os, "fchmod"):
                os.fchmod(fh.fileno(), _file_mode(path))
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _fsync_dir(directory)


# -- loading ----------------------------------------------------------------------------------

def _pickle_refused(where: str) -> CheckpointError:
    return CheckpointError(
        f"load: {where} is a plain pickle checkpoint (pickle.dump), which funcgrad_nn does "
        "not unpickle (it could run code; torch.save's files are read, by a restricted "
        "reader); convert it once: safetensors.torch.save_file(state_dict, "
        "'model.safetensors') (or torch.save it), then nn.load that file")


def _check_safetensors(buf: bytes | None, size: int, head: bytes, where: str) -> dict:
    """Validate the safetensors header and data extent; return the parsed header."""
    if size < 8:
        raise CheckpointError(f"load: {where} is truncated or empty ({size} bytes; a checkpoint "
                              "starts with an 8-byte header length)")
    (n,) = struct.unpack("<Q", head[:8])
    if head[:1] == b"\x80" and head[8:9] != b"{":  # pickle's PROTO opcode: torch.save's
        raise _pickle_refused(where)              # legacy format, or pickle.dump
    if head[8:9] != b"{":
        raise CheckpointError(
            f"load: {where} is not a checkpoint: neither a safetensors file nor an .npz archive "
            f"(it starts with {head[:16]!r})")
    if 8 + n > size:
        raise CheckpointError(f"load: {where} is truncated: its safetensors header declares "
                              f"{n} bytes but only {size - 8} bytes follow")
    try:
        header = json.loads(head[8:8 + n])
    except ValueError as e:
        raise CheckpointError(f"load: {where} has a corrupt safetensors header ({e})") from None
    if not isinstance(header, dict):
        raise CheckpointError(f"load: {where} has a corrupt safetensors header (not an object)")
    data_size = size - 8 - n
    for name, info in header.items():
        if name == "__metadata__":
            continue
        try:
            begin, end = info["data_offsets"]
        except (TypeError, KeyError, ValueError):
            raise CheckpointError(f"load: {where}: corrupt header entry for tensor {name!r}"
                                  ) from None
        if end > data_size:
            raise CheckpointError(
                f"load: {where} is truncated: tensor {name!r} needs bytes {begin}..{end} of "
                f"the data section, which holds only {data_size} bytes")
    return header


# safetensors dtype names -> NumPy (little-endian), for files NumPy's reader refuses
_RAW_DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4",
               "I16": "<i2", "I8": "i1", "U64": "<u8", "U32": "<u4", "U16": "<u2", "U8": "u1",
               "BOOL": "?", "C64": "<c8", "BF16": "<u2"}


def _decode_raw(buf: bytes, header: dict, where: str) -> dict[str, numpy.ndarray]:
    """Every tensor of a safetensors file read from its bytes; bfloat16 (which NumPy lacks,
    e.g. PyTorch's ``.bfloat16()`` weights) becomes float32, exactly: its 16 bits are the
    high half of a float32's."""
    start = 8 + struct.unpack("<Q", buf[:8])[0]
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        kind = info.get("dtype")
        if kind not in _RAW_DTYPES:
            raise CheckpointError(f"load: {where}: tensor {name!r} has dtype {kind}, which "
                                  "NumPy cannot hold (convert it in PyTorch first, e.g. "
                                  "to float32)")
        begin, end = info["data_offsets"]
        a = numpy.frombuffer(buf, dtype=_RAW_DTYPES[kind], count=(end - begin) // numpy.dtype(
            _RAW_DTYPES[kind]).itemsize, offset=start + begin)
        if kind == "BF16":
            a = (a.astype(numpy.uint32) << 16).view(numpy.float32)
        out[name] = a.reshape(info["shape"]).astype(a.dtype.newbyteorder("="))
    return out


def _describe(f: Any) -> str:
    if isinstance(f, (str, os.PathLike)):
        return repr(os.fspath(f))
    name = getattr(f, "name", None)
    return repr(name) if isinstance(name, str) else "the file object"


def _load_npz(f: Any, where: str, place: Callable[[numpy.ndarray], Any],
              stand_ins: bool = False) -> Any:
    try:
        archive = numpy.load(f, allow_pickle=False)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as e:
        raise CheckpointError(f"load: {where} is a truncated or corrupt .npz archive ({e})"
                              ) from None
    with archive:
        if "__structure__" not in archive.files:
            if is_torch_zip(archive.zip):
                return read_torch_zip(archive.zip, where, place, stand_ins)
            raise CheckpointError(f"load: {where} is not a funcgrad_nn checkpoint (an .npz "
                                  "without a __structure__ entry)")
        try:
            structure = json.loads(str(archive["__structure__"][()]))
            if structure.get("format") != _NPZ_FORMAT:
                raise CheckpointError(f"load: {where}: unknown checkpoint format "
                                      f"{structure.get('format')!r}")

            def get(key: str) -> Any:
                return archive[key]
            return _decode(structure["root"], get, place, where)
        except (zipfile.BadZipFile, OSError, EOFError, KeyError) as e:
            raise CheckpointError(f"load: {where} is a truncated or corrupt .npz archive "
                                  f"({type(e).__name__}: {e})") from None


def load(f: str | os.PathLike | Any, map_location: Any = None, pickle_module: Any = None, *,
         weights_only: bool | None = True, mmap: bool | None = None,
         **pickle_load_args: Any) -> Any:
    """Load what :func:`save` wrote (or any safetensors file, as a dict name -> array), with
    arrays on the host or where ``map_location`` says, as ``torch.load``'s: a device
    (``"cpu"``, ``"cuda"``, ``"cuda:0"``, or an object printing as one), a dict from the saved
    location (always ``"cpu"``: arrays are saved from the host) to a device, or a callable
    ``map_location(array, "cpu")`` whose result is used (None keeps the array).
    ``torch.save``'s checkpoints (``model.pt``/``.pth``, zip or legacy) are read too, by a restricted
    reader (PyTorch's tensors, dtypes and containers only, as ``torch.load(weights_only=True)``;
    any other object in the file is refused, never run; with ``weights_only=False`` such
    objects, e.g. a script's ``argparse.Namespace``, load as
    :class:`~funcgrad_nn._torch_checkpoint.UnpickledObject` stand-ins holding their pickled
    state, their code still never run). ``mmap`` and ``torch.load``'s ``pickle_load_args``
    (``encoding=``) are accepted for PyTorch compatibility: the arrays are read into memory;
    a ``pickle_module`` is refused.

    >>> import io, numpy as np
    >>> buf = io.BytesIO(); save([np.int64(3), "x", None], buf); _ = buf.seek(0)
    >>> load(buf)
    [np.int64(3), 'x', None]
    >>> _ = buf.seek(0); load(buf, map_location=lambda storage, loc: storage)[0]
    np.int64(3)
    """
    if pickle_module is not None:
        raise TypeError("load(pickle_module=...): funcgrad_nn.load reads safetensors and never "
                        "unpickles")
    del mmap, pickle_load_args
    # torch.load's weights_only=False: objects of a torch checkpoint beyond tensors and
    # containers load as stand-ins (never their own code), where the default refuses them
    stand_ins = weights_only is False
    where = _describe(f)
    place = _placement(map_location)
    if isinstance(f, (bytes, bytearray)):
        f = io.BytesIO(f)
    if isinstance(f, (str, os.PathLike)):
        try:
            size = os.path.getsize(f)
            with open(f, "rb") as fh:
                head = fh.read(8)
                if head[:2] == b"PK":
                    fh.seek(0)
                    return _load_npz(fh, where, place, stand_ins)
                if len(head) == 8:
                    n = struct.unpack("<Q", head)[0]
                    head += fh.read(min(n, size))
        except FileNotFoundError:
            raise FileNotFoundError(f"load: no such checkpoint file: {where}") from None
        buf = None
    else:
        buf = f.read()
        size, head = len(buf), buf
        if head[:2] == b"PK":
            return _load_npz(io.BytesIO(buf), where, place, stand_ins)
    if is_torch_legacy(head):  # torch.save(..., _use_new_zipfile_serialization=False)
        if buf is None:
            with open(f, "rb") as fh:
                buf = fh.read()
        return read_torch_legacy(bytes(buf), where, place, stand_ins)
    header = _check_safetensors(buf, size, head, where)
    meta = header.get("__metadata__") or {}
    try:
        if any(isinstance(v, dict) and v.get("dtype") == "BF16" for v in header.values()):
            if buf is None:
                with open(f, "rb") as fh:
                    buf = fh.read()
            arrays = _decode_raw(buf, header, where)
        elif buf is None:
            with safetensors.safe_open(os.fspath(f), framework="numpy") as sf:
                arrays = {k: sf.get_tensor(k) for k in sf.keys()}  # noqa: SIM118
        else:
            arrays = safetensors.numpy.load(bytes(buf))
    except CheckpointError:
        raise
    except (safetensors.SafetensorError, KeyError, ValueError, TypeError) as e:
        raise CheckpointError(f"load: {where} is a corrupt safetensors file ({e})") from None

    def get(key: str) -> Any:
        try:
            a = arrays[key]
        except KeyError:
            raise CheckpointError(f"load: {where}: the structure names tensor {key!r}, which "
                                  "the file does not contain") from None
        return a if a.flags.writeable else a.copy()

    if _META_KEY not in meta:  # a plain safetensors file, e.g. exported from PyTorch
        ordered = sorted(arrays, key=lambda k: header[k]["data_offsets"][0])
        return collections.OrderedDict(
            (k, _decode({"t": "array", "k": k}, get, place, where)) for k in ordered)
    try:
        structure = json.loads(meta[_META_KEY])
    except ValueError as e:
        raise CheckpointError(f"load: {where}: corrupt structure metadata ({e})") from None
    if structure.get("format") != _FORMAT:
        raise CheckpointError(f"load: {where}: unknown checkpoint format "
                              f"{structure.get('format')!r}")
    return _decode(structure["root"], get, place, where)


# -- models with tied parameters (safetensors.torch.save_model / load_model) ------------------

def _tied_names(model: Any, preferred: Any = ()) -> dict[str, list[str]]:
    """For each array the model holds under several state-dict names (tied parameters, e.g.
    an embedding shared with the output layer), the name kept -> the other names, chosen as
    ``safetensors.torch`` does: the first in sorted order, or the first of ``preferred`` (the
    names a file holds) among them."""
    groups: dict[int, list[str]] = {}
    for name, value in model.state_dict(keep_vars=True).items():
        if _is_array(value):
            groups.setdefault(id(value), []).append(name)
    preferred = set(preferred)
    out = {}
    for names in groups.values():
        if len(names) < 2:
            continue
        chosen = preferred.intersection(names)
        keep = sorted(chosen or names)[0]
        out[keep] = [n for n in sorted(names) if n != keep]
    return out


def save_model(model: Any, filename: str | os.PathLike,
               metadata: dict[str, str] | None = None, force_contiguous: bool = False) -> None:
    """``safetensors.torch.save_model``: the model's state dict with each tied parameter
    stored once (safetensors files hold no shared tensors), each dropped name recorded in the
    metadata as ``{dropped: kept}`` (as there; ``metadata`` adds the caller's own strings,
    never overridden); written atomically as :func:`save`. ``force_contiguous`` is
    safetensors' option; arrays are always stored contiguous here. :func:`load_model` (or
    ``safetensors.torch.load_model`` on the PyTorch twin) restores all names.

    >>> import os, tempfile, funcgrad_nn as nn
    >>> lm = nn.Sequential(nn.Embedding(10, 4), nn.Linear(4, 10, bias=False))
    >>> lm[1].weight = lm[0].weight                      # tied input/output embeddings
    >>> path = os.path.join(tempfile.mkdtemp(), "lm.safetensors")
    >>> save_model(lm, path)
    >>> list(load(path))
    ['0.weight']
    """
    metadata = _check_metadata(metadata, "save_model")
    state = model.state_dict()
    for kept, dropped in _tied_names(model).items():
        for name in dropped:
            metadata.setdefault(name, kept)
            del state[name]
    _save(state, filename, metadata)


def _check_metadata(metadata: Any, fname: str) -> dict[str, str]:
    metadata = dict(metadata or {})
    for key, value in metadata.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise TypeError(f"{fname}: metadata must map str to str, got {key!r}: {value!r}")
    return metadata


def save_file(tensors: Mapping[str, Any], filename: str | os.PathLike,
              metadata: dict[str, str] | None = None) -> None:
    """``safetensors.torch.save_file``: a flat dict name -> array as a safetensors file, with
    the caller's ``metadata`` strings (read back with ``safetensors.safe_open(filename,
    "numpy").metadata()``); arrays on any device, written atomically as :func:`save`. The
    file opens with ``safetensors.torch.load_file`` and :func:`load_file`.

    >>> import os, tempfile, numpy as np, safetensors
    >>> path = os.path.join(tempfile.mkdtemp(), "w.safetensors")
    >>> save_file({"w": np.ones((2, 2), np.float32)}, path, metadata={"step": "10"})
    >>> load_file(path)["w"].shape
    (2, 2)
    >>> safetensors.safe_open(path, "numpy").metadata()["step"]
    '10'
    """
    if not isinstance(tensors, Mapping):
        raise TypeError(f"save_file: expected a dict name -> array, got "
                        f"{type(tensors).__name__}")
    for key, value in tensors.items():
        if not isinstance(key, str):
            raise TypeError(f"save_file: tensor names must be strings, got {key!r}")
        if not (hasattr(value, "shape") and hasattr(value, "dtype")):
            # safetensors.torch refuses a non-tensor value too; nn.save takes nested objects
            raise TypeError(f"save_file: {key!r} is a {type(value).__name__}, not an array "
                            "(use funcgrad_nn.save for nested state with Python values)")
    _save(dict(tensors), filename, _check_metadata(metadata, "save_file"))


def load_file(filename: str | os.PathLike, device: Any = "cpu") -> dict[str, Any]:
    """``safetensors.torch.load_file``: the arrays of a safetensors file (written here or by
    PyTorch's ``save_file``) as a dict name -> array on ``device`` (``load``'s
    ``map_location``).

    >>> import os, tempfile, numpy as np
    >>> path = os.path.join(tempfile.mkdtemp(), "w.safetensors")
    >>> save_file({"b": np.zeros(3, np.float32)}, path)
    >>> sorted(load_file(path))
    ['b']
    """
    out = load(filename, map_location=device)
    if not isinstance(out, Mapping) or not all(
            isinstance(k, str) and hasattr(v, "shape") for k, v in out.items()):
        raise CheckpointError(f"load_file: {_describe(filename)} holds nested state, not a "
                              "flat dict of arrays: read it with funcgrad_nn.load")
    return dict(out)


def load_model(model: Any, filename: str | os.PathLike, strict: bool = True,
               device: Any = "cpu") -> tuple[set[str], list[str]]:
    """``safetensors.torch.load_model``: load ``filename`` into ``model``, a tied parameter
    filled through whichever of its names the file holds (a file from ``save_model``, or
    a Hugging Face ``model.safetensors`` whose shared output embedding was left out), so
    no name is missing that the model ties to a loaded one. Returns ``(missing,
    unexpected)``; with ``strict`` either raises ``RuntimeError``. ``device`` is where the
    arrays are read to (``load``'s ``map_location``).

    >>> import os, tempfile, funcgrad_nn as nn
    >>> def make():
    ...     lm = nn.Sequential(nn.Embedding(10, 4), nn.Linear(4, 10, bias=False))
    ...     lm[1].weight = lm[0].weight
    ...     return lm
    >>> a, b = make(), make()
    >>> path = os.path.join(tempfile.mkdtemp(), "lm.safetensors")
    >>> save_model(a, path)
    >>> load_model(b, path)
    (set(), [])
    >>> bool((b[1].weight == a[0].weight).all()), b[1].weight is b[0].weight
    (True, True)
    """
    state = load(filename, map_location=device)
    if not isinstance(state, Mapping):
        raise CheckpointError(f"load_model: {_describe(filename)} holds a "
                              f"{type(state).__name__}, not a state dict")
    tied = _tied_names(model, preferred=state.keys())
    missing_keys, unexpected = model.load_state_dict(state, strict=False)
    missing = set(missing_keys)
    unexpected = list(unexpected)
    for names in tied.values():
        for name in names:
            if name in missing:
                missing.remove(name)
            else:  # the file holds both names of one array: the second one overwrote it
                unexpected.append(name)
    if strict and (missing or unexpected):
        error = f"Error(s) in loading state_dict for {type(model).__name__}:"
        if missing:
            error += "\n    Missing key(s) in state_dict: " + ", ".join(
                f'"{k}"' for k in sorted(missing))
        if unexpected:
            error += "\n    Unexpected key(s) in state_dict: " + ", ".join(
                f'"{k}"' for k in sorted(unexpected))
        raise RuntimeError(error)
    return missing, unexpected
