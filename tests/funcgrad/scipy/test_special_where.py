"""logsumexp(where=...) as jax.scipy.special.logsumexp: values and gradient recorded from JAX
0.10.2 (float64)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev

import funcgrad
import funcgrad.scipy.special as fsp

A = np.array([[0.5, -1.0, 3.0], [2.0, 0.1, -0.4]])
W = np.array([[True, False, True], [False, True, True]])
B = np.array([[1.0, 2.0, -0.5], [0.3, -1.0, 2.0]])


def test_logsumexp_where_matches_jax() -> None:
    assert_allclose(fsp.logsumexp(dev(A), axis=1, where=dev(W)),
                    np.array(JAX_ROWS), rtol=1e-13, atol=1e-13)
    out, sign = fsp.logsumexp(dev(A), axis=1, b=dev(B), where=dev(W), return_sign=True)
    assert_allclose(out, np.array(JAX_SIGNED[0]), rtol=1e-13, atol=1e-13)
    assert_allclose(sign, np.array(JAX_SIGNED[1]))
    g = funcgrad.grad(lambda a: fsp.logsumexp(a, where=dev(W)))(dev(A))
    assert_allclose(g, np.array(JAX_GRAD), rtol=1e-13, atol=1e-13)


def test_logsumexp_where_must_be_boolean() -> None:
    with pytest.raises(TypeError, match="boolean"):
        fsp.logsumexp(A, where=np.ones((2, 3)))


JAX_ROWS = [3.0788897342925496, 0.5740769841801067]
JAX_SIGNED = ([2.127522786874832, -1.4461752700778734], [-1.0, 1.0])
JAX_GRAD = [[0.0701292582757804, 0.0, 0.8543492654133087],
            [0.0, 0.04700904763586635, 0.028512428675044627]]
