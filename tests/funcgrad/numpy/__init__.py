"""NumPy-conformance fuzzing of ``funcgrad.numpy``: shared strategies and the comparison.

Every ``test_conformance_*`` module draws inputs with Hypothesis (random shapes including 0-d
and size-0, every NumPy dtype funcgrad supports, Python scalars and lists, random
``axis``/``keepdims``/...) and calls :func:`check_like_numpy`, which demands NumPy's answer:

* when NumPy returns, funcgrad returns the same pytree of values (NaN-aware, tolerance by
  dtype) with the same shapes and dtypes; the same holds under ``funcgrad.jit`` (array
  arguments traced) and under ``funcgrad.vmap`` over a new leading axis (against a Python
  loop over the eager result);
* when NumPy raises, funcgrad raises too, with a message, and an exception compatible with
  NumPy's (both a ``ValueError``, both a ``TypeError``, ...; ``AxisError`` is both a
  ``ValueError`` and an ``IndexError``).

Inputs reach funcgrad through ``helpers.dev`` so the suite also runs under
``FUNCGRAD_TEST_DEVICE=strict``; NumPy always sees the host arrays.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from helpers import check_device, dev, host
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad

ALL_DTYPES = (
    "bool", "int8", "int32", "int64", "uint8", "float16", "float32", "float64", "complex64",
    "complex128",
)
REAL_DTYPES = tuple(d for d in ALL_DTYPES if not d.startswith("complex"))
NUMERIC_DTYPES = tuple(d for d in ALL_DTYPES if d != "bool")
INEXACT_DTYPES = ("float16", "float32", "float64", "complex64", "complex128")
FLOAT_DTYPES = ("float16", "float32", "float64")

# Exceptions that mean "invalid input" in NumPy and funcgrad alike.
_ERROR_BASES = (ValueError, TypeError, IndexError, ArithmeticError)

_SPECIAL = (np.nan, np.inf, -np.inf, 0.0, -0.0)


# ---------------------------------------------------------------------------------------------
# Strategies


def shapes(min_dims: int = 0, max_dims: int = 3, min_side: int = 0,
           max_side: int = 4) -> st.SearchStrategy[tuple[int, ...]]:
    """Array shapes, 0-d and size-0 included."""
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side,
                            max_side=max_side)


def elements(dtype: Any, special: bool = True, low: float = -4.0,
             high: float = 4.0) -> st.SearchStrategy[Any]:
    """Values for ``dtype``: small integers; floats in [low, high] (with NaN/inf/-0.0 when
    ``special``); complex from two such floats."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return st.booleans()
    if dt.kind == "u":
        return st.integers(0, 6)
    if dt.kind == "i":
        return st.integers(-6, 6)
    real = st.floats(low, high, width=16 if dt == np.float16 else 32)
    if special:
        # (complex infinities are left out: x / 1 or x * 1 is not x for them, which funcgrad's
        # compiler assumes, as most do)
        real = st.one_of(real, real, real, real, st.sampled_from(
            _SPECIAL if dt.kind == "f" else (np.nan, -0.0)))
    if dt.kind == "c":
        return st.builds(complex, real, real)
    return real


def arrays(dtype: Any, shape: Any, special: bool = True, low: float = -4.0,
           high: float = 4.0) -> st.SearchStrategy[np.ndarray]:
    """Host NumPy arrays of ``dtype`` and ``shape`` (a tuple or a strategy of tuples)."""
    return hnp.arrays(dtype, shape, elements=elements(dtype, special, low, high))


@st.composite
def array_of(draw: Any, dtypes: Sequence[str] = ALL_DTYPES, shape: Any = None,
             special: bool = True, low: float = -4.0, high: float = 4.0) -> np.ndarray:
    """One array: a dtype from ``dtypes`` and a shape from ``shape`` (default: any)."""
    dt = draw(st.sampled_from(tuple(dtypes)))
    shp = draw(shapes() if shape is None else shape)
    return draw(arrays(np.dtype(dt), shp, special=special, low=low, high=high))


@st.composite
def axis_for(draw: Any, ndim: int, allow_none: bool = True, allow_tuple: bool = True,
             allow_invalid: bool = True) -> Any:
    """An ``axis``: None, an int (negative too), a tuple of distinct ints; sometimes an
    out-of-range int or a repeated axis (NumPy raises for those)."""
    kinds = ["int", "int"]
    if allow_none:
        kinds.append("none")
    if allow_tuple:
        kinds.append("tuple")
    if allow_invalid:
        kinds.append("invalid")
    kind = draw(st.sampled_from(kinds))
    if kind == "none" or (kind in ("int", "tuple") and ndim == 0):
        return None if allow_none or ndim == 0 and kind != "int" else 0
    if kind == "int":
        return draw(st.integers(-ndim, ndim - 1))
    if kind == "tuple":
        axes = draw(st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim))
        return tuple(a - ndim if draw(st.booleans()) else a for a in axes)
    choice = draw(st.integers(0, 2))
    if choice == 0:
        return ndim  # out of range
    if choice == 1:
        return -ndim - 1
    return (0, 0) if allow_tuple else ndim


def weak_scalars(kinds: str = "bifc") -> st.SearchStrategy[Any]:
    """Python scalars (NEP 50 weak operands)."""
    opts = []
    if "b" in kinds:
        opts.append(st.booleans())
    if "i" in kinds:
        opts.append(st.integers(-5, 5))
    if "f" in kinds:
        opts.append(st.sampled_from([0.5, -1.5, 2.0, 3.25, 0.0]))
    if "c" in kinds:
        opts.append(st.sampled_from([1j, 0.5 - 2j]))
    return st.one_of(*opts)


# ---------------------------------------------------------------------------------------------
# The comparison


def _tol(dtype: np.dtype) -> float:
    if dtype.kind not in "fc":
        return 0.0
    bits = dtype.itemsize * 8 // (2 if dtype.kind == "c" else 1)
    return {16: 2e-2, 32: 1e-4, 64: 1e-9}[bits]


def assert_same(actual: Any, desired: Any, what: str, rtol: float | None = None) -> None:
    """``actual`` (funcgrad, any device) equals ``desired`` (NumPy) in structure, shape,
    dtype and value; NaNs match NaNs."""
    if isinstance(desired, tuple | list):
        assert isinstance(actual, tuple | list), f"{what}: got {type(actual).__name__}, " \
            f"NumPy gives a {type(desired).__name__}"
        assert len(actual) == len(desired), f"{what}: {len(actual)} results, NumPy {len(desired)}"
        for i, (a, d) in enumerate(zip(actual, desired)):
            assert_same(a, d, f"{what}[{i}]", rtol)
        return
    a = np.asarray(host(actual))
    d = np.asarray(desired)
    assert a.shape == d.shape, f"{what}: shape {a.shape}, NumPy gives {d.shape}"
    assert a.dtype == d.dtype, f"{what}: dtype {a.dtype}, NumPy gives {d.dtype}"
    if d.dtype.kind in "fc":
        t = _tol(d.dtype) if rtol is None else rtol
        with np.errstate(all="ignore"):
            np.testing.assert_allclose(a, d, rtol=t, atol=t, equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(a, d, err_msg=what)


def numpy_result(ref: Callable[..., Any], args: Sequence[Any], kwargs: dict) -> tuple:
    """(result, None) or (None, exception) of the NumPy reference; warnings silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            try:
                return ref(*args, **kwargs), None
            except Exception as e:  # noqa: BLE001 - any NumPy error is the expected answer
                return None, e


def _quiet(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            return fn(*args, **kwargs)


def assert_raises_like(np_err: BaseException, fn: Callable[..., Any], what: str,
                       loose: bool = False) -> None:
    """``fn()`` raises an exception compatible with NumPy's ``np_err``, with a message.

    ``loose``: the input is wrong in more than one way (bad shapes *and* dtypes, say), and
    which error comes first may differ; any "invalid input" exception will do.
    """
    try:
        out = _quiet(fn)
    except Exception as e:  # noqa: BLE001
        compatible = isinstance(e, type(np_err)) or any(
            isinstance(np_err, b) and isinstance(e, b) for b in _ERROR_BASES) or (
            loose and isinstance(e, _ERROR_BASES))
        # NumPy's AxisError (a ValueError and an IndexError) is what NumPy code catches for
        # a bad axis: funcgrad's AxisError is one.
        if isinstance(np_err, np.exceptions.AxisError) and not loose:
            compatible = isinstance(e, np.exceptions.AxisError)
        assert compatible, (
            f"{what}: NumPy raises {type(np_err).__name__}({np_err}), funcgrad raises "
            f"{type(e).__name__}({e})")
        assert str(e), f"{what}: {type(e).__name__} without a message"
        return
    raise AssertionError(
        f"{what}: NumPy raises {type(np_err).__name__}({np_err}), funcgrad returns {out!r}")


def _describe(args: Sequence[Any], kwargs: dict) -> str:
    def one(a: Any) -> str:
        if isinstance(a, np.ndarray):
            return f"{a.dtype}{list(a.shape)}" + (f"={a.tolist()}" if a.size <= 6 else "")
        return repr(a)

    parts = [one(a) for a in args] + [f"{k}={one(v)}" for k, v in kwargs.items()]
    return ", ".join(parts)


def check_like_numpy(
    fn: Callable[..., Any],
    ref: Callable[..., Any],
    *args: Any,
    jit: bool = True,
    vmap: bool = False,
    rtol: float | None = None,
    name: str = "",
    loose_errors: bool = False,
    trace_scalars: bool = False,
    **kwargs: Any,
) -> Any:
    """funcgrad's ``fn(*args, **kwargs)`` against NumPy's ``ref(*args, **kwargs)``.

    NumPy array arguments go to funcgrad on the test device; other arguments (Python
    scalars, lists, axes) pass unchanged. With ``jit``, the array arguments are traced by
    ``funcgrad.jit`` and the result must equal NumPy's too; with ``vmap``, each array
    argument is stacked with a perturbed copy along a new leading axis and
    ``funcgrad.vmap(fn)`` must give NumPy's per-example results stacked. ``trace_scalars``:
    Python scalar arguments are traced by ``jit`` too (as weak-typed values, NEP 50).
    ``loose_errors``: see :func:`assert_raises_like`. Returns NumPy's result (None if it
    raised).
    """
    what = f"{name or getattr(fn, '__name__', 'fn')}({_describe(args, kwargs)})"
    expected, np_err = numpy_result(ref, args, kwargs)
    dargs = dev(tuple(args))
    dkwargs = dev(kwargs)
    if np_err is not None:
        assert_raises_like(np_err, lambda: fn(*dargs, **dkwargs), what, loose_errors)
        return None
    try:
        out = _quiet(fn, *dargs, **dkwargs)
    except Exception as e:  # noqa: BLE001
        raise AssertionError(
            f"{what}: NumPy returns {expected!r}, funcgrad raises {type(e).__name__}: {e}"
        ) from e
    check_device(out)
    assert_same(out, expected, what, rtol)
    pos = [i for i, a in enumerate(args) if isinstance(a, np.ndarray)]
    jpos = [i for i, a in enumerate(args) if isinstance(a, np.ndarray) or trace_scalars and
            type(a) in (bool, int, float, complex)]
    if jit and jpos:
        def traced(*arrs: Any) -> Any:
            full = list(dargs)
            for i, a in zip(jpos, arrs):
                full[i] = a
            return fn(*full, **dkwargs)

        try:
            jout = _quiet(funcgrad.jit(traced), *[dargs[i] for i in jpos])
        except Exception as e:  # noqa: BLE001
            raise AssertionError(f"jit {what}: {type(e).__name__}: {e}") from e
        assert_same(jout, expected, "jit " + what, rtol)
    if vmap and pos:
        _check_vmap(fn, ref, args, kwargs, pos, what, rtol)
    return expected


def _perturbed(a: np.ndarray) -> np.ndarray:
    """A second example for a batch: same dtype and shape, different values."""
    if a.dtype.kind == "b":
        return ~a
    if a.dtype.kind == "u":
        return (a[::-1] if a.ndim else a) + np.asarray(1, a.dtype)
    return -(a[::-1] if a.ndim else a)


def _check_vmap(fn, ref, args, kwargs, pos, what, rtol) -> None:
    batch = list(args)
    for i in pos:
        batch[i] = np.stack([args[i], _perturbed(args[i])])
    per_example = []
    for b in range(2):
        ex = list(args)
        for i in pos:
            ex[i] = batch[i][b]
        r, err = numpy_result(ref, ex, kwargs)
        if err is not None:
            return  # the perturbed example is invalid input; nothing to compare
        per_example.append(r)
    expected = _stack_results(per_example)
    dbatch = dev(tuple(batch))
    dkwargs = dev(kwargs)

    def one(*arrs: Any) -> Any:
        full = list(dbatch)
        for i, a in zip(pos, arrs):
            full[i] = a
        return fn(*full, **dkwargs)

    try:
        vout = _quiet(funcgrad.vmap(one), *[dbatch[i] for i in pos])
    except Exception as e:  # noqa: BLE001
        raise AssertionError(f"vmap {what}: {type(e).__name__}: {e}") from e
    assert_same(vout, expected, "vmap " + what, rtol)


def _stack_results(rs: list[Any]) -> Any:
    if isinstance(rs[0], tuple | list):
        return type(rs[0])(_stack_results([r[i] for r in rs]) for i in range(len(rs[0])))
    return np.stack([np.asarray(r) for r in rs])
