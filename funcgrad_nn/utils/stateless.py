"""``functional_call`` (``torch.func.functional_call`` / ``torch.nn.utils.stateless``): call a
module with some of its parameters and buffers replaced, by their ``state_dict`` names, for
that call only; the values may be traced, so ``grad`` of a function of a parameter dict works.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from funcgrad_nn.module import Module

__all__ = ["functional_call"]


def _slots(module: Module) -> dict[str, tuple[dict[str, Any], str]]:
    """Every parameter and buffer name (tied ones under each of their names) with the
    registry dict and key that hold it."""
    out: dict[str, tuple[dict[str, Any], str]] = {}

    def walk(mod: Module, prefix: str) -> None:
        for reg in ("_parameters", "_buffers"):
            for name, value in mod.__dict__[reg].items():
                if value is not None:
                    out[prefix + name] = (mod.__dict__[reg], name)
        for name, child in mod._modules.items():
            if child is not None:
                walk(child, f"{prefix}{name}.")

    walk(module, "")
    return out


def _merge(dicts: Any) -> dict[str, Any]:
    if isinstance(dicts, dict):
        return dict(dicts)
    if not isinstance(dicts, Sequence) or not all(isinstance(d, dict) for d in dicts):
        raise ValueError("Expected all elements of parameter_and_buffer_dicts to be "
                         "dictionaries")
    keys = [k for d in dicts for k in d]
    dupes = sorted({k for k in keys if keys.count(k) > 1})
    if dupes:
        raise ValueError(f"{dupes} appeared in multiple dictionaries; behavior of functional "
                         "call is ambiguous")
    return {k: v for d in dicts for k, v in d.items()}


def functional_call(module: Module, parameter_and_buffer_dicts: Any, args: Any = None,
                    kwargs: dict[str, Any] | None = None, *, tie_weights: bool = True,
                    strict: bool = False) -> Any:
    """``module(*args, **kwargs)`` with the parameters and buffers named in
    ``parameter_and_buffer_dicts`` (a dict or a sequence of dicts) replaced for this call, as
    PyTorch's. ``tie_weights``: a value given for one name of a tied array serves all its
    names. ``strict``: every parameter and buffer must be given, and nothing else. A buffer
    given here gets its module value back after the call (PyTorch would write a batch norm's
    update into the given tensor in place); buffers not given are updated as in a plain call.

    >>> import numpy as np, funcgrad, funcgrad_nn as nn
    >>> lin = nn.Linear(2, 1)
    >>> x = np.ones((1, 2), np.float32)
    >>> functional_call(lin, {"weight": np.zeros((1, 2), np.float32),
    ...                       "bias": np.ones(1, np.float32)}, (x,))
    array([[1.]], dtype=float32)
    >>> g = funcgrad.grad(lambda p: functional_call(lin, p, x).sum())(
    ...     {"weight": np.zeros((1, 2), np.float32), "bias": np.zeros(1, np.float32)})
    >>> g["weight"]
    array([[1., 1.]], dtype=float32)
    """
    values = _merge(parameter_and_buffer_dicts)
    slots = _slots(module)
    if tie_weights:
        groups: dict[int, list[str]] = {}
        for name, (reg, key) in slots.items():
            groups.setdefault(id(reg[key]), []).append(name)
        for names in groups.values():
            given = [n for n in names if n in values]
            if not given:
                continue
            if any(values[n] is not values[given[0]] for n in given[1:]):
                raise ValueError(f"functional_call got multiple values for keys {given}, which "
                                 "are tied. Consider using tie_weights=False")
            for n in names:
                values.setdefault(n, values[given[0]])
    if strict:
        # sorted, as PyTorch's report
        unexpected = sorted(k for k in values if k not in slots)
        missing = sorted(k for k in slots if k not in values)
        if unexpected or missing:
            lines = []
            if unexpected:
                lines.append("Unexpected key(s): " + ", ".join(f"'{k}'" for k in unexpected)
                             + ".")
            if missing:
                lines.append("Missing key(s): " + ", ".join(f"'{k}'" for k in missing) + ".")
            raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n\t"
                               + "\n\t".join(lines))
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    saved = []
    try:
        for name, value in values.items():
            slot = slots.get(name)
            if slot is not None:
                reg, key = slot
                saved.append((reg, key, reg[key]))
                reg[key] = value
        return module(*args, **(kwargs or {}))
    finally:
        for reg, key, old in reversed(saved):
            reg[key] = old
