"""The exceptions funcgrad raises, each naming what went wrong and how to fix it."""

from __future__ import annotations

__all__ = [
    "FuncgradError",
    "ConcretizationError",
    "UnexpectedTracerError",
    "MissingRuleError",
    "ShapeError",
    "DTypeError",
    "DeviceMismatchError",
    "TracerMutationError",
]


class FuncgradError(Exception):
    """Base class of every error funcgrad raises on purpose."""


class ConcretizationError(FuncgradError, TypeError):
    """A traced value was used where Python needs a concrete one (``if``, ``float``, shapes).

    Example:
        >>> import funcgrad
        >>> def f(x):
        ...     return x if x > 0 else -x
        >>> funcgrad.make_jaxpr(f)(1.0)  # doctest: +SKIP
        Traceback (most recent call last):
        ConcretizationError: ...
    """


class UnexpectedTracerError(FuncgradError):
    """A tracer escaped the transformation that created it (stored in a global, say)."""


class MissingRuleError(FuncgradError, NotImplementedError):
    """A primitive lacks the rule a transformation needs (jvp, transpose, batching)."""


class ShapeError(FuncgradError, ValueError):
    """Operand shapes are incompatible for a primitive."""


class DTypeError(FuncgradError, TypeError):
    """Operand dtypes are unsupported or incompatible for a primitive."""


class DeviceMismatchError(FuncgradError, ValueError):
    """Arrays on different devices (or backends) met in one operation."""


class TracerMutationError(FuncgradError, TypeError):
    """In-place mutation of a traced array, which functional code cannot record."""
