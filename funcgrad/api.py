"""User-facing transformations: pytree flattening, argnums, has_aux, then the *_flat cores.

Differentiation API (JAX-style, functional): ``jvp``, ``linearize``, ``vjp``,
``linear_transpose``, ``grad``, ``value_and_grad``, ``jacfwd``, ``jacrev``, ``jacobian``,
``hessian``, ``hvp``, ``vhp``, ``elementwise_grad``; plus ``make_jaxpr``.

Complex numbers follow JAX's convention (see docs/autodiff.md): ``jvp`` computes the full
real-linear derivative, and reverse mode transposes it without conjugation, so for a real-valued
``f`` of a complex ``z = x + iy``, ``grad(f)(z) == df/dx - i df/dy`` (the conjugate of the
direction of steepest ascent); for holomorphic ``f``, ``grad(f, holomorphic=True)(z) == f'(z)``.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy

from funcgrad import backend, config, stages
from funcgrad.api_jit import check_tracing_allowed, int_overflow, jit
from funcgrad.api_vmap import vmap_basis
from funcgrad.avals import ShapedArray, ShapeDtypeStruct, expand_stand_in, float0, get_aval
from funcgrad.core import Tracer, _trace_var, current_trace, extend_axis_env
from funcgrad.errors import ArgumentMismatchError, FuncgradError, MissingRuleError
from funcgrad.interpreters import batching
from funcgrad.interpreters.eager_vjp import records, vjp_tape
from funcgrad.interpreters.jvp import Zero, jvp_flat, tangent_aval, zeros_like_aval
from funcgrad.interpreters.linearize import (
    LinearizeResult,
    eval_linear,
    linearize_flat,
    linearize_observer,
)
from funcgrad.interpreters.staging import staging_below, trace_to_jaxpr
from funcgrad.interpreters.transpose import (
    UndefinedPrimal,
    backward_pass,
    forward_gradient,
    transpose_linearized,
    transpose_observer,
)
from funcgrad.ir import ClosedJaxpr, eval_jaxpr
from funcgrad.ops import elementwise as _ew
from funcgrad.ops import shape as _shape
from funcgrad.ops.collectives import checked_vma_axes, vma_cotangents
from funcgrad.tree_util import transforms as tree_util  # keys are nodes here

__all__ = [
    "typeof",
    "make_jaxpr",
    "closure_convert",
    "jvp",
    "linearize",
    "vjp",
    "fwd_and_bwd",
    "linear_transpose",
    "grad",
    "value_and_grad",
    "jacfwd",
    "jacrev",
    "jacobian",
    "hessian",
    "hvp",
    "vhp",
    "elementwise_grad",
]


# ---------------------------------------------------------------------------------------------
# Flattening helpers


def _flatten_fun(f: Callable[..., Any], in_tree: Any, out_store: list,
                 fname: str = "make_jaxpr") -> Callable[..., list]:
    """A flat function over leaves; records the output treedef into ``out_store``."""

    def flat(*leaves: Any) -> list[Any]:
        args = tree_util.tree_unflatten(in_tree, list(leaves))
        out = f(*args)
        out_leaves, out_tree = tree_util.tree_flatten(out)
        for leaf in out_leaves:
            if not isinstance(leaf, Tracer):
                _check_output_leaf(leaf, out, fname)
        out_store.append(out_tree)
        return out_leaves

    return flat


def _is_inexact(a: ShapedArray) -> bool:
    return a.dtype.kind in "fc"


def _leaf_kind(leaf: Any) -> str:
    """The dtype kind of an argument leaf; an array's own dtype when it has one (cheaper than
    building its aval)."""
    dt = getattr(leaf, "dtype", None)
    return (dt if isinstance(dt, numpy.dtype) else get_aval(leaf).dtype).kind


def _materialize_tangent(t: Any) -> Any:
    """A concrete array for a (co)tangent that may be a symbolic Zero (float0 for integers)."""
    if type(t) is Zero:
        if t.aval.dtype == float0:
            return numpy.zeros(t.aval.shape, float0)
        return zeros_like_aval(t.aval)
    if isinstance(t, numpy.generic):
        # NumPy hands back scalars for 0-d arithmetic; results are arrays (on the host, where
        # NumPy scalars live).
        return numpy.asarray(t)
    return t


def _is_weak_scalar(x: Any) -> bool:
    return type(x) in (int, float, complex)


def _check_tangent(
    primal_aval: ShapedArray, t: Any, what: str, expected: str = "primal",
    where: Callable[[], str] | None = None,
) -> Any:
    """``t`` as a tangent of a value of ``primal_aval``: Zero for integer values, dtype-checked.

    As JAX's check: the tangent's dtype must be the primal's tangent dtype exactly (a float
    primal's own dtype; ``float0`` for integer and bool primals). A Python scalar counts with
    its default dtype (``1.0`` is float64, ``1`` int64), so it fits float64 primals only, as
    in JAX with x64 on (funcgrad always computes in NumPy's dtypes). ``None`` stands for a
    zero tangent; integer outputs take any cotangent. ``where()`` names the offending leaf
    (e.g. ``tangents[1]['b']``) in error messages; it is only called on error, as key paths
    cost a flatten.
    """
    ta = tangent_aval(primal_aval)
    if t is None or (expected == "output" and ta.dtype == float0):
        # JAX's pullbacks take any cotangent of an integer output (it is not differentiated).
        return Zero(ta)
    a = get_aval(t)
    if a.dtype != ta.dtype:
        raise ArgumentMismatchError(_tangent_mismatch(primal_aval, ta, a, what, expected, where))
    if a.shape != ta.shape:
        loc = f" ({where()})" if where is not None else ""
        raise ArgumentMismatchError(
            f"{what}: {expected} and tangent shapes must match, got {expected} "
            f"{primal_aval.str_short()} and tangent {a.str_short()}{loc}"
        )
    if ta.dtype == float0:
        return Zero(ta)
    if _is_weak_scalar(t):
        # A Python scalar would otherwise come back as is (identity functions, pass-through
        # outputs) where an array is expected.
        return _xp_for_aval(ta).asarray(t, dtype=ta.dtype)
    return t


def _tangent_mismatch(primal_aval: ShapedArray, ta: ShapedArray, a: ShapedArray, what: str,
                      expected: str, where: Callable[[], str] | None) -> str:
    """The message for a (co)tangent of the wrong dtype, in the words JAX uses for ``what``."""
    loc = f" ({where()})" if where is not None else ""
    if ta.dtype == float0:
        fix = ("pass numpy.zeros(shape, funcgrad.float0) (or None): integer and bool values "
               "are not differentiated")
    elif a.dtype == float0:
        fix = (f"float0 is the tangent type of integer and bool values only; pass zeros of "
               f"dtype {ta.dtype} (or None) for a zero tangent")
    else:
        fix = f"cast it (e.g. t.astype({ta.dtype.name}))"
    if what == "jvp":
        return (
            "primal and tangent arguments to jvp do not match; dtypes must be equal, or in "
            "case of int/bool primal dtype the tangent dtype must be float0. Got primal dtype "
            f"{primal_aval.dtype} and so expected tangent dtype {ta.dtype}, but got tangent "
            f"dtype {a.dtype} instead{loc}; {fix}"
        )
    if what == "linearize":
        return (
            "linearized function called on tangent values inconsistent with the original "
            f"primal values: got tangent aval {a.str_short()} for primal aval "
            f"{primal_aval.str_short()} but expected {ta.str_short()}{loc}; {fix}"
        )
    return (
        f"{what}: the tangent of a {primal_aval.str_short()} {expected} must have dtype "
        f"{ta.dtype}, got {a.dtype}{loc}; {fix}"
    )


def _leaf_where(tree: Any, i: int, name: str) -> Callable[[], str]:
    """A thunk naming leaf ``i`` of ``tree`` as ``name[...]`` (for error messages)."""

    def where() -> str:
        paths = [p for p, _ in tree_util.tree_flatten_with_path(tree)[0]]
        return name + tree_util.keystr(paths[i]) if i < len(paths) else name

    return where


def _as_array_out(x: Any) -> Any:
    """A primal output leaf as an array: Python and NumPy scalars (a function returning a
    constant, or its input unchanged) become 0-d arrays, as ``jit`` returns them."""
    if type(x) in (int, float, complex, bool):
        return _xp_for_aval(get_aval(x)).asarray(x)
    if isinstance(x, numpy.generic):
        return numpy.asarray(x)
    return x


def _convert(x: Any, dtype: Any) -> Any:
    return _ew.convert_element_type(x, dtype)


def _xp_for_aval(a: ShapedArray) -> Any:
    return backend.xp_for_device(a.device or backend.get_default_device())


def _flatten_like(treedef: Any, tree: Any, what: str, whose: str, like: str) -> list[Any]:
    """Leaves of (co)tangents ``tree`` at the leaf positions of ``treedef`` (None = zero).

    ``None`` may stand for a whole leaf; ``None`` nodes of ``treedef`` (a primal or output
    that is None) are matched by ``None``.
    """
    leaves, t_tree = tree_util.tree_flatten(tree, is_leaf=lambda x: x is None)
    if t_tree == treedef:
        return leaves
    try:
        leaves = treedef.flatten_up_to(tree)
    except ValueError as e:
        raise ArgumentMismatchError(
            f"{what}: the {whose} must be structured like the {like} {treedef}, got "
            f"{t_tree} ({e})"
        ) from None
    for leaf in leaves:
        # A container where an array belongs (a tuple for a bare array output) matched the
        # prefix but is no (co)tangent: the structures differ, as JAX says.
        if leaf is not None and not tree_util.treedef_is_leaf(tree_util.tree_structure(leaf)):
            raise ArgumentMismatchError(
                f"{what}: the {whose} must be structured like the {like} {treedef}, got "
                f"{t_tree}"
            )
    return leaves


def _check_integer_cotangent(a: ShapedArray, c: Any) -> Any:
    """The cotangent ``c`` of an integer output ``a`` of a linear integer function: of its
    shape and dtype (a Python int adopts it), as JAX checks."""
    if c is None:
        return Zero(a)
    ca = get_aval(c)
    if type(c) is int:
        ca = ca.update(dtype=a.dtype)
        xp = backend.xp_for_device(a.device or backend.get_default_device())
        c = xp.asarray(c, dtype=a.dtype)
    if ca.shape != a.shape or ca.dtype != a.dtype:
        raise ArgumentMismatchError(
            f"linear_transpose: cotangent type does not match the function output: expected "
            f"{a.str_short()}, got {ca.str_short()}"
        )
    return c


def _check_no_reduce_axes(reduce_axes: Any, fname: str) -> None:
    # JAX keeps the parameter for compatibility and refuses any axis (the feature is gone).
    if reduce_axes:
        raise NotImplementedError(f"reduce_axes argument to {fname} is deprecated")


def _argnums_tuple(argnums: int | Sequence[int], fname: str) -> tuple[int, ...]:
    if isinstance(argnums, int | numpy.integer) and not isinstance(argnums, bool):
        return (int(argnums),)
    try:
        t = tuple(argnums)
    except TypeError:
        raise TypeError(
            f"{fname}: argnums must be an int or a tuple of ints, got {type(argnums).__name__}"
        ) from None
    if not t:
        raise ValueError(f"{fname}: argnums is empty; give at least one argument to "
                         "differentiate with respect to")
    for i in t:
        if not isinstance(i, int | numpy.integer) or isinstance(i, bool):
            raise TypeError(f"{fname}: argnums must contain ints, got {i!r}")
    return tuple(int(i) for i in t)


def _resolve_argnums(argnums_t: tuple[int, ...], nargs: int, fname: str) -> tuple[int, ...]:
    out = []
    for i in argnums_t:
        if not -nargs <= i < nargs:
            # JAX raises TypeError (grad) or ValueError (jacfwd/jacrev): this is both.
            raise ArgumentMismatchError(
                f"{fname}: argnums={argnums_t if len(argnums_t) > 1 else argnums_t[0]} but the "
                f"function was called with {nargs} positional argument"
                f"{'s' if nargs != 1 else ''} (differentiated arguments must be positional)"
            )
        out.append(i % nargs)
    if len(set(out)) != len(out):
        raise ValueError(f"{fname}: argnums {argnums_t} refers to the same argument twice")
    return tuple(out)


def _partial(fun: Callable[..., Any], args: tuple, kwargs: dict, idx: tuple[int, ...]):
    """``fun`` as a function of the arguments at ``idx`` only (the others fixed)."""
    if not kwargs and idx == tuple(range(len(args))):
        # All of them, in order (grad of a one-argument function): ``fun`` itself, one Python
        # frame less per nesting level under nested grad.
        return fun

    def f(*dyn: Any) -> Any:
        full = list(args)
        for i, v in zip(idx, dyn):
            full[i] = v
        return fun(*full, **kwargs)

    return f


def _describe_value(x: Any) -> str:
    if isinstance(x, Tracer):
        return f"an array ({x.aval.str_short()})"
    if isinstance(x, tuple | list):
        return f"a {type(x).__name__} of length {len(x)}"
    return f"a {type(x).__name__}"


def _input_aval(leaf: Any, fname: str, where: str) -> ShapedArray:
    """The abstract value of an input leaf; a clear error naming ``fname`` and ``where`` (the
    argument) for a leaf that is not an array or a number."""
    try:
        return get_aval(leaf)
    except FuncgradError:
        raise  # an array of an unsupported dtype: its own DTypeError
    except TypeError:
        raise TypeError(
            f"{fname}: {where} is {_describe_value(leaf)}, not an array or a number"
        ) from None


def _input_avals(args: tuple, fname: str, what: str = "argument") -> list[ShapedArray]:
    """:func:`_input_aval` of every leaf of ``args`` (one entry per argument), each named
    ``argument 0['w']`` (or ``primals[0]['w']`` for ``what="primals"``)."""
    try:  # the common case; leaf paths are built only to name an offending leaf
        return [get_aval(leaf) for leaf in tree_util.tree_leaves(args)]
    except FuncgradError:
        raise
    except TypeError:
        pass
    out = []
    for path, leaf in tree_util.tree_flatten_with_path(args)[0]:
        where = (f"argument {path[0].idx}{tree_util.keystr(path[1:])}" if what == "argument"
                 else f"{what}{tree_util.keystr(path)}")
        out.append(_input_aval(leaf, fname, where))
    return out


def _check_output_leaf(leaf: Any, out: Any, fname: str) -> None:
    try:
        get_aval(leaf)
    except FuncgradError:
        raise
    except TypeError:
        where = next((tree_util.keystr(p) for p, v in tree_util.tree_flatten_with_path(out)[0]
                      if v is leaf), "")
        raise TypeError(
            f"{fname}: the function's output{where} is {_describe_value(leaf)}, not an array "
            "or a number; return arrays (or pytrees of them)"
        ) from None


def _check_callable(fun: Any, fname: str) -> None:
    if not callable(fun):
        raise TypeError(f"{fname}: expected a function to transform, got {type(fun).__name__}")


class _AuxFlat:
    """A flat version of ``fun`` whose traced auxiliary outputs travel as extra outputs.

    With ``has_aux``, ``fun`` returns ``(out, aux)``. The flat function returns the leaves of
    ``out`` followed by the leaves of ``aux`` that are tracers, so the transformation hands
    them back as plain values of the caller's level (never as its own tracers); the other aux
    leaves (Python values, constants) are kept as they are.
    """

    def __init__(self, fun: Callable[..., Any], in_tree: Any, has_aux: bool, fname: str):
        self.fun, self.in_tree, self.has_aux, self.fname = fun, in_tree, has_aux, fname
        self.out_tree: Any = None
        self.n_out = 0
        self.aux_tree: Any = None
        self.aux_leaves: list[Any] = []
        self.aux_traced: list[int] = []

    def __call__(self, *leaves: Any) -> list[Any]:
        out = self.fun(*tree_util.tree_unflatten(self.in_tree, list(leaves)))
        aux_out: list[Any] = []
        if self.has_aux:
            if not isinstance(out, tuple | list) or len(out) != 2:
                raise TypeError(
                    f"{self.fname}: has_aux=True requires the function to return a pair "
                    f"(output, aux), got {_describe_value(out)}"
                )
            out, aux = out
            self.aux_leaves, self.aux_tree = tree_util.tree_flatten(aux)
            self.aux_traced = [i for i, x in enumerate(self.aux_leaves) if isinstance(x, Tracer)]
            aux_out = [self.aux_leaves[i] for i in self.aux_traced]
        out_leaves, self.out_tree = tree_util.tree_flatten(out)
        for leaf in out_leaves:
            if not isinstance(leaf, Tracer):
                _check_output_leaf(leaf, out, self.fname)
        self.n_out = len(out_leaves)
        return out_leaves + aux_out

    def aux(self, outs: Sequence[Any]) -> Any:
        """The aux pytree, given all outputs of the transformed flat function."""
        leaves = list(self.aux_leaves)
        for i, v in zip(self.aux_traced, outs[self.n_out:]):
            # a traced aux value is an array, as JAX's (the primal of a Python-scalar input,
            # x * 2 of x = 1.0, is a Python float); untraced aux leaves stay as they are
            leaves[i] = _as_array_out(v)
        return tree_util.tree_unflatten(self.aux_tree, leaves)


# ---------------------------------------------------------------------------------------------
# make_jaxpr


def _all_array_leaves(x: Any) -> bool:
    for leaf in tree_util.tree_leaves(x):
        try:
            get_aval(leaf)
        except TypeError:
            return False
    return True


def _stand_in_leaf(x: Any) -> Any:
    """A :class:`ShapedArray` given as an example argument, as a traceable stand-in."""
    return ShapeDtypeStruct.from_aval(x) if isinstance(x, ShapedArray) else expand_stand_in(x)


def make_jaxpr(
    fun: Callable[..., Any], static_argnums: int | Sequence[int] = (),
    axis_env: Sequence[tuple[Any, int]] | None = None, return_shape: bool = False,
) -> Callable[..., Any]:
    """A function that traces ``fun`` on example arguments and returns its closed jaxpr.

    Positional arguments other than ``static_argnums`` (negative counts from the end) and
    keyword arguments holding arrays or scalars become the jaxpr's inputs, as under ``jit``;
    static arguments and other keyword values (strings, callables) are passed through. An
    array argument may be a stand-in: a :class:`~funcgrad.ShapeDtypeStruct` or a
    :class:`~funcgrad.ShapedArray`. With ``return_shape=True`` the result is the pair
    ``(closed_jaxpr, out_shape)``, ``out_shape`` being ``fun``'s output structure with a
    :class:`~funcgrad.ShapeDtypeStruct` per array (as JAX's). ``axis_env``, a list of
    ``(axis_name, size)`` pairs, binds named axes while tracing, so a function using
    collectives (``lax.psum(x, "i")``) can be traced outside the ``vmap`` that names them.

    Example:
        >>> import funcgrad, funcgrad.numpy as fnp, numpy as np
        >>> print(funcgrad.make_jaxpr(lambda x: fnp.sum(fnp.sin(x)))(np.ones(3)))
        { lambda ; a:f64[3]. let
            b:f64[3] = sin a
            c:f64[] = reduce_sum[axes=(0,)] b
          in (c,) }
        >>> _, shape = funcgrad.make_jaxpr(lambda x: (x, x.sum()), return_shape=True)(
        ...     funcgrad.ShapeDtypeStruct((2,), np.float32))
        >>> shape
        (ShapeDtypeStruct(shape=(2,), dtype=float32), ShapeDtypeStruct(shape=(), dtype=float32))
        >>> from funcgrad import lax
        >>> print(funcgrad.make_jaxpr(lambda x: lax.all_gather(x, "i"), axis_env=[("i", 4)])(
        ...     np.ones(3)))
        { lambda ; a:f64[3]. let
            b:f64[4,3] = all_gather[axis=0 axis_name=i tiled=False] a
          in (b,) }
    """
    static = _static_positions(static_argnums)
    _check_static_argnums_fit(fun, static)
    env = [] if axis_env is None else list(axis_env)
    for pair in env:
        if (not isinstance(pair, tuple | list) or len(pair) != 2
                or not isinstance(pair[1], int | numpy.integer) or pair[1] < 0):
            raise TypeError(f"make_jaxpr: axis_env must hold (axis_name, size) pairs, got "
                            f"{pair!r}")

    @functools.wraps(fun)
    def make(*args: Any, **kwargs: Any) -> Any:
        check_tracing_allowed("make_jaxpr", fun)
        nargs = len(args)
        static_idx = {i % nargs for i in static if -nargs <= i < nargs}
        for i in sorted(static_idx):
            try:
                hash(args[i])
            except TypeError:  # as JAX's (and jit's): static values must be hashable
                raise ArgumentMismatchError(
                    f"make_jaxpr: static argument {i} is unhashable "
                    f"({type(args[i]).__name__}): non-hashable static arguments are not "
                    "supported. Pass arrays as non-static arguments; use a tuple for a list"
                ) from None
        args = tuple(tree_util.tree_map(_stand_in_leaf, a) for a in args)
        kwargs = {k: tree_util.tree_map(_stand_in_leaf, v) for k, v in kwargs.items()}
        dyn_idx = [i for i in range(nargs) if i not in static_idx]
        # Keyword arguments are traced too (as by jit); ones holding non-array values (a
        # string, a callable) are passed through as they are.
        dyn_kw = {k: v for k, v in kwargs.items() if _all_array_leaves(v)}

        def g(dyn: tuple, kw: dict) -> Any:
            full = list(args)
            for i, v in zip(dyn_idx, dyn):
                full[i] = v
            return fun(*full, **{**kwargs, **kw})

        dyn_args = tuple(args[i] for i in dyn_idx)
        leaves_with_path, in_tree = tree_util.tree_flatten_with_path((dyn_args, dyn_kw))
        leaves = [leaf for _, leaf in leaves_with_path]
        origins = [
            f"argument {dyn_idx[p[1].idx]}{tree_util.keystr(p[2:])}" if p[0].idx == 0
            else f"argument {p[1].key}{tree_util.keystr(p[2:])}"
            for p, _ in leaves_with_path
        ]
        for x, where in zip(leaves, origins):
            err = int_overflow(x, "make_jaxpr", where)
            if err is not None:
                raise err
        in_avals = [get_aval(x) for x in leaves]
        store: list = []
        with contextlib.ExitStack() as stack:
            for name, size in env:
                stack.enter_context(extend_axis_env(name, int(size)))
            closed = trace_to_jaxpr(
                _flatten_fun(g, in_tree, store), in_avals, _trace_var.get(), origins
            )
        if return_shape:
            return closed, stages.out_info(store[0], closed.out_avals)
        return closed

    return make


def _static_positions(static_argnums: Any) -> tuple[int, ...]:
    """make_jaxpr's ``static_argnums`` as a tuple of ints (NumPy ints too); anything else is
    a TypeError."""
    items = static_argnums if isinstance(static_argnums, tuple | list) else (static_argnums,)
    for i in items:
        if isinstance(i, bool) or not isinstance(i, int | numpy.integer):
            raise TypeError(f"make_jaxpr: static_argnums must be ints (argument positions), "
                            f"got {i!r}")
    return tuple(int(i) for i in items)


def _check_static_argnums_fit(fun: Callable[..., Any], static: tuple[int, ...]) -> None:
    """A static index past ``fun``'s positional parameters is a ValueError (as JAX's): it
    would otherwise be ignored and the argument traced."""
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return  # no signature to check against
    kinds = inspect.Parameter
    if any(p.kind is kinds.VAR_POSITIONAL for p in params):
        return
    n = sum(p.kind in (kinds.POSITIONAL_ONLY, kinds.POSITIONAL_OR_KEYWORD) for p in params)
    for i in static:
        if not -n <= i < n:
            name = getattr(fun, "__name__", type(fun).__name__)
            raise ValueError(f"make_jaxpr: static_argnums contains {i}, but {name} takes only "
                             f"{n} positional argument(s)")


def closure_convert(fun: Callable[..., Any], *example_args: Any
                    ) -> tuple[Callable[..., Any], list[Any]]:
    """``(converted, consts)``: ``fun`` with the values it closes over that take part in
    differentiation -- float or complex values traced by an enclosing transformation (``grad``,
    ``jvp``, ``vmap``) -- made explicit trailing arguments, as ``jax.closure_convert``.
    ``converted(*args, *consts)`` equals ``fun(*args)``; other closed-over values (NumPy
    arrays, integers) stay inside. ``example_args`` give the argument structure, shapes and
    dtypes. The use: a ``custom_vjp`` function may not close over traced values, so pass
    ``consts`` to it as arguments (its ``bwd`` then returns their cotangents).

    Example:
        >>> import funcgrad, funcgrad.numpy as fnp
        >>> def outer(w):
        ...     f, consts = funcgrad.closure_convert(lambda x: fnp.sin(x * w), 1.0)
        ...     return f(1.0, *consts)
        >>> round(float(funcgrad.grad(outer)(2.0)), 6)  # cos(2)
        -0.416147
    """
    _check_callable(fun, "closure_convert")
    leaves, in_tree = tree_util.tree_flatten(example_args)
    in_avals = _input_avals(example_args, "closure_convert")
    store: list = []
    closed = trace_to_jaxpr(_flatten_fun(fun, in_tree, store, "closure_convert"), in_avals,
                            current_trace())
    out_tree = store[0]
    hoist = [i for i, c in enumerate(closed.consts)
             if isinstance(c, Tracer) and _is_inexact(c.aval)]
    hoisted = [closed.consts[i] for i in hoist]
    n_args = len(example_args)

    def converted(*args: Any) -> Any:
        if len(args) != n_args + len(hoist):
            raise TypeError(
                f"closure_convert: the converted function takes {n_args} argument(s) and "
                f"{len(hoist)} closed-over value(s), got {len(args)} arguments"
            )
        arg_leaves = _flatten_like(in_tree, tuple(args[:n_args]), "closure_convert",
                                   "arguments", "example arguments")
        consts = list(closed.consts)
        for i, v in zip(hoist, args[n_args:]):
            consts[i] = v
        outs = eval_jaxpr(closed.jaxpr, consts, *arg_leaves)
        return tree_util.tree_unflatten(out_tree, [_as_array_out(o) for o in outs])

    converted.__name__ = getattr(fun, "__name__", "converted")
    return converted, hoisted


# ---------------------------------------------------------------------------------------------
# jvp / linearize / vjp / linear_transpose


def jvp(
    fun: Callable[..., Any],
    primals: Sequence[Any],
    tangents: Sequence[Any],
    has_aux: bool = False,
) -> Any:
    """Forward mode: ``(fun(*primals), J(primals) @ tangents)``, pytrees in and out.

    ``primals`` and ``tangents`` are tuples (or lists) with one entry per argument, of the
    same structure; a tangent has the primal's shape and dtype exactly, as JAX checks (a Python
    float is a float64 tangent; ``None`` for zero). Integer and bool primals take ``float0``
    tangents (or ``None``) and are not differentiated; any other pairing is a ``TypeError``. With ``has_aux=True``, ``fun``
    returns ``(out, aux)`` and ``jvp`` returns ``(out, tangent_out, aux)``.

    Example:
        >>> import funcgrad, funcgrad.numpy as fnp
        >>> y, dy = funcgrad.jvp(fnp.sin, (0.0,), (1.0,))
        >>> float(y), float(dy)
        (0.0, 1.0)
    """
    return _jvp(fun, primals, tangents, has_aux, "jvp")


def _jvp(fun: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any],
         has_aux: bool, fname: str) -> Any:
    """:func:`jvp`, its errors naming ``fname`` (the function the user called)."""
    if not isinstance(primals, tuple | list) or not isinstance(tangents, tuple | list):
        raise TypeError(
            f"{fname}: primals and tangents must be tuples (or lists) of arguments, got "
            f"{type(primals).__name__} and {type(tangents).__name__}; for one argument write "
            "jvp(f, (x,), (t,))"
        )
    if len(primals) != len(tangents):
        raise ArgumentMismatchError(
            f"{fname}: got {len(primals)} primals but {len(tangents)} tangents; give one tangent "
            "per argument"
        )
    p_leaves, p_tree = tree_util.tree_flatten(tuple(primals))
    t_leaves = _flatten_like(p_tree, tuple(tangents), fname, "tangents", "primals")
    primal_tup = tuple(primals)
    p_avals = _input_avals(primal_tup, fname, "primals")
    t_in = [
        _check_tangent(a, t, fname, where=_leaf_where(primal_tup, i, "tangents"))
        for i, (a, t) in enumerate(zip(p_avals, t_leaves))
    ]
    flat = _AuxFlat(fun, p_tree, has_aux, fname)
    outs_p, outs_t = jvp_flat(flat, p_leaves, t_in)
    n = flat.n_out
    outs_t = [_materialize_tangent(t) for t in outs_t[:n]]
    y = tree_util.tree_unflatten(flat.out_tree, [_as_array_out(o) for o in outs_p[:n]])
    dy = tree_util.tree_unflatten(flat.out_tree, outs_t)
    if has_aux:
        return y, dy, flat.aux(outs_p)
    return y, dy


def linearize(fun: Callable[..., Any], *primals: Any, has_aux: bool = False) -> Any:
    """``(fun(*primals), f_jvp)`` where ``f_jvp(*tangents)`` applies the linear map.

    The primal computation runs once, now; ``f_jvp`` replays only the (staged) tangent
    computation, so calling it many times is cheap. With ``has_aux=True`` the result is
    ``(out, f_jvp, aux)``.

    Example:
        >>> import funcgrad, funcgrad.numpy as fnp
        >>> y, f_jvp = funcgrad.linearize(fnp.sin, 0.0)
        >>> float(f_jvp(2.0))
        2.0
    """
    _check_callable(fun, "linearize")
    p_leaves, p_tree = tree_util.tree_flatten(primals)
    p_avals = _input_avals(primals, "linearize")
    flat = _AuxFlat(fun, p_tree, has_aux, "linearize")
    result = linearize_flat(flat, p_leaves)
    out_tree, n = flat.out_tree, flat.n_out
    where_tree = tree_util.tree_unflatten(p_tree, list(range(len(p_leaves))))

    def jvp_with(residuals: list[Any], *tangents: Any) -> Any:
        t_leaves = _flatten_like(p_tree, tangents, "linearize", "tangents", "primals")
        ts = [
            _check_tangent(a, t, "linearize", where=_leaf_where(where_tree, i, "tangents"))
            for i, (a, t) in enumerate(zip(p_avals, t_leaves))
        ]
        outs = eval_linear(_with_residuals(result, residuals),
                           [_materialize_tangent(t) for t in ts])[:n]
        return tree_util.tree_unflatten(out_tree, [_materialize_tangent(o) for o in outs])

    # A pytree over the residuals, as JAX's: it may be returned from (or passed to) jit.
    f_jvp = tree_util.Partial(jvp_with, list(result.jaxpr.consts))

    y = tree_util.tree_unflatten(out_tree, [_as_array_out(o) for o in result.primals_out[:n]])
    if has_aux:
        return y, f_jvp, flat.aux(result.primals_out)
    return y, f_jvp


def vjp(fun: Callable[..., Any], *primals: Any, has_aux: bool = False,
        reduce_axes: Sequence[Any] = ()) -> Any:
    """``(fun(*primals), f_vjp)`` (plus ``aux`` with has_aux); ``f_vjp(ct)`` pulls back.

    ``f_vjp`` takes a cotangent shaped like the output and returns a tuple with one cotangent
    per primal argument (``float0`` zeros for integer ones). It may be called many times.
    ``reduce_axes`` is accepted as JAX's, which only takes it empty (deprecated).

    Example:
        >>> import funcgrad, funcgrad.numpy as fnp
        >>> y, f_vjp = funcgrad.vjp(fnp.sin, 0.0)
        >>> [float(c) for c in f_vjp(1.0)]
        [1.0]
    """
    _check_callable(fun, "vjp")
    _check_no_reduce_axes(reduce_axes, "vjp")
    _input_avals(primals, "vjp")
    return _vjp(fun, primals, has_aux, eager_pullback=False)


def fwd_and_bwd(fun: Callable[..., Any], argnums: int | Sequence[int], has_aux: bool = False,
                jitted: bool = True) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """``(fwd, bwd)``: the forward and backward passes of ``fun`` as two functions
    (``jax.fwd_and_bwd``), so that a jitted ``bwd`` compiles once and is reused across steps.

    ``fwd(*args)`` returns ``(fun(*args), residuals)`` (``(out, residuals, aux)`` with
    ``has_aux``); ``bwd(residuals, ct)`` returns the cotangents of the arguments at
    ``argnums`` (a tuple for a tuple ``argnums``), i.e. ``vjp(fun, ...)[1](ct)``. Here the
    residuals are the arguments themselves and ``bwd`` recomputes the forward pass (as
    :func:`~funcgrad.checkpoint` does): the same results as JAX, whose residuals are opaque.
    ``jitted=True`` (the default) returns both functions jitted.

    Example:
        >>> import numpy as np, funcgrad
        >>> fwd, bwd = funcgrad.fwd_and_bwd(lambda x, w: x @ w, argnums=(0, 1))
        >>> y, res = fwd(np.ones((2, 2)), np.eye(2))
        >>> [g.tolist() for g in bwd(res, np.ones((2, 2)))]
        [[[1.0, 1.0], [1.0, 1.0]], [[2.0, 2.0], [2.0, 2.0]]]
    """
    _check_callable(fun, "fwd_and_bwd")
    argnums_t = _argnums_tuple(argnums, "fwd_and_bwd")
    single = isinstance(argnums, int | numpy.integer)

    def fwd(*args: Any) -> tuple[Any, ...]:
        _resolve_argnums(argnums_t, len(args), "fwd_and_bwd")
        out = fun(*args)
        if not has_aux:
            return out, args
        if not isinstance(out, tuple | list) or len(out) != 2:
            raise TypeError("fwd_and_bwd: has_aux=True requires the function to return a pair "
                            f"(output, aux), got {_describe_value(out)}")
        return out[0], args, out[1]

    def bwd(residuals: tuple, ct: Any) -> Any:
        args = tuple(residuals)
        idx = _resolve_argnums(argnums_t, len(args), "fwd_and_bwd")
        diff = tuple(args[i] for i in idx)
        pulled = _vjp(_partial(fun, args, {}, idx), diff, has_aux, eager_pullback=False,
                      fname="fwd_and_bwd")
        g = pulled[1](ct)
        return g[0] if single else g

    if jitted:
        return jit(fwd), jit(bwd)
    return fwd, bwd


def _vjp(fun: Callable[..., Any], primals: tuple, has_aux: bool, eager_pullback: bool,
         fname: str = "vjp", zeros: list[bool] | None = None) -> Any:
    """``vjp``; ``eager_pullback``: the caller calls the pullback right away, at the top
    level, with concrete cotangents (grad does), which allows the eager tape. ``zeros``: each
    pullback call fills it with one flag per primal leaf, True where the cotangent is a
    symbolic zero (as :func:`_value_and_grad`'s)."""
    flat, p_tree, all_outs, pull_leaves, out_avals, residuals = _vjp_parts(
        fun, primals, has_aux, eager_pullback, fname)
    out_tree, n = flat.out_tree, flat.n_out
    primals_out = all_outs[:n]
    out_primal_avals = [get_aval(o) for o in primals_out]
    where_tree = tree_util.tree_unflatten(out_tree, list(range(n)))

    def vjp_with(res: list[Any] | None, ct: Any) -> tuple[Any, ...]:
        ct_leaves = _flatten_like(out_tree, ct, fname, "cotangent", "output")
        cts = [
            _check_tangent(pa, c, fname, expected="output",
                           where=_leaf_where(where_tree, i, "cotangent"))
            for i, (c, pa) in enumerate(zip(ct_leaves, out_primal_avals))
        ]
        return pull_leaves(cts, res, zeros=zeros)

    # A pytree over the residuals, as JAX's: it may be returned from (or passed to) jit.
    f_vjp = tree_util.Partial(vjp_with, residuals)
    primals_out_tree = tree_util.tree_unflatten(out_tree, [_as_array_out(o) for o in primals_out])
    if has_aux:
        return primals_out_tree, f_vjp, flat.aux(all_outs)
    return primals_out_tree, f_vjp


def _vjp_parts(fun: Callable[..., Any], primals: tuple, has_aux: bool, eager_pullback: bool,
               fname: str, unit_seed: bool = False
               ) -> tuple[_AuxFlat, Any, list[Any], Callable[..., Any],
                          list[ShapedArray], list[Any] | None]:
    """``(flat, primals_tree, flat_outputs, pull_leaves, out_tangent_avals, residuals)``:
    ``pull_leaves(cts, residuals=None)`` maps checked cotangents of the function's output
    leaves (one each, aux outputs excluded) to the cotangent pytree of ``primals``;
    ``residuals`` are the arrays the backward pass reads (the linear program's constants),
    which a caller may pass back replaced (the pullback as a pytree over them), or None where
    the backward pass is not a linear program (the eager tape, a forward gradient).
    ``unit_seed``: the caller
    (grad) pulls back a one, once; with one real number to differentiate, tangents are then
    computed forward (:class:`~funcgrad.interpreters.linearize.ForwardTangents`)."""
    p_leaves, p_tree = tree_util.tree_flatten(primals)
    flat = _AuxFlat(fun, p_tree, has_aux, fname)
    # `vjp` itself always linearizes: its pullback may be called later under other
    # transformations (vmap in jacrev, grad of the pullback), which the eager tape's backward
    # pass does not support.
    residuals: list[Any] | None = None
    if eager_pullback and config.eager_tape.get() and records(current_trace()):
        primals_out, tape_pull, out_avals = vjp_tape(flat, p_leaves)

        def pull(cts: Sequence[Any], res: Any = None) -> list[Any]:
            return tape_pull(cts)
    else:
        seed = _forward_seed(p_leaves) if unit_seed else None
        result = linearize_flat(flat, p_leaves, seed)
        primals_out, out_avals = result.primals_out, result.out_tangent_avals

        if seed is not None:
            in_aval = tangent_aval(get_aval(p_leaves[0]))

            def pull(cts: Sequence[Any], res: Any = None) -> list[Any]:
                g = forward_gradient(result, cts)
                if g is None:
                    return [Zero(in_aval)]
                if g is seed and not isinstance(g, Tracer):  # the identity: a fresh one
                    g = _ones_like_aval(in_aval)
                if get_aval(g).shape != in_aval.shape:  # (1,) in, () out: as reshape's transpose
                    g = _shape.reshape(g, in_aval.shape)
                return [g]
        else:
            residuals = list(result.jaxpr.consts)

            def pull(cts: Sequence[Any], res: list[Any] | None = None) -> list[Any]:
                return transpose_linearized(_with_residuals(result, res), cts)

    aux_zeros = [Zero(a) for a in out_avals[flat.n_out:]]

    def pull_leaves(cts: list[Any], res: list[Any] | None = None,
                    zeros: list[bool] | None = None) -> Any:
        # Inside a shard_map body (check_vma=True): JAX's typed cotangents (see there).
        cts = vma_cotangents(cts, primals_out[:flat.n_out], "scale")
        in_cts = vma_cotangents(pull(cts + aux_zeros if aux_zeros else cts, res), p_leaves,
                                "sum")
        if zeros is not None:
            zeros[:] = [type(c) is Zero for c in in_cts]
        return tree_util.tree_unflatten(p_tree, [_materialize_tangent(c) for c in in_cts])

    return flat, p_tree, primals_out, pull_leaves, out_avals, residuals


def _with_residuals(result: LinearizeResult, residuals: list[Any] | None) -> LinearizeResult:
    """``result`` with its linear program's constants replaced by ``residuals`` (those a
    pullback or linearized function carries as its pytree leaves, which may come back as
    other arrays: returned from jit, mapped by tree_map); itself when they are its own."""
    closed = result.jaxpr
    if residuals is None or (len(residuals) == len(closed.consts) and all(
            a is b for a, b in zip(residuals, closed.consts))):
        return result
    return LinearizeResult(result.primals_out, ClosedJaxpr(closed.jaxpr, residuals),
                           result.in_tangent_avals, result.out_tangent_avals,
                           result.zero_outputs, result.forward_tangents)




def _forward_seed(p_leaves: Sequence[Any]) -> Any:
    """The tangent ``grad`` seeds a forward linearization with when it differentiates one real
    number (a one, see :class:`~funcgrad.interpreters.linearize.ForwardTangents`), or None:
    reverse mode (anything larger; complex; while ``debug_nans`` watches backward passes)."""
    if (len(p_leaves) != 1 or transpose_observer.get() is not None
            or linearize_observer.get() is not None):
        return None
    a = get_aval(p_leaves[0])
    if a.dtype.kind != "f" or a.size != 1:
        return None
    if a.shape == () and staging_below(current_trace()):
        # Staged, a NumPy scalar seed is a literal the tracing rewrites see (``t * 1`` is
        # ``t``; a device array's value they cannot read without a transfer), and arrays of
        # every device take NumPy scalars as operands.
        return a.dtype.type(1)
    return _ones_like_aval(tangent_aval(a))


def linear_transpose(fun: Callable[..., Any], *primals: Any,
                     reduce_axes: Sequence[Any] = ()) -> Callable[[Any], tuple]:
    """The transpose of the linear function ``fun``, at inputs shaped like ``primals``.

    ``primals`` only give shapes and dtypes (their values are not used). The result takes a
    cotangent shaped like ``fun``'s output and returns a tuple with one cotangent per input:
    for ``fun(x) = A @ x`` it computes ``A.T @ ct``. ``fun`` must be linear (built from
    operations that are linear in its inputs).

    Example:
        >>> import numpy as np, funcgrad
        >>> f_t = funcgrad.linear_transpose(lambda x: 3.0 * x, 1.0)
        >>> float(f_t(2.0)[0])
        6.0
    """
    _check_callable(fun, "linear_transpose")
    _check_no_reduce_axes(reduce_axes, "linear_transpose")
    p_leaves, p_tree = tree_util.tree_flatten(primals)
    # Python scalars stay weak while tracing, as when ``fun`` is called on them (x * f32
    # array is float32); their cotangents are float64, as grad's are.
    in_avals = _input_avals(primals, "linear_transpose")
    # As JAX: float/complex -> float/complex, or integer -> integer (a linear map over the
    # integers, whose transpose is integer too).
    integer = bool(in_avals) and all(a.dtype.kind in "iu" for a in in_avals)
    if not integer and not all(_is_inexact(a) for a in in_avals):
        raise TypeError(
            "linear_transpose only supports [float or complex] -> [float or complex], and "
            f"integer -> integer functions, but got inputs {[a.str_short() for a in in_avals]}"
        )
    store: list = []
    closed = trace_to_jaxpr(_flatten_fun(fun, p_tree, store, "linear_transpose"), in_avals,
                            current_trace())
    out_tree = store[0]
    out_avals = closed.out_avals
    if integer and not all(a.dtype.kind in "iu" for a in out_avals):
        raise TypeError(
            "linear_transpose only supports [float or complex] -> [float or complex], and "
            f"integer -> integer functions, but got {[a.str_short() for a in in_avals]} -> "
            f"{[a.str_short() for a in out_avals]}"
        )
    ct_avals = ([a.update(weak_type=False) for a in in_avals] if integer
                else [tangent_aval(a) for a in in_avals])
    # The output's structure with leaf positions, to name a bad cotangent leaf in errors.
    out_positions = tree_util.tree_unflatten(out_tree, list(range(len(out_avals))))

    def transposed(consts: list[Any], ct: Any) -> tuple[Any, ...]:
        ct_leaves = _flatten_like(out_tree, ct, "linear_transpose", "cotangent", "output")
        if integer:
            cts = [_check_integer_cotangent(a, c) for c, a in zip(ct_leaves, out_avals)]
        else:
            cts = [
                _check_tangent(a, c, "linear_transpose", expected="output",
                               where=_leaf_where(out_positions, i, "cotangent"))
                for i, (c, a) in enumerate(zip(ct_leaves, out_avals))
            ]
        vma = bool(checked_vma_axes.get())
        if vma:
            # Inside a shard_map body (check_vma=True): JAX's typed transpose, as vjp's (see
            # vma_cotangents); whether an output varies over a mesh axis is known from the
            # function's value at the primals, computed here (it is linear: one pass).
            cts = vma_cotangents(cts, eval_jaxpr(closed.jaxpr, consts, *p_leaves), "scale")
        try:
            in_cts = backward_pass(
                closed.jaxpr, consts, [UndefinedPrimal(a) for a in ct_avals], cts
            )
        except (MissingRuleError, ValueError) as e:
            # Transpose rules raise ValueError "... (not linear)" for products of two inputs.
            if type(e) is ValueError and "not linear" not in str(e):
                raise
            raise TypeError(
                f"linear_transpose: the function is not linear in its inputs (or uses an "
                f"operation without a transpose rule): {e}"
            ) from e
        if vma:
            in_cts = vma_cotangents(in_cts, p_leaves, "sum")
        in_cts = [c if type(c) is Zero or get_aval(c).dtype == a.dtype
                  else _convert(c, a.dtype) for c, a in zip(in_cts, ct_avals)]
        return tree_util.tree_unflatten(p_tree, [_materialize_tangent(c) for c in in_cts])

    # A pytree over the program's constants, as JAX's: it may be returned from jit.
    return tree_util.Partial(transposed, list(closed.consts))


# ---------------------------------------------------------------------------------------------
# grad / value_and_grad


def _check_diff_args(args: Sequence[Any], idx: Sequence[int], allow_int: bool,
                     holomorphic: bool, fname: str) -> None:
    if all(a is None for a in args):
        # None is an empty pytree (its gradient is None), but with nothing else to
        # differentiate it is a mistake, not a request.
        raise TypeError(
            f"{fname}: argument {idx[0]} is None, so there is nothing to differentiate; pass "
            "an array, a number or a pytree of them (or choose other argnums)"
        )
    for i, a in zip(idx, args):
        _check_diff_arg(a, i, allow_int, holomorphic, fname)


def _check_diff_arg(x: Any, i: int, allow_int: bool, holomorphic: bool, fname: str) -> None:
    # Runs on every grad call: the common case (every leaf inexact) reads dtypes only, and
    # leaf paths are built only to name an offending leaf.
    leaves = tree_util.tree_leaves(x)
    try:
        if all(_leaf_kind(leaf) in ("c" if holomorphic else "fc") for leaf in leaves):
            return
    except TypeError:
        pass  # a leaf that is not an array: the loop below names it
    # Typed PRNG keys (an extended dtype such as key<fry>) stop the walk so the message names
    # the key type, as JAX, not the uint32 data inside the key's pytree.
    for path, leaf in tree_util.tree_flatten_with_path(x, is_leaf=_has_extended_dtype)[0]:
        where = f"argument {i}{tree_util.keystr(path)}"
        if _has_extended_dtype(leaf):
            if allow_int:
                continue  # its gradient is a float0 zero, as for the data inside it
            raise TypeError(
                f"{fname} requires real- or complex-valued inputs (float or complex dtype), "
                f"but {where} is a key array of dtype {leaf.dtype}: keys are not "
                "differentiable. Pass it as a non-differentiated argument (argnums), or "
                "pass allow_int=True to get a float0 zero gradient for it."
            )
        a = _input_aval(leaf, fname, where)
        if holomorphic and a.dtype.kind != "c":
            raise TypeError(
                f"{fname} with holomorphic=True requires complex inputs, but {where} has "
                f"dtype {a.dtype}"
            )
        if not _is_inexact(a) and not allow_int:
            raise TypeError(
                f"{fname} requires real- or complex-valued inputs (float or complex dtype), "
                f"but {where} has dtype {a.dtype}. Cast it with .astype(float), or pass "
                "allow_int=True to get a float0 zero gradient for it."
            )


def _has_extended_dtype(v: Any) -> bool:
    """Whether ``v`` is an array of an extended dtype (a typed PRNG key array): its dtype is
    not NumPy's but has a NumPy scalar ``type`` (funcgrad.dtypes.extended)."""
    dt = getattr(v, "dtype", None)
    t = getattr(dt, "type", None)
    return (dt is not None and not isinstance(dt, numpy.dtype) and isinstance(t, type)
            and issubclass(t, numpy.generic))


def _check_scalar_output(ans: Any, holomorphic: bool, fname: str) -> ShapedArray:
    leaves, tree = tree_util.tree_flatten(ans)
    if len(leaves) != 1:
        raise TypeError(
            f"{fname} requires a function returning one scalar, got a pytree with "
            f"{len(leaves)} leaves; use vjp or jacrev for non-scalar outputs (or has_aux=True "
            "to return auxiliary data)"
        )
    if not tree.is_leaf():
        # As JAX: the output is the scalar itself; a container of one (a forgotten
        # has_aux=True, a list) is not silently unwrapped.
        raise TypeError(
            f"{fname} requires a function returning a scalar, got a {type(ans).__name__} "
            f"holding one ({tree}); return the scalar itself (or pass has_aux=True to return "
            "(output, aux))"
        )
    a = get_aval(leaves[0])
    if a.shape != ():
        raise TypeError(
            f"{fname} requires a scalar output, got shape {a.shape}; use vjp or jacrev for "
            "non-scalar outputs (or sum the output)"
        )
    if holomorphic:
        if a.dtype.kind != "c":
            raise TypeError(
                f"{fname} with holomorphic=True requires a complex output, got dtype {a.dtype}"
            )
    elif a.dtype.kind == "c":
        raise TypeError(
            f"{fname} requires a real-valued output, got a complex one; use holomorphic=True "
            "for complex-to-complex holomorphic functions, take the real part / abs for a "
            "real loss, or use vjp directly for non-holomorphic ones"
        )
    if not _is_inexact(a):
        raise TypeError(
            f"{fname} requires a float (or, with holomorphic=True, complex) output, got dtype "
            f"{a.dtype}"
        )
    return a


def _ones_like_aval(a: ShapedArray) -> Any:
    """An array of ones of ``a`` on its device (``zeros + 1`` is a NumPy scalar for 0-d)."""
    return _xp_for_aval(a).ones(a.shape, dtype=a.dtype)


def value_and_grad(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
    reduce_axes: Sequence[Any] = (),
) -> Callable[..., Any]:
    """A function returning ``(fun(*args), gradient)`` of scalar-valued ``fun``.

    ``argnums`` (int or tuple of ints) picks the differentiated positional arguments (each may
    be a pytree); with a tuple the gradient is a tuple. ``has_aux=True``: ``fun`` returns
    ``(value, aux)`` and the result is ``((value, aux), gradient)``. ``holomorphic=True`` for
    complex-to-complex holomorphic functions (gives ``f'(z)``). ``allow_int=True`` gives
    integer arguments ``float0`` zero gradients instead of an error. ``reduce_axes`` is
    accepted as JAX's, which only takes it empty (deprecated).

    Example:
        >>> import funcgrad, funcgrad.numpy as fnp
        >>> v, g = funcgrad.value_and_grad(lambda x: x * x)(3.0)
        >>> float(v), float(g)
        (9.0, 6.0)
    """
    _check_no_reduce_axes(reduce_axes, "value_and_grad")
    return _value_and_grad(fun, argnums, has_aux, holomorphic, allow_int, "value_and_grad")


def _value_and_grad(
    fun: Callable[..., Any],
    argnums: int | Sequence[int],
    has_aux: bool,
    holomorphic: bool,
    allow_int: bool,
    fname: str,
    value: bool = True,
    zeros: list[bool] | None = None,
) -> Callable[..., Any]:
    """:func:`value_and_grad`, its errors naming ``fname`` (the function the user called);
    with ``value=False``, :func:`grad` (the gradient alone, or ``(gradient, aux)``): built
    here rather than by wrapping, one Python frame less per level of nested ``grad``.
    ``zeros``: a list each call fills with one flag per differentiated leaf, True where its
    gradient is a symbolic zero (the function does not depend on it: PyTorch leaves its
    ``.grad`` None), for ``funcgrad_nn.grad``."""
    _check_callable(fun, fname)
    argnums_t = _argnums_tuple(argnums, fname)
    single = isinstance(argnums, int | numpy.integer)

    @functools.wraps(fun)
    def vg(*args: Any, **kwargs: Any) -> Any:
        idx = _resolve_argnums(argnums_t, len(args), fname)
        diff_args = tuple(args[i] for i in idx)
        _check_diff_args(diff_args, idx, allow_int, holomorphic, fname)
        flat, _, outs, pull_leaves, _, _ = _vjp_parts(_partial(fun, args, kwargs, idx),
                                                      diff_args, has_aux, True, fname, True)
        ans = tree_util.tree_unflatten(flat.out_tree,
                                       [_as_array_out(o) for o in outs[:flat.n_out]])
        a = _check_scalar_output(ans, holomorphic, fname)
        # The seed is built here with the output's exact dtype and shape: the pullback needs
        # no cotangent checks.
        g = pull_leaves([_ones_like_aval(a.update(weak_type=False))], zeros=zeros)
        g = g[0] if single else tuple(g)
        if not value:
            return (g, flat.aux(outs)) if has_aux else g
        if has_aux:
            return (ans, flat.aux(outs)), g
        return ans, g

    return vg


def grad(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
    reduce_axes: Sequence[Any] = (),
) -> Callable[..., Any]:
    """The gradient of scalar-valued ``fun`` with respect to argument(s) ``argnums``.

    The gradient has the structure (and dtype) of the differentiated argument(s). Options as
    in :func:`value_and_grad`; with ``has_aux=True`` the result is ``(gradient, aux)``.
    Non-scalar outputs raise a TypeError pointing to :func:`vjp` / :func:`jacrev`.

    Example:
        >>> import funcgrad, funcgrad.numpy as fnp
        >>> float(funcgrad.grad(fnp.sin)(0.0))
        1.0
        >>> funcgrad.grad(lambda p: p["w"] * p["b"])({"w": 2.0, "b": 3.0})
        {'b': array(2.), 'w': array(3.)}
    """
    _check_no_reduce_axes(reduce_axes, "grad")
    return _value_and_grad(fun, argnums, has_aux, holomorphic, allow_int, "grad", value=False)


def typeof(x: Any) -> ShapedArray:
    """The abstract value of ``x`` (an array, a number or a traced value): its
    :class:`~funcgrad.ShapedArray` (shape, dtype, weak type), as ``jax.typeof``.

    Example:
        >>> import numpy as np, funcgrad
        >>> funcgrad.typeof(np.ones((2, 3), np.float32))
        ShapedArray(float32[2,3], device='cpu')
        >>> funcgrad.typeof(1.0).weak_type
        True
    """
    return get_aval(x)


# ---------------------------------------------------------------------------------------------
# Jacobians


def _vmap_basis(
    fun: Callable[..., Any], out_axes: Any, chunk_size: int | None, basis: list[Any],
    avals: Sequence[ShapedArray], dtypes: Sequence[Any],
) -> Any:
    """``fun`` vmapped over ``basis`` (from :func:`_std_basis`), which vmap is told is the
    rows of an identity where one leaf holds it all (rules then skip multiplying by it)."""
    total = sum(_size(a) for a in avals)
    structs = [None] * len(basis)
    if len(basis) == 1:
        a = avals[0]
        structs[0] = batching.one_hot_basis(
            ShapedArray(a.shape, dtypes[0], False, a.device or backend.get_default_device()),
            total)
    # axis_size: the basis may have no leaves at all (a function of an empty pytree).
    return vmap_basis(fun, out_axes, total, chunk_size, structs)(*basis)


def _size(a: ShapedArray) -> int:
    return int(numpy.prod(a.shape, dtype=numpy.int64))


def _std_basis(avals: Sequence[ShapedArray], dtypes: Sequence[Any]) -> list[Any]:
    """For leaves of ``avals``: arrays of shape ``(N,) + shape`` that together form the rows
    of the N x N identity (N the total size), each in the given dtype."""
    n = sum(_size(a) for a in avals)
    out = []
    offset = 0
    for a, dt in zip(avals, dtypes):
        s = _size(a)
        block = numpy.zeros((n, s), dtype=dt)
        block[numpy.arange(offset, offset + s), numpy.arange(s)] = 1
        block.flags.writeable = False  # fixed: jit may fold it (compile.passes.is_frozen)
        offset += s
        dev = a.device
        b = block.reshape((n,) + a.shape)
        if dev not in (None, "cpu"):
            b = backend.device_put(b, dev)
        elif dev is None:
            d = backend.get_default_device()
            b = backend.device_put(b, d) if d != "cpu" else b
        out.append(b)
    return out


def _jac_block(j: Any, offset: int, size: int, total: int, shape: tuple[int, ...]) -> Any:
    """Rows ``offset:offset+size`` of ``j`` (leading axis of length ``total``), reshaped."""
    if size != total:
        j = _shape.slice_in_dim(j, offset, offset + size)
    return _shape.reshape(j, shape)


def _zero_block(shape: tuple[int, ...], a: ShapedArray) -> Any:
    """The Jacobian block of an integer or boolean input or output ``a``: zeros of ``a``'s
    integer dtype, as JAX's (a ``jacrev(allow_int=True)`` row, a ``jacfwd`` block of an
    integer output); ``float0`` for booleans, which have no zero to cast to."""
    if a.dtype.kind in "iu":
        return _xp_for_aval(a).zeros(shape, dtype=a.dtype)
    return numpy.zeros(shape, dtype=float0)


def _check_jac_inputs(
    dyn: tuple, idx: tuple[int, ...], holomorphic: bool, allow_int: bool, fname: str,
    complex_ok: bool, int_hint: str,
) -> None:
    for i, x in zip(idx, dyn):
        for path, leaf in tree_util.tree_flatten_with_path(x)[0]:
            where = f"argument {i}{tree_util.keystr(path)}"
            a = _input_aval(leaf, fname, where)
            if holomorphic:
                if a.dtype.kind != "c":
                    raise TypeError(
                        f"{fname} with holomorphic=True requires complex inputs, but {where} "
                        f"has dtype {a.dtype}"
                    )
            elif a.dtype.kind == "c" and not complex_ok:
                raise TypeError(
                    f"{fname} requires real-valued (float) inputs, but {where} is complex "
                    f"({a.dtype}); pass holomorphic=True for holomorphic functions, or use "
                    "jvp directly (or jacrev) for non-holomorphic ones"
                )
            elif not _is_inexact(a) and not allow_int:
                raise TypeError(
                    f"{fname} requires float or complex inputs, but {where} has dtype "
                    f"{a.dtype}; {int_hint}"
                )


def jacfwd(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    chunk_size: int | None = None,
) -> Callable[..., Any]:
    """The Jacobian of ``fun`` by forward mode: ``vmap`` of ``jvp`` over the input basis.

    Pytrees in and out: the result has the structure of ``fun``'s output, where each output
    leaf of shape ``out.shape`` holds the structure of the differentiated input(s) (a tuple of
    them when ``argnums`` is a tuple) with leaves of shape ``out.shape + in.shape``.
    Efficient when there are fewer inputs than outputs. ``chunk_size`` evaluates the basis in
    chunks of that many directions to bound memory. ``has_aux``: ``fun`` returns
    ``(out, aux)`` and the result is ``(jacobian, aux)``.

    Example:
        >>> import numpy as np, funcgrad, funcgrad.numpy as fnp
        >>> funcgrad.jacfwd(lambda x: x ** 2)(np.array([1.0, 2.0])).tolist()
        [[2.0, 0.0], [0.0, 4.0]]
    """
    return _jacfwd(fun, argnums, has_aux, holomorphic, chunk_size, "jacfwd",
                   "cast it to float, or use jvp directly")


def _check_chunk_size(chunk_size: Any, fname: str) -> None:
    if chunk_size is not None and (
        not isinstance(chunk_size, int | numpy.integer) or isinstance(chunk_size, bool)
        or chunk_size < 1
    ):
        raise TypeError(f"{fname}: chunk_size must be a positive int or None, got {chunk_size!r}")


def _jacfwd(fun: Callable[..., Any], argnums: int | Sequence[int], has_aux: bool,
            holomorphic: bool, chunk_size: int | None, fname: str,
            int_hint: str) -> Callable[..., Any]:
    """:func:`jacfwd`, its errors naming ``fname`` (the function the user called)."""
    _check_callable(fun, fname)
    _check_chunk_size(chunk_size, fname)
    argnums_t = _argnums_tuple(argnums, fname)
    single = isinstance(argnums, int | numpy.integer)

    @functools.wraps(fun)
    def jacfun(*args: Any, **kwargs: Any) -> Any:
        idx = _resolve_argnums(argnums_t, len(args), fname)
        dyn = tuple(args[i] for i in idx)
        _check_jac_inputs(dyn, idx, holomorphic, False, fname, False, int_hint)
        f_partial = _partial(fun, args, kwargs, idx)
        in_leaves, in_tree = tree_util.tree_flatten(dyn)
        in_avals = [get_aval(x) for x in in_leaves]
        basis = _std_basis(in_avals, [tangent_aval(a).dtype for a in in_avals])
        info: list = []

        def pushfwd(*b: Any) -> Any:
            t = tree_util.tree_unflatten(in_tree, list(b))
            res = _jvp(f_partial, dyn, t, has_aux, fname)
            y, dy = res[0], res[1]
            y_leaves, out_tree = tree_util.tree_flatten(y)
            y_avals = [get_aval(v) for v in y_leaves]
            info.append((out_tree, y_avals))
            dy_leaves = [d for d, a in zip(tree_util.tree_leaves(dy), y_avals) if _is_inexact(a)]
            return (dy_leaves, res[2]) if has_aux else dy_leaves

        total = sum(_size(a) for a in in_avals)
        out = _vmap_basis(pushfwd, (0, None) if has_aux else 0, chunk_size, basis, in_avals,
                          [tangent_aval(a).dtype for a in in_avals])
        jac_leaves, aux = (out[0], out[1]) if has_aux else (out, None)
        out_tree, y_avals = info[0]
        if holomorphic:
            for a in y_avals:
                if a.dtype.kind != "c":
                    raise TypeError(
                        f"{fname} with holomorphic=True requires complex outputs, got dtype "
                        f"{a.dtype}"
                    )
        it = iter(jac_leaves)
        per_out = []
        for ya in y_avals:
            j = next(it) if _is_inexact(ya) else None
            blocks = []
            offset = 0
            for xa in in_avals:
                s = _size(xa)
                if j is None:
                    blocks.append(_zero_block(ya.shape + xa.shape, ya))
                else:
                    blk = _jac_block(j, offset, s, total, xa.shape + ya.shape)
                    blocks.append(_move_leading_to_end(blk, len(xa.shape)))
                offset += s
            sub = tree_util.tree_unflatten(in_tree, blocks)
            per_out.append(sub[0] if single else sub)
        jac = tree_util.tree_unflatten(out_tree, per_out)
        return (jac, aux) if has_aux else jac

    return jacfun


def _move_leading_to_end(x: Any, k: int) -> Any:
    """Move the first ``k`` axes of ``x`` to the end (input axes after output axes)."""
    if k == 0:
        return x
    nd = len(get_aval(x).shape)
    if nd == k:
        return x
    perm = tuple(range(k, nd)) + tuple(range(k))
    return _shape.transpose(x, perm)


def jacrev(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
    chunk_size: int | None = None,
) -> Callable[..., Any]:
    """The Jacobian of ``fun`` by reverse mode: ``vmap`` of the VJP over the output basis.

    Same output structure as :func:`jacfwd` (output structure outside, input structure inside,
    leaves of shape ``out.shape + in.shape``). Efficient when there are fewer outputs than
    inputs. Outputs must be real (complex with ``holomorphic=True``); complex inputs of a
    real-valued function follow the ``grad`` convention. ``allow_int`` gives integer inputs
    zero blocks of their dtype (as JAX; ``float0`` for booleans).

    Example:
        >>> import numpy as np, funcgrad, funcgrad.numpy as fnp
        >>> funcgrad.jacrev(lambda x: fnp.sum(x ** 2))(np.array([1.0, 2.0])).tolist()
        [2.0, 4.0]
    """
    return _jacrev(fun, argnums, has_aux, holomorphic, allow_int, chunk_size, "jacrev",
                   "pass allow_int=True for zero rows")


def _jacrev(fun: Callable[..., Any], argnums: int | Sequence[int], has_aux: bool,
            holomorphic: bool, allow_int: bool, chunk_size: int | None, fname: str,
            int_hint: str) -> Callable[..., Any]:
    """:func:`jacrev`, its errors naming ``fname`` (the function the user called)."""
    _check_callable(fun, fname)
    _check_chunk_size(chunk_size, fname)
    argnums_t = _argnums_tuple(argnums, fname)
    single = isinstance(argnums, int | numpy.integer)

    @functools.wraps(fun)
    def jacfun(*args: Any, **kwargs: Any) -> Any:
        idx = _resolve_argnums(argnums_t, len(args), fname)
        dyn = tuple(args[i] for i in idx)
        _check_jac_inputs(dyn, idx, holomorphic, allow_int, fname, True, int_hint)
        f_partial = _partial(fun, args, kwargs, idx)
        res = _vjp(f_partial, dyn, has_aux, eager_pullback=False, fname=fname)
        y, pullback = res[0], res[1]
        y_leaves, out_tree = tree_util.tree_flatten(y)
        y_avals = [get_aval(v) for v in y_leaves]
        for a in y_avals:
            if holomorphic and a.dtype.kind != "c":
                raise TypeError(
                    f"{fname} with holomorphic=True requires complex outputs, got dtype {a.dtype}"
                )
            if not holomorphic and a.dtype.kind != "f":
                raise TypeError(
                    f"{fname} requires real-valued (float) outputs, got dtype {a.dtype}; "
                    "pass holomorphic=True for complex outputs of holomorphic functions, or "
                    "use vjp directly"
                )
        in_leaves, in_tree = tree_util.tree_flatten(dyn)
        in_avals = [get_aval(x) for x in in_leaves]
        basis = _std_basis(y_avals, [tangent_aval(a).dtype for a in y_avals])

        def pullback_flat(*b: Any) -> list[Any]:
            cts = pullback(tree_util.tree_unflatten(out_tree, list(b)))
            return [c for c, a in zip(tree_util.tree_leaves(cts), in_avals) if _is_inexact(a)]

        total = sum(_size(a) for a in y_avals)
        jac_leaves = _vmap_basis(pullback_flat, 0, chunk_size, basis, y_avals,
                                 [tangent_aval(a).dtype for a in y_avals])
        per_out = []
        offset = 0
        for ya in y_avals:
            s = _size(ya)
            it = iter(jac_leaves)
            blocks = []
            for xa in in_avals:
                if not _is_inexact(xa):
                    blocks.append(_zero_block(ya.shape + xa.shape, xa))
                    continue
                blocks.append(_jac_block(next(it), offset, s, total, ya.shape + xa.shape))
            offset += s
            sub = tree_util.tree_unflatten(in_tree, blocks)
            per_out.append(sub[0] if single else sub)
        jac = tree_util.tree_unflatten(out_tree, per_out)
        return (jac, res[2]) if has_aux else jac

    return jacfun


def jacobian(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
    chunk_size: int | None = None,
) -> Callable[..., Any]:
    """:func:`jacrev` (as ``jax.jacobian``), its errors naming ``jacobian``.

    Example:
        >>> import numpy as np, funcgrad
        >>> funcgrad.jacobian(lambda x: x * 3.0)(np.array([1.0, 2.0])).tolist()
        [[3.0, 0.0], [0.0, 3.0]]
    """
    return _jacrev(fun, argnums, has_aux, holomorphic, allow_int, chunk_size, "jacobian",
                   "pass allow_int=True for zero rows")


def hessian(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    chunk_size: int | None = None,
) -> Callable[..., Any]:
    """The Hessian of scalar ``fun``: ``jacfwd(jacrev(fun))`` (forward-over-reverse).

    For a function of a dict ``{"a": ..., "b": ...}`` the result is a dict of dicts:
    ``H["a"]["b"]`` has shape ``a.shape + b.shape``.

    Example:
        >>> import numpy as np, funcgrad, funcgrad.numpy as fnp
        >>> funcgrad.hessian(lambda x: fnp.sum(x ** 3))(np.array([1.0, 2.0])).tolist()
        [[6.0, 0.0], [0.0, 12.0]]
    """
    # Both levels report errors as hessian's: the user called hessian, not jacfwd/jacrev.
    hint = "cast it to float"
    inner = _jacrev(fun, argnums, has_aux, holomorphic, False, chunk_size, "hessian", hint)
    return _jacfwd(inner, argnums, has_aux, holomorphic, chunk_size, "hessian", hint)


def _check_pair(primals: Any, tangents: Any, fname: str, tname: str) -> tuple[tuple, tuple]:
    if not isinstance(primals, tuple | list) or not isinstance(tangents, tuple | list):
        raise TypeError(
            f"{fname}: primals and {tname} must be tuples (or lists) with one entry per "
            f"argument, got {type(primals).__name__} and {type(tangents).__name__}; for one "
            f"argument write {fname}(f, (x,), (v,))"
        )
    if len(primals) != len(tangents):
        raise ValueError(
            f"{fname}: got {len(primals)} primals but {len(tangents)} {tname}"
        )
    return tuple(primals), tuple(tangents)


def hvp(
    fun: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any]
) -> tuple[Any, tuple]:
    """Hessian-vector product of scalar ``fun``: ``(fun(*primals), H @ v)``.

    Like ``torch.autograd.functional.hvp(func, inputs, v)`` (it returns the function value
    and ``H v``), with JAX's functional signature: ``primals`` and ``tangents`` are tuples
    with one entry (pytree) per argument, and ``H v`` is a tuple shaped like ``primals``.
    Computed forward-over-reverse (``jvp`` of ``grad``), without forming ``H``.

    Example:
        >>> import numpy as np, funcgrad, funcgrad.numpy as fnp
        >>> x, v = np.array([1.0, 2.0]), np.array([1.0, 0.0])
        >>> value, (hv,) = funcgrad.hvp(lambda x: fnp.sum(x ** 3), (x,), (v,))
        >>> float(value), hv.tolist()
        (9.0, [6.0, 0.0])
    """
    primals, tangents = _check_pair(primals, tangents, "hvp", "tangents")
    # Integer arguments (counts, indices) take None tangents and get float0 results.
    vg = _value_and_grad(fun, tuple(range(len(primals))), False, False, True, "hvp")
    (value, _), (_, hv) = _jvp(vg, primals, tangents, False, "hvp")
    return value, tuple(hv)


def vhp(
    fun: Callable[..., Any], primals: Sequence[Any], v: Sequence[Any]
) -> tuple[Any, tuple]:
    """Vector-Hessian product of scalar ``fun``: ``(fun(*primals), v @ H)``.

    Like ``torch.autograd.functional.vhp``; computed reverse-over-reverse (``vjp`` of
    ``grad``). Equal to :func:`hvp` when the Hessian is symmetric (twice continuously
    differentiable ``fun``).

    Example:
        >>> import numpy as np, funcgrad, funcgrad.numpy as fnp
        >>> value, (vh,) = funcgrad.vhp(lambda x: x[0] * x[1] ** 2, (np.array([1.0, 2.0]),),
        ...                             (np.array([1.0, 0.0]),))
        >>> vh.tolist()
        [0.0, 4.0]
    """
    primals, v = _check_pair(primals, v, "vhp", "v")
    # Integer arguments (counts, indices) take None tangents and get float0 results.
    vg = _value_and_grad(fun, tuple(range(len(primals))), False, False, True, "vhp")

    def g_with_value(*xs: Any) -> Any:
        value, g = vg(*xs)
        return g, value

    _, pullback, value = _vjp(g_with_value, primals, True, eager_pullback=False, fname="vhp")
    return value, tuple(pullback(v))


def elementwise_grad(
    fun: Callable[..., Any], argnums: int | Sequence[int] = 0, allow_int: bool = False
) -> Callable[..., Any]:
    """The gradient of ``sum(fun(*args))``: for elementwise ``fun``, the derivative at each
    element (HIPS autograd's ``elementwise_grad``), one reverse pass for the whole array.

    The result is shaped like the differentiated argument(s). For functions that are not
    elementwise it is the vector-Jacobian product with a cotangent of ones. ``allow_int`` as
    in :func:`grad`: ``float0`` zeros for integer arguments instead of an error.

    Example:
        >>> import numpy as np, funcgrad, funcgrad.numpy as fnp
        >>> funcgrad.elementwise_grad(lambda x: x ** 2)(np.array([1.0, 2.0, 3.0])).tolist()
        [2.0, 4.0, 6.0]
    """
    fname = "elementwise_grad"
    _check_callable(fun, fname)
    argnums_t = _argnums_tuple(argnums, fname)
    single = isinstance(argnums, int | numpy.integer)

    @functools.wraps(fun)
    def eg(*args: Any, **kwargs: Any) -> Any:
        idx = _resolve_argnums(argnums_t, len(args), fname)
        dyn = tuple(args[i] for i in idx)
        _check_diff_args(dyn, idx, allow_int, False, fname)
        y, pullback = _vjp(_partial(fun, args, kwargs, idx), dyn, False, eager_pullback=True,
                           fname=fname)

        def one(o: Any) -> Any:
            a = get_aval(o)
            if not _is_inexact(a):
                return numpy.zeros(a.shape, float0)
            return _ones_like_aval(a.strip_weak())

        g = pullback(tree_util.tree_map(one, y))
        return g[0] if single else tuple(g)

    return eg

