"""funcgrad.scipy.ndimage's filters (correlate/convolve, Gaussian, uniform, min/max, rank,
derivative filters): values against SciPy's (``scipy.ndimage`` 1.17, recorded as literals),
every boundary mode and origin rule, integer images, gradients and transformations."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev

import funcgrad
import funcgrad.scipy.ndimage as fnd
from funcgrad.test_util import check_grads

X = np.array([[3.0, -1.0, 4.0, 1.0], [5.0, 9.0, -2.0, 6.0], [5.0, 3.0, 5.0, -8.0]])
XI = X.astype(np.int64)
W2 = np.array([[1.0, 2.0], [0.0, -1.0]])

CASES = [
    ("correlate1d", lambda: fnd.correlate1d(dev(X), [1.0, 2.0, -1.0, 0.5], axis=0, mode='mirror', origin=-1),
     np.array([[  8.5,  -0.5,  10.5,  -2. ],
               [ 10.5,  18.5,  -6. ,  24. ],
               [ 11.5,   5.5,  12. , -15.5]])),
    ("convolve1d", lambda: fnd.convolve1d(dev(X), [1.0, 3.0], mode='wrap', origin=0),
     np.array([[  8.,   1.,  13.,   6.],
               [ 24.,  25.,   0.,  23.],
               [ 18.,  14.,   7., -19.]])),
    ("correlate", lambda: fnd.correlate(dev(X), W2, mode='constant', cval=0.5, origin=(0, -1)),
     np.array([[ 2.5, -2.5,  0.5,  1. ],
               [-8. ,  9. ,  0. ,  1.5],
               [20. ,  0. , 18. ,  6.5]])),
    ("convolve", lambda: fnd.convolve(dev(X), W2, mode='nearest'),
     np.array([[ 16.,  17.,  -2.,  17.],
               [  8.,   2.,   4., -30.],
               [  8.,   8.,  -3., -16.]])),
    ("gaussian_filter", lambda: fnd.gaussian_filter(dev(X), [1.0, 0.5], order=[0, 1], mode='reflect'),
     np.array([[-0.640785562785183  , -0.6134571296559322 , -0.13126705265399835,
                -0.15859548578324906],
               [-0.06698441337498158, -1.0979548617185508 , -1.6641602443335837 ,
                -0.6331897959900146 ],
               [-0.1522798822761627 , -0.872959425258297  , -3.3437626470113946 ,
                -2.6230831040292606 ]])),
    ("gaussian_filter1d", lambda: fnd.gaussian_filter1d(dev(X), 1.5, axis=0, order=2, mode='grid-wrap', truncate=2.0),
     np.array([[-0.21834617596333494, -0.15798369760319886, -0.1356121814876286 ,
                 0.00748429134821375],
               [-0.23347747451790446, -0.2336401903760464 , -0.09021828582392011,
                -0.03034395503821002],
               [-0.23347747451790446, -0.1882462947123379 , -0.1431778307649134 ,
                 0.07557513484377659]])),
    ("uniform_filter", lambda: fnd.uniform_filter(dev(X), (2, 3), mode='mirror', origin=(0, 1)),
     np.array([[3.                , 4.                , 3.                ,
                2.8333333333333335],
               [3.                , 4.                , 3.                ,
                2.8333333333333335],
               [4.166666666666667 , 5.666666666666667 , 4.166666666666667 ,
                2.1666666666666665]])),
    ("uniform_filter1d", lambda: fnd.uniform_filter1d(dev(X), 4, mode='constant', cval=1.0),
     np.array([[1.  , 1.75, 1.75, 1.25],
               [4.  , 3.25, 4.5 , 3.5 ],
               [2.5 , 3.5 , 1.25, 0.25]])),
    ("minimum_filter", lambda: fnd.minimum_filter(dev(X), size=(2, 2), mode='reflect'),
     np.array([[ 3., -1., -1.,  1.],
               [ 3., -1., -2., -2.],
               [ 5.,  3., -2., -8.]])),
    ("maximum_filter", lambda: fnd.maximum_filter(dev(X), footprint=[[True, False, True]], mode='wrap'),
     np.array([[1., 4., 1., 4.],
               [9., 5., 9., 5.],
               [3., 5., 3., 5.]])),
    ("maximum_filter1d", lambda: fnd.maximum_filter1d(dev(X), 2, axis=0, origin=-1, mode='nearest'),
     np.array([[ 5.,  9.,  4.,  6.],
               [ 5.,  9.,  5.,  6.],
               [ 5.,  3.,  5., -8.]])),
    ("median_filter", lambda: fnd.median_filter(dev(X), size=(2, 3), mode='mirror'),
     np.array([[5., 4., 4., 4.],
               [5., 4., 4., 4.],
               [5., 5., 5., 5.]])),
    ("rank_filter", lambda: fnd.rank_filter(dev(X), -2, size=3, mode='constant'),
     np.array([[5., 5., 6., 4.],
               [5., 5., 6., 5.],
               [5., 5., 6., 5.]])),
    ("percentile_filter", lambda: fnd.percentile_filter(dev(X), 25, footprint=[[1, 1], [0, 1]], mode='nearest'),
     np.array([[ 3., -1., -1.,  1.],
               [ 3., -1., -2.,  1.],
               [ 5.,  3., -2., -8.]])),
    ("sobel", lambda: fnd.sobel(dev(X), axis=0),
     np.array([[ 16.,  16.,   3.,   9.],
               [ 10.,  11.,  -3., -26.],
               [ -6.,  -5.,  -6., -35.]])),
    ("prewitt", lambda: fnd.prewitt(dev(X), axis=1, mode='constant'),
     np.array([[  8.,  -6.,  -1.,  -2.],
               [ 11.,  -6., -12.,  -7.],
               [ 12.,  -7., -14.,  -3.]])),
    ("laplace", lambda: fnd.laplace(dev(X), mode='wrap'),
     np.array([[ -2.,  23., -13.,   1.],
               [  3., -31.,  32., -28.],
               [-17.,   6., -23.,  49.]])),
    ("gaussian_laplace", lambda: fnd.gaussian_laplace(dev(X), 0.8),
     np.array([[ 0.9919151956595891 ,  3.12280929522699   , -0.11051731575181245,
                -0.2219265972735016 ],
               [-2.425774600684948  , -3.9128970192726915 ,  0.6128450035285726 ,
                -3.4156080888036127 ],
               [-0.5953166809089361 , -1.5249847182377816 , -1.6156558636546996 ,
                 9.071282321710662  ]])),
    ("gaussian_gradient_magnitude", lambda: fnd.gaussian_gradient_magnitude(dev(X), 1.0, mode='nearest'),
     np.array([[1.2915195755013624 , 1.1641756349458467 , 0.3371099244697602 ,
                0.26026313746547514],
               [0.9438824600730654 , 1.3044121310255887 , 1.5113256028468633 ,
                2.291521756284861  ],
               [0.46182632227859377, 1.494231821758192  , 3.2138929551961555 ,
                3.9196430276856953 ]])),
    ("uniform_filter", lambda: fnd.uniform_filter(dev(XI), 3),
     np.array([[ 2,  2,  2,  2],
               [ 3,  3,  1,  0],
               [ 5,  4,  1, -1]])),
    ("gaussian_filter", lambda: fnd.gaussian_filter(dev(XI), 1.0),
     np.array([[ 2,  2,  1,  1],
               [ 3,  3,  1,  0],
               [ 3,  3,  1, -1]])),]


@pytest.mark.parametrize("name,call,want", CASES, ids=[c[0] for c in CASES])
def test_filter_matches_scipy(name, call, want):
    out = call()
    assert_allclose(out, want.astype(out.dtype) if want.dtype.kind == "i" else want,
                    rtol=1e-12, atol=1e-12)


MODES = ["reflect", "mirror", "nearest", "wrap", "constant"]


def test_modes_extend_as_scipy():
    # A 1-sample shift pulls in one sample of the extension at each end (SciPy's values).
    x = dev(np.array([1.0, 2.0, 4.0]))
    want = {"reflect": [1, 1, 4, 4], "mirror": [2, 1, 4, 2], "nearest": [1, 1, 4, 4],
            "wrap": [4, 1, 4, 1], "constant": [9, 1, 4, 9]}
    for mode in MODES:
        lo = fnd.correlate1d(x, [1.0, 0.0, 0.0], mode=mode, cval=9.0)[0]
        hi = fnd.correlate1d(x, [0.0, 0.0, 1.0], mode=mode, cval=9.0)[-1]
        got = [float(lo), float(x[0]), float(x[-1]), float(hi)]
        assert got == [float(v) for v in want[mode]], mode


def test_integer_images_truncate_per_pass_and_dtypes():
    out = fnd.uniform_filter1d(dev(np.array([0, 1, 1, 5])), 2)
    assert out.dtype == np.int64
    assert_allclose(out, np.array([0, 0, 1, 3]))  # 0.5 -> 0, as SciPy's C cast
    assert fnd.gaussian_filter(dev(X.astype(np.float32)), 1.0).dtype == np.float32
    assert fnd.gaussian_filter(dev(XI), 1.0, output=np.float64).dtype == np.float64
    assert fnd.maximum_filter(dev(X > 2), 2).dtype == np.bool_


def test_errors_are_clear():
    x = dev(X)
    with pytest.raises(ValueError, match="invalid origin"):
        fnd.correlate1d(x, [1.0, 2.0, 3.0], origin=2)
    with pytest.raises(ValueError, match="mode must be one of"):
        fnd.uniform_filter(x, 3, mode="periodic")
    with pytest.raises(RuntimeError, match="no footprint or filter size"):
        fnd.median_filter(x)
    with pytest.raises(TypeError, match="output= as an array"):
        fnd.sobel(x, output=np.empty((3, 4)))
    with pytest.raises(RuntimeError, match="one dimension per input dimension"):
        fnd.correlate(x, np.ones(3))


def test_gradients_and_transformations():
    rng = np.random.default_rng(1)
    x, w, k = rng.normal(size=(4, 5)), rng.normal(size=3), rng.normal(size=(2, 3))
    check_grads(lambda x, w: fnd.correlate1d(x, w, mode="wrap"), (dev(x), dev(w)), order=2)
    check_grads(lambda x, k: fnd.convolve(x, k, mode="constant", cval=2.0), (dev(x), dev(k)),
                order=1)
    check_grads(lambda x: fnd.gaussian_filter(x, 1.0, mode="mirror"), (dev(x),), order=1)
    check_grads(lambda x: fnd.median_filter(x, 3), (dev(x),), order=1)
    f = funcgrad.jit(funcgrad.vmap(lambda r, w: fnd.convolve1d(r, w, mode="nearest"),
                                   in_axes=(0, None)))
    assert_allclose(f(dev(x), dev(w)), fnd.convolve1d(dev(x), dev(w), mode="nearest"),
                    rtol=1e-13)
    g = funcgrad.jit(funcgrad.vmap(lambda r: fnd.maximum_filter(r, 2)))(dev(x))
    assert_allclose(g, fnd.maximum_filter(dev(x), size=(1, 2)))


def test_minimum_and_maximum_filters_take_a_mode_per_axis_over_a_box():
    # SciPy 1.17 filters a box axis by axis, each axis with its own mode (values recorded from
    # scipy.ndimage); a footprint that is not a box, or a median/rank filter, refuses a
    # sequence of modes as SciPy does.
    x = np.array([[3.0, 1.0, 4.0, 1.0], [5.0, 9.0, 2.0, 6.0], [5.0, 3.0, 5.0, 8.0]])
    got = fnd.minimum_filter(dev(x), size=(2, 3), mode=["wrap", "constant"], cval=2.5)
    assert_allclose(got, np.array([[1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0],
                                   [2.5, 2.0, 2.0, 2.0]]))
    got = fnd.maximum_filter(dev(x), size=2, mode=["nearest", "wrap"])
    assert_allclose(got, np.array([[3.0, 3.0, 4.0, 4.0], [6.0, 9.0, 9.0, 6.0],
                                   [8.0, 9.0, 9.0, 8.0]]))
    with pytest.raises(RuntimeError, match="sequence of modes is not supported"):
        fnd.median_filter(dev(x), size=2, mode=["nearest", "wrap"])
    with pytest.raises(RuntimeError, match="sequence of modes is not supported"):
        fnd.minimum_filter(dev(x), footprint=np.eye(2, dtype=bool), mode=["nearest", "wrap"])
