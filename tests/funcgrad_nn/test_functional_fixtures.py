"""``grid_sample``, ``affine_grid``, ``max_unpool`` with shared maxima, fractional max
pooling and ``channel_shuffle`` against PyTorch fixtures made by
``fixtures/make_functional_fixtures.py``: outputs (and indices) and the gradients with respect
to every differentiable argument (the input and the grid of ``grid_sample``, theta of
``affine_grid``) in float64 and float32, eagerly and under jit; then derivatives against
finite differences, batching against a loop, and PyTorch's errors."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import funcgrad
import funcgrad_nn as nn
from funcgrad.test_util import check_grads
from tests.helpers import dev, host

F = nn.F
HERE = pathlib.Path(__file__).parent / "fixtures" / "functional"
CASES = json.loads((HERE / "cases.json").read_text())["cases"]
DATA = np.load(HERE / "functional.npz")
RTOL = {"float64": 1e-10, "float32": 2e-5}


def _close(actual, desired, dtype, what):
    actual = np.asarray(host(actual))
    assert actual.shape == desired.shape, f"{what}: shape {actual.shape} != {desired.shape}"
    assert actual.dtype == desired.dtype, f"{what}: dtype {actual.dtype} != {desired.dtype}"
    if desired.dtype.kind in "iub":
        np.testing.assert_array_equal(actual, desired, err_msg=what)
        return
    scale = max(1.0, float(np.max(np.abs(desired)))) if desired.size else 1.0
    np.testing.assert_allclose(actual, desired, rtol=RTOL[dtype], atol=RTOL[dtype] * scale,
                               err_msg=what)


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_pytorch(name, dtype, jit):
    case = CASES[name]
    rec = {k[len(name) + len(dtype) + 2:]: DATA[k] for k in DATA.files
           if k.startswith(f"{name}/{dtype}/")}
    args = [dev(rec[f"a{i}"]) for i in range(case["nargs"])]
    diff = case["diff"]

    def call(*d):
        full = list(args)
        for i, v in zip(diff, d):
            full[i] = v
        return eval(case["call"], {"F": F},  # noqa: S307 (the fixture's own text)
                    {f"a{i}": a for i, a in enumerate(full)})

    def values(*d):
        out = call(*d)
        return out[0] if "indices" in rec else out

    fn = funcgrad.jit(values) if jit else values
    if not diff:  # values only
        _close(fn(), rec["y"], dtype, f"{name} output")
        return
    out, pullback = funcgrad.vjp(fn, *[args[i] for i in diff])
    _close(out, rec["y"], dtype, f"{name} output")
    if "indices" in rec:
        got = np.asarray(host(call(*[args[i] for i in diff])[1]))
        assert got.dtype == np.int64, f"{name}: indices dtype {got.dtype}"
        np.testing.assert_array_equal(got, rec["indices"], err_msg=f"{name} indices")
    for i, g in zip(diff, pullback(dev(rec["ct"]))):
        _close(g, rec[f"g{i}"], dtype, f"{name} gradient of argument {i}")


def test_fixtures_are_small():
    assert sum(p.stat().st_size for p in HERE.iterdir()) < 400_000


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_grid_sample_derivatives_match_finite_differences(mode, padding_mode):
    rng = np.random.default_rng(3)
    x = dev(rng.standard_normal((1, 2, 4, 5)))
    # Away from pixel boundaries, where the derivative jumps.
    g = dev(np.floor(rng.uniform(-1.3, 1.3, (1, 3, 2, 2)) * 8) / 8 + 1 / 32)

    def f(a, b):
        return F.grid_sample(a, b, mode, padding_mode, align_corners=False)

    check_grads(f, (x, g), order=2, eps=1e-6)


def test_grid_sample_3d_derivatives_match_finite_differences():
    rng = np.random.default_rng(4)
    x = dev(rng.standard_normal((1, 1, 3, 4, 2)))
    g = dev(np.floor(rng.uniform(-1.2, 1.2, (1, 2, 2, 1, 3)) * 8) / 8 + 1 / 32)
    check_grads(lambda a, b: F.grid_sample(a, b, align_corners=True), (x, g), order=1,
                eps=1e-6)


def test_grid_sample_batches_like_a_loop():
    rng = np.random.default_rng(5)
    x = dev(rng.standard_normal((3, 2, 2, 4, 5)))
    g = dev(rng.uniform(-1.2, 1.2, (3, 2, 3, 2, 2)))

    def f(a, b):
        return F.grid_sample(a, b, "bicubic", "reflection")

    want = np.stack([host(f(x[i], g[i])) for i in range(3)])
    np.testing.assert_allclose(host(funcgrad.vmap(f)(x, g)), want, rtol=1e-12, atol=1e-12)


def test_affine_grid_identity_samples_the_image_back():
    x = dev(np.random.default_rng(6).standard_normal((2, 3, 4, 5)))
    theta = dev(np.tile(np.array([[1.0, 0, 0], [0, 1, 0]]), (2, 1, 1)))
    for ac in (False, True):
        g = F.affine_grid(theta, (2, 3, 4, 5), align_corners=ac)
        np.testing.assert_allclose(host(F.grid_sample(x, g, align_corners=ac)), host(x),
                                   rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("call, match", [
    (lambda: F.grid_sample(np.ones((1, 1, 2, 2)), np.zeros((1, 2, 2, 3))), "size 2"),
    (lambda: F.grid_sample(np.ones((1, 1, 2, 2)), np.zeros((2, 2, 2, 2))), "batch size"),
    (lambda: F.grid_sample(np.ones((1, 1, 2, 2)), np.zeros((1, 2, 2))), "same number"),
    (lambda: F.grid_sample(np.ones((1, 1, 2, 2, 2)), np.zeros((1, 1, 1, 1, 3)), "bicubic"),
     "4-D"),
    (lambda: F.grid_sample(np.ones((1, 1, 2, 2)), np.zeros((1, 1, 1, 2)), "area"), "mode"),
    (lambda: F.grid_sample(np.ones((1, 1, 2, 2)), np.zeros((1, 1, 1, 2)),
                           padding_mode="wrap"), "padding_mode"),
    (lambda: F.affine_grid(np.ones((2, 3, 4)), (2, 1, 4, 5)), "N x 2 x 3"),
    (lambda: F.affine_grid(np.ones((1, 2, 3)), (1, 1, 5)), "4-D and 5-D"),
])
def test_bad_arguments_raise_like_pytorch(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_grid_sample_needs_matching_float_dtypes():
    with pytest.raises(TypeError, match="same floating dtype"):
        F.grid_sample(np.ones((1, 1, 2, 2), np.float32), np.zeros((1, 1, 1, 2)))


def test_fractional_max_pool_draws_windows_from_its_key():
    x = dev(np.random.default_rng(7).standard_normal((2, 3, 13, 11)))

    def pool(key):
        return F.fractional_max_pool2d(x, 2, output_size=(5, 4), return_indices=True, key=key)

    a, b = pool(1), pool(1)
    np.testing.assert_array_equal(host(a[1]), host(b[1]))
    assert not np.array_equal(host(pool(2)[1]), host(a[1]))
    jitted = funcgrad.jit(pool)(dev(np.array([1, 0], np.uint32)))  # the key of seed 1
    np.testing.assert_array_equal(host(jitted[1]), host(a[1]))
    # The values are the input at the indices.
    flat = host(x).reshape(2, 3, -1)
    np.testing.assert_array_equal(host(a[0]).reshape(2, 3, -1),
                                  np.take_along_axis(flat, host(a[1]).reshape(2, 3, -1), 2))


def test_fractional_max_pool_layer_advances_its_key():
    nn.manual_seed(0)
    layer = nn.FractionalMaxPool2d(3, output_size=4, return_indices=True)
    x = dev(np.random.default_rng(8).standard_normal((1, 4, 11, 12)))
    first, second = layer(x)[1], layer(x)[1]
    assert first.shape == (1, 4, 4, 4)
    assert not np.array_equal(host(first), host(second))
    np.testing.assert_array_equal(host(layer(x, key=3)[1]), host(layer(x, key=3)[1]))
    assert nn.FractionalMaxPool3d(2, output_ratio=0.5)(dev(np.ones((1, 1, 4, 6, 8)))).shape \
        == (1, 1, 2, 3, 4)


def test_fractional_max_pool_gradient_matches_finite_differences():
    x = dev(np.random.default_rng(9).permutation(70).reshape(1, 1, 7, 10) / 7.0)
    samples = dev(np.array([[[0.3, 0.8]]]))
    check_grads(lambda a: F.fractional_max_pool2d(a, 2, (3, 4), _random_samples=samples),
                (x,), order=1, eps=1e-6)


@pytest.mark.parametrize("call, match", [
    (lambda: F.fractional_max_pool2d(np.ones((1, 1, 4, 4)), 2), "exactly one"),
    (lambda: F.fractional_max_pool2d(np.ones((1, 1, 4, 4)), 2, 4), "output \\+ kernel"),
    (lambda: F.fractional_max_pool3d(np.ones((1, 1, 4, 4, 4)), 2, 3), "output \\+ kernel"),
    (lambda: F.fractional_max_pool2d(np.ones((1, 1, 4, 4)), 2, 2,
                                     _random_samples=np.zeros((1, 1, 3))), "_random_samples"),
    (lambda: nn.FractionalMaxPool2d(2, output_ratio=1.5), "between 0 and 1"),
    (lambda: F.channel_shuffle(np.ones((1, 5, 2)), 3), "divisible"),
    (lambda: F.channel_shuffle(np.ones((2, 6)), 3), "more than 2 dims"),
])
def test_pooling_and_shuffle_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_with_indices_aliases_and_deprecated_upsampling():
    x = dev(np.random.default_rng(10).standard_normal((1, 2, 5, 6)))
    for got, want in [(F.max_pool2d_with_indices(x, 2), F.max_pool2d(x, 2, return_indices=True)),
                      (F.adaptive_max_pool2d_with_indices(x, 3),
                       F.adaptive_max_pool2d(x, 3, return_indices=True))]:
        for g, w in zip(got, want):
            np.testing.assert_array_equal(host(g), host(w))
    with pytest.warns(UserWarning, match="deprecated"):  # (PyTorch's warning)
        np.testing.assert_array_equal(
            host(F.upsample_bilinear(x, scale_factor=2)),
            host(F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True)))
        np.testing.assert_array_equal(host(F.upsample_nearest(x, (7, 9))),
                                      host(F.interpolate(x, (7, 9))))
    np.testing.assert_array_equal(host(nn.ChannelShuffle(2)(x)), host(F.channel_shuffle(x, 2)))


@pytest.mark.parametrize("kw", [dict(mode="sum"), dict(mode="mean", padding_idx=4),
                                dict(mode="max", padding_idx=-1, include_last_offset=True),
                                dict(mode="sum", include_last_offset=True)])
def test_embedding_bag_takes_traced_indices_and_offsets(kw):
    # Under jit the bag structure (offsets) and the indices (padding_idx) are traced: the
    # membership is computed, so one compiled function serves every batch of bags.
    rng = np.random.default_rng(11)
    w = dev(rng.standard_normal((10, 3)))
    idx, off = dev(np.array([1, 2, 4, 5, 4, 9, 3])), dev(np.array([0, 2, 2, 5]))

    def bag(i, o, weight):
        return F.embedding_bag(i, weight, o, **kw)

    want = bag(idx, off, w)
    got = funcgrad.jit(bag)(idx, off, w)
    np.testing.assert_allclose(host(got), host(want), rtol=1e-12, atol=1e-12)
    g_want = funcgrad.grad(lambda weight: (bag(idx, off, weight) ** 2).sum())(w)
    g_got = funcgrad.jit(funcgrad.grad(lambda weight, i, o: (bag(i, o, weight) ** 2).sum()))(
        w, idx, off)
    np.testing.assert_allclose(host(g_got), host(g_want), rtol=1e-12, atol=1e-12)
