"""funcgrad.jit: compositions with every transformation, caching, errors, generated code."""

from __future__ import annotations

import functools
import re
import warnings

import numpy as np
import pytest
from helpers import DEVICE, assert_allclose, check_device, dev, host
from hypothesis import given
from hypothesis import strategies as st

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.compile import REUSE_MIN_SIZE


def f_scalar(x, y):
    return fnp.sum(fnp.sin(x) * y + fnp.exp(-x * x) / (1.0 + y * y))


def f_vec(x):
    return fnp.tanh(x) * fnp.cos(x) + x ** 2


def _xy(n=4, seed=0):
    rng = np.random.default_rng(seed)
    return dev(rng.standard_normal(n)), dev(rng.standard_normal(n))


# ---------------------------------------------------------------------------------------------
# compositions


def test_jit_matches_eager_and_counts_one_trace():
    x, y = _xy()
    jf = funcgrad.jit(f_scalar)
    for _ in range(3):
        got = jf(x, y)
        check_device(got)
        assert_allclose(got, f_scalar(x, y))
    assert jf.trace_count == 1


@pytest.mark.parametrize(
    "name,make",
    [
        ("jit(grad)", lambda f: funcgrad.jit(funcgrad.grad(f, argnums=(0, 1)))),
        ("grad(jit)", lambda f: funcgrad.grad(funcgrad.jit(f), argnums=(0, 1))),
        ("jit(jit(grad))", lambda f: funcgrad.jit(funcgrad.jit(funcgrad.grad(f, (0, 1))))),
        ("grad(jit(jit))", lambda f: funcgrad.grad(funcgrad.jit(funcgrad.jit(f)), (0, 1))),
        ("jit(grad(jit))", lambda f: funcgrad.jit(funcgrad.grad(funcgrad.jit(f), (0, 1)))),
        ("value_and_grad(jit)",
         lambda f: lambda *a: funcgrad.value_and_grad(funcgrad.jit(f), (0, 1))(*a)[1]),
    ],
)
def test_gradient_compositions(name, make):
    x, y = _xy()
    want = funcgrad.grad(f_scalar, argnums=(0, 1))(x, y)
    got = make(f_scalar)(x, y)
    check_device(got)
    assert_allclose(got, want, rtol=1e-10, atol=1e-12, err_msg=name)


def test_grad_of_grad_of_jit():
    def f(x):
        return fnp.sin(x) * x

    want = funcgrad.grad(funcgrad.grad(f))(0.3)
    assert_allclose(funcgrad.grad(funcgrad.grad(funcgrad.jit(f)))(0.3), want)
    assert_allclose(funcgrad.grad(funcgrad.grad(funcgrad.jit(f)))(np.float64(0.3)), want)
    assert_allclose(funcgrad.jit(funcgrad.grad(funcgrad.grad(f)))(0.3), want)
    third = funcgrad.grad(funcgrad.grad(funcgrad.grad(funcgrad.jit(f))))(0.3)
    assert_allclose(third, -3 * np.sin(0.3) - 0.3 * np.cos(0.3), rtol=1e-12)


def test_vmap_compositions():
    rng = np.random.default_rng(1)
    xs, ys = dev(rng.standard_normal((5, 4))), dev(rng.standard_normal((5, 4)))
    want = np.stack([host(f_scalar(a, b)) for a, b in zip(host(xs), host(ys))])
    for fn in (funcgrad.vmap(funcgrad.jit(f_scalar)), funcgrad.jit(funcgrad.vmap(f_scalar)),
               funcgrad.jit(funcgrad.vmap(funcgrad.jit(f_scalar)))):
        got = fn(xs, ys)
        check_device(got)
        assert_allclose(got, want)
    # batch axis elsewhere than 0, and an unbatched argument
    got = funcgrad.vmap(funcgrad.jit(f_scalar), in_axes=(1, None))(xs.T, ys[0])
    want = np.stack([host(f_scalar(a, ys[0])) for a in xs])
    assert_allclose(got, want)
    g = funcgrad.vmap(funcgrad.grad(funcgrad.jit(f_scalar)))(xs, ys)
    want = np.stack([host(funcgrad.grad(f_scalar)(a, b)) for a, b in zip(xs, ys)])
    assert_allclose(g, want)


def test_jvp_and_linearize_of_jit():
    x, y = _xy()
    tx, ty = _xy(seed=3)
    want = funcgrad.jvp(f_scalar, (x, y), (tx, ty))
    got = funcgrad.jvp(funcgrad.jit(f_scalar), (x, y), (tx, ty))
    assert_allclose(got, want)
    yv, f_lin = funcgrad.linearize(funcgrad.jit(f_scalar), x, y)
    assert_allclose(yv, want[0])
    assert_allclose(f_lin(tx, ty), want[1])
    assert_allclose(funcgrad.jit(lambda a, b, c, d: funcgrad.jvp(f_scalar, (a, b), (c, d)))(
        x, y, tx, ty), want)


def test_vjp_of_jit_with_pytrees():
    def f(p, x):
        return {"out": fnp.tanh(p["w"] @ x + p["b"]), "norm": fnp.sum(p["w"] ** 2)}

    rng = np.random.default_rng(2)
    p = {"w": dev(rng.standard_normal((3, 4))), "b": dev(rng.standard_normal(3))}
    x = dev(rng.standard_normal(4))
    ct = {"out": dev(rng.standard_normal(3)), "norm": 1.5}
    out_e, vjp_e = funcgrad.vjp(f, p, x)
    out_j, vjp_j = funcgrad.vjp(funcgrad.jit(f), p, x)
    assert_allclose(out_j, out_e)
    assert_allclose(vjp_j(ct), vjp_e(ct))


def test_hessian_and_jacobians_through_jit():
    x = dev(np.array([0.3, -0.7, 1.1]))

    def f(x):
        return fnp.sum(fnp.sin(x) * x[::-1]) + fnp.prod(x)

    want = funcgrad.hessian(f)(x)
    assert_allclose(funcgrad.jit(funcgrad.hessian(f))(x), want)
    assert_allclose(funcgrad.hessian(funcgrad.jit(f))(x), want)
    assert_allclose(funcgrad.jacfwd(funcgrad.jit(f_vec))(x), funcgrad.jacfwd(f_vec)(x))
    assert_allclose(funcgrad.jacrev(funcgrad.jit(f_vec))(x), funcgrad.jacrev(f_vec)(x))


def test_closure_over_outer_tracers():
    x0 = dev(np.array([0.5, 1.5]))

    def outer(y):
        # the jitted function closes over the grad tracer y: it becomes an input of the call
        return fnp.sum(funcgrad.jit(lambda x: fnp.sin(x * y))(x0))

    want = funcgrad.grad(lambda y: fnp.sum(fnp.sin(x0 * y)))(0.7)
    assert_allclose(funcgrad.grad(outer)(0.7), want)
    assert_allclose(funcgrad.jit(funcgrad.grad(outer))(0.7), want)
    ys = dev(np.array([0.1, 0.2, 0.3]))
    got = funcgrad.vmap(lambda y: funcgrad.jit(lambda x: fnp.sum(x * y))(x0))(ys)
    assert_allclose(got, np.array([host(fnp.sum(x0 * y)) for y in ys]))


def test_perturbation_confusion_through_jit():
    # d/dx [x * d/dy (x + y)] = 1: the inner derivative must not see the outer x's tangent.
    def inner(x):
        return funcgrad.jit(funcgrad.grad(lambda y: x + y))(1.0)

    assert_allclose(funcgrad.grad(lambda x: x * inner(x))(2.0), 1.0)


def test_integer_inputs_and_outputs():
    def f(x, n):
        return fnp.sum(x * n), n * 2

    x = dev(np.array([1.0, 2.0]))
    n = dev(np.array([3, 4]))
    assert_allclose(funcgrad.jit(f)(x, n), f(x, n))
    g = funcgrad.grad(lambda x, n: funcgrad.jit(f)(x, n)[0])(x, n)
    assert_allclose(g, host(n).astype(float))


# ---------------------------------------------------------------------------------------------
# caching


def test_retrace_counts_and_static_args():
    calls = []

    def f(x, n):
        calls.append(1)
        return x * n

    jf = funcgrad.jit(f, static_argnums=1)
    jf(dev(np.ones(3)), 2)
    jf(dev(np.zeros(3)), 2)
    assert jf.trace_count == 1 and len(calls) == 1
    jf(dev(np.ones(4)), 2)
    assert jf.trace_count == 2
    jf(dev(np.ones(4)), 3)
    assert jf.trace_count == 3
    jf(dev(np.ones(4, np.float32)), 3)
    assert jf.trace_count == 4
    jf(dev(np.ones(4)), n=3)  # the same static argument given by name
    assert jf.trace_count == 4
    jf.clear_cache()
    jf(dev(np.ones(4)), 3)
    assert jf.trace_count == 5


def test_weak_python_scalar_is_its_own_signature():
    """A Python float is weakly typed (NEP 50): it traces separately from a float64 array,
    and keeps a float32 computation float32, exactly as eager NumPy does."""
    jf = funcgrad.jit(lambda s, a: s * a)
    a32 = dev(np.ones(3, np.float32))
    r1 = jf(2.0, a32)
    r2 = jf(dev(np.array(2.0)), a32)
    assert host(r1).dtype == np.float32
    assert host(r2).dtype == np.float64
    assert jf.trace_count == 2
    jf(3.0, a32)
    assert jf.trace_count == 2


def test_numpy_scalar_and_0d_array_are_one_signature():
    """As in JAX 0.10.2 (jit(f)(np.float64(1.0)) then jit(f)(np.array(1.0)) traces once): a
    NumPy scalar among host arguments is a strongly typed 0-d array; a Python scalar is not.
    With another default device it stays a scalar, which goes where the computation runs."""
    with funcgrad.default_device("cpu"):
        jf = funcgrad.jit(lambda x, y: x * y)
        a = np.ones(2, np.float32)
        r = jf(np.float64(2.0), a)
        assert type(r) is np.ndarray and r.dtype == np.float64
        jf(np.array(3.0), a)
        jf(np.float64(4.0), y=a)  # the keyword path
        assert jf.trace_count == 2  # positional and keyword calls are two pytree structures
        jf(2.0, a)
        assert jf.trace_count == 3
        g = funcgrad.jit(lambda x: x * 2)
        out = g(np.float32(1.5))
        assert type(out) is np.ndarray and out.dtype == np.float32 and out.shape == ()
        g(np.array(2.5, np.float32))
        assert g.trace_count == 1
        assert float(funcgrad.grad(g)(np.float32(1.0))) == 2.0
    with funcgrad.default_device("strict"):
        h = funcgrad.jit(lambda n: funcgrad.lax.fori_loop(0, n, lambda i, c: c + i, np.int32(0)))
        assert int(h(np.int32(4))) == 6  # the counter and n meet on the default device


def test_static_argnames_and_kwargs():
    def f(x, *, scale, power=2):
        return fnp.sum(x ** power) * scale

    jf = funcgrad.jit(f, static_argnames=("power",))
    x = dev(np.arange(3.0))
    assert_allclose(jf(x, scale=2.0), f(x, scale=2.0))
    assert_allclose(jf(x, scale=2.0, power=3), f(x, scale=2.0, power=3))
    assert jf.trace_count == 2


def test_out_of_range_static_and_donated_arguments_raise_at_jit_time():
    def f(x, n):
        return x * n

    with pytest.raises(ValueError, match=r"static_argnums contains 2, but f takes only 2"):
        funcgrad.jit(f, static_argnums=2)
    with pytest.raises(ValueError, match=r"static_argnums contains -3"):
        funcgrad.jit(f, static_argnums=-3)
    with pytest.raises(ValueError, match=r"donate_argnums contains 4"):
        funcgrad.jit(f, donate_argnums=4)
    with pytest.raises(ValueError, match=r"static_argnames contains 'm', which is not a "):
        funcgrad.jit(f, static_argnames="m")
    # Negative indices count from the end; *args / **kwargs accept anything.
    assert_allclose(funcgrad.jit(f, static_argnums=-1)(np.ones(2), 3), 3 * np.ones(2))
    g = funcgrad.jit(lambda *a, **k: a[0] * a[1] * k["s"], static_argnums=1,
                     static_argnames="s")
    assert_allclose(g(np.ones(2), 3, s=2), 6 * np.ones(2))


def test_unhashable_static_argument_message():
    def f(x, n):
        return x * len(n)

    with pytest.raises(TypeError, match=re.escape("argument 1 ('n') of f is static but "
                                                  "unhashable: list")):
        funcgrad.jit(f, static_argnums=1)(np.ones(2), [1, 2])
    with pytest.raises(TypeError, match="argument 'n' of f is static but unhashable: dict"):
        funcgrad.jit(f, static_argnames="n")(np.ones(2), n={})
    # JAX raises ValueError for an unhashable static value, a traced one included
    with pytest.raises(ValueError, match="is static but got a traced value"):
        funcgrad.grad(lambda x: funcgrad.jit(lambda x, n: x * n, static_argnums=1)(x, x))(2.0)


def test_non_array_argument_message():
    with pytest.raises(TypeError, match="argument mode is a str.*static_argnums"):
        funcgrad.jit(lambda x, mode: x)(np.ones(2), "fast")


def test_explain_retraces_warns_with_the_change():
    jf = funcgrad.jit(lambda x, n: x * n, static_argnums=1, explain_retraces=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        jf(np.ones(3), 2)
        jf(np.ones(3), 2)
    with pytest.warns(funcgrad.RetraceWarning, match=r"argument x: shape \(3,\) -> \(4,\)"):
        jf(np.ones(4), 2)
    with pytest.warns(funcgrad.RetraceWarning, match="static argument n: 2 -> 5"):
        jf(np.ones(4), 5)
    with pytest.warns(funcgrad.RetraceWarning, match="dtype float64 -> float32"):
        jf(np.ones(4, np.float32), 5)
    assert issubclass(funcgrad.RetraceWarning, UserWarning)


def test_closed_over_arrays_are_baked_in():
    w = np.ones(2)
    jf = funcgrad.jit(lambda x: x * w)
    assert_allclose(jf(np.ones(2)), np.ones(2))
    w = np.zeros(2)  # noqa: F841  (rebinding is not seen: documented)
    assert_allclose(jf(np.ones(2)), np.ones(2))


# ---------------------------------------------------------------------------------------------
# errors


def test_python_if_on_traced_value_raises_concretization_error():
    def f(x, n):
        y = fnp.sin(x) * 2
        if y[0] > 0:  # the offending line
            return y
        return -y

    with pytest.raises(funcgrad.ConcretizationError) as info:
        funcgrad.jit(f)(dev(np.ones(3)), 2)
    msg = str(info.value)
    assert "test_jit.py" in msg and "(f)" in msg
    assert "derived from argument x" in msg
    assert "static_argnums" in msg and "cond" in msg and "while_loop" in msg
    # the same under grad works: the primal is concrete there
    assert_allclose(funcgrad.grad(lambda x: fnp.sum(f(x, 2)))(dev(np.ones(3))),
                    2 * np.cos(np.ones(3)))


def test_concretization_error_names_direct_argument():
    with pytest.raises(funcgrad.ConcretizationError, match="from argument n"):
        funcgrad.jit(lambda x, n: x * int(n))(np.ones(2), 3)
    with pytest.raises(funcgrad.ConcretizationError, match=r"from argument p\['b'\]"):
        funcgrad.jit(lambda p: p["a"] if float(p["b"]) else p["a"])({"a": 1.0, "b": 2.0})


def test_leaked_tracer_error_names_creation_site():
    leaked = []

    def f(x):
        leaked.append(x * 2)
        return x

    funcgrad.jit(f)(np.ones(2))
    with pytest.raises(funcgrad.UnexpectedTracerError, match="test_jit.py"):
        fnp.sin(leaked[0])
    with pytest.raises(funcgrad.UnexpectedTracerError):
        funcgrad.jit(lambda x: x + leaked[0])(np.ones(2))


def test_tracer_leaked_into_a_later_trace_is_not_kept_as_a_constant():
    leaked = []

    def f(x):
        leaked.append(x * 2)
        return x

    funcgrad.make_jaxpr(f)(1.0)
    for later in (
        funcgrad.make_jaxpr(lambda y: y + leaked[0]),
        funcgrad.jit(lambda y: fnp.sin(y) * leaked[0]),
        funcgrad.jit(funcgrad.grad(lambda y: y * leaked[0])),
        funcgrad.make_jaxpr(funcgrad.vmap(lambda y: y + leaked[0])),
    ):
        with pytest.raises(funcgrad.UnexpectedTracerError, match="test_jit.py"):
            later(np.ones(2))


def test_closing_over_an_outer_tracer_is_not_a_leak():
    def outer(x):
        return funcgrad.jit(lambda y: y * x)(2.0)

    assert float(funcgrad.grad(outer)(3.0)) == 2.0
    np.testing.assert_allclose(funcgrad.vmap(outer)(np.ones(3)), 2.0 * np.ones(3))
    assert "mul" in str(funcgrad.make_jaxpr(outer)(3.0))


# ---------------------------------------------------------------------------------------------
# lowering, source, eval_shape


def test_make_jaxpr_prints_nested_jit_indented():
    inner = funcgrad.jit(lambda x: fnp.sin(x) * 2.0)
    text = str(funcgrad.make_jaxpr(lambda x: inner(x) + 1.0)(np.ones(3)))
    assert "jit[" in text and "name=<lambda>" in text
    lines = text.splitlines()
    sin_line = next(ln for ln in lines if "sin" in ln)
    jit_line = next(ln for ln in lines if "jit[" in ln)
    indent = len(sin_line) - len(sin_line.lstrip())
    assert indent > len(jit_line) - len(jit_line.lstrip())


def test_lower_and_source():
    jf = funcgrad.jit(f_scalar)
    jf.clear_cache()  # earlier tests' jit(f_scalar) share its traces (as JAX's)
    x, y = _xy()
    closed = jf.lower(x, y).jaxpr
    assert [a.shape for a in closed.in_avals] == [(4,), (4,)]
    src = jf.source(x, y)
    assert src.startswith("def f_scalar(xp, ")
    assert "xp.sin(" in src and "return [" in src
    assert funcgrad.compiled_source(f_scalar, x, y) == src
    compile(src, "<test>", "exec")
    assert jf.trace_count == 1


def test_no_multiplication_by_one_left_by_grad():
    src = funcgrad.jit(funcgrad.grad(lambda x: fnp.sum(fnp.sin(x) * x))).source(np.ones(3))
    assert "1.0" not in src, src
    assert not re.search(r"multiply\([^)]*_k\d+\)", src), src
    src = funcgrad.jit(funcgrad.grad(lambda x: fnp.sum(fnp.sin(x)))).source(np.ones(3))
    assert src.count("xp.") == 1 and "xp.cos(" in src, src


def test_eval_shape():
    def f(x, y):
        return {"prod": x @ y, "total": fnp.sum(x).astype(np.float32)}

    out = funcgrad.eval_shape(f, np.ones((2, 3)), funcgrad.ShapedArray((3, 5), np.float64))
    assert out["prod"].shape == (2, 5) and out["prod"].dtype == np.float64
    assert out["total"].shape == () and out["total"].dtype == np.float32

    class Spec:
        shape, dtype = (4,), np.dtype(np.float32)

    assert funcgrad.eval_shape(lambda x: x * 2.0, Spec()).dtype == np.float32


def test_eval_shape_gives_shape_dtype_structs_as_jax():
    s = funcgrad.ShapeDtypeStruct((4, 3), np.float32)
    outs = funcgrad.eval_shape(
        lambda x: {"g": funcgrad.grad(lambda a: fnp.sum(a ** 2))(x),
                   "v": funcgrad.vmap(fnp.sum)(x), "j": funcgrad.jit(fnp.max)(x)}, s)
    assert all(type(o) is funcgrad.ShapeDtypeStruct for o in outs.values())
    assert outs["g"] == s
    assert (outs["v"].shape, outs["v"].ndim, outs["v"].size) == ((4,), 1, 4)
    assert (outs["j"].shape, outs["j"].dtype, outs["j"].ndim, outs["j"].size) == (
        (), np.float32, 0, 1)
    # The result is an argument again (stand-ins go anywhere a stand-in goes).
    again = funcgrad.eval_shape(lambda x: x.T, outs["g"])
    assert again == funcgrad.ShapeDtypeStruct((3, 4), np.float32)
    assert funcgrad.jit(lambda x: x.T).lower(outs["g"]).out_info == again


def test_decorator_forms_and_repr():
    @funcgrad.jit
    def a(x):
        return x + 1

    @functools.partial(funcgrad.jit, static_argnums=1)
    def b(x, n):
        return x * n

    assert_allclose(a(dev(np.ones(2))), 2 * np.ones(2))
    assert_allclose(b(dev(np.ones(2)), 3), 3 * np.ones(2))
    assert "a" in repr(a) and a.__name__ == "a"


# ---------------------------------------------------------------------------------------------
# buffer reuse never changes what the caller can see

BIG = REUSE_MIN_SIZE * 2


def test_inputs_never_change():
    rng = np.random.default_rng(0)
    x = dev(rng.standard_normal(BIG))
    x_copy = host(x).copy()

    def f(x):
        a = fnp.sin(x)
        b = fnp.exp(a) * x  # x is read after ops that could be in place
        c = b + a
        return c * 2.0, x, x.reshape(2, -1), fnp.transpose(x.reshape(2, -1))

    out = funcgrad.jit(f)(x)
    np.testing.assert_array_equal(host(x), x_copy)
    assert_allclose(out, f(x))
    assert out[1] is x  # the function returned its input: so does jit


def test_outputs_are_not_views_of_inputs_after_simplification():
    x = dev(np.arange(float(BIG)))
    y = funcgrad.jit(lambda x: x * 1.0 + 0.0)(x)  # simplifies to x
    assert y is not x
    y[0] = -1.0
    assert host(x)[0] == 0.0


def test_duplicate_outputs_are_distinct_arrays():
    x = dev(np.arange(float(BIG)))
    a, b = funcgrad.jit(lambda x: (fnp.sin(x), fnp.sin(x)))(x)  # CSE makes them one
    assert a is not b
    a[0] = 100.0
    assert host(b)[0] == 0.0


def test_const_outputs_are_fresh_each_call():
    w = np.zeros(BIG)
    jf = funcgrad.jit(lambda x: (x + 1.0, w))
    _, w1 = jf(np.ones(3))
    w1[0] = 5.0
    _, w2 = jf(np.ones(3))
    assert w2[0] == 0.0 and w[0] == 0.0


def test_buffer_reuse_happens_on_dead_temporaries():
    src = funcgrad.jit(lambda x: fnp.exp(fnp.sin(fnp.cos(x)))).source(np.ones(BIG))
    assert "out=" in src, src
    x = np.ones(BIG)
    assert_allclose(funcgrad.jit(lambda x: fnp.exp(fnp.sin(fnp.cos(x))))(x),
                    np.exp(np.sin(np.cos(x))))


def test_donated_argument_buffer_may_be_reused():
    jf = funcgrad.jit(lambda x, y: fnp.sin(x) * y, donate_argnums=0)
    x = np.linspace(0.0, 1.0, BIG)
    y = np.full(BIG, 2.0)
    want = np.sin(x) * y
    got = jf(x.copy(), y)
    assert_allclose(got, want)
    y_copy = y.copy()
    jf(y, y)  # donated and also read as y: must not be overwritten
    np.testing.assert_array_equal(y, y_copy)


def test_donated_buffer_becomes_the_output_where_shape_and_dtype_match():
    jf = funcgrad.jit(lambda x, y: fnp.sin(x) * y + fnp.cos(x), donate_argnums=0)
    x = np.linspace(0.0, 1.0, BIG)
    y = np.full(BIG, 2.0)
    want = np.sin(x) * y + np.cos(x)
    out = jf(x, y)
    assert np.shares_memory(out, x)  # the output lives in the donated buffer
    assert_allclose(out, want)
    np.testing.assert_array_equal(y, np.full(BIG, 2.0))  # not donated: untouched
    # A dtype change cannot reuse the buffer; the result is still right.
    x = np.linspace(0.0, 1.0, BIG)
    out = funcgrad.jit(lambda x: (x * 2).astype(np.float32), donate_argnums=0)(x)
    assert not np.shares_memory(out, x)
    assert_allclose(out, (np.linspace(0.0, 1.0, BIG) * 2).astype(np.float32))
    # Two outputs never share the one donated buffer, and the input is read before it is
    # overwritten.
    x = np.linspace(0.0, 1.0, BIG)
    a, b = funcgrad.jit(lambda x: (x + 1, x * 2), donate_argnums=0)(x)
    assert not np.shares_memory(a, b)
    assert_allclose(a, np.linspace(0.0, 1.0, BIG) + 1)
    assert_allclose(b, np.linspace(0.0, 1.0, BIG) * 2)
    # Under a transformation donation is ignored (the tracer owns no buffer).
    g = funcgrad.grad(lambda x: fnp.sum(jf(x, y)))(np.linspace(0.0, 1.0, BIG))
    xs = np.linspace(0.0, 1.0, BIG)
    assert_allclose(g, np.cos(xs) * 2.0 - np.sin(xs))


def _donation_warnings(f, *args, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        f(*args, **kwargs)
    return [str(w.message).split("\n")[0] for w in caught
            if "donated" in str(w.message)]


def test_unusable_donation_warns_as_jax():
    # JAX 0.10.2 (jax.jit, x64): each output takes one donated input of its shape and dtype,
    # then one of its number of elements; the donated inputs left over are named in a
    # UserWarning "Some donated buffers were not usable: float64[2,2]." (once per compile).
    msg = "Some donated buffers were not usable: "
    tree = {"a": dev(np.ones(3)), "b": dev(np.ones((2, 2)))}
    upd = funcgrad.jit(lambda d: {"a": d["a"] + 1, "b": d["b"].sum()}, donate_argnums=0)
    assert _donation_warnings(upd, tree) == [msg + "float64[2,2]."]
    assert _donation_warnings(upd, tree) == []  # cached: warned at compile time only
    two = funcgrad.jit(lambda x, y: x + y, donate_argnums=(0, 1))
    assert _donation_warnings(two, dev(np.ones(3)), dev(np.ones(3))) == [msg + "float64[3]."]
    kw = funcgrad.jit(lambda x, y: y.sum(), donate_argnames="y")
    assert _donation_warnings(kw, dev(np.ones(3)), y=dev(np.ones(3))) == [msg + "float64[3]."]
    # usable (no warning): same number of elements, a pass-through, an unused (pruned) input
    for f in (lambda x, y: x.astype(np.float32), lambda x, y: x.reshape(3, 1),
              lambda x, y: x, lambda x, y: y * 2):
        assert _donation_warnings(funcgrad.jit(f, donate_argnums=0),
                                  dev(np.ones(3)), dev(np.ones(3))) == []


# ---------------------------------------------------------------------------------------------
# generated code vs eager on random inputs


def _composite(kind):
    if kind == 0:
        return lambda x, y: fnp.sum(fnp.tanh(x @ y) ** 2, axis=0)
    if kind == 1:
        return lambda x, y: fnp.maximum(x, 0.0) * fnp.exp(-(x @ y).sum()) - fnp.log1p(x * x)
    if kind == 2:
        return lambda x, y: fnp.where(x > 0, fnp.sqrt(fnp.abs(x) + 1.0), x.T.T) / (1 + y.sum())
    return lambda x, y: funcgrad.grad(lambda a: fnp.sum(fnp.sin(a @ y) @ a))(x)


@given(
    kind=st.integers(0, 3),
    m=st.integers(1, 4),
    n=st.integers(1, 4),
    seed=st.integers(0, 10_000),
    dtype=st.sampled_from([np.float64, np.float32]),
)
def test_generated_code_matches_eager(kind, m, n, seed, dtype):
    rng = np.random.default_rng(seed)
    x = dev(rng.standard_normal((m, n)).astype(dtype))
    y = dev(rng.standard_normal((n, m)).astype(dtype))
    f = _composite(kind)
    want = f(x, y)
    got = funcgrad.jit(f)(x, y)
    check_device(got)
    assert_allclose(got, want, rtol=1e-4 if dtype == np.float32 else 1e-10,
                    atol=1e-5 if dtype == np.float32 else 1e-12)


@pytest.mark.skipif(DEVICE == "cpu", reason="exercises a non-host test device")
def test_device_results_stay_on_device():
    x, y = _xy()
    check_device(funcgrad.jit(f_scalar)(x, y))
    check_device(funcgrad.jit(funcgrad.grad(f_scalar))(x, y))


# ---------------------------------------------------------------------------------------------
# every op of the op table: reverse and forward mode through jit agree with eager


def _op_cases():
    from tests.funcgrad.ops.test_op_table import CASES, float_argnums

    out = []
    for c in CASES:
        if not c.jit or c.order == 0:
            continue
        arg_sets = c.grad_args if c.grad_args is not None else c.args
        for i, a in enumerate(arg_sets):
            if float_argnums(a) and any(isinstance(x, np.ndarray) for x in a):
                out.append(pytest.param(c, a, id=f"{c.name}-{i}"))
                break
    return out


@pytest.mark.parametrize("case,args", _op_cases())
def test_op_table_vjp_and_jvp_through_jit(case, args):
    from tests.funcgrad.ops.test_op_table import _diff_fn

    f, diff_args = _diff_fn(case, args)

    def flat(*xs):
        return funcgrad.tree_util.tree_leaves(f(*xs))

    try:
        out_e, vjp_e = funcgrad.vjp(flat, *diff_args)
    except funcgrad.DeviceMismatchError as e:  # the eager reference itself fails
        pytest.skip(f"eager vjp of {case.name} fails on this device: {e}")
    out_j, vjp_j = funcgrad.vjp(funcgrad.jit(flat), *diff_args)
    assert_allclose(out_j, out_e, case.rtol, case.atol)
    rng = np.random.default_rng(0)
    cts = [dev(np.asarray(rng.standard_normal(np.shape(host(o))),
                          dtype=np.asarray(host(o)).dtype)) for o in out_e]
    tol = dict(rtol=1e-6 if case.rtol is None else case.rtol,
               atol=1e-7 if case.atol is None else case.atol)
    assert_allclose(vjp_j(cts), vjp_e(cts), **tol, err_msg=f"{case.name}: vjp through jit")
    ts = tuple(dev(np.asarray(rng.standard_normal(np.shape(host(a))),
                              dtype=np.asarray(host(a)).dtype)) if hasattr(a, "shape") else 0.5
               for a in diff_args)
    assert_allclose(funcgrad.jvp(funcgrad.jit(flat), diff_args, ts),
                    funcgrad.jvp(flat, diff_args, ts), **tol,
                    err_msg=f"{case.name}: jvp through jit")


def test_linearize_of_jit_stages_only_tangent_work():
    from funcgrad.interpreters.linearize import linearize_flat

    jf = funcgrad.jit(lambda x: fnp.sin(fnp.exp(x)) * x)
    res = linearize_flat(lambda x: [jf(x)], [np.linspace(0, 1, 3)])
    (eqn,) = res.jaxpr.eqns
    assert eqn.prim.name == "jit"
    inner = {e.prim.name for e in eqn.params["jaxpr"].eqns}
    assert inner <= {"mul", "add_any", "neg"}, inner  # no sin/exp/cos: primal work ran now


def test_grad_of_jitted_identity_on_python_scalar():
    assert_allclose(funcgrad.grad(funcgrad.jit(lambda x: x))(0.3), 1.0)
    assert_allclose(funcgrad.grad(lambda x: funcgrad.jit(lambda y: y)(x) * x)(0.3), 0.6)


def test_nested_jaxpr_names_as_jax():
    # jax.make_jaxpr's text for the same program (JAX 0.10.2, x64): the called program's
    # arguments and results take the caller's names, its other variables fresh ones
    text = str(funcgrad.make_jaxpr(
        lambda x: funcgrad.jit(lambda y: fnp.sin(y) * fnp.cos(y) + 1)(x) * 2.0)(np.ones(3)))
    assert text == (
        "{ lambda ; a:f64[3]. let\n"
        "    b:f64[3] = jit[\n"
        "      name=<lambda>\n"
        "      jaxpr={ lambda ; a:f64[3]. let\n"
        "          c:f64[3] = sin a\n"
        "          d:f64[3] = cos a\n"
        "          e:f64[3] = mul c d\n"
        "          b:f64[3] = add e 1.0:f64[]\n"
        "        in (b,) }\n"
        "    ] a\n"
        "    f:f64[3] = mul b 2.0:f64[]\n"
        "  in (f,) }")


_STRONGLY_PROMOTING = {
    "stack": lambda a, b: fnp.stack([a, b]),
    "concatenate": lambda a, b: fnp.concatenate([fnp.atleast_1d(a), fnp.atleast_1d(b)]),
    "asarray": lambda a, b: a * fnp.asarray(b),
    "array": lambda a, b: a * fnp.array(b),
    "dot": fnp.dot,
    "inner": fnp.inner,
    "kron": fnp.kron,
    "vdot": fnp.vdot,
    "tensordot": lambda a, b: fnp.tensordot(a, b, 0),
    "multiply": lambda a, b: a * b,  # weak: stays float32
    "where": lambda a, b: fnp.where(True, a, b),  # weak: stays float32
}


@pytest.mark.parametrize("name", sorted(_STRONGLY_PROMOTING))
def test_python_scalar_arguments_promote_under_jit_as_eagerly(name):
    # A Python float passed to a jitted function is a weak tracer; functions that NumPy runs
    # through asarray must make it strong, as the eager call does.
    f = _STRONGLY_PROMOTING[name]
    x = dev(np.float32(2.0))
    eager = f(x, 1.5)
    assert funcgrad.jit(f)(x, 1.5).dtype == eager.dtype
    assert funcgrad.jvp(f, (x, 1.5), (dev(np.float32(1.0)), 1.0))[0].dtype == eager.dtype
    assert funcgrad.vmap(f, in_axes=(0, None))(dev(np.ones(2, np.float32)), 1.5).dtype == \
        eager.dtype


def test_jit_results_are_arrays_even_when_an_input_or_literal_passes_through():
    # As in JAX: a jitted function returns arrays, never Python or NumPy scalars.
    for f in (lambda x: x, lambda x: 1.0, lambda x: (x, 2), lambda x: x * 1):
        for x in (3, np.float32(3.0), 2.5):
            for leaf in funcgrad.tree_util.tree_leaves(funcgrad.jit(f)(x)):
                assert funcgrad.backend.is_array(leaf), (f, x, leaf)
    assert funcgrad.jit(lambda x: x)(np.float32(3.0)).dtype == np.float32
    assert funcgrad.jit(lambda x: x)(3).dtype == np.int64
    x = dev(np.ones(2))
    check_device(funcgrad.jit(lambda x, c: (x, c))(x, 2.0))


# -- the per-function cache is bounded (issue: ~25 kB per distinct shape, without bound) ------


def test_jit_cache_is_lru_bounded(monkeypatch):
    import gc
    import weakref

    import funcgrad.api_jit as api_jit

    monkeypatch.setattr(api_jit, "JIT_CACHE_SIZE", 3)
    f = funcgrad.jit(lambda x: x * 2.0)
    assert f._cache_size() == 0
    f(dev(np.ones(1)))
    first = weakref.ref(f.lower(dev(np.ones(1))).jaxpr)
    for n in (2, 3, 1, 4):  # 1 is used again, so 2 is the least recently used when 4 comes
        f(dev(np.ones(n)))
    assert f._cache_size() == 3 and f.trace_count == 4
    f(dev(np.ones(1)))
    f(dev(np.ones(4)))
    assert f.trace_count == 4  # still cached
    f(dev(np.ones(2)))  # evicted: traced again
    assert f.trace_count == 5 and f._cache_size() == 3
    for n in (5, 6, 7):
        f(dev(np.ones(n)))
    f._last = None
    gc.collect()
    assert first() is None  # an evicted entry's jaxpr (and compiled program) is freed
    f.clear_cache()
    assert f._cache_size() == 0


def test_jit_cache_default_size_is_documented():
    import funcgrad.api_jit as api_jit

    assert api_jit.JIT_CACHE_SIZE >= 64
    assert str(api_jit.JIT_CACHE_SIZE) in open(api_jit.__file__.replace(
        "funcgrad/api_jit.py", "docs/jit.md")).read()


def test_jit_warns_once_when_it_keeps_retracing(monkeypatch):
    import funcgrad.api_jit as api_jit

    monkeypatch.setattr(api_jit, "RETRACE_WARN_AFTER", 3)
    f = funcgrad.jit(lambda x: x + 1.0)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for n in range(1, 7):
            f(dev(np.ones(n)))
    msgs = [str(m.message) for m in w if issubclass(m.category, funcgrad.RetraceWarning)]
    assert len(msgs) == 1, msgs
    assert "trace #3" in msgs[0] and "shape (2,) -> (3,)" in msgs[0]
    assert "explain_retraces=True" in msgs[0]
    # The warning points at the caller's line.
    assert [m.filename for m in w][0] == __file__


def test_explain_retraces_warns_every_time_not_twice(monkeypatch):
    import funcgrad.api_jit as api_jit

    monkeypatch.setattr(api_jit, "RETRACE_WARN_AFTER", 2)
    f = funcgrad.jit(lambda x: x + 1.0, explain_retraces=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for n in range(1, 5):
            f(dev(np.ones(n)))
    msgs = [str(m.message) for m in w if issubclass(m.category, funcgrad.RetraceWarning)]
    assert len(msgs) == 3 and all("is tracing again (trace #" in m for m in msgs)


@pytest.mark.parametrize("f", [lambda t: fnp.reshape(t, (1,)), fnp.atleast_1d, fnp.ravel,
                               lambda t: fnp.stack([t, t]), lambda t: fnp.tile(t, 2),
                               lambda t: fnp.reshape(t > 0.5, (1,))])
def test_python_bool_argument_on_a_device(f):
    # A 0-d bool may be a Python bool when the compiled code runs (a jit argument, or a
    # comparison of Python scalars): functions that take arrays only (CuPy's reshape...) got it
    with funcgrad.default_device("strict"):
        for v in (False, True, 0.7):
            got = funcgrad.jit(f)(v)
            assert type(got).__name__ == "StrictArray"
            assert host(got).tolist() == host(f(v)).tolist()


def test_device_backend_and_compiler_options_as_jax():
    # JAX 0.10.2: accepted (deprecated, with a DeprecationWarning), the arguments moved to the
    # device; both at once is a ValueError; an absent platform a RuntimeError.
    with pytest.warns(DeprecationWarning, match="device_put"):
        f = funcgrad.jit(lambda a: a * 2 + fnp.ones(2), backend="strict")
    out = f(np.ones(2))
    assert funcgrad.backend.device_of(out) == "strict"
    np.testing.assert_array_equal(host(out), [3.0, 3.0])
    with pytest.warns(DeprecationWarning):
        g = funcgrad.jit(device="cpu")(lambda a: a * 2)
    assert funcgrad.backend.device_of(g(dev(np.ones(2)))) == "cpu"
    with pytest.raises(ValueError, match="both a device and a backend"):
        funcgrad.jit(lambda a: a, device="cpu", backend="cpu")
    with pytest.raises(RuntimeError, match="unknown backend 'foo'"), \
            pytest.warns(DeprecationWarning):
        funcgrad.jit(lambda a: a, backend="foo")
    h = funcgrad.jit(lambda a: a + 1, compiler_options={})
    assert float(host(h(1.0))) == 2.0
    with pytest.raises(ValueError, match="compiler takes no options"):  # as Lowered.compile
        funcgrad.jit(lambda a: a, compiler_options={"xla_cpu_enable_fast_math": True})
    with pytest.raises(TypeError, match="compiler_options must be a dict"):
        funcgrad.jit(lambda a: a, compiler_options=3)


def test_log_compiles_and_explain_cache_misses_flags(caplog):
    # JAX's jax_log_compiles / jax_explain_cache_misses flags and their context managers
    f = funcgrad.jit(lambda a: a * 2)
    with caplog.at_level("WARNING", logger="funcgrad"), funcgrad.log_compiles():
        f(dev(np.ones(2)))
        f(dev(np.ones(2)))  # cached: not logged again
    assert [r.getMessage() for r in caplog.records] == [
        "Compiling jit(<lambda>) for arguments (f64[2]) (trace #1)"]
    assert funcgrad.config.read("jax_log_compiles") is False
    with funcgrad.explain_cache_misses(), warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        f(dev(np.ones(3)))
    assert any(issubclass(x.category, funcgrad.RetraceWarning) and "(2,) -> (3,)" in str(x.message)
               for x in w)
    assert funcgrad.config.jax_explain_cache_misses is False


def test_python_int_outside_int64_is_an_overflow_error_naming_the_argument() -> None:
    # JAX: OverflowError "... whose argument path is a. Got <class 'int'> with value
    # 1180591620717411303424"; here the compiled code computed on Python objects instead
    f = funcgrad.jit(lambda a, b=0: a * 2)
    with pytest.raises(OverflowError, match=r"jit\(<lambda>\): argument a is the Python int "
                                            "1180591620717411303424"):
        f(2**70)
    with pytest.raises(OverflowError, match=r"argument b\['q'\] .* 9223372036854775808"):
        f(1, b={"q": 2**63})
    with pytest.raises(OverflowError, match="make_jaxpr: argument 1"):
        funcgrad.make_jaxpr(lambda a, b: a)(1, 2**70)
    with pytest.raises(OverflowError, match="eval_shape: argument 0"):
        funcgrad.eval_shape(lambda a: a, -2**64)
    assert int(f(-2**62)) == -2**63  # the int64 range itself traces (and wraps, as JAX's)


def test_argnums_accept_numpy_ints_and_refuse_names() -> None:
    # JAX accepts static_argnums=np.int64(1) (and donate_argnums, make_jaxpr's); a string is
    # a TypeError ("'str' object cannot be interpreted as an integer")
    x = dev(np.arange(3.0))
    f = funcgrad.jit(lambda a, n: a * n, static_argnums=np.int64(1))
    assert host(f(x, 2)).tolist() == [0.0, 2.0, 4.0] and f._cache_size() == 1
    g = funcgrad.jit(lambda a, n: a * n, static_argnums=[np.int32(1)], donate_argnums=np.int64(0))
    assert host(g(dev(np.ones(2)), 3)).tolist() == [3.0, 3.0]
    assert "mul a 2" in str(funcgrad.make_jaxpr(lambda a, n: a * n,
                                                static_argnums=np.int64(1))(x, 2))
    with pytest.raises(TypeError, match="static_argnums must be ints.*'n'.*static_argnames"):
        funcgrad.jit(lambda a, n: a * n, static_argnums="n")
    with pytest.raises(TypeError, match="static_argnums must be ints"):
        funcgrad.make_jaxpr(lambda a, n: a * n, static_argnums="1")


def test_no_tracing_refuses_new_traces_as_jax() -> None:
    # jax.no_tracing (the flag jax_no_tracing): a traced signature still runs; a new one,
    # make_jaxpr and eval_shape raise JAX's RuntimeError; eager differentiation still runs
    f = funcgrad.jit(lambda x: x * 2)
    x = dev(np.ones(2))
    f(x)
    with funcgrad.no_tracing():
        assert_allclose(f(x), 2 * np.ones(2))
        with pytest.raises(RuntimeError, match=re.escape(
                "re-tracing function <lambda> for `jit`, but 'no_tracing' is set")):
            f(dev(np.ones(3)))
        with pytest.raises(RuntimeError, match="for `make_jaxpr`"):
            funcgrad.make_jaxpr(lambda v: v)(1.0)
        with pytest.raises(RuntimeError, match="for `eval_shape`"):
            funcgrad.eval_shape(lambda v: v, 1.0)
        assert float(funcgrad.grad(lambda v: v * 3.0)(1.0)) == 3.0
    assert f.trace_count == 1
    f(dev(np.ones(3)))  # outside the block it traces again
    assert f.trace_count == 2


def test_jit_made_again_finds_the_traces_of_the_same_function():
    # JAX 0.10.2: `for _ in range(5): jax.jit(f)(x)` traces f once (the tracing cache is
    # keyed on the function and jit's options); a new lambda or partial traces again
    calls = []

    def f(x):
        calls.append(1)
        return x * 2

    x = dev(np.ones(3))
    for _ in range(3):
        assert_allclose(funcgrad.jit(f)(x), 2 * np.ones(3))
    assert len(calls) == 1
    funcgrad.jit(f, static_argnums=())(x)  # the same options
    assert len(calls) == 1
    funcgrad.jit(f, donate_argnums=0)(dev(np.ones(3)))  # other options: its own traces
    assert len(calls) == 2
    funcgrad.jit(lambda v: f(v))(x)
    assert len(calls) == 3
    funcgrad.jit(f).clear_cache()  # clears what every jit(f) shares
    funcgrad.jit(f)(x)
    assert len(calls) == 4
