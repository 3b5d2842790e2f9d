"""Rank-0 helpers: log and save once, not once per process."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any

from funcgrad_nn.distributed._group import barrier, is_initialized, is_main_process

__all__ = ["rank_zero_only", "print0", "save_on_main"]


def rank_zero_only(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Decorate ``fn`` so that it runs on rank 0 only (elsewhere it returns None).

    Example:
        >>> @rank_zero_only
        ... def report(msg):
        ...     return msg
        >>> report("hi")
        'hi'
    """

    @functools.wraps(fn)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs) if is_main_process() else None

    return wrapped


@rank_zero_only
def print0(*args: Any, **kwargs: Any) -> None:
    """``print`` on rank 0 only.

    Example:
        >>> print0("loss", 0.5)
        loss 0.5
    """
    print(*args, **kwargs)


def save_on_main(obj: Any, path: str | os.PathLike) -> None:
    """Save ``obj`` with ``funcgrad_nn.save`` (atomic) on rank 0; every rank then waits until
    the file is complete, so a rank may load it right after.

    Example:
        >>> import tempfile, os, numpy as np
        >>> d = tempfile.mkdtemp(); save_on_main({"w": np.ones(2)}, os.path.join(d, "c.ckpt"))
        >>> os.path.exists(os.path.join(d, "c.ckpt"))
        True
    """
    from funcgrad_nn.serialization import save

    if is_main_process():
        save(obj, path)
    if is_initialized():
        barrier()
