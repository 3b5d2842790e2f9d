"""Debugging tools: NaN hunting (:func:`debug_nans`), host callbacks that run when the
computation runs (:func:`callback`, :func:`print`, :func:`breakpoint`), eagerly and under
``jit``, and NumPy's floating-point warnings shown at the user's line
(:mod:`funcgrad.debug.warning_location`, installed on import).

Example:
    >>> import funcgrad, numpy as np
    >>> _ = funcgrad.jit(lambda x: funcgrad.debug.print("got {}", x) or x)(np.array(1.0))
    got 1.0
"""

from funcgrad.debug import warning_location
from funcgrad.debug.callback import (
    DebugEffect,
    OrderedDebugEffect,
    breakpoint,
    call_hook,
    callback,
    log,
    print,
)
from funcgrad.debug.nans import (
    NaNError,
    debug_infs,
    debug_nans,
    infs_enabled,
    nans_enabled,
    set_debug_infs,
    set_debug_nans,
)
from funcgrad.debug.sharding import (
    inspect_array_sharding,
    visualize_array_sharding,
    visualize_sharding,
)

warning_location.install()

__all__ = ["callback", "print", "log", "breakpoint", "call_hook", "debug_nans", "debug_infs",
           "set_debug_nans", "set_debug_infs", "nans_enabled", "infs_enabled", "NaNError",
           "inspect_array_sharding", "visualize_array_sharding", "visualize_sharding",
           "DebugEffect", "OrderedDebugEffect"]
