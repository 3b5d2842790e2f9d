"""funcgrad.random's samplers built on the basic ones (t, f, pareto, rayleigh, maxwell,
double_sided_maxwell, weibull_min, geometric, triangular, wald, generalized_normal, ball,
clone): draws equal to JAX 0.10.2's (x64; recorded literals, same key splits and formulas, so
equal to rounding), statistics against SciPy with fixed keys, derivatives, jit/vmap, errors."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as st

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import random as R
from tests.helpers import assert_allclose, dev, host

# jax.random.<name>(jax.random.PRNGKey(42), *params, shape=(3,)) with jax_enable_x64
JAX_DRAWS = {
    ("t", (3.0,)): [-0.6930095592523876, -0.5820081154139338, 2.1891397152153647],
    ("f", (3.0, 7.0)): [1.1238255806709592, 0.36889715295285963, 3.80200025953482],
    ("pareto", (3.0,)): [1.203777755582976, 1.0050540155743009, 1.3291659848108275],
    ("rayleigh", (2.0,)): [2.6101486342144358, 5.795884058247333, 2.1068921475580344],
    ("weibull_min", (2.0, 1.5)): [1.3529603556444487, 0.12231276251644208, 1.7997751636072923],
    ("triangular", (0.0, 0.5, 2.0)): [0.6885819506922011, 0.12251558886653806,
                                      0.8697050180145918],
    ("wald", (2.0,)): [5.324020671222717, 1.3862836856025678, 0.2658722707168426],
    ("generalized_normal", (1.5,)): [-0.4028062414861481, -0.09948843483645729,
                                     0.35442502223499145],
    ("double_sided_maxwell", (1.0, 2.0)): [-2.6956351413757687, -3.6877952518604795,
                                           4.7138077011187836],
}


@pytest.mark.parametrize("name,params", list(JAX_DRAWS))
def test_draws_equal_jax(name, params) -> None:
    got = getattr(R, name)(dev(R.PRNGKey(42)), *params, shape=(3,))
    assert host(got).dtype == np.float64
    assert_allclose(got, np.array(JAX_DRAWS[name, params]), rtol=1e-9)


def test_maxwell_geometric_ball_equal_jax() -> None:
    k = dev(R.PRNGKey(42))
    assert_allclose(R.maxwell(k, (3,)),
                    np.array([2.1856811186160847, 0.866467331447922, 0.8407561365101462]),
                    rtol=1e-9)
    assert_allclose(R.geometric(k, 0.3, (3,)), np.array([3, 12, 2]))
    assert_allclose(R.ball(k, 2, shape=(2,)),
                    np.array([[-0.05098546352626486, -0.3010985594793844],
                              [-0.5717731014915894, 0.3831120936879861]]), rtol=1e-9)


N = 4000


@pytest.mark.parametrize("name,draw,cdf", [
    ("t", lambda k: R.t(k, 3.0, (N,)), st.t(3.0).cdf),
    ("f", lambda k: R.f(k, 3.0, 7.0, (N,)), st.f(3.0, 7.0).cdf),
    ("pareto", lambda k: R.pareto(k, 3.0, (N,)), st.pareto(3.0).cdf),
    ("rayleigh", lambda k: R.rayleigh(k, 2.0, (N,)), st.rayleigh(scale=2.0).cdf),
    ("maxwell", lambda k: R.maxwell(k, (N,)), st.maxwell.cdf),
    ("weibull_min", lambda k: R.weibull_min(k, 2.0, 1.5, (N,)),
     st.weibull_min(1.5, scale=2.0).cdf),
    ("triangular", lambda k: R.triangular(k, 0.0, 0.5, 2.0, (N,)),
     st.triang(0.25, loc=0.0, scale=2.0).cdf),
    ("wald", lambda k: R.wald(k, 2.0, (N,)), st.invgauss(2.0).cdf),
    ("generalized_normal", lambda k: R.generalized_normal(k, 1.5, (N,)), st.gennorm(1.5).cdf),
    ("double_sided_maxwell", lambda k: R.double_sided_maxwell(k, 1.0, 2.0, (N,)),
     lambda x: 0.5 + 0.5 * np.sign(x - 1.0) * st.maxwell.cdf(np.abs(x - 1.0) / 2.0)),
])
def test_ks_against_scipy(name, draw, cdf) -> None:
    x = np.asarray(host(draw(dev(R.PRNGKey(123)))))
    assert np.isfinite(x).all()
    assert st.kstest(x, cdf).pvalue > 1e-3, name


def test_geometric_frequencies() -> None:
    x = np.asarray(host(R.geometric(dev(R.PRNGKey(7)), 0.3, (N,))))
    assert x.dtype == np.int64 and x.min() >= 1
    freq = np.bincount(x, minlength=6)[1:6] / N
    assert_allclose(freq, st.geom(0.3).pmf(np.arange(1, 6)), atol=0.02)
    assert host(R.geometric(dev(R.PRNGKey(7)), 0.3, (2,), dtype=np.int32)).dtype == np.int32


def test_ball_inside_and_uniform_radius() -> None:
    x = np.asarray(host(R.ball(dev(R.PRNGKey(3)), 3, shape=(N,))))
    r = np.linalg.norm(x, axis=-1)
    assert x.shape == (N, 3) and (r <= 1).all()
    assert st.kstest(r, lambda s: np.clip(s, 0, 1) ** 3).pvalue > 1e-3  # P(|x| <= s) = s^d
    x1 = np.asarray(host(R.ball(dev(R.PRNGKey(3)), 2, p=1, shape=(N,))))
    assert (np.abs(x1).sum(-1) <= 1).all()
    # d = 0: empty points, as JAX 0.10.2 (shape (2, 0)); negative d refused
    assert host(R.ball(dev(R.PRNGKey(3)), 0, shape=(2,))).shape == (2, 0)
    with pytest.raises(ValueError, match="non-negative integer"):
        R.ball(dev(R.PRNGKey(3)), -1)


def test_derivatives_equal_jax() -> None:
    # jax.grad of sum(jax.random.t(k, df, (5,))) and of f in dfnum, PRNGKey(42), at 3.0
    k = dev(R.PRNGKey(42))
    assert_allclose(funcgrad.grad(lambda d: fnp.sum(R.t(k, d, (5,))))(3.0),
                    np.array(-0.3608700118888215), rtol=1e-7)
    assert_allclose(funcgrad.grad(lambda d: fnp.sum(R.f(k, d, 7.0, (5,))))(3.0),
                    np.array(1.0149346914521002), rtol=1e-7)
    # reparameterised scale parameters: the draw divided by the scale
    s = 2.0
    x = R.rayleigh(k, s, (5,))
    assert_allclose(funcgrad.grad(lambda s: fnp.sum(R.rayleigh(k, s, (5,))))(s),
                    np.array(float(np.sum(host(x))) / s))


def test_shapes_dtypes_and_transforms() -> None:
    k = dev(R.PRNGKey(0))
    assert R.t(k, dev(np.array([1.0, 2.0, 3.0]))).shape == (3,)
    assert host(R.pareto(k, 2.0, (2,), dtype=np.float32)).dtype == np.float32
    assert R.double_sided_maxwell(k, dev(np.zeros(2)), 1.0, (3,)).shape == (3, 2)
    assert R.triangular(k, 0.0, dev(np.array([0.2, 0.8])), 1.0).shape == (2,)
    f = funcgrad.jit(lambda k, d: R.t(k, d, (4,)))
    assert_allclose(f(k, 3.0), R.t(k, 3.0, (4,)), rtol=1e-12)
    ys = funcgrad.vmap(lambda k: R.wald(k, 1.0, (2,)))(R.split(k, 3))
    assert ys.shape == (3, 2)
    assert_allclose(ys[1], R.wald(R.split(k, 3)[1], 1.0, (2,)), rtol=1e-12)
    assert_allclose(R.clone(k), k)


def test_errors_name_the_sampler() -> None:
    k = dev(R.PRNGKey(0))
    with pytest.raises(ValueError, match="t: shape"):
        R.t(k, dev(np.ones(3)), (2,))
    with pytest.raises(ValueError, match="dtype argument to `pareto` must be a float dtype"):
        R.pareto(k, 2.0, (2,), dtype=np.int32)
    with pytest.raises(ValueError, match="dtype argument to `geometric` must be an int dtype"):
        R.geometric(k, 0.5, (2,), dtype=np.float32)
    with pytest.raises(ValueError, match="ball"):
        R.ball(k, -1)
    with pytest.raises(TypeError, match="maxwell: key"):
        R.maxwell([0, 0], (2,))


@pytest.mark.parametrize("n,p", [(20, 0.3), (5, 0.9), (1000, 0.37), (10**6, 0.01)])
def test_binomial_distribution(n, p) -> None:
    # fixed key: deterministic; the largest CDF gap is within the KS bound at level 1e-3
    x = np.asarray(host(R.binomial(dev(R.PRNGKey(11)), n, p, (N,))))
    assert x.dtype == np.float64 and (x == np.floor(x)).all()
    assert 0 <= x.min() and x.max() <= n
    lo, hi = int(x.min()), int(x.max())
    ks = np.arange(lo, hi + 1)
    emp = np.searchsorted(np.sort(x), ks, side="right") / N
    assert np.max(np.abs(emp - st.binom(n, p).cdf(ks))) < 1.95 / np.sqrt(N)


# jax.random.binomial(jax.random.PRNGKey(42), n, p, (6,)) with jax_enable_x64: inversion
# (n min(p, 1 - p) <= 10) and BTRS (above), the same keys and formulas, so the same draws
JAX_BINOMIAL = {
    (5, 0.3): [1.0, 1.0, 4.0, 2.0, 3.0, 1.0],
    (500, 0.3): [156.0, 142.0, 131.0, 161.0, 142.0, 140.0],
    (500, 0.8): [395.0, 407.0, 417.0, 390.0, 407.0, 408.0],
    (1e9, 0.45): [450007239.0, 450003147.0, 449967974.0, 449976372.0, 450008124.0,
                  450027968.0],
}


@pytest.mark.parametrize("n,p", list(JAX_BINOMIAL))
def test_binomial_draws_equal_jax(n, p) -> None:
    assert_allclose(R.binomial(dev(R.PRNGKey(42)), n, p, (6,)), np.array(JAX_BINOMIAL[n, p]))


@pytest.mark.parametrize("n,p", [(25, 0.5), (60, 0.3), (10**12, 0.2)])
def test_binomial_btrs_exact_distribution(n, p) -> None:
    # BTRS (n q > 10, up to n = 1e12 at O(1) work per draw): with 40000 draws, the largest
    # CDF gap stays within the KS bound at level 1e-3
    m = 40000
    x = np.asarray(host(R.binomial(dev(R.PRNGKey(5)), n, p, (m,))))
    assert (x == np.floor(x)).all() and 0 <= x.min() and x.max() <= n
    ks = np.arange(int(x.min()), int(x.max()) + 1) if n < 10**6 else np.unique(x)
    emp = np.searchsorted(np.sort(x), ks, side="right") / m
    assert np.max(np.abs(emp - st.binom(n, p).cdf(ks))) < 1.95 / np.sqrt(m)


def test_multinomial_draws_equal_jax() -> None:
    # jax.random.multinomial(PRNGKey(3), 1000, [.2, .3, .5], shape=(2, 3)), x64: its chain of
    # binomials takes the BTRS branch
    got = R.multinomial(dev(R.PRNGKey(3)), 1000, dev(np.array([0.2, 0.3, 0.5])), shape=(2, 3))
    assert_allclose(got, np.array([[184.0, 309.0, 507.0], [186.0, 326.0, 488.0]]))


def test_binomial_under_vmap_equals_unbatched() -> None:
    # per-key draws are the same batched or not (the rejection loops stop per lane)
    keys = R.split(dev(R.PRNGKey(1)), 3)
    n = dev(np.array([4.0, 300.0, 2e5]))
    got = funcgrad.vmap(lambda k, n: R.binomial(k, n, 0.4, (5,)))(keys, n)
    for i in range(3):
        assert_allclose(got[i], R.binomial(keys[i], n[i], 0.4, (5,)))


def test_binomial_edge_cases_as_jax() -> None:
    k = dev(R.PRNGKey(0))
    # jax.random.binomial: nan for n < 0, nan n or p outside [0, 1]; inf n gives inf
    got = R.binomial(k, dev(np.array([-1.0, np.nan, np.inf, 5.0])),
                     dev(np.array([0.5, 0.5, 0.5, 1.5])))
    assert_allclose(got, np.array([np.nan, np.nan, np.inf, np.nan]))
    assert_allclose(R.binomial(k, 7, dev(np.array([0.0, 1.0]))), np.array([0.0, 7.0]))
    assert_allclose(R.binomial(k, 0, 0.5, (2,)), np.zeros(2))
    # JAX loops forever on inf trials with p 0 or 1; here they give inf like other inf counts
    assert_allclose(R.binomial(k, np.inf, dev(np.array([0.0, 1.0, 0.3]))), np.full(3, np.inf))
    assert host(R.binomial(k, 10, 0.3, dtype=np.float32)).dtype == np.float32
    f = funcgrad.jit(lambda k: R.binomial(k, 100, 0.4, (3,)))
    assert_allclose(f(k), R.binomial(k, 100, 0.4, (3,)))
    assert funcgrad.vmap(lambda k: R.binomial(k, 30, 0.5, (2,)))(R.split(k, 3)).shape == (3, 2)


def test_categorical_without_replacement_equals_jax() -> None:
    # jax.random.categorical(PRNGKey(3), L, shape=(4, 3), replace=False): every column a
    # permutation of the 4 categories (Gumbel-top-k), bit-identical (uniform bits, argsort)
    logits = dev(np.log(np.array([[0.1, 0.2, 0.3, 0.4], [0.4, 0.3, 0.2, 0.1],
                                  [0.25, 0.25, 0.25, 0.25]])))
    got = R.categorical(dev(R.PRNGKey(3)), logits, shape=(4, 3), replace=False)
    assert_allclose(got, np.array([[0, 2, 0], [1, 1, 1], [3, 0, 3], [2, 3, 2]], np.int32))
    # JAX's indices without replacement are int32 (from top_k); with replacement int64 (x64)
    assert got.dtype == np.int32
    assert R.categorical(dev(R.PRNGKey(3)), logits, shape=(4, 3)).dtype == np.int64
    x = np.asarray(host(R.categorical(dev(R.PRNGKey(5)), logits[0], shape=(2,),
                                      replace=False)))
    assert x.shape == (2,) and x[0] != x[1]
    with pytest.raises(ValueError, match="cannot exceed"):
        R.categorical(dev(R.PRNGKey(0)), logits, shape=(5, 3), replace=False)
    with pytest.raises(ValueError, match="mode"):
        R.categorical(dev(R.PRNGKey(0)), logits, mode="top")
    # first draws without replacement follow the softmax, like draws with it
    first = np.asarray(host(funcgrad.vmap(lambda k: R.categorical(
        k, logits[0], shape=(2,), replace=False)[0])(R.split(dev(R.PRNGKey(9)), N))))
    assert_allclose(np.bincount(first, minlength=4) / N, np.array([0.1, 0.2, 0.3, 0.4]),
                    atol=0.03)


def test_jax_keywords_impl_and_mode() -> None:
    k = R.PRNGKey(0, impl="threefry2x32")
    assert_allclose(k, R.PRNGKey(0))
    assert_allclose(R.key_data(R.key(3, impl=None)), R.PRNGKey(3))
    assert_allclose(R.key_data(R.wrap_key_data(k, impl="threefry2x32")), k)
    k = dev(k)
    assert_allclose(R.bernoulli(k, 0.3, (4,), mode="low"), R.bernoulli(k, 0.3, (4,)))
    assert_allclose(R.gumbel(k, (2,), mode="low"), R.gumbel(k, (2,)))
    assert_allclose(R.choice(k, 5, (2,), mode="low"), R.choice(k, 5, (2,)))
    with pytest.raises(ValueError, match="unknown PRNG implementation impl='philox'"):
        R.PRNGKey(0, impl="philox")
    for call in (lambda: R.gumbel(k, mode="top"), lambda: R.bernoulli(k, mode="highest"),
                 lambda: R.choice(k, 3, mode="top")):
        with pytest.raises(ValueError, match="mode must be one of"):
            call()


def test_high_precision_modes_equal_jax() -> None:
    # jax.random.<f>(PRNGKey(42), ..., mode=...) with x64, JAX 0.10.2: 'high' draws two
    # uniforms per value, 'highest' (float32) 64 random bits in fixed point
    k = dev(R.PRNGKey(42))
    for mode, f32, f64 in [
        ("high", [0.39925798773765564, -0.12997561693191528, 0.043095413595438004,
                  0.1944437325000763],
         [0.5862781993145612, 4.191481602167404, 0.15822814885001754]),
        ("highest", [0.3992578089237213, -0.129975825548172, 0.04309510067105293,
                     0.19444338977336884],
         [0.5862781993145612, 4.191481602167404, 0.15822814885001754]),
    ]:
        g = R.gumbel(k, (4,), np.float32, mode=mode)
        assert host(g).dtype == np.float32
        assert_allclose(g, np.array(f32, np.float32), rtol=2e-6, atol=1e-6)
        assert_allclose(R.gumbel(k, (3,), mode=mode), np.array(f64), rtol=1e-12)
    p = dev(np.tile(np.array([1e-9, 3e-8, 0.3, 0.7, 1 - 1e-8], np.float32), 4))
    assert_allclose(R.bernoulli(dev(R.PRNGKey(1)), p, mode="high"),
                    np.array([0, 0, 0, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1, 0, 0, 1, 0, 1],
                             bool))
    logits = dev(np.log(np.array([0.2, 0.3, 0.5], np.float32)))
    assert_allclose(R.categorical(k, logits, shape=(8,), mode="high"),
                    np.array([2, 2, 0, 1, 2, 2, 0, 1]))
    assert_allclose(R.choice(k, 5, (3,), replace=False,
                             p=dev(np.array([0.1, 0.2, 0.3, 0.2, 0.2])), mode="highest"),
                    np.array([1, 2, 0]))
    # the point of 'highest': float32 Gumbel tails beyond what one 23-bit uniform reaches
    # (-log(-log(1 - 2**-24)) = 16.6), still Gumbel-distributed
    x = np.asarray(host(R.gumbel(dev(R.PRNGKey(7)), (200000,), np.float32, mode="highest")))
    assert x.max() > 17.0
    assert abs(x.mean() - np.euler_gamma) < 0.01 and abs(x.var() - np.pi ** 2 / 6) < 0.03


def test_multinomial() -> None:
    k = dev(R.PRNGKey(0))
    p = np.array([0.2, 0.3, 0.5])
    c = np.asarray(host(R.multinomial(k, 10, dev(p), shape=(N, 3))))  # JAX: the whole shape
    assert c.shape == (N, 3) and c.dtype == np.float64
    assert (c.sum(-1) == 10).all() and (c >= 0).all()
    assert_allclose(c.mean(0), 10 * p, atol=0.1)
    assert_allclose(c.var(0), 10 * p * (1 - p), rtol=0.1)
    cov01 = np.cov(c[:, 0], c[:, 1])[0, 1]
    assert abs(cov01 - (-10 * p[0] * p[1])) < 0.1
    got = R.multinomial(k, dev(np.array([5.0, 100.0])), dev(np.array([[0.5, 0.5], [0.1, 0.9]])))
    assert got.shape == (2, 2)
    assert_allclose(host(got).sum(-1), np.array([5.0, 100.0]))
    assert R.multinomial(k, 10, dev(p)).shape == (3,)
    assert_allclose(funcgrad.jit(lambda k: R.multinomial(k, 7, dev(p)))(k),
                    R.multinomial(k, 7, dev(p)))
    with pytest.raises(ValueError, match="categories"):
        R.multinomial(k, 10, dev(p), shape=(5,))


def test_orthogonal_wide_as_jax() -> None:
    # jax.random.orthogonal(PRNGKey(5), 2, m=4): a (2, 4) matrix with orthonormal rows (it
    # was (2, 2) here: the QR of the wide Gaussian)
    q = R.orthogonal(dev(R.PRNGKey(5)), 2, m=4)
    assert_allclose(q, np.array(
        [[0.17024913578816991, 0.48677748597501685, -0.4013661727900193, -0.7569465676328258],
         [-0.9557240371360926, 0.10275784635889879, -0.27572675419790693,
          -0.0026733633230001663]]), rtol=1e-9, atol=1e-12)
    q = np.asarray(host(R.orthogonal(dev(R.PRNGKey(1)), 3, (2,), m=5)))
    assert q.shape == (2, 3, 5)
    assert_allclose(q @ np.swapaxes(q, -1, -2), np.broadcast_to(np.eye(3), (2, 3, 3)),
                    atol=1e-12)


def test_binomial_multinomial_mvn_compute_dtype_as_jax():
    # JAX 0.10.2 (x64), key(0): binomial/multinomial compute in the parameters' inexact dtype
    # and cast to dtype at the end; multivariate_normal draws in the mean's dtype
    k = dev(R.key(0))
    got = R.binomial(k, 10.0, 0.3, (3,), np.float32)
    assert got.dtype == np.float32 and np.asarray(host(got)).tolist() == [4.0, 1.0, 3.0]
    got = R.multinomial(k, 10.0, dev(np.array([0.2, 0.3, 0.5])), dtype=np.float32)
    assert got.dtype == np.float32 and np.asarray(host(got)).tolist() == [1.0, 4.0, 5.0]
    got = R.multinomial(k, np.float32(10.0), dev(np.array([0.2, 0.3, 0.5], np.float32)))
    assert got.dtype == np.float64 and np.asarray(host(got)).tolist() == [1.0, 1.0, 8.0]
    cov = np.array([[2.0, 0.5], [0.5, 1.0]], np.float32)
    got = R.multivariate_normal(k, dev(np.zeros(2, np.float32)), dev(cov), (2,))
    assert got.dtype == np.float32
    np.testing.assert_allclose(np.asarray(host(got)), [[2.2948, 2.4682], [-0.6132, -0.2268]],
                               atol=1e-4)
