"""Loss modules (PyTorch names and defaults) over ``funcgrad_nn.functional``."""

from __future__ import annotations

import math
import warnings
from typing import Any

import funcgrad.numpy as fnp
from funcgrad_nn import functional as F
from funcgrad_nn.layers.distance import PairwiseDistance
from funcgrad_nn.layers.linear import Linear
from funcgrad_nn.module import Module

__all__ = ["BCELoss", "BCEWithLogitsLoss", "CTCLoss", "CosineEmbeddingLoss", "CrossEntropyLoss",
           "GaussianNLLLoss", "HingeEmbeddingLoss", "HuberLoss", "KLDivLoss", "L1Loss",
           "LinearCrossEntropyLoss",
           "MSELoss", "MarginRankingLoss", "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss",
           "MultiMarginLoss", "NLLLoss", "NLLLoss2d", "PoissonNLLLoss", "SmoothL1Loss", "SoftMarginLoss",
           "TripletMarginLoss", "TripletMarginWithDistanceLoss"]


class _Loss(Module):
    _extra: tuple[str, ...] = ()

    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        F._check_reduction(reduction, type(self).__name__, self._extra)
        self.reduction = reduction

    def extra_repr(self) -> str:
        return ""  # PyTorch's losses print as ``CrossEntropyLoss()``


class _LegacyLoss(_Loss):
    # PyTorch's deprecated size_average/reduce arguments, honoured when given.
    def __init__(self, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(F._legacy_reduction(size_average, reduce, reduction,
                                             type(self).__name__, self._extra))


class _WeightedLoss(_LegacyLoss):
    """PyTorch's ``torch.nn.modules.loss._WeightedLoss``: a loss with a per-class ``weight``
    buffer (``None`` when not given), the base user losses subclass, e.g.
    ``class LabelSmoothingLoss(_WeightedLoss)``.

    >>> import numpy as np
    >>> class Smoothed(_WeightedLoss):
    ...     def __init__(self, weight=None, reduction="mean", smoothing=0.1):
    ...         super().__init__(weight=weight, reduction=reduction)
    ...         self.smoothing = smoothing
    >>> loss = Smoothed(weight=np.ones(3, np.float32))
    >>> loss.weight.tolist(), loss.reduction, sorted(loss.state_dict())
    ([1.0, 1.0, 1.0], 'mean', ['weight'])
    """

    def __init__(self, weight: Any = None, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class MSELoss(_LegacyLoss):
    """Mean squared error.

    >>> import numpy as np
    >>> MSELoss()(np.array([0.0, 2.0]), np.zeros(2))
    array(2.)
    """

    def forward(self, input: Any, target: Any) -> Any:
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_LegacyLoss):
    """Mean absolute error.

    >>> import numpy as np
    >>> L1Loss(reduction="sum")(np.array([-1.0, 2.0]), np.zeros(2))
    array(3.)
    """

    def forward(self, input: Any, target: Any) -> Any:
        return F.l1_loss(input, target, reduction=self.reduction)


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
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class SmoothL1Loss(_LegacyLoss):
    """Smooth L1 loss with threshold ``beta``.

    >>> import numpy as np
    >>> SmoothL1Loss(beta=2.0)(np.array([1.0]), np.zeros(1))
    array(0.25)
    """

    def __init__(self, size_average: Any = None, reduce: Any = None, reduction: str = "mean",
                 beta: float = 1.0) -> None:
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: Any, target: Any) -> Any:
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class BCELoss(_LegacyLoss):
    """Binary cross entropy on probabilities (optional per-element ``weight``).

    >>> import numpy as np
    >>> round(float(BCELoss()(np.array([0.5]), np.array([1.0]))), 4)
    0.6931
    """

    def __init__(self, weight: Any = None, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)

    def forward(self, input: Any, target: Any) -> Any:
        return F.binary_cross_entropy(input, target, self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_LegacyLoss):
    """Sigmoid + binary cross entropy from logits (``weight``, ``pos_weight``).

    >>> import numpy as np
    >>> round(float(BCEWithLogitsLoss()(np.array([0.0]), np.array([1.0]))), 4)
    0.6931
    """

    def __init__(self, weight: Any = None, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean", pos_weight: Any = None) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input: Any, target: Any) -> Any:
        return F.binary_cross_entropy_with_logits(input, target, self.weight,
                                                  reduction=self.reduction,
                                                  pos_weight=self.pos_weight)


class NLLLoss(_LegacyLoss):
    """Negative log-likelihood on log-probabilities (``weight``, ``ignore_index``).

    >>> import numpy as np
    >>> round(float(NLLLoss()(np.log(np.array([[0.25, 0.75]])), np.array([0]))), 4)
    1.3863
    """

    def __init__(self, weight: Any = None, size_average: Any = None, ignore_index: int = -100,
                 reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.ignore_index = ignore_index

    def forward(self, input: Any, target: Any) -> Any:
        return F.nll_loss(input, target, self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class NLLLoss2d(NLLLoss):
    """PyTorch's deprecated alias of :class:`NLLLoss` (which takes ``(N, C, H, W)`` input
    too); constructing one warns with PyTorch's ``FutureWarning``.

    >>> import warnings, numpy as np
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", FutureWarning)
    ...     loss = NLLLoss2d()
    >>> round(float(loss(np.log(np.full((1, 2, 1, 1), 0.5)), np.array([[[1]]]))), 4)
    0.6931
    """

    def __init__(self, weight: Any = None, size_average: Any = None, ignore_index: int = -100,
                 reduce: Any = None, reduction: str = "mean") -> None:
        warnings.warn("`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a "
                      "drop-in replacement.", FutureWarning, stacklevel=2)
        super().__init__(weight, size_average, ignore_index, reduce, reduction)


class CrossEntropyLoss(_LegacyLoss):
    """Cross entropy from logits against class indices or probabilities (``weight``,
    ``ignore_index``, ``label_smoothing``).

    >>> import numpy as np
    >>> round(float(CrossEntropyLoss()(np.zeros((1, 4)), np.array([2]))), 4)
    1.3863
    """

    def __init__(self, weight: Any = None, size_average: Any = None, ignore_index: int = -100,
                 reduce: Any = None, reduction: str = "mean",
                 label_smoothing: float = 0.0) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: Any, target: Any) -> Any:
        return F.cross_entropy(input, target, self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class KLDivLoss(_LegacyLoss):
    """KL divergence with log-probability input (``reduction='batchmean'`` is the
    mathematically correct mean; ``log_target``).

    >>> import numpy as np
    >>> p = np.array([[0.5, 0.5]])
    >>> KLDivLoss(reduction="batchmean")(np.log(p), p)
    array(0.)
    """

    _extra = ("batchmean",)

    def __init__(self, size_average: Any = None, reduce: Any = None, reduction: str = "mean",
                 log_target: bool = False) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input: Any, target: Any) -> Any:
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class MarginRankingLoss(_LegacyLoss):
    """max(0, -y * (x1 - x2) + margin), y in {1, -1}.

    >>> import numpy as np
    >>> MarginRankingLoss(margin=1.0)(np.array([2.0]), np.array([1.0]), np.array([-1.0]))
    array(2.)
    """

    def __init__(self, margin: float = 0.0, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1: Any, input2: Any, target: Any) -> Any:
        return F.margin_ranking_loss(input1, input2, target, self.margin,
                                     reduction=self.reduction)


class HingeEmbeddingLoss(_LegacyLoss):
    """x where y = 1, max(0, margin - x) where y = -1.

    >>> import numpy as np
    >>> HingeEmbeddingLoss()(np.array([0.25]), np.array([-1.0]))
    array(0.75)
    """

    def __init__(self, margin: float = 1.0, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input: Any, target: Any) -> Any:
        return F.hinge_embedding_loss(input, target, self.margin, reduction=self.reduction)


class SoftMarginLoss(_LegacyLoss):
    """log(1 + exp(-y * x)).

    >>> import numpy as np
    >>> round(float(SoftMarginLoss()(np.array([0.0]), np.array([-1.0]))), 4)
    0.6931
    """

    def forward(self, input: Any, target: Any) -> Any:
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class CosineEmbeddingLoss(_LegacyLoss):
    """1 - cos(x1, x2) for y = 1, max(0, cos(x1, x2) - margin) for y = -1.

    >>> import numpy as np
    >>> x = np.array([[1.0, 0.0]])
    >>> CosineEmbeddingLoss()(x, x, np.array([1])).round(6)
    np.float64(0.0)
    """

    def __init__(self, margin: float = 0.0, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1: Any, input2: Any, target: Any) -> Any:
        return F.cosine_embedding_loss(input1, input2, target, self.margin,
                                       reduction=self.reduction)


class TripletMarginLoss(_LegacyLoss):
    """max(0, margin + d(a, p) - d(a, n)), d the p-norm pairwise distance.

    >>> import numpy as np
    >>> round(float(TripletMarginLoss(margin=1.0, p=1)(np.zeros((1, 2)), np.zeros((1, 2)),
    ...                                                np.ones((1, 2)))), 4)
    0.0
    """

    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6,
                 swap: bool = False, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginLoss: margin must be greater than 0, got {margin}")
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap

    def forward(self, anchor: Any, positive: Any, negative: Any) -> Any:
        return F.triplet_margin_loss(anchor, positive, negative, self.margin, self.p,
                                     self.eps, self.swap, reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """Triplet loss with a custom ``distance_function`` (default: Euclidean).

    >>> import numpy as np
    >>> TripletMarginWithDistanceLoss(margin=0.5)(np.zeros((1, 2)), np.zeros((1, 2)),
    ...                                           np.ones((1, 2)))
    array(0.)
    """

    def __init__(self, *, distance_function: Any = None, margin: float = 1.0,
                 swap: bool = False, reduction: str = "mean") -> None:
        super().__init__(reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: margin must be greater than 0, "
                             f"got {margin}")
        # PyTorch's default is a PairwiseDistance submodule (it shows in the repr).
        self.distance_function = distance_function if distance_function is not None \
            else PairwiseDistance()
        self.margin, self.swap = margin, swap

    def forward(self, anchor: Any, positive: Any, negative: Any) -> Any:
        return F.triplet_margin_with_distance_loss(
            anchor, positive, negative, distance_function=self.distance_function,
            margin=self.margin, swap=self.swap, reduction=self.reduction)


class MultiMarginLoss(_LegacyLoss):
    """Multi-class hinge loss (``p`` 1 or 2, ``margin``, per-class ``weight`` buffer).

    >>> import numpy as np
    >>> round(float(MultiMarginLoss()(np.array([[0.1, 0.2, 0.4, 0.8]]), np.array([3]))), 4)
    0.325
    """

    def __init__(self, p: int = 1, margin: float = 1.0, weight: Any = None,
                 size_average: Any = None, reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        if p not in (1, 2):
            raise ValueError(f"MultiMarginLoss: only p == 1 and p == 2 supported, got {p}")
        if weight is not None and getattr(weight, "ndim", None) != 1:
            raise ValueError("MultiMarginLoss: weight must be a 1-D array (one per class)")
        self.p, self.margin = p, margin
        self.register_buffer("weight", weight)

    def forward(self, input: Any, target: Any) -> Any:
        return F.multi_margin_loss(input, target, self.p, self.margin, self.weight,
                                   reduction=self.reduction)


class MultiLabelMarginLoss(_LegacyLoss):
    """Multi-label hinge loss over class-index targets ended by -1.

    >>> import numpy as np
    >>> round(float(MultiLabelMarginLoss()(np.array([[0.1, 0.2, 0.4, 0.8]]),
    ...                                    np.array([[3, 0, -1, 1]]))), 4)
    0.85
    """

    def forward(self, input: Any, target: Any) -> Any:
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_LegacyLoss):
    """One-vs-all logistic loss averaged over classes (``weight`` buffer per class).

    >>> import numpy as np
    >>> round(float(MultiLabelSoftMarginLoss()(np.zeros((2, 3)), np.ones((2, 3)))), 4)
    0.6931
    """

    def __init__(self, weight: Any = None, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)

    def forward(self, input: Any, target: Any) -> Any:
        return F.multilabel_soft_margin_loss(input, target, self.weight,
                                             reduction=self.reduction)


class PoissonNLLLoss(_LegacyLoss):
    """Poisson negative log-likelihood (``log_input``, ``full``, ``eps``).

    >>> import numpy as np
    >>> PoissonNLLLoss()(np.zeros(2), np.ones(2))
    array(1.)
    """

    def __init__(self, log_input: bool = True, full: bool = False, size_average: Any = None,
                 eps: float = 1e-8, reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input: Any, target: Any) -> Any:
        return F.poisson_nll_loss(log_input, target, self.log_input, self.full, eps=self.eps,
                                  reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    """Gaussian negative log-likelihood with predicted variances (``full``, ``eps``).

    >>> import numpy as np
    >>> round(float(GaussianNLLLoss()(np.zeros(2), np.ones(2), np.ones(2))), 4)
    0.5
    """

    def __init__(self, *, full: bool = False, eps: float = 1e-6,
                 reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.full, self.eps = full, eps

    def forward(self, input: Any, target: Any, var: Any) -> Any:
        return F.gaussian_nll_loss(input, target, var, self.full, self.eps, self.reduction)


class CTCLoss(_Loss):
    """Connectionist Temporal Classification loss (``blank``, ``zero_infinity``); see
    :func:`funcgrad_nn.functional.ctc_loss`.

    >>> import numpy as np
    >>> lp = np.log(np.full((2, 1, 2), 0.5))
    >>> round(float(CTCLoss()(lp, np.array([[1]]), [2], [1])), 4)
    0.2877
    """

    def __init__(self, blank: int = 0, reduction: str = "mean",
                 zero_infinity: bool = False) -> None:
        super().__init__(reduction)
        self.blank, self.zero_infinity = blank, zero_infinity

    def forward(self, log_probs: Any, targets: Any, input_lengths: Any,
                target_lengths: Any) -> Any:
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank,
                          self.reduction, self.zero_infinity)


class LinearCrossEntropyLoss(_Loss):
    """Cross entropy of ``self.linear(input)`` (PyTorch 2.13's module): a bias-free (by
    default) ``Linear(in_features, num_classes * prod(out_features))`` held as ``linear``
    (PyTorch's parameter names ``linear.weight``/``linear.bias`` and initialisation), its
    weight reshaped to ``(num_classes, *out_features, in_features)``; see
    :func:`funcgrad_nn.functional.linear_cross_entropy`.

    >>> import numpy as np
    >>> loss = LinearCrossEntropyLoss(4, 3)
    >>> loss.linear.weight.shape, loss(np.ones((2, 4), np.float32), np.array([0, 2])).dtype
    ((3, 4), dtype('float32'))
    """

    def __init__(self, in_features: int, num_classes: int, *,
                 out_features: tuple[int, ...] = (), bias: bool = False, device: Any = None,
                 dtype: Any = None, reduction: str = "mean", weight: Any = None,
                 ignore_index: int | None = None, label_smoothing: float = 0.0,
                 options: Any = None) -> None:
        if weight is not None and tuple(getattr(weight, "shape", ())) != (num_classes,):
            raise ValueError(f"LinearCrossEntropyLoss: expected weight shape to be "
                             f"{(num_classes,)}, got {tuple(getattr(weight, 'shape', ()))}")
        if not 0.0 <= label_smoothing <= 1.0:
            raise ValueError(f"LinearCrossEntropyLoss: expected label_smoothing to be in "
                             f"range [0, 1], got {label_smoothing}")
        super().__init__(reduction)
        self.register_buffer("weight", weight)
        self.num_classes = num_classes
        self.out_features = tuple(out_features)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        self.linear = Linear(in_features, num_classes * math.prod(self.out_features), bias=bias,
                             device=device, dtype=dtype)
        self.options = options

    def forward(self, input: Any, target: Any) -> Any:
        lead = (self.num_classes, *self.out_features)
        bias = self.linear.bias
        return F.linear_cross_entropy(
            input, fnp.reshape(self.linear.weight, (*lead, self.linear.in_features)), target,
            linear_bias=None if bias is None else fnp.reshape(bias, lead), weight=self.weight,
            reduction=self.reduction, ignore_index=self.ignore_index,
            label_smoothing=self.label_smoothing, options=self.options)

    def extra_repr(self) -> str:
        return (f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
                f"out_features={self.out_features}, bias={self.linear.bias is not None}, "
                f"reduction={self.reduction}, ignore_index={self.ignore_index}, "
                f"label_smoothing={self.label_smoothing}, options={self.options}")
