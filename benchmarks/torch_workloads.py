"""PyTorch eager versions of the workloads in ``workloads.py``, for the runner's torch column.

Each function builds the same data as its ``workloads`` namesake (same seeds, same shapes,
float64 unless said), checks torch's result against the hand-written NumPy one, and returns
a zero-argument callable computing it with torch eager (``torch.autograd`` /
``torch.func``), one thread. ``FOR_CASE`` maps benchmark case names (``bench_autodiff``,
``bench_jacobians``, ``bench_jit``: a jit case and its ``_eager`` twin compute the same thing)
to these. Only imported when torch is importable.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

torch.set_num_threads(1)


def _check(got, want, rtol=1e-9, atol=1e-10) -> None:
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=rtol, atol=atol)


def chain100() -> Callable[[], object]:
    x = torch.tensor(np.linspace(0.1, 1.0, 16), requires_grad=True)

    def run():
        v = x
        for _ in range(25):
            v = torch.sin(v)
            v = v * 1.1
            v = v + 0.1
            v = v * v
        (g,) = torch.autograd.grad(v.sum(), x)
        return g

    import workloads
    _check(run().numpy(), workloads.chain100()[1]()[1], rtol=1e-10)
    return run


def mlp(dtype=np.float64, sizes=(784, 512, 512, 10), batch=128) -> Callable[[], object]:
    rng = np.random.default_rng(0)
    params = []
    for m, n in zip(sizes[:-1], sizes[1:]):
        w = (rng.standard_normal((m, n)) / np.sqrt(m)).astype(dtype)
        params += [torch.tensor(w, requires_grad=True),
                   torch.zeros(n, dtype=torch.from_numpy(w).dtype, requires_grad=True)]
    x = torch.tensor(rng.standard_normal((batch, sizes[0])).astype(dtype))
    labels = torch.tensor(rng.integers(0, sizes[-1], batch))

    def run():
        h = x
        for i in range(0, len(params) - 2, 2):
            h = torch.tanh(h @ params[i] + params[i + 1])
        logits = h @ params[-2] + params[-1]
        loss = torch.nn.functional.cross_entropy(logits, labels)
        return loss, torch.autograd.grad(loss, params)

    import workloads
    want_value, _ = workloads.mlp(dtype, sizes=sizes, batch=batch)[1]()
    _check(run()[0].detach().numpy(), want_value, rtol=1e-4 if dtype == np.float32 else 1e-10)
    return run


def hessian(d: int = 400) -> Callable[[], object]:
    rng = np.random.default_rng(0)
    a = torch.tensor(rng.standard_normal((d, d)) / np.sqrt(d))
    b = torch.tensor(rng.standard_normal((d, d)) / np.sqrt(d))
    x = torch.tensor(rng.standard_normal(d))

    def f(x):
        return torch.logsumexp(a @ x, 0) + 0.5 * (x @ b @ x) + torch.sin(x).sum()

    hess = torch.func.hessian(f)
    import workloads
    _check(hess(x).numpy(), workloads.hessian(d)[1]())
    return lambda: hess(x)


def hvp_rosenbrock(n: int = 10_000) -> Callable[[], object]:
    """Reverse over reverse, torch's usual way to write a Hessian-vector product."""
    rng = np.random.default_rng(2)
    x = torch.tensor(rng.uniform(-1.0, 2.0, n), requires_grad=True)
    v = torch.tensor(rng.standard_normal(n))

    def run():
        y = (100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2).sum()
        (g,) = torch.autograd.grad(y, x, create_graph=True)
        (hv,) = torch.autograd.grad(g, x, v)
        return hv

    import workloads
    _check(run().numpy(), workloads.hvp_rosenbrock(n)[1](), rtol=1e-10, atol=1e-8)
    return run


def jac_tanh(mode: str, n_in: int = 200, n_out: int = 300) -> Callable[[], object]:
    rng = np.random.default_rng(1)
    w = torch.tensor(rng.standard_normal((n_out, n_in)) / np.sqrt(n_in))
    x = torch.tensor(rng.standard_normal(n_in))
    jac = (torch.func.jacfwd if mode == "fwd" else torch.func.jacrev)(lambda x: torch.tanh(w @ x))
    import workloads
    _check(jac(x).numpy(), workloads.jac_tanh(mode, n_in=n_in, n_out=n_out)[1]())
    return lambda: jac(x)


def jac_tanh_arg(mode: str, n: int = 800) -> Callable[[], object]:
    rng = np.random.default_rng(3)
    w = torch.tensor(rng.standard_normal((n, n)) / np.sqrt(n))
    x = torch.tensor(rng.standard_normal(n))
    jac = (torch.func.jacfwd if mode == "fwd" else torch.func.jacrev)(
        lambda x, w: torch.tanh(w @ x))
    import workloads
    _check(jac(x, w).numpy(), workloads.jac_tanh_arg(mode, n)[1]())
    return lambda: jac(x, w)


def hessian_arg(d: int = 800) -> Callable[[], object]:
    rng = np.random.default_rng(4)
    w = torch.tensor(rng.standard_normal((d, d)) / np.sqrt(d))
    x = torch.tensor(rng.standard_normal(d))
    hess = torch.func.hessian(lambda x, w: torch.sin(w @ x).sum() + (x ** 3).sum())
    import workloads
    _check(hess(x, w).numpy(), workloads.hessian_arg(d)[1]())
    return lambda: hess(x, w)


_SMALL = dict(sizes=(32, 64, 64, 10), batch=32)

#: benchmark case name (without an ``_eager`` suffix) -> torch setup
FOR_CASE: dict[str, Callable[[], Callable[[], object]]] = {
    "chain100_grad": chain100,
    "mlp_b128_f32": lambda: mlp(np.float32),
    "mlp_b128_f64": lambda: mlp(np.float64),
    "mlp_small_b32_f64": lambda: mlp(np.float64, **_SMALL),
    "hessian_d100": lambda: hessian(100),
    "hessian_d400": lambda: hessian(400),
    "hvp_rosenbrock_1e4": hvp_rosenbrock,
    "hvp_rosenbrock_1e4_fwd_rev": hvp_rosenbrock,
    "hvp_rosenbrock_1e4_rev_rev": hvp_rosenbrock,
    "jacfwd_tanh_200x300": lambda: jac_tanh("fwd"),
    "jacrev_tanh_200x300": lambda: jac_tanh("rev"),
    "jacfwd_tanh_arg_800": lambda: jac_tanh_arg("fwd", 800),
    "jacfwd_tanh_arg_20": lambda: jac_tanh_arg("fwd", 20),
    "hessian_arg_800": lambda: hessian_arg(800),
}
