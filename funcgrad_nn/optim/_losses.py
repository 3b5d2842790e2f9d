"""optax's loss functions at its top level (``optax.l2_loss``, ``optax.softmax_cross_entropy``,
...): elementwise or per-example losses, not reduced over the batch (take the mean
yourself), with optax's argument names, ``axis``/``where`` handling and dtype checks. For
PyTorch's reduced losses see :mod:`funcgrad_nn.functional`.

>>> import numpy as np
>>> from funcgrad_nn import optim
>>> logits, labels = np.array([[2.0, 0.0, -1.0]]), np.array([0])
>>> np.round(optim.softmax_cross_entropy_with_integer_labels(logits, labels), 6)
array([0.169846])
"""

from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import nn as fnn

__all__ = [
    "squared_error",
    "l2_loss",
    "huber_loss",
    "log_cosh",
    "hinge_loss",
    "softmax_cross_entropy",
    "softmax_cross_entropy_with_integer_labels",
    "sigmoid_binary_cross_entropy",
    "cosine_similarity",
    "cosine_distance",
    "kl_divergence",
    "generalized_kl_divergence",
    "convex_kl_divergence",
    "smooth_labels",
    "sigmoid_focal_loss",
    "kl_divergence_with_log_targets",
    "poly_loss_cross_entropy",
]


def _check_subdtype(x: Any, kind: type) -> None:
    # optax's utils.check_subdtype: a TypeError naming the expected kind
    dtype = np.result_type(x) if not hasattr(x, "dtype") else np.dtype(x.dtype)
    if not np.issubdtype(dtype, kind):
        name = {np.floating: "<class 'jax.numpy.floating'>",
                np.integer: "<class 'jax.numpy.integer'>"}[kind]
        raise TypeError(
            f"Expected the input to have a dtype that is a subdtype of {name}, got {dtype} "
            "instead")


def squared_error(predictions: Any, targets: Any = None) -> Any:
    """``(predictions - targets) ** 2`` elementwise (optax's ``squared_error``; the shapes
    must be equal, no broadcasting).

    >>> import numpy as np
    >>> squared_error(np.array([1.0, 3.0]), np.array([0.0, 1.0]))
    array([1., 4.])
    """
    _check_subdtype(predictions, np.floating)
    if targets is not None:
        if tuple(np.shape(predictions)) != tuple(np.shape(targets)):
            raise ValueError(
                f"Arrays must have the same shape: {tuple(np.shape(predictions))} != "
                f"{tuple(np.shape(targets))}")
        predictions = predictions - targets
    return predictions ** 2


def l2_loss(predictions: Any, targets: Any = None) -> Any:
    """Half the squared error, elementwise (optax's ``l2_loss``).

    >>> import numpy as np
    >>> l2_loss(np.array([1.0, 3.0]), np.array([0.0, 1.0]))
    array([0.5, 2. ])
    """
    return 0.5 * squared_error(fnp.asarray(predictions), targets)


def huber_loss(predictions: Any, targets: Any = None, *, delta: float = 1.0) -> Any:
    """Huber's loss elementwise: ``0.5 e^2`` within ``delta``, linear beyond (optax's).

    >>> import numpy as np
    >>> huber_loss(np.array([0.5, 3.0]))
    array([0.125, 2.5  ])
    """
    _check_subdtype(predictions, np.floating)
    errors = predictions - targets if targets is not None else predictions
    abs_errors = fnp.abs(errors)
    quadratic = fnp.minimum(abs_errors, delta)
    return 0.5 * quadratic ** 2 + delta * (abs_errors - quadratic)


def log_cosh(predictions: Any, targets: Any = None) -> Any:
    """``log(cosh(e))`` elementwise, computed without overflow (optax's ``log_cosh``).

    >>> import numpy as np
    >>> np.round(log_cosh(np.array([0.0, 1000.0])), 4)
    array([  0.    , 999.3069])
    """
    _check_subdtype(predictions, np.floating)
    errors = predictions - targets if targets is not None else predictions
    return fnp.logaddexp(errors, -errors) - fnp.log(2.0).astype(errors.dtype)


def hinge_loss(predictor_outputs: Any, targets: Any) -> Any:
    """``max(0, 1 - outputs * targets)`` with targets in {-1, 1} (optax's ``hinge_loss``).

    >>> import numpy as np
    >>> hinge_loss(np.array([0.5, 2.0]), np.array([1.0, -1.0]))
    array([0.5, 3. ])
    """
    return fnp.maximum(0, 1 - predictor_outputs * targets)


def _expand_where(where: Any, logits: Any, axis: Any) -> Any:
    if where is not None and fnp.ndim(where) != fnp.ndim(logits):
        where = fnp.expand_dims(where, axis)
    return where


def softmax_cross_entropy(logits: Any, labels: Any, axis: int | tuple[int, ...] | None = -1,
                          where: Any = None) -> Any:
    """Cross entropy of ``labels`` (probabilities) and ``softmax(logits)`` over ``axis``, one
    value per example (optax's ``softmax_cross_entropy``); ``where`` masks classes out.

    >>> import numpy as np
    >>> np.round(softmax_cross_entropy(np.array([[2.0, 0.0]]), np.array([[0.5, 0.5]])), 6)
    array([1.126928])
    """
    _check_subdtype(logits, np.floating)
    where = _expand_where(where, logits, axis)
    log_probs = fnn.log_softmax(logits, axis, where=where)
    prod = labels * log_probs
    if where is not None:  # masked classes' log-probabilities are -inf times label 0
        prod = fnp.where(where, prod, 0.0)
    return -fnp.sum(prod, axis=axis)


def softmax_cross_entropy_with_integer_labels(
    logits: Any, labels: Any, axis: int | tuple[int, ...] = -1, where: Any = None,
) -> Any:
    """Cross entropy with the class index ``labels`` (optax's
    ``softmax_cross_entropy_with_integer_labels``): ``logsumexp(logits) - logits[label]``
    over ``axis`` (an int, or a tuple of class axes flattened together); examples whose
    ``where`` is all False give 0.

    >>> import numpy as np
    >>> np.round(softmax_cross_entropy_with_integer_labels(np.array([[2.0, 0.0]]),
    ...                                                    np.array([1])), 6)
    array([2.126928])
    """
    _check_subdtype(logits, np.floating)
    _check_subdtype(labels, np.integer)
    where = _expand_where(where, logits, axis)
    ndim = fnp.ndim(logits)
    if isinstance(axis, int):
        axis = axis % ndim
    elif isinstance(axis, tuple):
        logit_axis = tuple(a % ndim for a in axis)
        batch_axis = tuple(a for a in range(ndim) if a not in logit_axis)
        axis = len(batch_axis)
        logits = fnp.transpose(logits, batch_axis + logit_axis)
        logits = fnp.reshape(logits, tuple(logits.shape[:len(batch_axis)]) + (-1,))
        if where is not None:
            where = fnp.transpose(where, batch_axis + logit_axis)
            where = fnp.reshape(where, tuple(where.shape[:len(batch_axis)]) + (-1,))
    else:
        raise ValueError("Keyword argument 'axis' must be of type 'int' or 'tuple[int, ...]' "
                         f"but actual type is {type(axis)}.")
    label_logits = fnp.take(fnp.take_along_axis(logits, fnp.expand_dims(labels, axis),
                                                axis=axis), 0, axis=axis)
    out = fnn.logsumexp(logits, axis=axis, where=where) - label_logits
    if where is not None:
        out = fnp.where(fnp.any(where, axis), out, 0.0)
    return out


def sigmoid_binary_cross_entropy(logits: Any, labels: Any) -> Any:
    """Binary cross entropy of ``labels`` (probabilities) and ``sigmoid(logits)``,
    elementwise (optax's ``sigmoid_binary_cross_entropy``).

    >>> import numpy as np
    >>> np.round(sigmoid_binary_cross_entropy(np.array([0.0, 2.0]), np.array([1, 0])), 6)
    array([0.693147, 2.126928])
    """
    _check_subdtype(logits, np.floating)
    labels = fnp.asarray(labels).astype(fnp.asarray(logits).dtype)
    return -labels * fnn.log_sigmoid(logits) - (1.0 - labels) * fnn.log_sigmoid(-logits)


def cosine_similarity(predictions: Any, targets: Any, *, epsilon: float = 0.0,
                      axis: int | tuple[int, ...] | None = -1, where: Any = None) -> Any:
    """Cosine similarity over ``axis``, each squared norm clipped below at ``epsilon``
    (optax's ``cosine_similarity``).

    >>> import numpy as np
    >>> cosine_similarity(np.array([[1.0, 0.0]]), np.array([[1.0, 1.0]])).round(6)
    array([0.707107])
    """
    _check_subdtype(predictions, np.floating)
    _check_subdtype(targets, np.floating)
    a_norm = fnp.sqrt(fnp.clip(fnp.sum(fnp.square(predictions), axis=axis, where=where,
                                       keepdims=True), epsilon, None))
    b_norm = fnp.sqrt(fnp.clip(fnp.sum(fnp.square(targets), axis=axis, where=where,
                                       keepdims=True), epsilon, None))
    return fnp.sum((predictions / a_norm) * (targets / b_norm), axis=axis, where=where)


def cosine_distance(predictions: Any, targets: Any, *, epsilon: float = 0.0,
                    axis: int | tuple[int, ...] | None = -1, where: Any = None) -> Any:
    """``1 - cosine_similarity`` (optax's ``cosine_distance``).

    >>> import numpy as np
    >>> cosine_distance(np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]]))
    array([1.])
    """
    _check_subdtype(predictions, np.floating)
    _check_subdtype(targets, np.floating)
    return 1.0 - cosine_similarity(predictions, targets, epsilon=epsilon, axis=axis, where=where)


def kl_divergence(log_predictions: Any, targets: Any, axis: int | tuple[int, ...] | None = -1,
                  where: Any = None) -> Any:
    """``KL(targets || predictions)`` over ``axis`` from log-predictions and probability
    targets; zero targets contribute 0 (optax's ``kl_divergence``).

    >>> import numpy as np
    >>> np.round(kl_divergence(np.log(np.array([[0.5, 0.5]])), np.array([[1.0, 0.0]])), 6)
    array([0.693147])
    """
    _check_subdtype(log_predictions, np.floating)
    _check_subdtype(targets, np.floating)
    safe_log = fnp.log(fnp.where(targets == 0, fnp.ones_like(targets), targets))
    loss = targets * (safe_log - log_predictions)
    return fnp.sum(loss, axis=axis, where=where)


def generalized_kl_divergence(log_predictions: Any, targets: Any,
                              axis: int | tuple[int, ...] | None = -1, where: Any = None) -> Any:
    """The KL divergence plus ``sum(exp(log_predictions) - targets)``, for unnormalized
    measures (optax's ``generalized_kl_divergence``).

    >>> import numpy as np
    >>> np.round(generalized_kl_divergence(np.log(np.array([[1.0, 1.0]])),
    ...                                    np.array([[1.0, 0.0]])), 6)
    array([1.])
    """
    x = kl_divergence(log_predictions, targets, axis=axis, where=where)
    return x + fnp.sum(fnp.exp(log_predictions) - targets, axis=axis, where=where)


def convex_kl_divergence(log_predictions: Any, targets: Any,
                         axis: int | tuple[int, ...] | None = -1, where: Any = None) -> Any:
    """optax's former name of :func:`generalized_kl_divergence`.

    >>> import numpy as np
    >>> float(convex_kl_divergence(np.zeros(2), np.ones(2)))
    0.0
    """
    return generalized_kl_divergence(log_predictions, targets, axis=axis, where=where)


def smooth_labels(labels: Any, alpha: float, *, axis: int | tuple[int, ...] | None = -1,
                  where: Any = None) -> Any:
    """Label smoothing: ``(1 - alpha) * labels + alpha / num_categories`` (optax's
    ``smooth_labels``; with ``where``, the categories counted are the True ones).

    >>> import numpy as np
    >>> smooth_labels(np.array([[1.0, 0.0, 0.0, 0.0]]), 0.2)
    array([[0.85, 0.05, 0.05, 0.05]])
    """
    _check_subdtype(labels, np.floating)
    if where is None:
        shape = np.shape(labels)
        axes = (axis,) if isinstance(axis, int) else (
            tuple(range(len(shape))) if axis is None else axis)
        num = int(np.prod([shape[a] for a in axes]))
    else:
        num = fnp.sum(where, axis, keepdims=True)
    return (1.0 - alpha) * labels + alpha / num


def sigmoid_focal_loss(logits: Any, labels: Any, *, alpha: float | None = None,
                       gamma: float = 2.0) -> Any:
    """The focal loss (Lin et al., 2017; optax's ``sigmoid_focal_loss``): the sigmoid binary
    cross entropy times ``(1 - p_t) ** gamma``, weighted by ``alpha`` / ``1 - alpha`` for
    positive / negative labels when ``alpha`` is given; elementwise.

    >>> import numpy as np
    >>> np.round(sigmoid_focal_loss(np.array([0.0, 2.0]), np.array([1, 0])), 6)
    array([0.173287, 1.650078])
    """
    _check_subdtype(logits, np.floating)
    labels = fnp.asarray(labels).astype(fnp.asarray(logits).dtype)
    ce = sigmoid_binary_cross_entropy(logits, labels)
    log_p, log_q = fnn.log_sigmoid(logits), fnn.log_sigmoid(-logits)
    # log(1 - p_t) = log((1 - y) p + y (1 - p)), as a weighted logsumexp (stable)
    log_one_minus_pt = fnn.logsumexp(fnp.stack([log_p, log_q], axis=-1), axis=-1,
                                     b=fnp.stack([1 - labels, labels], axis=-1))
    loss = ce * fnp.exp(gamma * log_one_minus_pt)
    if alpha is None:
        return loss
    return (alpha * labels + (1.0 - alpha) * (1.0 - labels)) * loss


def kl_divergence_with_log_targets(log_predictions: Any, log_targets: Any,
                                   axis: int | tuple[int, ...] | None = -1,
                                   where: Any = None) -> Any:
    """``KL(targets || predictions)`` from log-predictions and log-targets (optax's).

    >>> import numpy as np
    >>> np.round(kl_divergence_with_log_targets(np.log([[0.5, 0.5]]), np.log([[0.9, 0.1]])), 6)
    array([0.368064])
    """
    _check_subdtype(log_predictions, np.floating)
    _check_subdtype(log_targets, np.floating)
    loss = fnp.exp(log_targets) * (log_targets - log_predictions)
    return fnp.sum(loss, axis=axis, where=where)


def poly_loss_cross_entropy(logits: Any, labels: Any, *, epsilon: float = 2.0,
                            axis: int | tuple[int, ...] | None = -1, where: Any = None) -> Any:
    """PolyLoss (Leng et al., 2022; optax's ``poly_loss_cross_entropy``): the softmax cross
    entropy plus ``epsilon * sum(labels * (1 - softmax(logits)))``.

    >>> import numpy as np
    >>> np.round(poly_loss_cross_entropy(np.array([[2.0, 0.0]]), np.array([[1.0, 0.0]])), 6)
    array([0.365334])
    """
    _check_subdtype(logits, np.floating)
    _check_subdtype(labels, np.floating)
    p = fnn.softmax(logits, axis=axis, where=where)
    one_minus_pt = fnp.sum(labels * (1 - p), axis=axis, where=where)
    return (softmax_cross_entropy(logits, labels, axis=axis, where=where)
            + epsilon * one_minus_pt)
