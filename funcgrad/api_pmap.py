"""``pmap``: JAX's parallel map, run as ``jit(vmap(...))`` on the one device funcgrad uses.

JAX's ``pmap`` maps a function over the leading axis of its arguments with one device per
example, and its collectives (``lax.psum``, ``pmean``, ``all_gather``, ``axis_index``, ...)
communicate across that axis. funcgrad uses one device per platform, so ``pmap`` vectorizes
instead: the same results, with the collectives working across the mapped axis as under
``vmap(axis_name=...)``, and no limit of one example per device (JAX needs the mapped size to
fit the device count). For several processes, see ``funcgrad.distributed.spmd``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

from funcgrad.api_jit import jit
from funcgrad.api_vmap import vmap

__all__ = ["pmap"]


def pmap(fun: Callable[..., Any], axis_name: Any = None, *, in_axes: Any = 0,
         out_axes: Any = 0, static_broadcasted_argnums: int | Sequence[int] = (),
         devices: Any = None, backend: str | None = None, axis_size: int | None = None,
         donate_argnums: int | Sequence[int] = ()) -> Callable[..., Any]:
    """Map ``fun`` over the leading axis (``in_axes``/``out_axes`` as :func:`vmap`'s) with the
    collectives of ``axis_name``, compiled once per signature (``jax.pmap``). Arguments at
    ``static_broadcasted_argnums`` are static (hashable, given to every example unchanged);
    ``devices`` and ``backend`` are accepted (funcgrad computes on the arrays' device).

    Example:
        >>> import numpy as np, funcgrad
        >>> from funcgrad import lax
        >>> f = funcgrad.pmap(lambda x: x / lax.psum(x, "i"), axis_name="i")
        >>> f(np.array([1.0, 3.0]))
        array([0.25, 0.75])
    """
    static = ((static_broadcasted_argnums,) if isinstance(static_broadcasted_argnums, int)
              else tuple(static_broadcasted_argnums))
    try:
        params = [p.name for p in inspect.signature(fun).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []

    def mapped(*args: Any, **kwargs: Any) -> Any:
        if static and max(i if i >= 0 else -i - 1 for i in static) >= len(args):
            raise ValueError(
                f"pmapped function has static_broadcasted_argnums={static} but was called "
                f"with only {len(args)} positional argument{'s' if len(args) != 1 else ''}. "
                "All static broadcasted arguments must be passed positionally.")
        fixed = {i % len(args): args[i] for i in static}
        dynamic = [i for i in range(len(args)) if i not in fixed]
        axes = in_axes
        if isinstance(in_axes, (list, tuple)):
            if len(in_axes) != len(args):
                raise ValueError(f"pmap: in_axes has {len(in_axes)} entries for "
                                 f"{len(args)} positional arguments")
            axes = tuple(in_axes[i] for i in dynamic)

        def per_example(*dyn: Any, **kw: Any) -> Any:
            full = dict(fixed)
            full.update(zip(dynamic, dyn))
            return fun(*(full[i] for i in range(len(args))), **kw)

        # vmap's errors name the arguments by the mapped function's parameters: fun's own.
        per_example.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
            [inspect.Parameter(params[i] if i < len(params) else f"args_{i}",
                               inspect.Parameter.POSITIONAL_ONLY) for i in dynamic])
        try:
            return vmap(per_example, in_axes=axes, out_axes=out_axes, axis_name=axis_name,
                        axis_size=axis_size)(*(args[i] for i in dynamic), **kwargs)
        except (ValueError, TypeError) as e:
            if str(e).startswith("vmap"):
                e.add_note("(pmap maps its function with vmap: the error above is vmap's)")
            raise

    # Named and documented as fun, as jax.pmap's result (not functools.wraps: the signature
    # jit reads for static_argnums must stay mapped's own).
    for attr in ("__module__", "__name__", "__qualname__", "__doc__"):
        if hasattr(fun, attr):
            setattr(mapped, attr, getattr(fun, attr))
    out = jit(mapped, static_argnums=static, donate_argnums=donate_argnums)
    out.__wrapped__ = fun
    return out
