"""The primitives. Importing this package registers every primitive's rules."""

from funcgrad.ops import elementwise, reductions, shape  # noqa: F401
from funcgrad.ops import sorting  # noqa: F401
from funcgrad.ops import indexing, linalg  # noqa: F401
from funcgrad.ops import fft, linalg_decomp, special  # noqa: F401
from funcgrad.ops import jit  # noqa: F401  (the jit call primitive)
from funcgrad.ops import control_flow  # noqa: F401  (cond, while, scan)
from funcgrad.ops import remat  # noqa: F401  (checkpoint / rematerialization)
