"""Discrete distributions: Bernoulli, Geometric, Binomial, Poisson, Categorical and
OneHotCategorical. Their samples carry no gradient (no ``rsample``; see the relaxed
distributions for differentiable surrogates).

>>> import numpy as np
>>> from funcgrad_nn.distributions import Categorical
>>> d = Categorical(probs=np.array([0.1, 0.2, 0.7]))
>>> d.log_prob(np.array(2)).round(4).tolist(), int(d.mode), d.sample((4,), key=0).shape
(-0.3567, 2, (4,))
"""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad
import funcgrad.nn as fnn
import funcgrad.numpy as fnp
import funcgrad.random as frandom
import funcgrad.scipy.special as fsp
from funcgrad_nn.distributions import constraints
from funcgrad_nn.distributions.distribution import Distribution
from funcgrad_nn.distributions.exp_family import ExponentialFamily
from funcgrad_nn.distributions.utils import (
    as_float,
    broadcast_all,
    lazy_property,
    logits_to_probs,
    make_key,
    probs_to_logits,
)

__all__ = ["Bernoulli", "Binomial", "Categorical", "Geometric", "OneHotCategorical",
           "OneHotCategoricalStraightThrough", "Poisson"]


def _one_of(probs: Any, logits: Any) -> None:
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


def _bce_with_logits(logits: Any, target: Any) -> Any:
    """Elementwise binary cross-entropy with logits (torch's stable form)."""
    return fnp.maximum(logits, 0) - logits * target + fnp.log1p(fnp.exp(-fnp.abs(logits)))


def _enumerate(values: Any, batch_shape: tuple[int, ...], expand: bool,
               event_shape: tuple[int, ...] = ()) -> Any:
    n = values.shape[0]
    values = fnp.reshape(values, (n,) + (1,) * len(batch_shape) + event_shape)
    if expand:
        values = fnp.broadcast_to(values, (n,) + batch_shape + event_shape)
    return values


class _BinaryParam(Distribution):
    """Distributions of one success probability, given as ``probs`` or ``logits``."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    _expand_params = {"probs": 0, "logits": 0}

    def _set_param(self, probs: Any, logits: Any, *others: Any) -> tuple[Any, ...]:
        _one_of(probs, logits)
        name = "probs" if probs is not None else "logits"
        param, *rest = broadcast_all(probs if probs is not None else logits, *others)
        setattr(self, name, param)
        return (param, *rest)

    @lazy_property
    def logits(self) -> Any:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Any:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def _param(self) -> Any:
        return self.__dict__["probs"] if "probs" in self.__dict__ else self.__dict__["logits"]

    @property
    def param_shape(self) -> tuple[int, ...]:
        return tuple(self._param.shape)


class Bernoulli(_BinaryParam, ExponentialFamily):
    """The Bernoulli distribution: 1 with probability ``probs`` (or ``sigmoid(logits)``).

    >>> import numpy as np
    >>> d = Bernoulli(logits=np.array([0.0, 2.0]))
    >>> d.probs.round(4).tolist(), d.entropy().round(4).tolist()
    ([0.5, 0.8808], [0.6931, 0.3653])
    """

    support = constraints.boolean
    has_enumerate_support = True

    def __init__(self, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        (param,) = self._set_param(probs, logits)
        super().__init__(tuple(param.shape), validate_args=validate_args)

    @property
    def mean(self) -> Any:
        return self.probs

    @property
    def mode(self) -> Any:
        p = self.probs
        return fnp.where(p == 0.5, numpy.nan, (p >= 0.5).astype(p.dtype))

    @property
    def variance(self) -> Any:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = (), *, key: Any = None) -> Any:
        shape = self._extended_shape(sample_shape)
        p = funcgrad.stop_gradient(self.probs)
        u = frandom.uniform(make_key(key, "Bernoulli.sample", self._like), shape, dtype=p.dtype)
        return (u < p).astype(p.dtype)

    def log_prob(self, value: Any) -> Any:
        value = self._value(value)
        logits, value = broadcast_all(self.logits, value)
        return -_bce_with_logits(logits, value)

    def entropy(self) -> Any:
        return _bce_with_logits(self.logits, self.probs)

    _mean_carrier_measure = 0

    @property
    def _natural_params(self) -> tuple[Any, ...]:
        p = self.probs
        return (fnp.log(p) - fnp.log1p(-p),)

    def _log_normalizer(self, x: Any) -> Any:
        return fnp.log1p(fnp.exp(x))

    def enumerate_support(self, expand: bool = True) -> Any:
        return _enumerate(fnp.arange(2, dtype=self._param.dtype), self._batch_shape, expand)


class Geometric(_BinaryParam):
    """The number of failures before the first success, success probability ``probs``.

    >>> import numpy as np
    >>> d = Geometric(probs=np.array(0.25))
    >>> float(d.mean), round(float(d.log_prob(np.array(2.0))), 4)
    (3.0, -1.9617)
    """

    support = constraints.nonnegative_integer

    def __init__(self, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        (param,) = self._set_param(probs, logits)
        super().__init__(tuple(param.shape), validate_args=validate_args)
        if self._validate_args and probs is not None:
            value = self.probs
            valid = value > 0
            if not funcgrad.core.is_tracer(valid) and not bool(numpy.all(
                    funcgrad.to_numpy(valid))):
                bad = funcgrad.to_numpy(value)[~funcgrad.to_numpy(valid)]
                raise ValueError(
                    "Expected parameter probs "
                    f"({type(value).__name__} of shape {tuple(value.shape)}) "
                    f"of distribution {self!r} "
                    f"to be positive but found invalid values:\n{bad}")

    @property
    def mean(self) -> Any:
        return 1.0 / self.probs - 1.0

    @property
    def mode(self) -> Any:
        return fnp.zeros_like(self.probs)

    @property
    def variance(self) -> Any:
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape: Any = (), *, key: Any = None) -> Any:
        p = funcgrad.stop_gradient(self.probs)
        tiny = float(numpy.finfo(numpy.dtype(p.dtype)).tiny)
        u = frandom.uniform(make_key(key, "Geometric.sample", self._like), self._extended_shape(sample_shape),
                            dtype=p.dtype, minval=tiny, maxval=1.0)
        return fnp.floor(fnp.log(u) / fnp.log1p(-p))

    def log_prob(self, value: Any) -> Any:
        value = self._value(value)
        value, probs = broadcast_all(value, self.probs)
        # torch: a certain success (p == 1) has probability 1 at 0, not 0 * log(0) = NaN
        probs = fnp.where((probs == 1) & (value == 0), 0.0, probs)
        return value * fnp.log1p(-probs) + fnp.log(self.probs)

    def entropy(self) -> Any:
        return _bce_with_logits(self.logits, self.probs) / self.probs


class Binomial(_BinaryParam):
    """The number of successes in ``total_count`` trials of probability ``probs`` (or
    ``sigmoid(logits)``).

    >>> import numpy as np
    >>> d = Binomial(10, probs=np.array(0.3))
    >>> float(d.mean), round(float(d.log_prob(np.array(3.0))), 4)
    (3.0, -1.3212)
    """

    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True
    _expand_params = {"total_count": 0, "probs": 0, "logits": 0}

    def __init__(self, total_count: Any = 1, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        param, self.total_count = self._set_param(probs, logits, total_count)
        super().__init__(tuple(param.shape), validate_args=validate_args)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self) -> Any:
        return self.total_count * self.probs

    @property
    def mode(self) -> Any:
        return fnp.minimum(fnp.floor((self.total_count + 1) * self.probs), self.total_count)

    @property
    def variance(self) -> Any:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = (), *, key: Any = None) -> Any:
        shape = self._extended_shape(sample_shape)
        p = funcgrad.stop_gradient(self.probs)
        n = funcgrad.stop_gradient(self.total_count)
        out = frandom.binomial(make_key(key, "Binomial.sample", self._like), fnp.broadcast_to(n, shape),
                               fnp.broadcast_to(p, shape), shape, dtype=p.dtype)
        return out.astype(p.dtype)

    def log_prob(self, value: Any) -> Any:
        value = self._value(value)
        n, logits = self.total_count, self.logits
        normalize = (n * fnp.maximum(logits, 0) + n * fnp.log1p(fnp.exp(-fnp.abs(logits)))
                     - fsp.gammaln(n + 1))
        return (value * logits - fsp.gammaln(value + 1) - fsp.gammaln(n - value + 1)
                - normalize)

    def _homogeneous_count(self, what: str) -> int:
        counts = numpy.asarray(funcgrad.to_numpy(funcgrad.core.concrete_or_error(
            self.total_count, f"Binomial.{what}'s total_count")))
        total = int(counts.max()) if counts.size else 0
        if counts.size and counts.min() != total:
            raise ValueError(f"Inhomogeneous total count not supported by `{what}`.")
        return total

    def entropy(self) -> Any:
        self._homogeneous_count("entropy")
        lp = self.log_prob(self.enumerate_support(False))
        return -fnp.sum(fnp.exp(lp) * lp, axis=0)

    def enumerate_support(self, expand: bool = True) -> Any:
        total = self._homogeneous_count("enumerate_support")
        return _enumerate(fnp.arange(1 + total, dtype=self._param.dtype), self._batch_shape,
                          expand)


class Poisson(ExponentialFamily):
    """The Poisson distribution with mean ``rate``.

    >>> import numpy as np
    >>> d = Poisson(np.array(4.0))
    >>> round(float(d.log_prob(np.array(2.0))), 4), float(d.mode)
    (-1.9206, 4.0)
    """

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer
    _expand_params = {"rate": 0}

    def __init__(self, rate: Any, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(tuple(self.rate.shape), validate_args=validate_args)

    @property
    def mean(self) -> Any:
        return self.rate

    @property
    def mode(self) -> Any:
        return fnp.floor(self.rate)

    @property
    def variance(self) -> Any:
        return self.rate

    def sample(self, sample_shape: Any = (), *, key: Any = None) -> Any:
        shape = self._extended_shape(sample_shape)
        rate = funcgrad.stop_gradient(self.rate)
        out = frandom.poisson(make_key(key, "Poisson.sample", self._like), fnp.broadcast_to(rate, shape),
                              shape)
        return out.astype(rate.dtype)

    def log_prob(self, value: Any) -> Any:
        value = self._value(value)
        rate, value = broadcast_all(self.rate, value)
        return fsp.xlogy(value, rate) - rate - fsp.gammaln(value + 1)

    @property
    def _natural_params(self) -> tuple[Any, ...]:
        return (fnp.log(self.rate),)

    def _log_normalizer(self, x: Any) -> Any:
        return fnp.exp(x)


class Categorical(Distribution):
    """A distribution over ``{0, ..., K-1}`` given ``probs`` (normalised over the last axis)
    or ``logits`` (unnormalised log-probabilities); samples are int64 indices.

    >>> import numpy as np
    >>> d = Categorical(logits=np.log(np.array([[1.0, 3.0], [1.0, 1.0]])))
    >>> d.probs.tolist(), d.entropy().round(4).tolist()
    ([[0.25, 0.75], [0.5, 0.5]], [0.5623, 0.6931])
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True
    _expand_params = {"probs": 1, "logits": 1}

    def __init__(self, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        _one_of(probs, logits)
        if probs is not None:
            probs = as_float(probs)
            if probs.ndim < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / fnp.sum(probs, axis=-1, keepdims=True)
        else:
            logits = as_float(logits)
            if logits.ndim < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - fsp.logsumexp(logits, axis=-1, keepdims=True)
        param = self._param
        self._num_events = int(param.shape[-1])
        super().__init__(tuple(param.shape[:-1]), validate_args=validate_args)

    @property
    def _param(self) -> Any:
        return self.__dict__["probs"] if "probs" in self.__dict__ else self.__dict__["logits"]

    @property
    def param_shape(self) -> tuple[int, ...]:
        return tuple(self._param.shape)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self) -> Any:
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self) -> Any:
        return logits_to_probs(self.logits)

    @property
    def mean(self) -> Any:
        return fnp.full_like(self._param, numpy.nan, shape=self._extended_shape())

    @property
    def mode(self) -> Any:
        return fnp.argmax(self.probs, axis=-1)

    @property
    def variance(self) -> Any:
        return fnp.full_like(self._param, numpy.nan, shape=self._extended_shape())

    def sample(self, sample_shape: Any = (), *, key: Any = None) -> Any:
        shape = self._extended_shape(sample_shape)
        logits = funcgrad.stop_gradient(self.logits)
        out = frandom.categorical(make_key(key, f"{type(self).__name__}.sample", self._like), logits,
                                  axis=-1, shape=shape)
        return out.astype(numpy.int64)

    def log_prob(self, value: Any) -> Any:
        value = self._value(value)
        idx = value.astype(numpy.int64)[..., None]
        shape = fnp.broadcast_shapes(tuple(idx.shape), tuple(self.logits.shape))
        idx = fnp.broadcast_to(idx, shape[:-1] + (1,))
        log_pmf = fnp.broadcast_to(self.logits, shape)
        return fnp.take_along_axis(log_pmf, idx, axis=-1)[..., 0]

    def entropy(self) -> Any:
        min_real = float(numpy.finfo(numpy.dtype(self.logits.dtype)).min)
        logits = fnp.maximum(self.logits, min_real)
        return -fnp.sum(logits * self.probs, axis=-1)

    def enumerate_support(self, expand: bool = True) -> Any:
        return _enumerate(fnp.arange(self._num_events, dtype=numpy.int64), self._batch_shape,
                          expand)

    def _expanded(self, source: Distribution, batch_shape: tuple[int, ...]) -> None:
        self._num_events = source._num_events  # type: ignore[attr-defined]


class OneHotCategorical(Distribution):
    """A :class:`Categorical` whose samples are one-hot vectors of length ``K``.

    >>> import numpy as np
    >>> d = OneHotCategorical(probs=np.array([0.2, 0.8]))
    >>> d.event_shape, round(float(d.log_prob(np.array([0.0, 1.0]))), 4)
    ((2,), -0.2231)
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        self._categorical = Categorical(probs, logits)
        batch_shape = self._categorical.batch_shape
        event_shape = tuple(self._categorical.param_shape[-1:])
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def _expanded(self, source: Distribution, batch_shape: tuple[int, ...]) -> None:
        self._categorical = source._categorical.expand(batch_shape)  # type: ignore[attr-defined]

    @property
    def _param(self) -> Any:
        return self._categorical._param

    @property
    def probs(self) -> Any:
        return self._categorical.probs

    @property
    def logits(self) -> Any:
        return self._categorical.logits

    @property
    def param_shape(self) -> tuple[int, ...]:
        return self._categorical.param_shape

    @property
    def mean(self) -> Any:
        return self._categorical.probs

    @property
    def mode(self) -> Any:
        probs = self._categorical.probs
        return fnn.one_hot(fnp.argmax(probs, axis=-1), probs.shape[-1], dtype=probs.dtype)

    @property
    def variance(self) -> Any:
        p = self._categorical.probs
        return p * (1 - p)

    def sample(self, sample_shape: Any = (), *, key: Any = None) -> Any:
        probs = self._categorical.probs
        idx = self._categorical.sample(sample_shape, key=make_key(
            key, "OneHotCategorical.sample", self._like))
        return fnn.one_hot(idx, probs.shape[-1], dtype=probs.dtype)

    def log_prob(self, value: Any) -> Any:
        value = self._value(value)
        return self._categorical.log_prob(fnp.argmax(value, axis=-1))

    def entropy(self) -> Any:
        return self._categorical.entropy()

    def enumerate_support(self, expand: bool = True) -> Any:
        n = self.event_shape[0]
        return _enumerate(fnp.eye(n, dtype=self._param.dtype), self._batch_shape, expand, (n,))


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """A :class:`OneHotCategorical` whose ``rsample`` is the straight-through estimator: the
    value is a one-hot sample, the gradient that of ``probs`` (Bengio et al., 2013).

    >>> import numpy as np, funcgrad
    >>> def f(logits):
    ...     d = OneHotCategoricalStraightThrough(logits=logits)
    ...     return (d.rsample(key=0) * np.array([1.0, 2.0, 3.0])).sum()
    >>> (funcgrad.grad(f)(np.zeros(3)).round(4) + 0.0).tolist()
    [-0.3333, 0.0, 0.3333]
    """

    has_rsample = True

    def rsample(self, sample_shape: Any = (), *, key: Any = None) -> Any:
        samples = self.sample(sample_shape, key=key)
        probs = self._categorical.probs
        return samples + (probs - funcgrad.stop_gradient(probs))
