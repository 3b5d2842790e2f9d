"""Tensor-style methods for the arrays a ``Function``'s ``forward``/``backward`` receive.

PyTorch code calls methods on tensors (``i.exp()``, ``x.mm(w.t())``, ``g.sum(dim=0)``). While a
``Function`` runs, its array arguments are wrapped as :class:`TensorView` tracers of a
pass-through :class:`TensorViewTrace`: every operation on them is handed unchanged to the trace
that was current (so values, derivatives, ``jit`` and ``vmap`` are unaffected) and the results
are wrapped again. The wrappers are removed from whatever the function returns or saves; they
never escape the ``Function``.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy

from funcgrad import numpy as fnp
from funcgrad.avals import ShapedArray, get_aval
from funcgrad.backend import device_of, to_numpy
from funcgrad.core import Trace, Tracer, _trace_var, eval_trace
from funcgrad.errors import NonConcreteBooleanIndexError, TracerArrayConversionError

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


def _shape(shape: tuple) -> tuple:
    """``f(2, 3)`` and ``f((2, 3))`` alike (PyTorch's size arguments)."""
    return tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], tuple | list) else shape


def _torch_kwargs(kwargs: dict) -> dict:
    """PyTorch's keyword names for NumPy's: ``dim`` is ``axis``, ``keepdim`` is ``keepdims``."""
    out = dict(kwargs)
    if "dim" in out:
        out["axis"] = _dims(out.pop("dim"))
    if "keepdim" in out:
        out["keepdims"] = out.pop("keepdim")
    return out


def _is_device(s: str) -> bool:
    from funcgrad.backend import canonical_device

    try:
        canonical_device(s)
    except ValueError:
        return False
    return True


def _np_dtype(d: Any) -> Any:
    """A dtype from what ``.to``/``new_*`` receive: a dtype, a NumPy scalar type, a string."""
    import numpy

    return numpy.dtype(d)


class ValuesIndices(NamedTuple):
    """``(values, indices)`` of ``max(dim)``/``min(dim)``/``sort``/``topk``, as PyTorch's."""

    values: Any
    indices: Any


#: NumPy dtype name -> PyTorch's legacy tensor type name (``x.type()``)
_TENSOR_TYPE_NAMES = {"float64": "Double", "float32": "Float", "float16": "Half",
                      "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
                      "uint8": "Byte", "bool": "Bool", "complex64": "ComplexFloat",
                      "complex128": "ComplexDouble"}


class SignLogAbsDet(NamedTuple):
    """``(sign, logabsdet)`` of ``slogdet``, as PyTorch's."""

    sign: Any
    logabsdet: Any


class SolutionCoefficient(NamedTuple):
    """``(solution, cloned_coefficient)`` of ``triangular_solve``, as PyTorch's."""

    solution: Any
    cloned_coefficient: Any


class QR(NamedTuple):
    """``(Q, R)`` of ``qr``, as PyTorch's."""

    Q: Any  # noqa: N815
    R: Any  # noqa: N815


class USV(NamedTuple):
    """``(U, S, V)`` of ``svd``, as PyTorch's ``Tensor.svd``."""

    U: Any  # noqa: N815
    S: Any  # noqa: N815
    V: Any  # noqa: N815


class MinMax(NamedTuple):
    """``(min, max)`` of ``aminmax``, as PyTorch's."""

    min: Any
    max: Any


class MantissaExponent(NamedTuple):
    """``(mantissa, exponent)`` of ``frexp``, as PyTorch's."""

    mantissa: Any
    exponent: Any


class TensorView(Tracer):
    """An array with PyTorch's tensor methods (inside a ``Function`` only)."""

    # ``_base``: for a view made by indexing or a shape method (``x[0]``, ``narrow``,
    # ``view``, ``t``...), ``(parent, method name, args, kwargs)``: an in-place update of the
    # view is written through to the parent, as PyTorch's views share storage
    # (a view taken before an update of its parent is refreshed when next read; ``_version``
    # counts a view's updates, ``_base`` ends with the parent's version last seen)
    # ``_requires_grad``: PyTorch's ``requires_grad`` of the tensor this view stands for: True
    # for an input of ``forward`` being differentiated (and a saved tensor that was one, in
    # ``backward``), False for what is computed inside (PyTorch runs forward and backward
    # with grad mode off)
    __slots__ = ("_val", "_base", "_version", "_requires_grad")

    def __init__(self, trace: TensorViewTrace, val: Any) -> None:
        self._trace = trace
        self._val = val
        self._base: tuple | None = None
        self._version = 0
        self._requires_grad = False

    @property
    def val(self) -> Any:
        """The array this view stands for (for a view of another view updated since, its
        elements as they are now)."""
        base = self._base
        if base is not None:
            parent, name, args, kwargs, seen = base
            parent.val  # noqa: B018  (refreshes the parent first)
            if parent._version != seen:
                token = _trace_var.set(self._trace)
                try:
                    fresh = getattr(TensorView, f"_view_{name}")(parent, *args, **kwargs)
                finally:
                    _trace_var.reset(token)
                self._val = unwrap(self._trace, fresh)  # type: ignore[arg-type]
                self._version += 1  # (its own views refresh in turn)
                self._base = (parent, name, args, kwargs, parent._version)
        return self._val

    @val.setter
    def val(self, value: Any) -> None:
        self._val = value
        self._version += 1

    @property
    def aval(self) -> ShapedArray:
        return get_aval(self.val)

    def to_concrete_value(self) -> Any:
        v = self.val
        return v.to_concrete_value() if isinstance(v, Tracer) else v

    # -- PyTorch names that differ from NumPy's ---------------------------------------------

    @property
    def device(self) -> str:
        """The array's device (``"cpu"``, ``"gpu"``...): ``fnp.zeros(..., device=x.device)``
        follows PyTorch's ``torch.zeros(..., device=x.device)``."""
        from funcgrad.backend import get_default_device

        return self.aval.device or get_default_device()

    @property
    def is_cuda(self) -> bool:
        return self.device == "gpu"

    def size(self, dim: int | None = None) -> Any:
        return self.shape if dim is None else self.shape[dim]

    def dim(self) -> int:
        return self.ndim

    def numel(self) -> int:
        return self.aval.size

    ndimension = dim
    nelement = numel

    def element_size(self) -> int:
        return self.aval.dtype.itemsize

    def is_floating_point(self) -> bool:
        return self.aval.dtype.kind == "f"

    def is_complex(self) -> bool:
        return self.aval.dtype.kind == "c"

    def _storage_positions(self) -> numpy.ndarray:
        """Where each element sits in the storage PyTorch's tensor would have: a view made
        by basic indexing or a shape method (``_base``) indexes its parent's positions,
        anything else owns a fresh row-major storage."""
        base = self._base
        if base is None:
            return numpy.arange(self.aval.size).reshape(self.shape)
        parent, name, args, kwargs, _ = base
        return parent._storage_positions().reshape(-1)[
            _view_index(parent, name, args, kwargs)].reshape(self.shape)

    def _layout(self) -> tuple[tuple[int, ...], int]:
        """PyTorch's ``(stride(), storage_offset())``, in elements."""
        shape = tuple(self.shape)
        contiguous = tuple(int(numpy.prod(shape[d + 1:])) for d in range(len(shape)))
        if self.aval.size == 0:
            return contiguous, 0
        pos = self._storage_positions()
        offset = int(pos.reshape(-1)[0])
        strides = []
        for d, n in enumerate(shape):
            if n == 1:  # (never stepped: PyTorch's own choice, what unsqueeze gives)
                strides.append(None)
                continue
            step = [0] * len(shape)
            step[d] = 1
            strides.append(int(pos[tuple(step)]) - offset)
        for d in reversed(range(len(shape))):  # a size-1 dim: its neighbour's extent
            if strides[d] is None:
                strides[d] = strides[d + 1] * shape[d + 1] if d + 1 < len(shape) else 1
        grid = numpy.indices(shape).reshape(len(shape), -1) if shape else numpy.zeros((0, 1))
        if not numpy.array_equal(offset + numpy.asarray(strides, int) @ grid.astype(int),
                                 pos.reshape(-1)):
            return contiguous, 0  # not one strided view (PyTorch's reshape copies then)
        return tuple(strides), offset

    def stride(self, dim: int | None = None) -> Any:
        """PyTorch's strides, in elements: row-major for a fresh array; a view made by
        indexing or a shape method (``x.t()``, ``x[:, 1:]``) has its parent's layout.

        Example:
            >>> import numpy as np
            >>> from funcgrad_nn.autograd import Function
            >>> class Strides(Function):
            ...     @staticmethod
            ...     def forward(ctx, x):
            ...         print(x.stride(), x.t().stride(), x[:, 1:].storage_offset())
            ...         return x.clone()
            ...     @staticmethod
            ...     def backward(ctx, g):
            ...         return g
            >>> _ = Strides.apply(np.ones((2, 3)))
            (3, 1) (1, 3) 1
        """
        strides = self._layout()[0]
        return strides if dim is None else strides[dim]

    def storage_offset(self) -> int:
        return self._layout()[1]

    def is_contiguous(self, *a: Any, **k: Any) -> bool:
        """As PyTorch's: row-major strides (a size-1 dim's stride does not matter)."""
        strides = self._layout()[0]
        expect = 1
        for n, st in zip(reversed(self.shape), reversed(strides)):
            if n != 1 and st != expect:
                return False
            expect *= n
        return True

    @property
    def requires_grad(self) -> bool:
        """PyTorch's: True for an input of ``forward`` being differentiated (as
        ``ctx.needs_input_grad``) and, in ``backward``, a saved tensor that was one; False for
        what is computed inside (PyTorch runs them with grad mode off)."""
        return self._requires_grad

    @property
    def is_leaf(self) -> bool:
        """True for an array that does not require grad (PyTorch's convention). Whether a
        differentiated input is a leaf of the caller's computation is unknown here."""
        if self._requires_grad:
            raise AttributeError(
                "is_leaf of an input being differentiated is unknown inside a Function: "
                "funcgrad records no graph, so whether the caller computed it or it is a leaf "
                "of the differentiated function is not recorded; use x.requires_grad or "
                "ctx.needs_input_grad")
        return True

    @property
    def grad(self) -> None:
        """``None``: arrays accumulate no gradients (gradients are returned by transforms)."""
        return None

    @property
    def grad_fn(self) -> None:
        """``None``, as for every tensor made in a ``forward`` (grad mode is off there)."""
        return None

    is_sparse = False

    def get_device(self) -> int:
        """``-1`` on the host, else the device's index (PyTorch's)."""
        return -1 if self.device == "cpu" else 0

    def is_signed(self) -> bool:
        return self.aval.dtype.kind in "ifc"

    def swapdims(self, dim0: int, dim1: int) -> Any:
        return fnp.swapaxes(self, dim0, dim1)

    swapaxes = swapdims

    def msort(self) -> Any:
        return fnp.sort(self, axis=0)

    def outer(self, other: Any) -> Any:
        for name, v in (("self", self), ("vec2", other)):
            if fnp.ndim(v) != 1:
                raise RuntimeError(f"outer: Expected 1-D argument {name}, but got "
                                   f"{fnp.ndim(v)}-D")
        return fnp.outer(self, other)

    ger = outer

    def cpu(self) -> Any:
        return self.to("cpu")

    def cuda(self, *a: Any, **k: Any) -> Any:
        return self.to("gpu")

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

    @property
    def data(self) -> Any:
        """``x.data`` (older PyTorch code's ``detach()``, a view sharing the values)."""
        return self.detach()

    @property
    def H(self) -> Any:  # noqa: N802  (PyTorch's name)
        return fnp.conj(self.t())

    @property
    def mH(self) -> Any:  # noqa: N802  (PyTorch's name)
        return fnp.conj(fnp.swapaxes(self, -1, -2))

    def type(self, dtype: Any = None, non_blocking: bool = False, **kw: Any) -> Any:
        """``x.type(dtype)`` casts (a dtype, or a name such as ``"torch.FloatTensor"``);
        ``x.type()`` names the type as PyTorch does (``"torch.DoubleTensor"``)."""
        if dtype is None:
            return "torch." + _TENSOR_TYPE_NAMES.get(numpy.dtype(self.dtype).name,
                                                     numpy.dtype(self.dtype).name) + "Tensor"
        if isinstance(dtype, str) and dtype.endswith("Tensor"):
            names = {v: k for k, v in _TENSOR_TYPE_NAMES.items()}
            base = dtype.rsplit(".", 1)[-1][:-len("Tensor")]
            if base not in names:
                raise ValueError(f"type: unknown tensor type {dtype!r}")
            dtype = names[base]
        return self.astype(_np_dtype(dtype))

    def equal(self, other: Any) -> Any:
        """True when ``other`` has this shape and the same elements (PyTorch's
        ``torch.equal``: one bool, not an elementwise comparison)."""
        return fnp.array_equal(self, other)

    def __contains__(self, value: Any) -> Any:
        return fnp.any(self == value)

    def dist(self, other: Any, p: Any = 2) -> Any:
        return self.sub(other).norm(p)

    def sum_to_size(self, *size: Any) -> Any:
        """Summed down to ``size``, which the array's shape broadcasts from (the reduction
        of a broadcast gradient)."""
        size = tuple(_shape(size))
        lead = self.ndim - len(size)
        if lead < 0 or any(s not in (1, d) for s, d in zip(size, self.shape[lead:])):
            raise RuntimeError(f"size {{{', '.join(map(str, size))}}} is not expandable to "
                               f"size {{{', '.join(map(str, self.shape))}}}.")
        axes = tuple(range(lead)) + tuple(lead + k for k, s in enumerate(size)
                                          if s == 1 and self.shape[lead + k] != 1)
        return fnp.reshape(fnp.sum(self, axis=axes), size) if axes else self

    def masked_scatter(self, mask: Any, source: Any) -> Any:
        """Where ``mask`` is True, the elements of ``source`` in order (row-major)."""
        mask = fnp.broadcast_to(mask, self.shape)
        flat_mask = fnp.reshape(mask, (-1,))
        k = fnp.cumsum(flat_mask.astype(numpy.int64)) - 1
        src = fnp.reshape(source, (-1,))
        picked = fnp.take(src, fnp.clip(k, 0, src.shape[0] - 1))
        return fnp.reshape(fnp.where(flat_mask, picked, fnp.reshape(self, (-1,))), self.shape)

    def masked_select(self, mask: Any) -> Any:
        """The elements where ``mask`` is True, as a 1-D array (its length depends on the
        values: not under ``jit``/``vmap``)."""
        shape = numpy.broadcast_shapes(tuple(self.shape), tuple(fnp.shape(mask)))
        return fnp.broadcast_to(self, shape)[fnp.broadcast_to(mask, shape)]

    def nonzero(self, *, as_tuple: bool = False) -> Any:
        """PyTorch's ``nonzero``: an ``(n, ndim)`` array of indices (``as_tuple=True``: one
        index array per dimension, NumPy's form); value-dependent length."""
        idx = fnp.nonzero(self)
        if as_tuple:
            return idx
        return fnp.stack(idx, axis=1) if idx else fnp.zeros((0, 0), numpy.int64)

    def fill_diagonal_(self, fill_value: Any, wrap: bool = False) -> TensorView:
        """PyTorch's ``fill_diagonal_`` (every dimension of an n-d array the same size, or a
        tall matrix, whose diagonal restarts after a gap row with ``wrap``)."""
        if self.ndim > 2 and len(set(self.shape)) != 1:
            raise RuntimeError("all dimensions of input must be of equal length")
        if self.ndim == 2:
            rows, cols = self.shape
            n = rows if wrap else min(rows, cols)
            r = numpy.arange(n)
            if wrap:
                r = r[(r % (cols + 1)) < cols]  # PyTorch leaves one row out between blocks
            idx = (r, r % (cols + 1))
        else:
            r = numpy.arange(self.shape[0])
            idx = (r,) * self.ndim
        return self._assign(self.at[idx].set(fill_value))

    def diag_embed(self, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Any:
        """Each last-axis vector as the (``offset``) diagonal of a matrix in ``dim1``,
        ``dim2`` of the result."""
        n = self.shape[-1] + abs(offset)
        on = fnp.eye(n, k=offset, dtype=bool)
        # entry (r, r + offset) holds element r; (c - offset, c) element c when offset < 0
        vals = fnp.take(self, fnp.clip(fnp.arange(n), 0, self.shape[-1] - 1), axis=-1)
        vals = vals[..., :, None] if offset >= 0 else vals[..., None, :]
        out = fnp.where(on, vals, fnp.zeros((), self.dtype))
        nd = out.ndim
        d1, d2 = dim1 % nd, dim2 % nd
        return fnp.moveaxis(out, (nd - 2, nd - 1), (d1, d2))

    def numpy(self, *, force: bool = False) -> Any:
        """PyTorch's ``x.numpy()`` (``x.detach().numpy()``): the value as a host NumPy array,
        for the "extending autograd with NumPy" pattern, where ``forward``/``backward``
        compute on the host. It needs the concrete value: eagerly and under ``grad``/``jvp``
        it is known; under ``jit``/``vmap`` the Function is traced and this raises (use
        ``funcgrad.pure_callback`` there). A device (GPU) array raises as PyTorch's CUDA
        tensor does, unless ``force`` (or ``.cpu()`` first)."""
        c = self.to_concrete_value()
        if c is None:
            raise TracerArrayConversionError(
                f"{self.aval.str_short()}.numpy() inside a custom Function needs the array's "
                "value, but it is traced here (the Function runs under jit or vmap, which see "
                "no values, or under forward mode, which transposes backward): run the NumPy "
                "code as one operation of the program with "
                "funcgrad.pure_callback(fn, funcgrad.ShapeDtypeStruct(shape, dtype), x), or "
                "call the Function outside jit/vmap")
        dev = device_of(c)
        if dev not in (None, "cpu") and not force:
            raise TypeError(f"can't convert {dev} device type array to numpy. Use .cpu() to "
                            "copy the array to host memory first.")
        return numpy.asarray(to_numpy(c))

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        raise TracerArrayConversionError(
            f"a {self.aval.str_short()} array inside a custom Function cannot become a NumPy "
            "array implicitly (np.asarray(x), or a NumPy array taking it in place: "
            "arr[idx] = x, arr[x > 0] = ...): funcgrad.numpy constructors "
            "(fnp.zeros_like(g)) return plain NumPy arrays, so make new arrays with the tensor "
            "methods instead (g.new_zeros(g.shape), g.clone(), x.new_tensor(data)), whose "
            "item assignment works, and use x.detach().numpy() for an explicit host copy")

    def contiguous(self, *a: Any, **k: Any) -> Any:
        # PyTorch's: the tensor itself when contiguous, else a contiguous copy
        return self if self.is_contiguous() else self.clone()

    def unsqueeze(self, dim: int) -> Any:
        return fnp.expand_dims(self, dim)

    def squeeze(self, dim: Any = None) -> Any:
        if dim is None:
            return fnp.squeeze(self)
        # PyTorch squeezes the given dims (an int or, since 2.0, a tuple) that have size 1
        # and leaves the others
        dims = tuple(dim) if isinstance(dim, tuple | list) else (dim,)
        ones = tuple(d for d in dims if self.shape[d] == 1)
        return fnp.squeeze(self, ones) if ones else self

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

    def var(self, dim: Any = None, unbiased: bool = True, keepdim: bool = False, *,
            correction: Any = None) -> Any:
        if isinstance(dim, bool):  # PyTorch's var(unbiased) overload
            dim, unbiased = None, dim
        ddof = int(unbiased) if correction is None else correction
        return fnp.var(self, axis=_dims(dim), ddof=ddof, keepdims=keepdim)

    def std(self, dim: Any = None, unbiased: bool = True, keepdim: bool = False, *,
            correction: Any = None) -> Any:
        if isinstance(dim, bool):  # PyTorch's std(unbiased) overload
            dim, unbiased = None, dim
        ddof = int(unbiased) if correction is None else correction
        return fnp.std(self, axis=_dims(dim), ddof=ddof, keepdims=keepdim)

    def _minmax(self, name: str, dim: Any, keepdim: bool) -> Any:
        if dim is None:
            return getattr(fnp, name)(self)
        if not isinstance(dim, int):  # torch.max(x, other): elementwise
            return getattr(fnp, "maximum" if name == "max" else "minimum")(self, dim)
        values = getattr(fnp, name)(self, axis=dim, keepdims=keepdim)
        idx = getattr(fnp, "arg" + name)(self, axis=dim, keepdims=keepdim)
        return ValuesIndices(values, idx)

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
        return fnp.maximum(self, fnp.zeros((), self.dtype))

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

    def div(self, o: Any, *, rounding_mode: Any = None) -> Any:
        if rounding_mode is None:
            return self / o
        if rounding_mode == "floor":
            return fnp.floor_divide(self, o)
        if rounding_mode == "trunc":
            q = self / o
            return fnp.trunc(q).astype(q.dtype) if self.dtype.kind in "fc" else \
                fnp.asarray(fnp.trunc(q), dtype=self.dtype)
        raise ValueError(f"div: rounding_mode must be None, 'floor' or 'trunc', got "
                         f"{rounding_mode!r}")

    def neg(self) -> Any:
        return -self

    def float(self) -> Any:
        return fnp.asarray(self, dtype="float32")

    def double(self) -> Any:
        return fnp.asarray(self, dtype="float64")

    def type_as(self, other: Any) -> Any:
        return fnp.asarray(self, dtype=other.dtype)

    def to(self, *args: Any, **kw: Any) -> Any:
        from funcgrad import device_put
        from funcgrad.backend import canonical_device

        dtype, device = kw.get("dtype"), kw.get("device")
        for a in args:
            if isinstance(a, Tracer) or (not isinstance(a, type) and hasattr(a, "shape")
                                         and hasattr(a, "dtype")):
                dtype = a.dtype            # .to(other): other's dtype
            elif isinstance(a, str) and _is_device(a):
                device = a
            elif a is not None:
                dtype = a                  # .to(dtype)
        out = self if dtype is None else fnp.asarray(self, dtype=_np_dtype(dtype))
        if device is not None and canonical_device(device) != self.device:
            # a view of a concrete array moves (device_put leaves traced values, and so the
            # view itself, where they are); a traced one stays, as under funcgrad.jit
            val = out.val if type(out) is TensorView else out
            if not isinstance(val, Tracer):
                out = self._new(device_put(val, canonical_device(device)))
        return out

    def _new(self, value: Any) -> Any:
        if type(value) is TensorView and value._trace is self._trace:
            return value
        return wrap(self._trace, value, force=True)  # type: ignore[arg-type]

    def new_zeros(self, *shape: Any, dtype: Any = None, **kw: Any) -> Any:
        return self._new(fnp.zeros(_shape(shape), dtype=dtype or self.dtype,
                                   device=self._device_kw(kw)))

    def new_ones(self, *shape: Any, dtype: Any = None, **kw: Any) -> Any:
        return self._new(fnp.ones(_shape(shape), dtype=dtype or self.dtype,
                                  device=self._device_kw(kw)))

    def new_empty_strided(self, size: Any, stride: Any, dtype: Any = None, **kw: Any) -> Any:
        """``new_empty(size)``: a fresh array (its layout is row-major whatever ``stride``
        asks; its values, uninitialized in PyTorch, are zeros)."""
        return self.new_empty(tuple(size), dtype=dtype, **kw)

    def diagonal_scatter(self, src: Any, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Any:
        """A copy with ``src`` written over ``diagonal(offset, dim1, dim2)``."""
        return self._scattered_view(src, "diagonal", (offset, dim1, dim2))

    def select_scatter(self, src: Any, dim: int, index: int) -> Any:
        """A copy with ``src`` written over ``select(dim, index)``."""
        return self._scattered_view(src, "select", (dim, index))

    def slice_scatter(self, src: Any, dim: int = 0, start: Any = None, end: Any = None,
                      step: int = 1) -> Any:
        """A copy with ``src`` written over the slice ``start:end:step`` of ``dim``."""
        idx = (slice(None),) * (dim % self.ndim) + (slice(start, end, step),)
        return self.at[idx].set(src)

    def _scattered_view(self, src: Any, name: str, args: tuple) -> Any:
        where = _view_index(self, name, args, {})
        flat = fnp.reshape(self, (-1,))
        src = fnp.broadcast_to(fnp.asarray(src, dtype=self.dtype), where.shape)
        return fnp.reshape(flat.at[where.reshape(-1)].set(fnp.reshape(src, (-1,))),
                           self.shape)

    def as_strided(self, size: Any, stride: Any, storage_offset: int | None = None) -> Any:
        """PyTorch's strided view of the storage this array's elements live in (the array a
        chain of views starts from): element ``idx`` is storage element
        ``storage_offset + sum(idx * stride)`` (the array's own offset by default). A copy
        here: an in-place update of it does not reach the storage."""
        size, stride = tuple(size), tuple(stride)
        if len(size) != len(stride):
            raise RuntimeError(f"mismatch in length of strides and shape: {len(stride)} vs "
                               f"{len(size)}")
        root = self
        while root._base is not None:
            root = root._base[0]
        offset = self.storage_offset() if storage_offset is None else storage_offset
        pos = offset + sum((numpy.arange(n) * st).reshape((-1,) + (1,) * (len(size) - d - 1))
                           for d, (n, st) in enumerate(zip(size, stride)))
        pos = numpy.broadcast_to(numpy.asarray(pos, dtype=numpy.int64), size)
        numel = root.aval.size
        if pos.size and (pos.min() < 0 or pos.max() >= numel):
            raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, "
                               f"storage offset {offset} are out of bounds for storage of "
                               f"size {numel}")
        return fnp.reshape(root, (-1,))[pos]

    def unique_consecutive(self, return_inverse: bool = False, return_counts: bool = False,
                           dim: int | None = None) -> Any:
        """PyTorch's: each run of equal consecutive elements (of the flattened array, or of
        slices along ``dim``) kept once; eagerly only (the size depends on the values)."""
        x = fnp.reshape(self, (-1,)) if dim is None else fnp.moveaxis(self, dim, 0)
        n = x.shape[0]
        if n == 0:
            change = fnp.zeros((0,), bool)
        else:
            differs = x[1:] != x[:-1]
            if differs.ndim > 1:
                differs = fnp.any(fnp.reshape(differs, (n - 1, -1)), axis=1)
            change = fnp.concatenate([fnp.ones((1,), bool), differs])
        out = x[change]
        if dim is not None:
            out = fnp.moveaxis(out, 0, dim)
        extra = []
        if return_inverse:
            inv = fnp.cumsum(change.astype(numpy.int64)) - 1
            extra.append(fnp.reshape(inv, self.shape) if dim is None else inv)
        if return_counts:
            starts = fnp.nonzero(change)[0]
            extra.append(fnp.diff(fnp.concatenate(
                [starts, fnp.full((1,), n, starts.dtype)])).astype(numpy.int64))
        return (out, *extra) if extra else out

    def new_empty(self, *shape: Any, dtype: Any = None, **kw: Any) -> Any:
        return self._new(fnp.zeros(_shape(shape), dtype=dtype or self.dtype,
                                   device=self._device_kw(kw)))

    def new_full(self, size: Any, fill_value: Any, dtype: Any = None, **kw: Any) -> Any:
        return self._new(fnp.full(tuple(size), fill_value, dtype=dtype or self.dtype,
                                  device=self._device_kw(kw)))

    def new_tensor(self, data: Any, dtype: Any = None, **kw: Any) -> Any:
        # on this array's device, as PyTorch's (a host list or NumPy array stayed on the host)
        return self._new(fnp.asarray(data, dtype=dtype or self.dtype,
                                     device=self._device_kw(kw)))

    def _device_kw(self, kw: dict) -> Any:
        """``device=`` of a ``new_*`` call, else this array's device."""
        device = kw.get("device")
        return self.device if device is None else str(device)

    def int(self) -> Any:
        return fnp.asarray(self, dtype="int32")

    def long(self) -> Any:
        return fnp.asarray(self, dtype="int64")

    def bool(self) -> Any:
        return fnp.asarray(self, dtype="bool")

    # PyTorch's names (NumPy's ``byte`` is int8: x.byte() gave int8, PyTorch's is uint8)
    def byte(self) -> Any:
        return fnp.asarray(self, dtype="uint8")

    def char(self) -> Any:
        return fnp.asarray(self, dtype="int8")

    def short(self) -> Any:
        return fnp.asarray(self, dtype="int16")

    def new(self, *args: Any) -> Any:
        """The legacy constructor: ``x.new(2, 3)`` an array of that size (zeros),
        ``x.new(data)`` one from data (``new_tensor``), ``x.new()`` an empty one; this
        array's dtype and device."""
        if not args:
            return self.new_zeros((0,))
        if len(args) == 1 and not isinstance(args[0], int | numpy.integer):
            data = args[0]
            if isinstance(data, tuple) and all(isinstance(d, int) for d in data) \
                    and type(data) is not tuple:  # a torch.Size-like sizes object
                return self.new_zeros(tuple(data))
            return self.new_tensor(data)
        return self.new_zeros(_shape(args))

    def requires_grad_(self, requires_grad: bool = True) -> TensorView:
        """Sets ``requires_grad`` (what is differentiated is still decided by the
        transformation)."""
        self._requires_grad = bool(requires_grad)
        return self

    def resize_(self, *sizes: Any) -> TensorView:
        """PyTorch's ``resize_``: the elements in order, cut or extended (with zeros, where
        PyTorch leaves them uninitialized) to the new size."""
        shape = tuple(_shape(sizes))
        n = int(numpy.prod(shape))
        flat = fnp.reshape(self, (-1,))
        have = flat.shape[0]
        flat = flat[:n] if n <= have else fnp.concatenate(
            [flat, fnp.zeros((n - have,), self.dtype)])
        self.val = unwrap(self._trace, fnp.reshape(flat, shape))  # type: ignore[arg-type]
        self._base = None  # (no longer the parent's shape)
        return self

    def resize_as_(self, other: Any) -> TensorView:
        return self.resize_(tuple(other.shape))

    def half(self) -> Any:
        return fnp.asarray(self, dtype="float16")

    # -- PyTorch methods whose NumPy namesakes mean something else, or that NumPy lacks ---

    def where(self, condition: Any, other: Any) -> Any:
        """``x.where(cond, y)``: ``x`` where ``cond``, else ``y`` (not ``numpy.where(x,
        ...)``)."""
        return fnp.where(condition, self, other)

    def repeat(self, *sizes: Any) -> Any:
        """PyTorch's ``repeat`` tiles (NumPy's ``repeat`` repeats elements)."""
        return fnp.tile(self, _shape(sizes))

    def repeat_interleave(self, repeats: Any, dim: Any = None) -> Any:
        return fnp.repeat(self, repeats, axis=dim)

    def reshape(self, *shape: Any) -> Any:
        return fnp.reshape(self, _shape(shape))

    def reshape_as(self, other: Any) -> Any:
        return fnp.reshape(self, other.shape)

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Any:
        nd = self.ndim
        if nd == 0:
            return fnp.reshape(self, (1,))
        s, e = start_dim % nd, end_dim % nd
        shp = tuple(self.shape)
        return fnp.reshape(self, shp[:s] + (-1,) + shp[e + 1:])

    def movedim(self, source: Any, destination: Any) -> Any:
        return fnp.moveaxis(self, source, destination)

    def unflatten(self, dim: int, sizes: Sequence[int]) -> Any:
        d = dim % self.ndim
        shp = tuple(self.shape)
        return fnp.reshape(self, shp[:d] + tuple(sizes) + shp[d + 1:])

    def select(self, dim: int, index: int) -> Any:
        return fnp.take(self, index, axis=dim)

    def roll(self, shifts: Any, dims: Any = None) -> Any:
        return fnp.roll(self, _dims(shifts), axis=_dims(dims))

    def flip(self, *dims: Any, **kw: Any) -> Any:
        """PyTorch's ``flip(dims)`` (``x.flip(0)``, ``x.flip((0, 1))``, ``x.flip(dims=[1])``)."""
        dims = _shape(dims) if dims else kw.pop("dims", kw.pop("axis", None))
        if kw:
            raise TypeError(f"flip() got unexpected keyword arguments {sorted(kw)}")
        return fnp.flip(self, axis=(dims,) if isinstance(dims, int) else tuple(dims))

    def frac(self) -> Any:
        return self - fnp.trunc(self)

    def _kth_smallest(self, k: int, dim: int, keepdim: bool) -> ValuesIndices:
        """The ``k``-th smallest (0-based) along ``dim`` and its index (NaN ranks largest)."""
        idx = fnp.argsort(self, axis=dim, stable=True)
        values = fnp.take(fnp.take_along_axis(self, idx, axis=dim), k, axis=dim)
        index = fnp.take(idx, k, axis=dim)
        if keepdim:
            values, index = fnp.expand_dims(values, dim), fnp.expand_dims(index, dim)
        return ValuesIndices(values, index)

    def kthvalue(self, k: int, dim: int = -1, keepdim: bool = False) -> ValuesIndices:
        return self._kth_smallest(k - 1, dim, keepdim)

    def median(self, dim: Any = None, keepdim: bool = False) -> Any:
        """PyTorch's median: the lower of the two middle values for an even count (NumPy's
        averages them); NaN when the slice holds one; ``(values, indices)`` with ``dim``."""
        if dim is None:
            flat = fnp.reshape(self, (-1,))
            out = flat._kth_smallest((flat.shape[0] - 1) // 2, 0, False).values
            return fnp.where(fnp.any(fnp.isnan(flat)), fnp.nan, out) \
                if self.aval.dtype.kind in "fc" else out
        got = self._kth_smallest((self.shape[dim] - 1) // 2, dim, keepdim)
        if self.aval.dtype.kind not in "fc":
            return got
        nan = fnp.any(fnp.isnan(self), axis=dim, keepdims=keepdim)
        return ValuesIndices(fnp.where(nan, fnp.nan, got.values), got.indices)

    def _cumulative(self, name: str, dim: int) -> ValuesIndices:
        from funcgrad import lax

        values = getattr(lax, name)(self, axis=dim % self.ndim)
        # index of the latest element equal to the running extreme (PyTorch's on ties)
        pos = fnp.arange(self.shape[dim]).reshape(
            (-1,) + (1,) * (self.ndim - 1 - dim % self.ndim))
        where = fnp.where(self == values, pos, 0)
        return ValuesIndices(values, lax.cummax(where, axis=dim % self.ndim))

    def cummax(self, dim: int) -> ValuesIndices:
        return self._cumulative("cummax", dim)

    def cummin(self, dim: int) -> ValuesIndices:
        return self._cumulative("cummin", dim)

    def logcumsumexp(self, dim: int) -> Any:
        from funcgrad import lax

        return lax.cumlogsumexp(self, axis=dim % self.ndim)

    def sort(self, dim: int = -1, descending: bool = False, stable: bool = False) -> Any:
        idx = fnp.argsort(self, axis=dim, descending=descending, stable=True)
        return ValuesIndices(fnp.take_along_axis(self, idx, axis=dim), idx)

    def argsort(self, dim: int = -1, descending: bool = False, stable: bool = False) -> Any:
        return fnp.argsort(self, axis=dim, descending=descending, stable=True)

    def topk(self, k: int, dim: int = -1, largest: bool = True, sorted: bool = True  # noqa: A002
             ) -> Any:
        from funcgrad import lax

        moved = fnp.moveaxis(self, dim, -1)
        if fnp.issubdtype(moved.dtype, fnp.floating):
            # torch ranks every NaN largest; lax.top_k (IEEE total order) only +NaN, and NaNs
            # that arithmetic makes are -NaN on x86: give them all the positive sign.
            moved = fnp.where(fnp.isnan(moved), fnp.nan, moved)
        v, i = lax.top_k(moved if largest else -moved, k)
        v = v if largest else -v
        i = i.astype(numpy.int64)  # PyTorch's index dtype
        return ValuesIndices(fnp.moveaxis(v, -1, dim), fnp.moveaxis(i, -1, dim))

    def softmax(self, dim: int, dtype: Any = None) -> Any:
        from funcgrad_nn import functional

        return functional.softmax(self, dim, dtype=dtype)

    def log_softmax(self, dim: int, dtype: Any = None) -> Any:
        from funcgrad_nn import functional

        return functional.log_softmax(self, dim, dtype=dtype)

    def logsumexp(self, dim: Any, keepdim: bool = False) -> Any:
        from funcgrad.scipy.special import logsumexp

        return logsumexp(self, axis=_dims(dim), keepdims=keepdim)

    def erf(self) -> Any:
        from funcgrad.scipy.special import erf

        return erf(self)

    def norm(self, p: Any = "fro", dim: Any = None, keepdim: bool = False,
             dtype: Any = None) -> Any:
        """PyTorch's ``Tensor.norm``: a vector norm over ``dim`` (all dims by default, any
        number of them: ``"fro"`` is the 2-norm, a 2-tuple ``dim`` too, not the matrix
        2-norm), ``"nuc"`` the nuclear norm of matrices."""
        x = self if dtype is None else self.astype(_np_dtype(dtype))
        axes = _dims(dim)
        if p == "nuc":
            return fnp.linalg.norm(x, ord="nuc", axis=(-2, -1) if axes is None else axes,
                                   keepdims=keepdim)
        return fnp.linalg.vector_norm(x, ord=2 if p == "fro" else p, axis=axes,
                                      keepdims=keepdim)

    def mode(self, dim: int = -1, keepdim: bool = False) -> ValuesIndices:
        """PyTorch's ``mode``: the most frequent value along ``dim`` (the smallest of a
        tie) and the index of its last occurrence."""
        d = dim % max(self.ndim, 1)
        m = fnp.moveaxis(self, d, -1) if self.ndim else fnp.reshape(self, (1,))
        counts = fnp.sum(m[..., :, None] == m[..., None, :], axis=-1)
        top = fnp.max(counts, axis=-1, keepdims=True)
        kind = numpy.dtype(self.dtype).kind
        big = numpy.inf if kind in "fc" else (True if kind == "b" else numpy.iinfo(
            self.dtype).max)
        values = fnp.min(fnp.where(counts == top, m, big), axis=-1)
        pos = fnp.arange(m.shape[-1])
        indices = fnp.max(fnp.where(m == values[..., None], pos, -1), axis=-1).astype(
            numpy.int64)
        if keepdim and self.ndim:
            values, indices = fnp.expand_dims(values, d), fnp.expand_dims(indices, d)
        return ValuesIndices(values.astype(self.dtype), indices)

    def cross(self, other: Any, dim: Any = None) -> Any:
        """The cross product along ``dim`` (PyTorch's default: the first dimension of size
        3; NumPy's positional third argument is another axis)."""
        if dim is None:
            dim = next((k for k, n in enumerate(self.shape) if n == 3), -1)
        return fnp.cross(self, other, axis=dim)

    # -- linear algebra (PyTorch's tensor methods) -----------------------------------------

    def det(self) -> Any:
        return fnp.linalg.det(self)

    def inverse(self) -> Any:
        return fnp.linalg.inv(self)

    def pinverse(self, rcond: float = 1e-15) -> Any:
        return fnp.linalg.pinv(self, rcond)

    def slogdet(self) -> Any:
        sign, logabsdet = fnp.linalg.slogdet(self)
        return SignLogAbsDet(sign, logabsdet)

    def logdet(self) -> Any:
        """``log(det)``: NaN for a negative determinant, -inf for zero (PyTorch's)."""
        sign, logabsdet = fnp.linalg.slogdet(self)
        return fnp.where(sign < 0, fnp.nan, logabsdet)

    def matrix_exp(self) -> Any:
        from funcgrad.scipy.linalg import expm

        return expm(self)

    def matrix_power(self, n: int) -> Any:
        return fnp.linalg.matrix_power(self, n)

    def cholesky(self, upper: bool = False) -> Any:
        low = fnp.linalg.cholesky(self)
        return fnp.conj(fnp.swapaxes(low, -1, -2)) if upper else low

    def cholesky_inverse(self, upper: bool = False) -> Any:
        """The inverse of ``L Lᴴ`` (``Uᴴ U`` with ``upper``) from its Cholesky factor."""
        factor = fnp.conj(fnp.swapaxes(self, -1, -2)) if upper else self
        return fnp.linalg.inv(fnp.matmul(factor, fnp.conj(fnp.swapaxes(factor, -1, -2))))

    def cholesky_solve(self, factor: Any, upper: bool = False) -> Any:
        """``A⁻¹ self`` for ``A`` given by its Cholesky factor (PyTorch's argument order)."""
        from funcgrad.scipy.linalg import cho_solve

        return cho_solve((factor, not upper), self)

    def triangular_solve(self, A: Any, upper: bool = True, transpose: bool = False,  # noqa: N803
                         unitriangular: bool = False) -> Any:
        """``(A⁻¹ self, A)`` for a triangular ``A`` (PyTorch's deprecated form)."""
        from funcgrad.scipy.linalg import solve_triangular

        x = solve_triangular(A, self, trans=1 if transpose else 0, lower=not upper,
                             unit_diagonal=unitriangular)
        return SolutionCoefficient(x, A * 1)

    def qr(self, some: bool = True) -> Any:
        q, r = fnp.linalg.qr(self, mode="reduced" if some else "complete")
        return QR(q, r)

    def svd(self, some: bool = True, compute_uv: bool = True) -> Any:
        """``(U, S, V)`` with ``V`` (not ``Vᴴ``), PyTorch's ``Tensor.svd``."""
        u, s, vh = fnp.linalg.svd(self, full_matrices=not some)
        v = fnp.conj(fnp.swapaxes(vh, -1, -2))
        if not compute_uv:  # PyTorch returns zero-filled U and V then
            u, v = fnp.zeros_like(u), fnp.zeros_like(v)
        return USV(u, s, v)

    def cov(self, *, correction: int = 1, fweights: Any = None, aweights: Any = None) -> Any:
        return fnp.cov(self, ddof=correction, fweights=fweights, aweights=aweights)

    def quantile(self, q: Any, dim: Any = None, keepdim: bool = False, *,
                 interpolation: str = "linear") -> Any:
        return fnp.quantile(self, q, axis=dim, keepdims=keepdim, method=interpolation)

    def nanquantile(self, q: Any, dim: Any = None, keepdim: bool = False, *,
                    interpolation: str = "linear") -> Any:
        return fnp.nanquantile(self, q, axis=dim, keepdims=keepdim, method=interpolation)

    def nansum(self, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:
        return fnp.nansum(self, axis=_dims(dim), keepdims=keepdim, dtype=dtype)

    def nanmean(self, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:
        return fnp.nanmean(self, axis=_dims(dim), keepdims=keepdim, dtype=dtype)

    def nanmedian(self, dim: Any = None, keepdim: bool = False) -> Any:
        """PyTorch's ``nanmedian``: the lower middle value ignoring NaN; with ``dim``,
        ``(values, indices)``."""
        if self.aval.dtype.kind not in "fc":
            return self.median(dim, keepdim)
        x = fnp.reshape(self, (-1,)) if dim is None else self
        d = 0 if dim is None else dim % self.ndim
        order = fnp.argsort(x, axis=d, stable=True)  # NaN sorts last
        count = fnp.sum(~fnp.isnan(x), axis=d, keepdims=True)
        k = fnp.maximum((count - 1) // 2, 0)
        values = fnp.take_along_axis(fnp.take_along_axis(x, order, axis=d), k, axis=d)
        values = fnp.where(count == 0, fnp.nan, values)  # an all-NaN slice
        indices = fnp.take_along_axis(order, k, axis=d).astype(numpy.int64)
        if dim is None:
            return fnp.reshape(values, ())
        if not keepdim:
            values, indices = fnp.squeeze(values, d), fnp.squeeze(indices, d)
        return ValuesIndices(values, indices)

    def gather(self, dim: int, index: Any) -> Any:
        return fnp.take_along_axis(self, index, axis=dim)

    def _scatter_index(self, dim: int, index: Any) -> tuple:
        """Full index arrays addressing ``out[..., index[i], ...]`` for every element of
        ``index`` (PyTorch's scatter addressing)."""
        dim = dim % self.ndim
        grids = fnp.meshgrid(*[fnp.arange(n) for n in index.shape], indexing="ij")
        return tuple(index if d == dim else grids[d] for d in range(self.ndim))

    def _src_like(self, index: Any, src: Any) -> Any:
        if not hasattr(src, "shape") or tuple(src.shape) == ():
            return fnp.broadcast_to(fnp.asarray(src, dtype=self.dtype), index.shape)
        return src[tuple(slice(0, n) for n in index.shape)]

    def scatter(self, dim: int, index: Any, src: Any = None, value: Any = None,
                reduce: Any = None) -> Any:
        src = value if src is None else src
        at = self.at[self._scatter_index(dim, index)]
        vals = self._src_like(index, src)
        if reduce in ("add", "sum"):
            return at.add(vals)
        if reduce in ("multiply", "prod"):
            return at.multiply(vals)
        return at.set(vals)

    def scatter_add(self, dim: int, index: Any, src: Any) -> Any:
        return self.at[self._scatter_index(dim, index)].add(self._src_like(index, src))

    def index_select(self, dim: int, index: Any) -> Any:
        return fnp.take(self, index, axis=dim)

    def index_add(self, dim: int, index: Any, source: Any, alpha: Any = 1) -> Any:
        idx = (slice(None),) * (dim % self.ndim) + (index,)
        return self.at[idx].add(source if alpha == 1 else alpha * source)

    def index_fill(self, dim: int, index: Any, value: Any) -> Any:
        idx = (slice(None),) * (dim % self.ndim) + (index,)
        return self.at[idx].set(value)

    def index_put(self, indices: Any, values: Any, accumulate: bool = False) -> Any:
        at = self.at[tuple(indices)]
        return at.add(values) if accumulate else at.set(values)

    def chunk(self, chunks: int, dim: int = 0) -> tuple:
        n = self.shape[dim]
        size = -(-n // chunks)
        return self.split(size, dim)

    def split(self, split_size: Any, dim: int = 0) -> tuple:
        n = self.shape[dim]
        if isinstance(split_size, int):
            sizes = [split_size] * (n // split_size) + ([n % split_size] if n % split_size
                                                        else [])
        else:
            sizes = list(split_size)
        out, start = [], 0
        for k in sizes:
            out.append(self.narrow(dim, start, k))
            start += k
        return tuple(out)

    def narrow(self, dim: int, start: int, length: int) -> Any:
        idx = (slice(None),) * (dim % self.ndim) + (slice(start, start + length),)
        return self[idx]

    def unbind(self, dim: int = 0) -> tuple:
        return tuple(self.select(dim, i) for i in range(self.shape[dim]))

    def diagonal(self, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Any:
        return fnp.diagonal(self, offset, dim1, dim2)

    def lerp(self, end: Any, weight: Any) -> Any:
        return self + weight * (end - self)

    def addmm(self, mat1: Any, mat2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
        return beta * self + alpha * fnp.matmul(mat1, mat2)

    def addcmul(self, t1: Any, t2: Any, *, value: Any = 1) -> Any:
        return self + value * t1 * t2

    def addcdiv(self, t1: Any, t2: Any, *, value: Any = 1) -> Any:
        return self + value * t1 / t2

    def addmv(self, mat: Any, vec: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
        return beta * self + alpha * fnp.matmul(mat, vec)

    def addr(self, vec1: Any, vec2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
        return beta * self + alpha * fnp.outer(vec1, vec2)

    def addbmm(self, b1: Any, b2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
        return beta * self + alpha * fnp.sum(fnp.matmul(b1, b2), axis=0)

    def baddbmm(self, b1: Any, b2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
        return beta * self + alpha * fnp.matmul(b1, b2)

    def index_copy(self, dim: int, index: Any, source: Any) -> Any:
        idx = (slice(None),) * (dim % self.ndim) + (index,)
        return self.at[idx].set(source)

    def index_reduce(self, dim: int, index: Any, source: Any, reduce: str, *,
                     include_self: bool = True) -> Any:
        """PyTorch's ``index_reduce`` (``"prod"``, ``"mean"``, ``"amax"``, ``"amin"``)."""
        idx = (slice(None),) * (dim % self.ndim) + (index,)
        return self._reduce_at(idx, source, reduce, include_self, "index_reduce")

    def scatter_reduce(self, dim: int, index: Any, src: Any, reduce: str, *,
                       include_self: bool = True) -> Any:
        """PyTorch's ``scatter_reduce`` (``"sum"``, ``"prod"``, ``"mean"``, ``"amax"``,
        ``"amin"``)."""
        return self._reduce_at(self._scatter_index(dim, index), self._src_like(index, src),
                               reduce, include_self, "scatter_reduce")

    def _reduce_at(self, idx: Any, vals: Any, reduce: str, include_self: bool,
                   who: str) -> Any:
        ops = {"sum": ("add", 0), "prod": ("multiply", 1), "mean": ("add", 0),
               "amax": ("max", None), "amin": ("min", None)}
        if reduce not in ops:
            raise RuntimeError(f"{who}: reduce argument must be one of {sorted(ops)} (or "
                               f"'sum' for scatter_reduce), got {reduce!r}")
        op, ident = ops[reduce]
        hit = self.new_zeros(self.shape).at[idx].add(1)  # writes per element
        if include_self:
            base = self
        else:  # where written, start from the reduction's identity (the first write wins)
            if ident is None:
                info = (numpy.finfo if numpy.dtype(self.dtype).kind == "f" else numpy.iinfo)(
                    self.dtype)
                ident = info.min if op == "max" else info.max
            base = self._new(fnp.where(hit > 0, fnp.asarray(ident, dtype=self.dtype), self))
        out = getattr(base.at[idx], op)(vals)
        if reduce == "mean":
            count = hit + 1 if include_self else fnp.maximum(hit, 1)
            out = out / count
            if numpy.dtype(self.dtype).kind in "iub":  # PyTorch floors an integer mean
                out = fnp.floor(out)
            out = out.astype(self.dtype)
        return out

    def tensor_split(self, indices_or_sections: Any, dim: int = 0) -> tuple:
        """PyTorch's ``tensor_split``: ``n`` parts (the first ``size % n`` one longer), or
        the parts between the given indices."""
        size = self.shape[dim]
        if isinstance(indices_or_sections, int):
            n = indices_or_sections
            if n <= 0:
                raise RuntimeError(f"tensor_split: number of sections must be greater than "
                                   f"0, but got {n}")
            lengths = [size // n + (1 if i < size % n else 0) for i in range(n)]
            bounds = [sum(lengths[:i]) for i in range(n + 1)]
        else:
            cuts = [min(max(int(i), 0), size) for i in indices_or_sections]
            bounds = [0, *cuts, size]
        return tuple(self.narrow(dim, a, max(b - a, 0)) for a, b in zip(bounds, bounds[1:]))

    def take_along_dim(self, indices: Any, dim: Any = None) -> Any:
        if dim is None:
            return fnp.take(fnp.reshape(self, (-1,)), fnp.reshape(indices, (-1,)))
        return fnp.take_along_axis(self, indices, axis=dim)

    def put(self, index: Any, source: Any, accumulate: bool = False) -> Any:
        flat = fnp.reshape(self, (-1,))
        at = flat.at[fnp.reshape(index, (-1,))]
        src = fnp.reshape(source, (-1,))
        return fnp.reshape(at.add(src) if accumulate else at.set(src), self.shape)

    def put_(self, index: Any, source: Any, accumulate: bool = False) -> TensorView:
        return self._assign(self.put(index, source, accumulate))

    def unfold(self, dimension: int, size: int, step: int) -> Any:
        """Sliding windows of ``size`` every ``step`` along ``dimension``: that dimension
        counts the windows, a new last one holds each window (PyTorch's ``unfold``)."""
        d = dimension % max(self.ndim, 1)
        n = (self.shape[d] - size) // step + 1
        starts = fnp.arange(n) * step
        windows = starts[:, None] + fnp.arange(size)[None, :]          # (n, size)
        taken = fnp.take(self, fnp.reshape(windows, (-1,)), axis=d)
        taken = fnp.reshape(taken, self.shape[:d] + (n, size) + self.shape[d + 1:])
        return fnp.moveaxis(taken, d + 1, -1)

    def renorm(self, p: Any, dim: int, maxnorm: Any) -> Any:
        """Each slice along ``dim`` whose ``p``-norm exceeds ``maxnorm`` scaled down to it."""
        axes = tuple(a for a in range(self.ndim) if a != dim % self.ndim)
        norms = fnp.sum(fnp.abs(self) ** p, axis=axes, keepdims=True) ** (1.0 / p)
        factor = fnp.where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0)
        return (self * factor).astype(self.dtype)

    def aminmax(self, *, dim: Any = None, keepdim: bool = False) -> Any:
        return MinMax(fnp.amin(self, axis=dim, keepdims=keepdim),
                      fnp.amax(self, axis=dim, keepdims=keepdim))

    def frexp(self) -> Any:
        mantissa, exponent = fnp.frexp(self)
        return MantissaExponent(mantissa, exponent.astype(numpy.int32))

    def histc(self, bins: int = 100, min: Any = 0, max: Any = 0) -> Any:  # noqa: A002
        """PyTorch's ``histc``: ``bins`` equal bins over ``[min, max]`` (the data's range
        when both are 0), values outside ignored; counts in the array's dtype."""
        flat = fnp.reshape(self, (-1,))
        lo, hi = min, max
        if lo == 0 and hi == 0:
            lo, hi = fnp.min(flat), fnp.max(flat)
        lo, hi = fnp.asarray(lo, dtype=self.dtype), fnp.asarray(hi, dtype=self.dtype)
        same = hi == lo  # PyTorch widens an empty range by 1 on each side
        lo, hi = fnp.where(same, lo - 1, lo), fnp.where(same, hi + 1, hi)
        inside = (flat >= lo) & (flat <= hi)
        k = fnp.floor((flat - lo) * bins / (hi - lo)).astype(numpy.int64)
        k = fnp.clip(k, 0, bins - 1)
        return fnp.bincount(k, weights=inside.astype(self.dtype), length=bins).astype(
            self.dtype)

    def sgn(self) -> Any:
        if numpy.dtype(self.dtype).kind == "c":
            a = fnp.abs(self)
            return fnp.where(a == 0, 0, self / fnp.where(a == 0, 1, a))
        return fnp.sign(self)

    def logit(self, eps: Any = None) -> Any:
        x = self if eps is None else fnp.clip(self, eps, 1 - eps)
        return fnp.log(x / (1 - x))

    def xlogy(self, other: Any) -> Any:
        from funcgrad.scipy.special import xlogy

        return xlogy(self, other)

    def lgamma(self) -> Any:
        from funcgrad.scipy.special import gammaln

        return gammaln(self)

    def digamma(self) -> Any:
        from funcgrad.scipy.special import digamma

        return digamma(self)

    def polygamma(self, n: int) -> Any:
        from funcgrad.scipy.special import polygamma

        return polygamma(n, self)

    def mvlgamma(self, p: int) -> Any:
        from funcgrad.scipy.special import multigammaln

        return multigammaln(self, p)

    def erfinv(self) -> Any:
        from funcgrad.scipy.special import erfinv

        return erfinv(self)

    def erfc(self) -> Any:
        from funcgrad.scipy.special import erfc

        return erfc(self)

    def igamma(self, other: Any) -> Any:
        from funcgrad.scipy.special import gammainc

        return gammainc(self, other)

    def igammac(self, other: Any) -> Any:
        from funcgrad.scipy.special import gammaincc

        return gammaincc(self, other)

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
        if self._base is not None:  # a view: the update lands in its parent too
            parent, name, args, kwargs, _ = self._base
            where = _view_index(parent, name, args, kwargs)
            flat = fnp.reshape(parent, (-1,))
            parent._assign(fnp.reshape(
                flat.at[where.reshape(-1)].set(fnp.reshape(self, (-1,))), parent.shape))
            self._base = (parent, name, args, kwargs, parent._version)  # in step with it
        return self

    def __getitem__(self, idx: Any) -> Any:
        try:
            return fnp._getitem(self, idx)
        except NonConcreteBooleanIndexError as e:
            # x[mask] with a traced mask (jit, vmap): its size is unknown, but an elementwise
            # update written back, x[mask] += v (x[mask] = x[mask] * 2), is a where
            where = self._mask_where(idx, 0)
            if where is None:
                raise
            parts = idx if isinstance(idx, tuple) else (idx,)
            lead = next(i for i, p in enumerate(parts) if not isinstance(p, slice))
            trailing = self.ndim - lead - fnp.ndim(parts[lead])
            return _MaskedSelection(_mask_key(idx), where, trailing, e, self)

    def __setitem__(self, idx: Any, value: Any) -> None:
        if type(value) is _MaskedSelection:
            self._assign(fnp.where(value.where, value.updated_in(self, _mask_key(idx)), self))
            return
        where = self._mask_where(idx, value)
        if where is not None:  # x[mask] = v, x[:, mask] = v: shape-stable (jit, vmap)
            self._assign(fnp.where(where, value, self))
        else:
            self._assign(self.at[idx].set(value, mode="raise"))

    def _mask_where(self, idx: Any, value: Any) -> Any:
        """For ``x[..., mask] = v`` (a boolean mask over some dims after full slices, ``v`` a
        scalar or broadcasting to the dims after the mask): the mask broadcast to ``x``'s
        shape, so the update is a ``where`` with no value-dependent shape; else None."""
        parts = idx if isinstance(idx, tuple) else (idx,)
        lead = 0
        while lead < len(parts) and isinstance(parts[lead], slice) and \
                parts[lead] == slice(None):
            lead += 1
        if lead == len(parts):
            return None
        mask = parts[lead]
        kind = getattr(getattr(mask, "dtype", None), "kind", None)
        if kind != "b" or any(p != slice(None) for p in parts[lead + 1:]
                              if isinstance(p, slice)) or any(
                not isinstance(p, slice) for p in parts[lead + 1:]):
            return None
        m = len(mask.shape)
        if tuple(mask.shape) != tuple(self.shape[lead:lead + m]):
            return None
        trailing = self.ndim - lead - m
        if fnp.ndim(value) > trailing:
            return None
        return fnp.reshape(mask, (1,) * lead + tuple(mask.shape) + (1,) * trailing)

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

    def div_(self, o: Any, *, rounding_mode: Any = None) -> TensorView:
        return self._assign(self.div(o, rounding_mode=rounding_mode))

    def clamp_(self, min: Any = None, max: Any = None) -> TensorView:  # noqa: A002
        return self._assign(fnp.clip(self, min, max))

    def masked_fill_(self, mask: Any, value: Any) -> TensorView:
        return self._assign(self.masked_fill(mask, value))

    def scatter_(self, *args: Any, **kwargs: Any) -> TensorView:
        return self._assign(self.scatter(*args, **kwargs))

    def index_put_(self, *args: Any, **kwargs: Any) -> TensorView:
        return self._assign(self.index_put(*args, **kwargs))

    def transpose_(self, dim0: int, dim1: int) -> TensorView:
        self.val = unwrap(self._trace, fnp.swapaxes(self, dim0, dim1))  # type: ignore[arg-type]
        self._base = None  # (no longer the parent's shape)
        return self

    swapdims_ = swapaxes_ = transpose_

    def t_(self) -> TensorView:
        self.val = unwrap(self._trace, self.t())  # type: ignore[arg-type]  # shape changes
        self._base = None  # (no longer the parent's shape)
        return self

    def unsqueeze_(self, dim: int) -> TensorView:
        self.val = unwrap(self._trace, self.unsqueeze(dim))  # type: ignore[arg-type]
        self._base = None  # (no longer the parent's shape)
        return self

    def squeeze_(self, dim: Any = None) -> TensorView:
        self.val = unwrap(self._trace, self.squeeze(dim))  # type: ignore[arg-type]
        self._base = None  # (no longer the parent's shape)
        return self

    def __getattr__(self, name: str) -> Any:
        if name in _RANDOM_FILLS:
            raise AttributeError(
                f"{name} (an in-place random fill) is not available inside a Function: "
                "funcgrad has no global generator a jit-compiled program could advance; draw "
                "the values with funcgrad.random and an explicit key passed to apply (e.g. "
                f"x.copy_(funcgrad.random.{_RANDOM_FILLS[name]}(key, x.shape, x.dtype)))")
        # In-place form of any method (x.exp_(), x.relu_(), x.addcmul_(...)): compute, rebind.
        if name.endswith("_") and not name.startswith("_"):
            base = name[:-1]
            if hasattr(type(self), base) or callable(getattr(fnp, base, None)):
                def inplace(*args: Any, **kwargs: Any) -> Any:
                    return self._assign(getattr(self, base)(*args, **kwargs))

                inplace.__name__ = name
                return inplace
        # Functions of funcgrad.numpy as methods: x.exp(), x.tanh(), x.cumsum(dim=1)...,
        # with PyTorch's keyword names (dim, keepdim) accepted.
        if not name.startswith("_"):
            fn = getattr(fnp, name, None)
            if callable(fn):
                def method(*args: Any, **kwargs: Any) -> Any:
                    return fn(self, *args, **_torch_kwargs(kwargs))

                method.__name__ = name
                return method
        raise AttributeError(f"array (inside a Function) has no attribute {name!r}")


def _mask_key(idx: Any) -> tuple:
    """What identifies the boolean-mask index ``x[:, mask]``: the mask and its place."""
    parts = idx if isinstance(idx, tuple) else (idx,)
    return tuple(id(p) if not isinstance(p, slice) else (p.start, p.stop, p.step)
                 for p in parts)


#: methods of the elements ``x[mask]`` selects that act on each element alone
_ELEMENTWISE_METHODS = frozenset((
    "abs", "neg", "exp", "log", "sqrt", "rsqrt", "square", "sigmoid", "tanh", "relu", "sin",
    "cos", "sign", "clamp", "clamp_min", "clamp_max", "clip", "pow", "mul", "add", "sub", "div",
    "reciprocal", "floor", "ceil", "round", "trunc", "exp2", "log1p", "expm1", "float",
    "double", "long", "int", "bool", "half", "to", "type_as", "clone", "detach"))


class _MaskedSelection:
    """``x[mask]`` for a traced mask: the elements are not gathered (their number is
    unknown while tracing); elementwise arithmetic runs on all of ``x``, and assigning the
    result back through the same mask (``x[mask] += v``) is ``where(mask, result, x)``.
    Anything else raises the original ``NonConcreteBooleanIndexError``."""

    __slots__ = ("key", "where", "trailing", "error", "full")

    def __init__(self, key: tuple, where: Any, trailing: int, error: Exception,
                 full: Any) -> None:
        """``where``: the mask broadcast against the array; ``trailing``: how many of the
        array's dims follow the mask's."""
        self.key, self.where, self.trailing, self.error = key, where, trailing, error
        self.full = full

    def _operand(self, other: Any) -> Any:
        if type(other) is _MaskedSelection:
            if other.key != self.key or tuple(other.full.shape) != tuple(self.full.shape):
                raise self.error
            return other.full
        # a scalar or a value broadcasting over the dims after the mask broadcasts the same
        # way against the whole array
        if fnp.ndim(other) > self.trailing:
            raise self.error
        return other

    def updated_in(self, target: TensorView, key: tuple) -> Any:
        """The whole array to pick the selected elements from, for ``target[key] = self``."""
        if key != self.key or tuple(target.shape) != tuple(self.full.shape):
            raise self.error
        return self.full

    def _apply(self, fn: Any, *others: Any) -> _MaskedSelection:
        return _MaskedSelection(self.key, self.where, self.trailing, self.error,
                                fn(self.full, *[self._operand(o) for o in others]))

    def __getattr__(self, name: str) -> Any:
        if name in _ELEMENTWISE_METHODS:
            def method(*args: Any, **kwargs: Any) -> Any:
                return self._apply(lambda full, *a: getattr(full, name)(*a, **kwargs), *args)
            return method
        raise self.error

    def __neg__(self) -> _MaskedSelection:
        return self._apply(lambda f: -f)

    def __pos__(self) -> _MaskedSelection:
        return self

    def __abs__(self) -> _MaskedSelection:
        return self._apply(abs)

    def __array__(self, *a: Any, **k: Any) -> Any:
        raise self.error

    def __bool__(self) -> bool:
        raise self.error

    def __len__(self) -> int:
        raise self.error


def _masked_binop(op: Any, reflected: bool) -> Any:
    if reflected:
        return lambda self, other: self._apply(lambda f, o: op(o, f), other)
    return lambda self, other: self._apply(op, other)


for _name, _op in (("add", operator.add), ("sub", operator.sub), ("mul", operator.mul),
                   ("truediv", operator.truediv), ("floordiv", operator.floordiv),
                   ("mod", operator.mod), ("pow", operator.pow)):
    setattr(_MaskedSelection, f"__{_name}__", _masked_binop(_op, False))
    setattr(_MaskedSelection, f"__r{_name}__", _masked_binop(_op, True))


#: PyTorch's in-place random fills -> the funcgrad.random function drawing such values
_RANDOM_FILLS = {"uniform_": "uniform", "normal_": "normal", "bernoulli_": "bernoulli",
                 "random_": "randint", "exponential_": "exponential", "cauchy_": "cauchy",
                 "log_normal_": "lognormal", "geometric_": "geometric"}


# -- views ------------------------------------------------------------------------------
# Methods whose result is a view of the array in PyTorch (shares its storage). The result
# remembers how it was made; an in-place update of it then finds which elements of the
# parent it covers by making the same view of an array of element numbers (lazily: only when
# a view is updated) and scatters the new values there.
_VIEW_METHODS = ("__getitem__", "narrow", "select", "view", "view_as", "reshape", "reshape_as",
                 "flatten", "unflatten", "t", "transpose", "permute", "movedim", "squeeze",
                 "unsqueeze", "diagonal", "detach", "swapdims", "swapaxes")


def _basic_index(idx: Any) -> bool:
    """A basic index (ints, slices, None, Ellipsis): PyTorch's indexing that makes a view
    (an array, list or mask index makes a copy)."""
    parts = idx if isinstance(idx, tuple) else (idx,)
    return all(p is None or p is Ellipsis or (isinstance(p, int | numpy.integer)
               and not isinstance(p, bool))
               or (isinstance(p, slice) and all(v is None or isinstance(v, int | numpy.integer)
                                                for v in (p.start, p.stop, p.step)))
               for p in parts)


def _view_index(parent: TensorView, name: str, args: tuple, kwargs: dict) -> numpy.ndarray:
    """The flat positions in ``parent`` of the elements of ``parent.<name>(*args)``."""
    trace = TensorViewTrace(eval_trace)
    token = _trace_var.set(trace)
    try:
        numbers = TensorView(trace, numpy.arange(int(numpy.prod(parent.shape))).reshape(parent.shape))
        out = getattr(TensorView, f"_view_{name}")(numbers, *args, **kwargs)
        return numpy.asarray(unwrap(trace, out))
    finally:
        _trace_var.reset(token)


def _make_view(name: str) -> Any:
    method = getattr(TensorView, name)

    def view(self: TensorView, *args: Any, **kwargs: Any) -> Any:
        out = method(self, *args, **kwargs)
        if (type(out) is TensorView and out is not self and out._trace is self._trace
                and out._base is None and (name != "__getitem__" or _basic_index(args[0]))):
            out._base = (self, name, args, kwargs, self._version)
        return out

    view.__name__ = name
    return view


for _name in _VIEW_METHODS:
    setattr(TensorView, f"_view_{_name}", getattr(TensorView, _name))
    setattr(TensorView, _name, _make_view(_name))


def _with_torch_kwargs(name: str) -> Any:
    fn = getattr(fnp, name)

    def method(self: TensorView, *args: Any, **kwargs: Any) -> Any:
        return fn(self, *args, **_torch_kwargs(kwargs))

    method.__name__ = name
    return method


def _with_torch_reduction(name: str) -> Any:
    """A reduction with PyTorch's positional order ``(dim, keepdim)`` (NumPy's second
    positional argument is ``out``)."""
    fn = getattr(fnp, name)

    def method(self: TensorView, dim: Any = None, keepdim: bool = False, **kwargs: Any) -> Any:
        kw = _torch_kwargs(kwargs)
        return fn(self, axis=_dims(kw.pop("axis", dim)), keepdims=kw.pop("keepdims", keepdim),
                  **kw)

    method.__name__ = name
    return method


# Array methods funcgrad's tracers already have, given PyTorch's keyword names too.
for _name in ("cumsum", "cumprod"):
    setattr(TensorView, _name, _with_torch_kwargs(_name))
for _name in ("all", "any", "argmax", "argmin", "amax", "amin"):
    setattr(TensorView, _name, _with_torch_reduction(_name))


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
