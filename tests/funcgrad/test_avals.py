"""Abstract values and NumPy 2 / NEP 50 dtype promotion."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import funcgrad
from funcgrad.avals import ShapedArray, get_aval, result_dtype

DTYPES = [np.bool_, np.int8, np.int32, np.int64, np.uint8, np.float16, np.float32,
          np.float64, np.complex64, np.complex128]


def test_get_aval_of_python_scalars_is_weak() -> None:
    assert get_aval(1.0) == ShapedArray((), np.float64, weak_type=True)
    assert get_aval(1) == ShapedArray((), np.int64, weak_type=True)
    assert get_aval(True) == ShapedArray((), np.bool_)
    assert not get_aval(np.float32(1)).weak_type


@given(st.sampled_from(DTYPES), st.sampled_from(DTYPES))
def test_promotion_matches_numpy(a, b) -> None:
    got, _ = result_dtype(ShapedArray((), a), ShapedArray((), b))
    assert got == np.result_type(a, b)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("scalar", [1, 1.5, 1j, True])
def test_weak_scalars_follow_nep50(dt, scalar) -> None:
    if isinstance(scalar, complex) and np.dtype(dt).kind in "biu":
        expected = np.result_type(np.ones(1, dt), scalar)
    else:
        expected = np.result_type(np.ones(1, dt), scalar)
    got, weak = result_dtype(ShapedArray((3,), dt), get_aval(scalar))
    assert got == expected and not weak


def test_float32_array_times_python_float_stays_float32_everywhere() -> None:
    x = np.ones(3, np.float32)
    assert (x * 2.0).dtype == np.float32
    assert funcgrad.grad(lambda v: (v * 2.0).sum())(x).dtype == np.float32
    assert funcgrad.make_jaxpr(lambda v: v * 2.0)(x).out_avals[0].dtype == np.float32


def test_aval_str() -> None:
    # JAX 0.10.2: str(ShapedArray((2, 3), int32)) == "int32[2,3]", "~float32[]" when weak,
    # repr "ShapedArray(float32[], weak_type=True)"; jaxprs print the short form "i32[2,3]"
    assert str(ShapedArray((2, 3), np.int32)) == "int32[2,3]"
    assert str(ShapedArray((), np.bool_)) == "bool[]"
    assert str(ShapedArray((), np.float32, weak_type=True)) == "~float32[]"
    assert repr(ShapedArray((), np.float32, weak_type=True)) == (
        "ShapedArray(float32[], weak_type=True)")
    assert ShapedArray((2, 3), np.int32).str_short() == "i32[2,3]"
    assert ShapedArray((2, 3), np.int32).str_short(short_dtypes=False) == "int32[2,3]"
