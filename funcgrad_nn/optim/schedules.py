"""``optax.schedules``'s names (the same functions as at the top level of
funcgrad_nn.optim), so code written as ``optax.schedules.cosine_decay_schedule(...)`` ports by
renaming the module.

>>> from funcgrad_nn.optim import schedules
>>> float(schedules.linear_schedule(1.0, 0.0, 4)(1))
0.75
"""

from funcgrad_nn.optim._inject import (
    InjectHyperparamsState,
    InjectStatefulHyperparamsState,
    StatefulSchedule,
    WrappedSchedule,
    inject_hyperparams,
    inject_stateful_hyperparams,
)
from funcgrad_nn.optim._schedules import (
    Schedule,
    constant_schedule,
    cosine_decay_schedule,
    cosine_onecycle_schedule,
    exponential_decay,
    join_schedules,
    linear_onecycle_schedule,
    linear_schedule,
    piecewise_constant_schedule,
    piecewise_interpolate_schedule,
    polynomial_schedule,
    sgdr_schedule,
    warmup_constant_schedule,
    warmup_cosine_decay_schedule,
    warmup_exponential_decay_schedule,
)

__all__ = ["InjectHyperparamsState", "InjectStatefulHyperparamsState", "inject_hyperparams",
           "inject_stateful_hyperparams", "StatefulSchedule", "WrappedSchedule",
           "Schedule", "constant_schedule", "cosine_decay_schedule", "cosine_onecycle_schedule",
           "exponential_decay", "join_schedules", "linear_onecycle_schedule", "linear_schedule",
           "piecewise_constant_schedule", "piecewise_interpolate_schedule",
           "polynomial_schedule", "sgdr_schedule", "warmup_constant_schedule",
           "warmup_cosine_decay_schedule", "warmup_exponential_decay_schedule"]
