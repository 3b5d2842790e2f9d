"""PyTorch's ``torch.func`` recipes ported to ``funcgrad_nn.func`` (imports changed), replayed
against PyTorch's results: model ensembling (``stack_module_state`` and ``vmap`` over
``functional_call``), per-sample gradients, Jacobians and Hessians of a model with BatchNorm
in eval mode; the neural tangent kernel tutorial (Jacobian contraction and NTK-vector
products) and an input-gradient saliency map. ``fixtures/make_program_fixtures.py``
(``func``, ``ntk``) holds the PyTorch programs.
"""

import numpy as np
import safetensors.numpy

import funcgrad
import funcgrad.numpy as fnp
import funcgrad_nn as nn
from funcgrad_nn import functional as F
from funcgrad_nn.func import (
    functional_call,
    grad,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    stack_module_state,
    vjp,
    vmap,
)
from tests.funcgrad_nn.programs.fixtures.program_data import data
from tests.funcgrad_nn.programs.test_programs import HERE, close
from tests.helpers import DEVICE, dev


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.bn, self.fc2 = nn.Linear(5, 8), nn.BatchNorm1d(8), nn.Linear(8, 3)

    def forward(self, x):
        return self.fc2(fnp.tanh(self.bn(self.fc1(x))))


def test_ensembling_per_sample_gradients_jacobians_and_hessians():
    ref = safetensors.numpy.load_file(str(HERE / "func.safetensors"))
    models = []
    for i in range(4):
        m = MLP()
        m.load_state_dict({k[len(f"init.{i}."):]: v for k, v in ref.items()
                           if k.startswith(f"init.{i}.")})
        models.append(m.to(DEVICE).eval())
    x, y = dev(data("func"))
    params, buffers = stack_module_state(models)
    assert list(params) == ["fc1.weight", "fc1.bias", "bn.weight", "bn.bias", "fc2.weight",
                            "fc2.bias"]

    def fmodel(params, buffers, x):
        return functional_call(models[0], (params, buffers), (x,))

    close(vmap(fmodel, in_dims=(0, 0, None))(params, buffers, x), ref["ensemble_same"])
    minibatches = fnp.broadcast_to(x[:4, None], (4, 3, 5))
    close(vmap(fmodel)(params, buffers, minibatches), ref["ensemble_split"])

    model = models[1]
    p, b = dict(model.named_parameters()), dict(model.named_buffers())

    def loss(params, sample, target):
        pred = functional_call(model, (params, b), (sample[None],))
        return F.cross_entropy(pred, target[None])

    per_sample = vmap(grad(loss), in_dims=(None, 0, 0))(p, x, y)
    assert list(per_sample) == list(p)  # PyTorch's order, not sorted
    for k, v in per_sample.items():
        close(v, ref[f"per_sample.{k}"])
    close(jacrev(lambda x: functional_call(model, (p, b), (x,)), chunk_size=4)(x), ref["jacrev"])
    close(jacfwd(lambda x: functional_call(model, (p, b), (x,)))(x), ref["jacfwd"])
    close(hessian(lambda x: functional_call(model, (p, b), (x,)).sum())(x[:2]), ref["hessian_x"])
    head = {"fc2.weight": p["fc2.weight"], "fc2.bias": p["fc2.bias"]}
    h = hessian(lambda head: loss({**p, **head}, x[0], y[0]))(head)
    assert [list(v) for v in h.values()] == [list(head)] * 2 and list(h) == list(head)
    for k1 in h:
        for k2 in h[k1]:
            close(h[k1][k2], ref[f"hessian_head.{k1}.{k2}"])
    assert np.float32 == h["fc2.weight"]["fc2.bias"].dtype


def test_maml_with_functional_call_grad_of_grad_and_vmap_over_tasks():
    # the torch.func MAML recipe: two inner SGD steps through functional_call (grad inside
    # grad), vmap over tasks, Adam on the meta-loss. PyTorch 2.13's run of this program (the
    # same rng draws, `torch.func` imports) gave these losses and final weights.
    rng = np.random.default_rng(7)
    init = {"0.weight": rng.normal(size=(16, 1)).astype(np.float32),
            "0.bias": rng.normal(size=16).astype(np.float32) * 0.1,
            "2.weight": rng.normal(size=(1, 16)).astype(np.float32) * 0.3,
            "2.bias": np.zeros(1, np.float32)}
    X = rng.uniform(-5, 5, (4, 2, 10, 1)).astype(np.float32)
    Y = (rng.uniform(0.5, 2, (4, 1, 1, 1))
         * np.sin(X + rng.uniform(0, 3, (4, 1, 1, 1)))).astype(np.float32)
    X, Y = dev((X, Y))
    model = nn.Sequential(nn.Linear(1, 16), nn.ReLU(), nn.Linear(16, 1))
    model.load_state_dict(init)
    model.to(DEVICE)

    def loss(p, x, y):
        return F.mse_loss(functional_call(model, p, (x,)), y)

    def adapt(p, x, y):
        for _ in range(2):
            g = grad(loss)(p, x, y)
            p = {k: p[k] - 0.1 * g[k] for k in p}
        return p

    def task(p, xs, ys, xq, yq):
        return loss(adapt(p, xs, ys), xq, yq)

    def meta_loss(p):
        return fnp.mean(vmap(task, in_dims=(None, 0, 0, 0, 0))(p, X[:, 0], Y[:, 0], X[:, 1],
                                                                Y[:, 1]))

    opt = nn.optim.Adam(model.parameters(), 1e-2)
    losses = []
    for _ in range(3):
        value, grads = funcgrad.value_and_grad(meta_loss)(dict(model.named_parameters()))
        opt.step([grads[n] for n, _ in model.named_parameters()])
        losses.append(float(value))
    close(losses, [9.40218734741211, 7.130738258361816, 6.235659122467041])
    close(model[2].weight.ravel()[:4], [-0.29355573654174805, -0.24302858114242554,
                                        0.3360758125782013, -0.2173885554075241])
    close(model[0].bias[:4], [-0.1344214528799057, -0.07180996239185333,
                              -0.16742920875549316, -0.15625527501106262])


def test_neural_tangent_kernel_and_saliency():
    ref = safetensors.numpy.load_file(str(HERE / "ntk.safetensors"))
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 8), nn.SiLU(), nn.Linear(8, 3))
    model.load_state_dict({k[5:]: v for k, v in ref.items() if k.startswith("init.")})
    model.to(DEVICE)
    x1, x2 = dev(data("ntk"))
    params = dict(model.named_parameters())

    def fnet_single(params, x):
        return functional_call(model, params, (x[None],))[0]

    def ntk_jacobian_contraction(x1, x2, compute):
        jac1 = vmap(jacrev(fnet_single), (None, 0))(params, x1).values()
        jac2 = vmap(jacrev(fnet_single), (None, 0))(params, x2).values()
        flat = lambda j: j.reshape(*j.shape[:2], -1)  # j.flatten(2)
        einsum = {"full": "Naf,Mbf->NMab", "trace": "Naf,Maf->NM", "diagonal": "Naf,Maf->NMa"}
        return fnp.stack([fnp.einsum(einsum[compute], flat(j1), flat(j2))
                          for j1, j2 in zip(jac1, jac2)]).sum(0)

    def ntk_vps(x1, x2):
        def get_ntk(x1, x2):
            output, vjp_fn = vjp(lambda p: fnet_single(p, x1), params)

            def get_ntk_slice(vec):
                return jvp(lambda p: fnet_single(p, x2), (params,), vjp_fn(vec))[1]

            basis = fnp.eye(output.size, dtype=output.dtype).reshape(output.size, -1)
            return vmap(get_ntk_slice)(basis)

        return vmap(vmap(get_ntk, (None, 0)), (0, None))(x1, x2)

    for compute in ("full", "trace", "diagonal"):
        close(ntk_jacobian_contraction(x1, x2, compute), ref[compute])
    close(ntk_vps(x1, x2), ref["vps"])
    # saliency: |d top logit / d input| per sample (PyTorch: backward of the gathered scores)
    top = lambda x: fnp.max(model(x[None])[0])
    close(fnp.abs(vmap(grad(top))(x1)), ref["saliency"])
