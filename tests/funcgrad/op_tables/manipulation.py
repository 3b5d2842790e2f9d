"""Op table: funcgrad.numpy array manipulation, construction, products, windows and
polynomials (funcgrad/numpy/_manipulation.py and _polynomial.py).

Static arguments (positions, axes, modes, shapes) are baked into the lambdas, so the drivers
trace only the array arguments. Names start with ``manip.`` (select with ``-k manip``).
"""

from __future__ import annotations

import numpy as np
from helpers import OpCase, rand

import funcgrad.numpy as fnp

F64, F32, I64 = np.float64, np.float32, np.int64

CASES: list[OpCase] = []


def _case(name: str, fn, ref, args, **kw) -> None:
    CASES.append(OpCase(f"manip.{name}", fn, ref, args, **kw))


def _r(shape, dtype=F64, seed=0, low=-2.0, high=2.0):
    return np.asarray(rand(shape, dtype, low, high, seed=seed))


X23, X34, X3 = _r((2, 3)), _r((3, 4), seed=1), _r((3,), seed=2)

# --- joining / inserting / deleting ------------------------------------------------------------
_case("append_flat", fnp.append, np.append,
      [(X23, X3), (_r((2, 3), F32), 1.5), (_r((2,), I64), _r((3,), F32))])
_case("append_axis0", lambda a, b: fnp.append(a, b, axis=0),
      lambda a, b: np.append(a, b, axis=0), [(X23, _r((1, 3), seed=3))])
for label, obj, vals, ax in [
    ("int", 1, 9.5, None), ("neg", -1, 2.0, None), ("end", 6, 2.0, None),
    ("row", 1, "v4", 0), ("col_list", [1], "v3c", 1), ("multi", [0, 2, 2], "v3", 1),
    ("slice", slice(0, 4, 2), 5.0, 1), ("unsorted", [3, 1, 1], "v3", None),
]:
    def _vals(v, x):
        return {"v4": x[0] * 3.0, "v3": [1.0, 2.0, 3.0],
                "v3c": x[:, :1] * 2.0}.get(v, v) if isinstance(v, str) else v
    _case(f"insert_{label}",
          lambda x, obj=obj, vals=vals, ax=ax: fnp.insert(x, obj, _vals(vals, x), ax),
          lambda x, obj=obj, vals=vals, ax=ax: np.insert(x, obj, _vals(vals, x), ax),
          [(X34,), (_r((3, 4), I64),)])
_case("insert_values_traced", lambda x, v: fnp.insert(x, [0, 2], v, axis=1),
      lambda x, v: np.insert(x, [0, 2], v, axis=1), [(X23, _r((2, 2), seed=4))])
for label, obj, ax in [("int", 1, None), ("list", [0, -1], 0), ("slice", slice(None, None, 2), 1),
                       ("mask", np.array([True, False, True, False]), 1), ("empty", [], None)]:
    _case(f"delete_{label}", lambda x, obj=obj, ax=ax: fnp.delete(x, obj, ax),
          lambda x, obj=obj, ax=ax: np.delete(x, obj, ax), [(X34,), (_r((3, 4), I64),)])
_case("block", lambda a, b, c: fnp.block([[a, b], [c]]), lambda a, b, c: np.block([[a, b], [c]]),
      [(_r((2, 2)), _r((2, 1), seed=5), _r((1, 3), seed=6))])
_case("block_1d", lambda a, b: fnp.block([a, 2.0, b]), lambda a, b: np.block([a, 2.0, b]),
      [(X3, _r((2,), seed=7))])
_case("resize", lambda x: fnp.resize(x, (4, 5)), lambda x: np.resize(x, (4, 5)),
      [(X23,), (_r((2, 3), I64),)])
_case("resize_shrink", lambda x: fnp.resize(x, 4), lambda x: np.resize(x, 4), [(X23,)])
_case("rollaxis", lambda x: fnp.rollaxis(x, 2, 1), lambda x: np.rollaxis(x, 2, 1),
      [(_r((2, 3, 4)),)])


def _np_row_stack(a, b):
    return np.vstack([a, b])  # row_stack's definition (NumPy 2.5 removed the alias)


_case("row_stack", lambda a, b: fnp.row_stack([a, b]), _np_row_stack, [(X3, _r((3,), seed=8))])
_case("unstack", lambda x: fnp.unstack(x, axis=1), lambda x: np.unstack(x, axis=1), [(X23,)])

# --- choosing and functional writes -----------------------------------------------------------
A = np.array([[0, 1, 2], [2, 1, 0]])
_case("choose", lambda c0, c1, c2: fnp.choose(A, [c0, c1, c2]),
      lambda c0, c1, c2: np.choose(A, [c0, c1, c2]),
      [(X23, _r((3,), seed=9), _r((2, 1), seed=10)), (_r((2, 3), F32), _r((3,), F32), 1.5)])
_case("choose_wrap", lambda c0, c1: fnp.choose(A + 1, [c0, c1], mode="wrap"),
      lambda c0, c1: np.choose(A + 1, [c0, c1], mode="wrap"), [(X23, _r((2, 3), seed=11))])
_case("choose_clip", lambda c0, c1: fnp.choose(A - 1, [c0, c1], mode="clip"),
      lambda c0, c1: np.choose(A - 1, [c0, c1], mode="clip"), [(X23, _r((2, 3), seed=12))])


def _np_inplace(f):
    def ref(x, *rest):
        out = np.array(x, copy=True)
        f(out, *rest)
        return out
    return ref


_case("fill_diagonal", lambda x, v: fnp.fill_diagonal(x, v, inplace=False),
      _np_inplace(np.fill_diagonal), [(X34, 2.5), (X34, _r((2,), seed=13)), (_r((3, 3, 3)), 1.0)])
_case("fill_diagonal_wrap", lambda x: fnp.fill_diagonal(x, 7.0, wrap=True, inplace=False),
      _np_inplace(lambda o: np.fill_diagonal(o, 7.0, wrap=True)), [(_r((7, 2)),)])
IND = np.array([[0], [2], [1]])
_case("put_along_axis", lambda x, v: fnp.put_along_axis(x, IND, v, 1, inplace=False),
      _np_inplace(lambda o, v: np.put_along_axis(o, IND, v, 1)),
      [(X34, _r((3, 1), seed=14)), (X34, 0.5)])
_case("put", lambda x, v: fnp.put(x, [0, -1, 5], v, inplace=False),
      _np_inplace(lambda o, v: np.put(o, [0, -1, 5], v)), [(X34, _r((3,), seed=15)), (X34, 2.0)])
_case("put_wrap", lambda x, v: fnp.put(x, [13, -20], v, mode="wrap", inplace=False),
      _np_inplace(lambda o, v: np.put(o, [13, -20], v, mode="wrap")), [(X34, _r((2,), seed=16))])
MASK = np.arange(12).reshape(3, 4) % 3 == 0
_case("place", lambda x, v: fnp.place(x, MASK, v, inplace=False),
      _np_inplace(lambda o, v: np.place(o, MASK, v)), [(X34, _r((3,), seed=17))])

# --- index arithmetic --------------------------------------------------------------------------
_case("unravel_index", lambda i: fnp.unravel_index(i, (7, 6)),
      lambda i: np.unravel_index(i, (7, 6)), [(np.array([22, 41, 37]),)], order=0)
_case("unravel_index_F", lambda i: fnp.unravel_index(i, (7, 6), order="F"),
      lambda i: np.unravel_index(i, (7, 6), order="F"), [(np.array([[31], [41]]),)], order=0)
_case("ravel_multi_index", lambda i, j: fnp.ravel_multi_index((i, j), (7, 6)),
      lambda i, j: np.ravel_multi_index((i, j), (7, 6)),
      [(np.array([3, 6, 6]), np.array([4, 5, 1]))], order=0)
_case("ravel_multi_index_modes",
      lambda i, j: fnp.ravel_multi_index((i, j), (4, 4), mode=("clip", "wrap")),
      lambda i, j: np.ravel_multi_index((i, j), (4, 4), mode=("clip", "wrap")),
      [(np.array([3, 6, -6]), np.array([4, 5, -1]))], order=0)
_case("ix_", lambda i, j: fnp.ix_(i, j), lambda i, j: np.ix_(i, j),
      [(np.array([0, 2]), np.array([1, 3, 4]))], order=0)
_case("fromfunction", lambda s: fnp.fromfunction(lambda i, j: s * i + j, (2, 3)),
      lambda s: np.fromfunction(lambda i, j: s * i + j, (2, 3)), [(1.5,)], vmap=False)

# --- vander, products --------------------------------------------------------------------------
_case("vander", fnp.vander, np.vander,
      [(X3,), (_r((4,), F32),), (_r((3,), I64),), (np.array([0.0, 1.5, -1.0]),)])
_case("vander_inc", lambda x: fnp.vander(x, 5, increasing=True),
      lambda x: np.vander(x, 5, increasing=True), [(X3,)])
_case("cross", fnp.cross, np.cross,
      [(_r((2, 3)), _r((3,), seed=18)), (_r((3,), I64), _r((4, 3), I64)),
       (_r((2, 3), F32), _r((2, 3), F32, seed=19))])
_case("cross_axes", lambda a, b: fnp.cross(a, b, axisa=0, axisb=1, axisc=0),
      lambda a, b: np.cross(a, b, axisa=0, axisb=1, axisc=0),
      [(_r((3, 2)), _r((2, 3), seed=20))])


def _np_cross(a, b):
    # NumPy < 2.5's cross of 2-vectors (removed in 2.5): the z component of the 3-D product,
    # a 2-vector meeting a 3-vector as one with z = 0.
    if a.shape[-1] == 3 and b.shape[-1] == 3:
        return np.cross(a, b)
    if a.shape[-1] == 2 and b.shape[-1] == 2:
        return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    pad = [(0, 0)] * (max(a.ndim, b.ndim) - 1) + [(0, 1)]
    a3 = np.pad(a, pad[-a.ndim:]) if a.shape[-1] == 2 else a
    b3 = np.pad(b, pad[-b.ndim:]) if b.shape[-1] == 2 else b
    return np.cross(a3, b3)


_case("cross_2d", fnp.cross, _np_cross,
      [(_r((4, 2)), _r((2,), seed=21)), (_r((2,)), _r((3, 3), seed=22)),
       (_r((2, 3)), _r((2,), seed=23))])
_case("matvec", fnp.matvec, np.matvec,
      [(_r((2, 3, 4)), _r((4,), seed=24)), (_r((3, 2), I64), _r((2, 1, 2), F32))])
_case("vecmat", fnp.vecmat, np.vecmat,
      [(_r((3,)), _r((2, 3, 4), seed=25)),
       (_r((3,), np.complex128), _r((3, 2), np.complex128, seed=26))])
_case("vecdot", fnp.vecdot, np.vecdot,
      [(_r((2, 3)), _r((3,), seed=27)),
       (_r((3,), np.complex128), _r((2, 3), np.complex128, seed=28))])

# --- applying functions ------------------------------------------------------------------------
_case("apply_along_axis", lambda x: fnp.apply_along_axis(lambda v: v * fnp.sum(v), 0, x),
      lambda x: np.apply_along_axis(lambda v: v * np.sum(v), 0, x), [(X23,), (_r((2, 3, 2)),)])
_case("apply_along_axis_outer", lambda x: fnp.apply_along_axis(lambda v: fnp.outer(v, v), 1, x),
      lambda x: np.apply_along_axis(lambda v: np.outer(v, v), 1, x), [(_r((2, 3, 2)),)])
_case("apply_along_axis_scalar", lambda x: fnp.apply_along_axis(fnp.prod, -1, x),
      lambda x: np.apply_along_axis(np.prod, -1, x), [(X23,)])
_case("apply_over_axes", lambda x: fnp.apply_over_axes(fnp.sum, x, [0, 2]),
      lambda x: np.apply_over_axes(np.sum, x, [0, 2]), [(_r((2, 3, 4)),)])


def _pw(mod):
    def f(x):
        return mod.piecewise(x, [x < -0.5, x > 0.5], [lambda v: v * v, lambda v: 3.0 * v, 0.25])
    return f


XPW = np.array([-1.7, -0.9, -0.2, 0.1, 0.8, 1.9])
_case("piecewise", _pw(fnp), _pw(np), [(XPW,), (np.float32(XPW),)])
_case("trim_zeros", lambda x: fnp.trim_zeros(fnp.where(fnp.abs(x) > 0.5, x, 0.0)),
      lambda x: np.trim_zeros(np.where(np.abs(x) > 0.5, x, 0.0)), [(XPW,)], jit=False, vmap=False)

# --- i0 and windows ----------------------------------------------------------------------------
_case("i0", fnp.i0, np.i0,
      [(np.linspace(-20.0, 20.0, 17),), (_r((2, 3), F32, low=-10, high=10),),
       (np.array([0, 3, -9]),)],
      grad_args=[(np.array([-12.0, -3.5, 0.7, 2.0, 7.9, 8.3, 15.0]),)], grad_rtol=1e-5)
for w in ("bartlett", "blackman", "hamming", "hanning"):
    _case(w, lambda s, w=w: s * getattr(fnp, w)(6), lambda s, w=w: s * getattr(np, w)(6),
          [(1.5,)], vmap=False)
_case("kaiser", lambda b: fnp.kaiser(7, b), lambda b: np.kaiser(7, b), [(5.3,)],
      vmap=False, rtol=1e-11)

# --- comparisons -------------------------------------------------------------------------------
_case("array_equal", lambda a, b: fnp.asarray(fnp.array_equal(a, b, equal_nan=True)),
      lambda a, b: np.asarray(np.array_equal(a, b, equal_nan=True)),
      [(np.array([1.0, np.nan]), np.array([1.0, np.nan])), (X23, X23 + 1.0)], order=0)
_case("array_equiv", lambda a, b: fnp.asarray(fnp.array_equiv(a, b)),
      lambda a, b: np.asarray(np.array_equiv(a, b)), [(X3, np.stack([X3, X3])), (X3, X23)],
      order=0)

# --- polynomials -------------------------------------------------------------------------------
P4, P2 = np.array([3.0, -1.0, 2.0, 0.5]), np.array([1.5, -2.0])
_case("polyval", fnp.polyval, np.polyval,
      [(P4, X23), (P2, 1.5), (np.float32(P4), _r((3,), F32)), (np.array([1, 2, 3]), X3)])
_case("polyadd", fnp.polyadd, np.polyadd, [(P4, P2), (P2, P4), (np.array([1, 2]), P2)])
_case("polysub", fnp.polysub, np.polysub, [(P4, P2), (np.float32(P2), P4)])
_case("polymul", fnp.polymul, np.polymul, [(P4, P2), (np.array([1, 2]), np.array([3, 4, 5]))])
_case("polyder", lambda p: fnp.polyder(p, 2), lambda p: np.polyder(p, 2), [(P4,)])
_case("polyint", lambda p, k: fnp.polyint(p, 2, k), lambda p, k: np.polyint(p, 2, k),
      [(P4, np.array([1.0, -2.0])), (P2, 0.5)])
_case("polydiv", fnp.polydiv, np.polydiv, [(P4, P2), (P4, np.array([2.0, 1.0, -1.0]))])
_case("poly", fnp.poly, np.poly, [(X3,), (_r((4,), F32),)])
XF = np.linspace(0.0, 3.0, 7)
_case("polyfit", lambda x, y: fnp.polyfit(x, y, 2), lambda x, y: np.polyfit(x, y, 2),
      [(XF, np.sin(XF)), (XF, np.stack([np.sin(XF), np.cos(XF)], 1))], rtol=1e-9, atol=1e-10,
      grad_rtol=1e-5)
_case("polyfit_w", lambda x, y, w: fnp.polyfit(x, y, 1, w=w),
      lambda x, y, w: np.polyfit(x, y, 1, w=w), [(XF, np.cos(XF), np.linspace(1.0, 2.0, 7))],
      rtol=1e-9, atol=1e-10, grad_rtol=1e-5)
_case("roots", fnp.roots, np.roots, [(np.array([1.0, -3.0, 2.0]),), (np.array([0.0, 1.0, 0.0,
                                                                              2.0, 0.0]),)],
      order=0, grad_args=[], jit=False, vmap=False)
