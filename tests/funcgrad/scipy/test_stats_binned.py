"""binned_statistic, binned_statistic_2d and binned_statistic_dd (every named statistic and a
callable, bins as counts or edges, range, several value arrays, expanded bin numbers) against
scipy.stats (a test dependency)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import dev, host

import funcgrad
import funcgrad.scipy.stats as fst

ss = pytest.importorskip("scipy.stats")

_RNG = np.random.default_rng(111)
_X, _Y, _V = _RNG.random(50), _RNG.random(50), _RNG.standard_normal(50)


def _same(got, want):
    np.testing.assert_allclose(host(got.statistic), want.statistic, rtol=1e-12, equal_nan=True)
    np.testing.assert_array_equal(host(got.binnumber), want.binnumber)


@pytest.mark.parametrize("statistic", ["mean", "std", "median", "count", "sum", "min", "max",
                                       np.ptp])
def test_binned_statistic_matches_scipy(statistic):
    for bins in (5, [0.0, 0.2, 0.5, 1.0], 30):
        got = fst.binned_statistic(dev(_X), dev(_V), statistic, bins)
        want = ss.binned_statistic(_X, _V, statistic, bins)
        _same(got, want)
        np.testing.assert_allclose(host(got.bin_edges), want.bin_edges)
    _same(fst.binned_statistic(_X, _V, statistic, 4, (0.1, 0.9)),
          ss.binned_statistic(_X, _V, statistic, 4, (0.1, 0.9)))
    _same(fst.binned_statistic_2d(_X, _Y, _V, statistic, bins=[3, 4]),
          ss.binned_statistic_2d(_X, _Y, _V, statistic, bins=[3, 4]))


def test_binned_statistic_variants():
    _same(fst.binned_statistic(_X, [_V, 2 * _V], "mean", 4),
          ss.binned_statistic(_X, [_V, 2 * _V], "mean", 4))
    _same(fst.binned_statistic_2d(_X, _Y, _V, "mean", 3, expand_binnumbers=True),
          ss.binned_statistic_2d(_X, _Y, _V, "mean", 3, expand_binnumbers=True))
    _same(fst.binned_statistic_dd(np.c_[_X, _Y, _V], _V, "sum", 3),
          ss.binned_statistic_dd(np.c_[_X, _Y, _V], _V, "sum", 3))
    got = fst.binned_statistic(np.ones(5), np.arange(5.0), "mean", 3)
    np.testing.assert_allclose(host(got.bin_edges),
                               ss.binned_statistic(np.ones(5), np.arange(5.0), "mean", 3).bin_edges)
    with pytest.raises(ValueError, match="invalid statistic"):
        fst.binned_statistic(_X, _V, "mode")
    with pytest.raises(TypeError, match="outside jit"):
        funcgrad.jit(lambda v: fst.binned_statistic(_X, v).statistic)(_V)
