"""Focused tests of dot_general and the funcgrad.numpy products built on it."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import DEVICE, assert_allclose, dev, host, rand

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.errors import ShapeError
from funcgrad.ops import reductions as red
from funcgrad.ops.linalg import dot_general
from funcgrad.test_util import check_grads

_EINSUM = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("ii", [(3, 3)]),
    ("ii->i", [(3, 3)]),
    ("ij->ji", [(2, 3)]),
    ("ij->", [(2, 3)]),
    ("i,i", [(3,), (3,)]),
    ("i,i->i", [(3,), (3,)]),
    ("i,j->ij", [(2,), (3,)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]),
    ("...ij,...jk", [(1, 3, 4), (2, 4, 5)]),
    ("ij,ij->ij", [(1, 3), (2, 3)]),
    ("iij->j", [(3, 3, 2)]),
    ("iji->ij", [(3, 2, 3)]),
    ("ab,bc,cd->ad", [(2, 3), (3, 4), (4, 5)]),
    ("ab,bc,cd->da", [(2, 3), (3, 4), (4, 5)]),
    ("i...->...", [(2, 3)]),
    ("...", [(2, 3)]),
    ("Ba,aB", [(2, 3), (3, 2)]),
    ("ijk,jil->kl", [(2, 3, 4), (3, 2, 5)]),
    ("a,b,c->abc", [(2,), (3,), (4,)]),
    ("ij,j,jk->ik", [(2, 3), (3,), (3, 2)]),
    ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),
    ("i,i,i->", [(4,), (4,), (4,)]),
    (" ij , jk -> ki ", [(2, 3), (3, 4)]),
]


@pytest.mark.parametrize("spec,shapes", _EINSUM, ids=[s for s, _ in _EINSUM])
def test_einsum_matches_numpy(spec, shapes) -> None:
    rng = np.random.default_rng(0)
    ops = [rng.standard_normal(s) for s in shapes]
    want = np.einsum(spec, *ops)
    got = fnp.einsum(spec, *dev(ops))
    assert_allclose(got, want)
    check_grads(lambda *o: fnp.einsum(spec, *o), dev(ops), order=1, modes=("rev",))


def test_einsum_dtypes_and_options() -> None:
    a = rand((2, 3), np.int32)
    b = rand((3,), np.float32)
    for spec, ops in (("ij,j->i", (a, b)), ("ij->i", (a,)), ("ij,ij->", (a, a))):
        want = np.einsum(spec, *ops)
        got = fnp.einsum(spec, *dev(ops), optimize="greedy")
        assert_allclose(got, want)
    m = rand((3, 3), np.bool_)
    assert_allclose(fnp.einsum("ij,jk->ik", dev(m), dev(m)), np.einsum("ij,jk->ik", m, m))
    assert_allclose(fnp.einsum("ii->", dev(m)), np.einsum("ii->", m))
    x = rand((2, 3))
    assert fnp.einsum("ij->j", dev(x), dtype=np.float32, casting="unsafe").dtype == np.float32
    with pytest.raises(TypeError):  # as NumPy: casting='safe' by default
        fnp.einsum("ij->j", dev(x), dtype=np.float32)


def test_einsum_errors() -> None:
    x = rand((2, 3))
    with pytest.raises(ValueError, match="operands"):
        fnp.einsum("ij,jk", x)
    with pytest.raises(ShapeError, match="subscripts"):
        fnp.einsum("ijk", x)
    with pytest.raises(ValueError, match="does not appear"):
        fnp.einsum("ij->k", x)
    with pytest.raises(ValueError, match="more than once"):
        fnp.einsum("ij->ii", x)
    with pytest.raises(ShapeError, match="size of label 'j'"):
        fnp.einsum("ij,jk", x, rand((4, 2)))
    with pytest.raises(ShapeError, match="repeated subscript"):
        fnp.einsum("ii", x)
    with pytest.raises(ValueError, match="ellipsis"):
        fnp.einsum("...i->...i...", x)
    with pytest.raises(TypeError, match="out="):
        fnp.einsum("ij", x, out=x)


_DNUMS = [
    ((2, 3), (3, 4), (((1,), (0,)), ((), ()))),
    ((3, 2), (3, 4), (((0,), (0,)), ((), ()))),
    ((2, 3), (4, 3), (((1,), (1,)), ((), ()))),
    ((2, 3, 4), (2, 4, 5), (((2,), (1,)), ((0,), (0,)))),
    ((4, 3, 2), (2, 5, 4), (((0,), (2,)), ((2,), (0,)))),
    ((2, 3, 4), (4, 2, 5), (((2, 0), (0, 1)), ((), ()))),
    ((2, 3), (4,), (((), ()), ((), ()))),
    ((3,), (3,), (((0,), (0,)), ((), ()))),
    ((2, 3, 4, 5), (5, 3, 2, 6), (((3, 1), (0, 1)), ((0,), (2,)))),
]


@pytest.mark.parametrize("la,ra,dn", _DNUMS, ids=[str(d) for d in range(len(_DNUMS))])
def test_dot_general_grad_of_grad(la, ra, dn) -> None:
    a, b = dev(rand(la)), dev(rand(ra, seed=3))
    want = np.einsum(_einsum_of(dn, len(la), len(ra)), host(a), host(b))
    assert_allclose(dot_general(a, b, dn), want)
    check_grads(lambda a, b: dot_general(a, b, dn), (a, b), order=3)

    def loss(a, b):
        y = dot_general(a, b, dn)
        return red.reduce_sum(y * y)

    check_grads(funcgrad.grad(loss, argnums=(0, 1)), (a, b), order=1)


def _einsum_of(dn, ln, rn):
    """The einsum string of a dot_general, as the reference."""
    (lc, rc), (lb, rb) = dn
    letters = iter("abcdefghijklmnop")
    la = [None] * ln
    ra = [None] * rn
    for i, j in zip(lb, rb):
        la[i] = ra[j] = next(letters)
    for i, j in zip(lc, rc):
        la[i] = ra[j] = next(letters)
    for k in range(ln):
        la[k] = la[k] or next(letters)
    for k in range(rn):
        ra[k] = ra[k] or next(letters)
    out = [la[i] for i in lb] + [la[k] for k in range(ln) if k not in lc and k not in lb]
    out += [ra[k] for k in range(rn) if k not in rc and k not in rb]
    return f"{''.join(la)},{''.join(ra)}->{''.join(out)}"


@pytest.mark.parametrize("la,ra,dn", _DNUMS, ids=[str(d) for d in range(len(_DNUMS))])
@pytest.mark.parametrize("axes", [(0, None), (None, 0), (0, 0), (-1, 1)])
def test_dot_general_batching(la, ra, dn, axes) -> None:
    B = 3
    ad, bd = axes
    a = rand((B,) + la)
    b = rand((B,) + ra, seed=4)
    a = np.moveaxis(a, 0, ad) if ad is not None else a[0]
    b = np.moveaxis(b, 0, bd) if bd is not None else b[0]
    got = funcgrad.vmap(lambda a, b: dot_general(a, b, dn), in_axes=(ad, bd))(*dev((a, b)))
    outs = []
    for k in range(B):
        ak = np.take(a, k, axis=ad) if ad is not None else a
        bk = np.take(b, k, axis=bd) if bd is not None else b
        outs.append(host(dot_general(ak, bk, dn)))
    assert_allclose(got, np.stack(outs))


def test_dot_general_errors_and_dtypes() -> None:
    a, b = rand((2, 3)), rand((4, 5))
    with pytest.raises(ShapeError, match=r"contracting dims do not match.*dim 1 has size 3"):
        dot_general(a, b, (((1,), (0,)), ((), ())))
    with pytest.raises(ShapeError, match="out of bounds"):
        dot_general(a, b, (((2,), (0,)), ((), ())))
    with pytest.raises(ShapeError, match="batch dims do not match"):
        dot_general(rand((2, 3)), rand((3, 3)), (((1,), (1,)), ((0,), (0,))))
    with pytest.raises(ShapeError, match="must be distinct"):
        dot_general(rand((3, 3)), rand((3, 3)), (((0,), (0,)), ((0,), (1,))))
    i = rand((2, 3), np.int64)
    f32 = rand((3, 2), np.float32)
    assert dot_general(i, f32, (((1,), (0,)), ((), ()))).dtype == np.float64
    assert dot_general(f32, f32.T, (((1,), (0,)), ((), ()))).dtype == np.float32
    assert dot_general(rand((3,), np.int8), rand((3,), np.int8),
                       (((0,), (0,)), ((), ()))).dtype == np.int8
    # Python scalar operands follow NEP 50 in the primitive.
    assert dot_general(f32, 2.0, (((), ()), ((), ()))).dtype == np.float32


def test_matmul_errors_and_semantics() -> None:
    with pytest.raises(ValueError, match="enough dimensions"):
        fnp.matmul(rand((3,)), 2.0)
    with pytest.raises(ShapeError, match="not aligned"):
        fnp.matmul(rand((2, 3)), rand((4, 2)))
    with pytest.raises(ShapeError, match="cannot be broadcast"):
        fnp.matmul(rand((2, 2, 3)), rand((4, 3, 2)))
    with pytest.raises(ShapeError, match="not aligned"):
        fnp.dot(rand((2, 3)), rand((2, 3)))
    with pytest.raises(ShapeError, match="different lengths"):
        fnp.vdot(rand((2, 3)), rand((5,)))
    with pytest.raises(ShapeError, match="shape-mismatch"):
        fnp.tensordot(rand((2, 3)), rand((2, 3)), 1)
    # Lists work like arrays; plain ndarrays come out.
    out = fnp.matmul([[1.0, 2.0]], [[3.0], [4.0]])
    assert host(out).tolist() == [[11.0]]
    out = fnp.matmul(np.ones((2, 2)), np.ones((2, 2)))
    assert type(out) is np.ndarray


@pytest.mark.skipif(DEVICE != "cpu", reason="host constants meet host arrays: a host-only check")
def test_matmul_operator_on_tracers() -> None:
    w = rand((3, 4))
    x = rand((5, 3), seed=1)

    def loss(w):
        y = x @ w  # ndarray @ tracer routes to fnp.matmul
        z = y.T @ y  # tracer @ tracer
        return red.reduce_sum(y * y) + 0.1 * red.reduce_sum(z)

    g = funcgrad.grad(loss)(w)
    y = x @ w
    assert_allclose(g, x.T @ (2 * y + 0.2 * y @ np.ones((4, 4))))
    check_grads(loss, (w,), order=2)


def test_vdot_complex_forward_derivative() -> None:
    a = rand((3,), np.complex128)
    b = rand((3,), np.complex128, seed=1)
    ta = rand((3,), np.complex128, seed=2)
    tb = rand((3,), np.complex128, seed=3)
    _, t = funcgrad.jvp(fnp.vdot, (a, b), (ta, tb))
    assert_allclose(t, np.vdot(ta, b) + np.vdot(a, tb))


def test_kron_and_outer_dtypes() -> None:
    a = rand((2,), np.float32)
    assert fnp.outer(a, 2.0).dtype == np.outer(a, 2.0).dtype
    assert fnp.kron(a, 2.0).dtype == np.kron(a, 2.0).dtype
    assert fnp.dot(a, 2.0).dtype == np.dot(a, 2.0).dtype
    assert_allclose(fnp.kron(rand((2, 3)), rand((3,))), np.kron(rand((2, 3)), rand((3,))))
