"""NaN (and optionally Inf) hunting: ``debug_nans()``.

Inside ``with debug_nans():`` every primitive's concrete outputs are checked, eagerly and
inside ``jit`` (whose jaxpr is then run equation by equation, unoptimised, see
:mod:`funcgrad.debug.instrument`). The first operation that produces a NaN raises
:class:`NaNError` naming it:

- in the forward pass: the primitive, its inputs' shapes and the user's source line;
- in the backward pass: the derivative step that produced it *and the forward operation it
  belongs to*, with that operation's line (what PyTorch's anomaly mode reports). The forward
  operation is known because, while checking, each linearized primitive records which tangent
  equations its JVP rule staged (:data:`funcgrad.interpreters.linearize.linearize_observer`),
  and the backward pass reports the equation it transposes
  (:data:`funcgrad.interpreters.transpose.transpose_observer`).

When no check is active none of this runs: the default path is untouched.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from typing import Any

import numpy

from funcgrad import config as _config
from funcgrad.avals import get_aval
from funcgrad.backend import to_numpy
from funcgrad.core import Primitive, SourceInfo, Tracer, _trace_var, user_source_info
from funcgrad.debug.instrument import InstrumentTrace, instrumented
from funcgrad.interpreters import transpose as _transpose
from funcgrad.interpreters.linearize import linearize_observer
from funcgrad.interpreters.transpose import transpose_observer
from funcgrad.ir import Eqn

__all__ = ["NaNError", "debug_nans", "debug_infs", "set_debug_nans", "set_debug_infs",
           "nans_enabled", "infs_enabled"]


class NaNError(FloatingPointError, RuntimeError):
    """An operation produced NaN (or Inf) while :func:`debug_nans` was checking.

    ``in_jitted_equation`` is True when the operation was an equation of a jitted function
    (whose derivative equations no longer know their forward operation): ``jit`` then calls
    the function again without compiling it, as JAX does, to name the operation.
    """

    in_jitted_equation: bool = False
    #: raised by a check of the backward pass only (PyTorch's anomaly mode): a NaN the
    #: forward computation makes and then drops (``where(x > 0, log(x), 0)``) is allowed
    backward_only: bool = False


def _bad(x: Any, nans: bool, infs: bool) -> str | None:
    if isinstance(x, Tracer):
        x = x.to_concrete_value()
        if x is None:
            return None
    if type(x) in (float, complex):  # a weak value computed on Python scalars
        x = numpy.asarray(x)
    dt = getattr(x, "dtype", None)
    if dt is None or dt.kind not in "fc":
        return None
    arr = to_numpy(x)
    if nans and numpy.isnan(arr).any():
        return "NaN"
    if infs and numpy.isinf(arr).any():
        return "Inf"
    return None


def _shapes(args: Sequence[Any]) -> str:
    out = []
    for a in args:
        try:
            out.append(get_aval(a).str_short())
        except TypeError:
            out.append(type(a).__name__)
    return ", ".join(out)


def _in_backward_pass() -> bool:
    code = _transpose.backward_pass.__code__
    f = sys._getframe(2)
    while f is not None:
        if f.f_code is code:
            return True
        f = f.f_back
    return False


def _user_rule(t: Eqn) -> str:
    """For the tangent equation of a user's backward rule (custom_vjp's ``custom_lin``): the
    rule's name, the part of the message that says whose code made the NaN (a
    ``funcgrad_nn.autograd.Function``'s is ``<Class>Backward``, PyTorch's node name)."""
    bwd = t.params.get("bwd")
    name = getattr(bwd, "__name__", None)
    return f" (backward rule {name})" if isinstance(name, str) and name else ""


class _NanCheck:
    """The observer: checks outputs, keeps what it needs to name a backward failure."""

    def __init__(self, nans: bool, infs: bool, backward_only: bool = False) -> None:
        self.nans = nans
        self.infs = infs
        # PyTorch's anomaly mode checks what the backward pass computes, not the forward
        # pass; inside a jitted function forward and derivative equations look alike, so
        # they are all checked and jit's de-optimized re-run (eager) decides
        self.backward_only = backward_only
        #: tangent equation -> (forward primitive, user line), filled while linearizing
        self.origin: dict[Eqn, tuple[Primitive, SourceInfo]] = {}
        self.transposing: Eqn | None = None

    def on_linearize(self, prim: Primitive, new_eqns: list) -> None:
        if new_eqns:
            src = user_source_info()
            for e in new_eqns:
                self.origin[e] = (prim, src)

    def on_transpose(self, eqn: Eqn) -> None:
        self.transposing = eqn

    def around(self, prim: Primitive, args: Sequence[Any], params: dict, eqn: Eqn | None,
               run: Callable[[], list]) -> list:
        if self.backward_only and eqn is None and not _in_backward_pass():
            return run()
        outs = run()
        for i, o in enumerate(outs):
            kind = _bad(o, self.nans, self.infs)
            if kind is not None:
                # JAX's words last ("invalid value (nan) encountered in log"), so that what
                # matches JAX's error matches this one.
                err = NaNError(self._message(kind, prim, args, params, eqn, i, o)
                               + f" [invalid value ({kind.lower()}) encountered in "
                               f"{prim.name}]")
                err.in_jitted_equation = eqn is not None
                err.backward_only = self.backward_only
                raise err
        return outs

    def _message(self, kind: str, prim: Primitive, args: Sequence[Any], params: dict,
                 eqn: Eqn | None, i: int, out: Any) -> str:
        head = "detect_anomaly" if self.backward_only else \
            "debug_nans" if self.nans else "debug_infs"
        what = f"{prim.name} on ({_shapes(args)})"
        out_s = f"output {i}" if prim.multiple_results else "its output"
        if eqn is not None:
            where = f" (equation of a jitted function traced at {eqn.source_info})" \
                if eqn.source_info is not None and eqn.source_info.filename else \
                " (equation of a jitted function)"
            return (f"{head}: {what} produced {kind} in {out_s}{where}. The jitted "
                    "function was re-run equation by equation to locate it; if this is a "
                    "derivative equation, run the function without jit under debug_nans to "
                    "have the forward operation it belongs to named.")
        if _in_backward_pass() and self.transposing is not None:
            t = self.transposing
            origin = self.origin.get(t)
            if origin is not None:
                fprim, src = origin
                step = t.prim.name if t.prim is prim else f"{t.prim.name} ({prim.name})"
                return (f"{head}: {kind} in the backward pass: the derivative of "
                        f"{fprim.name}{_user_rule(t)} (the forward operation at {src}) "
                        f"produced {kind} in step {step} of its derivative rule, on "
                        f"({_shapes(args)}).")
            src_t = t.source_info
            at = f" traced at {src_t}" if src_t is not None and src_t.filename else ""
            return (f"{head}: {kind} in the backward pass: transposing {t.prim.name}{at} "
                    f"produced {kind} ({prim.name} on ({_shapes(args)})).")
        return f"{head}: {what} produced {kind} in {out_s}{user_source_info().at()}."


#: (check NaNs, check Infs) in this context
_enabled: ContextVar[tuple[bool, bool]] = ContextVar("funcgrad_debug_nans",
                                                     default=(False, False))


def nans_enabled() -> bool:
    """Whether NaN checking is on in this context."""
    return _enabled.get()[0]


def infs_enabled() -> bool:
    """Whether Inf checking is on in this context."""
    return _enabled.get()[1]


def _check_bool(what: str, enabled: Any) -> None:
    if not isinstance(enabled, bool | numpy.bool_):
        raise TypeError(f"{what}(enabled): expected a bool, got "
                        f"{type(enabled).__name__} {enabled!r}")


class debug_nans:  # noqa: N801  (context manager, JAX's flag name)
    """Check every operation for NaN (``infs=True``: Inf too) inside the block.

    Usable as a context manager or a decorator. Raises :class:`NaNError` (a
    ``FloatingPointError`` and a ``RuntimeError``) at the first bad operation.

    Example:
        >>> import funcgrad, funcgrad.numpy as fnp
        >>> with funcgrad.debug_nans():                          # doctest: +ELLIPSIS
        ...     fnp.log(fnp.asarray(-1.0))
        Traceback (most recent call last):
        ...
        funcgrad.debug.nans.NaNError: debug_nans: log on (f64[]) produced NaN ...
    """

    def __init__(self, enabled: bool = True, *, infs: bool = False) -> None:
        _check_bool("debug_nans", enabled)
        self.enabled = bool(enabled)
        self.infs = infs
        self._stack: list[list[Any]] = []

    def _flags(self) -> tuple[bool, bool]:
        nans, infs = _enabled.get()
        return self.enabled, (infs or self.infs) if self.enabled else infs

    def __enter__(self) -> debug_nans:
        self._stack.append(_switch(*self._flags()))
        return self

    def __exit__(self, *exc: Any) -> None:
        _undo(self._stack.pop())

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        import functools

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with type(self)(self.enabled, **self._options()):
                return fn(*args, **kwargs)

        return wrapper

    def _options(self) -> dict[str, Any]:
        return {"infs": self.infs}


class debug_infs(debug_nans):  # noqa: N801  (context manager, JAX's flag name)
    """Check every operation for Inf inside the block (as JAX's ``jax_debug_infs``): the
    first operation that produces an infinity raises :class:`NaNError` (a
    ``FloatingPointError``). NaNs pass unless :class:`debug_nans` is on too.

    Example:
        >>> import funcgrad, funcgrad.numpy as fnp
        >>> with funcgrad.debug.debug_infs():                    # doctest: +ELLIPSIS
        ...     fnp.log(fnp.asarray(0.0))
        Traceback (most recent call last):
        ...
        funcgrad.debug.nans.NaNError: debug_infs: log on (f64[]) produced Inf ...
    """

    def __init__(self, enabled: bool = True) -> None:
        _check_bool("debug_infs", enabled)
        super().__init__(bool(enabled))

    def _flags(self) -> tuple[bool, bool]:
        return _enabled.get()[0], self.enabled

    def _options(self) -> dict[str, Any]:
        return {}


def _switch(nans: bool, infs: bool, backward_only: bool = False) -> list[Any]:
    """Make (nans, infs) the checks of this context: the active check (if any) is replaced by
    one doing these (or none); ``backward_only``: of the backward pass only (anomaly mode)."""
    tokens: list[Any] = [(_enabled, _enabled.set((nans, infs)))]
    cur = _trace_var.get()
    if isinstance(cur, InstrumentTrace) and isinstance(cur.observer, _NanCheck):
        tokens.append((_trace_var, _trace_var.set(cur.parent)))  # type: ignore[arg-type]
        tokens.append((linearize_observer, linearize_observer.set(None)))
        tokens.append((transpose_observer, transpose_observer.set(None)))
    if nans or infs:
        check = _NanCheck(nans, infs, backward_only)
        ctx = instrumented(check)
        ctx.__enter__()
        tokens.append((ctx, None))
        tokens.append((linearize_observer, linearize_observer.set(check.on_linearize)))
        tokens.append((transpose_observer, transpose_observer.set(check.on_transpose)))
    return tokens


def _undo(tokens: list[Any]) -> None:
    for var, token in reversed(tokens):
        if isinstance(var, instrumented):
            var.__exit__(None, None, None)
        else:
            var.reset(token)


def set_debug_nans(enabled: bool, *, infs: bool = False) -> None:
    """Switch NaN checking on or off for the rest of this context (the flag form).

    Example:
        >>> set_debug_nans(True); nans_enabled()
        True
        >>> set_debug_nans(False); nans_enabled()
        False
    """
    _check_bool("set_debug_nans", enabled)
    nans_now, infs_now = _enabled.get()
    want = (bool(enabled), (infs_now or infs) if enabled else infs_now)
    if want != (nans_now, infs_now):
        _switch(*want)


def set_debug_infs(enabled: bool) -> None:
    """Switch Inf checking on or off for the rest of this context (JAX's ``jax_debug_infs``
    flag; NaNs are checked only while :func:`set_debug_nans` is on).

    Example:
        >>> set_debug_infs(True); infs_enabled()
        True
        >>> set_debug_infs(False); infs_enabled()
        False
    """
    _check_bool("set_debug_infs", enabled)
    nans_now, infs_now = _enabled.get()
    if bool(enabled) != infs_now:
        _switch(nans_now, bool(enabled))


_config.register_flag("jax_debug_nans", nans_enabled, lambda value: set_debug_nans(bool(value)))
_config.register_flag("jax_debug_infs", infs_enabled, lambda value: set_debug_infs(bool(value)))
