"""savgol_coeffs and savgol_filter (every mode, derivatives, axes) against scipy.signal (a
test dependency); linear in the signal, so differentiable and jit-safe."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from helpers import assert_allclose, dev

import funcgrad
import funcgrad.scipy.signal as fsg

sg = pytest.importorskip("scipy.signal")

_X = np.random.default_rng(0).normal(size=40)


def _exact_coeffs(window, order, deriv, pos, use, delta=1.0):
    """savgol_coeffs in exact rational arithmetic, from the definition: the minimum-norm c
    with sum_j c_j x_j**k = k! [k == deriv] / delta**deriv for k <= order, x = j - pos
    (reversed for use="conv"): c = A^T (A A^T)^-1 y. SciPy's floating-point Vandermonde
    solve is 1e-8 off for 9 samples of order 8 at pos=0 (and moved between versions)."""
    x = [Fraction(j) - Fraction(pos) for j in range(window)][::-1 if use == "conv" else 1]
    m = order + 1
    a = [[xj ** k for xj in x] for k in range(m)]
    g = [[sum(p * q for p, q in zip(a[i], a[k])) for k in range(m)] + [Fraction(0)]
         for i in range(m)]
    if deriv <= order:
        g[deriv][m] = Fraction(math.factorial(deriv)) / Fraction(delta) ** deriv
    for c in range(m):   # Gauss-Jordan on the (nonsingular) Gram matrix
        piv = next(r for r in range(c, m) if g[r][c] != 0)
        g[c], g[piv] = g[piv], g[c]
        for r in range(m):
            if r != c and g[r][c] != 0:
                f = g[r][c] / g[c][c]
                g[r] = [u - f * v for u, v in zip(g[r], g[c])]
    z = [g[i][m] / g[i][i] for i in range(m)]
    return np.array([float(sum(a[k][j] * z[k] for k in range(m))) for j in range(window)])


@pytest.mark.parametrize("window, order", [(5, 2), (7, 3), (4, 2), (3, 0), (9, 8)])
def test_savgol_matches_scipy(window, order):
    for deriv in (0, 1, 3):
        for mode in ("interp", "mirror", "constant", "nearest", "wrap"):
            assert_allclose(fsg.savgol_filter(dev(_X), window, order, deriv=deriv, delta=0.5,
                                              mode=mode, cval=0.3),
                            sg.savgol_filter(_X, window, order, deriv=deriv, delta=0.5,
                                             mode=mode, cval=0.3), rtol=1e-8, atol=1e-10)
        for use in ("conv", "dot"):
            got = fsg.savgol_coeffs(window, order, deriv, pos=0, use=use)
            assert_allclose(got, _exact_coeffs(window, order, deriv, 0, use), rtol=1e-13,
                            atol=1e-13)
            assert_allclose(got, sg.savgol_coeffs(window, order, deriv, pos=0, use=use),
                            rtol=1e-7, atol=1e-12)


def test_savgol_coeffs_exact_where_scipy_loses_digits():
    # SciPy 1.17: 2e-4 off (relative) for 15 samples of order 10 at pos=0
    for pos, deriv, delta in ((0, 1, 0.5), (3, 2, 1.0), (None, 3, 2.0)):
        want = _exact_coeffs(15, 10, deriv, 7 if pos is None else pos, "conv", delta)
        assert_allclose(fsg.savgol_coeffs(15, 10, deriv, delta=delta, pos=pos), want,
                        rtol=1e-12, atol=1e-12)


def test_savgol_filter_interp_ends_stay_exact_at_high_order():
    # mode="interp" fits the first/last window by a polynomial: through the monomials'
    # Vandermonde pseudo-inverse this lost every digit from 21 samples of order 12 (1.1 off
    # for unit data; SciPy's polyfit is 2.2 off at 31 samples of order 14). Reference: NumPy's
    # Chebyshev fit of the window (well conditioned).
    from numpy.polynomial import Chebyshev
    x = np.random.default_rng(3).normal(size=50)
    for window, order, deriv in ((21, 12, 0), (31, 14, 2), (9, 8, 3)):
        t = np.arange(window, dtype=float)
        got = fsg.savgol_filter(dev(x), window, order, deriv=deriv, delta=0.5)
        for part, (seg, at) in (("head", (x[:window], t)), ("tail", (x[-window:], t))):
            fit = Chebyshev.fit(at, seg, order).deriv(deriv)
            ends = fit(at[:window // 2]) if part == "head" else fit(at[window - window // 2:])
            g = got[:window // 2] if part == "head" else got[len(x) - window // 2:]
            assert_allclose(g, ends / 0.5 ** deriv, rtol=1e-9, atol=1e-9)


def test_savgol_axes_dtype_and_transforms():
    x2 = np.random.default_rng(1).normal(size=(3, 25))
    assert_allclose(fsg.savgol_filter(dev(x2), 7, 2, axis=1), sg.savgol_filter(x2, 7, 2, axis=1),
                    rtol=1e-9, atol=1e-12)
    assert_allclose(fsg.savgol_filter(dev(x2.T), 5, 2, axis=0),
                    sg.savgol_filter(x2.T, 5, 2, axis=0), rtol=1e-9, atol=1e-12)
    assert fsg.savgol_filter(dev(_X.astype(np.float32)), 5, 2).dtype == np.float32
    # the first output is a fixed combination of the first window: its weights
    g = funcgrad.grad(lambda v: fsg.savgol_filter(v, 5, 2)[0])(dev(_X))
    assert_allclose(g[:5], sg.savgol_filter(np.eye(40), 5, 2, axis=0)[0, :5], atol=1e-12)
    assert_allclose(funcgrad.jit(lambda v: fsg.savgol_filter(v, 7, 3, deriv=1))(dev(_X)),
                    sg.savgol_filter(_X, 7, 3, deriv=1), rtol=1e-9, atol=1e-12)
    with pytest.raises(ValueError, match="polyorder must be less"):
        fsg.savgol_filter(_X, 3, 3)
    with pytest.raises(ValueError, match="window_length must be less than or equal"):
        fsg.savgol_filter(_X[:4], 5, 2)
