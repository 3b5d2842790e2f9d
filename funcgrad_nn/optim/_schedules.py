"""Learning-rate schedules for the functional core: callables of the step count.

Every schedule is written with :mod:`funcgrad.numpy` operations and no Python branching on the
count, so it works with a Python ``int`` and with a traced count inside ``jit``/``vmap``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import funcgrad.numpy as fnp

__all__ = [
    "Schedule",
    "constant_schedule",
    "linear_schedule",
    "polynomial_schedule",
    "exponential_decay",
    "cosine_decay_schedule",
    "warmup_cosine_decay_schedule",
    "piecewise_constant_schedule",
    "join_schedules",
]

Schedule = Callable[[Any], Any]


def _zeros_like_count(count: Any) -> Any:
    # A float zero on the count's device (a strict/CuPy count must not meet a host array).
    return fnp.zeros_like(fnp.asarray(count), dtype=fnp.float64)


def constant_schedule(value: float) -> Schedule:
    """A schedule that always returns ``value``.

    >>> float(constant_schedule(0.1)(7))
    0.1
    """
    return lambda count: _zeros_like_count(count) + value


def polynomial_schedule(
    init_value: float, end_value: float, power: float, transition_steps: int,
    transition_begin: int = 0,
) -> Schedule:
    """Polynomial decay from ``init_value`` to ``end_value`` over ``transition_steps`` steps.

    ``value = (init - end) * (1 - t / transition_steps) ** power + end`` with ``t`` the count
    minus ``transition_begin``, clipped to ``[0, transition_steps]``.

    >>> float(polynomial_schedule(1.0, 0.0, 2, 10)(5))
    0.25
    """
    if transition_steps <= 0:
        return constant_schedule(init_value)
    transition_begin = max(transition_begin, 0)  # optax: a negative begin falls back to 0

    def schedule(count: Any) -> Any:
        t = fnp.clip(fnp.asarray(count) - transition_begin, 0, transition_steps)
        frac = 1.0 - t / transition_steps
        return (init_value - end_value) * frac**power + end_value

    return schedule


def linear_schedule(
    init_value: float, end_value: float, transition_steps: int, transition_begin: int = 0
) -> Schedule:
    """Linear interpolation from ``init_value`` to ``end_value`` over ``transition_steps``.

    >>> float(linear_schedule(1.0, 0.0, 4)(1))
    0.75
    """
    return polynomial_schedule(init_value, end_value, 1, transition_steps, transition_begin)


def exponential_decay(
    init_value: float, transition_steps: int, decay_rate: float, transition_begin: int = 0,
    staircase: bool = False, end_value: float | None = None,
) -> Schedule:
    """``init_value * decay_rate ** ((count - transition_begin) / transition_steps)``.

    With ``staircase`` the exponent is floored; ``end_value`` bounds the value (below when
    decaying, above when growing). As optax's, a non-positive ``transition_steps`` or a zero
    ``decay_rate`` gives the constant ``init_value``, and a negative ``transition_begin`` is 0.

    >>> float(exponential_decay(1.0, 2, 0.5)(4))
    0.25
    """
    if transition_steps <= 0 or decay_rate == 0:
        return constant_schedule(init_value)
    transition_begin = max(transition_begin, 0)

    def schedule(count: Any) -> Any:
        t = fnp.maximum(fnp.asarray(count) - transition_begin, 0)
        p = t / transition_steps
        if staircase:
            p = fnp.floor(p)
        value = init_value * fnp.power(decay_rate, p)
        if end_value is not None:
            value = fnp.maximum(value, end_value) if decay_rate < 1 else fnp.minimum(value, end_value)
        return value

    return schedule


def cosine_decay_schedule(
    init_value: float, decay_steps: int, alpha: float = 0.0, exponent: float = 1.0
) -> Schedule:
    """Cosine decay from ``init_value`` to ``alpha * init_value`` over ``decay_steps``.

    >>> float(cosine_decay_schedule(1.0, 10)(5))
    0.5
    """
    if decay_steps <= 0:
        raise ValueError(f"cosine_decay_schedule: decay_steps must be positive, got {decay_steps}")

    def schedule(count: Any) -> Any:
        t = fnp.minimum(fnp.asarray(count), decay_steps)
        cosine = 0.5 * (1.0 + fnp.cos(math.pi * t / decay_steps))
        return init_value * ((1.0 - alpha) * cosine**exponent + alpha)

    return schedule


def warmup_cosine_decay_schedule(
    init_value: float, peak_value: float, warmup_steps: int, decay_steps: int,
    end_value: float = 0.0, exponent: float = 1.0,
) -> Schedule:
    """Linear warmup to ``peak_value`` then cosine decay to ``end_value`` (the cosine factor
    raised to ``exponent``, as :func:`cosine_decay_schedule`'s).

    ``decay_steps`` counts the whole schedule, warmup included (as in optax).

    >>> s = warmup_cosine_decay_schedule(0.0, 1.0, 2, 6)
    >>> [round(float(s(i)), 3) for i in (0, 1, 2, 4, 6)]
    [0.0, 0.5, 1.0, 0.5, 0.0]
    """
    alpha = 0.0 if peak_value == 0 else end_value / peak_value
    return join_schedules(
        [linear_schedule(init_value, peak_value, warmup_steps),
         cosine_decay_schedule(peak_value, max(decay_steps - warmup_steps, 1), alpha,
                               exponent)],
        [warmup_steps],
    )


def piecewise_constant_schedule(
    init_value: float, boundaries_and_scales: dict[int, float] | None = None
) -> Schedule:
    """``init_value`` multiplied by every ``scale`` whose boundary the count has reached
    (``count >= boundary``, as optax's); scales must be non-negative.

    >>> s = piecewise_constant_schedule(1.0, {2: 0.5, 4: 0.1})
    >>> [round(float(s(i)), 3) for i in (0, 1, 2, 3, 4)]
    [1.0, 1.0, 0.5, 0.5, 0.05]
    """
    items = sorted((boundaries_and_scales or {}).items())
    if any(scale < 0 for _, scale in items):
        raise ValueError("`piecewise_constant_schedule` expects non-negative scale factors")

    def schedule(count: Any) -> Any:
        value = _zeros_like_count(count) + init_value
        for boundary, scale in items:
            value = fnp.where(fnp.asarray(count) >= boundary, value * scale, value)
        return value

    return schedule


def join_schedules(schedules: Sequence[Schedule], boundaries: Sequence[int]) -> Schedule:
    """Run ``schedules[i]`` from ``boundaries[i-1]`` on, each seeing the count since its start.

    >>> s = join_schedules([constant_schedule(1.0), linear_schedule(1.0, 0.0, 2)], [3])
    >>> [float(s(i)) for i in (2, 3, 4, 5)]
    [1.0, 1.0, 0.5, 0.0]
    """
    if len(schedules) != len(boundaries) + 1:
        raise ValueError(
            f"join_schedules: need one more schedule than boundaries, got {len(schedules)} "
            f"schedules and {len(boundaries)} boundaries"
        )

    def schedule(count: Any) -> Any:
        count = fnp.asarray(count)
        out = schedules[0](count)
        for s, boundary in zip(schedules[1:], boundaries):
            out = fnp.where(count < boundary, out, s(count - boundary))
        return out

    return schedule
