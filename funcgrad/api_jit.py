"""``jit``, ``eval_shape`` and ``compiled_source``: tracing once, running compiled code after.

``jit(f)`` traces ``f`` to a closed jaxpr the first time it sees a new *signature* -- the pytree
structure of the arguments, each array leaf's shape, dtype, weak type and device, and the values
of the static arguments -- and binds the ``jit`` call primitive (:mod:`funcgrad.ops.jit`) on it.
Called on concrete arrays, that runs straight-line Python generated from the optimised jaxpr
(:mod:`funcgrad.compile`); under another transformation the primitive's rules transform the
jaxpr instead, so ``jit`` composes with ``grad``, ``vmap``, ``jvp``, ``linearize`` in both orders.

Cache behaviour worth knowing:

* Python scalars are *weakly typed* (NEP 50): ``f(2.0)`` and ``f(np.float64(2.0))`` are two
  signatures (two traces), because they give different result dtypes next to float32 arrays
  (``float32_array * 2.0`` stays float32); ``f(np.float64(2.0))`` and ``f(np.array(2.0))`` are
  one (host data only: the NumPy scalar is passed as a 0-d array).
* Arrays a traced function closes over (globals, closures) are baked into the trace as
  constants; rebinding or mutating them later is not seen until the cache is cleared
  (``.clear_cache()``). Closures over tracers of an enclosing transformation are passed in as
  arguments and never cached.
* ``jit(f)`` made again with the same options shares the traces of the earlier ``jit(f)``
  (keyed on ``f`` itself, as JAX's tracing cache); a new lambda or partial traces again.
* Each jitted function keeps at most :data:`JIT_CACHE_SIZE` signatures (least recently used
  first out; ``._cache_size()`` counts them), so a function called on ever new shapes does not
  grow without bound; it warns once (:class:`RetraceWarning`) when it has traced
  :data:`RETRACE_WARN_AFTER` times.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import logging
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from typing import Any

import numpy

from funcgrad import api_devices as _api_devices
from funcgrad import backend as _backend
from funcgrad import compile as _compile
from funcgrad import config as _config
from funcgrad import sharding as _sharding
from funcgrad import stages
from funcgrad._cache import LRUCache, WeakLRUCache
from funcgrad.avals import ShapedArray, ShapeDtypeStruct, expand_stand_in, get_aval
from funcgrad.backend import get_default_device, is_array
from funcgrad.core import (
    Tracer,
    _scalars_to_arrays,
    axis_env_key,
    bind,
    current_trace,
    eval_trace,
)
from funcgrad.debug.nans import NaNError
from funcgrad.errors import ArgumentMismatchError
from funcgrad.interpreters import jaxpr_rules
from funcgrad.interpreters.staging import staging_below, trace_to_jaxpr
from funcgrad.ir import Var
from funcgrad.ops.jit import jit_p
from funcgrad.tree_util import transforms as tree_util  # keys are nodes here

__all__ = ["jit", "Jitted", "eval_shape", "compiled_source", "RetraceWarning", "disable_jit",
           "log_compiles", "explain_cache_misses", "no_tracing", "check_tracing_allowed"]

#: How many argument signatures (traces and their compiled programs) one jitted function
#: keeps; past it the least recently used one is dropped (and traced again if it comes back).
JIT_CACHE_SIZE = 512
#: The signature caches of the functions jitted so far, keyed on the function (by identity,
#: held weakly) and jit's options: ``jit(f)`` made again (``jit(f)(x)`` in a loop, a helper
#: that jits on every call) finds the traces of the last ``jit(f)`` with the same options, as
#: JAX's tracing cache does. Bounded, for functions whose traces keep them alive.
_signature_caches = WeakLRUCache(maxsize=1024)
#: A jitted function that has traced this many times warns once (RetraceWarning): it is
#: probably given a new shape, dtype or static value on most calls.
RETRACE_WARN_AFTER = 32


#: Set by :func:`disable_jit`: jitted functions then run their Python function directly.
_jit_disabled: ContextVar[bool] = ContextVar("funcgrad_jit_disabled", default=False)


@contextlib.contextmanager
def disable_jit(disable: bool = True) -> Iterator[None]:
    """Context manager: inside it, jitted functions call their Python function directly,
    operation by operation, with concrete values (so ``print`` and ``pdb`` see numbers, as
    with ``jax.disable_jit``). Nothing is traced or cached; results are the same.

    Example:
        >>> import numpy as np, funcgrad
        >>> @funcgrad.jit
        ... def f(x):
        ...     return float(x.sum()) if x.sum() > 0 else 0.0   # concrete only without jit
        >>> with funcgrad.disable_jit():
        ...     f(np.ones(3))
        3.0
    """
    token = _jit_disabled.set(bool(disable))
    try:
        yield
    finally:
        _jit_disabled.reset(token)


def _write_disable_jit(value: Any) -> None:
    _jit_disabled.set(bool(value))


_config.register_flag("jax_disable_jit", _jit_disabled.get, _write_disable_jit)


#: JAX's ``jax_explain_cache_misses``: every jitted function explains its retraces, as
#: ``jit(..., explain_retraces=True)`` does (a :class:`RetraceWarning` saying what changed).
_explain_misses: ContextVar[bool] = ContextVar("funcgrad_explain_cache_misses", default=False)
#: JAX's ``jax_log_compiles``: each trace-and-compile of a jitted function is logged (WARNING,
#: logger ``funcgrad``), naming the function and its argument types.
_log_compiles: ContextVar[bool] = ContextVar("funcgrad_log_compiles", default=False)
_logger = logging.getLogger("funcgrad")

#: JAX's ``jax_no_tracing``: a jitted function (or make_jaxpr, eval_shape) that would trace
#: raises instead, so a block can assert that everything it runs is already compiled.
_no_tracing: ContextVar[bool] = ContextVar("funcgrad_no_tracing", default=False)
_config.register_flag("jax_no_tracing", _no_tracing.get,
                      lambda value: _no_tracing.set(bool(value)))


def no_tracing(enable: bool = True) -> Any:
    """``jax.no_tracing``: inside the ``with`` block (or the decorated function), a jitted
    function called on a signature it has not traced, ``make_jaxpr`` and ``eval_shape`` raise
    ``RuntimeError`` instead of tracing (the flag ``jax_no_tracing``): a training step can
    check that it never retraces. Eager operations (not traced here) still run.

    Example:
        >>> import numpy as np, funcgrad
        >>> f = funcgrad.jit(lambda x: x * 2)
        >>> _ = f(np.ones(2))
        >>> with funcgrad.no_tracing():
        ...     _ = f(np.ones(2))                 # traced already: runs
        ...     f(np.ones(3))                     # a new shape would trace
        Traceback (most recent call last):
        RuntimeError: re-tracing function <lambda> for `jit`, but 'no_tracing' is set
    """
    return _config.flag_scope("jax_no_tracing", enable)


def check_tracing_allowed(what: str, fun: Any) -> None:
    """Raise JAX's ``RuntimeError`` when ``jax_no_tracing`` is set (see :func:`no_tracing`);
    ``what`` names the transformation about to trace ``fun``."""
    if _no_tracing.get():
        name = getattr(fun, "__name__", None) or repr(fun)
        raise RuntimeError(f"re-tracing function {name} for `{what}`, but 'no_tracing' is set")


_config.register_flag("jax_explain_cache_misses", _explain_misses.get,
                      lambda value: _explain_misses.set(bool(value)))
_config.register_flag("jax_log_compiles", _log_compiles.get,
                      lambda value: _log_compiles.set(bool(value)))


def log_compiles(enable: bool = True) -> Any:
    """``jax.log_compiles``: inside the ``with`` block (or the decorated function), every
    trace-and-compile of a jitted function is logged at WARNING level on the ``funcgrad``
    logger (the flag ``jax_log_compiles``).

    Example:
        >>> import logging, sys, numpy as np, funcgrad
        >>> handler = logging.StreamHandler(sys.stdout)
        >>> logging.getLogger("funcgrad").addHandler(handler)
        >>> with funcgrad.log_compiles():
        ...     _ = funcgrad.jit(lambda x: x + 1)(np.ones(2))
        Compiling jit(<lambda>) for arguments (f64[2]) (trace #1)
        >>> logging.getLogger("funcgrad").removeHandler(handler)
    """
    return _config.flag_scope("jax_log_compiles", enable)


def explain_cache_misses(enable: bool = True) -> Any:
    """``jax.explain_cache_misses``: inside the ``with`` block (or the decorated function),
    every jitted function warns why it traces again (:class:`RetraceWarning`), as with
    ``jit(..., explain_retraces=True)`` (the flag ``jax_explain_cache_misses``).

    Example:
        >>> import warnings, numpy as np, funcgrad
        >>> f = funcgrad.jit(lambda x: x + 1)
        >>> _ = f(np.ones(2))
        >>> with funcgrad.explain_cache_misses(), warnings.catch_warnings(record=True) as w:
        ...     warnings.simplefilter("always")
        ...     _ = f(np.ones(3))
        >>> "tracing again" in str(w[0].message)
        True
    """
    return _config.flag_scope("jax_explain_cache_misses", enable)


class RetraceWarning(UserWarning):
    """A jitted function was traced again: on every retrace with
    ``jit(..., explain_retraces=True)`` (saying why), and once by default when it keeps
    retracing (:data:`RETRACE_WARN_AFTER` traces)."""


_PY_SCALARS = (bool, int, float, complex)
# Argument types that are pytree leaves for sure: calls made only of them skip flattening.
_FAST_LEAVES = frozenset((numpy.ndarray, bool, int, float, complex))


#: The Python ints an argument can hold: a Python int is traced as a (weakly typed) int64
_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1


def int_overflow(x: Any, fname: str, where: str) -> OverflowError | None:
    """The error for a Python int argument outside int64's range (JAX's OverflowError), or
    None for anything else: traced, it would be an int64 the value does not fit in, and run
    compiled, the array module would compute on Python objects."""
    if type(x) is not int or _I64_MIN <= x <= _I64_MAX:
        return None
    return OverflowError(
        f"{fname}: {where} is the Python int {x}, which does not fit in int64 (the dtype a "
        "Python int argument is traced as); pass it as a float, or mark the argument static"
    )


def _leaf_key(x: Any) -> Any:
    """The part of the cache key one argument leaf contributes (cheap for common types)."""
    t = type(x)
    if t is numpy.ndarray:
        return (t, x.shape, x.dtype)
    if t in _PY_SCALARS:
        return t
    if isinstance(x, Tracer):
        return x.aval
    if isinstance(x, numpy.generic):
        return t
    a = get_aval(x)
    if t is ShapeDtypeStruct:  # a stand-in (lower/trace): its weak type is part of the key
        return (t, a.shape, a.dtype, a.device, a.weak_type)
    return (t, a.shape, a.dtype, a.device)


def _host_scalars_as_arrays(leaves: list[Any]) -> list[Any]:
    """NumPy scalars as 0-d arrays when every leaf is host data (NumPy arrays and scalars,
    Python scalars): ``f(np.float64(1.0))`` and ``f(np.array(1.0))`` are one signature, as in
    JAX (both strongly typed float64[]). Next to device arrays, or with another default
    device (``default_device("gpu")``), a NumPy scalar stays one: like a Python scalar it goes
    to the device the computation runs on, where a host array would be refused."""
    if not any(isinstance(x, numpy.generic) for x in leaves) or get_default_device() != "cpu":
        return leaves
    for x in leaves:
        if type(x) not in _FAST_LEAVES and not isinstance(x, numpy.generic):
            return leaves
    return [numpy.asarray(x) if isinstance(x, numpy.generic) else x for x in leaves]


def _stand_in(x: Any) -> Any:
    """An example argument of lower()/trace() that describes an array without being one
    (a ShapedArray, anything with .shape and .dtype) as a ShapeDtypeStruct."""
    if isinstance(x, ShapedArray):
        return ShapeDtypeStruct.from_aval(x)
    if type(x) is ShapeDtypeStruct:
        return expand_stand_in(x)  # a typed key's stand-in: keys over a stand-in of their data
    if type(x) in _FAST_LEAVES or isinstance(x, Tracer | ShapeDtypeStruct | numpy.generic):
        return x
    try:
        get_aval(x)
        return x
    except TypeError:
        shape, dtype = getattr(x, "shape", None), getattr(x, "dtype", None)
        if shape is None or dtype is None:
            return x  # refused by the tracer with the argument's name
        return ShapeDtypeStruct(shape, dtype)


def _describe_leaf(key: Any) -> str:
    if isinstance(key, ShapedArray):
        return f"traced {key.str_short()}{' (weak)' if key.weak_type else ''}"
    if isinstance(key, type):
        if key in _PY_SCALARS:
            return f"Python {key.__name__} (weakly typed)"
        return f"NumPy scalar {key.__name__}"
    t, shape, dtype = key[0], key[1], key[2]
    kind = "array" if t is numpy.ndarray else t.__name__
    return f"{dtype} {kind} of shape {shape}"


def _leaf_change(old: Any, new: Any) -> str:
    def parts(k: Any) -> tuple[Any, Any, Any]:
        if isinstance(k, ShapedArray):
            return k.shape, k.dtype, ("traced", k.weak_type)
        if isinstance(k, type):
            return (), get_aval(k(0)).dtype, k
        return k[1], k[2], k[0]

    (s0, d0, t0), (s1, d1, t1) = parts(old), parts(new)
    bits = []
    if s0 != s1:
        bits.append(f"shape {s0} -> {s1}")
    if d0 != d1:
        bits.append(f"dtype {d0} -> {d1}")
    if not bits or t0 != t1:
        bits.append(f"{_describe_leaf(old)} -> {_describe_leaf(new)}")
    return ", ".join(bits)


def _unusable_donations(jaxpr: Any, donated: Sequence[bool]) -> list[int]:
    """The donated inputs no output can take the buffer of, by JAX's rule
    (``mlir._set_up_aliases``): each output takes one donated input of its shape and dtype,
    then the outputs left take one of their number of elements; an input the program never
    reads is pruned, not warned about (``keep_unused=False``)."""
    used = {v for e in jaxpr.eqns for v in e.invars if isinstance(v, Var)}
    used.update(v for v in jaxpr.outvars if isinstance(v, Var))
    left = [i for i, (v, d) in enumerate(zip(jaxpr.invars, donated)) if d and v in used]
    outs = [v.aval for v in jaxpr.outvars]
    unmatched = []
    for a in outs:  # exact shape and dtype first, in output order
        i = next((i for i in left if (jaxpr.invars[i].aval.shape, jaxpr.invars[i].aval.dtype)
                  == (a.shape, a.dtype)), None)
        if i is None:
            unmatched.append(a)
        else:
            left.remove(i)
    sizes = [a.size for a in unmatched]
    unusable = []
    for i in left:  # then any output of as many elements
        size = jaxpr.invars[i].aval.size
        if size in sizes:
            sizes.remove(size)
        else:
            unusable.append(i)
    return unusable


def _warn_unusable_donations(name: str, jaxpr: Any, donated: Sequence[bool],
                             labels: Sequence[str]) -> None:
    """JAX's warning when a donated buffer cannot be reused by any output (once per compile;
    its text starts as JAX's, so ``warnings.filterwarnings(message="Some donated buffers")``
    written for JAX catches it)."""
    if len(jaxpr.invars) != len(donated):
        return
    bad = _unusable_donations(jaxpr, donated)
    if not bad:
        return
    what = ", ".join(f"{numpy.dtype(a.dtype).name}[{','.join(map(str, a.shape))}]"
                     for a in (jaxpr.invars[i].aval for i in bad))
    args = ", ".join(labels[i] for i in bad) if len(labels) == len(donated) else "?"
    warnings.warn(
        f"Some donated buffers were not usable: {what}.\njit({name}): no output of the "
        f"same shape and dtype (or number of elements) can take the buffer of {args}; "
        "drop it from donate_argnums / donate_argnames (see docs/jit.md)", UserWarning,
        stacklevel=5)


class _Entry:
    """One traced signature: the jaxpr, the output structure and (lazily) the executable."""

    __slots__ = ("closed", "out_tree", "donated", "exe", "labels", "key", "consts", "out_kind",
                 "run", "consumed_keys")

    def __init__(self, closed, out_tree, donated, labels, key, consts) -> None:
        self.closed = closed
        self.consts = consts  # tracers of enclosing transformations, passed as leading args
        self.out_tree = out_tree
        # 1: a single array out, 2: a flat tuple of them (no unflattening needed), 0: other.
        n = out_tree.num_leaves
        self.out_kind = (1 if out_tree.is_leaf()
                         else 2 if out_tree == tree_util.tree_structure((0,) * n) else 0)
        self.donated = donated
        self.exe = None
        self.run: Any = None  # the callable the eager fast path uses
        self.labels = labels
        self.key = key
        # the argument leaves a call consumes as PRNG keys (the key-reuse checker's, lazily)
        self.consumed_keys: tuple[int, ...] | None = None

    def executable(self, name: str) -> Any:
        exe = self.exe
        if exe is None:
            if self.donated is not None:
                _warn_unusable_donations(name, self.closed.jaxpr, self.donated, self.labels)
            exe = self.exe = _compile.compile_jaxpr(self.closed, self.donated, name)
        return exe

    def runner(self, name: str, leaves: Sequence[Any]) -> Any:
        """``run(*leaves) -> list``: with an array among the arguments (or consts) the array
        module follows from their types alone, which this signature fixes, so it is bound
        once; otherwise (Python scalars only) it is looked up per call."""
        exe = self.executable(name)
        run: Any = exe
        arrays = [x for x in (*leaves, *exe.jaxpr.consts) if is_array(x)]
        if arrays:
            xp = _compile.call_module(*leaves, *arrays[:1])
            run = functools.partial(exe.fn if exe.donated is None else exe.call_donating, xp)
            if xp is not numpy and any(isinstance(x, numpy.generic) for x in leaves):
                on_device = run

                def run(*xs: Any) -> list[Any]:
                    return on_device(*_compile.device_scalars(xp, xs))
        j = exe.jaxpr.jaxpr
        unproduced = {*j.invars, *j.constvars}  # every other variable is an equation's result
        if any(not isinstance(v, Var) or v in unproduced or v.aval.weak_type
               for v in j.outvars):
            # An output that is an input or a literal may be a Python/NumPy scalar, and a
            # weakly typed result is one (arithmetic on Python scalars alone): jit's results
            # are arrays (as JAX's are), on the arguments' device.
            inner = run

            def run(*xs: Any) -> list[Any]:
                return _scalars_to_arrays(inner(*xs), xs)

        self.run = run
        return run


#: While set, every call of a jitted function calls it as ``check(jitted, entry, args, kwargs,
#: leaves)`` before running: funcgrad.random's key-reuse checker sets it while it checks, to
#: mark the keys each call consumes (on every call, cache hits included, as JAX's checker).
jit_call_check: ContextVar[Callable[..., None] | None] = ContextVar(
    "funcgrad_jit_call_check", default=None)

#: The jitted function of ``jit(device=/backend=)`` whose arguments are being placed now.
_placing: ContextVar[Any] = ContextVar("funcgrad_jit_placing", default=None)


class Jitted:
    """A function compiled by :func:`jit`; call it like the original.

    Attributes and methods: ``trace_count`` (traces so far), ``trace(*args)`` /
    ``lower(*args)`` (the ahead-of-time stages for those arguments, see
    :mod:`funcgrad.stages`), ``source(*args)`` (the generated Python code), ``clear_cache()``.
    """

    def __init__(
        self,
        fun: Callable[..., Any],
        static_argnums: tuple[int, ...],
        static_argnames: tuple[str, ...],
        donate_argnums: tuple[int, ...],
        explain_retraces: bool,
        donate_argnames: tuple[str, ...] = (),
        inline: bool = False,
        device: str | None = None,
        in_shardings: Any = None,
        out_shardings: Any = None,
    ) -> None:
        functools.update_wrapper(self, fun)
        self._device = device
        # layouts over a mesh, as given: one device computes everything, so they are only
        # checked against the shapes and reported by the stages (Compiled.input_shardings)
        self._in_shardings = in_shardings
        self._out_shardings = out_shardings
        self._fun = fun
        self._name = getattr(fun, "__name__", None) or type(fun).__name__
        try:
            self._params = list(inspect.signature(fun).parameters.values())
        except (TypeError, ValueError):
            self._params = []
        positional = [p for p in self._params
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        _check_argnums(self._name, self._params, positional, static_argnums, static_argnames,
                       donate_argnums, donate_argnames)
        nums, names = _by_position_and_name(positional, static_argnums, static_argnames)
        d_nums, d_names = _by_position_and_name(positional, donate_argnums, donate_argnames)
        n_pos = len(positional)
        at = {i % n_pos for i in nums} & {i % n_pos for i in d_nums} if n_pos else set()
        both = sorted(names & d_names | {positional[i].name for i in at})
        if both:
            raise ValueError(
                f"jit({self._name}): static and donated arguments cannot intersect, but "
                f"{', '.join(both)} {'is' if len(both) == 1 else 'are'} both (a static "
                "argument is a Python value, with no buffer to donate)"
            )
        self._static_nums = frozenset(nums)
        self._neg_static = tuple(i for i in nums if i < 0)
        self._static_names = frozenset(names)
        self._positional_names = [p.name for p in positional]
        self._donate = frozenset(d_nums)
        self._donate_names = frozenset(d_names)
        self._inline = inline
        self._explain = explain_retraces
        options = (self._static_nums, self._static_names, self._donate, self._donate_names,
                   inline, device)
        cache = _signature_caches.get(fun, options)
        if cache is None:
            cache = LRUCache(JIT_CACHE_SIZE)
            with contextlib.suppress(TypeError):  # not weakly referenceable: its own cache
                _signature_caches.put(fun, options, cache)
        self._cache = cache
        self._last: _Entry | None = None
        self.trace_count = 0
        self._warned_retracing = False

    def __repr__(self) -> str:
        return f"<jitted {self._name}>"

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self if obj is None else functools.partial(self, obj)

    def clear_cache(self) -> None:
        """Forget every traced signature (the next call traces again)."""
        self._cache.clear()
        self._last = None

    def _cache_size(self) -> int:
        """How many argument signatures are cached now (at most :data:`JIT_CACHE_SIZE`), as
        JAX's ``jitted._cache_size()``.

        Example:
            >>> import numpy as np, funcgrad
            >>> f = funcgrad.jit(lambda x: x + 1)
            >>> _ = f(np.ones(2)); _ = f(np.ones(3)); _ = f(np.ones(2))
            >>> f._cache_size()
            2
        """
        return len(self._cache)

    # -- argument handling ----------------------------------------------------------------

    def _arg_label(self, i: int) -> str:
        if i < len(self._positional_names):
            return self._positional_names[i]
        return f"args[{i}]"

    def _split(self, args: tuple, kwargs: dict) -> tuple[list, list, dict, list]:
        """(static key parts, dynamic positional args, dynamic kwargs, dynamic arg indices)."""
        statics: list[Any] = []
        dyn_args: list[Any] = []
        dyn_pos: list[int] = []
        nums = self._static_nums
        if self._neg_static:
            nums = nums | {i + len(args) for i in self._neg_static}
        for i, a in enumerate(args):
            if i in nums:
                # Keyed by name where there is one, so f(x, 3) and f(x, n=3) share a trace.
                k = self._positional_names[i] if i < len(self._positional_names) else i
                statics.append((k, self._static_value(a, i, None)))
            else:
                dyn_args.append(a)
                dyn_pos.append(i)
        dyn_kwargs = kwargs
        if kwargs and self._static_names:
            dyn_kwargs = {}
            for k, v in kwargs.items():
                if k in self._static_names:
                    statics.append((k, self._static_value(v, None, k)))
                else:
                    dyn_kwargs[k] = v
        return statics, dyn_args, dyn_kwargs, dyn_pos

    def _static_value(self, v: Any, i: int | None, name: str | None) -> Any:
        if i is not None:
            label = self._arg_label(i)
            what = f"argument {i} ('{label}')" if label != f"args[{i}]" else f"argument {i}"
        else:
            what = f"argument '{name}'"
        if isinstance(v, Tracer):
            # Tracers are unhashable too, but "use a tuple" would be the wrong advice here.
            # A ValueError as well, as JAX's ("Non-hashable static arguments").
            raise ArgumentMismatchError(
                f"{what} of {self._name} is static but got a traced value "
                f"({v.aval.str_short()}): static arguments must be concrete Python values. "
                "Mark it static in the enclosing jit too (static_argnums), pass it with "
                "in_axes=None under vmap, or make it a non-static argument"
            )
        try:
            hash(v)
        except TypeError:
            raise ArgumentMismatchError(
                f"{what} of {self._name} is static but unhashable: {type(v).__name__}. Static "
                "arguments are part of the cache key and must be hashable (use a tuple instead "
                "of a list, or pass arrays as non-static arguments)"
            ) from None
        return (type(v), v)

    def _lookup(self, args: tuple, kwargs: dict,
                abstract_ok: bool = False) -> tuple[_Entry, list[Any], bool]:
        # Collectives trace to different programs under different bound axes (all_gather's
        # shape is the axis size): the bound axes are part of every key.
        env = axis_env_key()
        if not kwargs and not self._static_nums:
            # Fast path: positional arrays and scalars only, the common call.
            fast_keys: list[Any] = []
            has_tracer = np_scalar = False
            for a in args:
                t = type(a)
                if t is numpy.ndarray:
                    fast_keys.append((t, a.shape, a.dtype))
                elif t in _FAST_LEAVES:
                    if t is int and not _I64_MIN <= a <= _I64_MAX:
                        break  # the general path names it
                    fast_keys.append(t)
                elif isinstance(a, Tracer):
                    fast_keys.append(a.aval)
                    has_tracer = True
                elif (isinstance(a, numpy.generic) and not has_tracer
                      and get_default_device() == "cpu"):
                    # host data only so far: a 0-d array's signature (_host_scalars_as_arrays)
                    fast_keys.append((numpy.ndarray, (), a.dtype))
                    np_scalar = True
                else:
                    break
            else:
                if np_scalar:
                    if has_tracer:
                        return self._lookup_general(args, kwargs, env, abstract_ok)
                    args = tuple(_host_scalars_as_arrays(list(args)))
                keys = tuple(fast_keys) if not env else (tuple(fast_keys), env)
                entry = self._cache.peek(keys)
                if entry is not self._last and entry is not None:
                    self._cache.touch(keys)  # LRU order; the last entry used is already last
                if entry is None:
                    statics, dyn_args, dyn_kwargs, dyn_pos = self._split(args, kwargs)
                    leaves, treedef = tree_util.tree_flatten((dyn_args, dyn_kwargs))
                    entry = self._trace(args, kwargs, statics, dyn_pos, leaves, treedef, keys)
                self._last = entry
                return entry, args, has_tracer
        return self._lookup_general(args, kwargs, env, abstract_ok)

    def _lookup_general(self, args: tuple, kwargs: dict, env: Any,
                        abstract_ok: bool) -> tuple[_Entry, list[Any], bool]:
        statics, dyn_args, dyn_kwargs, dyn_pos = self._split(args, kwargs)
        leaves, treedef = tree_util.tree_flatten((dyn_args, dyn_kwargs))
        leaves = _host_scalars_as_arrays(leaves)
        has_tracer = False
        keys = []
        for x in leaves:
            try:
                k = _leaf_key(x)
            except TypeError:
                raise self._leaf_error(x, leaves, treedef, dyn_pos) from None
            if type(x) is int and not _I64_MIN <= x <= _I64_MAX:
                raise self._leaf_error(x, leaves, treedef, dyn_pos)
            if type(k) is ShapedArray:
                has_tracer = True
            elif type(x) is ShapeDtypeStruct and not abstract_ok:
                raise self._leaf_error(x, leaves, treedef, dyn_pos)
            keys.append(k)
        key = (treedef, tuple(statics), tuple(keys), env)
        entry = self._cache.peek(key)
        if entry is not self._last and entry is not None:
            self._cache.touch(key)
        if entry is None:
            entry = self._trace(args, kwargs, statics, dyn_pos, leaves, treedef, key)
        self._last = entry
        return entry, leaves, has_tracer

    def _leaf_labels(self, treedef: Any, leaves: list, dyn_pos: list[int]) -> list[str]:
        if len(leaves) == len(dyn_pos) and treedef == _flat_args_treedef(len(leaves)):
            # Each dynamic argument is one leaf (the usual call): its label is its name.
            return [self._arg_label(i) for i in dyn_pos]
        labels = []
        dyn_args, dyn_kwargs = tree_util.tree_unflatten(treedef, list(range(len(leaves))))
        for p, leaf in tree_util.tree_flatten_with_path((dyn_args, dyn_kwargs))[0]:
            del leaf
            head, rest = p[1], tree_util.keystr(p[2:])
            if p[0] == tree_util.SequenceKey(0):
                base = self._arg_label(dyn_pos[head.idx])
            else:
                base = str(head.key)
            labels.append(base + rest)
        return labels

    def _leaf_error(self, x: Any, leaves: list, treedef: Any, dyn_pos: list[int]) -> Exception:
        """The error for an argument leaf jit cannot trace, naming the argument."""
        label = "?"
        for lab, leaf in zip(self._leaf_labels(treedef, leaves, dyn_pos), leaves):
            if leaf is x:
                label = lab
                break
        overflow = int_overflow(x, f"jit({self._name})", f"argument {label}")
        if overflow is not None:
            return overflow
        if isinstance(x, ShapeDtypeStruct):
            return TypeError(
                f"jit({self._name}): argument {label} is a ShapeDtypeStruct, a stand-in for an "
                "array: call the function with arrays; stand-ins are for "
                f"jit({self._name}).lower(...) / .trace(...) and funcgrad.eval_shape"
            )
        return TypeError(
            f"jit({self._name}): argument {label} is a {type(x).__name__}, which is not an "
            "array or a Python/NumPy scalar; mark it static with static_argnums / "
            "static_argnames (or convert lists with funcgrad.numpy.asarray)"
        )

    # -- tracing --------------------------------------------------------------------------

    def _trace(self, args, kwargs, statics, dyn_pos, leaves, treedef, cache_key) -> _Entry:
        check_tracing_allowed("jit", self._fun)
        # The full signature, for explaining retraces (the cache key may be a shortcut).
        key = (treedef, tuple(statics), tuple(_leaf_key(x) for x in leaves))
        if (self._explain or _explain_misses.get()) and self._last is not None:
            self._warn_retrace(key)
        elif self.trace_count + 1 >= RETRACE_WARN_AFTER and not self._warned_retracing:
            self._warned_retracing = True
            self._warn_keeps_retracing(key)
        labels = self._leaf_labels(treedef, leaves, dyn_pos)
        in_avals = [get_aval(x) for x in leaves]
        if _log_compiles.get():
            _logger.warning("Compiling jit(%s) for arguments (%s) (trace #%d)", self._name,
                            ", ".join(a.str_short() for a in in_avals), self.trace_count + 1)
        origins = [f"argument {lab}" for lab in labels]
        out_store: list[Any] = []
        fun = self._fun

        def flat_fun(*tracers: Any) -> list[Any]:
            dyn_args, dyn_kwargs = tree_util.tree_unflatten(treedef, list(tracers))
            full = list(args)
            for i, v in zip(dyn_pos, dyn_args):
                full[i] = v
            kw = dict(kwargs)
            kw.update(dyn_kwargs)
            out = fun(*full, **kw)
            out_leaves, out_tree = tree_util.tree_flatten(out)
            for o in out_leaves:
                if not isinstance(o, Tracer):
                    try:
                        get_aval(o)
                    except TypeError:
                        raise TypeError(
                            f"jit({self._name}) returned a {type(o).__name__}; jitted "
                            "functions return (pytrees of) arrays and scalars"
                        ) from None
            out_store.append(out_tree)
            return out_leaves

        closed = trace_to_jaxpr(flat_fun, in_avals, current_trace(), origins)
        self.trace_count += 1
        closed, tracer_consts = jaxpr_rules.hoist_tracer_consts(closed)
        donated = self._donated_leaves(treedef, leaves, dyn_pos, len(args))
        entry = _Entry(closed, out_store[0], donated, labels, key, tracer_consts)
        if not tracer_consts:
            self._cache[cache_key] = entry
        return entry

    def _input_tracers(self, args: tuple, kwargs: dict) -> list[Any]:
        """Trace the function again for these arguments (nothing is cached or counted) and
        return the tracers that stood for the argument leaves: for checks that watch what
        the traced function does with each input (the key-reuse checker)."""
        _, dyn_args, dyn_kwargs, dyn_pos = self._split(args, kwargs)
        leaves, treedef = tree_util.tree_flatten((dyn_args, dyn_kwargs))
        seen: list[Any] = []

        def flat_fun(*tracers: Any) -> list[Any]:
            seen.extend(tracers)
            d_args, d_kwargs = tree_util.tree_unflatten(treedef, list(tracers))
            full = list(args)
            for i, v in zip(dyn_pos, d_args):
                full[i] = v
            out = self._fun(*full, **{**kwargs, **d_kwargs})
            return tree_util.tree_leaves(out)

        trace_to_jaxpr(flat_fun, [get_aval(x) for x in _host_scalars_as_arrays(leaves)],
                       current_trace(), [f"argument {i}" for i in range(len(leaves))])
        return seen

    def _donated_leaves(self, treedef: Any, leaves: list, dyn_pos: list[int], nargs: int):
        if not self._donate and not self._donate_names:
            return None
        dyn_args, dyn_kwargs = tree_util.tree_unflatten(treedef, list(leaves))
        donate = {i + nargs if i < 0 else i for i in self._donate}

        def flags(tree: Any, flag: bool) -> Any:
            return tree_util.tree_map(lambda _: flag, tree)

        # The mask in leaf order: flattened as the arguments are.
        mask = tree_util.tree_leaves((
            [flags(a, i in donate) for i, a in zip(dyn_pos, dyn_args)],
            {k: flags(v, k in self._donate_names) for k, v in dyn_kwargs.items()},
        ))
        return tuple(mask) if any(mask) else None

    def _warn_keeps_retracing(self, key: Any) -> None:
        why = ""
        if self._last is not None:
            why = f" (this time because {self._retrace_reason(key)})"
        warnings.warn(
            RetraceWarning(
                f"jit({self._name}) is tracing again, trace #{self.trace_count + 1}{why}: "
                "every new argument signature (shape, dtype, weak type, static value) traces "
                "and compiles again, and only the last "
                f"{JIT_CACHE_SIZE} are kept. Pass values that vary as (non-static) arrays, "
                "pad shapes to a few sizes, or use jit(..., explain_retraces=True) to see why "
                "each trace happens. (This warning is shown once per function.)"
            ),
            stacklevel=5,
        )

    def _warn_retrace(self, key: Any) -> None:
        warnings.warn(
            RetraceWarning(f"jit({self._name}) is tracing again (trace "
                           f"#{self.trace_count + 1}) because {self._retrace_reason(key)}"),
            stacklevel=5,
        )

    def _retrace_reason(self, key: Any) -> str:
        last = self._last
        assert last is not None
        old = last.key
        treedef, statics, keys = key
        msgs: list[str] = []
        if old[0] != treedef:
            msgs.append(f"the argument structure changed: {old[0]} -> {treedef}")
        else:
            old_static = dict(old[1])
            for k, (_, v) in statics:
                if k in old_static and old_static[k][1] != v or k in old_static and (
                        old_static[k][0] is not type(v)):
                    where = f"argument {self._arg_label(k)}" if isinstance(k, int) else \
                        f"argument {k}"
                    msgs.append(f"static {where}: {old_static[k][1]!r} -> {v!r}")
            for lab, k0, k1 in zip(last.labels, old[2], keys):
                if k0 != k1:
                    msgs.append(f"argument {lab}: {_leaf_change(k0, k1)}")
        return "; ".join(msgs) if msgs else "a new combination of argument types"

    # -- calling --------------------------------------------------------------------------

    def _placed(self, args: tuple, kwargs: dict) -> Any:
        """A call of ``jit(device=/backend=)``: the arguments' arrays go there, and so do the
        arrays the function makes from Python data (traced values stay where they are)."""
        args, kwargs = tree_util.tree_map(
            lambda v: _api_devices.device_put(v, self._device) if is_array(v) else v,
            (args, kwargs))
        token = _placing.set(self)
        try:
            with _backend.default_device(self._device):
                return self(*args, **kwargs)
        finally:
            _placing.reset(token)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._device is not None and _placing.get() is not self:
            return self._placed(args, kwargs)
        if _jit_disabled.get():
            return self._fun(*args, **kwargs)
        if self._inline and staging_below(current_trace()):
            # inline=True: traced into the enclosing program's equations (no jit equation).
            return self._fun(*args, **kwargs)
        entry, leaves, has_tracer = self._lookup(args, kwargs)
        check = jit_call_check.get()
        if check is not None:
            check(self, entry, args, kwargs, leaves)
        try:
            outs = self._run(entry, leaves, has_tracer)
        except NaNError as err:
            if not err.in_jitted_equation:
                raise
            done, result = self._deoptimized_nan(err, args, kwargs)
            if done and err.backward_only:
                # anomaly mode checks the backward pass only, which jitted equations cannot
                # tell apart: the eager run found the NaN in the forward pass, allowed there
                return result
            raise
        kind = entry.out_kind
        if kind == 1:
            return outs[0]
        if kind == 2:
            return tuple(outs)
        return tree_util.tree_unflatten(entry.out_tree, outs)

    def _deoptimized_nan(self, err: NaNError, args: tuple, kwargs: dict
                         ) -> tuple[bool, Any]:
        """JAX's "calling the de-optimized version": a NaN check found a NaN in an equation
        of this jitted function, where a derivative equation no longer knows the forward
        operation it belongs to. Run the Python function operation by operation (jit
        disabled), under the same check, so the error names that operation and its line
        (PyTorch's anomaly mode's report). Returns ``(True, result)`` when that run finds
        nothing, ``(False, None)`` when it cannot run; the caller decides whether ``err``
        stands."""
        # The function gets its arguments rebuilt from their leaves, as the traced one does
        # (a module wrapper unflattens to a copy of the module), so the re-run's state
        # updates land on copies, not on the caller's objects.
        leaves, tree = tree_util.tree_flatten((args, kwargs))
        args, kwargs = tree_util.tree_unflatten(tree, leaves)
        try:
            with disable_jit():
                return True, self._fun(*args, **kwargs)
        except NaNError as precise:
            msg = str(precise)
            cut = msg.rfind(" [invalid value (")  # JAX's words stay last
            cut = len(msg) if cut < 0 else cut
            raise NaNError(f"{msg[:cut]} (found in an equation of jit({self._name}); the "
                           "function was run again without jit to name the operation)"
                           f"{msg[cut:]}") from err
        except Exception:  # noqa: BLE001
            # the function fails some other way without jit (code written for tracing
            # only): the equation-level report stands
            return False, None

    def _run(self, entry: _Entry, leaves: Sequence[Any], has_tracer: bool) -> list[Any]:
        consts = entry.consts
        if not consts and not has_tracer and current_trace() is eval_trace:
            run = entry.run or entry.runner(self._name, leaves)
            return run(*leaves)
        n = len(consts) + len(leaves)
        return bind(jit_p, *consts, *leaves, jaxpr=entry.closed, name=self._name,
                    donated_invars=(False,) * n)

    def trace(self, *args: Any, **kwargs: Any) -> stages.Traced:
        """Stage the function out for these arguments: a :class:`~funcgrad.stages.Traced`
        (``.jaxpr``, ``.out_info``, ``.lower()``). Arguments may be arrays, scalars or
        stand-ins (:class:`~funcgrad.ShapeDtypeStruct`, :class:`~funcgrad.ShapedArray`, anything
        with ``.shape`` and ``.dtype``); static arguments must be their values. Shares the
        call cache: tracing here and then calling with arrays of those types traces once.

        Example:
            >>> import numpy as np, funcgrad
            >>> traced = funcgrad.jit(lambda x: x.T).trace(funcgrad.ShapedArray((2, 3), np.int32))
            >>> traced.out_info
            ShapeDtypeStruct(shape=(3, 2), dtype=int32)
        """
        nums = self._static_nums | {i + len(args) for i in self._neg_static}
        args = tuple(a if i in nums else tree_util.tree_map(_stand_in, a)
                     for i, a in enumerate(args))
        kwargs = {k: v if k in self._static_names else tree_util.tree_map(_stand_in, v)
                  for k, v in kwargs.items()}
        entry, _, _ = self._lookup(args, kwargs, abstract_ok=True)
        if entry.consts:
            raise TypeError(
                f"jit({self._name}).lower/trace: the function closes over values traced by an "
                "enclosing transformation (grad, vmap, ...); a lowered computation cannot hold "
                "them. Pass them as arguments instead"
            )
        sig = stages.Signature(self._name, entry.closed, entry.key[0], entry.out_tree,
                                entry.labels, entry.donated,
                                self._asked_in_shardings(args, kwargs, entry),
                                self._asked_out_shardings(entry))
        name = self._name

        def run(leaves: list[Any]) -> list[Any]:
            has_tracer = any(isinstance(x, Tracer) for x in leaves)
            return self._run(entry, leaves, has_tracer)

        return stages.Traced(sig, lambda: entry.executable(name), run)

    def _asked_in_shardings(self, args: tuple, kwargs: dict, entry: _Entry) -> list | None:
        """Per argument leaf, the sharding jit's ``in_shardings`` (a prefix of the dynamic
        positional arguments) or a ShapeDtypeStruct stand-in asks for; None where neither."""
        _, dyn_args, dyn_kwargs, _ = self._split(args, kwargs)
        leaves = tree_util.tree_leaves((list(dyn_args), dyn_kwargs))
        avals = entry.closed.in_avals
        if len(leaves) != len(avals):  # stand-ins that stand for several leaves (keys)
            return None
        asked: list[Any] = [getattr(x, "sharding", None) if isinstance(x, ShapeDtypeStruct)
                            else None for x in leaves]
        if self._in_shardings is not None:
            given = _broadcast_shardings(self._in_shardings, tuple(dyn_args), "in_shardings",
                                         self._name)
            asked[:len(given)] = [g if g is not None else a for g, a in zip(given, asked)]
        return _resolved(asked, avals) if any(s is not None for s in asked) else None

    def _asked_out_shardings(self, entry: _Entry) -> list | None:
        if self._out_shardings is None:
            return None
        outs = tree_util.tree_unflatten(entry.out_tree, list(entry.closed.out_avals))
        asked = _broadcast_shardings(self._out_shardings, outs, "out_shardings", self._name)
        return _resolved(asked, entry.closed.out_avals)

    def eval_shape(self, *args: Any, **kwargs: Any) -> Any:
        """The shapes and dtypes this function returns for these arguments (a pytree of
        :class:`~funcgrad.ShapeDtypeStruct`), computing nothing: :func:`eval_shape` of it, as
        JAX's ``jitted.eval_shape``. Static arguments are their values.

        Example:
            >>> import numpy as np, funcgrad
            >>> funcgrad.jit(lambda x, n: x[:n], static_argnums=1).eval_shape(np.ones(5), 2)
            ShapeDtypeStruct(shape=(2,), dtype=float64)
        """
        return eval_shape(self, *args, **kwargs)

    def lower(self, *args: Any, **kwargs: Any) -> stages.Lowered:
        """The computation lowered for these arguments: a :class:`~funcgrad.stages.Lowered`
        with ``.as_text()`` (the optimised jaxpr and the generated Python source),
        ``.jaxpr`` (the traced closed jaxpr), ``.out_info`` and ``.compile()``. Arguments as
        for :meth:`trace`.

        Example:
            >>> import numpy as np, funcgrad
            >>> lowered = funcgrad.jit(lambda x: x * 2.0).lower(np.ones(2))
            >>> print(lowered.jaxpr)
            { lambda ; a:f64[2]. let b:f64[2] = mul a 2.0:f64[] in (b,) }
            >>> lowered.compile()(np.ones(2)).tolist()
            [2.0, 2.0]
        """
        return self.trace(*args, **kwargs).lower()

    def source(self, *args: Any, **kwargs: Any) -> str:
        """The generated Python code run for these arguments (tracing if needed).

        Example:
            >>> import numpy as np, funcgrad
            >>> print(funcgrad.jit(lambda x: x).source(np.ones(2)), end="")
            def _lambda_(xp, v0):
                return [v0]
        """
        entry, _, _ = self._lookup(args, kwargs)
        if entry.consts:
            closed, _ = jaxpr_rules.hoist_tracer_consts(entry.closed)
            return _compile.compile_jaxpr(closed, None, self._name).source
        return entry.executable(self._name).source


@functools.lru_cache(maxsize=64)
def _flat_args_treedef(n: int) -> Any:
    """The structure of ``(args, {})`` for ``n`` positional leaves."""
    return tree_util.tree_structure(([0] * n, {}))


def _as_tuple(x: int | str | Sequence[Any] | None) -> tuple:
    if x is None:
        return ()
    if isinstance(x, str):
        return (x,)
    if isinstance(x, int | numpy.integer):  # a NumPy int too, as JAX accepts
        return (int(x),)
    return tuple(int(v) if isinstance(v, numpy.integer) else v for v in x)


def _positions(x: Any, what: str) -> tuple[int, ...]:
    """``static_argnums``/``donate_argnums`` as a tuple of ints (a NumPy int is one); a
    name or anything else is a TypeError naming the option."""
    out = []
    for i in _as_tuple(x) if not isinstance(x, float) else (x,):
        if isinstance(i, bool) or not isinstance(i, int | numpy.integer):
            hint = (f" (argument names go in {what.replace('nums', 'names')})"
                    if isinstance(i, str) else "")
            raise TypeError(f"jit: {what} must be ints (argument positions), got {i!r}{hint}")
        out.append(int(i))
    return tuple(out)


def _check_argnums(
    name: str,
    params: list[inspect.Parameter],
    positional: list[inspect.Parameter],
    static_argnums: tuple[int, ...],
    static_argnames: tuple[str, ...],
    donate_argnums: tuple[int, ...],
    donate_argnames: tuple[str, ...] = (),
) -> None:
    # A typo here would otherwise silently trace the argument instead of baking it in.
    if not params:
        return  # no signature to check against (a builtin, a C function)
    kinds = {p.kind for p in params}
    if inspect.Parameter.VAR_POSITIONAL not in kinds:
        n = len(positional)
        for what, nums in (("static_argnums", static_argnums), ("donate_argnums", donate_argnums)):
            for i in nums:
                if not -n <= i < n:
                    raise ValueError(
                        f"jit({name}): {what} contains {i}, but {name} takes only {n} "
                        f"positional argument(s) ({', '.join(p.name for p in positional)})"
                    )
    if inspect.Parameter.VAR_KEYWORD not in kinds:
        known = {p.name for p in params if p.kind is not inspect.Parameter.POSITIONAL_ONLY}
        for what, argnames in (("static_argnames", static_argnames),
                               ("donate_argnames", donate_argnames)):
            for a in argnames:
                if a not in known:
                    raise ValueError(
                        f"jit({name}): {what} contains {a!r}, which is not a parameter "
                        f"of {name} (its parameters: {', '.join(sorted(known)) or 'none'})"
                    )


def _by_position_and_name(positional: list[inspect.Parameter], argnums: tuple[int, ...],
                          argnames: tuple[str, ...]) -> tuple[set[int], set[str]]:
    """``argnums`` and ``argnames`` completed with each other: an argument marked by position
    may also be passed by name and the other way round (as JAX's static/donated arguments)."""
    nums, names = set(argnums), set(argnames)
    for i, p in enumerate(positional):
        if i in nums and p.kind is p.POSITIONAL_OR_KEYWORD:
            names.add(p.name)
        if p.name in names:
            nums.add(i)
    return nums, names


def jit(
    fun: Callable[..., Any] | None = None,
    static_argnums: int | Sequence[int] = (),
    static_argnames: str | Sequence[str] = (),
    donate_argnums: int | Sequence[int] = (),
    explain_retraces: bool = False,
    *,
    donate_argnames: str | Sequence[str] = (),
    keep_unused: bool = False,
    inline: bool = False,
    in_shardings: Any = None,
    out_shardings: Any = None,
    device: Any = None,
    backend: str | None = None,
    compiler_options: dict[str, Any] | None = None,
) -> Any:
    """Compile ``fun``: trace it once per argument signature, then run generated code.

    ``static_argnums`` / ``static_argnames`` mark arguments that are Python values baked into
    the trace (hashable; a new value traces again) -- use them for shapes, flags, loop counts.
    ``donate_argnums`` lets the compiled code reuse those arguments' buffers (their contents are
    garbage afterwards); ``donate_argnames`` names them instead (either marks an argument
    passed by position or by name). ``keep_unused`` is accepted as JAX's: the compiled call
    always takes every argument, used or not. ``inline=True`` traces ``fun`` straight into an
    enclosing ``jit`` / ``make_jaxpr`` program (no nested ``jit`` equation); called outside
    one, it compiles as usual. ``explain_retraces=True`` warns with :class:`RetraceWarning` saying
    which argument changed whenever a new trace is needed. Works as a decorator too
    (``@jit`` or ``@functools.partial(jit, static_argnums=1)``). ``in_shardings`` /
    ``out_shardings`` are accepted as JAX's layouts over a device mesh
    (:mod:`funcgrad.sharding`): funcgrad computes on one device, so they change nothing but
    what ``lower(...).compile().input_shardings`` / ``output_shardings`` report.
    ``device`` (a device, e.g. ``funcgrad.devices()[0]``) or ``backend`` (a platform:
    ``"cpu"``, ``"gpu"``/``"cuda"``) runs the function there, its array arguments copied to
    it (deprecated in JAX, which warns as here: ``device_put`` the arguments instead).
    ``compiler_options`` must be empty (None or ``{}``), as for ``Lowered.compile``: XLA's
    flags have no compiler to go to here.

    Python control flow on traced values raises :class:`~funcgrad.ConcretizationError`; use
    static arguments, ``funcgrad.numpy.where``, ``funcgrad.cond`` or ``funcgrad.while_loop``.

    Example:
        >>> import numpy as np, funcgrad, funcgrad.numpy as fnp
        >>> f = funcgrad.jit(lambda x: fnp.sum(fnp.sin(x) ** 2))
        >>> float(f(np.zeros(3))), f.trace_count
        (0.0, 1)
    """
    nums = _positions(static_argnums, "static_argnums")
    names = tuple(str(n) for n in _as_tuple(static_argnames))
    donate = _positions(donate_argnums, "donate_argnums")
    donate_names = tuple(str(n) for n in _as_tuple(donate_argnames))
    del keep_unused  # every argument is always kept: nothing to choose
    if compiler_options is not None and not isinstance(compiler_options, dict):
        raise TypeError(f"jit: compiler_options must be a dict of XLA options, got "
                        f"{type(compiler_options).__name__}")
    if compiler_options:
        # As Lowered.compile(compiler_options=...): options for a compiler that is not here
        # would be silently dropped.
        raise ValueError(f"jit(compiler_options={compiler_options!r}): funcgrad's compiler "
                         "takes no options (there is no XLA); leave them out")
    place = _placement(device, backend)
    if fun is None:
        def decorate(f: Callable[..., Any]) -> Jitted:
            if not callable(f):
                raise TypeError(f"jit expects a callable, got {type(f).__name__}")
            return Jitted(f, nums, names, donate, explain_retraces, donate_names, inline, place,
                          in_shardings, out_shardings)
        return decorate
    if not callable(fun):
        raise TypeError(f"jit expects a callable, got {type(fun).__name__}")
    return Jitted(fun, nums, names, donate, explain_retraces, donate_names, inline, place,
                  in_shardings, out_shardings)


def _broadcast_shardings(prefix: Any, tree: Any, what: str, name: str) -> list[Any]:
    """One sharding (or None) per leaf of ``tree`` from the pytree prefix ``prefix``."""
    def is_spec(s: Any) -> bool:
        return s is None or isinstance(s, _sharding.Sharding | _sharding.PartitionSpec)

    try:
        return tree_util.broadcast_prefix(prefix, tree, is_leaf=is_spec)
    except ValueError as e:
        raise ValueError(f"jit({name}): {what} must be a sharding or a pytree prefix of the "
                         f"arguments' structure ({e})") from None


def _resolved(asked: list[Any], avals: Sequence[ShapedArray]) -> list[Any]:
    """PartitionSpecs over the current mesh as NamedShardings, each checked against its
    array's shape (as JAX's: a split dimension must divide evenly)."""
    out: list[Any] = []
    for s, a in zip(asked, avals):
        if isinstance(s, _sharding.PartitionSpec):
            mesh = _sharding.get_mesh()
            s = None if mesh is None else _sharding.NamedSharding(mesh, s)
        if isinstance(s, _sharding.Sharding):
            s.check_shape(a.shape)
        out.append(s)
    return out


def _placement(device: Any, backend: str | None) -> str | None:
    """The device ``jit(device=..., backend=...)`` runs on (None: where the arguments are)."""
    if device is None and backend is None:
        return None
    if device is not None and backend is not None:
        raise ValueError(f"can't specify both a device and a backend for jit, got "
                         f"device={device!r} and backend={backend!r}")
    warnings.warn("backend and device argument on jit is deprecated. You can use "
                  "`funcgrad.device_put(..., device)` on the inputs to the jitted function "
                  "to get the same behavior.", DeprecationWarning, stacklevel=3)
    if backend is not None and not isinstance(backend, str):
        raise TypeError(f"jit: backend must be a platform name such as 'cpu' or 'gpu', got "
                        f"{type(backend).__name__}")
    name = device if device is not None else backend
    try:
        place = _backend.canonical_device(name)
    except ValueError as e:
        raise RuntimeError(f"jit: unknown {'device' if device is not None else 'backend'} "
                           f"{name!r} ({e}); available: {_backend.available_devices()}") from None
    if place not in _backend.available_devices() and place != "strict":
        raise RuntimeError(f"jit: {'device' if device is not None else 'backend'} {name!r} "
                           f"is not present; available: {_backend.available_devices()}")
    return place


def eval_shape(fun: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """The shapes and dtypes ``fun(*args, **kwargs)`` would return, without computing it.

    Arguments may be arrays, scalars, :class:`~funcgrad.ShapedArray` or anything with
    ``.shape`` and ``.dtype``; the result is a pytree of :class:`~funcgrad.ShapeDtypeStruct`
    (``.shape``, ``.dtype``, ``.ndim``, ``.size``, ``.weak_type``), as JAX's.

    Example:
        >>> import numpy as np, funcgrad
        >>> funcgrad.eval_shape(lambda x: x.T, funcgrad.ShapedArray((2, 3), np.float32))
        ShapeDtypeStruct(shape=(3, 2), dtype=float32)
    """
    check_tracing_allowed("eval_shape", fun)
    if isinstance(fun, Jitted) and (fun._static_nums or fun._static_names):
        # Static arguments stay Python values (as in a call), only the others are abstract.
        nums = fun._static_nums | {i + len(args) for i in fun._neg_static}
        s_pos = {i for i in range(len(args)) if i in nums}
        s_kw = {k: v for k, v in kwargs.items() if k in fun._static_names}

        def dynamic(*d_args: Any, **d_kwargs: Any) -> Any:
            it = iter(d_args)
            full = [a if i in s_pos else next(it) for i, a in enumerate(args)]
            return fun(*full, **s_kw, **d_kwargs)

        return eval_shape(dynamic, *[a for i, a in enumerate(args) if i not in s_pos],
                          **{k: v for k, v in kwargs.items() if k not in s_kw})
    args, kwargs = tree_util.tree_map(expand_stand_in, (args, kwargs))
    leaves, treedef = tree_util.tree_flatten((args, kwargs))
    for path, x in tree_util.tree_flatten_with_path((args, kwargs))[0] if any(
            int_overflow(x, "", "") for x in leaves) else ():
        err = int_overflow(x, "eval_shape", "argument " + (
            f"{path[1].idx}" if path[0].idx == 0 else f"{path[1].key}"
        ) + tree_util.keystr(path[2:]))
        if err is not None:
            raise err
    avals = [_as_aval(x) for x in leaves]
    store: list[Any] = []

    def flat(*tracers: Any) -> list[Any]:
        a, kw = tree_util.tree_unflatten(treedef, list(tracers))
        out_leaves, out_tree = tree_util.tree_flatten(fun(*a, **kw))
        store.append(out_tree)
        return out_leaves

    closed = trace_to_jaxpr(flat, avals, current_trace())
    shardings = None
    if isinstance(fun, Jitted) and fun._out_shardings is not None:
        # the layouts jit's out_shardings asks for, as JAX's eval_shape reports them
        outs = tree_util.tree_unflatten(store[0], list(closed.out_avals))
        shardings = _resolved(_broadcast_shardings(fun._out_shardings, outs, "out_shardings",
                                                   fun._name), closed.out_avals)
    return stages.out_info(store[0], closed.out_avals, shardings)


def _as_aval(x: Any) -> ShapedArray:
    if isinstance(x, ShapedArray):
        return x
    try:
        return get_aval(x)
    except TypeError:
        shape, dtype = getattr(x, "shape", None), getattr(x, "dtype", None)
        if shape is None or dtype is None:
            raise TypeError(
                f"eval_shape: {type(x).__name__} is neither an array nor something with "
                ".shape and .dtype"
            ) from None
        return ShapedArray(tuple(shape), dtype)


def compiled_source(fun: Callable[..., Any], *args: Any, **kwargs: Any) -> str:
    """The Python code ``jit(fun)`` generates for these arguments.

    Example:
        >>> import numpy as np, funcgrad
        >>> from funcgrad.ops.elementwise import sin
        >>> print(funcgrad.compiled_source(sin, np.zeros(2)).splitlines()[1].split("#")[0].strip())
        v1 = xp.sin(v0)
    """
    return jit(fun).source(*args, **kwargs)
