"""Every distribution, KL rule and transform against torch.distributions' values recorded in
``fixtures/distributions.json`` (made by ``fixtures/make_distribution_fixtures.py``):
log_prob, cdf/icdf, entropy, moments, enumerate_support, and the gradients of log_prob,
entropy and KL with respect to every parameter; eagerly and under jit, on the test device."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import funcgrad
import funcgrad_nn.distributions as D
from tests.helpers import dev, host

HERE = pathlib.Path(__file__).parent / "fixtures"
DATA = json.loads((HERE / "distributions.json").read_text())
RTOL = 1e-8
#: where torch 2.13 is wrong and the fixture is not the reference: Kumaraswamy's mode is NaN
#: there for every b > 1 (it takes log1p(-b)); test_kumaraswamy_mode checks the true one
TORCH_WRONG = {("Kumaraswamy", "mode"), ("Weibull", "mode")}
#: torch evaluates VonMises' Bessel functions with polynomials good to ~1e-7 (relative),
#: which 1 - I1/I0 (the circular variance) amplifies at large concentration; funcgrad's are
#: exact (test_von_mises_is_exact)
CASE_RTOL = {"VonMises": 1e-4}
#: torch's Bregman KL (the Wishart pair) detaches p's natural parameters, so its gradient
#: with respect to p is zero; funcgrad's is the true one (test_behaviour checks it against
#: finite differences)
TORCH_WRONG_KL_GRAD = {("Wishart", "Wishart", "p")}


def _arr(v):
    def fix(x):
        if isinstance(x, list):
            return [fix(y) for y in x]
        if isinstance(x, str):
            return float(x)
        return x
    return np.array(fix(v), dtype=np.float64)


def _close(actual, expected, what, rtol=RTOL):
    expected = _arr(expected)
    actual = np.asarray(host(actual), dtype=np.float64)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    finite = np.isfinite(expected)
    scale = max(1.0, float(np.max(np.abs(expected[finite])))) if finite.any() else 1.0
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=rtol * scale, err_msg=what,
                               equal_nan=True)


def _params(spec):
    return {k: (dev(_arr(v)) if isinstance(v, list) else v) for k, v in spec.items()}


def _make(name, params):
    return getattr(D, name)(**params)


def _ids(cases, key):
    return [f"{i}-{c[key] if isinstance(c[key], str) else c[key][0]}" for i, c in
            enumerate(cases)]


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("case", DATA["cases"], ids=_ids(DATA["cases"], "name"))
def test_distribution_values(case, jit):
    name, params = case["name"], _params(case["params"])
    value = dev(_arr(case["value"]))
    d = _make(name, params)
    # Binomial's entropy and support need a concrete total_count (as in torch): it stays
    # outside the traced arguments
    fixed = {k: v for k, v in params.items() if k == "total_count" or not hasattr(v, "shape")}
    params = {k: v for k, v in params.items() if k not in fixed}
    assert list(d.batch_shape) == case["batch_shape"]
    assert list(d.event_shape) == case["event_shape"]
    assert d.has_rsample == case["has_rsample"]

    def values(p, v):
        d = _make(name, {**fixed, **p})
        out = {"log_prob": d.log_prob(v)}
        for attr in ("mean", "mode", "variance", "stddev"):
            if attr in case and (name, attr) not in TORCH_WRONG:
                out[attr] = getattr(d, attr)
        if "entropy" in case:
            out["entropy"] = d.entropy()
        if "cdf" in case:
            out["cdf"] = d.cdf(v)
        if "icdf" in case:
            out["icdf"] = d.icdf(funcgrad.numpy.full_like(d.mean, case["q"]))
        return out

    fn = funcgrad.jit(values) if jit else values
    got = fn(params, value)
    for k, v in got.items():
        _close(v, case[k], f"{name}.{k}", rtol=CASE_RTOL.get(name, 1e-7))
    if case.get("entropy_refused"):  # torch has no entropy here (or refuses these counts)
        with pytest.raises((ValueError, NotImplementedError), match="Inhomogeneous|entropy|_mean_carrier_measure"):
            d.entropy()
    if "enumerate_support" in case:
        _close(d.enumerate_support(), case["enumerate_support"], f"{name}.enumerate_support")
        _close(d.enumerate_support(expand=False), case["enumerate_support_noexpand"],
               f"{name}.enumerate_support(expand=False)")
    if case.get("enumerate_support_refused"):
        with pytest.raises(ValueError, match="Inhomogeneous"):
            d.enumerate_support()


def _diff_params(case):
    return {k: v for k, v in _params(case["params"]).items()
            if isinstance(v, (np.ndarray,)) or hasattr(v, "shape")}


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("case", DATA["cases"], ids=_ids(DATA["cases"], "name"))
def test_distribution_gradients(case, jit):
    name = case["name"]
    value = dev(_arr(case["value"]))
    fixed = {k: v for k, v in _params(case["params"]).items() if k == "total_count"
             or not hasattr(v, "shape")}
    wrt = {k: v for k, v in _params(case["params"]).items() if k not in fixed}

    def lp(p):
        return funcgrad.numpy.sum(_make(name, {**fixed, **p}).log_prob(value))

    def ent(p):
        return funcgrad.numpy.sum(_make(name, {**fixed, **p}).entropy())

    tr = funcgrad.jit if jit else (lambda f: f)
    g = tr(funcgrad.grad(lp))(wrt)
    for k, expected in case["log_prob_grad"].items():
        if k == "scale_tril" and expected is not None:
            # only the lower triangle is read: its upper entries have derivative zero (torch's
            # cholesky_solve backward reports nonzero ones for Wishart)
            assert not np.any(np.triu(np.asarray(host(g[k])), 1))
            expected = np.tril(_arr(expected))
        if k in g:
            _close(g[k], expected if expected is not None else np.zeros(np.shape(g[k])),
                   f"d {name}.log_prob / d {k}", rtol=max(1e-6, CASE_RTOL.get(name, 0)))
    if "entropy_grad" in case:
        g = tr(funcgrad.grad(ent))(wrt)
        for k, expected in case["entropy_grad"].items():
            if k in g:
                _close(g[k], expected if expected is not None else np.zeros(np.shape(g[k])),
                       f"d {name}.entropy / d {k}", rtol=1e-6)


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("case", DATA["kl"],
                         ids=[f"{i}-{c['p'][0]}-{c['q'][0]}" for i, c in enumerate(DATA["kl"])])
def test_kl_divergence(case, jit):
    (pn, ps), (qn, qs) = case["p"], case["q"]
    pp, qp = _params(ps), _params(qs)

    def kl(pp, qp):
        return D.kl_divergence(_make(pn, pp), _make(qn, qp))

    tr = funcgrad.jit if jit else (lambda f: f)
    _close(tr(kl)(pp, qp), case["kl"], f"KL({pn} || {qn})", rtol=1e-7)
    if "grad" in case:
        def total(pp, qp):
            return funcgrad.numpy.sum(kl(pp, qp))
        pw = {k: v for k, v in pp.items() if k != "total_count"}
        qw = {k: v for k, v in qp.items() if k != "total_count"}

        def f(pw, qw):
            return total({**pp, **pw}, {**qp, **qw})
        gp, gq = tr(funcgrad.grad(f, argnums=(0, 1)))(pw, qw)
        for name, expected in case["grad"].items():
            side, k = name.split(".")
            if (pn, qn, side) in TORCH_WRONG_KL_GRAD:
                continue
            got = (gp if side == "p" else gq)[k]
            if k == "scale_tril" and expected is not None:  # as in the log_prob gradients
                assert not np.any(np.triu(np.asarray(host(got)), 1))
                expected = np.tril(_arr(expected))
            _close(got, expected if expected is not None else np.zeros(np.shape(got)),
                   f"d KL({pn} || {qn}) / d {name}", rtol=1e-6)


@pytest.mark.parametrize("case", DATA["transforms"], ids=[c["name"] for c in DATA["transforms"]])
def test_transforms(case):
    t = getattr(D.transforms, case["name"])(**_params(case["params"]))
    x = dev(_arr(case["x"]))
    y = t(x)
    _close(y, case["y"], f"{case['name']}(x)")
    _close(t.inv(y), case["inv"], f"{case['name']}.inv(y)", rtol=1e-7)
    _close(t.log_abs_det_jacobian(x, y), case["ladj"], f"{case['name']}.log_abs_det_jacobian")
    _close(t.sign, case["sign"], f"{case['name']}.sign")
    # the Jacobian's log-determinant is the log-derivative of the map, elementwise
    _, dy = funcgrad.jvp(t, (x,), (funcgrad.numpy.ones_like(x),))
    _close(np.log(np.abs(host(dy))), case["ladj"], f"{case['name']}: log|dy/dx| by autodiff",
           rtol=1e-7)


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("case", DATA["mixtures"],
                         ids=[f"{i}-{c['component'][0]}" for i, c in enumerate(DATA["mixtures"])])
def test_mixture_same_family(case, jit):
    comp_name, comp_spec, reinterpreted = case["component"]
    mix, comp = _params(case["mixture"]), _params(comp_spec)
    value = dev(_arr(case["value"]))

    def make(mix, comp):
        c = getattr(D, comp_name)(**comp)
        if reinterpreted:
            c = D.Independent(c, reinterpreted)
        return D.MixtureSameFamily(D.Categorical(**mix), c)

    d = make(mix, comp)
    assert list(d.batch_shape) == case["batch_shape"]
    assert list(d.event_shape) == case["event_shape"]
    tr = funcgrad.jit if jit else (lambda f: f)
    _close(tr(lambda m, c: make(m, c).log_prob(value))(mix, comp), case["log_prob"],
           "MixtureSameFamily.log_prob")
    _close(d.mean, case["mean"], "MixtureSameFamily.mean")
    _close(d.variance, case["variance"], "MixtureSameFamily.variance")
    if "cdf" in case:
        _close(d.cdf(value), case["cdf"], "MixtureSameFamily.cdf")
    gm, gc = tr(funcgrad.grad(lambda m, c: funcgrad.numpy.sum(make(m, c).log_prob(value)),
                              argnums=(0, 1)))(mix, comp)
    for name, expected in case["log_prob_grad"].items():
        side, k = name.split(".")
        got = (gm if side == "mix" else gc)[k]
        _close(got, expected if expected is not None else np.zeros(np.shape(got)),
               f"d MixtureSameFamily.log_prob / d {name}", rtol=1e-6)


@pytest.mark.parametrize("case", DATA["biject"], ids=[c["constraint"] for c in DATA["biject"]])
def test_biject_to_and_transform_to(case):
    c = eval(case["constraint"], {"C": D.constraints})
    x = dev(_arr(case["x"]))
    for name, registry in (("biject_to", D.biject_to), ("transform_to", D.transform_to)):
        if name not in case:
            with pytest.raises(NotImplementedError, match="Cannot transform"):
                registry(c)
            continue
        t = registry(c)
        y = t(x)
        _close(y, case[name]["y"], f"{name}({case['constraint']})(x)")
        _close(t.inv(y), case[name]["inv"], f"{name}({case['constraint']}).inv(y)", rtol=1e-7)
        if "ladj" in case[name]:
            _close(t.log_abs_det_jacobian(x, y), case[name]["ladj"],
                   f"{name}({case['constraint']}).log_abs_det_jacobian")
        assert np.all(np.asarray(host(c.check(y)))), f"{name}: the image is outside {c!r}"


def test_weibull_mode():
    """The density's maximiser: 0 when the concentration is at most 1 (torch: NaN or, for an
    even 1/c, a spurious positive value)."""
    d = D.Weibull(dev(np.array([2.0, 1.0, 1.0])), dev(np.array([1.5, 0.8, 0.5])))
    np.testing.assert_allclose(host(d.mode), [2.0 * (1 / 3) ** (1 / 1.5), 0.0, 0.0])


def test_kumaraswamy_mode():
    """The mode maximises the density (torch's expression is NaN here, see TORCH_WRONG)."""
    a, b = np.array([2.0, 3.0]), np.array([3.0, 1.5])
    d = D.Kumaraswamy(dev(a), dev(b))
    grid = np.linspace(1e-4, 1 - 1e-4, 200001)
    lp = np.asarray(host(d.log_prob(dev(np.stack([grid, grid], -1)))))
    np.testing.assert_allclose(host(d.mode), grid[lp.argmax(0)], atol=1e-4)
    assert np.isnan(host(D.Kumaraswamy(0.5, 2.0).mode))


def test_von_mises_is_exact():
    """log_prob integrates to one over the circle and the circular variance is
    1 - E[cos(x - loc)], both to quadrature precision."""
    d = D.VonMises(dev(np.array([0.5, -2.0, 3.0])), dev(np.array([2.0, 0.1, 50.0])))
    theta = np.linspace(-np.pi, np.pi, 20001)
    p = np.exp(np.asarray(host(d.log_prob(dev(theta[:, None])))))
    np.testing.assert_allclose(np.trapezoid(p, theta, axis=0), 1.0, rtol=1e-12)
    circ = 1 - np.trapezoid(p * np.cos(theta[:, None] - host(d.loc)), theta, axis=0)
    np.testing.assert_allclose(host(d.variance), circ, rtol=1e-10)
