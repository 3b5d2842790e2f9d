"""cluster.hierarchy: linkage (every method), fcluster (distance, maxclust), leaves_list and
cophenet against scipy.cluster.hierarchy (a test dependency)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import expected_fp_warnings, host

import funcgrad
import funcgrad.scipy.cluster.hierarchy as fh

sh = pytest.importorskip("scipy.cluster.hierarchy")
sd = pytest.importorskip("scipy.spatial.distance")

_RNG = np.random.default_rng(121)
_DATA = [_RNG.standard_normal((n, 3)) for n in (2, 5, 9, 14)]


@expected_fp_warnings  # SciPy's cophenetic correlation of a single pair (nan)
@pytest.mark.parametrize("method", ["single", "complete", "average", "weighted", "ward"])
def test_linkage_and_flat_clusters_match_scipy(method):
    for x in _DATA:
        z = host(fh.linkage(x, method))
        want = sh.linkage(x, method)
        np.testing.assert_allclose(z, want, rtol=1e-12)
        np.testing.assert_allclose(host(fh.linkage(sd.pdist(x), method)), want, rtol=1e-12)
        for t in (0.5, 1.0, 2.0):
            np.testing.assert_array_equal(host(fh.fcluster(want, t, "distance")),
                                          sh.fcluster(want, t, "distance"))
        for k in (1, 2, 3, 5, 20):
            np.testing.assert_array_equal(host(fh.fcluster(want, k, "maxclust")),
                                          sh.fcluster(want, k, "maxclust"))
        np.testing.assert_array_equal(host(fh.leaves_list(want)), sh.leaves_list(want))
        got_c, got_d = fh.cophenet(want, sd.pdist(x))
        want_c, want_d = sh.cophenet(want, sd.pdist(x))
        np.testing.assert_allclose(host(got_d), want_d, rtol=1e-12)
        np.testing.assert_allclose(got_c, want_c, rtol=1e-12, equal_nan=True)


def test_centroid_median_and_errors():
    x = np.array([[0.0, 0.0], [0.0, 1.0], [4.0, 0.0], [4.0, 1.5], [10.0, 0.0]])
    for method in ("centroid", "median"):
        np.testing.assert_allclose(host(fh.linkage(x, method)), sh.linkage(x, method),
                                   rtol=1e-12)
    with pytest.raises(ValueError, match="Invalid method"):
        fh.linkage(x, "nearest")
    with pytest.raises(ValueError, match="Euclidean"):
        fh.linkage(x, "ward", metric="cityblock")
    with pytest.raises(ValueError, match="criterion"):
        fh.fcluster(sh.linkage(x), 1.0)
    with pytest.raises(TypeError, match="outside jit"):
        funcgrad.jit(lambda v: fh.linkage(v))(x)
