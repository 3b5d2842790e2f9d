"""The batching interpreter: BatchTrace/BatchTracer, batch_flat, and the rule helpers."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev, host, normal_sampler

import funcgrad
from funcgrad.core import Primitive, eval_trace, primitive_registry
from funcgrad.errors import ConcretizationError, MissingRuleError
from funcgrad.interpreters import batching
from funcgrad.interpreters.batching import (
    BatchTrace,
    BatchTracer,
    batch_flat,
    shift_axes,
    shift_axis,
)
from funcgrad.ops import _batching_util as bu
from funcgrad.ops import elementwise as ew
from funcgrad.ops import reductions as red
from funcgrad.ops import shape as sh

rng = np.random.default_rng(1)


rnd = normal_sampler(rng)


# ---------------------------------------------------------------------------------------------
# batch_flat and the tracer


def test_batch_flat_with_batch_dim_in_the_middle():
    x = rnd(3, 4, 5)  # batch of 4 along axis 1; each example is (3, 5)
    outs, dims = batch_flat(lambda v: [red.reduce_sum(ew.sin(v), (1,))], dev([x]), [1], 4)
    out = np.moveaxis(host(outs[0]), dims[0], 0)
    assert_allclose(out, np.stack([np.sin(x[:, i, :]).sum(1) for i in range(4)]))


def test_negative_dims_and_out_of_range_dims():
    x = rnd(3, 4)
    outs, dims = batch_flat(lambda v: [ew.sin(v)], dev([x]), [-1], 4)
    assert_allclose(np.moveaxis(host(outs[0]), dims[0], 0), np.sin(x).T)
    with pytest.raises(ValueError, match="out of range"):
        batch_flat(lambda v: [v], [x], [2], 4)


def test_tracer_aval_drops_the_batch_axis():
    seen = {}

    def f(v):
        seen["aval"] = v.aval
        seen["shape"] = v.shape
        seen["type"] = type(v)
        return [v]

    outs, dims = batch_flat(f, [np.zeros((2, 5, 3), np.float32)], [1], 5)
    assert seen["type"] is BatchTracer
    assert seen["shape"] == (2, 3) and seen["aval"].str_short() == "f32[2,3]"
    assert dims == [1] and host(outs[0]).shape == (2, 5, 3)


def test_unbatched_values_skip_rules_and_stay_plain():
    c = rnd(3)

    def f(v):
        k = ew.sin(dev(c))  # no batched operand: computed once, not a tracer
        assert not isinstance(k, funcgrad.core.Tracer)
        return [k, ew.mul(v, k)]

    outs, dims = batch_flat(f, dev([rnd(4, 3)]), [0], 4)
    assert dims == [None, 0]
    assert_allclose(outs[0], np.sin(c))


def test_outputs_of_other_traces_are_unbatched():
    outs, dims = batch_flat(lambda v: [v, 2.0], [rnd(4)], [None], 4)
    assert dims == [None, None]


def test_nested_batch_traces_treat_outer_tracers_as_constants():
    x, y = rnd(4, 3), rnd(5, 3)
    rec = []

    def outer(xb):
        def inner(yb):
            rec.append((xb._trace is not yb._trace, yb._trace.parent is xb._trace))
            return [ew.mul(xb, yb)]

        o, d = batch_flat(inner, dev([y]), [0], 5)
        return [bu.bdim_at_front(o[0], d[0], 5)]

    outs, dims = batch_flat(outer, dev([x]), [0], 4)
    assert rec == [(True, True)]
    assert_allclose(bu.bdim_at_front(outs[0], dims[0], 4), x[:, None, :] * y[None, :, :])


def test_rules_get_the_dims_and_params():
    p = Primitive("test_batching_probe")
    p.def_impl(lambda x, *, k: [x * k])
    p.def_abstract_eval(lambda a, *, k: [a])
    seen = []

    def rule(axis_size, vals, dims, *, k):
        seen.append((axis_size, list(dims), k))
        return [p.bind(vals[0], k=k)], [dims[0]]

    batching.batch_rules[p] = rule
    try:
        outs, dims = batch_flat(lambda v, c: [p.bind(v, k=3)], [dev(rnd(2, 6)), 1.0], [1, None], 6)
        assert seen == [(6, [1], 3)] and dims == [1]
    finally:
        del batching.batch_rules[p]
        primitive_registry.remove(p)


def test_missing_rule_names_the_primitive():
    p = Primitive("test_batching_norule")
    p.def_impl(lambda x: [x])
    p.def_abstract_eval(lambda a: [a])
    try:
        with pytest.raises(MissingRuleError, match="test_batching_norule"):
            funcgrad.vmap(lambda v: p.bind(v))(dev(rnd(3)))
        # Unbatched operands never need the rule.
        out = funcgrad.vmap(lambda v: ew.mul(v, p.bind(2.0)))(dev(rnd(3)))
        assert host(out).shape == (3,)
    finally:
        primitive_registry.remove(p)


def test_to_concrete_value_is_none_and_bool_explains():
    def f(v):
        assert v.to_concrete_value() is None
        bool(v)
        return [v]

    with pytest.raises(ConcretizationError) as info:
        batch_flat(f, [np.ones(3)], [0], 3)
    msg = str(info.value)
    assert "batched" in msg and "funcgrad.numpy.where" in msg and "test_batching.py" in msg


def test_trace_records_axis_size_and_name():
    seen = {}

    def f(v):
        seen["trace"] = v._trace
        return [v]

    batch_flat(f, [np.ones(3)], [0], 3, axis_name="i")
    t = seen["trace"]
    assert isinstance(t, BatchTrace) and t.axis_size == 3 and t.axis_name == "i"
    assert t.parent is eval_trace


def test_shift_axes():
    assert shift_axis(0, 0) == 1 and shift_axis(2, 1) == 3 and shift_axis(0, 2) == 0
    assert shift_axis(1, None) == 1
    assert shift_axes((0, 1, 2), 1) == (0, 2, 3) and shift_axes((1,), None) == (1,)


# ---------------------------------------------------------------------------------------------
# rule helpers (funcgrad.ops._batching_util)


def test_moveaxis_to_front_and_bdim_at_front():
    x = rnd(2, 5, 3)
    assert bu.moveaxis_to_front(x, None) is x and bu.moveaxis_to_front(x, 0) is x
    assert_allclose(bu.moveaxis_to_front(dev(x), 1), np.moveaxis(x, 1, 0))
    assert_allclose(bu.bdim_at_front(dev(x), 2, 3), np.moveaxis(x, 2, 0))
    assert_allclose(bu.bdim_at_front(dev(x), None, 4), np.broadcast_to(x, (4, 2, 5, 3)))
    assert_allclose(bu.bdim_at_front(2.5, None, 3), np.full(3, 2.5))


def test_move_bdim():
    x = rnd(4, 2)
    assert_allclose(bu.move_bdim(dev(x), 0, -1, 4), x.T)
    assert_allclose(bu.move_bdim(dev(x), 1, 0, 2), x.T)
    c = rnd(2)
    assert_allclose(bu.move_bdim(dev(c), None, 1, 3), np.broadcast_to(c[:, None], (2, 3)))
    assert_allclose(bu.move_bdim(dev(c), None, -2, 3), np.broadcast_to(c, (3, 2)))


def test_list_helpers():
    a, b = rnd(3, 2), rnd(3)
    out = bu.all_bdims_at_front(2, dev([a, b]), [1, None])
    assert [host(o).shape for o in out] == [(2, 3), (2, 3)]
    out = bu.batched_at_front(dev([a, b]), [1, None])
    assert [host(o).shape for o in out] == [(2, 3), (3,)]


def test_helpers_differentiate():
    x = rnd(3, 2)

    def f(x):
        y = bu.bdim_at_front(x, 1, 2)
        z = bu.bdim_at_front(red.reduce_sum(x, (0,)), None, 3)
        return red.reduce_sum(ew.add(ew.sin(y), red.reduce_sum(ew.mul(z, z))))

    g = funcgrad.grad(f)(dev(x))
    s = x.sum(0)
    # sum(sin(y)) + 6 * sum(z * z), and sum(z * z) = 3 * sum(s * s)
    assert_allclose(g, np.cos(x) + 6 * 3 * 2 * np.broadcast_to(s, (3, 2)), rtol=1e-12)


def test_batch_trace_under_staging():
    jaxpr = funcgrad.make_jaxpr(funcgrad.vmap(lambda v: ew.sin(sh.reshape(v, (3, 1)))))(rnd(4, 3))
    assert "f64[4,3,1]" in str(jaxpr)


def test_errors_from_a_rule_say_which_primitive_was_batched():
    p = Primitive("test_batching_raises")
    p.def_impl(lambda x: [x])
    p.def_abstract_eval(lambda a: [a])

    def rule(axis_size, vals, dims):
        raise ValueError("boom")

    batching.batch_rules[p] = rule
    try:
        with pytest.raises(ValueError, match="boom") as info:
            funcgrad.vmap(lambda v: p.bind(v), in_axes=1)(dev(rnd(2, 3)))
        notes = " ".join(getattr(info.value, "__notes__", []))
        assert "test_batching_raises" in notes and "batch of 3" in notes and "[1]" in notes
    finally:
        del batching.batch_rules[p]
        primitive_registry.remove(p)
