"""``save``/``load`` of state dicts (and nested dicts/lists of arrays) as NumPy ``.npz``.

Arrays go into the archive as ``a0, a1, ...``; the nesting (dict keys, lists, tuples,
Python scalars, strings, None) is stored as JSON in ``__structure__``. No pickle is used, so
loading an untrusted file cannot run code. Saving a path is atomic: the archive is written
to a temporary file in the same directory, flushed to disk, then ``os.replace``-d over the
target, so a crash never leaves a truncated checkpoint.

>>> import os, tempfile, numpy as np, funcgrad_nn as nn
>>> m = nn.Linear(2, 2)
>>> path = os.path.join(tempfile.mkdtemp(), "model.npz")
>>> nn.save(m.state_dict(), path)
>>> sd = nn.load(path)
>>> list(sd), bool((sd["weight"] == m.weight).all())
(['weight', 'bias'], True)
"""

from __future__ import annotations

import collections
import io
import json
import os
import tempfile
from typing import Any

import numpy

import funcgrad

__all__ = ["load", "save"]

_FORMAT = "funcgrad_nn.save/1"


def _encode(obj: Any, arrays: list[numpy.ndarray]) -> Any:
    if hasattr(obj, "shape") and hasattr(obj, "dtype") and not isinstance(obj, numpy.generic):
        arrays.append(numpy.asarray(funcgrad.to_numpy(obj)))
        return {"t": "array", "i": len(arrays) - 1}
    if isinstance(obj, numpy.generic):
        arrays.append(numpy.asarray(obj))
        return {"t": "scalar", "i": len(arrays) - 1}
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return {"t": "py", "v": obj}
    if isinstance(obj, dict):
        items = []
        for k, v in obj.items():
            if isinstance(k, bool) or not isinstance(k, (str, int)):
                raise TypeError(f"save: dict keys must be str or int, got {k!r}")
            items.append([k, _encode(v, arrays)])
        kind = "odict" if isinstance(obj, collections.OrderedDict) else "dict"
        return {"t": kind, "items": items}
    if isinstance(obj, (list, tuple)):
        return {"t": "list" if isinstance(obj, list) else "tuple",
                "items": [_encode(v, arrays) for v in obj]}
    raise TypeError(f"save: cannot store an object of type {type(obj).__name__} (supported: "
                    "arrays, dict/list/tuple nesting, Python scalars, str, None)")


def _decode(node: Any, archive: Any, device: str | None) -> Any:
    t = node["t"]
    if t == "array":
        a = archive[f"a{node['i']}"]
        return funcgrad.device_put(a, device) if device not in (None, "cpu") else a
    if t == "scalar":
        return archive[f"a{node['i']}"][()]
    if t == "py":
        return node["v"]
    if t in ("dict", "odict"):
        cls = collections.OrderedDict if t == "odict" else dict
        return cls((k, _decode(v, archive, device)) for k, v in node["items"])
    if t in ("list", "tuple"):
        seq = [_decode(v, archive, device) for v in node["items"]]
        return seq if t == "list" else tuple(seq)
    raise ValueError(f"load: corrupt structure entry {t!r}")


def save(obj: Any, f: str | os.PathLike | Any) -> None:
    """Save a state dict (or a Module's ``state_dict()``, or a nested dict/list of arrays)
    to ``f`` (a path, written atomically, or a binary file object).

    >>> import io, numpy as np
    >>> buf = io.BytesIO(); save({"w": np.ones(2)}, buf); _ = buf.seek(0)
    >>> load(buf)["w"]
    array([1., 1.])
    """
    from funcgrad_nn.module import Module

    if isinstance(obj, Module):
        obj = obj.state_dict()
    arrays: list[numpy.ndarray] = []
    structure = {"format": _FORMAT, "root": _encode(obj, arrays)}
    payload = {f"a{i}": a for i, a in enumerate(arrays)}
    payload["__structure__"] = numpy.array(json.dumps(structure))
    if not isinstance(f, (str, os.PathLike)):
        numpy.savez(f, **payload)
        return
    path = os.fspath(f)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-" + os.path.basename(path) + "-", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            numpy.savez(fh, **payload)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def load(f: str | os.PathLike | Any, map_location: str | None = None) -> Any:
    """Load what :func:`save` wrote (arrays on the host, or on ``map_location``).

    >>> import io, numpy as np
    >>> buf = io.BytesIO(); save([np.int64(3), "x", None], buf); _ = buf.seek(0)
    >>> load(buf)
    [np.int64(3), 'x', None]
    """
    if isinstance(f, (bytes, bytearray)):
        f = io.BytesIO(f)
    with numpy.load(f, allow_pickle=False) as archive:
        if "__structure__" not in archive.files:
            raise ValueError("load: not a funcgrad_nn checkpoint (no __structure__ entry)")
        structure = json.loads(str(archive["__structure__"][()]))
        if structure.get("format") != _FORMAT:
            raise ValueError(f"load: unknown checkpoint format {structure.get('format')!r}")
        return _decode(structure["root"], archive, map_location)
