"""Grad modes: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``.

In a functional library there is no graph to stop recording, so the modes mean what they mean
for the *result*: a value computed while gradients are disabled is a constant to every enclosing
differentiation (``grad``, ``jvp``, ``vjp``, at any nesting), exactly as if each operation's
operands went through :func:`funcgrad.stop_gradient`. ``grad`` of a function that evaluates part
of itself under ``no_grad`` therefore gives PyTorch's gradient.

Mechanism: entering a disabled mode under a transformation makes a :class:`NoGradTrace` the
current trace. It cuts the derivative of every traced operand (``stop_gradient``) and hands the
operation to the trace that was current before, so batching and staging (``vmap``, ``jit``) see
the operation as usual. At the top level (no transformation running) nothing needs cutting and
no trace is installed. A transformation started *inside* a disabled block (``funcgrad.grad``
within ``no_grad``) differentiates its own function normally, as ``torch.func.grad`` does.

The switches live in context variables (one per thread / asyncio task), never in globals.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Generator, Sequence
from contextvars import ContextVar
from typing import Any

from funcgrad.core import Trace, Tracer, _trace_var, eval_trace
from funcgrad.ops.elementwise import stop_gradient

__all__ = [
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "NoGradTrace",
]

_grad_enabled: ContextVar[bool] = ContextVar("funcgrad_nn_grad_enabled", default=True)
_inference: ContextVar[bool] = ContextVar("funcgrad_nn_inference_mode", default=False)


class NoGradTrace(Trace):
    """Cuts derivatives of traced operands, then forwards to the trace it was made under."""

    __slots__ = ()
    user_name = "no_grad"

    def process_primitive(self, prim: Any, args: Sequence[Any], params: dict) -> list:
        parent = self.parent
        token = _trace_var.set(parent)  # type: ignore[arg-type]
        try:
            cut = [stop_gradient(a) if isinstance(a, Tracer) else a for a in args]
            return parent.process_primitive(prim, cut, params)  # type: ignore[union-attr]
        finally:
            _trace_var.reset(token)


def is_grad_enabled() -> bool:
    """Whether gradients are enabled in the current context (PyTorch's name).

    Example:
        >>> import funcgrad_nn as nn
        >>> with nn.autograd.no_grad():
        ...     nn.autograd.is_grad_enabled()
        False
        >>> nn.autograd.is_grad_enabled()
        True
    """
    return _grad_enabled.get()


def is_inference_mode_enabled() -> bool:
    """Whether an ``inference_mode()`` block is active.

    Example:
        >>> import funcgrad_nn as nn
        >>> nn.autograd.is_inference_mode_enabled()
        False
    """
    return _inference.get()


def _disable() -> list[Any]:
    """Switch gradients off; returns the tokens that undo it."""
    tokens: list[Any] = [(_grad_enabled, _grad_enabled.set(False))]
    cur = _trace_var.get()
    if cur is not eval_trace and not isinstance(cur, NoGradTrace):
        tokens.append((_trace_var, _trace_var.set(NoGradTrace(cur))))
    return tokens


def _enable() -> list[Any]:
    tokens: list[Any] = [(_grad_enabled, _grad_enabled.set(True))]
    cur = _trace_var.get()
    # Inside inference_mode, PyTorch's enable_grad reports grad mode on but what is computed
    # stays out of autograd (inference tensors): the cut stays.
    if isinstance(cur, NoGradTrace) and not _inference.get():
        tokens.append((_trace_var, _trace_var.set(cur.parent)))  # type: ignore[arg-type]
    return tokens


def _undo(tokens: list[Any]) -> None:
    for var, token in reversed(tokens):
        var.reset(token)


class _GradMode:
    """Base: a context manager that is also a decorator (``@no_grad()`` or ``@no_grad``)."""

    def __new__(cls, orig_func: Callable[..., Any] | None = None, *args: Any, **kw: Any) -> Any:
        if callable(orig_func) and cls is not set_grad_enabled:
            # Used as a bare decorator: ``@no_grad``.
            return cls()(orig_func)
        return super().__new__(cls)

    def __init__(self) -> None:
        self._stack: list[list[Any]] = []

    def _switch(self) -> list[Any]:
        raise NotImplementedError  # each mode defines it

    def _clone(self) -> _GradMode:
        return type(self)()

    def clone(self) -> _GradMode:
        """A fresh copy of this mode, not yet entered (PyTorch's ``clone``)."""
        return self._clone()

    def __enter__(self) -> None:
        self._stack.append(self._switch())

    def __exit__(self, *exc: Any) -> None:
        _undo(self._stack.pop())

    def __call__(self, func: Callable[..., Any]) -> Callable[..., Any]:
        if not callable(func):
            raise TypeError(f"{type(self).__name__}: can only decorate a function, got "
                            f"{type(func).__name__}")
        if inspect.isgeneratorfunction(func):
            return _wrap_generator(self._clone, func)

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self._clone():
                return func(*args, **kwargs)

        return wrapper


def _wrap_generator(mode: Callable[[], Any], func: Callable[..., Generator]
                    ) -> Callable[..., Generator]:
    """A decorated generator function runs each step of its body (up to the next ``yield``)
    in the mode, and the caller's code between the steps outside it, as PyTorch's."""

    @functools.wraps(func)
    def generator_in_mode(*args: Any, **kwargs: Any) -> Generator:
        gen = func(*args, **kwargs)
        try:
            with mode():
                response = gen.send(None)
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    with mode():
                        gen.close()
                    raise
                except BaseException as exc:
                    with mode():
                        response = gen.throw(exc)
                else:
                    with mode():
                        response = gen.send(request)
        except StopIteration as stop:
            return stop.value

    return generator_in_mode


class no_grad(_GradMode):  # noqa: N801  (PyTorch's name)
    """Disable gradients: values computed inside are constants to enclosing derivatives.

    Works as a context manager and as a decorator (``@no_grad()`` or ``@no_grad``).

    Example:
        >>> import funcgrad, funcgrad.numpy as fnp
        >>> from funcgrad_nn.autograd import no_grad
        >>> def f(x):
        ...     with no_grad():
        ...         scale = x * x          # a constant for grad
        ...     return scale * x
        >>> float(funcgrad.grad(f)(3.0))   # d/dx (9 * x) = 9
        9.0
    """

    def _switch(self) -> list[Any]:
        return _disable()


class enable_grad(_GradMode):  # noqa: N801
    """Re-enable gradients inside a ``no_grad`` block (context manager or decorator).

    Example:
        >>> import funcgrad
        >>> from funcgrad_nn.autograd import no_grad, enable_grad
        >>> def f(x):
        ...     with no_grad():
        ...         with enable_grad():
        ...             y = x * x
        ...     return y
        >>> float(funcgrad.grad(f)(3.0))
        6.0
    """

    def _switch(self) -> list[Any]:
        return _enable()


class set_grad_enabled(_GradMode):  # noqa: N801
    """Set gradients on or off: as a function call (takes effect at once), a context manager
    (restored on exit) or a decorator, as in PyTorch.

    Example:
        >>> import funcgrad
        >>> from funcgrad_nn.autograd import set_grad_enabled
        >>> def f(x, train):
        ...     with set_grad_enabled(train):
        ...         return x * x
        >>> float(funcgrad.grad(f)(3.0, True)), float(funcgrad.grad(f)(3.0, False))
        (6.0, 0.0)
    """

    def __init__(self, mode: bool) -> None:
        if not isinstance(mode, bool):
            raise TypeError(
                f"set_grad_enabled(mode): mode must be a bool (True or False), got "
                f"{type(mode).__name__} {mode!r}")
        super().__init__()
        self.mode = mode
        # PyTorch semantics: the call itself switches the mode; __exit__ restores it.
        self._stack.append(_enable() if mode else _disable())

    def _clone(self) -> _GradMode:
        clone = object.__new__(set_grad_enabled)
        _GradMode.__init__(clone)
        clone.mode = self.mode
        return clone

    def _switch(self) -> list[Any]:
        return _enable() if self.mode else _disable()

    def __enter__(self) -> None:
        if not self._stack:  # a decorator's per-call copy (the call itself switched before)
            self._stack.append(self._switch())

    def __call__(self, func: Callable[..., Any]) -> Callable[..., Any]:
        # Used as a decorator: undo the switch __init__ made; each call switches anew.
        if self._stack:
            _undo(self._stack.pop())
        return super().__call__(func)

    def __repr__(self) -> str:
        return f"set_grad_enabled(mode={self.mode})"


class inference_mode(_GradMode):  # noqa: N801
    """``no_grad`` that also reports ``is_inference_mode_enabled()`` (``mode=False``: grad
    mode on and inference mode off, as PyTorch's ``InferenceMode(false)``).

    Example:
        >>> import funcgrad_nn as nn
        >>> with nn.autograd.inference_mode():
        ...     nn.autograd.is_grad_enabled(), nn.autograd.is_inference_mode_enabled()
        (False, True)
    """

    def __init__(self, mode: bool = True) -> None:
        if not isinstance(mode, bool):
            raise TypeError(f"inference_mode(mode): mode must be a bool, got "
                            f"{type(mode).__name__} {mode!r}")
        super().__init__()
        self.mode = mode

    def _clone(self) -> _GradMode:
        return inference_mode(self.mode)

    def _switch(self) -> list[Any]:
        if not self.mode:
            # PyTorch's InferenceMode(false) turns grad mode on as it turns inference off
            # (even inside no_grad): what the block computes is differentiated again
            return [(_inference, _inference.set(False))] + _enable()
        return [(_inference, _inference.set(True))] + _disable()
