"""Adversarial NumPy-conformance fuzzing of ``funcgrad.numpy``: the corners the other
``test_conformance_*`` modules leave out.

* ``uint64`` (mixed with signed ints it promotes to float64; huge values; negative Python ints
  overflow) in ufuncs, reductions, products, creation and ``astype``;
* traced operator forms (``// % ** << >> & | ^ +x``) under ``jit``, including the inputs where
  NumPy *raises* (``int ** -1``, out-of-range Python ints) -- ``check_like_numpy`` only checks
  eager funcgrad when NumPy raises, and eager operators on plain arrays are NumPy's own;
* ``round``/``around`` with ``decimals``, ``isclose``/``allclose`` options;
* ``dtype=`` of mean/var/std and the NaN-ignoring statistics (NumPy's casting rules);
* ``concatenate``/``stack``/``hstack``/``vstack`` ``dtype=``/``casting=``, ``einsum`` ``dtype=``
  with ``casting=``;
* sorting with NaNs (real and complex), ``nanmedian`` of complex input;
* ``linspace``/``arange``/``full``/``eye``/``tri`` with every dtype;
* errors: bad shapes, bad axes, bad casts raise an exception of NumPy's family.
"""

from __future__ import annotations

import operator

import numpy as np
import pytest
from helpers import expected_fp_warnings, host
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad
import funcgrad.numpy as fnp
from tests.funcgrad.numpy import (
    ALL_DTYPES,
    arrays,
    assert_raises_like,
    check_like_numpy,
    dev,
    numpy_result,
    weak_scalars,
)

DTYPES = ALL_DTYPES + ("uint64",)
INT_DTYPES = ("int8", "uint8", "int32", "int64", "uint64")
FEW = settings(max_examples=40, deadline=None)

# Values chosen to hit edges: wrap-around, the largest uint64, -0.0, NaN, inf, float16 max.
EDGE_VALUES = {
    "bool": [True, False, True], "int8": [-128, 127, -3], "uint8": [0, 255, 7],
    "int32": [-5, 0, 7], "int64": [-2 ** 62, 3, -1], "uint64": [2 ** 64 - 1, 0, 5],
    "float16": [np.nan, -0.0, 65504], "float32": [1.5, -np.inf, 3e38],
    "float64": [-2.5, 1e300, np.nan], "complex64": [1 + 1j, -2j, 0],
    "complex128": [complex(np.nan, 1), 1, -3 + 2j],
}


def edge(dtype: str) -> np.ndarray:
    return np.array(EDGE_VALUES[dtype], dtype)


def uint64_arrays(shape) -> st.SearchStrategy[np.ndarray]:
    """uint64 with values near 0 and near 2**64 (where a float64 detour loses precision)."""
    return hnp.arrays(np.uint64, shape, elements=st.one_of(
        st.integers(0, 6), st.integers(2 ** 64 - 4, 2 ** 64 - 1), st.just(2 ** 63)))


def any_array(dtype: str, shape, special: bool = True) -> st.SearchStrategy[np.ndarray]:
    """Arrays of any of ``DTYPES`` (NaN/inf/-0.0 included when ``special``)."""
    if dtype == "uint64":
        return uint64_arrays(shape)
    return arrays(np.dtype(dtype), shape, special=special)


def check_jit_raises_like_numpy(fn, *args, name: str = "") -> None:
    """Where NumPy raises for ``fn(*args)``, ``jit(fn)`` (arrays traced) raises too, with an
    exception of NumPy's family; where NumPy returns, jit returns NumPy's answer. (Only jit:
    ``fn`` called on the device arrays themselves would run the array library's own operators,
    CuPy's on the GPU, not funcgrad's.)"""
    what = f"jit {name}"
    expected, err = numpy_result(fn, args, {})
    dargs = dev(tuple(args))
    if err is not None:
        assert_raises_like(err, lambda: funcgrad.jit(fn)(*dargs), what)
        return
    check_like_numpy(funcgrad.jit(fn), fn, *args, jit=False, name=what)


# ---------------------------------------------------------------------------------------------
# uint64 in elementwise functions

BINARY = ("add", "subtract", "multiply", "divide", "floor_divide", "remainder", "power",
          "maximum", "minimum", "equal", "less", "greater_equal", "bitwise_and", "bitwise_or",
          "bitwise_xor", "right_shift", "left_shift", "arctan2", "fmod", "logaddexp",
          "heaviside", "gcd")


@FEW
@given(st.sampled_from(BINARY), st.sampled_from(DTYPES), st.data())
def test_uint64_binary(name: str, other: str, data: st.DataObject) -> None:
    shape_a, shape_b = data.draw(hnp.mutually_broadcastable_shapes(
        num_shapes=2, min_dims=0, max_dims=2, min_side=0, max_side=3), "shapes").input_shapes
    a = data.draw(uint64_arrays(shape_a), "a")
    b = data.draw(st.one_of(any_array(other, shape_b), weak_scalars("bif"),
                            st.sampled_from([2 ** 64 - 1, -1, 2 ** 63])), "b")
    if name in ("left_shift", "right_shift", "power"):
        # (shift counts >= the bit width are CPU-defined; large powers just overflow)
        assume(not isinstance(b, np.ndarray) or b.dtype.kind == "b" or np.all(
            (b.real >= 0) & (b.real < 8)))
        assume(isinstance(b, np.ndarray) or isinstance(b, bool) or 0 <= b < 8)
    args = (b, a) if data.draw(st.booleans(), "swap") else (a, b)
    check_like_numpy(getattr(fnp, name), getattr(np, name), *args, name=name,
                     trace_scalars=True)


@FEW
@given(st.sampled_from(("negative", "absolute", "sign", "sqrt", "square", "invert", "floor",
                        "isnan", "exp", "log1p", "bitwise_count", "positive")),
       hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3), st.data())
def test_uint64_unary(name: str, shape: tuple, data: st.DataObject) -> None:
    x = data.draw(uint64_arrays(shape), "x")
    check_like_numpy(getattr(fnp, name), getattr(np, name), x, name=name, vmap=True)


# ---------------------------------------------------------------------------------------------
# Traced operators: values and errors

OPERATORS = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
    "//": operator.floordiv, "%": operator.mod, "**": operator.pow, "<": operator.lt,
    "<=": operator.le, "==": operator.eq, "!=": operator.ne, ">": operator.gt,
    "&": operator.and_, "|": operator.or_, "^": operator.xor, "<<": operator.lshift,
    ">>": operator.rshift, "divmod": divmod,
}
SCALARS = (0, 1, -1, 2, -2, 200, -200, 2 ** 40, 2 ** 63, 2 ** 64, 0.5, -0.0, float("inf"),
           float("nan"), 1j, True, False)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(tuple(OPERATORS)), st.sampled_from(DTYPES),
       st.one_of(st.sampled_from(SCALARS), st.sampled_from(DTYPES)), st.booleans())
def test_traced_operators(op: str, da: str, other, reflected: bool) -> None:
    """``x op y`` on a traced ``x`` gives NumPy's value and dtype, and raises where NumPy does
    (``int ** -1``, ``uint8 + -1``, bitwise ops on floats, ...)."""
    fn = OPERATORS[op]
    x = edge(da)
    if isinstance(other, str):
        y = edge(other)
        if op in ("<<", ">>") and other not in ("bool",) and y.dtype.kind in "iu":
            y = (np.abs(y.astype(np.float64)) % 8).astype(other)
        if op == "**" and y.dtype.kind in "iu":
            y = (y.astype(np.float64) % 5 - 1).astype(other) if other[0] == "i" else y % 5
        check_jit_raises_like_numpy(fn, x, y, name=f"{da} {op} {other}")
        return
    if op in ("<<", ">>") and type(other) is int and not 0 <= other < 8:
        return  # (CPU-defined)
    f = (lambda a: fn(other, a)) if reflected else (lambda a: fn(a, other))
    check_jit_raises_like_numpy(f, x, name=f"{da} {op} {other!r}" + (" (reflected)" *
                                                                       reflected))


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int64", "uint64", "bool"])
@pytest.mark.parametrize("exponent", [-1, -2, -200, 300, 2 ** 64])
def test_integer_power_errors_under_jit(dtype: str, exponent: int) -> None:
    """``int_array ** negative_int`` raises ValueError; an exponent out of the dtype's range
    raises OverflowError first (NumPy's order), eagerly and under jit."""
    x = np.array([1, 2], dtype)
    check_like_numpy(fnp.power, np.power, x, exponent, name="power")
    check_jit_raises_like_numpy(lambda a: a ** exponent, x, name=f"{dtype} ** {exponent}")
    check_jit_raises_like_numpy(lambda a: fnp.power(a, exponent), x, name="fnp.power")


def test_positive_of_traced_bool_raises() -> None:
    check_jit_raises_like_numpy(lambda a: +a, np.array([True, False]), name="+bool")


def test_positive_of_bool_raises_eagerly() -> None:
    check_like_numpy(fnp.positive, np.positive, np.array([True, False]), name="positive")


# ---------------------------------------------------------------------------------------------
# round / around, isclose / allclose


@FEW
@given(st.sampled_from(DTYPES), hnp.array_shapes(min_dims=0, max_dims=2, min_side=0,
                                                 max_side=3),
       st.integers(-3, 3), st.sampled_from(("round", "around", "method")), st.data())
def test_round_decimals(dtype: str, shape: tuple, decimals: int, how: str,
                        data: st.DataObject) -> None:
    x = data.draw(st.one_of(any_array(dtype, shape), st.sampled_from(
        [2.675, 1234, -0.5, 2.5, True, 1.5 + 2.5j])), "x")
    if how == "method":
        if not isinstance(x, np.ndarray):
            return
        # (traced: a device array's own method is the library's, CuPy's on the GPU, whose
        # round gives float16 for bools at any decimals)
        check_like_numpy(funcgrad.jit(lambda a: a.round(decimals)),
                         lambda a: a.round(decimals), x, jit=False, name="jit x.round")
        return
    # (decimals is static: a keyword, so that only x is traced)
    check_like_numpy(getattr(fnp, how), getattr(np, how), x, name=how, trace_scalars=True,
                     decimals=decimals)


@pytest.mark.parametrize("decimals", [0, 1, -1])
def test_round_bool(decimals: int) -> None:
    # NumPy: float16 at decimals=0, a UFuncTypeError otherwise; CuPy's round gave float16 for
    # every decimals (the strict backend's round does too now)
    b = np.array([True, False])
    check_like_numpy(fnp.round, np.round, b, decimals, name="round")
    check_like_numpy(funcgrad.jit(lambda a: a.round(decimals)), lambda a: a.round(decimals),
                     b, jit=False, name="jit x.round")


@FEW
@given(st.sampled_from(DTYPES), st.sampled_from(DTYPES), st.data(),
       st.sampled_from(({}, {"equal_nan": True}, {"rtol": 0.1, "atol": 1},
                        {"rtol": 0, "atol": 0}, {"atol": 2.5, "equal_nan": True})))
def test_isclose_allclose(da: str, db: str, data: st.DataObject, opts: dict) -> None:
    shape_a, shape_b = data.draw(hnp.mutually_broadcastable_shapes(
        num_shapes=2, min_dims=0, max_dims=2, min_side=0, max_side=3), "shapes").input_shapes
    if data.draw(st.integers(0, 9), "bad") == 0:
        shape_b = shape_b + (5,)  # NumPy raises: shapes do not broadcast
    a = data.draw(any_array(da, shape_a), "a")
    b = data.draw(st.one_of(any_array(db, shape_b), weak_scalars("bif")), "b")
    check_like_numpy(fnp.isclose, np.isclose, a, b, name="isclose", **opts)
    # (allclose returns a Python bool on known values; traced, a 0-d bool array: below)
    check_like_numpy(fnp.allclose, np.allclose, a, b, name="allclose", jit=False, **opts)


def test_allclose_under_jit_and_vmap_is_a_traced_bool() -> None:
    # jnp.allclose works under jit (a 0-d bool array); it raised a ConcretizationError here
    x = dev(np.arange(3.0))
    assert bool(host(funcgrad.jit(lambda a: fnp.allclose(a, a + 1e-9))(x))) is True
    assert bool(host(funcgrad.jit(lambda a: fnp.allclose(a, a + 1.0))(x))) is False
    rows = funcgrad.vmap(lambda a: fnp.allclose(a, 1.0))(dev(np.array([[1.0, 1.0], [1.0, 2.0]])))
    assert host(rows).tolist() == [True, False]
    assert fnp.allclose(x, x) is True  # a Python bool, as NumPy's, where the values are known


def test_isclose_extremes() -> None:
    check_like_numpy(fnp.isclose, np.isclose, np.array([np.inf, -np.inf, np.inf, np.nan]),
                     np.array([np.inf, np.inf, 1.0, np.nan]), name="isclose", equal_nan=True)
    check_like_numpy(fnp.isclose, np.isclose, np.array([0, 2 ** 63], np.uint64),
                     np.array([2 ** 63, 0], np.uint64), name="isclose", atol=0)
    check_like_numpy(fnp.isclose, np.isclose, np.array([0, 255], np.uint8),
                     np.array([255, 0], np.uint8), name="isclose", atol=0)


# ---------------------------------------------------------------------------------------------
# Reductions with dtype=


STATS = ("sum", "prod", "mean", "var", "std", "cumsum", "cumprod", "nansum", "nanprod",
         "nanmean", "nanvar", "nanstd", "nancumsum", "nancumprod")


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(STATS), st.sampled_from(DTYPES), st.sampled_from(DTYPES),
       hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3), st.data(),
       st.booleans())
def test_statistic_dtype_arg(name: str, src: str, dtype: str, shape: tuple,
                             data: st.DataObject, keepdims: bool) -> None:
    """NumPy's ``dtype=`` rules: the NaN statistics of an inexact array need an inexact dtype
    (TypeError); std with an integer dtype fails for an array result (TypeError) and truncates
    a 0-d one; nanvar's deviations stay in the input's dtype, its sums use ``dtype``."""
    x = data.draw(any_array(src, shape), "x")
    if src != "uint64":
        x = np.where(np.isinf(x), 1, x).astype(src) if x.dtype.kind in "fc" else x
    axis = data.draw(st.sampled_from([None, 0, -1] if x.ndim else [None]), "axis")
    kw = {"axis": axis, "dtype": dtype}
    if "cum" not in name:
        kw["keepdims"] = keepdims
    check_like_numpy(getattr(fnp, name), getattr(np, name), x, name=name,
                     rtol=1e-2 if "float16" in (dtype, src) else None, **kw)


@FEW
@given(st.sampled_from(("sum", "prod", "mean", "max", "min", "argmax", "argmin", "ptp",
                        "cumsum", "median", "var", "sort", "argsort", "any", "all")),
       hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3), st.data())
def test_uint64_reductions(name: str, shape: tuple, data: st.DataObject) -> None:
    x = data.draw(uint64_arrays(shape), "x")
    axis = data.draw(st.sampled_from([None, 0, -1] if x.ndim else [None]), "axis")
    assume(x.size or axis is None or name != "median")
    kw = {} if name in ("sort", "argsort", "cumsum") else {"keepdims": True}
    if name == "argsort":
        kw["kind"] = "stable"
    check_like_numpy(getattr(fnp, name), getattr(np, name), x, name=name, axis=axis, **kw)


# ---------------------------------------------------------------------------------------------
# Sorting with NaNs


NAN_REAL = [np.nan, 1.0, -np.inf, np.inf, -0.0, 0.0, -1.0, 2.0]
NAN_COMPLEX = [complex(np.nan, 1), 1 + 2j, complex(1, np.nan), complex(np.nan, np.nan), 1 + 1j,
               -1j, complex(np.inf, 0), 1 + 1j]


@FEW
@given(st.sampled_from(("float16", "float32", "float64", "complex64", "complex128")),
       st.integers(1, 8), st.sampled_from((None, "stable", "mergesort", "heapsort")),
       st.sampled_from(("sort", "argsort", "argmax", "argmin", "max", "min", "nanmedian",
                        "nanargmax", "nanmax", "median", "unique")), st.data())
def test_sorting_with_nans(dtype: str, n: int, kind, name: str, data: st.DataObject) -> None:
    pool = NAN_COMPLEX if dtype.startswith("complex") else NAN_REAL
    vals = data.draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n), "values")
    x = np.array(vals, dtype).reshape(data.draw(st.sampled_from([(n,), (1, n)])))
    if name in ("sort", "argsort"):
        ref = getattr(np, name)
        if name == "argsort":  # (ties: NumPy's default kind is not stable; funcgrad's is)
            def ref(a, kind=None):
                return np.argsort(a, kind="stable")
        check_like_numpy(getattr(fnp, name), ref, x, name=name, kind=kind)
        return
    if name == "nanargmax":
        assume(not np.all(np.isnan(x)))  # (NumPy raises ValueError: checked eagerly only)
    if name in ("median", "nanmedian") and dtype.startswith("complex"):
        # NumPy takes the mean of the middle element(s) even for one: (inf+0j) / 1 is inf+nanj
        # there, an artefact of complex division that a selection does not reproduce.
        assume(not np.any(np.isinf(x)))
    jit = name != "unique"
    check_like_numpy(getattr(fnp, name), getattr(np, name), x, name=name, jit=jit)


# ---------------------------------------------------------------------------------------------
# Joining with dtype= / casting=, splitting


CASTINGS = (None, "no", "equiv", "safe", "same_kind", "unsafe")


@FEW
@given(st.sampled_from(("concatenate", "concat", "stack", "hstack", "vstack")),
       st.sampled_from(DTYPES),
       st.sampled_from(DTYPES), st.sampled_from((None,) + DTYPES), st.sampled_from(CASTINGS),
       st.data())
def test_join_dtype_casting(name: str, da: str, db: str, dtype, casting,
                            data: st.DataObject) -> None:
    """``casting=`` binds even without ``dtype=`` (NumPy: ``concatenate([int8, float32],
    casting='no')`` raises); a weak Python scalar element is an array (float64) there."""
    shape = data.draw(st.sampled_from([(2,), (2, 3), (0, 2)]), "shape")
    a = data.draw(any_array(da, shape), "a")
    b = data.draw(any_array(db, shape), "b")
    kw = {"dtype": dtype}
    if casting is not None:
        kw["casting"] = casting
    check_like_numpy(lambda x, y, **k: getattr(fnp, name)((x, y), **k),
                     lambda x, y, **k: getattr(np, name)((x, y), **k), a, b, name=name, **kw)


def test_join_bad_casting_name() -> None:
    x = np.zeros(2)
    check_like_numpy(lambda a: fnp.concatenate([a, a], casting="bogus"),
                     lambda a: np.concatenate([a, a], casting="bogus"), x, name="concatenate")


@FEW
@given(st.sampled_from(("split", "array_split")),
       st.one_of(st.integers(1, 5), st.lists(st.integers(-5, 8), max_size=3)),
       st.integers(-3, 2))
def test_split_sections_and_axes(name: str, ios, axis: int) -> None:
    """(An out-of-range axis: NumPy raises IndexError('tuple index out of range'), funcgrad
    its ShapeError, a ValueError, as for every other bad axis: ``loose_errors``.)"""
    x = np.arange(12.0).reshape(3, 4)
    check_like_numpy(getattr(fnp, name), getattr(np, name), x, ios, name=name, axis=axis,
                     jit=isinstance(ios, int), loose_errors=axis in (2, -3))


def test_split_zero_sections() -> None:
    """NumPy raises ZeroDivisionError ('integer modulo by zero'); funcgrad's ValueError
    names the problem (an accepted deviation: both are invalid-input errors)."""
    with pytest.raises(ValueError, match="larger than 0"):
        fnp.split(np.arange(4.0), 0)


# ---------------------------------------------------------------------------------------------
# Products


@FEW
@given(st.sampled_from(("matmul", "dot", "inner", "outer", "tensordot", "kron", "@", "vdot")),
       st.sampled_from(DTYPES), st.sampled_from(DTYPES), st.data())
def test_products_all_dtypes(name: str, da: str, db: str, data: st.DataObject) -> None:
    m = data.draw(st.integers(0, 3), "m")
    k = data.draw(st.integers(0, 3), "k")
    bad = data.draw(st.integers(0, 9), "bad") == 0
    # (no NaN/inf: BLAS may skip multiplying by an exact zero, so NaN * 0 is not reliably NaN)
    a = data.draw(any_array(da, (2, k), special=False), "a")
    bshape = (k if name not in ("inner", "vdot") else m, m) if name != "inner" else (m, k)
    if name == "vdot":
        bshape = (2, k)
    if bad:
        bshape = (k + 1, m)
    b = data.draw(any_array(db, bshape, special=False), "b")
    fn = (lambda x, y: x @ y) if name == "@" else getattr(fnp, name)
    ref = (lambda x, y: x @ y) if name == "@" else getattr(np, name)
    check_like_numpy(fn, ref, a, b, name=name)


@FEW
@given(st.sampled_from(DTYPES), st.sampled_from(("float32", "float64", "complex64", "int8",
                                                 "int64", "uint64", "bool")),
       st.sampled_from(("no", "equiv", "safe", "same_kind", "unsafe")),
       st.sampled_from(("i->", "ij,j->i", "ij->j")))
def test_einsum_dtype_casting(da: str, dtype: str, casting: str, spec: str) -> None:
    """(Specs that are views in NumPy -- ``'ij->ji'``, ``'ii->i'`` -- are left out: NumPy
    returns the view and ignores ``dtype=`` there; funcgrad applies it.)"""
    # (small values: complex infinities from overflow are left out, as elsewhere)
    x = np.array([1, 0, 3], da) if da != "complex128" else np.array([1j, 2, -1 + 1j])
    ops = {"i->": (x,), "ij->j": (np.stack([x, x]),),
           "ij,j->i": (np.stack([x, x, x]), x)}[spec]
    check_like_numpy(lambda *a: fnp.einsum(spec, *a, dtype=dtype, casting=casting),
                     lambda *a: np.einsum(spec, *a, dtype=dtype, casting=casting), *ops,
                     name=f"einsum {spec!r}")


# ---------------------------------------------------------------------------------------------
# Creation


@FEW
@given(st.sampled_from((None,) + DTYPES),
       st.sampled_from([(0, 10, 5), (0.5, 3.5, 4), (-3, 3, 7), (1, 2, 1), (0, 1, 0),
                        (5, -5, 3), (0, 255, 4), (0, 1j, 3)]), st.booleans(), st.booleans())
def test_linspace_dtypes(dtype, args: tuple, endpoint: bool, retstep: bool) -> None:
    check_like_numpy(lambda: fnp.linspace(*args, endpoint=endpoint, retstep=retstep,
                                          dtype=dtype),
                     lambda: np.linspace(*args, endpoint=endpoint, retstep=retstep,
                                         dtype=dtype), name="linspace")


@FEW
@given(st.sampled_from((None,) + DTYPES),
       st.sampled_from([(5,), (1, 5), (0, 1, 0.25), (5, 0, -1), (0, 5, 0), (2.5,),
                        (-3, 3, 2), (0, 10, 3.5), (True,), (0.1, 0.4, 0.1),
                        (np.int8(2), 300), (np.float32(0.5), 3), (np.uint8(1), np.int8(4))]))
def test_arange_dtypes(dtype, args: tuple) -> None:
    check_like_numpy(lambda: fnp.arange(*args, dtype=dtype),
                     lambda: np.arange(*args, dtype=dtype), name="arange")


def test_arange_keywords() -> None:
    """(Deviations: ``arange(stop=5)`` is a TypeError in funcgrad, unlike NumPy 2, and
    ``arange(start=2)`` -- a TypeError in NumPy -- is ``arange(2)``: one signature cannot
    give both NumPy's optional-first-argument forms.)"""
    for kw in ({"start": 1, "stop": 4}, {"start": 1, "stop": 4, "step": 2},
               {"start": 0.5, "stop": 3.0, "dtype": "float32"}):
        check_like_numpy(lambda kw=kw: fnp.arange(**kw), lambda kw=kw: np.arange(**kw),
                         name=f"arange(**{kw})")


@FEW
@given(st.sampled_from((None,) + DTYPES),
       st.sampled_from([1, -1, 2.5, True, 1j, 300, 2 ** 63, np.float32(1.5), np.int8(-3)]),
       st.sampled_from(DTYPES))
def test_full_dtypes(dtype, fill, like: str) -> None:
    check_like_numpy(lambda: fnp.full((2, 2), fill, dtype=dtype),
                     lambda: np.full((2, 2), fill, dtype=dtype), name="full")
    check_like_numpy(lambda x: fnp.full_like(x, fill, dtype=dtype),
                     lambda x: np.full_like(x, fill, dtype=dtype), np.zeros((2,), like),
                     name="full_like")


@FEW
@given(st.sampled_from(("eye", "tri")), st.integers(0, 4),
       st.one_of(st.none(), st.integers(0, 4)), st.integers(-5, 5),
       st.sampled_from(DTYPES))
def test_eye_tri_dtypes(name: str, n: int, m, k: int, dtype: str) -> None:
    check_like_numpy(lambda: getattr(fnp, name)(n, m, k, dtype=dtype),
                     lambda: getattr(np, name)(n, m, k, dtype=dtype), name=name)


@pytest.mark.parametrize("call", [
    lambda m: m.eye(-1), lambda m: m.eye(2.5), lambda m: m.zeros(-1),
    lambda m: m.zeros((2, 2.0)), lambda m: m.arange(0, 10, 0), lambda m: m.linspace(0, 1, -1),
    lambda m: m.linspace(0, 1, 2.5), lambda m: m.arange(np.inf), lambda m: m.arange(),
], ids=["eye-neg", "eye-float", "zeros-neg", "zeros-float", "arange-step0", "linspace-neg",
        "linspace-float", "arange-inf", "arange-none"])
def test_creation_errors(call) -> None:
    _, err = numpy_result(call, (np,), {})
    assert err is not None
    assert_raises_like(err, lambda: call(fnp), "creation")


# ---------------------------------------------------------------------------------------------
# astype, where, clip, take with uint64


@FEW
@given(st.sampled_from(DTYPES), st.sampled_from(DTYPES),
       hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3), st.data())
def test_astype_all_pairs(src: str, dst: str, shape: tuple, data: st.DataObject) -> None:
    x = data.draw(any_array(src, shape), "x")
    if x.dtype.kind in "fc" and np.dtype(dst).kind in "iu":
        # (float -> int of NaN, inf or out-of-range values is undefined in C)
        x = np.where(np.isfinite(x), x, 1).astype(src)
    check_like_numpy(fnp.astype, np.astype, x, dst, name="astype", vmap=True)
    check_like_numpy(lambda a: a.astype(dst), lambda a: a.astype(dst), x, name="x.astype")


@FEW
@given(st.sampled_from(DTYPES), st.sampled_from(DTYPES), st.data())
def test_where_clip_uint64(da: str, db: str, data: st.DataObject) -> None:
    shape = data.draw(st.sampled_from([(), (3,), (2, 3), (0, 3)]), "shape")
    c = data.draw(arrays(np.dtype("bool"), shape), "cond")
    a = data.draw(uint64_arrays(shape), "a")
    b = data.draw(st.one_of(any_array(db, shape[-1:]), weak_scalars("bif")), "b")
    check_like_numpy(fnp.where, np.where, c, a, b, name="where")
    if db.startswith("complex") or isinstance(b, complex):
        return
    lo = data.draw(st.sampled_from([None, 0, 3, 2 ** 63]), "lo")
    check_like_numpy(fnp.clip, np.clip, a, lo, 2 ** 64 - 2, name="clip")


@FEW
@given(st.sampled_from(INT_DTYPES), st.sampled_from((None, "clip", "wrap")), st.data())
def test_take_index_dtypes(idx_dtype: str, mode, data: st.DataObject) -> None:
    x = np.arange(12.0).reshape(3, 4)
    axis = data.draw(st.sampled_from([None, 0, 1, -1]), "axis")
    n = x.size if axis is None else x.shape[axis]
    lim = n + 2 if mode else n - 1
    low = 0 if idx_dtype[0] == "u" else (-lim if mode else -n)
    idx = np.array(data.draw(st.lists(st.integers(low, lim), max_size=4), "idx"), idx_dtype)
    check_like_numpy(fnp.take, np.take, x, idx, name="take", axis=axis, mode=mode)
    if axis is not None and mode is None:
        ind = np.expand_dims(idx, 1 - axis % 2) if idx.size else np.zeros((1, 1), idx_dtype)
        check_like_numpy(fnp.take_along_axis, np.take_along_axis, x, ind, axis,
                         name="take_along_axis")


# ---------------------------------------------------------------------------------------------
# Errors NumPy raises: funcgrad raises one of the same family, eagerly and under jit


ERROR_CASES = [
    ("reshape(-2, -1)", lambda m, x: m.reshape(x, (-2, -1))),
    ("reshape(5, -1)", lambda m, x: m.reshape(x, (5, -1))),
    ("transpose dup", lambda m, x: m.transpose(x, (1, 1))),
    ("transpose short", lambda m, x: m.transpose(x, (0,))),
    ("moveaxis oob", lambda m, x: m.moveaxis(x, 0, 2)),
    ("swapaxes oob", lambda m, x: m.swapaxes(x, 0, 5)),
    ("squeeze non-1", lambda m, x: m.squeeze(x, 0)),
    ("expand_dims dup", lambda m, x: m.expand_dims(x, (0, 0))),
    ("broadcast_to", lambda m, x: m.broadcast_to(x, (4,))),
    ("sum axis", lambda m, x: m.sum(x, axis=2)),
    ("sum dup axes", lambda m, x: m.sum(x, axis=(0, -2))),
    ("mean float axis", lambda m, x: m.mean(x, axis=1.0)),
    ("cumsum tuple axis", lambda m, x: m.cumsum(x, axis=(0, 1))),
    ("argmax axis", lambda m, x: m.argmax(x, axis=-3)),
    ("sort axis", lambda m, x: m.sort(x, axis=2)),
    ("concatenate shapes", lambda m, x: m.concatenate([x, m.ones((3, 2))])),
    ("concatenate axis", lambda m, x: m.concatenate([x, x], axis=2)),
    ("concatenate 0-d", lambda m, x: m.concatenate([x[0, 0], x[0, 0]])),
    ("stack shapes", lambda m, x: m.stack([x, x.T])),
    ("stack axis", lambda m, x: m.stack([x, x], axis=3)),
    ("add shapes", lambda m, x: m.add(x, m.ones(4))),
    ("matmul shapes", lambda m, x: m.matmul(x, x)),
    ("dot shapes", lambda m, x: m.dot(x, x)),
    ("tensordot axes", lambda m, x: m.tensordot(x, x, axes=([0], [1]))),
    ("einsum shapes", lambda m, x: m.einsum("ij,jk", x, x)),
    ("take oob", lambda m, x: m.take(x, 6)),
    ("take axis", lambda m, x: m.take(x, 0, axis=2)),
    ("take_along_axis ndim", lambda m, x: m.take_along_axis(x, m.zeros(2, "int64"), 0)),
    ("split unequal", lambda m, x: m.split(x, 2, axis=1)),
    ("where shapes", lambda m, x: m.where(x > 0, x, m.ones(4))),
    ("clip shapes", lambda m, x: m.clip(x, m.zeros(4), 1)),
    ("bitwise_and float", lambda m, x: m.bitwise_and(x, x)),
    ("left_shift float", lambda m, x: m.left_shift(x, 1)),
    ("invert float", lambda m, x: m.invert(x)),
    ("remainder complex", lambda m, x: m.remainder(x + 1j, 2)),
    ("floor_divide complex", lambda m, x: m.floor_divide(x, 1j)),
    ("var ddof str", lambda m, x: m.var(x, ddof="1")),
    ("linspace num", lambda m, x: m.linspace(x, x, -1)),
    ("isclose shapes", lambda m, x: m.isclose(x, m.ones(4))),
    ("reshape size", lambda m, x: m.reshape(x, (4, 2))),
    ("nanmean int dtype", lambda m, x: m.nanmean(x, dtype="int64")),
    ("nanvar bool dtype", lambda m, x: m.nanvar(x, axis=0, dtype="bool")),
    ("std int dtype", lambda m, x: m.std(x, axis=0, dtype="int32")),
    ("einsum unsafe cast", lambda m, x: m.einsum("ij->", x, dtype="int8")),
    ("concatenate casting", lambda m, x: m.concatenate([x, x.astype("int8")], casting="no")),
]


@pytest.mark.parametrize("case", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_errors_like_numpy(case) -> None:
    name, call = case
    x = np.arange(6.0).reshape(2, 3) - 2.5
    _, err = numpy_result(lambda a: call(np, a), (x,), {})
    assert err is not None, f"{name}: NumPy no longer raises"
    assert_raises_like(err, lambda: call(fnp, dev(x)), name)
    assert_raises_like(err, lambda: funcgrad.jit(lambda a: call(fnp, a))(dev(x)), "jit " + name)


# ---------------------------------------------------------------------------------------------
# jit equals eager, on a subset of the above with random inputs


JIT_FUNCS = {
    "floor_divide": (fnp.floor_divide, 2), "remainder": (fnp.remainder, 2),
    "power": (fnp.power, 2), "sum_dtype": (lambda a: fnp.sum(a, dtype="int8"), 1),
    "mean_f32": (lambda a: fnp.mean(a, axis=-1, dtype="float32"), 1),
    "nanstd": (lambda a: fnp.nanstd(a, axis=0, ddof=1), 1),
    "round2": (lambda a: fnp.round(a, 2), 1), "round-1": (lambda a: fnp.around(a, -1), 1),
    "clip": (lambda a: fnp.clip(a, 1, 3), 1), "sort": (lambda a: fnp.sort(a, axis=0), 1),
    "argsort": (lambda a: fnp.argsort(a, axis=-1, stable=True), 1),
    "cumprod": (lambda a: fnp.cumprod(a, axis=0, dtype="float32"), 1),
    "isclose": (fnp.isclose, 2), "argmax": (lambda a: fnp.argmax(a, axis=0), 1),
    "where": (lambda a, b: fnp.where(a > b, a, b), 2), "maximum": (fnp.maximum, 2),
    "concat": (lambda a, b: fnp.concatenate([a, b], axis=0), 2),
    "astype_u8": (lambda a: a.astype("uint8"), 1),
}


@expected_fp_warnings
@settings(max_examples=60, deadline=None)
@given(st.sampled_from(tuple(JIT_FUNCS)), st.sampled_from(DTYPES), st.sampled_from(DTYPES),
       st.sampled_from([(2, 3), (1, 3), (0, 3)]), st.data())
def test_jit_equals_eager(name: str, da: str, db: str, shape: tuple,
                          data: st.DataObject) -> None:
    fn, nargs = JIT_FUNCS[name]
    args = [data.draw(any_array(da, shape), "a"), data.draw(any_array(db, shape), "b")][:nargs]
    if name == "astype_u8":
        x = args[0]
        if x.dtype.kind in "fc":
            args[0] = np.where(np.isfinite(x) & (x.real >= 0), x, 1).astype(da)
    dargs = dev(tuple(args))
    try:
        eager = fn(*dargs)
    except Exception as e:  # noqa: BLE001 - then jit must raise alike
        assert_raises_like(e, lambda: funcgrad.jit(fn)(*dargs), f"jit {name}")
        return
    from tests.funcgrad.numpy import assert_same, host
    assert_same(funcgrad.jit(fn)(*dargs), host(eager), f"jit {name} vs eager")


# ---------------------------------------------------------------------------------------------
# Regressions found by this module


def test_reshape_any_negative_is_unknown_under_jit() -> None:
    x = np.arange(12.0)
    check_like_numpy(fnp.reshape, np.reshape, x, (-5, 6), name="reshape")
    check_like_numpy(fnp.reshape, np.reshape, x, (-2, -1), name="reshape")


def test_nanvar_complex_input_real_dtype() -> None:
    """The deviations stay complex (NumPy subtracts in place into the input); only the sums
    are in ``dtype``."""
    x = np.array([[1 + 2j, np.nan, 3 - 1j], [2j, 1, complex(np.nan, 0)]], np.complex64)
    for name in ("nanvar", "nanstd"):
        check_like_numpy(getattr(fnp, name), getattr(np, name), x, name=name, axis=1,
                         dtype="float32")
        check_like_numpy(getattr(fnp, name), getattr(np, name), x, name=name, axis=None,
                         dtype="complex128")


def test_nanmedian_complex() -> None:
    x = np.array([[1 + 2j, complex(np.nan, 1), 3 - 1j, 2 + 0j], [np.nan, np.nan, 1j, 1]])
    for axis in (None, 0, 1):
        check_like_numpy(fnp.nanmedian, np.nanmedian, x, name="nanmedian", axis=axis)


@pytest.mark.parametrize("name", ["sinc", "i0"])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_sinc_i0_float16(name: str, dtype: str) -> None:
    """float16 stays float16 (i0), and sinc(0) is 1 there too (a 1e-20 stand-in for 0 would
    underflow to 0 in float16)."""
    x = np.array([-2.5, -0.0, 0.0, 0.5, 1.0, 9.0], dtype)
    check_like_numpy(getattr(fnp, name), getattr(np, name), x, name=name)


@pytest.mark.parametrize("call", [
    lambda m, x: m.sum(x, axis=2), lambda m, x: m.cumsum(x, axis=-3),
    lambda m, x: m.moveaxis(x, 2, 0), lambda m, x: m.fft.fft(x, axis=2),
    lambda m, x: m.concatenate([x, x], axis=2), lambda m, x: m.take(x, 0, axis=2),
    lambda m, x: m.sort(x, axis=2), lambda m, x: m.linalg.norm(x, axis=2),
    lambda m, x: m.argmax(x, axis=-3), lambda m, x: m.quantile(x, 0.5, axis=2),
    lambda m, x: m.unique(x, axis=2), lambda m, x: m.partition(x[0, 0], 0, axis=0),
    lambda m, x: m.take_along_axis(x, x.astype(int), axis=2),
], ids=lambda c: "")
@pytest.mark.parametrize("traced", [False, True])
def test_axis_out_of_range_is_numpys_axis_error(call, traced: bool) -> None:
    """An out-of-range axis raises NumPy's AxisError (a ValueError and an IndexError), which
    NumPy code catches, eagerly and under jit."""
    x = np.zeros((2, 2))
    with pytest.raises(IndexError):  # (NumPy's fft raises a plain IndexError)
        call(np, x)
    run = funcgrad.jit(lambda v: call(fnp, v)) if traced else (lambda v: call(fnp, v))
    with pytest.raises(np.exceptions.AxisError, match="out of bounds"):
        run(dev(x))


@pytest.mark.parametrize("call", [
    lambda m, x: m.fft.irfft(x), lambda m, x: m.fft.irfft(x, n=5, axis=0),
    lambda m, x: m.fft.hfft(x), lambda m, x: m.fft.irfftn(x, axes=(0,)),
    lambda m, x: m.fft.irfft2(x), lambda m, x: m.fft.rfft(x), lambda m, x: m.fft.fft(x),
], ids=lambda c: "")
def test_fft_of_float16_result_dtypes(call) -> None:
    """A one-axis inverse real transform of float16 input is float16 in NumPy (it computes
    in single precision and casts back); complex results are complex64."""
    x = np.array([[1.0, 0.5, -2.0], [0.25, 3.0, 1.0]], np.float16)
    # (NumPy's normalisation factor is rounded to float16 too: compare loosely)
    check_like_numpy(lambda v: call(fnp, v), lambda v: call(np, v), x, rtol=2e-3, name="fft")


@pytest.mark.parametrize("da,db", [("int8", "float32"), ("uint8", "int8"), ("bool", "int32"),
                                   ("float32", "float64")])
@pytest.mark.parametrize("return_indices", [False, True])
def test_intersect1d_promotes(da: str, db: str, return_indices: bool) -> None:
    """NumPy intersects the concatenated inputs: the values have the promoted dtype."""
    a = np.array([3, 1, 2, 3, 5, 1]).astype(da)
    b = np.array([1, 4, 5, 5]).astype(db)
    check_like_numpy(fnp.intersect1d, np.intersect1d, a, b, return_indices=return_indices,
                     jit=False, name="intersect1d")


def test_concat_takes_numpys_arguments() -> None:
    """``concat`` is NumPy 2's alias of ``concatenate``: positional ``axis``, ``dtype=``."""
    a, b = np.ones((2, 2), np.int8), np.zeros((1, 2), np.float32)
    check_like_numpy(lambda x, y: fnp.concat((x, y), 0, dtype=np.float64),
                     lambda x, y: np.concat((x, y), 0, dtype=np.float64), a, b, name="concat")
    check_like_numpy(lambda x, y: fnp.concat((x, y), axis=None, casting="unsafe",
                                             dtype=np.uint8),
                     lambda x, y: np.concat((x, y), axis=None, casting="unsafe",
                                            dtype=np.uint8), a, b, name="concat")


@pytest.mark.parametrize("call", [
    lambda m, x: m.unwrap(x), lambda m, x: m.unwrap(x, axis=0, period=3),
    lambda m, x: m.gradient(x), lambda m, x: m.ediff1d(x), lambda m, x: m.diff(x),
    lambda m, x: m.ediff1d(x, to_end=np.array([True])),
], ids=lambda c: "")
def test_bool_differences(call) -> None:
    """Bools: diff (and unwrap, built on it) compares neighbours; ediff1d and gradient
    subtract, which NumPy refuses for bools (TypeError)."""
    x = np.array([[True, False, True, True], [False, False, True, False]])
    check_like_numpy(lambda a: call(fnp, a), lambda a: call(np, a), x, name="bool diff")


def test_vecdot_float16_accumulates_in_float32() -> None:
    # NumPy's half-precision dot products accumulate in float32 and round once: products and
    # sums rounded to float16 give -62.34 here where NumPy (and jnp.vecdot) give -62.3.
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 3000)).astype(np.float16)
    b = rng.standard_normal((3, 3000)).astype(np.float16)
    want = np.vecdot(a, b)
    for got in (fnp.vecdot(dev(a), dev(b)), fnp.linalg.vecdot(dev(a), dev(b)),
                funcgrad.jit(fnp.vecdot)(dev(a), dev(b))):
        assert host(got).dtype == np.float16
        np.testing.assert_array_equal(host(got), want)
    assert float(host(fnp.vecdot(dev(a[0]), dev(b[0])))) == float(np.dot(a[0], b[0]))


@pytest.mark.parametrize("fn", [
    lambda x, i: x[i:3], lambda x, i: x[::i], lambda x, i: fnp.round(x, i),
    lambda x, i: fnp.sum(x, axis=i), lambda x, i: fnp.flip(x, (i,)),
    lambda x, i: fnp.concatenate([x, x], i), lambda x, i: fnp.take(x, 0, i),
    lambda x, i: fnp.moveaxis(x, i, 0),
])
def test_traced_static_arguments_raise_concretization_errors(fn):
    # a traced slice bound, axis or decimals: the standard error naming the argument and the
    # fixes (it was "must be an integer, got StagingTracer"); a constant one still works
    with pytest.raises(funcgrad.errors.ConcretizationError, match="needs a concrete value"):
        funcgrad.jit(fn)(dev(np.ones((4, 4))), 1)
    funcgrad.jit(lambda x: fn(x, fnp.asarray(0) + 1))(dev(np.ones((4, 4))))


@pytest.mark.parametrize("fn", [
    lambda m, x, i: m.pad(x, ((i, 0), (0, i))), lambda m, x, i: m.unwrap(x, axis=i),
    lambda m, x, i: x[[i, 0]], lambda m, x, i: m.sum(x, axis=i),
    lambda m, x, i: m.round(x / 7, i), lambda m, x, i: m.take(x, 0, i),
    lambda m, x, i: m.cumsum(x, axis=i), lambda m, x, i: m.expand_dims(x, (i,)),
], ids=["pad", "unwrap", "list-index", "sum", "round", "take", "cumsum", "expand_dims"])
def test_0d_device_integers_as_static_arguments(fn, request):
    # NumPy (and JAX) take a concrete 0-d integer array where an int is meant; CuPy's arrays
    # have no __index__ (nor have the strict backend's): on the GPU these raised TypeError
    x = np.arange(12.0).reshape(3, 4)
    want = fn(np, x, np.asarray(1))
    i = fnp.asarray(1, device=funcgrad.backend.device_of(dev(x)))
    if request.node.callspec.id != "list-index":  # (eagerly, the device array's own indexing)
        np.testing.assert_allclose(host(fn(fnp, dev(x), i)), want)
    np.testing.assert_allclose(host(funcgrad.jit(lambda v: fn(fnp, v, i))(dev(x))), want)
