"""Univariate continuous distributions: Normal, Uniform, Laplace, Cauchy, Gumbel,
Exponential, Gamma, Chi2, Beta, StudentT, and the Dirichlet (its multivariate sibling, which
Beta is made of, as in torch).

>>> import numpy as np
>>> from funcgrad_nn.distributions import Gamma
>>> d = Gamma(np.array([2.0]), np.array([3.0]))
>>> d.mean.round(4).tolist(), d.log_prob(np.array([1.0])).round(4).tolist()
([0.6667], [-0.8028])
"""

from __future__ import annotations

import math
from typing import Any

import numpy

import funcgrad.numpy as fnp
import funcgrad.random as frandom
import funcgrad.scipy.special as fsp
from funcgrad_nn.distributions import constraints
from funcgrad_nn.distributions.distribution import Distribution
from funcgrad_nn.distributions.exp_family import ExponentialFamily
from funcgrad_nn.distributions.utils import as_float, broadcast_all, make_key

__all__ = ["Beta", "Cauchy", "Chi2", "Dirichlet", "Exponential", "Gamma", "Gumbel", "Laplace",
           "Normal", "StudentT", "Uniform"]

_EULER = 0.57721566490153286060
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _tiny(x: Any) -> float:
    return float(numpy.finfo(numpy.dtype(x.dtype)).tiny)


def _eps(x: Any) -> float:
    return float(numpy.finfo(numpy.dtype(x.dtype)).eps)


def _full(like: Any, shape: Any, value: float) -> Any:
    return fnp.full_like(like, value, shape=tuple(shape))


class _LocScale(Distribution):
    """Shared construction of the location-scale families (``loc`` real, ``scale``
    positive)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _expand_params = {"loc": 0, "scale": 0}

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(tuple(self.loc.shape), validate_args=validate_args)

    def _noise(self, sample_shape: Any, key: Any, sampler: Any) -> Any:
        return sampler(make_key(key, f"{type(self).__name__}.rsample", self._like),
                       self._extended_shape(sample_shape), dtype=self.loc.dtype)


class Normal(_LocScale, ExponentialFamily):
    """The normal (Gaussian) distribution ``N(loc, scale**2)``.

    >>> import numpy as np
    >>> d = Normal(np.array([0.0, 1.0]), np.array([1.0, 2.0]))
    >>> d.log_prob(np.array([0.0, 0.0])).round(4).tolist()
    [-0.9189, -1.7371]
    >>> d.cdf(np.array([0.0, 1.0])).tolist(), d.entropy().round(4).tolist()
    ([0.5, 0.5], [1.4189, 2.1121])
    """

    @property
    def mean(self) -> Any:
        return self.loc

    @property
    def mode(self) -> Any:
        return self.loc

    @property
    def stddev(self) -> Any:
        return self.scale

    @property
    def variance(self) -> Any:
        return self.scale ** 2

    def rsample(self, sample_shape: Any = (), *, key: Any = None) -> Any:
        return self.loc + self._noise(sample_shape, key, frandom.normal) * self.scale

    def log_prob(self, value: Any) -> Any:
        value = self._value(value)
        return (-((value - self.loc) ** 2) / (2 * self.scale ** 2) - fnp.log(self.scale)
                - _HALF_LOG_2PI)

    def cdf(self, value: Any) -> Any:
        value = self._value(value)
        return 0.5 * (1 + fsp.erf((value - self.loc) / (self.scale * math.sqrt(2))))

    def icdf(self, value: Any) -> Any:
        return self.loc + self.scale * fsp.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self) -> Any:
        return 0.5 + _HALF_LOG_2PI + fnp.log(self.scale)

    @property
    def _natural_params(self) -> tuple[Any, ...]:
        return (self.loc / self.scale ** 2, -0.5 / self.scale ** 2)

    def _log_normalizer(self, x: Any, y: Any) -> Any:
        return -0.25 * x ** 2 / y + 0.5 * fnp.log(-math.pi / y)


class Laplace(_LocScale):
    """The Laplace distribution (density ``exp(-|x - loc| / scale) / (2 scale)``).

    >>> import numpy as np
    >>> Laplace(np.array(0.0), np.array(1.0)).log_prob(np.array(1.0)).round(4).tolist()
    -1.6931
    """

    @property
    def mean(self) -> Any:
        return self.loc

    @property
    def mode(self) -> Any:
        return self.loc

    @property
    def variance(self) -> Any:
        return 2 * self.scale ** 2

    @property
    def stddev(self) -> Any:
        return (2 ** 0.5) * self.scale

    def rsample(self, sample_shape: Any = (), *, key: Any = None) -> Any:
        shape = self._extended_shape(sample_shape)
        u = frandom.uniform(make_key(key, "Laplace.rsample", self._like), shape, dtype=self.loc.dtype,
                            minval=_eps(self.loc) - 1, maxval=1)
        return self.loc - self.scale * fnp.sign(u) * fnp.log1p(
            -fnp.maximum(fnp.abs(u), _tiny(self.loc)))

    def log_prob(self, value: Any) -> Any:
        value = self._value(value)
        return -fnp.log(2 * self.scale) - fnp.abs(value - self.loc) / self.scale

    def cdf(self, value: Any) -> Any:
        value = self._value(value)
        d = value - self.loc
        return 0.5 - 0.5 * fnp.sign(d) * fnp.expm1(-fnp.abs(d) / self.scale)

    def icdf(self, value: Any) -> Any:
        term = value - 0.5
        return self.loc - self.scale * fnp.sign(term) * fnp.log1p(-2 * fnp.abs(term))

    def entropy(self) -> Any:
        return 1 + fnp.log(2 * self.scale)


class Cauchy(_LocScale):
    """The Cauchy (Lorentz) distribution; its mean is undefined (NaN) and variance infinite.

    >>> import numpy as np
    >>> d = Cauchy(np.array(0.0), np.array(1.0))
    >>> round(float(d.cdf(np.array(1.0))), 4), d.mean.tolist()
    (0.75, nan)
    """

    @property
    def mean(self) -> Any:
        return _full(self.loc, self._extended_shape(), math.nan)

    @property
    def mode(self) -> Any:
        return self.loc

    @property
    def variance(self) -> Any:
        return _full(self.loc, self._extended_shape(), math.inf)

    def rsample(self, sample_shape: Any = (), *, key: Any = None) -> Any:
        return self.loc + self._noise(sample_shape, key, frandom.cauchy) * self.scale

    def log_prob(self, value: Any) -> Any:
        value = self._value(value)
        return (-math.log(math.pi) - fnp.log(self.scale)
                - fnp.log1p(((value - self.loc) / self.scale) ** 2))

    def cdf(self, value: Any) -> Any:
        value = self._value(value)
        return fnp.arctan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value: Any) -> Any:
        return fnp.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self) -> Any:
        return math.log(4 * math.pi) + fnp.log(self.scale)


class Gumbel(_LocScale):
    """The Gumbel (type-I extreme value) distribution.

    >>> import numpy as np
    >>> d = Gumbel(np.array(1.0), np.array(2.0))
    >>> round(float(d.mean), 4), round(float(d.log_prob(np.array(0.0))), 4)
    (2.1544, -1.8419)
    """

    @property
    def mean(self) -> Any:
        return self.loc + self.scale * _EULER

    @property
    def mode(self) -> Any:
        return self.loc

    @property
    def stddev(self) -> Any:
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self) -> Any:
        return self.stddev ** 2

    def rsample(self, sample_shape: Any = (), *, key: Any = None) -> Any:
        # torch: uniform on [tiny, 1 - eps] pushed through loc - scale * log(-log(u))
        u = frandom.uniform(make_key(key, "Gumbel.rsample", self._like), self._extended_shape(sample_shape),
                            dtype=self.loc.dtype, minval=_tiny(self.loc),
                            maxval=1 - _eps(self.loc))
        return self.loc - self.scale * fnp.log(-fnp.log(u))

    def log_prob(self, value: Any) -> Any:
        value = self._value(value)
        y = (self.loc - value) / self.scale
        return (y - fnp.exp(y)) - fnp.log(self.scale)

    def cdf(self, value: Any) -> Any:
        value = self._value(value)
        return fnp.exp(-fnp.exp(-(value - self.loc) / self.scale))

    def icdf(self, value: Any) -> Any:
        return self.loc - self.scale * fnp.log(-fnp.log(value))

    def entropy(self) -> Any:
        return fnp.log(self.scale) + (1 + _EULER)


class Uniform(Distribution):
    """The continuous uniform distribution on ``[low, high)``.

    >>> import numpy as np
    >>> d = Uniform(np.array(0.0), np.array(4.0))
    >>> float(d.log_prob(np.array(1.0))) == -math.log(4), float(d.cdf(np.array(1.0)))
    (True, 0.25)
    """

    has_rsample = True
    _expand_params = {"low": 0, "high": 0}

    def __init__(self, low: Any, high: Any, validate_args: bool | None = None) -> None:
        self.low, self.high = broadcast_all(low, high)
        super().__init__(tuple(self.low.shape), validate_args=validate_args)

    @property
    def arg_constraints(self) -> dict[str, constraints.Constraint]:  # type: ignore[override]
        return {"low": constraints.less_than(self.high),
                "high": constraints.greater_than(self.low)}

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.interval(self.low, self.high)

    @property
    def mean(self) -> Any:
        return (self.high + self.low) / 2

    @property
    def mode(self) -> Any:
        return math.nan * self.high

    @property
    def stddev(self) -> Any:
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self) -> Any:
        return (self.high - self.low) ** 2 / 12

    def rsample(self, sample_shape: Any = (), *, key: Any = None) -> Any:
        rand = frandom.uniform(make_key(key, "Uniform.rsample", self._like),
                               self._extended_shape(sample_shape), dtype=self.low.dtype)
        return self.low + rand * (self.high - self.low)

    def log_prob(self, value: Any) -> Any:
        value = self._value(value)
        inside = (self.low <= value) & (self.high > value)
        with numpy.errstate(divide="ignore"):
            return fnp.log(fnp.where(inside, 1.0, 0.0).astype(self.low.dtype)) - fnp.log(
                self.high - self.low)

    def cdf(self, value: Any) -> Any:
        value = self._value(value)
        return fnp.clip((value - self.low) / (self.high - self.low), 0, 1)

    def icdf(self, value: Any) -> Any:
        return value * (self.high - self.low) + self.low

    def entropy(self) -> Any:
        return fnp.log(self.high - self.low)


class Exponential(ExponentialFamily):
    """The exponential distribution with rate ``rate`` (mean ``1 / rate``).

    >>> import numpy as np
    >>> d = Exponential(np.array(2.0))
    >>> float(d.mean), round(float(d.log_prob(np.array(1.0))), 4)
    (0.5, -1.3069)
    """

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _expand_params = {"rate": 0}

    def __init__(self, rate: Any, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(tuple(self.rate.shape), validate_args=validate_args)

    @property
    def mean(self) -> Any:
        return 1 / self.rate

    @property
    def mode(self) -> Any:
        return fnp.zeros_like(self.rate)

    @property
    def stddev(self) -> Any:
        return 1 / self.rate

    @property
    def variance(self) -> Any:
        return self.rate ** -2

    def rsample(self, sample_shape: Any = (), *, key: Any = None) -> Any:
        e = frandom.exponential(make_key(key, "Exponential.rsample", self._like),
                                self._extended_shape(sample_shape), dtype=self.rate.dtype)
        return e / self.rate

    def log_prob(self, value: Any) -> Any:
        value = self._value(value)
        return fnp.log(self.rate) - self.rate * value

    def cdf(self, value: Any) -> Any:
        value = self._value(value)
        return 1 - fnp.exp(-self.rate * value)

    def icdf(self, value: Any) -> Any:
        return -fnp.log1p(-value) / self.rate

    def entropy(self) -> Any:
        return 1.0 - fnp.log(self.rate)

    _mean_carrier_measure = 0

    @property
    def _natural_params(self) -> tuple[Any, ...]:
        return (-self.rate,)

    def _log_normalizer(self, x: Any) -> Any:
        return -fnp.log(-x)


class Gamma(ExponentialFamily):
    """The gamma distribution with shape ``concentration`` and ``rate`` (mean
    ``concentration / rate``). ``rsample`` differentiates through the sampler (implicit
    reparameterisation, as torch).

    >>> import numpy as np
    >>> d = Gamma(np.array(2.0), np.array(1.0))
    >>> round(float(d.entropy()), 4), round(float(d.cdf(np.array(1.0))), 4)
    (1.5772, 0.2642)
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _expand_params = {"concentration": 0, "rate": 0}

    def __init__(self, concentration: Any, rate: Any, validate_args: bool | None = None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(tuple(self.rate.shape), validate_args=validate_args)

    @property
    def mean(self) -> Any:
        return self.concentration / self.rate

    @property
    def mode(self) -> Any:
        return fnp.maximum((self.concentration - 1) / self.rate, 0)

    @property
    def variance(self) -> Any:
        return self.concentration / self.rate ** 2

    def rsample(self, sample_shape: Any = (), *, key: Any = None) -> Any:
        shape = self._extended_shape(sample_shape)
        g = frandom.gamma(make_key(key, f"{type(self).__name__}.rsample", self._like),
                          fnp.broadcast_to(self.concentration, shape), shape,
                          dtype=self.rate.dtype)
        return fnp.maximum(g / self.rate, _tiny(self.rate))

    def log_prob(self, value: Any) -> Any:
        value = as_float(self._value(value), self.rate.dtype)
        return (fsp.xlogy(self.concentration, self.rate)
                + fsp.xlogy(self.concentration - 1, value)
                - self.rate * value - fsp.gammaln(self.concentration))

    def cdf(self, value: Any) -> Any:
        value = self._value(value)
        return fsp.gammainc(self.concentration, self.rate * value)

    def entropy(self) -> Any:
        c = self.concentration
        return (c - fnp.log(self.rate) + fsp.gammaln(c)
                + (1.0 - c) * fsp.digamma(c))

    _mean_carrier_measure = 0

    @property
    def _natural_params(self) -> tuple[Any, ...]:
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x: Any, y: Any) -> Any:
        return fsp.gammaln(x + 1) + (x + 1) * fnp.log(-1 / y)


class Chi2(Gamma):
    """The chi-squared distribution with ``df`` degrees of freedom (``Gamma(df / 2, 1/2)``).

    >>> import numpy as np
    >>> float(Chi2(np.array(4.0)).mean), float(Chi2(np.array(4.0)).variance)
    (4.0, 8.0)
    """

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df: Any, validate_args: bool | None = None) -> None:
        (df,) = broadcast_all(df)
        super().__init__(0.5 * df, fnp.full_like(df, 0.5), validate_args=validate_args)

    @property
    def df(self) -> Any:
        return self.concentration * 2


class StudentT(Distribution):
    """Student's t-distribution with ``df`` degrees of freedom, location and scale.

    >>> import numpy as np
    >>> d = StudentT(np.array(3.0))
    >>> round(float(d.log_prob(np.array(0.5))), 4), float(d.variance)
    (-1.161, 3.0)
    """

    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _expand_params = {"df": 0, "loc": 0, "scale": 0}

    def __init__(self, df: Any, loc: Any = 0.0, scale: Any = 1.0,
                 validate_args: bool | None = None) -> None:
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        super().__init__(tuple(self.df.shape), validate_args=validate_args)

    @property
    def mean(self) -> Any:
        return fnp.where(self.df <= 1, math.nan, self.loc)

    @property
    def mode(self) -> Any:
        return self.loc

    @property
    def variance(self) -> Any:
        df = self.df
        safe = fnp.where(df > 2, df, 3.0)
        v = self.scale ** 2 * safe / (safe - 2)
        return fnp.where(df > 2, v, fnp.where(df > 1, math.inf, math.nan))

    def rsample(self, sample_shape: Any = (), *, key: Any = None) -> Any:
        shape = self._extended_shape(sample_shape)
        k1, k2 = frandom.split(make_key(key, "StudentT.rsample", self._like))
        x = frandom.normal(k1, shape, dtype=self.df.dtype)
        z = Chi2(self.df, validate_args=False).rsample(sample_shape, key=k2)
        return self.loc + self.scale * x / fnp.sqrt(z / self.df)

    def log_prob(self, value: Any) -> Any:
        value = self._value(value)
        y = (value - self.loc) / self.scale
        z = (fnp.log(self.scale) + 0.5 * fnp.log(self.df) + 0.5 * math.log(math.pi)
             + fsp.gammaln(0.5 * self.df) - fsp.gammaln(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * fnp.log1p(y ** 2 / self.df) - z

    def entropy(self) -> Any:
        df = self.df
        lbeta = fsp.gammaln(0.5 * df) + math.lgamma(0.5) - fsp.gammaln(0.5 * (df + 1))
        return (fnp.log(self.scale)
                + 0.5 * (df + 1) * (fsp.digamma(0.5 * (df + 1)) - fsp.digamma(0.5 * df))
                + 0.5 * fnp.log(df) + lbeta)


class Dirichlet(ExponentialFamily):
    """The Dirichlet distribution over the simplex, with ``concentration`` (last axis: the
    event). ``rsample`` differentiates through the sampler.

    >>> import numpy as np
    >>> d = Dirichlet(np.array([1.0, 2.0, 3.0]))
    >>> d.mean.round(4).tolist(), round(float(d.log_prob(np.array([0.2, 0.3, 0.5]))), 4)
    ([0.1667, 0.3333, 0.5], 1.5041)
    """

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True
    _expand_params = {"concentration": 1}

    def __init__(self, concentration: Any, validate_args: bool | None = None) -> None:
        concentration = as_float(concentration)
        if concentration.ndim < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        shape = tuple(concentration.shape)
        super().__init__(shape[:-1], shape[-1:], validate_args=validate_args)

    def rsample(self, sample_shape: Any = (), *, key: Any = None) -> Any:
        shape = self._extended_shape(sample_shape)
        conc = fnp.broadcast_to(self.concentration, shape)
        x = frandom.dirichlet(make_key(key, "Dirichlet.rsample", self._like), conc, shape[:-1],
                              dtype=conc.dtype)
        return fnp.clip(x, _tiny(conc), 1 - _eps(conc))

    def log_prob(self, value: Any) -> Any:
        value = self._value(value)
        c = self.concentration
        return (fnp.sum(fsp.xlogy(c - 1.0, value), axis=-1) + fsp.gammaln(fnp.sum(c, axis=-1))
                - fnp.sum(fsp.gammaln(c), axis=-1))

    @property
    def mean(self) -> Any:
        return self.concentration / fnp.sum(self.concentration, axis=-1, keepdims=True)

    @property
    def mode(self) -> Any:
        cm1 = fnp.maximum(self.concentration - 1, 0.0)
        total = fnp.sum(cm1, axis=-1, keepdims=True)
        # all concentrations at most 1: no interior mode (torch's 0/0 rows, replaced below)
        mode = cm1 / fnp.where(total == 0, 1.0, total)
        # all concentrations below 1: the mass piles at a corner, torch picks the argmax one
        all_small = fnp.all(self.concentration < 1, axis=-1, keepdims=True)
        n = self.concentration.shape[-1]
        corner = (fnp.arange(n) == fnp.argmax(mode, axis=-1)[..., None]).astype(mode.dtype)
        return fnp.where(all_small, corner, mode)

    @property
    def variance(self) -> Any:
        c = self.concentration
        c0 = fnp.sum(c, axis=-1, keepdims=True)
        return c * (c0 - c) / (c0 ** 2 * (c0 + 1))

    def entropy(self) -> Any:
        c = self.concentration
        k = c.shape[-1]
        a0 = fnp.sum(c, axis=-1)
        return (fnp.sum(fsp.gammaln(c), axis=-1) - fsp.gammaln(a0)
                - (k - a0) * fsp.digamma(a0)
                - fnp.sum((c - 1.0) * fsp.digamma(c), axis=-1))

    @property
    def _natural_params(self) -> tuple[Any, ...]:
        return (self.concentration,)

    def _log_normalizer(self, x: Any) -> Any:
        return fnp.sum(fsp.gammaln(x), axis=-1) - fsp.gammaln(fnp.sum(x, axis=-1))


class Beta(ExponentialFamily):
    """The beta distribution on ``[0, 1]``: ``concentration1`` (alpha) and
    ``concentration0`` (beta). Built on a two-category :class:`Dirichlet`, as in torch.

    >>> import numpy as np
    >>> d = Beta(np.array(2.0), np.array(3.0))
    >>> float(d.mean), round(float(d.log_prob(np.array(0.5))), 4)
    (0.4, 0.4055)
    """

    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1: Any, concentration0: Any,
                 validate_args: bool | None = None) -> None:
        c1, c0 = broadcast_all(concentration1, concentration0)
        self._dirichlet = Dirichlet(fnp.stack([c1, c0], axis=-1), validate_args=validate_args)
        super().__init__(self._dirichlet.batch_shape, validate_args=validate_args)

    def _expanded(self, source: Distribution, batch_shape: tuple[int, ...]) -> None:
        self._dirichlet = source._dirichlet.expand(batch_shape)  # type: ignore[attr-defined]

    @property
    def concentration1(self) -> Any:
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self) -> Any:
        return self._dirichlet.concentration[..., 1]

    @property
    def mean(self) -> Any:
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self) -> Any:
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self) -> Any:
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total ** 2 * (total + 1))

    def rsample(self, sample_shape: Any = (), *, key: Any = None) -> Any:
        return self._dirichlet.rsample(sample_shape, key=make_key(key, "Beta.rsample", self._like))[..., 0]

    def log_prob(self, value: Any) -> Any:
        value = self._value(value)
        return self._dirichlet.log_prob(fnp.stack([value, 1.0 - value], axis=-1))

    def cdf(self, value: Any) -> Any:
        value = self._value(value)
        return fsp.betainc(self.concentration1, self.concentration0, value)

    def entropy(self) -> Any:
        return self._dirichlet.entropy()

    @property
    def _natural_params(self) -> tuple[Any, ...]:
        return (self.concentration1, self.concentration0)

    def _log_normalizer(self, x: Any, y: Any) -> Any:
        return fsp.gammaln(x) + fsp.gammaln(y) - fsp.gammaln(x + y)
