"""``parameters_to_vector`` / ``vector_to_parameters`` (as ``torch.nn.utils``)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.backend import device_of
from funcgrad.core import is_tracer
from funcgrad_nn.module import ParameterIterator, is_array

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters: Iterable[Any]) -> Any:
    """One flat vector of all the arrays (in order), e.g. ``model.parameters()``.

    >>> import numpy as np
    >>> parameters_to_vector([np.ones((2, 2)), np.zeros(1)])
    array([1., 1., 1., 1., 0.])
    """
    arrays = [fnp.reshape(p, (-1,)) for p in parameters]
    if not arrays:
        raise ValueError("parameters_to_vector: no parameters given")
    return fnp.concatenate(arrays)


def vector_to_parameters(vec: Any, parameters: Iterable[Any]) -> None:
    """Copy consecutive slices of the 1-D ``vec`` into the arrays of ``parameters``.

    As PyTorch (whose ``param.data = slice``), the parameters take ``vec``'s dtype and
    device: given ``model.parameters()`` (which knows where each array lives), a parameter
    whose dtype or device differs from ``vec``'s is replaced in its module by the slice;
    one that matches is written in place (so optimizers keep following it). A plain list of
    arrays can only be written in place: a dtype or device that differs from ``vec``'s is
    refused rather than silently kept.

    >>> import numpy as np, funcgrad_nn as nn
    >>> ps = [np.zeros((2, 2)), np.zeros(1)]
    >>> vector_to_parameters(np.arange(5.0), ps); ps[1]
    array([4.])
    >>> m = nn.Linear(2, 1)                                  # float32 parameters
    >>> vector_to_parameters(np.arange(3.0), m.parameters())  # a float64 vector
    >>> m.weight.dtype, m.bias.tolist()
    (dtype('float64'), [2.0])
    """
    sources: list[tuple[Any, str]] | None = None
    if isinstance(parameters, ParameterIterator):
        params = list(parameters)
        sources = parameters.sources
    else:
        params = list(parameters)
    if not is_array(vec):
        raise TypeError(f"vector_to_parameters: expected an array, but got: "
                        f"{type(vec).__name__}")
    if fnp.ndim(vec) != 1:
        raise TypeError(f"vector_to_parameters: expected a 1-D vector, got shape "
                        f"{tuple(fnp.shape(vec))}")
    total = sum(math.prod(p.shape) for p in params)
    if fnp.shape(vec)[0] != total:
        raise ValueError(f"vector_to_parameters: the vector has {fnp.shape(vec)[0]} entries "
                         f"but the parameters hold {total}")
    if is_tracer(vec) or any(is_tracer(p) for p in params):
        raise TypeError("vector_to_parameters writes into the parameter arrays in place, "
                        "which traced values (under jit/vmap/grad) cannot be; rebuild the "
                        "arrays with reshape of slices instead")
    vdev = device_of(vec)
    replaced: dict[int, tuple[Any, Any]] = {}  # id(old array) -> (old, new)
    k = 0
    for i, p in enumerate(params):
        n = math.prod(p.shape)
        piece = fnp.reshape(vec[k:k + n], p.shape)
        k += n
        if p.dtype == vec.dtype and device_of(p) == vdev:
            p[...] = piece
        elif sources is not None:
            replaced[id(p)] = (p, piece.copy())
        else:
            raise TypeError(
                f"vector_to_parameters: parameter {i} is a {p.dtype} array on "
                f"{device_of(p)} but the vector is {vec.dtype} on {vdev}; PyTorch would "
                "give the parameter the vector's dtype and device, which a plain list of "
                "arrays cannot: pass model.parameters() (the module's arrays are then "
                "replaced), or convert the vector first (vec.astype(p.dtype))")
    if replaced:
        _rebind(parameters, replaced)


def _rebind(it: ParameterIterator, replaced: dict[int, tuple[Any, Any]]) -> None:
    """Put the new arrays in place of the old in the modules: every name that holds an old
    array (a tied parameter is one array under several names, PyTorch's one Parameter)."""
    mods = list(it.root.modules()) if it.root is not None else [m for m, _ in it.sources]
    for mod in mods:
        for name, v in list(mod._parameters.items()):
            if v is not None and id(v) in replaced:
                setattr(mod, name, replaced[id(v)][1])
    for old, _ in replaced.values():
        if isinstance(old, numpy.ndarray):
            # orphaned, as after Module.to(): an optimizer built from a saved list of the
            # old arrays then fails loudly instead of training arrays nobody reads
            old.flags.writeable = False
