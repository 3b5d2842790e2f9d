"""The primitives. Importing this package registers every primitive's rules."""

from funcgrad.ops import (  # noqa: F401  # noqa: F401  # noqa: F401
    activations,  # noqa: F401  (relu)
    collectives,  # noqa: F401  (psum, all_gather, ...)
    control_flow,  # noqa: F401  (cond, while, scan)
    elementwise,
    fft,
    gather,
    indexing,
    jit,  # noqa: F401  (the jit call primitive)
    linalg,
    linalg_decomp,
    pure_callback,  # noqa: F401  (host callbacks in programs)
    reductions,
    remat,  # noqa: F401  (checkpoint / rematerialization)
    scatter,
    segment,
    shape,
    sorting,  # noqa: F401
    special,
    taylor,  # noqa: F401  (Taylor rules for jet)
    windows,  # noqa: F401  (patches / fold: convolution windows)
)
from funcgrad.ops.segment import (  # noqa: E402  (jax.ops's public functions)
    segment_max,
    segment_min,
    segment_prod,
    segment_sum,
)

__all__ = ["segment_max", "segment_min", "segment_prod", "segment_sum"]
