"""funcgrad.scipy.special airy/airye (Maclaurin series and Bessel functions of order 1/3, 2/3)
and shichi (power series and Ei/E1): SciPy 1.17's values silently, derivatives."""

from __future__ import annotations

import warnings

import numpy as np
from helpers import assert_allclose, dev

import funcgrad
import funcgrad.scipy.special as fsp

INF, NAN = np.inf, np.nan


def test_airy_matches_scipy():
    x = np.array([-1e3, -20.0, -2.0, -1.0, -1e-8, 0.0, 0.7, 1.0001, 5.0, 100.0, INF])
    want = [
        [0.05597189577318026, -0.17640612707798434, 0.22740742820168564, 0.5355608832923522,
         0.35502805647601127, 0.3550280538878172, 0.18916240039814997, 0.1352765022452097,
         0.00010834442813607433, 2.6344821520883423e-291, NAN],
        [2.63307101952072, 0.8928628567364726, 0.618259020741691, -0.010160567116645175,
         -0.2588194037928068, -0.2588194037928068, -0.19985119158228049, -0.15913391217446757,
         -0.0002474138908684623, -2.635140361604371e-290, NAN],
        [-0.08326457411697287, -0.20013930932265164, -0.4123025879563985, 0.10399738949694468,
         0.6149266229631171, 0.6149266274460007, 0.9733286558781656, 1.207516844583685,
         657.7920441711713, 6.041223996669972e+288, NAN],
        [1.7699659401410586, -0.7914290338395351, 0.27879516692116973, 0.5923756264227923,
         0.4482883573538264, 0.4482883573538264, 0.65440591917214, 0.9325566864520805,
         1435.8190802179822, 6.039712745310374e+289, NAN],
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = fsp.airy(dev(x))
    for o, w in zip(out, want):
        assert_allclose(o, np.array(w), rtol=1e-12)


def test_airye_matches_scipy():
    x = np.array([-2.0, 0.5, 1.0, 30.0, 200.0, 1e4])
    want = [
        [NAN, 0.2932771591299473, 0.26351364474914013, 0.12045939663973669,
         0.07501041684381093, 0.02820947623890276],
        [NAN, -0.28469116209194273, -0.30997688896051484, -0.6607833325212036,
         -1.0609012305109042, -2.8209483291267405],
        [-0.41230258795639885, 0.6748924111156304, 0.6199119435726785, 0.24122445526882694,
         0.15003188417418148, 0.056418964231755166],
        [0.2787951669211686, 0.4302209614637695, 0.47872857060498464, 1.3192228350679096,
         2.1215836725571093, 5.641895012700529],
    ]
    for o, w in zip(fsp.airye(dev(x)), want):
        assert_allclose(o, np.array(w), rtol=1e-12)


def test_airy_derivatives():
    # Ai' against SciPy's (x = -5: the Bessel J/Y branch), Ai'' = x Ai (x = 0.5: the series)
    assert abs(float(funcgrad.grad(lambda v: fsp.airy(v)[0])(-5.0)) - 0.3271928185544436) < 1e-14
    g = funcgrad.grad(lambda v: fsp.airy(v)[1])(0.5)
    assert abs(float(g) - 0.5 * 0.23169360648083348) < 1e-15


def test_shichi_matches_scipy():
    x = np.array([-2.0, -1e-8, 0.0, 0.3, 0.99, 1.01, 2.0, 30.0, 800.0])
    shi = [-2.501567433354976, -1e-08, 0.0, 0.3015040562050104, 1.0455171842643816,
           1.0690213546184881, 2.501567433354976, 184486604703.63712, INF]
    chi = [2.4526669226469147, -17.843465079050834, -INF, -0.6041725954708365,
           0.822417358474204, 0.8532797308239981, 2.4526669226469147, 184486604703.63712, INF]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s, c = fsp.shichi(dev(x))
    assert_allclose(s, np.array(shi), rtol=1e-13)
    assert_allclose(c, np.array(chi), rtol=1e-13)
    # Shi' = sinh(x)/x, Chi' = cosh(x)/x
    assert abs(float(funcgrad.grad(lambda v: fsp.shichi(v)[0])(0.7)) - np.sinh(0.7) / 0.7) < 1e-14
    assert abs(float(funcgrad.grad(lambda v: fsp.shichi(v)[1])(1.5)) - np.cosh(1.5) / 1.5) < 1e-14
