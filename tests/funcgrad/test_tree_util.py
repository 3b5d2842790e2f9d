"""Tests for funcgrad.tree_util."""

from __future__ import annotations

import collections
import copy
import dataclasses
import doctest
import functools
from typing import Any, NamedTuple

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad
from funcgrad import tree_util
from funcgrad.tree_util import (
    DictKey,
    FlattenedIndexKey,
    GetAttrKey,
    Partial,
    PyTreeDef,
    SequenceKey,
    all_leaves,
    broadcast_prefix,
    keystr,
    ravel_pytree,
    register_dataclass,
    register_pytree_node,
    register_pytree_node_class,
    register_pytree_with_keys,
    tree_all,
    tree_broadcast,
    tree_flatten,
    tree_flatten_with_path,
    tree_leaves,
    tree_leaves_with_path,
    tree_map,
    tree_map_with_path,
    tree_reduce,
    tree_structure,
    tree_transpose,
    tree_unflatten,
    treedef_children,
    treedef_is_leaf,
    treedef_tuple,
)

# ---------------------------------------------------------------------------
# Node types used across the tests
# ---------------------------------------------------------------------------


class Point(NamedTuple):
    x: Any
    y: Any


@register_pytree_node_class
class Pair:
    """Custom node registered via tree_flatten/tree_unflatten (no keys)."""

    def __init__(self, a: Any, b: Any, tag: str = "t") -> None:
        self.a, self.b, self.tag = a, b, tag

    def tree_flatten(self) -> tuple[tuple[Any, Any], str]:
        return (self.a, self.b), self.tag

    @classmethod
    def tree_unflatten(cls, aux: str, children: Any) -> Pair:
        return cls(*children, tag=aux)

    def __eq__(self, other: object) -> bool:
        return (type(other) is Pair and self.tag == other.tag  # type: ignore[attr-defined]
                and _same(self.a, other.a) and _same(self.b, other.b))  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]


@register_dataclass
@dataclasses.dataclass(frozen=True)
class Frozen:
    w: Any
    b: Any
    name: str = dataclasses.field(default="layer", metadata={"static": True})

    def __post_init__(self) -> None:
        if isinstance(self.w, str) and self.w == "boom":
            raise AssertionError("__post_init__ must not run on unflatten")


@dataclasses.dataclass
class Explicit:
    data: Any
    size: int


register_dataclass(Explicit, data_fields=["data"], meta_fields=["size"])


class Keyed:
    def __init__(self, left: Any, right: Any) -> None:
        self.left, self.right = left, right

    def __eq__(self, other: object) -> bool:
        return (type(other) is Keyed and _same(self.left, other.left)  # type: ignore[attr-defined]
                and _same(self.right, other.right))  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]


register_pytree_with_keys(
    Keyed,
    lambda k: ([(GetAttrKey("left"), k.left), (GetAttrKey("right"), k.right)], None),
    lambda _, children: Keyed(*children),
)


def _same(a: Any, b: Any) -> bool:
    """Deep equality that also checks container types and dict key order."""
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, collections.defaultdict):
        return (a.default_factory is b.default_factory and sorted(a) == sorted(b)
                and all(_same(a[k], b[k]) for k in a))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)
    return a == b


def _canonical(tree: Any) -> Any:
    """What unflatten(flatten(tree)) should produce: plain dicts get sorted keys."""
    if type(tree) is dict:
        return {k: _canonical(tree[k]) for k in sorted(tree)}
    if type(tree) in (list, tuple):
        return type(tree)(_canonical(x) for x in tree)
    if type(tree) is Point:
        return Point(_canonical(tree.x), _canonical(tree.y))
    if type(tree) is collections.OrderedDict:
        return collections.OrderedDict((k, _canonical(v)) for k, v in tree.items())
    if type(tree) is collections.defaultdict:
        return collections.defaultdict(tree.default_factory,
                                       {k: _canonical(tree[k]) for k in sorted(tree)})
    if type(tree) is Pair:
        return Pair(_canonical(tree.a), _canonical(tree.b), tree.tag)
    if type(tree) is Frozen:
        return Frozen(_canonical(tree.w), _canonical(tree.b), tree.name)
    if type(tree) is Keyed:
        return Keyed(_canonical(tree.left), _canonical(tree.right))
    return tree


# ---------------------------------------------------------------------------
# Hypothesis strategies
# ---------------------------------------------------------------------------

leaf_st = st.one_of(
    st.integers(-5, 5),
    st.floats(allow_nan=False, width=32),
    st.text(max_size=2),
    st.booleans(),
)
key_st = st.text(alphabet="abcdef", min_size=1, max_size=3)


def _extend(children: st.SearchStrategy) -> st.SearchStrategy:
    return st.one_of(
        st.lists(children, max_size=4),
        st.lists(children, max_size=4).map(tuple),
        st.dictionaries(key_st, children, max_size=4),
        st.builds(Point, children, children),
        st.dictionaries(key_st, children, max_size=3).map(collections.OrderedDict),
        st.dictionaries(key_st, children, max_size=3).map(
            lambda d: collections.defaultdict(list, d)),
        st.builds(Pair, children, children, st.sampled_from(["t", "u"])),
        st.builds(Frozen, children, children, st.sampled_from(["l1", "l2"])),
        st.builds(Keyed, children, children),
    )


tree_st = st.recursive(st.one_of(leaf_st, st.none()), _extend, max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(tree_st)
def test_roundtrip_flatten_unflatten(tree: Any) -> None:
    leaves, treedef = tree_flatten(tree)
    assert isinstance(treedef, PyTreeDef)
    assert len(leaves) == treedef.num_leaves
    assert leaves == tree_leaves(tree)
    rebuilt = tree_unflatten(treedef, leaves)
    assert _same(rebuilt, _canonical(tree))
    # Flattening the rebuilt tree gives the same leaves and an equal treedef.
    leaves2, treedef2 = tree_flatten(rebuilt)
    assert leaves2 == leaves
    assert treedef2 == treedef
    assert hash(treedef2) == hash(treedef)
    assert hash(treedef) == hash(treedef)  # stable
    assert not (treedef2 != treedef)


class _Tagged:
    """An opaque leaf wrapping a value."""

    def __init__(self, value: Any) -> None:
        self.value = value


@settings(max_examples=200, deadline=None)
@given(tree_st)
def test_treedef_invariants(tree: Any) -> None:
    leaves, treedef = tree_flatten(tree)
    # tree_map with identity keeps the structure; mapping values changes only leaves.
    mapped = tree_map(_Tagged, tree)
    mleaves, mdef = tree_flatten(mapped)
    assert mdef == treedef
    assert [t.value for t in mleaves] == leaves
    # is_leaf that stops at the tagged values sees the same thing.
    assert tree_structure(mapped, is_leaf=lambda x: isinstance(x, _Tagged)) == treedef
    # Paths agree with plain flatten.
    pairs, pdef = tree_flatten_with_path(tree)
    assert pdef == treedef
    assert [x for _, x in pairs] == leaves
    assert len({p for p, _ in pairs}) == len(pairs)  # paths are unique
    # Children recompose.
    kids = treedef_children(treedef)
    if treedef_is_leaf(treedef):
        assert kids == [] and treedef.num_nodes == 1
    else:
        assert sum(k.num_leaves for k in kids) == treedef.num_leaves
        assert sum(k.num_nodes for k in kids) == treedef.num_nodes - 1
    # Two-tree map and flatten_up_to against itself.
    assert treedef.flatten_up_to(tree) == leaves
    paired = tree_leaves(tree_map(lambda a, b: _Tagged((a, b)), tree, tree))
    assert [t.value for t in paired] == [(x, x) for x in leaves]
    assert isinstance(repr(treedef), str) and repr(treedef).startswith("PyTreeDef(")
    assert copy.deepcopy(treedef) == treedef


@settings(max_examples=100, deadline=None)
@given(tree_st, tree_st)
def test_treedef_equality_matches_structure(t1: Any, t2: Any) -> None:
    d1, d2 = tree_structure(t1), tree_structure(t2)
    if d1 == d2:
        assert hash(d1) == hash(d2)
        assert d1.num_leaves == d2.num_leaves
        # Same structure: leaves of one fit the other.
        assert tree_structure(tree_unflatten(d2, tree_leaves(t1))) == d1
    elif _not_prefix(d1, t2):
        with pytest.raises(ValueError, match="structure mismatch"):
            tree_map(lambda a, b: None, t1, t2)
    else:  # t1 is a strict prefix of t2: tree_map hands whole subtrees of t2 to f
        seen: list[Any] = []
        tree_map(lambda a, b: seen.append(b), t1, t2)
        assert len(seen) == d1.num_leaves


def _not_prefix(treedef: PyTreeDef, tree: Any) -> bool:
    try:
        treedef.flatten_up_to(tree)
    except ValueError:
        return True
    return False


# ---------------------------------------------------------------------------
# Basic semantics
# ---------------------------------------------------------------------------


def test_none_is_a_node_not_a_leaf() -> None:
    assert tree_leaves(None) == []
    assert tree_leaves([None, 1, (None,)]) == [1]
    treedef = tree_structure(None)
    assert treedef.num_leaves == 0 and treedef.num_nodes == 1
    assert treedef_is_leaf(treedef)  # one node, as JAX's (though not a leaf: no leaves)
    assert not treedef.is_leaf()
    assert tree_unflatten(treedef, []) is None
    assert tree_map(lambda x: x + 1, {"a": None, "b": 1}) == {"a": None, "b": 2}
    assert tree_leaves([None], is_leaf=lambda x: x is None) == [None]


def test_dict_sorted_and_ordered_dict_insertion_order() -> None:
    leaves, treedef = tree_flatten({"b": 1, "a": 2, "c": 3})
    assert leaves == [2, 1, 3]
    out = tree_unflatten(treedef, leaves)
    assert list(out) == ["a", "b", "c"]
    od = collections.OrderedDict([("b", 1), ("a", 2)])
    leaves, treedef = tree_flatten(od)
    assert leaves == [1, 2]
    out = tree_unflatten(treedef, leaves)
    assert type(out) is collections.OrderedDict and list(out) == ["b", "a"]
    # Insertion order is part of an OrderedDict's structure.
    assert treedef != tree_structure(collections.OrderedDict([("a", 1), ("b", 2)]))
    assert repr(treedef) == "PyTreeDef(CustomNode(OrderedDict[('b', 'a')], [*, *]))"  # JAX's text


def test_defaultdict_keeps_factory() -> None:
    dd = collections.defaultdict(list, {"y": 1, "x": 2})
    leaves, treedef = tree_flatten(dd)
    assert leaves == [2, 1]
    out = tree_unflatten(treedef, [5, 6])
    assert type(out) is collections.defaultdict and out.default_factory is list
    assert dict(out) == {"x": 5, "y": 6}
    assert treedef != tree_structure(collections.defaultdict(set, {"y": 1, "x": 2}))


@pytest.mark.parametrize("d", [{"a": 1, 2: 2}, {None: 1, "a": 2},
                               collections.defaultdict(int, {1: 1, "b": 2})])
def test_dict_keys_that_cannot_be_sorted_are_an_error(d: dict) -> None:
    # As JAX 0.10.2: "ValueError: Comparator raised exception while sorting pytree
    # dictionary keys." (a dict's children are in sorted key order)
    with pytest.raises(ValueError, match="sorting pytree dictionary keys"):
        tree_flatten(d)
    with pytest.raises(ValueError, match="sorting pytree dictionary keys"):
        tree_map(lambda v: v, d)
    # An OrderedDict keeps insertion order: any keys do.
    od = collections.OrderedDict([("a", 1), (2, 2), (None, 3)])
    assert tree_leaves(od) == [1, 2, 3]
    assert tree_map(lambda v: v * 2, od) == collections.OrderedDict([("a", 2), (2, 4), (None, 6)])
    # One key of any type sorts.
    assert tree_leaves({None: 5}) == [5]


def test_subclasses_and_other_types_are_leaves() -> None:
    class MyList(list):
        pass

    class MyDict(dict):
        pass

    arr = np.arange(3)
    assert tree_leaves([MyList([1, 2]), MyDict(a=1), arr, "str", 3]) == [
        MyList([1, 2]), MyDict(a=1), arr, "str", 3]
    assert all_leaves([1, "x", arr])
    assert not all_leaves([1, [2]])
    assert not all_leaves([None])
    assert all_leaves([[1]], is_leaf=lambda x: isinstance(x, list))


def test_is_leaf() -> None:
    tree = {"a": (1, 2), "b": [3, (4, 5)]}
    leaves = tree_leaves(tree, is_leaf=lambda x: isinstance(x, tuple))
    assert leaves == [(1, 2), 3, (4, 5)]
    out = tree_map(lambda t: sum(t) if isinstance(t, tuple) else t, tree,
                   is_leaf=lambda x: isinstance(x, tuple))
    assert out == {"a": 3, "b": [3, 9]}


def test_repr_and_properties() -> None:
    treedef = tree_structure({"a": 1, "b": (2, 3)})
    assert repr(treedef) == "PyTreeDef({'a': *, 'b': (*, *)})"
    assert treedef.num_leaves == 3 and treedef.num_nodes == 5
    assert repr(tree_structure((1,))) == "PyTreeDef((*,))"
    # JAX 0.10.2's text: namedtuples, OrderedDict, defaultdict and registered classes print as
    # custom nodes with their aux data's str()
    assert repr(tree_structure(Point(1, [2, None]))) == (
        "PyTreeDef(CustomNode(namedtuple[Point], [*, [*, None]]))")
    assert repr(tree_structure(collections.defaultdict(list, {"a": 1}))) == (
        "PyTreeDef(CustomNode(defaultdict[(<class 'list'>, ('a',))], [*]))")
    assert repr(tree_structure(1)) == "PyTreeDef(*)"
    assert repr(tree_structure(Pair(1, 2))) == "PyTreeDef(CustomNode(Pair[t], [*, *]))"
    assert treedef_is_leaf(tree_structure(np.zeros(3)))
    assert treedef.children() == [tree_structure(0), tree_structure((0, 0))]
    assert treedef.node_data() == (dict, ["a", "b"])  # the sorted keys as a list, as JAX's
    assert tree_structure(Point(1, 2)).node_data() == (Point, None)  # as JAX's
    assert tree_structure(1).node_data() is None
    tup = treedef_tuple([tree_structure(1), treedef])
    assert tup == tree_structure((1, {"a": 1, "b": (2, 3)}))
    assert hash(tup) == hash(tree_structure((1, {"a": 1, "b": (2, 3)})))


def test_treedef_usable_as_dict_key() -> None:
    cache = {tree_structure({"a": 1, "b": [1, 2]}): "hit"}
    assert cache[tree_structure({"b": [np.ones(2), 0.0], "a": np.zeros(1)})] == "hit"
    assert tree_structure([1, 2]) != tree_structure((1, 2))
    assert tree_structure({"a": 1}) != tree_structure({"b": 1})
    assert tree_structure(Point(1, 2)) != tree_structure((1, 2))
    assert tree_structure(Pair(1, 2, "t")) != tree_structure(Pair(1, 2, "u"))
    assert tree_structure([1]) != "not a treedef"


def test_unhashable_aux_data() -> None:
    class Box:
        def __init__(self, v: Any, meta: list) -> None:
            self.v, self.meta = v, meta

    register_pytree_node(Box, lambda b: ((b.v,), b.meta), lambda m, c: Box(c[0], m))
    t1 = tree_structure(Box(1, [1, 2]))
    t2 = tree_structure(Box(2, [1, 2]))
    assert hash(t1) == hash(t2)
    assert t1 == t2
    assert t1 != tree_structure(Box(1, [3]))
    # array aux data: == is elementwise, comparison must not crash
    a1 = tree_structure(Box(1, np.array([1, 2])))  # type: ignore[arg-type]
    a2 = tree_structure(Box(1, np.array([1, 2])))  # type: ignore[arg-type]
    assert isinstance(a1 == a2, bool)
    assert hash(a1) == hash(a2)


# ---------------------------------------------------------------------------
# Key paths
# ---------------------------------------------------------------------------


def test_key_entries() -> None:
    assert str(SequenceKey(0)) == "[0]"
    assert str(DictKey("a")) == "['a']"
    assert str(DictKey(1)) == "[1]"
    assert str(GetAttrKey("w")) == ".w"
    assert str(FlattenedIndexKey(0)) == "[<flat index 0>]"
    assert hash(DictKey("a")) == hash(DictKey("a")) and DictKey("a") == DictKey("a")
    with pytest.raises(dataclasses.FrozenInstanceError):
        SequenceKey(0).idx = 1  # type: ignore[misc]
    path = (DictKey("a"), SequenceKey(0), GetAttrKey("w"))
    assert keystr(path) == "['a'][0].w"
    assert keystr(path, simple=True) == "a0w"  # JAX's default separator is ""
    assert keystr(path, separator="/") == "['a']/[0]/.w"
    assert keystr(path, simple=True, separator=".") == "a.0.w"
    assert keystr(()) == ""


def test_paths_for_all_node_kinds() -> None:
    tree = {
        "list": [1, 2],
        "nt": Point(3, 4),
        "dc": Frozen(5, 6),
        "custom": Pair(7, 8),
        "keyed": Keyed(9, 10),
        "od": collections.OrderedDict(z=11),
        "partial": Partial(print, 12, k=13),
    }
    got = {keystr(p): x for p, x in tree_leaves_with_path(tree)}
    assert got == {
        "['custom'][<flat index 0>]": 7,
        "['custom'][<flat index 1>]": 8,
        "['dc'].w": 5,
        "['dc'].b": 6,
        "['keyed'].left": 9,
        "['keyed'].right": 10,
        "['list'][0]": 1,
        "['list'][1]": 2,
        "['nt'].x": 3,
        "['nt'].y": 4,
        "['od']['z']": 11,
        "['partial'].args[0]": 12,
        "['partial'].keywords['k']": 13,
    }
    simple = [keystr(p, simple=True, separator="/")
              for p, _ in tree_leaves_with_path({"a": [{"w": 1}]})]
    assert simple == ["a/0/w"]


def test_tree_map_with_path() -> None:
    tree = {"a": [1, 2], "b": Point(3, 4)}
    out = tree_map_with_path(lambda p, x, y: (keystr(p), x + y), tree, tree)
    assert out == {"a": [("['a'][0]", 2), ("['a'][1]", 4)],
                   "b": Point(("['b'].x", 6), ("['b'].y", 8))}


# ---------------------------------------------------------------------------
# Registration
# ---------------------------------------------------------------------------


def test_register_custom_class_and_duplicate_error() -> None:
    class Node:
        def __init__(self, children: list, name: str) -> None:
            self.children, self.name = children, name

    register_pytree_node(Node, lambda n: (n.children, n.name),
                         lambda name, ch: Node(list(ch), name))
    tree = Node([1, Node([2, 3], "inner")], "outer")
    leaves, treedef = tree_flatten(tree)
    assert leaves == [1, 2, 3]
    out = tree_unflatten(treedef, [10, 20, 30])
    assert out.name == "outer" and out.children[0] == 10
    assert out.children[1].name == "inner" and out.children[1].children == [20, 30]
    with pytest.raises(ValueError, match="Node"):
        register_pytree_node(Node, lambda n: ((), None), lambda a, c: Node([], ""))
    with pytest.raises(ValueError, match="tuple"):
        register_pytree_node(tuple, lambda n: ((), None), lambda a, c: ())


def test_type_cached_as_leaf_can_be_registered_later() -> None:
    class Late:
        def __init__(self, v: Any) -> None:
            self.v = v

    assert len(tree_leaves([Late(1)])) == 1  # leaf for now (and cached as such)
    register_pytree_node(Late, lambda x: ((x.v,), None), lambda _, c: Late(c[0]))
    assert tree_leaves([Late(1)]) == [1]


def test_register_dataclass_frozen_with_static_field() -> None:
    layer = Frozen(w=np.ones(2), b=0.5, name="dense")
    leaves, treedef = tree_flatten(layer)
    assert len(leaves) == 2 and leaves[1] == 0.5
    assert treedef != tree_structure(Frozen(w=1, b=2, name="other"))
    assert treedef == tree_structure(Frozen(w=3, b=4, name="dense"))
    # Unflatten bypasses __init__/__post_init__ (which would raise here).
    out = tree_unflatten(treedef, ["boom", 2.0])
    assert out.w == "boom" and out.b == 2.0 and out.name == "dense"
    with pytest.raises(dataclasses.FrozenInstanceError):
        out.w = 1  # type: ignore[misc]
    doubled = tree_map(lambda x: x * 2, layer)
    assert isinstance(doubled, Frozen) and doubled.b == 1.0 and doubled.name == "dense"


def test_register_dataclass_explicit_and_errors() -> None:
    leaves, treedef = tree_flatten(Explicit(data=[1, 2], size=2))
    assert leaves == [1, 2]
    assert tree_unflatten(treedef, [3, 4]) == Explicit(data=[3, 4], size=2)

    @register_dataclass(data_fields=["x"], meta_fields=["y"])
    @dataclasses.dataclass
    class Factory:
        x: Any
        y: int

    assert tree_leaves(Factory(1, 2)) == [1]

    @dataclasses.dataclass
    class Missing:
        x: Any
        y: Any
        z: Any

    with pytest.raises(ValueError, match="z"):
        register_dataclass(Missing, data_fields=["x"], meta_fields=["y"])

    class Plain:
        pass

    with pytest.raises(TypeError):
        register_dataclass(Plain)

    @dataclasses.dataclass
    class OnlyMeta:
        x: Any
        y: Any

    register_dataclass(OnlyMeta, meta_fields=["y"])
    assert tree_leaves(OnlyMeta(1, 2)) == [1]


def test_register_dataclass_with_slots() -> None:
    @register_dataclass
    @dataclasses.dataclass(frozen=True, slots=True)
    class Slotted:
        a: Any
        k: int = dataclasses.field(default=0, metadata={"static": True})

    out = tree_map(lambda x: x + 1, Slotted(1, 5))
    assert out == Slotted(2, 5)


# ---------------------------------------------------------------------------
# Partial
# ---------------------------------------------------------------------------


def _affine(x: Any, w: Any, *, b: Any) -> Any:
    return x * w + b


def test_partial_is_a_pytree() -> None:
    p = Partial(_affine, w=2.0, b=1.0)
    assert tree_leaves(p) == [1.0, 2.0]  # kwargs in sorted key order
    assert p(3.0) == 7.0
    q = tree_map(lambda v: v * 10, p)
    assert isinstance(q, Partial) and q.func is _affine
    assert q(1.0) == 30.0
    p2 = Partial(_affine, 3.0)
    assert tree_leaves(p2) == [3.0]
    assert tree_map(lambda v: v + 1, p2)(w=2.0, b=0.0) == 8.0
    # Same function and argument structure -> equal, hashable treedefs.
    assert tree_structure(p) == tree_structure(Partial(_affine, w=0, b=0))
    assert tree_structure(p) != tree_structure(Partial(print, w=0, b=0))
    assert {tree_structure(p): 1}[tree_structure(Partial(_affine, w=5, b=6))] == 1
    # As JAX 0.10.2's: a Partial of a Partial (or functools.partial) is not merged; the inner
    # one is part of the function, only the outer arguments are leaves.
    nested = Partial(Partial(_affine, w=2.0), b=1.0)
    assert nested.func.func is _affine
    assert tree_leaves(nested) == [1.0]
    assert nested(2.0) == 5.0
    assert tree_map(lambda v: v * 2, nested)(2.0) == 6.0
    assert tree_structure(nested) == tree_structure(tree_map(lambda v: v, nested))
    assert tree_leaves(Partial(functools.partial(_affine, w=3.0), 1.0)) == [1.0]


def test_treedef_pickles_to_an_equal_treedef() -> None:
    import pickle

    tree = {"a": [1, (2, None)], "p": Point(1, 2), "o": collections.OrderedDict(z=1),
            "d": collections.defaultdict(list, k=3), "f": Partial(max, 1)}
    treedef = tree_structure(tree)
    again = pickle.loads(pickle.dumps(treedef))
    assert again == treedef and hash(again) == hash(treedef)
    rebuilt = again.unflatten(tree_leaves(tree))
    assert tree_structure(rebuilt) == treedef and rebuilt["f"](3) == 3


def test_treedef_compose_and_walk() -> None:
    # Expected values from JAX 0.10.2's PyTreeDef.compose / .walk.
    outer, inner = tree_structure([0, 0]), tree_structure((0, 0))
    assert outer.compose(inner) == tree_structure([(0, 0), (0, 0)])
    assert repr(outer.compose(inner)) == "PyTreeDef([(*, *), (*, *)])"
    assert tree_structure({"a": 1}).compose(tree_structure(None)) == tree_structure({"a": None})
    assert tree_structure(None).compose(inner) == tree_structure(None)
    nested = tree_structure([0, (0,)]).compose(tree_structure((0, [0])))
    assert nested == tree_structure([(0, [0]), ((0, [0]),)])
    assert nested.num_leaves == 4 and nested.num_nodes == tree_structure(
        [(0, [0]), ((0, [0]),)]).num_nodes
    walk = tree_structure([1, (2, 3)]).walk(lambda xs, d: ("n",) + tuple(xs), lambda v: v,
                                            [1, 2, 3])
    assert walk == ("n", 1, ("n", 2, 3))
    assert tree_structure({"b": (1,), "a": 2}).walk(
        lambda xs, d: (d, tuple(xs)), None, [1, 2]) == (["a", "b"], (1, (None, (2,))))
    assert tree_structure((1, None)).walk(lambda xs, d: ("n",) + tuple(xs), None, [1]) == (
        "n", 1, ("n",))
    assert tree_structure(1).walk(lambda xs, d: xs, lambda v: ("leaf", v), [1]) == ("leaf", 1)
    with pytest.raises(ValueError, match="too few leaves"):
        tree_structure([1, 2]).walk(lambda xs, d: xs, None, [1])


# ---------------------------------------------------------------------------
# ravel_pytree
# ---------------------------------------------------------------------------


def test_ravel_pytree_roundtrip_mixed_dtypes() -> None:
    tree = {
        "a": np.arange(6, dtype=np.float32).reshape(2, 3),
        "b": (np.array([1, 2], dtype=np.int32), np.float64(3.5)),
        "c": [np.array(True)],
    }
    flat, unravel = ravel_pytree(tree)
    assert flat.shape == (10,)
    assert flat.dtype == np.float64
    np.testing.assert_array_equal(flat[:6], np.arange(6))
    out = unravel(flat)
    assert tree_structure(out) == tree_structure(tree)
    for x, y in zip(tree_leaves(out), tree_leaves(tree)):
        assert x.dtype == np.asarray(y).dtype
        assert x.shape == np.shape(y)
        np.testing.assert_array_equal(x, y)
    out2 = unravel(flat + 1)
    assert out2["a"].dtype == np.float32 and out2["b"][0].dtype == np.int32
    np.testing.assert_array_equal(out2["b"][0], [2, 3])


def test_ravel_pytree_dtype_promotion_and_scalars() -> None:
    flat, unravel = ravel_pytree([np.ones(2, np.float32), 1.5, 2])
    assert flat.dtype == np.float32  # Python scalars are weakly typed
    assert flat.shape == (4,)
    out = unravel(flat)
    assert out[0].dtype == np.float32 and out[1].shape == ()
    flat, _ = ravel_pytree([np.ones(2, np.int8), np.ones(1, np.int16)])
    assert flat.dtype == np.int16
    flat, unravel = ravel_pytree([np.ones(2), np.array([1 + 2j])])
    assert flat.dtype == np.complex128
    assert unravel(flat)[0].dtype == np.float64
    # Many leaves (more than numpy's result_type argument limit).
    many = [np.ones(1, np.float32)] * 100 + [np.ones(1, np.float16)]
    flat, _ = ravel_pytree(many)
    assert flat.dtype == np.float32 and flat.shape == (101,)


def test_ravel_pytree_empty_and_wrong_size() -> None:
    flat, unravel = ravel_pytree({"a": None, "b": []})
    assert flat.shape == (0,) and flat.dtype == np.float64
    assert unravel(flat) == {"a": None, "b": []}
    flat, unravel = ravel_pytree({"a": np.ones(3), "b": np.zeros((2, 2))})
    with pytest.raises(ValueError, match=r"expected .*7.* got shape \(6,\)"):
        unravel(np.ones(6))
    with pytest.raises(ValueError, match="7"):
        unravel(np.ones((7, 1)))


# ---------------------------------------------------------------------------
# Error messages
# ---------------------------------------------------------------------------


def test_unflatten_wrong_leaf_count() -> None:
    treedef = tree_structure({"a": 1, "b": (2, 3)})
    with pytest.raises(ValueError, match="expected 3, got 2"):
        tree_unflatten(treedef, [1, 2])
    with pytest.raises(ValueError, match="expected 3, got 4"):
        treedef.unflatten([1, 2, 3, 4])


def test_tree_map_mismatch_names_path() -> None:
    a = {"a": 1, "b": [0, (1, 2)]}
    b = {"a": 1, "b": [0, [1, 2, 3]]}
    with pytest.raises(ValueError) as info:
        tree_map(lambda x, y: x, a, b)
    msg = str(info.value)
    assert msg.startswith(
        "tree_map: structure mismatch at ['b'][1]: tuple of 2 children vs list of 3 children")


def test_tree_map_mismatch_dict_keys_and_leaf() -> None:
    with pytest.raises(ValueError, match=r"at \['x'\]: dict with keys \['a', 'b'\] vs "
                                         r"dict with keys \['a', 'c'\]"):
        tree_map(lambda x, y: x, {"x": {"a": 1, "b": 2}}, {"x": {"a": 1, "c": 2}})
    with pytest.raises(ValueError, match=r"at root: tuple of 2 children vs leaf of type int"):
        tree_map(lambda x, y: x, (1, 2), 3)
    with pytest.raises(ValueError, match=r"at \[1\]: None vs leaf of type int"):
        tree_map(lambda x, y: x, [1, None], [1, 2])
    with pytest.raises(ValueError, match=r"at \.y: namedtuple Point of 2 children vs "
                                         r"tuple of 2 children"):
        tree_map(lambda x, y: x, Point(1, Point(2, 3)), Point(1, (2, 3)))
    with pytest.raises(ValueError, match=r"aux data 't' vs Pair node of 2 children "
                                         r"with aux data 'u'"):
        tree_map(lambda x, y: x, [Pair(1, 2, "t")], [Pair(1, 2, "u")])
    with pytest.raises(ValueError, match=r"at \[0\]\.w: list of 1 child vs list of 2"):
        tree_map(lambda x, y: x, [Frozen([1], 2)], [Frozen([1, 2], 2)])
    with pytest.raises(ValueError, match=r"tree 0 vs tree 2"):
        tree_map(lambda x, y, z: x, [1], [1], [1, 2])


def test_tree_map_allows_rest_to_have_deeper_subtrees() -> None:
    out = tree_map(lambda x, y: (x, y), {"a": 1, "b": 2}, {"a": [1, 2], "b": {"c": 3}})
    assert out == {"a": (1, [1, 2]), "b": (2, {"c": 3})}


def test_flatten_up_to() -> None:
    treedef = tree_structure({"a": 0, "b": (0, 0)})
    assert treedef.flatten_up_to({"a": [1], "b": (2, {"z": 3})}) == [[1], 2, {"z": 3}]
    with pytest.raises(ValueError, match=r"flatten_up_to: structure mismatch at \['b'\]: "
                                         r"tuple of 2 children vs tuple of 3 children"):
        treedef.flatten_up_to({"a": 1, "b": (1, 2, 3)})


# ---------------------------------------------------------------------------
# broadcast_prefix, tree_transpose, reductions
# ---------------------------------------------------------------------------


def test_broadcast_prefix_with_none() -> None:
    x, y, z = np.ones(1), np.ones(2), np.ones(3)
    assert broadcast_prefix((None, 0), (x, {"a": y, "b": z})) == [None, 0, 0]
    assert broadcast_prefix(0, (x, [y, z])) == [0, 0, 0]
    assert broadcast_prefix(None, (x, [y, z])) == [None, None, None]
    assert broadcast_prefix({"a": 1, "b": None}, {"a": [x, y], "b": (z,)}) == [1, 1, None]
    assert broadcast_prefix((0, 1), (x, None)) == [0]
    assert broadcast_prefix([0, 1], [x, y], is_leaf=lambda v: isinstance(v, np.ndarray)) == [0, 1]
    with pytest.raises(ValueError, match=r"broadcast_prefix: structure mismatch at root: "
                                         r"tuple of 2 children vs tuple of 3 children"):
        broadcast_prefix((0, 1), (x, y, z))
    assert tree_broadcast((None, 0), (None, {"a": y, "b": z})) == (None, {"a": 0, "b": 0})


def test_tree_broadcast_is_jaxs() -> None:
    # Expected values from JAX 0.10.2's jax.tree.broadcast: None in the prefix is an empty
    # node (as in tree_map), is_leaf applies to the prefix, the result has full_tree's
    # structure.
    assert tree_broadcast([1, 2], [(3, 4), {"a": 5}]) == [(1, 1), {"a": 2}]
    assert tree_broadcast([1, None], [(3, 4), None]) == [(1, 1), None]
    with pytest.raises(ValueError):
        tree_broadcast([1, None], [(3, 4), 5])
    with pytest.raises(ValueError):
        tree_broadcast([1, 2], [3, 4, 5])
    assert tree_broadcast([1, (2,)], [(3, 4), (5,)],
                          is_leaf=lambda v: isinstance(v, tuple)) == [(1, 1), ((2,),)]
    assert funcgrad.tree.broadcast(0, {"a": [1, 2]}) == {"a": [0, 0]}


def test_tree_transpose() -> None:
    outer = tree_structure([0, 0, 0])
    inner = tree_structure({"a": 0, "b": (0, 0)})
    tree = [{"a": i, "b": (10 * i, 100 * i)} for i in range(3)]
    out = tree_transpose(outer, inner, tree)
    assert out == {"a": [0, 1, 2], "b": ([0, 10, 20], [0, 100, 200])}
    back = tree_transpose(inner, outer, out)
    assert back == tree
    assert tree_transpose(outer, None, tree) == out
    # A tree of another structure is a TypeError, as JAX's.
    with pytest.raises(TypeError, match="tree_transpose: structure mismatch"):
        tree_transpose(outer, inner, [{"a": 0, "b": (0, 0)}, {"a": 0}, {"a": 0, "b": (0, 0)}])
    with pytest.raises(TypeError, match="tree_transpose: structure mismatch"):
        tree_transpose(outer, inner, [{"a": 0, "b": (0, 0)}] * 2)
    # Empty outer tree.
    assert tree_transpose(tree_structure([]), inner, []) == {"a": [], "b": ([], [])}


def test_tree_all_reduce() -> None:
    assert tree_all({"a": True, "b": [1, 2]})
    assert not tree_all({"a": True, "b": [1, 0]})
    assert tree_all(None)
    assert tree_reduce(lambda a, b: a + b, {"x": 1, "y": (2, 3)}) == 6
    assert tree_reduce(lambda a, b: a + [b], [1, (2,)], []) == [1, 2]
    assert tree_reduce(lambda a, b: a + b, [], 0) == 0
    with pytest.raises(TypeError):
        tree_reduce(lambda a, b: a + b, [])
    assert tree_reduce(max, [(1, 5), (3, 2)], is_leaf=lambda x: isinstance(x, tuple)) == (3, 2)


def test_unflatten_accepts_iterables() -> None:
    treedef = tree_structure([0, (0, {"k": 0})])
    assert treedef.unflatten(iter([1, 2, 3])) == [1, (2, {"k": 3})]
    assert treedef.unflatten(np.array([1, 2, 3])) == [1, (2, {"k": 3})]


def test_module_doctests() -> None:
    result = doctest.testmod(tree_util, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0


def test_public_api_has_docstrings_and_examples() -> None:
    for name in tree_util.__all__:
        obj = getattr(tree_util, name)
        if name in ("KeyEntry", "KeyPath"):
            continue
        assert obj.__doc__ and ">>>" in obj.__doc__, name


# -- JAX parity (expected values recorded from jax.tree_util / jax.tree 0.10.2) -----------------


def test_treedef_is_leaf_is_one_node_as_jax() -> None:
    from funcgrad import tree_util as tu

    # [jtu.treedef_is_leaf(jtu.tree_structure(v)) for v in (1, None, [], [1])]
    assert [tu.treedef_is_leaf(tu.tree_structure(v)) for v in (1, None, [], {}, [1])] == [
        True, True, True, True, False]


def test_flatten_one_level_as_jax() -> None:
    import collections

    from funcgrad import tree_util as tu

    nt = collections.namedtuple("NT", "a b")
    assert tu.flatten_one_level({"b": 1, "a": 2}) == ((2, 1), ("a", "b"))
    assert tu.flatten_one_level((1, 2)) == ((1, 2), None)
    assert tu.flatten_one_level(None) == ((), None)
    assert tu.flatten_one_level(nt(1, 2)) == ([1, 2], nt)
    od = collections.OrderedDict(z=1, a=2)
    assert tu.flatten_one_level(od) == ([1, 2], ("z", "a"))
    assert tu.flatten_one_level_with_keys({"b": 1, "a": 2}) == (
        ((tu.DictKey("a"), 2), (tu.DictKey("b"), 1)), ("a", "b"))
    assert tu.flatten_one_level_with_keys(nt(1, 2))[0] == [
        (tu.GetAttrKey("a"), 1), (tu.GetAttrKey("b"), 2)]
    with pytest.raises(ValueError, match="can't tree-flatten"):
        tu.flatten_one_level(1)


def test_tree_reduce_associative_as_jax() -> None:
    from funcgrad import tree_util as tu

    assert tu.tree_reduce_associative(lambda a, b: f"({a}{b})", list("abcde")) == "((ab)(c(de)))"
    assert tu.tree_reduce_associative(lambda a, b: a + b, [7], identity=0) == 7
    assert tu.tree_reduce_associative(lambda a, b: a + b, [], identity=0) == 0
    with pytest.raises(TypeError, match="identity"):
        tu.tree_reduce_associative(lambda a, b: a + b, [])


def test_register_pytree_with_keys_class_and_register_static() -> None:
    from funcgrad import tree_util as tu

    @tu.register_pytree_with_keys_class
    class Vec:
        def __init__(self, x, y):
            self.x, self.y = x, y

        def tree_flatten_with_keys(self):
            return [(tu.GetAttrKey("x"), self.x), (tu.GetAttrKey("y"), self.y)], None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

    assert [tu.keystr(p) for p, _ in tu.tree_leaves_with_path({"v": Vec(1, [2])})] == [
        "['v'].x", "['v'].y[0]"]
    assert tu.tree_map(lambda a: a * 10, Vec(1, 2)).y == 20

    @tu.register_static
    class Cfg:
        def __eq__(self, other):
            return isinstance(other, Cfg)

        def __hash__(self):
            return 0

    c = Cfg()
    assert tu.tree_leaves([c, 1.0]) == [1.0]
    assert tu.tree_map(lambda a: a, [c, 1.0])[0] is c
    # A static node passes through jit as part of the structure (not traced).
    out = funcgrad.jit(lambda t: t[1] * 2.0)([c, 3.0])
    assert float(out) == 6.0


def test_funcgrad_tree_has_jax_short_names() -> None:
    # dir(jax.tree) of JAX 0.10.2
    names = ["all", "broadcast", "flatten", "flatten_with_path", "leaves", "leaves_with_path",
             "map", "map_with_path", "reduce", "reduce_associative", "static", "structure",
             "transpose", "unflatten"]
    assert sorted(funcgrad.tree.__all__) == names
    t = {"a": 1, "b": (2, None)}
    assert funcgrad.tree.leaves(t) == [1, 2]
    assert funcgrad.tree.map(lambda x, y: x + y, t, t) == {"a": 2, "b": (4, None)}
    leaves, td = funcgrad.tree.flatten(t)
    assert funcgrad.tree.unflatten(td, leaves) == t and funcgrad.tree.structure(t) == td
    assert funcgrad.tree.broadcast([1, {"a": 2}], [(3, 4), {"a": [5, 6]}]) == [
        (1, 1), {"a": [2, 2]}]
    assert funcgrad.tree.all([True, (1, 2)]) and funcgrad.tree.reduce(max, [1, (5, 3)]) == 5


def test_is_leaf_takes_path_as_jax() -> None:
    from funcgrad import tree_util as tu

    t = {"a": [1, 2], "b": [3, (4, 5)]}

    def il(p, x):
        return len(p) == 2 and isinstance(x, tuple)

    # jax.tree_util.tree_map_with_path(..., is_leaf=il, is_leaf_takes_path=True)
    out = tu.tree_map_with_path(lambda p, x: (tu.keystr(p), x), t, is_leaf=il,
                                is_leaf_takes_path=True)
    assert out == {"a": [("['a'][0]", 1), ("['a'][1]", 2)],
                   "b": [("['b'][0]", 3), ("['b'][1]", (4, 5))]}
    assert tu.tree_leaves_with_path(t, is_leaf=il, is_leaf_takes_path=True)[-1] == (
        (tu.DictKey("b"), tu.SequenceKey(1)), (4, 5))
    assert funcgrad.tree.map_with_path(lambda p, x, y: y, t, t, is_leaf=il,
                                       is_leaf_takes_path=True)["b"][1] == (4, 5)


def test_tree_static_and_is_tree_node_as_jax() -> None:
    import collections
    import dataclasses

    @funcgrad.tree_util.register_dataclass
    @dataclasses.dataclass
    class Op:
        x: float
        op: str = funcgrad.tree.static(default="add")

    f = funcgrad.tree.static(default=3)
    assert f.default == 3 and f.metadata["static"] is True  # as jax.tree.static(default=3)
    assert funcgrad.tree.leaves(Op(1.0, "mul")) == [1.0]
    assert funcgrad.tree.structure(Op(1.0, "mul")) != funcgrad.tree.structure(Op(1.0))
    nt = collections.namedtuple("nt", "a b")
    types = (list, tuple, dict, type(None), nt, int, np.ndarray, collections.OrderedDict,
             collections.defaultdict, Op)
    # JAX 0.10.2: [True, True, True, True, True, False, False, True, True] (+ registered Op)
    assert [tree_util.is_tree_node(t) for t in types] == [True] * 5 + [False] * 2 + [True] * 3
    assert tree_util.is_tree_node([1]) is False  # not a type


def test_register_dataclass_drop_fields_as_jax():
    # As JAX 0.10.2: dropped fields are not in the pytree; the class is called to rebuild,
    # so __post_init__ recomputes them, and dropped __init__ fields take their defaults.
    @dataclasses.dataclass
    class Derived:
        a: float
        b: float = dataclasses.field(init=False)

        def __post_init__(self):
            self.b = self.a * 2

    register_dataclass(Derived, data_fields=["a"], meta_fields=[], drop_fields=["b"])
    assert tree_leaves(Derived(1.0)) == [1.0]
    out = tree_map(lambda x: x + 1, Derived(1.0))
    assert (out.a, out.b) == (2.0, 4.0)

    @dataclasses.dataclass
    class WithDefault:
        a: float
        c: float = 0.0

    register_dataclass(WithDefault, data_fields=["a"], meta_fields=[], drop_fields=["c"])
    assert tree_map(lambda x: x + 1, WithDefault(1.0, 5.0)) == WithDefault(2.0, 0.0)

    @dataclasses.dataclass
    class Other:
        a: float

    with pytest.raises(ValueError, match="not fields"):
        register_dataclass(Other, data_fields=["a"], meta_fields=[], drop_fields=["zz"])
    assert tree_reduce(function=lambda x, y: x + y, tree=[1, 2]) == 3  # JAX's names


def test_register_dataclass_init_false_field_left_out_is_recomputed():
    # JAX 0.10.2 rebuilds by calling the class, so an init=False field that neither list
    # names is recomputed by __post_init__ (it was missing from the rebuilt instance)
    @dataclasses.dataclass
    class Scaled:
        a: float
        c: float = dataclasses.field(init=False)

        def __post_init__(self):
            self.c = self.a * 10

    register_dataclass(Scaled, data_fields=["a"], meta_fields=[])
    out = tree_map(lambda x: x + 1, Scaled(1.0))
    assert (out.a, out.c) == (2.0, 20.0)
    assert funcgrad.jit(lambda d: d)(Scaled(1.0)).c == 10.0
    # JAX's messages
    with pytest.raises(ValueError, match=r"must not overlap. Overlapping fields: \{'a'\}"):
        register_dataclass(Scaled, data_fields=["a"], meta_fields=["a"])
    with pytest.raises(TypeError, match="required when nodetype is not a dataclass"):
        register_dataclass(int)


def test_default_registry_as_jax():
    """jax.tree_util.default_registry (JAX 0.10.2): the same registry as tree_flatten's."""
    reg = tree_util.default_registry
    tree = {"b": 1, "a": (2, 3)}
    assert reg.flatten(tree) == tree_flatten(tree)
    assert reg.flatten({"a": [1, None]}, lambda x: isinstance(x, list))[0] == [[1, None]]
    assert reg.flatten_one_level(3) is None and reg.flatten_one_level_with_keys(3) is None
    assert reg.flatten_one_level({"b": 1, "a": 2}) == ((2, 1), ("a", "b"))
    assert reg.flatten_one_level_with_keys([5]) == (((SequenceKey(0), 5),), None)
    seen = []
    pairs, _ = reg.flatten_with_path({"a": [1, {"c": 2}]},
                                     lambda k, x: seen.append(k) or isinstance(x, dict) and k != ())
    assert seen[:3] == [(), (DictKey("a"),), (DictKey("a"), SequenceKey(0))]
    assert pairs[-1] == ((DictKey("a"), SequenceKey(1)), {"c": 2})
    assert reg.is_node(list) and reg.is_node(type(None)) and not reg.is_node(int)

    class Box:
        def __init__(self, v):
            self.v = v

    assert reg.register_node(Box, lambda b: ((b.v,), None), lambda aux, ch: Box(*ch)) is None
    assert tree_leaves(Box(4)) == [4] and tree_util.is_tree_node(Box)

    class Pair:
        def __init__(self, x, y):
            self.x, self.y = x, y

    reg.register_dataclass_node(Pair, ["x"], ["y"])
    assert tree_leaves(Pair(1, "m")) == [1]


def test_from_node_data_and_children_rebuilds_as_jax():
    reg = tree_util.default_registry
    point = collections.namedtuple("point", "x y")
    for tree in ({"a": [1, 2], "b": 3}, point(1, (2, 3)), collections.OrderedDict(b=1, a=2),
                 None, (1,), [None, {}]):
        td = tree_structure(tree)
        back = td.from_node_data_and_children(reg, td.node_data(), td.children())
        assert back == td and hash(back) == hash(td) and back.num_nodes == td.num_nodes
        assert back.unflatten(range(td.num_leaves)) == td.unflatten(range(td.num_leaves))
    leaf = tree_structure(0)
    assert str(leaf.from_node_data_and_children(reg, (tuple, None), [leaf] * 3)) == "PyTreeDef((*, *, *))"
    assert leaf.from_node_data_and_children(reg, None, []) == leaf
    with pytest.raises(ValueError, match="2 keys but 1 children"):
        leaf.from_node_data_and_children(reg, (dict, ["a", "b"]), [leaf])


def test_flatten_one_level_children_as_jax_gives_them():
    # JAX 0.10.2: a registered node's children as its flatten function returns them (a
    # tuple here); register_dataclass and register_static nodes give lists
    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b

    register_pytree_node(Pair, lambda p: ((p.a, p.b), "aux"), lambda aux, ch: Pair(*ch))
    assert tree_util.flatten_one_level(Pair(1, 2)) == ((1, 2), "aux")

    @register_dataclass
    @dataclasses.dataclass
    class Two:
        a: int
        b: int

    assert tree_util.flatten_one_level(Two(1, 2)) == ([1, 2], ())


def test_register_dataclass_and_checkify_take_jax_parameter_names() -> None:
    # JAX 0.10.2: register_dataclass(nodetype, data_fields, meta_fields, drop_fields),
    # checkify(f, errors)
    from funcgrad.experimental import checkify

    @dataclasses.dataclass
    class KW:
        x: float
        tag: str

    register_dataclass(nodetype=KW, data_fields=["x"], meta_fields=["tag"])
    assert tree_flatten(KW(1.0, "t"))[0] == [1.0]
    err, out = checkify.checkify(f=lambda x: x + 1)(1.0)
    assert err.get() is None and out == 2.0


def test_tree_namespace_is_jax_trees() -> None:
    import funcgrad

    # dir(jax.tree) in JAX 0.10.2, public names
    assert sorted(n for n in dir(funcgrad.tree) if not n.startswith("_")) == [
        "all", "broadcast", "flatten", "flatten_with_path", "leaves", "leaves_with_path", "map",
        "map_with_path", "reduce", "reduce_associative", "static", "structure", "transpose",
        "unflatten"]
