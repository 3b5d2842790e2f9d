"""Op table: NumPy options of funcgrad.numpy functions beyond the defaults.

Every quantile ``method`` (and ``weights=`` with 'inverted_cdf'), ``where=`` masks of the
reductions and ``mean=`` of ``var``, ``order='F'`` reshapes, the statistic / ramp / odd
reflection modes of ``pad``, and the ufunc keywords ``dtype=`` / ``casting=`` /
``signature=``. Derivatives are checked on float64 values without ties.
"""

from __future__ import annotations

import numpy as np
from helpers import OpCase, rand

import funcgrad.numpy as fnp

CASES: list[OpCase] = []

_METHODS = (
    "inverted_cdf", "averaged_inverted_cdf", "closest_observation",
    "interpolated_inverted_cdf", "hazen", "weibull", "linear", "median_unbiased",
    "normal_unbiased", "lower", "higher", "midpoint", "nearest",
)


def _distinct(shape, seed=0, dtype=np.float64):
    """Values without ties (so sorting, and with it the derivative, is unambiguous)."""
    n = int(np.prod(shape))
    x = np.random.default_rng(seed).permutation(n) * 0.37 - 1.1
    return x.reshape(shape).astype(dtype)


_Q = np.array([0.0, 0.12, 0.5, 0.77, 1.0])
for _m in _METHODS:
    CASES.append(OpCase(
        f"options.quantile_{_m}",
        lambda x, m=_m: fnp.quantile(x, _Q, axis=-1, method=m),
        lambda x, m=_m: np.quantile(x, _Q, axis=-1, method=m),
        [(_distinct((7,)),), (_distinct((2, 5), 1),), (_distinct((3, 4), 2, np.float32),),
         (np.array([[3, 1, 4, 1, 5], [9, 2, 6, 5, 3]]),)],
        grad_args=[(_distinct((2, 6), 3),)],
    ))
CASES.append(OpCase(
    "options.percentile_hazen_keepdims_axes",
    lambda x: fnp.percentile(x, 30.0, axis=(0, 2), method="hazen", keepdims=True),
    lambda x: np.percentile(x, 30.0, axis=(0, 2), method="hazen", keepdims=True),
    [(_distinct((2, 3, 4), 4),), (_distinct((2, 3, 4), 5, np.float32),)],
))
CASES.append(OpCase(
    "options.quantile_weighted",
    lambda x, w: fnp.quantile(x, [0.1, 0.5, 0.9], axis=1, weights=w, method="inverted_cdf"),
    lambda x, w: np.quantile(x, [0.1, 0.5, 0.9], axis=1, weights=w, method="inverted_cdf"),
    # (weights well above 0: the vmap driver perturbs them; zero weights: test_options.py)
    [(_distinct((3, 5), 6), np.array([1.0, 0.6, 2.0, 0.5, 3.0])),
     (_distinct((2, 4), 7), rand((2, 4), low=0.1, high=2.0)),
     (np.array([[4, 1, 3], [2, 2, 7]]), np.array([[1, 1, 1], [0, 2, 1]]))],
    diff_argnums=(0,),
))

# where= masks (passed as an argument so vmap batches them too) and var(mean=)
_X = _distinct((3, 4), 8)
_M = np.array([[True, False, True, True], [False, True, True, False],
               [True, True, True, True]])
for _name, _kw in [("sum", {}), ("prod", {}), ("mean", {}), ("var", {"ddof": 1}),
                   ("std", {}), ("max", {"initial": -5.0}), ("min", {"initial": 5.0}),
                   ("nansum", {}), ("nanmean", {}), ("nanvar", {}), ("nanmax", {"initial": 0.0})]:
    CASES.append(OpCase(
        f"options.where_{_name}",
        lambda x, m, n=_name, k=_kw: getattr(fnp, n)(x, axis=1, where=m, **k),
        lambda x, m, n=_name, k=_kw: getattr(np, n)(x, axis=1, where=m, **k),
        [(_X, _M), (_X.astype(np.float32), _M[:1])],
        diff_argnums=(0,),
        order=1 if _name == "std" else 2,
    ))
CASES.append(OpCase(
    "options.any_all_where",
    lambda x, m: (fnp.any(x, axis=0, where=m), fnp.all(x, where=m)),
    lambda x, m: (np.any(x, axis=0, where=m), np.all(x, where=m)),
    [(np.array([[0, 2, 0], [1, 0, 0]]), np.array([[True, False, True], [False, False, True]]))],
    order=0,
))
CASES.append(OpCase(
    "options.var_given_mean",
    lambda x, m: fnp.var(x, axis=0, mean=m),
    lambda x, m: np.var(x, axis=0, mean=m),
    [(_X, np.mean(_X, axis=0, keepdims=True)), (_X, rand((1, 4), seed=3))],
))

# order='F' reshapes and ravels
CASES.append(OpCase(
    "options.reshape_F",
    lambda x: fnp.reshape(x, (4, -1), order="F"),
    lambda x: np.reshape(x, (4, -1), order="F"),
    [(rand((2, 6)),), (rand((2, 2, 3), np.float32),), (np.arange(12).reshape(3, 4),)],
))
CASES.append(OpCase(
    "options.ravel_F",
    lambda x: fnp.ravel(x, order="F"),
    lambda x: np.ravel(x, order="F"),
    [(rand((2, 3)),), (rand((2, 3, 2)),), (rand(()),)],
))

# pad modes
_PAD_W = ((2, 3), (1, 4))
for _mode, _kw in [("linear_ramp", {"end_values": ((1.5, -2.0), (0.5, 3.0))}),
                   ("maximum", {}), ("minimum", {"stat_length": 2}),
                   ("mean", {"stat_length": ((1, 2), (3, 1))}), ("median", {}),
                   ("reflect", {"reflect_type": "odd"}), ("symmetric", {"reflect_type": "odd"})]:
    CASES.append(OpCase(
        f"options.pad_{_mode}" + ("_odd" if "reflect_type" in _kw else ""),
        lambda x, mode=_mode, k=_kw: fnp.pad(x, _PAD_W, mode=mode, **k),
        lambda x, mode=_mode, k=_kw: np.pad(x, _PAD_W, mode=mode, **k),
        [(_distinct((3, 4), 9),), (_distinct((3, 2), 10, np.float32),),
         (np.arange(12).reshape(3, 4) % 5,)],
        grad_args=[(_distinct((3, 4), 11),)],
    ))
CASES.append(OpCase(
    "options.pad_linear_ramp_traced_end",
    lambda x, e: fnp.pad(x, 3, mode="linear_ramp", end_values=e),
    lambda x, e: np.pad(x, 3, mode="linear_ramp", end_values=e),
    [(rand((4,)), 2.5)],
    vmap=False,
))
CASES.append(OpCase(
    "options.pad_reflect_odd_wide",
    lambda x: fnp.pad(x, (7, 5), mode="reflect", reflect_type="odd"),
    lambda x: np.pad(x, (7, 5), mode="reflect", reflect_type="odd"),
    [(rand((3,)),), (rand((2,)),)],
))

# ufunc keywords
CASES.append(OpCase(
    "options.ufunc_dtype_casting",
    lambda x, y: (fnp.add(x, y, dtype=np.float32), fnp.multiply(x, y, casting="unsafe",
                                                               dtype=np.float32),
                  fnp.subtract(x, 2.0, signature="ff->f"), fnp.sqrt(x * x, dtype=np.float32),
                  fnp.add(x, y, order="F", subok=False, casting="same_kind")),
    lambda x, y: (np.add(x, y, dtype=np.float32), np.multiply(x, y, casting="unsafe",
                                                             dtype=np.float32),
                  np.subtract(x, 2.0, signature="ff->f"), np.sqrt(x * x, dtype=np.float32),
                  np.add(x, y, order="F", subok=False, casting="same_kind")),
    [(rand((2, 3)), rand((2, 3), seed=1)), (rand((3,)), rand((2, 3), seed=2))],
    grad_args=[],  # (float32 results: derivatives are checked in float64 below)
))
CASES.append(OpCase(
    "options.ufunc_dtype_casting_f64",
    lambda x, y: (fnp.add(x, y, dtype=np.float64, casting="no"),
                  fnp.multiply(x, y, signature="dd->d"), fnp.sin(x, signature=(None, "f8"))),
    lambda x, y: (np.add(x, y, dtype=np.float64, casting="no"),
                  np.multiply(x, y, signature="dd->d"), np.sin(x, signature=(None, "f8"))),
    [(rand((2, 3)), rand((2, 3), seed=1)), (rand((3,)), rand((2, 3), seed=2))],
))
