"""Higher-order derivatives against JAX 0.10.2: nested grad, jet and hessians at the points
where JAX and a naive implementation part ways. The expected values are JAX's, recorded as
literals (the generating calls are quoted beside them; CI has no JAX)."""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
from tests.helpers import dev, host


def _nest_grad(f, k):
    for _ in range(k):
        f = funcgrad.grad(f)
    return f


def test_sinc_derivatives_at_zero_match_jax():
    # [jax.grad^k(jnp.sinc)(0.0) for k in 1..4]: the Maclaurin series of sin(pi x)/(pi x)
    want = [0.0, -3.2898681336964524, 0.0, 19.481818206800487]
    got = [float(host(_nest_grad(fnp.sinc, k)(dev(0.0)))) for k in range(1, 5)]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    # Taylor mode goes through the same rule: derivatives of order 0..4 in one pass
    np.testing.assert_allclose(host(funcgrad.derivatives(fnp.sinc, 4)(dev(0.0))),
                               [1.0] + want, rtol=1e-12, atol=1e-12)


def test_sinc_under_jit_vmap_and_away_from_zero():
    x = dev(np.array([0.0, 0.5, -1.25, 2.0]))
    # jax.vmap(jax.grad(jax.grad(jnp.sinc)))(x) and jnp.sinc(x)
    want_h = [-3.2898681336964524, -1.190227128238935, 2.451768878245908,
              -0.49999999999999956]
    got = funcgrad.jit(funcgrad.vmap(_nest_grad(fnp.sinc, 2)))(x)
    np.testing.assert_allclose(host(got), want_h, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(host(fnp.sinc(x)), np.sinc(host(x)), rtol=1e-15)
    # the gradient at 0 is finite and exact (no stand-in value near 0)
    g = funcgrad.grad(lambda v: fnp.sum(fnp.sinc(v)))(x)
    np.testing.assert_allclose(host(g)[0], 0.0, atol=0)


# -- Taylor mode through control flow and custom rules ---------------------------------------

_X0 = np.array([0.3, 0.7, 1.3])
_V = np.array([1.0, -0.5, 0.25])

# Derivatives 0..6 of t -> f(x0 + t v), from JAX by nesting jax.jvp six times (JAX's jet has
# no rule for cond/scan/while, reduce_prod or relu's custom_jvp).
_TAYLOR_CASES = {
    "scan": (lambda x: fnp.sum(funcgrad.lax.scan(
        lambda c, xi: (fnp.sin(c) * xi + c, c * c), 0.5, x)[1]),
        [1.796632420538193, 1.5700657453245732, -0.16092168353394992, -0.980348995546002,
         2.325158884761949, -0.6445440606403166, -2.926011843462887]),
    "fori": (lambda x: fnp.sum(funcgrad.lax.fori_loop(
        0, 3, lambda i, c: fnp.tanh(c) * x + i, x)),
        [8.088791799613833, 0.5502288628030543, 0.510547472058261, 2.307895276329869,
         -0.8873346375391064, -79.30469389521434, -161.33226293349304]),
    "while": (lambda x: fnp.sum(funcgrad.lax.while_loop(
        lambda c: c[0] < 2.0, lambda c: (c[0] + 0.7, c[1] * fnp.cos(c[1])), (0.0, x))[1]),
        [0.9867144020392451, 0.44166814608553195, -2.1225156022429252, -1.0927102742338297,
         31.650472231945166, -113.43259875541565, -931.2039610428276]),
    "cond": (lambda x: funcgrad.lax.cond(
        x[0] > 0, lambda x: fnp.sum(fnp.exp(x) * x), lambda x: fnp.sum(x), x),
        [6.584670205407153, 2.1529722323799647, 5.220750772663848, 3.769704307651383,
         6.471898637968072, 6.818126753554563, 8.721464742278862]),
    "relu_softplus_lse": (lambda x: fnp.sum(
        funcgrad.nn.relu(fnp.sin(x)) + funcgrad.nn.softplus(x * x))
        + funcgrad.scipy.special.logsumexp(x * x),
        [7.567180271148934, 1.4407187599269775, 1.9452375387356347, -0.4906890696151843,
         4.552098436110168, 2.12633561185644, -7.98547503700488]),
    "prod_cumprod": (lambda x: fnp.prod(fnp.sin(x)) + fnp.sum(fnp.cumprod(x * x)),
                     [0.39207057531047307, 1.7469085501460844, 1.9258410669248973,
                      -9.39940066393539, 10.081426537261137, 18.063695847426438,
                      4.712617453967277]),
}


@pytest.mark.parametrize("name", sorted(_TAYLOR_CASES))
def test_taylor_through_control_flow_and_custom_rules_match_jax(name):
    f, want = _TAYLOR_CASES[name]
    x, v = dev(_X0), dev(_V)
    np.testing.assert_allclose(host(funcgrad.derivatives(f, 6)(x, v)), want, rtol=1e-10)
    # the predicate is traced under jit: the cond itself carries the series
    got = funcgrad.jit(lambda x, v: funcgrad.derivatives(f, 6)(x, v))(x, v)
    np.testing.assert_allclose(host(got), want, rtol=1e-10)


@pytest.mark.parametrize("name", ["scan", "fori", "while", "relu_softplus_lse"])
def test_taylor_program_grows_polynomially_in_the_order(name):
    # One pass through the loop body (or the custom rule) per order, not 2^k nested JVPs:
    # the staged program of order 8 is a small multiple of order 2's.
    f = _TAYLOR_CASES[name][0]
    x, v = dev(_X0), dev(_V)

    def size(k):
        closed = funcgrad.make_jaxpr(lambda x, v: funcgrad.derivatives(f, k)(x, v))(x, v)
        return _count_eqns(closed.jaxpr)

    assert size(8) < 20 * size(2)  # nesting jvp: 2^6 = 64 times as many, and more


def _count_eqns(jaxpr) -> int:
    n = 0
    for e in jaxpr.eqns:
        n += 1
        for p in e.params.values():
            for sub in (p if isinstance(p, tuple) else (p,)):
                inner = getattr(sub, "jaxpr", None)
                if inner is not None and hasattr(inner, "eqns"):
                    n += _count_eqns(inner)
    return n


def test_jet_of_a_gather_with_a_fill_value_fills_higher_coefficients_with_zero():
    # products_of_others (prod's JVP) shifts with fill 1: only the primal is filled with 1
    from funcgrad.ops.reductions import products_of_others

    x, v = dev(_X0), dev(_V)
    y0, (y1, y2) = funcgrad.jet(lambda x: products_of_others(x, 0), (x,), ([v, 0 * v],))
    # jet(lambda x: jnp.stack([x[1]*x[2], x[0]*x[2], x[0]*x[1]]), (x0,), ([v, 0*v],))
    np.testing.assert_allclose(host(y0), [0.91, 0.39, 0.21], rtol=1e-12)
    np.testing.assert_allclose(host(y1), [-0.475, 1.375, 0.55], rtol=1e-12)
    np.testing.assert_allclose(host(y2), [-0.25, 0.5, -1.0], rtol=1e-12)


# -- linear_transpose of loops whose carry holds a counter -----------------------------------


def test_linear_transpose_of_fori_loop_with_its_counter_in_the_carry():
    x = dev(np.array([1.0, 2.0, 3.0]))
    lt = funcgrad.linear_transpose
    fori = funcgrad.lax.fori_loop
    # jax.linear_transpose(lambda a: lax.fori_loop(0, 3, lambda i, c: c * 2 + a, a), x)(x)
    (got,) = lt(lambda a: fori(0, 3, lambda i, c: c * 2 + a, a), x)(x)
    np.testing.assert_allclose(host(got), [15.0, 30.0, 45.0])
    # the counter read by the body, as a factor and as an index
    (got,) = lt(lambda a: fori(0, 3, lambda i, c: c * 2 + a * i, a), x)(x)
    np.testing.assert_allclose(host(got), [12.0, 24.0, 36.0])
    f = lambda a: fori(0, 3, lambda i, c: c.at[i].add(a[2 - i] * 3.0), fnp.zeros(3))  # noqa: E731
    (got,) = lt(f, x)(x)
    np.testing.assert_allclose(host(got), [9.0, 6.0, 3.0])
    # under jit and vmap
    g = lt(lambda a: fori(1, 4, lambda i, c: c * i + a, a), x)
    np.testing.assert_allclose(host(funcgrad.jit(g)(x)[0]), [16.0, 32.0, 48.0])
    xs = dev(np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0]]))
    np.testing.assert_allclose(host(funcgrad.vmap(g)(xs)[0]),
                               [[16.0, 32.0, 48.0], [32.0, 64.0, 96.0]])


def test_linear_transpose_of_scan_with_a_float_counter_and_accumulators():
    x = dev(np.array([1.0, 2.0, 3.0]))
    scan = funcgrad.lax.scan
    # a reversed scan whose first carry counts (not linear) and second accumulates (linear)
    f = lambda a: scan(lambda c, xi: ((c[0] + 1, c[1] * c[0] + xi), c[1]), (1.0, 0.0), a,  # noqa: E731
                       reverse=True)[1]
    (got,) = funcgrad.linear_transpose(f, x)(x)
    np.testing.assert_allclose(host(got), [0.0, 1.0, 4.0])
    # an accumulator starting from a constant stays linear
    g = lambda a: scan(lambda c, xi: (c + xi, c * 2), 0.0, a)[1]  # noqa: E731
    np.testing.assert_allclose(host(funcgrad.linear_transpose(g, x)(x)[0]), [10.0, 6.0, 0.0])
    # a "counter" that multiplies by a linear input is not linear: an error, as in JAX
    h = lambda a: scan(lambda c, xi: ((c[0] * xi, c[1] * c[0] + xi), c[1]), (1.0, 0.0), a)[1]  # noqa: E731
    with pytest.raises(TypeError, match="not linear"):
        funcgrad.linear_transpose(h, x)(x)


@pytest.mark.parametrize("name", ["sinh", "cosh", "pow"])
def test_generic_elementwise_taylor_rule_evaluates_each_order_once(name, monkeypatch):
    # sinh's JVP rule needs sinh (its primal) and cosh, whose rule needs sinh again; pow's
    # needs pow at a new exponent each time: without sharing those evaluations, order 12
    # took 2^12 rule calls (seconds). The count grows polynomially now.
    from funcgrad.interpreters import taylor as _ty

    f = {"sinh": fnp.sinh, "cosh": fnp.cosh, "pow": lambda x: x ** 2.5}[name]
    calls = [0]
    original = _ty.TaylorTrace.process_primitive

    def counted(self, *args, **kwargs):
        calls[0] += 1
        return original(self, *args, **kwargs)

    monkeypatch.setattr(_ty.TaylorTrace, "process_primitive", counted)
    got = {}
    for k in (6, 12):
        calls[0] = 0
        got[k] = funcgrad.derivatives(lambda x: f(f(x) * 0.5 + 0.6), k)(dev(0.4))
        got[f"calls{k}"] = calls[0]
    assert got["calls12"] < 6 * got["calls6"]  # 2^6 = 64 times as many without sharing
    # the shared orders are right: order 6 of the order-12 pass equals the order-6 pass
    np.testing.assert_allclose(host(got[12])[:7], host(got[6]), rtol=1e-12)


def test_jet_of_the_gradient_of_a_while_loop():
    # grad of a while_loop records tapes (the forward loop) and reads them (a scan over tapes):
    # the series travel on tapes too. Failed with "a tape of loop residuals, not an array".
    # JAX (with the loop's 3 trips as a fori_loop, JAX's grad refuses while_loop):
    # g = jax.grad(lambda x: jnp.sum(lax.fori_loop(0, 3, lambda i, c: c * jnp.cos(c), x)));
    # three nested jax.jvp of t -> g(x + t x) at 0
    def f(x):
        step = lambda c: (c[0] + 0.7, c[1] * fnp.cos(c[1]))  # noqa: E731
        return fnp.sum(funcgrad.lax.while_loop(lambda c: c[0] < 2.0, step, (0.0, x))[1])

    x = dev(np.array([0.3, 0.7]))
    want = [[-0.513729, -0.61945483], [-0.06612121, 0.89177517], [0.87168331, -3.8886241]]
    jet_at = lambda x: funcgrad.jet(funcgrad.grad(f), (x,), ([x, 0 * x, 0 * x],))  # noqa: E731
    for fun in (jet_at, funcgrad.jit(jet_at)):
        y0, ys = fun(x)
        np.testing.assert_allclose(host(y0), [0.67573035, 0.12734409], rtol=1e-7)
        np.testing.assert_allclose(np.stack([host(y) for y in ys]), want, rtol=1e-7)
