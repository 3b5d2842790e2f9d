"""Opt-in check that no key is consumed twice (JAX's key-reuse checker, eagerly).

Inside ``with check_key_reuse():`` every key handed to a sampler or to ``split``/``bits`` is
marked consumed; handing the same key object to another (or the same) one raises
:class:`KeyReuseError` naming both lines of user code. ``fold_in`` does not consume its key
(deriving many keys by distinct data is what it is for). Keys are tracked by identity, as
JAX's checker does, so tracers inside ``jit``/``vmap``/``grad`` are tracked too, and, as
JAX's, by element for keys taken from an array with a static index: ``keys[0]`` consumed
twice is reuse (each ``keys[0]`` is a new object holding the same key), as is consuming
``keys[0]`` and then the whole of ``keys`` (``vmap`` over it); a key
consumed in two branches of one ``cond``/``switch`` is consumed once (one branch runs). A sampler
built on another one (``lognormal`` on ``normal``) consumes its key once. The state lives in
context variables; outside the ``with`` block the samplers pay one ``ContextVar.get``.
"""

from __future__ import annotations

import contextlib
import functools
import math
import weakref
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any, TypeVar

import numpy

from funcgrad import api_jit
from funcgrad.avals import get_aval
from funcgrad.config import flag_scope, register_flag
from funcgrad.core import (
    SourceInfo,
    Tracer,
    branch_path,
    exclusive_branches,
    user_source_info,
)
from funcgrad.errors import KeyReuseError
from funcgrad.interpreters.batching import batch_call_check
from funcgrad.ops.control_flow._common import loop_body_check
from funcgrad.random._keys import PRNGKeyArray, index_hooks

__all__ = ["KeyReuseError", "check_key_reuse", "debug_key_reuse", "consumes"]

F = TypeVar("F", bound=Callable[..., Any])

# id(key) -> (the key, held so that its id is not reused by another, sampler name, where it
# was consumed, the cond/switch branches it was consumed in)
_consumed: ContextVar[dict[int, tuple[Any, str, SourceInfo, tuple]] | None] = ContextVar(
    "funcgrad_random_consumed", default=None)
_inside_sampler: ContextVar[bool] = ContextVar("funcgrad_random_inside", default=False)
# The loop bodies being traced (innermost last): each collects (key, consumer, where) of the
# keys consumed while it is traced, to find those every iteration would consume again.
_loop_frames: ContextVar[tuple[list, ...]] = ContextVar("funcgrad_random_loops", default=())
# JAX's flag jax_debug_key_reuse: the same check everywhere while it is on. Its record lives as
# long as the flag, so keys are held weakly where they can be (arrays; a dead key's entry
# goes with it) instead of kept alive.
_flag_seen: ContextVar[dict[int, tuple[Any, str, SourceInfo, tuple]] | None] = ContextVar(
    "funcgrad_random_consumed_flag", default=None)


def _write_flag(value: Any) -> None:
    if bool(value):
        if _flag_seen.get() is None:
            _flag_seen.set({})
        api_jit.jit_call_check.set(_jit_call)
        loop_body_check.set(_loop_body)
        batch_call_check.set(_batch_call)
    else:
        _flag_seen.set(None)
        if _consumed.get() is None:
            api_jit.jit_call_check.set(None)
            loop_body_check.set(None)
            batch_call_check.set(None)


register_flag("jax_debug_key_reuse", lambda: _flag_seen.get() is not None, _write_flag)


def debug_key_reuse(enable: bool = True) -> contextlib.AbstractContextManager[None]:
    """JAX's ``jax.debug_key_reuse(True)``: inside the ``with`` block (or the decorated
    function) a key consumed twice raises :class:`KeyReuseError`, as with
    ``funcgrad.config.update("jax_debug_key_reuse", True)`` for the rest of the program.

    Example:
        >>> from funcgrad import random
        >>> with debug_key_reuse():
        ...     k = random.PRNGKey(0)
        ...     _ = random.normal(k)
        ...     random.uniform(k)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        funcgrad.errors.KeyReuseError: random.uniform: this key was already consumed by ...
    """
    return flag_scope("jax_debug_key_reuse", enable)


def _held(key: Any, seen: dict[int, Any]) -> Any:
    """What the record keeps of ``key``: a weak reference that drops the entry when the key
    dies, or the key itself when it cannot be referenced weakly (a tracer)."""
    i = id(key)
    try:
        return weakref.ref(key, lambda _, i=i: seen.pop(i, None))
    except TypeError:
        return key


def _same(held: Any, key: Any) -> bool:
    return _deref(held) is key


def _deref(held: Any) -> Any:
    return held() if isinstance(held, weakref.ref) else held


def _held_as(obj: Any, seen: dict, entry: tuple) -> Any:
    """A weak reference to ``obj`` that drops the record's ``entry`` when ``obj`` dies (or
    ``obj`` itself when it cannot be referenced weakly)."""
    try:
        return weakref.ref(obj, lambda _, e=entry: seen.pop(e, None))
    except TypeError:
        return obj


def _static_index(idx: Any) -> bool:
    """Whether ``idx`` names the same keys whatever the values: Python/NumPy integers,
    slices of them, ``None``, ``...`` and concrete NumPy integer arrays."""
    parts = idx if isinstance(idx, tuple) else (idx,)
    for i in parts:
        if i is None or i is Ellipsis or isinstance(i, int | numpy.integer):
            continue
        if isinstance(i, slice) and all(b is None or isinstance(b, int | numpy.integer)
                                        for b in (i.start, i.stop, i.step)):
            continue
        if isinstance(i, numpy.ndarray) and i.dtype.kind in "iub":
            continue
        return False
    return True


def _note_index(parent: Any, idx: Any, child: Any, shape: tuple[int, ...]) -> None:
    """``child = keys[idx]`` while checking: remember which keys of the array it came from
    (by flat position in the first indexed array, ``root``) when the index is static."""
    seen = _record()
    if seen is None or not _static_index(idx):
        return
    origin = seen.get(("origin", id(parent)))
    if origin is not None and _same(origin[0], parent) and _deref(origin[1]) is not None:
        root, grid = _deref(origin[1]), numpy.asarray(origin[2]).reshape(shape)
    else:
        root, grid = parent, numpy.arange(math.prod(shape)).reshape(shape)
    try:
        positions = tuple(int(p) for p in numpy.ravel(grid[idx]))
    except IndexError:
        return  # the indexing itself raised already, or will
    entry = ("origin", id(child))
    seen[entry] = (_held_as(child, seen, entry), _held_as(root, seen, entry), positions)


index_hooks.append(_note_index)


def _consume_elements(seen: dict, key: Any, by: str, here: SourceInfo, what: str,
                      path: tuple) -> None:
    """The element-wise record: the keys of an indexed array consumed so far, by position,
    so that ``keys[0]`` consumed twice (two objects, one key) or ``keys[0]`` then ``keys``
    whole raises as JAX's checker does."""
    origin = seen.get(("origin", id(key)))
    if origin is not None and _same(origin[0], key):
        root, positions = _deref(origin[1]), origin[2]
        if root is None:
            return
        whole = seen.get(id(root))  # the array it came from, consumed whole before
        if whole is not None and _same(whole[0], root) and not exclusive_branches(whole[3], path):
            raise KeyReuseError(
                f"{what}: this key belongs to a key array already consumed whole by "
                f"{whole[1]}{whole[2].at()}; consumed again{here.at()}. Each key must be used "
                "once: make new ones with funcgrad.random.split(key) (or fold_in(key, i)).")
    else:
        if ("elems", id(key)) not in seen:
            return  # no element of it taken yet
        shape = tuple(get_aval(key).shape[:-1])  # the trailing axis holds one key's words
        if not shape:
            return  # a single key: the identity check covers it
        root, positions = key, range(math.prod(shape))
    entry = ("elems", id(root))
    record = seen.get(entry)
    if record is None or not _same(record[0], root):
        record = seen[entry] = (_held_as(root, seen, entry), {})
    used = record[1]
    for p in positions:
        prev = used.get(p)
        if prev is not None and not exclusive_branches(prev[2], path):
            raise KeyReuseError(
                f"{what}: key {p} of this key array was already consumed by "
                f"{prev[0]}{prev[1].at()}; consumed again{here.at()}. Each key must be used "
                "once: make new ones with funcgrad.random.split(key) (or fold_in(key, i)).")
    for p in positions:
        used[p] = (by, here, path)


@contextlib.contextmanager
def check_key_reuse() -> Iterator[None]:
    """Raise :class:`KeyReuseError` when a key is consumed twice within the block.

    Example:
        >>> from funcgrad import random
        >>> key = random.PRNGKey(0)
        >>> with random.check_key_reuse():
        ...     x = random.normal(key, (2,))
        ...     y = random.uniform(key, (2,))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        funcgrad.errors.KeyReuseError: random.uniform: this key was already consumed by random.normal at ...
    """
    token = _consumed.set({})
    jit_token = api_jit.jit_call_check.set(_jit_call)
    loop_token = loop_body_check.set(_loop_body)
    batch_token = batch_call_check.set(_batch_call)
    try:
        yield
    finally:
        batch_call_check.reset(batch_token)
        loop_body_check.reset(loop_token)
        api_jit.jit_call_check.reset(jit_token)
        _consumed.reset(token)


def _identity(key: Any) -> Any:
    """The object a key is tracked by: a typed key's data (what jit receives as the argument
    leaf, and what the same key object always holds), a raw key itself."""
    return key._data if isinstance(key, PRNGKeyArray) else key


def _record() -> dict | None:
    seen = _consumed.get()
    return _flag_seen.get() if seen is None else seen


def _consume(seen: dict, key: Any, by: str, here: SourceInfo, what: str) -> None:
    """Mark ``key`` consumed by ``by`` (``random.normal``, ``jit(f)``), or raise
    :class:`KeyReuseError` naming ``what`` when it already was."""
    path = branch_path()
    prev = seen.get(id(key))
    # a key consumed in two branches of one cond/switch is consumed once (one runs)
    if prev is not None and _same(prev[0], key) and not exclusive_branches(prev[3], path):
        raise KeyReuseError(
            f"{what}: this key was already consumed by {prev[1]}{prev[2].at()}; consumed "
            f"again{here.at()}. Each key must be used once: make new ones with "
            "funcgrad.random.split(key) (or fold_in(key, i))."
        )
    _consume_elements(seen, key, by, here, what, path)
    seen[id(key)] = (_held(key, seen), by, here, path)
    for frame in _loop_frames.get():
        frame.append((key, by, here))


def _batch_call(vals: list, ins: list) -> None:
    """A vmapped call while checking: the batched keys its function consumed (through the
    tracers that stood for them) are consumed by the call, so vmapping a sampler twice over
    one batch of keys raises, as JAX's checker."""
    seen = _record()
    if seen is None or _inside_sampler.get():
        return
    here = None
    for v, t in zip(vals, ins):
        prev = seen.get(id(t))
        if t is v or prev is None or not _same(prev[0], t):
            continue
        here = here or user_source_info()
        _consume(seen, v, f"vmap (by {prev[1]})", here, f"vmap of {prev[1]}")


def _inside(x: Any, trace: Any) -> bool:
    """Whether ``x`` is a value of ``trace`` or of a trace nested in it (made by the body)."""
    if trace is None or not isinstance(x, Tracer):
        return False
    t = x._trace
    while t is not None:
        if t is trace:
            return True
        t = t.parent
    return False


def _loop_body(what: str, n_carry: int, trace: Callable[[], Any], ins: list,
               outs: list) -> Any:
    """Trace a loop body (``trace()``), then refuse the keys every iteration would consume
    again, as JAX's checker does: one from outside the loop (closed over), or a carried one
    the body passes on unchanged."""
    frame: list = []
    token = _loop_frames.set((*_loop_frames.get(), frame))
    try:
        result = trace()
    finally:
        _loop_frames.reset(token)
    body = ins[0]._trace if ins and isinstance(ins[0], Tracer) else None
    where = {id(t): i for i, t in enumerate(ins)}
    for key, by, here in frame:
        i = where.get(id(key))
        if i is not None and ins[i] is key:
            if i < n_carry and i < len(outs) and outs[i] is key:
                raise KeyReuseError(
                    f"{what}: {by}{here.at()} consumes a key the loop carries on unchanged, so "
                    "every iteration consumes the same key: carry a new one (carry, sub = "
                    "funcgrad.random.split(carry), and return carry).")
            continue  # a slice of xs, or a carry the body replaces: new each iteration
        if not _inside(key, body):
            raise KeyReuseError(
                f"{what}: {by}{here.at()} consumes a key from outside the loop, so every "
                "iteration consumes it again: derive one per iteration "
                "(funcgrad.random.fold_in(key, i)), or split keys before the loop and scan "
                "over them.")
    return result


def _jit_call(jitted: Any, entry: Any, args: tuple, kwargs: dict, leaves: list) -> None:
    """A call of a jitted function while checking: the argument keys its program consumes
    are consumed by the call, on every call (JAX's checker does the same: a second call
    with a consumed key raises, though jit's cache skips tracing)."""
    seen = _record()
    if seen is None or _inside_sampler.get():
        return
    used = entry.consumed_keys
    if used is None:
        # Which inputs does the program consume? Trace it again, with a record of its own.
        inner: dict = {}
        token = _consumed.set(inner)
        try:
            tracers = jitted._input_tracers(args, kwargs)
        finally:
            _consumed.reset(token)
        used = entry.consumed_keys = tuple(
            i for i, t in enumerate(tracers) if id(t) in inner and _same(inner[id(t)][0], t))
    if not used:
        return
    here = user_source_info()
    name = f"jit({jitted._name})"
    for i in used:
        # a typed key's label ends with its one data leaf's index, which says nothing here
        label = entry.labels[i].removesuffix("[<flat index 0>]")
        _consume(seen, leaves[i], name, here, f"{name}, argument {label}")


def consumes(fn: F) -> F:
    """Mark ``fn(key, ...)`` as consuming its key (checked inside :func:`check_key_reuse`)."""
    name = fn.__name__

    @functools.wraps(fn)
    def wrapper(key: Any, *args: Any, **kwargs: Any) -> Any:
        seen = _record()
        if seen is None or _inside_sampler.get():
            return fn(key, *args, **kwargs)
        _consume(seen, _identity(key), f"random.{name}", user_source_info(), f"random.{name}")
        token = _inside_sampler.set(True)
        try:
            return fn(key, *args, **kwargs)
        finally:
            _inside_sampler.reset(token)

    return wrapper  # type: ignore[return-value]
