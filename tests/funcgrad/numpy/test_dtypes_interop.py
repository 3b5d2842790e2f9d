"""The scalar-type hierarchy, finfo/iinfo of arrays, DLPack and buffer constructors."""

from __future__ import annotations

import re

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
from tests.funcgrad.numpy import assert_same
from tests.helpers import dev, host


@pytest.mark.parametrize("dt", [np.bool_, np.int8, np.uint16, np.int64, np.float16, np.float32,
                                np.float64, np.complex64, np.complex128])
def test_hierarchy_agrees_with_numpy(dt):
    for abstract in ("generic", "number", "inexact", "floating", "complexfloating", "integer",
                     "signedinteger", "unsignedinteger"):
        assert fnp.issubdtype(dt, getattr(fnp, abstract)) == np.issubdtype(
            dt, getattr(np, abstract))
    x = np.zeros(2, dt)
    if np.issubdtype(dt, np.inexact):
        assert fnp.finfo(x) == np.finfo(dt)
        traced_eps = funcgrad.jit(lambda v: v + fnp.finfo(v).eps)(x)
        np.testing.assert_array_equal(traced_eps, x + np.finfo(dt).eps)
        with pytest.raises(ValueError, match="not an integer dtype"):
            fnp.iinfo(x)
    elif dt is not np.bool_:
        assert fnp.iinfo(x).max == np.iinfo(dt).max
        assert funcgrad.jit(lambda v: v + fnp.iinfo(v).max)(np.zeros(1, dt))[0] == np.iinfo(dt).max
        with pytest.raises(ValueError, match="not an inexact dtype"):
            fnp.finfo(x)


def test_c_named_aliases_are_numpys():
    for name in ("byte", "short", "intc", "int_", "long", "longlong", "intp", "ubyte", "ushort",
                 "uintc", "uint", "ulong", "ulonglong", "uintp", "half", "single", "double",
                 "longdouble", "csingle", "cdouble", "clongdouble"):
        # NumPy's type, or (for the concrete ones) funcgrad's cast-capable stand-in for it
        # (fnp.double(traced) casts, as in JAX): equal to it, the same dtype, same instances.
        t, nt = getattr(fnp, name), getattr(np, name)
        assert t is nt or (t == nt and np.dtype(t) == np.dtype(nt)
                           and isinstance(nt(1), t)), name


def test_from_dlpack_shares_memory_and_frombuffer():
    a = np.arange(6.0).reshape(2, 3)
    b = fnp.from_dlpack(a)
    b[0, 0] = 9.0
    assert a[0, 0] == 9.0 and b.shape == (2, 3)
    with pytest.raises(TypeError, match="__dlpack__"):
        fnp.from_dlpack([1, 2])
    buf = np.arange(5, dtype=np.int16).tobytes()
    np.testing.assert_array_equal(host(fnp.frombuffer(buf, np.int16, count=3, offset=2)),
                                  [1, 2, 3])
    np.testing.assert_array_equal(host(fnp.fromiter(iter([3, 1]), np.float32)), [3.0, 1.0])
    assert fnp.require([[1, 2]], np.int32, ["C", "A"]).dtype == np.int32
    with pytest.raises(ValueError, match="unknown requirement"):
        fnp.require([1], None, "Z")


def test_dlpack_round_trip_with_torch():
    torch = pytest.importorskip("torch")
    t = torch.arange(4, dtype=torch.float64)
    a = fnp.from_dlpack(t)
    a[1] = 5.0
    assert float(t[1]) == 5.0  # zero copy from torch
    back = torch.from_dlpack(funcgrad.grad(lambda v: fnp.sum(v ** 2))(a))
    assert back.tolist() == [0.0, 10.0, 4.0, 6.0]
    # jnp.from_dlpack(torch.ones(2, dtype=torch.bfloat16)) is a bfloat16 array in JAX;
    # funcgrad has no bfloat16: an error naming the dtype and the fix, not NumPy's
    # "Unsupported dtype in DLTensor."
    with pytest.raises(funcgrad.errors.DTypeError, match=r"torch\.bfloat16.*tensor\.float\(\)"):
        fnp.from_dlpack(torch.ones(2, dtype=torch.bfloat16))


def test_from_dlpack_places_the_result_on_device():
    # jax.numpy.from_dlpack(x, device=d): the result on d (it was ignored: a host array).
    a = np.arange(3.0)
    on = fnp.from_dlpack(a, device="strict")
    assert funcgrad.backend.device_of(on) == "strict"
    assert host(on).tolist() == [0.0, 1.0, 2.0]
    assert funcgrad.backend.device_of(fnp.from_dlpack(a, device="cpu")) == "cpu"
    with pytest.raises(ValueError, match="copy=False"):
        fnp.from_dlpack(a, device="strict", copy=False)


@pytest.mark.parametrize("dtype", ["bool", "int8", "float16", "float32", "complex128"])
def test_traced_array_itemsize_and_nbytes(dtype: str) -> None:
    """``x.itemsize`` and ``x.nbytes`` are static: a traced array has them, as NumPy's."""
    x = np.zeros((2, 3), dtype)
    seen = []

    def f(v):
        seen.append((v.itemsize, v.nbytes))
        return v

    funcgrad.jit(f)(x)
    funcgrad.vmap(f)(x)
    assert seen == [(x.itemsize, x.nbytes), (x.itemsize, x[0].nbytes)]


@pytest.mark.parametrize("ufunc", [np.subtract, np.multiply, np.equal, np.power, np.maximum,
                                   np.arctan2, np.logical_xor])
@pytest.mark.parametrize("dtypes", [("float64", "float64"), ("float32", "int8"),
                                    ("int32", "bool")])
def test_ufunc_outer_of_traced_arrays(ufunc, dtypes) -> None:
    """``numpy.<ufunc>.outer`` on traced arrays: NumPy's values, shapes and dtypes. (Only
    traced: NumPy's ufuncs on device arrays are the device library's business.)"""
    a = np.array([1, 0, 2]).astype(dtypes[0])
    b = np.array([[1, 2], [3, 0]]).astype(dtypes[1])
    out = funcgrad.jit(lambda x, y: ufunc.outer(x, y))(dev(a), dev(b))
    assert_same(out, ufunc.outer(a, b), f"{ufunc.__name__}.outer")


def test_ufunc_outer_differentiates() -> None:
    g = funcgrad.grad(lambda x: np.multiply.outer(x, x).sum())(dev(np.arange(3.0)))
    np.testing.assert_allclose(host(g), [6.0, 6.0, 6.0])


@pytest.mark.parametrize("ufunc", [np.fmax, np.fmin])
@pytest.mark.parametrize("axis", [0, 1, None])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int8"])
def test_fmax_fmin_reduce_of_traced_arrays(ufunc, axis, dtype) -> None:
    """``numpy.fmax.reduce`` / ``fmin.reduce`` on traced arrays skip NaNs (all-NaN: NaN)."""
    x = np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, np.nan]])
    if dtype == "int8":
        x = np.array([[3, 1, 2], [2, 5, 0]])
    x = x.astype(dtype)
    out = funcgrad.jit(lambda a: ufunc.reduce(a, axis=axis))(dev(x))
    assert_same(out, ufunc.reduce(x, axis=axis), f"{ufunc.__name__}.reduce")


def test_file_io_as_jax_numpy(tmp_path):
    # jnp.save/savez take arrays on any device; jnp.load puts a .npy array on the default
    # device and returns NumPy's NpzFile for an archive; fromfile/fromstring read now.
    x = dev(np.arange(6.0).reshape(2, 3))
    fnp.save(tmp_path / "x.npy", x)
    back = fnp.load(tmp_path / "x.npy")
    assert funcgrad.device_get(back).tolist() == host(x).tolist()
    assert type(back) is type(fnp.zeros(1))  # the default device's array type
    fnp.savez(tmp_path / "z.npz", x, w=dev(np.ones(2)))
    with fnp.load(tmp_path / "z.npz") as z:
        assert sorted(z.files) == ["arr_0", "w"] and z["w"].tolist() == [1.0, 1.0]
    np.arange(4, dtype=np.int16).tofile(tmp_path / "r.bin")
    assert host(fnp.fromfile(tmp_path / "r.bin", dtype=np.int16)).tolist() == [0, 1, 2, 3]
    assert host(fnp.fromstring("1, 2, 3", dtype=int, sep=",")).tolist() == [1, 2, 3]
    with pytest.raises(funcgrad.ConcretizationError, match="save outside"):
        funcgrad.jit(lambda v: fnp.save(tmp_path / "t.npy", v) or v)(x)


def test_jax_aliases():
    assert fnp.float_ is fnp.float64 and fnp.complex_ is fnp.complex128
    assert fnp.ComplexWarning is np.exceptions.ComplexWarning
    assert fnp.iterable([1]) and not fnp.iterable(3.0) and not fnp.iterable(fnp.ones(()))
    assert funcgrad.jit(lambda v: v * fnp.iterable(v))(fnp.ones(2)).tolist() == [1.0, 1.0]


@pytest.mark.parametrize("name", ["bfloat16", "float8_e4m3fn", "int4"])
def test_ml_dtypes_names_say_why_they_are_missing(name):
    # jax.numpy's ml_dtypes names: NumPy/CuPy have no arithmetic for them. The error explains
    # and is an AttributeError too, so feature tests (hasattr, getattr default) still work.
    assert not hasattr(fnp, name)
    assert getattr(fnp, name, None) is None
    with pytest.raises(TypeError, match=f"{name}: funcgrad computes with NumPy/CuPy kernels"):
        getattr(fnp, name)
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        fnp.not_a_name  # noqa: B018


def test_array_api_code_traces_with_namespace_and_device() -> None:
    # Array-API code asks an array for its namespace and device and makes new arrays there:
    # traced values answer as the concrete arrays do (funcgrad.numpy; the value's device)
    def standardize(x):
        xp = x.__array_namespace__()
        ones = xp.ones(x.shape[-1], dtype=x.dtype, device=x.device)
        return (x - xp.mean(x)) * ones

    x = dev(np.array([1.0, 2.0, 4.0]))
    want = np.array([-4.0, -1.0, 5.0]) / 3
    np.testing.assert_allclose(host(funcgrad.jit(standardize)(x)), want)
    np.testing.assert_allclose(host(funcgrad.vmap(standardize)(fnp.stack([x, x]))), [want, want])
    g = funcgrad.grad(lambda v: fnp.sum(standardize(v) ** 2))(x)
    np.testing.assert_allclose(host(g), 2 * want)
    seen = []
    funcgrad.jit(lambda v: seen.append(v.device) or v)(x)
    assert seen == [funcgrad.backend.device_of(x) or "cpu"]  # "strict" in the strict pass


def test_array_namespace_info_answers_as_numpys() -> None:
    # array-API libraries read the version and the inspection namespace of xp (the installed
    # NumPy's version: 2024.12 for NumPy 2.4, 2025.12 for 2.5; NumPy's values for the dtypes;
    # funcgrad's devices)
    assert fnp.__array_api_version__ == np.__array_api_version__
    assert re.fullmatch(r"20\d\d\.\d\d", fnp.__array_api_version__)
    info = fnp.__array_namespace_info__()
    assert info.default_dtypes() == {"real floating": np.dtype("float64"),
                                     "complex floating": np.dtype("complex128"),
                                     "integral": np.dtype("int64"),
                                     "indexing": np.dtype("int64")}
    assert list(info.dtypes(kind="unsigned integer")) == ["uint8", "uint16", "uint32", "uint64"]
    assert list(info.dtypes(kind=("bool", "complex floating"))) == [
        "bool", "complex64", "complex128"]
    assert "cpu" in info.devices() and info.default_device() in info.devices()
    assert info.capabilities()["max dimensions"] == 64
    with pytest.raises(ValueError, match="device 'tpu' is not one of"):
        info.default_dtypes(device="tpu")


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # (numpy.matrix's own)
def test_asarray_passes_no_ndarray_subclass_through() -> None:
    # numpy.asarray / numpy.array (subok=False) give base-class arrays: a matrix is a 2-D
    # ndarray, a masked array its data (as jnp.asarray), so later functions are NumPy's plain
    # ones (the subclasses' own semantics had leaked: a matrix ravels to (1, n))
    mat = np.matrix([[1.0, 2.0], [3.0, 4.0]])
    masked = np.ma.array([1.0, 2.0, 3.0], mask=[False, True, False])
    for conv in (fnp.asarray, fnp.array, fnp.asanyarray):
        m = conv(mat)
        assert type(m) is np.ndarray and m.shape == (2, 2)
        assert fnp.cumsum(m).tolist() == [1.0, 3.0, 6.0, 10.0]
        d = conv(masked)
        assert type(d) is np.ndarray and d.tolist() == [1.0, 2.0, 3.0]
    assert fnp.asarray(mat, dtype=np.float32).dtype == np.float32
    # passed straight to functions, they compute as plain arrays too (operations run on
    # numpy.asarray of them, as jax.numpy's): before, fnp.argmax(mat) was [[0, 0, 0, 0]] and
    # fnp.mean(masked) 4/3 (a masked sum over an unmasked count)
    assert int(fnp.argmax(mat)) == 3 and fnp.cumsum(mat).tolist() == [1.0, 3.0, 6.0, 10.0]
    assert type(fnp.sin(mat)) is np.ndarray and fnp.take(mat, [0, 3]).tolist() == [1.0, 4.0]
    assert float(fnp.mean(masked)) == 2.0 and float(fnp.median(masked)) == 2.0
