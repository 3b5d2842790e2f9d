"""funcgrad.scipy.integrate.simpson and cumulative_simpson against SciPy 1.17 (values recorded
as literals), under jit, vmap and grad; argument errors."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev

import funcgrad
import funcgrad.scipy.integrate as fsi

Y = np.array([[1.0, 3.0, 2.0, 5.0, 4.0, 7.0], [0.5, -1.0, 2.0, 0.0, 1.5, 3.0]])
X = np.array([0.0, 0.5, 1.5, 2.0, 3.5, 4.0])


@pytest.mark.parametrize("call,want", [
    # an even count: Simpson's rule on the first panels, Cartwright's last-interval correction
    (lambda y: fsi.simpson(y), [18.833333333333332, 2.9166666666666665]),
    (lambda y: fsi.simpson(y, x=dev(X)), [17.25, 0.8958333333333334]),
    (lambda y: fsi.simpson(y[:, :5]), [13.666666666666666, 0.6666666666666666]),
    (lambda y: fsi.simpson(y[:, :5], x=dev(X[:5])), [14.569444444444443, -0.20833333333333334]),
    (lambda y: fsi.simpson(y[:, :5], dx=0.25), [3.4166666666666665, 0.16666666666666666]),
    (lambda y: fsi.simpson(y[:, :2], x=dev(X[:2])), [1.0, -0.125]),   # two points: trapezoid
    (lambda y: fsi.simpson(y[:, :1]), [0.0, 0.0]),
    (lambda y: fsi.simpson(y.T[:3], axis=0), [5.0, -0.5]),
    (lambda y: fsi.cumulative_simpson(y, x=dev(X), initial=0),
     [[0.0, 1.0694444444444442, 4.125, 5.944444444444445, 14.569444444444445, 17.25],
      [0.0, -0.20833333333333337, -0.375, 0.07291666666666663, -0.20833333333333337,
       0.8958333333333331]]),
    (lambda y: fsi.cumulative_simpson(y[:, :5], dx=0.5),
     [[1.125, 2.5, 4.416666666666666, 6.833333333333332],
      [-0.3125, -0.25, 0.10416666666666663, 0.33333333333333326]]),
    (lambda y: fsi.cumulative_simpson(y[:, :2], initial=1.5), [[1.5, 3.5], [1.5, 1.25]]),
])
@pytest.mark.parametrize("jit", [False, True])
def test_values_as_scipy(call, want, jit):
    f = funcgrad.jit(call) if jit else call
    assert_allclose(f(dev(Y)), np.array(want))


def test_exact_for_cubics_and_differentiable():
    x = np.linspace(0.0, 2.0, 5)
    assert_allclose(fsi.simpson(dev(x ** 3), x=dev(x)), 4.0)
    # an even count on uneven points: the corrected last interval is exact for parabolas
    x = np.array([0.0, 0.3, 1.0, 1.2, 1.7, 2.0])
    assert_allclose(fsi.simpson(dev(x ** 2), x=dev(x)), 8.0 / 3.0)
    # d/dy of the even-spaced rule: the weights dx/3 (1, 4, 2, 4, 1)
    assert_allclose(funcgrad.grad(fsi.simpson)(dev(np.ones(5))),
                    np.array([1.0, 4.0, 2.0, 4.0, 1.0]) / 3.0)
    # d/dx of the integral of x**2 over [x0, x4] on uneven points: -x0**2 and x4**2 at the ends
    xs = np.array([0.0, 0.3, 1.0, 1.2, 2.0])
    g = funcgrad.grad(lambda t: fsi.simpson(t ** 2, x=t))(dev(xs))
    assert_allclose(g[np.array([0, 4])], np.array([0.0, 4.0]), atol=1e-12)
    assert_allclose(funcgrad.vmap(fsi.simpson)(dev(Y)), np.array([18.833333333333332,
                                                                  2.9166666666666665]))


def test_float32_stays_float32():
    for n in (2, 4, 5):
        assert fsi.simpson(dev(np.ones(n, np.float32))).dtype == np.float32
        assert fsi.cumulative_simpson(dev(np.ones(n, np.float32))).dtype == np.float32


@pytest.mark.parametrize("call,match", [
    (lambda: fsi.simpson(np.ones(4), x=np.ones(3)), "x has 3 points"),
    (lambda: fsi.simpson(np.ones((2, 4)), x=np.ones((3, 4))), "x must be 1-D or shaped"),
    (lambda: fsi.simpson(np.ones(0)), "no samples"),
    (lambda: fsi.cumulative_simpson(np.ones(4), x=np.array([0.0, 1.0, 1.0, 2.0])),
     "strictly increasing"),
    (lambda: fsi.cumulative_simpson(np.ones((2, 4)), initial=np.ones(2)), "initial must be"),
    (lambda: fsi.cumulative_simpson(np.ones((2, 4)), dx=np.ones(4)), "dx must be"),
])
def test_bad_arguments(call, match):
    with pytest.raises(ValueError, match=match):
        call()
