"""Module hooks in the backward pass, on funcgrad's custom derivative rules.

PyTorch's ``BackwardHook`` idea, made functional: when a module has full backward hooks, its
array inputs and its outputs pass through identity functions with custom VJPs (one
``custom_vjp`` over all outputs, one over all inputs, sharing a per-call state):

- the outputs' VJP receives ``grad_output``: backward pre-hooks see it and may replace it; it
  is kept in the state;
- the inputs' VJP receives ``grad_input``: full backward hooks see ``(grad_input,
  grad_output)`` and may replace ``grad_input``. When no input of the call is being
  differentiated (the usual first layer fed with data), the hooks run from the outputs' VJP
  with ``grad_input`` all ``None``, as PyTorch calls them.

Parameter gradient hooks (``Module.register_parameter_hook``, ``Parameter.register_hook``) wrap
the parameter in an identity with a custom VJP where the module is rebuilt inside a
transformation, so every use of the parameter shares it and the hook sees the total gradient,
once per backward pass.

Hook functions run through :func:`funcgrad.debug.call_hook`: eagerly they are called
directly; under ``jit`` they run every time the compiled function runs, with concrete arrays.
Global hooks (``register_module_*``) live in a context variable.
"""

from __future__ import annotations

import collections
import itertools
import warnings
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from typing import Any

from funcgrad import numpy as fnp
from funcgrad import tree_util
from funcgrad.avals import get_aval
from funcgrad.backend import xp_for
from funcgrad.core import Tracer, current_trace
from funcgrad.debug.callback import call_hook
from funcgrad.ops.custom_derivatives import SymbolicZero, custom_vjp

__all__ = [
    "RemovableHandle",
    "register_module_forward_pre_hook",
    "register_module_forward_hook",
    "register_module_full_backward_hook",
    "register_module_full_backward_pre_hook",
]

_ids = itertools.count()

#: kinds of per-module hooks kept in ``module._autograd_hooks``
KINDS = ("full", "full_pre", "state_dict_pre", "state_dict_post", "load_pre", "load_post",
         "fwd_kwargs", "pre_kwargs", "fwd_always")


class RemovableHandle:
    """Returned by every ``register_*hook``: ``remove()`` unregisters (also a context
    manager)."""

    def __init__(self, remove: Callable[[], None], hid: int) -> None:
        self._remove = remove
        self.id = hid

    def remove(self) -> None:
        self._remove()

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


def hook_table(mod: Any) -> dict[str, Any]:
    """The module's hook registries, created on first use."""
    d = mod.__dict__
    t = d.get("_autograd_hooks")
    if t is None:
        t = {k: collections.OrderedDict() for k in KINDS}
        t["param"] = {}
        d["_autograd_hooks"] = t
    return t


def add_ordered(reg: collections.OrderedDict, hook: Callable[..., Any], prepend: bool = False
                ) -> RemovableHandle:
    """Put ``hook`` in registry ``reg`` (last, or first with ``prepend``); its handle."""
    hid = next(_ids)
    reg[hid] = hook
    if prepend:
        reg.move_to_end(hid, last=False)
    return RemovableHandle(lambda: reg.pop(hid, None), hid)


def add_hook(mod: Any, kind: str, hook: Callable[..., Any], prepend: bool = False
             ) -> RemovableHandle:
    if not callable(hook):
        raise TypeError(f"{type(mod).__name__}: a hook must be callable, got "
                        f"{type(hook).__name__}")
    return add_ordered(hook_table(mod)[kind], hook, prepend)


def add_param_hook(mod: Any, name: str, hook: Callable[..., Any]) -> RemovableHandle:
    if name not in mod.__dict__["_parameters"]:
        raise KeyError(f"{type(mod).__name__} has no parameter {name!r} (parameters: "
                       f"{list(mod.__dict__['_parameters'])})")
    if not callable(hook):
        raise TypeError(f"register_parameter_hook: a hook must be callable, got "
                        f"{type(hook).__name__}")
    reg = hook_table(mod)["param"].setdefault(name, collections.OrderedDict())
    hid = next(_ids)
    reg[hid] = hook
    return RemovableHandle(lambda: reg.pop(hid, None), hid)


class GradHolder:
    """What a post-accumulate-grad hook receives: the parameter's ``.grad`` (read-only
    view of the total gradient; parameters here are plain arrays, with no ``.grad`` slot)."""

    __slots__ = ("grad", "name")

    def __init__(self, grad: Any, name: str) -> None:
        self.grad, self.name = grad, name

    def __repr__(self) -> str:
        return f"GradHolder({self.name}, grad={self.grad!r})"


def post_accumulate(hook: Callable[..., Any], name: str) -> Callable[..., Any]:
    """A gradient hook calling ``hook(holder)`` with the total gradient; it returns nothing,
    so the gradient is unchanged (PyTorch's ``register_post_accumulate_grad_hook``)."""

    def run(grad: Any) -> None:
        hook(GradHolder(grad, name))

    run.__qualname__ = _hook_name(hook)
    return run


def snapshot(table: dict[str, Any] | None) -> Any:
    """An immutable, comparable copy of a hook table (part of the module's pytree aux)."""
    if table is None:
        return None
    kinds = tuple((k, tuple(table[k].items())) for k in KINDS)
    params = tuple((n, tuple(r.items())) for n, r in table["param"].items() if r)
    if not params and not any(items for _, items in kinds):
        return None
    return kinds, params


def restore(snap: Any) -> dict[str, Any]:
    kinds, params = snap
    t: dict[str, Any] = {k: collections.OrderedDict(items) for k, items in kinds}
    t["param"] = {n: collections.OrderedDict(items) for n, items in params}
    return t


# -- global hooks -------------------------------------------------------------------------------

_GLOBAL_KINDS = ("forward_pre", "forward", "full", "full_pre")
_NO_GLOBAL: dict[str, tuple] = {k: () for k in _GLOBAL_KINDS}
#: None while no global hook is registered, so a module call checks one value only
_global: ContextVar[dict[str, tuple] | None] = ContextVar("funcgrad_nn_global_module_hooks",
                                                          default=None)


def global_hooks() -> dict[str, tuple]:
    return _global.get() or _NO_GLOBAL


def any_global() -> bool:
    return _global.get() is not None


def _set_global(g: dict[str, tuple]) -> None:
    _global.set(g if any(g[k] for k in _GLOBAL_KINDS) else None)


def _add_global(kind: str, hook: Callable[..., Any], with_kwargs: bool = False,
                always_call: bool = False) -> RemovableHandle:
    """Entries are ``(id, hook)``; forward hooks' are ``(id, hook, with_kwargs,
    always_call)``."""
    if not callable(hook):
        raise TypeError(f"a global module hook must be callable, got {type(hook).__name__}")
    hid = next(_ids)
    g = dict(global_hooks())
    entry = (hid, hook, bool(with_kwargs), bool(always_call)) if kind == "forward" else \
        (hid, hook)
    g[kind] = g[kind] + (entry,)
    _set_global(g)

    def remove() -> None:
        cur = dict(global_hooks())
        cur[kind] = tuple(e for e in cur[kind] if e[0] != hid)
        _set_global(cur)

    return RemovableHandle(remove, hid)


def register_module_forward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(module, args)`` before every module's forward (this context/thread).

    Example:
        >>> import numpy as np, funcgrad_nn as nn
        >>> seen = []
        >>> h = nn.register_module_forward_pre_hook(lambda m, a: seen.append(type(m).__name__))
        >>> _ = nn.ReLU()(np.ones(2, np.float32)); h.remove()
        >>> seen
        ['ReLU']
    """
    return _add_global("forward_pre", hook)


def register_module_forward_hook(hook: Callable[..., Any], *, with_kwargs: bool = False,
                                 always_call: bool = False) -> RemovableHandle:
    """``hook(module, args, output)`` after every module's forward; non-None replaces it.
    ``with_kwargs=True``: ``hook(module, args, kwargs, output)``; ``always_call=True``: also
    called (with output None) when forward raises. Global hooks run before the module's own.

    Example:
        >>> import numpy as np, funcgrad_nn as nn
        >>> with nn.register_module_forward_hook(lambda m, a, out: out * 0):
        ...     float(nn.Identity()(np.float32(3.0)))
        0.0
    """
    return _add_global("forward", hook, with_kwargs, always_call)


def register_module_full_backward_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(module, grad_input, grad_output)`` for every module in the backward pass.

    Example:
        >>> import numpy as np, funcgrad_nn as nn
        >>> names = []
        >>> m = nn.Linear(2, 1)
        >>> with nn.register_module_full_backward_hook(
        ...         lambda mod, gi, go: names.append(type(mod).__name__)):
        ...     _ = nn.grad(lambda m: m(np.ones((1, 2), np.float32)).sum())(m)
        >>> names
        ['Linear']
    """
    return _add_global("full", hook)


def register_module_full_backward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """``hook(module, grad_output)`` for every module in the backward pass.

    Example:
        >>> import funcgrad_nn as nn
        >>> nn.register_module_full_backward_pre_hook(lambda m, go: None).remove()
    """
    return _add_global("full_pre", hook)


# -- calling a module ---------------------------------------------------------------------------


def _hook_name(hook: Any) -> str:
    return getattr(hook, "__qualname__", None) or getattr(hook, "__name__", None) or \
        type(hook).__name__


def call_module(mod: Any, args: tuple, kwargs: dict) -> Any:
    """``mod(*args, **kwargs)`` with global and per-module hooks (PyTorch's ``_call_impl``)."""
    d = mod.__dict__
    table = d.get("_autograd_hooks") or {k: {} for k in KINDS}
    g = global_hooks()
    # as PyTorch's _call_impl: if a pre-hook, forward or a forward hook raises, the
    # always_call forward hooks not run yet run with the arguments and output so far (their
    # own errors then only warn), and the error propagates
    st: dict[str, Any] = {"args": args, "kwargs": kwargs, "out": None, "ran": set()}
    try:
        return _call_hooked(mod, d, table, g, st)
    except Exception:
        fwd_kw = table["fwd_kwargs"]
        always = [(("g", i), hook, kw) for i, (_, hook, kw, a) in enumerate(g["forward"]) if a]
        always += [(hid, hook, hid in fwd_kw) for hid, hook in table["fwd_always"].items()
                   if hid in d["_forward_hooks"]]
        for key, hook, kw in always:
            if key in st["ran"]:
                continue
            try:
                res = hook(mod, st["args"], st["kwargs"], st["out"]) if kw else \
                    hook(mod, st["args"], st["out"])
                if res is not None:
                    st["out"] = res
            except Exception as e:
                warnings.warn(f"forward hook {_hook_name(hook)} of {type(mod).__name__} with "
                              "always_call=True raised an exception that was silenced as "
                              f"another error was raised in forward: {e}", stacklevel=3)
        raise


def _call_hooked(mod: Any, d: dict, table: dict, g: dict, st: dict) -> Any:
    args, kwargs = st["args"], st["kwargs"]
    pre_kw = table["pre_kwargs"]
    for _, hook in g["forward_pre"]:
        res = hook(mod, args)
        if res is not None:
            args = st["args"] = res if isinstance(res, tuple) else (res,)
    for hid, hook in list(d["_forward_pre_hooks"].items()):
        if hid in pre_kw:
            res = hook(mod, args, kwargs)
            if res is not None:
                if not (isinstance(res, tuple) and len(res) == 2):
                    raise RuntimeError(
                        f"forward pre-hook {_hook_name(hook)} of {type(mod).__name__} "
                        "(with_kwargs=True) must return None or a tuple (new_args, "
                        f"new_kwargs), got {type(res).__name__}")
                args, kwargs = res
                args = st["args"] = tuple(args)
                st["kwargs"] = kwargs
        else:
            res = hook(mod, args)
            if res is not None:
                args = st["args"] = res if isinstance(res, tuple) else (res,)
    full = [h for _, h in g["full"]] + list(table["full"].values())
    full_pre = [h for _, h in g["full_pre"]] + list(table["full_pre"].values())
    state = None
    if full or full_pre:
        state = _BackwardState(mod, full, full_pre)
        args = state.wrap_inputs(args)
    fwd_kw = table["fwd_kwargs"]
    out = st["out"] = mod.forward(*args, **kwargs)
    for i, (_, hook, kw, always) in enumerate(g["forward"]):
        if always:
            st["ran"].add(("g", i))
        res = hook(mod, args, kwargs, out) if kw else hook(mod, args, out)
        if res is not None:
            out = st["out"] = res
    always_ids = table["fwd_always"]
    for hid, hook in list(d["_forward_hooks"].items()):
        if hid in always_ids:
            st["ran"].add(hid)
        res = hook(mod, args, kwargs, out) if hid in fwd_kw else hook(mod, args, out)
        if res is not None:
            out = st["out"] = res
    if state is not None:
        out = state.wrap_outputs(out)
    return out


def _inexact(x: Any) -> bool:
    try:
        return get_aval(x).dtype.kind in "fc"
    except TypeError:
        return False


class _BackwardState:
    """What one call's input and output identities share."""

    def __init__(self, mod: Any, full: list, full_pre: list) -> None:
        self.mod = mod
        self.full = full
        self.full_pre = full_pre
        self.in_pos: list[int] = []
        self.in_tracers: list[Any] = []
        self.n_in = 0
        self.other_arrays: dict[int, Any] = {}
        self.diff: list[bool] = []
        self.diff_known = False
        self.grad_output: list[Any] | None = None
        #: a tuple output's layout as PyTorch's hooks see it: (number of elements, positions
        #: of the floating arrays among them); None for another output (its floating leaves)
        self.go_layout: tuple[int, list[int]] | None = None

    # -- forward ------------------------------------------------------------------------

    def wrap_inputs(self, args: tuple) -> tuple:
        self.in_pos = [i for i, a in enumerate(args) if _inexact(a) and hasattr(a, "shape")]
        self.n_in = len(args)
        self.in_tracers = [args[i] for i in self.in_pos]
        # Integer/bool array arguments: PyTorch passes them zeros when other inputs get
        # gradients; keep their avals to build those.
        self.other_arrays = {i: get_aval(a) for i, a in enumerate(args)
                             if i not in self.in_pos and _is_array(a)}
        if not self.in_pos:
            return args
        new = _inputs_identity(self, *[args[i] for i in self.in_pos])
        out = list(args)
        for i, v in zip(self.in_pos, new):
            out[i] = v
        return tuple(out)

    def wrap_outputs(self, out: Any) -> Any:
        if type(out) is tuple:
            # PyTorch's hooks see a tuple output's elements: an array element's gradient, None
            # for anything else (LSTM's (h, c) pair: its gradient flows, unhooked)
            pos = [i for i, x in enumerate(out) if _inexact(x) and hasattr(x, "shape")]
            if not pos:
                return out
            self.go_layout = (len(out), pos)
            self._set_diff(out, pos)
            new = _outputs_identity(self, *[out[i] for i in pos])
            items = list(out)
            for i, v in zip(pos, new):
                items[i] = v
            return tuple(items)
        leaves, tree = tree_util.tree_flatten(out)
        pos = [i for i, x in enumerate(leaves) if _inexact(x)]
        if not pos:
            return out
        self._set_diff(leaves, pos)
        new = _outputs_identity(self, *[leaves[i] for i in pos])
        for i, v in zip(pos, new):
            leaves[i] = v
        return tree_util.tree_unflatten(tree, leaves)

    def _set_diff(self, outs: Sequence[Any], pos: list[int]) -> None:
        # Which inputs are differentiated together with the outputs (tracers of their trace)?
        # (the inputs' rule knows for sure when it ran: see _inputs_fwd)
        if not self.diff_known:
            traces = {id(outs[i]._trace) for i in pos if isinstance(outs[i], Tracer)}
            self.diff = [isinstance(x, Tracer) and id(x._trace) in traces
                         for x in self.in_tracers]

    def _go(self, cts: Sequence[Any]) -> tuple:
        """``grad_output`` as the hooks see it, from the wrapped outputs' cotangents."""
        if self.go_layout is None:
            return tuple(cts)
        n, pos = self.go_layout
        full: list[Any] = [None] * n
        for i, c in zip(pos, cts):
            full[i] = c
        return tuple(full)

    def _from_go(self, new: list[Any], cts: Sequence[Any]) -> list[Any]:
        """The wrapped outputs' cotangents from a hook's replacement ``grad_output``."""
        if self.go_layout is None:
            return new
        _, pos = self.go_layout
        xp = xp_for(*cts) if cts else None
        return [xp.zeros_like(c) if new[i] is None else new[i] for i, c in zip(pos, cts)]

    # -- backward -----------------------------------------------------------------------

    def on_grad_output(self, cts: Sequence[Any]) -> list[Any]:
        cts = _torch_cts(cts)  # the hooks see (and return) PyTorch's gradients
        name = type(self.mod).__name__
        for hook in self.full_pre:
            hname = _hook_name(hook)

            def run(*g: Any, hook: Any = hook, hname: str = hname) -> Any:
                go = self._go(g)
                res = hook(self.mod, go)
                res = _check_tuple(res, len(go), f"full backward pre-hook {hname} of {name}",
                                   "grad_output")
                return None if res is None else self._from_go(res, g)

            cts = call_hook(run, *cts, name=hname)
        self.grad_output = cts
        # The inputs' rule said which inputs this derivative perturbs (when none is, as inside
        # a checkpoint's body whose input is data, it did not run at all); the flag is
        # consumed so that another derivative of the same program decides afresh.
        known, self.diff_known = self.diff_known, False
        if not known or not any(self.diff):
            # No input is differentiated (data fed to the first layer): the inputs' rule will
            # not run, so the full hooks run here, with grad_input all None (PyTorch's, with
            # its warning).
            self.diff = [False] * len(self.diff)
            if self.full:
                warnings.warn(
                    "Full backward hook is firing when gradients are computed with respect to "
                    "module outputs since no inputs require gradients. See "
                    "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
                    "#torch.nn.Module.register_full_backward_hook for more details.",
                    UserWarning, stacklevel=2)
            self._fire_full([], cts)
        return _torch_cts(cts)

    def on_grad_input(self, cts: Sequence[Any]) -> list[Any]:
        go = self.grad_output if self.grad_output is not None else []
        return _torch_cts(self._fire_full(_torch_cts(cts), go))

    def _fire_full(self, cts: list[Any], go: list[Any]) -> list[Any]:
        """Run the full hooks; ``cts`` has one cotangent per wrapped input (``in_pos``).

        ``grad_input`` has one entry per positional argument, as PyTorch's: the gradient of a
        differentiated input, zeros for another array while some input is differentiated, and
        ``None`` for a non-array argument (or for every entry when no input is
        differentiated).
        """
        name = type(self.mod).__name__
        any_diff = bool(cts) and any(self.diff)
        slot = {p: k for k, p in enumerate(self.in_pos)}
        # per position: "ct" (a differentiated input's cotangent), "zero", or None
        kinds = [None] * self.n_in
        if any_diff:
            for p in range(self.n_in):
                if p in slot:
                    kinds[p] = "ct" if self.diff[slot[p]] else "zero"
                elif p in self.other_arrays:
                    kinds[p] = "zero"
        diff_slots = [k for k, d in enumerate(self.diff) if d] if any_diff else []
        n_ct = len(diff_slots)
        zero_avals = {p: (get_aval(cts[slot[p]]) if p in slot else self.other_arrays[p])
                      for p in range(self.n_in) if kinds[p] == "zero"}
        for hook in self.full:
            hname = _hook_name(hook)

            def run(*a: Any, hook: Any = hook, hname: str = hname) -> Any:
                it = iter(a[:n_ct])
                xp = xp_for(*a) if a else None
                gi = tuple(next(it) if kd == "ct" else
                           xp.zeros(zero_avals[p].shape, zero_avals[p].dtype) if kd == "zero"
                           else None for p, kd in enumerate(kinds))
                res = hook(self.mod, gi, self._go(a[n_ct:]))
                if res is None:
                    return None
                new = _check_tuple(res, len(gi), f"full backward hook {hname} of {name}",
                                   "grad_input")
                kept = [xp.zeros_like(old) if r is None else r
                        for r, old, kd in zip(new, gi, kinds) if kd == "ct"]
                return kept + list(a[n_ct:])

            arrays = [cts[k] for k in diff_slots] + list(go)
            res = call_hook(run, *arrays, name=hname)
            for k, v in zip(diff_slots, res[:n_ct]):
                cts[k] = v
        return cts


def _is_array(x: Any) -> bool:
    return isinstance(x, Tracer) or (hasattr(x, "shape") and hasattr(x, "dtype"))


def _torch_ct(c: Any) -> Any:
    """A cotangent as PyTorch's gradient (and back): complex ones are conjugated (PyTorch's
    gradient of a complex value is the conjugate of funcgrad's, JAX's); others pass."""
    if _is_array(c) and get_aval(c).dtype.kind == "c":
        return fnp.conj(c)
    return c


def _torch_cts(cts: Sequence[Any]) -> list[Any]:
    return [_torch_ct(c) for c in cts]


def _check_tuple(res: Any, n: int, who: str, what: str) -> Any:
    if res is None:
        return None
    if not isinstance(res, tuple | list):
        raise TypeError(f"{who} must return None or a tuple of {n} {what} values, got a "
                        f"{type(res).__name__}")
    if len(res) != n:
        per = "positional argument" if what == "grad_input" else "output array"
        raise RuntimeError(f"{who} returned an invalid number of {what}, got {len(res)}, but "
                           f"expected {n} (one per {per}) or None")
    return list(res)


def _ident(state: _BackwardState, *xs: Any) -> tuple:
    return tuple(xs)


def _ident_fwd(state: _BackwardState, *xs: Any) -> tuple:
    return tuple(xs), None


def _outputs_bwd(state: _BackwardState, res: Any, cts: tuple) -> tuple:
    return tuple(state.on_grad_output(cts))


def _inputs_fwd(state: _BackwardState, *xs: Any) -> tuple:
    # (symbolic_zeros) Which inputs are differentiated is known here, from the derivative
    # actually taken: an input that reaches a checkpoint's body as an operand is a tracer of
    # the outputs' trace there without being differentiated (its gradient is dropped, so
    # this rule's backward never runs and the full hooks must run at the outputs).
    state.diff = [x.perturbed for x in xs]
    state.diff_known = True
    return tuple(x.value for x in xs), None


def _inputs_bwd(state: _BackwardState, res: Any, cts: tuple) -> tuple:
    cts = tuple(fnp.zeros(c.aval.shape, c.aval.dtype, device=c.aval.device)
                if type(c) is SymbolicZero else c for c in cts)
    return tuple(state.on_grad_input(cts))


_outputs_identity = custom_vjp(_ident, nondiff_argnums=(0,))
_outputs_identity.defvjp(_ident_fwd, _outputs_bwd)
_inputs_identity = custom_vjp(_ident, nondiff_argnums=(0,))
_inputs_identity.defvjp(_inputs_fwd, _inputs_bwd, symbolic_zeros=True)


# -- parameter hooks ----------------------------------------------------------------------------


def _param_fwd(hooks: Any, x: Any) -> tuple:
    return x, None


def _param_bwd(hooks: Any, res: Any, g: Any) -> tuple:
    for hook in hooks.fns:
        hname = _hook_name(hook)

        def run(v: Any, hook: Any = hook, hname: str = hname) -> Any:
            r = hook(v)
            if r is None:
                return None
            if isinstance(r, tuple | list):
                raise TypeError(f"parameter hook {hname} of {hooks.where} must return an array "
                                f"or None, got a {type(r).__name__}")
            return [r]

        (g,) = call_hook(run, g, name=hname)
    return (g,)


def _param_bwd_torch(hooks: Any, res: Any, g: Any) -> tuple:
    # the hooks see and return PyTorch's gradient (the conjugate of funcgrad's when complex)
    (g,) = _param_bwd(hooks, res, _torch_ct(g))
    return (_torch_ct(g),)


class _ParamHooks:
    __slots__ = ("fns", "where")

    def __init__(self, fns: tuple, where: str) -> None:
        self.fns, self.where = fns, where


_param_identity = custom_vjp(lambda hooks, x: x, nondiff_argnums=(0,))
_param_identity.defvjp(_param_fwd, _param_bwd_torch)


def hook_param(mod_name: str, name: str, hooks: Sequence[Callable[..., Any]], value: Any) -> Any:
    """``value`` (a parameter being rebuilt into a module) with its gradient hooks attached.

    Only the rebuild by the differentiating transformation that owns the value attaches
    them: a module passed on to a ``jit``/``vmap``/``checkpoint`` inside ``grad`` is rebuilt
    again there from the already hooked values (staged, batched, or the very same tracers),
    and hooking those too fired each hook twice (and applied a replacing hook's change
    twice)."""
    if not hooks or not isinstance(value, Tracer) or not value._trace.differentiates \
            or value._trace is not current_trace() or not _inexact(value):
        return value
    return _param_identity(_ParamHooks(tuple(hooks), f"{mod_name}.{name}"), value)
