"""optax.perturbations (optax 0.2.8): ``make_perturbed_fun`` turns a function, differentiable
or not, into a stochastic smoothing ``f_sigma(x) = E_z f(x + sigma z)`` whose values and
derivatives of any order (through funcgrad's autodiff) are unbiased Monte-Carlo estimates
(the score-function estimator written with DiCE's "magic box"), with optax's noise
distributions ``Gumbel`` (the default) and ``Normal``. The draws are funcgrad.random's, not
JAX's bits: the estimator is optax's, the samples are not its numbers.

>>> import numpy as np
>>> import funcgrad, funcgrad.numpy as fnp
>>> from funcgrad import random
>>> from funcgrad_nn.optim import perturbations
>>> relu_sum = lambda x: fnp.sum(fnp.maximum(x, 0.0))
>>> fn = perturbations.make_perturbed_fun(relu_sum, 4000, 0.1, perturbations.Normal())
>>> g = funcgrad.grad(fn, argnums=1)(random.key(0), np.zeros(3))
>>> bool(np.all(np.abs(g - 0.5) < 0.1))     # d/dx E max(x + 0.1 z, 0) at 0 = P(z > 0)
True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import lax, tree_util
from funcgrad import random as frandom
from funcgrad_nn.optim import tree as _tree

__all__ = ["Normal", "Gumbel", "make_perturbed_fun"]


class Normal:
    """The standard normal noise (optax's): ``sample(key, shape, dtype)`` and the
    unnormalized ``log_prob(z) = -z**2 / 2``."""

    def sample(self, key: Any, sample_shape: tuple[int, ...] = (), dtype: Any = float) -> Any:
        return frandom.normal(key, sample_shape, dtype)

    def log_prob(self, inputs: Any) -> Any:
        return -0.5 * inputs ** 2


class Gumbel:
    """The standard Gumbel noise (optax's): ``sample(key, shape, dtype)`` and
    ``log_prob(z) = -z - exp(-z)``."""

    def sample(self, key: Any, sample_shape: tuple[int, ...] = (), dtype: Any = float) -> Any:
        return frandom.gumbel(key, sample_shape, dtype)

    def log_prob(self, inputs: Any) -> Any:
        return -inputs - fnp.exp(-inputs)


def _magicbox(x: Any) -> Any:
    # 1 in value, with the derivative of x: d box = box * dx (Foerster et al., 2018)
    return fnp.exp(x - lax.stop_gradient(x))


def make_perturbed_fun(fun: Callable[[Any], Any], num_samples: int = 1000, sigma: float = 0.1,
                       noise: Any = None,
                       use_baseline: bool = True) -> Callable[[Any, Any], Any]:
    """``(key, x) -> `` a Monte-Carlo estimate of ``E_z fun(x + sigma z)`` over
    ``num_samples`` draws of ``noise`` (default :class:`Gumbel`; any object with ``sample``
    and ``log_prob``), differentiable in ``x`` to any order even where ``fun`` is not
    (optax's ``make_perturbed_fun``); ``use_baseline`` subtracts ``fun(x)`` in the
    derivative estimates for a lower variance (the value is unchanged).

    >>> import numpy as np
    >>> from funcgrad import random
    >>> fn = make_perturbed_fun(lambda x: x.sum(), 10, 0.1)
    >>> float(np.round(fn(random.key(1), np.zeros(2)) - fn(random.key(1), np.ones(2)), 12))
    -2.0
    """
    if num_samples < 1:
        raise ValueError(f"make_perturbed_fun: num_samples must be >= 1, got {num_samples}")
    noise = Gumbel() if noise is None else noise

    def mc_estimator(key: Any, x: Any) -> Any:
        def one(k: Any, x: Any, baseline: Any) -> Any:
            z = _tree.random_like(k, x, sampler=noise.sample)
            shifted = lax.stop_gradient(tree_util.tree_map(lambda a, b: a + sigma * b, x, z))
            # z again, now as a function of x (its value unchanged): the score's path
            z = tree_util.tree_map(lambda a, y: (y - a) / sigma, x, shifted)
            box = _magicbox(_tree.sum(tree_util.tree_map(noise.log_prob, z)))
            out = _tree.scale(box, fun(shifted))
            if use_baseline:
                out = _tree.add_scale(out, 1 - box, baseline)
            return out

        baseline = fun(lax.stop_gradient(x)) if use_baseline else None
        outs = funcgrad.vmap(one, in_axes=(0, None, None))(frandom.split(key, num_samples), x,
                                                            baseline)
        return tree_util.tree_map(lambda o: fnp.mean(o, axis=0), outs)

    return mc_estimator
