"""``ravel_pytree``: a pytree of arrays as one flat vector, and back.

It lives in the top layer because it computes with ``funcgrad.numpy`` when a leaf is traced,
so the flattening is recorded and derivatives, ``vmap`` and ``jit`` flow through it (as
``jax.flatten_util``). ``funcgrad.tree_util.ravel_pytree`` is the same function.

Example:
    >>> import numpy as np, funcgrad
    >>> flat, unravel = ravel_pytree({"a": np.ones(2), "b": 3.0})
    >>> flat.tolist(), unravel(flat)["b"].item()
    ([1.0, 1.0, 3.0], 3.0)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import tree_util
from funcgrad.backend import device_of, xp_for, xp_for_device
from funcgrad.core import Tracer
from funcgrad.tree_util import PyTreeDef

__all__ = ["ravel_pytree"]

_PY_SCALARS = (bool, int, float, complex)


class _LeafInfo(NamedTuple):
    shape: tuple[int, ...]
    dtype: Any
    size: int


def _unravel(
    treedef: PyTreeDef, infos: tuple[_LeafInfo, ...], total: int, flat: Any
) -> Any:
    shape = getattr(flat, "shape", None)
    if shape is None:
        flat = np.asarray(flat)
        shape = flat.shape
    if tuple(shape) != (total,):
        raise ValueError(
            f"unravel_pytree: expected a flat vector of size {total} (shape ({total},)), "
            f"got shape {tuple(shape)}")
    complex_input = np.issubdtype(flat.dtype, np.complexfloating)
    leaves = []
    offset = 0
    for info in infos:
        piece = flat[offset : offset + info.size].reshape(info.shape)
        if complex_input and not np.issubdtype(info.dtype, np.complexfloating):
            piece = piece.real
        leaves.append(piece.astype(info.dtype, copy=False))
        offset += info.size
    return treedef.unflatten(leaves)


def ravel_pytree(pytree: Any) -> tuple[Any, Callable[[Any], Any]]:
    """Flatten a pytree of arrays into one 1-D array, plus a function to undo it.

    The flat array has dtype ``numpy.result_type`` of all leaves (Python scalars
    count as weakly typed); an empty tree gives a float64 array of shape
    ``(0,)``.  ``unravel(flat)`` restores the structure, each leaf's shape and
    its dtype (cast back), and raises ``ValueError`` naming the expected and
    actual size if ``flat`` has the wrong shape.

    >>> import numpy as np
    >>> flat, unravel = ravel_pytree({"a": np.ones((2, 2), np.float32), "b": np.arange(2)})
    >>> flat.shape, flat.dtype
    ((6,), dtype('float64'))
    >>> restored = unravel(flat)
    >>> restored["a"].dtype, restored["b"].dtype, restored["a"].shape
    (dtype('float32'), dtype('int64'), (2, 2))
    """
    leaves, treedef = tree_util.tree_flatten(pytree)
    if not leaves:
        return np.zeros((0,), dtype=np.float64), functools.partial(_unravel, treedef, (), 0)
    # Collect distinct strong dtypes plus one representative per weak Python
    # scalar type; avoids numpy's limit on result_type's argument count.
    strong: dict[Any, None] = {}
    weak: dict[type, Any] = {}
    traced = False
    infos_l = []
    for leaf in leaves:
        t = type(leaf)
        if t in _PY_SCALARS:
            weak.setdefault(t, leaf)
            infos_l.append(_LeafInfo((), np.asarray(leaf).dtype, 1))
            continue
        if isinstance(leaf, Tracer):
            traced = True
            shape, dt = leaf.aval.shape, leaf.aval.dtype
        elif hasattr(leaf, "shape") and hasattr(leaf, "dtype"):
            # Arrays of any device (never copied to the host here).
            shape, dt = tuple(leaf.shape), np.dtype(leaf.dtype)
        else:
            a = np.asarray(leaf)
            shape, dt = a.shape, a.dtype
        strong[dt] = None
        infos_l.append(_LeafInfo(shape, dt, int(np.prod(shape, dtype=np.int64))))
    dtype = np.result_type(*strong, *weak.values())
    infos = tuple(infos_l)
    if traced:
        # funcgrad.numpy records the flattening, so derivatives and vmap flow through.
        dev = None
        for x in leaves:
            dev = (x.aval.device if isinstance(x, Tracer) else None) or device_of(x)
            if dev is not None:
                break
        # Python scalars join the arrays' device (not the default one).
        xs = [xp_for_device(dev).asarray(x) if dev is not None and type(x) in _PY_SCALARS
              else x for x in leaves]
        flat = fnp.concatenate([fnp.ravel(fnp.asarray(x)).astype(dtype) for x in xs])
    else:
        xp = xp_for(*leaves, what="ravel_pytree")
        flat = xp.concatenate([xp.asarray(x).reshape(-1).astype(dtype, copy=False)
                               for x in leaves])
    total = sum(i.size for i in infos)
    return flat, functools.partial(_unravel, treedef, infos, total)


# Its old home keeps working: funcgrad.tree_util.ravel_pytree (registered from here, the
# layer that can compute on traced values).
tree_util.ravel_pytree = ravel_pytree  # type: ignore[attr-defined]
