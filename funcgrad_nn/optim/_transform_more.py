"""More of optax's optimizers and transformations: AdaBelief, AMSGrad, Yogi, RAdam, AdaDelta,
Rprop, NovoGrad, LAMB, LARS, Fromage, Adan, sign SGD and Signum, the trust ratio and the
unit-wise adaptive clipping (AGC), gradient centralization, ``apply_every`` and Lookahead.

Each follows optax 0.2.8: the same names, argument order and defaults, the same state
NamedTuples and the same arithmetic (trajectories checked against optax in
tests/funcgrad_nn/test_optim_optax_parity.py). Written with :mod:`funcgrad.numpy` and
``where`` instead of Python branches on values, so they run under ``jit``/``vmap``.

>>> import numpy as np
>>> from funcgrad_nn import optim
>>> tx = optim.chain(optim.clip_by_global_norm(1.0), optim.adabelief(0.1))
>>> p = {"w": np.ones(2)}
>>> u, s = tx.update({"w": np.array([0.5, -0.5])}, tx.init(p), p)
>>> np.round(optim.apply_updates(p, u)["w"], 6)
array([0.888889, 1.111111])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import random as frandom
from funcgrad import tree_util
from funcgrad.backend import device_of, device_put
from funcgrad.core import is_tracer
from funcgrad_nn.optim._transform import (
    NO_PARAMS_MSG,
    EmptyState,
    GradientTransformation,
    GradientTransformationExtraArgs,
    ScalarOrSchedule,
    ScaleByAdamState,
    _as_dtype,
    _bias_corrected,
    _call_update,
    _cast,
    _dtype,
    _increment,
    _tmap,
    _zero_count,
    add_decayed_weights,
    chain,
    ema,
    masked,
    scale,
    scale_by_adam,
    scale_by_learning_rate,
    sgd,
    trace,
)

__all__ = [
    "ScaleByBeliefState",
    "ScaleByAmsgradState",
    "ScaleByAdaDeltaState",
    "ScaleByRpropState",
    "ScaleByNovogradState",
    "ScaleByAdanState",
    "ScaleByTrustRatioState",
    "AdaptiveGradClipState",
    "ApplyEvery",
    "LookaheadState",
    "LookaheadParams",
    "NO_PARAMS_MSG",
    "init_empty_state",
    "stateless",
    "stateless_with_tree_map",
    "safe_norm",
    "safe_root_mean_squares",
    "scale_by_belief",
    "scale_by_yogi",
    "scale_by_radam",
    "scale_by_amsgrad",
    "scale_by_adadelta",
    "scale_by_rprop",
    "scale_by_novograd",
    "scale_by_adan",
    "scale_by_sign",
    "scale_by_trust_ratio",
    "scale_by_param_block_norm",
    "scale_by_param_block_rms",
    "clip_by_block_rms",
    "adaptive_grad_clip",
    "centralize",
    "keep_params_nonnegative",
    "apply_every",
    "lookahead",
    "adabelief",
    "yogi",
    "radam",
    "amsgrad",
    "adadelta",
    "rprop",
    "novograd",
    "adan",
    "lamb",
    "lars",
    "fromage",
    "sign_sgd",
    "signum",
    "ConditionallyTransformState",
    "ConditionallyMaskState",
    "AddNoiseState",
    "ScaleBySM3State",
    "conditionally_transform",
    "conditionally_mask",
    "add_noise",
    "noisy_sgd",
    "scale_by_sm3",
    "sm3",
    "AddDecayedWeightsState",
    "ClipState",
    "ClipByGlobalNormState",
    "ScaleState",
    "NonNegativeParamsState",
    "OptState",
    "Params",
    "Updates",
    "MaskOrFn",
    "safe_increment",
    "safe_int32_increment",
    "flatten",
    "scale_gradient",
    "per_example_global_norm_clip",
    "per_example_layer_norm_clip",
    "scale_by_polyak",
    "polyak_sgd",
]

class ScaleByBeliefState(NamedTuple):
    """AdaBelief's step count, gradient mean and variance of the prediction error."""

    count: Any
    mu: Any
    nu: Any


class ScaleByAmsgradState(NamedTuple):
    """AMSGrad's step count, moments and running maximum of the second moment."""

    count: Any
    mu: Any
    nu: Any
    nu_max: Any


class ScaleByAdaDeltaState(NamedTuple):
    """AdaDelta's running means of squared gradients (``e_g``) and squared updates (``e_x``)."""

    e_g: Any
    e_x: Any


class ScaleByRpropState(NamedTuple):
    """Rprop's per-element step sizes and previous updates."""

    step_sizes: Any
    prev_updates: Any


class ScaleByNovogradState(NamedTuple):
    """NovoGrad's step count, momentum and per-leaf (scalar) second moment."""

    count: Any
    mu: Any
    nu: Any


class ScaleByAdanState(NamedTuple):
    """Adan's moments of the gradient (``m``), of its difference (``v``), the second moment
    (``n``), the previous gradient (``g``) and the step count (``t``)."""

    m: Any
    v: Any
    n: Any
    g: Any
    t: Any


# optax's names for the states of stateless transformations: all EmptyState
ScaleByTrustRatioState = EmptyState
AdaptiveGradClipState = EmptyState
AddDecayedWeightsState = EmptyState
ClipState = EmptyState
ClipByGlobalNormState = EmptyState
ScaleState = EmptyState
NonNegativeParamsState = EmptyState

# optax's type names (pytrees of arrays; a mask or a function of the params returning one)
OptState = Any
Params = Any
Updates = Any
MaskOrFn = Any


class ApplyEvery(NamedTuple):
    """:func:`apply_every`'s call count (modulo k) and accumulated gradients."""

    count: Any
    grad_acc: Any


class LookaheadState(NamedTuple):
    """The fast optimizer's state and the steps since the last synchronization."""

    fast_state: Any
    steps_since_sync: Any


class LookaheadParams(NamedTuple):
    """The fast and slow parameters :func:`lookahead` updates together (a pytree)."""

    fast: Any
    slow: Any

    @classmethod
    def init_synced(cls, params: Any) -> LookaheadParams:
        """Fast and slow parameters both equal to ``params``."""
        return cls(slow=params, fast=params)


def init_empty_state(params: Any) -> EmptyState:
    """The ``init`` of stateless transformations (optax's ``init_empty_state``).

    >>> init_empty_state({"w": 1.0})
    EmptyState()
    """
    return EmptyState()


def stateless(f: Callable[[Any, Any], Any]) -> GradientTransformation:
    """A transformation from ``f(updates, params) -> updates`` (optax's ``stateless``).

    >>> import numpy as np
    >>> tx = stateless(lambda u, p: {k: v * 2 for k, v in u.items()})
    >>> tx.update({"w": np.ones(1)}, tx.init(None))[0]
    {'w': array([2.])}
    """
    return GradientTransformation(
        init_empty_state, lambda updates, state, params=None: (f(updates, params), EmptyState()))


def stateless_with_tree_map(f: Callable[[Any, Any], Any]) -> GradientTransformation:
    """A transformation applying ``f(update, param)`` leaf by leaf (``param`` is None when no
    params are given), optax's ``stateless_with_tree_map``.

    >>> import numpy as np
    >>> tx = stateless_with_tree_map(lambda u, p: u + p)
    >>> tx.update([np.ones(1)], EmptyState(), [np.ones(1)])[0]
    [array([2.])]
    """

    def update(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        if params is not None:
            return tree_util.tree_map(f, updates, params), EmptyState()
        return tree_util.tree_map(lambda u: f(u, None), updates), EmptyState()

    return GradientTransformation(init_empty_state, update)


def _abs_sq(x: Any) -> Any:
    # |x|^2 for real and complex leaves alike (optax's numerics.abs_sq)
    return fnp.real(x * fnp.conj(x)) if fnp.iscomplexobj(x) else x * x


def _norm(x: Any) -> Any:
    # jnp.linalg.norm(x) with axis=None: the 2-norm of all elements (Frobenius for matrices)
    return fnp.sqrt(fnp.sum(_abs_sq(x)))


def safe_norm(x: Any, min_norm: Any) -> Any:
    """``max(norm(x), min_norm)`` whose gradient is 0, not NaN, at a zero ``x`` (optax's
    ``safe_norm``, the norm of all elements).

    >>> import numpy as np
    >>> float(safe_norm(np.array([3.0, 4.0]), 1.0)), float(safe_norm(np.zeros(2), 1e-3))
    (5.0, 0.001)
    """
    norm = _norm(x)
    # The masked x keeps the root's argument away from 0 where min_norm is returned, so its
    # derivative (inf there) never multiplies a zero cotangent into NaN.
    masked_x = fnp.where(norm <= min_norm, fnp.ones_like(x), x)
    return fnp.where(norm <= min_norm, _as_dtype(min_norm, norm), _norm(masked_x))


def safe_root_mean_squares(x: Any, min_rms: Any) -> Any:
    """``max(sqrt(mean(|x|^2)), min_rms)`` with a finite gradient at 0 (optax's).

    >>> import numpy as np
    >>> round(float(safe_root_mean_squares(np.array([3.0, 4.0]), 0.0)) ** 2, 12)
    12.5
    """
    rms = fnp.sqrt(fnp.mean(_abs_sq(x)))
    masked_x = fnp.where(rms <= min_rms, fnp.ones_like(x), x)
    return fnp.where(rms <= min_rms, _as_dtype(min_rms, rms),
                     fnp.sqrt(fnp.mean(_abs_sq(masked_x))))


def _moment(updates: Any, moments: Any, decay: Any) -> Any:
    return _tmap(lambda g, t: (1 - decay) * g + decay * t, updates, moments)


def _moment_sq(updates: Any, moments: Any, decay: Any) -> Any:
    return _tmap(lambda g, t: (1 - decay) * _abs_sq(g) + decay * t, updates, moments)


def _nesterov_mu_hat(mu: Any, updates: Any, b1: Any, count: Any) -> Any:
    return _tmap(lambda m, g: b1 * m + (1 - b1) * g, _bias_corrected(mu, b1, _increment(count)),
                 _bias_corrected(updates, b1, count))


def _zeros_like_tree(params: Any, dtype: Any = None) -> Any:
    return _tmap(lambda p: fnp.zeros_like(p, dtype=dtype), params)


def _needs_params(params: Any) -> None:
    if params is None:
        raise ValueError(NO_PARAMS_MSG)


def scale_by_belief(b1: float = 0.9, b2: float = 0.999, eps: float = 1e-16,
                    eps_root: float = 1e-16, *, nesterov: bool = False) -> GradientTransformation:
    """AdaBelief's rescaling (optax's ``scale_by_belief``): Adam's with the variance of the
    prediction error ``g - mu`` (plus ``eps_root``) in place of the second moment.

    >>> import numpy as np
    >>> tx = scale_by_belief()
    >>> np.round(tx.update(np.array([0.5, -2.0]), tx.init(np.zeros(2)))[0], 6)
    array([ 1.111111, -1.111111])
    """

    def init(params: Any) -> ScaleByBeliefState:
        return ScaleByBeliefState(_zero_count(params), _zeros_like_tree(params),
                                  _zeros_like_tree(params))

    def update(updates: Any, state: ScaleByBeliefState, params: Any = None) -> tuple[Any, Any]:
        mu = _moment(updates, state.mu, b1)
        nu = _moment_sq(_tmap(lambda g, m: g - m, updates, mu), state.nu, b2)
        nu = _tmap(lambda v: v + eps_root, nu)
        count = _increment(state.count)
        mu_hat = (_nesterov_mu_hat(mu, updates, b1, count) if nesterov
                  else _bias_corrected(mu, b1, count))
        nu_hat = _bias_corrected(nu, b2, count)
        out = _tmap(lambda m, v: m / (fnp.sqrt(v) + eps), mu_hat, nu_hat)
        return out, ScaleByBeliefState(count, mu, nu)

    return GradientTransformation(init, update)


def scale_by_yogi(b1: float = 0.9, b2: float = 0.999, eps: float = 1e-3, eps_root: float = 0.0,
                  initial_accumulator_value: float = 1e-6) -> GradientTransformation:
    """Yogi's rescaling (optax's ``scale_by_yogi``): the second moment moves additively,
    ``nu - (1 - b2) * sign(nu - g^2) * g^2``; both moments start at
    ``initial_accumulator_value``.

    >>> import numpy as np
    >>> tx = scale_by_yogi()
    >>> np.round(tx.update(np.array([2.0]), tx.init(np.zeros(1)))[0], 6)
    array([0.99938])
    """

    def init(params: Any) -> ScaleByAdamState:
        return ScaleByAdamState(
            _zero_count(params), _tmap(lambda p: fnp.full_like(p, initial_accumulator_value), params),
            _tmap(lambda p: fnp.full_like(p, initial_accumulator_value), params))

    def update(updates: Any, state: ScaleByAdamState, params: Any = None) -> tuple[Any, Any]:
        mu = _moment(updates, state.mu, b1)
        nu = _tmap(lambda g, v: v - (1 - b2) * fnp.sign(v - _abs_sq(g)) * _abs_sq(g), updates,
                   state.nu)
        count = _increment(state.count)
        mu_hat, nu_hat = _bias_corrected(mu, b1, count), _bias_corrected(nu, b2, count)
        out = _tmap(lambda m, v: m / (fnp.sqrt(v + eps_root) + eps), mu_hat, nu_hat)
        return out, ScaleByAdamState(count, mu, nu)

    return GradientTransformation(init, update)


def scale_by_radam(b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8, eps_root: float = 0.0,
                   threshold: float = 5.0, *, nesterov: bool = False) -> GradientTransformation:
    """Rectified Adam's rescaling (optax's ``scale_by_radam``): Adam's step times the
    variance rectification ``r`` once the length of the approximated SMA ``ro`` reaches
    ``threshold``; before that, the bias-corrected momentum alone.

    >>> import numpy as np
    >>> tx = scale_by_radam()
    >>> tx.update(np.array([2.0]), tx.init(np.zeros(1)))[0]  # ro < 5: the momentum
    array([2.])
    """
    ro_inf = 2.0 / (1.0 - b2) - 1.0

    def init(params: Any) -> ScaleByAdamState:
        return ScaleByAdamState(_zero_count(params), _zeros_like_tree(params),
                                _zeros_like_tree(params))

    def update(updates: Any, state: ScaleByAdamState, params: Any = None) -> tuple[Any, Any]:
        mu = _moment(updates, state.mu, b1)
        nu = _moment_sq(updates, state.nu, b2)
        count = _increment(state.count)
        t = fnp.asarray(count, dtype=fnp.float64)
        b2t = b2 ** t
        ro = ro_inf - 2 * t * b2t / (1 - b2t)
        mu_hat = (_nesterov_mu_hat(mu, updates, b1, count) if nesterov
                  else _bias_corrected(mu, b1, count))
        nu_hat = _bias_corrected(nu, b2, count)
        # For 2 < ro < 4 r is the root of a negative number: NaN as in optax (selected away
        # unless threshold < 4), made without NumPy's invalid-value warning.
        r2 = (ro - 4.0) * (ro - 2.0) * ro_inf / ((ro_inf - 4.0) * (ro_inf - 2.0) * ro)
        r = fnp.sqrt(fnp.where(r2 >= 0, r2, fnp.nan))
        rectify = ro >= threshold
        out = _tmap(lambda m, v: fnp.where(
            rectify, _as_dtype(r, m) * m / (fnp.sqrt(v + eps_root) + eps), m), mu_hat, nu_hat)
        return out, ScaleByAdamState(count, mu, nu)

    return GradientTransformation(init, update)


def scale_by_amsgrad(b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8, eps_root: float = 0.0,
                     mu_dtype: Any = None, bias_correction_mu: bool = True,
                     bias_correction_nu: bool = True) -> GradientTransformation:
    """AMSGrad's rescaling (optax's ``scale_by_amsgrad``): Adam's with the running maximum
    of the (bias-corrected) second moment.

    >>> import numpy as np
    >>> tx = scale_by_amsgrad()
    >>> s = tx.init(np.zeros(1))
    >>> _, s = tx.update(np.array([2.0]), s)
    >>> np.round(tx.update(np.array([0.1]), s)[0], 6)   # nu_max still remembers g = 2
    array([0.5])
    """
    mu_dtype = _dtype(mu_dtype)

    def init(params: Any) -> ScaleByAmsgradState:
        return ScaleByAmsgradState(_zero_count(params), _zeros_like_tree(params, mu_dtype),
                                   _zeros_like_tree(params), _zeros_like_tree(params))

    def update(updates: Any, state: ScaleByAmsgradState, params: Any = None) -> tuple[Any, Any]:
        mu = _moment(updates, state.mu, b1)
        nu = _moment_sq(updates, state.nu, b2)
        count = _increment(state.count)
        mu_hat = _bias_corrected(mu, b1, count) if bias_correction_mu else mu
        nu_eff = _bias_corrected(nu, b2, count) if bias_correction_nu else nu
        nu_max = _tmap(fnp.maximum, state.nu_max, nu_eff)
        out = _tmap(lambda m, v: m / (fnp.sqrt(v + eps_root) + eps), mu_hat, nu_max)
        return out, ScaleByAmsgradState(count, _cast(mu, mu_dtype), nu, nu_max)

    return GradientTransformation(init, update)


def scale_by_adadelta(rho: float = 0.9, eps: float = 1e-6) -> GradientTransformation:
    """AdaDelta's rescaling (optax's ``scale_by_adadelta``):
    ``g * sqrt(E[dx^2] + eps) / sqrt(E[g^2] + eps)``.

    >>> import numpy as np
    >>> tx = scale_by_adadelta(eps=1e-4)
    >>> np.round(tx.update(np.array([1.0]), tx.init(np.zeros(1)))[0], 6)
    array([0.031607])
    """

    def init(params: Any) -> ScaleByAdaDeltaState:
        return ScaleByAdaDeltaState(_zeros_like_tree(params), _zeros_like_tree(params))

    def update(updates: Any, state: ScaleByAdaDeltaState, params: Any = None) -> tuple[Any, Any]:
        e_g = _moment_sq(updates, state.e_g, rho)
        out = _tmap(lambda g, eg, ex: fnp.sqrt(ex + eps) / fnp.sqrt(eg + eps) * g, updates, e_g,
                    state.e_x)
        return out, ScaleByAdaDeltaState(e_g, _moment_sq(out, state.e_x, rho))

    return GradientTransformation(init, update)


def scale_by_rprop(learning_rate: float, eta_minus: float = 0.5, eta_plus: float = 1.2,
                   min_step_size: float = 1e-6,
                   max_step_size: float = 50.0) -> GradientTransformation:
    """Rprop's rescaling (optax's ``scale_by_rprop``): per element, a step size grown by
    ``eta_plus`` while the gradient keeps its sign and shrunk by ``eta_minus`` when it
    flips (then that element waits a step), clipped to ``[min_step_size, max_step_size]``.
    As optax 0.2.8 does, the update returned is the one computed at the previous call
    (``step_size * sign(g)``, zero at the first call and where the sign flipped), one step
    behind; the descent sign comes from ``rprop``'s ``scale(-1)``.

    >>> import numpy as np
    >>> tx = scale_by_rprop(0.1)
    >>> s = tx.init(np.zeros(2))
    >>> u, s = tx.update(np.array([1.0, -1.0]), s)
    >>> u, tx.update(np.array([1.0, 1.0]), s)[0], s.prev_updates
    (array([0., 0.]), array([0.1, 0. ]), array([ 0.1, -0.1]))
    """

    def init(params: Any) -> ScaleByRpropState:
        return ScaleByRpropState(_tmap(lambda p: fnp.full_like(p, learning_rate), params),
                                 _zeros_like_tree(params))

    def update(updates: Any, state: ScaleByRpropState, params: Any = None) -> tuple[Any, Any]:
        sign = _tmap(lambda g, prev: g * prev, updates, state.prev_updates)
        steps = _tmap(lambda s, step: fnp.where(
            s == 0, step, fnp.clip(step * fnp.where(s > 0, eta_plus, eta_minus).astype(step.dtype),
                                   min_step_size, max_step_size)), sign, state.step_sizes)
        prev = _tmap(lambda s, g, step: fnp.where(s < 0, fnp.zeros_like(g), step * fnp.sign(g)),
                     sign, updates, steps)
        # optax 0.2.8 emits the update stored at the previous call (zero at the first), not
        # this call's: kept, so trajectories match optax's step for step.
        out = _tmap(lambda s, old: fnp.where(s < 0, fnp.zeros_like(old), old), sign,
                    state.prev_updates)
        return out, ScaleByRpropState(steps, prev)

    return GradientTransformation(init, update)


def scale_by_novograd(b1: float = 0.9, b2: float = 0.25, eps: float = 1e-8, eps_root: float = 0.0,
                      weight_decay: float = 0.0, mu_dtype: Any = None) -> GradientTransformation:
    """NovoGrad's rescaling (optax's ``scale_by_novograd``): a second moment per leaf (of the
    squared norm of its gradient), the normalized gradient plus ``weight_decay * params`` as
    momentum; the first step initializes both instead of averaging. Needs ``params``.

    >>> import numpy as np
    >>> tx = scale_by_novograd()
    >>> tx.update(np.array([3.0, 4.0]), tx.init(np.zeros(2)), np.zeros(2))[0]
    array([0.6, 0.8])
    """
    mu_dtype = _dtype(mu_dtype)

    def init(params: Any) -> ScaleByNovogradState:
        return ScaleByNovogradState(_zero_count(params), _zeros_like_tree(params, mu_dtype),
                                    _tmap(lambda p: fnp.zeros_like(p, shape=()), params))

    def update(updates: Any, state: ScaleByNovogradState, params: Any = None) -> tuple[Any, Any]:
        _needs_params(params)
        count = _increment(state.count)
        first = fnp.equal(count, 1)
        # where, not a branch on the count: both the initial and the averaged values are
        # computed, as lax.cond's two branches would be under jit. fnp functions, not
        # operators, on the 0-d leaves: NumPy's operators would give host scalars.
        nu = _tmap(lambda g, n: fnp.where(first, fnp.sum(_abs_sq(g)).astype(n.dtype), fnp.add(
            fnp.multiply(fnp.sum(_abs_sq(g)), 1 - b2), fnp.multiply(n, b2)).astype(n.dtype)),
            updates, state.nu)
        step = _tmap(lambda g, p, n: g / fnp.add(fnp.sqrt(fnp.add(n, eps_root)), eps)
                     + weight_decay * p, updates, params, nu)
        mu = _tmap(lambda m, s: fnp.where(first, s, b1 * m + s), state.mu, step)
        mu = _cast(mu, mu_dtype)
        return mu, ScaleByNovogradState(count, mu, nu)

    return GradientTransformation(init, update)


def scale_by_adan(b1: float = 0.98, b2: float = 0.92, b3: float = 0.99, eps: float = 1e-8,
                  eps_root: float = 0.0) -> GradientTransformation:
    """Adan's rescaling (optax's ``scale_by_adan``): Nesterov momentum estimated from the
    gradient, its difference to the previous gradient and their second moment, all
    bias-corrected.

    >>> import numpy as np
    >>> tx = scale_by_adan()
    >>> np.round(tx.update(np.array([2.0]), tx.init(np.zeros(1)))[0], 6)
    array([1.])
    """

    def init(params: Any) -> ScaleByAdanState:
        return ScaleByAdanState(_zeros_like_tree(params), _zeros_like_tree(params),
                                _zeros_like_tree(params), _zeros_like_tree(params),
                                _zero_count(params))

    def update(updates: Any, state: ScaleByAdanState, params: Any = None) -> tuple[Any, Any]:
        diff = _tmap(lambda g, prev: fnp.where(state.t == 0, fnp.zeros_like(g), g - prev),
                     updates, state.g)
        m = _moment(updates, state.m, b1)
        v = _moment(diff, state.v, b2)
        n = _moment_sq(_tmap(lambda g, d: g + (1 - b2) * d, updates, diff), state.n, b3)
        t = _increment(state.t)
        m_hat, v_hat = _bias_corrected(m, b1, t), _bias_corrected(v, b2, t)
        n_hat = _bias_corrected(n, b3, t)
        out = _tmap(lambda a, b, c: (a + (1 - b2) * b) / (fnp.sqrt(c + eps_root) + eps), m_hat,
                    v_hat, n_hat)
        return out, ScaleByAdanState(m, v, n, updates, t)

    return GradientTransformation(init, update)


def scale_by_sign() -> GradientTransformation:
    """Replace every update by its sign (optax's ``scale_by_sign``).

    >>> import numpy as np
    >>> scale_by_sign().update(np.array([-3.0, 0.0, 2.0]), EmptyState())[0]
    array([-1.,  0.,  1.])
    """
    return GradientTransformation(
        init_empty_state, lambda updates, state, params=None: (_tmap(fnp.sign, updates), state))


def scale_by_trust_ratio(min_norm: float = 0.0, trust_coefficient: float = 1.0,
                         eps: float = 0.0) -> GradientTransformation:
    """Scale each leaf's update by ``trust_coefficient * |param| / (|update| + eps)`` (norms
    of the whole leaf, at least ``min_norm``; the ratio is 1 where either norm is 0), the
    layer-wise trust ratio of LARS and LAMB (optax's ``scale_by_trust_ratio``). Needs
    ``params``.

    >>> import numpy as np
    >>> tx = scale_by_trust_ratio()
    >>> tx.update(np.array([3.0, 4.0]), EmptyState(), np.array([0.0, 1.0]))[0]
    array([0.6, 0.8])
    """

    def update(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        _needs_params(params)

        def leaf(u: Any, p: Any) -> Any:
            p_norm, u_norm = safe_norm(p, min_norm), safe_norm(u, min_norm)
            ratio = trust_coefficient * p_norm / (u_norm + eps)
            zero = fnp.logical_or(p_norm == 0.0, u_norm == 0.0)
            return u * _as_dtype(fnp.where(zero, fnp.ones_like(ratio), ratio), u)

        return _tmap(leaf, updates, params), state

    return GradientTransformation(init_empty_state, update)


def scale_by_param_block_norm(min_scale: float = 1e-3) -> GradientTransformation:
    """Scale each leaf's update by its parameter's norm, at least ``min_scale`` (optax's).

    >>> import numpy as np
    >>> scale_by_param_block_norm().update(np.ones(2), EmptyState(), np.array([3.0, 4.0]))[0]
    array([5., 5.])
    """

    def update(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        _needs_params(params)
        return _tmap(lambda u, p: u * _as_dtype(safe_norm(p, min_scale), u), updates,
                     params), state

    return GradientTransformation(init_empty_state, update)


def scale_by_param_block_rms(min_scale: float = 1e-3) -> GradientTransformation:
    """Scale each leaf's update by its parameter's root mean square, at least ``min_scale``
    (optax's).

    >>> import numpy as np
    >>> scale_by_param_block_rms().update(np.ones(2), EmptyState(), np.array([1.0, 7.0]))[0]
    array([5., 5.])
    """

    def update(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        _needs_params(params)
        return _tmap(lambda u, p: u * _as_dtype(safe_root_mean_squares(p, min_scale), u),
                     updates, params), state

    return GradientTransformation(init_empty_state, update)


def clip_by_block_rms(threshold: float) -> GradientTransformation:
    """Divide each leaf by ``max(1, rms(leaf) / threshold)`` (optax's ``clip_by_block_rms``).

    >>> import numpy as np
    >>> clip_by_block_rms(1.0).update(np.array([1.0, 7.0]), EmptyState())[0]
    array([0.2, 1.4])
    """

    def leaf(u: Any) -> Any:
        rms = fnp.sqrt(fnp.mean(_abs_sq(u)))
        # fnp.divide, not "/": on a 0-d NumPy array the operator gives a host scalar
        return u / fnp.maximum(fnp.ones_like(rms), fnp.divide(rms, threshold)).astype(rms.dtype)

    return GradientTransformation(
        init_empty_state, lambda updates, state, params=None: (_tmap(leaf, updates), state))


def _unitwise_norm(x: Any, axis: Any) -> Any:
    """optax's ``unitwise_norm``: the norm of each unit (output) of a layer's tensor."""
    if axis is not None:
        sq = fnp.sum(_abs_sq(x), axis=axis, keepdims=True)
    elif fnp.squeeze(x).ndim <= 1:  # scalars and vectors: the whole leaf
        sq = fnp.sum(_abs_sq(x), keepdims=True)
    elif x.ndim in (2, 3):  # linear layers (IO) and multi-head linear ones
        sq = fnp.sum(_abs_sq(x), axis=0, keepdims=True)
    elif x.ndim == 4:  # conv kernels HWIO
        sq = fnp.sum(_abs_sq(x), axis=(0, 1, 2), keepdims=True)
    elif x.ndim == 5:  # 3-d conv kernels DHWIO
        sq = fnp.sum(_abs_sq(x), axis=(0, 1, 2, 3), keepdims=True)
    else:
        raise ValueError(
            f"Expected parameter with shape in {1, 2, 3, 4, 5}, got {tuple(x.shape)}. "
            "Use axis parameter to specify reduction axes for other shapes.")
    return fnp.broadcast_to(fnp.sqrt(sq), x.shape)


def adaptive_grad_clip(clipping: float, eps: float = 1e-3,
                       axis: int | tuple[int, ...] | None = None) -> GradientTransformation:
    """Adaptive gradient clipping (AGC, optax's ``adaptive_grad_clip``): rescale each unit's
    gradient to at most ``clipping * max(|param unit|, eps)``. Units are the slices along
    ``axis``, or by default: a whole vector, axis 0 of a matrix (IO layout) or of a rank-3
    leaf, axes (0, 1, 2) of a HWIO kernel, (0, 1, 2, 3) of a DHWIO one. Needs ``params``.

    >>> import numpy as np
    >>> tx = adaptive_grad_clip(0.5)
    >>> tx.update(np.array([3.0, 4.0]), EmptyState(), np.array([0.0, 2.0]))[0]
    array([0.6, 0.8])
    """

    def update(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        _needs_params(params)

        def leaf(g: Any, p: Any) -> Any:
            g_norm, p_norm = _unitwise_norm(g, axis), _unitwise_norm(p, axis)
            max_norm = clipping * fnp.maximum(p_norm, eps)
            # the max(., 1e-6) only guards the division: g_norm < max_norm keeps g there
            clipped = g * (max_norm / fnp.maximum(g_norm, 1e-6))
            return fnp.where(g_norm < max_norm, g, clipped)

        return _tmap(leaf, updates, params), state

    return GradientTransformation(init_empty_state, update)


def centralize() -> GradientTransformation:
    """Gradient centralization (optax's ``centralize``): subtract from each leaf of rank 2 or
    more its mean over all axes but the first; vectors pass unchanged.

    >>> import numpy as np
    >>> centralize().update(np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), EmptyState())[0]
    array([[-1.,  0.,  1.],
           [-1.,  0.,  1.]])
    """

    def leaf(g: Any) -> Any:
        if g.ndim > 1:
            return g - fnp.mean(g, axis=tuple(range(1, g.ndim)), keepdims=True)
        return g

    return GradientTransformation(
        init_empty_state, lambda updates, state, params=None: (_tmap(leaf, updates), state))


def keep_params_nonnegative() -> GradientTransformation:
    """Change the updates so that no parameter goes below 0: where ``p + u < 0`` the update
    is ``-p`` (optax's ``keep_params_nonnegative``). Needs ``params``.

    >>> import numpy as np
    >>> keep_params_nonnegative().update(np.array([-2.0, -0.5]), EmptyState(), np.ones(2))[0]
    array([-1. , -0.5])
    """

    def update(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        _needs_params(params)
        return _tmap(lambda u, p: fnp.where(p + u < 0.0, -p, u), updates, params), state

    return GradientTransformation(init_empty_state, update)


def apply_every(k: int = 1) -> GradientTransformation:
    """Accumulate (sum) the updates over ``k`` calls and emit the sum on every k-th call,
    zeros in between (optax's ``apply_every``; see :class:`MultiSteps` to step an optimizer
    on the mean instead).

    >>> import numpy as np
    >>> tx = apply_every(2)
    >>> s = tx.init(np.zeros(1))
    >>> u1, s = tx.update(np.ones(1), s); u2, s = tx.update(np.full(1, 2.0), s)
    >>> u1, u2
    (array([0.]), array([3.]))
    """

    def init(params: Any) -> ApplyEvery:
        return ApplyEvery(_zero_count(params), _zeros_like_tree(params))

    def update(updates: Any, state: ApplyEvery, params: Any = None) -> tuple[Any, Any]:
        c = fnp.mod(state.count, k)
        acc = _tmap(lambda g, ga: fnp.where(c != 0, ga, fnp.zeros_like(ga)) + g, updates,
                    state.grad_acc)
        emit = c == k - 1
        out = _tmap(lambda ga: fnp.where(emit, ga, fnp.zeros_like(ga)), acc)
        return out, ApplyEvery(fnp.mod(_increment(state.count), k), acc)

    return GradientTransformation(init, update)


def lookahead(fast_optimizer: GradientTransformation, sync_period: int, slow_step_size: float,
              reset_state: bool = False) -> GradientTransformation:
    """Lookahead (optax's ``lookahead``): ``fast_optimizer`` steps the fast parameters; every
    ``sync_period`` steps the slow ones move ``slow_step_size`` of the way to them and the
    fast ones are reset to the slow ones. Parameters and updates are
    :class:`LookaheadParams` (``LookaheadParams.init_synced(params)`` to start);
    ``reset_state`` re-initializes the fast optimizer's state at each synchronization.

    >>> import numpy as np
    >>> from funcgrad_nn import optim
    >>> tx = optim.lookahead(optim.sgd(1.0), sync_period=2, slow_step_size=0.5)
    >>> p = optim.LookaheadParams.init_synced(np.zeros(1))
    >>> s = tx.init(p)
    >>> for g in (1.0, 1.0):
    ...     u, s = tx.update(np.array([g]), s, p)
    ...     p = optim.apply_updates(p, u)
    >>> p.fast, p.slow    # synced: both halfway to the fast parameters' -2
    (array([-1.]), array([-1.]))
    """
    if sync_period < 1:
        raise ValueError("Synchronization period must be >= 1.")

    def init(params: Any) -> LookaheadState:
        fast = getattr(params, "fast", None)
        if fast is None:  # optax warns and takes them as the fast parameters
            fast = params
        return LookaheadState(fast_optimizer.init(fast), _zero_count(fast))

    def update(updates: Any, state: LookaheadState, params: Any = None) -> tuple[Any, Any]:
        if not isinstance(params, LookaheadParams):
            raise ValueError(
                "lookahead: update needs params as LookaheadParams(fast, slow) (start from "
                "LookaheadParams.init_synced(params)), got " + type(params).__name__)
        updates, fast_state = fast_optimizer.update(updates, state.fast_state, params.fast)
        sync = state.steps_since_sync == sync_period - 1
        diff = _tmap(lambda f, u, s: f + u - s, params.fast, updates, params.slow)
        slow_updates = _tmap(lambda d: fnp.where(sync, slow_step_size * d, fnp.zeros_like(d)),
                             diff)
        fast_updates = _tmap(lambda u, d: fnp.where(sync, u - (1 - slow_step_size) * d, u),
                             updates, diff)
        if reset_state:
            fresh = fast_optimizer.init(params.fast)
            fast_state = tree_util.tree_map(
                lambda cur, new: fnp.where(sync, new, cur).astype(fnp.asarray(cur).dtype),
                fast_state, fresh)
        steps = fnp.mod(_increment(state.steps_since_sync), sync_period)
        return LookaheadParams(fast=fast_updates, slow=slow_updates), LookaheadState(fast_state,
                                                                                     steps)

    return GradientTransformation(init, update)


def adabelief(learning_rate: ScalarOrSchedule, b1: float = 0.9, b2: float = 0.999,
              eps: float = 1e-16, eps_root: float = 1e-16, *,
              nesterov: bool = False) -> GradientTransformation:
    """AdaBelief (optax's ``adabelief``).

    >>> import numpy as np
    >>> tx = adabelief(0.1)
    >>> np.round(tx.update(np.array([3.0]), tx.init(np.zeros(1)))[0], 6)
    array([-0.111111])
    """
    return chain(scale_by_belief(b1, b2, eps, eps_root, nesterov=nesterov),
                 scale_by_learning_rate(learning_rate))


def yogi(learning_rate: ScalarOrSchedule, b1: float = 0.9, b2: float = 0.999,
         eps: float = 1e-3) -> GradientTransformation:
    """Yogi (optax's ``yogi``).

    >>> import numpy as np
    >>> tx = yogi(0.1)
    >>> np.round(tx.update(np.array([2.0]), tx.init(np.zeros(1)))[0], 6)
    array([-0.099938])
    """
    return chain(scale_by_yogi(b1, b2, eps), scale_by_learning_rate(learning_rate))


def radam(learning_rate: ScalarOrSchedule, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8,
          eps_root: float = 0.0, threshold: float = 5.0, *,
          nesterov: bool = False) -> GradientTransformation:
    """Rectified Adam (optax's ``radam``).

    >>> import numpy as np
    >>> tx = radam(0.1)
    >>> tx.update(np.array([3.0]), tx.init(np.zeros(1)))[0]
    array([-0.3])
    """
    return chain(scale_by_radam(b1, b2, eps, eps_root, threshold, nesterov=nesterov),
                 scale_by_learning_rate(learning_rate))


def amsgrad(learning_rate: ScalarOrSchedule, b1: float = 0.9, b2: float = 0.999,
            eps: float = 1e-8, eps_root: float = 0.0, mu_dtype: Any = None,
            bias_correction_mu: bool = True,
            bias_correction_nu: bool = True) -> GradientTransformation:
    """AMSGrad (optax's ``amsgrad``).

    >>> import numpy as np
    >>> tx = amsgrad(0.1)
    >>> np.round(tx.update(np.array([3.0]), tx.init(np.zeros(1)))[0], 6)
    array([-0.1])
    """
    return chain(scale_by_amsgrad(b1, b2, eps, eps_root, mu_dtype, bias_correction_mu,
                                  bias_correction_nu), scale_by_learning_rate(learning_rate))


def adadelta(learning_rate: ScalarOrSchedule | None = None, rho: float = 0.9, eps: float = 1e-6,
             weight_decay: ScalarOrSchedule = 0.0,
             weight_decay_mask: Any = None) -> GradientTransformation:
    """AdaDelta (optax's ``adadelta``; no ``learning_rate`` means no scaling, as in optax,
    so the update ascends: give one to descend, e.g. 1.0 as in PyTorch).

    >>> import numpy as np
    >>> tx = adadelta(1.0, eps=1e-4)
    >>> np.round(tx.update(np.array([1.0]), tx.init(np.zeros(1)), np.zeros(1))[0], 6)
    array([-0.031607])
    """
    return chain(add_decayed_weights(weight_decay, mask=weight_decay_mask),
                 scale_by_adadelta(rho, eps), scale_by_learning_rate(learning_rate))


def rprop(learning_rate: float, eta_minus: float = 0.5, eta_plus: float = 1.2,
          min_step_size: float = 1e-6, max_step_size: float = 50.0) -> GradientTransformation:
    """Rprop (optax's ``rprop``; ``learning_rate`` is the initial step size).

    >>> import numpy as np
    >>> tx = rprop(0.1)
    >>> s = tx.init(np.zeros(2))
    >>> u, s = tx.update(np.array([3.0, -1.0]), s)   # optax's: one step behind
    >>> tx.update(np.array([3.0, -1.0]), s)[0]
    array([-0.1,  0.1])
    """
    return chain(scale_by_rprop(learning_rate, eta_minus, eta_plus, min_step_size, max_step_size),
                 scale(-1.0))


def novograd(learning_rate: ScalarOrSchedule, b1: float = 0.9, b2: float = 0.25,
             eps: float = 1e-6, eps_root: float = 0.0,
             weight_decay: float = 0.0) -> GradientTransformation:
    """NovoGrad (optax's ``novograd``; needs ``params``).

    >>> import numpy as np
    >>> tx = novograd(0.1)
    >>> np.round(tx.update(np.array([3.0, 4.0]), tx.init(np.zeros(2)), np.zeros(2))[0], 6)
    array([-0.06, -0.08])
    """
    return chain(scale_by_novograd(b1, b2, eps, eps_root, weight_decay),
                 scale_by_learning_rate(learning_rate))


def adan(learning_rate: ScalarOrSchedule, b1: float = 0.98, b2: float = 0.92, b3: float = 0.99,
         eps: float = 1e-8, eps_root: float = 1e-8, weight_decay: ScalarOrSchedule = 0.0,
         mask: Any = None) -> GradientTransformation:
    """Adan (optax's ``adan``).

    >>> import numpy as np
    >>> tx = adan(0.1)
    >>> np.round(tx.update(np.array([2.0]), tx.init(np.zeros(1)), np.zeros(1))[0], 6)
    array([-0.1])
    """
    return chain(scale_by_adan(b1, b2, b3, eps, eps_root), add_decayed_weights(weight_decay, mask),
                 scale_by_learning_rate(learning_rate))


def lamb(learning_rate: ScalarOrSchedule, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-6,
         eps_root: float = 0.0, weight_decay: ScalarOrSchedule = 0.0,
         mask: Any = None) -> GradientTransformation:
    """LAMB (optax's ``lamb``): Adam's direction plus weight decay, scaled per leaf by the
    trust ratio. Needs ``params``.

    >>> import numpy as np
    >>> tx = lamb(0.1)
    >>> np.round(tx.update(np.array([3.0, 4.0]), tx.init(np.ones(2)), np.ones(2))[0], 6)
    array([-0.1, -0.1])
    """
    return chain(scale_by_adam(b1, b2, eps, eps_root), add_decayed_weights(weight_decay, mask),
                 scale_by_trust_ratio(), scale_by_learning_rate(learning_rate))


def lars(learning_rate: ScalarOrSchedule, weight_decay: ScalarOrSchedule = 0.0,
         weight_decay_mask: Any = True, trust_coefficient: float = 0.001, eps: float = 0.0,
         trust_ratio_mask: Any = True, momentum: float = 0.9,
         nesterov: bool = False) -> GradientTransformation:
    """LARS (optax's ``lars``): weight decay, the trust ratio (where ``trust_ratio_mask``),
    the learning rate, then momentum. Needs ``params``.

    >>> import numpy as np
    >>> tx = lars(1.0)
    >>> tx.update(np.array([3.0, 4.0]), tx.init(np.ones(2)), np.array([0.0, 5.0]))[0]
    array([-0.003, -0.004])
    """
    return chain(add_decayed_weights(weight_decay, mask=weight_decay_mask),
                 masked(scale_by_trust_ratio(trust_coefficient=trust_coefficient, eps=eps),
                        trust_ratio_mask),
                 scale_by_learning_rate(learning_rate), trace(momentum, nesterov))


def fromage(learning_rate: ScalarOrSchedule, min_norm: float = 1e-6) -> GradientTransformation:
    """Fromage (optax's ``fromage``): the trust-ratio step, and parameters shrunk by
    ``1 / sqrt(1 + lr^2)``. Needs ``params``.

    >>> import numpy as np
    >>> tx = fromage(0.1)
    >>> np.round(tx.update(np.array([3.0, 4.0]), tx.init(np.ones(2)), np.ones(2))[0], 6)
    array([-0.089395, -0.117538])
    """
    if not callable(learning_rate):
        mult = 1 / (1 + learning_rate ** 2) ** 0.5
        return chain(scale_by_trust_ratio(min_norm),
                     scale_by_learning_rate(learning_rate * mult),
                     add_decayed_weights(mult - 1))

    def mult_lr(c: Any) -> Any:
        return 1 / (1 + learning_rate(c) ** 2) ** 0.5

    return chain(scale_by_trust_ratio(min_norm),
                 scale_by_learning_rate(lambda c: mult_lr(c) * learning_rate(c)),
                 add_decayed_weights(lambda c: mult_lr(c) - 1))


def sign_sgd(learning_rate: ScalarOrSchedule) -> GradientTransformation:
    """SignSGD (optax's ``sign_sgd``): ``-learning_rate * sign(g)``.

    >>> import numpy as np
    >>> tx = sign_sgd(0.1)
    >>> tx.update(np.array([3.0, -0.2]), tx.init(np.zeros(2)))[0]
    array([-0.1,  0.1])
    """
    return chain(scale_by_sign(), scale_by_learning_rate(learning_rate))


def signum(learning_rate: ScalarOrSchedule, beta: float = 0.9,
           accumulator_dtype: Any = None) -> GradientTransformation:
    """Signum (optax's ``signum``): the sign of an (undebiased) moving average of the
    gradients, scaled by ``-learning_rate``.

    >>> import numpy as np
    >>> tx = signum(0.1)
    >>> tx.update(np.array([3.0, -0.2]), tx.init(np.zeros(2)))[0]
    array([-0.1,  0.1])
    """
    return chain(ema(beta, debias=False, accumulator_dtype=accumulator_dtype), scale_by_sign(),
                 scale_by_learning_rate(learning_rate))


class ConditionallyTransformState(NamedTuple):
    """The inner transformation's state and the step count fed to the condition."""

    inner_state: Any
    step: Any


class ConditionallyMaskState(NamedTuple):
    """The step count fed to the condition and the inner transformation's state."""

    step: Any
    inner_state: Any


def _conditionally(inner: GradientTransformation, should_transform_fn: Callable[[Any], Any],
                   rejected: Callable[[Any], Any]) -> Callable[..., tuple[Any, Any, Any]]:
    def update(updates: Any, state: Any, params: Any,
               extra_args: dict[str, Any]) -> tuple[Any, Any, Any]:
        cond = should_transform_fn(state.step)
        if not is_tracer(cond):  # a concrete condition: run only the chosen branch
            if bool(cond):
                new, inner_state = _call_update(inner, updates, state.inner_state, params,
                                                extra_args)
                return new, inner_state, _increment(state.step)
            return rejected(updates), state.inner_state, _increment(state.step)
        # traced (under jit): both branches, selected with where, as lax.cond's result
        new, inner_state = _call_update(inner, updates, state.inner_state, params, extra_args)
        out = _tmap(lambda n, r: fnp.where(cond, n, r), new, rejected(updates))
        inner_state = tree_util.tree_map(
            lambda n, o: fnp.where(cond, n, o).astype(fnp.asarray(o).dtype), inner_state,
            state.inner_state)
        return out, inner_state, _increment(state.step)

    return update


def conditionally_transform(
        inner: GradientTransformation,
        should_transform_fn: Callable[[Any], Any]) -> GradientTransformationExtraArgs:
    """Apply ``inner`` at the steps where ``should_transform_fn(step)`` is True, else pass
    the updates through unchanged with ``inner``'s state kept (optax's
    ``conditionally_transform``; steps count calls from 0).

    >>> import numpy as np
    >>> tx = conditionally_transform(scale(10.0), lambda step: step >= 1)
    >>> s = tx.init(np.zeros(1))
    >>> u0, s = tx.update(np.ones(1), s); u1, s = tx.update(np.ones(1), s)
    >>> u0, u1
    (array([1.]), array([10.]))
    """
    step_fn = _conditionally(inner, should_transform_fn, lambda u: u)

    def init(params: Any) -> ConditionallyTransformState:
        return ConditionallyTransformState(inner.init(params), _zero_count(params))

    def update(updates: Any, state: Any, params: Any = None,
               **extra_args: Any) -> tuple[Any, Any]:
        out, inner_state, step = step_fn(updates, state, params, extra_args)
        return out, ConditionallyTransformState(inner_state, step)

    return GradientTransformationExtraArgs(init, update)


def conditionally_mask(
        inner: GradientTransformation,
        should_transform_fn: Callable[[Any], Any]) -> GradientTransformationExtraArgs:
    """Apply ``inner`` at the steps where ``should_transform_fn(step)`` is True, else return
    zero updates with ``inner``'s state kept (optax's ``conditionally_mask``).

    >>> import numpy as np
    >>> tx = conditionally_mask(scale(-1.0), lambda step: step % 2 == 1)
    >>> s = tx.init(np.zeros(1))
    >>> u0, s = tx.update(np.ones(1), s); u1, s = tx.update(np.ones(1), s)
    >>> u0, u1
    (array([0.]), array([-1.]))
    """
    step_fn = _conditionally(inner, should_transform_fn, lambda u: _tmap(fnp.zeros_like, u))

    def init(params: Any) -> ConditionallyMaskState:
        return ConditionallyMaskState(_zero_count(params), inner.init(params))

    def update(updates: Any, state: Any, params: Any = None,
               **extra_args: Any) -> tuple[Any, Any]:
        out, inner_state, step = step_fn(updates, state, params, extra_args)
        return out, ConditionallyMaskState(step, inner_state)

    return GradientTransformationExtraArgs(init, update)


def _on_device_of(x: Any, like: Any) -> Any:
    # random draws land on the default device; the noise must join the leaf's (host
    # parameters under a device default, say)
    if is_tracer(x) or is_tracer(like):
        return x
    target = device_of(like)
    return x if target is None or device_of(x) == target else device_put(x, target)


class AddNoiseState(NamedTuple):
    """:func:`add_noise`'s step count and random key."""

    count: Any
    rng_key: Any


def add_noise(eta: float, gamma: float, key: Any = None) -> GradientTransformation:
    """Add Gaussian noise of variance ``eta / t**gamma`` at step ``t`` (optax's
    ``add_noise``; ``key`` a :mod:`funcgrad.random` key or an int seed, 0 by default). The
    key is split as optax's, but funcgrad.random's bits are not JAX's: the noise has the
    same law, not the same values.

    >>> import numpy as np
    >>> tx = add_noise(0.01, 0.55, key=0)
    >>> u, s = tx.update({"w": np.zeros(3)}, tx.init({"w": np.zeros(3)}))
    >>> u["w"].shape, int(s.count)
    ((3,), 1)
    """
    if key is None:
        key = 0

    def init(params: Any) -> AddNoiseState:
        k = frandom.PRNGKey(key) if isinstance(key, int) else key
        return AddNoiseState(_zero_count(params), k)

    def update(updates: Any, state: AddNoiseState, params: Any = None) -> tuple[Any, Any]:
        count = _increment(state.count)
        std = fnp.sqrt(eta / fnp.asarray(count, dtype=fnp.float64) ** gamma)
        rng_key, sample_key = frandom.split(state.rng_key)
        leaves, treedef = tree_util.tree_flatten(updates)
        keys = frandom.split(sample_key, len(leaves)) if leaves else []
        noisy = [u + _as_dtype(std, u) * _on_device_of(
            frandom.normal(k, tuple(u.shape), dtype=u.dtype), u) for u, k in zip(leaves, keys)]
        return treedef.unflatten(noisy), AddNoiseState(count, rng_key)

    return GradientTransformation(init, update)


def noisy_sgd(learning_rate: ScalarOrSchedule, eta: float = 0.01, gamma: float = 0.55,
              key: Any = None) -> GradientTransformation:
    """SGD with annealed Gaussian gradient noise (optax's ``noisy_sgd``: :func:`add_noise`
    then the learning rate).

    >>> import numpy as np
    >>> tx = noisy_sgd(0.1, eta=0.0, key=1)
    >>> tx.update(np.ones(2), tx.init(np.zeros(2)))[0]
    array([-0.1, -0.1])
    """
    return chain(add_noise(eta, gamma, key), scale_by_learning_rate(learning_rate))


class ScaleBySM3State(NamedTuple):
    """SM3's per-axis accumulators (a list per leaf) and momentum."""

    mu: Any
    nu: Any


def scale_by_sm3(b1: float = 0.9, b2: float = 1.0, eps: float = 1e-8) -> GradientTransformation:
    """SM3's rescaling (optax's ``scale_by_sm3``): per-axis maxima of the accumulated
    squared gradients stand in for Adagrad's full accumulator; then momentum ``b1``.

    >>> import numpy as np
    >>> tx = scale_by_sm3()
    >>> np.round(tx.update(np.array([2.0, -0.5]), tx.init(np.zeros(2)))[0], 6)
    array([ 0.1, -0.1])
    """

    def _check(params: Any) -> None:
        for p in tree_util.tree_leaves(params):
            if fnp.iscomplexobj(p):
                raise ValueError("scale_by_sm3 does not support complex parameters.")

    def init(params: Any) -> ScaleBySM3State:
        _check(params)
        mu = tree_util.tree_map(
            lambda p: [fnp.zeros_like(p, shape=(p.shape[i],)) for i in range(p.ndim)], params)
        return ScaleBySM3State(mu, _zeros_like_tree(params))

    def accumulate(g: Any, v: list) -> Any:
        c0, c1 = ((1.0 - b2) if b2 != 1.0 else 1.0), b2
        if g.ndim < 2:
            return c0 * g ** 2 + c1 * v[0]
        low = v[0]
        for x in v[1:]:
            low = fnp.minimum(low, x)
        return c0 * g ** 2 + c1 * low

    def update(updates: Any, state: ScaleBySM3State, params: Any = None) -> tuple[Any, Any]:
        leaves, treedef = tree_util.tree_flatten(updates)
        mus = treedef.flatten_up_to(state.mu)
        ups, new_mus = [], []
        for g, m in zip(leaves, mus):
            shaped = [fnp.reshape(m[i], [1] * i + [g.shape[i]] + [1] * (g.ndim - i - 1))
                      for i in range(g.ndim)]
            acc = accumulate(g, shaped)
            inv = fnp.where(acc > 0, 1 / fnp.sqrt(fnp.where(acc > 0, acc, 1) + eps), 0.0)
            ups.append(g * inv.astype(g.dtype))
            new_mus.append([fnp.max(acc, axis=tuple(j for j in range(g.ndim) if j != i))
                            if g.ndim >= 2 else acc for i in range(g.ndim)])
        nu = _moment(treedef.unflatten(ups), state.nu, b1)
        return nu, ScaleBySM3State(treedef.unflatten(new_mus), nu)

    return GradientTransformation(init, update)


def sm3(learning_rate: float, momentum: float = 0.9) -> GradientTransformation:
    """SM3 (optax's ``sm3``: a constant learning rate).

    >>> import numpy as np
    >>> tx = sm3(1.0)
    >>> np.round(tx.update(np.array([2.0, -0.5]), tx.init(np.zeros(2)))[0], 6)
    array([-0.1,  0.1])
    """
    return chain(scale_by_sm3(momentum), scale(-learning_rate))


def safe_increment(count: Any) -> Any:
    """``count + 1``, saturating at the dtype's largest value instead of overflowing
    (optax's ``safe_increment``; integer or float counts).

    >>> import numpy as np
    >>> int(safe_increment(np.int32(5))), int(safe_increment(np.int32(2**31 - 1)))
    (6, 2147483647)
    """
    count = fnp.asarray(count)
    dtype = np.dtype(count.dtype)
    if dtype.kind in "iu":
        top = np.iinfo(dtype).max
    elif dtype.kind == "f":
        top = np.finfo(dtype).max
    else:
        raise ValueError(
            f"Cannot safely increment count with dtype {dtype}, valid dtypes are subdtypes of "
            '"jnp.integer" or "jnp.floating".')
    top_arr = fnp.full_like(count, top)
    return fnp.where(count < top_arr, fnp.add(count, fnp.ones_like(count)), top_arr)


safe_int32_increment = safe_increment  # optax's former name


def flatten(inner: GradientTransformation) -> GradientTransformationExtraArgs:
    """Run ``inner`` on all leaves concatenated into one vector (optax's ``flatten``: fewer,
    larger operations; the state is ``inner``'s on the flat vector).

    >>> import numpy as np
    >>> tx = flatten(clip_by_block_rms(1.0))
    >>> tx.update({"a": np.array([3.0]), "b": np.array([4.0, 0.0])}, tx.init(None))[0]
    {'a': array([1.03923048]), 'b': array([1.38564065, 0.        ])}
    """

    def _flat(tree: Any) -> Any:
        leaves = tree_util.tree_leaves(tree)
        return fnp.concatenate([fnp.reshape(x, (-1,)) for x in leaves])

    def init(params: Any) -> Any:
        return inner.init(_flat(params) if params is not None else params)

    def update(updates: Any, state: Any, params: Any = None,
               **extra_args: Any) -> tuple[Any, Any]:
        flat_params = None if params is None else _flat(params)
        out, state = _call_update(inner, _flat(updates), state, flat_params, extra_args)
        leaves, treedef = tree_util.tree_flatten(updates)
        pieces, start = [], 0
        for x in leaves:
            size = int(np.prod(x.shape))
            pieces.append(fnp.reshape(out[start:start + size], x.shape))
            start += size
        return treedef.unflatten(pieces), state

    return GradientTransformationExtraArgs(init, update)


def scale_gradient(inputs: Any, scale: float) -> Any:
    """The identity on ``inputs`` (a pytree) whose gradient is multiplied by ``scale``
    (optax's ``scale_gradient``; a scale of 0 stops the gradient).

    >>> import funcgrad
    >>> float(funcgrad.grad(lambda x: scale_gradient(x, 0.5) ** 2)(3.0))
    3.0
    """
    if scale == 1.0:
        return inputs
    from funcgrad import lax

    if scale == 0.0:
        return tree_util.tree_map(lax.stop_gradient, inputs)
    # x * s + stop_gradient(x * (1 - s)) would round the forward value; a custom VJP keeps it
    return tree_util.tree_map(_scaled_identity(scale), inputs)


def _scaled_identity(scale: float) -> Callable[[Any], Any]:
    from funcgrad import custom_vjp

    @custom_vjp
    def f(x: Any) -> Any:
        return x

    f.defvjp(lambda x: (x, None), lambda _, g: (g * scale,))
    return f


def _has_batch_dim(grads: Any) -> bool:
    return all(getattr(x, "ndim", 0) >= 1 for x in tree_util.tree_leaves(grads))


def per_example_global_norm_clip(grads: Any, l2_norm_clip: float) -> tuple[Any, Any]:
    """Clip each example's gradient (axis 0 of every leaf) to global norm ``l2_norm_clip``
    and sum them over the batch; also the number of clipped examples (optax's, for DP-SGD).

    >>> import numpy as np
    >>> g, n = per_example_global_norm_clip([np.array([[3.0, 4.0], [0.3, 0.4]])], 1.0)
    >>> g[0], int(n)
    (array([0.9, 1.2]), 1)
    """
    if not _has_batch_dim(grads):
        raise ValueError(
            "Unlike other transforms, `per_example_global_norm_clip` expects `grads` to have "
            "a batch dimension in the 0th axis.")
    leaves = tree_util.tree_leaves(grads)
    sq = None
    for g in leaves:
        s = fnp.sum(fnp.reshape(_abs_sq(g), (g.shape[0], -1)), axis=1)
        sq = s if sq is None else sq + s
    norms = fnp.sqrt(sq)
    # optax's nan_to_num(min(clip / norm, 1), nan=1): an all-zero example keeps multiplier 1,
    # without dividing by its zero norm (a NumPy warning on every such step)
    nonzero = norms > 0
    multipliers = fnp.where(
        nonzero, fnp.minimum(l2_norm_clip / fnp.where(nonzero, norms, 1.0), 1.0), 1.0)
    num_clipped = fnp.sum(multipliers < 1.0)
    return tree_util.tree_map(lambda g: fnp.tensordot(multipliers, g, axes=1),
                              grads), num_clipped


def per_example_layer_norm_clip(grads: Any, global_l2_norm_clip: float,
                                uniform: bool = True) -> tuple[Any, Any]:
    """Clip per example and per layer (leaf), each leaf to its share of
    ``global_l2_norm_clip`` (equal shares when ``uniform``, else proportional to the leaf's
    size), and sum over the batch; the tree of sums and the tree of clipped counts (optax's).

    >>> import numpy as np
    >>> g, n = per_example_layer_norm_clip({"w": np.array([[3.0, 4.0]])}, 1.0)
    >>> g["w"], int(n["w"])
    (array([0.6, 0.8]), 1)
    """
    if not _has_batch_dim(grads):
        raise ValueError(
            "Unlike other transforms, `per_example_layer_norm_clip` expects `grads` to have "
            "a batch dimension in the 0th axis; got shapes: "
            f"{tree_util.tree_map(lambda x: tuple(x.shape), grads)}.")
    leaves, treedef = tree_util.tree_flatten(grads)
    total = sum(int(np.prod(g.shape[1:])) for g in leaves)
    out = []
    for g in leaves:
        share = (1.0 / len(leaves)) if uniform else int(np.prod(g.shape[1:])) / total
        out.append(per_example_global_norm_clip(g, global_l2_norm_clip * share ** 0.5))
    return treedef.unflatten([o[0] for o in out]), treedef.unflatten([o[1] for o in out])


def scale_by_polyak(f_min: float = 0.0, max_learning_rate: float = 1.0, eps: float = 0.0,
                    variant: str = "sps") -> GradientTransformationExtraArgs:
    """The Polyak step size (optax's ``scale_by_polyak``): scale the updates by
    ``min((value - f_min) / (|g|^2 + eps), max_learning_rate)`` (0 when ``|g|^2 + eps`` is
    below float64's eps), with the loss ``value`` given to ``update`` as a keyword;
    ``variant="sps+"`` clips a negative gap to 0.

    >>> import numpy as np
    >>> tx = scale_by_polyak()
    >>> tx.update(np.array([1.0, 1.0]), tx.init(np.zeros(2)), value=1.0)[0]
    array([0.5, 0.5])
    """
    if variant not in ("sps", "sps+"):
        raise ValueError(f"Invalid argument value for Polyak SGD: {variant=}")

    def update(updates: Any, state: Any, params: Any = None, *, value: Any,
               **extra_args: Any) -> tuple[Any, Any]:
        leaves = [x for x in tree_util.tree_leaves(updates) if x is not None]
        sq = None
        for x in leaves:
            s = fnp.sum(_abs_sq(x))
            sq = s if sq is None else fnp.add(sq, s)
        if sq is None:
            sq = fnp.zeros(())
        # the gap joins the gradients' device (a Python loss value would land on the default)
        if isinstance(value, int | float | np.generic):
            gap = fnp.full_like(sq, float(value) - f_min)
        else:
            gap = _as_dtype(fnp.subtract(value, f_min), sq)
        if variant == "sps+":
            gap = fnp.maximum(gap, fnp.zeros_like(gap))
        # fnp functions, not operators: on 0-d NumPy arrays those give host scalars
        denom = fnp.add(sq, eps)
        tiny = fnp.less_equal(denom, np.finfo(float).eps)
        step = fnp.where(tiny, fnp.zeros_like(sq), fnp.minimum(
            fnp.divide(gap, fnp.where(tiny, fnp.ones_like(denom), denom)),
            max_learning_rate))
        return _tmap(lambda u: u * _as_dtype(step, u), updates), state

    return GradientTransformationExtraArgs(init_empty_state, update)


def polyak_sgd(max_learning_rate: float = 1.0, scaling: ScalarOrSchedule = 1.0,
               f_min: float = 0.0, eps: float = 0.0,
               variant: str = "sps") -> GradientTransformationExtraArgs:
    """SGD with the Polyak step size (optax's ``polyak_sgd``): ``update(grads, state,
    params, value=loss)``.

    >>> import numpy as np
    >>> tx = polyak_sgd()
    >>> tx.update(np.array([2.0]), tx.init(np.zeros(1)), value=2.0)[0]
    array([-1.])
    """
    return chain(sgd(learning_rate=scaling),
                 scale_by_polyak(max_learning_rate=max_learning_rate, f_min=f_min, eps=eps,
                                 variant=variant))
