"""``F.grouped_mm``: PyTorch's grouped matrix multiply for mixture-of-experts layers, each
group (expert) its own matrix product over a jagged slice of tokens. The groups are masks over
the sliced axis (built from ``offs`` by comparing positions with the offsets), so ``offs`` may
be traced and every operand is differentiable."""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad_nn.module import BadInputError

__all__ = ["grouped_mm"]


def _group_masks(offs: Any, n: int, like: Any) -> Any:
    """``(G, n)``: position ``i`` of the sliced axis is in group ``g`` when
    ``offs[g - 1] <= i < offs[g]`` (``offs[-1] = 0`` before the first group)."""
    from funcgrad_nn.functional import _iota_like, _on_device_of
    ends = fnp.asarray(_on_device_of(offs, like)).astype(numpy.int64)
    starts = fnp.concatenate([fnp.zeros_like(ends[:1]), ends[:-1]])
    pos = _iota_like(ends, n, numpy.int64)
    inside = (pos[None, :] >= starts[:, None]) & (pos[None, :] < ends[:, None])
    return inside.astype(fnp.result_type(like))


def grouped_mm(mat_a: Any, mat_b: Any, *, offs: Any = None, bias: Any = None,
               out_dtype: Any = None) -> Any:
    """Grouped matrix products (PyTorch's ``F.grouped_mm``), by the operands' ranks:

    - ``(M, K) x (G, K, N)`` with ``offs`` (G,): rows ``offs[g-1]:offs[g]`` of ``mat_a``
      times ``mat_b[g]``; out ``(M, N)`` (an MoE forward pass);
    - ``(G, M, K) x (K, N)`` with ``offs``: ``mat_a[g]`` times columns ``offs[g-1]:offs[g]``
      of ``mat_b``; out ``(M, N)``;
    - ``(M, K) x (K, N)`` with ``offs``: the shared ``K`` axis sliced, one product per group;
      out ``(G, M, N)`` (the weight gradient of an MoE layer);
    - ``(G, M, K) x (G, K, N)`` without ``offs``: a batched product, out ``(G, M, N)``.

    Positions past ``offs[-1]`` belong to no group: their rows or columns are 0 (PyTorch leaves
    them unwritten). ``offs`` is 1-D, increasing; ``out_dtype`` casts the result. ``bias`` is
    refused, as by PyTorch ("not supported yet").

    >>> import numpy as np
    >>> a = np.arange(6.0).reshape(3, 2)
    >>> b = np.stack([np.eye(2), 2 * np.eye(2)])
    >>> grouped_mm(a, b, offs=np.array([1, 3], np.int32))
    array([[ 0.,  1.],
           [ 4.,  6.],
           [ 8., 10.]])
    """
    fname = "grouped_mm"
    if bias is not None:
        raise BadInputError(f"{fname}: bias is not supported (nor is it by PyTorch); add it to "
                            "each group's output instead")
    da, db = fnp.ndim(mat_a), fnp.ndim(mat_b)
    if da not in (2, 3) or db not in (2, 3):
        raise BadInputError(f"{fname}: mat_a and mat_b must be 2-D or 3-D, got shapes "
                            f"{tuple(fnp.shape(mat_a))} and {tuple(fnp.shape(mat_b))}")
    sa, sb = tuple(fnp.shape(mat_a)), tuple(fnp.shape(mat_b))
    if sa[-1] != sb[-2]:
        raise BadInputError(f"{fname}: contraction sizes differ: mat_a {sa}, mat_b {sb}")
    if (offs is None) != (da == 3 and db == 3):
        raise BadInputError(f"{fname}: offs is needed when an operand is 2-D and refused when "
                            f"both are 3-D, got shapes {sa}, {sb} and offs "
                            f"{'None' if offs is None else 'given'}")
    if offs is not None:
        if fnp.ndim(offs) != 1 or numpy.dtype(fnp.result_type(offs)).kind not in "iu":
            raise BadInputError(f"{fname}: offs must be a 1-D integer array of group ends")
        groups = fnp.shape(offs)[0]
        if da == 3 and sa[0] != groups or db == 3 and sb[0] != groups:
            raise BadInputError(f"{fname}: {groups} offsets for the groups of shapes {sa}, "
                                f"{sb}")
    if da == 3 and db == 3:
        if sa[0] != sb[0]:
            raise BadInputError(f"{fname}: group counts differ: {sa} and {sb}")
        out = fnp.matmul(mat_a, mat_b)
    elif da == 2 and db == 3:
        rows = _group_masks(offs, sa[0], mat_a)  # (G, M)
        out = fnp.einsum("gm,mk,gkn->mn", rows, mat_a, mat_b)
    elif da == 3:
        cols = _group_masks(offs, sb[1], mat_b)  # (G, N)
        out = fnp.einsum("gmk,kn,gn->mn", mat_a, mat_b, cols)
    else:
        shared = _group_masks(offs, sa[1], mat_a)  # (G, K)
        out = fnp.einsum("mk,gk,kn->gmn", mat_a, shared, mat_b)
    return out if out_dtype is None else out.astype(out_dtype)
