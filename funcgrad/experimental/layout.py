"""``jax.experimental.layout``: :class:`Layout` (how an array's elements lie in memory) and
:class:`Format` (a layout with a sharding), what ``Compiled.input_formats`` /
``output_formats`` describe; :func:`with_layout_constraint`.

funcgrad's arrays are NumPy/CuPy arrays in the default row-major layout; see
:class:`funcgrad.sharding.Layout`.

Example:
    >>> import numpy as np, funcgrad
    >>> from funcgrad.experimental.layout import Layout
    >>> funcgrad.jit(lambda x: x * 2).lower(np.ones(3)).compile().output_formats.layout
    Layout(major_to_minor=(0,), tiling=(), sub_byte_element_size_in_bits=0)
"""

from __future__ import annotations

from typing import Any

from funcgrad.sharding import Format, Layout

__all__ = ["Format", "Layout", "with_layout_constraint"]


def with_layout_constraint(x: Any, layout: Layout) -> Any:
    """``x``, required to have ``layout`` (``jax.experimental.layout.with_layout_constraint``).

    Every funcgrad array computes in the default row-major layout, so only that layout is
    accepted (any other is a ``ValueError``: there is no other memory order to lay ``x``
    out in); the rank must fit.

    Example:
        >>> import numpy as np
        >>> with_layout_constraint(np.ones((2, 3)), Layout((0, 1))).shape
        (2, 3)
    """
    if not isinstance(layout, Layout):
        raise TypeError(f"with_layout_constraint: layout must be a Layout, got "
                        f"{type(layout).__name__}")
    shape = tuple(getattr(x, "shape", ()))
    layout.check_compatible_aval(shape)
    if layout.major_to_minor != tuple(range(len(shape))) or layout.tiling:
        raise ValueError(
            f"with_layout_constraint: funcgrad arrays have the row-major layout "
            f"{Layout(tuple(range(len(shape))), ())}; {layout} cannot be honoured")
    return x
