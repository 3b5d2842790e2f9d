"""Fast paths behind the benchmarks agree with the general paths they shortcut.

- vmap over an identity basis (jacfwd / jacrev / hessian) carries a one-hot structure that lets
  ``dot_general``, ``reduce_sum`` and elementwise rules skip multiplying by the identity: the
  results must equal the dense computation (structure disabled), NaN and inf included.
- ``dot_general`` without contraction (per-example outer products) is a broadcasting multiply.
- The eager tape uses ``dot_general``'s transpose rule (it is multilinear).
- Symbolic zeros made from primals compute their abstract value lazily.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.interpreters import batching
from funcgrad.interpreters.jvp import Zero
from tests.helpers import assert_allclose, check_device, dev, host

D = 20  # above batching._MIN_STRUCTURED_SIZE


@pytest.fixture
def dense(monkeypatch: pytest.MonkeyPatch):
    """Run a callable with the identity structure switched off (the reference path)."""

    def run(fn: Any, *args: Any) -> Any:
        with monkeypatch.context() as m:
            m.setattr(batching, "_MIN_STRUCTURED_SIZE", 10**9)
            return fn(*args)

    return run


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def test_one_hot_basis_is_decided_on_shapes() -> None:
    from funcgrad.avals import ShapedArray

    f64 = np.dtype("float64")
    assert batching.one_hot_basis(ShapedArray((D,), f64), D) is not None
    assert batching.one_hot_basis(ShapedArray((4, 5), f64), D) is not None
    assert batching.one_hot_basis(ShapedArray((4,), f64), 4) is None  # small: dense is cheaper
    assert batching.one_hot_basis(ShapedArray((D,), np.dtype("int64")), D) is None
    assert batching.one_hot_basis(ShapedArray((D + 1,), f64), D) is None  # not square


def test_vmap_never_inspects_values(monkeypatch: pytest.MonkeyPatch) -> None:
    """A user's vmap over an identity matrix is an ordinary batch: structure is only ever
    said by jacfwd/jacrev/hessian, so no values are scanned."""
    used: list[str] = []
    orig = batching._process_structured

    def spy(trace: Any, prim: Any, *rest: Any) -> Any:
        used.append(prim.name)
        return orig(trace, prim, *rest)

    monkeypatch.setattr(batching, "_process_structured", spy)
    w = dev(_rng(20).standard_normal((D, D)))
    out = funcgrad.vmap(lambda e: w @ e)(dev(np.eye(D)))
    assert not used
    assert_allclose(out, host(w).T)


def test_structure_materializes_like_the_dense_value() -> None:
    from funcgrad.avals import ShapedArray

    scale = np.arange(1.0, 7.0).reshape(2, 3)
    st = batching.OneHotStructure(ShapedArray((2, 3), np.dtype("float64"), False, "cpu"), scale)
    want = (np.eye(6) * scale.reshape(-1)).reshape(6, 2, 3)
    np.testing.assert_array_equal(st.materialize(0), want)
    np.testing.assert_array_equal(st.materialize(2), np.moveaxis(want, 0, 2))


def _logsumexp(z: Any) -> Any:
    m = funcgrad.stop_gradient(fnp.max(z))
    return fnp.log(fnp.sum(fnp.exp(z - m))) + m


CASES = {
    "tanh_matvec": lambda w, x: fnp.tanh(w @ x),
    "vecmat": lambda w, x: x @ w.T,
    "scaled_then_matvec": lambda w, x: w @ (fnp.sin(x) * 3.0),
    "sum_of_squares_times": lambda w, x: fnp.sum(x * x) * (w @ x),
    "exp_div": lambda w, x: fnp.exp(w @ x) / (1.0 + x[:1]),
    "diagonal_escapes": lambda w, x: fnp.sin(x) * 2.0,
    "reshaped": lambda w, x: fnp.reshape(fnp.cos(x), (4, 5)) * 2.0,
}


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("mode", ["jacfwd", "jacrev"])
def test_jacobians_match_dense(name: str, mode: str, dense: Any) -> None:
    f = CASES[name]
    w = dev(_rng(1).standard_normal((D + 5, D)) / 4)
    x = dev(_rng(2).standard_normal(D))
    jac = getattr(funcgrad, mode)(lambda x: f(w, x))
    got = jac(x)
    check_device(got)
    assert_allclose(got, dense(jac, x), rtol=1e-13, atol=1e-14)


def test_hessian_matches_dense_and_analytic(dense: Any) -> None:
    rng = _rng(3)
    a, b = dev(rng.standard_normal((D, D)) / 4), dev(rng.standard_normal((D, D)) / 4)
    x = dev(rng.standard_normal(D))

    def f(x: Any) -> Any:
        return _logsumexp(a @ x) + 0.5 * (x @ b @ x) + fnp.sum(fnp.sin(x))

    hess = funcgrad.hessian(f)
    got = hess(x)
    check_device(got)
    assert_allclose(got, dense(hess, x), rtol=1e-12, atol=1e-13)
    ah, bh, xh = host(a), host(b), host(x)
    z = ah @ xh
    p = np.exp(z - z.max())
    p /= p.sum()
    want = ah.T @ (np.diag(p) - np.outer(p, p)) @ ah + (bh + bh.T) / 2 - np.diag(np.sin(xh))
    assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_multi_axis_input_contracted_at_once(dense: Any) -> None:
    # x of shape (4, 5): the basis has 20 rows of shape (4, 5), contracted over both axes.
    t = dev(_rng(4).standard_normal((3, 4, 5)))
    x = dev(_rng(5).standard_normal((4, 5)))

    def f(x: Any) -> Any:
        return fnp.tanh(fnp.einsum("kij,ij->k", t, x)) + fnp.einsum("ij,kij->k", x * x, t)

    for jac in (funcgrad.jacfwd(f), funcgrad.jacrev(f), funcgrad.hessian(lambda x: fnp.sum(f(x)))):
        assert_allclose(jac(x), dense(jac, x), rtol=1e-13, atol=1e-14)


def test_nonfinite_values_keep_their_dense_meaning(dense: Any) -> None:
    w = _rng(6).standard_normal((D, D))
    w[2, 5] = np.inf
    u = _rng(7).standard_normal(D)
    u[3] = np.nan
    w, u = dev(w), dev(u)
    x = dev(_rng(8).standard_normal(D))
    for f in (lambda x: w @ x, lambda x: x * u, lambda x: u * (w @ x)):
        for jac in (funcgrad.jacfwd(f), funcgrad.jacrev(f)):
            with np.errstate(invalid="ignore"):
                got, want = jac(x), dense(jac, x)
            np.testing.assert_array_equal(np.isnan(host(got)), np.isnan(host(want)))
            assert_allclose(got, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dtypes_follow_the_dense_path(dtype: Any, dense: Any) -> None:
    w_int = dev(_rng(9).integers(-3, 4, (D + 1, D)))
    w = dev(_rng(10).standard_normal((D + 1, D)).astype(dtype))
    x = dev(_rng(11).standard_normal(D).astype(dtype))
    for f in (lambda x: w_int @ x, lambda x: fnp.tanh(w @ x), lambda x: x @ w_int.T * 2.0):
        for jac in (funcgrad.jacfwd(f), funcgrad.jacrev(f)):
            got = jac(x)
            assert_allclose(got, dense(jac, x), rtol=1e-6 if dtype == np.float32 else 1e-13,
                            atol=1e-6 if dtype == np.float32 else 1e-14)


def test_jacobian_under_jit_and_grad(dense: Any) -> None:
    w = dev(_rng(12).standard_normal((D, D)) / 4)
    x = dev(_rng(13).standard_normal(D))

    def f(x: Any) -> Any:
        return fnp.tanh(w @ x)

    jitted = funcgrad.jit(funcgrad.jacfwd(f))
    assert_allclose(jitted(x), dense(funcgrad.jacfwd(f), x), rtol=1e-13, atol=1e-14)
    g = funcgrad.grad(lambda x: fnp.sum(funcgrad.jacrev(f)(x) ** 2))
    assert_allclose(g(x), dense(g, x), rtol=1e-12, atol=1e-13)


# -- dot_general without contraction -------------------------------------------------------------


@pytest.mark.parametrize("dtypes", [(np.float64, np.float64), (np.float32, np.float32),
                                    (np.int8, np.float32), (np.bool_, np.bool_)])
def test_outer_product_dot_general(dtypes: Any) -> None:
    from funcgrad.ops.linalg import dot_general

    rng = _rng(14)
    a = (rng.standard_normal((5, 3, 4)) * 3).astype(dtypes[0])
    b = (rng.standard_normal((4, 5, 2)) * 3).astype(dtypes[1])
    got = dot_general(dev(a), dev(b), (((), ()), ((0,), (1,))))
    want = np.matmul(np.moveaxis(a, 0, 0).reshape(5, 12, 1),
                     np.moveaxis(b, 1, 0).reshape(5, 1, 8)).reshape(5, 3, 4, 4, 2)
    assert_allclose(got, want)


def test_per_example_outer_products_under_vmap() -> None:
    g = funcgrad.vmap(funcgrad.grad(lambda w, x: fnp.sum(fnp.tanh(x @ w))), in_axes=(None, 0))
    w = dev(_rng(15).standard_normal((6, 3)))
    xs = dev(_rng(16).standard_normal((7, 6)))
    got = g(w, xs)
    wh, xh = host(w), host(xs)
    want = xh[:, :, None] * (1 - np.tanh(xh @ wh) ** 2)[:, None, :]
    assert_allclose(got, want)


# -- the eager tape and symbolic zeros -------------------------------------------------------------


def test_tape_uses_dot_general_transpose() -> None:
    from funcgrad.interpreters import eager_vjp as tape
    from funcgrad.interpreters.transpose import vjp_flat
    from funcgrad.ops.linalg import dot_general_p

    # Its fast rules (2-D matmuls) fall back to the transpose rule: never a linearized node.
    method = tape._backward_method(dot_general_p)
    assert method.__qualname__.startswith("_fast_backward"), method
    assert method is not tape._linearized_backward

    def f(a: Any, b: Any) -> list[Any]:
        return [fnp.tanh(fnp.einsum("ij,jk->ik", a, b)), fnp.einsum("ij,kj->ik", a, b.T)]

    args = [dev(_rng(17).standard_normal((3, 4))), dev(_rng(18).standard_normal((4, 5)))]
    outs_t, vjp_t, _ = tape.vjp_tape(f, args)
    outs_g, vjp_g, _ = vjp_flat(f, args)
    assert_allclose(outs_t, outs_g)
    cts = [dev(_rng(19).standard_normal((3, 5))), dev(_rng(20).standard_normal((3, 5)))]
    assert_allclose(vjp_t(cts), vjp_g(cts))


def test_lazy_zero_aval() -> None:
    assert Zero.from_primal(np.ones((2, 3), np.float32)).aval.str_short() == "f32[2,3]"
    assert Zero.from_primal(3).aval.str_short() == "float0[]"
    assert Zero.from_primal(2.0).aval.weak_type is False


def test_structure_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    used: list[str] = []
    orig = batching._process_structured

    def spy(trace: Any, prim: Any, *rest: Any) -> Any:
        res = orig(trace, prim, *rest)
        if res is not None:
            used.append(prim.name)
        return res

    monkeypatch.setattr(batching, "_process_structured", spy)
    w = dev(_rng(21).standard_normal((D + 5, D)))
    x = dev(_rng(22).standard_normal(D))
    funcgrad.jacfwd(lambda x: fnp.tanh(w @ x))(x)
    assert "dot_general" in used
    used.clear()
    funcgrad.jacrev(lambda x: fnp.tanh(w @ x))(x)
    assert used.count("dot_general") == 1 and "mul" in used
    used.clear()
    funcgrad.hessian(lambda x: fnp.sum(fnp.sin(x)))(x)
    assert "reduce_sum" in used


@pytest.mark.parametrize("jac", ["jacfwd", "jacrev", "hessian"])
def test_jit_keeps_the_basis_out_of_matrix_products(jac: str) -> None:
    """jit(jacfwd/jacrev/hessian) of a product with an argument matrix: the compiled code
    multiplies by no dense identity (an O(n^3) product eager mode never does), and the
    values, NaN included, are eager's."""
    w = _rng(30).standard_normal((D, D))
    x = _rng(31).standard_normal(D)
    if jac == "hessian":
        def f(x, w):
            return fnp.sum(fnp.sin(w @ x)) + fnp.sum(x ** 3)
    else:
        def f(x, w):
            return fnp.tanh(w @ x)
    jf = getattr(funcgrad, jac)(f)
    src = funcgrad.jit(jf).source(x, w)
    # w is an argument: a product with a const is a product with the basis.
    assert not [ln for ln in src.splitlines() if "xp.matmul(" in ln and "_c" in ln], src
    assert_allclose(funcgrad.jit(jf)(x, w), jf(x, w), rtol=1e-12, atol=1e-12)
    w_nan = w.copy()
    w_nan[2, 5] = np.nan
    got, want = funcgrad.jit(jf)(x, w_nan), jf(x, w_nan)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    assert_allclose(np.nan_to_num(got), np.nan_to_num(want), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("bad", [None, np.nan, np.inf])
def test_jit_hessian_of_quadratic_has_no_product_with_scaled_basis(bad: Any) -> None:
    """``jit(hessian)`` of ``0.5 * x @ B @ x`` (B read at run time): the Hessian builds
    ``(0.5 * I) @ B`` from the basis, a scaled identity with a unit axis; the compiled code
    takes ``0.5 * B`` instead of the d^3 product, and NaN/inf in B spread as eagerly."""
    b = _rng(40).standard_normal((D, D))
    if bad is not None:
        b[3, 7] = bad
    x = _rng(41).standard_normal(D)

    def f(x, b):
        return 0.5 * (x @ b @ x) + fnp.sum(fnp.sin(x))

    h = funcgrad.hessian(f)
    src = funcgrad.jit(h).source(x, b)
    assert "xp.matmul(" not in src and "_p" not in src, src
    got, want = funcgrad.jit(h)(x, b), h(x, b)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    assert_allclose(np.nan_to_num(got), np.nan_to_num(want), rtol=1e-13, atol=1e-13)
    if bad is None:
        assert_allclose(got, 0.5 * (b + b.T) - np.diag(np.sin(x)), rtol=1e-13, atol=1e-13)
