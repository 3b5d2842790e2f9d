"""funcgrad.scipy.special eval_* orthogonal polynomials: SciPy 1.17's values for integer
orders (the recurrence) and real orders (the hypergeometric closed forms), derivatives in x
and the parameters against central differences of SciPy's, traced orders under jit/vmap."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import assert_allclose, dev

import funcgrad
import funcgrad.scipy.special as fsp

NAN = np.nan
X = np.array([-3.0, -0.7, 0.0, 0.3, 0.99, 1.5])
N = np.array([-3, 0, 1, 4, 9, 25])

# scipy.special.<name>(N, X) (genlaguerre / gegenbauer with alpha 1/2, 3/2; jacobi with
# |N|, alpha 1/2, beta -0.3)
INTEGER_CASES = [
    ("eval_legendre", (), [13.0, 1.0, 0.0, 0.07293749999999993, 0.5972455244994725,
                           3425101987.096554]),
    ("eval_chebyt", (), [-99.0, 1.0, 0.0, 0.34480000000000005, 0.29259651818583077,
                         14071876561.5]),
    ("eval_chebyu", (), [6.0, 1.0, 0.0, 0.04960000000000009, 7.003387987666381,
                         32951280099.0]),
    ("eval_hermite", (), [NAN, 1.0, 0.0, 7.8096, -10416.802201237595, -2.6420900428094188e+16]),
    ("eval_hermitenorm", (), [NAN, 1.0, 0.0, 2.4681, 39.80666358503203, 2633990651883.7197]),
    ("eval_laguerre", (), [0.0, 1.0, 1.0, 0.05233749999999998, 0.29558869362976575,
                           0.2511449164603783]),
    ("eval_genlaguerre", (0.5,), [0.0, 1.0, 1.5, 0.8266500000000002, -0.08864286437583226,
                                  -0.16222240652946057]),
    ("eval_gegenbauer", (1.5,), [0.0, 1.0, 0.0, -0.1685625000000006, 41.385614292513765,
                                 203130064258.61188]),
]


@pytest.mark.parametrize("name,params,want", INTEGER_CASES, ids=[c[0] for c in INTEGER_CASES])
def test_integer_orders_match_scipy(name, params, want):
    args = [dev(np.full(X.shape, p)) for p in params]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = getattr(fsp, name)(dev(N), *args, dev(X))
    assert_allclose(out, np.array(want), rtol=1e-13)


def test_jacobi_integer_and_real_orders():
    want = [-62.22650000000002, 1.0, 0.3999999999999999, -0.20626431000000012,
            2.5383892891018225, 5487210512.277283]
    assert_allclose(fsp.eval_jacobi(dev(np.abs(N)), 0.5, -0.3, dev(X)), np.array(want),
                    rtol=1e-13)


def test_real_orders_match_scipy():
    # Whole-number float orders are the polynomials (SciPy's hypergeometric kernel gives them
    # there too; its terminating series cancels at order 25, the recurrence does not).
    n = dev(np.array([2.5, 0.3, 7.7, 25.0, 4.0]))
    x = dev(np.array([0.2, 0.7, 0.9, -0.7, 0.5]))
    assert_allclose(fsp.eval_legendre(n, x), np.array(
        [-0.455318782711104, 0.9375970547859036, -0.40613974857226365, -0.14961506606215186,
         -0.2890625]), rtol=1e-11)
    assert_allclose(fsp.eval_jacobi(n, 0.5, 1.5, x), np.array(
        [-0.5398024396536706, 1.0430468052389312, -0.7063440785431928, -0.505521819337645,
         -0.32812499999999994]), rtol=1e-11)
    assert_allclose(fsp.eval_genlaguerre(n, 0.5, x), np.array(
        [1.3984756320011555, 0.9889771401519836, -0.6677269821506269, 1166.9054034835676,
         0.0729166666666669]), rtol=1e-11)
    assert_allclose(fsp.eval_gegenbauer(n, 0.75, x), np.array(
        [-0.7255107403524631, 1.0896211238549605, -0.9122965855679904, -0.4992064325088306,
         -0.58447265625]), rtol=1e-11)
    # eval_laguerre(60., 4.): mpmath 0.4058506722665006 (SciPy's real-order kernel: ...529)
    assert abs(float(fsp.eval_laguerre(60.0, 4.0)) - 0.4058506722665006) < 1e-14


def test_derivatives_and_traced_orders():
    # P_5'(0.3) = 5 (x P_5 - P_4) / (x^2 - 1)
    assert abs(float(funcgrad.grad(fsp.eval_legendre, argnums=1)(5, 0.3))
               + 0.1685625) < 1e-14
    n, x = dev(np.array([0, 3, 10])), dev(np.array([0.2, 0.7, 0.9]))
    g = funcgrad.jit(funcgrad.vmap(funcgrad.grad(fsp.eval_chebyt, argnums=1)))(n, x)
    # T_n' = n U_{n-1}
    assert_allclose(g, np.array([0.0, 3.0 * (4 * 0.49 - 1), 10.0 * -2.2474552319999996]),
                    rtol=1e-9)
    # central differences (h = 1e-6) of SciPy's in alpha and x
    g = funcgrad.grad(fsp.eval_gegenbauer, argnums=(1, 2))(4.5, 0.7, 0.3)
    assert_allclose(np.array([float(v) for v in g]),
                    np.array([0.7719384224336157, -2.2600221102064832]), rtol=1e-8)
    g = funcgrad.grad(fsp.eval_genlaguerre, argnums=1)(6, 0.5, 1.3)
    assert abs(float(g) + 1.4325445560903205) < 1e-8


def test_dtypes_and_errors():
    assert fsp.eval_legendre(3, np.float32(0.5)).dtype == np.float32
    assert fsp.eval_legendre(3, 0.5).dtype == np.float64
    with pytest.raises(TypeError, match="eval_hermite: the order n must be an integer"):
        fsp.eval_hermite(2.0, 0.3)
    assert fsp.eval_legendre(np.array([], dtype=np.int64), np.array([])).shape == (0,)
