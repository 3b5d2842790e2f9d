"""AdaptiveLogSoftmaxWithLoss: Grave et al.'s efficient softmax approximation, as PyTorch's."""

from __future__ import annotations

import collections
from collections.abc import Sequence
from typing import Any

import funcgrad.numpy as fnp
from funcgrad.core import is_tracer
from funcgrad_nn import functional as F
from funcgrad_nn.containers import ModuleList, Sequential
from funcgrad_nn.layers.linear import Linear
from funcgrad_nn.module import Module, bad_input

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

#: forward's result, as PyTorch's ``_ASMoutput``: the target log-probabilities and the loss
#: (their negated mean).
ASMoutput = collections.namedtuple("ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Adaptive softmax (Grave et al. 2016) as ``torch.nn.AdaptiveLogSoftmaxWithLoss``: the
    classes below ``cutoffs[0]`` (the frequent ones) are scored by the ``head`` along with one
    logit per tail cluster; the classes of cluster ``i`` (``cutoffs[i]`` to ``cutoffs[i + 1]``)
    by ``tail[i]``, a projection to ``in_features // div_value ** (i + 1)`` features and a
    linear layer. Same parameters and names as PyTorch (``head.weight``,
    ``tail.0.0.weight``, ...).

    ``forward(input, target)`` returns ``(output, loss)`` with ``output`` the log-probability
    of each target and ``loss`` the mean negative log-likelihood; ``log_prob(input)`` gives
    all ``(N, n_classes)`` log-probabilities and ``predict(input)`` the most likely classes.
    Every cluster's tail runs on the whole batch (so ``jit``/``vmap`` see static shapes); the
    rows of other clusters are masked out, so values and gradients are PyTorch's.

    >>> import numpy as np
    >>> asm = AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=[4, 8], div_value=2.0)
    >>> out, loss = asm(np.ones((3, 8), np.float32), np.array([1, 5, 9]))
    >>> out.shape, loss.shape, asm.log_prob(np.ones((3, 8), np.float32)).shape
    ((3,), (), (3, 10))
    """

    def __init__(self, in_features: int, n_classes: int, cutoffs: Sequence[int],
                 div_value: float = 4.0, head_bias: bool = False, device: str | None = None,
                 dtype: Any = None) -> None:
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted "
                             "in an increasing order, where each value is between 1 and "
                             f"n_classes-1 ({n_classes - 1}), got {cutoffs}")
        self.in_features, self.n_classes = in_features, n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value, self.head_bias = div_value, head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, device=device,
                           dtype=dtype)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hsz = int(in_features // (div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(
                Linear(in_features, hsz, bias=False, device=device, dtype=dtype),
                Linear(hsz, osz, bias=False, device=device, dtype=dtype)))

    def reset_parameters(self) -> None:
        self.head.reset_parameters()
        for i2h, h2o in self.tail:
            i2h.reset_parameters()
            h2o.reset_parameters()

    def forward(self, input_: Any, target_: Any) -> ASMoutput:  # PyTorch's argument names
        input, target = input_, target_
        in_shape, t_shape = tuple(fnp.shape(input)), tuple(fnp.shape(target))
        if len(t_shape) == 1:
            if len(in_shape) != 2:
                raise bad_input(self, f"1D target expects 2D input, got input shape {in_shape}",
                                "pass input (N, in_features)")
            if in_shape[0] != t_shape[0]:
                raise bad_input(self, f"input {in_shape} and target {t_shape} should have the "
                                      "same size in the batch dimension",
                                "give one target per input row")
        elif len(t_shape) == 0:
            if len(in_shape) != 1:
                raise bad_input(self, f"0D target expects 1D input, got input shape {in_shape}",
                                "pass input (in_features,)")
        else:
            raise bad_input(self, f"0D or 1D target expected, got shape {t_shape} "
                                  "(multi-target not supported)", "pass one class per row")
        batched = len(t_shape) == 1
        x = input if batched else input[None]
        t = target if batched else target[None]
        known = F._host_value(t)  # host NumPy: fnp.min under jit would trace even a constant
        if known is not None and known.size:
            lo, hi = int(known.min()), int(known.max())
            if lo < 0 or hi >= self.n_classes:
                raise bad_input(self, f"target values should be in [0, {self.n_classes - 1}], "
                                      f"but values in range [{lo}, {hi}] were found",
                                "pass class indices below n_classes")
        head_logprob = F.log_softmax(self.head(x), 1)
        # Each row's head column: its own class in the shortlist, else its cluster's logit.
        cluster = sum(((t >= c) for c in self.cutoffs[:-1]), fnp.zeros_like(t))
        gather = fnp.where(t < self.shortlist_size, t, self.shortlist_size + cluster - 1)
        output = fnp.take_along_axis(head_logprob, gather[:, None], 1)[:, 0]
        for i, (low, high) in enumerate(zip(self.cutoffs[:-1], self.cutoffs[1:])):
            member = (t >= low) & (t < high)
            local = fnp.clip(t - low, 0, high - low - 1)
            cluster_logprob = F.log_softmax(self.tail[i](x), 1)
            picked = fnp.take_along_axis(cluster_logprob, local[:, None], 1)[:, 0]
            output = output + fnp.where(member, picked, fnp.zeros_like(picked))
        loss = fnp.mean(-output)
        return ASMoutput(output if batched else output[0], loss)

    def _full_log_prob(self, input: Any, head_output: Any) -> Any:
        head_logprob = F.log_softmax(head_output, 1)
        parts = [head_logprob[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster_logprob = F.log_softmax(self.tail[i](input), 1)
            parts.append(cluster_logprob + head_logprob[:, self.shortlist_size + i][:, None])
        return fnp.concatenate(parts, axis=1)

    def log_prob(self, input: Any) -> Any:
        """Log-probabilities of every class, ``(N, n_classes)`` (or ``(n_classes,)``).

        >>> import numpy as np
        >>> asm = AdaptiveLogSoftmaxWithLoss(4, 6, [2])
        >>> float(np.exp(asm.log_prob(np.ones((1, 4), np.float32))).sum().round(5))
        1.0
        """
        batched = fnp.ndim(input) == 2
        x = input if batched else input[None]
        out = self._full_log_prob(x, self.head(x))
        return out if batched else out[0]

    def predict(self, input: Any) -> Any:
        """The most likely class of each row, ``(N,)`` (as ``log_prob(input).argmax(1)``,
        computing the tails only where the head's best guess is a cluster).

        >>> import numpy as np
        >>> AdaptiveLogSoftmaxWithLoss(4, 6, [2]).predict(np.ones((3, 4), np.float32)).shape
        (3,)
        """
        head_output = self.head(input)
        best = fnp.argmax(head_output, axis=1)
        in_tail = best >= self.shortlist_size
        if not is_tracer(in_tail) and not bool(fnp.any(in_tail)):
            return best
        full = fnp.argmax(self._full_log_prob(input, head_output), axis=1)
        return fnp.where(in_tail, full, best)
