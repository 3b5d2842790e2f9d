"""Pointwise functions and losses of ``funcgrad_nn.functional`` against PyTorch fixtures.

``fixtures/make_pointwise_loss_fixtures.py`` (run where torch is installed) recorded each case's
inputs, a cotangent, PyTorch's output and the gradients of ``sum(output * cotangent)``; the
cases are the edges where a plain formula differs from PyTorch: derivatives at kinks, NaN and
inf inputs, saturated probabilities, every target ignored, broadcast and integer targets and
``dtype=``. Values, dtypes, non-finite positions and gradients must agree: 1e-10 relative in
float64, 1e-5 in float32.
"""

import functools
import json
import math
import pathlib
import warnings

import numpy as np
import pytest
from helpers import dev, expected_fp_warnings

import funcgrad
import funcgrad.numpy as fnp
from funcgrad_nn import functional as F

HERE = pathlib.Path(__file__).parent / "fixtures" / "pointwise_losses"
RTOL = {"f64": 1e-10, "f32": 1e-5}


@functools.cache
def _fixtures():
    meta = json.loads((HERE / "cases.json").read_text())
    with np.load(HERE / "arrays.npz") as z:
        meta["flat"] = {k: z[k] for k in z.files}
    return meta


def _arr(name):
    meta = _fixtures()
    member, off, shape, dtype = meta["index"][name]
    return meta["flat"][member][off:off + math.prod(shape)].reshape(shape).astype(dtype)


def _close(got, want, key, what):
    got = np.asarray(funcgrad.to_numpy(got))
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=what + " (NaNs)")
    np.testing.assert_array_equal(np.isinf(got) * np.sign(got), np.isinf(want) * np.sign(want),
                                  err_msg=what + " (infinities)")
    finite = np.isfinite(want)
    scale = np.abs(want[finite]).max() if finite.any() else 1.0
    np.testing.assert_allclose(got[finite], want[finite], rtol=RTOL[key],
                               atol=RTOL[key] * scale, err_msg=what)


def _resolve(v, arrays):
    if isinstance(v, dict) and "a" in v:
        return arrays[v["a"]]
    if isinstance(v, dict) and "dtype" in v:
        return np.dtype(v["dtype"])
    return v


@expected_fp_warnings
@pytest.mark.parametrize("key", ["f64", "f32"])
@pytest.mark.parametrize("case", _fixtures()["cases"], ids=lambda c: c["name"])
def test_matches_pytorch(case, key):
    base = f"{case['name']}/{key}"
    arrays = dev({k: _arr(f"{base}/in/{k}") for k in case["arrays"]})
    fn = getattr(F, case["fn"])

    def call(*diff):
        a = dict(arrays, **dict(zip(case["grad"], diff)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # the broadcast-target warning
            return fn(*[_resolve(v, a) for v in case["args"]],
                      **{k: _resolve(v, a) for k, v in case["kwargs"].items()})

    _close(call(), _arr(f"{base}/out"), key, f"{case['name']} output")
    if not case["grad"]:
        return
    cot = dev(_arr(f"{base}/cot"))
    grads = funcgrad.grad(lambda *d: fnp.sum(call(*d) * cot), argnums=tuple(
        range(len(case["grad"]))))(*[arrays[k] for k in case["grad"]])
    for k, g in zip(case["grad"], grads):
        _close(g, _arr(f"{base}/grad/{k}"), key, f"{case['name']} d/d{k}")
