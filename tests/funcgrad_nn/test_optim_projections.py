"""optax.projections: values and the simplex projection's derivative as optax 0.2.8 gives
them (printed by optax on the same inputs), eagerly and under jit."""

from __future__ import annotations

import numpy as np

import funcgrad
import funcgrad.numpy as fnp
from funcgrad_nn.optim import projections as P
from tests.helpers import assert_allclose, dev, host

X = np.array([0.3, 0.2, 0.4, -1.0])
Y = np.array([0.3, -1.2, 2.5, 0.1])


def test_simplex_and_its_derivative():
    x = dev(X)
    assert_allclose(host(P.projection_simplex(x)),
                    np.array([0.3333333333333333, 0.23333333333333334, 0.43333333333333335, 0.0]),
                    rtol=1e-15)
    g = funcgrad.grad(lambda v: fnp.sum(P.projection_simplex(v) * fnp.arange(4.0)))(x)
    assert_allclose(host(g), np.array([-1.0, 0.0, 1.0, 0.0]), atol=1e-15)
    t = P.projection_simplex({"a": dev(Y[:2]), "b": dev(Y[2:])}, 2.0)
    assert_allclose(host(t["b"]), np.array([2.0, 0.0]))


def test_balls_under_jit():
    y = dev(Y)
    want = np.array([0.0, -0.10000000000000014, 1.4, 0.0])
    assert_allclose(host(P.projection_l1_ball(y, 1.5)), want, atol=1e-15)
    assert_allclose(host(funcgrad.jit(lambda v: P.projection_l1_ball(v, 1.5))(y)), want,
                    atol=1e-15)
    assert_allclose(host(P.projection_l1_ball(y * 0.1, 1.5)), Y * 0.1)  # inside: unchanged
    assert_allclose(float(np.linalg.norm(host(P.projection_l2_sphere(y, 2.0)))), 2.0)
    assert_allclose(host(P.projection_linf_ball(y, 1.0)), np.array([0.3, -1.0, 1.0, 0.1]))


def test_affine_sets():
    x, a = dev(Y), dev(np.array([1.0, 2.0, -1.0, 0.5]))
    h = P.projection_hyperplane(x, a, 0.7)
    assert_allclose(float(host(fnp.vdot(h, a))), 0.7, rtol=1e-14)
    inside = P.projection_halfspace(x, a, 10.0)
    assert_allclose(host(inside), Y)
