"""Every primitive has a Taylor rule: its own, a generic one, or the documented fallback."""

from __future__ import annotations

import pathlib
import re

import numpy as np

import funcgrad
from funcgrad.interpreters.taylor import rule_kind
from tests.funcgrad.test_rule_coverage import _library_primitives
from tests.helpers import dev, host


def assert_close(actual, desired, **kw):
    """assert_allclose on host copies (results live on the test device)."""
    to_host = lambda v: np.asarray(host(v)) if not isinstance(v, list) else np.asarray(
        [np.asarray(host(e)) for e in v])
    np.testing.assert_allclose(to_host(actual), to_host(desired), **kw)


DOC = pathlib.Path(__file__).resolve().parents[3] / "docs" / "taylor.md"


def test_fallback_list_is_documented_and_short():
    kinds = {p.name: rule_kind(p) for p in _library_primitives()}
    fallback = {n for n, k in kinds.items() if k.startswith("fallback")}
    text = DOC.read_text().split("Fallback primitives", 1)[1].split("\n\n", 1)[0]
    documented = set(re.findall(r"([a-z_0-9]+)(?:,|`\.)", text.split(":", 1)[1]))
    assert fallback == documented, (sorted(fallback - documented), sorted(documented - fallback))
    assert len(fallback) < 0.3 * len(kinds)


def test_cost_grows_slowly_in_the_order():
    # the traced Taylor program of a 20-op chain grows polynomially in k, not as 2^k
    f = lambda x: funcgrad.numpy.sin(funcgrad.numpy.exp(funcgrad.numpy.tanh(x) * x) + x)
    sizes = [len(funcgrad.make_jaxpr(funcgrad.derivatives(f, k))(0.3).jaxpr.eqns)
             for k in (2, 4, 8)]
    assert sizes[2] < 20 * sizes[0]  # k^2 growth: 16x from k=2 to 8; nesting jvp: ~64x
    assert_close(funcgrad.derivatives(f, 8)(0.3)[:3],
                               [float(f(0.3)), float(funcgrad.grad(f)(0.3)),
                                float(funcgrad.grad(funcgrad.grad(f))(0.3))], rtol=1e-10)


def test_constant_operands_of_linear_rules_are_zero_not_x_times_zero():
    # pad's -inf fill is a constant: its coefficients are 0, not -inf * 0 = NaN.
    f = lambda x: funcgrad.numpy.pad(x, (1, 1), constant_values=-np.inf)  # noqa: E731
    x, ones = dev(np.array([1.0, 2.0])), dev(np.ones(2))
    for fun in (f, funcgrad.jit(f)):
        y0, ys = funcgrad.jet(fun, (x,), ([ones, ones],))
        assert_close(y0, [-np.inf, 1.0, 2.0, -np.inf])
        assert_close(ys, [[0.0, 1.0, 1.0, 0.0]] * 2)
