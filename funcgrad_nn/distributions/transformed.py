"""Distributions built from others: ``Independent`` (batch dimensions reinterpreted as
event dimensions), ``TransformedDistribution`` (a base pushed through transforms) and the
ones torch builds that way: ``LogNormal``, ``RelaxedBernoulli``, ``RelaxedOneHotCategorical``.

>>> import numpy as np
>>> from funcgrad_nn.distributions import Independent, Normal
>>> d = Independent(Normal(np.zeros(3), np.ones(3)), 1)
>>> d.batch_shape, d.event_shape, round(float(d.log_prob(np.zeros(3))), 4)
((), (3,), -2.7568)
"""

from __future__ import annotations

from typing import Any

import funcgrad
import funcgrad.numpy as fnp
import funcgrad.random as frandom
import funcgrad.scipy.special as fsp
from funcgrad_nn.distributions import constraints
from funcgrad_nn.distributions.continuous import Normal
from funcgrad_nn.distributions.discrete import Categorical
from funcgrad_nn.distributions.distribution import Distribution, _shape
from funcgrad_nn.distributions.transforms import (
    ComposeTransform,
    ExpTransform,
    SigmoidTransform,
    Transform,
)
from funcgrad_nn.distributions.utils import (
    _sum_rightmost,
    as_float,
    broadcast_all,
    clamp_probs,
    lazy_property,
    logits_to_probs,
    make_key,
    probs_to_logits,
)

__all__ = ["ExpRelaxedCategorical", "Independent", "LogNormal", "LogitRelaxedBernoulli",
           "RelaxedBernoulli", "RelaxedOneHotCategorical", "TransformedDistribution"]


class Independent(Distribution):
    """Reinterpret the ``reinterpreted_batch_ndims`` rightmost batch dimensions of
    ``base_distribution`` as event dimensions: ``log_prob`` sums over them (a diagonal
    Gaussian over vectors is ``Independent(Normal(loc, scale), 1)``).

    >>> import numpy as np
    >>> from funcgrad_nn.distributions import Bernoulli
    >>> Independent(Bernoulli(probs=np.full((2, 3), 0.5)), 1).log_prob(np.ones((2, 3))).shape
    (2,)
    """

    arg_constraints: dict[str, constraints.Constraint] = {}

    def __init__(self, base_distribution: Distribution, reinterpreted_batch_ndims: int,
                 validate_args: bool | None = None) -> None:
        if reinterpreted_batch_ndims > len(base_distribution.batch_shape):
            raise ValueError(
                "Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), "
                f"actual {reinterpreted_batch_ndims} vs {len(base_distribution.batch_shape)}")
        shape = base_distribution.batch_shape + base_distribution.event_shape
        event_dim = reinterpreted_batch_ndims + len(base_distribution.event_shape)
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        super().__init__(shape[:len(shape) - event_dim], shape[len(shape) - event_dim:],
                         validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        batch_shape = _shape(batch_shape)
        new = object.__new__(type(self)) if _instance is None else _instance
        new.__dict__.update(self.__dict__)
        new.base_dist = self.base_dist.expand(
            batch_shape + self.event_shape[:self.reinterpreted_batch_ndims])
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def has_rsample(self) -> bool:  # type: ignore[override]
        return self.base_dist.has_rsample

    @property
    def has_enumerate_support(self) -> bool:  # type: ignore[override]
        return self.reinterpreted_batch_ndims == 0 and self.base_dist.has_enumerate_support

    @constraints.dependent_property
    def support(self) -> constraints.Constraint:  # type: ignore[override]
        result = self.base_dist.support
        if self.reinterpreted_batch_ndims:
            result = constraints.independent(result, self.reinterpreted_batch_ndims)
        return result

    @property
    def mean(self) -> Any:
        return self.base_dist.mean

    @property
    def mode(self) -> Any:
        return self.base_dist.mode

    @property
    def variance(self) -> Any:
        return self.base_dist.variance

    def sample(self, sample_shape: Any = (), *, key: Any = None) -> Any:
        return self.base_dist.sample(sample_shape, key=key)

    def rsample(self, sample_shape: Any = (), *, key: Any = None) -> Any:
        return self.base_dist.rsample(sample_shape, key=key)

    def log_prob(self, value: Any) -> Any:
        return _sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self) -> Any:
        return _sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def enumerate_support(self, expand: bool = True) -> Any:
        if self.reinterpreted_batch_ndims > 0:
            raise ValueError("Independent.enumerate_support: enumeration over the cartesian "
                             "product of reinterpreted batch dimensions is not supported "
                             "(has_enumerate_support is False)")
        return self.base_dist.enumerate_support(expand=expand)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.base_dist!r}, {self.reinterpreted_batch_ndims})"


class TransformedDistribution(Distribution):
    """``base_distribution`` pushed through ``transforms`` (one or a list, applied in
    order). ``log_prob`` inverts the transforms and subtracts their log-det-Jacobians;
    ``rsample`` is reparameterised when the base's is (a normalising flow).

    >>> import numpy as np
    >>> from funcgrad_nn.distributions import Normal
    >>> from funcgrad_nn.distributions.transforms import AffineTransform, TanhTransform
    >>> d = TransformedDistribution(Normal(np.zeros(2), np.ones(2)), [TanhTransform()])
    >>> round(float(d.log_prob(np.array([0.5, 0.0]))[0]), 4)
    -0.7821
    """

    arg_constraints: dict[str, constraints.Constraint] = {}

    def __init__(self, base_distribution: Distribution, transforms: Any,
                 validate_args: bool | None = None) -> None:
        if isinstance(transforms, Transform):
            self.transforms = [transforms]
        elif isinstance(transforms, list):
            if not all(isinstance(t, Transform) for t in transforms):
                raise ValueError("transforms must be a Transform or a list of Transforms")
            self.transforms = transforms
        else:
            raise ValueError(f"transforms must be a Transform or list, but was {transforms}")
        base_shape = base_distribution.batch_shape + base_distribution.event_shape
        base_event_dim = len(base_distribution.event_shape)
        transform = ComposeTransform(self.transforms)
        if len(base_shape) < transform.domain.event_dim:
            raise ValueError(f"base_distribution needs to have shape with size at least "
                             f"{transform.domain.event_dim}, but got {base_shape}.")
        forward_shape = transform.forward_shape(base_shape)
        expanded_base_shape = transform.inverse_shape(forward_shape)
        if base_shape != expanded_base_shape:
            base_batch_shape = expanded_base_shape[:len(expanded_base_shape) - base_event_dim]
            base_distribution = base_distribution.expand(base_batch_shape)
        reinterpreted = transform.domain.event_dim - base_event_dim
        if reinterpreted > 0:
            base_distribution = Independent(base_distribution, reinterpreted)
        self.base_dist = base_distribution
        change = transform.codomain.event_dim - transform.domain.event_dim
        event_dim = max(transform.codomain.event_dim, base_event_dim + change)
        cut = len(forward_shape) - event_dim
        super().__init__(forward_shape[:cut], forward_shape[cut:], validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        batch_shape = _shape(batch_shape)
        new = object.__new__(type(self)) if _instance is None else _instance
        new.__dict__.update(self.__dict__)
        shape = batch_shape + self.event_shape
        for t in reversed(self.transforms):
            shape = t.inverse_shape(shape)
        new.base_dist = self.base_dist.expand(shape[:len(shape)
                                                    - len(self.base_dist.event_shape)])
        for name, event_ndim in self._expand_params.items():  # (Pareto's, Weibull's)
            if name in self.__dict__:
                v = self.__dict__[name]
                tail = tuple(v.shape[v.ndim - event_ndim:]) if event_ndim else ()
                new.__dict__[name] = fnp.broadcast_to(v, batch_shape + tail)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=False)
    def support(self) -> constraints.Constraint:  # type: ignore[override]
        if not self.transforms:
            return self.base_dist.support
        support = self.transforms[-1].codomain
        if len(self.event_shape) > support.event_dim:
            support = constraints.independent(support, len(self.event_shape) - support.event_dim)
        return support

    @property
    def has_rsample(self) -> bool:  # type: ignore[override]
        return self.base_dist.has_rsample

    def sample(self, sample_shape: Any = (), *, key: Any = None) -> Any:
        x = self.base_dist.sample(sample_shape, key=key)
        for transform in self.transforms:
            x = transform(x)
        return funcgrad.stop_gradient(x)

    def rsample(self, sample_shape: Any = (), *, key: Any = None) -> Any:
        x = self.base_dist.rsample(sample_shape, key=key)
        for transform in self.transforms:
            x = transform(x)
        return x

    def log_prob(self, value: Any) -> Any:
        value = self._value(value)
        event_dim = len(self.event_shape)
        log_prob: Any = 0.0
        y = value
        for transform in reversed(self.transforms):
            x = transform.inv(y)
            event_dim += transform.domain.event_dim - transform.codomain.event_dim
            log_prob = log_prob - _sum_rightmost(transform.log_abs_det_jacobian(x, y),
                                                 event_dim - transform.domain.event_dim)
            y = x
        return log_prob + _sum_rightmost(self.base_dist.log_prob(y),
                                         event_dim - len(self.base_dist.event_shape))

    def _monotonize_cdf(self, value: Any) -> Any:
        sign: Any = 1
        for transform in self.transforms:
            sign = sign * transform.sign
        if isinstance(sign, int) and sign == 1:
            return value
        return sign * (value - 0.5) + 0.5

    def cdf(self, value: Any) -> Any:
        for transform in self.transforms[::-1]:
            value = transform.inv(value)
        if self._validate_args:
            self.base_dist._validate_sample(value)
        return self._monotonize_cdf(self.base_dist.cdf(value))

    def icdf(self, value: Any) -> Any:
        value = self.base_dist.icdf(self._monotonize_cdf(value))
        for transform in self.transforms:
            value = transform(value)
        return value

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.base_dist!r}, {self.transforms!r})"


class LogNormal(TransformedDistribution):
    """``exp(X)`` for ``X ~ Normal(loc, scale)``.

    >>> import numpy as np
    >>> d = LogNormal(np.array(0.0), np.array(1.0))
    >>> round(float(d.mean), 4), round(float(d.log_prob(np.array(1.0))), 4)
    (1.6487, -0.9189)
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        super().__init__(Normal(loc, scale, validate_args=validate_args), ExpTransform(),
                         validate_args=validate_args)

    @property
    def loc(self) -> Any:
        return self.base_dist.loc

    @property
    def scale(self) -> Any:
        return self.base_dist.scale

    @property
    def mean(self) -> Any:
        return fnp.exp(self.loc + self.scale ** 2 / 2)

    @property
    def mode(self) -> Any:
        return fnp.exp(self.loc - self.scale ** 2)

    @property
    def variance(self) -> Any:
        s2 = self.scale ** 2
        return fnp.expm1(s2) * fnp.exp(2 * self.loc + s2)

    def entropy(self) -> Any:
        return self.base_dist.entropy() + self.loc


class LogitRelaxedBernoulli(Distribution):
    """The logit of a :class:`RelaxedBernoulli` sample (a logistic distribution with
    location ``logits / temperature``).

    >>> import numpy as np
    >>> d = LogitRelaxedBernoulli(np.array(0.5), logits=np.array(0.0))
    >>> round(float(d.log_prob(np.array(0.0))), 4)
    -2.0794
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real
    has_rsample = True
    _expand_params = {"probs": 0, "logits": 0}

    def __init__(self, temperature: Any, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        name = "probs" if probs is not None else "logits"
        (param,) = broadcast_all(probs if probs is not None else logits)
        setattr(self, name, param)
        self.temperature = as_float(temperature, param.dtype)
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

    def rsample(self, sample_shape: Any = (), *, key: Any = None) -> Any:
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(fnp.broadcast_to(self.probs, shape))
        u = clamp_probs(frandom.uniform(make_key(key, f"{type(self).__name__}.rsample", self._like), shape,
                                        dtype=probs.dtype))
        return (fnp.log(u) - fnp.log1p(-u) + fnp.log(probs) - fnp.log1p(-probs)) / self.temperature

    def log_prob(self, value: Any) -> Any:
        value = self._value(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value * self.temperature
        return fnp.log(self.temperature) + diff - 2 * fnp.log1p(fnp.exp(diff))


class RelaxedBernoulli(TransformedDistribution):
    """The Concrete / Gumbel-softmax relaxation of a Bernoulli: values in ``(0, 1)``,
    reparameterised; low ``temperature`` approaches a Bernoulli.

    >>> import numpy as np
    >>> d = RelaxedBernoulli(np.array(0.5), probs=np.array(0.3))
    >>> x = d.rsample((4,), key=0); bool(((x > 0) & (x < 1)).all())
    True
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature: Any, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        super().__init__(LogitRelaxedBernoulli(temperature, probs, logits), SigmoidTransform(),
                         validate_args=validate_args)

    @property
    def temperature(self) -> Any:
        return self.base_dist.temperature

    @property
    def logits(self) -> Any:
        return self.base_dist.logits

    @property
    def probs(self) -> Any:
        return self.base_dist.probs


class ExpRelaxedCategorical(Distribution):
    """The log of a :class:`RelaxedOneHotCategorical` sample (``ExpConcrete``).

    >>> import numpy as np
    >>> d = ExpRelaxedCategorical(np.array(1.0), probs=np.array([0.5, 0.5]))
    >>> d.rsample(key=0).shape
    (2,)
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, temperature: Any, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        self._categorical = Categorical(probs, logits)
        self.temperature = as_float(temperature, self._categorical._param.dtype)
        super().__init__(self._categorical.batch_shape,
                         tuple(self._categorical.param_shape[-1:]), validate_args=validate_args)

    def _expanded(self, source: Distribution, batch_shape: tuple[int, ...]) -> None:
        self._categorical = source._categorical.expand(batch_shape)  # type: ignore[attr-defined]

    @property
    def param_shape(self) -> tuple[int, ...]:
        return self._categorical.param_shape

    @property
    def logits(self) -> Any:
        return self._categorical.logits

    @property
    def probs(self) -> Any:
        return self._categorical.probs

    def rsample(self, sample_shape: Any = (), *, key: Any = None) -> Any:
        shape = self._extended_shape(sample_shape)
        u = clamp_probs(frandom.uniform(make_key(key, f"{type(self).__name__}.rsample", self._like), shape,
                                        dtype=self.logits.dtype))
        gumbels = -fnp.log(-fnp.log(u))
        scores = (self.logits + gumbels) / self.temperature
        return scores - fsp.logsumexp(scores, axis=-1, keepdims=True)

    def log_prob(self, value: Any) -> Any:
        k = self._categorical._num_events
        value = self._value(value)
        logits, value = broadcast_all(self.logits, value)
        log_scale = (fsp.gammaln(fnp.full_like(self.temperature, float(k)))
                     + (k - 1) * fnp.log(self.temperature))
        score = logits - value * self.temperature
        score = fnp.sum(score - fsp.logsumexp(score, axis=-1, keepdims=True), axis=-1)
        return score + log_scale


class RelaxedOneHotCategorical(TransformedDistribution):
    """The Concrete / Gumbel-softmax relaxation of a one-hot categorical: points of the
    simplex, reparameterised (the straight-through trick's soft part).

    >>> import numpy as np
    >>> d = RelaxedOneHotCategorical(np.array(0.5), logits=np.zeros(3))
    >>> round(float(d.rsample(key=0).sum()), 6)
    1.0
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature: Any, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        super().__init__(ExpRelaxedCategorical(temperature, probs, logits,
                                               validate_args=validate_args),
                         ExpTransform(), validate_args=validate_args)

    @property
    def temperature(self) -> Any:
        return self.base_dist.temperature

    @property
    def logits(self) -> Any:
        return self.base_dist.logits

    @property
    def probs(self) -> Any:
        return self.base_dist.probs
