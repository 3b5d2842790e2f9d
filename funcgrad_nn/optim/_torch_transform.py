"""PyTorch's optimizer algorithms as gradient transformations — the one copy of their formulas.

Each transform here is a :class:`~funcgrad_nn.optim.GradientTransformation` built by
:func:`leafwise`: its state is, for every parameter leaf, a dict under PyTorch's state names
(``"step"``, ``"exp_avg"``, ...), so the stateful wrappers in :mod:`.optimizer` get PyTorch's
``state_dict`` layout without a renaming table, and a user can ``jit`` the same transform.
Updates are *added* to the parameters (optax's convention), so a transform that includes the
learning rate returns ``-lr * direction``. PyTorch's options are separate transforms composed
with :func:`~funcgrad_nn.optim.chain`: ``maximize`` is ``scale(-1.0)`` first, coupled L2
weight decay is ``add_decayed_weights(weight_decay)`` before the algorithm, decoupled decay
(AdamW) is ``add_decayed_weights(-lr * weight_decay)`` after it.

Scalars follow PyTorch's arithmetic: step counts and bias corrections are Python floats when
the state is concrete (PyTorch's ``.item()`` path), float64 values cast to the leaf's dtype
when traced, so float32 parameters stay float32.

>>> import numpy as np
>>> from funcgrad_nn import optim
>>> tx = optim.chain(optim.torch_adam(lr=0.1))
>>> p = np.zeros(2)
>>> u, s = tx.update(np.array([1.0, -3.0]), tx.init(p), p)
>>> np.round(u, 6), sorted(s[0])
(array([-0.1,  0.1]), ['exp_avg', 'exp_avg_sq', 'step'])
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import tree_util
from funcgrad.core import is_tracer
from funcgrad_nn.init import get_default_dtype
from funcgrad_nn.optim._transform import (
    GradientTransformation,
    _increment,
    _tmap,
    _zero_count,
    add_decayed_weights,
    chain,
    scale_by_learning_rate,
)

__all__ = [
    "leafwise",
    "torch_momentum",
    "torch_adam",
    "torch_adamax",
    "torch_rmsprop",
    "torch_adagrad",
    "torch_nadam",
    "torch_radam",
    "torch_adadelta",
    "torch_asgd",
    "torch_rprop",
    "torch_sparse_adam",
    "torch_adafactor",
    "torch_muon",
    "torch_lion_direction",
    "ScaleByLionState",
    "scale_by_lion",
    "lion",
]

LeafUpdate = Callable[[Any, dict, Any], tuple[Any, dict]]


def leafwise(init_leaf: Callable[[Any], dict], update_leaf: LeafUpdate, *,
             complex_as_real: bool = False) -> GradientTransformation:
    """A transformation applied leaf by leaf, with a dict of named state per parameter leaf.

    ``init_leaf(p) -> dict``; ``update_leaf(g, state, p) -> (update, new_state)``. A None
    update (a frozen parameter) leaves its state unchanged. A bare array is a one-leaf tree,
    handled without flattening (the stateful optimizers call it per parameter).
    ``complex_as_real``: a complex leaf is updated as its real and imaginary parts side by
    side (PyTorch's ``view_as_real``): ``init_leaf`` and ``update_leaf`` see real arrays with
    a trailing axis of 2, and the state arrays shaped like that are kept complex.

    >>> import numpy as np
    >>> count = leafwise(lambda p: {"n": 0}, lambda g, s, p: (g, {"n": s["n"] + 1}))
    >>> count.update([np.ones(1), None], count.init([np.ones(1), np.ones(1)]))[1]
    [{'n': 1}, {'n': 0}]
    >>> sq = leafwise(lambda p: {}, lambda g, s, p: (g * g, s), complex_as_real=True)
    >>> sq.update(np.array([1 + 2j]), {})[0]
    array([1.+4.j])
    """
    if complex_as_real:
        init_leaf, update_leaf = _viewing_complex_as_real(init_leaf, update_leaf)

    def init(params: Any) -> Any:
        if _is_leaf(params):
            return init_leaf(params)
        return tree_util.tree_map(init_leaf, params)

    def update(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        if _is_leaf(updates):
            return update_leaf(updates, state, params)
        leaves, treedef = tree_util.tree_flatten(updates, is_leaf=lambda x: x is None)
        states = treedef.flatten_up_to(state)
        ps = [None] * len(leaves) if params is None else treedef.flatten_up_to(params)
        out_u, out_s = [], []
        for g, s, p in zip(leaves, states, ps):
            if g is None:
                out_u.append(None)
                out_s.append(s)
            else:
                u, s = update_leaf(g, s, p)
                out_u.append(u)
                out_s.append(s)
        return (tree_util.tree_unflatten(treedef, out_u),
                tree_util.tree_unflatten(treedef, out_s))

    return GradientTransformation(init, update)


def _as_real(x: Any) -> Any:
    return fnp.stack([fnp.real(x), fnp.imag(x)], axis=-1)


def _as_complex(x: Any) -> Any:
    return x[..., 0] + 1j * x[..., 1]


def _viewing_complex_as_real(init_leaf: Callable[[Any], dict],
                             update_leaf: LeafUpdate) -> tuple[Callable[[Any], dict], LeafUpdate]:
    """``init_leaf``/``update_leaf`` for complex leaves run on ``view_as_real`` views."""

    def convert(state: dict, shape: tuple, fn: Callable[[Any], Any]) -> dict:
        return {k: fn(v) if _is_leaf(v) and tuple(v.shape) == shape else v
                for k, v in state.items()}

    def init(p: Any) -> dict:
        if not fnp.iscomplexobj(p):
            return init_leaf(p)
        real = _as_real(p)
        return convert(init_leaf(real), tuple(real.shape), _as_complex)

    def update(g: Any, s: dict, p: Any) -> tuple[Any, dict]:
        if not fnp.iscomplexobj(g):
            return update_leaf(g, s, p)
        shape = tuple(g.shape)
        real_s = {k: _as_real(v) if _is_leaf(v) and tuple(v.shape) == shape
                  and fnp.iscomplexobj(v) else v for k, v in s.items()}
        u, new = update_leaf(_as_real(g), real_s, None if p is None else _as_real(p))
        return _as_complex(u), convert(new, shape + (2,), _as_complex)

    return init, update


def _is_leaf(x: Any) -> bool:
    return hasattr(x, "shape") and hasattr(x, "dtype")


# -- scalar helpers -----------------------------------------------------------------------

def _scalar_dtype(p: Any) -> Any:
    # PyTorch's _get_scalar_dtype: step counts, NAdam's mu_product and ASGD's eta/mu are
    # float64 when the default dtype is (nn.set_default_dtype), else float32, whatever the
    # parameter's dtype; float32 scalars round as PyTorch's do.
    return fnp.float64 if get_default_dtype() == np.float64 else fnp.float32


def _scalar_state(p: Any, value: float) -> Any:
    """A 0-d state scalar (a step count, ASGD's eta) on ``p``'s device."""
    return fnp.full_like(p, value, dtype=_scalar_dtype(p), shape=())


def _num(x: Any) -> Any:
    """A state scalar for coefficient arithmetic: a Python float when concrete (PyTorch's
    ``.item()`` path), float64 when traced."""
    if is_tracer(x):
        return fnp.asarray(x, dtype=fnp.float64)
    return float(x)


def _k(c: Any, like: Any) -> Any:
    """A coefficient ready to multiply ``like``: Python floats are weak (NEP 50); traced
    values are cast to ``like``'s dtype so float32 leaves stay float32."""
    if isinstance(c, np.generic):  # np.float64 is a float, but not a weak one
        return c.item()
    if isinstance(c, int | float):
        return c
    return fnp.asarray(c).astype(like.dtype)


def _like(value: Any, state: Any) -> Any:
    """``value`` as a new 0-d state scalar shaped, typed and placed like ``state``."""
    if isinstance(value, int | float):
        return fnp.full_like(state, value)
    return fnp.asarray(value).astype(state.dtype)


def _lerp(start: Any, end: Any, weight: Any) -> Any:
    # torch.lerp's two-branch formula, so moment estimates match PyTorch bit for bit; as
    # its kernel, ``1 - weight`` is taken after rounding the weight to a float32 leaf's dtype.
    if isinstance(weight, int | float):
        if weight < 0.5:
            return start + weight * (end - start)
        if getattr(start, "dtype", None) == np.float32:
            weight = float(np.float32(weight))
        return end - (end - start) * (1 - weight)
    w = _k(weight, start)
    diff = end - start
    if is_tracer(weight):  # a hyperparameter traced by a fused step (betas cycling)
        return fnp.where(w < 0.5, start + w * diff, end - diff * (1 - w))
    return start + w * diff


def _select(cond: Any, a: Any, b: Any) -> Any:
    """``a if cond else b`` for a Python or concrete condition, ``where`` when traced."""
    if is_tracer(cond):
        return fnp.where(cond, a, b)
    return a if bool(cond) else b


def nonzero(v: Any) -> bool:
    """Whether a hyperparameter is non-zero, deciding whether a pass (or a state buffer)
    exists. A traced one is non-zero: the fused steps keep zeros as constants."""
    return is_tracer(v) or bool(v)


def _scalar_array(x: Any) -> Any:
    # NumPy's 0-d arithmetic gives scalars; state scalars stay 0-d arrays (PyTorch's 0-d
    # tensors), so state_dict() holds arrays.
    return np.asarray(x) if isinstance(x, np.generic) else x


def _next_step(s: dict) -> tuple[Any, Any]:
    step = _scalar_array(s["step"] + 1)
    return step, _num(step)


# -- the algorithms ------------------------------------------------------------------------

def torch_momentum(momentum: float, dampening: float = 0.0,
                   nesterov: bool = False) -> GradientTransformation:
    """SGD's momentum as PyTorch writes it: the buffer starts as the first gradient, then
    ``buf = momentum * buf + (1 - dampening) * g``; the direction is ``buf`` (or
    ``g + momentum * buf`` with Nesterov). Multiply by ``-lr`` afterwards.

    >>> import numpy as np
    >>> tx = torch_momentum(0.9, dampening=0.5)
    >>> s = tx.init(np.zeros(1)); u, s = tx.update(np.ones(1), s); u, s = tx.update(np.ones(1), s)
    >>> u
    array([1.4])
    """

    def update(g: Any, s: dict, p: Any) -> tuple[Any, dict]:
        buf = s["momentum_buffer"]
        if buf is None:
            buf = g
        else:  # (1 - 0) * g is g: skip that pass over the array when there is no dampening
            buf = buf * momentum + ((1 - dampening) * g if nonzero(dampening) else g)
        return (g + momentum * buf if nesterov else buf), {"momentum_buffer": buf}

    return leafwise(lambda p: {"momentum_buffer": None}, update)


def torch_adam(lr: Any = 1e-3, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8,
               amsgrad: bool = False) -> GradientTransformation:
    """Adam's update as in ``torch.optim.Adam`` (``-lr`` included; ``amsgrad`` keeps the
    running maximum of ``exp_avg_sq``).

    >>> import numpy as np
    >>> tx = torch_adam(0.1)
    >>> np.round(tx.update(np.array([2.0]), tx.init(np.zeros(1)), np.zeros(1))[0], 6)
    array([-0.1])
    """

    def init(p: Any) -> dict:
        s = {"step": _scalar_state(p, 0.0), "exp_avg": fnp.zeros_like(p),
             "exp_avg_sq": fnp.zeros_like(p)}
        if amsgrad:
            s["max_exp_avg_sq"] = fnp.zeros_like(p)
        return s

    def update(g: Any, s: dict, p: Any) -> tuple[Any, dict]:
        step, t = _next_step(s)
        m = _lerp(s["exp_avg"], g, 1 - b1)
        v = s["exp_avg_sq"] * b2 + (1 - b2) * (g * g)
        new = {"step": step, "exp_avg": m, "exp_avg_sq": v}
        step_size = lr / (1 - b1**t)
        bc2_sqrt = (1 - b2**t) ** 0.5
        if amsgrad:
            v = new["max_exp_avg_sq"] = fnp.maximum(s["max_exp_avg_sq"], v)
        denom = fnp.sqrt(v) / _k(bc2_sqrt, v) + eps
        # addcdiv_(m, denom, value=-step_size): PyTorch's kernel computes (value * m) / denom
        return (-_k(step_size, m) * m) / denom, new

    return leafwise(init, update, complex_as_real=True)


def torch_adamax(lr: Any = 2e-3, b1: float = 0.9, b2: float = 0.999,
                 eps: float = 1e-8) -> GradientTransformation:
    """Adamax (Adam with the infinity norm) as in ``torch.optim.Adamax``.

    >>> import numpy as np
    >>> tx = torch_adamax(0.1)
    >>> np.round(tx.update(np.array([2.0]), tx.init(np.zeros(1)), np.zeros(1))[0], 6)
    array([-0.1])
    """

    def init(p: Any) -> dict:
        return {"step": _scalar_state(p, 0.0), "exp_avg": fnp.zeros_like(p),
                "exp_inf": fnp.zeros_like(p)}

    def update(g: Any, s: dict, p: Any) -> tuple[Any, dict]:
        step, t = _next_step(s)
        m = _lerp(s["exp_avg"], g, 1 - b1)
        u = fnp.maximum(s["exp_inf"] * b2, fnp.abs(g) + eps)
        clr = lr / (1 - b1**t)
        return (-_k(clr, m) * m) / u, {"step": step, "exp_avg": m, "exp_inf": u}

    return leafwise(init, update, complex_as_real=True)


def torch_rmsprop(lr: Any = 1e-2, alpha: float = 0.99, eps: float = 1e-8, momentum: float = 0.0,
                  centered: bool = False) -> GradientTransformation:
    """RMSprop as in ``torch.optim.RMSprop`` (``eps`` outside the root, ``centered``,
    ``momentum``).

    >>> import numpy as np
    >>> tx = torch_rmsprop(0.01, alpha=0.0, eps=0.0)
    >>> tx.update(np.array([5.0]), tx.init(np.zeros(1)), np.zeros(1))[0]
    array([-0.01])
    """

    def init(p: Any) -> dict:
        s = {"step": _scalar_state(p, 0.0), "square_avg": fnp.zeros_like(p)}
        if nonzero(momentum):
            s["momentum_buffer"] = fnp.zeros_like(p)
        if centered:
            s["grad_avg"] = fnp.zeros_like(p)
        return s

    def update(g: Any, s: dict, p: Any) -> tuple[Any, dict]:
        step, _ = _next_step(s)
        sq = s["square_avg"] * alpha + (1 - alpha) * (g * g)
        new = {**s, "step": step, "square_avg": sq}
        if centered:
            ga = new["grad_avg"] = _lerp(s["grad_avg"], g, 1 - alpha)
            avg = fnp.sqrt(sq - ga * ga) + eps
        else:
            avg = fnp.sqrt(sq) + eps
        if nonzero(momentum):
            buf = new["momentum_buffer"] = s["momentum_buffer"] * momentum + g / avg
            return -_k(lr, buf) * buf, new
        return (-_k(lr, g) * g) / avg, new

    return leafwise(init, update, complex_as_real=True)


def torch_adagrad(lr: Any = 1e-2, lr_decay: float = 0.0, eps: float = 1e-10,
                  initial_accumulator_value: float = 0.0) -> GradientTransformation:
    """Adagrad as in ``torch.optim.Adagrad`` (``lr / (1 + (step - 1) * lr_decay)``).

    >>> import numpy as np
    >>> tx = torch_adagrad(0.1)
    >>> np.round(tx.update(np.array([4.0]), tx.init(np.zeros(1)), np.zeros(1))[0], 6)
    array([-0.1])
    """

    def init(p: Any) -> dict:
        return {"step": _scalar_state(p, 0.0),
                "sum": fnp.full_like(p, initial_accumulator_value)}

    def update(g: Any, s: dict, p: Any) -> tuple[Any, dict]:
        step, t = _next_step(s)
        clr = lr / (1 + (t - 1) * lr_decay)
        acc = s["sum"] + g * g
        return (-_k(clr, g) * g) / (fnp.sqrt(acc) + eps), {"step": step, "sum": acc}

    return leafwise(init, update, complex_as_real=True)


def torch_nadam(lr: Any = 2e-3, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8,
                momentum_decay: float = 4e-3) -> GradientTransformation:
    """NAdam as in ``torch.optim.NAdam`` (momentum schedule ``mu_t`` with ``momentum_decay``).

    >>> import numpy as np
    >>> tx = torch_nadam(0.1)
    >>> sorted(tx.init(np.zeros(1)))
    ['exp_avg', 'exp_avg_sq', 'mu_product', 'step']
    """

    def init(p: Any) -> dict:
        return {"step": _scalar_state(p, 0.0), "mu_product": _scalar_state(p, 1.0),
                "exp_avg": fnp.zeros_like(p), "exp_avg_sq": fnp.zeros_like(p)}

    def update(g: Any, s: dict, p: Any) -> tuple[Any, dict]:
        step, t = _next_step(s)
        bc2 = 1 - b2**t
        mu = b1 * (1.0 - 0.5 * (0.96 ** (t * momentum_decay)))
        mu_next = b1 * (1.0 - 0.5 * (0.96 ** ((t + 1) * momentum_decay)))
        # keeps the state's dtype
        mu_product = _scalar_array(s["mu_product"] * _k(mu, s["mu_product"]))
        mp = _num(mu_product)
        m = _lerp(s["exp_avg"], g, 1 - b1)
        v = s["exp_avg_sq"] * b2 + (1 - b2) * (g * g)
        denom = fnp.sqrt(v / _k(bc2, v)) + eps
        c_grad = -lr * (1.0 - mu) / (1.0 - mp)
        c_avg = (-lr * mu_next) / (1.0 - mp * mu_next)
        u = _k(c_grad, g) * (g / denom) + _k(c_avg, m) * (m / denom)
        return u, {"step": step, "mu_product": mu_product, "exp_avg": m, "exp_avg_sq": v}

    return leafwise(init, update, complex_as_real=True)


def torch_radam(lr: Any = 1e-3, b1: float = 0.9, b2: float = 0.999,
                eps: float = 1e-8) -> GradientTransformation:
    """RAdam as in ``torch.optim.RAdam`` (the rectified adaptive step once ``rho_t > 5``,
    plain momentum SGD before).

    >>> import numpy as np
    >>> tx = torch_radam(0.1)
    >>> tx.update(np.array([2.0]), tx.init(np.zeros(1)), np.zeros(1))[0]
    array([-0.2])
    """

    def init(p: Any) -> dict:
        return {"step": _scalar_state(p, 0.0), "exp_avg": fnp.zeros_like(p),
                "exp_avg_sq": fnp.zeros_like(p)}

    def update(g: Any, s: dict, p: Any) -> tuple[Any, dict]:
        step, t = _next_step(s)
        m = _lerp(s["exp_avg"], g, 1 - b1)
        v = s["exp_avg_sq"] * b2 + (1 - b2) * (g * g)
        bc1, bc2 = 1 - b1**t, 1 - b2**t
        corrected = m / _k(bc1, m)
        rho_inf = 2 / (1 - b2) - 1
        rho_t = rho_inf - 2 * t * (b2**t) / bc2
        new = {"step": step, "exp_avg": m, "exp_avg_sq": v}
        plain = -(corrected * _k(lr, m))

        def rectified() -> Any:
            r = (rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)
            # Clamped at 0 when traced: where() evaluates the branch it then discards.
            r = fnp.sqrt(fnp.maximum(r, 0.0)) if is_tracer(r) else r**0.5
            adaptive = _k(bc2**0.5, v) / (fnp.sqrt(v) + eps)
            return -(corrected * _k(lr, m) * adaptive * _k(r, m))

        if is_tracer(rho_t):
            return fnp.where(rho_t > 5.0, rectified(), plain), new
        return (rectified() if rho_t > 5.0 else plain), new

    return leafwise(init, update, complex_as_real=True)


def torch_adadelta(lr: Any = 1.0, rho: float = 0.9, eps: float = 1e-6) -> GradientTransformation:
    """Adadelta as in ``torch.optim.Adadelta``.

    >>> import numpy as np
    >>> tx = torch_adadelta(1.0, rho=0.0, eps=0.0)
    >>> sorted(tx.init(np.zeros(1)))
    ['acc_delta', 'square_avg', 'step']
    """

    def init(p: Any) -> dict:
        return {"step": _scalar_state(p, 0.0), "square_avg": fnp.zeros_like(p),
                "acc_delta": fnp.zeros_like(p)}

    def update(g: Any, s: dict, p: Any) -> tuple[Any, dict]:
        step, _ = _next_step(s)
        sq = s["square_avg"] * rho + (1 - rho) * (g * g)
        std = fnp.sqrt(sq + eps)
        delta = fnp.sqrt(s["acc_delta"] + eps) / std * g
        acc = s["acc_delta"] * rho + (1 - rho) * (delta * delta)
        return -_k(lr, delta) * delta, {"step": step, "square_avg": sq, "acc_delta": acc}

    return leafwise(init, update, complex_as_real=True)


def torch_asgd(lr: Any = 1e-2, lambd: float = 1e-4, alpha: float = 0.75,
               t0: float = 1e6) -> GradientTransformation:
    """Averaged SGD as in ``torch.optim.ASGD``: the parameters take an SGD step with a
    decaying ``eta``; ``ax`` (in the state) is their running average once ``step > t0``.

    >>> import numpy as np
    >>> tx = torch_asgd(0.1, lambd=0.0)
    >>> tx.update(np.array([2.0]), tx.init(np.zeros(1)), np.zeros(1))[0]
    array([-0.2])
    """

    def init(p: Any) -> dict:
        return {"step": _scalar_state(p, 0.0), "eta": _scalar_state(p, lr),
                "mu": _scalar_state(p, 1.0), "ax": fnp.zeros_like(p)}

    def update(g: Any, s: dict, p: Any) -> tuple[Any, dict]:
        step, t = _next_step(s)
        eta, mu = _num(s["eta"]), _num(s["mu"])
        new_p = p * _k(1 - lambd * eta, p) - _k(eta, g) * g
        ax = _select(mu != 1, s["ax"] + (new_p - s["ax"]) * _k(mu, p), new_p)
        new_eta = lr / ((1 + lambd * lr * t) ** alpha)
        new_mu = 1 / (fnp.maximum(1.0, t - t0) if is_tracer(t) else max(1, t - t0))
        return new_p - p, {"step": step, "eta": _like(new_eta, s["eta"]),
                           "mu": _like(new_mu, s["mu"]), "ax": ax}

    return leafwise(init, update)


def torch_rprop(lr: Any = 1e-2, etas: tuple[float, float] = (0.5, 1.2),
                step_sizes: tuple[float, float] = (1e-6, 50)) -> GradientTransformation:
    """Rprop as in ``torch.optim.Rprop``: per-element step sizes grow by ``etas[1]`` while the
    gradient keeps its sign, shrink by ``etas[0]`` when it flips (and that step is skipped).

    >>> import numpy as np
    >>> tx = torch_rprop(0.1)
    >>> tx.update(np.array([3.0, -1.0]), tx.init(np.zeros(2)), np.zeros(2))[0]
    array([-0.1,  0.1])
    """
    etaminus, etaplus = etas
    lo, hi = step_sizes

    def init(p: Any) -> dict:
        return {"step": _scalar_state(p, 0.0), "prev": fnp.zeros_like(p),
                "step_size": fnp.full_like(p, lr)}

    def update(g: Any, s: dict, p: Any) -> tuple[Any, dict]:
        step, _ = _next_step(s)
        sign = fnp.sign(g * s["prev"])
        factor = fnp.where(sign > 0, etaplus, fnp.where(sign < 0, etaminus, 1.0))
        size = fnp.clip(s["step_size"] * fnp.asarray(factor).astype(g.dtype), lo, hi)
        g = fnp.where(sign < 0, 0 * g, g)
        return -(fnp.sign(g) * size), {"step": step, "prev": g, "step_size": size}

    return leafwise(init, update, complex_as_real=True)


def torch_sparse_adam(lr: Any = 1e-3, b1: float = 0.9, b2: float = 0.999,
                      eps: float = 1e-8) -> GradientTransformation:
    """``torch.optim.SparseAdam`` on dense gradients: the moments and the parameter change
    only where the gradient is non-zero (PyTorch's sparse gradient's stored entries).

    >>> import numpy as np
    >>> tx = torch_sparse_adam(0.1)
    >>> np.round(tx.update(np.array([0.0, 2.0]), tx.init(np.zeros(2)), np.zeros(2))[0], 6)
    array([ 0. , -0.1])
    """

    def init(p: Any) -> dict:
        return {"step": _scalar_state(p, 0.0), "exp_avg": fnp.zeros_like(p),
                "exp_avg_sq": fnp.zeros_like(p)}

    def update(g: Any, s: dict, p: Any) -> tuple[Any, dict]:
        step, t = _next_step(s)
        mask = g != 0
        m = fnp.where(mask, s["exp_avg"] + (g - s["exp_avg"]) * (1 - b1), s["exp_avg"])
        v = fnp.where(mask, s["exp_avg_sq"] + (g * g - s["exp_avg_sq"]) * (1 - b2),
                      s["exp_avg_sq"])
        step_size = lr * (1 - b2**t) ** 0.5 / (1 - b1**t)
        u = fnp.where(mask, -_k(step_size, m) * (m / (fnp.sqrt(v) + eps)), 0 * g)
        return u, {"step": step, "exp_avg": m, "exp_avg_sq": v}

    return leafwise(init, update)


def torch_adafactor(lr: Any = 1e-2, beta2_decay: float = -0.8,
                    eps: tuple[float | None, float] = (None, 1e-3),
                    d: float = 1.0) -> GradientTransformation:
    """Adafactor as in ``torch.optim.Adafactor`` (Shazeer & Stern, 2018): the second moment of
    a matrix (the last two axes) is factored into row and column statistics, the step is
    relative to the parameter's RMS and the update is clipped to RMS ``d``.

    >>> import numpy as np
    >>> tx = torch_adafactor()
    >>> sorted(tx.init(np.zeros((3, 2)))), sorted(tx.init(np.zeros(3)))
    (['col_var', 'row_var', 'step'], ['step', 'variance'])
    """
    eps1_given, eps2 = eps

    def init(p: Any) -> dict:
        if fnp.iscomplexobj(p):
            raise RuntimeError("Adafactor does not support complex parameters")
        s = {"step": _scalar_state(p, 0.0)}
        if p.ndim > 1:
            s["row_var"] = fnp.zeros_like(p[..., :1])
            s["col_var"] = fnp.zeros_like(p[..., :1, :])
        else:
            s["variance"] = fnp.zeros_like(p)
        return s

    def update(g: Any, s: dict, p: Any) -> tuple[Any, dict]:
        step, t = _next_step(s)
        eps1 = float(np.finfo(p.dtype).eps) if eps1_given is None else eps1_given
        one_minus_beta2 = t**beta2_decay
        rho = (fnp.minimum(lr, 1 / t**0.5) if is_tracer(t) or is_tracer(lr)
               else min(lr, 1 / t**0.5))
        # fnp.divide, not "/": NumPy's 0-d arithmetic gives a NumPy scalar, which the next
        # operation would place on the default device (host parameters on a device default)
        p_rms = fnp.divide(fnp.sqrt(fnp.sum(p * p)), math.sqrt(p.size))
        alpha = fnp.maximum(_k(eps2, p_rms), p_rms) * _k(rho, p_rms)
        new = {"step": step}
        if g.ndim > 1:
            row = _lerp(s["row_var"], fnp.sum(g * g, axis=-1, keepdims=True) / g.shape[-1],
                        one_minus_beta2)
            col = _lerp(s["col_var"], fnp.sum(g * g, axis=-2, keepdims=True) / g.shape[-2],
                        one_minus_beta2)
            new["row_var"], new["col_var"] = row, col
            var = (row @ col) / fnp.maximum(fnp.mean(row, axis=-2, keepdims=True), eps1)
        else:
            var = new["variance"] = _lerp(s["variance"], g * g, one_minus_beta2)
        upd = g / fnp.sqrt(fnp.maximum(var, eps1 * eps1))
        denom = fnp.maximum(1.0, fnp.divide(fnp.sqrt(fnp.sum(upd * upd)),
                                            math.sqrt(upd.size) * d))
        return -(upd * _k(alpha / denom, upd)), new

    return leafwise(init, update)


def _bfloat16(x: Any) -> Any:
    """``x`` rounded to bfloat16 (8 significant bits, round half to even), as float32:
    PyTorch's Muon orthogonalizes in bfloat16."""
    mantissa, exponent = fnp.frexp(x)
    # fnp's operations, not "*" and "/": on a 0-d host array NumPy's operators give NumPy
    # scalars, which the next operation would place on the default device
    rounded = fnp.divide(fnp.round(fnp.multiply(mantissa, 256)), 256)
    return fnp.ldexp(rounded, exponent).astype(fnp.float32)


def _newton_schulz(g: Any, coefficients: tuple[float, float, float], steps: int,
                   eps: float) -> Any:
    """PyTorch's ``_zeropower_via_newtonschulz``: the quintic Newton-Schulz iteration that
    approximately orthogonalizes a matrix, in bfloat16 arithmetic (float32 accumulation)."""
    a, b, c = coefficients
    x = _bfloat16(g)
    tall = g.shape[0] > g.shape[1]
    if tall:
        x = x.T
    norm = _bfloat16(fnp.sqrt(fnp.sum(x * x)))
    # eps made like norm (on its device): a created array would land on the default device
    x = _bfloat16(x / fnp.maximum(norm, _bfloat16(fnp.full_like(norm, eps, dtype=fnp.float32))))
    for _ in range(steps):
        gram = _bfloat16(x @ x.T)
        gram_update = _bfloat16(b * gram + c * (gram @ gram))
        x = _bfloat16(a * x + gram_update @ x)
    return x.T if tall else x


def _muon_lr_ratio(adjust_lr_fn: str | None, shape: tuple[int, ...]) -> float:
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        return math.sqrt(max(1, rows / cols))
    if adjust_lr_fn == "match_rms_adamw":
        return 0.2 * math.sqrt(max(rows, cols))
    return 1.0


def torch_muon(lr: Any = 1e-3, weight_decay: float = 0.1, momentum: float = 0.95,
               nesterov: bool = True,
               ns_coefficients: tuple[float, float, float] = (3.4445, -4.7750, 2.0315),
               eps: float = 1e-7, ns_steps: int = 5,
               adjust_lr_fn: str | None = None) -> GradientTransformation:
    """Muon as in ``torch.optim.Muon`` (Jordan et al., 2024), for 2-D parameters: momentum
    (Nesterov by default) orthogonalized by ``ns_steps`` Newton-Schulz iterations in
    bfloat16, decoupled weight decay, and the step scaled by ``adjust_lr_fn``'s shape ratio
    (``-lr`` included).

    >>> import numpy as np
    >>> tx = torch_muon(0.1, weight_decay=0.0)
    >>> u, s = tx.update(np.eye(2), tx.init(np.zeros((2, 2))), np.zeros((2, 2)))
    >>> sorted(s), bool(np.allclose(u, -0.1 * np.eye(2), atol=0.05))
    (['momentum_buffer'], True)
    """
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")

    def init(p: Any) -> dict:
        if fnp.iscomplexobj(p):
            raise RuntimeError("Muon does not support complex parameters")
        if p.ndim != 2:
            raise ValueError("Param gradient must be a 2D matrix")
        return {"momentum_buffer": fnp.zeros_like(p)}

    def update(g: Any, s: dict, p: Any) -> tuple[Any, dict]:
        buf = _lerp(s["momentum_buffer"], g, 1 - momentum)
        direction = _lerp(g, buf, momentum) if nesterov else buf
        ortho = _newton_schulz(direction, ns_coefficients, ns_steps, eps).astype(p.dtype)
        step = _k(lr * _muon_lr_ratio(adjust_lr_fn, p.shape), p)
        new_p = p * _k(1 - lr * weight_decay, p) - step * ortho
        return new_p - p, {"momentum_buffer": buf}

    return leafwise(init, update)


def torch_lion_direction(b1: float = 0.9, b2: float = 0.99) -> GradientTransformation:
    """Lion's direction with PyTorch-style per-parameter state (``{"exp_avg": m}``), as the
    stateful ``Lion`` keeps it: ``sign(b1 * m + (1 - b1) * g)``, then
    ``m = b2 * m + (1 - b2) * g``.

    >>> import numpy as np
    >>> tx = torch_lion_direction()
    >>> tx.update(np.array([0.5, -2.0]), tx.init(np.zeros(2)))[0]
    array([ 1., -1.])
    """

    def update(g: Any, s: dict, p: Any) -> tuple[Any, dict]:
        m = s["exp_avg"]
        return fnp.sign(m * b1 + g * (1 - b1)), {"exp_avg": m * b2 + g * (1 - b2)}

    return leafwise(lambda p: {"exp_avg": fnp.zeros_like(p)}, update)


class ScaleByLionState(NamedTuple):
    """optax's Lion state: the step count and the momentum ``mu``."""

    count: Any
    mu: Any


def scale_by_lion(b1: float = 0.9, b2: float = 0.99, mu_dtype: Any = None) -> GradientTransformation:
    """Lion's direction (Chen et al., 2023; optax's ``scale_by_lion``, its state
    :class:`ScaleByLionState`): ``sign(b1 * mu + (1 - b1) * g)``, then
    ``mu = b2 * mu + (1 - b2) * g`` (stored in ``mu_dtype`` if given).

    >>> import numpy as np
    >>> tx = scale_by_lion()
    >>> tx.update(np.array([0.5, -2.0]), tx.init(np.zeros(2)))[0]
    array([ 1., -1.])
    """
    mu_dtype = None if mu_dtype is None else np.dtype(mu_dtype)

    def init(params: Any) -> ScaleByLionState:
        return ScaleByLionState(_zero_count(params), _tmap(
            lambda p: fnp.zeros_like(p, dtype=mu_dtype), params))

    def update(updates: Any, state: ScaleByLionState, params: Any = None) -> tuple[Any, Any]:
        out = _tmap(lambda g, m: fnp.sign(m * b1 + g * (1 - b1)), updates, state.mu)
        mu = _tmap(lambda g, m: m * b2 + g * (1 - b2), updates, state.mu)
        if mu_dtype is not None:
            mu = _tmap(lambda m: m.astype(mu_dtype), mu)
        return out, ScaleByLionState(_increment(state.count), mu)

    return GradientTransformation(init, update)


def lion(learning_rate: Any, b1: float = 0.9, b2: float = 0.99, mu_dtype: Any = None,
         weight_decay: float = 1e-3, mask: Any = None) -> GradientTransformation:
    """Lion (optax's ``lion``, same argument order): ``-lr * (sign(...) + weight_decay *
    params)``, the decay only where ``mask`` is True; ``learning_rate`` may be a schedule.

    >>> import numpy as np
    >>> tx = lion(0.1, weight_decay=0.0)
    >>> tx.update(np.array([3.0]), tx.init(np.zeros(1)), np.zeros(1))[0]
    array([-0.1])
    """
    return chain(scale_by_lion(b1, b2, mu_dtype), add_decayed_weights(weight_decay, mask),
                 scale_by_learning_rate(learning_rate))
