"""Buffer donation in compiled code: a fused kernel's export written over a donated operand
that dies in that kernel (in place, no fresh buffer), and the call-time check that refuses a
donated buffer any other argument or const may alias (by allocation, O(n))."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.avals import ShapedArray
from funcgrad.backend import memory_owner
from funcgrad.compile import compile_jaxpr, fusion, fusion_options
from funcgrad.compile.codegen import REUSE_MIN_SIZE, _effective_donation
from tests.helpers import DEVICE, dev, host

# Small fusion threshold and blocks, so that the test arrays (big enough to be reused) run
# through several blocks of a fused kernel, the last one short.
N = REUSE_MIN_SIZE + 123


def _adam_like(p, m, v, g):
    m2 = m + 0.1 * (g - m)
    v2 = v * 0.999 + 0.001 * (g * g)
    return p - 0.01 * (m2 / (fnp.sqrt(v2) + 1e-8)), m2, v2


def _compiled(f, args, donated, chunk_bytes=1000):
    closed = funcgrad.make_jaxpr(f)(*args)
    with fusion_options("chunked", min_size=4, chunk_bytes=chunk_bytes):
        return compile_jaxpr(closed, donated, "f")


def _arrays(seed, n=N, k=4):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(n) for _ in range(k)]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**16), extra=st.integers(0, 700),
       chunk=st.sampled_from([200, 1000, 4096, 1 << 17]))
def test_fused_exports_overwrite_donated_operands_in_place(seed, extra, chunk):
    p, m, v, g = _arrays(seed, N + extra)
    args = [dev(a) for a in (p, m, np.abs(v), g)]
    donated = (True, True, True, False)
    exe = _compiled(_adam_like, args, donated, chunk)
    ref = _compiled(_adam_like, args, None, chunk)(*[a.copy() for a in args])
    g_before = host(args[3]).copy()
    ins = list(args)
    outs = exe(*ins)
    for o, r in zip(outs, ref):
        np.testing.assert_array_equal(host(o), host(r))  # bit-identical to not donating
    # Each result is the very donated array it replaced: no fresh buffer.
    assert outs[0] is ins[0] and outs[1] is ins[1] and outs[2] is ins[2]
    np.testing.assert_array_equal(host(args[3]), g_before)  # not donated: untouched


def test_an_operand_read_after_an_export_is_written_does_not_take_it():
    def f(x, y):
        a = x * 2.0       # exported at member 0, but x is read again at member 1
        b = a + x * y
        return a, b

    x, y = (dev(a) for a in _arrays(1, k=2))
    closed = funcgrad.make_jaxpr(f)(x, y)
    with fusion_options("chunked", min_size=4, chunk_bytes=1000):
        [fz] = fusion.plan_fusion(closed.jaxpr, fusion.fusion_config())
        safe = fusion.overwritable(fz)
        exe = compile_jaxpr(closed, (True, False), "f")
    pos = fz.invars.index(closed.jaxpr.invars[0])
    assert pos not in safe[fz.outvars.index(closed.jaxpr.outvars[0])]
    want = [host(v) for v in f(host(x), host(y))]
    xin = x
    a, b = exe(xin, y)
    # close, not bit-equal: CuPy's fused kernel may contract a + x * y into one FMA; an
    # overwritten operand would be far off
    np.testing.assert_allclose(host(a), want[0], rtol=1e-12, atol=0)
    np.testing.assert_allclose(host(b), want[1], rtol=1e-12, atol=0)
    assert b is xin and a is not xin  # only the export written after the last read took x


def test_numexpr_kernels_overwrite_nothing():
    closed = funcgrad.make_jaxpr(_adam_like)(*_arrays(0))
    [fz] = fusion.plan_fusion(closed.jaxpr, fusion.FusionConfig("numexpr", 4, 1000))
    assert all(not s for s in fusion.overwritable(fz))


# ---- the call-time check -------------------------------------------------------------------


def _step(p, q, g):
    return p * 0.5 + g, q * 0.25 - g


@pytest.mark.parametrize("case", ["same_array_twice", "view_of_other", "other_is_view",
                                  "slices_of_one", "const", "view_of_const", "ok"])
def test_donation_is_refused_where_arguments_or_consts_alias(case):
    base = np.arange(2 * N, dtype=np.float64)
    const = dev(np.linspace(0.0, 1.0, N))
    g = dev(np.ones(N))

    def with_const(p, q, g):
        return p * 0.5 + g + const, q * 0.25 - g

    f = with_const if case in ("const", "view_of_const") else _step
    p = dev(base[:N].copy())
    q = dev(base[N:].copy())
    if case == "same_array_twice":
        q = p
    elif case == "view_of_other":
        q = dev(base.copy())[:N]
        p = q.reshape(N)  # a view of q
    elif case == "other_is_view":
        g = p[::-1]
    elif case == "slices_of_one":
        both = dev(base.copy())
        p, q = both[:N], both[N:]
    elif case == "const":
        p = const
    elif case == "view_of_const":
        p = const[:]
    snapshot = [host(x).copy() for x in (p, q, g, const)]
    sp, sq, sg, sc = snapshot
    want = [sp * 0.5 + sg + (sc if f is with_const else 0.0), sq * 0.25 - sg]
    jf = funcgrad.jit(f, donate_argnums=(0, 1))
    outs = jf(p, q, g)
    for o, w in zip(outs, want):
        np.testing.assert_allclose(host(o), w, rtol=1e-15)
    np.testing.assert_array_equal(host(g), snapshot[2])
    np.testing.assert_array_equal(host(const), snapshot[3])
    if case == "slices_of_one":
        # Two halves of one allocation are refused (conservative: one key per allocation).
        assert outs[0] is not p and outs[1] is not q
    if case == "ok":
        assert outs[0] is p and outs[1] is q


class _NoPairwise:
    """An array module whose may_share_memory must not be called (the O(n) path)."""

    def may_share_memory(self, a, b):  # pragma: no cover - failing is the point
        raise AssertionError("pairwise check on arrays of known ownership")


def test_the_check_is_by_allocation_not_pairwise():
    arrays = [np.zeros(8) for _ in range(200)]
    avals = [ShapedArray(a.shape, a.dtype) for a in arrays]
    eff = _effective_donation(_NoPairwise(), (True,) * 200, arrays, avals, ())
    assert all(eff)
    arrays[7] = arrays[3][::-1]  # a view of another argument: both refused
    eff = _effective_donation(_NoPairwise(), (True,) * 200, arrays, avals, ())
    assert not eff[3] and not eff[7] and sum(eff) == 198


def test_arrays_of_unknown_ownership_are_compared_pairwise():
    buf = bytearray(8 * N)
    a = np.frombuffer(buf, dtype=np.float64)  # owned by the bytearray: key unknown
    b = np.frombuffer(buf, dtype=np.float64)
    assert memory_owner(a) is None
    g = np.ones(N)
    jf = funcgrad.jit(lambda a, b, g: (a + g, b - g), donate_argnums=(0, 1))
    x, y = jf(a, b, g)
    np.testing.assert_array_equal(x, np.ones(N))
    np.testing.assert_array_equal(y, -np.ones(N))
    np.testing.assert_array_equal(a, np.zeros(N))  # aliased: neither was written


@pytest.mark.skipif(DEVICE != "cpu", reason="host arrays")
def test_memory_owner():
    a = np.zeros((4, 5))
    assert memory_owner(a.T) == memory_owner(a) == memory_owner(a[1:, ::2])
    assert memory_owner(a.copy()) != memory_owner(a)
    assert memory_owner(3.0) is None
