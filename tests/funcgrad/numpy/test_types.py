"""funcgrad.numpy's scalar types and ``ndarray``: NumPy's where NumPy's work, and usable on
traced and device arrays (a cast, as ``astype``; ``isinstance`` true for tracers), as in JAX."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from helpers import assert_allclose, dev, host

import funcgrad
import funcgrad.numpy as fnp

SCALAR_TYPES = ["bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                "uint64", "float16", "float32", "float64", "complex64", "complex128"]


@pytest.mark.parametrize("name", SCALAR_TYPES)
def test_scalar_types_cast_traced_and_device_arrays(name: str) -> None:
    t, nt = getattr(fnp, name), getattr(np, name)
    x = dev(np.array([0.0, 1.5, 2.5]))
    want = host(x).astype(nt)
    for f in (funcgrad.jit(t), funcgrad.vmap(t), t):
        got = f(x)
        assert got.dtype == np.dtype(nt)
        assert_allclose(host(got), want)


@pytest.mark.parametrize("name", SCALAR_TYPES)
def test_scalar_types_are_numpys_on_host_values(name: str) -> None:
    t, nt = getattr(fnp, name), getattr(np, name)
    assert type(t(1)) is nt and t(1) == nt(1) and t() == nt()
    assert np.dtype(t) == np.dtype(nt) and t == nt and nt == t and t == np.dtype(nt)
    assert hash(t) == hash(nt) and {nt: 1}[t] == 1
    assert isinstance(nt(1), t) and issubclass(nt, t)
    assert np.zeros(2, t).dtype == np.dtype(nt) == fnp.zeros(2, dtype=t).dtype
    assert np.ones(2).astype(t).dtype == np.dtype(nt)
    assert pickle.loads(pickle.dumps(t)) is t
    assert fnp.issubdtype(t, fnp.generic) and fnp.issubdtype(t, nt)


def test_scalar_type_casts_differentiate_and_keep_numpy_semantics() -> None:
    assert float(funcgrad.grad(lambda x: fnp.float32(x) * 2.0)(3.0)) == 2.0
    assert funcgrad.jit(lambda x: fnp.int64(x))(3.7) == 3  # truncation, as astype
    assert fnp.float64("1.5") == 1.5
    assert fnp.float32([1, 2]).dtype == np.float32
    assert fnp.finfo(fnp.float32).eps == np.finfo(np.float32).eps
    assert fnp.float32 is not np.float32 and fnp.bool is fnp.bool_


def test_isinstance_ndarray_holds_for_traced_and_device_arrays() -> None:
    seen = []

    def f(x):
        seen.append(isinstance(x, fnp.ndarray))
        return x

    x = dev(np.ones(2))
    for transform in (funcgrad.jit, funcgrad.vmap, funcgrad.grad):
        transform(f if transform is not funcgrad.grad else lambda v: fnp.sum(f(v)))(x)
    assert seen == [True, True, True]
    assert isinstance(x, fnp.ndarray) and isinstance(np.ones(1), fnp.ndarray)
    assert not isinstance(1.0, fnp.ndarray) and not isinstance(np.float64(1), fnp.ndarray)
    assert issubclass(np.ndarray, fnp.ndarray) and not issubclass(float, fnp.ndarray)
    assert fnp.ndarray((2,)).shape == (2,)


def test_finfo_iinfo_of_python_scalars_as_numpy():
    # NumPy reads a Python scalar as its type's dtype: finfo(1.0) and finfo(1j) are
    # float64's, iinfo(1) int64's; ints (bools) have no finfo, floats no iinfo
    assert fnp.finfo(1.0).eps == np.finfo(np.float64).eps
    assert fnp.finfo(1j).dtype == np.float64
    assert fnp.iinfo(1).max == np.iinfo(np.int64).max
    for call in (lambda: fnp.finfo(1), lambda: fnp.iinfo(1.0), lambda: fnp.iinfo(True)):
        with pytest.raises(ValueError):
            call()


def test_narrow_dtype_names_as_strings_say_why():
    # jax.numpy's ml_dtypes names given as strings: NumPy's "data type not understood" before
    for make in (lambda: fnp.zeros(2, dtype="bfloat16"),
                 lambda: fnp.astype(dev(np.ones(2)), "float8_e4m3fn"),
                 lambda: funcgrad.jit(lambda v: v.astype("bfloat16"))(dev(np.ones(2)))):
        with pytest.raises(funcgrad.errors.DTypeError, match="narrow .ml_dtypes. types"):
            make()
    with pytest.raises(TypeError, match="not understood"):  # other unknown names: NumPy's
        fnp.zeros(2, dtype="foo")


def test_narrow_dtypes_known_to_numpy_say_why():
    # once ml_dtypes is imported (JAX does; CuPy 14 does on a GPU machine) NumPy knows the
    # names, and numpy.dtype("bfloat16") is a kind "V" dtype: the same error, not the generic
    # "not supported" one (the GPU run said "dtype bfloat16 is not supported; ...")
    ml_dtypes = pytest.importorskip("ml_dtypes")
    for dt in ("bfloat16", ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn, ml_dtypes.int4):
        with pytest.raises(funcgrad.errors.DTypeError, match="narrow .ml_dtypes. types"):
            fnp.zeros(2, dtype=dt)
