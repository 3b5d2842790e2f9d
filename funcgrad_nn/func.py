"""``funcgrad_nn.func``: ``torch.func``'s names and signatures over funcgrad's transforms.

PyTorch's composable transforms are JAX's, so most of this module is funcgrad's own
transforms under ``torch.func``'s argument names: ``vmap(func, in_dims, out_dims,
randomness, chunk_size=)``, ``grad``, ``grad_and_value`` (which returns ``(grad, value)``,
PyTorch's order, not JAX's ``(value, grad)``), ``vjp``, ``jvp``, ``linearize``, ``jacrev``,
``jacfwd``, ``hessian``; plus ``functional_call`` and ``stack_module_state`` for modules.

``vmap``'s ``randomness`` governs the keys modules draw from (``nn.F.split_key``: Dropout's
and the other random layers'): ``'error'`` refuses a key shared by every example,
``'different'`` mixes in the example's index, ``'same'`` shares it, as PyTorch's global
generator behaves. Explicit keys (``funcgrad.random``) are the caller's: a key batched along
the mapped axis gives different samples, a broadcast one (``in_dims`` None) the same.

Example (PyTorch's model-ensembling recipe, imports changed):
    >>> import numpy as np, funcgrad_nn as nn
    >>> from funcgrad_nn.func import functional_call, stack_module_state, vmap
    >>> _ = nn.manual_seed(0)
    >>> models = [nn.Linear(3, 2) for _ in range(4)]
    >>> params, buffers = stack_module_state(models)
    >>> params["weight"].shape
    (4, 2, 3)
    >>> def fmodel(params, buffers, x):
    ...     return functional_call(models[0], (params, buffers), (x,))
    >>> x = np.ones((5, 3), np.float32)
    >>> out = vmap(fmodel, in_dims=(0, 0, None))(params, buffers, x)
    >>> out.shape
    (4, 5, 2)
    >>> bool(np.allclose(out[2], models[2](x), atol=1e-6))
    True
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy

import funcgrad
from funcgrad import numpy as fnp
from funcgrad import tree_util
from funcgrad.avals import float0, get_aval
from funcgrad.backend import device_of, is_writeable
from funcgrad.core import current_trace, is_tracer
from funcgrad.interpreters.staging import staging_below
from funcgrad_nn import functional as F
from funcgrad_nn.layers.normalization import _BatchNorm
from funcgrad_nn.module import Module, is_array
from funcgrad_nn.transforms import torch_cotangents
from funcgrad_nn.utils.stateless import functional_call, vmapped_buffers

__all__ = [
    "vmap", "grad", "grad_and_value", "vjp", "jvp", "linearize", "jacrev", "jacfwd",
    "hessian", "functional_call", "stack_module_state", "functionalize",
    "replace_all_batch_norm_modules_", "rearrange", "debug_unwrap",
]

_RANDOMNESS = ("error", "different", "same")


# -- dict order ----------------------------------------------------------------------------------
# funcgrad's pytrees (as JAX's) rebuild dicts in sorted key order; PyTorch's keep insertion
# order, and torch.func code zips gradient dicts with ``model.parameters()``. These two helpers
# give results the key order of the dicts they mirror (the arguments, or the function's output).


def _skeleton(x: Any) -> Any:
    """The dict/list/tuple nesting of ``x`` with its dict key order; leaves become None."""
    if type(x) is dict:
        return {k: _skeleton(v) for k, v in x.items()}
    if type(x) in (list, tuple):
        return type(x)(_skeleton(v) for v in x)
    return None


def _reorder(skel: Any, value: Any) -> Any:
    """``value`` with every dict in ``skel``'s key order (where the key sets match)."""
    if type(skel) is dict and type(value) is dict and set(skel) == set(value):
        return {k: _reorder(skel[k], value[k]) for k in skel}
    if type(skel) in (list, tuple) and type(value) is type(skel) and len(skel) == len(value):
        return type(value)(_reorder(s, v) for s, v in zip(skel, value))
    return value


def _recording(func: Callable[..., Any], box: list) -> Callable[..., Any]:
    """``func`` called with its arguments' dicts in the caller's key order (``box[0]``, set by
    the wrapper before the call), recording its output's skeleton in ``box[1]``."""

    def recorded(*args: Any, **kwargs: Any) -> Any:
        if box:
            args, kwargs = _reorder(box[0], (args, kwargs))
        out = func(*args, **kwargs)
        box[1:] = [_skeleton(out)]
        return out

    return recorded


def _enter(box: list, args: tuple, kwargs: dict) -> None:
    box[:1] = [_skeleton((args, kwargs))]  # keeps box[1]: a cached trace may not re-record


def _out_skeleton(box: list) -> Any:
    return box[1] if len(box) > 1 else None


def _nest(outer: Any, inner: Any) -> Any:
    """The skeleton of a Jacobian: ``outer``'s structure with ``inner`` at each leaf."""
    if outer is None:
        return inner
    if type(outer) is dict:
        return {k: _nest(v, inner) for k, v in outer.items()}
    return type(outer)(_nest(v, inner) for v in outer)


def _jacobian_keeping_order(jac: Callable[..., Any], func: Callable[..., Any],
                            argnums: int | tuple[int, ...], has_aux: bool, n_levels: int,
                            forward: bool) -> Callable[..., Any]:
    """``jac(recorded func)`` whose result's dicts follow the output's, then the arguments'
    key order (``n_levels`` argument levels: 2 for a Hessian); ``forward``: the outer
    Jacobian is forward mode (PyTorch's error kind for an integer argument)."""
    _argnums_form(argnums)
    box: list = []
    j = jac(_recording(func, box))

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        _check_float_args(args, argnums, forward)
        _enter(box, args, kwargs)
        res = j(*args, **kwargs)
        skel = _out_skeleton(box)
        out_skel, aux_skel = (skel if has_aux and skel is not None else (skel, None))
        arg_skel = _arg_skeleton(args, argnums)
        inner = arg_skel
        for _ in range(n_levels - 1):
            inner = _nest(arg_skel, inner)
        if has_aux:
            return _reorder(_nest(out_skel, inner), res[0]), _reorder(aux_skel, res[1])
        return _reorder(_nest(out_skel, inner), res)

    return wrapped


def _scalar_checked(func: Callable[..., Any], has_aux: bool, who: str) -> Callable[..., Any]:
    """``func`` raising PyTorch's RuntimeError when its output is not a 0-d array (funcgrad's
    ``grad`` raises JAX's TypeError)."""

    def checked(*args: Any, **kwargs: Any) -> Any:
        res = func(*args, **kwargs)
        if has_aux and not (isinstance(res, tuple) and len(res) == 2):
            raise RuntimeError(f"{who}(f, ...): output of function f should be a tuple: "
                               "(output, aux) if has_aux is True")
        out = res[0] if has_aux else res
        shape = getattr(out, "shape", None)
        if shape is None or tuple(shape) != ():
            got = ("a " + type(out).__name__ if shape is None
                   else f"tensor with {len(shape)} dims")
            raise RuntimeError(f"{who}(f)(*args): Expected f(*args) to return a scalar "
                               f"Tensor, got {got}. Maybe you wanted to use the vjp or "
                               "jacrev APIs instead?")
        return res

    return checked


def _argnums_form(argnums: Any) -> tuple[int, ...]:
    """PyTorch's RuntimeErrors for a malformed ``argnums`` (funcgrad raises JAX's kinds);
    checked when the transform is made."""
    if isinstance(argnums, bool) or not (
            isinstance(argnums, int) or (isinstance(argnums, tuple | list) and all(
                isinstance(i, int) and not isinstance(i, bool) for i in argnums))):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    if not nums:
        raise RuntimeError("argnums must be non-empty")
    if len(set(nums)) != len(nums):
        raise RuntimeError(f"argnums elements must be unique, got {argnums}")
    return nums


def _check_argnums(args: tuple, argnums: Any) -> None:
    """PyTorch's RuntimeErrors for ``argnums`` not matching the call's arguments."""
    nums = _argnums_form(argnums)
    for i in nums:
        if not -len(args) <= i < len(args):
            raise RuntimeError(f"Got argnum={i}, but only {len(args)} positional inputs")
    if len({i % len(args) for i in nums}) != len(nums):
        raise RuntimeError(f"argnums elements must be unique, got {argnums}")


def _check_float_args(args: tuple, argnums: int | tuple[int, ...],
                      forward: bool = False) -> None:
    """PyTorch's error for an integer argument to differentiate: reverse mode's
    RuntimeError, forward mode's ValueError (``forward``)."""
    _check_argnums(args, argnums)
    for i in (argnums,) if isinstance(argnums, int) else argnums:
        for leaf in funcgrad.tree_util.tree_leaves(args[i]):
            dt = getattr(leaf, "dtype", None)
            if dt is not None and not isinstance(leaf, type) and \
                    numpy.dtype(dt).kind not in "fc":
                if forward:
                    raise ValueError(f"Expected primal to be floating point or complex, but "
                                     f"got: {numpy.dtype(dt)} (argument {i})")
                raise RuntimeError(f"only Tensors of floating point dtype can require "
                                   f"gradients (argument {i} has dtype {numpy.dtype(dt)})")


def _arg_skeleton(args: tuple, argnums: int | tuple[int, ...]) -> Any:
    if isinstance(argnums, int):
        return _skeleton(args[argnums])
    return tuple(_skeleton(args[i]) for i in argnums)


def vmap(func: Callable[..., Any], in_dims: Any = 0, out_dims: Any = 0,
         randomness: str = "error", *, chunk_size: int | None = None) -> Callable[..., Any]:
    """``torch.func.vmap``: :func:`funcgrad.vmap` with PyTorch's argument names.

    ``in_dims``/``out_dims`` are ``in_axes``/``out_axes`` (an int, ``None``, or a tuple with
    one entry per positional argument, nested like the arguments); keyword arguments are not
    mapped (passed whole to every call, as PyTorch's); ``chunk_size`` maps that many examples
    at a time. ``randomness`` must be ``'error'``, ``'different'`` or ``'same'`` (see the
    module docstring: it decides the masks of a training-mode Dropout inside).

    Example:
        >>> import numpy as np
        >>> vmap(lambda a, b: a @ b, in_dims=(0, None))(np.ones((3, 2)), np.ones(2)).tolist()
        [2.0, 2.0, 2.0]
    """
    if randomness not in _RANDOMNESS:
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness!r}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size < 1):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got "
                         f"{chunk_size!r})")
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        # Keyword arguments are not mapped (PyTorch's rule; JAX maps them): closed over.
        box: list = []
        _enter(box, args, {})
        rec = _recording(lambda *a: _only_arrays(func(*a, **kwargs), out_dims, func), box)
        n, leaf = _batch_size(args, in_dims)
        if n is None:  # nothing mapped (or a bad in_dims): funcgrad.vmap says what is wrong
            mapped = funcgrad.vmap(rec, in_axes=in_dims, out_axes=out_dims,
                                   chunk_size=chunk_size)
            return _reorder(_out_skeleton(box), mapped(*args))

        # The example's index rides along as a mapped argument (so chunk_size slices it as
        # the data): random keys split inside (a Dropout's) follow ``randomness`` with it.
        # randomness='same' in chunks: every chunk replays the first one's key draws
        chunks: list | None = [[], 0] if randomness == "same" and chunk_size is not None \
            and n > chunk_size else None

        dims = tuple(in_dims) if isinstance(in_dims, tuple | list) else (in_dims,) * len(args)
        # mapped arrays that can take a buffer update made by functional_call inside (a
        # stacked BatchNorm ensemble's running statistics): position among the leaves -> axis
        targets = _writable_mapped(args, dims)

        def inner(index: Any, *a: Any) -> Any:
            token = F.vmap_randomness.set((randomness, index, F.vmap_randomness.get()))
            c_token = None
            if chunks is not None:  # (else an enclosing chunked vmap's replay goes on)
                chunks[1] = 0
                c_token = F.vmap_same_chunks.set(chunks)
            writes: dict[int, Any] = {}
            w_token = None
            if targets:
                leaves = tree_util.tree_leaves(a)
                w_token = vmapped_buffers.set(
                    ({id(leaves[p]): p for p in targets}, writes, vmapped_buffers.get()))
            try:
                out = rec(*a)
                return (out, writes) if targets else out
            finally:
                if w_token is not None:
                    vmapped_buffers.reset(w_token)
                if c_token is not None:
                    F.vmap_same_chunks.reset(c_token)
                F.vmap_randomness.reset(token)

        o_axes = (out_dims, 0) if targets else out_dims
        # on the data's device, as the modules drawing keys are (a traced leaf, under jit,
        # has its device in its aval)
        where = (device_of(leaf) or getattr(get_aval(leaf), "device", None)) \
            if is_array(leaf) else None
        index = fnp.arange(n, dtype=numpy.uint32, device=where)
        if (chunk_size is not None and n > chunk_size and randomness != "error"
                and staging_below(current_trace())):
            # Under jit funcgrad.vmap loops over chunks with a scan, whose body cannot advance
            # a module's key (state outside the loop); random modules are allowed here, so
            # the chunks are calls one after another, as PyTorch's loop
            out = _unrolled_chunks(funcgrad.vmap(inner, in_axes=(0, *dims), out_axes=o_axes),
                                   (index, *args), (0, *dims), o_axes, n, chunk_size)
        else:
            out = funcgrad.vmap(inner, in_axes=(0, *dims), out_axes=o_axes,
                                chunk_size=chunk_size)(index, *args)
        if targets:
            out, writes = out
            _write_stacked(args, targets, writes)
        return _reorder(_out_skeleton(box), out)

    return wrapped


def _only_arrays(out: Any, out_dims: Any, func: Callable[..., Any]) -> Any:
    """``out``, after PyTorch's check that every output mapped along an ``out_dims`` entry
    that is not None is an array (funcgrad.vmap would broadcast a number, or skip a None)."""

    def walk(o: Any, d: Any) -> None:
        if d is None:
            return
        if type(d) in (tuple, list) and isinstance(o, tuple | list) and len(d) == len(o):
            for v, dv in zip(o, d):
                walk(v, dv)
        elif isinstance(o, tuple | list):
            for v in o:
                walk(v, d)
        elif type(o) is dict:
            for v in o.values():
                walk(v, d)
        elif not is_array(o):
            name = getattr(func, "__name__", repr(func))
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                             f"{type(o)}. Did you mean to set out_dims= to None for output?")

    walk(out, out_dims)
    return out


def _unrolled_chunks(mapped: Callable[..., Any], args: tuple, dims: tuple, out_dims: Any,
                     n: int, chunk: int) -> Any:
    """``mapped(*args)`` (a vmapped function) evaluated ``chunk`` examples at a time, one
    call after another; the pieces put together along ``out_dims``."""
    prefixes = [tree_util.broadcast_prefix(d, a) for a, d in zip(args, dims)]
    pieces = []
    for start in range(0, n, chunk):
        stop = min(start + chunk, n)
        part = []
        for a, axes in zip(args, prefixes):
            leaves, tree = tree_util.tree_flatten(a)
            part.append(tree_util.tree_unflatten(tree, [
                x if ax is None else fnp.take(x, fnp.arange(start, stop), axis=ax)
                for x, ax in zip(leaves, axes)]))
        pieces.append(mapped(*part))
    tree = tree_util.tree_structure(pieces[0])
    axes = tree_util.broadcast_prefix(out_dims, pieces[0])
    columns = zip(*[tree_util.tree_leaves(p) for p in pieces])
    return tree_util.tree_unflatten(tree, [
        col[0] if ax is None else fnp.concatenate(col, axis=ax)
        for col, ax in zip(columns, axes)])


def _writable_mapped(args: tuple, dims: tuple) -> dict[int, int]:
    """Position among ``args``' leaves -> mapped axis, for the mapped leaves that are
    writable arrays (a buffer update inside may be written into them, as PyTorch's)."""
    out: dict[int, int] = {}
    pos = 0
    for a, d in zip(args, dims):
        axes = tree_util.broadcast_prefix(d, a)
        for x, ax in zip(tree_util.tree_leaves(a), axes):
            if isinstance(ax, int) and is_array(x) and not is_tracer(x) and is_writeable(x):
                out[pos] = ax
            pos += 1
    return out


def _write_stacked(args: tuple, targets: dict[int, int], writes: dict[int, Any]) -> None:
    """The buffer updates made under ``vmap`` written into the caller's stacked arrays."""
    leaves = tree_util.tree_leaves(args)
    for p, new in writes.items():
        if is_tracer(new):  # (an enclosing transformation: refused, as PyTorch's)
            raise RuntimeError(
                "functional_call under vmap updated a buffer given as a stacked array (as "
                "BatchNorm's running statistics in training mode), but the update is a "
                "traced value of an enclosing transformation and cannot be written into it; "
                "call the models' eval() first or leave the buffers out of the dict")
        given = leaves[p]
        given[...] = fnp.moveaxis(new, 0, targets[p]) if targets[p] != 0 else new


def _batch_size(args: tuple, in_dims: Any) -> tuple[int | None, Any]:
    """The size of the mapped axis and the first mapped leaf, or ``(None, None)`` when
    nothing is mapped, ``in_dims`` does not fit ``args`` or the sizes differ
    (``funcgrad.vmap`` then raises its error, naming the caller's arguments)."""
    if isinstance(in_dims, tuple | list):
        if len(in_dims) != len(args):
            return None, None
        dims = tuple(in_dims)
    else:
        dims = (in_dims,) * len(args)
    size, first = None, None
    for a, d in zip(args, dims):
        try:
            axes = tree_util.broadcast_prefix(d, a)
        except (TypeError, ValueError):
            return None, None
        for leaf, ax in zip(tree_util.tree_leaves(a), axes):
            if ax is None:
                continue
            shape = numpy.shape(leaf)
            if not isinstance(ax, int) or not -len(shape) <= ax < len(shape):
                return None, None
            if size is None:
                size, first = int(shape[ax]), leaf
            elif int(shape[ax]) != size:  # inconsistent: vmap's own error names the arguments
                return None, None
    return size, first


def grad(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0,
         has_aux: bool = False) -> Callable[..., Any]:
    """``torch.func.grad``: the gradient of a function returning a scalar; with ``has_aux``
    the function returns ``(output, aux)`` and the result is ``(grad, aux)``.

    Example:
        >>> import numpy as np
        >>> grad(lambda x: (x ** 2).sum())(np.array([1.0, 2.0])).tolist()
        [2.0, 4.0]
    """
    _argnums_form(argnums)
    box: list = []
    g = funcgrad.grad(_recording(_scalar_checked(func, has_aux, "grad"), box),
                      argnums=argnums, has_aux=has_aux)

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        _check_float_args(args, argnums)
        _enter(box, args, kwargs)
        out = g(*args, **kwargs)
        if has_aux:
            grads, aux = out
            grads = torch_cotangents(grads)
            skel = _out_skeleton(box)
            return (_reorder(_arg_skeleton(args, argnums), grads),
                    _reorder(skel[1] if skel else None, aux))
        return _reorder(_arg_skeleton(args, argnums), torch_cotangents(out))

    return wrapped


def grad_and_value(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0,
                   has_aux: bool = False) -> Callable[..., Any]:
    """``torch.func.grad_and_value``: ``(grad, value)`` (``(grad, (value, aux))`` with
    ``has_aux``) — PyTorch's order, the reverse of :func:`funcgrad.value_and_grad`.

    Example:
        >>> import numpy as np
        >>> g, v = grad_and_value(lambda x: (x ** 2).sum())(np.array([1.0, 2.0]))
        >>> g.tolist(), float(v)
        ([2.0, 4.0], 5.0)
    """
    _argnums_form(argnums)
    box: list = []
    vg = funcgrad.value_and_grad(
        _recording(_scalar_checked(func, has_aux, "grad_and_value"), box), argnums=argnums,
        has_aux=has_aux)

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        _check_float_args(args, argnums)
        _enter(box, args, kwargs)
        value, g = vg(*args, **kwargs)
        return (_reorder(_arg_skeleton(args, argnums), torch_cotangents(g)),
                _reorder(_out_skeleton(box), value))

    return wrapped


def vjp(func: Callable[..., Any], *primals: Any, has_aux: bool = False) -> Any:
    """``torch.func.vjp``: ``(output, vjp_fn)`` (``(output, vjp_fn, aux)`` with ``has_aux``);
    ``vjp_fn(cotangents)`` returns a tuple with one gradient per primal (PyTorch's
    ``retain_graph``/``create_graph`` keywords are accepted: it can always be called again,
    and its result is differentiable under an enclosing transformation).

    Example:
        >>> import numpy as np
        >>> out, vjp_fn = vjp(lambda x: x ** 2, np.array([1.0, 3.0]))
        >>> vjp_fn(np.ones(2))[0].tolist()
        [2.0, 6.0]
    """
    box: list = []
    _enter(box, primals, {})
    res = funcgrad.vjp(_recording(func, box), *primals, has_aux=has_aux)
    out, pull = res[0], res[1]
    skel = _out_skeleton(box)
    out_skel = skel[0] if has_aux and skel is not None else skel
    in_skel = _skeleton(tuple(primals))

    def vjp_fn(cotangents: Any, retain_graph: bool = True,
               create_graph: bool | None = None) -> Any:
        # PyTorch's keywords: the pullback can always run again and is differentiable
        # PyTorch's cotangents and gradients of complex values are conjugates of funcgrad's
        return _reorder(in_skel, torch_cotangents(
            pull(torch_cotangents(_fit_cotangents(cotangents, out)))))

    if has_aux:
        return _reorder(out_skel, out), vjp_fn, _reorder(skel[1] if skel else None, res[2])
    return _reorder(out_skel, out), vjp_fn


def jvp(func: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any], *,
        strict: bool = False, has_aux: bool = False) -> Any:
    """``torch.func.jvp``: ``(output, jvp_out)`` (``(output, jvp_out, aux)`` with
    ``has_aux``); ``primals`` and ``tangents`` are tuples of the same structure.

    Example:
        >>> import numpy as np
        >>> out, t = jvp(lambda x: x ** 2, (np.array([3.0]),), (np.array([1.0]),))
        >>> t.tolist()
        [6.0]
    """
    if not isinstance(primals, tuple | list):
        raise RuntimeError(f"jvp(f, primals, tangents): Expected primals to be a tuple. E.g. "
                           f"it should be valid to call f(*primals). Got "
                           f"{type(primals).__name__}")
    if not isinstance(tangents, tuple | list):
        raise RuntimeError(f"jvp(f, primals, tangents): Expected tangents to be a tuple, got "
                           f"{type(tangents).__name__}")
    if len(primals) != len(tangents):
        raise RuntimeError(f"jvp(f, primals, tangents): Expected primals and tangents to have "
                           f"the same length; got {len(primals)} and {len(tangents)}")
    tangents = _fit_tangents(primals, tangents)
    box: list = []
    _enter(box, tuple(primals), {})
    res = funcgrad.jvp(_recording(func, box), tuple(primals), tuple(tangents), has_aux=has_aux)
    skel = _out_skeleton(box)
    out_skel = skel[0] if has_aux and skel is not None else skel
    tan = _integer_tangents(res[0], res[1])
    if has_aux:
        return (_reorder(out_skel, res[0]), _reorder(out_skel, tan),
                _reorder(skel[1] if skel else None, res[2]))
    return _reorder(out_skel, res[0]), _reorder(out_skel, tan)


def _integer_tangents(out: Any, tangents: Any) -> Any:
    """``tangents`` with each float0 one (of an integer or bool output, JAX's marker of "no
    tangent space") as zeros of its output's dtype: PyTorch's forward mode gives an integer
    output a zero tangent of its own dtype."""
    def fix(o: Any, t: Any) -> Any:
        if getattr(t, "dtype", None) == float0:
            return fnp.zeros_like(o)
        return t
    return tree_util.tree_map(fix, out, tangents)


def _cast_like(t: Any, like: Any) -> Any:
    """``t`` in ``like``'s dtype when both are floating or complex (PyTorch's autograd casts a
    gradient to its tensor's dtype; funcgrad refuses the mismatch)."""
    dt, lt = getattr(t, "dtype", None), getattr(like, "dtype", None)
    if dt is None or lt is None or dt == lt:
        return t
    if numpy.dtype(dt).kind in "fc" and numpy.dtype(lt).kind in "fc":
        return fnp.asarray(t, dtype=lt)
    return t


def _fit_tangents(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple:
    """``tangents`` checked against ``primals`` with PyTorch's RuntimeErrors (funcgrad raises
    its ArgumentMismatchError, a TypeError/ValueError), cast to the primals' dtypes."""
    p_leaves, p_tree = tree_util.tree_flatten(primals)
    t_leaves, t_tree = tree_util.tree_flatten(tangents)
    if type(primals) is not type(tangents) or p_tree != t_tree:
        raise RuntimeError(
            "jvp(f, primals, tangents): Expected primals and tangents to have the same python "
            "structure. For example, if primals is a tuple of 3 tensors, tangents also must "
            f"be. Got primals with structure {p_tree} and tangents with structure {t_tree}")
    for p, t in zip(p_leaves, t_leaves):
        ps, ts = tuple(numpy.shape(p)), tuple(numpy.shape(t))
        if ps != ts:
            raise RuntimeError(
                "Trying to set a forward gradient that has a different size than that of the "
                "original Tensor, this is not supported. Tensor is of size "
                f"{list(ps)} while the given forward gradient is of size {list(ts)}.")
    return tuple(tree_util.tree_unflatten(
        t_tree, [_cast_like(t, p) for p, t in zip(p_leaves, t_leaves)]))


def _fit_cotangents(cotangents: Any, out: Any) -> Any:
    """``vjp_fn``'s ``cotangents`` checked against the output with PyTorch's RuntimeErrors,
    cast to the outputs' dtypes."""
    o_leaves, o_tree = tree_util.tree_flatten(out)
    c_leaves, c_tree = tree_util.tree_flatten(cotangents)
    if o_tree != c_tree:
        raise RuntimeError(
            "Expected pytree structure of cotangents to be the same as pytree structure of "
            f"outputs to the function. cotangents: {c_tree}, primal output: {o_tree}")
    for i, (o, c) in enumerate(zip(o_leaves, c_leaves)):
        os_, cs = tuple(numpy.shape(o)), tuple(numpy.shape(c))
        if os_ != cs:
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {cs} and "
                               f"output[{i}] has a shape of {os_}.")
    return tree_util.tree_unflatten(c_tree, [_cast_like(c, o) for o, c in zip(o_leaves, c_leaves)])


def linearize(func: Callable[..., Any], *primals: Any) -> tuple[Any, Callable[..., Any]]:
    """``torch.func.linearize``: ``(output, jvp_fn)``; ``jvp_fn(*tangents)`` evaluates the
    Jacobian-vector product at ``primals`` without re-running ``func``.

    Example:
        >>> import numpy as np
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> out, jvp_fn = linearize(fnp.sin, np.array([0.0]))
        >>> jvp_fn(np.array([2.0])).tolist()
        [2.0]
    """
    out, f_jvp = funcgrad.linearize(func, *primals)

    def jvp_fn(*tangents: Any) -> Any:
        return _integer_tangents(out, f_jvp(*_fit_tangents(primals, tangents)))

    return out, jvp_fn


def jacrev(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, *,
           has_aux: bool = False, chunk_size: int | None = None,
           _preallocate_and_copy: bool = False) -> Callable[..., Any]:
    """``torch.func.jacrev``: the Jacobian by reverse mode (``chunk_size`` rows at a time).

    Example:
        >>> import numpy as np
        >>> jacrev(lambda x: x ** 2)(np.array([1.0, 2.0])).tolist()
        [[2.0, 0.0], [0.0, 4.0]]
    """
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"jacrev: `chunk_size` should be greater than 0 (got {chunk_size!r}).")
    def jac(f: Callable[..., Any]) -> Callable[..., Any]:
        j = funcgrad.jacrev(f, argnums=argnums, has_aux=has_aux, chunk_size=chunk_size)

        def rows(*args: Any, **kwargs: Any) -> Any:
            # its rows are vjps: PyTorch's conjugates for complex inputs (as grad's)
            res = j(*args, **kwargs)
            return (torch_cotangents(res[0]), res[1]) if has_aux else torch_cotangents(res)
        return rows

    return _jacobian_keeping_order(jac, func, argnums, has_aux, 1, False)


def jacfwd(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0,
           has_aux: bool = False, *, randomness: str = "error") -> Callable[..., Any]:
    """``torch.func.jacfwd``: the Jacobian by forward mode.

    Example:
        >>> import numpy as np
        >>> jacfwd(lambda x: x ** 3)(np.array([1.0, 2.0])).tolist()
        [[3.0, 0.0], [0.0, 12.0]]
    """
    if randomness not in _RANDOMNESS:
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness!r}")
    if randomness == "different":
        # PyTorch's jacfwd is vmap(jvp) over the tangent basis with this randomness: each
        # basis direction (each column) draws its own masks
        return _jacobian_keeping_order(
            lambda f: _jacfwd_by_vmap(f, argnums, has_aux, randomness), func, argnums,
            has_aux, 1, True)
    return _jacobian_keeping_order(
        lambda f: _random_checked(funcgrad.jacfwd(f, argnums=argnums, has_aux=has_aux),
                                  randomness), func, argnums, has_aux, 1, True)


def _jacfwd_by_vmap(func: Callable[..., Any], argnums: int | tuple[int, ...], has_aux: bool,
                    randomness: str) -> Callable[..., Any]:
    """PyTorch's ``jacfwd`` algorithm: ``jvp`` of ``func`` pushed along every direction of
    the standard basis of the ``argnums`` arguments, mapped with :func:`vmap` and its
    ``randomness``; the columns are put back as ``output.shape + input.shape`` blocks (aux
    from the first direction)."""

    def wrapper(*args: Any) -> Any:
        dyn = (argnums,) if isinstance(argnums, int) else tuple(argnums)
        primals = tuple(args[i] for i in dyn)
        flat, spec = tree_util.tree_flatten(primals)
        numels = [int(numpy.prod(fnp.shape(p))) for p in flat]
        total = sum(numels)
        basis, start = [], 0
        for p, n in zip(flat, numels):
            dtype = fnp.result_type(p)
            # on the primal's device (a traced one's, under jit, is in its aval)
            where = (device_of(p) or getattr(get_aval(p), "device", None)) \
                if is_array(p) else None
            eye = fnp.eye(total, dtype=dtype, device=where)
            basis.append(fnp.reshape(eye[:, start:start + n], (total, *fnp.shape(p))))
            start += n

        def call(*ps: Any) -> Any:
            new = list(args)
            for i, v in zip(dyn, ps):
                new[i] = v
            return func(*new)

        def push(*tangents: Any) -> Any:
            t = tree_util.tree_unflatten(spec, list(tangents))
            if has_aux:
                _, jvp_out, aux = funcgrad.jvp(call, primals, t, has_aux=True)
                return jvp_out, aux
            return funcgrad.jvp(call, primals, t)[1]

        results = vmap(push, randomness=randomness)(*basis)
        aux = None
        if has_aux:
            results, aux = results
            aux = tree_util.tree_map(lambda v: v[0], aux)
        leaves, out_tree = tree_util.tree_flatten(results)
        blocks = []
        for jac in leaves:
            cols = fnp.moveaxis(jac, 0, -1)
            out_shape = tuple(fnp.shape(cols))[:-1]
            pieces, start = [], 0
            for p, n in zip(flat, numels):
                pieces.append(fnp.reshape(cols[..., start:start + n],
                                          out_shape + tuple(fnp.shape(p))))
                start += n
            per_arg = tree_util.tree_unflatten(spec, pieces)
            blocks.append(per_arg[0] if isinstance(argnums, int) else per_arg)
        jac_tree = tree_util.tree_unflatten(out_tree, blocks)
        return (jac_tree, aux) if has_aux else jac_tree

    return wrapper


def _random_checked(f: Callable[..., Any], randomness: str) -> Callable[..., Any]:
    """``f`` (a forward-mode Jacobian) under PyTorch's ``randomness``: ``jacfwd`` maps over
    the tangent basis with ``vmap``, so with ``'error'`` (its default, and ``hessian``'s) a
    module's random draw raises PyTorch's RuntimeError; ``'same'`` computes the Jacobian of
    one random draw (``'different'`` goes through :func:`_jacfwd_by_vmap`)."""
    if randomness != "error":
        return f

    def checked(*args: Any, **kwargs: Any) -> Any:
        token = F.vmap_randomness.set(("error", None, F.vmap_randomness.get()))
        try:
            return f(*args, **kwargs)
        finally:
            F.vmap_randomness.reset(token)

    return checked


def hessian(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0
            ) -> Callable[..., Any]:
    """``torch.func.hessian``: ``jacfwd(jacrev(func))``.

    Example:
        >>> import numpy as np
        >>> hessian(lambda x: (x ** 3).sum())(np.array([1.0, 2.0])).tolist()
        [[6.0, 0.0], [0.0, 12.0]]
    """
    return _jacobian_keeping_order(
        lambda f: _random_checked(funcgrad.hessian(f, argnums=argnums), "error"), func,
        argnums, False, 2, True)


def _parse_side(side: str) -> list[list[str] | str]:
    """One side of an einops pattern: per axis a name, ``"..."``, or a group (a list of
    names; ``[]`` for ``()`` and ``1``: a unit axis)."""
    text = side.replace("(", " ( ").replace(")", " ) ")
    axes: list[list[str] | str] = []
    group: list[str] | None = None
    for tok in text.split():
        if tok == "(":
            if group is not None:
                raise ValueError(f"rearrange: nested parentheses in {side.strip()!r}")
            group = []
        elif tok == ")":
            if group is None:
                raise ValueError(f"rearrange: unbalanced parentheses in {side.strip()!r}")
            axes.append(group)
            group = None
        else:
            if tok != "..." and "." in tok:
                raise ValueError("Expression may contain dots only inside ellipsis (...); only "
                                 "one ellipsis for tensor")
            if tok.isdigit():
                if tok != "1":
                    raise ValueError("rearrange only supports unnamed axes of size 1")
                if group is None:
                    axes.append([])
                continue
            if not (tok == "..." or tok.isidentifier()):
                raise ValueError(f"rearrange: invalid axis name {tok!r}")
            if group is not None:
                group.append(tok)
            else:
                axes.append(tok)
    if group is not None:
        raise ValueError(f"rearrange: unbalanced parentheses in {side.strip()!r}")
    names = [n for a in axes for n in (a if isinstance(a, list) else [a])]
    if names.count("...") > 1:
        raise ValueError("Expression may contain dots only inside ellipsis (...); only one "
                         "ellipsis for tensor")
    dupes = sorted({n for n in names if names.count(n) > 1 and n != "..."})
    if dupes:
        raise ValueError(f"Indexing expression contains duplicate dimension '{dupes[0]}'")
    return axes


def rearrange(tensor: Any, pattern: str, **axes_lengths: int) -> Any:
    """``torch.func.rearrange``: einops' ``rearrange`` (``"b (h w) c -> b h w c"``, ``h=2``):
    a reshape, a transposition and a reshape, so it works under every transformation. Axes
    are names, groups ``(h w)`` (split or merged), ``...`` (the remaining axes) and unit axes
    ``1`` or ``()``; a list or tuple of arrays is stacked along a new first axis first.

    Example:
        >>> import numpy as np
        >>> rearrange(np.zeros((2, 6, 3)), "b (h w) c -> b h w c", h=2).shape
        (2, 2, 3, 3)
        >>> rearrange(np.arange(6).reshape(2, 3), "a b -> (b a)").tolist()
        [0, 3, 1, 4, 2, 5]
    """
    if isinstance(tensor, list | tuple):
        tensor = fnp.stack(tensor)
    if pattern.count("->") != 1:
        raise ValueError("Pattern must contain a single '->' separator")
    left_s, right_s = pattern.split("->")
    left, right = _parse_side(left_s), _parse_side(right_s)

    def named(axes: list) -> set[str]:
        return {n for a in axes for n in (a if isinstance(a, list) else [a])}

    only = named(left) ^ named(right)
    if only:
        raise ValueError("Identifiers only on one side of rearrange expression (should be on "
                         f"both): {only}")
    unknown = set(axes_lengths) - named(left)
    if unknown:
        raise ValueError(f"Identifiers not found in rearrange expression: {unknown}")
    shape = tuple(fnp.shape(tensor))
    has_ellipsis = "..." in left
    if has_ellipsis:
        if len(left) - 1 > len(shape):
            raise ValueError(f"Number of dimensions in pattern ({len(left) - 1}) must be less "
                             "than or equal to the number of dimensions in the tensor "
                             f"({len(shape)})")
    elif len(left) != len(shape):
        raise ValueError(f"Number of dimensions in pattern ({len(left)}) must be equal to the "
                         f"number of dimensions in the tensor ({len(shape)})")
    # the ellipsis stands for axes named ...0, ...1: it expands in place on both sides
    n_ell = len(shape) - len(left) + 1 if has_ellipsis else 0
    ell = [f"...{i}" for i in range(n_ell)]

    def expand(axes: list) -> list:
        out: list = []
        for a in axes:
            if a == "...":
                out += ell
            elif isinstance(a, list) and "..." in a:
                out.append([n for m in a for n in (ell if m == "..." else [m])])
            else:
                out.append(a)
        return out

    left, right = expand(left), expand(right)
    sizes: dict[str, int] = dict(axes_lengths)
    for axis, n in zip(left, shape):
        if isinstance(axis, str):
            sizes[axis] = n
            continue
        missing = [m for m in axis if m not in sizes]
        known = int(numpy.prod([sizes[m] for m in axis if m in sizes]))
        if len(missing) > 1:
            raise ValueError(f"rearrange: cannot infer the sizes of {missing} at once (give "
                             "all but one as keyword arguments)")
        if missing:
            if known == 0 or n % known:
                raise ValueError(f"rearrange: axis of size {n} does not split into "
                                 f"{[sizes.get(m, '?') for m in axis]}")
            sizes[missing[0]] = n // known
        elif known != n:
            raise ValueError(f"rearrange: axis of size {n} is not {axis} = "
                             f"{[sizes[m] for m in axis]}")
    flat_left = [n for a in left for n in ([a] if isinstance(a, str) else a)]
    flat_right = [n for a in right for n in ([a] if isinstance(a, str) else a)]
    out = fnp.reshape(tensor, tuple(sizes[n] for n in flat_left))
    out = fnp.transpose(out, tuple(flat_left.index(n) for n in flat_right))
    return fnp.reshape(out, tuple(
        sizes[a] if isinstance(a, str) else int(numpy.prod([sizes[m] for m in a]))
        for a in right))


def debug_unwrap(tensor: Any, *, recurse: bool = True) -> Any:
    """``torch.func.debug_unwrap``: the value without transformation wrappers, for
    debugging: the concrete array behind a tracer when one is known (under ``grad``/``jvp``
    eagerly), else the array itself.

    Example:
        >>> import numpy as np
        >>> debug_unwrap(np.ones(2)).tolist()
        [1.0, 1.0]
    """
    while is_tracer(tensor):
        concrete = tensor.to_concrete_value()
        if concrete is None:
            return tensor
        tensor = concrete
        if not recurse:
            break
    return tensor


def functionalize(func: Callable[..., Any], *, remove: str = "mutations") -> Callable[..., Any]:
    """``torch.func.functionalize``: funcgrad programs are functional already (in-place
    updates inside ``Function``\\ s rebind views), so this returns ``func`` unchanged.

    Example:
        >>> f = lambda x: x + 1
        >>> functionalize(f) is f
        True
    """
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(f"functionalize(f, remove='mutations'): received invalid argument "
                           f"for remove={remove!r}. Valid options are 'mutations' and "
                           "'mutations_and_views'.")
    return func


def stack_module_state(models: Sequence[Module]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``torch.func.stack_module_state``: ``(params, buffers)``, dicts from each
    ``named_parameters``/``named_buffers`` name to the models' arrays stacked along a new
    leading axis, for :func:`vmap` over :func:`functional_call`.

    The models must have the same structure and the same training mode. The stacked arrays
    are new arrays (the models are not tied to them).

    Example:
        >>> import funcgrad_nn as nn
        >>> p, b = stack_module_state([nn.BatchNorm1d(3), nn.BatchNorm1d(3)])
        >>> p["weight"].shape, b["running_mean"].shape
        ((2, 3), (2, 3))
    """
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same "
                           "training/eval mode.")
    first = type(models[0])
    if any(type(m) is not first for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def stack(named: Callable[[Module], Any], what: str) -> dict[str, Any]:
        per = [dict(named(m)) for m in models]
        names = list(per[0])
        for i, d in enumerate(per[1:], 1):
            if list(d) != names:
                raise RuntimeError(f"stack_module_state: model {i} has {what} {list(d)}, "
                                   f"model 0 has {names}; the models must have the same "
                                   "structure")
        out = {}
        for n in names:
            arrays = [d[n] for d in per]
            shapes = {tuple(a.shape) for a in arrays}
            if len(shapes) != 1:
                raise RuntimeError(f"stack_module_state: {what[:-1]} {n!r} has different "
                                   f"shapes across the models: {sorted(shapes)}")
            out[n] = fnp.stack(arrays)
        return out

    return (stack(lambda m: m.named_parameters(include_frozen=True), "parameters"),
            stack(lambda m: m.named_buffers(), "buffers"))


def replace_all_batch_norm_modules_(root: Module) -> Module:
    """``torch.func.replace_all_batch_norm_modules_``: make every batch norm in ``root``
    (``root`` included) stop tracking running statistics, in place, and return ``root``.

    Each ``BatchNorm*d`` (and ``SyncBatchNorm``) that tracks them gets ``running_mean``,
    ``running_var`` and ``num_batches_tracked`` set to None and ``track_running_stats`` to
    False, so it normalizes with the statistics of the batch it sees, in training and
    evaluation mode: PyTorch's recipe for ``vmap`` over a model with batch norm (per-example
    gradients, ensembles), where one running buffer cannot be updated per example.

    Example:
        >>> import numpy as np, funcgrad_nn as nn
        >>> model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
        >>> replace_all_batch_norm_modules_(model) is model
        True
        >>> model[1].running_mean is None, model[1].track_running_stats
        (True, False)
        >>> sorted(model.state_dict())
        ['0.bias', '0.weight', '1.bias', '1.weight']
    """
    for module in root.modules():
        if isinstance(module, _BatchNorm) and module.track_running_stats:
            module.running_mean = None
            module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root
