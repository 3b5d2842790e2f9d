"""funcgrad.scipy.cluster.vq.vq against scipy.cluster.vq: 1-D and 2-D, float32/float64/integer
(codes and distances with SciPy's dtypes), ties; the distance's gradient, jit, vmap; errors."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev

import funcgrad
from funcgrad.scipy.cluster.vq import vq
from funcgrad.test_util import check_grads

sv = pytest.importorskip("scipy.cluster.vq")

_RNG = np.random.default_rng(0)
CASES = [
    (_RNG.normal(size=(20, 3)), _RNG.normal(size=(4, 3))),
    (_RNG.normal(size=7), _RNG.normal(size=3)),
    (_RNG.normal(size=(5, 2)).astype(np.float32), _RNG.normal(size=(3, 2)).astype(np.float32)),
    (np.array([[1, 2]]), np.array([[0, 0], [1, 1]])),
    (np.array([[1.0, 2.0], [0.5, 0.5]]), np.array([[0.0, 0.0], [1.0, 1.0]])),  # a tie
    (np.array([[1, 2]]), np.array([[0.0, 0.0], [1.0, 1.0]])),
]


@pytest.mark.parametrize("i", range(len(CASES)))
def test_vq_as_scipy(i):
    obs, book = CASES[i]
    code, dist = vq(dev(obs), dev(book))
    want_code, want_dist = sv.vq(obs, book)
    assert_allclose(code, want_code)
    assert_allclose(dist, want_dist, rtol=1e-6 if dist.dtype == np.float32 else 1e-13)


def test_gradient_jit_vmap():
    obs, book = CASES[0]
    check_grads(lambda o, c: vq(o, c)[1], (dev(obs), dev(book)), order=1)
    code, dist = funcgrad.jit(vq)(dev(obs), dev(book))
    assert_allclose(code, sv.vq(obs, book)[0])
    codes = funcgrad.vmap(lambda o: vq(o, dev(book))[0])(dev(obs[None]))
    assert_allclose(codes[0], sv.vq(obs, book)[0])


def test_errors():
    with pytest.raises(ValueError, match="same rank"):
        vq(dev(np.ones((2, 2))), dev(np.ones(2)))
    with pytest.raises(ValueError, match="ndim"):
        vq(dev(np.ones((2, 2, 2))), dev(np.ones((2, 2, 2))))
    with pytest.raises(ValueError, match="features"):
        vq(dev(np.ones((2, 2))), dev(np.ones((2, 3))))
