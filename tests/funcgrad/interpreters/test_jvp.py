"""The forward-mode interpreter (funcgrad.interpreters.jvp): dual numbers, symbolic zeros,
nesting without perturbation confusion, and the rule helpers."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev, host

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.avals import ShapedArray
from funcgrad.interpreters.jvp import (
    JVPTracer,
    Zero,
    instantiate,
    jvp_flat,
    tangent_aval,
    zero_jvp_primitives,
)
from funcgrad.ops import elementwise as ew


def test_jvp_flat_pushes_tangents_and_keeps_zeros_symbolic() -> None:
    x, t = dev(np.array([0.5, 1.0])), dev(np.array([1.0, 2.0]))
    c = dev(np.array([3.0, 4.0]))
    primals, tangents = jvp_flat(lambda a, b: [fnp.sin(a) * b, b * 2.0], [x, c],
                                 [t, Zero(tangent_aval(ShapedArray((2,), np.dtype("f8"))))])
    assert_allclose(primals[0], np.sin(host(x)) * host(c))
    assert_allclose(tangents[0], np.cos(host(x)) * host(t) * host(c))
    assert type(tangents[1]) is Zero  # b has no tangent: nothing was computed for it
    assert_allclose(instantiate(tangents[1]), np.zeros(2))


def test_tracers_are_dual_numbers_with_concrete_primals() -> None:
    seen = []

    def f(a):
        seen.append((type(a), float(host(a.to_concrete_value())), bool(a > 2.0)))
        return [a * a]

    jvp_flat(f, [dev(np.array(3.0))], [dev(np.array(1.0))])
    # a dual number whose primal is concrete: Python control flow on it works
    assert seen == [(JVPTracer, 3.0, True)]


def test_zero_derivative_primitives_give_plain_values() -> None:
    assert ew.stop_gradient_p in zero_jvp_primitives and ew.floor_p in zero_jvp_primitives
    out = []
    funcgrad.jvp(lambda v: out.append(funcgrad.stop_gradient(v)) or v, (2.0,), (1.0,))
    assert not isinstance(out[0], funcgrad.core.Tracer)


def test_nested_jvp_has_no_perturbation_confusion() -> None:
    # d/dx [x * d/dy (x + y)] = 1, not 2
    def inner(x):
        return funcgrad.jvp(lambda y: x + y, (1.0,), (1.0,))[1]

    _, dx = funcgrad.jvp(lambda x: x * inner(x), (2.0,), (1.0,))
    assert float(dx) == 1.0


def test_integer_tangents_are_float0() -> None:
    a = tangent_aval(ShapedArray((2,), np.dtype("int64")))
    assert a.dtype == funcgrad.float0
    _, t = funcgrad.jvp(lambda n: n * 2, (np.arange(2),), (np.zeros(2, funcgrad.float0),))
    assert t.dtype == funcgrad.float0


@pytest.mark.parametrize("f", [fnp.sin, fnp.exp, lambda v: v ** 3, fnp.tanh])
def test_jvp_matches_finite_differences(f) -> None:
    x, t, eps = 0.7, 1.0, 1e-6
    _, dy = funcgrad.jvp(f, (x,), (t,))
    assert float(dy) == pytest.approx((float(f(x + eps)) - float(f(x - eps))) / (2 * eps),
                                      rel=1e-6)


def test_zero_tangent_of_a_python_scalar_goes_to_any_device():
    # complex(ct, 0.0)'s JVP instantiates the 0.0's zero tangent: it met a host cotangent as a
    # default-device array (second-order vjp of abs on complex input, GPU default device).
    import funcgrad
    import funcgrad.numpy as fnp
    from funcgrad.avals import get_aval
    from funcgrad.interpreters.jvp import Zero, instantiate

    z = instantiate(Zero(get_aval(0.0)))
    assert z == 0 and z.shape == () and type(z) is np.float64
    a, g = np.array([1 + 2j, 3 - 1j]), np.array([1.0, 2.0])

    def h(a):
        return funcgrad.vjp(fnp.abs, a)[1](g)[0]

    want = funcgrad.vjp(h, a)[1](np.array([1 + 0j, 1j]))[0]
    with funcgrad.default_device("strict"):
        got = funcgrad.vjp(h, a)[1](np.array([1 + 0j, 1j]))[0]
    np.testing.assert_allclose(got, want)
