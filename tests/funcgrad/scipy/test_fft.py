"""funcgrad.scipy.fft: values recorded from jax.scipy.fft 0.10.2 (float64) and errors. Values
vs SciPy for every type and norm: the op table tests/funcgrad/op_tables/scipy_fft.py."""

from __future__ import annotations

import os

import numpy as np
import pytest
import scipy.fft as sf
from helpers import assert_allclose, dev

import funcgrad
import funcgrad.numpy as fnp
import funcgrad.scipy.fft as ff

X = np.array([[0.5, -1.0, 0.25, 2.0], [0.75, 0.1, -0.4, 1.0]])


def test_matches_jax() -> None:
    jax_dct = [[0.875, -1.3181697862486554, 1.625, 0.4107047779380875],
               [0.725, -0.028021345572997812, 1.025, -0.39429025373736876]]
    jax_idctn = [[0.06690290687745472, -0.15495827885350907, 0.2804024526776683,
                  0.0027354407708637257],
                 [-0.03336990343801348, -0.11469412023202832, 0.007555772583709874,
                  0.07042572961385422]]
    assert_allclose(ff.dct(dev(X), norm="ortho"), np.array(jax_dct), rtol=1e-12, atol=1e-12)
    assert_allclose(ff.idctn(dev(X)), np.array(jax_idctn), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("call,match", [
    (lambda: ff.dct(X, type=5), "type"),
    (lambda: ff.dct(X, norm="none"), "norm"),
    (lambda: ff.dct(X, n=0), "data points"),
    (lambda: ff.dct(X, axis=2), "axis"),
    (lambda: ff.dct(np.ones(1), type=1), "2 points"),
    (lambda: ff.dctn(X, s=(2, 2), axes=0), "same length"),
    (lambda: ff.dctn(X, axes=(0, 0)), "unique"),
])
def test_bad_arguments(call, match) -> None:
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize("call,error,match", [
    (lambda: ff.dst(X, type=0), ValueError, "type"),
    (lambda: ff.dst(X, n=0), ValueError, "data points"),
    (lambda: ff.fft(X, plan=object()), NotImplementedError, "plan"),
    (lambda: ff.fft(X, workers=0), ValueError, "workers"),
    (lambda: ff.rfft(X + 1j), TypeError, "real"),
    (lambda: ff.ihfftn(X + 1j), TypeError, "real"),
    (lambda: ff.hfftn(X, norm="none"), ValueError, "norm"),
    (lambda: ff.next_fast_len(-1), ValueError, "positive"),
    (lambda: ff.prev_fast_len(2.5), TypeError, "integer"),
])
def test_bad_arguments_of_the_fourier_and_sine_transforms(call, error, match) -> None:
    with pytest.raises(error, match=match):
        call()


def test_fast_lengths_as_scipy() -> None:
    # scipy.fft.next_fast_len / prev_fast_len (pocketfft: 2,3,5,7,11-smooth; real: 2,3,5)
    assert [ff.next_fast_len(t) for t in (0, 1, 7, 13, 97, 1021)] == [0, 1, 7, 14, 98, 1024]
    assert [ff.next_fast_len(t, real=True) for t in (7, 13, 97, 1021)] == [8, 15, 100, 1024]
    assert [ff.prev_fast_len(t) for t in (0, 1, 13, 97, 1021)] == [0, 1, 12, 96, 1008]
    assert [ff.prev_fast_len(t, True) for t in (7, 11, 97, 1021)] == [6, 10, 96, 1000]


def test_dst_and_hfftn_recorded_values() -> None:
    # scipy.fft 1.17: dst types 1-4 of [1, 2, 4] and hfftn of a 2x2 half spectrum
    x = dev(np.array([1.0, 2.0, 4.0]))
    want = {1: [11.071067811865476, -6.0, 3.0710678118654755],
            2: [9.0, -5.196152422706632, 6.0],
            3: [8.464101615137753, -2.0, 1.5358983848622458],
            4: [11.073471825263777, -1.4142135623730951, 1.1739768886521125]}
    for t, w in want.items():
        assert_allclose(ff.dst(x, type=t), np.array(w), rtol=1e-12, atol=1e-12)
    h = np.array([[1.0, 2.0 + 1j], [0.5, -1.0j]])
    assert_allclose(ff.hfftn(dev(h)), np.array([[3.5, -0.5], [2.5, -1.5]]), rtol=1e-12,
                    atol=1e-12)


def test_workers_context_as_scipy() -> None:
    # scipy.fft.set_workers / get_workers: the setting is read back, nested contexts restore
    assert ff.get_workers() == 1
    with ff.set_workers(3):
        assert ff.get_workers() == 3
        with ff.set_workers(-1):   # one per CPU
            assert ff.get_workers() == (os.cpu_count() or 1)
        assert ff.get_workers() == 3
    assert ff.get_workers() == 1
    with pytest.raises(ValueError, match="zero"):
        with ff.set_workers(0):
            pass
    assert_allclose(ff.fft(dev(X), workers=-1), np.fft.fft(X), rtol=1e-12, atol=1e-12)


def test_backend_api_takes_scipys_one_backend() -> None:
    # scipy.fft.set_backend/skip_backend/set_global_backend/register_backend were missing;
    # 'scipy' is funcgrad's own transforms, the one backend
    x = dev(np.array([1.0, 2.0]))
    with ff.set_backend("scipy", only=True):
        assert_allclose(ff.fft(x), np.array([3.0 + 0j, -1.0 + 0j]))
    assert ff.set_global_backend("scipy", try_last=True) is None
    assert ff.register_backend("scipy") is None
    with ff.skip_backend("scipy"):   # SciPy: BackendNotImplementedError, nothing left
        with pytest.raises(NotImplementedError, match="No selected backends"):
            ff.fft(x)
        with pytest.raises(ff.BackendNotImplementedError):
            ff.dct(x)
        for hankel in (ff.fht, ff.ifht):   # uarray-dispatched in SciPy too
            with pytest.raises(ff.BackendNotImplementedError):
                hankel(x, 0.1, 0.5)
        assert ff.fhtoffset(0.1, 0.5) == pytest.approx(sf.fhtoffset(0.1, 0.5))   # plain
        with ff.set_backend("scipy"):
            assert_allclose(ff.rfft(x), np.array([3.0 + 0j, -1.0 + 0j]))
    assert_allclose(ff.irfft(ff.rfft(x)), np.array([1.0, 2.0]))
    with pytest.raises(ValueError, match="Unknown backend foo"):
        ff.set_global_backend("foo")

    class Other:
        __ua_domain__ = "numpy.scipy.fft"

    for backend in (Other(), object()):
        with pytest.raises(ValueError, match="one backend"):
            with ff.set_backend(backend):
                pass


@pytest.mark.parametrize("name", ["fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn",
                                  "fft2", "rfft2", "ihfft2"])
def test_nd_transforms_refuse_repeated_axes(name) -> None:
    # SciPy refuses a repeated axis (NumPy's fftn would transform it twice)
    with pytest.raises(ValueError, match="all axes must be unique"):
        getattr(sf, name)(np.ones((2, 4)), axes=(1, -1))
    with pytest.raises(ValueError, match="all axes must be unique"):
        getattr(ff, name)(dev(np.ones((2, 4))), axes=(1, -1))


def test_fast_lengths_of_large_targets_as_scipy() -> None:
    # next/prev_fast_len stepped one length at a time: ~1e13 steps near 2**60 (a hang)
    for target in (2**60 + 1, 10**12 + 1, 3**30 + 7, 1676976733973595602):
        for real in (False, True):
            assert ff.next_fast_len(target, real) == sf.next_fast_len(target, real)
            assert ff.prev_fast_len(target, real) == sf.prev_fast_len(target, real)
    for target in range(1, 200):
        assert ff.next_fast_len(target) == sf.next_fast_len(target)
        assert ff.prev_fast_len(target, True) == sf.prev_fast_len(target, True)
    with pytest.raises(ValueError, match="too large to perform an FFT"):
        ff.next_fast_len(1676976733973595603)
    with pytest.raises(OverflowError):
        ff.prev_fast_len(2**63)


@pytest.mark.parametrize("name", ["dct", "dst", "idct", "idst"])
def test_long_trig_transforms_go_through_one_fft(name) -> None:
    # past 64 points each transform is one FFT (a dense matrix of 10^5 points is 80 GB; 8192
    # took 20 s); every type, norm and orthogonalize against SciPy, complex and float32 too
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 97))
    for t in (1, 2, 3, 4):
        for norm, orth in ((None, None), ("ortho", None), ("ortho", False), ("forward", True)):
            want = getattr(sf, name)(x, type=t, norm=norm, orthogonalize=orth)
            got = getattr(ff, name)(dev(x), type=t, norm=norm, orthogonalize=orth)
            assert_allclose(got, want, rtol=1e-11, atol=1e-11)
        z = x[0] + 1j * x[1]
        assert_allclose(getattr(ff, name)(dev(z), type=t), getattr(sf, name)(z, type=t),
                        rtol=1e-11, atol=1e-11)
        got32 = getattr(ff, name)(dev(x.astype(np.float32)), type=t, n=80, axis=-1)
        assert got32.dtype == np.float32
        assert_allclose(got32, getattr(sf, name)(x.astype(np.float32), type=t, n=80),
                        rtol=1e-4, atol=1e-4)
    big = rng.normal(size=100_000)
    assert_allclose(getattr(ff, name)(dev(big)), getattr(sf, name)(big), rtol=1e-10,
                    atol=1e-8)


def test_long_trig_transforms_derivatives() -> None:
    # linear: the gradient of <w, dct(x)> is dct's transpose applied to w, under jit and vmap
    rng = np.random.default_rng(1)
    x, w = rng.normal(size=70), rng.normal(size=70)
    for t in (1, 2, 3, 4):
        mat = np.stack([sf.dst(e, type=t, norm="ortho") for e in np.eye(70)], axis=1)
        g = funcgrad.jit(funcgrad.grad(
            lambda v, t=t: fnp.sum(dev(w) * ff.dst(v, type=t, norm="ortho"))))
        assert_allclose(g(dev(x)), mat.T @ w, rtol=1e-10, atol=1e-10)
        got = funcgrad.vmap(lambda v, t=t: ff.idct(v, type=t))(dev(np.stack([x, w])))
        assert_allclose(got, sf.idct(np.stack([x, w]), type=t), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("name", ["dct", "idst"])
def test_trig_transform_axis_errors_are_scipys_index_error(name) -> None:
    # SciPy raises IndexError for an axis out of range (or a 0-d input); funcgrad's AxisError
    # is that and NumPy's ValueError
    for x, kw in ((np.float64(2.0), {}), (np.ones(3), {"axis": 2})):
        with pytest.raises(IndexError):
            getattr(sf, name)(x, **kw)
        with pytest.raises(IndexError, match="out of bounds"):
            getattr(ff, name)(dev(x), **kw)
