"""The jaxpr IR: variables, literals, equations, jaxprs; typecheck, eval, DCE, printing.

Example:
    >>> import funcgrad, funcgrad.numpy as fnp, numpy as np
    >>> print(funcgrad.make_jaxpr(lambda x: fnp.sum(fnp.sin(x)))(np.ones(3)))
    { lambda ; a:f64[3]. let
        b:f64[3] = sin a
        c:f64[] = reduce_sum[axes=(0,)] b
      in (c,) }
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import numpy

from funcgrad.avals import ShapedArray, get_aval, result_dtype
from funcgrad.core import Primitive, SourceInfo, bind, jaxpr_evaluator
from funcgrad.errors import JaxprTypeError, replayed_source

__all__ = [
    "Var",
    "Literal",
    "Eqn",
    "Jaxpr",
    "ClosedJaxpr",
    "Effect",
    "effect_rules",
    "eval_jaxpr",
    "typecheck_jaxpr",
    "jaxpr_as_fun",
    "dce_jaxpr",
    "pp_jaxpr",
    "pp_call_primitives",
    "JaxprTypeError",
]

_var_ids = itertools.count()


class Var:
    """A jaxpr variable: an abstract value with identity."""

    __slots__ = ("aval", "id")

    def __init__(self, aval: ShapedArray) -> None:
        self.aval = aval
        self.id = next(_var_ids)

    def __repr__(self) -> str:
        return f"Var({self.id}:{self.aval.str_short()})"


class Literal:
    """A constant written into the jaxpr (a Python or NumPy scalar)."""

    __slots__ = ("val", "aval")

    def __init__(self, val: Any, aval: ShapedArray | None = None) -> None:
        self.val = val
        self.aval = aval if aval is not None else get_aval(val)

    def __repr__(self) -> str:
        return f"Literal({self.val!r})"


Atom = Var | Literal


class Effect:
    """A side effect an equation has (JAX's ``jax.core.Effect``): what ``eqn.effects``,
    ``jaxpr.effects`` and ``closed_jaxpr.effects`` hold. The primitive that has it owns the
    instance (``io_callback``'s ``IOEffect``, ``debug.callback``'s ``DebugEffect``, ...)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


#: primitive -> its effects given an equation's params; filled by the primitives that have
#: effects (callbacks). A primitive carrying jaxprs has its inner equations' effects too.
effect_rules: dict[Primitive, Callable[[dict[str, Any]], frozenset[Effect]]] = {}


def _effects(eqns: Sequence[Eqn]) -> set[Effect]:
    out: set[Effect] = set()
    for eqn in eqns:
        rule = effect_rules.get(eqn.prim)
        if rule is not None:
            out.update(rule(eqn.params))
        if eqn.prim.carries_jaxprs:
            for sub in sub_jaxprs(eqn.params):
                out.update(_effects(sub.eqns))
    return out


class Eqn:
    """``outvars = prim[params] invars``, with the user's source line."""

    __slots__ = ("prim", "invars", "outvars", "params", "source_info")

    def __init__(
        self,
        prim: Primitive,
        invars: list[Atom],
        outvars: list[Var],
        params: dict[str, Any],
        source_info: SourceInfo | None = None,
    ) -> None:
        self.prim = prim
        self.invars = invars
        self.outvars = outvars
        self.params = params
        self.source_info = source_info

    @property
    def primitive(self) -> Primitive:
        """The primitive, under JAX's attribute name (``eqn.primitive.name``)."""
        return self.prim

    @property
    def effects(self) -> set[Effect]:
        """The equation's side effects (:class:`Effect`), with those of its inner jaxprs."""
        return _effects((self,))

    def replace(self, **kw: Any) -> Eqn:
        return Eqn(
            kw.get("prim", self.prim),
            kw.get("invars", self.invars),
            kw.get("outvars", self.outvars),
            kw.get("params", self.params),
            kw.get("source_info", self.source_info),
        )

    def __repr__(self) -> str:
        return f"Eqn({self.prim.name})"


class Jaxpr:
    """A closed-over-nothing function in A-normal form: constvars, invars, eqns, outvars.

    ``distinct``: whoever built it knows that no two of its equations compute the same value
    (staging that merged every equation as it was recorded, :mod:`funcgrad.interpreters.trace_cse`),
    so a common-subexpression sweep would find nothing. False (not known) by default: a jaxpr
    made from another never inherits it.
    """

    __slots__ = ("constvars", "invars", "outvars", "eqns", "distinct")

    def __init__(
        self,
        constvars: Sequence[Var],
        invars: Sequence[Var],
        outvars: Sequence[Atom],
        eqns: Sequence[Eqn],
        distinct: bool = False,
    ) -> None:
        self.constvars = list(constvars)
        self.invars = list(invars)
        self.outvars = list(outvars)
        self.eqns = list(eqns)
        self.distinct = distinct

    @property
    def in_avals(self) -> list[ShapedArray]:
        return [v.aval for v in self.invars]

    @property
    def out_avals(self) -> list[ShapedArray]:
        return [v.aval for v in self.outvars]

    @property
    def effects(self) -> set[Effect]:
        """The side effects of its equations (:class:`Effect`), as JAX's ``Jaxpr.effects``:
        empty for a pure program.

        Example:
            >>> import funcgrad, numpy as np
            >>> funcgrad.make_jaxpr(lambda x: x * 2)(np.ones(2)).jaxpr.effects
            set()
        """
        return _effects(self.eqns)

    def __str__(self) -> str:
        return pp_jaxpr(self)

    __repr__ = __str__

    def pretty_print(self, **kwargs: Any) -> str:
        """The readable form (``str``), as JAX's ``Jaxpr.pretty_print``; JAX's formatting
        options (``source_info=``, ``print_shapes=``, ...) are accepted and ignored."""
        del kwargs
        return pp_jaxpr(self)


class ClosedJaxpr:
    """A jaxpr together with the values of its constvars.

    ``str`` gives the readable form; ``.jaxpr``, ``.consts``, ``.in_avals`` and
    ``.out_avals`` give the parts.
    """

    # Weak references let caches of derived jaxprs (jit, AD of higher-order primitives) drop
    # their entries when the jaxpr they were derived from dies.
    __slots__ = ("jaxpr", "consts", "__weakref__")

    def __init__(self, jaxpr: Jaxpr, consts: Sequence[Any]) -> None:
        self.jaxpr = jaxpr
        self.consts = list(consts)

    @property
    def in_avals(self) -> list[ShapedArray]:
        return self.jaxpr.in_avals

    @property
    def out_avals(self) -> list[ShapedArray]:
        return self.jaxpr.out_avals

    @property
    def eqns(self) -> list[Eqn]:
        return self.jaxpr.eqns

    @property
    def effects(self) -> set[Effect]:
        """The side effects of its equations (see :attr:`Jaxpr.effects`)."""
        return self.jaxpr.effects

    # The jaxpr's parts, as JAX's ClosedJaxpr gives them.
    @property
    def constvars(self) -> list[Var]:
        return self.jaxpr.constvars

    @property
    def invars(self) -> list[Var]:
        return self.jaxpr.invars

    @property
    def outvars(self) -> list[Atom]:
        return self.jaxpr.outvars

    @property
    def literals(self) -> list[Any]:
        """The constants (JAX's name)."""
        return self.consts

    def __call__(self, *args: Any) -> list[Any]:
        return eval_jaxpr(self.jaxpr, self.consts, *args)

    def __str__(self) -> str:
        return pp_jaxpr(self.jaxpr)

    __repr__ = __str__

    def pretty_print(self, **kwargs: Any) -> str:
        """The readable form (``str``), as JAX's ``ClosedJaxpr.pretty_print``."""
        return self.jaxpr.pretty_print(**kwargs)


# ---------------------------------------------------------------------------------------------


def eval_jaxpr(jaxpr: Jaxpr, consts: Sequence[Any], *args: Any,
               propagate_source_info: bool = True) -> list[Any]:
    """Evaluate ``jaxpr`` by binding each equation on the current trace (JAX's
    ``jax.core.eval_jaxpr``, also :func:`funcgrad.core.eval_jaxpr`); a list of the results.

    Because it uses ``bind``, evaluating a jaxpr under a transformation transforms it. What
    each equation stages or raises is attributed to the user's line it was first traced from
    (:data:`funcgrad.errors.replayed_source`; with ``propagate_source_info=False``, to the
    caller's line, as JAX's); a higher-order equation's rule may run the user's own functions
    (custom derivative rules), whose lines are found on the stack again.

    Example:
        >>> import funcgrad, numpy as np
        >>> closed = funcgrad.make_jaxpr(lambda x, y: x * y + 1.0)(1.0, 2.0)
        >>> eval_jaxpr(closed.jaxpr, closed.consts, np.array(3.0), np.array(4.0))
        [array(13.)]
        >>> float(funcgrad.grad(lambda x: eval_jaxpr(closed.jaxpr, closed.consts, x, 4.0)[0])(3.0))
        4.0
    """
    if isinstance(jaxpr, ClosedJaxpr):
        raise TypeError("eval_jaxpr takes a Jaxpr and its consts: pass closed.jaxpr and "
                        "closed.consts (or call jaxpr_as_fun(closed)), not a ClosedJaxpr")
    if len(consts) != len(jaxpr.constvars):
        raise TypeError(f"jaxpr has {len(jaxpr.constvars)} constvars, got {len(consts)} "
                        "consts")
    if len(args) != len(jaxpr.invars):
        raise TypeError(f"jaxpr takes {len(jaxpr.invars)} arguments, got {len(args)}")
    env: dict[Var, Any] = dict(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, args))
    current = replayed_source.get()
    for eqn in jaxpr.eqns:
        invals = [a.val if type(a) is Literal else env[a] for a in eqn.invars]
        src = None if eqn.prim.carries_jaxprs or not propagate_source_info \
            else eqn.source_info
        if src is current:
            outs = bind(eqn.prim, *invals, **eqn.params)
        else:
            token = replayed_source.set(src)
            try:
                outs = bind(eqn.prim, *invals, **eqn.params)
            finally:
                replayed_source.reset(token)
        env.update(zip(eqn.outvars, outs))
    return [a.val if type(a) is Literal else env[a] for a in jaxpr.outvars]


jaxpr_evaluator.append(eval_jaxpr)


def jaxpr_as_fun(closed_jaxpr: ClosedJaxpr) -> Callable[..., list[Any]]:
    """``closed_jaxpr`` as a function of its arguments returning the list of its results
    (JAX's ``jax.extend.core.jaxpr_as_fun``); it transforms like any function.

    Example:
        >>> import funcgrad, funcgrad.numpy as fnp
        >>> f = jaxpr_as_fun(funcgrad.make_jaxpr(lambda x: fnp.sin(x))(0.0))
        >>> f(0.0), float(funcgrad.grad(lambda x: f(x)[0])(0.0))
        ([array(0.)], 1.0)
    """
    if not isinstance(closed_jaxpr, ClosedJaxpr):
        raise TypeError(f"jaxpr_as_fun takes a ClosedJaxpr, got {type(closed_jaxpr).__name__}")

    def fun(*args: Any) -> list[Any]:
        return eval_jaxpr(closed_jaxpr.jaxpr, closed_jaxpr.consts, *args)

    return fun


def typecheck_jaxpr(jaxpr: Jaxpr) -> None:
    """Check every variable is defined once before use and avals match the shape rules.

    Example:
        >>> import funcgrad, numpy as np
        >>> typecheck_jaxpr(funcgrad.make_jaxpr(lambda x: x * 2)(np.ones(2)).jaxpr)
    """
    defined: set[Var] = set()

    def define(v: Var) -> None:
        if v in defined:
            raise JaxprTypeError(f"variable {v} defined twice")
        defined.add(v)

    def read(a: Atom) -> ShapedArray:
        if isinstance(a, Literal):
            return a.aval
        if a not in defined:
            raise JaxprTypeError(f"variable {a} used before definition")
        return a.aval

    for v in jaxpr.constvars:
        define(v)
    for v in jaxpr.invars:
        define(v)
    for eqn in jaxpr.eqns:
        in_avals = [read(a) for a in eqn.invars]
        rule = eqn.prim.abstract_eval
        if rule is not None:
            out_avals = rule(*in_avals, **eqn.params)
            got = [v.aval for v in eqn.outvars]
            if [(a.shape, a.dtype) for a in out_avals] != [(a.shape, a.dtype) for a in got]:
                raise JaxprTypeError(
                    f"{eqn.prim.name}: the rule gives "
                    f"{[a.str_short() for a in out_avals]} but the equation declares "
                    f"{[a.str_short() for a in got]}"
                )
        for v in eqn.outvars:
            define(v)
    for a in jaxpr.outvars:
        read(a)


# DCE rules for primitives whose inner jaxprs can shrink (jit, cond, scan...) register here.
DceRule = Callable[[list[bool], Eqn], tuple[list[bool], Eqn | None]]
dce_rules: dict[Primitive, DceRule] = {}
# Primitives with side effects are never removed.
effectful_primitives: set[Primitive] = set()


def dce_jaxpr(
    jaxpr: Jaxpr, used_outputs: Sequence[bool] | None = None, prune_invars: bool = False
) -> tuple[Jaxpr, list[bool]]:
    """Remove equations whose results no output needs.

    Returns the new jaxpr and, per invar, whether it is still used. With ``prune_invars``
    the unused invars are dropped from the new jaxpr too.
    """
    if used_outputs is None:
        used_outputs = [True] * len(jaxpr.outvars)
    outvars = [v for v, u in zip(jaxpr.outvars, used_outputs) if u]
    live: set[Var] = {v for v in outvars if isinstance(v, Var)}
    new_eqns: list[Eqn] = []
    for eqn in reversed(jaxpr.eqns):
        match eqn.outvars:  # the usual single result without a comprehension
            case [v]:
                needed = v in live
            case outs:
                needed = any([v in live for v in outs])
        if not needed and eqn.prim not in effectful_primitives:
            continue
        rule = dce_rules.get(eqn.prim)
        if rule is not None:
            used_in, new_eqn = rule([v in live for v in eqn.outvars], eqn)
            if new_eqn is None:
                continue
            for a, u in zip(new_eqn.invars, used_in):
                if u and isinstance(a, Var):
                    live.add(a)
            new_eqns.append(new_eqn)
            continue
        for a in eqn.invars:
            if type(a) is Var:
                live.add(a)
        new_eqns.append(eqn)
    new_eqns.reverse()
    used_inputs = [v in live for v in jaxpr.invars]
    invars = [v for v, u in zip(jaxpr.invars, used_inputs) if u] if prune_invars else jaxpr.invars
    constvars = [v for v in jaxpr.constvars if v in live]
    return Jaxpr(constvars, invars, outvars, new_eqns), used_inputs


def sub_jaxprs(params: dict) -> list[Jaxpr | ClosedJaxpr]:
    """The jaxprs among an equation's params (bodies of loops, branches, called programs)."""
    out = []
    for v in params.values():
        for x in (v if isinstance(v, tuple | list) else (v,)):
            if isinstance(x, ClosedJaxpr | Jaxpr):
                out.append(x)
    return out


def uses_any(jaxpr: Jaxpr, prims: set | frozenset) -> bool:
    """Whether an equation of ``jaxpr``, or of a jaxpr in its equations' params, applies one
    of ``prims``."""
    if not prims:
        return False
    for eqn in jaxpr.eqns:
        if eqn.prim in prims:
            return True
        if eqn.prim.carries_jaxprs:
            for sub in sub_jaxprs(eqn.params):
                if uses_any(sub.jaxpr if isinstance(sub, ClosedJaxpr) else sub, prims):
                    return True
    return False


def dce_closed_jaxpr(closed: ClosedJaxpr) -> ClosedJaxpr:
    """DCE a closed jaxpr, dropping the constants nothing reads anymore."""
    new, _ = dce_jaxpr(closed.jaxpr)
    keep = set(new.constvars)
    consts = [c for v, c in zip(closed.jaxpr.constvars, closed.consts) if v in keep]
    return ClosedJaxpr(new, consts)


# ---------------------------------------------------------------------------------------------
# Pretty printing, in JAX's layout: `{ lambda c:f64[3]; a:f64[3]. let b:f64[3] = mul a c in (b,) }`
# (one line when it fits in 80 columns; literals with their type, `2.0:f32[]`; a result nothing
# reads is `_`; params one a line, a jaxpr param indented under its name, when they do not fit).

#: Primitives whose operands from the given position on are promoted to one dtype before
#: they compute (NumPy's rule: the elementwise arithmetic and comparisons from 0, ``select_n``
#: from 1): a weakly typed literal among them prints in that dtype, as JAX's literals do
#: (``mul a 2.0:f32[]``, not ``2:i64[]``). Filled by the primitives' blocks.
literal_promoting_primitives: dict[Primitive, int] = {}

#: primitive -> the (name, value) pairs its equation prints, in order, given its params
#: (JAX's ``pp_eqn_rules``: ``jit`` leaves out the defaults and prints its name first).
#: Unlisted primitives print every param, sorted by name.
pp_param_rules: dict[Primitive, Callable[[dict[str, Any]], list[tuple[str, Any]]]] = {}

#: Call primitives whose ``jaxpr`` param prints its arguments and results with the names of
#: the equation's operands and results (JAX's pjit printing: ``b = jit[jaxpr={ lambda ; a.
#: let b = ... }] a``). Filled by the primitives' blocks.
pp_call_primitives: set[Primitive] = set()

_WIDTH = 80


def _names() -> Any:
    letters = "abcdefghijklmnopqrstuvwxyz"
    for n in itertools.count(1):
        for combo in itertools.product(letters, repeat=n):
            yield "".join(combo)


def _fmt_literal(v: Any, aval: ShapedArray) -> str:
    """``2.0:f32[]``: the value as ``aval``'s dtype holds it, then the type (JAX's form)."""
    try:
        v = numpy.asarray(v, dtype=aval.dtype).item()
    except (TypeError, ValueError):  # a device scalar or an odd dtype: its own value
        if getattr(v, "ndim", None) == 0 and hasattr(v, "item"):
            v = v.item()
    text = repr(v) if isinstance(v, float | complex) else str(v)
    return f"{text}:{aval.str_short()}"


def _literal_aval(lit: Literal, eqn: Eqn | None) -> ShapedArray:
    first = None if eqn is None else literal_promoting_primitives.get(eqn.prim)
    if first is not None and lit.aval.weak_type:
        dtype, _ = result_dtype(*(a.aval for a in eqn.invars[first:]))
        return ShapedArray(lit.aval.shape, dtype)
    return lit.aval


def _has_jaxpr(v: Any) -> bool:
    if isinstance(v, ClosedJaxpr | Jaxpr):
        return True
    return isinstance(v, tuple | list) and any(_has_jaxpr(x) for x in v)


class _Printer:
    """Names variables as it goes (one name space for a jaxpr and those in its params, as
    JAX's) and lays each part out at its column."""

    def __init__(self) -> None:
        self.names: dict[Var, str] = {}
        self.gen = _names()

    def name(self, v: Var) -> str:
        n = self.names.get(v)
        if n is None:
            n = self.names[v] = next(self.gen)
        return n

    def binder(self, v: Var, read: set[Var] | None) -> str:
        n = "_" if read is not None and v not in read else self.name(v)
        return f"{n}:{v.aval.str_short()}"

    def atom(self, a: Atom, eqn: Eqn | None) -> str:
        return _fmt_literal(a.val, _literal_aval(a, eqn)) if isinstance(a, Literal) \
            else self.name(a)

    def param(self, v: Any, col: int, flat: bool = False) -> str | None:
        """A param's text, its first line starting at column ``col``; with ``flat``, its
        one-line text, or None when it has none within the width."""
        if isinstance(v, ClosedJaxpr):
            v = v.jaxpr
        if isinstance(v, Jaxpr):
            return self.jaxpr(v, col, flat)
        if isinstance(v, tuple | list) and _has_jaxpr(v):
            # JAX's: a tuple of jaxprs (cond's branches) one a line under its name
            if flat:
                items = [self.param(x, col, True) for x in v]
                return None if None in items else f"({' '.join(items)})"  # type: ignore
            pad = " " * col
            lines = "".join(f"\n{pad}  {self.param(x, col + 2)}" for x in v)
            return f"({lines}\n{pad})"
        if isinstance(v, numpy.dtype):
            return v.name
        if isinstance(v, type) and issubclass(v, numpy.generic):
            return numpy.dtype(v).name
        if isinstance(v, tuple):
            inner = ", ".join(str(self.param(x, col)) for x in v)
            return f"({inner},)" if len(v) == 1 else f"({inner})"
        if callable(v) and hasattr(v, "__name__"):
            return v.__name__
        if isinstance(v, ShapedArray):
            return v.str_short()  # jaxprs print types short (f32[3]), as their variables
        return str(v)

    def eqn(self, eqn: Eqn, read: set[Var], col: int, flat: bool = False) -> str | None:
        outs = " ".join(self.binder(v, read) for v in eqn.outvars)
        lhs = f"{outs} = {eqn.prim.name}" if outs else eqn.prim.name
        rule = pp_param_rules.get(eqn.prim)
        pairs = rule(eqn.params) if rule is not None else sorted(eqn.params.items())
        ins = " ".join(self.atom(a, eqn) for a in eqn.invars)
        if not pairs:
            return f"{lhs} {ins}".rstrip()
        if eqn.prim in pp_call_primitives:
            self.share_names(eqn)
        # Flat when it fits and holds no jaxpr that needs lines of its own; otherwise one
        # param a line, two columns in. The flat attempt asks each param for its one-line
        # form only, so nested jaxprs are laid out once per level, not twice (the names it
        # gave stay: the same walk gives them in the same order).
        texts = [self.param(v, col, True) for _, v in pairs]
        if None not in texts:
            one = " ".join(f"{k}={t}" for (k, _), t in zip(pairs, texts))
            line = f"{lhs}[{one}] {ins}".rstrip()
            if col + len(line) <= _WIDTH:
                return line
        if flat:
            return None
        pad = " " * (col + 2)
        lines = "".join(f"\n{pad}{k}={self.param(v, col + 2)}" for k, v in pairs)
        return f"{lhs}[{lines}\n{' ' * col}] {ins}".rstrip()

    def share_names(self, eqn: Eqn) -> None:
        """The called jaxpr's arguments and results take the names of the equation's
        operands and results (where those are variables with names)."""
        called = eqn.params.get("jaxpr")
        inner = called.jaxpr if isinstance(called, ClosedJaxpr) else called
        if not isinstance(inner, Jaxpr):
            return
        pairs = [*zip(inner.invars, eqn.invars), *zip(inner.outvars, eqn.outvars)]
        for v, outer in pairs:
            if isinstance(v, Var) and v not in self.names and outer in self.names:
                self.names[v] = self.names[outer]

    def jaxpr(self, jaxpr: Jaxpr, col: int, flat: bool = False) -> str | None:
        """The jaxpr, its ``{`` at column ``col``; broken into lines, its equations sit at
        ``col + 4`` and its ``in`` at ``col + 2`` (JAX's layout). With ``flat``, its one-line
        form or None when that does not fit."""
        read: set[Var] = {a for a in jaxpr.outvars if isinstance(a, Var)}
        for e in jaxpr.eqns:
            read.update(a for a in e.invars if isinstance(a, Var))
        consts = " ".join(self.binder(v, None) for v in jaxpr.constvars)
        args = " ".join(self.binder(v, None) for v in jaxpr.invars)
        head = f"{{ lambda {consts}; {args}. let"
        lines: list[str] = []
        width = col + len(head)
        for e in jaxpr.eqns:
            ln = self.eqn(e, read, col + 4, flat)
            if ln is None:
                return None
            lines.append(ln)
            width += len(ln) + 2
            if flat and width > _WIDTH:
                return None  # no need to lay out the rest: it does not fit on one line
        outs = [self.atom(a, None) for a in jaxpr.outvars]
        tail = f"in ({outs[0]},) }}" if len(outs) == 1 else f"in ({', '.join(outs)}) }}"
        one = f"{head} {'; '.join(lines)} {tail}"
        if "\n" not in one and col + len(one) <= _WIDTH:
            return one
        if flat:
            return None
        pad = " " * col
        body = "".join(f"\n{pad}    {ln}" for ln in lines)
        return f"{head}{body}\n{pad}  {tail}"


def pp_jaxpr(jaxpr: Jaxpr) -> str:
    """The readable text form of ``jaxpr``, in JAX's layout: one line when it fits in 80
    columns, else one equation a line."""
    return str(_Printer().jaxpr(jaxpr, 0))
