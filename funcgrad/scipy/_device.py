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


def _host_only(args: Any, kwargs: dict[str, Any]) -> bool:
    """Whether the arguments hold a host (NumPy) array and nothing of a device: arrays, lists
    and tuples of them looked at one level deep; tracers count as a device's (their
    operations place operands themselves)."""
    host = False
    for v in (*args, *kwargs.values()):
        for x in (v if type(v) in (list, tuple) else (v,)):
            t = type(x)
            if t is numpy.ndarray:
                host = True
            elif t in _SCALARS or isinstance(x, numpy.generic) or x is None or callable(x) \
                    or t is str:
                continue
            elif isinstance(x, Tracer) or device_of(x) not in (None, "cpu"):
                return False
    return host


def host_inputs_stay_on_host(f: Callable[..., Any]) -> Callable[..., Any]:
    """``f`` computing on the host when its inputs are host (NumPy) arrays, whatever the
    default device.

    funcgrad's rule: operations on host arrays alone stay on the host. A composition's
    intermediate values can leave it: a constant made from Python data, or a NumPy scalar
    (what NumPy's operators give on 0-d arrays), goes alone to the default device, and the
    next operator then mixes it with host arrays (CuPy's, or the strict test device's,
    ``TypeError``). With the default device the host for the call, none does. Inputs with a
    device array (or traced ones) are left to the default device.
    """

    @functools.wraps(f)
    def call(*args: Any, **kwargs: Any) -> Any:
        if _default_device.get() == "cpu" or not _host_only(args, kwargs):
            return f(*args, **kwargs)
        token = _default_device.set("cpu")
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
