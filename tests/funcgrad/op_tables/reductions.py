"""Op table: funcgrad.numpy reductions, statistics, cumulative ops and sorting.

Every function runs over shapes (), (3,), (2, 3), (2, 3, 4) as its axis allows, with several
``axis``/``keepdims`` choices, on float64, float32 and int64 (and bool where NumPy takes it).
Derivatives are checked to order 2 on float64 values without ties.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from helpers import OpCase, rand

import funcgrad.numpy as fnp

ALL_SHAPES = [(), (3,), (2, 3), (2, 3, 4)]

# (label, axis, keepdims, shapes the axis fits)
AXES: list[tuple[str, Any, bool, list[tuple[int, ...]]]] = [
    ("all", None, False, ALL_SHAPES),
    ("all_kd", None, True, [(3,), (2, 3)]),
    ("ax0", 0, False, [(3,), (2, 3), (2, 3, 4)]),
    ("axm1_kd", -1, True, [(3,), (2, 3), (2, 3, 4)]),
    ("ax1", 1, False, [(2, 3), (2, 3, 4)]),
    ("ax02", (0, 2), False, [(2, 3, 4)]),
    ("ax0m1_kd", (0, -1), True, [(2, 3), (2, 3, 4)]),
]
ONE_AXIS = [a for a in AXES if not isinstance(a[1], tuple)]


def _args(shapes, dtypes=(np.float64, np.float32, np.int64), low=-2.0, high=2.0, seed=0):
    # np.asarray: rand gives a NumPy scalar for a 0-d bool, which would stay on the host.
    return [(np.asarray(rand(s, d, low, high, seed=seed + i)),)
            for i, (s, d) in enumerate((s, d) for d in dtypes for s in shapes)]


def _grad_args(shapes, low=-2.0, high=2.0, seed=100):
    return [(rand(s, np.float64, low, high, seed=seed + i),) for i, s in enumerate(shapes)]


def _with_nans(shapes, seed=200):
    out = []
    for i, s in enumerate(shapes):
        x = rand(s, np.float64, seed=seed + i)
        if x.ndim:
            x.flat[1 % x.size] = np.nan
        out.append((x,))
    return out


CASES: list[OpCase] = []


def _family(name: str, axes=AXES, dtypes=(np.float64, np.float32, np.int64), order: int = 2,
            extra: dict | None = None, low: float = -2.0, high: float = 2.0,
            grad_low: float | None = None, grad_high: float | None = None,
            nans: bool = False, nan_grads: bool = False, nonscalar_grads: bool = False,
            kw: dict | None = None, **opts: Any) -> None:
    """One OpCase per axis choice: fnp.<name>(x, axis=..., keepdims=..., **kw) vs NumPy."""
    fn, ref = getattr(fnp, name), getattr(np, name)
    if name == "argsort":  # funcgrad sorts stably; NumPy's default may order ties otherwise
        ref = lambda x, **k: np.argsort(x, kind="stable", **k)  # noqa: E731
    kw = kw or {}
    for label, axis, keepdims, shapes in axes:
        kws = dict(kw, axis=axis)
        if keepdims:
            kws["keepdims"] = True
        args = _args(shapes, dtypes, low, high)
        if nans:
            args += _with_nans(shapes)
        gl = low if grad_low is None else grad_low
        gh = high if grad_high is None else grad_high
        gshapes = [sh for sh in shapes if sh != ()] if nonscalar_grads else shapes
        grad_args = _grad_args(gshapes, gl, gh) + (_with_nans(shapes) if nan_grads else [])
        suffix = "".join(f"_{k}{v}" for k, v in sorted(kw.items()))
        CASES.append(OpCase(
            f"fnp.{name}{suffix}_{label}",
            lambda x, kws=kws: fn(x, **kws),
            lambda x, kws=kws: ref(x, **kws),
            args, order=order, grad_args=grad_args if order else None, **opts,
        ))


# -- sums, products, means ----------------------------------------------------------------
_family("sum", dtypes=(np.float64, np.float32, np.int64, np.bool_))
_family("prod")
_family("mean")
_family("var")
_family("var", axes=AXES[1:4], kw={"ddof": 1})
# std's derivative is infinite where the variance is 0 (one element): no () grad args.
_family("std", nonscalar_grads=True)
_family("std", axes=AXES[2:5], kw={"ddof": 1})
_family("ptp", dtypes=(np.float64, np.float32, np.int64))

# -- extrema --------------------------------------------------------------------------------
for _n in ("max", "min", "amax", "amin"):
    _family(_n, dtypes=(np.float64, np.float32, np.int64, np.bool_) if _n == "max" else
            (np.float64, np.float32, np.int64))
for _n in ("argmax", "argmin"):
    _family(_n, axes=ONE_AXIS, order=0)

# -- logical ----------------------------------------------------------------------------------
for _n in ("any", "all", "count_nonzero"):
    _family(_n, axes=[a for a in AXES if not (_n == "count_nonzero" and a[0] == "all_kd")],
            dtypes=(np.float64, np.int64, np.bool_), order=0, low=-1.0, high=1.0)

# -- cumulative, sorting (no keepdims) ---------------------------------------------------------
_CUM_AXES = [("all", None, False, ALL_SHAPES), ("ax0", 0, False, [(3,), (2, 3), (2, 3, 4)]),
             ("axm1", -1, False, [(3,), (2, 3), (2, 3, 4)]), ("ax1", 1, False, [(2, 3, 4)])]
_family("cumsum", axes=_CUM_AXES, dtypes=(np.float64, np.float32, np.int64, np.bool_))
_family("cumprod", axes=_CUM_AXES)
_family("sort", axes=_CUM_AXES[1:] + [("flat", None, False, [(2, 3), (2, 3, 4)])])
_family("argsort", axes=_CUM_AXES[1:] + [("flat", None, False, [(2, 3)])], order=0)

# -- order statistics ---------------------------------------------------------------------------
_family("median", dtypes=(np.float64, np.float32, np.int64), nans=True)
_family("quantile", axes=AXES[:5], kw={"q": 0.3}, nans=True)
_family("quantile", axes=AXES[2:4], kw={"q": 0.75})
_family("percentile", axes=AXES[:4], kw={"q": 40.0})

# -- NaN-ignoring ---------------------------------------------------------------------------------
for _n in ("nansum", "nanmean", "nanmax", "nanmin", "nanprod", "nanvar"):
    _family(_n, axes=AXES[:5], dtypes=(np.float64, np.float32, np.int64), nans=True,
            nan_grads=True)
_family("nanstd", axes=AXES[:3], dtypes=(np.float64, np.int64), nans=True,
        nonscalar_grads=True)

# -- dtype= and other keyword variants ------------------------------------------------------
CASES += [
    OpCase("fnp.sum_dtype_f32", lambda x: fnp.sum(x, axis=0, dtype=np.float32),
           lambda x: np.sum(x, axis=0, dtype=np.float32),
           _args([(3,), (2, 3)], (np.float64, np.int64)), grad_args=_grad_args([(2, 3)])),
    OpCase("fnp.sum_dtype_i32", lambda x: fnp.sum(x, dtype=np.int32),
           lambda x: np.sum(x, dtype=np.int32), _args([(2, 3)], (np.int64, np.bool_)), order=0),
    OpCase("fnp.sum_initial", lambda x: fnp.sum(x, axis=1, initial=1.5),
           lambda x: np.sum(x, axis=1, initial=1.5), _args([(2, 3)], (np.float64, np.float32))),
    OpCase("fnp.mean_dtype_f32", lambda x: fnp.mean(x, axis=-1, dtype=np.float32),
           lambda x: np.mean(x, axis=-1, dtype=np.float32),
           _args([(2, 3)], (np.float64, np.int64)), grad_args=_grad_args([(2, 3)])),
    OpCase("fnp.cumsum_dtype_f32", lambda x: fnp.cumsum(x, axis=1, dtype=np.float32),
           lambda x: np.cumsum(x, axis=1, dtype=np.float32),
           _args([(2, 3)], (np.float64, np.int64)), grad_args=_grad_args([(2, 3)])),
    OpCase("fnp.cumprod_dtype_i32", lambda x: fnp.cumprod(x, dtype=np.int32),
           lambda x: np.cumprod(x, dtype=np.int32), _args([(2, 3)], (np.int64,)), order=0),
    # float32 finite differences of a 6-factor product need a looser tolerance.
    OpCase("fnp.prod_dtype_f32", lambda x: fnp.prod(x, axis=(0, 1), dtype=np.float32),
           lambda x: np.prod(x, axis=(0, 1), dtype=np.float32),
           _args([(2, 3, 4)], (np.float64, np.int64)),
           grad_args=_grad_args([(2, 3, 4)], 0.5, 1.5), grad_rtol=5e-2, grad_atol=5e-2),
    OpCase("fnp.max_initial", lambda x: fnp.max(x, axis=0, initial=0.5),
           lambda x: np.max(x, axis=0, initial=0.5), _args([(2, 3), (0, 3)], (np.float64,)),
           grad_args=_grad_args([(2, 3)])),
    OpCase("fnp.argmax_kd", lambda x: fnp.argmax(x, axis=1, keepdims=True),
           lambda x: np.argmax(x, axis=1, keepdims=True), _args([(2, 3), (2, 3, 4)]), order=0),
    OpCase("fnp.argmin_flat_kd", lambda x: fnp.argmin(x, keepdims=True),
           lambda x: np.argmin(x, keepdims=True), _args([(2, 3)]), order=0),
    OpCase("fnp.max_list", lambda x: fnp.max([[1.0, 3.0], [2.0, 0.5]], axis=1),
           lambda x: np.max([[1.0, 3.0], [2.0, 0.5]], axis=1), [(1.0,)], order=0),
    OpCase("fnp.average", lambda x: fnp.average(x, axis=1), lambda x: np.average(x, axis=1),
           _args([(2, 3), (2, 3, 4)])),
    OpCase("fnp.average_weights", lambda x, w: fnp.average(x, axis=-1, weights=w),
           lambda x, w: np.average(x, axis=-1, weights=w),
           [(rand((2, 3), d), rand((2, 3), np.float64, 0.5, 2.0, seed=5))
            for d in (np.float64, np.float32, np.int64)]
           + [(rand((2, 3)), rand((3,), np.float64, 0.5, 2.0, seed=6))]),
    OpCase("fnp.average_weights_all", lambda x, w: fnp.average(x, weights=w),
           lambda x, w: np.average(x, weights=w),
           [(rand((2, 3)), rand((2, 3), np.float64, 0.5, 2.0, seed=7))]),
    OpCase("fnp.average_returned", lambda x, w: fnp.average(x, 0, w, returned=True),
           lambda x, w: np.average(x, 0, w, returned=True),
           [(rand((2, 3)), rand((2, 3), np.float64, 0.5, 2.0, seed=8))]),
    OpCase("fnp.quantile_qarray",
           lambda x: fnp.quantile(x, np.array([0.0, 0.25, 0.5, 1.0]), axis=1),
           lambda x: np.quantile(x, np.array([0.0, 0.25, 0.5, 1.0]), axis=1),
           _args([(2, 5), (2, 4, 3)], (np.float64, np.float32, np.int64))),
    OpCase("fnp.percentile_qlist_kd",
           lambda x: fnp.percentile(x, [10, 90], axis=0, keepdims=True),
           lambda x: np.percentile(x, [10, 90], axis=0, keepdims=True),
           _args([(5, 2)], (np.float64, np.float32))),
    OpCase("fnp.median_even", lambda x: fnp.median(x, axis=-1),
           lambda x: np.median(x, axis=-1), _args([(3, 4), (4,)])),
    OpCase("fnp.var_complex", lambda x: fnp.var(x, axis=0), lambda x: np.var(x, axis=0),
           [(rand((3, 2), np.complex128),), (rand((3,), np.complex64),)],
           grad_args=[(rand((3, 2)),)]),
    OpCase("fnp.sort_nan_last", lambda x: fnp.sort(x), np.sort,
           [(np.array([3.0, np.nan, -1.0, np.nan, 0.5]),)],
           grad_args=[(np.array([3.0, 0.25, -1.0, 2.0, 0.5]),)]),
]
