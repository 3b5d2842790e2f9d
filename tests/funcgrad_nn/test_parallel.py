"""funcgrad_nn.parallel: DataParallel is PyTorch's wrapper (keys ``module.*``) computing what
the wrapped module computes on the whole batch."""

import numpy as np
import pytest

import funcgrad_nn as nn
from tests.helpers import DEVICE, assert_allclose, dev, host


def _model():
    nn.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Tanh(),
                         nn.Linear(4, 2)).to(DEVICE)


def test_data_parallel_wraps_under_module_and_matches_the_module():
    x = dev(np.random.default_rng(0).normal(size=(6, 3)).astype(np.float32))
    plain, dp = _model(), nn.DataParallel(_model()).to(DEVICE)
    # torch.nn.DataParallel(model).state_dict() keys, as PyTorch 2.13 gives them
    assert list(dp.state_dict()) == [
        "module.0.weight", "module.0.bias", "module.1.weight", "module.1.bias",
        "module.1.running_mean", "module.1.running_var", "module.1.num_batches_tracked",
        "module.3.weight", "module.3.bias"]
    assert nn.parallel.DataParallel is nn.DataParallel and dp.device_ids == [] and dp.dim == 0

    def loss(m, x):
        return (m(x) ** 2).mean()

    lp, gp = nn.value_and_grad(loss)(plain, x)
    ld, gd = nn.jit(nn.value_and_grad(loss))(dp, x)
    assert_allclose(host(ld), host(lp), rtol=1e-6)
    for a, b in zip(nn.tree_leaves(gd), nn.tree_leaves(gp)):
        assert_allclose(host(a), host(b), rtol=1e-5, atol=1e-7)
    assert_allclose(host(dp.module[1].running_mean), host(plain[1].running_mean), rtol=1e-6)
    dp.eval()
    assert not dp.module.training
    # a PyTorch DataParallel checkpoint loads into the wrapper, its module's into the module
    plain.load_state_dict({k[len("module."):]: v for k, v in dp.state_dict().items()})
    with pytest.raises(TypeError, match="wraps a funcgrad_nn Module"):
        nn.DataParallel(lambda x: x)
