"""``biject_to`` and ``transform_to``: from a constraint to a transform that maps
unconstrained reals onto it, as ``torch.distributions.constraint_registry`` (optimise an
unconstrained parameter, use ``transform_to(constraint)(raw)``).

``biject_to(c)`` is a bijection (its log-det-Jacobian is right for densities, e.g. the
stick-breaking map onto the simplex); ``transform_to(c)`` only needs to cover the set
(``softmax`` onto the simplex). Both are tables keyed by the constraint's type, extended with
``register``.

>>> import numpy as np
>>> from funcgrad_nn.distributions import constraints
>>> float(transform_to(constraints.positive)(np.array(0.0)))
1.0
>>> biject_to(constraints.simplex)(np.zeros(2)).round(4).tolist()
[0.3333, 0.3333, 0.3333]
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

from funcgrad_nn.distributions import constraints, transforms

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]


class ConstraintRegistry:
    """A table from constraint types to factories of transforms.

    >>> reg = ConstraintRegistry()
    >>> _ = reg.register(constraints.positive, lambda c: transforms.SoftplusTransform())
    >>> reg(constraints.positive)
    SoftplusTransform()
    """

    def __init__(self) -> None:
        self._registry: dict[type, Callable[[Any], transforms.Transform]] = {}

    def register(self, constraint: Any, factory: Any = None) -> Any:
        """Register ``factory(constraint) -> Transform`` for the constraint's type (usable
        as a decorator)."""
        if factory is None:
            return lambda factory: self.register(constraint, factory)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not isinstance(constraint, type) or not issubclass(constraint,
                                                              constraints.Constraint):
            raise TypeError("Expected constraint to be either a Constraint subclass or "
                            f"instance, but got {constraint}")
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint: constraints.Constraint) -> transforms.Transform:
        try:
            factory = self._registry[type(constraint)]
        except KeyError:
            raise NotImplementedError(
                f"Cannot transform {type(constraint).__name__} constraints") from None
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


@biject_to.register(constraints.real)
@transform_to.register(constraints.real)
def _transform_to_real(constraint: Any) -> transforms.Transform:
    return transforms.identity_transform


@biject_to.register(constraints.independent)
def _biject_to_independent(constraint: Any) -> transforms.Transform:
    return transforms.IndependentTransform(biject_to(constraint.base_constraint),
                                           constraint.reinterpreted_batch_ndims)


@transform_to.register(constraints.independent)
def _transform_to_independent(constraint: Any) -> transforms.Transform:
    return transforms.IndependentTransform(transform_to(constraint.base_constraint),
                                           constraint.reinterpreted_batch_ndims)


@biject_to.register(constraints.positive)
@biject_to.register(constraints.nonnegative)
@transform_to.register(constraints.positive)
@transform_to.register(constraints.nonnegative)
def _transform_to_positive(constraint: Any) -> transforms.Transform:
    # positive and nonnegative are both greater-than constraints (the second a subclass):
    # a bound other than zero needs the shift
    if constraint.lower_bound is not None and not (
            isinstance(constraint.lower_bound, numbers.Number) and constraint.lower_bound == 0):
        return _transform_to_greater_than(constraint)
    return transforms.ExpTransform()


def _transform_to_greater_than(constraint: Any) -> transforms.Transform:
    return transforms.ComposeTransform([transforms.ExpTransform(),
                                        transforms.AffineTransform(constraint.lower_bound, 1)])


@biject_to.register(constraints.less_than)
@transform_to.register(constraints.less_than)
def _transform_to_less_than(constraint: Any) -> transforms.Transform:
    return transforms.ComposeTransform([transforms.ExpTransform(),
                                        transforms.AffineTransform(constraint.upper_bound, -1)])


@biject_to.register(constraints.interval)
@biject_to.register(constraints.half_open_interval)
@transform_to.register(constraints.interval)
@transform_to.register(constraints.half_open_interval)
def _transform_to_interval(constraint: Any) -> transforms.Transform:
    lower_is_0 = isinstance(constraint.lower_bound, numbers.Number) and \
        constraint.lower_bound == 0
    upper_is_1 = isinstance(constraint.upper_bound, numbers.Number) and \
        constraint.upper_bound == 1
    if lower_is_0 and upper_is_1:
        return transforms.SigmoidTransform()
    loc = constraint.lower_bound
    scale = constraint.upper_bound - constraint.lower_bound
    return transforms.ComposeTransform([transforms.SigmoidTransform(),
                                        transforms.AffineTransform(loc, scale)])


@biject_to.register(constraints.simplex)
def _biject_to_simplex(constraint: Any) -> transforms.Transform:
    return transforms.StickBreakingTransform()


@transform_to.register(constraints.simplex)
def _transform_to_simplex(constraint: Any) -> transforms.Transform:
    return transforms.SoftmaxTransform()


@transform_to.register(constraints.lower_cholesky)
def _transform_to_lower_cholesky(constraint: Any) -> transforms.Transform:
    return transforms.LowerCholeskyTransform()


@transform_to.register(constraints.positive_definite)
@transform_to.register(constraints.positive_semidefinite)
def _transform_to_positive_definite(constraint: Any) -> transforms.Transform:
    return transforms.PositiveDefiniteTransform()


@biject_to.register(constraints.corr_cholesky)
@transform_to.register(constraints.corr_cholesky)
def _transform_to_corr_cholesky(constraint: Any) -> transforms.Transform:
    return transforms.CorrCholeskyTransform()


@biject_to.register(constraints.cat)
def _biject_to_cat(constraint: Any) -> transforms.Transform:
    return transforms.CatTransform([biject_to(c) for c in constraint.cseq], constraint.dim,
                                   constraint.lengths)


@transform_to.register(constraints.cat)
def _transform_to_cat(constraint: Any) -> transforms.Transform:
    return transforms.CatTransform([transform_to(c) for c in constraint.cseq], constraint.dim,
                                   constraint.lengths)


@biject_to.register(constraints.stack)
def _biject_to_stack(constraint: Any) -> transforms.Transform:
    return transforms.StackTransform([biject_to(c) for c in constraint.cseq], constraint.dim)


@transform_to.register(constraints.stack)
def _transform_to_stack(constraint: Any) -> transforms.Transform:
    return transforms.StackTransform([transform_to(c) for c in constraint.cseq],
                                     constraint.dim)
