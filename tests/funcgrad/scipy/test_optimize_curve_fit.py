"""curve_fit (Levenberg-Marquardt with funcgrad's exact Jacobian) against
scipy.optimize.curve_fit (a test dependency): the same minimum and covariance."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import assert_allclose, dev

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.scipy.optimize import OptimizeWarning, curve_fit

so = pytest.importorskip("scipy.optimize")

_RNG = np.random.default_rng(0)
_X = np.linspace(0.0, 4.0, 30)
_Y = 2.5 * np.exp(-1.3 * _X) + 0.5 + 0.05 * _RNG.normal(size=30)
_SIG = 0.05 + 0.01 * _X


@pytest.mark.parametrize("kw", [{}, {"p0": [1.0, 1.0, 0.0]}, {"sigma": _SIG},
                                {"sigma": _SIG, "absolute_sigma": True},
                                {"sigma": np.diag(_SIG ** 2)}])
def test_curve_fit_matches_scipy(kw):
    popt, pcov = curve_fit(lambda x, a, b, c: a * fnp.exp(-b * x) + c, dev(_X), dev(_Y), **kw)
    want_p, want_c = so.curve_fit(lambda x, a, b, c: a * np.exp(-b * x) + c, _X, _Y, **kw)
    assert_allclose(popt, want_p, rtol=1e-7)
    assert_allclose(pcov, want_c, rtol=1e-4)  # SciPy's Jacobian is a finite difference


def test_curve_fit_errors_and_degenerate_covariance():
    with pytest.raises(ValueError, match="unconstrained"):
        curve_fit(lambda x, a: a * x, _X, _Y, bounds=(0.0, 1.0), method="lm")
    with pytest.raises(TypeError, match="concrete"):
        funcgrad.jit(lambda y: curve_fit(lambda x, a: a * x, _X, y)[0])(dev(_Y))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _, pcov = curve_fit(lambda x, a, b: a * x + b * x, _X, _Y)  # a and b not separable
    assert any(issubclass(w.category, OptimizeWarning) for w in caught)
    assert np.isinf(pcov).all()
