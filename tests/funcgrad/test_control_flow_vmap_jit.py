"""Structured control flow under vmap and jit, and their compositions with grad.

Every result is compared with a Python loop over the batch (or the eager result for jit).
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev, host, uniform_sampler

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import grad, jit, lax, make_jaxpr, vmap

rng = np.random.default_rng(2)


rnd = uniform_sampler(rng)


def loop(f, in_axes, args):
    """The reference: one call per example, stacked."""
    sizes = [np.shape(host(a))[ax] for a, ax in zip(args, in_axes) if ax is not None]
    outs = []
    for i in range(sizes[0]):
        ex = [a if ax is None else dev(np.asarray(np.take(host(a), i, axis=ax))) for a, ax in
              zip(args, in_axes)]
        outs.append(host(f(*ex)))
    return funcgrad.tree_util.tree_map(lambda *xs: np.stack(xs), *outs)


def check_vmap(f, in_axes, args, rtol=1e-12, atol=1e-12):
    assert_allclose(vmap(f, in_axes=in_axes)(*args), loop(f, in_axes, args), rtol=rtol,
                    atol=atol)


# ---------------------------------------------------------------------------------------------
# cond / switch


def f_cond(p, x, y):
    return lax.cond(p > 0, lambda a, b: fnp.sin(a) * b, lambda a, b: a * a - b, x, y)


@pytest.mark.parametrize("in_axes", [(0, None, None), (None, 0, None), (0, 0, 0), (0, 1, None),
                                     (None, 1, 0)])
def test_vmap_cond(in_axes):
    args = [dev(np.array([0.5, -1.0, 2.0, -0.1])), rnd(4, 4), rnd(4)]
    if in_axes[0] is None:
        args[0] = 0.3
    check_vmap(f_cond, in_axes, args)


def test_vmap_cond_batched_predicate_pytree_and_integer_outputs():
    def f(p, x):
        return lax.cond(p, lambda a: {"v": a * 2.0, "k": 1}, lambda a: {"v": -a, "k": 2}, x)

    p = dev(np.array([True, False, True]))
    x = rnd(3, 2)
    check_vmap(f, (0, 0), [p, x])
    check_vmap(f, (0, None), [p, rnd(2)])


@pytest.mark.parametrize("in_axes", [(0, None), (None, 0), (0, 0)])
def test_vmap_switch_clamps_batched_index(in_axes):
    fs = [lambda a: a + 1.0, lambda a: fnp.sin(a), lambda a: a * a]
    f = lambda i, x: lax.switch(i, fs, x)
    idx = dev(np.array([-2, 0, 1, 2, 7]))
    x = rnd(5, 3)
    args = [idx if in_axes[0] == 0 else 1, x if in_axes[1] == 0 else rnd(3)]
    check_vmap(f, in_axes, args)


def test_vmap_cond_branch_closing_over_batched_value():
    def f(w, x):
        return lax.cond(x > 0, lambda a: a * w, lambda a: a + w, x)

    check_vmap(f, (0, None), [rnd(4), 0.7])
    check_vmap(f, (0, 0), [rnd(4), dev(np.array([1.0, -1.0, 2.0, -3.0]))])


# ---------------------------------------------------------------------------------------------
# while / fori


def newton(a):
    return lax.while_loop(lambda x: fnp.abs(x * x - a) > 1e-13 * a, lambda x: 0.5 * (x + a / x),
                          a)


def test_vmap_while_batched_predicate():
    a = dev(np.array([2.0, 9.0, 0.01, 1e4]))
    assert_allclose(vmap(newton)(a), np.sqrt(host(a)), rtol=1e-12)


def test_vmap_while_unbatched_predicate_batched_carry():
    def f(x):
        return lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, fnp.sin(c[1])), (0, x))

    check_vmap(f, (0,), [rnd(4, 2)])


def test_vmap_while_batched_body_constant_only():
    def f(w):
        return lax.while_loop(lambda c: c[0] < 4, lambda c: (c[0] + 1, c[1] * w + 1.0),
                              (0, 1.0))[1]

    check_vmap(f, (0,), [rnd(3)])


@pytest.mark.parametrize("in_axes", [(None, 0, None), (0, None, None), (0, 0, 0), (None, None, 0)])
def test_vmap_fori_loop_bounds(in_axes):
    def f(lo, hi, x):
        return lax.fori_loop(lo, hi, lambda i, c: c * 1.1 + i, x)

    los, his = dev(np.array([0, 2, 1, 0])), dev(np.array([3, 2, 5, 0]))
    args = [los if in_axes[0] == 0 else 1, his if in_axes[1] == 0 else 4,
            rnd(4) if in_axes[2] == 0 else 0.5]
    check_vmap(f, in_axes, args)


def test_nested_vmap_of_while():
    a = dev(rng.uniform(0.5, 50.0, (3, 4)))
    assert_allclose(vmap(vmap(newton))(a), np.sqrt(host(a)), rtol=1e-12)


# ---------------------------------------------------------------------------------------------
# scan / map


def f_scan(init, xs, w):
    def step(c, x):
        c = fnp.tanh(c * w + x)
        return c, c * x
    return lax.scan(step, init, xs)


@pytest.mark.parametrize("in_axes", [(0, None, None), (None, 0, None), (None, None, 0),
                                     (0, 1, 0), (None, 2, None)])
def test_vmap_scan(in_axes):
    init = rnd(3, 2) if in_axes[0] == 0 else rnd(2)
    if in_axes[1] == 0:
        xs = rnd(3, 4, 2)
    elif in_axes[1] == 1:
        xs = rnd(4, 3, 2)
    elif in_axes[1] == 2:
        xs = rnd(4, 2, 3)
    else:
        xs = rnd(4, 2)
    w = rnd(3) if in_axes[2] == 0 else 0.8
    check_vmap(f_scan, in_axes, [init, xs, w])


def test_vmap_scan_capturing_batched_value_reverse():
    def f(w):
        return lax.scan(lambda c, x: (c * w + x, c), 0.0, dev(np.arange(4.0)), reverse=True)

    check_vmap(f, (0,), [rnd(5)])


def test_vmap_map():
    f = lambda x: lax.map(lambda r: fnp.sum(r * r), x)
    check_vmap(f, (0,), [rnd(3, 4, 2)])


# ---------------------------------------------------------------------------------------------
# vmap of grad, grad of vmap


@pytest.mark.parametrize("name", ["cond", "switch", "while", "fori_traced", "scan"])
def test_vmap_of_grad_and_grad_of_vmap(name):
    if name == "cond":
        f = lambda x: lax.cond(x > 0.0, lambda a: fnp.sin(a) * a, lambda a: a ** 3, x)
        xs = dev(np.array([0.5, -1.0, 2.0]))
    elif name == "switch":
        f = lambda x: lax.switch(fnp.floor(x).astype(np.int64),
                                 [lambda a: a * a, fnp.sin, fnp.exp], x)
        xs = dev(np.array([0.5, 1.5, 2.5, -3.0]))
    elif name == "while":
        f = newton
        xs = dev(np.array([2.0, 9.0, 100.0]))
    elif name == "fori_traced":
        f = lambda x: lax.fori_loop(0, fnp.ceil(x).astype(np.int64), lambda i, c: c * x, 1.0)
        xs = dev(np.array([0.5, 1.5, 2.2, 3.1]))
    else:
        f = lambda x: lax.scan(lambda c, a: (c * fnp.sin(a * x), c), 1.0,
                               dev(np.array([0.3, 0.8, 1.1])))[0]
        xs = dev(np.array([0.5, -1.0, 2.0]))
    want = np.array([float(grad(f)(dev(np.asarray(x)))) for x in host(xs)])
    assert_allclose(vmap(grad(f))(xs), want, rtol=1e-10)
    assert_allclose(grad(lambda v: fnp.sum(vmap(f)(v)))(xs), want, rtol=1e-10)
    assert_allclose(jit(vmap(grad(f)))(xs), want, rtol=1e-10)


def test_vmap_grad_while_examples_stop_at_different_iterations():
    # Examples finish after 1, 3 and 6 steps: the finished ones must not keep accumulating.
    def f(x):
        return lax.while_loop(lambda v: v < 10.0, lambda v: v * 2.0 + 0.5 * fnp.sin(v), x)

    xs = dev(np.array([6.0, 1.5, 0.2]))
    want = np.array([float(grad(f)(dev(np.asarray(x)))) for x in host(xs)])
    assert_allclose(vmap(grad(f))(xs), want, rtol=1e-12)
    wantgg = np.array([float(grad(grad(f))(dev(np.asarray(x)))) for x in host(xs)])
    assert_allclose(vmap(grad(grad(f)))(xs), wantgg, rtol=1e-10)


# ---------------------------------------------------------------------------------------------
# jit


@pytest.mark.parametrize("name", ["cond", "switch", "while", "fori", "fori_traced", "scan", "map"])
def test_jit_matches_eager(name):
    x = rnd(3)
    fs = {
        "cond": lambda x: lax.cond(x[0] > 1.0, lambda a: a * 2.0, fnp.sin, x),
        "switch": lambda x: lax.switch(x.shape[0], [fnp.sin, fnp.cos], x),
        "while": lambda x: lax.while_loop(lambda c: fnp.sum(c) < 100.0, lambda c: c * 1.7, x),
        "fori": lambda x: lax.fori_loop(0, 4, lambda i, c: c * x + i, x),
        "fori_traced": lambda x: lax.fori_loop(0, fnp.sum(x).astype(np.int64) + 2,
                                               lambda i, c: c * 0.5 + i, x),
        "scan": lambda x: lax.scan(lambda c, a: (c + a * c, c), 1.0, x),
        "map": lambda x: lax.map(lambda a: a * fnp.sin(a), x),
    }
    f = fs[name]
    assert_allclose(jit(f)(x), f(x))
    assert_allclose(jit(f)(x + 1.0), f(x + 1.0))


def test_jit_of_grad_and_grad_of_jit_of_loops():
    def f(x):
        c, ys = lax.scan(lambda c, a: (c * fnp.cos(a), c * a), 1.0, x)
        w = lax.while_loop(lambda v: v[0] < 3, lambda v: (v[0] + 1, v[1] * c + 0.1), (0, c))[1]
        return w + fnp.sum(ys)

    x = rnd(4)
    g = grad(f)(x)
    assert_allclose(jit(grad(f))(x), g, rtol=1e-12)
    assert_allclose(grad(jit(f))(x), g, rtol=1e-12)
    xb = rnd(2, 4)
    assert_allclose(vmap(jit(grad(f)))(xb), loop(grad(f), (0,), [xb]), rtol=1e-12)


def test_jit_retraces_nothing_per_iteration():
    calls = []

    def body(c):
        calls.append(1)
        return c * 2.0

    f = jit(lambda x: lax.while_loop(lambda c: fnp.sum(c) < 1e6, body, x))
    f(rnd(3))
    f(rnd(3))
    assert len(calls) == 1


def test_make_jaxpr_of_vmapped_while_shows_masking():
    text = str(make_jaxpr(vmap(newton))(np.array([2.0, 3.0])))
    assert "reduce_or" in text and "select_n" in text


def test_vmap_of_grad_of_cond_containing_while():
    def newton_abs(a):
        a = fnp.abs(a) + 0.1  # every example converges: vmap runs both branches on all
        return newton(a)

    g = lambda x: lax.cond(x > 0, newton_abs, lambda a: a * a, x)
    xs = dev(np.array([4.0, -3.0, 2.0]))
    want = np.array([float(grad(g)(dev(np.asarray(x)))) for x in host(xs)])
    assert_allclose(vmap(grad(g))(xs), want, rtol=1e-9)
    assert_allclose(vmap(jit(grad(g)))(xs), want, rtol=1e-9)
    wantgg = np.array([float(grad(grad(g))(dev(np.asarray(x)))) for x in host(xs)])
    assert_allclose(vmap(grad(grad(g)))(xs), wantgg, rtol=1e-7)


@pytest.mark.parametrize("counter", [0, np.int64(0)])
def test_batched_while_with_a_scalar_counter_runs_on_the_batch_device(counter):
    # Scalars are device-neutral: with the default device elsewhere (a CuPy batch while the
    # default is the host), the counter must join the batch's device, not mix with it.
    with funcgrad.default_device("cpu"):
        x = funcgrad.device_put(np.array([1.0, 3.0, 20.0]), "strict")

        def f(x):
            return lax.while_loop(lambda c: c[1] < 10.0, lambda c: (c[0] + 1, c[1] * 2),
                                  (counter, x))

        n, y = vmap(f)(x)
        assert funcgrad.backend.device_of(n) == "strict"
        assert_allclose(host(n), np.array([4, 2, 0]))
        assert_allclose(host(y), np.array([16.0, 12.0, 20.0]))
        n, y = jit(vmap(f))(x)
        assert_allclose(host(n), np.array([4, 2, 0]))


def test_tape_batching_limits_raise_a_funcgrad_error_naming_the_line():
    # Reverse-mode residual tapes of while_loops that the cond batch rule cannot merge (not
    # reached by vmap(grad(f)), which differentiates inside the vmap): a MissingRuleError
    # naming the user's line and what to do, not a bare NotImplementedError.
    from funcgrad.avals import ShapedArray
    from funcgrad.errors import MissingRuleError
    from funcgrad.ir import ClosedJaxpr, Jaxpr, Var
    from funcgrad.ops.control_flow import conditionals
    from funcgrad.ops.control_flow._tape import TapeAval

    v = Var(TapeAval(ShapedArray((2,), np.dtype(np.float64))))
    passes_tape = ClosedJaxpr(Jaxpr([], [v], [v], []), [])
    with pytest.raises(MissingRuleError, match=r"vmap of a lax.cond at .*test_control_flow"
                       r".*static trip count"):
        conditionals._batched_zero_tapes(passes_tape, [0], 3)
    with pytest.raises(MissingRuleError, match="several branches return a while_loop tape"):
        conditionals._tape_owner((passes_tape, passes_tape), 0)
