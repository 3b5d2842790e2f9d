"""funcgrad.nn against jax.nn: the reference values in ``fixtures/jax_nn.json`` come from
JAX 0.10 (x64), produced by ``fixtures/make_jax_nn_fixtures.py``; each case's expression is
evaluated here with ``funcgrad.nn`` as ``nn``."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest
from helpers import dev, host

import funcgrad
import funcgrad.numpy as fnp
import funcgrad.random as random
from funcgrad import nn

from .fixtures.make_jax_nn_fixtures import inputs

FIXTURE = json.loads((pathlib.Path(__file__).parent / "fixtures" / "jax_nn.json").read_text())


@pytest.mark.parametrize("name", sorted(FIXTURE))
def test_matches_jax(name: str) -> None:
    case = FIXTURE[name]
    env = {"nn": nn, "jnp": fnp, "jax": funcgrad, **dev(inputs(fnp, random))}
    got = host(eval(case["expr"], env))
    assert str(np.asarray(got).dtype) == case["dtype"], name
    expected = np.array(case["value"], dtype=case["dtype"]).reshape(case["shape"])
    tol = 1e-6 if case["dtype"] == "float32" else 1e-12
    if name.startswith("attention"):
        tol = 1e-5  # JAX computes the logits and softmax in float32 even for float64 inputs
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol)


def test_activations_jit_and_batch() -> None:
    x = dev(np.linspace(-2.0, 2.0, 5))
    for f in (nn.relu, nn.gelu, nn.silu, nn.elu, nn.softplus, nn.relu6, nn.hard_tanh):
        np.testing.assert_allclose(host(funcgrad.jit(f)(x)), host(f(x)), rtol=1e-12)
        g = funcgrad.vmap(funcgrad.grad(f))(x)
        np.testing.assert_allclose(host(g), host(funcgrad.jacfwd(lambda v, f=f: f(v))(x)).diagonal(),
                                   rtol=1e-12)


def test_float32_stays_float32() -> None:
    x = dev(np.linspace(-2.0, 2.0, 5, dtype=np.float32))
    for f in (nn.relu, nn.gelu, nn.silu, nn.elu, nn.softplus, nn.sigmoid, nn.softmax,
              nn.log_softmax, nn.hard_tanh, nn.leaky_relu, nn.selu, nn.standardize):
        assert f(x).dtype == np.float32, f.__name__


def test_errors() -> None:
    with pytest.raises(ValueError, match="even"):
        nn.glu(dev(np.ones(3)))
    with pytest.raises(ValueError, match="at least 2D"):
        nn.initializers.glorot_normal()(random.PRNGKey(0), (3,))
    with pytest.raises(ValueError, match="invalid mode"):
        nn.initializers.variance_scaling(1.0, "fan_middle", "normal")
    with pytest.raises(TypeError, match="static"):
        funcgrad.jit(lambda n: nn.one_hot(fnp.arange(2), n))(3)
    with pytest.raises(ValueError, match="same shape"):
        nn.dot_product_attention(dev(np.ones((1, 2, 1, 4))), dev(np.ones((1, 3, 1, 4))),
                                 dev(np.ones((1, 2, 1, 4))))
