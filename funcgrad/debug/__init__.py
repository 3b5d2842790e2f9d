"""Debugging tools: NaN hunting (:func:`debug_nans`) and host callbacks that run when the
computation runs (:func:`callback`, :func:`print`), eagerly and under ``jit``.

Example:
    >>> import funcgrad, numpy as np
    >>> _ = funcgrad.jit(lambda x: funcgrad.debug.print("got {}", x) or x)(np.array(1.0))
    got 1.0
"""

from funcgrad.debug.callback import breakpoint, call_hook, callback, print
from funcgrad.debug.nans import NaNError, debug_nans, nans_enabled, set_debug_nans

__all__ = ["callback", "print", "breakpoint", "call_hook", "debug_nans", "set_debug_nans", "nans_enabled",
           "NaNError"]
