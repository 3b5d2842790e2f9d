"""Shape functions against NumPy: reshape, transpose, concatenate, stack, split, squeeze,
expand_dims, broadcast_to, pad, roll, flip, tile, repeat, moveaxis, swapaxes and friends.

Random shapes (0-d and size-0 included), dtypes, axes (negative, out of range), Python lists;
eager, under ``jit`` and under ``vmap``.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import dev, host
from hypothesis import assume, given
from hypothesis import strategies as st

import funcgrad
import funcgrad.numpy as fnp
from tests.funcgrad.numpy import ALL_DTYPES, array_of, arrays, axis_for, check_like_numpy


@given(array_of(), st.data())
def test_reshape(x: np.ndarray, data: st.DataObject) -> None:
    n = x.size
    divisors = [d for d in range(1, 7) if n % d == 0] or [1]
    d = data.draw(st.sampled_from(divisors), "d")
    shape = data.draw(st.sampled_from([
        (-1,), (d, -1), (-1, d), (n,), (), (1, -1, 1), (n + 1,), (-1, -1), (d, n // d if d
                                                                              else 0),
        n, (0, -1),
    ]), "shape")
    order = data.draw(st.sampled_from(["C", "F", "A"]), "order")
    check_like_numpy(fnp.reshape, np.reshape, x, shape, name="reshape", vmap=True, order=order)
    rorder = data.draw(st.sampled_from(["C", "F", "A", "K"]), "ravel order")
    check_like_numpy(fnp.ravel, np.ravel, x, name="ravel", vmap=True, order=rorder)


@given(array_of(shape=st.sampled_from([(2, 3), (3, 1, 2), (4,)])), st.data())
def test_reshape_ravel_layouts(x: np.ndarray, data: st.DataObject) -> None:
    """``order='A'``/``'K'`` follow a concrete array's memory layout (Fortran, transposed,
    strided and broadcast views), as in NumPy."""
    view = data.draw(st.sampled_from(["fortran", "T", "strided", "reversed", "broadcast"]),
                     "view")
    if view == "fortran":
        v = np.asfortranarray(x)
    elif view == "T":
        v = x.T
    elif view == "strided":
        v = x[..., ::2]
    elif view == "reversed":
        v = x[::-1]
    else:
        v = np.broadcast_to(x, (2,) + x.shape)
    for order in ("C", "F", "A", "K"):
        np.testing.assert_array_equal(np.asarray(fnp.ravel(v, order=order)),
                                      np.ravel(v, order=order), err_msg=f"{view} {order}")
    for order in ("C", "F", "A"):
        np.testing.assert_array_equal(np.asarray(fnp.reshape(v, (-1, 1), order=order)),
                                      np.reshape(v, (-1, 1), order=order))


@given(array_of(), st.data())
def test_transpose_family(x: np.ndarray, data: st.DataObject) -> None:
    nd = x.ndim
    perm = data.draw(st.one_of(st.none(), st.permutations(range(nd)).map(tuple),
                               st.just((0,) * nd), st.just(tuple(range(nd + 1)))), "axes")
    check_like_numpy(fnp.transpose, np.transpose, x, perm, name="transpose", vmap=True)
    src = data.draw(st.integers(-nd - 1, nd), "source")
    dst = data.draw(st.integers(-nd - 1, nd), "destination")
    check_like_numpy(fnp.moveaxis, np.moveaxis, x, src, dst, name="moveaxis", vmap=True)
    check_like_numpy(fnp.swapaxes, np.swapaxes, x, src, dst, name="swapaxes", vmap=True)
    check_like_numpy(fnp.matrix_transpose, np.matrix_transpose, x, name="matrix_transpose")


@given(array_of(), st.data())
def test_squeeze_expand_dims(x: np.ndarray, data: st.DataObject) -> None:
    axis = data.draw(axis_for(x.ndim), "axis")
    check_like_numpy(fnp.squeeze, np.squeeze, x, name="squeeze", axis=axis, vmap=True)
    eaxis = data.draw(st.one_of(st.integers(-x.ndim - 2, x.ndim + 1),
                                st.lists(st.integers(-x.ndim - 2, x.ndim + 1), max_size=3)
                                .map(tuple)), "expand axis")
    check_like_numpy(fnp.expand_dims, np.expand_dims, x, eaxis, name="expand_dims",
                     vmap=True)


@st.composite
def joinable(draw):
    """2-3 arrays whose shapes agree except (mostly) along one axis, with random dtypes."""
    base = list(draw(st.lists(st.integers(0, 3), max_size=3)))
    nd = len(base)
    axis = draw(st.integers(-nd - 1, nd)) if nd else draw(st.sampled_from([0, None]))
    out = []
    for _ in range(draw(st.integers(1, 3))):
        shp = list(base)
        if nd and draw(st.integers(0, 2)) and axis is not None and -nd <= axis < nd:
            shp[axis] = draw(st.integers(0, 3))
        dt = draw(st.sampled_from(ALL_DTYPES))
        out.append(draw(arrays(np.dtype(dt), tuple(shp))))
    return out, axis


@given(joinable(), st.sampled_from(("concatenate", "stack", "vstack", "hstack", "dstack",
                                    "column_stack", "concat")))
def test_join(arrs_axis: tuple, name: str) -> None:
    arrs, axis = arrs_axis
    kw = {"axis": axis} if name in ("concatenate", "stack", "concat") else {}
    if name in ("stack",) and axis is None:
        kw = {}
    np_name = "concatenate" if name == "concat" else name

    def fg(*xs):
        return getattr(fnp, name)(list(xs), **kw)

    def ref(*xs):
        return getattr(np, np_name)(list(xs), **kw)

    check_like_numpy(fg, ref, *arrs, name=name, vmap=True, loose_errors=True)


@given(st.sampled_from(("concatenate", "stack", "hstack", "vstack")),
       st.lists(st.one_of(st.integers(-3, 3), st.floats(-2, 2, width=32)), min_size=1,
                max_size=3))
def test_join_python_inputs(name: str, v: list) -> None:
    check_like_numpy(getattr(fnp, name), getattr(np, name), [v, v], name=name,
                     loose_errors=True)


@given(array_of(), st.data(), st.sampled_from(("split", "array_split", "hsplit", "vsplit",
                                               "dsplit")))
def test_split(x: np.ndarray, data: st.DataObject, name: str) -> None:
    sections = data.draw(st.one_of(st.integers(1, 4), st.lists(st.integers(-1, 5),
                                                               max_size=3)), "sections")
    kw = {}
    if name in ("split", "array_split"):
        kw["axis"] = data.draw(st.integers(-x.ndim - 1, x.ndim) if x.ndim else st.just(0),
                               "axis")
    check_like_numpy(getattr(fnp, name), getattr(np, name), x, sections, name=name, **kw,
                     loose_errors=True)


@given(array_of(), st.data())
def test_broadcast_to(x: np.ndarray, data: st.DataObject) -> None:
    extra = tuple(data.draw(st.lists(st.integers(0, 3), max_size=2), "leading"))
    tail = tuple(s if s != 1 or not data.draw(st.booleans()) else 3 for s in x.shape)
    shape = data.draw(st.sampled_from([extra + tail, tail[1:], extra + tail + (2,)]), "shape")
    check_like_numpy(fnp.broadcast_to, np.broadcast_to, x, shape, name="broadcast_to",
                     vmap=True)


@given(array_of(), st.data(), st.sampled_from(("constant", "edge", "reflect", "symmetric",
                                               "wrap", "linear_ramp", "maximum", "minimum",
                                               "mean", "median")))
def test_pad(x: np.ndarray, data: st.DataObject, mode: str) -> None:
    nd = x.ndim
    width = data.draw(st.one_of(
        st.integers(0, 3),
        st.tuples(st.integers(0, 3), st.integers(0, 3)),
        st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2)), min_size=nd, max_size=nd),
        st.just([(1, 1)] * (nd + 1)),
        st.just(-1),
    ), "pad_width")
    kw = {"mode": mode}
    if mode == "constant" and data.draw(st.booleans()):
        kw["constant_values"] = data.draw(st.sampled_from([1, 2.5, (1, 2)]), "constant_values")
    if mode in ("reflect", "symmetric") and data.draw(st.booleans()):
        kw["reflect_type"] = "odd"
    if mode == "linear_ramp" and data.draw(st.booleans()):
        kw["end_values"] = data.draw(st.sampled_from([1, -2.5, (1, 2)]), "end_values")
    if mode in ("maximum", "minimum", "mean", "median") and data.draw(st.booleans()):
        kw["stat_length"] = data.draw(st.sampled_from([1, 2, (1, 3), 0]), "stat_length")
    if mode == "mean" and kw.get("stat_length") == 0 and x.dtype.kind in "iu":
        return  # (NumPy stores the NaN mean of nothing into an integer array: undefined)
    check_like_numpy(fnp.pad, np.pad, x, width, name="pad", loose_errors=True, **kw)


@given(array_of(), st.data())
def test_roll_flip(x: np.ndarray, data: st.DataObject) -> None:
    axis = data.draw(axis_for(x.ndim), "axis")
    shift = data.draw(st.one_of(st.integers(-5, 5), st.tuples(st.integers(-3, 3),
                                                               st.integers(-3, 3))), "shift")
    check_like_numpy(fnp.roll, np.roll, x, shift, name="roll", axis=axis, vmap=True,
                     loose_errors=True)
    check_like_numpy(fnp.flip, np.flip, x, name="flip", axis=axis, vmap=True)
    if x.ndim >= 2:
        k = data.draw(st.integers(-2, 5), "k")
        check_like_numpy(fnp.rot90, np.rot90, x, k, name="rot90", vmap=True)
        check_like_numpy(fnp.fliplr, np.fliplr, x, name="fliplr")
        check_like_numpy(fnp.flipud, np.flipud, x, name="flipud")


@given(array_of(), st.data())
def test_tile_repeat(x: np.ndarray, data: st.DataObject) -> None:
    reps = data.draw(st.one_of(st.integers(0, 3), st.lists(st.integers(0, 3), max_size=4)
                               .map(tuple)), "reps")
    check_like_numpy(fnp.tile, np.tile, x, reps, name="tile", vmap=True)
    axis = data.draw(axis_for(x.ndim, allow_tuple=False), "axis")
    n = x.size if axis is None else (x.shape[axis] if -x.ndim <= axis < x.ndim else 1)
    repeats = data.draw(st.one_of(st.integers(0, 3), st.lists(st.integers(0, 3), min_size=n,
                                                               max_size=n)), "repeats")
    check_like_numpy(fnp.repeat, np.repeat, x, repeats, name="repeat", axis=axis, vmap=True)


@given(array_of(), st.sampled_from(("atleast_1d", "atleast_2d", "atleast_3d", "shape", "ndim",
                                    "size", "copy")))
def test_misc(x: np.ndarray, name: str) -> None:
    check_like_numpy(getattr(fnp, name), getattr(np, name), x, name=name,
                     jit=name not in ("shape", "ndim", "size"))


@given(array_of(), st.data())
def test_tril_triu(x: np.ndarray, data: st.DataObject) -> None:
    k = data.draw(st.integers(-3, 3), "k")
    assume(x.ndim >= 1)  # NumPy fails on 0-d with an internal TypeError
    check_like_numpy(fnp.tril, np.tril, x, k, name="tril", vmap=True)
    check_like_numpy(fnp.triu, np.triu, x, k, name="triu", vmap=True)


@given(st.lists(array_of(shape=st.sampled_from([(), (3,), (2, 1), (1, 3), (0,), (2,)])),
                min_size=1, max_size=3))
def test_broadcast_arrays(arrs: list) -> None:
    check_like_numpy(fnp.broadcast_arrays, np.broadcast_arrays, *arrs,
                     name="broadcast_arrays", loose_errors=True)
    shapes = [a.shape for a in arrs]
    check_like_numpy(fnp.broadcast_shapes, np.broadcast_shapes, *shapes,
                     name="broadcast_shapes", loose_errors=True)


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
@pytest.mark.parametrize("cv", [300, -129, -1, 256, (1, 300), ((1, 300),), [[-1, 2]],
                                np.int64(300)])
def test_pad_integer_fill_out_of_range(dtype: str, cv) -> None:
    # NumPy 2: an OverflowError for signed arrays, a wrap for unsigned ones (funcgrad wrapped
    # both).
    check_like_numpy(fnp.pad, np.pad, np.array([1, 2], dtype), 1, name="pad",
                     constant_values=cv)


@pytest.mark.parametrize("values", [300, [1, 300], -1, 2.5, np.int64(300)])
def test_insert_integer_values_out_of_range(values) -> None:
    check_like_numpy(fnp.insert, np.insert, np.array([1, 2], np.int8), 1, values,
                     name="insert")


@pytest.mark.parametrize("pad_width, mode", [({0: 1}, "constant"), ({-1: (1, 2)}, "constant"),
                                             ({1: (0, 1)}, "edge"),
                                             ({0: (1, 0), 1: 2}, "reflect")])
def test_pad_width_as_a_dict_of_axes(pad_width, mode):
    # NumPy 2.3's pad_width={axis: width or (before, after)}; it raised TypeError here
    x = np.arange(6).reshape(2, 3)
    want = np.pad(x, pad_width, mode=mode)
    for got in (fnp.pad(dev(x), pad_width, mode=mode),
                funcgrad.jit(lambda v: fnp.pad(v, pad_width, mode=mode))(dev(x))):
        np.testing.assert_array_equal(host(got), want)
    with pytest.raises(np.exceptions.AxisError):
        fnp.pad(dev(x), {2: 1})


def _pad_with(v, width, axis, kwargs):
    # JAX's callable protocol: the zero-padded row in, the filled row out
    v = v.at[:width[0]].set(kwargs.get("padder", 10) + axis)
    return v.at[v.shape[0] - width[1]:].set(-v[width[0]])


def test_pad_callable_mode_as_jax():
    # jnp.pad(x, ((1, 0), (1, 2)), _pad_with, padder=5) (JAX 0.10), rows first, then columns
    x = np.arange(1.0, 5.0).reshape(2, 2)
    want = np.array([[6.0, 5.0, 5.0, -5.0, -5.0],
                     [6.0, 1.0, 2.0, -1.0, -1.0],
                     [6.0, 3.0, 4.0, -3.0, -3.0]])
    for got in (fnp.pad(dev(x), ((1, 0), (1, 2)), _pad_with, padder=5),
                funcgrad.jit(lambda v: fnp.pad(v, ((1, 0), (1, 2)), _pad_with, padder=5))(
                    dev(x))):
        np.testing.assert_array_equal(host(got), want)

    def in_place(vector, width, axis, kwargs):  # NumPy's protocol: refused, saying why
        vector[:width[0]] = 1

    with pytest.raises(TypeError, match="returns the padded row"):
        fnp.pad(dev(x), 1, in_place)


@pytest.mark.parametrize("dtype,scalar", [
    ("uint8", 3), ("uint8", 300), ("uint8", -1), ("uint8", 2.0), ("uint8", True),
    ("int8", 2**40), ("float32", 2.5), ("float16", 1j), ("bool", 7),
])
def test_concatenate_python_scalars_are_weak(dtype: str, scalar) -> None:
    # NumPy 2 promotes a Python scalar element of concatenate's sequence by NEP 50 (uint8
    # with 3 is uint8; out-of-range ints wrap as its same_kind cast does), while a list is
    # an int64/float64 array. Under jit the array is traced, the scalar stays Python's.
    x = np.array([1, 0], dtype)
    check_like_numpy(lambda a: fnp.concatenate((a, scalar), axis=None),
                     lambda a: np.concatenate((a, scalar), axis=None), x, vmap=True)
    check_like_numpy(lambda a: fnp.concatenate([scalar, a, [scalar]], axis=None),
                     lambda a: np.concatenate([scalar, a, [scalar]], axis=None), x)


def test_concatenate_weak_traced_scalar_as_eager() -> None:
    # a Python scalar argument of a jitted function is weak-typed: the same dtype as eagerly
    u8 = dev(np.array([1, 2], np.uint8))
    got = funcgrad.jit(lambda a, s: fnp.concatenate((a, s), axis=None))(u8, 300)
    assert host(got).dtype == np.uint8
    np.testing.assert_array_equal(host(got), [1, 2, 44])


def test_reshape_unknown_dimension_errors_say_why() -> None:
    # NumPy: "can only specify one unknown dimension"; both are ValueErrors as NumPy's
    with pytest.raises(ValueError, match="only specify one unknown dimension"):
        fnp.reshape(dev(np.ones(6)), (-1, -1))
    with pytest.raises(ValueError, match="multiply to 4, which does not divide 6"):
        funcgrad.jit(lambda x: x.reshape(4, -1))(dev(np.ones(6)))


def test_size_of_a_tuple_of_axes_as_numpy2() -> None:
    # NumPy 2: np.size(x, (0, -1)) is the product of those lengths (15); () gives 1
    x = dev(np.zeros((3, 4, 5)))
    assert fnp.size(x, (0, -1)) == 15
    assert fnp.size(x, ()) == 1
    assert funcgrad.jit(lambda a: a * fnp.size(a, [1, 2]))(x).shape == (3, 4, 5)
    with pytest.raises(ValueError, match="size: repeated axis"):
        fnp.size(x, (0, 0))
