"""funcgrad.scipy.stats.mode / rankdata / sem against scipy.stats: every method, axis,
keepdims and nan_policy, integer / float32 / float64 data with ties and nans; under jit and
vmap; sem's gradient; the errors."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev, expected_fp_warnings, host

import funcgrad
import funcgrad.scipy.stats as fst
from funcgrad.test_util import check_grads

st = pytest.importorskip("scipy.stats")
pytestmark = expected_fp_warnings

_RNG = np.random.default_rng(1)
_INT = _RNG.integers(0, 4, size=(3, 4, 5))
_NAN = _INT.astype(float)
_NAN[1, 2, 3] = np.nan
_NAN[0, 0, :] = np.nan
DATA = {
    "int": _INT, "f64": _INT.astype(float), "f32": _INT.astype(np.float32), "nan": _NAN,
    "1d": np.array([3, 1, 1, 3]), "1d_nan": np.array([1.0, np.nan, np.nan, 2.0]),
    "empty_axis": np.ones((2, 0)),
}


def _axes(a):
    return [None, 0, -1] + ([1] if a.ndim > 1 else [])


@pytest.mark.parametrize("name", sorted(DATA))
@pytest.mark.parametrize("nan_policy", ["propagate", "omit"])
def test_mode_as_scipy(name, nan_policy):
    a = DATA[name]
    for axis in _axes(a):
        if a.size == 0 and axis is None:
            continue
        for keepdims in (False, True):
            want = st.mode(a, axis=axis, keepdims=keepdims, nan_policy=nan_policy)
            got = fst.mode(dev(a), axis=axis, keepdims=keepdims, nan_policy=nan_policy)
            msg = f"{name} axis={axis} keepdims={keepdims}"
            assert_allclose(got.mode, np.asarray(want.mode), err_msg=msg)
            # SciPy's counts turn float64 when an omitted slice is all nan (before 1.18): a
            # data-dependent dtype funcgrad does not copy (its counts are int64). Empty
            # input: SciPy 1.18 gives int64 counts unless the result is a scalar (float
            # 0.0), earlier SciPy float counts: funcgrad follows 1.18 on every SciPy.
            assert_allclose(got.count, np.asarray(want.count), err_msg=msg,
                            check_dtype=nan_policy == "propagate" and a.size > 0)
            if a.size == 0:
                want_dtype = np.int64 if np.ndim(want.count) else np.float64
                assert np.asarray(host(got.count)).dtype == want_dtype, msg


@pytest.mark.parametrize("name", sorted(DATA))
@pytest.mark.parametrize("method", ["average", "min", "max", "dense", "ordinal"])
@pytest.mark.parametrize("nan_policy", ["propagate", "omit"])
def test_rankdata_as_scipy(name, method, nan_policy):
    a = DATA[name]
    for axis in _axes(a):
        want = st.rankdata(a, method, axis=axis, nan_policy=nan_policy).astype(np.float64)
        got = fst.rankdata(dev(a), method, axis=axis, nan_policy=nan_policy)
        assert_allclose(got, want, err_msg=f"{name} axis={axis}")


@pytest.mark.parametrize("name", sorted(DATA))
@pytest.mark.parametrize("nan_policy", ["propagate", "omit"])
def test_sem_as_scipy(name, nan_policy):
    a = DATA[name]
    for axis in _axes(a):
        for ddof in (0, 1):
            for keepdims in (False, True):
                want = st.sem(a, axis=axis, ddof=ddof, keepdims=keepdims, nan_policy=nan_policy)
                got = fst.sem(dev(a), axis=axis, ddof=ddof, keepdims=keepdims,
                              nan_policy=nan_policy)
                assert_allclose(got, np.asarray(want), rtol=1e-6 if a.dtype == np.float32
                                else 1e-12, err_msg=f"{name} axis={axis} ddof={ddof}")


def test_scalar_and_empty_inputs_as_scipy():
    assert_allclose(fst.rankdata(dev(np.array(5.0))), st.rankdata(5.0))
    assert fst.rankdata(dev(np.zeros(0))).shape == (0,)
    res = fst.mode(dev(np.zeros(0)))
    assert np.isnan(float(res.mode)) and float(res.count) == 0


def test_under_jit_and_vmap():
    a = DATA["f64"][0]
    assert_allclose(funcgrad.jit(lambda x: fst.rankdata(x, axis=1))(dev(a)),
                    st.rankdata(a, axis=1))
    got = funcgrad.vmap(lambda x: fst.mode(x).mode)(dev(DATA["f64"]))
    assert_allclose(got, np.stack([st.mode(x).mode for x in DATA["f64"]]))
    got = funcgrad.jit(funcgrad.vmap(lambda x: fst.sem(x, axis=None)))(dev(DATA["f64"]))
    assert_allclose(got, np.array([st.sem(x, axis=None) for x in DATA["f64"]]), rtol=1e-12)


def test_sem_gradient():
    check_grads(lambda x: fst.sem(x, axis=0), (dev(_RNG.normal(size=(5, 2))),), order=2)
    check_grads(lambda x: fst.sem(x, nan_policy="omit"), (dev(_RNG.normal(size=4)),), order=1)


def test_ranks_and_modes_have_zero_derivative():
    g = funcgrad.grad(lambda x: fst.rankdata(x).sum() + fst.mode(x).mode)(dev(np.array([
        2.0, 1.0, 2.0])))
    assert_allclose(g, np.zeros(3))


def test_errors():
    with pytest.raises(ValueError, match="nan values"):
        fst.rankdata(dev(DATA["nan"]), nan_policy="raise")
    with pytest.raises(ValueError, match="nan values"):
        fst.sem(dev(DATA["nan"]), nan_policy="raise")
    with pytest.raises(ValueError, match="concrete"):
        funcgrad.jit(lambda x: fst.mode(x, nan_policy="raise"))(dev(DATA["f64"]))
    with pytest.raises(ValueError, match="nan_policy"):
        fst.mode(dev(DATA["f64"]), nan_policy="ignore")
    with pytest.raises(ValueError, match="out of bounds"):
        fst.mode(dev(DATA["f64"]), axis=3)
    with pytest.raises(ValueError, match="unknown method"):
        fst.rankdata(dev(DATA["f64"]), "foo")
