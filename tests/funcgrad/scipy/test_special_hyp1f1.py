"""funcgrad.scipy.special.hyp1f1 (jax.scipy.special has it): values recorded from SciPy 1.17
(the series, Kummer's transformation for x < 0 where JAX's series cancels, the asymptotic
series, polynomials, poles, a = 0 and a = b), a random grid against SciPy when installed,
derivatives in all three arguments, float32, jit and vmap."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev, expected_fp_warnings, host

import funcgrad
import funcgrad.scipy.special as fsp
from funcgrad.test_util import check_grads

pytestmark = expected_fp_warnings

A = np.array([0.0, 1.0, 1.0, -2.0, 2.5, 0.5, 0.5, -2.5, -2.0, -0.5, -2.0, 1.0, 50.0, 1.3, -1.0])
B = np.array([1.0, 1.0, -1.0, 1.0, 1.0, 1.5, 1.5, 1.0, 1.0, 3.0, -3.0, -1.5, 60.0, 2.2, -2.0])
X = np.array([2.0, 2.0, 2.0, 3.0, -50.0, 200.0, -200.0, 120.0, 120.0, -30.0, 1.0, 2.0, -30.0,
              1.5, 1.0])
WANT = [1.0, 7.38905609893065, np.inf, -0.5, 2.7353663177991794e-05, 1.8110439783663512e+84,
        0.06266570686577501, -8.100944257528871e+44, 6961.0, 3.4318461492507053,
        1.8333333333333333, 99.28735190313651, 4.982519695874769e-11, 2.6290259649289935, 1.5]


def test_values_as_scipy():
    assert_allclose(fsp.hyp1f1(dev(A), dev(B), dev(X)), np.array(WANT), rtol=1e-13)
    odd = fsp.hyp1f1(dev(np.array([np.nan, 1.0, 0.0])), dev(np.array([1.0, 2.0, 0.0])),
                     dev(np.array([1.0, np.inf, 1.0])))
    assert np.isnan(host(odd)[:2]).all() and host(odd)[2] == np.inf  # SciPy's values


def test_against_scipy_on_a_random_grid():
    sp = pytest.importorskip("scipy.special")
    rng = np.random.default_rng(0)
    a, b = rng.uniform(-5.0, 10.0, 400), rng.uniform(0.1, 10.0, 400)
    x = rng.uniform(-60.0, 150.0, 400)
    assert_allclose(fsp.hyp1f1(dev(a), dev(b), dev(x)), sp.hyp1f1(a, b, x), rtol=1e-10)


def test_derivatives():
    for a, b, x in [(1.3, 2.2, 1.5), (0.5, 1.5, -30.0), (0.7, 1.9, 150.0), (-1.5, 2.0, 3.0)]:
        check_grads(fsp.hyp1f1, (a, b, x), order=1, modes=("fwd", "rev"), rtol=1e-5,
                    atol=1e-8)
    # d/dx M(a, b, x) = a/b M(a + 1, b + 1, x); second order through the same rule
    assert_allclose(funcgrad.grad(fsp.hyp1f1, argnums=2)(1.0, 2.0, 1.0), 1.0, rtol=1e-13)
    check_grads(lambda x: fsp.hyp1f1(1.3, 2.2, x), (dev(np.array([1.5, -4.0])),), order=2,
                modes=("fwd", "rev"), rtol=1e-5, atol=1e-8)


def test_dtypes_and_transformations():
    one = np.float32(1.0)
    assert host(fsp.hyp1f1(dev(np.array([one])), one, one)).dtype == np.float32
    assert host(fsp.hyp1f1(1, 2, 1)).dtype == np.float64
    x = dev(np.array([1.0, -3.0]))
    want = fsp.hyp1f1(1.0, 2.0, x)
    assert_allclose(funcgrad.jit(lambda v: fsp.hyp1f1(1.0, 2.0, v))(x), want)
    got = funcgrad.vmap(fsp.hyp1f1)(dev(np.array([1.0, 1.0])), dev(np.array([2.0, 2.0])), x)
    assert_allclose(got, want)
    assert_allclose(want, (np.exp(host(x)) - 1) / host(x), rtol=1e-14)  # M(1, 2, x)


@pytest.mark.parametrize("a, b, x, da, db", [
    # mpmath (30 digits) derivatives where the value is a closed form: a == b (e^x), a == 0 (1)
    (2.0, 2.0, 0.3, 0.19283917789475458, -0.19283917789475458),   # JAX 0.10.2: same
    (2.0, 2.0, -5.0, -0.06411823598051163, 0.06411823598051163),
    (3.5, 3.5, -40.0, -9.02302386065692e-06, 9.02302386065692e-06),
    (0.0, 2.0, 0.3, 0.15789257490523356, 0.0),                    # JAX 0.10.2: 0 (wrong)
    (0.0, 2.0, -5.0, -1.3864542835270914, 0.0),
])
def test_derivatives_in_a_and_b_where_the_value_is_a_closed_form(a, b, x, da, db):
    # The closed-form lanes used to give 0: a silently wrong gradient.
    hyp1f1 = fsp.hyp1f1
    got_a = funcgrad.grad(lambda t: hyp1f1(t, b, x))(a)
    got_b = funcgrad.grad(lambda t: hyp1f1(a, t, x))(b)
    np.testing.assert_allclose([float(host(got_a)), float(host(got_b))], [da, db],
                               rtol=1e-12, atol=1e-300)
    batched = funcgrad.jit(funcgrad.vmap(funcgrad.grad(lambda t: hyp1f1(t, b, x))))(
        dev(np.array([a, 1.0])))
    assert abs(float(host(batched)[0]) - da) <= 1e-12 * max(abs(da), 1e-300)
