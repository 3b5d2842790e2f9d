"""More of torch's distributions: MixtureSameFamily, Multinomial, NegativeBinomial, and the
transformed families HalfNormal, HalfCauchy, Pareto, Weibull, InverseGamma.

>>> import numpy as np
>>> from funcgrad_nn.distributions import Categorical, MixtureSameFamily, Normal
>>> mix = MixtureSameFamily(Categorical(probs=np.array([0.3, 0.7])),
...                         Normal(np.array([-1.0, 2.0]), np.array([0.5, 1.0])))
>>> round(float(mix.log_prob(np.array(0.0))), 4), round(float(mix.mean), 4)
(-2.6566, 1.1)
"""

from __future__ import annotations

import math
from typing import Any

import numpy

import funcgrad
import funcgrad.lax as flax
import funcgrad.nn as fnn
import funcgrad.numpy as fnp
import funcgrad.random as frandom
import funcgrad.scipy.special as fsp
from funcgrad_nn.distributions import constraints
from funcgrad_nn.distributions.continuous import (
    Beta,
    Cauchy,
    Exponential,
    Gamma,
    Normal,
    Uniform,
)
from funcgrad_nn.distributions.discrete import Binomial, Categorical
from funcgrad_nn.distributions.distribution import Distribution, _shape
from funcgrad_nn.distributions.exp_family import ExponentialFamily
from funcgrad_nn.distributions.transformed import TransformedDistribution
from funcgrad_nn.distributions.transforms import (
    AbsTransform,
    AffineTransform,
    ExpTransform,
    PowerTransform,
    StickBreakingTransform,
)
from funcgrad_nn.distributions.utils import (
    broadcast_all,
    clamp_probs,
    lazy_property,
    logits_to_probs,
    make_key,
    probs_to_logits,
)

__all__ = ["ContinuousBernoulli", "FisherSnedecor", "GeneralizedPareto", "LKJCholesky", "HalfCauchy", "HalfNormal", "InverseGamma", "Kumaraswamy",
           "LogisticNormal", "MixtureSameFamily", "Multinomial", "NegativeBinomial", "Pareto",
           "VonMises", "Weibull"]

_EULER = 0.57721566490153286060


class _MixtureSameFamilyConstraint(constraints.Constraint):
    """The component's support, checked on the value broadcast against every component."""

    def __init__(self, base_constraint: constraints.Constraint) -> None:
        self.base_constraint = base_constraint

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return self.base_constraint.is_discrete

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        return self.base_constraint.event_dim

    def check(self, value: Any) -> Any:
        result = self.base_constraint.check(fnp.expand_dims(value, -1 - self.event_dim))
        keep = value.ndim - self.event_dim
        return fnp.all(fnp.reshape(result, tuple(result.shape[:keep]) + (-1,)), axis=-1)

    def __repr__(self) -> str:
        return f"MixtureSameFamilyConstraint({self.base_constraint!r})"


class MixtureSameFamily(Distribution):
    """A mixture of components of one family: ``mixture_distribution`` (a
    :class:`Categorical` over the ``k`` components) picks one of the ``k`` distributions in
    the rightmost batch dimension of ``component_distribution`` (mixture density networks,
    Gaussian mixtures). ``log_prob`` is differentiable with respect to both.

    >>> import numpy as np
    >>> from funcgrad_nn.distributions import Categorical, Independent, Normal
    >>> gmm = MixtureSameFamily(Categorical(logits=np.zeros(3)),
    ...                         Independent(Normal(np.zeros((3, 2)), np.ones((3, 2))), 1))
    >>> gmm.batch_shape, gmm.event_shape, gmm.sample((4,), key=0).shape
    ((), (2,), (4, 2))
    """

    arg_constraints: dict[str, constraints.Constraint] = {}
    has_rsample = False

    def __init__(self, mixture_distribution: Categorical, component_distribution: Distribution,
                 validate_args: bool | None = None) -> None:
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(" The Mixture distribution needs to be an "
                             " instance of torch.distributions.Categorical")
        if not isinstance(component_distribution, Distribution):
            raise ValueError("The Component distribution needs to be an "
                             "instance of torch.distributions.Distribution")
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        mdbs = mixture_distribution.batch_shape
        cdbs = component_distribution.batch_shape[:-1]
        for size1, size2 in zip(reversed(mdbs), reversed(cdbs)):
            if size1 != 1 and size2 != 1 and size1 != size2:
                raise ValueError(f"`mixture_distribution.batch_shape` ({mdbs}) is not "
                                 f"compatible with `component_distribution.batch_shape`({cdbs})")
        km = mixture_distribution.logits.shape[-1]
        if not component_distribution.batch_shape:
            raise ValueError("component_distribution needs a batch dimension of components")
        kc = component_distribution.batch_shape[-1]
        if km != kc:
            raise ValueError(f"`mixture_distribution component` ({km}) does not equal "
                             f"`component_distribution.batch_shape[-1]` ({kc})")
        self._num_component = km
        event_shape = component_distribution.event_shape
        self._event_ndims = len(event_shape)
        super().__init__(cdbs, event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        batch_shape = _shape(batch_shape)
        new = object.__new__(type(self)) if _instance is None else _instance
        new.__dict__.update(self.__dict__)
        new._component_distribution = self._component_distribution.expand(
            batch_shape + (self._num_component,))
        new._mixture_distribution = self._mixture_distribution.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property
    def support(self) -> constraints.Constraint:  # type: ignore[override]
        return _MixtureSameFamilyConstraint(self._component_distribution.support)

    @property
    def mixture_distribution(self) -> Categorical:
        return self._mixture_distribution

    @property
    def component_distribution(self) -> Distribution:
        return self._component_distribution

    def _pad(self, x: Any) -> Any:
        return fnp.expand_dims(x, -1 - self._event_ndims)

    def _pad_mixture_dimensions(self, x: Any) -> Any:
        dist_batch_ndims = len(self.batch_shape)
        cat_batch_ndims = len(self.mixture_distribution.batch_shape)
        pad_ndims = 0 if cat_batch_ndims == 1 else dist_batch_ndims - cat_batch_ndims
        xs = tuple(x.shape)
        return fnp.reshape(x, xs[:-1] + (1,) * pad_ndims + xs[-1:] + (1,) * self._event_ndims)

    @property
    def mean(self) -> Any:
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        return fnp.sum(probs * self.component_distribution.mean, axis=-1 - self._event_ndims)

    @property
    def variance(self) -> Any:
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        comp = self.component_distribution
        mean_cond_var = fnp.sum(probs * comp.variance, axis=-1 - self._event_ndims)
        var_cond_mean = fnp.sum(probs * (comp.mean - self._pad(self.mean)) ** 2,
                                axis=-1 - self._event_ndims)
        return mean_cond_var + var_cond_mean

    def cdf(self, x: Any) -> Any:
        cdf_x = self.component_distribution.cdf(self._pad(x))
        return fnp.sum(cdf_x * self.mixture_distribution.probs, axis=-1)

    def log_prob(self, x: Any) -> Any:
        x = self._value(x)
        log_prob_x = self.component_distribution.log_prob(self._pad(x))
        log_mix = fnn.log_softmax(self.mixture_distribution.logits, axis=-1)
        return fsp.logsumexp(log_prob_x + log_mix, axis=-1)

    def sample(self, sample_shape: Any = (), *, key: Any = None) -> Any:
        k1, k2 = frandom.split(make_key(key, "MixtureSameFamily.sample", self._like))
        sample_shape = _shape(sample_shape)
        mix = self.mixture_distribution.sample(sample_shape, key=k1)
        mix = fnp.broadcast_to(mix, sample_shape + self.batch_shape)
        comp = self.component_distribution.sample(sample_shape, key=k2)
        idx = fnp.reshape(mix, tuple(mix.shape) + (1,) * (self._event_ndims + 1))
        gather_dim = len(sample_shape) + len(self.batch_shape)
        idx = fnp.broadcast_to(idx, tuple(mix.shape) + (1,) + self.event_shape)
        return fnp.take_along_axis(comp, idx, axis=gather_dim)[
            (slice(None),) * gather_dim + (0,)]

    def __repr__(self) -> str:
        return (f"MixtureSameFamily(\n  {self.mixture_distribution!r},\n  "
                f"{self.component_distribution!r})")


class Multinomial(Distribution):
    """Counts of ``total_count`` draws from a categorical distribution over the last axis
    of ``probs``/``logits``.

    >>> import numpy as np
    >>> d = Multinomial(4, probs=np.array([0.2, 0.3, 0.5]))
    >>> round(float(d.log_prob(np.array([1.0, 1.0, 2.0]))), 4), float(d.sample(key=0).sum())
    (-1.7148, 4.0)
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count: int = 1, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        if not isinstance(total_count, (int, numpy.integer)) or isinstance(total_count, bool):
            raise ValueError("Multinomial: total_count must be a Python int (inhomogeneous "
                             f"total_count is not supported), got {type(total_count).__name__}")
        self.total_count = int(total_count)
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=self.total_count, probs=self.probs)
        super().__init__(self._categorical.batch_shape,
                         tuple(self._categorical.param_shape[-1:]), validate_args=validate_args)

    def _expanded(self, source: Distribution, batch_shape: tuple[int, ...]) -> None:
        self._categorical = source._categorical.expand(batch_shape)  # type: ignore[attr-defined]
        self._binomial = source._binomial.expand(  # type: ignore[attr-defined]
            batch_shape + self.event_shape)

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.multinomial(self.total_count)

    @property
    def logits(self) -> Any:
        return self._categorical.logits

    @property
    def probs(self) -> Any:
        return self._categorical.probs

    @property
    def param_shape(self) -> tuple[int, ...]:
        return self._categorical.param_shape

    @property
    def mean(self) -> Any:
        return self.probs * self.total_count

    @property
    def variance(self) -> Any:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = (), *, key: Any = None) -> Any:
        sample_shape = _shape(sample_shape)
        draws = self._categorical.sample((self.total_count,) + sample_shape,
                                         key=make_key(key, "Multinomial.sample", self._like))
        k = self.event_shape[0]
        counts = fnp.sum(fnn.one_hot(draws, k, dtype=self.probs.dtype), axis=0)
        return fnp.broadcast_to(counts, self._extended_shape(sample_shape))

    def log_prob(self, value: Any) -> Any:
        value = self._value(value)
        logits, value = broadcast_all(self.logits, value)
        # 0 * log(0) is 0: a category of probability zero that was never drawn
        logits = fnp.where((value == 0) & (logits == -math.inf), 0.0, logits)
        return (fsp.gammaln(fnp.sum(value, axis=-1) + 1)
                - fnp.sum(fsp.gammaln(value + 1), axis=-1) + fnp.sum(logits * value, axis=-1))

    def entropy(self) -> Any:
        n = float(self.total_count)
        term1 = n * self._categorical.entropy() - math.lgamma(n + 1)
        # the counts 1..n of one category, against every category's binomial marginal
        # (total_count is a Python int: no concrete value needed under jit)
        nd = len(self._binomial.batch_shape)
        support = fnp.reshape(fnp.arange(1, self.total_count + 1, dtype=self.probs.dtype),
                              (self.total_count,) + (1,) * nd)
        binomial_probs = fnp.exp(self._binomial.log_prob(support))
        weights = fsp.gammaln(support + 1)
        return term1 + fnp.sum(binomial_probs * weights, axis=(0, -1))


class NegativeBinomial(Distribution):
    """The number of successes before ``total_count`` failures, each trial succeeding with
    probability ``probs`` (or ``sigmoid(logits)``); a Gamma-Poisson mixture.

    >>> import numpy as np
    >>> d = NegativeBinomial(3.0, probs=np.array(0.4))
    >>> float(d.mean), round(float(d.log_prob(np.array(2.0))), 4)
    (2.0, -1.5733)
    """

    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer
    _expand_params = {"total_count": 0, "probs": 0, "logits": 0}

    def __init__(self, total_count: Any, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        name = "probs" if probs is not None else "logits"
        param, self.total_count = broadcast_all(probs if probs is not None else logits,
                                                total_count)
        setattr(self, name, param)
        super().__init__(tuple(param.shape), validate_args=validate_args)

    @lazy_property
    def logits(self) -> Any:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Any:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> tuple[int, ...]:
        p = self.__dict__.get("probs", self.__dict__.get("logits"))
        return tuple(p.shape)

    @property
    def mean(self) -> Any:
        return self.total_count * fnp.exp(self.logits)

    @property
    def mode(self) -> Any:
        return fnp.maximum(fnp.floor((self.total_count - 1) * fnp.exp(self.logits)), 0.0)

    @property
    def variance(self) -> Any:
        return self.mean / fnn.sigmoid(-self.logits)

    def sample(self, sample_shape: Any = (), *, key: Any = None) -> Any:
        k1, k2 = frandom.split(make_key(key, "NegativeBinomial.sample", self._like))
        gamma = Gamma(funcgrad.stop_gradient(self.total_count),
                      fnp.exp(-funcgrad.stop_gradient(self.logits)), validate_args=False)
        rate = gamma.sample(sample_shape, key=k1)
        return frandom.poisson(k2, rate, tuple(rate.shape)).astype(rate.dtype)

    def log_prob(self, value: Any) -> Any:
        value = self._value(value)
        n = self.total_count
        unnorm = n * fnn.log_sigmoid(-self.logits) + value * fnn.log_sigmoid(self.logits)
        norm = -fsp.gammaln(n + value) + fsp.gammaln(1.0 + value) + fsp.gammaln(n)
        norm = fnp.where(n + value == 0.0, 0.0, norm)
        return unnorm - norm


class _Folded(TransformedDistribution):
    """``|X|`` for ``X`` of the family ``_base`` centred at 0 with ``scale``: what HalfNormal
    and HalfCauchy share (the density doubles on the half line; cdf, icdf, entropy follow)."""

    _base: Any = None
    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale: Any, validate_args: bool | None = None) -> None:
        (scale,) = broadcast_all(scale)
        super().__init__(self._base(fnp.zeros_like(scale), scale, validate_args=False),
                         AbsTransform(), validate_args=validate_args)

    @property
    def scale(self) -> Any:
        return self.base_dist.scale

    @property
    def mode(self) -> Any:
        return fnp.zeros_like(self.scale)

    def log_prob(self, value: Any) -> Any:
        value = self._value(value)
        lp = self.base_dist.log_prob(value) + math.log(2)
        return fnp.where(value >= 0, lp, -math.inf)

    def cdf(self, value: Any) -> Any:
        value = self._value(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob: Any) -> Any:
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self) -> Any:
        return self.base_dist.entropy() - math.log(2)


class HalfNormal(_Folded):
    """``|X|`` for ``X ~ Normal(0, scale)``.

    >>> import numpy as np
    >>> d = HalfNormal(np.array(2.0))
    >>> round(float(d.mean), 4), round(float(d.log_prob(np.array(1.0))), 4)
    (1.5958, -1.0439)
    """

    _base = Normal

    @property
    def mean(self) -> Any:
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self) -> Any:
        return self.scale ** 2 * (1 - 2 / math.pi)


class HalfCauchy(_Folded):
    """``|X|`` for ``X ~ Cauchy(0, scale)`` (a common prior on scales).

    >>> import numpy as np
    >>> round(float(HalfCauchy(np.array(1.0)).log_prob(np.array(1.0))), 4)
    -1.1447
    """

    _base = Cauchy

    @property
    def mean(self) -> Any:
        return fnp.full_like(self.scale, math.inf, shape=self._extended_shape())

    @property
    def variance(self) -> Any:
        return self.base_dist.variance


class Pareto(TransformedDistribution):
    """The Pareto (type I) distribution with minimum ``scale`` and tail index ``alpha``.

    >>> import numpy as np
    >>> d = Pareto(np.array(1.0), np.array(3.0))
    >>> float(d.mean), round(float(d.log_prob(np.array(2.0))), 4)
    (1.5, -1.674)
    """

    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}
    _expand_params = {"scale": 0, "alpha": 0}

    def __init__(self, scale: Any, alpha: Any, validate_args: bool | None = None) -> None:
        self.scale, self.alpha = broadcast_all(scale, alpha)
        super().__init__(Exponential(self.alpha, validate_args=validate_args),
                         [ExpTransform(), AffineTransform(loc=0, scale=self.scale)],
                         validate_args=validate_args)

    @property
    def mean(self) -> Any:
        a = self.alpha
        finite = a > 1  # infinite below (torch's 1 / 0), without NumPy's warning
        return fnp.where(finite, a * self.scale / fnp.where(finite, a - 1, 1.0), math.inf)

    @property
    def mode(self) -> Any:
        return self.scale

    @property
    def variance(self) -> Any:
        a = self.alpha
        finite = a > 2
        safe = fnp.where(finite, a, 3.0)
        return fnp.where(finite, self.scale ** 2 * safe / ((safe - 1) ** 2 * (safe - 2)),
                         math.inf)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.greater_than_eq(self.scale)

    def entropy(self) -> Any:
        return fnp.log(self.scale / self.alpha) + (1 + 1 / self.alpha)


class Weibull(TransformedDistribution):
    """The Weibull distribution with ``scale`` and shape ``concentration``.

    >>> import numpy as np
    >>> d = Weibull(np.array(2.0), np.array(1.5))
    >>> round(float(d.mean), 4), round(float(d.log_prob(np.array(1.0))), 4)
    (1.8055, -0.9878)
    """

    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive
    _expand_params = {"scale": 0, "concentration": 0, "concentration_reciprocal": 0}

    def __init__(self, scale: Any, concentration: Any, validate_args: bool | None = None) -> None:
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = 1 / self.concentration
        super().__init__(Exponential(fnp.ones_like(self.scale), validate_args=validate_args),
                         [PowerTransform(exponent=self.concentration_reciprocal),
                          AffineTransform(loc=0, scale=self.scale)],
                         validate_args=validate_args)

    @property
    def mean(self) -> Any:
        return self.scale * fnp.exp(fsp.gammaln(1 + self.concentration_reciprocal))

    @property
    def mode(self) -> Any:
        c = self.concentration
        base = (c - 1) / c
        # for c <= 1 the density decreases from 0, the mode (torch raises a negative number
        # to the power 1/c there: NaN, or a spurious positive value for even 1/c)
        return self.scale * fnp.where(base >= 0, base, 0.0) ** (1 / c)

    @property
    def variance(self) -> Any:
        r = self.concentration_reciprocal
        return self.scale ** 2 * (fnp.exp(fsp.gammaln(1 + 2 * r))
                                  - fnp.exp(2 * fsp.gammaln(1 + r)))

    def entropy(self) -> Any:
        r = self.concentration_reciprocal
        return _EULER * (1 - r) + fnp.log(self.scale * r) + 1


class InverseGamma(TransformedDistribution):
    """``1 / X`` for ``X ~ Gamma(concentration, rate)``.

    >>> import numpy as np
    >>> d = InverseGamma(np.array(3.0), np.array(2.0))
    >>> float(d.mean), round(float(d.log_prob(np.array(1.0))), 4)
    (1.0, -0.6137)
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration: Any, rate: Any, validate_args: bool | None = None) -> None:
        base = Gamma(concentration, rate, validate_args=validate_args)
        super().__init__(base, PowerTransform(-fnp.ones_like(base.rate, shape=())),
                         validate_args=validate_args)

    @property
    def concentration(self) -> Any:
        return self.base_dist.concentration

    @property
    def rate(self) -> Any:
        return self.base_dist.rate

    @property
    def mean(self) -> Any:
        c = self.concentration
        return fnp.where(c > 1, self.rate / fnp.where(c > 1, c - 1, 1.0), math.inf)

    @property
    def mode(self) -> Any:
        return self.rate / (self.concentration + 1)

    @property
    def variance(self) -> Any:
        c = self.concentration
        safe = fnp.where(c > 2, c, 3.0)
        return fnp.where(c > 2, self.rate ** 2 / ((safe - 1) ** 2 * (safe - 2)), math.inf)

    def entropy(self) -> Any:
        c = self.concentration
        return c + fnp.log(self.rate) + fsp.gammaln(c) - (1 + c) * fsp.digamma(c)


class FisherSnedecor(Distribution):
    """The F distribution with ``df1`` and ``df2`` degrees of freedom (a ratio of scaled
    chi-squared variables; reparameterised through the Gamma sampler).

    >>> import numpy as np
    >>> d = FisherSnedecor(np.array(4.0), np.array(6.0))
    >>> float(d.mean), round(float(d.log_prob(np.array(1.0))), 4)
    (1.5, -0.8802)
    """

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True
    _expand_params = {"df1": 0, "df2": 0}

    def __init__(self, df1: Any, df2: Any, validate_args: bool | None = None) -> None:
        self.df1, self.df2 = broadcast_all(df1, df2)
        super().__init__(tuple(self.df1.shape), validate_args=validate_args)

    @property
    def mean(self) -> Any:
        df2 = fnp.where(self.df2 <= 2, math.nan, self.df2)
        return df2 / (df2 - 2)

    @property
    def mode(self) -> Any:
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return fnp.where(self.df1 <= 2, math.nan, mode)

    @property
    def variance(self) -> Any:
        df2 = fnp.where(self.df2 <= 4, math.nan, self.df2)
        return 2 * df2 ** 2 * (self.df1 + df2 - 2) / (self.df1 * (df2 - 2) ** 2 * (df2 - 4))

    def rsample(self, sample_shape: Any = (), *, key: Any = None) -> Any:
        k1, k2 = frandom.split(make_key(key, "FisherSnedecor.rsample", self._like))
        x1 = Gamma(self.df1 * 0.5, self.df1, validate_args=False).rsample(sample_shape, key=k1)
        x2 = Gamma(self.df2 * 0.5, self.df2, validate_args=False).rsample(sample_shape, key=k2)
        tiny = float(numpy.finfo(numpy.dtype(x2.dtype)).tiny)
        return fnp.maximum(x1 / fnp.maximum(x2, tiny), tiny)

    def log_prob(self, value: Any) -> Any:
        value = self._value(value)
        ct1, ct2, ct3 = self.df1 * 0.5, self.df2 * 0.5, self.df1 / self.df2
        t1 = fsp.gammaln(ct1 + ct2) - fsp.gammaln(ct1) - fsp.gammaln(ct2)
        t2 = ct1 * fnp.log(ct3) + (ct1 - 1) * fnp.log(value)
        t3 = (ct1 + ct2) * fnp.log1p(ct3 * value)
        return t1 + t2 - t3


def _kumaraswamy_moment(a: Any, b: Any, n: int) -> Any:
    arg1 = 1 + n / a
    return b * fnp.exp(fsp.gammaln(arg1) + fsp.gammaln(b) - fsp.gammaln(arg1 + b))


class Kumaraswamy(TransformedDistribution):
    """The Kumaraswamy distribution on ``(0, 1)`` (a Beta look-alike with a closed-form
    cdf, reparameterised through its inverse cdf).

    >>> import numpy as np
    >>> d = Kumaraswamy(np.array(2.0), np.array(3.0))
    >>> round(float(d.mean), 4), round(float(d.log_prob(np.array(0.5))), 4)
    (0.4571, 0.5232)
    """

    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True
    _expand_params = {"concentration1": 0, "concentration0": 0}

    def __init__(self, concentration1: Any, concentration0: Any,
                 validate_args: bool | None = None) -> None:
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base = Uniform(fnp.zeros_like(self.concentration0), fnp.ones_like(self.concentration0),
                       validate_args=validate_args)
        super().__init__(base, [PowerTransform(exponent=1 / self.concentration0),
                                AffineTransform(loc=1.0, scale=-1.0),
                                PowerTransform(exponent=1 / self.concentration1)],
                         validate_args=validate_args)

    @property
    def mean(self) -> Any:
        return _kumaraswamy_moment(self.concentration1, self.concentration0, 1)

    @property
    def mode(self) -> Any:
        a, b = self.concentration1, self.concentration0
        # ((a - 1) / (a b - 1)) ** (1 / a); torch 2.13's expression is NaN whenever b > 1
        # (it takes log1p(-b)), so here the mode is the true one
        undefined = (b < 1) | (a < 1)
        ratio = fnp.where(undefined, 0.5, (a - 1) / fnp.where(undefined, 2.0, a * b - 1))
        return fnp.where(undefined, math.nan, ratio ** (1 / a))

    @property
    def variance(self) -> Any:
        return (_kumaraswamy_moment(self.concentration1, self.concentration0, 2)
                - self.mean ** 2)

    def entropy(self) -> Any:
        a, b = self.concentration1, self.concentration0
        t1, t0 = 1 - 1 / a, 1 - 1 / b
        h0 = fsp.digamma(b + 1) + _EULER
        return t0 + t1 * h0 - fnp.log(a) - fnp.log(b)


class LogisticNormal(TransformedDistribution):
    """A normal vector of length ``K - 1`` pushed onto the ``K``-simplex by stick breaking.

    >>> import numpy as np
    >>> d = LogisticNormal(np.zeros(2), np.ones(2))
    >>> d.event_shape, round(float(d.rsample(key=0).sum()), 6)
    ((3,), 1.0)
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        base = Normal(loc, scale, validate_args=validate_args)
        if not base.batch_shape:
            base = base.expand((1,))
        super().__init__(base, StickBreakingTransform(), validate_args=validate_args)

    @property
    def loc(self) -> Any:
        return self.base_dist.base_dist.loc

    @property
    def scale(self) -> Any:
        return self.base_dist.base_dist.scale


class VonMises(Distribution):
    """The von Mises distribution on the circle: angles in ``[-pi, pi)`` concentrated around
    ``loc`` (``concentration`` is kappa). Samples come from Best and Fisher's rejection
    sampler (a ``while_loop``, so it runs under jit and vmap); they carry no gradient.

    >>> import numpy as np
    >>> d = VonMises(np.array(0.5), np.array(2.0))
    >>> round(float(d.log_prob(np.array(0.0))), 4), round(float(d.variance), 4)
    (-0.9067, 0.3022)
    """

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False
    _expand_params = {"loc": 0, "concentration": 0}

    def __init__(self, loc: Any, concentration: Any, validate_args: bool | None = None) -> None:
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(tuple(self.loc.shape), validate_args=validate_args)

    @staticmethod
    def _log_i(order: int, x: Any) -> Any:
        # log I_n(x) from the exponentially scaled Bessel functions (exact, where torch uses
        # a polynomial approximation good to about 1e-7)
        return fnp.log(fsp.i0e(x) if order == 0 else fsp.i1e(x)) + x

    def log_prob(self, value: Any) -> Any:
        value = self._value(value)
        return (self.concentration * fnp.cos(value - self.loc) - math.log(2 * math.pi)
                - self._log_i(0, self.concentration))

    @property
    def mean(self) -> Any:
        return self.loc

    @property
    def mode(self) -> Any:
        return self.loc

    @property
    def variance(self) -> Any:
        """The circular variance ``1 - I1(kappa) / I0(kappa)``."""
        k = self.concentration
        return 1 - fnp.exp(self._log_i(1, k) - self._log_i(0, k))

    def sample(self, sample_shape: Any = (), *, key: Any = None) -> Any:
        shape = self._extended_shape(sample_shape)
        key = make_key(key, "VonMises.sample", self._like)
        dt = self.loc.dtype
        loc = fnp.broadcast_to(funcgrad.stop_gradient(self.loc), shape)
        kappa = fnp.broadcast_to(funcgrad.stop_gradient(self.concentration), shape)
        tau = 1 + fnp.sqrt(1 + 4 * kappa ** 2)
        rho = (tau - fnp.sqrt(2 * tau)) / (2 * kappa)
        r = fnp.where(kappa < 1e-5, 1 / kappa + kappa, (1 + rho ** 2) / (2 * rho))

        def cond(carry: Any) -> Any:
            return ~fnp.all(carry[1])

        def body(carry: Any) -> Any:
            x, done, k = carry
            k, sub = frandom.split(k)
            u = frandom.uniform(sub, (3,) + shape, dtype=dt)
            u1, u2, u3 = u[0], u[1], u[2]
            z = fnp.cos(math.pi * u1)
            f = (1 + r * z) / (r + z)
            c = kappa * (r - f)
            accept = ((c * (2 - c) - u2) > 0) | (fnp.log(c / u2) + 1 - c >= 0)
            new = accept & ~done
            x = fnp.where(new, fnp.sign(u3 - 0.5) * fnp.arccos(fnp.clip(f, -1.0, 1.0)), x)
            return x, done | accept, k

        x0 = fnp.zeros_like(loc)
        x, _, _ = flax.while_loop(cond, body, (x0, fnp.zeros_like(loc, dtype=bool), key))
        return (x + math.pi + loc) % (2 * math.pi) - math.pi


class ContinuousBernoulli(ExponentialFamily):
    """The continuous Bernoulli on ``[0, 1]`` (Loaiza-Ganem and Cunningham): density
    proportional to ``p**x (1 - p)**(1 - x)``, the right likelihood for [0, 1]-valued pixels
    in a VAE. Reparameterised through its inverse cdf.

    >>> import numpy as np
    >>> d = ContinuousBernoulli(probs=np.array(0.2))
    >>> round(float(d.mean), 4), round(float(d.log_prob(np.array(0.5))), 4)
    (0.388, -0.0788)
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True
    _expand_params = {"probs": 0, "logits": 0}

    def __init__(self, probs: Any = None, logits: Any = None,
                 lims: tuple[float, float] = (0.499, 0.501),
                 validate_args: bool | None = None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            (p,) = broadcast_all(probs)
            if validate_args is not None and not funcgrad.core.is_tracer(p) and not bool(
                    numpy.all(funcgrad.to_numpy(constraints.unit_interval.check(p)))):
                raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(p)
            param = self.probs
        else:
            (self.logits,) = broadcast_all(logits)
            param = self.logits
        self._lims = lims
        super().__init__(tuple(param.shape), validate_args=validate_args)

    @lazy_property
    def logits(self) -> Any:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Any:
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self) -> tuple[int, ...]:
        p = self.__dict__.get("probs", self.__dict__.get("logits"))
        return tuple(p.shape)

    def _outside_unstable_region(self) -> Any:
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self) -> Any:
        return fnp.where(self._outside_unstable_region(), self.probs, self._lims[0])

    def _cont_bern_log_norm(self) -> Any:
        cut = self._cut_probs()
        below = fnp.where(cut <= 0.5, cut, 0.0)
        above = fnp.where(cut >= 0.5, cut, 1.0)
        log_norm = fnp.log(fnp.abs(fnp.log1p(-cut) - fnp.log(cut))) - fnp.where(
            cut <= 0.5, fnp.log1p(-2.0 * below), fnp.log(2.0 * above - 1.0))
        x = (self.probs - 0.5) ** 2
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return fnp.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self) -> Any:
        cut = self._cut_probs()
        mus = cut / (2.0 * cut - 1.0) + 1.0 / (fnp.log1p(-cut) - fnp.log(cut))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x ** 2) * x
        return fnp.where(self._outside_unstable_region(), mus, taylor)

    @property
    def variance(self) -> Any:
        cut = self._cut_probs()
        v = cut * (cut - 1.0) / (1.0 - 2.0 * cut) ** 2 + 1.0 / (
            fnp.log1p(-cut) - fnp.log(cut)) ** 2
        x = (self.probs - 0.5) ** 2
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return fnp.where(self._outside_unstable_region(), v, taylor)

    def rsample(self, sample_shape: Any = (), *, key: Any = None) -> Any:
        u = frandom.uniform(make_key(key, "ContinuousBernoulli.rsample", self._like),
                            self._extended_shape(sample_shape), dtype=self.probs.dtype)
        return self.icdf(u)

    def log_prob(self, value: Any) -> Any:
        value = self._value(value)
        logits, value = broadcast_all(self.logits, value)
        bce = fnp.maximum(logits, 0) - logits * value + fnp.log1p(fnp.exp(-fnp.abs(logits)))
        return -bce + self._cont_bern_log_norm()

    def cdf(self, value: Any) -> Any:
        value = self._value(value)
        cut = self._cut_probs()
        cdfs = (cut ** value * (1.0 - cut) ** (1.0 - value) + cut - 1.0) / (2.0 * cut - 1.0)
        unbounded = fnp.where(self._outside_unstable_region(), cdfs, value)
        return fnp.where(value <= 0.0, 0.0, fnp.where(value >= 1.0, 1.0, unbounded))

    def icdf(self, value: Any) -> Any:
        cut = self._cut_probs()
        return fnp.where(self._outside_unstable_region(),
                         (fnp.log1p(-cut + value * (2.0 * cut - 1.0)) - fnp.log1p(-cut))
                         / (fnp.log(cut) - fnp.log1p(-cut)), value)

    def entropy(self) -> Any:
        log_p0 = fnp.log1p(-self.probs)
        log_p1 = fnp.log(self.probs)
        return self.mean * (log_p0 - log_p1) - self._cont_bern_log_norm() - log_p0

    _mean_carrier_measure = 0

    @property
    def _natural_params(self) -> tuple[Any, ...]:
        return (self.logits,)

    def _log_normalizer(self, x: Any) -> Any:
        """The log normaliser as a function of the natural parameter (Taylor-expanded near
        zero, where the closed form is 0/0)."""
        unstable = (x > self._lims[0] - 0.5) & (x <= self._lims[1] - 0.5)
        cut = fnp.where(unstable, self._lims[0] - 0.5, x)
        log_norm = fnp.log(fnp.abs(fnp.expm1(cut))) - fnp.log(fnp.abs(cut))
        taylor = 0.5 * x + x ** 2 / 24.0 - x ** 4 / 2880.0
        return fnp.where(unstable, taylor, log_norm)


class LKJCholesky(Distribution):
    """The LKJ distribution over Cholesky factors of ``dim x dim`` correlation matrices;
    ``concentration`` 1 is uniform over correlation matrices, larger values favour the
    identity (a prior for covariance models: ``diag(sigma) @ L``). Sampled by the onion
    method.

    >>> import numpy as np
    >>> d = LKJCholesky(3, np.array(2.0))
    >>> L = d.sample(key=0); L.shape, bool(np.allclose((L ** 2).sum(-1), 1.0))
    ((3, 3), True)
    """

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky
    _expand_params = {"concentration": 0}

    def __init__(self, dim: int, concentration: Any = 1.0,
                 validate_args: bool | None = None) -> None:
        if not isinstance(dim, (int, numpy.integer)) or dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. "
                             f"Found dim={dim}.")
        self.dim = int(dim)
        (self.concentration,) = broadcast_all(concentration)
        super().__init__(tuple(self.concentration.shape), (self.dim, self.dim),
                         validate_args=validate_args)

    def _beta(self) -> Beta:
        c = self.concentration
        marginal = c + 0.5 * (self.dim - 2)
        offset = fnp.concatenate([fnp.zeros_like(c, shape=(1,)),
                                  fnp.arange(self.dim - 1, dtype=c.dtype)])
        return Beta(offset + 0.5, marginal[..., None] - 0.5 * offset, validate_args=False)

    def sample(self, sample_shape: Any = (), *, key: Any = None) -> Any:
        k1, k2 = frandom.split(make_key(key, "LKJCholesky.sample", self._like))
        c = funcgrad.stop_gradient(self.concentration)
        d = LKJCholesky(self.dim, c, validate_args=False)
        y = d._beta().sample(sample_shape, key=k1)[..., None]
        u = fnp.tril(frandom.normal(k2, self._extended_shape(sample_shape), dtype=c.dtype), -1)
        norm = fnp.sqrt(fnp.sum(u ** 2, axis=-1, keepdims=True))
        # the first row is e_1 (its norm is zero: the division is masked out)
        first = (fnp.arange(self.dim) == 0)[:, None]
        u_sphere = fnp.where(first, 0.0, u / fnp.where(first, 1.0, norm))
        w = fnp.sqrt(y) * u_sphere
        tiny = float(numpy.finfo(numpy.dtype(w.dtype)).tiny)
        diag = fnp.sqrt(fnp.maximum(1 - fnp.sum(w ** 2, axis=-1), tiny))
        return w + diag[..., None] * fnp.eye(self.dim, dtype=w.dtype)

    def log_prob(self, value: Any) -> Any:
        value = self._value(value)
        diag = fnp.diagonal(value, axis1=-1, axis2=-2)[..., 1:]
        order = fnp.arange(2, self.dim + 1, dtype=self.concentration.dtype)
        order = 2 * (self.concentration - 1)[..., None] + self.dim - order
        unnorm = fnp.sum(order * fnp.log(diag), axis=-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = fsp.gammaln(alpha) * dm1
        numerator = fsp.multigammaln(alpha - 0.5, dm1)
        return unnorm - (0.5 * dm1 * math.log(math.pi) + numerator - denominator)


class GeneralizedPareto(Distribution):
    """The generalised Pareto distribution (peaks over a threshold): ``loc``, ``scale``
    and shape ``concentration`` (0 is the exponential, negative values bound the support).

    >>> import numpy as np
    >>> d = GeneralizedPareto(np.array(0.0), np.array(1.0), np.array(0.5))
    >>> float(d.mean), round(float(d.log_prob(np.array(1.0))), 4)
    (2.0, -1.2164)
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True
    _expand_params = {"loc": 0, "scale": 0, "concentration": 0}

    def __init__(self, loc: Any, scale: Any, concentration: Any,
                 validate_args: bool | None = None) -> None:
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        super().__init__(tuple(self.loc.shape), validate_args=validate_args)

    def _safe(self) -> tuple[Any, Any]:
        eq_zero = fnp.isclose(self.concentration, 0.0)
        return eq_zero, fnp.where(eq_zero, 1.0, self.concentration)

    def rsample(self, sample_shape: Any = (), *, key: Any = None) -> Any:
        u = frandom.uniform(make_key(key, "GeneralizedPareto.rsample", self._like),
                            self._extended_shape(sample_shape), dtype=self.loc.dtype)
        return self.icdf(u)

    def log_prob(self, value: Any) -> Any:
        value = self._value(value)
        z = (value - self.loc) / self.scale
        eq_zero, safe = self._safe()
        y = 1 / safe + 1
        where_nonzero = fnp.where(y == 0, y, y * fnp.log1p(safe * z))
        return -fnp.log(self.scale) - fnp.where(eq_zero, z, where_nonzero)

    def log_survival_function(self, value: Any) -> Any:
        """``log(1 - cdf(value))``, accurate in the tail."""
        value = self._value(value)
        z = (value - self.loc) / self.scale
        eq_zero, safe = self._safe()
        return fnp.where(eq_zero, -z, -fnp.log1p(safe * z) / safe)

    def log_cdf(self, value: Any) -> Any:
        """``log(cdf(value))``."""
        return fnp.log1p(-fnp.exp(self.log_survival_function(value)))

    def cdf(self, value: Any) -> Any:
        return fnp.exp(self.log_cdf(value))

    def icdf(self, value: Any) -> Any:
        eq_zero, safe = self._safe()
        logu = fnp.log1p(-value)
        return fnp.where(eq_zero, self.loc - self.scale * logu,
                         self.loc + self.scale / safe * fnp.expm1(-safe * logu))

    @property
    def mean(self) -> Any:
        valid = self.concentration < 1
        safe = fnp.where(valid, self.concentration, 0.5)
        return fnp.where(valid, self.loc + self.scale / (1 - safe), math.nan)

    @property
    def variance(self) -> Any:
        valid = self.concentration < 0.5
        safe = fnp.where(valid, self.concentration, 0.25)
        return fnp.where(valid, self.scale ** 2 / ((1 - safe) ** 2 * (1 - 2 * safe)), math.nan)

    def entropy(self) -> Any:
        return fnp.broadcast_to(fnp.log(self.scale) + self.concentration + 1, self._batch_shape)

    @property
    def mode(self) -> Any:
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> constraints.Constraint:  # type: ignore[override]
        lower = self.loc
        neg = self.concentration < 0
        upper = fnp.where(neg, lower - self.scale / fnp.where(neg, self.concentration, -1.0),
                          math.inf)
        return constraints.interval(lower, upper)
