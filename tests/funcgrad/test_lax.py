"""funcgrad.lax: jax.lax's strictness (dtypes, static arguments, error messages) and the
transformations of the compositions that op-table cases cannot express."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_allclose, dev, host

import funcgrad
from funcgrad import lax
from funcgrad.test_util import check_grads


def test_namespace_complete() -> None:
    for name in lax.__all__:
        assert hasattr(lax, name), name
    for name in ["add", "dot_general", "associative_scan", "scan", "cond", "top_k", "pad"]:
        assert name in lax.__all__


def test_primitive_objects_for_jaxpr_interpreters() -> None:
    """lax.exp_p & co. are the primitives make_jaxpr records (JAX's custom-interpreter
    tutorial: invert a function by walking its jaxpr backwards)."""
    fnp = funcgrad.numpy
    f = lambda x: fnp.exp(fnp.tanh(x))  # noqa: E731
    closed = funcgrad.make_jaxpr(f)(dev(np.ones(3)))
    assert [e.primitive for e in closed.jaxpr.eqns] == [lax.tanh_p, lax.exp_p]
    inverse_of = {lax.exp_p: fnp.log, lax.tanh_p: fnp.arctanh}
    env = dict(zip(closed.jaxpr.outvars, [f(dev(np.full(3, 0.5)))]))
    for eqn in closed.jaxpr.eqns[::-1]:
        env[eqn.invars[0]] = inverse_of[eqn.primitive](env[eqn.outvars[0]])
    assert_allclose(env[closed.jaxpr.invars[0]], np.full(3, 0.5))
    for name in ("add_p", "dot_general_p", "scan_p", "while_p", "cond_p", "psum_p", "gather_p"):
        assert name in lax.__all__ and getattr(lax, name).name == name[:-2]


@pytest.mark.parametrize("fn", [lax.add, lax.sub, lax.mul, lax.div, lax.max, lax.eq, lax.atan2])
def test_binary_ops_require_equal_dtypes(fn) -> None:
    x32, x64 = dev(np.ones(3, np.float32)), dev(np.ones(3))
    with pytest.raises(TypeError, match=rf"lax\.{fn.__name__} requires arguments to have the "
                                        r"same dtypes, got float32 \(x\) and float64 \(y\)"):
        fn(x32, x64)


def test_python_scalars_are_weak() -> None:
    x = dev(np.ones(3, np.float32))
    assert host(lax.add(x, 2.0)).dtype == np.float32
    assert host(lax.mul(3, x)).dtype == np.float32
    assert host(lax.add(dev(np.ones(2, np.int8)), 3)).dtype == np.int8
    with pytest.raises(TypeError, match=r"lax\.add: the Python scalar y .* does not fit the "
                                        "dtype int32"):
        lax.add(dev(np.ones(2, np.int32)), 2.5)


def test_rank_mismatch_and_kind_errors() -> None:
    with pytest.raises(TypeError, match=r"lax\.add: arrays must have the same rank"):
        lax.add(dev(np.ones(3)), dev(np.ones((2, 3))))
    assert host(lax.add(dev(np.ones(3)), dev(np.array(2.0)))).tolist() == [3.0] * 3
    with pytest.raises(TypeError, match=r"lax\.exp does not accept dtype int64"):
        lax.exp(dev(np.arange(3)))
    with pytest.raises(TypeError, match=r"lax\.shift_left does not accept dtype float64"):
        lax.shift_left(1.0, 2.0)
    with pytest.raises(TypeError, match=r"lax\.add: argument y is not an array"):
        lax.add(1.0, [1.0])


def test_div_rem_integer_semantics() -> None:
    x = dev(np.array([7, -7, 7, -7, 0], np.int32))
    y = dev(np.array([2, 2, -2, -2, 3], np.int32))
    assert host(lax.div(x, y)).tolist() == [3, -3, -3, 3, 0]
    assert host(lax.rem(x, y)).tolist() == [1, -1, 1, -1, 0]
    assert host(lax.div(x, y)).dtype == np.int32


def test_round_methods_and_errors() -> None:
    x = dev(np.array([0.5, 1.5, 2.5, -0.5, 0.49999999999999994]))
    assert host(lax.round(x)).tolist() == [1.0, 2.0, 3.0, -1.0, 0.0]
    assert host(lax.round(x, 1)).tolist() == [0.0, 2.0, 2.0, -0.0, 0.0]
    with pytest.raises(ValueError, match="lax.round: rounding_method"):
        lax.round(x, 7)


def test_shift_right_logical_edges() -> None:
    x = dev(np.array([-1, -1, -1, -128], np.int8))
    s = dev(np.array([0, 1, 8, 7], np.int8))
    assert host(lax.shift_right_logical(x, s)).tolist() == [-1, 127, 0, 1]


def test_select_and_clamp_validation() -> None:
    with pytest.raises(TypeError, match="lax.select: pred must be bool"):
        lax.select(dev(np.array([1, 0])), dev(np.ones(2)), dev(np.zeros(2)))
    with pytest.raises(TypeError, match="lax.select_n requires arguments to have the same"):
        lax.select_n(dev(np.array([True])), dev(np.ones(1)), dev(np.ones(1, np.float32)))
    with pytest.raises(TypeError, match=r"lax\.clamp: min must be a scalar or have x's shape"):
        lax.clamp(dev(np.zeros(2)), dev(np.ones(3)), 1.0)


def test_shape_op_errors() -> None:
    x = dev(np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"lax\.pad: padding_config needs one"):
        lax.pad(x, 0.0, [(1, 1, 0)])
    with pytest.raises(ValueError, match=r"lax\.pad: padding_config .* is invalid"):
        lax.pad(x, 0.0, [(0, 0, -1), (0, 0, 0)])
    with pytest.raises(TypeError, match="lax.pad requires arguments to have the same dtypes"):
        lax.pad(x, np.float32(0), [(0, 0, 0), (0, 0, 0)])
    with pytest.raises(IndexError, match=r"lax\.slice: .* out of bounds for shape \(2, 3\)"):
        lax.slice(x, (0, 0), (2, 4))
    with pytest.raises(TypeError, match=r"lax\.reshape: new_sizes \(-1,\)"):
        lax.reshape(x, (-1,))
    with pytest.raises(TypeError, match=r"lax\.transpose: permutation \(0,\)"):
        lax.transpose(x, (0,))
    with pytest.raises(TypeError, match="lax.concatenate: operand shapes must agree"):
        lax.concatenate([x, dev(np.ones((3, 3)))], 1)
    with pytest.raises(TypeError, match="lax.dynamic_update_slice: update dtype float32"):
        lax.dynamic_update_slice(x, dev(np.ones((1, 1), np.float32)), (0, 0))
    with pytest.raises(TypeError, match="lax.broadcast_in_dim: broadcast_dimensions"):
        lax.broadcast_in_dim(x, (2, 3, 4), (0,))
    with pytest.raises(TypeError, match=r"lax\.slice: start_indices must be a sequence"):
        lax.slice(x, 0, (1, 1))


def test_dot_general_errors() -> None:
    a, b = dev(np.ones((2, 3))), dev(np.ones((4, 3)))
    with pytest.raises(TypeError, match="contracting dimension sizes differ"):
        lax.dot_general(a, b, (((1,), (0,)), ((), ())))
    with pytest.raises(TypeError, match="must have equal lengths"):
        lax.dot_general(a, b, (((1,), ()), ((), ())))
    with pytest.raises(TypeError, match="dimension_numbers must be"):
        lax.dot_general(a, b, ((1,), (1,)))
    with pytest.raises(TypeError, match="must not be narrower than the original type"):
        lax.dot(dev(np.ones(3, np.int64)), dev(np.ones(3, np.int64)),
                preferred_element_type=np.int32)
    with pytest.raises(ValueError, match="lax.dot_general: precision"):
        lax.dot(dev(np.ones(3)), dev(np.ones(3)), precision="bogus")
    with pytest.raises(ValueError, match="lax.dot: incompatible shapes"):
        lax.dot(dev(np.ones((2, 2, 2))), dev(np.ones(2)))
    out = lax.dot(dev(np.ones(3, np.int8)), dev(np.ones(3, np.int8)),
                  precision=lax.Precision.HIGHEST, preferred_element_type=np.int32)
    assert host(out).dtype == np.int32 and int(host(out)) == 3


def test_dot_preferred_element_type_narrowing_as_jax() -> None:
    """JAX 0.10.2 lets a float result take any preferred_element_type, converting the full
    sum (float to int truncates, complex to real keeps the real part); integer results only
    widen, their products summed in the preferred type."""
    x = dev(np.array([1.5, 2.7], np.float32))
    out = lax.dot(x, x, preferred_element_type=np.int32)
    assert host(out).dtype == np.int32 and int(host(out)) == 9     # JAX: 9 (9.54 truncated)
    assert int(host(lax.dot(x, -x, preferred_element_type=np.int8))) == -9
    assert bool(host(lax.dot(x, x, preferred_element_type=np.bool_)))
    z = dev(np.array([1 + 2j, 0.5 - 1j], np.complex64))
    out = lax.dot(z, z, preferred_element_type=np.float32)
    assert host(out).dtype == np.float32 and float(host(out)) == -3.75   # JAX: -3.75
    out = lax.dot(dev(np.array([1 + 2 ** -40, 1.0])), dev(np.ones(2)), preferred_element_type=np.float32)
    assert host(out).dtype == np.float32 and float(host(out)) == 2.0
    i8 = dev(np.array([100, 100], np.int8))
    assert int(host(lax.dot(i8, i8 // 50, preferred_element_type=np.int32))) == 400
    assert int(host(lax.dot(i8, i8 // 50, preferred_element_type=np.uint8))) == 144
    for a, p in ((np.int64, np.int32), (np.int32, np.uint8), (np.int8, np.bool_),
                 (np.complex128, np.float32)):
        with pytest.raises(TypeError, match="must not be narrower"):
            lax.dot(dev(np.ones(2, a)), dev(np.ones(2, a)), preferred_element_type=p)
    f = funcgrad.jit(lambda v: lax.dot(v, v, preferred_element_type=np.int32))
    assert int(host(f(x))) == 9


def test_dot_algorithms() -> None:
    """lax.DotAlgorithm / DotAlgorithmPreset as precision=: operands converted to the
    algorithm's types, the sum in its accumulation type, the result in dot_general's dtype;
    values recorded from JAX 0.10.2 on CPU (x64)."""
    P = lax.DotAlgorithmPreset
    a32 = dev(np.array([1 + 2 ** -20, 1 / 3, 1 + 2 ** -10], np.float32))
    b32 = dev(np.array([1.0, 3.0, 1 + 2 ** -12], np.float32))
    a64 = dev(np.array([1 + 2 ** -40, 1 / 3, 1 + 2 ** -30]))
    b64 = dev(np.array([1.0, 3.0, 1 + 2 ** -35]))
    for prec in ("F32_F32_F32", P.F32_F32_F32, lax.DotAlgorithm(np.float32, np.float32, np.float32)):
        out = lax.dot(a64, b64, precision=prec)   # operands rounded to float32 first
        assert host(out).dtype == np.float64 and float(host(out)) == 3.0
        out = lax.dot(a64, b64, precision=prec, preferred_element_type=np.float32)
        assert host(out).dtype == np.float32 and float(host(out)) == 3.0
    for prec in ("DEFAULT", "F64_F64_F64", P.BF16_BF16_F32_X6):
        assert float(host(lax.dot(a32, b32, precision=prec))) == 3.0012218952178955
    assert float(host(lax.dot(a64, b64, precision="F64_F64_F64"))) == 3.000000000961336
    assert int(host(lax.dot(dev(np.arange(3)), dev(np.arange(3)), precision="F32_F32_F32"))) == 5
    # float64 operands of a bfloat16 preset are rounded to bfloat16 (JAX on CPU refuses them)
    out = lax.dot(a64, b64, precision=P.BF16_BF16_F32)
    assert float(host(out)) == 3.001953125
    h16 = dev(np.array([1.0, 2.0, 3.0, 4.0], np.float16))
    out = lax.dot(h16, h16, precision="F16_F16_F32")
    assert host(out).dtype == np.float16 and float(host(out)) == 30.0
    with pytest.raises(ValueError, match="requires both inputs to have float8"):
        lax.dot(a32, b32, precision="ANY_F8_ANY_F8_F32")
    # under grad, jit and vmap (JAX: grad [2., 0.6666666865348816, 2.], value 2.1111111640930176)
    f = lambda v: lax.dot(v, v, precision="F32_F32_F32")  # noqa: E731
    assert_allclose(funcgrad.grad(f)(a64), np.array([2.0, 0.6666666865348816, 2.0]), rtol=1e-15)
    assert float(host(funcgrad.jit(f)(a64))) == 2.1111111640930176
    assert_allclose(funcgrad.vmap(f)(funcgrad.numpy.stack([a64, a64])), np.full(2, 2.1111111640930176),
                    rtol=0)
    assert str(P.F16_F16_F32) == "F16_F16_F32" and P.F16_F16_F32.accumulation_type == np.float32
    assert P.F16_F16_F32.supported_output_types(np.float16, np.float16) == (np.float32, np.float16)


def test_scaled_dot_matches_jax() -> None:
    """lax.scaled_dot: operands and block scales rounded to bfloat16, multiplied in
    bfloat16, contracted; values recorded from JAX 0.10.2 on CPU (x64)."""
    lhs = dev((np.arange(24).reshape(3, 8) % 7 - 3).astype(np.float32) * np.float32(0.3))
    rhs = dev((np.arange(16).reshape(8, 2) % 5 - 2).astype(np.float32) * np.float32(0.7))
    ls = dev(np.array([[0.6, 1.3], [1.7, 0.9], [1.1, 0.55]], np.float32))
    rs = dev(np.array([[1.5, 0.8], [0.7, 1.9]], np.float32))
    # JAX's default result type is bfloat16: here float32 holding the bfloat16 values
    out = lax.scaled_dot(lhs, rhs, lhs_scale=ls, rhs_scale=rs)
    assert host(out).dtype == np.float32
    assert host(out).tolist() == [[-0.95703125, 4.9375], [0.5546875, 1.0], [1.2578125, 1.78125]]
    out = lax.scaled_dot(lhs, rhs, lhs_scale=ls, rhs_scale=rs, preferred_element_type=np.float64)
    assert host(out).tolist() == [[-0.958587646484375, 4.939178466796875],
                                  [0.55426025390625, 1.0017852783203125],
                                  [1.2569046020507812, 1.7833709716796875]]
    p2l = dev(np.array([[0.5, 2.0], [1.0, 0.25], [4.0, 1.0]], np.float32))
    p2r = dev(np.array([[2.0, 0.5], [1.0, 1.0]], np.float32))
    want = np.array([[-2.93890380859375, 3.9262771606445312],
                     [0.8426132202148438, 0.21167755126953125],
                     [4.8289794921875, 1.4639892578125]], np.float32)
    out = lax.scaled_dot(lhs, rhs, lhs_scale=p2l, rhs_scale=p2r, preferred_element_type=np.float32)
    assert_allclose(out, want, rtol=0, atol=0)
    # rank 3: the leading axis is a batch axis by default
    l3, r3 = funcgrad.numpy.stack([lhs, -lhs]), funcgrad.numpy.stack([rhs, 2 * rhs])
    out = lax.scaled_dot(l3, r3, lhs_scale=funcgrad.numpy.stack([p2l, p2l]),
                         rhs_scale=funcgrad.numpy.stack([p2r, p2r]), preferred_element_type=np.float32)
    assert_allclose(out, np.stack([want, -2 * want]), rtol=0, atol=0)
    with pytest.raises(TypeError, match="must be divisible by its scale's dim size 3"):
        lax.scaled_dot(lhs, rhs, lhs_scale=dev(np.ones((3, 3), np.float32)))
    with pytest.raises(TypeError, match=r"must be at least 2"):
        lax.scaled_dot(lhs, rhs, lhs_scale=dev(np.ones((3, 8), np.float32)))
    with pytest.raises(TypeError, match="does not support 0-rank and 1-rank"):
        lax.scaled_dot(lhs[0], rhs[:, 0])


# jax.lax.dot_general of ones((2, 3), lhs) and ones((3, 2), rhs): the result dtype of mixed
# operands, recorded from JAX 0.10.2 (x64): XLA's higher-precision type, not NumPy promotion.
@pytest.mark.parametrize("lhs,rhs,want", [
    (np.float32, np.float64, np.float64), (np.int32, np.float32, np.float32),
    (np.int8, np.uint8, np.int8), (np.uint64, np.int64, np.int64),
    (np.float16, np.int64, np.float16), (np.complex64, np.float64, np.complex64),
    (np.bool_, np.uint8, np.uint8), (np.uint32, np.int8, np.uint32),
])
def test_dot_general_mixed_dtypes(lhs, rhs, want) -> None:
    dn = (((1,), (0,)), ((), ()))
    out = lax.dot_general(dev(np.ones((2, 3), lhs)), dev(np.ones((3, 2), rhs)), dn)
    assert host(out).dtype == want and host(out).tolist() == [[3, 3], [3, 3]]
    g = funcgrad.grad(lambda x: lax.reduce_sum(lax.dot_general(
        x, dev(np.ones((3, 2))), dn), (0, 1)))(dev(np.ones((2, 3), np.float32)))
    assert host(g).dtype == np.float32 and host(g).tolist() == [[2.0] * 3] * 2


def test_dtype_and_type_aliases() -> None:
    # jax.lax.dtype (x64): 1 -> int64, 1.0 -> float64, True -> bool, 1j -> complex128.
    assert [lax.dtype(v) for v in (1, 1.0, True, 1j)] == [
        np.dtype(np.int64), np.dtype(np.float64), np.dtype(bool), np.dtype(np.complex128)]
    assert lax.dtype(dev(np.ones(2, np.float32))) == np.float32
    assert lax.dtype("float16") == np.float16 and lax.dtype(np.int8(1)) == np.int8
    dn: lax.DotDimensionNumbers = (((1,), (0,)), ((), ()))
    p: lax.PrecisionLike = lax.Precision.HIGHEST
    assert host(lax.dot_general(dev(np.ones((2, 3))), dev(np.ones((3, 2))), dn, p)).shape == \
        (2, 2)
    assert lax.ConvDimensionNumbers in lax.ConvGeneralDilatedDimensionNumbers.__args__


def test_digamma_is_nan_at_every_pole() -> None:
    # jax.lax.digamma([0., -0., -1., -2., 2.5]) -> [nan, nan, nan, nan, 0.7031566406452432]
    got = host(lax.digamma(dev(np.array([0.0, -0.0, -1.0, -2.0, 2.5]))))
    assert np.isnan(got[:4]).all()
    assert_allclose(got[4:], np.array([0.7031566406452432]))
    assert np.isnan(host(funcgrad.jit(lax.digamma)(dev(np.float32(0.0)))))


def test_broadcast_in_dim_dimensions_in_any_order() -> None:
    # jax.lax.broadcast_in_dim(arange(6.0).reshape(2, 3), (3, 2), (1, 0)) (JAX 0.10.2)
    x = dev(np.arange(6.0).reshape(2, 3))
    got = lax.broadcast_in_dim(x, (3, 2), (1, 0))
    assert host(got).tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
    y = dev(np.arange(24.0).reshape(2, 3, 4))
    assert_allclose(lax.broadcast_in_dim(y, (4, 3, 5, 2), (3, 1, 0)),
                    np.broadcast_to(host(y).transpose(2, 1, 0)[:, :, None, :], (4, 3, 5, 2)))
    g = funcgrad.grad(lambda x: lax.reduce_sum(lax.broadcast_in_dim(x, (3, 4, 2), (2, 0)),
                                               (0, 1, 2)))(x)
    assert host(g).tolist() == [[4.0] * 3] * 2
    with pytest.raises(TypeError, match="distinct"):
        lax.broadcast_in_dim(dev(np.ones((3, 3))), (3, 3), (0, 0))


def test_dot_takes_dimension_numbers() -> None:
    x, y = dev(np.arange(24.0).reshape(2, 3, 4)), dev(np.arange(20.0).reshape(4, 5))
    out = lax.dot(x, y, dimension_numbers=(((2,), (0,)), ((), ())))
    assert_allclose(out, np.einsum("abk,kc->abc", host(x), host(y)))


def test_integer_reductions_keep_dtype() -> None:
    x = dev(np.full((3, 100), 100, np.int8))
    assert host(lax.reduce_sum(x, (1,))).dtype == np.int8
    assert host(lax.cumsum(x, 1)).dtype == np.int8
    with pytest.raises(TypeError, match=r"lax\.reduce_and does not accept dtype float64"):
        lax.reduce_and(dev(np.ones(3)), (0,))
    assert host(lax.reduce_and(dev(np.zeros((0, 2), np.int32)), (0,))).tolist() == [-1, -1]


def test_sort_and_top_k() -> None:
    ks, vs = lax.sort((dev(np.array([2, 1, 2])), dev(np.array([0.0, 1.0, 2.0]))))
    assert host(vs).tolist() == [1.0, 0.0, 2.0]
    out = lax.sort([dev(np.array([2, 1]))])
    assert isinstance(out, tuple) and len(out) == 1
    with pytest.raises(ValueError, match="lax.top_k: k=5"):
        lax.top_k(dev(np.ones(3)), 5)


def test_dynamic_slice_traced_negative_index_under_jit_and_vmap() -> None:
    x = dev(np.arange(10.0))
    f = funcgrad.jit(lambda x, i: lax.dynamic_slice_in_dim(x, i, 3))
    assert host(f(x, dev(np.array(-4)))).tolist() == [6.0, 7.0, 8.0]
    assert host(f(x, dev(np.array(9)))).tolist() == [7.0, 8.0, 9.0]  # clamped
    idx = dev(np.array([-1, 0, 2]))
    got = funcgrad.vmap(lambda i: lax.dynamic_index_in_dim(x, i, keepdims=False))(idx)
    assert host(got).tolist() == [9.0, 0.0, 2.0]


def test_dynamic_slice_allow_negative_indices_false() -> None:
    # JAX 0.10.2: a concrete negative index is a ValueError; a traced one is clamped to 0;
    # allow_negative_indices may be one bool per axis.
    a = dev(np.arange(60.0).reshape(5, 12))
    with pytest.raises(ValueError, match="allow_negative_indices=False"):
        lax.dynamic_slice(a, (-1, 2), (2, 3), allow_negative_indices=False)
    f = funcgrad.jit(lambda i: lax.dynamic_slice(a, (i, 2), (2, 3), allow_negative_indices=False))
    assert host(f(dev(np.array(-1)))).tolist() == [[2.0, 3.0, 4.0], [14.0, 15.0, 16.0]]
    got = lax.dynamic_slice(a, (1, -2), (2, 3), allow_negative_indices=(False, True))
    assert host(got).tolist() == [[21.0, 22.0, 23.0], [33.0, 34.0, 35.0]]
    with pytest.raises(ValueError, match="allow_negative_indices=False"):
        lax.dynamic_slice(a, (1, -2), (2, 3), allow_negative_indices=(True, False))


def test_reduce_max_min_over_no_elements_give_the_identity() -> None:
    # JAX 0.10.2: reduce_max(zeros((0, 2)), (0,)) is [-inf, -inf]; reduce_min of int16 is
    # [32767, 32767]; of bool over an empty axis, False (max) and True (min).
    assert host(lax.reduce_max(dev(np.zeros((0, 2))), (0,))).tolist() == [-np.inf, -np.inf]
    got = lax.reduce_min(dev(np.zeros((0, 2), np.int16)), (0,))
    assert host(got).dtype == np.int16 and host(got).tolist() == [32767, 32767]
    assert host(lax.reduce_max(dev(np.zeros((2, 0), bool)), (1,))).tolist() == [False, False]
    assert host(lax.reduce_min(dev(np.zeros((2, 0), bool)), (1,))).tolist() == [True, True]
    jitted = funcgrad.jit(lambda x: lax.reduce_max(x, (0,)))(dev(np.zeros((0, 3))))
    assert host(jitted).tolist() == [-np.inf] * 3


def _linear_recurrence(a, b):
    return lax.associative_scan(lambda p, q: (p[0] * q[0], p[1] * q[0] + q[1]), (a, b))[1]


def test_associative_scan_transforms() -> None:
    rng = np.random.default_rng(0)
    a, b = dev(rng.uniform(0.5, 1.0, 9)), dev(rng.standard_normal(9))
    check_grads(_linear_recurrence, (a, b), order=2, modes=("fwd", "rev"))
    want = np.empty(9)
    h = 0.0
    for t in range(9):
        h = host(a)[t] * h + host(b)[t]
        want[t] = h
    assert_allclose(funcgrad.jit(_linear_recurrence)(a, b), want)
    A, B = dev(rng.uniform(0.5, 1.0, (4, 5))), dev(rng.standard_normal((4, 5)))
    batched = funcgrad.vmap(_linear_recurrence)(A, B)
    assert_allclose(batched, np.stack([host(_linear_recurrence(A[i], B[i])) for i in range(4)]))


def test_associative_scan_errors() -> None:
    with pytest.raises(ValueError, match="same size along axis 0"):
        lax.associative_scan(lambda x, y: x, (dev(np.ones(3)), dev(np.ones(4))))
    with pytest.raises(TypeError, match="fn must return the structure of elems"):
        lax.associative_scan(lambda x, y: (x, y), dev(np.ones(3)))


def test_stop_gradient_pytree_and_control_flow_reexports() -> None:
    out = lax.stop_gradient({"a": dev(np.ones(2)), "b": 1.0})
    assert set(out) == {"a", "b"}
    g = funcgrad.grad(lambda x: lax.fori_loop(0, 3, lambda i, c: lax.mul(c, x), 1.0))(2.0)
    assert float(host(g)) == pytest.approx(12.0)


def test_shape_arguments_take_a_python_int_as_jax():
    # jax.lax.full(2, 3.0) is [3., 3.]; a NumPy integer is not a shape there
    assert host(lax.full(2, 3.0)).tolist() == [3.0, 3.0]
    assert host(lax.full_like(dev(np.ones(2)), 1.0, shape=3)).tolist() == [1.0, 1.0, 1.0]
    assert host(lax.broadcasted_iota(np.int32, 3, 0)).tolist() == [0, 1, 2]
    assert lax.empty(3, np.float32).shape == (3,)
    with pytest.raises(TypeError, match="sequence of ints"):
        lax.full(np.int64(2), 3.0)


def test_transcendental_accuracy_keyword() -> None:
    # JAX 0.10's accuracy= on exp, log, sin, ... (a Tolerance or an AccuracyMode): one
    # implementation here, the same values; bad requests refused as JAX's
    x = dev(np.array([0.5, 1.5]))
    for name in ("cbrt", "cos", "exp", "exp2", "expm1", "log", "log1p", "logistic", "rsqrt",
                 "sin", "sqrt", "tan", "tanh"):
        f = getattr(lax, name)
        want = host(f(x))
        for acc in (None, lax.Tolerance(atol=1e-6, rtol=1e-6), lax.AccuracyMode.HIGHEST):
            np.testing.assert_array_equal(host(f(x, accuracy=acc)), want)
        with pytest.raises(TypeError, match="accuracy must be None"):
            f(x, accuracy="high")
    with pytest.raises(ValueError, match="at least one of atol"):
        lax.Tolerance()
    with pytest.raises(ValueError, match="non-negative"):
        lax.Tolerance(atol=-1.0)
    with pytest.raises(TypeError):
        lax.add(x, x, accuracy=None)  # as JAX: binary functions have no accuracy


def test_mul_out_dtype_and_switch_operand_keyword() -> None:
    # JAX 0.10.2: mul(int8 100, int8 3, out_dtype=int32) == 300 (no 8-bit wrap), mixed input
    # dtypes allowed with out_dtype; switch(i, branches, operand=x) as cond's operand=
    i8 = dev(np.array([100, -100], np.int8))
    out = lax.mul(i8, dev(np.array([3, 3], np.int8)), out_dtype=np.int32)
    assert out.dtype == np.int32 and host(out).tolist() == [300, -300]
    assert host(lax.mul(i8, dev(np.array([3, 3], np.int16)), out_dtype=np.int32)).tolist() == [
        300, -300]
    g = funcgrad.grad(lambda x: lax.mul(x, np.float32(3), out_dtype=np.float64))(np.float32(2))
    assert g.dtype == np.float32 and float(g) == 3.0
    with pytest.raises(TypeError):
        lax.mul(i8, dev(np.array([3, 3], np.int16)))  # without out_dtype: one dtype, as lax
    assert float(lax.switch(1, [lambda x: x, lambda x: -x], operand=3.0)) == -3.0
    with pytest.raises(TypeError, match="not both"):
        lax.switch(1, [lambda x: x, lambda x: -x], 2.0, operand=3.0)


def test_out_sharding_keywords() -> None:
    # JAX 0.10's out_sharding= on lax's shape, dot, reduction and convolution functions: on
    # one device the result is the same, placed by the sharding; a bad sharding is refused
    mesh = funcgrad.make_mesh((1,), ("x",))
    s = funcgrad.sharding.NamedSharding(mesh, funcgrad.sharding.PartitionSpec())
    x = dev(np.arange(6.0).reshape(2, 3))
    cases = [
        lambda **k: lax.reshape(x, (3, 2), **k),
        lambda **k: lax.broadcast(x, (2,), **k),
        lambda **k: lax.broadcast_in_dim(x[0], (2, 3), (1,), **k),
        lambda **k: lax.broadcasted_iota(np.int32, (2, 3), 1, **k),
        lambda **k: lax.reduce_sum(x, (0,), **k),
        lambda **k: lax.reduce(x, 0.0, lax.add, (1,), **k),
        lambda **k: lax.dot_general(x, x, (((1,), (1,)), ((), ())), **k),
        lambda **k: lax.dot(x, x.T, **k),
        lambda **k: lax.empty((2,), np.float32, **k),
        lambda **k: lax.conv_general_dilated(x[None, None], dev(np.ones((1, 1, 2, 2))), (1, 1),
                                             "VALID", **k),
    ]
    for f in cases:
        np.testing.assert_array_equal(host(f(out_sharding=s)), host(f()))
    # full / full_like take JAX's sharding=
    np.testing.assert_array_equal(host(lax.full((2,), 1.5, sharding=s)), [1.5, 1.5])
    np.testing.assert_array_equal(host(lax.full_like(x, 2, sharding=s)), np.full((2, 3), 2.0))
    with pytest.raises(TypeError, match="out_sharding"):
        lax.reshape(x, (3, 2), out_sharding="cpu")


def test_sign_keeps_the_sign_of_zero_as_xla() -> None:
    # JAX 0.10.2: lax.sign(-0.0) is -0.0 (NumPy's sign gives 0.0); derivative 0
    x = dev(np.array([-0.0, 0.0, -2.0, np.nan]))
    got = host(lax.sign(x))
    assert np.signbit(got[:3]).tolist() == [True, False, True] and np.isnan(got[3])
    assert float(host(funcgrad.jit(lax.sign)(dev(np.float64(-0.0))))) == 0.0
    assert np.signbit(host(funcgrad.jit(lax.sign)(dev(np.float64(-0.0)))))
    assert float(funcgrad.grad(lax.sign)(0.0)) == 0.0
    assert host(lax.sign(dev(np.array([-3, 0])))).tolist() == [-1, 0]
