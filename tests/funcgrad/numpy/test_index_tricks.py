"""``fnp.r_`` / ``fnp.c_`` against NumPy (slices, scalars, arrays, string directives), traced,
differentiated and batched; ``mgrid``/``ogrid``/``s_``/``index_exp`` as NumPy's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from helpers import assert_allclose, dev, host, is_device_array

import funcgrad
import funcgrad.numpy as fnp

# NumPy's own r_ builds a matrix for the 'r'/'c' directives and string keys (the references)
pytestmark = pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")

A = np.array([1.0, 2.0])
B = np.array([[1, 2], [3, 4]])

CASES: list[Callable[[Any], Any]] = [
    lambda m: m.r_[1:4, 0, A],
    lambda m: m.r_[0:1:5j],
    lambda m: m.r_[:3],
    lambda m: m.r_[5],
    lambda m: m.r_[1, 2.5],
    lambda m: m.r_[A, 1:3:2j],
    lambda m: m.r_[np.float32(1), np.ones(2, np.float32)],
    lambda m: m.r_[np.int8(1), np.ones(2, np.int8), 3],
    lambda m: m.r_["0,2", [1, 2], [3, 4]],
    lambda m: m.r_["0,2,0", [1, 2], [3, 4]],
    lambda m: m.r_["1,2,0", [1, 2], [3, 4]],
    lambda m: m.r_["-1", B, B],
    lambda m: m.r_["0,3,1", B, B],
    lambda m: m.r_["0,3,-1", A, A],
    lambda m: m.r_["0,3,-2", A, A],
    lambda m: m.r_["r", [1, 2], [3, 4]],
    lambda m: m.r_["c", [1, 2], [3, 4]],
    lambda m: m.c_[A, A],
    lambda m: m.c_[B, B],
    lambda m: m.c_[1:3, 4:6],
    lambda m: m.c_["0,2,-1", [1, 2], [3, 4]],
    lambda m: m.c_[A, B[:, :1]],
]


@pytest.mark.parametrize("case", CASES, ids=[str(i) for i in range(len(CASES))])
def test_matches_numpy(case: Callable[[Any], Any]) -> None:
    got, want = np.asarray(host(case(fnp))), np.asarray(case(np))
    assert got.shape == want.shape and got.dtype == want.dtype
    assert_allclose(got, want)


def test_matrix_builder_string_uses_the_callers_names() -> None:
    P, Q = np.ones((2, 2)), np.zeros((2, 2))  # noqa: N806, F841  (read by name)
    assert_allclose(fnp.r_["P Q; Q P"], np.asarray(np.r_["P Q; Q P"]))


def test_errors_as_numpy() -> None:
    with pytest.raises(ValueError, match="first entry"):
        fnp.r_[1, "0,2"]
    with pytest.raises(ValueError, match="unknown special directive"):
        fnp.r_["0,x", [1]]


def test_traced_differentiated_and_batched() -> None:
    x = dev(np.array([1.0, 2.0]))
    f = lambda v: fnp.sum(fnp.r_[v, 2.0 * v, 1.0] ** 2)  # noqa: E731
    assert_allclose(funcgrad.grad(f)(x), 10.0 * host(x))
    assert_allclose(funcgrad.jit(f)(x), f(x))
    out = funcgrad.jit(lambda v: fnp.c_[v, v + 1.0])(x)
    assert_allclose(out, np.c_[host(x), host(x) + 1.0])
    batched = funcgrad.vmap(lambda v: fnp.r_[v, 0.0])(dev(np.ones((3, 2))))
    assert_allclose(batched, np.tile([1.0, 1.0, 0.0], (3, 1)))
    # a traced stop with a complex step: linspace of traced bounds
    assert_allclose(funcgrad.jit(lambda s: fnp.r_[0.0:s:3j])(2.0), np.array([0.0, 1.0, 2.0]))


@pytest.mark.parametrize("key", [
    (slice(0, 3),), (slice(0, 2), slice(0, 3)), (slice(-1, 1, 5j),), (slice(0, 1, 3j), slice(2)),
    (slice(0.5, 2),), (slice(0, 5, 2), slice(1, 0, -1)), (slice(0, 2), slice(0, 1, 0.25)),
])
def test_grids_match_numpy(key: tuple) -> None:
    k = key[0] if len(key) == 1 else key
    for ours, theirs in ((fnp.mgrid, np.mgrid), (fnp.ogrid, np.ogrid)):
        got, want = ours[k], theirs[k]
        assert isinstance(got, tuple) == isinstance(want, tuple)
        for g, w in zip(got if isinstance(want, tuple) else [got],
                        want if isinstance(want, tuple) else [want], strict=True):
            assert g.dtype == w.dtype
            # on the default device (the strict test device in that pass), as documented
            assert is_device_array(g)
            assert_allclose(host(g), w)


def test_grids_under_jit_and_index_expressions() -> None:
    f = funcgrad.jit(lambda s: s * fnp.mgrid[0:2, 0:3][1])
    assert_allclose(f(2.0), 2.0 * np.mgrid[0:2, 0:3][1])
    assert fnp.s_[1:3, ::2] == (slice(1, 3), slice(None, None, 2))
    assert fnp.index_exp[2] == (2,)
    x = dev(np.arange(6.0))
    assert_allclose(x[fnp.s_[::-2]], np.arange(6.0)[::-2])


def test_ndindex_and_ndenumerate_as_numpys() -> None:
    # NumPy code run with `import funcgrad.numpy as np` iterates shapes and elements
    assert list(fnp.ndindex(2, 2)) == list(np.ndindex(2, 2))
    assert list(fnp.ndindex((3,))) == [(0,), (1,), (2,)]
    x = np.array([[1.5, 2.0], [3.0, 4.5]])
    got = [(i, float(host(v))) for i, v in fnp.ndenumerate(dev(x))]
    assert got == [(i, float(v)) for i, v in np.ndenumerate(x)]
    # under jit the elements are traced: a Python sum over them still compiles
    total = funcgrad.jit(lambda a: sum(v * k for k, (_, v) in enumerate(fnp.ndenumerate(a))))
    assert float(host(total(dev(x)))) == 0 * 1.5 + 1 * 2.0 + 2 * 3.0 + 3 * 4.5


def test_asarray_chkfinite_errstate_and_formatting() -> None:
    assert_allclose(fnp.asarray_chkfinite(dev(np.array([1.0, 2.0]))), np.array([1.0, 2.0]))
    with pytest.raises(ValueError, match="must not contain infs or NaNs"):
        fnp.asarray_chkfinite(dev(np.array([1.0, np.nan])))
    with pytest.raises(funcgrad.errors.ConcretizationError, match="asarray_chkfinite"):
        funcgrad.jit(fnp.asarray_chkfinite)(dev(np.ones(2)))
    with fnp.errstate(divide="ignore"):
        assert fnp.geterr()["divide"] == "ignore"
    assert fnp.array2string(dev(np.array([1.23456, 2.0])), precision=2, separator=", ") == (
        "[1.23, 2.  ]")
    assert fnp.binary_repr(5, width=8) == "00000101" and fnp.base_repr(255, 16) == "FF"
    assert fnp.format_float_positional(0.1) == "0.1"
