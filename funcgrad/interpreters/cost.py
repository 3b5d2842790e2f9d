"""Static cost estimates of a jaxpr, as ``jax.stages.Compiled.cost_analysis()`` reports them:
``flops``, ``transcendentals`` and ``bytes accessed``, summed over the equations.

Each primitive's cost comes from a rule table the primitives fill, in their own blocks:

* :data:`cost_rules` -- ``prim -> rule(eqn, jaxpr_cost) -> Cost`` where the default below does
  not fit (``dot_general``: ``2 * M * N * K``; control flow: its body, times the trip count
  where it is static). ``jaxpr_cost`` prices a sub-jaxpr.
* :data:`transcendental_primitives` -- elementwise primitives XLA counts as transcendental
  (besides the ones computing a transcendental array-module function, known by name).

The default is derived from what the primitive already declares: an elementwise primitive
(``interpreters.jvp.elementwise_primitives``, or one the compiler knows computes elementwise
with broadcasting, ``compile.rules.broadcasting_primitives``: ``select_n``, conversions)
costs one flop per output element (and one
transcendental for ``exp``, ``log``, ``sin``...), a reduction (``compile.rules.reduction_calls``)
one flop per input element, a primitive carrying jaxprs the cost of its jaxprs (a call inlined
by the compiler, ``compile.rules.inline_primitives``: that one only), anything else (data
movement: reshape, transpose, gather, ...) no flops. Bytes accessed are, per equation, the
bytes of its operands and results (from their avals), as XLA's ``HloCostAnalysis`` counts them.

Example:
    >>> import numpy as np, funcgrad, funcgrad.numpy as fnp
    >>> closed = funcgrad.make_jaxpr(lambda a, b: fnp.exp(a @ b))(np.ones((2, 3)), np.ones((3, 4)))
    >>> jaxpr_cost(closed)
    Cost(flops=56.0, transcendentals=8.0, bytes_accessed=336.0)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

from funcgrad.compile.rules import (
    array_calls,
    broadcasting_primitives,
    inline_primitives,
    reduction_calls,
)
from funcgrad.core import Primitive
from funcgrad.interpreters.jvp import elementwise_primitives
from funcgrad.ir import ClosedJaxpr, Eqn, Jaxpr, sub_jaxprs

__all__ = ["Cost", "cost_rules", "transcendental_primitives", "jaxpr_cost", "eqn_cost",
           "default_cost", "per_input_element", "per_output_element", "aval_size",
           "aval_bytes", "cost_analysis"]


class Cost(NamedTuple):
    """Estimated work: floating-point (and integer) operations, how many of them are
    transcendental, and bytes read and written."""

    flops: float = 0.0
    transcendentals: float = 0.0
    bytes_accessed: float = 0.0

    def __add__(self, other: Any) -> Cost:  # type: ignore[override]
        return Cost(self.flops + other.flops, self.transcendentals + other.transcendentals,
                    self.bytes_accessed + other.bytes_accessed)

    def scaled(self, k: float) -> Cost:
        """The cost of doing this ``k`` times."""
        return Cost(self.flops * k, self.transcendentals * k, self.bytes_accessed * k)


JaxprCost = Callable[[Any], Cost]
CostRule = Callable[[Eqn, JaxprCost], Cost]

#: primitive -> rule(eqn, jaxpr_cost) -> Cost, where the default does not fit
cost_rules: dict[Primitive, CostRule] = {}
#: elementwise primitives counted as transcendental (besides TRANSCENDENTAL_CALLS)
transcendental_primitives: set[Primitive] = set()

#: array-module functions XLA's cost analysis counts as transcendental
TRANSCENDENTAL_CALLS = frozenset({
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "logaddexp", "logaddexp2",
    "sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "sinh", "cosh", "tanh",
    "arcsinh", "arccosh", "arctanh", "sqrt", "cbrt", "power", "float_power", "hypot",
})


def aval_size(aval: Any) -> int:
    """Elements of an abstract value (1 for a scalar; 0 for one without a shape)."""
    shape = getattr(aval, "shape", None)
    return math.prod(shape) if shape is not None else 0


def aval_bytes(aval: Any) -> int:
    """Bytes of an abstract value."""
    dtype = getattr(aval, "dtype", None)
    return aval_size(aval) * dtype.itemsize if dtype is not None else 0


def _io_bytes(eqn: Eqn) -> float:
    return float(sum(aval_bytes(v.aval) for v in eqn.invars)
                 + sum(aval_bytes(v.aval) for v in eqn.outvars))


def per_input_element(eqn: Eqn, jaxpr_cost: JaxprCost) -> Cost:
    """A cost rule: one flop per element of the first operand (arg-reductions, cumulative
    scans), as the reductions' default."""
    return Cost(float(aval_size(eqn.invars[0].aval)), 0.0, _io_bytes(eqn))


def per_output_element(eqn: Eqn, jaxpr_cost: JaxprCost) -> Cost:
    """A cost rule: one flop per element of the results (elementwise work that is not
    declared elementwise, e.g. two-output ``frexp``)."""
    return Cost(float(sum(aval_size(v.aval) for v in eqn.outvars)), 0.0, _io_bytes(eqn))


def default_cost(eqn: Eqn, jaxpr_cost: JaxprCost) -> Cost:
    """The cost the primitive's category gives (see the module docstring)."""
    prim = eqn.prim
    if prim.carries_jaxprs:
        name = inline_primitives.get(prim)
        subs = [eqn.params[name]] if name is not None else sub_jaxprs(eqn.params)
        total = Cost()
        for sub in subs:
            total = total + jaxpr_cost(sub)
        return total
    io = _io_bytes(eqn)
    if prim in elementwise_primitives or prim in broadcasting_primitives:
        n = float(sum(aval_size(v.aval) for v in eqn.outvars))
        trans = prim in transcendental_primitives or array_calls.get(prim) in TRANSCENDENTAL_CALLS
        return Cost(n, n if trans else 0.0, io)
    if prim in reduction_calls and eqn.invars:
        return Cost(float(aval_size(eqn.invars[0].aval)), 0.0, io)
    return Cost(0.0, 0.0, io)


def eqn_cost(eqn: Eqn) -> Cost:
    """The estimated cost of one equation: its primitive's rule, else the default."""
    rule = cost_rules.get(eqn.prim)
    return rule(eqn, jaxpr_cost) if rule is not None else default_cost(eqn, jaxpr_cost)


def jaxpr_cost(jaxpr: ClosedJaxpr | Jaxpr) -> Cost:
    """The estimated cost of running ``jaxpr`` once: the sum over its equations."""
    total = Cost()
    for eqn in jaxpr.eqns:
        total = total + eqn_cost(eqn)
    return total


def cost_analysis(jaxpr: ClosedJaxpr | Jaxpr) -> dict[str, float]:
    """JAX's ``cost_analysis()`` dictionary for ``jaxpr``: ``'flops'``,
    ``'transcendentals'``, ``'bytes accessed'``.

    Example:
        >>> import numpy as np, funcgrad, funcgrad.numpy as fnp
        >>> cost_analysis(funcgrad.make_jaxpr(fnp.sum)(np.ones(10)))["flops"]
        10.0
    """
    c = jaxpr_cost(jaxpr)
    return {"flops": c.flops, "transcendentals": c.transcendentals,
            "bytes accessed": c.bytes_accessed}
