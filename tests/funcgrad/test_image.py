"""funcgrad.image (jax.image's resize and scale_and_translate) against JAX 0.10.2's values,
recorded as literals: every method, antialiasing, dtypes, derivatives, vmap and jit."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import dev, host

import funcgrad
import funcgrad.image as image
import funcgrad.numpy as fnp
from funcgrad.errors import ShapeError

X = np.array([[0.0, 1.0, 4.0], [2.0, 3.0, 9.0]])


@pytest.mark.parametrize("method, antialias, shape, expected", [
    ("linear", True, (3, 5), [[0.0, 0.4, 1.0, 2.8, 4.0], [1.0, 1.4, 2.0, 4.7, 6.5],
                              [2.0, 2.4, 3.0, 6.6, 9.0]]),
    ("cubic", True, (4, 2), [[0.063686148617, 2.641818525163], [0.618883283651, 3.808633340977],
                             [1.719800504471, 6.122345792249], [2.274997639505, 7.289160608063]]),
    ("lanczos3", True, (1, 5), [[1.039230782728, 0.866908615966, 2.0, 5.123835711638,
                                 6.953554441354]]),
    ("area", True, (3, 2), [[1 / 3, 3.0], [4 / 3, 5.0], [7 / 3, 7.0]]),
    ("cubic-pytorch", False, (3, 5), [
        [-0.269611111111, 0.017138888889, 0.826388888889, 2.575013888889, 3.828972222222],
        [0.904, 1.064, 2.0, 4.826, 6.932],
        [2.077611111111, 2.110861111111, 3.173611111111, 7.076986111111, 10.035027777778]]),
    ("nearest", True, (3, 2), [[0.0, 4.0], [2.0, 9.0], [2.0, 9.0]]),
    ("linear", False, (2, 2), [[0.25, 3.25], [2.25, 7.5]]),
])
def test_resize_matches_jax(method, antialias, shape, expected):
    out = host(image.resize(dev(X), shape, method, antialias=antialias))
    np.testing.assert_allclose(out, expected, rtol=1e-10, atol=1e-11)
    jitted = funcgrad.jit(lambda x: image.resize(x, shape, method, antialias=antialias))
    np.testing.assert_allclose(host(jitted(dev(X))), expected, rtol=1e-10, atol=1e-11)


def test_dtypes():
    ints = dev(np.arange(12, dtype=np.int32).reshape(3, 4))
    assert host(image.resize(ints, (5, 2), "nearest")).dtype == np.int32
    # NumPy's promotion (docs/porting.md): integers resample in float64 (JAX: float32)
    assert host(image.resize(ints, (5, 2), "linear")).dtype == np.float64
    assert host(image.resize(dev(X.astype(np.float32)), (4, 4), "cubic")).dtype == np.float32


def test_scale_and_translate_and_its_derivatives():
    x = dev(X)
    out = image.scale_and_translate(x, (2, 4), (1,), dev(np.array([1.5])), dev(np.array([0.5])),
                                    "linear")
    np.testing.assert_allclose(host(out), [[0.0, 1 / 6, 5 / 6, 2.5], [2.0, 13 / 6, 17 / 6, 6.0]],
                               rtol=1e-12, atol=1e-14)
    g = funcgrad.grad(lambda s: fnp.sum(image.scale_and_translate(
        x, (2, 4), (1,), s, dev(np.array([0.5])), "cubic") ** 2))(dev(np.array([1.5])))
    np.testing.assert_allclose(host(g), [-158.243922740189], rtol=1e-10)
    g = funcgrad.grad(lambda x: fnp.sum(image.resize(x, (3, 5), "linear") ** 2))(x)
    np.testing.assert_allclose(host(g), [[2.32, 9.0, 20.68], [8.72, 17.64, 35.24]], rtol=1e-12)


def test_vmap_over_channels():
    rgb = dev(np.random.default_rng(0).random((5, 7, 3)))
    per_channel = funcgrad.vmap(lambda c: image.resize(c, (4, 4), "lanczos3"), 2, 2)(rgb)
    np.testing.assert_allclose(host(per_channel), host(image.resize(rgb, (4, 4, 3), "lanczos3")),
                               rtol=1e-12)


def test_bad_arguments():
    with pytest.raises(ShapeError, match="number of dimensions"):
        image.resize(dev(X), (4,), "linear")
    with pytest.raises(ValueError, match="Unknown resize method"):
        image.resize(dev(X), (4, 4), "bogus")
    with pytest.raises(ValueError, match="Nearest"):
        image.scale_and_translate(dev(X), (4, 4), (0,), dev(np.ones(1)), dev(np.zeros(1)),
                                  "nearest")
    assert image.ResizeMethod.from_string("trilinear") is image.ResizeMethod.LINEAR
