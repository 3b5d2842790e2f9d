"""The jaxpr IR: make_jaxpr golden strings, typecheck, eval_jaxpr, DCE, source lines."""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.ir import dce_jaxpr, eval_jaxpr, typecheck_jaxpr


def test_golden_sin_sum() -> None:
    jaxpr = funcgrad.make_jaxpr(lambda x: fnp.sum(fnp.sin(x)))(np.ones(3))
    # JAX's layout: 80 columns at most, else one equation a line
    assert str(jaxpr) == (
        "{ lambda ; a:f64[3]. let\n"
        "    b:f64[3] = sin a\n"
        "    c:f64[] = reduce_sum[axes=(0,)] b\n"
        "  in (c,) }"
    )


def test_golden_weak_scalar_literal_keeps_float32() -> None:
    jaxpr = funcgrad.make_jaxpr(lambda x: x * 2.0)(np.ones(2, np.float32))
    # the literal prints in the dtype it takes in the operation, with its type (JAX's)
    assert str(jaxpr) == "{ lambda ; a:f32[2]. let b:f32[2] = mul a 2.0:f32[] in (b,) }"


def test_golden_two_args_and_tuple_output() -> None:
    jaxpr = funcgrad.make_jaxpr(lambda x, y: (x + y, x * y))(np.ones(3), np.ones(3))
    assert str(jaxpr) == (
        "{ lambda ; a:f64[3] b:f64[3]. let\n"
        "    c:f64[3] = add a b\n"
        "    d:f64[3] = mul a b\n"
        "  in (c, d) }"
    )


def test_golden_short_outputs_and_unread_results() -> None:
    # what jax.make_jaxpr prints (JAX 0.10.2, x64): literal results typed, `_` for a result
    # nothing reads, a one-result tuple with its comma, no equations as two spaces
    jaxpr = funcgrad.make_jaxpr(lambda x, y: (x, y * 2, 3.0))(1.0, 2)
    assert str(jaxpr) == (
        "{ lambda ; a:f64[] b:i64[]. let c:i64[] = mul b 2:i64[] in (a, c, 3.0:f64[]) }"
    )
    assert str(funcgrad.make_jaxpr(lambda: fnp.float32(2))()) == (
        "{ lambda ; . let  in (2.0:f32[],) }"
    )
    jaxpr = funcgrad.make_jaxpr(lambda x: x * 0.1)(np.float32(1.0))
    assert str(jaxpr) == (
        "{ lambda ; a:f32[]. let b:f32[] = mul a 0.10000000149011612:f32[] in (b,) }"
    )
    jaxpr = funcgrad.make_jaxpr(lambda x: fnp.linalg.eigh(x)[1])(np.eye(2))
    assert str(jaxpr) == (
        "{ lambda ; a:f64[2,2]. let _:f64[2] b:f64[2,2] = eigh[lower=True] a in (b,) }"
    )


def test_golden_nested_jit_prints_name_first_and_indents_its_jaxpr() -> None:
    # jax.make_jaxpr's text for the same program (JAX 0.10.2, x64), but for JAX's
    # out_sharding=None: the called program's arguments and results take the caller's names
    c = np.arange(3.0)
    jaxpr = funcgrad.make_jaxpr(
        lambda x: fnp.sum(funcgrad.jit(lambda a: a * 2.0 + c)(x)) + 3)(np.ones(3))
    assert str(jaxpr) == (
        "{ lambda ; a:f64[3]. let\n"
        "    b:f64[3] = jit[\n"
        "      name=<lambda>\n"
        "      jaxpr={ lambda c:f64[3]; a:f64[3]. let\n"
        "          d:f64[3] = mul a 2.0:f64[]\n"
        "          b:f64[3] = add d c\n"
        "        in (b,) }\n"
        "    ] a\n"
        "    e:f64[] = reduce_sum[axes=(0,)] b\n"
        "    f:f64[] = add e 3.0:f64[]\n"
        "  in (f,) }"
    )


def test_golden_constvar_from_closure() -> None:
    w = np.arange(3.0)
    jaxpr = funcgrad.make_jaxpr(lambda x: x * w)(np.ones(3))
    assert str(jaxpr) == "{ lambda a:f64[3]; b:f64[3]. let c:f64[3] = mul b a in (c,) }"
    assert jaxpr.consts[0] is w


def test_long_jaxpr_prints_one_equation_per_line() -> None:
    def f(x):
        for _ in range(6):
            x = fnp.sin(x) * x
        return x

    text = str(funcgrad.make_jaxpr(f)(np.ones(4)))
    assert text.startswith("{ lambda ; a:f64[4]. let\n")
    assert text.count("\n") >= 12
    assert text.rstrip().endswith("}")


def test_pytree_inputs_and_outputs() -> None:
    jaxpr = funcgrad.make_jaxpr(lambda d: {"s": d["a"] + d["b"]})({"a": 1.0, "b": np.ones(2)})
    assert len(jaxpr.jaxpr.invars) == 2
    assert [str(a) for a in jaxpr.out_avals] == ["float64[2]"]  # JAX's str (x64)


def test_typecheck_eval_and_dce() -> None:
    def f(x):
        unused = fnp.exp(x)  # noqa: F841
        return fnp.sin(x) * 3.0

    closed = funcgrad.make_jaxpr(f)(np.linspace(0, 1, 5))
    typecheck_jaxpr(closed.jaxpr)
    (out,) = eval_jaxpr(closed.jaxpr, closed.consts, np.linspace(0, 1, 5))
    np.testing.assert_allclose(out, np.sin(np.linspace(0, 1, 5)) * 3.0)
    pruned, used = dce_jaxpr(closed.jaxpr)
    assert [e.prim.name for e in pruned.eqns] == ["sin", "mul"]
    assert used == [True]


def test_equations_record_user_source_line() -> None:
    def f(x):
        return fnp.sin(x)  # the line recorded

    closed = funcgrad.make_jaxpr(f)(1.0)
    info = closed.eqns[0].source_info
    assert info.filename == __file__
    assert "the line recorded" in open(__file__).read().splitlines()[info.lineno - 1]


def test_shape_error_under_tracing_names_primitive_shapes_and_line() -> None:
    def f(x, y):
        return x + y  # bad broadcast

    with pytest.raises(funcgrad.ShapeError) as e:
        funcgrad.make_jaxpr(f)(np.ones(3), np.ones(4))
    msg = str(e.value)
    assert "add" in msg and "(3,)" in msg and "(4,)" in msg
    assert __file__ in msg


def test_shape_error_eager_names_primitive_and_shapes() -> None:
    with pytest.raises(funcgrad.ShapeError) as e:
        fnp.add(np.ones((2, 3)), np.ones((4,)))
    msg = str(e.value)
    assert "add" in msg and "(2, 3)" in msg and "(4,)" in msg


def test_closed_jaxpr_has_jaxs_accessors() -> None:
    # As JAX 0.10.2's ClosedJaxpr: constvars/invars/outvars of its jaxpr, literals (the
    # constants), pretty_print() (the text str gives).
    c = np.arange(3.0)
    closed = funcgrad.make_jaxpr(lambda x: fnp.sin(x) + c)(np.ones(3))
    assert closed.invars == closed.jaxpr.invars and closed.outvars == closed.jaxpr.outvars
    assert closed.constvars == closed.jaxpr.constvars and len(closed.constvars) == 1
    assert closed.literals is closed.consts
    assert closed.pretty_print() == str(closed) == closed.jaxpr.pretty_print(source_info=True)
    assert [e.primitive.name for e in closed.eqns] == ["sin", "add"]


def test_make_jaxpr_refuses_unhashable_static_arguments() -> None:
    # As JAX 0.10.2: "ValueError: Non-hashable static arguments are not supported".
    with pytest.raises(ValueError, match="non-hashable static arguments are not supported"):
        funcgrad.make_jaxpr(lambda a, n: a * n, static_argnums=1)(np.ones(2), np.ones(2))
    with pytest.raises(ValueError, match="static argument 1 is unhashable \\(list\\)"):
        funcgrad.make_jaxpr(lambda a, n: a * len(n), static_argnums=-1)(np.ones(2), [1, 2])
    closed = funcgrad.make_jaxpr(lambda a, n: a * len(n), static_argnums=1)(np.ones(2), (1, 2))
    assert "mul" in str(closed)


def test_make_jaxpr_static_argnums_must_fit_the_signature() -> None:
    # As JAX 0.10.2: "ValueError: ... static_argnums=(3,), but only accepts 1 positional
    # arguments" (it was ignored and the argument traced); defaults and *args are fine.
    with pytest.raises(ValueError, match="static_argnums contains 3, but <lambda> takes only 1"):
        funcgrad.make_jaxpr(lambda a: a, static_argnums=3)(np.ones(2))
    assert "mul" in str(funcgrad.make_jaxpr(lambda a, n=2: a * n, static_argnums=1)(np.ones(2)))
    assert "mul" in str(funcgrad.make_jaxpr(lambda *a: a[0] * 2, static_argnums=3)(np.ones(2)))


def test_effects_of_callbacks_as_jaxs() -> None:
    # JAX: {OrderedIOEffect} / {IOEffect} for io_callback, {DebugEffect} for debug.print,
    # inner jaxprs' effects included, set() for a pure program
    from funcgrad.experimental import io_callback

    def io(ordered):
        return lambda x: io_callback(lambda a: a, funcgrad.ShapeDtypeStruct((), np.float64), x,
                                     ordered=ordered)

    def printing(x):
        funcgrad.debug.print("{}", x)
        return x

    names = {}
    for key, f in [("ordered", io(True)), ("io", io(False)), ("print", printing),
                   ("nested", lambda x: funcgrad.lax.cond(x > 0, printing, lambda y: y, x)),
                   ("pure", lambda x: x * 2),
                   ("ordered_print", lambda x: funcgrad.debug.print("{}", x, ordered=True)),
                   ("ordered_callback", funcgrad.grad(
                       lambda x: funcgrad.debug.callback(print, x, ordered=False) or x))]:
        closed = funcgrad.make_jaxpr(f)(1.0)
        assert closed.effects == closed.jaxpr.effects
        names[key] = sorted(map(repr, closed.effects))
    assert names == {"ordered": ["OrderedIOEffect"], "io": ["IOEffect"],
                     "print": ["DebugEffect"], "nested": ["DebugEffect"], "pure": [],
                     "ordered_print": ["OrderedDebugEffect"],
                     "ordered_callback": ["DebugEffect"]}
    # JAX exports the effect types: isinstance checks on jaxpr.effects
    closed = funcgrad.make_jaxpr(lambda x: funcgrad.debug.callback(print, x, ordered=True))(1.0)
    assert [type(e) for e in closed.effects] == [funcgrad.debug.OrderedDebugEffect]


def test_core_eval_jaxpr_and_jaxpr_as_fun_as_jax() -> None:
    # jax.core.eval_jaxpr(jaxpr, consts, *args, propagate_source_info=True) and
    # jax.extend.core.jaxpr_as_fun(closed): lists of results, transformable
    from funcgrad.core import eval_jaxpr as core_eval_jaxpr
    from funcgrad.ir import jaxpr_as_fun

    w = np.array([1.0, 2.0])
    closed = funcgrad.make_jaxpr(lambda x: fnp.sin(x) * w)(np.zeros(2))
    x = np.array([0.5, 1.0])
    (out,) = core_eval_jaxpr(closed.jaxpr, closed.consts, x)
    np.testing.assert_allclose(out, np.sin(x) * w)
    (out2,) = jaxpr_as_fun(closed)(x)
    np.testing.assert_allclose(out2, out)
    g = funcgrad.grad(lambda v: fnp.sum(jaxpr_as_fun(closed)(v)[0]))(x)
    np.testing.assert_allclose(g, np.cos(x) * w)

    def line_of_replay(propagate: bool) -> int:
        staged = funcgrad.make_jaxpr(lambda v: core_eval_jaxpr(
            closed.jaxpr, closed.consts, v, propagate_source_info=propagate))(x)
        return staged.eqns[0].source_info.lineno

    original = closed.eqns[0].source_info.lineno
    assert line_of_replay(True) == original
    assert line_of_replay(False) != original  # the replaying line, as JAX's
    with pytest.raises(TypeError, match="closed.jaxpr and closed.consts"):
        core_eval_jaxpr(closed, closed.consts, x)
    with pytest.raises(TypeError, match="1 constvars, got 0 consts"):
        core_eval_jaxpr(closed.jaxpr, [], x)
