"""``relu`` and ``relu_grad`` (funcgrad/ops/activations.py): the kink, NaN/inf handling, the
host bit-selection path against ``numpy.where``, and the derivatives through every
transformation (the shared op-table drivers in test_op_table.py run the rest)."""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.ops.activations import relu, relu_grad
from funcgrad.test_util import check_grads
from tests.helpers import assert_allclose, dev, host


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_relu_values_nan_and_derivative_at_zero(dtype):
    x = np.array([-1.0, -0.0, 0.0, 2.0, np.nan, -np.inf, np.inf], dtype)
    y = host(relu(dev(x)))
    assert y.dtype == dtype
    np.testing.assert_array_equal(y, np.array([0, 0, 0, 2, np.nan, 0, np.inf], dtype))
    g = host(funcgrad.grad(lambda v: fnp.sum(relu(v)))(dev(x)))
    # 0 at the kink (PyTorch's and JAX's choice), 0 at NaN (x > 0 is false)
    np.testing.assert_array_equal(g, np.array([0, 0, 0, 1, 0, 0, 1], dtype))
    assert_allclose(funcgrad.jit(funcgrad.grad(lambda v: fnp.sum(relu(v))))(dev(x)), g)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_relu_of_a_0d_array_differentiates(dtype):
    # 0-d operands make NumPy return scalars, which cannot be an out= buffer
    x = np.array(0.7, dtype)
    assert float(host(funcgrad.grad(relu)(dev(x)))) == 1.0
    assert float(host(funcgrad.grad(relu)(dev(-x)))) == 0.0


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_relu_grad_is_exactly_where(dtype):
    rng = np.random.default_rng(0)
    g = rng.standard_normal(50).astype(dtype)
    g[:6] = [np.inf, -np.inf, np.nan, -0.0, 0.0, np.inf]
    x = rng.standard_normal(50).astype(dtype)
    x[:6] = [-1.0, 0.0, -2.0, 1.0, 1.0, 3.0]
    out = host(relu_grad(dev(g), dev(x)))
    expect = np.where(x > 0, g, dtype(0))
    assert out.dtype == dtype
    np.testing.assert_array_equal(out, expect)
    assert np.signbit(out[3])  # -0.0 passes through unchanged
    # broadcasting both ways
    xb = rng.standard_normal((4, 1)).astype(dtype)
    np.testing.assert_array_equal(host(relu_grad(dev(g[:5]), dev(xb))),
                                  np.where(xb > 0, g[:5], dtype(0)))


def test_relu_derivatives_under_transformations():
    rng = np.random.default_rng(1)
    x = rng.uniform(0.2, 2.0, (3, 4)) * np.where(rng.random((3, 4)) < 0.5, -1, 1)
    check_grads(relu, (dev(x),), order=2)
    check_grads(lambda v: relu(v) ** 2, (dev(x),), order=2)
    f = funcgrad.grad(lambda v: fnp.sum(relu(v) ** 3))
    batched = funcgrad.vmap(f)(dev(x))
    assert_allclose(batched, np.stack([host(f(dev(r))) for r in x]))
    assert_allclose(funcgrad.jit(f)(dev(x)), f(dev(x)))
    hess = funcgrad.hessian(lambda v: fnp.sum(relu(v) ** 3))(dev(x[0]))
    np.testing.assert_allclose(host(hess), np.diag(6 * np.maximum(x[0], 0)), rtol=1e-12)
    # relu_grad with only one operand batched
    g = rng.standard_normal((3, 4))
    out = funcgrad.vmap(lambda gi: relu_grad(gi, dev(x[0])))(dev(g))
    np.testing.assert_array_equal(host(out), np.where(x[0] > 0, g, 0.0))
    out = funcgrad.vmap(lambda xi: relu_grad(dev(g[0]), xi))(dev(x))
    np.testing.assert_array_equal(host(out), np.where(x > 0, g[0], 0.0))
