"""``jax.ad_checkpoint``'s names: :func:`checkpoint` (``remat``), :func:`checkpoint_name` and
:data:`checkpoint_policies` (docs/remat.md), for ``from funcgrad.ad_checkpoint import
checkpoint_name`` as JAX programs write it.

Example:
    >>> import funcgrad, funcgrad.numpy as fnp
    >>> from funcgrad.ad_checkpoint import checkpoint, checkpoint_name
    >>> f = checkpoint(lambda x: fnp.sin(checkpoint_name(x * 2, "y")))
    >>> round(float(funcgrad.grad(f)(0.0)), 6)
    2.0
"""

from __future__ import annotations

from funcgrad.ops.remat import checkpoint, checkpoint_name, checkpoint_policies, remat

__all__ = ["checkpoint", "checkpoint_name", "checkpoint_policies", "remat"]
