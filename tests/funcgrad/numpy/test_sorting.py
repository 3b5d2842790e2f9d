"""``fnp.sort``/``fnp.argsort``: NumPy 2's ``stable=`` and JAX's ``descending=`` (stable
descending keeps equal elements in their original order, NaNs first), under jit and vmap."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import dev, host

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.test_util import check_grads, check_jit, check_vmap


@pytest.mark.parametrize("stable", [None, True])
def test_argsort_ascending_matches_numpy_stable(stable):
    x = np.array([3, 1, 3, 1, 2, 3])
    got = host(fnp.argsort(dev(x), stable=stable))
    np.testing.assert_array_equal(got, np.argsort(x, kind="stable"))


def _descending_reference(x, axis):
    """jax.numpy.argsort(x, descending=True, stable=True): a stable sort by -rank."""
    return np.flip(np.flip(x, axis).argsort(axis, kind="stable"), axis) * -1 + (
        x.shape[axis] - 1)


def test_argsort_descending_keeps_ties_in_order():
    x = np.array([3, 1, 3, 1, 2, 3])
    got = host(fnp.argsort(dev(x), descending=True))
    assert got.tolist() == [0, 2, 5, 4, 1, 3]
    np.testing.assert_array_equal(got, _descending_reference(x, 0))
    m = np.array([[2.0, 2.0, 5.0], [1.0, 7.0, 1.0]])
    for axis in (0, 1):
        np.testing.assert_array_equal(host(fnp.argsort(dev(m), axis=axis, descending=True)),
                                      _descending_reference(m, axis))
    assert host(fnp.argsort(dev(m), axis=None, descending=True)).tolist() == [4, 2, 0, 1, 3, 5]


def test_descending_nans_first():
    x = dev(np.array([1.0, np.nan, 3.0]))
    assert host(fnp.argsort(x, descending=True)).tolist() == [1, 2, 0]
    s = host(fnp.sort(x, descending=True))
    assert np.isnan(s[0]) and s[1:].tolist() == [3.0, 1.0]


def test_sort_descending_grad_jit_vmap():
    x = dev(np.random.default_rng(0).normal(size=(3, 5)))
    check_grads(lambda v: fnp.sort(v, axis=1, descending=True), (x,), order=2)
    check_jit(lambda v: fnp.argsort(v, descending=True), (x,))
    check_vmap(lambda v: fnp.argsort(v, descending=True), (x,))
    check_vmap(lambda v: fnp.sort(v, descending=True, stable=True), (x,))
    g = funcgrad.grad(lambda v: (fnp.sort(v, descending=True) * fnp.arange(3.0)).sum())(
        dev(np.array([2.0, 0.0, 1.0])))
    assert host(g).tolist() == [0.0, 2.0, 1.0]


def test_bad_flags():
    with pytest.raises(TypeError, match="descending must be True or False"):
        fnp.argsort(dev(np.ones(3)), descending="yes")
    with pytest.raises(ValueError, match="stable must be"):
        fnp.sort(dev(np.ones(3)), stable="yes")
