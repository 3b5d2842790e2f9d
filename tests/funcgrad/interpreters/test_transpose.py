"""The transpose interpreter (funcgrad.interpreters.transpose): cotangents of linear jaxprs,
and reverse mode as linearize then transpose."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.interpreters.jvp import Zero
from funcgrad.interpreters.transpose import UndefinedPrimal, backward_pass, is_undefined, vjp_flat


def test_backward_pass_of_a_linear_jaxpr() -> None:
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    closed = funcgrad.make_jaxpr(lambda v: fnp.matmul(a, v) * 2.0)(np.ones(2))
    arg = UndefinedPrimal(closed.jaxpr.invars[0].aval)
    assert is_undefined(arg) and not is_undefined(np.ones(2))
    (ct,) = backward_pass(closed.jaxpr, closed.consts, [arg], [np.array([1.0, 0.0])])
    assert_allclose(ct, 2.0 * a.T @ np.array([1.0, 0.0]))


def test_unused_inputs_get_symbolic_zero_cotangents() -> None:
    closed = funcgrad.make_jaxpr(lambda u, v: u * 3.0)(np.ones(2), np.ones(2))
    args = [UndefinedPrimal(v.aval) for v in closed.jaxpr.invars]
    cu, cv = backward_pass(closed.jaxpr, closed.consts, args, [np.ones(2)])
    assert_allclose(cu, 3.0 * np.ones(2))
    assert type(cv) is Zero


def test_vjp_flat_is_the_transpose_of_jvp() -> None:
    def f(a, b):
        return [fnp.sin(a) * b, fnp.sum(a * a)]

    x, y = np.array([0.2, 0.7]), np.array([1.5, -1.0])
    outs, f_vjp, _ = vjp_flat(f, [x, y])
    ct = [np.array([1.0, 2.0]), np.array(0.5)]
    gx, gy = f_vjp(ct)
    # <ct, J t> == <J^T ct, t> for a few tangents
    for t in (np.array([1.0, 0.0]), np.array([0.3, -2.0])):
        _, (j0, j1) = funcgrad.jvp(lambda a: tuple(f(a, y)), (x,), (t,))
        assert float(np.dot(ct[0], j0) + ct[1] * j1) == pytest.approx(float(np.dot(gx, t)))
    assert_allclose(gy, ct[0] * np.sin(x))


def test_linear_transpose_refuses_non_linear_functions() -> None:
    with pytest.raises(TypeError, match="not linear"):
        funcgrad.linear_transpose(lambda v: v * v, np.ones(2))(np.ones(2))
