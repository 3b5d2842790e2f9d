"""Samplers tested statistically (sample moments within five standard errors of the exact
ones, from fixed keys so the outcome never depends on luck), reparameterised gradients
against finite differences (the sample is a smooth function of the parameters for a fixed
key) or, for the implicitly reparameterised Gamma family, against the exact gradient of the
mean; and the key conventions: explicit keys, the global generator, and jit."""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
import funcgrad_nn as nn
import funcgrad_nn.distributions as D
from funcgrad_nn.distributions.transforms import AffineTransform, TanhTransform
from tests.helpers import dev, host

N = 20000
A = lambda *v: dev(np.array(v, dtype=np.float64))  # noqa: E731

# (name, distribution, whether its variance is finite with a finite fourth moment)
MOMENT_CASES = [
    ("Normal", lambda: D.Normal(A(0.0, 2.0), A(1.0, 0.5))),
    ("Laplace", lambda: D.Laplace(A(1.0, -1.0), A(0.5, 2.0))),
    ("Gumbel", lambda: D.Gumbel(A(0.0, 1.0), A(1.0, 3.0))),
    ("Uniform", lambda: D.Uniform(A(-1.0, 2.0), A(1.0, 5.0))),
    ("Exponential", lambda: D.Exponential(A(0.5, 3.0))),
    ("Gamma", lambda: D.Gamma(A(0.5, 4.0), A(1.0, 2.0))),
    ("Chi2", lambda: D.Chi2(A(3.0, 7.0))),
    ("Beta", lambda: D.Beta(A(0.5, 2.0), A(0.7, 5.0))),
    ("StudentT", lambda: D.StudentT(A(9.0, 12.0), A(0.0, 1.0), A(1.0, 2.0))),
    ("LogNormal", lambda: D.LogNormal(A(0.0, 1.0), A(0.3, 0.2))),
    ("Bernoulli", lambda: D.Bernoulli(probs=A(0.1, 0.6))),
    ("Bernoulli-logits", lambda: D.Bernoulli(logits=A(-2.0, 1.0))),
    ("Geometric", lambda: D.Geometric(probs=A(0.3, 0.8))),
    ("Binomial", lambda: D.Binomial(A(10.0, 4.0), probs=A(0.3, 0.9))),
    ("Poisson", lambda: D.Poisson(A(0.7, 12.0))),
    ("Dirichlet", lambda: D.Dirichlet(A(1.0, 2.0, 0.5))),
    ("HalfNormal", lambda: D.HalfNormal(A(1.0, 3.0))),
    ("Pareto", lambda: D.Pareto(A(1.0, 2.0), A(9.0, 12.0))),
    ("Weibull", lambda: D.Weibull(A(2.0, 1.0), A(1.5, 3.0))),
    ("InverseGamma", lambda: D.InverseGamma(A(9.0, 12.0), A(2.0, 1.0))),
    ("NegativeBinomial", lambda: D.NegativeBinomial(A(3.0, 0.7), probs=A(0.4, 0.2))),
    ("FisherSnedecor", lambda: D.FisherSnedecor(A(5.0, 8.0), A(12.0, 20.0))),
    ("ContinuousBernoulli", lambda: D.ContinuousBernoulli(probs=A(0.2, 0.5, 0.9))),
    ("GeneralizedPareto", lambda: D.GeneralizedPareto(A(0.0, 1.0), A(1.0, 2.0), A(0.1, -0.3))),
    ("Kumaraswamy", lambda: D.Kumaraswamy(A(2.0, 0.7), A(3.0, 1.5))),
    ("Multinomial", lambda: D.Multinomial(5, probs=A([0.2, 0.3, 0.5], [0.6, 0.2, 0.2]))),
    ("MixtureSameFamily", lambda: D.MixtureSameFamily(
        D.Categorical(probs=A(0.3, 0.7)), D.Normal(A(-1.0, 2.0), A(0.5, 1.0)))),
    ("MixtureSameFamily-multivariate", lambda: D.MixtureSameFamily(
        D.Categorical(logits=A(0.0, 1.0)),
        D.Independent(D.Normal(A([0.0, 1.0], [2.0, -1.0]), A([1.0, 0.5], [0.3, 2.0])), 1))),
    ("OneHotCategorical", lambda: D.OneHotCategorical(probs=A(0.2, 0.5, 0.3))),
    ("Wishart", lambda: D.Wishart(A(5.0, 7.5), covariance_matrix=A([2.0, 0.5], [0.5, 1.0]))),
    ("MultivariateNormal", lambda: D.MultivariateNormal(
        A(1.0, -1.0), covariance_matrix=A([2.0, 0.6], [0.6, 1.0]))),
    ("LowRankMultivariateNormal", lambda: D.LowRankMultivariateNormal(
        A(0.0, 1.0, 2.0), A([1.0], [0.5], [-1.0]), A(0.5, 1.0, 2.0))),
]


@pytest.mark.parametrize("name,make", MOMENT_CASES, ids=[c[0] for c in MOMENT_CASES])
def test_sample_moments(name, make):
    d = make()
    x = np.asarray(host(d.sample((N,), key=1)), dtype=np.float64)
    assert x.shape == (N,) + d.batch_shape + d.event_shape
    mean = np.asarray(host(d.mean))
    var = np.asarray(host(d.variance))
    m = x.mean(0)
    c = x - mean
    # the sample mean's standard error from the exact variance; the sample variance's from
    # the sample fourth central moment
    assert np.all(np.abs(m - mean) <= 5 * np.sqrt(var / N)), (name, m, mean)
    v = (c ** 2).mean(0)
    m4 = (c ** 4).mean(0)
    assert np.all(np.abs(v - var) <= 5 * np.sqrt(np.maximum(m4 - var ** 2, 1e-300) / N)), \
        (name, v, var)
    assert np.all(np.asarray(host(d.support.check(dev(x))))), f"{name}: samples outside the support"


def test_sample_covariance_multivariate_normal():
    cov = np.array([[2.0, 0.6], [0.6, 1.0]])
    d = D.MultivariateNormal(A(1.0, -1.0), covariance_matrix=dev(cov))
    x = np.asarray(host(d.rsample((N,), key=3)))
    emp = np.cov(x.T)
    # standard error of a sample covariance entry: sqrt((s_ii s_jj + s_ij^2) / N)
    se = np.sqrt((np.outer(np.diag(cov), np.diag(cov)) + cov ** 2) / N)
    assert np.all(np.abs(emp - cov) <= 5 * se)


@pytest.mark.parametrize("make", [
    lambda: D.Categorical(probs=A([0.2, 0.5, 0.3], [0.7, 0.1, 0.2])),
    lambda: D.Categorical(logits=A([0.0, 1.0, -1.0], [2.0, 0.0, 0.0])),
])
def test_categorical_frequencies(make):
    d = make()
    x = np.asarray(host(d.sample((N,), key=4)))
    assert x.dtype == np.int64 and x.shape == (N, 2)
    p = np.asarray(host(d.probs))
    for b in range(2):
        freq = np.bincount(x[:, b], minlength=3) / N
        assert np.all(np.abs(freq - p[b]) <= 5 * np.sqrt(p[b] * (1 - p[b]) / N))


def test_von_mises_circular_moments():
    """The mean direction is loc and 1 - |E exp(i x)| the circular variance, within five
    standard errors; samples lie in [-pi, pi); the sampler runs under jit and vmap."""
    d = D.VonMises(A(0.5, -2.0, 3.0), A(2.0, 0.1, 50.0))
    x = np.asarray(host(d.sample((N,), key=6)))
    assert x.shape == (N, 3) and x.min() >= -np.pi and x.max() < np.pi
    c = np.cos(x - host(d.loc))
    s = np.sin(x - host(d.loc))
    var = np.asarray(host(d.variance))
    assert np.all(np.abs((1 - c.mean(0)) - var) <= 5 * c.std(0) / np.sqrt(N))
    assert np.all(np.abs(s.mean(0)) <= 5 * s.std(0) / np.sqrt(N))
    k = funcgrad.random.PRNGKey(2)
    np.testing.assert_array_equal(host(funcgrad.jit(lambda k: d.sample((4,), key=k))(k)),
                                  host(d.sample((4,), key=k)))
    per_loc = funcgrad.vmap(lambda m: D.VonMises(m, 4.0).sample((2,), key=k))(A(0.0, 1.0))
    assert per_loc.shape == (2, 2)


def test_lkj_cholesky_samples():
    """Samples are correlation Cholesky factors; with concentration eta the off-diagonal
    correlations of a 3 x 3 LKJ have mean 0 and variance 1 / (2 eta + 2)."""
    d = D.LKJCholesky(3, A(0.5, 2.0))
    L = np.asarray(host(d.sample((N,), key=8)))
    assert L.shape == (N, 2, 3, 3)
    assert np.all(np.asarray(host(d.support.check(dev(L)))))
    C = L @ np.swapaxes(L, -1, -2)
    r = C[..., 0, 1]
    for b, eta in enumerate((0.5, 2.0)):
        var = 1 / (2 * eta + 2)
        assert abs(r[:, b].mean()) <= 5 * np.sqrt(var / N)
        assert abs(r[:, b].var() - var) <= 5 * np.sqrt((np.mean(r[:, b] ** 4) - var ** 2) / N)


def test_cauchy_quartiles():
    d = D.Cauchy(A(1.0), A(2.0))
    x = np.asarray(host(d.sample((N,), key=5)))[:, 0]
    for q in (0.25, 0.5, 0.75):
        frac = np.mean(x <= float(host(d.icdf(fnp.full((1,), q)))[0]))
        assert abs(frac - q) <= 5 * np.sqrt(q * (1 - q) / N)


# -- reparameterised gradients --------------------------------------------------------------

def _direction(name, shape, rng):
    d = rng.standard_normal(shape)
    if name in ("covariance_matrix", "precision_matrix"):
        return d + d.T  # stay symmetric: the factorisation reads one triangle only
    if name == "scale_tril":
        return np.tril(d)
    return d


def _fd_check(f, params, eps=1e-6, rtol=1e-6):
    """The gradient against central differences along random (structure-keeping)
    directions."""
    rng = np.random.default_rng(0)
    g = funcgrad.grad(f)(params)
    for k, v in params.items():
        v = np.asarray(host(v), dtype=np.float64)
        for _ in range(3):
            d = _direction(k, v.shape, rng)
            fd = (float(f({**params, k: dev(v + eps * d)}))
                  - float(f({**params, k: dev(v - eps * d)}))) / (2 * eps)
            got = float(np.sum(np.asarray(host(g[k])) * d))
            assert abs(got - fd) <= rtol * max(1.0, abs(fd)), (k, got, fd)


W = np.linspace(0.5, 1.5, 7)

REPARAM_CASES = [
    ("Normal", {"loc": A(0.5, -1.0), "scale": A(1.5, 0.3)}, lambda p: D.Normal(**p)),
    ("Laplace", {"loc": A(0.5), "scale": A(1.5)}, lambda p: D.Laplace(**p)),
    ("Gumbel", {"loc": A(0.5), "scale": A(1.5)}, lambda p: D.Gumbel(**p)),
    ("Cauchy", {"loc": A(0.5), "scale": A(0.2)}, lambda p: D.Cauchy(**p)),
    ("Uniform", {"low": A(-1.0), "high": A(2.0)}, lambda p: D.Uniform(**p)),
    ("Exponential", {"rate": A(1.5, 0.2)}, lambda p: D.Exponential(**p)),
    ("LogNormal", {"loc": A(0.1), "scale": A(0.4)}, lambda p: D.LogNormal(**p)),
    ("MVN-scale_tril", {"loc": A(0.5, -1.0), "scale_tril": A([1.0, 0.0], [0.4, 0.7])},
     lambda p: D.MultivariateNormal(**p)),
    ("MVN-covariance", {"loc": A(0.5, -1.0), "covariance_matrix": A([2.0, 0.3], [0.3, 1.0])},
     lambda p: D.MultivariateNormal(**p)),
    ("MVN-precision", {"loc": A(0.5, -1.0), "precision_matrix": A([2.0, 0.3], [0.3, 1.0])},
     lambda p: D.MultivariateNormal(**p)),
    ("LowRankMVN", {"loc": A(0.5, -1.0), "cov_factor": A([1.0], [0.3]), "cov_diag": A(0.5, 2.0)},
     lambda p: D.LowRankMultivariateNormal(**p)),
    ("RelaxedBernoulli", {"logits": A(0.3, -1.0)},
     lambda p: D.RelaxedBernoulli(dev(np.array(0.7)), **p)),
    ("RelaxedOneHotCategorical", {"logits": A(0.3, -1.0, 0.5)},
     lambda p: D.RelaxedOneHotCategorical(dev(np.array(0.7)), **p)),
    ("Kumaraswamy", {"concentration1": A(2.0), "concentration0": A(3.0)},
     lambda p: D.Kumaraswamy(**p)),
    ("LogisticNormal", {"loc": A(0.3, -0.2), "scale": A(0.7, 1.2)},
     lambda p: D.LogisticNormal(**p)),
    ("ContinuousBernoulli", {"logits": A(0.3, -1.5)}, lambda p: D.ContinuousBernoulli(**p)),
    ("GeneralizedPareto", {"loc": A(0.5), "scale": A(1.5), "concentration": A(0.2)},
     lambda p: D.GeneralizedPareto(**p)),
    ("Wishart-scale_tril", {"scale_tril": A([1.0, 0.0], [0.4, 0.7])},
     lambda p: D.Wishart(A(4.0), **p)),
    ("Tanh-Affine flow", {"loc": A(0.2), "scale": A(0.8)},
     lambda p: D.TransformedDistribution(D.Normal(p["loc"], p["scale"]),
                                         [AffineTransform(0.5, 2.0), TanhTransform()])),
]


@pytest.mark.parametrize("name,params,make", REPARAM_CASES, ids=[c[0] for c in REPARAM_CASES])
def test_rsample_gradient_matches_finite_differences(name, params, make):
    w = dev(W)

    def f(p):
        x = make(p).rsample((7,), key=11)
        return fnp.sum(w.reshape((7,) + (1,) * (x.ndim - 1)) * x)

    _fd_check(f, params)


@pytest.mark.parametrize("name,make,param,dmean", [
    ("Gamma-concentration", lambda a: D.Gamma(a, 2.0), 1.7, lambda a: 1 / 2.0),
    ("Gamma-rate", lambda b: D.Gamma(3.0, b), 1.5, lambda b: -3.0 / b ** 2),
    ("Gamma-small-concentration", lambda a: D.Gamma(a, 1.0), 0.4, lambda a: 1.0),
    ("Chi2", lambda k: D.Chi2(k), 3.0, lambda k: 1.0),
    ("Beta-concentration1", lambda a: D.Beta(a, 2.0), 1.5, lambda a: 2.0 / (a + 2.0) ** 2),
    ("Dirichlet", lambda a: D.Dirichlet(fnp.stack([a, fnp.asarray(1.0), fnp.asarray(2.0)])),
     0.8, lambda a: (3.0) / (a + 3.0) ** 2),
    ("StudentT-scale", lambda s: D.StudentT(8.0, 0.5, s), 1.3, lambda s: 0.0),
])
def test_implicit_reparameterisation_gradient_of_the_mean(name, make, param, dmean):
    """d/dθ of each sample (the sampler's implicit reparameterisation gradient) averages to
    d/dθ of the exact mean."""
    a = dev(np.array(param))

    def samples(a):
        x = make(a).rsample((N,), key=13)
        return x if x.ndim == 1 else x[..., 0]

    g = np.asarray(host(funcgrad.jacfwd(samples)(a)))
    assert g.shape == (N,) and np.all(np.isfinite(g))
    assert abs(g.mean() - dmean(param)) <= 5 * g.std() / np.sqrt(N), (g.mean(), dmean(param))


# -- keys, the global generator, jit, vmap --------------------------------------------------

def test_keys_make_samples_reproducible():
    d = D.Normal(A(0.0, 1.0), A(1.0, 2.0))
    a, b = d.sample((3,), key=7), d.sample((3,), key=7)
    np.testing.assert_array_equal(host(a), host(b))
    assert not np.array_equal(host(a), host(d.sample((3,), key=8)))
    k = funcgrad.random.PRNGKey(7)
    np.testing.assert_array_equal(host(d.sample((3,), key=k)), host(a))


def test_global_generator_without_key():
    d = D.Gamma(A(2.0), A(1.0))
    nn.manual_seed(0)
    a = d.sample((4,))
    b = d.sample((4,))
    nn.manual_seed(0)
    np.testing.assert_array_equal(host(a), host(d.sample((4,))))
    assert not np.array_equal(host(a), host(b))


def test_jit_needs_a_key():
    d = D.Normal(A(0.0), A(1.0))
    with pytest.raises(TypeError, match="under jit .* pass key="):
        funcgrad.jit(lambda loc: D.Normal(loc, 1.0).rsample())(A(0.0))
    with pytest.raises(TypeError, match="pass key="):
        funcgrad.jit(lambda: d.sample((2,)))()
    f = funcgrad.jit(lambda loc, key: D.Normal(loc, 1.0).rsample((3,), key=key))
    k1, k2 = funcgrad.random.split(funcgrad.random.PRNGKey(0))
    a, b = f(A(0.0), k1), f(A(0.0), k2)
    assert not np.array_equal(host(a), host(b))
    np.testing.assert_allclose(host(a), host(D.Normal(A(0.0), 1.0).rsample((3,), key=k1)),
                               rtol=1e-12)


def test_grad_under_vmap_and_jit():
    """A VAE-style per-example loss: grad of an rsample-based objective, vmapped over a batch
    and jitted, equals the loop over examples."""
    locs = A([0.0, 1.0], [2.0, -1.0], [0.5, 0.5])

    def loss(loc, key):
        q = D.Normal(loc, fnp.ones_like(loc))
        z = q.rsample((5,), key=key)
        return fnp.mean(z ** 2) + fnp.sum(D.kl_divergence(q, D.Normal(0.0, 1.0)))

    key = funcgrad.random.PRNGKey(3)
    batched = funcgrad.jit(funcgrad.vmap(funcgrad.grad(loss), in_axes=(0, None)))(locs, key)
    loop = np.stack([host(funcgrad.grad(loss)(locs[i], key)) for i in range(3)])
    np.testing.assert_allclose(host(batched), loop, rtol=1e-12)


def test_vmap_log_prob_matches_batch():
    x = A(0.3, -0.2, 1.0)
    locs = A(0.0, 1.0, 2.0)
    got = funcgrad.vmap(lambda m, xi: D.StudentT(4.0, m, 2.0).log_prob(xi))(locs, x)
    np.testing.assert_allclose(host(got), host(D.StudentT(4.0, locs, 2.0).log_prob(x)),
                               rtol=1e-12)


def test_sample_carries_no_gradient():
    g = funcgrad.grad(lambda m: fnp.sum(D.Normal(m, 1.0).sample((4,), key=0)))(A(0.5))
    np.testing.assert_array_equal(host(g), [0.0])
    g = funcgrad.grad(lambda m: fnp.sum(D.Normal(m, 1.0).rsample((4,), key=0)))(A(0.5))
    np.testing.assert_array_equal(host(g), [4.0])


def test_straight_through_one_hot():
    """The value is a one-hot sample, the gradient that of the probabilities (torch's
    value for these logits: p * (w - p . w))."""
    w = dev(np.array([1.0, 2.0, 3.0]))

    def f(logits):
        d = D.OneHotCategoricalStraightThrough(logits=logits)
        return fnp.sum(d.rsample((5,), key=3) * w)

    x = D.OneHotCategoricalStraightThrough(logits=A(0.0, 0.0, 0.0)).rsample((5,), key=3)
    assert sorted(set(np.asarray(host(x)).ravel().tolist())) == [0.0, 1.0]
    p = np.full(3, 1 / 3)
    np.testing.assert_allclose(host(funcgrad.grad(f)(A(0.0, 0.0, 0.0))),
                               5 * p * (np.array([1.0, 2.0, 3.0]) - p @ [1.0, 2.0, 3.0]),
                               atol=1e-12)


def test_score_function_estimator():
    """REINFORCE: grad E[f(x)] = E[f(x) grad log p(x)] for a Categorical policy."""
    logits = A(0.2, -0.3, 0.5)
    f = np.array([1.0, -2.0, 3.0])
    x = D.Categorical(logits=logits).sample((N,), key=21)
    fx = dev(f)[x]

    def surrogate(lg):
        return fnp.mean(fx * D.Categorical(logits=lg).log_prob(x))

    est = np.asarray(host(funcgrad.grad(surrogate)(logits)))
    p = np.exp(host(logits)) / np.exp(host(logits)).sum()
    exact = p * (f - p @ f)
    assert np.all(np.abs(est - exact) <= 0.08), (est, exact)


def test_tanh_transform_cache_scores_its_own_samples():
    """With cache_size=1 the inverse of a sample at the edge of (-1, 1) is the exact
    pre-image, so its log_prob stays finite (SAC's squashed Gaussian)."""
    base = D.Normal(A(30.0), A(1.0))
    d = D.TransformedDistribution(base, [TanhTransform(cache_size=1)])
    y = d.rsample(key=0)
    assert float(host(y)[0]) == 1.0
    lp = np.asarray(host(d.log_prob(y)))
    assert np.all(np.isfinite(lp))


def test_dtypes_follow_parameters():
    d32 = D.Normal(np.zeros(2, np.float32), np.ones(2, np.float32))
    assert d32.rsample(key=0).dtype == np.float32
    assert d32.log_prob(np.zeros(2, np.float32)).dtype == np.float32
    assert d32.log_prob(0.5).dtype == np.float32 and d32.cdf(0.5).dtype == np.float32
    assert D.Normal(0.0, 1.0).rsample(key=0).dtype == nn.get_default_dtype()
    assert D.Gamma(np.float32(2.0), 1.0).rsample((2,), key=0).dtype == np.float32
    assert D.Categorical(logits=np.zeros(3, np.float32)).sample(key=0).dtype == np.int64
    assert D.Bernoulli(probs=np.float32(0.5)).sample(key=0).dtype == np.float32
