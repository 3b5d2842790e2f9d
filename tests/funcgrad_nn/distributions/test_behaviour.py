"""torch.distributions' behaviour beyond the numbers: argument and value validation (with
torch's messages), shapes and broadcasting, ``expand``, ``enumerate_support``, constraints,
the KL table's dispatch and ``register_kl``, transforms' algebra."""

from __future__ import annotations

import re

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
import funcgrad_nn as nn
import funcgrad_nn.distributions as D
from funcgrad_nn.distributions import constraints
from funcgrad_nn.distributions import transforms as T
from tests.helpers import dev, expected_fp_warnings, host

A = lambda *v: dev(np.array(v, dtype=np.float64))  # noqa: E731


def test_exported_from_funcgrad_nn():
    assert nn.distributions is D
    assert D.Normal.__module__.startswith("funcgrad_nn.distributions")


# -- validation ----------------------------------------------------------------------------

@pytest.mark.parametrize("make,message", [
    (lambda: D.Normal(0.0, -1.0),
     r"Expected parameter scale \(\w+ of shape \(\)\) of distribution Normal\(loc: 0.0, "
     r"scale: -1.0\) to satisfy the constraint GreaterThan\(lower_bound=0.0\), but found "
     r"invalid values:\n-1.0"),
    (lambda: D.Bernoulli(probs=A(0.5, 1.5)),
     r"Expected parameter probs \(\w+ of shape \(2,\)\) of distribution Bernoulli\(probs: "
     r"\(2,\)\) to satisfy the constraint Interval\(lower_bound=0.0, upper_bound=1.0\)"),
    (lambda: D.Uniform(1.0, 0.0),
     r"Expected parameter low .* to satisfy the constraint LessThan\(upper_bound=0.0\)"),
    (lambda: D.MultivariateNormal(A(0.0, 0.0), A([1.0, 2.0], [2.0, 1.0])),
     r"Expected parameter covariance_matrix .* PositiveDefinite\(\)"),
    (lambda: D.MultivariateNormal(A(0.0, 0.0), scale_tril=A([1.0, 0.5], [0.0, 1.0])),
     r"LowerCholesky\(\)"),
    (lambda: D.Categorical(probs=A(-0.5, 1.5)), r"Simplex\(\)"),
    (lambda: D.Dirichlet(A(1.0, 0.0)), r"IndependentConstraint\(GreaterThan\(lower_bound=0.0\), 1\)"),
    (lambda: D.Binomial(A(2.5), probs=A(0.5)), r"IntegerGreaterThan\(lower_bound=0\)"),
    (lambda: D.Geometric(probs=A(0.0)), r"Expected parameter probs .* to be positive"),
    (lambda: D.Bernoulli(), r"Either `probs` or `logits` must be specified, but not both."),
    (lambda: D.Bernoulli(0.5, 0.0), r"Either `probs` or `logits` must be specified"),
    (lambda: D.Categorical(probs=A(0.3)[0]), r"`probs` parameter must be at least one-dimensional."),
    (lambda: D.Dirichlet(A(1.0)[0]), r"`concentration` parameter must be at least one-dimensional."),
    (lambda: D.MultivariateNormal(A(0.0, 0.0)),
     r"Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified."),
    (lambda: D.MultivariateNormal(A(0.0), A(1.0)), r"covariance_matrix must be at least two-dimensional"),
    (lambda: D.MultivariateNormal(A(0.0, 0.0), A([1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0])),
     r"covariance_matrix must be a batch of 2 x 2 matrices"),
    (lambda: D.Independent(D.Normal(A(0.0, 0.0), 1.0), 2),
     r"Expected reinterpreted_batch_ndims <= len\(base_distribution.batch_shape\), actual 2 vs 1"),
    (lambda: D.LowRankMultivariateNormal(A(0.0, 0.0), A(1.0, 1.0), A(1.0, 1.0)),
     r"cov_factor must be at least two-dimensional"),
])
def test_invalid_arguments(make, message):
    with pytest.raises(ValueError, match=message):
        make()


@pytest.mark.parametrize("make,value,message", [
    (lambda: D.Bernoulli(probs=A(0.3)[0]), 0.5,
     r"Expected value argument \(\w+ of shape \(\)\) to be within the support \(Boolean\(\)\) "
     r"of the distribution Bernoulli\(probs: 0.3\), but found invalid values:\n0.5"),
    (lambda: D.Poisson(A(2.0)[0]), 1.5, r"IntegerGreaterThan\(lower_bound=0\)"),
    (lambda: D.Gamma(1.0, 1.0), -1.0, r"GreaterThanEq\(lower_bound=0.0\)"),
    (lambda: D.Beta(2.0, 2.0), 1.5, r"Interval\(lower_bound=0.0, upper_bound=1.0\)"),
    (lambda: D.Categorical(logits=A(0.0, 0.0)), 2, r"IntegerInterval\(lower_bound=0, upper_bound=1\)"),
    (lambda: D.Dirichlet(A(1.0, 1.0)), np.array([0.5, 0.6]), r"Simplex\(\)"),
    (lambda: D.Normal(A(0.0, 1.0), 1.0), np.zeros(3),
     r"Value is not broadcastable with batch_shape\+event_shape: \(3,\) vs \(2,\)."),
    (lambda: D.MultivariateNormal(A(0.0, 0.0), A([1.0, 0.0], [0.0, 1.0])), np.zeros(3),
     r"The right-most size of value must match event_shape: \(3,\) vs \(2,\)."),
])
def test_invalid_values(make, value, message):
    d = make()
    value = dev(np.asarray(value, dtype=np.float64)) if not isinstance(value, float) else value
    with pytest.raises(ValueError, match=message):
        d.log_prob(value)


@expected_fp_warnings
def test_validation_switches():
    d = D.Normal(0.0, -1.0, validate_args=False)
    assert np.isnan(float(host(d.entropy())))
    assert not D.Bernoulli(probs=0.3, validate_args=False)._validate_args
    D.Distribution.set_default_validate_args(False)
    try:
        D.Normal(0.0, -1.0)
        D.Bernoulli(probs=0.3).log_prob(fnp.asarray(0.5))
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Normal(0.0, -1.0)
    with pytest.raises(ValueError, match="expected True or False"):
        D.Distribution.set_default_validate_args("yes")


@expected_fp_warnings
def test_validation_runs_under_grad_and_is_skipped_under_jit():
    with pytest.raises(ValueError, match="Expected parameter scale"):
        funcgrad.grad(lambda s: D.Normal(0.0, s).log_prob(0.0))(-1.0)
    # under jit the values are unknown while tracing: no check, NaN as torch without checks
    out = funcgrad.jit(lambda s: D.Normal(0.0, s).entropy())(A(-1.0)[0])
    assert np.isnan(float(host(out)))


# -- shapes --------------------------------------------------------------------------------

def test_shapes_and_broadcasting():
    d = D.Normal(A([0.0], [1.0]), A(1.0, 2.0, 3.0))
    assert d.batch_shape == (2, 3) and d.event_shape == ()
    assert d.sample((4, 5), key=0).shape == (4, 5, 2, 3)
    assert d.log_prob(A(0.5, 0.5, 0.5)).shape == (2, 3)
    assert d.log_prob(dev(np.zeros((7, 1, 1)))).shape == (7, 2, 3)
    assert D.Normal(0.0, 1.0).batch_shape == ()
    assert D.Normal(0.0, 1.0).sample(3, key=0).shape == (3,)
    m = D.MultivariateNormal(dev(np.zeros((4, 3))), dev(np.eye(3)))
    assert (m.batch_shape, m.event_shape) == ((4,), (3,))
    assert m.rsample((2,), key=0).shape == (2, 4, 3)
    assert m.log_prob(dev(np.zeros((5, 1, 3)))).shape == (5, 4)
    assert m.entropy().shape == (4,) and m.scale_tril.shape == (4, 3, 3)
    c = D.Categorical(logits=dev(np.zeros((2, 5))))
    assert (c.batch_shape, c.event_shape, c.param_shape) == ((2,), (), (2, 5))
    o = D.OneHotCategorical(logits=dev(np.zeros((2, 5))))
    assert (o.batch_shape, o.event_shape) == ((2,), (5,))
    assert o.sample((3,), key=0).shape == (3, 2, 5)


@pytest.mark.parametrize("make,batch,param,shape", [
    (lambda: D.Normal(0.0, 1.0), (2, 3), "loc", (2, 3)),
    (lambda: D.Normal(A(0.0, 1.0), 1.0), (3, 2), "scale", (3, 2)),
    (lambda: D.Bernoulli(logits=A(0.0, 1.0)), (4, 2), "logits", (4, 2)),
    (lambda: D.Categorical(logits=dev(np.zeros(3))), (2,), "logits", (2, 3)),
    (lambda: D.Dirichlet(A(1.0, 2.0)), (5,), "concentration", (5, 2)),
    (lambda: D.MultivariateNormal(A(0.0, 0.0), dev(np.eye(2))), (4,), "covariance_matrix",
     (4, 2, 2)),
    (lambda: D.Beta(2.0, 3.0), (3,), "concentration1", (3,)),
    (lambda: D.Independent(D.Normal(A(0.0, 0.0), 1.0), 1), (3,), "mean", (3, 2)),
    (lambda: D.LogNormal(0.0, 1.0), (2,), "loc", (2,)),
    (lambda: D.OneHotCategorical(probs=A(0.5, 0.5)), (3,), "probs", (3, 2)),
    (lambda: D.Binomial(5, probs=A(0.5)), (3, 1), "total_count", (3, 1)),
    (lambda: D.LowRankMultivariateNormal(A(0.0, 0.0), A([1.0], [0.0]), A(1.0, 1.0)), (3,),
     "loc", (3, 2)),
])
def test_expand(make, batch, param, shape):
    d = make()
    e = d.expand(batch)
    assert e.batch_shape == batch and e.event_shape == d.event_shape
    assert tuple(getattr(e, param).shape) == shape
    x = e.sample(key=0)
    assert x.shape == batch + d.event_shape
    np.testing.assert_allclose(host(e.log_prob(x)),
                               host(fnp.broadcast_to(d.log_prob(x), batch)), rtol=1e-6)
    assert type(e) is type(d) and e._validate_args == d._validate_args


def test_expand_refuses_incompatible_shapes():
    with pytest.raises(ValueError, match=r"cannot be expanded to \(3,\)"):
        D.Normal(A(0.0, 1.0), 1.0).expand((3,))


def test_enumerate_support():
    b = D.Bernoulli(probs=A(0.2, 0.7))
    assert host(b.enumerate_support()).tolist() == [[0.0, 0.0], [1.0, 1.0]]
    assert b.enumerate_support(expand=False).shape == (2, 1)
    c = D.Categorical(probs=dev(np.full((2, 3), 1 / 3)))
    assert c.enumerate_support().shape == (3, 2) and c.enumerate_support().dtype == np.int64
    # summing the probabilities over the support gives one
    total = fnp.sum(fnp.exp(c.log_prob(c.enumerate_support())), axis=0)
    np.testing.assert_allclose(host(total), [1.0, 1.0])
    o = D.OneHotCategorical(probs=A(0.2, 0.8))
    assert host(o.enumerate_support()).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert D.Independent(D.Bernoulli(probs=A(0.5, 0.5)), 1).has_enumerate_support is False
    with pytest.raises(ValueError, match="enumeration over the cartesian product"):
        D.Independent(D.Bernoulli(probs=A(0.5, 0.5)), 1).enumerate_support()


def test_lazy_probs_logits():
    b = D.Bernoulli(logits=A(0.0))
    assert "probs" not in b.__dict__
    np.testing.assert_allclose(host(b.probs), [0.5])
    assert "probs" in b.__dict__
    c = D.Categorical(probs=A(1.0, 3.0))  # normalised, as torch
    np.testing.assert_allclose(host(c.probs), [0.25, 0.75])
    np.testing.assert_allclose(host(c.logits), np.log([0.25, 0.75]))


def test_repr():
    assert repr(D.Normal(0.0, 1.0)) == "Normal(loc: 0.0, scale: 1.0)"
    assert repr(D.Bernoulli(logits=A(0.0, 1.0))) == "Bernoulli(logits: (2,))"
    assert repr(D.Independent(D.Normal(0.0, 1.0).expand((2,)), 1)) == \
        "Independent(Normal(loc: (2,), scale: (2,)), 1)"


# -- constraints ---------------------------------------------------------------------------

def test_constraints():
    x = A(-1.0, 0.0, 0.5, 1.0, 2.0)
    assert host(constraints.positive.check(x)).tolist() == [False, False, True, True, True]
    assert host(constraints.nonnegative.check(x)).tolist() == [False, True, True, True, True]
    assert host(constraints.unit_interval.check(x)).tolist() == [False, True, True, True, False]
    assert host(constraints.half_open_interval(0.0, 1.0).check(x)).tolist() == \
        [False, True, True, False, False]
    assert host(constraints.boolean.check(x)).tolist() == [False, True, False, True, False]
    assert host(constraints.nonnegative_integer.check(x)).tolist() == \
        [False, True, False, True, True]
    assert host(constraints.real_vector.check(dev(np.array([[0.0, np.nan], [1.0, 2.0]])))
                ).tolist() == [False, True]
    assert bool(host(constraints.simplex.check(A(0.2, 0.8))))
    assert bool(host(constraints.one_hot.check(A(0.0, 1.0))))
    assert bool(host(constraints.lower_cholesky.check(A([1.0, 0.0], [3.0, 2.0]))))
    assert not bool(host(constraints.positive_definite.check(A([1.0, 2.0], [2.0, 1.0]))))
    assert bool(host(constraints.positive_semidefinite.check(A([1.0, 1.0], [1.0, 1.0]))))
    assert constraints.independent(constraints.real, 2).event_dim == 2
    assert constraints.is_dependent(D.Uniform.support)
    assert constraints.interval(0, 1).check(0.5)
    assert repr(constraints.integer_interval(0, 3)) == "IntegerInterval(lower_bound=0, upper_bound=3)"
    with pytest.raises(ValueError, match="Cannot determine validity of dependent constraint"):
        constraints.dependent.check(0.0)
    assert constraints.positive.is_discrete is False and constraints.boolean.is_discrete


# -- KL ------------------------------------------------------------------------------------

def test_kl_dispatch_and_registration():
    # a rule for a family serves its subclasses (Chi2 is a Gamma)
    kl = D.kl_divergence(D.Chi2(A(3.0)), D.Gamma(A(1.5), A(0.5)))
    np.testing.assert_allclose(host(kl), [0.0], atol=1e-12)
    with pytest.raises(NotImplementedError, match="No KL\\(p \\|\\| q\\) is implemented for p type "
                                                  "Normal and q type Categorical"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Categorical(probs=A(0.5, 0.5)))
    # two exponential families meet in the Bregman rule, which refuses them (as torch)
    with pytest.raises(NotImplementedError, match="different exponential families"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Bernoulli(probs=0.5))

    class Special(D.Normal):
        pass

    @D.register_kl(Special, D.Normal)
    def _rule(p, q):
        return fnp.full(p.batch_shape, 42.0)

    assert float(host(D.kl_divergence(Special(0.0, 1.0), D.Normal(0.0, 1.0)))) == 42.0
    # the plain pair still uses the Normal rule
    assert float(host(D.kl_divergence(D.Normal(0.0, 1.0), D.Normal(0.0, 1.0)))) == 0.0
    with pytest.raises(TypeError, match="Distribution subclass"):
        D.register_kl(int, D.Normal)


def test_kl_of_independent_and_infinite_pairs():
    p = D.Independent(D.Normal(A(0.0, 1.0), 1.0), 1)
    q = D.Independent(D.Normal(A(1.0, 1.0), 2.0), 1)
    expected = host(D.kl_divergence(p.base_dist, q.base_dist)).sum()
    np.testing.assert_allclose(host(D.kl_divergence(p, q)), expected)
    assert np.isinf(float(host(D.kl_divergence(D.Normal(0.0, 1.0), D.Uniform(0.0, 1.0)))))
    u = D.kl_divergence(D.Uniform(A(0.0), A(2.0)), D.Uniform(A(0.5), A(3.0)))
    assert np.isinf(host(u)).all()


def test_kl_matches_monte_carlo():
    p, q = D.Gamma(A(2.0), A(1.5)), D.Gamma(A(3.0), A(1.0))
    x = p.sample((20000,), key=0)
    mc = host(p.log_prob(x) - q.log_prob(x))
    np.testing.assert_allclose(host(D.kl_divergence(p, q)), mc.mean(0),
                               atol=5 * mc.std() / np.sqrt(20000))


# -- transforms ----------------------------------------------------------------------------

def test_transform_algebra():
    t = T.ExpTransform()
    assert t.inv.inv is t and t.inv.domain is constraints.positive
    assert t == T.ExpTransform() and t.inv == T.ExpTransform().inv
    c = T.ComposeTransform([T.AffineTransform(0.0, 2.0), T.ExpTransform()])
    assert c.inv.parts[0] == T.ExpTransform().inv
    x = A(0.3, -0.4)
    np.testing.assert_allclose(host(c.inv(c(x))), host(x))
    np.testing.assert_allclose(host(c.inv.log_abs_det_jacobian(c(x), x)),
                               -host(c.log_abs_det_jacobian(x, c(x))))
    assert T.identity_transform(x) is x
    a = T.AffineTransform(A(1.0, 2.0), A(3.0, 4.0), event_dim=1)
    assert a.domain.event_dim == 1
    np.testing.assert_allclose(host(a.log_abs_det_jacobian(dev(np.zeros((5, 2))), None)),
                               np.full(5, np.log(12.0)))
    i = T.IndependentTransform(T.ExpTransform(), 1)
    assert i.domain.event_dim == 1 and i.codomain.event_dim == 1
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        T.ExpTransform(cache_size=2)
    assert T.ExpTransform().with_cache(1)._cache_size == 1


def test_transformed_distribution_shapes_and_log_prob():
    base = D.Normal(dev(np.zeros((3, 2))), 1.0)
    d = D.TransformedDistribution(base, [T.AffineTransform(A(1.0, 2.0), 3.0, event_dim=1)])
    assert (d.batch_shape, d.event_shape) == ((3,), (2,))
    y = d.rsample((4,), key=0)
    assert y.shape == (4, 3, 2)
    x = (host(y) - np.array([1.0, 2.0])) / 3.0
    expected = (-0.5 * x ** 2 - 0.5 * np.log(2 * np.pi)).sum(-1) - 2 * np.log(3.0)
    np.testing.assert_allclose(host(d.log_prob(y)), expected, rtol=1e-12)
    ln = D.LogNormal(A(0.2), A(0.7))
    td = D.TransformedDistribution(D.Normal(A(0.2), A(0.7)), T.ExpTransform())
    v = A(1.7)
    np.testing.assert_allclose(host(ln.log_prob(v)), host(td.log_prob(v)))
    np.testing.assert_allclose(host(ln.cdf(v)), host(td.cdf(v)))
    np.testing.assert_allclose(host(ln.icdf(A(0.3))), host(td.icdf(A(0.3))))
    # a decreasing transform flips the cdf
    neg = D.TransformedDistribution(D.Exponential(A(1.0)[0]), T.AffineTransform(0.0, -1.0))
    np.testing.assert_allclose(host(neg.cdf(A(-1.0))), np.exp(-1.0))
    assert re.match(r"TransformedDistribution\(Exponential\(rate: 1.0\)", repr(neg))


def test_structural_transforms():
    r = T.ReshapeTransform((6,), (2, 3))
    x = dev(np.arange(12.0).reshape(2, 6))
    assert r(x).shape == (2, 2, 3) and r.inv(r(x)).shape == (2, 6)
    assert r.forward_shape((5, 6)) == (5, 2, 3) and r.inverse_shape((2, 3)) == (6,)
    np.testing.assert_array_equal(host(r.log_abs_det_jacobian(x, r(x))), [0.0, 0.0])
    with pytest.raises(ValueError, match="different numbers of elements"):
        T.ReshapeTransform((4,), (3,))
    # the cdf transform's log-det-Jacobian is the density
    cdf = T.CumulativeDistributionTransform(D.Gamma(A(2.0), A(1.5)))
    v = A(0.7, 2.0)
    _, dy = funcgrad.jvp(cdf, (v,), (fnp.ones_like(v),))
    np.testing.assert_allclose(np.log(host(dy)), host(cdf.log_abs_det_jacobian(v, cdf(v))),
                               rtol=1e-10)

    # a density pushed onto the simplex by stick breaking integrates its Jacobian: the
    # log-det-Jacobian matches autodiff's determinant of the first K-1 coordinates
    sb = T.StickBreakingTransform()
    z = A(0.3, -0.7, 1.1)
    jac = funcgrad.jacfwd(lambda u: sb(u)[:-1])(z)
    np.testing.assert_allclose(np.log(abs(np.linalg.det(host(jac)))),
                               float(host(sb.log_abs_det_jacobian(z, sb(z)))), rtol=1e-10)
    # the correlation-Cholesky map's log-det-Jacobian: the determinant of its strictly lower
    # triangle (the free coordinates) by autodiff
    cc = T.CorrCholeskyTransform()
    v = A(0.5, -0.3, 0.8)
    rows, cols = np.tril_indices(3, -1)
    jac = funcgrad.jacfwd(lambda u: cc(u)[rows, cols])(v)
    np.testing.assert_allclose(np.log(abs(np.linalg.det(host(jac)))),
                               float(host(cc.log_abs_det_jacobian(v, cc(v)))), rtol=1e-10)
    np.testing.assert_allclose(host(cc.inv(cc(v))), host(v), rtol=1e-10)
    assert cc.forward_shape((6,)) == (4, 4) and cc.inverse_shape((4, 4)) == (6,)
    L = T.LowerCholeskyTransform()(A([0.1, 9.0], [2.0, -0.3]))
    assert bool(host(constraints.lower_cholesky.check(L)))
    assert D.transform_to(constraints.simplex)(A(0.0, 0.0)).shape == (2,)
    with pytest.raises(NotImplementedError, match="Cannot transform _Boolean constraints"):
        D.biject_to(constraints.boolean)
    with pytest.raises(TypeError, match="Constraint subclass or instance"):
        D.biject_to.register(int, lambda c: None)


def test_transform_to_for_constrained_optimisation():
    """Fit a Gamma by maximum likelihood over unconstrained parameters."""
    data = dev(np.array([0.5, 1.2, 2.0, 0.8, 3.1, 1.7]))
    to_pos = D.transform_to(D.Gamma.arg_constraints["concentration"])

    def nll(raw):
        return -fnp.sum(D.Gamma(to_pos(raw[0]), to_pos(raw[1])).log_prob(data))

    raw = dev(np.zeros(2))
    for _ in range(300):
        raw = raw - 0.05 * funcgrad.grad(nll)(raw)
    g = np.asarray(host(funcgrad.grad(nll)(raw)))
    assert np.all(np.abs(g) < 1e-3)


# -- pytrees -------------------------------------------------------------------------------

def test_distributions_pass_through_jit():
    """A policy returning a distribution from a jitted function, and a distribution as a
    jitted argument."""
    policy = funcgrad.jit(lambda logits: D.Categorical(logits=logits))
    d = policy(A(0.0, 1.0, -1.0))
    assert isinstance(d, D.Categorical) and d.batch_shape == () and d._num_events == 3
    np.testing.assert_allclose(host(d.probs), host(D.Categorical(logits=A(0.0, 1.0, -1.0)).probs))
    lp = funcgrad.jit(lambda d, x: d.log_prob(x))(D.Beta(A(2.0), A(3.0)), A(0.5))
    np.testing.assert_allclose(host(lp), host(D.Beta(A(2.0), A(3.0)).log_prob(A(0.5))))
    flow = funcgrad.jit(lambda s: D.TransformedDistribution(
        D.Normal(A(0.0), A(1.0)), [T.AffineTransform(0.0, s), T.TanhTransform()]))(A(2.0))
    np.testing.assert_allclose(
        host(flow.log_prob(A(0.3))),
        host(D.TransformedDistribution(D.Normal(A(0.0), A(1.0)),
                                       [T.AffineTransform(0.0, A(2.0)),
                                        T.TanhTransform()]).log_prob(A(0.3))))
    gmm = funcgrad.jit(lambda lg: D.MixtureSameFamily(D.Categorical(logits=lg),
                                                      D.Normal(A(-1.0, 1.0), 1.0)))(A(0.0, 0.5))
    assert gmm.event_shape == () and gmm.sample((3,), key=0).shape == (3,)


def test_vmap_returns_batched_distributions():
    d = funcgrad.vmap(lambda m: D.MultivariateNormal(m, dev(np.eye(2))))(dev(np.zeros((5, 2))))
    assert d.batch_shape == (5,) and d.event_shape == (2,)
    assert d.log_prob(dev(np.zeros(2))).shape == (5,) and d.entropy().shape == (5,)
    n = funcgrad.vmap(lambda s: D.Normal(0.0, s))(A(1.0, 2.0, 3.0))
    assert n.batch_shape == (3,) and n.sample((4,), key=0).shape == (4, 3)


def test_vmap_over_a_batched_distribution():
    d = D.Normal(A(0.0, 1.0, 2.0), A(1.0, 2.0, 3.0))
    shapes = []

    def per_example(d):
        shapes.append(d.batch_shape)
        return d.log_prob(0.5)

    np.testing.assert_allclose(host(funcgrad.vmap(per_example)(d)), host(d.log_prob(0.5)))
    assert shapes == [()]
    j = funcgrad.jit(funcgrad.vmap(lambda m: D.Normal(m, 1.0)))(A(0.0, 1.0))
    assert j.batch_shape == (2,)


def test_grad_with_respect_to_a_distribution():
    g = funcgrad.grad(lambda d: fnp.sum(d.log_prob(A(1.0, 2.0))))(D.Normal(A(0.0, 0.0),
                                                                        A(1.0, 1.0)))
    assert isinstance(g, D.Normal)
    np.testing.assert_allclose(host(g.loc), [1.0, 2.0])
    np.testing.assert_allclose(host(g.scale), [0.0, 3.0])
    leaves = funcgrad.tree_util.tree_leaves(D.Bernoulli(logits=A(0.0, 1.0)))
    assert len(leaves) == 1


# -- exponential families --------------------------------------------------------------------

EXP_FAMILY = [
    (lambda: D.Bernoulli(probs=A(0.2, 0.7)), lambda: D.Bernoulli(logits=A(0.5, -1.0))),
    (lambda: D.Exponential(A(0.5, 2.0)), lambda: D.Exponential(A(1.5, 0.3))),
    (lambda: D.Gamma(A(2.0, 0.7), A(1.0, 3.0)), lambda: D.Gamma(A(1.5, 2.0), A(0.5, 1.0))),
    (lambda: D.ContinuousBernoulli(probs=A(0.2, 0.8)),
     lambda: D.ContinuousBernoulli(probs=A(0.6, 0.3))),
    (lambda: D.Normal(A(0.0, 1.0), A(1.0, 0.5)), lambda: D.Normal(A(1.0, -1.0), A(2.0, 1.0))),
    (lambda: D.Poisson(A(1.0, 4.0)), lambda: D.Poisson(A(2.0, 3.0))),
    (lambda: D.Beta(A(2.0, 0.5), A(3.0, 0.7)), lambda: D.Beta(A(1.0, 2.0), A(1.5, 4.0))),
    (lambda: D.Dirichlet(A(1.0, 2.0, 3.0)), lambda: D.Dirichlet(A(2.0, 2.0, 0.5))),
    (lambda: D.Wishart(A(4.0), covariance_matrix=A([2.0, 0.5], [0.5, 1.0])),
     lambda: D.Wishart(A(5.0), scale_tril=A([1.0, 0.0], [0.3, 0.8]))),
]


@pytest.mark.parametrize("make_p,make_q", EXP_FAMILY)
def test_exponential_family_bregman_identities(make_p, make_q):
    """Entropy and KL from the log normaliser's gradient agree with the closed forms."""
    from funcgrad_nn.distributions.kl import _kl_expfamily_expfamily

    p, q = make_p(), make_q()
    assert isinstance(p, D.ExponentialFamily)
    if "_mean_carrier_measure" in vars(type(p)) or type(p) in (D.Wishart,):
        np.testing.assert_allclose(host(D.ExponentialFamily.entropy(p)), host(p.entropy()),
                                   rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(host(_kl_expfamily_expfamily(p, q)),
                               host(D.kl_divergence(p, q)), rtol=1e-8, atol=1e-12)


def test_bregman_kl_of_a_batch_is_the_batch_of_kls():
    p = D.Wishart(A(4.0, 6.0), covariance_matrix=A([2.0, 0.5], [0.5, 1.0]))
    q = D.Wishart(A(5.0, 3.5), scale_tril=A([1.0, 0.0], [0.3, 0.8]))
    each = [float(host(D.kl_divergence(
        D.Wishart(A(dp)[0], covariance_matrix=A([2.0, 0.5], [0.5, 1.0])),
        D.Wishart(A(dq)[0], scale_tril=A([1.0, 0.0], [0.3, 0.8])))))
        for dp, dq in ((4.0, 5.0), (6.0, 3.5))]
    np.testing.assert_allclose(host(D.kl_divergence(p, q)), each, rtol=1e-12)


def test_bregman_kl_differentiates_both_sides():
    def kl(df_p, df_q):
        return fnp.sum(D.kl_divergence(D.Wishart(df_p, covariance_matrix=dev(np.eye(2))),
                                       D.Wishart(df_q, covariance_matrix=dev(np.eye(2)))))

    gp, gq = funcgrad.grad(kl, argnums=(0, 1))(A(4.0), A(5.0))
    eps = 1e-6
    fd = (float(host(kl(A(4.0 + eps), A(5.0)))) - float(host(kl(A(4.0 - eps), A(5.0))))) / (2 * eps)
    np.testing.assert_allclose(host(gp), [fd], rtol=1e-6)
    assert abs(float(host(gq)[0])) > 0
    with pytest.raises(NotImplementedError, match="different exponential families"):
        from funcgrad_nn.distributions.kl import _kl_expfamily_expfamily
        _kl_expfamily_expfamily(D.Exponential(1.0), D.Poisson(1.0))
