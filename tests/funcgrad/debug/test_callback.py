"""debug.callback / debug.print / call_hook: run with concrete values when the computation
runs, eagerly, under jit (every call), under vmap (per example), never removed by DCE."""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.debug import call_hook, callback


def test_callback_eager_and_every_jit_call():
    seen = []

    def f(x):
        callback(lambda v: seen.append(np.asarray(v).tolist()), x * 2)
        return x + 1

    f(np.array([1.0]))
    jf = funcgrad.jit(f)
    jf(np.array([2.0]))
    jf(np.array([3.0]))
    assert seen == [[2.0], [4.0], [6.0]]


def test_callback_survives_dce_and_grad():
    seen = []

    def f(x):
        callback(lambda v: seen.append(float(v)), x)   # result unused
        return x * x

    g = funcgrad.jit(funcgrad.grad(f))(3.0)
    assert float(g) == 6.0 and seen == [3.0]


def test_callback_under_vmap_per_example():
    seen = []
    funcgrad.vmap(lambda x: callback(lambda v: seen.append(float(v)), x) or x)(
        np.array([1.0, 2.0, 3.0]))
    assert seen == [1.0, 2.0, 3.0]


def test_print(capsys):
    funcgrad.jit(lambda x: funcgrad.debug.print("x={} y={y}", x, y=x * 2) or x)(np.array(1.5))
    assert capsys.readouterr().out == "x=1.5 y=3.0\n"


def test_call_hook_replaces_values_eager_and_jit():
    assert call_hook(lambda g: g * 2, np.array([1.0]))[0].tolist() == [2.0]
    f = funcgrad.jit(lambda x: call_hook(lambda g: g * 3, x)[0] + 1)
    assert f(np.array([1.0])).tolist() == [4.0]
    keep = funcgrad.jit(lambda x: call_hook(lambda g: None, x)[0])
    assert keep(np.array([5.0])).tolist() == [5.0]


def test_call_hook_bad_results():
    with pytest.raises(ValueError, match="shape"):
        call_hook(lambda g: g[:1], np.ones(3), name="myhook")
    with pytest.raises(TypeError, match="myhook returned 2 values; expected 1"):
        call_hook(lambda g: (g, g), np.ones(3), name="myhook")
    with pytest.raises(ValueError, match="shape"):
        funcgrad.jit(lambda x: call_hook(lambda g: g[:1], x)[0])(np.ones(3))


def test_call_hook_vmap():
    out = funcgrad.vmap(lambda x: call_hook(lambda g: g * fnp.sum(g), x)[0])(
        np.array([[1.0, 2.0], [3.0, 4.0]]))
    np.testing.assert_allclose(out, [[3.0, 6.0], [21.0, 28.0]])


# ---------------------------------------------------------------------------------------------
# JAX's documented behaviour of debug.print / debug.callback / debug.breakpoint


def _traced_sin(x):
    funcgrad.debug.print("x: {}", x)
    y = fnp.sin(x)
    funcgrad.debug.print("y: {y}", y=y)
    return fnp.sum(y)


def test_print_under_vmap_prints_each_element_in_program_order(capsys):
    # JAX's debugging guide: vmap prints every element of x, then every element of y
    xs = np.arange(3.0)
    for fn in (funcgrad.vmap(_traced_sin), funcgrad.jit(funcgrad.vmap(_traced_sin))):
        fn(xs)
        want = [f"x: {v}" for v in xs] + [f"y: {np.sin(v)}" for v in xs]
        assert capsys.readouterr().out.splitlines() == want


def test_print_under_differentiation_shows_primals_and_keeps_derivatives(capsys):
    want = ["x: 1.0", f"y: {np.sin(1.0)}"]
    for g in (funcgrad.grad(_traced_sin), funcgrad.jit(funcgrad.grad(_traced_sin))):
        assert float(g(1.0)) == np.cos(1.0)
        assert capsys.readouterr().out.splitlines() == want
    assert float(funcgrad.grad(funcgrad.grad(_traced_sin))(1.0)) == -np.sin(1.0)
    assert capsys.readouterr().out.splitlines() == want
    out, t = funcgrad.jvp(_traced_sin, (1.0,), (2.0,))
    assert float(t) == 2 * np.cos(1.0)
    assert capsys.readouterr().out.splitlines() == want


def test_print_inside_loops_and_branches(capsys):
    def body(c, x):
        funcgrad.debug.print("c={} x={}", c, x)
        return c + x, c

    funcgrad.jit(lambda xs: funcgrad.lax.scan(body, 0.0, xs))(np.arange(3.0))
    assert capsys.readouterr().out.splitlines() == ["c=0.0 x=0.0", "c=0.0 x=1.0",
                                                    "c=1.0 x=2.0"]

    def count(n):
        def step(c):
            funcgrad.debug.print("i={}", c)
            return c + 1
        return funcgrad.lax.while_loop(lambda c: c < n, step, 0)

    assert int(funcgrad.jit(count)(3)) == 3
    assert capsys.readouterr().out.splitlines() == ["i=0", "i=1", "i=2"]

    def branch(x):
        def pos(x):
            funcgrad.debug.print("pos {}", x)
            return x * x

        def neg(x):
            funcgrad.debug.print("neg {}", x)
            return -x

        return funcgrad.lax.cond(x > 0, pos, neg, x)

    assert float(funcgrad.jit(funcgrad.grad(branch))(3.0)) == 6.0
    assert float(funcgrad.jit(branch)(-2.0)) == 2.0
    assert capsys.readouterr().out.splitlines() == ["pos 3.0", "neg -2.0"]


def test_ordered_and_two_call_form(capsys):
    @funcgrad.jit
    def f(x):
        funcgrad.debug.print("a {}", x, ordered=True)
        funcgrad.debug.print(ordered=True)("b {x:.2f}", x=x / 3)
        funcgrad.debug.callback(lambda v, *, k: print("c", float(v), k), x, k="kw",
                                ordered=True)
        return x

    f(1.0)
    assert capsys.readouterr().out.splitlines() == ["a 1.0", "b 0.33", "c 1.0 kw"]


def test_format_errors_at_the_users_line():
    with pytest.raises(KeyError, match=r"'y'.*test_callback.py:\d+"):
        funcgrad.jit(lambda x: funcgrad.debug.print("{y}", x=x) or x)(1.0)
    with pytest.raises(IndexError, match="positional argument 1"):
        funcgrad.debug.print("{} {}", 1.0)
    funcgrad.debug.print("{y}", skip_format_check=True, y=1)  # checked only when it runs


def test_callback_values_are_arrays():
    seen = []
    funcgrad.jit(lambda x: funcgrad.debug.callback(lambda v: seen.append(type(v)), x * 2.0)
                 or x)(1.0)
    assert seen == [np.ndarray]


def _run_with_stdin(monkeypatch, capsys, commands, fn, *args):
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.StringIO(commands))
    out = fn(*args)
    return out, capsys.readouterr().out


def test_breakpoint_in_jit_sees_concrete_locals(monkeypatch, capsys):
    scale = 3  # a Python value in scope, as it was

    @funcgrad.jit
    def f(x):
        y = fnp.sin(x) * scale
        funcgrad.debug.breakpoint()
        return y + 1.0

    out, text = _run_with_stdin(monkeypatch, capsys, "p y.tolist()\np x.shape\np scale\nc\n",
                                f, np.array([0.0, np.pi / 2]))
    np.testing.assert_allclose(out, [1.0, 4.0])
    assert "[0.0, 3.0]" in text and "(2,)" in text and "\n(Pdb) 3\n" in text
    assert "test_callback.py" in text and "funcgrad.debug.breakpoint()" in text


def test_breakpoint_each_iteration_each_example_and_under_grad(monkeypatch, capsys):
    def body(c, x):
        funcgrad.debug.breakpoint()
        return c + x, c

    _, text = _run_with_stdin(monkeypatch, capsys, "p float(x)\nc\n" * 3,
                              funcgrad.jit(lambda xs: funcgrad.lax.scan(body, 0.0, xs)),
                              np.array([5.0, 6.0, 7.0]))
    assert [ln for ln in text.splitlines() if ln.startswith("(Pdb) 5") or
            ln.startswith("(Pdb) 6") or ln.startswith("(Pdb) 7")] == [
        "(Pdb) 5.0", "(Pdb) 6.0", "(Pdb) 7.0"]

    def g(x):
        y = x * x
        funcgrad.debug.breakpoint()
        return fnp.sum(y)

    _, text = _run_with_stdin(monkeypatch, capsys, "p float(y)\nc\n" * 2,
                              funcgrad.vmap(g), np.array([2.0, 3.0]))
    assert "(Pdb) 4.0" in text and "(Pdb) 9.0" in text
    gx, text = _run_with_stdin(monkeypatch, capsys, "p float(y)\nc\n", funcgrad.grad(g), 3.0)
    assert float(gx) == 6.0 and "(Pdb) 9.0" in text


def test_breakpoint_quit_stops_the_computation(monkeypatch):
    import bdb
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.StringIO("q\n"))
    with pytest.raises(bdb.BdbQuit):
        funcgrad.jit(lambda x: funcgrad.debug.breakpoint() or x)(1.0)


def test_callback_two_call_form_as_jax(capsys):
    # JAX 0.10.2: debug.callback(ordered=True)(fn, *args, **kwargs), eagerly and under jit;
    # every keyword of the second call goes to fn.
    funcgrad.debug.callback(ordered=True)(lambda v: print("got", v), np.float32(2))
    funcgrad.jit(lambda a: funcgrad.debug.callback(ordered=True)(
        lambda v, tag: print("got", v, tag), a, tag="t"))(np.float32(3))
    assert capsys.readouterr().out == "got 2.0\ngot 3.0 t\n"
    with pytest.raises(TypeError, match="returns a caller"):
        funcgrad.debug.callback(None, 1.0)



def test_print_refuses_unused_arguments_as_jax(capsys):
    # JAX 0.10.2: "ValueError: Unused positional arguments to `jax.debug.print`" (an f-string
    # passed by mistake); unused keywords likewise; skip_format_check turns it off, and a
    # format without placeholders then prints its arguments after it, space-separated.
    x = np.float32(3)
    with pytest.raises(ValueError, match="Unused positional arguments"):
        funcgrad.debug.print("x", x)
    with pytest.raises(ValueError, match="Unused positional arguments"):
        funcgrad.jit(lambda v: funcgrad.debug.print("{}", v, v))(x)
    with pytest.raises(ValueError, match="Unused keyword arguments.*'y'.*f-string"):
        funcgrad.debug.print("{x}", x=x, y=x)
    funcgrad.debug.print("{x}", x=x, y=x, skip_format_check=True)
    funcgrad.debug.print("x", x, x, skip_format_check=True)
    funcgrad.debug.print("{x.shape} {d[a]:.1f} {y:{w}}", x=x, d={"a": x}, y=x, w=4)  # nested
    assert capsys.readouterr().out == "3.0\nx 3.0 3.0\n() 3.0  3.0\n"


def test_log_goes_to_the_funcgrad_debug_logger(caplog):
    # As jax.debug.log: the message is logged at INFO, located at the user's line.
    import logging

    with caplog.at_level(logging.INFO, logger="funcgrad.debug"):
        funcgrad.jit(lambda v: funcgrad.debug.log("val {v}", v=v) or v)(np.float32(2))
        funcgrad.debug.log(ordered=True)("eager {}", 1.5)
    msgs = [(r.name, r.levelno, r.getMessage(), r.filename) for r in caplog.records]
    assert msgs == [("funcgrad.debug", logging.INFO, "val 2.0", "test_callback.py"),
                    ("funcgrad.debug", logging.INFO, "eager 1.5", "test_callback.py")]


def test_print_uses_the_numpy_print_options_of_its_call(capsys):
    # As JAX's: the options in force where debug.print is traced hold when it runs.
    f = funcgrad.jit(lambda v: funcgrad.debug.print("{}", v) or v)
    with np.printoptions(precision=2):
        f(np.array([1 / 3, 2 / 3]))  # traced here
    f(np.array([1 / 3, 2 / 3]))  # the compiled call, outside the block
    assert capsys.readouterr().out == "[0.33 0.67]\n[0.33 0.67]\n"


def test_the_function_parameter_has_jaxs_name() -> None:
    # JAX: jax.debug.callback(callback, *args, ordered=False, partitioned=False, **kwargs)
    seen = []
    callback(callback=lambda v: seen.append(float(v)), v=2.0)
    assert seen == [2.0]
