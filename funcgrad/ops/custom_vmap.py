"""The ``custom_vmap_call`` primitive behind :class:`funcgrad.custom_batching.custom_vmap`.

Params: ``fun`` (the flat function: a Python callable, or a closed jaxpr once staged),
``rule`` (the flat batching rule ``rule(axis_size, batched, args) -> (outs, out_batched)``)
and ``num_consts`` (leading operands that staging lifted out of ``fun``'s closure; the rule
never sees them). Evaluation, differentiation and staging use ``fun``; batching uses ``rule``
-- so a call staged by ``jit`` and batched afterwards (``vmap(jit(f))``) still uses it.
"""

from __future__ import annotations

from funcgrad import compile as _compile
from funcgrad.core import Primitive
from funcgrad.interpreters import batching
from funcgrad.interpreters.jvp import jvp_flat, jvp_rules
from funcgrad.interpreters.staging import partial_eval_rules, staging_rewrites
from funcgrad.ops._batching_util import moveaxis_to_front
from funcgrad.ops.custom_derivatives import (
    _call,
    _custom_call_abstract,
    _custom_call_impl,
    _partial_eval_custom_call,
    _stage_custom_call,
)

__all__ = ["custom_vmap_call_p"]

custom_vmap_call_p = Primitive("custom_vmap_call", multiple_results=True, carries_jaxprs=True)
custom_vmap_call_p.def_impl(_custom_call_impl)
custom_vmap_call_p.def_abstract_eval(_custom_call_abstract)


def _custom_vmap_call_jvp(primals, tangents, *, fun, rule, num_consts):
    # Derivatives of the function as written (the rule is about batching only).
    return jvp_flat(lambda *a: _call(fun, a), list(primals), list(tangents))


jvp_rules[custom_vmap_call_p] = _custom_vmap_call_jvp


def _custom_vmap_call_batch(axis_size, vals, dims, *, fun, rule, num_consts):
    k = num_consts
    if any(d is not None for d in dims[:k]):
        # A batched value the function closes over: the rule cannot see it; batch the
        # function's own operations.
        return batching.batch_flat(lambda *a: _call(fun, a), list(vals), list(dims),
                                   axis_size)
    args = [moveaxis_to_front(v, d) for v, d in zip(vals[k:], dims[k:])]
    outs, out_batched = rule(axis_size, [d is not None for d in dims[k:]], args)
    return list(outs), [0 if b else None for b in out_batched]


batching.batch_rules[custom_vmap_call_p] = _custom_vmap_call_batch
staging_rewrites[custom_vmap_call_p] = _stage_custom_call
partial_eval_rules[custom_vmap_call_p] = _partial_eval_custom_call
# Compiled code inlines the staged function (batching is done before compiling).
_compile.inline_primitives[custom_vmap_call_p] = "fun"
