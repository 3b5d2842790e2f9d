"""``funcgrad_nn.cdist`` (``torch.cdist``) against PyTorch fixtures made by
``fixtures/make_cdist_fixtures.py``: every ``p`` and compute mode, broadcast batch
dimensions, coincident rows and tied largest differences (where PyTorch's gradients are
its own choices), eagerly and under jit; then PyTorch's errors."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import funcgrad
import funcgrad_nn as nn
from tests.helpers import dev, host

HERE = pathlib.Path(__file__).parent / "fixtures" / "cdist"
CASES = json.loads((HERE / "cases.json").read_text())["cases"]
DATA = np.load(HERE / "cdist.npz")


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_pytorch(name, jit):
    case = CASES[name]
    rec = {k: DATA[f"{name}/{k}"] for k in ("x1", "x2", "ct", "y", "g1", "g2")}

    def fn(a, b):
        return nn.cdist(a, b, p=case["p"], compute_mode=case["mode"])

    out, pullback = funcgrad.vjp(funcgrad.jit(fn) if jit else fn, dev(rec["x1"]),
                                 dev(rec["x2"]))
    # Through the matrix product a coincident pair's squared distance is a rounding residue
    # (~1e-16, its root ~1e-8) whose value depends on the product's summation order.
    by_product = case["p"] == 2 and (case["mode"] == "use_mm_for_euclid_dist" or (
        case["mode"] == "use_mm_for_euclid_dist_if_necessary" and max(out.shape[-2:]) > 25))
    atol = 1e-7 if by_product else 1e-12
    np.testing.assert_allclose(host(out), rec["y"], rtol=1e-10, atol=atol)
    g1, g2 = pullback(dev(rec["ct"]))
    np.testing.assert_allclose(host(g1), rec["g1"], rtol=1e-9, atol=atol)
    np.testing.assert_allclose(host(g2), rec["g2"], rtol=1e-9, atol=atol)


def test_float32_keeps_dtype_and_self_distance_is_zero():
    x = dev(np.random.default_rng(0).standard_normal((30, 3)).astype(np.float32))
    d = nn.cdist(x, x)  # 30 rows: the matrix product; its diagonal is clamped at 0
    assert d.dtype == np.float32 and d.shape == (30, 30)
    assert np.all(host(d) >= 0)
    np.testing.assert_allclose(np.diag(host(nn.cdist(x, x, compute_mode=
                                                     "donot_use_mm_for_euclid_dist"))), 0)


def test_vmap_and_empty():
    rng = np.random.default_rng(1)
    a, b = dev(rng.standard_normal((2, 3, 4))), dev(rng.standard_normal((2, 5, 4)))
    np.testing.assert_allclose(host(funcgrad.vmap(nn.cdist)(a, b)), host(nn.cdist(a, b)))
    # no columns: all distances are 0; no rows: an empty result (PyTorch's)
    assert host(nn.cdist(dev(np.zeros((3, 0))), dev(np.zeros((2, 0))), p=np.inf)).tolist() \
        == [[0.0, 0.0]] * 3
    assert nn.cdist(dev(np.zeros((0, 3))), dev(np.zeros((2, 3))), p=np.inf).shape == (0, 2)


@pytest.mark.parametrize("x1, x2, kw, match", [
    ((3,), (2, 3), {}, "at least 2D tensors, X1 got: 1D"),
    ((3, 3), (3,), {}, "at least 2D tensors, X2 got: 1D"),
    ((3, 4), (2, 3), {}, "same number of columns. X1: 4 X2: 3"),
    ((2, 3, 4), (3, 2, 4), {}, "batch dimensions"),
    ((3, 4), (2, 4), {"p": -1}, "non-negative p values"),
])
def test_errors(x1, x2, kw, match):
    with pytest.raises(RuntimeError, match=match):
        nn.cdist(dev(np.zeros(x1)), dev(np.zeros(x2)), **kw)


def test_dtype_and_mode_errors():
    a = dev(np.zeros((2, 3)))
    with pytest.raises(RuntimeError, match="floating-point dtypes, X1 got: int64"):
        nn.cdist(dev(np.zeros((2, 3), np.int64)), a)
    with pytest.raises(RuntimeError, match="same dtype"):
        nn.cdist(a, dev(np.zeros((2, 3), np.float32)))
    with pytest.raises(ValueError, match="foo is not a valid value for compute_mode"):
        nn.cdist(a, a, compute_mode="foo")
