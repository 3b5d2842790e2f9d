"""funcgrad.scipy.ndimage.map_coordinates (and the spline transforms built on it: defaults,
transforms, errors): gradients recorded from
jax.scipy.ndimage.map_coordinates 0.10.2 (float64; JAX's 'constant' and 'wrap' are SciPy's
'grid-constant' and 'grid-wrap'), and errors. Values vs SciPy: the op table
tests/funcgrad/op_tables/scipy_ndimage.py."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev

import funcgrad
import funcgrad.scipy.ndimage as fnd

X = np.array([[0.5, -1.0, 0.25, 2.0], [0.75, 0.1, -0.4, 1.0], [0.2, 0.3, -0.6, -2.0]])
R = np.array([0.3, 1.6, -0.4])
C = np.array([0.7, 2.2, 3.5])
JAX = {  # JAX mode -> (d/dx, d/drows) of sum(map_coordinates(x, [r, C], 1, cval=0.5) ** 2)
    "grid-constant": (
        [[-0.12452999999999996, -0.29056999999999983, 0.0, 0.5700000000000001],
         [-0.05336999999999999, -0.12452999999999995, -0.36863999999999986, -0.09216000000000008],
         [0.0, 0.0, -0.55296, -0.13824000000000017]],
        [-0.5010849999999998, 0.8755200000000006, 1.4249999999999998]),
    "mirror": (
        [[-0.12452999999999996, -0.29056999999999983, 0.4769999999999999, 0.4769999999999999],
         [-0.05336999999999999, -0.12452999999999995, -0.05063999999999985, 0.22583999999999993],
         [0.0, 0.0, -0.55296, -0.13824000000000017]],
        [-0.5010849999999998, 0.8755200000000006, 1.31175]),
    "grid-wrap": (
        [[0.10947000000000003, -0.29056999999999983, 0.0, 0.23399999999999999],
         [-0.05336999999999999, -0.12452999999999995, -0.36863999999999986, -0.09216000000000008],
         [0.15600000000000003, 0.0, -0.55296, 0.01775999999999986]],
        [-0.5010849999999998, 0.8755200000000006, 1.677]),
}


@pytest.mark.parametrize("mode", list(JAX))
def test_gradients_match_jax(mode: str) -> None:
    def f(x, r):
        return (fnd.map_coordinates(x, [r, dev(C)], 1, mode=mode, cval=0.5) ** 2).sum()

    gx, gr = funcgrad.grad(f, argnums=(0, 1))(dev(X), dev(R))
    assert_allclose(gx, np.array(JAX[mode][0]), rtol=1e-12, atol=1e-12)
    assert_allclose(gr, np.array(JAX[mode][1]), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("call,err,match", [
    (lambda: fnd.map_coordinates(X, [R], 1), ValueError, "one array per dimension"),
    (lambda: fnd.map_coordinates(X, [R, C], 6), RuntimeError, "order"),
    (lambda: fnd.map_coordinates(X, [R, C], 1, mode="edge"), ValueError, "mode"),
    (lambda: fnd.map_coordinates(np.ones((0, 2)), [R, C], 1), ValueError, "zero-size"),
    (lambda: fnd.map_coordinates(X, [R, C], 1, output=np.ones(3)), TypeError, "output"),
])
def test_bad_arguments(call, err, match) -> None:
    with pytest.raises(err, match=match):
        call()


@pytest.mark.parametrize("mode, want", [
    ("nearest", [1.0, 4.5, 0.65, 8.5]),
    ("mirror", [1.0, 4.85, 1.4, 7.05]),
    ("grid-wrap", [1.0, 5.9, 2.9, 3.7]),
    ("constant", [1.0, 2.0, 2.0, 2.0]),
])
def test_traced_coordinates_into_host_input(mode, want) -> None:
    # An image closed over (a NumPy array in the cpu pass), sampled at traced coordinates
    # (jit, vmap): the gather goes through funcgrad (NumPy indexing raised
    # TracerArrayConversionError). Values from SciPy.
    img = dev(np.arange(20.0).reshape(4, 5) * 0.5 - 1)
    co = np.array([[0.5, 2.2, -0.3, 3.4], [1.5, -0.7, 3.3, 4.9]])

    def f(c):
        return fnd.map_coordinates(img, c, order=1, mode=mode, cval=2.0)

    assert_allclose(funcgrad.jit(f)(dev(co)), np.array(want), rtol=1e-12, atol=1e-12)
    per_point = funcgrad.vmap(lambda c: f(c[:, None])[0])(dev(co.T))
    assert_allclose(per_point, np.array(want), rtol=1e-12, atol=1e-12)


# SciPy 1.17's scipy.ndimage.map_coordinates(a, [C], order=..., mode=..., cval=-1.0) at
# half-integers and multiples of the period outside the array: order 0 folds the coordinate
# back first, then rounds half up (it rounded half away from zero first, then folded the
# index: mirror at 7.5 read a[0], SciPy a[1]); "wrap" keeps n - 1 (it wrapped 4.0 to a[0]).
_A = np.array([0.0, 1.0, 4.0, 9.0, 16.0])
_C = np.array([-8.5, -4.0, -2.5, -0.5, 4.0, 4.5, 7.5, 9.5, 12.0])
_SCIPY = {
    "wrap": ([16.0, 16.0, 4.0, 16.0, 16.0, 1.0, 16.0, 4.0, 0.0],
             [12.5, 16.0, 2.5, 12.5, 16.0, 0.5, 12.5, 2.5, 0.0]),
    "mirror": ([1.0, 16.0, 9.0, 1.0, 16.0, 9.0, 1.0, 4.0, 16.0],
               [0.5, 16.0, 6.5, 0.5, 16.0, 12.5, 0.5, 2.5, 16.0]),
    "reflect": ([4.0, 9.0, 4.0, 0.0, 16.0, 16.0, 4.0, 0.0, 4.0],
                [2.5, 9.0, 2.5, 0.0, 16.0, 16.0, 2.5, 0.0, 4.0]),
    "grid-mirror": ([4.0, 9.0, 4.0, 0.0, 16.0, 16.0, 4.0, 0.0, 4.0],
                    [2.5, 9.0, 2.5, 0.0, 16.0, 16.0, 2.5, 0.0, 4.0]),
    "grid-wrap": ([4.0, 1.0, 9.0, 0.0, 16.0, 0.0, 9.0, 0.0, 4.0],
                  [2.5, 1.0, 6.5, 8.0, 16.0, 8.0, 6.5, 8.0, 4.0]),
    "grid-constant": ([-1.0, -1.0, -1.0, 0.0, 16.0, -1.0, -1.0, -1.0, -1.0],
                      [-1.0, -1.0, -1.0, -0.5, 16.0, 7.5, -1.0, -1.0, -1.0]),
}


@pytest.mark.parametrize("mode", sorted(_SCIPY))
@pytest.mark.parametrize("order", [0, 1])
@pytest.mark.parametrize("jit", [False, True])
def test_ties_and_period_edges_as_scipy(mode, order, jit) -> None:
    def f(a, c):
        return fnd.map_coordinates(a, [c], order=order, mode=mode, cval=-1.0)

    f = funcgrad.jit(f) if jit else f
    assert_allclose(f(dev(_A), dev(_C)), np.array(_SCIPY[mode][order]))


def test_spline_defaults_are_scipys() -> None:
    # order=3 by default, as SciPy (scipy.ndimage 1.17's values)
    img = dev(np.arange(12.0).reshape(3, 4) ** 1.5)
    assert_allclose(fnd.map_coordinates(img, [dev(np.array([0.5, 1.7])),
                                              dev(np.array([1.5, 2.2]))]),
                    np.array([4.72195712, 30.54593131]), rtol=1e-7)
    assert_allclose(fnd.shift(dev(np.array([0.0, 1, 4, 9, 16])), 0.5),
                    np.array([0.0, 0.23214286, 2.33928571, 5.91071429, 13.51785714]), rtol=1e-7)
    assert_allclose(fnd.zoom(dev(np.array([[0.0, 1], [2, 3]])), 2)[1],
                    np.array([0.518518519, 0.777777778, 1.25925926, 1.51851852]), rtol=1e-7)
    out = fnd.rotate(img, 45)
    assert out.shape == (5, 5)
    assert_allclose(out[2], np.array([0.0, 1.55268003, 12.85826657, 30.69256307, 0.0]),
                    rtol=1e-7, atol=1e-12)


def test_spline_transforms_under_jit_vmap_grad() -> None:
    x = dev(np.array([0.0, 1.0, 4.0, 9.0, 16.0]))

    def total(s):
        return fnd.shift(x, s, order=3, mode="nearest").sum()

    # d/ds of the shifted signal's sum, against central differences of SciPy's values
    # (scipy.ndimage.shift(x, 0.3 +- 1e-6, mode="nearest").sum())
    assert_allclose(funcgrad.grad(total)(0.3), -17.030154115360574, rtol=1e-6)
    shifts = dev(np.array([0.5, -1.25]))
    batched = funcgrad.jit(funcgrad.vmap(lambda s: fnd.shift(x, s)))(shifts)
    assert_allclose(batched[0], np.array([0.0, 0.23214286, 2.33928571, 5.91071429,
                                          13.51785714]), rtol=1e-7)
    m = dev(np.array([[0.45]]))
    g = funcgrad.grad(lambda m: fnd.affine_transform(x, m, order=1).sum())(m)
    # d/dm of sum_o x(m o) = sum_o o x'(m o): slopes 1, 1, 3, 3 at o = 1..4
    assert_allclose(g, np.array([[24.0]]), rtol=1e-12)


@pytest.mark.parametrize("call,err,match", [
    (lambda: fnd.zoom(X, 2.0, order=9), RuntimeError, "order"),
    (lambda: funcgrad.jit(lambda z: fnd.zoom(X, z))(2.0), TypeError, "zoom must be concrete"),
    (lambda: funcgrad.jit(lambda a: fnd.rotate(X, a))(30.0), TypeError, "angle must be"),
    (lambda: fnd.rotate(np.ones(3), 30.0), ValueError, "at least 2D"),
    (lambda: fnd.rotate(X, 30.0, axes=(0, 0)), ValueError, "rotation plane"),
    (lambda: fnd.shift(X, [1.0, 2.0, 3.0]), RuntimeError, "one value per axis"),
    (lambda: fnd.affine_transform(X, np.ones((3, 2))), RuntimeError, "rows"),
    (lambda: fnd.affine_transform(X, np.array([[1, 0, 0], [0, 1, 0], [1, 0, 1.0]])),
     ValueError, "homogeneous"),
    (lambda: fnd.spline_filter(X, order=1), RuntimeError, "2..5"),
    (lambda: fnd.spline_filter1d(X, axis=2), ValueError, "axis"),
])
def test_transform_bad_arguments(call, err, match) -> None:
    with pytest.raises(err, match=match):
        call()


def test_map_coordinates_moves_host_coordinates_to_the_images_device():
    # with the default device left at cpu: a device image sampled at NumPy coordinates (and a
    # NumPy image at device coordinates) interpolates on the device, as funcgrad's operations
    # move a host operand (the interpolation's array operators met them unmoved: CuPy refuses)
    from funcgrad.backend import device_of, to_numpy
    img = np.arange(30.0).reshape(5, 6) ** 1.5
    coords = np.indices((3, 3)) * 0.7 + 0.2
    with funcgrad.default_device("cpu"):
        want = fnd.map_coordinates(img, coords, order=3)   # on the host (the op table: SciPy's)
        for x, c in ((funcgrad.device_put(img, "strict"), coords),
                     (img, funcgrad.device_put(coords, "strict")),
                     (funcgrad.device_put(img, "strict"), list(coords))):
            got = fnd.map_coordinates(x, c, order=3)
            assert device_of(got) == "strict"
            assert_allclose(to_numpy(got), want, rtol=1e-12, atol=1e-12)
