"""Module-aware transforms: ``grad``, ``value_and_grad``, ``jit``, ``vmap``.

``grad``/``value_and_grad`` differentiate the TRAINABLE parameters of the module passed as
the first argument (frozen parameters and buffers are constants) and return gradients as a
module of the same class whose trainable-parameter leaves are the gradients and whose other
leaves are None, so ``tree_leaves(grads)`` lines up with ``list(model.parameters())``. A tied
parameter (the same array registered under several names) is one variable: its gradient is
the sum over all its uses, stored at its first name (the later names are None).
All four write buffer updates made during the call (BatchNorm running statistics, Dropout's
key) back to the caller's modules afterwards; the caller's module is otherwise untouched
(the function sees a copy rebuilt from the pytree).

>>> import numpy as np, funcgrad_nn as nn
>>> model = nn.Linear(2, 1)
>>> def loss_fn(m, x):
...     return (m(x) ** 2).sum()
>>> grads = nn.grad(loss_fn)(model, np.ones((3, 2), np.float32))
>>> grads.weight.shape, grads.weight.dtype
((1, 2), dtype('float32'))
"""

from __future__ import annotations

import functools
import re
import warnings
import weakref
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from typing import Any

import numpy as np

import funcgrad
from funcgrad import numpy as fnp
from funcgrad import tree_util
from funcgrad.api import _value_and_grad, _vjp
from funcgrad.backend import device_of, is_writeable
from funcgrad.core import is_tracer
from funcgrad.debug.nans import nans_enabled
from funcgrad.errors import ConcretizationError
from funcgrad_nn import amp
from funcgrad_nn import functional as F
from funcgrad_nn import hooks as _hooks
from funcgrad_nn import module as _module
from funcgrad_nn._torch_idioms import add_torch_idiom_note
from funcgrad_nn.module import (
    Module,
    collect_buffer_updates,
    pop_parameter_writes,
    record_parameter_write,
    storable_state_value,
)

__all__ = ["checkpoint", "compile", "grad", "jit", "value_and_grad", "vjp", "vmap"]


def _trainable_mask(mod: Module) -> list[bool]:
    """For each leaf of ``mod`` (in ``tree_leaves`` order): is it a trainable parameter?

    Derived from the leaves' key paths (``fc1.weight``), the one description of where a leaf
    lives: a leaf is trainable when its owner module registers it as a parameter that is not
    frozen."""
    mask = []
    for path, _ in tree_util.tree_flatten_with_path(mod)[0]:
        names = [getattr(k, "name", str(k)) for k in path]
        owner = mod.get_submodule(".".join(names[:-1]))
        mask.append(names[-1] in owner._parameters and names[-1] not in owner._frozen)
    return mask


def _buffer_dict(mod: Module, writes: bool = False) -> dict[str, Any]:
    """Every buffer (persistent or not) of ``mod`` by full dotted name; with ``writes``, also
    the in-place parameter writes its forward pass recorded (``Embedding``'s ``max_norm``)."""
    out: dict[str, Any] = {}
    for prefix, m in mod.named_modules(remove_duplicate=False):
        for name, b in m._buffers.items():
            if b is not None:
                out[(prefix + "." if prefix else "") + name] = b
    if writes:
        out.update(pop_parameter_writes(mod))
    return out


def _collect(args: Any) -> None:
    """The module arguments are the transformation's copies whose buffers are returned and
    written back: no lost-update warning for them."""
    for a in args:
        if isinstance(a, Module):
            collect_buffer_updates(a)


def _write_back(mod: Module, bufs: dict[str, Any]) -> None:
    for full, value in bufs.items():
        path, _, name = full.rpartition(".")
        target = mod.get_submodule(path)
        if name in target._parameters:
            _write_parameter(target, name, value)
        elif target._buffers.get(name) is not value:
            # Under an enclosing plain transformation the new value may be traced: store it
            # only if that is safe (concrete under grad, else a clear error).
            target._buffers[name] = storable_state_value(target, name, value)


def _write_parameter(target: Module, name: str, value: Any) -> None:
    """A parameter write the forward pass made in place (PyTorch's semantics), into the
    caller's parameter array, which the optimizer holds; inside an enclosing module-aware
    transform (the parameter is its traced copy) it is handed on to that transform."""
    w = target._parameters[name]
    if is_tracer(w):
        record_parameter_write(target, name, value)
    elif not is_tracer(value) and is_writeable(w):
        w[...] = value


class _Tied:
    """Pytree wrapper for a module with tied arrays: its leaves are the module's DISTINCT
    arrays, so ``jit``/``vmap`` give a tied array one tracer and the rebuilt module (what
    unflattening returns) still shares it."""

    __slots__ = ("module",)

    def __init__(self, module: Module) -> None:
        self.module = module


class _TiedAux:
    __slots__ = ("treedef", "slots")

    def __init__(self, treedef: Any, slots: tuple[int, ...]) -> None:
        self.treedef, self.slots = treedef, slots

    def __hash__(self) -> int:
        return hash((self.treedef, self.slots))

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, _TiedAux) and self.slots == other.slots
                and self.treedef == other.treedef)


def _tied_flatten(t: _Tied) -> tuple[list[Any], _TiedAux]:
    leaves, treedef = tree_util.tree_flatten(t.module)
    index: dict[int, int] = {}
    unique: list[Any] = []
    for leaf in leaves:
        if id(leaf) not in index:
            index[id(leaf)] = len(unique)
            unique.append(leaf)
    return unique, _TiedAux(treedef, tuple(index[id(leaf)] for leaf in leaves))


def _tied_unflatten(aux: _TiedAux, children: Any) -> Module:
    children = list(children)
    return tree_util.tree_unflatten(aux.treedef, [children[s] for s in aux.slots])


tree_util.register_pytree_node(_Tied, _tied_flatten, _tied_unflatten)


def _dedup(arg: Any) -> Any:
    """``arg`` wrapped in :class:`_Tied` when it is a module holding an array twice."""
    if not isinstance(arg, Module):
        return arg
    leaves = tree_util.tree_leaves(arg)
    if len({id(leaf) for leaf in leaves}) == len(leaves):
        return arg
    return _Tied(arg)


def _check_module(model: Any, fname: str) -> None:
    if not isinstance(model, Module):
        raise TypeError(f"funcgrad_nn.{fname}: the first argument must be a Module, got "
                        f"{type(model).__name__} (use funcgrad.{fname} for plain pytrees)")


def _variables(model: Any, differentiate: bool, fname: str
               ) -> tuple[list[Any], Any, list[Any], list[int | None], list[int | None]]:
    """``(leaves, treedef, trainable, slots, grad_slots)`` of ``model`` for the gradient
    transforms: its leaves; the distinct trainable arrays (the variables; none unless
    ``differentiate``); for each leaf the variable it reads (None: a constant); and for each
    leaf the variable whose gradient it holds in the module-shaped result (its first
    trainable occurrence; None elsewhere)."""
    leaves, treedef = tree_util.tree_flatten(model)
    mask = _trainable_mask(model)
    if len(mask) != len(leaves):
        raise TypeError(f"funcgrad_nn.{fname}: module parameters/buffers must be "
                        "arrays (a leaf is not an array)")
    if not differentiate:
        mask = [False] * len(mask)
    # A tied parameter (one array object at several leaves) is ONE variable: every
    # occurrence of it (trainable or not) reads that variable, so the gradients of all
    # uses add up. Variables are numbered by first trainable occurrence, the order of
    # model.parameters().
    var_of: dict[int, int] = {}
    trainable: list[Any] = []
    for leaf, m in zip(leaves, mask):
        if m and id(leaf) not in var_of:
            var_of[id(leaf)] = len(trainable)
            trainable.append(leaf)
    slots = [var_of.get(id(leaf)) for leaf in leaves]
    first = set()
    grad_slots: list[int | None] = []
    for s, m in zip(slots, mask):
        if m and s not in first:
            first.add(s)
            grad_slots.append(s)
        else:
            grad_slots.append(None)
    return leaves, treedef, trainable, slots, grad_slots


def torch_cotangents(tree: Any) -> Any:
    """``tree`` with its complex arrays conjugated: PyTorch's gradient with respect to a
    complex value (and the cotangent its ``backward`` takes) is the conjugate of funcgrad's
    (JAX's): for a real loss, PyTorch's points uphill (``2z`` for ``|z|^2``), which its
    optimizers step against; JAX's is ``conj(2z)``. The torch-flavoured front ends (``grad``,
    ``vjp``, ``torch.func``'s, ``autograd.functional``'s) map at their edges; real arrays
    pass through untouched.

    >>> import numpy as np
    >>> torch_cotangents({"w": np.array([1.0]), "z": np.array([1 + 2j])})
    {'w': array([1.]), 'z': array([1.-2.j])}
    """
    return tree_util.tree_map(
        lambda g: fnp.conj(g) if hasattr(g, "dtype") and np.dtype(g.dtype).kind == "c" else g,
        tree)


def _module_grads(treedef: Any, grad_slots: list[int | None], grads: list[Any],
                  zeros: Sequence[bool] = ()) -> Module:
    """The module-shaped gradients: each variable's gradient at its first trainable name;
    ``zeros`` flags the variables whose gradient is a symbolic zero (recorded, see
    :func:`no_grad_leaves`)."""
    out = tree_util.tree_unflatten(treedef, [None if s is None else grads[s]
                                             for s in grad_slots])
    if any(zeros):
        used = [s for s in grad_slots if s is not None]
        _NO_GRAD[out] = frozenset(i for i, s in enumerate(used) if zeros[s])
    return out


# A module-shaped gradient -> the positions (in its tree_leaves) of the trainable parameters
# the function does not depend on. Their gradient is a symbolic zero, for which PyTorch leaves
# p.grad None and its optimizers skip the parameter (no step, no weight decay, no state). The
# leaves stay zero arrays, so tree_leaves(grads) keeps lining up with model.parameters() and
# gradients add up as pytrees; the record is kept beside the module, not in its pytree
# structure, so a tree_map over gradients whose parameter use differs is not a structure
# mismatch (its result has no record: every zero is then a gradient, as before).
_NO_GRAD: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def no_grad_leaves(grads: Any) -> frozenset[int]:
    """The positions, in ``tree_leaves(grads)``, of the parameters a module-shaped gradient
    from ``nn.grad``/``nn.value_and_grad`` holds zeros for because the loss does not depend
    on them (PyTorch's ``p.grad is None``); empty for anything else.

    >>> import numpy as np, funcgrad_nn as nn
    >>> m = nn.Sequential(nn.Linear(2, 1), nn.Linear(2, 1))
    >>> g = nn.grad(lambda m: m[0](np.ones((1, 2), np.float32)).sum())(m)
    >>> sorted(no_grad_leaves(g)), g[1].weight
    ([2, 3], array([[0., 0.]], dtype=float32))
    """
    try:
        return _NO_GRAD.get(grads, frozenset())
    except TypeError:  # unhashable
        return frozenset()


def carry_no_grad(sources: Sequence[Any], result: Any) -> Any:
    """Record on ``result`` (a gradient computed leaf by leaf from the module-shaped gradients
    ``sources``: clipped, summed over micro-batches, averaged) the parameters none of them
    has a gradient for, and return it: the optimizers then skip those, as PyTorch skips a
    parameter whose ``.grad`` stayed None through accumulation and clipping.

    >>> import numpy as np, funcgrad_nn as nn
    >>> from funcgrad import tree_util
    >>> m = nn.Sequential(nn.Linear(2, 1), nn.Linear(2, 1))
    >>> g = nn.grad(lambda m: m[0](np.ones((1, 2), np.float32)).sum())(m)
    >>> halved = carry_no_grad([g], tree_util.tree_map(lambda x: x / 2, g))
    >>> sorted(no_grad_leaves(halved))
    [2, 3]
    """
    marks = None
    for src in sources:
        m = no_grad_leaves(src)
        marks = m if marks is None else marks & m
    if marks and isinstance(result, Module):
        _NO_GRAD[result] = marks
    return result


class _NoGradMarks:
    """The no-gradient records of the Modules in a jitted function's output, carried out of
    ``funcgrad.jit`` as static structure (a pytree node without children)."""

    __slots__ = ("marks",)

    def __init__(self, marks: tuple[tuple[int, frozenset[int]], ...]) -> None:
        self.marks = marks


tree_util.register_pytree_node(_NoGradMarks, lambda m: ((), m.marks),
                               lambda marks, _: _NoGradMarks(marks))


def _is_module(x: Any) -> bool:
    return isinstance(x, Module)


def _take_marks(out: Any) -> _NoGradMarks:
    nodes = tree_util.tree_leaves(out, is_leaf=_is_module)
    return _NoGradMarks(tuple((i, no_grad_leaves(m)) for i, m in enumerate(nodes)
                              if isinstance(m, Module) and no_grad_leaves(m)))


def _put_marks(out: Any, marks: _NoGradMarks) -> None:
    if marks.marks:
        nodes = tree_util.tree_leaves(out, is_leaf=_is_module)
        for i, m in marks.marks:
            _NO_GRAD[nodes[i]] = m


def _step_key(args: tuple, kwargs: dict) -> Any:
    """The key an ``nn.jit`` step that draws without ``key=`` gets for this call: fresh from
    the global generator; split from the enclosing ``nn.jit``'s own when nested (a host draw
    there would be frozen into the outer program); refused under another tracing
    transformation, for the same reason."""
    outer = F.implicit_key.get()
    if outer == F.PROBE:
        raise F.NeedsImplicitKey("nn.jit")
    if outer is not None:
        return F.key_or_draw(None, None, "nn.jit")
    where = None
    for leaf in tree_util.tree_leaves((args, kwargs)):
        if is_tracer(leaf):
            F.check_host_draw(leaf, "nn.jit (a random F function without key= inside)")
        if where is None:
            where = device_of(leaf)
    from funcgrad_nn.init import default_generator
    rng = default_generator().integers(0, 2**32, size=2, dtype=np.uint32)
    # on the arguments' device: the key meets their arrays in the hash
    return rng if where in (None, "cpu") else funcgrad.device_put(rng, where)


def _call_user(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)``: the user's step or loss function, where a PyTorch tensor idiom
    (``logits.argmax(dim=1)``, ``acc.float()``) gets the note naming the funcgrad spelling, as
    in a module's forward."""
    try:
        return fn(*args, **kwargs)
    except Exception as e:
        add_torch_idiom_note(e)
        raise


def value_and_grad(fn: Callable[..., Any], argnums: int | Sequence[int] = 0,
                   has_aux: bool = False) -> Callable[..., Any]:
    """``fn(model, *args)`` -> scalar (or ``(scalar, aux)`` with ``has_aux``); returns a
    function giving ``(value, grads)`` (``((value, aux), grads)``). As ``loss.backward()``,
    it takes any one-element loss (a ``(1,)``-shaped mean); the value keeps its shape.

    ``argnums`` picks what is differentiated, as in ``funcgrad.grad``: 0 (the default) is the
    module's trainable parameters, giving module-shaped grads; other positions are the other
    arguments (e.g. the input, for saliency maps). With a tuple, ``grads`` is a tuple in that
    order.

    >>> import numpy as np, funcgrad_nn as nn
    >>> m = nn.Linear(1, 1, bias=False)
    >>> m.weight[...] = 3.0
    >>> loss, g = nn.value_and_grad(lambda m, x: m(x).sum())(m, np.full((1, 1), 2.0, np.float32))
    >>> float(loss), g.weight
    (6.0, array([[2.]], dtype=float32))
    >>> _, (gm, gx) = nn.value_and_grad(lambda m, x: m(x).sum(), argnums=(0, 1))(
    ...     m, np.full((1, 1), 2.0, np.float32))
    >>> gx
    array([[3.]], dtype=float32)
    """
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    if not nums or any(not isinstance(a, int) or a < 0 for a in nums) \
            or len(set(nums)) != len(nums):
        raise ValueError(f"funcgrad_nn.value_and_grad: argnums must be a non-negative int or "
                         f"a tuple of distinct ones, got {argnums!r}")

    @functools.wraps(fn)
    def wrapped(model: Any, *args: Any, **kwargs: Any) -> Any:
        _check_module(model, "value_and_grad")
        if max(nums) > len(args):
            raise ValueError(f"funcgrad_nn.value_and_grad: argnums {argnums!r} refers to "
                             f"argument {max(nums)}, but the function got {len(args) + 1}")
        leaves, treedef, trainable, slots, grad_slots = _variables(model, 0 in nums,
                                                                   "value_and_grad")
        others = [a for a in nums if a != 0]

        def inner(train: list[Any], *diff: Any) -> Any:
            copy = tree_util.tree_unflatten(
                treedef, [leaf if s is None else train[s] for leaf, s in zip(leaves, slots)])
            collect_buffer_updates(copy)
            call_args = list(args)
            for a, d in zip(others, diff):
                call_args[a - 1] = d
            out = _call_user(fn, copy, *call_args, **kwargs)
            if has_aux:
                if not (isinstance(out, tuple) and len(out) == 2):
                    raise TypeError("funcgrad_nn.value_and_grad(has_aux=True): the function "
                                    "must return a (value, aux) pair")
                value, aux = out
            else:
                value, aux = out, None
            shape = tuple(getattr(value, "shape", ()))
            if shape and all(d == 1 for d in shape):
                # loss.backward() takes any one-element loss (a (1,)-shaped mean), as PyTorch
                # does; the value comes back in its own shape
                one_element.append(shape)
                value = fnp.reshape(value, ())
            return value, (aux, _buffer_dict(copy, writes=True))

        one_element: list[tuple[int, ...]] = []
        diff_args = [args[a - 1] for a in others]
        zeros: list[bool] = []
        (value, (aux, bufs)), gs = _value_and_grad(
            inner, tuple(range(1 + len(others))), True, False, False, "value_and_grad",
            zeros=zeros)(trainable, *diff_args)
        if one_element:
            value = fnp.reshape(value, one_element[-1])
        gs = torch_cotangents(gs)
        _write_back(model, bufs)
        by_num = {a: g for a, g in zip(others, gs[1:])}
        by_num[0] = _module_grads(treedef, grad_slots, gs[0], zeros[:len(trainable)])
        grads = by_num[nums[0]] if single else tuple(by_num[a] for a in nums)
        return ((value, aux), grads) if has_aux else (value, grads)

    return wrapped


def grad(fn: Callable[..., Any], argnums: int | Sequence[int] = 0,
         has_aux: bool = False) -> Callable[..., Any]:
    """Like :func:`value_and_grad` but returns only the grads (``(grads, aux)`` with
    ``has_aux``).

    >>> import numpy as np, funcgrad_nn as nn
    >>> m = nn.Linear(2, 1)
    >>> g = nn.grad(lambda m, x: m(x).sum())(m, np.ones((4, 2), np.float32))
    >>> g.bias
    array([4.], dtype=float32)
    """
    vg = value_and_grad(fn, argnums=argnums, has_aux=has_aux)

    @functools.wraps(fn)
    def wrapped(model: Any, *args: Any, **kwargs: Any) -> Any:
        out, grads = vg(model, *args, **kwargs)
        return (grads, out[1]) if has_aux else grads

    return wrapped


def vjp(fn: Callable[..., Any], model: Module, *args: Any, has_aux: bool = False,
        **kwargs: Any) -> Any:
    """``funcgrad.vjp`` with respect to the trainable parameters of ``model``: runs
    ``fn(model, *args, **kwargs)`` once and returns ``(out, vjp_fn)`` (``(out, vjp_fn, aux)``
    with ``has_aux``); ``vjp_fn(cotangent)`` gives the module-shaped gradients, as
    :func:`grad` does (None at buffers and frozen parameters), and may be called again.

    The forward pass's buffer updates (BatchNorm's running statistics) are written back, once,
    as PyTorch's forward pass does. It is PyTorch's ``out = model(x)`` followed later by
    ``out.backward(cotangent)``: a GAN's generator runs once, its output feeds the
    discriminator's step, and the gradient of the generator's loss with respect to that output
    is pulled back afterwards.

    >>> import numpy as np, funcgrad_nn as nn
    >>> m = nn.Linear(2, 1)
    >>> out, vjp_fn = nn.vjp(lambda m, x: m(x), m, np.ones((3, 2), np.float32))
    >>> g = vjp_fn(np.ones((3, 1), np.float32))
    >>> g.weight.tolist(), g.bias.tolist()
    ([[3.0, 3.0]], [3.0])
    """
    _check_module(model, "vjp")
    leaves, treedef, trainable, slots, grad_slots = _variables(model, True, "vjp")

    def inner(train: list[Any]) -> Any:
        copy = tree_util.tree_unflatten(
            treedef, [leaf if s is None else train[s] for leaf, s in zip(leaves, slots)])
        collect_buffer_updates(copy)
        out = _call_user(fn, copy, *args, **kwargs)
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise TypeError("funcgrad_nn.vjp(has_aux=True): the function must return an "
                                "(output, aux) pair")
            out, aux = out
        else:
            aux = None
        return out, (aux, _buffer_dict(copy, writes=True))

    zeros: list[bool] = []
    out, pullback, (aux, bufs) = _vjp(inner, (trainable,), True, False, "vjp", zeros=zeros)
    _write_back(model, bufs)

    def vjp_fn(cotangent: Any) -> Module:
        (gs,) = pullback(torch_cotangents(cotangent))
        return _module_grads(treedef, grad_slots, torch_cotangents(gs), zeros)

    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)


#: the funcgrad remat policy (``funcgrad.checkpoint(policy=...)``) the next :func:`checkpoint`
#: uses: set by the forward context ``utils.checkpoint.create_selective_checkpoint_contexts``
#: returns (PyTorch's selective activation checkpointing), None otherwise
selective_policy: ContextVar[Any] = ContextVar("funcgrad_nn_selective_policy", default=None)


def checkpoint(function: Callable[..., Any], *args: Any, use_reentrant: bool | None = None,
               preserve_rng_state: bool = True,
               context_fn: Callable[[], tuple[Any, Any]] | None = None,
               determinism_check: str = "default", debug: bool = False,
               early_stop: bool = True, **kwargs: Any) -> Any:
    """PyTorch's ``torch.utils.checkpoint.checkpoint(function, *args)``: ``function(*args,
    **kwargs)`` whose intermediate values are recomputed in the backward pass instead of
    stored (:func:`funcgrad.checkpoint`), inside ``nn.grad``/``nn.jit`` as anywhere.

    ``function`` may be a module (``checkpoint(self.block, x)``, the usual form) and
    ``args`` may hold modules: they are passed through the checkpoint, so their buffer
    updates (Dropout's key, BatchNorm's running statistics) are written back, once (a module
    only captured by a lambda cannot be: its Dropout or BatchNorm raises). Dropout masks
    are the same in the recomputation (the key is an input), as PyTorch's
    ``preserve_rng_state``; ``use_reentrant`` is accepted and has no effect, as are
    ``determinism_check`` (``"default"`` or ``"none"``), ``debug`` and ``early_stop`` (the
    recomputation is pure, so it always matches); as PyTorch's, ``context_fn`` and
    ``debug=True`` need ``use_reentrant=False`` (unset counts as True, PyTorch's default).
    ``context_fn`` returns two context managers: the block's forward runs
    under the first; the second, PyTorch's recomputation context, has nothing to wrap.
    ``context_fn=functools.partial(create_selective_checkpoint_contexts, policy)`` (from
    ``funcgrad_nn.utils.checkpoint``) is selective checkpointing: the operations the policy
    marks saved are kept, the rest recomputed.

    One deliberate difference: PyTorch (both ``use_reentrant`` modes) runs the block's
    forward again in the backward pass *with its side effects*, so a training-mode BatchNorm
    updates its running statistics twice per step (``num_batches_tracked`` +2), unlike the
    same model without checkpointing (pytorch/pytorch#96136). Here the recomputation is
    pure: the statistics are updated once, exactly as without ``checkpoint``.

    Under anomaly detection (``detect_anomaly``/``debug_nans``) the block runs without
    recomputation, so a NaN in its backward pass names the operation inside it.

    >>> import numpy as np, funcgrad_nn as nn
    >>> block = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.1), nn.Tanh())
    >>> loss = lambda m, x: nn.checkpoint(m, x).sum()
    >>> nn.jit(nn.grad(loss))(block, np.ones((2, 4), np.float32))[0].weight.shape
    (4, 4)
    """
    del preserve_rng_state, early_stop
    if determinism_check not in ("default", "none"):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got "
                         f"{determinism_check}")
    noop = (context_fn is None or getattr(context_fn, "__name__", None) == "noop_context_fn"
            and getattr(context_fn, "__module__", None) == "funcgrad_nn.utils.checkpoint")
    if use_reentrant is not False and (not noop or debug is not False):
        # PyTorch's rule: use_reentrant unset means True (it warns to pass it)
        raise ValueError("Passing `context_fn` or `debug` is only supported when "
                         "use_reentrant=False.")
    if context_fn is not None:
        forward_context, _ = context_fn()
        with forward_context:
            return checkpoint(function, *args, use_reentrant=use_reentrant, **kwargs)
    if nans_enabled():
        # Anomaly detection (debug_nans) checks a checkpoint's recomputation as one
        # operation; run the block plainly (same values and gradients, more memory) so a NaN
        # in its backward pass is traced to the forward operation inside, as PyTorch names it.
        return function(*args, **kwargs)
    owner = getattr(function, "__self__", None)
    if isinstance(owner, Module) and not isinstance(function, Module):
        # A bound method (``checkpoint(self._block, x)``, as HF/timm write it): its module
        # goes through as an argument, so the buffers it updates are written back.
        return checkpoint(function.__func__, owner, *args, **kwargs)
    call = (function,) + args
    policy = selective_policy.get()

    def inner(*a: Any) -> Any:
        _collect(a)
        before = {i: _buffer_dict(m) for i, m in enumerate(a) if isinstance(m, Module)}
        token = selective_policy.set(None)  # a checkpoint nested inside has its own policy
        try:
            out = a[0](*a[1:], **kwargs)
        finally:
            selective_policy.reset(token)
        # Only the buffers the call replaced come out: an unchanged one (an eval-mode
        # BatchNorm's) would come back as the checkpoint's traced output, which a module
        # outside an enclosing plain jit/make_jaxpr cannot store.
        changed = {}
        for i, old in before.items():
            new = {k: v for k, v in _buffer_dict(a[i]).items() if old.get(k) is not v}
            if new:
                changed[i] = new
        return out, changed

    static = tuple(i for i, a in enumerate(call)
                   if not isinstance(a, Module) and callable(a))  # a plain function
    out, bufs = funcgrad.checkpoint(inner, static_argnums=static, policy=policy)(
        *(_dedup(a) for a in call))
    for i, d in bufs.items():
        _write_back(call[i], d)
    return out


def jit(fn: Callable[..., Any] | None = None, **jit_kwargs: Any) -> Any:
    """``funcgrad.jit`` that accepts modules among the arguments (their parameters/buffers are
    traced inputs; the rest is static, so e.g. ``train()``/``eval()`` retraces) and writes
    buffer updates back to the caller's modules. Keyword options pass to ``funcgrad.jit``.

    >>> import numpy as np, funcgrad_nn as nn
    >>> bn = nn.BatchNorm1d(2)
    >>> f = nn.jit(lambda m, x: m(x))
    >>> f(bn, np.ones((4, 2), np.float32)).shape, int(bn.num_batches_tracked)
    ((4, 2), 1)
    """
    if fn is None:
        return lambda f: jit(f, **jit_kwargs)

    def inner(*args: Any, **kwargs: Any) -> Any:
        _collect(args)
        out = _call_user(fn, *args, **kwargs)
        bufs = {i: _buffer_dict(a, writes=True) for i, a in enumerate(args) if isinstance(a, Module)}
        return out, bufs, _take_marks(out)

    def probing(*args: Any, **kwargs: Any) -> Any:
        token = F.implicit_key.set(F.PROBE)
        try:
            return inner(*args, **kwargs)
        finally:
            F.implicit_key.reset(token)

    def keyed(rng: Any, *args: Any, **kwargs: Any) -> Any:
        token = F.implicit_key.set([rng])
        try:
            return inner(*args, **kwargs)
        finally:
            F.implicit_key.reset(token)

    # A random F function without key= (F.dropout(x, p, training=True) in a ported forward)
    # draws from a key nn.jit passes in, fresh from the global generator at every call; a
    # function is traced with one only once it has asked for it (NeedsImplicitKey), so
    # others keep their signature and the generator's stream.
    needs_key = [False]

    def make(key: Any) -> Any:
        base = keyed if needs_key[0] else probing
        # funcgrad.jit caches traces on the function's identity: a fresh one per state
        fun = base if not key else functools.update_wrapper(functools.partial(base), base)
        kw = dict(jit_kwargs)
        if needs_key[0]:  # the key is the first argument: the user's static ones shift
            for name in ("static_argnums", "donate_argnums"):
                if name in kw:
                    nums = kw[name]
                    kw[name] = (nums + 1 if isinstance(nums, int) else
                                tuple(n + 1 if n >= 0 else n for n in nums))
        return funcgrad.jit(fun, **kw)

    # One jitted function per autocast state: the casts are decided while tracing, so a step
    # traced outside ``nn.autocast`` must be traced again inside it (and back).
    jitted_by_autocast: dict[Any, Any] = {(): make(())}

    @functools.wraps(fn)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        key = amp.state_key()
        jitted = jitted_by_autocast.get(key)
        if jitted is None:
            jitted = jitted_by_autocast[key] = make(key)
        call_args = [_dedup(a) for a in args]
        if not needs_key[0]:
            try:
                out, bufs, marks = jitted(*call_args, **kwargs)
            except F.NeedsImplicitKey:
                needs_key[0] = True
                jitted_by_autocast.clear()
                jitted = jitted_by_autocast[key] = make(key)
        if needs_key[0]:
            out, bufs, marks = jitted(_step_key(args, kwargs), *call_args, **kwargs)
        for i, d in bufs.items():
            _write_back(args[i], d)
        _put_marks(out, marks)
        return out

    return wrapped


def vmap(fn: Callable[..., Any], in_axes: Any = 0, out_axes: Any = 0,
         **vmap_kwargs: Any) -> Callable[..., Any]:
    """``funcgrad.vmap`` that accepts modules: with an int/None ``in_axes``, module arguments
    are broadcast (axis None) and the others mapped over ``in_axes``; a tuple ``in_axes`` is
    used as given (a module's entry may be a prefix: None, or an int to map a stacked
    module). Buffer updates are written back only when they do not depend on the mapped
    axis (else the call raises: use ``eval()`` or an explicit loop).

    >>> import numpy as np, funcgrad_nn as nn
    >>> m = nn.Linear(3, 2)
    >>> per_example = nn.vmap(lambda m, x: m(x))(m, np.ones((5, 3), np.float32))
    >>> per_example.shape
    (5, 2)
    """

    @functools.wraps(fn)
    def wrapped(*args: Any) -> Any:
        axes = in_axes
        if not isinstance(axes, (tuple, list)):
            axes = tuple(None if isinstance(a, Module) else axes for a in args)

        def inner(*a: Any) -> Any:
            _collect(a)
            out = _call_user(fn, *a)
            return out, {i: _buffer_dict(m) for i, m in enumerate(a) if isinstance(m, Module)}

        # A module whose axis entry is a full pytree (not a prefix) keeps its own layout.
        vargs = [_dedup(a) if ax is None or isinstance(ax, int) else a
                 for a, ax in zip(args, axes)]
        try:
            out, bufs = funcgrad.vmap(inner, in_axes=tuple(axes), out_axes=(out_axes, None),
                                      **vmap_kwargs)(*vargs)
        except ValueError as e:
            raise _per_example_buffer_error(e, args) from None
        for i, d in bufs.items():
            if axes[i] is None:
                _write_back(args[i], d)
        return out

    return wrapped


_PER_EXAMPLE_BUFFER = re.compile(r"out_axes is None for output out\[1\]\[(\d+)\]\['([^']*)'\]")


def _per_example_buffer_error(e: ValueError, args: tuple) -> ValueError:
    # funcgrad.vmap names the output path: out[1] is inner()'s buffer dict (argument index,
    # buffer name). Say it in the module's terms, as PyTorch's vmap does for BatchNorm.
    hit = _PER_EXAMPLE_BUFFER.search(str(e))
    if hit is None:
        return e
    mod, name = args[int(hit.group(1))], hit.group(2)
    owner_path, _, buf = name.rpartition(".")
    owner = mod.get_submodule(owner_path) if owner_path else mod
    return ValueError(
        f"nn.vmap: {type(owner).__name__}{f' ({owner_path})' if owner_path else ''} would "
        f"update its buffer {buf!r} differently for each mapped example (a training-mode "
        "BatchNorm's running statistics over each example's own batch), and one module "
        "holds one value. Call .eval() on it (or build it with track_running_stats=False) "
        "before mapping, or map a module per example (stacked, in_axes=0)")


# -- Module.compile ------------------------------------------------------------------------

def _traced_argument(a: Any) -> bool:
    """Whether a compiled module call traces ``a`` (an array, or a pytree of arrays such as
    an LSTM's ``(h, c)``) rather than baking it in as a static value."""
    leaves = tree_util.tree_leaves(a)
    return bool(leaves) and all(hasattr(v, "shape") and hasattr(v, "dtype") for v in leaves)


def _has_forward_hooks(mod: Module) -> bool:
    """Whether a forward (pre-)hook would run in this call: a compiled call would run it
    once, while tracing, on traced values (a hook storing activations would keep tracers),
    so such calls run eagerly."""
    if _hooks.global_hooks()["forward"] or _hooks.global_hooks()["forward_pre"]:
        return True
    return any(m._forward_hooks or m._forward_pre_hooks for m in mod.modules())


def _call_compiled(mod: Module, args: tuple, kwargs: dict) -> Any:
    """A compiled module's call (see ``Module.compile``): through :func:`jit`, one program
    per signature of static (non-array) arguments; eager once tracing needed concrete
    values."""
    table = mod.__dict__["_compiled"]
    if table.get("eager") or _has_forward_hooks(mod):
        return mod._call_eager(args, kwargs)
    static = tuple(i for i, a in enumerate(args) if not _traced_argument(a))
    names = tuple(sorted(k for k, v in kwargs.items() if not _traced_argument(v)))
    try:
        hash(tuple(args[i] for i in static) + tuple(kwargs[k] for k in names))
    except TypeError:  # an unhashable static value (a list of ints...): this call eagerly
        return mod._call_eager(args, kwargs)
    fn = table.get((static, names))
    if fn is None:
        def call(m: Module, *a: Any, **k: Any) -> Any:
            return m._call_eager(a, k)

        fn = table[(static, names)] = jit(call, static_argnums=tuple(i + 1 for i in static),
                                          static_argnames=names)
    try:
        return fn(mod, *args, **kwargs)
    except ConcretizationError as e:
        table["eager"] = True
        warnings.warn(f"{type(mod).__name__}.compile(): the forward pass needs concrete "
                      f"values, so it cannot be compiled ({type(e).__name__}: "
                      f"{str(e).splitlines()[0]}); it runs eagerly from now on",
                      stacklevel=3)
        return mod._call_eager(args, kwargs)


_module._COMPILED_CALLER[:] = [_call_compiled]


# -- torch.compile --------------------------------------------------------------------------

def compile(model: Any = None, *, fullgraph: bool = False, dynamic: bool | None = None,  # noqa: A001
            backend: Any = "inductor", mode: str | None = None,
            options: dict | None = None, disable: bool = False) -> Any:
    """PyTorch's ``torch.compile``: ``compile(model)`` compiles a module in place
    (:meth:`Module.compile`) and returns it; ``compile(fn)`` returns ``fn`` compiled with
    :func:`jit` (modules among its arguments allowed, their buffer updates written back),
    array arguments (and pytrees of them) traced and other arguments static, one program per
    static signature, as ``torch.compile`` specialises on Python values. A function that
    needs concrete values (Python control flow on array contents) warns once and runs
    eagerly from then on, as PyTorch falls back at a graph break; with ``fullgraph=True``
    that is an error instead, as PyTorch's. Used bare, or as ``@compile`` /
    ``@compile(mode=...)``; ``disable=True`` returns ``model`` itself. ``dynamic``,
    ``backend``, ``mode`` and ``options`` are accepted and have no effect. Unlike PyTorch,
    a compiled module is the module itself, not an ``OptimizedModule`` wrapper: its
    ``state_dict()`` keys have no ``_orig_mod.`` prefix (code that strips that prefix from a
    checkpoint's keys works unchanged).

    >>> import numpy as np, funcgrad.numpy as fnp, funcgrad_nn as nn
    >>> @nn.compile
    ... def loss_fn(model, x):
    ...     return fnp.mean(model(x) ** 2)
    >>> net = nn.compile(nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4)))
    >>> float(loss_fn(net, np.ones((2, 3), np.float32))) >= 0, int(net[1].num_batches_tracked)
    (True, 1)
    """
    settings = {"fullgraph": fullgraph, "dynamic": dynamic, "backend": backend, "mode": mode,
                "options": options, "disable": disable}
    if model is None:
        return lambda m: compile(m, **settings)
    if disable:
        return model
    if isinstance(model, Module):
        model.compile(**settings)
        return model
    if not callable(model):
        raise TypeError(f"compile: expected a Module or a callable, got "
                        f"{type(model).__name__}")
    table: dict[Any, Any] = {}

    @functools.wraps(model)
    def compiled(*args: Any, **kwargs: Any) -> Any:
        if table.get("eager"):
            return model(*args, **kwargs)
        static = tuple(i for i, a in enumerate(args)
                       if not (isinstance(a, Module) or _traced_argument(a)))
        names = tuple(sorted(k for k, v in kwargs.items()
                             if not (isinstance(v, Module) or _traced_argument(v))))
        try:
            hash(tuple(args[i] for i in static) + tuple(kwargs[k] for k in names))
        except TypeError:  # an unhashable static value (a list of ints...): this call eagerly
            return model(*args, **kwargs)
        fn = table.get((static, names))
        if fn is None:
            fn = table[(static, names)] = jit(model, static_argnums=static,
                                              static_argnames=names)
        try:
            return fn(*args, **kwargs)
        except ConcretizationError as e:
            if fullgraph:
                raise
            table["eager"] = True
            warnings.warn(f"compile({getattr(model, '__name__', 'fn')}): the function needs "
                          f"concrete values, so it cannot be compiled ({type(e).__name__}: "
                          f"{str(e).splitlines()[0]}); it runs eagerly from now on",
                          stacklevel=2)
            return model(*args, **kwargs)

    return compiled
