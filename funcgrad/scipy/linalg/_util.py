"""Shared helpers of funcgrad.scipy.linalg: operand conversion and shape checks."""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.avals import get_aval
from funcgrad.backend import device_put, get_default_device, to_numpy
from funcgrad.core import Tracer
from funcgrad.errors import ConcretizationError, LinAlgShapeError, user_source_info

__all__ = ["const_like", "as_inexact", "as_double", "check_matrix", "check_square", "mT", "mH", "is_complex",
           "over_batch", "host_value"]


def host_value(x: Any, name: str, why: str) -> numpy.ndarray:
    """The value of ``x`` on the host, for a function whose result's shape or type depends on
    it (SciPy's value-dependent functions); traced (``jit``, ``vmap``) a clear error saying
    ``why`` instead of a bare conversion failure."""
    if isinstance(x, Tracer):
        v = x.to_concrete_value()
        if v is None or isinstance(v, Tracer):
            raise ConcretizationError(
                f"{name} needs concrete values, but got a traced value "
                f"({get_aval(x).str_short()}){user_source_info().at()}: {why}, so it cannot "
                "run under jit or vmap (call it outside, or use a fixed-shape formulation)")
        x = v
    return numpy.asarray(to_numpy(x))


def as_inexact(x: Any) -> Any:
    """``x`` as an array SciPy's LAPACK wrappers would compute in: integers and bools become
    float64, float16 float32; float32/64 and complex64/128 stay."""
    x = fnp.asarray(x)
    dt = get_aval(x).dtype
    if dt.kind in "biu":
        return x.astype(numpy.float64)
    if dt == numpy.float16:
        return x.astype(numpy.float32)
    return x


def as_double(x: Any) -> Any:
    """``x`` in double precision (float64 or complex128), as the SciPy functions that are not
    in ``jax.scipy.linalg`` and compute in double whatever the input (``logm``,
    ``fractional_matrix_power``, ``expm_cond``, ``solve_discrete_lyapunov``, ``solve_toeplitz``,
    ``matmul_toeplitz``, the Riccati solvers) return it: funcgrad follows SciPy's dtypes for
    SciPy's own names and JAX's for ``jax.scipy.linalg``'s."""
    x = as_inexact(x)
    dt = get_aval(x).dtype
    if dt == numpy.float32:
        return x.astype(numpy.float64)
    if dt == numpy.complex64:
        return x.astype(numpy.complex128)
    return x


def check_matrix(name: str, x: Any, arg: str = "a") -> tuple[int, int]:
    """The last two dimensions of ``x``; a LinAlgShapeError if it has fewer than two."""
    shape = get_aval(x).shape
    if len(shape) < 2:
        raise LinAlgShapeError(
            f"{name}: {arg} must be a (stack of) 2-D matrices, got shape {shape}")
    return shape[-2], shape[-1]


def check_square(name: str, x: Any, arg: str = "a") -> int:
    m, n = check_matrix(name, x, arg)
    if m != n:
        raise LinAlgShapeError(
            f"{name}: {arg} must be square in its last two dimensions, got shape "
            f"{get_aval(x).shape}")
    return n


def is_complex(x: Any) -> bool:
    return get_aval(x).dtype.kind == "c"


def mT(x: Any) -> Any:
    return fnp.swapaxes(x, -1, -2)


def mH(x: Any) -> Any:
    t = fnp.swapaxes(x, -1, -2)
    return fnp.conj(t) if is_complex(t) else t


def promote(*xs: Any) -> list[Any]:
    """Operands converted by :func:`as_inexact`, then to their common dtype."""
    xs = [as_inexact(x) for x in xs]
    dt = numpy.result_type(*[get_aval(x).dtype for x in xs])
    return [x.astype(dt) if get_aval(x).dtype != dt else x for x in xs]


def solve_with(name: str, a: Any, b: Any, solver: Any) -> Any:
    """Apply ``solver(a, b)`` (square ``a (..., n, n)``, ``b (..., n, k)`` with equal batch
    dims) to SciPy's operand conventions: ``b`` is a vector when 1-D, else a stack of matrices
    ``(..., n, k)`` whose batch dims broadcast with ``a``'s."""
    a, b = promote(a, b)
    n = check_square(name, a)
    aa, ba = get_aval(a), get_aval(b)
    if ba.ndim == 0:
        raise LinAlgShapeError(f"{name}: b must be at least 1-dimensional, got a scalar")
    vector = ba.ndim == 1
    if (ba.shape[0] if vector else ba.shape[-2]) != n:
        raise LinAlgShapeError(
            f"{name}: incompatible shapes: a {aa.shape} and b {ba.shape} (b needs {n} rows)")
    if vector:
        b = fnp.reshape(b, (n, 1))
        ba = get_aval(b)
    try:
        batch = tuple(numpy.broadcast_shapes(aa.shape[:-2], ba.shape[:-2]))
    except ValueError:
        raise LinAlgShapeError(
            f"{name}: the batch dimensions of a {aa.shape} and b {ba.shape} do not broadcast"
        ) from None
    x = solver(fnp.broadcast_to(a, batch + aa.shape[-2:]),
               fnp.broadcast_to(b, batch + ba.shape[-2:]))
    return x[..., 0] if vector else x


def const_like(x: Any, host: Any) -> Any:
    """The host constant ``host`` (an index array, a mask) on the device ``x`` lives on."""
    return device_put(numpy.asarray(host), get_aval(x).device or get_default_device())


def over_batch(*argdefs: tuple[str, Any]) -> Any:
    """SciPy 1.17's ``_apply_over_batch``: a decorator applying a function of core arrays over
    the broadcast leading (batch) dimensions of its first array arguments, each ``(name,
    core_ndim)`` (``"1|2"``: 2 when the array has at least 2 dimensions). The function runs once
    per batch element (so value-dependent shapes work, as in SciPy) and the results are
    stacked; a call without batch dimensions goes straight through."""
    names = [name for name, _ in argdefs]
    ndims = [nd for _, nd in argdefs]

    def decorator(f: Any) -> Any:
        @functools.wraps(f)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            arrays, rest = list(args[:len(names)]), args[len(names):]
            for i, name in enumerate(names):
                if name in kwargs:
                    if i < len(args):
                        raise TypeError(f"{f.__name__}() got multiple values for argument "
                                        f"{name!r}")
                    arrays.append(kwargs.pop(name))
            batch_shapes, core_shapes = [], []
            for i, (x, nd) in enumerate(zip(arrays, ndims)):
                if x is not None and not (isinstance(x, tuple | list) and nd == 0):
                    x = fnp.asarray(x)
                arrays[i] = x
                shape = () if x is None else tuple(get_aval(x).shape)
                k = (2 if len(shape) >= 2 else 1) if nd == "1|2" else nd
                batch_shapes.append(shape[:len(shape) - k] if k else shape)
                core_shapes.append(shape[len(shape) - k:] if k else ())
            if not any(batch_shapes):
                return f(*arrays, *rest, **kwargs)
            batch = tuple(numpy.broadcast_shapes(*batch_shapes))
            if math.prod(batch) == 0:
                raise ValueError(f"{f.__name__}: zero-size batches are not supported "
                                 f"(batch shape {batch})")
            arrays = [None if x is None else fnp.broadcast_to(x, batch + core)
                      for x, core in zip(arrays, core_shapes)]
            results = []
            for index in numpy.ndindex(batch):
                out = f(*(None if x is None else x[index] for x in arrays), *rest, **kwargs)
                results.append(out if isinstance(out, tuple) else (out,))
            stacked = []
            for parts in zip(*results):
                if all(p is None for p in parts):
                    stacked.append(None)
                    continue
                s = fnp.stack([fnp.asarray(p) for p in parts])
                stacked.append(fnp.reshape(s, batch + tuple(get_aval(s).shape[1:])))
            return stacked[0] if len(stacked) == 1 else tuple(stacked)

        return wrapper

    return decorator
