"""Fusion of elementwise chains (funcgrad.compile.fusion), and the compiler changes that came
with it: scratch buffers kept between calls, broadcasts melted into their readers, negations
pushed together, slicing transposes added in place."""

from __future__ import annotations

import re
import sys
import types

import numpy as np
import pytest
from helpers import DEVICE, ON_GPU, assert_allclose, dev, host
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.compile import FusionConfig, compile_jaxpr, fusion, fusion_config, fusion_options
from funcgrad.compile import set_fusion as _set_fusion
from funcgrad.compile.codegen import generate_code
from funcgrad.compile.passes import optimize_jaxpr

# Tiny blocks and threshold, so that small test arrays take the fused path with several blocks
# and a short last one.
SMALL = {"min_size": 4, "chunk_bytes": 24}


def _compile(f, *args, mode="chunked", **cfg):
    closed = funcgrad.make_jaxpr(f)(*args)
    with fusion_options(mode, **{**SMALL, **cfg}):
        return compile_jaxpr(closed, None, "f")


def _unfused(f, *args):
    closed = funcgrad.make_jaxpr(f)(*args)
    with fusion_options("off"):
        return compile_jaxpr(closed, None, "f")(*args)


def _same(got, want, exact=True):
    for g, w in zip(got, want):
        g, w = host(g), host(w)
        assert g.shape == w.shape and g.dtype == w.dtype, (g.dtype, w.dtype, g.shape, w.shape)
        if exact:
            np.testing.assert_array_equal(g, w)
        else:
            tol = 2e-6 if g.dtype == np.float32 else 1e-13
            np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


# -- random chains: fused == unfused -----------------------------------------------------------

_UNARY = {
    "sin": fnp.sin, "cos": fnp.cos, "exp": lambda x: fnp.exp(-x * x), "tanh": fnp.tanh,
    "neg": lambda x: -x, "square": lambda x: x ** 2, "abs": fnp.abs,
    "sqrt": lambda x: fnp.sqrt(fnp.abs(x) + 1.0), "log1p": lambda x: fnp.log1p(fnp.abs(x)),
    "scale": lambda x: x * 0.5 + 2.0,
}
_BINARY = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "div": lambda a, b: a / (fnp.abs(b) + 1.0), "max": fnp.maximum,
    "where": lambda a, b: fnp.where(a > b, a, b * 3.0),
}


@st.composite
def chains(draw):
    n_in = draw(st.integers(1, 3))
    steps = draw(st.lists(
        st.tuples(st.sampled_from(sorted(_UNARY) + sorted(_BINARY)),
                  st.integers(0, 10), st.integers(0, 10)),
        min_size=2, max_size=8))
    n_out = draw(st.integers(1, 2))
    return n_in, steps, n_out


def _chain_fn(n_in, steps, n_out):
    def f(*xs):
        vals = list(xs)
        for name, i, j in steps:
            a, b = vals[i % len(vals)], vals[j % len(vals)]
            vals.append(_UNARY[name](a) if name in _UNARY else _BINARY[name](a, b))
        return tuple(vals[-n_out:])
    return f


_SHAPES = st.sampled_from([((13,), (13,)), ((5, 7), (5, 7)), ((5, 7), (5, 1)),
                           ((5, 7), (7,)), ((6, 4), (1, 4)), ((17,), ())])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chains(), _SHAPES, st.sampled_from([np.float32, np.float64]), st.integers(0, 1000))
def test_fused_equals_unfused(chain, shapes, dtype, seed):
    n_in, steps, n_out = chain
    rng = np.random.default_rng(seed)
    big, small = shapes
    args = [dev(rng.uniform(-2, 2, big if k % 2 == 0 else small).astype(dtype))
            for k in range(n_in)]
    f = _chain_fn(n_in, steps, n_out)
    want = _unfused(f, *args)
    exe = _compile(f, *args)
    _same(exe(*args), want)  # chunked NumPy: the same ufunc calls, bit for bit
    _same(exe(*args), want)  # again, with the scratch buffers of the first call reused


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chains(), st.sampled_from([np.float32, np.float64]), st.integers(0, 1000))
def test_numexpr_mode_matches(chain, dtype, seed):
    pytest.importorskip("numexpr")
    n_in, steps, n_out = chain
    rng = np.random.default_rng(seed)
    args = [dev(rng.uniform(-2, 2, (6, 5)).astype(dtype)) for _ in range(n_in)]
    f = _chain_fn(n_in, steps, n_out)
    want = _unfused(f, *args)
    # numexpr's own transcendental functions and evaluation order: close, not bit-equal
    _same(_compile(f, *args, mode="numexpr")(*args), want, exact=False)


def test_grad_of_big_elementwise_is_fused_and_exact():
    x = np.linspace(-3, 3, 1001)

    def f(x):
        return fnp.sum(fnp.sin(x) * fnp.exp(-x * x) + 0.5 * x ** 2)

    g = funcgrad.grad(f)
    want = _unfused(g, x)
    exe = _compile(g, x, chunk_bytes=800)
    assert "def _fused0(" in exe.source and "out=" in exe.source, exe.source
    _same(exe(x), want)
    np.testing.assert_allclose(want[0], (np.cos(x) - 2 * x * np.sin(x)) * np.exp(-x * x) + x,
                               rtol=1e-13, atol=1e-13)


# -- dtypes ------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["chunked", "numexpr"])
def test_float32_stays_float32(mode):
    if mode == "numexpr":
        pytest.importorskip("numexpr")
    x = dev(np.linspace(0, 1, 50, dtype=np.float32))

    def f(x):  # Python scalars are weak (NEP 50): float32 stays float32
        return fnp.sin(x * 2.5) + 1.5 * fnp.tanh(x) - x / 3.0

    exe = _compile(f, x, mode=mode)
    assert "_fused0" in exe.source
    (got,) = exe(x)
    assert host(got).dtype == np.float32
    # GPU kernels may contract a multiply-add the unfused path rounds twice (FMA)
    _same([got], _unfused(f, x), exact=mode == "chunked" and not ON_GPU)


def test_mixed_dtypes_promote_as_numpy():
    x32 = dev(np.linspace(0, 1, 40, dtype=np.float32))
    x64 = dev(np.linspace(1, 2, 40))

    def f(a, b):
        return fnp.sin(a) * 2.0 + b, fnp.exp(a) - 1.0

    exe = _compile(f, x32, x64)
    got = exe(x32, x64)
    assert [host(g).dtype for g in got] == [np.float64, np.float32]
    _same(got, _unfused(f, x32, x64))


def test_integer_and_bool_chains():
    i = dev(np.arange(30, dtype=np.int32))

    def f(i):
        j = i * 3 + 7
        return (j % 5) * (j > 40), j // 2 - i

    _same(_compile(f, i)(i), _unfused(f, i))


def test_weak_scalar_argument():
    x = dev(np.linspace(0, 1, 30, dtype=np.float32))

    def f(x, s):
        return fnp.sin(x) * s + s

    for exe_mode in ("chunked", "numexpr"):
        exe = _compile(f, x, 2.0, mode=exe_mode)
        (got,) = exe(x, 2.0)
        assert host(got).dtype == np.float32
        _same([got], _unfused(f, x, 2.0), exact=exe_mode == "chunked")


# -- structure: groups, exports, operands --------------------------------------------------------


def test_group_closes_before_an_outside_reader():
    x = dev(np.linspace(-1, 1, 64))

    def f(x):
        a = fnp.sin(x) * 2.0
        s = fnp.sum(a)  # reads a: the group must be evaluated before this
        return fnp.exp(a) * s + a

    exe = _compile(f, x)
    assert exe.source.count("def _fused") >= 1
    _same(exe(x), _unfused(f, x))


def test_several_exports_and_reuse_of_an_export():
    x = dev(np.linspace(-1, 1, 64).reshape(8, 8))

    def f(x):
        a = fnp.sin(x) + 1.0
        b = a * a
        return a, b, fnp.tanh(b) - a

    _same(_compile(f, x)(x), _unfused(f, x))


def test_broadcast_and_transposed_operands():
    rng = np.random.default_rng(0)
    x = dev(rng.standard_normal((9, 7)))
    col = dev(rng.standard_normal((9, 1)))
    row = dev(rng.standard_normal(7))

    def f(x, col, row):
        t = x.T.T * 1.0  # may arrive as a view
        return fnp.exp(-(t - col) ** 2) * row + fnp.sin(x.T).T

    _same(_compile(f, x, col, row)(x, col, row), _unfused(f, x, col, row))


def test_inputs_are_not_written():
    x = dev(np.linspace(0, 1, 50))
    before = host(x).copy()
    exe = _compile(lambda x: fnp.exp(fnp.sin(x)) * 2.0 + x, x)
    exe(x)
    np.testing.assert_array_equal(host(x), before)


def test_below_threshold_is_not_fused():
    x = np.linspace(0, 1, 50)
    exe = _compile(lambda x: fnp.sin(x) * 2.0 + x, x, min_size=51)
    assert "_fused" not in exe.source


def test_off_and_single_op_are_not_fused():
    x = np.linspace(0, 1, 50)
    assert "_fused" not in _compile(lambda x: fnp.sin(x) * 2.0, x, mode="off").source
    assert "_fused" not in _compile(lambda x: fnp.sin(x), x).source


def test_plan_fusion_groups():
    j = funcgrad.make_jaxpr(lambda x: (fnp.sin(x) * 2.0, fnp.sum(x)))(np.ones(8)).jaxpr
    eqns = fusion.plan_fusion(j, FusionConfig("chunked", 4, 64))
    names = [e.prim.name for e in eqns]
    assert names.count("fused") == 1 and "reduce_sum" in names


# -- numexpr: optional, lazily imported ----------------------------------------------------------


def test_numexpr_missing_falls_back(monkeypatch):
    monkeypatch.setitem(sys.modules, "numexpr", None)  # `import numexpr` now fails
    x = dev(np.linspace(0, 1, 40))

    def f(x):
        return fnp.sin(x) * 2.0 + fnp.cos(x)

    exe = _compile(f, x, mode="numexpr")
    assert "_fused0" in exe.source and "_ne" not in exe.source  # the chunked kernel
    _same(exe(x), _unfused(f, x))


def test_numexpr_unsupported_group_uses_chunked():
    pytest.importorskip("numexpr")
    x = dev(np.linspace(0, 1, 40))

    def f(x):  # maximum has no numexpr form with NumPy's NaN rules
        return fnp.maximum(fnp.sin(x), 0.5) * 2.0

    exe = _compile(f, x, mode="numexpr")
    assert "_ne" not in exe.source
    _same(exe(x), _unfused(f, x))


def test_numexpr_is_not_imported_by_funcgrad():
    import subprocess

    code = ("import sys, funcgrad, numpy as np, funcgrad.numpy as fnp;"
            "funcgrad.jit(lambda x: fnp.sin(x) * 2 + x)(np.ones(1 << 18));"
            "print('numexpr' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "False"


# -- other array modules: the strict backend never runs the NumPy path ---------------------------


def test_strict_backend_runs_unfused():
    from funcgrad._strict_array import StrictArray

    x = funcgrad.device_put(np.linspace(0, 1, 40), "strict")

    def f(x):
        return fnp.exp(fnp.sin(x)) * 2.0 + x

    exe = _compile(f, x)
    assert "_fused0" in exe.source
    (got,) = exe(x)  # a NumPy kernel on StrictArrays would raise (implicit conversion)
    assert isinstance(got, StrictArray)
    _same([got], [f(np.linspace(0, 1, 40))], exact=False)


def test_cupy_path_with_a_stand_in_module(monkeypatch):
    # No GPU here: a fake "cupy" module (NumPy's ufuncs, cupy.fuse a no-op decorator) checks
    # that the CuPy path is reached, builds its kernel once and returns the right values.
    fake = types.ModuleType("cupy")
    built = []

    def fuse(kernel_name=None):
        def deco(fn):
            built.append(kernel_name)
            return fn
        return deco

    for name in ("sin", "exp", "multiply", "add", "empty"):
        setattr(fake, name, getattr(np, name))
    fake.fuse = fuse
    x = np.linspace(0, 1, 40)
    exe = _compile(lambda x: fnp.exp(fnp.sin(x)) * 2.0 + x, x)
    kernel = exe.fn.__globals__["_fused0"]
    for _ in range(2):
        (got,) = kernel(fake, x)
        np.testing.assert_array_equal(got, np.exp(np.sin(x)) * 2.0 + x)
    assert built == ["_fused0_cupy"]


# -- configuration -------------------------------------------------------------------------------


def test_config_api():
    old = fusion_config()
    with pytest.raises(ValueError, match="fusion mode"):
        _set_fusion("fast")
    with pytest.raises(ValueError, match="min_size"):
        _set_fusion(min_size=0)
    with fusion_options("off", min_size=10) as cfg:
        assert cfg == fusion_config() == FusionConfig("off", 10, old.chunk_bytes)
    assert fusion_config() == old


def test_env_variable(monkeypatch):
    monkeypatch.setenv("FUNCGRAD_FUSION", "OFF")
    assert funcgrad.config._env_fusion_mode() == "off"
    monkeypatch.setenv("FUNCGRAD_FUSION", "nonsense")
    assert funcgrad.config._env_fusion_mode() == "auto"


def test_settings_are_per_context():
    import contextvars
    import threading

    old = fusion_config()
    seen = []
    with fusion_options("off"):
        # A copied context sees the setting; a setting made in it stays there.
        ctx = contextvars.copy_context()
        ctx.run(lambda: (seen.append(fusion_config().mode), _set_fusion("chunked")))
        assert fusion_config().mode == "off"
        t = threading.Thread(target=lambda: seen.append(fusion_config().mode))
        t.start()
        t.join()
    assert seen[0] == "off" and seen[1] == old.mode  # a new thread starts from the defaults
    assert fusion_config() == old


def test_config_is_part_of_the_cache_key():
    x = np.linspace(0, 1, 40)
    closed = funcgrad.make_jaxpr(lambda x: fnp.sin(x) * 2.0 + x)(x)
    with fusion_options("chunked", **SMALL):
        a = compile_jaxpr(closed)
    with fusion_options("off"):
        b = compile_jaxpr(closed)
    assert a is not b and "_fused" in a.source and "_fused" not in b.source


# -- scratch buffers (intermediates kept between calls) ------------------------------------------


def test_scratch_buffers_never_leak_into_outputs():
    n = 5000
    f = funcgrad.jit(lambda x: (fnp.exp(fnp.sin(x) * 2.0) + 1.0, fnp.cos(x) * 3.0))
    x1, x2 = dev(np.linspace(0, 1, n)), dev(np.linspace(1, 2, n))
    with fusion_options("off"):
        a1, b1 = f(x1)
        keep = host(a1).copy(), host(b1).copy()
        f(x2)  # a second call must not write into the first call's results
    np.testing.assert_array_equal(host(a1), keep[0])
    np.testing.assert_array_equal(host(b1), keep[1])
    assert "_sb[" in f.source(x1)


def test_scratch_is_per_call_when_reentered():
    closed = funcgrad.make_jaxpr(lambda x: fnp.exp(fnp.sin(x)) * 2.0)(np.ones(5000))
    with fusion_options("off"):
        _, src, glb, name = generate_code(optimize_jaxpr(closed))
    scratch = next(v for k, v in glb.items() if k.startswith("_scratch"))
    first = scratch.get(np)
    second = scratch.get(np)  # while the first set is in use: a new one
    assert all(a is not b for a, b in zip(first, second))
    scratch.put(np, first)
    assert scratch.get(np) is first


# -- compiler rewrites that came with this work --------------------------------------------------


def _source(f, *args):
    with fusion_options("off"):
        return funcgrad.jit(f).source(*args)


def test_broadcast_melts_into_elementwise_readers():
    x, v = dev(np.ones((4, 3))), dev(np.arange(4.0))
    f = lambda x, v: x * fnp.broadcast_to(v[:, None], (4, 3)) + fnp.ones(3)
    assert "broadcast_to" not in _source(f, x, v)
    assert_allclose(funcgrad.jit(f)(x, v), f(x, v))


def test_broadcast_keeps_result_rank():
    e, d = dev(np.array([2.0])), dev(np.arange(3.0))
    # (1,) broadcast to (1, 3) times (3,): NumPy alone would give (3,)
    f = lambda e, d: fnp.broadcast_to(e.reshape(1, 1), (1, 3)) * d
    got = funcgrad.jit(f)(e, d)
    assert host(got).shape == (1, 3)
    assert_allclose(got, f(e, d))


def test_negations_cancel():
    x, y = dev(np.linspace(1, 2, 5)), dev(np.linspace(2, 3, 5))
    f = lambda x, y: -(2.0 * -x) + x * -y - (-(x / -y))
    src = _source(f, x, y)
    assert src.count("negative") <= 1, src
    assert_allclose(funcgrad.jit(f)(x, y), f(x, y), rtol=0, atol=0)


def test_slice_transposes_add_in_place():
    x = dev(np.linspace(-1, 2, 50))
    rosen = lambda x: fnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
    g = funcgrad.grad(rosen)
    src = _source(g, x)
    assert "scatter_add" in src and not re.search(r"= _p\d+\(", src), src  # no impl calls
    assert_allclose(funcgrad.jit(g)(x), g(x))


def test_products_of_consts_fold():
    b_host = np.random.default_rng(0).standard_normal((40, 40))
    b = dev(b_host)
    f = funcgrad.hessian(lambda x: 0.5 * (x @ b @ x))
    x = dev(np.ones(40))
    src = _source(f, x)
    assert_allclose(funcgrad.jit(f)(x), 0.5 * (b_host + b_host.T))
    if DEVICE != "cpu":
        return  # device arrays are never frozen: the rewrites below need host constants
    # b is writeable (read at run time): the products with the (scaled) identity basis are
    # the operand itself, the outer product with the size-1 basis a multiply; no product.
    assert "xp.matmul" not in src and not re.search(r"= _p\d+\(", src), src
    b_frozen = b_host.copy()
    b_frozen.flags.writeable = False  # fixed at compile time: the whole Hessian folds
    g = funcgrad.hessian(lambda x: 0.5 * (x @ b_frozen @ x))
    src = _source(g, dev(np.ones(40)))
    assert "matmul" not in src and "dot_general" not in src, src
    assert_allclose(funcgrad.jit(g)(dev(np.ones(40))), 0.5 * (b_host + b_host.T))


@pytest.mark.skipif(DEVICE != "cpu", reason="NumPy-specific source check")
def test_stacked_product_is_one_gemm():
    a, w = np.ones((6, 1, 5)), np.ones((5, 3))
    src = _source(lambda a, w: a @ w, a, w)
    assert ".reshape((6, 5))" in src


def test_kernel_given_a_non_contiguous_dead_buffer():
    # a = x.T cast: a fresh, Fortran-ordered buffer; dead after the sum, it is offered to the
    # fused group's output, which writes through a flat view: it must take a fresh one.
    x = dev(np.linspace(0, 1, 64 * 80).reshape(64, 80))
    y = dev(np.linspace(1, 2, 80 * 64, dtype=np.float32).reshape(80, 64))

    def f(x, y):
        a = x.T.astype(np.float32)
        s = fnp.sum(a)
        return fnp.exp(y) * 2.0 + y * s

    exe = _compile(f, x, y)
    assert "_fused0(" in exe.source
    _same(exe(x, y), _unfused(f, x, y))
