"""funcgrad.scipy.special Carlson integrals elliprf/elliprd/elliprc/elliprj/elliprg and the
incomplete elliptic integrals ellipkinc/ellipeinc: SciPy 1.17's values (mpmath where they
differ), special values silently, derivatives against central differences of SciPy's."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import assert_allclose, dev, host

import funcgrad
import funcgrad.scipy.special as fsp

INF, NAN = np.inf, np.nan

# (name, arguments, SciPy's values)
CASES = [
    ("elliprf", ([0.0, 1.0, 0.5, 1e-10, 1e100, 2.0], [1.0, 2.0, 0.5, 0.3, 1.0, 0.0],
                 [1.0, 3.0, 2.0, 7.5, 1e5, 0.0]),
     [1.5707963267948966, 0.7269459354689082, 1.0752916200648814, 1.1013218987993563,
      1.1075592899016089e-48, INF]),
    ("elliprd", ([0.0, 1.0, 0.5, 1e-10, 1e100, 0.0], [2.0, 2.0, 0.5, 0.3, 1.0, 0.0],
                 [1.0, 3.0, 2.0, 7.5, 1e5, 1.0]),
     [1.7972103521033884, 0.2904602810289907, 0.7363696777566678, 0.2990554116037723,
      2.9905430724502187e-55, INF]),
    ("elliprc", ([0.0, 1.0, 0.5, 1e-10, 1e100, 1.0, 2.0], [1.0, -1.0, 0.5, 0.3, 1.0, 0.0, -1e5]),
     [1.5707963267948963, 0.6232252401402306, 1.414213562373095, 2.8678352719173756,
      1.1582240183026225e-48, NAN, 1.4141947064939573e-05]),
    ("elliprj", ([2.0, 1.0, 0.5, 1e-10, 1e5, 0.0, 0.5], [3.0, 2.0, 0.5, 0.3, 1.0, 0.0, 1.0],
                 [4.0, 3.0, 2.0, 7.5, 1e5, 1.0, 2.0], [5.0, -1.0, 1e-10, 2.0, -0.3, 1.0, -3.0]),
     [0.1429757966715675, -0.09324045243867635, 46.80461794131286, 0.8809724271822338,
      3.571076575053859e-05, INF, -0.5120744011757478]),
    ("elliprg", ([0.0, 1.0, 0.5, 1e-10, 1e100, 0.0, 0.0], [1.0, 2.0, 0.5, 0.3, 1.0, 0.0, 0.0],
                 [1.0, 3.0, 2.0, 7.5, 1e5, 4.0, 0.0]),
     [0.7853981633974483, 1.401847099990895, 0.9759296862027678, 1.4384594160995217,
      4.999999999999999e+49, 1.0, 0.0]),
    # F(phi | 1) near pi/2 is atanh(sin phi): 1 - m sin^2 written without cancellation
    ("ellipkinc", ([0.3, 1.0, 1.5707963, 3.5, -10.0, 100.0, 1.0, 2.0, np.pi / 2, INF, 1.5707963],
                   [0.5, -3.0, 0.999999, 0.9, 0.3, -1e6, 1.3, 1.0, 1.0, 0.5, 1.0]),
     [0.3022546685750176, 0.7807065662256887, 8.29402466870448, 5.521684394399391,
      -10.867848645988321, 0.5238273299553843, NAN, INF, INF, INF,
      18.128201574054632]),  # mpmath (SciPy: 18.12820157405463)
    ("ellipeinc", ([0.3, 1.0, 1.5707963, 3.5, -10.0, 100.0, 1.0, 2.0, np.pi / 2, INF],
                   [0.5, -3.0, 0.999999, 0.9, 0.3, -1e6, 1.3, 1.0, 1.0, 0.5]),
     [0.2977753719531602, 1.3256631975799982, 1.0000038969993772, 2.56110876972006,
      -9.238369147061688, 63862.5965359807, NAN, 1.0907025731743185, 1.0, INF]),
]


@pytest.mark.parametrize("name,args,want", CASES, ids=[c[0] for c in CASES])
def test_values_match_scipy_silently(name, args, want):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = getattr(fsp, name)(*(dev(np.array(a)) for a in args))
    assert_allclose(out, np.array(want), rtol=1e-13)


def test_derivatives_and_transforms():
    # d/dphi F = (1 - m sin^2 phi)^(-1/2); d/dm: SciPy central differences (h = 1e-6)
    g = funcgrad.grad(fsp.ellipkinc, argnums=(0, 1))(1.0, 0.5)
    assert_allclose(np.array(host([float(v) for v in g])),
                    np.array([1.2442168564771399, 0.20576140136174814]), rtol=1e-9)
    g = funcgrad.grad(fsp.ellipeinc, argnums=(0, 1))(4.0, -2.0)
    assert_allclose(np.array([float(v) for v in g]),
                    np.array([1.4647525503676768, -0.5766829067610502]), rtol=1e-9)
    # d/dp R_J(1, 2, 3, p) at p = -1 (the principal value) and 5: SciPy central differences
    g = funcgrad.jit(funcgrad.vmap(funcgrad.grad(fsp.elliprj, argnums=3)))(
        dev(np.array([1.0, 2.0])), dev(np.array([2.0, 3.0])), dev(np.array([3.0, 4.0])),
        dev(np.array([-1.0, 5.0])))
    assert_allclose(g, np.array([0.32325287233070377, -0.01876013461243886]), rtol=1e-8)
    assert fsp.elliprf(np.float32(1), np.float32(2), np.float32(3)).dtype == np.float32


def test_ellipj_matches_scipy():
    u = np.array([0.0, 0.5, 2.0, -3.0, 10.0, 100.0, 0.5, 0.5, 0.5, 0.5, 0.5, INF, 1.0, 3.0])
    m = np.array([0.3, 0.3, 0.7, 0.5, 0.9, 0.1, 0.0, 1.0, 1e-10, 0.99999999999, -0.1, 0.5,
                  0.999, 0.9999])
    want = [  # scipy.special.ellipj(u, m): sn, cn, dn, ph
        [0.0, 0.47421562271182066, 0.9991470517177338, -0.630028998242033, -0.3030609695105877,
         -0.028632074509060593, 0.479425538604203, 0.46211715726000974, 0.47942553860246395,
         0.462117157260182, NAN, NAN, 0.7616795560884094, 0.9950788601994242],
        [1.0, 0.8804087364264624, 0.0412936925420859, -0.7765716073705891, 0.9529711689024504,
         -0.9995900181120796, 0.8775825618903728, 0.886818883970074, 0.8775825618913228,
         0.8868188839699843, NAN, NAN, 0.6479538979255881, 0.09908613416727274],
        [1.0, 0.9656789647459512, 0.548811095305691, 0.8952830450126206, 0.9577779721226483,
         0.99995900937535, 1.0, 0.886818883970074, 0.9999999999885075, 0.8868188839711884,
         NAN, NAN, 0.6484014262654937, 0.09958453784607499],
        [0.0, 0.4940728937110473, 1.5294908897843693, -2.4600021012296027, 5.9752822590846275,
         97.41800824931177, 0.5, 0.48038107913372974, 0.49999999999801836,
         0.48038107913392397, NAN, NAN, 0.8659012727366588, 1.4715473330944988],
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = fsp.ellipj(dev(u), dev(m))
    for o, w in zip(out, want):
        assert_allclose(o, np.array(w), rtol=1e-13, atol=1e-15)
    # d sn / du = cn dn (closed form); d sn / dm: SciPy central difference (h = 1e-6)
    assert abs(float(funcgrad.grad(lambda v: fsp.ellipj(v, 0.3)[0])(0.5))
               - 0.8501921971455972) < 1e-14
    assert abs(float(funcgrad.grad(lambda v: fsp.ellipj(0.5, v)[0])(0.3))
               + 0.01734219404192494) < 1e-9
