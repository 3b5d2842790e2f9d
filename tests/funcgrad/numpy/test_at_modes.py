"""``x.at[idx]`` with JAX's out-of-bounds modes, ``fill_value``, ``wrap_negative_indices`` and
``apply``: values against NumPy references of JAX's documented semantics, and jit, vmap and
grad."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev, host
from hypothesis import given
from hypothesis import strategies as st

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.ops import gather as ga
from funcgrad.ops import indexing as ix
from funcgrad.ops import scatter as sc
from funcgrad.ops.indexing import Operand
from funcgrad.test_util import check_grads

# ---------------------------------------------------------------------------------------------
# NumPy references of JAX's semantics (1-D index arrays into axis 0)


def _normalize(i: np.ndarray, n: int, wrap: bool = True) -> np.ndarray:
    return np.where(i < 0, i + n, i) if wrap else i


def ref_get(x: np.ndarray, i: np.ndarray, mode: str, fill=None, wrap: bool = True):
    n = x.shape[0]
    j = _normalize(i, n, wrap)
    if mode in ("promise_in_bounds", "clip"):
        return x[np.clip(j, 0, n - 1)]
    bad = (j < 0) | (j >= n)
    out = x[np.clip(j, 0, n - 1)].astype(x.dtype)
    if fill is None:
        fill = np.nan if x.dtype.kind in "fc" else (
            np.iinfo(x.dtype).min if x.dtype.kind == "i" else np.iinfo(x.dtype).max)
    out[bad] = fill
    return out


def ref_update(x: np.ndarray, i: np.ndarray, v: np.ndarray, op: str, mode: str,
               wrap: bool = True) -> np.ndarray:
    n = x.shape[0]
    j = _normalize(i, n, wrap)
    out = x.copy()
    v = np.broadcast_to(v, i.shape + x.shape[1:])
    for k, p in enumerate(j):
        if mode == "clip":
            p = min(max(p, 0), n - 1)
        elif not 0 <= p < n:
            continue  # dropped ("promise_in_bounds", "drop", "fill")
        if op == "set":
            out[p] = v[k]
        elif op == "add":
            out[p] += v[k]
        elif op == "multiply":
            out[p] *= v[k]
        elif op == "min":
            out[p] = np.minimum(out[p], v[k])
        elif op == "max":
            out[p] = np.maximum(out[p], v[k])
        elif op == "power":  # once per occurrence, as numpy.power.at and JAX
            out[p] = out[p] ** v[k]
    return out


MODES = ("promise_in_bounds", "clip", "drop", "fill")
OPS = ("set", "add", "multiply", "min", "max", "power")


# ---------------------------------------------------------------------------------------------
# JAX's documented examples (jax.numpy.ndarray.at), as literal expected values


def test_jax_documented_examples() -> None:
    x = dev(np.arange(5.0))
    assert_allclose(fnp.at(x)[2].get(), np.array(2.0))
    assert_allclose(fnp.at(x)[2].add(10), np.array([0.0, 1.0, 12.0, 3.0, 4.0]))
    assert_allclose(fnp.at(x)[10].add(10), np.arange(5.0))  # dropped
    assert_allclose(fnp.at(x)[20].add(10, mode="clip"), np.array([0.0, 1.0, 2.0, 3.0, 14.0]))
    assert_allclose(fnp.at(x)[20].get(), np.array(4.0))  # clipped
    assert np.isnan(host(fnp.at(x)[20].get(mode="fill")))
    assert_allclose(fnp.at(x)[20].get(mode="fill", fill_value=-1), np.array(-1.0))
    assert_allclose(fnp.at(x)[-1].set(99), np.array([0.0, 1.0, 2.0, 3.0, 99.0]))
    assert_allclose(fnp.at(x)[-1].set(99, wrap_negative_indices=False, mode="drop"),
                    np.arange(5.0))


def test_power_repeated_indices_as_jax() -> None:
    # jax.numpy 0.10.2 (x64): x.at[i].power(v) is x ** scatter_mul(ones, i, v), so a repeated
    # index is raised once per occurrence; values and gradient recorded from JAX.
    x = dev(np.array([2.0, 3.0]))
    i = np.array([0, 0, 1])
    v = dev(np.array([2.0, 3.0, 2.0]))
    assert_allclose(fnp.at(x)[i].power(v), np.array([64.0, 9.0]))
    assert_allclose(funcgrad.grad(lambda x: fnp.sum(x.at[i].power(v)))(x),
                    np.array([192.0, 6.0]))
    xi = dev(np.arange(12, dtype=np.int32).reshape(3, 4))
    got = fnp.at(xi)[..., np.array([0, 0, 3])].power(2)
    assert host(got).dtype == np.int32
    assert_allclose(got, np.array([[0, 1, 2, 9], [256, 5, 6, 49], [4096, 9, 10, 121]], np.int32))


def test_default_fill_values_by_dtype() -> None:
    for dt, want in ((np.float32, np.nan), (np.int32, np.iinfo(np.int32).min),
                     (np.uint8, 255), (np.bool_, True), (np.complex128, np.nan)):
        x = dev(np.zeros(3, dt))
        got = host(fnp.at(x)[np.array([5])].get(mode="fill"))
        assert got.dtype == dt
        if dt in (np.float32, np.complex128):
            assert np.isnan(got[0])
        else:
            assert got[0] == want


@given(st.lists(st.integers(-9, 9), min_size=1, max_size=6),
       st.sampled_from(MODES), st.booleans())
def test_get_matches_reference(idx: list[int], mode: str, wrap: bool) -> None:
    hx = np.arange(1.0, 6.0)
    i = np.array(idx)
    want = ref_get(hx, i, mode, -7.0, wrap)
    kw = {"mode": mode, "wrap_negative_indices": wrap}
    if mode in ("drop", "fill"):
        kw["fill_value"] = -7.0
    assert_allclose(fnp.at(dev(hx))[dev(i)].get(**kw), want)
    f = funcgrad.jit(lambda x, i: x.at[i].get(**kw))
    assert_allclose(f(dev(hx), dev(i)), want)


@given(st.lists(st.integers(-8, 8), min_size=1, max_size=6),
       st.sampled_from(MODES), st.sampled_from(OPS), st.booleans())
def test_updates_match_reference(idx: list[int], mode: str, op: str, wrap: bool) -> None:
    hx = np.arange(1.0, 6.0)
    i = np.array(idx)
    v = np.linspace(-2.0, 3.0, len(idx))
    want = ref_update(hx, i, v, op, mode, wrap)
    kw = {"mode": mode, "wrap_negative_indices": wrap}
    got = getattr(fnp.at(dev(hx))[dev(i)], op)(dev(v), **kw)
    assert_allclose(got, want)
    f = funcgrad.jit(lambda x, i, v: getattr(x.at[i], op)(v, **kw))
    assert_allclose(f(dev(hx), dev(i), dev(v)), want)


def test_static_integer_indices_out_of_range() -> None:
    y = dev(np.arange(12.0).reshape(3, 4))
    hy = host(y)
    assert np.isnan(host(fnp.at(y)[1, 7].get(mode="fill")))
    assert_allclose(fnp.at(y)[1, 7].get(), np.array(hy[1, 3]))
    assert_allclose(fnp.at(y)[5].get(mode="fill", fill_value=0.0), np.zeros(4))
    assert_allclose(fnp.at(y)[5].set(1.0), hy)
    want = hy.copy()
    want[2] = 1.0
    assert_allclose(fnp.at(y)[5].set(1.0, mode="clip"), want)
    # slices stay Python slices: in range by construction
    assert_allclose(fnp.at(y)[1:9, 0].add(1.0), hy + np.array([[0.0], [1.0], [1.0]]) *
                    (np.arange(4) == 0))


def test_multi_axis_and_slices_fill() -> None:
    hy = np.arange(12.0).reshape(3, 4)
    y = dev(hy)
    r = np.array([0, 5, -1])
    c = np.array([1, 1, 9])
    got = host(fnp.at(y)[dev(r), dev(c)].get(mode="fill", fill_value=-1.0))
    assert_allclose(got, np.array([1.0, -1.0, -1.0]))
    got = host(fnp.at(y)[dev(r), 1:3].get(mode="fill"))
    assert_allclose(got[[0, 2]], hy[[0, 2], 1:3])
    assert np.isnan(got[1]).all()
    want = hy.copy()
    want[[0, 2], 1:3] = -1.0
    assert_allclose(fnp.at(y)[dev(r), 1:3].set(-1.0), want)
    # an index array used on two axes: each use is checked against its own axis
    d = np.array([0, 3, -1])
    got = host(fnp.at(y)[dev(d), dev(d)].get(mode="fill", fill_value=-1.0))
    assert_allclose(got, np.array([0.0, -1.0, 11.0]))


def test_raise_mode_is_numpys() -> None:
    x = dev(np.zeros(3))
    with pytest.raises(IndexError, match="out of bounds"):
        fnp.at(x)[dev(np.array([3]))].set(1.0, mode="raise")
    with pytest.raises(ValueError, match="promise_in_bounds"):
        fnp.at(x)[0].set(1.0, mode="wrap")


def test_accepts_jax_keywords_and_enum_modes() -> None:
    x = dev(np.arange(3.0))
    i = dev(np.array([0, 4]))
    mode = ix.GatherScatterMode.FILL_OR_DROP
    got = fnp.at(x)[i].add(1.0, indices_are_sorted=True, unique_indices=True, mode=mode)
    assert_allclose(got, np.array([1.0, 1.0, 2.0]))
    assert np.isnan(host(fnp.at(x)[i].get(mode=mode))[1])
    assert_allclose(fnp.at(x)[i].get(mode=ix.GatherScatterMode.CLIP), np.array([0.0, 2.0]))


# ---------------------------------------------------------------------------------------------
# Transformations


def test_grad_of_fill_and_drop() -> None:
    hx = np.array([1.0, 2.0, 3.0, 4.0])
    i = np.array([0, 7, -1, 2, -9])

    def f(x):
        return fnp.sum(x.at[i].get(mode="fill", fill_value=0.0) ** 2)

    g = funcgrad.grad(f)(dev(hx))
    assert_allclose(g, np.array([2.0, 0.0, 6.0, 8.0]))
    assert_allclose(funcgrad.jit(funcgrad.grad(f))(dev(hx)), g)
    # a NaN fill does not leak into the derivative
    g = funcgrad.grad(lambda x: fnp.nansum(x.at[i].get(mode="fill")))(dev(hx))
    assert_allclose(g, np.array([1.0, 0.0, 1.0, 1.0]))
    for op in ("set", "add", "multiply", "min", "max"):
        def h(x, v, op=op):
            return fnp.sum(fnp.sin(getattr(fnp.at(x)[i], op)(v, mode="drop")))

        check_grads(h, (dev(hx), dev(np.array([0.5, 1.5, -0.5, 2.5, 3.5]))), order=1,
                    modes=("fwd", "rev"))


def test_fill_mode_primitives_grads_and_vmap() -> None:
    x = np.array([1.0, 2.0, 3.0])
    i = dev(np.array([2, 5, -1, -4]))

    def g(x):
        return ga.gather(x, i, indexer=(Operand(0),), mode="fill")

    assert_allclose(g(dev(x)), np.array([3.0, 0.0, 3.0, 0.0]))
    check_grads(g, (dev(x),), order=2)
    u = np.array([1.0, 2.0, 3.0, 4.0])
    s = sc.scatter_add(dev(x), dev(u), i, indexer=(Operand(0),), mode="fill")
    assert_allclose(s, np.array([1.0, 2.0, 7.0]))
    check_grads(lambda x, u: sc.scatter(x, u, i, indexer=(Operand(0),), mode="fill"),
                (dev(x), dev(u)), order=2)
    xs = np.stack([x, 10 * x])
    iss = np.array([[0, 3], [-1, 2]])
    got = funcgrad.vmap(lambda x, i: ga.gather(x, i, indexer=(Operand(0),), mode="fill"))(
        dev(xs), dev(iss))
    assert_allclose(got, np.array([[1.0, 0.0], [30.0, 30.0]]))
    got = funcgrad.vmap(lambda x, i: sc.scatter(x, -1.0, i, indexer=(Operand(0),),
                                                mode="fill"))(dev(xs), dev(iss))
    assert_allclose(got, np.array([[-1.0, 2.0, 3.0], [10.0, 20.0, -1.0]]))


def test_vmap_of_at_modes_matches_loop() -> None:
    hx = np.arange(10.0).reshape(2, 5)
    hi = np.array([[0, 7], [-2, 5]])
    for mode in MODES:
        f = lambda x, i, mode=mode: (x.at[i].get(mode=mode, fill_value=-1.0),  # noqa: E731
                                     x.at[i].add(1.0, mode=mode))
        got = funcgrad.vmap(f)(dev(hx), dev(hi))
        for b in range(2):
            want = (ref_get(hx[b], hi[b], mode, -1.0), ref_update(hx[b], hi[b], 1.0, "add",
                                                                  mode))
            assert_allclose((got[0][b], got[1][b]), want)


def test_apply() -> None:
    hx = np.arange(5.0)
    i = np.array([1, 1, 2, 9])
    want = hx.copy()
    np.multiply.at(want, i[:3], 2.0)
    assert_allclose(fnp.at(dev(hx))[dev(i)].apply(lambda v: v * 2), want)
    f = funcgrad.jit(lambda x, i: x.at[i].apply(lambda v: v * 2))
    assert_allclose(f(dev(hx), dev(i)), want)  # traced indices: counted at run time
    g = funcgrad.grad(lambda x: fnp.sum(x.at[i].apply(fnp.sin)))(dev(hx))
    assert_allclose(g, np.array([1.0, np.cos(np.sin(1.0)) * np.cos(1.0), np.cos(2.0), 1.0,
                                 1.0]))
    assert_allclose(fnp.at(dev(hx))[dev(i)].apply(fnp.exp, unique_indices=True, mode="clip"),
                    np.array([0.0, np.e, np.exp(2.0), 3.0, np.exp(4.0)]))


def test_traced_fill_value_differentiates() -> None:
    x = dev(np.array([1.0, 2.0, 3.0]))
    i = dev(np.array([0, 5]))
    w = dev(np.array([1.0, 10.0]))

    def f(x, fill):
        return fnp.sum(x.at[i].get(mode="fill", fill_value=fill) * w)

    assert_allclose(funcgrad.jit(f)(x, 4.0), np.array(41.0))
    gx, gf = funcgrad.grad(f, argnums=(0, 1))(x, 4.0)
    assert_allclose(gx, np.array([1.0, 0.0, 0.0]))
    assert_allclose(gf, np.array(10.0))


# ---------------------------------------------------------------------------------------------
# take_along_axis(..., mode=...): JAX's modes, "one_hot" as JAX's one-hot contraction


def ref_one_hot_take(x: np.ndarray, idx: np.ndarray, axis: int) -> np.ndarray:
    """JAX's ``take_along_axis(mode="one_hot")``: indices wrapped once, one-hot rows (all zero
    out of range) contracted with ``x``'s 1-D slices along ``axis``."""
    n = x.shape[axis]
    xm, im = np.moveaxis(x, axis, -1), np.moveaxis(idx, axis, -1)
    ok = (im >= -n) & (im < n)
    hot = np.where(ok[..., None], np.eye(n)[np.where(ok, im % n, 0)], 0.0)  # (..., m, n)
    return np.moveaxis(np.sum(hot * xm[..., None, :], axis=-1), -1, axis)


@given(st.data())
def test_take_along_axis_one_hot_matches_jax(data) -> None:
    ndim = data.draw(st.integers(1, 3))
    shape = tuple(data.draw(st.lists(st.integers(1, 4), min_size=ndim, max_size=ndim)))
    axis = data.draw(st.integers(-ndim, ndim - 1))
    ishape = list(shape)
    ishape[axis % ndim] = data.draw(st.integers(0, 5))
    n = shape[axis % ndim]
    size = int(np.prod(ishape))
    idx = np.array(data.draw(st.lists(st.integers(-2 * n - 1, 2 * n), min_size=size,
                                      max_size=size)), dtype=np.int64).reshape(ishape)
    x = np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape) * -1.5
    got = fnp.take_along_axis(dev(x), dev(idx), axis, mode="one_hot")
    assert_allclose(host(got), ref_one_hot_take(x, idx, axis))
    assert host(got).dtype == x.dtype


def test_take_along_axis_modes_under_jit_vmap_grad() -> None:
    x = np.array([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]])
    idx = np.array([[0, -1, 3, 7], [-4, 1, 2, -3]])
    want = ref_one_hot_take(x, idx, 1)
    take = lambda a, i: fnp.take_along_axis(a, i, 1, mode="one_hot")  # noqa: E731
    xd, idd = dev(x), dev(idx)
    assert_allclose(host(funcgrad.jit(take)(xd, idd)), want)
    assert_allclose(host(funcgrad.vmap(take, (0, 0))(xd[:, None], idd[:, None]))[:, 0], want)
    # d/dx of sum: how often each element is read in range (0 where reads were out of range)
    counts = np.zeros_like(x)
    for r in range(2):
        for i in idx[r]:
            if -3 <= i < 3:
                counts[r, i] += 1
    assert_allclose(host(funcgrad.grad(lambda a: fnp.sum(take(a, idd)))(xd)), counts)
    check_grads(lambda a: take(a, idd), (xd,), order=2)
    # The other JAX modes read through the same table.
    fill = fnp.take_along_axis(xd, idd, 1, mode="fill", fill_value=-9.0)
    assert_allclose(host(fill), np.where(want == 0, -9.0, want))
    assert np.isnan(host(fnp.take_along_axis(xd, idd, 1, mode="drop"))[0, 2])
    assert_allclose(host(fnp.take_along_axis(xd, idd, 1, mode="clip"))[0, 2:], np.array([3.0, 3.0]))
    with pytest.raises(ValueError, match=r"^fnp.take_along_axis: unknown gather/scatter mode"):
        fnp.take_along_axis(xd, idd, 1, mode="wrap")
    with pytest.raises(IndexError):  # mode=None: NumPy's check
        fnp.take_along_axis(xd, idd, 1)


def test_at_one_hot_reads_zero_and_refuses_writes() -> None:
    x = dev(np.array([1.0, 2.0, 3.0]))
    i = dev(np.array([0, -1, 5]))
    assert_allclose(host(fnp.at(x)[i].get(mode="one_hot")), np.array([1.0, 3.0, 0.0]))
    assert_allclose(host(fnp.at(x)[i].get(mode=ix.GatherScatterMode.ONE_HOT, fill_value=5.0)),
                    np.array([1.0, 3.0, 0.0]))
    for method in ("set", "add", "multiply", "min", "max"):
        with pytest.raises(ValueError, match=rf"^x.at\[...\].{method}: GatherScatterMode."
                                             "ONE_HOT is a mode for reads"):
            getattr(fnp.at(x)[i], method)(1.0, mode="one_hot")


def test_take_fill_mode_as_jax() -> None:
    # jnp.take(a, idx, axis=1, mode="fill") recorded from jax.numpy 0.10.2: out of range reads
    # the fill value (NaN, the integer minimum, or fill_value), -1 is the last element.
    a = np.arange(12.0).reshape(3, 4)
    idx = np.array([[0, 5], [-1, -5]])
    want = np.array([[[0.0, np.nan], [3.0, np.nan]], [[4.0, np.nan], [7.0, np.nan]],
                     [[8.0, np.nan], [11.0, np.nan]]])
    assert_allclose(fnp.take(dev(a), dev(idx), axis=1, mode="fill"), want)
    got = funcgrad.jit(lambda a, i: fnp.take(a, i, axis=1, mode="fill"))(dev(a), dev(idx))
    assert_allclose(got, want)
    ai = dev(np.arange(12, dtype=np.int32).reshape(3, 4))
    flat_idx = dev(np.array([[0, 12], [-1, -13]]))
    got = fnp.take(ai, flat_idx, mode="fill")  # flattened
    assert_allclose(got, np.array([[0, -2147483648], [11, -2147483648]], np.int32))
    assert_allclose(fnp.take(dev(a), flat_idx, mode="fill", fill_value=-1.0),
                    np.array([[0.0, -1.0], [11.0, -1.0]]))
    g = funcgrad.grad(lambda a: fnp.sum(fnp.take(a, dev(idx), axis=1, mode="fill",
                                                 fill_value=0.0)))(dev(a))
    assert_allclose(g, np.tile(np.array([1.0, 0.0, 0.0, 1.0]), (3, 1)))
    with pytest.raises(ValueError, match="fill_value needs mode='fill'"):
        fnp.take(dev(a), dev(idx), fill_value=0.0)


@pytest.mark.parametrize("index", [True, False, (Ellipsis, True), (0, True), (True, 1),
                                   (np.array(True), slice(None), np.array([0, 2])),
                                   (slice(None), False, 1)])
def test_at_with_0d_boolean_indices(index):
    # x.at[True] (a 0-d boolean: a new length-1 axis, selected whole or not at all) works in
    # JAX; it raised IndexError here. Expected values: NumPy's x[index] = v on a copy.
    x = np.arange(6.0).reshape(2, 3)
    want = x.copy()
    want[index] = 7.0
    added = x.copy()
    np.add.at(added, index, 1.5)
    for f in (lambda v: v, funcgrad.jit):
        assert_allclose(f(lambda v: fnp.at(v)[index].set(7.0))(dev(x)), want)
        assert_allclose(f(lambda v: fnp.at(v)[index].add(1.5))(dev(x)), added)
        assert_allclose(f(lambda v: fnp.at(v)[index].get())(dev(x)), x[index])
