"""``F.interpolate(..., antialias=True)`` (and mode ``'lanczos'``) against PyTorch fixtures made
by ``fixtures/make_resampling_fixtures.py``: outputs and input gradients (funcgrad's VJP vs
torch's backward) in float64 and float32, eagerly and under jit; vmap against a loop; JVP/VJP
against finite differences; PyTorch's errors for the unsupported combinations; uint8 images
(bilinear and bicubic, PyTorch's fixed-point resampling) bit for bit."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import funcgrad
import funcgrad_nn as nn
from funcgrad.test_util import check_grads
from tests.helpers import assert_allclose, dev, host

F = nn.F
HERE = pathlib.Path(__file__).parent / "fixtures" / "resampling"
INDEX = json.loads((HERE / "cases.json").read_text())
CASES, UINT8_CASES = INDEX["cases"], INDEX["uint8_cases"]
DATA = np.load(HERE / "antialias.npz")
UINT8 = np.load(HERE / "uint8.npz")
RTOL = {"float64": 1e-10, "float32": 1e-5}


def _kwargs(case: dict) -> dict:
    return {k: tuple(v) if isinstance(v, list) else v for k, v in case["kwargs"].items()}


def _close(actual, desired, dtype, what):
    actual = np.asarray(host(actual))
    assert actual.shape == desired.shape, f"{what}: shape {actual.shape} != {desired.shape}"
    assert actual.dtype == np.dtype(dtype), f"{what}: dtype {actual.dtype} != {dtype}"
    scale = max(1.0, float(np.max(np.abs(desired))))
    np.testing.assert_allclose(actual, desired, rtol=RTOL[dtype], atol=RTOL[dtype] * scale,
                               err_msg=what)


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_antialias_matches_pytorch(name, dtype, jit):
    kw = _kwargs(CASES[name])
    x, y, ct, gx = (DATA[f"{name}/{dtype}/{k}"] for k in ("x", "y", "ct", "gx"))

    def resize(v):
        return F.interpolate(v, antialias=True, **kw)

    fn = funcgrad.jit(resize) if jit else resize
    out, pullback = funcgrad.vjp(fn, dev(x))
    _close(out, y, dtype, f"{name} output")
    _close(pullback(dev(ct))[0], gx, dtype, f"{name} input gradient")


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("name", sorted(UINT8_CASES))
def test_uint8_matches_pytorch_bit_for_bit(name, jit):
    # PyTorch resamples uint8 images in 16-bit fixed point, one axis at a time (the last
    # first), rounding and clamping each pass, and returns uint8: a float computation rounded
    # once differs by one here and there (and bicubic overshoots by more than that).
    kw = _kwargs(UINT8_CASES[name])
    x, want = UINT8[f"{name}/x"], UINT8[f"{name}/y"]

    def resize(v):
        return F.interpolate(v, **kw)

    got = np.asarray(host((funcgrad.jit(resize) if jit else resize)(dev(x))))
    assert got.dtype == np.uint8 and got.shape == want.shape
    np.testing.assert_array_equal(got, want, err_msg=name)


def test_uint8_resampling_batches_like_a_loop():
    x = np.random.default_rng(1).integers(0, 256, (3, 1, 2, 6, 5)).astype(np.uint8)

    def resize(v):
        return F.interpolate(v, size=(4, 9), mode="bicubic")

    batched = np.asarray(host(funcgrad.vmap(resize)(dev(x))))
    np.testing.assert_array_equal(batched, np.stack([np.asarray(host(resize(dev(v))))
                                                     for v in x]))


def test_upsampling_bilinear_antialias_equals_plain_bilinear():
    # PyTorch: without align_corners, antialiasing only changes downscaling for the tent
    # filter (with align_corners its antialiased path centres outputs differently; the
    # fixtures cover that).
    x = dev(np.random.default_rng(0).standard_normal((1, 2, 4, 5)))
    for kw in (dict(scale_factor=2.5), dict(size=(7, 9))):
        assert_allclose(F.interpolate(x, mode="bilinear", antialias=True, **kw),
                        F.interpolate(x, mode="bilinear", **kw), rtol=1e-12, atol=1e-12)


def test_antialias_preserves_constants_and_dtype():
    for dt in (np.float32, np.float64):
        x = dev(np.full((1, 1, 17, 10), 3.0, dt))
        for mode in ("bilinear", "bicubic", "lanczos"):
            y = F.interpolate(x, size=(4, 7), mode=mode, antialias=True)
            assert y.dtype == dt
            assert_allclose(y, np.full((1, 1, 4, 7), 3.0, dt), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "lanczos"])
def test_antialias_grads_vmap_and_module(mode):
    rng = np.random.default_rng(1)
    x = dev(rng.standard_normal((3, 2, 9, 8)))

    def f(v):
        return F.interpolate(v, scale_factor=(0.45, 1.5), mode=mode, antialias=True)

    check_grads(f, (x,), order=2)
    assert_allclose(funcgrad.vmap(f)(x[:, None]), np.stack([host(f(v[None])) for v in x]))
    assert_allclose(funcgrad.vmap(f, in_axes=1, out_axes=1)(x[None]),
                    np.stack([host(f(v[None])) for v in x], axis=1))
    g = funcgrad.grad(lambda v: (f(v) ** 2).sum())
    assert_allclose(funcgrad.jit(g)(x), g(x), rtol=1e-12, atol=1e-12)


def test_antialias_errors_match_pytorch():
    x4 = np.ones((1, 1, 4, 4))
    for mode, x in (("nearest", x4), ("area", x4), ("linear", np.ones((1, 1, 4))),
                    ("trilinear", np.ones((1, 1, 2, 2, 2))), ("bilinear", np.ones((1, 1, 4)))):
        with pytest.raises(ValueError, match="Anti-alias option is restricted to bilinear, "
                           "bicubic, and lanczos modes and requires a 4-D tensor"):
            F.interpolate(x, scale_factor=0.5, mode=mode, antialias=True)
    with pytest.raises(ValueError, match="Lanczos mode requires antialias=True"):
        F.interpolate(x4, scale_factor=0.5, mode="lanczos")
    with pytest.raises(ValueError, match="Lanczos mode does not support align_corners=True"):
        F.interpolate(x4, scale_factor=0.5, mode="lanczos", align_corners=True, antialias=True)
    with pytest.raises(ValueError, match="mode 'lanczos' expects a 4-D input"):
        F.interpolate(np.ones((1, 1, 4)), scale_factor=0.5, mode="lanczos")


def test_interpolate_takes_numpy_scalars_and_arrays_for_size_and_scale():
    x = np.ones((1, 1, 3, 4))
    assert F.interpolate(x, scale_factor=np.float32(2.0)).shape == (1, 1, 6, 8)
    assert F.interpolate(x, size=np.int32(5)).shape == (1, 1, 5, 5)
    assert F.interpolate(x, scale_factor=np.array([2.0, 1.5])).shape == (1, 1, 6, 6)
    assert F.interpolate(x, size=np.array([2, 3]), mode="bilinear").shape == (1, 1, 2, 3)


def test_pad_crops_to_empty_in_every_mode_but_never_past_an_axis():
    # torch 2.13: an axis may be cropped to size 0 in any mode; constant padding crops
    # first, so its crops alone must fit (narrow() fails otherwise).
    x = np.ones((4, 2, 1, 5))
    assert F.pad(x, (1, 1, 0, -1), mode="reflect").shape == (4, 2, 0, 7)
    assert F.pad(np.ones((1, 3, 2)), (-1, -1, -1, 0), mode="circular").shape == (1, 2, 0)
    assert F.pad(np.ones((2, 5)), (-3, -2)).shape == (2, 0)
    with pytest.raises(ValueError, match="crops more than"):
        F.pad(np.ones((2, 4, 1, 2)), (-1, 1, -2, 2, 3, 1))
    with pytest.raises(ValueError, match="crops more than"):
        F.pad(np.ones((1, 3, 2)), (-1, -2, 1, 0), mode="replicate")


# torch 2.13: F.affine_grid(identity, (1, 1, 1, 28), align_corners=False)[0, 0, :, 0], bits.
# (linspace's fused multiply-adds, then * 27 / 28 in two roundings; 6 of the float32 points
# and some float64 ones differ by an ulp from a plain formula.)
IDENTITY_GRID_28 = {
    np.float32: (np.uint32, [
        0xbf76db6e, 0xbf649249, 0xbf524925, 0xbf400000, 0xbf2db6db, 0xbf1b6db7, 0xbf092493,
        0xbeedb6db, 0xbec92492, 0xbea49248, 0xbe800000, 0xbe36db6e, 0xbddb6db6, 0xbd124923,
        0x3d124923, 0x3ddb6db6, 0x3e36db6e, 0x3e800000, 0x3ea49248, 0x3ec92492, 0x3eedb6db,
        0x3f092493, 0x3f1b6db7, 0x3f2db6db, 0x3f400000, 0x3f524925, 0x3f649249, 0x3f76db6e]),
    np.float64: (np.uint64, [
        0xbfeedb6db6db6db7, 0xbfec924924924925, 0xbfea492492492492, 0xbfe8000000000000,
        0xbfe5b6db6db6db6e, 0xbfe36db6db6db6db, 0xbfe1249249249249, 0xbfddb6db6db6db6e,
        0xbfd9249249249249, 0xbfd4924924924926, 0xbfd0000000000001, 0xbfc6db6db6db6db8,
        0xbfbb6db6db6db6df, 0xbfa2492492492499, 0x3fa2492492492499, 0x3fbb6db6db6db6df,
        0x3fc6db6db6db6db8, 0x3fd0000000000001, 0x3fd4924924924926, 0x3fd9249249249249,
        0x3fddb6db6db6db6e, 0x3fe1249249249249, 0x3fe36db6db6db6db, 0x3fe5b6db6db6db6e,
        0x3fe8000000000000, 0x3fea492492492492, 0x3fec924924924925, 0x3feedb6db6db6db7]),
}


# torch 2.13's theta gradient there, float32 (in float64 its grid_sample rounds some of
# these samples to the other side of a pixel than ours: not matched)
THETA_GRAD_28 = [[[-545.8988647460938, 86.12278747558594, 220.55247497558594],
                  [97.47981262207031, -420.1410827636719, 69.18356323242188]]]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_affine_grid_identity_is_torchs_bit_for_bit(dtype):
    # A spatial transformer starts at the identity, where every sample sits on a pixel and
    # grid_sample's derivative jumps: a point one ulp off PyTorch's takes the other slope
    # (the STN tutorial's theta gradient was 20 % off).
    uint, bits = IDENTITY_GRID_28[dtype]
    theta = dev(np.array([[[1, 0, 0], [0, 1, 0]]], dtype))
    grid = host(nn.F.affine_grid(theta, (1, 1, 1, 28), align_corners=False))
    np.testing.assert_array_equal(grid[0, 0, :, 0].view(uint), np.array(bits, uint))
    if dtype is np.float64:
        return
    x = np.random.default_rng(0).random((1, 1, 28, 28)).astype(dtype)
    theta_grad = funcgrad.grad(lambda t: nn.F.grid_sample(
        dev(x), nn.F.affine_grid(t, (1, 1, 28, 28), align_corners=False),
        align_corners=False).sum())(theta)
    np.testing.assert_allclose(host(theta_grad), THETA_GRAD_28, rtol=1e-5, atol=1e-3)


@pytest.mark.parametrize("args,kw,kind", [
    # torch 2.13 raises RuntimeError for each of these ...
    ((3, 0), dict(mode="reflect"), RuntimeError),
    ((4, 0), dict(mode="circular"), RuntimeError),   # "wrapping around more than once"
    ((-2, -2), {}, RuntimeError),                    # "narrow(): length must be non-negative"
    ((1, 1), dict(mode="reflect", value=1.0), RuntimeError),
    # ... and NotImplementedError for these
    ((1, 1), dict(mode="foo"), NotImplementedError),
    ((1, 1, 1, 1, 1, 1), dict(mode="reflect"), NotImplementedError),
])
def test_pad_errors_have_torchs_types(args, kw, kind):
    with pytest.raises(kind, match="pad: "):
        F.pad(dev(np.ones((1, 2, 3), np.float32)), args, **kw)


@pytest.mark.parametrize("shape,kw,kind", [
    ((1, 2, 3), dict(scale_factor=2, mode="bicubic"), NotImplementedError),
    ((1, 1, 2, 2, 2), dict(scale_factor=2, mode="bilinear"), NotImplementedError),
    ((2, 3), dict(size=4), NotImplementedError),
    ((1, 1, 2), dict(size=4, mode="cubic"), NotImplementedError),
    ((1, 1, 2), dict(scale_factor=-1.0), RuntimeError),
    ((1, 1, 2), dict(size=0), RuntimeError),
])
def test_interpolate_errors_have_torchs_types_and_stay_value_errors(shape, kw, kind):
    with pytest.raises(kind, match="interpolate: ") as info:
        F.interpolate(dev(np.ones(shape, np.float32)), **kw)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("name", ["upsample", "upsample_nearest", "upsample_bilinear"])
def test_deprecated_upsample_functions_warn_as_torch(name):
    # torch 2.13: UserWarning "`nn.functional.upsample` is deprecated. Use
    # `nn.functional.interpolate` instead."
    with pytest.warns(UserWarning, match=f"`nn.functional.{name}` is deprecated"):
        out = getattr(F, name)(dev(np.ones((1, 1, 2, 2), np.float32)), scale_factor=2)
    assert out.shape == (1, 1, 4, 4)
