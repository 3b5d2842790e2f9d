"""The methods of NumPy's binary ufuncs on funcgrad.numpy's functions, as JAX's ``jnp.ufunc``:
``fnp.add.outer(a, b)``, ``fnp.multiply.reduce(a, axis=0)``, ``fnp.add.accumulate(a)``,
``fnp.add.at(a, indices, b, inplace=False)``, with ``nin``/``nout``/``identity``. The same
methods of ``numpy.add`` on a traced array (``__array_ufunc__``) come here too.

Example:
    >>> import funcgrad.numpy as fnp
    >>> fnp.add.outer(fnp.arange(2), fnp.arange(3)).tolist()
    [[0, 1, 2], [1, 2, 3]]
    >>> fnp.multiply.reduce(fnp.arange(1, 5))
    array(24)
"""

from __future__ import annotations

import functools
from typing import Any

import numpy

import funcgrad.numpy as fnp  # the package, partly built: read at call time
from funcgrad.ops import reductions
from funcgrad.ops.control_flow.scans import scan

__all__ = ["ufunc_method", "install"]

#: ufunc -> the funcgrad.numpy reduction that is its ``reduce`` (any axes, ``initial``,
#: ``where``); fmax/fmin skip NaNs, as the nan-reductions do (all-NaN gives NaN in both)
_REDUCERS = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min",
             "logical_and": "all", "logical_or": "any", "fmax": "nanmax", "fmin": "nanmin"}
#: ufunc -> the cumulative function (funcgrad.numpy's, else funcgrad.ops.reductions') that is
#: its ``accumulate``
_ACCUMULATORS = {"add": "cumsum", "multiply": "cumprod", "maximum": "cummax",
                 "minimum": "cummin"}
#: ufunc -> the ``x.at[i]`` update that is its unbuffered ``at`` (repeated indices accumulate)
_SCATTERS = {"add": "add", "multiply": "multiply", "maximum": "max", "minimum": "min"}


def _outer(fn: Any, a: Any, b: Any, **kwargs: Any) -> Any:
    # Every element of a against every element of b, a's axes first.
    a, b = fnp.asarray(a), fnp.asarray(b)
    return fn(fnp.reshape(a, tuple(a.shape) + (1,) * b.ndim), b, **kwargs)


def _fold(fn: Any, a: Any, axis: Any, keep_all: bool) -> Any:
    """``fn`` folded left along ``axis`` (NumPy's order: ``((a0 op a1) op a2) ...``), for a
    ufunc with no reduction of its own; ``keep_all``: every partial result (accumulate)."""
    a = fnp.asarray(a)
    if isinstance(axis, tuple) and len(axis) == 1:
        axis = axis[0]
    if axis is None and a.ndim <= 1:
        a, axis = fnp.ravel(a), 0
    if not isinstance(axis, int | numpy.integer) and not keep_all and _reorderable(fn.__name__):
        # Several axes (None: all) of a reorderable ufunc (hypot, gcd, bitwise_and, ...): one
        # fold over them flattened, in front.
        axes = tuple(range(a.ndim)) if axis is None else tuple(
            int(ax) % a.ndim for ax in axis)
        rest = [d for d in range(a.ndim) if d not in axes]
        a = fnp.reshape(fnp.transpose(a, axes + tuple(rest)),
                        (-1,) + tuple(a.shape[d] for d in rest))
        axis = 0
    if not isinstance(axis, int | numpy.integer):  # NumPy's words
        raise ValueError(f"reduction operation '{fn.__name__}' is not reorderable, so at most "
                         "one axis may be specified")
    moved = fnp.moveaxis(a, int(axis), 0)
    if moved.shape[0] == 0:
        raise ValueError(f"zero-size array to reduction operation {fn.__name__} which has no "
                         "identity")
    first = fnp.reshape(moved[:1], moved.shape[1:])  # an array where a is (moved[0] of a
    # host vector would be a NumPy scalar, which the loop would put on the default device)
    carry0 = fnp.asarray(first, dtype=fn(first, first).dtype)  # the fold's result dtype

    def step(carry: Any, x: Any) -> tuple[Any, Any]:
        out = fnp.asarray(fn(carry, x), dtype=carry0.dtype)
        return out, out

    last, parts = scan(step, carry0, moved[1:])
    if not keep_all:
        return last
    return fnp.moveaxis(fnp.concatenate([carry0[None], parts], 0), 0, int(axis))


def _reduce(fn: Any, a: Any, axis: Any = 0, dtype: Any = None, out: Any = None,
            keepdims: bool = False, initial: Any = None, where: Any = None) -> Any:
    name = fn.__name__
    if out is not None:
        raise TypeError(f"{name}.reduce: out= is not supported (funcgrad arrays are immutable)")
    reducer = _REDUCERS.get(name)
    if reducer is not None:
        kw: dict[str, Any] = {"axis": axis, "keepdims": keepdims}
        if dtype is not None:
            kw["dtype"] = dtype
        if initial is not None:
            kw["initial"] = initial
        if where is not None:
            kw["where"] = where
        return getattr(fnp, reducer)(a, **kw)
    if initial is not None or where is not None or keepdims:
        raise TypeError(f"{name}.reduce: initial=, where= and keepdims= are supported for "
                        f"the reorderable ufuncs ({', '.join(sorted(_REDUCERS))})")
    res = _fold(fn, a, axis, keep_all=False)
    return res if dtype is None else fnp.asarray(res, dtype=dtype)


def _accumulate(fn: Any, a: Any, axis: int = 0, dtype: Any = None, out: Any = None) -> Any:
    if out is not None:
        raise TypeError(f"{fn.__name__}.accumulate: out= is not supported (funcgrad arrays "
                        "are immutable)")
    cumulative = _ACCUMULATORS.get(fn.__name__)
    if cumulative is not None:
        res = getattr(fnp, cumulative, None) or getattr(reductions, cumulative)
        res = res(fnp.asarray(a), axis=axis)
    else:
        res = _fold(fn, a, axis, keep_all=True)
    return res if dtype is None else fnp.asarray(res, dtype=dtype)


def _at(fn: Any, a: Any, indices: Any, b: Any = None, *, inplace: bool = True) -> Any:
    """``a`` with ``fn`` applied at ``indices`` (unbuffered: a repeated index applies again),
    returned as a new array: as JAX, ``inplace=False`` is required (arrays are immutable)."""
    name = fn.__name__
    if inplace:
        raise ValueError(f"{name}.at: funcgrad arrays are immutable, so in-place updates are "
                         "not supported: pass inplace=False and use the returned array")
    if b is None:
        raise TypeError(f"{name}.at: a binary ufunc needs the operand b")
    if name == "subtract":
        return fnp.at(a)[indices].add(fnp.negative(b))
    scatter = _SCATTERS.get(name)
    if scatter is not None:
        return getattr(fnp.at(a)[indices], scatter)(b)
    # Any other ufunc: one update after another, in index order (NumPy's unbuffered order).
    idx = fnp.asarray(indices)
    if idx.dtype.kind not in "iu":
        raise TypeError(f"{name}.at: indices must be integers along the first axis for "
                        f"this ufunc, got {idx.dtype}")
    a = fnp.asarray(a)
    flat = fnp.ravel(idx)
    vals = fnp.broadcast_to(fnp.asarray(b), idx.shape + tuple(a.shape[1:]))
    vals = fnp.reshape(vals, (flat.shape[0],) + tuple(a.shape[1:]))

    def step(x: Any, iv: tuple[Any, Any]) -> tuple[Any, None]:
        i, v = iv
        return fnp.at(x)[i].set(fn(x[i], v)), None

    return scan(step, a, (flat, vals))[0]


@functools.cache
def _reorderable(name: str) -> bool:
    """Whether NumPy reduces the ufunc ``name`` over several axes at once (associative and
    commutative), asked of NumPy itself on a 1x1 array."""
    ufunc = getattr(numpy, name)
    for dtype in (numpy.float64, numpy.int64, numpy.bool_):
        try:
            ufunc.reduce(numpy.ones((1, 1), dtype), axis=None)
        except TypeError:
            continue  # no loop for this dtype: try another
        except ValueError:
            return False
        return True
    return False



def ufunc_method(fn: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
    """``fn.<method>(*inputs, **kwargs)`` for the binary funcgrad.numpy function ``fn``
    (``method``: ``"outer"``, ``"reduce"``, ``"accumulate"`` or ``"at"``).

    Example:
        >>> import funcgrad.numpy as fnp
        >>> ufunc_method(fnp.maximum, "accumulate", fnp.asarray([1, 3, 2])).tolist()
        [1, 3, 3]
    """
    impl = {"outer": _outer, "reduce": _reduce, "accumulate": _accumulate, "at": _at}.get(method)
    if impl is None:
        raise TypeError(f"numpy.{fn.__name__}.{method} is not supported by funcgrad.numpy")
    return impl(fn, *inputs, **kwargs)


def install(namespace: dict) -> None:
    """Give each binary ufunc of ``namespace`` (funcgrad.numpy's) JAX's ufunc methods and
    attributes (``outer``, ``reduce``, ``accumulate``, ``at``, ``nin``, ``nout``,
    ``identity``), where NumPy has that name as a two-operand ufunc.

    Example:
        >>> import funcgrad.numpy as fnp
        >>> fnp.add.nin, fnp.add.identity
        (2, 0)
    """
    for name, fn in list(namespace.items()):
        np_ufunc = getattr(numpy, name, None)
        if not (isinstance(np_ufunc, numpy.ufunc) and np_ufunc.nin == 2 and callable(fn)
                and getattr(fn, "__name__", None) == name and np_ufunc.nout == 1):
            continue
        for method in ("outer", "reduce", "accumulate", "at"):
            setattr(fn, method, _bound(fn, method))
        fn.nin, fn.nout = 2, 1
        fn.nargs = 3
        fn.identity = np_ufunc.identity  # NumPy's (None where there is none)


def _bound(fn: Any, method: str) -> Any:
    def call(*inputs: Any, **kwargs: Any) -> Any:
        return ufunc_method(fn, method, *inputs, **kwargs)

    call.__name__ = call.__qualname__ = f"{fn.__name__}.{method}"
    call.__doc__ = f"``numpy.{fn.__name__}.{method}``, as ``jax.numpy.{fn.__name__}.{method}``."
    return call
