"""Derivatives through structured control flow: jvp, grad, grad of grad, linearize, vjp.

Includes reverse mode through ``while_loop`` and traced-bound ``fori_loop`` (a run-time-length
tape; JAX refuses these), closures over outer tracers, integer carries and symbolic zeros.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev, host, uniform_sampler

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import grad, jit, jvp, lax, linearize, make_jaxpr, vjp
from funcgrad.test_util import check_grads

rng = np.random.default_rng(1)


rnd = uniform_sampler(rng)


def fd(f, x, eps=1e-6):
    """Central difference of scalar f at scalar x."""
    return (float(f(x + eps)) - float(f(x - eps))) / (2 * eps)


# ---------------------------------------------------------------------------------------------
# check_grads to order 2, forward and reverse


def f_cond(x, y):
    return lax.cond(fnp.sum(x) > 0, lambda a, b: fnp.sin(a) * b, lambda a, b: a * a - b, x, y)


def f_switch(x, i):
    return lax.switch(i, [lambda a: fnp.exp(a), lambda a: a * fnp.cos(a), lambda a: -a ** 3], x)


def f_while(x):
    def body(c):
        i, v = c
        return i + 1, fnp.sin(v) * 1.1 + 0.1 * v * v

    return lax.while_loop(lambda c: c[0] < 4, body, (0, x))[1]


def f_fori(x, y):
    return lax.fori_loop(0, 3, lambda i, c: fnp.tanh(c * y + i), x)


def f_scan(x, w):
    def step(c, a):
        c = fnp.sin(c * w + a)
        return c, c * a

    carry, ys = lax.scan(step, x[0], x)
    return carry + fnp.sum(ys)


def f_scan_rev(x, w):
    carry, ys = lax.scan(lambda c, a: (c * w + fnp.cos(a), c * a), 1.0, x, reverse=True)
    return carry * fnp.sum(ys * ys)


def f_map(x):
    return lax.map(lambda a: fnp.sin(a) * a, x)


@pytest.mark.parametrize("f,args", [
    (f_cond, (np.array([0.3, 0.7]), np.array([1.2, -0.4]))),
    (f_cond, (np.array([-0.3, -0.7]), np.array([1.2, -0.4]))),
    (lambda x: f_switch(x, 0), (np.array([0.3, 0.5]),)),
    (lambda x: f_switch(x, 1), (np.array([0.3, 0.5]),)),
    (lambda x: f_switch(x, 9), (np.array([0.3, 0.5]),)),
    (f_while, (np.array([0.2, -0.3]),)),
    (f_fori, (np.array([0.2, -0.3]), np.array([0.9, 1.1]))),
    (f_scan, (np.array([0.2, -0.3, 0.5]), 0.7)),
    (f_scan_rev, (np.array([0.2, -0.3, 0.5]), 0.7)),
    (f_map, (np.array([[0.2, -0.3], [0.5, 1.0]]),)),
], ids=["cond_true", "cond_false", "switch0", "switch1", "switch_clamped", "while", "fori",
        "scan", "scan_reverse", "map"])
def test_check_grads_order2(f, args):
    check_grads(f, dev(args), order=2, modes=("fwd", "rev"))


# ---------------------------------------------------------------------------------------------
# reverse mode through while_loop (run-time trip count)


def newton_sqrt(a, tol=1e-13):
    return lax.while_loop(lambda x: fnp.abs(x * x - a) > tol * a, lambda x: 0.5 * (x + a / x), a)


@pytest.mark.parametrize("a", [2.0, 9.0, 0.3, 150.0])
def test_grad_newton_sqrt_while_matches_analytic(a):
    assert_allclose(newton_sqrt(a), np.sqrt(a), rtol=1e-12)
    assert_allclose(grad(newton_sqrt)(a), 0.5 / np.sqrt(a), rtol=1e-9)
    assert_allclose(grad(grad(newton_sqrt))(a), -0.25 * a ** -1.5, rtol=1e-7)


def test_grad_newton_sqrt_vector_and_jit():
    a = dev(np.array([2.0, 9.0, 0.3]))

    def f(a):
        x = lax.while_loop(lambda x: fnp.max(fnp.abs(x * x - a)) > 1e-13, lambda x: 0.5 * (x + a / x), a)
        return fnp.sum(x)

    want = 0.5 / np.sqrt(host(a))
    assert_allclose(grad(f)(a), want, rtol=1e-9)
    assert_allclose(jit(grad(f))(a), want, rtol=1e-9)
    assert_allclose(grad(jit(f))(a), want, rtol=1e-9)


def test_vjp_while_records_a_tape_and_a_reverse_scan():
    text = str(make_jaxpr(lambda a: vjp(newton_sqrt, a)[1](1.0)[0])(2.0))
    assert "tape[f64[]]" in text and "tape[bool[]]" in text
    assert "length=None" in text and "reverse=True" in text


def test_grad_while_of_a_scalar_evaluates_the_tangent_loop_forward():
    # One real input: its tangents are computed forward (linearize.ForwardTangents).
    text = str(make_jaxpr(grad(newton_sqrt))(2.0))
    assert "reverse=True" not in text


def test_grad_while_zero_iterations_is_identity_map():
    f = lambda x: lax.while_loop(lambda c: c > 100.0, lambda c: c * 3.0, x) * 2.0
    assert float(grad(f)(1.0)) == 2.0


def test_grad_while_through_body_constant_only():
    # The carry starts with a zero tangent; the closure over x makes it nonzero.
    def f(x):
        return lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * x + 1.0),
                              (0, 1.0))[1]

    # c: 1 -> x + 1 -> x^2 + x + 1 -> x^3 + x^2 + x + 1
    x = 1.3
    assert_allclose(f(x), x ** 3 + x ** 2 + x + 1, rtol=1e-14)
    assert_allclose(grad(f)(x), 3 * x ** 2 + 2 * x + 1, rtol=1e-13)
    assert_allclose(grad(grad(f))(x), 6 * x + 2, rtol=1e-12)
    assert_allclose(jvp(f, (x,), (1.0,))[1], 3 * x ** 2 + 2 * x + 1, rtol=1e-13)


def test_grad_fori_loop_traced_bounds():
    def f(x, n):
        return lax.fori_loop(0, n, lambda i, c: c * x + i, 1.0)

    def ref(x, n):
        c = 1.0
        for i in range(n):
            c = c * x + i
        return c

    x = 1.5
    for n in (0, 1, 4):
        g = jit(grad(f))(x, n)
        assert_allclose(g, fd(lambda v, n=n: ref(v, n), x), rtol=1e-7, atol=1e-9)
        assert_allclose(grad(lambda v, n=n: jit(f)(v, n))(x), g, rtol=1e-13)
    assert "while" in str(make_jaxpr(grad(f))(x, 4))
    gg = jit(grad(grad(f)))(x, 4)
    assert_allclose(gg, fd(lambda v: float(grad(f)(v, 4)), x), rtol=1e-6)


def test_grad_while_with_data_dependent_trip_count_per_call():
    # The tape's length differs from call to call.
    def f(x):
        i, v = lax.while_loop(lambda c: c[1] < 10.0, lambda c: (c[0] + 1, c[1] * 1.5), (0, x))
        return v

    for x in (0.5, 1.0, 7.0, 20.0):
        n = 0
        v = x
        while v < 10.0:
            v, n = v * 1.5, n + 1
        assert_allclose(grad(f)(x), 1.5 ** n)


def test_while_inside_scan_and_scan_inside_while_reverse_mode():
    def inner_sqrt(a):
        return lax.while_loop(lambda x: fnp.abs(x * x - a) > 1e-13 * a,
                              lambda x: 0.5 * (x + a / x), a)

    def f(xs):
        carry, ys = lax.scan(lambda c, a: (c + inner_sqrt(a * c), c), 1.0, xs)
        return carry + fnp.sum(ys)

    def ref(xs):
        c, tot = 1.0, 0.0
        for a in xs:
            tot += c
            c = c + np.sqrt(a * c)
        return c + tot

    xs = np.array([2.0, 3.0, 0.5])
    assert_allclose(f(dev(xs)), ref(xs), rtol=1e-12)
    g = host(grad(f)(dev(xs)))
    num = [(ref(xs + e) - ref(xs - e)) / 2e-6 for e in np.eye(3) * 1e-6]
    assert_allclose(g, np.array(num), rtol=1e-6)

    def h(x):
        def body(c):
            i, v = c
            _, ys = lax.scan(lambda s, a: (s * a, s * a), v, dev(np.array([0.9, 1.1])))
            return i + 1, fnp.sum(ys) * 0.5
        return lax.while_loop(lambda c: c[0] < 3, body, (0, x))[1]

    assert_allclose(grad(h)(1.3), fd(h, 1.3), rtol=1e-7)


def test_cond_inside_while_and_while_inside_cond_reverse_mode():
    def f(x):
        def body(c):
            i, v = c
            return i + 1, lax.cond(v > 1.0, lambda a: a * 0.5, lambda a: a * a + 1.0, v)
        return lax.while_loop(lambda c: c[0] < 5, body, (0, x))[1]

    for x in (0.3, 0.9, 2.5):
        assert_allclose(grad(f)(x), fd(f, x), rtol=1e-6)

    g = lambda x: lax.cond(x > 0, newton_sqrt, lambda a: a * a, x)
    assert_allclose(grad(g)(4.0), 0.25, rtol=1e-9)
    assert_allclose(grad(g)(-3.0), -6.0)
    assert_allclose(grad(grad(g))(4.0), -0.25 * 4.0 ** -1.5, rtol=1e-7)


def test_linearize_and_vjp_through_while():
    y, f_jvp = linearize(newton_sqrt, 4.0)
    assert_allclose(y, 2.0)
    assert_allclose(f_jvp(2.0), 0.5, rtol=1e-9)
    assert_allclose(f_jvp(4.0), 1.0, rtol=1e-9)

    def f(x):
        return lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, fnp.sin(c[1]) * 2.0),
                              (0, x))[1]

    x = dev(np.array([0.1, 0.4, -0.3]))
    out, pull = vjp(f, x)
    ct = dev(np.array([1.0, -2.0, 0.5]))
    (g,) = pull(ct)
    v = host(x)
    d = np.ones(3)
    for _ in range(3):
        d = d * 2.0 * np.cos(v)
        v = np.sin(v) * 2.0
    assert_allclose(g, host(ct) * d, rtol=1e-12)


# ---------------------------------------------------------------------------------------------
# scan: hessian, closures, integers, zeros


def test_hessian_of_scan():
    def f(x):
        carry, ys = lax.scan(lambda c, a: (c * fnp.sin(a) + a * a, c), 0.5, x)
        return carry + fnp.sum(ys * x)

    x = dev(np.array([0.3, -0.2, 0.8]))
    h = host(funcgrad.hessian(f)(x))
    gf = grad(f)
    num = np.stack([(host(gf(x + dev(e))) - host(gf(x - dev(e)))) / 2e-5
                    for e in np.eye(3) * 1e-5])
    assert_allclose(h, num, rtol=1e-6, atol=1e-8)
    assert_allclose(h, h.T, rtol=1e-12, atol=1e-14)


def test_scan_residuals_invariant_in_the_loop_are_not_stacked():
    w = np.ones((3, 3))
    f = lambda x, w: lax.scan(lambda c, _: (fnp.tanh(w @ c), None), x, None, length=50)[0]
    text = str(make_jaxpr(grad(lambda x, w: fnp.sum(f(x, w)), argnums=(0, 1)))(np.ones(3), w))
    assert "f64[50,3,3]" not in text


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("transposed", [False, True])
def test_scan_weight_gradient_summed_after_the_loop(reverse, transposed):
    # The cotangent of a loop-invariant weight is sum_t (per-step product): the transposed
    # scan hands the stacked factors out and one contraction after the loop sums them,
    # instead of accumulating a weight-sized carry step by step. Values: those of the unrolled
    # loop (within rounding: the summation order changes).
    xs = rnd(7, 4, 3, low=-1.0, high=1.0)
    h0 = rnd(4, 5, low=-1.0, high=1.0)
    w_ih, w_hh = rnd(5, 3, low=-0.5, high=0.5), rnd(5, 5, low=-0.5, high=0.5)

    def cell(h, x, w_ih, w_hh):
        hw = h @ w_hh.T if transposed else h @ w_hh
        return fnp.tanh(x @ w_ih.T + hw)

    def scanned(h0, w_ih, w_hh):
        hn, ys = lax.scan(lambda h, x: (cell(h, x, w_ih, w_hh),) * 2, h0, xs, reverse=reverse)
        return fnp.sum(hn * hn) + fnp.sum(fnp.sin(ys))

    def unrolled(h0, w_ih, w_hh):
        h, ys = h0, []
        for t in (range(6, -1, -1) if reverse else range(7)):
            h = cell(h, xs[t], w_ih, w_hh)
            ys.append(h)
        return fnp.sum(h * h) + sum(fnp.sum(fnp.sin(y)) for y in ys)

    want = grad(unrolled, argnums=(0, 1, 2))(h0, w_ih, w_hh)
    for f in (grad(scanned, argnums=(0, 1, 2)), jit(grad(scanned, argnums=(0, 1, 2)))):
        for got, w in zip(f(h0, w_ih, w_hh), want):
            assert_allclose(got, w, rtol=1e-12, atol=1e-13)
    text = str(make_jaxpr(grad(scanned, argnums=(0, 1, 2)))(h0, w_ih, w_hh))
    # both loops carry h (its cotangent) alone: no weight-sized accumulators
    assert text.count("num_carry=1\n") == 2 and "num_carry=3" not in text
    check_grads(scanned, (h0, w_ih, w_hh), order=2, modes=("rev",))


def test_cond_inside_grad_closes_over_outer_variable():
    def f(w, x):
        return lax.cond(x > 0, lambda a: a * w * w, lambda a: a + w, x)

    assert_allclose(grad(f)(3.0, 2.0), 12.0)
    assert_allclose(grad(f)(3.0, -2.0), 1.0)
    assert_allclose(grad(f, argnums=1)(3.0, 2.0), 9.0)
    # Nested: the inner grad's branch closes over the outer grad's variable.
    g = grad(lambda a: grad(lambda b: lax.cond(b > 0, lambda x: x * a * b, lambda x: x, b))(2.0))
    assert_allclose(g(3.0), 4.0)  # d/da d/db (a b^2) = d/da 2ab = 2b


def test_perturbation_confusion_through_loops():
    f = lambda x: grad(lambda y: lax.fori_loop(0, 3, lambda i, c: c * x, y))(1.0)
    assert_allclose(grad(f)(2.0), 12.0)  # d/dx x^3
    h = lambda x: grad(lambda y: lax.scan(lambda c, a: (c * x * a, None), y,
                                          dev(np.array([1.0, 2.0])))[0])(1.0)
    assert_allclose(grad(h)(3.0), 2.0 * 2 * 3.0)  # d/dx 2 x^2


def test_integer_carries_get_float0_tangents():
    def f(x):
        return lax.fori_loop(0, 3, lambda i, c: (c[0] + i, c[1] * x + i), (0, x))

    (n, v), (tn, tv) = jvp(f, (1.5,), (1.0,))
    assert int(n) == 3 and host(tn).dtype == funcgrad.float0
    x = 1.5
    # v: x -> x^2 + 0 -> x^3 + 1 -> x^4 + x + 2
    assert_allclose(tv, 4 * x ** 3 + 1)
    assert_allclose(grad(lambda x: f(x)[1])(x), 4 * x ** 3 + 1)

    def g(x):
        i, v = lax.while_loop(lambda c: c[0] < 4, lambda c: (c[0] + 1, c[1] + c[0] * x), (0, x))
        return v

    assert_allclose(grad(g)(2.0), 1.0 + 0 + 1 + 2 + 3)


def test_symbolic_zero_tangents_and_unused_inputs():
    def f(x, y):
        carry, _ = lax.scan(lambda c, a: (c * a + y, None), x, dev(np.array([1.0, 2.0])))
        return carry

    # Only y's tangent is nonzero; x enters the carry with a symbolic zero.
    _, t = jvp(f, (1.0, 2.0), (0.0, 1.0))
    assert_allclose(t, 3.0)  # ((x + y) * 2 + y) = 2x + 3y
    assert_allclose(grad(f, argnums=(0, 1))(1.0, 2.0), (2.0, 3.0))
    unused = lambda x, z: lax.cond(True, lambda a: a * 2.0, lambda a: a, x)
    assert_allclose(grad(unused, argnums=1)(1.0, 5.0), 0.0)
    assert_allclose(grad(lambda x: lax.while_loop(lambda c: c < 0.0, lambda c: c, 1.0) * x)(2.0),
                    1.0)


def test_switch_grad_wrt_traced_index_function():
    def f(x, i):
        return lax.switch(i, [lambda a: a * a, lambda a: fnp.sin(a), lambda a: 3.0 * a], x)

    for i, want in ((0, 2 * 0.7), (1, np.cos(0.7)), (2, 3.0), (5, 3.0)):
        assert_allclose(jit(grad(f))(0.7, i), want, rtol=1e-14)
        assert_allclose(grad(f)(0.7, i), want, rtol=1e-14)


def test_jvp_of_cond_with_integer_output():
    f = lambda x: lax.cond(x > 0, lambda a: (a * 2.0, 1), lambda a: (a, 2), x)
    (y, k), (ty, tk) = jvp(f, (1.0,), (1.0,))
    assert float(ty) == 2.0 and host(tk).dtype == funcgrad.float0


def test_second_derivatives_agree_across_compositions():
    def f(x):
        c, ys = lax.scan(lambda c, a: (fnp.sin(c * a) + a, c * a), x[0], x)
        w = lax.while_loop(lambda v: v[0] < 3, lambda v: (v[0] + 1, fnp.cos(v[1]) * c), (0, x))[1]
        k = lax.cond(c > 0, lambda u: u * 2.0, lambda u: u ** 2, w)
        return fnp.sum(k) + fnp.sum(ys)

    x = dev(np.array([0.3, 0.5, 0.9]))
    gf = grad(f)
    num = np.stack([(host(gf(x + dev(e))) - host(gf(x - dev(e)))) / 2e-5
                    for e in np.eye(3) * 1e-5])
    for h in (funcgrad.jacfwd(funcgrad.jacrev(f)), funcgrad.hessian(f),
              funcgrad.jacrev(funcgrad.jacfwd(f)), jit(funcgrad.jacrev(funcgrad.jacrev(f)))):
        assert_allclose(h(x), num, rtol=1e-6, atol=1e-7)


def test_scan_invariant_split_keeps_each_const_with_its_variable():
    # The loop-invariant part of a scan body reads only the second of two consts: DCE drops
    # the first constvar, and the consts must follow (pairing by position gave the second
    # variable the first's value).
    from funcgrad.ir import ClosedJaxpr, Eqn, Jaxpr, Var
    from funcgrad.ops import elementwise as ew
    from funcgrad.ops.control_flow.scans import split_invariant

    aval = funcgrad.core.get_aval(np.ones(3))
    c1, c2, x, xt = Var(aval), Var(aval), Var(aval), Var(aval)
    inv, var_out = Var(aval), Var(aval)
    eqns = [Eqn(ew.mul_p, [x, c2], [inv], {}), Eqn(ew.mul_p, [xt, c1], [var_out], {})]
    known = ClosedJaxpr(Jaxpr([c1, c2], [x, xt], [var_out, inv], eqns),
                        [np.full(3, 10.0), np.full(3, 2.0)])
    _, invariant, mask = split_invariant(known, 1, 1, 1)
    assert mask == (True,)
    assert len(invariant.consts) == len(invariant.jaxpr.constvars) == 1
    out, = funcgrad.core.eval_jaxpr(invariant.jaxpr, invariant.consts, np.ones(3))
    np.testing.assert_array_equal(host(out), np.full(3, 2.0))
