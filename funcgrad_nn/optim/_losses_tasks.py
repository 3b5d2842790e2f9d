"""optax's task-specific losses: classification (``safe_softmax_cross_entropy``, hinge, perceptron
and sparsemax losses, CTC), self-supervised (``ntxent``, ``triplet_margin_loss``),
segmentation (Dice losses) and ranking (``ranking_softmax_loss``); optax 0.2.8's
formulas, arguments and dtypes, not reduced over the batch unless optax reduces.

>>> import numpy as np
>>> from funcgrad_nn import optim
>>> emb = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])
>>> round(float(optim.ntxent(emb, np.array([0, 0, 1, 1]), temperature=1.0)), 6)
0.551445
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad import nn as fnn
from funcgrad_nn.optim._losses import _check_subdtype, cosine_similarity
from funcgrad_nn.optim.projections import projection_simplex

# at optax's top level as well (the others are only in optax.losses)
__all__ = ["ctc_loss", "ctc_loss_with_forward_probs", "ntxent", "safe_softmax_cross_entropy"]
LOSSES_ONLY = [
    "binary_dice_loss", "dice_loss", "make_fenchel_young_loss", "multiclass_generalized_dice_loss", "multiclass_hinge_loss",
    "multiclass_perceptron_loss", "multiclass_sparsemax_loss", "perceptron_loss",
    "ranking_softmax_loss", "sparsemax_loss", "triplet_margin_loss",
]


def _check_shapes_equal(a: Any, b: Any) -> None:
    if tuple(np.shape(a)) != tuple(np.shape(b)):
        raise ValueError(f"Arrays have different shapes: {tuple(np.shape(a))} and "
                         f"{tuple(np.shape(b))}")


def _check_rank(x: Any, rank: int) -> None:
    if np.ndim(x) != rank:
        raise ValueError(f"Expected an array of rank {rank}, got rank {np.ndim(x)} "
                         f"(shape {tuple(np.shape(x))})")


def _dot_last_dim(x: Any, y: Any) -> Any:
    return fnp.einsum("...i,...i->...", x, y)


# -- classification ---------------------------------------------------------------------------


def safe_softmax_cross_entropy(logits: Any, labels: Any) -> Any:
    """Softmax cross entropy with ``0 * log 0 = 0``: a ``-inf`` logit with a zero label adds
    nothing (optax's ``safe_softmax_cross_entropy``; ``softmax_cross_entropy`` gives NaN).

    >>> import numpy as np
    >>> float(safe_softmax_cross_entropy(np.array([0.0, -np.inf]), np.array([1.0, 0.0])))
    -0.0
    """
    _check_subdtype(logits, np.floating)
    log_p = fnn.log_softmax(logits, axis=-1)
    # (log_p masked first: 0 * -inf would be NaN, with a warning, before the where)
    return -fnp.sum(labels * fnp.where(labels != 0.0, log_p, 0.0), axis=-1)


def perceptron_loss(predictor_outputs: Any, targets: Any) -> Any:
    """``max(0, -output * target)`` for targets in {-1, 1} (optax's).

    >>> import numpy as np
    >>> perceptron_loss(np.array([2.0, -1.0]), np.array([1.0, 1.0]))
    array([0., 1.])
    """
    _check_shapes_equal(predictor_outputs, targets)
    return fnp.maximum(0, -predictor_outputs * targets)


def sparsemax_loss(logits: Any, labels: Any) -> Any:
    """The binary sparsemax loss, zero iff ``sparse_sigmoid(logits) == labels`` (optax's).

    >>> import numpy as np
    >>> sparsemax_loss(np.array([2.0, 0.0]), np.array([1, 1]))
    array([0.  , 0.25])
    """
    return fnn.sparse_plus(fnp.where(labels, -logits, logits))


def multiclass_hinge_loss(scores: Any, labels: Any) -> Any:
    """``max_k(scores_k + 1 - [k == label]) - scores[label]`` per example (optax's).

    >>> import numpy as np
    >>> multiclass_hinge_loss(np.array([[2.0, 1.5, 0.0]]), np.array([0]))
    array([0.5])
    """
    one_hot = fnn.one_hot(labels, scores.shape[-1])
    return fnp.max(scores + 1.0 - one_hot, axis=-1) - _dot_last_dim(scores, one_hot)


def multiclass_perceptron_loss(scores: Any, labels: Any) -> Any:
    """``max(scores) - scores[label]`` per example (optax's).

    >>> import numpy as np
    >>> multiclass_perceptron_loss(np.array([[2.0, 3.0]]), np.array([0]))
    array([1.])
    """
    one_hot = fnn.one_hot(labels, scores.shape[-1])
    return fnp.max(scores, axis=-1) - _dot_last_dim(scores, one_hot)


def _multiclass_sparsemax_loss(scores: Any, label: Any) -> Any:
    proba = projection_simplex(scores)
    # the Fenchel conjugate of the Gini negentropy, shifted by the label's score
    shifted = fnp.where(fnp.arange(scores.shape[-1]) == label, 0.0, scores - scores[label])
    return (fnp.dot(proba, fnp.where(proba != 0, shifted, 0.0))
            + 0.5 * (1.0 - fnp.dot(proba, proba)))


def multiclass_sparsemax_loss(scores: Any, labels: Any) -> Any:
    """The multiclass sparsemax loss of a batch of score vectors (optax's).

    >>> import numpy as np
    >>> multiclass_sparsemax_loss(np.array([[3.0, 0.0], [0.0, 0.5]]), np.array([0, 0]))
    array([0.    , 0.5625])
    """
    return funcgrad.vmap(_multiclass_sparsemax_loss)(scores, labels)


def ctc_loss_with_forward_probs(logits: Any, logit_paddings: Any, labels: Any,
                                label_paddings: Any, *, blank_id: int = 0,
                                log_epsilon: Any = -1e5) -> tuple[Any, Any, Any]:
    """CTC loss of each sequence and the forward (alpha) log-probabilities of blanks and
    labels, ``(loss, logalpha_blank, logalpha_nonblank)`` (optax's): ``logits`` (B, T, K),
    ``logit_paddings`` (B, T) and ``label_paddings`` (B, N) 1.0 where padded, ``labels``
    (B, N) right-padded.

    >>> import numpy as np
    >>> loss, blank, label = ctc_loss_with_forward_probs(
    ...     np.zeros((1, 3, 3)), np.zeros((1, 3)), np.array([[1, 2]]), np.zeros((1, 2)))
    >>> round(float(loss[0]), 6), blank.shape, label.shape
    (1.686399, (3, 1, 3), (3, 1, 2))
    """
    _check_rank(logits, 3)
    _check_rank(labels, 2)
    _check_shapes_equal(labels, label_paddings)
    _check_shapes_equal(logits[..., 0], logit_paddings)
    batchsize, _, num_classes = logits.shape
    if labels.shape[0] != batchsize:
        raise ValueError(f"Expected `labels` to have batch size {batchsize}, got "
                         f"{labels.shape[0]}.")
    maxlabellen = labels.shape[1]
    logprobs = fnn.log_softmax(logits)
    labellens = maxlabellen - fnp.sum(label_paddings, axis=1).astype(np.int32)
    # repeat[b, n] == 1.0 when label[b, n] == label[b, n+1] (float32, as optax's)
    repeat = (labels[:, :-1] == labels[:, 1:]).astype(np.float32)
    repeat = fnp.pad(repeat, ((0, 0), (0, 1)))
    logprobs_phi = fnp.transpose(logprobs[:, :, blank_id:blank_id + 1], (1, 0, 2))  # [T, B, 1]
    one_hot = fnn.one_hot(labels, num_classes=num_classes)  # [B, N, K]
    logprobs_emit = fnp.transpose(fnp.einsum("btk,bnk->btn", logprobs, one_hot), (1, 0, 2))
    logalpha_phi_init = fnp.concatenate(
        [fnp.zeros((batchsize, 1)), fnp.ones((batchsize, maxlabellen)) * log_epsilon], axis=1)
    logalpha_emit_init = fnp.ones((batchsize, maxlabellen)) * log_epsilon

    def update_phi_score(phi: Any, added_score: Any) -> Any:
        return fnp.concatenate([phi[:, :1], fnp.logaddexp(phi[:, 1:], added_score)], axis=-1)

    def loop_body(prev: Any, x: Any) -> Any:
        prev_phi, prev_emit = prev
        prev_phi_orig = prev_phi
        # emit-to-phi epsilon transition, except before a repeated label
        prev_phi = update_phi_score(prev_phi, prev_emit + log_epsilon * repeat)
        logprob_emit, logprob_phi, pad = x
        next_emit = fnp.logaddexp(prev_phi[:, :-1] + logprob_emit, prev_emit + logprob_emit)
        next_phi = prev_phi + logprob_phi
        next_phi = update_phi_score(next_phi,
                                    prev_emit + logprob_phi + log_epsilon * (1.0 - repeat))
        pad = pad.reshape((batchsize, 1))
        next_emit = pad * prev_emit + (1.0 - pad) * next_emit
        next_phi = pad * prev_phi_orig + (1.0 - pad) * next_phi
        return (next_phi, next_emit), (next_phi, next_emit)

    xs = (logprobs_emit, logprobs_phi, fnp.transpose(logit_paddings, (1, 0)))
    _, (logalpha_phi, logalpha_emit) = lax.scan(
        loop_body, (logalpha_phi_init, logalpha_emit_init), xs)
    # the last row takes the final epsilon transition
    logalpha_phi_last = update_phi_score(logalpha_phi[-1], logalpha_emit[-1])
    logalpha_phi = fnp.concatenate([logalpha_phi[:-1], logalpha_phi_last[None]], axis=0)
    one_hot = fnn.one_hot(labellens, num_classes=maxlabellen + 1)  # [B, N+1]
    per_seq_loss = -fnp.einsum("bn,bn->b", logalpha_phi_last, one_hot)
    return per_seq_loss, logalpha_phi, logalpha_emit


def ctc_loss(logits: Any, logit_paddings: Any, labels: Any, label_paddings: Any, *,
             blank_id: int = 0, log_epsilon: Any = -1e5) -> Any:
    """The CTC loss of each sequence, (B,) (optax's; see
    :func:`ctc_loss_with_forward_probs` for the arguments).

    >>> import numpy as np
    >>> ctc_loss(np.zeros((1, 3, 3)), np.zeros((1, 3)), np.array([[1, 2]]),
    ...          np.zeros((1, 2))).round(6)
    array([1.686399])
    """
    return ctc_loss_with_forward_probs(logits, logit_paddings, labels, label_paddings,
                                       blank_id=blank_id, log_epsilon=log_epsilon)[0]


# -- self-supervised --------------------------------------------------------------------------


def ntxent(embeddings: Any, labels: Any, temperature: Any = 0.07) -> Any:
    """The normalized temperature-scaled cross entropy (NT-Xent, SimCLR's) of a batch of
    embeddings whose equal ``labels`` mark positive pairs, averaged over the positive pairs
    (optax's).

    >>> import numpy as np
    >>> emb = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0]])
    >>> float(ntxent(emb, np.array([0, 0, 1]))) < 1e-5   # positives far closer than negatives
    True
    """
    _check_subdtype(embeddings, np.floating)
    if labels.shape[0] != embeddings.shape[0]:
        raise ValueError("Labels and embeddings must have the same leading dimension, found "
                         f"{labels.shape[0]} for labels and {embeddings.shape[0]} for "
                         "embeddings.")
    xcs = cosine_similarity(embeddings[None, :, :], embeddings[:, None, :],
                            epsilon=np.finfo(embeddings.dtype).eps) / temperature
    matches = labels[:, None] == labels[None, :]
    diffs = ~matches
    matches = matches & ~fnp.eye(matches.shape[0], dtype=bool)  # no self-similarity
    xcs_diffs = fnp.where(diffs, xcs, -fnp.inf)
    xcs_matches = fnp.where(matches, xcs, -fnp.inf)
    # shifted by the row maximum for stability
    xcs_max = fnp.max(fnp.concatenate((xcs_diffs, xcs_matches), axis=-1), axis=1, keepdims=True)
    xcs_shift_diffs = xcs_diffs - lax.stop_gradient(xcs_max)
    xcs_shift_matches = xcs_matches - lax.stop_gradient(xcs_max)
    denom = (fnp.sum(fnp.exp(xcs_shift_diffs), axis=1, keepdims=True)
             + fnp.exp(xcs_shift_matches))
    log_softm = xcs_shift_matches - fnp.log(denom)
    # (the count in the loss's dtype: JAX's int/float promotion keeps float32)
    return -fnp.where(matches, log_softm, 0.0).sum() / matches.sum().astype(log_softm.dtype)


def triplet_margin_loss(anchors: Any, positives: Any, negatives: Any, axis: int = -1,
                        norm_degree: Any = 2, margin: Any = 1.0, eps: Any = 1e-6) -> Any:
    """``max(d(a, p) - d(a, n) + margin, 0)`` per example, ``d`` the ``norm_degree``-norm
    distance along ``axis`` with ``eps`` inside the root (optax's, unreduced).

    >>> import numpy as np
    >>> triplet_margin_loss(np.array([[0.0, 0.0], [1.0, 1.0]]), np.array([[0.1, 0.1], [1.1, 1.1]]),
    ...                     np.array([[1.0, 0.0], [0.0, 1.0]])).round(4)
    array([0.1414, 0.1414])
    """
    for x in (anchors, positives, negatives):
        _check_subdtype(x, np.floating)
    positive = fnp.power(fnp.power(anchors - positives, norm_degree).sum(axis) + eps,
                         1 / norm_degree)
    negative = fnp.power(fnp.power(anchors - negatives, norm_degree).sum(axis) + eps,
                         1 / norm_degree)
    return fnp.maximum(positive - negative + margin, 0)


# -- segmentation -----------------------------------------------------------------------------


def _reduce_loss(loss: Any, reduction: str, axis: int | None = None) -> Any:
    if reduction == "mean":
        return fnp.mean(loss, axis=axis)
    if reduction == "sum":
        return fnp.sum(loss, axis=axis)
    if reduction == "none":
        return loss
    raise ValueError(f"Unsupported reduction: {reduction}")


def dice_loss(predictions: Any, targets: Any, *, class_weights: Any = None, smooth: Any = 1.0,
              alpha: Any = 0.5, beta: Any = 0.5, apply_softmax: bool = True,
              reduction: str = "mean", ignore_background: bool = False,
              axis: Any = None) -> Any:
    """The soft Dice (Tversky with ``alpha``/``beta`` weighting false positives/negatives)
    loss per class of ``[batch, ..., classes]`` logits against one-hot targets, summed over
    the spatial axes (all but the first and last, or ``axis``) and reduced over the classes
    by ``reduction`` (optax's; one channel is binary, through a sigmoid).

    >>> import numpy as np
    >>> dice_loss(np.array([[1.0, -1.0], [0.5, 0.5]])[..., None],
    ...           np.array([[1.0, 0.0], [1.0, 0.0]])[..., None]).round(6)
    array([0.134471, 0.235576])
    """
    if predictions.ndim == targets.ndim - 1:
        predictions = predictions[..., None]
    if targets.ndim == predictions.ndim - 1:
        targets = targets[..., None]
    _check_shapes_equal(predictions, targets)
    if not apply_softmax:
        sums = fnp.sum(predictions, axis=-1)
        if not bool(fnp.allclose(sums, 1.0, rtol=1e-5)):
            raise ValueError(
                "When apply_softmax=False, predictions must be valid probability "
                "distributions that sum to 1 along the class axis. Found sum range: "
                f"[{float(fnp.min(sums)):.6f}, {float(fnp.max(sums)):.6f}]")
    probs = predictions
    if apply_softmax:
        probs = (fnn.sigmoid(predictions) if predictions.shape[-1] == 1
                 else fnn.softmax(predictions, axis=-1))
    axis = tuple(range(1, probs.ndim - 1)) if axis is None else axis
    intersection = fnp.sum(probs * targets, axis=axis)
    pred_sum = fnp.sum(probs, axis=axis)
    target_sum = fnp.sum(targets, axis=axis)
    denominator = (intersection + alpha * (pred_sum - intersection)
                   + beta * (target_sum - intersection) + smooth)
    loss = 1.0 - (intersection + smooth) / denominator  # [..., classes]
    if class_weights is not None:
        _check_rank(class_weights, 1)
        loss = loss * class_weights
    if ignore_background and probs.shape[-1] > 1:
        loss = loss[..., 1:]
    return _reduce_loss(loss, reduction, axis=-1)


def binary_dice_loss(predictions: Any, targets: Any, *, smooth: Any = 1.0,
                     apply_sigmoid: bool = True) -> Any:
    """:func:`dice_loss` of binary logits ``[...]`` or ``[..., 1]`` (optax's).

    >>> import numpy as np
    >>> binary_dice_loss(np.array([[2.0, -2.0]]), np.array([[1.0, 0.0]])).round(6)
    array([0.059601])
    """
    if predictions.ndim == targets.ndim and predictions.shape[-1] != 1:
        predictions, targets = predictions[..., None], targets[..., None]
    return dice_loss(predictions, targets, smooth=smooth, apply_softmax=apply_sigmoid,
                     reduction="mean")


def multiclass_generalized_dice_loss(predictions: Any, targets: Any, *, smooth: Any = 1.0,
                                     apply_softmax: bool = True,
                                     ignore_background: bool = False) -> Any:
    """:func:`dice_loss` with classes weighted by their inverse squared frequency
    (normalised to average 1), averaged over classes and batch (optax's).

    >>> import numpy as np
    >>> t = np.eye(3)[np.array([[0, 1, 1, 2]])]
    >>> round(float(multiclass_generalized_dice_loss(np.log(t * 0.8 + 0.1), t)), 6)
    0.109182
    """
    _check_shapes_equal(predictions, targets)
    class_frequencies = fnp.sum(targets, axis=tuple(range(targets.ndim - 1)))
    class_weights = 1.0 / (class_frequencies ** 2 + 1e-7)
    class_weights = class_weights / fnp.sum(class_weights) * len(class_weights)
    return fnp.mean(dice_loss(predictions, targets, class_weights=class_weights, smooth=smooth,
                              apply_softmax=apply_softmax, reduction="none",
                              ignore_background=ignore_background))


# -- ranking ----------------------------------------------------------------------------------


def _safe_reduce(a: Any, where: Any = None, reduce_fn: Callable[..., Any] | None = None) -> Any:
    with np.errstate(invalid="ignore", divide="ignore"):  # a mean over nothing: NaN, then 0
        output = reduce_fn(a, where=where) if reduce_fn is not None else a
    if reduce_fn is fnp.mean:
        # a mean over nothing (every list masked) is 0, unless the input held NaN itself
        output = fnp.where(fnp.isnan(output) & ~fnp.any(fnp.isnan(a)), 0.0, output)
    if reduce_fn is None and where is not None:
        output = fnp.where(where, output, 0.0)
    return output


def ranking_softmax_loss(logits: Any, labels: Any, *, where: Any = None, weights: Any = None,
                         reduce_fn: Callable[..., Any] | None = fnp.mean) -> Any:
    """The listwise softmax cross entropy ``-sum_i y_i log softmax(s)_i`` of each list,
    reduced by ``reduce_fn`` (``fnp.mean``, ``fnp.sum`` or None); ``where`` masks items and
    ``weights`` scales the labels (optax's).

    >>> import numpy as np
    >>> float(ranking_softmax_loss(np.array([[1.0, 2.0, 0.0]]), np.array([[0.0, 1.0, 0.0]])))
    0.4076059644443804
    """
    _check_subdtype(logits, np.floating)
    labels = labels.astype(logits.dtype)
    if where is not None:
        labels = fnp.where(where, labels, fnp.zeros_like(labels))
        logits = fnp.where(where, logits, -fnp.ones_like(logits) * fnp.inf)
    if weights is not None:
        labels = labels * weights
    log_p = fnn.log_softmax(logits, axis=-1)
    if where is not None:  # masked items' -inf (times a zero label) left out before the product
        log_p = fnp.where(where, log_p, 0.0)
    loss = -fnp.sum(labels * log_p, axis=-1, where=where)
    if where is not None:
        where = fnp.any(where, axis=-1)
    return _safe_reduce(loss, where=where, reduce_fn=reduce_fn)


def make_fenchel_young_loss(max_fun: Callable[..., Any]) -> Callable[..., Any]:
    """The Fenchel-Young loss of a max function (optax's ``losses.make_fenchel_young_loss``,
    Blondel et al. 2020): ``fy(scores, targets, *args, **kwargs) = max_fun(scores, *args,
    **kwargs) - <targets, scores>`` over the last axis (any leading axes are batch axes, as
    optax's; jaxopt's version flattens instead). With ``logsumexp`` it is the softmax cross
    entropy of probability targets up to their entropy.

    >>> import numpy as np
    >>> from funcgrad.scipy.special import logsumexp
    >>> fy = make_fenchel_young_loss(logsumexp)
    >>> scores = np.array([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0]])
    >>> np.round(fy(scores, np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])), 6)
    array([0.464369, 3.065884])
    """
    if not callable(max_fun):
        raise TypeError(f"make_fenchel_young_loss: max_fun must be callable, got "
                        f"{type(max_fun).__name__}")
    max_last = fnp.vectorize(max_fun, signature="(n)->()")

    def fenchel_young_loss(scores: Any, targets: Any, *args: Any, **kwargs: Any) -> Any:
        scores, targets = fnp.asarray(scores), fnp.asarray(targets)
        # jnp.vdot conjugates its first argument
        return max_last(scores, *args, **kwargs) - fnp.sum(fnp.conj(targets) * scores,
                                                           axis=-1)

    return fenchel_young_loss
