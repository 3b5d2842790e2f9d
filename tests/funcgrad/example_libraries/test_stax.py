"""funcgrad.example_libraries.stax against jax.example_libraries.stax (JAX 0.10.2, x64): a
network using every layer and combinator, initialised from PRNGKey(0), has JAX's parameters,
outputs (dropout mask included) and gradients. Reference values in
fixtures/jax_example_libraries.json (fixtures/make_jax_example_libraries.py)."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest
from helpers import assert_close, dev

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import random, tree_util
from funcgrad.example_libraries import stax

from .fixtures.make_jax_example_libraries import NET_INPUT_SHAPE, build_net, net_input

FIXTURE = json.loads((pathlib.Path(__file__).parent / "fixtures"
                      / "jax_example_libraries.json").read_text())


def assert_leaves(got, want):
    leaves = tree_util.tree_leaves(got)
    assert len(leaves) == len(want)
    for g, w in zip(leaves, want):
        assert_close(g, np.asarray(w), rtol=1e-12, atol=1e-14)


def test_network_matches_jax():
    init_fun, apply_fun = build_net(stax)
    shape, params = init_fun(random.PRNGKey(0), NET_INPUT_SHAPE)
    assert list(shape) == FIXTURE["net_out_shape"]
    assert_leaves(params, FIXTURE["net_params"])
    x = dev(net_input())
    out = apply_fun(params, x, rng=random.PRNGKey(1))
    assert_close(out, np.asarray(FIXTURE["net_output"]), rtol=1e-12, atol=1e-14)
    grads = funcgrad.grad(
        lambda p: fnp.sum(apply_fun(p, x, rng=random.PRNGKey(1))[:, 0]))(params)
    assert_leaves(grads, FIXTURE["net_grads"])
    jitted = funcgrad.jit(lambda p, x, k: apply_fun(p, x, rng=k))(params, x, random.PRNGKey(1))
    assert_close(jitted, np.asarray(FIXTURE["net_output"]), rtol=1e-12, atol=1e-14)


def test_vmap_over_examples():
    init_fun, apply_fun = stax.serial(stax.Dense(4), stax.Tanh, stax.Dense(2))
    _, params = init_fun(random.PRNGKey(3), (-1, 3))
    x = dev(np.random.default_rng(1).normal(size=(5, 3)))
    per_example = funcgrad.vmap(lambda xi: apply_fun(params, xi[None])[0])(x)
    assert_close(per_example, apply_fun(params, x))


def test_pooling_with_spec_and_padding():
    x = dev(np.arange(2 * 3 * 5 * 5, dtype=float).reshape(2, 3, 5, 5))  # NCHW
    init_fun, apply_fun = stax.AvgPool((2, 2), strides=(2, 2), padding="SAME", spec="NCHW")
    shape, _ = init_fun(None, x.shape)
    out = apply_fun((), x)
    assert out.shape == tuple(shape) == (2, 3, 3, 3)
    # the last window of each row holds one column: its average is that value
    assert_close(out[0, 0, 0, 2], np.asarray((4.0 + 9.0) / 2))
    _, max_apply = stax.MaxPool((2, 2), spec="NCHW")
    assert_close(max_apply((), x)[0, 0], np.asarray([[6.0, 7.0, 8.0, 9.0], [11.0, 12.0, 13.0,
                 14.0], [16.0, 17.0, 18.0, 19.0], [21.0, 22.0, 23.0, 24.0]]))


def test_batchnorm_options():
    x = dev(np.random.default_rng(2).normal(size=(8, 3)) * 3 + 1)
    for center, scale in [(True, True), (True, False), (False, True), (False, False)]:
        init_fun, apply_fun = stax.BatchNorm(axis=0, center=center, scale=scale)
        _, params = init_fun(random.PRNGKey(0), (8, 3))
        y = apply_fun(params, x)
        assert_close(fnp.mean(y, 0), np.zeros(3), atol=1e-12)


def test_dropout_modes_and_missing_key():
    _, train = stax.Dropout(0.5)
    with pytest.raises(ValueError, match="PRNG key"):
        train((), fnp.ones(3))
    _, test = stax.Dropout(0.5, mode="test")
    assert_close(test((), dev(np.ones(3))), np.ones(3))
