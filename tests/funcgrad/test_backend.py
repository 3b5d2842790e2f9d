"""The backend seam: devices, device_put, the strict test backend, device mixing errors."""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import backend
from funcgrad._strict_array import StrictArray


def test_devices_lists_cpu() -> None:
    assert "cpu" in funcgrad.devices("cpu") and "cpu" in funcgrad.backend.available_devices()


def test_devices_are_the_default_backends_as_in_jax() -> None:
    # jax.devices(backend=None) is the default backend's devices, so devices()[0] is where
    # arrays made from Python data go; a backend may be named.
    default = funcgrad.default_backend()
    assert funcgrad.devices() == funcgrad.local_devices() == [default]
    assert funcgrad.device_count() == funcgrad.local_device_count() == 1
    assert funcgrad.device_count("cpu") == funcgrad.local_device_count(backend="cpu") == 1
    with funcgrad.default_device("strict"):
        assert funcgrad.devices() == ["strict"] and funcgrad.devices()[0].platform == "strict"
    with pytest.raises(RuntimeError, match="Unknown backend 'tpu'"):
        funcgrad.devices("tpu")


def test_cupy_is_not_imported_by_default() -> None:
    import subprocess
    import sys

    code = ("import funcgrad, funcgrad.numpy as fnp, numpy as np, sys; "
            "funcgrad.grad(lambda x: fnp.sum(fnp.sin(x)))(np.ones(3)); "
            "print('cupy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_device_put_round_trip_strict() -> None:
    x = np.arange(3.0)
    s = funcgrad.device_put(x, "strict")
    assert isinstance(s, StrictArray)
    assert backend.device_of(s) == "strict"
    np.testing.assert_array_equal(funcgrad.to_numpy(s), x)
    back = funcgrad.device_put(s, "cpu")
    assert type(back) is np.ndarray


def test_device_put_pytree() -> None:
    tree = {"a": np.ones(2), "b": [np.zeros(1)]}
    out = funcgrad.device_put(tree, "strict")
    assert all(isinstance(v, StrictArray) for v in funcgrad.tree_util.tree_leaves(out))


def test_results_stay_on_strict_device() -> None:
    x = funcgrad.device_put(np.linspace(0, 1, 4), "strict")
    y = fnp.sin(x) * 2.0
    assert isinstance(y, StrictArray)
    g = funcgrad.grad(lambda v: fnp.sum(fnp.sin(v)))(x)
    assert isinstance(g, StrictArray)
    np.testing.assert_allclose(funcgrad.to_numpy(g), np.cos(np.linspace(0, 1, 4)))


def test_host_operands_follow_device_operands() -> None:
    # NumPy arrays are uncommitted, as JAX's NumPy inputs: beside a device array they move
    # there (JAX: jnp.add(device_array, numpy_array) runs on the device)
    x = funcgrad.device_put(np.array([1.0, 2.0, 3.0]), "strict")
    y = fnp.add(x, np.array([10.0, 20.0, 30.0]))
    assert isinstance(y, StrictArray)
    assert funcgrad.to_numpy(y).tolist() == [11.0, 22.0, 33.0]
    jaxpr = funcgrad.make_jaxpr(lambda a, b: a * b)(x, np.ones(3))
    assert "device_put" in str(jaxpr)  # the host operand's move is part of the program
    assert jaxpr.out_avals[0].device == "strict"


def test_host_operands_follow_device_operands_under_transformations() -> None:
    x = funcgrad.device_put(np.array([1.0, 2.0]), "strict")
    h = np.array([3.0, 4.0])
    for fn in (funcgrad.jit(lambda a, b: a * b), fnp.multiply):
        out = fn(x, h)
        assert isinstance(out, StrictArray) and funcgrad.to_numpy(out).tolist() == [3.0, 8.0]
    # a closed-over NumPy constant in a jitted function of device arrays (JAX: fine)
    out = funcgrad.jit(lambda a: a + np.array([1.0, 1.0]))(x)
    assert funcgrad.to_numpy(out).tolist() == [2.0, 3.0]
    # gradients come back where their inputs live: the host input's through device_put
    gx, gh = funcgrad.grad(lambda a, b: (a * b).sum(), argnums=(0, 1))(x, h)
    assert isinstance(gx, StrictArray) and funcgrad.to_numpy(gx).tolist() == [3.0, 4.0]
    assert type(gh) is np.ndarray and gh.tolist() == [1.0, 2.0]
    # the eager tape's host fast path meeting a device value records the node (was: zeros)
    gx = funcgrad.grad(lambda a: (a * h).sum())(x)
    assert funcgrad.to_numpy(gx).tolist() == [3.0, 4.0]
    gx = funcgrad.grad(lambda a: fnp.sum(h * a * a))(x)
    assert funcgrad.to_numpy(gx).tolist() == [6.0, 16.0]
    gh = funcgrad.jit(funcgrad.grad(lambda b, a: (a * b * b).sum()))(h, x)
    assert type(gh) is np.ndarray and gh.tolist() == [6.0, 16.0]
    out = funcgrad.vmap(lambda a, b: a * b)(x, h)
    assert funcgrad.to_numpy(out).tolist() == [3.0, 8.0]


def test_implicit_host_to_device_transfer_obeys_the_transfer_guard() -> None:
    x = funcgrad.device_put(np.ones(3), "strict")
    with funcgrad.transfer_guard("disallow"):
        with pytest.raises(RuntimeError, match="Disallowed host-to-device transfer"):
            fnp.add(x, np.ones(3))
        assert isinstance(fnp.add(x, 1.0), StrictArray)  # a Python scalar is no transfer
    with funcgrad.transfer_guard_host_to_device("disallow_explicit"):
        with pytest.raises(RuntimeError, match="'strict'"):
            funcgrad.jit(lambda a, b: a * b)(x, np.ones(3))


def test_default_device_context() -> None:
    with funcgrad.default_device("strict"):
        assert isinstance(fnp.zeros(3), StrictArray)
        with funcgrad.default_device("cpu"):
            assert type(fnp.zeros(3)) is np.ndarray
        assert isinstance(fnp.zeros(3), StrictArray)


def test_host_arrays_compute_on_host_whatever_the_default_device() -> None:
    with funcgrad.default_device("strict"):
        y = fnp.sin(np.ones(2)) * 2.0
        assert type(y) is np.ndarray


def test_library_constants_on_the_default_device_meet_host_inputs() -> None:
    # funcgrad functions given only NumPy inputs make their constants on the default device;
    # the host inputs follow them there (reported: lfilter_zi raised DeviceMismatchError)
    from funcgrad.scipy import signal

    with funcgrad.default_device("strict"):
        zi = signal.lfilter_zi(np.array([0.2, 0.3]), np.array([1.0, -0.5]))
    # SciPy: scipy.signal.lfilter_zi([0.2, 0.3], [1.0, -0.5])
    np.testing.assert_allclose(funcgrad.to_numpy(zi), [0.8], rtol=1e-14)


def test_unknown_device_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown device"):
        funcgrad.device_put(np.ones(2), "tpu")


@pytest.mark.gpu
def test_gpu_round_trip() -> None:  # pragma: no cover - needs CUDA
    import cupy

    x = funcgrad.device_put(np.linspace(0, 1, 5), "gpu")
    assert isinstance(x, cupy.ndarray)
    g = funcgrad.grad(lambda v: fnp.sum(fnp.sin(v) * v))(x)
    assert isinstance(g, cupy.ndarray)
    v = np.linspace(0, 1, 5)
    np.testing.assert_allclose(cupy.asnumpy(g), np.sin(v) + v * np.cos(v), rtol=1e-12)


@pytest.mark.gpu
def test_gpu_meets_host_and_strict_arrays_as_documented() -> None:  # pragma: no cover
    # docs/backends.md: NumPy arrays are uncommitted (as JAX's NumPy inputs), so a host
    # operand follows the GPU one there, under transfer_guard; two devices' arrays raise
    import cupy

    x = funcgrad.device_put(np.ones(3), "gpu")
    y = fnp.add(x, np.arange(3.0))
    assert isinstance(y, cupy.ndarray) and cupy.asnumpy(y).tolist() == [1.0, 2.0, 3.0]
    with funcgrad.transfer_guard("disallow"):
        with pytest.raises(RuntimeError, match="Disallowed host-to-device transfer"):
            fnp.add(x, np.ones(3))
    with pytest.raises(funcgrad.DeviceMismatchError, match="'gpu'|'strict'"):
        fnp.add(x, funcgrad.device_put(np.ones(3), "strict"))


def test_device_names_as_pytorch_and_cupy_users_write_them() -> None:
    from funcgrad.backend import canonical_device

    assert [canonical_device(d) for d in ("cpu", "CPU", "cpu:0", "gpu", "cuda", "cuda:0",
                                          "strict")] == ["cpu", "cpu", "cpu", "gpu", "gpu",
                                                         "gpu", "strict"]
    for bad, match in (("tpu", "unknown device 'tpu'; expected 'cpu', 'cuda'"),
                       ("cpu:1", "one cpu device"), ("cuda:x", "must be an integer")):
        with pytest.raises(ValueError, match=match):
            canonical_device(bad)
    x = np.ones(2)
    assert funcgrad.device_put(x, "cpu:0") is x
    with funcgrad.default_device("cpu:0"):
        assert funcgrad.backend.get_default_device() == "cpu"
    assert fnp.astype(x, np.float32, device="cpu:0").dtype == np.float32
    assert type(fnp.fft.fftfreq(4, device="cpu:0")) is np.ndarray
    if not funcgrad.backend.cuda_available():
        for name in ("cuda", "cuda:0"):
            with pytest.raises(RuntimeError, match="needs CuPy"):
                funcgrad.device_put(x, name)


def test_transfer_guard():
    # funcgrad never transfers implicitly; the explicit levels guard device_put/device_get
    x = np.ones(2)
    with funcgrad.transfer_guard("disallow"):
        assert funcgrad.device_put(x, "cpu") is x  # no transfer at all
        y = funcgrad.device_put(x, "strict")  # explicit: allowed at "disallow"
    with funcgrad.transfer_guard("disallow_explicit"):
        with pytest.raises(RuntimeError, match="Disallowed host-to-device transfer"):
            funcgrad.device_put(x, "strict")
        with pytest.raises(RuntimeError, match="Disallowed device-to-host transfer"):
            funcgrad.device_get(y)
        with funcgrad.transfer_guard_device_to_host("allow"):  # the innermost level wins
            assert funcgrad.device_get(y).tolist() == [1.0, 1.0]
    with funcgrad.transfer_guard_host_to_device("log_explicit"):
        funcgrad.device_put(x, "strict")
    with pytest.raises(ValueError, match="must be one of"):
        with funcgrad.transfer_guard("sometimes"):
            pass


def test_device_put_refuses_what_is_not_an_array_as_jax() -> None:
    # JAX 0.10.2: jax.device_put("abc") and device_put of a string / object array raise
    # TypeError ("... is not a valid JAX type"); None and Python numbers in a pytree are fine
    for bad in ("abc", np.array(["a"]), {"w": np.ones(2), "name": "x"}, b"x"):
        with pytest.raises(TypeError, match="device_put: "):
            funcgrad.device_put(bad)
    out = funcgrad.device_put({"w": np.ones(2), "n": 3, "none": None})
    assert out["none"] is None and int(funcgrad.to_numpy(out["n"])) == 3


def test_device_put_moves_traced_values_under_vmap_jit_and_grad():
    # As JAX's device_put primitive: inside vmap/jit the value moves (the result lives on the
    # named device) and the cotangent goes back to the operand's device
    device_of = backend.device_of

    x = funcgrad.device_put(np.arange(3.0), "strict")
    seen = []

    def to_host(a):
        y = funcgrad.device_put(a, "cpu")
        seen.append(y.aval.device)
        return y * 2.0

    for transform in (funcgrad.vmap, funcgrad.jit):
        out = transform(to_host)(x)
        assert device_of(out) == "cpu" and out.tolist() == [0.0, 2.0, 4.0]
    assert seen == ["cpu", "cpu"]
    out = funcgrad.jit(lambda a: funcgrad.device_put(a, "strict") + 1.0)(np.arange(2.0))
    assert device_of(out) == "strict" and funcgrad.device_get(out).tolist() == [1.0, 2.0]
    for g in (funcgrad.grad(lambda a: (funcgrad.device_put(a, "cpu") ** 2).sum()),
              funcgrad.jit(funcgrad.grad(lambda a: (funcgrad.device_put(a, "cpu") ** 2).sum()))):
        ct = g(x)
        assert device_of(ct) == "strict" and funcgrad.device_get(ct).tolist() == [0.0, 2.0, 4.0]
    # no device named: a traced value stays where it is
    assert funcgrad.jit(lambda a: funcgrad.device_put(a))(x).tolist() == [0.0, 1.0, 2.0]


def test_operator_index_reads_0d_device_integers() -> None:
    # NumPy and JAX take a concrete 0-d integer array where an int is meant; CuPy's arrays have
    # no __index__ (nor have the strict backend's), so funcgrad reads them with operator_index
    operator_index = backend.operator_index
    s = funcgrad.device_put(np.asarray(2), "strict")
    assert operator_index(s) == 2 and operator_index(np.int8(-1)) == -1
    for bad in (funcgrad.device_put(np.asarray(2.0), "strict"),
                funcgrad.device_put(np.asarray([2]), "strict"), 2.0):
        with pytest.raises(TypeError):
            operator_index(bad)
    key = funcgrad.random.PRNGKey(0)
    assert funcgrad.random.normal(key, (s, 3)).shape == (2, 3)
    x = funcgrad.device_put(np.arange(5.0), "strict")
    got = funcgrad.lax.dynamic_slice(x, (funcgrad.device_put(np.asarray(1), "strict"),), (s,))
    assert funcgrad.to_numpy(got).tolist() == [1.0, 2.0]
