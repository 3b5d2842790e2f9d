"""``r_`` and ``c_``: NumPy's index-expression concatenators, on funcgrad arrays (traced ones
included), with NumPy's slice and string-directive semantics; ``mgrid`` and ``ogrid``
(NumPy's grids, on the default device); ``s_`` and ``index_exp`` (NumPy's own index-expression
builders: they make plain Python index tuples).

funcgrad has no matrix class: the ``'r'``/``'c'`` directives give the 2-D array that NumPy's
``matrix`` result holds (a row, or a column for ``'c'``), and a string key (``r_['1 2; 3 4']``,
NumPy's ``bmat`` syntax) gives the array of that matrix.
"""

from __future__ import annotations

import sys
import warnings
from typing import Any

import numpy

from funcgrad.avals import get_aval
from funcgrad.backend import device_of, device_put, get_default_device
from funcgrad.core import Tracer
from funcgrad.numpy import _creation, _dtype_utils, _shape

__all__ = ["r_", "c_", "mgrid", "ogrid", "s_", "index_exp", "ndindex", "ndenumerate"]

#: NumPy's own: the index tuples of a shape (Python ints, no arrays involved)
ndindex = numpy.ndindex


def ndenumerate(arr: Any) -> Any:
    """``(index, element)`` pairs of ``arr`` in C order, as NumPy's ``ndenumerate``: the
    elements are ``arr[index]`` (NumPy scalars of a host array; 0-d arrays that stay on their
    device, or traced values inside a transformation).

    Example:
        >>> import numpy as np
        >>> [(i, int(v)) for i, v in ndenumerate(np.array([[1, 2], [3, 4]]))]
        [((0, 0), 1), ((0, 1), 2), ((1, 0), 3), ((1, 1), 4)]
    """
    x = arr if isinstance(arr, Tracer) or hasattr(arr, "shape") else _creation.asarray(arr)
    for index in numpy.ndindex(*get_aval(x).shape):
        yield index, x[index]


def _item_array(item: Any, ndmin: int, trans1d: int, device: str) -> Any:
    # Constant items go to ``device`` before they are reshaped: under jit a reshaped
    # constant is a traced value, which stays where it was made.
    if isinstance(item, slice):
        start = 0 if item.start is None else item.start
        step = 1 if item.step is None else item.step
        if isinstance(step, complex | numpy.complexfloating):
            # A complex step is a number of points, end included (as NumPy's mgrid).
            out = _creation.linspace(start, item.stop, num=int(abs(step)))
        else:
            out = _creation.arange(start, item.stop, step)
        out = out if isinstance(out, Tracer) else _on(out, device)
        if ndmin > 1:
            out = _creation.array(out, copy=None, ndmin=ndmin)
            if trans1d != -1:
                out = _shape.swapaxes(out, -1, trans1d)
        return out
    item_ndim = get_aval(item).ndim if isinstance(item, Tracer) else numpy.ndim(item)
    if not isinstance(item, Tracer):
        item = _on(_creation.asarray(item), device)
    out = _creation.array(item, copy=None, ndmin=ndmin)
    if trans1d != -1 and item_ndim < ndmin:
        # Where the item's own axes go among the ndmin ones (NumPy's rule).
        k2 = ndmin - item_ndim
        k1 = trans1d + k2 + 1 if trans1d < 0 else trans1d
        axes = list(range(ndmin))
        out = _shape.transpose(out, axes[:k1] + axes[k2:] + axes[k1:k2])
    return out


def _directive(item: str, axis: int, ndmin: int, trans1d: int) -> tuple[int, int, int]:
    try:
        if "," in item:
            vec = [int(v) for v in item.split(",")]
            if len(vec) > 3:
                raise ValueError
            axis, ndmin = vec[:2]
            return axis, ndmin, (vec[2] if len(vec) == 3 else trans1d)
        return int(item), ndmin, trans1d
    except ValueError:
        raise ValueError(
            f"unknown special directive {item!r}: expected 'r', 'c', an axis ('1') or "
            "'axis,ndmin[,trans1d]' ('0,2,0')"
        ) from None


def _on(x: Any, device: str) -> Any:
    """The concrete array ``x`` on ``device``."""
    return x if device_of(x) == device else device_put(x, device)


class AxisConcatenator:
    """Translates slices, arrays and scalars to one concatenation along an axis (NumPy's)."""

    __slots__ = ("axis", "ndmin", "trans1d")

    def __init__(self, axis: int = 0, ndmin: int = 1, trans1d: int = -1) -> None:
        self.axis = axis
        self.ndmin = ndmin
        self.trans1d = trans1d

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):  # NumPy's matrix builder syntax, from the caller's names
            frame = sys._getframe(1)
            with warnings.catch_warnings():  # NumPy's matrix is internal here: no warning
                warnings.simplefilter("ignore", PendingDeprecationWarning)
                return numpy.asarray(numpy.bmat(key, frame.f_globals, frame.f_locals))
        if not isinstance(key, tuple):
            key = (key,)
        axis, ndmin, trans1d = self.axis, self.ndmin, self.trans1d
        # Joined where the items' arrays live (an accelerator's, else the host's if the key
        # holds host arrays, else the default device), as nested lists are by fnp.array.
        device = _creation._nested_device([o for o in key if not isinstance(o, slice | str)])
        matrix: str | None = None
        objs: list[Any] = []
        promoted: list[Any] = []  # dtypes, and Python scalars (weak in promotion)
        for k, item in enumerate(key):
            if isinstance(item, str):
                if k != 0:
                    raise ValueError("special directives must be the first entry")
                if item in ("r", "c"):
                    matrix = item
                else:
                    axis, ndmin, trans1d = _directive(item, axis, ndmin, trans1d)
                continue
            if type(item) in numpy.ScalarType:
                objs.append(item)
                promoted.append(item)
            else:
                obj = _item_array(item, ndmin, trans1d, device)
                objs.append(obj)
                promoted.append(get_aval(obj).dtype)
        if promoted:
            dt = _dtype_utils.result_type(*promoted)
            # (constants on the device before reshaping, as in _item_array)
            objs = [o if isinstance(o, Tracer) else _on(_creation.asarray(o, dt), device)
                    for o in objs]
            objs = [_creation.array(o, dt, copy=None, ndmin=ndmin) for o in objs]
        objs = [o if isinstance(o, Tracer) else _on(o, device) for o in objs]
        res = _shape.concatenate(tuple(objs), axis=axis)
        if matrix is not None:  # the 2-D array of NumPy's matrix result
            nd = get_aval(res).ndim
            if nd == 1:
                res = _shape.reshape(res, (-1, 1) if matrix == "c" else (1, -1))
            elif nd != 2:
                raise ValueError(f"the {matrix!r} directive needs a result of at most 2 "
                                 f"dimensions, got {nd}")
        return res

    def __len__(self) -> int:
        return 0


class RClass(AxisConcatenator):
    """Concatenate along the first axis: ``fnp.r_[1:4, 0, fnp.ones(2)]``.

    As :data:`numpy.r_`: slices become ``arange`` (``linspace`` with a complex step, end
    included), scalars and arrays are joined; a leading string sets the axis, the minimum
    number of dimensions and where 1-D items' axis goes (``'0,2,0'``), or ``'r'``/``'c'``
    for a row/column. Works on traced arrays.

    Example:
        >>> import funcgrad.numpy as fnp
        >>> fnp.r_[1:4, 0, fnp.ones(2)]
        array([1., 2., 3., 0., 1., 1.])
        >>> fnp.r_[0:1:3j]
        array([0. , 0.5, 1. ])
        >>> fnp.r_["0,2", [1, 2], [3, 4]]
        array([[1, 2],
               [3, 4]])
    """

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__(0)


class CClass(AxisConcatenator):
    """Concatenate along the last axis, 1-D items as columns: ``fnp.c_[a, b]``.

    Example:
        >>> import funcgrad.numpy as fnp
        >>> fnp.c_[fnp.array([1, 2]), fnp.array([3, 4])]
        array([[1, 3],
               [2, 4]])
    """

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__(-1, ndmin=2, trans1d=0)


r_ = RClass()
c_ = CClass()


class GridClass:
    """``mgrid[...]`` (dense) / ``ogrid[...]`` (open) grids, as :data:`numpy.mgrid` and
    :data:`numpy.ogrid`: NumPy's values and dtypes, on the default device.

    Slice bounds are static numbers (the grid's shape depends on them), so the grid is a
    constant under every transformation. A complex step is a number of points, end included.
    ``ogrid`` returns a tuple of broadcastable arrays (NumPy 2; ``jax.numpy`` gives a list).

    Example:
        >>> import funcgrad.numpy as fnp
        >>> fnp.mgrid[0:2, 0:3]
        array([[[0, 0, 0],
                [1, 1, 1]],
        <BLANKLINE>
               [[0, 1, 2],
                [0, 1, 2]]])
        >>> fnp.ogrid[0:1:3j, 0:2]
        (array([[0. ],
               [0.5],
               [1. ]]), array([[0., 1.]]))
    """

    __slots__ = ("_grid",)

    def __init__(self, grid: Any) -> None:
        self._grid = grid

    def __getitem__(self, key: Any) -> Any:
        out = self._grid[key]
        # NumPy computes the grid on the host; asarray would keep a host array there
        dev = get_default_device()
        if isinstance(out, tuple | list):
            return tuple(device_put(o, dev) for o in out)
        return device_put(out, dev)

    def __len__(self) -> int:
        return 0


mgrid = GridClass(numpy.mgrid)
ogrid = GridClass(numpy.ogrid)
# Pure index-expression builders (``s_[1:3, ::2]`` is ``(slice(1, 3), slice(None, None, 2))``):
# no arrays are involved, so NumPy's own objects are the right ones.
s_ = numpy.s_
index_exp = numpy.index_exp
