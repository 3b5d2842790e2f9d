"""``lax.reduce_window`` and ``lax.reduce_precision``: XLA's semantics (init value once per
window, padding and dilation holes skipped, first-extremum gradients, bit-exact rounding), PyTorch pooling
parity from recorded fixtures, and every transformation on varied inputs."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest
from helpers import assert_allclose, dev, host
from hypothesis import given
from hypothesis import strategies as st

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.lax._windows import window_max
from funcgrad.test_util import check_grads
from tests.funcgrad.op_tables.lax_windows import (
    reduce_precision_reference,
    reduce_window_reference,
)

FIXTURES = np.load(pathlib.Path(__file__).parent / "fixtures" / "conv_torch.npz")

# -- reduce_window -------------------------------------------------------------------------


def test_torch_max_pool_fixture() -> None:
    # max_pool2d(kernel (3, 2), stride 2, padding 1, dilation (1, 2)) on NCHW.
    x, ct = FIXTURES["max_pool2d/x"], FIXTURES["max_pool2d/ct"]

    def pool(x):
        return lax.reduce_window(x, -np.inf, lax.max, (1, 1, 3, 2), (1, 1, 2, 2),
                                 ((0, 0), (0, 0), (1, 1), (1, 1)), window_dilation=(1, 1, 1, 2))

    y, pullback = funcgrad.vjp(pool, dev(x))
    assert_allclose(y, FIXTURES["max_pool2d/y"])
    assert_allclose(pullback(dev(ct))[0], FIXTURES["max_pool2d/gx"])


def test_torch_avg_pool_fixture() -> None:
    x, ct = FIXTURES["avg_pool1d/x"], FIXTURES["avg_pool1d/ct"]

    def pool(x):
        return lax.reduce_window(x, 0.0, lax.add, (1, 1, 3), (1, 1, 2),
                                 ((0, 0), (0, 0), (1, 1))) / 3.0

    y, pullback = funcgrad.vjp(pool, dev(x))
    assert_allclose(y, FIXTURES["avg_pool1d/y"], rtol=1e-12, atol=1e-14)
    assert_allclose(pullback(dev(ct))[0], FIXTURES["avg_pool1d/gx"], rtol=1e-12, atol=1e-14)


def test_max_gradient_goes_to_first_maximum() -> None:
    # XLA's select_and_scatter (JAX's reduce_window max VJP) picks the first of tied maxima.
    x = np.array([1.0, 3.0, 3.0, 2.0, 3.0])
    g = funcgrad.grad(lambda x: fnp.sum(lax.reduce_window(x, -np.inf, lax.max, (2,), (1,),
                                                          "VALID")))(dev(x))
    assert host(g).tolist() == [0.0, 2.0, 1.0, 0.0, 1.0]
    gmin = funcgrad.grad(lambda x: fnp.sum(lax.reduce_window(-x, np.inf, lax.min, (3,), (2,),
                                                             "VALID")))(dev(x))
    assert host(gmin).tolist() == [0.0, -1.0, -1.0, 0.0, 0.0]


def test_padding_and_holes_are_skipped() -> None:
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    out = lax.reduce_window(x, 10.0, lax.add, (2, 2), (1, 1), ((1, 0), (0, 1)))
    # Each window starts from 10 once; padded positions are skipped (as JAX on XLA runs it).
    assert host(out).tolist() == [[10 + 1 + 2, 10 + 2], [10 + 1 + 2 + 3 + 4, 10 + 2 + 4]]
    assert_allclose(out, reduce_window_reference(x, 10.0, np.add, (2, 2), (1, 1),
                                                 ((1, 0), (0, 1))))
    base = lax.reduce_window(x, -1.0, lax.max, (2, 1), (1, 1), "VALID", base_dilation=(2, 1))
    assert host(base).tolist() == [[1.0, 2.0], [3.0, 4.0]]


# Recorded from JAX 0.10.2 (x64) on a = arange(12.0).reshape(3, 4): jax.lax.reduce_window(a,
# *args); a non-identity init joins each window once, padding and holes are skipped, a padding
# name is sized for the dilated window, window_strides and padding default to 1s and VALID.
_JAX_WINDOWS = [
    ((5.0, lax.add, (2, 2), (1, 1), "SAME"),
     [[15.0, 19.0, 23.0, 15.0], [31.0, 35.0, 39.0, 23.0], [22.0, 24.0, 26.0, 16.0]]),
    ((2.0, lax.mul, (3, 1), (1, 1), [(1, 0), (0, 0)], (2, 1)),
     [[0.0, 2.0, 4.0, 6.0], [0.0, 10.0, 24.0, 42.0], [8.0, 10.0, 12.0, 14.0],
      [64.0, 90.0, 120.0, 154.0]]),
    ((1.0, lambda x, y: x * 0.5 + y, (2, 2), (1, 2), [(1, 1), (0, 1)], (2, 1)),
     [[1.25, 4.25], [1.25, 4.25], [7.25, 10.25], [7.25, 10.25], [13.25, 16.25],
      [13.25, 16.25]]),
    ((0.0, lax.add, (2, 2), (1, 1), "SAME", None, (2, 1)),
     [[9.0, 11.0, 13.0, 7.0], [18.0, 22.0, 26.0, 14.0], [9.0, 11.0, 13.0, 7.0]]),
    ((-np.inf, lax.max, (1, 3), (1, 1), "SAME_LOWER", None, (1, 2)),
     [[2.0, 3.0, 2.0, 3.0], [6.0, 7.0, 6.0, 7.0], [10.0, 11.0, 10.0, 11.0]]),
    ((0.0, lax.add, (2, 2)), [[10.0, 14.0, 18.0], [26.0, 30.0, 34.0]]),
]


@pytest.mark.parametrize("args,want", _JAX_WINDOWS)
def test_matches_recorded_jax(args, want) -> None:
    a = np.arange(12.0).reshape(3, 4)
    assert host(lax.reduce_window(dev(a), *args)).tolist() == want
    jitted = funcgrad.jit(lambda a: lax.reduce_window(a, *args))(dev(a))
    assert host(jitted).tolist() == want


def test_pytree_operands_and_generic_computation() -> None:
    x = np.array([4.0, 1.0, 3.0, 5.0, 2.0])
    idx = np.arange(5)

    def argmax_pair(a, b):  # (value, index) pairs: the larger value, the first index on ties
        take_b = lax.gt(b[0], a[0])
        return lax.select(take_b, b[0], a[0]), lax.select(take_b, b[1], a[1])

    vals, where = lax.reduce_window((x, idx), (-np.inf, 0), argmax_pair, (3,), (1,), "VALID")
    assert host(vals).tolist() == [4.0, 5.0, 5.0]
    assert host(where).tolist() == [0, 3, 3]
    jitted = funcgrad.jit(lambda x, idx: lax.reduce_window(
        (x, idx), (-np.inf, 0), argmax_pair, (3,), (1,), "VALID"))(dev(x), dev(idx))
    assert_allclose(jitted[1], where)


def test_errors() -> None:
    x = np.ones((3, 4))
    with pytest.raises(TypeError, match="window_dimensions"):
        lax.reduce_window(x, 0.0, lax.add, (2,), (1, 1), "VALID")
    with pytest.raises(TypeError, match="positive"):
        lax.reduce_window(x, 0.0, lax.add, (2, 2), (0, 1), "VALID")
    with pytest.raises(TypeError, match="dtype"):
        lax.reduce_window(x, np.float32(1), lax.add, (2, 2), (1, 1), "VALID")
    with pytest.raises(TypeError, match="elementwise"):
        lax.reduce_window(x, 0.0, lambda a, b: fnp.sum(a + b), (2, 2), (1, 1), "VALID")
    with pytest.raises(TypeError, match="structure"):
        lax.reduce_window((x, x), 0.0, lax.add, (2, 2), (1, 1), "VALID")
    with pytest.raises(ValueError, match="padding"):
        lax.reduce_window(x, 0.0, lax.add, (2, 2), (1, 1), "FULL")


def test_empty_result_and_shape_tuple() -> None:
    out = lax.reduce_window(np.ones((2, 3)), 0.0, lax.add, (3, 1), (1, 1), "VALID")
    assert host(out).shape == (0, 3)
    assert lax.reduce_window_shape_tuple((5, 6), (2, 3), (1, 3), [(0, 0), (1, 2)],
                                         (2, 1), (1, 2)) == (8, 2)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int64, np.bool_, np.float32])
def test_integer_and_bool_extrema_of_every_value(dtype) -> None:
    # max/min run on the window_argmax primitive (min through an exact order reversal: bitwise
    # NOT for integers, which cannot overflow at the dtype's extremes).
    if np.dtype(dtype).kind == "b":
        x = np.array([[True, False, False], [False, False, True]])
    elif np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        x = np.array([[info.min, 3, info.max], [0, info.min, 1]], dtype=dtype)
    else:
        x = np.array([[-np.inf, 3, np.inf], [0, -0.0, 1]], dtype=dtype)
    for comp, ref in ((lax.max, np.max), (lax.min, np.min)):
        init = ref(x)  # the extreme value itself: an identity, so it changes nothing
        got = host(lax.reduce_window(dev(x), init, comp, (2, 2), (1, 1), "VALID"))
        want = reduce_window_reference(x, init, {lax.max: np.maximum,
                                                 lax.min: np.minimum}[comp],
                                       (2, 2), (1, 1), ((0, 0), (0, 0)), (1, 1), (1, 1))
        assert got.dtype == x.dtype and got.tolist() == want.tolist()


def test_nan_is_the_extremum_and_takes_the_gradient() -> None:
    x = np.array([1.0, np.nan, 5.0, np.nan, 2.0])
    for comp, init in ((lax.max, -np.inf), (lax.min, np.inf)):
        out = host(lax.reduce_window(dev(x), init, comp, (2,), (1,), "VALID"))
        assert np.isnan(out).tolist() == [True, True, True, True]
        g = funcgrad.grad(lambda x, init=init, comp=comp: fnp.sum(
            lax.reduce_window(x, init, comp, (3,), (2,), "VALID")))(dev(x))
        assert host(g).tolist() == [0.0, 1.0, 0.0, 1.0, 0.0]


def test_window_max_indices_in_any_layout() -> None:
    # Channels-last: the untouched axes (N and C) play the primitives' N and C by a view;
    # the index is row-major within the window over every axis (untouched axes add 0).
    rng = np.random.default_rng(3)
    x = rng.permutation(2 * 5 * 7 * 3).reshape(2, 5, 7, 3).astype(np.float64)
    window, strides, pads = (1, 3, 2, 1), (1, 2, 2, 1), ((0, 0), (1, 1), (0, 1), (0, 0))
    v, i = window_max(dev(x), -np.inf, window, strides, pads, None, (1, 1, 2, 1))
    xp = np.pad(x, [(0, 0), (1, 1), (0, 1), (0, 0)], constant_values=-np.inf)
    want_v = reduce_window_reference(x, -np.inf, np.maximum, window, strides, pads,
                                     (1,) * 4, (1, 1, 2, 1))
    assert_allclose(v, want_v)
    oh, ow = want_v.shape[1:3]
    for n, a, b, c in np.ndindex(2, oh, ow, 3):
        win = xp[n, 2 * a:2 * a + 3, 2 * b:2 * b + 3:2, c]
        assert host(i)[n, a, b, c] == int(np.argmax(win))
    batched = funcgrad.vmap(lambda x: window_max(x, -np.inf, window[1:], strides[1:],
                                                 pads[1:], None, (1, 2, 1))[1])(dev(x))
    assert host(batched).tolist() == host(i).tolist()


@pytest.mark.parametrize("comp, ref_op, init", [(lax.add, np.add, 0.0),
                                                  (lax.mul, np.multiply, 1.0),
                                                  (lax.add, np.add, 2.0)])
def test_sums_in_any_layout_with_padding_on_unit_windows(comp, ref_op, init) -> None:
    # Untouched axes play the patches primitive's N and C; an axis with a unit window but
    # padding is not untouched (its padding makes init-valued outputs).
    rng = np.random.default_rng(5)
    x = rng.uniform(0.5, 1.5, (2, 5, 6, 3))
    window, strides = (1, 3, 1, 1), (1, 2, 1, 1)
    pads = ((0, 0), (1, 1), (1, 0), (0, 0))
    want = reduce_window_reference(x, init, ref_op, window, strides, pads, (1,) * 4, (1,) * 4)

    def f(x):
        return lax.reduce_window(x, init, comp, window, strides, pads)

    assert_allclose(f(dev(x)), want)
    assert_allclose(funcgrad.jit(f)(dev(x)), want)
    batched = funcgrad.vmap(f, in_axes=1, out_axes=1)(dev(np.stack([x, 2 * x], 1)))
    assert_allclose(batched, np.stack([want, host(f(dev(2 * x)))], 1))
    check_grads(f, (dev(x),), order=1, modes=("rev",))


@st.composite
def _window_configs(draw):
    nd = draw(st.integers(1, 2))
    shape = tuple(draw(st.integers(1, 5)) for _ in range(nd))
    window = tuple(draw(st.integers(1, 3)) for _ in range(nd))
    strides = tuple(draw(st.integers(1, 3)) for _ in range(nd))
    pads = tuple((draw(st.integers(-1, 2)), draw(st.integers(-1, 2))) for _ in range(nd))
    base = tuple(draw(st.integers(1, 2)) for _ in range(nd))
    wdil = tuple(draw(st.integers(1, 2)) for _ in range(nd))
    op = draw(st.sampled_from(["add", "max", "min", "mul"]))
    return shape, window, strides, pads, base, wdil, op


_OPS = {"add": (lax.add, np.add, 0.0), "max": (lax.max, np.maximum, -np.inf),
        "min": (lax.min, np.minimum, np.inf), "mul": (lax.mul, np.multiply, 1.0)}


@given(_window_configs(), st.integers(0, 2 ** 16))
def test_random_configs_match_reference(config, seed) -> None:
    shape, window, strides, pads, base, wdil, op = config
    comp, ref_op, init = _OPS[op]
    # Distinct values: max/min have no ties, so finite differences see the picked element.
    x = np.random.default_rng(seed).permutation(int(np.prod(shape))).reshape(shape) / 5.0 + 0.5
    want = reduce_window_reference(x, init, ref_op, window, strides, pads, base, wdil)

    def f(x):
        return lax.reduce_window(x, init, comp, window, strides, pads, base, wdil)

    assert_allclose(f(dev(x)), want)
    assert_allclose(funcgrad.jit(f)(dev(x)), want)
    batched = funcgrad.vmap(f)(dev(np.stack([x, x * 2.0])))
    assert_allclose(batched, np.stack([want, host(f(dev(x * 2.0)))]))
    if want.size and np.all(np.isfinite(want)):
        check_grads(f, (dev(x),), order=1, modes=("fwd", "rev"))


# -- reduce_precision ------------------------------------------------------------------------


def _edge_values(dtype) -> np.ndarray:
    info = np.finfo(dtype)
    rng = np.random.default_rng(0)
    spread = rng.standard_normal(300) * np.exp(rng.uniform(-40, 40, 300))
    ties = np.array([1 + 2.0 ** -8, 1 + 3 * 2.0 ** -8, 1 + 2.0 ** -11, 1 + 3 * 2.0 ** -11,
                     65504.0, 65520.0, 65519.99, 2.0 ** -14, 2.0 ** -14 * (1 - 2.0 ** -12),
                     2.0 ** -15, 3.3895e38, 3.4e38, 1.2e-38, 0.0, -0.0, np.inf, -np.inf,
                     np.nan])
    tiny = np.array([info.tiny, info.tiny * 0.75, info.tiny * 0.3, info.smallest_subnormal])
    return np.concatenate([spread, ties, -ties, tiny, -tiny]).astype(dtype)


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
@pytest.mark.parametrize("bits", [(8, 7), (5, 10), (8, 23), (4, 3), (5, 2), (3, 0), (11, 52)])
def test_reduce_precision_is_exact(dtype, bits) -> None:
    x = _edge_values(dtype)
    got = host(lax.reduce_precision(dev(x), *bits))
    want = reduce_precision_reference(x, *bits)
    assert got.dtype == x.dtype
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_array_equal(got[ok], want[ok])
    np.testing.assert_array_equal(np.signbit(got[ok]), np.signbit(want[ok]))


def test_reduce_precision_bfloat16_and_float16_literals() -> None:
    x = np.array([1.00390625, 1.01171875, 3.14159265, 1e-40, 3.4e38], np.float32)
    # x.astype(bfloat16) values: ties to even, float32 subnormals kept (bfloat16 has the same
    # exponent range), overflow to inf.
    assert host(lax.reduce_precision(x, 8, 7)).tolist() == [1.0, 1.015625, 3.140625,
                                                            2.0 ** -133, np.inf]
    y = np.array([0.1, 65519.0, 65520.0, 6e-8], np.float64)
    assert host(lax.reduce_precision(y, 5, 10)).tolist() == [0.0999755859375, 65504.0, np.inf,
                                                             0.0]


def test_reduce_precision_keeps_nan_without_mantissa_bits() -> None:
    # JAX 0.10.2: jax.lax.reduce_precision([nan, -nan, 1.5, 3.0], 3, 0) -> [nan, nan, 2., 2.]
    for dtype in (np.float16, np.float32, np.float64):
        x = np.array([np.nan, -np.nan, 1.5, 3.0], dtype)
        for bits in ((3, 0), (8, 0), (2, 0)):
            got = host(lax.reduce_precision(dev(x), *bits))
            assert np.isnan(got[:2]).all() and got[2:].tolist() == [2.0, 2.0]


def test_reduce_precision_transformations() -> None:
    x = np.array([1.0001, -2.71828, 3.3e5])
    t = np.array([0.1234567, 1.0, 7.654321])
    primal, tangent = funcgrad.jvp(lambda v: lax.reduce_precision(v, 8, 7), (dev(x),),
                                   (dev(t),))
    assert_allclose(tangent, lax.reduce_precision(t, 8, 7))   # JAX: linear, rounds the tangent
    g = funcgrad.grad(lambda v: fnp.sum(lax.reduce_precision(v, 5, 10) * 3.0))(dev(x))
    assert host(g).tolist() == [3.0, 3.0, 3.0]
    xs = np.stack([x, 2 * x])
    assert_allclose(funcgrad.vmap(lambda v: lax.reduce_precision(v, 5, 10))(dev(xs)),
                    np.stack([host(lax.reduce_precision(v, 5, 10)) for v in xs]))
    assert_allclose(funcgrad.jit(lambda v: lax.reduce_precision(v, 5, 10))(dev(x)),
                    lax.reduce_precision(x, 5, 10))
    assert host(lax.reduce_precision(2.5, 3, 0)).tolist() == 2.0


def test_reduce_precision_errors() -> None:
    with pytest.raises(TypeError, match="reduce_precision"):
        lax.reduce_precision(np.arange(3), 8, 7)
    with pytest.raises(ValueError, match="exponent_bits"):
        lax.reduce_precision(np.ones(3), 0, 7)
    with pytest.raises(TypeError, match="static"):
        lax.reduce_precision(np.ones(3), 8.5, 7)


def test_an_init_that_is_the_monoids_identity_in_its_own_dtype_fits_any_operand():
    # JAX 0.10.2 (_get_monoid_window_reducer): -inf for max (flax.linen.max_pool's init) or
    # a float64 zero for add is the identity, whatever the operand's dtype; recorded values.
    img = np.arange(12, dtype=np.uint8).reshape(3, 4)
    pool = lambda a: lax.reduce_window(a, -np.inf, lax.max, (2, 2), (1, 1), "SAME")  # noqa: E731
    want = [[5, 6, 7, 7], [9, 10, 11, 11], [9, 10, 11, 11]]
    for f in (pool, funcgrad.jit(pool)):
        out = f(dev(img))
        assert out.dtype == np.uint8 and host(out).tolist() == want
    assert host(funcgrad.vmap(pool)(dev(np.stack([img, img[::-1]]))))[1, 0].tolist() == [
        9, 10, 11, 11]
    low = lax.reduce_window(dev(np.arange(6).reshape(2, 3)), np.inf, lax.min, (2, 2), (1, 1),
                            "SAME")
    assert host(low).tolist() == [[0, 1, 2], [3, 4, 5]]
    s = lax.reduce_window(dev(np.ones((2, 3), np.float32)), np.float64(0.0), lax.add, (2, 2),
                          (1, 1), "SAME")
    assert s.dtype == np.float32 and host(s).tolist() == [[4.0, 4.0, 2.0], [2.0, 2.0, 1.0]]
    with pytest.raises(funcgrad.errors.DTypeError, match="must match"):  # not an identity
        lax.reduce_window(dev(np.ones((2, 3), np.float32)), np.float64(2.0), lax.max, (2, 2),
                          (1, 1), "SAME")
