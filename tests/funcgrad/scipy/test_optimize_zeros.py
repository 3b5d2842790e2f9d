"""funcgrad.scipy.optimize brentq / bisect / root_scalar: SciPy's roots, iteration and call
counts (recorded as literals), errors, and derivatives in args (implicit function theorem)
under jit and vmap."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.scipy.optimize import bisect, brentq, root_scalar


@pytest.mark.parametrize("fn,a,b,root,its,calls", [
    (lambda x: x ** 3 - 2.0, 0.0, 2.0, 1.2599210498949451, 8, 9),
    (lambda x: fnp.exp(x) - 5.0, -3.0, 4.0, 1.6094379124341005, 12, 13),
    (lambda x: x ** 2 - 1e-10, 0.0, 1.0, 1.0000000029561635e-05, 33, 34),
])
def test_brentq_matches_scipy(fn, a, b, root, its, calls):
    r, info = brentq(fn, a, b, full_output=True)
    assert float(r) == root
    assert (int(info.iterations), int(info.function_calls), info.flag) == (its, calls,
                                                                           "converged")


def test_bisect_matches_scipy_and_edges():
    r, info = bisect(lambda x: x ** 3 - 2.0, 0.0, 2.0, full_output=True)
    assert float(r) == 1.2599210498938191 and int(info.iterations) == 40
    assert float(bisect(lambda x: x - 2.0, 0.0, 2.0)) == 2.0  # a root at an end
    with pytest.raises(ValueError, match="different signs"):
        brentq(lambda x: x ** 2 + 1.0, 0.0, 1.0)
    with pytest.raises(RuntimeError, match="failed to converge"):
        brentq(lambda x: (x - 1.0) ** 3, 0.0, 3.0, maxiter=30)  # a triple root: as SciPy
    r, info = brentq(lambda x: (x - 1.0) ** 3, 0.0, 3.0, maxiter=30, full_output=True,
                     disp=False)
    assert info.flag == "convergence error" and not bool(info.converged)


def test_root_scalar_methods():
    res = root_scalar(lambda x: x ** 2 - 2.0, bracket=(0.0, 2.0), method="bisect")
    assert float(res.root) == 1.4142135623715149 and res.flag == "converged"
    res = root_scalar(lambda x, c: fnp.exp(x) - c, args=(3.0,), x0=0.5)  # Newton, autodiff
    assert_allclose(res.root, np.log(3.0), rtol=1e-15)
    res = root_scalar(lambda x: x ** 3 - 8.0, x0=1.0, fprime=lambda x: 3.0 * x ** 2)
    assert_allclose(res.root, 2.0, rtol=1e-15)
    with pytest.raises(ValueError, match="needs bracket"):
        root_scalar(lambda x: x, method="brentq")


def test_root_derivatives_in_args():
    def cube_root(a):
        return brentq(lambda x, a: x ** 3 - a, 0.0, 3.0, args=(a,))

    want = 1.0 / (3.0 * 2.0 ** (2.0 / 3.0))
    assert_allclose(funcgrad.grad(cube_root)(2.0), want, rtol=1e-12)
    assert_allclose(funcgrad.jit(funcgrad.grad(cube_root))(2.0), want, rtol=1e-12)
    assert_allclose(funcgrad.vmap(cube_root)(dev(np.array([1.0, 8.0, 27.0]))),
                    np.array([1.0, 2.0, 3.0]), rtol=1e-12)
    g = funcgrad.grad(lambda c: root_scalar(lambda x, c: fnp.exp(x) - c, args=(c,),
                                            x0=0.5).root)(3.0)
    assert_allclose(g, 1.0 / 3.0, rtol=1e-14)
