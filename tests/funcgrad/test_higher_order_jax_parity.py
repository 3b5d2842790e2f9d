"""Higher-order derivatives against JAX 0.10.2: nested grad, jet and hessians at the points
where JAX and a naive implementation part ways. The expected values are JAX's, recorded as
literals (the generating calls are quoted beside them; CI has no JAX)."""

from __future__ import annotations

import numpy as np

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
