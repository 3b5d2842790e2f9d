"""``nonzero``, ``where(cond)``, ``argwhere``, ``flatnonzero`` with JAX's static ``size=`` and
``fill_value=``: NumPy references (truncated or padded), under jit and vmap, and the error
naming the function and the user's line when a traced input has no ``size``."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.errors import ConcretizationError


def ref_nonzero(a: np.ndarray, size: int, fill=0) -> tuple[np.ndarray, ...]:
    """JAX's documented result: NumPy's indices, truncated, or padded with the fill values."""
    idx = np.nonzero(a)
    fills = fill if isinstance(fill, tuple) else (fill,) * a.ndim
    out = []
    for i, f in zip(idx, fills):
        i = i[:size]
        out.append(np.concatenate([i, np.full(size - i.size, f, np.int64)]).astype(np.int64))
    return tuple(out)


_ARRAYS = hnp.arrays(np.int64, hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4),
                     elements=st.integers(0, 2))


@given(_ARRAYS, st.integers(0, 8), st.sampled_from([None, -1, 7]))
def test_nonzero_size_matches_reference(a: np.ndarray, size: int, fill) -> None:
    want = ref_nonzero(a, size, 0 if fill is None else fill)
    assert_allclose(fnp.nonzero(dev(a), size=size, fill_value=fill), want)
    f = funcgrad.jit(lambda a: fnp.nonzero(a, size=size, fill_value=fill))
    assert_allclose(f(dev(a)), want)
    assert_allclose(funcgrad.jit(lambda a: fnp.where(a, size=size, fill_value=fill))(dev(a)),
                    want)
    rows = np.stack(want, axis=1) if a.ndim else None
    assert_allclose(funcgrad.jit(lambda a: fnp.argwhere(a, size=size, fill_value=fill))(
        dev(a)), rows)
    flat = ref_nonzero(a.ravel(), size, 0 if fill is None else fill)[0]
    assert_allclose(funcgrad.jit(lambda a: fnp.flatnonzero(a, size=size,
                                                           fill_value=fill))(dev(a)), flat)


def test_jax_documented_examples() -> None:
    x = dev(np.array([0, 5, 0, 6, 0, 7]))
    assert_allclose(fnp.nonzero(x, size=2), (np.array([1, 3]),))
    assert_allclose(fnp.nonzero(x, size=5), (np.array([1, 3, 5, 0, 0]),))
    assert_allclose(fnp.nonzero(x, size=5, fill_value=-1), (np.array([1, 3, 5, -1, -1]),))
    y = dev(np.array([[0, 5, 0], [6, 0, 8]]))
    assert_allclose(fnp.flatnonzero(y, size=4, fill_value=-1), np.array([1, 3, 5, -1]))
    assert_allclose(fnp.nonzero(y, size=4, fill_value=(-1, -2)),
                    (np.array([0, 1, 1, -1]), np.array([1, 0, 2, -2])))
    assert_allclose(fnp.argwhere(y, size=4, fill_value=(-1, -2)),
                    np.array([[0, 1], [1, 0], [1, 2], [-1, -2]]))
    assert fnp.argwhere(dev(np.array(3)), size=2).shape == (2, 0)


def test_vmap_each_example_its_own_count() -> None:
    a = np.array([[0, 1, 1, 0], [1, 0, 0, 0], [0, 0, 0, 0]])
    got = funcgrad.vmap(lambda r: fnp.nonzero(r, size=3, fill_value=-1))(dev(a))
    want = np.stack([ref_nonzero(r, 3, -1)[0] for r in a])
    assert_allclose(got, (want,))
    got = funcgrad.vmap(lambda r: fnp.argwhere(r > 0, size=2))(dev(a))
    assert_allclose(got, np.stack([np.stack(ref_nonzero(r, 2), axis=1) for r in a]))


def test_indices_feed_differentiable_gathers() -> None:
    # The typical use: pick the first k positive entries under jit and differentiate through
    x = dev(np.array([-1.0, 2.0, -3.0, 4.0, 5.0]))

    def f(x):
        (i,) = fnp.nonzero(x > 0, size=2)
        return fnp.sum(x[i] ** 2)

    assert_allclose(funcgrad.jit(funcgrad.grad(f))(x), np.array([0.0, 4.0, 0.0, 8.0, 0.0]))


def test_traced_without_size_names_function_and_line() -> None:
    for fn in (fnp.nonzero, fnp.argwhere, fnp.flatnonzero):
        with pytest.raises(ConcretizationError) as info:
            funcgrad.jit(lambda a, fn=fn: fn(a))(dev(np.array([0, 1])))
        msg = str(info.value)
        assert f"fnp.{fn.__name__}" in msg and "size=" in msg
        assert "test_nonzero_size.py:" in msg
    with pytest.raises(ConcretizationError, match="size="):
        funcgrad.vmap(lambda a: fnp.where(a))(dev(np.array([[0, 1]])))


def test_bad_arguments() -> None:
    a = dev(np.array([[0, 1]]))
    with pytest.raises(ValueError, match="length 2"):
        fnp.nonzero(a, size=2, fill_value=(1, 2, 3))
    with pytest.raises(ValueError, match="0d"):
        fnp.nonzero(dev(np.array(1)), size=2)
    with pytest.raises(ValueError, match="non-negative"):
        fnp.nonzero(a, size=-1)
    with pytest.raises(TypeError, match="static int"):
        fnp.nonzero(a, size=2.5)
    with pytest.raises(ValueError, match="one-argument form"):
        fnp.where(a, 1, 2, size=3)
