"""optax.losses.make_fenchel_young_loss: values and gradients of optax 0.2.8's with
jax.scipy.special.logsumexp on the same inputs (float64), leading axes batched."""

import numpy as np
import pytest

import funcgrad
from funcgrad.scipy.special import logsumexp
from funcgrad_nn.optim import losses

SCORES = np.array([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0]])
TARGETS = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])


def test_fenchel_young_logsumexp_matches_optax():
    fy = losses.make_fenchel_young_loss(logsumexp)
    np.testing.assert_allclose(fy(SCORES, TARGETS), [0.46436878, 3.0658839], rtol=1e-7)
    g = funcgrad.grad(lambda s: fy(s, TARGETS).sum())(SCORES)
    np.testing.assert_allclose(g, [[0.23122389762214904, -0.37146828078823757,
                                    0.14024438316608848],
                                   [-0.9533873774220261, 0.01714782554552039,
                                    0.9362395518765058]], rtol=1e-12)
    np.testing.assert_allclose(funcgrad.jit(fy)(SCORES, TARGETS), fy(SCORES, TARGETS))


def test_fenchel_young_leading_axes_are_batch_axes():
    fy = losses.make_fenchel_young_loss(logsumexp)
    s3 = np.arange(24.0).reshape(2, 3, 4) / 7
    out = fy(s3, np.full((2, 3, 4), 0.25))
    assert out.shape == (2, 3)
    np.testing.assert_allclose(out, np.full((2, 3), 1.399012776835038), rtol=1e-12)


def test_fenchel_young_needs_a_callable():
    with pytest.raises(TypeError, match="max_fun must be callable"):
        losses.make_fenchel_young_loss(3.0)
