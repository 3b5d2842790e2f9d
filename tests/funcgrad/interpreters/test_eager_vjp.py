"""The eager VJP (interpreters/eager_vjp.py): the fast rules primitives register
(``defjvp(..., fast_vjp=...)``) against the tape's generic methods.

Both must give the same cotangents bit for bit (a fast rule repeats its JVP function's
operations), on random shapes with broadcasting, dtypes mixing, Python-scalar operands and
integer operands (which get no cotangent). That each registered rule agrees with linearize +
transpose is checked on the op table (tests/funcgrad/ops/test_op_table.py).
"""

from __future__ import annotations

import contextlib

import hypothesis.strategies as st
import numpy as np
from hypothesis import given, settings

import funcgrad
import funcgrad.ops.elementwise as ew
import funcgrad.ops.reductions as red
from funcgrad.core import Primitive, bind1
from funcgrad.interpreters import eager_vjp
from funcgrad.interpreters.jvp import defjvp, elementwise_primitives, fast_vjp_rules
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
    """The tape with its generic methods only (no fast rules)."""
    saved = dict(eager_vjp._backward_cache)
    saved_rules = dict(fast_vjp_rules)
    eager_vjp._backward_cache.clear()
    fast_vjp_rules.clear()
    try:
        yield
    finally:
        fast_vjp_rules.update(saved_rules)
        eager_vjp._backward_cache.clear()
        eager_vjp._backward_cache.update(saved)


def _pullback(f, args, ct):
    _, pull, _ = eager_vjp.vjp_tape(f, args)
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
def test_fast_matches_generic(data):
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
    fast = _pullback(f, args, ct)
    with _generic_only():
        generic = _pullback(f, args, ct)
    for d, g in zip(fast, generic):
        _same(d, g)


def test_relu_fast_rule_matches_generic():
    # relu is defined on real numbers only, and its kink at 0 matters: its own case.
    from funcgrad.ops.activations import relu
    rng = np.random.default_rng(0)
    for dtype in ("float32", "float64"):
        x = rng.uniform(-2.0, 2.0, (4, 5)).astype(dtype)
        x[0, :3] = [0.0, -0.0, np.nan]
        args, f = [dev(x)], (lambda a: [relu(ew.mul(a, 1.0))])
        ct = _ct_for(f(*args)[0])
        fast = _pullback(f, args, ct)
        with _generic_only():
            generic = _pullback(f, args, ct)
        for d, g in zip(fast, generic):
            _same(d, g)


def test_every_fast_rule_is_tested_here():
    from funcgrad.ops.activations import relu_p
    from funcgrad.ops.linalg import dot_general_p
    tested = {ew.add_p, ew.sub_p, ew.mul_p, ew.div_p, ew.neg_p, ew.sin_p, ew.cos_p, ew.exp_p,
              ew.log_p, ew.tanh_p, ew.square_p, ew.sqrt_p, ew.logistic_p, ew.integer_pow_p,
              relu_p, red.reduce_max_p, red.reduce_min_p, dot_general_p}
    assert set(fast_vjp_rules) <= tested, set(fast_vjp_rules) - tested


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_fast_max_min_match_linearized(data):
    """reduce_max/min's fast rule against the node linearized (their generic method): ties
    share the cotangent evenly, bit for bit."""
    shape = data.draw(st.sampled_from([(3,), (2, 3), (4, 1, 3), (2, 2, 2)]))
    ndim = len(shape)
    axes = tuple(sorted(data.draw(st.sets(st.integers(0, ndim - 1), min_size=1))))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    dtype = data.draw(st.sampled_from(["float32", "float64"]))
    x = dev(rng.integers(0, 3, shape).astype(dtype))  # small integers: many ties
    prim = data.draw(st.sampled_from([red.reduce_max_p, red.reduce_min_p]))
    f = lambda a: [bind1(prim, ew.mul(a, 1.0), axes=axes)]  # noqa: E731
    ct = _ct_for(f(x)[0])
    fast = _pullback(f, [x], ct)
    with _generic_only():
        generic = _pullback(f, [x], ct)
    _same(fast[0], generic[0])


_CONTRACTIONS = [  # (lhs shape, rhs shape, dimension numbers)
    ((3, 4), (4, 5), (((1,), (0,)), ((), ()))),  # x @ W: the fast rules' own product
    ((1, 4), (4, 1), (((1,), (0,)), ((), ()))),
    ((4, 3), (4, 5), (((0,), (0,)), ((), ()))),  # the rest: the transpose rule
    ((2, 3, 4), (4, 5), (((2,), (0,)), ((), ()))),
    ((2, 3, 4), (2, 4, 5), (((2,), (1,)), ((0,), (0,)))),
    ((4,), (4,), (((0,), (0,)), ((), ()))),
]


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_fast_dot_general_matches_generic(data):
    """dot_general's fast rules (a 2-D matmul's products without binds; the transpose rule
    otherwise) give the transpose rule's cotangents bit for bit, dtypes mixing included."""
    from funcgrad.ops.linalg import dot_general

    ls, rs, dn = data.draw(st.sampled_from(_CONTRACTIONS))
    dl, dr = data.draw(st.sampled_from(FLOATS)), data.draw(st.sampled_from(FLOATS + ["int64"]))
    x, y = _value(data.draw, ls, dl), _value(data.draw, rs, dr)
    wrt = data.draw(st.sampled_from(["x"] if dr == "int64" else ["x", "y", "both"]))
    pre = ew.sin if data.draw(st.booleans()) else (lambda a: a)
    if wrt == "x":
        args, f = [x], (lambda a: [dot_general(pre(a), y, dn)])
    elif wrt == "y":
        args, f = [y], (lambda b: [dot_general(x, pre(b), dn)])
    else:
        args, f = [x, y], (lambda a, b: [dot_general(pre(a), pre(b), dn)])
    ct = _ct_for(f(*args)[0])
    fast = _pullback(f, args, ct)
    with _generic_only():
        generic = _pullback(f, args, ct)
    for d, g in zip(fast, generic):
        _same(d, g)


def test_fast_rules_are_used():
    x = dev(np.linspace(0.1, 1.0, 5))
    import funcgrad.numpy as fnp

    def f(a):
        s = fnp.sin(a)
        return fnp.sum(s * s + s / 3.0 - fnp.tanh(s))

    got = funcgrad.grad(f)(x)
    assert eager_vjp._backward_cache[ew.sin_p].__qualname__.startswith("_fast_backward")
    assert eager_vjp._backward_cache[ew.mul_p].__qualname__.startswith("_fast_backward")
    with _generic_only():
        want = funcgrad.grad(f)(x)
    _same(got, want)


def test_user_primitive_registers_its_own_fast_rule():
    """A primitive defined outside funcgrad registers a fast rule in its own block, keyed by the
    primitive (never by name: a library primitive's rule never applies to a namesake)."""
    from funcgrad.core import primitive_registry

    p = Primitive("sin")
    calls = []

    def fast(xp, ct, ans, x):
        calls.append(1)
        return xp.multiply(ct, 3.0)

    try:
        p.def_impl(lambda x: [np.asarray(x) * 3.0])
        elementwise_primitives.add(p)
        defjvp(p, lambda g, ans, x: ew.mul(g, 3.0))
        if DEVICE == "cpu":
            from funcgrad.avals import get_aval

            p.def_abstract_eval(lambda a: [get_aval(np.zeros(a.shape, a.dtype))])
            g = funcgrad.grad(lambda x: bind1(p, x))(2.0)
            assert float(g) == 3.0 and not calls
            eager_vjp._backward_cache.pop(p, None)
            defjvp(p, lambda g, ans, x: ew.mul(g, 3.0), fast_vjp=(fast,))
            g = funcgrad.grad(lambda x: bind1(p, x))(2.0)
            assert float(g) == 3.0 and calls
    finally:  # keep the rule-coverage test's registry to the library's primitives
        elementwise_primitives.discard(p)
        fast_vjp_rules.pop(p, None)
        eager_vjp._backward_cache.pop(p, None)
        primitive_registry.remove(p)


def test_grad_of_grad_unaffected():
    import funcgrad.numpy as fnp

    f = lambda x: fnp.sin(x) * x  # noqa: E731
    x = 0.7
    gg = funcgrad.grad(funcgrad.grad(f))(x)
    want = -np.sin(x) * x + 2 * np.cos(x)
    np.testing.assert_allclose(float(host(gg)), want, rtol=1e-12)


def test_grad_of_grad_runs_on_nested_tapes(monkeypatch):
    """The inner ``grad`` under an outer one records on a tape of its own whose backward pass
    the outer tape records (no linearize + transpose), slices and reductions included."""
    import funcgrad.numpy as fnp

    def no_linearize(*a, **k):
        raise AssertionError("reverse over reverse linearized")

    monkeypatch.setattr(funcgrad.api, "linearize_flat", no_linearize)
    monkeypatch.setattr(eager_vjp, "linearize_flat", no_linearize)

    def rosen(x):
        return fnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)

    rng = np.random.default_rng(0)
    xh, vh = rng.uniform(-1.0, 2.0, 6), rng.standard_normal(6)
    x, v = dev(xh), dev(vh)
    hvp = funcgrad.grad(lambda y: fnp.vdot(funcgrad.grad(rosen)(y), v))(x)
    check = np.zeros((6, 6))
    for i in range(5):  # the Rosenbrock Hessian, by hand
        check[i, i] += 1200 * xh[i] ** 2 - 400 * xh[i + 1] + 2
        check[i + 1, i + 1] += 200
        check[i, i + 1] -= 400 * xh[i]
        check[i + 1, i] -= 400 * xh[i]
    np.testing.assert_allclose(host(hvp), check @ vh, rtol=1e-12)
    # Third order, and a closure over the outer tape's value inside the inner function.
    f = lambda x: fnp.sin(x) * x ** 3  # noqa: E731
    d3 = funcgrad.grad(funcgrad.grad(funcgrad.grad(f)))(0.7)
    t = 0.7
    want = (-np.cos(t) * t**3 - 9 * np.sin(t) * t**2 + 18 * np.cos(t) * t + 6 * np.sin(t))
    np.testing.assert_allclose(float(host(d3)), want, rtol=1e-12)
    mixed = funcgrad.grad(lambda a: funcgrad.grad(lambda b: fnp.sin(a * b) * a)(2.0))(0.5)
    # d/da [a^2 cos(2a)] = 2a cos(2a) - 2a^2 sin(2a)
    np.testing.assert_allclose(float(host(mixed)), np.cos(1.0) - 0.5 * np.sin(1.0), rtol=1e-12)


def test_nested_tape_does_not_confuse_perturbations():
    """The inner tape's tracers and the outer one's stay apart (perturbation confusion):
    d/dx [x * d/dy (x + y)] = 1, not 2."""
    g = funcgrad.grad(lambda x: x * funcgrad.grad(lambda y: x + y)(1.0))(3.0)
    assert float(host(g)) == 1.0


def test_tape_values_are_arrays_never_numpy_scalars():
    """0-d results (NumPy hands back scalars for them) are arrays on the tape, as everywhere."""
    import funcgrad.numpy as fnp

    seen = []

    def f(x):
        y = fnp.sin(x) * x + 1.0
        s = fnp.sum(y * y)
        seen.extend([y.to_concrete_value(), s.to_concrete_value()])
        return s

    for x in (0.7, dev(np.array(0.7)), dev(np.array([0.7, 0.2]))):
        funcgrad.grad(f)(x)
    assert seen and not any(isinstance(v, np.generic) for v in seen), [type(v) for v in seen]


def test_pullback_runs_once_and_releases_the_tape() -> None:
    """``grad`` runs the tape's pullback once; it drops each node (and its residuals) as it
    goes, so a large backward pass reuses the memory of the nodes it has passed."""
    from funcgrad.core import current_trace

    x = dev(np.linspace(0.5, 1.5, 5))
    tapes = []

    def f(x):
        tapes.append(current_trace())
        y = funcgrad.numpy.sin(x)
        return [funcgrad.numpy.sum(y * y)]

    _, pull, _ = eager_vjp.vjp_tape(f, [x])
    assert len(tapes[0].nodes) == 3  # sin, mul, sum: the product's node holds sin(x)
    (g,) = pull([dev(np.ones(()))])
    assert tapes[0].nodes == []
    np.testing.assert_allclose(host(g), 2 * np.sin(host(x)) * np.cos(host(x)), rtol=1e-12)
    try:
        pull([dev(np.ones(()))])
    except RuntimeError as e:
        assert "once" in str(e)
    else:
        raise AssertionError("a second pullback call must raise")


# gathers of a 6-vector and their result shapes
_GATHERS = [
    (lambda a: a[1:], (5,)), (lambda a: a[:-1], (5,)), (lambda a: a[::2], (3,)),
    (lambda a: a[::-1], (6,)), (lambda a: a[2], ()), (lambda a: a[np.array([0, 3, 3, 1])], (4,)),
    (lambda a: a.at[np.array([0, 9, -1])].get(mode="fill", fill_value=0.0), (3,)),
]


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_gathers_add_into_the_accumulated_cotangent(data):
    """Several gathers of one value: the tape adds each one's cotangent into the one
    accumulated so far (``transpose_into_rules``); the same cotangents as linearize +
    transpose and as the tape adding scatters into zeros, also one order up (the outer tape records the
    scatter-adds and differentiates them)."""
    import funcgrad.numpy as fnp
    from funcgrad.interpreters.transpose import vjp_flat

    dtype = data.draw(st.sampled_from(["float32", "float64", "complex128"]))
    picks = data.draw(st.lists(st.integers(0, len(_GATHERS) - 1), min_size=1, max_size=5))
    x = _value(data.draw, (6,), dtype)
    rng = np.random.default_rng(data.draw(st.integers(0, 99)))
    real = np.finfo(dtype).dtype
    ws = [dev(rng.uniform(-1.0, 1.0, _GATHERS[i][1]).astype(real)) for i in picks]

    def f(a):
        return [sum(fnp.sum(fnp.sin(_GATHERS[i][0](a)) * w) for i, w in zip(picks, ws))]

    ct = dev(np.asarray(0.7, dtype))
    got = _pullback(f, [x], ct)
    _, vjp_g, _ = vjp_flat(f, [x])
    np.testing.assert_allclose(host(got[0]), host(vjp_g([ct])[0]), rtol=1e-5, atol=1e-5)
    saved = dict(eager_vjp.transpose_into_rules)
    eager_vjp.transpose_into_rules.clear()
    eager_vjp._backward_cache.clear()
    try:
        # (equal up to rounding: repeated indices add in another order)
        np.testing.assert_allclose(host(got[0]), host(_pullback(f, [x], ct)[0]),
                                   rtol=1e-6 if dtype == "float32" else 1e-14)
    finally:
        eager_vjp.transpose_into_rules.update(saved)
        eager_vjp._backward_cache.clear()
    if dtype != "complex128":  # second order: the gradient's directional derivative
        v = dev(rng.uniform(-1.0, 1.0, 6).astype(real))

        def g(a):
            return fnp.real(f(a)[0])

        hvp = funcgrad.grad(lambda a: fnp.vdot(funcgrad.grad(g)(a), v))(x)
        want = funcgrad.jvp(funcgrad.grad(g), (x,), (v,))[1]
        np.testing.assert_allclose(host(hvp), host(want), rtol=2e-4 if dtype == "float32"
                                   else 1e-10, atol=1e-5 if dtype == "float32" else 1e-12)
