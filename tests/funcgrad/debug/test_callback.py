"""debug.callback / debug.print / call_hook: run with concrete values when the computation
runs, eagerly, under jit (every call), under vmap (per example), never removed by DCE."""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.debug import call_hook, callback


def test_callback_eager_and_every_jit_call():
    seen = []

    def f(x):
        callback(lambda v: seen.append(np.asarray(v).tolist()), x * 2)
        return x + 1

    f(np.array([1.0]))
    jf = funcgrad.jit(f)
    jf(np.array([2.0]))
    jf(np.array([3.0]))
    assert seen == [[2.0], [4.0], [6.0]]


def test_callback_survives_dce_and_grad():
    seen = []

    def f(x):
        callback(lambda v: seen.append(float(v)), x)   # result unused
        return x * x

    g = funcgrad.jit(funcgrad.grad(f))(3.0)
    assert float(g) == 6.0 and seen == [3.0]


def test_callback_under_vmap_per_example():
    seen = []
    funcgrad.vmap(lambda x: callback(lambda v: seen.append(float(v)), x) or x)(
        np.array([1.0, 2.0, 3.0]))
    assert seen == [1.0, 2.0, 3.0]


def test_print(capsys):
    funcgrad.jit(lambda x: funcgrad.debug.print("x={} y={y}", x, y=x * 2) or x)(np.array(1.5))
    assert capsys.readouterr().out == "x=1.5 y=3.0\n"


def test_call_hook_replaces_values_eager_and_jit():
    assert call_hook(lambda g: g * 2, np.array([1.0]))[0].tolist() == [2.0]
    f = funcgrad.jit(lambda x: call_hook(lambda g: g * 3, x)[0] + 1)
    assert f(np.array([1.0])).tolist() == [4.0]
    keep = funcgrad.jit(lambda x: call_hook(lambda g: None, x)[0])
    assert keep(np.array([5.0])).tolist() == [5.0]


def test_call_hook_bad_results():
    with pytest.raises(ValueError, match="shape"):
        call_hook(lambda g: g[:1], np.ones(3), name="myhook")
    with pytest.raises(TypeError, match="myhook returned 2 values; expected 1"):
        call_hook(lambda g: (g, g), np.ones(3), name="myhook")
    with pytest.raises(ValueError, match="shape"):
        funcgrad.jit(lambda x: call_hook(lambda g: g[:1], x)[0])(np.ones(3))


def test_call_hook_vmap():
    out = funcgrad.vmap(lambda x: call_hook(lambda g: g * fnp.sum(g), x)[0])(
        np.array([[1.0, 2.0], [3.0, 4.0]]))
    np.testing.assert_allclose(out, [[3.0, 6.0], [21.0, 28.0]])
