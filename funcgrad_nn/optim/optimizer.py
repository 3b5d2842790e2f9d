"""PyTorch-style stateful optimizers over mutable NumPy/CuPy parameter arrays.

``step(grads)`` updates the parameter arrays in place with PyTorch's update formulas (the
single-tensor variants of ``torch.optim``), so the same hyperparameters give the same numbers.
Gradients are passed explicitly (funcgrad returns gradients instead of storing ``.grad``).
"""

from __future__ import annotations

import copy
import math
import warnings
from collections.abc import Callable, Iterable
from typing import Any

from funcgrad import tree_util
from funcgrad.backend import device_of, is_array, xp_for

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "Adamax", "RMSprop", "Adagrad"]

_required = object()


def _lerp(xp: Any, start: Any, end: Any, weight: float) -> None:
    # torch.lerp_'s two-branch formula, in place, so moment estimates match bit for bit.
    if weight < 0.5:
        start += weight * (end - start)
    else:
        start[...] = end - (end - start) * (1 - weight)


class Optimizer:
    """Base class: parameter groups, per-parameter state, ``state_dict``/``load_state_dict``.

    ``params`` is an iterable of arrays or of dicts ``{"params": [...], <hyperparameter>: ...}``
    (per-group overrides of ``defaults``). Subclasses implement :meth:`_update_group`.

    >>> import numpy as np
    >>> w = np.ones(2)
    >>> opt = SGD([w], lr=0.5)
    >>> opt.step([np.ones(2)])
    >>> w
    array([0.5, 0.5])
    """

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self.state: dict[int, dict[str, Any]] = {}  # keyed by id(param)
        self.param_groups: list[dict[str, Any]] = []
        if is_array(params):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or "
                f"dicts, but got {type(params).__module__}.{type(params).__name__}"
            )
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for key in sorted(group):
                if key != "params":
                    lines.append(f"    {key}: {group[key]}")
        lines.append(")")
        return "\n".join(lines)

    def __getstate__(self) -> dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters (a dict with ``"params"`` and optional hyperparameters).

        >>> import numpy as np
        >>> opt = SGD([np.ones(1)], lr=0.1)
        >>> opt.add_param_group({"params": [np.ones(2)], "lr": 0.01})
        >>> [g["lr"] for g in opt.param_groups]
        [0.1, 0.01]
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if is_array(params):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the "
                "ordering of tensors in sets will change between runs. Please use a list instead."
            )
        else:
            param_group["params"] = list(params)
        for p in param_group["params"]:
            if not is_array(p) or not hasattr(p, "__setitem__"):
                raise TypeError(
                    "optimizer can only optimize Tensors, but one of the params is "
                    f"{type(p).__module__}.{type(p).__name__}"
                )
        for name, default in self.defaults.items():
            if default is _required and name not in param_group:
                raise ValueError(
                    "parameter group didn't specify a value of required optimization "
                    f"parameter {name}"
                )
            param_group.setdefault(name, default)
        ids = [id(p) for p in param_group["params"]]
        if len(ids) != len(set(ids)):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; in future, "
                "this will cause an error", stacklevel=3,
            )
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if seen & set(ids):
            raise ValueError("some parameters appear in more than one parameter group")
        self._validate_group(param_group)
        self.param_groups.append(param_group)

    def _validate_group(self, group: dict[str, Any]) -> None:
        """Check a group's hyperparameters (subclasses raise PyTorch's messages)."""

    def zero_grad(self, set_to_none: bool = True) -> None:
        """No-op: funcgrad returns gradients instead of accumulating them on parameters."""

    def _params(self) -> list[Any]:
        return [p for g in self.param_groups for p in g["params"]]

    def _align_grads(self, grads: Any) -> list[Any]:
        params = self._params()
        n = len(params)
        if grads is None:
            raise TypeError(
                f"{type(self).__name__}.step: pass the gradients, step(grads); funcgrad does "
                "not store .grad on parameters"
            )
        if isinstance(grads, list | tuple) and len(grads) == n and all(
            g is None or is_array(g) for g in grads
        ):
            flat = list(grads)
        else:
            flat = tree_util.tree_leaves(grads)
            if len(flat) != n:
                raise ValueError(
                    f"{type(self).__name__}.step: got {len(flat)} gradient leaves for {n} "
                    "parameters; pass a list aligned with the parameters (None to skip one) or "
                    "a pytree whose leaves align with them (e.g. the Module-shaped gradients of "
                    "funcgrad_nn.grad)"
                )
        for i, (p, g) in enumerate(zip(params, flat)):
            if g is not None and getattr(g, "shape", None) != p.shape:
                raise ValueError(
                    f"{type(self).__name__}.step: gradient {i} has shape "
                    f"{getattr(g, 'shape', type(g).__name__)}, parameter {i} has shape {p.shape}"
                )
        return flat

    def step(self, grads: Any, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter in place from ``grads`` (aligned list or pytree).

        Returns ``closure()`` when a closure is given (called before the update), else None.
        """
        loss = closure() if closure is not None else None
        flat = self._align_grads(grads)
        k = 0
        for group in self.param_groups:
            ps = group["params"]
            pairs = [(p, g) for p, g in zip(ps, flat[k:k + len(ps)]) if g is not None]
            k += len(ps)
            if pairs:
                self._update_group(group, pairs)
        return loss

    def _update_group(self, group: dict[str, Any], pairs: list[tuple[Any, Any]]) -> None:
        # Each algorithm (SGD, Adam...) defines its in-place update of (param, grad) pairs.
        raise NotImplementedError(
            f"{type(self).__name__} must define _update_group(group, pairs): the in-place "
            "update of each (parameter, gradient) pair of a parameter group")

    def _grad(self, p: Any, g: Any, group: dict[str, Any]) -> tuple[Any, Any]:
        xp = xp_for(p, g, what=f"{type(self).__name__}.step")
        if device_of(g) is None:
            g = xp.asarray(g)
        if group.get("maximize", False):
            g = -g
        wd = group.get("weight_decay", 0)
        if wd != 0 and not getattr(self, "_decoupled", False):
            g = g + wd * p
        return xp, g

    # -- serialization -------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """PyTorch's layout: ``{"state": {index: {...}}, "param_groups": [{..., "params": [index...]}]}``.

        Parameters are numbered 0, 1, ... across groups in order; state arrays are copies.

        >>> import numpy as np
        >>> opt = SGD([np.ones(1)], lr=0.1, momentum=0.9)
        >>> opt.step([np.ones(1)])
        >>> sd = opt.state_dict()
        >>> sd["state"][0]["momentum_buffer"], sd["param_groups"][0]["params"]
        (array([1.]), [0])
        """
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            packed["params"] = []
            for p in group["params"]:
                index.setdefault(id(p), len(index))
                packed["params"].append(index[id(p)])
            groups.append(packed)
        state = {
            index[pid]: {k: (v.copy() if is_array(v) else copy.deepcopy(v)) for k, v in s.items()}
            for pid, s in self.state.items() if pid in index
        }
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a :meth:`state_dict` (hyperparameters and per-parameter state), copying arrays
        onto each parameter's device and dtype."""
        groups = self.param_groups
        saved = state_dict["param_groups"]
        if len(groups) != len(saved):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved)):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match the size of "
                "optimizer's group"
            )
        id_map = {}
        for g, s in zip(groups, saved):
            for p, idx in zip(g["params"], s["params"]):
                id_map[idx] = p
        new_state: dict[int, dict[str, Any]] = {}
        for idx, st in state_dict["state"].items():
            key = int(idx)
            if key not in id_map:
                continue
            p = id_map[key]
            new_state[id(p)] = {k: self._cast_state(k, v, p) for k, v in st.items()}
        self.state = new_state
        new_groups = []
        for g, s in zip(groups, saved):
            ng = {k: copy.deepcopy(v) for k, v in s.items() if k != "params"}
            ng["params"] = g["params"]
            new_groups.append(ng)
        self.param_groups = new_groups

    @staticmethod
    def _cast_state(key: str, value: Any, p: Any) -> Any:
        if key == "step":
            return int(float(value))
        if is_array(value) or hasattr(value, "__array__"):
            xp = xp_for(p)
            if device_of(value) not in (None, device_of(p)):
                from funcgrad.backend import to_numpy

                value = to_numpy(value)
            return xp.asarray(value, dtype=p.dtype).copy()
        return copy.deepcopy(value)


def _check(cond: bool, msg: str) -> None:
    if not cond:
        raise ValueError(msg)


def _check_lr_eps_wd(group: dict[str, Any]) -> None:
    _check(0.0 <= group["lr"], f"Invalid learning rate: {group['lr']}")
    if "eps" in group:
        _check(0.0 <= group["eps"], f"Invalid epsilon value: {group['eps']}")
    _check(0.0 <= group["weight_decay"], f"Invalid weight_decay value: {group['weight_decay']}")


def _check_betas(group: dict[str, Any]) -> None:
    b = group["betas"]
    _check(0.0 <= b[0] < 1.0, f"Invalid beta parameter at index 0: {b[0]}")
    _check(0.0 <= b[1] < 1.0, f"Invalid beta parameter at index 1: {b[1]}")


class SGD(Optimizer):
    """Stochastic gradient descent with PyTorch's momentum/dampening/Nesterov formulas.

    >>> import numpy as np
    >>> w = np.zeros(1)
    >>> opt = SGD([w], lr=0.1, momentum=0.9)
    >>> for _ in range(2):
    ...     opt.step([np.ones(1)])
    >>> w
    array([-0.29])
    """

    def __init__(
        self, params: Iterable[Any], lr: float = 1e-3, momentum: float = 0.0,
        dampening: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False, *,
        maximize: bool = False,
    ) -> None:
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening,
                        weight_decay=weight_decay, nesterov=nesterov, maximize=maximize)
        super().__init__(params, defaults)

    def _validate_group(self, group: dict[str, Any]) -> None:
        _check(0.0 <= group["lr"], f"Invalid learning rate: {group['lr']}")
        _check(0.0 <= group["momentum"], f"Invalid momentum value: {group['momentum']}")
        _check(0.0 <= group["weight_decay"], f"Invalid weight_decay value: {group['weight_decay']}")
        if group["nesterov"] and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")

    def _update_group(self, group: dict[str, Any], pairs: list[tuple[Any, Any]]) -> None:
        lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
        for p, g in pairs:
            xp, g = self._grad(p, g, group)
            if momentum != 0:
                state = self.state.setdefault(id(p), {})
                buf = state.get("momentum_buffer")
                if buf is None:
                    buf = state["momentum_buffer"] = xp.array(g, dtype=p.dtype, copy=True)
                else:
                    buf *= momentum
                    buf += (1 - dampening) * g
                g = g + momentum * buf if group["nesterov"] else buf
            p -= lr * g


class Adam(Optimizer):
    """Adam with PyTorch's formulas (coupled L2 ``weight_decay``, ``amsgrad``, ``maximize``).

    >>> import numpy as np
    >>> w = np.zeros(2)
    >>> Adam([w], lr=0.1).step([np.array([1.0, -3.0])])
    >>> np.round(w, 6)
    array([-0.1,  0.1])
    """

    _decoupled = False

    def __init__(
        self, params: Iterable[Any], lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8, weight_decay: float = 0.0, amsgrad: bool = False, *,
        maximize: bool = False,
    ) -> None:
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        amsgrad=amsgrad, maximize=maximize)
        super().__init__(params, defaults)

    def _validate_group(self, group: dict[str, Any]) -> None:
        _check_lr_eps_wd(group)
        _check_betas(group)

    def _update_group(self, group: dict[str, Any], pairs: list[tuple[Any, Any]]) -> None:
        lr, eps, wd = group["lr"], group["eps"], group["weight_decay"]
        beta1, beta2 = group["betas"]
        for p, g in pairs:
            xp, g = self._grad(p, g, group)
            state = self.state.get(id(p))
            if not state:
                state = self.state[id(p)] = {
                    "step": 0, "exp_avg": xp.zeros_like(p), "exp_avg_sq": xp.zeros_like(p)}
                if group["amsgrad"]:
                    state["max_exp_avg_sq"] = xp.zeros_like(p)
            state["step"] += 1
            step = state["step"]
            if self._decoupled:
                p *= 1 - lr * wd
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            _lerp(xp, exp_avg, g, 1 - beta1)
            exp_avg_sq *= beta2
            exp_avg_sq += (1 - beta2) * (g * g)
            step_size = lr / (1 - beta1**step)
            bc2_sqrt = math.sqrt(1 - beta2**step)
            if group["amsgrad"]:
                m = state["max_exp_avg_sq"]
                xp.maximum(m, exp_avg_sq, out=m)
                denom = xp.sqrt(m) / bc2_sqrt + eps
            else:
                denom = xp.sqrt(exp_avg_sq) / bc2_sqrt + eps
            p -= step_size * (exp_avg / denom)


class AdamW(Adam):
    """Adam with decoupled weight decay (``p *= 1 - lr * weight_decay``), PyTorch's defaults.

    >>> import numpy as np
    >>> w = np.ones(1)
    >>> AdamW([w], lr=0.1, weight_decay=0.5).step([np.zeros(1)])
    >>> w
    array([0.95])
    """

    _decoupled = True

    def __init__(
        self, params: Iterable[Any], lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False, *,
        maximize: bool = False,
    ) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize)


class Adamax(Optimizer):
    """Adamax (Adam with the infinity norm), PyTorch's formulas and defaults.

    >>> import numpy as np
    >>> w = np.zeros(1)
    >>> Adamax([w], lr=0.1).step([np.array([2.0])])
    >>> np.round(w, 6)
    array([-0.1])
    """

    def __init__(
        self, params: Iterable[Any], lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8, weight_decay: float = 0.0, *, maximize: bool = False,
    ) -> None:
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        maximize=maximize)
        super().__init__(params, defaults)

    def _validate_group(self, group: dict[str, Any]) -> None:
        _check_lr_eps_wd(group)
        _check_betas(group)

    def _update_group(self, group: dict[str, Any], pairs: list[tuple[Any, Any]]) -> None:
        lr, eps = group["lr"], group["eps"]
        beta1, beta2 = group["betas"]
        for p, g in pairs:
            xp, g = self._grad(p, g, group)
            state = self.state.get(id(p))
            if not state:
                state = self.state[id(p)] = {
                    "step": 0, "exp_avg": xp.zeros_like(p), "exp_inf": xp.zeros_like(p)}
            state["step"] += 1
            exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
            _lerp(xp, exp_avg, g, 1 - beta1)
            exp_inf *= beta2
            xp.maximum(exp_inf, xp.abs(g) + eps, out=exp_inf)
            clr = lr / (1 - beta1 ** state["step"])
            p -= clr * (exp_avg / exp_inf)


class RMSprop(Optimizer):
    """RMSprop with PyTorch's formulas (``eps`` outside the root, ``centered``, ``momentum``).

    >>> import numpy as np
    >>> w = np.zeros(1)
    >>> RMSprop([w], lr=0.01, alpha=0.0, eps=0.0).step([np.array([5.0])])
    >>> w
    array([-0.01])
    """

    def __init__(
        self, params: Iterable[Any], lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
        weight_decay: float = 0.0, momentum: float = 0.0, centered: bool = False, *,
        maximize: bool = False,
    ) -> None:
        defaults = dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                        momentum=momentum, centered=centered, maximize=maximize)
        super().__init__(params, defaults)

    def _validate_group(self, group: dict[str, Any]) -> None:
        _check_lr_eps_wd(group)
        _check(0.0 <= group["momentum"], f"Invalid momentum value: {group['momentum']}")
        _check(0.0 <= group["alpha"], f"Invalid alpha value: {group['alpha']}")

    def _update_group(self, group: dict[str, Any], pairs: list[tuple[Any, Any]]) -> None:
        lr, alpha, eps, momentum = group["lr"], group["alpha"], group["eps"], group["momentum"]
        for p, g in pairs:
            xp, g = self._grad(p, g, group)
            state = self.state.get(id(p))
            if not state:
                state = self.state[id(p)] = {"step": 0, "square_avg": xp.zeros_like(p)}
                if momentum > 0:
                    state["momentum_buffer"] = xp.zeros_like(p)
                if group["centered"]:
                    state["grad_avg"] = xp.zeros_like(p)
            state["step"] += 1
            sq = state["square_avg"]
            sq *= alpha
            sq += (1 - alpha) * (g * g)
            if group["centered"]:
                ga = state["grad_avg"]
                _lerp(xp, ga, g, 1 - alpha)
                avg = xp.sqrt(sq - ga * ga) + eps
            else:
                avg = xp.sqrt(sq) + eps
            if momentum > 0:
                buf = state["momentum_buffer"]
                buf *= momentum
                buf += g / avg
                p -= lr * buf
            else:
                p -= lr * (g / avg)


class Adagrad(Optimizer):
    """Adagrad with PyTorch's formulas (``lr_decay``, ``initial_accumulator_value``).

    >>> import numpy as np
    >>> w = np.zeros(1)
    >>> Adagrad([w], lr=0.1).step([np.array([4.0])])
    >>> np.round(w, 6)
    array([-0.1])
    """

    def __init__(
        self, params: Iterable[Any], lr: float = 1e-2, lr_decay: float = 0.0,
        weight_decay: float = 0.0, initial_accumulator_value: float = 0.0, eps: float = 1e-10,
        *, maximize: bool = False,
    ) -> None:
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, maximize=maximize)
        super().__init__(params, defaults)
        for group in self.param_groups:
            self._init_group_state(group)

    def add_param_group(self, param_group: dict[str, Any]) -> None:  # noqa: D102
        super().add_param_group(param_group)
        # PyTorch creates Adagrad's accumulators eagerly, so they appear in state_dict at once.
        if hasattr(self, "state"):
            self._init_group_state(self.param_groups[-1])

    def _init_group_state(self, group: dict[str, Any]) -> None:
        for p in group["params"]:
            if id(p) not in self.state:
                xp = xp_for(p)
                self.state[id(p)] = {
                    "step": 0, "sum": xp.full_like(p, group["initial_accumulator_value"])}

    def _validate_group(self, group: dict[str, Any]) -> None:
        _check(0.0 <= group["lr"], f"Invalid learning rate: {group['lr']}")
        _check(0.0 <= group["lr_decay"], f"Invalid lr_decay value: {group['lr_decay']}")
        _check(0.0 <= group["weight_decay"], f"Invalid weight_decay value: {group['weight_decay']}")
        v = group["initial_accumulator_value"]
        _check(0.0 <= v, f"Invalid initial_accumulator_value value: {v}")
        _check(0.0 <= group["eps"], f"Invalid epsilon value: {group['eps']}")

    def _update_group(self, group: dict[str, Any], pairs: list[tuple[Any, Any]]) -> None:
        lr, lr_decay, eps = group["lr"], group["lr_decay"], group["eps"]
        for p, g in pairs:
            xp, g = self._grad(p, g, group)
            state = self.state[id(p)]
            state["step"] += 1
            clr = lr / (1 + (state["step"] - 1) * lr_decay)
            s = state["sum"]
            s += g * g
            p -= clr * (g / (xp.sqrt(s) + eps))
