"""Elementwise functions, ``where`` and ``clip``: funcgrad.numpy against NumPy.

Every pair of dtypes, broadcasting shapes (0-d and size-0 included), NEP 50 weak Python
scalars on either side, NaN/inf/-0.0; eager, under ``jit`` and under ``vmap``.
"""

from __future__ import annotations

import operator

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad
import funcgrad.numpy as fnp
from tests.funcgrad.numpy import (
    ALL_DTYPES,
    REAL_DTYPES,
    arrays,
    check_like_numpy,
    weak_scalars,
)
from tests.helpers import dev, host

UNARY = (
    "abs", "absolute", "negative", "positive", "sign", "exp", "exp2", "expm1", "log", "log2",
    "log10", "log1p", "sqrt", "cbrt", "square", "reciprocal", "sin", "cos", "tan", "arcsin",
    "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "floor", "ceil",
    "trunc", "rint", "round", "isnan", "isinf", "isfinite", "signbit", "conj", "conjugate",
    "real", "imag", "angle", "logical_not", "invert", "bitwise_not", "fabs", "deg2rad",
    "rad2deg", "degrees", "radians", "sinc", "fix", "nan_to_num",
)
BINARY = (
    "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "remainder", "mod",
    "fmod", "power", "float_power", "maximum", "minimum", "fmax", "fmin", "arctan2", "hypot",
    "copysign", "logaddexp", "logaddexp2", "equal", "not_equal", "less", "less_equal",
    "greater", "greater_equal", "logical_and", "logical_or", "logical_xor", "bitwise_and",
    "bitwise_or", "bitwise_xor", "left_shift", "right_shift", "heaviside", "divmod",
)


@given(st.sampled_from(UNARY), st.sampled_from(ALL_DTYPES), hnp.array_shapes(
    min_dims=0, max_dims=3, min_side=0, max_side=3), st.data())
def test_unary(name: str, dtype: str, shape: tuple, data: st.DataObject) -> None:
    x = data.draw(arrays(np.dtype(dtype), shape), "x")
    check_like_numpy(getattr(fnp, name), getattr(np, name), x, name=name, vmap=True)


@st.composite
def broadcast_pair(draw):
    shape_a, shape_b = draw(hnp.mutually_broadcastable_shapes(
        num_shapes=2, min_dims=0, max_dims=3, min_side=0, max_side=3)).input_shapes
    if draw(st.integers(0, 9)) == 0:  # incompatible shapes: NumPy raises
        shape_b = shape_b + (5,)
    return shape_a, shape_b


def _safe_shift(name: str, *ops) -> None:
    # Shifts by >= the bit width or by negative counts are undefined in C; NumPy's answer is
    # whatever the CPU gives.
    if name in ("left_shift", "right_shift"):
        b = ops[1]
        assume(not np.any(np.asarray(b) < 0))


@given(st.sampled_from(BINARY), st.sampled_from(ALL_DTYPES), st.sampled_from(ALL_DTYPES),
       broadcast_pair(), st.data())
def test_binary(name: str, da: str, db: str, shapes: tuple, data: st.DataObject) -> None:
    a = data.draw(arrays(np.dtype(da), shapes[0]), "a")
    b = data.draw(arrays(np.dtype(db), shapes[1]), "b")
    _safe_shift(name, a, b)
    check_like_numpy(getattr(fnp, name), getattr(np, name), a, b, name=name, vmap=True,
                     loose_errors=shapes[1][-1:] == (5,))


@given(st.sampled_from(BINARY), st.sampled_from(ALL_DTYPES),
       hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3), weak_scalars(),
       st.booleans(), st.data())
def test_binary_weak_scalar(name: str, dtype: str, shape: tuple, s: object, scalar_first: bool,
                            data: st.DataObject) -> None:
    """NEP 50: a Python scalar takes the array's dtype when its kind fits."""
    x = data.draw(arrays(np.dtype(dtype), shape), "x")
    args = (s, x) if scalar_first else (x, s)
    _safe_shift(name, *args)
    check_like_numpy(getattr(fnp, name), getattr(np, name), *args, name=name, vmap=True,
                     trace_scalars=True)


NUMPY_SCALARS = st.sampled_from([np.float32(1.5), np.float16(-2), np.float64(0.5), np.int8(-3),
                                 np.uint8(2), np.int64(4), np.bool_(True), np.complex64(1j)])


@given(st.sampled_from(BINARY), st.sampled_from(ALL_DTYPES),
       hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3), NUMPY_SCALARS,
       st.booleans(), st.data())
def test_binary_numpy_scalar(name: str, dtype: str, shape: tuple, s: object,
                             scalar_first: bool, data: st.DataObject) -> None:
    """NumPy scalars are strong operands (NumPy 2): ``float32_array * np.float64(2)`` is
    float64."""
    x = data.draw(arrays(np.dtype(dtype), shape), "x")
    args = (s, x) if scalar_first else (x, s)
    _safe_shift(name, *args)
    check_like_numpy(getattr(fnp, name), getattr(np, name), *args, name=name, vmap=True)


@given(st.sampled_from(BINARY + UNARY), weak_scalars(), weak_scalars())
def test_python_scalars_only(name: str, a: object, b: object) -> None:
    assume(not (name in ("real", "imag") and type(a) is bool))  # NumPy: False.real is int 0
    args = (a,) if name in UNARY else (a, b)
    _safe_shift(name, *args)
    check_like_numpy(getattr(fnp, name), getattr(np, name), *args, name=name,
                     trace_scalars=True)


@given(st.sampled_from(("add", "multiply", "maximum", "equal", "exp", "negative")),
       st.lists(st.one_of(st.integers(-3, 3), st.floats(-3, 3, width=32)), max_size=3))
def test_list_inputs(name: str, v: list) -> None:
    args = (v,) if name in ("exp", "negative") else (v, v)
    check_like_numpy(getattr(fnp, name), getattr(np, name), *args, name=name)


@given(st.sampled_from(ALL_DTYPES), st.sampled_from(ALL_DTYPES), broadcast_pair(),
       st.data())
def test_where(da: str, db: str, shapes: tuple, data: st.DataObject) -> None:
    cshape = data.draw(st.sampled_from([(), shapes[0][-1:], shapes[1][-1:]]), "cond shape")
    c = data.draw(arrays(np.dtype(data.draw(st.sampled_from(("bool", "int8", "float32")))),
                         cshape), "cond")
    a = data.draw(st.one_of(arrays(np.dtype(da), shapes[0]), weak_scalars()), "x")
    b = data.draw(st.one_of(arrays(np.dtype(db), shapes[1]), weak_scalars()), "y")
    check_like_numpy(fnp.where, np.where, c, a, b, name="where", vmap=True)


@given(st.sampled_from(tuple(d for d in REAL_DTYPES if d != "bool")),
       st.sampled_from(tuple(d for d in REAL_DTYPES if d != "bool")),
       hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3), st.data())
def test_clip(da: str, db: str, shape: tuple, data: st.DataObject) -> None:
    x = data.draw(arrays(np.dtype(da), shape), "x")

    def bound():
        return st.one_of(st.none(), st.sampled_from([0, 1, 2, 0.5, 3.5]),
                         arrays(np.dtype(db), shape[-1:]))

    lo, hi = data.draw(bound(), "lo"), data.draw(bound(), "hi")
    check_like_numpy(fnp.clip, np.clip, x, lo, hi, name="clip", vmap=True)


@given(st.sampled_from(ALL_DTYPES), st.sampled_from(ALL_DTYPES + (None,)),
       hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3), st.data())
def test_operators_traced(da: str, db: str | None, shape: tuple, data: st.DataObject) -> None:
    """Tracer operators (``+ - * / // % ** < == & | ^ ~ -x abs``) match ndarray's."""
    a = data.draw(arrays(np.dtype(da), shape), "a")
    b = data.draw(arrays(np.dtype(db), shape) if db else weak_scalars(), "b")
    op = data.draw(st.sampled_from([
        lambda x, y: x + y, lambda x, y: y - x, lambda x, y: x * y, lambda x, y: x / y,
        lambda x, y: x // y, lambda x, y: x % y, lambda x, y: x < y, lambda x, y: y >= x,
        lambda x, y: x == y, lambda x, y: x != y, lambda x, y: x & y, lambda x, y: y | x,
        lambda x, y: x ^ y, lambda x, y: -x, lambda x, y: abs(x), lambda x, y: ~x,
        lambda x, y: x ** 2, lambda x, y: 2.0 ** x,
    ]), "op")
    # traced only: the device arrays' own operators are the library's (CuPy orders complex
    # numbers without NumPy's NaN rule, say)
    check_like_numpy(funcgrad.jit(op), op, a, b, jit=False, name="jit operator")


# -- regressions ---------------------------------------------------------------------------------


def test_out_of_range_python_int() -> None:
    check_like_numpy(fnp.add, np.add, np.array([1, 2], np.uint8), -1, name="add")
    check_like_numpy(fnp.add, np.add, np.array([1, 2], np.int8), 300, name="add")


def test_integer_negative_power() -> None:
    check_like_numpy(fnp.power, np.power, np.array([1, 2]), -1, name="power")


def test_clip_unsigned_negative_bound() -> None:
    check_like_numpy(fnp.clip, np.clip, np.array([1, 2], np.uint8), -1, 1, name="clip")


@pytest.mark.parametrize("bounds", [(), (None, 2), ([2, 2, 2], None), (None, None)])
def test_clip_list_input_with_missing_bounds(bounds: tuple) -> None:
    # A list operand beside an absent (None) bound: a TypeError about NoneType before.
    check_like_numpy(fnp.clip, np.clip, [1, 2, 3], *bounds, name="clip")


def test_traced_complex_astype_bool() -> None:
    check_like_numpy(lambda x: x.astype(bool), lambda x: x.astype(bool),
                     np.array([1j, 0, 1], np.complex64), name="x.astype(bool)")


def test_clip_three_way_promotion() -> None:
    check_like_numpy(fnp.clip, np.clip, np.array([1, 2], np.int8), 0.5,
                     np.array([3, 3], np.float16), name="clip")


def test_clip_unsigned_one_sided_out_of_range() -> None:
    x = np.array([0, 5, 200], np.uint8)
    check_like_numpy(fnp.clip, np.clip, x, -1, None, name="clip")
    check_like_numpy(fnp.clip, np.clip, x, None, 300, name="clip")
    # a bound that would clip everything to an unrepresentable value: NumPy's OverflowError
    check_like_numpy(fnp.clip, np.clip, x, 300, None, name="clip")
    check_like_numpy(fnp.clip, np.clip, x, -5, -1, name="clip")


@pytest.mark.parametrize("other", [2**64, -(2**64), 10**300])
def test_python_ints_beyond_64_bits_beside_floats(other: int) -> None:
    # NumPy converts the Python int to the float operand's dtype (float16 + 2**64 is inf);
    # CuPy holds every Python int as an int64 (uint64) first and raised OverflowError, as
    # the strict backend now does
    x = np.array([np.nan, -0.0, 65504.0, 1.0], np.float16)
    check_like_numpy(lambda a: fnp.add(a, other), lambda a: np.add(a, other), x, name="add")
    check_like_numpy(lambda a: fnp.less(other, a), lambda a: np.less(other, a), x, name="less")
    for op in (lambda a: a * other, lambda a: other - a, lambda a: a >= other,
               lambda a: fnp.sum(a) - other, lambda a: a ** other):
        check_like_numpy(funcgrad.jit(op), op, x.astype(np.float64), jit=False, name="jit op")
    # beside integers alone NumPy refuses it too
    check_like_numpy(lambda a: fnp.add(a, other), lambda a: np.add(a, other),
                     np.array([1, 2], np.int64), name="add")


@pytest.mark.parametrize("a,b", [(False, False), (True, False), (True, 2.5), (False, 0.0),
                                 (True, True)])
@pytest.mark.parametrize("name", ["true_divide", "add", "multiply", "subtract"])
def test_traced_python_bools(name: str, a: bool, b: object) -> None:
    """Python bools traced by jit are strong bools at run time, not NumPy scalars:
    ``False / False`` is NumPy's nan, not Python's ZeroDivisionError."""
    check_like_numpy(getattr(fnp, name), getattr(np, name), a, b, name=name,
                     trace_scalars=True)


def test_clip_gradient_at_a_bound_is_jax_s() -> None:
    # jnp.clip is minimum(maximum(x, lo), hi): a tie splits the gradient half/half between
    # the value and the bound (JAX 0.10.2: 0.5 at either bound, 0.25 for nn.sparse_sigmoid
    # at -1); lax.clamp's 0 at ties stays lax.clamp's.
    x = dev(np.array([-1.0, 0.0, 1.0, 2.0, 3.0]))
    g = funcgrad.vmap(funcgrad.grad(lambda v: fnp.clip(v, 0.0, 2.0)))(x)
    np.testing.assert_array_equal(host(g), [0.0, 0.5, 1.0, 0.5, 0.0])
    assert float(funcgrad.grad(lambda lo: fnp.clip(1.0, lo, 2.0))(1.0)) == 0.5
    assert float(funcgrad.grad(lambda hi: fnp.clip(3.0, 1.0, hi))(2.0)) == 1.0
    assert float(funcgrad.grad(lambda lo: fnp.clip(3.0, lo, 2.0))(5.0)) == 0.0
    assert float(funcgrad.grad(funcgrad.nn.sparse_sigmoid)(-1.0)) == 0.25
    assert float(funcgrad.grad(lambda v: funcgrad.lax.clamp(0.0, v, 2.0))(0.0)) == 0.0


def test_python_complex_scalars_give_arrays():
    # a ufunc of Python complex scalars alone is a 0-d complex128 array, as for floats (the
    # strong() check compared with the complex primitive's wrapper, not the builtin type)
    for got, want in [(fnp.add(1j, 2), 2 + 1j), (fnp.multiply(1j, 1j), -1 + 0j),
                      (fnp.divide(1j, 2), 0.5j), (fnp.subtract(1j, 1), -1 + 1j)]:
        assert hasattr(got, "shape") and got.shape == () and got.dtype == np.complex128
        assert complex(host(got)) == want


def test_negated_complex_product_keeps_signed_zeros():
    # -(c * y) with a complex constant c is not rewritten to (-c) * y under jit: that
    # changes the sign of a zero part (here NumPy's real part is -0.0)
    y = dev(np.array([1 + 2j, -3j]))
    got = host(funcgrad.jit(lambda v: -((2 + 1j) * v))(y))
    want = -((2 + 1j) * np.array([1 + 2j, -3j]))
    np.testing.assert_array_equal(np.signbit(got.real), np.signbit(want.real))
    np.testing.assert_array_equal(got, want)


def test_real_imag_conj_of_bools_eager_and_traced():
    # A Python bool eagerly is NumPy's: True.real is the int 1 (bool.real is an int). Traced by
    # jit it is a strong bool array (see test_traced_python_bools), whose real part is itself,
    # as np.real(np.array(True)) and jnp.real(True) under jax.jit; conj of a bool array is
    # NumPy's int8 ufunc loop in both.
    assert fnp.real(True) == 1 and type(fnp.real(True)) is int
    assert int(host(fnp.imag(True))) == 0 and host(fnp.imag(True)).dtype.kind == "i"
    for fn, want, dt in [(fnp.real, [True, False], np.bool_), (fnp.imag, [False, False], np.bool_),
                         (fnp.conj, [1, 0], np.int8)]:
        got = host(funcgrad.jit(fn)(True))
        assert got.dtype == dt and got.shape == () and got == want[0]
        got = host(fn(dev(np.array([True, False]))))
        assert got.dtype == dt and got.tolist() == want


def test_fmax_fmin_ties_send_the_gradient_to_the_second_argument():
    # jnp.fmax is where((x1 > x2) | isnan(x2), x1, x2) (fmin with <): a tie's gradient all goes
    # to x2 (JAX 0.10.2), unlike maximum's 1/2 each; the value there is NumPy's (x2: -0.0 for
    # fmax(0.0, -0.0))
    a = dev(np.array([1.0, 2.0, 3.0, np.nan, 1.0, np.nan, 0.0]))
    b = dev(np.array([1.0, 1.0, 4.0, 1.0, np.nan, np.nan, -0.0]))
    want = {("fmax", 0): [0, 1, 0, 0, 1, 1, 0], ("fmax", 1): [1, 0, 1, 1, 0, 0, 1],
            ("fmin", 0): [0, 0, 1, 0, 1, 1, 0], ("fmin", 1): [1, 1, 0, 1, 0, 0, 1]}
    for (name, arg), w in want.items():
        fn = getattr(fnp, name)
        g = funcgrad.grad(lambda x, y, fn=fn: fnp.sum(fn(x, y)), argnums=arg)
        np.testing.assert_array_equal(host(g(a, b)), w)
        np.testing.assert_array_equal(host(funcgrad.jit(g)(a, b)), w)
    assert np.signbit(host(fnp.fmax(dev(np.array(0.0)), dev(np.array(-0.0)))))
    np.testing.assert_array_equal(host(fnp.maximum(a, b)), np.maximum(host(a), host(b)))
    assert float(funcgrad.grad(fnp.maximum)(1.0, 1.0)) == 0.5


@pytest.mark.parametrize("name", ["less", "less_equal", "greater", "greater_equal"])
def test_complex_order_with_nan_imaginary_parts(name: str) -> None:
    # NumPy orders complex numbers by real part unless an imaginary part is NaN, then by
    # imaginary part: -1 < 0+nanj is False; CuPy's order has no NaN rule (True on the GPU),
    # as the strict backend's now has not either
    a = np.array([-1.0, 0.0, 1.0, np.nan, 2.0], np.float16)
    b = np.array([complex(0, np.nan), 0j, complex(1, 2), 1j, complex(np.nan, 0)], np.complex64)
    op = {"less": operator.lt, "less_equal": operator.le, "greater": operator.gt,
          "greater_equal": operator.ge}[name]
    check_like_numpy(getattr(fnp, name), getattr(np, name), a, b, name=name)
    check_like_numpy(getattr(fnp, name), getattr(np, name), b, a, name=name)
    check_like_numpy(funcgrad.jit(op), op, b, a, jit=False, name="jit " + name)


@pytest.mark.parametrize("name", ["fmax", "fmin", "heaviside"])
def test_functions_take_python_ints_beyond_64_bits_beside_floats(name: str) -> None:
    # these cast their Python-scalar operand to the result's dtype first: 2**64 became an
    # object array there (a DTypeError), where NumPy converts it to the float dtype
    x = np.array([1.0, -2.0, np.nan], np.float32)
    ref = getattr(np, name)
    check_like_numpy(lambda a: getattr(fnp, name)(a, 2**64), lambda a: ref(a, 2**64), x,
                     name=name)
