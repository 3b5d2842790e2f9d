"""funcgrad.scipy.signal's spectral analysis (get_window, stft, istft, csd, welch) against
scipy.signal: every option, float32/float64/integer/complex input, other axes; derivatives
(finite differences), jit and vmap; the errors."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev, expected_fp_warnings

import funcgrad
import funcgrad.numpy as fnp
import funcgrad.scipy.signal as fss
from funcgrad.test_util import check_grads

ss = pytest.importorskip("scipy.signal")
pytestmark = [expected_fp_warnings,
              pytest.mark.filterwarnings("ignore:nperseg = .* is greater than input length"),
              pytest.mark.filterwarnings("ignore:Input data is complex")]

_RNG = np.random.default_rng(0)
X = _RNG.normal(size=(3, 100))
Y = _RNG.normal(size=(3, 100))


def _close(got, want, rtol=1e-10, atol=1e-12, check_dtype=True):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert_allclose(g, np.asarray(w), rtol=rtol, atol=atol, check_dtype=check_dtype)


@pytest.mark.parametrize("window", [
    "hann", "hamming", "blackman", "blackmanharris", "nuttall", "flattop", "boxcar", "triang",
    "bartlett", "cosine", "tukey", ("tukey", 0.3), ("kaiser", 8.0), ("gaussian", 2.0),
    ("general_hamming", 0.6), "han", "rect", "blk", "halfcosine"])
def test_get_window_as_scipy(window):
    for n in (1, 2, 5, 8, 9):
        for fftbins in (True, False):
            np.testing.assert_allclose(fss.get_window(window, n, fftbins),
                                       ss.get_window(window, n, fftbins), rtol=1e-13,
                                       atol=1e-15)


PSD_OPTIONS = [
    {}, {"nperseg": 32}, {"nperseg": 32, "noverlap": 8, "nfft": 64},
    {"nperseg": 31, "window": "hamming"}, {"nperseg": 16, "window": np.hanning(16)},
    {"fs": 10.0, "nperseg": 20, "scaling": "spectrum"}, {"nperseg": 16, "detrend": "linear"},
    {"nperseg": 16, "detrend": False}, {"nperseg": 16, "return_onesided": False},
    {"nperseg": 16, "average": "median"}, {"nperseg": 16, "axis": 0},
]


@pytest.mark.parametrize("kw", PSD_OPTIONS, ids=str)
def test_welch_and_csd_as_scipy(kw):
    x, y = (X.T, Y.T) if kw.get("axis") == 0 else (X, Y)
    _close(fss.welch(dev(x), **kw), ss.welch(x, **kw))
    _close(fss.csd(dev(x), dev(y), **kw), ss.csd(x, y, **kw))


def test_welch_inputs_as_scipy():
    _close(fss.welch(dev(X[0]), nperseg=16), ss.welch(X[0], nperseg=16))
    _close(fss.welch(dev(np.arange(50)), nperseg=16), ss.welch(np.arange(50), nperseg=16))
    z = X[0] + 1j * Y[0]
    _close(fss.welch(dev(z), nperseg=16), ss.welch(z, nperseg=16))
    _close(fss.csd(dev(X[0]), dev(Y[0, :80]), nperseg=16), ss.csd(X[0], Y[0, :80], nperseg=16))
    _close(fss.welch(dev(X[0, :10])), ss.welch(X[0, :10]))  # nperseg shortened to the input
    _close(fss.welch(dev(X[0, :16]), nperseg=16), ss.welch(X[0, :16], nperseg=16))
    _close(fss.welch(dev(np.zeros(0))), ss.welch(np.zeros(0)))
    # float32 stays float32 (frequencies too; SciPy's are float64).
    f, p = fss.welch(dev(X.astype(np.float32)), nperseg=16)
    assert f.dtype == p.dtype == np.float32
    _close((f, p), ss.welch(X.astype(np.float32), nperseg=16), rtol=1e-4, atol=1e-6,
           check_dtype=False)


STFT_OPTIONS = [
    {}, {"nperseg": 32}, {"nperseg": 32, "noverlap": 8, "nfft": 64},
    {"nperseg": 31, "window": "hamming"}, {"nperseg": 16, "boundary": None, "padded": False},
    {"nperseg": 16, "boundary": "even"}, {"nperseg": 16, "boundary": "odd"},
    {"nperseg": 16, "boundary": "constant"}, {"nperseg": 16, "return_onesided": False},
    {"nperseg": 16, "detrend": "constant"}, {"nperseg": 16, "scaling": "psd", "fs": 3.0},
    {"nperseg": 16, "axis": 0},
]


@pytest.mark.parametrize("kw", STFT_OPTIONS, ids=str)
def test_stft_and_istft_as_scipy(kw):
    x = X.T if kw.get("axis") == 0 else X
    want = ss.stft(x, **kw)
    _close(fss.stft(dev(x), **kw), want)
    ikw = {k: v for k, v in kw.items() if k in ("nperseg", "noverlap", "nfft", "window", "fs",
                                                 "scaling")}
    if kw.get("return_onesided") is False:
        ikw["input_onesided"] = False
    if "boundary" in kw and kw["boundary"] is None:
        ikw["boundary"] = False
    if kw.get("axis") == 0:
        ikw["freq_axis"] = 0
    _close(fss.istft(dev(want[2]), **ikw), ss.istft(want[2], **ikw))


def test_derivatives_jit_and_vmap():
    x = X[0, :48]
    check_grads(lambda v: fss.welch(v, nperseg=16)[1], (dev(x),), order=2, modes=("rev",))
    check_grads(lambda v: fss.csd(v, 2.0 * v[::-1], nperseg=16)[1].real, (dev(x),), order=1)
    check_grads(lambda v: fnp.abs(fss.stft(v, nperseg=16)[2]), (dev(x),), order=1)
    z = ss.stft(x, nperseg=16)[2]
    z_imag = dev(z.imag)
    check_grads(lambda re: fss.istft(re + 1j * z_imag, nperseg=16)[1], (dev(z.real),), order=1)
    _close(funcgrad.jit(lambda v: fss.welch(v, nperseg=16))(dev(X)), ss.welch(X, nperseg=16))
    got = funcgrad.vmap(lambda v: fss.stft(v, nperseg=16)[2])(dev(X))
    assert_allclose(got, ss.stft(X, nperseg=16)[2], rtol=1e-10, atol=1e-12)
    z = ss.stft(X, nperseg=16)[2]
    _close(funcgrad.jit(lambda v: fss.istft(v, nperseg=16))(dev(z)), ss.istft(z, nperseg=16))


def test_errors():
    with pytest.raises(ValueError, match="unknown window"):
        fss.get_window("nope", 8)
    with pytest.raises(ValueError, match="needs a parameter"):
        fss.get_window("kaiser", 8)
    with pytest.raises(ValueError, match="noverlap"):
        fss.welch(dev(X[0]), nperseg=16, noverlap=16)
    with pytest.raises(ValueError, match="nfft"):
        fss.welch(dev(X[0]), nperseg=16, nfft=8)
    with pytest.raises(ValueError, match="boundary"):
        fss.stft(dev(X[0]), boundary="wrap")
    with pytest.raises(ValueError, match="average"):
        fss.csd(dev(X[0]), dev(Y[0]), average="mode")
    with pytest.raises(ValueError, match="differs from the window"):
        fss.welch(dev(X[0]), window=np.ones(8), nperseg=16)
    with pytest.raises(ValueError, match="at least 2-D"):
        fss.istft(dev(X[0]))
