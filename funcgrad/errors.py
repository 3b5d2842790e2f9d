"""The exceptions funcgrad raises, each naming what went wrong and how to fix it."""

from __future__ import annotations

import functools
import os
import re
import sys
from contextvars import ContextVar
from typing import Any

import numpy

__all__ = [
    "FuncgradError",
    "JAXTypeError",
    "JAXIndexError",
    "ConcretizationError",
    "ConcretizationTypeError",
    "TracerBoolConversionError",
    "TracerIntegerConversionError",
    "TracerArrayConversionError",
    "NonConcreteBooleanIndexError",
    "BatchedConcretizationError",
    "batched_error",
    "UnexpectedTracerError",
    "JaxRuntimeError",
    "KeyReuseError",
    "JaxprTypeError",
    "MissingRuleError",
    "ShapeError",
    "AxisError",
    "LinAlgShapeError",
    "DTypeError",
    "DeviceMismatchError",
    "TracerMutationError",
    "ArgumentMismatchError",
    "NonDifferentiableError",
    "SourceInfo",
    "user_source_info",
    "operation_source",
    "replayed_source",
    "staging_source_info",
    "name_user_line",
    "generated_code",
    "is_our_file",
]


# ---------------------------------------------------------------------------------------------
# Source locations: errors and equations point at the user's line, not ours.

_OUR_DIRS = tuple(
    os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d) + os.sep
    for d in ("funcgrad", "funcgrad_nn")
)
_SKIP_FILES = ("contextlib.py", "functools.py", "<frozen")


class SourceInfo:
    """Where in the user's code an operation was written."""

    __slots__ = ("filename", "lineno", "function", "_code", "_lasti")

    def __init__(self, filename: str, lineno: int, function: str, code: Any = None,
                 lasti: int = -1) -> None:
        self.filename = filename
        self.lineno = lineno
        self.function = function
        # the frame's code and instruction, for the column (JAX's "file:line:col"), found
        # only when asked: staging records a SourceInfo per operation
        self._code = code
        self._lasti = lasti

    @property
    def column(self) -> int | None:
        """The 0-based column of the expression the operation was written in (Python's
        instruction positions, as JAX reports them), or None when unknown.

        Example:
            >>> user_source_info().column is None or user_source_info().column >= 0
            True
        """
        if self._code is None or self._lasti < 0:
            return None
        try:
            pos = list(self._code.co_positions())[self._lasti // 2]
        except (AttributeError, IndexError):
            return None
        return pos[2]

    def with_column(self) -> str:
        """``file:line:col (function)``, as JAX prints a source location (``file:line
        (function)`` when the column is unknown)."""
        col = self.column
        if col is None:
            return str(self)
        return f"{self.filename}:{self.lineno}:{col} ({self.function})"

    def __str__(self) -> str:
        return f"{self.filename}:{self.lineno} ({self.function})"

    def at(self) -> str:
        return f" at {self}" if self.filename else ""


_NO_SOURCE = SourceInfo("", 0, "")

#: Python code funcgrad generates (jit's compiled functions), by the filename it is compiled
#: under: ``lookup(lineno) -> SourceInfo | None``, the user's line an equation on that line was
#: traced from (what NaN/overflow warnings raised by that line point at). Entries go when the
#: code is freed.
generated_code: dict[str, Any] = {}


def is_our_file(filename: str) -> bool:
    """Whether ``filename`` is one of funcgrad's (or funcgrad_nn's) source files.

    Example:
        >>> is_our_file(__file__), is_our_file("model.py")
        (True, False)
    """
    return filename.startswith(_OUR_DIRS)


def user_source_info() -> SourceInfo:
    """The innermost stack frame outside funcgrad (the user's line).

    Example:
        >>> user_source_info().function  # called from here, the doctest's own frame
        '<module>'
    """
    return _innermost_user_line(sys._getframe(1))


#: The user's line of the operation whose rule a transformation is running (None: none is),
#: set by nested differentiation (:func:`funcgrad.interpreters.staging.process_nested`). Every
#: operation a rule binds, several levels of nested ``grad`` deep, comes from that line, dozens
#: of funcgrad frames below it: staging reads the line from here instead of walking those
#: frames for each operation (a walk makes Python materialise each fresh frame: a third of the
#: tracing time of ``jit(grad^6(f))``).
operation_source: ContextVar[SourceInfo | None] = ContextVar(
    "funcgrad_operation_source", default=None)


#: The user's line of the equation :func:`funcgrad.ir.eval_jaxpr` is evaluating again (the body
#: of a ``checkpoint`` recomputed under ``grad``, a jaxpr a rule replays): the user's Python is
#: not on the stack then, only the call that started the replay, so the line the equation was
#: first traced from stands in for the stack walk (:func:`user_source_info`). As JAX keeps an
#: equation's source when it evaluates a jaxpr under a transformation.
replayed_source: ContextVar[SourceInfo | None] = ContextVar(
    "funcgrad_replayed_source", default=None)


def staging_source_info() -> SourceInfo:
    """The user's line an operation being staged is attributed to: that of the operation a
    transformation's rule is running for (:data:`operation_source`), else the innermost
    frame outside funcgrad (:func:`user_source_info`).

    Example:
        >>> staging_source_info().function  # no rule running: the doctest's own frame
        '<module>'
    """
    src = operation_source.get()
    return src if src is not None else _innermost_user_line(sys._getframe(1))


def _innermost_user_line(f: Any) -> SourceInfo:
    replayed = replayed_source.get()
    if replayed is not None:
        return replayed
    while f is not None:
        code = f.f_code
        if not _is_ours(code.co_filename):
            return SourceInfo(code.co_filename, f.f_lineno, code.co_name, code, f.f_lasti)
        f = f.f_back
    return _NO_SOURCE


@functools.lru_cache(maxsize=4096)
def _is_ours(filename: str) -> bool:
    # Staging asks this for every frame between an operation and the user's line (dozens
    # under nested grad), for every operation: cached per file.
    return filename.startswith(_OUR_DIRS) or filename.endswith(_SKIP_FILES)


def name_user_line(e: BaseException) -> None:
    """Append ``(at file:line (function))`` of the user's line to the message of ``e``, an
    exception funcgrad raised (its innermost frame is funcgrad's), unless it names it already.

    The line is the innermost frame of the traceback outside funcgrad.
    """
    frames = []
    tb = e.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    if not frames or not frames[-1].f_code.co_filename.startswith(_OUR_DIRS):
        return  # raised by the user's own code: the traceback says where
    if not e.args or not isinstance(e.args[0], str):
        return
    for f in reversed(frames):
        fn = f.f_code.co_filename
        if not fn.startswith(_OUR_DIRS) and not fn.endswith(_SKIP_FILES):
            src = SourceInfo(fn, f.f_lineno, f.f_code.co_name)
            if str(src) not in e.args[0] and not _LOCATED.search(e.args[0]):
                e.args = (f"{e.args[0]} (at {src})",) + tuple(e.args[1:])
            return


# "(at file.py:12 (fn))", as the errors below and the staging trace append it
_LOCATED = re.compile(r" \(at [^()]+:\d+ \([^()]*\)\)")


class _NamesUserLine(Exception):
    """An error whose message ends with the user's line that caused it (``(at file:line
    (function))``): shape and dtype errors are raised deep in funcgrad, often while a function
    is traced, where the traceback alone does not say which of the user's operations failed."""

    def __init__(self, *args: object) -> None:
        if args and isinstance(args[0], str) and not _LOCATED.search(args[0]):
            src = user_source_info()
            if src.filename:
                args = (f"{args[0]} (at {src})",) + args[1:]
        super().__init__(*args)


class FuncgradError(Exception):
    """Base class of every error funcgrad raises on purpose."""


class JAXTypeError(FuncgradError, TypeError):
    """The base of the ``TypeError`` s specific to tracing (JAX's ``jax.errors.JAXTypeError``):
    the concretization errors, :class:`UnexpectedTracerError` and :class:`KeyReuseError`.

    Example:
        >>> import funcgrad
        >>> try:
        ...     funcgrad.jit(lambda x: int(x))(1.0)
        ... except funcgrad.errors.JAXTypeError as e:
        ...     print(type(e).__name__)
        ConcretizationError
    """


class JAXIndexError(FuncgradError, IndexError):
    """The base of the ``IndexError`` s specific to tracing (JAX's
    ``jax.errors.JAXIndexError``): :class:`NonConcreteBooleanIndexError`.

    Example:
        >>> import funcgrad, numpy as np
        >>> try:
        ...     funcgrad.jit(lambda x: x[x > 0])(np.arange(3.0))
        ... except funcgrad.errors.JAXIndexError as e:
        ...     print(type(e).__name__)
        NonConcreteBooleanIndexError
    """


class ConcretizationError(JAXTypeError):
    """A traced value was used where Python needs a concrete one (``if``, ``float``, shapes).

    Example:
        >>> import funcgrad
        >>> def f(x):
        ...     return x if x > 0 else -x
        >>> funcgrad.make_jaxpr(f)(1.0)  # doctest: +SKIP
        Traceback (most recent call last):
        ConcretizationError: ...
    """


#: JAX's name (``jax.errors.ConcretizationTypeError``)
ConcretizationTypeError = ConcretizationError


class TracerBoolConversionError(ConcretizationError):
    """``bool()`` of a traced value: a Python ``if``/``while``/``and`` on it under ``jit``
    (as ``jax.errors.TracerBoolConversionError``)."""


class TracerIntegerConversionError(ConcretizationError):
    """A traced value used as a Python integer index (``__index__``: ``range(x)``, a list
    index) (as ``jax.errors.TracerIntegerConversionError``)."""


class TracerArrayConversionError(ConcretizationError):
    """A traced value converted to a NumPy array (``numpy.asarray(x)``, a NumPy function
    funcgrad does not know) (as ``jax.errors.TracerArrayConversionError``)."""


class NonConcreteBooleanIndexError(ConcretizationError, JAXIndexError):
    """Indexing with a traced boolean mask, whose result size depends on the values (as
    ``jax.errors.NonConcreteBooleanIndexError``, an ``IndexError`` too)."""


class BatchedConcretizationError(ConcretizationError, RuntimeError):
    """A value batched by ``vmap`` used where Python needs one value (``if``, ``.item()``,
    ``int()``): a :class:`ConcretizationError` (so a ``TypeError``, as JAX's) and a
    ``RuntimeError``, as ``torch.func.vmap`` raises for data-dependent control flow. The
    error raised is the matching subclass of :func:`batched_error` (a
    ``TracerBoolConversionError`` for ``if``).

    Example:
        >>> import funcgrad, numpy as np
        >>> try:
        ...     funcgrad.vmap(lambda x: x.item())(np.ones(2))
        ... except RuntimeError as e:
        ...     print(isinstance(e, TypeError), isinstance(e, BatchedConcretizationError))
        True True
    """


@functools.cache
def batched_error(error: type[ConcretizationError]) -> type[ConcretizationError]:
    """The class raised for ``error`` (a :class:`ConcretizationError` subclass) when the value
    is batched by ``vmap``: a subclass of both ``error`` and
    :class:`BatchedConcretizationError` (so also a ``RuntimeError``).

    Example:
        >>> issubclass(batched_error(TracerBoolConversionError), RuntimeError)
        True
    """
    if issubclass(error, BatchedConcretizationError):
        return error
    if error is ConcretizationError:
        return BatchedConcretizationError
    return type(error.__name__, (error, BatchedConcretizationError),
                {"__module__": __name__, "__qualname__": error.__qualname__,
                 "__doc__": error.__doc__})


class JaxRuntimeError(FuncgradError, RuntimeError):
    """A run-time check failed: ``checkify``'s ``Error.throw()``, or a ``checkify.check``
    outside ``checkify`` (JAX's ``JaxRuntimeError``)."""


class KeyReuseError(JAXTypeError, ValueError):
    """A PRNG key was consumed twice inside ``funcgrad.random.check_key_reuse()``."""


class JaxprTypeError(TypeError):
    """A jaxpr is ill-typed (an equation's avals disagree with its primitive's rule)."""


class UnexpectedTracerError(JAXTypeError):
    """A tracer escaped the transformation that created it (stored in a global, say)."""


class MissingRuleError(FuncgradError, NotImplementedError):
    """A primitive lacks the rule a transformation needs (jvp, transpose, batching)."""


class ShapeError(_NamesUserLine, FuncgradError, ValueError):
    """Operand shapes are incompatible for a primitive."""


class AxisError(ShapeError, numpy.exceptions.AxisError):
    """An axis out of range for an array's rank: a :class:`ShapeError` that is also NumPy's
    ``AxisError`` (so a ``ValueError`` and an ``IndexError``), as NumPy code expects.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> try:
        ...     fnp.sum(np.ones(3), axis=1)
        ... except np.exceptions.AxisError as e:
        ...     print(isinstance(e, IndexError), str(e).split(" (at")[0])
        True sum: axis 1 is out of bounds for an array of rank 1
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        # NumPy's AxisError keeps its message aside and skips BaseException's __init__:
        # args (which name_user_line extends) carry the message with the user's line.
        self.args = (self._msg,)

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class LinAlgShapeError(ShapeError, numpy.linalg.LinAlgError):
    """A ``funcgrad.numpy.linalg`` operand that is not a (stack of) matrices, or not square
    where it must be: a :class:`ShapeError` that is also NumPy's ``LinAlgError``, which NumPy
    raises there.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> try:
        ...     fnp.linalg.inv(np.zeros((2, 3)))
        ... except np.linalg.LinAlgError as e:
        ...     print(str(e).split(" (at")[0])
        inv: last 2 dimensions of the array must be square, got f64[2,3]
    """


class DTypeError(_NamesUserLine, FuncgradError, TypeError):
    """Operand dtypes are unsupported or incompatible for a primitive."""


class DeviceMismatchError(FuncgradError, ValueError):
    """Arrays on different devices (or backends) met in one operation."""


class TracerMutationError(FuncgradError, TypeError):
    """In-place mutation of a traced array, which functional code cannot record."""


class ArgumentMismatchError(FuncgradError, TypeError, ValueError):
    """A value given to a transformation does not fit what it must match: a (co)tangent of
    the wrong structure, shape or dtype for its primal or output, an unhashable static
    argument. Both a ``TypeError`` and a ``ValueError``: JAX raises one or the other
    depending on the function (``jvp``'s dtype check a ``TypeError``, ``vjp``'s a
    ``ValueError``), and code written against either catches it.

    Example:
        >>> import funcgrad, numpy as np
        >>> _, f_vjp = funcgrad.vjp(lambda x: x * 2.0, np.ones(2))
        >>> try:
        ...     f_vjp(np.ones(3))
        ... except ValueError as e:
        ...     print(type(e).__name__)
        ArgumentMismatchError
    """


class NonDifferentiableError(_NamesUserLine, FuncgradError, ValueError):
    """A derivative was asked of an operation, or of one of its modes, where none is defined
    (LAPACK's raw QR reflectors; the arbitrary extra columns of a complete factorisation)."""
