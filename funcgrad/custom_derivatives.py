"""Custom derivative rules under JAX's module name (``jax.custom_derivatives``): the same
objects as ``funcgrad.custom_jvp``, ``funcgrad.custom_vjp`` and ``funcgrad.closure_convert``,
plus :class:`SymbolicZero`, the zero tangent a ``defjvp(..., symbolic_zeros=True)`` rule gets.

Example:
    >>> import funcgrad
    >>> from funcgrad.custom_derivatives import SymbolicZero, custom_jvp
    >>> @custom_jvp
    ... def mul(a, b):
    ...     return a * b
    >>> def mul_jvp(primals, tangents):
    ...     (a, b), (ta, tb) = primals, tangents
    ...     out = 0.0
    ...     if type(ta) is not SymbolicZero:   # skip the work for a zero tangent
    ...         out = out + ta * b
    ...     if type(tb) is not SymbolicZero:
    ...         out = out + a * tb
    ...     return a * b, out
    >>> _ = mul.defjvp(mul_jvp, symbolic_zeros=True)
    >>> float(funcgrad.grad(mul)(2.0, 3.0))
    3.0
"""

from __future__ import annotations

from funcgrad.api import closure_convert
from funcgrad.ops.custom_derivatives import SymbolicZero, custom_jvp, custom_vjp

__all__ = ["custom_jvp", "custom_vjp", "SymbolicZero", "closure_convert"]
