"""L-BFGS as ``torch.optim.LBFGS``, with the optional strong-Wolfe line search.

L-BFGS is not a per-step gradient transformation: one ``step(closure)`` runs up to
``max_iter`` iterations, each re-evaluating the objective, with Python control flow on the
values (the two-loop recursion, the line search's bracketing). It therefore works on the flat
parameter vector with the parameters' array module, following PyTorch's algorithm and its
tolerances step for step so trajectories agree.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from funcgrad.backend import xp_for
from funcgrad_nn.optim.optimizer import Optimizer, _check_lr, _check_writeable

__all__ = ["LBFGS"]


def _scalar(x: Any) -> Any:
    """A 0-d array result as a host NumPy scalar of its dtype. PyTorch keeps these values
    (``g.dot(d)``, ``ys``, ``ro``, step lengths) as 0-d tensors of the parameters' dtype, so a
    float32 problem runs its line search and two-loop recursion in float32; NumPy scalars
    with Python floats as weak operands (NEP 50) compute the same way."""
    return np.dtype(x.dtype).type(float(x))


def _axpy(a: Any, x: Any, y: Any) -> Any:
    """``y + a * x`` rounded once, as PyTorch's ``y.add_(x, alpha=a)`` (a fused multiply-add):
    float32 and narrower are computed in float64 (exact product) and rounded back."""
    if y.dtype.kind == "f" and y.dtype.itemsize < 8:
        return (y.astype(np.float64) + np.float64(a) * x.astype(np.float64)).astype(y.dtype)
    return y + a * x


def _cubic_interpolate(x1: float, f1: float, g1: float, x2: float, f2: float, g2: float,
                       bounds: tuple[float, float] | None = None) -> float:
    # The minimiser of the cubic through (x1, f1, g1) and (x2, f2, g2), clamped to bounds.
    xmin_bound, xmax_bound = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1**2 - g1 * g2
    if d2_square >= 0:
        d2 = np.sqrt(d2_square)
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, xmin_bound), xmax_bound)
    return (xmin_bound + xmax_bound) / 2.0


def _strong_wolfe(obj_func: Callable[[Any, float, Any], tuple[float, Any]], xp: Any, x: Any,
                  t: float, d: Any, f: float, g: Any, gtd: float, c1: float = 1e-4,
                  c2: float = 0.9, tolerance_change: float = 1e-9,
                  max_ls: int = 25) -> tuple[float, Any, float, int]:
    """A step length satisfying the strong Wolfe conditions (bracketing, then zoom with
    cubic interpolation), as PyTorch's ``_strong_wolfe``."""
    d_norm = _scalar(xp.max(xp.abs(d)))
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = _scalar(xp.dot(g_new, d))
    t_prev, f_prev, g_prev, gtd_prev = 0.0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new], [gtd_prev, gtd_new]
            break
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        tmp = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                               bounds=(min_step, max_step))
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new, gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = _scalar(xp.dot(g_new, d))
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0.0, t], [f, f_new], [g, g_new]
        bracket_gtd = [gtd, gtd_new]

    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0],
                               bracket[1], bracket_f[1], bracket_gtd[1])
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                t = max(bracket) - eps if abs(t - max(bracket)) < abs(t - min(bracket)) \
                    else min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = _scalar(xp.dot(g_new, d))
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            bracket[high_pos], bracket_f[high_pos] = t, f_new
            bracket_g[high_pos], bracket_gtd[high_pos] = g_new, gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                bracket[high_pos], bracket_f[high_pos] = bracket[low_pos], bracket_f[low_pos]
                bracket_g[high_pos] = bracket_g[low_pos]
                bracket_gtd[high_pos] = bracket_gtd[low_pos]
            bracket[low_pos], bracket_f[low_pos] = t, f_new
            bracket_g[low_pos], bracket_gtd[low_pos] = g_new, gtd_new
    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals


class LBFGS(Optimizer):
    """L-BFGS with PyTorch's signature, defaults, tolerances and state (``func_evals``,
    ``n_iter``, ``d``, ``t``, ``old_dirs``, ``old_stps``, ``ro``, ``H_diag``, ...).

    ``step(closure)``: the closure re-evaluates the objective at the current parameters and
    returns ``(loss, grads)``, grads aligned with the parameters (a list, or a pytree such as
    the Module-shaped gradients of ``funcgrad_nn.value_and_grad``). Returns the first loss.

    >>> import numpy as np
    >>> w = np.array([3.0, -1.0])
    >>> opt = LBFGS([w], line_search_fn="strong_wolfe")
    >>> loss = opt.step(lambda: (float(np.sum((w - 1.0) ** 2)), [2 * (w - 1.0)]))
    >>> np.round(w, 6)
    array([1., 1.])
    """

    def __init__(
        self, params: Iterable[Any], lr: float = 1, max_iter: int = 20,
        max_eval: int | None = None, tolerance_grad: float = 1e-7,
        tolerance_change: float = 1e-9, history_size: int = 100,
        line_search_fn: str | None = None,
    ) -> None:
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                        tolerance_grad=tolerance_grad, tolerance_change=tolerance_change,
                        history_size=history_size, line_search_fn=line_search_fn)
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")

    def add_param_group(self, param_group: dict[str, Any]) -> None:  # noqa: D102
        if getattr(self, "param_groups", None):
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        super().add_param_group(param_group)

    def _validate_group(self, group: dict[str, Any]) -> None:
        _check_lr(group)
        ls = group["line_search_fn"]
        if ls not in (None, "strong_wolfe"):
            raise ValueError(f"only 'strong_wolfe' is supported as line_search_fn, got {ls!r}")

    # -- flat-vector helpers ------------------------------------------------------------
    def _p(self) -> list[Any]:
        return self.param_groups[0]["params"]

    def _evaluate(self, closure: Callable[[], Any]) -> tuple[Any, float, Any]:
        out = closure()
        if not (isinstance(out, tuple) and len(out) == 2):
            raise TypeError(
                "LBFGS.step: the closure must return (loss, grads) — the loss and the "
                "gradients at the current parameters, aligned with them (funcgrad returns "
                "gradients instead of storing .grad)")
        loss, grads = out
        flat = self._align_grads(grads)
        ps = self._p()
        xp = xp_for(ps[0])
        views = []
        for p, g in zip(ps, flat):
            g = xp.zeros(p.shape, dtype=p.dtype) if g is None else xp.asarray(g, dtype=p.dtype)
            if g.dtype.kind == "c":  # PyTorch's view_as_real: (real, imag) pairs
                g = xp.stack([g.real, g.imag], axis=-1)
            views.append(g.reshape(-1))
        return loss, float(loss), xp.concatenate(views)

    def _add_grad(self, step_size: float, update: Any) -> None:
        xp = xp_for(update)
        offset = 0
        for i, p in enumerate(self._p()):
            _check_writeable(p, i)
            if p.dtype.kind == "c":  # PyTorch's view_as_real: (real, imag) pairs
                n = 2 * p.size
                real = xp.stack([p.real, p.imag], axis=-1)
                new = _axpy(step_size, update[offset:offset + n].reshape(real.shape), real)
                p[...] = new[..., 0] + 1j * new[..., 1]
            else:
                n = p.size
                p[...] = _axpy(step_size, update[offset:offset + n].reshape(p.shape), p)
            offset += n

    def _set_param(self, data: list[Any]) -> None:
        for p, x in zip(self._p(), data):
            p[...] = x

    # -- the step ------------------------------------------------------------------------
    def step(self, closure: Callable[[], Any] | None = None) -> Any:  # type: ignore[override]
        """Run up to ``max_iter`` L-BFGS iterations; ``closure()`` returns ``(loss, grads)``."""
        if closure is None or not callable(closure):
            raise TypeError(
                "LBFGS.step needs a closure: step(closure), where closure() re-evaluates the "
                "model at the current parameters and returns (loss, grads)")
        self._follow_modules()
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]
        xp = xp_for(self._p()[0])

        state = self._states[0][0]
        if state is None:
            state = self._states[0][0] = {"func_evals": 0, "n_iter": 0}

        orig_loss, loss, flat_grad = self._evaluate(closure)
        current_evals = 1
        state["func_evals"] += 1
        if _scalar(xp.max(xp.abs(flat_grad))) <= tolerance_grad:
            return orig_loss

        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        h_diag = state.get("H_diag")
        prev_flat_grad, prev_loss = state.get("prev_flat_grad"), state.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro = [], [], []
                h_diag = 1.0
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = _scalar(xp.dot(y, s))
                if ys > 1e-10:
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    h_diag = ys / _scalar(xp.dot(y, y))
                num_old = len(old_dirs)
                al = state.setdefault("al", [None] * history_size)
                q = -flat_grad
                for i in range(num_old - 1, -1, -1):
                    al[i] = _scalar(xp.dot(old_stps[i], q)) * ro[i]
                    q = _axpy(-al[i], old_dirs[i], q)
                r = q * h_diag
                for i in range(num_old):
                    be_i = _scalar(xp.dot(old_dirs[i], r)) * ro[i]
                    r = _axpy(al[i] - be_i, old_stps[i], r)
                d = r
            prev_flat_grad = flat_grad.copy()
            prev_loss = loss
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / _scalar(xp.sum(xp.abs(flat_grad)))) * lr
            else:
                t = lr
            gtd = _scalar(xp.dot(flat_grad, d))
            if gtd > -tolerance_change:
                break

            ls_func_evals = 0
            if line_search_fn is not None:
                x_init = [p.copy() for p in self._p()]

                def obj_func(x: list[Any], t: float, d: Any) -> tuple[float, Any]:
                    self._add_grad(t, d)
                    _, f, g = self._evaluate(closure)
                    self._set_param(x)
                    return f, g

                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    obj_func, xp, x_init, t, d, loss, flat_grad, gtd,
                    max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = _scalar(xp.max(xp.abs(flat_grad))) <= tolerance_grad
            else:
                self._add_grad(t, d)
                opt_cond = False
                if n_iter != max_iter:
                    _, loss, flat_grad = self._evaluate(closure)
                    opt_cond = _scalar(xp.max(xp.abs(flat_grad))) <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if _scalar(xp.max(xp.abs(d * t))) <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro, H_diag=h_diag,
                     prev_flat_grad=prev_flat_grad, prev_loss=prev_loss)
        return orig_loss

    def _load_state(self, state_dict: dict[str, Any]) -> None:
        # Hyperparameters and the L-BFGS history saved by state_dict().
        saved = state_dict["param_groups"]
        if len(saved) != 1 or len(saved[0]["params"]) != len(self._p()):
            raise ValueError("loaded state dict does not match this LBFGS's parameters")
        group = {k: v for k, v in saved[0].items() if k != "params"}
        group["params"] = self._p()
        self._validate_group(group)
        self.param_groups = [group]
        st = {int(k): v for k, v in state_dict["state"].items()}.get(int(saved[0]["params"][0]))
        self._states = [[None if not st else _copy_tree(st)] + [None] * (len(self._p()) - 1)]
        # entries assigned through state[p] before are replaced by the loaded ones (the first
        # parameter's state dict holds them all)
        self.__dict__["_extra_state"] = {}


def _copy_tree(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _copy_tree(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_copy_tree(v) for v in x]
    return x.copy() if hasattr(x, "copy") and hasattr(x, "shape") else x
