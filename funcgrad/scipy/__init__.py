"""funcgrad.scipy: differentiable counterparts of SciPy functions (SciPy not required):
``linalg``, ``signal``, ``special`` and ``stats`` (see docs/scipy.md).

Example:
    >>> import funcgrad.scipy.special as fsp
    >>> round(float(fsp.gammaln(4.0)), 12)   # log(3!)
    1.791759469228
"""

from funcgrad.scipy import linalg, signal, special, stats  # noqa: F401

__all__ = ["linalg", "signal", "special", "stats"]
