"""``lax.conv_general_dilated`` and ``lax.reduce_window`` against hand-written NumPy.

    python benchmarks/bench_lax_conv.py             # every case, each in a fresh process
    python benchmarks/bench_lax_conv.py --case conv2d_nhwc_f32

The NumPy baselines are what one would write by hand: ``sliding_window_view`` and one
``tensordot`` for a convolution (its gradients two more tensordots and a windowed scatter-add
loop over the kernel offsets), a strided reshape-max for pooling. float32, one BLAS thread.

Cases:
- ``conv2d_nhwc_f32``: forward, batch 16, 32x32x32 -> 64 channels, 3x3 'SAME', NHWC/HWIO.
- ``conv2d_grad_f32``: gradients w.r.t. input and kernel of ``sum(conv(x, w) * ct)`` (NCHW).
- ``conv_transpose_f32``: ``conv_transpose`` stride 2, 4x4 kernel, 16x16x64 -> 32x32x32 (NHWC).
- ``max_pool_f32``: ``reduce_window`` max 2x2 stride 2 on 16x32x32x32 (NHWC).
"""

from __future__ import annotations

import os
import sys

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [_HERE, os.path.dirname(_HERE)]

import numpy as np  # noqa: E402
from harness import main  # noqa: E402
from numpy.lib.stride_tricks import sliding_window_view  # noqa: E402

import funcgrad  # noqa: E402
from funcgrad import lax  # noqa: E402

_RNG = np.random.default_rng(0)


def _f32(*shape):
    return _RNG.standard_normal(shape).astype(np.float32)


def _np_conv_nchw(x, w, pad):
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    win = sliding_window_view(xp, w.shape[2:], axis=(2, 3))          # (N, C, H, W, kh, kw)
    return np.einsum("nchwij,ocij->nohw", win, w, optimize=True)


def conv2d_nhwc_f32():
    x, w = _f32(16, 32, 32, 32), _f32(3, 3, 32, 64)
    dn = ("NHWC", "HWIO", "NHWC")

    def ours():
        return lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=dn)

    def numpy_conv():
        xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
        win = sliding_window_view(xp, (3, 3), axis=(1, 2))            # (N, H, W, C, kh, kw)
        return np.tensordot(win, w, axes=((4, 5, 3), (0, 1, 2)))

    np.testing.assert_allclose(ours(), numpy_conv(), rtol=1e-3, atol=1e-3)
    return ours, numpy_conv


def conv2d_grad_f32():
    x, w = _f32(16, 32, 32, 32), _f32(64, 32, 3, 3)
    ct = _f32(16, 64, 32, 32)
    grad = funcgrad.grad(lambda x, w: (lax.conv(x, w, (1, 1), "SAME") * ct).sum(),
                         argnums=(0, 1))

    def numpy_grads():
        xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
        win = sliding_window_view(xp, (3, 3), axis=(2, 3))
        gw = np.einsum("nchwij,nohw->ocij", win, ct, optimize=True)
        gxp = np.zeros_like(xp)
        for i in range(3):
            for j in range(3):
                gxp[:, :, i:i + 32, j:j + 32] += np.einsum("nohw,oc->nchw", ct, w[:, :, i, j],
                                                           optimize=True)
        return gxp[:, :, 1:-1, 1:-1], gw

    got, want = grad(x, w), numpy_grads()
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-2)
    return lambda: grad(x, w), numpy_grads


def conv_transpose_f32():
    x, w = _f32(16, 16, 16, 64), _f32(4, 4, 64, 32)

    def ours():
        return lax.conv_transpose(x, w, (2, 2), "SAME")

    def numpy_convt():
        # Scatter each input pixel times the (flipped: JAX does not flip it) kernel into the
        # padded output, then crop.
        out = np.zeros((16, 34, 34, 32), np.float32)
        contrib = np.tensordot(x, w, axes=((3,), (2,)))               # (N, H, W, kh, kw, O)
        for i in range(4):
            for j in range(4):
                out[:, i:i + 32:2, j:j + 32:2] += contrib[:, :, :, 3 - i, 3 - j]
        return out[:, 1:33, 1:33]

    np.testing.assert_allclose(ours(), numpy_convt(), rtol=1e-3, atol=1e-3)
    return ours, numpy_convt


def max_pool_f32():
    x = _f32(16, 32, 32, 32)

    def ours():
        return lax.reduce_window(x, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")

    def numpy_pool():
        return x.reshape(16, 16, 2, 16, 2, 32).max(axis=(2, 4))

    np.testing.assert_array_equal(ours(), numpy_pool())
    return ours, numpy_pool


CASES = {f.__name__: f for f in (conv2d_nhwc_f32, conv2d_grad_f32, conv_transpose_f32,
                                  max_pool_f32)}

if __name__ == "__main__":
    main(CASES)
