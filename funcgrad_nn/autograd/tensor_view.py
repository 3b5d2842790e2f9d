"""Tensor-style methods for the arrays a ``Function``'s ``forward``/``backward`` receive.

PyTorch code calls methods on tensors (``i.exp()``, ``x.mm(w.t())``, ``g.sum(dim=0)``). While a
``Function`` runs, its array arguments are wrapped as :class:`TensorView` tracers of a
pass-through :class:`TensorViewTrace`: every operation on them is handed unchanged to the trace
that was current (so values, derivatives, ``jit`` and ``vmap`` are unaffected) and the results
are wrapped again. The wrappers are removed from whatever the function returns or saves; they
never escape the ``Function``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from funcgrad import numpy as fnp
from funcgrad.avals import ShapedArray, get_aval
from funcgrad.core import Trace, Tracer, _trace_var

__all__ = ["TensorView", "TensorViewTrace", "wrap", "unwrap"]


class TensorViewTrace(Trace):
    """Unwraps its own tracers, forwards to the parent, wraps the results."""

    __slots__ = ()
    user_name = "a custom Function"

    def process_primitive(self, prim: Any, args: Sequence[Any], params: dict) -> list:
        vals = [a.val if type(a) is TensorView and a._trace is self else a for a in args]
        parent = self.parent
        token = _trace_var.set(parent)  # type: ignore[arg-type]
        try:
            outs = parent.process_primitive(prim, vals, params)  # type: ignore[union-attr]
        finally:
            _trace_var.reset(token)
        return [TensorView(self, o) for o in outs]


def _dims(dim: Any) -> Any:
    return tuple(dim) if isinstance(dim, list) else dim


class TensorView(Tracer):
    """An array with PyTorch's tensor methods (inside a ``Function`` only)."""

    __slots__ = ("val",)

    def __init__(self, trace: TensorViewTrace, val: Any) -> None:
        self._trace = trace
        self.val = val

    @property
    def aval(self) -> ShapedArray:
        return get_aval(self.val)

    def to_concrete_value(self) -> Any:
        v = self.val
        return v.to_concrete_value() if isinstance(v, Tracer) else v

    # -- PyTorch names that differ from NumPy's ---------------------------------------------

    def size(self, dim: int | None = None) -> Any:
        return self.shape if dim is None else self.shape[dim]

    def dim(self) -> int:
        return self.ndim

    def numel(self) -> int:
        return self.aval.size

    def t(self) -> Any:
        return fnp.swapaxes(self, -1, -2) if self.ndim >= 2 else self

    def mm(self, other: Any) -> Any:
        return fnp.matmul(self, other)

    matmul = bmm = mv = mm

    def view(self, *shape: Any) -> Any:
        if len(shape) == 1 and isinstance(shape[0], tuple | list):
            shape = tuple(shape[0])
        return fnp.reshape(self, shape)

    def view_as(self, other: Any) -> Any:
        return fnp.reshape(self, other.shape)

    def expand(self, *shape: Any) -> Any:
        if len(shape) == 1 and isinstance(shape[0], tuple | list):
            shape = tuple(shape[0])
        full = tuple(s if n == -1 else n for n, s in
                     zip(shape, (1,) * (len(shape) - self.ndim) + tuple(self.shape)))
        return fnp.broadcast_to(self, full)

    def expand_as(self, other: Any) -> Any:
        return fnp.broadcast_to(self, other.shape)

    def clone(self, *a: Any, **k: Any) -> Any:
        return self * 1 if self.aval.dtype.kind != "b" else fnp.copy(self)

    def detach(self) -> Any:
        return _stop(self)

    def contiguous(self, *a: Any, **k: Any) -> Any:
        return self

    def unsqueeze(self, dim: int) -> Any:
        return fnp.expand_dims(self, dim)

    def squeeze(self, dim: Any = None) -> Any:
        if dim is not None and self.shape[dim] != 1:
            return self
        return fnp.squeeze(self, dim)

    def permute(self, *dims: Any) -> Any:
        if len(dims) == 1 and isinstance(dims[0], tuple | list):
            dims = tuple(dims[0])
        return fnp.transpose(self, dims)

    def transpose(self, *axes: Any) -> Any:
        if len(axes) == 2 and all(isinstance(a, int) for a in axes):
            return fnp.swapaxes(self, axes[0], axes[1])
        return fnp.transpose(self, axes[0] if len(axes) == 1 else (axes or None))

    def _reduce(self, name: str, dim: Any, keepdim: bool, kw: dict) -> Any:
        axis = kw.pop("axis", _dims(dim))
        keep = kw.pop("keepdims", keepdim)
        return getattr(fnp, name)(self, axis=axis, keepdims=keep, **kw)

    def sum(self, dim: Any = None, keepdim: bool = False, **kw: Any) -> Any:
        return self._reduce("sum", dim, keepdim, kw)

    def mean(self, dim: Any = None, keepdim: bool = False, **kw: Any) -> Any:
        return self._reduce("mean", dim, keepdim, kw)

    def prod(self, dim: Any = None, keepdim: bool = False, **kw: Any) -> Any:
        return self._reduce("prod", dim, keepdim, kw)

    def var(self, dim: Any = None, unbiased: bool = True, keepdim: bool = False,
            **kw: Any) -> Any:
        return fnp.var(self, axis=_dims(dim), ddof=int(unbiased), keepdims=keepdim)

    def std(self, dim: Any = None, unbiased: bool = True, keepdim: bool = False,
            **kw: Any) -> Any:
        return fnp.std(self, axis=_dims(dim), ddof=int(unbiased), keepdims=keepdim)

    def _minmax(self, name: str, dim: Any, keepdim: bool) -> Any:
        if dim is None:
            return getattr(fnp, name)(self)
        if not isinstance(dim, int):  # torch.max(x, other): elementwise
            return getattr(fnp, "maximum" if name == "max" else "minimum")(self, dim)
        values = getattr(fnp, name)(self, axis=dim, keepdims=keepdim)
        idx = getattr(fnp, "arg" + name)(self, axis=dim, keepdims=keepdim)
        return values, idx

    def max(self, dim: Any = None, keepdim: bool = False) -> Any:
        return self._minmax("max", dim, keepdim)

    def min(self, dim: Any = None, keepdim: bool = False) -> Any:
        return self._minmax("min", dim, keepdim)

    def clamp(self, min: Any = None, max: Any = None) -> Any:  # noqa: A002
        return fnp.clip(self, min, max)

    clip = clamp

    def clamp_min(self, m: Any) -> Any:
        return fnp.maximum(self, m)

    def clamp_max(self, m: Any) -> Any:
        return fnp.minimum(self, m)

    def masked_fill(self, mask: Any, value: Any) -> Any:
        return fnp.where(mask, fnp.asarray(value, dtype=self.dtype), self)

    def relu(self) -> Any:
        return fnp.maximum(self, 0)

    def sigmoid(self) -> Any:
        return 1 / (1 + fnp.exp(-self))

    def rsqrt(self) -> Any:
        return 1 / fnp.sqrt(self)

    def pow(self, e: Any) -> Any:
        return self ** e

    def mul(self, o: Any) -> Any:
        return self * o

    def add(self, o: Any, alpha: Any = 1) -> Any:
        return self + (o if alpha == 1 else alpha * o)

    def sub(self, o: Any, alpha: Any = 1) -> Any:
        return self - (o if alpha == 1 else alpha * o)

    def div(self, o: Any) -> Any:
        return self / o

    def neg(self) -> Any:
        return -self

    def float(self) -> Any:
        return fnp.asarray(self, dtype="float32")

    def double(self) -> Any:
        return fnp.asarray(self, dtype="float64")

    def type_as(self, other: Any) -> Any:
        return fnp.asarray(self, dtype=other.dtype)

    def to(self, *args: Any, **kw: Any) -> Any:
        dtype = kw.get("dtype")
        for a in args:
            if not isinstance(a, str) and a is not None:
                dtype = getattr(a, "dtype", a)
        return self if dtype is None else fnp.asarray(self, dtype=dtype)

    def new_zeros(self, *shape: Any, **kw: Any) -> Any:
        if len(shape) == 1 and isinstance(shape[0], tuple | list):
            shape = tuple(shape[0])
        return fnp.zeros(shape, dtype=kw.get("dtype", self.dtype))

    def new_ones(self, *shape: Any, **kw: Any) -> Any:
        if len(shape) == 1 and isinstance(shape[0], tuple | list):
            shape = tuple(shape[0])
        return fnp.ones(shape, dtype=kw.get("dtype", self.dtype))

    # -- comparisons and in-place updates (PyTorch names) -----------------------------------

    def ge(self, o: Any) -> Any:
        return self >= o

    def gt(self, o: Any) -> Any:
        return self > o

    def le(self, o: Any) -> Any:
        return self <= o

    def lt(self, o: Any) -> Any:
        return self < o

    def eq(self, o: Any) -> Any:
        return self == o

    def ne(self, o: Any) -> Any:
        return self != o

    def _assign(self, new: Any) -> TensorView:
        """An in-place update: this view now stands for ``new`` (arrays stay immutable; only
        names bound to this view inside the Function see the change, as with a tensor)."""
        new = fnp.asarray(new, dtype=self.dtype)
        if tuple(new.shape) != tuple(self.shape):
            new = fnp.broadcast_to(new, self.shape)
        self.val = unwrap(self._trace, new)  # type: ignore[arg-type]
        return self

    def __setitem__(self, idx: Any, value: Any) -> None:
        mask = getattr(idx, "dtype", None)
        if mask is not None and mask.kind == "b" and tuple(idx.shape) == tuple(self.shape):
            self._assign(fnp.where(idx, value, self))   # x[mask] = v, shape-stable
        else:
            self._assign(self.at[idx].set(value, mode="raise"))

    def zero_(self) -> TensorView:
        return self._assign(fnp.zeros_like(self))

    def fill_(self, v: Any) -> TensorView:
        return self._assign(fnp.full_like(self, v))

    def copy_(self, src: Any) -> TensorView:
        return self._assign(src)

    def add_(self, o: Any, alpha: Any = 1) -> TensorView:
        return self._assign(self.add(o, alpha))

    def sub_(self, o: Any, alpha: Any = 1) -> TensorView:
        return self._assign(self.sub(o, alpha))

    def mul_(self, o: Any) -> TensorView:
        return self._assign(self * o)

    def div_(self, o: Any) -> TensorView:
        return self._assign(self / o)

    def clamp_(self, min: Any = None, max: Any = None) -> TensorView:  # noqa: A002
        return self._assign(fnp.clip(self, min, max))

    def masked_fill_(self, mask: Any, value: Any) -> TensorView:
        return self._assign(self.masked_fill(mask, value))

    def __getattr__(self, name: str) -> Any:
        # Elementwise and other functions of funcgrad.numpy as methods: x.exp(), x.tanh()...
        if not name.startswith("_"):
            fn = getattr(fnp, name, None)
            if callable(fn):
                def method(*args: Any, **kwargs: Any) -> Any:
                    return fn(self, *args, **kwargs)

                method.__name__ = name
                return method
        raise AttributeError(f"array (inside a Function) has no attribute {name!r}")


def _stop(x: Any) -> Any:
    from funcgrad.ops.elementwise import stop_gradient

    return stop_gradient(x)


def wrap(trace: TensorViewTrace, x: Any, force: bool = False) -> Any:
    """``x`` as a :class:`TensorView` of ``trace`` when it is an array (or ``force``: any
    array-like value, such as a Python scalar standing for a 0-d array), else unchanged."""
    if force or isinstance(x, Tracer) or (hasattr(x, "shape") and hasattr(x, "dtype")):
        return TensorView(trace, x)
    return x


def unwrap(trace: TensorViewTrace, x: Any) -> Any:
    """The value behind ``x`` when it is one of ``trace``'s views, else ``x``."""
    while type(x) is TensorView and x._trace is trace:
        x = x.val
    return x
