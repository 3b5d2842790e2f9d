"""``scipy.cluster.hierarchy``: agglomerative ``linkage`` (``single``, ``complete``,
``average``, ``weighted``, ``centroid``, ``median``, ``ward``), flat clusters ``fcluster``
(``distance``, ``maxclust``), ``leaves_list`` and ``cophenet``.

Host computations, as SciPy's: the merges come from Lance-Williams updates of the distance
matrix, sorted by distance and relabelled exactly as SciPy does, so ``Z`` is SciPy's where no
two candidate merges tie; ``fcluster`` numbers clusters in SciPy's tree order.

Example:
    >>> import numpy as np
    >>> from funcgrad.scipy.cluster.hierarchy import fcluster, linkage
    >>> z = linkage(np.array([[0.0], [0.1], [5.0], [5.3]]), "single")
    >>> z
    array([[0. , 1. , 0.1, 2. ],
           [2. , 3. , 0.3, 2. ],
           [4. , 5. , 4.9, 4. ]])
    >>> fcluster(z, 2, criterion="maxclust")
    array([1, 1, 2, 2], dtype=int32)
"""

from __future__ import annotations

import math
from typing import Any

import numpy

from funcgrad.api_devices import device_get
from funcgrad.backend import device_put, get_default_device
from funcgrad.core import Tracer
from funcgrad.scipy._device import keep_host_inputs_on_host as _keep_host_inputs_on_host
from funcgrad.scipy.spatial.distance import pdist

__all__ = ["linkage", "fcluster", "leaves_list", "cophenet"]

_METHODS = ("single", "complete", "average", "weighted", "centroid", "median", "ward")


def _host(name: str, v: Any) -> numpy.ndarray:
    if isinstance(v, Tracer):
        raise TypeError(f"{name}: needs concrete data (a host computation); call it outside "
                        "jit/vmap/grad")
    return numpy.asarray(device_get(v), dtype=float)


def _update(method: str, dak: numpy.ndarray, dbk: numpy.ndarray, dab: float, na: int,
            nb: int, nk: numpy.ndarray) -> numpy.ndarray:
    """Lance-Williams: the distance from the merged cluster ``a + b`` to each ``k``."""
    if method == "single":
        return numpy.minimum(dak, dbk)
    if method == "complete":
        return numpy.maximum(dak, dbk)
    if method == "average":
        return (na * dak + nb * dbk) / (na + nb)
    if method == "weighted":
        return 0.5 * (dak + dbk)
    if method == "ward":
        t = na + nb + nk
        return numpy.sqrt(numpy.maximum(((na + nk) * dak ** 2 + (nb + nk) * dbk ** 2
                                         - nk * dab ** 2) / t, 0.0))
    if method == "centroid":
        s = na + nb
        return numpy.sqrt(numpy.maximum((na * dak ** 2 + nb * dbk ** 2) / s
                                        - na * nb * dab ** 2 / s ** 2, 0.0))
    return numpy.sqrt(numpy.maximum(0.5 * dak ** 2 + 0.5 * dbk ** 2 - 0.25 * dab ** 2, 0.0))


def _relabel(z: numpy.ndarray, n: int) -> numpy.ndarray:
    """SciPy's ``label``: rows (point representatives) to cluster ids ``n + i`` in order."""
    parent = numpy.arange(2 * n - 1)
    size = numpy.ones(2 * n - 1, dtype=numpy.int64)

    def find(x: int) -> int:
        root = x
        while parent[root] != root:
            root = parent[root]
        while parent[x] != root:
            parent[x], x = root, parent[x]
        return root

    for i in range(n - 1):
        x, y = find(int(z[i, 0])), find(int(z[i, 1]))
        z[i, 0], z[i, 1] = (x, y) if x < y else (y, x)
        new = n + i
        parent[x] = parent[y] = new
        size[new] = size[x] + size[y]
        z[i, 3] = size[new]
    return z


def linkage(y: Any, method: str = "single", metric: Any = "euclidean",
            optimal_ordering: bool = False) -> Any:
    """Hierarchical agglomerative clustering of a condensed distance matrix (or of the rows
    of an observation matrix, with ``metric``), as ``scipy.cluster.hierarchy.linkage``: the
    ``(n - 1) x 4`` linkage matrix (the two merged clusters, their distance, the new size).
    ``optimal_ordering`` is not provided.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.cluster.hierarchy import linkage
        >>> linkage(np.array([1.0, 4.0, 2.0]), "complete")
        array([[0., 1., 1., 2.],
               [2., 3., 4., 3.]])
    """
    if method not in _METHODS:
        raise ValueError(f"Invalid method: {method}")
    if optimal_ordering:
        raise ValueError("linkage: optimal_ordering is not provided by funcgrad")
    data = _host("linkage", y)
    if data.ndim == 1:
        d = data
        n = int(math.ceil(math.sqrt(2 * d.size)))
        if n * (n - 1) // 2 != d.size:
            raise ValueError("The number of observations cannot be determined on an "
                             "incorrectly sized distance matrix.")
    elif data.ndim == 2:
        if method in ("centroid", "median", "ward") and metric != "euclidean":
            raise ValueError(f"Method '{method}' requires the distance metric to be Euclidean")
        d = numpy.asarray(device_get(pdist(data, metric)), dtype=float)
        n = data.shape[0]
    else:
        raise ValueError("`y` must be 1 or 2 dimensional.")
    if not numpy.all(numpy.isfinite(d)):
        raise ValueError("The condensed distance matrix must contain only finite values.")
    if n < 2:
        raise ValueError("The number of observations must be at least 2.")
    full = numpy.full((n, n), numpy.inf)
    iu = numpy.triu_indices(n, 1)
    full[iu] = d
    full[(iu[1], iu[0])] = d
    size = numpy.ones(n, dtype=numpy.int64)
    active = numpy.ones(n, bool)
    z = numpy.empty((n - 1, 4))
    for step in range(n - 1):
        masked = numpy.where(active[:, None] & active[None, :], full, numpy.inf)
        numpy.fill_diagonal(masked, numpy.inf)
        flat = int(numpy.argmin(masked))
        a, b = divmod(flat, n)
        a, b = min(a, b), max(a, b)
        dab = full[a, b]
        others = active.copy()
        others[[a, b]] = False
        ks = numpy.flatnonzero(others)
        new = _update(method, full[a, ks], full[b, ks], dab, size[a], size[b], size[ks])
        z[step] = (a, b, dab, size[a] + size[b])
        # the merged cluster lives on in b's row (SciPy keeps the larger representative)
        full[b, ks] = full[ks, b] = new
        size[b] += size[a]
        active[a] = False
    z = z[numpy.argsort(z[:, 2], kind="mergesort")]
    return device_put(_relabel(z, n), get_default_device())


def _children(z: numpy.ndarray, n: int, node: int) -> tuple[int, int]:
    return int(z[node - n, 0]), int(z[node - n, 1])


def leaves_list(Z: Any) -> Any:  # noqa: N803
    """The leaf ids in the order of the dendrogram (left to right), as
    ``scipy.cluster.hierarchy.leaves_list``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.cluster.hierarchy import leaves_list, linkage
        >>> leaves_list(linkage(np.array([[0.0], [5.0], [0.1]])))
        array([1, 0, 2], dtype=int32)
    """
    z = _host("leaves_list", Z)
    n = z.shape[0] + 1
    out, stack = [], [2 * n - 2]
    while stack:
        node = stack.pop()
        if node < n:
            out.append(node)
        else:
            left, right = _children(z, n, node)
            stack.extend([right, left])
    return device_put(numpy.array(out, dtype=numpy.int32), get_default_device())


def _max_dists(z: numpy.ndarray) -> numpy.ndarray:
    """The largest merge distance within each non-leaf node's subtree."""
    n = z.shape[0] + 1
    md = numpy.empty(n - 1)
    for i in range(n - 1):
        left, right = int(z[i, 0]), int(z[i, 1])
        md[i] = max(z[i, 2], md[left - n] if left >= n else -numpy.inf,
                    md[right - n] if right >= n else -numpy.inf)
    return md


def _flat(z: numpy.ndarray, crit: numpy.ndarray, t: float) -> numpy.ndarray:
    """SciPy's ``cluster_monocrit``: a depth-first walk from the root into the non-leaf
    children (left first); the first node on a path whose criterion is at most ``t`` leads a
    new cluster, and a node's leaf children are labelled when the walk leaves it (a new
    singleton cluster each outside any leader)."""
    n = z.shape[0] + 1
    out = numpy.zeros(n, dtype=numpy.int32)
    visited = numpy.zeros(2 * n - 1, bool)
    stack = [2 * n - 2]
    n_cluster, leader = 0, -1
    while stack:
        root = stack[-1] - n
        left, right = int(z[root, 0]), int(z[root, 1])
        if leader == -1 and crit[root] <= t:
            leader = root
            n_cluster += 1
        if left >= n and not visited[left]:
            visited[left] = True
            stack.append(left)
            continue
        if right >= n and not visited[right]:
            visited[right] = True
            stack.append(right)
            continue
        for leaf in (left, right):
            if leaf < n:
                if leader == -1:
                    n_cluster += 1
                out[leaf] = n_cluster
        if leader == root:
            leader = -1
        stack.pop()
    return out


def fcluster(Z: Any, t: float, criterion: str = "inconsistent", depth: int = 2, R: Any = None,  # noqa: N803
             monocrit: Any = None) -> Any:
    """Flat clusters from the linkage ``Z``, as ``scipy.cluster.hierarchy.fcluster``:
    ``criterion="distance"`` (cut where the subtree's largest merge distance is at most
    ``t``) or ``"maxclust"`` (the lowest such cut with at most ``t`` clusters); labels from
    1 in SciPy's tree order. ``"inconsistent"`` and the ``monocrit`` criteria are not
    provided.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.cluster.hierarchy import fcluster, linkage
        >>> z = linkage(np.array([[0.0], [0.1], [5.0]]))
        >>> fcluster(z, 1.0, criterion="distance")
        array([1, 1, 2], dtype=int32)
    """
    z = _host("fcluster", Z)
    n = z.shape[0] + 1
    md = _max_dists(z)
    if criterion == "distance":
        out = _flat(z, md, float(t))
    elif criterion == "maxclust":
        k = int(t)
        if k >= n:  # every point its own cluster, numbered as the points (SciPy's)
            out = numpy.arange(1, n + 1, dtype=numpy.int32)
        else:  # the smallest subtree height leaving at most k clusters (a binary search)
            heights = numpy.sort(md)
            lo, hi = -1, n - 2
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if _flat(z, md, heights[mid]).max() > k:
                    lo = mid
                else:
                    hi = mid
            out = _flat(z, md, heights[hi])
    else:
        raise ValueError(f"fcluster: criterion {criterion!r} is not provided by funcgrad "
                         "(use 'distance' or 'maxclust')")
    return device_put(out, get_default_device())


def cophenet(Z: Any, Y: Any = None) -> Any:  # noqa: N803
    """The cophenetic distances (the merge height joining each pair, condensed), as
    ``scipy.cluster.hierarchy.cophenet``; with the original condensed distances ``Y``, also
    their correlation: ``(c, d)``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.cluster.hierarchy import cophenet, linkage
        >>> cophenet(linkage(np.array([[0.0], [1.0], [3.0]])))
        array([1., 2., 2.])
    """
    z = _host("cophenet", Z)
    n = z.shape[0] + 1
    members: dict[int, list[int]] = {i: [i] for i in range(n)}
    coph = numpy.zeros((n, n))
    for i in range(n - 1):
        a, b = members.pop(int(z[i, 0])), members.pop(int(z[i, 1]))
        for p in a:
            coph[p, b] = z[i, 2]
            coph[b, p] = z[i, 2]
        members[n + i] = a + b
    d = coph[numpy.triu_indices(n, 1)]
    dev = get_default_device()
    if Y is None:
        return device_put(d, dev)
    y = _host("cophenet", Y)
    yc, dc = y - y.mean(), d - d.mean()
    with numpy.errstate(invalid="ignore", divide="ignore"):  # one pair: nan, as SciPy's
        c = float((yc * dc).sum() / numpy.sqrt((yc ** 2).sum() * (dc ** 2).sum()))
    return c, device_put(d, dev)

# NumPy inputs compute on the host whatever the default device (funcgrad.scipy._device)
_keep_host_inputs_on_host(globals(), __all__)
