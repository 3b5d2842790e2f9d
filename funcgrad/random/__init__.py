"""funcgrad.random: explicit-key, splittable pseudo-random numbers, as ``jax.random``.

A raw key (``PRNGKey(seed)``) is a plain ``uint32`` array of shape ``(2,)``; a typed key
(``key(seed)``) is a key array of shape ``()`` and dtype ``key<fry>`` over such data. Every sampler is a pure function of its
key (the same key always gives the same numbers). Make new keys with :func:`split` or
:func:`fold_in`, never reuse one for two purposes. The bits come from the Threefry-2x32 hash
(20 rounds) with the layout of JAX's default implementation, so keys, ``split``, ``fold_in``,
``bits``, ``uniform``, ``randint`` and permutations are bit-identical to ``jax.random`` with
``jax_enable_x64`` on (see ``docs/random.md``).

Example:
    >>> from funcgrad import random
    >>> key = random.PRNGKey(0)
    >>> k1, k2 = random.split(key)
    >>> random.normal(k1, (2, 3)).shape
    (2, 3)
"""

from funcgrad.random._core import (
    PRNGKey,
    bits,
    fold_in,
    key,
    key_data,
    key_impl,
    split,
    threefry_2x32,
    wrap_key_data,
)
from funcgrad.random._derived_samplers import (
    ball,
    binomial,
    clone,
    double_sided_maxwell,
    f,
    generalized_normal,
    geometric,
    maxwell,
    multinomial,
    pareto,
    rayleigh,
    t,
    triangular,
    wald,
    weibull_min,
)
from funcgrad.random._gamma import beta, chisquare, dirichlet, gamma, loggamma, poisson
from funcgrad.random._keys import KeyDType, PRNGKeyArray, key_dtype
from funcgrad.random._reuse import KeyReuseError, check_key_reuse, debug_key_reuse
from funcgrad.random._samplers import (
    bernoulli,
    categorical,
    cauchy,
    choice,
    exponential,
    gumbel,
    laplace,
    logistic,
    lognormal,
    multivariate_normal,
    normal,
    orthogonal,
    permutation,
    rademacher,
    randint,
    truncated_normal,
    uniform,
)

__all__ = [
    "PRNGKey", "key", "key_data", "wrap_key_data", "key_impl", "key_dtype", "PRNGKeyArray", "KeyDType", "split", "fold_in", "bits",
    "threefry_2x32", "uniform", "normal", "truncated_normal", "lognormal", "bernoulli",
    "rademacher", "randint", "categorical", "gumbel", "exponential", "laplace", "logistic",
    "cauchy", "permutation", "choice", "multivariate_normal", "orthogonal", "gamma",
    "loggamma", "beta", "dirichlet", "chisquare", "poisson", "t", "f", "pareto", "rayleigh",
    "maxwell", "double_sided_maxwell", "weibull_min", "geometric", "triangular", "wald",
    "generalized_normal", "ball", "clone", "binomial", "multinomial", "check_key_reuse", "debug_key_reuse", "KeyReuseError",
]
