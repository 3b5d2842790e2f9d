"""linear_sum_assignment (square, rectangular, maximize, ties, infeasible) and nnls against
scipy.optimize (a test dependency)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import dev, host

import funcgrad
import funcgrad.scipy.optimize as fo

so = pytest.importorskip("scipy.optimize")


def test_linear_sum_assignment_matches_scipy():
    rng = np.random.default_rng(91)
    for trial in range(60):
        nr, nc = rng.integers(1, 8, 2)
        cost = rng.random((nr, nc)) if trial % 3 else rng.integers(0, 4, (nr, nc)) * 1.0
        for maximize in (False, True):
            rows, cols = fo.linear_sum_assignment(dev(cost), maximize)
            want_r, want_c = so.linear_sum_assignment(cost, maximize)
            rows, cols = host(rows), host(cols)
            assert rows.size == want_r.size and np.all(np.diff(rows) > 0)
            np.testing.assert_allclose(cost[rows, cols].sum(), cost[want_r, want_c].sum())
            if trial % 3:  # distinct costs: the optimum is unique
                np.testing.assert_array_equal(rows, want_r)
                np.testing.assert_array_equal(cols, want_c)
    with pytest.raises(ValueError, match="infeasible"):
        fo.linear_sum_assignment(np.array([[1.0, np.inf], [np.inf, np.inf]]))
    with pytest.raises(ValueError, match="invalid numeric"):
        fo.linear_sum_assignment(np.array([[1.0, np.nan]]))
    with pytest.raises(TypeError, match="outside jit"):
        funcgrad.jit(lambda c: fo.linear_sum_assignment(c)[0])(np.eye(2))


def test_nnls_matches_scipy():
    rng = np.random.default_rng(92)
    for _ in range(30):
        m, n = rng.integers(2, 9, 2)
        a, b = rng.standard_normal((m, n)), rng.standard_normal(m)
        x, rnorm = fo.nnls(dev(a), dev(b))
        want_x, want_r = so.nnls(a, b)
        np.testing.assert_allclose(rnorm, want_r, rtol=1e-8, atol=1e-12)
        assert np.all(host(x) >= 0)
        if m >= n:  # full column rank: the solution is unique
            np.testing.assert_allclose(host(x), want_x, atol=1e-8)
