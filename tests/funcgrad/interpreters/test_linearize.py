"""The linearize interpreter (funcgrad.interpreters.linearize): the primal runs once, the
tangent computation is staged into a linear jaxpr that can be replayed."""

from __future__ import annotations

import numpy as np
from helpers import assert_allclose, dev, host

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.interpreters.jvp import Zero
from funcgrad.interpreters.linearize import eval_linear, linearize_flat


def test_primal_runs_once_and_the_tangent_map_replays() -> None:
    calls = []

    def f(a, b):
        calls.append(1)
        return [fnp.sin(a) * b, b + 1.0]

    x, c = dev(np.array([0.3, 0.9])), dev(np.array([2.0, 3.0]))
    res = linearize_flat(f, [x, c])
    assert len(calls) == 1
    assert_allclose(res.primals_out[0], np.sin(host(x)) * host(c))
    t1 = eval_linear(res, [dev(np.ones(2)), dev(np.zeros(2))])
    t2 = eval_linear(res, [dev(2 * np.ones(2)), dev(np.zeros(2))])
    assert len(calls) == 1  # replaying never reruns f
    assert_allclose(t1[0], np.cos(host(x)) * host(c))
    assert_allclose(t2[0], 2 * host(t1[0]))  # linear in the tangents


def test_outputs_without_derivative_are_marked_zero() -> None:
    res = linearize_flat(lambda a: [a * 2.0, fnp.floor(a), fnp.ones(2)], [np.ones(2)])
    assert res.zero_outputs == [False, True, True]
    outs = eval_linear(res, [np.ones(2)])
    assert type(outs[1]) is Zero and type(outs[2]) is Zero


def test_integer_inputs_are_not_linearized() -> None:
    res = linearize_flat(lambda a, n: [a * n], [np.ones(2), np.arange(2)])
    assert res.in_tangent_avals[1].dtype == funcgrad.float0
    assert_allclose(eval_linear(res, [np.ones(2), np.zeros(2, funcgrad.float0)])[0],
                    np.arange(2.0))


def test_public_linearize_agrees_with_jvp() -> None:
    f = lambda v: fnp.sum(fnp.tanh(v) ** 2)  # noqa: E731
    x, t = np.array([0.1, -0.4, 2.0]), np.array([1.0, 0.5, -1.0])
    y, f_jvp = funcgrad.linearize(f, x)
    y2, dy = funcgrad.jvp(f, (x,), (t,))
    assert_allclose(y, y2)
    assert_allclose(f_jvp(t), dy)
