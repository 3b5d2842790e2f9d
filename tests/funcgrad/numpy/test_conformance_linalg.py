"""Products: matmul, dot, vdot, inner, outer, kron, tensordot, einsum against NumPy.

Random ranks 0-4 (size-0 axes too), matching and mismatching contraction sizes, every pair of
dtypes, Python scalars and lists; eager, under ``jit`` and under ``vmap``.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev, host
from hypothesis import assume, given
from hypothesis import strategies as st

import funcgrad
import funcgrad.numpy as fnp
from tests.funcgrad.numpy import ALL_DTYPES, arrays, check_like_numpy

# float16 products are computed in float16 by NumPy with its own accumulation order; their
# rounding differs too much to compare closely, so they get a loose tolerance.
PRODUCT_DTYPES = ALL_DTYPES


@st.composite
def product_operands(draw, max_rank: int = 3):
    """Two shapes that mostly agree on a shared size ``k`` (sometimes not), and dtypes."""
    k = draw(st.integers(0, 3))

    def shape(rank: int) -> tuple[int, ...]:
        return tuple(k if draw(st.integers(0, 2)) else draw(st.integers(0, 3))
                     for _ in range(rank))

    sa = shape(draw(st.integers(0, max_rank)))
    sb = shape(draw(st.integers(0, max_rank)))
    da = draw(st.sampled_from(PRODUCT_DTYPES))
    db = draw(st.sampled_from(PRODUCT_DTYPES))
    a = draw(arrays(np.dtype(da), sa, special=False))
    b = draw(arrays(np.dtype(db), sb, special=False))
    return a, b


def _rtol(a, b) -> float | None:
    return 5e-2 if np.float16 in (a.dtype, b.dtype) else None


@given(st.sampled_from(("matmul", "dot", "vdot", "inner", "outer", "kron")),
       product_operands())
def test_products(name: str, ab: tuple) -> None:
    a, b = ab
    check_like_numpy(getattr(fnp, name), getattr(np, name), a, b, name=name, vmap=True,
                     rtol=_rtol(a, b), loose_errors=True)


@given(product_operands(), st.data())
def test_matmul_operator_traced(ab: tuple, data: st.DataObject) -> None:
    a, b = ab
    check_like_numpy(lambda x, y: x @ y, lambda x, y: x @ y, a, b, name="x @ y",
                     rtol=_rtol(a, b), loose_errors=True)


@given(product_operands(max_rank=4), st.data())
def test_tensordot(ab: tuple, data: st.DataObject) -> None:
    a, b = ab
    axes = data.draw(st.one_of(
        st.integers(0, 3),
        st.tuples(st.lists(st.integers(-3, 3), max_size=2), st.lists(st.integers(-3, 3),
                                                                      max_size=2)),
        st.tuples(st.integers(-3, 3), st.integers(-3, 3)),
    ), "axes")
    check_like_numpy(fnp.tensordot, np.tensordot, a, b, axes, name="tensordot", vmap=True,
                     rtol=_rtol(a, b), loose_errors=True)


EINSUM_SPECS = {
    1: ["ij->ji", "ii->i", "ii", "ij->", "i->", "ijk->kji", "iij->ij", "...i->...", "i...->i",
        "ij->j", "ij", "ba", "ij->ij", "i->ii"],
    2: ["ij,jk->ik", "ij,jk", "i,i->", "i,j->ij", "...j,jk->...k", "ij,j->i", "bij,bjk->bik",
        "ij,ij->ij", "ij,kj->ik", "ij...,jk...->ik...", "i,jk", "i,i", "ij,jk->iz", "ii,i->i",
        ",i->i", "i,->i"],
    3: ["ab,bc,cd->ad", "i,i,i->", "ij,j,k->ik", "a,b,c"],
}


def _shapes_for(spec: str, n_ops: int, sizes: dict) -> list[tuple[int, ...]]:
    ins = spec.split("->")[0].split(",")
    out = []
    for s in ins[:n_ops]:
        shp = []
        for ch in s.replace("...", "*"):
            shp.extend([2, 3][: sizes["ell"]] if ch == "*" else [sizes.setdefault(ch, 2)])
        out.append(tuple(shp))
    return out


@given(st.sampled_from((1, 2, 3)), st.data(), st.sampled_from(ALL_DTYPES),
       st.sampled_from(ALL_DTYPES))
def test_einsum(n_ops: int, data: st.DataObject, da: str, db: str) -> None:
    spec = data.draw(st.sampled_from(EINSUM_SPECS[n_ops]), "spec")
    sizes = {"ell": data.draw(st.integers(0, 2), "ellipsis rank")}
    for ch in "abcdijkz":
        sizes[ch] = data.draw(st.integers(0, 3), f"size of {ch}")
    if data.draw(st.booleans(), "square"):  # repeated subscripts need equal sizes
        sizes.update({ch: sizes["i"] for ch in "abcdjk"})
    ops = [data.draw(arrays(np.dtype(da if i == 0 else db), shp, special=False))
           for i, shp in enumerate(_shapes_for(spec, n_ops, dict(sizes)))]
    check_like_numpy(fnp.einsum, np.einsum, spec, *ops, name="einsum", vmap=True,
                     rtol=5e-2 if "float16" in (da, db) else None, loose_errors=True)


@given(st.sampled_from(ALL_DTYPES), st.sampled_from(("float32", "float64", "complex128",
                                                     "int64")), st.data())
def test_einsum_dtype_and_sublists(da: str, dt: str, data: st.DataObject) -> None:
    # (NumPy refuses unsafe casts to ``dtype=``; funcgrad casts: a deliberate leniency that
    # tests/funcgrad/ops/test_linalg_ops.py relies on)
    assume(np.can_cast(da, dt))
    a = data.draw(arrays(np.dtype(da), (2, 3), special=False))
    b = data.draw(arrays(np.dtype(da), (3, 2), special=False))
    check_like_numpy(fnp.einsum, np.einsum, "ij,jk->ik", a, b, name="einsum", dtype=dt)
    check_like_numpy(lambda x, y: fnp.einsum(x, [0, 1], y, [1, 2], [0, 2]),
                     lambda x, y: np.einsum(x, [0, 1], y, [1, 2], [0, 2]), a, b,
                     name="einsum(sublists)")


PY_OPERANDS = st.one_of(
    st.integers(-3, 3), st.floats(-3, 3, width=32), st.just([1, 2]), st.just([1.5, -2.0]),
    st.just([[1, 2], [3, 4]]), st.just([[1.0, 0.5]]),
)


@given(st.sampled_from(("matmul", "dot", "vdot", "inner", "outer", "kron")), PY_OPERANDS,
       PY_OPERANDS)
def test_python_operands(name: str, a: object, b: object) -> None:
    assume(not (name == "vdot" and np.size(a) != np.size(b)))
    check_like_numpy(getattr(fnp, name), getattr(np, name), a, b, name=name,
                     loose_errors=True)


NORM_ORDS = (None, "fro", "nuc", np.inf, -np.inf, 1, -1, 2, -2, 0, 0.5)


@pytest.mark.parametrize("ord_", NORM_ORDS)
@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (0, 0), (2, 0, 3), (0,)])
def test_norm_of_empty_input(shape: tuple, ord_) -> None:
    """NumPy's empty norms: 0 for the 2-norm and the nuclear norm of an empty matrix too."""
    x = np.zeros(shape)
    check_like_numpy(fnp.linalg.norm, np.linalg.norm, x, ord=ord_, name="norm")
    if len(shape) >= 2:
        check_like_numpy(fnp.linalg.norm, np.linalg.norm, x, ord=ord_, axis=(0, 1), name="norm")


@pytest.mark.parametrize("ord_", NORM_ORDS)
@pytest.mark.parametrize("axis", [None, 1])
def test_norm_keeps_float16(ord_, axis) -> None:
    """float16 is no LAPACK type, but NumPy computes (in float16) every norm that needs no SVD;
    the SVD ones raise its TypeError."""
    x = np.array([[3.0, 4.0], [1.0, 0.0]], np.float16)
    check_like_numpy(fnp.linalg.norm, np.linalg.norm, x, ord=ord_, axis=axis, name="norm")
    check_like_numpy(fnp.linalg.norm, np.linalg.norm, x[0], ord=ord_, name="norm")
    check_like_numpy(fnp.linalg.vector_norm, np.linalg.vector_norm, x, name="vector_norm")
    check_like_numpy(fnp.linalg.matrix_norm, np.linalg.matrix_norm, x, name="matrix_norm")


@pytest.mark.parametrize("call", [
    lambda m: m.linalg.inv(np.zeros((2, 3))), lambda m: m.linalg.det(np.zeros(3)),
    lambda m: m.linalg.eigh(np.zeros((2, 3))), lambda m: m.linalg.eigvalsh(np.zeros((2, 3))),
    lambda m: m.linalg.svd(np.zeros(3)), lambda m: m.linalg.solve(np.zeros((2, 3)), np.ones(2)),
    lambda m: m.linalg.cholesky(np.zeros((2, 3))), lambda m: m.linalg.qr(np.zeros(3)),
    lambda m: m.linalg.eig(np.zeros((2, 3))), lambda m: m.linalg.slogdet(np.zeros((2, 3))),
    lambda m: m.linalg.pinv(np.zeros(3)), lambda m: m.linalg.lstsq(np.zeros(3), np.zeros(3)),
    lambda m: m.linalg.matrix_power(np.zeros((2, 3)), 2), lambda m: m.linalg.cond(np.zeros(3)),
], ids=lambda c: "")
def test_not_a_square_matrix_is_numpys_linalg_error(call) -> None:
    """NumPy raises LinAlgError for an operand that is not a (square) matrix; funcgrad's
    error is one too (and a ShapeError)."""
    with pytest.raises(np.linalg.LinAlgError):
        call(np)
    with pytest.raises(np.linalg.LinAlgError, match="dimension|2-D"):
        call(fnp)


@pytest.mark.parametrize("p", [None, 2, -2, "fro", "nuc", 1, np.inf])
@pytest.mark.parametrize("shape", [(0, 0), (2, 0, 0)])
def test_cond_of_empty_matrices_is_numpys_linalg_error(p, shape) -> None:
    # NumPy: "cond is not defined on empty arrays" (funcgrad indexed an empty spectrum)
    with pytest.raises(np.linalg.LinAlgError, match="empty"):
        fnp.linalg.cond(np.zeros(shape), p)


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (0, 0), (2, 0, 3)])
@pytest.mark.parametrize("hermitian", [False, True])
def test_pinv_of_empty_matrix(shape: tuple, hermitian: bool) -> None:
    """NumPy's (and JAX's) pseudo-inverse of an empty matrix is the empty transposed matrix."""
    if hermitian and shape[-1] != shape[-2]:
        return
    check_like_numpy(fnp.linalg.pinv, np.linalg.pinv, np.zeros(shape), hermitian=hermitian,
                     name="pinv")
    check_like_numpy(lambda a: fnp.linalg.pinv(a, rtol=None),
                     lambda a: np.linalg.pinv(a, rtol=None), np.zeros(shape), name="pinv")


@pytest.mark.parametrize("args", [
    ("ij,jk,kl->il", (2, 30), (30, 40), (40, 5)),
    ("ij,jk,kl,lm", (3, 2), (2, 6), (6, 4), (4, 3)),
    ("...i,i->...", (2, 3, 4), (4,)),
])
@pytest.mark.parametrize("optimize", ["greedy", "optimal", True])
def test_einsum_path_as_numpy(args: tuple, optimize) -> None:
    """NumPy's path and report; jitted operands give the same (shapes only), and einsum
    takes the path."""
    spec, *shapes = args
    ops = [np.linspace(0.5, 1.5, int(np.prod(s))).reshape(s) for s in shapes]
    path, report = np.einsum_path(spec, *ops, optimize=optimize)
    got = fnp.einsum_path(spec, *dev(ops), optimize=optimize)
    assert got[0] == path and got[1] == report
    traced = funcgrad.jit(lambda *a: fnp.einsum(
        spec, *a, optimize=fnp.einsum_path(spec, *a, optimize=optimize)[0]))
    assert_allclose(host(traced(*dev(ops))), np.einsum(spec, *ops, optimize=path))


def test_einsum_sums_ellipsis_axes_left_out_of_the_output_as_jax() -> None:
    # jnp.einsum("...n,...->n", X, y) (JAX 0.10.2): the broadcast axes are summed over.
    x = np.arange(24.0).reshape(2, 3, 4)
    y = np.arange(6.0).reshape(2, 3)
    want = np.array([220.0, 235.0, 250.0, 265.0])
    f = lambda a, b: fnp.einsum("...n,...->n", a, b)
    np.testing.assert_allclose(f(x, y), want)
    np.testing.assert_allclose(funcgrad.jit(f)(x, y), want)
    np.testing.assert_allclose(funcgrad.grad(lambda a: f(a, y).sum())(x),
                               np.broadcast_to(y[..., None], x.shape))
    assert float(fnp.einsum("...ij->", x)) == 276.0


@pytest.mark.parametrize("shape", [(5, 4), (3, 6), (2, 4, 4)])
@pytest.mark.parametrize("sub", [(0, 2), (1, 3), (2, 3)])
def test_svd_subset_by_index(shape: tuple, sub: tuple) -> None:
    # jax.numpy's subset_by_index (JAX 0.10.2 runs it on TPU only; on CPU only the whole
    # range): the triplets start..end-1 of the descending singular values
    a = np.random.RandomState(0).standard_normal(shape)
    lo, hi = sub
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    got = fnp.linalg.svd(dev(a), full_matrices=False, subset_by_index=sub)
    assert_allclose(got.S, s[..., lo:hi], rtol=1e-10)
    # the vectors up to sign: compare the rank-k pieces
    assert_allclose(fnp.matmul(got.U * got.S[..., None, :], got.Vh),
                    (u[..., :, lo:hi] * s[..., None, lo:hi]) @ vh[..., lo:hi, :], atol=1e-10)
    assert_allclose(fnp.linalg.svd(dev(a), False, False, subset_by_index=sub),
                    s[..., lo:hi], rtol=1e-10)
    g = funcgrad.grad(lambda x: fnp.linalg.svd(x, False, False, subset_by_index=sub).sum())(
        dev(a))
    assert_allclose(g, np.einsum("...ik,...kj->...ij", u[..., :, lo:hi], vh[..., lo:hi, :]),
                    atol=1e-8)


def test_svd_subset_by_index_hermitian_picks_eigenvalues_ascending() -> None:
    # JAX's hermitian path: eigh's subset (ascending eigenvalues), then |w| sorted descending
    h = np.diag([-5.0, 1.0, 3.0, -2.0])
    got = fnp.linalg.svd(dev(h), hermitian=True, subset_by_index=(0, 2), compute_uv=False)
    assert host(got).tolist() == [5.0, 2.0]
    u, s, vh = fnp.linalg.svd(dev(h), hermitian=True, subset_by_index=(2, 4))
    assert host(s).tolist() == [3.0, 1.0]
    assert_allclose((u * s[None, :]) @ vh, np.diag([0.0, 1.0, 3.0, 0.0]), atol=1e-12)


@pytest.mark.parametrize("kw, match", [
    (dict(subset_by_index=(0, 2)), "full_matrices and subset_by_index cannot both be set"),
    (dict(subset_by_index=(0, 2), compute_uv=False), "cannot both be set"),
    (dict(full_matrices=False, subset_by_index=(2, 2)), "empty index range"),
    (dict(full_matrices=False, subset_by_index=(-1, 2)), "non-negative"),
    (dict(full_matrices=False, subset_by_index=(0, 5)), "exceeds matrix size"),
    (dict(full_matrices=False, subset_by_index=(0, 1, 2)), "tuple of size 2"),
])
def test_svd_subset_by_index_errors(kw: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        fnp.linalg.svd(dev(np.ones((5, 4))), **kw)


def test_svd_subset_by_index_whole_range_with_full_matrices() -> None:
    a = np.random.RandomState(1).standard_normal((5, 4))
    u, s, vh = fnp.linalg.svd(dev(a), subset_by_index=(0, 4))
    assert host(u).shape == (5, 5) and host(vh).shape == (4, 4)
    assert_allclose(s, np.linalg.svd(a, compute_uv=False), rtol=1e-10)


_A3 = np.random.default_rng(5).standard_normal((2, 3, 4))
_B2 = np.random.default_rng(6).standard_normal((4, 3))
_V4 = np.random.default_rng(7).standard_normal(4)


@pytest.mark.parametrize("a, b, kw", [
    (_A3, _B2, dict(dtype=np.float32)),
    (_A3, _B2.T, dict(axes=[(-2, -1), (-1, -2), (-2, -1)])),
    (_A3, _A3, dict(axes=[(1, 2), (2, 1), (0, 1)])),
    (_A3, _V4, dict(axes=[(1, 2), (0,), (1,)])),
    (_V4, _V4, dict(axes=[0, 0, ()])),
    (_B2, _A3, dict(axes=[(1, 0), (-1, 1), (2, 0)], order="C", subok=True)),
])
def test_matmul_takes_numpys_gufunc_keywords(a, b, kw) -> None:
    # dtype= (the loop's dtype) and axes= (where the matrix axes are): a TypeError before
    want = np.matmul(a, b, **kw)
    for got in (fnp.matmul(dev(a), dev(b), **kw),
                funcgrad.jit(lambda x, y: fnp.matmul(x, y, **kw))(dev(a), dev(b))):
        got = host(got)
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-5)
    with pytest.raises(TypeError, match="cannot cast operand 1 from float64 to int64"):
        fnp.matmul(dev(_A3.astype(np.int64)), dev(_B2), dtype=np.int64)
    with pytest.raises(ValueError, match="axes should be a list"):
        fnp.matmul(dev(_V4), dev(_V4), axes=[0, 0])


@pytest.mark.parametrize("kw", [dict(keepdims=True), dict(keepdims=True, axis=1),
                                dict(keepdims=True, axis=-3), dict(dtype=np.float32)])
def test_vecdot_keepdims_and_dtype_as_numpys_gufunc(kw) -> None:
    want = np.vecdot(_A3, _A3, **kw)
    got = host(fnp.vecdot(dev(_A3), dev(_A3), **kw))
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-5)
    m = host(fnp.matvec(dev(_A3), dev(_V4), dtype=np.float32))
    assert m.dtype == np.float32
    np.testing.assert_allclose(m, np.matvec(_A3, _V4, dtype=np.float32), rtol=1e-5)


def test_matrix_rank_takes_jaxs_keywords() -> None:
    # JAX 0.10.2: matrix_rank(M, rtol=None, *, hermitian=False, tol=None): M= was refused
    m = np.diag([1.0, 1e-3])
    assert int(host(fnp.linalg.matrix_rank(M=dev(m), rtol=1e-2))) == 1
    assert int(host(fnp.linalg.matrix_rank(M=dev(m), hermitian=True, tol=1e-4))) == 2
    assert int(host(fnp.linalg.matrix_rank(dev(m), 1e-2))) == 1   # NumPy's positional tol
    with pytest.raises(TypeError, match="once"):
        fnp.linalg.matrix_rank(dev(m), M=dev(m))


def test_linalg_tensordot_takes_jaxs_out_sharding() -> None:
    # jax.numpy.linalg.tensordot(..., out_sharding=None): the keyword was refused
    from funcgrad import sharding
    from funcgrad.backend import get_default_device
    named = sharding.NamedSharding(sharding.Mesh([get_default_device()], ("x",)),
                                   sharding.PartitionSpec())
    x, y = dev(np.ones((2, 3))), dev(np.ones((3, 4)))
    for s in (None, named):
        assert_allclose(fnp.linalg.tensordot(x, y, axes=1, out_sharding=s), np.full((2, 4), 3.0))
