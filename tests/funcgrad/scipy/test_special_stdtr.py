"""funcgrad.scipy.special.stdtr / stdtrit (Student's t CDF and quantile, the code
scipy.stats.t shares): SciPy 1.17's values (mpmath where SciPy is off), derivatives against
mpmath's, transforms."""

from __future__ import annotations

import warnings

import numpy as np
from helpers import assert_allclose, dev, host

import funcgrad
import funcgrad.scipy.special as fsp
import funcgrad.scipy.stats as fst

INF, NAN = np.inf, np.nan


def test_stdtr_values_tails_and_edges():
    df = np.array([0.3, 1, 3.5, 10, 1e4, 1e5, 1e8, INF, 0, -1, NAN, 1e5, 3.0, 1.0])
    t = np.array([-1e10, -30, -3, -1, 0.5, 2, 40, 1e5, INF, -INF, 2.0, NAN, -1e4, 1e-9])
    want = [0.00034950072338385595, 0.010606402405535426, 0.02368761974237321,
            0.17044656615103, 0.6914569603383831, 0.9772485182712467, 1.0, 1.0, NAN, NAN,
            NAN, NAN, 1.102657751147905e-12,
            0.5000000003183099]  # Cauchy: 1/2 + atan(t)/pi (SciPy rounds to 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_allclose(fsp.stdtr(dev(df), dev(t)), np.array(want), rtol=1e-13)
        assert_allclose(funcgrad.jit(fsp.stdtr)(dev(df), dev(t)), np.array(want), rtol=1e-13)


def test_stdtrit_values_tails_and_edges():
    df = np.array([0.3, 1, 3.5, 10, 1e4, 1e5, 1e8, INF, 0, -1, NAN, 3.0, 3.0, 3.0, 1.0])
    p = np.array([1e-20, 1e-5, 0.025, 0.3, 0.5, 0.7, 0.975, 1 - 1e-12, 1.0, -0.1, 0.6, 0.2,
                  1e-300, 0.0, 0.500000000001])
    # SciPy 1.17's stdtrit(3, 1e-300) and stdtrit(3, 0) are +inf (its stats.t.ppf says
    # -inf at 0): mpmath's quantile and -inf here; the last, tan(pi (p - 1/2)), mpmath too.
    want = [-1.3958120070683045e+65, -31830.98860790709, -2.9400886379827296,
            -0.5415280387550154, 0.0, 0.5244021842335456, 1.9599640082627663,
            7.0344869100478356, NAN, NAN, NAN, -0.9784723123633038, -1.0331108360446594e+100,
            -INF, 3.1415231561563748e-12]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_allclose(fsp.stdtrit(dev(df), dev(p)), np.array(want), rtol=1e-12)


def test_stdtr_stdtrit_derivatives_dtype_and_stats_t_agree():
    # mpmath's derivatives (40 digits) of stdtr / stdtrit in (df, t) and (df, p).
    g = funcgrad.grad(fsp.stdtr, argnums=(0, 1))(3.0, 1.0)
    assert_allclose(np.array(host(g)), np.array([0.011110456704864639, 0.20674833578317202]),
                    rtol=1e-13)
    g = funcgrad.grad(fsp.stdtrit, argnums=(0, 1))(3.0, 0.9)
    assert_allclose(np.array(host(g)), np.array([-0.14735093181553852, 9.760499207841620]),
                    rtol=1e-13)
    assert fsp.stdtr(np.float32(3.0), np.float32(1.0)).dtype == np.float32
    x, df = dev(np.array([-2.0, 0.3, 5.0])), dev(np.array([2.5, 7.0, 1e6]))
    assert_allclose(fst.t.cdf(x, df), fsp.stdtr(df, x), rtol=0)
    q = dev(np.array([0.01, 0.6, 0.999]))
    assert_allclose(fst.t.ppf(q, df), fsp.stdtrit(df, q), rtol=0)
