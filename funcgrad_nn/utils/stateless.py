"""``functional_call`` (``torch.func.functional_call`` / ``torch.nn.utils.stateless``): call a
module with some of its parameters and buffers replaced, by their ``state_dict`` names, for
that call only; the values may be traced, so ``grad`` of a function of a parameter dict works.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextvars import ContextVar
from typing import Any

from funcgrad.backend import is_writeable
from funcgrad.core import is_tracer
from funcgrad_nn.module import Module, functional_call_buffers, is_array

__all__ = ["functional_call"]

#: set by ``funcgrad_nn.func.vmap`` while its function runs: ``(slots, writes, outer)``,
#: ``slots`` mapping ``id`` of each mapped, writable argument array's tracer to its position
#: among the arguments' leaves. A buffer given to ``functional_call`` as one of them and
#: updated during the call (BatchNorm's running statistics of a stacked ensemble) lands in
#: ``writes[position]``; vmap writes it into the caller's stacked array afterwards, as
#: PyTorch's in-place update of a batched buffer does.
vmapped_buffers: ContextVar[tuple | None] = ContextVar("funcgrad_nn_vmapped_buffers",
                                                       default=None)


def _vmap_slot(given: Any) -> tuple[dict, int] | None:
    """``(writes, position)`` when ``given`` is a mapped argument of an enclosing
    ``funcgrad_nn.func.vmap`` whose array can take an update, else None."""
    level = vmapped_buffers.get()
    while level is not None:
        slots, writes, level_outer = level
        if id(given) in slots:
            return writes, slots[id(given)]
        level = level_outer
    return None


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


def _resolve(module: Module, key: str) -> tuple[Module, str]:
    """The module that owns dotted ``key`` and the key's last part, with PyTorch's errors
    for a path through something that is no module or through a missing name."""
    *path, leaf = key.split(".")
    mod, walked = module, []
    for part in path:
        walked.append(part)
        child = mod._modules.get(part) if part in mod._modules else getattr(mod, part, _ABSENT)
        if child is _ABSENT:
            raise AttributeError(f"{type(mod).__name__} has no attribute `{part}`")
        if not isinstance(child, Module):
            raise TypeError(f"submodule `{'.'.join(walked)}`: {child!r} is not an instance "
                            "of funcgrad_nn.Module")
        mod = child
    if leaf in mod._modules and mod._modules[leaf] is not None:
        raise TypeError(f"attribute `{key}`: {mod._modules[leaf]!r} is not an instance of an "
                        "array")
    return mod, leaf


_ABSENT = object()


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
    names. ``strict``: every parameter and buffer must be given, and nothing else. As
    PyTorch: a buffer update made during the call (BatchNorm's running statistics in
    training mode) is written into the given array in place (an error when that array is
    traced or read-only, where PyTorch's transforms refuse the mutation too; a stacked array
    mapped by ``funcgrad_nn.func.vmap`` takes it when the vmap returns), buffers not
    given are updated as in a plain call; a parametrized attribute (``"weight"`` of a
    ``weight_norm`` layer) is assigned through its parametrizations' ``right_inverse`` for
    the call; a key naming no parameter or buffer sets a plain attribute for the call, and a path through a missing name or a non-module raises
    ``AttributeError``/``TypeError``; values must be arrays.

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
    for name, value in values.items():
        if not is_array(value):
            raise TypeError(f"functional_call: {name!r}: {value!r} is not an instance of an "
                            "array")
    # (registry, key, original, given) for parameters and buffers; (module, name, original)
    # for other names, which PyTorch sets as plain attributes for the call
    swapped: list[tuple[dict[str, Any], str, Any, Any]] = []
    buffers: list[tuple[dict[str, Any], str, Any]] = []
    attrs: list[tuple[Module, str, Any]] = []
    try:
        for name, value in values.items():
            mod, leaf = _resolve(module, name)
            d = mod.__dict__
            reg = (d["_parameters"] if leaf in d["_parameters"] else
                   d["_buffers"] if leaf in d["_buffers"] else None)
            prop = getattr(type(mod), leaf, None)
            if reg is not None:
                swapped.append((reg, leaf, reg[leaf], value))
                reg[leaf] = value
                if reg is d["_buffers"]:
                    buffers.append((reg, leaf, value))
            elif isinstance(prop, property):
                # a parametrized attribute: the value goes through the parametrizations'
                # right_inverse into the originals, as PyTorch's assignment; every array of
                # the owning module is put back afterwards
                if prop.fset is None:
                    raise AttributeError(
                        f"functional_call: {name!r} is computed from other arrays of "
                        f"{type(mod).__name__} (pruning or the hook-based weight/spectral "
                        "norm) and cannot be given; give the arrays it is computed from, "
                        f"among {sorted(_slots(mod))}")
                for sub_reg, key in _slots(mod).values():
                    swapped.append((sub_reg, key, sub_reg[key], None))
                setattr(mod, leaf, value)
            else:
                attrs.append((mod, leaf, d.get(leaf, _ABSENT)))
                d[leaf] = value
        # a random layer's key (a non-persistent buffer) given traced may be advanced during
        # the call (see _write_back); a persistent buffer's traced update stays an error
        non_persistent = _non_persistent(module)
        token = functional_call_buffers.set(functional_call_buffers.get() | {
            (id(reg), key) for reg, key, given in buffers
            if key in non_persistent.get(id(reg), ()) or _vmap_slot(given) is not None})
        try:
            out = module(*args, **(kwargs or {}))
        finally:
            functional_call_buffers.reset(token)
        _write_back(module, buffers)
        return out
    finally:
        for reg, key, old, _ in reversed(swapped):
            reg[key] = old
        for mod, leaf, old in reversed(attrs):
            if old is _ABSENT:
                mod.__dict__.pop(leaf, None)
            else:
                mod.__dict__[leaf] = old


def _non_persistent(module: Module) -> dict[int, set[str]]:
    """``id`` of each submodule's buffer dict -> the names of its non-persistent buffers."""
    return {id(m.__dict__["_buffers"]): m.__dict__["_non_persistent"] for m in module.modules()}


def _write_back(module: Module, buffers: list[tuple[dict[str, Any], str, Any]]) -> None:
    """PyTorch's modules update buffers in place (BatchNorm's ``running_mean.mul_().add_()``),
    so an update made during the call lands in the array the caller gave: copy each new
    buffer value into the given array, or refuse when that array cannot take it (PyTorch's
    function transforms refuse such a mutation too). A non-persistent buffer's traced update
    is dropped instead: that is a random layer's advancing key (Dropout's ``rng_key``), which
    stands for PyTorch's global generator, not for module state, so a vmapped ensemble with
    stacked keys runs as PyTorch's does."""
    non_persistent = _non_persistent(module)
    for reg, key, given in buffers:
        new = reg[key]
        if new is given:
            continue
        slot = _vmap_slot(given)
        if slot is not None:  # a stacked buffer under funcgrad_nn.func.vmap: written after it
            slot[0][slot[1]] = new
            continue
        traced = is_tracer(given) or is_tracer(new)
        if traced and key in non_persistent.get(id(reg), ()):
            continue
        if traced or not is_writeable(given):
            what = "a traced value" if is_tracer(given) or is_tracer(new) else "read-only"
            raise RuntimeError(
                f"functional_call: the module updated buffer {key!r} during the call (as "
                "BatchNorm's running statistics in training mode), which PyTorch writes "
                f"into the given array in place; here it is {what} (under jit/vmap/grad), "
                "so the update would be lost. Call module.eval() first, leave the buffer "
                "out of the dict (the module's own buffer is then updated), or pass the "
                "module to funcgrad_nn.jit / funcgrad_nn.grad, which write buffer updates back")
        given[...] = new
