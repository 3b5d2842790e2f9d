"""funcgrad.scipy: differentiable counterparts of SciPy functions (SciPy not required):
``cluster``, ``fft``, ``integrate``, ``interpolate``, ``linalg``, ``ndimage``, ``optimize``, ``signal``,
``spatial``, ``sparse``, ``special`` and ``stats``
(see docs/scipy.md).

Example:
    >>> import funcgrad.scipy.special as fsp
    >>> round(float(fsp.gammaln(4.0)), 12)   # log(3!)
    1.791759469228
"""

from funcgrad.scipy import (  # noqa: F401
    cluster,
    fft,
    integrate,
    interpolate,
    linalg,
    ndimage,
    optimize,
    signal,
    sparse,
    spatial,
    special,
    stats,
)

__all__ = ["cluster", "fft", "integrate", "interpolate", "linalg", "ndimage", "optimize", "signal",
           "sparse", "spatial", "special", "stats"]
