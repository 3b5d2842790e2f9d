"""debug_nans / detect_anomaly: planted NaNs found in forward and backward, eagerly and
under jit, naming the primitive, the forward operation and the user's line."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from helpers import dev, host

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.core import current_trace, eval_trace
from funcgrad.debug import NaNError, debug_nans, nans_enabled, set_debug_nans
from funcgrad_nn.autograd import detect_anomaly, set_detect_anomaly

pytestmark = [pytest.mark.filterwarnings("ignore::RuntimeWarning"),
              # detect_anomaly's own reminder (checked once, below)
              pytest.mark.filterwarnings("ignore:Anomaly Detection has been enabled")]


def assert_close(actual, desired, **kw):
    np.testing.assert_allclose(host(actual), host(desired), **kw)


def _line_of(fn, text):
    src, start = inspect.getsourcelines(fn)
    for i, line in enumerate(src):
        if text in line:
            return start + i
    raise AssertionError(text)


def forward_nan(x):
    y = x * 2.0
    z = fnp.log(y - 10.0)       # NaN here
    return fnp.sum(z)


def sqrt_where(x):
    y = fnp.where(x > 0, fnp.sqrt(x), 0.0)   # gradient NaN at x == 0
    return fnp.sum(y)


def test_forward_eager_names_primitive_shapes_line():
    line = _line_of(forward_nan, "fnp.log")
    with debug_nans(), pytest.raises(NaNError) as e:
        forward_nan(np.array([1.0, 2.0]))
    msg = str(e.value)
    assert "log on (f64[2])" in msg and "NaN" in msg
    assert f"test_nans.py:{line}" in msg


def test_forward_under_jit_reruns_equations():
    line = _line_of(forward_nan, "fnp.log")
    f = funcgrad.jit(forward_nan)
    f(np.array([1.0, 2.0]))     # compiled outside the check: no error, NaN result
    with debug_nans(), pytest.raises(NaNError) as e:
        f(np.array([1.0, 2.0]))
    msg = str(e.value)
    assert "log" in msg and f"test_nans.py:{line}" in msg and "jit" in msg


def test_backward_names_forward_operation_and_line():
    line = _line_of(sqrt_where, "fnp.sqrt")
    x = np.array([0.0, 4.0])
    assert np.isnan(funcgrad.grad(sqrt_where)(x)[0])   # the planted NaN
    with debug_nans(), pytest.raises(NaNError) as e:
        funcgrad.grad(sqrt_where)(x)
    msg = str(e.value)
    assert "backward pass" in msg and "derivative of sqrt" in msg
    assert f"test_nans.py:{line}" in msg


def test_backward_under_jit_found():
    x = np.array([0.0, 4.0])
    with debug_nans(), pytest.raises(NaNError, match="produced NaN"):
        funcgrad.jit(funcgrad.grad(sqrt_where))(x)


def test_detect_anomaly_is_runtime_error_and_clean_values_pass():
    x = np.array([0.0, 4.0])
    with detect_anomaly(), pytest.raises(RuntimeError, match="derivative of sqrt"):
        funcgrad.grad(sqrt_where)(x)
    with detect_anomaly():
        g = funcgrad.grad(sqrt_where)(np.array([1.0, 4.0]))
    assert_close(g, [0.5, 0.25])


def test_infs_only_when_asked():
    with debug_nans():
        fnp.log(fnp.asarray(0.0))          # -inf is allowed by default
    with debug_nans(infs=True), pytest.raises(NaNError, match="Inf"):
        fnp.log(fnp.asarray(0.0))


def test_flag_form_and_restoration():
    assert not nans_enabled() and current_trace() is eval_trace
    set_debug_nans(True)
    try:
        assert nans_enabled()
        with pytest.raises(NaNError):
            fnp.log(fnp.asarray(-1.0))
    finally:
        set_debug_nans(False)
    assert not nans_enabled() and current_trace() is eval_trace
    with set_detect_anomaly(True):
        assert nans_enabled()
    assert not nans_enabled()


def test_decorator_and_values_unchanged():
    @debug_nans()
    def f(x):
        return fnp.sum(fnp.sin(x) * x)

    x = np.array([0.3, 0.5])
    assert_close(f(x), np.sum(np.sin(x) * x))
    with debug_nans():
        g = funcgrad.grad(f)(x)
        h = funcgrad.jit(funcgrad.grad(f))(x)
    assert_close(g, np.sin(x) + x * np.cos(x))
    assert_close(h, g)


def test_bad_argument():
    with pytest.raises(TypeError, match="debug_nans.*bool"):
        debug_nans("yes")
    with pytest.raises(TypeError, match="set_detect_anomaly.*bool"):
        set_detect_anomaly("yes")


def test_anomaly_mode_without_nan_checks():
    # torch 2.13: set_detect_anomaly(True, check_nan=False) turns anomaly mode on without NaN
    # checks (is_anomaly_enabled True, is_anomaly_check_nan_enabled False).
    from funcgrad_nn.autograd import is_anomaly_check_nan_enabled, is_anomaly_enabled

    with set_detect_anomaly(True, check_nan=False):
        assert is_anomaly_enabled() and not is_anomaly_check_nan_enabled()
        assert np.isnan(host(funcgrad.grad(lambda x: fnp.sqrt(x) * 0.0)(-1.0)))
    with detect_anomaly(check_nan=False):
        assert is_anomaly_enabled() and not is_anomaly_check_nan_enabled()
    with detect_anomaly():
        assert is_anomaly_enabled() and is_anomaly_check_nan_enabled()
    assert not is_anomaly_enabled() and not is_anomaly_check_nan_enabled()


# -- JAX's flags: jax_debug_nans / jax_debug_infs ------------------------------------------------


def test_config_update_jax_debug_nans_raises_floating_point_error():
    # As JAX 0.10.2 with jax.config.update("jax_debug_nans", True): FloatingPointError
    # "invalid value (nan) encountered in log", eagerly and under jit; infinities pass.
    funcgrad.config.update("jax_debug_nans", True)
    try:
        assert funcgrad.config.jax_debug_nans is True and nans_enabled()
        with pytest.raises(FloatingPointError, match=r"invalid value \(nan\) encountered in log"):
            fnp.log(fnp.asarray(-1.0))
        with pytest.raises(FloatingPointError, match=r"invalid value \(nan\) encountered in log"):
            funcgrad.jit(lambda x: fnp.log(x) * 2)(-1.0)
        with pytest.raises(FloatingPointError, match=r"encountered in sqrt"):
            funcgrad.grad(lambda x: fnp.where(x > 0, fnp.sqrt(x), 0.0))(-1.0)
        with np.errstate(divide="ignore"):
            assert float(fnp.log(fnp.asarray(0.0))) == -np.inf
    finally:
        funcgrad.config.update("jax_debug_nans", False)
    assert funcgrad.config.jax_debug_nans is False and current_trace() is eval_trace


def test_debug_infs_checks_infinities_only():
    # As JAX's jax_debug_infs: Inf raises, NaN passes (unless jax_debug_nans is on too).
    funcgrad.config.update("jax_debug_infs", True)
    try:
        assert funcgrad.config.jax_debug_infs is True
        with pytest.raises(FloatingPointError, match=r"invalid value \(inf\) encountered in log"):
            fnp.log(fnp.asarray(0.0))
        with np.errstate(invalid="ignore"):
            assert np.isnan(float(fnp.log(fnp.asarray(-1.0))))
        with debug_nans():
            with pytest.raises(NaNError, match="NaN"):
                fnp.log(fnp.asarray(-1.0))
            with pytest.raises(NaNError, match="Inf"):
                fnp.log(fnp.asarray(0.0))
            with debug_nans(False), np.errstate(invalid="ignore"):
                assert np.isnan(float(fnp.log(fnp.asarray(-1.0))))
                with pytest.raises(NaNError, match="Inf"):
                    fnp.log(fnp.asarray(0.0))
    finally:
        funcgrad.config.update("jax_debug_infs", False)
    assert not funcgrad.config.jax_debug_infs and current_trace() is eval_trace
    with funcgrad.debug.debug_infs(), pytest.raises(FloatingPointError, match="Inf"):
        funcgrad.jit(lambda x: fnp.log(x))(0.0)
    assert current_trace() is eval_trace


def test_config_update_rejects_unknown_flags():
    with pytest.raises(AttributeError, match="Unrecognized config option: jax_nonexistent"):
        funcgrad.config.update("jax_nonexistent", True)
    with pytest.raises(AttributeError):
        funcgrad.config.jax_nonexistent  # noqa: B018
    assert funcgrad.config.read("jax_debug_infs") is False


def test_values_computed_on_python_scalars_are_checked():
    # jit(lambda a: a * 0)(nan) with a Python float computes a Python float: JAX 0.10.2
    # raises FloatingPointError; the check skipped values without a dtype.
    with debug_nans(), pytest.raises(FloatingPointError, match="mul"):
        funcgrad.jit(lambda a: a * 0)(float("nan"))
    with debug_nans(), pytest.raises(FloatingPointError, match="mul"):
        fnp.multiply(float("nan"), 0.0)
    with debug_nans(infs=True), pytest.raises(FloatingPointError, match="Inf"):
        funcgrad.jit(lambda a: a * 2)(float("inf"))


def test_backward_under_jit_names_the_forward_operation_and_line():
    # the derivative equations of jit(grad(f)) no longer know their forward operation; the
    # jitted function is run again without jit (JAX's de-optimized call) to name it, as
    # PyTorch's anomaly mode does (the error named only the jit call's line before)
    line = _line_of(sqrt_where, "fnp.sqrt")
    x = np.array([0.0, 4.0])
    for f in (funcgrad.jit(funcgrad.grad(sqrt_where)),
              funcgrad.jit(lambda x: funcgrad.jit(funcgrad.grad(sqrt_where))(x) * 2.0)):
        with detect_anomaly(), pytest.raises(NaNError) as e:
            f(x)
        msg = str(e.value)
        assert "derivative of sqrt" in msg and f"test_nans.py:{line}" in msg, msg
        assert "found in an equation of jit(" in msg and msg.endswith(
            "[invalid value (nan) encountered in mul]"), msg


def test_module_training_step_under_nn_jit_names_the_forward_operation():
    import funcgrad_nn as nn

    def loss(m, x):
        return fnp.sum(fnp.sqrt(m(x) - m(x)) * 0.0)  # sqrt's derivative at 0: 0 * inf

    line = _line_of(loss, "fnp.sqrt")
    model = nn.Linear(2, 1)
    with detect_anomaly(), pytest.raises(RuntimeError) as e:
        nn.jit(nn.grad(loss))(model, np.ones((3, 2), np.float32))
    assert "derivative of sqrt" in str(e.value) and f"test_nans.py:{line}" in str(e.value)


def test_jit_nan_report_stands_when_the_function_fails_without_jit():
    # a function written for tracing only (a tracer-only method) cannot be re-run
    # eagerly: the equation-level report is raised
    def f(x):
        if not isinstance(x, funcgrad.core.Tracer):
            raise TypeError("traced only")
        return fnp.log(x - 1.0)

    with debug_nans(), pytest.raises(NaNError, match="equation of a jitted function"):
        funcgrad.jit(f)(np.array([0.5]))


def _safe_log(x):
    return fnp.sum(fnp.where(x > 0, fnp.log(x), 0.0))   # log(-1) is NaN; where drops it


@pytest.mark.parametrize("gradient", [
    funcgrad.grad(_safe_log), funcgrad.jit(funcgrad.grad(_safe_log)),
    funcgrad.jit(lambda x: funcgrad.jit(funcgrad.grad(_safe_log))(x) * 1.0),
    funcgrad.grad(funcgrad.jit(_safe_log))])
def test_detect_anomaly_lets_a_dropped_forward_nan_through_as_torch(gradient):
    # torch 2.13 under detect_anomaly: torch.where(x > 0, torch.log(x), 0).sum() at
    # x = [-1, 2] runs, and its gradient is [-0., 0.5] (anomaly mode checks the backward
    # pass only); funcgrad raised at the forward log
    x = np.array([-1.0, 2.0])
    with detect_anomaly():
        value = _safe_log(x)
        grad = gradient(x)
    assert float(value) == pytest.approx(np.log(2.0))
    assert_close(grad, [-0.0, 0.5])
    with debug_nans(), pytest.raises(NaNError, match="log on"):   # JAX's flag checks it
        _safe_log(x)


def test_detect_anomaly_still_raises_for_a_backward_nan_under_jit():
    # torch: where(x > 0, sqrt(x), 0) at x = [-1, 2] raises "Function 'SqrtBackward0'
    # returned nan values" (0 * d sqrt(-1) is NaN)
    line = _line_of(sqrt_where, "fnp.sqrt")
    x = np.array([-1.0, 2.0])
    for f in (funcgrad.grad(sqrt_where), funcgrad.jit(funcgrad.grad(sqrt_where))):
        with detect_anomaly(), pytest.raises(RuntimeError) as e:
            f(x)
        msg = str(e.value)
        assert msg.startswith("detect_anomaly: NaN in the backward pass: the derivative of sqrt")
        assert f"test_nans.py:{line}" in msg


def test_anomaly_under_nn_jit_with_tied_weights_and_batchnorm():
    # the de-optimized re-run gets the arguments rebuilt as the traced function does (a
    # module with tied weights travels wrapped), and its state updates land on copies
    import funcgrad_nn as nn

    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = nn.Linear(2, 2), nn.Linear(2, 2)
            self.b.weight = self.a.weight
            self.bn = nn.BatchNorm1d(2)

        def forward(self, x):
            return self.bn(self.b(self.a(x)))

    def loss(m, x):
        return fnp.sum(fnp.sqrt(m(x) - m(x)) * 0.0)

    line = _line_of(loss, "fnp.sqrt")
    m = Tied()
    with detect_anomaly(), pytest.raises(RuntimeError) as e:
        nn.jit(nn.grad(loss))(m, np.ones((3, 2), np.float32))
    assert "derivative of sqrt" in str(e.value) and f"test_nans.py:{line}" in str(e.value)
    assert int(m.bn.num_batches_tracked) == 0


def _ckpt_block(x):
    return fnp.sqrt(x) * 0.0       # sqrt's derivative at 0 times 0: NaN


def test_anomaly_inside_nn_checkpoint_names_the_operation_inside():
    # torch names SqrtBackward0 inside a checkpointed block; the checkpoint's recomputation
    # was checked as one operation ("transposing mul ... (remat ...)")
    import funcgrad_nn as nn

    line = _line_of(_ckpt_block, "fnp.sqrt")
    x = np.array([0.0, 1.0])
    loss = lambda x: fnp.sum(nn.checkpoint(_ckpt_block, x))   # noqa: E731
    for f in (funcgrad.grad(loss), funcgrad.jit(funcgrad.grad(loss))):
        with detect_anomaly(), pytest.raises(RuntimeError) as e:
            f(x)
        assert "derivative of sqrt" in str(e.value) and f"test_nans.py:{line}" in str(e.value)
    # outside anomaly mode it is still a checkpoint (recomputed), with the same gradient
    closed = funcgrad.make_jaxpr(funcgrad.grad(loss))(np.array([1.0, 4.0]))
    assert "remat" in str(closed) or "checkpoint" in str(closed)
    assert_close(funcgrad.grad(loss)(np.array([1.0, 4.0])), [0.0, 0.0])


@pytest.mark.parametrize("jit", [False, True])
def test_detect_anomaly_names_the_backward_of_a_custom_function(jit):
    # torch 2.13: a NaN made by MyFn.backward under detect_anomaly raises "Function
    # 'MyFnBackward' returned nan values in its 0th output."; the message named only
    # custom_vjp_call, not whose rule it was
    from funcgrad_nn.autograd import Function

    class MyFn(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * fnp.log(x - 10)

    f = funcgrad.grad(lambda x: MyFn.apply(x).sum())
    f = funcgrad.jit(f) if jit else f
    with detect_anomaly(), pytest.raises(RuntimeError, match="backward rule MyFnBackward"), \
            np.errstate(invalid="ignore"):
        f(dev(np.ones(2)))


def test_detect_anomaly_names_a_custom_vjp_backward_rule():
    @funcgrad.custom_vjp
    def f(x):
        return x * 2

    def f_fwd(x):
        return x * 2, x

    def f_bwd(x, g):
        return (g * fnp.log(x - 10),)

    f.defvjp(f_fwd, f_bwd)
    with detect_anomaly(), pytest.raises(RuntimeError, match="backward rule f_bwd"), \
            np.errstate(invalid="ignore"):
        funcgrad.grad(lambda x: f(x).sum())(dev(np.ones(2)))


def test_detect_anomaly_warns_when_made_as_torch():
    # torch 2.13: detect_anomaly() warns "Anomaly Detection has been enabled. This mode will
    # increase the runtime and should only be enabled for debugging."; set_detect_anomaly
    # does not
    import warnings

    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        with detect_anomaly():
            pass
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with set_detect_anomaly(True):
            pass
