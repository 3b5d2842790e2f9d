"""funcgrad.scipy: differentiable counterparts of SciPy functions (SciPy not required):
``integrate``, ``linalg``, ``optimize``, ``signal``, ``special`` and ``stats`` (see
docs/scipy.md).

Example:
    >>> import funcgrad.scipy.special as fsp
    >>> round(float(fsp.gammaln(4.0)), 12)   # log(3!)
    1.791759469228
"""

from funcgrad.scipy import integrate, linalg, optimize, signal, special, stats  # noqa: F401

__all__ = ["integrate", "linalg", "optimize", "signal", "special", "stats"]
