"""The differentiation and vmap APIs, as a JAX / torch.func user drives them.

Every result is compared with an independent reference: closed forms, finite differences
(``check_grads`` or explicit central differences), Python loops, or another transformation
path (tape vs linearize, jacfwd vs jacrev). The first block pins the bugs this pass fixed.
"""

from __future__ import annotations

import dataclasses
from collections import namedtuple
from functools import partial
from typing import Any

import numpy as np
import pytest
from helpers import assert_allclose, dev, host, is_device_array

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import custom_jvp, custom_vjp, tree_util
from funcgrad.test_util import check_grads

F0 = funcgrad.float0




def _x() -> Any:
    return dev(np.array([0.5, 1.5, -0.3]))


# -- fixed: constant / pass-through outputs come back as arrays (as jit returns them) ---------


@pytest.mark.parametrize("kind", ["jvp", "vjp", "linearize", "value_and_grad"])
@pytest.mark.parametrize("fun", [lambda a: a, lambda a: 2.0, lambda a: (a, 3)])
def test_python_scalar_outputs_become_arrays(kind: str, fun: Any) -> None:
    if kind == "jvp":
        out = funcgrad.jvp(fun, (0.5,), (1.0,))[0]
    elif kind == "vjp":
        out = funcgrad.vjp(fun, 0.5)[0]
    elif kind == "linearize":
        out = funcgrad.linearize(fun, 0.5)[0]
    else:
        if isinstance(fun(0.5), tuple):
            pytest.skip("grad needs a scalar output")
        out = funcgrad.value_and_grad(fun)(0.5)[0]
    for leaf in tree_util.tree_leaves(out):
        assert is_device_array(leaf), type(leaf)
        assert leaf.shape == ()
    assert_allclose(out, tree_util.tree_map(np.asarray, fun(0.5)))


def test_custom_rule_primal_outputs_are_arrays() -> None:
    @custom_vjp
    def cv(a: Any, b: Any) -> Any:
        return a * b

    cv.defvjp(lambda a, b: (a * b, b), lambda b, g: (b * g, None))
    y, dy = funcgrad.jvp(cv, (2.0, 3.0), (1.0, 1.0))
    assert is_device_array(y) and is_device_array(dy)
    assert_allclose((y, dy), (np.asarray(6.0), np.asarray(3.0)))
    v, g = funcgrad.value_and_grad(cv)(2.0, 3.0)
    assert is_device_array(v) and is_device_array(g)


# -- fixed: tangent / cotangent errors name the offending leaf; float0 only for integers ------


def test_jvp_tangent_errors_name_the_leaf() -> None:
    x = _x()
    with pytest.raises(TypeError, match=r"float32 instead \(tangents\[0\]\['b'\]\)"):
        funcgrad.jvp(lambda p: p["a"], ({"a": x, "b": x},),
                     ({"a": x, "b": dev(np.ones(3, np.float32))},))
    with pytest.raises(ValueError, match=r"f64\[4\] \(tangents\[1\]\)"):
        funcgrad.jvp(lambda a, b: a, (x, x), (x, dev(np.ones(4))))
    _, f_jvp = funcgrad.linearize(lambda a, b: a * b, x, x)
    with pytest.raises(TypeError, match=r"tangents\[1\]"):
        f_jvp(x, dev(np.ones(3, np.complex128)))
    _, f_vjp = funcgrad.vjp(lambda a: {"u": a, "v": a}, x)
    with pytest.raises(ValueError, match=r"cotangent\['v'\]"):
        f_vjp({"u": x, "v": dev(np.ones(2))})
    f_t = funcgrad.linear_transpose(lambda a: (2.0 * a, a), x)
    with pytest.raises(TypeError, match=r"cotangent\[1\]"):
        f_t((x, dev(np.ones(3, np.float32))))


def test_float0_tangent_for_a_float_primal_is_an_error() -> None:
    # JAX: float0 tangents belong to integer/bool primals only; silently zero was a bug.
    x = _x()
    with pytest.raises(TypeError, match=r"float64, but got tangent dtype \[\('float0', 'V'\)\] instead \(tangents\[0\]\)"):
        funcgrad.jvp(lambda a: a * 2.0, (x,), (np.zeros(3, F0),))
    # ... and still fine for integer primals, with None meaning zero for any leaf.
    y, dy = funcgrad.jvp(lambda a, n: a * n, (x, 3), (x, np.zeros((), F0)))
    assert_allclose(dy, host(x) * 3)
    assert_allclose(funcgrad.jvp(lambda a, n: a * n, (x, 3), (None, None))[1], np.zeros(3))


# -- fixed: hvp / vhp take integer arguments (float0 results), messages fit the API -----------


def test_hvp_vhp_with_integer_argument() -> None:
    x = _x()
    f = lambda a, n: fnp.sum(a ** 3) * n  # noqa: E731
    for api in (funcgrad.hvp, funcgrad.vhp):
        value, (hv, hn) = api(f, (x, 2), (x, None))
        assert_allclose(value, np.sum(host(x) ** 3) * 2)
        assert_allclose(hv, 12.0 * host(x) ** 2)  # H = diag(6 a n), v = a
        assert np.asarray(hn).dtype == F0


def test_elementwise_grad_allow_int_as_its_error_suggests() -> None:
    x = _x()
    with pytest.raises(TypeError, match="elementwise_grad requires.*allow_int=True"):
        funcgrad.elementwise_grad(lambda a, n: a * n, argnums=(0, 1))(x, dev(np.arange(3)))
    ga, gn = funcgrad.elementwise_grad(lambda a, n: a * n, argnums=(0, 1), allow_int=True)(
        x, dev(np.arange(3)))
    assert_allclose(ga, np.arange(3.0))
    assert np.asarray(gn).dtype == F0 and np.asarray(gn).shape == (3,)


# -- grad / value_and_grad --------------------------------------------------------------------


def test_argnums_has_aux_pytrees() -> None:
    x = _x()
    g, aux = funcgrad.grad(
        lambda a, b: (fnp.sum(a * b), {"m": a * 2, "s": "tag", "n": None}),
        argnums=(1, -2), has_aux=True,
    )(x, 2 * x)
    assert_allclose(g, (host(x), 2 * host(x)))
    assert aux["s"] == "tag" and aux["n"] is None
    assert_allclose(aux["m"], 2 * host(x))
    # argnums=(0,) is a tuple of one; lists and None leaves pass through.
    assert_allclose(funcgrad.grad(lambda a: fnp.sum(a), argnums=(0,))(x), (np.ones(3),))
    g = funcgrad.grad(lambda a, b: fnp.sum(a), argnums=(0, 1))(x, None)
    assert g[1] is None


def test_same_array_passed_twice_and_output_is_input() -> None:
    x = _x()
    assert_allclose(funcgrad.grad(lambda a, b: fnp.sum(a * b * b), argnums=(0, 1))(x, x),
                    (host(x) ** 2, 2 * host(x) ** 2))
    v, g = funcgrad.value_and_grad(lambda a, b: b, argnums=(0, 1))(2.0, 3.0)
    assert_allclose((v, g), (np.asarray(3.0), (np.asarray(0.0), np.asarray(1.0))))


@pytest.mark.parametrize("name", ["abs", "abs2", "angle", "real_exp", "imag_log", "conj",
                                  "pow", "fft", "vdot"])
def test_complex_to_real_grad_is_df_dx_minus_i_df_dy(name: str) -> None:
    fs = {
        "abs": lambda z: fnp.sum(fnp.abs(z)),
        "abs2": lambda z: fnp.sum(fnp.abs(z) ** 2),
        "angle": lambda z: fnp.sum(fnp.angle(z)),
        "real_exp": lambda z: fnp.sum(fnp.real(fnp.exp(z))),
        "imag_log": lambda z: fnp.sum(fnp.imag(fnp.log(z))),
        "conj": lambda z: fnp.real(fnp.sum(z * fnp.conj(z) * z)),
        "pow": lambda z: fnp.sum(fnp.real(z ** 3.5)),
        "fft": lambda z: fnp.sum(fnp.abs(fnp.fft.fft(z)) ** 2),
        "vdot": lambda z: fnp.real(fnp.vdot(z, z * dev(np.array([1 + 1j, 2])))),
    }
    f = fs[name]
    z = np.array([0.7 + 0.3j, -0.4 + 1.1j])
    ref = np.zeros_like(z)
    eps = 1e-6
    for k in range(2):
        e = np.zeros_like(z)
        e[k] = eps
        val = lambda w: float(host(f(dev(w))))  # noqa: E731
        ref[k] = ((val(z + e) - val(z - e)) - 1j * (val(z + 1j * e) - val(z - 1j * e))) / (2 * eps)
    assert_allclose(funcgrad.grad(f)(dev(z)), ref, rtol=1e-6, atol=1e-7)


def test_holomorphic_jacobians_and_grads() -> None:
    z = dev(np.array([0.7 + 0.3j, -0.4 + 1.1j]))
    zh = host(z)
    assert_allclose(funcgrad.jacrev(fnp.exp, holomorphic=True)(z), np.diag(np.exp(zh)))
    assert_allclose(funcgrad.jacfwd(fnp.log, holomorphic=True)(z), np.diag(1 / zh))
    assert_allclose(funcgrad.hessian(lambda w: fnp.sum(w ** 3), holomorphic=True)(z),
                    np.diag(6 * zh))
    assert_allclose(funcgrad.vmap(funcgrad.grad(fnp.sin, holomorphic=True))(z), np.cos(zh))
    with pytest.raises(TypeError, match="requires complex outputs"):
        funcgrad.jacfwd(fnp.abs, holomorphic=True)(z)


# -- vjp / jvp / linearize / linear_transpose on pytrees --------------------------------------

P = namedtuple("P", "a b")


@dataclasses.dataclass
class D:
    w: Any
    b: Any


tree_util.register_dataclass(D, data_fields=["w", "b"], meta_fields=[])


def test_pytree_containers_through_every_api() -> None:
    x = _x()
    xh = host(x)
    (ct,) = funcgrad.vjp(lambda p: P(p.a * 2, p.b * 3), P(x, 1.0))[1](P(x, 1.0))
    assert type(ct) is P
    assert_allclose(ct, P(2 * xh, np.asarray(3.0)))
    (ct,) = funcgrad.vjp(lambda d: d.w * d.b, D(x, 2.0))[1](x)
    assert type(ct) is D
    assert_allclose(ct, D(2 * xh, np.asarray(np.sum(xh * xh))))
    assert funcgrad.vjp(lambda p: (p[0] * 2, None), (x, None))[1]((x, None))[0][1] is None
    y, dy = funcgrad.jvp(lambda d: d.w * d.b, (D(x, 2.0),), (D(x, 1.0),))
    assert_allclose(dy, 3 * xh)
    lin = funcgrad.linearize(lambda p: p["a"] * p["b"], {"a": x, "b": 2.0})[1]
    assert_allclose(lin({"a": x, "b": 1.0}), 3 * xh)
    f_t = funcgrad.linear_transpose(lambda p: (p["a"] * 2, fnp.sum(p["b"])), {"a": x, "b": x})
    assert_allclose(f_t((x, 1.0)), ({"a": 2 * xh, "b": np.ones(3)},))
    # Duplicated outputs accumulate their cotangents.
    assert_allclose(funcgrad.vjp(lambda a: (a, a * 1.0, a), x)[1]((x, x, x)), (3 * xh,))


def test_jacobian_structure_outer_output_inner_input() -> None:
    x, y = _x(), dev(np.array([[1.0, 2.0], [3.0, 4.0]]))

    def f(p: Any) -> Any:
        return {"u": p["a"] * fnp.sum(p["b"]), "v": (fnp.sum(p["a"] ** 2), p["b"] * 2)}

    p = {"a": x, "b": y}
    jf, jr = funcgrad.jacfwd(f)(p), funcgrad.jacrev(f)(p)
    shapes = tree_util.tree_map(lambda a: a.shape, jr)
    assert shapes == {"u": {"a": (3, 3), "b": (3, 2, 2)},
                      "v": ({"a": (3,), "b": (2, 2)}, {"a": (2, 2, 3), "b": (2, 2, 2, 2)})}
    assert_allclose(jf, jr, rtol=1e-12, atol=1e-12)
    assert_allclose(jr["u"]["b"], np.broadcast_to(host(x)[:, None, None], (3, 2, 2)))
    h = funcgrad.hessian(lambda d: fnp.sum(d.w ** 2) * d.b)(D(dev(np.arange(2.0)), 3.0))
    assert type(h) is D and type(h.w) is D
    assert_allclose(h.w.w, 6 * np.eye(2))
    assert_allclose(h.b.w, np.array([0.0, 2.0]))


def test_jacobians_of_int_outputs_and_inputs() -> None:
    x = _x()
    j, jn = funcgrad.jacfwd(lambda a: (a * 2, fnp.argmax(a)))(x)
    assert_allclose(j, 2 * np.eye(3))
    # As JAX: the block of an integer output (input) is zeros of its integer dtype.
    assert host(jn).dtype == np.int64 and host(jn).shape == (3,) and not host(jn).any()
    ja, jn = funcgrad.jacrev(lambda a, n: a * n, argnums=(0, 1), allow_int=True)(x, 2)
    assert_allclose(ja, 2 * np.eye(3))
    assert host(jn).dtype == np.int64
    # ... and under vmap, the zero block gets the batch axis.
    X = dev(np.arange(6.0).reshape(2, 3))
    _, jn = funcgrad.vmap(funcgrad.jacrev(lambda a, n: a * n, argnums=(0, 1), allow_int=True),
                          in_axes=(0, None))(X, 2)
    assert host(jn).shape == (2, 3) and host(jn).dtype == np.int64


# -- custom rules -----------------------------------------------------------------------------


def test_custom_vjp_pytree_residuals_none_cotangents_everywhere() -> None:
    @custom_vjp
    def cvt(p: Any, s: Any) -> Any:
        return {"o": p["w"] * s, "q": fnp.sum(p["w"])}

    def fwd(p: Any, s: Any) -> Any:
        return cvt(p, s), (p, [s, {"k": s * 2}])

    def bwd(res: Any, g: Any) -> Any:
        p, (s, _) = res
        return {"w": g["o"] * s + g["q"]}, fnp.sum(g["o"] * p["w"])

    cvt.defvjp(fwd, bwd)

    def loss(p: Any, s: Any) -> Any:
        o = cvt(p, s)
        return fnp.sum(o["o"] ** 2) + o["q"] ** 2

    def ref(p: Any, s: Any) -> Any:
        return fnp.sum((p["w"] * s) ** 2) + fnp.sum(p["w"]) ** 2

    p = {"w": _x()}
    for t in (funcgrad.grad, funcgrad.hessian, funcgrad.jacfwd,
              lambda f, a: funcgrad.jit(funcgrad.grad(f, a))):
        assert_allclose(t(loss, (0, 1))(p, 2.0), t(ref, (0, 1))(p, 2.0), rtol=1e-10, atol=1e-12)
    xs = dev(np.array([1.0, 2.0, -1.0]))
    assert_allclose(
        funcgrad.vmap(funcgrad.hessian(loss, 1), in_axes=(None, 0))(p, xs),
        funcgrad.vmap(funcgrad.hessian(ref, 1), in_axes=(None, 0))(p, xs), rtol=1e-10)

    @custom_vjp
    def f(p: Any, q: Any) -> Any:
        return p["a"] * q

    f.defvjp(lambda p, q: (f(p, q), (p, q)), lambda r, g: (None, fnp.sum(g * r[0]["a"])))
    gp, gq = funcgrad.grad(lambda p, q: fnp.sum(f(p, q)), argnums=(0, 1))(
        {"a": _x(), "b": _x()}, 2.0)
    assert_allclose(gp, {"a": np.zeros(3), "b": np.zeros(3)})
    assert_allclose(gq, np.asarray(np.sum(host(_x()))))


def test_custom_jvp_nondiff_callable_and_int_defjvps() -> None:
    @partial(custom_jvp, nondiff_argnums=(0,))
    def app(fn: Any, x: Any) -> Any:
        return fn(x)

    @app.defjvp
    def app_jvp(fn: Any, primals: Any, tangents: Any) -> Any:
        return app(fn, primals[0]), 10.0 * tangents[0]

    x = _x()
    assert_allclose(funcgrad.vmap(funcgrad.grad(lambda a: app(fnp.sin, a)))(x), np.full(3, 10.0))
    assert_allclose(funcgrad.hessian(lambda a: app(fnp.sin, a))(1.0), np.asarray(0.0))

    @partial(custom_jvp, nondiff_argnums=(1,))
    def powk(a: Any, k: Any) -> Any:
        return a ** k

    powk.defjvp(lambda k, p, t: (powk(p[0], k), k * p[0] ** (k - 1) * t[0]))
    assert_allclose(funcgrad.vmap(funcgrad.grad(powk), in_axes=(None, 0))(2.0, dev(np.arange(4))),
                    np.array([0.0, 1.0, 4.0, 12.0]))

    @custom_jvp
    def fxy(a: Any, b: Any) -> Any:
        return fnp.sin(a) * b

    fxy.defjvps(lambda t, ans, a, b: fnp.cos(a) * t * b, None)
    g = funcgrad.grad(fxy, argnums=(0, 1))(0.5, 2.0)
    assert_allclose(g, (np.asarray(2 * np.cos(0.5)), np.asarray(0.0)))


def test_mutually_recursive_custom_jvp_to_order_four() -> None:
    @custom_jvp
    def mysin(a: Any) -> Any:
        return fnp.sin(a)

    @custom_jvp
    def mycos(a: Any) -> Any:
        return fnp.cos(a)

    mysin.defjvp(lambda p, t: (mysin(p[0]), mycos(p[0]) * t[0]))
    mycos.defjvp(lambda p, t: (mycos(p[0]), -mysin(p[0]) * t[0]))
    g4 = funcgrad.grad(funcgrad.grad(funcgrad.grad(funcgrad.grad(mysin))))
    assert_allclose(g4(0.4), np.asarray(np.sin(0.4)), rtol=1e-12)
    x = _x()
    ref = np.zeros((3,) * 4)
    for i in range(3):
        ref[i, i, i, i] = -np.cos(host(x)[i])
    assert_allclose(funcgrad.jacrev(funcgrad.jacfwd(funcgrad.jacrev(mysin)))(x), ref)


# -- nesting to order 4, vmap compositions ----------------------------------------------------


def test_order_four_mixed_modes_and_vmap() -> None:
    def s(v: Any) -> Any:
        return fnp.sum(fnp.sin(v) * fnp.exp(v[::-1]))

    x = _x()
    h4 = funcgrad.jacfwd(funcgrad.jacrev(funcgrad.jacfwd(funcgrad.jacrev(s))))(x)
    h4b = funcgrad.jacrev(funcgrad.jacfwd(funcgrad.jacrev(funcgrad.jacfwd(s))))(x)
    assert_allclose(h4, h4b, rtol=1e-10, atol=1e-12)
    xs = dev(np.stack([host(x), 2 * host(x)]))
    batched = funcgrad.vmap(funcgrad.jacfwd(funcgrad.jacrev(funcgrad.hessian(s))))(xs)
    assert_allclose(batched[0], h4, rtol=1e-10, atol=1e-12)
    # A 4th derivative against the closed form: d^4/dt^4 sin(t) e^(2t) at t (1-d case).
    t = 0.3
    ref = np.exp(2 * t) * (24 * np.cos(t) - 7 * np.sin(t))  # Im((2+i)^4 e^((2+i)t))
    d4 = funcgrad.grad(funcgrad.grad(funcgrad.grad(funcgrad.grad(
        lambda u: fnp.sin(u) * fnp.exp(2 * u)))))(t)
    assert_allclose(d4, np.asarray(ref), rtol=1e-10)


def test_vmap_of_hessian_jacrev_and_grad_of_vmap_with_dict_prefix() -> None:
    rng = np.random.default_rng(0)
    X, w = dev(rng.normal(size=(4, 3))), dev(rng.normal(size=3))

    def loss(w: Any, x: Any) -> Any:
        return fnp.tanh(fnp.dot(x, w)) ** 2 + fnp.sum(fnp.sin(w) * x)

    loop = np.stack([host(funcgrad.hessian(loss)(w, X[i])) for i in range(4)])
    assert_allclose(funcgrad.vmap(funcgrad.hessian(loss), in_axes=(None, 0))(w, X), loop,
                    rtol=1e-12, atol=1e-12)
    grads = np.stack([host(funcgrad.grad(loss)(w, X[i])) for i in range(4)])
    assert_allclose(funcgrad.jacfwd(lambda v: funcgrad.vmap(loss, in_axes=(None, 0))(v, X))(w),
                    grads, rtol=1e-12, atol=1e-12)

    def f2(p: Any) -> Any:
        inner = funcgrad.vmap(lambda q: fnp.sin(q["a"]) * q["b"], in_axes=({"a": 0, "b": None},))
        return fnp.sum(inner(p))

    check_grads(f2, ({"a": X, "b": w},), order=2)


@pytest.mark.parametrize("chunk", [1, 2, 3, 5])
def test_vmap_chunk_size_negative_axes_under_grad_and_jvp(chunk: int) -> None:
    X = dev(np.arange(24.0).reshape(2, 3, 4) / 10)

    def f(a: Any) -> Any:
        return fnp.sin(a)[..., None] * a[0]

    plain = funcgrad.vmap(f, in_axes=-1, out_axes=-2)
    chunked = funcgrad.vmap(f, in_axes=-1, out_axes=-2, chunk_size=chunk)
    assert_allclose(chunked(X), plain(X))
    loss = lambda g: lambda v: fnp.sum(g(v) ** 2)  # noqa: E731
    assert_allclose(funcgrad.grad(loss(chunked))(X), funcgrad.grad(loss(plain))(X), rtol=1e-12)
    assert_allclose(funcgrad.jvp(chunked, (X,), (X,))[1], funcgrad.jvp(plain, (X,), (X,))[1])


def test_vmap_outputs_scalars_none_ints_and_axis_size() -> None:
    X = dev(np.arange(6.0).reshape(2, 3))
    assert_allclose(funcgrad.vmap(lambda a: 3.0)(X), np.array([3.0, 3.0]))
    assert funcgrad.vmap(lambda a: None)(X) is None
    out = funcgrad.vmap(lambda a: (a, 1), chunk_size=1)(X)
    assert_allclose(out[1], np.array([1, 1]))
    assert_allclose(funcgrad.vmap(lambda: fnp.ones(2), axis_size=3)(), np.ones((3, 2)))
    assert_allclose(funcgrad.vmap(lambda a: a * 2, in_axes=None, axis_size=0)(X[0]),
                    np.zeros((0, 3)))
    assert_allclose(funcgrad.vmap(lambda a: fnp.sum(a), out_axes=-1)(X), np.array([3.0, 12.0]))
    g = funcgrad.grad(lambda w: fnp.sum(funcgrad.vmap(lambda: w * 2, axis_size=5,
                                                      chunk_size=2)()))(1.0)
    assert_allclose(g, np.asarray(10.0))


# -- the eager tape agrees with linearize + transpose on composite programs -------------------


_TAPE_CASES = {
    "while": lambda a: fnp.sum(funcgrad.while_loop(
        lambda c: c[1] < 3, lambda c: (c[0] * fnp.sin(c[0]), c[1] + 1), (a, 0))[0]),
    "fori": lambda a: fnp.sum(funcgrad.fori_loop(0, 4, lambda i, c: c * a + i, a)),
    "linearize_inside": lambda a: fnp.sum(funcgrad.linearize(fnp.sin, a)[1](a) ** 2),
    "vjp_inside": lambda a: fnp.sum(funcgrad.vjp(fnp.sin, a)[1](a)[0] ** 2),
    "hessian_inside": lambda a: fnp.sum(funcgrad.hessian(lambda b: fnp.sum(b ** 3))(a)),
    "jacrev_chunk": lambda a: fnp.sum(funcgrad.jacrev(fnp.sin, chunk_size=2)(a) ** 2),
    "at_add": lambda a: fnp.sum(a.at[np.array([0, 0])].add(a[1:]) ** 2),
    "remat": lambda a: fnp.sum(funcgrad.checkpoint(lambda b: fnp.sin(b) * b)(a)),
}


@pytest.mark.parametrize("name", sorted(_TAPE_CASES))
def test_tape_agrees_with_linearize(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    f, x = _TAPE_CASES[name], _x()
    tape = funcgrad.grad(f)(x)
    with funcgrad.config.override(funcgrad.config.eager_tape, False):
        assert_allclose(tape, funcgrad.grad(f)(x), rtol=1e-12, atol=1e-12)


# -- perturbation confusion, closures, pullbacks used later -----------------------------------


def test_perturbation_confusion_variants() -> None:
    g = funcgrad.grad
    # d/dc [d/dy c y^2 at y=c] = d/dc 2c^2 = 4c
    assert_allclose(g(lambda c: g(lambda y: c * y ** 2)(c))(3.0), np.asarray(12.0))
    assert_allclose(funcgrad.jacfwd(lambda c: g(lambda y: c * y ** 2)(c))(3.0),
                    np.asarray(12.0))
    assert_allclose(g(lambda c: funcgrad.linearize(lambda y: c * y ** 2, c)[1](1.0))(3.0),
                    np.asarray(12.0))
    assert_allclose(g(lambda c: funcgrad.vjp(lambda y: c * y ** 2, c)[1](1.0)[0])(3.0),
                    np.asarray(12.0))
    pb = funcgrad.vjp(lambda y: y ** 2, 3.0)[1]
    assert_allclose(g(lambda t: pb(t)[0] * t)(2.0), np.asarray(24.0))
    aux = g(lambda c: g(lambda a: (a * c, a * c), has_aux=True)(2.0)[1])(3.0)
    assert_allclose(aux, np.asarray(2.0))


def test_vjp_linearize_and_transpose_functions_are_pytrees_through_jit() -> None:
    # JAX 0.10.2: f_vjp (a VJP object), f_jvp and linear_transpose's function are pytrees
    # over their residuals: a jitted function returns them, takes them as arguments.
    # Values recorded from JAX: cos(x) * x + sin(x) at x = [0, 1, 2] (derivative of x sin x)
    x = dev(np.arange(3.0))
    want = [0.0, 1.381773, 0.077004]

    def f(a):
        return fnp.sin(a) * a

    _, f_vjp = funcgrad.jit(lambda a: funcgrad.vjp(f, a))(x)
    np.testing.assert_allclose(host(f_vjp(dev(np.ones(3)))[0]), want, atol=1e-6)
    pulled = funcgrad.jit(lambda g, c: g(c)[0])(funcgrad.vjp(f, x)[1], dev(np.ones(3)))
    np.testing.assert_allclose(host(pulled), want, atol=1e-6)
    _, f_jvp = funcgrad.jit(lambda a: funcgrad.linearize(f, a))(x)
    np.testing.assert_allclose(host(f_jvp(dev(np.ones(3)))), want, atol=1e-6)
    f_t = funcgrad.jit(lambda a: funcgrad.linear_transpose(lambda b: 2 * b, a))(x)
    np.testing.assert_allclose(host(f_t(dev(np.ones(3)))[0]), [2.0, 2.0, 2.0])
    assert funcgrad.tree_util.tree_leaves(funcgrad.vjp(f, x)[1])  # the residuals
