"""``lax``'s special functions (igamma, igammac, betainc, zeta, bessel_i0e, bessel_i1e) against
values recorded from JAX 0.10.2 (x64), with lax's dtype strictness."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev, host

import funcgrad
from funcgrad import lax

_CASES = [
    ("igamma", (np.array([0.5, 2.0]), np.array([1.0, 3.0])),
     [0.8427007929497151, 0.8008517265285442]),
    ("igammac", (np.array([0.5, 2.0]), np.array([1.0, 3.0])),
     [0.1572992070502849, 0.1991482734714558]),
    ("betainc", (np.array([0.5, 3.0]), np.array([2.0, 1.5]), np.array([0.3, 0.8])),
     [0.7394254526319743, 0.6958947550600282]),
    ("zeta", (np.array([2.0, 3.5]), np.array([1.0, 2.5])), [1.6449340668482264, 0.0651712515896597]),
    ("bessel_i0e", (np.array([-2.0, 0.0, 1.0]),), [0.308508322553671, 1.0, 0.46575960759364043]),
    ("bessel_i1e", (np.array([-2.0, 0.0, 1.0]),), [-0.2152692892489377, 0.0, 0.2079104153497085]),
]


@pytest.mark.parametrize("name,args,want", _CASES)
def test_matches_recorded_jax(name, args, want) -> None:
    fn = getattr(lax, name)
    got = fn(*map(dev, args))
    assert host(got).dtype == np.float64
    want = np.array(want)
    assert_allclose(got, want, rtol=1e-12)
    assert_allclose(funcgrad.jit(fn)(*map(dev, args)), want, rtol=1e-12)
    f32 = fn(*(dev(a.astype(np.float32)) for a in args))
    assert host(f32).dtype == np.float32
    assert_allclose(f32, want.astype(np.float32), rtol=1e-5)


def test_gradient_and_strictness() -> None:
    # jax.grad(lambda a: lax.igamma(a, 1.5))(2.0)
    assert_allclose(funcgrad.grad(lambda a: lax.igamma(a, 1.5))(2.0), -0.3134886378250792,
                    rtol=1e-8)
    with pytest.raises(TypeError, match="lax.igamma"):
        lax.igamma(dev(np.float32(1.0)), dev(np.float64(1.0)))
    with pytest.raises(TypeError, match="lax.igamma"):
        lax.igamma(dev(np.array([1])), dev(np.array([1])))
    with pytest.raises(TypeError, match="lax.bessel_i0e"):
        lax.bessel_i0e(dev(np.array([1])))


def test_polygamma_takes_float_array_orders() -> None:
    # jax.lax.polygamma([0., 1., 2., 3., 1.5, -1.], [0.5, 1.5, 2., -1.5, 2., 2.])
    m = np.array([0.0, 1.0, 2.0, 3.0, 1.5, -1.0])
    x = np.array([0.5, 1.5, 2.0, -1.5, 2.0, 2.0])
    want = np.array([-1.9635100260214255, 0.9348022005446794, -0.40411380631918803,
                     194.59427621918775, np.nan, np.nan])
    assert_allclose(lax.polygamma(dev(m), dev(x)), want, rtol=1e-10)
    assert_allclose(funcgrad.jit(lax.polygamma)(dev(m), dev(x)), want, rtol=1e-10)
    # jax.grad(lambda x: lax.polygamma(2.0, x))(1.5)
    assert_allclose(funcgrad.grad(lambda x: lax.polygamma(np.float64(2.0), x))(1.5),
                    1.4090910340024378, rtol=1e-10)
    f32 = lax.polygamma(dev(np.array([1.0], np.float32)), dev(np.array([0.5], np.float32)))
    assert host(f32).dtype == np.float32
    assert_allclose(lax.polygamma(1, dev(np.array([0.5]))), np.array([4.934802200544679]))
    with pytest.raises(TypeError, match="polygamma"):
        lax.polygamma(dev(np.array([1], np.int32)), dev(np.array([0.5])))



def test_igamma_grad_a_and_random_gamma_grad_as_jax() -> None:
    a = dev(np.array([0.5, 1.0, 2.5, 10.0]))
    x = dev(np.array([0.3, 1.0, 2.0, 12.0]))
    # JAX 0.10.2 (x64)
    want_da = np.array([-0.770570351375352, -0.431729710634899, -0.2745513219458813,
                        -0.0971779720371793])
    assert_allclose(lax.igamma_grad_a(a, x), want_da, rtol=1e-9)
    assert_allclose(lax.random_gamma_grad(a, x), np.array(
        [1.0098019459488552, 1.1735630272247275, 0.9534627029186161, 1.112329443018088]),
        rtol=1e-9)
    assert_allclose(funcgrad.vmap(lax.igamma_grad_a)(a, x), want_da, rtol=1e-9)
    assert_allclose(funcgrad.jit(lax.igamma_grad_a)(a, x), want_da, rtol=1e-9)
    with pytest.raises(TypeError, match="igamma_grad_a"):
        lax.igamma_grad_a(dev(np.float32([1.0])), x[:1])
    # at x = 0 (a draw that underflowed) both are 0, as JAX's, not the series' 0 * log 0
    a0, x0 = dev(np.array([1e-3, 2.0, 0.5])), dev(np.zeros(3))
    assert host(lax.igamma_grad_a(a0, x0)).tolist() == [0.0, 0.0, 0.0]
    assert host(funcgrad.jit(lax.random_gamma_grad)(a0, x0)).tolist() == [0.0, 0.0, 0.0]


def test_broadcasted_iota_refuses_a_negative_dimension_as_jax() -> None:
    with pytest.raises(ValueError, match="iota dimension"):
        lax.broadcasted_iota(np.int32, (2, 3), -1)
    assert host(lax.broadcasted_iota(np.int32, (2, 3), 1)).tolist() == [[0, 1, 2], [0, 1, 2]]


def test_special_functions_take_jax_keyword_names():
    # JAX's parameter names (a, x), (a, b, x), (x, q), (x): keyword calls work as in JAX
    assert round(float(lax.igamma(a=2.0, x=3.0)), 6) == 0.800852
    assert round(float(lax.igammac(x=3.0, a=2.0)), 6) == 0.199148
    assert round(float(lax.betainc(0.5, b=2.0, x=0.3)), 6) == 0.739425
    assert round(float(lax.zeta(x=2.0, q=1.0)), 6) == 1.644934
    assert round(float(lax.bessel_i0e(x=1.0)), 6) == 0.46576
    with pytest.raises(TypeError):
        lax.igamma(2.0)


def test_float16_keeps_its_dtype():
    # JAX 0.10.2: lax.erf(float16) is float16 (values to float16's rounding)
    h = np.array([-1.5, -0.25, 0.5, 2.0], np.float16)
    cases = {"erf": [-0.9663, -0.2764, 0.5205, 0.995],
             "erfc": [1.966, 1.276, 0.4795, 0.004677],
             "lgamma": [0.86, 1.59, 0.5723, 0.0],
             "digamma": [0.703, 2.914, -1.964, 0.4229]}
    for name, want in cases.items():
        out = host(getattr(lax, name)(dev(h)))
        assert out.dtype == np.float16, name
        assert_allclose(out.astype(np.float64), np.array(want), rtol=2e-3, atol=1e-5)
    out = host(lax.erf_inv(dev(np.array([0.5], np.float16))))
    assert out.dtype == np.float16 and abs(float(out[0]) - 0.477) < 1e-3


def test_scipy_backed_lax_functions_keep_float16():
    # JAX 0.10.2's float16 values
    h = dev(np.array([1.5, 3.0], np.float16))
    cases = [(lax.bessel_i0e(h), [0.3674, 0.243]), (lax.bessel_i1e(h), [0.219, 0.1968]),
             (lax.igamma(h, h), [0.6084, 0.5767]), (lax.igammac(h, h), [0.3916, 0.423]),
             (lax.zeta(h + np.float16(1), h), [0.5903, 0.01982]),
             (lax.betainc(h, h, dev(np.array([0.3, 0.6], np.float16))), [0.2524, 0.6826])]
    for out, want in cases:
        out = host(out)
        assert out.dtype == np.float16
        assert_allclose(out.astype(np.float64), np.array(want), rtol=2e-3)
    assert host(lax.igamma_grad_a(h, h)).dtype == np.float16
    assert host(lax.random_gamma_grad(h, h)).dtype == np.float16
