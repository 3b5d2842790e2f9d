"""``scipy.spatial.KDTree`` / ``cKDTree`` queries: ``query`` (k nearest neighbours),
``query_ball_point``, ``query_pairs``, ``count_neighbors``.

funcgrad answers them exactly by brute force on the host (blocked Minkowski distances, no
tree): the same neighbours and distances as SciPy's tree (equally distant neighbours in index
order), in ``O(n m)`` time per batch -- fine for the sizes one differentiates through, slow
for millions of points. Results live on the data's device.

Example:
    >>> import numpy as np
    >>> from funcgrad.scipy.spatial import KDTree
    >>> tree = KDTree(np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0]]))
    >>> tree.query(np.array([0.9, 0.1]))
    (array(0.14142136), array(1))
"""

from __future__ import annotations

from typing import Any

import numpy

from funcgrad.api_devices import device_get
from funcgrad.avals import get_aval
from funcgrad.backend import device_put, get_default_device, is_array
from funcgrad.core import Tracer

__all__ = ["KDTree", "cKDTree"]

_BLOCK = 1 << 22  # distance entries computed at once


def _host(name: str, v: Any) -> numpy.ndarray:
    if isinstance(v, Tracer):
        raise TypeError(f"KDTree.{name}: needs concrete points (a host search); call it "
                        "outside jit/vmap/grad")
    return numpy.asarray(device_get(v), dtype=float)


def _minkowski(a: numpy.ndarray, b: numpy.ndarray, p: float) -> numpy.ndarray:
    d = numpy.abs(a[:, None, :] - b[None, :, :])
    if p == numpy.inf:
        return d.max(axis=-1)
    if p == 1:
        return d.sum(axis=-1)
    if p == 2:
        return numpy.sqrt((d * d).sum(axis=-1))
    return (d ** p).sum(axis=-1) ** (1.0 / p)


class KDTree:
    """Nearest-neighbour queries on the ``n x m`` points ``data``, as
    ``scipy.spatial.KDTree`` (``leafsize`` and the tree options are accepted; the searches
    are exact brute force, ``boxsize`` periodic boxes are not provided).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.spatial import KDTree
        >>> KDTree(np.arange(10.0)[:, None]).query_ball_point(np.array([4.2]), r=1.0)
        [4, 5]
    """

    def __init__(self, data: Any, leafsize: int = 10, compact_nodes: bool = True,
                 copy_data: bool = False, balanced_tree: bool = True, boxsize: Any = None
                 ) -> None:
        if boxsize is not None:
            raise ValueError("KDTree: periodic boxsize is not provided by funcgrad")
        self._device = (get_aval(data).device or get_default_device()) if is_array(data) and \
            not isinstance(data, numpy.ndarray) else get_default_device()
        self.data = _host("__init__", data)
        if self.data.ndim != 2:
            raise ValueError("data must be 2 dimensions")
        if numpy.any(~numpy.isfinite(self.data)):
            raise ValueError("data must be finite, check for nan or inf values")
        self.n, self.m = self.data.shape
        self.leafsize = leafsize
        self.maxes, self.mins = self.data.max(axis=0), self.data.min(axis=0)

    def _out(self, v: Any) -> Any:
        return device_put(numpy.asarray(v), self._device)

    def _points(self, name: str, x: Any) -> tuple[numpy.ndarray, tuple[int, ...]]:
        x = _host(name, x)
        if x.shape[-1] != self.m:
            raise ValueError(f"x must consist of vectors of length {self.m} but has shape "
                             f"{x.shape}")
        return x.reshape(-1, self.m), x.shape[:-1]

    def _blocks(self, pts: numpy.ndarray, p: float) -> Any:
        step = max(1, _BLOCK // max(self.n, 1))
        for lo in range(0, pts.shape[0], step):
            yield lo, _minkowski(pts[lo:lo + step], self.data, p)

    def query(self, x: Any, k: Any = 1, eps: float = 0, p: float = 2,
              distance_upper_bound: float = numpy.inf, workers: int = 1) -> tuple[Any, Any]:
        """The ``k`` nearest neighbours of each point of ``x``: ``(d, i)``; ``k`` an int
        (1: the last axis squeezed) or a list of (1-based) ranks; missing neighbours (fewer
        than ``k`` within ``distance_upper_bound``) get ``inf`` and index ``n``."""
        pts, lead = self._points("query", x)
        ks = [k] if isinstance(k, (int, numpy.integer)) else list(k)
        if isinstance(k, (int, numpy.integer)):
            if k < 1:
                raise ValueError(f"k must be positive, got {k}")
            ranks = list(range(1, int(k) + 1))
        else:
            ranks = [int(r) for r in ks]
            if min(ranks) < 1:
                raise ValueError("k must contain positive ranks")
        kmax = max(ranks)
        dist = numpy.full((pts.shape[0], len(ranks)), numpy.inf)
        idx = numpy.full((pts.shape[0], len(ranks)), self.n, dtype=numpy.intp)
        want = numpy.array(ranks) - 1
        for lo, d in self._blocks(pts, p):
            order = numpy.argsort(d, axis=1, kind="stable")[:, :kmax]
            dd = numpy.take_along_axis(d, order, axis=1)
            far = dd > distance_upper_bound
            order = numpy.where(far, self.n, order)
            dd = numpy.where(far, numpy.inf, dd)
            have = want < dd.shape[1]
            rows = slice(lo, lo + d.shape[0])
            dist[rows][:, have] = dd[:, want[have]]
            idx[rows][:, have] = order[:, want[have]]
        if isinstance(k, (int, numpy.integer)) and k == 1:
            return self._out(dist[:, 0].reshape(lead)), self._out(idx[:, 0].reshape(lead))
        shape = lead + (len(ranks),)
        return self._out(dist.reshape(shape)), self._out(idx.reshape(shape))

    def query_ball_point(self, x: Any, r: Any, p: float = 2.0, eps: float = 0,
                         workers: int = 1, return_sorted: Any = None,
                         return_length: bool = False) -> Any:
        """The indices of the data points within ``r`` of each point of ``x`` (sorted): a
        list for one point, an object array of lists otherwise (``return_length``: counts)."""
        pts, lead = self._points("query_ball_point", x)
        radius = numpy.broadcast_to(numpy.asarray(r, dtype=float), lead).reshape(-1)
        found: list[Any] = []
        for lo, d in self._blocks(pts, p):
            for j in range(d.shape[0]):
                hits = numpy.flatnonzero(d[j] <= radius[lo + j])
                found.append(len(hits) if return_length else hits.tolist())
        if not lead:
            return found[0]
        if return_length:
            return numpy.array(found, dtype=numpy.intp).reshape(lead)
        out = numpy.empty(len(found), dtype=object)
        out[:] = found
        return out.reshape(lead)

    def query_pairs(self, r: float, p: float = 2.0, eps: float = 0,
                    output_type: str = "set") -> Any:
        """All pairs ``(i, j)``, ``i < j``, of data points within ``r`` of each other: a set
        (``output_type="ndarray"``: an ``(k, 2)`` array sorted)."""
        pairs = []
        for lo, d in self._blocks(self.data, p):
            ii, jj = numpy.nonzero(d <= r)
            ii = ii + lo
            keep = ii < jj
            pairs.append(numpy.stack([ii[keep], jj[keep]], axis=1))
        arr = numpy.concatenate(pairs) if pairs else numpy.zeros((0, 2), numpy.intp)
        if output_type == "ndarray":
            return self._out(arr[numpy.lexsort((arr[:, 1], arr[:, 0]))].astype(numpy.intp))
        if output_type != "set":
            raise ValueError("Invalid output type")
        return {(int(i), int(j)) for i, j in arr}

    def count_neighbors(self, other: KDTree, r: Any, p: float = 2.0, weights: Any = None,
                        cumulative: bool = True) -> Any:
        """The number of pairs (one point from each tree) within ``r`` (an array of radii
        gives an array of counts)."""
        if weights is not None or not cumulative:
            raise ValueError("count_neighbors: weights and cumulative=False are not provided")
        radii = numpy.asarray(r, dtype=float)
        counts = numpy.zeros(radii.shape, dtype=numpy.intp)
        for _, d in self._blocks(other.data, p):
            counts += numpy.count_nonzero(d.reshape(-1)[None, :] <= radii.reshape(-1, 1),
                                          axis=1).reshape(radii.shape)
        return counts if counts.ndim else int(counts)


cKDTree = KDTree  # noqa: N816 (SciPy's name)
