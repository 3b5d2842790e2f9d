"""SciPy's distribution methods beyond the densities (mean, var, std, stats, entropy,
median, interval, support) and frozen distributions: SciPy 1.17's values as literals."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev

import funcgrad
import funcgrad.scipy.stats as fst

# name, shapes, mean, var, entropy with loc=0.4, scale=1.7 (scipy.stats)
_CONTINUOUS = [
    ("t", (3.5,), 0.4, 6.743333333333333, 2.251518371744637),
    ("chi2", (4.5,), 8.049999999999999, 26.009999999999998, 2.882964063234844),
    ("gamma", (2.5,), 4.65, 7.225, 2.2605761605672248),
    ("beta", (2.0, 3.5), 1.018181818181818, 0.10288620470438653, 0.2319379691150819),
    ("lognorm", (0.7,), 2.571956232448307, 2.9828846635049695, 1.5928918403281105),
    ("f", (3.0, 7.0), 2.78, 10.070044444444443, 1.8282021180793766),
    ("pareto", (2.5,), 3.2333333333333334, 6.422222222222222, 1.014337519188015),
    ("gennorm", (1.5,), 0.4, 2.1342306425865636, 1.7881272653281415),
    ("weibull_min", (1.7,), 1.9168156542488508, 0.8434604507405173, 1.2376770384888665),
    ("truncnorm", (-1.0, 2.0), 0.7903832044552593, 1.502113738321333, None),
    ("gumbel_l", (), -0.5812666303326058, 4.7538594531913745, 2.107843915963703),
    ("rayleigh", (), 2.53063403343635, 1.2403986155627489, 1.472662493232964),
]
# name, shapes, mean, var with loc=1
_DISCRETE = [
    ("poisson", (3.5,), 4.5, 3.5),
    ("binom", (10, 0.3), 4.0, 2.1),
    ("nbinom", (4, 0.4), 6.999999999999999, 14.999999999999996),
    ("geom", (0.3,), 4.333333333333334, 7.777777777777779),
    ("betabinom", (10, 2.0, 3.0), 5.0, 6.0),
]


@pytest.mark.parametrize("name, shapes, mean, var, ent", _CONTINUOUS)
def test_continuous_moments_and_entropy(name, shapes, mean, var, ent):
    dist = getattr(fst, name)
    kw = {"loc": 0.4, "scale": dev(np.array(1.7))}
    assert_allclose(dist.mean(*shapes, **kw), mean, rtol=1e-12)
    assert_allclose(dist.var(*shapes, **kw), var, rtol=1e-12)
    assert_allclose(dist.std(*shapes, **kw), np.sqrt(var), rtol=1e-12)
    if ent is not None:
        assert_allclose(dist.entropy(*shapes, **kw), ent, rtol=1e-12)


@pytest.mark.parametrize("name, shapes, mean, var", _DISCRETE)
def test_discrete_moments(name, shapes, mean, var):
    m, v = getattr(fst, name).stats(*shapes, loc=1)
    assert_allclose(m, mean, rtol=1e-13)
    assert_allclose(v, var, rtol=1e-13)


def test_intervals_medians_supports_and_edges():
    lo, hi = fst.t.interval(0.9, 3.5, loc=0.4, scale=1.7)
    assert_allclose(np.array([float(lo), float(hi)]),
                    np.array([-3.3781369392043215, 4.178136939204321]), rtol=1e-10)
    lo, hi = fst.binom.interval(0.9, 10, 0.3)
    assert (float(lo), float(hi)) == (1.0, 5.0)
    assert_allclose(fst.expon.median(scale=2.0), 1.3862943611198906, rtol=1e-14)
    lo, hi = fst.beta.support(2.0, 3.0, loc=1.0, scale=2.0)
    assert (float(lo), float(hi)) == (1.0, 3.0)
    # SciPy: infinite moments where they diverge, nan for invalid parameters
    assert float(fst.t.mean(0.8)) == np.inf and float(fst.t.var(1.5)) == np.inf
    assert float(fst.f.var(3.0, 4.0)) == np.inf and float(fst.pareto.mean(0.5)) == np.inf
    assert_allclose(fst.norm.mean(loc=dev(np.array([1.0, 2.0])), scale=-1.0),
                    np.array([np.nan, np.nan]))
    assert_allclose(fst.gamma.var(-1.0), np.nan)
    assert np.isnan(np.asarray(fst.norm.interval(1.5)[0].tolist()))
    with pytest.raises(ValueError, match="moments"):
        fst.norm.stats(moments="mvsk")


def test_frozen_distributions():
    rv = fst.norm(1.0, 2.0)
    lo, hi = rv.interval(0.5)
    assert_allclose(np.array([float(lo), float(hi)]),
                    np.array([-0.3489795003921634, 2.348979500392163]), rtol=1e-12)
    assert_allclose(rv.cdf(1.0), 0.5)
    assert repr(rv) == "norm(1.0, 2.0)"
    g = fst.gamma(2.0, scale=3.0)
    assert_allclose(g.pdf(1.0), 0.07961459006375436, rtol=1e-13)
    assert_allclose(fst.multivariate_normal(np.zeros(2), np.eye(2)).logpdf(np.ones(2)),
                    -2.8378770664093453, rtol=1e-14)
    # differentiable and jit-safe through the frozen parameters
    assert_allclose(funcgrad.grad(lambda s: fst.norm(0.0, s).entropy())(2.0), 0.5)
    assert_allclose(funcgrad.jit(lambda m: fst.t(3.0, loc=m).mean())(1.5), 1.5)
    with pytest.raises(TypeError, match="at most 2 parameters"):
        fst.norm(1.0, 2.0, 3.0)
    with pytest.raises(TypeError, match="missing shape"):
        fst.t()
    with pytest.raises(AttributeError):
        fst.vonmises(1.0).var()


def test_closed_form_fits():
    x = np.array([1.2, 0.3, 2.5, 1.9, 0.7, 3.3])
    # scipy.stats.<dist>.fit(x, ...) -> (loc, scale)
    want = {
        ("norm", None, None): (1.6500000000000001, 1.035615758860399),
        ("norm", 1.0, None): (1.0, 1.2227019260637484),
        ("expon", None, None): (0.3, 1.35),
        ("expon", 0.0, None): (0.0, 1.6500000000000001),
        ("uniform", None, None): (0.3, 3.0),
        ("uniform", None, 5.0): (-0.7, 5.0),
        ("laplace", None, None): (1.5499999999999998, 0.9166666666666666),
        ("laplace", 1.0, None): (1.0, 0.9833333333333333),
    }
    for (name, floc, fscale), (loc, scale) in want.items():
        got = getattr(fst, name).fit(dev(x), floc=floc, fscale=fscale)
        assert_allclose(np.array([float(v) for v in got]), np.array([loc, scale]), rtol=1e-13)
    with pytest.raises(ValueError, match="nothing to optimize"):
        fst.norm.fit(x, floc=0.0, fscale=1.0)
    g = funcgrad.grad(lambda d: fst.norm.fit(d)[0])(dev(x))
    assert_allclose(g, np.full(6, 1 / 6), rtol=1e-13)
