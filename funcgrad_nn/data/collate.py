"""``default_collate``: stack a list of samples into a batch, ``torch.utils.data``'s rules.

Arrays are stacked on a new leading axis with the array's own module (CuPy data stays on the
GPU); NumPy scalars and Python bools/ints/floats become arrays; strings stay as given (a list,
or a tuple inside a nested column); dicts, namedtuples, dataclasses, lists and tuples (which
become lists, as in PyTorch) and other registered pytrees are collated field by field, to any
depth.

The leaf rules are a table, as PyTorch's (``torch.utils.data._utils.collate``):
:data:`default_collate_fn_map` maps an element type to ``fn(batch, *, collate_fn_map)``, and
:func:`collate` walks the containers and applies the table's rule for the first element's
type (its exact type, else the first key it is an instance of, in insertion order), so a
custom type is collated by registering a function, without rewriting the recursion.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Mapping, MutableMapping, MutableSequence, Sequence
from typing import Any

import numpy as np

from funcgrad import tree_util
from funcgrad.backend import is_array, xp_for

__all__ = ["default_collate", "default_convert", "collate", "default_collate_fn_map", "Array"]


class EmptyBatchError(ValueError, IndexError):
    """``default_collate([])`` (PyTorch fails indexing the first sample: IndexError)."""


class _ArrayMeta(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        return is_array(obj)


class Array(metaclass=_ArrayMeta):
    """The collate table's key for arrays of every backend funcgrad knows (NumPy, CuPy, the
    strict device): ``isinstance(x, Array)`` is ``funcgrad.backend.is_array(x)``, PyTorch's
    ``torch.Tensor``/``np.ndarray`` keys in one.

    >>> import numpy as np
    >>> isinstance(np.zeros(2), Array), isinstance(np.float32(1), Array)
    (True, False)
    """


def _python_scalars_dtype(batch: Sequence[Any]) -> np.dtype:
    """The dtype ``torch.tensor(batch)`` gives a batch whose first sample is a Python int or
    bool: bool if all are bools, int64 for ints, the default float dtype as soon as one is a
    Python float (NumPy scalars keep their precision), the matching complex dtype for a
    complex; anything else is a TypeError (never a silent truncation)."""
    from funcgrad_nn.init import get_default_dtype

    kinds = set()
    for x in batch:
        if isinstance(x, (bool, np.bool_)):
            kinds.add("b")
        elif isinstance(x, (int, np.integer)):
            kinds.add("i")
        elif isinstance(x, (float, np.floating)):
            kinds.add("f")
        elif isinstance(x, (complex, np.complexfloating)):
            kinds.add("c")
        else:
            raise TypeError("default_collate: a batch of numbers holds a "
                            f"{type(x).__name__} ({x!r})")
    if kinds == {"b"}:
        return np.dtype(np.bool_)
    if kinds <= {"b", "i"}:
        return np.dtype(np.int64)
    default = np.dtype(get_default_dtype())
    numpy_dtypes = [x.dtype for x in batch if isinstance(x, (np.floating, np.complexfloating))]
    if "c" in kinds:
        default = np.result_type(default, np.complex64)
    return np.result_type(default, *numpy_dtypes)


_CollateMap = dict[Any, Callable[..., Any]]


def collate_array_fn(batch: Sequence[Any], *, collate_fn_map: _CollateMap | None = None) -> Any:
    """Arrays: stacked on a new leading axis with their own module (PyTorch's
    ``collate_tensor_fn``/``collate_numpy_array_fn``); string/object arrays are a TypeError.

    >>> import numpy as np
    >>> collate_array_fn([np.zeros(2), np.ones(2)]).shape
    (2, 2)
    """
    elem = batch[0]
    if getattr(elem, "dtype", None) is not None and elem.dtype.kind in "OUSV":
        raise TypeError("default_collate: batch must contain arrays, numbers, dicts or "
                        f"lists; found an array of dtype {elem.dtype}")
    shapes = {tuple(getattr(s, "shape", ())) for s in batch}
    if len(shapes) > 1:
        raise RuntimeError(f"default_collate: stack expects each array to be equal size, "
                           f"but got shapes {sorted(shapes)}")
    xp = xp_for(*batch, what="default_collate")
    return xp.stack(batch)


def collate_numpy_scalar_fn(batch: Sequence[Any], *,
                            collate_fn_map: _CollateMap | None = None) -> Any:
    """NumPy bool/number scalars: one array, NumPy's promotion across the batch.

    >>> import numpy as np
    >>> collate_numpy_scalar_fn([np.float32(1), np.float32(2)])
    array([1., 2.], dtype=float32)
    """
    if batch[0].dtype.kind in "OV":
        raise TypeError("default_collate: batch must contain arrays, numbers, dicts or "
                        f"lists; found a NumPy scalar of dtype {batch[0].dtype}")
    return np.stack(batch)


def collate_int_fn(batch: Sequence[Any], *, collate_fn_map: _CollateMap | None = None) -> Any:
    """Python ints and bools: ``torch.tensor(batch)``'s dtype (bool, int64, or the default
    float dtype when a float is mixed in).

    >>> collate_int_fn([True, False]).dtype, collate_int_fn([1, 2.5]).dtype
    (dtype('bool'), dtype('float32'))
    """
    return np.asarray(batch, dtype=_python_scalars_dtype(batch))


def collate_float_fn(batch: Sequence[Any], *, collate_fn_map: _CollateMap | None = None) -> Any:
    """Python floats: float64, as ``torch.tensor(batch, dtype=torch.float64)``.

    >>> collate_float_fn([0.5, 1.5])
    array([0.5, 1.5])
    """
    return np.asarray(batch, dtype=np.float64)


def collate_complex_fn(batch: Sequence[Any], *,
                       collate_fn_map: _CollateMap | None = None) -> Any:
    """Python complex numbers: complex128 (PyTorch's collate has no rule for them).

    >>> collate_complex_fn([1j, 2.0 + 0j]).dtype
    dtype('complex128')
    """
    return np.asarray(batch, dtype=np.complex128)


def collate_str_fn(batch: Sequence[Any], *, collate_fn_map: _CollateMap | None = None) -> Any:
    """Strings and bytes: the batch as given (a list, or a tuple for a nested column).

    >>> collate_str_fn(["a", "b"])
    ['a', 'b']
    """
    return batch


#: The leaf rules of :func:`default_collate`, in lookup order (PyTorch's
#: ``default_collate_fn_map``); update it in place to change ``default_collate`` everywhere,
#: or pass an extended copy to :func:`collate`.
default_collate_fn_map: _CollateMap = {
    Array: collate_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,  # bools too: torch.tensor(batch) infers from every sample
    complex: collate_complex_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def _rule(elem: Any, collate_fn_map: _CollateMap) -> Callable[..., Any] | None:
    rule = collate_fn_map.get(type(elem))
    if rule is not None:
        return rule
    for key, fn in collate_fn_map.items():
        if isinstance(elem, key):
            return fn
    return None


def collate(batch: Sequence[Any], *, collate_fn_map: _CollateMap | None = None) -> Any:
    """Collate ``batch`` through its containers (dicts and other mappings, namedtuples,
    dataclasses, lists, tuples, registered pytrees), applying ``collate_fn_map``'s rule to
    each leaf column, as PyTorch's ``torch.utils.data._utils.collate.collate``. A rule is
    called as ``fn(column, collate_fn_map=collate_fn_map)``.

    >>> import numpy as np
    >>> class Box:
    ...     def __init__(self, v): self.v = v
    >>> rules = {**default_collate_fn_map, Box: lambda b, *, collate_fn_map: [x.v for x in b]}
    >>> collate([{"box": Box(1), "x": np.zeros(2)}, {"box": Box(2), "x": np.ones(2)}],
    ...         collate_fn_map=rules)["box"]
    [1, 2]
    """
    if len(batch) == 0:
        raise EmptyBatchError("default_collate: the batch is empty")
    elem = batch[0]
    if collate_fn_map is not None:
        rule = _rule(elem, collate_fn_map)
        if rule is not None:
            return rule(batch, collate_fn_map=collate_fn_map)

    def column(samples: Sequence[Any]) -> Any:
        return collate(samples, collate_fn_map=collate_fn_map)

    if isinstance(elem, Mapping):
        out = {k: column([d[k] for d in batch]) for k in elem}
        if type(elem) is dict:
            return out
        try:
            if isinstance(elem, MutableMapping):  # as PyTorch: a copy keeps e.g. a
                clone = copy.copy(elem)           # defaultdict's factory
                clone.update(out)
                return clone
            return type(elem)(out)
        except TypeError:
            return out
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(column(s) for s in zip(*batch)))
    if dataclasses.is_dataclass(elem) and not isinstance(elem, type):
        fields = [f.name for f in dataclasses.fields(elem) if f.init]
        return type(elem)(**{f: column([getattr(s, f) for s in batch]) for f in fields})
    if isinstance(elem, Sequence):
        size = len(elem)
        if any(len(s) != size for s in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [column(s) for s in zip(*batch)]
        if isinstance(elem, tuple):
            return columns  # PyTorch returns tuples as lists
        try:
            if type(elem) is not list and isinstance(elem, MutableSequence):
                clone = copy.copy(elem)  # as PyTorch: a copy of the first sample, item by item
                for i, c in enumerate(columns):
                    clone[i] = c
                return clone
            return type(elem)(columns)
        except TypeError:
            return columns
    leaves, treedef = tree_util.tree_flatten(elem)
    if elem is None or (treedef.num_leaves == 1 and leaves and leaves[0] is elem):
        raise TypeError(
            "default_collate: batch must contain arrays, numbers, strings, dicts, lists or "
            f"pytrees; found {type(elem).__name__}"
        )
    columns = [tree_util.tree_leaves(s) for s in batch]
    return tree_util.tree_unflatten(treedef, [column(c) for c in zip(*columns)])


def default_collate(batch: Sequence[Any]) -> Any:
    """Stack a list of samples into a batch: :func:`collate` with
    :data:`default_collate_fn_map`.

    >>> import numpy as np
    >>> default_collate([{"x": np.zeros(2), "y": 1}, {"x": np.ones(2), "y": 0}])["y"]
    array([1, 0])
    >>> default_collate([(np.zeros(2), "a"), (np.ones(2), "b")])[1]
    ('a', 'b')
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)


def default_convert(data: Any) -> Any:
    """What the loader applies to each sample when batching is off (``batch_size=None``),
    PyTorch's rules: NumPy scalars become 0-d arrays, tuples become lists (namedtuples stay),
    dicts and lists are converted item by item; arrays, strings and Python numbers pass
    through.

    >>> import numpy as np
    >>> default_convert((np.float32(1.5), {"a": 1}))
    [array(1.5, dtype=float32), {'a': 1}]
    """
    if isinstance(data, np.generic):
        return data if data.dtype.kind in "OUSV" else np.asarray(data)
    if is_array(data) or isinstance(data, (str, bytes)):
        return data
    if isinstance(data, Mapping):
        converted = {k: default_convert(v) for k, v in data.items()}
        if isinstance(data, MutableMapping):
            clone = copy.copy(data)
            clone.update(converted)
            return clone
        try:
            return type(data)(converted)
        except TypeError:
            return converted
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]  # as PyTorch
    if isinstance(data, Sequence):
        items = [default_convert(d) for d in data]
        if isinstance(data, MutableSequence):
            clone = copy.copy(data)
            for i, d in enumerate(items):
                clone[i] = d
            return clone
        try:
            return type(data)(items)
        except TypeError:
            return items
    return data
