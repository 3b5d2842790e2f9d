"""``default_collate``: stack a list of samples into a batch, ``torch.utils.data``'s rules.

Arrays are stacked on a new leading axis with the array's own module (CuPy data stays on the
GPU); NumPy scalars and Python bools/ints/floats become arrays; strings stay as given (a list, or a tuple inside a nested column); dicts,
namedtuples, dataclasses, lists and tuples (which become lists, as in PyTorch) and other
registered pytrees are collated field by field, to any depth.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping, MutableMapping, MutableSequence, Sequence
from typing import Any

import numpy as np

from funcgrad import tree_util
from funcgrad.backend import is_array, xp_for

__all__ = ["default_collate", "default_convert"]


class EmptyBatchError(ValueError, IndexError):
    """``default_collate([])`` (PyTorch fails indexing the first sample: IndexError)."""


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


def default_collate(batch: Sequence[Any]) -> Any:
    """Stack a list of samples into a batch.

    >>> import numpy as np
    >>> default_collate([{"x": np.zeros(2), "y": 1}, {"x": np.ones(2), "y": 0}])["y"]
    array([1, 0])
    >>> default_collate([(np.zeros(2), "a"), (np.ones(2), "b")])[1]
    ('a', 'b')
    """
    if len(batch) == 0:
        raise EmptyBatchError("default_collate: the batch is empty")
    elem = batch[0]
    if is_array(elem):
        if getattr(elem, "dtype", None) is not None and elem.dtype.kind in "OUSV":
            raise TypeError("default_collate: batch must contain arrays, numbers, dicts or "
                            f"lists; found an array of dtype {elem.dtype}")
        shapes = {tuple(s.shape) for s in batch}
        if len(shapes) > 1:
            raise RuntimeError(f"default_collate: stack expects each array to be equal size, "
                               f"but got shapes {sorted(shapes)}")
        xp = xp_for(*batch, what="default_collate")
        return xp.stack(batch)
    if isinstance(elem, np.generic):
        if elem.dtype.kind in "OUSV":
            return list(batch)
        return np.stack(batch)
    if isinstance(elem, int):  # bools too: torch.tensor(batch) infers from every sample
        return np.asarray(batch, dtype=_python_scalars_dtype(batch))
    if isinstance(elem, float):
        return np.asarray(batch, dtype=np.float64)
    if isinstance(elem, complex):
        return np.asarray(batch, dtype=np.complex128)
    if isinstance(elem, (str, bytes)):
        return batch  # as PyTorch: the list given, or a tuple of a nested column
    if isinstance(elem, Mapping):
        out = {k: default_collate([d[k] for d in batch]) for k in elem}
        if type(elem) is dict:
            return out
        if isinstance(elem, MutableMapping):  # as PyTorch: a copy keeps e.g. a defaultdict's
            clone = copy.copy(elem)           # factory, which type(elem)(out) would lose
            clone.update(out)
            return clone
        try:
            return type(elem)(out)
        except TypeError:
            return out
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(list(s)) for s in zip(*batch)))
    if dataclasses.is_dataclass(elem) and not isinstance(elem, type):
        fields = [f.name for f in dataclasses.fields(elem) if f.init]
        return type(elem)(**{f: default_collate([getattr(s, f) for s in batch])
                             for f in fields})
    if isinstance(elem, Sequence):
        size = len(elem)
        if any(len(s) != size for s in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [default_collate(s) for s in zip(*batch)]
        if isinstance(elem, tuple):
            return columns  # PyTorch returns tuples as lists
        if type(elem) is not list and isinstance(elem, MutableSequence):
            clone = copy.copy(elem)  # as PyTorch: a copy of the first sample, item by item
            for i, c in enumerate(columns):
                clone[i] = c
            return clone
        try:
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
    return tree_util.tree_unflatten(treedef, [default_collate(list(c)) for c in zip(*columns)])


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
