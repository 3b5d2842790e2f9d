"""optax's tools for reading and editing optimizer states by name (``optax.tree_utils``'
``tree_get``, ``tree_set``, ``tree_get_all_with_path``, ``tree_map_params``): a field of a
namedtuple state (``count``, ``mu``, ``grad``...), a dict key, or a namedtuple's class name
is found wherever it sits in a chain's nested states, as the L-BFGS recipe reads
``tree_get(state, "count")`` in its ``while_loop`` condition.

>>> import numpy as np
>>> from funcgrad_nn import optim
>>> state = optim.adam(1.0).init(np.zeros(3))
>>> int(optim.tree_utils.tree_get(state, "count"))
0
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

from funcgrad import tree_util

__all__ = ["NamedTupleKey", "tree_get", "tree_get_all_with_path", "tree_map_params",
           "tree_set"]


@tree_util.register_pytree_node_class
class _ParamsPlaceholder:
    """What ``tree_map_params`` initialises an optimizer with, to find where the state holds
    copies of the parameter tree."""

    def tree_flatten(self) -> tuple[tuple[()], None]:
        return ((), None)

    @classmethod
    def tree_unflatten(cls, aux: Any, children: Any) -> _ParamsPlaceholder:
        del aux, children
        return cls()


@dataclasses.dataclass(frozen=True)
class NamedTupleKey:
    """A path entry for the field ``name`` of a namedtuple of class ``tuple_name`` (the
    paths :func:`tree_get_all_with_path` returns and ``filtering`` functions receive name
    the state type, so equal field names in a chain's states can be told apart).

    >>> str(NamedTupleKey("ScaleByAdamState", "mu"))
    'ScaleByAdamState.mu'
    """

    tuple_name: str
    name: str

    def __str__(self) -> str:
        return f"{self.tuple_name}.{self.name}"


def _is_named_tuple(x: Any) -> bool:
    return isinstance(x, tuple) and hasattr(x, "_fields")


def _node_has_keys(node: Any, keys: tuple[Any, ...]) -> bool:
    if _is_named_tuple(node):
        return any(k in node._fields for k in keys) or type(node).__name__ in keys
    return isinstance(node, dict) and any(k in node for k in keys)


def _leaves_with_named_tuple_path(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                                  ) -> list[tuple[tuple[Any, ...], Any]]:
    # tree_leaves_with_path, except that a namedtuple's fields are NamedTupleKey entries.
    stop = is_leaf or (lambda _: False)
    out: list[tuple[tuple[Any, ...], Any]] = []
    for path, node in tree_util.tree_leaves_with_path(
            tree, is_leaf=lambda x: stop(x) or _is_named_tuple(x)):
        if stop(node) or not _is_named_tuple(node):
            out.append((path, node))
            continue
        for field in node._fields:
            for child_path, child in _leaves_with_named_tuple_path(getattr(node, field), is_leaf):
                out.append(((*path, NamedTupleKey(type(node).__name__, field), *child_path),
                            child))
    return out


def _children_with_path(path: tuple[Any, ...], node: Any) -> list[tuple[tuple[Any, ...], Any]]:
    if _is_named_tuple(node):
        return [((*path, NamedTupleKey(type(node).__name__, f)), getattr(node, f))
                for f in node._fields]
    return [((*path, tree_util.DictKey(k)), v) for k, v in node.items()]


def _flatten_to_key(path: tuple[Any, ...], node: Any, key: Any) -> tuple[tuple[Any, ...], Any]:
    if _is_named_tuple(node):
        if key == type(node).__name__:
            return path, node
        return (*path, NamedTupleKey(type(node).__name__, key)), getattr(node, key)
    return (*path, tree_util.DictKey(key)), node[key]


def _get_all_with_path(tree: Any, key: Any) -> list[tuple[tuple[Any, ...], Any]]:
    has_key = functools.partial(_node_has_keys, keys=(key,))
    subtrees = [(p, n) for p, n in _leaves_with_named_tuple_path(tree, is_leaf=has_key)
                if has_key(n)]
    found = [_flatten_to_key(p, n, key) for p, n in subtrees]
    for path, subtree in subtrees:  # the key may also sit deeper, inside the match
        for child_path, child in _children_with_path(path, subtree):
            found += [((*child_path, *p), v) for p, v in _get_all_with_path(child, key)]
    return found


def tree_get_all_with_path(tree: Any, key: Any,
                           filtering: Callable[[tuple[Any, ...], Any], bool] | None = None
                           ) -> list[tuple[tuple[Any, ...], Any]]:
    """Every ``(path, value)`` in ``tree`` under ``key``: a dict key, a namedtuple field, or
    a namedtuple's class name; ``filtering(path, value)`` keeps only some (optax's).

    >>> import numpy as np
    >>> from funcgrad_nn import optim
    >>> state = optim.chain(optim.scale_by_adam(), optim.scale_by_adam()).init(np.zeros(1))
    >>> [str(p[-1]) for p, _ in tree_get_all_with_path(state, "count")]
    ['ScaleByAdamState.count', 'ScaleByAdamState.count']
    """
    found = _get_all_with_path(tree, key)
    if filtering:
        found = [(p, v) for p, v in found if filtering(p, v)]
    return found


def tree_get(tree: Any, key: Any, default: Any = None,
             filtering: Callable[[tuple[Any, ...], Any], bool] | None = None) -> Any:
    """The one value of ``tree`` under ``key`` (see :func:`tree_get_all_with_path`),
    ``default`` if there is none; a ``KeyError`` if there are several (optax's).

    >>> import numpy as np
    >>> from funcgrad_nn import optim
    >>> state = optim.adam(1.0).init(np.zeros(2))
    >>> tree_get(state, "mu"), tree_get(state, "missing", default=-1)
    (array([0., 0.]), -1)
    """
    found = tree_get_all_with_path(tree, key, filtering=filtering)
    if len(found) > 1:
        raise KeyError(f"Found multiple values for '{key}' in {tree}.")
    return found[0][1] if found else default


def _get_key(entry: Any) -> Any:
    for attr in ("key", "name", "idx"):
        if hasattr(entry, attr):
            return getattr(entry, attr)
    raise KeyError(f"Tree key '{entry}' of type '{type(entry)}' not valid.")


def tree_set(tree: Any, filtering: Callable[[tuple[Any, ...], Any], bool] | None = None,
             /, **kwargs: Any) -> Any:
    """A copy of ``tree`` with the values under each keyword's key replaced (namedtuple
    fields, dict keys, or whole namedtuples by class name); a ``KeyError`` names a key found
    nowhere (optax's).

    >>> import numpy as np
    >>> from funcgrad_nn import optim
    >>> state = optim.adam(1.0).init(np.zeros(2))
    >>> int(tree_get(tree_set(state, count=np.asarray(2)), "count"))
    2
    """
    for key in kwargs:
        if not tree_get_all_with_path(tree, key, filtering):
            raise KeyError(f"Found no values matching '{key}'"
                           + (" given the filtering operation" if filtering else "")
                           + f" in {tree}")
    has_any_key = functools.partial(_node_has_keys, keys=tuple(kwargs))

    def replace(path: tuple[Any, ...], node: Any) -> Any:
        if not has_any_key(node):
            return node
        if (_is_named_tuple(node) and type(node).__name__ in kwargs
                and (filtering is None or filtering(path, node))):
            return kwargs[type(node).__name__]
        children = {}
        for child_path, child in _children_with_path(path, node):
            key = _get_key(child_path[-1])
            if key in kwargs and (filtering is None or filtering(child_path, child)):
                children[key] = kwargs[key]
            elif isinstance(child, (dict, list, tuple)):
                children[key] = replace(child_path, child)
            else:
                children[key] = child
        return node._replace(**children) if _is_named_tuple(node) else children

    _, treedef = tree_util.tree_flatten(tree, is_leaf=has_any_key)
    leaves = _leaves_with_named_tuple_path(tree, is_leaf=has_any_key)
    return treedef.unflatten([replace(p, n) for p, n in leaves])


def tree_map_params(initable: Any, f: Callable[..., Any], state: Any, /, *rest: Any,
                    transform_non_params: Callable[..., Any] | None = None,
                    is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Apply ``f`` (with the leaves of ``rest``) to every copy of the parameter tree inside
    an optimizer ``state``; the other fields go through ``transform_non_params`` if given
    (optax's: ``initable`` is the optimizer or its ``init``).

    >>> import numpy as np
    >>> from funcgrad_nn import optim
    >>> opt = optim.adam(1.0)
    >>> state = opt.init({"w": np.zeros(2)})
    >>> specs = tree_map_params(opt, lambda p: p.shape, state, transform_non_params=lambda _: None)
    >>> specs[0].mu, specs[0].count
    ({'w': (2,)}, None)
    """
    placeholder = _ParamsPlaceholder()
    init = initable.init if hasattr(initable, "init") else initable
    with_placeholders = init(placeholder)

    def map_params(maybe_placeholder: Any, value: Any) -> Any:
        if isinstance(maybe_placeholder, _ParamsPlaceholder):
            return tree_util.tree_map(f, value, *rest, is_leaf=is_leaf)
        return value if transform_non_params is None else transform_non_params(value)

    return tree_util.tree_map(map_params, with_placeholders, state,
                              is_leaf=lambda v: isinstance(v, _ParamsPlaceholder))
