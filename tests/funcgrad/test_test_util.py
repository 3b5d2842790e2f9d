"""funcgrad.test_util: the checks pass on correct derivatives and catch wrong ones."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import dev

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.avals import ShapedArray
from funcgrad.core import Primitive, bind1, primitive_registry
from funcgrad.interpreters import batching
from funcgrad.interpreters.jvp import jvp_rules
from funcgrad.test_util import (
    check_grads,
    check_jvp,
    check_vjp,
    default_tolerance,
    gradcheck,
    gradgradcheck,
    numerical_jvp,
)

X3 = np.array([0.3, -0.7, 1.1])


def test_numerical_jvp() -> None:
    nj = numerical_jvp(lambda x, y: {"p": x * y}, (dev(X3), 2.0), (dev(np.ones(3)), 0.5))
    np.testing.assert_allclose(np.asarray(nj["p"]), 2.0 + 0.5 * X3, rtol=1e-8)
    assert numerical_jvp(lambda n: n * 2, (3,), (None,)).dtype == funcgrad.float0


def test_check_grads_passes_on_correct_functions() -> None:
    check_grads(lambda x: fnp.sin(x) * fnp.exp(x), (dev(X3),), order=3)
    check_grads(lambda p, s: {"a": p["w"] @ p["x"] * s, "b": (fnp.tanh(p["x"]),)},
                ({"w": dev(np.ones((2, 3))), "x": dev(X3)}, 0.5), order=2)
    # integer arguments are held fixed
    check_grads(lambda x, n: x ** n, (dev(X3), 3), order=2)
    check_grads(fnp.sin, (0.7,), order=2, modes=("rev",))
    check_grads(fnp.cos, (0.7,), order=2, modes=("fwd",))
    assert gradcheck(fnp.tanh, (dev(X3),))
    assert gradgradcheck(fnp.tanh, (dev(X3),))


def test_check_grads_complex() -> None:
    z = dev(np.array([1.0 + 2.0j, -0.5 + 0.3j]))
    check_grads(lambda z: z * z * fnp.exp(z), (z,), order=2)  # holomorphic
    check_grads(lambda z: fnp.abs(z) ** 2 * z, (z,), order=2)  # not holomorphic
    check_grads(lambda z: fnp.real(z * fnp.conj(z)), (z,), order=2)  # C -> R
    check_grads(lambda x: x * (1.0 + 2.0j), (dev(X3),), order=2)  # R -> C


def test_check_grads_float32_default_tolerances() -> None:
    x = dev(X3.astype(np.float32))
    check_grads(lambda v: fnp.tanh(v) * fnp.sin(2.0 * v), (x,), order=2)
    assert default_tolerance(np.float32) > default_tolerance(np.float64)


def _wrong_jvp():
    @funcgrad.custom_jvp
    def f(x):
        return fnp.sin(x)

    f.defjvp(lambda p, t: (f(p[0]), 1.1 * fnp.cos(p[0]) * t[0]))
    return f


def _wrong_vjp():
    @funcgrad.custom_vjp
    def f(x):
        return fnp.sin(x)

    f.defvjp(lambda x: (f(x), x), lambda x, g: (1.1 * fnp.cos(x) * g,))
    return f


def _wrong_second_order():
    # first derivative right (cos), but written so that its derivative is wrong
    @funcgrad.custom_jvp
    def f(x):
        return fnp.sin(x)

    f.defjvp(lambda p, t: (f(p[0]), (fnp.cos(p[0]) + 0.1 * (p[0] - funcgrad.stop_gradient(
        p[0]))) * t[0]))
    return f


def test_check_jvp_catches_a_wrong_rule() -> None:
    with pytest.raises(AssertionError, match="central differences"):
        check_jvp(_wrong_jvp(), (dev(X3),))
    with pytest.raises(AssertionError, match="fwd"):
        check_grads(_wrong_jvp(), (dev(X3),), order=1, modes=("fwd",))


def test_check_vjp_catches_a_wrong_rule() -> None:
    with pytest.raises(AssertionError, match="inner-product"):
        check_vjp(_wrong_vjp(), (dev(X3),))
    with pytest.raises(AssertionError, match="rev"):
        check_grads(_wrong_vjp(), (dev(X3),), order=1, modes=("rev",))


def test_check_grads_catches_a_wrong_second_derivative() -> None:
    f = _wrong_second_order()
    check_grads(f, (dev(X3),), order=1)
    with pytest.raises(AssertionError, match="order 2"):
        check_grads(f, (dev(X3),), order=2)


def test_check_jvp_catches_a_wrong_tangent_dtype() -> None:
    # A primitive whose JVP rule wrongly upcasts float32 tangents to float64.
    p = Primitive("test_util_upcasting_probe")
    p.def_impl(lambda x: [x * 2])
    p.def_abstract_eval(lambda a: [ShapedArray(a.shape, a.dtype, a.weak_type, a.device)])
    jvp_rules[p] = lambda primals, tangents: (
        [bind1(p, primals[0])], [tangents[0].astype(np.float64) * 2])
    batching.batch_rules[p] = lambda n, vals, dims: ([bind1(p, vals[0])], dims)
    try:
        with pytest.raises(AssertionError, match="dtype"):
            check_jvp(lambda x: bind1(p, x), (dev(X3.astype(np.float32)),))
    finally:
        primitive_registry.remove(p)
        del jvp_rules[p], batching.batch_rules[p]


def test_argument_validation() -> None:
    with pytest.raises(TypeError, match="tuple"):
        check_grads(fnp.sin, dev(X3), order=1)
    with pytest.raises(ValueError, match="mode"):
        check_grads(fnp.sin, (dev(X3),), order=1, modes=("forward",))
    with pytest.raises(ValueError, match="order"):
        check_grads(fnp.sin, (dev(X3),), order=-1)
    check_grads(fnp.sin, (dev(X3),), order=0)  # nothing to check


# ---------------------------------------------------------------------------------------------
# check_vmap / check_jit


def _differs_when_traced(x):
    # Python-level branching on tracer-ness: what a broken batching or jit rule looks like.
    return x * (2.0 if isinstance(x, funcgrad.core.Tracer) else 1.0)


def test_check_vmap_passes_and_catches_a_wrong_batch():
    from funcgrad.test_util import check_vmap

    check_vmap(lambda x, w: fnp.dot(w, x), (np.ones((4, 3)), np.eye(3)), (0, None))
    check_vmap(lambda d: {"a": d["x"] * 2, "b": fnp.sum(d["y"])},
               ({"x": np.ones((3, 2)), "y": np.arange(6.0).reshape(3, 2)},),
               ({"x": 1, "y": -1},), {"a": 1, "b": 0})
    check_vmap(lambda x, c: (x * c, c), (np.arange(6.0).reshape(2, 3), 2.0), (1, None),
               (0, None))
    with pytest.raises(AssertionError, match="check_vmap"):
        check_vmap(_differs_when_traced, (np.ones((3, 2)),))
    with pytest.raises(AssertionError, match=r"f32\[3,2\], expected f64"):
        check_vmap(lambda x: x.astype(np.float32) if isinstance(x, funcgrad.core.Tracer)
                   else x, (np.ones((3, 2)),))


def test_check_jit_passes_and_catches_differences_and_retraces():
    from funcgrad.test_util import check_jit

    check_jit(lambda x, n: x ** n, (np.arange(3.0), 3), static_argnums=1)
    check_jit(lambda x: {"s": fnp.sum(x), "i": fnp.argmax(x)}, (np.arange(3.0),))
    with pytest.raises(AssertionError, match="check_jit"):
        check_jit(_differs_when_traced, (np.ones(3),))
    with pytest.raises(TypeError, match="args must be a tuple"):
        check_jit(fnp.sin, np.ones(3))
