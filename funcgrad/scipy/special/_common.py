"""What the special-function modules share: float coercion of the arguments (``_floats``:
float32 stays float32, the rest computes in float64, Python scalars stay weak), small
``where``/``while_loop``/``jvp`` wrappers, polynomial evaluation and the Newton helpers of the
incomplete-function inverses."""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.numpy as _fnp_module
import funcgrad.ops.elementwise as _ew
from funcgrad.api import jvp
from funcgrad.avals import get_aval, result_dtype
from funcgrad.errors import DTypeError
from funcgrad.lax import while_loop
from funcgrad.numpy import _elementwise as _fe
from funcgrad.scipy._device import colocated

_F32 = numpy.dtype(numpy.float32)
_F64 = numpy.dtype(numpy.float64)


def _to_float(name: str, x: Any) -> Any:
    """``x`` as float32/float64 (others become float64); Python scalars stay weak floats."""
    t = type(x)
    if t is float:
        return x
    if t is int or t is bool:
        return float(x)
    dt = get_aval(x).dtype
    if dt == _F32 or dt == _F64:
        return x
    if dt.kind == "c":
        raise DTypeError(f"funcgrad.scipy.special.{name}: complex input is not supported")
    return _ew.convert_element_type(x, _F64)


def _floats(name: str, *xs: Any) -> list[Any]:
    xs = _fe._colocate(*_fe.asarray_operands(*xs))
    out = [_to_float(name, x) for x in xs]
    if len(out) > 1:
        dt, _ = result_dtype(*(get_aval(v) for v in out))  # NEP 50: Python scalars are weak
        if dt != _F32 and dt != _F64:  # float16 met float16: compute in float64
            dt = _F64
        # Arrays from here on: selects between a Python scalar and a constant would
        # otherwise make a float64 array and promote the result.
        # (on one device: the formulas' operators cannot mix host and device arrays)
        out = [_ew.convert_element_type(v, dt) for v in colocated(*out)]
    return out


# =============================================================================================
# Gamma and beta functions, Bessel functions, tails and divergences (compositions of the
# primitives above; custom_jvp where a closed-form derivative is better conditioned).


def _like(x: Any, value: float) -> Any:
    """An array of ``value`` with ``x``'s shape and dtype."""
    return _fnp().full_like(x, value)


def _fnp() -> Any:
    return _fnp_module


def _counter(like: Any, dtype: Any = numpy.int32, start: float = 0) -> Any:
    """A loop's step counter, ``start`` (a 0-d array), on ``like``'s device: made from Python data alone it would
    go to the default device, and the loop's other values, computed from NumPy inputs, live
    on the host (core.place_uncommitted would then move the whole loop, and the code after it
    would mix host and device arrays)."""
    return _fnp_module.full_like(like, start, dtype=dtype, shape=())


# ---------------------------------------------------------------------------------------------
# Modified Bessel functions of the first kind, orders 0 and 1 (funcgrad.ops.special)


def _back(val: Any, like: Any) -> Any:
    # float32 input is computed in float64 and rounded once (as SciPy's float32 loops).
    return _ew.convert_element_type(val, get_aval(like).dtype)


# =============================================================================================
# Regularized incomplete beta function


def _while(cond: Any, body: Any, init: Any) -> Any:
    return while_loop(cond, body, init)


def _jvp(fun: Any, primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    return jvp(fun, primals, tangents)


def _f64(x: Any) -> Any:
    return _ew.convert_element_type(x, _F64)


def _clamp_tiny(v: Any, tiny: float) -> Any:
    fnp = _fnp()
    return fnp.where(fnp.abs(v) < tiny, tiny, v)


# =============================================================================================
# Inverses of the regularized incomplete gamma and beta functions


def _lower_tail_guess(small: Any) -> Any:
    """The standard normal quantile of ``small <= 1/2`` to ~3 digits (A&S 26.2.22), negative."""
    fnp = _fnp()
    t = fnp.sqrt(-2.0 * fnp.log(small))
    return (2.30753 + t * 0.27061) / (1.0 + t * (0.99229 + t * 0.04481)) - t


def _newton_done(step: Any, prev: Any, eps: float) -> Any:
    """Whether Newton's relative step has converged: down to rounding, or stalled at the
    level of the function's own rounding error (P at a large shape has only ~12 digits: its
    log carries a log x - x - log Gamma(a)), where a step no longer halves the previous."""
    return (step <= 4.0 * eps) | ((step < 1e-9) & (step > 0.5 * prev))


# ---------------------------------------------------------------------------------------------
# erfcx, factorial, comb, poch, boxcox, boxcox1p (composed from the functions above)

_fnpm = _fnp_module


def _polevl(w: Any, coeffs: tuple) -> Any:
    out = _fnpm.zeros_like(w) + coeffs[0]
    for c in coeffs[1:]:
        out = out * w + c
    return out


def _polyval(coeffs: tuple, x: Any) -> Any:
    out = _fnpm.zeros_like(x) + coeffs[0]
    for c in coeffs[1:]:
        out = out * x + c
    return out
