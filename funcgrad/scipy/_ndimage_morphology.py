"""Binary morphology of ``scipy.ndimage``: ``generate_binary_structure``,
``iterate_structure``, ``binary_erosion``, ``binary_dilation``, ``binary_opening``,
``binary_closing``, ``binary_fill_holes``; and the exact Euclidean
``distance_transform_edt``.

Erosion is an AND, dilation an OR, of the input shifted by every offset the structuring
element holds (padded with ``border_value``), with SciPy's centre and ``origin`` conventions
(dilation uses the reflected element). A fixed number of ``iterations`` unrolls; ``iterations
< 1`` repeats until nothing changes in a ``funcgrad.lax.while_loop``. So these work under
``jit`` and ``vmap`` (the structure is concrete). ``distance_transform_edt`` is a host
computation (exact, separable: per axis, the lower envelope of parabolas by brute force in
blocks).

Example:
    >>> import numpy as np
    >>> from funcgrad.scipy.ndimage import binary_erosion
    >>> a = np.zeros((5, 5), bool); a[1:4, 1:4] = True
    >>> binary_erosion(a).astype(int)
    array([[0, 0, 0, 0, 0],
           [0, 0, 0, 0, 0],
           [0, 0, 1, 0, 0],
           [0, 0, 0, 0, 0],
           [0, 0, 0, 0, 0]])
"""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.api_devices import device_get
from funcgrad.avals import get_aval
from funcgrad.backend import device_put, get_default_device, is_array
from funcgrad.core import Tracer
from funcgrad.lax import while_loop

__all__ = ["generate_binary_structure", "iterate_structure", "binary_erosion",
           "binary_dilation", "binary_opening", "binary_closing", "binary_fill_holes",
           "distance_transform_edt"]


def generate_binary_structure(rank: int, connectivity: int) -> numpy.ndarray:
    """The ``3 x ... x 3`` structuring element of ``rank`` dimensions whose elements are
    within ``connectivity`` squared steps of the centre, as
    ``scipy.ndimage.generate_binary_structure`` (a NumPy bool array).

    Example:
        >>> from funcgrad.scipy.ndimage import generate_binary_structure
        >>> generate_binary_structure(2, 1).astype(int)
        array([[0, 1, 0],
               [1, 1, 1],
               [0, 1, 0]])
    """
    if connectivity < 1:
        connectivity = 1
    if rank < 1:
        return numpy.array(True, dtype=bool)
    grid = numpy.indices([3] * rank) - 1
    return numpy.add.reduce(numpy.abs(grid), 0) <= connectivity


def iterate_structure(structure: Any, iterations: int, origin: Any = None) -> Any:
    """``structure`` dilated by itself ``iterations - 1`` times, as
    ``scipy.ndimage.iterate_structure`` (with ``origin``: ``(structure, new_origin)``).

    Example:
        >>> from funcgrad.scipy.ndimage import generate_binary_structure, iterate_structure
        >>> iterate_structure(generate_binary_structure(2, 1), 2).astype(int)
        array([[0, 0, 1, 0, 0],
               [0, 1, 1, 1, 0],
               [1, 1, 1, 1, 1],
               [0, 1, 1, 1, 0],
               [0, 0, 1, 0, 0]])
    """
    structure = numpy.asarray(device_get(structure)).astype(bool)
    if iterations < 2:
        return structure.copy() if origin is None else (structure.copy(), origin)
    ni = iterations - 1
    shape = [ii + ni * (ii - 1) for ii in structure.shape]
    pos = [ni * (structure.shape[ii] // 2) for ii in range(len(shape))]
    slc = tuple(slice(pos[ii], pos[ii] + structure.shape[ii]) for ii in range(len(shape)))
    out = numpy.zeros(shape, bool)
    out[slc] = structure != 0
    out = numpy.asarray(device_get(binary_dilation(out, structure, iterations=ni)))
    if origin is None:
        return out
    origin = _origins("iterate_structure", origin, structure.ndim)
    return out, [iterations * o for o in origin]


def _origins(name: str, origin: Any, ndim: int) -> list[int]:
    o = list(numpy.broadcast_to(numpy.asarray(origin, dtype=int), (ndim,)))
    return [int(v) for v in o]


def _structure(name: str, structure: Any, ndim: int) -> numpy.ndarray:
    if structure is None:
        return generate_binary_structure(ndim, 1)
    if isinstance(structure, Tracer):
        raise TypeError(f"{name}: the structuring element must be concrete, not traced")
    s = numpy.asarray(device_get(structure)).astype(bool)
    if s.ndim != ndim:
        raise RuntimeError(f"{name}: structure and input must have same dimensionality "
                           f"({s.ndim} != {ndim})")
    if not s.any():
        raise RuntimeError(f"{name}: structure must not be empty")
    return s


def _device(x: Any) -> str:
    if is_array(x) and not isinstance(x, numpy.ndarray):
        return get_aval(x).device or get_default_device()
    return get_default_device()


def _erode_once(x: Any, s: numpy.ndarray, origin: list[int], border: bool,
                dilate: bool) -> Any:
    """AND (erosion) or OR (dilation, on the already reflected ``s``) over the offsets."""
    centers = [k // 2 + o for k, o in zip(s.shape, origin)]
    for k, c in zip(s.shape, centers):
        if not 0 <= c < k:
            raise ValueError("invalid origin: the centre must lie inside the structure")
    pads = [(c, k - 1 - c) for k, c in zip(s.shape, centers)]
    padded = fnp.pad(x, pads, constant_values=border)
    shape = get_aval(x).shape
    out = None
    for offset in zip(*numpy.nonzero(s)):
        window = padded[tuple(slice(o, o + n) for o, n in zip(offset, shape))]
        if out is None:
            out = window
        else:
            out = (out | window) if dilate else (out & window)
    return out


def _binary_op(name: str, input: Any, structure: Any, iterations: int, mask: Any,
               border_value: Any, origin: Any, dilate: bool) -> Any:
    x = fnp.asarray(input)
    if fnp.iscomplexobj(x):
        raise TypeError(f"{name}: complex type not supported")
    x = x != 0
    nd = get_aval(x).ndim
    s = _structure(name, structure, nd)
    origin = _origins(name, origin, nd)
    if dilate:  # dilation is erosion of the complement with the reflected element
        s = s[(slice(None, None, -1),) * nd]
        origin = [-o - (1 if not k & 1 else 0) for o, k in zip(origin, s.shape)]
    border = bool(border_value)
    m = None if mask is None else fnp.asarray(mask) != 0

    def step(v: Any) -> Any:
        new = _erode_once(v, s, origin, border, dilate)
        return new if m is None else fnp.where(m, new, x)

    if int(iterations) >= 1:
        out = x
        for _ in range(int(iterations)):
            out = step(out)
        return out

    def cond(state: tuple) -> Any:
        return state[1]

    def body(state: tuple) -> tuple:
        new = step(state[0])
        return new, fnp.any(new != state[0])

    return while_loop(cond, body, (step(x), fnp.asarray(True)))[0]


def binary_erosion(input: Any, structure: Any = None, iterations: int = 1, mask: Any = None,
                   output: Any = None, border_value: Any = 0, origin: Any = 0,
                   brute_force: bool = False, *, axes: Any = None) -> Any:
    """Binary erosion with ``structure`` (default: connectivity 1), as
    ``scipy.ndimage.binary_erosion``: a pixel stays set where every element of the structure,
    centred there (shifted by ``origin``), covers a set pixel (outside the array:
    ``border_value``). ``iterations`` times (``< 1``: until nothing changes); only pixels
    under ``mask`` change. Returns a bool array.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.ndimage import binary_erosion
        >>> binary_erosion(np.array([0, 1, 1, 1, 1, 0]), iterations=2).astype(int)
        array([0, 0, 0, 0, 0, 0])
    """
    _no_output_axes("binary_erosion", output, axes)
    return _binary_op("binary_erosion", input, structure, iterations, mask, border_value,
                      origin, dilate=False)


def binary_dilation(input: Any, structure: Any = None, iterations: int = 1, mask: Any = None,
                    output: Any = None, border_value: Any = 0, origin: Any = 0,
                    brute_force: bool = False, *, axes: Any = None) -> Any:
    """Binary dilation with ``structure`` (default: connectivity 1), as
    ``scipy.ndimage.binary_dilation``: a pixel is set where the reflected structure,
    centred there, meets a set pixel. ``iterations`` (``< 1``: until nothing changes),
    ``mask``, ``border_value``, ``origin`` as SciPy's.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.ndimage import binary_dilation
        >>> binary_dilation(np.array([0, 0, 1, 0, 0, 0]), iterations=2).astype(int)
        array([1, 1, 1, 1, 1, 0])
    """
    _no_output_axes("binary_dilation", output, axes)
    return _binary_op("binary_dilation", input, structure, iterations, mask, border_value,
                      origin, dilate=True)


def _no_output_axes(name: str, output: Any, axes: Any) -> None:
    if output is not None:
        raise TypeError(f"{name}: output= is not supported (funcgrad arrays are immutable); "
                        "use the returned array")
    if axes is not None:
        raise TypeError(f"{name}: axes= is not supported; pass a structure of the input's "
                        "rank")


def _default_structure(input: Any, structure: Any) -> Any:
    return generate_binary_structure(get_aval(fnp.asarray(input)).ndim, 1) \
        if structure is None else structure


def binary_opening(input: Any, structure: Any = None, iterations: int = 1, output: Any = None,
                   origin: Any = 0, mask: Any = None, border_value: Any = 0,
                   brute_force: bool = False, *, axes: Any = None) -> Any:
    """Erosion then dilation (removes small objects), as ``scipy.ndimage.binary_opening``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.ndimage import binary_opening
        >>> binary_opening(np.array([1, 0, 1, 1, 1, 0, 1, 1])).astype(int)
        array([0, 0, 1, 1, 1, 0, 0, 0])
    """
    _no_output_axes("binary_opening", output, axes)
    structure = _default_structure(input, structure)
    tmp = binary_erosion(input, structure, iterations, mask, None, border_value, origin)
    return binary_dilation(tmp, structure, iterations, mask, None, border_value, origin)


def binary_closing(input: Any, structure: Any = None, iterations: int = 1, output: Any = None,
                   origin: Any = 0, mask: Any = None, border_value: Any = 0,
                   brute_force: bool = False, *, axes: Any = None) -> Any:
    """Dilation then erosion (fills small holes), as ``scipy.ndimage.binary_closing``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.ndimage import binary_closing
        >>> binary_closing(np.array([0, 1, 1, 0, 1, 1, 0, 0])).astype(int)
        array([0, 1, 1, 1, 1, 1, 0, 0])
    """
    _no_output_axes("binary_closing", output, axes)
    structure = _default_structure(input, structure)
    tmp = binary_dilation(input, structure, iterations, mask, None, border_value, origin)
    return binary_erosion(tmp, structure, iterations, mask, None, border_value, origin)


def binary_fill_holes(input: Any, structure: Any = None, output: Any = None, origin: Any = 0,
                      *, axes: Any = None) -> Any:
    """Fill the holes (background not connected to the border) of a binary image, as
    ``scipy.ndimage.binary_fill_holes``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.ndimage import binary_fill_holes
        >>> a = np.zeros((5, 5), int); a[1:4, 1:4] = 1; a[2, 2] = 0
        >>> binary_fill_holes(a).astype(int)[2]
        array([0, 1, 1, 1, 0])
    """
    _no_output_axes("binary_fill_holes", output, axes)
    x = fnp.asarray(input) != 0
    background = ~x
    # the background reachable from the border, grown inside the background until stable
    reached = binary_dilation(fnp.zeros_like(x), structure, -1, background, None, 1, origin)
    return ~reached


def _edt_axis(d2: numpy.ndarray, idx: list[numpy.ndarray], axis: int, step: float,
              want_idx: bool) -> tuple[numpy.ndarray, list[numpy.ndarray]]:
    """One separable pass: ``d2[i] = min_j d2[j] + (step (i - j))**2`` along ``axis``."""
    d2 = numpy.moveaxis(d2, axis, -1)
    idx = [numpy.moveaxis(v, axis, -1) for v in idx]
    n = d2.shape[-1]
    lines = d2.reshape(-1, n)
    out = numpy.empty_like(lines)
    arg = numpy.empty(lines.shape, dtype=numpy.intp)
    pos = numpy.arange(n)
    cost = (step * (pos[:, None] - pos[None, :])) ** 2  # [i, j]
    block = max(1, (1 << 22) // max(n * n, 1))
    for lo in range(0, lines.shape[0], block):
        chunk = lines[lo:lo + block][:, None, :] + cost[None]  # [line, i, j]
        a = numpy.argmin(chunk, axis=-1)
        arg[lo:lo + block] = a
        out[lo:lo + block] = numpy.take_along_axis(chunk, a[..., None], -1)[..., 0]
    shape = d2.shape
    new_idx = []
    if want_idx:
        a = arg.reshape(shape)
        new_idx = [numpy.take_along_axis(v, a, -1) for v in idx]
    return (numpy.moveaxis(out.reshape(shape), -1, axis),
            [numpy.moveaxis(v, -1, axis) for v in new_idx])


def distance_transform_edt(input: Any, sampling: Any = None, return_distances: bool = True,
                           return_indices: bool = False, distances: Any = None,
                           indices: Any = None) -> Any:
    """The exact Euclidean distance from each nonzero element to the nearest zero, as
    ``scipy.ndimage.distance_transform_edt``: ``sampling`` scales the axes; with
    ``return_indices`` also the index (one array per axis, stacked) of that nearest zero
    (equally near zeros may be picked differently from SciPy's). A host computation
    (``TypeError`` under ``jit``); float64 distances, int32 indices, on the input's device.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.ndimage import distance_transform_edt
        >>> distance_transform_edt(np.array([[0, 1, 1, 1], [0, 1, 1, 1]])).round(4)
        array([[0., 1., 2., 3.],
               [0., 1., 2., 3.]])
    """
    if distances is not None or indices is not None:
        raise TypeError("distance_transform_edt: distances=/indices= outputs are not "
                        "supported (funcgrad arrays are immutable); use the returned arrays")
    if not return_distances and not return_indices:
        raise RuntimeError("at least one of return_distances/return_indices must be True")
    if isinstance(input, Tracer):
        raise TypeError("distance_transform_edt: needs a concrete array (a host computation); "
                        "call it outside jit/vmap/grad")
    dev = _device(input)
    x = numpy.asarray(device_get(input)) != 0
    nd = x.ndim
    steps = numpy.ones(nd) if sampling is None else numpy.broadcast_to(
        numpy.asarray(sampling, dtype=float), (nd,))
    if sampling is not None and numpy.asarray(sampling).size not in (1, nd):
        raise RuntimeError("distance_transform_edt: sequence argument must have length equal "
                           "to input rank")
    big = numpy.inf
    d2 = numpy.where(x, big, 0.0)
    idx = list(numpy.indices(x.shape)) if return_indices else []
    for axis in range(nd):
        d2, idx = _edt_axis(d2, idx, axis, float(steps[axis]), return_indices)
    out = []
    if return_distances:
        out.append(device_put(numpy.sqrt(d2), dev))
    if return_indices:
        stacked = numpy.stack(idx) if idx else numpy.zeros((nd,) + x.shape, numpy.int32)
        out.append(device_put(stacked.astype(numpy.int32), dev))
    return out[0] if len(out) == 1 else tuple(out)

