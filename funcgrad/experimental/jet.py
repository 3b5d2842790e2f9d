"""``jax.experimental.jet``: Taylor-mode derivatives under JAX's module name.

``jet`` is :func:`funcgrad.jet` (docs/taylor.md): the same signature as JAX's,
``jet(fun, primals, series, factorial_scaled=True)``, with JAX's convention that the k-th
series term is the k-th derivative of the input curve (not divided by k!), unless
``factorial_scaled=False``.

Example:
    >>> from funcgrad.experimental.jet import jet
    >>> y0, (y1, y2) = jet(lambda x: x ** 3, (2.0,), ((1.0, 0.0),))
    >>> float(y0), float(y1), float(y2)
    (8.0, 12.0, 12.0)
"""

from __future__ import annotations

from funcgrad.api_taylor import jet

__all__ = ["jet"]
