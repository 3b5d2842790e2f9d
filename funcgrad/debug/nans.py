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

__all__ = ["NaNError", "debug_nans", "set_debug_nans", "nans_enabled"]


class NaNError(FloatingPointError, RuntimeError):
    """An operation produced NaN (or Inf) while :func:`debug_nans` was checking."""


def _bad(x: Any, infs: bool) -> str | None:
    if isinstance(x, Tracer):
        x = x.to_concrete_value()
        if x is None:
            return None
    dt = getattr(x, "dtype", None)
    if dt is None or dt.kind not in "fc":
        return None
    arr = to_numpy(x)
    if numpy.isnan(arr).any():
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


class _NanCheck:
    """The observer: checks outputs, keeps what it needs to name a backward failure."""

    def __init__(self, infs: bool) -> None:
        self.infs = infs
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
        outs = run()
        for i, o in enumerate(outs):
            kind = _bad(o, self.infs)
            if kind is not None:
                raise NaNError(self._message(kind, prim, args, params, eqn, i, o))
        return outs

    def _message(self, kind: str, prim: Primitive, args: Sequence[Any], params: dict,
                 eqn: Eqn | None, i: int, out: Any) -> str:
        what = f"{prim.name} on ({_shapes(args)})"
        out_s = f"output {i}" if prim.multiple_results else "its output"
        if eqn is not None:
            where = f" (equation of a jitted function traced at {eqn.source_info})" \
                if eqn.source_info is not None and eqn.source_info.filename else \
                " (equation of a jitted function)"
            return (f"debug_nans: {what} produced {kind} in {out_s}{where}. The jitted "
                    "function was re-run equation by equation to locate it; if this is a "
                    "derivative equation, run the function without jit under debug_nans to "
                    "have the forward operation it belongs to named.")
        if _in_backward_pass() and self.transposing is not None:
            t = self.transposing
            origin = self.origin.get(t)
            if origin is not None:
                fprim, src = origin
                step = t.prim.name if t.prim is prim else f"{t.prim.name} ({prim.name})"
                return (f"debug_nans: {kind} in the backward pass: the derivative of "
                        f"{fprim.name} (the forward operation at {src}) produced {kind} "
                        f"in step {step} of its derivative rule, on ({_shapes(args)}).")
            src_t = t.source_info
            at = f" traced at {src_t}" if src_t is not None and src_t.filename else ""
            return (f"debug_nans: {kind} in the backward pass: transposing {t.prim.name}{at} "
                    f"produced {kind} ({prim.name} on ({_shapes(args)})).")
        return f"debug_nans: {what} produced {kind} in {out_s}{user_source_info().at()}."


_enabled: ContextVar[bool] = ContextVar("funcgrad_debug_nans", default=False)


def nans_enabled() -> bool:
    """Whether NaN checking is on in this context."""
    return _enabled.get()


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
        if not isinstance(enabled, bool):
            raise TypeError(f"debug_nans(enabled): expected a bool, got "
                            f"{type(enabled).__name__} {enabled!r}")
        self.enabled = enabled
        self.infs = infs
        self._stack: list[list[Any]] = []

    def __enter__(self) -> debug_nans:
        self._stack.append(_switch(self.enabled, self.infs))
        return self

    def __exit__(self, *exc: Any) -> None:
        _undo(self._stack.pop())

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        import functools

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with debug_nans(self.enabled, infs=self.infs):
                return fn(*args, **kwargs)

        return wrapper


def _switch(enabled: bool, infs: bool) -> list[Any]:
    tokens: list[Any] = [(_enabled, _enabled.set(enabled))]
    cur = _trace_var.get()
    if enabled:
        check = _NanCheck(infs)
        ctx = instrumented(check)
        ctx.__enter__()
        tokens.append((ctx, None))
        tokens.append((linearize_observer, linearize_observer.set(check.on_linearize)))
        tokens.append((transpose_observer, transpose_observer.set(check.on_transpose)))
    elif isinstance(cur, InstrumentTrace) and isinstance(cur.observer, _NanCheck):
        tokens.append((_trace_var, _trace_var.set(cur.parent)))  # type: ignore[arg-type]
        tokens.append((linearize_observer, linearize_observer.set(None)))
        tokens.append((transpose_observer, transpose_observer.set(None)))
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
    if not isinstance(enabled, bool):
        raise TypeError(f"set_debug_nans(enabled): expected a bool, got "
                        f"{type(enabled).__name__} {enabled!r}")
    if enabled == _enabled.get():
        return
    _switch(enabled, infs)


_config.register_flag("jax_debug_nans", nans_enabled, lambda value: set_debug_nans(bool(value)))
