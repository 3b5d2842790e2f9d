"""Focused tests for the extra elementwise functions and the dtype utilities of
funcgrad.numpy: errors, Python-scalar and weak-type corners, behaviour under jit/vmap/grad
that an op-table entry cannot express."""

from __future__ import annotations

import math
import types

import numpy as np
import pytest
from helpers import assert_allclose, dev, host

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.errors import ConcretizationError, DTypeError, ShapeError
from funcgrad.ops import elementwise_extra as _ex

# -- result_type and friends -------------------------------------------------------------------

_RT_CASES = [
    (np.float32, 2.0), (np.int8, np.uint8), (np.int8, 300), (np.float16, 1j), (np.bool_, 1),
    ("f4", "i8"), (np.ones(2, np.float32), np.float64(2.0)), (np.ones(2, np.int16), 2.5),
    (np.ones(2, np.uint8), np.int8), (np.complex64, np.float64),
]


@pytest.mark.parametrize("args", _RT_CASES, ids=str)
def test_result_type_matches_numpy_eagerly(args: tuple) -> None:
    assert fnp.result_type(*dev(args)) == np.result_type(*args)


def test_result_type_traced_values_keep_weak_types() -> None:
    seen = []

    def f(x, y):
        seen.append(fnp.result_type(x, y))
        return x

    x32 = dev(np.ones(3, np.float32))
    funcgrad.jit(f)(x32, 2.0)  # a Python float is weak under jit too: float32
    funcgrad.jit(f)(x32, np.float64(2.0))  # a NumPy scalar is not: float64
    funcgrad.jit(f)(dev(np.ones(2, np.int8)), 3)
    funcgrad.grad(lambda y: f(x32, y).sum() * y)(2.0)
    funcgrad.vmap(f, in_axes=(0, None))(dev(np.ones((2, 3), np.float16)), 2)
    assert seen == [np.float32, np.float64, np.int8, np.float32, np.float16]


def test_result_type_errors_like_numpy() -> None:
    with pytest.raises(ValueError):
        fnp.result_type()
    with pytest.raises(TypeError, match="list holding arrays"):
        funcgrad.jit(lambda x: fnp.result_type([x, x]) and x)(np.ones(2))


def test_promote_issubdtype_isdtype() -> None:
    assert fnp.promote_types("f2", np.int16) == np.float32
    assert fnp.issubdtype(np.int32, np.signedinteger) is True
    assert fnp.issubdtype(np.float32, np.integer) is False
    assert fnp.isdtype(np.complex64, "complex floating") is True
    assert fnp.isdtype(np.uint8, ("real floating", "signed integer")) is False


def test_can_cast_arrays_tracers_and_python_scalars() -> None:
    assert fnp.can_cast(dev(np.ones(2, np.float32)), np.float64)
    assert not fnp.can_cast(np.float64, np.float32)
    assert fnp.can_cast(np.float64, np.float32, casting="same_kind")
    got = []
    funcgrad.jit(lambda x: got.append(fnp.can_cast(x, np.int8)) or x)(np.ones(2, np.int16))
    assert got == [False]
    with pytest.raises(TypeError):  # NumPy 2: Python scalars are refused (value-based)
        fnp.can_cast(1.0, np.float32)


def test_common_type_and_mintypecode() -> None:
    assert fnp.common_type(dev(np.ones(2, np.float32)), np.arange(2)) is np.float64
    assert fnp.common_type(np.ones(2, np.float16)) is np.float16
    assert fnp.common_type(np.ones(2, np.complex64), np.ones(2, np.float32)) is np.complex64
    with pytest.raises(TypeError):
        fnp.common_type(np.array(["a"]))
    got = []
    funcgrad.jit(lambda x: got.append(fnp.common_type(x)) or x)(np.ones(2, np.float32))
    assert got == [np.float32]
    assert fnp.mintypecode(["d", "f", "S"]) == np.mintypecode(["d", "f", "S"])
    assert fnp.mintypecode([dev(np.ones(2, np.complex64)), "d"]) == "D"


def test_min_scalar_type() -> None:
    for v in (10, -260, 1e50, 3.5, True, 1j, np.float64(2.0), np.int64(-3)):
        assert fnp.min_scalar_type(v) == np.min_scalar_type(v), v
    assert fnp.min_scalar_type(dev(np.array(300))) == np.uint16
    assert fnp.min_scalar_type(dev(np.arange(3))) == np.int64
    got = []
    funcgrad.jit(lambda x: got.append(fnp.min_scalar_type(x)) or x)(np.arange(3.0))
    assert got == [np.float64]
    with pytest.raises(ConcretizationError, match="min_scalar_type"):
        funcgrad.jit(lambda x: fnp.min_scalar_type(x) and x)(np.array(3))


# -- object predicates -------------------------------------------------------------------------


def test_iscomplexobj_isrealobj_isscalar() -> None:
    for v in (1 + 0j, 2.0, [1.0, 2j], np.ones(2, np.complex64), np.float32(1), [True]):
        assert fnp.iscomplexobj(v) == np.iscomplexobj(v)
        assert fnp.isrealobj(v) == np.isrealobj(v)
    for v in (3.0, 1j, np.float32(2), "s", np.array(3.0), [1], None):
        assert fnp.isscalar(v) == np.isscalar(v)
    got = []

    def f(x):
        got.extend([fnp.iscomplexobj(x), fnp.isrealobj(x), fnp.isscalar(x)])
        return x

    funcgrad.jit(f)(dev(np.ones(2, np.complex128)))
    funcgrad.vmap(f)(dev(np.ones(3)))
    assert got == [True, False, False, False, True, False]
    assert fnp.iscomplexobj(dev(np.ones(2, np.complex64)))


# -- complex parts of Python bools (the NumPy answers are ints) --------------------------------


def test_real_imag_of_python_bool() -> None:
    for v in (False, True):
        for fn in ("real", "imag", "conj", "angle"):
            got, want = host(getattr(fnp, fn)(v)), getattr(np, fn)(v)
            assert np.asarray(got).dtype == np.asarray(want).dtype, (fn, v)
            assert np.asarray(got) == np.asarray(want)
    assert fnp.real(np.array([True])).dtype == np.bool_  # arrays keep NumPy's bool answer
    assert fnp.imag(np.array([True])).dtype == np.bool_


# -- ldexp / frexp / modf ----------------------------------------------------------------------


def test_ldexp_is_exact_where_two_to_the_n_overflows() -> None:
    x, n = np.array([1e-300, 3e-300]), np.array([1100, -80])
    with np.errstate(over="raise"):
        assert_allclose(fnp.ldexp(dev(x), dev(n)), np.ldexp(x, n))
    g = funcgrad.grad(lambda x: fnp.sum(fnp.ldexp(x, dev(np.array([3, -1])))))(dev(np.ones(2)))
    assert_allclose(g, np.array([8.0, 0.5]))


def test_ldexp_gcd_nextafter_dtype_errors() -> None:
    with pytest.raises(DTypeError, match="ldexp"):
        fnp.ldexp(1.0, 2.0)
    with pytest.raises(DTypeError, match="gcd"):
        fnp.gcd(np.ones(2), 2)
    with pytest.raises(DTypeError, match="nextafter"):
        fnp.nextafter(np.ones(2, np.complex128), 2.0)
    with pytest.raises(DTypeError, match="bitwise_count"):
        fnp.bitwise_count(np.ones(2))
    with pytest.raises(DTypeError, match="frexp"):
        fnp.frexp(np.ones(2, np.complex64))


def test_two_output_ufunc_keywords() -> None:
    m, e = fnp.frexp(dev(np.array([3.0])), out=(None, None))
    assert_allclose((m, e), np.frexp(np.array([3.0])))
    frac, whole = fnp.modf(2.5, dtype=np.float32)
    assert frac.dtype == whole.dtype == np.float32
    with pytest.raises(TypeError, match="out="):
        fnp.modf(np.ones(2), out=(np.ones(2), np.ones(2)))


def test_frexp_modf_grads_and_vmap() -> None:
    x = dev(np.array([0.3, 1.5, -6.2]))
    g = funcgrad.grad(lambda x: fnp.sum(fnp.frexp(x)[0]))(x)
    assert_allclose(g, 2.0 ** -np.frexp(host(x))[1])
    g = funcgrad.grad(lambda x: fnp.sum(fnp.modf(x)[0] + fnp.modf(x)[1]))(x)
    assert_allclose(g, np.ones(3))
    m, e = funcgrad.vmap(fnp.frexp, in_axes=1)(dev(np.array([[1.0, 8.0], [0.1, 3.0]])))
    assert_allclose((m, e), np.frexp(np.array([[1.0, 0.1], [8.0, 3.0]])))


def test_bitwise_count_fallback_without_the_ufunc() -> None:
    # An array module without bitwise_count (older CuPy) takes the lookup-table path.
    xp = types.SimpleNamespace(**{k: getattr(np, k) for k in ("asarray", "abs", "zeros")})
    for x in (np.array([-2**63, 2**63 - 1, -1, 0, 5]), np.array([255, 7], np.uint8),
              np.array([True, False]), np.array([-128, 127], np.int8),
              np.array([[65535, 3]], np.uint16)):
        got = _ex._bitwise_count_impl(xp, x)
        assert got.dtype == np.uint8
        np.testing.assert_array_equal(got, np.bitwise_count(x))


def test_spacing_fallback_without_the_ufunc() -> None:
    xp = types.SimpleNamespace(**{k: getattr(np, k) for k in (
        "asarray", "where", "nextafter", "abs", "zeros_like")})
    x = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, np.finfo(float).max, 5e-324,
                  -3.5, 7e-8, -7e-8, 65504.0, -65504.0])
    with np.errstate(all="ignore"):
        cases = (x, x.astype(np.float32), x.astype(np.float16), np.array([1, -4, 0], np.int8),
                 np.array([3, -7]), np.array([True]))
    for a in cases:
        with np.errstate(all="ignore"):
            got, want = _ex._spacing_impl(xp, a), np.spacing(a)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


# -- predicates and complex helpers ------------------------------------------------------------


def test_signed_inf_rejects_complex() -> None:
    for fn in (fnp.isposinf, fnp.isneginf):
        with pytest.raises(TypeError, match="ambiguous"):
            fn(np.array([1j]))
        with pytest.raises(TypeError, match="out="):
            fn(np.ones(2), out=np.ones(2, bool))


def test_real_if_close_needs_concrete_values_but_differentiates() -> None:
    with pytest.raises(ConcretizationError, match="real_if_close"):
        funcgrad.jit(fnp.real_if_close)(dev(np.array([1 + 0j])))
    # Real inputs need no values (the answer is the input) and trace fine.
    x = dev(np.array([1.0, 2.0]))
    assert_allclose(funcgrad.jit(fnp.real_if_close)(x), host(x))
    # Under grad the primal values are concrete: the real part is differentiable.
    g = funcgrad.grad(lambda x: fnp.sum(fnp.real_if_close(x + 0j) * x))(x)
    assert_allclose(g, 2 * host(x))


def test_sort_complex_errors_and_transforms() -> None:
    with pytest.raises(ShapeError, match="sort_complex"):
        fnp.sort_complex(1.0)
    a = np.array([[2.0, 1.0, 3.0], [0.0, -1.0, 5.0]])
    assert_allclose(funcgrad.jit(fnp.sort_complex)(dev(a)), np.sort_complex(a))
    assert_allclose(funcgrad.vmap(fnp.sort_complex)(dev(a)), np.sort_complex(a))
    g = funcgrad.grad(lambda x: fnp.real(fnp.sort_complex(x)[0]))(dev(np.array([2.0, 1.0])))
    assert_allclose(g, np.array([0.0, 1.0]))


# -- unwrap ------------------------------------------------------------------------------------


def test_unwrap_errors() -> None:
    with pytest.raises(ShapeError, match="unwrap"):
        fnp.unwrap(1.0)
    with pytest.raises(ShapeError, match="axis 2"):
        fnp.unwrap(np.ones((2, 2)), axis=2)
    with pytest.raises(TypeError, match="period"):
        fnp.unwrap(np.ones(3), period=np.ones(2))
    # an integer period picks NumPy's integer formulas, so it must be concrete (a traced
    # float period works: test_statistics.test_unwrap_traced_period_as_jax)
    with pytest.raises(ConcretizationError, match="period"):
        funcgrad.jit(lambda p: fnp.unwrap(np.ones(3, dtype=int), period=p))(2)


def test_unwrap_traced_discont_and_slope_one() -> None:
    p = np.array([0.0, 3.0, 6.5, -0.5, 2.0])
    f = funcgrad.jit(lambda p, d: fnp.unwrap(p, discont=d))
    assert_allclose(f(dev(p), 4.0), np.unwrap(p, discont=4.0))
    jac = funcgrad.jacfwd(fnp.unwrap)(dev(p))
    assert_allclose(jac, np.eye(5))


def test_unwrap_list_and_python_period() -> None:
    assert_allclose(fnp.unwrap([0, 5, 10], period=6), np.unwrap([0, 5, 10], period=6))
    assert_allclose(fnp.unwrap([0.0, 350.0, 5.0], period=360),
                    np.unwrap([0.0, 350.0, 5.0], period=360))
    assert_allclose(fnp.unwrap(dev(np.array([0.0, 7.0], np.float32)), period=np.float32(math.pi)),
                    np.unwrap(np.array([0.0, 7.0], np.float32), period=np.float32(math.pi)))


# -- packbits / unpackbits ---------------------------------------------------------------------


def test_packbits_errors() -> None:
    with pytest.raises(TypeError, match="integer or boolean"):
        fnp.packbits(np.ones(3))
    with pytest.raises(TypeError, match="uint8"):
        fnp.unpackbits(np.ones(3, np.int8))
    with pytest.raises(ValueError, match="bitorder"):
        fnp.packbits(np.ones(3, bool), bitorder="middle")
    with pytest.raises(ValueError, match="-count"):
        fnp.unpackbits(np.ones(1, np.uint8), count=-9)
    with pytest.raises(TypeError, match="count"):
        fnp.unpackbits(np.ones(1, np.uint8), count=2.0)
    with pytest.raises(TypeError, match="axis"):
        fnp.packbits(np.ones(3, bool), axis=0.0)
    with pytest.raises(ShapeError, match="axis"):
        fnp.packbits(np.ones((2, 3), bool), axis=2)


def test_packbits_jit_and_vmap() -> None:
    a = np.random.default_rng(0).random((4, 2, 13)) > 0.5
    want = np.stack([np.packbits(x) for x in a])
    assert_allclose(funcgrad.vmap(fnp.packbits)(dev(a)), want)
    assert_allclose(funcgrad.jit(fnp.packbits)(dev(a)), np.packbits(a))
    b = np.packbits(a, axis=-1)
    want = np.stack([np.unpackbits(x, count=5) for x in b])
    assert_allclose(funcgrad.vmap(lambda x: fnp.unpackbits(x, count=5))(dev(b)), want)


@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning")
def test_float16_degree_conversions_round_once_as_numpy():
    # NumPy scales float16 in float32 and rounds once (a float16 product was an ulp off);
    # values from NumPy 2.3
    x = dev(np.array([3.7, 255.0, 1e4], np.float16))
    for f in (lambda v: v, funcgrad.jit):
        assert host(f(fnp.rad2deg)(x)).tolist() == [212.0, 14608.0, np.inf]
        assert host(f(fnp.deg2rad)(x)).tolist() == [0.0645751953125, 4.44921875, 174.5]
    assert host(fnp.radians(dev(np.array([255], np.uint8)))).dtype == np.float16


def test_power_of_bools_by_two_under_jit_is_int64():
    # NumPy's power(bool, 2) is int64 (its square, and x ** 2 of a bool array, int8); the
    # compiled x ** 2 was square, int8 where the program's type said int64
    b = dev(np.array([True, False]))
    for f in (fnp.power, funcgrad.jit(fnp.power, static_argnums=1)):
        got = f(b, 2)
        assert host(got).dtype == np.int64 and host(got).tolist() == [1, 0]
    assert host(funcgrad.jit(fnp.square)(b)).dtype == np.int8
    assert host(funcgrad.jit(lambda v: v ** 2)(dev(np.array([1.5])))).tolist() == [2.25]
