"""The primitives. Importing this package registers every primitive's rules."""

from funcgrad.ops import elementwise, reductions, shape  # noqa: F401
