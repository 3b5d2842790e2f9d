"""The differentiation API: jvp, linearize, vjp, linear_transpose, grad, value_and_grad,
jacfwd, jacrev, jacobian, hessian, hvp, vhp, elementwise_grad — structures, options, dtypes,
complex conventions and error messages."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_close, dev, host

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.core import Tracer

X3 = np.array([0.3, -0.7, 1.1])
Y3 = np.array([1.5, 2.0, -0.5])
A23 = np.array([[1.0, 2.0, -1.0], [0.5, -0.3, 2.0]])


def _no_tracers(tree) -> None:
    for leaf in funcgrad.tree_util.tree_leaves(tree):
        assert not isinstance(leaf, Tracer), f"a tracer escaped: {leaf!r}"


# ---------------------------------------------------------------------------------------------
# jvp / linearize / vjp


def test_jvp_pytrees() -> None:
    def f(p, s):
        return {"y": fnp.sin(p["a"]) * s, "z": (p["b"] ** 2,)}

    p = {"a": dev(X3), "b": dev(Y3)}
    t = {"a": dev(np.ones(3)), "b": dev(np.full(3, 2.0))}
    y, dy = funcgrad.jvp(f, (p, 2.0), (t, 0.5))
    assert_close(y["y"], np.sin(X3) * 2.0)
    assert_close(dy["y"], np.cos(X3) * 2.0 + np.sin(X3) * 0.5)
    assert_close(dy["z"][0], 2 * Y3 * 2.0)


def test_jvp_has_aux_returns_plain_values() -> None:
    y, dy, aux = funcgrad.jvp(lambda x: (x * x, {"x": x, "n": 3}), (dev(X3),), (dev(np.ones(3)),),
                              has_aux=True)
    assert_close(dy, 2 * X3)
    _no_tracers(aux)
    assert_close(aux["x"], X3)
    assert aux["n"] == 3


def test_jvp_errors() -> None:
    with pytest.raises(TypeError, match="tuples"):
        funcgrad.jvp(fnp.sin, dev(X3), dev(X3))
    with pytest.raises(ValueError, match="one tangent per"):
        funcgrad.jvp(fnp.sin, (dev(X3),), (dev(X3), dev(X3)))
    with pytest.raises(ValueError, match="shapes must match"):
        funcgrad.jvp(fnp.sin, (dev(X3),), (dev(np.ones(2)),))
    with pytest.raises(TypeError, match="dtype float32"):
        funcgrad.jvp(fnp.sin, (dev(X3.astype(np.float32)),), (dev(X3),))
    with pytest.raises(TypeError, match="complex128"):
        funcgrad.jvp(fnp.sin, (1.0,), (1j,))
    # As JAX 0.10.2 (x64): a Python float is a float64 tangent, wrong for a float32 primal;
    # integer primals take float0 tangents only.
    with pytest.raises(TypeError, match="expected tangent dtype float32, but got tangent dtype "
                       "float64"):
        funcgrad.jvp(lambda v: v * 2, (np.float32(1.5),), (1.0,))
    with pytest.raises(TypeError, match="do not match.*float0"):
        funcgrad.jvp(lambda n: n * 2, (3,), (1,))
    with pytest.raises(TypeError, match="tangent dtype int64"):
        funcgrad.jvp(lambda v: v * 2, (1.5,), (1,))
    _, t64 = funcgrad.jvp(lambda v: v * 2, (dev(np.float64(1.5)),), (1.0,))
    assert np.asarray(host(t64)).dtype == np.float64 and float(t64) == 2.0
    _, f_jvp = funcgrad.linearize(lambda v: v * 2, np.float32(1.5))
    with pytest.raises(ValueError, match="inconsistent with the original primal values: got "
                       "tangent aval f64"):
        f_jvp(1.0)
    with pytest.raises(ValueError, match="inconsistent"):
        funcgrad.linearize(lambda n: n * 2, 3)[1](1)


def test_jvp_integer_primal_has_float0_tangent() -> None:
    y, dy = funcgrad.jvp(lambda n, x: n * x, (3, 2.0), (np.zeros((), funcgrad.float0), 1.0))
    assert float(dy) == 3.0
    _, dn = funcgrad.jvp(lambda n: n * 2, (3,), (None,))
    assert np.asarray(dn).dtype == funcgrad.float0


def test_linearize_matches_jvp_and_replays() -> None:
    f = lambda x, y: fnp.sin(x) * fnp.exp(y)  # noqa: E731
    x, y = dev(X3), dev(Y3)
    out, f_jvp = funcgrad.linearize(f, x, y)
    assert_close(out, np.sin(X3) * np.exp(Y3))
    for tx, ty in [(np.ones(3), np.zeros(3)), (X3, Y3)]:
        want = funcgrad.jvp(f, (x, y), (dev(tx), dev(ty)))[1]
        assert_close(f_jvp(dev(tx), dev(ty)), want)
    _, f_jvp2, aux = funcgrad.linearize(lambda v: (fnp.sum(v * v), v + 1), x, has_aux=True)
    _no_tracers(aux)
    assert_close(aux, X3 + 1)
    assert_close(f_jvp2(dev(np.ones(3))), 2 * np.sum(X3))


def test_vjp_pytrees_has_aux_and_reuse() -> None:
    def f(p):
        return {"u": p["w"] @ p["x"], "v": fnp.sum(p["x"] ** 2)}, p["w"].shape

    p = {"w": dev(A23), "x": dev(X3)}
    y, pull, aux = funcgrad.vjp(f, p, has_aux=True)
    assert aux == (2, 3)
    (g,) = pull({"u": dev(np.array([1.0, 0.0])), "v": dev(np.asarray(1.0))})
    assert_close(g["w"], np.outer([1.0, 0.0], X3))
    assert_close(g["x"], A23[0] + 2 * X3)
    (g2,) = pull({"u": dev(np.array([0.0, 2.0])), "v": dev(np.asarray(0.0))})
    assert_close(g2["x"], 2 * A23[1])
    with pytest.raises(ValueError, match="structured like the output"):
        pull({"u": dev(np.ones(2))})
    with pytest.raises(ValueError, match="shape"):
        pull({"u": dev(np.ones(3)), "v": dev(np.asarray(1.0))})


def test_vjp_integer_inputs_get_float0() -> None:
    _, pull = funcgrad.vjp(lambda x, n: x * n, dev(X3), 4)
    gx, gn = pull(dev(np.ones(3)))
    assert_close(gx, np.full(3, 4.0))
    assert np.asarray(gn).dtype == funcgrad.float0


# ---------------------------------------------------------------------------------------------
# linear_transpose


def test_linear_transpose_matrix_and_pytree() -> None:
    a = dev(A23)
    f_t = funcgrad.linear_transpose(lambda x: a @ x, dev(np.zeros(3)))
    (ct,) = f_t(dev(np.array([1.0, -1.0])))
    assert_close(ct, A23.T @ np.array([1.0, -1.0]))

    def g(p):
        return {"s": 2.0 * p["x"] + p["y"], "t": fnp.sum(p["x"])}

    g_t = funcgrad.linear_transpose(g, {"x": dev(np.zeros(3)), "y": dev(np.zeros(3))})
    (ct,) = g_t({"s": dev(np.ones(3)), "t": dev(np.asarray(2.0))})
    assert_close(ct["x"], np.full(3, 4.0))
    assert_close(ct["y"], np.ones(3))


def test_linear_transpose_of_a_nonlinear_function_is_an_error() -> None:
    f_t = funcgrad.linear_transpose(fnp.sin, dev(np.zeros(3)))
    with pytest.raises(TypeError, match="not linear"):
        f_t(dev(np.ones(3)))


def test_linear_transpose_is_the_vjp_of_a_linear_map() -> None:
    f = lambda x: fnp.cumsum(x) * 3.0  # noqa: E731
    ct = dev(Y3)
    assert_close(funcgrad.linear_transpose(f, dev(X3))(ct), funcgrad.vjp(f, dev(X3))[1](ct))


# ---------------------------------------------------------------------------------------------
# grad / value_and_grad


def test_grad_argnums() -> None:
    f = lambda x, y, z: fnp.sum(x * y ** 2 + z)  # noqa: E731
    x, y, z = dev(X3), dev(Y3), dev(np.ones(3))
    assert_close(funcgrad.grad(f)(x, y, z), Y3 ** 2)
    assert_close(funcgrad.grad(f, 1)(x, y, z), 2 * X3 * Y3)
    assert_close(funcgrad.grad(f, -1)(x, y, z), np.ones(3))
    gx, gz = funcgrad.grad(f, (0, 2))(x, y, z)
    assert_close(gx, Y3 ** 2)
    assert_close(gz, np.ones(3))
    assert isinstance(funcgrad.grad(f, (1,))(x, y, z), tuple)
    with pytest.raises(TypeError, match="argnums"):
        funcgrad.grad(f, 5)(x, y, z)
    with pytest.raises(ValueError, match="same argument twice"):
        funcgrad.grad(f, (0, -3))(x, y, z)


def test_grad_dict_input_is_dict_shaped() -> None:
    g = funcgrad.grad(lambda p: p["w"] * p["b"] + fnp.sum(p["v"]))(
        {"w": 2.0, "b": 3.0, "v": dev(X3)})
    assert set(g) == {"w", "b", "v"}
    assert float(g["w"]) == 3.0 and float(g["b"]) == 2.0
    assert_close(g["v"], np.ones(3))


def test_grad_keyword_arguments_are_not_differentiated() -> None:
    f = lambda x, scale=1.0: fnp.sum(x) * scale  # noqa: E731
    assert_close(funcgrad.grad(f)(dev(X3), scale=3.0), np.full(3, 3.0))


def test_value_and_grad_and_has_aux() -> None:
    f = lambda x: (fnp.sum(x ** 2), {"mean": fnp.mean(x)})  # noqa: E731
    (v, aux), g = funcgrad.value_and_grad(f, has_aux=True)(dev(X3))
    assert_close(v, np.sum(X3 ** 2))
    assert_close(g, 2 * X3)
    _no_tracers(aux)
    assert_close(aux["mean"], np.mean(X3))
    g2, aux2 = funcgrad.grad(f, has_aux=True)(dev(X3))
    assert_close(g2, 2 * X3)
    _no_tracers(aux2)
    with pytest.raises(TypeError, match="pair"):
        funcgrad.grad(lambda x: x, has_aux=True)(1.0)


def test_grad_of_non_scalar_output_suggests_vjp_and_jacrev() -> None:
    with pytest.raises(TypeError, match="vjp or jacrev"):
        funcgrad.grad(fnp.sin)(dev(X3))
    with pytest.raises(TypeError, match="vjp or jacrev"):
        funcgrad.grad(lambda x: (x, x))(1.0)


def test_grad_integer_input_needs_allow_int() -> None:
    with pytest.raises(TypeError, match="allow_int"):
        funcgrad.grad(lambda x: x * 2.0)(3)
    with pytest.raises(TypeError, match="allow_int"):
        funcgrad.grad(lambda x, n: x * n, (0, 1))(2.0, dev(np.array(3)))
    gx, gn = funcgrad.grad(lambda x, n: x * n, (0, 1), allow_int=True)(2.0, dev(np.array(3)))
    assert float(gx) == 3.0
    assert np.asarray(host(gn)).dtype == funcgrad.float0
    assert np.shape(host(gn)) == ()
    gi = funcgrad.grad(lambda p: fnp.sum(p["x"] * p["i"]), allow_int=True)(
        {"x": 2.0, "i": dev(np.arange(3))})
    assert np.asarray(host(gi["i"])).dtype == funcgrad.float0
    assert np.shape(host(gi["i"])) == (3,)


def test_grad_of_a_typed_key_names_the_key_type() -> None:
    # JAX 0.10.2: "... but got key<fry>" (the key's dtype, not the uint32 data inside it).
    k = funcgrad.random.key(0)
    with pytest.raises(TypeError, match=r"argument 0 is a key array of dtype key<fry>"):
        funcgrad.grad(lambda k: 1.0)(k)
    with pytest.raises(TypeError, match=r"argument 0\['k'\] is a key array of dtype key<fry>"):
        funcgrad.grad(lambda d: d["a"])({"a": 1.0, "k": k})
    g = funcgrad.grad(lambda x, k: x * funcgrad.random.normal(k), argnums=0)(1.0, k)
    assert_close(g, -0.20584213947964347)


def test_grad_output_dtype_errors() -> None:
    with pytest.raises(TypeError, match="holomorphic"):
        funcgrad.grad(lambda z: z * z)(1.0 + 1.0j)
    with pytest.raises(TypeError, match="float"):
        funcgrad.grad(lambda x: fnp.argmax(x))(dev(X3))


def test_grad_dtypes_follow_the_input() -> None:
    x32 = dev(X3.astype(np.float32))
    g = funcgrad.grad(lambda v: fnp.sum(fnp.sin(v) * 2.0))(x32)
    assert np.asarray(host(g)).dtype == np.float32
    j = funcgrad.jacfwd(lambda v: fnp.sin(v) * 2.0)(x32)
    assert np.asarray(host(j)).dtype == np.float32
    j = funcgrad.jacrev(lambda v: fnp.sin(v) * 2.0)(x32)
    assert np.asarray(host(j)).dtype == np.float32
    assert np.asarray(host(funcgrad.grad(lambda v: v * v)(np.float32(2.0)))).dtype == np.float32


# ---------------------------------------------------------------------------------------------
# complex numbers (JAX's convention)


def test_grad_of_real_function_of_complex_input_is_conjugate_convention() -> None:
    z = 3.0 + 4.0j
    # f(x + iy) = x^2 + y^2: grad = df/dx - i df/dy = 2x - 2iy = 6 - 8j (JAX's convention;
    # PyTorch returns the conjugate, 6 + 8j).
    g = funcgrad.grad(lambda z: fnp.real(z) ** 2 + fnp.imag(z) ** 2)(z)
    assert_close(g, 6.0 - 8.0j)
    assert_close(funcgrad.grad(lambda z: fnp.abs(z) ** 2)(z), 6.0 - 8.0j)
    assert_close(funcgrad.grad(lambda z: fnp.real(z * fnp.conj(z)))(z), 6.0 - 8.0j)
    # f = Re(z): df/dx = 1, df/dy = 0
    assert_close(funcgrad.grad(lambda z: fnp.real(z))(z), 1.0 + 0.0j)
    # f = Im(z): df/dx = 0, df/dy = 1 -> 0 - 1j
    assert_close(funcgrad.grad(lambda z: fnp.imag(z))(z), -1.0j)
    zs = dev(np.array([1.0 + 2.0j, -0.5 + 0.1j]))
    assert_close(funcgrad.grad(lambda v: fnp.sum(fnp.abs(v) ** 2))(zs), 2 * np.conj(host(zs)))


def test_grad_holomorphic() -> None:
    z = 1.0 + 1.0j
    assert_close(funcgrad.grad(lambda z: z ** 2, holomorphic=True)(z), 2 * z)
    assert_close(funcgrad.grad(fnp.exp, holomorphic=True)(z), np.exp(z))
    assert_close(funcgrad.grad(lambda z: fnp.sin(z) * z, holomorphic=True)(z),
           np.cos(z) * z + np.sin(z))
    with pytest.raises(TypeError, match="complex inputs"):
        funcgrad.grad(lambda z: z * 1j, holomorphic=True)(1.0)
    with pytest.raises(TypeError, match="complex output"):
        funcgrad.grad(lambda z: fnp.real(z), holomorphic=True)(z)


def test_complex_jacobians() -> None:
    zs = dev(np.array([1.0 + 1.0j, 0.5 - 2.0j]))
    want = np.diag(2 * host(zs))
    assert_close(funcgrad.jacfwd(lambda v: v ** 2, holomorphic=True)(zs), want)
    assert_close(funcgrad.jacrev(lambda v: v ** 2, holomorphic=True)(zs), want)
    with pytest.raises(TypeError, match="holomorphic=True"):
        funcgrad.jacfwd(lambda v: v ** 2)(zs)
    with pytest.raises(TypeError, match="holomorphic=True"):
        funcgrad.jacrev(lambda v: v ** 2)(zs)
    # jacrev of a real function of complex inputs follows grad's convention
    assert_close(funcgrad.jacrev(lambda v: fnp.abs(v) ** 2)(zs), np.diag(2 * np.conj(host(zs))))


# ---------------------------------------------------------------------------------------------
# Jacobians


def _f_tree(p):
    return {"y": fnp.sin(p["a"]) * p["b"][0], "z": fnp.sum(p["a"] ** 2) + p["c"]}


P_TREE = {"a": X3, "b": A23, "c": 0.5}


def test_jacobian_structure_and_shapes() -> None:
    p = dev(P_TREE)
    for jac in (funcgrad.jacfwd, funcgrad.jacrev, funcgrad.jacobian):
        j = jac(_f_tree)(p)
        assert set(j) == {"y", "z"}
        for out_key, out_shape in (("y", (3,)), ("z", ())):
            assert set(j[out_key]) == {"a", "b", "c"}
            for in_key in ("a", "b", "c"):
                assert np.shape(host(j[out_key][in_key])) == out_shape + np.shape(P_TREE[in_key])
        assert_close(j["y"]["a"], np.diag(np.cos(X3) * A23[0]))
        want_b = np.zeros((3, 2, 3))
        want_b[np.arange(3), 0, np.arange(3)] = np.sin(X3)
        assert_close(j["y"]["b"], want_b)
        assert_close(j["z"]["a"], 2 * X3)
        assert_close(j["z"]["c"], 1.0)


def test_jacfwd_equals_jacrev_on_pytrees() -> None:
    p = dev(P_TREE)
    assert_close(funcgrad.jacfwd(_f_tree)(p), funcgrad.jacrev(_f_tree)(p))

    def g(x, y):
        return (x[:, None] * y, fnp.tanh(x) @ y)

    x, y = dev(X3), dev(A23.T)
    for argnums in (0, 1, (0, 1), (1, 0)):
        assert_close(funcgrad.jacfwd(g, argnums)(x, y), funcgrad.jacrev(g, argnums)(x, y))


def test_jacobian_argnums_tuple_and_has_aux() -> None:
    f = lambda x, y: (x * y, {"x": x})  # noqa: E731
    x, y = dev(X3), dev(Y3)
    for jac in (funcgrad.jacfwd, funcgrad.jacrev):
        (jx, jy), aux = jac(f, (0, 1), has_aux=True)(x, y)
        assert_close(jx, np.diag(Y3))
        assert_close(jy, np.diag(X3))
        _no_tracers(aux)
        assert_close(aux["x"], X3)


def test_jacobian_chunk_size() -> None:
    f = lambda x: fnp.sin(x)[:, None] * x  # noqa: E731
    x = dev(np.linspace(0.1, 1.0, 7))
    want = funcgrad.jacfwd(f)(x)
    for c in (1, 2, 3, 7, 20):
        assert_close(funcgrad.jacfwd(f, chunk_size=c)(x), want)
        assert_close(funcgrad.jacrev(f, chunk_size=c)(x), want)
    assert_close(funcgrad.hessian(lambda v: fnp.sum(f(v)), chunk_size=3)(x),
           funcgrad.hessian(lambda v: fnp.sum(f(v)))(x))


@pytest.mark.parametrize("jac", ["jacfwd", "jacrev", "hessian"])
def test_jacobian_chunk_size_under_jit_is_a_loop(jac: str) -> None:
    # Under jit the chunks are the steps of a scan in the compiled program (peak memory of
    # one chunk), not unrolled copies; results equal the unchunked Jacobian.
    w = dev(np.random.default_rng(5).standard_normal((6, 7)))
    if jac == "hessian":
        f = lambda x: fnp.sum(fnp.sin(w @ x)) + fnp.sum(x ** 3)  # noqa: E731
    else:
        f = lambda x: fnp.tanh(w @ x)  # noqa: E731
    x = dev(np.linspace(0.1, 1.0, 7))
    want = getattr(funcgrad, jac)(f)(x)
    for c in (2, 3, 7):
        jf = getattr(funcgrad, jac)(f, chunk_size=c)
        prims = [e.prim.name for e in funcgrad.make_jaxpr(jf)(x).jaxpr.eqns]
        n_basis = 6 if jac == "jacrev" else 7
        assert ("scan" in prims) == (c < n_basis), prims
        assert_close(funcgrad.jit(jf)(x), want)


def test_jacobian_input_dtype_errors() -> None:
    with pytest.raises(TypeError, match="float"):
        funcgrad.jacfwd(lambda n: n * 2.0)(dev(np.arange(3)))
    with pytest.raises(TypeError, match="allow_int"):
        funcgrad.jacrev(lambda n: n * 2.0)(dev(np.arange(3)))
    j = funcgrad.jacrev(lambda x, n: x * n, (0, 1), allow_int=True)(dev(X3), dev(np.arange(3)))
    assert np.asarray(host(j[1])).dtype == np.int64  # zeros of the input's dtype, as JAX
    assert np.shape(host(j[1])) == (3, 3)


def test_hessian_of_dict_input_is_dict_of_dicts() -> None:
    def f(p):
        return fnp.sum(p["a"] ** 2 * fnp.sum(p["b"])) + p["c"] ** 3

    p = dev({"a": X3, "b": A23, "c": 2.0})
    h = funcgrad.hessian(f)(p)
    assert set(h) == {"a", "b", "c"}
    shapes = {"a": (3,), "b": (2, 3), "c": ()}
    for k1 in h:
        assert set(h[k1]) == {"a", "b", "c"}
        for k2 in h[k1]:
            assert np.shape(host(h[k1][k2])) == shapes[k1] + shapes[k2]
    assert_close(h["a"]["a"], 2 * np.sum(A23) * np.eye(3))
    assert_close(h["a"]["b"], np.broadcast_to((2 * X3)[:, None, None], (3, 2, 3)))
    assert_close(h["c"]["c"], 12.0)
    assert_close(h["a"]["c"], np.zeros(3))
    # symmetry
    assert_close(h["b"]["a"], np.transpose(host(h["a"]["b"]), (1, 2, 0)))


def test_hessian_argnums_tuple() -> None:
    f = lambda x, y: fnp.sum(x ** 2 * y)  # noqa: E731
    (hxx, hxy), (hyx, hyy) = funcgrad.hessian(f, (0, 1))(dev(X3), dev(Y3))
    assert_close(hxx, np.diag(2 * Y3))
    assert_close(hxy, np.diag(2 * X3))
    assert_close(hyx, np.diag(2 * X3))
    assert_close(hyy, np.zeros((3, 3)))


def test_hvp_and_vhp() -> None:
    def f(x, y):
        return fnp.sum(fnp.sin(x) * y ** 2) + fnp.sum(x * x * x)

    x, y = dev(X3), dev(Y3)
    v = (dev(np.array([1.0, 0.0, -2.0])), dev(np.array([0.5, 0.5, 1.0])))
    (hxx, hxy), (hyx, hyy) = funcgrad.hessian(f, (0, 1))(x, y)
    hv_want = (host(hxx) @ host(v[0]) + host(hxy) @ host(v[1]),
               host(hyx) @ host(v[0]) + host(hyy) @ host(v[1]))
    value, hv = funcgrad.hvp(f, (x, y), v)
    assert_close(value, f(X3, Y3))
    assert_close(hv, hv_want)
    value2, vh = funcgrad.vhp(f, (x, y), v)
    assert_close(value2, f(X3, Y3))
    assert_close(vh, hv_want)  # symmetric Hessian
    with pytest.raises(TypeError, match="tuples"):
        funcgrad.hvp(f, x, v[0])


def test_hvp_pytree() -> None:
    f = lambda p: fnp.sum(p["a"] ** 3) + p["b"] ** 2 * fnp.sum(p["a"])  # noqa: E731
    p = {"a": dev(X3), "b": 1.5}
    v = {"a": dev(np.ones(3)), "b": 1.0}
    _, (hv,) = funcgrad.hvp(f, (p,), (v,))
    assert_close(hv["a"], 6 * X3 + 2 * 1.5)
    assert_close(hv["b"], 2 * 1.5 * 3 + 2 * np.sum(X3))


def test_elementwise_grad() -> None:
    x = dev(X3)
    assert_close(funcgrad.elementwise_grad(fnp.tanh)(x), 1 - np.tanh(X3) ** 2)
    assert_close(funcgrad.elementwise_grad(lambda a, b: a * b, 1)(x, dev(Y3)), X3)
    ga, gb = funcgrad.elementwise_grad(lambda a, b: a * b, (0, 1))(x, dev(Y3))
    assert_close(ga, Y3)
    assert_close(gb, X3)


# ---------------------------------------------------------------------------------------------
# The eager tape (top-level fast path) agrees with linearize + transpose


TAPE_CASES = {
    "tree": (lambda p: fnp.sum(fnp.sin(p["a"]) * p["b"][0]) + p["c"] ** 2, (P_TREE,)),
    "matmul": (lambda w, x: fnp.sum(fnp.tanh(w @ x) ** 2), (A23, X3)),
    "where": (lambda x: fnp.sum(fnp.where(x > 0, x ** 2, fnp.exp(x))), (X3,)),
    "reductions": (lambda x: fnp.max(x) * fnp.mean(x ** 2) - fnp.prod(x), (A23,)),
    "indexing": (lambda x: fnp.sum(x[::2] * x[1]) + x[-1, 1:].sum(), (A23,)),
    "python_scalars": (lambda x, s: x * x * s + s, (2.0, 3.0)),
    "complex_to_real": (lambda z: fnp.sum(fnp.abs(z * (1 + 2j)) ** 2),
                        (np.array([1 + 1j, 2 - 1j]),)),
}


@pytest.mark.parametrize("name", list(TAPE_CASES))
def test_tape_agrees_with_linearize(name, monkeypatch) -> None:
    f, args = TAPE_CASES[name]
    args = dev(args)
    argnums = tuple(range(len(args)))
    got = funcgrad.value_and_grad(f, argnums)(*args)
    with funcgrad.config.override(funcgrad.config.eager_tape, False):
        want = funcgrad.value_and_grad(f, argnums)(*args)
    assert_close(got, want)


@pytest.mark.parametrize("wrap", [lambda a: [a], lambda a: {"a": a}, lambda a: (a,)])
def test_grad_of_a_container_holding_one_scalar_is_an_error(wrap) -> None:
    # JAX: TypeError "Gradient only defined for scalar-output functions. Output was [...]";
    # a forgotten has_aux=True is not silently unwrapped
    with pytest.raises(TypeError, match="requires a function returning a scalar, got a"):
        funcgrad.grad(wrap)(1.0)
    with pytest.raises(TypeError, match="returning a scalar"):
        funcgrad.value_and_grad(wrap)(1.0)


def test_printing_a_value_being_differentiated_shows_it():
    # JAX 0.10.2 prints GradTracer(primal=[1. 2.], ...) / JVPTracer(primal=[1. 2.], ...):
    # a print inside grad or jvp shows the numbers; under jit there are none to show
    seen = []

    def f(x):
        seen.append(repr(x))
        return fnp.sum(x * x)

    funcgrad.grad(f)(np.array([1.0, 2.0]))
    funcgrad.jvp(f, (np.array([1.0, 2.0]),), (np.ones(2),))
    funcgrad.jit(f)(np.array([1.0, 2.0]))
    assert seen[0].endswith("value=[1. 2.])") and seen[1].endswith("value=[1. 2.])")
    assert "value=" not in seen[2] and seen[2].startswith("StagingTracer<f64[2]>(")
