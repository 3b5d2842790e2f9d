"""The window primitives ``patches`` (im2col) and ``fold`` (col2im): values against a direct
loop, adjointness, every derivative rule (check_grads to order 2), vmap against a loop, jit,
and the strict device backend."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad
from funcgrad.errors import ShapeError
from funcgrad.ops.windows import fold, patches, window_counts
from funcgrad.test_util import check_grads
from tests.helpers import assert_allclose, dev, host

CASES = [
    # kernel, stride, dilation, padding (lo, hi) per axis, spatial size
    ((3,), (1,), (1,), ((1, 1),), (7,)),
    ((3, 2), (2, 1), (1, 2), ((1, 2), (0, 1)), (7, 6)),
    ((2, 2), (2, 2), (1, 1), ((0, 0), (0, 0)), (6, 4)),        # tiles: the reshape path
    ((2, 3), (1, 2), (2, 1), ((2, -1), (1, 0)), (7, 6)),       # negative hi: tail unused
    ((2, 1, 2), (1, 2, 2), (1, 1, 1), ((0, 1), (1, 0), (0, 0)), (3, 4, 4)),
]


def naive_patches(x, kernel, stride, dilation, padding):
    xp = np.pad(x, [(0, 0), (0, 0)] + [(lo, max(hi, 0)) for lo, hi in padding])
    counts = window_counts(x.shape[2:], kernel, stride, dilation, padding)
    out = np.zeros((x.shape[1],) + kernel + (x.shape[0],) + counts)
    for offs in itertools.product(*(range(k) for k in kernel)):
        for pos in itertools.product(*(range(c) for c in counts)):
            src = tuple(p * s + o * d for p, s, o, d in zip(pos, stride, offs, dilation))
            out[(slice(None),) + offs + (slice(None),) + pos] = xp[(slice(None),) * 2 + src].T
    return out


@pytest.mark.parametrize("kernel,stride,dilation,padding,spatial", CASES)
def test_patches_values_and_fold_is_adjoint(kernel, stride, dilation, padding, spatial):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3) + spatial)
    p = patches(dev(x), kernel, stride, dilation, padding)
    assert_allclose(p, naive_patches(x, kernel, stride, dilation, padding))
    ct = rng.standard_normal(p.shape)
    back = fold(dev(ct), spatial, kernel, stride, dilation, padding)
    assert back.shape == x.shape
    # <patches(x), ct> == <x, fold(ct)>: fold is patches' transpose.
    np.testing.assert_allclose(np.sum(host(p) * ct), np.sum(x * host(back)), rtol=1e-12)


@pytest.mark.parametrize("kernel,stride,dilation,padding,spatial", CASES[:4])
def test_rules_check_grads(kernel, stride, dilation, padding, spatial):
    rng = np.random.default_rng(1)
    x = dev(rng.standard_normal((2, 2) + spatial))
    check_grads(lambda v: patches(v, kernel, stride, dilation, padding), (x,), order=2)
    p = patches(x, kernel, stride, dilation, padding)
    c = dev(rng.standard_normal(p.shape))
    check_grads(lambda v: fold(v, spatial, kernel, stride, dilation, padding), (c,), order=2)


@pytest.mark.parametrize("kernel,stride,dilation,padding,spatial", CASES)
def test_vmap_matches_loop_and_jit_matches_eager(kernel, stride, dilation, padding, spatial):
    rng = np.random.default_rng(2)
    xs = rng.standard_normal((3, 2, 2) + spatial)

    def f(v):
        return patches(v, kernel, stride, dilation, padding)

    for axis in (0, 2):
        batched = funcgrad.vmap(f, in_axes=axis)(dev(np.moveaxis(xs, 0, axis)))
        assert_allclose(batched, np.stack([host(f(dev(v))) for v in xs]))
    p0 = f(dev(xs[0]))
    cs = rng.standard_normal((3,) + p0.shape)

    def g(c):
        return fold(c, spatial, kernel, stride, dilation, padding)

    batched = funcgrad.vmap(g, in_axes=1)(dev(np.moveaxis(cs, 0, 1)))
    assert_allclose(batched, np.stack([host(g(dev(c))) for c in cs]))
    assert_allclose(funcgrad.jit(f)(dev(xs[0])), p0)
    assert_allclose(funcgrad.jit(g)(dev(cs[0])), g(dev(cs[0])))


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_adjoint_hypothesis(data):
    nd = data.draw(st.integers(1, 3))
    kernel = tuple(data.draw(st.integers(1, 3)) for _ in range(nd))
    stride = tuple(data.draw(st.integers(1, 3)) for _ in range(nd))
    dilation = tuple(data.draw(st.integers(1, 2)) for _ in range(nd))
    padding = tuple((data.draw(st.integers(0, 2)), data.draw(st.integers(-1, 2)))
                    for _ in range(nd))
    spatial = tuple(data.draw(st.integers(1, 6)) for _ in range(nd))
    if min(window_counts(spatial, kernel, stride, dilation, padding)) < 1:
        with pytest.raises(ShapeError):
            patches(np.zeros((1, 1) + spatial), kernel, stride, dilation, padding)
        return
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 2) + spatial)
    p = patches(x, kernel, stride, dilation, padding)
    assert_allclose(p, naive_patches(x, kernel, stride, dilation, padding))
    ct = rng.standard_normal(p.shape)
    np.testing.assert_allclose(
        np.sum(p * ct), np.sum(x * fold(ct, spatial, kernel, stride, dilation, padding)),
        rtol=1e-10, atol=1e-12)


def test_shape_errors_name_the_primitive():
    with pytest.raises(ShapeError, match="patches"):
        patches(np.zeros((1, 1, 2, 2)), (3, 3), (1, 1), (1, 1), ((0, 0), (0, 0)))
    with pytest.raises(ShapeError, match="one entry per spatial axis"):
        patches(np.zeros((1, 1, 4, 4)), (3,), (1,), (1,), ((0, 0),))
    with pytest.raises(ShapeError, match="fold"):
        fold(np.zeros((1, 2, 1, 3)), (5,), (2,), (1,), (1,), ((0, 0),))
