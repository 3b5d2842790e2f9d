"""optax.contrib's names: ``reduce_on_plateau`` (scale the updates down when a loss stops
improving), with optax 0.2.8's arguments, checks and state.

>>> import numpy as np
>>> from funcgrad_nn.optim import contrib
>>> tx = contrib.reduce_on_plateau(factor=0.5, patience=2)
>>> p = {"w": np.zeros(1)}
>>> s = tx.init(p)
>>> for loss in (1.0, 1.0, 1.0):
...     u, s = tx.update({"w": np.ones(1)}, s, p, value=loss)
>>> u["w"], float(s.scale)     # no improvement for 2 steps after the first: halved
(array([0.5]), 0.5)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import tree_util
from funcgrad_nn.optim._contrib_adaptive import *  # noqa: F403
from funcgrad_nn.optim._contrib_adaptive import __all__ as _adaptive_all
from funcgrad_nn.optim._momo import *  # noqa: F403
from funcgrad_nn.optim._momo import __all__ as _momo_all
from funcgrad_nn.optim._muon import *  # noqa: F403
from funcgrad_nn.optim._muon import __all__ as _muon_all
from funcgrad_nn.optim._privacy import *  # noqa: F403
from funcgrad_nn.optim._privacy import __all__ as _privacy_all
from funcgrad_nn.optim._sam import *  # noqa: F403
from funcgrad_nn.optim._sam import __all__ as _sam_all
from funcgrad_nn.optim._sophia import *  # noqa: F403
from funcgrad_nn.optim._sophia import __all__ as _sophia_all
from funcgrad_nn.optim._transform import (
    EmptyState,
    GradientTransformation,
    GradientTransformationExtraArgs,
    ScalarOrSchedule,
    ScaleByAdamState,
    _as_dtype,
    _cast,
    _dtype,
    _increment,
    _tmap,
    _zero_count,
    chain,
    scale_by_learning_rate,
)
from funcgrad_nn.optim._transform_more import safe_increment
from funcgrad_nn.optim.tree import norm as _tree_norm

__all__ = ["ReduceLROnPlateauState", "reduce_on_plateau", "scale_by_adopt", "adopt",
           "NormalizeState", "normalize", "SplitRealAndImaginaryArrays",
           "SplitRealAndImaginaryState", "split_real_and_imaginary",
           *_adaptive_all, *_momo_all, *_muon_all, *_privacy_all, *_sam_all, *_sophia_all]


class ReduceLROnPlateauState(NamedTuple):
    """The current scale, the best (averaged) value so far, the steps without improvement,
    the cooldown left, the values accumulated so far and their mean."""

    scale: Any
    best_value: Any
    plateau_count: Any
    cooldown_count: Any
    count: Any
    avg_value: Any


def _float_dtypes(params: Any) -> list[np.dtype]:
    return [np.dtype(x.dtype) for x in tree_util.tree_leaves(params) if hasattr(x, "dtype")]


def reduce_on_plateau(factor: float = 0.1, patience: int = 10, rtol: float = 1e-4,
                      atol: float = 0.0, cooldown: int = 0, accumulation_size: int = 1,
                      min_scale: float = 0.0) -> GradientTransformationExtraArgs:
    """Multiply the updates by a scale that drops by ``factor`` when the loss ``value``
    (given to ``update`` as a keyword, averaged over ``accumulation_size`` calls) has not
    improved by more than ``rtol * best + atol`` for ``patience`` such averages; after a
    drop, ``cooldown`` averages are ignored; the scale never goes below ``min_scale``
    (optax.contrib's ``reduce_on_plateau``; traceable: ``where``, no Python branch on values).

    >>> import numpy as np
    >>> tx = reduce_on_plateau(patience=1)
    >>> s = tx.init(np.zeros(1))
    >>> _, s = tx.update(np.ones(1), s, value=2.0)
    >>> u, s = tx.update(np.ones(1), s, value=3.0)
    >>> u
    array([0.1])
    """
    if factor <= 0.0 or factor >= 1.0:
        raise ValueError(f"Factor must be in the range (0, 1), got factor = {factor}.")
    if rtol < 0.0 or atol < 0.0:
        raise ValueError(
            f"Both rtol and atol must be non-negative, got rtol = {rtol} and atol = {atol}.")
    if rtol == 0.0 and atol == 0.0:
        raise ValueError(
            f"At least one of rtol or atol must be positive, got rtol = {rtol} and "
            f"atol = {atol}.")
    if rtol > 1.0:
        raise ValueError(f"rtol must be less than or equal to 1.0, got rtol = {rtol}.")

    def init(params: Any) -> ReduceLROnPlateauState:
        # optax: the scale in the lowest float dtype of the parameters (so it never promotes
        # an update), the values in the highest
        dtypes = _float_dtypes(params) or [np.dtype(np.float64)]
        lowest = min(dtypes, key=lambda d: d.itemsize)
        highest = np.result_type(*dtypes)
        zero = _zero_count(params)
        return ReduceLROnPlateauState(
            scale=fnp.ones_like(zero, dtype=lowest), best_value=fnp.full_like(
                zero, np.inf, dtype=highest), plateau_count=zero, cooldown_count=zero,
            count=zero, avg_value=fnp.zeros_like(zero, dtype=highest))

    def update_scale(s: ReduceLROnPlateauState) -> ReduceLROnPlateauState:
        # fnp functions, not operators, on these 0-d arrays: NumPy's give host scalars
        improved = fnp.less(s.avg_value,
                            fnp.subtract(fnp.multiply(s.best_value, 1 - rtol), atol))
        best = fnp.where(improved, s.avg_value.astype(s.best_value.dtype), s.best_value)
        zero = fnp.zeros_like(s.plateau_count)
        plateau = fnp.where(improved, zero, safe_increment(s.plateau_count))
        hit = fnp.equal(plateau, patience)
        cooling = fnp.greater(s.cooldown_count, 0)
        scale_hit = fnp.maximum(
            fnp.where(hit, fnp.multiply(s.scale, factor).astype(s.scale.dtype), s.scale),
            fnp.full_like(s.scale, min_scale))
        return ReduceLROnPlateauState(
            scale=fnp.where(cooling, s.scale, scale_hit),
            best_value=best,
            plateau_count=fnp.where(cooling, zero, fnp.where(hit, zero, plateau)),
            cooldown_count=fnp.where(cooling, fnp.subtract(s.cooldown_count, 1),
                                     fnp.where(hit, fnp.full_like(zero, cooldown), zero)),
            count=zero, avg_value=fnp.zeros_like(s.avg_value))

    def update(updates: Any, state: ReduceLROnPlateauState, params: Any = None, *,
               value: Any, **extra_args: Any) -> tuple[Any, ReduceLROnPlateauState]:
        count = safe_increment(state.count)
        v = _as_dtype(value, state.avg_value)
        avg = fnp.divide(fnp.add(fnp.multiply(state.count, state.avg_value), v),
                         count).astype(state.avg_value.dtype)
        new = state._replace(avg_value=avg, count=count)
        due = fnp.equal(count, accumulation_size)
        stepped = update_scale(new)
        new = ReduceLROnPlateauState(*(fnp.where(due, a, b).astype(b.dtype)
                                       for a, b in zip(stepped, new)))
        return _tmap(lambda g: g * _as_dtype(new.scale, g), updates), new

    return GradientTransformationExtraArgs(init, update)


def scale_by_adopt(b1: float = 0.9, b2: float = 0.9999, eps: float = 1e-6, mu_dtype: Any = None,
                   *, nesterov: bool = False, use_clipping: bool = True,
                   clip_value_fn: Callable[[Any], Any] = lambda x: x ** 0.25,
                   ) -> GradientTransformation:
    """ADOPT's rescaling (Taniguchi et al., 2024; optax.contrib's ``scale_by_adopt``): the
    gradient is normalized by the *previous* second moment (clipped to
    ``clip_value_fn(step)``) before entering the momentum; the first step only initializes
    the second moment (its update is 0).

    >>> import numpy as np
    >>> tx = scale_by_adopt()
    >>> s = tx.init(np.zeros(1))
    >>> u, s = tx.update(np.array([2.0]), s)
    >>> u, np.round(tx.update(np.array([2.0]), s)[0], 6)
    (array([0.]), array([0.1]))
    """
    mu_dtype = _dtype(mu_dtype)

    def init(params: Any) -> ScaleByAdamState:
        return ScaleByAdamState(_zero_count(params),
                                _tmap(lambda p: fnp.zeros_like(p, dtype=mu_dtype), params),
                                _tmap(fnp.zeros_like, params))

    def update(updates: Any, state: ScaleByAdamState, params: Any = None) -> tuple[Any, Any]:
        started = fnp.greater(state.count, 0)
        b2_ = fnp.where(started, b2, 0.0)
        b1_ = fnp.where(started, b1, 1.0)
        nu = _tmap(lambda g, v: (1 - _as_dtype(b2_, v)) * (g * g) + _as_dtype(b2_, v) * v,
                   updates, state.nu)
        clip_value = clip_value_fn(fnp.asarray(state.count, dtype=fnp.float64))

        def normalized(g: Any, v: Any) -> Any:
            out = g / fnp.maximum(fnp.sqrt(v), eps)
            if use_clipping:
                c = _as_dtype(clip_value, out)
                out = fnp.clip(out, -c, c)
            return out

        mu_updates = _tmap(normalized, updates, state.nu)
        mu = _tmap(lambda u, m: (1 - _as_dtype(b1_, m)) * u + _as_dtype(b1_, m) * m, mu_updates,
                   state.mu)
        out = (_tmap(lambda u, m: (1 - _as_dtype(b1_, m)) * u + _as_dtype(b1_, m) * m,
                     mu_updates, mu) if nesterov else mu)
        return out, ScaleByAdamState(_increment(state.count), _cast(mu, mu_dtype), nu)

    return GradientTransformation(init, update)


def adopt(learning_rate: ScalarOrSchedule, b1: float = 0.9, b2: float = 0.9999, eps: float = 1e-6,
          mu_dtype: Any = None, *, nesterov: bool = False, use_clipping: bool = True,
          clip_value_fn: Callable[[Any], Any] = lambda x: x ** 0.25) -> GradientTransformation:
    """ADOPT (optax.contrib's ``adopt``).

    >>> import numpy as np
    >>> tx = adopt(0.1)
    >>> tx.update(np.array([2.0]), tx.init(np.zeros(1)))[0]
    array([-0.])
    """
    return chain(scale_by_adopt(b1, b2, eps, mu_dtype, nesterov=nesterov,
                                use_clipping=use_clipping, clip_value_fn=clip_value_fn),
                 scale_by_learning_rate(learning_rate))


NormalizeState = EmptyState  # optax.contrib's name for normalize's (empty) state


def normalize() -> GradientTransformation:
    """Divide the updates by their global L2 norm (optax.contrib's ``normalize``; no epsilon:
    zero updates give NaNs, as there).

    >>> import numpy as np
    >>> normalize().update({"a": np.array([3.0]), "b": np.array([4.0])}, NormalizeState())[0]
    {'a': array([0.6]), 'b': array([0.8])}
    """

    def update(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        del params
        g_norm = _tree_norm(updates)
        return _tmap(lambda g: g / g_norm, updates), state

    return GradientTransformation(lambda params: NormalizeState(), update)


class SplitRealAndImaginaryArrays(NamedTuple):
    """A pair of real arrays split from a complex array."""

    real: Any
    imaginary: Any


class SplitRealAndImaginaryState(NamedTuple):
    """The inner transformation's state, for :func:`split_real_and_imaginary`."""

    inner_state: Any


def _complex_to_real_pair(x: Any) -> Any:
    if x is not None and fnp.iscomplexobj(x):
        return SplitRealAndImaginaryArrays(fnp.real(x), fnp.imag(x))
    return x


def _real_pair_to_complex(x: Any) -> Any:
    if isinstance(x, SplitRealAndImaginaryArrays):
        return x.real + x.imaginary * 1j
    return x


def split_real_and_imaginary(inner: GradientTransformation) -> GradientTransformation:
    """Run ``inner`` on the real and imaginary parts of complex parameters and updates as two
    real arrays and merge its updates back (optax.contrib's); real ones pass through as they
    are.

    >>> import numpy as np
    >>> from funcgrad_nn import optim
    >>> tx = split_real_and_imaginary(optim.sign_sgd(0.1))
    >>> p = np.array([1 + 1j])
    >>> tx.update(np.array([2.0 - 0.5j]), tx.init(p), p)[0]
    array([-0.1+0.1j])
    """

    def split(tree: Any) -> Any:
        return tree_util.tree_map(_complex_to_real_pair, tree)

    def init(params: Any) -> SplitRealAndImaginaryState:
        return SplitRealAndImaginaryState(inner.init(split(params)))

    def update(updates: Any, state: SplitRealAndImaginaryState,
               params: Any = None) -> tuple[Any, SplitRealAndImaginaryState]:
        new, inner_state = inner.update(split(updates), state.inner_state, split(params))
        new = tree_util.tree_map(_real_pair_to_complex, new,
                                 is_leaf=lambda x: isinstance(x, SplitRealAndImaginaryArrays))
        return new, SplitRealAndImaginaryState(inner_state)

    return GradientTransformation(init, update)
