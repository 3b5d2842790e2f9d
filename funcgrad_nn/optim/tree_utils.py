"""optax.tree_utils' names: :mod:`funcgrad_nn.optim.tree`'s functions with the ``tree_``
prefix (``tree_l1_norm``, ``tree_l2_norm`` and ``tree_linf_norm`` are its norms), and
optax's state utilities ``tree_get``, ``tree_set``, ``tree_get_all_with_path``,
``tree_map_params`` (reading and editing optimizer states by field name).

>>> import numpy as np
>>> from funcgrad_nn.optim import tree_utils
>>> float(tree_utils.tree_l2_norm({"a": np.array([3.0, 4.0])}))
5.0
"""

from __future__ import annotations

from typing import Any

from funcgrad_nn.optim import tree as _tree
from funcgrad_nn.optim._state_utils import NamedTupleKey as NamedTupleKey
from funcgrad_nn.optim._state_utils import tree_get as tree_get
from funcgrad_nn.optim._state_utils import tree_get_all_with_path as tree_get_all_with_path
from funcgrad_nn.optim._state_utils import tree_map_params as tree_map_params
from funcgrad_nn.optim._state_utils import tree_set as tree_set

tree_add = _tree.add
tree_sub = _tree.sub
tree_mul = _tree.mul
tree_div = _tree.div
tree_scale = _tree.scale
tree_add_scale = _tree.add_scale
tree_vdot = _tree.vdot
tree_sum = _tree.sum
tree_max = _tree.max
tree_min = _tree.min
tree_size = _tree.size
tree_norm = _tree.norm
tree_zeros_like = _tree.zeros_like
tree_ones_like = _tree.ones_like
tree_full_like = _tree.full_like
tree_where = _tree.where
tree_clip = _tree.clip
tree_cast = _tree.cast
tree_conj = _tree.conj
tree_real = _tree.real
tree_bias_correction = _tree.bias_correction
tree_update_moment = _tree.update_moment
tree_update_moment_per_elem_norm = _tree.update_moment_per_elem_norm
tree_update_infinity_moment = _tree.update_infinity_moment
tree_allclose = _tree.allclose
tree_batch_shape = _tree.batch_shape
tree_cast_like = _tree.cast_like
tree_dtype = _tree.dtype
tree_random_like = _tree.random_like
tree_split_key_like = _tree.split_key_like
tree_unwrap_random_key_data = _tree.unwrap_random_key_data


def tree_l1_norm(tree: Any) -> Any:
    """The sum of absolute values over all leaves.

    >>> import numpy as np
    >>> float(tree_l1_norm([np.array([-1.0, 2.0])]))
    3.0
    """
    return _tree.norm(tree, ord=1)


def tree_l2_norm(tree: Any, squared: bool = False) -> Any:
    """The Euclidean norm of all leaves as one vector (``squared``: its square).

    >>> import numpy as np
    >>> float(tree_l2_norm([np.array([3.0, 4.0])], squared=True))
    25.0
    """
    return _tree.norm(tree, squared=squared)


def tree_linf_norm(tree: Any) -> Any:
    """The largest absolute value over all leaves.

    >>> import numpy as np
    >>> float(tree_linf_norm([np.array([-5.0, 2.0])]))
    5.0
    """
    return _tree.norm(tree, ord="inf")


__all__ = [n for n in dir() if n.startswith("tree_")] + ["NamedTupleKey"]
