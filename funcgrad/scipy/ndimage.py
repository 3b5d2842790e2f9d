"""funcgrad.scipy.ndimage: ``scipy.ndimage``'s interpolation (``map_coordinates``,
``affine_transform``, ``shift``, ``zoom``, ``rotate``: B-splines of orders 0-5 with every
boundary mode, and the prefilters ``spline_filter1d``/``spline_filter``:
:mod:`funcgrad.scipy._ndimage_interpolation`) and the filters (``correlate``/``convolve`` in
1-D and n-D, ``gaussian_filter``, ``uniform_filter``, ``minimum``/``maximum``/``median``/
``rank``/``percentile_filter``, ``sobel``, ``prewitt``, ``laplace``, ``gaussian_laplace``,
``gaussian_gradient_magnitude``: :mod:`funcgrad.scipy._ndimage_filters`), binary
morphology and ``distance_transform_edt`` (:mod:`funcgrad.scipy._ndimage_morphology`), and
``label``/``find_objects`` with the per-label statistics
(:mod:`funcgrad.scipy._ndimage_measurements`).

Written with matrix products, gathers and selects: differentiable in ``input`` (linear) and
in the coordinates; ``jit`` and ``vmap`` work.

Example:
    >>> import numpy as np, funcgrad.scipy.ndimage as fnd
    >>> fnd.map_coordinates(np.arange(4.0), [np.array([0.5, 2.25])], order=1)
    array([0.5 , 2.25])
"""

from __future__ import annotations

from funcgrad.scipy._device import keep_host_inputs_on_host as _keep_host_inputs_on_host
from funcgrad.scipy._ndimage_filters import (
    convolve,
    convolve1d,
    correlate,
    correlate1d,
    gaussian_filter,
    gaussian_filter1d,
    gaussian_gradient_magnitude,
    gaussian_laplace,
    laplace,
    maximum_filter,
    maximum_filter1d,
    median_filter,
    minimum_filter,
    minimum_filter1d,
    percentile_filter,
    prewitt,
    rank_filter,
    sobel,
    uniform_filter,
    uniform_filter1d,
)
from funcgrad.scipy._ndimage_interpolation import (
    affine_transform,
    map_coordinates,
    rotate,
    shift,
    spline_filter,
    spline_filter1d,
    zoom,
)
from funcgrad.scipy._ndimage_measurements import (
    center_of_mass,
    find_objects,
    label,
    maximum,
    maximum_position,
    mean,
    median,
    minimum,
    minimum_position,
    standard_deviation,
    sum,
    sum_labels,
    variance,
)
from funcgrad.scipy._ndimage_morphology import (
    binary_closing,
    binary_dilation,
    binary_erosion,
    binary_fill_holes,
    binary_opening,
    distance_transform_edt,
    generate_binary_structure,
    iterate_structure,
)

__all__ = [
    "map_coordinates", "affine_transform", "shift", "zoom", "rotate", "spline_filter1d",
    "spline_filter", "correlate1d", "convolve1d", "correlate", "convolve",
    "gaussian_filter1d", "gaussian_filter", "uniform_filter1d", "uniform_filter",
    "minimum_filter1d", "maximum_filter1d", "minimum_filter", "maximum_filter",
    "median_filter", "rank_filter", "percentile_filter", "sobel", "prewitt", "laplace",
    "gaussian_laplace", "gaussian_gradient_magnitude", "generate_binary_structure",
    "iterate_structure", "binary_erosion", "binary_dilation", "binary_opening",
    "binary_closing", "binary_fill_holes", "distance_transform_edt", "label", "find_objects",
    "sum_labels", "sum", "mean", "variance", "standard_deviation", "minimum", "maximum",
    "median", "minimum_position", "maximum_position", "center_of_mass",
]

# NumPy inputs compute on the host whatever the default device (funcgrad.scipy._device)
_keep_host_inputs_on_host(globals(), __all__)
