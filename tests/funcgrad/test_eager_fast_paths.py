"""The eager fast paths (tracer operators, elementwise impls, the tape) keep the semantics of
the general paths they short-cut."""

from __future__ import annotations

import operator

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.numpy import _array_methods
from funcgrad.ops import elementwise as ew
from tests.helpers import dev, host

_OPS = [
    operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
    operator.mod, operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne,
]


@pytest.mark.parametrize("name", sorted(_array_methods._DIRECT_BINARY))
def test_direct_binary_is_what_fnp_wraps(name):
    # Operators skip the funcgrad.numpy wrapper only where it merely forwards to this op.
    fn = getattr(fnp, name)
    cells = dict(zip(fn.__code__.co_freevars, (c.cell_contents for c in fn.__closure__)))
    assert cells["op"] is _array_methods._DIRECT_BINARY[name]


@pytest.mark.parametrize("name", sorted(_array_methods._DIRECT_UNARY))
def test_direct_unary_is_what_fnp_wraps(name):
    fn = getattr(fnp, name)
    cells = dict(zip(fn.__code__.co_freevars, (c.cell_contents for c in fn.__closure__)))
    assert cells["op"] is _array_methods._DIRECT_UNARY[name]


@pytest.mark.parametrize("op", _OPS, ids=lambda o: o.__name__)
@pytest.mark.parametrize(
    "other",
    [2.0, 3, True, np.float32(2.0), np.int8(3), [1.0, 2.0, 3.0], np.arange(1, 4, dtype=np.int32)],
    ids=repr,
)
def test_operators_under_grad_match_numpy(op, other):
    x = np.array([1.5, 2.5, 4.0], np.float32)
    o = dev(other) if isinstance(other, np.ndarray) else other
    seen = {}

    # `numpy_scalar < tracer` reaches the tracer's __array_ufunc__ with the scalar turned into
    # a 0-d host array; it must stay a device-neutral scalar (the strict pass checks that).
    def f(t):
        r = op(t, o)
        rr = op(o, t)
        seen["r"], seen["rr"] = r.dtype, rr.dtype
        return fnp.sum(fnp.asarray(r, np.float32) + fnp.asarray(rr, np.float32))

    funcgrad.grad(f)(dev(x))
    assert seen["r"] == op(x, other).dtype
    assert seen["rr"] == op(other, x).dtype
    np.testing.assert_array_equal(host(funcgrad.jit(lambda t: op(t, o))(dev(x))), op(x, other))


def test_operators_on_traced_values_match_the_primitives():
    x = np.array([1.0, -2.0, 3.0])

    def f(t):
        return fnp.sum(-t * abs(t) + t / 2.0 - 1.0 / t + t * t)

    v, g = funcgrad.value_and_grad(f)(dev(x))
    np.testing.assert_allclose(host(v), np.sum(-x * abs(x) + x / 2.0 - 1.0 / x + x * x))
    np.testing.assert_allclose(host(g), -2 * np.abs(x) + 0.5 + 1.0 / x**2 + 2 * x)


def test_unsupported_operand_still_raises_type_error():
    def f(t):
        return t + "a"

    with pytest.raises(TypeError):
        funcgrad.grad(f)(1.0)


def test_operators_with_mixed_devices_run_on_the_device():
    # The host fast path of the impls must not compute a host/device mix on the host: the
    # host operand moves to the device (core.place_uncommitted), the result stays there.
    a = np.ones(3)
    b = funcgrad.device_put(np.ones(3), "strict")
    out = ew.add(a, b)
    assert funcgrad.backend.device_of(out) == "strict"
    g = funcgrad.grad(lambda t: (t * a).sum())(b)
    assert funcgrad.backend.device_of(g) == "strict"


def test_elementwise_impl_on_python_scalars_uses_default_device():
    with funcgrad.backend.default_device("strict"):
        out = ew.sin(2.0)
        product = fnp.multiply(2.0, 3.0)
        weak = ew.mul(2.0, 3.0)
    assert funcgrad.backend.device_of(out) == "strict"
    assert funcgrad.backend.device_of(product) == "strict"
    # Python's arithmetic on Python scalars alone stays a (weak) Python scalar, as under jit
    assert type(weak) is float and weak == 6.0


def _marked_wrappers():
    return sorted(((name, fn) for name, fn in vars(ew).items()
                   if callable(fn) and not isinstance(fn, type)  # (Eqn.primitive: JAX's name)
                   and getattr(fn, "primitive", None) is not None),
                  key=lambda t: t[0])


@pytest.mark.parametrize("name,fn", _marked_wrappers(), ids=lambda v: v if isinstance(v, str) else "")
def test_marked_wrapper_only_binds_its_primitive(name, fn):
    """A wrapper marked with ``_binds(prim)`` (funcgrad.numpy and the operators then bind
    ``prim`` themselves) must do nothing but bind ``prim`` to its operands, without params."""
    import inspect

    arity = len(inspect.signature(fn).parameters)
    checked = 0
    for dtype in ("float64", "complex128", "int32", "bool"):
        args = [np.ones(3, dtype) for _ in range(arity)]
        try:
            jaxpr = funcgrad.make_jaxpr(fn)(*args).jaxpr
        except (TypeError, funcgrad.errors.FuncgradError):
            continue  # not defined for this dtype
        assert [e.prim for e in jaxpr.eqns] == [fn.primitive], (name, dtype, jaxpr)
        assert not jaxpr.eqns[0].params
        assert list(jaxpr.eqns[0].invars) == list(jaxpr.invars)
        checked += 1
    assert checked, f"{name}: no dtype to check it on"
    assert len(_marked_wrappers()) >= 50  # the hot operators and functions are marked


def _declared_elementwise():
    from funcgrad.compile.rules import array_calls
    from funcgrad.interpreters.jvp import elementwise_primitives

    return sorted((p for p in array_calls if p in elementwise_primitives), key=lambda p: p.name)


@pytest.mark.parametrize("prim", _declared_elementwise(), ids=lambda p: p.name)
def test_declared_host_function_is_the_impl(prim):
    """The eager tape calls an elementwise primitive's declared NumPy function
    (``compile.rules.array_calls``) directly on host operands: it must be what the impl
    computes there (values and dtypes, Python-scalar operands included)."""
    from funcgrad.compile.rules import array_calls

    fn = getattr(np, array_calls[prim])
    rng = np.random.default_rng(0)
    nin = fn.nin if isinstance(fn, np.ufunc) else 1  # (numpy.round)
    params = {"decimals": 1} if prim.name == "round" else {}  # its one required param
    checked = 0
    for dtype in ("float64", "float32", "complex128", "int32", "bool"):
        xs = [rng.uniform(0.2, 0.9, 4).astype(dtype) for _ in range(nin)]
        for args in (xs, xs[:-1] + [0.5] if nin == 2 else xs):
            with np.errstate(all="ignore"):
                try:
                    want = prim.impl(*args, **params)[0]
                except Exception:
                    continue
                got = fn(*args, **params)
            assert type(got) is type(want) and got.dtype == want.dtype, (dtype, args)
            np.testing.assert_array_equal(got, want)
            checked += 1
    assert checked
