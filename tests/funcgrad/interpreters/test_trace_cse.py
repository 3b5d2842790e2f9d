"""CSE and 0/1 simplification while tracing (interpreters/trace_cse.py, staging's
simplify_operation): what they merge and rewrite, what they must leave alone, and that nested
derivatives keep their values (against sympy, orders up to 8) while their programs shrink."""

from __future__ import annotations

import numpy as np
import pytest
import sympy

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.avals import ShapedArray
from funcgrad.core import eval_trace, set_current_trace
from funcgrad.interpreters.staging import PartialEvalTrace, simplify_operation
from funcgrad.interpreters.trace_cse import operation_key
from funcgrad.ops.elementwise import add_p, mul_p, stop_gradient_p, sub_p
from tests.helpers import dev, host

F64 = ShapedArray((), np.dtype("float64"))


def _nest(f, k):
    for _ in range(k):
        f = funcgrad.grad(f)
    return f


def _recording():
    trace = PartialEvalTrace(eval_trace)
    return trace, trace.new_arg(F64)


# -- keys ---------------------------------------------------------------------------------------

def test_key_commutative_operands_in_either_order() -> None:
    trace, t = _recording()
    assert operation_key(mul_p, (t, 2.0), {}) == operation_key(mul_p, (2.0, t), {})
    assert operation_key(sub_p, (t, 2.0), {}) != operation_key(sub_p, (2.0, t), {})


@pytest.mark.parametrize("a,b", [(0.0, -0.0), (2, 2.0), (2.0, np.float32(2.0)),
                                 (1.0, np.array(1.0, np.float32))])
def test_key_scalars_by_value_and_type(a, b) -> None:
    trace, t = _recording()
    assert operation_key(add_p, (t, a), {}) != operation_key(add_p, (t, b), {})
    assert operation_key(add_p, (t, a), {}) == operation_key(add_p, (t, a), {})


def test_key_arrays_by_identity() -> None:
    trace, t = _recording()
    c1, c2 = np.ones(3), np.ones(3)
    assert operation_key(add_p, (t, c1), {}) != operation_key(add_p, (t, c2), {})


def test_key_refuses_effects_jaxprs_and_unhashable_params() -> None:
    from funcgrad.debug.callback import debug_callback_p
    from funcgrad.ops.jit import jit_p

    trace, t = _recording()
    assert operation_key(debug_callback_p, (t,), {}) is None
    assert operation_key(jit_p, (t,), {}) is None
    assert operation_key(mul_p, (t, t), {"bad": [1]}) is None
    assert operation_key(mul_p, (t, t), {"p": 0.0}) != operation_key(mul_p, (t, t), {"p": -0.0})


def test_merging_only_where_repeats_multiply() -> None:
    from funcgrad.interpreters.staging import merges_repeats

    assert not merges_repeats(eval_trace)
    assert merges_repeats(PartialEvalTrace(eval_trace))

    def f(x):
        return fnp.sin(x) * x

    np.testing.assert_allclose(funcgrad.vmap(funcgrad.grad(f))(np.ones(3)),
                               np.sin(1.0) + np.cos(1.0) * np.ones(3), rtol=1e-14)
    np.testing.assert_allclose(funcgrad.vmap(funcgrad.grad(funcgrad.grad(f)))(np.ones(3)),
                               2 * np.cos(1.0) - np.sin(1.0) * np.ones(3), rtol=1e-14)


# -- what the tangent recording merges -------------------------------------------------------------

def test_partial_eval_trace_stages_each_operation_once() -> None:
    trace, t = _recording()
    with set_current_trace(trace):
        a = fnp.sin(t) * 2.0
        b = 2.0 * fnp.sin(t)
        c = fnp.sin(t) - 2.0
    assert a is b
    assert c is not a
    assert [e.prim.name for e in trace.eqns] == ["sin", "mul", "sub"]


# -- simplification while tracing ------------------------------------------------------------

REWRITES = {
    "x*1": lambda x: x * 1.0,
    "1*x": lambda x: 1.0 * x,
    "x/1": lambda x: x / 1.0,
    "x+0": lambda x: x + 0.0,
    "0+x": lambda x: 0.0 + x,
    "x-0": lambda x: x - 0.0,
    "0-x": lambda x: 0.0 - x,
    "x*one_array": lambda x: x * dev(np.array(1.0)),
}


@pytest.mark.parametrize("name", list(REWRITES))
def test_each_rewrite_keeps_values_and_derivatives(name) -> None:
    rewrite = REWRITES[name]

    def f(x):  # the rewritten operation sits between nonlinear ones, at every order
        return fnp.sin(rewrite(fnp.exp(x) * x)) * x

    def plain(x):  # the same with the constant traced (nothing to rewrite)
        one, zero = fnp.cos(0.0 * x), fnp.sin(0.0 * x)
        y = fnp.exp(x) * x
        y = {"x*1": y * one, "1*x": one * y, "x/1": y / one, "x+0": y + zero,
             "0+x": zero + y, "x-0": y - zero, "0-x": zero - y, "x*one_array": y * one}[name]
        return fnp.sin(y) * x

    for k in range(4):
        for x0 in (-0.7, 0.3, 1.1):
            got = _nest(f, k)(x0)
            want = _nest(plain, k)(x0)
            np.testing.assert_allclose(host(got), host(want), rtol=1e-13, atol=1e-13,
                                       err_msg=f"{name} d^{k}")
            got_jit = funcgrad.jit(_nest(f, k))(x0)
            np.testing.assert_allclose(host(got_jit), host(want), rtol=1e-13, atol=1e-13)


def test_rewrites_leave_no_operation_behind() -> None:
    trace, t = _recording()
    with set_current_trace(trace):
        outs = [t * 1.0, 1.0 * t, t + 0.0, t - 0.0, t / 1.0]
    assert all(o is t for o in outs)
    assert trace.eqns == []
    with set_current_trace(trace):
        n = 0.0 - t
    assert [e.prim.name for e in trace.eqns] == ["neg"] and n is not t


def test_no_rewrite_that_changes_dtype_or_shape() -> None:
    trace = PartialEvalTrace(eval_trace)
    t32 = trace.new_arg(ShapedArray((), np.dtype("float32")))
    t3 = trace.new_arg(ShapedArray((3,), np.dtype("float64")))
    assert simplify_operation(mul_p, (t32, np.float64(1.0)), {}) is None   # promotes to f64
    assert simplify_operation(add_p, (t32, np.zeros(())), {}) is None
    assert simplify_operation(mul_p, (F64_tracer(trace), np.ones(3)), {}) is None  # broadcasts
    assert simplify_operation(mul_p, (t3, 1.0), {}) == [t3]


def F64_tracer(trace):
    return trace.new_arg(F64)


def test_stop_gradient_is_not_rewritten_while_tracing() -> None:
    trace, t = _recording()
    assert simplify_operation(stop_gradient_p, (t,), {}) is None
    f = lambda x: funcgrad.lax.stop_gradient(x * 1.0) * x  # noqa: E731
    assert float(funcgrad.grad(funcgrad.grad(f))(2.0)) == 0.0
    assert float(funcgrad.jit(funcgrad.grad(funcgrad.grad(f)))(2.0)) == 0.0


def test_float32_derivatives_stay_float32() -> None:
    x = np.float32(0.5)
    d = _nest(lambda x: fnp.sin(x) * fnp.exp(x) * 1.0 + 0.0, 4)
    assert np.asarray(host(d(x))).dtype == np.float32
    assert np.asarray(host(funcgrad.jit(d)(x))).dtype == np.float32


def test_concrete_results_are_never_shared() -> None:
    c = np.linspace(0.0, 1.0, 3)

    def f(x):
        a = fnp.sin(c)  # no tracer: computed now, a fresh array each time
        b = fnp.sin(c)
        assert a is not b
        z = fnp.floor(x)  # zero derivative: a concrete result too
        assert z is not fnp.floor(x)
        return fnp.sum(a * b) * x * x

    assert float(funcgrad.grad(funcgrad.grad(f))(1.5)) == pytest.approx(2 * np.sum(np.sin(c) ** 2))


def test_effects_run_as_often_as_written() -> None:
    seen = []

    def f(x):
        funcgrad.debug.callback(lambda v: seen.append(float(v)), x)
        funcgrad.debug.callback(lambda v: seen.append(float(v)), x)
        return fnp.sin(x) * x

    funcgrad.jit(_nest(f, 3))(0.5)
    assert seen == [0.5, 0.5]
    seen.clear()
    _nest(f, 3)(0.5)
    assert seen == [0.5, 0.5]


# -- nested derivatives: values (sympy) and program size -----------------------------------------

X = sympy.Symbol("x")
CASES = {
    "sin_exp": (lambda x: fnp.sin(x) * fnp.exp(x), sympy.sin(X) * sympy.exp(X)),
    "tanh_sin": (lambda x: fnp.tanh(fnp.sin(x) * x), sympy.tanh(sympy.sin(X) * X)),
}


# (tests/funcgrad/test_higher_order.py has orders 1-6 of tanh_sin and more, every nesting;
# sympy's 8th derivative of tanh_sin alone takes ten seconds)
@pytest.mark.parametrize("name,k", [("sin_exp", 6), ("sin_exp", 7), ("sin_exp", 8),
                                    ("tanh_sin", 6)])
def test_high_order_derivatives_match_sympy(name, k) -> None:
    fn, expr = CASES[name]
    d = sympy.diff(expr, X, k)
    x0 = 0.3
    want = float(sympy.N(d.subs(X, sympy.Float(x0, 30)), 30))
    tol = 1e-9 * max(abs(want), 1.0)
    assert abs(float(funcgrad.jit(_nest(fn, k))(x0)) - want) <= tol
    if name == "sin_exp" and k < 8:
        assert abs(float(_nest(fn, k)(x0)) - want) <= tol


def _nest_jvp(f, k):
    for _ in range(k):
        f = (lambda g: lambda x: funcgrad.jvp(g, (x,), (fnp.ones_like(x),))[1])(f)
    return f


@pytest.mark.parametrize("k", [6, 8])
def test_nested_jvp_matches_sympy(k) -> None:
    fn, expr = CASES["sin_exp"]
    want = float(sympy.N(sympy.diff(expr, X, k).subs(X, sympy.Float(0.3, 30)), 30))
    assert float(funcgrad.jit(_nest_jvp(fn, k))(0.3)) == pytest.approx(want, rel=1e-10)
    assert float(_nest_jvp(fn, k)(0.3)) == pytest.approx(want, rel=1e-10)


def test_nested_order_six_program_size() -> None:
    # Without CSE while tracing these were 595 and 1605 equations (~2.5x per order); merging
    # at every level keeps the traced program near its distinct values.
    # On the host: 0-d host constants are merged by value; device constants by identity (no
    # device-to-host read), so device programs merge less (344 equations here on the strict
    # test device).
    with funcgrad.default_device("cpu"):
        sin_exp = funcgrad.make_jaxpr(_nest(CASES["sin_exp"][0], 6))(0.3)
        tanh_sin = funcgrad.make_jaxpr(_nest(CASES["tanh_sin"][0], 6))(0.3)
        nest_jvp = funcgrad.make_jaxpr(_nest_jvp(CASES["tanh_sin"][0], 6))(0.3)
    assert len(sin_exp.jaxpr.eqns) <= 200
    assert len(tanh_sin.jaxpr.eqns) <= 900
    # forward over forward: 1877 equations before, 274 with it
    assert len(nest_jvp.jaxpr.eqns) <= 400


def test_rewrite_decisions_are_kept_per_operand_pattern() -> None:
    # simplify_operation keeps each decision by (primitive, 0/1 literals by value and type,
    # other operands' avals): asked again in any order, each pattern keeps its own answer.
    trace = PartialEvalTrace(eval_trace)
    t64, t32 = F64_tracer(trace), trace.new_arg(ShapedArray((), np.dtype("float32")))
    i64 = trace.new_arg(ShapedArray((), np.dtype("int64")))
    for _ in range(2):
        assert simplify_operation(mul_p, (t64, np.float64(1.0)), {}) == [t64]
        assert simplify_operation(mul_p, (t32, np.float64(1.0)), {}) is None  # promotes
        assert simplify_operation(mul_p, (t32, 1.0), {}) == [t32]  # a weak one keeps float32
        assert simplify_operation(mul_p, (np.float64(1.0), t64), {}) == [t64]
        assert simplify_operation(mul_p, (t64, 0.0), {}) is None  # inf * 0 is NaN
        assert simplify_operation(mul_p, (i64, 0), {}) is None  # the zero is not a tracer
        assert simplify_operation(mul_p, (t64, -0.0), {}) is None
        assert simplify_operation(add_p, (t64, -0.0), {}) == [t64]  # x + -0.0 is x
    # A rewrite into another equation binds again on the trace it is asked on.
    # (The second time, the trace's own CSE merges it with the first.)
    with set_current_trace(trace):
        n = len(trace.eqns)
        outs = [simplify_operation(sub_p, (0.0, t64), {}) for _ in range(2)]
    assert [e.prim.name for e in trace.eqns[n:]] == ["neg"]
    assert outs[0][0] is outs[1][0] and outs[0][0] is not t64
