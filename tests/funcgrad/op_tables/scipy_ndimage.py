"""Op table: funcgrad.scipy.ndimage.map_coordinates vs scipy.ndimage (every mode, orders 0
and 1), with the shared drivers' derivative (in the image; and in the coordinates for
order 1, away from the grid points), vmap and jit checks."""

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
