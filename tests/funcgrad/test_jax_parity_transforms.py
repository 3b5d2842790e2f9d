"""Transformations and pytree utilities compared with JAX 0.10.2 (x64).

Expected values were recorded from JAX (``jax.config.update("jax_enable_x64", True)``) and
are written here as literals: CI never imports JAX. Each test names the JAX call it mirrors.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import dev, host

import funcgrad
import funcgrad.numpy as fnp


def _x() -> np.ndarray:
    return dev(np.array([1.0, 2.0, 3.0]))


# -- stop_gradient of a pytree ------------------------------------------------------------------


def test_stop_gradient_cuts_every_leaf_of_a_pytree() -> None:
    # jax.grad(lambda a: jnp.sum(jax.lax.stop_gradient({"u": a})["u"] * a))(x) == x
    g = funcgrad.grad(lambda a: fnp.sum(funcgrad.stop_gradient({"u": a})["u"] * a))(_x())
    np.testing.assert_allclose(host(g), [1.0, 2.0, 3.0])
    out = funcgrad.stop_gradient({"u": _x(), "n": None, "t": (1.0,)})
    assert sorted(out) == ["n", "t", "u"] and out["n"] is None


# -- Jacobian blocks of integer inputs and outputs ----------------------------------------------


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_jacrev_allow_int_block_is_zeros_of_the_integer_dtype(dtype) -> None:
    # jax.jacrev(lambda a, b: a * b, (0, 1), allow_int=True)(arange(3, dtype), x)
    ja, jb = funcgrad.jacrev(lambda a, b: a * b, (0, 1), allow_int=True)(
        dev(np.arange(3, dtype=dtype)), _x())
    assert ja.dtype == dtype and ja.shape == (3, 3) and not host(ja).any()
    np.testing.assert_allclose(host(jb), np.diag([0.0, 1.0, 2.0]))


@pytest.mark.parametrize("jac", [funcgrad.jacfwd, funcgrad.jacrev])
def test_jacobian_of_an_integer_output_is_zeros_of_its_dtype(jac) -> None:
    # jax.jacfwd(lambda z: (z, jnp.arange(2)))(x)[1]: int64 zeros of shape (2, 3); jacrev has no
    # integer outputs (an error), so it gets an integer-valued float output instead.
    if jac is funcgrad.jacfwd:
        _, j_int = jac(lambda z: (z, (z > 1).astype(fnp.int32)))(_x())
        assert j_int.dtype == np.int32 and j_int.shape == (3, 3) and not host(j_int).any()
    else:
        with pytest.raises(TypeError, match="real-valued"):
            jac(lambda z: (z > 1).astype(fnp.int32))(_x())


def test_jacobian_of_a_boolean_input_stays_float0() -> None:
    # JAX cannot build this block (it fails casting float0 to bool); ours is float0 zeros.
    jb, _ = funcgrad.jacrev(lambda a, b: b * 2.0, (0, 1), allow_int=True)(
        np.array([True, False]), _x())
    assert jb.dtype == funcgrad.float0 and jb.shape == (3, 2)
