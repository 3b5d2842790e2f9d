"""``jax.example_libraries``: :mod:`~funcgrad.example_libraries.optimizers` (the
``(init_fun, update_fun, get_params)`` optimizers with their schedules) and
:mod:`~funcgrad.example_libraries.stax` (the ``(init_fun, apply_fun)`` layer library), with
JAX's names, arguments and numbers. See docs/experimental.md.
"""

from funcgrad.example_libraries import optimizers, stax

__all__ = ["optimizers", "stax"]
