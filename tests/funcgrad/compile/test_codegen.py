"""Code generation: emitters, fallback, buffer reuse safety, executables."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev, host

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.compile import REUSE_MIN_SIZE, compile_jaxpr, emitters
from funcgrad.compile.codegen import Emission
from funcgrad.core import Primitive
from funcgrad.ir import eval_jaxpr
from funcgrad.ops import elementwise as ew

N = REUSE_MIN_SIZE * 2


def _exe(f, *args, donated=None):
    return compile_jaxpr(funcgrad.make_jaxpr(f)(*args), donated, "f")


def _check(f, *args, donated=None):
    closed = funcgrad.make_jaxpr(f)(*args)
    want = eval_jaxpr(closed.jaxpr, closed.consts, *args)
    exe = compile_jaxpr(closed, donated, "f")
    before = [host(a).copy() if hasattr(a, "shape") else a for a in args]
    got = exe(*args)
    assert_allclose(got, want)
    if donated is None:
        for a, b in zip(args, before):
            np.testing.assert_array_equal(host(a), b)
    return exe


def test_emitters_write_backend_calls():
    exe = _exe(lambda x, y: fnp.sum(fnp.tanh(x @ y).T.reshape(-1)), np.ones((2, 3)),
               np.ones((3, 4)))
    src = exe.source
    for frag in ("xp.matmul(", "xp.tanh(", "xp.transpose(", "xp.reshape(", "xp.sum("):
        assert frag in src, src
    compile(src, "<t>", "exec")


def test_declared_array_call_keeps_params():
    exe = _check(lambda x: ew.round(x, 2), np.array([1.2345, 2.5678]))
    assert "xp.round(v0, decimals=2)" in exe.source, exe.source


def test_fallback_calls_the_impl():
    p = Primitive("test_codegen_double")
    p.def_impl(lambda x: [x * 2])
    p.def_abstract_eval(lambda a: [a])
    try:
        closed = funcgrad.make_jaxpr(lambda x: funcgrad.core.bind1(p, x) + 1.0)(np.ones(2))
        exe = compile_jaxpr(closed)
        assert "_p" in exe.source
        assert_allclose(exe(np.ones(2))[0], 3 * np.ones(2))
    finally:
        funcgrad.core.primitive_registry.remove(p)


def test_custom_emitter_is_used():
    p = Primitive("test_codegen_triple")
    p.def_impl(lambda x: [x * 3])
    p.def_abstract_eval(lambda a: [a])
    emitters[p] = lambda ctx, eqn, args: Emission(f"xp.multiply({args[0]}, 3)", fresh=True)
    try:
        closed = funcgrad.make_jaxpr(lambda x: funcgrad.core.bind1(p, x))(np.ones(2))
        exe = compile_jaxpr(closed)
        assert "xp.multiply(v0, 3)" in exe.source
        assert_allclose(exe(np.ones(2))[0], 3 * np.ones(2))
    finally:
        del emitters[p]
        funcgrad.core.primitive_registry.remove(p)


def test_scalar_outputs_are_arrays():
    out = _exe(lambda x: fnp.sum(x), np.ones(3))(np.ones(3))[0]
    assert isinstance(out, np.ndarray) and out.shape == ()


def test_no_args_uses_consts_device():
    c = dev(np.arange(3.0))
    exe = compile_jaxpr(funcgrad.make_jaxpr(lambda: fnp.sin(c) * 2.0)())
    got = exe()[0]
    assert type(got) is type(c)
    assert_allclose(got, 2 * np.sin(np.arange(3.0)))


# -- buffer reuse ------------------------------------------------------------------------------


def test_reuse_writes_only_dead_temporaries():
    x = np.linspace(0, 1, N)
    exe = _check(lambda x: fnp.exp(fnp.sin(fnp.cos(x))) * 2.0, x)
    assert "out=" in exe.source
    assert "out=v0" not in exe.source  # never the input


def test_small_arrays_are_not_reused():
    exe = _check(lambda x: fnp.exp(fnp.sin(fnp.cos(x))), np.ones(8))
    assert "out=" not in exe.source


def test_view_of_a_temporary_keeps_it_alive():
    def f(x):
        a = fnp.exp(x)
        v = a.reshape(2, -1)  # a view of a's buffer
        b = fnp.sin(a)  # must not be written into a: v is read below
        return b * 2.0, v + 1.0

    _check(f, np.linspace(0, 1, N))


def test_elementwise_over_a_transposed_view_is_not_in_place():
    n = int(np.ceil(np.sqrt(N)))

    def f(x):
        a = fnp.exp(x)
        return a + a.T  # a dies here, but a.T is a view of it in another layout

    _check(f, np.arange(float(n * n)).reshape(n, n) / (n * n))


def test_results_aliasing_inputs_are_copies_unless_returned_as_is():
    x = np.arange(float(N))
    exe = _exe(lambda x: (x, ew.mul(x, 1.0), x.reshape(2, -1)), x)
    a, b, c = exe(x)
    assert a is x
    assert b is not x and not np.shares_memory(b, x)
    assert not np.shares_memory(c, x)


def test_small_results_aliasing_inputs_are_copies_too():
    # Nothing here is big enough for buffer reuse: the roots of each value still decide.
    x = np.arange(4.0)
    a, b, c, d = _exe(lambda x: (x, ew.mul(x, 1.0), x.reshape(2, -1), -x), x)(x)
    assert a is x
    for r in (b, c, d):
        assert not np.shares_memory(r, x)
    s = dev(np.array(2.0))
    exe = _exe(lambda s: (ew.mul(s, 1.0), -s, s * 3.0, s), s)
    b, n, t, same = exe(s)
    assert same is s and b is not s and not np.shares_memory(host(b), host(s))
    assert [float(host(v)) for v in (b, n, t)] == [2.0, -2.0, 6.0]
    # A Python operator's result on scalars is new: returned as it is (no sharing test).
    assert "_unshare" not in exe.source


def test_donated_inputs_are_reused_only_when_safe():
    x = np.linspace(0, 1, N)
    exe = _exe(lambda x, y: fnp.sin(x) * y, x, x, donated=(True, False))
    y = np.full(N, 2.0)
    got = exe(x.copy(), y)[0]
    assert_allclose(got, np.sin(x) * 2.0)
    # the same array passed twice: not donatable, left intact
    z = x.copy()
    exe(z, z)
    np.testing.assert_array_equal(z, x)
    # a read-only array is not donatable either
    r = x.copy()
    r.setflags(write=False)
    assert_allclose(exe(r, y)[0], np.sin(x) * 2.0)


@pytest.mark.parametrize("shape", [(N,), (2, N // 2)])
def test_many_temporaries_share_buffers_correctly(shape):
    def f(x):
        a = fnp.sin(x)
        b = fnp.cos(x)
        c = a * b
        d = fnp.exp(c) + a
        e = d - b
        return fnp.tanh(e) * c, fnp.sum(e)

    rng = np.random.default_rng(0)
    _check(f, rng.standard_normal(shape))


# -- compiled programs do not leak ------------------------------------------------------------


def _jit_lines() -> set[str]:
    import linecache

    return {k for k in linecache.cache if k.startswith("<funcgrad-jit-")}


def test_linecache_entry_goes_with_the_program():
    import gc

    before = _jit_lines()
    exe = compile_jaxpr(funcgrad.make_jaxpr(lambda x: fnp.sin(x) * 3.0)(np.ones(3)), None, "f")
    mine = _jit_lines() - before
    assert len(mine) == 1  # tracebacks into the program show its source
    del exe
    gc.collect()
    # (the jaxpr above is dead too, so its memoised executable is gone.) The finalizer only
    # lists the entry: removing it there could pull it from under linecache.checkcache's loop
    # over the cache (a cycle collection may run inside that loop), a KeyError in pdb, doctest
    # or traceback printing. The next compilation drops it.
    assert mine <= _jit_lines()
    compile_jaxpr(funcgrad.make_jaxpr(lambda x: fnp.cos(x))(np.ones(2)), None, "g")
    assert not (_jit_lines() & mine)


def test_eager_loop_compiles_its_body_once():
    import gc

    from funcgrad.compile import codegen

    def step(x, lr):
        # A new body function and a new jaxpr on every call, past the compile threshold.
        return funcgrad.lax.fori_loop(0, 100, lambda i, c: c * lr + 0.01, x)

    x = np.ones(3)
    step(x, 0.5)
    gc.collect()
    before = _jit_lines()
    built = []
    real = codegen.Executable.__init__

    def counting(self, *a, **k):
        built.append(1)
        real(self, *a, **k)

    codegen.Executable.__init__ = counting
    try:
        for _ in range(20):
            out = step(x, 0.5)
    finally:
        codegen.Executable.__init__ = real
    gc.collect()
    assert not built
    assert len(_jit_lines() - before) == 0
    def by_hand(lr):
        c = x
        for _ in range(100):
            c = c * lr + 0.01
        return c

    assert_allclose(out, by_hand(0.5))
    assert_allclose(step(x, 0.25), by_hand(0.25))  # another constant, another program


def test_compiled_code_is_the_source_without_its_comments():
    # Comments (primitive, user's line) are for reading and tracebacks; Python compiles the
    # bare statements, line for line the same, so a traceback's line shows its comment.
    from funcgrad.compile.codegen import generate_code
    from funcgrad.compile.passes import optimize_jaxpr

    closed = optimize_jaxpr(funcgrad.make_jaxpr(lambda x: fnp.sin(x) * fnp.exp(x))(1.0))
    code, source, _, _ = generate_code(closed, name="f")
    assert "#" not in code and "# sin (test_codegen.py:" in source
    code_lines, source_lines = code.splitlines(), source.splitlines()
    assert len(code_lines) == len(source_lines)
    for c, s in zip(code_lines, source_lines):
        assert s.startswith(c) and (s == c or s[len(c):].lstrip().startswith("# "))


def test_traceback_of_generated_code_shows_the_users_line():
    import linecache
    import traceback

    def boom(v):
        raise IndexError("from the callback")

    def bad(x):
        y = fnp.sin(x)
        return funcgrad.pure_callback(boom, funcgrad.ShapeDtypeStruct((), np.float64), y)

    jf = funcgrad.jit(bad)
    try:
        jf(1.0)
    except IndexError as e:
        frames = [f for f in traceback.extract_tb(e.__traceback__)
                  if f.filename.startswith("<funcgrad-jit")]
        assert frames, "no frame of the generated function"
        line = linecache.getline(frames[0].filename, frames[0].lineno)
        assert "# pure_callback (test_codegen.py:" in line, line
    else:
        pytest.fail("no IndexError")


def test_python_scalar_arithmetic_computes_on_the_host_whatever_the_default_device(
        monkeypatch):
    # A compiled step's arithmetic on Python-float arguments alone (an optimizer's lr, a
    # schedule's beta) is Python's, on the host: with a GPU as the default device it was a
    # kernel launch and a read back per operation, in CUDA's last bits (an optimizer's
    # compiled step over host parameters then differed from its eager loop).
    import funcgrad._strict_array as sa

    made = []
    real = sa.StrictArray.__init__

    def spy(self, *args, **kwargs):
        made.append(1)
        real(self, *args, **kwargs)
    monkeypatch.setattr(sa.StrictArray, "__init__", spy)
    f = funcgrad.jit(lambda x, lr, b: x - lr * (1 - b ** 2.5) / (1 - b))
    x = np.ones(3)
    with funcgrad.default_device("strict"):
        got = f(x, 0.1, 0.9)
    assert type(got) is np.ndarray and not made
    np.testing.assert_array_equal(got, x - 0.1 * (1 - 0.9 ** 2.5) / (1 - 0.9))
