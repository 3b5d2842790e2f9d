"""``funcgrad.lax``: structured control flow under the names ``jax.lax`` uses.

``cond``, ``switch``, ``while_loop``, ``fori_loop``, ``scan`` and ``map`` (which shadows the
builtin only inside this namespace, like ``jax.lax.map``). See ``docs/control_flow.md``.

Example:
    >>> import numpy as np
    >>> from funcgrad import lax
    >>> carry, ys = lax.scan(lambda c, x: (c * x, c), 1.0, np.array([2.0, 3.0]))
    >>> float(carry), ys.tolist()
    (6.0, [1.0, 2.0])
"""

from funcgrad.ops.control_flow import cond, fori_loop, map, scan, switch, while_loop

__all__ = ["cond", "switch", "while_loop", "fori_loop", "scan", "map"]
