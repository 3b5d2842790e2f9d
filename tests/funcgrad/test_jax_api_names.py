"""JAX's top-level names that ported programs use: ``config.update``/``read`` and flags,
``funcgrad.Array`` and ``funcgrad.typing``, the device queries, ``funcgrad.ad_checkpoint``."""

from __future__ import annotations

import contextvars

import numpy as np
import pytest
from helpers import dev, expected_fp_warnings, host

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import config


def _fresh(fn, *args):
    """Run ``fn`` in a copy of the current context: flag writes do not leak into other tests."""
    return contextvars.copy_context().run(fn, *args)


def test_enable_x64_is_accepted_and_always_on() -> None:
    def body():
        config.update("jax_enable_x64", True)
        return config.read("jax_enable_x64"), config.jax_enable_x64, fnp.asarray(1.0).dtype

    assert _fresh(body) == (True, True, np.float64)


def test_disabling_x64_warns_that_it_has_no_effect() -> None:
    with pytest.warns(UserWarning, match="no effect"):
        _fresh(config.update, "jax_enable_x64", False)


def test_unknown_flag_is_an_attribute_error_naming_it() -> None:
    with pytest.raises(AttributeError, match="Unrecognized config option: jax_no_such_flag"):
        config.update("jax_no_such_flag", 1)
    with pytest.raises(AttributeError):
        config.read("jax_no_such_flag")
    with pytest.raises(AttributeError):
        config.jax_no_such_flag  # noqa: B018


@expected_fp_warnings
def test_debug_nans_flag_switches_nan_checking() -> None:
    def body():
        config.update("jax_debug_nans", True)
        on = config.jax_debug_nans
        with pytest.raises(FloatingPointError):
            fnp.log(dev(np.array(-1.0)))
        config.update("jax_debug_nans", False)
        return on, config.jax_debug_nans

    assert _fresh(body) == (True, False)


def test_disable_jit_flag() -> None:
    def body():
        config.update("jax_disable_jit", True)
        seen = []
        f = funcgrad.jit(lambda x: seen.append(type(x)) or x + 1)
        f(dev(np.ones(2)))
        return config.jax_disable_jit, seen

    on, seen = _fresh(body)
    assert on and not issubclass(seen[0], funcgrad.core.Tracer)
    assert config.read("jax_disable_jit") is False


def test_platform_flag_sets_the_default_device() -> None:
    def body():
        config.update("jax_platforms", "cpu")
        return config.jax_platforms, funcgrad.default_backend()

    assert _fresh(body) == ("cpu", "cpu")
    with pytest.raises(ValueError, match="unknown device"):
        _fresh(config.update, "jax_platform_name", "tpu")


def test_default_device_flag_sets_the_default_device() -> None:
    # jax.config.update("jax_default_device", jax.devices("cpu")[0]), as scripts pin the CPU
    def body():
        config.update("jax_default_device", funcgrad.devices("cpu")[0])
        first = config.read("jax_default_device"), funcgrad.default_backend()
        config.update("jax_default_device", None)
        return first, config.read("jax_default_device")

    assert _fresh(body) == (("cpu", "cpu"), "cpu")
    with pytest.raises(ValueError, match="unknown device"):
        _fresh(config.update, "jax_default_device", "tpu")


def test_transfer_guard_flags_set_the_guard_levels() -> None:
    # jax.config.update("jax_transfer_guard", "disallow") is jax.transfer_guard's setting
    from funcgrad.config import transfer_guard_level

    def body():
        config.update("jax_transfer_guard", "disallow")
        config.update("jax_transfer_guard_device_to_host", "log")
        return (config.read("jax_transfer_guard"), config.read("jax_transfer_guard_host_to_device"),
                dict(transfer_guard_level.get())["device_to_host"])

    assert _fresh(body) == (None, "disallow", "log")
    assert config.read("jax_transfer_guard") == "allow"
    with pytest.raises(ValueError, match="must be one of"):
        _fresh(config.update, "jax_transfer_guard", "sometimes")


def test_accepted_flags_without_effect_check_their_values() -> None:
    _fresh(config.update, "jax_default_matmul_precision", "highest")
    with pytest.raises(ValueError, match="must be one of"):
        _fresh(config.update, "jax_numpy_rank_promotion", "sometimes")


def test_array_type_covers_arrays_and_tracers() -> None:
    def f(x: funcgrad.Array) -> funcgrad.Array:
        assert isinstance(x, funcgrad.Array)
        return x * 2

    assert isinstance(dev(np.ones(2)), funcgrad.Array)
    assert not isinstance(1.0, funcgrad.Array) and not isinstance(np.float64(1), funcgrad.Array)
    np.testing.assert_allclose(host(funcgrad.grad(lambda x: fnp.sum(f(x)))(dev(np.ones(2)))), 2.0)
    funcgrad.jit(f)(dev(np.ones(2)))
    funcgrad.vmap(f)(dev(np.ones(2)))
    assert issubclass(np.ndarray, funcgrad.Array)
    with pytest.raises(TypeError, match="annotations"):
        funcgrad.Array([1.0])


def test_typing_names() -> None:
    from funcgrad.typing import ArrayLike, DTypeLike  # noqa: F401  (importable, as in JAX)

    def f(x: ArrayLike, dtype: DTypeLike = None) -> funcgrad.Array:
        return fnp.asarray(x, dtype=dtype)

    assert f([1, 2], np.float32).dtype == np.float32


def test_device_queries() -> None:
    assert funcgrad.device_count() == funcgrad.local_device_count() == 1
    assert funcgrad.default_backend() in ("cpu", "gpu", "strict")
    assert funcgrad.local_devices() == [funcgrad.default_backend()]
    assert (funcgrad.process_index(), funcgrad.process_count()) == (0, 1)


def test_ad_checkpoint_module() -> None:
    from funcgrad.ad_checkpoint import checkpoint, checkpoint_name

    def h(x):
        a = checkpoint_name(fnp.sin(x), "a")
        return fnp.sum(fnp.cos(a) * x)

    x = dev(np.array([0.5, 1.0]))
    policy = funcgrad.ad_checkpoint.checkpoint_policies.save_only_these_names("a")
    g = funcgrad.grad(checkpoint(h, policy=policy))(x)
    np.testing.assert_allclose(host(g), host(funcgrad.grad(h)(x)), rtol=1e-12)


def test_jax_error_classes() -> None:
    # the classes jax.errors raises for the same mistakes (JAX 0.10)
    errors = funcgrad.errors
    assert errors.ConcretizationTypeError is funcgrad.ConcretizationError
    cases = [
        (lambda x: 1.0 if x > 0 else 2.0, 1.0, errors.TracerBoolConversionError),
        (lambda n: fnp.zeros(3)[: len(list(range(n)))], 3, errors.TracerIntegerConversionError),
        (lambda x: np.asarray(x), dev(np.ones(2)), errors.TracerArrayConversionError),
        (lambda x: x[x > 0], dev(np.ones(2)), errors.NonConcreteBooleanIndexError),
        (lambda x: x[x > 0], dev(np.ones(2)), IndexError),
        (lambda x: float(x), 1.0, errors.ConcretizationTypeError),
    ]
    for fn, arg, exc in cases:
        with pytest.raises(exc):
            funcgrad.jit(fn)(arg)
    # jax.errors' hierarchy: the tracing errors derive from JAXTypeError / JAXIndexError
    for cls in (errors.ConcretizationTypeError, errors.TracerBoolConversionError,
                errors.TracerIntegerConversionError, errors.TracerArrayConversionError,
                errors.UnexpectedTracerError, errors.KeyReuseError):
        assert issubclass(cls, errors.JAXTypeError) and issubclass(cls, TypeError), cls
    assert issubclass(errors.NonConcreteBooleanIndexError, errors.JAXIndexError)
    assert issubclass(errors.JAXIndexError, IndexError)


def test_flag_context_managers_scope_and_restore() -> None:
    # jax.default_matmul_precision / enable_x64 / numpy_rank_promotion / enable_checks are
    # context managers (and decorators) over their flags
    def body():
        with funcgrad.default_matmul_precision("float32"):
            inside = config.jax_default_matmul_precision
        after = config.jax_default_matmul_precision

        @funcgrad.default_matmul_precision("highest")
        def f(x):
            return x @ x, config.jax_default_matmul_precision

        out, seen = f(np.eye(2))
        with funcgrad.enable_x64(), funcgrad.numpy_rank_promotion("allow"), \
                funcgrad.enable_checks(True):
            x64, checks = config.jax_enable_x64, config.jax_enable_checks
        return inside, after, seen, host(out).tolist(), x64, checks, config.jax_enable_checks

    assert _fresh(body) == ("float32", None, "highest", [[1.0, 0.0], [0.0, 1.0]], True, True,
                            False)
    with pytest.raises(ValueError, match="allow"):
        _fresh(lambda: funcgrad.numpy_rank_promotion("never").__enter__())
    with pytest.warns(UserWarning, match="no effect"):
        _fresh(lambda: funcgrad.enable_x64(False).__enter__())


def test_clear_caches_makes_jit_trace_again() -> None:
    traces = []
    f = funcgrad.jit(lambda x: (traces.append(1), x * 2)[1])
    f(dev(np.ones(2)))
    f(dev(np.ones(2)))
    funcgrad.clear_caches()
    np.testing.assert_array_equal(host(f(dev(np.ones(2)))), [2.0, 2.0])
    assert len(traces) == 2 and f._cache_size() == 1


def test_dtypes_module() -> None:
    # jax.dtypes: float0 cotangents of integer arguments in a custom_vjp, and the helpers
    @funcgrad.custom_vjp
    def scale(x, n):
        return x * n

    scale.defvjp(lambda x, n: (scale(x, n), n),
                 lambda n, g: (g * n, np.zeros(np.shape(n), funcgrad.dtypes.float0)))
    assert float(funcgrad.grad(scale)(2.0, 3)) == 3.0
    d = funcgrad.dtypes
    assert d.float0 is funcgrad.float0 and d.canonicalize_dtype(np.float32) == np.float32
    assert d.issubdtype(np.float32, fnp.floating) and not d.issubdtype(np.int8, fnp.floating)
    assert d.result_type(np.int8, 1.0) == np.float64
    assert d.scalar_type_of(np.int8(1)) is int and d.scalar_type_of(np.ones(1)) is float
    assert d.itemsize_bits(np.float16) == 16 and d.itemsize_bits(d.float0) == 0
    assert d.finfo(np.float32).eps == np.finfo(np.float32).eps and d.iinfo(np.int8).max == 127


def test_experimental_is_an_attribute_after_import() -> None:
    # `import jax; jax.experimental.io_callback(...)` works in JAX 0.10.2 (jax imports it);
    # a fresh interpreter, so an earlier test's `import funcgrad.experimental` cannot hide it
    import subprocess
    import sys

    code = "import funcgrad; print(funcgrad.experimental.io_callback.__name__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "io_callback"


def test_checking_leaks_scopes_its_flag_and_leaks_still_raise() -> None:
    leaked = []

    @funcgrad.jit
    def f(x):
        leaked.append(x)
        return x + 1

    with funcgrad.checking_leaks():
        assert config.read("jax_check_tracer_leaks") is True
        f(dev(np.ones(2)))
        with pytest.raises(funcgrad.errors.UnexpectedTracerError):
            leaked[0] + 1
    assert config.jax_check_tracer_leaks is False


def test_devices_take_a_backend_and_have_jaxs_attributes() -> None:
    # JAX: jax.devices("cpu") -> [CpuDevice(id=0)], .platform 'cpu', .id 0, .device_kind 'cpu',
    # .process_index 0; an absent platform is a RuntimeError
    (d,) = funcgrad.devices("cpu")
    assert d == "cpu" and (d.platform, d.id, d.device_kind, d.process_index) == ("cpu", 0,
                                                                                "cpu", 0)
    assert funcgrad.local_devices(backend="cpu") == ["cpu"]
    assert funcgrad.local_devices()[0].platform == funcgrad.default_backend()
    with pytest.raises(RuntimeError, match="Unknown backend 'tpu'"):
        funcgrad.devices("tpu")
    with pytest.raises(ValueError, match="one process"):
        funcgrad.local_devices(process_index=1)
