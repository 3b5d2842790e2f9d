"""``Function``: PyTorch's custom autograd functions, on funcgrad's custom derivative rules.

A subclass defines static ``forward(ctx, *args)`` and ``backward(ctx, *grad_outputs)`` (or
``forward(*args)`` plus ``setup_context(ctx, inputs, output)``), optionally ``jvp(ctx,
*tangents)``; ``MyFn.apply(*args)`` calls it. Each class becomes one
:class:`funcgrad.custom_vjp` (or :class:`funcgrad.custom_jvp` when it defines only ``jvp``):

- array arguments are the differentiable operands; every other argument (numbers, strings,
  ``None``, modules...) is static and gets ``None`` as its gradient, as in PyTorch;
- the ``ctx`` filled by ``forward`` travels to ``backward`` as the rule's residuals: the saved
  arrays and array-valued attributes are residual operands (so ``jit`` and ``vmap`` carry them),
  other attributes ride along as static data;
- ``backward`` runs as the backward pass of ``grad``/``vjp``; written with funcgrad operations
  it is itself differentiable, so derivatives of any order work. Forward mode (``jvp``,
  ``jacfwd``, ``hessian``, ``forward_ad``) runs the class's ``jvp`` when it defines one (as
  PyTorch), else transposes ``backward`` (which is linear in the grad outputs);
- under ``vmap`` and ``jit`` the same rules are batched / staged like any custom derivative.

Outputs marked with ``ctx.mark_non_differentiable`` receive zero gradients; with
``ctx.set_materialize_grads(False)`` ``backward`` sees ``None`` for them instead.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy

from funcgrad import tree_util
from funcgrad.avals import float0, get_aval
from funcgrad.core import Tracer, _trace_var, current_trace
from funcgrad.ops.custom_derivatives import SymbolicZero, custom_jvp, custom_vjp
from funcgrad.ops.elementwise import convert_element_type
from funcgrad_nn.autograd.grad_mode import _grad_enabled
from funcgrad_nn.autograd.graph import current_hooks
from funcgrad_nn.autograd.tensor_view import TensorViewTrace, unwrap, wrap

__all__ = ["Function", "FunctionCtx", "once_differentiable"]


def _is_array(x: Any) -> bool:
    return isinstance(x, Tracer) or (hasattr(x, "shape") and hasattr(x, "dtype")
                                     and not isinstance(x, numpy.generic | type))


class GradientCountError(TypeError, RuntimeError):
    """``backward`` returned more or fewer gradients than ``forward`` has inputs (PyTorch
    raises RuntimeError there)."""


class InvalidGradientError(ValueError, RuntimeError):
    """``backward`` returned a gradient of a shape that fits neither its input nor a
    broadcast of it (PyTorch raises RuntimeError there)."""


class FunctionCtx:
    """The ``ctx`` a ``Function``'s ``forward``/``setup_context`` fills and ``backward`` reads.

    Example:
        >>> ctx = FunctionCtx("Demo", (True,))
        >>> ctx.needs_input_grad
        (True,)
    """

    def __init__(self, fname: str, needs_input_grad: tuple[bool, ...],
                 hooks: tuple[Callable[[Any], Any], Callable[[Any], Any]] | None = None
                 ) -> None:
        self._fname = fname
        #: the saved-tensor hooks (autograd.graph.saved_tensors_hooks) active when the
        #: differentiated forward ran: (pack, unpack), or None
        self._hooks = hooks
        self.needs_input_grad = needs_input_grad
        self._saved: tuple[Any, ...] = ()
        #: per saved tensor, its ``requires_grad`` when saved (PyTorch's unpacked saved
        #: tensor keeps it: an input being differentiated reads True in backward)
        self._saved_rg: tuple[bool, ...] = ()
        self._non_diff: list[Any] = []
        self.materialize_grads = True

    def save_for_backward(self, *tensors: Any) -> None:
        """Keep arrays (or ``None``) for ``backward`` as ``ctx.saved_tensors``."""
        for i, t in enumerate(tensors):
            if t is not None and not _is_array(t):
                raise TypeError(
                    f"{self._fname}: save_for_backward expects arrays (or None), but argument "
                    f"{i} is a {type(t).__name__}; store other values as ctx attributes "
                    f"(ctx.name = value)")
        self._saved_rg = tuple(bool(getattr(t, "_requires_grad", False)) for t in tensors)
        if self._hooks is None:
            self._saved = tensors
        else:
            # PyTorch packs at save time; the packed objects travel as a ctx attribute
            # (their arrays as residual operands, anything else static)
            pack = self._hooks[0]
            self._saved = ()
            self._packed_saved = tuple(None if t is None else pack(t) for t in tensors)

    @property
    def saved_tensors(self) -> tuple[Any, ...]:
        """The arrays given to ``save_for_backward`` (each through the ``unpack_hook`` of
        the saved-tensor hooks active when they were saved, on every read, as PyTorch); in
        ``jvp``, those given to ``save_for_forward``. (Beyond PyTorch, a rule whose own kind
        was never saved reads the other kind.)"""
        fwd = self.__dict__.get("_saved_fwd")
        packed = self.__dict__.get("_packed_saved")
        if fwd is not None and (self.__dict__.get("_in_jvp")
                                or (not self._saved and packed is None)):
            return fwd
        if packed is not None and self._hooks is not None:
            unpack = self._hooks[1]
            return tuple(None if p is None else unpack(p) for p in packed)
        return self._saved

    def mark_non_differentiable(self, *outputs: Any) -> None:
        """Outputs given here get zero gradients (``None`` without materialization)."""
        self._non_diff.extend(outputs)

    def set_materialize_grads(self, value: bool) -> None:
        """``False``: ``backward`` receives ``None`` for grads known to be zero."""
        self.materialize_grads = bool(value)

    def mark_dirty(self, *args: Any) -> None:
        """Accepted for compatibility: funcgrad arrays are never modified in place."""

    def save_for_forward(self, *tensors: Any) -> None:
        """Keep arrays (or ``None``) for ``jvp``: there ``ctx.saved_tensors`` reads them
        (``backward`` reads what ``save_for_backward`` kept, as PyTorch's)."""
        for i, t in enumerate(tensors):
            if t is not None and not _is_array(t):
                raise TypeError(
                    f"{self._fname}: save_for_forward expects arrays (or None), but argument "
                    f"{i} is a {type(t).__name__}; store other values as ctx attributes "
                    f"(ctx.name = value)")
        # an ordinary array attribute: it travels as residual operands like ctx.name = x
        self._saved_fwd = tuple(tensors)


_CTX_OWN = frozenset(("_fname", "needs_input_grad", "_saved", "_non_diff", "materialize_grads",
                      "_nondiff_out", "_out_avals", "_input_avals", "_hooks", "_saved_rg"))


class _Residuals:
    """A ctx as a pytree: saved arrays and array attributes are leaves, the rest is static."""

    __slots__ = ("ctx",)

    def __init__(self, ctx: FunctionCtx) -> None:
        self.ctx = ctx


class _Static:
    """Static part of a ctx; compared by identity (it never takes part in caching)."""

    __slots__ = ("fname", "needs", "saved_mask", "saved_rg", "array_attrs", "other", "materialize",
                 "nondiff_out", "out_avals", "input_avals", "hooks")

    def __init__(self, **kw: Any) -> None:
        for k, v in kw.items():
            setattr(self, k, v)

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other: object) -> bool:
        return self is other


def _res_flatten(r: _Residuals) -> tuple[list[Any], _Static]:
    ctx = r.ctx
    saved = [t for t in ctx._saved if t is not None]
    # array attributes, also in lists/tuples/dicts (ctx.weights = [w1, w2]): their arrays are
    # residual operands, the attribute's shape (a template) is static
    array_attrs, other, leaves = [], {}, []
    for k in _array_attrs(ctx):
        array_attrs.append((k, _hollow(getattr(ctx, k), leaves)))
    for k, v in vars(ctx).items():
        if k not in _CTX_OWN and k not in dict(array_attrs):
            other[k] = v
    static = _Static(fname=ctx._fname, needs=ctx.needs_input_grad,
                     saved_mask=tuple(t is not None for t in ctx._saved),
                     saved_rg=ctx._saved_rg,
                     array_attrs=tuple(array_attrs), other=other,
                     materialize=ctx.materialize_grads,
                     nondiff_out=getattr(ctx, "_nondiff_out", ()),
                     out_avals=getattr(ctx, "_out_avals", ()),
                     input_avals=getattr(ctx, "_input_avals", None), hooks=ctx._hooks)
    return saved + leaves, static


def _res_unflatten(static: _Static, children: Any) -> _Residuals:
    children = list(children)
    ctx = FunctionCtx(static.fname, static.needs, static.hooks)
    n = sum(static.saved_mask)
    it = iter(children[:n])
    ctx._saved = tuple(next(it) if m else None for m in static.saved_mask)
    ctx._saved_rg = static.saved_rg
    rest = iter(children[n:])
    for k, template in static.array_attrs:
        setattr(ctx, k, _fill(template, rest))
    for k, v in static.other.items():
        setattr(ctx, k, v)
    ctx.materialize_grads = static.materialize
    ctx._nondiff_out = static.nondiff_out  # type: ignore[attr-defined]
    ctx._out_avals = static.out_avals  # type: ignore[attr-defined]
    ctx._input_avals = static.input_avals  # type: ignore[attr-defined]
    return _Residuals(ctx)


tree_util.register_pytree_node(_Residuals, _res_flatten, _res_unflatten)


class _Slot:
    """Where an array sat inside a list/tuple/dict argument (a template leaf)."""

    __slots__ = ()


_SLOT = _Slot()


def _hollow(x: Any, found: list[Any]) -> Any:
    """``x`` with the arrays in its lists, tuples and dicts replaced by slots (into
    ``found``)."""
    if _is_array(x):
        found.append(x)
        return _SLOT
    if type(x) in (list, tuple):
        return type(x)(_hollow(v, found) for v in x)
    if type(x) is dict:
        return {k: _hollow(v, found) for k, v in x.items()}
    return x


def _fill(t: Any, it: Any) -> Any:
    if t is _SLOT:
        return next(it)
    if type(t) in (list, tuple):
        return type(t)(_fill(v, it) for v in t)
    if type(t) is dict:
        return {k: _fill(v, it) for k, v in t.items()}
    return t


class _Call:
    """The static part of one ``apply``: which positions are arrays, and the other values.

    The operands of the rule are the array arguments, then the arrays found inside list,
    tuple and dict arguments (``inner``): those are not inputs of the Function (PyTorch gives
    them no gradient) but must be operands so that ``jit``/``vmap``/``grad`` tracers in them
    reach ``forward``.
    """

    __slots__ = ("cls", "nargs", "array_pos", "others", "kw_names", "static_out", "out_seq")

    def __init__(self, cls: type, args: tuple, inner: list[Any],
                 kw_names: tuple[str, ...] = ()) -> None:
        """``inner`` receives the arrays found inside the list/tuple/dict arguments; the last
        ``len(kw_names)`` arguments were given by keyword (and go to ``forward`` so)."""
        self.cls = cls
        self.kw_names = kw_names
        #: the outputs of forward that are neither arrays nor numbers (a string, an object:
        #: PyTorch passes them through untracked), by their place in the output; the rule's
        #: output has None there
        self.static_out: dict[tuple, Any] = {}
        #: tuple or list when forward returned several outputs so, else None (one output)
        self.out_seq: type | None = None
        self.nargs = len(args)
        self.array_pos = tuple(i for i, a in enumerate(args) if _is_array(a))
        self.others = {i: _hollow(a, inner) for i, a in enumerate(args)
                       if i not in self.array_pos}

    def merge(self, arrays: Sequence[Any]) -> tuple:
        it = iter(arrays)
        top = [next(it) for _ in self.array_pos]
        rest = iter(arrays[len(top):])
        tops = iter(top)
        return tuple(next(tops) if i in self.array_pos else _fill(self.others[i], rest)
                     for i in range(self.nargs))

    def call(self, fn: Callable[..., Any], *lead: Any, args: tuple) -> Any:
        """``fn(*lead, *args)``, the keyword arguments passed by name."""
        n = self.nargs - len(self.kw_names)
        return fn(*lead, *args[:n], **dict(zip(self.kw_names, args[n:])))

    def needs(self, arrays: Sequence[Any]) -> tuple[bool, ...]:
        kinds = iter(get_aval(a).dtype.kind in "fc" for a in arrays[:len(self.array_pos)])
        return tuple(next(kinds) if i in self.array_pos else False for i in range(self.nargs))

    # Static nondiff arguments must not look callable (that would force closure conversion).
    def __hash__(self) -> int:
        return id(self)


def _uses_setup_context(cls: type) -> bool:
    return getattr(cls, "setup_context", None) is not Function.setup_context


def _unwrap_out(trace: TensorViewTrace, out: Any) -> Any:
    # a list of outputs is several outputs too (PyTorch passes a list through untracked;
    # here each array in it is a differentiable output, as in a tuple); arrays nested in
    # dicts, lists and tuples come out as arrays too (they leaked out as views)
    if isinstance(out, tuple | list):
        return (list if isinstance(out, list) else tuple)(
            _map_arrays(o, lambda v: unwrap(trace, v)) for o in out)
    return _map_arrays(out, lambda v: unwrap(trace, v))


def _hold_static(x: Any, path: tuple, held: dict[tuple, Any]) -> Any:
    """``x`` with each leaf that is neither an array nor a number (nor None) replaced by
    None, kept in ``held`` under its path (a custom rule's output holds arrays only; a number
    may be a scalar computed from the inputs, so it stays an output)."""
    if _is_array(x) or x is None or isinstance(x, int | float | complex | numpy.generic):
        return x
    if type(x) in (list, tuple):
        return type(x)(_hold_static(v, (*path, i), held) for i, v in enumerate(x))
    if type(x) is dict:
        return {k: _hold_static(v, (*path, k), held) for k, v in x.items()}
    held[path] = x
    return None


def _restore_static(x: Any, held: dict[tuple, Any], path: tuple = ()) -> Any:
    """The inverse of :func:`_hold_static` on the rule's output."""
    if not held:
        return x
    if path in held:
        return held[path]
    if type(x) in (list, tuple):
        return type(x)(_restore_static(v, held, (*path, i)) for i, v in enumerate(x))
    if type(x) is dict:
        return {k: _restore_static(v, held, (*path, k)) for k, v in x.items()}
    return x


def _holds_arrays(x: Any) -> bool:
    if _is_array(x):
        return True
    if type(x) in (list, tuple):
        return any(_holds_arrays(v) for v in x)
    if type(x) is dict:
        return any(_holds_arrays(v) for v in x.values())
    return False


def _map_arrays(x: Any, fn: Callable[[Any], Any]) -> Any:
    """``fn`` applied to the arrays of ``x`` (an array, or lists/tuples/dicts of them)."""
    if _is_array(x):
        return fn(x)
    if type(x) in (list, tuple):
        return type(x)(_map_arrays(v, fn) for v in x)
    if type(x) is dict:
        return {k: _map_arrays(v, fn) for k, v in x.items()}
    return x


def _array_attrs(ctx: FunctionCtx) -> list[str]:
    """ctx attributes holding arrays (directly or in lists/tuples/dicts)."""
    return [k for k, v in vars(ctx).items() if k not in _CTX_OWN and _holds_arrays(v)]


def _run_forward(call: _Call, arrays: Sequence[Any], ctx: FunctionCtx | None) -> Any:
    """``forward`` (and ``setup_context``) on tensor-style views of the array arguments."""
    cls = call.cls
    trace = TensorViewTrace(current_trace())
    token = _trace_var.set(trace)
    # PyTorch runs forward with grad mode off (is_grad_enabled() is False there); only the
    # flag: nothing inside forward is differentiated (its derivative is backward's)
    grad_token = _grad_enabled.set(False)
    try:
        views = [wrap(trace, a, force=True) for a in arrays]
        if ctx is not None:  # an input being differentiated requires grad, as in PyTorch
            for k, i in enumerate(call.array_pos):
                views[k]._requires_grad = ctx.needs_input_grad[i]
        args = call.merge(views)
        if _uses_setup_context(cls):
            out = cls.forward(*args)
            if ctx is not None:
                cls.setup_context(ctx, args, out)
        else:
            out = call.call(cls.forward, ctx if ctx is not None else
                            FunctionCtx(cls.__name__, call.needs(arrays)), args=args)
        if ctx is not None:
            _mark_outputs(ctx, out)
            ctx._saved = tuple(unwrap(trace, t) for t in ctx._saved)
            for k in _array_attrs(ctx):
                setattr(ctx, k, _map_arrays(getattr(ctx, k), lambda v: unwrap(trace, v)))
        call.static_out = {}
        call.out_seq = (list if isinstance(out, list) else tuple) \
            if isinstance(out, tuple | list) else None
        return _hold_static(_unwrap_out(trace, out), (), call.static_out)
    finally:
        _grad_enabled.reset(grad_token)
        _trace_var.reset(token)


def _out_leaves(out: Any) -> list[Any]:
    return list(out) if isinstance(out, tuple | list) else [out]


def _mark_outputs(ctx: FunctionCtx, out: Any) -> None:
    ids = {id(o) for o in ctx._non_diff}
    leaves = _out_leaves(out)
    ctx._nondiff_out = tuple(id(o) in ids for o in leaves)  # type: ignore[attr-defined]
    # the outputs' dtypes: an integer output's cotangent is float0, but backward gets zeros
    # of the output's own dtype (materialize_grads), as PyTorch's
    ctx._out_avals = tuple(get_aval(o) if _is_array(o) else None  # type: ignore[attr-defined]
                           for o in leaves)
    ctx._non_diff = []


def _fun(call: _Call, *arrays: Any) -> Any:
    return _run_forward(call, arrays, None)


def _fwd(call: _Call, *primals: Any) -> tuple[Any, _Residuals]:
    # (symbolic_zeros: each operand comes as (value, perturbed)) An input is PyTorch's
    # "requires grad" when it is differentiated here (perturbed) and floating, so
    # needs_input_grad is False for a constant operand, as PyTorch's for a tensor without
    # requires_grad. Differentiated: a backward will read what is saved, so the
    # saved-tensor hooks apply.
    arrays = [p.value for p in primals]
    perturbed = iter(p.perturbed for p in primals[:len(call.array_pos)])
    needs = tuple(n and next(perturbed) if i in call.array_pos else n
                  for i, n in enumerate(call.needs(arrays)))
    ctx = FunctionCtx(call.cls.__name__, needs, current_hooks())
    out = _run_forward(call, arrays, ctx)
    ctx._input_avals = [get_aval(a) for a in arrays]  # type: ignore[attr-defined]
    return out, _Residuals(ctx)


def _in_views(ctx: FunctionCtx, values: Sequence[Any], rule: Callable[..., Any]) -> Any:
    """``rule(ctx, *values)`` with ctx's arrays and ``values`` as tensor-style views."""
    trace = TensorViewTrace(current_trace())
    token = _trace_var.set(trace)
    try:
        ctx._saved = tuple(None if t is None else wrap(trace, t, force=True)
                           for t in ctx._saved)
        for t, rg in zip(ctx._saved, ctx._saved_rg):
            if t is not None:
                t._requires_grad = rg
        for k in _array_attrs(ctx):
            setattr(ctx, k, _map_arrays(getattr(ctx, k), lambda v: wrap(trace, v)))
        got = rule(ctx, *[None if v is None else
                          _map_arrays(v, lambda a: wrap(trace, a)) if type(v) in (dict, list, tuple)
                          else wrap(trace, v, force=True) for v in values])
        if isinstance(got, tuple | list):
            return tuple(unwrap(trace, g) for g in got)
        return unwrap(trace, got)
    finally:
        _trace_var.reset(token)


def _grad_outputs(ctx: FunctionCtx, ct: Any) -> list[Any]:
    cts = _out_leaves(ct)
    nondiff = getattr(ctx, "_nondiff_out", ()) or (False,) * len(cts)
    avals = getattr(ctx, "_out_avals", ()) or (None,) * len(cts)
    out = []
    for c, nd, oa in zip(cts, nondiff, avals):
        if type(c) in (dict, list, tuple) and not nd:  # the gradients of a nested output
            out.append(_nested_grads(ctx, c))
        elif nd or type(c) is SymbolicZero or getattr(c, "dtype", None) == float0:
            out.append(None if not ctx.materialize_grads else _zeros_like(c, oa))
        else:
            out.append(_torch_ct(c))
    return out


def _torch_ct(c: Any) -> Any:
    """PyTorch's gradient of a complex value is the conjugate of funcgrad's (JAX's): backward
    is written for PyTorch's, so complex cotangents are conjugated on the way in and the
    gradients it returns on the way out (real ones pass untouched)."""
    if _is_array(c) and numpy.dtype(get_aval(c).dtype).kind == "c":
        from funcgrad import numpy as fnp
        return fnp.conj(c)
    return c


def _nested_grads(ctx: FunctionCtx, c: Any) -> Any:
    """Cotangents inside a dict/list/tuple output: zeros (or None without
    materialize_grads) where none flowed."""
    if type(c) in (list, tuple):
        return type(c)(_nested_grads(ctx, v) for v in c)
    if type(c) is dict:
        return {k: _nested_grads(ctx, v) for k, v in c.items()}
    if type(c) is SymbolicZero or getattr(c, "dtype", None) == float0:
        return None if not ctx.materialize_grads else _zeros_like(c, None)
    return _torch_ct(c)


def _zeros_like(c: Any, out_aval: Any) -> Any:
    """The materialized gradient of an output that got none: zeros of the output's shape
    and dtype (an integer output's too: PyTorch passes ``int64`` zeros for an index output)."""
    from funcgrad import numpy as fnp

    a = c.aval if type(c) is SymbolicZero else get_aval(c)
    if out_aval is not None and a.dtype == float0:
        a = out_aval
    if a.dtype == float0:
        return None
    return fnp.zeros(a.shape, a.dtype, device=a.device)  # (a symbolic zero has no array)


def _check_grads(call: _Call, got: Any, in_avals: Sequence[Any]) -> tuple[Any, ...]:
    """One cotangent per array argument from what ``backward`` returned; errors name it."""
    name = call.cls.__name__
    if not isinstance(got, tuple | list):
        got = (got,)
    got = tuple(got)
    n = call.nargs
    if len(got) < n or any(g is not None for g in got[n:]):
        raise GradientCountError(
            f"function {name}Backward returned an incorrect number of gradients (expected "
            f"{n}, got {len(got)}): {name}.backward returns one per input of forward, None "
            "for inputs without one")
    for i in range(n):
        if i not in call.array_pos and got[i] is not None:
            # PyTorch's check: a gradient for a number, string, list... is a mistake in
            # backward (often gradients returned in the wrong order)
            raise RuntimeError(
                f"function {name}Backward returned a gradient different than None at position "
                f"{i + 1}, but the corresponding forward input was not an array (argument {i} "
                f"of forward is a {type(call.others[i]).__name__}); return None for it")
    from funcgrad import numpy as fnp

    out = []
    for k, i in enumerate(call.array_pos):
        g, xa = got[i], in_avals[k]
        if g is None or xa.dtype.kind not in "fc":
            out.append(None)
            continue
        if not _is_array(g):
            if isinstance(g, int | float | complex):
                g = fnp.full(xa.shape, g, xa.dtype)
            else:
                raise TypeError(f"{name}.backward returned a {type(g).__name__} as the "
                                f"gradient of input {i}; expected an array or None")
        ga = get_aval(g)
        if ga.shape != xa.shape:
            try:
                bshape = numpy.broadcast_shapes(xa.shape, ga.shape)
            except ValueError:
                bshape = None
            if bshape != ga.shape:
                raise InvalidGradientError(
                    f"Function {name}Backward returned an invalid gradient at index {i} - got "
                    f"{list(ga.shape)} but expected shape compatible with {list(xa.shape)} "
                    f"({name}.backward's gradient for input {i}: its shape, or a shape that "
                    "broadcasts to it and is summed down)")
            # PyTorch sums a gradient of a broadcast shape down to the input's shape.
            lead = len(ga.shape) - len(xa.shape)
            axes = tuple(range(lead)) + tuple(
                lead + j for j, d in enumerate(xa.shape) if d == 1 and ga.shape[lead + j] != 1)
            g = fnp.reshape(fnp.sum(g, axis=axes), xa.shape)
        if get_aval(g).dtype != xa.dtype:
            g = convert_element_type(g, xa.dtype)
        out.append(_torch_ct(g))
    return tuple(out) + (None,) * (len(in_avals) - len(call.array_pos))


def _bwd(call: _Call, res: _Residuals, ct: Any) -> tuple[Any, ...]:
    ctx = res.ctx
    # grad mode on, as under torch.func's transforms (and create_graph=True): a funcgrad
    # backward is always differentiable again, whatever mode the caller is in
    token = _grad_enabled.set(True)
    try:
        got = _in_views(ctx, _grad_outputs(ctx, ct), _backward_of(call.cls))
    finally:
        _grad_enabled.reset(token)
    return _check_grads(call, got, ctx._input_avals)  # type: ignore[attr-defined]


def _as_jvp(jvp: Callable[..., Any]) -> Callable[..., Any]:
    """``jvp`` reading ``ctx.saved_tensors`` as what ``save_for_forward`` kept."""

    def run(ctx: FunctionCtx, *tangents: Any) -> Any:
        ctx._in_jvp = True  # type: ignore[attr-defined]
        try:
            return jvp(ctx, *tangents)
        finally:
            del ctx._in_jvp  # type: ignore[attr-defined]

    return run


def _jvp_tangents(call: _Call, ctx: FunctionCtx, got: Any) -> list[Any]:
    """What ``jvp`` returned, one tangent per output, checked as PyTorch checks it (one per
    output, None for a non-differentiable one, each shaped like its output)."""
    avals = getattr(ctx, "_out_avals", ())
    nondiff = getattr(ctx, "_nondiff_out", ()) or (False,) * len(avals)
    if isinstance(got, tuple | list) and (call.out_seq is not None or len(got) == 1):
        got_l = list(got)  # (a one-output Function's jvp may return a 1-tuple, as PyTorch)
    else:
        got_l = [got]
    if len(got_l) != len(avals):
        raise RuntimeError(f"Function's jvp returned an invalid number of forward gradients "
                           f"(expected {len(avals)} but got {len(got_l)}) ({call.cls.__name__})")
    for k, (g, a, nd) in enumerate(zip(got_l, avals, nondiff)):
        if g is None or a is None:
            continue
        if nd or a.dtype.kind not in "fc":
            raise RuntimeError(
                f"Function's jvp returned a gradient at position {k}, but  the corresponding "
                "forward output is not a differentiable Tensor.You should return None at that "
                f"position instead. ({call.cls.__name__})")
        gs = tuple(numpy.shape(g))
        if gs != tuple(a.shape):
            raise RuntimeError(
                "Trying to set a forward gradient that has a different size than that of the "
                f"original Tensor, this is not supported. Tensor is of size {list(a.shape)} "
                f"while the given forward gradient is of size {list(gs)}. "
                f"({call.cls.__name__}.jvp, output {k})")
    return got_l


def _jvp_rule(call: _Call, primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    ctx = FunctionCtx(call.cls.__name__, call.needs(primals))
    out = _run_forward(call, primals, ctx)
    full_t = call.merge(tangents)
    ts = [t if i in call.array_pos else None for i, t in enumerate(full_t)]
    t_out = _jvp_tangents(call, ctx, _in_views(ctx, ts, _as_jvp(call.cls.jvp)))
    return out, (type(out)(t_out) if isinstance(out, tuple | list) else t_out[0])


def _tangents(call: _Call, res: _Residuals, ts: tuple) -> Any:
    """Forward mode of a Function with both ``backward`` and ``jvp``: ``jvp(ctx, *tangents)``
    on the ctx its ``forward`` filled (PyTorch uses ``jvp`` for forward mode, ``backward``
    for reverse mode); the result structured like the rule's output."""
    from funcgrad import numpy as fnp

    ctx = res.ctx
    full_t = call.merge(list(ts))
    t_in = [t if i in call.array_pos and get_aval(t).dtype != float0 else None
            for i, t in enumerate(full_t)]
    got_l = _jvp_tangents(call, ctx, _in_views(ctx, t_in, _as_jvp(call.cls.jvp)))
    seq = call.out_seq
    outs = []
    for k, (g, a) in enumerate(zip(got_l, getattr(ctx, "_out_avals", ()))):
        if ((k,) if seq is not None else ()) in call.static_out:
            outs.append(None)  # an object forward returned: the rule's output has None there
        elif a is None:  # a number, or arrays nested in a container: as jvp gave them
            outs.append(g)
        elif a.dtype.kind not in "fc":
            outs.append(numpy.zeros(a.shape, float0))
        elif g is None:  # PyTorch: None is a zero tangent
            outs.append(fnp.zeros(a.shape, a.dtype, device=a.device))
        else:
            outs.append(g)
    return seq(outs) if seq is not None else outs[0]


def _backward_of(cls: type) -> Callable[..., Any] | None:
    """The class's backward rule: ``backward``, or ``vjp`` (PyTorch's alias), or None."""
    if cls.backward is not Function.backward:
        return cls.backward
    if cls.vjp is not Function.vjp:
        return cls.vjp
    return None


def _build(cls: type) -> Any:
    has_backward = _backward_of(cls) is not None
    has_jvp = getattr(cls, "jvp", None) is not Function.jvp
    if has_jvp and not has_backward:
        f = custom_jvp(_fun, nondiff_argnums=(0,))
        f.defjvp(_jvp_rule)
    else:
        f = custom_vjp(_fun, nondiff_argnums=(0,))

        def bwd(call: _Call, res: _Residuals, ct: Any) -> tuple[Any, ...]:
            return _bwd(call, res, ct)

        # named as PyTorch names the backward node (MyFnBackward): anomaly detection's
        # message names the rule that made a NaN
        bwd.__name__ = bwd.__qualname__ = f"{cls.__name__}Backward"
        # symbolic zeros: which operands are differentiated (needs_input_grad) and which
        # outputs get no gradient (None in backward without materialize_grads), as PyTorch;
        # a jvp beside backward is forward mode's rule (PyTorch's), not backward transposed
        f.defvjp(_fwd, bwd, symbolic_zeros=True, tangent_map=_tangents if has_jvp else None)
    f.__name__ = cls.__name__  # type: ignore[attr-defined]
    return f


class Function:
    """Base class of custom differentiable operations (PyTorch's ``torch.autograd.Function``).

    Example (PyTorch's own ``Exp``, only the imports changed):
        >>> import numpy as np, funcgrad
        >>> from funcgrad_nn.autograd import Function
        >>> class Exp(Function):
        ...     @staticmethod
        ...     def forward(ctx, i):
        ...         result = i.exp()
        ...         ctx.save_for_backward(result)
        ...         return result
        ...     @staticmethod
        ...     def backward(ctx, grad_output):
        ...         result, = ctx.saved_tensors
        ...         return grad_output * result
        >>> x = np.array([0.0, 1.0])
        >>> funcgrad.grad(lambda x: Exp.apply(x).sum())(x).round(4).tolist()
        [1.0, 2.7183]
    """

    _rule: Any = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # Built when the class is made: a custom rule made under a transformation is
        # closure-converted (it may close over that transformation's values).
        cls._rule = _build(cls)

    @staticmethod
    def forward(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("a Function subclass must define a static forward method")

    @staticmethod
    def setup_context(ctx: FunctionCtx, inputs: tuple, output: Any) -> None:
        """Optional: with ``forward(*args)`` (no ctx), fill ``ctx`` from inputs and output."""

    @staticmethod
    def backward(ctx: FunctionCtx, *grad_outputs: Any) -> Any:
        raise NotImplementedError  # replaced in subclasses; apply checks one exists

    @staticmethod
    def jvp(ctx: FunctionCtx, *tangents: Any) -> Any:
        raise NotImplementedError  # optional, forward mode

    vjp = backward

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # PyTorch's legacy form MyFn()(x): refused there too, with this message
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use "
            f"new-style autograd function with static forward method: "
            f"{type(self).__name__}.apply(...) (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run ``forward`` on ``args``; derivatives use the class's ``backward``/``jvp``.

        With ``setup_context``, as PyTorch's, the arguments are bound to ``forward``'s
        signature (keywords allowed, defaults filled in: ``inputs`` and ``backward``'s
        gradients cover every parameter). A ``forward(ctx, ...)`` takes keyword arguments as
        PyTorch 2.13's does: they are inputs after the positional ones, in the order of
        ``forward``'s parameters, and ``backward`` returns a gradient for each.
        """
        if cls is Function or cls.forward is Function.forward:
            raise NotImplementedError(f"{cls.__name__} must define a static forward method")
        if _uses_setup_context(cls):
            try:
                bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            except TypeError as e:
                raise TypeError(f"{cls.__name__}.apply: {e}") from None
            bound.apply_defaults()
            args, kwargs = bound.args, {}
        kw_names: tuple[str, ...] = ()
        if kwargs:
            args, kw_names = _keyword_inputs(cls, args, kwargs)
        if _backward_of(cls) is None and cls.jvp is Function.jvp:
            raise TypeError(f"{cls.__name__} defines neither backward nor jvp; a Function "
                            "needs at least one derivative rule")
        rule = cls.__dict__.get("_rule") or _build(cls)
        inner: list[Any] = []
        call = _Call(cls, args, inner, kw_names)
        out = rule(call, *[args[i] for i in call.array_pos], *inner)
        return _restore_static(out, call.static_out)


def _keyword_inputs(cls: type, args: tuple, kwargs: dict) -> tuple[tuple, tuple[str, ...]]:
    """``apply(*args, **kwargs)`` of a ``forward(ctx, ...)``: the inputs (positional, then the
    keyword ones in the order of ``forward``'s parameters) and the keywords' names."""
    sig = inspect.signature(cls.forward)
    try:
        sig.bind(None, *args, **kwargs)
    except TypeError as e:
        raise TypeError(f"{cls.__name__}.apply: {e}") from None
    named = [p.name for p in sig.parameters.values() if p.name in kwargs]
    named += [k for k in kwargs if k not in named]  # into a **kwargs parameter
    return tuple(args) + tuple(kwargs[k] for k in named), tuple(named)


def once_differentiable(backward: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a ``backward`` as not differentiable again: a second derivative through it raises.

    Example:
        >>> import numpy as np, funcgrad
        >>> from funcgrad_nn.autograd import Function, once_differentiable
        >>> class Square(Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         ctx.save_for_backward(x)
        ...         return x * x
        ...     @staticmethod
        ...     @once_differentiable
        ...     def backward(ctx, g):
        ...         x, = ctx.saved_tensors
        ...         return 2 * x * g
        >>> float(funcgrad.grad(Square.apply)(3.0))
        6.0
    """

    @functools.wraps(backward)
    def wrapper(ctx: FunctionCtx, *grad_outputs: Any) -> Any:
        ctx._saved = tuple(None if t is None else _no_second(ctx._fname, t)
                           for t in ctx._saved)
        return backward(ctx, *grad_outputs)

    return wrapper


def _no_second_fun(fname: str, x: Any) -> Any:
    return x


def _no_second_bwd(fname: str, res: Any, g: Any) -> tuple[Any]:
    raise RuntimeError(
        f"{fname}.backward is decorated with @once_differentiable: it cannot be differentiated "
        "again (a second-order derivative flowed through its saved tensors). Remove the "
        "decorator and write backward with funcgrad operations to make it differentiable.")


_no_second = custom_vjp(_no_second_fun, nondiff_argnums=(0,))
_no_second.defvjp(lambda fname, x: (x, None), _no_second_bwd)
