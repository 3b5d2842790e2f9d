"""optim.perturbations against optax 0.2.8's. funcgrad.random's draws are not JAX's, so the
estimator itself is checked with a fixed "noise" (the same draw for every sample: the Monte-Carlo
estimate becomes deterministic); the literals are optax's value, gradient and Hessian row for
that noise. A statistical check covers the real samplers."""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import random
from funcgrad_nn.optim import perturbations as P
from tests.helpers import assert_allclose, dev, host


def _fixed(base):
    class Fixed(base):
        def sample(self, key, sample_shape=(), dtype=float):
            n = int(np.prod(sample_shape))
            return fnp.reshape(fnp.linspace(-0.5, 1.2, n), sample_shape).astype(dtype)

    return Fixed()


def f(x):
    return fnp.sum(fnp.maximum(x, 0.0) ** 2) + fnp.prod(fnp.cos(x))


X = np.array([0.2, -0.1, 0.4])
OPTAX = {  # value, gradient, the Hessian's first 4 entries
    "normal": (True, [-0.29784539051936176, 0.20849177336355318, 0.7148289372464682],
               [-2.2338404288952134, -0.521229433408883, -1.7870723431161706, -0.521229433408883]),
    "gumbel": (True, [-0.38643728041979253, 0.175914582485497, 0.41627216570040104],
               [-3.6571898892934325, -0.5705976574233705, -1.350223041451292,
                -0.5705976574233707]),
    "normal_nobase": (False, [-3.04332376775592, 2.1303266374291434, 7.303977042614208],
                      [-22.8249282581694, -5.325816593572858, -18.25994260653552,
                       -5.32581659357286]),
}


@pytest.mark.parametrize("name", sorted(OPTAX))
def test_estimator_matches_optax(name):
    base, grad, hess = OPTAX[name]
    noise = _fixed(P.Gumbel if name == "gumbel" else P.Normal)
    fn = P.make_perturbed_fun(f, 3, 0.2, noise, base)
    key, x = random.key(0), dev(X)
    assert_allclose(float(host(fn(key, x))), 1.217329507102368, rtol=1e-14)
    assert_allclose(host(funcgrad.grad(fn, argnums=1)(key, x)), np.array(grad), rtol=1e-12)
    h = funcgrad.hessian(fn, argnums=1)(key, x)
    assert_allclose(host(h).ravel()[:4], np.array(hess), rtol=1e-12)


def test_real_noise_estimates_the_smoothed_gradient():
    relu = lambda x: fnp.sum(fnp.maximum(x, 0.0))  # noqa: E731
    x = dev(np.zeros(2))
    g = funcgrad.jit(funcgrad.grad(P.make_perturbed_fun(relu, 4000, 0.1), argnums=1))(
        random.key(0), x)
    # Gumbel: d/dx E max(x + s z, 0) at 0 = P(z > 0) = 1 - exp(-1)
    assert np.all(np.abs(host(g) - (1 - np.exp(-1))) < 0.1)
    g = funcgrad.grad(P.make_perturbed_fun(relu, 4000, 0.1, P.Normal()), argnums=1)(
        random.key(1), x)
    assert np.all(np.abs(host(g) - 0.5) < 0.1)
    with pytest.raises(ValueError, match="num_samples must be >= 1"):
        P.make_perturbed_fun(relu, 0)
