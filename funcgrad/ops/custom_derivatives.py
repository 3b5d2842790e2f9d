"""Custom derivative rules for Python functions: ``custom_jvp`` and ``custom_vjp``.

A call of a decorated function is one operation on the current trace, carried by a
higher-order primitive whose params are the flattened function and its rules:

- ``custom_jvp_call`` (``fun``, ``jvp``): evaluation calls ``fun`` (eagerly, so Python control
  flow on values works); forward mode and linearize run the user's JVP rule with the parent
  trace current; vmap batches ``fun`` and the rule together; staging (``make_jaxpr``, ``jit``)
  records the traced jaxpr of ``fun`` and keeps the rule as a callable, so the staged jaxpr can
  still be differentiated with the custom rule.
- ``custom_vjp_call`` (``fun``, ``fwd``, ``bwd``): under linearize (and so ``grad``/``vjp``),
  ``fwd`` runs on the parent trace and the tangent map is one ``custom_lin`` equation whose
  transpose rule *is* ``bwd``: the backward pass runs the user's ``bwd``.
- ``custom_lin``: linear in its tangent operands. Evaluating it forward (forward mode:
  ``jvp``, ``jacfwd``, ``hessian``, or ``linearize``'s JVP function) transposes ``bwd``, which
  is linear in the cotangent, so forward mode of a ``custom_vjp`` function works too (JAX
  refuses it).

Closures: a custom function defined at module level cannot close over traced values and takes
the fast path above. One defined (or given rules) inside a transformed function, or given
callables / traced values as ``nondiff_argnums``, may close over tracers: each call then traces
the function and its rules into jaxprs and passes the traced values they close over as explicit
operands (closure conversion). Derivatives with respect to such closed-over values come from
differentiating ``fun`` itself (the custom rule covers the explicit arguments).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy

from funcgrad import compile as _compile
from funcgrad.avals import ShapedArray, float0, get_aval
from funcgrad.backend import get_default_device, xp_for_device
from funcgrad.core import Primitive, Tracer, bind, current_trace, eval_trace, set_current_trace
from funcgrad.errors import ArgumentMismatchError, MissingRuleError
from funcgrad.interpreters import batching
from funcgrad.interpreters.jvp import (
    Zero,
    add_tangents,
    instantiate,
    jvp_flat,
    jvp_rules,
    tangent_aval,
    zeros_like_aval,
)
from funcgrad.interpreters.linearize import backward_pass_primitives
from funcgrad.interpreters.staging import (
    PartialEvalTrace,
    StagingTrace,
    partial_eval_rules,
    staging_rewrites,
    trace_to_jaxpr,
)
from funcgrad.interpreters.transpose import (
    UndefinedPrimal,
    backward_pass,
    deftranspose,
    is_undefined,
)
from funcgrad.ir import ClosedJaxpr, Jaxpr, Var, eval_jaxpr
from funcgrad.jaxpr_codec import Codec, Decoder, Encoder, ExportError, register_param_codec
from funcgrad.ops._batching_util import bdim_at_front, moveaxis_to_front
from funcgrad.ops.elementwise import convert_element_type
from funcgrad.ops.reductions import reduce_sum
from funcgrad.tree_util import transforms as tree_util  # keys are nodes here

__all__ = [
    "custom_jvp",
    "custom_vjp",
    "SymbolicZero",
    "CustomVJPPrimal",
    "custom_jvp_call_p",
    "custom_vjp_call_p",
    "custom_lin_p",
    "linear_call_p",
]


# ---------------------------------------------------------------------------------------------
# Small helpers


def _is_inexact(a: ShapedArray) -> bool:
    return a.dtype.kind in "fc"


def _call(fun: Any, args: Sequence[Any]) -> list[Any]:
    """Call a flat function (a Python callable or a ClosedJaxpr) on operands."""
    if isinstance(fun, ClosedJaxpr):
        return eval_jaxpr(fun.jaxpr, fun.consts, *args)
    return list(fun(*args))


def _fun_name(fun: Any) -> str:
    return getattr(fun, "__name__", None) or type(fun).__name__


def _zeros_of(a: ShapedArray) -> Any:
    if a.dtype == float0:
        return numpy.zeros(a.shape, dtype=float0)
    return zeros_like_aval(a)


class SymbolicZero:
    """A zero tangent that was never built, handed to a ``custom_jvp`` rule defined with
    ``defjvp(rule, symbolic_zeros=True)`` for each argument that is not differentiated here
    (as JAX's ``jax.custom_derivatives.SymbolicZero``): the rule can skip its contribution.
    ``.aval``, ``.shape``, ``.dtype`` describe the tangent; a rule may return one for a
    zero output tangent.

    Example:
        >>> import numpy as np
        >>> z = SymbolicZero.from_primal_value(np.ones(2, np.float32))
        >>> z, z.shape, z.dtype
        (SymbolicZero, (2,), dtype('float32'))
    """

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray) -> None:
        self.aval = aval

    @property
    def shape(self) -> tuple[int, ...]:
        return self.aval.shape

    @property
    def dtype(self) -> Any:
        return self.aval.dtype

    @property
    def ndim(self) -> int:
        return len(self.aval.shape)

    @staticmethod
    def from_primal_value(val: Any) -> SymbolicZero:
        """The symbolic zero tangent of a primal value."""
        return SymbolicZero(tangent_aval(get_aval(val)))

    def __repr__(self) -> str:
        return "SymbolicZero"


class CustomVJPPrimal:
    """An argument leaf as the ``fwd`` rule of a ``custom_vjp`` defined with
    ``defvjp(fwd, bwd, symbolic_zeros=True)`` gets it (JAX's
    ``jax.custom_derivatives.CustomVJPPrimal``): ``value``, and ``perturbed``, whether it is
    being differentiated (a non-zero tangent) -- ``fwd`` may skip residuals for the others.
    Where that is not known (a rule closing over traced values) every float leaf counts as
    perturbed.

    Example:
        >>> CustomVJPPrimal(1.0, True).perturbed
        True
    """

    __slots__ = ("value", "perturbed")  # a leaf, not a pytree node (as JAX's)

    def __init__(self, value: Any, perturbed: bool) -> None:
        self.value = value
        self.perturbed = perturbed

    def __repr__(self) -> str:
        return f"CustomVJPPrimal(value={self.value!r}, perturbed={self.perturbed})"


#: While a symbolic_zeros ``fwd`` rule is called from a JVP rule: which argument leaves have
#: non-zero tangents (read once by the rule's wrapper, then cleared for nested rules).
_perturbed_leaves: contextvars.ContextVar[list[bool] | None] = contextvars.ContextVar(
    "funcgrad_custom_vjp_perturbed", default=None)


def _instantiate_tangent(t: Any) -> Any:
    if type(t) is Zero:
        return _zeros_of(t.aval)
    return t


def _fit(t: Any, aval: ShapedArray, what: str) -> Any:
    """Check a tangent/cotangent ``t`` given by a user rule against ``aval``; fix weak dtypes."""
    ta = get_aval(t)
    if ta.shape != aval.shape:
        raise ArgumentMismatchError(
            f"{what} has shape {ta.shape} but should have shape {aval.shape} "
            f"({aval.str_short()})"
        )
    if ta.dtype != aval.dtype:
        if ta.dtype.kind == aval.dtype.kind or (ta.dtype.kind in "iub" and aval.dtype.kind == "f"):
            return convert_element_type(t, aval.dtype)
        raise TypeError(
            f"{what} has dtype {ta.dtype} but should have dtype {aval.dtype} "
            f"({aval.str_short()})"
        )
    return t


def _cotangent_leaves(g: Any, arg: Any, who: str, j: int) -> list[Any]:
    """The leaves of cotangent ``g`` of argument ``arg``, one per leaf of ``arg`` (None for
    zero): ``g`` has ``arg``'s structure, where None may stand for any subtree (as JAX's)."""
    out: list[Any] = []

    def add(c: Any, sub: Any) -> None:
        if c is None:
            out.extend([None] * len(tree_util.tree_leaves(sub)))
        elif not tree_util.tree_structure(sub).is_leaf():
            raise ValueError("a cotangent leaf where the argument has a subtree")
        else:
            out.append(c)

    try:
        tree_util.tree_map(add, g, arg, is_leaf=lambda x: x is None)
    except ValueError:
        raise TypeError(
            f"{who} returned a cotangent of structure "
            f"{tree_util.tree_structure(g, is_leaf=lambda x: x is None)} for argument {j} of "
            f"structure {tree_util.tree_structure(arg)}; it must be structured like the "
            "argument (None for a zero subtree)"
        ) from None
    return out


def _to_front(outs: Sequence[Any], dims: Sequence[int | None], n: int) -> list[Any]:
    return [bdim_at_front(o, d, n) for o, d in zip(outs, dims)]


class _Store:
    """What flat wrappers learn when they run: output treedef, residual treedef, avals."""

    __slots__ = ("out_tree", "res_tree", "out_avals")

    def __init__(self) -> None:
        self.out_tree: Any = None
        self.res_tree: Any = None
        self.out_avals: list[ShapedArray] | None = None

    def set_out(self, tree: Any, what: str, name: str) -> None:
        if self.out_tree is None:
            self.out_tree = tree
        elif tree != self.out_tree:
            raise TypeError(
                f"{what} of {name} has structure {tree}, but the function's output has "
                f"structure {self.out_tree}; they must match"
            )


class _ConvState:
    """A closure conversion in progress (see :func:`_convert_jvp`).

    While a custom function's rules are traced, the rules usually call the function itself.
    On the first pass (``consts`` None) such a call is inlined, which reveals every traced
    value the function and its rules close over. On the second pass the call binds the
    converted function with those values as explicit operands and rules (``jvp``/``fwd``/
    ``bwd``) that forward to the converted rules once they exist, so that differentiating the
    rule again (higher orders) still uses the custom rule and never meets a stale closure.
    """

    __slots__ = ("in_avals", "in_tree", "out_tree", "consts", "fun", "rules", "final")

    def __init__(self, in_avals: list[ShapedArray], in_tree: Any) -> None:
        self.in_avals = in_avals
        self.in_tree = in_tree
        self.out_tree: Any = None
        self.consts: list[Any] | None = None
        self.fun: Any = None
        self.rules: dict[str, Callable[..., Any]] = {}
        self.final: dict[str, Callable[..., Any]] = {}

    def forwarder(self, kind: str, name: str) -> Callable[..., Any]:
        def f(*args: Any) -> Any:
            return self.final[kind](*args)

        f.__name__ = name
        self.rules[kind] = f
        return f

    def nested(self, prim: Primitive, leaves: list, in_tree: Any, fallback: Callable) -> Any:
        """The outputs of a call of the function from inside its own rule."""
        avals = [get_aval(x) for x in leaves]
        if (
            self.consts is None
            or in_tree != self.in_tree
            or [(a.shape, a.dtype) for a in avals] != [(a.shape, a.dtype) for a in self.in_avals]
        ):
            return fallback()
        outs = bind(prim, *self.consts, *leaves, fun=self.fun, num_consts=len(self.consts),
                    **self.rules)
        return tree_util.tree_unflatten(self.out_tree, outs)


# Custom functions whose rules are being traced right now (closure conversion), by id.
_converting: contextvars.ContextVar[dict[int, _ConvState]] = contextvars.ContextVar(
    "funcgrad_custom_converting", default={}  # noqa: B039  (never mutated: copied on set)
)


@contextlib.contextmanager
def _converting_as(key: int, state: _ConvState) -> Any:
    token = _converting.set({**_converting.get(), key: state})
    try:
        yield
    finally:
        _converting.reset(token)


def _maybe_closes(x: Any) -> bool:
    """Whether a nondiff argument may carry traced values (a tracer, or a callable)."""
    for leaf in tree_util.tree_leaves(x):
        if isinstance(leaf, Tracer) or callable(leaf):
            return True
    return False


def _signature(fun: Callable[..., Any]) -> inspect.Signature | None:
    try:
        return inspect.signature(fun)
    except (TypeError, ValueError):
        return None


def _n_positional(sig: inspect.Signature | None) -> int:
    if sig is None:
        return 0
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return sum(1 for p in sig.parameters.values() if p.kind in kinds)


def _resolve_args(
    sig: inspect.Signature | None, n_pos: int, args: tuple, kwargs: dict, name: str
) -> tuple:
    """Positional arguments, with keywords and defaults filled in (rules see them all)."""
    if (not kwargs and len(args) >= n_pos) or sig is None:
        if kwargs:
            raise TypeError(f"{name}: cannot resolve keyword arguments {sorted(kwargs)}")
        return args
    try:
        ba = sig.bind(*args, **kwargs)
    except TypeError as e:
        raise TypeError(f"{name}: {e}") from None
    ba.apply_defaults()
    if ba.kwargs:
        raise TypeError(
            f"{name}: keyword-only arguments ({', '.join(ba.kwargs)}) are not supported by "
            "custom_jvp/custom_vjp functions; make them positional"
        )
    return tuple(ba.args)


def _split_nondiff(args: tuple, nondiff: tuple[int, ...], name: str) -> tuple[list, tuple]:
    for i in nondiff:
        if i >= len(args):
            raise TypeError(
                f"{name}: nondiff_argnums contains {i} but the function was called with "
                f"{len(args)} positional arguments"
            )
    return [args[i] for i in nondiff], tuple(a for i, a in enumerate(args) if i not in nondiff)


def _merge_args(nondiff_idx: tuple[int, ...], nondiff: list, diff: Sequence[Any]) -> list:
    out: list[Any] = []
    nd, df = iter(nondiff), iter(diff)
    for i in range(len(nondiff_idx) + len(diff)):
        out.append(next(nd) if i in nondiff_idx else next(df))
    return out


# ---------------------------------------------------------------------------------------------
# Closure conversion


def _closure_convert(
    flat_fn: Callable[..., Sequence[Any]], in_avals: Sequence[ShapedArray]
) -> tuple[ClosedJaxpr, list[Var], list[Any]]:
    """Trace ``flat_fn``; return (jaxpr over its args, lifted vars, lifted traced values).

    Constants of the traced jaxpr that are tracers (values of some transformation the function
    closes over) are lifted out: the caller makes them explicit operands.
    """
    closed = trace_to_jaxpr(flat_fn, in_avals, current_trace())
    keep_vars, keep_vals, lift_vars, lift_vals = [], [], [], []
    for v, c in zip(closed.jaxpr.constvars, closed.consts):
        if isinstance(c, Tracer):
            lift_vars.append(v)
            lift_vals.append(c)
        else:
            keep_vars.append(v)
            keep_vals.append(c)
    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr(keep_vars, j.invars, j.outvars, j.eqns), keep_vals), lift_vars, \
        lift_vals


def _merge_lifted(parts: Sequence[tuple[list[Var], list[Any]]]) -> list[Any]:
    """All lifted values, each once (by identity), in first-seen order."""
    seen: dict[int, Any] = {}
    for _, vals in parts:
        for v in vals:
            seen.setdefault(id(v), v)
    return list(seen.values())


def _with_lifted_invars(
    closed: ClosedJaxpr, lift_vars: list[Var], lift_vals: list[Any], consts: list[Any]
) -> ClosedJaxpr:
    """``closed`` taking ``consts`` (the merged lifted values) as leading invars."""
    own = {id(c): v for v, c in zip(lift_vars, lift_vals)}
    lead = [own.get(id(c)) or Var(get_aval(c)) for c in consts]
    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr(j.constvars, lead + j.invars, j.outvars, j.eqns), closed.consts)


# =============================================================================================
# custom_jvp


def forward_def_attr(self: Any, name: str) -> Any:
    """``__getattr__`` of the custom-rule wrappers, as JAX's ``forward_attr``: a ``def*``
    name (``defjvp``, ``defvjp``, ``def_vmap``...) the wrapper lacks is the wrapped custom
    function's, so ``custom_vjp(custom_vmap(f)).def_vmap`` sets the inner rule."""
    fun = self.__dict__.get("fun")
    if name.startswith("def") and fun is not None:
        return getattr(fun, name)
    raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


class custom_jvp:  # noqa: N801  (the JAX name)
    """A function with a custom forward-mode (JVP) derivative rule.

    Decorate a function, then give the rule with :meth:`defjvp` (or one function per argument
    with :meth:`defjvps`). Differentiation (``jvp``, ``grad``, ``jacfwd``...) uses the rule;
    reverse mode transposes the rule's tangent computation, so it must be linear in the
    tangents. Evaluating, ``vmap`` and ``make_jaxpr`` run the function itself.

    ``nondiff_argnums`` marks arguments that are not differentiated (static values such as
    Python callables or flags); the rule receives them first: ``jvp(*nondiff, primals,
    tangents)``.

    Example:
        >>> import funcgrad, funcgrad.numpy as fnp
        >>> @custom_jvp
        ... def f(x):
        ...     return fnp.sin(x)
        >>> @f.defjvp
        ... def f_jvp(primals, tangents):
        ...     (x,), (t,) = primals, tangents
        ...     return f(x), 2.0 * t       # deliberately not cos(x)
        >>> float(funcgrad.grad(f)(0.3))
        2.0
    """

    __getattr__ = forward_def_attr

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int] = (),
                 nondiff_argnames: Sequence[str] = ()) -> None:
        if not callable(fun):
            raise TypeError(f"custom_jvp: expected a function, got {type(fun).__name__}")
        functools.update_wrapper(self, fun)
        self.fun = fun
        self._sig = _signature(fun)
        self._n_pos = _n_positional(self._sig)
        self.nondiff_argnums = _normalize_nondiff(
            tuple(_as_ints(nondiff_argnums))
            + _argnames_positions(self._sig, nondiff_argnames, "custom_jvp"), "custom_jvp")
        self.jvp: Callable[..., Any] | None = None
        self._symbolic_zeros = False
        # Defined under a transformation: the function may close over its tracers.
        self._maybe_closure = current_trace() is not eval_trace

    def defjvp(self, jvp: Callable[..., Any], symbolic_zeros: bool = False
               ) -> Callable[..., Any]:
        """Set the JVP rule ``jvp(*nondiff_args, primals, tangents) -> (out, tangent_out)``.

        ``primals`` and ``tangents`` are tuples of the differentiable arguments (pytrees);
        tangents of integer arguments are ``float0`` zeros. With ``symbolic_zeros=True`` (as
        JAX) the tangent of an argument that is not being differentiated is a
        :class:`SymbolicZero` instead of an array of zeros (where it is known to be zero:
        ``grad``/``jvp``, also under ``vmap`` and ``jit``; a rule defined inside a transformed
        function, which may close over traced values, gets zero arrays), and the rule may
        return one. Returns ``jvp`` (use it as a
        decorator).

        Example:
            >>> import funcgrad, funcgrad.numpy as fnp
            >>> @custom_jvp
            ... def cube(x):
            ...     return x * x * x
            >>> @cube.defjvp
            ... def cube_jvp(primals, tangents):
            ...     (x,), (t,) = primals, tangents
            ...     return cube(x), 3.0 * x * x * t
            >>> float(funcgrad.grad(cube)(2.0))
            12.0
        """
        if not callable(jvp):
            raise TypeError(f"defjvp: expected a function, got {type(jvp).__name__}")
        self.jvp = jvp
        self._symbolic_zeros = bool(symbolic_zeros)
        if current_trace() is not eval_trace:
            self._maybe_closure = True
        return jvp

    def defjvps(self, *jvps: Callable[..., Any] | None) -> None:
        """One rule per argument: ``fn(tangent, primal_out, *primals)`` -> its contribution.

        ``None`` marks an argument whose contribution is zero. Contributions are summed.

        Example:
            >>> import funcgrad, funcgrad.numpy as fnp
            >>> @custom_jvp
            ... def f(x, y):
            ...     return fnp.sin(x) * y
            >>> f.defjvps(lambda t, ans, x, y: fnp.cos(x) * t * y,
            ...           lambda t, ans, x, y: fnp.sin(x) * t)
            >>> float(funcgrad.grad(f, 1)(0.5, 2.0)) == float(fnp.sin(0.5))
            True
        """
        if self.nondiff_argnums:
            raise TypeError("defjvps cannot be combined with nondiff_argnums; use defjvp")

        def jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
            if len(jvps) != len(primals):
                raise TypeError(
                    f"defjvps: got {len(jvps)} rules for a function of {len(primals)} "
                    "arguments; give one per argument (None for no contribution)"
                )
            ans = self(*primals)
            out = None
            for fn, t in zip(jvps, tangents):
                if fn is None:
                    continue
                c = fn(t, ans, *primals)
                out = c if out is None else tree_util.tree_map(lambda a, b: a + b, out, c)
            if out is None:
                out = tree_util.tree_map(lambda a: _zeros_of(tangent_aval(get_aval(a))), ans)
            return ans, out

        jvp.__name__ = f"{self.__name__}_jvps"  # type: ignore[attr-defined]
        self.defjvp(jvp)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        name = getattr(self, "__name__", "custom_jvp function")
        if self.jvp is None:
            raise AttributeError(
                f"no JVP rule defined for custom_jvp function {name}; define one with "
                f"{name}.defjvp(...)"
            )
        args = _resolve_args(self._sig, self._n_pos, args, kwargs, name)
        cur = current_trace()
        if cur is eval_trace:
            return self.fun(*args)
        nondiff, diff = _split_nondiff(args, self.nondiff_argnums, name)
        leaves, in_tree = tree_util.tree_flatten(diff)
        store = _Store()
        nd_idx = self.nondiff_argnums
        fun, rule = self.fun, self.jvp

        def flat_fun(*xs: Any) -> list[Any]:
            out = fun(*_merge_args(nd_idx, nondiff, tree_util.tree_unflatten(in_tree, xs)))
            out_leaves, out_tree = tree_util.tree_flatten(out)
            store.set_out(out_tree, "the output", name)
            return out_leaves

        def flat_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[list, list]:
            p = tree_util.tree_unflatten(in_tree, list(primals))
            if symbolic:  # Zero tangents reach here only for a symbolic_zeros rule
                tangents = [SymbolicZero(t.aval) if type(t) is Zero else t for t in tangents]
            t = tree_util.tree_unflatten(in_tree, list(tangents))
            res = rule(*nondiff, tuple(p), tuple(t))
            if not isinstance(res, tuple | list) or len(res) != 2:
                raise TypeError(
                    f"the JVP rule of {name} must return a pair (primal_out, tangent_out), "
                    f"got {type(res).__name__}"
                )
            po_leaves, po_tree = tree_util.tree_flatten(res[0])
            store.set_out(po_tree, "the primal output of the JVP rule", name)
            to_leaves, to_tree = tree_util.tree_flatten(res[1], is_leaf=lambda x: x is None)
            if len(to_leaves) != len(po_leaves):
                raise TypeError(
                    f"the JVP rule of {name} returned a tangent output of structure {to_tree} "
                    f"for a primal output of structure {po_tree}; they must match"
                )
            touts = []
            for i, (o, t) in enumerate(zip(po_leaves, to_leaves)):
                oa = tangent_aval(get_aval(o))
                if (t is None or type(t) is SymbolicZero or getattr(t, "dtype", None) == float0
                        or oa.dtype == float0):
                    touts.append(Zero(oa))
                else:
                    touts.append(_fit(t, oa, f"tangent output {i} of the JVP rule of {name}"))
            return po_leaves, touts

        symbolic = self._symbolic_zeros
        flat_fun.__name__ = name
        flat_jvp.__name__ = _fun_name(rule)
        flat_jvp.symbolic_zeros = symbolic  # type: ignore[attr-defined]
        # What the rule computes for given operand types: equal keys trace to equal jaxprs
        # (export writes a rule that calls its own function once, see _encode_jvp_rule).
        flat_jvp.export_key = (id(rule), symbolic, in_tree,  # type: ignore[attr-defined]
                               tuple(_value_key(v) for v in nondiff))
        state = _converting.get().get(id(self))
        if state is not None:
            return state.nested(custom_jvp_call_p, leaves, in_tree, lambda: fun(*args))
        if self._maybe_closure or _maybe_closes(nondiff):
            state = _ConvState([get_aval(x) for x in leaves], in_tree)
            with _converting_as(id(self), state):
                ops, params = _convert_jvp(state, leaves, flat_fun, flat_jvp, store)
            outs = bind(custom_jvp_call_p, *ops, **params)
        else:
            outs = bind(custom_jvp_call_p, *leaves, fun=flat_fun, jvp=flat_jvp, num_consts=0)
        return tree_util.tree_unflatten(store.out_tree, outs)


def _as_ints(nums: Any) -> tuple:
    return (nums,) if isinstance(nums, int) else tuple(nums)


def _argnames_positions(sig: inspect.Signature | None, names: Any, what: str) -> tuple[int, ...]:
    """The positions of the parameters ``names`` (``nondiff_argnames``, as JAX's): each is
    then a nondiff argument whether passed by position or by keyword."""
    names = (names,) if isinstance(names, str) else tuple(names)
    if not names:
        return ()
    params = [] if sig is None else [
        p.name for p in sig.parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    out = []
    for n in names:
        if n not in params:
            raise ValueError(f"{what}: nondiff_argnames contains {n!r}, which is not a "
                             f"positional parameter of the function ({', '.join(params)})")
        out.append(params.index(n))
    return tuple(out)


def _normalize_nondiff(nondiff_argnums: Any, what: str) -> tuple[int, ...]:
    if isinstance(nondiff_argnums, int):
        nondiff_argnums = (nondiff_argnums,)
    out = tuple(sorted(set(nondiff_argnums)))
    for i in out:
        if not isinstance(i, int) or i < 0:
            raise TypeError(f"{what}: nondiff_argnums must be non-negative ints, got {i!r}")
    return out


def _convert_jvp(
    state: _ConvState,
    leaves: list,
    flat_fun: Callable[..., Any],
    flat_jvp: Callable[..., Any],
    store: _Store,
) -> tuple[list[Any], dict]:
    in_avals = state.in_avals
    t_avals = [tangent_aval(a) for a in in_avals]
    n = len(leaves)

    def rule_flat(*pt: Any) -> list[Any]:
        outs, touts = flat_jvp(list(pt[:n]), list(pt[n:]))
        return list(outs) + [_instantiate_tangent(t) for t in touts]

    f_closed, f_lv, f_vals = _closure_convert(flat_fun, in_avals)
    state.out_tree = store.out_tree
    _, r_lv, r_vals = _closure_convert(rule_flat, in_avals + t_avals)
    consts = _merge_lifted([(f_lv, f_vals), (r_lv, r_vals)])
    fun_c = _with_lifted_invars(f_closed, f_lv, f_vals, consts)
    state.consts, state.fun = consts, fun_c
    jvp_fwd = state.forwarder("jvp", _fun_name(flat_jvp))
    r_closed, r_lv, r_vals = _closure_convert(rule_flat, in_avals + t_avals)
    _check_no_new_consts(consts, r_vals)
    rule_c = _with_lifted_invars(r_closed, r_lv, r_vals, consts)
    state.final["jvp"] = _jvp_rule_of_jaxpr(rule_c, len(fun_c.out_avals))
    return consts + leaves, dict(fun=fun_c, jvp=jvp_fwd, num_consts=len(consts))


def _jvp_rule_of_jaxpr(rule: ClosedJaxpr, m: int) -> Callable[..., tuple[list, list]]:
    """The JVP rule ``jvp(primals, tangents) -> (outs, tangent_outs)`` that evaluates ``rule``,
    a jaxpr from ``(*primals, *tangents)`` to ``(*outs, *tangent_outs)`` (``m`` outputs)."""

    def jvp_c(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[list, list]:
        res = eval_jaxpr(rule.jaxpr, rule.consts, *primals, *tangents)
        touts = [
            Zero(tangent_aval(get_aval(o))) if getattr(t, "dtype", None) == float0 else t
            for o, t in zip(res[:m], res[m:])
        ]
        return res[:m], touts

    return jvp_c


def _check_no_new_consts(consts: list[Any], vals: list[Any]) -> None:
    known = {id(c) for c in consts}
    if any(id(v) not in known for v in vals):
        raise AssertionError("custom derivative closure conversion did not reach a fixed point")


# -- the custom_jvp_call primitive -------------------------------------------------------------

custom_jvp_call_p = Primitive("custom_jvp_call", multiple_results=True, carries_jaxprs=True)


def _custom_call_impl(*args: Any, fun: Any, num_consts: int, **_: Any) -> list[Any]:
    with set_current_trace(eval_trace):
        outs = _call(fun, args)
    # A function of Python scalars may return Python scalars; primitives return arrays.
    return [_as_array(o) if type(o) in (bool, int, float, complex) else o for o in outs]


def _as_array(x: Any) -> Any:
    a = get_aval(x)
    return xp_for_device(get_default_device()).asarray(x, dtype=a.dtype)


def _out_avals_of(fun: Any, avals: Sequence[ShapedArray]) -> list[ShapedArray]:
    if isinstance(fun, ClosedJaxpr):
        return list(fun.out_avals)
    return list(trace_to_jaxpr(fun, avals, current_trace()).out_avals)


def _custom_call_abstract(*avals: ShapedArray, fun: Any, **_: Any) -> list[ShapedArray]:
    return _out_avals_of(fun, avals)


custom_jvp_call_p.def_impl(_custom_call_impl)
custom_jvp_call_p.def_abstract_eval(_custom_call_abstract)


def _closure_tangents(
    fun: Any, primals: Sequence[Any], tangents: Sequence[Any], k: int, touts: list[Any]
) -> list[Any]:
    """Add the derivative with respect to the lifted closed-over operands (by autodiff)."""
    if not any(type(t) is not Zero for t in tangents[:k]):
        return touts
    rest = list(primals[k:])
    _, extra = jvp_flat(lambda *c: _call(fun, list(c) + rest), list(primals[:k]),
                        list(tangents[:k]))
    return [add_tangents(a, b) for a, b in zip(touts, extra)]


def _custom_jvp_call_jvp(primals, tangents, *, fun, jvp, num_consts):
    k = num_consts
    arg_t = tangents[k:]
    if all(type(t) is Zero for t in arg_t):
        outs = bind(custom_jvp_call_p, *primals, fun=fun, jvp=jvp, num_consts=k)
        touts: list[Any] = [Zero(tangent_aval(get_aval(o))) for o in outs]
    else:
        # A symbolic_zeros rule gets its zero tangents as they are (SymbolicZero to it).
        ts = (list(arg_t) if getattr(jvp, "symbolic_zeros", False)
              else [_instantiate_tangent(t) for t in arg_t])
        outs, touts = jvp(list(primals), ts)
        outs, touts = list(outs), list(touts)
    return outs, _closure_tangents(fun, primals, tangents, k, touts)


jvp_rules[custom_jvp_call_p] = _custom_jvp_call_jvp
# The user's JVP rule may select among tangents (relu6's ``select(0 < x < 6, g, 0)``): computed
# forward, ``x * relu6'(x + 3)`` at an infinite x is ``inf * 0``, where reverse mode (the eager
# tape, JAX's grad) selects the infinite cotangent away -- hard_silu's gradient at inf is 1.0,
# not nan. A linearization computing tangents forward stages from here on (linearize.py).
backward_pass_primitives.add(custom_jvp_call_p)


def _custom_jvp_call_batch(axis_size, vals, dims, *, fun, jvp, num_consts):
    n = axis_size
    vals = [moveaxis_to_front(v, d) for v, d in zip(vals, dims)]
    dims = [None if d is None else 0 for d in dims]
    arg_dims = dims[num_consts:]

    def bfun(*ops: Any) -> list[Any]:
        outs, odims = batching.batch_flat(lambda *a: _call(fun, a), list(ops), dims, n)
        return _to_front(outs, odims, n)

    def bjvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[list, list]:
        npr = len(primals)
        m_box: list[int] = []
        # Symbolic zero tangents (a symbolic_zeros rule gets them) stay symbolic: they do not
        # enter the batched call; the rule sees a Zero of the per-example aval in their place.
        live = [type(t) is not Zero for t in tangents]
        per_example = [
            None if lv else Zero(t.aval if d is None else t.aval.update(shape=t.aval.shape[1:]))
            for t, d, lv in zip(tangents, arg_dims, live)
        ]

        def flat(*pt: Any) -> list[Any]:
            it = iter(pt[npr:])
            ts = [next(it) if lv else z for lv, z in zip(live, per_example)]
            outs, touts = jvp(list(pt[:npr]), ts)
            m_box.append(len(outs))
            return list(outs) + [_instantiate_tangent(t) for t in touts]

        live_t = [t for t, lv in zip(tangents, live) if lv]
        live_d = [d for d, lv in zip(arg_dims, live) if lv]
        res, rdims = batching.batch_flat(flat, list(primals) + live_t, dims + live_d, n)
        m = m_box[0]
        outs = _to_front(res[:m], rdims[:m], n)
        touts = [
            Zero(tangent_aval(get_aval(o))) if getattr(t, "dtype", None) == float0
            else bdim_at_front(t, d, n)
            for o, t, d in zip(outs, res[m:], rdims[m:])
        ]
        return outs, touts

    bfun.__name__ = f"vmap({_fun_name(fun)})"
    bjvp.__name__ = f"vmap({_fun_name(jvp)})"
    bjvp.symbolic_zeros = getattr(jvp, "symbolic_zeros", False)  # type: ignore[attr-defined]
    outs = bind(custom_jvp_call_p, *vals, fun=bfun, jvp=bjvp, num_consts=num_consts)
    return outs, [0] * len(outs)


batching.batch_rules[custom_jvp_call_p] = _custom_jvp_call_batch


def _value_key(v: Any) -> Any:
    """``v`` (a non-differentiable argument) as part of a key: plain values by value, anything
    else by identity."""
    if type(v) in (bool, int, float, complex, str, bytes, type(None)):
        return (type(v), v)
    if type(v) is tuple:
        return (tuple, tuple(_value_key(x) for x in v))
    return ("id", id(v))


def _encode_jvp_rule(jvp: Any, enc: Encoder) -> Any:
    # The rule is a Python function: written as the jaxpr it traces to for this equation's
    # operands, (*primals, *tangents) -> (*outs, *tangent_outs), so an exported program keeps
    # its custom derivative (and differentiates again through the jaxpr).
    eqn = enc.eqn
    assert eqn is not None
    avals = [a.aval for a in eqn.invars]
    # A rule that calls its own function (JAX's usual `primal_out = f(x)`) holds an equation
    # with the same rule for the same operand types: written as a reference to the rule being
    # written (depth counted from the innermost), not traced again without end.
    stack = enc.scratch.setdefault("custom_jvp_rules", [])
    key = getattr(jvp, "export_key", None)
    key = None if key is None else (key, tuple(avals))
    if key is not None:
        for depth, outer in enumerate(reversed(stack)):
            if outer == key:
                return {"rule_ref": depth}
    if len(stack) >= _MAX_EXPORTED_RULE_DEPTH and isinstance(eqn.params["fun"], ClosedJaxpr):
        # A rule whose rule calls another custom function, and so on without end (i0e's
        # derivative is g_2, whose derivative is g_3, ...): this deep, the derivative written
        # is the one forward mode takes of the function itself.
        jvp = _autodiff_jvp_rule(eqn.params["fun"], eqn.params["num_consts"])
    stack.append(key)
    try:
        return _encode_traced_jvp_rule(jvp, enc, eqn, avals)
    finally:
        stack.pop()


#: how many custom_jvp rules deep an exported program keeps them (each written rule may hold
#: calls of custom functions whose rules are written in turn); deeper, forward mode of the
#: function is written instead. Derivatives up to this order keep every custom rule.
_MAX_EXPORTED_RULE_DEPTH = 4


def _autodiff_jvp_rule(fun: ClosedJaxpr, num_consts: int) -> Callable[..., Any]:
    """The JVP rule forward mode gives ``fun`` (its operands: ``num_consts`` constants, then
    the differentiable arguments)."""

    def rule(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[list, list]:
        consts = list(primals[:num_consts])
        return jvp_flat(lambda *xs: eval_jaxpr(fun.jaxpr, fun.consts, *consts, *xs),
                        list(primals[num_consts:]), list(tangents))

    rule.__name__ = "forward_mode"
    return rule


def _encode_traced_jvp_rule(jvp: Any, enc: Encoder, eqn: Any, avals: list) -> Any:
    n = len(avals)
    t_avals = [tangent_aval(a) for a in avals[eqn.params["num_consts"]:]]

    def rule_flat(*pt: Any) -> list[Any]:
        outs, touts = jvp(list(pt[:n]), list(pt[n:]))
        return list(outs) + [_instantiate_tangent(t) for t in touts]

    try:
        with set_current_trace(eval_trace):
            closed = trace_to_jaxpr(rule_flat, avals + t_avals, eval_trace)
    except Exception as e:
        raise ExportError(
            f"cannot export primitive 'custom_jvp_call': tracing its JVP rule "
            f"{_fun_name(jvp)} for {[a.str_short() for a in avals]} failed: {e}"
        ) from e
    if any(isinstance(c, Tracer) for c in closed.consts):
        raise ExportError("cannot export primitive 'custom_jvp_call': its JVP rule "
                          f"{_fun_name(jvp)} closes over traced values")
    return enc.closed_jaxpr(closed)


def _decode_jvp_rule(data: Any, dec: Decoder) -> Any:
    stack = dec.scratch.setdefault("custom_jvp_rules", [])
    if type(data) is dict and set(data) == {"rule_ref"}:
        depth = data["rule_ref"]
        if type(depth) is not int or not 0 <= depth < len(stack):
            raise ExportError(f"a custom_jvp_call JVP rule refers to enclosing rule {depth!r}, "
                              f"but it is inside {len(stack)}")
        cell = stack[-1 - depth]

        def jvp_ref(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[list, list]:
            return cell[0](primals, tangents)  # the enclosing rule, read once it is built

        jvp_ref.__name__ = "exported_jvp_rule"
        return jvp_ref
    cell: list[Any] = [None]
    stack.append(cell)
    try:
        rule = dec.closed_jaxpr(data)
    finally:
        stack.pop()
    m, odd = divmod(len(rule.out_avals), 2)
    if odd:
        raise ExportError("a custom_jvp_call JVP rule must have as many tangent outputs as "
                          f"outputs, got {len(rule.out_avals)} results in all")
    jvp = _jvp_rule_of_jaxpr(rule, m)
    jvp.__name__ = "exported_jvp_rule"
    cell[0] = jvp
    return jvp


register_param_codec(custom_jvp_call_p, "jvp",
                     Codec("custom_jvp_call.jvp", _encode_jvp_rule, _decode_jvp_rule))


# =============================================================================================
# custom_vjp


class custom_vjp:  # noqa: N801  (the JAX name)
    """A function with a custom reverse-mode (VJP) derivative rule.

    Give the rule with :meth:`defvjp`: ``fwd(*args) -> (out, residuals)`` runs on the forward
    pass and ``bwd(*nondiff_args, residuals, out_cotangent)`` returns a tuple with one
    cotangent per differentiable argument (``None`` for a zero one). Under ``grad``/``vjp``
    the backward pass runs ``bwd`` itself, so it may deliberately differ from the true
    derivative (gradient clipping, straight-through estimators).

    Forward mode (``jvp``, ``jacfwd``, ``hessian``) also works, unlike in JAX: the tangent is
    obtained by transposing ``bwd``, which must then be linear in the cotangent.

    Example:
        >>> import funcgrad, funcgrad.numpy as fnp
        >>> @custom_vjp
        ... def scale_grad(x):
        ...     return x
        >>> scale_grad.defvjp(lambda x: (x, None), lambda res, g: (0.5 * g,))
        >>> float(funcgrad.grad(lambda x: 3.0 * scale_grad(x))(1.0))
        1.5
    """

    __getattr__ = forward_def_attr

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int] = (),
                 nondiff_argnames: Sequence[str] = ()) -> None:
        if not callable(fun):
            raise TypeError(f"custom_vjp: expected a function, got {type(fun).__name__}")
        functools.update_wrapper(self, fun)
        self.fun = fun
        self._sig = _signature(fun)
        self._n_pos = _n_positional(self._sig)
        self.nondiff_argnums = _normalize_nondiff(
            tuple(_as_ints(nondiff_argnums))
            + _argnames_positions(self._sig, nondiff_argnames, "custom_vjp"), "custom_vjp")
        self.fwd: Callable[..., Any] | None = None
        self.bwd: Callable[..., Any] | None = None
        self.tangent_map: Callable[..., Any] | None = None
        self._symbolic_zeros = False
        self._maybe_closure = current_trace() is not eval_trace

    def defvjp(self, fwd: Callable[..., Any], bwd: Callable[..., Any],
               symbolic_zeros: bool = False, optimize_remat: bool = False, *,
               tangent_map: Callable[..., Any] | None = None) -> None:
        """Set the forward and backward passes.

        ``fwd`` takes the same arguments as the function and returns ``(out, residuals)``
        (residuals: any pytree of arrays). ``bwd(*nondiff_args, residuals, ct)`` gets the
        cotangent of the output (same structure) and returns a tuple of cotangents, one per
        differentiable argument, each shaped like it (``None`` for zeros).
        With ``symbolic_zeros=True`` (as JAX) ``fwd`` gets each argument leaf as a
        :class:`CustomVJPPrimal` ``(value, perturbed)``, and ``bwd`` gets a
        :class:`SymbolicZero` for each output whose cotangent is zero (and may return one).
        ``optimize_remat`` is accepted as JAX's (a hint to recompute ``fwd`` inside a
        ``checkpoint``); results do not depend on it.

        ``tangent_map`` (not in JAX; PyTorch's ``Function.jvp`` beside its ``backward``):
        ``tangent_map(*nondiff_args, residuals, tangents) -> output tangent``, linear in the
        tangents (a tuple, one per differentiable argument; the result structured like the
        output). Forward mode (``jvp``, ``jacfwd``, evaluating ``linearize``'s JVP) applies it instead
        of transposing ``bwd``; ``grad``/``vjp`` still run ``bwd``.

        Example:
            >>> import funcgrad
            >>> @custom_vjp
            ... def double(x):
            ...     return 2.0 * x
            >>> double.defvjp(lambda x: (double(x), None), lambda res, g: (2.0 * g,))
            >>> float(funcgrad.grad(double)(1.0))
            2.0
        """
        if not callable(fwd) or not callable(bwd):
            raise TypeError("defvjp: fwd and bwd must be functions")
        if tangent_map is not None and not callable(tangent_map):
            raise TypeError("defvjp: tangent_map must be a function (or None)")
        del optimize_remat  # a scheduling hint: the same derivatives either way
        self.fwd = fwd
        self.bwd = bwd
        self.tangent_map = tangent_map
        self._symbolic_zeros = bool(symbolic_zeros)
        if current_trace() is not eval_trace:
            self._maybe_closure = True

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        name = getattr(self, "__name__", "custom_vjp function")
        if self.fwd is None or self.bwd is None:
            raise AttributeError(
                f"no VJP rule defined for custom_vjp function {name}; define one with "
                f"{name}.defvjp(fwd, bwd)"
            )
        args = _resolve_args(self._sig, self._n_pos, args, kwargs, name)
        cur = current_trace()
        if cur is eval_trace:
            return self.fun(*args)
        nondiff, diff = _split_nondiff(args, self.nondiff_argnums, name)
        leaves, in_tree = tree_util.tree_flatten(diff)
        in_avals = [get_aval(x) for x in leaves]
        store = _Store()
        nd_idx = self.nondiff_argnums
        fun, fwd, bwd = self.fun, self.fwd, self.bwd
        tmap = self.tangent_map
        n_diff = len(diff)

        def flat_fun(*xs: Any) -> list[Any]:
            out = fun(*_merge_args(nd_idx, nondiff, tree_util.tree_unflatten(in_tree, xs)))
            out_leaves, out_tree = tree_util.tree_flatten(out)
            store.set_out(out_tree, "the output", name)
            return out_leaves

        def flat_fwd(*xs: Any) -> tuple[list, list]:
            if symbolic:
                flags = _perturbed_leaves.get()
                if flags is None or len(flags) != len(xs):  # not known here: float ones are
                    flags = [_is_inexact(a) for a in in_avals]
                xs = tuple(CustomVJPPrimal(x, bool(f)) for x, f in zip(xs, flags))
                token = _perturbed_leaves.set(None)  # not for rules called inside fwd
                try:
                    res = fwd(*_merge_args(nd_idx, nondiff, tree_util.tree_unflatten(in_tree, xs)))
                finally:
                    _perturbed_leaves.reset(token)
            else:
                res = fwd(*_merge_args(nd_idx, nondiff, tree_util.tree_unflatten(in_tree, xs)))
            if not isinstance(res, tuple | list) or len(res) != 2:
                raise TypeError(
                    f"the fwd rule of {name} must return a pair (output, residuals), got "
                    f"{type(res).__name__}"
                )
            out_leaves, out_tree = tree_util.tree_flatten(res[0])
            store.set_out(out_tree, "the output of the fwd rule", name)
            res_leaves, res_tree = tree_util.tree_flatten(res[1])
            for r in res_leaves:
                try:
                    get_aval(r)
                except TypeError:
                    raise TypeError(
                        f"the residuals returned by the fwd rule of {name} must be arrays "
                        f"(pytrees of arrays), got a {type(r).__name__}; pass static values "
                        "through nondiff_argnums or close over them instead"
                    ) from None
            store.res_tree = res_tree
            store.out_avals = [get_aval(o) for o in out_leaves]
            return out_leaves, res_leaves

        def flat_bwd(res: Sequence[Any], cts: Sequence[Any]) -> list[Any]:
            """``cts``: one per inexact output; returns one per inexact argument."""
            out_avals = store.out_avals or []
            it = iter(cts)
            full = [
                next(it) if _is_inexact(a) else numpy.zeros(a.shape, dtype=float0)
                for a in out_avals
            ]
            if symbolic:  # zero cotangents reach here only for a symbolic_zeros rule
                full = [SymbolicZero(c.aval) if type(c) is Zero else c for c in full]
            ct = tree_util.tree_unflatten(store.out_tree, full)
            r = tree_util.tree_unflatten(store.res_tree, list(res))
            got = bwd(*nondiff, r, ct)
            if not isinstance(got, tuple | list) or len(got) != n_diff:
                what = f"a {type(got).__name__}"
                if isinstance(got, tuple | list):
                    what = f"{len(got)} cotangents"
                raise TypeError(
                    f"the bwd rule of {name} must return a tuple with one cotangent per "
                    f"differentiable argument ({n_diff}), got {what}"
                )
            flat: list[Any] = []
            for j, (g, d) in enumerate(zip(got, diff)):
                n_leaves = len(tree_util.tree_leaves(d))
                if g is None:
                    flat.extend([None] * n_leaves)
                    continue
                flat.extend(_cotangent_leaves(g, d, f"the bwd rule of {name}", j))
            out = []
            for i, (g, a) in enumerate(zip(flat, in_avals)):
                if not _is_inexact(a):
                    continue
                ta = tangent_aval(a)
                if g is None or type(g) is SymbolicZero or getattr(g, "dtype", None) == float0:
                    out.append(zeros_like_aval(ta))
                else:
                    out.append(_fit(g, ta, f"cotangent {i} returned by the bwd rule of {name}"))
            return out

        def flat_tangents(res: Sequence[Any], ts: Sequence[Any]) -> list[Any]:
            """``ts``: one per inexact argument; returns one per inexact output."""
            it = iter(ts)
            full = [next(it) if _is_inexact(a) else numpy.zeros(a.shape, dtype=float0)
                    for a in in_avals]
            t = tree_util.tree_unflatten(in_tree, full)
            r = tree_util.tree_unflatten(store.res_tree, list(res))
            assert tmap is not None
            got = tmap(*nondiff, r, t)
            got_leaves, got_tree = tree_util.tree_flatten(got)
            if got_tree != store.out_tree:
                raise TypeError(
                    f"the tangent_map of {name} must return a tangent structured like the "
                    f"output {store.out_tree}, got {got_tree}")
            return [_fit(g, tangent_aval(a), f"tangent {i} returned by the tangent_map of "
                         f"{name}")
                    for i, (g, a) in enumerate(zip(got_leaves, store.out_avals or []))
                    if _is_inexact(a)]

        symbolic = self._symbolic_zeros
        flat_fun.__name__ = name
        flat_fwd.__name__ = _fun_name(fwd)
        flat_bwd.__name__ = _fun_name(bwd)
        flat_fwd.symbolic_zeros = symbolic  # type: ignore[attr-defined]
        flat_bwd.symbolic_zeros = symbolic  # type: ignore[attr-defined]
        # forward mode's rule rides on bwd (custom_lin's params stay as they are)
        flat_bwd.tangent_map = (  # type: ignore[attr-defined]
            flat_tangents if tmap is not None else None)
        state = _converting.get().get(id(self))
        if state is not None:
            return state.nested(custom_vjp_call_p, leaves, in_tree, lambda: fun(*args))
        if self._maybe_closure or _maybe_closes(nondiff):
            state = _ConvState(in_avals, in_tree)
            with _converting_as(id(self), state):
                ops, params = _convert_vjp(state, leaves, flat_fun, flat_fwd, flat_bwd, store)
            outs = bind(custom_vjp_call_p, *ops, **params)
        else:
            outs = bind(custom_vjp_call_p, *leaves, fun=flat_fun, fwd=flat_fwd, bwd=flat_bwd,
                        num_consts=0)
        return tree_util.tree_unflatten(store.out_tree, outs)


_PY_SCALARS = (bool, int, float, complex)


def _convert_vjp(
    state: _ConvState,
    leaves: list,
    flat_fun: Callable[..., Any],
    flat_fwd: Callable[..., Any],
    flat_bwd: Callable[..., Any],
    store: _Store,
) -> tuple[list[Any], dict]:
    in_avals = state.in_avals
    box: list[int] = []
    # Python scalars among the residuals (flags, counts) reach bwd as they are, as in JAX
    # (and as on the unconverted path): bwd may branch on them
    static: dict[int, Any] = {}

    def fwd_flat(*xs: Any) -> list[Any]:
        outs, res = flat_fwd(*xs)
        box.append(len(outs))
        static.clear()
        static.update((i, r) for i, r in enumerate(res) if isinstance(r, _PY_SCALARS))
        return list(outs) + list(res)

    f_closed, f_lv, f_vals = _closure_convert(flat_fun, in_avals)
    state.out_tree = store.out_tree
    w_closed, w_lv, w_vals = _closure_convert(fwd_flat, in_avals)
    m = box[0]
    res_avals = list(w_closed.out_avals[m:])
    ct_avals = [tangent_aval(a) for a in w_closed.out_avals[:m] if _is_inexact(a)]
    nr = len(res_avals)

    def bwd_flat(*rc: Any) -> list[Any]:
        res = [static.get(i, r) for i, r in enumerate(rc[:nr])]
        return flat_bwd(res, list(rc[nr:]))

    _, b_lv, b_vals = _closure_convert(bwd_flat, res_avals + ct_avals)
    tmap = getattr(flat_bwd, "tangent_map", None)
    t_avals = [tangent_aval(a) for a in in_avals if _is_inexact(a)]

    def tan_flat(*rt: Any) -> list[Any]:
        res = [static.get(i, r) for i, r in enumerate(rt[:nr])]
        return tmap(res, list(rt[nr:]))

    t_lv: list[Var] = []
    t_vals: list[Any] = []
    if tmap is not None:
        _, t_lv, t_vals = _closure_convert(tan_flat, res_avals + t_avals)
    consts = _merge_lifted([(f_lv, f_vals), (w_lv, w_vals), (b_lv, b_vals), (t_lv, t_vals)])
    k = len(consts)
    fun_c = _with_lifted_invars(f_closed, f_lv, f_vals, consts)
    state.consts, state.fun = consts, fun_c
    fwd_fwd = state.forwarder("fwd", _fun_name(flat_fwd))
    bwd_fwd = state.forwarder("bwd", _fun_name(flat_bwd))
    w_closed, w_lv, w_vals = _closure_convert(fwd_flat, in_avals)
    b_closed, b_lv, b_vals = _closure_convert(bwd_flat, res_avals + ct_avals)
    if tmap is not None:
        t_closed, t_lv, t_vals = _closure_convert(tan_flat, res_avals + t_avals)
        tan_j = _with_lifted_invars(t_closed, t_lv, t_vals, consts)

        def tan_c(res: Sequence[Any], ts: Sequence[Any]) -> list[Any]:
            res = list(res)
            return eval_jaxpr(tan_j.jaxpr, tan_j.consts, *res[nr:], *res[:nr], *ts)

        state.final["tan"] = tan_c
        bwd_fwd.tangent_map = (  # type: ignore[attr-defined]
            lambda res, ts: state.final["tan"](res, ts))
    _check_no_new_consts(consts, w_vals + b_vals + t_vals)
    fwd_j = _with_lifted_invars(w_closed, w_lv, w_vals, consts)
    bwd_j = _with_lifted_invars(b_closed, b_lv, b_vals, consts)

    def fwd_c(*ops: Any) -> tuple[list, list]:
        outs = eval_jaxpr(fwd_j.jaxpr, fwd_j.consts, *ops)
        # The lifted values travel as extra residuals so that bwd can read them.
        return outs[:m], outs[m:] + list(ops[:k])

    def bwd_c(res: Sequence[Any], cts: Sequence[Any]) -> list[Any]:
        res = list(res)
        return eval_jaxpr(bwd_j.jaxpr, bwd_j.consts, *res[nr:], *res[:nr], *cts)

    state.final["fwd"] = fwd_c
    state.final["bwd"] = bwd_c
    return consts + leaves, dict(fun=fun_c, fwd=fwd_fwd, bwd=bwd_fwd, num_consts=k)


# -- the custom_vjp_call primitive -------------------------------------------------------------

custom_vjp_call_p = Primitive("custom_vjp_call", multiple_results=True, carries_jaxprs=True)
custom_vjp_call_p.def_impl(_custom_call_impl)
custom_vjp_call_p.def_abstract_eval(_custom_call_abstract)


def _custom_vjp_call_jvp(primals, tangents, *, fun, fwd, bwd, num_consts):
    k = num_consts
    arg_p, arg_t = primals[k:], tangents[k:]
    if all(type(t) is Zero for t in arg_t):
        outs = bind(custom_vjp_call_p, *primals, fun=fun, fwd=fwd, bwd=bwd, num_consts=k)
        touts: list[Any] = [Zero(tangent_aval(get_aval(o))) for o in outs]
    else:
        if getattr(fwd, "symbolic_zeros", False):
            token = _perturbed_leaves.set([type(t) is not Zero for t in arg_t])
            try:
                outs, res = fwd(*primals)
            finally:
                _perturbed_leaves.reset(token)
        else:
            outs, res = fwd(*primals)
        outs, res = list(outs), list(res)
        in_avals = [tangent_aval(get_aval(p)) for p in arg_p]
        out_avals = [tangent_aval(get_aval(o)) for o in outs]
        ts = [instantiate(t) for t, a in zip(arg_t, in_avals) if _is_inexact(a)]
        lin_out_avals = tuple(a for a in out_avals if _is_inexact(a))
        lin = bind(
            custom_lin_p, *res, *ts, num_res=len(res), bwd=bwd,
            in_avals=tuple(a for a in in_avals if _is_inexact(a)), out_avals=lin_out_avals,
        )
        it = iter(lin)
        touts = [next(it) if _is_inexact(a) else Zero(a) for a in out_avals]
    return outs, _closure_tangents(fun, primals, tangents, k, touts)


jvp_rules[custom_vjp_call_p] = _custom_vjp_call_jvp
# grad must run the user's bwd in a backward pass, never a forward form of it (linearize).
backward_pass_primitives.add(custom_vjp_call_p)


def _summed_cotangent(c: Any, d: int | None) -> Any:
    """The cotangent of an unbatched operand from the batched one ``c`` (batch axis ``d``)."""
    if d is None or type(c) is Zero:
        return c
    a = get_aval(c)
    if a.dtype == float0:  # an integer operand's: zeros, one example's shape
        return _zeros_of(a.update(shape=a.shape[:d] + a.shape[d + 1:]))
    return reduce_sum(c, (d,))


def _custom_vjp_call_batch(axis_size, vals, dims, *, fun, fwd, bwd, num_consts):
    n = axis_size
    vals = [moveaxis_to_front(v, d) for v, d in zip(vals, dims)]
    dims = [None if d is None else 0 for d in dims]
    # bwd gives one cotangent per inexact argument (the lifted closure values come first and
    # get none)
    ct_dims = [d for v, d in zip(vals[num_consts:], dims[num_consts:])
               if _is_inexact(get_aval(v))]

    def bfun(*ops: Any) -> list[Any]:
        outs, odims = batching.batch_flat(lambda *a: _call(fun, a), list(ops), dims, n)
        return _to_front(outs, odims, n)

    def bfwd(*ops: Any) -> tuple[list, list]:
        m_box: list[int] = []

        def flat(*a: Any) -> list[Any]:
            outs, res = fwd(*a)
            m_box.append(len(outs))
            return list(outs) + list(res)

        res, rdims = batching.batch_flat(flat, list(ops), dims, n)
        res = _to_front(res, rdims, n)
        m = m_box[0]
        return res[:m], res[m:]

    def bbwd(res: Sequence[Any], cts: Sequence[Any]) -> list[Any]:
        nr = len(res)
        # Symbolic zero cotangents (a symbolic_zeros bwd gets them) stay out of the batched
        # call; bwd sees a Zero of the per-example aval in their place.
        live = [type(c) is not Zero for c in cts]
        per_example = [None if lv else Zero(c.aval.update(shape=c.aval.shape[1:]))
                       for c, lv in zip(cts, live)]

        def flat(*rc: Any) -> list[Any]:
            it = iter(rc[nr:])
            return bwd(list(rc[:nr]), [next(it) if lv else z for lv, z in zip(live, per_example)])

        live_cts = [c for c, lv in zip(cts, live) if lv]
        outs, odims = batching.batch_flat(flat, list(res) + live_cts,
                                          [0] * (nr + len(live_cts)), n)
        # An operand the call keeps unbatched (a closed-over or in_axes=None value) gets the
        # sum of its examples' cotangents (JAX's batch_custom_vjp_bwd), not all of them.
        return [bdim_at_front(o, od, n) if d is not None else _summed_cotangent(o, od)
                for o, od, d in zip(outs, odims, ct_dims)]

    bfun.__name__ = f"vmap({_fun_name(fun)})"
    bfwd.__name__ = f"vmap({_fun_name(fwd)})"
    bbwd.__name__ = f"vmap({_fun_name(bwd)})"
    # A symbolic_zeros rule keeps its perturbed flags and symbolic zero cotangents under vmap.
    bfwd.symbolic_zeros = getattr(fwd, "symbolic_zeros", False)  # type: ignore[attr-defined]
    bbwd.symbolic_zeros = getattr(bwd, "symbolic_zeros", False)  # type: ignore[attr-defined]
    outs = bind(custom_vjp_call_p, *vals, fun=bfun, fwd=bfwd, bwd=bbwd, num_consts=num_consts)
    return outs, [0] * len(outs)


batching.batch_rules[custom_vjp_call_p] = _custom_vjp_call_batch


# Exported files (funcgrad.export) hold fwd and bwd as the jaxprs they trace to for this
# equation's operands: fwd (*operands) -> (*outs, *residuals), bwd (*residuals, *cts) -> cts.


def _trace_rule(rule: Callable[..., list[Any]], avals: list[ShapedArray], what: str,
                name: str) -> ClosedJaxpr:
    try:
        with set_current_trace(eval_trace):
            closed = trace_to_jaxpr(rule, avals, eval_trace)
    except Exception as e:
        raise ExportError(
            f"cannot export primitive '{what}': tracing its rule {name} for "
            f"{[a.str_short() for a in avals]} failed: {e}"
        ) from e
    if any(isinstance(c, Tracer) for c in closed.consts):
        raise ExportError(f"cannot export primitive '{what}': its rule {name} closes over "
                          "traced values")
    return closed


def _traced_fwd(eqn: Any) -> ClosedJaxpr:
    fwd = eqn.params["fwd"]

    def fwd_flat(*xs: Any) -> list[Any]:
        outs, res = fwd(*xs)
        return list(outs) + list(res)

    return _trace_rule(fwd_flat, [a.aval for a in eqn.invars], eqn.prim.name, _fun_name(fwd))


def _encode_fwd_rule(fwd: Any, enc: Encoder) -> Any:
    closed = _traced_fwd(enc.eqn)
    return {"m": len(enc.eqn.outvars), "rule": enc.closed_jaxpr(closed)}  # type: ignore[union-attr]


def _decode_fwd_rule(data: Any, dec: Decoder) -> Any:
    rule, m = dec.closed_jaxpr(data["rule"]), int(data["m"])

    def exported_fwd_rule(*ops: Any) -> tuple[list, list]:
        outs = eval_jaxpr(rule.jaxpr, rule.consts, *ops)
        return outs[:m], outs[m:]

    return exported_fwd_rule


def _encode_bwd(bwd: Any, res_avals: list[ShapedArray], ct_avals: list[ShapedArray],
                what: str, enc: Encoder, t_avals: list[ShapedArray]) -> Any:
    """bwd as a closed jaxpr over (residuals, cotangents); a ``tangent_map`` riding on it
    (forward mode's own rule) goes along under the entry's ``tangent_map`` key, over
    (residuals, tangents of the inexact arguments ``t_avals``)."""
    nr = len(res_avals)

    def bwd_flat(*rc: Any) -> list[Any]:
        return [_instantiate_tangent(c) for c in bwd(list(rc[:nr]), list(rc[nr:]))]

    closed = _trace_rule(bwd_flat, res_avals + ct_avals, what, _fun_name(bwd))
    data = enc.closed_jaxpr(closed)
    tmap = getattr(bwd, "tangent_map", None)
    if tmap is not None:
        def tan_flat(*rt: Any) -> list[Any]:
            return [_instantiate_tangent(t) for t in tmap(list(rt[:nr]), list(rt[nr:]))]

        data["tangent_map"] = enc.closed_jaxpr(
            _trace_rule(tan_flat, res_avals + t_avals, what, _fun_name(bwd) + ".tangent_map"))
    return data


def _encode_vjp_bwd_rule(bwd: Any, enc: Encoder) -> Any:
    eqn = enc.eqn
    assert eqn is not None
    m = len(eqn.outvars)
    res_avals = list(_traced_fwd(eqn).out_avals[m:])
    ct_avals = [tangent_aval(v.aval) for v in eqn.outvars if _is_inexact(v.aval)]
    t_avals = [tangent_aval(v.aval) for v in eqn.invars[eqn.params["num_consts"]:]
               if _is_inexact(v.aval)]
    return _encode_bwd(bwd, res_avals, ct_avals, eqn.prim.name, enc, t_avals)


def _encode_lin_bwd_rule(bwd: Any, enc: Encoder) -> Any:
    eqn = enc.eqn
    assert eqn is not None
    res_avals = [a.aval for a in eqn.invars[:eqn.params["num_res"]]]
    return _encode_bwd(bwd, res_avals, list(eqn.params["out_avals"]), eqn.prim.name, enc,
                       list(eqn.params["in_avals"]))


def _decode_bwd_rule(data: Any, dec: Decoder) -> Any:
    rule = dec.closed_jaxpr(data)

    def exported_bwd_rule(res: Sequence[Any], cts: Sequence[Any]) -> list[Any]:
        return eval_jaxpr(rule.jaxpr, rule.consts, *res, *cts)

    exported_bwd_rule.tangent_map = None  # type: ignore[attr-defined]
    if type(data) is dict and "tangent_map" in data:
        tm = dec.closed_jaxpr(data["tangent_map"])

        def exported_tangent_map(res: Sequence[Any], ts: Sequence[Any]) -> list[Any]:
            return eval_jaxpr(tm.jaxpr, tm.consts, *res, *ts)

        exported_bwd_rule.tangent_map = exported_tangent_map  # type: ignore[attr-defined]
    return exported_bwd_rule


register_param_codec(custom_vjp_call_p, "fwd",
                     Codec("custom_vjp_call.fwd", _encode_fwd_rule, _decode_fwd_rule))
register_param_codec(custom_vjp_call_p, "bwd",
                     Codec("custom_vjp_call.bwd", _encode_vjp_bwd_rule, _decode_bwd_rule))


# -- custom_lin: the tangent map of a custom_vjp function, whose transpose is bwd ------------

custom_lin_p = Primitive("custom_lin", multiple_results=True, carries_jaxprs=True)


def _lin_forward(
    res: Sequence[Any], ts: Sequence[Any], bwd: Callable[..., Any], in_avals: tuple,
    out_avals: tuple,
) -> list[Any]:
    """The tangent map itself: the user's ``tangent_map`` when given, else the transpose of
    ``ct -> bwd(res, ct)`` applied to ``ts``."""
    res = list(res)
    tmap = getattr(bwd, "tangent_map", None)
    if tmap is not None:
        return [_instantiate_tangent(t) for t in tmap(res, list(ts))]

    def lin(*cts: Any) -> list[Any]:
        return list(bwd(res, list(cts)))

    closed = trace_to_jaxpr(lin, list(out_avals), current_trace())
    try:
        cts = backward_pass(
            closed.jaxpr, closed.consts, [UndefinedPrimal(a) for a in out_avals], list(ts)
        )
    except (MissingRuleError, ValueError) as e:
        raise type(e)(
            f"forward-mode differentiation of a custom_vjp function (jvp, jacfwd, hessian, or "
            f"evaluating linearize's JVP) transposes its bwd rule {_fun_name(bwd)}, so bwd must "
            f"be linear in the cotangent; transposing it failed: {e}"
        ) from e
    return [_instantiate_tangent(c) for c in cts]


def _custom_lin_impl(*args: Any, num_res: int, bwd: Any, in_avals: tuple, out_avals: tuple):
    return _lin_forward(args[:num_res], args[num_res:], bwd, in_avals, out_avals)


def _custom_lin_abstract(*avals: ShapedArray, num_res, bwd, in_avals, out_avals):
    return list(out_avals)


custom_lin_p.def_impl(_custom_lin_impl)
custom_lin_p.def_abstract_eval(_custom_lin_abstract)


def _custom_lin_transpose(cts, *args, num_res, bwd, in_avals, out_avals):
    res = list(args[:num_res])
    if not getattr(bwd, "symbolic_zeros", False):  # a symbolic_zeros bwd takes them as they are
        cts = [_instantiate_tangent(c) if type(c) is Zero else c for c in cts]
    arg_cts = bwd(res, cts)
    return [None] * num_res + list(arg_cts)


deftranspose(custom_lin_p, _custom_lin_transpose)


def _custom_lin_jvp(primals, tangents, *, num_res, bwd, in_avals, out_avals):
    def f(*ops: Any) -> list[Any]:
        return _lin_forward(ops[:num_res], ops[num_res:], bwd, in_avals, out_avals)

    return jvp_flat(f, list(primals), list(tangents))


jvp_rules[custom_lin_p] = _custom_lin_jvp


def _custom_lin_batch(axis_size, vals, dims, *, num_res, bwd, in_avals, out_avals):
    def f(*ops: Any) -> list[Any]:
        return _lin_forward(ops[:num_res], ops[num_res:], bwd, in_avals, out_avals)

    return batching.batch_flat(f, list(vals), list(dims), axis_size)


batching.batch_rules[custom_lin_p] = _custom_lin_batch
register_param_codec(custom_lin_p, "bwd",
                     Codec("custom_lin.bwd", _encode_lin_bwd_rule, _decode_bwd_rule))


# ---------------------------------------------------------------------------------------------
# linear_call_p: a function linear in its last operands with a user's transpose
# (jax.custom_derivatives.linear_call). Operands (*residuals, *linear); ``fun`` and
# ``transpose`` are flat callables: fun(*res, *lin) -> outs, transpose(*res, *cts) -> lin cts.
# Forward mode applies fun to the tangents (it is linear); the transpose applies ``transpose``
# -- as a linear_call with the two swapped, so transposing twice gives fun back, as JAX's.

linear_call_p = Primitive("linear_call", multiple_results=True, carries_jaxprs=True)


def _linear_call_impl(*args: Any, fun: Any, transpose: Any, num_res: int, out_avals: tuple,
                      lin_avals: tuple) -> list[Any]:
    with set_current_trace(eval_trace):
        outs = _call(fun, args)
    return [_as_array(o) if type(o) in (bool, int, float, complex) else o for o in outs]


def _linear_call_abstract(*avals: ShapedArray, fun, transpose, num_res, out_avals, lin_avals):
    return list(out_avals)


linear_call_p.def_impl(_linear_call_impl)
linear_call_p.def_abstract_eval(_linear_call_abstract)


def _linear_call_jvp(primals, tangents, *, fun, transpose, num_res, out_avals, lin_avals):
    params = dict(fun=fun, transpose=transpose, num_res=num_res, out_avals=out_avals,
                  lin_avals=lin_avals)
    if any(type(t) is not Zero for t in tangents[:num_res]):
        raise ValueError(
            f"linear_call of {_fun_name(fun)}: residual_args cannot be differentiated (the "
            "function is linear in linear_args only, and its transpose says nothing about the "
            "residuals); pass what is differentiated as linear_args, or stop_gradient it")
    outs = bind(linear_call_p, *primals, **params)
    if all(type(t) is Zero for t in tangents[num_res:]):
        return outs, [Zero(tangent_aval(a)) for a in out_avals]
    ts = [_instantiate_tangent(t) for t in tangents[num_res:]]
    return outs, bind(linear_call_p, *primals[:num_res], *ts, **params)


jvp_rules[linear_call_p] = _linear_call_jvp
# grad runs the user's transpose in a backward pass (never forward tangents through fun)
backward_pass_primitives.add(linear_call_p)


def _linear_call_transpose(cts, *args, fun, transpose, num_res, out_avals, lin_avals):
    if any(is_undefined(a) for a in args[:num_res]):
        raise ValueError(f"linear_call of {_fun_name(fun)}: residual_args cannot be "
                         "transposed; only linear_args are linear")
    cts = [_instantiate_tangent(c) if type(c) is Zero else c for c in cts]
    lin_cts = bind(linear_call_p, *args[:num_res], *cts, fun=transpose, transpose=fun,
                   num_res=num_res, out_avals=lin_avals, lin_avals=out_avals)
    return [None] * num_res + list(lin_cts)


deftranspose(linear_call_p, _linear_call_transpose)


def _linear_call_batch(axis_size, vals, dims, *, fun, transpose, num_res, out_avals,
                       lin_avals):
    # every operand batched at the front: the batched transpose then meets cotangents of
    # the batched linear operands' own shape
    n = axis_size
    vals = [bdim_at_front(v, d, n) for v, d in zip(vals, dims)]

    def batched(f: Any) -> Any:
        def bf(*ops: Any) -> list[Any]:
            outs, odims = batching.batch_flat(lambda *a: _call(f, a), list(ops),
                                              [0] * len(ops), n)
            return _to_front(outs, odims, n)

        bf.__name__ = f"vmap({_fun_name(f)})"
        return bf

    def with_batch(a: ShapedArray) -> ShapedArray:
        return a.update(shape=(n, *a.shape))

    outs = bind(linear_call_p, *vals, fun=batched(fun), transpose=batched(transpose),
                num_res=num_res, out_avals=tuple(with_batch(a) for a in out_avals),
                lin_avals=tuple(with_batch(a) for a in lin_avals))
    return outs, [0] * len(outs)


batching.batch_rules[linear_call_p] = _linear_call_batch


# Exported files hold both functions as the jaxprs they trace to: fun over the operands,
# transpose over the residuals and the outputs' cotangents.


def _linear_call_codec(which: str) -> Codec:
    def encode(f: Any, enc: Encoder) -> Any:
        eqn = enc.eqn
        assert eqn is not None
        nr = eqn.params["num_res"]
        res = [a.aval for a in eqn.invars[:nr]]
        second = eqn.params["lin_avals" if which == "fun" else "out_avals"]
        closed = _trace_rule(lambda *ops: list(f(*ops)), res + list(second), eqn.prim.name,
                             _fun_name(f))
        return enc.closed_jaxpr(closed)

    def decode(data: Any, dec: Decoder) -> Any:
        rule = dec.closed_jaxpr(data)

        def exported_linear_call_function(*ops: Any) -> list[Any]:
            return eval_jaxpr(rule.jaxpr, rule.consts, *ops)

        return exported_linear_call_function

    return Codec(f"linear_call.{which}", encode, decode)


register_param_codec(linear_call_p, "fun", _linear_call_codec("fun"))
register_param_codec(linear_call_p, "transpose", _linear_call_codec("transpose"))


# =============================================================================================
# Staging: record the traced jaxpr of the function (not a Python callable), lifting traced
# values it closes over into operands, so the staged equation is self-contained.


def _stage_custom_call(trace: StagingTrace, args: Sequence[Any], params: dict):
    fun = params["fun"]
    if isinstance(fun, ClosedJaxpr):
        return args, params
    closed, lv, vals = _closure_convert(
        lambda *xs: _call(fun, xs), [get_aval(a) for a in args]
    )
    if not vals:
        return args, dict(params, fun=closed)
    fun_c = _with_lifted_invars(closed, lv, vals, vals)
    k = len(vals)
    new = dict(params, fun=fun_c, num_consts=params["num_consts"] + k)
    if "jvp" in params:
        jvp = params["jvp"]

        def jvp_s(primals: Sequence[Any], tangents: Sequence[Any]) -> Any:
            return jvp(list(primals)[k:], tangents)

        jvp_s.__name__ = _fun_name(jvp)
        new["jvp"] = jvp_s
    elif "fwd" in params:
        fwd = params["fwd"]

        def fwd_s(*ops: Any) -> Any:
            return fwd(*ops[k:])

        fwd_s.__name__ = _fun_name(fwd)
        new["fwd"] = fwd_s
    return list(vals) + list(args), new


staging_rewrites[custom_jvp_call_p] = _stage_custom_call
staging_rewrites[custom_vjp_call_p] = _stage_custom_call
# A staged call holds its function as a jaxpr: compiled code inlines it (the custom rules are
# for differentiation, which is done before compiling), instead of interpreting it per call.
_compile.inline_primitives[custom_jvp_call_p] = "fun"
_compile.inline_primitives[custom_vjp_call_p] = "fun"


def _partial_eval_custom_call(trace: PartialEvalTrace, args: Sequence[Any], params: dict):
    """A custom function applied to tangents inside a linear (tangent) computation: inline it.

    The linear jaxpr is only evaluated or transposed, which its operations support one by one;
    staging the call whole would need a transpose rule for it and would stage the primal work
    done on known operands.
    """
    with set_current_trace(trace):
        return _call(params["fun"], list(args))


partial_eval_rules[custom_jvp_call_p] = _partial_eval_custom_call
partial_eval_rules[custom_vjp_call_p] = _partial_eval_custom_call
