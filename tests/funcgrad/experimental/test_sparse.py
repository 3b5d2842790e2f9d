"""funcgrad.experimental.sparse (BCOO) against jax.experimental.sparse 0.10.2 (values
recorded as literals) and dense NumPy computations."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.experimental import sparse
from tests.helpers import assert_close, dev, host

M = np.array([[0.0, 1.0, 0.0, 2.0], [3.0, 0.0, 0.0, 0.0], [0.0, 0.0, 4.0, 0.0]])


def test_fromdense_layout_and_padding_as_jax():
    b = sparse.BCOO.fromdense(dev(M), nse=6)
    assert host(b.data).tolist() == [1.0, 2.0, 3.0, 4.0, 0.0, 0.0]
    assert host(b.indices).tolist() == [[0, 1], [0, 3], [1, 0], [2, 2], [3, 4], [3, 4]]
    assert b.indices.dtype == np.int32 and repr(b) == "BCOO(float64[3, 4], nse=6)"
    assert (b.shape, b.ndim, b.size, b.n_sparse, b.n_batch, b.n_dense) == ((3, 4), 2, 12, 2, 0, 0)
    jitted = funcgrad.jit(lambda m: sparse.BCOO.fromdense(m, nse=5))(dev(M))
    assert host(jitted.indices).tolist() == [[0, 1], [0, 3], [1, 0], [2, 2], [3, 4]]
    with pytest.raises(funcgrad.ConcretizationError, match="nse= must be given"):
        funcgrad.jit(lambda m: sparse.BCOO.fromdense(m))(dev(M))
    assert_close(b.todense(), M)
    assert sparse.BCOO.fromdense(M).nse == 4


def test_products_and_reductions_as_jax():
    b = sparse.BCOO.fromdense(dev(M), nse=6)
    v = dev(np.arange(4.0))
    assert host(b @ v).tolist() == [7.0, 0.0, 8.0]
    assert host(dev(np.arange(3.0)) @ b).tolist() == [3.0, 0.0, 8.0, 0.0]
    assert host(b.T @ dev(np.ones(3))).tolist() == [3.0, 1.0, 4.0, 2.0]
    assert (b @ dev(np.ones((4, 2)))).shape == (3, 2)
    assert float(host(b.sum())) == 10.0
    s1 = b.sum(1)
    assert host(s1.indices).tolist() == [[0], [0], [1], [2], [3], [3]]
    assert host(s1.todense()).tolist() == [3.0, 3.0, 4.0]
    assert host((b * dev(np.arange(4.0))).todense()).tolist() == [
        [0.0, 1.0, 0.0, 6.0], [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 8.0, 0.0]]
    assert (b + b).nse == 12 and isinstance(-b, sparse.BCOO)
    assert_close(b + dev(M), 2 * M)
    with pytest.raises(TypeError, match="make every element non"):
        b + 1.0


@pytest.mark.parametrize("seed", range(4))
def test_dot_general_matches_einsum(seed):
    rng = np.random.default_rng(seed)
    dense = rng.normal(size=(3, 4, 5)) * (rng.random((3, 4, 5)) < 0.4)
    sp = sparse.BCOO.fromdense(dev(dense))
    other = dev(rng.normal(size=(5, 4, 2)))
    got = sparse.bcoo_dot_general(sp, other, dimension_numbers=(((1, 2), (1, 0)), ((), ())))
    assert_close(got, np.einsum("ijk,kjl->il", dense, host(other)), rtol=1e-12, atol=1e-12)
    got = sparse.bcoo_dot_general(other, sp, dimension_numbers=(((0,), (2,)), ((), ())))
    assert_close(got, np.einsum("kab,ijk->abij", host(other), dense), rtol=1e-12, atol=1e-12)


def test_transformations():
    b = sparse.BCOO.fromdense(dev(M), nse=6)
    v = dev(np.arange(4.0))
    assert host(funcgrad.jit(lambda b, x: b @ x)(b, v)).tolist() == [7.0, 0.0, 8.0]
    assert host(funcgrad.vmap(lambda x: b @ x)(dev(np.ones((2, 4))))).tolist() == [
        [3.0, 3.0, 4.0], [3.0, 3.0, 4.0]]
    # JAX 0.10.2: the gradient of sum(A @ v) in the stored values, and in the dense matrix
    g = funcgrad.grad(lambda d: (sparse.BCOO((d, b.indices), shape=b.shape) @ v).sum())(b.data)
    assert host(g).tolist() == [1.0, 3.0, 0.0, 2.0, 0.0, 0.0]
    gm = funcgrad.grad(lambda m: (sparse.BCOO.fromdense(m, nse=4) @ dev(np.ones(4))).sum())(
        dev(M))
    assert host(gm).tolist() == [[0.0, 1.0, 0.0, 1.0], [1.0, 0.0, 0.0, 0.0],
                                 [0.0, 0.0, 1.0, 0.0]]
    out = funcgrad.jit(lambda b: b * 2.0)(b)  # a BCOO leaves jit whole
    assert isinstance(out, sparse.BCOO) and host(out.todense()).tolist() == (2 * M).tolist()


def test_duplicates_sorting_and_constructors():
    a = sparse.BCOO((dev(np.array([1.0, 2.0, 5.0, 0.0])),
                     dev(np.array([[1, 1], [0, 2], [1, 1], [3, 4]]))), shape=(3, 4))
    d = a.sum_duplicates()
    assert host(d.data).tolist() == [2.0, 6.0]  # JAX 0.10.2
    assert host(d.indices).tolist() == [[0, 2], [1, 1]]
    assert_close(d.todense(), a.todense())
    padded = sparse.bcoo_sum_duplicates(a, nse=3)
    assert host(padded.indices).tolist()[-1] == [3, 4] and padded.nse == 3
    s = a.sort_indices()
    assert host(s.indices).tolist() == [[0, 2], [1, 1], [1, 1], [3, 4]]
    e = sparse.eye(3, 4, k=1)
    assert_close(e.todense(), np.eye(3, 4, k=1))
    assert_close(sparse.empty((2, 2)).todense(), np.zeros((2, 2)))
    r = sparse.random_bcoo(funcgrad.random.key(0), (5, 6), nse=7)
    assert r.nse == 7 and len({tuple(i) for i in host(r.indices).tolist()}) == 7
    sp = scipy.sparse.random(4, 5, density=0.3, random_state=0, format="csr")
    assert_close(sparse.BCOO.from_scipy_sparse(sp).todense(), sp.toarray())
    c = sparse.bcoo_concatenate([sparse.BCOO.fromdense(dev(M), nse=5)] * 2, dimension=1)
    assert_close(c.todense(), np.concatenate([M, M], axis=1))
    ex = sparse.bcoo_extract(sparse.BCOO.fromdense(dev(M)), dev(np.arange(12.0).reshape(3, 4)))
    assert host(ex.data).tolist() == [1.0, 3.0, 4.0, 10.0]
    assert_close(sparse.todense(ex), np.where(M != 0, np.arange(12.0).reshape(3, 4), 0.0))


def test_bad_input():
    with pytest.raises(ValueError, match=r"indices must have shape \(nse, 2\)"):
        sparse.BCOO((np.ones(2), np.zeros((2, 3), dtype=int)), shape=(2, 2))
    with pytest.raises(ValueError, match="data must have shape"):
        sparse.BCOO((np.ones(3), np.zeros((2, 2), dtype=int)), shape=(2, 2))
    b = sparse.BCOO.fromdense(M)
    with pytest.raises(TypeError, match="sparse-sparse"):
        b @ b.T
    with pytest.raises(ValueError, match="batch and dense"):
        sparse.BCOO.fromdense(M, n_batch=1)
    with pytest.raises(ValueError, match="differ"):
        sparse.bcoo_dot_general(b, fnp.ones((3, 2)), dimension_numbers=(((1,), (0,)), ((), ())))


def test_sparsify_runs_numpy_code_on_bcoo():
    A = sparse.BCOO.fromdense(dev(M))
    v = dev(np.arange(4.0))

    @sparse.sparsify
    def f(m, v):
        return fnp.dot(m, v), m.T * 2.0, m.sum(0), fnp.sum(m), -m + m * v, m / 2.0

    mv, mt2, s0, s, mixed, half = f(A, v)
    assert host(mv).tolist() == [7.0, 0.0, 8.0]  # dense, as JAX's
    assert isinstance(mt2, sparse.BCOO)
    assert_close(mt2.todense(), 2 * M.T)
    assert_close(s0.todense(), M.sum(0))
    assert float(host(s)) == 10.0
    assert_close(mixed.todense(), -M + M * np.arange(4.0))
    assert_close(half.todense(), M / 2)
    assert host(funcgrad.jit(sparse.sparsify(lambda m, v: m @ v))(A, v)).tolist() == [
        7.0, 0.0, 8.0]
    g = funcgrad.grad(lambda d: sparse.sparsify(lambda m: fnp.sum(m @ v))(
        sparse.BCOO((d, A.indices), shape=A.shape)))(A.data)
    assert host(g).tolist() == [1.0, 3.0, 0.0, 2.0]
    with pytest.raises(TypeError, match="'exp' has no sparse rule"):
        sparse.sparsify(fnp.exp)(A)
    assert_close(sparse.sparsify(lambda m: sparse.todense(m) + 1.0)(A), M + 1)


def test_traced_indices_with_numpy_dense_operand() -> None:
    # A BCOO closed over by a traced function (cg's matvec in custom_linear_solve) has traced
    # indices while the dense operand may be a NumPy constant: that gather raised a
    # TracerArrayConversionError.
    from funcgrad.scipy.sparse.linalg import cg
    A = np.diag(4.0 * np.ones(6)) + np.diag(-np.ones(5), 1) + np.diag(-np.ones(5), -1)
    A_sp = sparse.BCOO.fromdense(dev(A))
    b = dev(np.linspace(1.0, 2.0, 6))
    assert_close(host(cg(lambda v: A_sp @ v, b, tol=1e-12)[0]), np.linalg.solve(A, host(b)))
    g = funcgrad.grad(lambda b: fnp.sum(cg(lambda v: A_sp @ v, b, tol=1e-12)[0]))(b)
    assert_close(host(g), np.linalg.solve(A, np.ones(6)))
    dense = dev(A)
    mm = funcgrad.jit(lambda ind: sparse.BCOO((A_sp.data, ind), shape=A_sp.shape) @ dense)
    assert_close(host(mm(A_sp.indices)), A @ A)
    mul = funcgrad.jit(lambda ind: (sparse.BCOO((A_sp.data, ind), shape=A_sp.shape)
                                    * dense).todense())
    assert_close(host(mul(A_sp.indices)), A * A)


def test_bcsr_as_jax() -> None:
    # JAX 0.10.2: fields (with padding to nse=5), products, conversions, jit/grad/vmap
    M = dev(np.array([[0.0, 1.0, 0.0], [2.0, 0.0, 3.0], [0.0, 0.0, 0.0]]))
    S = sparse.BCSR.fromdense(M)
    assert (host(S.data).tolist(), host(S.indices).tolist(), host(S.indptr).tolist()) == (
        [1.0, 2.0, 3.0], [1, 0, 2], [0, 1, 3, 3])
    assert repr(S) == "BCSR(float64[3, 3], nse=3)"
    P = sparse.BCSR.fromdense(M, nse=5)
    assert host(P.indices).tolist() == [1, 0, 2, 3, 3] and host(P.indptr).tolist() == [0, 1, 3, 3]
    assert host(P.todense()).tolist() == host(M).tolist()
    assert host(P @ dev(np.arange(3.0))).tolist() == [1.0, 6.0, 0.0]
    assert host(S @ dev(np.ones((3, 2)))).tolist() == [[1.0, 1.0], [5.0, 5.0], [0.0, 0.0]]
    assert host(S.to_bcoo().indices).tolist() == [[0, 1], [1, 0], [1, 2]]
    assert host(sparse.BCSR.from_bcoo(sparse.BCOO.fromdense(M)).indptr).tolist() == [0, 1, 3, 3]
    assert host(funcgrad.jit(lambda s: s @ dev(np.ones(3)))(S)).tolist() == [1.0, 5.0, 0.0]
    g = funcgrad.grad(lambda d: (sparse.BCSR((d, S.indices, S.indptr), shape=S.shape)
                                 @ dev(np.arange(3.0))).sum())(S.data)
    assert host(g).tolist() == [1.0, 0.0, 2.0]
    assert host(funcgrad.vmap(lambda v: S @ v)(dev(np.ones((2, 3)))))[1].tolist() == [1.0, 5.0, 0.0]
    assert host(sparse.todense(S.T)).tolist() == host(M).T.tolist()  # JAX has no transpose
    import scipy.sparse as ss
    assert host(sparse.BCSR.from_scipy_sparse(ss.csr_matrix(host(M))).indptr).tolist() == [0, 1, 3, 3]


def test_bcoo_reshape() -> None:
    M = dev(np.array([[0.0, 1.0, 0.0], [2.0, 0.0, 3.0], [0.0, 0.0, 0.0]]))
    A = sparse.BCOO.fromdense(M, nse=4)  # one padding place stays padding
    assert host(A.reshape(9).indices).tolist() == [[1], [3], [5], [9]]
    assert host(A.reshape(-1, 9).todense()).tolist() == [host(M).ravel().tolist()]
    assert host(sparse.bcoo_reshape(A, new_sizes=(3, 3), dimensions=(1, 0)).todense()).tolist() \
        == host(M).T.tolist()
    with pytest.raises(ValueError, match="cannot reshape"):
        A.reshape(4, 2)


def test_sparse_grad_and_value_and_grad_as_jax() -> None:
    # JAX 0.10.2: gradients with respect to a BCOO/BCSR are sparse arrays of its pattern
    M = dev(np.array([[0.0, 1.0, 0.0], [2.0, 0.0, 3.0]]))
    S = sparse.BCOO.fromdense(M)
    x = dev(np.arange(3.0))

    def f(s, v):
        return (s @ v).sum() ** 2

    g = sparse.grad(f)(S, x)
    assert type(g) is sparse.BCOO and host(g.data).tolist() == [14.0, 0.0, 28.0]
    assert host(g.indices).tolist() == host(S.indices).tolist()
    v, (gs, gx) = sparse.value_and_grad(f, argnums=(0, 1))(S, x)
    assert float(host(v)) == 49.0 and host(gx).tolist() == [28.0, 14.0, 42.0]
    g3, aux = sparse.grad(lambda s: ((s @ dev(np.ones(3))).sum(), 5), has_aux=True)(S)
    assert host(g3.data).tolist() == [1.0, 1.0, 1.0] and aux == 5
    gc = sparse.grad(lambda s: (s @ dev(np.ones(3))).sum())(sparse.BCSR.fromdense(M))
    assert type(gc) is sparse.BCSR and host(gc.data).tolist() == [1.0, 1.0, 1.0]
    gd = sparse.grad(lambda d: (d["a"] @ dev(np.ones(3))).sum() * d["b"])({"a": S, "b": 2.0})
    assert host(gd["a"].data).tolist() == [2.0, 2.0, 2.0] and float(host(gd["b"])) == 6.0
    assert host(funcgrad.jit(sparse.grad(f))(S, x).data).tolist() == [14.0, 0.0, 28.0]
