"""The optimisation passes: inlining, folding, simplification, CSE, DCE."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import DEVICE, assert_allclose, dev, expected_fp_warnings, host, skip_on_gpu

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.compile import optimize_jaxpr
from funcgrad.ir import ClosedJaxpr, Jaxpr, eval_jaxpr, typecheck_jaxpr
from funcgrad.ops import elementwise as ew
from funcgrad.ops import shape as sh


def _opt(f, *args):
    closed = funcgrad.make_jaxpr(f)(*args)
    new = optimize_jaxpr(closed)
    typecheck_jaxpr(new.jaxpr)
    want = eval_jaxpr(closed.jaxpr, closed.consts, *args)
    got = eval_jaxpr(new.jaxpr, new.consts, *args)
    assert_allclose(got, want)
    return new


def _prims(closed):
    return [e.prim.name for e in closed.eqns]


def test_inlines_nested_jit_and_cses_across_it():
    inner = funcgrad.jit(lambda x: fnp.sin(x) * 2.0)
    new = _opt(lambda x: inner(x) + fnp.sin(x) * 2.0, np.ones(3))
    assert "jit" not in _prims(new)
    assert _prims(new).count("sin") == 1 and _prims(new).count("mul") == 1


def test_cse_same_prim_params_inputs_only():
    new = _opt(lambda x: fnp.sum(x, axis=0) + fnp.sum(x, axis=0) + fnp.sum(x, axis=1)[0],
               np.ones((2, 2)))
    assert _prims(new).count("reduce_sum") == 2
    # -0.0 and 0.0 literals are different inputs
    new = _opt(lambda x: ew.add(ew.mul(x, -0.0), ew.mul(x, 0.0)), np.ones(2))
    assert _prims(new).count("mul") == 2


def test_dce_removes_unused_work():
    def f(x):
        fnp.exp(x)  # result unused
        return fnp.sin(x)

    assert _prims(_opt(f, np.ones(2))) == ["sin"]


def _frozen(a: np.ndarray) -> np.ndarray:
    """A read-only host array: a const whose value the compiler may use (is_frozen)."""
    a.flags.writeable = False
    return a


def test_constant_folding_of_scalars():
    # (on the test device: Python scalars alone compute there)
    new = _opt(lambda x: x * ew.exp(ew.neg(2.0)) + 1.0, dev(np.ones(3)))
    assert _prims(new) == ["mul", "add"]


@pytest.mark.skipif(DEVICE != "cpu", reason="host constants meet host arrays: a host-only check")
def test_constant_folding_of_small_read_only_consts():
    c = _frozen(np.array([1.0, 2.0, 3.0]))
    new = _opt(lambda x: x * ew.exp(ew.neg(2.0)) + ew.sin(c), np.ones(3))
    assert _prims(new) == ["mul", "add"]
    big = _frozen(np.ones(5000))
    new = _opt(lambda x: x + ew.sin(big), np.ones(5000))
    assert "sin" in _prims(new)


def test_writeable_consts_are_read_when_the_program_runs():
    # A closed-over writeable array may be updated in place between calls (a Module's
    # parameters by an optimizer): folding sin(c), or dropping `+ zeros` / `* ones`, would
    # freeze its value into the program.
    c, zeros, ones = dev(np.array([1.0, 2.0, 3.0])), dev(np.zeros(3)), dev(np.ones(3))
    new = _opt(lambda x: (x + ew.sin(c)) * ones + zeros, dev(np.ones(3)))
    assert _prims(new) == ["sin", "add", "mul", "add"]
    f = funcgrad.jit(lambda x: (x + ew.sin(c)) * ones + zeros)
    x = dev(np.ones(3))
    for _ in range(5):  # past the compile threshold
        assert_allclose(f(x), (host(x) + np.sin(host(c))) * host(ones) + host(zeros))
        c += 1.0
        zeros += 1.0
        ones *= 2.0


@expected_fp_warnings
def test_folding_keeps_runtime_warnings():
    skip_on_gpu("CuPy raises no floating-point warnings")
    new = _opt(lambda x: x + ew.log(0.0), dev(np.ones(2)))
    assert "log" in _prims(new)


@pytest.mark.skipif(DEVICE != "cpu", reason="host constants meet host arrays: a host-only check")
def test_zero_one_simplification():
    x = np.array([1.5, -2.0])
    assert _prims(_opt(lambda x: ew.mul(ew.sin(x), 1.0), x)) == ["sin"]
    assert _prims(_opt(lambda x: ew.mul(1.0, ew.sin(x)), x)) == ["sin"]
    assert _prims(_opt(lambda x: ew.div(ew.sin(x), 1.0), x)) == ["sin"]
    assert _prims(_opt(lambda x: ew.add(ew.sin(x), _frozen(np.zeros(2))), x)) == ["sin"]
    assert _prims(_opt(lambda x: ew.sub(ew.sin(x), 0.0), x)) == ["sin"]
    assert _prims(_opt(lambda x: ew.sub(_frozen(np.zeros(2)), ew.sin(x)), x)) == ["sin", "neg"]
    assert _prims(_opt(lambda x: ew.neg(ew.neg(ew.sin(x))), x)) == ["sin"]
    assert _prims(_opt(lambda x: ew.mul(ew.sin(x), sh.broadcast_in_dim(np.float64(1.0), (2,), ())), x)) \
        == ["sin"]


def test_simplification_never_changes_shape_dtype_or_weak_type():
    # broadcasting: x (2,) * ones (3, 2) is (3, 2)
    new = _opt(lambda x: ew.mul(x, _frozen(np.ones((3, 2)))), np.ones(2))
    assert _prims(new) == ["mul"]
    # promotion: float32 * float64 one is float64
    new = _opt(lambda x: ew.mul(x, np.float64(1.0)), np.ones(2, np.float32))
    assert _prims(new) == ["mul"]
    # a weakly typed value times 1.0 stays a computation (its result type is not its own)
    new = _opt(lambda s: ew.mul(s, 1.0), 2.0)
    assert _prims(new) == ["mul"]


@expected_fp_warnings
def test_times_zero_only_for_integers():
    new = _opt(lambda x: ew.mul(ew.sin(x), _frozen(np.zeros(2))), np.array([np.inf, 1.0]))
    assert "mul" in _prims(new)  # inf * 0 is nan: kept
    new = _opt(lambda n: ew.mul(ew.add(n, 1), _frozen(np.zeros(2, np.int64))), np.array([1, 2]))
    assert "mul" not in _prims(new)


def test_convert_to_same_dtype_removed():
    new = _opt(lambda x: ew.convert_element_type(ew.sin(x), np.float64), np.ones(2))
    assert _prims(new) == ["sin"]
    new = _opt(lambda x: ew.convert_element_type(ew.sin(x), np.float32), np.ones(2))
    assert _prims(new) == ["sin", "convert_element_type"]


def test_transpose_and_reshape_cancellation():
    x = np.arange(24.0).reshape(2, 3, 4)
    assert _prims(_opt(lambda x: sh.transpose(sh.transpose(ew.sin(x), (1, 2, 0)), (2, 0, 1)),
                       x)) == ["sin"]
    new = _opt(lambda x: sh.transpose(sh.transpose(x, (1, 0, 2)), (0, 2, 1)), x)
    assert _prims(new) == ["transpose"]
    assert new.eqns[0].params["permutation"] == (1, 2, 0)
    new = _opt(lambda x: sh.reshape(sh.reshape(x, (6, 4)), (4, 6)), x)
    assert _prims(new) == ["reshape"]
    assert _prims(_opt(lambda x: sh.reshape(sh.reshape(ew.sin(x), (6, 4)), (2, 3, 4)), x)) \
        == ["sin"]


def test_grad_leaves_no_trivial_arithmetic():
    closed = funcgrad.make_jaxpr(funcgrad.grad(lambda x: fnp.sum(fnp.sin(x) * x)))(np.ones(3))
    new = optimize_jaxpr(closed)
    for e in new.eqns:
        assert e.prim.name != "broadcast_in_dim", new
    assert len(new.eqns) <= 4, new


def test_commutative_operands_are_one_value():
    new = _opt(lambda x, y: ew.mul(x, y) + ew.mul(y, x), np.ones(2), np.arange(2.0))
    assert _prims(new).count("mul") == 1
    new = _opt(lambda x, y: ew.sub(x, y) + ew.sub(y, x), np.ones(2), np.arange(2.0))
    assert _prims(new).count("sub") == 2


def test_transposed_product_becomes_one_product():
    a, b = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)
    new = _opt(lambda a, b: sh.transpose(a @ b, (1, 0)), a, b)
    assert _prims(new) == ["dot_general"]
    # the product is used elsewhere too: keep it (no second product)
    new = _opt(lambda a, b: (sh.transpose(a @ b, (1, 0)), a @ b), a, b)
    assert _prims(new).count("dot_general") == 1


def test_cse_keys_literals_by_value():
    from funcgrad.compile.keys import literal_key

    # 0.0 and -0.0 are different constants: 1 / (x * 0.0) and 1 / (x * -0.0) differ.
    with np.errstate(divide="ignore"):
        new = _opt(lambda x: (1.0 / (x * 0.0), 1.0 / (x * -0.0)), np.ones(2))
    assert _prims(new).count("mul") == 2
    new = _opt(lambda x: (x * np.float32(2.0), x * np.float32(2.0)), np.ones(2, np.float32))
    assert _prims(new).count("mul") == 1
    assert literal_key(np.arange(3.0)) == literal_key(np.arange(3.0))
    assert literal_key(np.arange(3.0)) != literal_key(np.arange(3))
    big = np.zeros(1000)
    assert literal_key(big) == literal_key(big) and literal_key(big) != literal_key(np.zeros(1000))
    assert literal_key(float("nan")) != literal_key(1.0)


def _scalar_jaxpr(build, n_in=2):
    """A closed jaxpr written by hand (tracing would merge duplicates already): ``build(ins)
    -> (eqns, outvars)`` over ``n_in`` float64 scalar inputs."""
    from funcgrad.avals import ShapedArray
    from funcgrad.ir import ClosedJaxpr, Jaxpr, Var

    aval = ShapedArray((), np.dtype("float64"))
    ins = [Var(aval) for _ in range(n_in)]
    eqns, outs = build(ins, lambda: Var(aval))
    return ClosedJaxpr(Jaxpr([], ins, outs, eqns), [])


def test_cse_sweep_merges_and_counts_reads_of_the_result():
    from funcgrad.compile.passes import _cse_sweep
    from funcgrad.ir import Eqn, Literal

    def build(ins, new):
        x, y = ins
        a, b, c, d = new(), new(), new(), new()
        return [Eqn(ew.mul_p, [x, y], [a], {}), Eqn(ew.mul_p, [y, x], [b], {}),
                Eqn(ew.add_p, [a, b], [c], {}), Eqn(ew.add_p, [b, Literal(1.0)], [d], {})], \
            [c, d, b]

    closed = _scalar_jaxpr(build)
    j, uses = _cse_sweep(closed.jaxpr)
    assert [e.prim.name for e in j.eqns] == ["mul", "add", "add"]
    a = j.eqns[0].outvars[0]
    assert j.eqns[1].invars == [a, a] and j.eqns[2].invars[0] is a and j.outvars[2] is a
    assert uses[a] == 4 and uses[j.invars[0]] == 1 and uses[j.invars[1]] == 1
    assert uses[j.eqns[1].outvars[0]] == 1
    args = (np.float64(0.5), np.float64(-3.0))
    assert eval_jaxpr(j, [], *args) == eval_jaxpr(closed.jaxpr, [], *args)


def test_use_count_rules_see_reads_after_cse():
    # n2 duplicates n, read after y * n: a negation read twice does not move out of the
    # product (that would keep `neg x` and add another negation).
    from funcgrad.ir import Eqn

    def build(ins, new):
        x, y, z = ins
        n, m, n2, m2 = new(), new(), new(), new()
        return [Eqn(ew.neg_p, [x], [n], {}), Eqn(ew.mul_p, [y, n], [m], {}),
                Eqn(ew.neg_p, [x], [n2], {}), Eqn(ew.mul_p, [z, n2], [m2], {})], [m, m2]

    closed = _scalar_jaxpr(build, 3)
    new = optimize_jaxpr(closed)
    assert _prims(new) == ["neg", "mul", "mul"]
    args = (np.float64(0.5), np.float64(-3.0), np.float64(2.0))
    assert eval_jaxpr(new.jaxpr, new.consts, *args) == eval_jaxpr(closed.jaxpr, [], *args)


def test_staging_marks_jaxprs_it_merged_throughout_as_distinct():
    # Nested grad under make_jaxpr: every equation is derivative work, staged with trace-time
    # CSE, so the CSE-only sweep is skipped; the optimised program is the one the sweep gives.
    g = funcgrad.grad(funcgrad.grad(lambda x: fnp.sin(x) * fnp.exp(x)))
    closed = funcgrad.make_jaxpr(g)(0.3)
    assert closed.jaxpr.distinct
    plain = ClosedJaxpr(Jaxpr(closed.jaxpr.constvars, closed.jaxpr.invars, closed.jaxpr.outvars,
                              closed.jaxpr.eqns), closed.consts)
    assert not plain.jaxpr.distinct
    assert str(optimize_jaxpr(closed)) == str(optimize_jaxpr(plain))
    # The user's own operations are recorded as written: duplicates may be among them.
    dup = funcgrad.make_jaxpr(lambda x: fnp.sin(x) + fnp.sin(x))(0.3)
    assert not dup.jaxpr.distinct
    assert _prims(optimize_jaxpr(dup)) == ["sin", "add"]
