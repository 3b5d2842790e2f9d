"""funcgrad.scipy.sparse: the iterative solvers of ``scipy.sparse.linalg`` that
``jax.scipy.sparse`` has (``linalg.cg``, ``linalg.bicgstab``), for matrices, functions and
pytrees.

Example:
    >>> import numpy as np
    >>> from funcgrad.scipy.sparse import linalg
    >>> linalg.cg(np.array([[4.0, 1.0], [1.0, 3.0]]), np.array([1.0, 2.0]))[0].round(6)
    array([0.090909, 0.636364])
"""

from funcgrad.scipy.sparse import linalg  # noqa: F401

__all__ = ["linalg"]
