"""Operands of one device for the compositions of funcgrad.scipy.

The library's formulas use Python's operators on the arrays funcgrad's operations return, and
those operators are the array module's own (NumPy's, CuPy's): they do not apply
``core.place_uncommitted``. A host (NumPy) input beside a device array, or a Python constant
made an array alone (it goes to the default device), then meets arrays of another device in
an operator: CuPy's (and the strict test device's) ``TypeError``. The entry points put their
operands on one device first, as funcgrad's operations would.
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable
from typing import Any

import numpy

from funcgrad.backend import _default_device, device_of
from funcgrad.core import Tracer, place_uncommitted
from funcgrad.numpy._linalg_ops import _arrs


def colocated(*xs: Any) -> list[Any]:
    """``xs`` as arrays of one device: Python and NumPy scalars (and lists) made arrays on the
    device of the array operands, host arrays moved to the device of the device operands
    (JAX's uncommitted inputs); arrays of one device, or of the host alone, are left where they are.

    Example:
        >>> import numpy as np
        >>> import funcgrad
        >>> with funcgrad.default_device("strict"):
        ...     a, b, c = colocated(np.ones(2), 2.0, funcgrad.numpy.zeros(2))
        >>> type(a).__name__, type(b).__name__, type(c).__name__
        ('StrictArray', 'StrictArray', 'StrictArray')
        >>> a, b = colocated(np.ones(2), 2.0)
        >>> type(b).__name__
        'ndarray'
    """
    return list(place_uncommitted(_arrs(*xs)))


_SCALARS = (bool, int, float, complex)


def _placement(args: Any, kwargs: dict[str, Any]) -> tuple[str, Any, bool] | None:
    """Where a call with these arguments computes: ``(device, witness, host)`` with
    ``witness`` one of its device arrays (None for ``"cpu"``) and ``host`` whether host
    (NumPy) arrays come too; ``"cpu"`` when the arrays are host arrays alone. None when
    there is no array, a traced value (its operations place operands themselves), or
    arrays of two devices (which the operations refuse by name). Arrays, and lists and
    tuples of them, are looked at one level deep."""
    host = False
    witness = None
    dev = None
    for v in (*args, *kwargs.values()):
        for x in (v if type(v) in (list, tuple) else (v,)):
            t = type(x)
            if t is numpy.ndarray:
                host = True
            elif t in _SCALARS or isinstance(x, numpy.generic) or x is None or callable(x) \
                    or t is str:
                continue
            elif isinstance(x, Tracer):
                return None
            else:
                d = device_of(x)
                if d is None or d == "cpu":
                    continue
                if dev is None:
                    dev, witness = d, x
                elif d != dev:
                    return None
    if dev is not None:
        return dev, witness, host
    return ("cpu", None, True) if host else None


def _moved(v: Any, witness: Any) -> Any:
    """``v``'s host arrays (one level deep in lists and tuples) on ``witness``'s device."""
    if type(v) is numpy.ndarray:
        return place_uncommitted([v, witness])[0]
    if type(v) in (list, tuple) and any(type(x) is numpy.ndarray for x in v):
        return type(v)(place_uncommitted([x, witness])[0] if type(x) is numpy.ndarray else x
                       for x in v)
    return v


def host_inputs_stay_on_host(f: Callable[..., Any]) -> Callable[..., Any]:
    """``f`` computing where its array inputs are, whatever the default device: on the host
    when they are host (NumPy) arrays; on a device when device arrays come with them.

    funcgrad's rule: operations on host arrays alone stay on the host; beside arrays of one
    device the host arrays (uncommitted, as JAX's NumPy inputs) go to that device. A
    composition's formulas use the array modules' own operators, which apply neither half:
    a constant made from Python data, or a NumPy scalar (what NumPy's operators give on 0-d
    arrays), went alone to the default device, and a NumPy input met a device array in an
    operator (CuPy's, or the strict test device's, ``TypeError``); device inputs met host
    constants the same way under a host default. So the call runs with its inputs' device
    as the default device, its host inputs moved to that device beside device arrays
    (``funcgrad.transfer_guard`` applies).
    """

    @functools.wraps(f)
    def call(*args: Any, **kwargs: Any) -> Any:
        where = _placement(args, kwargs)
        if where is None:
            return f(*args, **kwargs)
        device, witness, host = where
        if witness is not None and host:
            args = tuple(_moved(v, witness) for v in args)
            kwargs = {k: _moved(v, witness) for k, v in kwargs.items()}
        if _default_device.get() == device:
            return f(*args, **kwargs)
        token = _default_device.set(device)
        try:
            return f(*args, **kwargs)
        finally:
            _default_device.reset(token)

    return call


def keep_host_inputs_on_host(namespace: dict[str, Any], names: Any) -> None:
    """Wrap the public functions ``names`` of a module's ``namespace`` with
    :func:`host_inputs_stay_on_host` (classes and modules are left as they are)."""
    for name in names:
        f = namespace.get(name)
        if isinstance(f, types.FunctionType | functools.partial) \
                and not hasattr(f, "_host_inputs_stay"):
            wrapped = host_inputs_stay_on_host(f)
            wrapped._host_inputs_stay = True  # type: ignore[attr-defined]
            namespace[name] = wrapped
