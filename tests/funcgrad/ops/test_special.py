"""Focused tests of the special-function primitives and funcgrad.scipy.special: accuracy
against SciPy (and mpmath where SciPy itself is inexact), special values, stable gradients."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import DEVICE, assert_allclose, check_device, dev, expected_fp_warnings, host, rand

import funcgrad
import funcgrad.numpy as fnp
import funcgrad.scipy.special as fsp
from funcgrad.errors import DTypeError
from funcgrad.test_util import check_grads

sp = pytest.importorskip("scipy.special")


def _rel_err(got, want):
    got, want = np.asarray(host(got), np.float64), np.asarray(want, np.float64)
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    err = np.abs(got - want) / np.maximum(np.abs(want), np.finfo(np.float64).tiny)
    return np.where(same, 0.0, err)


def _sweep(low, high, n=4000, seed=0, log=False):
    rng = np.random.default_rng(seed)
    if log:
        return np.exp(rng.uniform(np.log(low), np.log(high), n))
    return rng.uniform(low, high, n)


# ---------------------------------------------------------------------------------------------
# Accuracy (float64, ~1e-13 relative)


@pytest.mark.parametrize("name,xs,rtol", [
    ("erf", np.concatenate([_sweep(-6, 6), _sweep(1e-300, 0.5, log=True)]), 1e-14),
    ("erfc", np.concatenate([_sweep(-6, 26), _sweep(1e-300, 0.5, log=True)]), 1e-13),
    ("erfinv", np.concatenate([_sweep(-1, 1), 1 - _sweep(1e-16, 0.5, log=True),
                               _sweep(1e-300, 1e-3, log=True)]), 1e-14),
    ("erfcinv", np.concatenate([_sweep(0, 2), _sweep(1e-300, 0.5, log=True),
                                2 - _sweep(1e-16, 0.5, log=True)]), 1e-13),
    ("gammaln", np.concatenate([_sweep(0.0, 0.99), _sweep(1.01, 1.99), _sweep(2.01, 40),
                                _sweep(40, 1e300, log=True), _sweep(1e-300, 1e-3, log=True)]),
     1e-13),
    ("digamma", np.concatenate([_sweep(1e-6, 1.3), _sweep(1.6, 40), _sweep(40, 1e300, log=True)]),
     1e-13),
])
@expected_fp_warnings
def test_accuracy_against_scipy(name, xs, rtol) -> None:
    got = getattr(fsp, name)(dev(xs))
    err = _rel_err(got, getattr(sp, name)(xs))
    assert err.max() < rtol, (name, xs[err.argmax()], err.max())


@pytest.mark.parametrize("n", [1, 2, 3, 5, 10, 20])
def test_polygamma_accuracy(n) -> None:
    xs = np.concatenate([_sweep(0.01, 30, seed=n), _sweep(30, 1e5, n=500, log=True)])
    assert _rel_err(fsp.polygamma(n, dev(xs)), sp.polygamma(n, xs)).max() < 1e-13
    neg = np.array([-0.5, -1.25, -2.7, -3.3])
    assert _rel_err(fsp.polygamma(n, dev(neg)), sp.polygamma(n, neg)).max() < 1e-12


def test_accuracy_near_the_zeros() -> None:
    """lgamma at 1 and 2 and digamma at its root keep full relative accuracy (SciPy's
    gammaln loses digits there, so mpmath is the reference)."""
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 40
    xs = [1 + 1e-10, 1 - 3e-9, 2 - 1e-12, 2 + 1e-7, 0.9999, 1.4616321449683622,
          1.4616321449683622 + 1e-9]
    for x in xs:
        want = float(mp.loggamma(mp.mpf(x)))
        assert abs(float(host(fsp.gammaln(x))) - want) <= 1e-14 * abs(want), x
        want = float(mp.digamma(mp.mpf(x)))
        assert abs(float(host(fsp.digamma(x))) - want) <= 2e-14 * abs(want) + 1e-30, x


def test_special_values() -> None:
    inf, nan = np.inf, np.nan
    x = np.array([0.0, -0.0, inf, -inf, nan, 1.0, -1.0, 2.0, -2.5])
    for name in ("erf", "erfc", "gammaln", "digamma", "expit", "ndtr"):
        got = np.asarray(host(getattr(fsp, name)(dev(x))))
        want = getattr(sp, name)(x)
        np.testing.assert_allclose(got, want, rtol=1e-14, atol=0, err_msg=name)
        assert np.array_equal(np.signbit(got[np.isfinite(want)]),
                              np.signbit(want[np.isfinite(want)])) or name == "digamma"
    y = np.array([-1.0, 1.0, 0.0, -0.0, 1.5, -1.5, nan])
    np.testing.assert_array_equal(host(fsp.erfinv(dev(y))), sp.erfinv(y))
    c = np.array([0.0, 2.0, 1.0, -0.1, 2.1, nan])
    np.testing.assert_array_equal(host(fsp.erfcinv(dev(c))), sp.erfcinv(c))
    np.testing.assert_array_equal(host(fsp.polygamma(1, dev(np.array([0.0, -1.0, inf])))),
                                  sp.polygamma(1, np.array([0.0, -1.0, inf])))
    assert float(host(fsp.polygamma(2, dev(np.array(0.0))))) == -inf


def test_roundtrips() -> None:
    x = _sweep(-5.5, 5.5, n=500)
    assert_allclose(fsp.erfinv(fsp.erf(dev(x[np.abs(x) < 3]))), x[np.abs(x) < 3],
                    rtol=1e-12, atol=1e-13)
    pos = x[x > -0.5]  # erfc(x) is 2 - tiny below: the inverse is ill-conditioned there
    assert_allclose(fsp.erfcinv(fsp.erfc(dev(pos))), pos, rtol=1e-12, atol=1e-13)
    p = _sweep(1e-200, 1.0, n=500, log=True)
    assert_allclose(fsp.ndtr(fsp.ndtri(dev(p))), p, rtol=1e-12, atol=0)


@expected_fp_warnings
def test_dtypes() -> None:
    for name in ("erf", "erfc", "erfinv", "erfcinv", "gammaln", "digamma", "expit", "logit"):
        fn = getattr(fsp, name)
        assert fn(dev(np.full(3, 0.5, np.float32))).dtype == np.float32, name
        assert fn(dev(np.full(3, 1, np.int64))).dtype == np.float64, name
        assert fn(dev(np.full(3, 0.5, np.float16))).dtype == np.float64, name
    # NEP 50: a Python float takes the array's float32.
    assert fsp.xlogy(dev(np.ones(2, np.float32)), 2.0).dtype == np.float32
    assert fsp.polygamma(1, dev(np.ones(2, np.float32))).dtype == np.float64  # as SciPy
    with pytest.raises(DTypeError, match="complex"):
        fsp.erf(dev(np.ones(2, np.complex128)))
    with pytest.raises(DTypeError, match="gammaln"):
        fsp.gammaln(dev(np.ones(2, np.complex128)))


def test_polygamma_orders() -> None:
    x = dev(np.array([0.5, 2.0, 7.5]))
    assert_allclose(fsp.polygamma(0, x), sp.digamma(np.array([0.5, 2.0, 7.5])))
    n = np.array([0, 1, 3])
    assert_allclose(fsp.polygamma(n, x), sp.polygamma(n, np.array([0.5, 2.0, 7.5])),
                    rtol=1e-13)
    with pytest.raises(ValueError, match="non-negative"):
        fsp.polygamma(-1, x)
    with pytest.raises(TypeError, match="integer"):
        fsp.polygamma(1.5, x)


# ---------------------------------------------------------------------------------------------
# Derivatives


def test_derivatives_are_the_known_formulas() -> None:
    x = dev(np.array([0.3, 1.7, 4.2]))
    xh = np.array([0.3, 1.7, 4.2])
    g = funcgrad.elementwise_grad if hasattr(funcgrad, "elementwise_grad") else None
    assert g is not None
    assert_allclose(g(fsp.gammaln)(x), sp.digamma(xh), rtol=1e-13)
    assert_allclose(g(fsp.digamma)(x), sp.polygamma(1, xh), rtol=1e-13)
    assert_allclose(g(g(fsp.digamma))(x), sp.polygamma(2, xh), rtol=1e-13)
    assert_allclose(g(fsp.erf)(x), 2 / np.sqrt(np.pi) * np.exp(-xh**2), rtol=1e-14)
    y = dev(np.array([-0.7, 0.1, 0.95]))
    yh = np.array([-0.7, 0.1, 0.95])
    assert_allclose(g(fsp.erfinv)(y), np.sqrt(np.pi) / 2 * np.exp(sp.erfinv(yh) ** 2),
                    rtol=1e-13)


def test_logsumexp_gradient_at_large_inputs_does_not_overflow() -> None:
    a = np.array([1000.0, 1000.0, -1000.0, 999.0])
    g = funcgrad.grad(fsp.logsumexp)(dev(a))
    assert_allclose(g, sp.softmax(a), rtol=1e-14, atol=1e-300)
    assert np.all(np.isfinite(host(g)))
    a32 = np.array([80.0, 90.0, 100.0], np.float32)
    g32 = funcgrad.grad(fsp.logsumexp)(dev(a32))
    assert g32.dtype == np.float32 and np.all(np.isfinite(host(g32)))
    # Second order: the Hessian diag(p) - p p^T.
    p = sp.softmax(a)
    h = funcgrad.hessian(fsp.logsumexp)(dev(a))
    assert_allclose(h, np.diag(p) - np.outer(p, p), rtol=1e-12, atol=1e-14)
    # Weighted, including a zero weight (which still has the derivative exp(a - out)).
    b = np.array([1.0, 2.0, 0.0, 0.5])
    out = sp.logsumexp(a, b=b)
    gb = funcgrad.grad(lambda w: fsp.logsumexp(dev(a), b=w))(dev(b))
    assert_allclose(gb, np.exp(a - out), rtol=1e-12, atol=1e-300)
    check_grads(lambda v, w: fsp.logsumexp(v, b=w), dev((a / 100, b + 0.5)), order=2)


@expected_fp_warnings
def test_logsumexp_edge_values() -> None:
    inf = np.inf
    for a in ([-inf, -inf], [inf, 1.0], [1.0, np.nan], [0.0, -50.0], [-inf, 2.0]):
        a = np.array(a)
        np.testing.assert_allclose(host(fsp.logsumexp(dev(a))), sp.logsumexp(a), rtol=1e-14)
    a = np.array([[1.0, 2.0], [3.0, 3.0]])
    b = np.array([[1.0, -1.0], [1.0, 1.0]])
    with np.errstate(invalid="ignore"):
        want = sp.logsumexp(a, axis=1, b=b)
    np.testing.assert_allclose(host(fsp.logsumexp(dev(a), axis=1, b=dev(b))), want)
    r, s = fsp.logsumexp(dev(a), axis=1, b=dev(b), return_sign=True)
    wr, ws = sp.logsumexp(a, axis=1, b=b, return_sign=True)
    assert_allclose((r, s), (wr, ws))


def test_max_shift_under_stop_gradient_matches_differentiating_through_it() -> None:
    # logsumexp/softmax/log_softmax hold their max shift under stop_gradient (as JAX does);
    # values and derivatives to second order equal the formulation that differentiates
    # through the shift, to rounding, where the maximum is unique.
    x = rand((3, 5), np.float64, -4, 4)

    def lse_through(v):
        m = fnp.max(v, axis=1, keepdims=True)
        return fnp.squeeze(m + fnp.log(fnp.sum(fnp.exp(v - m), axis=1, keepdims=True)), 1)

    def sm_through(v):
        e = fnp.exp(v - fnp.max(v, axis=1, keepdims=True))
        return e / fnp.sum(e, axis=1, keepdims=True)

    def lsm_through(v):
        t = v - fnp.max(v, axis=1, keepdims=True)
        return t - fnp.log(fnp.sum(fnp.exp(t), axis=1, keepdims=True))

    w = rand((3, 5), np.float64, -1, 1)
    pairs = ((lambda v: fsp.logsumexp(v, axis=1), lse_through),
             (lambda v: fsp.softmax(v, axis=1), sm_through),
             (lambda v: fsp.log_softmax(v, axis=1), lsm_through))
    for new, old in pairs:
        assert_allclose(new(dev(x)), old(dev(x)), rtol=1e-14, atol=1e-15)
        for f in (new, old):
            check_grads(f, dev((x,)), order=2)

        def scalar(fn):
            return lambda v: fnp.sum(fn(v) * dev(w[..., :fn(v).shape[-1]]))

        assert_allclose(funcgrad.grad(scalar(new))(dev(x)), funcgrad.grad(scalar(old))(dev(x)),
                        rtol=1e-12, atol=1e-14)
        assert_allclose(funcgrad.hessian(scalar(new))(dev(x)),
                        funcgrad.hessian(scalar(old))(dev(x)), rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("axis, keepdims", [(None, False), (1, False), (-1, True),
                                           ((0, 2), False), ((0, 2), True)])
@pytest.mark.parametrize("weights", ["none", "positive", "signed"])
def test_logsumexp_values_and_derivatives_match_the_unshifted_formula(axis, keepdims,
                                                                      weights) -> None:
    # The max shift is under stop_gradient (as JAX writes it): values and derivatives, to
    # second order, equal those of the textbook log(sum(b * exp(a))) (computed where it
    # cannot overflow), with weights, return_sign, -inf entries, tuple axes and keepdims.
    rng = np.random.default_rng(7)
    a = rng.uniform(-3, 3, (3, 4, 5))
    a[0, 1, 2] = a[2, 3, 0] = -np.inf  # no derivative there; the rest unchanged
    b = None
    if weights == "positive":
        b = rng.uniform(0.5, 1.5, (1, 4, 5))  # broadcast against a
    elif weights == "signed":
        b = -rng.uniform(0.5, 1.5, (3, 4, 5))  # negative sums: sign -1 ...
        b[0, 0, 1] = 0.05  # ... with a term of the other sign in some of them
    return_sign = weights == "signed"
    w = rng.uniform(-1, 1, np.shape(sp.logsumexp(a, axis=axis, keepdims=keepdims)))

    def ours(v):
        r = fsp.logsumexp(v, axis=axis, b=None if b is None else dev(b), keepdims=keepdims,
                          return_sign=return_sign)
        return r if return_sign else (r, None)

    def textbook(v):
        s = fnp.sum(fnp.exp(v) * (1.0 if b is None else dev(b)), axis=axis, keepdims=keepdims)
        return fnp.log(fnp.abs(s)), fnp.sign(s)

    with np.errstate(divide="ignore"):
        want = sp.logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=return_sign)
    got, sign = ours(dev(a))
    if return_sign:
        want, want_sign = want
        np.testing.assert_array_equal(host(sign), want_sign)
        np.testing.assert_array_equal(host(textbook(dev(a))[1]), want_sign)
    assert_allclose(got, want, rtol=1e-13, atol=1e-14)
    assert_allclose(got, textbook(dev(a))[0], rtol=1e-13, atol=1e-14)

    def scalar(fn):
        return lambda v: fnp.sum(fn(v)[0] * dev(w))

    g, g_ref = funcgrad.grad(scalar(ours))(dev(a)), funcgrad.grad(scalar(textbook))(dev(a))
    assert_allclose(g, g_ref, rtol=1e-12, atol=1e-14)
    assert host(g)[0, 1, 2] == 0 and host(g)[2, 3, 0] == 0
    flat = a.reshape(-1)
    finite = np.isfinite(flat)
    pick = np.eye(flat.size)[:, finite]  # finite entries -> their places

    def on_finite(fn):
        # the Hessian in the finite entries (the -inf ones have none)
        def h(v):
            full = fnp.where(dev(finite), dev(pick) @ v, dev(flat))
            return scalar(fn)(fnp.reshape(full, a.shape))
        return h

    x0 = dev(flat[finite])
    assert_allclose(funcgrad.hessian(on_finite(ours))(x0),
                    funcgrad.hessian(on_finite(textbook))(x0), rtol=1e-10, atol=1e-12)


def test_safe_gradients_at_zero() -> None:
    for fn in (fsp.xlogy, fsp.xlog1py):
        g = funcgrad.grad(lambda x, y, fn=fn: fnp.sum(fn(x, y)), argnums=(0, 1))(
            dev(np.array([0.0, 0.0, 2.0])), dev(np.array([0.0, 1.0, 3.0])))
        assert all(np.all(np.isfinite(host(v))) for v in g)
    g = funcgrad.grad(lambda x: fnp.sum(fsp.entr(x)))(dev(np.array([0.0, 0.5])))
    assert np.all(np.isfinite(host(g)))
    g = funcgrad.grad(lambda x: fnp.sum(fsp.logit(x)))(dev(np.array([0.29, 0.31, 0.5, 0.66])))
    xh = np.array([0.29, 0.31, 0.5, 0.66])
    assert_allclose(g, 1 / (xh * (1 - xh)), rtol=1e-12)


def test_softmax_family() -> None:
    x = rand((2, 3), np.float64, -3, 3)
    assert_allclose(fnp.sum(fsp.softmax(dev(x), axis=1), axis=1), np.ones(2))
    assert_allclose(fsp.log_softmax(dev(x * 1e3), axis=0), sp.log_softmax(x * 1e3, axis=0))
    assert_allclose(fsp.log_expit(dev(np.array([-1000.0, 0.0, 1000.0]))),
                    sp.log_expit(np.array([-1000.0, 0.0, 1000.0])))
    check_grads(lambda v: fsp.log_softmax(v, axis=1), dev((x,)), order=2)


def test_strict_device_and_transformations() -> None:
    x = dev(np.array([0.2, 1.5, 3.0]))
    outs = [fsp.erf(x), fsp.gammaln(x), fsp.digamma(x), fsp.polygamma(2, x), fsp.logsumexp(x),
            fsp.softmax(x), fsp.xlogy(x, x), funcgrad.grad(lambda v: fnp.sum(fsp.gammaln(v)))(x),
            funcgrad.jit(fsp.erfinv)(fsp.erf(x)), funcgrad.vmap(fsp.digamma)(x)]
    check_device(outs)
    if DEVICE != "cpu":
        assert all(not isinstance(o, np.ndarray) for o in outs)
    assert "lgamma" in str(funcgrad.make_jaxpr(fsp.gammaln)(1.5))
