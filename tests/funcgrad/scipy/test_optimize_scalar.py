"""minimize_scalar (brent with SciPy's bracket search, bounded) and bracket: SciPy's
iterates exactly (the same x, fun, nit, nfev), against scipy.optimize (a test dependency)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import ON_GPU

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.scipy.optimize import bracket, minimize_scalar

so = pytest.importorskip("scipy.optimize")

_FUNCS = [lambda x: (x - 2.0) ** 2, math.cos, lambda x: x ** 4 - 3 * x ** 2 + x,
          lambda x: abs(x - 0.3) + 0.1 * x * x]


@pytest.mark.parametrize("kw", [{}, {"bracket": (-1.0, 0.5)}, {"bracket": (-3.0, 0.0, 4.0)},
                                {"bounds": (-2.0, 2.0)},
                                {"bounds": (0.0, 6.0), "options": {"xatol": 1e-9}},
                                {"tol": 1e-12}])
def test_minimize_scalar_is_scipys(kw):
    for f in _FUNCS:
        try:
            want = so.minimize_scalar(f, **kw)
        except ValueError:
            continue  # an invalid bracket for this function (SciPy raises too)
        got = minimize_scalar(f, **kw)
        assert (got.x, got.fun, got.nit, got.nfev, got.success) == (
            want.x, want.fun, want.nit, want.nfev, want.success)


def test_funcgrad_objectives_bracket_and_errors():
    res = minimize_scalar(lambda x: fnp.sin(x) + 0.1 * x ** 2)
    want = so.minimize_scalar(lambda x: np.sin(x) + 0.1 * x ** 2)
    # The objective runs on the default device: CUDA's sin differs from libm's in the last
    # bits (docs/backends.md), which moves Brent's iterates by about that much there.
    assert float(res.x) == pytest.approx(want.x, rel=1e-11 if ON_GPU else 0, abs=0)
    assert res["nfev"] == want.nfev
    assert bracket(lambda x: (x - 5.0) ** 2) == so.bracket(lambda x: (x - 5.0) ** 2)
    with pytest.raises(ValueError, match="mandatory"):
        minimize_scalar(math.cos, method="bounded")
    with pytest.raises(ValueError, match="incompatible"):
        minimize_scalar(math.cos, bounds=(0, 1), method="brent")
    with pytest.raises(TypeError, match="concrete"):
        funcgrad.jit(lambda a: minimize_scalar(lambda x: (x - a) ** 2).x)(1.0)
