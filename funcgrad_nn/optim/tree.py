"""optax's pytree arithmetic (``optax.tree``; ``optim.tree_utils`` holds the same functions
under optax.tree_utils' ``tree_``-prefixed names): leafwise sums, scalings, dot products,
norms and fills over any pytree of arrays.

>>> import numpy as np
>>> from funcgrad_nn.optim import tree
>>> t = {"a": np.array([3.0]), "b": np.array([0.0, 4.0])}
>>> float(tree.norm(t)), float(tree.norm(t, ord=1)), float(tree.vdot(t, t))
(5.0, 7.0, 25.0)
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import tree_util
from funcgrad_nn.optim._moments import (
    bias_correction,
    update_infinity_moment,
    update_moment,
    update_moment_per_elem_norm,
)
from funcgrad_nn.optim._state_utils import tree_get as get
from funcgrad_nn.optim._state_utils import tree_get_all_with_path as get_all_with_path
from funcgrad_nn.optim._state_utils import tree_map_params as map_params
from funcgrad_nn.optim._state_utils import tree_set as set  # noqa: A004 (optax.tree.set)
from funcgrad_nn.optim._transform import _cast as cast

__all__ = ["add", "sub", "mul", "div", "scale", "add_scale", "vdot", "sum", "max", "min",
           "size", "norm", "zeros_like", "ones_like", "full_like", "where", "clip", "cast",
           "conj", "real", "bias_correction", "update_moment", "update_moment_per_elem_norm",
           "update_infinity_moment", "get", "set", "get_all_with_path", "map_params"]

_builtin_sum = sum


def _reduce(f: Any, tree: Any, initializer: Any) -> Any:
    return functools.reduce(f, tree_util.tree_leaves(tree), initializer)


def add(tree_x: Any, tree_y: Any, *other_trees: Any) -> Any:
    """The leafwise sum of two or more trees.

    >>> import numpy as np
    >>> add({"a": np.array([1.0])}, {"a": np.array([2.0])}, {"a": np.array([3.0])})
    {'a': array([6.])}
    """
    return tree_util.tree_map(lambda *leaves: _builtin_sum(leaves), tree_x, tree_y, *other_trees)


def sub(tree_x: Any, tree_y: Any) -> Any:
    """``tree_x - tree_y`` leafwise.

    >>> import numpy as np
    >>> sub([np.array([3.0])], [np.array([1.0])])
    [array([2.])]
    """
    return tree_util.tree_map(lambda x, y: x - y, tree_x, tree_y)


def mul(tree_x: Any, tree_y: Any) -> Any:
    """``tree_x * tree_y`` leafwise.

    >>> import numpy as np
    >>> mul([np.array([3.0])], [np.array([2.0])])
    [array([6.])]
    """
    return tree_util.tree_map(lambda x, y: x * y, tree_x, tree_y)


def div(tree_x: Any, tree_y: Any) -> Any:
    """``tree_x / tree_y`` leafwise.

    >>> import numpy as np
    >>> div([np.array([3.0])], [np.array([2.0])])
    [array([1.5])]
    """
    return tree_util.tree_map(lambda x, y: x / y, tree_x, tree_y)


def scale(scalar: Any, tree: Any) -> Any:
    """``scalar * tree`` leafwise.

    >>> import numpy as np
    >>> scale(2.0, [np.array([1.0, 2.0])])
    [array([2., 4.])]
    """
    return tree_util.tree_map(lambda x: scalar * x, tree)


def add_scale(tree_x: Any, scalar: Any, tree_y: Any) -> Any:
    """``tree_x + scalar * tree_y`` leafwise (None leaves of ``tree_x`` stay None).

    >>> import numpy as np
    >>> add_scale([np.array([1.0])], 0.5, [np.array([4.0])])
    [array([3.])]
    """
    return tree_util.tree_map(lambda x, y: None if x is None else x + scalar * y, tree_x, tree_y,
                              is_leaf=lambda x: x is None)


def vdot(tree_x: Any, tree_y: Any) -> Any:
    """The sum over leaves of ``vdot`` (the first tree conjugated).

    >>> import numpy as np
    >>> float(vdot([np.array([1.0, 2.0])], [np.array([3.0, 4.0])]))
    11.0
    """
    dots = [fnp.vdot(fnp.reshape(x, (-1,)), fnp.reshape(y, (-1,)))
            for x, y in zip(tree_util.tree_leaves(tree_x), tree_util.tree_leaves(tree_y))]
    return functools.reduce(lambda a, b: a + b, dots, 0)


def sum(tree: Any) -> Any:  # noqa: A001 (optax's name)
    """The sum of every element of every leaf (0 for an empty tree).

    >>> import numpy as np
    >>> float(sum({"a": np.ones(2), "b": np.ones(3)}))
    5.0
    """
    return _reduce(lambda a, b: a + b, tree_util.tree_map(fnp.sum, tree), 0)


def max(tree: Any) -> Any:  # noqa: A001 (optax's name)
    """The largest element over all leaves (-inf for an empty tree; empty leaves skipped).

    >>> import numpy as np
    >>> float(max({"a": np.array([1.0, 5.0]), "b": np.array([3.0])}))
    5.0
    """
    leaves = [fnp.max(x) for x in tree_util.tree_leaves(tree) if fnp.size(x) > 0]
    return functools.reduce(fnp.maximum, leaves, -float("inf"))


def min(tree: Any) -> Any:  # noqa: A001 (optax's name)
    """The smallest element over all leaves (inf for an empty tree; empty leaves skipped).

    >>> import numpy as np
    >>> float(min({"a": np.array([1.0, 5.0]), "b": np.array([-3.0])}))
    -3.0
    """
    leaves = [fnp.min(x) for x in tree_util.tree_leaves(tree) if fnp.size(x) > 0]
    return functools.reduce(fnp.minimum, leaves, float("inf"))


def size(tree: Any) -> int:
    """The number of elements over all leaves.

    >>> import numpy as np
    >>> size({"a": np.ones((2, 3)), "b": np.ones(4)})
    10
    """
    return _builtin_sum(int(fnp.size(x)) for x in tree_util.tree_leaves(tree))


def _square(x: Any) -> Any:
    return fnp.real(x) ** 2 + fnp.imag(x) ** 2 if fnp.iscomplexobj(x) else x * x


def norm(tree: Any, ord: Any = None, squared: bool = False) -> Any:  # noqa: A002 (optax's name)
    """The norm of all leaves as one vector: ``ord`` None or 2 (Euclidean), 1, or ``inf``
    (``"inf"``/``"infinity"``); ``squared`` gives its square.

    >>> import numpy as np
    >>> float(norm([np.array([3.0, -4.0])], ord="inf")), float(norm([np.array([3.0, 4.0])], squared=True))
    (4.0, 25.0)
    """
    if ord is None or ord == 2:
        sq = _where_leaves(sum(tree_util.tree_map(_square, tree)))
        return fnp.asarray(sq if squared else fnp.sqrt(sq))
    if ord == 1:
        ret = sum(tree_util.tree_map(fnp.abs, tree))
    elif ord == float("inf") or ord in ("inf", "infinity"):
        ret = max(tree_util.tree_map(fnp.abs, tree))
    else:
        raise ValueError(f"Unsupported ord: {ord}")
    ret = _where_leaves(ret)
    return fnp.asarray(_square(ret) if squared else ret)


def _where_leaves(x: Any) -> Any:
    # NumPy reduces host arrays to NumPy scalars, which funcgrad places on the default device
    # (a GPU): the norm of host leaves stays on the host, where they are divided by it
    return np.asarray(x) if isinstance(x, np.generic) else x


def zeros_like(tree: Any, dtype: Any = None) -> Any:
    """Zeros shaped (and typed, unless ``dtype``) as each leaf.

    >>> import numpy as np
    >>> zeros_like({"a": np.ones(2)})
    {'a': array([0., 0.])}
    """
    return tree_util.tree_map(lambda x: fnp.zeros_like(x, dtype=dtype), tree)


def ones_like(tree: Any, dtype: Any = None) -> Any:
    """Ones shaped (and typed, unless ``dtype``) as each leaf.

    >>> import numpy as np
    >>> ones_like({"a": np.zeros(2)}, dtype=np.int32)
    {'a': array([1, 1], dtype=int32)}
    """
    return tree_util.tree_map(lambda x: fnp.ones_like(x, dtype=dtype), tree)


def full_like(tree: Any, fill_value: Any, dtype: Any = None) -> Any:
    """``fill_value`` shaped (and typed, unless ``dtype``) as each leaf.

    >>> import numpy as np
    >>> full_like([np.zeros(2)], 7.0)
    [array([7., 7.])]
    """
    return tree_util.tree_map(lambda x: fnp.full_like(x, fill_value, dtype=dtype), tree)


def where(condition: Any, tree_x: Any, tree_y: Any) -> Any:
    """``where(condition, x, y)`` leafwise.

    >>> import numpy as np
    >>> where(np.array(False), [np.array(1.0)], [np.array(2.0)])
    [array(2.)]
    """
    return tree_util.tree_map(lambda x, y: fnp.where(condition, x, y), tree_x, tree_y)


def clip(tree: Any, min_value: Any = None, max_value: Any = None) -> Any:
    """Each leaf clipped to ``[min_value, max_value]`` (either may be None).

    >>> import numpy as np
    >>> clip([np.array([-2.0, 0.5, 3.0])], -1.0, 1.0)
    [array([-1. ,  0.5,  1. ])]
    """
    return tree_util.tree_map(lambda g: fnp.clip(g, min_value, max_value), tree)


def conj(tree: Any) -> Any:
    """The complex conjugate of each leaf.

    >>> import numpy as np
    >>> conj([np.array([1 + 2j])])
    [array([1.-2.j])]
    """
    return tree_util.tree_map(fnp.conj, tree)


def real(tree: Any) -> Any:
    """The real part of each leaf.

    >>> import numpy as np
    >>> real([np.array([1 + 2j])])
    [array([1.])]
    """
    return tree_util.tree_map(fnp.real, tree)
