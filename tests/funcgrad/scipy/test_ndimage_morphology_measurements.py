"""ndimage binary morphology, distance_transform_edt, label/find_objects and the per-label
statistics against scipy.ndimage (a test dependency): structures (even-sized, shifted
origins), iterations (to convergence too), masks, borders; jit where traceable."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev, host, is_device_array

import funcgrad
import funcgrad.scipy.ndimage as fnd

nd = pytest.importorskip("scipy.ndimage")

_RNG = np.random.default_rng(21)
_A = _RNG.random((9, 10)) > 0.55
_A3 = _RNG.random((5, 6, 7)) > 0.5
_M = _RNG.random((9, 10)) > 0.3
_X = _RNG.random((9, 10))
_STRUCTURES = [None, nd.generate_binary_structure(2, 2), np.array([[1, 1], [0, 1]], bool),
               np.array([[0, 1, 1, 1, 0]], bool), np.ones((3, 2), bool)]


@pytest.mark.parametrize("k", range(len(_STRUCTURES)))
def test_erosion_dilation_match_scipy(k):
    s = _STRUCTURES[k]
    for iterations in (1, 2, 0):
        for border in (0, 1):
            for f, g in ((fnd.binary_erosion, nd.binary_erosion),
                         (fnd.binary_dilation, nd.binary_dilation)):
                got = f(dev(_A), s, iterations, border_value=border)
                np.testing.assert_array_equal(host(got), g(_A, s, iterations,
                                                           border_value=border))
    if s is None or s.shape[1] > 2:
        np.testing.assert_array_equal(host(fnd.binary_dilation(dev(_A), s, origin=(0, -1))),
                                      nd.binary_dilation(_A, s, origin=(0, -1)))
    np.testing.assert_array_equal(host(fnd.binary_opening(dev(_A), s)), nd.binary_opening(_A, s))
    np.testing.assert_array_equal(host(fnd.binary_closing(dev(_A), s, 2)),
                                  nd.binary_closing(_A, s, 2))


def test_masks_fill_holes_3d_and_jit():
    np.testing.assert_array_equal(host(fnd.binary_erosion(dev(_A), iterations=2, mask=dev(_M))),
                                  nd.binary_erosion(_A, iterations=2, mask=_M))
    grow = funcgrad.jit(lambda a, m: fnd.binary_dilation(a, iterations=-1, mask=m))
    np.testing.assert_array_equal(host(grow(dev(_A), dev(_M))),
                                  nd.binary_dilation(_A, iterations=-1, mask=_M))
    for s in (None, nd.generate_binary_structure(2, 2)):
        np.testing.assert_array_equal(host(fnd.binary_fill_holes(dev(_A), s)),
                                      nd.binary_fill_holes(_A, s))
    s3 = nd.generate_binary_structure(3, 2)
    np.testing.assert_array_equal(host(fnd.binary_dilation(dev(_A3), s3)),
                                  nd.binary_dilation(_A3, s3))
    for rank in (1, 2, 3):
        for conn in (1, 2, 3):
            np.testing.assert_array_equal(fnd.generate_binary_structure(rank, conn),
                                          nd.generate_binary_structure(rank, conn))
    np.testing.assert_array_equal(fnd.iterate_structure(nd.generate_binary_structure(2, 1), 3),
                                  nd.iterate_structure(nd.generate_binary_structure(2, 1), 3))
    with pytest.raises(RuntimeError, match="dimensionality"):
        fnd.binary_erosion(_A, np.ones(3))


def test_label_and_find_objects_match_scipy():
    for a, s in ((_A, None), (_A, nd.generate_binary_structure(2, 2)), (_A3, None),
                 (_A3, nd.generate_binary_structure(3, 3))):
        got, n = fnd.label(dev(a), s)
        want, m = nd.label(a, s)
        assert is_device_array(got) and n == m
        np.testing.assert_array_equal(host(got), want)
        assert host(got).dtype == np.int32
    # a snake: one long component (many propagation steps)
    snake = np.zeros((21, 21), bool)
    snake[::2] = True
    snake[1::4, -1] = snake[3::4, 0] = True
    assert fnd.label(snake)[1] == 1
    labels = nd.label(_A)[0]
    assert fnd.find_objects(dev(labels)) == nd.find_objects(labels)
    assert fnd.find_objects(labels, 3) == nd.find_objects(labels, 3)
    with pytest.raises(TypeError, match="outside jit"):
        funcgrad.jit(lambda a: fnd.label(a)[0])(_A)
    with pytest.raises(ValueError, match="symmetric"):
        fnd.label(_A, np.array([[0, 1, 0], [0, 1, 1], [0, 0, 0]]))


@pytest.mark.parametrize("name", ["sum_labels", "mean", "variance", "standard_deviation",
                                  "minimum", "maximum", "median", "center_of_mass",
                                  "minimum_position", "maximum_position"])
def test_label_statistics_match_scipy(name):
    labels = nd.label(_A)[0]
    f, g = getattr(fnd, name), getattr(nd, name)
    for index in (None, 2, [1, 3], np.arange(1, 5)):
        got, want = f(dev(_X), dev(labels), index), g(_X, labels, index)
        if isinstance(want, list):
            assert len(got) == len(want)
            for a, b in zip(got, want, strict=True):
                np.testing.assert_allclose([float(v) for v in a], np.asarray(b, float),
                                           rtol=1e-12)
        elif isinstance(want, tuple):
            np.testing.assert_allclose([float(v) for v in got], np.asarray(want, float),
                                       rtol=1e-12)
        else:
            assert_allclose(got, want, rtol=1e-12)
    whole = f(dev(_X))
    whole = [float(v) for v in whole] if isinstance(whole, tuple) else float(whole)
    np.testing.assert_allclose(whole, np.asarray(g(_X), float), rtol=1e-12)


def test_statistics_missing_labels_and_gradients():
    labels = nd.label(_A)[0]
    assert np.isnan(host(fnd.mean(_X, labels, [99]))[0])
    assert float(fnd.minimum(_X, labels, [99])[0]) == 0.0  # SciPy's value
    grad = funcgrad.grad(lambda x: fnd.center_of_mass(x, labels, 2)[1])(dev(_X))
    assert host(grad)[labels != 2].tolist() == [0.0] * int((labels != 2).sum())
    jitted = funcgrad.jit(lambda x: fnd.mean(x, labels, [1, 2, 3]))(dev(_X))
    assert_allclose(jitted, nd.mean(_X, labels, [1, 2, 3]), rtol=1e-12)


def test_distance_transform_edt_matches_scipy():
    for sampling in (None, (1.0, 2.5)):
        assert_allclose(fnd.distance_transform_edt(dev(_A), sampling=sampling),
                        nd.distance_transform_edt(_A, sampling=sampling), rtol=1e-12)
    assert_allclose(fnd.distance_transform_edt(dev(_A3)), nd.distance_transform_edt(_A3),
                    rtol=1e-12)
    dist, idx = fnd.distance_transform_edt(dev(_A), return_indices=True)
    # the nearest zero's index: at the reported distance (ties may pick another zero)
    reach = np.sqrt(((host(idx) - np.indices(_A.shape)) ** 2).sum(0))
    assert_allclose(reach, nd.distance_transform_edt(_A), rtol=1e-12)
    assert not _A[tuple(host(idx))].any()
    assert host(idx).dtype == np.int32
