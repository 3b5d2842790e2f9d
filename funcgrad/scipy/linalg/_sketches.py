"""``clarkson_woodruff_transform``: SciPy's sparse random sketch ``S @ A``, the sketch drawn
on the host with NumPy's generators exactly as SciPy draws it (so a seed gives SciPy's
sketch), the product a funcgrad matmul (linear in ``A``: differentiable, ``jit``/``vmap``-able
in ``A``)."""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.avals import get_aval
from funcgrad.backend import operator_index
from funcgrad.scipy.linalg._util import const_like

__all__ = ["clarkson_woodruff_transform"]

_UNSET = object()


def _generator(rng: Any, seed: Any) -> Any:
    """SciPy's reading of ``rng`` (``numpy.random.default_rng`` of it) and of the legacy
    ``seed`` (``check_random_state``: None for NumPy's global ``RandomState``, an int for a
    new ``RandomState``)."""
    if seed is not _UNSET:
        if rng is not None:
            raise TypeError("clarkson_woodruff_transform: give rng or seed, not both")
        if seed is None or seed is numpy.random:
            return numpy.random.mtrand._rand
        if isinstance(seed, (numpy.random.RandomState, numpy.random.Generator)):
            return seed
        return numpy.random.RandomState(seed)
    return numpy.random.default_rng(rng)


def clarkson_woodruff_transform(input_matrix: Any, sketch_size: int, rng: Any = None, *,
                                seed: Any = _UNSET) -> Any:
    """``S @ input_matrix`` for a ``(sketch_size, n)`` Clarkson-Woodruff sketch ``S`` (each
    column one ``+1`` or ``-1`` at a random row), as ``scipy.linalg.clarkson_woodruff_transform``:
    ``rng`` (or the legacy ``seed``) draws the same sketch SciPy draws from it. Stacks of
    matrices share one sketch, as SciPy's. The result dtype is SciPy's (the integer sketch
    times ``input_matrix``: float64 for float32 input). The sketch is drawn when the call
    runs: under ``jit`` once, at tracing, so pass ``rng`` to say which.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.clarkson_woodruff_transform(np.arange(12.0).reshape(4, 3), 2, rng=0)
        array([[ 9., 10., 11.],
               [ 9., 12., 15.]])
    """
    a = fnp.asarray(input_matrix)
    aval = get_aval(a)
    if aval.ndim < 2:
        raise ValueError(f"clarkson_woodruff_transform: input_matrix must be at least 2-D "
                         f"(rows are sketched), got shape {aval.shape}")
    rows = operator_index(sketch_size)
    n = aval.shape[-2]
    gen = _generator(rng, seed)
    if isinstance(gen, numpy.random.Generator):
        where = gen.integers(0, rows, n)
    else:
        where = gen.randint(0, rows, n)
    signs = gen.choice([1, -1], n)
    sketch = numpy.zeros((rows, n), numpy.int64)
    sketch[where, numpy.arange(n)] = signs
    dtype = numpy.result_type(numpy.int64, aval.dtype)
    return fnp.matmul(const_like(a, sketch.astype(dtype)), a.astype(dtype))
