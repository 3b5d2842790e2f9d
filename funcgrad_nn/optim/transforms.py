"""optax.transforms: the gradient transformations that are building blocks (clipping,
masking, accumulation, conditionality, monitoring...), the same objects as the names in
:mod:`funcgrad_nn.optim`, grouped as optax 0.2.8 groups them.

>>> import numpy as np
>>> from funcgrad_nn.optim import transforms
>>> tx = transforms.chain(transforms.clip(0.5), transforms.trace(decay=0.0))
>>> tx.update(np.array([2.0, -0.1]), tx.init(np.zeros(2)))[0]
array([ 0.5, -0.1])
"""

from funcgrad_nn.optim._accumulation import (
    MultiSteps,
    MultiStepsState,
    ShouldSkipUpdateFunction,
    skip_large_updates,
    skip_not_finite,
)
from funcgrad_nn.optim._moments import named_chain
from funcgrad_nn.optim._monitoring import (
    MonitorState,
    SnapshotState,
    measure_with_ema,
    monitor,
    snapshot,
)
from funcgrad_nn.optim._transform import (
    ApplyIfFiniteState,
    EmaState,
    MaskedState,
    PartitionState,
    TraceState,
    ZeroNansState,
    add_decayed_weights,
    apply_if_finite,
    chain,
    clip,
    clip_by_global_norm,
    ema,
    freeze,
    masked,
    partition,
    selective_transform,
    trace,
    zero_nans,
)
from funcgrad_nn.optim._transform_more import (
    AddNoiseState,
    ConditionallyMaskState,
    ConditionallyTransformState,
    NonNegativeParamsState,
    adaptive_grad_clip,
    add_noise,
    clip_by_block_rms,
    conditionally_mask,
    conditionally_transform,
    flatten,
    keep_params_nonnegative,
)

__all__ = ["adaptive_grad_clip", "add_decayed_weights", "add_noise", "AddNoiseState",
           "apply_if_finite", "ApplyIfFiniteState", "chain", "clip_by_block_rms",
           "clip_by_global_norm", "clip", "conditionally_mask", "ConditionallyMaskState",
           "conditionally_transform", "ConditionallyTransformState", "ema", "EmaState",
           "flatten", "freeze", "keep_params_nonnegative", "masked", "MaskedState",
           "measure_with_ema", "monitor", "MonitorState", "MultiSteps", "MultiStepsState",
           "named_chain", "NonNegativeParamsState", "partition", "PartitionState",
           "selective_transform", "ShouldSkipUpdateFunction", "skip_large_updates",
           "skip_not_finite", "snapshot", "SnapshotState", "trace", "TraceState", "zero_nans",
           "ZeroNansState"]
