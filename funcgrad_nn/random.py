"""``torch.random``: the default generator's seeding and state, and :func:`fork_rng`.

The generator is the one :func:`funcgrad_nn.manual_seed` reseeds (initialisers, shuffling
loaders, samplers, the keys new random modules are built with).

>>> import funcgrad_nn as nn
>>> _ = nn.random.manual_seed(0)
>>> with nn.random.fork_rng():
...     a = nn.init.default_generator().random()
>>> nn.init.default_generator().random() == a
True
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from funcgrad_nn.init import get_rng_state, initial_seed, manual_seed, seed, set_rng_state

__all__ = ["fork_rng", "get_rng_state", "initial_seed", "manual_seed", "seed", "set_rng_state"]


@contextlib.contextmanager
def fork_rng(devices: Any = None, enabled: bool = True, _caller: str = "fork_rng",
             _devices_kw: str = "devices", device_type: str = "cuda") -> Iterator[None]:
    """Run the block on a copy of the default generator's state and restore the state after
    it (``torch.random.fork_rng``): what the block draws leaves the stream outside it as it
    was. ``devices``/``device_type`` are accepted (one generator serves every device);
    ``enabled=False`` makes it a no-op.

    >>> import funcgrad_nn as nn
    >>> _ = nn.manual_seed(0)
    >>> with nn.random.fork_rng():
    ...     _ = nn.manual_seed(123)
    >>> nn.initial_seed()
    0
    """
    del devices, _caller, _devices_kw, device_type
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
