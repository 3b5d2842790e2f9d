"""DistributedDataParallel and SyncBatchNorm with members as threads (ThreadGroup) and as a
vmap axis: the same results as one process on the global batch."""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad
import funcgrad_nn as nn
from funcgrad.distributed import LocalCommunicator, ThreadGroup
from tests.helpers import DEVICE, dev, host

RNG = np.random.default_rng(3)
X = dev(RNG.normal(size=(12, 3)))
Y = dev(RNG.normal(size=(12, 1)))


def _model(bn: bool = False):
    nn.manual_seed(1)
    layers = [nn.Linear(3, 6)] + ([nn.BatchNorm1d(6)] if bn else []) + [nn.Tanh(),
                                                                       nn.Linear(6, 1)]
    return nn.Sequential(*layers).double().to(DEVICE)


def _copy(model):
    """A fresh copy (members build models from one template: manual_seed is process-wide,
    so threads seeding at once would race)."""
    return funcgrad.tree_util.tree_map(lambda a: a.copy(), model)


def _loss(m, x, y):
    return ((m(x) - y) ** 2).mean()


def _flat(params):
    return np.concatenate([np.ravel(host(p)) for p in params])


def _train_single(model, steps, opt_cls=nn.optim.SGD, **kw):
    opt = opt_cls(model.parameters(), **kw)
    for _ in range(steps):
        opt.step(nn.grad(_loss)(model, X, Y))
    return model


@pytest.mark.parametrize("world", [2, 3])
@pytest.mark.parametrize("jit", [False, True])
def test_ddp_steps_equal_one_process_on_the_global_batch(world, jit):
    base = _model(bn=True)
    expected = _flat(_train_single(_copy(base), 4, lr=0.05).parameters())

    def member(comm):
        nn.distributed.init(comm=comm)
        model = nn.SyncBatchNorm.convert_sync_batchnorm(_copy(base))
        ddp = nn.distributed.DistributedDataParallel(model, bucket_cap_mb=1e-4)  # tiny buckets
        opt = nn.optim.SGD(ddp.parameters(), lr=0.05)
        grad = nn.jit(nn.grad(_loss)) if jit else nn.grad(_loss)
        per = X.shape[0] // comm.size
        sl = slice(comm.rank * per, (comm.rank + 1) * per)
        for _ in range(4):
            opt.step(grad(ddp, X[sl], Y[sl]))
        return _flat(ddp.parameters())

    for got in ThreadGroup(world).run(member):
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)


def test_ddp_with_adam_and_vmap_replicas():
    expected = _flat(_train_single(_model(), 3, nn.optim.Adam, lr=0.01).parameters())
    model = _model()
    ddp = nn.distributed.DistributedDataParallel(model, axis_name="replica")
    opt = nn.optim.Adam(ddp.parameters(), lr=0.01)
    xs, ys = X.reshape(4, 3, 3), Y.reshape(4, 3, 1)
    for _ in range(3):
        # each replica differentiates its own batch; DDP averages over the vmap axis
        g = funcgrad.vmap(lambda x, y: nn.grad(_loss)(ddp, x, y), axis_name="replica",
                          out_axes=None)(xs, ys)  # averaged: the same on every replica
        opt.step(g)
    np.testing.assert_allclose(_flat(ddp.parameters()), expected, rtol=1e-10, atol=1e-12)


def test_construction_broadcasts_rank0_parameters():
    base = _model()

    def member(comm):
        nn.distributed.init(comm=comm)
        model = _copy(base)
        if comm.rank:
            for p in model.parameters():
                p[...] = comm.rank
        return _flat(nn.distributed.DistributedDataParallel(model).parameters())

    a, b = ThreadGroup(2).run(member)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, _flat(base.parameters()))


def test_no_sync_keeps_gradients_local_and_reduce_gradients_averages():
    base = _model()

    def member(comm):
        nn.distributed.init(comm=comm)
        ddp = nn.distributed.DistributedDataParallel(_copy(base))
        sl = slice(comm.rank * 6, (comm.rank + 1) * 6)
        with ddp.no_sync():
            local = nn.grad(_loss)(ddp, X[sl], Y[sl])
        assert ddp.require_backward_grad_sync
        return _flat(nn.tree_leaves(local)), _flat(nn.tree_leaves(ddp.reduce_gradients(local)))

    (l0, avg0), (l1, avg1) = ThreadGroup(2).run(member)
    global_grad = _flat(nn.tree_leaves(nn.grad(_loss)(base, X, Y)))
    assert not np.allclose(l0, l1)
    np.testing.assert_allclose(avg0, global_grad, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(avg1, global_grad, rtol=1e-10, atol=1e-12)


def test_state_dict_names_as_pytorch():
    nn.distributed.init(comm=LocalCommunicator())
    try:
        ddp = nn.parallel.DistributedDataParallel(nn.Linear(2, 2))
        assert sorted(ddp.state_dict()) == ["module.bias", "module.weight"]
    finally:
        nn.distributed.destroy_process_group()


def test_ddp_without_a_process_group_is_a_clear_error():
    with pytest.raises(RuntimeError, match="init\\(\\) first"):
        nn.distributed.DistributedDataParallel(nn.Linear(2, 2))
    with pytest.raises(TypeError, match="funcgrad_nn Module"):
        nn.distributed.DistributedDataParallel(lambda x: x)


def test_sync_batchnorm_equals_batchnorm_on_the_global_batch():
    x = RNG.normal(size=(4, 5, 3, 2))  # 4 replicas, batch 5, 3 channels, length 2
    bn = nn.BatchNorm1d(3).double()
    sync = nn.SyncBatchNorm(3, axis_name="r").double()

    def loss(m, v):
        return (m(v) ** 3).sum()

    ref_out = bn(x.reshape(20, 3, 2))
    out = funcgrad.vmap(sync, axis_name="r")(x)
    np.testing.assert_allclose(out.reshape(20, 3, 2), ref_out, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(sync.running_mean, bn.running_mean, rtol=1e-12)
    np.testing.assert_allclose(sync.running_var, bn.running_var, rtol=1e-12)
    # input and parameter gradients of the summed loss (no running statistics here: plain
    # funcgrad.grad does not write module buffers back)
    bn_g = nn.BatchNorm1d(3, track_running_stats=False).double()
    sync_g = nn.SyncBatchNorm(3, track_running_stats=False, axis_name="r").double()
    gx_ref = funcgrad.grad(lambda v: loss(bn_g, v))(x.reshape(20, 3, 2))
    gx = funcgrad.grad(lambda v: funcgrad.vmap(lambda u: loss(sync_g, u), axis_name="r")(v)
                       .sum())(x)
    np.testing.assert_allclose(gx.reshape(20, 3, 2), gx_ref, rtol=1e-10, atol=1e-12)
    gw_ref = nn.grad(loss)(bn, x.reshape(20, 3, 2)).weight
    gw = funcgrad.vmap(lambda u: nn.grad(loss)(sync, u).weight, axis_name="r")(x).sum(0)
    np.testing.assert_allclose(gw, gw_ref, rtol=1e-10)
    # eval mode and an unbound axis: plain BatchNorm
    sync.eval(), bn.eval()
    np.testing.assert_allclose(sync(x[0]), bn(x[0]), rtol=1e-12)
    sync.train()
    np.testing.assert_allclose(nn.SyncBatchNorm(3).double()(x[0]),
                               nn.BatchNorm1d(3).double()(x[0]), rtol=1e-12)


def test_convert_sync_batchnorm_keeps_parameters_and_buffers():
    m = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.Sequential(nn.BatchNorm1d(4)))
    w = m[1].weight
    m[1].running_mean[...] = 0.5
    out = nn.SyncBatchNorm.convert_sync_batchnorm(m)
    assert out is m and type(m[1]) is nn.SyncBatchNorm and type(m[2][0]) is nn.SyncBatchNorm
    assert m[1].weight is w and float(m[1].running_mean[0]) == 0.5
    assert sorted(m.state_dict()) == sorted(
        nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2),
                      nn.Sequential(nn.BatchNorm1d(4))).state_dict())


def test_sync_batchnorm_bias_false_as_torch():
    # torch 2.13: SyncBatchNorm(3, bias=False) has a weight, no bias; its repr says
    # "SyncBatchNorm(3, eps=1e-05, momentum=0.1, affine=True, bias=False, track_running_stats=True)"
    # and its state_dict keys are weight, running_mean, running_var, num_batches_tracked.
    sync = nn.SyncBatchNorm(3, bias=False, axis_name="r").double()
    assert sync.weight is not None and sync.bias is None
    assert repr(sync) == ("SyncBatchNorm(3, eps=1e-05, momentum=0.1, affine=True, bias=False, "
                          "track_running_stats=True)")
    assert list(sync.state_dict()) == ["weight", "running_mean", "running_var",
                                       "num_batches_tracked"]
    x = RNG.normal(size=(2, 4, 3))
    bn = nn.BatchNorm1d(3, bias=False).double()
    bn.weight[...] = sync.weight[...] = [0.5, 2.0, -1.0]
    out = funcgrad.vmap(sync, axis_name="r")(x)
    np.testing.assert_allclose(out.reshape(8, 3), bn(x.reshape(8, 3)), rtol=1e-12)
    converted = nn.SyncBatchNorm.convert_sync_batchnorm(nn.BatchNorm2d(3, bias=False))
    assert converted.bias is None and "bias=False" in repr(converted)
