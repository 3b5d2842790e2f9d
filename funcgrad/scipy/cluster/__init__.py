"""funcgrad.scipy.cluster: ``vq`` (vector quantization), as ``scipy.cluster`` and
``jax.scipy.cluster``; SciPy's ``hierarchy`` (``linkage``, ``fcluster``, ``leaves_list``,
``cophenet``).

Example:
    >>> import numpy as np
    >>> from funcgrad.scipy.cluster import vq
    >>> vq.vq(np.array([[1.0, 1.0], [4.0, 4.0]]), np.array([[0.0, 0.0], [5.0, 5.0]]))[0]
    array([0, 1], dtype=int32)
"""

from funcgrad.scipy.cluster import hierarchy, vq  # noqa: F401

__all__ = ["vq", "hierarchy"]
