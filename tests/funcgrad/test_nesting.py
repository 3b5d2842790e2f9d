"""Nested transformations, closures over tracers at every level, pytree
structures, dtypes and result types of every differentiation API."""

from __future__ import annotations

import collections
from typing import Any

import numpy as np
import pytest
from helpers import assert_allclose, dev, host, is_device_array

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import tree_util

EXACT = dict(rtol=1e-10, atol=1e-12)




def _all_arrays(tree: Any) -> bool:
    return all(is_device_array(v) for v in tree_util.tree_leaves(tree))


# -- perturbation confusion and closures ------------------------------------------------------


def _d(kind: str, f: Any) -> Any:
    """The derivative of scalar ``f`` at a point, by each mode."""
    if kind == "grad":
        return funcgrad.grad(f)
    if kind == "jvp":
        return lambda x: funcgrad.jvp(f, (x,), (1.0,))[1]
    if kind == "linearize":
        return lambda x: funcgrad.linearize(f, x)[1](1.0)
    if kind == "vjp":
        return lambda x: funcgrad.vjp(f, x)[1](1.0)[0]
    if kind == "jacfwd":
        return funcgrad.jacfwd(f)
    if kind == "jacrev":
        return funcgrad.jacrev(f)
    if kind == "jit-grad":
        return funcgrad.jit(funcgrad.grad(f))
    raise AssertionError(kind)


KINDS = ["grad", "jvp", "linearize", "vjp", "jacfwd", "jacrev", "jit-grad"]


@pytest.mark.parametrize("outer", KINDS)
@pytest.mark.parametrize("inner", KINDS)
def test_no_perturbation_confusion_any_pair(outer: str, inner: str) -> None:
    # d/dx [x * d/dy (x * y)]_(y=1) = d/dx x^2 = 2x ; confusing the two would give more.
    def g(x: Any) -> Any:
        return x * _d(inner, lambda y: x * y)(1.0)

    assert_allclose(_d(outer, g)(3.0), np.asarray(6.0), **EXACT)


def test_three_levels_of_closures_mixed_modes() -> None:
    # f(x) = x * (d/dy [y * (d/dz x*y*z)])(1) = x * 2x... at every depth a different mode.
    def level2(x: Any, y: Any) -> Any:
        return y * funcgrad.jvp(lambda z: x * y * z, (1.0,), (1.0,))[1]

    def level1(x: Any) -> Any:
        return x * funcgrad.grad(lambda y: level2(x, y))(1.0)

    # level1(x) = x * d/dy (x y^2) at 1 = 2 x^2  ->  derivative 4x
    assert_allclose(funcgrad.grad(level1)(3.0), np.asarray(12.0), **EXACT)
    assert_allclose(funcgrad.jacfwd(level1)(3.0), np.asarray(12.0), **EXACT)
    assert_allclose(funcgrad.grad(funcgrad.grad(level1))(3.0), np.asarray(4.0), **EXACT)


def test_vmap_inside_grad_capturing_the_grad_tracer() -> None:
    rows = dev(np.arange(6.0).reshape(2, 3))

    def f(s: Any) -> Any:
        return fnp.sum(funcgrad.vmap(lambda r: fnp.sin(r * s) * s)(rows))

    s0 = 0.7
    r = np.arange(6.0).reshape(2, 3)
    expected = np.sum(np.cos(r * s0) * r * s0 + np.sin(r * s0))
    assert_allclose(funcgrad.grad(f)(s0), np.asarray(expected), **EXACT)
    # the same inside jit, and forward mode
    assert_allclose(funcgrad.jit(funcgrad.grad(f))(s0), np.asarray(expected), **EXACT)
    assert_allclose(funcgrad.jvp(f, (s0,), (1.0,))[1], np.asarray(expected), **EXACT)


def test_grad_inside_vmap_capturing_the_batch_tracer() -> None:
    a = dev(np.arange(4.0))
    got = funcgrad.vmap(lambda ai: funcgrad.grad(lambda x: fnp.sin(ai * x) * ai)(0.5))(a)
    av = np.arange(4.0)
    assert_allclose(got, av * av * np.cos(av * 0.5), **EXACT)
    # and a second order derivative of the batch closure, in both orders of vmap/grad
    h = funcgrad.vmap(funcgrad.grad(funcgrad.grad(lambda x, ai: fnp.sin(ai * x))),
                      in_axes=(None, 0))(0.5, a)
    assert_allclose(h, -av * av * np.sin(av * 0.5), **EXACT)


def test_vmap_of_jacrev_of_vmap_and_nested_vmaps_with_different_axes() -> None:
    x = np.random.default_rng(0).standard_normal((2, 3, 4))

    def inner(v: Any) -> Any:  # (4,) -> (4,)
        return fnp.sin(v) * fnp.sum(v)

    got = funcgrad.vmap(funcgrad.jacrev(funcgrad.vmap(inner)))(dev(x))
    assert np.shape(got) == (2, 3, 4, 3, 4)
    for i in range(2):
        ref = funcgrad.jacrev(lambda m: funcgrad.vmap(inner)(m))(dev(x[i]))
        assert_allclose(got[i], ref, **EXACT)
    # vmap(vmap) with the batch axis of each level somewhere else
    y = np.random.default_rng(1).standard_normal((4, 2, 3))
    got = funcgrad.vmap(funcgrad.vmap(lambda a, b: a * fnp.sum(b), in_axes=(1, 0)),
                        in_axes=(1, 0), out_axes=1)(dev(x.transpose(1, 2, 0)), dev(y))
    ref = np.array([[x[j, :, i] * y[i, j].sum() for i in range(4)] for j in range(2)])
    assert_allclose(got, ref, **EXACT)


def test_forward_over_forward_second_order_matches_grad_grad() -> None:
    def f(x: Any) -> Any:
        return fnp.sum(fnp.tanh(x) ** 3 * fnp.cos(x[::-1]))

    x = dev(np.linspace(-1.0, 1.0, 4))
    v, w = dev(np.array([1.0, 0.5, -1.0, 2.0])), dev(np.array([0.0, 1.0, 1.0, -0.5]))
    # w^T H v by forward-over-forward, reverse-over-forward, forward-over-reverse
    ff = funcgrad.jvp(lambda a: funcgrad.jvp(f, (a,), (v,))[1], (x,), (w,))[1]
    rf = fnp.sum(funcgrad.grad(lambda a: funcgrad.jvp(f, (a,), (v,))[1])(x) * w)
    fr = fnp.sum(funcgrad.jvp(funcgrad.grad(f), (x,), (v,))[1] * w)
    hm = host(funcgrad.hessian(f)(x))
    ref = np.asarray(host(w)) @ hm @ np.asarray(host(v))
    for got in (ff, rf, fr):
        assert_allclose(got, np.asarray(ref), rtol=1e-10, atol=1e-12)


def test_stop_gradient_at_each_nesting_level() -> None:
    sg = funcgrad.stop_gradient
    # inner derivative cut: d/dy sg(x*y) = 0, so the outer sees only x * 1
    f1 = lambda x: x * funcgrad.grad(lambda y: sg(x * y) + y)(1.0)  # noqa: E731
    assert_allclose(funcgrad.grad(f1)(2.0), np.asarray(1.0), **EXACT)
    # stopping the closed-over outer value inside the inner function cuts only the outer
    f2 = lambda x: funcgrad.grad(lambda y: sg(x) * y * y)(1.0)  # noqa: E731  (= 2 sg(x))
    assert_allclose(funcgrad.grad(f2)(2.0), np.asarray(0.0), **EXACT)
    assert_allclose(f2(2.0), np.asarray(4.0), **EXACT)
    # every order, every mode, under vmap
    f3 = lambda x: x ** 3 + sg(x ** 2)  # noqa: E731
    assert_allclose(funcgrad.vmap(funcgrad.grad(funcgrad.grad(f3)))(dev(np.array([1.0, 2.0]))),
                    np.array([6.0, 12.0]), **EXACT)
    assert_allclose(funcgrad.hessian(lambda x: fnp.sum(f3(x)))(dev(np.array([1.0, 2.0]))),
                    np.diag([6.0, 12.0]), **EXACT)
    # pytrees pass through
    out = sg({"a": dev(np.ones(2)), "b": (1.0, dev(np.arange(2)))})
    assert_allclose(out, {"a": np.ones(2), "b": (1.0, np.arange(2))})


# -- structures -------------------------------------------------------------------------------


def _pytree_fn(p: Any) -> Any:
    a, c = p["a"]
    return fnp.sum(a ** 2) * c + fnp.sum(fnp.sin(p["b"])) * c ** 2


def _pytree_point() -> dict:
    return {"a": [dev(np.array([1.0, 2.0])), 3.0], "b": dev(np.array([[0.5, -0.5]]))}


def test_hessian_of_a_dict_of_lists_is_a_nested_pytree_of_blocks() -> None:
    p = _pytree_point()
    h = funcgrad.hessian(_pytree_fn)(p)
    shapes = tree_util.tree_map(np.shape, h)
    assert shapes == {
        "a": [{"a": [(2, 2), (2,)], "b": (2, 1, 2)}, {"a": [(2,), ()], "b": (1, 2)}],
        "b": {"a": [(1, 2, 2), (1, 2)], "b": (1, 2, 1, 2)},
    }
    # against the Hessian of the raveled function
    flat, unravel = tree_util.ravel_pytree(p)
    hf = host(funcgrad.hessian(lambda v: _pytree_fn(unravel(v)))(flat))
    assert_allclose(h["a"][0]["a"][0], hf[:2, :2], **EXACT)
    assert_allclose(h["a"][1]["b"], hf[2, 3:].reshape(1, 2), **EXACT)
    assert_allclose(h["b"]["a"][0], hf[3:, :2].reshape(1, 2, 2), **EXACT)
    # jacfwd(jacrev) == jacrev(jacrev) == jacfwd(jacfwd) structurally and numerically
    for alt in (funcgrad.jacrev(funcgrad.jacrev(_pytree_fn)),
                funcgrad.jacfwd(funcgrad.jacfwd(_pytree_fn))):
        assert_allclose(alt(p), h, **EXACT)


def test_jacobian_of_a_function_returning_a_tuple_of_dicts() -> None:
    def f(x: Any, y: Any) -> Any:
        return {"u": x * y, "v": fnp.sum(x)}, {"w": [fnp.outer(x, y)]}

    x, y = dev(np.array([1.0, 2.0])), dev(np.array([3.0, 4.0]))
    jr = funcgrad.jacrev(f, argnums=(0, 1))(x, y)
    jf = funcgrad.jacfwd(f, argnums=(0, 1))(x, y)
    assert_allclose(jr, jf, **EXACT)
    assert tree_util.tree_map(np.shape, jr) == (
        {"u": ((2, 2), (2, 2)), "v": ((2,), (2,))}, {"w": [((2, 2, 2), (2, 2, 2))]})
    assert_allclose(jr[0]["u"][0], np.diag([3.0, 4.0]), **EXACT)
    assert_allclose(jr[0]["v"][1], np.zeros(2), **EXACT)


def test_has_aux_with_pytrees_of_arrays_under_every_api() -> None:
    def f(x: Any) -> Any:
        y = fnp.sin(x)
        return fnp.sum(y), {"y": y, "meta": [x * 2, 3], "name": "f"}

    x = dev(np.array([0.1, 0.2]))
    aux_ref = {"y": np.sin([0.1, 0.2]), "meta": [np.array([0.2, 0.4]), 3], "name": "f"}

    def check_aux(aux: Any) -> None:
        assert aux["name"] == "f" and aux["meta"][1] == 3
        assert_allclose(aux["y"], aux_ref["y"], **EXACT)
        assert_allclose(aux["meta"][0], aux_ref["meta"][0], **EXACT)
        assert is_device_array(aux["y"])  # plain arrays, never tracers

    g, aux = funcgrad.grad(f, has_aux=True)(x)
    check_aux(aux)
    (v, aux), g2 = funcgrad.value_and_grad(f, has_aux=True)(x)
    check_aux(aux)
    assert_allclose(g, g2, **EXACT)
    check_aux(funcgrad.jvp(f, (x,), (x,), has_aux=True)[2])
    check_aux(funcgrad.vjp(f, x, has_aux=True)[2])
    check_aux(funcgrad.linearize(f, x, has_aux=True)[2])
    check_aux(funcgrad.jacfwd(f, has_aux=True)(x)[1])
    check_aux(funcgrad.jacrev(f, has_aux=True)(x)[1])
    check_aux(funcgrad.hessian(f, has_aux=True)(x)[1])
    # aux of an inner grad holding values of the outer trace
    h = funcgrad.grad(lambda s: funcgrad.grad(lambda t: (t * s * t, t * s), has_aux=True)(s)[1])
    assert_allclose(h(3.0), np.asarray(6.0), **EXACT)


def test_none_leaves_and_empty_pytrees() -> None:
    p = {"w": dev(np.array([1.0, 2.0])), "n": None}
    f = lambda p: p["w"] * 2.0  # noqa: E731
    assert funcgrad.grad(lambda p: fnp.sum(f(p)))(p)["n"] is None
    assert funcgrad.jacfwd(f)(p)["n"] is None
    assert funcgrad.jacrev(f)(p)["n"] is None
    y, t = funcgrad.jvp(f, (p,), ({"w": dev(np.ones(2)), "n": None},))
    assert_allclose(t, np.full(2, 2.0), **EXACT)
    assert_allclose(funcgrad.linearize(f, p)[1]({"w": dev(np.ones(2)), "n": None}),
                    np.full(2, 2.0), **EXACT)
    # an output with a None node takes a None cotangent there
    _, pb = funcgrad.vjp(lambda x: (x * 2.0, None), dev(np.ones(2)))
    assert_allclose(pb((dev(np.ones(2)), None))[0], np.full(2, 2.0), **EXACT)
    ft = funcgrad.linear_transpose(lambda x: {"a": 3.0 * x, "b": None}, dev(np.ones(2)))
    assert_allclose(ft({"a": dev(np.ones(2)), "b": None})[0], np.full(2, 3.0), **EXACT)
    # functions of, and returning, empty pytrees
    assert funcgrad.jacfwd(lambda d, x: x * 2.0)({}, 1.0) == {}
    assert funcgrad.jacrev(lambda d, x: x * 2.0)({}, 1.0) == {}
    assert funcgrad.jacfwd(lambda x: {})(dev(np.ones(2))) == {}
    assert funcgrad.jacrev(lambda x: {})(dev(np.ones(2))) == {}
    assert funcgrad.grad(lambda d, x: x * 2.0)({}, 1.0) == {}


def test_tangent_and_cotangent_structures_are_checked() -> None:
    with pytest.raises(ValueError, match="structure"):
        funcgrad.jvp(lambda p: p["a"], ({"a": 1.0},), ({"b": 1.0},))
    _, pb = funcgrad.vjp(lambda x: {"a": x}, 1.0)
    with pytest.raises(ValueError, match="structure"):
        pb({"b": 1.0})
    with pytest.raises(ValueError, match="structure"):
        funcgrad.vjp(lambda x: (x, x), 1.0)[1](1.0)
    with pytest.raises(ValueError, match="structure"):
        funcgrad.linearize(lambda x, y: x * y, 1.0, 2.0)[1](1.0)


def test_namedtuples_ordered_dicts_and_registered_dataclasses() -> None:
    P = collections.namedtuple("P", ["w", "b"])
    p = P(dev(np.array([1.0, 2.0])), dev(np.array([3.0, 4.0])))
    g = funcgrad.grad(lambda p: fnp.sum(p.w * p.b ** 2))(p)
    assert type(g) is P
    assert_allclose(g.w, np.array([9.0, 16.0]), **EXACT)
    od = collections.OrderedDict([("z", 2.0), ("a", 3.0)])
    go = funcgrad.grad(lambda d: d["z"] * d["a"] ** 2)(od)
    assert type(go) is collections.OrderedDict and list(go) == ["z", "a"]
    assert_allclose(go["a"], np.asarray(12.0), **EXACT)
    h = funcgrad.hessian(lambda p: fnp.sum(p.w * p.b ** 2))(p)
    assert type(h) is P and type(h.w) is P
    assert_allclose(h.b.b, np.diag([2.0, 4.0]), **EXACT)


# -- dtypes and result types ------------------------------------------------------------------


def test_float32_parameters_with_float64_data_keep_float32_gradients() -> None:
    w = dev(np.ones(3, np.float32))
    data = dev(np.arange(3.0))

    def loss(w: Any, d: Any) -> Any:
        return fnp.sum((w * d - 1.0) ** 2)  # the product is float64

    for g in (funcgrad.grad(loss)(w, data), funcgrad.jit(funcgrad.grad(loss))(w, data),
              funcgrad.vjp(loss, w, data)[1](1.0)[0], funcgrad.jacrev(loss)(w, data),
              funcgrad.elementwise_grad(lambda w: (w * data) ** 2)(w),
              funcgrad.vmap(funcgrad.grad(loss), in_axes=(0, None))(
                  dev(np.ones((2, 3), np.float32)), data)):
        assert is_device_array(g) and g.dtype == np.float32
    gw, gd = funcgrad.grad(loss, argnums=(0, 1))(w, data)
    assert gw.dtype == np.float32 and gd.dtype == np.float64
    assert funcgrad.hessian(loss)(w, data).dtype == np.float32


def test_python_scalar_arguments_give_float64_array_gradients() -> None:
    a32 = dev(np.ones(3, np.float32))
    cases = [
        funcgrad.grad(lambda x: x * x)(3.0),
        funcgrad.grad(lambda x: x)(3.0),
        funcgrad.grad(lambda s: fnp.sum(s * a32))(2.0),  # float32 arithmetic inside
        funcgrad.jit(funcgrad.grad(lambda s: fnp.sum(s * a32)))(2.0),
        funcgrad.value_and_grad(lambda x: x * 2.0)(1.0)[1],
        funcgrad.jacrev(lambda s: s * a32)(2.0),
        funcgrad.hessian(lambda s: fnp.sum(s * s * a32))(2.0),
        funcgrad.elementwise_grad(lambda x: x * x)(2.0),
        funcgrad.vjp(lambda x: x, 1.0)[1](1.0)[0],
        funcgrad.linear_transpose(lambda x: x, 1.0)(1.0)[0],
    ]
    for g in cases:
        assert is_device_array(g), type(g)
        assert g.dtype == np.float64
    # forward mode: the tangent has the output's dtype; Python tangents become arrays
    y, t = funcgrad.jvp(lambda x: x * a32, (2.0,), (1.0,))
    assert t.dtype == np.float32 and is_device_array(t)
    _, t = funcgrad.jvp(lambda x: x, (2.0,), (1.0,))
    assert is_device_array(t) and t.dtype == np.float64
    assert is_device_array(funcgrad.linearize(lambda x: x, 1.0)[1](1.0))


def test_gradient_results_are_arrays_never_numpy_scalars() -> None:
    # 0-d arithmetic in NumPy returns numpy scalars; gradients must still be arrays.
    cases = [
        funcgrad.grad(lambda x: x * x + x)(dev(np.array(2.0))),
        funcgrad.grad(lambda x: x * x)(np.float32(2.0)),
        funcgrad.grad(lambda p: p["a"] * p["a"] * p["b"])({"a": 2.0, "b": 3.0}),
        funcgrad.grad(lambda z: fnp.abs(z) ** 2)(3.0 + 4.0j),
        funcgrad.grad(lambda x: funcgrad.grad(lambda y: y * x)(x) * x)(3.0),
    ]
    for g in cases:
        # NumPy scalar inputs compute on the host: a host array is right for them.
        assert all(type(v) is np.ndarray or is_device_array(v) for v in tree_util.tree_leaves(g)), g


def test_outputs_independent_of_an_input_give_zeros_of_its_shape_and_dtype() -> None:
    x32 = dev(np.ones((2, 3), np.float32))
    y = dev(np.arange(3.0))
    f = lambda x, y: fnp.sum(y ** 2)  # noqa: E731
    gx, gy = funcgrad.grad(f, argnums=(0, 1))(x32, y)
    assert gx.shape == (2, 3) and gx.dtype == np.float32 and not np.any(host(gx))
    assert_allclose(gy, 2 * np.arange(3.0), **EXACT)
    jx = funcgrad.jacfwd(lambda x, y: y * 2.0, argnums=0)(x32, y)
    assert jx.shape == (3, 2, 3) and not np.any(host(jx))
    jr = funcgrad.jacrev(lambda x, y: y * 2.0, argnums=0)(x32, y)
    assert jr.shape == (3, 2, 3) and jr.dtype == np.float32 and not np.any(host(jr))
    h = funcgrad.hessian(lambda x: 3.0)(x32)
    assert h.shape == (2, 3, 2, 3) and not np.any(host(h))
    _, t = funcgrad.jvp(lambda x: 1.0, (x32,), (x32,))
    assert is_device_array(t) and not np.any(host(t))
    # a constant output (Python scalar) still differentiates to zeros
    assert_allclose(funcgrad.grad(lambda x: 3.0)(2.0), np.asarray(0.0), **EXACT)


def test_zero_size_and_zero_dim_inputs() -> None:
    e = dev(np.zeros((0, 3)))
    assert funcgrad.grad(lambda x: fnp.sum(x ** 2))(e).shape == (0, 3)
    assert funcgrad.jacfwd(lambda x: x ** 2)(e).shape == (0, 3, 0, 3)
    assert funcgrad.jacrev(lambda x: x ** 2)(e).shape == (0, 3, 0, 3)
    assert funcgrad.hessian(lambda x: fnp.sum(x ** 3))(e).shape == (0, 3, 0, 3)
    assert funcgrad.vmap(funcgrad.grad(lambda x: fnp.sum(x ** 2)))(e).shape == (0, 3)
    assert funcgrad.jacrev(lambda x: x[:0])(dev(np.ones(3))).shape == (0, 3)
    s = dev(np.asarray(0.5))
    assert_allclose(funcgrad.hessian(lambda x: x ** 3)(s), np.asarray(3.0), **EXACT)
    assert funcgrad.jacfwd(lambda x: fnp.stack([x, x]))(s).shape == (2,)


def test_holomorphic_derivatives_agree_across_apis() -> None:
    z = dev(np.array([1.0 + 1.0j, 0.5 - 2.0j]))
    f = lambda z: z ** 3 + fnp.sin(z)  # noqa: E731
    d = 3 * host(z) ** 2 + np.cos(host(z))
    assert_allclose(funcgrad.jacfwd(f, holomorphic=True)(z), np.diag(d), **EXACT)
    assert_allclose(funcgrad.jacrev(f, holomorphic=True)(z), np.diag(d), **EXACT)
    assert_allclose(funcgrad.vmap(funcgrad.grad(f, holomorphic=True))(z), d, **EXACT)
    assert_allclose(funcgrad.elementwise_grad(lambda z: fnp.real(f(z)))(z), np.conj(d) * 0 + d,
                    **EXACT)
    h = funcgrad.hessian(lambda z: fnp.sum(z ** 3), holomorphic=True)(z)
    assert_allclose(h, np.diag(6 * host(z)), **EXACT)


def test_allow_int_mixes_integers_and_floats() -> None:
    def f(x: Any, n: Any, b: Any) -> Any:
        return fnp.sum(fnp.where(b, x ** n, 0.0))

    x, n, b = dev(np.array([1.0, 2.0])), dev(np.array([2, 3])), dev(np.array([True, False]))
    gx, gn, gb = funcgrad.grad(f, argnums=(0, 1, 2), allow_int=True)(x, n, b)
    assert_allclose(gx, np.array([2.0, 0.0]), **EXACT)
    assert gn.dtype == funcgrad.float0 and gn.shape == (2,)
    assert gb.dtype == funcgrad.float0 and gb.shape == (2,)
    jn = funcgrad.jacrev(lambda x, n: x ** n, argnums=(0, 1), allow_int=True)(x, n)[1]
    # as JAX: a Jacobian block of an integer input is zeros of its dtype (float0: bools only)
    assert jn.dtype == np.int64 and jn.shape == (2, 2) and not np.any(host(jn))
    with pytest.raises(TypeError, match="allow_int"):
        funcgrad.grad(f, argnums=1)(x, n, b)
    # a jitted grad with an int argument returns float0 too
    gn = funcgrad.jit(funcgrad.grad(f, argnums=(0, 1), allow_int=True))(x, n, b)[1]
    assert gn.dtype == funcgrad.float0


def test_ravel_pytree_is_differentiable_and_batchable() -> None:
    p = {"a": dev(np.array([1.0, 2.0])), "b": 3.0}
    g = funcgrad.grad(lambda p: fnp.sum(tree_util.ravel_pytree(p)[0] ** 2))(p)
    assert_allclose(g, {"a": np.array([2.0, 4.0]), "b": np.asarray(6.0)}, **EXACT)
    flat = funcgrad.vmap(lambda a: tree_util.ravel_pytree({"a": a, "b": 1.0})[0])(
        dev(np.ones((3, 2))))
    assert_allclose(flat, np.ones((3, 3)), **EXACT)
    j = funcgrad.jit(lambda a: tree_util.ravel_pytree([a, 2.0 * a])[0])(dev(np.ones(2)))
    assert_allclose(j, np.array([1.0, 1.0, 2.0, 2.0]), **EXACT)
    flat, unravel = tree_util.ravel_pytree({"a": dev(np.ones(2, np.float32)), "b": 1.0})
    assert is_device_array(flat) and flat.dtype == np.float32
    assert_allclose(unravel(flat)["b"], np.asarray(1.0))


# -- traced integer indices -------------------------------------------------------------------


def test_python_int_arguments_as_indices_under_jit_and_in_loops() -> None:
    # jit passes a traced Python-int argument to the indexing primitives as a Python int.
    xs = dev(np.arange(12.0).reshape(4, 3))
    ref = np.arange(12.0).reshape(4, 3)
    assert_allclose(funcgrad.jit(lambda a, i: a[i])(xs, 1), ref[1])
    assert_allclose(funcgrad.jit(lambda a, i: a[i])(xs, -1), ref[-1])
    assert_allclose(funcgrad.jit(lambda a, i, j: a[i, j])(xs, 1, 2), np.asarray(5.0))
    assert_allclose(funcgrad.jit(lambda a, i: fnp.take(a, i, axis=1))(xs, 2), ref[:, 2])
    for op, expected in [("add", ref[1] + 1.0), ("set", np.ones(3)),
                         ("multiply", ref[1] * 2.0), ("max", np.full(3, 100.0))]:
        val = {"add": 1.0, "set": 1.0, "multiply": 2.0, "max": 100.0}[op]
        out = funcgrad.jit(lambda a, i: getattr(fnp.at(a)[i], op)(val))(xs, 1)  # noqa: B023
        assert_allclose(out[1], expected)
        assert_allclose(out[0], ref[0])
    g = funcgrad.jit(funcgrad.grad(lambda a, i: fnp.sum(a[i] ** 2)))(xs, 1)
    assert_allclose(g, np.where(np.arange(4)[:, None] == 1, 2 * ref, 0.0))
    # a loop counter indexing a closed-over array, through every transformation
    w = dev(np.array([0.5, -1.0, 2.0, 0.25]))

    def f(c: Any) -> Any:
        return funcgrad.fori_loop(0, 4, lambda i, s: s * fnp.take(w, i) + fnp.sin(s), c)

    def f_ref(c: Any) -> Any:
        s = c
        for i in range(4):
            s = s * w[i] + fnp.sin(s)
        return s

    for t in (funcgrad.grad, funcgrad.jacfwd, lambda h: funcgrad.jit(funcgrad.grad(h)),
              lambda h: funcgrad.grad(funcgrad.grad(h))):
        assert_allclose(t(f)(0.3), t(f_ref)(0.3), **EXACT)
    assert_allclose(funcgrad.vmap(f)(dev(np.array([0.3, -0.2]))),
                    funcgrad.vmap(f_ref)(dev(np.array([0.3, -0.2]))), **EXACT)


def test_indexing_a_numpy_array_with_a_traced_index_says_what_to_do() -> None:
    xs = np.arange(12.0).reshape(4, 3)
    with pytest.raises(funcgrad.ConcretizationError, match=r"fnp\.take\(x, i, axis=0\)"):
        funcgrad.fori_loop(0, 3, lambda i, c: c + xs[i], np.zeros(3))


def test_python_control_flow_on_primal_values_under_jacobians() -> None:
    # jacfwd/hessian batch only the tangents: primal values stay concrete.
    def f(x: Any) -> Any:
        if fnp.sum(x) > 0:
            return fnp.sum(x ** 3)
        return fnp.sum(-x)

    x = dev(np.array([1.0, 2.0]))
    for h in (funcgrad.hessian(f), funcgrad.jacfwd(funcgrad.grad(f)),
              funcgrad.jacrev(funcgrad.grad(f)), funcgrad.hessian(f, chunk_size=1)):
        assert_allclose(h(x), np.diag([6.0, 12.0]), **EXACT)
    # float() of a differentiated value would drop its derivative: an error; a constant is
    # asked for with stop_gradient.
    with pytest.raises(funcgrad.ConcretizationError, match="would drop its derivative"):
        funcgrad.jacfwd(lambda v: v * float(fnp.sum(v)))(x)
    assert_allclose(funcgrad.jacfwd(lambda v: v * float(funcgrad.stop_gradient(fnp.sum(v))))(x),
                    3.0 * np.eye(2), **EXACT)
    with pytest.raises(funcgrad.ConcretizationError):
        funcgrad.vmap(funcgrad.hessian(f))(dev(np.stack([np.ones(2), -np.ones(2)])))


def test_linear_transpose_of_a_python_scalar_input_matches_vjp() -> None:
    a32 = dev(np.ones(2, np.float32))
    f = lambda x: x * a32  # noqa: E731  (float32: the Python scalar is weak)
    ct = dev(np.array([1.0, 2.0], np.float32))
    (lt,) = funcgrad.linear_transpose(f, 1.0)(ct)
    (vj,) = funcgrad.vjp(f, 1.0)[1](ct)
    assert lt.dtype == vj.dtype == np.float64
    assert_allclose(lt, np.asarray(3.0), **EXACT)
    assert_allclose(vj, np.asarray(3.0), **EXACT)
    assert funcgrad.linear_transpose(lambda x: x * 2.0, np.float32(1.0))(
        np.float32(1.0))[0].dtype == np.float32
