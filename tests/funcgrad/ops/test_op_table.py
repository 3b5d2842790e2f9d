"""One op table, several drivers: forward vs NumPy, check_grads, vmap vs a Python loop.

Every table module in tests/funcgrad/op_tables/ exposes ``CASES: list[OpCase]``.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

import numpy as np
import pytest
from helpers import (
    OpCase,
    assert_allclose,
    check_device,
    dev,
    expected_fp_warnings,
    float_argnums,
    host,
)

import funcgrad
from funcgrad.test_util import check_grads
from tests.funcgrad import op_tables

# The table evaluates every op at its edge values (log(0), 0/0...): NumPy's warnings there are
# expected.
pytestmark = expected_fp_warnings


def _all_cases() -> list[OpCase]:
    cases: list[OpCase] = []
    for info in pkgutil.iter_modules(op_tables.__path__):
        mod = importlib.import_module(f"tests.funcgrad.op_tables.{info.name}")
        cases.extend(getattr(mod, "CASES", []))
    return cases


CASES = _all_cases()
FORWARD = [pytest.param(c, i, id=f"{c.name}-{i}") for c in CASES for i in range(len(c.args))]
GRADS = [
    pytest.param(c, i, id=f"{c.name}-{i}")
    for c in CASES
    for i, a in enumerate(c.grad_args if c.grad_args is not None else c.args)
    if float_argnums(a)
]
VMAP = [
    pytest.param(c, i, id=f"{c.name}-{i}")
    for c in CASES if c.vmap
    for i, a in enumerate(c.args)
    if any(isinstance(x, np.ndarray) for x in a)
]


def test_case_names_unique() -> None:
    names = [c.name for c in CASES]
    dupes = {n for n in names if names.count(n) > 1}
    assert not dupes, f"duplicate op-table names: {sorted(dupes)}"


@pytest.mark.parametrize("case,i", FORWARD)
def test_forward_matches_numpy(case: OpCase, i: int) -> None:
    args = case.args[i]
    out = case.fn(*dev(args))
    check_device(out)
    ref = case.ref(*args)
    assert_allclose(out, ref, case.rtol, case.atol, check_dtype=case.check_dtype,
                    err_msg=f"{case.name} on {[np.shape(a) for a in args]}")


def _diff_fn(case: OpCase, args: tuple) -> tuple[Any, tuple]:
    argnums = case.diff_argnums if case.diff_argnums is not None else float_argnums(args)
    argnums = tuple(i for i in argnums if i in float_argnums(args))
    fixed = list(dev(args))

    def f(*diff: Any) -> Any:
        full = list(fixed)
        for i, v in zip(argnums, diff):
            full[i] = v
        return case.fn(*full)

    return f, tuple(fixed[i] for i in argnums)


@pytest.mark.parametrize("case,i", GRADS)
def test_grads(case: OpCase, i: int) -> None:
    args = (case.grad_args if case.grad_args is not None else case.args)[i]
    f, diff_args = _diff_fn(case, args)
    if not diff_args:
        pytest.skip("no differentiable argument")
    if case.order == 0:
        # Non-differentiable: zero tangents, never a crash, in both modes.
        tangents = tuple(funcgrad.numpy.ones_like(a) if hasattr(a, "shape") else 1.0
                         for a in diff_args)
        _, t_out = funcgrad.jvp(f, diff_args, tangents)
        for leaf in funcgrad.tree_util.tree_leaves(host(t_out)):
            if np.asarray(leaf).dtype != funcgrad.float0:
                assert not np.any(np.asarray(leaf)), f"{case.name}: nonzero tangent"
        return
    check_grads(f, diff_args, order=case.order, modes=("fwd", "rev"),
                atol=case.grad_atol, rtol=case.grad_rtol)


def _batched_variants(args: tuple) -> list[tuple[tuple, tuple]]:
    """(in_axes, per-example args list) variants: all arrays mapped at 0, first at -1."""
    rng = np.random.default_rng(0)
    n = 3
    examples = []
    for k in range(n):
        ex = []
        for a in args:
            if isinstance(a, np.ndarray) and a.dtype.kind in "fc":
                ex.append((a + 0.1 * k * rng.standard_normal(a.shape)).astype(a.dtype))
            else:
                ex.append(a)
        examples.append(tuple(ex))
    variants = []
    axes_all = tuple(0 if isinstance(a, np.ndarray) else None for a in args)
    variants.append(axes_all)
    first = next(i for i, a in enumerate(args) if isinstance(a, np.ndarray))
    variants.append(tuple(-1 if j == first else None for j in range(len(args))))
    out = []
    for axes in variants:
        batched = []
        for j, a in enumerate(args):
            if axes[j] is None:
                batched.append(a)
                continue
            stacked = np.stack([ex[j] for ex in examples])
            batched.append(np.moveaxis(stacked, 0, axes[j]))
        per_ex = [tuple(ex[j] if axes[j] is not None else args[j] for j in range(len(args)))
                  for ex in examples]
        out.append((axes, tuple(batched), per_ex))
    return out


@pytest.mark.parametrize("case,i", VMAP)
def test_vmap_matches_loop(case: OpCase, i: int) -> None:
    args = case.args[i]
    for axes, batched, per_ex in _batched_variants(args):
        got = funcgrad.vmap(case.fn, in_axes=axes)(*dev(batched))
        check_device(got)
        loop = [host(case.fn(*dev(ex))) for ex in per_ex]
        want = funcgrad.tree_util.tree_map(lambda *xs: np.stack(xs), *loop)
        assert_allclose(got, want, case.rtol, case.atol, check_dtype=case.check_dtype,
                        err_msg=f"{case.name} vmap in_axes={axes}")


def _tape_vs_general(case: OpCase, i: int) -> bool:
    """Compare the eager tape's VJP with linearize + transpose; False: nothing to compare."""
    from funcgrad.interpreters.eager_vjp import vjp_tape
    from funcgrad.interpreters.transpose import vjp_flat

    args = (case.grad_args if case.grad_args is not None else case.args)[i]
    f, diff_args = _diff_fn(case, args)
    if not diff_args or case.order == 0:
        return False

    def flat(*xs: Any) -> list[Any]:
        return funcgrad.tree_util.tree_leaves(f(*xs))

    outs_tape, vjp_t, _ = vjp_tape(flat, list(diff_args))
    outs_gen, vjp_g, _ = vjp_flat(flat, list(diff_args))
    assert_allclose(outs_tape, outs_gen, case.rtol, case.atol)
    rng = np.random.default_rng(0)
    cts = [dev(np.asarray(rng.standard_normal(np.shape(host(o))),
                          dtype=np.asarray(host(o)).dtype)) for o in outs_gen]
    got = [funcgrad.api._materialize_tangent(c) for c in vjp_t(cts)]
    want = [funcgrad.api._materialize_tangent(c) for c in vjp_g(cts)]
    check_device(got)
    assert_allclose(got, want, rtol=1e-5 if case.rtol is None else case.rtol,
                    atol=1e-6 if case.atol is None else case.atol,
                    err_msg=f"{case.name}: tape vjp differs from linearize+transpose")
    return True


@pytest.mark.parametrize("case,i", GRADS)
def test_tape_vjp_agrees(case: OpCase, i: int) -> None:
    """The eager reverse-mode tape (fast path) gives the same VJP as linearize + transpose."""
    if not _tape_vs_general(case, i):
        pytest.skip("nothing to differentiate")


def _rev_over_rev(f: Any, diff_args: tuple) -> Any:
    """``grad`` of ``<grad(s)(x), w>`` for ``s(x) = sum_i <f(x)_i, c_i>`` (random ``c``, ``w``):
    a Hessian-vector product, reverse over reverse."""
    rng = np.random.default_rng(1)
    outs = funcgrad.tree_util.tree_leaves(f(*diff_args))
    cts = [dev(rng.standard_normal(np.shape(host(o)))) for o in outs]
    ws = [dev(rng.standard_normal(np.shape(host(a)))) for a in diff_args]
    argnums = tuple(range(len(diff_args)))

    def s(*xs: Any) -> Any:
        leaves = funcgrad.tree_util.tree_leaves(f(*xs))
        return sum(funcgrad.numpy.sum(o * c) for o, c in zip(leaves, cts))

    def inner(*xs: Any) -> Any:
        g = funcgrad.grad(s, argnums=argnums)(*xs)
        return sum(funcgrad.numpy.sum(gi * w) for gi, w in zip(g, ws))

    return funcgrad.grad(inner, argnums=argnums)(*diff_args)


@pytest.mark.parametrize("case,i", GRADS)
def test_nested_tape_agrees(case: OpCase, i: int) -> None:
    """``grad`` of ``grad`` on nested eager tapes (the inner tape's backward pass recorded by
    the outer one) gives what linearize + transpose gives."""
    args = (case.grad_args if case.grad_args is not None else case.args)[i]
    f, diff_args = _diff_fn(case, args)
    if not diff_args or case.order < 2:
        pytest.skip("no second derivative checked for this case")
    kinds = {np.asarray(host(x)).dtype.kind for x in
             (*diff_args, *funcgrad.tree_util.tree_leaves(f(*diff_args)))}
    if kinds - {"f"}:
        pytest.skip("real floating inputs and outputs only (grad of a real scalar)")
    got = _rev_over_rev(f, diff_args)
    with funcgrad.config.override(funcgrad.config.eager_tape, False):
        want = _rev_over_rev(f, diff_args)
    check_device(got)
    rtol = 1e-5 if case.rtol is None else case.rtol
    atol = 1e-6 if case.atol is None else case.atol
    if any(np.asarray(host(x)).dtype == np.float32 for x in diff_args):
        # the two orders of float32 rounding differ by a few ulps (pinv's SVD)
        rtol, atol = max(rtol, 1e-5), max(atol, 1e-6)
    assert_allclose(got, want, rtol=rtol, atol=atol,
                    err_msg=f"{case.name}: nested tapes differ from linearize+transpose")


def _fast_rule_prims() -> list[Any]:
    import funcgrad.ops  # noqa: F401  (every library primitive registers its rules)
    from funcgrad.interpreters.jvp import fast_vjp_rules

    return sorted(fast_vjp_rules, key=lambda p: p.name)


@pytest.mark.parametrize("prim", _fast_rule_prims(), ids=lambda p: p.name)
def test_fast_vjp_rules_agree(prim: Any) -> None:
    """Each fast eager VJP rule a primitive registers (``defjvp(..., fast_vjp=...)``) gives
    what linearize + transpose gives, on op-table cases where the rule really runs."""
    from funcgrad.interpreters import eager_vjp
    from funcgrad.interpreters.jvp import fast_vjp_rules

    rules = fast_vjp_rules[prim]
    calls = []

    def counting(rule: Any) -> Any:
        def wrapped(*a: Any, **k: Any) -> Any:
            calls.append(1)
            return rule(*a, **k)
        return wrapped

    # Cases named after the primitive first; stop after a few that exercise the rule.
    order = sorted(GRADS, key=lambda p: prim.name not in p.values[0].name)
    hits = 0
    fast_vjp_rules[prim] = tuple(counting(r) for r in rules)
    eager_vjp._backward_cache.pop(prim, None)
    try:
        for param in order:
            case, i = param.values
            calls.clear()
            if _tape_vs_general(case, i) and calls:
                hits += 1
                if hits == 4:
                    break
    finally:
        fast_vjp_rules[prim] = rules
        eager_vjp._backward_cache.pop(prim, None)
    assert hits, f"no op-table case runs the fast VJP rule of {prim.name}"


JIT = [pytest.param(c, i, id=f"{c.name}-{i}") for c in CASES if c.jit
       for i in range(len(c.args))]


@pytest.mark.parametrize("case,i", JIT)
def test_jit_matches_eager(case: OpCase, i: int) -> None:
    """funcgrad.jit(fn) gives eager fn's values and dtypes, on the first and a cached call."""
    args = dev(case.args[i])
    want = case.fn(*args)
    jitted = funcgrad.jit(case.fn)
    jitted.clear_cache()  # jit(case.fn) of the case's other inputs shares its traces
    for _ in range(2):
        got = jitted(*args)
        check_device(got)
        assert_allclose(got, want, case.rtol, case.atol, check_dtype=True,
                        err_msg=f"{case.name}: jit differs from eager")
    assert jitted.trace_count == 1
