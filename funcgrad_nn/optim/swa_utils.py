"""Weight averaging as ``torch.optim.swa_utils``: ``AveragedModel`` (SWA and EMA), ``SWALR``,
``update_bn``.

>>> import numpy as np, funcgrad_nn as nn
>>> from funcgrad_nn.optim import swa_utils
>>> model = nn.Linear(1, 1, bias=False)
>>> swa = swa_utils.AveragedModel(model)
>>> for v in (1.0, 2.0, 6.0):
...     model.weight[...] = v
...     swa.update_parameters(model)
>>> swa.module.weight, int(swa.n_averaged)
(array([[3.]], dtype=float32), 3)
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from funcgrad.backend import device_of, device_put
from funcgrad_nn.init import get_default_dtype
from funcgrad_nn.module import Module
from funcgrad_nn.optim.lr_scheduler import LRScheduler, _per_group

__all__ = ["AveragedModel", "SWALR", "update_bn", "get_ema_multi_avg_fn",
           "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn"]

AvgFn = Callable[[Any, Any, Any], Any]
MultiAvgFn = Callable[[list[Any], list[Any], Any], Any]


def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in "
                         "[0,1] range.")


def _lerp_(averaged: Any, current: Any, weight: float) -> None:
    # torch.lerp's two-branch formula, in place, so averages match PyTorch's bit for bit.
    if weight < 0.5:
        averaged += weight * (current - averaged)
    else:
        averaged[...] = current - (current - averaged) * (1 - weight)


def _as_float(x: Any) -> Any:
    """An integer array (a counter buffer) in the default float dtype: PyTorch computes an
    integer tensor times a Python float (or divided by an integer) in the default dtype, so
    with float32 the EMA of a constant count 3 with decay 0.9 is 2.9999998, truncated to 2
    on assignment, and our averages of ``num_batches_tracked`` must round the same way."""
    if x.dtype.kind in "iub":
        return x.astype(get_default_dtype())
    return x


def get_ema_avg_fn(decay: float = 0.999) -> AvgFn:
    """``decay * averaged + (1 - decay) * current`` (exponential moving average); ``decay``
    must be in [0, 1].

    >>> float(get_ema_avg_fn(0.5)(np.array(2.0), np.array(4.0), 1))
    3.0
    """
    _check_decay(decay)

    def ema_update(averaged: Any, current: Any, num_averaged: Any) -> Any:
        averaged, current = _as_float(averaged), _as_float(current)
        return decay * averaged + (1 - decay) * current

    return ema_update


def get_swa_avg_fn() -> AvgFn:
    """The running mean ``averaged + (current - averaged) / (num_averaged + 1)``.

    >>> float(get_swa_avg_fn()(np.array(2.0), np.array(5.0), 2))
    3.0
    """
    def swa_update(averaged: Any, current: Any, num_averaged: Any) -> Any:
        diff = _as_float(current - averaged)
        count = num_averaged + 1
        if not isinstance(count, int | float):
            # PyTorch's dtype rule: a float tensor divided by a 0-d integer tensor keeps the
            # float dtype (NumPy would promote a float32 array over a 0-d int64 to float64)
            count = count.astype(diff.dtype)
        return _as_float(averaged) + diff / count

    return swa_update


def get_ema_multi_avg_fn(decay: float = 0.999) -> MultiAvgFn:
    """:func:`get_ema_avg_fn` over lists of arrays (of one dtype), in place: floating arrays
    ``lerp`` towards current, integer ones (counters) take the average truncated, as PyTorch.

    >>> a = [np.array([2.0])]
    >>> get_ema_multi_avg_fn(0.5)(a, [np.array([4.0])], 1); a
    [array([3.])]
    """
    _check_decay(decay)

    def ema_update(averaged: list[Any], current: list[Any], num_averaged: Any) -> None:
        for a, c in zip(averaged, current):
            if a.dtype.kind in "fc":
                _lerp_(a, c, 1 - decay)
            else:
                a[...] = _as_float(a) * decay + _as_float(c) * (1 - decay)

    return ema_update


def get_swa_multi_avg_fn() -> MultiAvgFn:
    """:func:`get_swa_avg_fn` over lists of arrays (of one dtype), in place: a ``lerp`` with
    weight ``1 / (num_averaged + 1)`` (in the default dtype when ``num_averaged`` is an
    array, as PyTorch's tensor division).

    >>> a = [np.array([2.0])]
    >>> get_swa_multi_avg_fn()(a, [np.array([5.0])], 2); a
    [array([3.])]
    """
    def swa_update(averaged: list[Any], current: list[Any], num_averaged: Any) -> None:
        if isinstance(num_averaged, int | float):
            weight = 1 / (num_averaged + 1)
        else:  # PyTorch: a long tensor's true division gives the default float dtype
            weight = float(np.asarray(1 / (float(num_averaged) + 1), get_default_dtype()))
        for a, c in zip(averaged, current):
            if a.dtype.kind in "fc":
                _lerp_(a, c, weight)
            else:
                a[...] = a + (c - a) * weight

    return swa_update


def _params(model: Module) -> list[Any]:
    # Every parameter, frozen ones included, as torch's Module.parameters() gives them.
    return [p for _, p in model.named_parameters(include_frozen=True)]


class AveragedModel(Module):
    """A copy of ``model`` whose parameters are averaged by :meth:`update_parameters`.

    The default average is SWA's running mean; ``avg_fn(averaged, current, n)`` (returns the
    new value) or ``multi_avg_fn(averaged_list, current_list, n)`` (updates in place) change
    it, e.g. ``multi_avg_fn=get_ema_multi_avg_fn(0.999)`` for an EMA. With ``use_buffers``
    buffers are averaged too; otherwise they are copied from ``model`` on every update.
    Calling it runs the averaged copy.

    >>> import numpy as np, funcgrad_nn as nn
    >>> model = nn.Linear(1, 1, bias=False)
    >>> ema = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.5))
    >>> model.weight[...] = 0.0; ema.update_parameters(model)
    >>> model.weight[...] = 4.0; ema.update_parameters(model)
    >>> ema(np.ones((1, 1), np.float32))
    array([[2.]], dtype=float32)
    """

    def __init__(self, model: Module, device: str | None = None, avg_fn: AvgFn | None = None,
                 multi_avg_fn: MultiAvgFn | None = None, use_buffers: bool = False) -> None:
        super().__init__()
        if not isinstance(model, Module):
            raise TypeError(f"AveragedModel: model must be a Module, got {type(model).__name__}")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module.to(device)
        self.register_buffer("n_averaged", np.zeros((), np.int64))
        self.avg_fn, self.multi_avg_fn, self.use_buffers = avg_fn, multi_avg_fn, use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.module(*args, **kwargs)

    def _pairs(self, model: Module) -> tuple[list[Any], list[Any]]:
        mine, theirs = _params(self.module), _params(model)
        if self.use_buffers:
            mine += list(self.module.buffers())
            theirs += list(model.buffers())
        if len(mine) != len(theirs) or any(a.shape != b.shape for a, b in zip(mine, theirs)):
            raise ValueError("AveragedModel.update_parameters: the model's parameters do not "
                             "match the averaged copy's (different architecture?)")
        return mine, theirs

    def update_parameters(self, model: Module) -> None:
        """Fold ``model``'s current parameters into the average (the first call copies)."""
        mine, theirs = self._pairs(model)
        theirs = [_to_device_of(c, a) for a, c in zip(mine, theirs)]
        n = int(self.n_averaged)
        if n == 0:
            for a, c in zip(mine, theirs):
                a[...] = c
        elif self.multi_avg_fn is not None or self.avg_fn is None:
            # PyTorch groups the arrays by dtype (and device) and averages group by group;
            # integer buffers (counters) take the average too, truncated on assignment.
            groups: dict[Any, tuple[list[Any], list[Any]]] = {}
            for a, c in zip(mine, theirs):
                mine_g, theirs_g = groups.setdefault((device_of(a), a.dtype), ([], []))
                mine_g.append(a)
                theirs_g.append(c)
            for mine_g, theirs_g in groups.values():
                # the count as PyTorch passes it: a 0-d integer array on the arrays' device
                count = _to_device_of(self.n_averaged, mine_g[0])
                if self.multi_avg_fn is not None:
                    self.multi_avg_fn(mine_g, theirs_g, count)
                else:  # PyTorch's CPU path: the running mean, array by array
                    for a, c in zip(mine_g, theirs_g):
                        a[...] = get_swa_avg_fn()(a, c, count)
        else:
            for a, c in zip(mine, theirs):
                a[...] = self.avg_fn(a, c, _to_device_of(self.n_averaged, a))
        if not self.use_buffers:
            for b, c in zip(self.module.buffers(), model.buffers()):
                b[...] = _to_device_of(c, b)
        count = self.n_averaged + 1  # NumPy: a scalar; the buffer stays a 0-d array
        self.n_averaged = np.asarray(count) if isinstance(count, np.generic) else count


def _to_device_of(x: Any, like: Any) -> Any:
    dev = device_of(like)
    return x if device_of(x) == dev else device_put(x, dev)


class SWALR(LRScheduler):
    """Anneal each group's learning rate to ``swa_lr`` over ``anneal_epochs`` epochs
    (``"cos"`` or ``"linear"``), then hold it, as PyTorch's ``SWALR``.

    >>> import numpy as np
    >>> from funcgrad_nn import optim
    >>> opt = optim.SGD([np.zeros(1)], lr=1.0)
    >>> sched = SWALR(opt, swa_lr=0.1, anneal_epochs=2, anneal_strategy="linear")
    >>> lrs = []
    >>> for _ in range(3):
    ...     sched.step(); lrs.append(round(sched.get_last_lr()[0], 4))
    >>> lrs
    [0.55, 0.1, 0.1]
    """

    def __init__(self, optimizer: Any, swa_lr: float | Iterable[float], anneal_epochs: int = 10,
                 anneal_strategy: str = "cos", last_epoch: int = -1) -> None:
        for lr, group in zip(_per_group("swa_lr", optimizer, swa_lr), optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self._anneal_strategy = anneal_strategy  # PyTorch's state_dict key
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    def anneal_func(self, t: float) -> float:
        """The annealing weight at ``t`` in [0, 1]: ``(1 - cos(pi t)) / 2`` or ``t``."""
        if self._anneal_strategy == "cos":
            return (1 - math.cos(math.pi * t)) / 2
        return t

    @staticmethod
    def _get_initial_lr(lr: float, swa_lr: float, alpha: float) -> float:
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list[float]:  # noqa: D102
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        groups = self.optimizer.param_groups
        prev_lrs = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(groups, prev_lrs)]


def update_bn(loader: Iterable[Any], model: Module, device: str | None = None) -> None:
    """Recompute BatchNorm running statistics with one pass over ``loader`` (cumulative
    averages), as PyTorch's ``update_bn``; the model's training mode is restored.

    >>> import numpy as np, funcgrad_nn as nn
    >>> model = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    >>> update_bn([np.ones((4, 2), np.float32)], model)
    >>> int(model[1].num_batches_tracked)
    1
    """
    from funcgrad_nn.layers.normalization import _BatchNorm

    momenta = {}
    for m in model.modules():
        if isinstance(m, _BatchNorm) and m.track_running_stats:
            m.reset_running_stats()
            momenta[m] = m.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for m in momenta:
        m.momentum = None
    for batch in loader:
        x = batch[0] if isinstance(batch, list | tuple) else batch
        if device is not None:
            x = device_put(x, device)
        model(x)
    for m, mom in momenta.items():
        m.momentum = mom
    model.train(was_training)
