"""Set operations (funcgrad/numpy/_setops.py) against NumPy 2: NaNs, sizes, dtypes."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import dev, host

import funcgrad
import funcgrad.numpy as fnp

NANS = np.array([3.0, np.nan, 1.0, np.nan, 2.0, 1.0])
OTHER = np.array([3.0, np.nan, 1.0])


@pytest.mark.parametrize("name, want", [
    # NumPy uniques each input with equal_nan=True: one NaN per input, and NaN never equals
    # NaN between the inputs (so it is in the difference, and twice in the xor)
    ("setdiff1d", [2.0, np.nan]),
    ("setxor1d", [2.0, np.nan, np.nan]),
    ("intersect1d", [1.0, 3.0]),
    ("union1d", [1.0, 2.0, 3.0, np.nan]),
])
def test_set_ops_count_the_nans_of_an_input_once(name, want):
    got = host(getattr(fnp, name)(dev(NANS), dev(OTHER)))
    np.testing.assert_array_equal(got, np.array(want))
    np.testing.assert_array_equal(got, getattr(np, name)(NANS, OTHER))


def test_set_ops_with_nans_under_jit_with_size():
    f = funcgrad.jit(lambda a, b: (fnp.setdiff1d(a, b, size=3, fill_value=-1.0),
                                   fnp.setxor1d(a, b, size=4, fill_value=-1.0)))
    diff, xor = host(f(dev(NANS), dev(OTHER)))
    np.testing.assert_array_equal(diff, [2.0, np.nan, -1.0])
    np.testing.assert_array_equal(xor, [2.0, np.nan, np.nan, -1.0])


def test_union1d_python_scalar_promotes_weakly():
    # NumPy 2: union1d(ar1, ar2) is unique(concatenate((ar1, ar2), axis=None)), where a Python
    # scalar is weak: a uint8 array stays uint8 (300 wraps to 44 as NumPy's same_kind cast).
    u8 = dev(np.array([1, 2], np.uint8))
    for got, want in [(fnp.union1d(u8, 300), np.array([1, 2, 44], np.uint8)),
                      (fnp.union1d(3, u8), np.array([1, 2, 3], np.uint8)),
                      (fnp.union1d(dev(np.float32([1.0])), 2.5), np.float32([1.0, 2.5])),
                      (fnp.union1d(u8, [3]), np.array([1, 2, 3])),
                      (fnp.union1d(3, 4), np.array([3, 4]))]:
        assert host(got).dtype == want.dtype
        np.testing.assert_array_equal(host(got), want)


def test_unique_along_an_axis_of_empty_slices() -> None:
    # slices with no elements are all equal: one unique slice (NumPy 2.4's answers)
    got = fnp.unique(dev(np.zeros((3, 0, 2))), axis=0, return_index=True, return_inverse=True,
                     return_counts=True)
    assert [host(g).shape for g in got] == [(1, 0, 2), (1,), (3,), (1,)]
    assert host(got[1]).tolist() == [0] and host(got[2]).tolist() == [0, 0, 0]
    assert host(got[3]).tolist() == [3]
    assert host(fnp.unique(dev(np.zeros((0, 0))), axis=0)).shape == (0, 0)
