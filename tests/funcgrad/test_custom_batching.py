"""custom_vmap / sequential_vmap (jax.custom_batching): the rule is used where vmap batches a
call, with JAX 0.10.2's arguments (axis_size, in_batched) and results recorded here."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import dev, host

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.custom_batching import custom_vmap, sequential_vmap


def _scaled_mul(calls: list) -> custom_vmap:
    @custom_vmap
    def f(x, y):
        return x * y

    @f.def_vmap
    def rule(axis_size, in_batched, xs, ys):
        calls.append((axis_size, in_batched, np.shape(xs), np.shape(ys)))
        return xs * ys * 10.0, True  # deliberately not f's own batching: shows the rule ran

    return f


def test_the_rule_batches_as_jax() -> None:
    calls: list = []
    f = _scaled_mul(calls)
    o = dev(np.ones(3))
    np.testing.assert_allclose(host(funcgrad.vmap(f)(o, o)), [10.0] * 3)  # JAX: [10. 10. 10.]
    assert calls == [(3, [True, True], (3,), (3,))]
    np.testing.assert_allclose(host(funcgrad.vmap(f, in_axes=(0, None))(o, 2.0)), [20.0] * 3)
    assert calls[-1] == (3, [True, False], (3,), ())
    # nested: the innermost vmap applies the rule, the outer one batches it (JAX: axis_size 3)
    calls.clear()
    out = funcgrad.vmap(funcgrad.vmap(f))(dev(np.ones((2, 3))), dev(np.ones((2, 3))))
    np.testing.assert_allclose(host(out), np.full((2, 3), 10.0))
    assert [c[0] for c in calls] == [3]
    np.testing.assert_allclose(host(funcgrad.jit(funcgrad.vmap(f))(o, o)), [10.0] * 3)
    # a call staged first and batched afterwards still uses the rule (JAX: [10. 10. 10.])
    np.testing.assert_allclose(host(funcgrad.vmap(funcgrad.jit(f))(o, o)), [10.0] * 3)
    scanned = funcgrad.vmap(lambda a: funcgrad.lax.scan(
        lambda c, x: (c + f(x, a), None), 0.0, dev(np.ones(2)))[0])(o)
    np.testing.assert_allclose(host(scanned), [20.0] * 3)
    assert "custom_vmap_call" in str(funcgrad.make_jaxpr(f)(2.0, 3.0))
    # the batch axis goes first for the rule (in_axes=1 moves it)
    out = funcgrad.vmap(f, in_axes=(1, None))(dev(np.ones((2, 3))), 2.0)
    assert host(out).shape == (3, 2) and calls[-1][2] == (3, 2)


def test_differentiation_as_jax() -> None:
    f = _scaled_mul([])
    o = dev(np.ones(3))
    # grad of the vmap differentiates the rule (JAX: [10. 10. 10.])
    g = funcgrad.grad(lambda a: funcgrad.vmap(f)(a, o).sum())(o)
    np.testing.assert_allclose(host(g), [10.0] * 3)
    assert float(f(2.0, 3.0)) == 6.0
    # Our choice: grad of the function itself differentiates it as written (JAX refuses).
    assert float(funcgrad.grad(f)(2.0, 3.0)) == 3.0
    g = funcgrad.grad(lambda a: funcgrad.vmap(funcgrad.jit(f))(a, o).sum())(o)
    np.testing.assert_allclose(host(g), [10.0] * 3)


def test_a_custom_vmap_closing_over_a_traced_value() -> None:
    o = dev(np.ones(3))

    def outer(w):
        g = custom_vmap(lambda x: x * w)
        g.def_vmap(lambda n, b, xs: (xs * w * 100.0, True))
        return funcgrad.vmap(g)(o).sum()

    assert float(outer(2.0)) == 600.0
    assert float(funcgrad.grad(outer)(2.0)) == 300.0  # the rule, differentiated


def test_rule_output_checks() -> None:
    @custom_vmap
    def f(x):
        return x

    with pytest.raises(AttributeError, match="No batching rule"):
        funcgrad.vmap(f)(dev(np.ones(2)))
    f.def_vmap(lambda n, b, xs: xs)
    with pytest.raises(TypeError, match="must return a pair"):
        funcgrad.vmap(f)(dev(np.ones(2)))
    f.def_vmap(lambda n, b, xs: (xs[0], True))
    with pytest.raises(ValueError, match="no leading batch axis"):
        funcgrad.vmap(f)(dev(np.ones(2)))
    f.def_vmap(lambda n, b, xs: (fnp.sum(xs), False))  # an unbatched output: not per example
    assert float(funcgrad.vmap(f, out_axes=None)(dev(np.ones(2)))) == 2.0


def test_sequential_vmap_as_jax() -> None:
    s = sequential_vmap(lambda x, d: fnp.sum(x) * d["k"])
    out = funcgrad.vmap(s, in_axes=(0, None))(dev(np.ones((3, 2))), {"k": 2.0})
    np.testing.assert_allclose(host(out), [4.0, 4.0, 4.0])
    out = funcgrad.vmap(s, in_axes=(None, {"k": 0}))(dev(np.ones(2)), {"k": dev(np.arange(3.0))})
    np.testing.assert_allclose(host(out), [0.0, 2.0, 4.0])
    g = funcgrad.grad(lambda a: funcgrad.vmap(s, in_axes=(0, None))(a, {"k": 2.0}).sum())(
        dev(np.ones((3, 2))))
    np.testing.assert_allclose(host(g), np.full((3, 2), 2.0))


def test_custom_vjp_over_custom_vmap_forwards_def_vmap() -> None:
    # JAX 0.10.2's custom_vmap docstring example: custom_vjp(custom_vmap(f)).def_vmap sets the
    # inner rule (def* attributes reach the wrapped custom function); values recorded from JAX
    fnp = funcgrad.numpy

    @funcgrad.custom_vjp
    @custom_vmap
    def f(x, y):
        return fnp.sin(x) * y

    @f.def_vmap
    def f_vmap_rule(axis_size, in_batched, xs, ys):
        return fnp.cos(xs) * ys, True

    f.defvjp(lambda x, y: (f(x, y), (fnp.cos(x), fnp.sin(x), y)),
             lambda res, g: (res[0] * g * res[2], res[1] * g))
    assert host(funcgrad.vmap(f)(dev(np.zeros(3)), dev(np.ones(3)))).tolist() == [1.0] * 3
    assert float(host(funcgrad.grad(f)(dev(np.zeros(())), dev(np.ones(()))))) == 1.0
    with pytest.raises(AttributeError, match="no attribute 'nonexistent'"):
        f.nonexistent  # noqa: B018
