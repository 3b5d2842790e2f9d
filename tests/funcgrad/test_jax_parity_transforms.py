"""Transformations and pytree utilities compared with JAX 0.10.2 (x64).

Expected values were recorded from JAX (``jax.config.update("jax_enable_x64", True)``) and
are written here as literals: CI never imports JAX. Each test names the JAX call it mirrors.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import dev, host

import funcgrad
import funcgrad.numpy as fnp


def _x() -> np.ndarray:
    return dev(np.array([1.0, 2.0, 3.0]))


# -- stop_gradient of a pytree ------------------------------------------------------------------


def test_stop_gradient_cuts_every_leaf_of_a_pytree() -> None:
    # jax.grad(lambda a: jnp.sum(jax.lax.stop_gradient({"u": a})["u"] * a))(x) == x
    g = funcgrad.grad(lambda a: fnp.sum(funcgrad.stop_gradient({"u": a})["u"] * a))(_x())
    np.testing.assert_allclose(host(g), [1.0, 2.0, 3.0])
    out = funcgrad.stop_gradient({"u": _x(), "n": None, "t": (1.0,)})
    assert sorted(out) == ["n", "t", "u"] and out["n"] is None


# -- Jacobian blocks of integer inputs and outputs ----------------------------------------------


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_jacrev_allow_int_block_is_zeros_of_the_integer_dtype(dtype) -> None:
    # jax.jacrev(lambda a, b: a * b, (0, 1), allow_int=True)(arange(3, dtype), x)
    ja, jb = funcgrad.jacrev(lambda a, b: a * b, (0, 1), allow_int=True)(
        dev(np.arange(3, dtype=dtype)), _x())
    assert ja.dtype == dtype and ja.shape == (3, 3) and not host(ja).any()
    np.testing.assert_allclose(host(jb), np.diag([0.0, 1.0, 2.0]))


@pytest.mark.parametrize("jac", [funcgrad.jacfwd, funcgrad.jacrev])
def test_jacobian_of_an_integer_output_is_zeros_of_its_dtype(jac) -> None:
    # jax.jacfwd(lambda z: (z, jnp.arange(2)))(x)[1]: int64 zeros of shape (2, 3); jacrev has no
    # integer outputs (an error), so it gets an integer-valued float output instead.
    if jac is funcgrad.jacfwd:
        _, j_int = jac(lambda z: (z, (z > 1).astype(fnp.int32)))(_x())
        assert j_int.dtype == np.int32 and j_int.shape == (3, 3) and not host(j_int).any()
    else:
        with pytest.raises(TypeError, match="real-valued"):
            jac(lambda z: (z > 1).astype(fnp.int32))(_x())


def test_jacobian_of_a_boolean_input_stays_float0() -> None:
    # JAX cannot build this block (it fails casting float0 to bool); ours is float0 zeros.
    jb, _ = funcgrad.jacrev(lambda a, b: b * 2.0, (0, 1), allow_int=True)(
        np.array([True, False]), _x())
    assert jb.dtype == funcgrad.float0 and jb.shape == (3, 2)


# -- jit options and vmap's spmd_axis_name ------------------------------------------------------


def _affine(a, b):
    return a * 2.0 + b


def test_jit_donate_argnames_marks_the_argument_by_position_or_keyword() -> None:
    # jax.jit(f, donate_argnames="b"): b is donated whether passed by position or keyword.
    f = funcgrad.jit(_affine, donate_argnames="b")
    x, y = dev(np.ones(3)), dev(np.ones(3))
    assert f.lower(x, y).compile().donated_invars == (False, True)
    assert f.lower(x, b=y).compile().donated_invars == (False, True)
    assert funcgrad.jit(_affine, donate_argnums=-1).lower(x, y).compile().donated_invars == (
        False, True)
    np.testing.assert_allclose(host(f(dev(np.ones(3)), b=dev(np.ones(3)))), [3.0, 3.0, 3.0])


@pytest.mark.parametrize("kw", [dict(static_argnums=0, donate_argnums=0),
                                dict(static_argnames="b", donate_argnums=1),
                                dict(donate_argnames="zz"), dict(donate_argnums=5)])
def test_jit_bad_donation_raises_value_error_as_jax(kw) -> None:
    with pytest.raises(ValueError, match=r"jit\(_affine\)"):
        funcgrad.jit(_affine, **kw)


def test_jit_inline_traces_into_the_enclosing_program() -> None:
    inner = funcgrad.jit(lambda a: fnp.sin(a) * 2.0, inline=True)
    prims = [e.prim.name for e in funcgrad.make_jaxpr(lambda a: inner(a) + 1.0)(
        dev(np.ones(2))).jaxpr.eqns]
    assert prims == ["sin", "mul", "add"]
    x = dev(np.array([0.5, 1.0]))
    np.testing.assert_allclose(host(inner(x)), 2 * np.sin([0.5, 1.0]))
    np.testing.assert_allclose(host(funcgrad.jit(lambda a: inner(a).sum())(x)),
                               2 * np.sin([0.5, 1.0]).sum())
    np.testing.assert_allclose(host(funcgrad.grad(lambda a: inner(a).sum())(x)),
                               2 * np.cos([0.5, 1.0]))


def test_jit_keep_unused_and_vmap_spmd_axis_name_are_accepted() -> None:
    x = dev(np.arange(6.0).reshape(2, 3))
    out = funcgrad.jit(lambda a, b: a * 2.0, keep_unused=True)(x, x)
    np.testing.assert_allclose(host(out), 2 * np.arange(6.0).reshape(2, 3))
    out = funcgrad.vmap(lambda a: a.sum(), spmd_axis_name="data")(x)
    np.testing.assert_allclose(host(out), [3.0, 12.0])


# -- error kinds: JAX raises TypeError in some places, ValueError in others ---------------------


def _raises_both(call) -> None:
    with pytest.raises(funcgrad.ArgumentMismatchError) as info:
        call()
    assert isinstance(info.value, TypeError) and isinstance(info.value, ValueError)


def test_tangent_and_cotangent_mismatches_are_type_and_value_errors() -> None:
    x, x32 = _x(), dev(np.ones(3, np.float32))
    _, f_vjp = funcgrad.vjp(lambda a: a * 2.0, x)
    _raises_both(lambda: f_vjp(x32))  # JAX: ValueError (dtype of the cotangent)
    _raises_both(lambda: f_vjp(dev(np.ones(2))))  # JAX: ValueError (shape)
    _, f_jvp = funcgrad.linearize(fnp.sin, x)
    _raises_both(lambda: f_jvp(x32))  # JAX: ValueError
    _raises_both(lambda: funcgrad.jvp(fnp.sin, (x,), (x32,)))  # JAX: TypeError
    _raises_both(lambda: funcgrad.jvp(fnp.sin, (x,), (x, x)))  # JAX: TypeError
    _raises_both(lambda: funcgrad.jvp(lambda a: a[0] * a[1], ([2.0, 3.0],),
                                      ((1.0, 1.0),)))  # JAX: TypeError (list vs tuple)
    f_t = funcgrad.linear_transpose(lambda a: a * 2.0, x)
    _raises_both(lambda: f_t(dev(np.ones(2))))  # JAX: TypeError


def test_a_container_where_an_array_belongs_is_a_structure_error_as_jax() -> None:
    # A bare-array output given a tuple cotangent: JAX names the tree structures (ValueError
    # for vjp, TypeError for jvp and linear_transpose); it was taken for an array before.
    x = _x()
    _, f_vjp = funcgrad.vjp(fnp.sin, x)
    with pytest.raises(funcgrad.ArgumentMismatchError, match="structured like"):
        f_vjp((x,))
    with pytest.raises(funcgrad.ArgumentMismatchError, match="structured like"):
        funcgrad.jvp(fnp.sin, (x,), ((x,),))
    with pytest.raises(funcgrad.ArgumentMismatchError, match="structured like"):
        funcgrad.linear_transpose(lambda a: a * 2.0, x)((x,))
    _, f_jvp = funcgrad.linearize(fnp.sin, x)
    with pytest.raises(funcgrad.ArgumentMismatchError, match="structured like"):
        f_jvp([x])


@pytest.mark.parametrize("transform", [funcgrad.grad, funcgrad.jacfwd, funcgrad.jacrev,
                                       funcgrad.hessian, funcgrad.value_and_grad])
def test_argnums_out_of_range_is_type_and_value_error(transform) -> None:
    # JAX: TypeError from grad, ValueError from jacfwd/jacrev/hessian
    _raises_both(lambda: transform(lambda a, b: a * b, argnums=2)(1.0, 2.0))


def test_unhashable_static_argument_is_type_and_value_error() -> None:
    f = funcgrad.jit(lambda a, n: a * len(n), static_argnums=1)
    _raises_both(lambda: f(_x(), [2]))  # JAX: ValueError


# -- checkpoint policies and custom_vjp options of JAX ------------------------------------------


def test_every_jax_checkpoint_policy_name_exists_and_differentiates_alike() -> None:
    # sorted(n for n in dir(jax.checkpoint_policies) if not n.startswith("_"))
    names = ["checkpoint_dots", "checkpoint_dots_with_no_batch_dims", "dots_saveable",
             "dots_with_no_batch_dims_saveable", "everything_saveable", "nothing_saveable",
             "offload_dot_with_no_batch_dims", "save_and_offload_only_these_names",
             "save_any_names_but_these", "save_anything_except_these_names",
             "save_from_both_policies", "save_only_these_names"]
    cp = funcgrad.checkpoint_policies
    assert all(hasattr(cp, n) for n in names)
    policies = [cp.offload_dot_with_no_batch_dims("device", "pinned_host"),
                cp.save_and_offload_only_these_names(
                    names_which_can_be_saved=["a"], names_which_can_be_offloaded=["b"],
                    offload_src="device", offload_dst="pinned_host"),
                cp.save_anything_except_these_names("a")]
    w = dev(np.array([[0.5, -1.0], [2.0, 0.3]]))

    def f(policy):
        def body(m):
            a = funcgrad.checkpoint_name(m @ m.T, "a")
            return fnp.sum(fnp.sin(funcgrad.checkpoint_name(a * 2.0, "b")))
        return funcgrad.grad(funcgrad.checkpoint(body, policy=policy))(w)

    expected = host(funcgrad.grad(lambda m: fnp.sum(fnp.sin(m @ m.T * 2.0)))(w))
    for p in policies:
        np.testing.assert_allclose(host(f(p)), expected, rtol=1e-12)


def test_custom_vjp_defvjp_takes_optimize_remat() -> None:
    # jax: f.defvjp(fwd, bwd, optimize_remat=True); grad(f)(1.0) == 3.0
    f = funcgrad.custom_vjp(lambda a: a * 2.0)
    f.defvjp(lambda a: (a * 2.0, None), lambda r, g: (g * 3.0,), optimize_remat=True)
    assert float(funcgrad.grad(f)(1.0)) == 3.0
    assert float(funcgrad.grad(lambda a: funcgrad.checkpoint(f)(a))(1.0)) == 3.0


# -- pure_callback (jax.pure_callback) ----------------------------------------------------------


def _sd(shape, dtype=np.float32):
    return funcgrad.ShapeDtypeStruct(shape, dtype)


@pytest.mark.parametrize("method", ["sequential", "expand_dims", "broadcast_all",
                                    "legacy_vectorized"])
def test_pure_callback_under_vmap_and_jit_as_jax(method) -> None:
    x = dev((np.ones((2, 3)) * np.arange(3)).astype(np.float32))
    # jax.vmap(lambda a, b: jax.pure_callback(lambda u, v: u * v, sd((3,)), a, b,
    #          vmap_method=m), in_axes=(0, None))(x, x[1]) == x * x[1], float32
    out = funcgrad.jit(funcgrad.vmap(
        lambda a, b: funcgrad.pure_callback(lambda u, v: u * v, _sd((3,)), a, b,
                                            vmap_method=method), in_axes=(0, None)))(x, x[1])
    assert out.dtype == np.float32
    np.testing.assert_allclose(host(out), [[0.0, 1.0, 4.0]] * 2)
    out = funcgrad.vmap(funcgrad.vmap(lambda a: funcgrad.pure_callback(
        np.sin, _sd(()), a, vmap_method=method)))(x)
    np.testing.assert_allclose(host(out), np.sin(host(x)), rtol=1e-6)


def test_pure_callback_errors_as_jax() -> None:
    x = dev(np.ones((2, 3), np.float32))
    with pytest.raises(NotImplementedError, match="vmap_method"):  # jax: NotImplementedError
        funcgrad.vmap(lambda a: funcgrad.pure_callback(np.sin, _sd((3,)), a))(x)
    with pytest.raises(ValueError, match="no derivative"):  # jax: ValueError
        funcgrad.grad(lambda a: funcgrad.pure_callback(np.sin, _sd((), np.float64), a))(1.0)
    with pytest.raises(ValueError, match="shape"):
        funcgrad.jit(lambda a: funcgrad.pure_callback(lambda v: v[:2], _sd((3,)), a))(x[0])
    with pytest.raises(TypeError, match="float32"):
        funcgrad.pure_callback(lambda v: v, _sd((3,), np.int32), x[0])


def test_pure_callback_result_dtype_must_be_the_declared_one_as_jax() -> None:
    # JAX 0.10.2 casts nothing: "Incorrect output dtype for return value #0: Expected: float32,
    # Actual: float64" (JaxRuntimeError), eagerly, under jit and per example under vmap; a
    # Python float is float64.
    x = dev(np.ones(2, np.float32))
    cases = [
        lambda: funcgrad.pure_callback(lambda v: v.astype(np.float64), _sd((2,)), x),
        lambda: funcgrad.jit(lambda a: funcgrad.pure_callback(lambda v: 1.0, _sd(()), a))(x),
        lambda: funcgrad.vmap(lambda a: funcgrad.pure_callback(
            lambda v: np.float64(v), _sd(()), a, vmap_method="sequential"))(x),
        lambda: funcgrad.experimental.io_callback(lambda v: v.astype(np.float64), _sd((2,)), x),
    ]
    for case in cases:
        with pytest.raises(funcgrad.errors.JaxRuntimeError,
                           match="expected float32.*actual float64"):
            case()
    with pytest.raises(TypeError, match="return value #1 .*expected int32.*actual int64"):
        funcgrad.pure_callback(lambda: (np.ones(2), np.int64(3)),
                               (_sd((2,), np.float64), _sd((), np.int32)))
    # the declared dtype exactly is fine (a Python float is float64)
    assert float(funcgrad.jit(lambda a: funcgrad.pure_callback(
        lambda v: 1.5, _sd((), np.float64), a))(x)) == 1.5


def test_pure_callback_pytrees_kwargs_and_custom_jvp() -> None:
    x = dev(np.arange(3.0, dtype=np.float32))
    # (the callback computes in NumPy: float32 * an int64 operand is float64, cast back)
    out = funcgrad.pure_callback(lambda v, k: {"o": (v * k).astype(v.dtype)}, {"o": _sd((3,))},
                                 x, k=2)
    assert out["o"].dtype == np.float32
    np.testing.assert_allclose(host(out["o"]), [0.0, 2.0, 4.0])
    # jax.jit(jax.grad(custom_jvp(pure_callback(np.sin)) with defjvps cos))(0.5) == cos(0.5)
    g = funcgrad.custom_jvp(lambda a: funcgrad.pure_callback(np.sin, _sd((), np.float64), a))
    g.defjvps(lambda t, ans, a: fnp.cos(a) * t)
    assert float(funcgrad.jit(funcgrad.grad(g))(0.5)) == pytest.approx(np.cos(0.5))
    # a stop_gradient'ed operand needs no derivative: jax gives sin(0.5)
    v = funcgrad.grad(lambda a: a * funcgrad.pure_callback(
        np.sin, _sd((), np.float64), funcgrad.stop_gradient(a)))(0.5)
    assert float(v) == pytest.approx(np.sin(0.5))


def test_pure_callback_results_match_leaf_by_leaf_as_jax() -> None:
    # JAX 0.10.2 flattens the callback's result: a list for a declared tuple is accepted
    # ((array([1., 1.]), array([0.])) from jax.pure_callback) ...
    two = (_sd((2,), np.float64), _sd((1,), np.float64))
    out = funcgrad.pure_callback(lambda: [np.ones(2), np.zeros(1)], two)
    assert isinstance(out, tuple)
    np.testing.assert_array_equal(host(out[0]), [1.0, 1.0])
    np.testing.assert_array_equal(host(out[1]), [0.0])
    # ... a different number of leaves is not
    with pytest.raises(TypeError, match="structured as"):
        funcgrad.pure_callback(lambda: [np.ones(2)], two)


# -- closure_convert (jax.closure_convert) ------------------------------------------------------


def _apply_with_custom_vjp(fn, x, consts):
    """The use closure_convert exists for: a custom_vjp function given the closed-over values
    as arguments (its bwd returns their cotangents)."""
    from functools import partial

    @partial(funcgrad.custom_vjp, nondiff_argnums=(0,))
    def apply(f, x, *c):
        return f(x, *c)

    def fwd(f, x, *c):
        return apply(f, x, *c), (x, c)

    def bwd(f, res, g):
        x, c = res
        _, pull = funcgrad.vjp(f, x, *c)
        return pull(g)

    apply.defvjp(fwd, bwd)
    return apply(fn, x, *consts)


def test_closure_convert_hoists_traced_float_values_as_jax() -> None:
    ar = dev(np.arange(3.0))

    def outer(w):
        f = lambda x: fnp.sin(x * w) + ar  # noqa: E731
        cf, consts = funcgrad.closure_convert(f, dev(np.ones(3)))
        # jax: one const (w, shape ()); the NumPy array stays closed over
        assert len(consts) == 1 and consts[0].aval.shape == ()
        return fnp.sum(_apply_with_custom_vjp(cf, dev(np.ones(3)), consts))

    # jax.grad(outer)(2.0) == 3 * cos(2.0) = -1.2484405096414273
    assert float(funcgrad.grad(outer)(2.0)) == pytest.approx(-1.2484405096414273, rel=1e-12)
    assert float(funcgrad.jit(funcgrad.grad(outer))(2.0)) == pytest.approx(-1.2484405096414273)
    ws = dev(np.array([1.0, 2.0]))
    np.testing.assert_allclose(host(funcgrad.vmap(funcgrad.grad(outer))(ws)),
                               3 * np.cos([1.0, 2.0]))
    # Nothing traced closed over: no consts, the function itself (jax: [] and 6.0)
    cf, consts = funcgrad.closure_convert(lambda x: x * 2.0, 1.0)
    assert consts == [] and float(cf(3.0)) == 6.0
    with pytest.raises(TypeError, match="takes 1 argument"):
        cf(1.0, 2.0)


# -- device_get, block_until_ready, typeof, disable_jit -----------------------------------------


def test_device_get_block_until_ready_and_typeof_as_jax() -> None:
    # jax.device_get({'a': jnp.ones(2), 'b': 3, 'c': None}) -> host arrays, others as they are
    got = funcgrad.device_get({"a": dev(np.ones(2)), "b": 3, "c": None})
    assert type(got["a"]) is np.ndarray and got["b"] == 3 and got["c"] is None
    tree = {"a": dev(np.ones(2)), "b": 3}
    assert funcgrad.block_until_ready(tree) is tree
    # jax.typeof(1.0) is a weak float scalar; of an array its shape and dtype
    t = funcgrad.typeof(dev(np.ones((2, 3), np.float32)))
    assert t.shape == (2, 3) and t.dtype == np.float32 and not t.weak_type
    assert funcgrad.typeof(1.0).weak_type and funcgrad.typeof(1.0).shape == ()
    seen = []
    funcgrad.jit(lambda x: seen.append(funcgrad.typeof(x)) or x)(dev(np.ones(2)))
    assert seen[0].shape == (2,)


def test_disable_jit_runs_the_python_function() -> None:
    calls = []

    @funcgrad.jit
    def f(x):
        calls.append(type(x).__name__)
        return float(x.sum()) if x.sum() > 0 else 0.0  # concrete only without jit

    with funcgrad.disable_jit():
        assert f(np.ones(3)) == 3.0
        assert f(np.ones(3)) == 3.0
    assert calls == ["ndarray", "ndarray"] and f.trace_count == 0
    with funcgrad.disable_jit(False):
        with pytest.raises(funcgrad.ConcretizationError):
            f(np.ones(3))


# -- jaxpr and ShapeDtypeStruct attributes of JAX -----------------------------------------------


def test_eqn_primitive_and_shape_dtype_struct_update_as_jax() -> None:
    closed = funcgrad.make_jaxpr(lambda a: fnp.sin(a) * 2.0)(np.ones(2))
    # [e.primitive.name for e in jax.make_jaxpr(...)(...).jaxpr.eqns] == ['sin', 'mul']
    assert [e.primitive.name for e in closed.jaxpr.eqns] == ["sin", "mul"]
    s = funcgrad.ShapeDtypeStruct((2, 3), np.float32)
    # jax: ShapeDtypeStruct(shape=(4,), dtype=float32)
    assert s.update(shape=(4,)) == funcgrad.ShapeDtypeStruct((4,), np.float32)
    assert s.update(dtype=np.int32).dtype == np.int32 and s.shape == (2, 3)
    assert s.update(sharding=None) == s  # JAX has sharding too
    with pytest.raises(TypeError, match="unknown field"):
        s.update(layout=None)


def test_jitted_eval_shape_as_jax() -> None:
    # jax.jit(f, static_argnums=1).eval_shape(ones(5), 2) -> ShapeDtypeStruct((2,), float64)
    f = funcgrad.jit(lambda x, n: {"h": x[:n], "s": x.sum()}, static_argnums=1)
    out = f.eval_shape(np.ones(5), 2)
    assert out == {"h": funcgrad.ShapeDtypeStruct((2,), np.float64),
                   "s": funcgrad.ShapeDtypeStruct((), np.float64)}
    assert f.trace_count <= 1


# -- custom rules returning (co)tangents of the wrong structure or shape ------------------------


def test_custom_vjp_bwd_cotangent_of_another_structure_is_refused_as_jax() -> None:
    # jax: TypeError "Custom VJP bwd rule must produce an output with the same container
    # (pytree) structure as the args tuple"; a dict for a scalar argument was taken silently.
    f = funcgrad.custom_vjp(lambda a: a * 2.0)
    f.defvjp(lambda a: (f(a), None), lambda r, g: ({"x": g},))
    with pytest.raises(TypeError, match="structure"):
        funcgrad.grad(f)(1.0)
    # None stands for any zero subtree
    h = funcgrad.custom_vjp(lambda p: p["a"] * p["b"][0])
    h.defvjp(lambda p: (h(p), p), lambda p, g: ({"a": g * p["b"][0], "b": None},))
    g = funcgrad.grad(h)({"a": 2.0, "b": [3.0]})
    assert float(g["a"]) == 3.0 and float(g["b"][0]) == 0.0


def test_custom_jvp_tangent_of_another_shape_is_type_and_value_error() -> None:
    f = funcgrad.custom_jvp(lambda a: a * 2.0)
    f.defjvp(lambda p, t: (f(*p), dev(np.ones(2))))
    _raises_both(lambda: funcgrad.jvp(f, (_x(),), (_x(),)))  # jax: TypeError


def test_vmap_positional_parameters_in_jax_order() -> None:
    # jax.vmap(fun, in_axes, out_axes, axis_name, axis_size, spmd_axis_name)
    from funcgrad import lax

    y = dev(np.array([[1.0, 3.0], [2.0, 2.0]]))
    out = funcgrad.vmap(lambda a: a / lax.psum(a, "i"), 0, 0, "i")(y)
    np.testing.assert_allclose(host(out), [[1 / 3, 0.6], [2 / 3, 0.4]])
    out = funcgrad.vmap(lambda: 1.0, None, 0, None, 3)()
    assert host(out).shape == (3,)


# -- custom_jvp with symbolic zeros (defjvp(..., symbolic_zeros=True)) --------------------------


def _sz_mul():
    from funcgrad.custom_derivatives import SymbolicZero

    h = funcgrad.custom_jvp(lambda a, b: a * b)

    def h_jvp(primals, tangents):
        a, b = primals
        ta, tb = tangents
        za, zb = type(ta) is SymbolicZero, type(tb) is SymbolicZero
        out = 0.0
        if not za:
            out = out + ta * b
        if not zb:
            out = out + tb * a * 10
        return a * b, out + za * 100.0 + zb * 1000.0  # marks which tangents were symbolic

    h.defjvp(h_jvp, symbolic_zeros=True)
    return h


def test_custom_jvp_symbolic_zeros_as_jax() -> None:
    h = _sz_mul()
    # jax.jvp(lambda b: h(3.0, b), (2.0,), (1.0,)) == (6.0, 130.0); the a-side: (6.0, 1002.0)
    y, t = funcgrad.jvp(lambda b: h(3.0, b), (2.0,), (1.0,))
    assert (float(y), float(t)) == (6.0, 130.0)
    y, t = funcgrad.jvp(lambda a: h(a, 2.0), (3.0,), (1.0,))
    assert (float(y), float(t)) == (6.0, 1002.0)
    _, t = funcgrad.jvp(h, (3.0, 2.0), (1.0, 1.0))
    assert float(t) == 32.0
    # under jit and vmap of the jvp: jax gives [130., 130.]
    _, t = funcgrad.jit(lambda b: funcgrad.jvp(lambda b: h(3.0, b), (b,), (1.0,)))(2.0)
    assert float(t) == 130.0
    _, t = funcgrad.vmap(lambda b: funcgrad.jvp(lambda b: h(3.0, b), (b,), (1.0,)))(
        dev(np.array([1.0, 2.0])))
    np.testing.assert_allclose(host(t), [130.0, 130.0])


def test_symbolic_zero_describes_the_tangent() -> None:
    from funcgrad.custom_derivatives import SymbolicZero

    z = SymbolicZero.from_primal_value(np.ones((2, 3), np.float32))
    assert repr(z) == "SymbolicZero" and z.shape == (2, 3) and z.dtype == np.float32
    assert SymbolicZero.from_primal_value(np.arange(2)).dtype == funcgrad.float0


def test_vmap_chunk_size_with_a_named_axis_keeps_collectives_whole() -> None:
    # jax.vmap(lambda a: a - lax.pmean(a, "i"), axis_name="i")(arange(24).reshape(4, 2, 3))
    # subtracts the mean of all 4 examples; chunks of 3 gave per-chunk means.
    from funcgrad import lax

    y = dev(np.arange(24.0).reshape(4, 2, 3))
    want = np.arange(24.0).reshape(4, 2, 3) - np.arange(24.0).reshape(4, 2, 3).mean(0)
    f = funcgrad.vmap(lambda a: a - lax.pmean(a, "i"), axis_name="i", chunk_size=3)
    np.testing.assert_allclose(host(f(y)), want)
    np.testing.assert_allclose(host(funcgrad.jit(f)(y)), want)
    g = funcgrad.vmap(lambda a: a * lax.axis_size("i"), axis_name="i", chunk_size=3)
    np.testing.assert_allclose(host(g(y)), 4 * np.arange(24.0).reshape(4, 2, 3))


def test_chunked_vmap_without_mapped_arguments_under_jit() -> None:
    # vmap(f, in_axes=(), axis_size=5) gives five copies; staged, the chunks' scan had no
    # length (nothing mapped to scan over) and raised.
    f = funcgrad.vmap(lambda: 1.0, in_axes=(), axis_size=5, chunk_size=2)
    np.testing.assert_allclose(host(funcgrad.jit(f)()), np.ones(5))
    np.testing.assert_allclose(host(f()), np.ones(5))


def test_checkpoint_static_argnames_as_jax() -> None:
    # jax.grad(lambda x: jax.checkpoint(f, static_argnames="n")(x, n=3))(2.0) == 12.0, and
    # the same with n passed by position
    def f(x, n, *, mode="pow"):
        assert isinstance(n, int) and isinstance(mode, str)  # not traced
        return x ** n if mode == "pow" else x * n

    c = funcgrad.checkpoint(f, static_argnames=("n", "mode"))
    assert float(funcgrad.grad(lambda x: c(x, n=3))(2.0)) == 12.0
    assert float(funcgrad.grad(lambda x: c(x, 3))(2.0)) == 12.0
    assert float(funcgrad.grad(lambda x: c(x, 3, mode="mul"))(2.0)) == 3.0
    assert float(funcgrad.jit(funcgrad.grad(lambda x: c(x, n=2)))(2.0)) == 4.0


def test_custom_rules_take_nondiff_argnames_as_jax() -> None:
    f = funcgrad.custom_jvp(lambda x, n, k: x ** n * k, nondiff_argnames=("n",))

    @f.defjvp
    def f_jvp(n, primals, tangents):
        (x, k), (tx, tk) = primals, tangents
        return f(x, n, k), n * x ** (n - 1) * k * tx + x ** n * tk

    # jax: grad(f, (0, 2))(2.0, 3, 1.5) == (18.0, 8.0); grad(lambda x: f(x, n=3, k=1.0))(2.0)
    # == 12.0
    g0, g2 = funcgrad.grad(f, (0, 2))(2.0, 3, 1.5)
    assert (float(g0), float(g2)) == (18.0, 8.0)
    assert float(funcgrad.grad(lambda x: f(x, n=3, k=1.0))(2.0)) == 12.0
    g = funcgrad.custom_vjp(lambda x, n: x ** n, nondiff_argnames=("n",))
    g.defvjp(lambda x, n: (g(x, n), x), lambda n, r, ct: (ct * n * r ** (n - 1) * 10,))
    assert float(funcgrad.grad(g)(2.0, 3)) == 120.0  # jax: 120.0 both ways
    assert float(funcgrad.grad(lambda x: g(x, n=3))(2.0)) == 120.0
    with pytest.raises(ValueError, match="nondiff_argnames"):
        funcgrad.custom_vjp(lambda x: x, nondiff_argnames=("zz",))


def test_make_jaxpr_axis_env_binds_named_axes_as_jax() -> None:
    # jax.make_jaxpr(lambda x: lax.all_gather(x, "i"), axis_env=[("i", 4)])(ones(3)): f[4,3]
    from funcgrad import lax

    closed = funcgrad.make_jaxpr(lambda x: lax.all_gather(x, "i"), axis_env=[("i", 4)])(
        np.ones(3))
    assert closed.out_avals[0].shape == (4, 3)
    closed = funcgrad.make_jaxpr(lambda x: lax.psum(x, ("i", "j")) * lax.axis_size("j"),
                                 axis_env=[("i", 4), ("j", 2)])(np.ones(3))
    assert [e.primitive.name for e in closed.jaxpr.eqns][0] == "psum"
    with pytest.raises(NameError, match="unbound axis name"):
        funcgrad.make_jaxpr(lambda x: lax.psum(x, "i"))(np.ones(3))
    with pytest.raises(TypeError, match="axis_env"):
        funcgrad.make_jaxpr(lambda x: x, axis_env=["i"])(np.ones(3))


def test_custom_jvp_symbolic_zeros_survive_vmap_as_jax() -> None:
    from funcgrad.custom_derivatives import SymbolicZero

    seen: list = []
    h = funcgrad.custom_jvp(lambda a, b: a * b)

    def h_jvp(primals, tangents):
        (a, b), (ta, tb) = primals, tangents
        seen.append((type(ta) is SymbolicZero, type(tb) is SymbolicZero))
        out = 0.0
        if type(ta) is not SymbolicZero:
            out = out + 1000.0 * ta * b  # scaled so that the rule's use shows in the result
        if type(tb) is not SymbolicZero:
            out = out + 100.0 * a * tb
        return a * b, out

    h.defjvp(h_jvp, symbolic_zeros=True)
    a, b = dev(np.array([1.0, 2.0])), dev(np.array([3.0, 5.0]))
    # JAX 0.10.2: [3000. 5000.], [2000. 2000.], [100. 200.], jacfwd diag(3000, 5000)
    g = funcgrad.grad(lambda a: funcgrad.vmap(h)(a, b).sum())(a)
    np.testing.assert_allclose(host(g), [3000.0, 5000.0])
    assert set(seen) == {(False, True)}  # the zero tangent of b stayed symbolic under vmap
    g = funcgrad.grad(lambda a: funcgrad.vmap(h, in_axes=(0, None))(a, 2.0).sum())(a)
    np.testing.assert_allclose(host(g), [2000.0, 2000.0])
    seen.clear()
    g = funcgrad.jit(funcgrad.grad(lambda b: funcgrad.vmap(h)(a, b).sum()))(b)
    np.testing.assert_allclose(host(g), [100.0, 200.0])
    assert set(seen) == {(True, False)}
    j = funcgrad.jacfwd(lambda a: funcgrad.vmap(h)(a, b))(a)
    np.testing.assert_allclose(host(j), [[3000.0, 0.0], [0.0, 5000.0]])


def test_reduce_axes_is_accepted_empty_and_refused_otherwise_as_jax() -> None:
    f = lambda a: a * 2.0  # noqa: E731
    assert float(funcgrad.grad(f, reduce_axes=())(1.0)) == 2.0
    assert float(funcgrad.value_and_grad(f, reduce_axes=())(1.0)[1]) == 2.0
    assert float(funcgrad.vjp(f, 1.0, reduce_axes=())[1](1.0)[0]) == 2.0
    assert float(funcgrad.linear_transpose(f, 1.0, reduce_axes=())(1.0)[0]) == 2.0
    # JAX 0.10.2: NotImplementedError("reduce_axes argument to grad is deprecated")
    with pytest.raises(NotImplementedError, match="reduce_axes argument to grad is deprecated"):
        funcgrad.grad(f, reduce_axes=("i",))
    with pytest.raises(NotImplementedError, match="to vjp is deprecated"):
        funcgrad.vjp(f, 1.0, reduce_axes=("i",))


def test_checkpoint_prevent_cse_per_argument_as_jax() -> None:
    f = funcgrad.checkpoint(lambda x, y: fnp.sin(x) * y, prevent_cse=[True, False])
    # JAX: grad(...)(1., 2.) == 1.0806046117362795
    np.testing.assert_allclose(float(funcgrad.grad(f)(1.0, 2.0)), 1.0806046117362795)
    with pytest.raises(ValueError):  # JAX: ValueError (pytree prefix of another length)
        funcgrad.grad(funcgrad.checkpoint(lambda x, y: x * y, prevent_cse=(True,)))(1.0, 2.0)
    with pytest.raises(TypeError):
        funcgrad.checkpoint(lambda x: x, prevent_cse="yes")


def test_linear_transpose_of_an_integer_linear_map_as_jax() -> None:
    lt = funcgrad.linear_transpose
    # JAX 0.10.2: (Array([2, 2, 2]),), (Array([6, 5, 3]),), int32 kept
    (g,) = lt(lambda q: q * 2, dev(np.arange(3)))(dev(np.ones(3, dtype=np.int64)))
    assert host(g).dtype == np.int64 and host(g).tolist() == [2, 2, 2]
    (g,) = lt(lambda q: fnp.cumsum(q), dev(np.arange(3)))(dev(np.array([1, 2, 3])))
    assert host(g).tolist() == [6, 5, 3]
    (g,) = lt(lambda q: q.T, dev(np.ones((2, 3), np.int32)))(dev(np.ones((3, 2), np.int32)))
    assert host(g).dtype == np.int32 and host(g).shape == (2, 3)
    (g,) = lt(lambda q: (q.sum(), q[::-1]), dev(np.arange(3)))((5, dev(np.arange(3))))
    assert host(g).tolist() == [7, 6, 5]
    # JAX: TypeError for mixed or boolean maps and for a cotangent of another dtype
    with pytest.raises(TypeError, match="integer -> integer"):
        lt(lambda q: q * 2.0, dev(np.arange(3)))
    with pytest.raises(TypeError, match="integer -> integer"):
        lt(lambda q: q[::-1], dev(np.array([True, False])))
    with pytest.raises(TypeError, match="integer -> integer"):
        lt(lambda q, r: q * 2, dev(np.arange(3)), 1.0)
    with pytest.raises(TypeError, match="does not match"):
        lt(lambda q: q * 2, dev(np.arange(3)))(dev(np.ones(3, np.int32)))


def test_custom_vjp_symbolic_zeros_as_jax() -> None:
    from funcgrad.custom_derivatives import CustomVJPPrimal, SymbolicZero

    log: list = []
    f = funcgrad.custom_vjp(lambda x, y: (x["a"] * y, y))

    def fwd(x, y):
        assert type(x["a"]) is CustomVJPPrimal and type(y) is CustomVJPPrimal
        log.append((x["a"].perturbed, y.perturbed))
        return f({"a": x["a"].value}, y.value), (x["a"].value, y.value)

    def bwd(res, g):
        a, y = res
        ga, gy = g
        log.append((type(ga) is SymbolicZero, type(gy) is SymbolicZero))
        out_a = 0.0 if type(ga) is SymbolicZero else ga * y
        out_y = (0.0 if type(ga) is SymbolicZero else ga * a) + (
            0.0 if type(gy) is SymbolicZero else gy)
        return {"a": out_a}, out_y

    f.defvjp(fwd, bwd, symbolic_zeros=True)
    # JAX 0.10.2: fwd sees perturbed (True, False) then bwd (array, SymbolicZero); grad 2.0
    assert float(funcgrad.grad(lambda a: f({"a": a}, 2.0)[0])(3.0)) == 2.0
    assert log == [(True, False), (False, True)]
    log.clear()
    # and (False, True) / (SymbolicZero, array); grad 1.0 -- also under jit and vmap
    assert float(funcgrad.grad(lambda y: f({"a": 3.0}, y)[1])(2.0)) == 1.0
    assert float(funcgrad.jit(funcgrad.grad(lambda y: f({"a": 3.0}, y)[1]))(2.0)) == 1.0
    g = funcgrad.vmap(funcgrad.grad(lambda y: f({"a": 3.0}, y)[1]))(dev(np.arange(2.0)))
    np.testing.assert_allclose(host(g), [1.0, 1.0])
    assert set(log) == {(False, True), (True, False)}
    y, t = funcgrad.jvp(lambda y: f({"a": 3.0}, y)[0], (2.0,), (1.0,))
    assert (float(y), float(t)) == (6.0, 3.0)  # forward mode transposes bwd, as before
    # the rule batched by vmap keeps both (JAX: the same flags under grad(vmap(f)))
    log.clear()
    g = funcgrad.grad(lambda ys: funcgrad.vmap(lambda q: f({"a": 3.0}, q)[1])(ys).sum())(
        dev(np.arange(2.0)))
    np.testing.assert_allclose(host(g), [1.0, 1.0])
    assert log == [(False, True), (True, False)]
    # JAX: jacrev(..., argnums=(0, 1))(3., 2.) == ([2., 0.], [3., 1.])
    ja, jy = funcgrad.jacrev(lambda a, y: fnp.stack(f({"a": a}, y)), argnums=(0, 1))(3.0, 2.0)
    np.testing.assert_allclose(host(ja), [2.0, 0.0])
    np.testing.assert_allclose(host(jy), [3.0, 1.0])


@pytest.mark.parametrize("jitted", [True, False])
def test_fwd_and_bwd_as_jax(jitted) -> None:
    x = dev(np.array([[0.5, -1.0], [2.0, 0.25]]))
    w = dev(np.array([1.5, -0.5]))
    fwd, bwd = funcgrad.fwd_and_bwd(lambda a, b: fnp.tanh(a @ b), argnums=(0, 1),
                                    jitted=jitted)
    y, res = fwd(x, w)
    ga, gb = bwd(res, dev(np.ones(2)))
    # JAX 0.10.2 (float64)
    np.testing.assert_allclose(host(y), [0.8482836399575129, 0.9936546343150297])
    np.testing.assert_allclose(host(ga), [[0.420622299270649, -0.14020743309021633],
                                          [0.01897570155639705, -0.00632523385213235]])
    np.testing.assert_allclose(host(gb), [0.16550836849874573, -0.2772522492543665])
    fwd, bwd = funcgrad.fwd_and_bwd(lambda a, b: (fnp.sum(a * b), {"aux": a[0]}), argnums=1,
                                    has_aux=True, jitted=jitted)
    y, res, aux = fwd(x, w)
    np.testing.assert_allclose(host(aux["aux"]), [0.5, -1.0])
    np.testing.assert_allclose(host(bwd(res, 1.0)), [2.5, -0.75])  # single argnums: bare


def test_save_anything_except_these_names_saves_unnamed_values_too() -> None:
    # JAX's docstring: "Save any values (not just named ones) excluding the names given": the
    # unnamed intermediates (cos for sin's derivative) are saved, the named h is not (its
    # unnamed source, sin's output, is); save_any_names_but_these saves named values only
    from funcgrad.ad_checkpoint import checkpoint_name, saved_residuals
    from funcgrad.jaxpr_codec import decode_closed_jaxpr, encode_closed_jaxpr

    cp = funcgrad.checkpoint_policies

    def f(w, x):
        h = checkpoint_name(fnp.sin(x @ w), "h")
        z = checkpoint_name(h @ w.T, "z")
        return fnp.sum(z * z)

    w, x = np.full((3, 3), 0.1), np.ones((2, 3))

    def saved(policy):
        return [r[1].split(" from")[0] for r in
                saved_residuals(funcgrad.checkpoint(f, policy=policy), w, x)]

    but_h = saved(cp.save_anything_except_these_names("h"))
    assert "named 'h'" not in but_h and "named 'z'" in but_h
    assert "output of sin" in but_h and "output of cos" in but_h
    assert saved(cp.save_any_names_but_these("h"))[2:] == ["named 'z'"]
    p = cp.save_anything_except_these_names("z")
    assert p != cp.save_any_names_but_these("z") and p == cp.save_anything_except_these_names("z")
    closed = funcgrad.make_jaxpr(funcgrad.checkpoint(f, policy=p))(w, x)
    (eqn,) = decode_closed_jaxpr(encode_closed_jaxpr(closed)).eqns
    assert eqn.params["policy"] == p


# -- has_aux: traced aux values are arrays -------------------------------------------------------


def test_traced_aux_of_a_python_scalar_input_is_an_array() -> None:
    # jax.vjp(lambda x: (jnp.sin(x), x * 2), 1.0, has_aux=True)[2] == Array(2.) (not a float);
    # jax.jacfwd/jacrev/hessian(..., has_aux=True)(1.0)[1] == Array(3.); untraced aux (3.0,
    # "hi") stays as given
    aux = funcgrad.vjp(lambda x: (fnp.sin(x), (x * 2, 3.0, "hi")), 1.0, has_aux=True)[2]
    assert hasattr(aux[0], "shape") and float(aux[0]) == 2.0 and aux[1:] == (3.0, "hi")
    for jac in (funcgrad.jacfwd, funcgrad.jacrev, funcgrad.hessian):
        j, a = jac(lambda x: (x ** 3, x * 3), has_aux=True)(1.0)
        assert hasattr(a, "shape") and float(a) == 3.0
    _, _, a = funcgrad.jvp(lambda x: (x, x * 2), (1.0,), (1.0,), has_aux=True)
    assert hasattr(a, "shape") and float(a) == 2.0


# -- custom_vjp under vmap: an unbatched argument's cotangent is summed over the batch ----------


def _scaled_k():
    @funcgrad.custom_vjp
    def k(x, n, w):
        return x * n * w

    k.defvjp(lambda x, n, w: (k(x, n, w), (x, n, w)),
             lambda r, g: (fnp.sum(g * r[2]) * r[1] * 7.0, None, g * r[0] * r[1]))
    return k


@pytest.mark.parametrize("jit", [False, True])
def test_custom_vjp_vmap_cotangent_of_an_unbatched_argument_is_summed(jit) -> None:
    # JAX 0.10.2: x unbatched (closed over, or in_axes=None), w batched through a closure:
    # jax.grad(lambda x, w: jax.vmap(lambda y: k(x, 2, w * y))(ys).sum(), (0, 1))(3., [1, 2])
    # == (252., [36., 36.]); funcgrad gave x's cotangent per example (shape (3,))
    k = _scaled_k()
    ys = dev(np.array([1.0, 2.0, 3.0]))
    g = funcgrad.grad(lambda x, w: funcgrad.vmap(lambda y: k(x, 2, w * y))(ys).sum(), (0, 1))
    gx, gw = (funcgrad.jit(g) if jit else g)(3.0, dev(np.array([1.0, 2.0])))
    assert np.shape(gx) == () and float(gx) == 252.0
    np.testing.assert_allclose(host(gw), [36.0, 36.0])
    # in_axes=(None, None, 0): (35., [[6, 6], [6, 6]])
    gx, gw = funcgrad.grad(lambda x, w: funcgrad.vmap(k, in_axes=(None, None, 0))(x, 2, w).sum(),
                           (0, 1))(3.0, dev(np.array([[1.0, -1.0], [2.0, 0.5]])))
    assert np.shape(gx) == () and float(gx) == 35.0
    np.testing.assert_allclose(host(gw), [[6.0, 6.0], [6.0, 6.0]])


def test_custom_vjp_closing_over_a_vmapped_value() -> None:
    # jax.grad(lambda x: jax.vmap(lambda y: mk(y)(x))(jnp.array([1., 2.])).sum())(3.) == 14.
    # for mk(y) a custom_vjp x * y whose bwd is g * 7 (funcgrad gave [7., 7.])
    def mk(y):
        @funcgrad.custom_vjp
        def k(x):
            return x * y

        k.defvjp(lambda x: (k(x), x), lambda r, g: (g * 7.0,))
        return k

    ys = dev(np.array([1.0, 2.0]))
    g = funcgrad.grad(lambda x: funcgrad.vmap(lambda y: mk(y)(x))(ys).sum())(3.0)
    assert np.shape(g) == () and float(g) == 14.0
    np.testing.assert_allclose(host(funcgrad.jacrev(
        lambda x: funcgrad.vmap(lambda y: mk(y)(x))(ys))(3.0)), [7.0, 7.0])


# -- vmap of cond with a batched index: branches not taken give zero cotangents -----------------


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # every branch runs on every example
@pytest.mark.parametrize("jit", [False, True])
def test_grad_of_vmapped_cond_has_no_nan_from_branches_not_taken(jit) -> None:
    # JAX 0.10.2 (jax#1052): grad(lambda x: vmap(f)(x).sum())([4., -1.]) == [0.25, 0.] for
    # f = lambda x: lax.cond(x > 0, jnp.sqrt, lambda x: x * 0., x); funcgrad gave [0.25, nan]
    f = lambda x: funcgrad.lax.cond(x > 0, fnp.sqrt, lambda x: x * 0.0, x)  # noqa: E731
    v = funcgrad.vmap(funcgrad.jit(f) if jit else f)
    g = funcgrad.grad(lambda x: v(x).sum())(dev(np.array([4.0, -1.0])))
    np.testing.assert_array_equal(host(g), [0.25, 0.0])
    # a three-way switch, and its Hessian:
    # [4, 0.70710678, -1] and diag(-16, -0.70710678, 2) at [-0.25, 0.5, 2.0]
    s = lambda x: funcgrad.lax.switch(  # noqa: E731
        fnp.clip(fnp.floor(x).astype(np.int32) + 1, 0, 2),
        [lambda x: fnp.log(x + 0.5), fnp.sqrt, lambda x: 1.0 / (x - 1.0)], x)
    xs = dev(np.array([-0.25, 0.5, 2.0]))
    np.testing.assert_allclose(host(funcgrad.grad(lambda x: funcgrad.vmap(s)(x).sum())(xs)),
                               [4.0, 0.70710678, -1.0], rtol=1e-7)
    np.testing.assert_allclose(
        host(funcgrad.hessian(lambda x: funcgrad.vmap(s)(x).sum())(xs)),
        np.diag([-16.0, -0.70710678, 2.0]), rtol=1e-7, atol=1e-12)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # every branch runs on every example
def test_vmapped_cond_cuts_untaken_branches_of_unbatched_and_inner_grads() -> None:
    # JAX 0.10.2: the branches not taken see stop_gradient operands, unbatched ones too.
    lax, xs = funcgrad.lax, dev(np.array([-1.0, 4.0, 0.0]))
    g = lambda x, y: lax.cond(  # noqa: E731
        x > 0, lambda a: a[0] * fnp.log(a[1]), lambda a: a[0] / a[1], (x, y))
    # vmap(grad(g, (0, 1)), (0, None))(xs, 0.) == ([inf, -inf, inf], [inf, inf, nan])
    gx, gy = funcgrad.vmap(funcgrad.grad(g, (0, 1)), (0, None))(xs, 0.0)
    np.testing.assert_array_equal(host(gx), [np.inf, -np.inf, np.inf])
    np.testing.assert_array_equal(host(gy), [np.inf, np.inf, np.nan])
    # grad(lambda y: vmap(h, (0, None))(xs, y).sum())(0.) == 2. with every example on the
    # identity branch: the log branch's 1/0 must not poison the unbatched operand
    h = lambda x, y: lax.cond(x > 0, fnp.log, lambda y: y, y)  # noqa: E731
    neg = dev(np.array([-1.0, -2.0]))
    assert float(funcgrad.grad(lambda y: funcgrad.vmap(h, (0, None))(neg, y).sum())(0.0)) == 2.0
    # a weight the grad does not differentiate stays unbatched (no copy per example)
    f = lambda w, xs: funcgrad.vmap(funcgrad.grad(lambda x: lax.cond(  # noqa: E731
        x.sum() > 0, lambda x: (w @ x).sum(), lambda x: x.sum(), x)))(xs)
    assert "f64[5,3,3]" not in str(funcgrad.make_jaxpr(f)(np.ones((3, 3)), np.ones((5, 3))))


# -- control flow type errors start with JAX's sentence ------------------------------------------


def test_loop_and_branch_type_errors_carry_jax_text() -> None:
    # pytest.raises(TypeError, match=...) written against JAX 0.10.2's messages
    lax = funcgrad.lax
    carry = "body function carry input and carry output must have equal types"
    with pytest.raises(TypeError, match="scan " + carry):
        lax.scan(lambda c, x: (c + x, None), np.int32(0), dev(np.arange(3.0)))
    with pytest.raises(TypeError, match="while_loop " + carry):
        lax.while_loop(lambda c: c < 3, lambda c: c + 1.5, np.int32(0))
    with pytest.raises(TypeError, match="fori_loop " + carry):
        lax.fori_loop(0, 3, lambda i, c: c + 0.5, np.int32(0))
    with pytest.raises(TypeError, match="while_loop body function carry input and carry output "
                                        "must have the same pytree structure"):
        lax.while_loop(lambda c: c[0] < 3, lambda c: c[0] + 1, (0, 1))
    with pytest.raises(TypeError, match="cond branches must have equal output types"):
        lax.cond(True, lambda: np.float32(1), lambda: 2.0)
    with pytest.raises(TypeError, match="switch branch outputs must have the same pytree "
                                        "structure"):
        lax.switch(0, [lambda: (1.0, 2.0), lambda: 1.0])
