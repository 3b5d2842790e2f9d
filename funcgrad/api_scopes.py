"""Context managers that shape how a program is traced: :func:`ensure_compile_time_eval`
(evaluate constant expressions while tracing) and :func:`named_scope` (name a region of the
program), under JAX's names."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any

from funcgrad.interpreters.compile_time_eval import compile_time_eval
from funcgrad.profiler import record_function

__all__ = ["ensure_compile_time_eval", "named_scope", "named_call", "current_name_stack"]


@contextlib.contextmanager
def ensure_compile_time_eval() -> Iterator[None]:
    """Evaluate operations on constants right away, even while ``jit`` (or ``make_jaxpr``,
    ``scan``, ``cond``...) is tracing (``jax.ensure_compile_time_eval``).

    Inside the block, an operation none of whose operands is traced runs eagerly: its result
    is a concrete array, usable in Python control flow and baked into the traced program as a
    constant. Operations on traced values are staged as usual. Outside any transformation the
    block changes nothing.

    Example:
        >>> import funcgrad, funcgrad.numpy as fnp
        >>> @funcgrad.jit
        ... def f(x):
        ...     with funcgrad.ensure_compile_time_eval():
        ...         z = fnp.sin(fnp.sin(3.0))  # a concrete value while tracing
        ...     return fnp.sin(x) if z > 0 else fnp.cos(x)
        >>> float(f(0.0))
        0.0
    """
    with compile_time_eval():
        yield


#: the names of the enclosing :func:`named_scope` blocks, outermost first
_name_stack: ContextVar[tuple[str, ...]] = ContextVar("funcgrad_name_stack", default=())


def current_name_stack() -> str:
    """The enclosing :func:`named_scope` names joined by ``/`` (``""`` outside any).

    Example:
        >>> with named_scope("encoder"), named_scope("attention"):
        ...     current_name_stack()
        'encoder/attention'
    """
    return "/".join(_name_stack.get())


class named_scope:  # noqa: N801  (JAX's name; a context manager and a decorator)
    """Name a region of the program (``jax.named_scope``): a context manager or a decorator.

    Names nest (``"outer/inner"``, see :func:`current_name_stack`). While a
    :class:`funcgrad.profiler.profile` is recording, the block is a named range in it, so the
    operations run inside show up under that name (as JAX's names do in its profiler). Results
    never depend on it.

    Example:
        >>> import numpy as np, funcgrad, funcgrad.numpy as fnp
        >>> from funcgrad.profiler import profile
        >>> @funcgrad.named_scope("layer")
        ... def layer(w, x):
        ...     with funcgrad.named_scope("activation"):
        ...         return fnp.maximum(w @ x, 0.0)
        >>> with profile() as prof:
        ...     y = layer(np.eye(2), np.ones(2))
        >>> [e.key for e in prof.key_averages()][:2]
        ['layer', 'activation']
    """

    def __init__(self, name: str) -> None:
        if not isinstance(name, str):
            raise TypeError("named_scope name argument must be a string.")
        self.name = name
        self._open: list[tuple[Any, Any]] = []

    def __enter__(self) -> None:
        token = _name_stack.set(_name_stack.get() + (self.name,))
        rec = record_function(self.name)
        rec.__enter__()
        self._open.append((token, rec))

    def __exit__(self, *exc: Any) -> None:
        token, rec = self._open.pop()
        rec.__exit__(*exc)
        _name_stack.reset(token)

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        name = self.name

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with named_scope(name):
                return fn(*args, **kwargs)

        return wrapper


def named_call(fun: Callable[..., Any], *, name: str | None = None) -> Callable[..., Any]:
    """``fun`` with its calls named ``name`` (default: its ``__name__``), as
    ``jax.named_call``: each call runs inside :func:`named_scope`.

    Example:
        >>> import funcgrad, funcgrad.numpy as fnp
        >>> f = funcgrad.named_call(lambda x: fnp.sin(x) * 2.0, name="scaled_sin")
        >>> float(funcgrad.grad(f)(0.0))
        2.0
    """
    if not callable(fun):
        raise TypeError(f"named_call: expected a function, got {type(fun).__name__}")
    if name is None:
        name = getattr(fun, "__name__", None) or type(fun).__name__
    # JAX's takes any name (its name stack keeps str(name))
    return named_scope(str(name))(fun)
