"""Constraints: the regions where distribution parameters and samples are valid, as
``torch.distributions.constraints``.

A constraint's :meth:`~Constraint.check` gives a boolean array of shape
``value.shape[:-event_dim]`` (one entry per event). Distributions use them to validate their
parameters (``arg_constraints``) and ``log_prob``'s values (``support``); the transforms
registry ``biject_to``/``transform_to`` is not provided.

>>> import numpy as np
>>> from funcgrad_nn.distributions import constraints
>>> constraints.positive.check(np.array([1.0, -1.0]))
array([ True, False])
>>> bool(constraints.simplex.check(np.array([0.25, 0.75])))
True
>>> constraints.interval(0.0, 1.0)
Interval(lower_bound=0.0, upper_bound=1.0)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy

import funcgrad.numpy as fnp

__all__ = [
    "Constraint", "boolean", "cat", "corr_cholesky", "dependent", "dependent_property", "greater_than",
    "greater_than_eq", "half_open_interval", "independent", "integer_interval", "interval",
    "is_dependent", "less_than", "lower_cholesky", "lower_triangular", "multinomial",
    "nonnegative", "nonnegative_integer", "one_hot", "positive", "positive_definite",
    "positive_integer", "positive_semidefinite", "real", "real_vector", "simplex", "square", "stack",
    "symmetric", "unit_interval",
]


class Constraint:
    """Base of the constraints: ``check(value)`` says, per event, whether ``value`` is inside.

    ``is_discrete``: whether the region is discrete; ``event_dim``: how many rightmost
    dimensions form one event (``check`` reduces over them).

    >>> import numpy as np
    >>> real.check(np.array([0.0, np.nan]))
    array([ True, False])
    """

    is_discrete = False
    event_dim = 0

    def check(self, value: Any) -> Any:
        """A boolean array: which events of ``value`` satisfy the constraint."""
        raise NotImplementedError(f"{type(self).__name__} does not define check()")

    def __repr__(self) -> str:
        return type(self).__name__[1:] + "()"


class _Dependent(Constraint):
    """The placeholder for a region that depends on other parameters (``Uniform``'s
    ``low``/``high``): it cannot be checked on its own, and validation skips it."""

    def __init__(self, *, is_discrete: Any = NotImplemented,
                 event_dim: Any = NotImplemented) -> None:
        self._is_discrete = is_discrete
        self._event_dim = event_dim

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return self._is_discrete

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return self._event_dim

    def __call__(self, *, is_discrete: Any = NotImplemented,
                 event_dim: Any = NotImplemented) -> _Dependent:
        if is_discrete is NotImplemented:
            is_discrete = self._is_discrete
        if event_dim is NotImplemented:
            event_dim = self._event_dim
        return _Dependent(is_discrete=is_discrete, event_dim=event_dim)

    def check(self, x: Any) -> Any:
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint: Any) -> bool:
    """Whether ``constraint`` is a dependent placeholder (validation skips those).

    >>> is_dependent(dependent), is_dependent(real)
    (True, False)
    """
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """``@dependent_property``: a property on instances (the real constraint, computed from
    the parameters) and a dependent placeholder on the class.

    >>> from funcgrad_nn.distributions import Uniform
    >>> is_dependent(Uniform.support), Uniform(0.0, 2.0).support
    (True, Interval(lower_bound=0.0, upper_bound=2.0))
    """

    def __init__(self, fn: Callable[..., Any] | None = None, *,
                 is_discrete: Any = NotImplemented, event_dim: Any = NotImplemented) -> None:
        property.__init__(self, fn)
        self._is_discrete = is_discrete
        self._event_dim = event_dim

    def __call__(self, fn: Callable[..., Any]) -> _DependentProperty:  # type: ignore[override]
        return _DependentProperty(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


class _IndependentConstraint(Constraint):
    """``independent(c, n)``: ``c`` on every entry of the ``n`` rightmost dimensions, which
    become part of the event.

    >>> import numpy as np
    >>> independent(positive, 1).check(np.array([[1.0, 2.0], [1.0, -1.0]]))
    array([ True, False])
    """

    def __init__(self, base_constraint: Constraint, reinterpreted_batch_ndims: int) -> None:
        if not isinstance(base_constraint, Constraint):
            raise TypeError(f"independent: base_constraint must be a Constraint, got "
                            f"{type(base_constraint).__name__}")
        if not isinstance(reinterpreted_batch_ndims, int) or reinterpreted_batch_ndims < 0:
            raise ValueError(f"independent: reinterpreted_batch_ndims must be an int >= 0, got "
                             f"{reinterpreted_batch_ndims!r}")
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return self.base_constraint.is_discrete

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value: Any) -> Any:
        result = self.base_constraint.check(value)
        n = self.reinterpreted_batch_ndims
        if result.ndim < n:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got {value.ndim}")
        if n == 0:
            return result
        return fnp.all(fnp.reshape(result, tuple(result.shape[:result.ndim - n]) + (-1,)),
                       axis=-1)

    def __repr__(self) -> str:
        return (f"{type(self).__name__[1:]}({self.base_constraint!r}, "
                f"{self.reinterpreted_batch_ndims})")


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value: Any) -> Any:
        return (value == 0) | (value == 1)


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def check(self, value: Any) -> Any:
        is_boolean = (value == 0) | (value == 1)
        is_normalized = fnp.sum(value, axis=-1) == 1
        return fnp.all(is_boolean, axis=-1) & is_normalized


class _IntegerInterval(Constraint):
    """``integer_interval(lower, upper)``: integers in ``[lower, upper]``.

    >>> import numpy as np
    >>> integer_interval(0, 2).check(np.array([0.0, 1.5, 2.0, 3.0]))
    array([ True, False,  True, False])
    """

    is_discrete = True

    def __init__(self, lower_bound: Any, upper_bound: Any) -> None:
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value: Any) -> Any:
        return ((value % 1 == 0) & (self.lower_bound <= value)
                & (value <= self.upper_bound))

    def __repr__(self) -> str:
        return (f"{type(self).__name__[1:]}(lower_bound={self.lower_bound}, "
                f"upper_bound={self.upper_bound})")


class _IntegerGreaterThan(Constraint):
    """Integers at least ``lower_bound`` (``nonnegative_integer``, ``positive_integer``).

    >>> import numpy as np
    >>> nonnegative_integer.check(np.array([-1.0, 0.0, 2.5]))
    array([False,  True, False])
    """

    is_discrete = True

    def __init__(self, lower_bound: Any) -> None:
        self.lower_bound = lower_bound

    def check(self, value: Any) -> Any:
        return (value % 1 == 0) & (value >= self.lower_bound)

    def __repr__(self) -> str:
        return f"{type(self).__name__[1:]}(lower_bound={self.lower_bound})"


class _Real(Constraint):
    def check(self, value: Any) -> Any:
        return value == value  # False only for NaN


class _GreaterThan(Constraint):
    """``greater_than(lower)``: values strictly above ``lower`` (``positive`` is
    ``greater_than(0.0)``).

    >>> import numpy as np
    >>> greater_than(1.0).check(np.array([1.0, 2.0]))
    array([False,  True])
    """

    def __init__(self, lower_bound: Any) -> None:
        self.lower_bound = lower_bound

    def check(self, value: Any) -> Any:
        return self.lower_bound < value

    def __repr__(self) -> str:
        return f"{type(self).__name__[1:]}(lower_bound={self.lower_bound})"


class _GreaterThanEq(_GreaterThan):
    """``greater_than_eq(lower)``: values at least ``lower`` (``nonnegative``).

    >>> import numpy as np
    >>> greater_than_eq(1.0).check(np.array([1.0, 0.5]))
    array([ True, False])
    """

    def check(self, value: Any) -> Any:
        return self.lower_bound <= value


class _LessThan(Constraint):
    """``less_than(upper)``: values strictly below ``upper``.

    >>> import numpy as np
    >>> less_than(1.0).check(np.array([0.0, 1.0]))
    array([ True, False])
    """

    def __init__(self, upper_bound: Any) -> None:
        self.upper_bound = upper_bound

    def check(self, value: Any) -> Any:
        return value < self.upper_bound

    def __repr__(self) -> str:
        return f"{type(self).__name__[1:]}(upper_bound={self.upper_bound})"


class _Interval(Constraint):
    """``interval(lower, upper)``: the closed interval (``unit_interval`` is ``[0, 1]``).

    >>> import numpy as np
    >>> interval(0.0, 1.0).check(np.array([0.0, 1.0, 1.5]))
    array([ True,  True, False])
    """

    def __init__(self, lower_bound: Any, upper_bound: Any) -> None:
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value: Any) -> Any:
        return (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self) -> str:
        return (f"{type(self).__name__[1:]}(lower_bound={self.lower_bound}, "
                f"upper_bound={self.upper_bound})")


class _HalfOpenInterval(_Interval):
    """``half_open_interval(lower, upper)``: ``[lower, upper)``.

    >>> import numpy as np
    >>> half_open_interval(0.0, 1.0).check(np.array([0.0, 1.0]))
    array([ True, False])
    """

    def check(self, value: Any) -> Any:
        return (self.lower_bound <= value) & (value < self.upper_bound)


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value: Any) -> Any:
        return fnp.all(value >= 0, axis=-1) & (fnp.abs(fnp.sum(value, axis=-1) - 1) < 1e-6)


class _Multinomial(Constraint):
    """``multinomial(n)``: nonnegative count vectors summing to at most ``n``.

    >>> import numpy as np
    >>> multinomial(3).check(np.array([[1.0, 2.0], [2.0, 2.0]]))
    array([ True, False])
    """

    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound: Any) -> None:
        self.upper_bound = upper_bound

    def check(self, x: Any) -> Any:
        return fnp.all(x >= 0, axis=-1) & (fnp.sum(x, axis=-1) <= self.upper_bound)


def _flat_all(x: Any) -> Any:
    return fnp.all(fnp.reshape(x, tuple(x.shape[:-2]) + (-1,)), axis=-1)


class _LowerTriangular(Constraint):
    event_dim = 2

    def check(self, value: Any) -> Any:
        return _flat_all(fnp.tril(value) == value)


class _LowerCholesky(Constraint):
    event_dim = 2

    def check(self, value: Any) -> Any:
        positive_diagonal = fnp.all(fnp.diagonal(value, axis1=-2, axis2=-1) > 0, axis=-1)
        return _flat_all(fnp.tril(value) == value) & positive_diagonal


class _CorrCholesky(Constraint):
    """Lower Cholesky factors of correlation matrices: unit-norm rows."""

    event_dim = 2

    def check(self, value: Any) -> Any:
        tol = float(numpy.finfo(numpy.dtype(value.dtype)).eps) * value.shape[-1] * 10
        row_norm = fnp.sqrt(fnp.sum(value ** 2, axis=-1))
        unit = fnp.all(fnp.abs(row_norm - 1.0) <= tol, axis=-1)
        return _LowerCholesky().check(value) & unit


class _Square(Constraint):
    event_dim = 2

    def check(self, value: Any) -> Any:
        return fnp.full(tuple(value.shape[:-2]), value.shape[-2] == value.shape[-1], dtype=bool)


class _Symmetric(_Square):
    def check(self, value: Any) -> Any:
        square = super().check(value)
        if value.shape[-2] != value.shape[-1]:
            return square
        return _flat_all(fnp.isclose(value, fnp.swapaxes(value, -1, -2), atol=1e-6))


class _PositiveSemidefinite(_Symmetric):
    def check(self, value: Any) -> Any:
        sym = super().check(value)
        if value.shape[-2] != value.shape[-1]:
            return sym
        return sym & fnp.all(fnp.linalg.eigvalsh(value) >= 0, axis=-1)


class _PositiveDefinite(_Symmetric):
    def check(self, value: Any) -> Any:
        sym = super().check(value)
        if value.shape[-2] != value.shape[-1]:
            return sym
        # torch asks whether a Cholesky factorisation succeeds; the eigenvalues say the same
        # for a symmetric matrix without raising on the ones that fail
        return sym & fnp.all(fnp.linalg.eigvalsh(value) > 0, axis=-1)


def _check_dim(dim: int, value: Any) -> None:
    if not -value.ndim <= dim < value.ndim:
        raise ValueError(f"dim {dim} out of range for value with {value.ndim} dimensions")


class _Cat(Constraint):
    """``cat(cseq, dim, lengths)``: consecutive slices along ``dim`` (of the given lengths)
    each satisfying its constraint.

    >>> import numpy as np
    >>> cat([positive, real], 0, [2, 1]).check(np.array([1.0, -1.0, -5.0]))
    array([ True, False,  True])
    """

    def __init__(self, cseq: Any, dim: int = 0, lengths: Any = None) -> None:
        if not all(isinstance(c, Constraint) for c in cseq):
            raise TypeError("All elements of cseq must be Constraint instances")
        self.cseq = list(cseq)
        self.lengths = list(lengths) if lengths is not None else [1] * len(self.cseq)
        if len(self.lengths) != len(self.cseq):
            raise ValueError(f"lengths ({len(self.lengths)}) must match cseq ({len(self.cseq)})")
        self.dim = dim

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        return max(c.event_dim for c in self.cseq)

    def check(self, value: Any) -> Any:
        _check_dim(self.dim, value)
        checks, start = [], 0
        for c, n in zip(self.cseq, self.lengths):
            v = fnp.take(value, fnp.arange(start, start + n), axis=self.dim)
            checks.append(c.check(v))
            start += n
        return fnp.concatenate(checks, axis=self.dim)


class _Stack(Constraint):
    """``stack(cseq, dim)``: the ``i``-th slice along ``dim`` satisfies ``cseq[i]``.

    >>> import numpy as np
    >>> stack([positive, real], 0).check(np.array([-1.0, -1.0]))
    array([False,  True])
    """

    def __init__(self, cseq: Any, dim: int = 0) -> None:
        if not all(isinstance(c, Constraint) for c in cseq):
            raise TypeError("All elements of cseq must be Constraint instances")
        self.cseq = list(cseq)
        self.dim = dim

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        dim = max(c.event_dim for c in self.cseq)
        if self.dim + dim < 0:
            dim += 1
        return dim

    def check(self, value: Any) -> Any:
        _check_dim(self.dim, value)
        vs = [fnp.take(value, i, axis=self.dim) for i in range(value.shape[self.dim])]
        return fnp.stack([c.check(v) for v, c in zip(vs, self.cseq)], axis=self.dim)


dependent = _Dependent()
dependent_property = _DependentProperty
independent = _IndependentConstraint
boolean = _Boolean()
one_hot = _OneHot()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
integer_interval = _IntegerInterval
real = _Real()
real_vector = independent(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
multinomial = _Multinomial
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
simplex = _Simplex()
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
corr_cholesky = _CorrCholesky()
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
positive_definite = _PositiveDefinite()
cat = _Cat
stack = _Stack
