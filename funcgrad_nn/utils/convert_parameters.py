"""``parameters_to_vector`` / ``vector_to_parameters`` (as ``torch.nn.utils``)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import funcgrad.numpy as fnp
from funcgrad.core import is_tracer

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
    """Copy consecutive slices of the 1-D ``vec`` into the arrays of ``parameters``, in
    place (their shapes and dtypes are kept).

    >>> import numpy as np
    >>> ps = [np.zeros((2, 2)), np.zeros(1)]
    >>> vector_to_parameters(np.arange(5.0), ps); ps[1]
    array([4.])
    """
    params = list(parameters)
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
    k = 0
    for p in params:
        n = math.prod(p.shape)
        p[...] = fnp.reshape(vec[k:k + n], p.shape)
        k += n
