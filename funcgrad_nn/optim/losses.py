"""``optax.losses``'s names that funcgrad_nn.optim has (the same functions as at the top
level), so code written as ``optax.losses.softmax_cross_entropy(...)`` ports by renaming the
module.

>>> import numpy as np
>>> from funcgrad_nn.optim import losses
>>> losses.squared_error(np.array([1.0, 3.0]), np.array([0.0, 1.0]))
array([1., 4.])
"""

from funcgrad_nn.optim._losses import (
    convex_kl_divergence,
    cosine_distance,
    cosine_similarity,
    generalized_kl_divergence,
    hinge_loss,
    huber_loss,
    kl_divergence,
    kl_divergence_with_log_targets,
    l2_loss,
    log_cosh,
    poly_loss_cross_entropy,
    sigmoid_binary_cross_entropy,
    sigmoid_focal_loss,
    smooth_labels,
    softmax_cross_entropy,
    softmax_cross_entropy_with_integer_labels,
    squared_error,
)
from funcgrad_nn.optim._losses_tasks import (
    binary_dice_loss,
    ctc_loss,
    ctc_loss_with_forward_probs,
    dice_loss,
    make_fenchel_young_loss,
    multiclass_generalized_dice_loss,
    multiclass_hinge_loss,
    multiclass_perceptron_loss,
    multiclass_sparsemax_loss,
    ntxent,
    perceptron_loss,
    ranking_softmax_loss,
    safe_softmax_cross_entropy,
    sparsemax_loss,
    triplet_margin_loss,
)

__all__ = ["convex_kl_divergence", "cosine_distance", "cosine_similarity",
           "generalized_kl_divergence", "hinge_loss", "huber_loss", "kl_divergence",
           "kl_divergence_with_log_targets", "l2_loss", "log_cosh", "poly_loss_cross_entropy",
           "sigmoid_binary_cross_entropy", "sigmoid_focal_loss", "smooth_labels",
           "softmax_cross_entropy", "softmax_cross_entropy_with_integer_labels",
           "squared_error", "binary_dice_loss", "ctc_loss", "ctc_loss_with_forward_probs",
           "dice_loss", "make_fenchel_young_loss", "multiclass_generalized_dice_loss", "multiclass_hinge_loss",
           "multiclass_perceptron_loss", "multiclass_sparsemax_loss", "ntxent",
           "perceptron_loss", "ranking_softmax_loss", "safe_softmax_cross_entropy",
           "sparsemax_loss", "triplet_margin_loss"]
