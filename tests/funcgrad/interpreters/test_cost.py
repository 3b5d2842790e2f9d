"""Static cost estimates (``jit(f).lower(...).compile().cost_analysis()``): the defaults each
primitive category gives, the rules primitives register (dot_general, scan, cond), and
programs made by grad, vmap and nested jit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.core import Primitive
from funcgrad.interpreters import cost
from funcgrad.ir import ClosedJaxpr


def analysis(f, *args):
    return funcgrad.jit(f).lower(*args).compile().cost_analysis()


def test_keys_and_lowered_agree_with_compiled():
    x = np.ones((3, 4), np.float32)
    lowered = funcgrad.jit(lambda a: fnp.exp(a) + 1.0).lower(x)
    got = lowered.compile().cost_analysis()
    assert set(got) == {"flops", "transcendentals", "bytes accessed"}
    assert got == lowered.cost_analysis()
    # exp and add: one flop per element each; exp is transcendental
    assert got["flops"] == 24.0 and got["transcendentals"] == 12.0


@settings(max_examples=25, deadline=None)
@given(m=st.integers(1, 6), k=st.integers(1, 6), n=st.integers(1, 6), b=st.integers(1, 3))
def test_dot_general_is_2mnk(m, k, n, b):
    a, c = np.ones((b, m, k)), np.ones((b, k, n))
    got = analysis(lambda x, y: fnp.einsum("bij,bjk->bik", x, y), a, c)
    assert got["flops"] == 2.0 * b * m * n * k
    assert got["bytes accessed"] == 8.0 * (a.size + c.size + b * m * n)
    assert got["transcendentals"] == 0.0


def test_elementwise_reduction_and_data_movement_defaults():
    x = np.ones((5, 6))
    # a reduction costs one flop per element read; a transpose moves bytes only
    assert analysis(lambda a: fnp.sum(a, axis=0), x) == {
        "flops": 30.0, "transcendentals": 0.0, "bytes accessed": 8.0 * (30 + 6)}
    assert analysis(lambda a: a.T + 0.5, x)["flops"] == 30.0
    t = funcgrad.make_jaxpr(lambda a: a.T)(x)
    assert cost.jaxpr_cost(t) == cost.Cost(0.0, 0.0, 8.0 * 60)
    # comparisons and selects are elementwise too; only exp/log/sin/... are transcendental
    got = analysis(lambda a: fnp.where(a > 0.0, fnp.log(a), fnp.sqrt(a)), x)
    assert got["flops"] == 4 * 30.0 and got["transcendentals"] == 2 * 30.0


def test_loops_and_branches():
    x = np.ones(3)
    body = lambda i, c: c * 2.0 + 1.0  # noqa: E731
    got = analysis(lambda v: lax.fori_loop(0, 5, body, v), x)
    assert got["flops"] == 5 * 2 * 3.0  # the body (mul, add on 3 elements) 5 times
    got = analysis(lambda v: lax.scan(lambda c, xi: (c + xi, c * xi), 0.0, v), np.ones(7))
    assert got["flops"] == 7 * 2.0
    # cond: the costliest branch (exp: 3 flops, 3 transcendentals), plus the sum, the
    # predicate and its conversion to the branch index
    got = analysis(lambda v: lax.cond(fnp.sum(v) > 0, fnp.exp, lambda u: u, v), x)
    assert (got["flops"], got["transcendentals"]) == (3.0 + 3.0 + 1.0 + 1.0, 3.0)
    # a constant index picks its branch
    got = analysis(lambda v: lax.switch(1, [fnp.sin, fnp.cos, lambda u: u * u * u], v), x)
    assert (got["flops"], got["transcendentals"]) == (3.0, 3.0)
    # while: a trip count known only at run time, so the condition and body once (as XLA)
    got = analysis(lambda v: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2),
                                            (0, v)), np.ones(4))
    assert got["flops"] == 1.0 + 1.0 + 4.0


def test_transformed_programs():
    x = np.ones(4)
    # grad of sum(sin(x)**2): sin and cos are the transcendentals
    got = analysis(funcgrad.grad(lambda v: fnp.sum(fnp.sin(v) ** 2)), x)
    assert got["transcendentals"] == 8.0
    # vmap multiplies the work by the batch size
    one = analysis(lambda v: fnp.sum(fnp.tanh(v)), x)
    many = analysis(funcgrad.vmap(lambda v: fnp.sum(fnp.tanh(v))), np.ones((5, 4)))
    assert many["flops"] == 5 * one["flops"]
    assert many["transcendentals"] == 5 * one["transcendentals"]
    # a nested jit is priced through its jaxpr
    inner = funcgrad.jit(lambda v: fnp.exp(v) * 2.0)
    assert analysis(lambda v: inner(v) + 1.0, x)["flops"] == 12.0


def test_call_primitives_price_their_jaxpr_and_rules_override_the_default():
    x = np.ones(4)

    @funcgrad.custom_jvp
    def f(v):
        return fnp.exp(v)

    f.defjvp(lambda p, t: (f(p[0]), f(p[0]) * t[0]))
    closed = funcgrad.make_jaxpr(f)(x)
    assert cost.jaxpr_cost(closed).transcendentals == 4.0
    # A primitive's own rule wins over its category's default.
    p = Primitive("priced_for_test")
    eqn = funcgrad.make_jaxpr(lambda v: v + 1.0)(x).eqns[0]
    eqn = type(eqn)(p, eqn.invars, eqn.outvars, {}, eqn.source_info)
    assert cost.eqn_cost(eqn).flops == 0.0  # unknown category: data movement
    cost.cost_rules[p] = lambda e, jc: cost.Cost(7.0, 1.0, 2.0)
    try:
        assert cost.eqn_cost(eqn) == cost.Cost(7.0, 1.0, 2.0)
    finally:
        del cost.cost_rules[p]
    assert isinstance(closed, ClosedJaxpr)


@pytest.mark.parametrize("dtype, itemsize", [(np.float32, 4), (np.int64, 8), (np.bool_, 1)])
def test_bytes_from_avals(dtype, itemsize):
    x = np.ones((2, 3), dtype)
    closed = funcgrad.make_jaxpr(lambda a: a.reshape(6))(x)
    assert cost.jaxpr_cost(closed).bytes_accessed == 2 * 6 * itemsize


def test_rules_of_scans_arg_reductions_scatters_and_two_output_elementwise():
    x = np.ones((4, 5))
    for f in (lambda a: fnp.cumsum(a, axis=1), lambda a: fnp.cumprod(a, axis=0),
              lambda a: lax.cummax(a, axis=1), lambda a: fnp.argmax(a, axis=0),
              lambda a: fnp.argmin(a, axis=1)):
        assert analysis(f, x)["flops"] == 20.0  # one op per element read
    # a combining scatter: one op per update (3 rows of 5), repeated indices included
    idx = np.array([0, 0, 3])
    for method in ("add", "multiply", "min", "max"):
        got = analysis(lambda a, method=method: getattr(fnp.at(a)[idx], method)(2.0), x)
        assert got["flops"] == 15.0, method
    assert analysis(lambda a: fnp.at(a)[idx].set(2.0), x)["flops"] == 0.0  # writes only
    # frexp: two results per element
    assert analysis(lambda a: fnp.frexp(a)[0], x)["flops"] == 40.0
