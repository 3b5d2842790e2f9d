"""Measurements of ``scipy.ndimage``: ``label`` and ``find_objects`` (host computations:
how many objects there are depends on the data), and the per-label statistics
``sum_labels`` (``sum``), ``mean``, ``variance``, ``standard_deviation``, ``minimum``,
``maximum``, ``median``, ``minimum_position``, ``maximum_position``, ``center_of_mass``.

The statistics are masked reductions over ``labels == index`` (one mask per requested label),
so they are differentiable in ``input`` and work under ``jit``/``vmap`` (``index`` concrete);
results follow SciPy's forms: a scalar for ``index`` ``None`` (every label above 0 together)
or a scalar label, an array (positions and centres: a list of tuples) for a sequence.

Example:
    >>> import numpy as np
    >>> from funcgrad.scipy.ndimage import label, sum_labels
    >>> lab, n = label(np.array([[1, 1, 0, 0], [0, 0, 0, 1], [1, 0, 1, 1]]))
    >>> lab, n
    (array([[1, 1, 0, 0],
           [0, 0, 0, 2],
           [3, 0, 2, 2]], dtype=int32), 3)
    >>> sum_labels(np.arange(12.0).reshape(3, 4), lab, [1, 2, 3])
    array([ 1., 28.,  8.])
"""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.api_devices import device_get
from funcgrad.avals import get_aval
from funcgrad.backend import device_put, get_default_device, is_array
from funcgrad.core import Tracer
from funcgrad.scipy._ndimage_morphology import generate_binary_structure

__all__ = ["label", "find_objects", "sum_labels", "sum", "mean", "variance",
           "standard_deviation", "minimum", "maximum", "median", "minimum_position",
           "maximum_position", "center_of_mass"]

def _device(x: Any) -> str:
    if is_array(x) and not isinstance(x, numpy.ndarray):
        return get_aval(x).device or get_default_device()
    return get_default_device()


def _concrete(name: str, v: Any) -> numpy.ndarray:
    if isinstance(v, Tracer):
        raise TypeError(f"{name}: needs a concrete array (the number of objects depends on "
                        "the data); call it outside jit/vmap/grad")
    return numpy.asarray(device_get(v))


def label(input: Any, structure: Any = None, output: Any = None) -> tuple[Any, int]:
    """Label the connected components of the nonzero elements, as ``scipy.ndimage.label``:
    ``(labeled, num_features)``, labels ``1..n`` in raster order of each component's first
    element, int32. ``structure`` (default: connectivity 1, no diagonals) says which
    neighbours connect; it must be 3 wide on every axis and symmetric. A host computation.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.ndimage import generate_binary_structure, label
        >>> a = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1]])
        >>> label(a)[1], label(a, structure=generate_binary_structure(2, 2))[1]
        (3, 1)
    """
    if output is not None:
        raise TypeError("label: output= is not supported; use the returned array")
    dev = _device(input)
    x = _concrete("label", input)
    if numpy.iscomplexobj(x):
        raise TypeError("label: complex type not supported")
    nd = x.ndim
    s = generate_binary_structure(max(nd, 1), 1) if structure is None else \
        _concrete("label", structure).astype(bool)
    if nd == 0:
        lab = numpy.asarray(1 if x != 0 else 0, numpy.int32)
        return device_put(lab, dev), int(lab)
    if s.ndim != nd:
        raise RuntimeError("label: structure and input must have equal rank")
    if any(k != 3 for k in s.shape):
        raise ValueError("label: structure dimensions must be equal to 3")
    if not numpy.array_equal(s, s[(slice(None, None, -1),) * nd]):
        raise ValueError("label: structure must be symmetric")
    fg = x != 0
    n = x.size
    # every element points at the smallest linear index it is connected to: neighbour
    # minima, then pointer jumping, until nothing moves
    lab = numpy.where(fg, numpy.arange(n).reshape(x.shape), n)
    offsets = [tuple(o - 1 for o in off) for off in zip(*numpy.nonzero(s))
               if any(o != 1 for o in off)]
    big = n
    while True:
        padded = numpy.pad(lab, 1, constant_values=big)
        new = lab.copy()
        for off in offsets:
            window = padded[tuple(slice(1 + o, 1 + o + k) for o, k in zip(off, x.shape))]
            new = numpy.minimum(new, window)
        new = numpy.where(fg, new, big)
        flat = numpy.append(new.reshape(-1), big)
        while True:  # follow the pointers to their roots
            jumped = flat[flat]
            if numpy.array_equal(jumped, flat):
                break
            flat = jumped
        new = flat[:-1].reshape(x.shape)
        if numpy.array_equal(new, lab):
            break
        lab = new
    roots = numpy.unique(lab[fg])  # ascending linear index: raster order of first elements
    out = numpy.zeros(x.shape, numpy.int32)
    out[fg] = numpy.searchsorted(roots, lab[fg]) + 1
    return device_put(out, dev), int(roots.size)


def find_objects(input: Any, max_label: int = 0) -> list[Any]:
    """The bounding box of each label ``1..max_label`` (default: the largest) as a tuple of
    slices, ``None`` for a label that does not occur, as ``scipy.ndimage.find_objects``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.ndimage import find_objects
        >>> find_objects(np.array([0, 2, 2, 0, 3]))
        [None, (slice(1, 3, None),), (slice(4, 5, None),)]
    """
    x = _concrete("find_objects", input)
    if numpy.iscomplexobj(x):
        raise TypeError("find_objects: complex type not supported")
    if not numpy.issubdtype(x.dtype, numpy.integer):
        x = x.astype(numpy.intp)
    if max_label < 1:
        max_label = int(x.max()) if x.size else 0
    out: list[Any] = [None] * int(max_label)
    for lab in numpy.unique(x[(x > 0) & (x <= max_label)]):
        where = numpy.nonzero(x == lab)
        out[int(lab) - 1] = tuple(slice(int(w.min()), int(w.max()) + 1) for w in where)
    return out


# ---- per-label statistics: one boolean mask per requested label


def _regions(input: Any, labels: Any, index: Any) -> tuple[Any, Any, bool]:
    """``(x, masks, scalar)``: the input, masks ``[..., k]`` (one per requested region) and
    whether the result is one value."""
    x = fnp.asarray(input)
    if labels is None:
        return x, fnp.ones(get_aval(x).shape + (1,), bool), True
    lab = fnp.asarray(labels)
    shape = numpy.broadcast_shapes(get_aval(x).shape, get_aval(lab).shape)
    x, lab = fnp.broadcast_to(x, shape), fnp.broadcast_to(lab, shape)
    if index is None:
        return x, (lab > 0)[..., None], True
    if isinstance(index, Tracer):
        raise TypeError("ndimage measurements: index must be concrete (it sets the result's "
                        "length)")
    idx = numpy.asarray(device_get(index))
    if idx.ndim == 0:
        return x, (lab == idx.item())[..., None], True
    dev = get_aval(lab).device or get_default_device()
    return x, lab[..., None] == device_put(idx.reshape(-1), dev), False


def _reduce_all(v: Any) -> Any:
    return fnp.sum(fnp.reshape(v, (-1, get_aval(v).shape[-1])), axis=0)


def _finish(v: Any, scalar: bool, index: Any) -> Any:
    if scalar:
        return v[0]
    return fnp.reshape(v, numpy.shape(device_get(index)))


def _counts_sums(input: Any, labels: Any, index: Any) -> tuple[Any, Any, Any, Any, bool]:
    x, masks, scalar = _regions(input, labels, index)
    if not fnp.issubdtype(get_aval(x).dtype, fnp.inexact):
        x = x.astype(numpy.float64)
    xe = x[..., None]
    count = _reduce_all(masks.astype(get_aval(x).dtype))
    total = _reduce_all(fnp.where(masks, xe, 0))
    return x, masks, count, total, scalar


def sum_labels(input: Any, labels: Any = None, index: Any = None) -> Any:
    """The sum of ``input`` over each region, as ``scipy.ndimage.sum_labels``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.ndimage import sum_labels
        >>> sum_labels(np.array([1.0, 2.0, 3.0, 4.0]), np.array([1, 1, 2, 0]), [1, 2])
        array([3., 3.])
    """
    _, _, _, total, scalar = _counts_sums(input, labels, index)
    return _finish(total, scalar, index)


sum = sum_labels  # noqa: A001 (SciPy's name)


def mean(input: Any, labels: Any = None, index: Any = None) -> Any:
    """The mean of ``input`` over each region (nan for an empty one), as
    ``scipy.ndimage.mean``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.ndimage import mean
        >>> mean(np.array([1.0, 2.0, 3.0, 4.0]), np.array([1, 1, 2, 0]), [1, 2])
        array([1.5, 3. ])
    """
    _, _, count, total, scalar = _counts_sums(input, labels, index)
    return _finish(_div(total, count), scalar, index)


def _div(a: Any, b: Any) -> Any:
    safe = fnp.where(b == 0, 1, b)
    return fnp.where(b == 0, numpy.nan, a / safe)


def variance(input: Any, labels: Any = None, index: Any = None) -> Any:
    """The (population) variance of ``input`` over each region, as
    ``scipy.ndimage.variance``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.ndimage import variance
        >>> variance(np.array([1.0, 2.0, 3.0, 4.0]), np.array([1, 1, 2, 0]), [1, 2])
        array([0.25, 0.  ])
    """
    x, masks, count, total, scalar = _counts_sums(input, labels, index)
    centred = x[..., None] - _div(total, count)
    return _finish(_div(_reduce_all(fnp.where(masks, centred * centred, 0)), count), scalar,
                   index)


def standard_deviation(input: Any, labels: Any = None, index: Any = None) -> Any:
    """The square root of :func:`variance`, as ``scipy.ndimage.standard_deviation``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.ndimage import standard_deviation
        >>> standard_deviation(np.array([1.0, 2.0, 3.0, 4.0]), np.array([1, 1, 2, 0]), [1, 2])
        array([0.5, 0. ])
    """
    return fnp.sqrt(variance(input, labels, index))


def _extreme(input: Any, labels: Any, index: Any, find_min: bool) -> tuple[Any, Any, bool]:
    x, masks, scalar = _regions(input, labels, index)
    dt = get_aval(x).dtype
    fill = (numpy.inf if find_min else -numpy.inf) if dt.kind == "f" else (
        numpy.iinfo(dt).max if find_min else numpy.iinfo(dt).min) if dt.kind in "iu" else \
        (not find_min)
    flat = fnp.reshape(fnp.where(masks, x[..., None], fill), (-1, get_aval(masks).shape[-1]))
    pos = fnp.argmin(flat, axis=0) if find_min else fnp.argmax(flat, axis=0)
    val = fnp.take_along_axis(flat, pos[None], axis=0)[0]
    empty = ~fnp.any(fnp.reshape(masks, (-1, get_aval(masks).shape[-1])), axis=0)
    # SciPy's value for a region with no elements: 0, at position 0
    return fnp.where(empty, 0, val).astype(dt), fnp.where(empty, 0, pos), scalar


def minimum(input: Any, labels: Any = None, index: Any = None) -> Any:
    """The minimum of ``input`` over each region (0 for an empty one), as
    ``scipy.ndimage.minimum``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.ndimage import minimum
        >>> minimum(np.array([1.0, 2.0, 3.0, 4.0]), np.array([1, 1, 2, 0]), [1, 2])
        array([1., 3.])
    """
    val, _, scalar = _extreme(input, labels, index, True)
    return _finish(val, scalar, index)


def maximum(input: Any, labels: Any = None, index: Any = None) -> Any:
    """The maximum of ``input`` over each region (0 for an empty one), as
    ``scipy.ndimage.maximum``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.ndimage import maximum
        >>> maximum(np.array([1.0, 2.0, 3.0, 4.0]), np.array([1, 1, 2, 0]), [1, 2])
        array([2., 3.])
    """
    val, _, scalar = _extreme(input, labels, index, False)
    return _finish(val, scalar, index)


def _positions(pos: Any, shape: tuple[int, ...], scalar: bool) -> Any:
    coords = fnp.unravel_index(pos, shape) if shape else ()
    rows = [tuple(c[i] for c in coords) for i in range(get_aval(pos).shape[0])]
    return rows[0] if scalar else rows


def minimum_position(input: Any, labels: Any = None, index: Any = None) -> Any:
    """Where each region's minimum is first reached (a tuple of indices; a list of them for
    a sequence ``index``), as ``scipy.ndimage.minimum_position``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.ndimage import minimum_position
        >>> tuple(int(i) for i in minimum_position(np.array([[3.0, 1.0], [0.5, 2.0]])))
        (1, 0)
    """
    x = fnp.asarray(input)
    _, pos, scalar = _extreme(x, labels, index, True)
    return _positions(pos, numpy.broadcast_shapes(get_aval(x).shape, numpy.shape(
        device_get(labels)) if labels is not None else ()), scalar)


def maximum_position(input: Any, labels: Any = None, index: Any = None) -> Any:
    """Where each region's maximum is first reached, as
    ``scipy.ndimage.maximum_position``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.ndimage import maximum_position
        >>> tuple(int(i) for i in maximum_position(np.array([[3.0, 1.0], [0.5, 2.0]])))
        (0, 0)
    """
    x = fnp.asarray(input)
    _, pos, scalar = _extreme(x, labels, index, False)
    return _positions(pos, numpy.broadcast_shapes(get_aval(x).shape, numpy.shape(
        device_get(labels)) if labels is not None else ()), scalar)


def median(input: Any, labels: Any = None, index: Any = None) -> Any:
    """The median of ``input`` over each region (0 for an empty one), as
    ``scipy.ndimage.median``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.ndimage import median
        >>> median(np.array([1.0, 2.0, 3.0, 4.0, 9.0]), np.array([1, 1, 1, 2, 2]), [1, 2])
        array([2. , 6.5])
    """
    x, masks, scalar = _regions(input, labels, index)
    if not fnp.issubdtype(get_aval(x).dtype, fnp.inexact):
        x = x.astype(numpy.float64)
    flat = fnp.reshape(fnp.where(masks, x[..., None], numpy.nan),
                       (-1, get_aval(masks).shape[-1]))
    empty = ~fnp.any(fnp.reshape(masks, (-1, get_aval(masks).shape[-1])), axis=0)
    safe = fnp.where(empty[None], 0.0, flat)
    return _finish(fnp.where(empty, 0.0, fnp.nanmedian(safe, axis=0)), scalar, index)


def center_of_mass(input: Any, labels: Any = None, index: Any = None) -> Any:
    """The centre of mass of ``input`` over each region (a tuple of coordinates; a list of
    tuples for a sequence ``index``), as ``scipy.ndimage.center_of_mass``. Differentiable
    in ``input``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.ndimage import center_of_mass
        >>> tuple(float(c) for c in center_of_mass(np.array([[0.0, 1.0], [0.0, 3.0]])))
        (0.75, 1.0)
    """
    x, masks, scalar = _regions(input, labels, index)
    if not fnp.issubdtype(get_aval(x).dtype, fnp.inexact):
        x = x.astype(numpy.float64)
    shape = get_aval(x).shape
    weights = fnp.where(masks, x[..., None], 0)
    total = _reduce_all(weights)
    dev = get_aval(x).device or get_default_device()
    coords = []
    for axis, n in enumerate(shape):
        grid = numpy.arange(n, dtype=float).reshape([-1 if a == axis else 1
                                                     for a in range(len(shape))] + [1])
        coords.append(_reduce_all(weights * device_put(grid, dev)) / total)
    rows = [tuple(c[i] for c in coords) for i in range(get_aval(total).shape[0])]
    return rows[0] if scalar else rows

