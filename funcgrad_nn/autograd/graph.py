"""``torch.autograd.graph``'s saved-tensor hooks: :class:`saved_tensors_hooks`,
:class:`save_on_cpu`, :func:`disable_saved_tensors_hooks`.

Inside ``with saved_tensors_hooks(pack_hook, unpack_hook):`` every array a custom
:class:`~funcgrad_nn.autograd.Function` saves with ``ctx.save_for_backward`` while it is being
differentiated is replaced by ``pack_hook(array)`` (any object: a copy on the host, a file
name...), and each read of ``ctx.saved_tensors`` in ``backward`` gives
``unpack_hook(packed)``, as PyTorch. The innermost ``with`` block wins; a Function run without
differentiation (no backward to come) packs nothing, as PyTorch.

Unlike PyTorch the hooks do not see the residuals of funcgrad's own operations: those are not
tensors saved one by one on a graph but values inside the linearized program that
``funcgrad.vjp`` keeps (``funcgrad.checkpoint`` is the tool that trades that memory for
recomputation).

>>> import numpy as np, funcgrad
>>> from funcgrad_nn.autograd import Function
>>> class Square(Function):
...     @staticmethod
...     def forward(ctx, x):
...         ctx.save_for_backward(x)
...         return x * x
...     @staticmethod
...     def backward(ctx, g):
...         x, = ctx.saved_tensors
...         return 2 * x * g
>>> log = []
>>> def pack(t):
...     log.append("pack")
...     return ("boxed", t)
>>> def unpack(p):
...     log.append("unpack")
...     return p[1]
>>> with saved_tensors_hooks(pack, unpack):
...     g = funcgrad.grad(lambda x: Square.apply(x).sum())(np.array([1.0, 2.0]))
>>> g, log
(array([2., 4.]), ['pack', 'unpack'])
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any

__all__ = ["disable_saved_tensors_hooks", "save_on_cpu", "saved_tensors_hooks",
           "allow_mutation_on_saved_tensors", "increment_version"]

#: the innermost active (pack_hook, unpack_hook) pair, or None
_HOOKS: ContextVar[tuple[Callable[[Any], Any], Callable[[Any], Any]] | None] = ContextVar(
    "funcgrad_nn_saved_tensors_hooks", default=None)
#: the message of the innermost active disable_saved_tensors_hooks block, or None
_DISABLED: ContextVar[str | None] = ContextVar("funcgrad_nn_saved_tensors_hooks_disabled",
                                               default=None)


def current_hooks() -> tuple[Callable[[Any], Any], Callable[[Any], Any]] | None:
    """The (pack, unpack) pair a ``save_for_backward`` made now would use, or None.

    >>> current_hooks() is None
    True
    """
    return _HOOKS.get()


class saved_tensors_hooks:
    """Context manager: ``pack_hook(array) -> object`` when a custom Function saves an array
    for its backward, ``unpack_hook(object) -> array`` when ``backward`` reads it (see the
    module docstring).

    >>> with saved_tensors_hooks(lambda t: t, lambda p: p):
    ...     current_hooks() is not None
    True
    """

    def __init__(self, pack_hook: Callable[[Any], Any],
                 unpack_hook: Callable[[Any], Any]) -> None:
        if not callable(pack_hook) or not callable(unpack_hook):
            raise TypeError("saved_tensors_hooks: pack_hook and unpack_hook must be callables, "
                            f"got {type(pack_hook).__name__} and {type(unpack_hook).__name__}")
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook
        self._tokens: list[Any] = []

    def __enter__(self) -> saved_tensors_hooks:
        message = _DISABLED.get()
        if message is not None:
            raise RuntimeError(message)
        self._tokens.append(_HOOKS.set((self.pack_hook, self.unpack_hook)))
        return self

    def __exit__(self, *exc: Any) -> None:
        _HOOKS.reset(self._tokens.pop())


class save_on_cpu(saved_tensors_hooks):
    """Saved arrays are kept on the host and moved back to their device when ``backward``
    reads them (PyTorch's GPU-memory saver). ``pin_memory`` and ``device_type`` are
    accepted as PyTorch's; pinning has no counterpart here.

    >>> import numpy as np, funcgrad
    >>> with save_on_cpu(pin_memory=True):
    ...     funcgrad.grad(lambda x: (x * x).sum())(np.ones(2))
    array([2., 2.])
    """

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        del pin_memory, device_type  # no pinned host memory here; any device is moved

        def pack(t: Any) -> tuple[str, Any]:
            return t.device, t.to("cpu")

        def unpack(packed: tuple[str, Any]) -> Any:
            device, t = packed
            return t.to(device)

        super().__init__(pack, unpack)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message: str) -> Iterator[None]:
    """Inside this block entering :class:`saved_tensors_hooks` raises
    ``RuntimeError(error_message)``, as PyTorch's (for code that must not be offloaded);
    entering it while hooks are active raises the same.

    >>> with disable_saved_tensors_hooks("no hooks here"):
    ...     try:
    ...         with saved_tensors_hooks(lambda t: t, lambda p: p):
    ...             pass
    ...     except RuntimeError as e:
    ...         print(e)
    no hooks here
    """
    if _HOOKS.get() is not None:
        raise RuntimeError(str(error_message))
    token = _DISABLED.set(str(error_message))
    try:
        yield
    finally:
        _DISABLED.reset(token)


@contextlib.contextmanager
def allow_mutation_on_saved_tensors() -> Iterator[None]:
    """PyTorch's permission to modify a tensor in place after an operation saved it for
    backward (backward then uses the value it had when saved). Here that always holds:
    arrays outside a ``Function`` are never modified in place, and a ``Function`` saves its
    arrays as they are when ``forward`` returns, so the block only marks the code.

    >>> with allow_mutation_on_saved_tensors():
    ...     pass
    """
    yield


def increment_version(tensor: Any) -> None:
    """PyTorch's: record that ``tensor`` was modified in place (by a kernel autograd did not
    see), so autograd's saved-tensor check notices. Nothing to record here: no operation
    keeps a reference to an array that an in-place update could change behind it.

    >>> import numpy as np
    >>> increment_version(np.ones(2))
    """


# PyTorch's graph objects: the recorded backward graph of tensors, which funcgrad does not
# keep; a ported program asking for them is told what to use instead.
_GRAPH_NAMES = ("Node", "GradientEdge", "get_gradient_edge", "register_multi_grad_hook")


def __getattr__(name: str) -> object:
    if name in _GRAPH_NAMES:
        raise AttributeError(
            f"funcgrad_nn.autograd.graph has no {name!r}: funcgrad records no backward graph "
            "on arrays (a gradient is a function of the inputs, asked for with funcgrad.grad "
            "or funcgrad.vjp), so there are no nodes or edges to walk or hook. Observe or "
            "change gradients with a module's backward hooks, a Function's backward, or a "
            "custom_vjp (docs/autograd.md).")
    raise AttributeError(f"module 'funcgrad_nn.autograd.graph' has no attribute {name!r}")
