"""Emission: how one equation becomes a Python expression, and the run-time helpers the
generated code calls.

:func:`emission` picks, for an equation, a Python operator on float scalars
(:data:`~funcgrad.compile.rules.scalar_operators`), else the primitive's emitter
(:data:`~funcgrad.compile.rules.emitters`), else the array call it declared
(:data:`~funcgrad.compile.rules.array_calls`, :data:`~funcgrad.compile.rules.reduction_calls`),
else a call of its ``impl`` (bound into the generated module's globals), which is correct for
every primitive. :class:`Context` binds Python objects into the generated module.
:mod:`funcgrad.compile.codegen` (one function per jaxpr) and :mod:`funcgrad.compile.fusion`
(one kernel per fused group) both build on this module.

Example:
    >>> import numpy as np, funcgrad
    >>> from funcgrad.ops.elementwise import sin
    >>> eqn = funcgrad.make_jaxpr(sin)(np.ones(2)).eqns[0]
    >>> emission(Context(), eqn, ["a"]).expr
    'xp.sin(a)'
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy

from funcgrad import config as _config
from funcgrad.backend import may_share_memory
from funcgrad.compile.rules import (
    Emission,
    array_calls,
    array_operand,
    emitters,
    reduction_calls,
    scalar_operators,
    weak_arithmetic_primitives,
)
from funcgrad.ir import ClosedJaxpr, Eqn, Literal, Var

__all__ = ["Context", "Emission", "emission", "Scratch", "typed_literal", "IMMUTABLE"]

IMMUTABLE = (bool, int, float, complex, numpy.generic)


class Context:
    """Binds Python objects (constants, functions) into the generated function's globals.

    ``preamble`` holds the source of helper functions an emitter writes into the generated
    module (before the main function; fusion kernels); ``fusion`` is the fusion setting the
    module is generated with.
    """

    def __init__(self, fusion: Any = None,
                 compile_sub: Callable[[ClosedJaxpr, str, Any], Any] | None = None) -> None:
        self._compile_sub = compile_sub
        self.globals: dict[str, Any] = {"_copy": _copy, "_unshare": _unshare, "_arr": _arr}
        self._names: dict[int, str] = {}
        self._keep: list[Any] = []
        self._counts: dict[str, int] = {}
        self.preamble: list[str] = []
        self.fusion = fusion
        #: every equation calls its impl (a program over several devices: codegen)
        self.per_operand_modules = False

    def count(self, kind: str) -> int:
        """0, 1, 2, ... on successive calls with the same ``kind`` (unique helper names)."""
        n = self._counts.get(kind, 0)
        self._counts[kind] = n + 1
        return n

    def bind(self, obj: Any, hint: str = "g") -> str:
        """A global name for ``obj`` (the same object always gets the same name)."""
        name = self._names.get(id(obj))
        if name is None:
            name = f"_{hint}{len(self._names)}"
            self._names[id(obj)] = name
            self._keep.append(obj)  # ids stay unique while we hold them
            self.globals[name] = obj
        return name

    def literal(self, val: Any) -> str:
        """Python source for a constant: plain for finite Python numbers, else a global."""
        t = type(val)
        if t is bool or t is int:
            return repr(val)
        if t is float and math.isfinite(val):
            return repr(val)
        if val is None:
            return "None"
        if t is str:
            return repr(val)
        if t is tuple and all(type(v) in (int, bool) for v in val):
            return repr(val)
        return self.bind(val, "k")

    def subfunction(self, closed: ClosedJaxpr, name: str = "sub") -> str:
        """A global name for the compiled ``closed``: call it as ``name(xp, *args)`` -> list."""
        if self._compile_sub is None:
            raise RuntimeError("Context.subfunction: this context compiles no sub-functions")
        exe = self._compile_sub(closed, name, self.fusion)
        return self.bind(exe.fn, "f")


def typed_literal(a: Literal) -> Any:
    """A literal's value as it must act at run time: a Python scalar stays weak only where
    the jaxpr says so; a strong-typed one becomes a NumPy scalar of its dtype (NumPy 2
    promotes those like arrays)."""
    v = a.val
    if type(v) in (int, float, complex) and not a.aval.weak_type:
        return a.aval.dtype.type(v)
    if type(v) is numpy.ndarray and v.ndim == 0:
        # A host 0-d array (AD's seed `1.0`) would meet device arrays where it is passed as
        # is (a loop's carry); a NumPy scalar promotes alike and goes to every device.
        return v[()]
    return v


def _copy(v: Any) -> Any:
    return v if isinstance(v, IMMUTABLE) else v.copy()


def _arr(xp: Any, v: Any) -> Any:
    # As eager evaluation does: NumPy scalars (from reductions, 0-d ufuncs) leave as arrays,
    # on the device the function ran on.
    return xp.asarray(v) if isinstance(v, numpy.generic) else v


class Scratch:
    """Buffers for intermediates that never leave the function, kept between calls.

    Fresh arrays of tens of kilobytes and more are not free: freeing several makes malloc
    hand the memory back to the system and the next call page-faults it in again (this
    measured up to 4x the run time of a 10^4-element Hessian-vector product). ``get`` hands
    a call its own set (a concurrent or re-entrant call gets a new one; ``list.pop`` and
    ``append`` are atomic), ``put`` takes it back; a few sets per array module are kept.
    """

    __slots__ = ("specs", "free")

    def __init__(self, specs: list[tuple[tuple, Any]]) -> None:
        self.specs = specs
        self.free: dict[int, list[list[Any]]] = {}

    def get(self, xp: Any) -> list[Any]:
        sets = self.free.get(id(xp))
        if sets:
            try:
                return sets.pop()
            except IndexError:  # another thread took it
                pass
        return [xp.empty(shape, dtype) for shape, dtype in self.specs]

    def put(self, xp: Any, bufs: list[Any]) -> None:
        sets = self.free.setdefault(id(xp), [])
        if len(sets) < 2:
            sets.append(bufs)


def _unshare(xp: Any, v: Any, *others: Any) -> Any:
    """``v``, or a copy of it when it shares memory with one of ``others``."""
    if isinstance(v, IMMUTABLE):
        return v
    for o in others:
        if o is v or (type(o) is type(v) and may_share_memory(v, o)):
            return v.copy()
    return v


# ---------------------------------------------------------------------------------------------
# Emitters from the calls the primitives declare (compile.rules.array_calls / reduction_calls)


def _array_call_emitter(ctx: Context, eqn: Eqn, args: list[str]) -> Emission | None:
    """``xp.<name>(*operands, **params)`` for a primitive that declared that it computes it."""
    name = array_calls.get(eqn.prim)
    if name is None:
        return _reduction_emitter(ctx, eqn, args)
    uf = getattr(numpy, name, None)
    is_ufunc = isinstance(uf, numpy.ufunc)
    if not is_ufunc and args:  # not a ufunc: CuPy's function takes an array, not a scalar
        args = [array_operand(eqn, 0, args[0]), *args[1:]]
    elif any(_wide_int_literal(a) for a in eqn.invars) and any(
            a.aval.dtype.kind in "fc" for a in eqn.invars):
        # a Python int no 64-bit integer holds, beside floats: NumPy converts it to their
        # dtype (float16 + 2**64 is inf), CuPy raises OverflowError (ops.elementwise's
        # wide_ints_as_floats, as the impl does)
        args = [repr(float(a.val)) if _wide_int_literal(a) else s
                for a, s in zip(eqn.invars, args)]
    parts = list(args) + [f"{k}={ctx.literal(v)}" for k, v in sorted(eqn.params.items())]
    # One call of the ufunc with its operands positional: it takes `out=`, which may be one
    # of the operands.
    plain_call = is_ufunc and not eqn.params and len(args) == uf.nin and uf.nout == 1
    return Emission(f"xp.{name}({', '.join(parts)})", fresh=is_ufunc,
                    out="elementwise" if plain_call else None)


def _wide_int_literal(a: Any) -> bool:
    """A literal Python int no 64-bit integer holds that a float does (10**300, not 10**400:
    that one NumPy refuses too, at run time)."""
    return (type(a) is Literal and type(a.val) is int and not -(2**63) <= a.val < 2**64
            and abs(a.val) < 2**1024)


def _reduction_emitter(ctx: Context, eqn: Eqn, args: list[str]) -> Emission | None:
    xp_name = reduction_calls.get(eqn.prim)
    if xp_name is None or set(eqn.params) != {"axes"}:
        return None
    axes = tuple(eqn.params["axes"])
    x = eqn.invars[0]
    # As the impl: axis=None for a full reduction (NumPy's fast path; it also fixes the
    # summation order the impl gets).
    axis = None if axes and len(axes) == x.aval.ndim else axes
    if xp_name in _REDUCE_METHODS and axis is not None and type(x) is Var and x.aval.ndim:
        # An array at run time: its method skips the function's dispatch (~4 us). (A 0-d
        # value may be a Python scalar there, a weak-typed jit argument: no methods.)
        return Emission(f"{args[0]}.{xp_name}(axis={axis!r})", fresh=bool(axes))
    return Emission(f"xp.{xp_name}({array_operand(eqn, 0, args[0])}, axis={axis!r})",
                    fresh=bool(axes))


_REDUCE_METHODS = frozenset(("sum", "max", "min", "prod", "any", "all"))




def _fallback(ctx: Context, eqn: Eqn, args: list[str]) -> Emission:
    impl = eqn.prim.impl
    if impl is None:
        raise eqn.prim.missing_impl_error()
    fn = functools.partial(impl, **eqn.params) if eqn.params else impl
    name = ctx.bind(fn, "p")
    call = f"{name}({', '.join(args)})"
    return Emission(call if eqn.prim.multiple_results else f"{call}[0]")


def _run_on(device: str, impl: Callable[..., list[Any]], *args: Any, **params: Any
            ) -> list[Any]:
    token = _config.default_device.set(device)
    try:
        return impl(*args, **params)
    finally:
        _config.default_device.reset(token)


def _on_its_device(ctx: Context, eqn: Eqn, args: list[str]) -> Emission:
    """A call of ``eqn``'s impl, in a program over several devices: with the device its
    result lives on as the default, so operands without one (NumPy scalars, Python
    numbers) compute there, not on the process's default device."""
    device = eqn.outvars[0].aval.device if eqn.outvars else None
    if device is None:
        return _fallback(ctx, eqn, args)
    impl = eqn.prim.impl
    if impl is None:
        raise eqn.prim.missing_impl_error()
    fn = functools.partial(impl, **eqn.params) if eqn.params else impl
    name = ctx.bind(functools.partial(_run_on, device, fn), "p")
    call = f"{name}({', '.join(args)})"
    return Emission(call if eqn.prim.multiple_results else f"{call}[0]")


def _scalar_operator(eqn: Eqn, args: list[str]) -> Emission | None:
    """``a * b`` instead of ``xp.multiply(a, b)`` on float scalars: a ufunc call on scalars
    costs ~1 us, NumPy's scalar arithmetic a tenth (the same IEEE operation, the same NEP 50
    types). Only when an operand is a strong value (a NumPy scalar or 0-d array at run time),
    so two Python floats never meet as such; not for integers (scalar overflow warns). The
    result is a new scalar (fresh: it shares memory with nothing)."""
    out = eqn.outvars[0].aval
    if out.shape or out.dtype.kind not in "fc":
        return None
    strong = False
    for a in eqn.invars:
        aval = a.aval
        if aval.shape:
            return None
        # (a bool is strong but may be a Python bool at run time, where False / False
        # raises ZeroDivisionError instead of giving NumPy's nan)
        if not strong and type(a) is Var and not aval.weak_type and aval.dtype.kind != "b":
            strong = True
    if not strong:
        return None
    op = scalar_operators[eqn.prim]
    # (a wide Python int literal as a float, as the array call writes it: CuPy refuses it)
    args = [repr(float(a.val)) if _wide_int_literal(a) else s for a, s in zip(eqn.invars, args)]
    expr = f"{op}{args[0]}" if len(args) == 1 else f"{args[0]} {op} {args[1]}"
    return Emission(expr, fresh=True)


def _python_scalar(impl: Callable, params: dict) -> Callable:
    """``impl`` on Python scalars, its 0-d result a Python scalar again (``.item()``). A loop
    may run its body on a whole batch of the weak value (a batched while's counter): that
    result stays the array it is. Scalars alone compute on the host, as Python's own
    arithmetic on them would (with a GPU as the default device each was a kernel launch and
    a read back, in CUDA's last bits)."""
    def run(*args: Any) -> Any:
        r = _run_on("cpu", impl, *args, **params)[0]
        return r.item() if getattr(r, "ndim", None) == 0 else r
    return run


def _weak_arithmetic(ctx: Context, eqn: Eqn, args: list[str]) -> Emission | None:
    """Python arithmetic on weak operands alone (``1 - s`` of a Python float ``s``) is typed
    weak (:data:`~funcgrad.compile.rules.weak_arithmetic_primitives`), so its value must act
    weak at run time: a Python scalar, as the operands are. It is computed by the primitive
    (NumPy's arithmetic, so ``1.0 / 0.0`` is inf, not a ZeroDivisionError; the dtype the
    jaxpr says) and handed back as a Python scalar."""
    if not eqn.outvars[0].aval.weak_type:
        return None
    impl = eqn.prim.impl
    if impl is None:
        raise eqn.prim.missing_impl_error()
    name = ctx.bind(_python_scalar(impl, eqn.params), "p")
    return Emission(f"{name}({', '.join(args)})")


def emission(ctx: Context, eqn: Eqn, args: list[str]) -> Emission:
    """What ``eqn`` is written as: a Python scalar for weak arithmetic, a Python operator on
    float scalars, the primitive's emitter, the array call it declared, or a call of its
    impl."""
    prim = eqn.prim
    em0 = None
    if prim in weak_arithmetic_primitives and eqn.outvars[0].aval.weak_type:
        em0 = _weak_arithmetic(ctx, eqn, args)
    elif prim in scalar_operators:
        em0 = _scalar_operator(eqn, args)
    if em0 is not None:
        return em0
    if ctx.per_operand_modules:
        return _on_its_device(ctx, eqn, args)
    em = emitters.get(prim)
    out = em(ctx, eqn, args) if em is not None else _array_call_emitter(ctx, eqn, args)
    return out if out is not None else _fallback(ctx, eqn, args)
