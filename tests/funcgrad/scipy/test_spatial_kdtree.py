"""KDTree/cKDTree queries (query with k, ranks, p, distance_upper_bound; query_ball_point;
query_pairs; count_neighbors) against scipy.spatial (a test dependency)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import dev, host

import funcgrad
import funcgrad.scipy.spatial as fsp

sp = pytest.importorskip("scipy.spatial")

_RNG = np.random.default_rng(101)
_DATA = _RNG.random((120, 3))
_Q = _RNG.random((9, 3))


@pytest.mark.parametrize("kw", [{}, {"k": 3}, {"k": [1, 4]}, {"k": 5, "p": 1},
                                {"k": 2, "p": np.inf}, {"k": 3, "p": 3},
                                {"k": 4, "distance_upper_bound": 0.1}, {"k": 200}])
def test_query_matches_scipy(kw):
    tree, want_tree = fsp.KDTree(dev(_DATA)), sp.KDTree(_DATA)
    for x in (_Q, _Q[0], _Q.reshape(3, 3, 3)):
        d, i = tree.query(dev(x), **kw)
        want_d, want_i = want_tree.query(x, **kw)
        np.testing.assert_allclose(host(d), want_d, rtol=1e-12)
        np.testing.assert_array_equal(host(i), want_i)


def test_ball_pairs_and_counts_match_scipy():
    tree, want_tree = fsp.cKDTree(_DATA), sp.cKDTree(_DATA)
    other = _RNG.random((40, 3))
    for r in (0.1, 0.25):
        got, want = tree.query_ball_point(_Q, r), want_tree.query_ball_point(_Q, r)
        assert all(a == sorted(b) for a, b in zip(got, want, strict=True))
        assert tree.query_ball_point(_Q[0], r) == sorted(want_tree.query_ball_point(_Q[0], r))
        np.testing.assert_array_equal(tree.query_ball_point(_Q, r, return_length=True),
                                      want_tree.query_ball_point(_Q, r, return_length=True))
        assert tree.query_pairs(r) == want_tree.query_pairs(r)
        assert tree.count_neighbors(fsp.KDTree(other), r) == \
            want_tree.count_neighbors(sp.cKDTree(other), r)
    np.testing.assert_array_equal(tree.count_neighbors(fsp.KDTree(other), [0.1, 0.3]),
                                  want_tree.count_neighbors(sp.cKDTree(other), [0.1, 0.3]))
    with pytest.raises(ValueError, match="length 3"):
        tree.query(np.zeros(2))
    with pytest.raises(TypeError, match="outside jit"):
        funcgrad.jit(lambda q: tree.query(q)[0])(_Q)
