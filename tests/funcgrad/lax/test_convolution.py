"""``lax.conv_general_dilated`` and friends: JAX's semantics (dimension numbers, padding
names, groups, dilations), PyTorch parity from recorded fixtures, JAX's own transpose
identities, and every transformation (grad, vmap, jit) on varied inputs.

The op table (``tests/funcgrad/op_tables/lax_windows.py``) also runs fixed cases through the
shared drivers (forward, check_grads to order 2, vmap vs a loop, jit, the eager tape).
"""

from __future__ import annotations

import pathlib

import numpy as np
import pytest
from helpers import assert_allclose, dev, host
from hypothesis import given
from hypothesis import strategies as st

import funcgrad
from funcgrad import lax
from funcgrad.lax._convolution import conv_general_dilated_reversed
from funcgrad.test_util import check_grads
from tests.funcgrad.lax.fixtures.make_conv_fixtures import CASES as TORCH_CASES
from tests.funcgrad.op_tables.lax_windows import conv_reference

FIXTURES = np.load(pathlib.Path(__file__).parent / "fixtures" / "conv_torch.npz")


def _rand(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape)


# -- dimension numbers and padding names -----------------------------------------------------


def test_conv_dimension_numbers_match_jax() -> None:
    # Values as jax.lax.conv_dimension_numbers gives them.
    assert lax.conv_dimension_numbers((1, 5, 5, 3), (2, 2, 3, 4),
                                      ("NHWC", "HWIO", "NHWC")) == ((0, 3, 1, 2), (3, 2, 0, 1),
                                                                    (0, 3, 1, 2))
    assert lax.conv_dimension_numbers((1, 3, 5), (2, 3, 1), None) == ((0, 1, 2),) * 3
    # Spatial axes follow the kernel's letter order.
    assert lax.conv_dimension_numbers((1, 2, 3, 4), (1, 2, 3, 4),
                                      ("NCHW", "OIWH", "NHWC")) == ((0, 1, 3, 2), (0, 1, 2, 3),
                                                                    (0, 3, 2, 1))
    dn = lax.ConvDimensionNumbers((0, 1, 2), (1, 0, 2), (0, 2, 1))
    assert lax.conv_dimension_numbers((1, 1, 1), (1, 1, 1), dn) is dn


@pytest.mark.parametrize("bad", [("NCH", "OIH"), ("NCHW", "OIHW", "NCH"), ("NNHW", "OIHW", "NCHW"),
                                 ("NCHW", "OIHW", "NCWZ"), 5])
def test_bad_dimension_numbers(bad) -> None:
    with pytest.raises(TypeError, match="conv"):
        lax.conv_general_dilated(np.ones((1, 1, 2, 2)), np.ones((1, 1, 1, 1)), (1, 1), "VALID",
                                 dimension_numbers=bad)


def test_padtype_to_pads() -> None:
    assert lax.padtype_to_pads((5,), (4,), (1,), "SAME") == [(1, 2)]
    assert lax.padtype_to_pads((5,), (4,), (1,), "same_lower") == [(2, 1)]
    assert lax.padtype_to_pads((7, 6), (3, 2), (3, 2), "SAME") == [(1, 1), (0, 0)]
    assert lax.padtype_to_pads((5,), (9,), (1,), "VALID") == [(0, 0)]
    with pytest.raises(ValueError, match="padding"):
        lax.padtype_to_pads((5,), (2,), (1,), "FULL")


@pytest.mark.parametrize("padding", ["SAME", "SAME_LOWER", "VALID"])
@pytest.mark.parametrize("strides", [(1, 1), (2, 3)])
def test_padding_names(padding, strides) -> None:
    rng = np.random.default_rng(0)
    x, w = _rand(rng, 2, 3, 7, 8), _rand(rng, 4, 3, 3, 2)
    got = lax.conv_general_dilated(dev(x), dev(w), strides, padding, rhs_dilation=(2, 1))
    pads = lax.padtype_to_pads((7, 8), (5, 2), strides, padding)
    assert_allclose(got, conv_reference(x, w, strides, pads, None, (2, 1)))
    if padding != "VALID":
        assert host(got).shape[2:] == tuple(-(-n // s) for n, s in zip((7, 8), strides))


# -- literal JAX results (hand-derived from XLA's definitions) --------------------------------


def test_conv_transpose_same_literal() -> None:
    # jax.lax.conv_transpose(x, ones(3,1,1), (2,), "SAME") with x = [1, 2, 3] (NWC): JAX pads
    # (2, 1) around the input dilated to [1, 0, 2, 0, 3].
    out = lax.conv_transpose(np.array([[[1.0], [2.0], [3.0]]]), np.ones((3, 1, 1)), (2,), "SAME")
    assert host(out)[0, :, 0].tolist() == [1.0, 1.0, 3.0, 2.0, 5.0, 3.0]
    valid = lax.conv_transpose(np.array([[[1.0], [2.0], [3.0]]]), np.ones((3, 1, 1)), (2,),
                               "VALID")
    assert host(valid)[0, :, 0].tolist() == [1.0, 1.0, 3.0, 2.0, 5.0, 3.0, 3.0]


def test_batch_groups_literal() -> None:
    # XLA splits the batch group-major: output feature block b sees lhs[b * N' : (b+1) * N'].
    lhs = np.array([1.0, 2.0, 3.0, 4.0]).reshape(4, 1, 1)
    rhs = np.array([10.0, 100.0]).reshape(2, 1, 1)
    out = lax.conv_general_dilated(lhs, rhs, (1,), "VALID", batch_group_count=2)
    assert host(out)[:, :, 0].tolist() == [[10.0, 300.0], [20.0, 400.0]]


def test_negative_padding_and_dilation_literal() -> None:
    x = np.arange(1.0, 6.0).reshape(1, 1, 5)
    # lhs_dilation 2 -> [1 0 2 0 3 0 4 0 5], cropped by 1 at each end, kernel [1, 10].
    out = lax.conv_general_dilated(x, np.array([[[1.0, 10.0]]]), (1,), [(-1, -1)],
                                   lhs_dilation=(2,))
    assert host(out)[0, 0].tolist() == [20.0, 2.0, 30.0, 3.0, 40.0, 4.0]


# -- JAX's transpose identities --------------------------------------------------------------


def _vjp_rhs_padding(in_shape, window, strides, out_shape, padding, lhs_dil, rhs_dil):
    """jax._src.lax.convolution._conv_general_vjp_rhs_padding."""
    def dil(s, d):
        return [0 if n == 0 else 1 + dd * (n - 1) for n, dd in zip(s, d)]
    lhs_d, rhs_d, out_d = dil(in_shape, lhs_dil), dil(window, rhs_dil), dil(out_shape, strides)
    return [(lo, (o - lhd) + (r - lo - 1))
            for (lo, _), o, lhd, r in zip(padding, out_d, lhs_d, rhs_d)]


@pytest.mark.parametrize("groups", [1, 2, 3])
def test_kernel_gradient_is_jax_batch_grouped_conv(groups) -> None:
    """JAX writes the kernel gradient of a feature-grouped convolution as a batch-grouped
    convolution of the input with the cotangent: that formula must give our gradient."""
    rng = np.random.default_rng(groups)
    strides, pads, ldil, rdil = (2, 1), [(1, 0), (2, 1)], (1, 2), (2, 1)
    x, w = _rand(rng, 2, 2 * groups, 6, 4), _rand(rng, 2 * groups, 2, 2, 3)

    def f(w):
        return lax.conv_general_dilated(x, w, strides, pads, ldil, rdil,
                                        feature_group_count=groups)

    y, pullback = funcgrad.vjp(f, w)
    ct = _rand(rng, *host(y).shape)
    (gw,) = pullback(ct)
    # Swap batch and feature axes of lhs and the cotangent (their specs transposed).
    trans = lax.ConvDimensionNumbers((1, 0, 2, 3), (1, 0, 2, 3), (1, 0, 2, 3))
    padding = _vjp_rhs_padding((6, 4), (2, 3), strides, host(y).shape[2:], pads, ldil, rdil)
    want = lax.conv_general_dilated(x, ct, rdil, padding, ldil, strides, trans,
                                    batch_group_count=groups)
    assert_allclose(gw, want, rtol=1e-10, atol=1e-10)


# -- PyTorch parity --------------------------------------------------------------------------


def _torch_as_lax(name: str):
    fn, _, wshape, kw = TORCH_CASES[name]
    nd = int(fn[-2])

    def tup(v):
        return (v,) * nd if isinstance(v, int) else tuple(v)

    s, p, d = tup(kw.get("stride", 1)), tup(kw.get("padding", 0)), tup(kw.get("dilation", 1))
    groups = kw.get("groups", 1)
    if fn.startswith("conv_transpose"):
        op, k = tup(kw.get("output_padding", 0)), wshape[2:]
        pads = [(dd * (kk - 1) - pp, dd * (kk - 1) - pp + oo)
                for kk, pp, dd, oo in zip(k, p, d, op)]
        spatial = "DHW"[3 - nd:]
        dn = ("NC" + spatial, "OI" + spatial, "NC" + spatial)  # the forward conv's kernel
        if groups == 1:
            return lambda x, w: lax.conv_transpose(x, w, s, pads, d, dn, transpose_kernel=True)

        def grouped(x, w):
            # (Cin, Cout/G, *K) -> (Cout, Cin/G, *K), flipped: the forward conv's kernel.
            ci, og = w.shape[:2]
            wg = funcgrad.numpy.reshape(w, (groups, ci // groups, og) + tuple(k))
            wg = funcgrad.numpy.swapaxes(wg, 1, 2).reshape((groups * og, ci // groups) + k)
            wg = lax.rev(wg, tuple(range(2, 2 + nd)))
            return lax.conv_general_dilated(x, wg, (1,) * nd, pads, s, d,
                                            feature_group_count=groups)
        return grouped
    return lambda x, w: lax.conv_general_dilated(x, w, s, [(v, v) for v in p], None, d,
                                                 feature_group_count=groups)


@pytest.mark.parametrize("name", [n for n, c in TORCH_CASES.items() if c[2] is not None])
def test_torch_fixtures(name) -> None:
    x, w, ct = (FIXTURES[f"{name}/{k}"] for k in ("x", "w", "ct"))
    f = _torch_as_lax(name)
    y, pullback = funcgrad.vjp(f, dev(x), dev(w))
    gx, gw = pullback(dev(ct))
    assert_allclose(y, FIXTURES[f"{name}/y"], rtol=1e-10, atol=1e-10)
    assert_allclose(gx, FIXTURES[f"{name}/gx"], rtol=1e-10, atol=1e-10)
    assert_allclose(gw, FIXTURES[f"{name}/gw"], rtol=1e-10, atol=1e-10)


# -- varied inputs against the loop reference, under every transformation --------------------


@st.composite
def _conv_configs(draw):
    nd = draw(st.integers(1, 2))
    groups = draw(st.sampled_from([1, 2]))
    bgroups = 1 if groups > 1 else draw(st.sampled_from([1, 2]))
    n = draw(st.integers(1, 2)) * bgroups
    i = draw(st.integers(1, 2))
    o = draw(st.integers(1, 2)) * groups * bgroups
    kernel = tuple(draw(st.integers(1, 3)) for _ in range(nd))
    spatial = tuple(draw(st.integers(1, 5)) for _ in range(nd))
    strides = tuple(draw(st.integers(1, 3)) for _ in range(nd))
    ldil = tuple(draw(st.integers(1, 3)) for _ in range(nd))
    rdil = tuple(draw(st.integers(1, 2)) for _ in range(nd))
    pads = tuple((draw(st.integers(-1, 3)), draw(st.integers(-1, 3))) for _ in range(nd))
    return (n, i * groups) + spatial, (o, i) + kernel, strides, pads, ldil, rdil, groups, bgroups


@given(_conv_configs(), st.integers(0, 2 ** 16))
def test_random_configs_match_reference(config, seed) -> None:
    lshape, rshape, strides, pads, ldil, rdil, groups, bgroups = config
    rng = np.random.default_rng(seed)
    x, w = _rand(rng, *lshape), _rand(rng, *rshape)
    want = conv_reference(x, w, strides, pads, ldil, rdil, groups, bgroups)

    def f(x, w):
        return lax.conv_general_dilated(x, w, strides, pads, ldil, rdil,
                                        feature_group_count=groups, batch_group_count=bgroups)

    assert_allclose(f(dev(x), dev(w)), want, rtol=1e-10, atol=1e-10)
    assert_allclose(funcgrad.jit(f)(dev(x), dev(w)), want, rtol=1e-10, atol=1e-10)
    if want.size:
        check_grads(f, dev((x, w)), order=1, modes=("rev",))


@pytest.mark.parametrize("in_axes", [(0, None), (None, 0), (1, 2), (0, 0)])
def test_vmap_matches_loop(in_axes) -> None:
    rng = np.random.default_rng(1)
    xs, ws = _rand(rng, 3, 2, 5, 4, 2), _rand(rng, 3, 2, 3, 1, 4)     # NHWC / HWIO stacks
    xs = xs[0] if in_axes[0] is None else np.moveaxis(xs, 0, in_axes[0])
    ws = ws[0] if in_axes[1] is None else np.moveaxis(ws, 0, in_axes[1])

    def f(x, w):
        return lax.conv_general_dilated(x, w, (2, 1), [(1, 1), (0, 1)], (1, 2), (1, 1),
                                        ("NHWC", "HWIO", "NHWC"), feature_group_count=2)

    got = funcgrad.vmap(f, in_axes=in_axes)(dev(xs), dev(ws))

    def take(a, ax, k):
        return a if ax is None else np.take(a, k, axis=ax)

    want = np.stack([host(f(dev(take(xs, in_axes[0], k)), dev(take(ws, in_axes[1], k))))
                     for k in range(3)])
    assert_allclose(got, want, rtol=1e-10, atol=1e-10)


def test_grad_of_vmap_and_jit_of_grad() -> None:
    rng = np.random.default_rng(2)
    x, w = _rand(rng, 2, 3, 6), _rand(rng, 4, 3, 3)

    def loss(w, x):
        y = lax.conv_transpose(x, w, (2,), "SAME", dimension_numbers=("NCH", "OIH", "NCH"))
        return funcgrad.numpy.sum(funcgrad.numpy.tanh(y) ** 2)

    g = funcgrad.grad(loss)(dev(w), dev(x))
    assert_allclose(funcgrad.jit(funcgrad.grad(loss))(dev(w), dev(x)), g, rtol=1e-10,
                    atol=1e-12)
    per_example = funcgrad.vmap(funcgrad.grad(loss), in_axes=(None, 0))(dev(w), dev(x[:, None]))
    assert_allclose(funcgrad.numpy.sum(per_example, 0), g, rtol=1e-10, atol=1e-12)
    check_grads(loss, dev((w, x)), order=2, modes=("fwd", "rev"))


def test_taylor_series_through_conv() -> None:
    rng = np.random.default_rng(3)
    x, w = _rand(rng, 1, 2, 5), _rand(rng, 3, 2, 2)

    def f(x):
        return funcgrad.numpy.sin(lax.conv(x, w, (1,), "SAME"))

    v = _rand(rng, 1, 2, 5)
    _, (d1, d2) = funcgrad.jet(f, (x,), ((v, np.zeros_like(v)),))
    want1 = funcgrad.jvp(f, (x,), (v,))[1]
    want2 = funcgrad.jvp(lambda x: funcgrad.jvp(f, (x,), (v,))[1], (x,), (v,))[1]
    assert_allclose(d1, want1, rtol=1e-10, atol=1e-12)
    assert_allclose(d2, want2, rtol=1e-9, atol=1e-11)


# -- dtypes, shapes, errors ------------------------------------------------------------------


def test_dtypes() -> None:
    xi, wi = np.arange(12, dtype=np.int32).reshape(1, 2, 6), np.ones((1, 2, 2), np.int32)
    out = lax.conv(xi, wi, (1,), "VALID")
    assert host(out).dtype == np.int32
    assert host(out)[0, 0].tolist() == [14, 18, 22, 26, 30]
    f32 = lax.conv(xi.astype(np.float32), wi.astype(np.float32), (1,), "VALID")
    assert host(f32).dtype == np.float32
    pref = lax.conv(xi, wi, (1,), "VALID", preferred_element_type=np.float64)
    assert host(pref).dtype == np.float64
    with pytest.raises(TypeError, match="dtype"):
        lax.conv(xi.astype(np.float32), wi.astype(np.float64), (1,), "VALID")


def test_empty_output_and_no_spatial_axes() -> None:
    out = lax.conv_general_dilated(np.ones((2, 3, 2)), np.ones((4, 3, 5)), (1,), "VALID")
    assert host(out).shape == (2, 4, 0)
    g = funcgrad.grad(lambda x: funcgrad.numpy.sum(
        lax.conv_general_dilated(x, np.ones((4, 3, 5)), (1,), "VALID")))(np.ones((2, 3, 2)))
    assert host(g).tolist() == np.zeros((2, 3, 2)).tolist()
    # Rank 2: no spatial axes, a matrix product (conv_transpose's 'NC','IO','NC' default).
    x, w = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(4, 3)
    assert_allclose(lax.conv(x, w, (), "VALID"), x @ w.T)
    assert_allclose(lax.conv_transpose(x, w.T, (), "VALID"), x @ w.T)


def test_shape_tuples() -> None:
    assert lax.conv_general_shape_tuple((1, 8, 8, 3), (3, 3, 3, 4), (2, 2), "SAME",
                                        ("NHWC", "HWIO", "NHWC")) == (1, 4, 4, 4)
    assert lax.conv_shape_tuple((2, 3, 9), (4, 3, 3), (2,), "VALID") == (2, 4, 4)
    x, w = np.ones((1, 1, 3)), np.ones((1, 1, 2))
    assert lax.conv_transpose_shape_tuple((1, 1, 3), (1, 1, 2), (2,), [(1, 1)], None) == \
        host(lax.conv_general_dilated(x, w, (1,), [(1, 1)], (2,))).shape


# jax.lax.conv_transpose_shape_tuple(lhs, (k0, k1, 3, 4), strides, padding, NHWC/HWIO/NHWC)
# for lhs (2, 7, 8, 3), recorded from JAX 0.10.2: a padding name is conv_transpose's sizing.
@pytest.mark.parametrize("kernel,strides,padding,expected", [
    ((3, 2), (2, 3), "SAME", (2, 14, 24, 4)),
    ((3, 2), (2, 3), "VALID", (2, 15, 24, 4)),
    ((4, 5), (3, 1), "SAME", (2, 21, 8, 4)),
    ((4, 5), (3, 1), "VALID", (2, 22, 12, 4)),
    ((1, 1), (1, 1), "SAME", (2, 7, 8, 4)),
])
def test_conv_transpose_shape_tuple_padding_names(kernel, strides, padding, expected) -> None:
    dn = ("NHWC", "HWIO", "NHWC")
    got = lax.conv_transpose_shape_tuple((2, 7, 8, 3), kernel + (3, 4), strides, padding, dn)
    assert got == expected
    x, w = np.ones((2, 7, 8, 3)), np.ones(kernel + (3, 4))
    assert host(lax.conv_transpose(x, w, strides, padding, dimension_numbers=dn)).shape == got


@pytest.mark.parametrize("kwargs,match", [
    (dict(feature_group_count=2), "feature"),
    (dict(batch_group_count=3), "batch_group_count"),
    (dict(feature_group_count=2, batch_group_count=2), "at most one"),
    (dict(window_strides=(1,)), "window_strides"),
    (dict(window_strides=(0, 1)), "positive"),
    (dict(padding=[(1, 1)]), "padding"),
    (dict(padding="FULL"), "padding"),
    (dict(lhs_dilation=(1, 0)), "lhs_dilation"),
    (dict(lhs_dilation=(2, 1), padding="SAME"), "string padding"),
    (dict(precision="fastest-ever"), "precision"),
])
def test_errors_name_the_argument(kwargs, match) -> None:
    args = dict(window_strides=(1, 1), padding="VALID")
    args.update(kwargs)
    with pytest.raises((TypeError, ValueError), match=match):
        lax.conv_general_dilated(np.ones((2, 3, 4, 4)), np.ones((4, 3, 2, 2)), **args)


@pytest.mark.parametrize("pads, ldil, groups", [
    (((2, 3), (1, 1)), (2, 3), 1),      # lhs dilation within the kernel: the fold path
    (((2, 2), (0, 1)), (2, 1), 2),
    (((-1, 4), (3, 0)), (2, 1), 1),     # low padding beyond the kernel: the windows path
    (((1, 0), (1, 1)), (1, 1), 2),      # no lhs dilation
])
def test_reversed_kernel_entry_is_conv_of_the_reversed_kernel(pads, ldil, groups) -> None:
    # What conv_transpose(transpose_kernel=True) and funcgrad_nn's transposed convolutions
    # call: the kernel arrives reversed and is never reversed back and forth.
    rng = np.random.default_rng(7)
    x, w = _rand(rng, 2, 4, 5, 4), _rand(rng, 6, 4 // groups, 3, 2)
    want = conv_reference(x, w[:, :, ::-1, ::-1], (1, 2), pads, ldil, (1, 2), groups)

    def f(x, w):
        return conv_general_dilated_reversed(x, w, (1, 2), pads, ldil, (1, 2),
                                             feature_group_count=groups)

    assert_allclose(f(dev(x), dev(w)), want)
    assert_allclose(funcgrad.jit(f)(dev(x), dev(w)), want)
    check_grads(f, (dev(x), dev(w)), order=1, modes=("rev",))


def _identity_kernel(c: int, filter_shape: tuple) -> np.ndarray:
    # JAX's definition of the patches: a grouped convolution with one-hot kernels, output
    # feature c * prod(filter) + k picking channel c at kernel offset k.
    s = int(np.prod(filter_shape))
    eye = np.broadcast_to(np.eye(s), (c, s, s))
    return eye.reshape((c * s, 1) + tuple(filter_shape))


@pytest.mark.parametrize("filter_shape, strides, pads, ldil, rdil", [
    ((2, 3), (1, 2), ((1, 0), (2, 1)), None, (2, 1)),
    ((3, 1), (2, 1), ((-1, 2), (0, 0)), (2, 1), None),
    ((1, 1), (1, 1), "SAME", None, None),
    ((2, 2), (2, 2), "VALID", None, (1, 2)),
])
def test_patches_are_the_identity_kernel_convolution(filter_shape, strides, pads, ldil,
                                                     rdil) -> None:
    rng = np.random.default_rng(11)
    x = _rand(rng, 2, 3, 6, 5)
    want = lax.conv_general_dilated(x, _identity_kernel(3, filter_shape), strides, pads, ldil,
                                    rdil, feature_group_count=3)

    def f(x):
        return lax.conv_general_dilated_patches(x, filter_shape, strides, pads, ldil, rdil)

    assert_allclose(f(dev(x)), want)
    assert_allclose(funcgrad.jit(f)(dev(x)), want)
    assert_allclose(funcgrad.vmap(f)(dev(np.stack([x, 2 * x]))), np.stack([want, 2 * want]))
    check_grads(f, (dev(x),), order=1, modes=("fwd", "rev"))
    # channels-last dimension numbers: the same patches, features last
    nhwc = lax.conv_general_dilated_patches(dev(np.moveaxis(x, 1, 3)), filter_shape, strides,
                                            pads, ldil, rdil, ("NHWC", "HWIO", "NHWC"))
    assert_allclose(nhwc, np.moveaxis(host(want), 1, 3))


def test_patches_errors_and_empty() -> None:
    with pytest.raises(TypeError, match="filter_shape"):
        lax.conv_general_dilated_patches(np.ones((1, 2, 4)), (2, 2), (1,), "VALID")
    out = lax.conv_general_dilated_patches(np.ones((1, 2, 3)), (4,), (1,), "VALID")
    assert host(out).shape == (1, 8, 0)


# -- conv_general_dilated_local (values recorded from JAX 0.10.2, x64) -------------------------

_LOCAL_X = np.arange(24.0).reshape(1, 2, 3, 4) / 10
_LOCAL_W = (np.arange(2 * 8 * 2 * 4).reshape(2, 8, 2, 4) % 7 - 3.0) / 4  # O, C*2*2, H', W'
_LOCAL_OUT = np.array([[[[0.725, -0.425, -1.0, -1.25], [-0.425, 0.725, 2.45, 1.4]],
               [[-0.375, -0.975, -1.35, -0.15], [0.675, 2.375, 0.275, -1.125]]]])
_LOCAL_GRAD = np.array([[[[-0.7125, 0.375, 0.7125, -0.75], [0.1, 4.2, -2.25, -9.425],
                 [-1.65, -3.5, -4.5, -1.925]],
                [[-0.0125, -1.725, 1.35, 4.875], [1.7375, 0.75, 3.9125, 2.2],
                 [0.3375, 3.2, 7.15, 7.05]]]])


def _local(x, w, dn=None):
    return lax.conv_general_dilated_local(x, w, (1, 1), [(0, 0), (0, 1)], (2, 2),
                                          dimension_numbers=dn)


def test_conv_general_dilated_local_equals_jax():
    x, w = dev(_LOCAL_X), dev(_LOCAL_W)
    assert_allclose(host(_local(x, w)), _LOCAL_OUT, rtol=1e-12, atol=1e-12)
    g = funcgrad.grad(lambda a: (_local(a, w) ** 2).sum())(x)
    assert_allclose(host(g), _LOCAL_GRAD, rtol=1e-12, atol=1e-12)
    # the same in NHWC / HWIO, and under jit and vmap
    xh = dev(np.transpose(_LOCAL_X, (0, 2, 3, 1)))
    wh = dev(np.transpose(_LOCAL_W, (2, 3, 1, 0)))
    out = funcgrad.jit(lambda a, b: _local(a, b, ("NHWC", "HWIO", "NCHW")))(xh, wh)
    assert_allclose(host(out), _LOCAL_OUT, rtol=1e-12, atol=1e-12)
    xs = dev(np.stack([_LOCAL_X, 2 * _LOCAL_X]))
    out = funcgrad.vmap(lambda a: _local(a, w))(xs)
    assert_allclose(host(out), np.stack([_LOCAL_OUT, 2 * _LOCAL_OUT]), rtol=1e-12)
    with pytest.raises(TypeError, match="input features and the output spatial sizes"):
        _local(x, dev(_LOCAL_W[:, :5]))


def test_conv_transpose_consistent_padding():
    # JAX 0.10.2: use_consistent_padding=True reads explicit pairs as the forward
    # convolution's padding (k - 1 - p each side, PyTorch's convention); (shape, sum, sum sq)
    x = dev(np.arange(16.0).reshape(1, 4, 4, 1))
    w = dev(np.arange(18.0).reshape(3, 3, 1, 2))
    dn = ("NHWC", "HWIO", "NHWC")
    cases = [(((1, 1), (1, 1)), False, (1, 7, 5, 2), 8674.0, 3738256.0),
             (((1, 1), (1, 1)), True, (1, 7, 9, 2), 14310.0, 5330032.0),
             (((0, 2), (1, 0)), True, (1, 7, 10, 2), 13644.0, 4812368.0),
             ("SAME", True, (1, 8, 8, 2), 14757.0, 5361071.0)]
    for pad, consistent, shape, s1, s2 in cases:
        y = np.asarray(host(lax.conv_transpose(x, w, (2, 2), pad, rhs_dilation=(1, 2),
                                               dimension_numbers=dn,
                                               use_consistent_padding=consistent)))
        assert y.shape == shape and y.sum() == s1 and (y ** 2).sum() == s2
    y = host(lax.conv_transpose(x, dev(np.arange(18.0).reshape(3, 3, 2, 1)), (2, 2),
                                ((0, 2), (1, 0)), rhs_dilation=(1, 2), dimension_numbers=dn,
                                transpose_kernel=True, use_consistent_padding=True))
    assert np.asarray(y).sum() == 10428.0
