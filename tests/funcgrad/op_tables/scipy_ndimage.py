"""Op table: funcgrad.scipy.ndimage's interpolation vs scipy.ndimage (map_coordinates in
every mode and order, spline_filter, shift, zoom, affine_transform, rotate), with the shared
drivers' derivative (in the image; in the coordinates, shift and matrix for orders >= 1 away
from the grid points and the edges), vmap and jit checks."""

from __future__ import annotations

import numpy as np
import scipy.ndimage as nd
from helpers import OpCase, case_adder, rand

import funcgrad.scipy.ndimage as fnd

CASES: list[OpCase] = []
case = case_adder(CASES, "scipy.ndimage.")

_MODES = ("constant", "grid-constant", "nearest", "wrap", "grid-wrap", "mirror", "reflect",
          "grid-mirror")
_IMG = rand((3, 4), np.float64, -2.0, 2.0, seed=1)
_ROWS = np.array([-1.3, 0.2, 1.7, 2.9, 3.6, 0.55])
_COLS = np.array([0.4, -0.8, 2.2, 3.3, 1.45, 4.7])
_INTERIOR = (np.array([0.3, 1.6, 0.9]), np.array([0.7, 2.2, 2.6]))
_REFLECT_INIT = ("reflect", "grid-mirror")  # the modes whose prefilter SciPy 1.18 corrected


def _exact_prefilter(x, order):
    """SciPy >= 1.18's prefilter of modes "reflect"/"grid-mirror" (and spline_filter's
    "nearest"): the exact spline of the symmetrically extended signal, which SciPy before
    1.18 missed on short arrays (scipy/scipy#24615). Through SciPy on every version: padded
    by 40 reflected samples (the far edge moves the result by pole**40 < 3e-15), mirror
    prefiltered (exact for the padded array), cropped."""
    pad = 40
    f = nd.spline_filter(np.pad(np.asarray(x, np.float64), pad, mode="symmetric"), order,
                         mode="mirror")
    return f[(slice(pad, -pad),) * np.ndim(x)]


def _scipy_spline(fn, order, mode):
    """``fn(x, *rest, prefilter=...)`` with SciPy >= 1.18's prefilter on every SciPy."""
    if order < 2 or mode not in _REFLECT_INIT:
        return fn
    return lambda x, *rest: fn(_exact_prefilter(x, order), *rest, prefilter=False).astype(
        np.result_type(x.dtype, np.float32))

for _mode in _MODES:
    for _order in (0, 1):
        case(f"map_coordinates[{_mode},{_order}]",
             lambda x, r, c, m=_mode, o=_order: fnd.map_coordinates(x, [r, c], o, mode=m,
                                                                    cval=-0.5),
             lambda x, r, c, m=_mode, o=_order: nd.map_coordinates(x, [r, c], order=o, mode=m,
                                                                   cval=-0.5),
             [(_IMG, _ROWS, _COLS), (_IMG.astype(np.float32), _ROWS, _COLS)],
             grad_args=[(_IMG, *_INTERIOR)],
             diff_argnums=(0, 1, 2) if _order == 1 else (0,))
case("map_coordinates_int", lambda x, r: fnd.map_coordinates(x, [r], 1, mode="nearest"),
     lambda x, r: nd.map_coordinates(x, [r], order=1, mode="nearest"),
     [(np.array([0, 10, 20, 30]), np.array([0.26, 1.5, 2.74, 5.0]))], grad_args=[])
case("map_coordinates_3d", lambda x, a, b, c: fnd.map_coordinates(x, [a, b, c], 1),
     lambda x, a, b, c: nd.map_coordinates(x, [a, b, c], order=1),
     [(rand((2, 3, 4), np.float64, seed=2), np.array([[0.5, 1.0]]), np.array([[1.5, 0.2]]),
       np.array([[2.5, 3.0]]))], diff_argnums=(0,))

# Spline orders 2-5 (prefiltered): every mode at order 3, three at the others; derivatives in
# the image and the coordinates (interior points away from the knots) for a few (they are the
# slow checks).
_SPLINE_GRADS = {("mirror", 3), ("grid-constant", 3), ("reflect", 2)}
for _order in (2, 3, 4, 5):
    for _mode in (_MODES if _order == 3 else
                  {2: ("reflect",), 4: ("nearest",), 5: ("mirror", "grid-wrap")}[_order]):
        case(f"map_coordinates[{_mode},{_order}]",
             lambda x, r, c, m=_mode, o=_order: fnd.map_coordinates(x, [r, c], o, mode=m,
                                                                    cval=-0.5),
             _scipy_spline(lambda x, r, c, m=_mode, o=_order, **kw: nd.map_coordinates(
                 x, [r, c], order=o, mode=m, cval=-0.5, **kw), _order, _mode),
             [(_IMG, _ROWS, _COLS)], rtol=1e-10, atol=1e-12,
             grad_args=[(_IMG, *_INTERIOR)] if (_mode, _order) in _SPLINE_GRADS else [])
case("map_coordinates_float32_spline",
     lambda x, r, c: fnd.map_coordinates(x, [r, c], 3, mode="reflect"),
     _scipy_spline(lambda x, r, c, **kw: nd.map_coordinates(x, [r, c], order=3, mode="reflect",
                                                            **kw), 3, "reflect"),
     [(_IMG.astype(np.float32), _ROWS, _COLS)], grad_args=[], rtol=1e-5, atol=1e-5)
case("map_coordinates_no_prefilter",
     lambda x, r, c: fnd.map_coordinates(x, [r, c], 3, mode="mirror", prefilter=False),
     lambda x, r, c: nd.map_coordinates(x, [r, c], order=3, mode="mirror", prefilter=False),
     [(_IMG, _ROWS, _COLS)], grad_args=[], rtol=1e-10, atol=1e-12)
for _mode in ("mirror", "reflect", "wrap", "grid-wrap", "nearest"):
    case(f"spline_filter[{_mode}]", lambda x, m=_mode: fnd.spline_filter(x, 3, mode=m),
         (lambda x: _exact_prefilter(x, 3)) if _mode in ("reflect", "nearest") else
         (lambda x, m=_mode: nd.spline_filter(x, 3, mode=m)), [(_IMG,)], rtol=1e-10, atol=1e-12,
         grad_args=None if _mode == "mirror" else [])
case("spline_filter1d[5,axis0]", lambda x: fnd.spline_filter1d(x, 5, axis=0),
     lambda x: nd.spline_filter1d(x, 5, axis=0), [(_IMG,)], rtol=1e-10, atol=1e-12)
_IMG2 = rand((5, 6), np.float64, -2.0, 2.0, seed=3)
for _order, _mode in ((0, "constant"), (1, "nearest"), (3, "constant"), (3, "grid-constant"),
                      (5, "reflect")):
    case(f"shift[{_mode},{_order}]",
         lambda x, s, m=_mode, o=_order: fnd.shift(x, s, order=o, mode=m, cval=0.25),
         _scipy_spline(lambda x, s, m=_mode, o=_order, **kw: nd.shift(
             x, s, order=o, mode=m, cval=0.25, **kw), _order, _mode),
         [(_IMG2, np.array([1.3, -0.6]))], rtol=1e-10, atol=1e-12,
         grad_args=None if (_mode, _order) == ("constant", 3) else [], diff_argnums=(0, 1))
    case(f"zoom[{_mode},{_order}]",
         lambda x, m=_mode, o=_order: fnd.zoom(x, (1.5, 0.7), order=o, mode=m, cval=0.25),
         _scipy_spline(lambda x, m=_mode, o=_order, **kw: nd.zoom(
             x, (1.5, 0.7), order=o, mode=m, cval=0.25, **kw), _order, _mode),
         [(_IMG2,)], rtol=1e-10, atol=1e-12, grad_args=[])
    case(f"affine_transform[{_mode},{_order}]",
         lambda x, a, b, m=_mode, o=_order: fnd.affine_transform(
             x, a, b, output_shape=(4, 7), order=o, mode=m, cval=0.25),
         _scipy_spline(lambda x, a, b, m=_mode, o=_order, **kw: nd.affine_transform(
             x, a, b, output_shape=(4, 7), order=o, mode=m, cval=0.25, **kw), _order, _mode),
         [(_IMG2, np.array([[0.9, 0.31], [-0.22, 1.1]]), np.array([0.45, -1.15]))],
         rtol=1e-10, atol=1e-12, order=1,
         grad_args=None if _mode == "grid-constant" else [])
case("zoom_grid_mode", lambda x: fnd.zoom(x, 2.5, order=3, mode="grid-constant", grid_mode=True),
     lambda x: nd.zoom(x, 2.5, order=3, mode="grid-constant", grid_mode=True), [(_IMG2,)],
     rtol=1e-10, atol=1e-12, grad_args=[])
for _reshape in (True, False):
    case(f"rotate[{_reshape}]", lambda x, r=_reshape: fnd.rotate(x, 33.0, reshape=r),
         lambda x, r=_reshape: nd.rotate(x, 33.0, reshape=r), [(_IMG2,)], rtol=1e-10,
         atol=1e-12, grad_args=[])
case("rotate_3d", lambda x: fnd.rotate(x, -20.0, axes=(0, 2), order=2, mode="mirror"),
     lambda x: nd.rotate(x, -20.0, axes=(0, 2), order=2, mode="mirror"),
     [(rand((3, 2, 4), np.float64, seed=4),)], rtol=1e-10, atol=1e-12, grad_args=[])
case("zoom_uint8", lambda x: fnd.zoom(x, 1.6, order=3),
     lambda x: nd.zoom(x, 1.6, order=3),
     [((rand((4, 5), np.float64, 0.0, 255.0, seed=5)).astype(np.uint8),)], grad_args=[])
