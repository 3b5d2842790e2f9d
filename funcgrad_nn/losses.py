"""Loss modules (PyTorch names and defaults) over ``funcgrad_nn.functional``."""

from __future__ import annotations

from typing import Any

from funcgrad_nn import functional as F
from funcgrad_nn.module import Module

__all__ = ["BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "HuberLoss", "KLDivLoss",
           "L1Loss", "MSELoss", "NLLLoss", "SmoothL1Loss"]


class _Loss(Module):
    _extra: tuple[str, ...] = ()

    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        F._check_reduction(reduction, type(self).__name__, self._extra)
        self.reduction = reduction

    def extra_repr(self) -> str:
        return f"reduction={self.reduction!r}"


class MSELoss(_Loss):
    """Mean squared error.

    >>> import numpy as np
    >>> MSELoss()(np.array([0.0, 2.0]), np.zeros(2))
    array(2.)
    """

    def forward(self, input: Any, target: Any) -> Any:
        return F.mse_loss(input, target, self.reduction)


class L1Loss(_Loss):
    """Mean absolute error.

    >>> import numpy as np
    >>> L1Loss(reduction="sum")(np.array([-1.0, 2.0]), np.zeros(2))
    array(3.)
    """

    def forward(self, input: Any, target: Any) -> Any:
        return F.l1_loss(input, target, self.reduction)


class HuberLoss(_Loss):
    """Huber loss with threshold ``delta``.

    >>> import numpy as np
    >>> HuberLoss(delta=1.0)(np.array([3.0]), np.zeros(1))
    array(2.5)
    """

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction)
        self.delta = delta

    def forward(self, input: Any, target: Any) -> Any:
        return F.huber_loss(input, target, self.reduction, self.delta)


class SmoothL1Loss(_Loss):
    """Smooth L1 loss with threshold ``beta``.

    >>> import numpy as np
    >>> SmoothL1Loss(beta=2.0)(np.array([1.0]), np.zeros(1))
    array(0.25)
    """

    def __init__(self, reduction: str = "mean", beta: float = 1.0) -> None:
        super().__init__(reduction)
        self.beta = beta

    def forward(self, input: Any, target: Any) -> Any:
        return F.smooth_l1_loss(input, target, self.reduction, self.beta)


class BCELoss(_Loss):
    """Binary cross entropy on probabilities (optional per-element ``weight``).

    >>> import numpy as np
    >>> round(float(BCELoss()(np.array([0.5]), np.array([1.0]))), 4)
    0.6931
    """

    def __init__(self, weight: Any = None, reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.register_buffer("weight", weight)

    def forward(self, input: Any, target: Any) -> Any:
        return F.binary_cross_entropy(input, target, self.weight, self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Sigmoid + binary cross entropy from logits (``weight``, ``pos_weight``).

    >>> import numpy as np
    >>> round(float(BCEWithLogitsLoss()(np.array([0.0]), np.array([1.0]))), 4)
    0.6931
    """

    def __init__(self, weight: Any = None, reduction: str = "mean",
                 pos_weight: Any = None) -> None:
        super().__init__(reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input: Any, target: Any) -> Any:
        return F.binary_cross_entropy_with_logits(input, target, self.weight, self.reduction,
                                                  self.pos_weight)


class NLLLoss(_Loss):
    """Negative log-likelihood on log-probabilities (``weight``, ``ignore_index``).

    >>> import numpy as np
    >>> round(float(NLLLoss()(np.log(np.array([[0.25, 0.75]])), np.array([0]))), 4)
    1.3863
    """

    def __init__(self, weight: Any = None, ignore_index: int = -100,
                 reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.register_buffer("weight", weight)
        self.ignore_index = ignore_index

    def forward(self, input: Any, target: Any) -> Any:
        return F.nll_loss(input, target, self.weight, self.ignore_index, self.reduction)


class CrossEntropyLoss(_Loss):
    """Cross entropy from logits against class indices or probabilities (``weight``,
    ``ignore_index``, ``label_smoothing``).

    >>> import numpy as np
    >>> round(float(CrossEntropyLoss()(np.zeros((1, 4)), np.array([2]))), 4)
    1.3863
    """

    def __init__(self, weight: Any = None, ignore_index: int = -100, reduction: str = "mean",
                 label_smoothing: float = 0.0) -> None:
        super().__init__(reduction)
        self.register_buffer("weight", weight)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: Any, target: Any) -> Any:
        return F.cross_entropy(input, target, self.weight, self.ignore_index, self.reduction,
                               self.label_smoothing)


class KLDivLoss(_Loss):
    """KL divergence with log-probability input (``reduction='batchmean'`` is the
    mathematically correct mean; ``log_target``).

    >>> import numpy as np
    >>> p = np.array([[0.5, 0.5]])
    >>> KLDivLoss(reduction="batchmean")(np.log(p), p)
    array(0.)
    """

    _extra = ("batchmean",)

    def __init__(self, reduction: str = "mean", log_target: bool = False) -> None:
        super().__init__(reduction)
        self.log_target = log_target

    def forward(self, input: Any, target: Any) -> Any:
        return F.kl_div(input, target, self.reduction, self.log_target)
