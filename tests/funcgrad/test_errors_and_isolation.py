"""Errors and isolation: every documented error path gives a clear error, and transformations keep
no state between calls (shapes changing between calls, interleaved transformed functions,
exceptions raised inside transformations, threads)."""

from __future__ import annotations

import concurrent.futures
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from helpers import assert_allclose, dev, host

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.core import current_trace, eval_trace

EXACT = dict(rtol=1e-10, atol=1e-12)


# -- errors -----------------------------------------------------------------------------------


@pytest.mark.parametrize("make", [
    lambda f: funcgrad.grad(f), lambda f: funcgrad.value_and_grad(f),
    lambda f: funcgrad.elementwise_grad(f),
])
def test_integer_input_to_grad_suggests_allow_int(make: Callable) -> None:
    with pytest.raises(TypeError, match=r"argument 0.*int64.*allow_int=True"):
        make(lambda x: x * 2.0)(dev(np.arange(3)))
    with pytest.raises(TypeError, match=r"argument 0\['b'\].*int64"):
        funcgrad.grad(lambda p: p["a"] * 2.0)({"a": 1.0, "b": 2})


@pytest.mark.parametrize("out, match", [
    (lambda x: x * 2.0, r"scalar output, got shape \(3,\).*vjp or jacrev"),
    (lambda x: (fnp.sum(x), fnp.sum(x)), r"one scalar.*2 leaves"),
    (lambda x: None, r"one scalar.*0 leaves"),
    (lambda x: fnp.sum(x) * 1j, r"real-valued output.*holomorphic=True"),
    (lambda x: fnp.sum(x) > 0, r"float.*output, got dtype bool"),
    (lambda x: fnp.reshape(fnp.sum(x), (1,)), r"scalar output, got shape \(1,\)"),
])
def test_grad_of_a_bad_output_is_a_clear_type_error(out: Callable, match: str) -> None:
    with pytest.raises(TypeError, match=match):
        funcgrad.grad(out)(dev(np.ones(3)))


def test_jvp_tangent_mismatches_name_shapes_and_dtypes() -> None:
    x = dev(np.ones(3))
    with pytest.raises(ValueError, match=r"shapes must match.*f64\[3\].*f64\[2\]"):
        funcgrad.jvp(fnp.sin, (x,), (dev(np.ones(2)),))
    with pytest.raises(TypeError, match=r"float64, but got tangent dtype float32"):
        funcgrad.jvp(fnp.sin, (x,), (dev(np.ones(3, np.float32)),))
    with pytest.raises(TypeError, match=r"float64, but got tangent dtype int64"):
        funcgrad.jvp(fnp.sin, (x,), (dev(np.ones(3, np.int64)),))
    with pytest.raises(TypeError, match=r"float32, but got tangent dtype float64"):
        funcgrad.jvp(fnp.sin, (dev(np.ones(3, np.float32)),), (x,))
    with pytest.raises(TypeError, match=r"float64, but got tangent dtype complex128"):
        funcgrad.jvp(fnp.sin, (1.0,), (1j,))
    with pytest.raises(TypeError, match=r"tuples"):
        funcgrad.jvp(fnp.sin, x, x)
    with pytest.raises(ValueError, match=r"2 primals but 1 tangents"):
        funcgrad.jvp(lambda a, b: a, (x, x), (x,))
    # the pullback and the linearized function check the same way
    _, pullback = funcgrad.vjp(fnp.sin, x)
    with pytest.raises(ValueError, match=r"shapes must match"):
        pullback(dev(np.ones(2)))
    with pytest.raises(TypeError, match=r"dtype float64, got float32"):
        pullback(dev(np.ones(3, np.float32)))
    _, f_jvp = funcgrad.linearize(fnp.sin, x)
    with pytest.raises(ValueError, match=r"shapes must match"):
        f_jvp(dev(np.ones(4)))


def test_vmap_errors_name_the_arguments() -> None:
    a, b = dev(np.ones((3, 2))), dev(np.ones((4, 2)))
    # JAX's message: "vmap got inconsistent sizes for array axes to be mapped:" then a line
    # per mapped axis ("  * one axis had size 3: axis 0 of argument x of type float64[3,2];")
    msg = (r"vmap got inconsistent sizes for array axes to be mapped:\n"
           r"  \* one axis had size 3: axis 0 of argument x of type f64\[3,2\];\n"
           r"  \* one axis had size 4: axis 0 of argument y of type f64\[4,2\]$")
    with pytest.raises(ValueError, match=msg):
        funcgrad.vmap(lambda x, y: x + y)(a, b)
    with pytest.raises(ValueError, match=r"  \* the `axis_size` argument was 5;\n  \* one axis"):
        funcgrad.vmap(lambda x: x, axis_size=5)(a)
    with pytest.raises(ValueError, match=r"in_axes=2 is out of range.*rank 2"):
        funcgrad.vmap(lambda x: x, in_axes=2)(a)
    with pytest.raises(ValueError, match=r"no argument is mapped"):
        funcgrad.vmap(lambda x: x, in_axes=None)(a)
    with pytest.raises(ValueError, match=r"in_axes is a tuple of 1"):
        funcgrad.vmap(lambda x, y: x, in_axes=(0,))(a, a)
    with pytest.raises(ValueError, match=r"out_axes is None.*depends on the mapped axis"):
        funcgrad.vmap(lambda x: x, out_axes=None)(a)
    with pytest.raises(funcgrad.ConcretizationError, match=r"where"):
        funcgrad.vmap(lambda x: x if x[0] > 0 else -x)(a)
    with pytest.raises(TypeError, match=r"must be a function"):
        funcgrad.vmap(3)


@pytest.mark.parametrize("transform", [
    lambda f: funcgrad.grad(lambda x: fnp.sum(f(x)))(dev(np.ones(2))),
    lambda f: funcgrad.vmap(f)(dev(np.ones((2, 2)))),
    lambda f: funcgrad.jit(f)(dev(np.ones(2))),
    lambda f: funcgrad.jvp(f, (dev(np.ones(2)),), (dev(np.ones(2)),)),
    lambda f: funcgrad.linearize(f, dev(np.ones(2))),
    lambda f: funcgrad.vjp(f, dev(np.ones(2))),
    lambda f: funcgrad.make_jaxpr(f)(dev(np.ones(2))),
    lambda f: funcgrad.jacfwd(f)(dev(np.ones(2))),
    lambda f: funcgrad.hessian(lambda x: fnp.sum(f(x)))(dev(np.ones(2))),
    lambda f: funcgrad.grad(lambda x: fnp.sum(funcgrad.vmap(f)(x)))(dev(np.ones((2, 2)))),
], ids=["grad", "vmap", "jit", "jvp", "linearize", "vjp", "make_jaxpr", "jacfwd", "hessian",
        "grad-vmap"])
def test_leaked_tracers_raise_when_used_later(transform: Callable) -> None:
    leaked: list = []

    def f(x: Any) -> Any:
        leaked.append(x)
        return fnp.sin(x)

    transform(f)
    t = leaked[-1]
    with pytest.raises(funcgrad.UnexpectedTracerError, match="escaped"):
        fnp.sin(t)
    with pytest.raises(funcgrad.UnexpectedTracerError):
        t + 1.0
    with pytest.raises(funcgrad.UnexpectedTracerError):
        funcgrad.grad(lambda y: y * fnp.sum(t))(1.0)
    with pytest.raises(funcgrad.UnexpectedTracerError):
        funcgrad.jit(lambda y: y * fnp.sum(t))(1.0)
    with pytest.raises(funcgrad.UnexpectedTracerError):
        funcgrad.vmap(lambda y: y * fnp.sum(t))(dev(np.ones(2)))
    assert current_trace() is eval_trace


def test_other_documented_errors() -> None:
    x = dev(np.ones(2))
    with pytest.raises(TypeError, match=r"grad: has_aux=True.*pair.*an array"):
        funcgrad.grad(lambda v: fnp.sum(v), has_aux=True)(x)
    with pytest.raises(TypeError, match=r"grad: has_aux=True.*tuple of length 3"):
        funcgrad.grad(lambda v: (fnp.sum(v), 1, 2), has_aux=True)(x)
    for api in (funcgrad.grad, funcgrad.value_and_grad, funcgrad.jacfwd, funcgrad.jacrev,
                funcgrad.elementwise_grad):
        with pytest.raises(TypeError, match="expected a function"):
            api(3.0)
    with pytest.raises(TypeError, match=r"argnums=1 but the function was called with 1"):
        funcgrad.grad(lambda v: v, argnums=1)(1.0)
    with pytest.raises(ValueError, match=r"same argument twice"):
        funcgrad.grad(lambda a, b: a, argnums=(0, -2))(1.0, 2.0)
    with pytest.raises(TypeError, match=r"argnums must be an int"):
        funcgrad.grad(lambda a: a, argnums=True)
    with pytest.raises(TypeError, match=r"jacfwd requires float or complex inputs"):
        funcgrad.jacfwd(lambda v: v)(dev(np.arange(2)))
    with pytest.raises(TypeError, match=r"jacrev requires float or complex inputs.*allow_int"):
        funcgrad.jacrev(lambda v: v * 1.0)(dev(np.arange(2)))
    with pytest.raises(TypeError, match=r"jacrev requires real-valued \(float\) outputs"):
        funcgrad.jacrev(lambda v: fnp.argmax(v))(x)
    with pytest.raises(TypeError, match=r"holomorphic=True requires complex inputs"):
        funcgrad.grad(lambda z: z * 2.0, holomorphic=True)(1.0)
    with pytest.raises(TypeError, match=r"not linear"):
        funcgrad.linear_transpose(lambda v: v * v, x)(x)
    with pytest.raises(TypeError, match=r"not linear"):
        funcgrad.linear_transpose(fnp.sin, x)(x)
    with pytest.raises(TypeError, match=r"float or complex"):  # integer -> float (JAX too)
        funcgrad.linear_transpose(lambda v: v * 1.0, dev(np.arange(2)))
    with pytest.raises(funcgrad.TracerMutationError, match=r"\.at\["):
        funcgrad.grad(lambda v: v.__setitem__(0, 1.0))(x)
    with pytest.raises(funcgrad.ConcretizationError, match=r"cond"):
        funcgrad.jit(lambda v: v if v > 0 else -v)(1.0)


def test_custom_rule_errors_name_the_rule() -> None:
    @funcgrad.custom_vjp
    def f(x: Any) -> Any:
        return x * 2.0

    f.defvjp(lambda x: (x * 2.0, None), lambda r, g: (fnp.sum(g),))
    with pytest.raises(ValueError, match=r"bwd rule of f.*shape \(\).*\(2,\)"):
        funcgrad.grad(lambda x: fnp.sum(f(x)))(dev(np.ones(2)))

    @funcgrad.custom_jvp
    def h(x: Any) -> Any:
        return x * 2.0

    h.defjvp(lambda p, t: (h(p[0]), fnp.sum(t[0])))
    with pytest.raises(ValueError, match=r"JVP rule of h.*shape \(\)"):
        funcgrad.jvp(h, (dev(np.ones(2)),), (dev(np.ones(2)),))


# -- Python numbers from differentiated values (issue: derivatives silently dropped) -----------


_DROPS = [
    ("float", lambda x: x * float(x)),
    ("complex", lambda x: x * complex(x).real),
    ("math.sin", lambda x: math.sin(x) + x),
    ("math.exp", lambda x: math.exp(x) * x),
    ("np.float64", lambda x: x * np.float64(x)),
    ("np.float32", lambda x: x * np.float32(x)),
    ("np.int64", lambda x: x * np.int64(x)),
    ("np.asarray", lambda x: x * np.asarray(x)),
]


@pytest.mark.parametrize("name, f", _DROPS, ids=[n for n, _ in _DROPS])
@pytest.mark.parametrize("transform", [
    lambda f: funcgrad.grad(f)(3.0),
    lambda f: funcgrad.value_and_grad(f)(3.0),
    lambda f: funcgrad.grad(funcgrad.grad(f))(3.0),
    lambda f: funcgrad.jvp(f, (3.0,), (1.0,)),
    lambda f: funcgrad.vjp(f, 3.0),
    lambda f: funcgrad.jacfwd(f)(3.0),
    lambda f: funcgrad.jacrev(f)(3.0),
    lambda f: funcgrad.vmap(funcgrad.grad(f))(np.ones(2)),
    lambda f: funcgrad.jit(funcgrad.grad(f))(3.0),
    lambda f: funcgrad.grad(funcgrad.jit(f))(3.0),
], ids=["grad", "value_and_grad", "grad-grad", "jvp", "vjp", "jacfwd", "jacrev", "vmap-grad",
        "jit-grad", "grad-jit"])
def test_python_numbers_of_differentiated_values_raise(name: str, f: Callable,
                                                       transform: Callable) -> None:
    # x * float(x) differentiated as 3x (not x**2) was a silent wrong answer.
    with pytest.raises(funcgrad.ConcretizationError) as info:
        transform(f)
    msg = str(info.value)
    assert __file__ in msg  # the user's line
    if "being differentiated" in msg or "derivative" in msg:  # (else a jit/vmap error)
        assert "stop_gradient" in msg


def test_python_numbers_of_differentiated_values_name_the_fixes() -> None:
    with pytest.raises(funcgrad.ConcretizationError,
                       match=r"float\(\) of a value being differentiated \(f64\[\], under grad\)"
                             r" at .*would drop its derivative.*funcgrad.numpy.*stop_gradient"):
        funcgrad.grad(lambda x: x * float(x))(3.0)


def test_constants_from_differentiated_values_are_asked_for_explicitly() -> None:
    # stop_gradient (and item()) give constants; bool() for control flow keeps working.
    sg = funcgrad.stop_gradient
    assert float(funcgrad.grad(lambda x: x * float(sg(x)))(3.0)) == 3.0
    assert float(funcgrad.grad(lambda x: x * math.sin(sg(x)))(1.0)) == pytest.approx(math.sin(1))
    assert float(funcgrad.grad(lambda x: x * np.float64(sg(x)))(3.0)) == 3.0
    assert float(funcgrad.grad(funcgrad.grad(lambda x: x * x * float(sg(x))))(3.0)) == 6.0
    assert float(funcgrad.grad(lambda x: x * x.item())(3.0)) == 3.0
    assert float(funcgrad.jvp(lambda x: x * float(sg(x)), (3.0,), (1.0,))[1]) == 3.0
    assert float(funcgrad.grad(lambda x: x * 2.0 if x > 0 else -x)(1.0)) == 2.0
    # integer values carry no derivative: int() of them is fine; int() of a float is a
    # truncation, whose derivative is zero: a constant is right, as JAX's grad gives
    # (jax.grad(lambda x: x * int(x))(3.5) == 3.0; the sum of ones(int(x)) * x: 3.0)
    assert float(funcgrad.grad(lambda x: x * int(x))(3.5)) == 3.0
    assert float(funcgrad.grad(lambda x: fnp.ones(int(x)).sum() * x)(3.5)) == 3.0
    assert float(funcgrad.grad(lambda x, n: x * int(n), allow_int=True)(3.0, np.int64(2))) == 2.0
    # outside any transformation Python numbers are what they always were
    assert float(fnp.sin(1.0)) == math.sin(1.0) == math.sin(fnp.asarray(1.0))
    assert np.float64(fnp.ones(())) == 1.0


# -- errors name the argument, the output, the function called and the user's line ------------


def test_non_array_arguments_and_outputs_are_named() -> None:
    with pytest.raises(TypeError, match=r"^grad: argument 0 is None"):
        funcgrad.grad(lambda x: fnp.sin(x))(None)
    with pytest.raises(TypeError, match=r"^value_and_grad: argument 1\['b'\] is a str"):
        funcgrad.value_and_grad(lambda x, y: x, argnums=1)(1.0, {"b": "s"})
    for api, name in ((funcgrad.grad, "grad"), (funcgrad.value_and_grad, "value_and_grad"),
                      (funcgrad.elementwise_grad, "elementwise_grad"),
                      (funcgrad.jacfwd, "jacfwd"), (funcgrad.jacrev, "jacrev"),
                      (funcgrad.make_jaxpr, "make_jaxpr")):
        with pytest.raises(TypeError, match=rf"^{name}: the function's output is a str"):
            api(lambda x: "s")(1.0)
    with pytest.raises(TypeError, match=r"^vjp: the function's output\['b'\] is a str"):
        funcgrad.vjp(lambda x: {"a": x, "b": "s"}, 1.0)
    with pytest.raises(TypeError, match=r"^jvp: the function's output is a str"):
        funcgrad.jvp(lambda x: "s", (1.0,), (1.0,))
    for run in (lambda: fnp.sin(None), lambda: funcgrad.jit(fnp.sin)(None),
                lambda: funcgrad.jacfwd(fnp.sin)(None)):
        with pytest.raises(TypeError, match=r"^sin: operand 0 is None, not an array"):
            run()
    with pytest.raises(TypeError, match=r"^add: operand 0 is a str.* at .*test_errors_and_isolation"):
        fnp.add("a", 1.0)


@pytest.mark.parametrize("api, name", [
    (funcgrad.grad, "grad"), (funcgrad.value_and_grad, "value_and_grad"),
    (funcgrad.jacfwd, "jacfwd"), (funcgrad.jacrev, "jacrev"),
    (funcgrad.elementwise_grad, "elementwise_grad"), (funcgrad.hessian, "hessian"),
    (funcgrad.jacobian, "jacobian"),
])
def test_argnums_errors_name_the_function_called(api: Callable, name: str) -> None:
    with pytest.raises(TypeError, match=rf"^{name}: argnums must contain ints"):
        api(lambda x: x, argnums=("a",))
    with pytest.raises(TypeError, match=rf"^{name}: argnums=3 but"):
        api(lambda x: x, argnums=3)(1.0)
    with pytest.raises(ValueError, match=rf"^{name}: argnums \(0, 0\) refers"):
        api(lambda x: x, argnums=(0, 0))(1.0)


@pytest.mark.parametrize("api, name, int_hint", [
    (funcgrad.hessian, "hessian", "cast it to float$"),
    (funcgrad.jacobian, "jacobian", "pass allow_int"),
    (funcgrad.jacrev, "jacrev", "pass allow_int"),
    (funcgrad.jacfwd, "jacfwd", "cast it to float, or use jvp"),
])
def test_jacobian_family_errors_name_the_function_called(api: Callable, name: str,
                                                         int_hint: str) -> None:
    """hessian is jacfwd(jacrev(f)) and jacobian is jacrev, but the user called them: bad
    input (at either level of hessian) is reported under the name called, with the argument."""
    x = dev(np.ones(2))
    with pytest.raises(TypeError, match=rf"^{name}: expected a function"):
        api(3.0)
    with pytest.raises(TypeError, match=rf"^{name}: chunk_size must be a positive int"):
        api(fnp.sum, chunk_size=0)
    with pytest.raises(TypeError, match=rf"^{name} requires float or complex inputs, but "
                                        rf"argument 1\['w'\] has dtype int64; {int_hint}"):
        api(lambda a, p: fnp.sum(a * p["w"]), argnums=1)(x, {"w": dev(np.arange(2))})
    with pytest.raises(TypeError, match=rf"^{name}: argument 0\[1\] is a str, not an array"):
        api(lambda t: fnp.sum(t[0]))((x, "s"))
    with pytest.raises(TypeError, match=rf"^{name}: the function's output is a str"):
        api(lambda v: "s")(x)
    with pytest.raises(TypeError, match=rf"^{name}: has_aux=True requires .* pair"):
        api(lambda v: fnp.sum(v ** 2), has_aux=True)(x)
    if name != "jacfwd":  # jacfwd takes integer outputs (zero blocks)
        with pytest.raises(TypeError, match=rf"^{name} requires real-valued \(float\) outputs"):
            api(lambda v: fnp.argmax(v))(x)


def test_hvp_linearize_vjp_jet_errors_name_the_function_called() -> None:
    x = dev(np.ones(3))
    with pytest.raises(ValueError, match=r"^hvp: primal and tangent shapes must match.*"
                                         r"\(tangents\[0\]\)"):
        funcgrad.hvp(lambda v: fnp.sum(v ** 2), (x,), (dev(np.ones(2)),))
    with pytest.raises(TypeError, match=r"^hvp: primals\[0\] is a str"):
        funcgrad.hvp(lambda v: fnp.sum(v ** 2), ("s",), (x,))
    with pytest.raises(TypeError, match=r"^hvp requires a scalar output"):
        funcgrad.hvp(lambda v: v ** 2, (x,), (x,))
    with pytest.raises(ValueError, match=r"^vhp: .*shapes must match"):
        funcgrad.vhp(lambda v: fnp.sum(v ** 2), (x,), (dev(np.ones(2)),))
    with pytest.raises(TypeError, match=r"^linearize: argument 1 is a str"):
        funcgrad.linearize(lambda a, b: a, x, "s")
    with pytest.raises(TypeError, match=r"^linearize: expected a function"):
        funcgrad.linearize(3.0, x)
    with pytest.raises(TypeError, match=r"^vjp: argument 0\['a'\] is a str"):
        funcgrad.vjp(lambda p: p, {"a": "s"})
    with pytest.raises(TypeError, match=r"^jvp: primals\[0\] is a str"):
        funcgrad.jvp(lambda p: p, ("s",), (1.0,))
    with pytest.raises(TypeError, match=r"^jet: primals\[0\] is a str"):
        funcgrad.jet(lambda p: p, ("s",), ((1.0,),))
    with pytest.raises(TypeError, match=r"^linear_transpose: argument 0\['a'\] is a str"):
        funcgrad.linear_transpose(lambda p: p, {"a": "s"})
    with pytest.raises(TypeError, match=r"^linear_transpose: expected a function"):
        funcgrad.linear_transpose(3.0, x)


@pytest.mark.parametrize("f", [
    lambda a, b: fnp.matmul(a, b), lambda a, b: fnp.matmul(a, 2.0), lambda a, b: fnp.dot(a, b),
    lambda a, b: fnp.add(a, b.T[:1]), lambda a, b: fnp.reshape(a, (5,)),
    lambda a, b: fnp.concatenate([a, b[0]]), lambda a, b: fnp.einsum("ij,jk", a, a),
    lambda a, b: fnp.linalg.inv(a), lambda a, b: fnp.take_along_axis(a, b, axis=0),
], ids=["matmul", "matmul-scalar", "dot", "add", "reshape", "concatenate", "einsum", "inv",
        "take_along_axis"])
@pytest.mark.parametrize("transform", [
    funcgrad.jit, funcgrad.make_jaxpr, lambda f: funcgrad.jit(funcgrad.jit(f)),
    lambda f: funcgrad.jit(lambda a, b: f(a, b[0]) if False else f(a, b)),
], ids=["jit", "make_jaxpr", "jit-jit", "jit-lambda"])
def test_shape_and_dtype_errors_raised_while_tracing_name_the_users_line(
        f: Callable, transform: Callable) -> None:
    a, b = dev(np.ones((2, 3))), dev(np.ones((2, 3)))
    with pytest.raises((ValueError, TypeError, IndexError)) as info:
        transform(f)(a, b)
    assert f"{__file__}:" in str(info.value), str(info.value)
    assert str(info.value).count(" (at ") <= 1  # named once, however deep the nesting


@pytest.mark.parametrize("f", [
    lambda a, b: fnp.matmul(a, b), lambda a, b: fnp.matmul(a, 2.0), lambda a, b: fnp.dot(a, b),
    lambda a, b: fnp.add(a, b.T[:1]), lambda a, b: fnp.reshape(a, (5,)),
    lambda a, b: fnp.concatenate([a, b[0]]), lambda a, b: fnp.einsum("ij,jk", a, a),
], ids=["matmul", "matmul-scalar", "dot", "add", "reshape", "concatenate", "einsum"])
def test_shape_errors_name_the_users_line_eagerly_too(f: Callable) -> None:
    a, b = dev(np.ones((2, 3))), dev(np.ones((2, 3)))
    with pytest.raises(funcgrad.ShapeError) as info:
        f(a, b)
    assert f"{__file__}:" in str(info.value), str(info.value)


# -- state isolation --------------------------------------------------------------------------


def test_same_transformed_function_with_new_shapes_and_dtypes() -> None:
    f = lambda x: fnp.sum(fnp.sin(x) * x)  # noqa: E731
    g, h, v = funcgrad.grad(f), funcgrad.hessian(f), funcgrad.vmap(funcgrad.grad(f))
    jg, jf, jr = funcgrad.jit(funcgrad.grad(f)), funcgrad.jacfwd(funcgrad.grad(f)), \
        funcgrad.jacrev(funcgrad.grad(f))
    for shape, dtype in [((2,), np.float64), ((3, 2), np.float64), ((), np.float64),
                         ((4,), np.float32), ((2,), np.float64), ((0,), np.float64)]:
        x = np.linspace(-1.0, 1.0, int(np.prod(shape))).reshape(shape).astype(dtype)
        ref = np.cos(x) * x + np.sin(x)
        tol = dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else EXACT
        for fn in (g, jg):
            out = fn(dev(x))
            assert out.dtype == dtype and out.shape == shape
            assert_allclose(out, ref, **tol)
        n = x.size
        hm = np.diag((2 * np.cos(x) - x * np.sin(x)).reshape(-1)).reshape(shape + shape)
        for fn in (h, jf, jr):
            assert_allclose(fn(dev(x)), hm, **tol)
        assert_allclose(v(dev(np.stack([x, x]))), np.stack([ref, ref]), **tol)
        assert n == x.size
    assert jg.trace_count == 5  # one trace per new signature, none for the repeat


def test_interleaved_transformed_functions_and_reentrant_calls() -> None:
    inner = funcgrad.jit(lambda x: fnp.sin(x) * 2.0)
    g_inner = funcgrad.grad(lambda x: fnp.sum(inner(x)))
    outer = funcgrad.grad(lambda x: fnp.sum(inner(x) * g_inner(x)))
    x = dev(np.array([0.3, 0.6]))
    xv = np.array([0.3, 0.6])
    # d/dx [2 sin x * 2 cos x] = d/dx [2 sin 2x] = 4 cos 2x
    assert_allclose(outer(x), 4 * np.cos(2 * xv), **EXACT)
    assert_allclose(inner(x), 2 * np.sin(xv), **EXACT)
    assert_allclose(funcgrad.vmap(g_inner)(dev(np.stack([xv, xv]))),
                    np.stack([2 * np.cos(xv)] * 2), **EXACT)
    assert_allclose(outer(x), 4 * np.cos(2 * xv), **EXACT)
    assert_allclose(g_inner(x), 2 * np.cos(xv), **EXACT)
    # a transformed function calling itself through another transformation
    def rec(x: Any, depth: int) -> Any:
        if depth == 0:
            return fnp.sum(fnp.sin(x))
        return fnp.sum(funcgrad.grad(rec)(x, depth - 1))

    # d^3/dx^3 sin summed: -cos
    assert_allclose(rec(x, 3), np.sum(-np.cos(xv)), **EXACT)
    assert current_trace() is eval_trace


def _boom(x: Any) -> Any:
    fnp.sin(x)
    raise RuntimeError("boom")


@pytest.mark.parametrize("run", [
    lambda: funcgrad.grad(_boom)(1.0),
    lambda: funcgrad.value_and_grad(_boom)(1.0),
    lambda: funcgrad.vmap(_boom)(dev(np.ones(2))),
    lambda: funcgrad.vmap(_boom, chunk_size=1)(dev(np.ones(2))),
    lambda: funcgrad.jit(_boom)(1.0),
    lambda: funcgrad.jvp(_boom, (1.0,), (1.0,)),
    lambda: funcgrad.linearize(_boom, 1.0),
    lambda: funcgrad.vjp(_boom, 1.0),
    lambda: funcgrad.hessian(_boom)(dev(np.ones(2))),
    lambda: funcgrad.jacfwd(_boom)(dev(np.ones(2))),
    lambda: funcgrad.jacrev(_boom)(dev(np.ones(2))),
    lambda: funcgrad.make_jaxpr(_boom)(1.0),
    lambda: funcgrad.eval_shape(_boom, 1.0),
    lambda: funcgrad.grad(funcgrad.checkpoint(_boom))(1.0),
    lambda: funcgrad.cond(True, _boom, _boom, 1.0),
    lambda: funcgrad.scan(lambda c, x: (_boom(c), x), 1.0, dev(np.ones(2))),
    lambda: funcgrad.fori_loop(0, 2, lambda i, c: _boom(c), 1.0),
    lambda: funcgrad.grad(lambda x: funcgrad.vmap(_boom)(x * dev(np.ones(2)))[0])(1.0),
    lambda: funcgrad.jit(funcgrad.grad(lambda x: funcgrad.jvp(_boom, (x,), (x,))[1]))(1.0),
    lambda: funcgrad.linear_transpose(_boom, 1.0),
], ids=["grad", "value_and_grad", "vmap", "vmap-chunk", "jit", "jvp", "linearize", "vjp",
        "hessian", "jacfwd", "jacrev", "make_jaxpr", "eval_shape", "checkpoint", "cond",
        "scan", "fori_loop", "grad-vmap", "jit-grad-jvp", "linear_transpose"])
def test_exceptions_inside_transformations_leave_the_trace_context_clean(run: Callable) -> None:
    with pytest.raises(RuntimeError, match="boom"):
        run()
    assert current_trace() is eval_trace
    # plain eager code and fresh transformations still work
    assert_allclose(fnp.sin(dev(np.zeros(2))), np.zeros(2))
    assert_allclose(funcgrad.grad(lambda v: v * v)(3.0), np.asarray(6.0))
    assert_allclose(funcgrad.vmap(lambda v: v * 2.0)(dev(np.ones(2))), np.full(2, 2.0))


def test_exception_in_a_custom_rule_leaves_the_context_clean() -> None:
    @funcgrad.custom_vjp
    def f(x: Any) -> Any:
        return x * 2.0

    def bwd(r: Any, g: Any) -> Any:
        raise RuntimeError("bwd boom")

    f.defvjp(lambda x: (f(x), None), bwd)
    for run in (lambda: funcgrad.grad(f)(1.0), lambda: funcgrad.jit(funcgrad.grad(f))(1.0),
                lambda: funcgrad.vmap(funcgrad.grad(f))(dev(np.ones(2)))):
        with pytest.raises(RuntimeError, match="bwd boom"):
            run()
        assert current_trace() is eval_trace
    assert_allclose(f(2.0), np.asarray(4.0))


def test_transformations_in_threads_do_not_interfere() -> None:
    f = lambda a: fnp.sum(fnp.sin(a) * a ** 2)  # noqa: E731
    gj = funcgrad.jit(funcgrad.grad(f))

    def work(i: int) -> bool:
        x = np.linspace(0.0, 1.0, 2 + i % 3) * (i + 1)
        ref = np.cos(x) * x ** 2 + 2 * x * np.sin(x)
        outs = (funcgrad.grad(f)(dev(x)), gj(dev(x)),
                funcgrad.vmap(funcgrad.grad(f))(dev(np.stack([x, x])))[1])
        h = host(funcgrad.jacfwd(funcgrad.grad(f))(dev(x)))
        h_ref = np.diag(-np.sin(x) * x ** 2 + 4 * x * np.cos(x) + 2 * np.sin(x))
        return all(np.allclose(host(o), ref) for o in outs) and np.allclose(h, h_ref)

    with concurrent.futures.ThreadPoolExecutor(4) as ex:
        assert all(ex.map(work, range(24)))
    assert current_trace() is eval_trace


def test_make_jaxpr_traces_keyword_arguments_and_negative_static_argnums() -> None:
    x = dev(np.ones(2))
    closed = funcgrad.make_jaxpr(lambda a, b, name="n": a * b)(x, b=2.0, name="s")
    assert len(closed.jaxpr.invars) == 2 and not closed.consts
    closed = funcgrad.make_jaxpr(lambda a, n: a * n, static_argnums=-1)(x, 3)
    assert len(closed.jaxpr.invars) == 1
    with pytest.raises(funcgrad.ConcretizationError, match="argument b"):
        funcgrad.make_jaxpr(lambda a, b: a if b > 0 else -a)(x, b=2.0)
