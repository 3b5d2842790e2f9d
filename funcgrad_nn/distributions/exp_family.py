"""``ExponentialFamily``: the base of distributions with densities
``exp(<t(x), theta> - F(theta) + k(x))``, as ``torch.distributions.exp_family``.

Subclasses give ``_natural_params`` (theta), ``_log_normalizer`` (F) and
``_mean_carrier_measure`` (E[k(x)]); from them the entropy and the KL divergence between two
members of one family follow by differentiating F (Bregman divergences). The derivative is
funcgrad's, so both stay differentiable with respect to every parameter.

>>> import numpy as np
>>> from funcgrad_nn.distributions import Gamma
>>> d = Gamma(np.array(2.0), np.array(3.0))
>>> bool(np.isclose(ExponentialFamily.entropy(d), d.entropy()))
True
"""

from __future__ import annotations

from typing import Any

import funcgrad
import funcgrad.numpy as fnp
from funcgrad_nn.distributions.distribution import Distribution

__all__ = ["ExponentialFamily"]


def _bregman_terms(dist: Any) -> tuple[Any, list[Any], list[Any]]:
    """F(theta), theta and dF/dtheta (the mean of the sufficient statistics)."""
    nparams = list(dist._natural_params)

    def total(ps: list[Any]) -> Any:
        return fnp.sum(dist._log_normalizer(*ps))

    grads = funcgrad.grad(total)(nparams)
    return dist._log_normalizer(*nparams), nparams, grads


class ExponentialFamily(Distribution):
    """Base class of exponential-family distributions (``Bernoulli``, ``Beta``,
    ``ContinuousBernoulli``, ``Dirichlet``, ``Exponential``, ``Gamma``, ``Normal``,
    ``Poisson``, ``Wishart``).

    >>> from funcgrad_nn.distributions import Normal, Poisson
    >>> isinstance(Normal(0.0, 1.0), ExponentialFamily), isinstance(Poisson(1.0), ExponentialFamily)
    (True, True)
    """

    @property
    def _natural_params(self) -> tuple[Any, ...]:
        raise NotImplementedError(f"{type(self).__name__} does not define _natural_params")

    def _log_normalizer(self, *natural_params: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} does not define _log_normalizer")

    @property
    def _mean_carrier_measure(self) -> Any:
        raise NotImplementedError(f"{type(self).__name__} does not define "
                                  "_mean_carrier_measure")

    def entropy(self) -> Any:
        """``F(theta) - <theta, dF/dtheta> - E[k(x)]`` (subclasses with a closed form
        override it)."""
        lg, nparams, grads = _bregman_terms(self)
        result = lg - self._mean_carrier_measure
        for p, g in zip(nparams, grads):
            result = result - fnp.sum(fnp.reshape(p * g, self._batch_shape + (-1,)), axis=-1)
        return result
