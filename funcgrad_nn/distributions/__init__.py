"""Probability distributions with ``torch.distributions``' interface, on funcgrad arrays.

Every distribution has ``batch_shape``/``event_shape``, ``sample``/``rsample``,
``log_prob``, ``entropy``, ``mean``/``mode``/``variance``/``stddev``, ``expand``,
``support`` and ``arg_constraints``, and validates its arguments as torch does. Randomness
is explicit: ``sample(shape, key=k)`` with an int seed or a ``funcgrad.random`` key; without
``key=`` a key is drawn from the global generator (``nn.manual_seed``), which is refused
under ``jit``. ``rsample`` is reparameterised, so ``funcgrad.grad``, ``jit`` and ``vmap``
differentiate through samples (VAEs, policy gradients, normalising flows). See
``docs/distributions.md``.

>>> import numpy as np
>>> import funcgrad
>>> from funcgrad_nn.distributions import Normal, kl_divergence
>>> def loss(mu):
...     q = Normal(mu, np.ones(2))
...     z = q.rsample((100,), key=0)
...     return (z ** 2).mean() + kl_divergence(q, Normal(np.zeros(2), np.ones(2))).sum()
>>> funcgrad.grad(loss)(np.array([0.5, -0.5])).shape
(2,)
"""

from funcgrad_nn.distributions import constraints, transforms
from funcgrad_nn.distributions.constraint_registry import biject_to, transform_to
from funcgrad_nn.distributions.continuous import (
    Beta,
    Cauchy,
    Chi2,
    Dirichlet,
    Exponential,
    Gamma,
    Gumbel,
    Laplace,
    Normal,
    StudentT,
    Uniform,
)
from funcgrad_nn.distributions.discrete import (
    Bernoulli,
    Binomial,
    Categorical,
    Geometric,
    OneHotCategorical,
    OneHotCategoricalStraightThrough,
    Poisson,
)
from funcgrad_nn.distributions.distribution import Distribution
from funcgrad_nn.distributions.exp_family import ExponentialFamily
from funcgrad_nn.distributions.kl import kl_divergence, register_kl
from funcgrad_nn.distributions.more import (
    ContinuousBernoulli,
    FisherSnedecor,
    GeneralizedPareto,
    HalfCauchy,
    HalfNormal,
    InverseGamma,
    Kumaraswamy,
    LKJCholesky,
    LogisticNormal,
    MixtureSameFamily,
    Multinomial,
    NegativeBinomial,
    Pareto,
    VonMises,
    Weibull,
)
from funcgrad_nn.distributions.multivariate import (
    LowRankMultivariateNormal,
    MultivariateNormal,
    Wishart,
)
from funcgrad_nn.distributions.transformed import (
    ExpRelaxedCategorical,
    Independent,
    LogitRelaxedBernoulli,
    LogNormal,
    RelaxedBernoulli,
    RelaxedOneHotCategorical,
    TransformedDistribution,
)
from funcgrad_nn.distributions.transforms import (
    AbsTransform,
    AffineTransform,
    CatTransform,
    ComposeTransform,
    CorrCholeskyTransform,
    CumulativeDistributionTransform,
    ExpTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    PowerTransform,
    ReshapeTransform,
    SigmoidTransform,
    SoftmaxTransform,
    SoftplusTransform,
    StackTransform,
    StickBreakingTransform,
    TanhTransform,
    Transform,
    identity_transform,
)

__all__ = [
    "AbsTransform", "AffineTransform", "Bernoulli", "Beta", "Binomial", "CatTransform", "Categorical", "Cauchy",
    "Chi2", "ComposeTransform", "ContinuousBernoulli", "CorrCholeskyTransform", "CumulativeDistributionTransform", "Dirichlet", "Distribution", "ExpRelaxedCategorical",
    "ExpTransform", "Exponential", "ExponentialFamily", "FisherSnedecor", "Gamma", "GeneralizedPareto", "Geometric", "Gumbel", "HalfCauchy", "HalfNormal",
    "Independent", "InverseGamma", "Kumaraswamy", "LKJCholesky", "LogisticNormal", "MixtureSameFamily", "Multinomial", "NegativeBinomial",
    "Pareto", "VonMises", "Weibull",
    "IndependentTransform", "Laplace", "LogNormal", "LogitRelaxedBernoulli",
    "LowRankMultivariateNormal", "LowerCholeskyTransform", "MultivariateNormal", "Normal", "OneHotCategorical", "OneHotCategoricalStraightThrough", "Poisson",
    "PositiveDefiniteTransform", "PowerTransform", "RelaxedBernoulli", "ReshapeTransform", "RelaxedOneHotCategorical", "SigmoidTransform",
    "SoftmaxTransform", "SoftplusTransform", "StackTransform", "StickBreakingTransform", "StudentT", "TanhTransform", "Transform",
    "TransformedDistribution", "Uniform", "Wishart", "biject_to", "constraints", "identity_transform", "kl_divergence",
    "register_kl", "transform_to", "transforms",
]
