"""Array creation: dtypes exactly as NumPy, devices, traced arguments and derivatives."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import DEVICE, assert_allclose, check_device, dev, host, rand

import funcgrad
import funcgrad.numpy as fnp
from funcgrad._strict_array import StrictArray
from funcgrad.errors import ConcretizationError, DTypeError, ShapeError
from funcgrad.ir import eval_jaxpr
from funcgrad.test_util import check_grads


def staged(f, *args):
    closed = funcgrad.make_jaxpr(f)(*args)
    return eval_jaxpr(closed.jaxpr, closed.consts, *funcgrad.tree_util.tree_leaves(args))


# ---------------------------------------------------------------------------------------------
# dtypes as NumPy


@pytest.mark.parametrize("args,kw", [
    ((5,), {}),
    ((0.0, 1.0, 0.1), {}),
    ((1, 10, 3), {}),
    ((2.5,), {}),
    ((np.int32(5),), {}),
    ((np.float32(3),), {}),
    ((0, 5), {"dtype": np.float32}),
    ((10, 0, -3), {}),
    ((True, 3), {}),
    ((3, 1), {}),
    ((0.0, 1.0, 0.3), {"dtype": np.float32}),
])
def test_arange_matches_numpy(args, kw) -> None:
    out = fnp.arange(*args, **kw)
    check_device(out)
    assert_allclose(out, np.arange(*args, **kw))


def test_arange_keyword_step_and_errors() -> None:
    assert_allclose(fnp.arange(5, step=2), np.arange(0, 5, 2))
    assert_allclose(fnp.arange(1, 5, dtype=None), np.arange(1, 5))

    def f(n):
        return fnp.arange(n)

    with pytest.raises(ConcretizationError, match="arange"):
        funcgrad.make_jaxpr(f)(5)
    with pytest.raises(DTypeError, match="arange"):
        fnp.arange(3, dtype=object)


def test_arange_concrete_under_grad() -> None:
    def f(x):
        return fnp.sum(fnp.arange(3) * x)

    assert_allclose(funcgrad.grad(f)(2.0), np.float64(3.0))


@pytest.mark.parametrize("name,args,kw", [
    ("zeros", ((2, 3),), {}),
    ("zeros", (3,), {"dtype": np.int32}),
    ("zeros", ((),), {}),
    ("ones", ((2,),), {}),
    ("ones", ([2, 1],), {"dtype": bool}),
    ("empty", (0,), {}),
    ("full", ((2,), 7), {}),
    ("full", ((2,), 7.5), {}),
    ("full", ((2, 2), True), {}),
    ("full", (3, np.float32(2)), {}),
    ("full", ((2, 3), [1, 2, 3]), {}),
    ("full", (2, 1.5), {"dtype": np.float32}),
    ("eye", (3,), {}),
    ("eye", (2, 3, 1), {"dtype": int}),
    ("eye", (3, 2), {"k": -1}),
    ("identity", (2,), {}),
    ("identity", (2,), {"dtype": np.float32}),
    ("tri", (3,), {}),
    ("tri", (2, 4, 1), {"dtype": np.int32}),
    ("linspace", (0, 1, 5), {}),
    ("linspace", (0, 1, 5), {"endpoint": False}),
    ("linspace", (0, 1, 6), {"retstep": True}),
    ("linspace", (2, 3, 0), {"retstep": True}),
    ("linspace", (2, 3, 1), {"retstep": True}),
    ("linspace", (0, 10, 4), {"dtype": int}),
    ("linspace", (-3.5, 2, 5), {"dtype": np.int32}),
    ("linspace", (np.float32(0), 1, 3), {}),
    ("logspace", (0, 2, 3), {}),
    ("logspace", (0, 3, 4), {"base": 2.0}),
    ("geomspace", (1, 1000, 4), {}),
])
def test_creation_matches_numpy(name, args, kw) -> None:
    out = getattr(fnp, name)(*args, **kw)
    check_device(out)
    assert_allclose(out, getattr(np, name)(*args, **kw), err_msg=name)


def test_like_functions() -> None:
    x = dev(rand((2, 3), np.float32))
    for name in ("zeros_like", "ones_like", "empty_like"):
        out = getattr(fnp, name)(x)
        check_device(out)
        assert host(out).dtype == np.float32 and host(out).shape == (2, 3)
    assert_allclose(fnp.full_like(x, 2.5), np.full((2, 3), 2.5, np.float32))
    assert_allclose(fnp.full_like(dev(np.zeros(2, np.int64)), 2.7), np.array([2, 2]))
    assert_allclose(fnp.zeros_like(x, dtype=int, shape=(4,)), np.zeros(4, int))
    assert_allclose(fnp.ones_like([1, 2]), np.ones(2, int))
    assert_allclose(fnp.zeros_like(2.0), np.zeros_like(2.0))


def test_like_functions_of_tracers() -> None:
    seen = {}

    def f(x):
        z = fnp.zeros_like(x)
        o = fnp.ones_like(x, dtype=np.float32)
        seen["z"], seen["o"] = z, o
        return fnp.sum(x * (z + 1.0))

    g = funcgrad.grad(f)(dev(rand((3,))))
    assert_allclose(g, np.ones(3))
    assert not isinstance(seen["z"], funcgrad.core.Tracer)
    assert host(seen["o"]).dtype == np.float32
    out = staged(lambda x: fnp.zeros_like(x) + x, dev(rand((2,))))
    assert_allclose(out[0], rand((2,)))


def test_full_traced_fill_differentiates() -> None:
    g = funcgrad.grad(lambda c: fnp.sum(fnp.full((2, 3), c)))(1.5)
    assert_allclose(g, np.float64(6.0))
    g = funcgrad.grad(lambda c: fnp.sum(fnp.full_like(dev(np.zeros(4)), c)))(1.5)
    assert_allclose(g, np.float64(4.0))


def test_bad_dtypes_rejected() -> None:
    with pytest.raises(DTypeError, match="zeros"):
        fnp.zeros(3, dtype=object)
    with pytest.raises(DTypeError, match="asarray"):
        fnp.asarray(["a", "b"])
    with pytest.raises(DTypeError, match="array"):
        fnp.array("abc")
    with pytest.raises(DTypeError, match="full"):
        fnp.full(2, "x")
    with pytest.raises(DTypeError):
        fnp.asarray(np.array(["a"]))
    with pytest.raises(DTypeError):
        fnp.eye(2, dtype=str)


def test_shape_argument_errors() -> None:
    with pytest.raises(ValueError, match="negative dimensions"):
        fnp.zeros((2, -1))
    with pytest.raises(TypeError, match="shape must be an int or a sequence"):
        fnp.ones(2.5)


# ---------------------------------------------------------------------------------------------
# array / asarray


def test_asarray_dtypes_and_identity() -> None:
    x = dev(np.ones(3, np.float32))
    assert fnp.asarray(x) is x
    assert host(fnp.asarray(x, dtype=np.float64)).dtype == np.float64
    assert host(fnp.asarray([1, 2])).dtype == np.int64
    assert host(fnp.asarray(2.0)).dtype == np.float64
    assert host(fnp.asarray([[1.0], [2.0]], dtype=np.float32)).dtype == np.float32
    check_device(fnp.asarray([1.0, 2.0]))
    y = fnp.array(x)
    assert y is not x
    assert_allclose(y, np.ones(3, np.float32))
    assert_allclose(fnp.array([1, 2], ndmin=3), np.array([1, 2], ndmin=3))
    assert fnp.asanyarray(x) is x
    with pytest.raises(ValueError, match="copy=False"):
        fnp.asarray(x, dtype=np.float64, copy=False)


def test_asarray_of_tracer_converts() -> None:
    def f(x):
        y = fnp.asarray(x, dtype=np.float32)
        assert y.dtype == np.float32
        return fnp.asarray(y, dtype=np.float64) * 2.0

    g = funcgrad.grad(lambda x: fnp.sum(f(x)))(dev(rand((3,))))
    assert_allclose(g, np.full(3, 2.0))
    out = funcgrad.grad(lambda x: fnp.sum(x.astype(np.float32)))(dev(rand((2,))))
    assert host(out).dtype == np.float64


def test_array_of_tracers_stacks_and_differentiates() -> None:
    def f(a, b):
        m = fnp.array([[a, 2.0 * b], [b, 1.0]])
        return fnp.sum(m * m)

    # Arrays, not Python/NumPy scalars: the core turns scalar results of ops on scalars into
    # host arrays even when the default device is another one (reported to the core's owner).
    a, b = np.array(0.5), np.array(-1.5)
    ga, gb = funcgrad.grad(f, argnums=(0, 1))(dev(a), dev(b))
    assert_allclose(ga, np.float64(2 * a))
    assert_allclose(gb, np.float64(8 * b + 2 * b))
    check_grads(lambda x, y: fnp.asarray([x, y, x]), dev((rand((2,)), rand((2,), seed=1))),
                order=2)
    # NumPy: Python scalars in a list are strong, so float32 with 2.0 gives float64.
    one = dev(np.array(1.0, np.float32))
    out = funcgrad.jvp(lambda x: fnp.array([x, 2.0]), (one,), (one,))
    assert host(out[0]).dtype == np.float64
    with pytest.raises(ShapeError, match="ragged"):
        funcgrad.grad(lambda x: fnp.sum(fnp.array([x, fnp.stack([x, x])])))(dev(np.array(1.0)))


def test_array_of_device_arrays() -> None:
    parts = [dev(np.ones(2)), dev(np.zeros(2))]
    out = fnp.array(parts)
    check_device(out)
    assert_allclose(out, np.array([[1.0, 1.0], [0.0, 0.0]]))


# ---------------------------------------------------------------------------------------------
# linspace / logspace


@pytest.mark.parametrize("num", [0, 1, 2, 7])
@pytest.mark.parametrize("endpoint", [True, False])
def test_linspace_traced_matches_numpy(num, endpoint) -> None:
    # 0-d arrays rather than NumPy scalars: see test_array_of_tracers_stacks_...
    for start, stop in [(np.array(0.0), np.array(1.0)),
                        (np.array(-1.0, np.float32), np.array(3.0, np.float32)),
                        (rand((2,)), rand((3, 1), seed=4))]:
        want = np.linspace(start, stop, num, endpoint=endpoint, retstep=True)
        out = staged(lambda a, b: fnp.linspace(a, b, num, endpoint=endpoint, retstep=True),
                     dev(start), dev(stop))
        assert_allclose(out[0], want[0])
        if num - endpoint > 0:
            assert_allclose(out[1], want[1])
        eager = fnp.linspace(dev(start), dev(stop), num, endpoint=endpoint)
        assert_allclose(eager, want[0])


def test_linspace_traced_int_dtype_and_axis() -> None:
    out = staged(lambda a, b: fnp.linspace(a, b, 5, dtype=int, axis=-1), -3.5,
                 dev(np.array([2.0, 7.0])))
    assert_allclose(out[0], np.linspace(-3.5, np.array([2.0, 7.0]), 5, dtype=int, axis=-1))


def test_linspace_grad_through_endpoints() -> None:
    def f(a, b):
        return fnp.sum(fnp.linspace(a, b, 5) ** 2)

    check_grads(f, dev((np.array(0.3), np.array(1.7))), order=2)
    ga, gb = funcgrad.grad(lambda a, b: fnp.sum(fnp.linspace(a, b, 5)), argnums=(0, 1))(
        *dev((np.array(0.0), np.array(1.0))))
    assert_allclose(ga, np.float64(2.5))
    assert_allclose(gb, np.float64(2.5))
    check_grads(lambda a, b: fnp.linspace(a, b, 4, endpoint=False, axis=1),
                dev((rand((2,)), rand((2,), seed=1))), order=2)
    check_grads(lambda a: fnp.linspace(a, 2.0, 3, retstep=True)[1], dev((np.array(0.5),)),
                order=1)


def test_linspace_errors() -> None:
    with pytest.raises(ValueError, match="must be non-negative"):
        fnp.linspace(0.0, 1.0, -1)

    def f(n):
        return fnp.linspace(0.0, 1.0, n)

    with pytest.raises(ConcretizationError, match="linspace"):
        funcgrad.make_jaxpr(f)(3)


def test_logspace_traced() -> None:
    check_grads(lambda a, b: fnp.logspace(a, b, 4), dev((np.array(0.1), np.array(1.3))),
                order=2)
    out = staged(lambda a: fnp.logspace(a, 2.0, 3, base=2.0), dev(np.array(0.5)))
    assert_allclose(out[0], np.logspace(0.5, 2.0, 3, base=2.0), rtol=1e-12)


def test_geomspace_traced_start() -> None:
    # A traced start is computed from primitives (as jnp.geomspace), not refused.
    got = funcgrad.jit(lambda a: fnp.geomspace(a, 2.0, 3))(dev(1.0))
    assert_allclose(got, np.geomspace(1.0, 2.0, 3))


# ---------------------------------------------------------------------------------------------
# meshgrid, triangles, diagflat


def test_meshgrid_grads_and_errors() -> None:
    x, y = rand((3,)), rand((2,), seed=1)
    for indexing in ("xy", "ij"):
        check_grads(lambda a, b, indexing=indexing: fnp.meshgrid(a, b, indexing=indexing),
                    dev((x, y)), order=2)
    out = fnp.meshgrid(dev(x), dev(rand((2, 2), seed=3)))
    assert isinstance(out, tuple)
    assert_allclose(out, np.meshgrid(x, rand((2, 2), seed=3)))
    assert fnp.meshgrid() == ()
    with pytest.raises(ValueError, match="indexing"):
        fnp.meshgrid(x, indexing="yx")


def test_tril_triu_grad_is_mask() -> None:
    x = rand((3, 4))
    w = rand((3, 4), seed=2)
    for k in (-1, 0, 2):
        g = funcgrad.grad(lambda x, k=k: fnp.sum(fnp.tril(x, k) * dev(w)))(dev(x))
        assert_allclose(g, np.tril(w, k))
        g = funcgrad.grad(lambda x, k=k: fnp.sum(fnp.triu(x, k) * dev(w)))(dev(x))
        assert_allclose(g, np.triu(w, k))
    check_grads(lambda x: fnp.tril(x) * x, dev((x,)), order=2)


def test_tril_traced_inf_outside_is_zero() -> None:
    x = np.array([[1.0, np.inf], [2.0, 3.0]])
    out = staged(fnp.tril, dev(x))
    assert_allclose(out[0], np.tril(x))
    assert_allclose(fnp.tril(dev(x)), np.tril(x))


def test_tril_errors() -> None:
    with pytest.raises(ShapeError, match="tril: input must be at least 1-d"):
        fnp.tril(1.0)


def test_tril_vmap() -> None:
    x = rand((3, 2, 4))
    out = funcgrad.vmap(fnp.tril, in_axes=1)(dev(x))
    assert_allclose(out, np.stack([np.tril(x[:, i]) for i in range(2)]))


def test_diagflat_grads() -> None:
    check_grads(lambda v: fnp.diagflat(v, 1), dev((rand((3,)),)), order=2)
    assert_allclose(fnp.diagflat(dev(np.zeros(0))), np.diagflat(np.zeros(0)))


# ---------------------------------------------------------------------------------------------
# The default device


@pytest.mark.parametrize("make", [
    lambda: fnp.zeros(3),
    lambda: fnp.ones((2, 2), dtype=np.int32),
    lambda: fnp.empty(2),
    lambda: fnp.full((2,), 1.5),
    lambda: fnp.eye(3),
    lambda: fnp.identity(2),
    lambda: fnp.tri(3),
    lambda: fnp.arange(5),
    lambda: fnp.arange(0.0, 1.0, 0.1),
    lambda: fnp.linspace(0.0, 1.0, 4),
    lambda: fnp.logspace(0.0, 1.0, 4),
    lambda: fnp.geomspace(1.0, 8.0, 4),
    lambda: fnp.array([1.0, 2.0]),
    lambda: fnp.asarray([[1, 2]]),
    lambda: fnp.asarray(3.0),
    lambda: fnp.zeros_like([1.0]),
    lambda: fnp.tril([[1.0, 2.0], [3.0, 4.0]]),
    lambda: fnp.diagflat([1.0, 2.0]),
    lambda: fnp.meshgrid([1.0, 2.0], [3.0])[0],
    lambda: fnp.stack([[1.0], [2.0]]),
    lambda: fnp.pad([1.0, 2.0], 1, mode="reflect"),
])
def test_creation_under_strict_device(make) -> None:
    with funcgrad.default_device("strict"):
        out = make()
    assert isinstance(out, StrictArray), type(out)


def test_host_arrays_stay_on_the_host_under_strict_device() -> None:
    x = np.ones(3)
    with funcgrad.default_device("strict"):
        assert fnp.asarray(x) is x
        assert type(fnp.tril(np.ones((2, 2)))) is np.ndarray
        assert type(fnp.full(2, np.ones(2))) is np.ndarray
        assert type(fnp.zeros_like(x)) is np.ndarray
        assert type(fnp.reshape(x, (3, 1))) is np.ndarray
        # a list mixing host arrays and device values joins on the device
        out = fnp.array([x, funcgrad.device_put(np.zeros(3), "strict")])
        assert isinstance(out, StrictArray)


def test_linspace_retstep_strict_device() -> None:
    with funcgrad.default_device("strict"):
        y, step = fnp.linspace(0.0, 1.0, 5, retstep=True)
    assert isinstance(y, StrictArray)
    assert float(step) == 0.25


@pytest.mark.skipif(DEVICE != "cpu", reason="checks host defaults")
def test_creation_on_cpu_is_numpy() -> None:
    assert type(fnp.zeros(2)) is np.ndarray
    assert type(fnp.arange(3)) is np.ndarray
    assert type(fnp.asarray([1.0])) is np.ndarray


def test_device_keyword_as_numpy_and_jax():
    # zeros/ones/empty/full(device=...) place the result there, whatever the default device
    from funcgrad.backend import device_of

    for make in (lambda d: fnp.zeros(2, device=d), lambda d: fnp.ones((1, 2), device=d),
                 lambda d: fnp.empty(2, device=d), lambda d: fnp.full(2, 3.0, device=d),
                 lambda d: fnp.full(2, np.arange(2.0), device=d)):
        assert device_of(make("strict")) == "strict"
        assert device_of(make("cpu")) == "cpu"
    np.testing.assert_array_equal(host(fnp.full(2, 3.0, device="strict")), [3.0, 3.0])
    with pytest.raises(ValueError, match="unknown device"):
        fnp.zeros(2, device="tpu")


def test_device_keyword_on_the_other_creation_functions():
    # NumPy 2 (and jax.numpy) take device= on asarray, asanyarray, arange, linspace, eye and
    # the *_like functions (where it overrides the prototype's device); jax.numpy on array too.
    from funcgrad.backend import device_of

    proto = np.ones((2, 2), np.float32)
    makers = {
        "asarray": lambda d: fnp.asarray([1.0, 2.0], device=d),
        "array": lambda d: fnp.array([[1, 2]], ndmin=3, device=d),
        "asanyarray": lambda d: fnp.asanyarray((1.0,), device=d),
        "arange": lambda d: fnp.arange(1, 7, 2, device=d),
        "linspace": lambda d: fnp.linspace(0.0, 1.0, 5, device=d),
        "linspace_retstep": lambda d: fnp.linspace(0.0, 1.0, 5, retstep=True, device=d)[0],
        "eye": lambda d: fnp.eye(2, 3, k=1, device=d),
        "zeros_like": lambda d: fnp.zeros_like(proto, device=d),
        "ones_like": lambda d: fnp.ones_like(proto, shape=3, device=d),
        "empty_like": lambda d: fnp.empty_like(proto, device=d),
        "full_like": lambda d: fnp.full_like(proto, 2.5, device=d),
    }
    for name, make in makers.items():
        for d in ("strict", "cpu"):
            out = make(d)
            assert device_of(out) == d, name
        want = make(None)
        np.testing.assert_array_equal(host(make("strict")), host(want), err_msg=name)
        assert host(make("strict")).dtype == host(want).dtype, name
    assert device_of(fnp.asarray(fnp.zeros(2, device="strict"), device="cpu")) == "cpu"
    with pytest.raises(ValueError, match="unknown device"):
        fnp.arange(3, device="tpu")
