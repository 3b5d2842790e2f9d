"""JAX's ``precision=`` of contractions, shared by ``funcgrad.numpy`` (matmul, dot, einsum,
...) and ``funcgrad.lax`` (dot_general, the convolutions): ``Precision``, the dot algorithms
(``DotAlgorithm``, ``DotAlgorithmPreset``), the check of every accepted form, and the
operands a dot algorithm computes with.

NumPy and CuPy multiply in the full precision of the dtype, so ``Precision`` values and their
names change nothing; a dot algorithm (a ``DotAlgorithmPreset``, its name, or a
``DotAlgorithm``) is honoured: the operands are rounded to its storage types and the products
summed in its accumulation type, as JAX does before handing the algorithm to XLA.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy

import funcgrad.ops.elementwise as _ew
import funcgrad.ops.elementwise_extra as _ewx
from funcgrad.avals import get_aval

__all__ = ["Precision", "DotAlgorithm", "DotAlgorithmPreset", "PrecisionLike",
           "check_precision", "algorithm_of", "algorithm_types", "to_format",
           "algorithm_operands"]

Array = Any


class Precision(enum.Enum):
    """``jax.lax.Precision``: accepted for compatibility (NumPy/CuPy always compute in the
    dtype's full precision). As JAX's, it is made from its names too: ``Precision("highest")``
    (or ``"float32"``) is ``HIGHEST``, ``"high"`` (``"bfloat16_3x"``, ``"tensorfloat32"``)
    ``HIGH``, ``"default"`` (``"bfloat16"``, ``"fastest"``) ``DEFAULT``; ``str`` is the
    member's name.

    Example:
        >>> from funcgrad import lax
        >>> lax.Precision("float32"), str(lax.Precision.HIGH)
        (Precision.HIGHEST, 'HIGH')
    """

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value: object) -> Precision | None:
        if isinstance(value, str):
            member = _PRECISION_BY_NAME.get(value.lower())
            if member is not None:
                return cls[member]
        return None

    def __repr__(self) -> str:
        return f"Precision.{self.name}"

    def __str__(self) -> str:
        return self.name


_PRECISION_BY_NAME = {"highest": "HIGHEST", "float32": "HIGHEST", "high": "HIGH",
                      "bfloat16_3x": "HIGH", "tensorfloat32": "HIGH", "default": "DEFAULT",
                      "bfloat16": "DEFAULT", "fastest": "DEFAULT"}


_PRECISION_NAMES = {"default", "high", "highest", "bfloat16", "tensorfloat32", "float32",
                    "fastest", "bfloat16_3x"}


# Storage formats NumPy has no dtype for: the algorithms' operands are rounded to them with
# reduce_precision (exponent bits, mantissa bits) and kept in float32, exactly representable.
_EMULATED_FORMATS = {"bfloat16": (8, 7), "tensorfloat32": (8, 10)}
_F16, _F32, _F64 = numpy.dtype("float16"), numpy.dtype("float32"), numpy.dtype("float64")


class DotAlgorithm(NamedTuple):
    """``jax.lax.DotAlgorithm``: the types a contraction computes in, for ``precision=``.

    ``lhs_precision_type``/``rhs_precision_type`` are what the operands are rounded to and
    ``accumulation_type`` what the products are summed in; the result keeps
    :func:`dot_general`'s dtype. funcgrad honours the three types (``"bfloat16"`` and
    ``"tensorfloat32"`` too, rounded to those formats); the component counts and
    ``allow_imprecise_accumulation`` only name hardware tricks and change nothing here.

    Example:
        >>> import numpy as np
        >>> from funcgrad import lax
        >>> alg = lax.DotAlgorithm(np.float32, np.float32, np.float32)
        >>> x = np.array([1 + 2.0 ** -40])
        >>> lax.dot(x, np.ones(1), precision=alg).tolist()   # rounded to float32 first
        1.0
    """

    lhs_precision_type: Any
    rhs_precision_type: Any
    accumulation_type: Any
    lhs_component_count: int = 1
    rhs_component_count: int = 1
    num_primitive_operations: int = 1
    allow_imprecise_accumulation: bool = False


class DotAlgorithmPreset(enum.Enum):
    """``jax.lax.DotAlgorithmPreset``: JAX's named dot algorithms (``LHS_RHS_ACCUMULATION``),
    for ``precision=`` as a member or by name.

    Operands whose dtype is not among the preset's ``supported_lhs_types`` are converted to
    its first one, and the products summed in the ``accumulation_type`` (or the result type
    among ``supported_output_types``), as JAX does before handing the algorithm to XLA. The
    ``_X3``/``_X6``/``_X9`` splittings of bfloat16 presets emulate float32 and compute as
    float32; the float8 presets need float8 operands, which NumPy has not (a ``ValueError``).

    Example:
        >>> import numpy as np
        >>> from funcgrad import lax
        >>> a = np.array([1.0, 2.0, 3.0, 4.0], np.float16)
        >>> lax.dot(a, a, precision=lax.DotAlgorithmPreset.F16_F16_F32)
        array(30., dtype=float16)
        >>> lax.dot(a, a, precision="F16_F16_F32", preferred_element_type=np.float32).dtype
        dtype('float32')
    """

    DEFAULT = enum.auto()
    ANY_F8_ANY_F8_F32 = enum.auto()
    ANY_F8_ANY_F8_F32_FAST_ACCUM = enum.auto()
    ANY_F8_ANY_F8_ANY = enum.auto()
    ANY_F8_ANY_F8_ANY_FAST_ACCUM = enum.auto()
    F16_F16_F16 = enum.auto()
    F16_F16_F32 = enum.auto()
    BF16_BF16_BF16 = enum.auto()
    BF16_BF16_F32 = enum.auto()
    BF16_BF16_F32_X3 = enum.auto()
    BF16_BF16_F32_X6 = enum.auto()
    BF16_BF16_F32_X9 = enum.auto()
    TF32_TF32_F32 = enum.auto()
    TF32_TF32_F32_X3 = enum.auto()
    F32_F32_F32 = enum.auto()
    F64_F64_F64 = enum.auto()

    def __repr__(self) -> str:
        return f"DotAlgorithmPreset.{self.name}"

    def __str__(self) -> str:
        return self.name

    @property
    def supported_lhs_types(self) -> tuple[Any, ...] | None:
        """The operand storage types the preset takes as they are (JAX's table); ``None``:
        any."""
        name = self.name
        if name == "DEFAULT" or name.startswith("ANY_F8"):
            return None
        if name.startswith("F16"):
            return (_F16,)
        if name in ("BF16_BF16_BF16", "BF16_BF16_F32"):
            return ("bfloat16", _F32)
        return (_F64,) if name == "F64_F64_F64" else (_F32,)

    @property
    def supported_rhs_types(self) -> tuple[Any, ...] | None:
        """As ``supported_lhs_types``."""
        return self.supported_lhs_types

    @property
    def accumulation_type(self) -> Any:
        """The type the products are summed in (``None``: the result's)."""
        name = self.name
        if name in ("DEFAULT", "ANY_F8_ANY_F8_ANY", "ANY_F8_ANY_F8_ANY_FAST_ACCUM"):
            return None
        return {"F16_F16_F16": _F16, "BF16_BF16_BF16": "bfloat16",
                "F64_F64_F64": _F64}.get(name, _F32)

    def supported_output_types(self, lhs_dtype: Any, rhs_dtype: Any) -> tuple[Any, ...] | None:
        """The accumulation types the preset allows for these operand types (JAX's table)."""
        if self.name in ("F16_F16_F32", "BF16_BF16_F32"):
            # a half-width result only when both operands are stored half-width
            low = _F16 if self.name == "F16_F16_F32" else "bfloat16"
            both = all(format_name(t) == low for t in (lhs_dtype, rhs_dtype))
            return (_F32, low) if both else (_F32,)
        acc = self.accumulation_type
        return None if acc is None else (acc,)


#: jax.lax's type alias of what ``precision=`` takes, for annotations.
PrecisionLike = None | str | Precision | tuple[str, str] | tuple[Precision, Precision]


def _preset_named(name: str) -> DotAlgorithmPreset | None:
    return DotAlgorithmPreset.__members__.get(name)


def algorithm_of(precision: Any) -> DotAlgorithm | DotAlgorithmPreset | None:
    """The dot algorithm ``precision`` names (a member or a preset's name), else None.

    The ``jax_default_matmul_precision`` flag is not read: jit's cache is not keyed on it,
    so a program traced under one setting would run under another."""
    if isinstance(precision, DotAlgorithm | DotAlgorithmPreset):
        return precision
    return _preset_named(precision) if isinstance(precision, str) else None


def format_name(dt: Any) -> Any:
    """A dot algorithm's type as a NumPy dtype, or the name of a format NumPy lacks."""
    if isinstance(dt, str) and dt.lower() in ("bfloat16", "bf16", "tf32", "tensorfloat32"):
        return "bfloat16" if dt.lower().startswith("b") else "tensorfloat32"
    try:
        return numpy.dtype(dt)
    except TypeError:
        raise ValueError(f"dot algorithm: the type {dt!r} is not a dtype "
                         "funcgrad has (NumPy dtypes, 'bfloat16', 'tensorfloat32')") from None


def algorithm_types(alg: DotAlgorithm | DotAlgorithmPreset, lhs_dt: numpy.dtype,
                     rhs_dt: numpy.dtype, out_dt: numpy.dtype) -> tuple[Any, Any, Any]:
    """JAX's get_algorithm_compute_types: (lhs, rhs, accumulation) types of the algorithm."""
    if isinstance(alg, DotAlgorithm):
        return tuple(format_name(t) for t in (alg.lhs_precision_type, alg.rhs_precision_type,
                                               alg.accumulation_type))
    if alg.name.startswith("ANY_F8"):
        raise ValueError(f"The dot algorithm '{alg.name}' requires both inputs to have float8 "
                         f"dtypes. Got {lhs_dt} and {rhs_dt} instead (funcgrad has no float8)")

    def pick(dt: Any, allowed: tuple[Any, ...] | None) -> Any:
        return dt if allowed is None or dt in allowed else allowed[0]
    lt = pick(lhs_dt, alg.supported_lhs_types)
    rt = pick(rhs_dt, alg.supported_rhs_types)
    return lt, rt, pick(out_dt, alg.supported_output_types(lt, rt))


def to_format(x: Array, fmt: Any) -> Array:
    """``x`` rounded to the algorithm's storage type (a format NumPy lacks: float32 holding
    values rounded to it)."""
    if fmt in _EMULATED_FORMATS:
        x = _ew.convert_element_type(x, _F32)
        return _ewx.reduce_precision(x, *_EMULATED_FORMATS[fmt])
    return _ew.convert_element_type(x, fmt)


def check_precision(name: str, precision: Any) -> None:
    """Raise a ``ValueError`` naming ``name`` (``"lax.dot_general"``, ``"numpy.matmul"``)
    unless ``precision`` is one of JAX's forms: None, a ``Precision``, one of its names, a
    pair of those, a ``DotAlgorithmPreset`` or its name, or a ``DotAlgorithm``."""
    if isinstance(precision, DotAlgorithm | DotAlgorithmPreset) or (
            isinstance(precision, str) and _preset_named(precision) is not None):
        return
    items = precision if isinstance(precision, tuple | list) else (precision,)
    if isinstance(precision, tuple | list) and len(precision) != 2:
        raise ValueError(f"{name}: precision pairs have 2 entries, got {precision!r}")
    for p in items:
        if p is None or isinstance(p, Precision) or (
                isinstance(p, str) and p.lower() in _PRECISION_NAMES):
            continue
        raise ValueError(f"{name}: precision must be None, a lax.Precision, one of "
                         f"{sorted(_PRECISION_NAMES)} or a pair of them, a "
                         f"lax.DotAlgorithmPreset or its name, or a lax.DotAlgorithm, got {p!r}")


def algorithm_operands(name: str, precision: Any, operands: Sequence[Array],
                       out_dtype: Any) -> tuple[list[Array], numpy.dtype | None]:
    """``precision`` checked; when it names a dot algorithm, the operands rounded to its
    storage types and converted to its accumulation type, with the dtype to convert the
    contraction to afterwards (``out_dtype``, what the contraction gives without an
    algorithm); otherwise the operands as given and None."""
    check_precision(name, precision)
    alg = algorithm_of(precision)
    if alg is None or alg is DotAlgorithmPreset.DEFAULT:
        return list(operands), None
    out_dt = numpy.dtype(out_dtype)
    dts = [get_aval(o).dtype for o in operands]
    if out_dt.kind == "c" or any(d.kind == "c" for d in dts):
        raise TypeError(f"{name}: dot algorithm {alg} takes real operands, got "
                        f"{', '.join(map(str, dts))}")
    lt, rt, acc = algorithm_types(alg, dts[0], dts[-1], out_dt)
    acc = out_dt if acc is None else acc
    if acc in _EMULATED_FORMATS:
        raise ValueError(f"{name}: accumulating in {acc} (dot algorithm {alg}) needs a dtype "
                         "NumPy has not; use an algorithm accumulating in float32")
    fmts = [lt] * (len(operands) - 1) + [rt]
    return ([_ew.convert_element_type(to_format(o, f), acc) for o, f in zip(operands, fmts)],
            out_dt)
