"""funcgrad.numpy.lib: the parts of ``numpy.lib`` that compute on arrays.

``stride_tricks.sliding_window_view`` (differentiable, and under ``jit``/``vmap``). The rest of
``numpy.lib`` is NumPy's tooling (``format``, ``npyio``, ``mixins``, ``NumpyVersion``): use
NumPy's own.

Example:
    >>> import numpy as np, funcgrad.numpy as fnp
    >>> fnp.lib.stride_tricks.sliding_window_view(np.arange(4), 3)
    array([[0, 1, 2],
           [1, 2, 3]])
"""

from __future__ import annotations

from funcgrad.numpy.lib import stride_tricks

__all__ = ["stride_tricks"]
