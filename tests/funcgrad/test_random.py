"""funcgrad.random: the Threefry hash against Random123's known answers, bit-compatibility with
JAX's ``jax.random`` (``jax_enable_x64``, partitionable threefry; reference values recorded from
JAX 0.10), jit/vmap/grad behaviour, statistics against SciPy with fixed keys, and errors."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as st

import funcgrad
from funcgrad import random as R
from funcgrad.test_util import check_grads
from tests.helpers import assert_allclose, dev, host

KEY0 = dev(R.PRNGKey(0))
KEY1 = dev(R.PRNGKey(1))


def h(x):
    return np.asarray(host(x))


# ---------------------------------------------------------------------------------------------
# The hash and the key functions


@pytest.mark.parametrize("ctr,key,expected", [
    ((0x00000000, 0x00000000), (0x00000000, 0x00000000), (0x6B200159, 0x99BA4EFE)),
    ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
    ((0x243F6A88, 0x85A308D3), (0x13198A2E, 0x03707344), (0xC4923A9C, 0x483DF7A0)),
])
def test_threefry2x32_20_known_answers(ctr, key, expected) -> None:
    out = R.threefry_2x32(dev(np.array(key, np.uint32)), dev(np.array(ctr, np.uint32)))
    assert h(out).tolist() == list(expected)


def test_threefry_odd_count_and_jit() -> None:
    k = dev(np.array([1, 2], np.uint32))
    c = dev(np.arange(5, dtype=np.uint32))
    want = [2052595727, 3504730591, 2527474599, 1880214352, 1914734168]
    assert h(R.threefry_2x32(k, c)).tolist() == want
    assert h(funcgrad.jit(R.threefry_2x32)(k, c)).tolist() == want


def test_keys_match_jax() -> None:
    assert h(R.PRNGKey(0)).dtype == np.uint32
    assert h(R.PRNGKey(42)).tolist() == [0, 42]
    assert h(R.key_data(R.key(-1))).tolist() == [4294967295, 4294967295]
    assert h(R.PRNGKey(2 ** 40 + 3)).tolist() == [256, 3]
    assert h(R.PRNGKey(np.int32(-1))).tolist() == [0, 4294967295]
    assert h(R.key_data(KEY0)).tolist() == [0, 0]
    assert h(funcgrad.jit(R.PRNGKey)(np.int64(2 ** 40 + 3))).tolist() == [256, 3]


def test_split_fold_in_bits_match_jax() -> None:
    assert h(R.split(KEY0)).tolist() == [[1797259609, 2579123966], [928981903, 3453687069]]
    s = h(R.split(dev(R.PRNGKey(42)), (2, 3)))
    assert s.shape == (2, 3, 2) and s[1, 2].tolist() == [2765691542, 824333390]
    assert h(R.fold_in(KEY0, 1)).tolist() == [928981903, 3453687069]
    assert h(R.fold_in(dev(R.PRNGKey(42)), 2 ** 31 + 5)).tolist() == [4006827317, 911798682]
    assert h(R.bits(KEY1, (5,), np.uint32)).tolist() == [
        1883912375, 2292451390, 1915204986, 1882898417, 3854144420]
    assert h(R.bits(KEY1, (3,))).tolist() == [
        2179487362436112514, 8370371427069427784, 10487943526538222699]
    assert h(R.bits(KEY1, (5,), np.uint8)).tolist() == [183, 62, 122, 241, 164]
    assert h(R.bits(KEY1, (3,), np.uint16)).tolist() == [14519, 2110, 46458]


def test_fold_in_traced_data_and_split_under_jit() -> None:
    f = funcgrad.jit(lambda k, d: R.fold_in(k, d))
    assert h(f(KEY0, np.uint32(1))).tolist() == [928981903, 3453687069]
    assert h(funcgrad.jit(lambda k: R.split(k, 2))(KEY0)).tolist() == h(R.split(KEY0)).tolist()


# ---------------------------------------------------------------------------------------------
# Samplers against JAX's values


def test_uniform_bit_exact() -> None:
    assert h(R.uniform(KEY0, (4,))).tolist() == [
        0.41845711171638644, 0.21629545460551136, 0.9653214611189975, 0.5745005337275046]
    x32 = h(R.uniform(KEY1, (3,), np.float32, -2.0, 3.0))
    assert x32.dtype == np.float32
    np.testing.assert_array_equal(x32, np.array([0.19316244, 0.6687646, 0.22959161], np.float32))
    x16 = h(R.uniform(KEY0, (2,), np.float16))
    np.testing.assert_array_equal(x16, np.array([0.3105, 0.2129], np.float16))


def test_transcendental_samplers_match_jax_to_rounding() -> None:
    cases = [
        (R.normal(KEY0, (4,)), [-0.2058421394796434, -0.7847657764467411, 1.8160866726679836,
                                0.1878440128937887]),
        (R.truncated_normal(KEY0, -1.0, 2.0, (4,)), [0.00301295124756838, -0.4241902151456523,
                                                     1.6339202640360784, 0.32904270893046433]),
        (R.gumbel(KEY0, (3,)), [0.13790565977540292, -0.4259929367942607, 3.344039105585023]),
        (R.exponential(KEY0, (3,)), [0.5420705551711603, 0.24372318502372997,
                                     3.3616342594163338]),
        (R.laplace(KEY0, (3,)), [0.17803369470862349, 0.8379627799904482, -2.66848707885639]),
        (R.logistic(KEY0, (3,)), [-0.3291103200974086, -1.2873867755266637, 3.3263401466314915]),
        (R.cauchy(KEY0, (3,)), [-0.2619295066536063, -1.2378460184296847, 9.142528431003585]),
        (R.gamma(KEY0, dev(np.array([0.5, 1.0, 2.5, 10.0]))),
         [0.098053686796323, 0.348527324233395, 4.442491722277749, 4.797239777122469]),
        (R.loggamma(KEY0, dev(np.array([0.5, 1e-3]))), [-2.322240125860324, -2280.535757981586]),
        (R.beta(KEY0, 2.0, 3.0, (3,)), [0.327956065114214, 0.613809008476698, 0.760134212265736]),
        (R.multivariate_normal(KEY0, dev(np.array([1.0, 2.0])),
                               dev(np.array([[2.0, 0.5], [0.5, 1.0]])), (2,)),
         [[0.708895254639994, 1.1931426475776643], [3.5683344029320905, 2.8177955853343484]]),
    ]
    for got, want in cases:
        assert_allclose(got, np.array(want), rtol=1e-13, atol=1e-14)
    z = h(R.normal(KEY0, (2,), np.complex128))
    np.testing.assert_allclose(z, [1.329381886098021 - 0.9905746487658766j,
                                   -0.34027037111235725 + 1.0126794395709957j], rtol=1e-13)


@pytest.mark.parametrize("name,args,want", [
    ("normal", (), [-1.203125, -0.7392578125, -1.64453125, -0.53271484375]),
    ("truncated_normal", (-1.0, 1.0), [-0.716796875, -0.48095703125, -0.86767578125,
                                      -0.35498046875]),
    ("gamma", (2.0,), [0.7001953125, 0.953125, 1.6865234375, 2.7421875]),
    ("beta", (2.0, 3.0), [0.6357421875, 0.35546875, 0.87353515625, 0.2091064453125]),
    ("lognormal", (0.5,), [0.5478515625, 0.69091796875, 0.439453125, 0.76611328125]),
])
def test_float16_samplers_match_jax(name, args, want) -> None:
    """dtype=float16 draws stay float16 (erf/erfinv compute it in a wider type), JAX's values
    (JAX 0.10, PRNGKey(3))."""
    got = getattr(R, name)(R.PRNGKey(3), *args, shape=(4,), dtype=np.float16)
    assert got.dtype == np.float16
    np.testing.assert_allclose(h(got).astype(np.float32), want, rtol=2e-3)


def test_discrete_samplers_bit_exact() -> None:
    assert h(R.bernoulli(KEY0, 0.3, (8,))).tolist() == [False, True] + [False] * 6
    assert h(R.randint(KEY0, (6,), 0, 10)).tolist() == [5, 1, 5, 7, 3, 5]
    u8 = h(R.randint(KEY1, (6,), -5, 200, np.uint8))
    assert u8.dtype == np.uint8 and u8.tolist() == [196, 127, 40, 153, 168, 84]
    lo, hi = dev(np.array([0, 10, 100])), dev(np.array([5, 20, 2 ** 40]))
    assert h(R.randint(KEY1, (3,), lo, hi)).tolist() == [3, 15, 224515975567]
    logits = dev(np.log(np.array([0.1, 0.2, 0.7])))
    assert h(R.categorical(KEY0, logits, shape=(8,))).tolist() == [2, 2, 2, 1, 1, 2, 1, 2]
    assert h(R.permutation(KEY0, 10)).tolist() == [0, 1, 8, 5, 6, 4, 3, 2, 7, 9]
    x = dev(np.arange(12).reshape(3, 4))
    assert h(R.permutation(KEY1, x, 1)).tolist() == [[3, 2, 0, 1], [7, 6, 4, 5], [11, 10, 8, 9]]
    assert h(R.permutation(KEY1, x, 1, True)).tolist() == [
        [3, 2, 0, 1], [7, 6, 5, 4], [8, 10, 9, 11]]
    p = dev(np.array([0.1, 0.2, 0.3, 0.2, 0.2]))
    assert h(R.choice(KEY0, 10, (5,))).tolist() == [5, 1, 5, 7, 3]
    assert h(R.choice(KEY0, dev(np.arange(10) * 10), (5,), replace=False)).tolist() == [
        0, 10, 80, 50, 60]
    assert h(R.choice(KEY0, 5, (6,), p=p)).tolist() == [2, 3, 0, 2, 2, 3]
    assert h(R.choice(KEY0, 5, (3,), replace=False, p=p)).tolist() == [2, 3, 4]
    assert h(R.poisson(KEY0, dev(np.array([0.5, 3.0, 0.0, 25.0, 100.0])))).tolist() == [
        0, 0, 0, 30, 90]


# ---------------------------------------------------------------------------------------------
# Transformations


def test_bernoulli_p_outside_unit_interval_as_jax() -> None:
    """JAX 0.10.2 draws ``uniform < p`` without checking p: above 1 always, below 0 or NaN
    never (eager and under jit alike)."""
    p = dev(np.array([0.2, 1.3, -1.0, np.nan]))
    want = [False, True, False, False]  # jax.random.bernoulli(jax.random.key(0), p)
    assert h(R.bernoulli(KEY0, p)).tolist() == want
    assert h(funcgrad.jit(lambda k, q: R.bernoulli(k, q))(KEY0, p)).tolist() == want
    assert h(R.bernoulli(KEY0, 1.5, (3,))).tolist() == [True] * 3


def test_vmap_over_keys_equals_loop() -> None:
    keys = R.split(KEY0, 5)
    fns = [lambda k: R.normal(k, (3,)), lambda k: R.randint(k, (2,), 0, 7),
           lambda k: R.permutation(k, 4), lambda k: R.split(k, 2), lambda k: R.fold_in(k, 3)]
    for f in fns:
        batched = h(funcgrad.vmap(f)(keys))
        loop = np.stack([h(f(keys[i])) for i in range(5)])
        np.testing.assert_array_equal(batched, loop)


def test_jit_equals_eager() -> None:
    f = funcgrad.jit(lambda k, lo: R.uniform(k, (4,), minval=lo, maxval=2.0) + R.normal(k, (4,)))
    assert_allclose(f(KEY0, 0.5), R.uniform(KEY0, (4,), minval=0.5, maxval=2.0)
                    + R.normal(KEY0, (4,)))
    g = funcgrad.jit(lambda k: R.gamma(k, 1.5, (2,)))
    assert_allclose(g(KEY1), R.gamma(KEY1, 1.5, (2,)))


def test_gamma_under_vmap_of_keys() -> None:
    keys = R.split(KEY1, 2)
    batched = funcgrad.vmap(lambda k: R.gamma(k, 0.7, (2,)))(keys)
    loop = np.stack([h(R.gamma(keys[i], 0.7, (2,))) for i in range(2)])
    assert_allclose(batched, loop, rtol=1e-14)


def test_reparameterised_gradients() -> None:
    check_grads(lambda lo, hi: R.uniform(KEY0, (3,), minval=lo, maxval=hi), (-1.0, 2.0), order=2)
    check_grads(lambda lo, hi: R.truncated_normal(KEY0, lo, hi, (3,)), (-1.0, 0.5), order=1)
    mean, cov = dev(np.array([1.0, -1.0])), dev(np.array([[2.0, 0.3], [0.3, 1.0]]))
    # cholesky differentiates as a function of a symmetric matrix: check along symmetric
    # directions (finite differences of c + c.T).
    check_grads(lambda m, c: R.multivariate_normal(KEY0, m, (c + c.T) / 2, (2,)), (mean, cov),
                order=1, modes=("rev",))
    g = funcgrad.grad(lambda lo: R.uniform(KEY0, (), minval=lo, maxval=3.0))(1.0)
    u = h(R.uniform(KEY0, ()))
    assert_allclose(g, np.asarray(1.0 - u))


@pytest.mark.parametrize("a,want", [(0.4, 1.9720957768606522), (3.0, 1.1904849455742335)])
def test_gamma_implicit_gradient(a, want) -> None:
    # The implicit reparameterisation gradient -(dP/da) / p(x; a), as JAX's (values from JAX).
    f = lambda al: R.gamma(KEY1, al)  # noqa: E731
    np.testing.assert_allclose(h(funcgrad.grad(f)(a)), want, rtol=1e-9)
    # d/da E[x] = d/da a = 1: the mean of the per-sample gradients.
    g = funcgrad.grad(lambda al: R.gamma(KEY1, al, (400,)).mean())(a)
    assert abs(float(h(g)) - 1.0) < 0.1


def test_beta_gradient_matches_jax() -> None:
    db = funcgrad.grad(lambda al: R.beta(KEY1, al, 2.0))(0.4)
    np.testing.assert_allclose(h(db), 0.38801420004844334, rtol=1e-9)


# ---------------------------------------------------------------------------------------------
# Statistics (fixed keys: deterministic)

N = 4000


@pytest.mark.parametrize("name,draw,cdf", [
    ("uniform", lambda k: R.uniform(k, (N,), minval=-1.0, maxval=3.0),
     st.uniform(-1, 4).cdf),
    ("normal", lambda k: R.normal(k, (N,)), st.norm.cdf),
    ("normal32", lambda k: R.normal(k, (N,), np.float32), st.norm.cdf),
    ("truncated_normal", lambda k: R.truncated_normal(k, -0.5, 1.5, (N,)),
     st.truncnorm(-0.5, 1.5).cdf),
    ("exponential", lambda k: R.exponential(k, (N,)), st.expon.cdf),
    ("gumbel", lambda k: R.gumbel(k, (N,)), st.gumbel_r.cdf),
    ("laplace", lambda k: R.laplace(k, (N,)), st.laplace.cdf),
    ("logistic", lambda k: R.logistic(k, (N,)), st.logistic.cdf),
    ("cauchy", lambda k: R.cauchy(k, (N,)), st.cauchy.cdf),
    ("lognormal", lambda k: R.lognormal(k, 0.5, (N,)), st.lognorm(0.5).cdf),
    ("gamma_small", lambda k: R.gamma(k, 0.3, (800,)), st.gamma(0.3).cdf),
    ("gamma", lambda k: R.gamma(k, 4.0, (800,)), st.gamma(4.0).cdf),
    ("beta", lambda k: R.beta(k, 2.0, 0.5, (800,)), st.beta(2.0, 0.5).cdf),
    ("chisquare", lambda k: R.chisquare(k, 3.0, (800,)), st.chi2(3.0).cdf),
])
def test_ks_against_scipy(name, draw, cdf) -> None:
    x = h(draw(dev(R.PRNGKey(123))))
    assert np.isfinite(x).all()
    assert st.kstest(x, cdf).pvalue > 1e-3, name


def test_discrete_frequencies() -> None:
    k = dev(R.PRNGKey(7))
    x = h(R.randint(k, (N,), 3, 8))
    assert x.min() == 3 and x.max() == 7
    assert st.chisquare(np.bincount(x - 3)).pvalue > 1e-3
    b = h(R.bernoulli(k, dev(np.array([0.1, 0.8])), (N // 2, 2)))
    np.testing.assert_allclose(b.mean(0), [0.1, 0.8], atol=0.04)
    probs = np.array([0.5, 0.3, 0.2])
    c = h(R.categorical(k, dev(np.log(probs)), shape=(N,)))
    assert st.chisquare(np.bincount(c, minlength=3), probs * N).pvalue > 1e-3
    ch = h(R.choice(k, 3, (N,), p=dev(probs)))
    assert st.chisquare(np.bincount(ch, minlength=3), probs * N).pvalue > 1e-3
    lam = 4.0
    pz = h(R.poisson(k, lam, (N,)))
    assert abs(pz.mean() - lam) < 0.2 and abs(pz.var() - lam) < 0.5
    pz = h(R.poisson(k, 40.0, (N,)))
    assert abs(pz.mean() - 40) < 0.7 and abs(pz.var() - 40) < 4
    r = h(R.rademacher(k, (N,)))
    assert set(r.tolist()) == {-1, 1} and abs(r.mean()) < 0.06


def test_multivariate_dirichlet_orthogonal_permutation() -> None:
    k = dev(R.PRNGKey(3))
    cov = np.array([[2.0, 0.6], [0.6, 1.0]])
    for method in ("cholesky", "eigh", "svd"):
        x = h(R.multivariate_normal(k, dev(np.array([1.0, -2.0])), dev(cov), (N,),
                                    method=method))
        np.testing.assert_allclose(x.mean(0), [1.0, -2.0], atol=0.08)
        np.testing.assert_allclose(np.cov(x.T), cov, atol=0.12)
    alpha = np.array([1.0, 2.0, 5.0])
    d = h(R.dirichlet(k, dev(alpha), (1000,)))
    np.testing.assert_allclose(d.sum(-1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(d.mean(0), alpha / alpha.sum(), atol=0.02)
    q = h(R.orthogonal(k, 4, (2,)))
    np.testing.assert_allclose(q[1].T @ q[1], np.eye(4), atol=1e-12)
    p = h(R.permutation(k, 2000))
    assert sorted(p.tolist()) == list(range(2000)) and not (p == np.arange(2000)).all()
    c = h(R.choice(k, 50, (50,), replace=False))
    assert sorted(c.tolist()) == list(range(50))


def test_different_keys_differ_and_same_key_repeats() -> None:
    a, b = R.split(KEY0)
    assert not np.array_equal(h(R.normal(a, (5,))), h(R.normal(b, (5,))))
    np.testing.assert_array_equal(h(R.normal(a, (5,))), h(R.normal(a, (5,))))


# ---------------------------------------------------------------------------------------------
# Errors


def test_bad_keys() -> None:
    with pytest.raises(TypeError, match="normal: key must have dtype uint32"):
        R.normal(np.array([0, 1]), (2,))
    with pytest.raises(ValueError, match=r"uniform: key must have shape \(2,\).*vmap"):
        R.uniform(R.split(R.PRNGKey(0), 3))
    with pytest.raises(ValueError, match=r"split: key must have shape \(2,\)"):
        R.split(np.zeros(3, np.uint32))
    with pytest.raises(TypeError, match="fold_in: key must be a uint32 array"):
        R.fold_in([0, 1], 2)
    with pytest.raises(TypeError, match="PRNGKey: seed must be an integer"):
        R.PRNGKey(1.5)
    with pytest.raises(OverflowError, match="fold_in"):
        R.fold_in(R.PRNGKey(0), -1)


def test_bad_shapes_dtypes_and_parameters() -> None:
    k = R.PRNGKey(0)
    with pytest.raises(ValueError, match="normal: shape must not have negative"):
        R.normal(k, (-1,))
    with pytest.raises(TypeError, match="uniform: shape must be a tuple"):
        R.uniform(k, "3")
    with pytest.raises(ValueError, match="uniform: shape \\(2,\\) must be broadcast-compatible"):
        R.uniform(k, (2,), minval=np.zeros(3))
    # JAX 0.10.2's exception types and messages
    with pytest.raises(ValueError, match="dtype argument to `uniform` must be a float dtype, got int32"):
        R.uniform(k, (2,), np.int32)
    with pytest.raises(ValueError, match="`uniform` must be a float dtype, got complex64"):
        R.uniform(k, (2,), np.complex64)
    with pytest.raises(ValueError, match="`normal` must be a float or complex dtype, got int32"):
        R.normal(k, (2,), np.int32)
    with pytest.raises(ValueError, match="`exponential` must be a float dtype"):
        R.exponential(k, (2,), np.int32)
    with pytest.raises(ValueError, match="`beta` must be a float dtype"):
        R.beta(k, 1.0, 1.0, (2,), np.int32)
    with pytest.raises(ValueError, match="`geometric` must be an int dtype, got float32"):
        R.geometric(k, 0.5, (2,), np.float32)
    with pytest.raises(ValueError, match="`poisson` must be an int dtype"):
        R.poisson(k, 1.0, (2,), np.float32)
    with pytest.raises(TypeError, match="randint only accepts integer dtypes, got float64"):
        R.randint(k, (2,), 0, 3, np.float64)
    # JAX 0.10.2 refuses integer and bool p (Python ones too) with a TypeError
    for p in (1, True, np.int32(1), np.array([0, 1])):
        with pytest.raises(TypeError, match="bernoulli: probability p must have a floating dtype"):
            R.bernoulli(k, p)
    with pytest.raises(ValueError, match="choice: cannot take a larger sample"):
        R.choice(k, 3, (4,), replace=False)
    with pytest.raises(ValueError, match="choice: probabilities p must be non-negative"):
        R.choice(k, 2, (1,), p=np.array([-0.5, 1.5]))
    with pytest.raises(ValueError, match="choice: p must be None or a 1-D array of length 3"):
        R.choice(k, 3, (1,), p=np.ones(2))
    with pytest.raises(ValueError, match="multivariate_normal: cov must have shape"):
        R.multivariate_normal(k, np.zeros(2), np.eye(3))
    with pytest.raises(funcgrad.ConcretizationError, match="permutation"):
        funcgrad.jit(lambda k, n: R.permutation(k, n))(k, 3)
    with pytest.raises(ValueError, match="dtype argument to `bits` must be an unsigned int dtype"):
        R.bits(k, (2,), np.int32)


def test_poisson_negative_or_nan_rate_is_minus_one() -> None:
    # JAX 0.10.2: poisson(key(0), [-2, 0, 3, nan, 30]) = [-1, 0, 4, -1, 25], eager and jit
    lam = np.array([-2.0, 0.0, 3.0, np.nan, 30.0])
    expected = [-1, 0, 4, -1, 25]
    assert h(R.poisson(R.key(0), dev(lam))).tolist() == expected
    assert h(funcgrad.jit(R.poisson)(R.key(0), dev(lam))).tolist() == expected
    assert int(R.poisson(R.key(0), -1.0)) == -1


def test_no_overflow_warnings() -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        R.threefry_2x32(np.array([0xFFFFFFFF] * 2, np.uint32), np.array([0xFFFFFFFF] * 2,
                                                                         np.uint32))
        R.randint(R.PRNGKey(5), (50,), -(2 ** 63), 2 ** 63 - 1)
        R.randint(R.PRNGKey(5), (50,), 0, 256, np.uint8)


def test_zero_probabilities_and_shapes_draw_without_warnings() -> None:
    """choice(replace=False) with zero probabilities, and gamma/beta/dirichlet/chisquare at
    a zero (or invalid) shape, give JAX 0.10.2's draws (key(1)) and no NumPy warnings."""
    import warnings

    k = dev(R.key(1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = dev(np.array([0.0, 0.5, 0.5]))
        assert h(R.choice(k, 3, (2,), replace=False, p=p)).tolist() == [2, 1]
        assert h(R.choice(KEY0, 10, (4,), replace=False, p=dev(np.arange(10.0) / 45))).tolist() \
            == [2, 6, 7, 8]
        g = h(R.gamma(k, dev(np.array([0.0, -1.0]))))
        assert g[0] == 0.0 and np.isnan(g[1])
        assert float(h(R.beta(k, 0.0, 1.0))) == 0.0
        assert h(R.dirichlet(k, dev(np.array([0.0, 1.0])))).tolist() == [0.0, 1.0]
        assert h(R.chisquare(k, 0.0, (3,))).tolist() == [0.0, 0.0, 0.0]


def test_counts_past_the_integer_range_saturate_as_jax() -> None:
    """poisson/geometric draws too large for the integer dtype are its maximum, as JAX
    0.10.2's convert (NumPy's cast wrapped them to the minimum); key(1)."""
    import warnings

    k = dev(R.key(1))
    i32max, i64max = 2 ** 31 - 1, 2 ** 63 - 1
    lam = dev(np.array([np.inf, np.nan, 1e30, 5.0]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # lam = inf, NaN: JAX's 0 and -1
        assert h(R.poisson(k, lam, dtype=np.int32)).tolist() == [0, -1, i32max, 3]
        assert h(R.poisson(k, lam)).tolist() == [0, -1, i64max, 3]
        p = dev(np.array([0.0, 1e-300, 1.0]))
        assert h(R.geometric(k, p, dtype=np.int32)).tolist() == [i32max, i32max, 1]
        assert h(R.geometric(k, p, dtype=np.uint8)).tolist() == [255, 255, 1]
        assert h(R.geometric(k, dev(np.array([0.0, 1.0, 0.5])))).tolist() == [i64max, 1, 1]


def test_randint_float_bounds_convert_as_jax() -> None:
    # JAX 0.10.2 (key(1)): float bounds truncate and saturate (NaN 0, inf and 1e30 int64's
    # max), eagerly and traced; NumPy's cast wrapped them to garbage
    k = dev(R.key(1))
    lo = np.array([0.0, np.nan, 1e30])
    assert h(R.randint(k, (3,), dev(lo), 5)).tolist() == [3, 0, 2 ** 63 - 1]
    hi = np.array([np.inf, 3.7, -2.5])
    want = [4850916249322173533, 1, 0]
    assert h(R.randint(k, (3,), 0, dev(hi))).tolist() == want
    assert h(funcgrad.jit(lambda b: R.randint(k, (3,), 0, b))(dev(hi))).tolist() == want
    assert h(R.randint(k, (2,), float("nan"), 1)).tolist() == [0, 0]   # Python floats too


def test_a_key_from_a_python_seed_goes_to_the_default_device() -> None:
    # as every array made from Python data: a sampler's draws then meet the default device's
    # arrays (on the GPU, jax.random.PRNGKey(0) used with jnp arrays)
    from funcgrad.backend import device_of

    with funcgrad.default_device("strict"):
        key = R.PRNGKey(0)
        assert device_of(key) == "strict" and device_of(R.key_data(R.key(3))) == "strict"
        w = R.normal(key, (2,)) * funcgrad.numpy.ones(2)
        assert device_of(w) == "strict"
    assert device_of(R.PRNGKey(0)) == funcgrad.backend.get_default_device()


def test_traced_shape_is_a_concretization_error_naming_it():
    # JAX raises its TypeError "Shapes must be 1D sequences of concrete values of integer
    # type"; ours is the ConcretizationError (a TypeError) fnp.zeros gives, naming the argument
    key = R.PRNGKey(0)
    with pytest.raises(funcgrad.errors.ConcretizationError,
                       match=r"normal: the shape needs a concrete value.*from argument n"):
        funcgrad.jit(lambda n: R.normal(key, (n,)))(3)
    with pytest.raises(TypeError, match=r"uniform: the shape needs a concrete value"):
        funcgrad.jit(lambda n: R.uniform(key, n))(3)
    with pytest.raises(TypeError, match=r"shape must be a tuple of Python ints, got \(2.0,\)"):
        R.normal(key, (2.0,))
    assert funcgrad.jit(lambda k: R.normal(k, (3,)))(key).shape == (3,)


def test_degenerate_parameters_give_jax_values_without_warnings() -> None:
    """Degenerate shapes/rates draw JAX 0.10.2's values (key(0), x64) without NumPy's
    warnings, eagerly and under jit; a gamma draw of 0 (tiny a) has derivative 0."""
    import warnings

    k = dev(R.key(0))
    cases = [
        (lambda a: R.beta(k, a, a, (2,)), [np.nan, np.nan]),
        (lambda a: R.dirichlet(k, funcgrad.numpy.stack([a, a])), [np.nan, np.nan]),
        (lambda a: R.t(k, a, (2,)), [np.nan, np.nan]),
        (lambda a: R.geometric(k, 1.0 - a, (2,)), [1, 1]),
        (lambda a: R.geometric(k, a, (2,)), [2 ** 63 - 1] * 2),
        (lambda a: R.pareto(k, a, (2,)), [np.inf, np.inf]),
        (lambda a: R.weibull_min(k, 1.0, a, (2,)), [0.0, 0.0]),
        (lambda a: R.wald(k, a, (2,)), [np.nan, np.nan]),
        (lambda a: R.triangular(k, a, a, a, (2,)), [0.0, 0.0]),
        (lambda a: funcgrad.grad(lambda b: R.gamma(k, b))(a + 1e-3), 0.0),
    ]
    zero = dev(np.float64(0.0))
    # under jit too (one compile; the gamma-based samplers compile slowly)
    staged = cases[3:9]
    both = funcgrad.jit(lambda a: [f(a) for f, _ in staged])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for f, want in cases:
            np.testing.assert_array_equal(h(f(zero)), np.array(want))
        for (_, want), got in zip(staged, both(zero)):
            np.testing.assert_array_equal(h(got), np.array(want))


def test_threefry_partitionable_off_is_jaxs_original_layout() -> None:
    # JAX 0.10.2 (x64) with jax_threefry_partitionable=False (JAX's layout before 0.5)
    k = dev(R.key(0))
    with funcgrad.config.flag_scope("jax_threefry_partitionable", False):
        assert h(R.key_data(R.split(k))).tolist() == [[4146024105, 967050713],
                                                      [2718843009, 1272950319]]
        assert h(R.key_data(R.split(k, (2, 2))))[1].tolist() == [[433833334, 4221794875],
                                                                 [839183663, 3740430601]]
        assert h(R.split(dev(R.PRNGKey(7)), 3))[2].tolist() == [2900896126, 1402713516]
        assert h(R.key_data(R.fold_in(k, 5))).tolist() == [1524306142, 1887795613]
        assert h(R.bits(k, (5,), np.uint32)).tolist() == [2467461003, 428148500, 1688610540,
                                                         3840466878, 2562233961]
        assert h(R.bits(k, (3,), np.uint64)).tolist() == [
            10597664315880824766, 1838883807893689961, 13686855971547664781]
        assert h(R.bits(k, (5,), np.uint8)).tolist() == [143, 35, 95, 55, 29]
        assert h(R.bits(k, (3,), np.uint16)).tolist() == [9103, 14175, 5405]
        rk = dev(R.PRNGKey(7))
        assert h(R.randint(rk, (4,), 0, 100)).tolist() == [31, 70, 51, 5]
        assert h(R.permutation(rk, 6)).tolist() == [5, 1, 4, 0, 3, 2]
        assert_allclose(R.uniform(rk, (3,)), np.array(
            [0.06438560513366842, 0.20069242680338606, 0.4437196409158861]), rtol=1e-15)
        keys = R.split(k, 2)
        assert h(funcgrad.vmap(lambda kk: R.bits(kk, (3,), np.uint32))(keys)).tolist() == [
            [2384771982, 2983891053, 1278412471], [3746991216, 476962823, 1190051861]]
    assert h(R.key_data(R.split(k)))[0].tolist() == [1797259609, 2579123966]  # on again


def test_gamma_family_second_derivatives_as_jax() -> None:
    # JAX 0.10.2 (x64, key(0)): the implicit derivative d sample / d a is itself
    # differentiated (it was a constant, which made these hessians 0)
    k = dev(R.key(0))
    assert_allclose(funcgrad.hessian(lambda a: R.gamma(k, a))(2.0), 0.03910431502975681,
                    rtol=1e-9)
    # (loggamma's is -0.4007634879409788, beta(a, 3)'s -0.04095761122727838: slower to check)
