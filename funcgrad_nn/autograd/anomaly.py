"""PyTorch's anomaly mode: ``detect_anomaly`` and ``set_detect_anomaly``, on
:func:`funcgrad.debug_nans`.

Inside the block every operation of the backward pass is checked for NaN, eagerly and under
``jit``, as PyTorch's anomaly mode: a NaN produced by a derivative rule is reported with the
forward operation it belongs to and that operation's source line; the error is a
``RuntimeError`` (:class:`funcgrad.debug.NaNError`). NaNs of the forward computation pass, as
in PyTorch (``where(x > 0, log(x), 0.0)`` is fine); :func:`funcgrad.debug_nans` checks them
too.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

from funcgrad.debug.nans import _switch, _undo, nans_enabled

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled"]

#: anomaly mode itself (PyTorch also allows it on with ``check_nan=False``: no NaN checks)
_mode: ContextVar[bool] = ContextVar("funcgrad_nn_anomaly_mode", default=False)


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection is on in this context.

    Example:
        >>> is_anomaly_enabled()
        False
    """
    return _mode.get() or nans_enabled()


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly detection checks for NaN (off with ``check_nan=False``).

    Example:
        >>> with set_detect_anomaly(True, check_nan=False):
        ...     is_anomaly_enabled(), is_anomaly_check_nan_enabled()
        (True, False)
    """
    return nans_enabled()


def _switch_mode(mode: bool, check_nan: bool) -> list[Any]:
    # PyTorch checks the backward pass only: a forward NaN that a where() drops is fine
    return [(_mode, _mode.set(mode))] + _switch(mode and check_nan, False, backward_only=True)


class detect_anomaly:  # noqa: N801  (PyTorch's name)
    """Context manager / decorator enabling anomaly detection (``check_nan=True``).

    Example:
        >>> import numpy as np, funcgrad, funcgrad.numpy as fnp
        >>> f = lambda x: fnp.sum(fnp.where(x > 0, fnp.sqrt(x), 0.0))
        >>> with detect_anomaly():                                   # doctest: +ELLIPSIS
        ...     funcgrad.grad(f)(np.array([0.0, 4.0]))
        Traceback (most recent call last):
        ...
        funcgrad.debug.nans.NaNError: detect_anomaly: NaN in the backward pass: the derivative of sqrt ...
    """

    def __init__(self, check_nan: bool = True) -> None:
        if not isinstance(check_nan, bool):
            raise TypeError(f"detect_anomaly(check_nan): expected a bool, got "
                            f"{type(check_nan).__name__} {check_nan!r}")
        self.check_nan = check_nan
        self._stack: list[list[Any]] = []
        # PyTorch's reminder, given when the manager is made (set_detect_anomaly gives none)
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the "
                      "runtime and should only be enabled for debugging.", stacklevel=2)

    def __enter__(self) -> None:
        self._stack.append(_switch_mode(True, self.check_nan))

    def __exit__(self, *exc: Any) -> None:
        _undo(self._stack.pop())

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            undo = _switch_mode(True, self.check_nan)  # (warned once, when decorating)
            try:
                return fn(*args, **kwargs)
            finally:
                _undo(undo)

        return wrapper


class set_detect_anomaly:  # noqa: N801
    """Turn anomaly detection on/off: at once when called, restored when used in ``with``.

    Example:
        >>> with set_detect_anomaly(True):
        ...     is_anomaly_enabled()
        True
        >>> is_anomaly_enabled()
        False
    """

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        if not isinstance(mode, bool):
            raise TypeError(f"set_detect_anomaly(mode): expected a bool, got "
                            f"{type(mode).__name__} {mode!r}")
        self.mode = mode
        self._tokens = _switch_mode(mode, check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> None:
        _undo(self._tokens)
