"""funcgrad_nn: PyTorch-flavoured neural-network modules over funcgrad.

The Module-style layer (Module, layers, losses, optimizers, data loading) is built on the
functional core; this package currently exposes nothing (see the project's issue tracker).
"""

__all__: list[str] = []
