"""Kolmogorov-Smirnov: kstwobign (jit-safe), kstwo/ksone (host, exact) and ks_1samp,
ks_2samp, kstest, against SciPy 1.17's values recorded as literals (mpmath's where SciPy's
own digits are short, noted)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev

import funcgrad
import funcgrad.scipy.stats as fst


def test_kstwobign_matches_scipy():
    x = dev(np.array([0.0, 0.3, 0.7, 1.0, 1.5, 3.0]))
    assert_allclose(fst.kstwobign.cdf(x), np.array(
        [0.0, 9.305801334566636e-06, 2.887648049703107e-01, 7.300003283226455e-01,
         9.777820373834749e-01, 9.999999695400406e-01]), rtol=1e-12)
    assert_allclose(fst.kstwobign.sf(dev(np.array([1.0, 3.0, 6.0]))), np.array(
        [2.6999967167735456e-01, 3.0459959489425258e-08, 1.0760372320042276e-31]), rtol=1e-12)
    assert_allclose(fst.kstwobign.isf(dev(np.array([1e-300, 1e-10, 0.05, 0.5, 0.999]))),
                    np.array([18.593932815286465, 3.4437623401231106, 1.3580986393225507,
                              0.8275735551899059, 0.3742196902782784]), rtol=1e-12)
    assert_allclose(fst.kstwobign.ppf(dev(np.array([0.01, 0.5, 0.95]))), np.array(
        [0.4410276985179294, 0.8275735551899059, 1.3580986393225505]), rtol=1e-12)
    # the density at 1.0 is mpmath's (SciPy's kolmogp is 1.5e-12 off there)
    assert_allclose(fst.kstwobign.pdf(dev(np.array([0.7, 1.0]))),
                    np.array([1.6647342660670743, 1.07194855835694176]), rtol=1e-13)
    assert_allclose(fst.kstwobign.logcdf(5.0), -3.8574996959278356e-22, rtol=1e-12)
    assert_allclose(fst.kstwobign.cdf(dev(np.array([np.nan, np.inf, -1.0]))),
                    np.array([np.nan, 1.0, 0.0]))


def test_kstwobign_derivatives_and_jit():
    assert_allclose(funcgrad.grad(fst.kstwobign.cdf)(0.7), 1.6647342660670743, rtol=1e-12)
    assert_allclose(funcgrad.grad(fst.kstwobign.isf)(0.05), -3.681790302894373,  # -1 / pdf
                    rtol=1e-9)
    assert_allclose(funcgrad.jit(fst.kstwobign.ppf)(dev(np.array([0.5]))),
                    np.array([0.8275735551899059]), rtol=1e-12)


def test_kstwo_ksone_match_scipy():
    cases = [  # n, x, scipy.stats.kstwo.cdf, .sf: every branch of the dispatch
        (1, 0.7, 0.3999999999999999, 0.6000000000000001),
        (5, 0.15, 0.0012000000000000005, 0.9988),
        (5, 0.45, 0.8060062500000004, 0.19399374999999963),
        (20, 0.1, 0.023744905407845036, 0.976255094592155),
        (20, 0.3, 0.9569329333414838, 0.04306706665851623),
        (100, 0.05, 0.0467840289364275, 0.9532159710635725),
        (100, 0.3, 0.9999999822801301, 1.7719869892662917e-08),
        (500, 0.03, 0.25268332995429793, 0.7473166700457021),
        (500, 0.08, 0.9968694847157115, 0.0031305058199356268),
        (500, 0.2, 1.0, 5.256835361945869e-18),
        (200000, 0.002, 0.600049146309619, 0.39995085369038097),
        (30, 0.6, 0.9999999999260799, 7.392006292214292e-11),
    ]
    n = dev(np.array([c[0] for c in cases], dtype=np.float64))
    x = dev(np.array([c[1] for c in cases]))
    assert_allclose(fst.kstwo.cdf(x, n), np.array([c[2] for c in cases]), rtol=1e-10)
    assert_allclose(fst.kstwo.sf(x, n), np.array([c[3] for c in cases]), rtol=1e-9)
    assert_allclose(fst.ksone.sf(dev(np.array([0.3, 0.8, 0.1, 0.25])),
                                 dev(np.array([10.0, 10.0, 50.0, 1.0]))),
                    np.array([0.1354635556, 1.1039999999999974e-07, 0.34490701996888, 0.75]),
                    rtol=1e-11)
    assert_allclose(fst.kstwo.ppf(0.95, 20), 0.2940753144343289, rtol=1e-12)
    assert_allclose(fst.ksone.isf(0.05, 10), 0.36866333261296375, rtol=1e-12)
    assert_allclose(fst.kstwo.sf(dev(np.array([0.3, 0.3])), dev(np.array([2.5, 0.0]))),
                    np.array([np.nan, np.nan]))
    with pytest.raises(TypeError, match="concrete"):
        funcgrad.jit(lambda v: fst.kstwo.sf(v, 10))(0.3)


_A = np.array([0.61, -1.3, 0.2, 1.7, -0.4, 0.05, 2.2, -0.9])
_B = np.array([0.3, 1.1, 2.5, 1.9, 0.8, -0.2, 1.4])
# scipy.stats.ks_2samp(_A, _B, alternative, method): statistic, pvalue, location, sign
_TWO = {
    ("two-sided", "exact"): (0.48214285714285715, 0.2522144522144522, 0.2, 1),
    ("two-sided", "asymp"): (0.48214285714285715, 0.21977333663057064, 0.2, 1),
    ("greater", "exact"): (0.48214285714285715, 0.1261849261849262, 0.2, 1),
    ("greater", "asymp"): (0.48214285714285715, 0.11001452712433123, 0.2, 1),
    ("less", "exact"): (0.0, 1.0, 2.5, -1),
}
# scipy.stats.ks_1samp(_A, norm(0.2, 1.5).cdf, alternative, method)
_ONE = {
    ("two-sided", "exact"): (0.15865525393145707, 0.9688498793897926, -1.3, -1),
    ("two-sided", "asymp"): (0.15865525393145707, 0.9877990108802884, -1.3, -1),
    ("two-sided", "approx"): (0.15865525393145707, 1.0, -1.3, -1),
    ("less", "exact"): (0.15865525393145707, 0.607333080579347, -1.3, -1),
    ("greater", "exact"): (0.14229849712475207, 0.6607017538927478, 0.61, 1),
}


@pytest.mark.parametrize("alternative, method", sorted(_TWO))
def test_ks_2samp_matches_scipy(alternative, method):
    res = fst.ks_2samp(dev(_A), dev(_B), alternative=alternative, method=method)
    stat, p = res
    want = _TWO[(alternative, method)]
    assert_allclose(stat, want[0], rtol=1e-14)
    assert_allclose(p, want[1], rtol=1e-12)
    assert_allclose(res.statistic_location, want[2])
    assert int(res.statistic_sign) == want[3]


@pytest.mark.parametrize("alternative, method", sorted(_ONE))
def test_ks_1samp_matches_scipy(alternative, method):
    res = fst.ks_1samp(dev(_A), fst.norm.cdf, args=(0.2, 1.5), alternative=alternative,
                       method=method)
    want = _ONE[(alternative, method)]
    assert_allclose(res.statistic, want[0], rtol=1e-13)
    assert_allclose(res.pvalue, want[1], rtol=1e-11)
    assert_allclose(res.statistic_location, want[2])
    assert int(res.statistic_sign) == want[3]


def test_kstest_dispatch_axis_and_errors():
    res = fst.kstest(dev(np.array([0.1, 0.5, 0.9])), "uniform")
    assert_allclose(res.pvalue, 0.9857777777777778, rtol=1e-12)  # scipy.stats.kstest
    res = fst.kstest(dev(np.array([1.0, 2.0, 3.0])), dev(np.array([4.0, 5.0, 6.0])))
    assert_allclose(res.pvalue, 0.1, rtol=1e-12)
    both = fst.ks_1samp(dev(np.stack([_A, _A[::-1] * 2])), "norm", axis=1)
    one = fst.ks_1samp(dev(_A * 2), "norm")
    assert_allclose(both.pvalue[1], float(one.pvalue), rtol=1e-14)
    with_nan = fst.ks_2samp(dev(np.append(_A, np.nan)), dev(_B), nan_policy="omit")
    assert_allclose(with_nan.pvalue, 0.2522144522144522, rtol=1e-12)
    assert_allclose(fst.ks_2samp(dev(np.append(_A, np.nan)), dev(_B)).pvalue, np.nan)
    with pytest.raises(ValueError, match="alternative"):
        fst.ks_2samp(_A, _B, alternative="bigger")
    with pytest.raises(TypeError, match="rvs must be the data"):
        fst.kstest("norm", "norm")
    with pytest.raises(ValueError, match="not a distribution"):
        fst.ks_1samp(_A, "nosuch")
