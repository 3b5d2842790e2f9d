"""funcgrad.jaxpr_codec: values, avals, treedefs and closed jaxprs survive JSON exactly."""

from __future__ import annotations

import collections
import json

import numpy as np
import pytest
from helpers import host
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad
from funcgrad import tree_util
from funcgrad.avals import ShapedArray, float0
from funcgrad.jaxpr_codec import (
    Decoder,
    Encoder,
    ExportError,
    decode_aval,
    decode_closed_jaxpr,
    decode_treedef,
    encode_aval,
    encode_closed_jaxpr,
    encode_treedef,
    param_codecs,
    type_codecs,
)
from funcgrad.ops.indexing import GatherScatterMode, Operand, Slice


def _through_json(value):
    data = json.loads(json.dumps(Encoder().value(value), allow_nan=False))
    return Decoder().value(data)


@pytest.mark.parametrize("value", [
    None, True, 0, -(2 ** 70), "mode", 1.5, -0.0, float("inf"), 1e-310, 2 - 3j,
    (1, (2, 3), ()), [1, "a"], {"k": (1,), 2: None}, frozenset({1, 2}),
    np.dtype("float32"), np.dtype("complex64"), np.dtype(bool), float0,
    np.float32(0.1), np.int8(-3), np.uint64(2 ** 64 - 1), np.bool_(True),
    Slice(1, None, -2), Operand(3), (Slice(None, None, None), Operand(0)), Ellipsis,
    (None, Ellipsis), slice(1, None, 2), GatherScatterMode.FILL_OR_DROP,
], ids=repr)
def test_values_round_trip(value):
    got = _through_json(value)
    assert type(got) is type(value)
    assert got == value or (isinstance(value, float) and repr(got) == repr(value))


def test_nan_float_round_trips():
    assert np.isnan(_through_json(float("nan")))


def test_scalar_types_and_primitives():
    assert _through_json(np.float32) is np.float32
    prim = funcgrad.ops.elementwise.sin_p
    assert _through_json(prim) is prim


@given(hnp.arrays(st.sampled_from([np.float64, np.float32, np.float16, np.int32, np.uint8,
                                   np.int64, np.complex128, np.bool_]),
                  hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)))
def test_arrays_keep_every_bit(a):
    got = host(_through_json(a))
    assert got.dtype == a.dtype and got.shape == a.shape and got.tobytes() == a.tobytes()


def test_avals():
    for a in (ShapedArray((2, 3), np.float32), ShapedArray((), np.float64, weak_type=True),
              ShapedArray((4,), float0)):
        got = decode_aval(json.loads(json.dumps(encode_aval(a))))
        assert (got.shape, got.dtype, got.weak_type) == (a.shape, a.dtype, a.weak_type)
    with pytest.raises(ExportError, match="unknown dtype"):
        decode_aval({"shape": [], "dtype": "float128x", "weak": False, "device": False})
    with pytest.raises(ExportError, match="not one funcgrad computes with"):
        decode_aval({"shape": [], "dtype": "str", "weak": False, "device": False})


def test_treedefs():
    point = collections.namedtuple("Point", "x y")
    trees = [1, (1, 2), [1, {"b": 2, "a": (3, None)}], {}, (), None,
             collections.OrderedDict([("z", 1), ("a", 2)]), point(1, [2])]
    for t in trees:
        tree = tree_util.tree_structure(t)
        data = json.loads(json.dumps(encode_treedef(tree)))
        back = decode_treedef(data)
        assert repr(back) == repr(tree) and back.num_leaves == tree.num_leaves
        assert encode_treedef(back) == data


def test_unknown_tag_and_malformed_values():
    with pytest.raises(ExportError, match="unknown value kind 'nope'"):
        Decoder().value({"$": "nope", "v": 1})
    with pytest.raises(ExportError, match="malformed value"):
        Decoder().value({"x": 1})
    with pytest.raises(ExportError, match="malformed float"):
        Decoder().value({"$": "float", "v": "one"})
    with pytest.raises(ExportError, match="malformed 'indexing.GatherScatterMode' entry"):
        Decoder().value({"$": "indexing.GatherScatterMode", "v": "SOMETIMES"})
    with pytest.raises(ExportError, match="malformed 'tuple' entry"):
        Decoder().value({"$": "tuple", "v": 3})


def test_unencodable_value_names_the_primitive_and_param():
    closed = funcgrad.make_jaxpr(lambda x: x * 2)(np.ones(2))
    eqn = closed.jaxpr.eqns[0]
    closed.jaxpr.eqns[0] = eqn.replace(params={"fn": lambda: 0})
    with pytest.raises(ExportError, match="primitive 'mul': its parameter 'fn' holds the "
                                          "Python callable"):
        encode_closed_jaxpr(closed)


def test_nested_jaxprs_print_the_same():
    def f(x):
        y = funcgrad.lax.scan(lambda c, v: (c + v, c * v), 0.0, x)[1]
        return funcgrad.cond(y.sum() > 0, lambda a: a * 2, lambda a: -a, y)

    closed = funcgrad.make_jaxpr(f)(np.arange(3.0))
    back = decode_closed_jaxpr(json.loads(json.dumps(encode_closed_jaxpr(closed))))
    assert str(back) == str(closed)


def test_tables_are_keyed_as_documented():
    assert Slice in type_codecs and Operand in type_codecs
    names = {(p.name, k) for p, k in param_codecs}
    assert ("custom_jvp_call", "jvp") in names and ("remat", "policy") in names


def test_primitives_are_named_by_their_first_owner():
    from funcgrad.core import Primitive

    impostor = Primitive("sin")  # a later primitive with a library name
    impostor.def_impl(lambda x: [x])
    impostor.def_abstract_eval(lambda a: [a])
    closed = funcgrad.make_jaxpr(lambda x: funcgrad.numpy.sin(x))(np.ones(2))
    back = decode_closed_jaxpr(json.loads(json.dumps(encode_closed_jaxpr(closed))))
    assert back.eqns[0].prim is funcgrad.ops.elementwise.sin_p
    closed.jaxpr.eqns[0] = closed.jaxpr.eqns[0].replace(prim=impostor)
    with pytest.raises(ExportError, match="another primitive was made earlier with the same"):
        encode_closed_jaxpr(closed)
