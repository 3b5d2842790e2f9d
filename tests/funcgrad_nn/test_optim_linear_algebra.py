"""optim.power_iteration, matrix_inverse_pth_root and nnls against optax 0.2.8 (the literals
are optax's float64 outputs on the same inputs; CI has no optax)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import funcgrad
from funcgrad_nn import optim
from tests.helpers import assert_allclose, dev, host

_rng = np.random.default_rng(0)
_B = _rng.normal(size=(5, 5))
S = _B @ _B.T + 0.5 * np.eye(5)
V0 = _rng.normal(size=5)
A = _rng.normal(size=(6, 4))
b = _rng.normal(size=6)
B2 = _rng.normal(size=(6, 2))

PI = (8.57932277026972, [0.222466393904158, 0.46767591442936746, -0.7963638335114578,
                         -0.2479540585334949, -0.1900299244267557])
PI7 = (8.329678924868512, [0.1711837184720738, 0.21152857365596167, -0.9494419586211124,
                           -0.06336852393999891, -0.14316492042578072])
ROOTS = {  # p: (first 6 entries of the root, final error)
    1: ([1.4628825863673651, -0.20478605662714133, 0.13606115795385412, 0.10528258029011775,
         0.36456776322714884, -0.20478605662714122], 1.3252732244950494e-12),
    2: ([1.1793863748882887, -0.12384881697454359, 0.08848933163383708, 0.07481517863600672,
         0.20775977829161513, -0.12384881697454353], 2.2890634610028826e-08),
    4: ([1.075249730559522, -0.0719700483690581, 0.05325896618855234, 0.04598897762201569,
         0.11442553906299492, -0.07197004836905806], 1.7297441479158238e-08),
    8: ([1.0336784895821916, -0.039380154265999376, 0.029639603420026313, 0.025716513869804367,
         0.060562968399553774, -0.03938015426599952], 6.625753246058963e-08),
}
NNLS = [0.12122142399290763, 0.0, 0.0, 0.0]
NNLS2 = [[0.7088638956717527, 0.0], [0.013860987453953633, 0.0], [0.0, 0.0], [0.0, 0.0]]


@pytest.mark.parametrize("jitted", [False, True])
def test_power_iteration_matches_optax(jitted):
    f = lambda m, v: optim.power_iteration(m, v0=v)  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no 0/0 at the first convergence test
        eig, vec = (funcgrad.jit(f) if jitted else f)(dev(S), dev(V0))
    assert_allclose(float(host(eig)), PI[0], rtol=1e-13)
    assert_allclose(host(vec), np.array(PI[1]), rtol=1e-12, atol=1e-14)
    eig, vec = optim.power_iteration(lambda t: {"x": dev(S) @ t["x"]}, v0={"x": dev(V0)},
                                     num_iters=7)
    assert_allclose(float(host(eig)), PI7[0], rtol=1e-13)
    assert_allclose(host(vec["x"]), np.array(PI7[1]), rtol=1e-12, atol=1e-14)
    eig, _ = optim.power_iteration(dev(S))  # a random start: the same eigenvalue
    assert_allclose(float(host(eig)), PI[0], rtol=1e-6)


@pytest.mark.parametrize("p", [1, 2, 4, 8])
def test_matrix_inverse_pth_root_matches_optax(p):
    root, err = optim.matrix_inverse_pth_root(dev(S), p)
    want, want_err = ROOTS[p]
    assert_allclose(host(root).ravel()[:6], np.array(want), rtol=1e-12, atol=1e-14)
    assert_allclose(float(host(err)), want_err, rtol=1e-4, atol=1e-15)
    # and it is the root: root^p (S + ridge) = I, the ridge 1e-6 times the top eigenvalue
    r = host(root)
    assert_allclose(np.linalg.matrix_power(r, p) @ (S + 1e-6 * PI[0] * np.eye(5)), np.eye(5),
                    atol=1e-6)


def test_matrix_inverse_pth_root_jit_and_scalar_case():
    root, _ = funcgrad.jit(lambda m: optim.matrix_inverse_pth_root(m, 4))(dev(S))
    assert_allclose(host(root).ravel()[:6], np.array(ROOTS[4][0]), rtol=1e-12, atol=1e-14)
    one, err = optim.matrix_inverse_pth_root(dev(np.array([[4.0]])), 2)
    assert_allclose(host(one), np.array([[0.49999975000018754]]), rtol=1e-14)
    assert float(host(err)) == 0.0
    with pytest.raises(ValueError, match="p must be 1, 2, 4 or 8"):
        optim.matrix_inverse_pth_root(dev(S), 3)


def test_nnls_matches_optax():
    assert_allclose(host(optim.nnls(dev(A), dev(b), 50)), np.array(NNLS), rtol=1e-12, atol=1e-15)
    x = funcgrad.jit(lambda a, y: optim.nnls(a, y, 30, L=40.0))(dev(A), dev(B2))
    assert_allclose(host(x), np.array(NNLS2), rtol=1e-12, atol=1e-15)
    with pytest.raises(ValueError, match=r"A must be \(M, N\)"):
        optim.nnls(dev(A), dev(np.ones(5)), 10)
    with pytest.raises(ValueError, match="v0 must be provided"):
        optim.power_iteration(lambda v: v)
