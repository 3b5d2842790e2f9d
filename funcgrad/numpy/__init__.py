"""funcgrad.numpy: a NumPy-compatible, differentiable namespace (minimal bootstrap)."""

from __future__ import annotations

from typing import Any

import numpy as _np

from funcgrad.avals import get_aval as _get_aval
from funcgrad.backend import xp_for as _xp_for
from funcgrad.core import Tracer as _Tracer
from funcgrad.numpy import _array_methods  # noqa: F401
from funcgrad.ops import elementwise as _ew
from funcgrad.ops import reductions as _red
from funcgrad.ops import shape as _sh


def asarray(x: Any, dtype: Any = None) -> Any:
    if isinstance(x, _Tracer):
        if dtype is not None and _np.dtype(dtype) != x.dtype:
            return _ew.convert_element_type(x, dtype)
        return x
    return _xp_for(x).asarray(x, dtype=dtype)


add = _ew.add
subtract = _ew.sub
multiply = _ew.mul
true_divide = divide = _ew.div
negative = _ew.neg
sin, cos, exp, log = _ew.sin, _ew.cos, _ew.exp, _ew.log


def sum(a: Any, axis: Any = None) -> Any:  # noqa: A001
    return _red.reduce_sum(a, axis)


def reshape(a: Any, shape: Any, order: str = "C") -> Any:
    return _sh.reshape(a, shape)


def transpose(a: Any, axes: Any = None) -> Any:
    return _sh.transpose(a, axes)


del Any, _get_aval
