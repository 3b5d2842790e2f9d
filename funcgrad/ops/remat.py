"""Rematerialization: ``checkpoint`` (alias ``remat``), its policies, and ``checkpoint_name``.

``checkpoint(f)`` traces ``f`` to a closed jaxpr and binds the call primitive ``remat_p``
``(*args, jaxpr=ClosedJaxpr, policy=callable, prevent_cse=bool)``. Evaluated, it just runs the
jaxpr. Its point is reverse mode: when linearize meets it (the partial-eval rule), the known
part computes only the primal outputs and the intermediates the *policy* allows to save, and
the part staged into the linear jaxpr is again a ``remat`` call that first recomputes the
primal intermediates it needs from those residuals and then does the tangent work. The
residuals kept between the forward and the backward pass are therefore the inputs plus the
saved intermediates, not every intermediate the derivative reads.

A policy is ``policy(prim, *in_avals, **params) -> bool`` (JAX's convention; a function of
exactly two parameters is called ``policy(prim, params_dict)``): whether the outputs of one
primitive application of the forward pass may be saved. The ready-made ones are in
:data:`checkpoint_policies`.

The JVP, transpose, batch and DCE rules are those every call primitive shares
(:mod:`funcgrad.ops._call`, over :mod:`funcgrad.interpreters.jaxpr_rules`): the JVP rule binds
``remat_p`` on the JVP jaxpr (so a linearization of the linearization is rematerialized too), the
transpose rule binds it on the transposed jaxpr (the recomputation then runs inside the
backward pass), the batch rule on the batched jaxpr, and the DCE rule prunes the inner jaxpr. ``jit`` never
inlines a ``remat`` call, so its compiler cannot merge the recomputation back into the forward
pass (``prevent_cse`` is kept for API compatibility).

Example:
    >>> import numpy as np, funcgrad, funcgrad.numpy as fnp
    >>> f = checkpoint(lambda x: fnp.sin(fnp.sin(x)))
    >>> round(float(funcgrad.grad(f)(0.5)), 6)
    0.778644
"""

from __future__ import annotations

import functools
import inspect
import types
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from funcgrad._cache import WeakLRUCache, weak_lru_cache
from funcgrad.avals import ShapedArray, get_aval
from funcgrad.core import (
    Primitive,
    Tracer,
    bind,
    bind1,
    current_trace,
    eval_trace,
    set_current_trace,
)
from funcgrad.interpreters import batching, jaxpr_rules
from funcgrad.interpreters.jvp import (
    defjvp,
    elementwise_primitives,
)
from funcgrad.interpreters.staging import (
    PartialEvalTrace,
    StagingTracer,
    partial_eval_rules,
    trace_to_jaxpr,
)
from funcgrad.interpreters.transpose import deftranspose
from funcgrad.ir import ClosedJaxpr, Eqn, Jaxpr, Var, dce_jaxpr
from funcgrad.jaxpr_codec import Codec, Decoder, Encoder, ExportError, register_param_codec
from funcgrad.ops import linalg as _linalg
from funcgrad.ops._call import (
    WHOLE,
    arrays_out,
    check_call_avals,
    def_call_rules,
    forwarding_plan,
)
from funcgrad.ops._util import check_static
from funcgrad.ops.control_flow._common import compiled, runner
from funcgrad.tree_util import transforms as tree_util  # keys are nodes here

__all__ = [
    "checkpoint",
    "remat",
    "checkpoint_name",
    "checkpoint_policies",
    "remat_p",
    "name_p",
    "everything_saveable",
    "nothing_saveable",
    "dots_saveable",
    "checkpoint_dots",
    "dots_with_no_batch_dims_saveable",
    "checkpoint_dots_with_no_batch_dims",
    "save_only_these_names",
    "save_any_names_but_these",
    "save_anything_except_these_names",
    "save_from_both_policies",
    "offload_dot_with_no_batch_dims",
    "Saveable",
    "Recompute",
    "Offloadable",
    "save_and_offload_only_these_names",
]

remat_p = Primitive("remat", multiple_results=True, carries_jaxprs=True)
name_p = Primitive("name")

Policy = Callable[..., bool]


# ---------------------------------------------------------------------------------------------
# Policies


def everything_saveable(prim: Primitive, *avals: ShapedArray, **params: Any) -> bool:
    """Save every intermediate: no recomputation (like not checkpointing at all).

    Example:
        >>> everything_saveable(name_p, name="x")
        True
    """
    return True


def nothing_saveable(prim: Primitive, *avals: ShapedArray, **params: Any) -> bool:
    """Save nothing but the inputs: recompute every intermediate (the default).

    Example:
        >>> nothing_saveable(name_p, name="x")
        False
    """
    return False


def dots_saveable(prim: Primitive, *avals: ShapedArray, **params: Any) -> bool:
    """Save the results of matrix products (``dot_general``); recompute everything else.

    Example:
        >>> dots_saveable(_linalg.dot_general_p, dimension_numbers=(((1,), (0,)), ((), ())))
        True
    """
    return prim is _linalg.dot_general_p


checkpoint_dots = dots_saveable


def dots_with_no_batch_dims_saveable(
    prim: Primitive, *avals: ShapedArray, **params: Any
) -> bool:
    """Save the results of matrix products without batch dimensions (plain matmuls).

    Example:
        >>> dn = (((2,), (1,)), ((0,), (0,)))   # a batched matmul
        >>> dots_with_no_batch_dims_saveable(_linalg.dot_general_p, dimension_numbers=dn)
        False
    """
    if prim is not _linalg.dot_general_p:
        return False
    (_, _), (lhs_batch, rhs_batch) = params["dimension_numbers"]
    return not lhs_batch and not rhs_batch


checkpoint_dots_with_no_batch_dims = dots_with_no_batch_dims_saveable


class _NamePolicy:
    """Save the values named with :func:`checkpoint_name` (``keep``) or all but those; with
    ``others``, every unnamed value too (:func:`save_anything_except_these_names`)."""

    __slots__ = ("names", "keep", "others", "__name__")

    def __init__(self, names: tuple[str, ...], keep: bool, others: bool = False) -> None:
        fn = ("save_only_these_names" if keep else
              "save_anything_except_these_names" if others else "save_any_names_but_these")
        for n in names:
            if not isinstance(n, str):
                raise TypeError(f"{fn}: names must be strings, got {type(n).__name__}")
        self.names = frozenset(names)
        self.keep = keep
        self.others = others
        self.__name__ = f"{fn}({', '.join(repr(n) for n in sorted(self.names))})"

    def __call__(self, prim: Primitive, *avals: ShapedArray, **params: Any) -> bool:
        if prim is not name_p:
            return self.others
        return (params["name"] in self.names) == self.keep

    def __eq__(self, other: object) -> bool:
        return (type(other) is _NamePolicy and other.names == self.names
                and other.keep == self.keep and other.others == self.others)

    def __hash__(self) -> int:
        return hash((_NamePolicy, self.names, self.keep, self.others))

    def __repr__(self) -> str:
        return self.__name__


def save_only_these_names(*names: str) -> Policy:
    """Save only the values marked ``checkpoint_name(x, name)`` with one of ``names``.

    Example:
        >>> p = save_only_these_names("h")
        >>> p(name_p, name="h"), p(name_p, name="z")
        (True, False)
    """
    return _NamePolicy(tuple(names), True)


def save_any_names_but_these(*names: str) -> Policy:
    """Save every value marked with :func:`checkpoint_name` except those named ``names``.

    Example:
        >>> p = save_any_names_but_these("h")
        >>> p(name_p, name="h"), p(name_p, name="z")
        (False, True)
    """
    return _NamePolicy(tuple(names), False)


def save_anything_except_these_names(*names_not_to_save: str) -> Policy:
    """Save every value, named or not, except those named ``names_not_to_save`` (JAX's
    docstring: "Save any values (not just named ones) excluding the names given"; JAX 0.10.2's
    implementation saves the excluded names too). Unlike :func:`save_any_names_but_these`,
    unnamed intermediates are saved as well.

    Example:
        >>> p = save_anything_except_these_names("h")
        >>> p(name_p, name="h"), p(name_p, name="z"), p(remat_p)
        (False, True, True)
    """
    return _NamePolicy(tuple(names_not_to_save), False, True)


def offload_dot_with_no_batch_dims(offload_src: Any, offload_dst: Any) -> Policy:
    """JAX's policy that offloads the results of matmuls without batch dimensions to host
    memory instead of recomputing them. Host and device memory are one here (NumPy) or
    offloading is not modelled (CuPy), so it keeps them as
    :func:`dots_with_no_batch_dims_saveable` does: the same values reach the backward pass.

    Example:
        >>> offload_dot_with_no_batch_dims("device", "pinned_host") is (
        ...     dots_with_no_batch_dims_saveable)
        True
    """
    del offload_src, offload_dst  # memory kinds: one memory here
    return dots_with_no_batch_dims_saveable


def save_and_offload_only_these_names(
    *, names_which_can_be_saved: Sequence[str], names_which_can_be_offloaded: Sequence[str],
    offload_src: Any, offload_dst: Any,
) -> Policy:
    """JAX's policy saving some named values and offloading others to host memory; with one
    memory both are saved, as :func:`save_only_these_names` of all of them.

    Example:
        >>> p = save_and_offload_only_these_names(
        ...     names_which_can_be_saved=["a"], names_which_can_be_offloaded=["b"],
        ...     offload_src="device", offload_dst="pinned_host")
        >>> p == save_only_these_names("a", "b")
        True
    """
    del offload_src, offload_dst  # memory kinds: one memory here
    return save_only_these_names(*names_which_can_be_saved, *names_which_can_be_offloaded)


class SaveableType:
    """The type of :data:`Saveable`, a policy's answer "save these outputs" (JAX's
    ``jax.ad_checkpoint.Saveable``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "Saveable"


class RecomputeType:
    """The type of :data:`Recompute`, a policy's answer "recompute these outputs in the
    backward pass" (JAX's ``jax.ad_checkpoint.Recompute``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "Recompute"


#: what a policy may return instead of ``True``/``False`` (JAX's names)
Saveable = SaveableType()
Recompute = RecomputeType()


class Offloadable(NamedTuple):
    """A policy's answer "save these outputs in memory ``dst``" (JAX's
    ``jax.ad_checkpoint.Offloadable(src, dst)``); one memory here, so it means save.

    Example:
        >>> Offloadable("device", "pinned_host").dst
        'pinned_host'
    """

    src: Any
    dst: Any


def _decision(answer: Any) -> bool:
    """A policy's answer as save (True) or recompute (False): ``Recompute`` is truthy as an
    object (as JAX's), so it is read by identity, not by ``bool``."""
    if answer is Recompute:
        return False
    if answer is Saveable or isinstance(answer, Offloadable):
        return True
    return bool(answer)


class _BothPolicy:
    __slots__ = ("a", "b", "__name__")

    def __init__(self, a: Policy, b: Policy) -> None:
        self.a, self.b = a, b
        self.__name__ = f"save_from_both_policies({_policy_name(a)}, {_policy_name(b)})"

    def __call__(self, prim: Primitive, *avals: ShapedArray, **params: Any) -> bool:
        return (_decision(self.a(prim, *avals, **params))
                or _decision(self.b(prim, *avals, **params)))

    def __eq__(self, other: object) -> bool:
        return type(other) is _BothPolicy and (other.a, other.b) == (self.a, self.b)

    def __hash__(self) -> int:
        return hash((_BothPolicy, self.a, self.b))

    def __repr__(self) -> str:
        return self.__name__


def save_from_both_policies(policy_1: Policy, policy_2: Policy) -> Policy:
    """Save what either policy saves.

    Example:
        >>> p = save_from_both_policies(dots_saveable, save_only_these_names("h"))
        >>> p(name_p, name="h")
        True
    """
    return _BothPolicy(_check_policy(policy_1), _check_policy(policy_2))


def _policy_name(p: Any) -> str:
    return getattr(p, "__name__", None) or repr(p)


checkpoint_policies = types.SimpleNamespace(
    everything_saveable=everything_saveable,
    nothing_saveable=nothing_saveable,
    dots_saveable=dots_saveable,
    checkpoint_dots=checkpoint_dots,
    dots_with_no_batch_dims_saveable=dots_with_no_batch_dims_saveable,
    checkpoint_dots_with_no_batch_dims=checkpoint_dots_with_no_batch_dims,
    save_only_these_names=save_only_these_names,
    save_any_names_but_these=save_any_names_but_these,
    save_anything_except_these_names=save_anything_except_these_names,
    save_from_both_policies=save_from_both_policies,
    offload_dot_with_no_batch_dims=offload_dot_with_no_batch_dims,
    save_and_offload_only_these_names=save_and_offload_only_these_names,
)
checkpoint_policies.__doc__ = (
    "Ready-made rematerialization policies: ``policy(prim, *avals, **params) -> bool``."
)


# -- writing policies to exported files (funcgrad.export): by name, as data ---------------------

_NAMED_POLICIES = {
    "everything_saveable": everything_saveable,
    "nothing_saveable": nothing_saveable,
    "dots_saveable": dots_saveable,
    "dots_with_no_batch_dims_saveable": dots_with_no_batch_dims_saveable,
}


def _encode_policy(policy: Any, enc: Encoder) -> Any:
    for name, p in _NAMED_POLICIES.items():
        if policy is p:
            return name
    if type(policy) is _NamePolicy:
        if policy.others:
            return {"names": sorted(policy.names), "keep": policy.keep, "others": True}
        return {"names": sorted(policy.names), "keep": policy.keep}
    if type(policy) is _BothPolicy:
        return {"both": [_encode_policy(policy.a, enc), _encode_policy(policy.b, enc)]}
    raise ExportError(
        f"cannot export primitive 'remat': its policy {_policy_name(policy)} is a Python "
        "function; only the policies of funcgrad.checkpoint_policies can be written"
    )


def _decode_policy(d: Any, dec: Decoder) -> Policy:
    if isinstance(d, str) and d in _NAMED_POLICIES:
        return _NAMED_POLICIES[d]
    if isinstance(d, dict) and set(d) in ({"names", "keep"}, {"names", "keep", "others"}):
        return _NamePolicy(tuple(d["names"]), bool(d["keep"]), bool(d.get("others", False)))
    if isinstance(d, dict) and set(d) == {"both"} and len(d["both"]) == 2:
        return _BothPolicy(_decode_policy(d["both"][0], dec), _decode_policy(d["both"][1], dec))
    raise ExportError(f"unknown checkpoint policy {d!r}")


def _check_policy(policy: Any) -> Policy:
    if not callable(policy):
        raise TypeError(
            f"checkpoint: policy must be a callable policy(prim, *avals, **params) -> bool "
            f"(see funcgrad.checkpoint_policies), got {type(policy).__name__}"
        )
    try:
        hash(policy)
    except TypeError:
        raise TypeError(
            f"checkpoint: policy {policy!r} must be hashable (it is a parameter of the remat "
            "primitive); use a function or a hashable callable object"
        ) from None
    return policy


@functools.lru_cache(maxsize=256)
def _takes_params_dict(policy: Policy) -> bool:
    """Whether ``policy`` is written ``policy(prim, params)`` rather than JAX's
    ``policy(prim, *avals, **params)``: exactly two positional parameters, nothing variadic."""
    try:
        sig = inspect.signature(policy)
    except (TypeError, ValueError):
        return False
    kinds = [p.kind for p in sig.parameters.values()]
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return len(kinds) == 2 and all(k in positional for k in kinds)


def _saveable(policy: Policy, eqn: Eqn) -> bool:
    try:
        if _takes_params_dict(policy):
            return _decision(policy(eqn.prim, dict(eqn.params)))
        avals = [a.aval for a in eqn.invars]
        return _decision(policy(eqn.prim, *avals, **eqn.params))
    except TypeError as e:
        raise TypeError(
            f"checkpoint: the policy {_policy_name(policy)} failed on primitive "
            f"'{eqn.prim.name}': {e}. A policy is called as policy(prim, *avals, **params) "
            "and returns whether that operation's outputs may be saved"
        ) from e


# ---------------------------------------------------------------------------------------------
# checkpoint_name: an identity that marks a value for the name-based policies


def _name_abstract(x: ShapedArray, *, name: str) -> list[ShapedArray]:
    if not isinstance(name, str):
        raise TypeError(f"checkpoint_name: name must be a string, got {type(name).__name__}")
    return [x]


name_p.def_impl(lambda x, *, name: [x])
name_p.def_abstract_eval(_name_abstract)
# The tangent passes through unnamed: names mark primal values, which policies look at.
defjvp(name_p, lambda g, ans, x, *, name: g)
# An identity is elementwise: the eager tape then skips per-node linearization for it.
elementwise_primitives.add(name_p)
deftranspose(name_p, lambda ct, x, *, name: [ct])
batching.batch_rules[name_p] = lambda axis_size, vals, dims, *, name: (
    [bind1(name_p, vals[0], name=name)], [dims[0]])


def checkpoint_name(x: Any, name: str) -> Any:
    """``x`` unchanged, marked ``name`` for :func:`save_only_these_names` and friends.

    Example:
        >>> import numpy as np
        >>> checkpoint_name(np.ones(2), "h").tolist()
        [1.0, 1.0]
    """
    if not isinstance(name, str):
        raise TypeError(f"checkpoint_name: name must be a string, got {type(name).__name__}")
    if current_trace() is eval_trace:
        return x  # nothing looks at names outside a transformation
    return tree_util.tree_map(lambda leaf: bind1(name_p, leaf, name=name), x)


# ---------------------------------------------------------------------------------------------
# checkpoint


def checkpoint(
    fun: Callable[..., Any] | None = None,
    *,
    prevent_cse: bool | Sequence[bool] = True,
    policy: Policy | None = None,
    static_argnums: int | Sequence[int] = (),
    static_argnames: str | Sequence[str] = (),
) -> Callable[..., Any]:
    """``fun`` with its intermediates recomputed in the backward pass instead of stored.

    Reverse-mode derivatives through the returned function keep only ``fun``'s inputs (plus
    what ``policy`` allows to save, see :data:`checkpoint_policies`) between the forward and
    the backward pass; the rest is recomputed when the backward pass needs it. Values and
    derivatives are unchanged. ``static_argnums`` / ``static_argnames`` mark arguments that
    are passed through as Python values (not traced), by position or by name (an argument
    named static is static passed either way). Usable as a decorator, with or without
    arguments.

    Example:
        >>> import numpy as np, funcgrad, funcgrad.numpy as fnp
        >>> @checkpoint(policy=checkpoint_policies.dots_saveable)
        ... def layer(w, x):
        ...     return fnp.tanh(w @ x)
        >>> g = funcgrad.grad(lambda w, x: fnp.sum(layer(w, x)))(np.eye(2), np.ones(2))
        >>> g.shape
        (2, 2)
    """
    if fun is None:
        return functools.partial(  # type: ignore[return-value]
            checkpoint, prevent_cse=prevent_cse, policy=policy, static_argnums=static_argnums,
            static_argnames=static_argnames,
        )
    if not callable(fun):
        raise TypeError(f"checkpoint: expected a function, got {type(fun).__name__}")
    pol = nothing_saveable if policy is None else _check_policy(policy)
    # JAX also takes one bool per positional argument (a prefix of the arguments' tree).
    per_arg = None
    if isinstance(prevent_cse, tuple | list):
        per_arg = tree_util.tree_leaves(prevent_cse)
        if not all(isinstance(p, bool) for p in per_arg):
            raise TypeError(f"checkpoint: prevent_cse must be a bool or a sequence of bools "
                            f"(one per argument), got {prevent_cse!r}")
        n_flags = len(prevent_cse)
        prevent_cse = any(per_arg)
    elif not isinstance(prevent_cse, bool):
        raise TypeError(f"checkpoint: prevent_cse must be a bool or a sequence of bools "
                        f"(one per argument), got {prevent_cse!r}")
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    for s in static:
        if not isinstance(s, int):
            raise TypeError(f"checkpoint: static_argnums must be ints, got {s!r}")
    static_names = {static_argnames} if isinstance(static_argnames, str) else set(
        static_argnames)
    n_nums = len(static)
    if static_names:
        try:
            params = list(inspect.signature(fun).parameters.values())
        except (TypeError, ValueError):
            params = []
        # A name of a positional parameter also marks its position.
        static += tuple(i for i, p in enumerate(params)
                        if p.name in static_names
                        and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
    named_positions = set(static[n_nums:])  # positions of parameters named static
    name = getattr(fun, "__name__", None) or type(fun).__name__

    @functools.wraps(fun)
    def checkpointed(*args: Any, **kwargs: Any) -> Any:
        if current_trace() is eval_trace:
            # No transformation to save residuals for: running fun is the same, and cheaper.
            return fun(*args, **kwargs)
        if per_arg is not None and n_flags != len(args):
            raise ValueError(
                f"checkpoint({name}): prevent_cse has {n_flags} entries for {len(args)} "
                "positional arguments; give one per argument (or a single bool)"
            )
        static_kw = {k: v for k, v in kwargs.items() if k in static_names}
        if static_kw:
            kwargs = {k: v for k, v in kwargs.items() if k not in static_names}
        for i in static:
            if i >= len(args) and i in named_positions:
                continue  # a parameter named static, given by keyword (or its default)
            if not -len(args) <= i < len(args):
                raise ValueError(
                    f"checkpoint({name}): static_argnums {i} is out of range for "
                    f"{len(args)} positional arguments"
                )
        statics = {i % len(args) for i in static if -len(args) <= i < len(args)}
        dyn_pos = [i for i in range(len(args)) if i not in statics]
        dyn = ([args[i] for i in dyn_pos], kwargs)
        leaves, in_tree = tree_util.tree_flatten(dyn)
        in_avals = []
        for x in leaves:
            try:
                in_avals.append(get_aval(x))
            except TypeError:
                raise TypeError(
                    f"checkpoint({name}): an argument is a {type(x).__name__}, not an array or "
                    "a scalar; mark it static with static_argnums"
                ) from None
        out_store: list[Any] = []

        def flat(*tracers: Any) -> list[Any]:
            dyn_args, dyn_kwargs = tree_util.tree_unflatten(in_tree, list(tracers))
            full = list(args)
            for i, v in zip(dyn_pos, dyn_args):
                full[i] = v
            out = fun(*full, **dyn_kwargs, **static_kw)
            out_leaves, out_tree = tree_util.tree_flatten(out)
            for o in out_leaves:
                if not isinstance(o, Tracer):
                    try:
                        get_aval(o)
                    except TypeError:
                        raise TypeError(
                            f"checkpoint({name}) returned a {type(o).__name__}; checkpointed "
                            "functions return (pytrees of) arrays and scalars"
                        ) from None
            out_store.append(out_tree)
            return out_leaves

        closed = trace_to_jaxpr(flat, in_avals, current_trace())
        closed, tracer_consts = jaxpr_rules.hoist_tracer_consts(closed)
        outs = bind(remat_p, *tracer_consts, *leaves, jaxpr=closed, policy=pol,
                    prevent_cse=prevent_cse)
        return tree_util.tree_unflatten(out_store[0], outs)

    return checkpointed


remat = checkpoint


# ---------------------------------------------------------------------------------------------
# impl and shape rule

#: calls of one jaxpr run interpreted before it is compiled (compiling costs milliseconds; a
#: jaxpr called this often, e.g. from a jitted training step, is worth it)
_COMPILE_AFTER = 3
#: jaxpr -> [calls so far, its executor] (the jaxpr held weakly)
_EXECUTORS = WeakLRUCache(maxsize=512)


def _executor(closed: ClosedJaxpr) -> Callable[..., list]:
    hit = _EXECUTORS.get(closed)
    if hit is None:
        hit = [0, runner(closed)]
        _EXECUTORS.put(closed, None, hit)
    hit[0] += 1
    if hit[0] == _COMPILE_AFTER:
        hit[1] = compiled(closed) or hit[1]
    return hit[1]


def _remat_impl(*args: Any, jaxpr: ClosedJaxpr, policy: Policy, prevent_cse: bool) -> list:
    return arrays_out(list(_executor(jaxpr)(*args)), jaxpr.out_avals)


def _remat_abstract(*avals: ShapedArray, jaxpr: ClosedJaxpr, policy: Policy,
                    prevent_cse: bool) -> list[ShapedArray]:
    check_static("remat", policy=policy, prevent_cse=prevent_cse)
    return check_call_avals("remat", avals, jaxpr)


remat_p.def_impl(_remat_impl)
remat_p.def_abstract_eval(_remat_abstract)
register_param_codec(remat_p, "policy", Codec("remat.policy", _encode_policy, _decode_policy))


# ---------------------------------------------------------------------------------------------
# JVP, transpose, batching, DCE: the call primitives' rules (the policy goes along)

def_call_rules(remat_p, lambda params, jaxpr, what, n_in, kept: dict(params, jaxpr=jaxpr))


# ---------------------------------------------------------------------------------------------
# Partial evaluation: save what the policy allows, recompute the rest in the staged part


class _Split:
    """How a remat call splits for given unknown inputs (cached per jaxpr, flags, policy).

    The forward part maps the known inputs to the known outputs and the saved intermediates;
    the ``plan`` says per output of it whether it is one of its inputs ("in", i), a literal
    ("lit", v) or computed ("out"); ``known_call`` computes only the computed ones (None when
    none). ``res_known`` lists the known inputs the staged part reads; ``unknown`` maps
    ``(*those inputs, *saved, *unknown inputs)`` to the unknown outputs, recomputing first.
    """

    __slots__ = ("known_call", "plan", "n_known_out", "res_known", "unknown", "out_unknowns")

    def __init__(self, known_call, plan, n_known_out, res_known, unknown, out_unknowns):
        self.known_call = known_call
        self.plan = plan
        self.n_known_out = n_known_out
        self.res_known = res_known
        self.unknown = unknown
        self.out_unknowns = out_unknowns


def _closed_dce(closed: ClosedJaxpr, jaxpr: Jaxpr, prune: bool) -> tuple[ClosedJaxpr, list]:
    """DCE ``jaxpr`` (whose constvars are a subset of ``closed``'s) with ``closed``'s consts."""
    new, used_in = dce_jaxpr(jaxpr, None, prune_invars=prune)
    keep = set(new.constvars)
    consts = [c for v, c in zip(closed.jaxpr.constvars, closed.consts) if v in keep]
    return ClosedJaxpr(new, consts), used_in


@weak_lru_cache(maxsize=1024)
def _split(closed: ClosedJaxpr, unknowns: tuple[bool, ...], policy: Policy) -> _Split:
    known, unknown, out_unk, nres = jaxpr_rules.partial_eval_jaxpr(closed, unknowns, False)
    kj = known.jaxpr
    n_known_out = len(kj.outvars) - nres
    known_outs, res_atoms = list(kj.outvars[:n_known_out]), list(kj.outvars[n_known_out:])

    # The intermediates the policy lets us keep; everything else the staged part recomputes.
    saveable: list[Var] = []
    recompute: list[Eqn] = []
    for eqn in kj.eqns:
        if _saveable(policy, eqn):
            saveable.extend(eqn.outvars)
        else:
            recompute.append(eqn)
    rec_closed, rec_used = _closed_dce(
        known, Jaxpr(kj.constvars, list(kj.invars) + saveable, res_atoms, recompute), True
    )
    nk = len(kj.invars)
    res_known = tuple(i for i in range(nk) if rec_used[i])
    saved = [v for v, u in zip(saveable, rec_used[nk:]) if u]

    # The forward part: the known outputs and the saved values, nothing more.
    fwd = Jaxpr(kj.constvars, kj.invars, known_outs + saved, kj.eqns)
    fwd_closed, _ = _closed_dce(known, fwd, False)
    known_call, plan = forwarding_plan(fwd_closed)
    if known_call is WHOLE:
        known_call = fwd_closed

    # The staged part: recompute the residuals, then the original unknown part.
    n_res_known, n_saved = len(res_known), len(saved)
    n_unknown_in = len(unknown.in_avals) - nres

    def body(*args: Any) -> list[Any]:
        res = jaxpr_rules.eval_closed(rec_closed, *args[: n_res_known + n_saved])
        return jaxpr_rules.eval_closed(unknown, *res, *args[n_res_known + n_saved:])

    in_avals = [kj.invars[i].aval for i in res_known] + [v.aval for v in saved]
    in_avals += list(unknown.in_avals[nres:])
    assert len(in_avals) == n_res_known + n_saved + n_unknown_in
    staged = trace_to_jaxpr(body, in_avals, eval_trace)
    return _Split(known_call, plan, n_known_out, res_known, staged, out_unk)


def _remat_partial_eval(trace: PartialEvalTrace, args: Sequence[Any], params: dict) -> list:
    jaxpr: ClosedJaxpr = params["jaxpr"]
    policy: Policy = params["policy"]
    prevent_cse: bool = params["prevent_cse"]
    unknowns = tuple(isinstance(x, StagingTracer) and x._trace is trace for x in args)
    sp = _split(jaxpr, unknowns, policy)
    known_args = [x for x, u in zip(args, unknowns) if not u]
    called: list[Any] = []
    if sp.known_call is not None:
        # The known part is a remat call too, so an enclosing linearization (grad of grad)
        # rematerializes it in turn.
        with set_current_trace(trace.parent):  # type: ignore[arg-type]
            called = bind(remat_p, *known_args, jaxpr=sp.known_call, policy=policy,
                          prevent_cse=prevent_cse)
    c_it = iter(called)
    # Values that are known inputs pass straight through, not via the call: the staged part
    # then reads the very arrays the caller holds anyway (no copy), and a tape tracks them.
    fwd = [known_args[v] if k == "in" else v if k == "lit" else next(c_it) for k, v in sp.plan]
    known_outs, saved = fwd[: sp.n_known_out], fwd[sp.n_known_out:]
    staged_args = [known_args[i] for i in sp.res_known] + saved
    staged_args += [x for x, u in zip(args, unknowns) if u]
    unknown_outs = trace.stage(
        remat_p, staged_args,
        dict(jaxpr=sp.unknown, policy=policy, prevent_cse=prevent_cse), None,
    )
    k_it, u_it = iter(known_outs), iter(unknown_outs)
    return [next(u_it) if u else next(k_it) for u in sp.out_unknowns]


partial_eval_rules[remat_p] = _remat_partial_eval
