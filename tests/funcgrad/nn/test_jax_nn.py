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


def test_dot_product_attention_lengths_windows_and_residual():
    # JAX 0.10.2 (which computes the softmax in float32: compared to 1e-6)
    q = dev(np.arange(24.0).reshape(1, 4, 2, 3) / 10)
    k = dev(np.cos(np.arange(30.0)).reshape(1, 5, 2, 3))
    v = dev(np.sin(np.arange(30.0)).reshape(1, 5, 2, 3))
    out, lse = nn.dot_product_attention(q, k, v, query_seq_lengths=dev(np.array([3], np.int32)),
                                        key_value_seq_lengths=dev(np.array([4], np.int32)),
                                        local_window_size=(1, 2), return_residual=True)
    expected = [[[-0.2795964, 0.6335752, 0.9642407], [0.384795, -0.5445095, -0.9731945]],
                [[-0.4373572, 0.4756639, 0.9513618], [0.4602699, -0.4507843, -0.9473895]],
                [[-0.5543521, 0.3748658, 0.9594337], [0.6065009, -0.3128355, -0.9445524]],
                [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]]  # past the query length: zeros
    np.testing.assert_allclose(host(out)[0], expected, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(host(lse)[0, :3], [[1.1252309, 0.7606979], [2.0205047, 0.4069399],
                                                  [2.4527588, -0.6542102]], rtol=1e-6)
    one, lse1 = nn.dot_product_attention(q[0], k[0], v[0], local_window_size=1,
                                         return_residual=True)
    assert one.shape == (4, 2, 3) and lse1.shape == (4, 2)
    with pytest.raises(ValueError, match="key_value_seq_lengths"):
        nn.dot_product_attention(q, k, v, key_value_seq_lengths=dev(np.array([1.5])))


def test_logmeanexp_and_identity():
    # JAX 0.10.2
    x = dev(np.array([[1.0, 2.0], [3.0, 4.0]]))
    np.testing.assert_allclose(host(nn.logmeanexp(x, axis=1)), [1.62011451, 3.62011451], rtol=1e-8)
    w = nn.logmeanexp(dev(np.array([1.0, 2.0, 3.0])), where=dev(np.array([True, False, True])))
    np.testing.assert_allclose(host(w), 2.4337808304830273, rtol=1e-12)
    f32 = nn.logmeanexp(dev(np.ones((2, 3), np.float32)), axis=0, keepdims=True)
    assert host(f32).dtype == np.float32 and host(f32).tolist() == [[1.0, 1.0, 1.0]]
    g = funcgrad.grad(lambda v: nn.logmeanexp(v))(dev(np.array([1.0, 2.0])))
    np.testing.assert_allclose(host(g), [0.26894142, 0.73105858], rtol=1e-7)
    np.testing.assert_array_equal(host(nn.identity(x)), host(x))


def test_standardize_algorithms_and_clipped_variance():
    # JAX 0.10.2 (x64): the "fast" variance mean(x**2) - mean**2 is clipped at 0 (with mean=2
    # for [1, 1] it is -3: unclipped, rsqrt gave NaN); "stable" is mean((x - mean)**2)
    x = dev(np.array([1.0, 1.0]))
    np.testing.assert_allclose(host(nn.standardize(x, mean=2.0)), [-316.2277660168379] * 2,
                               rtol=1e-14)
    np.testing.assert_allclose(host(nn.standardize(x, mean=2.0, algorithm="stable")),
                               [-0.9999950000374997] * 2, rtol=1e-14)
    got = nn.standardize(dev(np.array([[1.0, 2.0, 4.0]])), algorithm="stable",
                         where=dev(np.array([True, True, False])))
    np.testing.assert_allclose(host(got), [[-0.9999800005999799, 0.9999800005999799,
                                            4.999900002999899]], rtol=1e-14)
    with pytest.raises(ValueError, match="unknown algorithm 'exact'"):
        nn.standardize(x, algorithm="exact")


def test_softmax_where_with_nothing_kept_is_quiet_as_jax():
    # JAX 0.10.2: a row with nothing kept gives 0 (softmax) / -inf (log_softmax), silently;
    # the kept rows and the grads are JAX's values
    import warnings

    x = dev(np.array([[1.0, -2.0, 3.0], [0.5, 0.1, -1.0]], np.float32))
    w = dev(np.array([[False] * 3, [True, False, True]]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s, ls = nn.softmax(x, where=w), nn.log_softmax(x, where=w)
        g = funcgrad.grad(lambda x: nn.log_softmax(x, where=w)[1].sum())(x)
    np.testing.assert_allclose(host(s), [[0, 0, 0], [0.8175745, 0, 0.18242553]], rtol=1e-6)
    np.testing.assert_allclose(host(ls), [[-np.inf] * 3, [-0.20141323, -np.inf, -1.7014133]],
                               rtol=1e-6)
    np.testing.assert_allclose(host(g), [[0, 0, 0], [-0.635149, 0, 0.63514894]], rtol=1e-5)


def test_initializers_fans_with_explicit_axes_and_dtype_errors_as_jax():
    # JAX 0.10.2: an explicit in_axis draws 1-D weights (lecun_normal(in_axis=0, out_axis=())
    # at key(0), (3,), float32 = [0.955632, 1.1254908, -0.27086318]); the default in_axis
    # refuses them; an integer dtype is a ValueError
    init = nn.initializers
    got = init.lecun_normal(in_axis=0, out_axis=())(random.key(0), (3,), np.float32)
    np.testing.assert_allclose(host(got), [0.955632, 1.1254908, -0.27086318], rtol=1e-6)
    with pytest.raises(ValueError, match="with default in_axis. Must be at least 2D or specify"):
        init.glorot_normal()(random.key(0), (3,), np.float32)
    with pytest.raises(ValueError, match="must be a float or complex dtype, got int32"):
        init.he_uniform()(random.key(0), (2, 2), np.int32)


def test_dot_product_attention_implementation_errors_as_jax():
    # JAX 0.10.2 on a machine without cuDNN: RuntimeError for 'cudnn', ValueError otherwise
    q = dev(np.ones((1, 2, 1, 4), np.float32))
    with pytest.raises(RuntimeError, match="cuDNN is not detected"):
        nn.dot_product_attention(q, q, q, implementation="cudnn")
    with pytest.raises(ValueError, match="Unsupported implementation option: foo"):
        nn.dot_product_attention(q, q, q, implementation="foo")
    assert nn.dot_product_attention(q, q, q, implementation="xla").shape == (1, 2, 1, 4)


def test_one_hot_and_logmeanexp_of_numpy_inputs_under_a_device_default():
    # their constants (the classes, the counts) are made on the default device and met NumPy
    # input through operators, which a raw device array refuses (CuPy's, the strict one's);
    # jax.nn.one_hot([0, 2, 1], 3) and log(mean(exp([1, 2, 3]))) = 2.3089936757762706
    with funcgrad.default_device("strict"):
        hot = funcgrad.nn.one_hot(np.array([0, 2, 1]), 3)
        lme = funcgrad.nn.logmeanexp(np.array([1.0, 2.0, 3.0]))
    assert funcgrad.to_numpy(hot).tolist() == [[1, 0, 0], [0, 0, 1], [0, 1, 0]]
    assert float(funcgrad.to_numpy(lme)) == pytest.approx(2.3089936757762706, rel=1e-14)
