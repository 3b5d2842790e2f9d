"""Programs through ``jit``, structured control flow, ``checkpoint``, ``eval_shape`` and
``make_jaxpr``, written the way a JAX user would write programs.

Every result is compared with an eager funcgrad run, a NumPy computation or a Python loop.
Hypothesis generates random programs of ``cond`` / ``switch`` / ``fori_loop`` (static and
traced bounds) / ``while_loop`` / ``scan`` (``reverse``, ``unroll``) / ``checkpoint`` steps and
checks jit == eager == a Python reference, ``jit(grad) == grad(jit) == grad``, ``vmap(jit)`` ==
a loop, and that the generated source compiles.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import DEVICE, assert_allclose, check_device, dev, host
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import funcgrad
import funcgrad.numpy as fnp

F = funcgrad
TOL = dict(rtol=1e-9, atol=1e-10)


def _x(n=3, seed=0, scale=1.0):
    return dev(np.random.default_rng(seed).normal(size=n) * scale)


# ---------------------------------------------------------------------------------------------
# Random control-flow programs: funcgrad and a NumPy/Python reference side by side.

# Each step maps (x: f64[3] vector, p: scalar parameter) -> new x, as (funcgrad, reference).


def _cond_step(t):
    def fg(x, p):
        return F.cond(fnp.sum(x) > t, lambda x: fnp.sin(x) * p, lambda x: x * x * 0.5 - p, x)

    def ref(x, p):
        return np.sin(x) * p if x.sum() > t else x * x * 0.5 - p

    return fg, ref


def _switch_step(k):
    branches = [lambda x, p: fnp.sin(x) + p, lambda x, p: x * p, lambda x, p: fnp.tanh(x - p)]
    rbranches = [lambda x, p: np.sin(x) + p, lambda x, p: x * p, lambda x, p: np.tanh(x - p)]

    def idx(x):  # a data-dependent index, clamped by switch when out of range
        return (fnp.sum(x) > 0).astype(np.int32) * 2 + k - 1

    def fg(x, p):
        return F.switch(idx(x), branches, x, p)

    def ref(x, p):
        i = int(x.sum() > 0) * 2 + k - 1
        return rbranches[min(max(i, 0), 2)](x, p)

    return fg, ref


def _fori_step(n, traced):
    def body(i, c, p):
        return c * 0.5 + fnp.sin(c) * p + i * 0.01

    def fg(x, p):
        upper = fnp.asarray(n) if traced else n  # a traced bound under jit
        return F.fori_loop(0, upper, lambda i, c: body(i, c, p), x)

    def ref(x, p):
        for i in range(n):
            x = x * 0.5 + np.sin(x) * p + i * 0.01
        return x

    return fg, ref


def _while_step(n):
    def fg(x, p):
        c, _ = F.while_loop(lambda s: s[1] < n, lambda s: (fnp.cos(s[0]) * p + s[0], s[1] + 1),
                            (x, 0))
        return c

    def ref(x, p):
        for _ in range(n):
            x = np.cos(x) * p + x
        return x

    return fg, ref


def _scan_step(reverse, unroll):
    def fg(x, p):
        c, ys = F.scan(lambda c, v: (c * 0.9 + v * p, c * v), x[0], x, reverse=reverse,
                       unroll=unroll)
        return ys + c

    def ref(x, p):
        c, ys = x[0], [None] * len(x)
        order = range(len(x) - 1, -1, -1) if reverse else range(len(x))
        for i in order:
            ys[i] = c * x[i]
            c = c * 0.9 + x[i] * p
        return np.array(ys) + c

    return fg, ref


def _remat_step(policy):
    pol = [None, F.checkpoint_policies.everything_saveable,
           F.checkpoint_policies.dots_saveable][policy]

    def fg(x, p):
        return F.checkpoint(lambda x: fnp.sin(x) * fnp.cos(x * p), policy=pol)(x)

    def ref(x, p):
        return np.sin(x) * np.cos(x * p)

    return fg, ref


_STEPS = st.one_of(
    st.builds(_cond_step, st.sampled_from([-0.5, 0.5])),
    st.builds(_switch_step, st.integers(0, 2)),
    st.builds(_fori_step, st.integers(0, 3), st.booleans()),
    st.builds(_while_step, st.integers(0, 3)),
    st.builds(_scan_step, st.booleans(), st.sampled_from([1, 2, True])),
    st.builds(_remat_step, st.integers(0, 2)),
)


def _program(steps):
    def fg(x, p):
        for s, _ in steps:
            x = fnp.tanh(s(x, p))  # keeps values O(1) whatever the chain
        return fnp.sum(x * x) + p

    def ref(x, p):
        for _, r in steps:
            x = np.tanh(r(x, p))
        return np.sum(x * x) + p

    return fg, ref


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(_STEPS, min_size=1, max_size=3), st.integers(0, 2**16),
       st.floats(0.3, 1.2))
def test_random_control_flow_programs_jit_eager_reference(steps, seed, p):
    fg, ref = _program(steps)
    x = _x(seed=seed)
    want = ref(host(x), p)
    jf = F.jit(fg)
    assert_allclose(fg(x, p), want, **TOL)
    assert_allclose(jf(x, p), want, **TOL)
    assert_allclose(jf(x, p), want, **TOL)  # second call: cached code, scratch buffers
    assert jf.trace_count == 1
    compile(jf.source(x, p), "<generated>", "exec")
    g = F.grad(fg, argnums=(0, 1))(x, p)
    assert_allclose(F.jit(F.grad(fg, argnums=(0, 1)))(x, p), g, **TOL)
    assert_allclose(F.grad(jf, argnums=(0, 1))(x, p), g, **TOL)
    xs = dev(np.stack([host(x), host(x)[::-1] * 0.7]))
    want_v = np.array([ref(r, p) for r in host(xs)])
    assert_allclose(F.vmap(jf, in_axes=(0, None))(xs, p), want_v, **TOL)
    assert_allclose(F.jit(F.vmap(fg, in_axes=(0, None)))(xs, p), want_v, **TOL)


# ---------------------------------------------------------------------------------------------
# Compositions with control flow, checked against Python loops.


def _mul_until(x):
    return F.while_loop(lambda c: c[0] < 10.0, lambda c: (c[0] * 1.5, c[1] + 1), (x, 0))


def _mul_until_ref(x):
    n = 0
    while x < 10.0:
        x, n = x * 1.5, n + 1
    return x, n


def test_while_with_batched_predicate_under_grad_jvp_jit():
    xs = np.array([0.5, 3.0, 11.0, 9.0])
    vals = np.array([_mul_until_ref(v)[0] for v in xs])
    trips = np.array([_mul_until_ref(v)[1] for v in xs])
    d = 1.5 ** trips  # d out / d x
    f = lambda x: _mul_until(x)[0]  # noqa: E731
    assert_allclose(F.vmap(_mul_until)(dev(xs)), (vals, trips))
    for g in (F.vmap(F.grad(f)), F.jit(F.vmap(F.grad(f))), F.vmap(F.jit(F.grad(f))),
              F.grad(lambda v: fnp.sum(F.vmap(f)(v))), F.jit(F.grad(lambda v: fnp.sum(F.vmap(f)(v))))):
        assert_allclose(g(dev(xs)), d, **TOL)
    out, tan = F.jvp(F.vmap(f), (dev(xs),), (dev(np.ones(4)),))
    assert_allclose(out, vals, **TOL)
    assert_allclose(tan, d, **TOL)
    # second derivative: x * 1.5^n, squared -> 2 * 1.5^(2n)
    h = [float(host(F.jit(F.grad(F.grad(lambda x: f(x) ** 2)))(float(v)))) for v in xs]
    assert_allclose(np.array(h), 2 * 1.5 ** (2 * trips), **TOL)


def test_fori_loop_reverse_mode_through_run_time_trip_count():
    def fl(x, n):
        return F.fori_loop(0, n, lambda i, c: c * x + i, 1.0)

    def fl_ref(x, n):
        c = 1.0
        for i in range(n):
            c = c * x + i
        return c

    def dfl_ref(x, n, h=1e-6):
        return (fl_ref(x + h, n) - fl_ref(x - h, n)) / (2 * h)

    jg = F.jit(F.grad(fl))
    for n in (0, 1, 3, 5):
        assert_allclose(jg(2.0, n), np.array(dfl_ref(2.0, n)), rtol=1e-7, atol=1e-7)
        assert_allclose(jg(2.0, dev(np.array(n))), np.array(dfl_ref(2.0, n)), rtol=1e-7,
                        atol=1e-7)
    ns = dev(np.array([0, 1, 3, 5]))
    assert_allclose(F.vmap(fl, in_axes=(None, 0))(2.0, ns),
                    np.array([fl_ref(2.0, n) for n in (0, 1, 3, 5)]))
    assert_allclose(F.vmap(F.grad(fl), in_axes=(None, 0))(2.0, ns),
                    np.array([dfl_ref(2.0, n) for n in (0, 1, 3, 5)]), rtol=1e-7, atol=1e-7)
    # jacrev of a vector function and a Hessian, trip count a jit argument
    body = lambda x: lambda i, c: fnp.sin(c) * x  # noqa: E731
    unrolled = lambda x: fnp.sin(fnp.sin(fnp.sin(x) * x) * x) * x  # noqa: E731
    x = _x(2, seed=3)
    assert_allclose(F.jit(F.jacrev(lambda x, n: F.fori_loop(0, n, body(x), x)))(x, 3),
                    F.jacfwd(unrolled)(x), **TOL)
    assert_allclose(F.jit(F.hessian(lambda x, n: F.fori_loop(0, n, body(x), x)))(0.7, 3),
                    F.hessian(unrolled)(0.7), **TOL)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("unroll", [1, 3, True])
def test_scan_reverse_unroll_against_python_loop(reverse, unroll):
    xs = _x(5, seed=1)

    def f(c, xs):
        return F.scan(lambda c, x: (c * fnp.sin(x) + x, c * c), c, xs, reverse=reverse,
                      unroll=unroll)

    def f_ref(c, xs):  # funcgrad.numpy ops in a Python loop: differentiable reference
        ys = [None] * xs.shape[0]
        order = range(xs.shape[0] - 1, -1, -1) if reverse else range(xs.shape[0])
        for i in order:
            ys[i] = c * c
            c = c * fnp.sin(xs[i]) + xs[i]
        return c, fnp.stack(ys)

    assert_allclose(F.jit(f)(0.7, xs), f_ref(0.7, xs), **TOL)
    loss = lambda g: lambda c, xs: g(c, xs)[0] + fnp.sum(g(c, xs)[1] ** 2)  # noqa: E731
    want = F.grad(loss(f_ref), argnums=(0, 1))(0.7, xs)
    assert_allclose(F.jit(F.grad(loss(f), argnums=(0, 1)))(0.7, xs), want, **TOL)
    assert_allclose(F.jacfwd(lambda xs: f(0.7, xs)[1])(xs),
                    F.jacrev(lambda xs: f_ref(0.7, xs)[1])(xs), **TOL)
    xs2 = dev(np.stack([host(xs), host(xs) * 2]))
    assert_allclose(F.vmap(F.grad(loss(f), argnums=1), in_axes=(None, 0))(0.7, xs2),
                    np.stack([host(F.grad(loss(f_ref), argnums=1)(0.7, r)) for r in xs2]),
                    **TOL)


def test_scan_pytree_carry_and_length_without_xs():
    d = {"a": 0.0, "b": (dev(np.ones(2)),)}
    xs = {"u": dev(np.arange(3.0)), "v": dev(np.full((3, 2), 2.0))}
    out, ys = F.jit(lambda d, xs: F.scan(
        lambda c, x: ({"a": c["a"] + x["u"], "b": (c["b"][0] * x["v"],)}, None), d, xs))(d, xs)
    assert_allclose(out, {"a": np.array(3.0), "b": (np.full(2, 8.0),)})
    assert ys is None
    assert_allclose(F.scan(lambda c, _: (c + 1, c), 0, None, length=3),
                    (np.array(3), np.array([0, 1, 2])))


def test_vmap_cond_batched_predicate_is_a_select_with_clean_gradients():
    X = np.array([[1.0, 2.0], [-3.0, -1.0], [0.5, -2.0]])

    def f(x):
        return F.cond(fnp.sum(x) > 0, lambda x: fnp.sin(x) * x, lambda x: fnp.cos(x) + x, x)

    want = np.stack([np.sin(r) * r if r.sum() > 0 else np.cos(r) + r for r in X])
    dwant = np.stack([np.sin(r) + r * np.cos(r) if r.sum() > 0 else 1 - np.sin(r) for r in X])
    for g in (F.vmap(f), F.jit(F.vmap(f)), F.vmap(F.jit(f))):
        assert_allclose(g(dev(X)), want, **TOL)
    for g in (F.vmap(F.grad(lambda x: fnp.sum(f(x)))),
              F.jit(F.grad(lambda X: fnp.sum(F.vmap(f)(X))))):
        assert_allclose(g(dev(X)), dwant, **TOL)
    # the untaken branch's log(-1) = nan must not leak into the gradient
    fl = lambda x: F.cond(x > 0, lambda x: fnp.log(x), lambda x: x, x)  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert_allclose(F.jit(F.vmap(F.grad(fl)))(dev(np.array([1.0, -1.0, 2.0]))),
                        np.array([1.0, 1.0, 0.5]))


def test_switch_clamps_index_eager_jit_vmap_grad():
    br = [lambda x: x * 2, lambda x: x + 10, lambda x: -x]
    ref = [lambda x: x * 2, lambda x: x + 10, lambda x: -x]
    for i in (-3, 0, 1, 2, 7):
        want = np.array(ref[min(max(i, 0), 2)](1.5))
        assert_allclose(F.switch(i, br, 1.5), want)
        assert_allclose(F.jit(lambda i: F.switch(i, br, 1.5))(i), want)
    idx = dev(np.array([-3, 0, 1, 2, 7]))
    assert_allclose(F.vmap(lambda i, x: F.switch(i, br, x))(idx, dev(np.arange(5.0))),
                    np.array([0.0, 2.0, 12.0, -3.0, -4.0]))
    assert_allclose(F.jit(F.vmap(F.grad(lambda x, i: F.switch(i, br, x))))(
        dev(np.arange(5.0)), idx), np.array([2.0, 2.0, 1.0, -1.0, -1.0]))


def test_closures_over_outer_tracers_in_jit_and_control_flow():
    assert_allclose(F.grad(lambda y: F.jit(lambda x: F.scan(
        lambda c, _: (c * y, None), x, None, length=3)[0])(1.0))(2.0), np.array(12.0))
    assert_allclose(F.grad(lambda y: F.jit(lambda x: F.while_loop(
        lambda c: c < 5, lambda c: c * y, x))(1.0))(2.0), np.array(12.0))
    ys = dev(np.array([1.0, 2.0]))
    assert_allclose(F.vmap(lambda y: F.jit(lambda x: F.cond(
        y > 1.5, lambda: x * y, lambda: x - y))(1.5))(ys), np.array([0.5, 3.0]))
    assert_allclose(F.grad(lambda s: fnp.sum(F.vmap(lambda s: F.while_loop(
        lambda c: c < 10, lambda c: c + s, 0.0))(s)))(dev(np.array([3.0, 4.0, 20.0]))),
        np.array([4.0, 3.0, 1.0]))


def test_jit_and_remat_inside_loop_bodies():
    inner = F.jit(lambda c, x: fnp.sin(c) * x + 1.0)
    xs = _x(3, seed=4)

    def ref(c):
        for x in xs:
            c = fnp.sin(c) * x + 1.0
        return c

    f = lambda c: F.scan(lambda c, x: (inner(c, x), None), c, xs)[0]  # noqa: E731
    assert_allclose(F.jit(f)(0.2), ref(0.2), **TOL)
    assert_allclose(F.jit(F.grad(f))(0.2), F.grad(ref)(0.2), **TOL)
    step = F.checkpoint(lambda c: fnp.sin(c) * 0.7 + 1.0)

    def ref3(c):
        for _ in range(3):
            c = fnp.sin(c) * 0.7 + 1.0
        return c

    g = lambda c, n: F.fori_loop(0, n, lambda i, c: step(c), c)  # noqa: E731
    assert_allclose(F.jit(F.grad(g))(0.2, 3), F.grad(ref3)(0.2), **TOL)


@pytest.mark.parametrize("policy", ["nothing", "dots", "everything", "names"])
def test_remat_policies_under_jit_and_vmap(policy):
    cp = F.checkpoint_policies
    pol = {"nothing": cp.nothing_saveable, "dots": cp.dots_saveable,
           "everything": cp.everything_saveable, "names": cp.save_only_these_names("h")}[policy]
    rng = np.random.default_rng(0)
    W, X = dev(rng.normal(size=(4, 4)) / 2), dev(rng.normal(size=(5, 4)))

    def layer(w, x):
        h = F.checkpoint_name(fnp.tanh(x @ w), "h")
        return fnp.sin(h @ w) * h

    loss = lambda w, x: fnp.sum(layer(w, x) ** 2)  # noqa: E731
    lossc = lambda w, x: fnp.sum(F.checkpoint(layer, policy=pol)(w, x) ** 2)  # noqa: E731
    g = F.grad(loss)(W, X)
    assert_allclose(F.jit(F.grad(lossc))(W, X), g, **TOL)
    assert_allclose(F.grad(F.jit(lossc))(W, X), g, **TOL)
    per_row = np.stack([host(F.grad(loss)(W, X[i:i + 1])) for i in range(5)])
    assert_allclose(F.jit(F.vmap(F.grad(lossc), in_axes=(None, 0)))(W, X[:, None]), per_row,
                    **TOL)
    assert_allclose(F.jit(F.hessian(lambda w: lossc(w, X)))(W),
                    F.hessian(lambda w: loss(w, X))(W), **TOL)


# ---------------------------------------------------------------------------------------------
# jit in every position


def test_jit_composition_matrix():
    f = lambda x: fnp.sum(fnp.sin(x) ** 2)  # noqa: E731
    x = _x(seed=5)
    hx = host(x)
    dref = 2 * np.sin(hx) * np.cos(hx)
    X2 = dev(np.stack([hx, hx * 2]))
    cases = {
        "jit(grad)": F.jit(F.grad(f))(x),
        "grad(jit)": F.grad(F.jit(f))(x),
        "jit(jit(grad))": F.jit(F.jit(F.grad(f)))(x),
        "grad(jit(jit))": F.grad(F.jit(F.jit(f)))(x),
        "jacfwd(jit)": F.jacfwd(F.jit(f))(x),
        "jacrev(jit)": F.jacrev(F.jit(f))(x),
        "vmap(jit(grad))[1]": F.vmap(F.jit(F.grad(f)))(X2)[0],
        "jit(vmap(grad))[1]": F.jit(F.vmap(F.grad(f)))(X2)[0],
    }
    for name, got in cases.items():
        assert_allclose(got, dref, err_msg=name, **TOL)
    hess = np.diag(2 * np.cos(2 * hx))
    assert_allclose(F.jit(F.hessian(f))(x), hess, **TOL)
    assert_allclose(F.hessian(F.jit(f))(x), hess, **TOL)
    assert_allclose(F.jvp(F.jit(f), (x,), (dev(np.ones(3)),))[1], np.array(dref.sum()), **TOL)
    assert_allclose(F.linearize(F.jit(f), x)[1](dev(np.ones(3))), np.array(dref.sum()), **TOL)


@pytest.mark.parametrize("out", ["none", "empty_tuple", "empty_dict", "int", "bool", "nested"])
def test_jit_of_functions_returning_odd_pytrees(out):
    x = _x()
    fns = {
        "none": (lambda x: None, None),
        "empty_tuple": (lambda x: (), ()),
        "empty_dict": (lambda x: {}, {}),
        "int": (lambda x: 3, 3),
        "bool": (lambda x: True, True),
        "nested": (lambda x: {"a": [x * 2, None], "b": ()}, {"a": [host(x) * 2, None], "b": ()}),
    }
    fn, want = fns[out]
    jf = F.jit(fn)
    got = jf(x)
    assert_allclose(got, want)
    assert_allclose(jf(x), want)
    assert jf.trace_count == 1


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128,
                                   np.int32, np.int64, np.uint8, np.bool_])
def test_jit_dtypes_zero_size_and_0d_match_eager(dtype):
    def f(x):
        y = x * x if dtype is not np.bool_ else x & x
        return y, fnp.sum(x), x.reshape(-1)[:0]

    for shape in [(), (0,), (3, 0), (2, 3)]:
        x = dev(np.asarray(np.random.default_rng(0).normal(size=shape) * 3).astype(dtype))
        assert_allclose(F.jit(f)(x), f(x))


def test_weak_python_scalars_keep_nep50_dtypes_through_nested_jits():
    inner = F.jit(lambda a, b: a * b)
    a = dev(np.ones(2, np.float32))
    got = F.jit(lambda a, b, c: (inner(a, b), inner(a, c)))(a, 2.0, np.float64(2.0))
    assert [host(g).dtype for g in got] == [np.float32, np.float64]
    got = F.jit(lambda a, b, c: (inner(a, c), inner(a, b)))(a, 2.0, np.float64(2.0))
    assert [host(g).dtype for g in got] == [np.float64, np.float32]
    assert host(F.vmap(lambda v: inner(v, 2.0))(dev(np.ones((3, 2), np.float32)))).dtype == \
        np.float32
    assert host(F.jit(lambda x: x + 250)(dev(np.array([10], np.uint8)))).tolist() == [4]


# ---------------------------------------------------------------------------------------------
# Retracing, static and donated arguments


def test_retrace_rules_and_explanations():
    jf = F.jit(lambda a: a * 2, explain_retraces=True)
    # (host data with the host as default device: a NumPy scalar is then a 0-d array)
    with warnings.catch_warnings(record=True) as w, F.default_device("cpu"):
        warnings.simplefilter("always")
        jf(2.0)
        jf(3.0)  # same signature: Python float
        jf(np.float64(2.0))
        jf(np.array(2.0))  # same: a NumPy scalar is a 0-d array (as in JAX)
        jf(np.array(3.0))  # same
        jf(np.ones(2))
        jf(np.ones(2, np.float32))
        jf(2)
        jf(True)
    assert jf.trace_count == 6
    msgs = [str(m.message) for m in w if issubclass(m.category, F.RetraceWarning)]
    assert len(msgs) == 5
    assert "Python float (weakly typed) -> float64 array of shape ()" in msgs[0]
    assert "shape () -> (2,)" in msgs[1]
    assert "dtype float64 -> float32" in msgs[2]
    jd = F.jit(lambda d: d["a"] * 2, explain_retraces=True)
    with pytest.warns(F.RetraceWarning, match="argument structure changed"):
        jd({"a": 1.0})
        jd({"a": 1.0, "b": 2.0})
    # keyword order does not matter
    jg = F.jit(lambda x, a=1.0, b=2.0: x * a - b)
    x = _x()
    assert_allclose(jg(x, a=1.0, b=5.0), jg(x, b=5.0, a=1.0))
    assert jg.trace_count == 1


def test_static_arguments_by_position_name_negative_and_varargs():
    def g(x, n, flag=False):
        return x * n if flag else x + n

    x = _x()
    hx = host(x)
    jg = F.jit(g, static_argnums=1, static_argnames="flag")
    assert_allclose(jg(x, 2), hx + 2)
    assert_allclose(jg(x, n=2), hx + 2)  # same trace as by position
    assert_allclose(jg(x, 2, flag=True), hx * 2)
    assert jg.trace_count == 2
    assert_allclose(F.jit(g, static_argnums=-1)(x, 2, True), hx * 2)
    jv = F.jit(lambda *a: a[0] * a[1], static_argnums=1)
    assert_allclose(jv(x, 3), hx * 3)
    assert_allclose(F.grad(F.jit(lambda x, n: fnp.sum(x) * n, static_argnums=1))(x, 3),
                    np.full(3, 3.0))


def test_static_argument_given_a_tracer_says_so():
    inner = F.jit(lambda y, n: y * n, static_argnums=1)
    with pytest.raises(TypeError, match=r"argument 1 \('n'\).*static but got a traced value"):
        F.jit(lambda x, m: inner(x, m))(_x(), 3)
    with pytest.raises(TypeError, match="in_axes=None under vmap"):
        F.vmap(inner)(_x(), dev(np.arange(3)))
    assert_allclose(F.vmap(inner, in_axes=(0, None))(_x(), 3), host(_x()) * 3)


def test_eval_shape_of_jit_keeps_static_arguments_static():
    jf = F.jit(lambda x, n: fnp.ones(n, x.dtype) * x, static_argnums=1)
    assert F.eval_shape(jf, 2.0, 4).shape == (4,)
    assert F.eval_shape(jf, F.ShapedArray((), np.float32), 4).dtype == np.float32
    jn = F.jit(lambda x, n: fnp.ones(n) * x, static_argnames="n")
    assert F.eval_shape(jn, 2.0, n=5).shape == (5,)
    assert F.eval_shape(F.jit(lambda x, n: fnp.ones(n) * x, static_argnums=-1), 2.0, 6).shape \
        == (6,)
    assert jf.trace_count == 2  # eval_shape traced it, nothing ran


def test_donated_arguments_never_corrupt_other_arguments_or_results():
    n = 10000
    dn = F.jit(lambda p, q: fnp.sin(p) * 2 + q, donate_argnums=0)
    z = np.arange(2.0 * n)
    want = np.sin(z[:n]) * 2 + z[n // 2:n // 2 + n]
    # the donated buffer overlaps the other argument: must not be written
    assert_allclose(dn(dev(z)[:n], dev(z)[n // 2:n // 2 + n]), want, **TOL)
    z2 = dev(np.arange(float(n)))
    assert_allclose(dn(z2, z2[::-1]), np.sin(np.arange(float(n))) * 2 + np.arange(float(n))[::-1],
                    **TOL)
    # returned as is, and returned next to a result computed from it
    p = dev(np.zeros(n))
    a, b = F.jit(lambda p: (p, fnp.sin(p) + 1), donate_argnums=0)(p)
    assert_allclose(a, np.zeros(n))
    assert_allclose(b, np.ones(n))
    # read-only arrays are not donated
    if DEVICE == "cpu":
        ro = np.ones(n)
        ro.setflags(write=False)
        assert_allclose(F.jit(lambda p: p * 2 + 1, donate_argnums=0)(ro), np.full(n, 3.0))
        assert_allclose(ro, np.ones(n))
    # under transformations donation is a no-op
    assert_allclose(F.grad(lambda a: fnp.sum(dn(a, a)))(_x()), 2 * np.cos(host(_x())) + 1,
                    **TOL)


def test_outputs_sharing_an_input_are_copied_once():
    src = F.jit(lambda x: (x.T, x[::-1])).source(_x(9).reshape(3, 3))
    # output 0's copy is named and reused in output 1's alias check, not computed again
    assert src.count("_unshare(") == 2, src
    x = _x(9).reshape(3, 3)
    a, b = F.jit(lambda x: (x.T, x[::-1]))(x)
    assert_allclose((a, b), (host(x).T, host(x)[::-1]))
    hx = np.array(host(x))
    if DEVICE == "cpu":
        a[0, 0] = 99.0
        assert_allclose(x, hx)
        assert_allclose(b, hx[::-1])


def test_big_results_of_earlier_calls_survive_later_calls():
    jf = F.jit(lambda x, y: (fnp.sin(x) * y + 1.0, fnp.exp(-x * x) - y))
    rng = np.random.default_rng(2)
    x1, y1, x2, y2 = (dev(rng.normal(size=(60, 100))) for _ in range(4))
    out1 = jf(x1, y1)
    keep = host(out1)
    keep = [np.array(k) for k in keep]
    jf(x2, y2)
    jf(x2, y1)
    assert_allclose(out1, tuple(keep))
    assert_allclose(out1, (np.sin(host(x1)) * host(y1) + 1.0, np.exp(-host(x1) ** 2) - host(y1)),
                    **TOL)


# ---------------------------------------------------------------------------------------------
# Bad input


def test_concretization_errors_name_line_origin_and_fix():
    def f(x, y):
        if y > 0:
            return x
        return -x

    with pytest.raises(F.ConcretizationError) as e:
        F.jit(f)(_x(), 1.0)
    msg = str(e.value)
    assert "argument y" in msg and "test_jit_programs.py" in msg
    assert "static_argnums" in msg and "cond" in msg and "while_loop" in msg
    with pytest.raises(F.ConcretizationError, match=r"argument d\['k'\]"):
        F.jit(lambda d: 1 if d["k"] < 3 else 0)({"k": np.array(1)})
    with pytest.raises(F.ConcretizationError, match="x of f"):
        F.scan(lambda c, x: (c + 1 if x > 0 else c, None), 0.0, _x())
    with pytest.raises(F.ConcretizationError, match="loop value"):
        F.while_loop(lambda c: c < 3, lambda c: c + 1 if c > 0 else c + 2, 0)


def test_leaked_tracers_name_their_creation_site():
    leak = []

    def f(x):
        leak.append(x * 2)
        return x

    F.jit(f)(_x())
    for use in (lambda: leak[0] + 1, lambda: F.jit(lambda y: y + leak[0])(_x()),
                lambda: F.cond(True, lambda: leak[0], lambda: leak[0])):
        with pytest.raises(F.UnexpectedTracerError, match="test_jit_programs.py"):
            use()


def test_leaked_argument_tracer_names_its_origin():
    leak = []
    F.jit(lambda x: (leak.append(x), x)[1])(1.0)
    with pytest.raises(F.UnexpectedTracerError, match="traced argument x"):
        leak[0] + 1


def test_bad_control_flow_input_messages():
    with pytest.raises(TypeError, match="true_fun gives f32.*false_fun gives f64"):
        F.cond(True, lambda: np.float32(1.0), lambda: np.float64(1.0))
    with pytest.raises(TypeError, match="different structures"):
        F.cond(True, lambda x: (x, x), lambda x: [x, x], 1.0)
    with pytest.raises(TypeError, match="pred must be a scalar boolean"):
        F.cond(np.array(0.5j), lambda: 1.0, lambda: 2.0)
    with pytest.raises(TypeError, match="length must be an int, got 3.5"):
        F.scan(lambda c, x: (c + 1, None), 0, None, length=3.5)  # never truncated to 3
    with pytest.raises(TypeError, match="static Python int"):
        F.jit(lambda n: F.scan(lambda c, x: (c, None), 0.0, None, length=n))(3)
    with pytest.raises(TypeError, match="unhashable: list"):
        F.jit(lambda x, n: x, static_argnums=1)(1.0, [1])
    with pytest.raises(TypeError, match="argument s is a str"):
        F.jit(lambda x, s: x)(1.0, "hello")


# ---------------------------------------------------------------------------------------------
# make_jaxpr / eval_shape of nested constructs


def test_make_jaxpr_indents_nested_jit_cond_while_scan():
    def f(x):
        y = F.jit(lambda z: fnp.sin(z) * 2)(x)
        c = F.cond(fnp.sum(y) > 0, lambda y: y + 1, lambda y: F.while_loop(
            lambda c: fnp.sum(c) < 10, lambda c: c * 2, y + 20), y)
        s, ys = F.scan(lambda c, v: (c + v, c * v), 0.0, c)
        return s, ys

    text = str(F.make_jaxpr(f)(np.ones(3)))
    lines = text.splitlines()
    for prim in ("jit[", "cond[", "while[", "scan["):
        assert any(prim in ln for ln in lines), prim
    # the while loop sits inside a cond branch: deeper indentation than the cond
    ind = lambda s: len(s) - len(s.lstrip())  # noqa: E731
    cond_line = next(ln for ln in lines if "cond[" in ln)
    while_line = next(ln for ln in lines if "while[" in ln)
    assert ind(while_line) > ind(cond_line)
    shapes = F.eval_shape(F.jit(f), F.ShapedArray((5,), np.float32))
    assert (shapes[0].shape, shapes[0].dtype, shapes[1].shape) == ((), np.float32, (5,))


def test_loops_with_python_scalar_init_keep_the_device_of_their_operands():
    # A weak (Python scalar) carry is a Python number between iterations; the results must
    # still come back on the operands' device, and AD's host seed must not meet device arrays.
    xs = dev(np.arange(3.0))
    progs = {
        "scan": (lambda a: F.scan(lambda c, v: (c + v * v, c), 0.0, a),
                 (np.array(5.0), np.array([0.0, 0.0, 1.0]))),
        "scan_closure": (lambda a: F.scan(lambda c, _: (c + a[1], c), 0.0, None, length=3),
                         (np.array(3.0), np.array([0.0, 1.0, 2.0]))),
        "while_closure": (lambda a: F.while_loop(lambda c: c < 3, lambda c: c + a[1], 0.0),
                          np.array(3.0)),
        "grad_scan": (F.grad(lambda a: F.scan(lambda c, v: (c + v * v, c), 0.0, a)[0]),
                      np.array([0.0, 2.0, 4.0])),
        "grad_while": (F.grad(lambda a: F.while_loop(
            lambda c: c[1] < 3, lambda c: (c[0] * a[1], c[1] + 1), (1.0, 0))[0]),
            np.array([0.0, 3.0, 0.0])),
        "cond_literal_branch": (lambda a: F.cond(a[0] > -1, lambda: 1.0, lambda: a[1]),
                                np.array(1.0)),
    }
    for name, (f, want) in progs.items():
        for g in ((f, F.jit(f)) if name != "cond_literal_branch" else (F.jit(f),)):
            got = g(xs)
            check_device(got)
            assert_allclose(got, want, err_msg=name)
