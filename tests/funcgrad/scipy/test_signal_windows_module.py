"""funcgrad.scipy.signal.windows (hann(M, sym=True) and every other SciPy window function)
against scipy.signal.windows (a test dependency)."""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad.scipy.signal as fsg
import funcgrad.scipy.signal.windows as fw

sw = pytest.importorskip("scipy.signal.windows")

_WINDOWS = [("hann", ()), ("hamming", ()), ("blackman", ()), ("nuttall", ()),
            ("blackmanharris", ()), ("flattop", ()), ("boxcar", ()), ("triang", ()),
            ("bartlett", ()), ("barthann", ()), ("cosine", ()), ("parzen", ()), ("bohman", ()),
            ("lanczos", ()), ("tukey", (0.3,)), ("kaiser", (4.0,)), ("gaussian", (2.0,)),
            ("general_gaussian", (1.5, 2.0)), ("general_cosine", ([0.5, 0.3, 0.2],)),
            ("general_hamming", (0.6,)), ("chebwin", (60,)), ("exponential", (None, 2.0)),
            ("taylor", ()), ("dpss", (1.5,))]


@pytest.mark.parametrize("name, args", _WINDOWS, ids=[w for w, _ in _WINDOWS])
def test_window_functions_match_scipy(name, args):
    for m in (0, 1, 7, 8):
        for sym in (True, False):
            got = getattr(fw, name)(m, *args, sym=sym)
            want = getattr(sw, name)(m, *args, sym=sym)
            assert np.shape(got) == np.shape(want)
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    assert fsg.windows is fw
