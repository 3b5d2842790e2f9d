"""vonmises.cdf/sf/entropy, betabinom.cdf/sf and wrapcauchy.cdf/ppf: SciPy's values (recorded as literals),
derivatives, transforms."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev

import funcgrad
import funcgrad.scipy.stats as fst

_X = np.array([-7.0, -3.0, -1.0, 0.0, 0.5, 2.0, 3.5, 9.0])
# scipy.stats.vonmises.cdf(_X, kappa): not periodic (each turn adds 1); the series below
# kappa = 50, the normal approximation above
_VONMISES_CDF = {
    0.0: [-0.6140846016432674, 0.02253517072431399, 0.3408450569081046, 0.5,
          0.5795774715459476, 0.8183098861837907, 1.0570423008216336, 1.932394487827058],
    0.7: [-0.6926540614292429, 0.00995898796968792, 0.2441499621034736, 0.5,
          0.638284442177804, 0.9069035081640212, 1.025529419914571, 1.9695591904582348],
    8.0: [-9.7434725321103477e-01, 1.8164595903813474e-08, 3.9053545374529430e-03, 0.5,
          9.1550441681588524e-01, 9.9999795119016932e-01, 1.0000000536909512e+00,
          1.9999999310765091e+00],
    49.0: [-9.9999951459419156e-01, 1.0075273948473296e-13, 1.1088574503048676e-11, 0.5,
           9.9972429289349529e-01, 9.9999999999991629e-01, 1.0, 1.9999999999999116e+00],
    120.0: [-9.9999999999999190e-01, 5.8686382155226284e-106, 4.6658581348193343e-026, 0.5,
            9.9999996930117319e-01, 1.0, 1.0, 2.0],
}


@pytest.mark.parametrize("kappa", sorted(_VONMISES_CDF))
def test_vonmises_cdf_matches_scipy(kappa):
    assert_allclose(fst.vonmises.cdf(dev(_X), kappa), np.array(_VONMISES_CDF[kappa]),
                    rtol=1e-12, atol=1e-15)


def test_vonmises_loc_scale_sf_entropy():
    assert_allclose(fst.vonmises.cdf(dev(np.array([0.3, 2.0])), 1.5, loc=0.5, scale=2.0),
                    np.array([0.4567926985157058, 0.7853733091713248]), rtol=1e-13)
    assert_allclose(fst.vonmises.sf(0.5, 0.7), 1 - 0.638284442177804, rtol=1e-13)
    assert_allclose(fst.vonmises.entropy(dev(np.array([0.0, 1.0, 30.0, 500.0]))),
                    np.array([1.8378770664093453, 1.6274014590199892, -0.2731081613788007,
                              -1.6878647639149449]), rtol=1e-12)
    assert_allclose(fst.vonmises.entropy(2.0, scale=3.0), 2.3649335806323952, rtol=1e-13)
    bad = fst.vonmises.cdf(dev(np.array([1.0, 1.0])), dev(np.array([-1.0, 1.0])),
                           scale=dev(np.array([1.0, -1.0])))
    assert_allclose(bad, np.array([np.nan, np.nan]))


def test_vonmises_cdf_derivative_is_the_pdf():
    assert_allclose(funcgrad.grad(fst.vonmises.cdf)(0.4, 3.0), 0.5168504526334113, rtol=1e-10)
    out = funcgrad.jit(funcgrad.vmap(fst.vonmises.cdf, (0, None)))(dev(np.array([0.5, 2.0])), 8.0)
    assert_allclose(out, np.array(_VONMISES_CDF[8.0][4:6]), rtol=1e-12)


def test_betabinom_cdf_sf_match_scipy():
    k = dev(np.array([-1, 0, 2, 3.5, 7, 10, 11]))
    assert_allclose(fst.betabinom.cdf(k, 10, 2.0, 5.0), np.array(
        [0.0, 0.12500000000000003, 0.48901098901098905, 0.6538461538461537,
         0.9755244755244755, 1.0, 1.0]), rtol=1e-13)
    assert_allclose(fst.betabinom.sf(k, 10, 0.3, 0.2), np.array(
        [1.0, 0.8056427570217217, 0.6970510577702049, 0.6585351407165826,
         0.5075076697592079, 0.0, 0.0]), rtol=1e-13)
    assert_allclose(fst.betabinom.cdf(4, 10, 2.0, 5.0, loc=2), 0.48901098901098905, rtol=1e-13)
    # the upper tail summed directly (SciPy's 1 - cdf gives 0.0; mpmath's value)
    assert_allclose(fst.betabinom.sf(45, 50, 1.0, 30.0), 5.227577887722932e-18, rtol=1e-10)
    out = fst.betabinom.cdf(3, dev(np.array([10.0, 10.5, 10.0])), dev(np.array([2.0, 2.0, -1.0])),
                            5.0)
    assert_allclose(out, np.array([0.6538461538461537, np.nan, np.nan]), rtol=1e-13)


def test_betabinom_cdf_derivative_and_transforms():
    g = funcgrad.grad(fst.betabinom.cdf, argnums=(2, 3))(3.0, 10, 2.0, 5.0)
    assert_allclose(np.array([float(v) for v in g]),
                    np.array([-0.18616346431077346, 0.07683326280760738]), rtol=1e-7)
    f = funcgrad.jit(funcgrad.vmap(lambda k, a: fst.betabinom.sf(k, 10, a, 5.0)))
    assert_allclose(f(dev(np.array([2.0, 3.0])), dev(np.array([0.3, 2.0]))),
                    np.array([0.0706134885540155, 1 - 0.6538461538461537]),
                    rtol=1e-13)
    with pytest.raises(TypeError, match="n must be concrete"):
        funcgrad.jit(fst.betabinom.cdf)(3.0, 10, 2.0, 5.0)


def test_wrapcauchy_cdf_and_quantiles():
    x = dev(np.array([-1.0, 0.0, 0.5, 3.0, np.pi, 4.0, 6.0, 7.0]))
    assert_allclose(fst.wrapcauchy.cdf(x, 0.3, loc=0.3, scale=1.2), np.array(
        [0.0, 0.0, 0.04898617372469767, 0.41983155023870566, 0.43127477558487703,
         0.49500624233839935, 0.6622763412740088, 0.8104020819569905]), rtol=1e-12, atol=1e-15)
    q = dev(np.array([0.0, 0.1, 0.5, 0.7, 1.0]))
    assert_allclose(fst.wrapcauchy.ppf(q, 0.9), np.array(
        [0.0, 0.03419873979228734, 3.1415926535897953, 6.138555638733782, 6.283185307179586]),
        rtol=1e-12, atol=1e-15)
    assert_allclose(fst.wrapcauchy.isf(0.75, 0.3), 0.9878827378391623, rtol=1e-12)
    assert_allclose(fst.wrapcauchy.entropy(0.4), 1.6635236792645676, rtol=1e-13)


def test_vonmises_quantiles():
    q = dev(np.array([0.0, 0.01, 0.3, 0.5, 0.9, 1.0]))
    # scipy.stats.vonmises.ppf(q, 2.0) (its generic inversion of the CDF)
    want = np.array([-np.inf, -2.310829139036087, -0.40925923646296997, 0.0, 1.052981641354525,
                     np.inf])
    assert_allclose(fst.vonmises.ppf(q, 2.0), want, rtol=1e-9, atol=1e-12)
    assert_allclose(fst.vonmises.isf(0.1, 2.0), want[4], rtol=1e-9)
    # d ppf / dq = 1 / pdf(ppf(q))
    assert_allclose(funcgrad.grad(fst.vonmises.ppf)(0.3, 2.0), 2.2865380726867053, rtol=1e-9)
