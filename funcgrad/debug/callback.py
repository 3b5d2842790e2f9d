"""Host callbacks that run when the computation runs: ``callback``, ``print``, ``call_hook``.

Under ``jit`` a Python function called directly runs once, at trace time, with tracers. These
primitives instead run it each time the compiled function runs, with concrete arrays; they are
effectful (never removed, merged or folded by the compiler), in program order.

- ``debug_callback``: ``fn(*arrays)`` for its side effect; no outputs, no derivative.
- ``hook_call``: ``fn(*arrays)`` returns arrays of the same shapes and dtypes that replace the
  inputs (or ``None`` to keep them): gradient hooks use it. Differentiating *through* it
  treats it as the identity; under ``vmap`` ``fn`` is called once per example.
"""

from __future__ import annotations

import _string  # the field-name splitter string.Formatter itself uses
import builtins
import copy
import logging
import pdb
import string
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy

from funcgrad.avals import get_aval
from funcgrad.backend import device_of, xp_for
from funcgrad.core import Primitive, Tracer, bind
from funcgrad.errors import SourceInfo, user_source_info
from funcgrad.interpreters import batching
from funcgrad.interpreters.jvp import jvp_rules
from funcgrad.ir import Effect, effect_rules, effectful_primitives
from funcgrad.ops._batching_util import bdim_at_front
from funcgrad.tree_util import transforms as tree_util  # keys are nodes here

__all__ = ["callback", "print", "log", "breakpoint", "call_hook", "debug_callback_p",
           "hook_call_p", "DebugEffect", "OrderedDebugEffect", "debug_effect",
           "ordered_debug_effect"]


class _Fn:
    """A callable as a static param: hashable by identity, with a name for printing."""

    __slots__ = ("fn", "tree", "name")

    def __init__(self, fn: Callable[..., Any], tree: Any, name: str) -> None:
        self.fn, self.tree, self.name = fn, tree, name

    def __repr__(self) -> str:
        return self.name


# -- debug_callback ------------------------------------------------------------------------------

_PY_NUMBERS = (bool, int, float, complex)

debug_callback_p = Primitive("debug_callback", multiple_results=True, carries_jaxprs=True)
effectful_primitives.add(debug_callback_p)


class DebugEffect(Effect):
    """The effect of a ``debug.callback`` / ``debug.print`` equation (JAX's
    ``jax.debug.DebugEffect``): ``jaxpr.effects`` holds its instance :data:`debug_effect`.

    Example:
        >>> import funcgrad
        >>> jx = funcgrad.make_jaxpr(lambda x: funcgrad.debug.print("{}", x))(1.0)
        >>> [isinstance(e, funcgrad.debug.DebugEffect) for e in jx.effects]
        [True]
    """

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("DebugEffect")


class OrderedDebugEffect(Effect):
    """The effect of a debug callback asked for with ``ordered=True`` (JAX's
    ``jax.debug.OrderedDebugEffect``); its instance is :data:`ordered_debug_effect`. Callbacks
    run in program order here either way; the effect records the request, as JAX's does.

    Example:
        >>> import funcgrad
        >>> jx = funcgrad.make_jaxpr(
        ...     lambda x: funcgrad.debug.print("{}", x, ordered=True))(1.0)
        >>> jx.effects
        {OrderedDebugEffect}
    """

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("OrderedDebugEffect")


debug_effect, ordered_debug_effect = DebugEffect(), OrderedDebugEffect()
effect_rules[debug_callback_p] = lambda params: frozenset(
    (ordered_debug_effect if params.get("ordered") else debug_effect,))


def _callback_impl(*args: Any, callback: _Fn, ordered: bool = False) -> list[Any]:
    # A weak value (Python arithmetic on Python scalars) runs as a Python scalar, computed on
    # the host: the callback sees it as a host array, as it sees every value as an array.
    args = [numpy.asarray(a) if type(a) in _PY_NUMBERS else a for a in args]
    callback.fn(*tree_util.tree_unflatten(callback.tree, list(args)))
    return []


debug_callback_p.def_impl(_callback_impl)
debug_callback_p.def_abstract_eval(lambda *avals, callback, ordered=False: [])


def _callback_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, callback: _Fn,
                  ordered: bool = False):
    bind(debug_callback_p, *primals, callback=callback, ordered=ordered)
    return [], []


jvp_rules[debug_callback_p] = _callback_jvp


def _per_example(fn: Callable[..., Any], vals: Sequence[Any], dims: Sequence[Any], n: int,
                 ) -> list[list[Any]]:
    """Call ``fn`` once per example of a batch; the per-example results."""
    fronts = [bdim_at_front(v, d, n) for v, d in zip(vals, dims)]
    return [fn(*[f[i] for f in fronts]) for i in range(n)]


def _callback_batch(axis_size: int, vals: Sequence[Any], dims: Sequence[Any], *,
                    callback: _Fn, ordered: bool = False):
    tree = callback.tree

    def each(*xs: Any) -> None:
        callback.fn(*tree_util.tree_unflatten(tree, list(xs)))

    def run_all(*arrays: Any) -> None:
        _per_example(each, arrays, [0] * len(arrays), axis_size)

    ops = [bdim_at_front(v, d, axis_size) for v, d in zip(vals, dims)]
    flat_tree = tree_util.tree_structure(tuple(ops))
    bind(debug_callback_p, *ops, callback=_Fn(run_all, flat_tree, f"vmap({callback.name})"),
         ordered=ordered)
    return [], []


batching.batch_rules[debug_callback_p] = _callback_batch


def callback(callback: Callable[..., Any] | None = None, *args: Any, ordered: bool = False,
             partitioned: bool = False, **kwargs: Any) -> Any:
    """Call ``callback(*args, **kwargs)`` with concrete arrays whenever this point of the
    computation runs: eagerly, every time a jitted function runs, each iteration of a
    ``scan``/``while_loop`` body, once per example under ``vmap``, and with the primal values
    under ``grad``/``jvp`` (derivatives are unchanged). Callbacks always run in program order,
    so ``ordered=True`` (JAX's request for that) holds by construction; ``partitioned`` is
    accepted for JAX compatibility (there are no shards here).

    Example:
        >>> import funcgrad, numpy as np
        >>> seen = []
        >>> @funcgrad.jit
        ... def f(x):
        ...     funcgrad.debug.callback(lambda v, scale: seen.append(v.tolist()), x * 2,
        ...                             scale=3)
        ...     return x + 1
        >>> _ = f(np.array([1.0])); _ = f(np.array([2.0]))
        >>> seen
        [[2.0], [4.0]]

    JAX's two-call form ``debug.callback(ordered=True)(fn, *args, **kwargs)`` works too (all
    keyword arguments of the second call go to ``fn``):

        >>> funcgrad.debug.callback(ordered=True)(
        ...     lambda v, ordered: seen.append((float(v), ordered)), 1.0, ordered="yes")
        >>> seen[-1]
        (1.0, 'yes')
    """
    # The parameter has JAX's name (debug.callback(callback=f, ...) is JAX code too).
    if callback is None:
        if args or kwargs:
            raise TypeError("debug.callback(ordered=..., ...) without a function returns a "
                            "caller: call it as debug.callback(ordered=True)(fn, *args, **kw)")

        def caller(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
            _callback(fn, args, kwargs, ordered)

        return caller
    _callback(callback, args, kwargs, ordered)
    return None


def _callback(fn: Any, args: tuple, kwargs: dict, ordered: bool = False) -> None:
    if not callable(fn):
        raise TypeError(f"debug.callback: expected a function, got {type(fn).__name__}")
    # Program order always (ordered only names the effect, as JAX's); no shards.
    leaves, tree = tree_util.tree_flatten((args, kwargs))
    name = getattr(fn, "__name__", type(fn).__name__)
    # Arrays (traced or not) and numbers are operands; anything else (strings, None, objects)
    # is passed to fn as it is.
    at = [i for i, v in enumerate(leaves) if _is_operand(v)]

    def run(*xs: Any) -> None:
        filled = list(leaves)
        for i, x in zip(at, xs):
            # NumPy scalars (what jit's scalar arithmetic makes) are shown as the 0-d arrays
            # they are everywhere else
            filled[i] = numpy.asarray(x) if isinstance(x, numpy.generic) else x
        a, k = tree_util.tree_unflatten(tree, filled)
        fn(*a, **k)

    operands = [leaves[i] for i in at]
    bind(debug_callback_p, *operands,
         callback=_Fn(run, tree_util.tree_structure(tuple(operands)), name),
         ordered=bool(ordered))


def _is_operand(v: Any) -> bool:
    return (isinstance(v, Tracer | numpy.ndarray | numpy.generic | bool | int | float | complex)
            or device_of(v) is not None)


class _UnusedArgumentChecker(string.Formatter):
    """Formats nothing; raises ``ValueError`` for arguments the format string does not use
    (JAX's check: an f-string passed by mistake leaves its arguments unused)."""

    def get_field(self, field_name: str, args: Sequence[Any], kwargs: Any) -> Any:
        first, _ = _string.formatter_field_name_split(field_name)
        return self.get_value(first, args, kwargs), first  # no .attr / [index] evaluated

    def format_field(self, value: Any, format_spec: str) -> str:
        return ""

    def check_unused_args(self, used_args: Any, args: Sequence[Any], kwargs: Any) -> None:
        unused = [a for i, a in enumerate(args) if i not in used_args]
        if unused:
            raise ValueError(f"Unused positional arguments to `debug.print`: {unused}"
                             f"{user_source_info().at()}")
        unused_kw = [k for k in kwargs if k not in used_args]
        if unused_kw:
            raise ValueError(
                f"Unused keyword arguments to `debug.print`: {unused_kw}. You may be passing an "
                'f-string (f"{x}") where a format string ("{x}", x=x) belongs'
                f"{user_source_info().at()}")


def _check_format(fmt: str, args: Sequence[Any], kwargs: dict) -> None:
    """A format string naming an argument that was not given, or leaving one unused, fails
    now, at the user's line, rather than each time the computation runs."""
    auto = 0
    for _, field, _, _ in string.Formatter().parse(fmt):
        if field is None:
            continue
        key = field.split(".", 1)[0].split("[", 1)[0]
        if key == "":
            key = str(auto)
            auto += 1
        if key.isdigit():
            if int(key) >= len(args):
                raise IndexError(f"debug.print: format string {fmt!r} refers to positional "
                                 f"argument {key}, but {len(args)} were given"
                                 f"{user_source_info().at()}")
        elif key not in kwargs:
            raise KeyError(f"debug.print: format string {fmt!r} refers to {key!r}, which is not "
                           f"among the keyword arguments {sorted(kwargs)}"
                           f"{user_source_info().at()}")
    _UnusedArgumentChecker().vformat(fmt, tuple(args), kwargs)


_log = logging.getLogger("funcgrad.debug")


def print(fmt: str | None = None, *args: Any, ordered: bool = False,  # noqa: A001 (JAX's name)
          partitioned: bool = False, skip_format_check: bool = False, _use_logging: bool = False,
          **kwargs: Any) -> Any:
    """``print(fmt.format(*args, **kwargs))`` with concrete values when the computation runs
    (see :func:`callback` for when that is: every jitted call, every loop iteration, once per
    example under ``vmap``, primal values under ``grad``).

    JAX's two-call form ``debug.print(ordered=True)("x = {x}", x=x)`` works too. The format
    string is checked against the arguments when ``print`` is called (``skip_format_check``
    turns that off), so a typo fails at your line, not at run time: a name it does not have is
    a ``KeyError`` (an index, an ``IndexError``), an argument it leaves unused a ``ValueError``,
    as JAX's. A format without placeholders given arguments anyway (``skip_format_check``)
    prints them after it, separated by spaces, as JAX's.

    Example:
        >>> import funcgrad, numpy as np
        >>> funcgrad.jit(lambda x: funcgrad.debug.print("x = {}", x) or x)(np.array(3.0))
        x = 3.0
        array(3.)
        >>> funcgrad.debug.print(ordered=True)("{a:.2f}", a=np.float64(1.0 / 3))
        0.33
    """
    if fmt is None:
        if args or kwargs:
            raise TypeError("debug.print(ordered=..., ...) without a format string returns a "
                            "printer: call it as debug.print(ordered=True)(fmt, *args, **kw)")

        def printer(fmt: str, *args: Any, **kwargs: Any) -> None:
            print(fmt, *args, ordered=ordered, partitioned=partitioned,
                  skip_format_check=skip_format_check, _use_logging=_use_logging, **kwargs)

        return printer
    if not isinstance(fmt, str):
        raise TypeError(f"debug.print: the format must be a string, got {type(fmt).__name__}")
    if not skip_format_check:
        _check_format(fmt, args, kwargs)
    placeholders = any(field is not None for _, field, _, _ in string.Formatter().parse(fmt))
    # NumPy's print options where print is called (a `with numpy.printoptions(...)` around a
    # traced call holds when the compiled function runs later), as JAX's.
    printoptions = numpy.get_printoptions()
    record = None
    if _use_logging:
        src = user_source_info()
        record = _log.makeRecord(_log.name, logging.INFO, src.filename or "(unknown file)",
                                 src.lineno or 0, "", (), None)

    def show(*a: Any, **k: Any) -> None:
        with numpy.printoptions(**printoptions):
            msg = fmt.format(*a, **k) if placeholders else " ".join((fmt, *map(str, a)))
        if record is None:
            builtins.print(msg)
        elif _log.isEnabledFor(logging.INFO):
            rec = copy.copy(record)
            rec.msg = msg
            _log.handle(rec)

    show.__name__ = "log" if _use_logging else "print"
    _callback(show, args, kwargs, ordered)
    return None


def log(fmt: str | None = None, *args: Any, ordered: bool = False, partitioned: bool = False,
        skip_format_check: bool = False, **kwargs: Any) -> Any:
    """:func:`print`, but the message goes to the ``funcgrad.debug`` logger at level INFO,
    with your file and line as the record's location (as ``jax.debug.log``).

    Example:
        >>> import logging, funcgrad, numpy as np
        >>> records = []
        >>> handler = logging.Handler(); handler.emit = records.append
        >>> logger = logging.getLogger("funcgrad.debug"); logger.addHandler(handler)
        >>> logger.setLevel(logging.INFO)
        >>> _ = funcgrad.jit(lambda x: funcgrad.debug.log("x = {}", x) or x)(np.array(2.0))
        >>> [r.getMessage() for r in records]
        ['x = 2.0']
        >>> logger.removeHandler(handler); logger.setLevel(logging.NOTSET)
    """
    return print(fmt, *args, ordered=ordered, partitioned=partitioned,
                 skip_format_check=skip_format_check, _use_logging=True, **kwargs)


def breakpoint(*, backend: Any = None, filter_frames: bool = True,  # noqa: A001 (JAX's name)
               num_frames: int | None = None, ordered: bool = False, token: Any = None,
               **kwargs: Any) -> Any:
    r"""Stop in the Python debugger (``pdb``) when this point of the computation runs, with
    the calling function's local variables in scope as concrete values, also inside ``jit``,
    ``scan``/``while_loop`` bodies (each iteration), under ``vmap`` (once per example) and
    under ``grad`` (primal values). ``continue`` (``c``) resumes the computation; ``quit``
    raises ``bdb.BdbQuit`` out of it.

    The debugger shows your source file at the line of the call (``l``, ``where``); locals that
    were not traced (Python numbers, modules, shapes) are there as they were. Only the calling
    frame is shown: JAX's ``filter_frames``/``num_frames``/``backend``/``token`` are accepted
    and ignored, and ``ordered`` holds always (callbacks run in program order). The debugger
    reads ``sys.stdin`` and writes ``sys.stdout`` as they are when it starts.

    Example:
        >>> import io, sys, funcgrad, numpy as np
        >>> @funcgrad.jit
        ... def f(x):
        ...     y = x * 2
        ...     funcgrad.debug.breakpoint()
        ...     return y
        >>> stdin, sys.stdin = sys.stdin, io.StringIO("p y\nc\n")
        >>> try:
        ...     out = f(np.array(21.0))
        ... finally:
        ...     sys.stdin = stdin           # doctest: +ELLIPSIS, +NORMALIZE_WHITESPACE
        > ...
        -> funcgrad.debug.breakpoint()
        (Pdb) array(42.)
        (Pdb)
    """
    del backend, filter_frames, num_frames, kwargs
    frame = sys._getframe(1)
    src = SourceInfo(frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)
    user_globals = frame.f_globals
    names, values = list(frame.f_locals), list(frame.f_locals.values())
    del frame
    leaves, tree = tree_util.tree_flatten(values)
    traced = [i for i, v in enumerate(leaves) if isinstance(v, Tracer)]

    def stop(*concrete: Any) -> None:
        filled = list(leaves)
        for i, v in zip(traced, concrete):
            filled[i] = v
        scope = dict(zip(names, tree_util.tree_unflatten(tree, filled)))
        _run_pdb(scope, user_globals, src)

    stop.__name__ = "breakpoint"
    _callback(stop, tuple(leaves[i] for i in traced), {}, ordered)
    return token


def _run_pdb(scope: dict, user_globals: dict, src: SourceInfo) -> None:
    """``pdb`` stopped in a frame whose locals are ``scope``, shown at the user's line."""
    debugger = pdb.Pdb(skip=["funcgrad.*"])
    scope["__funcgrad_debugger__"] = debugger
    # Code laid out so the stop is at the user's file and line: `l` and `where` show their
    # source (pdb reads the lines from the file, not from this code).
    line = max(src.lineno, 2)
    code = compile("\n" * (line - 2) + "__funcgrad_debugger__.set_trace()\npass\n",
                   src.filename or "<funcgrad.debug.breakpoint>", "exec")
    # The user's globals, under a module name the debugger does not skip (funcgrad.* frames
    # are skipped; a doctest of funcgrad runs with a funcgrad module's name).
    glb = dict(user_globals, __name__="__funcgrad_breakpoint__")
    exec(code, glb, scope)


# -- hook_call -----------------------------------------------------------------------------------

hook_call_p = Primitive("hook_call", multiple_results=True, carries_jaxprs=True)
effectful_primitives.add(hook_call_p)


def _check_hook_result(res: Any, args: Sequence[Any], name: str) -> list[Any]:
    if res is None:
        return list(args)
    leaves = list(res) if isinstance(res, tuple | list) else [res]
    if len(leaves) != len(args):
        raise TypeError(f"hook {name} returned {len(leaves)} values; expected {len(args)} "
                        "(one per value it was given) or None")
    out = []
    for i, (r, a) in enumerate(zip(leaves, args)):
        if r is None:
            out.append(a)
            continue
        ra, aa = get_aval(r), get_aval(a)
        if ra.shape != aa.shape:
            raise ValueError(f"hook {name} returned a value of shape {ra.shape} at position {i}"
                             f"; expected shape {aa.shape} (the shape it was given) or None")
        if ra.dtype != aa.dtype:
            r = xp_for(r).asarray(r, dtype=aa.dtype)
        out.append(r)
    return out


def _hook_impl(*args: Any, hook: _Fn) -> list[Any]:
    return _check_hook_result(hook.fn(*args), args, hook.name)


hook_call_p.def_impl(_hook_impl)
hook_call_p.def_abstract_eval(lambda *avals, hook: list(avals))


def _hook_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, hook: _Fn):
    return bind(hook_call_p, *primals, hook=hook), list(tangents)


jvp_rules[hook_call_p] = _hook_jvp


def _hook_batch(axis_size: int, vals: Sequence[Any], dims: Sequence[Any], *, hook: _Fn):
    def run_all(*arrays: Any) -> list[Any]:
        rows = _per_example(lambda *xs: _check_hook_result(hook.fn(*xs), xs, hook.name),
                            arrays, [0] * len(arrays), axis_size)
        xp = xp_for(*arrays)
        return [xp.stack([r[j] for r in rows]) for j in range(len(arrays))]

    ops = [bdim_at_front(v, d, axis_size) for v, d in zip(vals, dims)]
    outs = bind(hook_call_p, *ops, hook=_Fn(run_all, None, f"vmap({hook.name})"))
    return outs, [0] * len(outs)


batching.batch_rules[hook_call_p] = _hook_batch


def call_hook(fn: Callable[..., Any], *arrays: Any, name: str | None = None) -> list[Any]:
    """``fn(*arrays)`` -> replacement arrays (or None to keep them), run with concrete values.

    On plain arrays ``fn`` is called directly; on traced values (``jit``, ``vmap``, higher
    derivatives) it runs each time the computation runs, always with concrete arrays. Returns the (possibly replaced) arrays as a list.

    Example:
        >>> import numpy as np
        >>> call_hook(lambda g: g * 2, np.array([1.0]))
        [array([2.])]
    """
    label = name or getattr(fn, "__name__", type(fn).__name__)
    if not any(isinstance(a, Tracer) for a in arrays):
        return _check_hook_result(fn(*arrays), arrays, label)
    # Traced values (jit, vmap, a derivative of the backward pass): the primitive runs ``fn``
    # on concrete arrays when the computation runs, once per example under vmap.
    return bind(hook_call_p, *arrays, hook=_Fn(fn, None, label))
