"""funcgrad.pmap: jax.pmap's interface, run as jit(vmap) (values recorded from JAX 0.10, x64,
on one CPU device: each call's leading axis has size 1 there)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import dev, host

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import lax


def test_collective_and_broadcast_argument() -> None:
    # jax.pmap(lambda x, y: x * y + lax.psum(x, 'i'), axis_name='i', in_axes=(0, None))
    f = funcgrad.pmap(lambda x, y: x * y + lax.psum(x, "i"), axis_name="i", in_axes=(0, None))
    np.testing.assert_allclose(host(f(dev(np.ones((1, 3))), 2.0)), [[3.0, 3.0, 3.0]])


def test_static_broadcasted_argnums() -> None:
    g = funcgrad.pmap(lambda x, n: x ** n, static_broadcasted_argnums=1)
    np.testing.assert_allclose(host(g(dev(np.full((1, 2), 3.0)), 2)), [[9.0, 9.0]])
    with pytest.raises(TypeError, match="unhashable|hashable"):
        g(dev(np.ones((1, 2))), [2])


def test_grad_inside_and_output_tuple() -> None:
    h = funcgrad.pmap(funcgrad.grad(lambda w, x: fnp.sum((w * x) ** 2)), in_axes=(None, 0))
    np.testing.assert_allclose(host(h(dev(np.ones(2)), dev(np.ones((1, 2))))), [[2.0, 2.0]])
    a, s = funcgrad.pmap(lambda x: (x, x.sum()))(dev(np.ones((1, 2))))
    assert a.shape == (1, 2) and host(s).tolist() == [2.0]


def test_larger_axis_matches_vmap() -> None:
    # JAX needs one device per example; funcgrad vectorizes, so any size works.
    x = dev(np.arange(6.0).reshape(3, 2))
    f = lambda v: v / lax.psum(v, "i") + lax.axis_index("i")
    np.testing.assert_allclose(host(funcgrad.pmap(f, "i")(x)),
                               host(funcgrad.vmap(f, axis_name="i")(x)))
    with pytest.raises(ValueError, match="in_axes"):
        funcgrad.pmap(lambda a, b: a + b, in_axes=(0,))(x, x)


def test_static_arguments_must_be_positional_and_errors_name_parameters():
    f = funcgrad.pmap(lambda a, n: a * n, static_broadcasted_argnums=1)
    # JAX 0.10.2's error (funcgrad raised an IndexError)
    with pytest.raises(ValueError, match="must be passed positionally"):
        f(np.ones((2, 2)), n=3)
    with pytest.raises(ValueError, match="argument a of rank 0") as info:
        funcgrad.pmap(lambda a: a * 2)(1.0)
    assert any("pmap" in n for n in getattr(info.value, "__notes__", []))


def test_pmap_result_is_named_after_the_function():
    def step(x):
        "one step"
        return x * 2

    f = funcgrad.pmap(step)  # jax.pmap: ('step', 'one step', step)
    assert (f.__name__, f.__doc__, f.__wrapped__) == ("step", "one step", step)
    np.testing.assert_array_equal(host(f(dev(np.ones((1, 2))))), [[2.0, 2.0]])
