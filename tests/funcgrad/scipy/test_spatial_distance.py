"""scipy.spatial.distance (cdist, pdist, squareform, every metric, weights, the pair
functions, a callable metric) against SciPy (a test dependency); differentiable, jit-able."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev, host

import funcgrad
import funcgrad.numpy as fnp
import funcgrad.scipy.spatial as fsp
import funcgrad.scipy.spatial.distance as fd

sd = pytest.importorskip("scipy.spatial.distance")
sp = pytest.importorskip("scipy.spatial")

_RNG = np.random.default_rng(31)
_XA, _XB = _RNG.standard_normal((5, 4)), _RNG.standard_normal((3, 4))
_PA, _PB = _RNG.random((5, 4)), _RNG.random((3, 4))
_BA, _BB = _RNG.random((5, 6)) > 0.5, _RNG.random((4, 6)) > 0.5
_BOOLEAN = ("dice", "jaccard", "rogerstanimoto", "russellrao", "sokalsneath", "yule",
            "hamming")
_POSITIVE = ("jensenshannon", "braycurtis", "canberra")
_METRICS = ("braycurtis", "canberra", "chebyshev", "cityblock", "correlation", "cosine", "dice",
            "euclidean", "hamming", "jaccard", "jensenshannon", "mahalanobis", "minkowski",
            "rogerstanimoto", "russellrao", "seuclidean", "sokalsneath", "sqeuclidean", "yule")


def _data(metric):
    return (_BA, _BB) if metric in _BOOLEAN else (_PA, _PB) if metric in _POSITIVE else \
        (_XA, _XB)


@pytest.mark.parametrize("metric", _METRICS)
def test_cdist_pdist_match_scipy(metric):
    a, b = _data(metric)
    assert_allclose(fd.cdist(dev(a), dev(b), metric), sd.cdist(a, b, metric), rtol=1e-12,
                    atol=1e-14)
    assert_allclose(fd.pdist(dev(a), metric), sd.pdist(a, metric), rtol=1e-12, atol=1e-14)
    u, v = a[0], a[1]
    extra = {"seuclidean": (np.full(u.size, 0.5),), "mahalanobis": (2 * np.eye(u.size),)}
    assert_allclose(getattr(fd, metric)(dev(u), dev(v), *dev(extra.get(metric, ()))),
                    getattr(sd, metric)(u, v, *extra.get(metric, ())), rtol=1e-12, atol=1e-14)


def test_weights_parameters_and_callables():
    w = _RNG.random(4) + 0.1
    for metric in ("braycurtis", "canberra", "chebyshev", "cityblock", "correlation",
                   "cosine", "euclidean", "minkowski", "sqeuclidean", "hamming"):
        assert_allclose(fd.cdist(dev(_XA), dev(_XB), metric, w=dev(w)),
                        sd.cdist(_XA, _XB, metric, w=w), rtol=1e-12)
    bw = _RNG.random(6) + 0.1
    for metric in ("dice", "jaccard", "rogerstanimoto", "russellrao", "sokalsneath", "yule"):
        assert_allclose(fd.cdist(_BA, _BB, metric, w=bw), sd.cdist(_BA, _BB, metric, w=bw),
                        rtol=1e-12)
    for p in (1, 1.5, 3, np.inf):
        assert_allclose(fd.cdist(dev(_XA), dev(_XB), "minkowski", p=p),
                        sd.cdist(_XA, _XB, "minkowski", p=p), rtol=1e-12)
    assert_allclose(fd.cdist(dev(_XA), dev(_XB), "seuclidean", V=dev(np.full(4, 2.0))),
                    sd.cdist(_XA, _XB, "seuclidean", V=np.full(4, 2.0)), rtol=1e-12)
    assert_allclose(fd.cdist(dev(_XA), dev(_XB), lambda u, v: fnp.sum(fnp.abs(u - v) ** 3)),
                    sd.cdist(_XA, _XB, lambda u, v: np.sum(np.abs(u - v) ** 3)), rtol=1e-12)
    assert_allclose(fd.jensenshannon(dev(_PA[0]), dev(_PA[1]), 2.0),
                    sd.jensenshannon(_PA[0], _PA[1], 2.0), rtol=1e-12)
    assert_allclose(fsp.distance_matrix(dev(_XA), dev(_XB), p=3),
                    sp.distance_matrix(_XA, _XB, p=3), rtol=1e-12)
    assert_allclose(fsp.minkowski_distance(dev(_XA), dev(_XA[::-1])),
                    sp.minkowski_distance(_XA, _XA[::-1]), rtol=1e-12)


def test_squareform_round_trip_and_errors():
    d = sd.pdist(_XA)
    assert_allclose(fd.squareform(dev(d)), sd.squareform(d), rtol=0)
    assert_allclose(fd.squareform(dev(sd.squareform(d))), d, rtol=0)
    with pytest.raises(ValueError, match="binomial"):
        fd.squareform(np.ones(4))
    with pytest.raises(ValueError, match="symmetric"):
        fd.squareform(np.array([[0.0, 1.0], [2.0, 0.0]]))
    with pytest.raises(ValueError, match="unknown distance metric"):
        fd.cdist(_XA, _XB, "nope")
    with pytest.raises(ValueError, match="same number of columns"):
        fd.cdist(_XA, _XB[:, :2])
    with pytest.raises(TypeError, match="unexpected keyword"):
        fd.cdist(_XA, _XB, "cosine", p=3)


def test_distances_differentiate_and_jit():
    x = np.vstack([_XA, _XA[:1]])  # a repeated point: distance 0
    g = funcgrad.grad(lambda v: fnp.sum(fd.pdist(v)))(dev(x))
    assert np.all(np.isfinite(host(g)))
    eps = 1e-6
    e = np.zeros_like(_XA)
    e[1, 2] = eps
    fdiff = (sd.cdist(_XA + e, _XB).sum() - sd.cdist(_XA - e, _XB).sum()) / (2 * eps)
    g = funcgrad.grad(lambda v: fnp.sum(fd.cdist(v, dev(_XB))))(dev(_XA))
    assert_allclose(host(g)[1, 2], fdiff, rtol=1e-6)
    jitted = funcgrad.jit(lambda a, b: fd.cdist(a, b, "cosine"))(dev(_XA), dev(_XB))
    assert_allclose(jitted, sd.cdist(_XA, _XB, "cosine"), rtol=1e-12)
