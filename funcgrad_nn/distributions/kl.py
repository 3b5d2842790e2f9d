"""``kl_divergence(p, q)``: closed-form KL divergences, looked up in a table of rules keyed
by the pair of distribution types (``register_kl`` adds one), as in torch.

Dispatch picks the most specific registered pair for ``(type(p), type(q))`` along both
class hierarchies (so a rule for ``Gamma`` also serves ``Chi2``), and warns when the two
orders disagree.

>>> import numpy as np
>>> from funcgrad_nn.distributions import Normal, kl_divergence
>>> float(kl_divergence(Normal(np.array(0.0), np.array(1.0)), Normal(np.array(1.0), np.array(1.0))))
0.5
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable
from typing import Any

import funcgrad.nn as fnn
import funcgrad.numpy as fnp
import funcgrad.scipy.linalg as fsl
import funcgrad.scipy.special as fsp
from funcgrad_nn.distributions.continuous import (
    Beta,
    Cauchy,
    Dirichlet,
    Exponential,
    Gamma,
    Gumbel,
    Laplace,
    Normal,
    Uniform,
)
from funcgrad_nn.distributions.discrete import (
    Bernoulli,
    Binomial,
    Categorical,
    Geometric,
    OneHotCategorical,
    Poisson,
)
from funcgrad_nn.distributions.distribution import Distribution
from funcgrad_nn.distributions.exp_family import ExponentialFamily, _bregman_terms
from funcgrad_nn.distributions.more import ContinuousBernoulli, HalfNormal, Pareto
from funcgrad_nn.distributions.multivariate import (
    LowRankMultivariateNormal,
    MultivariateNormal,
    _batch_mahalanobis,
    _diag,
    _diag_embed,
    _mT,
)
from funcgrad_nn.distributions.transformed import Independent, TransformedDistribution
from funcgrad_nn.distributions.utils import _sum_rightmost

__all__ = ["kl_divergence", "register_kl"]

_EULER = 0.57721566490153286060

#: (type_p, type_q) -> rule: the source of truth
_KL_REGISTRY: dict[tuple[type, type], Callable[[Any, Any], Any]] = {}
#: (type(p), type(q)) -> the rule dispatch chose (cleared on every registration)
_KL_MEMOIZE: dict[tuple[type, type], Any] = {}


def register_kl(type_p: type, type_q: type) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator registering a KL rule for ``(type_p, type_q)``.

    >>> class MyNormal(Normal): pass
    >>> @register_kl(MyNormal, MyNormal)
    ... def _kl_mine(p, q): return fnp.zeros(p.batch_shape)
    >>> import numpy as np
    >>> float(kl_divergence(MyNormal(np.array(0.0), np.array(1.0)),
    ...                     MyNormal(np.array(5.0), np.array(1.0))))
    0.0
    """
    for t, name in ((type_p, "type_p"), (type_q, "type_q")):
        if not (isinstance(t, type) and issubclass(t, Distribution)):
            raise TypeError(f"Expected {name} to be a Distribution subclass but got {t}")

    def decorator(fun: Callable[..., Any]) -> Callable[..., Any]:
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()  # the most specific match may have changed
        return fun

    return decorator


@functools.total_ordering
class _Match:
    """Orders candidate pairs: one is smaller when it is more specific in the first type,
    then the second (lexicographic by subclassing)."""

    __slots__ = ["types"]

    def __init__(self, *types: type) -> None:
        self.types = types

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Match) and self.types == other.types

    def __le__(self, other: _Match) -> bool:
        for x, y in zip(self.types, other.types):
            if not issubclass(x, y):
                return False
            if x is not y:
                break
        return True


def _dispatch_kl(type_p: type, type_q: type) -> Any:
    matches = [(sp, sq) for sp, sq in _KL_REGISTRY
               if issubclass(type_p, sp) and issubclass(type_q, sq)]
    if not matches:
        return None
    left_p, left_q = min(_Match(*m) for m in matches).types
    right_q, right_p = min(_Match(*reversed(m)) for m in matches).types
    left_fun = _KL_REGISTRY[left_p, left_q]
    right_fun = _KL_REGISTRY[right_p, right_q]
    if left_fun is not right_fun:
        warnings.warn(f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). "
                      f"Please register_kl({left_p.__name__}, {right_q.__name__})",
                      RuntimeWarning, stacklevel=3)
    return left_fun


def kl_divergence(p: Distribution, q: Distribution) -> Any:
    """``KL(p || q)``, batched over the distributions' batch shape.

    >>> import numpy as np
    >>> from funcgrad_nn.distributions import Bernoulli
    >>> round(float(kl_divergence(Bernoulli(probs=np.array(0.5)), Bernoulli(probs=np.array(0.25)))), 4)
    0.1438
    """
    key = (type(p), type(q))
    if key not in _KL_MEMOIZE:
        _KL_MEMOIZE[key] = _dispatch_kl(*key)
    fun = _KL_MEMOIZE[key]
    if fun is None:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type "
                                  f"{type(p).__name__} and q type {type(q).__name__}")
    return fun(p, q)


def _inf_like(x: Any) -> Any:
    return fnp.full_like(x, math.inf)


def _x_log_x(x: Any) -> Any:
    return fsp.xlogy(x, x)


def _batch_trace_XXT(bmat: Any) -> Any:
    return fnp.sum(bmat ** 2, axis=(-2, -1))


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p: Any, q: Any) -> Any:
    """The Bregman divergence of the log normaliser, for two members of one family without
    a closed-form rule (``Wishart``). Unlike torch, p's natural parameters are not detached:
    the result differentiates with respect to both distributions."""
    if type(p) is not type(q):
        raise NotImplementedError("The cross KL-divergence between different exponential "
                                  "families cannot be computed using Bregman divergences")
    lg, p_nparams, grads = _bregman_terms(p)
    result = q._log_normalizer(*q._natural_params) - lg
    batch = len(fnp.broadcast_shapes(p.batch_shape, q.batch_shape))
    for pnp, qnp, g in zip(p_nparams, q._natural_params, grads):
        term = (qnp - pnp) * g
        # each natural parameter's own event dimensions (torch sums len(event_shape) of them,
        # which sums a batched Wishart's scalar parameter across the batch)
        result = result - _sum_rightmost(term, max(term.ndim - batch, 0))
    return result


# -- same family ---------------------------------------------------------------------------

@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p: Any, q: Any) -> Any:
    t1 = p.probs * (fnn.softplus(-q.logits) - fnn.softplus(-p.logits))
    t1 = fnp.where(p.probs == 0, 0.0, fnp.where(q.probs == 0, math.inf, t1))
    t2 = (1 - p.probs) * (fnn.softplus(q.logits) - fnn.softplus(p.logits))
    t2 = fnp.where(p.probs == 1, 0.0, fnp.where(q.probs == 1, math.inf, t2))
    return t1 + t2


@register_kl(Beta, Beta)
def _kl_beta_beta(p: Any, q: Any) -> Any:
    sp = p.concentration1 + p.concentration0
    sq = q.concentration1 + q.concentration0
    t1 = fsp.gammaln(q.concentration1) + fsp.gammaln(q.concentration0) + fsp.gammaln(sp)
    t2 = fsp.gammaln(p.concentration1) + fsp.gammaln(p.concentration0) + fsp.gammaln(sq)
    t3 = (p.concentration1 - q.concentration1) * fsp.digamma(p.concentration1)
    t4 = (p.concentration0 - q.concentration0) * fsp.digamma(p.concentration0)
    t5 = (sq - sp) * fsp.digamma(sp)
    return t1 - t2 + t3 + t4 + t5


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p: Any, q: Any) -> Any:
    # (torch refuses q.total_count > p.total_count; the formula below is the KL of the
    # per-trial Bernoullis times p's count, infinite where p can exceed q's count)
    kl = p.total_count * (p.probs * (p.logits - q.logits) + fnp.log1p(-p.probs)
                          - fnp.log1p(-q.probs))
    return fnp.where(p.total_count > q.total_count, math.inf, kl)


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p: Any, q: Any) -> Any:
    t = p.probs * (p.logits - q.logits)
    shape = tuple(t.shape)
    q0 = fnp.broadcast_to(q.probs == 0, shape)
    p0 = fnp.broadcast_to(p.probs == 0, shape)
    t = fnp.where(p0, 0.0, fnp.where(q0, math.inf, t))
    return fnp.sum(t, axis=-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p: Any, q: Any) -> Any:
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p: Any, q: Any) -> Any:
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + fnp.log1p(-p.probs)
    t3 = -q._cont_bern_log_norm() - fnp.log1p(-q.probs)
    return t1 + t2 + t3


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p: Any, q: Any) -> Any:
    t1 = fnp.log((p.scale + q.scale) ** 2 + (p.loc - q.loc) ** 2)
    t2 = fnp.log(4 * p.scale * q.scale)
    return t1 - t2


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p: Any, q: Any) -> Any:
    sp = fnp.sum(p.concentration, axis=-1)
    sq = fnp.sum(q.concentration, axis=-1)
    t1 = fsp.gammaln(sp) - fsp.gammaln(sq)
    t2 = fnp.sum(fsp.gammaln(p.concentration) - fsp.gammaln(q.concentration), axis=-1)
    t3 = p.concentration - q.concentration
    t4 = fsp.digamma(p.concentration) - fsp.digamma(sp)[..., None]
    return t1 - t2 + fnp.sum(t3 * t4, axis=-1)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p: Any, q: Any) -> Any:
    ratio = q.rate / p.rate
    return -fnp.log(ratio) + ratio - 1


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p: Any, q: Any) -> Any:
    t1 = q.concentration * fnp.log(p.rate / q.rate)
    t2 = fsp.gammaln(q.concentration) - fsp.gammaln(p.concentration)
    t3 = (p.concentration - q.concentration) * fsp.digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p: Any, q: Any) -> Any:
    return -p.entropy() - fnp.log1p(-q.probs) / p.probs - q.logits


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p: Any, q: Any) -> Any:
    ct1 = p.scale / q.scale
    ct2 = q.loc / q.scale
    ct3 = p.loc / q.scale
    t1 = -fnp.log(ct1) - ct2 + ct3
    t2 = ct1 * _EULER
    t3 = fnp.exp(ct2 + fsp.gammaln(1 + ct1) - ct3)
    return t1 + t2 + t3 - (1 + _EULER)


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p: Any, q: Any) -> Any:
    ratio = p.scale / q.scale
    diff = fnp.abs(p.loc - q.loc)
    return -fnp.log(ratio) + diff / q.scale + ratio * fnp.exp(-diff / p.scale) - 1


@register_kl(Normal, Normal)
def _kl_normal_normal(p: Any, q: Any) -> Any:
    var_ratio = (p.scale / q.scale) ** 2
    t1 = ((p.loc - q.loc) / q.scale) ** 2
    return 0.5 * (var_ratio + t1 - 1 - fnp.log(var_ratio))


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p: Any, q: Any) -> Any:
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p: Any, q: Any) -> Any:
    scale_ratio = p.scale / q.scale
    alpha_ratio = q.alpha / p.alpha
    result = q.alpha * fnp.log(scale_ratio) - fnp.log(alpha_ratio) + alpha_ratio - 1
    return fnp.where(p.scale < q.scale, math.inf, result)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p: Any, q: Any) -> Any:
    return p.rate * (fnp.log(p.rate) - fnp.log(q.rate)) - (p.rate - q.rate)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p: Any, q: Any) -> Any:
    result = fnp.log((q.high - q.low) / (p.high - p.low))
    return fnp.where((q.low > p.low) | (q.high < p.high), math.inf, result)


@register_kl(Independent, Independent)
def _kl_independent_independent(p: Any, q: Any) -> Any:
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError("KL between Independent distributions with different "
                                  "reinterpreted_batch_ndims is not defined")
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist),
                          p.reinterpreted_batch_ndims)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p: Any, q: Any) -> Any:
    if p.transforms != q.transforms or p.event_shape != q.event_shape:
        raise NotImplementedError("KL between transformed distributions needs the same "
                                  "transforms and event shape")
    return kl_divergence(p.base_dist, q.base_dist)


# -- multivariate normals ------------------------------------------------------------------

def _lowrank_logdet(W: Any, D: Any, C: Any) -> Any:
    return 2 * fnp.sum(fnp.log(_diag(C)), axis=-1) + fnp.sum(fnp.log(D), axis=-1)


def _lowrank_mahalanobis(W: Any, D: Any, x: Any, C: Any) -> Any:
    wt_dinv = _mT(W) / D[..., None, :]
    wt_dinv_x = fnp.matmul(wt_dinv, x[..., None])[..., 0]
    return fnp.sum(x ** 2 / D, axis=-1) - _batch_mahalanobis(C, wt_dinv_x)


def _solve_lower(L: Any, B: Any) -> Any:
    batch = fnp.broadcast_shapes(tuple(L.shape[:-2]), tuple(B.shape[:-2]))
    return fsl.solve_triangular(fnp.broadcast_to(L, batch + tuple(L.shape[-2:])),
                                fnp.broadcast_to(B, batch + tuple(B.shape[-2:])), lower=True)


def _same_events(p: Any, q: Any, what: str) -> None:
    if p.event_shape != q.event_shape:
        raise ValueError(f"KL-divergence between two {what} with different event shapes "
                         "cannot be computed")


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn_mvn(p: Any, q: Any) -> Any:
    _same_events(p, q, "Multivariate Normals")
    Lp, Lq = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_term1 = (fnp.sum(fnp.log(_diag(Lq)), axis=-1)
                  - fnp.sum(fnp.log(_diag(Lp)), axis=-1))
    term2 = _batch_trace_XXT(_solve_lower(Lq, Lp))
    term3 = _batch_mahalanobis(Lq, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - p.event_shape[0])


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrank_lowrank(p: Any, q: Any) -> Any:
    _same_events(p, q, "Low Rank Multivariate Normals")
    qW, qD, qC = q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag, q._capacitance_tril
    pW, pD, pC = p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag, p._capacitance_tril
    term1 = _lowrank_logdet(qW, qD, qC) - _lowrank_logdet(pW, pD, pC)
    term3 = _lowrank_mahalanobis(qW, qD, q.loc - p.loc, qC)
    A = _solve_lower(qC, _mT(qW) / qD[..., None, :])
    term21 = fnp.sum(pD / qD, axis=-1)
    term22 = _batch_trace_XXT(pW * (1 / fnp.sqrt(qD))[..., None])
    term23 = _batch_trace_XXT(A * fnp.sqrt(pD)[..., None, :])
    term24 = _batch_trace_XXT(fnp.matmul(A, pW))
    return 0.5 * (term1 + term21 + term22 - term23 - term24 + term3 - p.event_shape[0])


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_mvn_lowrank(p: Any, q: Any) -> Any:
    _same_events(p, q, "(Low Rank) Multivariate Normals")
    qW, qD, qC = q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag, q._capacitance_tril
    Lp = p._unbroadcasted_scale_tril
    term1 = _lowrank_logdet(qW, qD, qC) - 2 * fnp.sum(fnp.log(_diag(Lp)), axis=-1)
    term3 = _lowrank_mahalanobis(qW, qD, q.loc - p.loc, qC)
    A = _solve_lower(qC, _mT(qW) / qD[..., None, :])
    term21 = _batch_trace_XXT(Lp * (1 / fnp.sqrt(qD))[..., None])
    term22 = _batch_trace_XXT(fnp.matmul(A, Lp))
    return 0.5 * (term1 + term21 - term22 + term3 - p.event_shape[0])


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrank_mvn(p: Any, q: Any) -> Any:
    _same_events(p, q, "(Low Rank) Multivariate Normals")
    pW, pD, pC = p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag, p._capacitance_tril
    Lq = q._unbroadcasted_scale_tril
    term1 = 2 * fnp.sum(fnp.log(_diag(Lq)), axis=-1) - _lowrank_logdet(pW, pD, pC)
    term3 = _batch_mahalanobis(Lq, q.loc - p.loc)
    term21 = _batch_trace_XXT(_solve_lower(Lq, pW))
    term22 = _batch_trace_XXT(_solve_lower(Lq, _diag_embed(fnp.sqrt(pD))))
    return 0.5 * (term1 + term21 + term22 + term3 - p.event_shape[0])


# -- across families -----------------------------------------------------------------------

@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p: Any, q: Any) -> Any:
    return -p.entropy() - (p.probs * fnp.log(q.rate) - q.rate)


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p: Any, q: Any) -> Any:
    return (-p.entropy() - p.mean * q.logits - fnp.log1p(-q.probs)
            - q._cont_bern_log_norm())


@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(p: Any, q: Any) -> Any:
    return -p.entropy() - fnp.log(q.rate) + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p: Any, q: Any) -> Any:
    t2 = 0.5 * (math.log(2.0 * math.pi) + (q.loc / q.scale) ** 2) + fnp.log(q.scale)
    t3 = (p.variance + p.mean ** 2 - 2.0 * q.loc * p.mean) / (2.0 * q.scale ** 2)
    return -p.entropy() + t2 + t3


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p: Any, q: Any) -> Any:
    result = -p.entropy() + fnp.log(q.high - q.low)
    return fnp.where((q.low >= 0.0) | (q.high <= 1.0), math.inf, result)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p: Any, q: Any) -> Any:
    result = (-p.entropy() - p.mean * q.logits - fnp.log1p(-q.probs)
              - q._cont_bern_log_norm())
    return fnp.where((p.high >= 1.0) | (p.low <= 0.0), math.inf, result)


@register_kl(Beta, Exponential)
def _kl_beta_exponential(p: Any, q: Any) -> Any:
    return (-p.entropy() - fnp.log(q.rate)
            + q.rate * (p.concentration1 / (p.concentration1 + p.concentration0)))


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p: Any, q: Any) -> Any:
    s = p.concentration1 + p.concentration0
    t2 = fsp.gammaln(q.concentration) - q.concentration * fnp.log(q.rate)
    t3 = (q.concentration - 1) * (fsp.digamma(p.concentration1) - fsp.digamma(s))
    t4 = q.rate * p.concentration1 / s
    return -p.entropy() + t2 - t3 + t4


@register_kl(Beta, Normal)
def _kl_beta_normal(p: Any, q: Any) -> Any:
    e = p.concentration1 / (p.concentration1 + p.concentration0)
    var = q.scale ** 2
    t2 = 0.5 * fnp.log(var * 2 * math.pi)
    t3 = (e * (1 - e) / (p.concentration1 + p.concentration0 + 1) + e ** 2) * 0.5
    return -p.entropy() + t2 + (t3 - q.loc * e + q.loc ** 2 * 0.5) / var


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p: Any, q: Any) -> Any:
    result = -p.entropy() + fnp.log(q.high - q.low)
    return fnp.where((q.low > 0.0) | (q.high < 1.0), math.inf, result)


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p: Any, q: Any) -> Any:
    ratio = q.rate / p.rate
    return (-q.concentration * fnp.log(ratio) + ratio + fsp.gammaln(q.concentration)
            + q.concentration * _EULER - (1 + _EULER))


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p: Any, q: Any) -> Any:
    prod = p.rate * q.scale
    ratio = q.loc / q.scale
    return (fnp.log(prod) - 1 - ratio + fnp.exp(ratio) * prod / (prod + 1) + 1 / prod)


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p: Any, q: Any) -> Any:
    var = q.scale ** 2
    r2 = p.rate ** 2
    t1 = 0.5 * fnp.log(r2 * var * 2 * math.pi)
    return t1 - 1 + (1 / r2 - q.loc / p.rate + q.loc ** 2 * 0.5) / var


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p: Any, q: Any) -> Any:
    return -p.entropy() - fnp.log(q.rate) + q.rate * p.concentration / p.rate


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p: Any, q: Any) -> Any:
    prod = p.rate * q.scale
    ratio = q.loc / q.scale
    c = p.concentration
    t1 = (c - 1) * fsp.digamma(c) - fsp.gammaln(c) - c
    t2 = fnp.log(prod) + c / prod
    t3 = fnp.exp(ratio) * (1 + 1 / prod) ** (-c) - ratio
    return t1 + t2 + t3


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p: Any, q: Any) -> Any:
    var = q.scale ** 2
    b2 = p.rate ** 2
    c = p.concentration
    t1 = 0.5 * fnp.log(b2 * var * 2 * math.pi) - c - fsp.gammaln(c)
    t2 = 0.5 * (c ** 2 + c) / b2
    t3 = q.loc * c / p.rate
    return t1 + (c - 1) * fsp.digamma(c) + (t2 - t3 + 0.5 * q.loc ** 2) / var


@register_kl(Gumbel, Normal)
def _kl_gumbel_normal(p: Any, q: Any) -> Any:
    ratio = p.scale / q.scale
    t1 = fnp.log(ratio / math.sqrt(2 * math.pi))
    t2 = (math.pi * ratio * 0.5) ** 2 / 3
    t3 = ((p.loc + p.scale * _EULER - q.loc) / q.scale) ** 2 * 0.5
    return -t1 + t2 + t3 - (_EULER + 1)


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p: Any, q: Any) -> Any:
    var = q.scale ** 2
    r = p.scale ** 2 / var
    t1 = 0.5 * fnp.log(2 * r / math.pi)
    return -t1 + r + (0.5 * p.loc ** 2 - p.loc * q.loc + 0.5 * q.loc ** 2) / var - 1


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p: Any, q: Any) -> Any:
    m = p.loc / q.scale
    v = (p.scale / q.scale) ** 2
    ratio = q.loc / q.scale
    return (-0.5 * fnp.log(v) + m - ratio + fnp.exp(-m + 0.5 * v + ratio)
            - 0.5 * (1 + math.log(2 * math.pi)))


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p: Any, q: Any) -> Any:
    diff = p.loc - q.loc
    ratio = p.scale / q.scale
    d = diff / p.scale
    t2 = math.sqrt(2 / math.pi) * p.scale * fnp.exp(-0.5 * d ** 2)
    t3 = diff * fsp.erf(math.sqrt(0.5) * d)
    return -fnp.log(ratio) + (t2 + t3) / q.scale - 0.5 * (1 + math.log(0.5 * math.pi))


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p: Any, q: Any) -> Any:
    w = p.high - p.low
    t2 = (q.concentration1 - 1) * (_x_log_x(p.high) - _x_log_x(p.low) - w) / w
    t3 = (q.concentration0 - 1) * (_x_log_x(1 - p.high) - _x_log_x(1 - p.low) + w) / w
    t4 = (fsp.gammaln(q.concentration1) + fsp.gammaln(q.concentration0)
          - fsp.gammaln(q.concentration1 + q.concentration0))
    result = t3 + t4 - fnp.log(w) - t2
    return fnp.where((p.high > 1.0) | (p.low < 0.0), math.inf, result)


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p: Any, q: Any) -> Any:
    result = q.rate * (p.high + p.low) / 2 - fnp.log((p.high - p.low) * q.rate)
    return fnp.where(p.low < 0.0, math.inf, result)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p: Any, q: Any) -> Any:
    w = p.high - p.low
    t2 = fsp.gammaln(q.concentration) - q.concentration * fnp.log(q.rate)
    t3 = (1 - q.concentration) * (_x_log_x(p.high) - _x_log_x(p.low) - w) / w
    t4 = q.rate * (p.high + p.low) / 2
    result = -fnp.log(w) + t2 + t3 + t4
    return fnp.where(p.low < 0.0, math.inf, result)


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p: Any, q: Any) -> Any:
    c = q.scale / (p.high - p.low)
    hi = (p.high - q.loc) / q.scale
    lo = (p.low - q.loc) / q.scale
    return fnp.log(c) + 0.5 * (hi + lo) - c * (fnp.exp(-hi) - fnp.exp(-lo))


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p: Any, q: Any) -> Any:
    w = p.high - p.low
    t1 = fnp.log(math.sqrt(math.pi * 2) * q.scale / w)
    return t1 + 0.5 * (w ** 2 / 12 + ((p.high + p.low - 2 * q.loc) / 2) ** 2) / q.scale ** 2


def _kl_infinite(attr: str) -> Callable[[Any, Any], Any]:
    def rule(p: Any, q: Any) -> Any:
        return _inf_like(getattr(p, attr))
    rule.__name__ = f"_kl_infinite_{attr}"
    return rule


# p has mass where q has none: the divergence is infinite
for _tp, _tq, _attr in [
        (Exponential, Beta, "rate"), (Exponential, Uniform, "rate"),
        (Gamma, Beta, "concentration"), (Gamma, Uniform, "concentration"),
        (Gumbel, Beta, "loc"), (Gumbel, Exponential, "loc"), (Gumbel, Gamma, "loc"),
        (Gumbel, Uniform, "loc"), (Laplace, Beta, "loc"), (Laplace, Exponential, "loc"),
        (Laplace, Gamma, "loc"), (Laplace, Uniform, "loc"), (Normal, Beta, "loc"),
        (Normal, Exponential, "loc"), (Normal, Gamma, "loc"), (Normal, Uniform, "loc"),
        (Poisson, Bernoulli, "rate"), (Poisson, Binomial, "rate")]:
    register_kl(_tp, _tq)(_kl_infinite(_attr))
