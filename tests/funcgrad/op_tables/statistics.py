"""Op table: differences, integration, NaN statistics, cov/corrcoef, interp, convolution,
searching, binning, partitioning and set routines (funcgrad.numpy._statistics / _setops).

Names start with ``stats_``. Functions whose output length depends on the values (``unique``
without ``size``, ``bincount`` without ``length``) run forward only (no jit/vmap). Where the
vmap driver perturbs inputs that must stay sorted, ``fn`` and ``ref`` sort them first.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from helpers import OpCase, dev, rand

import funcgrad.numpy as fnp

F64, F32, I64 = np.float64, np.float32, np.int64
CASES: list[OpCase] = []


def _quiet(fn: Any) -> Any:
    """NumPy reference with its all-NaN / degrees-of-freedom warnings silenced."""

    def ref(*args: Any) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return fn(*args)

    return ref


def _add(name: str, fn: Any, ref: Any, args: list, **kw: Any) -> None:
    CASES.append(OpCase(f"stats_{name}", fn, ref, args, **kw))


def _x(shape, dtypes=(F64, F32, I64), seed=0, low=-2.0, high=2.0):
    return [(np.asarray(rand(shape, d, low, high, seed=seed + k)),) for k, d in enumerate(dtypes)]


def _g(shape, seed=50, low=-2.0, high=2.0):
    return [(rand(shape, F64, low, high, seed=seed),)]


def _nans(shape, seed=0, dtype=F64, all_nan_row=True):
    x = rand(shape, dtype, seed=seed)
    x.flat[1] = np.nan
    if x.ndim == 2 and all_nan_row:
        x[-1, :] = np.nan  # (its result is NaN, which has no numerical derivative)
    return x


def _gn(shape, seed):
    return (_nans(shape, seed, all_nan_row=False),)


# --- diff, ediff1d -------------------------------------------------------------------------
_add("diff", lambda x: fnp.diff(x), lambda x: np.diff(x), _x((4,)) + _x((2, 5)),
     grad_args=_g((2, 5)))
_add("diff_n2_ax0", lambda x: fnp.diff(x, 2, axis=0), lambda x: np.diff(x, 2, axis=0),
     _x((4, 3)), grad_args=_g((4, 3)))
_add("diff_bool", lambda x: fnp.diff(x), lambda x: np.diff(x), [(rand((5,), bool),)])
_add("diff_prepend_append",
     lambda x, p: fnp.diff(x, axis=1, prepend=1.5, append=p),
     lambda x, p: np.diff(x, axis=1, prepend=1.5, append=p),
     [(rand((2, 3), F64), rand((2, 1), F64, seed=3)),
      (rand((2, 3), F32), rand((2, 1), F32, seed=3))])
_add("ediff1d", lambda x: fnp.ediff1d(x, to_begin=[-1, 0], to_end=9),
     lambda x: np.ediff1d(x, to_begin=[-1, 0], to_end=9), _x((2, 3)), grad_args=_g((2, 3)))

# --- gradient ------------------------------------------------------------------------------
_add("gradient", lambda f: fnp.gradient(f), lambda f: np.gradient(f), _x((5,)) + _x((3, 4)),
     grad_args=_g((3, 4)))
_add("gradient_edge2_spacing", lambda f: fnp.gradient(f, 0.5, 2.0, edge_order=2),
     lambda f: np.gradient(f, 0.5, 2.0, edge_order=2), _x((3, 4)), grad_args=_g((3, 4)))
_X = np.array([0.0, 0.4, 1.1, 1.5, 2.6])
_add("gradient_coords", lambda f, x: fnp.gradient(f, x, axis=-1, edge_order=2),
     lambda f, x: np.gradient(f, x, axis=-1, edge_order=2),
     [(rand((2, 5), F64), _X), (rand((5,), F32), _X)],
     grad_args=[(rand((2, 5), F64), _X)])
_add("gradient_coords_edge1", lambda f, x: fnp.gradient(f, x),
     lambda f, x: np.gradient(f, x), [(rand((5,), F64), _X)])

# --- trapezoid -----------------------------------------------------------------------------
_add("trapezoid", lambda y: fnp.trapezoid(y), lambda y: np.trapezoid(y), _x((4,)) + _x((2, 3)),
     grad_args=_g((2, 3)))
_add("trapezoid_x", lambda y, x: fnp.trapezoid(y, fnp.sort(x)),
     lambda y, x: np.trapezoid(y, np.sort(x)), [(rand((2, 4), F64), rand((4,), F64, seed=4)),
                                                (rand((4,), F32), rand((4,), F32, seed=4))])
_add("trapezoid_dx_ax0", lambda y: fnp.trapezoid(y, dx=0.3, axis=0),
     lambda y: np.trapezoid(y, dx=0.3, axis=0), _x((3, 2)), grad_args=_g((3, 2)))

# --- cumulative ----------------------------------------------------------------------------
_add("cumulative_sum", lambda x: fnp.cumulative_sum(x, include_initial=True),
     lambda x: np.cumulative_sum(x, include_initial=True), _x((4,)) + [(rand((3,), np.int32),)],
     grad_args=_g((4,)))
_add("cumulative_sum_ax1", lambda x: fnp.cumulative_sum(x, axis=1),
     lambda x: np.cumulative_sum(x, axis=1), _x((2, 3)), grad_args=_g((2, 3)))
_add("cumulative_prod", lambda x: fnp.cumulative_prod(x, axis=0, include_initial=True),
     lambda x: np.cumulative_prod(x, axis=0, include_initial=True), _x((3, 2)),
     grad_args=_g((3, 2)))
_add("nancumsum", lambda x: fnp.nancumsum(x, axis=1), lambda x: np.nancumsum(x, axis=1),
     [(_nans((2, 3)),), (_nans((2, 3), dtype=F32),), (rand((2, 3), I64),)],
     grad_args=[_gn((2, 3), 5)])
_add("nancumprod", lambda x: fnp.nancumprod(x), lambda x: np.nancumprod(x),
     [(_nans((2, 3)),), (_nans((4,), dtype=F32),)], grad_args=[_gn((2, 3), 5)])

# --- nanargmax / nanargmin, nanmedian, nanquantile -------------------------------------------
_NA = np.array([[1.0, np.nan, 3.0], [np.nan, -1.0, 0.5]])
_add("nanargmax", lambda x: fnp.nanargmax(x, axis=1), lambda x: np.nanargmax(x, axis=1),
     [(_NA,), (_NA.astype(F32),), (rand((2, 3), I64),)], order=0)
_add("nanargmin_flat", lambda x: fnp.nanargmin(x), lambda x: np.nanargmin(x),
     [(_NA,)], order=0)
_add("nanmedian", lambda x: fnp.nanmedian(x, axis=1), _quiet(lambda x: np.nanmedian(x, axis=1)),
     [(_nans((3, 4)),), (_nans((3, 5), dtype=F32),), (rand((2, 3), I64),)],
     grad_args=[_gn((3, 4), 7), _gn((3, 5), 8)])
_add("nanmedian_all_kd", lambda x: fnp.nanmedian(x, keepdims=True),
     _quiet(lambda x: np.nanmedian(x, keepdims=True)), [(_nans((2, 3)),)])
for _q, _lab in ((0.3, "py"), (np.array([0.0, 0.25, 1.0]), "arr")):
    _add(f"nanquantile_{_lab}", lambda x, q=_q: fnp.nanquantile(x, q, axis=-1),
         _quiet(lambda x, q=_q: np.nanquantile(x, q, axis=-1)),
         [(_nans((3, 4)),), (_nans((3, 4), dtype=F32),), (rand((4,), I64),)],
         grad_args=[_gn((3, 4), 9)])
_add("nanpercentile_kd", lambda x: fnp.nanpercentile(x, [10, 90], axis=0, keepdims=True),
     _quiet(lambda x: np.nanpercentile(x, [10, 90], axis=0, keepdims=True)),
     [(_nans((3, 4)),)], grad_args=[_gn((3, 4), 11)])

# --- cov, corrcoef -------------------------------------------------------------------------
_add("cov", lambda m: fnp.cov(m), lambda m: np.cov(m), _x((3, 5)) + _x((5,)),
     grad_args=_g((3, 5)))
_add("cov_y_cols_bias", lambda m, y: fnp.cov(m, y, rowvar=False, bias=True),
     lambda m, y: np.cov(m, y, rowvar=False, bias=True),
     [(rand((5, 2), F64), rand((5, 2), F64, seed=2)), (rand((5, 2), F32), rand((5,), F32))])
_FW = np.array([1, 2, 1, 3, 1])
_add("cov_weights", lambda m, aw: fnp.cov(m, fweights=dev(_FW), aweights=aw),
     lambda m, aw: np.cov(m, fweights=_FW, aweights=aw),
     [(rand((2, 5), F64), rand((5,), F64, 0.5, 1.5, seed=3))])
_add("corrcoef", lambda x: fnp.corrcoef(x), lambda x: np.corrcoef(x), _x((3, 5)),
     grad_args=_g((3, 5)))
_add("corrcoef_xy", lambda x, y: fnp.corrcoef(x, y), lambda x, y: np.corrcoef(x, y),
     [(rand((5,), F64), rand((5,), F64, seed=1))])

# --- interp --------------------------------------------------------------------------------
_XP = np.array([-1.5, -0.2, 0.7, 1.9])
_FP = np.array([0.3, -1.0, 2.0, 0.5])
_XQ = np.array([[-2.5, -1.0, 0.1], [0.9, 1.7, 3.0]])


def _interp(x, xp, fp):
    return fnp.interp(x, fnp.sort(xp), fp)


def _np_interp(x, xp, fp):
    return np.interp(x, np.sort(xp), fp)


_add("interp", _interp, _np_interp,
     [(_XQ, _XP, _FP), (_XQ.astype(F32), _XP.astype(F32), _FP.astype(F32)), (0.25, _XP, _FP),
      (_XQ, _XP, _FP + 1j * _FP[::-1])])
_add("interp_left_right", lambda x, fp: fnp.interp(x, dev(_XP), fp, left=-9.0, right=7.0),
     lambda x, fp: np.interp(x, _XP, fp, left=-9.0, right=7.0), [(_XQ, _FP)])
_add("interp_period", lambda x, fp: fnp.interp(x, dev(_XP), fp, period=2.5),
     lambda x, fp: np.interp(x, _XP, fp, period=2.5), [(_XQ[0], _FP)])

# --- convolve, correlate -------------------------------------------------------------------
for _mode in ("full", "same", "valid"):
    _add(f"convolve_{_mode}", lambda a, v, m=_mode: fnp.convolve(a, v, m),
         lambda a, v, m=_mode: np.convolve(a, v, m),
         [(rand((5,), F64), rand((2,), F64, seed=1)), (rand((3,), F32), rand((4,), F32, seed=2)),
          (rand((4,), I64), rand((3,), I64, seed=3)),
          (rand((4,), F64), rand((3,), F64) + 1j * rand((3,), F64, seed=4))])
    _add(f"correlate_{_mode}", lambda a, v, m=_mode: fnp.correlate(a, v, m),
         lambda a, v, m=_mode: np.correlate(a, v, m),
         [(rand((5,), F64), rand((2,), F64, seed=1)), (rand((3,), F32), rand((4,), F32, seed=2)),
          (rand((4,), F64) + 1j * rand((4,), F64, seed=5),
           rand((3,), F64) + 1j * rand((3,), F64, seed=4))])
_add("convolve_long_kernel", lambda a, v: fnp.convolve(a, v, "same"),
     lambda a, v: np.convolve(a, v, "same"), [(rand((40,), F64), rand((36,), F64, seed=1))],
     vmap=False)

# --- searchsorted, digitize ----------------------------------------------------------------
_A = np.array([-1.0, 0.0, 0.0, 1.0, 2.5])
_V = np.array([[0.0, -3.0, 2.5], [0.5, 9.0, -1.0]])
for _side in ("left", "right"):
    _add(f"searchsorted_{_side}", lambda a, v, s=_side: fnp.searchsorted(fnp.sort(a), v, s),
         lambda a, v, s=_side: np.searchsorted(np.sort(a), v, s),
         [(_A, _V), (_A.astype(F32), _V[0].astype(F32)), (_A, 0.5), (np.array([1, 3, 5]), 3)],
         order=0)
_add("searchsorted_sorter", lambda v: fnp.searchsorted(dev(_A[::-1].copy()), v,
                                                       sorter=dev(np.arange(5)[::-1].copy())),
     lambda v: np.searchsorted(_A[::-1], v, sorter=np.arange(5)[::-1]), [(_V,)], order=0)
_add("digitize", lambda x: fnp.digitize(x, dev(np.array([0.0, 1.0, 2.0]))),
     lambda x: np.digitize(x, np.array([0.0, 1.0, 2.0])), _x((2, 3)), order=0)
_add("digitize_right_decreasing", lambda x: fnp.digitize(x, dev(np.array([2.0, 1.0, 0.0])), True),
     lambda x: np.digitize(x, np.array([2.0, 1.0, 0.0]), True), _x((5,)), order=0)

# --- bincount, histogram -------------------------------------------------------------------
_XI = np.array([0, 3, 1, 1, 5])
_add("bincount", lambda x: fnp.bincount(x), lambda x: np.bincount(x), [(_XI,)], vmap=False,
     jit=False)
_add("bincount_weights", lambda w: fnp.bincount(dev(_XI), w, minlength=8),
     lambda w: np.bincount(_XI, w, minlength=8), [(rand((5,), F64),), (rand((5,), F32),)])
_add("bincount_length", lambda x, w: fnp.bincount(x, w, length=4),
     lambda x, w: np.bincount(x, w, minlength=4)[:4] * 1.0,
     [(np.array([0, 1, 1, 3]), rand((4,), F64))])
_D = rand((20,), F64, seed=3)
# (the edges follow a's min and max, so they have a derivative; the counts have none)
_add("histogram", lambda a: fnp.histogram(a, 4), lambda a: np.histogram(a, 4),
     [(_D,), (_D.astype(F32),), (np.round(_D * 3).astype(I64),)], grad_args=[(_D,)])
_add("histogram_range_density", lambda a: fnp.histogram(a, 3, range=(-1, 1), density=True),
     lambda a: np.histogram(a, 3, range=(-1, 1), density=True), [(_D,)], order=0)
_EDGES = np.array([-2.0, -0.5, 0.0, 0.5, 2.0])
_add("histogram_edges_weights", lambda a, w: fnp.histogram(a, dev(_EDGES), weights=w),
     lambda a, w: np.histogram(a, _EDGES, weights=w), [(_D, rand((20,), F64, seed=8))],
     diff_argnums=(1,))
_add("histogram_bin_edges", lambda a: fnp.histogram_bin_edges(a, 5),
     lambda a: np.histogram_bin_edges(a, 5), [(_D,), (_D.astype(F32),)])

# --- partition, argpartition, lexsort --------------------------------------------------------
_add("partition", lambda x: fnp.partition(x, 1, axis=0), lambda x: np.sort(x, axis=0),
     _x((3, 4)), grad_args=_g((3, 4)))
_add("partition_none", lambda x: fnp.partition(x, [0, 2], axis=None),
     lambda x: np.sort(x, axis=None), _x((2, 3)))
_add("argpartition", lambda x: fnp.argpartition(x, -1),
     lambda x: np.argsort(x, kind="stable"), _x((2, 5)), order=0)
_K1 = np.array([1, 0, 2, 1, 1, 0])
_add("lexsort", lambda a: fnp.lexsort((a, dev(_K1))), lambda a: np.lexsort((a, _K1)),
     [(rand((6,), F64),), (np.array([3, 1, 2, 2, 0, 1]),)], order=0)
_add("lexsort_2d_axis0", lambda a, b: fnp.lexsort((a, b), axis=0),
     lambda a, b: np.lexsort((a, b), axis=0),
     [(rand((4, 2), F64), (rand((4, 2), F64, seed=3) > 0))], order=0)

# --- unique and sets -----------------------------------------------------------------------
_U = np.array([3.0, 1.0, np.nan, 3.0, 2.0, np.nan, 1.0])
_DISTINCT = np.array([3.0, 1.0, -2.0, 0.5])  # (ties are not smooth: grads on distinct values)
_UI = np.array([[2, 5, 2], [0, 5, 1]])


def _tup(r):
    return tuple(r) if isinstance(r, tuple) else r


_add("unique_all_returns",
     lambda x: fnp.unique(x, return_index=True, return_inverse=True, return_counts=True),
     lambda x: np.unique(x, return_index=True, return_inverse=True, return_counts=True),
     [(_U,), (_UI,), (_U.astype(F32),)], vmap=False, jit=False, order=1,
     grad_args=[(np.array([3.0, 1.0, -2.0, 0.5]),)])  # (distinct: ties are not smooth)
_add("unique_equal_nan_false", lambda x: fnp.unique(x, return_counts=True, equal_nan=False),
     lambda x: np.unique(x, return_counts=True, equal_nan=False), [(_U,)], vmap=False,
     jit=False, grad_args=[(_DISTINCT,)])
_add("unique_axis0", lambda x: fnp.unique(x, return_inverse=True, axis=0),
     lambda x: np.unique(x, return_inverse=True, axis=0),
     [(np.array([[1, 0], [0, 2], [1, 0]]),)], vmap=False, jit=False)
_add("unique_size",
     lambda x: fnp.unique(x, return_index=True, return_counts=True, size=6, fill_value=-1.0),
     lambda x: tuple(np.concatenate([r, np.full(6 - r.size, f, r.dtype)]) for r, f in zip(
         *(lambda u: (u, (-1.0, u[1][0], 0)))(  # JAX pads the indices with the first
             np.unique(x, return_index=True, return_counts=True)))),
     [(np.array([3.0, 1.0, 3.0, 2.0]),)], order=1, grad_args=[(np.array([3.0, 1.0, 2.0]),)])
_add("unique_values", lambda x: fnp.unique_values(x), lambda x: np.sort(np.unique_values(x)),
     [(_U,), (_UI,)], vmap=False, jit=False, grad_args=[(_DISTINCT,)])
_add("unique_counts", lambda x: _tup(fnp.unique_counts(x)), lambda x: _tup(np.unique_counts(x)),
     [(_UI,)], vmap=False, jit=False)
_add("unique_inverse", lambda x: _tup(fnp.unique_inverse(x)),
     lambda x: _tup(np.unique_inverse(x)), [(_UI,)], vmap=False, jit=False)
_add("unique_all", lambda x: _tup(fnp.unique_all(x)), lambda x: _tup(np.unique_all(x)),
     [(_UI,), (np.array([2.0, 1.0, 2.0]),)], vmap=False, jit=False, grad_args=[(_DISTINCT,)])
_T = np.array([1.0, 3.0, np.nan, 4.0])
_add("isin", lambda x: fnp.isin(x, dev(_T)), lambda x: np.isin(x, _T),
     [(np.array([[1.0, 2.0], [np.nan, 4.0]]),), (np.array([1, 2, 3]),)], order=0)
_add("isin_invert_traced_test", lambda x, t: fnp.isin(x, t, invert=True),
     lambda x, t: np.isin(x, t, invert=True),
     [(np.array([1.0, 2.0, 5.0]), np.array([[2.0, 7.0], [5.0, 0.0]]))], order=0)
_S1 = np.array([1, 3, 4, 3, 7, 9])
_S2 = np.array([3, 1, 2, 1, 9, 10])
_add("intersect1d", lambda a, b: fnp.intersect1d(a, b), lambda a, b: np.intersect1d(a, b),
     [(_S1, _S2), (_S1.astype(F64), _S2)], vmap=False, jit=False, diff_argnums=())
_add("intersect1d_indices", lambda a, b: fnp.intersect1d(a, b, return_indices=True),
     lambda a, b: np.intersect1d(a, b, return_indices=True), [(_S1, _S2), (_S2, _S1)],
     vmap=False, jit=False)
_add("intersect1d_size", lambda a, b: fnp.intersect1d(a, b, size=4, fill_value=0),
     lambda a, b: np.array([1, 3, 9, 0]), [(_S1, _S2)])
_add("union1d", lambda a, b: fnp.union1d(a, b), lambda a, b: np.union1d(a, b),
     [(_S1, _S2), (_S1.astype(F32), _S2.astype(F32))], vmap=False, jit=False,
     grad_args=[(_DISTINCT, _DISTINCT + 10)])
_add("setdiff1d", lambda a, b: fnp.setdiff1d(a, b), lambda a, b: np.setdiff1d(a, b),
     [(_S1, _S2)], vmap=False, jit=False)
_add("setdiff1d_assume_unique", lambda a, b: fnp.setdiff1d(a, b, True),
     lambda a, b: np.setdiff1d(a, b, True), [(np.array([5, 1, 3, 9]), _S2)], vmap=False,
     jit=False)
_add("setxor1d", lambda a, b: fnp.setxor1d(a, b), lambda a, b: np.setxor1d(a, b),
     [(_S1, _S2), (_S1.astype(F64), _S2.astype(F64))], vmap=False, jit=False,
     grad_args=[(_DISTINCT, _DISTINCT + 10)])
_add("setxor1d_size", lambda a, b: fnp.setxor1d(a, b, size=5),
     lambda a, b: np.array([2, 4, 7, 10, 2]), [(_S1, _S2)])

# --- nanquantile / nanpercentile: non-linear methods (per-slice NaN counts; the all-NaN rows
# warn as in NumPy, silenced)
_add("nanquantile_lower_kd", _quiet(lambda x: fnp.nanquantile(x, [0.2, 0.7], axis=1,
                                                              method="lower", keepdims=True)),
     _quiet(lambda x: np.nanquantile(x, [0.2, 0.7], axis=1, method="lower", keepdims=True)),
     [(_nans((3, 4)),), (_nans((3, 4), dtype=F32),), (rand((2, 3), I64),)],
     grad_args=[_gn((3, 4), 13)])
_add("nanpercentile_hazen", _quiet(lambda x: fnp.nanpercentile(x, 35.0, axis=0, method="hazen")),
     _quiet(lambda x: np.nanpercentile(x, 35.0, axis=0, method="hazen")),
     [(_nans((4, 3)).T.copy(),), (_nans((3, 4), dtype=F32),)], grad_args=[_gn((3, 4), 14)])
_NQW = np.array([[1.0, 2.0, 0.0, 1.0], [0.5, 1.0, 1.0, 3.0], [1.0, 1.0, 1.0, 1.0]])
_add("nanquantile_weighted", _quiet(lambda x: fnp.nanquantile(
    x, [0.3, 0.8], axis=1, weights=dev(_NQW), method="inverted_cdf")),
     _quiet(lambda x: np.nanquantile(x, [0.3, 0.8], axis=1, weights=_NQW,
                                     method="inverted_cdf")),
     [(_nans((3, 4)),)], grad_args=[_gn((3, 4), 15)])
