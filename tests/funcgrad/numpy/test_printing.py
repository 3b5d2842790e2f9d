"""funcgrad.numpy's printing names (jnp.printoptions, set_printoptions, array_str,
array_repr): NumPy's options govern funcgrad's arrays; strings of arrays on any device;
traced values refuse, as JAX's. Expected strings are NumPy's/JAX's (same digits)."""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.errors import TracerArrayConversionError
from tests.helpers import dev


def test_printoptions_govern_funcgrad_arrays() -> None:
    x = dev(np.array([1.123456789, 2.0]))
    # JAX: with jnp.printoptions(precision=2): str(x) == '[1.12 2.  ]'
    with fnp.printoptions(precision=2):
        assert fnp.array_str(x) == "[1.12 2.  ]"
        assert fnp.get_printoptions()["precision"] == 2
    assert fnp.get_printoptions()["precision"] == 8
    old = fnp.get_printoptions()
    try:
        fnp.set_printoptions(precision=1)
        assert fnp.array_str(x) == "[1.1 2. ]"
    finally:
        fnp.set_printoptions(**old)


def test_array_str_and_repr() -> None:
    x = dev(np.array([1.123456789, 2.0]))
    assert fnp.array_str(x, precision=3) == "[1.123 2.   ]"  # jnp.array_str
    assert fnp.array_repr(x, precision=3) == "array([1.123, 2.   ])"
    assert fnp.array_str(dev(np.array([1e-9, 1.0])), suppress_small=True) == "[0. 1.]"
    assert fnp.array_str(3.5) == "3.5"


def test_traced_values_have_no_string() -> None:
    def f(x):
        fnp.array_str(x)
        return x

    with pytest.raises(TracerArrayConversionError):
        funcgrad.jit(f)(dev(np.ones(2)))
