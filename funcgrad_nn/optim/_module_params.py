"""A Module as the ``params`` of the optax-style transformations.

``funcgrad_nn.grad`` returns a module of the model's class whose buffers, frozen parameters
and later names of a tied parameter are None, so its pytree has fewer leaves than the model's.
The transformations see every Module through its *parameter view* (the same None entries),
so ``tx.init(model)``, ``tx.update(nn.grad(loss)(model), state, model)`` and
``apply_updates(model, updates)`` line up: buffers (BatchNorm's running statistics, Dropout's
key) get no state and no update, as in Flax, where they live outside ``params``.
"""

from __future__ import annotations

from typing import Any

from funcgrad import tree_util
from funcgrad._cache import LRUCache
from funcgrad_nn.module import Module

# treedef -> the trainable mask of its leaves (walking key paths per step costs more than the
# update itself on small models)
_MASKS: LRUCache = LRUCache(64)


def _trainable_mask(mod: Module, treedef: Any) -> list[bool]:
    mask = _MASKS.get(treedef)
    if mask is None:
        mask = []
        for path, _ in tree_util.tree_flatten_with_path(mod)[0]:
            names = [getattr(k, "name", str(k)) for k in path]
            owner = mod.get_submodule(".".join(names[:-1]))
            mask.append(names[-1] in owner._parameters and names[-1] not in owner._frozen)
        _MASKS[treedef] = mask
    return mask


def _slots(mod: Module, dedupe: bool = True) -> tuple[list[Any], Any, list[bool]]:
    """``(leaves, treedef, first)``: ``first[i]`` says leaf i is a trainable parameter's first
    occurrence (with ``dedupe``, a tied array counts once, under its first trainable name, as
    in ``model.parameters()`` and ``nn.grad``; gradients are not deduplicated: two of them may
    be one array object without being tied)."""
    leaves, treedef = tree_util.tree_flatten(mod)
    mask = _trainable_mask(mod, treedef)
    seen: set[int] = set()
    first = []
    for leaf, m in zip(leaves, mask):
        keep = m and not (dedupe and id(leaf) in seen)
        if keep:
            seen.add(id(leaf))
        first.append(keep)
    return leaves, treedef, first


def params_view(tree: Any, dedupe: bool = True) -> Any:
    """``tree`` with a Module replaced by its parameter view (None at buffers, frozen
    parameters and, with ``dedupe``, repeated tied names), the shape of ``funcgrad_nn.grad``'s
    gradients; other trees unchanged. A view is its own view."""
    if not isinstance(tree, Module):
        return tree
    leaves, treedef, first = _slots(tree, dedupe)
    if all(first):
        return tree
    return tree_util.tree_unflatten(treedef, [x if f else None for x, f in zip(leaves, first)])


def merge_params(model: Module, new_view: Any) -> Module:
    """``model`` with its trainable parameters taken from ``new_view`` (a parameter view of
    it): buffers and frozen parameters kept, every name of a tied parameter given the new
    array."""
    leaves, treedef, first = _slots(model)
    new = tree_util.tree_leaves(new_view, is_leaf=lambda x: x is None)
    if len(new) != sum(first):
        raise ValueError(f"apply_updates: the updates have {len(new)} leaves for the "
                         f"{sum(first)} trainable parameters of {type(model).__name__}")
    by_id: dict[int, Any] = {}
    it = iter(new)
    for leaf, f in zip(leaves, first):
        if f:
            n = next(it)
            by_id[id(leaf)] = leaf if n is None else n
    return tree_util.tree_unflatten(treedef, [by_id.get(id(x), x) for x in leaves])
