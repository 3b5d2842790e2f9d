"""The compiler's tables: what each primitive tells the compiler about itself.

The compiler never imports ``funcgrad.ops``: each primitive's block registers here, next to its
other rules (as JAX's primitives register their lowerings). A primitive that registers nothing
is still compiled correctly (the generated code calls its ``impl``) and never simplified.

* :data:`emitters` -- ``prim -> emit(ctx, eqn, arg_sources) -> Emission | None``: the Python
  source of one equation (None: fall back to the impl for these params).
* :data:`array_calls` -- ``prim -> name``: the primitive computes ``xp.<name>(*operands,
  **params)`` (the elementwise factories register it from the name they are given).
* :data:`reduction_calls` -- ``prim -> name``: a reduction computing ``xp.<name>(x, axis=...)``
  over its ``axes`` param (the reducer factory registers it).
* :data:`simplification_rules` -- ``prim -> rule(eqn, ins, facts)`` returning None (keep), a
  list of atoms (the outputs are these), an ``Eqn`` or a tuple of them (emit these instead);
  :func:`register_simplification` chains several rules of one primitive.
* :data:`inline_primitives` -- call primitive -> name of its ClosedJaxpr param (inlined first).
* Facts the passes use, as sets: :data:`commutative_primitives`,
  :data:`exact_scalar_primitives`, :data:`broadcasting_primitives`,
  :data:`zero_one_preserving_primitives`, :data:`fold_any_size_primitives`, and
  :data:`scalar_operators`.
* :data:`tracing_simplifiable_primitives` -- primitives whose simplification rules are
  identities of *functions* (``x * 1`` is ``x`` for every ``x``, so also after differentiation
  or batching): the interpreters apply them while tracing, when an operand is a scalar 0 or 1.
  (``stop_gradient`` -> ``x`` is an identity of values only, and is not one of them.)
* :data:`roles` -- the few structural primitives the compiler's own rewrites look for or
  build: ``"broadcast_in_dim"``, ``"reshape"``, ``"mul"``, ``"dot_general"``.

Example:
    >>> from funcgrad.ops.elementwise import sin_p
    >>> array_calls[sin_p]
    'sin'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from funcgrad.core import Primitive
from funcgrad.core import weak_arithmetic_primitives as _weak_arithmetic_primitives
from funcgrad.ir import Literal, Var

__all__ = [
    "Emission",
    "array_operand",
    "emitters",
    "array_calls",
    "reduction_calls",
    "simplification_rules",
    "register_simplification",
    "inline_primitives",
    "commutative_primitives",
    "exact_scalar_primitives",
    "broadcasting_primitives",
    "zero_one_preserving_primitives",
    "fold_any_size_primitives",
    "scalar_operators",
    "weak_arithmetic_primitives",
    "roles",
    "tracing_simplifiable_primitives",
    "same_type",
]


class Emission(NamedTuple):
    """What an emitter writes for one equation.

    ``expr`` is a Python expression (over the argument names it was given, ``xp`` and globals
    bound through the code generator's ``Context``); for a multiple-result primitive it
    evaluates to a sequence. ``fresh`` says the results of rank >= 1 are newly allocated (never
    views of an input). ``out`` says ``expr`` is one call that accepts ``out=``:
    ``"elementwise"`` (a ufunc over exactly these operands: the output may be one of them) or
    ``"fresh"`` (the output buffer must not be an operand) or ``"first"`` (the output may be
    the first operand's buffer, no other). ``comment`` replaces the primitive's name in the
    line's comment.
    """

    expr: str
    fresh: bool = False
    out: str | None = None
    comment: str | None = None


EmitFn = Callable[[Any, Any, list[str]], "Emission | None"]
#: primitive -> emitter(ctx, eqn, arg_sources) -> Emission, or None to fall back to the impl
emitters: dict[Primitive, EmitFn] = {}

#: primitive -> name of the array-module function it computes: ``xp.<name>(*operands,
#: **params)``
array_calls: dict[Primitive, str] = {}

#: reduction primitive -> name of the array-module reduction: ``xp.<name>(x, axis=axes)``
reduction_calls: dict[Primitive, str] = {}

SimplifyRule = Callable[[Any, list[Any], Any], Any]
#: primitive -> rule(eqn, ins, facts) -> None | list of atoms | Eqn | tuple of Eqns
simplification_rules: dict[Primitive, SimplifyRule] = {}

#: call primitive -> name of its ClosedJaxpr param; such equations are inlined first
inline_primitives: dict[Primitive, str] = {}

#: ``op(x, y)`` is ``op(y, x)`` exactly (results, broadcasting and promotion)
commutative_primitives: set[Primitive] = set()
#: correctly rounded scalar arithmetic: on scalars exactly what it gives elementwise
exact_scalar_primitives: set[Primitive] = set()
#: the emitted code works elementwise with NumPy broadcasting of the operands (so a broadcast
#: operand can be left to NumPy, and chunks of the operands give chunks of the result)
broadcasting_primitives: set[Primitive] = set()
#: single-operand primitives whose result is all zeros (ones) when the operand is
zero_one_preserving_primitives: set[Primitive] = set()
#: folded at compile time whatever their size when no bigger than their biggest const
fold_any_size_primitives: set[Primitive] = set()
#: float scalar arithmetic written as a Python operator (``"+"``; ``"-"`` for a unary one)
scalar_operators: dict[Primitive, str] = {}
#: Python's arithmetic operators' primitives, whose results on weak operands alone stay weak
#: (the table lives in :mod:`funcgrad.core`, whose eager evaluation consults it too)
weak_arithmetic_primitives: set[Primitive] = _weak_arithmetic_primitives
#: primitives whose simplifications also hold under later transformations (see above)
tracing_simplifiable_primitives: set[Primitive] = set()
#: role name -> the primitive playing it, for the compiler's own rewrites
roles: dict[str, Primitive] = {}


def register_simplification(prim: Primitive, rule: SimplifyRule) -> None:
    """Add ``rule`` for ``prim``; with several, the first that rewrites wins (in order of
    registration)."""
    prev = simplification_rules.get(prim)
    if prev is None:
        simplification_rules[prim] = rule
        return

    def chained(eqn: Any, ins: list[Any], facts: Any) -> Any:
        res = prev(eqn, ins, facts)
        return res if res is not None else rule(eqn, ins, facts)

    simplification_rules[prim] = chained


def array_operand(eqn: Any, k: int, arg: str) -> str:
    """Operand ``k`` of ``eqn`` (written ``arg``) as an array at run time, for the functions of
    an array module that, unlike ufuncs, take arrays only (CuPy's ``reshape``, ``clip``,
    ``round``...): a 0-d weakly typed value may be a Python scalar in compiled code (weak
    arithmetic keeps them so), and is converted to the equation's result dtype; a 0-d literal
    is a NumPy scalar there (``reshape 9``), which such a function would hand back as a host
    array, and a 0-d bool may be a Python bool: they are converted too.

    Example:
        >>> from funcgrad import make_jaxpr, numpy as fnp
        >>> eqn = make_jaxpr(lambda s: fnp.reshape(s, (1,)))(2.0).jaxpr.eqns[0]
        >>> array_operand(eqn, 0, "s")
        "xp.asarray(s, dtype='float64')"
    """
    atom = eqn.invars[k]
    a = atom.aval
    if a.shape:
        return arg
    if a.weak_type:
        return f"xp.asarray({arg}, dtype={eqn.outvars[0].aval.dtype.name!r})"
    # A 0-d bool may be a Python bool at run time too: a jit argument passed as one, or a
    # comparison of Python scalars (scalar operators).
    return f"xp.asarray({arg})" if isinstance(atom, Literal) or a.dtype.kind == "b" else arg


def same_type(x: Any, out: Var) -> bool:
    """Atom ``x`` can stand for the variable ``out``: same shape and dtype, neither weakly
    typed (a rewrite to ``x`` then loses no broadcast and no promotion)."""
    a, b = x.aval, out.aval
    return a.shape == b.shape and a.dtype == b.dtype and not a.weak_type and not b.weak_type
