"""Real JAX programs (``jax_programs.py``: the Autodiff Cookbook, custom derivative rules,
pytrees, control flow, stateful training loops, the sharp bits, checkpointing, ...) run with
``import funcgrad as jax`` give JAX 0.10's results (x64): values, dtypes and shapes recorded in
``jax_programs.json`` by ``make_jax_programs_fixtures.py``."""

from __future__ import annotations

import json
import pathlib
import warnings

import numpy as np
import pytest
from helpers import host

import funcgrad
import funcgrad.experimental.checkify  # noqa: F401
import funcgrad.experimental.jet  # noqa: F401
import funcgrad.experimental.ode  # noqa: F401
import funcgrad.experimental.sparse  # noqa: F401
import funcgrad.numpy as fnp
import funcgrad.random as random
import funcgrad.scipy as fsp
import funcgrad.scipy.spatial.transform  # noqa: F401
import funcgrad.tree_util as tu
from funcgrad import lax

from . import jax_programs
from .make_jax_programs_fixtures import flatten

EXPECTED = json.loads((pathlib.Path(__file__).parent / "jax_programs.json").read_text())
NS = {"jax": funcgrad, "jnp": fnp, "lax": lax, "random": random, "tu": tu, "jsp": fsp}


def _expected_array(leaf: dict) -> np.ndarray:
    dtype = np.dtype(leaf["dtype"])
    values = [np.nan if v is None else v for v in leaf["value"]]
    if dtype.kind == "c":
        pairs = np.array(values, dtype=np.float64).reshape(-1, 2)
        return (pairs[:, 0] + 1j * pairs[:, 1]).astype(dtype).reshape(leaf["shape"])
    return np.array(values, dtype=dtype).reshape(leaf["shape"])


def test_every_program_has_reference_values() -> None:
    names = {n for n in vars(jax_programs) if n.startswith("p_")}
    assert names == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_program_matches_jax(name: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NaN/inf on purpose (sharp bits)
        got = flatten(host(getattr(jax_programs, name)(**NS)))
    expected = EXPECTED[name]
    assert len(got) == len(expected), f"{name}: {len(got)} leaves, JAX gives {len(expected)}"
    for i, (g, e) in enumerate(zip(got, expected)):
        where = f"{name}, leaf {i}"
        if "py" in e:
            if isinstance(g, np.ndarray) and g.ndim == 0:
                g = g.item()  # a Python number in JAX may be a 0-d result here
            assert g == e["py"], where
            continue
        want = _expected_array(e)
        g = np.asarray(g)
        assert g.dtype == want.dtype and g.shape == want.shape, (
            f"{where}: {g.dtype}{list(g.shape)}, JAX gives {want.dtype}{list(want.shape)}")
        if want.dtype.kind in "biu":
            np.testing.assert_array_equal(g, want, err_msg=where)
        else:
            tol = 1e-5 if want.dtype in (np.float32, np.complex64) else 1e-9
            np.testing.assert_allclose(g, want, rtol=tol, atol=tol, equal_nan=True,
                                       err_msg=where)
