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
           "update_infinity_moment", "get", "set", "get_all_with_path", "map_params",
           "allclose", "batch_shape", "cast_like", "dtype", "random_like", "split_key_like",
           "unwrap_random_key_data"]

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


def allclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> Any:
    """Whether every pair of leaves is ``allclose`` (optax's ``tree.allclose``); a 0-d boolean
    array (traceable), True for empty trees.

    >>> import numpy as np
    >>> bool(allclose({"a": np.ones(2)}, {"a": np.ones(2) + 1e-9}))
    True
    """
    out = fnp.asarray(True)
    for x in tree_util.tree_leaves(tree_util.tree_map(
            lambda x, y: fnp.allclose(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan), a, b)):
        out = out & x
    return out


def batch_shape(tree: Any, shape: tuple[int, ...] = ()) -> Any:
    """Each leaf broadcast with leading ``shape`` axes (optax's ``tree.batch_shape``).

    >>> import numpy as np
    >>> batch_shape({"a": np.ones(3)}, (2,))["a"].shape
    (2, 3)
    """
    return tree_util.tree_map(lambda x: fnp.broadcast_to(x, (*shape, *fnp.shape(x))), tree)


def cast_like(tree: Any, other_tree: Any) -> Any:
    """``tree``'s leaves cast to the dtypes of ``other_tree``'s (leaves of ``other_tree``
    without a dtype leave theirs unchanged), optax's ``tree.cast_like``.

    >>> import numpy as np
    >>> cast_like({"a": np.ones(1)}, {"a": np.ones(1, np.float32)})["a"].dtype
    dtype('float32')
    """
    return tree_util.tree_map(lambda t, o: t.astype(o.dtype) if hasattr(o, "dtype") else t,
                              tree, other_tree)


def _lower_dtype(d1: Any, d2: Any) -> Any:
    p = fnp.promote_types(d1, d2)
    if p == d1:
        return d2
    if p == d2:
        return d1
    raise ValueError(f"Cannot compare dtype of dtype1={d1} and dtype2={d2}. Neither {d1} nor "
                     f"{d2} can be promoted to the other.")


def _higher_dtype(d1: Any, d2: Any) -> Any:
    return d2 if _lower_dtype(d1, d2) == d1 else d1


def dtype(tree: Any, mixed_dtype_handler: str | None = None) -> Any:
    """The dtype of the tree's leaves (optax's ``tree.dtype``): their common dtype (None:
    a ValueError naming the leaves that differ), or with ``mixed_dtype_handler`` the
    ``'promote'``-d, ``'highest'`` or ``'lowest'`` of them; the default float dtype for an
    empty tree.

    >>> import numpy as np
    >>> t = {"a": np.ones(1, np.float16), "c": np.ones(1, np.float32)}
    >>> dtype(t, "lowest"), dtype(t, "highest"), dtype({"a": np.ones(1)})
    (dtype('float16'), dtype('float32'), dtype('float64'))
    """
    leaves = tree_util.tree_leaves(tree)
    if not leaves:
        return fnp.asarray([]).dtype
    dtypes = [fnp.asarray(x).dtype for x in leaves]
    if mixed_dtype_handler is None:
        paths = tree_util.tree_leaves_with_path(tree)
        errs = [f"Expected dtype={dtypes[0]} for {tree_util.keystr(p)} but got {d}."
                for (p, _), d in zip(paths, dtypes) if d != dtypes[0]]
        if errs:
            raise ValueError("\n".join(errs))
        return dtypes[0]
    pick = {"promote": fnp.promote_types, "highest": _higher_dtype, "lowest": _lower_dtype}
    if mixed_dtype_handler not in pick:
        raise ValueError(f"Invalid value for mixed_dtype_handler={mixed_dtype_handler!r}, "
                         'possible values are: None, "promote", "highest", "lowest".')
    return np.dtype(functools.reduce(pick[mixed_dtype_handler], dtypes))


def split_key_like(rng_key: Any, target_tree: Any) -> Any:
    """One key per leaf of ``target_tree``, split from ``rng_key`` in leaf order (optax's
    ``tree.split_key_like``).

    >>> import numpy as np
    >>> from funcgrad import random
    >>> keys = split_key_like(random.key(0), {"a": np.ones(1), "b": np.ones(2)})
    >>> sorted(keys)
    ['a', 'b']
    """
    from funcgrad import random

    leaves, treedef = tree_util.tree_flatten(target_tree)
    keys = random.split(rng_key, len(leaves))
    return treedef.unflatten([keys[i] for i in range(len(leaves))])


def random_like(rng_key: Any, target_tree: Any, sampler: Any = None, dtype: Any = None) -> Any:
    """A tree shaped like ``target_tree`` of ``sampler(key, shape, dtype)`` draws, one split
    key per leaf (optax's ``tree.random_like``; ``sampler`` defaults to
    ``funcgrad.random.normal``, ``dtype`` to each leaf's). funcgrad.random's bits are not
    JAX's: the law and the key splitting are optax's, the draws are not its numbers.

    >>> import numpy as np
    >>> from funcgrad import random
    >>> t = random_like(random.key(0), {"w": np.zeros((2, 3), np.float32)})
    >>> t["w"].shape, t["w"].dtype
    ((2, 3), dtype('float32'))
    """
    from funcgrad import random

    sampler = random.normal if sampler is None else sampler
    keys = split_key_like(rng_key, target_tree)
    return tree_util.tree_map(lambda leaf, k: sampler(k, leaf.shape, dtype or leaf.dtype),
                              target_tree, keys)


def unwrap_random_key_data(input_tree: Any) -> Any:
    """Typed PRNG keys in a tree replaced by their raw ``key_data`` (for numerical
    comparison), other leaves unchanged (optax's ``tree.unwrap_random_key_data``).

    >>> from funcgrad import random
    >>> unwrap_random_key_data({"k": random.key(0), "x": 1.0})
    {'k': array([0, 0], dtype=uint32), 'x': 1.0}
    """
    from funcgrad import dtypes, random

    def unwrap(x: Any) -> Any:
        d = getattr(x, "dtype", None)
        if d is not None and dtypes.issubdtype(d, dtypes.prng_key):
            return random.key_data(x)
        return x

    return tree_util.tree_map(unwrap, input_tree)
