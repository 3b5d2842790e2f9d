"""The extension points users subclass (as in PyTorch) say what is missing when left out."""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad_nn as nn
from funcgrad_nn import data, optim


def test_module_without_forward():
    class NoForward(nn.Module):
        pass

    # torch 2.13: NotImplementedError('Module [NoForward] is missing the required "forward"
    # function')
    with pytest.raises(NotImplementedError,
                       match=r'^Module \[NoForward\] is missing the required "forward" function$'):
        NoForward()(np.ones(2))


def test_dataset_without_getitem():
    class NoItems(data.Dataset):
        pass

    with pytest.raises(NotImplementedError, match="NoItems must implement __getitem__"):
        NoItems()[0]


def test_optimizer_without_update_rule():
    class NoRule(optim.Optimizer):
        def __init__(self, params):
            super().__init__(params, {"lr": 0.1})

    p = np.ones(2)
    with pytest.raises(NotImplementedError, match="NoRule must define _transform"):
        NoRule([p]).step([np.ones(2)])


def test_scheduler_without_schedule():
    class NoSchedule(optim.lr_scheduler.LRScheduler):
        pass

    opt = optim.SGD([np.ones(2)], lr=0.1)
    with pytest.raises(NotImplementedError, match="NoSchedule must define get_lr"):
        NoSchedule(opt).step()
