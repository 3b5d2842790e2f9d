"""optax's monitoring transformations (``optax.transforms._monitoring``, optax 0.2.8):
``snapshot`` stores a measurement of the updates flowing through a chain in the state,
``monitor`` stores several, each possibly stateful, and ``measure_with_ema`` makes a
measurement an exponential moving average. The updates pass through unchanged; read the
measurements back with ``optim.tree.get(state, name)``.

>>> import numpy as np
>>> from funcgrad_nn import optim
>>> tx = optim.chain(optim.snapshot("g_norm", optim.tree.norm), optim.sgd(0.1))
>>> p = np.array([3.0, 4.0])
>>> u, s = tx.update(p, tx.init(p), p)
>>> float(optim.tree.get(s, "g_norm"))
5.0
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from funcgrad_nn.optim._transform import (
    GradientTransformation,
    GradientTransformationExtraArgs,
    chain,
    ema,
    with_extra_args_support,
)
from funcgrad_nn.optim._transform_more import stateless

__all__ = ["SnapshotState", "MonitorState", "snapshot", "monitor", "measure_with_ema"]


class SnapshotState(NamedTuple):
    """State of :func:`snapshot`: ``{measure_name: measure(last updates)}``."""

    measurement: dict[str, Any]


class MonitorState(NamedTuple):
    """State of :func:`monitor`: the latest measurements by name and each measure's state."""

    measurements: dict[str, Any]
    measure_states: tuple[Any, ...]


def _check_measure(name: str, measure: Any, what: str) -> None:
    if not isinstance(name, str):
        raise TypeError(f"{what}: measurement names must be strings, got {name!r}")
    if not (callable(measure) or isinstance(measure, GradientTransformation)):
        raise TypeError(f"{what}: the measure {name!r} must be a callable of the updates or a "
                        f"GradientTransformation, got {type(measure).__name__}")


def snapshot(measure_name: str, measure: Callable[[Any], Any]) -> GradientTransformation:
    """Store ``measure(updates)`` in the state under ``measure_name`` (optax's ``snapshot``).

    ``init`` measures the params (so the state has the measurement's structure from the
    start); each ``update`` measures the updates it receives, i.e. the gradients as
    transformed by what comes before it in a chain, and passes them on unchanged.

    >>> import numpy as np
    >>> from funcgrad_nn import optim
    >>> solver = optim.chain(optim.sgd(0.1, momentum=0.9),
    ...                      optim.snapshot("norm_before_clip", optim.tree.norm),
    ...                      optim.clip_by_global_norm(0.05))
    >>> params = np.array([1.0, 2.0, 3.0])
    >>> state = solver.init(params)
    >>> for step in range(2):
    ...     updates, state = solver.update(2 * params, state)
    ...     params = optim.apply_updates(params, updates)
    ...     print(f"{float(optim.tree.get(state, 'norm_before_clip')):.2e}")
    7.48e-01
    1.41e+00
    """
    _check_measure(measure_name, measure, "snapshot")

    def init(params: Any) -> SnapshotState:
        return SnapshotState({measure_name: measure(params)})

    def update(updates: Any, state: SnapshotState, params: Any = None) -> tuple[Any, SnapshotState]:
        return updates, SnapshotState({measure_name: measure(updates)})

    return GradientTransformation(init, update)


def monitor(measures: dict[str, Any]) -> GradientTransformationExtraArgs:
    """Record several measurements of the updates, stateful ones too (optax's ``monitor``).

    ``measures`` maps names to either a callable of the updates (stateless) or a gradient
    transformation whose *updates* output is the measurement (e.g. :func:`measure_with_ema`).
    The updates pass through unchanged; extra keyword arguments reach every measure.

    >>> import numpy as np
    >>> from funcgrad_nn import optim
    >>> solver = optim.chain(
    ...     optim.sgd(0.1, momentum=0.9),
    ...     optim.monitor({"norm": optim.tree.norm,
    ...                    "clipped_ema": optim.measure_with_ema(
    ...                        lambda u: optim.tree.norm(u) > 1.0, decay=0.9)}),
    ...     optim.clip_by_global_norm(1.0))
    >>> params = np.array([1.0, 2.0, 3.0])
    >>> state = solver.init(params)
    >>> for step in range(2):
    ...     updates, state = solver.update(2 * params, state)
    ...     params = optim.apply_updates(params, updates)
    ...     n, c = optim.tree.get(state, "norm"), optim.tree.get(state, "clipped_ema")
    ...     print(f"{float(n):.2e} {float(c):.2e}")
    7.48e-01 0.00e+00
    1.27e+00 5.26e-01
    """
    if not isinstance(measures, dict):
        raise TypeError(f"monitor: measures must be a dict of name -> measure, got "
                        f"{type(measures).__name__}")
    txs: dict[str, GradientTransformationExtraArgs] = {}
    for name, measure in measures.items():
        _check_measure(name, measure, "monitor")
        # A transformation is a NamedTuple (not callable): only plain functions are wrapped.
        if isinstance(measure, GradientTransformation):
            txs[name] = with_extra_args_support(measure)
        else:
            txs[name] = with_extra_args_support(stateless(lambda u, _, m=measure: m(u)))
    names = tuple(txs)

    def init(params: Any) -> MonitorState:
        return MonitorState({}, tuple(txs[n].init(params) for n in names))

    def update(updates: Any, state: MonitorState, params: Any = None,
               **extra_args: Any) -> tuple[Any, MonitorState]:
        measurements, new_states = {}, []
        for i, n in enumerate(names):
            m, s = txs[n].update(updates, state.measure_states[i], params, **extra_args)
            measurements[n] = m
            new_states.append(s)
        return updates, MonitorState(measurements, tuple(new_states))

    return GradientTransformationExtraArgs(init, update)


def measure_with_ema(measure: Callable[[Any], Any], decay: float, debias: bool = True,
                     accumulator_dtype: Any = None) -> GradientTransformation:
    """A measure for :func:`monitor`: the (debiased) exponential moving average of
    ``measure(updates)`` (optax's ``measure_with_ema``).

    >>> import numpy as np
    >>> from funcgrad_nn import optim
    >>> tx = optim.measure_with_ema(lambda u: u.sum(), decay=0.5)
    >>> s = tx.init(np.zeros(2))
    >>> m, s = tx.update(np.ones(2), s)
    >>> m, s = tx.update(np.zeros(2), s)
    >>> float(m)     # ema 0.5 * (0.5 * 2) = 0.5, debiased by 1 - 0.5 ** 2
    0.6666666666666666
    """
    if not callable(measure):
        raise TypeError(f"measure_with_ema: measure must be callable, got {type(measure).__name__}")
    base = ema(decay, debias, accumulator_dtype)
    # ema's state takes the measurement's shape, which measuring the params gives.
    measured_ema = base._replace(init=lambda params: base.init(measure(params)))
    return chain(stateless(lambda updates, _: measure(updates)), measured_ema)
