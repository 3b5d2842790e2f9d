"""funcgrad.scipy.special at singular points: SciPy's (and JAX's) values, without NumPy's
floating-point warnings (SciPy's special functions never emit them; a warnings-as-errors
caller saw xlogy(1, 0) fail). Expected values recorded from SciPy 1.17 and JAX 0.10."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import assert_allclose, dev

import funcgrad
import funcgrad.scipy.special as fsp
from funcgrad.scipy import _quiet

inf, nan = np.inf, np.nan


@pytest.fixture(autouse=True)
def _warnings_are_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


# (function, arguments, SciPy's values)
CASES = [
    ("xlogy", ([1.0, 1.0, 1.0, 0.0, 2.0, 0.0], [0.0, -0.0, -1.0, 0.0, -1.0, nan]),
     [-inf, -inf, nan, 0.0, nan, nan]),
    ("xlog1py", ([1.0, 1.0, 0.0, 2.0], [-1.0, -2.5, -1.0, -10.0]), [-inf, nan, 0.0, nan]),
    ("logit", ([0.0, -0.0, 1.0, -1.0, 1.5, 0.5],), [-inf, -inf, inf, nan, nan, 0.0]),
    ("rel_entr", ([1.0, 0.5, 1.0], [1e300, 1e300, 0.0]),
     [-690.7755278982137, -345.73433753938684, inf]),
    ("kl_div", ([1.0, 0.0], [1e300, 0.0]), [1e300, 0.0]),
    ("boxcox", ([0.0, 0.0, 0.0, -1.0], [0.0, 1.0, -1.0, 0.5]), [-inf, -1.0, -inf, nan]),
    ("boxcox1p", ([-1.0, -1.0, -2.0], [0.0, 2.0, 0.5]), [-inf, -0.5, nan]),
    # far out: x^2 and the like overflowed on the way to SciPy's values (1/x squared now)
    ("log_ndtr", ([-1e300, -1e160, -20.0],), [-inf, -inf, -203.91715537109727]),
    ("erfcx", ([1e300, -1e300],), [5.641895835477562e-301, inf]),
    ("erfi", ([1e300, -1e300, 1.0],), [inf, -inf, 1.6504257587975428]),
    ("exprel", ([-1e300, 1e-4],), [1e-300, 1.000050001666708]),
    ("zetac", ([1e300, 1200.0],), [0.0, 0.0]),
    ("ndtri_exp", ([800.0, 1e300],), [nan, nan]),
    # SciPy's exponentials overflow to inf silently
    ("exp2", ([1024.1, 1e300, 3.0],), [inf, inf, 8.0]),
    ("exp10", ([308.3, 2.0],), [inf, 100.0]),
    ("expm1", ([709.8, 1e300, -1e300],), [inf, inf, -1.0]),
    # the series' powers of x were formed on the continued fraction's lanes too
    ("exp1", ([1e-10, 1e300],), [22.448635265138922, 0.0]),
    ("expi", ([-1e300, -700.0, 2.0],), [0.0, -1.406518766234033e-307, 4.954234356001891]),
]


@pytest.mark.parametrize("name,args,want", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("jit", [False, True])
def test_singular_points_give_scipys_values_silently(name, args, want, jit):
    f = getattr(fsp, name)
    f = funcgrad.jit(f) if jit else f
    assert_allclose(f(*dev(tuple(np.array(a) for a in args))), np.array(want))


def test_float32_stays_float32():
    out = fsp.xlogy(dev(np.array([1.0, 0.0], np.float32)), dev(np.array([0.0, 0.0], np.float32)))
    assert out.dtype == np.float32
    assert_allclose(out, np.array([-inf, 0.0], np.float32))


@pytest.mark.parametrize("jit", [False, True])
def test_derivatives_at_the_singular_points_are_jaxs(jit):
    # jax.grad(xlogy, (0, 1))(1., 0.) == (-inf, inf); jax.grad(logit)(0.) == jax.grad(logit)(1.)
    # == inf (the plain 1 / (x (1 - x))); jax.grad(xlog1py, (0, 1))(1., -1.) == (-inf, inf).
    # Staged (jit) the derivative rules are silent too; eagerly the values are computed by the
    # plain operations and grad's backward pass, run later, may warn at the singular point.
    wrap = funcgrad.jit if jit else (lambda f: f)
    with (np.errstate(all="ignore") if not jit else warnings.catch_warnings()):
        gx, gy = wrap(funcgrad.grad(fsp.xlogy, (0, 1)))(1.0, 0.0)
        assert (float(gx), float(gy)) == (-inf, inf)
        gx, gy = wrap(funcgrad.grad(fsp.xlog1py, (0, 1)))(1.0, -1.0)
        assert (float(gx), float(gy)) == (-inf, inf)
        g = wrap(funcgrad.vmap(funcgrad.grad(fsp.logit)))(dev(np.array([0.0, 1.0, 0.5, 0.2])))
        assert_allclose(g, np.array([inf, inf, 4.0, 6.25]))
        # Second order: d2 logit / dx2 = (2x - 1) / (x (1 - x))**2
        assert_allclose(wrap(funcgrad.grad(funcgrad.grad(fsp.logit)))(0.2), -23.4375)


@pytest.mark.parametrize("traced", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_quiet_helpers_match_numpy_everywhere(traced, dtype):
    # concrete arguments take the errstate fast path; traced ones the where-compositions
    wrap = funcgrad.jit if traced else (lambda f: f)
    x = np.array([0.0, -0.0, -1.0, 1.0, inf, -inf, nan, 2.0, 1e-30], dtype)
    with np.errstate(all="ignore"):
        for f, ref in [(_quiet.log, np.log), (_quiet.log1p, np.log1p),
                       (_quiet.reciprocal, np.reciprocal)]:
            got = np.asarray(funcgrad.device_get(wrap(f)(dev(x))))
            np.testing.assert_array_equal(got, ref(x))
            assert got.dtype == dtype
        a = np.array([1.0, -1.0, 0.0, nan, inf, inf, 2.0, 0.0, -3.0], dtype)
        b = np.array([0.0, 0.0, 0.0, 0.0, inf, 0.0, 4.0, -0.0, -0.0], dtype)
        got = np.asarray(funcgrad.device_get(wrap(_quiet.div)(dev(a), dev(b))))
        np.testing.assert_array_equal(got, a / b)
        assert got.dtype == dtype
    # derivatives: the plain operations' (1 / x, -1 / x**2), infinite at 0 (silent when staged)
    with (np.errstate(all="ignore") if not traced else warnings.catch_warnings()):
        assert float(wrap(funcgrad.grad(_quiet.log))(0.0)) == inf
        assert float(wrap(funcgrad.grad(_quiet.log1p))(-1.0)) == inf
        assert float(wrap(funcgrad.grad(funcgrad.grad(_quiet.log)))(2.0)) == -0.25
        assert float(wrap(funcgrad.grad(_quiet.reciprocal))(-0.0)) == -inf


@pytest.mark.parametrize("jit", [False, True])
def test_logsumexp_of_an_empty_sum_is_silent(jit):
    # a fully masked row (all -inf, as attention masks make) and all-zero weights: -inf with
    # sign 0 (SciPy, JAX), without log(0)'s warning
    lse = funcgrad.jit(fsp.logsumexp, static_argnames=("axis", "return_sign")) if jit \
        else fsp.logsumexp
    a = dev(np.array([[-inf, -inf], [0.0, np.log(3.0)]]))
    assert_allclose(lse(a, axis=1), np.array([-inf, np.log(4.0)]))
    out, sign = lse(dev(np.array([1.0, 1.0])), b=dev(np.array([1.0, -1.0])), return_sign=True)
    assert (float(out), float(sign)) == (-inf, 0.0)
    assert float(lse(dev(np.array([1.0, 2.0])), b=dev(np.array([0.0, 0.0])))) == -inf
    assert_allclose(funcgrad.grad(fsp.logsumexp)(dev(np.array([-inf, 0.0]))), np.array([0.0, 1.0]))


@pytest.mark.parametrize("jit", [False, True])
def test_gamma_past_its_overflow_and_at_infinity_is_silent(jit):
    # SciPy: gamma(172) = inf, gamma(inf) = inf, gamma(-inf) = nan, factorial(200) = inf
    g = funcgrad.jit(fsp.gamma) if jit else fsp.gamma
    assert_allclose(g(dev(np.array([171.0, 172.0, inf, -inf, 5.0]))),
                    np.array([7.257415615307994e306, inf, inf, nan, 24.0]), rtol=1e-11)
    assert_allclose(fsp.gammasgn(dev(np.array([inf, -inf, -1.5]))), np.array([1.0, nan, 1.0]))
    assert_allclose(fsp.factorial(dev(np.array([200.0, inf]))), np.array([inf, inf]))
    assert fsp.gamma(dev(np.array([36.0], np.float32))).dtype == np.float32
    assert_allclose(funcgrad.grad(fsp.gamma)(3.0), 2.0 * (1.5 - np.euler_gamma))
