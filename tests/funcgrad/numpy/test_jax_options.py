"""``jax.numpy``'s own keyword arguments in funcgrad.numpy (``preferred_element_type``,
``precision``, ``size=``/``fill_value=`` of compress/extract, ``total_repeat_length``, the
``method`` of searchsorted/digitize): values recorded from JAX 0.10.2 (x64) as literals, and
jit/vmap/grad. CI never imports JAX."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev, host

import funcgrad
import funcgrad.numpy as fnp

A8 = np.array([[100, 100], [-100, 50]], np.int8)


@pytest.mark.parametrize("fn", [
    lambda a, b, **k: fnp.matmul(a, b, **k),
    lambda a, b, **k: fnp.dot(a, b, **k),
    lambda a, b, **k: fnp.einsum("ij,jk->ik", a, b, **k),
    lambda a, b, **k: fnp.tensordot(a, b, 1, **k),
    lambda a, b, **k: fnp.inner(a, b.T, **k),
    lambda a, b, **k: fnp.linalg.matmul(a, b, **k),
    lambda a, b, **k: fnp.linalg.tensordot(a, b, axes=1, **k),
])
def test_preferred_element_type_products(fn) -> None:
    # int8 products accumulate in int32 without wrapping; without it NumPy's int8 wraps.
    got = fn(dev(A8), dev(A8), preferred_element_type=np.int32)
    assert_allclose(got, np.array([[0, 15000], [-15000, -7500]], np.int32))
    assert host(fn(dev(A8), dev(A8))).dtype == np.int8
    # float32 operands with float64: exact products of the float32 values
    a = np.array([[1 + 2**-20, 1.0]], np.float32)
    b = np.array([[1 + 2**-20], [0.0]], np.float32)
    got = fn(dev(a), dev(b), preferred_element_type=np.float64, precision="highest")
    assert_allclose(got, np.array([[(1 + 2**-20) ** 2]]))


def test_preferred_element_type_vectors_and_convolutions() -> None:
    x = dev(np.array([100, -100, 7], np.int8))
    y = dev(np.array([100, 100, 3], np.int8))
    assert_allclose(fnp.vdot(x, y, preferred_element_type=np.int32), np.array(21, np.int32))
    assert_allclose(fnp.vecdot(x, y, preferred_element_type=np.int64), np.array(21))
    assert_allclose(fnp.linalg.vecdot(x, y, preferred_element_type=np.float32),
                    np.array(21.0, np.float32))
    # jnp.convolve(x, y, preferred_element_type=int32) / jnp.correlate(..., "full")
    assert_allclose(fnp.convolve(x, y, preferred_element_type=np.int32),
                    np.array([10000, 0, -9000, 400, 21], np.int32))
    assert_allclose(fnp.correlate(x, y, "full", preferred_element_type=np.int32),
                    np.array([300, 9700, 21, -9300, 700], np.int32))
    f = funcgrad.jit(lambda a, b: fnp.matmul(a, b, preferred_element_type=np.float64))
    a32 = np.ones((2, 3), np.float32)
    assert host(f(dev(a32), dev(a32.T))).dtype == np.float64
    g = funcgrad.grad(lambda a: fnp.sum(fnp.matmul(a, a.T, preferred_element_type=np.float64)))(
        dev(a32))
    assert host(g).dtype == np.float32
    assert_allclose(g, np.full((2, 3), 4.0, np.float32))


def test_preferred_element_type_refuses_dropping_imaginary_parts() -> None:
    c = dev(np.array([[1 + 1j]]))
    with pytest.raises(TypeError, match="imaginary"):
        fnp.matmul(c, c, preferred_element_type=np.float32)
    with pytest.raises(TypeError, match="imaginary"):
        fnp.convolve(dev(np.array([1j])), dev(np.array([1.0])), preferred_element_type=float)


def test_compress_and_extract_with_size() -> None:
    a = np.arange(12.0).reshape(3, 4)
    c = np.array([True, False, True])
    # jnp.compress(c, a, axis=0, size=3, fill_value=-1.5) and jnp.compress(c, a, size=3)
    want = np.array([[0.0, 1, 2, 3], [8, 9, 10, 11], [-1.5, -1.5, -1.5, -1.5]])
    assert_allclose(fnp.compress(dev(c), dev(a), axis=0, size=3, fill_value=-1.5), want)
    assert_allclose(fnp.compress(dev(c), dev(a), size=3), np.array([0.0, 2.0, 0.0]))
    f = funcgrad.vmap(lambda c, x: fnp.compress(c, x, size=2, fill_value=-1))
    assert_allclose(f(dev(np.array([[1, 0, 1], [0, 0, 1]])), dev(np.arange(6).reshape(2, 3))),
                    np.array([[0, 2], [5, -1]]))
    g = funcgrad.grad(lambda x: fnp.sum(fnp.compress(dev(c), x, axis=0, size=3)))(dev(a))
    assert_allclose(g, np.repeat(np.array([[1.0], [0.0], [1.0]]), 4, axis=1))
    assert_allclose(fnp.extract(dev(a > 5), dev(a), size=8, fill_value=-1),
                    np.array([6.0, 7, 8, 9, 10, 11, -1, -1]))
    with pytest.raises(ValueError, match="size=4"):
        fnp.compress(dev(c), dev(a), axis=0, size=4)


def test_repeat_total_repeat_length() -> None:
    a = np.arange(12.0).reshape(3, 4)
    # jnp.repeat(a, [1, 0, 2], axis=0, total_repeat_length=5): padded with the last row;
    # [1, 2, 0] with 5: the last row comes in even with 0 repeats (JAX's formula)
    assert_allclose(fnp.repeat(dev(a), dev(np.array([1, 0, 2])), axis=0, total_repeat_length=5),
                    a[[0, 2, 2, 2, 2]])
    assert_allclose(fnp.repeat(dev(a), np.array([1, 2, 0]), axis=0, total_repeat_length=5),
                    a[[0, 1, 1, 2, 2]])
    assert_allclose(fnp.repeat(dev(a), [1, 0, 2], axis=0, total_repeat_length=2), a[[0, 2]])
    assert_allclose(fnp.repeat(dev(a), 2, total_repeat_length=3), np.array([0.0, 0, 1]))
    f = funcgrad.jit(lambda x, r: fnp.repeat(x, r, axis=1, total_repeat_length=6))
    assert_allclose(f(dev(a), dev(np.array([1, 2, 0, 3]))), a[:, [0, 1, 1, 3, 3, 3]])
    g = funcgrad.grad(lambda x: fnp.sum(fnp.repeat(x, np.array([2, 1]), total_repeat_length=4)))
    assert_allclose(g(dev(np.array([1.0, 2.0]))), np.array([2.0, 2.0]))


def test_search_method_keyword() -> None:
    a = dev(np.array([1.0, 2.0, 2.0, 3.0]))
    v = dev(np.array([2.0, 0.0, 5.0]))
    for m in ("scan", "scan_unrolled", "sort", "compare_all"):
        assert_allclose(fnp.searchsorted(a, v, side="right", method=m), np.array([3, 0, 4]))
        assert_allclose(fnp.digitize(v, a, method=m), np.array([3, 0, 4]))
    with pytest.raises(ValueError, match="method"):
        fnp.searchsorted(a, v, method="bisect")


def test_symmetrize_input_as_jax() -> None:
    # jnp.linalg.eigh / cholesky (symmetrize_input=True, JAX's default) of a non-symmetric
    # matrix, recorded from JAX 0.10.2: they work on (a + a^T) / 2.
    a = dev(np.array([[2.0, 1.0], [0.4, 3.0]]))
    w = fnp.linalg.eigh(a, symmetrize_input=True).eigenvalues
    assert_allclose(w, np.array([1.6397674732957372, 3.3602325267042628]), rtol=1e-12)
    assert_allclose(fnp.linalg.eigvalsh(a, UPLO=None, symmetrize_input=True), w)
    assert_allclose(fnp.linalg.cholesky(a, upper=True, symmetrize_input=True),
                    np.array([[1.4142135623730951, 0.4949747468305832],
                              [0.0, 1.6598192672697831]]), rtol=1e-12)
    g = funcgrad.grad(lambda m: fnp.linalg.eigh(m, symmetrize_input=True)[0][1])(a)
    assert_allclose(g, np.array([[0.2093809, 0.40686674], [0.40686674, 0.7906191]]), rtol=1e-6)
    # the default stays NumPy's: one triangle read
    assert_allclose(fnp.linalg.eigvalsh(a), np.linalg.eigvalsh(host(a)))


@pytest.mark.parametrize("mode,want", [
    ("fill", [[np.nan, 1.0], [6.0, np.nan]]), ("drop", [[np.nan, 1.0], [6.0, np.nan]]),
    ("clip", [[1.0, 1.0], [6.0, 4.0]]), ("promise_in_bounds", [[1.0, 1.0], [6.0, 4.0]]),
    ("one_hot", [[0.0, 1.0], [6.0, 0.0]]),
])
def test_take_along_axis_wrap_negative_indices(mode, want) -> None:
    # jax.numpy 0.10.2: wrap_negative_indices=False makes negative indices out of range
    # (filled, or clamped to the start)
    x, i = dev(np.array([[1.0, 2, 3], [4, 5, 6]])), dev(np.array([[-1, 0], [2, -3]]))
    f = funcgrad.jit(lambda x, i: fnp.take_along_axis(x, i, 1, mode=mode,
                                                      wrap_negative_indices=False))
    assert_allclose(f(x, i), np.array(want))
    assert_allclose(fnp.take_along_axis(x, i, 1, mode=mode),
                    np.array([[3.0, 1.0], [6.0, 4.0]]))


def test_put_along_axis_mode() -> None:
    # jax.numpy 0.10.2: an out-of-range index is dropped ('drop', 'promise_in_bounds') or
    # lands on the edge ('clip'); None keeps NumPy's IndexError
    x, j = dev(np.array([[1.0, 2, 3], [4, 5, 6]])), dev(np.array([[0], [5]]))
    dropped = np.array([[9.0, 2, 3], [4, 5, 6]])
    for mode, want in [("drop", dropped), ("promise_in_bounds", dropped),
                       ("clip", np.array([[9.0, 2, 3], [4, 5, 9]]))]:
        assert_allclose(fnp.put_along_axis(x, j, 9.0, 1, inplace=False, mode=mode), want)
    with pytest.raises(IndexError):
        fnp.put_along_axis(x, j, 9.0, 1, inplace=False)


def test_implementation_choice_keywords() -> None:
    # JAX's algorithm choices are accepted (same values) and checked
    a = dev(np.array([[3.0, 1.0], [1.0, 2.0]]))
    for method in ("lu", "qr", None):
        assert_allclose(fnp.linalg.slogdet(a, method=method), fnp.linalg.slogdet(a))
    with pytest.raises(ValueError, match="method"):
        fnp.linalg.slogdet(a, method="cholesky")
    e, t = dev(np.array([1, 2, 3])), dev(np.array([3, 1]))
    for method in ("auto", "compare_all", "binary_search", "sort"):
        assert_allclose(fnp.isin(e, t, method=method), np.array([True, False, True]))
    with pytest.raises(ValueError, match="method"):
        fnp.isin(e, t, method="hash")
    assert_allclose(fnp.polyval(dev(np.array([1.0, 2.0])), 3.0, unroll=2), np.array(5.0))
    ms = [dev(np.ones((2, 3))), dev(np.ones((3, 2))), dev(np.ones(2))]
    assert_allclose(fnp.linalg.multi_dot(ms, precision="highest"), np.array([6.0, 6.0]))


def test_sum_prod_promote_integers() -> None:
    # jax.numpy 0.10.2 (x64): promote_integers=False keeps the integer dtype (and wraps)
    x = np.array([[100, 100], [-100, 50]], np.int8)
    for dt, s, p in [(np.int8, [0, -106], [-16, -120]), (np.uint8, [0, 150], [240, 136]),
                     (np.int32, [0, 150], [-10000, 5000])]:
        a = dev(x.astype(dt))
        got_s = funcgrad.jit(lambda a: fnp.sum(a, axis=0, promote_integers=False))(a)
        got_p = fnp.prod(a, axis=0, promote_integers=False)
        assert_allclose(got_s, np.array(s, dt))
        assert_allclose(got_p, np.array(p, dt))
        assert host(fnp.sum(a, axis=0)).dtype == np.dtype(np.uint64 if dt == np.uint8
                                                          else np.int64)
    f = dev(np.array([1.5, 2.0], np.float32))
    assert host(fnp.sum(f, promote_integers=False)).dtype == np.float32


def test_more_jax_keywords() -> None:
    # values recorded from jax.numpy 0.10.2 (x64)
    x = dev(np.array([3.0, 1, 2, 1]))
    for dt in (np.int32, np.uint8):
        got = funcgrad.jit(lambda v, dt=dt: fnp.argsort(v, dtype=dt))(x)
        assert_allclose(got, np.array([1, 3, 2, 0], dt))
        assert_allclose(fnp.argsort(x, dtype=dt, descending=True), np.array([0, 2, 1, 3], dt))
    with pytest.raises(TypeError, match="integer"):
        fnp.argsort(x, dtype=float)
    r = fnp.ravel_multi_index((dev(np.array([1, 1])), dev(np.array([1, 3]))), (2, 4),
                              dtype=np.int32)
    assert_allclose(r, np.array([5, 7], np.int32))
    assert_allclose(fnp.mask_indices(3, fnp.triu, 1, size=4),
                    (np.array([0, 0, 1, 0]), np.array([1, 2, 2, 0])))
    assert_allclose(fnp.delete(dev(np.arange(5)), [0, 2], assume_unique_indices=True),
                    np.array([1, 3, 4]))
    d = fnp.dstack([dev(np.ones(2, int)), dev(np.zeros(2, int))], np.float32)
    assert_allclose(d, np.array([[[1.0, 0.0], [1.0, 0.0]]], np.float32))
    a = dev(np.ones((3, 2)) + np.eye(3, 2))
    assert_allclose(fnp.linalg.lstsq(a, dev(np.ones(3)), numpy_resid=True),
                    fnp.linalg.lstsq(a, dev(np.ones(3))))


def test_polydiv_trim_leading_zeros() -> None:
    # jnp.polydiv's keyword: False keeps the remainder at len(u) (values from JAX 0.10.2).
    u, v = dev(np.array([3.0, 5.0, 2.0, 1.0])), dev(np.array([2.0, 1.0]))
    for fn in (fnp.polydiv, funcgrad.jit(fnp.polydiv, static_argnames="trim_leading_zeros")):
        q, r = fn(u, v, trim_leading_zeros=False)
        assert_allclose(host(q), np.array([1.5, 1.75, 0.125]))
        assert_allclose(host(r), np.array([0.0, 0.0, 0.0, 0.875]))
    q, r = fnp.polydiv(u, v, trim_leading_zeros=True)
    assert_allclose(host(r), np.array([0.875]))
    with pytest.raises(funcgrad.errors.ConcretizationError):
        funcgrad.jit(lambda a, b: fnp.polydiv(a, b, trim_leading_zeros=True))(u, v)


def test_numpy_rank_promotion_levels() -> None:
    # JAX's jax_numpy_rank_promotion: 'raise' refuses (2, 3) with (3,) in ufuncs and traced
    # operators (message as JAX's), 'warn' warns; 0-d operands and equal ranks always pass.
    x, w = dev(np.ones((2, 3))), dev(np.arange(3.0))
    with funcgrad.numpy_rank_promotion("raise"):
        with pytest.raises(ValueError, match=r"for add on shapes \(2, 3\) \(3,\)"):
            fnp.add(x, w)
        with pytest.raises(ValueError, match="jax_numpy_rank_promotion='raise'"):
            funcgrad.grad(lambda v: fnp.sum(w * v))(x)
        with pytest.raises(ValueError, match="for divmod on shapes"):
            fnp.divmod(x, w)
        with pytest.raises(ValueError, match="for less on shapes"):
            funcgrad.jit(lambda v: v < w)(x)
        assert_allclose(fnp.multiply(x, 2.0), np.full((2, 3), 2.0))
        assert_allclose(funcgrad.jit(lambda v: fnp.sum(v @ w) + v[:1] * 1.0)(x), np.full((1, 3), 7.0))
        assert_allclose(funcgrad.vmap(lambda v: v + w)(x), np.ones((2, 3)) + np.arange(3.0))
    with funcgrad.numpy_rank_promotion("warn"), pytest.warns(UserWarning, match="rank promotion"):
        fnp.subtract(x, w)
    funcgrad.config.update("jax_numpy_rank_promotion", "raise")
    try:
        assert funcgrad.config.jax_numpy_rank_promotion == "raise"
        with pytest.raises(ValueError):
            fnp.maximum(x, w)
    finally:
        funcgrad.config.update("jax_numpy_rank_promotion", "allow")
    assert host(fnp.maximum(x, w)).shape == (2, 3)
    with pytest.raises(ValueError, match="must be one of"):
        funcgrad.config.update("jax_numpy_rank_promotion", "sometimes")


def test_out_sharding_on_computations() -> None:
    # JAX 0.10.2 takes out_sharding= (a NamedSharding, or a PartitionSpec under a mesh) on
    # reshape/ravel/broadcast_to/repeat, the products, bincount, percentile and .at[...]:
    # one device here, so the result is the same values on the sharding's device.
    from funcgrad.sharding import NamedSharding, PartitionSpec

    mesh = funcgrad.make_mesh((1,), ("x",))
    ns = NamedSharding(mesh, PartitionSpec())
    a = dev(np.arange(6.0).reshape(2, 3))
    cases = [
        (lambda **k: fnp.reshape(a, (3, 2), **k), np.arange(6.0).reshape(3, 2)),
        (lambda **k: fnp.ravel(a, **k), np.arange(6.0)),
        (lambda **k: fnp.broadcast_to(a[0], (2, 3), **k), np.tile(np.arange(3.0), (2, 1))),
        (lambda **k: fnp.repeat(a[0], 2, **k), np.repeat(np.arange(3.0), 2)),
        (lambda **k: fnp.matmul(a, a.T, **k), [[5.0, 14.0], [14.0, 50.0]]),
        (lambda **k: fnp.dot(a[0], a[1], **k), 14.0),
        (lambda **k: fnp.einsum("ij->j", a, **k), [3.0, 5.0, 7.0]),
        (lambda **k: fnp.tensordot(a, a, 2, **k), 55.0),
        (lambda **k: fnp.bincount(dev(np.array([0, 2, 2])), **k), [1, 0, 2]),
        (lambda **k: fnp.percentile(a, 50, **k), 2.5),
        (lambda **k: fnp.at(a)[0, 1].add(10.0, **k), [[0.0, 11.0, 2.0], [3.0, 4.0, 5.0]]),
        (lambda **k: fnp.at(a)[1, 2].get(**k), 5.0),
    ]
    for fn, want in cases:
        assert_allclose(fn(out_sharding=ns), np.asarray(want))
    with funcgrad.set_mesh(mesh):
        assert_allclose(fnp.ravel(a, out_sharding=PartitionSpec()), np.arange(6.0))
    traced = funcgrad.jit(lambda v: v.reshape(3, 2, out_sharding=ns).at[0].set(
        -1.0, out_sharding=ns))(a)
    assert_allclose(traced, np.array([[-1.0, -1.0], [2.0, 3.0], [4.0, 5.0]]))
    with pytest.raises(TypeError, match="only supports instances of `NamedSharding`"):
        fnp.matmul(a, a.T, out_sharding="cpu")
    with pytest.raises(ValueError, match="needs a mesh"):
        fnp.reshape(a, 6, out_sharding=PartitionSpec())


def test_numpy_dtype_promotion_strict() -> None:
    # JAX's jax_numpy_dtype_promotion='strict' (values as JAX 0.10.2 gives them): operands
    # of different dtypes are refused in binary ufuncs and traced operators (matmul too);
    # a Python scalar (weak) joins an array of its kind or a wider one
    f32, f64 = dev(np.ones(2, np.float32)), dev(np.ones(2))
    i32, b = dev(np.ones(2, np.int32)), dev(np.ones(2, bool))
    with funcgrad.numpy_dtype_promotion("strict"):
        for fn in (lambda: fnp.add(f32, f64), lambda: fnp.multiply(f32, i32),
                   lambda: fnp.add(b, i32), lambda: fnp.add(i32, 1.5),
                   lambda: fnp.add(f32, 1j), lambda: fnp.add(i32, True),
                   lambda: fnp.add(f32, np.float64(2)), lambda: fnp.divmod(f32, f64),
                   lambda: funcgrad.jit(lambda x, y: x + y)(f32, f64),
                   lambda: funcgrad.jit(lambda x, y: x @ y)(f32, f64),
                   lambda: funcgrad.grad(lambda x: fnp.sum(x * np.float64(2)))(f32),
                   lambda: fnp.add(True, 2)):
            with pytest.raises(funcgrad.dtypes.TypePromotionError, match="strict"):
                fn()
        assert host(fnp.add(f32, 2.0)).dtype == np.float32
        assert host(fnp.add(f32, 1)).dtype == np.float32
        assert host(fnp.add(i32, 1)).dtype == np.int32
        assert host(funcgrad.jit(lambda x, s: x * s)(f32, 2.0)).dtype == np.float32
        assert host(funcgrad.grad(lambda x: fnp.sum(fnp.mean(x ** 2) * x))(f32)).dtype == np.float32
        assert funcgrad.config.jax_numpy_dtype_promotion == "strict"
    assert host(fnp.add(f32, f64)).dtype == np.float64
    with pytest.raises(ValueError, match="'standard' or 'strict'"):
        funcgrad.config.update("jax_numpy_dtype_promotion", "loose")


def test_numpy_dtype_promotion_strict_in_where_and_joins() -> None:
    # JAX promotes where's x and y and the joined arrays of concatenate/stack with the same
    # rules, so 'strict' refuses mixed dtypes there too (JAX 0.10.2); they were promoted
    f32, f64 = dev(np.ones(2, np.float32)), dev(np.ones(2))
    i8 = dev(np.ones(2, np.int8))
    c = dev(np.array([True, False]))
    with funcgrad.numpy_dtype_promotion("strict"):
        for fn in (lambda: fnp.where(c, f32, f64), lambda: fnp.where(c, i8, 1.5),
                   lambda: fnp.concatenate([f32, f64]), lambda: fnp.stack([i8, f32]),
                   lambda: fnp.vstack([f32, f64]),
                   lambda: funcgrad.jit(lambda x, y: fnp.where(c, x, y))(f32, f64)):
            with pytest.raises(funcgrad.dtypes.TypePromotionError, match="strict"):
                fn()
        assert host(fnp.where(c, f32, 2.0)).dtype == np.float32
        assert host(fnp.where(c, i8, 1)).dtype == np.int8
        assert host(fnp.concatenate([f32, f32])).dtype == np.float32
        assert host(fnp.concatenate([f32, f64], dtype=np.float64)).dtype == np.float64
    assert host(fnp.where(c, f32, f64)).dtype == np.float64


@pytest.mark.parametrize("fn", [
    lambda a, b, **k: fnp.matmul(a, b, **k),
    lambda a, b, **k: fnp.dot(a, b, **k),
    lambda a, b, **k: fnp.einsum("i,i", a, b, **k),
    lambda a, b, **k: fnp.tensordot(a, b, 1, **k),
    lambda a, b, **k: fnp.inner(a, b, **k),
    lambda a, b, **k: fnp.vdot(a, b, **k),
    lambda a, b, **k: fnp.vecdot(a, b, **k),
    lambda a, b, **k: fnp.linalg.multi_dot([a, fnp.eye(2), b], **k),
    lambda a, b, **k: funcgrad.jit(lambda x, y: fnp.matmul(x, y, **k))(a, b),
])
def test_precision_takes_every_jax_form_and_honours_dot_algorithms(fn) -> None:
    # JAX 0.10.2 (x64, CPU): precision names and Precision values compute in full
    # precision; the F32_F32_F32 algorithm rounds float64 operands to float32 first
    # (2.0000009536743164); a name JAX does not know is a ValueError.
    from funcgrad import lax

    x, y = dev(np.array([1 + 2.0**-20, 1 + 2.0**-40])), dev(np.ones(2))
    full = 2.0 + 2.0**-20 + 2.0**-40
    for prec in ("highest", "bfloat16", lax.Precision.HIGH, ("high", "default"),
                 (lax.Precision.HIGHEST, lax.Precision.DEFAULT), "DEFAULT"):
        assert float(host(fn(x, y, precision=prec))) == full
    for prec in ("F32_F32_F32", lax.DotAlgorithmPreset.F32_F32_F32,
                 lax.DotAlgorithm(np.float32, np.float32, np.float32)):
        got = host(fn(x, y, precision=prec))
        assert float(got) == 2.0000009536743164 and got.dtype == np.float64
    with pytest.raises(ValueError, match="precision must be"):
        fn(x, y, precision="fp32")


def test_precision_enum_as_jax() -> None:
    from funcgrad import lax

    P = lax.Precision
    assert [P(n) for n in ("highest", "float32", "high", "bfloat16_3x", "tensorfloat32",
                           "default", "bfloat16", "fastest")] == [P.HIGHEST] * 2 + [P.HIGH] * 3 \
        + [P.DEFAULT] * 3
    assert (str(P.HIGHEST), repr(P.HIGH), P(2)) == ("HIGHEST", "Precision.HIGH", P.HIGHEST)
    with pytest.raises(ValueError):
        P("fp32")
