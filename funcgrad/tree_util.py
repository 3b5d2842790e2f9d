"""Pytrees: nested containers of arrays, and functions that work on them.

A *pytree* is a nested structure of containers whose non-container members are
*leaves*.  The container ("node") types are:

* ``None`` -- a node with no children (it is **not** a leaf),
* ``tuple`` and ``list`` -- children in sequence order,
* ``dict`` -- children in **sorted key order**; unflattening builds a ``dict``
  whose keys are in that sorted order.  Keys that cannot be sorted together
  (e.g. ``1`` and ``"a"``) fall back to sorting by ``(type name, repr(key))``,
* ``collections.OrderedDict`` -- children in insertion order,
* ``collections.defaultdict`` -- children in sorted key order; the
  ``default_factory`` is kept,
* namedtuples (any ``tuple`` subclass with a ``_fields`` attribute) -- children
  in field order,
* types registered with :func:`register_pytree_node`,
  :func:`register_pytree_with_keys`, :func:`register_pytree_node_class` or
  :func:`register_dataclass` -- children in the order their flatten function
  returns them,
* :class:`Partial` -- its positional arguments, then its keyword arguments.

Everything else (arrays, numbers, strings, subclasses of ``list`` or ``dict``
that are not registered, ...) is a leaf.  Type matching is by exact type.

Leaves always come out of :func:`tree_flatten` in the same deterministic
order: a depth-first, left-to-right walk where each node's children are
visited in the order listed above.

>>> leaves, treedef = tree_flatten({"b": (1, 2), "a": [3, None]})
>>> leaves
[3, 1, 2]
>>> treedef
PyTreeDef({'a': [*, None], 'b': (*, *)})
>>> tree_unflatten(treedef, [30, 10, 20])
{'a': [30, None], 'b': (10, 20)}

A :class:`PyTreeDef` stores the structure as a flat, post-order tuple of node
records; its hash is computed once when it is built, so treedefs are cheap to
use as cache keys.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import operator
import types
from collections.abc import Callable, Hashable, Iterable, Sequence
from contextvars import ContextVar
from typing import Any, TypeVar

__all__ = [
    "DictKey",
    "FlattenedIndexKey",
    "GetAttrKey",
    "KeyEntry",
    "KeyPath",
    "Partial",
    "PyTreeDef",
    "SequenceKey",
    "all_leaves",
    "broadcast_prefix",
    "default_registry",
    "flatten_one_level",
    "flatten_one_level_with_keys",
    "is_tree_node",
    "keystr",
    "register_dataclass",
    "register_pytree_node",
    "register_pytree_node_class",
    "register_pytree_with_keys",
    "register_pytree_with_keys_class",
    "register_array_leaf",
    "register_static",
    "tree_all",
    "tree_broadcast",
    "tree_flatten",
    "tree_flatten_with_path",
    "tree_leaves",
    "tree_leaves_with_path",
    "tree_map",
    "tree_map_with_path",
    "tree_reduce",
    "tree_reduce_associative",
    "tree_structure",
    "tree_transpose",
    "tree_unflatten",
    "transforms",
    "treedef_children",
    "treedef_is_leaf",
    "treedef_tuple",
]

T = TypeVar("T")
Leaf = Any
PyTree = Any
KeyEntry = Any
KeyPath = tuple[Any, ...]

# ---------------------------------------------------------------------------
# Key path entries
# ---------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class SequenceKey:
    """Key path entry for a child of a tuple or list.

    >>> str(SequenceKey(0))
    '[0]'
    """

    idx: int

    def __str__(self) -> str:
        return f"[{self.idx!r}]"


@dataclasses.dataclass(frozen=True)
class DictKey:
    """Key path entry for a child of a dict (or OrderedDict / defaultdict).

    >>> str(DictKey("a"))
    "['a']"
    """

    key: Hashable

    def __str__(self) -> str:
        return f"[{self.key!r}]"


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    """Key path entry for an attribute (namedtuple field, dataclass field, ...).

    >>> str(GetAttrKey("w"))
    '.w'
    """

    name: str

    def __str__(self) -> str:
        return f".{self.name}"


@dataclasses.dataclass(frozen=True)
class FlattenedIndexKey:
    """Key path entry for the i-th child of a custom node registered without keys.

    >>> str(FlattenedIndexKey(0))
    '[<flat index 0>]'
    """

    key: int

    def __str__(self) -> str:
        return f"[<flat index {self.key}>]"


def _simple_key_str(k: Any) -> str:
    if isinstance(k, SequenceKey):
        return str(k.idx)
    if isinstance(k, DictKey):
        return str(k.key)
    if isinstance(k, GetAttrKey):
        return k.name
    if isinstance(k, FlattenedIndexKey):
        return str(k.key)
    return str(k)


def keystr(keys: Sequence[Any], *, simple: bool = False, separator: str = "") -> str:
    """Render a key path as a string, as JAX's: the ``str`` of each entry (entries carry
    their own delimiters) or, with ``simple=True``, its bare key/index/name, joined with
    ``separator`` (nothing by default).

    >>> path = (DictKey("a"), SequenceKey(0), GetAttrKey("w"))
    >>> keystr(path)
    "['a'][0].w"
    >>> keystr(path, simple=True, separator=".")
    'a.0.w'
    >>> keystr(path, simple=True), keystr(path, separator="/")
    ('a0w', "['a']/[0]/.w")
    """
    if simple:
        return separator.join(_simple_key_str(k) for k in keys)
    return separator.join(str(k) for k in keys)


# ---------------------------------------------------------------------------
# Node kinds and the registry
# ---------------------------------------------------------------------------

_TUPLE, _LIST, _DICT, _NONE, _NAMEDTUPLE, _ODICT, _DDICT, _CUSTOM = range(8)


class _NodeKind:
    """How to flatten/unflatten one node type.  Compared and hashed by identity."""

    __slots__ = ("nodetype", "code", "flatten", "unflatten", "flatten_with_keys", "name",
                 "list_children", "array_leaf")

    def __init__(
        self,
        nodetype: type,
        code: int,
        flatten: Callable[[Any], tuple[Iterable[Any], Any]] | None,
        unflatten: Callable[[Any, Iterable[Any]], Any] | None,
        flatten_with_keys: Callable[[Any], tuple[Iterable[tuple[Any, Any]], Any]] | None,
    ) -> None:
        self.nodetype = nodetype
        self.code = code
        self.flatten = flatten
        self.unflatten = unflatten
        self.flatten_with_keys = flatten_with_keys
        self.name = getattr(nodetype, "__qualname__", repr(nodetype))
        # flatten_one_level gives the children as a list (JAX's native dataclass and static
        # nodes) rather than as the flatten function returns them
        self.list_children = False
        # an array type that is a leaf of the public functions and a node of the
        # transformations' view (register_array_leaf: typed PRNG keys)
        self.array_leaf = False

    def __repr__(self) -> str:
        return f"<pytree node kind {self.name}>"

    def __reduce__(self) -> tuple[Callable[..., _NodeKind], tuple]:
        # Kinds compare by identity: a pickled treedef refers to the registered kind of its
        # node type (the registration must exist where it is unpickled, as in JAX).
        return _registered_kind, (self.nodetype, self.code)


def _registered_kind(nodetype: type, code: int) -> _NodeKind:
    if code == _NAMEDTUPLE:
        return _NAMEDTUPLE_KIND
    kind = _registry.get(nodetype)
    if kind is None:
        raise ValueError(f"unpickling a PyTreeDef: {nodetype!r} is not a registered pytree "
                         "node type here (register it before unpickling)")
    return kind


def _namedtuple_flatten(x: tuple) -> tuple[tuple, type]:
    return x, type(x)


def _namedtuple_flatten_with_keys(x: Any) -> tuple[list[tuple[Any, Any]], type]:
    return [(GetAttrKey(f), v) for f, v in zip(x._fields, x)], type(x)


def _namedtuple_unflatten(aux: type, children: Iterable[Any]) -> Any:
    return aux(*children)


def _odict_flatten(x: collections.OrderedDict) -> tuple[list[Any], tuple]:
    return list(x.values()), tuple(x)


def _odict_flatten_with_keys(x: collections.OrderedDict) -> tuple[list[tuple[Any, Any]], tuple]:
    return [(DictKey(k), v) for k, v in x.items()], tuple(x)


def _odict_unflatten(aux: tuple, children: Iterable[Any]) -> collections.OrderedDict:
    return collections.OrderedDict(zip(aux, children))


def _ddict_flatten(x: collections.defaultdict) -> tuple[list[Any], tuple]:
    keys = _sorted_keys(x)
    return [x[k] for k in keys], (x.default_factory, keys)


def _ddict_flatten_with_keys(
    x: collections.defaultdict,
) -> tuple[list[tuple[Any, Any]], tuple]:
    keys = _sorted_keys(x)
    return [(DictKey(k), x[k]) for k in keys], (x.default_factory, keys)


def _ddict_unflatten(aux: tuple, children: Iterable[Any]) -> collections.defaultdict:
    factory, keys = aux
    return collections.defaultdict(factory, zip(keys, children))


def _sorted_keys(d: dict) -> tuple:
    try:
        return tuple(sorted(d))
    except TypeError as e:
        # As JAX's: a dict's children are in sorted key order, so keys that cannot be compared
        # with each other (1 and "a", None and "a") have no order to flatten in.
        raise ValueError(
            "Comparator raised exception while sorting pytree dictionary keys: the keys "
            f"{list(d)!r} cannot be ordered ({e}). Use keys of one comparable type, or an "
            "OrderedDict (flattened in insertion order)"
        ) from None


_TUPLE_KIND = _NodeKind(tuple, _TUPLE, None, None, None)
_LIST_KIND = _NodeKind(list, _LIST, None, None, None)
_DICT_KIND = _NodeKind(dict, _DICT, None, None, None)
_NONE_KIND = _NodeKind(type(None), _NONE, None, None, None)
_NAMEDTUPLE_KIND = _NodeKind(
    tuple, _NAMEDTUPLE, _namedtuple_flatten, _namedtuple_unflatten, _namedtuple_flatten_with_keys
)
_NAMEDTUPLE_KIND.name = "namedtuple"
_ODICT_KIND = _NodeKind(
    collections.OrderedDict, _ODICT, _odict_flatten, _odict_unflatten, _odict_flatten_with_keys
)
_DDICT_KIND = _NodeKind(
    collections.defaultdict, _DDICT, _ddict_flatten, _ddict_unflatten, _ddict_flatten_with_keys
)

_BUILTIN_KINDS = {
    tuple: _TUPLE_KIND,
    list: _LIST_KIND,
    dict: _DICT_KIND,
    type(None): _NONE_KIND,
    collections.OrderedDict: _ODICT_KIND,
    collections.defaultdict: _DDICT_KIND,
}

# Registered node types (built-ins plus user registrations): never shrinks.
_registry: dict[type, _NodeKind] = dict(_BUILTIN_KINDS)
# Exact type -> kind, or None for leaf types.  Filled lazily; may be reset.
_kind_cache: dict[type, _NodeKind | None] = dict(_registry)
_KIND_CACHE_LIMIT = 8192
_MISSING: Any = object()


def _resolve_kind(t: type) -> _NodeKind | None:
    kind = _registry.get(t)
    if kind is None and issubclass(t, tuple) and hasattr(t, "_fields"):
        kind = _NAMEDTUPLE_KIND
    if len(_kind_cache) >= _KIND_CACHE_LIMIT:
        _kind_cache.clear()
        _kind_cache.update(_registry)
    _kind_cache[t] = kind
    return kind


def _kind_of(t: type) -> _NodeKind | None:
    kind = _kind_cache.get(t, _MISSING)
    if kind is _MISSING:
        kind = _resolve_kind(t)
    if kind is not None and kind.array_leaf and not _nodes_view.get():
        return None
    return kind


def _raw_kind(t: type) -> _NodeKind | None:
    """The registered kind of ``t`` in either view (array leaves' kinds included)."""
    kind = _kind_cache.get(t, _MISSING)
    return _resolve_kind(t) if kind is _MISSING else kind


#: True inside the transformations' view of this module (:data:`transforms`): types
#: registered with :func:`register_array_leaf` are nodes there, leaves everywhere else.
_nodes_view: ContextVar[bool] = ContextVar("funcgrad_tree_nodes_view", default=False)


def _add_kind(nodetype: type, kind: _NodeKind) -> None:
    if not isinstance(nodetype, type):
        raise TypeError(f"pytree node type must be a class, got {nodetype!r}")
    if nodetype in _registry:
        raise ValueError(f"Duplicate pytree node type registration for {nodetype!r}")
    _registry[nodetype] = kind
    _kind_cache[nodetype] = kind


def register_pytree_node(
    nodetype: type[T],
    flatten_func: Callable[[T], tuple[Iterable[Any], Hashable]],
    unflatten_func: Callable[[Hashable, Iterable[Any]], T],
    flatten_with_keys_func: Callable[[T], tuple[Iterable[tuple[Any, Any]], Hashable]]
    | None = None,
) -> None:
    """Register a type as a pytree node.

    ``flatten_func(x)`` returns ``(children, aux_data)``; ``unflatten_func(aux_data,
    children)`` rebuilds the node.  ``aux_data`` should be hashable and comparable
    with ``==`` (it is part of the :class:`PyTreeDef`).  ``flatten_with_keys_func``
    (optional) returns ``([(key, child), ...], aux_data)`` and is used for key
    paths; without it children get :class:`FlattenedIndexKey` entries.
    Registering a type twice raises ``ValueError``.

    >>> class Pair:
    ...     def __init__(self, a, b):
    ...         self.a, self.b = a, b
    >>> register_pytree_node(Pair, lambda p: ((p.a, p.b), None), lambda _, c: Pair(*c))
    >>> tree_leaves(Pair(1, (2, 3)))
    [1, 2, 3]
    """
    _add_kind(nodetype, _NodeKind(nodetype, _CUSTOM, flatten_func, unflatten_func,
                                  flatten_with_keys_func))


def register_pytree_with_keys(
    nodetype: type[T],
    flatten_with_keys: Callable[[T], tuple[Iterable[tuple[Any, Any]], Hashable]],
    unflatten_func: Callable[[Hashable, Iterable[Any]], T],
    flatten_func: Callable[[T], tuple[Iterable[Any], Hashable]] | None = None,
) -> None:
    """Register a pytree node type whose children carry key path entries.

    ``flatten_with_keys(x)`` returns ``([(key, child), ...], aux_data)``.  If
    ``flatten_func`` is omitted it is derived from ``flatten_with_keys`` (a faster
    dedicated one can be passed for the hot path).

    >>> class Box:
    ...     def __init__(self, v):
    ...         self.v = v
    >>> register_pytree_with_keys(
    ...     Box, lambda b: ([(GetAttrKey("v"), b.v)], None), lambda _, c: Box(*c))
    >>> [keystr(p) for p, _ in tree_leaves_with_path({"x": Box(1.0)})]
    ["['x'].v"]
    """
    if flatten_func is None:

        def flatten_func(x: T) -> tuple[list[Any], Hashable]:
            keyed, aux = flatten_with_keys(x)
            return [c for _, c in keyed], aux

    register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys)


def register_pytree_node_class(cls: type[T]) -> type[T]:
    """Class decorator: register ``cls`` using its ``tree_flatten``/``tree_unflatten``.

    ``cls.tree_flatten(self)`` returns ``(children, aux_data)`` and the classmethod
    ``cls.tree_unflatten(aux_data, children)`` rebuilds an instance.

    >>> @register_pytree_node_class
    ... class Scaled:
    ...     def __init__(self, x, scale):
    ...         self.x, self.scale = x, scale
    ...     def tree_flatten(self):
    ...         return (self.x,), self.scale
    ...     @classmethod
    ...     def tree_unflatten(cls, aux, children):
    ...         return cls(children[0], aux)
    >>> tree_map(lambda v: v + 1, Scaled(1, 10)).x
    2
    """
    register_pytree_node(cls, operator.methodcaller("tree_flatten"), cls.tree_unflatten)
    return cls


def register_pytree_with_keys_class(cls: type[T]) -> type[T]:
    """Class decorator: register ``cls`` with key paths, using its ``tree_flatten_with_keys``
    (``([(key, child), ...], aux_data)``), classmethod ``tree_unflatten`` and, when it has one,
    ``tree_flatten`` (faster, without keys).

    >>> @register_pytree_with_keys_class
    ... class Vec:
    ...     def __init__(self, x, y):
    ...         self.x, self.y = x, y
    ...     def tree_flatten_with_keys(self):
    ...         return [(GetAttrKey("x"), self.x), (GetAttrKey("y"), self.y)], None
    ...     @classmethod
    ...     def tree_unflatten(cls, aux, children):
    ...         return cls(*children)
    >>> [keystr(p) for p, _ in tree_leaves_with_path(Vec(1, 2))]
    ['.x', '.y']
    """
    flatten = getattr(cls, "tree_flatten", None)
    register_pytree_with_keys(
        cls, operator.methodcaller("tree_flatten_with_keys"), cls.tree_unflatten,
        operator.methodcaller("tree_flatten") if flatten is not None else None)
    return cls


def register_static(cls: type[T]) -> type[T]:
    """Class decorator: instances of ``cls`` are pytree nodes without children, kept in the
    structure (so ``jit`` treats them as static: hashable, compared with ``==``), as JAX's.

    >>> @register_static
    ... class Config:
    ...     pass
    >>> c = Config()
    >>> tree_leaves([c, 1.0]), tree_unflatten(tree_structure(c), []) is c
    ([1.0], True)
    """
    register_pytree_node(cls, lambda x: ((), x), lambda aux, _: aux)
    _registry[cls].list_children = True
    return cls


def register_dataclass(
    nodetype: type[T] | None = None,
    data_fields: Sequence[str] | None = None,
    meta_fields: Sequence[str] | None = None,
    drop_fields: Sequence[str] = (),
) -> Any:
    """Register a (data)class as a pytree node with data (children) and meta (aux) fields.

    Use it as a bare decorator on a ``@dataclass``: fields declared with
    ``field(metadata={"static": True})`` become meta fields, all others data
    fields.  Or pass ``data_fields``/``meta_fields`` explicitly (if only one list
    is given for a dataclass, the other is the remaining fields), either as
    ``register_dataclass(nodetype, data_fields, meta_fields)`` or as a decorator
    factory ``@register_dataclass(data_fields=..., meta_fields=...)``.

    Unflattening builds the instance with ``object.__new__`` and
    ``object.__setattr__`` -- ``__init__``/``__post_init__`` are not called, so
    frozen dataclasses and validating constructors work.  Meta field values
    should be hashable.  Key path entries are ``GetAttrKey(field_name)``.
    ``drop_fields`` (dataclasses, as JAX's) names fields left out of the pytree;
    then (and whenever fields such as ``init=False`` ones are in neither list) the
    instance is built by calling the class with the other ``__init__`` fields, as JAX
    does, so ``__post_init__`` recomputes the fields left out (and dropped ``__init__``
    fields take their defaults).

    >>> from dataclasses import dataclass, field
    >>> @register_dataclass
    ... @dataclass(frozen=True)
    ... class Layer:
    ...     w: float
    ...     b: float
    ...     name: str = field(default="dense", metadata={"static": True})
    >>> leaves, treedef = tree_flatten(Layer(1.0, 2.0))
    >>> leaves
    [1.0, 2.0]
    >>> tree_unflatten(treedef, [3.0, 4.0])
    Layer(w=3.0, b=4.0, name='dense')
    """
    if nodetype is None:
        return functools.partial(register_dataclass, data_fields=data_fields,
                                 meta_fields=meta_fields, drop_fields=drop_fields)

    drop = tuple(drop_fields)
    if drop and not dataclasses.is_dataclass(nodetype):
        raise TypeError(f"register_dataclass({getattr(nodetype, '__qualname__', nodetype)!r}): "
                        "drop_fields applies to dataclasses only")
    if dataclasses.is_dataclass(nodetype):
        all_fields = [f for f in dataclasses.fields(nodetype) if f.name not in drop]
        unknown = sorted(set(drop) - {f.name for f in dataclasses.fields(nodetype)})
        if unknown:
            raise ValueError(f"register_dataclass({nodetype.__qualname__}): drop_fields {unknown} "
                             "are not fields of the dataclass")
        names = [f.name for f in all_fields]
        if data_fields is None and meta_fields is None:
            meta_fields = [f.name for f in all_fields if f.metadata.get("static", False)]
            data_fields = [f.name for f in all_fields if not f.metadata.get("static", False)]
        elif data_fields is None:
            data_fields = [n for n in names if n not in set(meta_fields)]  # type: ignore[arg-type]
        elif meta_fields is None:
            meta_fields = [n for n in names if n not in set(data_fields)]
        missing = {f.name for f in all_fields
                   if f.init and f.name not in set(data_fields) | set(meta_fields)}
        if missing:
            raise ValueError(
                f"register_dataclass({nodetype.__qualname__}): data_fields and meta_fields must "
                "include all dataclass fields with ``init=True``. Missing fields: "
                f"{missing}. Add them to drop_fields to suppress this error.")
    elif data_fields is None or meta_fields is None:
        raise TypeError(
            "register_dataclass: data_fields and meta_fields are required when nodetype is not "
            f"a dataclass. Got nodetype={nodetype!r}.")

    data = tuple(data_fields)
    meta = tuple(meta_fields)
    overlap = set(data) & set(meta)
    if overlap:
        raise ValueError("register_dataclass: data_fields and meta_fields must not overlap. "
                         f"Overlapping fields: {overlap}.")

    def _getter(names: tuple[str, ...]) -> Callable[[Any], tuple]:
        if not names:
            return lambda x: ()
        if len(names) == 1:
            g1 = operator.attrgetter(names[0])
            return lambda x: (g1(x),)
        return operator.attrgetter(*names)

    get_data = _getter(data)
    get_meta = _getter(meta)
    keys = tuple(GetAttrKey(n) for n in data)
    setattr_ = object.__setattr__
    new = object.__new__

    def flatten(x: Any) -> tuple[tuple, tuple]:
        return get_data(x), get_meta(x)

    def flatten_with_keys(x: Any) -> tuple[list[tuple[Any, Any]], tuple]:
        return list(zip(keys, get_data(x))), get_meta(x)

    def unflatten(aux: tuple, children: Iterable[Any]) -> Any:
        obj = new(nodetype)
        for name, value in zip(data, children):
            setattr_(obj, name, value)
        for name, value in zip(meta, aux):
            setattr_(obj, name, value)
        return obj

    # Fields outside the pytree (dropped, or init=False ones the lists leave out) are
    # recomputed by the constructor, as JAX's unflatten always calls it; otherwise the
    # instance is rebuilt field by field without running __init__.
    outside = dataclasses.is_dataclass(nodetype) and any(
        f.name not in set(data) | set(meta) for f in dataclasses.fields(nodetype))
    if outside:
        init_names = {f.name for f in dataclasses.fields(nodetype) if f.init}

        def unflatten(aux: tuple, children: Iterable[Any]) -> Any:  # noqa: F811
            values = dict(zip(data, children))
            values.update(zip(meta, aux))
            obj = nodetype(**{k: v for k, v in values.items() if k in init_names})
            for k, v in values.items():
                if k not in init_names:
                    setattr_(obj, k, v)
            return obj

    register_pytree_node(nodetype, flatten, unflatten, flatten_with_keys)
    _registry[nodetype].list_children = True
    return nodetype


# ---------------------------------------------------------------------------
# PyTreeDef
# ---------------------------------------------------------------------------
#
# A treedef is a tuple of node records in post-order (children before their
# parent, the root last).  A leaf is recorded as ``None``; any other node as
# ``(kind, aux, num_children, num_leaves, num_nodes)`` where the two counts are
# for the subtree rooted at that node.  Aux data: dict -> sorted key tuple,
# namedtuple -> the namedtuple class, OrderedDict -> key tuple, defaultdict ->
# (default_factory, sorted key tuple), custom -> the user's aux data.

_NONE_REC = (_NONE_KIND, None, 0, 0, 1)


def _aux_hash(aux: Any) -> int:
    try:
        return hash(aux)
    except TypeError:
        return hash(type(aux))


def _aux_equal(a: Any, b: Any) -> bool:
    if a is b:
        return True
    try:
        return bool(a == b)
    except Exception:
        return False


def _child_roots(nodes: tuple, i: int, n: int) -> list[int]:
    """Indices (into ``nodes``) of the roots of node ``i``'s ``n`` children."""
    roots = [0] * n
    j = i - 1
    for c in range(n - 1, -1, -1):
        roots[c] = j
        rec = nodes[j]
        j -= 1 if rec is None else rec[4]
    return roots


def _plural(n: int) -> str:
    return f"{n} child" if n == 1 else f"{n} children"


def _describe_record(rec: tuple | None) -> str:
    if rec is None:
        return "leaf"
    kind, aux, n = rec[0], rec[1], rec[2]
    code = kind.code
    if code == _TUPLE:
        return f"tuple of {_plural(n)}"
    if code == _LIST:
        return f"list of {_plural(n)}"
    if code == _DICT:
        return f"dict with keys {list(aux)!r}"
    if code == _NONE:
        return "None"
    if code == _NAMEDTUPLE:
        return f"namedtuple {aux.__qualname__} of {_plural(n)}"
    if code == _ODICT:
        return f"OrderedDict with keys {list(aux)!r}"
    if code == _DDICT:
        return f"defaultdict with keys {list(aux[1])!r}"
    return f"{kind.name} node of {_plural(n)}"


def _one_level(kind: _NodeKind, x: Any) -> tuple[list[Any], tuple]:
    """Children of node ``x`` and its (kind, aux, n) record head."""
    code = kind.code
    if code == _TUPLE or code == _LIST:
        children = list(x)
        return children, (kind, None, len(children))
    if code == _DICT:
        keys = _sorted_keys(x)
        return [x[k] for k in keys], (kind, keys, len(keys))
    if code == _NONE:
        return [], _NONE_REC
    children, aux = kind.flatten(x)  # type: ignore[misc]
    children = list(children)
    return children, (kind, aux, len(children))


def _describe_value(x: Any) -> str:
    kind = _kind_of(type(x))
    if kind is None:
        return f"leaf of type {type(x).__qualname__}"
    return _describe_record(_one_level(kind, x)[1])


def _node_keys(kind: _NodeKind, aux: Any, n: int, x: Any) -> list[Any]:
    code = kind.code
    if code == _TUPLE or code == _LIST:
        return [SequenceKey(i) for i in range(n)]
    if code == _DICT or code == _ODICT:
        return [DictKey(k) for k in aux]
    if code == _DDICT:
        return [DictKey(k) for k in aux[1]]
    if code == _NAMEDTUPLE:
        return [GetAttrKey(f) for f in aux._fields]
    if kind.flatten_with_keys is not None and x is not _MISSING:
        return [k for k, _ in kind.flatten_with_keys(x)[0]]
    return [FlattenedIndexKey(i) for i in range(n)]


def _trail_to_path(trail: list[tuple]) -> tuple:
    return tuple(_node_keys(kind, aux, n, x)[idx] for kind, aux, n, idx, x in trail)


class PyTreeDef:
    """The structure of a pytree: what :func:`tree_flatten` returns next to the leaves.

    Immutable, hashable (hash precomputed at construction) and comparable with
    ``==``; two treedefs are equal when their node types, aux data (dict keys,
    namedtuple classes, custom aux data) and shapes are equal.

    >>> treedef = tree_structure({"a": 1, "b": (2, 3)})
    >>> treedef
    PyTreeDef({'a': *, 'b': (*, *)})
    >>> treedef.num_leaves, treedef.num_nodes
    (3, 5)
    >>> treedef == tree_structure({"b": (0, 0), "a": 0})
    True
    >>> treedef.unflatten([1, 2, 3])
    {'a': 1, 'b': (2, 3)}
    """

    __slots__ = ("_nodes", "_hash", "__weakref__")

    def __init__(self, nodes: tuple) -> None:
        self._nodes = nodes
        try:
            self._hash = hash(nodes)
        except TypeError:  # unhashable custom aux data
            self._hash = hash(tuple(
                None if r is None else (r[0], _aux_hash(r[1]), r[2]) for r in nodes))

    # -- basic protocol -----------------------------------------------------

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, PyTreeDef):
            return NotImplemented
        if self._hash != other._hash:
            return False
        try:
            return bool(self._nodes == other._nodes)
        except Exception:  # aux data whose == is not a plain bool (e.g. arrays)
            a, b = self._nodes, other._nodes
            if len(a) != len(b):
                return False
            for ra, rb in zip(a, b):
                if ra is rb:
                    continue
                if ra is None or rb is None:
                    return False
                if ra[0] is not rb[0] or ra[2:] != rb[2:] or not _aux_equal(ra[1], rb[1]):
                    return False
            return True

    def __copy__(self) -> PyTreeDef:
        return self

    def __deepcopy__(self, memo: dict) -> PyTreeDef:
        return self

    def __repr__(self) -> str:
        return f"PyTreeDef({self._repr_node(len(self._nodes) - 1)})"

    def _repr_node(self, i: int) -> str:
        nodes = self._nodes
        rec = nodes[i]
        if rec is None:
            return "*"
        kind, aux, n = rec[0], rec[1], rec[2]
        kids = [self._repr_node(r) for r in _child_roots(nodes, i, n)]
        code = kind.code
        if code == _TUPLE:
            return "(" + ", ".join(kids) + ("," if n == 1 else "") + ")"
        if code == _LIST:
            return "[" + ", ".join(kids) + "]"
        if code == _NONE:
            return "None"
        if code == _DICT:
            return "{" + ", ".join(f"{k!r}: {c}" for k, c in zip(aux, kids)) + "}"
        # JAX prints the non-builtin containers as custom nodes, with the aux data's str():
        # CustomNode(namedtuple[P], ...), CustomNode(OrderedDict[('b', 'a')], ...)
        if code == _NAMEDTUPLE:
            return f"CustomNode(namedtuple[{aux.__name__}], [{', '.join(kids)}])"
        if code == _ODICT:
            return f"CustomNode(OrderedDict[{tuple(aux)}], [{', '.join(kids)}])"
        if code == _DDICT:
            return f"CustomNode(defaultdict[{(aux[0], tuple(aux[1]))}], [{', '.join(kids)}])"
        return f"CustomNode({kind.name}[{aux}], [{', '.join(kids)}])"

    # -- properties ---------------------------------------------------------

    @property
    def num_leaves(self) -> int:
        """Number of leaves in the structure."""
        rec = self._nodes[-1]
        return 1 if rec is None else rec[3]

    @property
    def num_nodes(self) -> int:
        """Number of nodes, counting leaves and ``None`` nodes."""
        return len(self._nodes)

    def is_leaf(self) -> bool:
        """True when the structure is a single leaf ``*``.

        >>> tree_structure(1.0).is_leaf(), tree_structure(None).is_leaf()
        (True, False)
        """
        return len(self._nodes) == 1 and self._nodes[0] is None

    def node_data(self) -> tuple[type, Any] | None:
        """``(node type, aux data)`` of the root node, or ``None`` for a leaf.

        >>> tree_structure({"a": 1}).node_data()
        (<class 'dict'>, ['a'])
        """
        rec = self._nodes[-1]
        if rec is None:
            return None
        kind, aux = rec[0], rec[1]
        if kind.code == _NAMEDTUPLE:
            return aux, None  # the class is the node type; no aux data (as JAX's)
        if kind.code == _DICT:
            return dict, list(aux)  # the sorted keys, as a list (as JAX's)
        return kind.nodetype, aux

    def from_node_data_and_children(self, registry: Any, node_data: tuple[type, Any] | None,
                                    children: Iterable[PyTreeDef]) -> PyTreeDef:
        """The structure whose root has ``node_data`` (as :meth:`node_data` gives it;
        ``None`` for a leaf) and the subtrees ``children``, as JAX's (``registry`` is
        :data:`default_registry`, the only one). ``self`` plays no part.

        >>> td = tree_structure({"a": [1, 2], "b": 3})
        >>> td.from_node_data_and_children(default_registry, td.node_data(), td.children())
        PyTreeDef({'a': [*, *], 'b': *})
        """
        if registry is not None and not isinstance(registry, PyTreeRegistry):
            raise TypeError("from_node_data_and_children: registry must be "
                            f"tree_util.default_registry, got {type(registry).__name__}")
        kids = list(children)
        for c in kids:
            if not isinstance(c, PyTreeDef):
                raise TypeError("from_node_data_and_children: children must be PyTreeDefs, got "
                                f"{type(c).__name__}")
        if node_data is None:
            if kids:
                raise ValueError("from_node_data_and_children: a leaf (node_data None) has no "
                                 f"children, got {len(kids)}")
            return PyTreeDef((None,))
        try:
            nodetype, data = node_data
        except (TypeError, ValueError):
            raise TypeError("from_node_data_and_children: node_data must be None or a "
                            f"(node type, aux data) pair, got {node_data!r}") from None
        kind = _kind_of(nodetype)
        if kind is None:
            raise ValueError(f"from_node_data_and_children: {nodetype!r} is not a registered "
                             "pytree node type")
        # node_data's view of the aux data back to the stored one
        if kind.code == _NAMEDTUPLE:
            aux = nodetype
        elif kind.code == _DICT:
            aux = tuple(data)
        else:
            aux = data
        if kind.code in (_DICT, _ODICT) and len(aux) != len(kids):
            raise ValueError(f"from_node_data_and_children: {len(aux)} keys but {len(kids)} "
                             "children")
        nodes: list[Any] = []
        for c in kids:
            nodes.extend(c._nodes)
        n_leaves = sum(c.num_leaves for c in kids)
        nodes.append((kind, aux, len(kids), n_leaves, len(nodes) + 1))
        return PyTreeDef(tuple(nodes))

    def compose(self, inner: PyTreeDef) -> PyTreeDef:
        """This structure with every leaf replaced by ``inner`` (what ``tree_transpose``
        expects of its input).

        >>> tree_structure([0, 0]).compose(tree_structure((0, None)))
        PyTreeDef([(*, None), (*, None)])
        """
        if not isinstance(inner, PyTreeDef):
            raise TypeError(f"PyTreeDef.compose: expected a PyTreeDef, got {type(inner).__name__}")
        n_leaves, n_nodes = inner.num_leaves, len(inner._nodes)
        out: list[Any] = []
        for rec in self._nodes:
            if rec is None:
                out.extend(inner._nodes)
            else:
                kind, aux, n, leaves, size = rec
                out.append((kind, aux, n, leaves * n_leaves, size - leaves + leaves * n_nodes))
        return PyTreeDef(tuple(out))

    def walk(self, f_node: Callable[[Any, Any], Any], f_leaf: Callable[[Any], Any] | None,
             leaves: Iterable[Any]) -> Any:
        """Fold the structure bottom-up over ``leaves``: each leaf becomes ``f_leaf(leaf)``
        (the leaf itself when ``f_leaf`` is None), each node ``f_node(children's results,
        node data)`` with the node data of :meth:`node_data` (as JAX's ``PyTreeDef.walk``).

        >>> tree_structure([1, (2, 3)]).walk(lambda xs, data: sum(xs), None, [1, 2, 3])
        6
        """
        it = iter(leaves)
        stack: list[Any] = []
        for i, rec in enumerate(self._nodes):
            if rec is None:
                try:
                    leaf = next(it)
                except StopIteration:
                    raise ValueError(f"PyTreeDef.walk: too few leaves for {self}") from None
                stack.append(leaf if f_leaf is None else f_leaf(leaf))
                continue
            n = rec[2]
            children = tuple(stack[len(stack) - n:]) if n else ()
            del stack[len(stack) - n:]
            data = PyTreeDef(self._nodes[i - rec[4] + 1:i + 1]).node_data()
            stack.append(f_node(children, None if data is None else data[1]))
        if next(it, _MISSING) is not _MISSING:
            raise ValueError(f"PyTreeDef.walk: too many leaves for {self}")
        return stack[-1]

    def children(self) -> list[PyTreeDef]:
        """Treedefs of the root's children (empty for a leaf or ``None``).

        >>> tree_structure((1, [2, 3])).children()
        [PyTreeDef(*), PyTreeDef([*, *])]
        """
        nodes = self._nodes
        i = len(nodes) - 1
        rec = nodes[i]
        if rec is None:
            return []
        out = []
        for r in _child_roots(nodes, i, rec[2]):
            child = nodes[r]
            size = 1 if child is None else child[4]
            out.append(PyTreeDef(nodes[r - size + 1 : r + 1]))
        return out

    # -- unflatten / flatten_up_to -----------------------------------------

    def unflatten(self, leaves: Iterable[Any]) -> Any:
        """Build a pytree with this structure from ``leaves`` (in flatten order).

        Raises ``ValueError`` naming the expected and actual leaf counts.

        >>> tree_structure([1, (2, 3)]).unflatten("abc")
        ['a', ('b', 'c')]
        """
        if type(leaves) is not list and type(leaves) is not tuple:
            leaves = list(leaves)
        nodes = self._nodes
        root = nodes[-1]
        expected = 1 if root is None else root[3]
        if len(leaves) != expected:  # type: ignore[arg-type]
            raise ValueError(
                f"tree_unflatten: wrong number of leaves for {self!r}: "
                f"expected {expected}, got {len(leaves)}")  # type: ignore[arg-type]
        if root is None:
            return leaves[0]  # type: ignore[index]
        if len(nodes) == expected + 1:
            # Fast path: a single node whose children are all leaves.
            kind, aux = root[0], root[1]
            code = kind.code
            if code == _DICT:
                return dict(zip(aux, leaves))
            if code == _TUPLE:
                return tuple(leaves)
            if code == _LIST:
                return list(leaves)
            if code == _NONE:
                return None
            return kind.unflatten(aux, tuple(leaves))
        stack: list[Any] = []
        push = stack.append
        li = 0
        for rec in nodes:
            if rec is None:
                push(leaves[li])  # type: ignore[index]
                li += 1
                continue
            kind, aux, n = rec[0], rec[1], rec[2]
            if n:
                children = stack[-n:]
                del stack[-n:]
            else:
                children = []
            code = kind.code
            if code == _TUPLE:
                push(tuple(children))
            elif code == _LIST:
                push(children)
            elif code == _DICT:
                push(dict(zip(aux, children)))
            elif code == _NONE:
                push(None)
            else:
                push(kind.unflatten(aux, tuple(children)))
        return stack[0]

    def flatten_up_to(self, tree: Any) -> list[Any]:
        """Flatten ``tree`` only down to this treedef's leaves.

        ``tree`` must have this structure, except that at each leaf position it
        may hold any subtree (returned whole).  On mismatch raises ``ValueError``
        naming the key path of the first difference and what each side had.

        >>> tree_structure((1, 2)).flatten_up_to(([1, 2], {"a": 3}))
        [[1, 2], {'a': 3}]
        """
        return _flatten_up_to(self, tree, "flatten_up_to", "")


def _flatten_up_to(treedef: PyTreeDef, tree: Any, what: str, suffix: str) -> list[Any]:
    nodes = treedef._nodes
    out: list[Any] = []
    _up_to(nodes, len(nodes) - 1, tree, out, [], what, suffix)
    return out


def _up_to(nodes: tuple, i: int, x: Any, out: list, trail: list, what: str, suffix: str) -> None:
    rec = nodes[i]
    if rec is None:
        out.append(x)
        return
    kind, aux, n = rec[0], rec[1], rec[2]
    # the treedef decides: an array leaf's node (a transformation's treedef) takes its type
    xkind = _raw_kind(type(x))
    ok = xkind is kind
    xaux = None
    if ok:
        code = kind.code
        if code == _TUPLE or code == _LIST:
            children = x
            ok = len(x) == n
        elif code == _DICT:
            xaux = _sorted_keys(x)
            ok = xaux == aux
            children = [x[k] for k in aux] if ok else ()
        elif code == _NONE:
            return
        else:
            children, xaux = kind.flatten(x)  # type: ignore[misc]
            children = list(children)
            ok = len(children) == n and _aux_equal(xaux, aux)
    if not ok:
        path = keystr(_trail_to_path(trail)) or "root"
        want = _describe_record(rec)
        got = _describe_value(x)
        if want == got and xkind is kind and kind.code == _CUSTOM:
            want += f" with aux data {aux!r}"
            got += f" with aux data {xaux!r}"
        raise ValueError(f"{what}: structure mismatch at {path}: {want} vs {got}{suffix}")
    for idx, (r, c) in enumerate(zip(_child_roots(nodes, i, n), children)):
        trail.append((kind, aux, n, idx, x))
        _up_to(nodes, r, c, out, trail, what, suffix)
        trail.pop()


# ---------------------------------------------------------------------------
# Flattening
# ---------------------------------------------------------------------------


def _flatten(x: Any, is_leaf: Callable[[Any], bool] | None, leaves: list, nodes: list) -> None:
    if is_leaf is not None and is_leaf(x):
        leaves.append(x)
        nodes.append(None)
        return
    kind = _kind_cache.get(type(x), _MISSING)
    if kind is _MISSING:
        kind = _resolve_kind(type(x))
    if kind is None:
        leaves.append(x)
        nodes.append(None)
        return
    code = kind.code
    l0 = len(leaves)
    n0 = len(nodes)
    if kind.array_leaf and not _nodes_view.get():
        leaves.append(x)
        nodes.append(None)
        return
    if code == _DICT:
        keys = _sorted_keys(x)
        for k in keys:
            _flatten(x[k], is_leaf, leaves, nodes)
        nodes.append((kind, keys, len(keys), len(leaves) - l0, len(nodes) - n0 + 1))
    elif code == _TUPLE or code == _LIST:
        for c in x:
            _flatten(c, is_leaf, leaves, nodes)
        nodes.append((kind, None, len(x), len(leaves) - l0, len(nodes) - n0 + 1))
    elif code == _NONE:
        nodes.append(_NONE_REC)
    else:
        children, aux = kind.flatten(x)  # type: ignore[misc]
        n = 0
        for c in children:
            _flatten(c, is_leaf, leaves, nodes)
            n += 1
        nodes.append((kind, aux, n, len(leaves) - l0, len(nodes) - n0 + 1))


def _flatten_fast(x: Any, leaves: list, nodes: list) -> None:
    """:func:`_flatten` specialised for ``is_leaf=None``, with leaf children inlined."""
    kind = _kind_cache.get(type(x), _MISSING)
    if kind is _MISSING:
        kind = _resolve_kind(type(x))
    if kind is None:
        leaves.append(x)
        nodes.append(None)
        return
    code = kind.code
    l0 = len(leaves)
    n0 = len(nodes)
    get = _kind_cache.get
    leaf_append = leaves.append
    node_append = nodes.append
    if code == _DICT:
        keys = _sorted_keys(x)
        for k in keys:
            c = x[k]
            if get(type(c), _MISSING) is None:
                leaf_append(c)
                node_append(None)
            else:
                _flatten_fast(c, leaves, nodes)
        nodes.append((kind, keys, len(keys), len(leaves) - l0, len(nodes) - n0 + 1))
    elif code == _TUPLE or code == _LIST:
        for c in x:
            if get(type(c), _MISSING) is None:
                leaf_append(c)
                node_append(None)
            else:
                _flatten_fast(c, leaves, nodes)
        nodes.append((kind, None, len(x), len(leaves) - l0, len(nodes) - n0 + 1))
    elif code == _NONE:
        nodes.append(_NONE_REC)
    elif kind.array_leaf and not _nodes_view.get():
        leaf_append(x)
        node_append(None)
    else:
        children, aux = kind.flatten(x)  # type: ignore[misc]
        n = 0
        for c in children:
            _flatten_fast(c, leaves, nodes)
            n += 1
        nodes.append((kind, aux, n, len(leaves) - l0, len(nodes) - n0 + 1))


def _leaves_only(x: Any, is_leaf: Callable[[Any], bool] | None, leaves: list) -> None:
    if is_leaf is not None and is_leaf(x):
        leaves.append(x)
        return
    kind = _kind_cache.get(type(x), _MISSING)
    if kind is _MISSING:
        kind = _resolve_kind(type(x))
    if kind is None:
        leaves.append(x)
        return
    code = kind.code
    if code == _DICT:
        for k in _sorted_keys(x):
            _leaves_only(x[k], is_leaf, leaves)
    elif code == _TUPLE or code == _LIST:
        for c in x:
            _leaves_only(c, is_leaf, leaves)
    elif kind.array_leaf and not _nodes_view.get():
        leaves.append(x)
    elif code != _NONE:
        for c in kind.flatten(x)[0]:  # type: ignore[misc]
            _leaves_only(c, is_leaf, leaves)


def _flatten_with_path(
    x: Any, is_leaf: Callable[[Any, Any], bool] | None, path: tuple, out: list, nodes: list
) -> None:
    # is_leaf(path, x) here (tree_flatten_with_path adapts a one-argument test).
    if is_leaf is not None and is_leaf(path, x):
        out.append((path, x))
        nodes.append(None)
        return
    kind = _kind_of(type(x))
    if kind is None:
        out.append((path, x))
        nodes.append(None)
        return
    code = kind.code
    l0 = len(out)
    n0 = len(nodes)
    if code == _DICT:
        keys = _sorted_keys(x)
        for k in keys:
            _flatten_with_path(x[k], is_leaf, (*path, DictKey(k)), out, nodes)
        nodes.append((kind, keys, len(keys), len(out) - l0, len(nodes) - n0 + 1))
    elif code == _TUPLE or code == _LIST:
        for i, c in enumerate(x):
            _flatten_with_path(c, is_leaf, (*path, SequenceKey(i)), out, nodes)
        nodes.append((kind, None, len(x), len(out) - l0, len(nodes) - n0 + 1))
    elif code == _NONE:
        nodes.append(_NONE_REC)
    else:
        if kind.flatten_with_keys is not None:
            keyed, aux = kind.flatten_with_keys(x)
        else:
            children, aux = kind.flatten(x)  # type: ignore[misc]
            keyed = [(FlattenedIndexKey(i), c) for i, c in enumerate(children)]
        n = 0
        for k, c in keyed:
            _flatten_with_path(c, is_leaf, (*path, k), out, nodes)
            n += 1
        nodes.append((kind, aux, n, len(out) - l0, len(nodes) - n0 + 1))


def tree_flatten(
    tree: PyTree, is_leaf: Callable[[Any], bool] | None = None
) -> tuple[list[Leaf], PyTreeDef]:
    """Flatten a pytree into ``(leaves, treedef)``.

    Leaves are listed depth-first, left to right (dicts in sorted key order).
    ``is_leaf(x)`` returning true makes ``x`` a leaf even if it is a node.

    >>> tree_flatten([1, {"b": 2, "a": 3}, None])
    ([1, 3, 2], PyTreeDef([*, {'a': *, 'b': *}, None]))
    >>> tree_flatten([(1, 2), 3], is_leaf=lambda x: isinstance(x, tuple))[0]
    [(1, 2), 3]
    """
    leaves: list[Any] = []
    nodes: list[Any] = []
    if is_leaf is None:
        _flatten_fast(tree, leaves, nodes)
    else:
        _flatten(tree, is_leaf, leaves, nodes)
    return leaves, PyTreeDef(tuple(nodes))


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Leaf]) -> PyTree:
    """Rebuild a pytree from a treedef and leaves (inverse of :func:`tree_flatten`).

    >>> leaves, treedef = tree_flatten({"a": 1, "b": [2]})
    >>> tree_unflatten(treedef, [10, 20])
    {'a': 10, 'b': [20]}
    """
    return treedef.unflatten(leaves)


def tree_leaves(tree: PyTree, is_leaf: Callable[[Any], bool] | None = None) -> list[Leaf]:
    """The leaves of a pytree, in :func:`tree_flatten` order.

    >>> tree_leaves({"x": (1, None), "a": [2.0]})
    [2.0, 1]
    """
    leaves: list[Any] = []
    _leaves_only(tree, is_leaf, leaves)
    return leaves


def tree_structure(tree: PyTree, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    """The :class:`PyTreeDef` of a pytree.

    >>> tree_structure((1, {"a": None}))
    PyTreeDef((*, {'a': None}))
    """
    return tree_flatten(tree, is_leaf)[1]


def tree_flatten_with_path(
    tree: PyTree, is_leaf: Callable[..., bool] | None = None,
    is_leaf_takes_path: bool = False,
) -> tuple[list[tuple[KeyPath, Leaf]], PyTreeDef]:
    """Like :func:`tree_flatten`, but each leaf comes with its key path. With
    ``is_leaf_takes_path=True`` the test is called ``is_leaf(path, x)`` (as JAX's).

    >>> pairs, treedef = tree_flatten_with_path({"a": [1, 2]})
    >>> [(keystr(p), x) for p, x in pairs]
    [("['a'][0]", 1), ("['a'][1]", 2)]
    >>> tree_flatten_with_path({"a": [1, 2], "b": [3]}, lambda p, x: p == (DictKey("a"),),
    ...                        is_leaf_takes_path=True)[0][0]
    ((DictKey(key='a'),), [1, 2])
    """
    out: list[tuple[KeyPath, Any]] = []
    nodes: list[Any] = []
    test = is_leaf
    if is_leaf is not None and not is_leaf_takes_path:
        def test(path: tuple, x: Any) -> bool:
            return is_leaf(x)
    _flatten_with_path(tree, test, (), out, nodes)
    return out, PyTreeDef(tuple(nodes))


def tree_leaves_with_path(
    tree: PyTree, is_leaf: Callable[..., bool] | None = None,
    is_leaf_takes_path: bool = False,
) -> list[tuple[KeyPath, Leaf]]:
    """``(key path, leaf)`` pairs in :func:`tree_flatten` order.

    >>> tree_leaves_with_path((1, {"k": 2}))
    [((SequenceKey(idx=0),), 1), ((SequenceKey(idx=1), DictKey(key='k')), 2)]
    """
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def _rest_leaves(
    treedef: PyTreeDef, tree: Any, is_leaf: Callable[[Any], bool] | None, what: str, i: int
) -> list[Any]:
    leaves, other = tree_flatten(tree, is_leaf)
    if other == treedef:
        return leaves
    return _flatten_up_to(treedef, tree, what, f" (tree 0 vs tree {i})")


def tree_map(
    f: Callable[..., Any],
    tree: PyTree,
    *rest: PyTree,
    is_leaf: Callable[[Any], bool] | None = None,
) -> PyTree:
    """Apply ``f`` to the leaves of ``tree`` (and the matching leaves of ``rest``).

    Each tree in ``rest`` must have the structure of ``tree`` (it may hold whole
    subtrees where ``tree`` has leaves).  A mismatch raises ``ValueError`` naming
    the key path where the structures first differ.

    >>> tree_map(lambda x: x * 2, {"a": 1, "b": (2, 3)})
    {'a': 2, 'b': (4, 6)}
    >>> tree_map(lambda x, y: x + y, [1, 2], [10, 20])
    [11, 22]
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    if not rest:
        return treedef.unflatten([f(x) for x in leaves])
    all_leaves_ = [leaves]
    for i, r in enumerate(rest):
        all_leaves_.append(_rest_leaves(treedef, r, is_leaf, "tree_map", i + 1))
    return treedef.unflatten([f(*xs) for xs in zip(*all_leaves_)])


def tree_map_with_path(
    f: Callable[..., Any],
    tree: PyTree,
    *rest: PyTree,
    is_leaf: Callable[..., bool] | None = None,
    is_leaf_takes_path: bool = False,
) -> PyTree:
    """Like :func:`tree_map`, but ``f`` gets the key path as its first argument
    (``is_leaf_takes_path``: as for :func:`tree_flatten_with_path`).

    >>> tree_map_with_path(lambda p, x: f"{keystr(p)}={x}", {"a": [1]})
    {'a': ["['a'][0]=1"]}
    """
    pairs, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    all_leaves_ = [[x for _, x in pairs]]
    for i, r in enumerate(rest):
        if is_leaf_takes_path:  # the other trees follow the first one's structure
            all_leaves_.append(_flatten_up_to(treedef, r, "tree_map_with_path",
                                              f" (tree 0 vs tree {i + 1})"))
        else:
            all_leaves_.append(_rest_leaves(treedef, r, is_leaf, "tree_map_with_path", i + 1))
    return treedef.unflatten(
        [f(p, *xs) for (p, _), xs in zip(pairs, zip(*all_leaves_))])


def tree_all(tree: PyTree, *, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """True if every leaf is truthy (vacuously true for no leaves).

    >>> tree_all([True, {"a": 1}]), tree_all((True, 0)), tree_all(None)
    (True, False, True)
    """
    return all(tree_leaves(tree, is_leaf))


def tree_reduce(
    function: Callable[[Any, Any], Any],
    tree: PyTree,
    initializer: Any = _MISSING,
    is_leaf: Callable[[Any], bool] | None = None,
) -> Any:
    """Reduce the leaves with ``function`` (like ``functools.reduce``), left to right.

    >>> tree_reduce(lambda a, b: a + b, {"a": 1, "b": [2, 3]})
    6
    >>> tree_reduce(lambda a, b: a + b, [], 0)
    0
    """
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _MISSING:
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_reduce_associative(
    operation: Callable[[Any, Any], Any],
    tree: PyTree,
    *,
    identity: Any = _MISSING,
    is_leaf: Callable[[Any], bool] | None = None,
) -> Any:
    """Reduce the leaves with an associative ``operation``, pairwise (a balanced tree of calls,
    as JAX's: ``[a, b, c, d, e]`` gives ``op(op(a, b), op(c, op(d, e)))``). ``identity`` is
    the result for a tree without leaves (a ``TypeError`` without one).

    >>> tree_reduce_associative(lambda a, b: f"({a}{b})", ["a", "b", "c", "d", "e"])
    '((ab)(c(de)))'
    >>> tree_reduce_associative(lambda a, b: a + b, [], identity=0)
    0
    """
    leaves = tree_leaves(tree, is_leaf)
    if not leaves:
        if identity is _MISSING:
            raise TypeError(
                "tree_reduce_associative: the tree has no leaves; give identity= for the result "
                "of reducing nothing"
            )
        return identity

    def pairwise(xs: list[Any]) -> Any:
        if len(xs) == 1:
            return xs[0]
        mid = len(xs) // 2
        return operation(pairwise(xs[:mid]), pairwise(xs[mid:]))

    return pairwise(leaves)


def is_tree_node(typ: type) -> bool:
    """Whether ``typ`` is a pytree node type: a built-in container, ``None``'s type, a
    namedtuple or a registered class (``jax.tree_util.is_tree_node``); False for anything
    that is not a type.

    >>> is_tree_node(dict), is_tree_node(type(None)), is_tree_node(int)
    (True, True, False)
    """
    return isinstance(typ, type) and _kind_of(typ) is not None


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """True when ``treedef`` has one node: a leaf, or a node without children (``None``,
    ``()``, ``{}``), as JAX's.

    >>> treedef_is_leaf(tree_structure(1)), treedef_is_leaf(tree_structure((1,)))
    (True, False)
    >>> treedef_is_leaf(tree_structure(None)), treedef_is_leaf(tree_structure([]))
    (True, True)
    """
    return treedef.num_nodes == 1


#: Node types whose one-level children :func:`flatten_one_level` returns as a tuple (as
#: JAX's, which builds those nodes itself); registered types give the list of their flatten.
_BUILTIN_CODES = frozenset((_TUPLE, _LIST, _DICT, _NONE))


def flatten_one_level(tree: PyTree) -> tuple[Sequence[Any], Hashable]:
    """The children of ``tree``'s root node and its auxiliary data (a ``ValueError`` for a
    leaf), as JAX's.

    >>> flatten_one_level({"b": 1, "a": [2]})
    (([2], 1), ('a', 'b'))
    """
    kind = _kind_of(type(tree))
    if kind is None:
        raise ValueError(f"flatten_one_level: can't tree-flatten type {type(tree)!r} (a leaf)")
    if kind.code == _CUSTOM:
        # a registered node's children as its flatten function gives them (a tuple stays
        # a tuple), as JAX's
        children, aux = kind.flatten(tree)  # type: ignore[misc]
        keep = isinstance(children, tuple | list) and not kind.list_children
        return (children if keep else list(children)), aux
    children, rec = _one_level(kind, tree)
    aux = rec[1]
    if kind.code in _BUILTIN_CODES:
        return tuple(children), aux
    return children, aux


def flatten_one_level_with_keys(tree: PyTree) -> tuple[Sequence[tuple[Any, Any]], Hashable]:
    """:func:`flatten_one_level` with each child paired with its key path entry.

    >>> flatten_one_level_with_keys([5, 6])
    (((SequenceKey(idx=0), 5), (SequenceKey(idx=1), 6)), None)
    """
    children, aux = flatten_one_level(tree)
    kind = _kind_of(type(tree))
    assert kind is not None
    keyed = [(k, c) for k, c in zip(_node_keys(kind, aux, len(children), tree), children)]
    return (tuple(keyed) if kind.code in _BUILTIN_CODES else keyed), aux


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    """Treedefs of the root node's children.

    >>> treedef_children(tree_structure({"a": 1, "b": (2,)}))
    [PyTreeDef(*), PyTreeDef((*,))]
    """
    return treedef.children()


def treedef_tuple(treedefs: Iterable[PyTreeDef]) -> PyTreeDef:
    """The treedef of a tuple whose children have the given treedefs.

    >>> treedef_tuple([tree_structure(1), tree_structure([1, 2])])
    PyTreeDef((*, [*, *]))
    """
    treedefs = list(treedefs)
    nodes: list[Any] = []
    num_leaves = 0
    for td in treedefs:
        nodes.extend(td._nodes)
        num_leaves += td.num_leaves
    nodes.append((_TUPLE_KIND, None, len(treedefs), num_leaves, len(nodes) + 1))
    return PyTreeDef(tuple(nodes))


class PyTreeRegistry:
    """``jax.tree_util.default_registry``'s interface (``PyTreeRegistry``) over funcgrad's
    one registry: what it registers, ``tree_flatten`` & co. see, and the reverse.

    >>> default_registry.flatten({"b": 1, "a": (2, 3)})
    ([2, 3, 1], PyTreeDef({'a': (*, *), 'b': *}))
    >>> default_registry.flatten_one_level(7) is None     # a leaf
    True
    >>> default_registry.is_node(dict), default_registry.is_node(int)
    (True, False)
    """

    def flatten(self, tree: Any, leaf_predicate: Callable[[Any], bool] | None = None
                ) -> tuple[list[Leaf], PyTreeDef]:
        """:func:`tree_flatten` with ``leaf_predicate`` as ``is_leaf``."""
        return tree_flatten(tree, is_leaf=leaf_predicate)

    def flatten_one_level(self, tree: Any) -> tuple[Sequence[Any], Hashable] | None:
        """:func:`flatten_one_level`, but ``None`` for a leaf (as JAX's registry)."""
        return None if _kind_of(type(tree)) is None else flatten_one_level(tree)

    def flatten_one_level_with_keys(self, tree: Any
                                    ) -> tuple[Sequence[tuple[Any, Any]], Hashable] | None:
        """:func:`flatten_one_level_with_keys`, but ``None`` for a leaf."""
        return None if _kind_of(type(tree)) is None else flatten_one_level_with_keys(tree)

    def flatten_with_path(self, tree: Any, leaf_predicate: Callable[[Any, Any], bool] | None = None
                          ) -> tuple[list[tuple[KeyPath, Leaf]], PyTreeDef]:
        """:func:`tree_flatten_with_path`; ``leaf_predicate(path, x)`` takes the key path."""
        return tree_flatten_with_path(tree, leaf_predicate, is_leaf_takes_path=True)

    def is_node(self, type: type) -> bool:  # noqa: A002 (JAX's parameter name)
        """Whether values of ``type`` are pytree nodes (builtin or registered)."""
        return _kind_of(type) is not None

    def register_node(self, type: type, to_iterable: Callable[[Any], tuple[Any, Any]],  # noqa: A002
                      from_iterable: Callable[[Any, Any], Any],
                      to_iterable_with_keys: Callable[[Any], tuple[Any, Any]] | None = None,
                      ) -> None:
        """:func:`register_pytree_node` (``None``, as JAX's)."""
        register_pytree_node(type, to_iterable, from_iterable, to_iterable_with_keys)

    def register_dataclass_node(self, type: type, data_fields: Sequence[str],  # noqa: A002
                                meta_fields: Sequence[str], /) -> None:
        """:func:`register_dataclass` with both field lists."""
        register_dataclass(type, data_fields, meta_fields)

    def __repr__(self) -> str:
        return "<funcgrad.tree_util.PyTreeRegistry (the default registry)>"


#: JAX's ``jax.tree_util.default_registry``: the registry every pytree function uses.
default_registry = PyTreeRegistry()


def all_leaves(iterable: Iterable[Any], is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """True if every element of ``iterable`` is a leaf (``None`` is not a leaf).

    >>> all_leaves([1.0, "s"]), all_leaves([1.0, (2,)]), all_leaves([None])
    (True, False, False)
    """
    for x in iterable:
        if is_leaf is not None and is_leaf(x):
            continue
        if _kind_of(type(x)) is not None:
            return False
    return True


def tree_transpose(
    outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None, pytree_to_transpose: PyTree
) -> PyTree:
    """Turn an outer-of-inner pytree into an inner-of-outer pytree.

    ``pytree_to_transpose`` must have structure ``outer_treedef`` with a tree of
    structure ``inner_treedef`` at each outer leaf (``inner_treedef=None``
    infers it from the first one).

    >>> outer = tree_structure([0, 0])
    >>> inner = tree_structure({"a": 0, "b": 0})
    >>> tree_transpose(outer, inner, [{"a": 1, "b": 2}, {"a": 3, "b": 4}])
    {'a': [1, 3], 'b': [2, 4]}
    """
    # A tree of another structure is a TypeError, as JAX's.
    try:
        flat = _flatten_up_to(outer_treedef, pytree_to_transpose, "tree_transpose", " (outer)")
    except ValueError as e:
        raise TypeError(str(e)) from None
    if inner_treedef is None:
        if not flat:
            raise ValueError("tree_transpose: cannot infer inner_treedef from an empty tree")
        inner_treedef = tree_structure(flat[0])
    try:
        lol = [_flatten_up_to(inner_treedef, x, "tree_transpose", " (inner)") for x in flat]
    except ValueError as e:
        raise TypeError(str(e)) from None
    if lol:
        columns: Iterable[Sequence[Any]] = zip(*lol)
    else:
        columns = [[] for _ in range(inner_treedef.num_leaves)]
    return inner_treedef.unflatten([outer_treedef.unflatten(col) for col in columns])


def _is_none(x: Any) -> bool:
    return x is None


def broadcast_prefix(
    prefix_tree: PyTree, full_tree: PyTree, is_leaf: Callable[[Any], bool] | None = None
) -> list[Any]:
    """Replicate each leaf of ``prefix_tree`` once per leaf of the matching subtree.

    ``prefix_tree`` must be a tree prefix of ``full_tree``.  ``None`` in
    ``prefix_tree`` is a **leaf** here (as for ``vmap``'s ``in_axes``).
    ``is_leaf`` applies to both trees.  Returns a list with one entry per leaf of
    ``full_tree``.

    >>> broadcast_prefix((None, 0), (1.0, {"a": 2.0, "b": 3.0}))
    [None, 0, 0]
    """
    if is_leaf is None:
        prefix_is_leaf: Callable[[Any], bool] = _is_none
    else:
        user_is_leaf = is_leaf

        def prefix_is_leaf(x: Any) -> bool:
            return x is None or bool(user_is_leaf(x))

    prefix_leaves, prefix_def = tree_flatten(prefix_tree, prefix_is_leaf)
    subtrees = _flatten_up_to(prefix_def, full_tree, "broadcast_prefix", "")
    out: list[Any] = []
    for p, sub in zip(prefix_leaves, subtrees):
        out.extend([p] * len(tree_leaves(sub, is_leaf)))
    return out


def tree_broadcast(
    prefix_tree: PyTree, full_tree: PyTree, is_leaf: Callable[[Any], bool] | None = None
) -> PyTree:
    """``prefix_tree``'s leaves repeated over the matching subtrees of ``full_tree``: a tree
    of ``full_tree``'s structure (``jax.tree.broadcast``). As in :func:`tree_map`, ``None`` in
    ``prefix_tree`` is an empty node (it matches only ``None``) and ``is_leaf`` applies to
    ``prefix_tree``; a prefix leaf covers its whole subtree of ``full_tree``.

    >>> tree_broadcast({"a": 0, "b": 1}, {"a": (1, 2), "b": [3]})
    {'a': (0, 0), 'b': [1]}
    """
    prefix_leaves, prefix_def = tree_flatten(prefix_tree, is_leaf)
    subtrees = _flatten_up_to(prefix_def, full_tree, "tree_broadcast", " (prefix vs full tree)")
    out: list[Any] = []
    for p, sub in zip(prefix_leaves, subtrees):
        out.extend([p] * tree_structure(sub).num_leaves)
    return tree_structure(full_tree).unflatten(out)


# ---------------------------------------------------------------------------
# Partial
# ---------------------------------------------------------------------------


class Partial(functools.partial):
    """A ``functools.partial`` that is a pytree.

    Its leaves are the bound positional and keyword argument values; the
    wrapped function is aux data (so it must be hashable).  This lets
    partially-applied functions pass through transformations.  As JAX's (and
    unlike ``functools.partial``), a ``Partial`` of a ``functools.partial`` or
    ``Partial`` is not merged with it: the inner one is part of the wrapped
    function, so only the outer one's arguments are leaves.

    >>> p = Partial(lambda x, y, scale: (x + y) * scale, 1, scale=2)
    >>> tree_leaves(p)
    [1, 2]
    >>> tree_map(lambda v: v * 10, p)(3)
    260
    >>> tree_leaves(Partial(p, 5))
    [5]
    """

    def __new__(cls, func: Callable[..., Any], *args: Any, **kwargs: Any) -> Partial:
        if isinstance(func, functools.partial):
            # functools.partial would merge the two; JAX keeps which arguments are leaves.
            func = _PartialShim(func)
        return super().__new__(cls, func, *args, **kwargs)


class _PartialShim:
    """A ``functools.partial`` wrapped so that ``Partial`` does not merge it (hashed and
    compared as the partial it wraps)."""

    __slots__ = ("partial", "func", "args", "keywords")

    def __init__(self, partial: functools.partial) -> None:
        self.partial = partial
        self.func, self.args, self.keywords = partial.func, partial.args, partial.keywords

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.partial(*args, **kwargs)

    def __hash__(self) -> int:
        return hash(self.partial)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, _PartialShim):
            return self.partial == other.partial
        return self.partial == other

    def __repr__(self) -> str:
        return repr(self.partial)


def _partial_flatten(p: Partial) -> tuple[tuple[tuple, dict], Callable]:
    return (p.args, p.keywords), p.func


def _partial_flatten_with_keys(p: Partial) -> tuple[list[tuple[Any, Any]], Callable]:
    return [(GetAttrKey("args"), p.args), (GetAttrKey("keywords"), p.keywords)], p.func


def _partial_unflatten(func: Callable, children: Sequence[Any]) -> Partial:
    args, kwargs = children
    return Partial(func, *args, **kwargs)


register_pytree_node(Partial, _partial_flatten, _partial_unflatten, _partial_flatten_with_keys)


def register_array_leaf(
    nodetype: type[T],
    flatten_func: Callable[[T], tuple[Iterable[Any], Hashable]],
    unflatten_func: Callable[[Hashable, Iterable[Any]], T],
) -> None:
    """Register an array type built over arrays (typed PRNG key arrays over their ``uint32``
    data): a **leaf** for this module's functions, as JAX's key arrays are leaves of
    ``jax.tree_util``, and a node with the children ``flatten_func`` gives in
    :data:`transforms`, the view the transformations flatten their arguments and results with,
    so ``jit``, ``vmap``, ``grad``, ``scan``... carry the type through as its arrays.

    Example:
        >>> from funcgrad import random
        >>> k = random.key(0)
        >>> tree_leaves({"k": k})[0] is k, len(transforms.tree_leaves({"k": k}))
        (True, 1)
        >>> transforms.tree_leaves(k)[0].dtype
        dtype('uint32')
    """
    kind = _NodeKind(nodetype, _CUSTOM, flatten_func, unflatten_func, None)
    kind.array_leaf = True
    _add_kind(nodetype, kind)


def _in_nodes_view(f: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(f)
    def in_view(*args: Any, **kwargs: Any) -> Any:
        token = _nodes_view.set(True)
        try:
            return f(*args, **kwargs)
        finally:
            _nodes_view.reset(token)

    return in_view


class _TransformsView(types.SimpleNamespace):
    """The transformations' view of :mod:`funcgrad.tree_util` (``from funcgrad.tree_util
    import transforms as tree_util``): the same names, whose functions flatten the types
    registered with :func:`register_array_leaf` (typed PRNG keys) into their arrays, which
    tracers stand for. Functions given to them (``tree_map``'s) run in that view too: the
    transformations pass their own.

    Example:
        >>> from funcgrad import random
        >>> [str(getattr(x, "dtype", type(x).__name__))
        ...  for x in transforms.tree_leaves([random.key(0), 1.0])]
        ['uint32', 'float']
        >>> transforms.tree_structure(random.key(0)) == tree_structure(random.key(0))
        False
    """

    def __repr__(self) -> str:
        return "<funcgrad.tree_util.transforms: the transformations' view>"


transforms = _TransformsView(**{
    name: _in_nodes_view(obj) if isinstance(obj, types.FunctionType)
    and obj.__module__ == __name__ and not name.startswith(("register", "keystr", "_"))
    and name not in ("tree_unflatten", "treedef_children", "treedef_tuple", "treedef_is_leaf")
    else obj
    for name, obj in list(globals().items()) if not name.startswith("__")})
