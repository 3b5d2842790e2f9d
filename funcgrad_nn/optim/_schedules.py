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
    "piecewise_interpolate_schedule",
    "linear_onecycle_schedule",
    "cosine_onecycle_schedule",
    "warmup_constant_schedule",
    "warmup_exponential_decay_schedule",
    "sgdr_schedule",
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
    # as optax's: no cosine phase (decay_steps <= warmup_steps) is cosine_decay_schedule's error
    return join_schedules(
        [linear_schedule(init_value, peak_value, warmup_steps),
         cosine_decay_schedule(peak_value, decay_steps - warmup_steps, alpha, exponent)],
        [warmup_steps],
    )


def warmup_constant_schedule(init_value: float, peak_value: float,
                             warmup_steps: int) -> Schedule:
    """Linear warmup from ``init_value`` to ``peak_value`` over ``warmup_steps``, then held
    (optax's).

    >>> s = warmup_constant_schedule(0.0, 1.0, 4)
    >>> [float(s(i)) for i in (0, 2, 4, 9)]
    [0.0, 0.5, 1.0, 1.0]
    """
    return linear_schedule(init_value, peak_value, warmup_steps)


def warmup_exponential_decay_schedule(
    init_value: float, peak_value: float, warmup_steps: int, transition_steps: int,
    decay_rate: float, transition_begin: int = 0, staircase: bool = False,
    end_value: float | None = None,
) -> Schedule:
    """Linear warmup to ``peak_value``, then :func:`exponential_decay` from it (its count
    starting at the end of the warmup), as optax's.

    >>> s = warmup_exponential_decay_schedule(0.0, 1.0, 2, 1, 0.5)
    >>> [float(s(i)) for i in (0, 1, 2, 3, 4)]
    [0.0, 0.5, 1.0, 0.5, 0.25]
    """
    return join_schedules(
        [linear_schedule(init_value, peak_value, warmup_steps),
         exponential_decay(peak_value, transition_steps, decay_rate, transition_begin,
                           staircase, end_value)],
        [warmup_steps],
    )


def sgdr_schedule(cosine_kwargs: Sequence[dict[str, Any]]) -> Schedule:
    """SGD with warm restarts (Loshchilov & Hutter, 2017): one
    :func:`warmup_cosine_decay_schedule` per dict of keyword arguments, each cycle lasting
    its ``decay_steps`` (optax's).

    >>> s = sgdr_schedule([dict(init_value=0.0, peak_value=1.0, warmup_steps=1,
    ...                         decay_steps=3)] * 2)
    >>> [round(float(s(i)), 3) for i in range(6)]
    [0.0, 1.0, 0.5, 0.0, 1.0, 0.5]
    """
    boundaries, schedules, step = [], [], 0
    for kwargs in cosine_kwargs:
        schedules.append(warmup_cosine_decay_schedule(**kwargs))
        step += kwargs["decay_steps"]
        boundaries.append(step)
    return join_schedules(schedules, boundaries[:-1])


def _linear_interpolate(start: float, end: float, pct: Any) -> Any:
    return (end - start) * pct + start


def _cosine_interpolate(start: float, end: float, pct: Any) -> Any:
    return end + (start - end) / 2.0 * (fnp.cos(math.pi * pct) + 1)


_INTERPOLATIONS = {"linear": _linear_interpolate, "cosine": _cosine_interpolate}


def piecewise_interpolate_schedule(
    interpolate_type: str, init_value: float,
    boundaries_and_scales: dict[int, float] | None = None,
) -> Schedule:
    """At boundary ``b_i`` the value is ``init_value`` times every scale up to ``b_i``'s,
    interpolated (``"linear"`` or ``"cosine"``) in between, from ``init_value`` at step 0,
    and held after the last boundary (optax's).

    >>> s = piecewise_interpolate_schedule("linear", 200.0, {5: 1.5, 10: 0.25})
    >>> [float(s(i)) for i in (0, 1, 5, 6, 10, 12)]
    [200.0, 220.0, 300.0, 255.0, 75.0, 75.0]
    """
    interpolate = _INTERPOLATIONS.get(interpolate_type)
    if interpolate is None:
        raise ValueError("`interpolate_type` must be either 'cos' or 'linear'")
    items = sorted((boundaries_and_scales or {}).items())
    if any(scale < 0 for _, scale in items):
        raise ValueError("`piecewise_interpolate_schedule` expects non-negative scale factors")
    bounds = [0, *(b for b, _ in items)]
    values = [init_value]
    for _, scale in items:
        values.append(values[-1] * scale)

    def schedule(count: Any) -> Any:
        # Python scalars only besides the count: the value lands on the count's device.
        count = fnp.asarray(count)
        out = _zeros_like_count(count)
        for lo, hi, start, end in zip(bounds, bounds[1:], values, values[1:]):
            inside = fnp.where((lo <= count) & (count < hi), 1.0, 0.0)
            # an empty interval (two boundaries at one step) gives NaN everywhere, as
            # optax's division by its zero size does
            term = (interpolate(start, end, (count - lo) / (hi - lo)) if hi != lo
                    else math.nan)
            out = out + inside * term
        return out + fnp.where(bounds[-1] <= count, 1.0, 0.0) * values[-1]

    return schedule


def linear_onecycle_schedule(
    transition_steps: int, peak_value: float, pct_start: float = 0.3, pct_final: float = 0.85,
    div_factor: float = 25.0, final_div_factor: float = 1e4,
) -> Schedule:
    """Three linear phases (Smith, 2017; optax's): up from ``peak_value / div_factor`` to
    ``peak_value`` by ``pct_start`` of ``transition_steps``, back down by ``pct_final``,
    then to ``peak_value / div_factor / final_div_factor`` at ``transition_steps``.

    >>> s = linear_onecycle_schedule(10, 1000.0, 0.3, 0.7, 10.0, 100.0)
    >>> [round(float(s(i)), 6) for i in (0, 3, 7, 8, 10, 11)]
    [100.0, 1000.0, 100.0, 67.0, 1.0, 1.0]
    """
    if transition_steps <= 0:
        raise ValueError(
            "A linear onecycle schedule was set with a non-positive `transition_steps`")
    return piecewise_interpolate_schedule(
        "linear", peak_value / div_factor,
        {int(pct_start * transition_steps): div_factor,
         int(pct_final * transition_steps): 1.0 / div_factor,
         transition_steps: 1.0 / final_div_factor})


def cosine_onecycle_schedule(
    transition_steps: int, peak_value: float, pct_start: float = 0.3,
    div_factor: float = 25.0, final_div_factor: float = 1e4,
) -> Schedule:
    """Cosine up from ``peak_value / div_factor`` to ``peak_value`` by ``pct_start`` of
    ``transition_steps``, then cosine down to ``peak_value / div_factor /
    final_div_factor`` (Smith, 2017; optax's).

    >>> s = cosine_onecycle_schedule(5, 1000.0, 0.4, 10.0, 100.0)
    >>> [round(float(s(i)), 6) for i in range(7)]
    [100.0, 550.0, 1000.0, 750.25, 250.75, 1.0, 1.0]
    """
    if transition_steps <= 0:
        # optax's message (it names the linear schedule here too)
        raise ValueError(
            "A linear onecycle schedule was set with a non-positive `transition_steps`")
    return piecewise_interpolate_schedule(
        "cosine", peak_value / div_factor,
        {int(pct_start * transition_steps): div_factor,
         int(transition_steps): 1.0 / (div_factor * final_div_factor)})


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
