"""Regenerate ``torch_fixtures.npz`` (PyTorch reference values for funcgrad_nn.autograd).

Run from the repository root when torch is importable:
``python tests/funcgrad_nn/autograd/make_torch_fixtures.py``. CI never needs torch: the tests
read the committed file. The functions are written once over a namespace ``m`` (``torch`` or
``funcgrad.numpy``) so both libraries compute the same thing.
"""

from __future__ import annotations

import pathlib

import numpy as np

OUT = pathlib.Path(__file__).with_name("torch_fixtures.npz")

X = np.array([0.3, -0.7, 1.1])
Y = np.array([[0.5, 1.5, -0.2], [0.1, 0.2, 0.3]])
V3 = np.array([1.0, -0.5, 2.0])


def two_out(m, x, y):
    return m.sin(x) * y, (x ** 2 * y).sum(0)


def scalar2(m, x, y):
    return (m.sin(x) * y * x).sum() + (y ** 3).sum()


def single(m, x):
    return m.tanh(x) * x


def scalar1(m, x):
    return (m.exp(x) * x ** 2).sum()


# Tensor methods inside a Function's forward: each case is written once for a torch tensor and
# for funcgrad_nn's TensorView (x: float64 (3, 4), i: int64 (3, 4) indices < 3); the value
# recorded is the first element when a case returns a tuple (values of max/sort/topk).
MX = np.random.default_rng(0).standard_normal((3, 4))
MI = np.array([[0, 1, 2, 0], [1, 1, 0, 2], [2, 0, 1, 1]])
def torch_or_numpy_float32(x):
    """The float32 dtype of ``x``'s library (``.type(dtype)``)."""
    if type(x).__module__.startswith("torch"):
        import torch

        return torch.float32
    return np.float32


def _spd(x):
    """A symmetric positive definite (3, 3) matrix made from ``x``."""
    return x.mm(x.t()) + x.new_tensor(np.eye(3)) * 3


def _updated(x, update):
    """``update`` applied to a copy of ``x`` through views of it; the copy afterwards."""
    y = x.clone()
    update(y)
    return y


def _view_after(x, make, update):
    """A view ``make(y)`` of a copy ``y`` of ``x``, read after ``update(y)``."""
    y = x.clone()
    view = make(y)
    update(y)
    return view * 1


def _scatter_reduce(reduce, include_self):
    return lambda x, i: x.scatter_reduce(1, i, x * 2, reduce=reduce, include_self=include_self)


def _index_reduce(reduce, include_self):
    return lambda x, i: x.index_reduce(0, i[:, 1], x * 2, reduce, include_self=include_self)


TENSOR_METHODS = {
    "where": lambda x, i: x.where(x > 0, x * 0 - 1),
    "repeat": lambda x, i: x.repeat(2, 1),
    "var_correction": lambda x, i: x.var(dim=1, correction=0),
    "std_unbiased": lambda x, i: x.std(1, unbiased=False, keepdim=True),
    "max_dim_values": lambda x, i: x.max(dim=1).values,
    "min_dim_indices": lambda x, i: x.min(0).indices,
    "argmax_dim": lambda x, i: x.argmax(dim=1, keepdim=True),
    "cumsum_dim": lambda x, i: x.cumsum(dim=0),
    "any_dim": lambda x, i: (x > 1).any(dim=1),
    "softmax": lambda x, i: x.softmax(dim=1),
    "log_softmax": lambda x, i: x.log_softmax(0),
    "logsumexp": lambda x, i: x.logsumexp(1),
    "gather": lambda x, i: x.gather(1, i),
    "scatter": lambda x, i: x.new_zeros(3, 4).scatter(1, i[:, :2], x),
    "scatter_add": lambda x, i: x.new_zeros((3, 4)).scatter_add(0, i, x),
    "scatter_reduce_value": lambda x, i: x.scatter(1, i[:, :1], 5.0),
    "index_select": lambda x, i: x.index_select(1, i[0]),
    "index_add": lambda x, i: x.new_zeros(3, 4).index_add(0, i[:, 0], x),
    "index_fill": lambda x, i: x.index_fill(1, i[0, :2], -1.0),
    "norm": lambda x, i: x.norm(),
    "norm_p1_dim": lambda x, i: x.norm(p=1, dim=0),
    "chunk": lambda x, i: x.chunk(3, dim=1)[1],
    "split": lambda x, i: x.split([1, 3], dim=1)[1],
    "narrow": lambda x, i: x.narrow(1, 1, 2),
    "unbind": lambda x, i: x.unbind(1)[2],
    "topk": lambda x, i: x.topk(2, dim=0).values,
    "topk_smallest_idx": lambda x, i: x.topk(2, largest=False).indices,
    "sort_desc": lambda x, i: x.sort(dim=1, descending=True)[0],
    "argsort": lambda x, i: x.argsort(dim=0),
    "flatten": lambda x, i: x.unsqueeze(0).flatten(1),
    "movedim": lambda x, i: x.unsqueeze(0).movedim(0, 2),
    "reshape_as": lambda x, i: x.reshape(12).reshape_as(x),
    "div_floor": lambda x, i: x.div(0.3, rounding_mode="floor"),
    "div_trunc": lambda x, i: x.div(0.3, rounding_mode="trunc"),
    "lerp": lambda x, i: x.lerp(x * 2, 0.3),
    "addmm": lambda x, i: x.new_ones(3, 3).addmm(x, x.t(), beta=0.5, alpha=2.0),
    "addcdiv": lambda x, i: x.addcdiv(x, x * x + 3, value=0.5),
    "new_full": lambda x, i: x.new_full((2,), 3.0),
    "new_tensor": lambda x, i: x.new_tensor([1.0, 2.0]) * x[0, :2],
    "erf": lambda x, i: x.erf(),
    "int": lambda x, i: (x * 3).int(),
    "inplace_chain": lambda x, i: x.clone().exp_().clamp_min_(1.5).sqrt_(),
    "inplace_addcmul": lambda x, i: x.clone().addcmul_(x, x, value=0.5),
    "index_put_": lambda x, i: x.clone().index_put_((i[0, :2],), x.new_tensor(7.0)),
    "scatter_": lambda x, i: x.clone().scatter_(1, i[:, :1], x),
    "t_": lambda x, i: x.clone().t_(),
    "median": lambda x, i: x.median(),
    "median_dim_values": lambda x, i: x.median(dim=1).values,
    "median_dim_indices": lambda x, i: x.median(0, keepdim=True).indices,
    "kthvalue": lambda x, i: x.kthvalue(2, dim=1).values,
    "kthvalue_indices": lambda x, i: x.kthvalue(3, 0, True).indices,
    "roll_keywords": lambda x, i: x.roll(shifts=1, dims=0),
    "roll_several": lambda x, i: x.roll((1, -2), (0, 1)),
    "flip_dims_keyword": lambda x, i: x.flip(dims=(0,)),
    "flip_positional": lambda x, i: x.flip(0, 1),
    "frac": lambda x, i: (x * 3).frac(),
    "select": lambda x, i: x.select(1, 2),
    "unflatten": lambda x, i: x.unflatten(1, (2, -1)),
    "ger": lambda x, i: x[0].ger(x[1]),
    "logcumsumexp": lambda x, i: x.logcumsumexp(1),
    "cummax_values": lambda x, i: x.cummax(1).values,
    "cummax_indices": lambda x, i: x.cummax(dim=0).indices,
    "cummin_indices": lambda x, i: (x * 0 + i).cummin(1)[1],
    "sizes": lambda x, i: x.new_tensor([x.nelement(), x.ndimension(), x.element_size(),
                                        x.is_floating_point(), i.is_floating_point(),
                                        x.is_complex(), x.is_contiguous()]),
    "cpu": lambda x, i: x.cpu() * 2,
    "squeeze_tuple": lambda x, i: x[None, :1].squeeze((0, 1, 2)),
    "index_copy": lambda x, i: x.index_copy(0, i[:, 0].flip(0), x * 10),
    "addmv": lambda x, i: x[:, 0].addmv(x, x[0], beta=0.5, alpha=2.0),
    "addr": lambda x, i: x.addr(x[:, 0], x[0], alpha=3.0),
    "addbmm": lambda x, i: x.new_ones(3, 3).addbmm(x[None].expand(2, 3, 4),
                                                   x.t()[None].expand(2, 4, 3), beta=2.0),
    "tensor_split_sections": lambda x, i: x.tensor_split(3, dim=1)[0],
    "tensor_split_indices": lambda x, i: x.tensor_split([1, 3], dim=1)[1],
    "take_along_dim": lambda x, i: x.take_along_dim(i, dim=1),
    "take_along_dim_flat": lambda x, i: x.take_along_dim(i[0]),
    "put": lambda x, i: x.put(i[0, :2] + 4, x.new_tensor([5.0, 6.0])),
    "put_accumulate": lambda x, i: x.clone().put_(i[1], x[0], accumulate=True),
    "unfold": lambda x, i: x.unfold(1, 2, 1),
    "unfold_step": lambda x, i: x.unfold(1, 3, 2),
    "unfold_dim0": lambda x, i: x.unfold(0, 2, 1),
    "renorm": lambda x, i: x.renorm(2, 0, 1.0),
    "renorm_p1_dim1": lambda x, i: x.renorm(1, 1, 0.5),
    "aminmax_dim": lambda x, i: x.aminmax(dim=0).max,
    "aminmax_all": lambda x, i: x.aminmax().min,
    "frexp_mantissa": lambda x, i: x.frexp().mantissa,
    "frexp_exponent": lambda x, i: x.frexp().exponent,
    "histc": lambda x, i: x.histc(bins=4, min=-1, max=1),
    "histc_data_range": lambda x, i: x.histc(bins=5),
    "sgn": lambda x, i: x.sgn(),
    "logit": lambda x, i: x.sigmoid().logit(),
    "logit_eps": lambda x, i: x.sigmoid().logit(eps=0.3),
    "xlogy": lambda x, i: x.xlogy(x.abs() + 1),
    "lgamma": lambda x, i: x.lgamma(),
    "digamma": lambda x, i: (x.abs() + 0.5).digamma(),
    "polygamma": lambda x, i: (x.abs() + 0.5).polygamma(2),  # (torch's trigamma is 5e-10 off)
    "mvlgamma": lambda x, i: (x.abs() + 2).mvlgamma(2),
    "erfinv": lambda x, i: (x / 3).erfinv(),
    "erfc": lambda x, i: x.erfc(),
    "igamma": lambda x, i: (x.abs() + 0.1).igamma(x.abs() + 1),
    "igammac": lambda x, i: (x.abs() + 0.1).igammac(x.abs() + 1),
    "data": lambda x, i: x.data * 2,
    "H": lambda x, i: x.H,
    "type_cast": lambda x, i: i.type(torch_or_numpy_float32(x)) / 3,
    "type_name_cast": lambda x, i: i.type("torch.FloatTensor") / 3,
    "equal": lambda x, i: x.new_tensor([x.equal(x * 1), x.equal(x + 1), x.equal(x[:1])]),
    "dist": lambda x, i: x.dist(x * 0 + 1, 3),
    "sum_to_size": lambda x, i: x.sum_to_size(1, 4),
    "sum_to_size_tuple": lambda x, i: x[None].sum_to_size((3, 1)),
    "masked_scatter": lambda x, i: x.masked_scatter(x > 0, x * 0 + x.sum(0)),
    "fill_diagonal_": lambda x, i: x.clone().fill_diagonal_(-5.0),
    "fill_diagonal_tall_wrap": lambda x, i: x.new_zeros(7, 2).fill_diagonal_(1.0, wrap=True),
    "fill_diagonal_tall": lambda x, i: x.new_zeros(5, 2).fill_diagonal_(1.0),
    "diag_embed": lambda x, i: x.diag_embed(),
    "diag_embed_offset": lambda x, i: x.diag_embed(offset=1, dim1=0, dim2=2),
    "diag_embed_negative": lambda x, i: x.diag_embed(-2),
    "amax_positional_keepdim": lambda x, i: x.amax(1, True),
    "argmax_positional_keepdim": lambda x, i: x.argmax(0, True),
    "all_positional": lambda x, i: (x > -1).all(1, True),
    "norm_dim_pair": lambda x, i: x.norm(dim=(0, 1)),
    "norm_p3_dim_pair_keepdim": lambda x, i: x.norm(3, (0, 1), True),
    "norm_p0": lambda x, i: x.norm(0),
    "norm_inf_dim": lambda x, i: x.norm(float("inf"), 1),
    "norm_nuc": lambda x, i: x.norm(p="nuc"),
    "quantile_positional": lambda x, i: x.quantile(0.3, 1, True),
    "quantile_nearest": lambda x, i: x.quantile(0.3, dim=0, interpolation="nearest"),
    "nanquantile": lambda x, i: x.masked_fill(x < 0, float("nan")).nanquantile(0.5, 1),
    "nanmean_positional": lambda x, i: x.masked_fill(x < 0, float("nan")).nanmean(1, True),
    "nansum_positional": lambda x, i: x.masked_fill(x < 0, float("nan")).nansum(0, True),
    "nanmedian": lambda x, i: x.masked_fill(x < -0.5, float("nan")).nanmedian(),
    "nanmedian_dim_values": lambda x, i: x.masked_fill(x < 0, float("nan")).nanmedian(1).values,
    "nanmedian_dim_indices": lambda x, i: x.masked_fill(x < -0.5, float("nan")).nanmedian(1, True).indices,
    "nanmedian_all_nan_row": lambda x, i: x.masked_fill(x.abs() < 1, float("nan")).nanmedian(0).values,
    "std_unbiased_positional": lambda x, i: x.std(False),
    "var_unbiased_positional": lambda x, i: x.var(True),
    "topk_indices_dim0": lambda x, i: x.topk(1, -2)[1],
    "mode_values": lambda x, i: i.mode().values,
    "mode_indices": lambda x, i: i.mode(1).indices,
    "mode_dim0_keepdim": lambda x, i: i.mode(0, True).indices,
    "mode_float": lambda x, i: x.round().mode(0).values,
    "cross_positional_dim": lambda x, i: x[:, :3].cross(x[:, 1:], 1),
    "cross_default_dim": lambda x, i: x[:, :3].cross(x[:, 1:] * 2),
    "byte": lambda x, i: (x > 0).byte() + i.byte(),
    "char": lambda x, i: i.char() - 5,
    "short": lambda x, i: i.short() * 300,
    "new_sizes": lambda x, i: x.new(2, 3).zero_() + 1,
    "new_data": lambda x, i: x.new([1.5, 2.5]) * x[0, :2],
    "new_empty": lambda x, i: x.new().new_tensor([x.new().numel(), x.new().dim()]),
    "resize_same_numel": lambda x, i: x.clone().resize_(2, 6),
    "resize_smaller": lambda x, i: x.clone().resize_(5),
    "resize_as_": lambda x, i: x.clone().resize_as_(x.t()),
    "requires_grad_": lambda x, i: (x.clone().requires_grad_() * 2).detach(),
    "det": lambda x, i: _spd(x).det(),
    "inverse": lambda x, i: _spd(x).inverse(),
    "pinverse": lambda x, i: x.pinverse(),
    "slogdet": lambda x, i: _spd(x).slogdet().logabsdet,
    "logdet_negative": lambda x, i: x.new_tensor([[-1.0, 0.0], [0.0, 2.0]]).logdet(),
    "logdet": lambda x, i: _spd(x).logdet(),
    "matrix_exp": lambda x, i: (_spd(x) / 10).matrix_exp(),
    "matrix_power": lambda x, i: _spd(x).matrix_power(3),
    "cholesky": lambda x, i: _spd(x).cholesky(),
    "cholesky_upper": lambda x, i: _spd(x).cholesky(upper=True),
    "cholesky_inverse": lambda x, i: _spd(x).cholesky().cholesky_inverse(),
    "cholesky_solve": lambda x, i: x.cholesky_solve(_spd(x).cholesky()),
    "triangular_solve": lambda x, i: x.triangular_solve(_spd(x).cholesky(), upper=False)[0],
    "triangular_solve_transpose": lambda x, i: x.triangular_solve(
        _spd(x).cholesky(upper=True), transpose=True).solution,
    "qr_r_abs": lambda x, i: x.t().qr().R.abs(),
    "svd_s": lambda x, i: x.svd().S,
    "svd_reconstructs": lambda x, i: (lambda u, s, v: u.mm(s.diag()).mm(v.t()))(*x.svd()),
    "cov": lambda x, i: x.cov(),
    "cov_correction_weights": lambda x, i: x.cov(correction=0, fweights=i[0] + 1),
    "setitem_row_mask": lambda x, i: _updated(x, lambda y: y.__setitem__(y[:, 0] > 0, -4.0)),
    "setitem_row_mask_row_value": lambda x, i: _updated(
        x, lambda y: y.__setitem__(y[:, 1] < 0, x[2] * 10)),
    "setitem_column_mask": lambda x, i: _updated(
        x, lambda y: y.__setitem__((slice(None), y[0] > 0), 0.5)),
    # in-place updates of views land in the array viewed (PyTorch's views share storage)
    "view_row_mul_": lambda x, i: _updated(x, lambda y: y[0].mul_(2)),
    "view_slice_zero_": lambda x, i: _updated(x, lambda y: y[:, 1:3].zero_()),
    "view_narrow_fill_": lambda x, i: _updated(x, lambda y: y.narrow(1, 0, 2).fill_(-1)),
    "view_select_copy_": lambda x, i: _updated(x, lambda y: y.select(0, 1).copy_(y[0] * 3)),
    "view_diagonal_fill_": lambda x, i: _updated(x, lambda y: y.diagonal(1).fill_(9)),
    "view_flat_add_": lambda x, i: _updated(x, lambda y: y.view(-1)[::5].add_(1)),
    "view_t_row_add_": lambda x, i: _updated(x, lambda y: y.t()[1].add_(100)),
    "view_unbind_mul_": lambda x, i: _updated(x, lambda y: y.unbind(1)[2].mul_(0)),
    "view_chain_setitem": lambda x, i: _updated(x, lambda y: y[1][2:].__setitem__(0, 7.0)),
    "view_split_clamp_": lambda x, i: _updated(x, lambda y: y.split(2, 1)[1].clamp_(max=0)),
    "view_permute_unsqueeze": lambda x, i: _updated(
        x, lambda y: y.unsqueeze(0).permute(2, 0, 1)[3].sub_(1)),
    "view_detach_data": lambda x, i: _updated(x, lambda y: (y.detach()[0].zero_(),
                                                            y.data[2].fill_(1))),
    "view_advanced_index_is_a_copy": lambda x, i: _updated(x, lambda y: y[[0, 2]].zero_()),
    "view_updated_after_its_base": lambda x, i: _updated(
        x, lambda y: (lambda row: (y.mul_(2), row.add_(1)))(y[0])),
    "view_read_after_base_setitem": lambda x, i: _view_after(
        x, lambda y: y.view(-1), lambda y: y.__setitem__((1, 1), 5.0)),
    "view_of_view_read_after_sibling_update": lambda x, i: _view_after(
        x, lambda y: y.t()[1:], lambda y: y[:, 2].fill_(-3)),
    **{f"scatter_reduce_{r}_{'self' if s else 'noself'}": _scatter_reduce(r, s)
       for r in ("sum", "prod", "mean", "amax", "amin") for s in (True, False)},
    "scatter_reduce_int_mean": lambda x, i: (i * 5).scatter_reduce(1, i, i * 3 + 1, "mean"),
    **{f"index_reduce_{r}_{'self' if s else 'noself'}": _index_reduce(r, s)
       for r in ("prod", "mean", "amax", "amin") for s in (True, False)},
}


def main() -> None:
    import torch
    from torch.autograd import functional as F

    t = lambda a: torch.tensor(a, dtype=torch.float64)
    x, y, v3 = t(X), t(Y), t(V3)
    out: dict[str, np.ndarray] = {}
    jac = F.jacobian(lambda a, b: two_out(torch, a, b), (x, y))
    for i, row in enumerate(jac):
        for j, blk in enumerate(row):
            out[f"jac_two_{i}{j}"] = blk.numpy()
    out["jac_single"] = F.jacobian(lambda a: single(torch, a), x).numpy()
    hes = F.hessian(lambda a, b: scalar2(torch, a, b), (x, y))
    for i, row in enumerate(hes):
        for j, blk in enumerate(row):
            out[f"hes_{i}{j}"] = blk.numpy()
    out["hes_single"] = F.hessian(lambda a: scalar1(torch, a), x).numpy()
    o, g = F.vjp(lambda a: single(torch, a), x, v3)
    out["vjp_out"], out["vjp"] = o.numpy(), g.numpy()
    o, g = F.jvp(lambda a: single(torch, a), x, v3)
    out["jvp"] = g.numpy()
    o, g = F.hvp(lambda a: scalar1(torch, a), x, v3)
    out["hvp"] = g.numpy()
    o, g = F.vhp(lambda a: scalar1(torch, a), x, v3)
    out["vhp"] = g.numpy()
    o, (gx, gy) = F.vjp(lambda a, b: scalar2(torch, a, b), (x, y))
    out["vjp_scalar_x"], out["vjp_scalar_y"] = gx.numpy(), gy.numpy()

    # Backward hooks on Linear: what full backward (pre) hooks see.
    torch.manual_seed(0)
    lin = torch.nn.Linear(3, 2).double()
    seen: dict[str, list] = {}
    lin.register_full_backward_pre_hook(lambda mod, go: seen.update(pre=list(go)) and None)
    lin.register_full_backward_hook(lambda mod, gi, go: seen.update(full=[gi, go]) and None)
    inp = t(Y).requires_grad_(True)
    loss = (lin(inp) ** 2).sum()
    loss.backward()
    out["hook_w"], out["hook_b"] = lin.weight.detach().numpy(), lin.bias.detach().numpy()
    out["hook_pre_go"] = seen["pre"][0].numpy()
    out["hook_gi"] = seen["full"][0][0].numpy()
    out["hook_go"] = seen["full"][1][0].numpy()
    out["hook_x_grad"] = inp.grad.numpy()
    out["hook_w_grad"] = lin.weight.grad.numpy()

    for name, case in TENSOR_METHODS.items():
        got = case(torch.tensor(MX), torch.tensor(MI))
        out[f"method_{name}"] = (got[0] if isinstance(got, tuple) else got).numpy()
    np.savez(OUT, **out)
    print(f"wrote {OUT} ({len(out)} arrays)")


if __name__ == "__main__":
    main()
