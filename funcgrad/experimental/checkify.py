"""Run-time checks as values: ``jax.experimental.checkify``.

``checkify(f, errors=...)`` returns ``g`` with ``g(*args) == (err, f(*args))``: the checks
that ``f`` makes while it runs (user assertions with :func:`check`, and automatic checks for
NaNs, integer division by zero and out-of-bounds indices) become an :class:`Error` value
instead of exceptions, so they work under ``jit``, ``vmap``, ``grad`` and inside loops,
where Python cannot raise on a traced value. ``err.throw()`` raises
:class:`~funcgrad.errors.JaxRuntimeError` with the first failure's message, ``err.get()``
gives the message (or ``None``).

How it works: ``f`` is traced to a jaxpr, which is then evaluated equation by equation on the
current trace (so outer ``jit``/``vmap``/``grad`` transform it) while an error state is
threaded through: an ``int32`` code (0: no error, ``k``: the ``k``-th check site failed
first) and, per site, the values its message needs. Sites are numbered by one walk of the
jaxpr (into ``jit``, ``remat``, custom-derivative, ``cond``, ``while`` and ``scan`` bodies)
before evaluation, so the state has the same structure everywhere and loops carry it.

Example:
    >>> import funcgrad.numpy as fnp
    >>> def f(x):
    ...     check(x > 0, "x must be positive, got {}", x)
    ...     return fnp.sqrt(fnp.abs(x))
    >>> err, y = checkify(f)(fnp.asarray(-1.0))
    >>> err.get()
    'x must be positive, got -1.0 (`check` failed)'
    >>> err, y = checkify(f)(fnp.asarray(4.0))
    >>> err.throw() is None, float(y)
    (True, 2.0)
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Sequence
from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad import backend, config
from funcgrad.avals import ShapedArray, get_aval
from funcgrad.core import SourceInfo, bind, current_trace
from funcgrad.errors import JaxRuntimeError
from funcgrad.interpreters.staging import trace_to_jaxpr
from funcgrad.ir import ClosedJaxpr, Eqn, Jaxpr, Literal
from funcgrad.ops.checks import check_error_p, check_p, format_check_message, split_payloads
from funcgrad.ops.control_flow import cond_p, scan, scan_p, switch, while_loop, while_p
from funcgrad.ops.custom_derivatives import custom_jvp_call_p, custom_vjp_call_p
from funcgrad.ops.indexing import Operand, index_layout
from funcgrad.ops.jit import jit_p
from funcgrad.ops.remat import remat_p
from funcgrad.tree_util import transforms as tree_util  # keys are nodes here

__all__ = [
    "checkify", "check", "debug_check", "check_error", "Error", "ErrorCategory", "FailedCheckError",
    "NaNError", "DivisionByZeroError", "OOBError", "JaxRuntimeError", "init_error",
    "user_checks", "nan_checks", "div_checks", "index_checks", "float_checks",
    "automatic_checks", "all_checks",
]


# ---------------------------------------------------------------------------------------------
# Error categories and the sets ``errors=`` takes


class ErrorCategory:
    """A kind of check (JAX's error classes, used as members of the ``errors=`` sets)."""


class FailedCheckError(ErrorCategory):
    """A user's :func:`check` failed."""


class NaNError(ErrorCategory):
    """A primitive made a NaN (``nan_checks``)."""


class DivisionByZeroError(ErrorCategory):
    """An integer division or remainder by zero (``div_checks``)."""


class OOBError(ErrorCategory):
    """An out-of-bounds index in indexing or a dynamic slice (``index_checks``)."""


user_checks: frozenset[type] = frozenset({FailedCheckError})
nan_checks: frozenset[type] = frozenset({NaNError})
div_checks: frozenset[type] = frozenset({DivisionByZeroError})
index_checks: frozenset[type] = frozenset({OOBError})
float_checks: frozenset[type] = nan_checks | div_checks
automatic_checks: frozenset[type] = float_checks | index_checks
all_checks: frozenset[type] = automatic_checks | user_checks


# ---------------------------------------------------------------------------------------------
# User checks


def _check(pred: Any, msg: str, fmt_args: tuple, fmt_kwargs: dict, debug: bool) -> None:
    if not isinstance(msg, str):
        raise TypeError(f"check: the message must be a str, got {type(msg).__name__}")
    pred = fnp.asarray(pred)
    if get_aval(pred).shape != ():
        raise TypeError(f"check takes a scalar pred as argument, got shape {pred.shape}")
    leaves, tree = tree_util.tree_flatten((fmt_args, fmt_kwargs))
    leaves = [fnp.asarray(v) for v in leaves]
    bind(check_p, fnp.asarray(pred, dtype=bool), *leaves, fmt=msg, tree=tree, debug=debug)


def check(pred: Any, msg: str, *fmt_args: Any, **fmt_kwargs: Any) -> None:
    """Assert the scalar ``pred``; when it is false, the error is ``msg.format(*fmt_args,
    **fmt_kwargs)`` (the formatting arguments are arrays, pytrees of them, or numbers).

    Inside :func:`checkify` a failure becomes the returned :class:`Error`; outside it, a false
    ``pred`` raises :class:`~funcgrad.errors.JaxRuntimeError` (eagerly, or when a ``jit``
    program runs).

    Example:
        >>> check(True, "never shown")
        >>> check(False, "x was {}", 3)
        Traceback (most recent call last):
        ...
        funcgrad.errors.JaxRuntimeError: x was 3 (`check` failed)
    """
    _check(pred, msg, fmt_args, fmt_kwargs, debug=False)


def debug_check(pred: Any, msg: str, *fmt_args: Any, **fmt_kwargs: Any) -> None:
    """As :func:`check` inside :func:`checkify`; does nothing outside it.

    Example:
        >>> debug_check(False, "ignored outside checkify")
        >>> checkify(lambda: debug_check(False, "seen"))()[0].get()
        'seen (`check` failed)'
    """
    _check(pred, msg, fmt_args, fmt_kwargs, debug=True)


def check_error(error: Error) -> None:
    """Raise ``error`` (an :class:`Error` from an inner :func:`checkify`) if it holds a
    failure: inside ``checkify`` it becomes this function's error (the functional form),
    elsewhere it raises :class:`~funcgrad.errors.JaxRuntimeError` (eagerly, or when a
    ``jit`` program runs).

    Example:
        >>> import funcgrad.numpy as fnp
        >>> inner = checkify(lambda x: check(x > 0, "inner {}", x))
        >>> def outer(x):
        ...     err, _ = inner(x)
        ...     check_error(err)
        ...     return x
        >>> checkify(outer)(fnp.asarray(-1.0))[0].get()
        'inner -1.0 (`check` failed)'
    """
    if not isinstance(error, Error):
        raise TypeError(f"check_error takes a checkify Error, got {type(error).__name__}")
    if not error._sites:
        return
    flat = [p for ps in error._payloads for p in ps]
    bind(check_error_p, error._code, *flat, sites=error._sites,
         counts=tuple(len(ps) for ps in error._payloads))


# ---------------------------------------------------------------------------------------------
# Check sites: every place of a program that can fail, with what its message needs


class _Site:
    """One place that can fail: its category, its payload's avals, its message."""

    __slots__ = ("category", "payload_avals", "describe")

    def __init__(self, category: type, payload_avals: Sequence[ShapedArray],
                 describe: Callable[[list[Any]], str]) -> None:
        self.category = category
        self.payload_avals = tuple(payload_avals)
        self.describe = describe  # host payload values -> message


def _subjaxprs(eqn: Eqn) -> list[ClosedJaxpr]:
    out: list[ClosedJaxpr] = []
    for v in eqn.params.values():
        if isinstance(v, ClosedJaxpr):
            out.append(v)
        elif isinstance(v, tuple) and v and all(isinstance(b, ClosedJaxpr) for b in v):
            out.extend(v)
    return out


# JAX checks its div primitive, whatever the dtype (float x / 0 too; floor division lowers to
# it), and not rem: an integer x % 0 is no error there
_DIVISIONS = frozenset({"div", "floor_divide"})
#: indexing primitives and where their index arrays start among the operands
_INDEXINGS = {"gather": 1, "scatter": 2, "scatter_add": 2, "scatter_mul": 2,
              "scatter_min": 2, "scatter_max": 2}


class _Sites:
    """The numbering of a program's check sites (codes 1, 2, ...), found by one walk."""

    def __init__(self, errors: frozenset[type]) -> None:
        self.errors = errors
        self.sites: list[_Site] = []
        self.by_eqn: dict[tuple[int, str], int] = {}  # (id(eqn), kind) -> code
        self._has: dict[int, bool] = {}  # id(jaxpr) -> whether it holds a site

    def walk(self, jaxpr: Jaxpr) -> bool:
        key = id(jaxpr)
        if key in self._has:
            return self._has[key]
        found = False
        for eqn in jaxpr.eqns:
            subs = _subjaxprs(eqn)
            if subs:
                for s in subs:
                    found = self.walk(s.jaxpr) or found
                continue
            found = self._first_order(eqn) or found
        self._has[key] = found
        return found

    def holds_sites(self, eqn: Eqn) -> bool:
        return any(self._has.get(id(s.jaxpr), False) for s in _subjaxprs(eqn))

    def _add(self, eqn: Eqn, kind: str, site: _Site) -> None:
        self.sites.append(site)
        self.by_eqn[(id(eqn), kind)] = len(self.sites)

    def _first_order(self, eqn: Eqn) -> bool:
        name = eqn.prim.name
        at = (eqn.source_info or SourceInfo("", 0, "")).at()
        n = len(self.sites)
        if eqn.prim is check_error_p:
            # an Error value checked again: each of its sites is one of this program's
            for j, site in enumerate(eqn.params["sites"]):
                self._add(eqn, f"err{j}", site)
            return len(self.sites) > n
        if eqn.prim is check_p:
            if FailedCheckError in self.errors:
                fmt, tree = eqn.params["fmt"], eqn.params["tree"]
                self._add(eqn, "check", _Site(
                    FailedCheckError, [a.aval for a in eqn.invars[1:]],
                    lambda payload, fmt=fmt, tree=tree: format_check_message(fmt, tree, payload)))
            return len(self.sites) > n
        if NaNError in self.errors and any(v.aval.dtype.kind in "fc" for v in eqn.outvars):
            self._add(eqn, "nan", _Site(
                NaNError, [], lambda payload, name=name, at=at:
                f"nan generated by primitive: {name}{at}."))
        if DivisionByZeroError in self.errors and name in _DIVISIONS:
            self._add(eqn, "div", _Site(
                DivisionByZeroError, [], lambda payload, at=at: f"division by zero{at}."))
        if OOBError in self.errors and name == "dynamic_slice":
            shape = eqn.invars[0].aval.shape
            sizes = eqn.params["slice_sizes"]
            self._add(eqn, "oob", _Site(
                OOBError, [ShapedArray((len(shape),), numpy.dtype(numpy.int64))],
                lambda payload, shape=shape, sizes=sizes, at=at: _oob_message(
                    shape, sizes, payload[0], at)))
        if OOBError in self.errors and name in _INDEXINGS:
            shape = eqn.invars[0].aval.shape
            i64 = numpy.dtype(numpy.int64)
            self._add(eqn, "oob", _Site(
                OOBError, [ShapedArray((), i64), ShapedArray((), i64)],
                lambda payload, shape=shape, at=at: (
                    f"out-of-bounds indexing for array of shape {shape}: index "
                    f"{int(payload[0])} is out of bounds for axis {int(payload[1])} with size "
                    f"{shape[int(payload[1])]}{at}.")))
        return len(self.sites) > n

    def initial_state(self) -> tuple[Any, list[list[Any]]]:
        code = fnp.zeros((), numpy.int32)
        payloads = [[fnp.zeros(a.shape, a.dtype) for a in s.payload_avals] for s in self.sites]
        return code, payloads


def _oob_message(shape: tuple[int, ...], sizes: tuple[int, ...], starts: Any, at: str) -> str:
    starts = numpy.asarray(starts).tolist()
    for axis, (st, sz, n) in enumerate(zip(starts, sizes, shape)):
        if not 0 <= st <= n - sz:
            return (f"out-of-bounds indexing for array of shape {shape}: index {st} is out "
                    f"of bounds for axis {axis} with size {n}{at}.")
    return f"out-of-bounds indexing for array of shape {shape}{at}."


# ---------------------------------------------------------------------------------------------
# Threading the error state through a program


State = tuple[Any, list[list[Any]]]


def _record(state: State, code: int, failed: Any, payload: Sequence[Any]) -> State:
    """The state after site ``code`` ran: it is the error when it failed and none came
    before (the first failure wins, as later ones may be its consequences)."""
    old, payloads = state
    new = fnp.logical_and(fnp.equal(old, 0), failed)
    out_code = fnp.where(new, numpy.int32(code), old)
    payloads = list(payloads)
    payloads[code - 1] = [fnp.where(new, fnp.asarray(p).astype(o.dtype), o)
                          for p, o in zip(payload, payloads[code - 1])]
    return out_code, payloads


def _automatic(eqn: Eqn, invals: list[Any], outs: list[Any], state: State,
               sites: _Sites) -> State:
    code = sites.by_eqn.get((id(eqn), "nan"))
    if code is not None:
        bad = functools.reduce(fnp.logical_or, [fnp.any(fnp.isnan(o)) for o in outs])
        state = _record(state, code, bad, [])
    code = sites.by_eqn.get((id(eqn), "div"))
    if code is not None:
        state = _record(state, code, fnp.any(fnp.equal(invals[1], 0)), [])
    code = sites.by_eqn.get((id(eqn), "oob"))
    if code is not None and eqn.prim.name in _INDEXINGS:
        state = _record(state, code, *_index_oob(eqn, invals))
    elif code is not None:
        x, *starts = invals
        shape, sizes = get_aval(x).shape, eqn.params["slice_sizes"]
        starts = [fnp.asarray(s).astype(numpy.int64) for s in starts]
        # a start is out of bounds when the slice would reach past either end (the
        # operation then clamps it, as JAX's)
        bad = functools.reduce(fnp.logical_or, [
            fnp.logical_or(s < 0, s > n - sz) for s, n, sz in zip(starts, shape, sizes)],
            fnp.asarray(False))
        state = _record(state, code, bad, [fnp.stack(starts) if starts else
                                           fnp.zeros((0,), numpy.int64)])
    return state


def _index_oob(eqn: Eqn, invals: list[Any]) -> tuple[Any, list[Any]]:
    """Whether an index array of a gather/scatter is out of bounds (as NumPy counts: from
    ``-n`` to ``n - 1``), and the first such index (made non-negative, as JAX reports it)
    with its axis; the first index array that fails wins."""
    x = invals[0]
    shape = get_aval(x).shape
    ops = invals[_INDEXINGS[eqn.prim.name]:]
    indexer = eqn.params["indexer"]
    lay = index_layout(eqn.prim.name, indexer, shape, tuple(get_aval(o).shape for o in ops))
    bad = fnp.asarray(False)
    value = fnp.zeros((), numpy.int64)
    axis = fnp.zeros((), numpy.int64)
    for e in reversed(indexer):  # the first failing index array is kept last
        if type(e) is not Operand or get_aval(ops[e.k]).dtype.kind not in "iu":
            continue
        ax = lay.operand_axes[e.k][0]
        n = shape[ax]
        idx = fnp.ravel(fnp.asarray(ops[e.k]).astype(numpy.int64))
        if get_aval(idx).shape == (0,):
            continue
        mask = fnp.logical_or(idx < -n, idx >= n)
        first = idx[fnp.argmax(mask)]
        here = fnp.any(mask)
        value = fnp.where(here, fnp.where(first < 0, first + n, first), value)
        axis = fnp.where(here, numpy.int64(ax), axis)
        bad = fnp.logical_or(bad, here)
    return bad, [value, axis]


def _interpret(jaxpr: Jaxpr, consts: Sequence[Any], args: Sequence[Any], state: State,
               sites: _Sites) -> tuple[State, list[Any]]:
    env: dict[Any, Any] = dict(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, args))

    def read(a: Any) -> Any:
        return a.val if type(a) is Literal else env[a]

    for eqn in jaxpr.eqns:
        invals = [read(a) for a in eqn.invars]
        if eqn.prim is check_p:
            code = sites.by_eqn.get((id(eqn), "check"))
            if code is not None:
                state = _record(state, code, fnp.logical_not(invals[0]), invals[1:])
            outs: list[Any] = []
        elif eqn.prim is check_error_p:
            got, *flat = invals
            for j, payload in enumerate(split_payloads(flat, eqn.params["counts"])):
                state = _record(state, sites.by_eqn[(id(eqn), f"err{j}")],
                                fnp.equal(got, j + 1), payload)
            outs = []
        elif sites.holds_sites(eqn):
            rule = _HIGHER_ORDER.get(eqn.prim)
            if rule is None:
                raise TypeError(f"checkify: checks inside {eqn.prim.name} are not supported; "
                                "move them out of it")
            state, outs = rule(eqn, invals, state, sites)
        else:
            params = eqn.params
            if params.get("mode") == "raise" and (id(eqn), "oob") in sites.by_eqn:
                # concrete index arrays raise NumPy's IndexError; checked, the error is
                # recorded instead and the operation clamps, as it does with traced indices
                params = dict(params, mode="clamp")
            outs = bind(eqn.prim, *invals, **params)
            if not _subjaxprs(eqn):
                state = _automatic(eqn, invals, outs, state, sites)
        env.update(zip(eqn.outvars, outs))
    return state, [read(a) for a in jaxpr.outvars]


def _inline(param: str) -> Callable[..., tuple[State, list[Any]]]:
    def rule(eqn: Eqn, invals: list[Any], state: State, sites: _Sites):
        cj = eqn.params[param]
        return _interpret(cj.jaxpr, cj.consts, invals, state, sites)

    return rule


def _cond_rule(eqn: Eqn, invals: list[Any], state: State, sites: _Sites):
    index, *ops = invals

    def branch(cj: ClosedJaxpr) -> Callable[..., Any]:
        return lambda st, xs: _interpret(cj.jaxpr, cj.consts, xs, st, sites)

    state, outs = switch(index, [branch(b) for b in eqn.params["branches"]], state, list(ops))
    return state, list(outs)


def _while_rule(eqn: Eqn, invals: list[Any], state: State, sites: _Sites):
    p = eqn.params
    cj, bj = p["cond_jaxpr"], p["body_jaxpr"]
    cc = invals[:p["cond_nconsts"]]
    bc = invals[p["cond_nconsts"]:p["cond_nconsts"] + p["body_nconsts"]]
    carry = list(invals[p["cond_nconsts"] + p["body_nconsts"]:])

    def run_cond(st: State, c: list[Any]) -> tuple[State, Any]:
        st, (pred,) = _interpret(cj.jaxpr, cj.consts, [*cc, *c], st, sites)
        return st, pred

    # The condition is evaluated after each body (and once before the loop), so its checks
    # are recorded in the carried state too.
    state, pred = run_cond(state, carry)

    def body(v: Any) -> Any:
        st, c, _ = v
        st, c = _interpret(bj.jaxpr, bj.consts, [*bc, *c], st, sites)
        st, pr = run_cond(st, c)
        return st, list(c), pr

    state, carry, _ = while_loop(lambda v: v[2], body, (state, carry, pred))
    return state, list(carry)


def _scan_rule(eqn: Eqn, invals: list[Any], state: State, sites: _Sites):
    p = eqn.params
    j, nc, ncarry = p["jaxpr"], p["num_consts"], p["num_carry"]
    consts, carry, xs = invals[:nc], list(invals[nc:nc + ncarry]), list(invals[nc + ncarry:])

    def body(c: Any, x: Any) -> Any:
        st, cr = c
        st, outs = _interpret(j.jaxpr, j.consts, [*consts, *cr, *x], st, sites)
        return (st, list(outs[:ncarry])), list(outs[ncarry:])

    (state, carry), ys = scan(body, (state, carry), xs, length=p["length"],
                              reverse=p["reverse"])
    return state, [*carry, *ys]


_HIGHER_ORDER: dict[Any, Callable[..., tuple[State, list[Any]]]] = {
    jit_p: _inline("jaxpr"),
    remat_p: _inline("jaxpr"),
    # a check inside a custom-derivative function runs on its primal computation (the
    # custom rule applies to derivatives taken outside checkify)
    custom_jvp_call_p: _inline("fun"),
    custom_vjp_call_p: _inline("fun"),
    cond_p: _cond_rule,
    while_p: _while_rule,
    scan_p: _scan_rule,
}


# ---------------------------------------------------------------------------------------------
# The error value


class Error:
    """The checks' outcome: ``get()`` (the first failure's message, or ``None``),
    ``throw()`` (raise it as :class:`~funcgrad.errors.JaxRuntimeError`),
    ``get_exception()``. A pytree (an ``int32`` code and the failed site's values), so it
    passes out of ``jit`` and ``vmap``; under ``vmap`` each example has its own error and
    messages say ``at mapped index i``.

    Example:
        >>> import funcgrad, funcgrad.numpy as fnp
        >>> f = checkify(lambda x: check(x > 0, "bad {}", x))
        >>> print(funcgrad.vmap(f)(fnp.asarray([1.0, -2.0]))[0].get())
        at mapped index 1: bad -2.0 (`check` failed)
    """

    def __init__(self, code: Any, payloads: Sequence[Sequence[Any]],
                 sites: Sequence[_Site]) -> None:
        self._code = code
        self._payloads = [list(p) for p in payloads]
        self._sites = tuple(sites)

    def _message(self, code: int, idx: tuple[int, ...]) -> str:
        # arrays (0-d ones too, as the check's own values print), not NumPy scalars
        payload = [numpy.asarray(numpy.asarray(backend.to_numpy(p))[idx])
                   for p in self._payloads[code - 1]]
        return self._sites[code - 1].describe(payload)

    def get(self) -> str | None:
        """The message of the first failed check, or ``None`` when all passed."""
        code = numpy.asarray(backend.to_numpy(self._code))
        if code.ndim == 0:
            return None if code == 0 else self._message(int(code), ())
        msgs = [f"at mapped index {', '.join(map(str, idx))}: {self._message(int(code[idx]), idx)}"
                for idx in itertools.product(*map(range, code.shape)) if code[idx] != 0]
        return "\n".join(msgs) if msgs else None

    def get_exception(self) -> JaxRuntimeError | None:
        """The failure as an exception (not raised), or ``None``."""
        msg = self.get()
        return None if msg is None else JaxRuntimeError(msg)

    def throw(self) -> None:
        """Raise :class:`~funcgrad.errors.JaxRuntimeError` if a check failed."""
        exc = self.get_exception()
        if exc is not None:
            raise exc

    def __str__(self) -> str:
        try:
            return f"Error({self.get()})"
        except Exception:  # a traced error (inside jit) has no message yet
            return f"Error(code={self._code!r})"

    __repr__ = __str__


tree_util.register_pytree_node(
    Error,
    lambda e: ((e._code, e._payloads), e._sites),
    lambda sites, children: Error(children[0], children[1], sites),
)


def init_error() -> Error:
    """An :class:`Error` with no failure (JAX's ``checkify.init_error``).

    Example:
        >>> init_error().get() is None
        True
    """
    return Error(fnp.zeros((), numpy.int32), [], ())


# ---------------------------------------------------------------------------------------------
# The transformation


def checkify(f: Callable[..., Any],
             errors: frozenset[type] | set[type] = user_checks) -> Callable[..., Any]:
    """``f`` returning ``(err, out)``: its checks in ``errors`` as an :class:`Error`.

    ``errors`` is a set of categories: ``user_checks`` (the default: :func:`check`),
    ``nan_checks`` (a primitive made a NaN), ``div_checks`` (integer division or remainder
    by zero), ``index_checks`` (dynamic slices reaching out of bounds), ``float_checks``
    (NaN and division), ``automatic_checks`` (all but the user's), ``all_checks``. The first
    failure is reported. Works under and around ``jit``, ``vmap`` and ``grad``, and into
    ``cond``/``switch``, ``while_loop``/``fori_loop`` and ``scan`` bodies.

    Example:
        >>> import funcgrad, funcgrad.numpy as fnp
        >>> err, y = funcgrad.jit(checkify(lambda x: x * fnp.nan, errors=float_checks))(1.0)
        >>> err.get().startswith("nan generated by primitive: mul")
        True
    """
    errors = frozenset(errors)
    unknown = [e for e in errors if not (isinstance(e, type) and issubclass(e, ErrorCategory))]
    if unknown:
        raise TypeError(f"checkify: errors must be a set of check categories (user_checks, "
                        f"float_checks, ...), got {unknown}")

    @functools.wraps(f)
    def checked(*args: Any, **kwargs: Any) -> tuple[Error, Any]:
        leaves, in_tree = tree_util.tree_flatten((args, kwargs))
        store: list[Any] = []

        def flat(*xs: Any) -> list[Any]:
            a, kw = tree_util.tree_unflatten(in_tree, list(xs))
            out_leaves, out_tree = tree_util.tree_flatten(f(*a, **kw))
            store.append(out_tree)
            return out_leaves

        token = config.checked_static_indices.set(OOBError in errors)
        try:
            closed = trace_to_jaxpr(flat, [get_aval(x) for x in leaves], current_trace())
        finally:
            config.checked_static_indices.reset(token)
        sites = _Sites(errors)
        sites.walk(closed.jaxpr)
        state, outs = _interpret(closed.jaxpr, closed.consts, leaves, sites.initial_state(),
                                 sites)
        code, payloads = state
        return Error(code, payloads, sites.sites), tree_util.tree_unflatten(store[0], outs)

    return checked
