"""Primitives, ``bind``, and the stackless trace machinery.

The current trace lives in a :class:`contextvars.ContextVar`. Every transforming trace has a
``parent`` (the trace that was current when it was made) and is its own unique tag: a value is
a dual number / batched / staged only for the trace whose tracer it is; for every other trace it
is a constant. Rules run with the parent as the current trace. This keeps nested derivatives,
closures over outer tracers and perturbation confusion right without a global stack.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from typing import Any

import numpy

from funcgrad import backend as _backend
from funcgrad import config as _config
from funcgrad.avals import ShapedArray, get_aval, tracer_types
from funcgrad.backend import operator_index, xp_for
from funcgrad.errors import (
    ConcretizationError,
    FuncgradError,
    SourceInfo,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    TracerMutationError,
    UnexpectedTracerError,
    user_source_info,
)

__all__ = [
    "Primitive",
    "bind",
    "bind1",
    "Trace",
    "EvalTrace",
    "Tracer",
    "current_trace",
    "set_current_trace",
    "eval_trace",
    "user_source_info",
    "SourceInfo",
    "concrete_or_error",
    "AxisFrame",
    "extend_axis_env",
    "lookup_axis",
    "bind_axis_for_context",
    "unbind_axis",
    "axis_env_key",
    "branch_path",
    "tracing_branch",
    "exclusive_branches",
    "non_array_operand_error",
    "eval_jaxpr",
    "jaxpr_evaluator",
    "place_uncommitted",
    "device_put_rule",
]

Params = dict[str, Any]


class Primitive:
    """An operation that transformations know by identity.

    Each primitive carries an implementation ``impl(*arrays, **params) -> list`` and a
    shape/dtype rule ``abstract_eval(*avals, **params) -> list[ShapedArray]``; the
    interpreters keep their own rule tables (jvp, transpose, batching) keyed by the primitive.
    ``multiple_results``: ``bind`` returns several outputs. ``carries_jaxprs``: a higher-order
    primitive whose params hold jaxprs or functions (jit, remat, control flow, custom
    derivatives), so its params, which may keep large constants alive, are never used as a
    cache key.

    Example:
        >>> p = Primitive("my_double")
        >>> _ = p.def_impl(lambda x: [x * 2])
        >>> _ = p.def_abstract_eval(lambda a: [a])
        >>> bind(p, 3.0)  # results are arrays, as NumPy operations give
        [array(6.)]
    """

    __slots__ = ("name", "multiple_results", "carries_jaxprs", "impl", "abstract_eval",
                 "__weakref__")

    def __init__(self, name: str, multiple_results: bool = False,
                 carries_jaxprs: bool = False) -> None:
        self.name = name
        self.multiple_results = multiple_results
        self.carries_jaxprs = carries_jaxprs
        self.impl: Callable[..., list[Any]] | None = None
        self.abstract_eval: Callable[..., list[ShapedArray]] | None = None
        primitive_registry.append(self)

    def def_impl(self, impl: Callable[..., list[Any]]) -> Callable[..., list[Any]]:
        self.impl = impl
        return impl

    def missing_impl_error(self) -> TypeError:
        """The error for running this primitive without an implementation (eagerly or in
        compiled code)."""
        return TypeError(f"primitive '{self.name}' has no implementation to run; give it one "
                         "with def_impl(fn)")

    def def_abstract_eval(
        self, rule: Callable[..., list[ShapedArray]]
    ) -> Callable[..., list[ShapedArray]]:
        self.abstract_eval = rule
        return rule

    def bind(self, *args: Any, **params: Any) -> Any:
        """Apply the primitive on the current trace, as JAX's ``Primitive.bind``: the one
        output of a single-result primitive, the list of outputs when ``multiple_results``
        (:func:`bind` always returns the list).

        Example:
            >>> p = Primitive("my_triple")
            >>> _ = p.def_impl(lambda x: [x * 3])
            >>> _ = p.def_abstract_eval(lambda a: [a])
            >>> p.bind(2.0)
            array(6.)
        """
        outs = _trace_var.get().process_primitive(self, args, params)
        return outs if self.multiple_results else outs[0]

    def __repr__(self) -> str:
        return self.name


#: every primitive ever made, in creation order; the rule-coverage test walks it.
primitive_registry: list[Primitive] = []

_tag_counter = itertools.count(1)


class Trace:
    """Base of all traces. ``parent`` is the trace current when this one was made."""

    __slots__ = ("parent", "tag", "__weakref__")
    #: how error messages name the transformation this trace implements
    user_name = "a transformation"
    #: whether this trace differentiates its tracers: converting one of its float tracers to a
    #: Python number (float(), math.*) would drop the derivative silently, so it raises
    differentiates = False

    def __init__(self, parent: Trace | None) -> None:
        self.parent = parent
        self.tag = next(_tag_counter)

    def process_primitive(self, prim: Primitive, args: Sequence[Any], params: Params) -> list:
        raise NotImplementedError  # every concrete trace overrides this

    def __repr__(self) -> str:
        return f"{type(self).__name__}#{self.tag}"


#: the primitives of Python's arithmetic operators (``+ - * / // % **``, unary ``-``): on
#: operands that are all weakly typed (Python scalars) the result stays weak -- a Python scalar
#: when run, a weak aval when traced -- as the same expression outside funcgrad is Python
#: arithmetic giving a Python scalar (``x32 * (1 - s)`` stays float32 under jit and grad);
#: every other operation's result is strong, as in NumPy 2 (``numpy.sqrt(0.5)`` is a float64).
#: Filled by each primitive's block; :mod:`funcgrad.compile.rules` re-exports it.
weak_arithmetic_primitives: set[Primitive] = set()
_PY_NUMBERS = (int, float, complex)


class EvalTrace(Trace):
    """The bottom trace: runs implementations on concrete arrays."""

    __slots__ = ()

    def process_primitive(self, prim: Primitive, args: Sequence[Any], params: Params) -> list:
        subclassed = False
        for a in args:
            if type(a) is _ndarray:
                continue
            if isinstance(a, Tracer):
                raise _leaked_tracer_error(a, prim)
            if isinstance(a, _ndarray):
                subclassed = True
            elif not isinstance(a, _SCALAR_TYPES) and type(a) not in _type_to_device and \
                    not isinstance(getattr(a, "aval", None), ShapedArray):
                # (checked past the ndarray/scalar cases: the hot path is unchanged; values
                # with an aval of their own, such as loops' residual tapes, pass); None, a
                # string...: the error traced operations give, naming the operand
                raise non_array_operand_error(prim, args) or _foreign_operand_error(a, prim)
        if subclassed:
            # NumPy subclasses (matrix, masked arrays, memmap) compute as plain arrays, as
            # numpy.asarray and jax.numpy give them: their own semantics (a matrix ravels to
            # (1, n), a masked sum skips what a masked count keeps) would leak into results
            args = [numpy.asarray(a) if isinstance(a, _ndarray) else a for a in args]
        if len(_device_modules) > 1:  # a device backend is loaded: host operands may meet it
            args = place_uncommitted(args)
        if params:
            try:
                hash(tuple(params.values()))
            except TypeError:
                raise _unhashable_param_error(prim, params) from None
        try:
            outs = prim.impl(*args, **params) if params else prim.impl(*args)  # type: ignore[misc]
        except FuncgradError:
            raise
        except Exception as e:
            if prim.impl is None:  # checked here, off the hot path
                raise prim.missing_impl_error() from None
            raise _explain_impl_failure(prim, args, params, e) from e
        # NumPy hands back scalars (numpy.float64) from reductions and from ufuncs on 0-d
        # arrays, and identity-like impls may hand back a Python scalar. A scalar has no
        # device, and in NumPy 2 an operation's result is strong-typed (only Python scalars
        # are weak), so every result becomes an array.
        if args and type(args[0]) in _PY_NUMBERS and prim in weak_arithmetic_primitives and all(
                type(a) in _PY_NUMBERS for a in args):
            # Python arithmetic on Python scalars (a JVP's primals): weak stays weak, a Python
            # scalar (whatever device computed it), as under jit.
            return [o.item() if hasattr(o, "item") else o for o in outs]
        for o in outs:
            if type(o) is not _ndarray and isinstance(o, _SCALAR_TYPES):
                return _scalars_to_arrays(outs, args)
        return outs


_SCALAR_TYPES = (numpy.generic, bool, int, float, complex)
_ndarray = numpy.ndarray
_type_to_device = _backend._type_to_device
#: the backend's loaded array modules (device name -> module): NumPy alone until a device
#: backend (CuPy, the strict test device) is first used; until then no operands can mix
_device_modules = _backend._modules

#: how a traced value moves to another device: ``ops/elementwise.py``'s ``device_put``, which
#: binds JAX's ``device_put`` primitive (filled by that block: core never imports ops)
device_put_rule: list[Callable[[Any, str], Any]] = []


def _operand_device(x: Any) -> str | None:
    if isinstance(x, Tracer):
        return x.aval.device
    return _backend.device_of(x)


def place_uncommitted(args: Sequence[Any]) -> Sequence[Any]:
    """``args`` with their host (NumPy) arrays moved to the device of the other operands.

    Host arrays are *uncommitted*, as JAX treats NumPy inputs: an operation that meets them
    together with arrays of one device (CuPy's, the strict test device's) runs on that device,
    and the host operands are copied there (a traced host value through the ``device_put``
    primitive, so its cotangent goes back to the host). Operations on host arrays alone stay on
    the host. Arrays of two different devices are left as they are: the operation's rule then
    raises :class:`~funcgrad.errors.DeviceMismatchError` naming both, as JAX does for
    committed arrays. Returns ``args`` itself when nothing moves. An implicit host-to-device
    copy obeys :func:`funcgrad.transfer_guard` (``"log"``/``"disallow"`` and their
    ``*_explicit`` forms) as JAX's implicit transfers do: logged, or refused with a
    ``RuntimeError``.

    Example:
        >>> import funcgrad.numpy as fnp, numpy as np
        >>> with _backend.default_device("strict"):
        ...     a, b = place_uncommitted([np.ones(2), fnp.zeros(2)])
        >>> type(a).__name__, type(b).__name__
        ('StrictArray', 'StrictArray')
    """
    dev = None
    host = False
    for x in args:
        # (inline type lookups: this runs for every eager operation once a device backend is
        # loaded, the whole strict test pass)
        t = type(x)
        if t is _ndarray:
            host = True
            continue
        if t in _PY_NUMBERS or t is bool:
            continue
        d = _type_to_device.get(t)
        if d is None:
            d = _operand_device(x)
            if d is None:
                continue
            if d == "cpu":
                host = True
                continue
        if dev is None:
            dev = d
        elif d != dev:
            return args  # committed to two devices: the rule names both
    if not host or dev is None:
        return args
    _check_implicit_transfer(dev)
    moved = []
    for x in args:
        if _operand_device(x) == "cpu":
            x = device_put_rule[0](x, dev) if isinstance(x, Tracer) else \
                _backend.device_put(x, dev)
        moved.append(x)
    return moved


def _check_implicit_transfer(dev: str) -> None:
    """JAX's transfer guard for an implicit host-to-device copy: the ``log`` levels log it,
    the ``disallow`` levels refuse it."""
    levels = _config.transfer_guard_level.get()
    if not levels:
        return
    level = dict(levels).get("host_to_device", "allow")
    if level.startswith("disallow"):
        raise RuntimeError(
            f"Disallowed host-to-device transfer to {dev!r} (funcgrad.transfer_guard"
            f"({level!r})): a NumPy array met arrays on {dev!r} in one operation; move it "
            f"there first with funcgrad.device_put(x, {dev!r})"
        )
    if level.startswith("log"):
        logging.getLogger("funcgrad").warning("implicit host-to-device transfer to %r", dev)


def _scalars_to_arrays(outs: list, args: Sequence[Any]) -> list:
    # On the device the inputs chose (the default one for Python scalars alone).
    xp = xp_for(*args)
    return [xp.asarray(o) if isinstance(o, _SCALAR_TYPES) else o for o in outs]


def _foreign_operand_error(a: Any, prim: Primitive) -> TypeError:
    """An operand that is no array funcgrad computes with (a torch tensor, a JAX array, ...):
    refused, as JAX's functions refuse them, rather than handed to NumPy, which would give
    some operations' results back as the foreign type and fail in others."""
    t = type(a)
    return TypeError(
        f"{prim.name}: got an operand of type {t.__module__}.{t.__qualname__}, which is not "
        "a funcgrad array (a NumPy/CuPy array, a Python or NumPy scalar, or a funcgrad "
        "traced value). Convert it first with funcgrad.numpy.asarray(x) (which takes objects "
        "with __array__ or __dlpack__, such as torch tensors and JAX arrays)")


def _leaked_tracer_error(t: Tracer, prim: Primitive) -> UnexpectedTracerError:
    where = t._creation_site()
    return UnexpectedTracerError(
        f"{prim.name} received a tracer ({t.aval.str_short()}) of {t._trace.user_name} "
        f"({t._trace!r}) outside the "
        f"transformation that made it: it escaped (stored in a global or a closure and used "
        f"after the transformation returned).{where} Return values out of the transformed "
        "function instead of storing them."
    )


def _unhashable_param_error(prim: Primitive, params: Params) -> TypeError:
    bad = []
    for k, v in params.items():
        try:
            hash(v)
        except TypeError:
            bad.append(f"{k}={type(v).__name__}")
    return TypeError(
        f"{prim.name}: parameter(s) {', '.join(bad)} must be static, hashable Python data "
        "(an int, a tuple of ints, a dtype...), not an array or a list; pass array-valued "
        "operands as positional arguments instead"
    )


def _explain_impl_failure(
    prim: Primitive, args: Sequence[Any], params: Params, e: Exception
) -> Exception:
    # Run the shape rule first: it usually names the real problem better than NumPy does.
    try:
        avals = [get_aval(a) for a in args]
        if prim.abstract_eval is not None:
            prim.abstract_eval(*avals, **params)
    except FuncgradError as rule_error:
        return rule_error
    except Exception:
        avals = None
        bad_operand = non_array_operand_error(prim, args)
        if bad_operand is not None:
            return bad_operand
    shapes = ", ".join(a.str_short() for a in avals) if avals else "?"
    msg = f"{prim.name} on ({shapes}) failed{user_source_info().at()}: {e}"
    try:
        # Keep the exception's type (ValueError, OverflowError, LinAlgError...) so callers
        # can catch what NumPy would have raised.
        return type(e)(msg)
    except Exception:
        return RuntimeError(msg)


def non_array_operand_error(prim: Primitive, args: Sequence[Any]) -> TypeError | None:
    """The error naming the first operand of ``prim`` that is not an array (None if all are)."""
    for i, a in enumerate(args):
        try:
            get_aval(a)
        except FuncgradError:
            return None  # an array of an unsupported dtype: its own error says so
        except TypeError:
            what = "None" if a is None else f"a {type(a).__name__}"
            # an array of another library (torch, JAX) converts with asarray: say so
            hint = ("; convert it first with funcgrad.numpy.asarray(x)"
                    if hasattr(a, "__array__") or hasattr(a, "__dlpack__") else "")
            return TypeError(
                f"{prim.name}: operand {i} is {what}, not an array or a number{hint}"
                f"{user_source_info().at()}"
            )
    return None


eval_trace = EvalTrace(None)
_trace_var: ContextVar[Trace] = ContextVar("funcgrad_current_trace", default=eval_trace)


def current_trace() -> Trace:
    """The trace that ``bind`` sends primitives to right now."""
    return _trace_var.get()


@contextlib.contextmanager
def set_current_trace(trace: Trace) -> Iterator[None]:
    """Make ``trace`` current inside the ``with`` block."""
    token = _trace_var.set(trace)
    try:
        yield
    finally:
        _trace_var.reset(token)


def bind(prim: Primitive, *args: Any, **params: Any) -> list[Any]:
    """Apply ``prim`` to ``args`` on the current trace; always returns a list of outputs.

    Example:
        >>> import funcgrad.ops.elementwise as ew
        >>> bind(ew.sin_p, 0.0)  # an array (NumPy's scalar results become 0-d arrays)
        [array(0.)]
        >>> bind(ew.add_p, 1.0, 2.0)  # Python arithmetic on Python scalars stays Python's
        [3.0]
    """
    return _trace_var.get().process_primitive(prim, args, params)


#: The jaxpr evaluator, ``ir.eval_jaxpr`` (jaxprs are defined a layer up; ir fills this), so
#: that JAX's ``jax.core.eval_jaxpr`` has its name here too.
jaxpr_evaluator: list[Callable[..., list[Any]]] = []


def eval_jaxpr(jaxpr: Any, consts: Sequence[Any], *args: Any,
               propagate_source_info: bool = True) -> list[Any]:
    """Evaluate ``jaxpr`` on ``args`` (with ``consts`` for its constvars), binding each
    equation on the current trace, as JAX's ``jax.core.eval_jaxpr``: under a transformation
    the evaluation is transformed (see :func:`funcgrad.ir.eval_jaxpr`).

    Example:
        >>> import funcgrad, funcgrad.numpy as fnp, numpy as np
        >>> closed = funcgrad.make_jaxpr(lambda x: fnp.sin(x) * 2.0)(np.zeros(2))
        >>> eval_jaxpr(closed.jaxpr, closed.consts, np.array([0.0, np.pi / 2]))
        [array([0., 2.])]
    """
    return jaxpr_evaluator[0](jaxpr, consts, *args,
                              propagate_source_info=propagate_source_info)


def bind1(prim: Primitive, *args: Any, **params: Any) -> Any:
    """``bind`` for single-output primitives: returns the output itself."""
    return _trace_var.get().process_primitive(prim, args, params)[0]


# ---------------------------------------------------------------------------------------------
# Tracers


class Tracer:
    """A stand-in for an array inside a transformation.

    Tracers behave like arrays: Python operators, ``.T``, ``.shape``, indexing, array methods
    and the NumPy protocols (``numpy.sin(t)`` and ``ndarray * t`` trace) are installed by
    :mod:`funcgrad.numpy`. ``bool()`` (a Python ``if``) works when the trace knows the
    concrete value (under ``grad``, ``jvp``) and raises :class:`ConcretizationError` under
    staging (``jit``, ``make_jaxpr``) and ``vmap``. ``float()``, ``int()``, ``complex()`` (and
    so ``math.*`` and NumPy's scalar types) of a value being differentiated raise too: the
    Python number would silently carry no derivative. ``x.item()`` gives that constant on
    purpose.
    """

    __slots__ = ("_trace",)
    __array_priority__ = 1000

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        tracer_types.add(cls)

    @property
    def aval(self) -> ShapedArray:
        raise NotImplementedError  # every concrete tracer overrides this

    def to_concrete_value(self) -> Any:
        """The concrete array behind this tracer, or None when the trace does not know it."""
        return None

    def _origin(self) -> str:
        """A phrase saying where this value came from (an argument, an operation)."""
        return ""

    def _creation_site(self) -> str:
        return ""

    @property
    def shape(self) -> tuple[int, ...]:
        return self.aval.shape

    @property
    def dtype(self) -> Any:
        return self.aval.dtype

    @property
    def ndim(self) -> int:
        return len(self.aval.shape)

    @property
    def size(self) -> int:
        return self.aval.size

    @property
    def itemsize(self) -> int:
        return self.aval.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.aval.size * self.aval.dtype.itemsize

    def __len__(self) -> int:
        shape = self.aval.shape
        if not shape:
            raise TypeError("len() of a 0-d (scalar) traced array")
        return shape[0]

    def __iter__(self) -> Iterator[Any]:
        shape = self.aval.shape
        if not shape:
            raise TypeError("iteration over a 0-d (scalar) traced array")
        return (self[i] for i in range(shape[0]))

    def __setitem__(self, idx: Any, value: Any) -> None:
        raise TracerMutationError(
            f"traced arrays are immutable: `x[{_idx_str(idx)}] = ...` cannot be recorded. "
            f"Use the functional update `x = x.at[{_idx_str(idx)}].set(value)` (or .add, .mul, "
            ".min, .max) instead."
        )

    def __hash__(self) -> int:
        # Defined here, for every tracer (funcgrad.numpy installs __eq__ afterwards, which
        # does not reset it), so the message names funcgrad's Tracer, not an interpreter's.
        raise TypeError(
            f"unhashable type: funcgrad Tracer (a traced array {self.aval.str_short()} under "
            f"{self._trace.user_name}){user_source_info().at()}: like NumPy arrays, traced "
            "arrays cannot be dict keys, set members or hashed static arguments. Use a "
            "concrete value instead (for jit, mark the argument static)."
        )

    def _concrete(self, what: str, error: type[ConcretizationError] = ConcretizationError
                  ) -> Any:
        return concrete_or_error(self, what, error)

    def _error_class(self, error: type[ConcretizationError]) -> type[ConcretizationError]:
        """The class to raise for ``error`` about this tracer (vmap's are RuntimeErrors too)."""
        return error

    def __bool__(self) -> bool:
        return bool(self._concrete("bool() / a Python `if` or `while` condition",
                                   TracerBoolConversionError))

    def __float__(self) -> float:
        return float(self._number("float()"))

    def __int__(self) -> int:
        # Truncation to an integer has derivative zero (almost everywhere), so a constant is
        # its right derivative: int(x) of a differentiated value is allowed, as in JAX (it
        # sizes arrays: fnp.ones(int(x))); float()/complex() would drop a real derivative.
        return int(self._concrete("int()"))

    def __complex__(self) -> complex:
        return complex(self._number("complex()"))

    def _number(self, what: str) -> Any:
        # A Python number cannot carry a derivative: converting a differentiated value would
        # make it a constant without a word (x * float(x) differentiating as 3x, not x**2).
        if self._trace.differentiates and self.aval.dtype.kind in "fc":
            raise _dropped_derivative_error(self, what)
        return self._concrete(what)

    def __index__(self) -> int:
        # (a concrete value on a device is a CuPy array, which has no __index__ of its own)
        return operator_index(self._concrete("an index (__index__)",
                                             TracerIntegerConversionError))

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        src = user_source_info()
        raise self._error_class(TracerArrayConversionError)(
            f"a traced array ({self.aval.str_short()}) cannot be converted to a NumPy array"
            f"{src.at()}: inside a transformation, use funcgrad.numpy "
            "(`import funcgrad.numpy as fnp`) instead of numpy functions that funcgrad does not "
            "know, and return values out of the transformed function to get arrays."
            # SciPy converts its arguments first thing: its functions have funcgrad.scipy
            # counterparts of the same name (scipy.linalg.expm -> funcgrad.scipy.linalg.expm)
            + (" SciPy functions have differentiable counterparts of the same name in "
               "funcgrad.scipy (funcgrad.scipy.linalg, .fft, .special, .signal, ...)."
               if f"{os.sep}scipy{os.sep}" in (src.filename or "") else "")
            + (" A NumPy array indexed by a traced integer (x[i] in a loop body or under "
               "jit) needs funcgrad's indexing: fnp.take(x, i, axis=0) or fnp.at(x)[i].get()."
               if self.aval.dtype.kind in "iub" else "")
            + (" Converting a value being differentiated would also drop its derivative; if a "
               "constant is meant, use funcgrad.stop_gradient(x) first."
               if self._trace.differentiates else "")
        )

    def __repr__(self) -> str:
        head = f"{type(self).__name__}<{self.aval.str_short()}>({self._trace!r}"
        # As JAX's GradTracer(primal=...)/JVPTracer(primal=...): a value the trace knows
        # (grad, jvp) is shown, so a print inside a differentiated function shows numbers
        val = self.to_concrete_value()
        return f"{head})" if val is None else f"{head}, value={val})"

    def __deepcopy__(self, memo: Any) -> Tracer:
        return self

    def __copy__(self) -> Tracer:
        return self


tracer_types.add(Tracer)
# device_put leaves traced values where they are; to_numpy refuses them.
_backend.traced_types.append(Tracer)


def _idx_str(idx: Any) -> str:
    try:
        if isinstance(idx, tuple):
            return ", ".join(_idx_str(i) for i in idx)
        if isinstance(idx, slice):
            parts = ["" if v is None else str(v) for v in (idx.start, idx.stop, idx.step)]
            return ":".join(parts[:2] if idx.step is None else parts)
        if isinstance(idx, int):
            return str(idx)
    except Exception:
        pass
    return "idx"


def concrete_or_error(x: Any, what: str = "a Python value",
                      error: type[ConcretizationError] = ConcretizationError) -> Any:
    """The concrete value of ``x``; ``error`` (a ConcretizationError) naming the line and the
    fix if none.

    Example:
        >>> concrete_or_error(3.0)
        3.0
    """
    if not isinstance(x, Tracer):
        return x
    val = x.to_concrete_value()
    if val is not None:
        return val
    origin = x._origin()
    raise error(
        f"{what} needs a concrete value, but got a traced array ({x.aval.str_short()}) "
        f"{origin}under {getattr(x._trace, 'user_name', type(x._trace).__name__)}"
        f"{user_source_info().at()}. "
        "Its value is not known while the function is being traced (jit, make_jaxpr, vmap). "
        "Fixes: mark the argument static (jit's static_argnums/static_argnames), or use "
        "structured control flow: funcgrad.numpy.where / funcgrad.cond for `if`, "
        "funcgrad.while_loop / funcgrad.fori_loop / funcgrad.scan for loops."
    )


def _dropped_derivative_error(t: Tracer, what: str) -> ConcretizationError:
    return ConcretizationError(
        f"{what} of a value being differentiated ({t.aval.str_short()}, under "
        f"{t._trace.user_name}){user_source_info().at()} would drop its derivative: a Python "
        "number (also what math.* functions and NumPy scalar types such as numpy.float64(x) "
        "make) is a constant to funcgrad. Keep the value an array and use funcgrad.numpy "
        "(`fnp.sin(x)` for `math.sin(x)`, `x.astype(fnp.float32)` for a cast); if a constant "
        "is really meant, say so with `funcgrad.stop_gradient(x)` (or `x.item()`)."
    )


def is_tracer(x: Any) -> bool:
    return isinstance(x, Tracer)


# ---------------------------------------------------------------------------------------------
# The axis environment: named axes that collectives (psum, all_gather, ...) may reduce over.
# ``vmap(..., axis_name=)`` binds a name to its batch size while it traces; a multi-process
# ``funcgrad.distributed.spmd`` binds one to an MPI communicator. A context variable, so
# threads and nested transformations each see their own.


class AxisFrame:
    """A bound axis name: its size and, for a process axis, the communicator carrying it."""

    __slots__ = ("name", "size", "comm")

    def __init__(self, name: Any, size: int, comm: Any = None) -> None:
        self.name = name
        self.size = size
        self.comm = comm  # None for a vmap axis; an MPI communicator for a process axis

    def __repr__(self) -> str:
        kind = "vmap" if self.comm is None else "processes"
        return f"AxisFrame({self.name!r}, size={self.size}, {kind})"


_axis_env: ContextVar[tuple[AxisFrame, ...]] = ContextVar("funcgrad_axis_env", default=())


@contextlib.contextmanager
def extend_axis_env(name: Any, size: int, comm: Any = None) -> Iterator[None]:
    """Bind axis ``name`` (of ``size`` members) inside the ``with`` block.

    Example:
        >>> with extend_axis_env("i", 4):
        ...     lookup_axis("i")
        AxisFrame('i', size=4, vmap)
    """
    token = _axis_env.set(_axis_env.get() + (AxisFrame(name, size, comm),))
    try:
        yield
    finally:
        _axis_env.reset(token)


def bind_axis_for_context(name: Any, size: int, comm: Any = None) -> Any:
    """Bind axis ``name`` in the current context until :func:`unbind_axis` (for set-up calls
    such as ``funcgrad_nn.distributed.init()`` that have no ``with`` block); returns a token.

    Example:
        >>> token = bind_axis_for_context("k", 2)
        >>> lookup_axis("k").size
        2
        >>> unbind_axis(token); lookup_axis("k") is None
        True
    """
    return _axis_env.set(_axis_env.get() + (AxisFrame(name, size, comm),))


def unbind_axis(token: Any) -> None:
    """Undo :func:`bind_axis_for_context`."""
    _axis_env.reset(token)


def lookup_axis(name: Any) -> AxisFrame | None:
    """The innermost frame binding ``name``, or None when no transformation binds it."""
    for frame in reversed(_axis_env.get()):
        if frame.name == name:
            return frame
    return None


def axis_env_key() -> tuple:
    """The bound names and sizes, for caches of programs traced under them (jit)."""
    return tuple((f.name, f.size, f.comm is not None) for f in _axis_env.get())


# The alternative branches being traced, outermost first: (branch point, index) pairs, one
# per enclosing cond/switch. Trace-time bookkeeping that depends on which branch runs reads
# it (the key-reuse checker: one key consumed in two branches of a cond is consumed once).
_branch_path: ContextVar[tuple[tuple[object, int], ...]] = ContextVar(
    "funcgrad_branch_path", default=())


def branch_path() -> tuple[tuple[object, int], ...]:
    """The ``(branch point, index)`` pairs of the cond/switch branches being traced."""
    return _branch_path.get()


@contextlib.contextmanager
def tracing_branch(point: object, index: int) -> Iterator[None]:
    """Trace inside branch ``index`` of the conditional ``point`` (an object unique to
    that cond/switch call): :func:`branch_path` says so meanwhile."""
    token = _branch_path.set((*_branch_path.get(), (point, index)))
    try:
        yield
    finally:
        _branch_path.reset(token)


def exclusive_branches(a: tuple, b: tuple) -> bool:
    """Whether branch paths ``a`` and ``b`` lie in different branches of one conditional
    (so at most one of them runs)."""
    return any(pa is pb and ia != ib for pa, ia in a for pb, ib in b)
