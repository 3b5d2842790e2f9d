"""Structured control flow, forward: cond, switch, while_loop, fori_loop, scan, map.

Values and dtypes against Python-loop references, pytrees, make_jaxpr printing, and the error
messages. Derivatives are in test_control_flow_ad.py, vmap/jit in test_control_flow_vmap_jit.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import DEVICE, assert_allclose, dev, host, normal_sampler, skip_on_gpu

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.errors import ConcretizationError
from funcgrad.ir import typecheck_jaxpr

rng = np.random.default_rng(0)


rnd = normal_sampler(rng, on_device=True)


# ---------------------------------------------------------------------------------------------
# cond / switch


@pytest.mark.parametrize("pred", [True, False, np.bool_(True), np.array(False), 3, 0])
def test_cond_picks_branch(pred):
    x = rnd(3)
    out = lax.cond(pred, lambda a: a * 2.0, lambda a: a - 1.0, x)
    want = host(x) * 2.0 if bool(pred) else host(x) - 1.0
    assert_allclose(out, want)


def test_cond_pytrees_and_several_operands():
    x, y = rnd(3), rnd(2, 2)

    def t(a, b):
        return {"s": a + 1.0, "p": (b * 2.0, a.sum())}

    def f(a, b):
        return {"s": a - 1.0, "p": (b, a.prod())}

    out = lax.cond(True, t, f, x, y)
    assert_allclose(out, host(t(x, y)))
    out = lax.cond(False, t, f, x, y)
    assert_allclose(out, host(f(x, y)))


def test_cond_no_operands_and_constants():
    c = rnd(2)
    assert_allclose(lax.cond(True, lambda: c * 3.0, lambda: c), host(c) * 3.0)
    assert lax.cond(False, lambda: None, lambda: None) is None


def test_cond_keeps_dtypes_and_weak_scalars():
    x = rnd(3, dtype=np.float32)
    out = lax.cond(True, lambda a: a * 2.0, lambda a: a, x)
    assert out.dtype == np.float32
    out = lax.cond(True, lambda a: a + 1, lambda a: a, 2.0)
    assert np.asarray(host(out)).dtype == np.float64 and float(out) == 3.0


def test_cond_traced_predicate_inside_make_jaxpr():
    f = lambda x: lax.cond(x.sum() > 0, lambda a: fnp.sin(a), lambda a: fnp.cos(a), x)
    x = rnd(4)
    closed = funcgrad.make_jaxpr(f)(x)
    typecheck_jaxpr(closed.jaxpr)
    for v in (x, -x):
        assert_allclose(closed(v)[0], host(f(v)))


@pytest.mark.parametrize("index,branch", [(0, 0), (1, 1), (2, 2), (5, 2), (-3, 0)])
def test_switch_clamps(index, branch):
    fs = [lambda a: a + 1.0, lambda a: a * 3.0, lambda a: -a]
    x = rnd(2)
    assert_allclose(lax.switch(index, fs, x), host(fs[branch](x)))
    traced = funcgrad.make_jaxpr(lambda i, a: lax.switch(i, fs, a))(np.int64(0), x)
    assert_allclose(traced(np.int64(index), x)[0], host(fs[branch](x)))


def test_switch_single_branch_is_called_directly():
    assert float(lax.switch(7, [lambda a: a * 2.0], 2.0)) == 4.0


def test_cond_branch_closes_over_arrays_and_outer_tracers():
    w = rnd(3)

    def f(x):
        return lax.cond(x[0] > -10, lambda a: a * w + x, lambda a: a, x)

    x = rnd(3)
    assert_allclose(f(x), host(x) * host(w) + host(x))
    assert_allclose(funcgrad.make_jaxpr(f)(x)(x)[0], host(x) * host(w) + host(x))


# ---------------------------------------------------------------------------------------------
# while_loop / fori_loop


def test_while_loop_counter_and_pytree():
    x = rnd(3)

    def body(c):
        i, v = c
        return i + 1, {"a": v["a"] * 0.5, "b": v["b"] + 1}

    i, v = lax.while_loop(lambda c: c[0] < 5, body, (0, {"a": x, "b": np.int32(2)}))
    assert int(i) == 5
    assert_allclose(v["a"], host(x) * 0.5 ** 5)
    assert host(v["b"]).dtype == np.int32 and int(v["b"]) == 7


def test_while_loop_zero_iterations_returns_arrays():
    out = lax.while_loop(lambda c: c > 10.0, lambda c: c * 2.0, 1.0)
    assert float(out) == 1.0
    assert hasattr(out, "shape")


def test_while_loop_newton_sqrt():
    a = dev(np.array([2.0, 9.0, 0.25]))
    out = lax.while_loop(lambda x: fnp.max(fnp.abs(x * x - a)) > 1e-12,
                         lambda x: 0.5 * (x + a / x), a)
    assert_allclose(out, np.sqrt(host(a)), rtol=1e-10)


def test_while_loop_weak_init_promotes_to_body_dtype():
    x = dev(np.array(1.5, np.float32))
    out = lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] + x), (0, 0.0))
    assert host(out[1]).dtype == np.float32
    assert_allclose(out[1], np.float32(4.5))


@pytest.mark.parametrize("lo,hi", [(0, 5), (2, 6), (3, 3), (5, 2), (np.int32(1), 4)])
def test_fori_loop_static_bounds(lo, hi):
    x = rnd(2)
    out = lax.fori_loop(lo, hi, lambda i, c: c * 1.5 + i, x)
    want = host(x)
    for i in range(int(lo), int(hi)):
        want = want * 1.5 + i
    assert_allclose(out, want)


def test_fori_loop_static_is_a_scan_traced_is_a_while():
    f = lambda x, n: lax.fori_loop(0, n, lambda i, c: c + i, x)
    static = funcgrad.make_jaxpr(lambda x: f(x, 4))(1.0)
    assert [e.prim.name for e in static.eqns] == ["scan"]
    traced = funcgrad.make_jaxpr(f)(1.0, 4)
    assert "while" in [e.prim.name for e in traced.eqns]
    assert_allclose(traced(1.0, 4)[0], 7.0)
    assert_allclose(traced(1.0, 0)[0], 1.0)


def test_fori_loop_int32_bounds_keep_counter_dtype():
    seen = []

    def body(i, c):
        seen.append(i.dtype)
        return c + 1.0

    funcgrad.make_jaxpr(lambda n: lax.fori_loop(np.int32(0), n, body, 0.0))(np.int32(3))
    assert seen == [np.dtype(np.int32)]


# ---------------------------------------------------------------------------------------------
# scan / map


def _scan_ref(f, init, xs, length=None, reverse=False):
    n = length if length is not None else len(xs)
    carry, ys = init, []
    order = range(n - 1, -1, -1) if reverse else range(n)
    for i in order:
        carry, y = f(carry, None if xs is None else xs[i])
        ys.append(y)
    if reverse:
        ys = ys[::-1]
    return carry, np.stack(ys) if ys else None


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_matches_loop(reverse):
    xs = rnd(5, 3)
    f = lambda c, x: (c * 0.9 + np.sin(x) if isinstance(c, np.ndarray) else c * 0.9 + fnp.sin(x),
                      (c * x).sum())
    carry, ys = lax.scan(f, dev(np.zeros(3)), xs, reverse=reverse)
    rc, rys = _scan_ref(lambda c, x: (c * 0.9 + np.sin(x), (c * x).sum()), np.zeros(3),
                        host(xs), reverse=reverse)
    assert_allclose(carry, rc)
    assert_allclose(ys, rys)


def test_scan_pytrees_and_none():
    xs = {"a": rnd(4), "b": rnd(4, 2)}

    def f(c, x):
        return (c[0] + x["a"], c[1] * 2), {"out": x["b"] * c[0], "n": None}

    (s, k), ys = lax.scan(f, (0.0, np.int64(1)), xs)
    assert_allclose(s, host(xs["a"]).sum())
    assert int(k) == 16
    assert ys["n"] is None
    want = np.cumsum(np.concatenate([[0.0], host(xs["a"])[:-1]]))[:, None] * host(xs["b"])
    assert_allclose(ys["out"], want)


def test_scan_xs_none_with_length_and_no_ys():
    carry, ys = lax.scan(lambda c, _: (c + 1.0, None), 0.0, None, length=6)
    assert float(carry) == 6.0 and ys is None
    carry, ys = lax.scan(lambda c, _: (c, c), 2.0, None, length=0)
    assert float(carry) == 2.0 and host(ys).shape == (0,)


def test_scan_float32_and_weak_carry():
    xs = rnd(3, dtype=np.float32)
    carry, ys = lax.scan(lambda c, x: (c + x, c * 2.0), 0.0, xs)
    assert host(carry).dtype == np.float32 and host(ys).dtype == np.float32
    assert_allclose(carry, host(xs).sum(dtype=np.float32))


def test_map_matches_loop():
    xs = rnd(4, 3)
    out = lax.map(lambda x: (fnp.sum(x), x * 2.0), xs)
    assert_allclose(out[0], host(xs).sum(1))
    assert_allclose(out[1], host(xs) * 2.0)


def test_long_loops_switch_to_compiled_body():
    x = rnd(4)
    out = lax.fori_loop(0, 300, lambda i, c: fnp.sin(c) * 0.5 + c, x)
    want = host(x)
    for _ in range(300):
        want = np.sin(want) * 0.5 + want
    assert_allclose(out, want)
    w = lax.while_loop(lambda c: c[0] < 300, lambda c: (c[0] + 1, fnp.cos(c[1]) + 0.1 * c[1]),
                       (0, x))[1]
    want = host(x)
    for _ in range(300):
        want = np.cos(want) + 0.1 * want
    assert_allclose(w, want)


def test_nested_loops_and_conds():
    def f(x):
        def outer(i, c):
            inner = lax.while_loop(lambda v: v[0] < i, lambda v: (v[0] + 1, v[1] * 0.5), (0, c))
            return lax.cond(i % 2 == 0, lambda a: a + 1.0, lambda a: a * 2.0, inner[1])
        return lax.fori_loop(0, 4, outer, x)

    def ref(x):
        c = x
        for i in range(4):
            c = c * 0.5 ** i
            c = c + 1.0 if i % 2 == 0 else c * 2.0
        return c

    x = rnd(3)
    assert_allclose(f(x), ref(host(x)))
    assert_allclose(funcgrad.make_jaxpr(f)(x)(x)[0], ref(host(x)))


# ---------------------------------------------------------------------------------------------
# make_jaxpr: sub-jaxprs print indented


def test_make_jaxpr_prints_branches_indented():
    text = str(funcgrad.make_jaxpr(
        lambda x: lax.cond(x > 0, lambda a: fnp.sin(a), lambda a: a * 2.0, x))(1.0))
    assert "cond[\n      branches=(\n" in text  # JAX's layout: a jaxpr param on lines of its own
    lines = text.splitlines()
    inner = [ln for ln in lines if "sin" in ln][0]
    outer = [ln for ln in lines if "cond[" in ln][0]
    assert len(inner) - len(inner.lstrip()) > len(outer) - len(outer.lstrip())


def test_make_jaxpr_prints_loops():
    text = str(funcgrad.make_jaxpr(
        lambda x: lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0, x))(1.0))
    assert "while[\n      body_jaxpr={ lambda" in text and "cond_jaxpr=" in text
    text = str(funcgrad.make_jaxpr(
        lambda x: lax.scan(lambda c, a: (c + a, c), 0.0, x))(np.ones(3)))
    assert "scan[\n      jaxpr={ lambda" in text and "length=3" in text


# ---------------------------------------------------------------------------------------------
# errors


def test_cond_branch_type_mismatch_names_both_types():
    x = np.ones(3)
    with pytest.raises(TypeError, match=r"cond branches return different types: "
                                        r"true_fun gives f64\[3\], false_fun gives f32\[3\]"):
        lax.cond(True, lambda a: a, lambda a: a.astype(np.float32), x)
    with pytest.raises(TypeError, match=r"cond branches return different structures"):
        lax.cond(True, lambda a: (a, a), lambda a: a, x)
    with pytest.raises(TypeError, match=r"switch branches return different types.*"
                                        r"branch 0 gives f64\[3\], branch 1 gives f64\[2\]"):
        lax.switch(0, [lambda a: a, lambda a: a[:2]], x)


@pytest.mark.parametrize("pred,msg", [
    (np.ones(2, bool), "pred must be a scalar"),
    (1.5j, "scalar boolean"),
    ([True], "pred must be a scalar"),
    ("yes", "pred must be a scalar"),
])
def test_cond_predicate_errors(pred, msg):
    with pytest.raises(TypeError, match=msg):
        lax.cond(pred, lambda: 1.0, lambda: 2.0)


def test_cond_real_predicates_as_jax():
    # JAX 0.10.2: a float predicate is true where it is not 0 (NaN included), also traced.
    for pred, want in [(1.0, 1.0), (0.0, 2.0), (np.float32(-0.0), 2.0), (np.nan, 1.0),
                       (np.array(0.5), 1.0)]:
        assert float(lax.cond(pred, lambda: 1.0, lambda: 2.0)) == want
    assert float(funcgrad.jit(lambda p: lax.cond(p, lambda: 1.0, lambda: 2.0))(0.5)) == 1.0
    assert host(funcgrad.vmap(lambda p: lax.cond(p, lambda: 1.0, lambda: 2.0))(
        dev(np.array([0.0, 3.0])))).tolist() == [2.0, 1.0]


def test_switch_errors():
    with pytest.raises(TypeError, match="index must be a scalar integer"):
        lax.switch(1.0, [lambda: 1.0, lambda: 2.0])
    with pytest.raises(ValueError, match="at least one branch"):
        lax.switch(0, [])
    with pytest.raises(TypeError, match=r"branches\[1\] must be callable"):
        lax.switch(0, [lambda: 1.0, 2.0])


def test_while_body_changing_carry_names_leaf_path():
    init = {"w": np.ones(3), "n": 0}
    with pytest.raises(TypeError, match=r"while_loop: the carry\['w'\] changes type: init_val "
                                        r"has f64\[3\] but body_fun's output has f32\[3\]"):
        lax.while_loop(lambda c: c["n"] < 3,
                       lambda c: {"w": c["w"].astype(np.float32), "n": c["n"] + 1}, init)
    with pytest.raises(TypeError, match=r"changes type.*f64\[3\].*f64\[2\]"):
        lax.while_loop(lambda c: c["n"] < 3, lambda c: {"w": c["w"][:2], "n": c["n"] + 1}, init)
    with pytest.raises(TypeError, match="changes structure"):
        lax.while_loop(lambda c: c["n"] < 3, lambda c: (c["w"], c["n"]), init)


def test_while_cond_must_return_bool_scalar():
    with pytest.raises(TypeError, match=r"cond_fun must return a boolean scalar, got i64\[\]"):
        lax.while_loop(lambda c: c, lambda c: c - 1, 3)
    with pytest.raises(TypeError, match=r"cond_fun must return a boolean scalar, got bool\[2\]"):
        lax.while_loop(lambda c: c > 0, lambda c: c - 1, np.ones(2))
    # a one-element tuple (a stray comma) is refused, as JAX 0.10.2 does
    with pytest.raises(TypeError, match=r"boolean scalar, but got pytree PyTreeDef\(\(\*,\)\)"):
        lax.while_loop(lambda c: (c < 3,), lambda c: c + 1, 0)


def test_scan_errors():
    with pytest.raises(ValueError, match=r"inconsistent leading axis sizes.*xs\[1\] has 4"):
        lax.scan(lambda c, x: (c, x), 0.0, (np.ones(3), np.ones(4)))
    with pytest.raises(ValueError, match="length=2 but xs has 3"):
        lax.scan(lambda c, x: (c, x), 0.0, np.ones(3), length=2)
    with pytest.raises(ValueError, match="no xs to scan over and no `length`"):
        lax.scan(lambda c, x: (c, x), 0.0, None)
    with pytest.raises(TypeError, match=r"must return a pair \(new_carry, y\)"):
        lax.scan(lambda c, x: c, 0.0, np.ones(3))
    with pytest.raises(TypeError, match=r"scan: the carry changes type: the initial carry has "
                                        r"f64\[\] but f's output carry has f64\[3\]"):
        lax.scan(lambda c, x: (c + np.ones(3), x), np.float64(0.0), np.ones(3))
    with pytest.raises(ValueError, match=r"xs is a scalar"):
        lax.scan(lambda c, x: (c, x), 0.0, 1.0)


def test_fori_loop_errors():
    with pytest.raises(TypeError, match="bounds must be integer"):
        lax.fori_loop(np.zeros(2), 3, lambda i, c: c, 1.0)
    with pytest.raises(TypeError, match=r"fori_loop: the carry changes type: init_val has "
                                        r"f64\[2\] but body_fun's output has f32\[2\]"):
        lax.fori_loop(0, 3, lambda i, c: c.astype(np.float32), np.ones(2))
    with pytest.raises(TypeError, match=r"fori_loop: the carry\['a'\] changes type"):
        lax.fori_loop(0, 3, lambda i, c: {"a": c["a"][:1]}, {"a": np.ones(2)})
    with pytest.raises(TypeError, match="fori_loop: the carry changes structure"):
        lax.fori_loop(0, 3, lambda i, c: (c, c), np.ones(2))


def test_python_if_in_branch_is_a_concretization_error():
    def bad(a):
        if a > 0:
            return a
        return -a

    with pytest.raises(ConcretizationError, match="structured control flow|cond"):
        lax.cond(True, bad, lambda a: a, 1.0)


def test_non_array_outputs_are_rejected():
    with pytest.raises(TypeError, match="must return arrays"):
        lax.cond(True, lambda: "a", lambda: "b")


def test_strict_device_results_stay_on_device():
    if DEVICE == "cpu":
        pytest.skip("device placement is only observable off the host")
    x = rnd(3)
    out = lax.fori_loop(0, 3, lambda i, c: c * 2.0, x)
    assert type(out) is type(x)


# ---------------------------------------------------------------------------------------------
# eager evaluation does not retrace; dead code elimination; leaked tracers


def test_eager_loops_trace_the_body_once():
    calls = []

    def body(c):
        calls.append(1)
        return c * 2.0

    lax.while_loop(lambda c: c < 1e6, body, 1.0)
    assert len(calls) == 1
    lax.fori_loop(0, 100, lambda i, c: (calls.append(1), c + i)[1], 0)
    assert len(calls) == 2


def test_dce_prunes_unused_loop_and_branch_outputs():
    from funcgrad.ir import dce_jaxpr, eval_jaxpr

    def f(x, y):
        (a, b), ys = lax.scan(lambda c, t: ((c[0] * t, c[1] + fnp.sin(t) * y), (c[0], c[1] * 2)),
                              (1.0, 0.0), x)
        k = lax.cond(y > 0, lambda v: (v * 2, v * 3), lambda v: (v, v + 1), y)
        return b, ys[1], k[1]

    x = dev(np.arange(1.0, 4.0))
    closed = funcgrad.make_jaxpr(f)(x, 2.0)
    j, _ = dce_jaxpr(closed.jaxpr, [True, False, True])
    typecheck_jaxpr(j)
    scan_eqn = [e for e in j.eqns if e.prim.name == "scan"][0]
    assert scan_eqn.params["num_carry"] == 1 and len(scan_eqn.outvars) == 1
    cond_eqn = [e for e in j.eqns if e.prim.name == "cond"][0]
    assert len(cond_eqn.outvars) == 1
    got = eval_jaxpr(j, closed.consts, x, 2.0)
    want = f(x, 2.0)
    assert_allclose(got[0], host(want[0]))
    assert_allclose(got[1], host(want[2]))


def test_dce_drops_unread_tapes():
    from funcgrad.ir import dce_jaxpr

    # vjp: reverse mode (grad of one number would compute its tangents forward, no tapes).
    f = lambda a: lax.while_loop(lambda x: x < 10.0, lambda x: x * a, 1.0)
    closed = funcgrad.make_jaxpr(lambda a: funcgrad.vjp(f, a)[1](1.0)[0])(2.0)
    j, _ = dce_jaxpr(closed.jaxpr)
    typecheck_jaxpr(j)
    while_eqn = [e for e in j.eqns if e.prim.name == "while"][0]
    assert all(str(v.aval).startswith("tape") for v in while_eqn.outvars[1:])


def test_tracer_leaked_from_a_body_is_reported():
    leak = []
    lax.fori_loop(0, 2, lambda i, c: (leak.append(c), c)[1], 1.0)
    with pytest.raises(funcgrad.UnexpectedTracerError):
        leak[0] + 1.0


@pytest.mark.parametrize("batch_size", [1, 2, 3, 5, 7])
def test_map_batch_size_matches_the_unbatched_map(batch_size):
    x = np.arange(10.0).reshape(5, 2)
    f = lambda v: {"s": fnp.sum(fnp.sin(v) ** 2), "v": v * 2}  # noqa: E731
    want = funcgrad.map(f, dev(x))
    assert_allclose(funcgrad.map(f, dev(x), batch_size=batch_size), want)
    assert_allclose(funcgrad.jit(lambda x: lax.map(f, x, batch_size=batch_size))(dev(x)), want)
    g = funcgrad.grad(lambda x: fnp.sum(funcgrad.map(lambda v: fnp.sin(v).sum(), x,
                                                     batch_size=batch_size)))(dev(x))
    assert_allclose(g, np.cos(x))
    assert funcgrad.vmap(lambda x: lax.map(f, x, batch_size=batch_size)
                         )(dev(np.ones((3, 5, 2))))["v"].shape == (3, 5, 2)


def test_map_batch_size_errors():
    with pytest.raises(TypeError, match="batch_size must be a positive int"):
        funcgrad.map(lambda v: v, np.ones(3), batch_size=-1)
    # JAX: batch_size=0 maps one element at a time, as None does; scan's unroll=0 is 1
    np.testing.assert_array_equal(host(funcgrad.map(lambda v: 2 * v, dev(np.arange(3.0)),
                                                    batch_size=0)), [0.0, 2.0, 4.0])
    c, ys = lax.scan(lambda c, x: (c + x, c), 0.0, dev(np.arange(4.0)), unroll=0)
    assert float(c) == 6.0 and host(ys).tolist() == [0.0, 0.0, 1.0, 3.0]
    with pytest.raises(ValueError, match="unroll must be a non-negative int"):
        lax.scan(lambda c, x: (c + x, c), 0.0, dev(np.arange(4.0)), unroll=-1)
    with pytest.raises(ValueError, match="same leading axis length"):
        funcgrad.map(lambda v: v, (np.ones(3), np.ones(4)), batch_size=2)


def _double(i, x):
    return x * 2.0


def _double_again(i, x):
    return x * 2.0


def _body_lines(f, x):
    body = funcgrad.make_jaxpr(f)(x).eqns[0].params["jaxpr"]
    return {(e.source_info.function, e.source_info.lineno) for e in body.jaxpr.eqns}


def test_a_loop_body_traced_again_is_the_same_jaxpr_but_keeps_its_own_lines():
    # An eager loop traces its body on every call: the first jaxpr of a structure is handed
    # out again (its rules' caches hit), but only for a body written on the same lines, so
    # warnings and errors from another loop's body name that body's line.
    x = np.ones(3)

    def loop(body):
        return lambda v: lax.fori_loop(0, 3, body, v)

    params = [funcgrad.make_jaxpr(loop(_double))(x).eqns[0].params["jaxpr"] for _ in range(2)]
    assert params[0] is params[1]
    first, second = _double.__code__.co_firstlineno, _double_again.__code__.co_firstlineno
    assert ("_double", first + 1) in _body_lines(loop(_double), x)
    lines = _body_lines(loop(_double_again), x)
    assert ("_double_again", second + 1) in lines and ("_double", first + 1) not in lines


def test_overflow_in_a_jitted_loop_names_its_own_bodys_line():
    skip_on_gpu("CuPy raises no floating-point warnings")
    import warnings

    f = funcgrad.jit(lambda v: lax.fori_loop(0, 3, _double, v))
    g = funcgrad.jit(lambda v: lax.fori_loop(0, 3, _double_again, v))
    x = dev(np.full(3, 1e308))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        f(x)
        g(x)
    lines = [m.lineno for m in w if "overflow" in str(m.message)]
    assert lines == [_double.__code__.co_firstlineno + 1,
                     _double_again.__code__.co_firstlineno + 1], [str(m) for m in w]


def test_cond_operand_keyword_and_fori_loop_unroll() -> None:
    # JAX 0.10.2: cond(True, x * 2, x - 1, operand=3.0) is 6.0; fori_loop(0, 5, c * 1.1 + i, 1.0,
    # unroll=2) is 12.66151 (as without unroll); unroll with traced bounds is a ValueError.
    x = dev(np.float64(3.0))
    assert float(host(lax.cond(True, lambda x: x * 2, lambda x: x - 1, operand=x))) == 6.0
    f = funcgrad.jit(lambda x: lax.cond(x > 0, lambda x: x * 2, lambda x: x - 1, operand=x))
    assert float(host(f(x))) == 6.0
    with pytest.raises(TypeError, match="operand"):
        lax.cond(True, lambda x: x, lambda x: x, x, operand=x)
    got = lax.fori_loop(0, 5, lambda i, c: c * 1.1 + i, dev(np.float64(1.0)), unroll=2)
    assert_allclose(got, 12.66151)
    with pytest.raises(ValueError, match="unroll"):
        funcgrad.jit(lambda n: lax.fori_loop(0, n, lambda i, c: c + 1.0, 1.0, unroll=2))(3)

