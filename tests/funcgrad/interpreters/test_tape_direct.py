"""The tape's array-level backward rules (tape_direct.py) against the generic tape method.

Both must give the same cotangents bit for bit (the direct rules repeat the JVP functions'
operations), on random shapes with broadcasting, dtypes mixing, Python-scalar operands and
integer operands (which get no cotangent).
"""

from __future__ import annotations

import contextlib

import hypothesis.strategies as st
import numpy as np
from hypothesis import given, settings

import funcgrad
import funcgrad.ops.elementwise as ew
from funcgrad.core import Primitive, bind1
from funcgrad.interpreters import tape, tape_direct
from funcgrad.interpreters.jvp import defjvp, elementwise_primitives
from tests.helpers import DEVICE, dev, host

UNARY = {
    "neg": ew.neg, "sin": ew.sin, "cos": ew.cos, "exp": ew.exp, "log": ew.log,
    "tanh": ew.tanh, "square": ew.square, "sqrt": ew.sqrt, "logistic": ew.logistic,
    "ipow0": lambda x: ew.integer_pow(x, 0), "ipow1": lambda x: ew.integer_pow(x, 1),
    "ipow2": lambda x: ew.integer_pow(x, 2), "ipow3": lambda x: ew.integer_pow(x, 3),
    "ipowm2": lambda x: ew.integer_pow(x, -2),
}
BINARY = {"add": ew.add, "sub": ew.sub, "mul": ew.mul, "div": ew.div}
FLOATS = ["float32", "float64", "complex64", "complex128"]


@contextlib.contextmanager
def _generic_only():
    """The tape with its generic methods only (no direct rules)."""
    saved = dict(tape._backward_cache)
    orig = tape.direct_vjp_for
    tape._backward_cache.clear()
    tape.direct_vjp_for = lambda prim, generic: None
    try:
        yield
    finally:
        tape.direct_vjp_for = orig
        tape._backward_cache.clear()
        tape._backward_cache.update(saved)


def _pullback(f, args, ct):
    _, pull, _ = tape.vjp_tape(f, args)
    return pull([ct])


def _same(a, b):
    ha, hb = host(a), host(b)
    assert type(a) is type(b), (type(a), type(b))
    assert np.asarray(ha).dtype == np.asarray(hb).dtype
    np.testing.assert_array_equal(ha, hb)


def _value(draw, shape, dtype):
    if dtype == "pyfloat":
        return draw(st.floats(0.5, 2.0))
    if dtype == "int64":
        return dev(np.asarray(draw(st.integers(1, 3)) * np.ones(shape, "int64")))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    v = rng.uniform(0.5, 2.0, shape)
    if dtype.startswith("complex"):
        v = v + 1j * rng.uniform(-1.0, 1.0, shape)
    return dev(v.astype(dtype))


def _ct_for(out):
    a = np.asarray(host(out))
    rng = np.random.default_rng(0)
    c = rng.uniform(-1.0, 1.0, a.shape)
    if a.dtype.kind == "c":
        c = c + 1j * rng.uniform(-1.0, 1.0, a.shape)
    return dev(np.asarray(c, a.dtype))


shapes = st.sampled_from([(), (1,), (3,), (2, 3), (1, 3), (2, 1), (4, 1, 3)])


@settings(max_examples=120, deadline=None)
@given(st.data())
def test_direct_matches_generic(data):
    binary = data.draw(st.booleans())
    if binary:
        name = data.draw(st.sampled_from(sorted(BINARY)))
        op = BINARY[name]
        sx, sy = data.draw(shapes), data.draw(shapes)
        try:
            np.broadcast_shapes(sx, sy)
        except ValueError:
            sy = sx
        dx = data.draw(st.sampled_from(FLOATS + ["pyfloat"]))
        dy = data.draw(st.sampled_from(FLOATS + ["pyfloat", "int64"]))
        x, y = _value(data.draw, sx, dx), _value(data.draw, sy, dy)
        # Differentiate w.r.t. one or both (y only when it is a float value).
        wrt = data.draw(st.sampled_from(["x"] if dy == "int64" else ["x", "y", "both"]))
        # Sometimes the operands are the raw arguments (Python or NumPy scalars included).
        pre = ew.sin if data.draw(st.booleans()) else (lambda a: a)
        if wrt == "x":
            args, f = [x], (lambda a: [op(pre(a), y)])
        elif wrt == "y":
            args, f = [y], (lambda b: [op(x, pre(b))])
        else:
            args, f = [x, y], (lambda a, b: [op(pre(a), pre(b))])
    else:
        name = data.draw(st.sampled_from(sorted(UNARY)))
        op = UNARY[name]
        dx = data.draw(st.sampled_from(FLOATS + ["pyfloat"]))
        x = _value(data.draw, data.draw(shapes), dx)
        pre = (lambda a: ew.mul(a, 1.0)) if data.draw(st.booleans()) else (lambda a: a)
        args, f = [x], (lambda a: [op(pre(a))])
    ct = _ct_for(f(*args)[0])
    direct = _pullback(f, args, ct)
    with _generic_only():
        generic = _pullback(f, args, ct)
    for d, g in zip(direct, generic):
        _same(d, g)


def test_direct_rules_are_used_and_shared_uid():
    x = dev(np.linspace(0.1, 1.0, 5))
    import funcgrad.numpy as fnp

    def f(a):
        s = fnp.sin(a)
        return fnp.sum(s * s + s / 3.0 - fnp.tanh(s))

    got = funcgrad.grad(f)(x)
    assert ew.sin_p in tape_direct.direct_vjps and ew.mul_p in tape_direct.direct_vjps
    with _generic_only():
        want = funcgrad.grad(f)(x)
    _same(got, want)


def test_same_named_user_primitive_gets_no_direct_rule():
    from funcgrad.core import primitive_registry

    p = Primitive("sin")
    try:
        p.def_impl(lambda x: [np.asarray(x) * 3.0])
        elementwise_primitives.add(p)
        defjvp(p, lambda g, ans, x: ew.mul(g, 3.0))
        assert tape_direct.direct_vjp_for(p, tape._elementwise_backward) is None
        if DEVICE == "cpu":
            from funcgrad.avals import get_aval

            p.def_abstract_eval(lambda a: [get_aval(np.zeros(a.shape, a.dtype))])
            g = funcgrad.grad(lambda x: bind1(p, x))(2.0)
            assert float(g) == 3.0
    finally:  # keep the rule-coverage test's registry to the library's primitives
        elementwise_primitives.discard(p)
        primitive_registry.remove(p)


def test_grad_of_grad_unaffected():
    import funcgrad.numpy as fnp

    f = lambda x: fnp.sin(x) * x  # noqa: E731
    x = 0.7
    gg = funcgrad.grad(funcgrad.grad(f))(x)
    want = -np.sin(x) * x + 2 * np.cos(x)
    np.testing.assert_allclose(float(host(gg)), want, rtol=1e-12)
