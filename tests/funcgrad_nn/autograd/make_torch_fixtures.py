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
    np.savez(OUT, **out)
    print(f"wrote {OUT} ({len(out)} arrays)")


if __name__ == "__main__":
    main()
