"""funcgrad.scipy.spatial: ``transform`` (``Rotation``, ``Slerp``), as
``jax.scipy.spatial``; and SciPy's ``distance`` (``cdist``, ``pdist``, ``squareform``, the
pairwise metrics), ``distance_matrix``, ``minkowski_distance`` and ``KDTree``/``cKDTree``
queries (exact, brute force, on the host).

Example:
    >>> from funcgrad.scipy.spatial import transform
    >>> transform.Rotation.identity().as_matrix()
    array([[1., 0., 0.],
           [0., 1., 0.],
           [0., 0., 1.]])
"""

from funcgrad.scipy.spatial import distance, transform
from funcgrad.scipy.spatial._kdtree import KDTree, cKDTree
from funcgrad.scipy.spatial.distance import distance_matrix, minkowski_distance

__all__ = ["transform", "distance", "distance_matrix", "minkowski_distance", "KDTree",
           "cKDTree"]
