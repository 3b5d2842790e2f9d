"""funcgrad.scipy.spatial: ``transform`` (``Rotation``, ``Slerp``), as
``jax.scipy.spatial``.

Example:
    >>> from funcgrad.scipy.spatial import transform
    >>> transform.Rotation.identity().as_matrix()
    array([[1., 0., 0.],
           [0., 1., 0.],
           [0., 0., 1.]])
"""

from funcgrad.scipy.spatial import transform  # noqa: F401

__all__ = ["transform"]
