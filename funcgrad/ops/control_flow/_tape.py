"""Run-time-length tapes: the residuals of a differentiated ``while_loop``.

A reverse-mode derivative of a loop needs, per iteration, the values its linear part reads
(residuals). A ``scan`` knows its length while tracing, so its residuals stack into arrays.
A ``while_loop`` learns its trip count only when it runs, so its residuals go into a
:class:`Tape`: a list of arrays of one abstract value whose length is decided at run time.
Its abstract value :class:`TapeAval` (printed ``tape[f64[3]]``) lets tapes flow through
jaxprs like any other residual; only the control-flow primitives read or write them.

A :class:`TapeAval` reports the *element's* shape and dtype, so a batched tape (every element
carrying a batch axis) is handled by the batching interpreter like a batched array.
"""

from __future__ import annotations

from typing import Any

from funcgrad.avals import ShapedArray
from funcgrad.interpreters.jvp import zeros_like_aval

__all__ = ["TapeAval", "Tape", "ZeroTape", "is_tape_aval", "empty_tape"]


class TapeAval(ShapedArray):
    """The abstract value of a :class:`Tape` whose elements have abstract value ``elem``.

    Example:
        >>> import numpy
        >>> str(TapeAval(ShapedArray((3,), numpy.float64)))
        'tape[f64[3]]'
    """

    __slots__ = ("elem",)

    def __init__(self, elem: ShapedArray) -> None:
        super().__init__(elem.shape, elem.dtype, elem.weak_type, elem.device)
        self.elem = elem
        self._hash = hash(("tape", elem))

    def update(self, **kw: Any) -> TapeAval:
        return TapeAval(self.elem.update(**kw))

    def strip_weak(self) -> TapeAval:
        return self if not self.weak_type else self.update(weak_type=False)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TapeAval) and self.elem == other.elem

    def __hash__(self) -> int:
        return self._hash

    def zeros(self) -> ZeroTape:
        """The zero value of this type (``zeros_like_aval`` asks for it)."""
        return ZeroTape(self)

    def str_short(self) -> str:
        return f"tape[{self.elem.str_short()}]"

    __str__ = str_short

    def __repr__(self) -> str:
        return f"TapeAval({self.elem!r})"


def is_tape_aval(a: Any) -> bool:
    return type(a) is TapeAval


class Tape:
    """A run-time-length sequence of arrays that share the abstract value ``aval.elem``.

    Example:
        >>> import numpy
        >>> t = Tape([numpy.ones(2), numpy.zeros(2)], TapeAval(ShapedArray((2,), "float64")))
        >>> len(t), str(t.aval)
        (2, 'tape[f64[2]]')
    """

    __slots__ = ("items", "aval")

    def __init__(self, items: list[Any], aval: TapeAval) -> None:
        self.items = items
        self.aval = aval

    @property
    def dtype(self) -> Any:
        return self.aval.dtype

    @property
    def shape(self) -> tuple[int, ...]:
        return self.aval.shape

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i: int) -> Any:
        return self.items[i]

    def __add__(self, other: Any) -> Tape:
        # add_any sums the cotangents of a tape read twice by linear code.
        if type(other) is ZeroTape:
            return self
        if not isinstance(other, Tape) or len(other) != len(self):
            raise TypeError(f"cannot add {self!r} and {other!r}")
        return Tape([a + b for a, b in zip(self.items, other.items)], self.aval)

    __radd__ = __add__

    def copy(self) -> Tape:
        return Tape(list(self.items), self.aval)

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        raise TypeError(f"{self!r} is a tape of loop residuals, not an array")

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        # Tapes share no memory with arrays (jit's output un-aliasing asks); nothing else.
        if getattr(func, "__name__", "") in ("may_share_memory", "shares_memory"):
            return False
        return NotImplemented

    def __repr__(self) -> str:
        return f"Tape(len={len(self.items)}, {self.aval.str_short()})"

    __str__ = __repr__


class ZeroTape(Tape):
    """A tape of zeros of any length: the zero (co)tangent of a tape, and the filler of a
    residual slot that the taken branch of a ``cond`` does not use.

    Loops over tapes take their length from the other tapes; indexing gives zeros.
    """

    __slots__ = ("_zero",)

    def __init__(self, aval: TapeAval) -> None:
        super().__init__([], aval)
        self._zero: Any = None

    def __getitem__(self, i: int) -> Any:
        if self._zero is None:

            elem = self.aval.elem
            self._zero = ZeroTape(elem) if type(elem) is TapeAval else zeros_like_aval(elem)
        return self._zero

    def __add__(self, other: Any) -> Tape:
        return other

    __radd__ = __add__

    def copy(self) -> ZeroTape:
        return self

    def __repr__(self) -> str:
        return f"ZeroTape({self.aval.str_short()})"

    __str__ = __repr__


def empty_tape(aval: TapeAval) -> Tape:
    """The zero tape of ``aval`` (what a branch that ran no loop contributes)."""
    return ZeroTape(aval)
