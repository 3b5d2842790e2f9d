"""PyTorch-style stateful optimizers: thin wrappers over the functional core.

Each optimizer builds, per parameter group, a :class:`~funcgrad_nn.optim.GradientTransformation`
chain from the group's hyperparameters (``_transform``; the formulas live in
:mod:`._torch_transform`), keeps one chain state per parameter (aligned with
``param_groups``), and ``step(grads)`` adds the chain's update to each parameter array in place,
so the same hyperparameters give PyTorch's numbers. Gradients are passed explicitly (funcgrad
returns gradients instead of storing ``.grad``), or returned by a closure.
"""

from __future__ import annotations

import collections
import collections.abc
import copy
import functools
import itertools
import warnings
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

import funcgrad
from funcgrad import tree_util
from funcgrad.backend import device_of, device_put, is_array, is_writeable, to_numpy, xp_for
from funcgrad.core import is_tracer
from funcgrad_nn._torch_idioms import add_torch_idiom_note
from funcgrad_nn.module import _LIVE_MODULES, Module
from funcgrad_nn.optim import _torch_transform as T
from funcgrad_nn.optim._transform import (
    EmptyState,
    GradientTransformation,
    _as_dtype,
    _tmap,
    add_decayed_weights,
    apply_updates,
    chain,
    scale,
)
from funcgrad_nn.transforms import no_grad_leaves

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "Adamax", "RMSprop", "Adagrad", "NAdam", "RAdam",
           "Adadelta", "ASGD", "Rprop", "SparseAdam", "Adafactor", "Muon", "Lion",
           "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"]

_required = object()
_hook_ids = itertools.count()


class _HookHandle:
    def __init__(self, registry: dict) -> None:
        self._registry, self.id = registry, next(_hook_ids)

    def remove(self) -> None:
        self._registry.pop(self.id, None)


#: the step hooks of every optimizer (``register_optimizer_step_pre_hook`` / ``_post_hook``)
_global_pre_hooks: collections.OrderedDict[int, Callable[..., Any]] = collections.OrderedDict()
_global_post_hooks: collections.OrderedDict[int, Callable[..., Any]] = collections.OrderedDict()


def register_optimizer_step_pre_hook(hook: Callable[..., Any]) -> _HookHandle:
    """``hook(optimizer, args, kwargs)`` before the step of every optimizer (before its own
    pre hooks, as PyTorch's ``torch.optim.optimizer.register_optimizer_step_pre_hook``); it
    may return new ``(args, kwargs)``. Returns a handle with ``remove()``.

    >>> import numpy as np
    >>> seen = []
    >>> h = register_optimizer_step_pre_hook(lambda o, a, k: seen.append(type(o).__name__))
    >>> SGD([np.zeros(1)], lr=1.0).step([np.ones(1)]); h.remove(); seen
    ['SGD']
    """
    h = _HookHandle(_global_pre_hooks)
    _global_pre_hooks[h.id] = hook
    return h


def register_optimizer_step_post_hook(hook: Callable[..., Any]) -> _HookHandle:
    """``hook(optimizer, args, kwargs)`` after the step of every optimizer (after its own
    post hooks, as PyTorch's). Returns a handle with ``remove()``.

    >>> import numpy as np
    >>> seen = []
    >>> h = register_optimizer_step_post_hook(lambda o, a, k: seen.append(1))
    >>> Adam([np.zeros(1)]).step([np.ones(1)]); h.remove(); seen
    [1]
    """
    h = _HookHandle(_global_post_hooks)
    _global_post_hooks[h.id] = hook
    return h


def _with_hooks(step: Callable[..., Any]) -> Callable[..., Any]:
    # Wraps every class's own step so step pre/post hooks run for subclasses (LBFGS) too.
    @functools.wraps(step)
    def wrapped(self: Optimizer, *args: Any, **kwargs: Any) -> Any:
        for hook in [*_global_pre_hooks.values(), *self._step_pre_hooks.values()]:
            out = hook(self, args, kwargs)
            if out is not None:
                if not (isinstance(out, tuple) and len(out) == 2):
                    raise RuntimeError("a step pre-hook must return None or (args, kwargs), "
                                       f"got {out!r}")
                args, kwargs = out
        self._opt_called = True  # lr schedulers warn when stepped before the optimizer
        result = step(self, *args, **kwargs)
        for hook in [*self._step_post_hooks.values(), *_global_post_hooks.values()]:
            hook(self, args, kwargs)
        return result

    wrapped._with_hooks = True  # type: ignore[attr-defined]
    return wrapped


#: group entries that are not hyperparameters: they do not change the update's formulas
_NOT_HYPERPARAMETERS = ("params", "param_names")


def _listed(params: Iterable[Any]) -> list[Any]:
    """``list(params)``; an error raised while iterating (PyTorch's ``filter(lambda p:
    p.requires_grad, model.parameters())`` on plain arrays) gets the note naming the
    funcgrad way."""
    try:
        return list(params)
    except Exception as e:
        add_torch_idiom_note(e)
        raise


class Optimizer:
    """Base class: parameter groups, per-parameter state, hooks, ``state_dict``.

    ``params`` is an iterable of arrays (``model.parameters()``) or of dicts
    ``{"params": [...], <hyperparameter>: ...}`` (per-group overrides of ``defaults``).
    Subclasses define ``_transform(group)``: the functional chain for a group's hyperparameters.
    An optimizer built from ``model.parameters()`` follows the module's current arrays (after
    ``model.double()`` or ``model.to(...)``); a parameter whose shape or dtype no longer matches
    its state raises.

    >>> import numpy as np
    >>> w = np.ones(2)
    >>> opt = SGD([w], lr=0.5)
    >>> opt.step([np.ones(2)])
    >>> w
    array([0.5, 0.5])
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("step")
        if own is not None and not getattr(own, "_with_hooks", False):
            cls.step = _with_hooks(own)

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self.param_groups: list[dict[str, Any]] = []
        self._sources: list[list[tuple[Any, str] | None]] = []
        self._roots: list[Any] = []  # per group: the module whose parameters() it holds
        self._states: list[list[Any]] = []  # per group, per parameter: its chain state or None
        self._tx_cache: dict[Any, GradientTransformation] = {}
        self._step_pre_hooks: dict[int, Callable[..., Any]] = collections.OrderedDict()
        self._step_post_hooks: dict[int, Callable[..., Any]] = collections.OrderedDict()
        self._state_dict_hooks: dict[str, dict[int, Callable[..., Any]]] = {
            k: collections.OrderedDict() for k in _STATE_DICT_HOOKS}
        if is_array(params):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or "
                f"dicts, but got {type(params).__module__}.{type(params).__name__}"
            )
        if isinstance(params, dict) and params and all(is_array(v) for v in params.values()):
            # iterating a dict gives its keys: PyTorch's error, with the way out
            raise TypeError(
                "optimizer can only optimize Tensors, but one of the params is builtins."
                f"{type(next(iter(params))).__name__}: a dict of parameters is iterated by its "
                "keys; pass params.values() (or params.items() to record their names), whose "
                "gradients step() then matches by key")
        if defaults.get("fused"):
            # PyTorch's checks; the flag itself changes nothing here (see docs/optim.md).
            if defaults.get("differentiable"):
                raise RuntimeError("`fused` does not support `differentiable`")
            if defaults.get("foreach"):
                raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
        sources = getattr(params, "sources", None)
        keys = list(params.mapping) if isinstance(params, _DICT_VALUES) else None
        param_groups = _listed(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            group: dict[str, Any] = {"params": param_groups}
            if sources is not None:
                group["params"] = _Sourced(param_groups, sources[-len(param_groups):],
                                           getattr(params, "root", None))
            elif keys is not None:
                group["params"] = _Keyed(param_groups, keys)
            param_groups = [group]
        for g in param_groups:
            self.add_param_group(g)

    def __getstate__(self) -> dict[str, Any]:
        # Compiled updates and cached chains are rebuilt on demand (closures don't pickle).
        return {k: v for k, v in self.__dict__.items()
                if k not in ("_tx_cache", "_fused_cache", "_fused_off", "_fused_varying",
                             "_fused_last")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._tx_cache = {}

    def __repr__(self) -> str:
        # PyTorch's layout, character for character (a blank line between groups).
        out = f"{type(self).__name__} ("
        for i, group in enumerate(self.param_groups):
            out += f"\nParameter Group {i}\n"
            for key in sorted(group):
                if key != "params":
                    out += f"    {key}: {group[key]}\n"
        return out + ")"

    # -- parameter groups ----------------------------------------------------------------
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
        if "params" not in param_group:
            raise ValueError("param_group must have a 'params' entry")
        params = param_group["params"]
        sources: list[Any]
        root = None
        keys = list(params.mapping) if isinstance(params, _DICT_VALUES) else None
        if isinstance(params, _Keyed):
            params, sources, keys = params.arrays, [None] * len(params.arrays), params.keys
        elif isinstance(params, _Sourced):
            params, sources, root = params.arrays, list(params.sources), params.root
        elif is_array(params):
            params, sources = [params], [None]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the "
                "ordering of tensors in sets will change between runs. Please use a list instead."
            )
        else:
            it_sources = getattr(params, "sources", None)
            root = getattr(params, "root", None)
            params = _listed(params)
            sources = (list(it_sources[-len(params):]) if it_sources is not None and params
                       else [None] * len(params))
        names = _param_names(params)
        if names is not None:
            params = [p for _, p in params]
        if any(("param_names" in g) != (names is not None) for g in self.param_groups):
            raise ValueError("all optimizer param groups should be with/without names.")
        for i, p in enumerate(params):
            if not is_array(p) or not hasattr(p, "__setitem__"):
                raise TypeError(
                    "optimizer can only optimize Tensors, but one of the params is "
                    f"{type(p).__module__}.{type(p).__name__} (parameter {i} of group "
                    f"{len(self.param_groups)})"
                )
        group = dict(param_group)
        group["params"] = params
        if names is not None:
            group["param_names"] = names
        for name, default in self.defaults.items():
            if default is _required and name not in group:
                raise ValueError(
                    "parameter group didn't specify a value of required optimization "
                    f"parameter {name}"
                )
            group.setdefault(name, default)
        ids = [id(p) for p in params]
        if len(ids) != len(set(ids)):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; in future, "
                "this will cause an error", stacklevel=3,
            )
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if seen & set(ids):
            raise ValueError("some parameters appear in more than one parameter group")
        self._validate_group(group)
        # the keys a dict of gradients is matched by: the names of (name, array) pairs, or
        # the keys of the dict whose .values() gave the arrays (a dict of gradients, such
        # as funcgrad.grad's over a dict of parameters, flattens in sorted-key order)
        self.__dict__.setdefault("_group_keys", {})[len(self.param_groups)] = (
            names if names is not None else keys)
        self.param_groups.append(group)
        self._sources.append(sources)
        self._roots.append(root if len(params) and all(s is not None for s in sources)
                           else None)
        if root is not None:
            # The root's parameters frozen now: PyTorch's parameters() yields them too, so
            # its optimizer holds them and updates them once unfrozen; this one does not
            # hold them, and step() says so when they come back with gradients.
            skipped = self.__dict__.setdefault("_frozen_at_build", [])
            skipped.extend((prefix, mod, name)
                           for prefix, mod in root.named_modules(remove_duplicate=False)
                           for name, value in mod.__dict__["_parameters"].items()
                           if name in mod.__dict__["_frozen"] and value is not None)
        self._source_paths = None
        self._states.append([None] * len(params))
        if self._eager_state:
            gi = len(self.param_groups) - 1
            tx = self._transform_for(group)
            self._states[gi] = [tx.init(p) for p in params]
            self.__dict__.setdefault("_layouts", {})[gi] = _state_layout(group)

    _eager_state = False  # PyTorch creates Adagrad's state at construction
    #: group options a loaded state dict may lack, with the values PyTorch's ``__setstate__``
    #: gives them (per class), and the options it overrides whatever was saved
    _LOADED_GROUP_DEFAULTS: dict[str, Any] = {}
    _LOADED_GROUP_FORCED: dict[str, Any] = {}
    _opt_called = False  # set by the first step()

    def _validate_group(self, group: dict[str, Any]) -> None:
        """Check a group's hyperparameters (subclasses raise PyTorch's messages)."""

    def _transform(self, group: dict[str, Any]) -> GradientTransformation:
        # Each algorithm (SGD, Adam...) defines its chain of gradient transformations.
        raise NotImplementedError(
            f"{type(self).__name__} must define _transform(group): the chain of gradient "
            "transformations (funcgrad_nn.optim) for a parameter group's hyperparameters")

    def _transform_for(self, group: dict[str, Any]) -> GradientTransformation:
        key = tuple((k, v) for k, v in group.items() if k not in _NOT_HYPERPARAMETERS)
        try:
            hit = self._tx_cache.get(key)
        except TypeError:  # an unhashable hyperparameter: build afresh
            return self._transform(group)
        if hit is None:
            if len(self._tx_cache) > 64:  # a scheduler changes lr every step: keep it small
                self._tx_cache.clear()
            hit = self._tx_cache[key] = self._transform(group)
        return hit

    def transform(self, group: int = 0) -> GradientTransformation:
        """The functional form of this optimizer for ``param_groups[group]``'s current
        hyperparameters: a pure ``GradientTransformation`` to ``init``/``update`` under
        ``jit``, whose per-parameter state uses the same names as :meth:`state_dict`.

        >>> import numpy as np
        >>> tx = Adam([np.zeros(1)], lr=0.1).transform()
        >>> p = {"w": np.zeros(1)}
        >>> u, s = tx.update({"w": np.ones(1)}, tx.init(p), p)
        >>> np.round(u["w"], 6)
        array([-0.1])
        """
        return self._transform_for(self.param_groups[group])

    def zero_grad(self, set_to_none: bool = True) -> None:
        """No-op: funcgrad returns gradients instead of accumulating them on parameters."""

    # -- hooks ---------------------------------------------------------------------------
    def register_step_pre_hook(self, hook: Callable[..., Any]) -> _HookHandle:
        """Call ``hook(optimizer, args, kwargs)`` before each ``step``; it may return new
        ``(args, kwargs)``. Returns a handle with ``remove()``.

        >>> import numpy as np
        >>> opt = SGD([np.zeros(1)], lr=1.0)
        >>> h = opt.register_step_pre_hook(lambda o, a, k: ((a[0] * 2,), k))
        >>> opt.step(np.ones(1)); h.remove(); opt.param_groups[0]["params"][0]
        array([-2.])
        """
        h = _HookHandle(self._step_pre_hooks)
        self._step_pre_hooks[h.id] = hook
        return h

    def register_step_post_hook(self, hook: Callable[..., Any]) -> _HookHandle:
        """Call ``hook(optimizer, args, kwargs)`` after each ``step``.

        >>> import numpy as np
        >>> opt = SGD([np.zeros(1)], lr=1.0)
        >>> calls = []
        >>> h = opt.register_step_post_hook(lambda o, a, k: calls.append(1))
        >>> opt.step([np.ones(1)]); calls
        [1]
        """
        h = _HookHandle(self._step_post_hooks)
        self._step_post_hooks[h.id] = hook
        return h

    def _register_state_hook(self, kind: str, hook: Callable[..., Any],
                             prepend: bool) -> _HookHandle:
        hooks = self.__dict__.setdefault("_state_dict_hooks", {}).setdefault(
            kind, collections.OrderedDict())
        h = _HookHandle(hooks)
        hooks[h.id] = hook
        if prepend:
            hooks.move_to_end(h.id, last=False)
        return h

    def _run_state_hooks(self, kind: str, state_dict: Any = None) -> Any:
        # Hooks given a state dict may return a replacement (PyTorch's rule); the others
        # get the optimizer only.
        for hook in list(self.__dict__.get("_state_dict_hooks", {}).get(kind, {}).values()):
            if state_dict is None:
                hook(self)
            else:
                new = hook(self, state_dict)
                if new is not None:
                    state_dict = new
        return state_dict

    def register_state_dict_pre_hook(self, hook: Callable[..., Any],
                                     prepend: bool = False) -> _HookHandle:
        """Call ``hook(optimizer)`` before :meth:`state_dict` builds the state dict.

        >>> import numpy as np
        >>> opt = SGD([np.zeros(1)], lr=0.1)
        >>> h = opt.register_state_dict_pre_hook(lambda o: print("saving"))
        >>> _ = opt.state_dict()
        saving
        """
        return self._register_state_hook("state_dict_pre", hook, prepend)

    def register_state_dict_post_hook(self, hook: Callable[..., Any],
                                      prepend: bool = False) -> _HookHandle:
        """Call ``hook(optimizer, state_dict)`` on the built state dict; a non-None return
        replaces it.

        >>> import numpy as np
        >>> opt = SGD([np.zeros(1)], lr=0.1)
        >>> h = opt.register_state_dict_post_hook(lambda o, sd: {**sd, "note": 1})
        >>> opt.state_dict()["note"]
        1
        """
        return self._register_state_hook("state_dict_post", hook, prepend)

    def register_load_state_dict_pre_hook(self, hook: Callable[..., Any],
                                          prepend: bool = False) -> _HookHandle:
        """Call ``hook(optimizer, state_dict)`` before :meth:`load_state_dict`; a non-None
        return is loaded instead.

        >>> import numpy as np
        >>> opt = SGD([np.zeros(1)], lr=0.1)
        >>> def halve(o, sd):
        ...     sd["param_groups"][0]["lr"] /= 2
        ...     return sd
        >>> h = opt.register_load_state_dict_pre_hook(halve)
        >>> opt.load_state_dict(opt.state_dict()); opt.param_groups[0]["lr"]
        0.05
        """
        return self._register_state_hook("load_state_dict_pre", hook, prepend)

    def register_load_state_dict_post_hook(self, hook: Callable[..., Any],
                                           prepend: bool = False) -> _HookHandle:
        """Call ``hook(optimizer)`` after :meth:`load_state_dict`.

        >>> import numpy as np
        >>> opt = SGD([np.zeros(1)], lr=0.1)
        >>> h = opt.register_load_state_dict_post_hook(lambda o: print("loaded"))
        >>> opt.load_state_dict(opt.state_dict())
        loaded
        """
        return self._register_state_hook("load_state_dict_post", hook, prepend)

    # -- the step ------------------------------------------------------------------------
    def step(self, grads: Any = None, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter in place from ``grads`` (a list aligned with the parameters,
        None to skip one, or a pytree whose leaves align with them, like the Module-shaped
        gradients of ``funcgrad_nn.grad``).

        ``step(closure)``: the closure re-evaluates the model at the current parameters and
        returns the loss, or ``(loss, grads)`` (then no ``grads`` argument is needed); the
        loss is returned.
        """
        if closure is None and _is_closure(grads):
            grads, closure = None, grads
        loss = None
        if closure is not None:
            out = closure()
            if grads is None and isinstance(out, tuple) and len(out) == 2:
                loss, grads = out
            else:
                loss = out
        if grads is None:
            raise TypeError(
                f"{type(self).__name__}.step: pass the gradients, step(grads), or a closure "
                "returning (loss, grads); funcgrad does not store .grad on parameters"
            )
        self._apply(grads)
        return loss

    def _apply(self, grads: Any) -> None:
        self._follow_modules()
        flat = self._align_grads(grads)
        if any(is_tracer(g) for g in flat):
            raise TypeError(_TRACED_STEP)
        k = 0
        for gi, group in enumerate(self.param_groups):
            params = group["params"]
            gs = flat[k:k + len(params)]
            k += len(params)
            idx = [i for i, g in enumerate(gs) if g is not None]
            if not idx:
                continue
            states = self._states[gi]
            self._follow_layout(gi, group, states)
            ps = [params[i] for i in idx]
            gs = [self._device_grad(p, gs[i]) for p, i in zip(ps, idx)]
            if any(states[i] is None for i in idx):
                tx = self._transform_for(group)
                for i, p in zip(idx, ps):
                    if states[i] is None:
                        states[i] = self._init_state(tx, gi, i, p)
            sts = [states[i] for i in idx]
            fused = self._fused_update(gi, group) if self._wants_fused(group, ps) else None
            if fused is not None:
                # One compiled program for the whole group, the parameters and the state
                # donated: the new values are written over the old ones in place (fused,
                # cache-blocked kernels); lr and the hyperparameters seen changing are
                # arguments, so schedulers don't retrace.
                for i, p in zip(idx, ps):
                    _check_writeable(p, i)
                fn, operands = fused
                new_ps, sts = fn(operands, gs, sts, ps)
                for i, p, q, st in zip(idx, ps, new_ps, sts):
                    states[i] = st
                    if q is not p:  # not written in place (small, or not donatable)
                        _assign(p, q)
                continue
            tx = self._transform_for(group)
            for i, g, st, p in zip(idx, gs, sts, ps):
                u, st = tx.update(g, st, p)
                states[i] = st
                _add_in_place(p, u, i)

    def _init_state(self, tx: GradientTransformation, gi: int, i: int, p: Any) -> Any:
        """A parameter's fresh chain state; entries of the algorithm's assigned through
        ``state[p]`` before its first step (a preset momentum buffer) are used, as PyTorch's
        algorithms read them from ``state[p]``."""
        st = tx.init(p)
        extra = self._extras().get((gi, i))
        if extra:
            known = set(_merge(st))
            preset = {k: extra.pop(k) for k in list(extra) if k in known}
            if preset:
                st = _split(st, preset, p)
        return st

    def _follow_layout(self, gi: int, group: dict[str, Any], states: list[Any]) -> None:
        """Re-lay the group's state out when a hyperparameter change added or removed a
        transformation of its chain (weight decay or momentum turned on, ``maximize``
        toggled): PyTorch's algorithms read their state by name, so the step counts and
        moments carry over and a newly needed buffer starts as PyTorch's would."""
        layouts = self.__dict__.setdefault("_layouts", {})
        layout = _state_layout(group)
        known = layouts.get(gi)
        if known is not None and known != layout:
            tx = self._transform_for(group)
            params = group["params"]
            for i, st in enumerate(states):
                if st is not None:
                    states[i] = _split(tx.init(params[i]), _merge(st), params[i])
        layouts[gi] = layout

    #: below this many elements per group, the eager loop is used by default (no compile)
    _FUSED_MIN_SIZE = 1 << 16

    def _wants_fused(self, group: dict[str, Any], ps: list[Any]) -> bool:
        foreach = group.get("foreach")
        if foreach is None:
            return (self._compiled_by_default(group)
                    and sum(p.size for p in ps) >= self._FUSED_MIN_SIZE)
        return bool(foreach)

    def _compiled_by_default(self, group: dict[str, Any]) -> bool:
        """Whether ``foreach=None`` compiles this group's step (when big enough)."""
        return True

    def _fused_update(self, gi: int,
                      group: dict[str, Any]) -> tuple[_FusedGroupStep, list[Any]] | None:
        """The compiled update of a whole group and its operands (None: use the eager loop).

        ``lr`` and every float hyperparameter seen changing between steps (OneCycleLR's or
        CyclicLR's momentum and betas, a user's weight-decay schedule) are operands of the
        program, not constants baked into it: a schedule changing them every step runs one
        program. A zero stays a constant (it turns a pass or a state buffer off, as
        ``momentum=0`` does), so the program is keyed on which of them are zero."""
        if getattr(self, "_fused_off", False):
            return None
        varying = self.__dict__.setdefault("_fused_varying", {"lr"})
        last = self.__dict__.setdefault("_fused_last", {})
        hp = {k: v for k, v in group.items() if k not in _NOT_HYPERPARAMETERS}
        before = last.get(gi)
        if before is not None:
            for k, v in hp.items():
                if k not in varying and _is_float_hparam(v) and _is_float_hparam(
                        before.get(k)) and not _same_hparam(v, before[k]):
                    varying.add(k)
        last[gi] = hp
        names = sorted(k for k in varying if k in hp)
        operands: list[Any] = []
        signature = [_hparam_signature(hp[k], operands) for k in names]
        key = (tuple((k, v) for k, v in hp.items() if k not in varying),
               tuple(zip(names, signature)))
        cache = self.__dict__.setdefault("_fused_cache", {})
        try:
            fn = cache.get(key)
        except TypeError:  # an unhashable hyperparameter
            return None
        if fn is None:
            if len(cache) >= 8:  # non-float hyperparameters keep changing: retracing each
                self._fused_off = True  # step would cost more than the loop
                return None
            static = {k: v for k, v in hp.items() if k not in varying}

            def make_tx(*xs: Any) -> GradientTransformation:
                it = iter(xs)
                return self._transform({**static, **{
                    k: _fill_hparam(sig, it) for k, sig in zip(names, signature)}})

            fn = cache[key] = _FusedGroupStep(make_tx)
        return fn, operands

    def _device_grad(self, p: Any, g: Any) -> Any:
        if device_of(g) is None:  # a Python scalar or a list
            return xp_for(p).asarray(g, dtype=p.dtype)
        return g

    def _params(self) -> list[Any]:
        return [p for g in self.param_groups for p in g["params"]]

    def _warn_unfrozen(self, grads: Any) -> None:
        """Warn once when parameters frozen as this optimizer was built from
        ``model.parameters()`` (so it does not hold them) have been unfrozen since and get
        gradients: PyTorch's optimizer, which held them all along, would now update them."""
        skipped = self.__dict__.get("_frozen_at_build")
        if not skipped or not isinstance(grads, Module):
            return
        thawed = [e for e in skipped if e[2] not in e[1].__dict__["_frozen"]]
        if not thawed:  # the usual case, checked every step: still all frozen
            return
        held = {id(p) for p in self._params()}
        back = [f"{prefix}.{name}" if prefix else name for prefix, mod, name in thawed
                if id(mod.__dict__["_parameters"].get(name)) not in held]
        if not back:  # added since (add_param_group): nothing left to watch for those
            gone = {id(t) for t in thawed}
            self._frozen_at_build = [e for e in skipped if id(e) not in gone]
            return
        self._frozen_at_build = []  # once
        warnings.warn(
            f"{type(self).__name__}.step: parameters unfrozen since this optimizer was built "
            f"from module.parameters() are not updated: {', '.join(back[:4])}"
            f"{', ...' if len(back) > 4 else ''} ({len(back)} in all). They were frozen "
            "then, and parameters() yields only the trainable ones (PyTorch's yields frozen "
            "ones too, so its optimizer would update them now): add them, e.g. "
            "opt.add_param_group({'params': model.backbone.parameters(), 'lr': ...}) (or "
            "ignore this if another optimizer updates them)",
            UserWarning, stacklevel=4)

    def _align_grads(self, grads: Any) -> list[Any]:
        self._warn_unfrozen(grads)
        params = self._params()
        n = len(params)
        flat = self._align_grad_leaves(grads, params, n)
        unused = no_grad_leaves(grads)
        if unused:
            # parameters the loss does not depend on (nn.grad's symbolic zeros): PyTorch's
            # p.grad is None, and its optimizers skip them (no step, decay or state)
            leaves = tree_util.tree_leaves(grads)
            ids = {id(leaves[i]) for i in unused if i < len(leaves)}
            flat = [None if g is not None and id(g) in ids else g for g in flat]
        return flat

    def _align_grad_leaves(self, grads: Any, params: list[Any], n: int) -> list[Any]:
        if is_array(grads) and n == 1:
            grads = [grads]
        by_name = None
        if isinstance(grads, Module):
            by_name = self._grads_by_name(grads)
            if by_name is None:
                by_name = self._grads_by_source(grads)
        elif isinstance(grads, dict):
            by_name = self._grads_by_key(grads)
        if isinstance(grads, list | tuple) and len(grads) == n and all(
            g is None or is_array(g) for g in grads
        ):
            flat = list(grads)
        elif by_name is not None:
            flat = by_name
        else:
            flat = tree_util.tree_leaves(grads)
            if len(flat) != n and isinstance(grads, Module):
                flat = self._module_grads(grads) or flat
            if len(flat) != n:
                raise ValueError(
                    f"{type(self).__name__}.step: got {len(flat)} gradient leaves for {n} "
                    "parameters; pass a list aligned with the parameters (None to skip one) or "
                    "a pytree whose leaves align with them (e.g. the Module-shaped gradients of "
                    "funcgrad_nn.grad)"
                )
        for i, (p, g) in enumerate(zip(params, flat)):
            if g is not None and getattr(g, "shape", None) != p.shape:
                hint = ("; the parameters are not in the module's parameters() order (param "
                        "groups built from a dict or sorted names?): build the groups from "
                        "(name, array) pairs of named_parameters(), which step() matches by "
                        "name, or pass a list in the optimizer's order, e.g. "
                        "named = dict(grads.named_parameters()); "
                        "opt.step([named[n] for n in names])"
                        if isinstance(grads, Module) else "")
                raise ValueError(
                    f"{type(self).__name__}.step: gradient {i} has shape "
                    f"{getattr(g, 'shape', type(g).__name__)}, parameter {i} has shape "
                    f"{p.shape}{hint}"
                )
        return flat

    def _grads_by_key(self, grads: dict[Any, Any]) -> list[Any] | None:
        """A dict of gradients matched by key to parameters given as ``(name, array)`` pairs
        or as a dict's ``.values()`` (None where a group's keys are unknown, or the dict
        lacks one of them)."""
        known = self.__dict__.get("_group_keys", {})
        keys: list[Any] = []
        for gi, group in enumerate(self.param_groups):
            # the group's current names (a loaded state dict's replace them, as PyTorch's)
            group_keys = group.get("param_names", known.get(gi))
            if group_keys is None:
                return None
            keys.extend(group_keys)
        if len(set(keys)) != len(keys) or not all(k in grads for k in keys):
            return None
        return [grads[k] for k in keys]

    def _grads_by_name(self, grads: Module) -> list[Any] | None:
        """A Module-shaped gradient matched by name to parameters given as ``(name, array)``
        pairs of the same module's ``named_parameters()``, whatever the groups' order (None
        where the optimizer has no names, or names the module does not have)."""
        if not all("param_names" in g for g in self.param_groups):
            return None
        named: dict[str, Any] = {}
        for prefix, mod in grads.named_modules(remove_duplicate=False):
            for name, g in mod.__dict__["_parameters"].items():
                named.setdefault(f"{prefix}.{name}" if prefix else name,
                                 None if name in mod.__dict__["_frozen"] else g)
        names = [name for g in self.param_groups for name in g["param_names"]]
        if not all(name in named for name in names):
            return None
        return [named[name] for name in names]

    def _grads_by_source(self, grads: Module) -> list[Any] | None:
        """A Module-shaped gradient matched to parameters given as ``module.parameters()``
        (of the model or of its submodules, in any group order, e.g. a backbone's group added
        when unfreezing it), or as plain arrays held by the model (matched by identity, as
        PyTorch matches each parameter's ``.grad``): each parameter is read at the path of
        the module it came from (None where frozen), the paths found once per gradient class
        and group list."""
        cached = self.__dict__.get("_source_paths")
        if cached is None or cached[0] is not type(grads):
            paths = None
            if self._roots and all(r is not None for r in self._roots):
                paths = self._source_paths_in(grads)
            if paths is None:
                paths = self._identity_paths_in(grads)
            if paths is None:
                return None
            cached = self._source_paths = (type(grads), paths)
        flat: list[Any] = []
        for path, name in cached[1]:
            try:
                gmod = grads.get_submodule(path)
            except AttributeError:
                self._source_paths = None  # another structure: search again next time
                return None
            d = gmod.__dict__
            if name not in d["_parameters"]:
                self._source_paths = None
                return None
            flat.append(None if name in d["_frozen"] else d["_parameters"][name])
        return flat

    def _source_paths_in(self, grads: Module) -> list[tuple[str, str]] | None:
        """``(submodule path, attribute)`` in ``grads`` of every parameter: each group's
        module is found by its layout (unique, or None)."""
        subs = list(grads.named_modules(remove_duplicate=False))
        out: list[tuple[str, str]] = []
        for root, sources in zip(self._roots, self._sources):
            want = _layout(root)
            if type(grads) is type(root) and _layout(grads) == want:
                found = [""]
            else:
                found = [path for path, m in subs if type(m) is type(root)
                         and _layout(m) == want and _shapes_fit(root, m)]
            if len(found) != 1:
                return None
            where: dict[int, str] = {}
            for path, m in root.named_modules(remove_duplicate=False):
                where.setdefault(id(m), path)
            for mod, name in sources:
                path = where.get(id(mod))
                if path is None:
                    return None
                out.append((".".join(p for p in (found[0], path) if p), name))
        return out

    def _identity_paths_in(self, grads: Module) -> list[tuple[str, str]] | None:
        """``(submodule path, attribute)`` in ``grads`` of every parameter, found by the
        arrays' identity in the live model that ``grads`` mirrors (a module of its class and
        layout holding every parameter of this optimizer); None where no such model holds
        them all. Raises where two such models would place them differently."""
        params = self._params()
        want_ids = {id(p) for p in params}
        layout = None
        found: list[list[tuple[str, str]]] = []
        for model in list(_LIVE_MODULES.values()):
            if type(model) is not type(grads):
                continue
            where: dict[int, tuple[str, str]] = {}
            for path, mod in model.named_modules(remove_duplicate=False):
                for name, value in mod.__dict__["_parameters"].items():
                    if id(value) in want_ids:
                        where.setdefault(id(value), (path, name))  # a tied array: first name
            if len(where) != len(want_ids):
                continue
            if layout is None:
                layout = _layout(grads)
            if _layout(model) != layout or not _shapes_fit(model, grads):
                continue
            paths = [where[id(p)] for p in params]
            if paths not in found:
                found.append(paths)
        if len(found) > 1:
            raise ValueError(
                f"{type(self).__name__}.step: the optimizer's parameters sit at different "
                f"places in {len(found)} live {type(grads).__name__} modules shaped like the "
                "gradient, so the gradient cannot be matched to them by identity; pass a list "
                "of gradients in the optimizer's order, or build the optimizer from "
                "named_parameters()")
        return found[0] if found else None

    def _module_grads(self, grads: Module) -> list[Any] | None:
        """The gradients of a Module-shaped ``grads`` whose leaves do not line up with the
        parameters one to one, aligned with them (None: skipped), or None where that is
        ambiguous.

        Two cases PyTorch code meets: the gradient of a whole module from plain
        ``funcgrad.grad``/``vjp`` (its leaves include the buffers and frozen parameters: the
        trainable parameters' entries are taken), and parameters frozen after the optimizer
        was built (``requires_grad_(False)``: they get no gradient, so they are skipped, as
        PyTorch skips a parameter whose ``.grad`` is None)."""
        trainable = [g for _, _, _, g in grads._members(
            "_parameters", "", True, lambda m, name: name not in m._frozen, False)]
        n = len(self._params())
        if len(trainable) == n:
            return trainable
        sources = [src for group in self._sources for src in group]
        live = [i for i, src in enumerate(sources)
                if src is None or src[1] not in src[0].__dict__["_frozen"]]
        if len(live) == n or len(trainable) != len(live):
            return None
        flat: list[Any] = [None] * n
        for i, g in zip(live, trainable):
            flat[i] = g
        return flat

    def _follow_modules(self) -> None:
        """Adopt the arrays the source modules hold now (after ``to()``/``double()``)."""
        for gi, group in enumerate(self.param_groups):
            params = group["params"]
            for i, src in enumerate(self._sources[gi]):
                if src is None:
                    continue
                mod, name = src
                cur = mod.__dict__["_parameters"].get(name)
                if cur is None or cur is params[i]:
                    continue
                self._states[gi][i] = _moved_state(self._states[gi][i], params[i], cur,
                                                   f"{type(mod).__name__}.{name}")
                params[i] = cur

    # -- state ---------------------------------------------------------------------------
    @property
    def state(self) -> _StateView:
        """Per-parameter state under PyTorch's names, looked up by the parameter array:
        ``opt.state[w]["exp_avg"]`` (the live state arrays). As PyTorch's ``state`` (a
        ``defaultdict(dict)``) it is writable: an algorithm's entry assigned replaces that
        state (``opt.state[w]["momentum_buffer"] = ...``), any other key is kept for the
        parameter (a custom optimizer's or a wrapper's own state, e.g. SAM's saved weights)
        and saved by :meth:`state_dict`; assigning ``opt.state = {}`` (PyTorch's
        ``defaultdict(dict)``) clears every parameter's state.

        >>> import numpy as np
        >>> w = np.zeros(1)
        >>> opt = SGD([w], lr=0.1)
        >>> opt.state[w]["seen"] = 1
        >>> opt.state[w]["seen"] += 1
        >>> opt.state_dict()["state"]
        {0: {'seen': 2}}
        """
        return _StateView(self)

    @state.setter
    def state(self, value: Any) -> None:
        for states in self._states:
            states[:] = [None] * len(states)
        self.__dict__["_extra_state"] = {}
        for p, entries in dict(value).items():
            self.state[p].update(entries)

    def _extras(self) -> dict[tuple[int, int], dict[str, Any]]:
        # Per (group, position): state entries that are not the algorithm's (PyTorch keeps
        # whatever a custom optimizer or a wrapper stores in state[p]).
        return self.__dict__.setdefault("_extra_state", {})

    def _position(self, param: Any) -> tuple[int, int] | None:
        for gi, group in enumerate(self.param_groups):
            for i, p in enumerate(group["params"]):
                if p is param:
                    return gi, i
        return None

    def _merged_at(self, gi: int, i: int) -> dict[str, Any]:
        st = self._states[gi][i]
        merged = _merge(st) if st is not None else {}
        extra = self._extras().get((gi, i))
        if extra:
            merged.update(extra)
        return merged

    def _items(self) -> Iterable[tuple[Any, dict[str, Any]]]:
        for gi, group in enumerate(self.param_groups):
            for i, p in enumerate(group["params"]):
                merged = self._merged_at(gi, i)
                if merged:
                    yield p, merged

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
        self._run_state_hooks("state_dict_pre")
        groups, state, index = [], {}, 0
        for group, states in zip(self.param_groups, self._states):
            packed = {k: copy.deepcopy(v) for k, v in group.items() if k != "params"}
            packed["params"] = list(range(index, index + len(group["params"])))
            for i in range(len(states)):
                merged = self._merged_at(len(groups), i)
                if merged:
                    state[index] = {k: _copy(v) for k, v in merged.items()}
                index += 1
            groups.append(packed)
        return self._run_state_hooks("state_dict_post", {"state": state, "param_groups": groups})

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a :meth:`state_dict` (ours or PyTorch's, converted to arrays): hyperparameters
        and per-parameter state, copied onto each parameter's device and dtype."""
        state_dict = self._run_state_hooks("load_state_dict_pre", state_dict)
        self._load_state(state_dict)
        self._run_state_hooks("load_state_dict_post")

    def _load_state(self, state_dict: dict[str, Any]) -> None:
        groups = self.param_groups
        saved = state_dict["param_groups"]
        if len(groups) != len(saved):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved)):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match the size of "
                "optimizer's group"
            )
        saved_state = {int(k): v for k, v in state_dict["state"].items()}
        new_groups, new_states = [], []
        extras: dict[tuple[int, int], dict[str, Any]] = {}
        for g, s in zip(groups, saved):
            ng = {k: copy.deepcopy(v) for k, v in s.items() if k != "params"}
            # PyTorch's __setstate__: a state dict from an older release (or from another
            # optimizer class) lacks the options added since; they take these values (not
            # this optimizer's own), and AdamW's groups are always decoupled.
            for k, v in self._LOADED_GROUP_DEFAULTS.items():
                ng.setdefault(k, v)
            ng.update(self._LOADED_GROUP_FORCED)
            ng["params"] = g["params"]
            self._validate_group(ng)
            tx = self._transform_for(ng)
            sts = []
            for i, (p, idx) in enumerate(zip(g["params"], s["params"])):
                st = saved_state.get(int(idx))
                template = tx.init(p)
                known = _merge(template)
                sts.append(None if not st or not (set(st) & set(known))
                           else _split(template, st, p))
                other = {k: _extra_value(v, p) for k, v in (st or {}).items()
                         if k not in known}
                if other:
                    extras[len(new_groups), i] = other
            new_groups.append(ng)
            new_states.append(sts)
        self.param_groups, self._states = new_groups, new_states
        self.__dict__["_extra_state"] = extras
        self._layouts = {gi: _state_layout(g) for gi, g in enumerate(new_groups)}


_STATE_DICT_HOOKS = ("state_dict_pre", "state_dict_post", "load_state_dict_pre",
                     "load_state_dict_post")


def _param_names(params: list[Any]) -> list[str] | None:
    """The names of ``(name, array)`` pairs (``model.named_parameters()``), as PyTorch
    records them under ``"param_names"``; None for plain arrays."""
    named = [isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str) for p in params]
    if not any(named):
        return None
    if not all(named):
        raise ValueError("all optimizer params should be with/without names. Some param names "
                         "are missing")
    return [name for name, _ in params]


def _is_float_hparam(v: Any) -> bool:
    """A float hyperparameter (or a 0-d float array, PyTorch's tensor lr), or a tuple of them
    with at least one float (``betas``, ``etas``): what a fused step may take as an operand.
    Ints and bools stay constants (``ns_steps`` is a loop count, ``amsgrad`` a switch)."""
    if isinstance(v, tuple):
        return any(_is_float_hparam(x) for x in v) and all(
            x is None or isinstance(x, int | float) or _is_float_hparam(x) for x in v)
    if isinstance(v, bool):
        return False
    return isinstance(v, float) or (is_array(v) and np.ndim(v) == 0
                                    and np.dtype(v.dtype).kind == "f")


def _same_hparam(a: Any, b: Any) -> bool:
    try:
        return bool(np.all(a == b)) and type(a) is type(b)
    except (TypeError, ValueError):
        return False


def _state_layout(group: dict[str, Any]) -> tuple[Any, ...]:
    """What decides the layout of a group's chain state: its switches and which of its
    numbers are zero (a zero hyperparameter drops a transformation or a buffer)."""

    def sig(v: Any) -> Any:
        if isinstance(v, tuple):
            return tuple(sig(x) for x in v)
        if isinstance(v, bool) or v is None or isinstance(v, str):
            return v
        if isinstance(v, int | float) or (is_array(v) and np.ndim(v) == 0):
            return bool(v != 0)
        return type(v).__name__

    return tuple((k, sig(v)) for k, v in group.items() if k not in _NOT_HYPERPARAMETERS)


class _Operand:
    """In a hyperparameter's signature: a value passed to the fused program as an operand."""


_OPERAND = _Operand()


def _hparam_signature(v: Any, operands: list[Any]) -> Any:
    """A varying hyperparameter's part of the fused program's key, appending the values that
    become operands to ``operands``: tuples element by element; zeros, ints, bools and None
    stay constants (a zero turns a pass or a state buffer off: code branches on it)."""
    if isinstance(v, tuple):
        return tuple(_hparam_signature(x, operands) for x in v)
    if _is_float_hparam(v) and (is_array(v) or v != 0):
        operands.append(v)
        return _OPERAND
    return v if not is_array(v) else float(v)


def _fill_hparam(signature: Any, operands: Any) -> Any:
    """A hyperparameter rebuilt from its signature, the operands (tracers) taken in order."""
    if isinstance(signature, tuple):
        return tuple(_fill_hparam(x, operands) for x in signature)
    return next(operands) if signature is _OPERAND else signature


class _FusedGroupStep:
    """One parameter group's step as one compiled program over flat arrays:
    ``(*hyperparameters, *grads, *state_leaves, *params) -> (*new_params,
    *new_state_leaves)`` with the state leaves and parameters donated, so that the compiled code writes the new values
    over the old ones (in place, no fresh buffers) where it can. The update is the
    functional core's (``make_tx(*hyperparameters).update``, then ``apply_updates``): one copy of the
    formulas. Flat positional arguments keep ``jit``'s call on its fast path (no pytree
    flattening of the arguments); one program per state structure (SGD's first step has no
    momentum buffer yet)."""

    def __init__(self, make_tx: Callable[[Any], GradientTransformation]) -> None:
        self._make_tx = make_tx
        self._programs: dict[Any, tuple[Any, list[Any]]] = {}
        # The states this returned last, with their leaves: the next step's input, unchanged
        # (state trees are rebuilt, never mutated), need not be flattened again.
        self._last: tuple[list[Any], list[Any], Any] = ([], [], None)

    def __call__(self, hps: list[Any], gs: list[Any], sts: list[Any],
                 ps: list[Any]) -> tuple[list[Any], list[Any]]:
        last, leaves, treedef = self._last
        if len(last) != len(sts) or any(a is not b for a, b in zip(last, sts)):
            leaves, treedef = tree_util.tree_flatten(sts)
        n = len(ps)
        key = (len(hps), n, treedef)
        prog = self._programs.get(key)
        if prog is None:
            prog = self._programs[key] = self._build(len(hps), n, treedef, len(leaves))
        fn, out_def = prog
        outs = fn(*hps, *gs, *leaves, *ps)
        new_ps, new_leaves = outs[:n], list(outs[n:])
        # A state leaf that is a gradient or parameter itself (SGD's first momentum buffer
        # is the gradient) is copied: state buffers are overwritten at the next step, and
        # must not be the caller's arrays.
        theirs = {id(x) for x in (*gs, *ps)}
        for j, x in enumerate(new_leaves):
            if id(x) in theirs:
                new_leaves[j] = x.copy()
        new_sts = out_def[0].unflatten(new_leaves)
        self._last = (new_sts, new_leaves, out_def[0])
        return list(new_ps), new_sts

    def _build(self, m: int, n: int, treedef: Any, k: int) -> tuple[Any, list[Any]]:
        out_def: list[Any] = []
        make_tx = self._make_tx

        def group_step(*xs: Any) -> tuple[Any, ...]:
            hps, xs = xs[:m], xs[m:]
            gs, ps = xs[:n], xs[n + k:]
            sts = treedef.unflatten(xs[n:n + k])
            tx = make_tx(*hps)
            new_ps, new = [], []
            for g, st, p in zip(gs, sts, ps):
                u, st = tx.update(g, st, p)
                new_ps.append(apply_updates(p, u))
                new.append(st)
            new_leaves, d = tree_util.tree_flatten(new)
            out_def[:] = [d]
            return (*new_ps, *new_leaves)

        donate = tuple(range(m + n, m + 2 * n + k))
        return funcgrad.jit(group_step, donate_argnums=donate), out_def


_DICT_VALUES = type({}.values())


class _Keyed:
    """A group's arrays with the keys of the dict whose ``.values()`` they came from."""

    def __init__(self, arrays: list[Any], keys: list[Any]) -> None:
        self.arrays, self.keys = arrays, keys


class _Sourced:
    """A parameter list with the (module, name) each array came from, and the module whose
    ``parameters()`` gave them."""

    def __init__(self, arrays: list[Any], sources: list[Any], root: Any = None) -> None:
        self.arrays, self.sources, self.root = arrays, sources, root


def _layout(mod: Module) -> list[tuple[str, type, frozenset[str], frozenset[str]]]:
    """A module tree's layout: each submodule's path, class, parameter names and frozen
    ones (a gradient module has the layout of its model at the time)."""
    return [(path, type(m), frozenset(m.__dict__["_parameters"]), frozenset(m.__dict__["_frozen"]))
            for path, m in mod.named_modules(remove_duplicate=False)]


def _shapes_fit(root: Module, grads: Module) -> bool:
    """Whether every gradient ``grads`` holds has the shape of ``root``'s parameter there."""
    live = dict(root.named_parameters(remove_duplicate=False, include_frozen=True))
    return all(getattr(g, "shape", None) == getattr(live.get(name), "shape", None)
               for name, g in grads.named_parameters(remove_duplicate=False))


class _StateView:
    """``optimizer.state``: PyTorch's ``state[param]`` lookup over the chain states."""

    def __init__(self, opt: Optimizer) -> None:
        self._opt = opt

    def __getitem__(self, param: Any) -> _ParamState:
        at = self._opt._position(param)
        if at is None:
            raise KeyError("not a parameter of this optimizer")
        return _ParamState(self._opt, *at)

    def __setitem__(self, param: Any, value: Any) -> None:
        entry = self[param]
        entry.clear()
        entry.update(value)

    def __contains__(self, param: Any) -> bool:
        return any(p is param for p, _ in self._opt._items())

    def __len__(self) -> int:
        return sum(1 for _ in self._opt._items())

    def values(self) -> list[_ParamState]:
        return [m for _, m in self.items()]

    def items(self) -> list[tuple[Any, _ParamState]]:
        live = {id(p) for p, _ in self._opt._items()}
        return [(p, _ParamState(self._opt, gi, i))
                for gi, group in enumerate(self._opt.param_groups)
                for i, p in enumerate(group["params"]) if id(p) in live]

    def keys(self) -> list[Any]:
        return [p for p, _ in self.items()]

    def get(self, param: Any, default: Any = None) -> Any:
        """``state[param]`` if the parameter has state, else ``default`` (dict's ``get``)."""
        return self[param] if param in self else default

    def clear(self) -> None:
        """Drop every parameter's state (PyTorch's ``optimizer.state.clear()``)."""
        self._opt.state = {}

    def __iter__(self) -> Any:
        return (p for p, _ in self._opt._items())


class _ParamState(collections.abc.MutableMapping):
    """``optimizer.state[p]``: one parameter's state, live. The algorithm's entries read and
    replace its chain state; other keys are kept beside it (PyTorch's ``state[p]`` is a plain
    dict that custom optimizers and wrappers fill)."""

    def __init__(self, opt: Optimizer, gi: int, i: int) -> None:
        self._opt, self._at = opt, (gi, i)

    def _chain(self) -> dict[str, Any]:
        st = self._opt._states[self._at[0]][self._at[1]]
        return _merge(st) if st is not None else {}

    def __getitem__(self, key: str) -> Any:
        extra = self._opt._extras().get(self._at, {})
        if key in extra:
            return extra[key]
        return self._chain()[key]

    def __setitem__(self, key: str, value: Any) -> None:
        gi, i = self._at
        st = self._opt._states[gi][i]
        if st is not None and key in _merge(st):
            self._opt._states[gi][i] = _replaced(st, key, value)
        else:
            self._opt._extras().setdefault(self._at, {})[key] = value

    def __delitem__(self, key: str) -> None:
        extra = self._opt._extras().get(self._at, {})
        if key in extra:
            del extra[key]
        elif key in self._chain():
            # the algorithm's state is dropped whole: it starts afresh at the next step
            self._opt._states[self._at[0]][self._at[1]] = None
        else:
            raise KeyError(key)

    def __iter__(self) -> Any:
        return iter(self._opt._merged_at(*self._at))

    def __len__(self) -> int:
        return len(self._opt._merged_at(*self._at))

    def __repr__(self) -> str:
        return repr(self._opt._merged_at(*self._at))


def _replaced(st: Any, key: str, value: Any) -> Any:
    """The chain state ``st`` with its entry ``key`` replaced by ``value``."""
    if isinstance(st, dict):
        return {**st, key: value} if key in st else st
    if isinstance(st, tuple):
        items = [_replaced(t, key, value) for t in st]
        return type(st)(*items) if hasattr(st, "_fields") else tuple(items)
    return st


def _is_closure(x: Any) -> bool:
    # A function is a pytree leaf; a Module of gradients is callable but a pytree node.
    # Flattened one level only (its children count as leaves): flattening a whole gradient
    # module here cost as much as a small model's update itself.
    if not callable(x) or is_array(x) or isinstance(x, Module):
        return False
    leaves = tree_util.tree_leaves(x, is_leaf=lambda y: y is not x)
    return len(leaves) == 1 and leaves[0] is x


_TRACED_STEP = (
    "Optimizer.step updates parameter arrays in place, which cannot be recorded inside a "
    "transformation (jit, grad, vmap). Jit the loss and gradient (e.g. "
    "funcgrad_nn.jit(funcgrad_nn.value_and_grad(loss))) and call step outside, or use the "
    "functional form opt.transform() with apply_updates inside jit.")


def _add_in_place(p: Any, u: Any, i: int) -> None:
    if is_tracer(u) or is_tracer(p):
        raise TypeError(_TRACED_STEP)
    _check_writeable(p, i)
    p += u


def _assign(p: Any, new: Any) -> None:
    if is_tracer(new):
        raise TypeError(_TRACED_STEP)
    p[...] = new


def _check_writeable(p: Any, i: int) -> None:
    if is_tracer(p):
        raise TypeError(_TRACED_STEP)
    if not is_writeable(p):
        raise ValueError(
            f"optimizer parameter {i} is read-only: its module replaced it (model.to(), "
            ".double(), .float(), ...) after the optimizer was built from a list of its arrays. "
            "Build the optimizer from model.parameters() (it follows the module) or after "
            "moving/casting the model."
        )


def _merge(st: Any) -> dict[str, Any]:
    """The per-parameter dicts of a chain state, merged: PyTorch's per-parameter state."""
    out: dict[str, Any] = {}
    if isinstance(st, dict):
        out.update(st)
    elif isinstance(st, tuple):
        for s in st:
            out.update(_merge(s))
    return out


def _split(template: Any, saved: dict[str, Any], p: Any) -> Any:
    """Fill a fresh chain state (``template``) from a merged PyTorch-style dict."""
    if isinstance(template, dict):
        return {k: (_cast(saved[k], v, p) if k in saved else v) for k, v in template.items()}
    if isinstance(template, tuple):
        items = [_split(t, saved, p) for t in template]
        return type(template)(*items) if hasattr(template, "_fields") else tuple(items)
    return template


def _cast(value: Any, like: Any, p: Any) -> Any:
    if value is None:
        return None
    if hasattr(value, "detach") and hasattr(value, "cpu"):  # a torch tensor
        value = value.detach().cpu().numpy()
    target = like if like is not None else p
    if not (is_array(value) or isinstance(value, int | float | np.generic)):
        return copy.deepcopy(value)
    if device_of(value) not in (None, "cpu"):
        value = to_numpy(value)  # one explicit host hop, then onto the target's device
    host = np.array(value, dtype=target.dtype, copy=True).reshape(
        target.shape if like is not None else np.shape(value))
    return device_put(host, device_of(target)) if device_of(target) != "cpu" else host


def _extra_value(value: Any, p: Any) -> Any:
    """A loaded state entry of no algorithm's, as PyTorch's load_state_dict places it: any
    array in a floating parameter's dtype (PyTorch's policy casts every tensor but "step"),
    on the parameter's device."""
    if hasattr(value, "detach") and hasattr(value, "cpu"):  # a torch tensor
        value = value.detach().cpu().numpy()
    if not is_array(value):
        return copy.deepcopy(value)
    if np.dtype(p.dtype).kind in "fc":
        return _cast(value, None, p)
    host = np.array(to_numpy(value) if device_of(value) not in (None, "cpu") else value)
    return device_put(host, device_of(p)) if device_of(p) != "cpu" else host


def _copy(v: Any) -> Any:
    return v.copy() if is_array(v) else copy.deepcopy(v)


def _moved_state(state: Any, old: Any, new: Any, where: str) -> Any:
    """The chain state of ``old`` for its replacement ``new`` (same shape and dtype; moved
    to ``new``'s device), or a clear error."""
    if state is None:
        return None
    if new.shape != old.shape or new.dtype != old.dtype:
        raise ValueError(
            f"optimizer: parameter {where} was replaced by an array of shape {new.shape} and "
            f"dtype {new.dtype}, but its optimizer state is for shape {old.shape} and dtype "
            f"{old.dtype}; cast/move the model before building the optimizer (or build a new "
            "one / load_state_dict after casting)")
    dev = device_of(new)
    if dev == device_of(old):
        return state
    return tree_util.tree_map(lambda x: device_put(x, dev) if is_array(x) else x, state)


# -- hyperparameter checks (PyTorch's messages) ------------------------------------------------

def _check(cond: bool, msg: str) -> None:
    if not cond:
        raise ValueError(msg)


def _check_lr(group: dict[str, Any]) -> None:
    lr = group["lr"]
    if not isinstance(lr, int | float) and not (is_array(lr) and np.ndim(lr) == 0):
        raise TypeError(f"lr must be a number, got {type(lr).__name__}")
    _check(0.0 <= lr, f"Invalid learning rate: {lr}")


def _check_lr_eps_wd(group: dict[str, Any]) -> None:
    _check_lr(group)
    if "eps" in group:
        _check(0.0 <= group["eps"], f"Invalid epsilon value: {group['eps']}")
    _check(0.0 <= group["weight_decay"], f"Invalid weight_decay value: {group['weight_decay']}")


def _check_betas(group: dict[str, Any]) -> None:
    b = group["betas"]
    _check(0.0 <= b[0] < 1.0, f"Invalid beta parameter at index 0: {b[0]}")
    _check(0.0 <= b[1] < 1.0, f"Invalid beta parameter at index 1: {b[1]}")


def _with_options(group: dict[str, Any], core: GradientTransformation, *,
                  decoupled: bool = False) -> GradientTransformation:
    """``core`` with PyTorch's options as transforms: ``maximize`` negates the gradient,
    coupled L2 decay adds ``weight_decay * p`` to it, decoupled decay subtracts
    ``lr * weight_decay * p`` from the parameter."""
    parts = []
    if group.get("maximize", False):
        parts.append(scale(-1.0))
    wd = group.get("weight_decay", 0)
    if T.nonzero(wd) and not decoupled:
        parts.append(add_decayed_weights(wd))
    parts.append(core)
    if T.nonzero(wd) and decoupled:
        parts.append(_decoupled_decay(group["lr"], wd))
    return chain(*parts)


def _decoupled_decay(lr: Any, wd: Any) -> GradientTransformation:
    """PyTorch's decoupled weight decay, ``p.mul_(1 - lr * wd)`` before the algorithm's step,
    as an update: ``p * (1 - lr * wd) - p`` (the decayed parameter rounded in its dtype, as
    PyTorch's in-place multiply rounds it, then the exact difference) rather than
    ``-lr * wd * p``, which in float16 moves parameters that PyTorch's rounding leaves put."""

    def update(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        return _tmap(lambda g, p: g + (p * _as_dtype(1 - lr * wd, p) - p), updates,
                     params), state

    return GradientTransformation(lambda params: EmptyState(), update)


# -- the algorithms ----------------------------------------------------------------------------

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

    _LOADED_GROUP_DEFAULTS = dict(nesterov=False, maximize=False, foreach=None,
                                  differentiable=False, fused=False)

    def __init__(
        self, params: Iterable[Any], lr: float = 1e-3, momentum: float = 0,
        dampening: float = 0, weight_decay: float = 0, nesterov: bool = False, *,
        maximize: bool = False, foreach: bool | None = None, differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening,
                        weight_decay=weight_decay, nesterov=nesterov, maximize=maximize,
                        foreach=foreach, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)

    def _validate_group(self, group: dict[str, Any]) -> None:
        _check_lr(group)
        _check(0.0 <= group["momentum"], f"Invalid momentum value: {group['momentum']}")
        _check(0.0 <= group["weight_decay"], f"Invalid weight_decay value: {group['weight_decay']}")
        if group["nesterov"] and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")

    def _compiled_by_default(self, group: dict[str, Any]) -> bool:
        # Without momentum there is no state, and the eager loop's two in-place passes per
        # parameter measured as fast as the compiled kernel plus its call (bench_optim.py).
        return group["momentum"] != 0

    def _transform(self, group: dict[str, Any]) -> GradientTransformation:
        parts = []
        if T.nonzero(group["momentum"]):
            parts.append(T.torch_momentum(group["momentum"], group["dampening"],
                                          group["nesterov"]))
        parts.append(scale(-group["lr"]))
        return _with_options(group, chain(*parts))


class Adam(Optimizer):
    """Adam with PyTorch's formulas (coupled L2 ``weight_decay``, ``amsgrad``, ``maximize``;
    ``decoupled_weight_decay=True`` is AdamW).

    >>> import numpy as np
    >>> w = np.zeros(2)
    >>> Adam([w], lr=0.1).step([np.array([1.0, -3.0])])
    >>> np.round(w, 6)
    array([-0.1,  0.1])
    """

    _LOADED_GROUP_DEFAULTS = dict(amsgrad=False, maximize=False, foreach=None,
                                  capturable=False, differentiable=False,
                                  decoupled_weight_decay=False, fused=None)

    def __init__(
        self, params: Iterable[Any], lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8, weight_decay: float = 0, amsgrad: bool = False, *,
        foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
        differentiable: bool = False, fused: bool | None = None,
        decoupled_weight_decay: bool = False,
    ) -> None:
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        amsgrad=amsgrad, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def _validate_group(self, group: dict[str, Any]) -> None:
        _check_lr_eps_wd(group)
        _check_betas(group)

    def _transform(self, group: dict[str, Any]) -> GradientTransformation:
        b1, b2 = group["betas"]
        core = T.torch_adam(group["lr"], b1, b2, group["eps"], group["amsgrad"])
        return _with_options(group, core, decoupled=group.get("decoupled_weight_decay", False))


class AdamW(Adam):
    """Adam with decoupled weight decay (``p *= 1 - lr * weight_decay``), PyTorch's defaults.

    >>> import numpy as np
    >>> w = np.ones(1)
    >>> AdamW([w], lr=0.1, weight_decay=0.5).step([np.zeros(1)])
    >>> w
    array([0.95])
    """

    _LOADED_GROUP_FORCED = {"decoupled_weight_decay": True}

    def __init__(
        self, params: Iterable[Any], lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False, *,
        maximize: bool = False, foreach: bool | None = None, capturable: bool = False,
        differentiable: bool = False, fused: bool | None = None,
    ) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)


class Adamax(Optimizer):
    """Adamax (Adam with the infinity norm), PyTorch's formulas and defaults.

    >>> import numpy as np
    >>> w = np.zeros(1)
    >>> Adamax([w], lr=0.1).step([np.array([2.0])])
    >>> np.round(w, 6)
    array([-0.1])
    """

    _LOADED_GROUP_DEFAULTS = dict(foreach=None, maximize=False, differentiable=False,
                                  capturable=False)

    def __init__(
        self, params: Iterable[Any], lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8, weight_decay: float = 0, foreach: bool | None = None, *,
        maximize: bool = False, differentiable: bool = False, capturable: bool = False,
    ) -> None:
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)

    def _validate_group(self, group: dict[str, Any]) -> None:
        _check_lr_eps_wd(group)
        _check_betas(group)

    def _transform(self, group: dict[str, Any]) -> GradientTransformation:
        b1, b2 = group["betas"]
        return _with_options(group, T.torch_adamax(group["lr"], b1, b2, group["eps"]))


class RMSprop(Optimizer):
    """RMSprop with PyTorch's formulas (``eps`` outside the root, ``centered``, ``momentum``).

    >>> import numpy as np
    >>> w = np.zeros(1)
    >>> RMSprop([w], lr=0.01, alpha=0.0, eps=0.0).step([np.array([5.0])])
    >>> w
    array([-0.01])
    """

    _LOADED_GROUP_DEFAULTS = dict(momentum=0, centered=False, foreach=None, maximize=False,
                                  differentiable=False, capturable=False)

    def __init__(
        self, params: Iterable[Any], lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
        weight_decay: float = 0, momentum: float = 0, centered: bool = False,
        capturable: bool = False, foreach: bool | None = None, maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        defaults = dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                        momentum=momentum, centered=centered, capturable=capturable,
                        foreach=foreach, maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def _validate_group(self, group: dict[str, Any]) -> None:
        _check_lr_eps_wd(group)
        _check(0.0 <= group["momentum"], f"Invalid momentum value: {group['momentum']}")
        _check(0.0 <= group["alpha"], f"Invalid alpha value: {group['alpha']}")

    def _transform(self, group: dict[str, Any]) -> GradientTransformation:
        return _with_options(group, T.torch_rmsprop(
            group["lr"], group["alpha"], group["eps"], group["momentum"], group["centered"]))


class Adagrad(Optimizer):
    """Adagrad with PyTorch's formulas (``lr_decay``, ``initial_accumulator_value``); the
    state exists from construction, as in PyTorch.

    >>> import numpy as np
    >>> w = np.zeros(1)
    >>> Adagrad([w], lr=0.1).step([np.array([4.0])])
    >>> np.round(w, 6)
    array([-0.1])
    """

    _LOADED_GROUP_DEFAULTS = dict(foreach=None, maximize=False, differentiable=False,
                                  fused=None)

    _eager_state = True

    def __init__(
        self, params: Iterable[Any], lr: float = 1e-2, lr_decay: float = 0,
        weight_decay: float = 0, initial_accumulator_value: float = 0, eps: float = 1e-10,
        foreach: bool | None = None, *, maximize: bool = False, differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)

    def _validate_group(self, group: dict[str, Any]) -> None:
        _check_lr(group)
        _check(0.0 <= group["lr_decay"], f"Invalid lr_decay value: {group['lr_decay']}")
        _check(0.0 <= group["weight_decay"], f"Invalid weight_decay value: {group['weight_decay']}")
        v = group["initial_accumulator_value"]
        _check(0.0 <= v, f"Invalid initial_accumulator_value value: {v}")
        _check(0.0 <= group["eps"], f"Invalid epsilon value: {group['eps']}")

    def _transform(self, group: dict[str, Any]) -> GradientTransformation:
        return _with_options(group, T.torch_adagrad(
            group["lr"], group["lr_decay"], group["eps"], group["initial_accumulator_value"]))


class NAdam(Optimizer):
    """NAdam with PyTorch's formulas (``momentum_decay``, ``decoupled_weight_decay``).

    >>> import numpy as np
    >>> w = np.zeros(1)
    >>> NAdam([w], lr=0.1).step([np.array([1.0])])
    >>> round(float(w[0]), 4)
    -0.1056
    """

    _LOADED_GROUP_DEFAULTS = dict(maximize=False, foreach=None, capturable=False,
                                  differentiable=False, decoupled_weight_decay=False)

    def __init__(
        self, params: Iterable[Any], lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8, weight_decay: float = 0, momentum_decay: float = 4e-3,
        decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
        maximize: bool = False, capturable: bool = False, differentiable: bool = False,
    ) -> None:
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, foreach=foreach,
                        maximize=maximize, capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def _validate_group(self, group: dict[str, Any]) -> None:
        _check_lr_eps_wd(group)
        _check_betas(group)
        md = group["momentum_decay"]
        _check(0.0 <= md, f"Invalid momentum_decay value: {md}")

    def _transform(self, group: dict[str, Any]) -> GradientTransformation:
        b1, b2 = group["betas"]
        core = T.torch_nadam(group["lr"], b1, b2, group["eps"], group["momentum_decay"])
        return _with_options(group, core, decoupled=group["decoupled_weight_decay"])


class RAdam(Optimizer):
    """RAdam with PyTorch's formulas (``decoupled_weight_decay``).

    >>> import numpy as np
    >>> w = np.zeros(1)
    >>> RAdam([w], lr=0.1).step([np.array([2.0])])
    >>> w
    array([-0.2])
    """

    _LOADED_GROUP_DEFAULTS = dict(foreach=None, maximize=False, differentiable=False,
                                  decoupled_weight_decay=False, capturable=False)

    def __init__(
        self, params: Iterable[Any], lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8, weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
        foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        decoupled_weight_decay=decoupled_weight_decay, foreach=foreach,
                        maximize=maximize, capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def _validate_group(self, group: dict[str, Any]) -> None:
        _check_lr_eps_wd(group)
        _check_betas(group)

    def _transform(self, group: dict[str, Any]) -> GradientTransformation:
        b1, b2 = group["betas"]
        core = T.torch_radam(group["lr"], b1, b2, group["eps"])
        return _with_options(group, core, decoupled=group["decoupled_weight_decay"])


class Adadelta(Optimizer):
    """Adadelta with PyTorch's formulas and defaults (``lr=1.0``, ``rho=0.9``, ``eps=1e-6``).

    >>> import numpy as np
    >>> w = np.zeros(1)
    >>> Adadelta([w]).step([np.array([1.0])])
    >>> round(float(w[0]), 6)
    -0.003162
    """

    _LOADED_GROUP_DEFAULTS = dict(foreach=None, maximize=False, differentiable=False,
                                  capturable=False)

    def __init__(
        self, params: Iterable[Any], lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6,
        weight_decay: float = 0, foreach: bool | None = None, *, capturable: bool = False,
        maximize: bool = False, differentiable: bool = False,
    ) -> None:
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, foreach=foreach,
                        capturable=capturable, maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def _validate_group(self, group: dict[str, Any]) -> None:
        _check_lr_eps_wd(group)
        _check(0.0 <= group["rho"] <= 1.0, f"Invalid rho value: {group['rho']}")

    def _transform(self, group: dict[str, Any]) -> GradientTransformation:
        return _with_options(group, T.torch_adadelta(group["lr"], group["rho"], group["eps"]))


class ASGD(Optimizer):
    """Averaged SGD with PyTorch's formulas; ``state[p]["ax"]`` is the averaged parameter.

    >>> import numpy as np
    >>> w = np.zeros(1)
    >>> ASGD([w], lr=0.1).step([np.array([1.0])])
    >>> w
    array([-0.1])
    """

    _LOADED_GROUP_DEFAULTS = dict(foreach=None, maximize=False, differentiable=False,
                                  capturable=False)

    def __init__(
        self, params: Iterable[Any], lr: float = 1e-2, lambd: float = 1e-4, alpha: float = 0.75,
        t0: float = 1e6, weight_decay: float = 0, foreach: bool | None = None,
        maximize: bool = False, differentiable: bool = False, capturable: bool = False,
    ) -> None:
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)

    def _validate_group(self, group: dict[str, Any]) -> None:
        _check_lr(group)
        _check(0.0 <= group["weight_decay"], f"Invalid weight_decay value: {group['weight_decay']}")

    def _transform(self, group: dict[str, Any]) -> GradientTransformation:
        return _with_options(group, T.torch_asgd(group["lr"], group["lambd"], group["alpha"],
                                                 group["t0"]))


class Rprop(Optimizer):
    """Resilient backpropagation with PyTorch's formulas (``etas``, ``step_sizes``).

    >>> import numpy as np
    >>> w = np.zeros(2)
    >>> Rprop([w], lr=0.1).step([np.array([3.0, -1.0])])
    >>> w
    array([-0.1,  0.1])
    """

    _LOADED_GROUP_DEFAULTS = dict(foreach=None, maximize=False, differentiable=False,
                                  capturable=False)

    def __init__(
        self, params: Iterable[Any], lr: float = 1e-2, etas: tuple[float, float] = (0.5, 1.2),
        step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
        foreach: bool | None = None, maximize: bool = False, differentiable: bool = False,
    ) -> None:
        defaults = dict(lr=lr, etas=tuple(etas), step_sizes=tuple(step_sizes),
                        capturable=capturable, foreach=foreach, maximize=maximize,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def _validate_group(self, group: dict[str, Any]) -> None:
        _check_lr(group)
        e = group["etas"]
        _check(0.0 < e[0] < 1.0 < e[1], f"Invalid eta values: {e[0]}, {e[1]}")

    def _transform(self, group: dict[str, Any]) -> GradientTransformation:
        return _with_options(group, T.torch_rprop(group["lr"], group["etas"],
                                                  group["step_sizes"]))


class SparseAdam(Optimizer):
    """PyTorch's SparseAdam on dense gradients: moments and parameters change only where
    the gradient is non-zero (the entries a sparse gradient would store).

    >>> import numpy as np
    >>> w = np.zeros(2)
    >>> SparseAdam([w], lr=0.1).step([np.array([0.0, 2.0])])
    >>> np.round(w, 6)
    array([ 0. , -0.1])
    """

    def __init__(
        self, params: Iterable[Any], lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8, maximize: bool = False,
    ) -> None:
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, maximize=maximize)
        super().__init__(params, defaults)
        complex_params = [[gi, pi] for gi, g in enumerate(self.param_groups)
                          for pi, p in enumerate(g["params"]) if p.dtype.kind == "c"]
        if complex_params:
            raise ValueError(f"Complex params at indices {complex_params}: SparseAdam does not "
                             "support complex parameters")

    def _validate_group(self, group: dict[str, Any]) -> None:
        _check_lr(group)
        _check(0.0 < group["eps"], f"Invalid epsilon value: {group['eps']}")
        _check_betas(group)

    def _transform(self, group: dict[str, Any]) -> GradientTransformation:
        b1, b2 = group["betas"]
        return _with_options(group, T.torch_sparse_adam(group["lr"], b1, b2, group["eps"]))


class Adafactor(Optimizer):
    """Adafactor as ``torch.optim.Adafactor`` (factored second moments over the last two
    axes, relative step size, update clipping ``d``, decoupled ``weight_decay``).

    >>> import numpy as np
    >>> w = np.ones((2, 3))
    >>> Adafactor([w], lr=0.01).step([np.ones((2, 3))])
    >>> np.round(w[0], 4)
    array([0.99, 0.99, 0.99])
    """

    _LOADED_GROUP_DEFAULTS = dict(foreach=None)

    def __init__(
        self, params: Iterable[Any], lr: float = 1e-2, beta2_decay: float = -0.8,
        eps: tuple[float | None, float] = (None, 1e-3), d: float = 1.0,
        weight_decay: float = 0.0, *, foreach: bool | None = None, maximize: bool = False,
    ) -> None:
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=tuple(eps), d=d,
                        weight_decay=weight_decay, foreach=foreach, maximize=maximize)
        super().__init__(params, defaults)

    def _validate_group(self, group: dict[str, Any]) -> None:
        lr, b, eps, d, wd = (group[k] for k in ("lr", "beta2_decay", "eps", "d", "weight_decay"))
        _check(0.0 <= lr, f"Learning rate should be >= 0 but is: {lr}")
        _check(0.0 >= b, f"beta2_decay should be <= 0 but is: {b}")
        _check(eps[0] is None or 0.0 <= eps[0], f"epsilon1 should be >= 0 but is: {eps[0]}")
        _check(0.0 <= eps[1], f"epsilon2 should be >= 0 but is: {eps[1]}")
        _check(1.0 <= d, f"Clipping threshold d should be >= 1 but is: {d}")
        _check(0.0 <= wd, f"weight_decay should be >= 0 but is: {wd}")

    def _transform(self, group: dict[str, Any]) -> GradientTransformation:
        core = T.torch_adafactor(group["lr"], group["beta2_decay"], group["eps"], group["d"])
        return _with_options(group, core, decoupled=True)


class Muon(Optimizer):
    """Muon as ``torch.optim.Muon``, for 2-D parameters (hidden layers' weights; optimize
    biases and embeddings with e.g. AdamW): momentum orthogonalized by Newton-Schulz
    iterations in bfloat16, decoupled ``weight_decay``, the step scaled by
    ``sqrt(max(1, rows / cols))`` (``adjust_lr_fn="original"``) or
    ``0.2 * sqrt(max(rows, cols))`` (``"match_rms_adamw"``).

    >>> import numpy as np
    >>> w = np.zeros((2, 2), np.float32)
    >>> Muon([w], lr=0.1, weight_decay=0.0).step([np.eye(2, dtype=np.float32)])
    >>> bool(np.allclose(w, -0.1 * np.eye(2), atol=0.05))
    True
    """

    def __init__(
        self, params: Iterable[Any], lr: float = 1e-3, weight_decay: float = 0.1,
        momentum: float = 0.95, nesterov: bool = True,
        ns_coefficients: tuple[float, float, float] = (3.4445, -4.7750, 2.0315),
        eps: float = 1e-7, ns_steps: int = 5, adjust_lr_fn: str | None = None,
    ) -> None:
        if is_array(lr) and np.size(lr) != 1:
            raise ValueError("Tensor lr must be 1-element")
        _check(0.0 <= lr, f"Learning rate should be >= 0 but is: {lr}")
        _check(0.0 <= momentum, f"momentum should be >= 0 but is: {momentum}")
        _check(0.0 <= weight_decay, f"weight decay should be >= 0 but is: {weight_decay}")
        _check(adjust_lr_fn in (None, "original", "match_rms_adamw"),
               f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                        ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps,
                        adjust_lr_fn=adjust_lr_fn)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                _check(p.ndim == 2, "Muon only supports 2D parameters whereas we found a "
                                    f"parameter with size: {tuple(p.shape)}")

    def _transform(self, group: dict[str, Any]) -> GradientTransformation:
        return T.torch_muon(group["lr"], group["weight_decay"], group["momentum"],
                            group["nesterov"], tuple(group["ns_coefficients"]), group["eps"],
                            group["ns_steps"], group["adjust_lr_fn"])


class Lion(Optimizer):
    """Lion (Chen et al., 2023, "Symbolic Discovery of Optimization Algorithms"):
    ``p -= lr * (sign(b1 * m + (1 - b1) * g) + weight_decay * p)``, then
    ``m = b2 * m + (1 - b2) * g``; state ``exp_avg``.

    >>> import numpy as np
    >>> w = np.zeros(2)
    >>> Lion([w], lr=0.1).step([np.array([0.5, -2.0])])
    >>> w
    array([-0.1,  0.1])
    """

    def __init__(
        self, params: Iterable[Any], lr: float = 1e-4, betas: tuple[float, float] = (0.9, 0.99),
        weight_decay: float = 0.0, *, foreach: bool | None = None, maximize: bool = False,
    ) -> None:
        defaults = dict(lr=lr, betas=tuple(betas), weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize)
        super().__init__(params, defaults)

    def _validate_group(self, group: dict[str, Any]) -> None:
        _check_lr_eps_wd(group)
        _check_betas(group)

    def _transform(self, group: dict[str, Any]) -> GradientTransformation:
        b1, b2 = group["betas"]
        core = chain(T.torch_lion_direction(b1, b2), scale(-group["lr"]))
        return _with_options(group, core, decoupled=True)


Optimizer.step = _with_hooks(Optimizer.__dict__["step"])  # type: ignore[method-assign]
