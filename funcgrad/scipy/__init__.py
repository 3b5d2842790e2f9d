"""funcgrad.scipy: differentiable counterparts of SciPy functions (SciPy not required):
``funcgrad.scipy.special`` and ``funcgrad.scipy.stats``.

Example:
    >>> import funcgrad.scipy.special as fsp
    >>> round(float(fsp.gammaln(4.0)), 12)   # log(3!)
    1.791759469228
"""

from funcgrad.scipy import special, stats  # noqa: F401

__all__ = ["special", "stats"]
