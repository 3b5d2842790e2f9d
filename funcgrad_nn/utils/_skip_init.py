"""``skip_init`` (as ``torch.nn.utils.skip_init``)."""

from __future__ import annotations

import inspect
from typing import Any

from funcgrad_nn.module import Module

__all__ = ["skip_init"]


def skip_init(module_cls: type, *args: Any, **kwargs: Any) -> Module:
    """``module_cls(*args, **kwargs)`` whose parameters are to be overwritten anyway (e.g.
    from a checkpoint): PyTorch leaves them uninitialised, so their values are unspecified;
    here they are the default initialisation. As PyTorch, the class must take ``device=``.

    >>> import funcgrad_nn as nn
    >>> skip_init(nn.Linear, 3, 2).weight.shape
    (2, 3)
    """
    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    return module_cls(*args, **kwargs)
