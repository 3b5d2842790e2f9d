"""jet on every op-table case: order 4 against nested jvp along the same curve, eagerly and
under jit (the Taylor rules of every primitive the op table reaches)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from helpers import OpCase, dev, float_argnums, host

import funcgrad
from tests.funcgrad.ops.test_op_table import CASES, _diff_fn

ORDER = 4
JET = [pytest.param(c, id=c.name) for c in CASES
       if c.order != 0 and c.grad_args != [] and (c.grad_args or c.args)
       and float_argnums((c.grad_args or c.args)[0])]


def _dtype(a: Any) -> np.dtype:
    return np.asarray(host(a)).dtype


def _nested_jvp_coefficients(f, xs: tuple, series: list[list[Any]], order: int) -> list:
    """Normalized coefficients of t -> f(x(t)) by nesting jvp (the reference)."""
    import math

    import funcgrad.numpy as fnp

    def curve(t):
        return f(*[x + sum(s[k - 1] * t ** k for k in range(1, order + 1))
                   for x, s in zip(xs, series)])

    def nth(g, n):
        if n == 0:
            return g
        inner = nth(g, n - 1)
        return lambda t: funcgrad.jvp(inner, (t,), (fnp.asarray(1.0),))[1]

    def scaled(leaf, k):
        leaf = np.asarray(host(leaf))
        return leaf / math.factorial(k) if leaf.dtype.kind in "fc" else None

    per_k = [[scaled(leaf, k) for leaf in
              funcgrad.tree_util.tree_leaves(nth(curve, k)(fnp.asarray(0.0)))]
             for k in range(1, order + 1)]
    return [[per_k[k][i] for k in range(order)] for i in range(len(per_k[0]))]


@pytest.mark.parametrize("case", JET)
def test_jet_matches_nested_jvp(case: OpCase) -> None:
    args = (case.grad_args or case.args)[0]
    f, diff_args = _diff_fn(case, args)
    if not diff_args:
        pytest.skip("no differentiable argument")
    rng = np.random.default_rng(1)
    series = [[dev((0.3 * rng.standard_normal(np.shape(host(a)))).astype(_dtype(a)))
               for _ in range(ORDER)] for a in diff_args]
    if any(_dtype(a).kind == "c" for a in diff_args):
        pytest.skip("complex curves: nested jvp reference is holomorphic-only")
    want = _nested_jvp_coefficients(f, diff_args, series, ORDER)
    leaves = funcgrad.tree_util.tree_leaves
    for fun in (f, funcgrad.jit(f)):
        try:
            _, ys = funcgrad.jet(fun, diff_args, series, factorial_scaled=False)
        except funcgrad.ConcretizationError:
            assert fun is not f  # value-dependent shapes: eager only
            continue
        got = leaves(ys)
        assert len(got) == ORDER * len(want)
        for i, w_leaf in enumerate(want):
            for k in range(ORDER):
                g, w = np.asarray(host(got[i * ORDER + k])), w_leaf[k]
                if w is None:
                    continue
                scale = max(1.0, float(np.max(np.abs(w))) if w.size else 1.0)
                low = any(_dtype(a) in (np.float32, np.complex64)
                          for a in (*diff_args, g))
                tol = 1e-4 if low else 1e-8
                np.testing.assert_allclose(g, w, rtol=tol, atol=tol * scale,
                                           err_msg=f"{case.name}: output {i}, order {k + 1}")
