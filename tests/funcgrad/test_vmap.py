"""funcgrad.vmap: in_axes/out_axes, pytrees, nesting, composition with AD, chunking, errors.

Written against the primitive wrappers in funcgrad.ops (not funcgrad.numpy) so the checks do
not depend on the NumPy layer; every result is compared with a Python loop or NumPy.
"""

from __future__ import annotations

import collections
import functools

import numpy as np
import pytest
from helpers import assert_allclose, dev, host, normal_sampler
from hypothesis import given
from hypothesis import strategies as st

import funcgrad
from funcgrad import grad, jvp, vmap
from funcgrad.errors import ConcretizationError
from funcgrad.ops import elementwise as ew
from funcgrad.ops import reductions as red
from funcgrad.ops import shape as sh

rng = np.random.default_rng(0)


rnd = normal_sampler(rng)


def loop(f, in_axes, args, out_axis=0):
    """The reference: slice each mapped argument, call f per example, stack the results."""
    sizes = [np.shape(a)[ax] for a, ax in zip(args, in_axes) if ax is not None]
    outs = []
    for i in range(sizes[0]):
        ex = [a if ax is None else dev(np.take(host(a), i, axis=ax)) for a, ax in zip(args, in_axes)]
        outs.append(host(f(*ex)))
    return funcgrad.tree_util.tree_map(lambda *xs: np.stack(xs, axis=out_axis), *outs)


def f_two(a, b):
    """A per-example function of a (3,) vector and a (3,)/(4,3) operand."""
    return red.reduce_sum(ew.mul(ew.sin(a), b), (b.ndim - 1,)) if b.ndim else ew.sin(a)


# ---------------------------------------------------------------------------------------------
# in_axes / out_axes


@pytest.mark.parametrize(
    "in_axes,shapes",
    [
        ((0, 0), [(5, 3), (5, 3)]),
        ((1, 0), [(3, 5), (5, 3)]),
        ((-1, None), [(3, 5), (3,)]),
        ((None, 1), [(3,), (4, 5, 3)]),
        ((0, -2), [(5, 3), (4, 5, 3)]),
        ((-2, 2), [(5, 3), (4, 3, 5)]),
    ],
)
def test_in_axes_mixes_match_loop(in_axes, shapes):
    args = [rnd(*s) for s in shapes]
    got = vmap(f_two, in_axes=in_axes)(*dev(args))
    want = loop(f_two, in_axes, dev(args))
    assert_allclose(got, want)


def test_int_in_axes_applies_to_every_argument():
    a, b = rnd(3, 4), rnd(3, 4)
    got = vmap(ew.mul, in_axes=1)(*dev((a, b)))
    assert_allclose(got, (a * b).T)


def test_list_in_axes_is_a_tuple():
    a, b = rnd(4, 3), rnd(3)
    assert_allclose(vmap(ew.mul, in_axes=[0, None])(*dev((a, b))), a * b)


@pytest.mark.parametrize("out_axes", [0, 1, -1, 2, -3])
def test_out_axes(out_axes):
    x = rnd(5, 2, 3)
    got = vmap(lambda r: ew.sin(r), out_axes=out_axes)(dev(x))
    assert_allclose(got, np.moveaxis(np.sin(x), 0, out_axes))


def test_out_axes_pytree_prefix():
    x = rnd(4, 3)
    got = vmap(lambda r: {"a": ew.sin(r), "b": (r, ew.cos(r))}, out_axes={"a": 1, "b": (0, -1)})(
        dev(x))
    assert_allclose(got, {"a": np.sin(x).T, "b": (x, np.cos(x).T)})


def test_unbatched_outputs_are_broadcast():
    x, c = rnd(4, 3), rnd(2)
    got = vmap(lambda r: (ew.sin(r), dev(c), 7.0))(dev(x))
    assert_allclose(got, (np.sin(x), np.broadcast_to(c, (4, 2)), np.full(4, 7.0)))
    got = vmap(lambda r: dev(c), out_axes=1)(dev(x))
    assert_allclose(got, np.broadcast_to(c[:, None], (2, 4)))


def test_out_axes_none_for_unbatched_outputs():
    x, c = rnd(4, 3), rnd(2)
    got = vmap(lambda r: (ew.sin(r), ew.mul(dev(c), 2.0)), out_axes=(0, None))(dev(x))
    assert_allclose(got, (np.sin(x), c * 2.0))


def test_kwargs_are_mapped_over_axis_0():
    a, b = rnd(4, 3), rnd(4, 3)
    got = vmap(lambda a, scale: ew.mul(a, scale), in_axes=(1,))(dev(a.T), scale=dev(b))
    assert_allclose(got, a * b)


def test_identity_and_passthrough_outputs():
    x = rnd(3, 4)
    assert_allclose(vmap(lambda r: r, in_axes=1)(dev(x)), x.T)
    assert_allclose(vmap(lambda r: r, in_axes=1, out_axes=1)(dev(x)), x)


def test_dtypes_and_weak_scalars_are_kept():
    x = rnd(4, 3, dtype=np.float32)
    out = vmap(lambda r, s: ew.mul(r, s), in_axes=(0, None))(dev(x), 2.0)
    assert host(out).dtype == np.float32
    assert_allclose(out, x * np.float32(2.0))
    ints = np.arange(6).reshape(2, 3)
    assert host(vmap(lambda r: red.reduce_sum(r))(dev(ints))).dtype == np.int64


def test_empty_batch():
    x = np.zeros((0, 3))
    out = vmap(lambda r: red.reduce_sum(ew.sin(r)))(dev(x))
    assert host(out).shape == (0,)


def test_axis_size_without_mapped_arguments():
    c = rnd(3)
    out = vmap(lambda v: ew.sin(v), in_axes=None, axis_size=4)(dev(c))
    assert_allclose(out, np.broadcast_to(np.sin(c), (4, 3)))
    out = vmap(lambda: 1.5, axis_size=2)()
    assert_allclose(out, np.full(2, 1.5))


def test_axis_size_agrees_with_mapped_arguments():
    x = rnd(4, 3)
    assert_allclose(vmap(ew.sin, axis_size=4)(dev(x)), np.sin(x))


def test_axis_name_is_accepted():
    x = rnd(4, 3)
    assert_allclose(vmap(ew.sin, axis_name="batch")(dev(x)), np.sin(x))


def test_wraps_the_function():
    def my_fun(x):
        """doc"""
        return x

    v = vmap(my_fun)
    assert v.__name__ == "my_fun" and v.__doc__ == "doc"


# ---------------------------------------------------------------------------------------------
# pytree prefixes


def test_dict_prefix_for_a_dict_argument():
    p = {"w": rnd(4, 3), "b": rnd(3)}
    x = rnd(3)

    def f(p, x):
        return ew.add(ew.mul(p["w"], x), p["b"])

    got = vmap(f, in_axes=({"w": 0, "b": None}, None))(*dev((p, x)))
    assert_allclose(got, p["w"] * x + p["b"])


def test_nested_prefixes_lists_and_tuples_interchangeable():
    a, b, c = rnd(4, 3), rnd(3, 4), rnd(3)

    def f(pair, c):
        return ew.add(ew.mul(pair[0], pair[1]), c)

    args = ([a, b], c)
    # A tuple prefix for a list argument, and a list prefix for a tuple argument.
    got1 = vmap(f, in_axes=((0, 1), None))(*dev(args))
    got2 = vmap(f, in_axes=([0, 1], None))(*dev(((a, b), c)))
    want = a * b.T + c
    assert_allclose(got1, want)
    assert_allclose(got2, want)


def test_prefix_leaf_covers_a_whole_subtree():
    p = {"w": rnd(4, 3), "b": {"c": rnd(4)}}
    got = vmap(lambda p: ew.add(red.reduce_sum(p["w"]), p["b"]["c"]), in_axes=(0,))(dev(p))
    assert_allclose(got, p["w"].sum(1) + p["b"]["c"])


def test_namedtuple_argument_and_prefix():
    Pt = collections.namedtuple("Pt", "x y")
    pt = Pt(rnd(4, 3), rnd(3))
    f = lambda pt: ew.mul(pt.x, pt.y)
    assert_allclose(vmap(f, in_axes=(Pt(0, None),))(dev(pt)), pt.x * pt.y)
    assert_allclose(vmap(f, in_axes=((0, None),))(dev(pt)), pt.x * pt.y)


def test_none_leaves_and_non_array_unmapped_arguments():
    x = rnd(4, 3)

    def f(x, opts, nothing):
        assert opts == "scale" and nothing is None
        return ew.mul(x, 2.0)

    assert_allclose(vmap(f, in_axes=(0, None, None))(dev(x), "scale", None), 2 * x)


# ---------------------------------------------------------------------------------------------
# nesting and closures


def g3(v):
    return red.reduce_sum(ew.sin(ew.mul(v, v)))


def test_nested_vmap_both_orders_and_axes():
    x = rnd(4, 5, 3)
    got = vmap(vmap(g3, in_axes=1), in_axes=0)(dev(x))  # [i, k] -> x[i, :, k]
    want = np.array([[np.sum(np.sin(x[i, :, k] ** 2)) for k in range(3)] for i in range(4)])
    assert_allclose(got, want)
    got = vmap(vmap(g3, in_axes=0), in_axes=1)(dev(x))  # [j, i] -> x[i, j, :]
    want = np.array([[np.sum(np.sin(x[i, j] ** 2)) for i in range(4)] for j in range(5)])
    assert_allclose(got, want)
    got = vmap(vmap(g3, in_axes=-1, out_axes=0), in_axes=-1, out_axes=1)(dev(x))  # [j, k]
    want = np.array([[np.sum(np.sin(x[:, j, k] ** 2)) for k in range(3)] for j in range(5)])
    assert_allclose(got, want)


def test_nested_vmap_outer_product():
    a, b = rnd(4), rnd(5)
    got = vmap(lambda x: vmap(lambda y: ew.mul(x, y))(dev(b)))(dev(a))
    assert_allclose(got, np.outer(a, b))
    got = vmap(vmap(ew.mul, in_axes=(None, 0)), in_axes=(0, None))(*dev((a, b)))
    assert_allclose(got, np.outer(a, b))


def test_inner_vmap_closes_over_outer_tracer():
    x = rnd(4, 5, 3)

    def outer(xi):  # (5, 3)
        s = red.reduce_sum(xi, (0,))  # an outer-batched value captured by the inner function
        return vmap(lambda row: ew.mul(row, s))(xi)

    got = vmap(outer)(dev(x))
    assert_allclose(got, np.stack([x[i] * x[i].sum(0) for i in range(4)]))


def test_inner_vmap_with_unmapped_closure_of_outer_batched_value():
    a = rnd(4, 3)
    # Inner vmap maps nothing of its own; its output depends only on the outer batch.
    got = vmap(lambda r: vmap(lambda: ew.sin(r), axis_size=2)())(dev(a))
    assert_allclose(got, np.broadcast_to(np.sin(a)[:, None, :], (4, 2, 3)))


def test_vmap_closes_over_grad_tracer():
    x, w = rnd(6, 3), rnd(3)

    def loss(w):
        return red.reduce_sum(vmap(lambda xi: ew.sin(ew.mul(w, xi)))(dev(x)))

    assert_allclose(grad(loss)(dev(w)), np.sum(x * np.cos(w * x), 0), rtol=1e-10)


def test_grad_inside_vmap_closes_over_batched_value():
    x, w = rnd(6, 3), rnd(3)

    def per_example(xi):
        return grad(lambda w: red.reduce_sum(ew.sin(ew.mul(w, xi))))(dev(w))

    assert_allclose(vmap(per_example)(dev(x)), x * np.cos(w * x), rtol=1e-10)


# ---------------------------------------------------------------------------------------------
# composition with differentiation


def test_vmap_of_grad():
    x = rnd(5, 3)
    assert_allclose(vmap(grad(g3))(dev(x)), 2 * x * np.cos(x * x), rtol=1e-10)


def test_grad_of_vmap():
    x = rnd(5, 3)
    got = grad(lambda y: red.reduce_sum(vmap(g3, in_axes=1)(y)))(dev(x.T))
    assert_allclose(got, (2 * x * np.cos(x * x)).T, rtol=1e-10)


def test_jvp_of_vmap_and_vmap_of_jvp():
    x, t = rnd(5, 3), rnd(5, 3)
    p1, t1 = jvp(vmap(g3), (dev(x),), (dev(t),))
    p2, t2 = vmap(lambda y, ty: jvp(g3, (y,), (ty,)))(*dev((x, t)))
    want_t = np.sum(2 * x * np.cos(x * x) * t, 1)
    assert_allclose(p1, np.sum(np.sin(x * x), 1))
    assert_allclose(t1, want_t, rtol=1e-10)
    assert_allclose(p2, p1)
    assert_allclose(t2, want_t, rtol=1e-10)


def test_vmap_of_grad_of_grad_and_vmap_of_vmap_of_grad():
    s = rnd(6)
    h = lambda s: ew.sin(ew.mul(s, s))
    want = 2 * np.cos(s * s) - 4 * s * s * np.sin(s * s)
    assert_allclose(vmap(grad(grad(h)))(dev(s)), want, rtol=1e-10)
    assert_allclose(vmap(vmap(grad(h)))(dev(s.reshape(2, 3))),
                    (2 * s * np.cos(s * s)).reshape(2, 3), rtol=1e-10)


def test_grad_of_vmap_of_grad():
    x = rnd(5, 3)

    def total(x):
        return red.reduce_sum(vmap(grad(g3))(x))

    # d/dx sum(2 x cos(x^2)) = 2 cos(x^2) - 4 x^2 sin(x^2)
    assert_allclose(grad(total)(dev(x)), 2 * np.cos(x * x) - 4 * x * x * np.sin(x * x),
                    rtol=1e-10)


def _dense(x, w, b):
    """x (din,) @ w (din, dout) + b, written with elementwise ops and a reduction."""
    return ew.add(red.reduce_sum(ew.mul(sh.reshape(x, (x.shape[0], 1)), w), (0,)), b)


def mlp_loss(params, x, y):
    h = ew.sin(_dense(x, params["w1"], params["b1"]))
    out = _dense(h, params["w2"], params["b2"])
    d = ew.sub(out, y)
    return red.reduce_sum(ew.mul(d, d))


def _mlp_params():
    return {"w1": rnd(4, 8), "b1": rnd(8), "w2": rnd(8, 2), "b2": rnd(2)}


def _numpy_per_example_grads(p, xs, ys):
    z1 = xs @ p["w1"] + p["b1"]
    h = np.sin(z1)
    out = h @ p["w2"] + p["b2"]
    dout = 2 * (out - ys)
    dh = dout @ p["w2"].T
    dz1 = dh * np.cos(z1)
    return {
        "w1": xs[:, :, None] * dz1[:, None, :],
        "b1": dz1,
        "w2": h[:, :, None] * dout[:, None, :],
        "b2": dout,
    }


def test_per_example_gradients_of_an_mlp():
    params, xs, ys = _mlp_params(), rnd(16, 4), rnd(16, 2)
    got = vmap(grad(mlp_loss), in_axes=(None, 0, 0))(*dev((params, xs, ys)))
    looped = loop(lambda x, y: grad(mlp_loss)(dev(params), x, y), (0, 0), dev((xs, ys)))
    assert_allclose(got, looped, rtol=1e-10, atol=1e-12)
    assert_allclose(got, _numpy_per_example_grads(params, xs, ys), rtol=1e-10, atol=1e-12)


def test_per_example_gradients_chunked():
    params, xs, ys = _mlp_params(), rnd(10, 4), rnd(10, 2)
    full = vmap(grad(mlp_loss), in_axes=(None, 0, 0))(*dev((params, xs, ys)))
    chunked = vmap(grad(mlp_loss), in_axes=(None, 0, 0), chunk_size=3)(*dev((params, xs, ys)))
    assert_allclose(chunked, full, rtol=1e-13, atol=1e-14)


# ---------------------------------------------------------------------------------------------
# chunk_size


def fw(w, xi):
    return red.reduce_sum(ew.sin(ew.mul(w, xi)))


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 100])
def test_chunk_size_gives_identical_results(chunk):
    x, w = rnd(7, 3), rnd(3)
    full = vmap(fw, in_axes=(None, 0))(*dev((w, x)))
    got = vmap(fw, in_axes=(None, 0), chunk_size=chunk)(*dev((w, x)))
    np.testing.assert_array_equal(host(got), host(full))


@pytest.mark.parametrize("chunk", [2, 3])
def test_chunk_size_under_grad_and_jvp(chunk):
    x, w, t = rnd(7, 3), rnd(3), rnd(7, 3)

    def total(w, x, chunk_size):
        return red.reduce_sum(vmap(fw, in_axes=(None, 0), chunk_size=chunk_size)(w, x))

    for argnum in (0, 1):
        g0 = grad(total, argnum)(*dev((w, x)), None)
        g1 = grad(total, argnum)(*dev((w, x)), chunk)
        assert_allclose(g1, g0, rtol=1e-13, atol=1e-14)
    f0 = lambda x: vmap(fw, in_axes=(None, 1))(dev(w), x)
    f1 = lambda x: vmap(fw, in_axes=(None, 1), chunk_size=chunk)(dev(w), x)
    p0, t0 = jvp(f0, (dev(x.T),), (dev(t.T),))
    p1, t1 = jvp(f1, (dev(x.T),), (dev(t.T),))
    assert_allclose(p1, p0)
    assert_allclose(t1, t0, rtol=1e-13, atol=1e-14)


def test_chunk_size_with_out_axes_and_unbatched_outputs():
    x = rnd(3, 7)

    def h(xi):
        return ew.mul(xi, 2.0), 5.0, sh.reshape(xi, (3, 1))

    spec = dict(in_axes=1, out_axes=(1, None, -1))
    full = vmap(h, **spec)(dev(x))
    got = vmap(h, chunk_size=3, **spec)(dev(x))
    for a, b in zip(host(got), host(full)):
        np.testing.assert_array_equal(a, b)


def test_chunked_vmap_inside_vmap():
    x = rnd(2, 7, 3)
    got = vmap(lambda xi: vmap(g3, chunk_size=3)(xi))(dev(x))
    assert_allclose(got, np.sum(np.sin(x * x), -1))


def test_chunked_vmap_with_kwargs_and_pytrees():
    p = {"a": rnd(5, 3), "b": rnd(3, 5)}
    f = lambda p, k: ew.add(ew.mul(p["a"], p["b"]), k)
    k = rnd(5, 3)
    got = vmap(f, in_axes=({"a": 0, "b": 1},), chunk_size=2)(dev(p), k=dev(k))
    assert_allclose(got, p["a"] * p["b"].T + k)


# chunk_size under jit: the chunks are the steps of a loop in the staged program (bounded
# memory), not copies of the function unrolled at trace time


def _top_level_prims(closed):
    return [e.prim.name for e in closed.jaxpr.eqns]


@pytest.mark.parametrize("n, chunk", [(7, 3), (6, 3), (7, 1), (5, 4)])
def test_chunk_size_under_jit_is_a_loop(n, chunk):
    x, w = rnd(n, 3), rnd(3)
    f = lambda w, x: vmap(fw, in_axes=(None, 0), chunk_size=chunk)(w, x)
    prims = _top_level_prims(funcgrad.make_jaxpr(f)(*dev((w, x))))
    assert prims.count("scan") == 1, prims
    # at most one copy of the function outside the loop: the remainder chunk
    assert prims.count("sin") == (1 if n % chunk else 0), prims
    want = vmap(fw, in_axes=(None, 0))(*dev((w, x)))
    assert_allclose(funcgrad.jit(f)(*dev((w, x))), want, rtol=1e-14, atol=0)


def test_chunk_size_under_jit_out_axes_pytrees_kwargs_and_unbatched_outputs():
    x = rnd(3, 7)

    def h(xi, k):
        return {"a": ew.mul(xi, 2.0), "c": 5.0}, sh.reshape(ew.add(xi, k), (3, 1))

    spec = dict(in_axes=(1,), out_axes=({"a": 1, "c": None}, -1))
    k = rnd(7, 3)
    want = vmap(h, **spec)(dev(x), k=dev(k))
    chunked = lambda x, k: vmap(h, chunk_size=3, **spec)(x, k=k)  # noqa: E731
    assert "scan" in _top_level_prims(funcgrad.make_jaxpr(chunked)(dev(x), dev(k)))
    got = funcgrad.jit(chunked)(dev(x), dev(k))
    for a, b in zip(funcgrad.tree_util.tree_leaves(got), funcgrad.tree_util.tree_leaves(want)):
        # (the unbatched 5.0 is a Python float eagerly, an array from jit: as in JAX)
        assert np.shape(host(a)) == np.shape(host(b))
        np.testing.assert_array_equal(host(a), host(b))


@pytest.mark.parametrize("chunk", [2, 3])
def test_chunk_size_under_jit_differentiates(chunk):
    x, w = rnd(7, 3), rnd(3)

    def total(w, x, chunk_size):
        return red.reduce_sum(vmap(fw, in_axes=(None, 0), chunk_size=chunk_size)(w, x))

    for argnum in (0, 1):
        want = grad(total, argnum)(*dev((w, x)), None)
        inner = funcgrad.jit(grad(total, argnum), static_argnums=2)(*dev((w, x)), chunk)
        outer = grad(funcgrad.jit(total, static_argnums=2), argnum)(*dev((w, x)), chunk)
        assert_allclose(inner, want, rtol=1e-13, atol=1e-14)
        assert_allclose(outer, want, rtol=1e-13, atol=1e-14)


def test_chunked_vmap_inside_vmap_under_jit():
    x = rnd(2, 7, 3)
    got = funcgrad.jit(lambda x: vmap(lambda xi: vmap(g3, chunk_size=3)(xi))(x))(dev(x))
    assert_allclose(got, np.sum(np.sin(x * x), -1))


# ---------------------------------------------------------------------------------------------
# errors


def _err(exc, fn, *args, **kwargs):
    with pytest.raises(exc) as info:
        fn(*args, **kwargs)
    return str(info.value)


def test_error_inconsistent_sizes_names_each_path_and_size():
    msg = _err(ValueError, vmap(lambda a, b: a), rnd(2, 3), {"w": rnd(3, 3), "v": rnd(2)})
    assert msg.startswith("vmap got inconsistent sizes for array axes to be mapped:")  # JAX's
    # arguments named by the function's parameters, as JAX names them
    assert "one axis had size 2: axis 0 of argument a of type f64[2,3]" in msg
    assert "one axis had size 3: axis 0 of argument b['w']" in msg
    assert "one axis had size 2: axis 0 of argument b['v']" in msg
    msg = _err(ValueError, vmap(lambda a: a, axis_size=5), rnd(2, 3))
    assert "the `axis_size` argument was 5" in msg and "size 2: axis 0 of argument a" in msg
    def g(a, *rest):
        return a
    msg = _err(ValueError, vmap(g), rnd(2), rnd(3), rnd(4))
    assert "axis 0 of argument rest[0] of type f64[3]" in msg
    assert "axis 0 of argument rest[1] of type f64[4]" in msg
    # no signature to read (a builtin callable object): positions
    msg = _err(ValueError, vmap(functools.partial(lambda *v: v[0])), rnd(2), rnd(3))
    assert "axis 0 of argument v[1]" in msg or "axis 0 of args[1]" in msg
    msg = _err(ValueError, vmap(lambda a, k: a), rnd(2, 3), k=rnd(4))
    assert "one axis had size 4: axis 0 of kwargs['k']" in msg


def test_error_in_axes_structure_mismatch():
    msg = _err(ValueError, vmap(lambda a: a, in_axes=(0, 0)), rnd(2))
    assert "2 entries" in msg and "1 positional argument" in msg
    msg = _err(ValueError, vmap(lambda d: d, in_axes=({"w": 0, "c": 1},)),
               {"w": rnd(2), "b": rnd(2)})
    assert "in_axes[0]" in msg and "'b'" in msg and "'c'" in msg
    msg = _err(ValueError, vmap(lambda t: t, in_axes=((0, 1),)), [rnd(2), rnd(2), rnd(2)])
    assert "in_axes[0] is a tuple of 2 entries" in msg and "args[0] is a list of 3 entries" in msg
    msg = _err(ValueError, vmap(lambda t: t, in_axes=({"w": 0},)), rnd(2))
    assert "in_axes[0] is a dict" in msg and "args[0] is a ndarray" in msg
    msg = _err(TypeError, vmap, lambda d: d, {"w": 0})
    assert "in_axes=({...},)" in msg


def test_error_out_of_range_axis_names_argument_and_rank():
    msg = _err(ValueError, vmap(lambda a: a, in_axes=2), rnd(2, 3))
    assert "argument a" in msg and "rank 2" in msg and "in_axes=2" in msg
    msg = _err(ValueError, vmap(lambda d: d, in_axes=({"w": -3},)), {"w": rnd(2, 3)})
    assert "in_axes[0]['w']=-3" in msg and "argument d['w']" in msg and "rank 2" in msg
    msg = _err(ValueError, vmap(lambda a, b: a), rnd(2), 1.0)
    assert "argument b" in msg and "rank 0" in msg
    msg = _err(ValueError, vmap(lambda a: a, out_axes=3), rnd(2, 3))
    assert "out_axes=3" in msg and "rank 2" in msg


def test_error_non_int_axis_is_named():
    msg = _err(TypeError, vmap, lambda d: d, ({"w": "a"},))
    assert "in_axes[0]['w']" in msg and "'a'" in msg
    msg = _err(TypeError, vmap, lambda d: d, 1.5)
    assert "1.5" in msg
    msg = _err(TypeError, vmap, lambda d: d, 0, (0, 2.0))
    assert "out_axes[1]" in msg
    _err(TypeError, vmap, lambda d: d, True)


def test_error_no_mapped_arguments():
    msg = _err(ValueError, vmap(lambda a: a, in_axes=None), rnd(3))
    assert "no argument is mapped" in msg and "axis_size" in msg
    msg = _err(ValueError, vmap(lambda: 1.0))
    assert "no argument is mapped" in msg


def test_error_out_axes_none_for_batched_output():
    msg = _err(ValueError, vmap(lambda a: (a, ew.sin(a)), out_axes=(0, None)), dev(rnd(2, 3)))
    assert "out_axes is None for output out[1]" in msg


def test_error_bad_arguments_to_vmap():
    _err(TypeError, vmap, 3)
    _err(TypeError, vmap, ew.sin, chunk_size=0)
    _err(TypeError, vmap, ew.sin, axis_size=-1)
    msg = _err(TypeError, vmap(lambda s: s), "abc")
    assert "argument s" in msg and "not an array" in msg


def test_python_if_on_batched_value_explains():
    def f(x):
        return ew.sin(x) if bool(x) else x

    msg = _err(ConcretizationError, vmap(f), rnd(3))
    assert "batched" in msg and "where" in msg and "test_vmap.py" in msg
    _err(ConcretizationError, vmap(lambda x: float(x)), rnd(3))
    _err(ConcretizationError, vmap(lambda x: int(x)), np.arange(3))


def test_python_if_on_batched_value_under_grad_inside_vmap():
    def f(x):
        return ew.sin(x) if bool(x) else x

    _err(ConcretizationError, vmap(grad(f)), rnd(3))


def test_make_jaxpr_of_vmap():
    jaxpr = funcgrad.make_jaxpr(vmap(g3, in_axes=1))(rnd(3, 4))
    s = str(jaxpr)
    assert "f64[4,3]" in s or "f64[3,4]" in s
    assert "reduce_sum" in s


# ---------------------------------------------------------------------------------------------
# with funcgrad.numpy, jit and the other transformations


def test_python_if_through_numpy_operators_explains():
    import funcgrad.numpy as fnp

    msg = _err(ConcretizationError, vmap(lambda x: x if x > 0 else -x), dev(rnd(3)))
    assert "batched" in msg and "where" in msg
    got = vmap(lambda x: fnp.where(x > 0, x, -x))(dev(np.array([1.0, -2.0, 3.0])))
    assert_allclose(got, np.array([1.0, 2.0, 3.0]))
    # Python control flow on unmapped values is fine.
    f = vmap(lambda x, k: x * 2.0 if k > 0 else x, in_axes=(0, None))
    assert_allclose(f(dev(np.ones(3)), 1), np.full(3, 2.0))


def test_per_example_gradients_with_numpy_mlp():
    import funcgrad.numpy as fnp

    params, xs, ys = _mlp_params(), rnd(12, 4), rnd(12, 2)

    def loss(p, x, y):
        h = fnp.sin(x @ p["w1"] + p["b1"])
        return fnp.sum((h @ p["w2"] + p["b2"] - y) ** 2)

    got = vmap(grad(loss), in_axes=(None, 0, 0))(*dev((params, xs, ys)))
    assert_allclose(got, _numpy_per_example_grads(params, xs, ys), rtol=1e-10, atol=1e-12)
    got = vmap(grad(loss), in_axes=(None, 0, 0), chunk_size=5)(*dev((params, xs, ys)))
    assert_allclose(got, _numpy_per_example_grads(params, xs, ys), rtol=1e-10, atol=1e-12)


def test_vmap_and_jit_compose():
    import funcgrad.numpy as fnp

    x = rnd(7, 3)
    f = lambda r: fnp.sum(fnp.sin(r) ** 2)
    want = np.sum(np.sin(x) ** 2, 1)
    assert_allclose(funcgrad.jit(vmap(f))(dev(x)), want)
    assert_allclose(funcgrad.jit(vmap(f, chunk_size=3))(dev(x)), want)
    assert_allclose(vmap(funcgrad.jit(f), in_axes=1)(dev(x.T)), want)


def test_make_jaxpr_of_chunked_vmap_slices_and_concatenates():
    s = str(funcgrad.make_jaxpr(vmap(g3, chunk_size=4))(rnd(7, 3)))
    assert s.count("slice") == 2 and "concatenate" in s


def test_vmap_of_jacobians():
    import funcgrad.numpy as fnp

    x = rnd(5, 3)
    jr = vmap(funcgrad.jacrev(fnp.sin))(dev(x))
    jf = vmap(funcgrad.jacfwd(fnp.sin), chunk_size=2)(dev(x))
    want = np.stack([np.diag(np.cos(r)) for r in x])
    assert_allclose(jr, want)
    assert_allclose(jf, want)


# ---------------------------------------------------------------------------------------------
# property test: random axes, chunking and output placement agree with a loop


def _prop_fun(a, b):
    s = red.reduce_sum(ew.mul(b, b))
    return {"y": ew.add(ew.mul(ew.sin(a), s), a), "s": s}


@given(
    ax_a=st.sampled_from([0, 1, 2, -1, -2, -3]),
    ax_b=st.sampled_from([None, 0, 1, -1]),
    out_y=st.sampled_from([0, 1, 2, -1, -3]),
    chunk=st.sampled_from([None, 1, 2, 3, 4]),
    n=st.integers(1, 5),
)
def test_random_axes_match_loop(ax_a, ax_b, out_y, chunk, n):
    r = np.random.default_rng(n)
    a = np.moveaxis(r.standard_normal((n, 2, 3)), 0, ax_a)
    b = r.standard_normal((n, 4)) if ax_b is not None else r.standard_normal(4)
    if ax_b is not None:
        b = np.moveaxis(b, 0, ax_b)
    got = vmap(_prop_fun, in_axes=(ax_a, ax_b), out_axes={"y": out_y, "s": 0},
               chunk_size=chunk)(*dev((a, b)))
    want = loop(_prop_fun, (ax_a, ax_b), dev((a, b)))
    want["y"] = np.moveaxis(want["y"], 0, out_y)
    if ax_b is None:
        want["s"] = np.broadcast_to(want["s"], (n,))
    assert_allclose(got, want)


def test_numpy_integer_axes_and_non_array_outputs():
    x = rnd(3, 4)
    got = vmap(ew.sin, in_axes=np.int64(1), out_axes=np.int32(-1))(dev(x))
    assert_allclose(got, np.sin(x))
    msg = _err(TypeError, vmap(lambda r: (r, "label")), dev(x))
    assert "out[1]" in msg and "not an array" in msg
    assert vmap(lambda r: (r, "label"), out_axes=(0, None))(dev(x))[1] == "label"


def test_one_vmapped_function_called_with_different_structures():
    f = vmap(lambda d: red.reduce_sum(d["w"]), in_axes=({"w": 1},))
    assert_allclose(f(dev({"w": np.ones((2, 3))})), np.full(3, 2.0))
    assert_allclose(f(dev({"w": np.ones((4, 5))})), np.full(5, 4.0))
    msg = _err(ValueError, f, dev({"v": np.ones((2, 3))}))
    assert "'v'" in msg and "'w'" in msg
    assert_allclose(f(dev({"w": np.ones((2, 3))})), np.full(3, 2.0))


def test_sum_match_sums_a_batched_output_whose_out_axis_is_none():
    # jax.vmap(..., out_axes=None, sum_match=True), JAX 0.10.2 values
    x = dev(np.arange(6.0).reshape(2, 3))
    f = vmap(lambda a: a * 2, out_axes=None, sum_match=True)
    np.testing.assert_array_equal(host(f(x)), [6.0, 10.0, 14.0])
    g = vmap(lambda a: (a, 3.0), out_axes=(0, None), sum_match=True)(x)
    np.testing.assert_array_equal(host(g[0]), host(x))
    assert float(host(g[1])) == 3.0  # unbatched outputs are returned once, not summed
    h = funcgrad.jit(vmap(lambda a: a * 2, in_axes=1, out_axes=None, sum_match=True))
    np.testing.assert_array_equal(host(h(x)), [6.0, 24.0])
    # chunking would sum per chunk: a sum_match call is not chunked
    np.testing.assert_array_equal(
        host(vmap(lambda a: a * 2, out_axes=None, sum_match=True, chunk_size=1)(x)),
        [6.0, 10.0, 14.0])
    assert float(host(grad(lambda w: vmap(lambda a: (a * w).sum(), out_axes=None,
                                          sum_match=True)(x))(2.0))) == 15.0
    with pytest.raises(ValueError, match="depends on the mapped axis"):
        vmap(lambda a: a * 2, out_axes=None)(x)
    with pytest.raises(TypeError, match="sum_match must be a bool"):
        vmap(lambda a: a, sum_match="yes")


def test_an_unmapped_python_number_is_returned_as_it_is() -> None:
    # JAX 0.10.2: vmap(lambda a: 1., out_axes=None)(x) is 1.0 (a float); jacfwd/jacrev/hessian
    # give a Python aux back unchanged (7); under jit the result is an array
    x = dev(np.arange(6.0).reshape(2, 3))
    out = funcgrad.vmap(lambda a: (a, 1.0), out_axes=(0, None))(x)
    assert type(out[1]) is float and out[1] == 1.0
    for jac in (funcgrad.jacfwd, funcgrad.jacrev):
        aux = jac(lambda a: (a * 2, 7), has_aux=True)(x[0])[1]
        assert type(aux) is int and aux == 7
    assert np.shape(host(funcgrad.jit(funcgrad.vmap(lambda a: 1.0, out_axes=None))(x))) == ()


def test_python_control_flow_on_a_batched_value_is_a_runtime_error_too():
    # torch.func.vmap raises RuntimeError ("vmap: It looks like you're calling .item() on a
    # Tensor", "...data-dependent control flow", "...dynamic shape") for each of these; JAX a
    # TypeError subclass: ours are both, and keep JAX's specific classes
    x = np.ones(3)
    cases = [(lambda a: a.item(), funcgrad.errors.ConcretizationError),
             (lambda a: a if a > 0 else -a, funcgrad.errors.TracerBoolConversionError),
             (lambda a: int(a), funcgrad.errors.ConcretizationError),
             (lambda a: range(a), funcgrad.errors.TracerIntegerConversionError),
             (lambda a: np.asarray(a), funcgrad.errors.TracerArrayConversionError),
             (lambda a: a[a > 0], funcgrad.errors.NonConcreteBooleanIndexError)]
    for f, cls in cases:
        with pytest.raises(cls) as info:
            funcgrad.vmap(f)(x)
        assert isinstance(info.value, RuntimeError) and isinstance(info.value, TypeError)
        assert isinstance(info.value, funcgrad.errors.BatchedConcretizationError)
    # under jit alone the errors stay JAX's (TypeErrors, not RuntimeErrors)
    with pytest.raises(funcgrad.errors.TracerBoolConversionError) as info:
        funcgrad.jit(lambda a: a if a > 0 else -a)(1.0)
    assert not isinstance(info.value, RuntimeError)
