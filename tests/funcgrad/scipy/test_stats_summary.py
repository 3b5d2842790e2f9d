"""gmean / hmean / pmean / moment / variation / iqr / median_abs_deviation / describe:
SciPy's values (recorded as literals), nan policies, errors, derivatives."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev

import funcgrad
import funcgrad.scipy.stats as fst

A = np.array([[1.0, 2.0, 4.0], [3.0, 0.5, 2.0]])


def test_values_match_scipy():
    a = dev(A)
    assert_allclose(fst.gmean(a, axis=1), np.array([2.0, 1.4422495703074085]), rtol=1e-14)
    assert_allclose(fst.hmean(a), np.array([1.5, 0.8, 2.6666666666666665]), rtol=1e-14)
    assert_allclose(fst.pmean(a, 3.0, axis=None), 2.6217520928799383, rtol=1e-14)
    assert_allclose(fst.moment(a, 3, axis=1),
                    np.array([0.7407407407407399, -0.259259259259259]), rtol=1e-12)
    assert_allclose(fst.variation(a, axis=None, ddof=1), 0.6150121950010422, rtol=1e-14)
    assert_allclose(fst.iqr(a, axis=1, scale="normal"),
                    np.array([1.1119516638792013, 0.926626386566001]), rtol=1e-14)
    assert_allclose(fst.median_abs_deviation(a, axis=None), 1.0)
    d = fst.describe(a, axis=None)
    assert d.nobs == 6
    assert_allclose(d.minmax[1], 4.0)
    assert_allclose(d.variance, 1.6416666666666666, rtol=1e-14)


def test_nan_policies_keepdims_and_errors():
    an = dev(np.array([1.0, np.nan, 4.0]))
    assert_allclose(fst.gmean(an, nan_policy="omit"), 2.0, rtol=1e-15)
    assert_allclose(fst.median_abs_deviation(an, nan_policy="omit"), 1.5)
    assert np.isnan(float(fst.hmean(an)))
    assert fst.moment(dev(A), 2, axis=1, keepdims=True).shape == (2, 1)
    assert float(fst.moment(dev(A), 1, axis=None)) == 0.0
    with pytest.raises(ValueError, match="greater than or equal to zero"):
        fst.hmean(dev(np.array([-1.0, 2.0])))
    with pytest.raises(ValueError, match="not a valid scale"):
        fst.iqr(dev(A), scale="raw")
    with pytest.raises(ValueError, match="nan_policy"):
        fst.gmean(dev(A), nan_policy="ignore")


def test_derivatives():
    # d gmean / d a_i = gmean / (n a_i); d hmean / d a_i = hmean^2 / (n a_i^2)
    x = np.array([1.0, 2.0, 4.0])
    assert_allclose(funcgrad.grad(fst.gmean)(dev(x)), 2.0 / (3.0 * x), rtol=1e-14)
    assert_allclose(funcgrad.grad(fst.hmean)(dev(x)), (12.0 / 7.0) ** 2 / (3.0 * x ** 2),
                    rtol=1e-14)
    assert_allclose(funcgrad.jit(lambda v: fst.variation(v, axis=1))(dev(A)),
                    fst.variation(dev(A), axis=1), rtol=1e-14)
