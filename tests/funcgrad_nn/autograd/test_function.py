"""funcgrad_nn.autograd.Function: PyTorch's custom functions on custom_vjp/custom_jvp."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import DEVICE, dev, host

import funcgrad
import funcgrad.numpy as fnp
import funcgrad_nn as nn
from funcgrad.core import Tracer
from funcgrad.test_util import check_grads
from funcgrad_nn.autograd import Function, gradcheck, once_differentiable
from funcgrad_nn.autograd.tensor_view import TensorView

from .make_torch_fixtures import MI, MX, OUT, TENSOR_METHODS

REF = dict(np.load(OUT))


def unwrap_view(x):
    """The array behind a Function's tensor view (to look at it inside forward)."""
    while type(x) is TensorView:
        x = x.val
    return x


def assert_close(actual, desired, **kw):
    np.testing.assert_allclose(host(actual), host(desired), **kw)


class Exp(Function):
    """PyTorch's documentation example, verbatim but for the import."""

    @staticmethod
    def forward(ctx, i):
        result = i.exp()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        return grad_output * result


class LinearFn(Function):
    """PyTorch's LinearFunction example (setup_context style, optional bias)."""

    @staticmethod
    def forward(input, weight, bias):
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    @staticmethod
    def setup_context(ctx, inputs, output):
        input, weight, bias = inputs
        ctx.save_for_backward(input, weight, bias)

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)
        return grad_input, grad_weight, grad_bias


class MulConstant(Function):
    """A non-array argument (PyTorch's MulConstant example)."""

    @staticmethod
    def forward(ctx, tensor, constant):
        ctx.constant = constant
        return tensor * constant

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.constant, None


class SinCos(Function):
    """Two outputs; the second marked non-differentiable."""

    @staticmethod
    def forward(ctx, x):
        s, c = fnp.sin(x), fnp.cos(x)
        ctx.save_for_backward(x)
        ctx.mark_non_differentiable(c)
        return s, c

    @staticmethod
    def backward(ctx, gs, gc):
        (x,) = ctx.saved_tensors
        return gs * fnp.cos(x)


class SinJvp(Function):
    """Forward mode only (a jvp staticmethod)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return fnp.sin(x)

    @staticmethod
    def jvp(ctx, t):
        (x,) = ctx.saved_tensors
        return fnp.cos(x) * t


X = np.array([0.3, -0.7, 1.1])


def test_exp_example_values_and_grad():
    assert_close(Exp.apply(X), np.exp(X))
    g = funcgrad.grad(lambda x: Exp.apply(x).sum())(X)
    assert_close(g, np.exp(X))


def test_exp_order_three():
    check_grads(Exp.apply, (X,), order=3)


def test_backward_runs_once_per_grad():
    calls = []

    class Tracked(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 3.0

        @staticmethod
        def backward(ctx, g):
            calls.append(1)
            return g * 3.0

    funcgrad.grad(lambda x: Tracked.apply(x).sum())(X)
    assert len(calls) == 1


def test_under_jit_and_vmap():
    f = lambda x: Exp.apply(x).sum()
    assert_close(funcgrad.jit(funcgrad.grad(f))(X), np.exp(X))
    assert_close(funcgrad.grad(funcgrad.jit(f))(X), np.exp(X))
    xs = np.stack([X, 2 * X])
    assert_close(funcgrad.vmap(funcgrad.grad(f))(xs), np.exp(xs))
    assert_close(funcgrad.vmap(Exp.apply)(xs), np.exp(xs))


def test_setup_context_linear_matches_dense():
    rng = np.random.default_rng(0)
    x, w, b = rng.normal(size=(4, 3)), rng.normal(size=(2, 3)), rng.normal(size=2)
    assert_close(LinearFn.apply(x, w, b), x @ w.T + b)
    check_grads(lambda x, w, b: LinearFn.apply(x, w, b), (x, w, b), order=2)
    gx = funcgrad.grad(lambda x: LinearFn.apply(x, w, None).sum())(x)
    assert_close(gx, np.ones((4, 2)) @ w)


def test_non_array_argument_and_ctx_attribute():
    g = funcgrad.grad(lambda x: MulConstant.apply(x, 2.5).sum())(X)
    assert_close(g, np.full(3, 2.5))
    check_grads(lambda x: MulConstant.apply(x, 2.5), (X,), order=3)


def test_needs_input_grad_reports_array_inputs():
    seen = []

    class F(Function):
        @staticmethod
        def forward(ctx, x, n, k):
            seen.append(ctx.needs_input_grad)
            return x * n

        @staticmethod
        def backward(ctx, g):
            return g, None, None

    funcgrad.grad(lambda x: F.apply(x, 2, np.arange(3)).sum())(X)
    assert seen[-1] == (True, False, False)


def test_several_outputs_and_non_differentiable():
    g = funcgrad.grad(lambda x: (SinCos.apply(x)[0] + SinCos.apply(x)[1]).sum())(X)
    assert_close(g, np.cos(X))  # the cos output gets no gradient
    check_grads(lambda x: SinCos.apply(x)[0], (X,), order=2)


def test_set_materialize_grads_false_gives_none():
    got = []

    class F(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            y = x * 2.0
            z = x + 1.0
            ctx.mark_non_differentiable(z)
            return y, z

        @staticmethod
        def backward(ctx, gy, gz):
            got.append(gz)
            return gy * 2.0

    funcgrad.grad(lambda x: F.apply(x)[0].sum())(X)
    assert got == [None]


@pytest.mark.parametrize("transform", [lambda f: f, funcgrad.jit])
def test_materialized_grads_of_an_integer_output_are_integer_zeros_as_torch(transform):
    # torch 2.13: forward returns (x * 2, (x > 0).long(), x * 3 marked non-differentiable);
    # with materialize_grads on (the default) backward gets int64 zeros for the index output
    # and float zeros for the marked one (funcgrad passed None for the integer output); off,
    # both are None.
    got = []

    class F(Function):
        @staticmethod
        def forward(ctx, x, mat):
            ctx.set_materialize_grads(mat)
            c = x * 3.0
            ctx.mark_non_differentiable(c)
            return x * 2.0, (x > 0).astype(np.int64), c

        @staticmethod
        def backward(ctx, ga, gb, gc):
            got.append((gb, gc))
            return ga * 2.0, None

    x = dev(np.array([1.0, -1.0]))
    for mat in (True, False):
        got.clear()
        g = transform(funcgrad.grad(lambda x, mat=mat: F.apply(x, mat)[0].sum()))(x)
        assert_close(g, [2.0, 2.0])
        ((gb, gc),) = got
        if mat:
            assert gb.dtype == np.int64 and gb.shape == (2,)
            assert gc.dtype == np.float64 and gc.shape == (2,)
        else:
            assert gb is None and gc is None


@pytest.mark.parametrize("transform", [lambda f: f, funcgrad.jit])
def test_needs_input_grad_and_unused_outputs_follow_what_is_differentiated_as_torch(transform):
    # torch 2.13, x requiring grad and y not, materialize_grads off: backward sees
    # needs_input_grad (True, False); the output not used by the loss gets None, the used
    # one its gradient; x's gradient is None (a zero here) when only the second is used
    got = []

    class F(Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.set_materialize_grads(False)
            return x * 2.0, x + y

        @staticmethod
        def backward(ctx, g1, g2):
            got.append((ctx.needs_input_grad, g1 is None, g2 is None))
            return (None if g1 is None else g1 * 2.0), None

    x, y = dev(X), dev(np.ones(3))
    g = transform(funcgrad.grad(lambda x: F.apply(x, y)[0].sum()))(x)
    assert_close(g, np.full(3, 2.0))
    g = transform(funcgrad.grad(lambda x: F.apply(x, y)[1].sum()))(x)
    assert_close(g, np.zeros(3))
    assert got == [((True, False), False, True), ((True, False), True, False)]
    # both differentiated: both need a gradient
    got.clear()
    funcgrad.grad(lambda x, y: F.apply(x, y)[0].sum(), argnums=(0, 1))(x, y)
    assert got[0][0] == (True, True)


def test_forward_mode_via_backward_and_via_jvp():
    t = np.array([1.0, 0.5, -2.0])
    _, tan = funcgrad.jvp(Exp.apply, (X,), (t,))
    assert_close(tan, np.exp(X) * t)
    _, tan = funcgrad.jvp(SinJvp.apply, (X,), (t,))
    assert_close(tan, np.cos(X) * t)
    # A jvp-only Function also gives reverse mode (its jvp is transposed).
    assert_close(funcgrad.grad(lambda x: SinJvp.apply(x).sum())(X), np.cos(X))
    check_grads(SinJvp.apply, (X,), order=2)


def test_backward_written_in_funcgrad_ops_is_differentiable():
    # d2/dx2 exp = exp: the backward's own derivative is used for the second order.
    h = funcgrad.grad(funcgrad.grad(lambda x: Exp.apply(x)))(0.4)
    assert_close(h, np.exp(0.4))


def test_once_differentiable_raises_on_second_order():
    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    assert float(funcgrad.grad(Square.apply)(3.0)) == 6.0
    with pytest.raises(RuntimeError, match="Square.*once_differentiable"):
        funcgrad.grad(funcgrad.grad(Square.apply))(3.0)


def test_backward_wrong_number_of_gradients():
    class Bad(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g, g

    # torch: RuntimeError "function BadBackward returned an incorrect number of gradients
    # (expected 1, got 2)"; a TypeError too, as before
    with pytest.raises(RuntimeError, match=r"function BadBackward returned an incorrect number "
                                           r"of gradients \(expected 1, got 2\)") as e:
        funcgrad.grad(lambda x: Bad.apply(x).sum())(X)
    assert isinstance(e.value, TypeError)


def test_backward_extra_none_gradients_allowed():
    class F(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2, None

    assert_close(funcgrad.grad(lambda x: F.apply(x).sum())(X), np.full(3, 2.0))


def test_backward_gradient_for_a_non_array_input_raises_as_torch():
    # torch 2.13: "function ScaleBackward returned a gradient different than None at
    # position 2, but the corresponding forward input was not a Variable" (it was ignored)
    class Scale(Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g * 2.0, g

    with pytest.raises(RuntimeError, match=r"ScaleBackward returned a gradient different "
                                           r"than None at position 2.*float"):
        funcgrad.grad(lambda x: Scale.apply(x, 2.0).sum())(X)


def test_list_of_outputs_is_several_outputs():
    # forward returning a list: the arrays come back as plain arrays (a view leaked out and
    # failed in the next operation), each output gets its gradient in backward
    class Pair(Function):
        @staticmethod
        def forward(ctx, x):
            return [x * 2, x * 3]

        @staticmethod
        def backward(ctx, g1, g2):
            return 2 * g1 + 3 * g2

    out = Pair.apply(X)
    assert type(out) is list and not any(isinstance(o, Tracer) for o in out)
    assert_close(out[1], 3 * host(X))
    grad = funcgrad.grad(lambda x: Pair.apply(x)[1].sum())
    assert_close(grad(X), np.full(3, 3.0))
    assert_close(funcgrad.jit(funcgrad.vmap(grad))(fnp.stack([X, X])), np.full((2, 3), 3.0))
    _, t = funcgrad.jvp(Pair.apply, (X,), (X,))
    assert type(t) is list
    assert_close(t[0], 2 * host(X))


def test_dict_output_is_arrays_and_backward_gets_a_dict_of_gradients():
    # forward returning a dict: its arrays leaked out as views (UnexpectedTracerError in the
    # next operation); backward now gets the gradients in the same dict, zeros where none
    # flowed (torch passes a dict through untracked)
    class Pair(Function):
        @staticmethod
        def forward(ctx, x):
            return {"y": x * 2, "z": x * 3}

        @staticmethod
        def backward(ctx, g):
            return g["y"] * 2 + g["z"].mul(3)

    out = Pair.apply(X)
    assert not any(isinstance(v, Tracer) for v in out.values())
    assert_close(funcgrad.grad(lambda a: Pair.apply(a)["z"].sum())(X), np.full(3, 3.0))
    both = funcgrad.jit(funcgrad.grad(lambda a: (Pair.apply(a)["y"] * Pair.apply(a)["z"]).sum()))
    assert_close(both(X), 12 * host(X))


def test_backward_wrong_shape():
    class Bad(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g[:1]

    with pytest.raises(ValueError, match=r"BadBackward.*index 0 - got \[1\] but expected shape "
                       r"compatible with \[3\]"):
        funcgrad.grad(lambda x: Bad.apply(x).sum())(X)


def test_backward_broadcast_gradient_is_summed():
    class F(Function):
        @staticmethod
        def forward(ctx, b):
            return b * 1.0

        @staticmethod
        def backward(ctx, g):
            return fnp.ones((4, 3))  # broadcast shape, as PyTorch allows

    assert_close(funcgrad.grad(lambda b: F.apply(b).sum())(X), np.full(3, 4.0))


def test_save_for_backward_non_array():
    class Bad(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward("s")
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(TypeError, match="Bad: save_for_backward expects arrays"):
        funcgrad.grad(lambda x: Bad.apply(x).sum())(X)


def test_missing_rules_and_keywords():
    class NoRule(Function):
        @staticmethod
        def forward(ctx, x):
            return x

    with pytest.raises(TypeError, match="NoRule defines neither backward nor jvp"):
        NoRule.apply(X)
    with pytest.raises(TypeError, match="Exp.apply: got an unexpected keyword argument 'j'"):
        Exp.apply(X, j=X)
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'i'"):
        Exp.apply()


def test_ctx_forward_takes_keyword_arguments_as_inputs():
    # torch 2.13: apply(x, b=tb, a=ta) of forward(ctx, x, a=1.0, b=1.0) passes the keywords
    # to forward, and they are inputs in forward's parameter order: backward's second
    # gradient goes to a, the third to b (torch gives x: [4.5, 4.5], a: 106, b: 1009).
    class F(Function):
        @staticmethod
        def forward(ctx, x, a=1.0, b=1.0):
            ctx.save_for_backward(x, a, b)
            return x * a * 2 + x * b * 3

        @staticmethod
        def backward(ctx, g):
            x, a, b = ctx.saved_tensors
            return g * (a * 2 + b * 3), (g * x * 2).sum() + 100, (g * x * 3).sum() + 1000

    class Scale(Function):
        @staticmethod
        def forward(ctx, x, scale=2.0, flag=False):
            ctx.scale = scale
            return x if flag else x * scale

        @staticmethod
        def backward(ctx, g):
            return g * ctx.scale, None, None

    x, a, b = dev(np.array([1.0, 2.0])), dev(np.array(1.5)), dev(np.array(0.5))
    gx, ga, gb = funcgrad.grad(lambda x, a, b: F.apply(x, b=b, a=a).sum(),
                               argnums=(0, 1, 2))(x, a, b)
    assert_close(gx, [4.5, 4.5])
    assert_close(ga, 106.0)
    assert_close(gb, 1009.0)
    scaled = lambda x: Scale.apply(x, flag=False, scale=3.0)  # noqa: E731
    assert_close(funcgrad.grad(lambda x: scaled(x).sum())(x), [3.0, 3.0])
    assert_close(funcgrad.jit(scaled)(x), [3.0, 6.0])
    assert_close(funcgrad.vmap(scaled)(x), [3.0, 6.0])
    assert_close(Scale.apply(x, flag=True), [1.0, 2.0])


def test_vjp_alias_for_backward():
    class Twice(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2.0

        @staticmethod
        def vjp(ctx, g):
            return g * 2.0

    assert_close(funcgrad.grad(lambda x: Twice.apply(x).sum())(X), np.full(3, 2.0))


def test_tensor_methods_inside_function():
    class Softplusish(Function):
        @staticmethod
        def forward(ctx, x, w):
            y = x.mm(w.t()).clamp(min=0.0)
            ctx.save_for_backward(x, w, y)
            return y.sum(dim=1, keepdim=True)

        @staticmethod
        def backward(ctx, g):
            x, w, y = ctx.saved_tensors
            gy = g.expand_as(y) * (y > 0)
            return gy.mm(w), gy.t().mm(x)

    rng = np.random.default_rng(1)
    x, w = rng.normal(size=(4, 3)), rng.normal(size=(2, 3))
    out = Softplusish.apply(x, w)
    assert_close(out, np.maximum(x @ w.T, 0).sum(1, keepdims=True))
    check_grads(Softplusish.apply, (x, w), order=1)
    assert type(out) is np.ndarray


class MyReLU(Function):
    """PyTorch's tutorial MyReLU, verbatim (in-place masked assignment in backward)."""

    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[input < 0] = 0
        return grad_input


def test_pytorch_tutorial_relu_in_place_update():
    x = np.array([-1.0, 0.5, 2.0, -0.3])
    assert_close(MyReLU.apply(x), np.maximum(x, 0))
    g = funcgrad.grad(lambda x: (MyReLU.apply(x) * np.arange(4.0)).sum())(x)
    assert_close(g, [0.0, 1.0, 2.0, 0.0])
    assert_close(funcgrad.jit(funcgrad.grad(lambda x: MyReLU.apply(x).sum()))(x),
                 [0.0, 1.0, 1.0, 0.0])
    assert x.tolist() == [-1.0, 0.5, 2.0, -0.3]   # the caller's array is untouched


def test_in_place_methods_rebind_the_view():
    class F(Function):
        @staticmethod
        def forward(ctx, x):
            y = x.clone()
            y.mul_(2.0).add_(1.0)
            y[0] = 0.0
            return y

        @staticmethod
        def backward(ctx, g):
            out = g.clone()
            out.mul_(2.0)
            out[0] = 0.0
            return out

    x = np.array([1.0, 2.0, 3.0])
    assert_close(F.apply(x), [0.0, 5.0, 7.0])
    check_grads(F.apply, (x,), order=2)


def _method_function(case):
    class Probe(Function):
        @staticmethod
        def forward(ctx, x, i):
            out = case(x, i)
            return out[0] if isinstance(out, tuple) else out

        @staticmethod
        def backward(ctx, g):
            return None, None

    return Probe


@pytest.mark.parametrize("name", sorted(TENSOR_METHODS))
def test_tensor_methods_match_pytorch(name):
    # Values recorded from torch 2.13 by make_torch_fixtures.py (the same case table).
    probe = _method_function(TENSOR_METHODS[name])
    want = REF[f"method_{name}"]
    x, i = dev(MX), dev(MI)
    for got in (probe.apply(x, i), funcgrad.jit(probe.apply)(x, i)):
        got = host(got)
        assert got.shape == want.shape
        assert got.dtype.kind == want.dtype.kind
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-12,
                                   atol=1e-12)


def test_value_dependent_tensor_methods_eagerly_as_torch():
    # torch 2.13 on MX/MI: nonzero is an (n, ndim) index tensor (funcgrad.numpy's tuple came
    # back), as_tuple=True NumPy's tuple, masked_select the selected elements in order,
    # `v in x` any(x == v); these have value-dependent sizes, so eager only
    seen = {}

    class Probe(Function):
        @staticmethod
        def forward(ctx, x, i):
            seen["nonzero"] = host(unwrap_view((x > 1).nonzero()))
            seen["as_tuple"] = [host(unwrap_view(a)) for a in (x > 1).nonzero(as_tuple=True)]
            seen["masked_select"] = host(unwrap_view(x.masked_select(x > 1)))
            seen["contains"] = (float(host(unwrap_view(x[1, 2]))) in x, 17.0 in x)
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g, None

    Probe.apply(dev(MX), dev(MI))
    rows, cols = np.nonzero(MX > 1)
    np.testing.assert_array_equal(seen["nonzero"], np.stack([rows, cols], 1))
    np.testing.assert_array_equal(seen["as_tuple"][0], rows)
    np.testing.assert_array_equal(seen["masked_select"], MX[MX > 1])
    assert seen["contains"] == (True, False)


def test_softmax_cross_entropy_backward_idiom_with_a_range_index():
    # the common torch backward `grad[range(n), target] -= 1` (a range index raised
    # IndexError); the gradient of the mean cross entropy is (softmax - onehot) / n
    class SoftmaxCE(Function):
        @staticmethod
        def forward(ctx, logits, target):
            logp = logits - logits.logsumexp(dim=1, keepdim=True)
            ctx.save_for_backward(logp, target)
            return -logp.gather(1, target.unsqueeze(1)).mean()

        @staticmethod
        def backward(ctx, g):
            logp, target = ctx.saved_tensors
            grad = logp.exp()
            grad[range(target.shape[0]), target] -= 1
            return grad * g / target.shape[0], None

    logits, target = MX, np.array([0, 3, 1])
    soft = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    want = (soft - np.eye(4)[target]) / 3
    for grad in (funcgrad.grad(SoftmaxCE.apply), funcgrad.jit(funcgrad.grad(SoftmaxCE.apply))):
        assert_close(grad(dev(logits), dev(target)), want, rtol=1e-12)


def test_new_tensors_are_views_and_to_dtype():
    class New(Function):
        @staticmethod
        def forward(ctx, x):
            z = x.new_zeros(x.shape)
            z[0] = 1.0                       # a view: in-place works on it
            return z.to(np.float32) + x.to(x).to("cpu").to(z.device).float()  # moved back

        @staticmethod
        def backward(ctx, g):
            return g

    out = New.apply(dev(np.zeros(2)))
    assert out.dtype == np.float32 and host(out).tolist() == [1.0, 0.0]


def test_setup_context_apply_binds_keywords_and_defaults():
    # torch 2.13: with setup_context, apply binds forward's signature (defaults filled in, so
    # inputs has every parameter); G.apply(x, scale=3.0) has gradient 3, G.apply(x) value 2x
    class Scale(Function):
        @staticmethod
        def forward(x, scale=2.0, shift=0.0):
            return x * scale + shift

        @staticmethod
        def setup_context(ctx, inputs, output):
            assert len(inputs) == 3
            ctx.scale = inputs[1]

        @staticmethod
        def backward(ctx, g):
            return g * ctx.scale, None, None

    x = dev(np.ones(2))
    assert_close(funcgrad.grad(lambda x: Scale.apply(x, scale=3.0).sum())(x), [3.0, 3.0])
    assert_close(Scale.apply(x), [2.0, 2.0])
    assert_close(Scale.apply(x, shift=1.0), [3.0, 3.0])
    with pytest.raises(TypeError, match="Scale.apply: got an unexpected keyword argument"):
        Scale.apply(x, bad=1)


class _ListArg(Function):
    """Arrays in a list argument and a list ctx attribute (PyTorch: not inputs, no grad)."""

    @staticmethod
    def forward(ctx, x, coeffs):
        ctx.coeffs = coeffs
        ctx.both = {"a": coeffs[0], "pair": (x, 2.0)}
        return x * coeffs[0] + coeffs[1]

    @staticmethod
    def backward(ctx, g):
        assert ctx.both["pair"][1] == 2.0
        return g * ctx.coeffs[0] + 0 * ctx.both["pair"][0], None


def test_arrays_inside_list_arguments_and_ctx_attributes():
    x, y = dev(np.array([1.0, 2.0])), dev(np.array([3.0, 4.0]))
    f = lambda x, y: _ListArg.apply(x, [y, y]).sum()
    for fn in (funcgrad.grad(f, argnums=(0, 1)), funcgrad.jit(funcgrad.grad(f, argnums=(0, 1)))):
        gx, gy = fn(x, y)
        assert_close(gx, [3.0, 4.0])
        assert_close(gy, [0.0, 0.0])          # not an input of the Function: no gradient
    per = funcgrad.vmap(funcgrad.grad(f))(dev(np.ones((2, 2))), dev(np.full((2, 2), 3.0)))
    assert_close(per, np.full((2, 2), 3.0))
    out, t = funcgrad.jvp(lambda x, y: _ListArg.apply(x, (y, 1.0)), (x, y), (x, y))
    assert_close(out, [4.0, 9.0])
    assert_close(t, [3.0, 8.0])               # only x's tangent goes through


def test_views_have_device():
    seen = []

    class Dev(Function):
        @staticmethod
        def forward(ctx, x):
            seen.append((x.device, x.is_cuda))
            return x.to(x.device) * 2.0

        @staticmethod
        def backward(ctx, g):
            return g * 2.0

    x = dev(np.ones(2))
    funcgrad.jit(funcgrad.grad(lambda x: Dev.apply(x).sum()))(x)
    Dev.apply(x)
    from helpers import _ON_GPU, DEVICE

    assert seen == [(DEVICE, _ON_GPU)] * 2  # is_cuda: on the GPU


class NumpySin(Function):
    """PyTorch's "extending autograd with NumPy" pattern: host computations on .numpy()."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.new_tensor(np.sin(x.detach().cpu().numpy()))

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * g.new_tensor(np.cos(x.detach().cpu().numpy()))


def test_numpy_inside_forward_and_backward_as_torch():
    # torch 2.13: the same Function (torch.as_tensor(np.sin(x.detach().numpy()))) gives
    # sin(x) and the gradient [0.9950041652780258, 0.9800665778412416] at x = [0.1, 0.2];
    # TensorView had no .numpy()
    x = dev(np.array([0.1, 0.2]))
    assert_close(NumpySin.apply(x), np.sin([0.1, 0.2]), rtol=1e-15)
    g = funcgrad.grad(lambda x: NumpySin.apply(x).sum())(x)
    assert_close(g, [0.9950041652780258, 0.9800665778412416], rtol=1e-15)
    # traced (jit, vmap): no value to hand to NumPy; the error says what to use
    from funcgrad.errors import TracerArrayConversionError

    with pytest.raises(TracerArrayConversionError, match=r"\.numpy\(\).*pure_callback"):
        funcgrad.jit(NumpySin.apply)(x)


def test_implicit_numpy_conversion_in_a_function_says_to_use_tensor_methods():
    # torch's idiom grad_input = torch.zeros_like(g); grad_input[mask] = ... ported with
    # fnp.zeros_like gives a plain NumPy array, which cannot take a view in place
    from funcgrad.errors import TracerArrayConversionError

    class Masked(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2.0

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            gi = fnp.zeros_like(g)
            gi[x > 0.15] = 2.0
            return gi

    x = dev(np.array([0.1, 0.2]))
    with pytest.raises(TracerArrayConversionError, match=r"g\.new_zeros\(g\.shape\)"):
        funcgrad.grad(lambda x: Masked.apply(x).sum())(x)


def test_calling_an_instance_raises_torchs_legacy_error():
    # torch 2.13: Exp()(x) raises RuntimeError "Legacy autograd function with non-static
    # forward method is deprecated..." (here it was "'Exp' object is not callable")
    with pytest.raises(RuntimeError, match=r"Legacy autograd function.*Exp\.apply"):
        Exp()(np.array([1.0]))


def test_forward_runs_with_grad_mode_off_and_inputs_report_requires_grad():
    # torch 2.13: inside forward is_grad_enabled() is False; an input requiring grad has
    # requires_grad True (a constant input False), what forward computes False, a saved input
    # still True in backward; grad/grad_fn of a forward tensor None, is_sparse False,
    # get_device() -1 on the CPU. requires_grad was an AttributeError here and
    # is_grad_enabled() True.
    from funcgrad_nn.autograd import is_grad_enabled

    seen = {}

    class Probe(Function):
        @staticmethod
        def forward(ctx, x, c):
            seen["fwd"] = (is_grad_enabled(), x.requires_grad, c.requires_grad,
                           (x * 2).requires_grad, x.detach().requires_grad, x.grad,
                           x.grad_fn, x.is_sparse, (x * 2).is_leaf, c.get_device())
            ctx.save_for_backward(x, x * 2)
            return x * c

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            seen["bwd"] = (x.requires_grad, y.requires_grad)
            return g * 3, None

    x, c = dev(np.ones(2)), dev(np.full(2, 2.0))
    for fn in (funcgrad.grad, lambda f: funcgrad.jit(funcgrad.grad(f))):
        seen.clear()
        assert_close(fn(lambda x: Probe.apply(x, c).sum())(x), [3.0, 3.0])
        assert seen["fwd"] == (False, True, False, False, False, None, None, False, True,
                               -1 if DEVICE == "cpu" else 0)
        assert seen["bwd"] == (True, False)
    assert is_grad_enabled()


def test_tensor_strides_and_contiguity_follow_pytorchs_views():
    # torch 2.13 (x a contiguous (3, 4) tensor): stride()/storage_offset()/is_contiguous()
    # of its views; .stride() was an AttributeError and x.t().is_contiguous() True here
    cases = {
        "x": ((4, 1), 0, True), "x.t()": ((1, 4), 0, False), "x[:, 1:]": ((4, 1), 1, False),
        "x[::2]": ((8, 1), 0, False), "x.unsqueeze(1)": ((4, 4, 1), 0, True),
        "x[1]": ((1,), 4, True), "x[:, 1]": ((4,), 1, False), "x.diagonal()": ((5,), 0, False),
        "x.t().contiguous()": ((3, 1), 0, True), "x.t().reshape(12)": ((1,), 0, True),
        "x.transpose(0, 1)[:, 1:]": ((1, 4), 4, False), "x.swapdims(0, 1)": ((1, 4), 0, False),
        "x.narrow(1, 1, 2)": ((4, 1), 1, False), "x.view(2, 6)": ((6, 1), 0, True),
    }
    got = {}

    class Layout(Function):
        @staticmethod
        def forward(ctx, x):
            for expr in cases:
                v = eval(expr)
                got[expr] = (v.stride(), v.storage_offset(), v.is_contiguous())
            got["dim"] = x.t().stride(0)
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return g

    funcgrad.jit(Layout.apply)(dev(np.zeros((3, 4))))
    assert got.pop("dim") == 1
    assert got == cases


def test_masked_augmented_assignment_under_jit_and_vmap():
    # torch 2.13: y = x.clone(); y[mask] += 2; y[mask] *= v; y[mask] = y[mask] * 2 - w[mask];
    # y[mask] = -y[mask].exp().clamp(max=50) inside forward. Under jit/vmap the traced mask
    # raised NonConcreteBooleanIndexError (x[mask] has a value-dependent size); an elementwise
    # update written back through the same mask is a where.
    class Update(Function):
        @staticmethod
        def forward(ctx, x, mask, v):
            y = x.clone()
            w = x * 3
            y[mask] += 2.0
            y[mask] *= v
            y[mask] = y[mask] * 2 - w[mask]
            y[mask] = -y[mask].exp().clamp(max=50.0)
            return y

        @staticmethod
        def backward(ctx, g):
            return g * 2, None, None

    x = np.linspace(-1, 1, 12).reshape(3, 4)
    want = [[-1.0, -0.81818182, -0.63636364, -0.45454545],
            [-0.27272727, -0.09090909, -6.16064708, -4.28253642],
            [-2.97697919, -2.06942901, -1.43855101, -1.0]]
    xs, ms = dev(x), dev(x > 0)
    assert_close(Update.apply(xs, ms, 0.5), want, rtol=1e-7)
    assert_close(funcgrad.jit(Update.apply, static_argnums=2)(xs, ms, 0.5), want, rtol=1e-7)
    batched = funcgrad.vmap(lambda x, m: Update.apply(x, m, 0.5))(
        dev(np.stack([x, x])), dev(np.stack([x > 0, x > 0])))
    assert_close(batched[1], want, rtol=1e-7)
    assert_close(funcgrad.jit(funcgrad.grad(lambda x: Update.apply(x, x > 0, 0.5).sum()))(xs),
                 np.full((3, 4), 2.0))

    class Reduce(Function):  # anything but an elementwise update still needs the values
        @staticmethod
        def forward(ctx, x, mask):
            return x[mask].sum()

        @staticmethod
        def backward(ctx, g):
            return g, None

    with pytest.raises(funcgrad.errors.NonConcreteBooleanIndexError):
        funcgrad.jit(Reduce.apply)(xs, ms)


def test_tensor_method_gaps_as_pytorch():
    # torch 2.13: x.outer needs 1-D arguments (it flattened a matrix here), msort sorts along
    # dim 0, is_signed; the in-place random fills (uniform_, normal_...) name the way to draw
    # the values with a key (they were a bare AttributeError)
    seen = {}

    class Gaps(Function):
        @staticmethod
        def forward(ctx, x):
            with pytest.raises(RuntimeError, match="outer: Expected 1-D argument self"):
                x.outer(x[0])
            seen["msort"] = host(unwrap_view(x.msort()))
            seen["signed"] = (x.is_signed(), x.bool().is_signed())
            with pytest.raises(AttributeError, match="funcgrad.random.uniform"):
                x.clone().uniform_()
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return g

    x = np.array([[3.0, 1.0], [2.0, 5.0]])
    Gaps.apply(dev(x))
    np.testing.assert_array_equal(seen["msort"], [[2.0, 1.0], [3.0, 5.0]])
    assert seen["signed"] == (True, False)


def test_scatter_views_as_strided_unique_consecutive_as_pytorch():
    # torch 2.13 values (these were AttributeErrors, div_(rounding_mode=) a TypeError and
    # transpose_ a shape error)
    seen = {}

    class Probe(Function):
        @staticmethod
        def forward(ctx, x):
            vals, inv, counts = x.unique_consecutive(return_inverse=True, return_counts=True)
            seen["uc"] = [host(unwrap_view(v)).tolist() for v in (vals, inv, counts)]
            rows, rc = x.unique_consecutive(dim=0, return_counts=True)
            seen["uc0"] = [host(unwrap_view(v)).tolist() for v in (rows, rc)]
            for name, v in {
                    "ts": x.t().as_strided((2, 3), (1, 2), 1),
                    "tail": x[1:].as_strided((2,), (3,)),
                    "sel": x.select_scatter(x.new_ones(3), 1, -1),
                    "slc": x.slice_scatter(x.new_ones(3, 2), dim=1, start=1, step=2),
                    "diag": x.diagonal_scatter(x.new_zeros(3)),
                    "div": x.clone().div_(2, rounding_mode="floor"),
                    "tr": x.clone().transpose_(0, 1)}.items():
                seen[name] = host(unwrap_view(v)).tolist()
            with pytest.raises(RuntimeError, match="out of bounds for storage"):
                x.as_strided((3,), (5,), 3)
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return g

    x = np.array([[1.0, 1.0, 2.0, 2.0], [1.0, 1.0, 2.0, 2.0], [3.0, 1.0, 1.0, 0.0]])
    Probe.apply(dev(x))
    assert seen["uc"] == [[1.0, 2.0, 1.0, 2.0, 3.0, 1.0, 0.0],
                          [[0, 0, 1, 1], [2, 2, 3, 3], [4, 5, 5, 6]], [2, 2, 2, 2, 1, 2, 1]]
    assert seen["uc0"] == [[[1.0, 1.0, 2.0, 2.0], [3.0, 1.0, 1.0, 0.0]], [2, 1]]
    assert seen["ts"] == [[1.0, 2.0, 1.0], [2.0, 1.0, 2.0]]
    assert seen["tail"] == [1.0, 2.0]
    assert seen["sel"] == seen["slc"] == [[1.0, 1.0, 2.0, 1.0], [1.0, 1.0, 2.0, 1.0],
                                          [3.0, 1.0, 1.0, 1.0]]
    assert seen["diag"] == [[0.0, 1.0, 2.0, 2.0], [1.0, 0.0, 2.0, 2.0], [3.0, 1.0, 0.0, 0.0]]
    assert seen["div"] == np.floor(x / 2).tolist()
    assert seen["tr"] == x.T.tolist()


def test_outputs_that_are_no_arrays_pass_through_under_every_transformation():
    # torch 2.13: forward returning (x * 2, "tag", None) gives the tuple back, backward gets
    # None for the non-tensor outputs, d/dx sum(out[0]) = 2. Here grad raised "str is not a
    # valid funcgrad array type"; an object in a dict output passes through too.
    class Tagged(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, "tag", {"n": "three", "y": x * 3}

        @staticmethod
        def backward(ctx, g, g_tag, g_d):
            assert g_tag is None
            return g * 2 + g_d["y"] * 10

    x = dev(np.array([1.0, 2.0]))
    out = Tagged.apply(x)
    assert out[1] == "tag" and out[2]["n"] == "three"
    assert_close(out[0], [2.0, 4.0])

    def f(x):
        y, tag, d = Tagged.apply(x)
        assert tag == "tag" and d["n"] == "three"
        return y.sum() + d["y"].sum()

    for g in (funcgrad.grad(f), funcgrad.jit(funcgrad.grad(f))):
        assert_close(g(x), [12.0, 12.0])
    assert_close(funcgrad.vmap(funcgrad.grad(f))(dev(np.ones((2, 2)))), np.full((2, 2), 12.0))

    class Named(Function):
        @staticmethod
        def forward(ctx, x):
            return "name"

        @staticmethod
        def backward(ctx, g):
            return g

    assert Named.apply(x) == "name"


class _SinCosBoth(Function):
    """backward and a jvp that deliberately disagrees with it (scaled by ctx.scale = 3)."""

    @staticmethod
    def forward(x, y):
        return x.sin() * y, (x * y).cos()

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, y = inputs
        ctx.save_for_backward(x, y)
        ctx.save_for_forward(x, y)
        ctx.scale = 3.0

    @staticmethod
    def backward(ctx, g1, g2):
        x, y = ctx.saved_tensors
        return (g1 * x.cos() * y - g2 * (x * y).sin() * y,
                g1 * x.sin() - g2 * (x * y).sin() * x)

    @staticmethod
    def jvp(ctx, tx, ty):
        x, y = ctx.saved_tensors
        return (ctx.scale * (tx * x.cos() * y + ty * x.sin()),
                ctx.scale * (-(x * y).sin() * (tx * y + ty * x)))


def test_jvp_beside_backward_is_forward_modes_rule():
    # torch 2.13 (torch.func with generate_vmap_rule=True): forward mode runs jvp, reverse
    # mode backward; jacfwd(jacrev) and jacrev(jacfwd) mix them
    from funcgrad_nn import func

    x, y = dev(np.array([0.3, 1.2])), dev(np.array([0.7, -0.5]))
    _, t = func.jvp(_SinCosBoth.apply, (x, y), (dev(np.array([1.0, 0.5])),
                                                dev(np.array([0.2, 0.1]))))
    assert_close(t[0], [2.183519, 0.007843], atol=1e-6)
    assert_close(t[1], [-0.475289, -0.220211], atol=1e-6)
    jf = funcgrad.jit(func.jacfwd(_SinCosBoth.apply, argnums=(0, 1)))(x, y)
    assert_close(jf[0][0], [[2.006207, 0.0], [0.0, -0.543537]], atol=1e-6)
    assert_close(jf[1][1], [[-0.187614, 0.0], [0.0, 2.032713]], atol=1e-6)
    jr = func.jacrev(_SinCosBoth.apply, argnums=(0, 1))(x, y)
    assert_close(jr[0][0], [[0.668736, 0.0], [0.0, -0.181179]], atol=1e-6)
    assert_close(func.hessian(lambda x: _SinCosBoth.apply(x, y)[0].sum())(x),
                 [[-0.206864, 0.0], [0.0, 0.46602]], atol=1e-6)
    assert_close(func.jacrev(func.jacfwd(lambda x: _SinCosBoth.apply(x, y)[1].sum()))(x),
                 [[-1.437705, 0.0], [0.0, -0.619002]], atol=1e-6)


def test_jvp_beside_backward_in_forward_ad_and_inside_jit():
    import funcgrad_nn.autograd.forward_ad as fwAD

    class Mixed(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_forward(x)
            return x * 2, (x > 0)

        @staticmethod
        def backward(ctx, g, _):
            return g * 2

        @staticmethod
        def jvp(ctx, t):
            x, = ctx.saved_tensors
            return t * 10 * x, None

    x = dev(np.array([1.0, 2.0]))
    with fwAD.dual_level():  # torch: tangents [10., 20.] and None
        a, b = Mixed.apply(fwAD.make_dual(x, dev(np.ones(2))))
        assert_close(fwAD.unpack_dual(a).tangent, [10.0, 20.0])
        assert fwAD.unpack_dual(b).tangent is None
    assert_close(funcgrad.grad(lambda x: Mixed.apply(x)[0].sum())(x), [2.0, 2.0])

    def inner(c):  # a class made under jit: its rules close over a traced value
        class Scale(Function):
            @staticmethod
            def forward(ctx, x):
                return c * x

            @staticmethod
            def backward(ctx, g):
                return 5 * c * g

            @staticmethod
            def jvp(ctx, t):
                return 7 * c * t

        return (funcgrad.jvp(Scale.apply, (x,), (dev(np.ones(2)),))[1],
                funcgrad.grad(lambda x: Scale.apply(x).sum())(x))

    t, g = funcgrad.jit(inner)(2.0)
    assert_close(t, [14.0, 14.0])
    assert_close(g, [10.0, 10.0])


def test_backward_runs_with_grad_mode_on():
    # torch.func's transforms (and create_graph=True) run backward with grad enabled
    import funcgrad_nn as nn

    seen = []

    class M(Function):
        @staticmethod
        def forward(ctx, x):
            seen.append(("forward", nn.autograd.is_grad_enabled()))
            return 2 * x

        @staticmethod
        def backward(ctx, g):
            seen.append(("backward", nn.autograd.is_grad_enabled()))
            return 2 * g

    with nn.autograd.no_grad():
        funcgrad.grad(lambda x: M.apply(x).sum())(dev(np.ones(2)))
    assert seen == [("forward", False), ("backward", True)]


def test_jvp_results_checked_as_pytorch():
    # torch 2.13's forward_ad: a 1-tuple for one output is fine; a tangent for a
    # non-differentiable output, a wrong count or a wrong shape are RuntimeErrors
    import funcgrad_nn.autograd.forward_ad as fwAD

    def tangent_of(cls, x):
        with fwAD.dual_level():
            out = cls.apply(fwAD.make_dual(x, dev(np.ones(2))))
            return fwAD.unpack_dual(out[0] if isinstance(out, tuple) else out).tangent

    def make(forward, jvp):
        return type("F", (Function,), {
            "forward": staticmethod(forward), "jvp": staticmethod(jvp),
            "backward": staticmethod(lambda ctx, *g: g[0])})

    def nondiff_forward(ctx, x):
        b = x * 3
        ctx.mark_non_differentiable(b)
        return x * 2, b

    x = dev(np.array([1.0, 2.0]))
    assert_close(tangent_of(make(lambda ctx, x: x * 2, lambda ctx, t: (t * 3,)), x), [3.0, 3.0])
    assert_close(tangent_of(make(nondiff_forward, lambda ctx, t: (t * 5, None)), x), [5.0, 5.0])
    with pytest.raises(RuntimeError, match="jvp returned a gradient at position 1, but  the "
                       "corresponding forward output is not a differentiable Tensor"):
        tangent_of(make(nondiff_forward, lambda ctx, t: (t * 5, t * 7)), x)
    with pytest.raises(RuntimeError, match=r"invalid number of forward gradients \(expected 2 "
                       r"but got 1\)"):
        tangent_of(make(lambda ctx, x: (x * 2, x * 3), lambda ctx, t: t * 5), x)
    with pytest.raises(RuntimeError, match=r"Tensor is of size \[2\] while the given forward "
                       r"gradient is of size \[\]"):
        tangent_of(make(lambda ctx, x: x * 2, lambda ctx, t: t.sum()), x)


def test_save_for_forward_and_save_for_backward_are_kept_apart():
    # torch 2.13: backward reads save_for_backward's x (grad [2, 6]), jvp reads
    # save_for_forward's y = 2x (tangent [200, 600]); funcgrad kept only the last call
    import funcgrad_nn.autograd.forward_ad as fwAD

    class Both(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            ctx.save_for_forward(x * 2)
            return x * x

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * 2 * x

        @staticmethod
        def jvp(ctx, t):
            y, = ctx.saved_tensors
            return t * y * 100

    x = dev(np.array([1.0, 3.0]))
    assert_close(funcgrad.grad(lambda x: Both.apply(x).sum())(x), [2.0, 6.0])
    assert_close(funcgrad.jit(funcgrad.grad(lambda x: Both.apply(x).sum()))(x), [2.0, 6.0])
    with fwAD.dual_level():
        t = fwAD.unpack_dual(Both.apply(fwAD.make_dual(x, dev(np.ones(2))))).tangent
    assert_close(t, [200.0, 600.0])
    assert_close(funcgrad.jit(funcgrad.jacfwd(Both.apply))(x), np.diag([200.0, 600.0]))
    with pytest.raises(TypeError, match="save_for_forward expects arrays"):
        type("Bad", (Function,), {
            "forward": staticmethod(lambda ctx, x: ctx.save_for_forward(3) or x),
            "jvp": staticmethod(lambda ctx, t: t)}).apply(x)


def test_backward_gradient_of_a_wrong_shape_is_pytorchs_runtime_error():
    class Sum(Function):
        @staticmethod
        def forward(ctx, x):
            return x.sum()

        @staticmethod
        def backward(ctx, g):
            return g  # shape () for an input of shape (2,): not a broadcast of it the other way

    class Rows(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return fnp.ones((3, 2))  # broadcasts to the input's shape: summed down, as torch

    x = dev(np.array([1.0, 2.0]))
    with pytest.raises(RuntimeError, match=r"Function SumBackward returned an invalid gradient "
                       r"at index 0 - got \[\] but expected shape compatible with \[2\]"):
        funcgrad.grad(Sum.apply)(x)
    assert_close(funcgrad.grad(lambda x: Rows.apply(x).sum())(x), [3.0, 3.0])


def test_backward_of_complex_inputs_is_written_in_pytorchs_convention():
    # PyTorch's backward receives and returns the conjugates of JAX's cotangents: the rule of
    # a holomorphic z*z is grad * conj(2z). torch 2.13 gives these values for this loss
    # (the same as differentiating z*z directly).
    class Sq(Function):
        @staticmethod
        def forward(ctx, z):
            ctx.save_for_backward(z)
            return z * z

        @staticmethod
        def backward(ctx, g):
            (z,) = ctx.saved_tensors
            return g * fnp.conj(2 * z)

    def loss(a):
        s = Sq.apply(a)
        return (s * fnp.conj(s)).real.sum() + s.imag.sum()

    z = dev(np.array([1 + 2j, 0.5 - 1j]))
    np.testing.assert_allclose(host(nn.func.grad(loss)(z)), [24 + 42j, 0.5 - 4j])
    assert gradcheck(lambda a: Sq.apply(a), (z,))
