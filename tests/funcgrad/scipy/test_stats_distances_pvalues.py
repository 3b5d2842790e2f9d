"""wasserstein_distance, energy_distance, combine_pvalues, false_discovery_control and gstd
against scipy.stats (a test dependency); differentiable and jit-able."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev

import funcgrad
import funcgrad.scipy.stats as fst

ss = pytest.importorskip("scipy.stats")

_RNG = np.random.default_rng(81)
_U, _V = _RNG.standard_normal(20), _RNG.standard_normal(15) + 0.5
_UW, _VW = _RNG.random(20), _RNG.random(15)


@pytest.mark.parametrize("name", ["wasserstein_distance", "energy_distance"])
def test_distances_match_scipy(name):
    f, g = getattr(fst, name), getattr(ss, name)
    assert_allclose(f(dev(_U), dev(_V)), g(_U, _V), rtol=1e-12)
    assert_allclose(f(dev(_U), dev(_V), dev(_UW), dev(_VW)), g(_U, _V, _UW, _VW), rtol=1e-12)
    assert_allclose(f(dev(np.round(_U)), dev(np.round(_V))), g(np.round(_U), np.round(_V)),
                    rtol=1e-12)
    with pytest.raises(ValueError, match="non-negative"):
        f(_U, _V, -_UW, None)
    # differentiable in the samples: moving every u right by t changes W1 at slope -1..1
    assert_allclose(funcgrad.jit(f)(dev(_U), dev(_V)), g(_U, _V), rtol=1e-12)


def test_wasserstein_gradient_is_a_transport_sign():
    g = funcgrad.grad(lambda u: fst.wasserstein_distance(u, dev(_V)))(dev(_U))
    eps = 1e-7
    e = np.zeros(20)
    e[3] = eps
    fd = (ss.wasserstein_distance(_U + e, _V) - ss.wasserstein_distance(_U - e, _V)) / (2 * eps)
    assert_allclose(g[3], fd, rtol=1e-6)


@pytest.mark.parametrize("method", ["fisher", "pearson", "tippett", "stouffer",
                                    "mudholkar_george"])
def test_combine_pvalues_matches_scipy(method):
    ps = _RNG.uniform(0.001, 0.9, 7)
    got, want = fst.combine_pvalues(dev(ps), method), ss.combine_pvalues(ps, method)
    assert_allclose(got.statistic, want.statistic, rtol=1e-10)
    assert_allclose(got.pvalue, want.pvalue, rtol=1e-10)
    if method == "stouffer":
        w = _RNG.random(7)
        got, want = fst.combine_pvalues(dev(ps), method, dev(w)), ss.combine_pvalues(ps, method,
                                                                                     w)
        assert_allclose(got.pvalue, want.pvalue, rtol=1e-10)


def test_false_discovery_control_and_gstd_match_scipy():
    ps = _RNG.uniform(0.0, 1.0, (5, 4))
    for method in ("bh", "by"):
        assert_allclose(fst.false_discovery_control(dev(ps[0]), method=method),
                        ss.false_discovery_control(ps[0], method=method), rtol=1e-12)
        assert_allclose(fst.false_discovery_control(dev(ps), axis=1, method=method),
                        ss.false_discovery_control(ps, axis=1, method=method), rtol=1e-12)
        assert_allclose(fst.false_discovery_control(dev(ps), axis=None, method=method),
                        ss.false_discovery_control(ps, axis=None, method=method), rtol=1e-12)
    with pytest.raises(ValueError, match="between 0 and 1"):
        fst.false_discovery_control(np.array([0.5, 1.5]))
    pos = _RNG.lognormal(size=(10, 3))
    assert_allclose(fst.gstd(dev(pos)), ss.gstd(pos), rtol=1e-12)
    assert_allclose(fst.gstd(dev(pos), axis=None), ss.gstd(pos, axis=None), rtol=1e-12)
