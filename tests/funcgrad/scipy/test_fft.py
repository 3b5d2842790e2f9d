"""funcgrad.scipy.fft: values recorded from jax.scipy.fft 0.10.2 (float64) and errors. Values
vs SciPy for every type and norm: the op table tests/funcgrad/op_tables/scipy_fft.py."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev

import funcgrad.scipy.fft as ff

X = np.array([[0.5, -1.0, 0.25, 2.0], [0.75, 0.1, -0.4, 1.0]])


def test_matches_jax() -> None:
    jax_dct = [[0.875, -1.3181697862486554, 1.625, 0.4107047779380875],
               [0.725, -0.028021345572997812, 1.025, -0.39429025373736876]]
    jax_idctn = [[0.06690290687745472, -0.15495827885350907, 0.2804024526776683,
                  0.0027354407708637257],
                 [-0.03336990343801348, -0.11469412023202832, 0.007555772583709874,
                  0.07042572961385422]]
    assert_allclose(ff.dct(dev(X), norm="ortho"), np.array(jax_dct), rtol=1e-12, atol=1e-12)
    assert_allclose(ff.idctn(dev(X)), np.array(jax_idctn), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("call,match", [
    (lambda: ff.dct(X, type=5), "type"),
    (lambda: ff.dct(X, norm="none"), "norm"),
    (lambda: ff.dct(X, n=0), "data points"),
    (lambda: ff.dct(X, axis=2), "axis"),
    (lambda: ff.dct(np.ones(1), type=1), "2 points"),
    (lambda: ff.dctn(X, s=(2, 2), axes=0), "same length"),
    (lambda: ff.dctn(X, axes=(0, 0)), "unique"),
])
def test_bad_arguments(call, match) -> None:
    with pytest.raises(ValueError, match=match):
        call()
