"""Abstract values: what a transformation knows about an array without its contents.

``ShapedArray`` holds shape, dtype, weak type and device. Dtype promotion follows NumPy 2
(NEP 50): Python scalars are *weak* and take the other operand's precision, so
``float32_array * 2.0`` stays float32.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy

from funcgrad.backend import canonical_device, device_of, get_default_device
from funcgrad.errors import DTypeError

__all__ = [
    "ShapedArray",
    "ShapeDtypeStruct",
    "get_aval",
    "float0",
    "result_dtype",
    "is_float",
    "is_complex",
    "is_inexact",
    "short_dtype_name",
    "canonical_dtype",
    "expand_stand_in",
    "extended_dtypes",
]

#: dtype of the tangent of an integer or boolean value: it carries no information.
float0 = numpy.dtype([("float0", numpy.void, 0)])

_SUPPORTED_KINDS = frozenset("biufc")


class ShapedArray:
    """The abstract value of an array: ``shape``, ``dtype``, ``weak_type``, ``device``.

    ``weak_type`` marks values that came from Python scalars: they adopt the dtype of the
    arrays they meet (NEP 50). ``device`` is None for values that may live anywhere.

    Example:
        >>> a = ShapedArray((2, 3), numpy.dtype("float32"))
        >>> str(a), a.ndim, a.size
        ('float32[2,3]', 2, 6)
    """

    __slots__ = ("shape", "dtype", "weak_type", "device", "_hash")

    def __init__(
        self,
        shape: tuple[int, ...],
        dtype: Any,
        weak_type: bool = False,
        device: str | None = None,
    ) -> None:
        self.shape = tuple(shape)
        self.dtype = numpy.dtype(dtype)
        self.weak_type = bool(weak_type)
        self.device = device
        self._hash = hash((self.shape, self.dtype, self.weak_type, self.device))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)  # numpy.prod of a tuple costs microseconds

    def update(self, **kw: Any) -> ShapedArray:
        """A copy with some fields replaced."""
        return ShapedArray(
            kw.get("shape", self.shape),
            kw.get("dtype", self.dtype),
            kw.get("weak_type", self.weak_type),
            kw.get("device", self.device),
        )

    def strip_weak(self) -> ShapedArray:
        return self if not self.weak_type else self.update(weak_type=False)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, ShapedArray)
            and self.shape == other.shape
            and self.dtype == other.dtype
            and self.weak_type == other.weak_type
            and self.device == other.device
        )

    def __hash__(self) -> int:
        return self._hash

    def str_short(self, short_dtypes: bool = True, mesh_axis_types: bool = False) -> str:
        """``f32[2,3]`` (``float32[2,3]`` with ``short_dtypes=False``): the form jaxprs and
        error messages print. JAX's default is the long dtype name; ``mesh_axis_types`` is
        JAX's (no mesh axes here).
        """
        dt = short_dtype_name(self.dtype) if short_dtypes else numpy.dtype(self.dtype).name
        return f"{dt}[{','.join(map(str, self.shape))}]"

    def __str__(self) -> str:
        # JAX's: the full dtype name, a weak type marked by "~" (str(aval) is "~float32[]")
        return ("~" if self.weak_type else "") + self.str_short(short_dtypes=False)

    def __repr__(self) -> str:
        extra = ", weak_type=True" if self.weak_type else ""
        dev = f", device={self.device!r}" if self.device else ""
        return f"ShapedArray({self.str_short(short_dtypes=False)}{extra}{dev})"


#: Extended dtypes (funcgrad.random's ``key<fry>``): dtype class -> a function of a
#: ShapeDtypeStruct of that dtype giving the pytree it stands for when traced (key arrays over
#: a uint32 stand-in of their data). Their owners, above this layer, fill it.
extended_dtypes: dict[type, Callable[[ShapeDtypeStruct], Any]] = {}


def expand_stand_in(x: Any) -> Any:
    """``x``, or the pytree of plain stand-ins an extended-dtype ShapeDtypeStruct stands for
    (what ``eval_shape``, ``jit(...).trace/lower`` and ``make_jaxpr`` trace).

    Example:
        >>> expand_stand_in(ShapeDtypeStruct((2,), numpy.int32))
        ShapeDtypeStruct(shape=(2,), dtype=int32)
    """
    if type(x) is ShapeDtypeStruct:
        expand = extended_dtypes.get(type(x.dtype))
        if expand is not None:
            return expand(x)
    return x


#: The classes ``ShapeDtypeStruct(sharding=...)`` takes: funcgrad.sharding's ``Sharding`` and
#: ``PartitionSpec``, which that module registers here (it lives above this layer).
sharding_types: list[type] = []
#: ``funcgrad.sharding.Format`` (registered there): what ``ShapeDtypeStruct.format`` builds.
format_types: list[type] = []


class ShapeDtypeStruct:
    """A stand-in for an array of this shape and dtype, as ``jax.ShapeDtypeStruct``.

    Accepted wherever an example argument is only needed for its type: ``jit(f).lower``,
    ``make_jaxpr``, ``eval_shape``, ``funcgrad.export.export``. ``weak_type`` marks the
    stand-in for a Python scalar (NEP 50); ``device`` is where the array will live (the default
    device when None). ``sharding`` (keyword, as JAX's) is a :mod:`funcgrad.sharding` layout
    (a ``Sharding`` or ``PartitionSpec``), kept as ``.sharding``; a ``Sharding`` also gives the
    device; a ``funcgrad.sharding.Format`` gives a layout with the sharding (``.format``; the
    layout must fit the rank). ``manual_axis_type`` and ``is_ref`` are JAX 0.10.2's keywords:
    ``None`` and ``False`` only (funcgrad's meshes have no manual axis types, and it has no
    mutable array references). ``make_jaxpr(..., return_shape=True)`` and
    ``Lowered.out_info`` describe results with it.

    Example:
        >>> import numpy as np, funcgrad
        >>> x = ShapeDtypeStruct((2, 3), np.float32)
        >>> x, x.ndim, x.size
        (ShapeDtypeStruct(shape=(2, 3), dtype=float32), 2, 6)
        >>> funcgrad.jit(lambda a: a.sum(0)).lower(x).out_info
        ShapeDtypeStruct(shape=(3,), dtype=float32)
    """

    __slots__ = ("shape", "dtype", "weak_type", "device", "sharding", "_layout")

    def __init__(self, shape: Any, dtype: Any, weak_type: bool = False,
                 device: str | None = None, *, sharding: Any = None,
                 manual_axis_type: Any = None, is_ref: bool = False) -> None:
        if manual_axis_type is not None:
            raise TypeError(
                f"ShapeDtypeStruct: manual_axis_type must be None, got {manual_axis_type!r}: "
                "funcgrad's meshes have no manual axis types (shard_map bodies see local "
                "shapes without them)")
        if is_ref:
            raise TypeError(
                "ShapeDtypeStruct: is_ref=True describes a mutable array reference "
                "(jax.new_ref), which funcgrad does not have; describe the array itself")
        if isinstance(shape, int | numpy.integer):
            shape = (shape,)
        try:
            dims = tuple(int(d) for d in shape)
        except TypeError:
            raise TypeError(
                f"ShapeDtypeStruct: shape must be a tuple of ints, got {shape!r}"
            ) from None
        if any(d < 0 for d in dims):
            raise ValueError(f"ShapeDtypeStruct: shape must not be negative, got {dims}")
        if dtype is None:
            # JAX: ValueError "ShapeDtypeStruct: dtype must be specified."
            raise ValueError("ShapeDtypeStruct: dtype must be specified (e.g. numpy.float32)")
        self.shape = dims
        # An extended dtype (a typed key's key<fry>) is kept as is: tracing expands the
        # stand-in (expand_stand_in).
        self.dtype = (dtype if type(dtype) in extended_dtypes
                      else canonical_dtype(dtype, "ShapeDtypeStruct"))
        self.weak_type = bool(weak_type)
        self._layout = None
        split = getattr(sharding, "split_format", None)
        if split is not None:  # a Format: a layout (checked against the rank) and a sharding
            self._layout, sharding = split(dims)
        if sharding is not None:
            if not isinstance(sharding, tuple(sharding_types)):
                raise ValueError(
                    "ShapeDtypeStruct: sharding should be an instance of "
                    "funcgrad.sharding.Sharding or PartitionSpec, got "
                    f"{sharding!r} of type {type(sharding).__name__}")
            if hasattr(sharding, "check_shape"):  # a Sharding: the layout must fit the shape
                sharding.check_shape(dims)
                if device is None:
                    device = sharding._device()
        self.sharding = sharding
        self.device = canonical_device(device) if device is not None else None

    @classmethod
    def from_aval(cls, aval: ShapedArray) -> ShapeDtypeStruct:
        """The struct describing an abstract value.

        Example:
            >>> ShapeDtypeStruct.from_aval(ShapedArray((2,), numpy.int32))
            ShapeDtypeStruct(shape=(2,), dtype=int32)
        """
        return cls(aval.shape, aval.dtype, aval.weak_type, aval.device)

    def update(self, **kwargs: Any) -> ShapeDtypeStruct:
        """A copy with some of ``shape``, ``dtype``, ``weak_type``, ``device`` replaced, as
        JAX's ``ShapeDtypeStruct.update``.

        Example:
            >>> ShapeDtypeStruct((2, 3), numpy.float32).update(shape=(4,))
            ShapeDtypeStruct(shape=(4,), dtype=float32)
        """
        fields = ("shape", "dtype", "weak_type", "device", "sharding")
        unknown = sorted(set(kwargs) - set(fields))
        if unknown:
            raise TypeError(f"ShapeDtypeStruct.update: unknown field(s) {unknown}; it has "
                            f"{', '.join(fields)}")
        sharding = kwargs.get("sharding", self.format if self._layout is not None
                              else self.sharding)
        return ShapeDtypeStruct(*(kwargs.get(f, getattr(self, f)) for f in fields[:4]),
                                sharding=sharding)

    @property
    def is_ref(self) -> bool:
        """False: a stand-in for an array, not a mutable reference (JAX's attribute)."""
        return False

    @property
    def manual_axis_type(self) -> None:
        """None: funcgrad's meshes have no manual axis types (JAX's attribute)."""
        return None

    @property
    def format(self) -> Any:
        """The layout and sharding, a ``funcgrad.sharding.Format`` (as JAX's ``.format``)."""
        return format_types[0](self._layout, self.sharding)

    @property
    def aval(self) -> ShapedArray:
        """The abstract value tracing sees (on the default device unless one was given)."""
        return ShapedArray(self.shape, self.dtype, self.weak_type,
                           self.device or get_default_device())

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of an unsized (0-d) ShapeDtypeStruct")
        return self.shape[0]

    def __eq__(self, other: object) -> bool:
        return (type(other) is ShapeDtypeStruct and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type
                and self.device == other.device and self.sharding == other.sharding
                and self._layout == other._layout)

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype, self.weak_type, self.device, self.sharding,
                     self._layout))

    def __repr__(self) -> str:
        extra = ", weak_type=True" if self.weak_type else ""
        # a sharding names the device already (JAX's repr shows the sharding alone)
        dev = f", device={self.device!r}" if self.device and self.sharding is None else ""
        sh = f", sharding={self.sharding!r}" if self.sharding is not None else ""
        if self._layout is not None:
            sh += f", format={self._layout!r}"
        return (f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{extra}{dev}"
                f"{sh})")


_SHORT = {
    "float64": "f64", "float32": "f32", "float16": "f16",
    "int64": "i64", "int32": "i32", "int16": "i16", "int8": "i8",
    "uint64": "u64", "uint32": "u32", "uint16": "u16", "uint8": "u8",
    "complex128": "c128", "complex64": "c64", "bool": "bool",
}


def short_dtype_name(dtype: Any) -> str:
    """``f64`` for float64, ``i32`` for int32, ``float0`` for float0, and so on.

    Example:
        >>> short_dtype_name(numpy.float32)
        'f32'
    """
    dtype = numpy.dtype(dtype)
    if dtype == float0:
        return "float0"
    return _SHORT.get(dtype.name, dtype.name)


#: jax.numpy's names for ml_dtypes' narrow types. NumPy has no arithmetic, reductions or
#: linear algebra for them (ml_dtypes registers only a few ufuncs) and CuPy none at all, so
#: funcgrad, which computes with NumPy/CuPy kernels, cannot hold arrays of them.
NARROW_DTYPES = (
    "bfloat16", "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "float8_e3m4",
    "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2",
    "float8_e5m2fnuz", "float8_e8m0fnu", "int1", "int2", "int4", "uint1", "uint2", "uint4",
)


def _narrow_dtype_error(what: str, name: str) -> DTypeError:
    return DTypeError(
        f"{what}: dtype {name!r} is one of jax.numpy's narrow (ml_dtypes) types; "
        "funcgrad computes with NumPy/CuPy kernels, which have none: use float32 or float16")


def canonical_dtype(dtype: Any, what: str = "array") -> numpy.dtype:
    """Validate a dtype funcgrad can compute with; object, string and the like are refused.

    Example:
        >>> canonical_dtype("float32")
        dtype('float32')
    """
    try:
        dt = numpy.dtype(dtype)
    except TypeError:
        if isinstance(dtype, str) and dtype in NARROW_DTYPES:  # x.astype("bfloat16")
            raise _narrow_dtype_error(what, dtype) from None
        raise
    # Once ml_dtypes is imported (by JAX, or by CuPy 14 on a GPU machine) NumPy knows the
    # names, and the dtype is a kind "V" one: the same narrow-type error, not the generic one.
    if dt.kind == "V" and dt.name in NARROW_DTYPES:
        raise _narrow_dtype_error(what, dt.name)
    if dt.kind not in _SUPPORTED_KINDS and dt != float0:
        raise DTypeError(
            f"{what}: dtype {dt} is not supported; funcgrad computes on bool, integer, "
            "float and complex arrays (convert strings/objects to numbers first)"
        )
    return dt


_PY_WEAK = {int: numpy.dtype("int64"), float: numpy.dtype("float64"),
            complex: numpy.dtype("complex128")}


# ShapedArrays are immutable, so one per (shape, dtype) serves every ndarray.
_ndarray_avals: dict[tuple, ShapedArray] = {}
# ... and one per Python scalar type serves every Python scalar.
# NumPy's scalar types too (a gradient seed is one): each type has one dtype.
_scalar_avals: dict[type, ShapedArray] = {
    bool: ShapedArray((), numpy.dtype(bool), False, None),
    **{t: ShapedArray((), dt, True, None) for t, dt in _PY_WEAK.items()},
    **{numpy.dtype(c).type: ShapedArray((), numpy.dtype(c), False, None)
       for c in "?bBhHiIlLqQefdgFDG"},
}


#: the classes of traced values: :class:`funcgrad.core.Tracer` and its subclasses, registered
#: as they are defined (``type(x) in tracer_types`` is ``isinstance(x, Tracer)`` without a
#: call, for the checks tracing makes on every operand). Each instance carries its ``aval``.
tracer_types: set[type] = set()


def get_aval(x: Any) -> ShapedArray:
    """The abstract value of a concrete array, Python scalar or tracer.

    Example:
        >>> get_aval(1.0)
        ShapedArray(float64[], weak_type=True)
        >>> get_aval(numpy.ones((2,), numpy.float32))
        ShapedArray(float32[2], device='cpu')
    """
    t = type(x)
    # Host arrays first: the hot case, and getattr(ndarray, "aval") would raise internally.
    if t is numpy.ndarray:
        hit = _ndarray_avals.get((x.shape, x.dtype))
        if hit is not None:
            return hit
    elif t in tracer_types:  # tracing's hot case: the tracer's own
        aval = x.aval
        if type(aval) is ShapedArray or isinstance(aval, ShapedArray):
            return aval
    else:
        hit = _scalar_avals.get(t)
        if hit is not None:
            return hit
        aval = getattr(x, "aval", None)
        if isinstance(aval, ShapedArray):
            return aval
    if t is numpy.ndarray:
        key = (x.shape, x.dtype)
        hit = _ndarray_avals.get(key)
        if hit is None:
            if x.dtype.kind not in _SUPPORTED_KINDS:
                canonical_dtype(x.dtype)
            hit = ShapedArray(x.shape, x.dtype, False, "cpu")
            if len(_ndarray_avals) > 10_000:
                _ndarray_avals.clear()
            _ndarray_avals[key] = hit
        return hit
    if t is bool:
        return ShapedArray((), numpy.dtype(bool), False, None)
    if t in _PY_WEAK:
        return ShapedArray((), _PY_WEAK[t], True, None)
    if isinstance(x, numpy.generic):
        return ShapedArray((), canonical_dtype(x.dtype), False, None)
    if isinstance(x, bool):
        return ShapedArray((), numpy.dtype(bool), False, None)
    for pt, dt in _PY_WEAK.items():
        if isinstance(x, pt):
            return ShapedArray((), dt, True, None)
    dev = device_of(x)
    if dev is not None:
        return ShapedArray(x.shape, canonical_dtype(x.dtype), False, dev)
    t = type(x)
    raise TypeError(
        f"{t.__module__}.{t.__qualname__} is not a valid funcgrad array type; expected a "
        "NumPy/CuPy array or a Python or NumPy scalar (funcgrad.numpy's functions also take "
        "lists and tuples of numbers). Convert it first with funcgrad.numpy.asarray(x) (which "
        "takes objects with __array__ or __dlpack__, such as torch tensors and JAX arrays)"
    )


def _stand_in(dtype: numpy.dtype, weak: bool) -> Any:
    if not weak:
        return dtype
    return {"i": 0, "u": 0, "f": 0.0, "c": 0j, "b": False}[dtype.kind]


_KIND_RANK = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def weak_join(dtypes: tuple[numpy.dtype, ...]) -> numpy.dtype:
    """The dtype of an operation on weakly typed operands of ``dtypes`` alone: the widest
    of those of the highest kind (bool < integer < float < complex).

    Example:
        >>> weak_join((numpy.dtype(numpy.float32), numpy.dtype(numpy.int64)))
        dtype('float32')
    """
    top = max(_KIND_RANK.get(d.kind, 0) for d in dtypes)
    return numpy.dtype(numpy.result_type(*(d for d in dtypes
                                            if _KIND_RANK.get(d.kind, 0) == top)))


@functools.lru_cache(maxsize=4096)
def _result_dtype_cached(key: tuple[tuple[numpy.dtype, bool], ...]) -> tuple[numpy.dtype, bool]:
    weak = all(w for _, w in key)
    if weak:
        # Weak with weak, still weak: the highest kind wins (int + float -> the float), with
        # the widest dtype of that kind (JAX's lattice; for Python scalars alone it is
        # NumPy's scalar rule, int + float -> float64), so a weak float32 stays float32.
        return weak_join(tuple(d for d, _ in key)), True
    return numpy.dtype(numpy.result_type(*(_stand_in(d, w) for d, w in key))), False


def result_dtype(*avals: ShapedArray) -> tuple[numpy.dtype, bool]:
    """The (dtype, weak_type) NumPy 2 gives for an operation on ``avals`` (NEP 50).

    Example:
        >>> f32 = ShapedArray((), numpy.float32)
        >>> result_dtype(f32, get_aval(2.0))
        (dtype('float32'), False)
    """
    return _result_dtype_cached(tuple((a.dtype, a.weak_type) for a in avals))


def is_float(dtype: Any) -> bool:
    return numpy.dtype(dtype).kind == "f"


def is_complex(dtype: Any) -> bool:
    return numpy.dtype(dtype).kind == "c"


def is_inexact(dtype: Any) -> bool:
    """Whether values of ``dtype`` can carry derivatives (floating or complex)."""
    return numpy.dtype(dtype).kind in "fc"
