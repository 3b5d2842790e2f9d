"""The pytree functions under JAX's short names (``jax.tree``): ``funcgrad.tree.map`` is
:func:`funcgrad.tree_util.tree_map`, and so on. One implementation: these are the same
functions as in :mod:`funcgrad.tree_util`.

Example:
    >>> import funcgrad
    >>> funcgrad.tree.map(lambda x: x * 2, {"a": 1, "b": (2, 3)})
    {'a': 2, 'b': (4, 6)}
    >>> funcgrad.tree.leaves([1, (2, None)]), funcgrad.tree.reduce(max, [1, (5, 3)])
    ([1, 2], 5)
"""

from __future__ import annotations

import dataclasses as _dataclasses
from typing import Any as _Any

from funcgrad.tree_util import tree_all as all  # noqa: A004 (JAX's names)
from funcgrad.tree_util import tree_broadcast as broadcast
from funcgrad.tree_util import tree_flatten as flatten
from funcgrad.tree_util import tree_flatten_with_path as flatten_with_path
from funcgrad.tree_util import tree_leaves as leaves
from funcgrad.tree_util import tree_leaves_with_path as leaves_with_path
from funcgrad.tree_util import tree_map as map  # noqa: A004
from funcgrad.tree_util import tree_map_with_path as map_with_path
from funcgrad.tree_util import tree_reduce as reduce
from funcgrad.tree_util import tree_reduce_associative as reduce_associative
from funcgrad.tree_util import tree_structure as structure
from funcgrad.tree_util import tree_transpose as transpose
from funcgrad.tree_util import tree_unflatten as unflatten

__all__ = [
    "all",
    "broadcast",
    "flatten",
    "flatten_with_path",
    "leaves",
    "leaves_with_path",
    "map",
    "map_with_path",
    "reduce",
    "reduce_associative",
    "static",
    "structure",
    "transpose",
    "unflatten",
]


def static(**kwargs: _Any) -> _Any:
    """A dataclass field marked static (``jax.tree.static``): ``dataclasses.field(**kwargs)``
    with ``metadata={"static": True}`` added, which
    :func:`funcgrad.tree_util.register_dataclass` makes a meta field (part of the structure,
    not a leaf).

    Example:
        >>> import dataclasses, funcgrad
        >>> @funcgrad.tree_util.register_dataclass
        ... @dataclasses.dataclass
        ... class Op:
        ...     x: float
        ...     op: str = static(default="add")
        >>> funcgrad.tree.leaves(Op(1.0))
        [1.0]
    """
    metadata = dict(kwargs.pop("metadata", None) or {})
    metadata["static"] = True
    return _dataclasses.field(metadata=metadata, **kwargs)


# dir(funcgrad.tree) lists jax.tree's names only
del annotations
