"""Code generation: an optimised closed jaxpr becomes one straight-line Python function.

The generated function takes the array module first (``xp``: NumPy, CuPy or the strict test
module, picked from the arguments' device at each call) and the jaxpr's inputs, and returns
the list of outputs::

    def f(xp, a, b):
        c = xp.sin(a)                  # sin (user.py:3)
        d = xp.multiply(c, b)          # mul (user.py:3)
        return [d]

Each primitive is written by an *emitter* (:data:`emitters`, or one discovered automatically
for the elementwise primitives made by ``funcgrad.ops.elementwise``'s factories and the
reductions made by ``funcgrad.ops.reductions``'s) that writes exactly what the primitive's impl
would compute; a primitive without one calls its ``impl`` (bound into the function's globals),
which is correct for every primitive. Higher-order primitives can register an emitter that
calls a compiled sub-function (:meth:`Context.subfunction`).

**Buffer reuse.** An elementwise result may be written (``out=``) into the buffer of a value
that is dead afterwards, when the shapes and dtypes match, the array is big enough for it to
pay (:data:`REUSE_MIN_SIZE` elements) and no alias can observe the write: only buffers this
function allocated itself (a ufunc/matmul/astype result) are reused -- never an input (unless
donated and checked at call time), a const, or anything that may be a view (broadcast,
reshape, transpose, or any primitive without an emitter, whose result may alias its inputs);
a buffer counts as dead only when every value that may alias it is dead. Writing into an
operand of the same operation is done only for elementwise ufuncs reading that exact buffer.

**Scratch buffers.** An intermediate that no dead buffer can hold and that never reaches an
output is written into a buffer kept with the function between calls (:class:`_Scratch`, up
to :data:`SCRATCH_MAX_BYTES`): fresh arrays of tens of kilobytes cost page faults each call.

**Rewrites at generation time** (same values, cheaper calls): a broadcast read only by
elementwise operations is not materialised (:func:`elide_broadcasts`); ``(I * v) @ r`` with an
identity constant ``I`` is a row scaling when ``v`` is finite (:func:`diag_products`); float
arithmetic on scalars uses Python operators; elementwise chains over big arrays are fused
(:mod:`funcgrad.compile.fusion`).

**Outputs never alias what they did not alias before optimisation**: an output that may share
memory with an input, a const or another output (which simplification or CSE can cause, e.g.
``x * 1.0`` -> ``x``) is copied unless the traced function returned that very input.
"""

from __future__ import annotations

import collections
import functools
import linecache
import math
import threading
import weakref
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy

from funcgrad.avals import float0
from funcgrad.backend import get_default_device, is_array, to_numpy, xp_for, xp_for_device
from funcgrad.compile.keys import structure_key
from funcgrad.core import Primitive
from funcgrad.interpreters.jaxpr_rules import weak_memo
from funcgrad.interpreters.jvp import add_any_p
from funcgrad.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var, effectful_primitives
from funcgrad.ops import elementwise as _ew
from funcgrad.ops import reductions as _red
from funcgrad.ops import shape as _shape

__all__ = [
    "Emission",
    "Context",
    "emitters",
    "Executable",
    "generate_source",
    "REUSE_MIN_SIZE",
]

#: arrays smaller than this are not worth an ``out=`` (the keyword costs more than malloc)
REUSE_MIN_SIZE = 4096
#: most bytes of scratch buffers one generated function keeps between calls
SCRATCH_MAX_BYTES = 1 << 25

_INF = 1 << 62
_tie_mask_p = getattr(_red, "tie_mask_p", None)
_IMMUTABLE = (bool, int, float, complex, numpy.generic)


class Emission(NamedTuple):
    """What an emitter writes for one equation.

    ``expr`` is a Python expression (over the argument names it was given, ``xp`` and globals
    bound through the :class:`Context`); for a multiple-result primitive it evaluates to a
    sequence. ``fresh`` says the results of rank >= 1 are newly allocated (never views of an
    input). ``out`` says ``expr`` is one call that accepts ``out=``: ``"elementwise"`` (a
    ufunc over exactly these operands: the output may be one of them) or ``"fresh"`` (the
    output buffer must not be an operand) or ``"first"`` (the output may be the first operand's
    buffer, no other). ``comment`` replaces the primitive's name in the
    line's comment.
    """

    expr: str
    fresh: bool = False
    out: str | None = None
    comment: str | None = None


class Context:
    """Binds Python objects (constants, functions) into the generated function's globals.

    ``preamble`` holds the source of helper functions an emitter writes into the generated
    module (before the main function; fusion kernels); ``fusion`` is the fusion setting the
    module is generated with.
    """

    def __init__(self, fusion: Any = None) -> None:
        self.globals: dict[str, Any] = {"_copy": _copy, "_unshare": _unshare, "_arr": _arr}
        self._names: dict[int, str] = {}
        self._keep: list[Any] = []
        self._counts: dict[str, int] = {}
        self.preamble: list[str] = []
        self.fusion = fusion

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
        exe = compile_executable(closed, None, name, self.fusion)
        return self.bind(exe.fn, "f")


def _typed_literal(a: Literal) -> Any:
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


EmitFn = Callable[[Context, Eqn, list[str]], "Emission | None"]
#: primitive -> emitter(ctx, eqn, arg_sources) -> Emission, or None to fall back to the impl
emitters: dict[Primitive, EmitFn] = {}


def _copy(v: Any) -> Any:
    return v if isinstance(v, _IMMUTABLE) else v.copy()


def _arr(xp: Any, v: Any) -> Any:
    # As eager evaluation does: NumPy scalars (from reductions, 0-d ufuncs) leave as arrays,
    # on the device the function ran on.
    return xp.asarray(v) if isinstance(v, numpy.generic) else v


class _Scratch:
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
    if isinstance(v, _IMMUTABLE):
        return v
    for o in others:
        if o is v or (not isinstance(o, _IMMUTABLE) and xp.may_share_memory(v, o)):
            return v.copy()
    return v


# ---------------------------------------------------------------------------------------------
# Emitters discovered from the factories' impl closures


class _Sentinel:
    __slots__ = ("i",)

    def __init__(self, i: int) -> None:
        self.i = i


_RESULT = object()
_SENTINELS = tuple(_Sentinel(i) for i in range(16))


class _Recorder:
    """Stands in for ``xp`` and records the calls a factory's ``fn(xp, *args)`` makes."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple, dict]] = []

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)

        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls.append((name, args, kwargs))
            return _RESULT

        return call


def _plain(v: Any) -> bool:
    if v is None or type(v) in (bool, int, float, complex, str):
        return True
    if isinstance(v, numpy.dtype | numpy.generic):
        return True
    if type(v) is tuple:
        return all(_plain(x) for x in v)
    return False


def _closure_var(fn: Any, name: str) -> Any:
    code = getattr(fn, "__code__", None)
    if code is None or name not in code.co_freevars or fn.__closure__ is None:
        return None
    return fn.__closure__[code.co_freevars.index(name)].cell_contents


@functools.lru_cache(maxsize=4096)
def _discover_call(fn: Any, nargs: int, params: tuple) -> tuple[str, tuple, tuple] | None:
    """If ``fn(xp, *args, **params)`` is exactly one ``xp.<name>(...)`` call returned as is,
    that call as ``(name, args, kwargs)`` (operands as sentinels), else None."""
    rec = _Recorder()
    try:
        out = fn(rec, *_SENTINELS[:nargs], **dict(params))
    except Exception:
        return None
    if out is not _RESULT or len(rec.calls) != 1:
        return None
    name, args, kwargs = rec.calls[0]
    for v in (*args, *kwargs.values()):
        if not isinstance(v, _Sentinel) and not _plain(v):
            return None
    return name, args, tuple(kwargs.items())


_FACTORY_IMPLS = ("unop.<locals>.impl", "naryop.<locals>.impl")


def _auto_emitter(ctx: Context, eqn: Eqn, args: list[str]) -> Emission | None:
    impl = eqn.prim.impl
    qual = getattr(impl, "__qualname__", "")
    if qual in _FACTORY_IMPLS:
        fn = _closure_var(impl, "fn")
        if fn is None or len(args) > len(_SENTINELS):
            return None
        try:
            found = _discover_call(fn, len(args), tuple(sorted(eqn.params.items())))
        except TypeError:  # unhashable params
            return None
        if found is None:
            return None
        name, cargs, ckw = found
        parts = [args[a.i] if isinstance(a, _Sentinel) else ctx.literal(a) for a in cargs]
        parts += [f"{k}={args[v.i] if isinstance(v, _Sentinel) else ctx.literal(v)}"
                  for k, v in ckw]
        uf = getattr(numpy, name, None)
        is_ufunc = isinstance(uf, numpy.ufunc)
        # One call of the ufunc with its inputs positional (operands, or literals from the
        # params: `power(x, 2)`): it takes `out=`, which may be one of the operands.
        plain_call = is_ufunc and not ckw and len(cargs) == uf.nin and uf.nout == 1
        return Emission(f"xp.{name}({', '.join(parts)})", fresh=is_ufunc,
                        out="elementwise" if plain_call else None)
    if qual == "_reducer.<locals>.impl" and set(eqn.params) == {"axes"}:
        xp_name = _closure_var(impl, "xp_name")
        if not isinstance(xp_name, str) or not xp_name.isidentifier():
            return None
        axes = tuple(eqn.params["axes"])
        x = eqn.invars[0]
        # As the impl: axis=None for a full reduction (NumPy's fast path; it also fixes the
        # summation order the impl gets).
        axis = None if axes and len(axes) == x.aval.ndim else axes
        if xp_name in _REDUCE_METHODS and axis is not None and type(x) is Var:
            # An array at run time: its method skips the function's dispatch (~4 us).
            return Emission(f"{args[0]}.{xp_name}(axis={axis!r})", fresh=bool(axes))
        return Emission(f"xp.{xp_name}({args[0]}, axis={axis!r})", fresh=bool(axes))
    return None


_REDUCE_METHODS = frozenset(("sum", "max", "min", "prod", "any", "all"))


# ---------------------------------------------------------------------------------------------
# Hand-written emitters for the hot non-elementwise primitives (each mirrors its impl)


def _emit_add_any(ctx: Context, eqn: Eqn, args: list[str]) -> Emission:
    if eqn.invars[0].aval.dtype == float0:
        return Emission(args[0])
    return Emission(f"xp.add({args[0]}, {args[1]})", fresh=True, out="elementwise")


def _as_array(eqn: Eqn, i: int, src: str) -> str:
    # A rank >= 1 value is an array at run time; a 0-d one may be a Python scalar.
    return src if eqn.invars[i].aval.ndim >= 1 else f"xp.asarray({src})"


def _emit_bid(ctx: Context, eqn: Eqn, args: list[str]) -> Emission | None:
    if set(eqn.params) != {"shape", "broadcast_dimensions"}:
        return None
    shape = tuple(eqn.params["shape"])
    in_shape = eqn.invars[0].aval.shape
    expanded = [1] * len(shape)
    for src, dst in enumerate(eqn.params["broadcast_dimensions"]):
        expanded[dst] = in_shape[src]
    x = _as_array(eqn, 0, args[0])
    if tuple(expanded) != in_shape or eqn.invars[0].aval.ndim == 0:
        x = f"{x}.reshape({tuple(expanded)!r})"
    return Emission(f"xp.broadcast_to({x}, {shape!r})")


def _emit_reshape(ctx: Context, eqn: Eqn, args: list[str]) -> Emission | None:
    if set(eqn.params) != {"new_sizes"}:
        return None
    return Emission(f"xp.reshape({args[0]}, {tuple(eqn.params['new_sizes'])!r})")


def _emit_transpose(ctx: Context, eqn: Eqn, args: list[str]) -> Emission | None:
    if set(eqn.params) != {"permutation"}:
        return None
    return Emission(f"xp.transpose({args[0]}, {tuple(eqn.params['permutation'])!r})")


def _emit_squeeze(ctx: Context, eqn: Eqn, args: list[str]) -> Emission | None:
    if set(eqn.params) != {"dimensions"}:
        return None
    return Emission(f"xp.squeeze({args[0]}, axis={tuple(eqn.params['dimensions'])!r})")


def _emit_expand_dims(ctx: Context, eqn: Eqn, args: list[str]) -> Emission | None:
    if set(eqn.params) != {"dimensions"}:
        return None
    return Emission(f"xp.expand_dims({args[0]}, {tuple(eqn.params['dimensions'])!r})")


def _emit_convert(ctx: Context, eqn: Eqn, args: list[str]) -> Emission | None:
    if set(eqn.params) != {"new_dtype"}:
        return None
    new = numpy.dtype(eqn.params["new_dtype"])
    x = f"xp.asarray({args[0]})"
    if eqn.invars[0].aval.dtype.kind == "c" and new.kind == "b":
        return Emission(f"xp.not_equal({x}, 0)", fresh=True)  # as the impl: any part nonzero
    if eqn.invars[0].aval.dtype.kind == "c" and new.kind != "c":
        x = f"xp.real({x})"
    return Emission(f"{x}.astype({ctx.bind(new, 'dt')})", fresh=True)


def _emit_select_n(ctx: Context, eqn: Eqn, args: list[str]) -> Emission | None:
    if eqn.params:
        return None
    which, *cases = args
    if len(cases) == 1:
        return Emission(f"xp.where(xp.equal({which}, {which}), {cases[0]}, {cases[0]})",
                        fresh=True)
    if len(cases) == 2:
        pred = which if eqn.invars[0].aval.dtype.kind == "b" else f"xp.not_equal({which}, 0)"
        return Emission(f"xp.where({pred}, {cases[1]}, {cases[0]})", fresh=True)
    return None


def _emit_dot_general(ctx: Context, eqn: Eqn, args: list[str]) -> Emission | None:
    if set(eqn.params) != {"dimension_numbers"}:
        return None
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    lc, rc, lb = tuple(lc), tuple(rc), tuple(lb)
    ln, rn = eqn.invars[0].aval.ndim, eqn.invars[1].aval.ndim
    a, b = args
    if ln == 0 or rn == 0:
        return Emission(f"xp.multiply({a}, {b})", fresh=True)
    if lb:
        return None
    if ln == 2 and rn == 2 and len(lc) == 1:
        a = a if lc == (1,) else f"{a}.T"
        b = b if rc == (0,) else f"{b}.T"
        return Emission(f"xp.matmul({a}, {b})", fresh=True, out="fresh")
    if rn == 2 and lc == (ln - 1,) and rc == (0,):
        if ln > 2:
            # One (M, K) @ (K, N) product instead of a stack of (1, K) @ (K, N) ones (what
            # NumPy's matmul does with them): a single BLAS gemm, several times faster. Rows
            # are summed by gemm rather than gemv, which may round differently in the last bit.
            shape = eqn.invars[0].aval.shape
            m, k = math.prod(shape[:-1]), shape[-1]
            out = tuple(eqn.outvars[0].aval.shape)
            return Emission(f"xp.matmul({a}.reshape({(m, k)!r}), {b}).reshape({out!r})",
                            fresh=True)
        return Emission(f"xp.matmul({a}, {b})", fresh=True, out="fresh")
    if ln == 2 and rn == 1 and rc == (0,):
        return Emission(f"xp.matmul({a if lc == (1,) else a + '.T'}, {b})", fresh=True)
    if ln == 1 and rn == 2 and lc == (0,):
        return Emission(f"xp.matmul({a}, {b if rc == (0,) else b + '.T'})", fresh=True)
    if ln == 1 and rn == 1 and lc == (0,) and rc == (0,):
        return Emission(f"xp.matmul({a}, {b})", fresh=True)
    return None


def _emit_integer_pow(ctx: Context, eqn: Eqn, args: list[str]) -> Emission | None:
    # NumPy's own `x ** 2` is `square` (three times faster than `power(x, 2)`; both give
    # the correctly rounded x*x). Other exponents: the impl's `power`.
    if eqn.params.get("y") == 2 and set(eqn.params) == {"y"}:
        return Emission(f"xp.square({args[0]})", fresh=True, out="elementwise")
    return None


def _index_source(indexer: tuple) -> str | None:
    """``indexer`` (static entries only) as subscript source (``1:, None``), or None."""
    parts = []
    for e in indexer:
        if e is None:
            parts.append("None")
        elif e is Ellipsis:
            parts.append("...")
        elif type(e) is int:
            parts.append(repr(e))
        elif type(e).__name__ == "Slice":
            sl = e.slice
            if not all(v is None or type(v) is int for v in (sl.start, sl.stop, sl.step)):
                return None
            txt = ("" if sl.start is None else repr(sl.start)) + ":" + (
                "" if sl.stop is None else repr(sl.stop))
            if sl.step is not None:
                txt += f":{sl.step!r}"
            parts.append(txt)
        else:
            return None
    if not parts:
        return "()"
    return ", ".join(parts) + ("," if len(parts) == 1 and parts[0] == "None" else "")


def _emit_gather(ctx: Context, eqn: Eqn, args: list[str]) -> Emission | None:
    # Basic indexing by static entries (slices, ints, None): what the impl's NumPy fast path
    # does, for any array module (a view, or a scalar for all-int indices).
    if len(eqn.invars) != 1 or eqn.invars[0].aval.ndim == 0:
        return None
    key = _index_source(tuple(eqn.params.get("indexer", ())))
    if key is None:
        return None
    return Emission(f"{args[0]}[{key}]")


def _emit_tie_mask(ctx: Context, eqn: Eqn, args: list[str]) -> Emission | None:
    # The impl's computation in one expression (x == y, NaN equal to NaN, in x's dtype).
    if eqn.params:
        return None
    x, y = args
    dt = ctx.bind(eqn.outvars[0].aval.dtype, "dt")
    eq = f"xp.equal({x}, {y})"
    if eqn.invars[0].aval.dtype.kind in "fc":
        eq = f"xp.logical_or({eq}, xp.logical_and(xp.isnan({x}), xp.isnan({y})))"
    return Emission(f"{eq}.astype({dt})", fresh=True)


def _scatter_add_static(x: Any, u: Any, key: tuple, out: Any = None) -> Any:
    """``x`` with ``u`` added at the basic index ``key`` (no position twice), in ``out``
    (which may be ``x`` itself) or a copy."""
    if out is None:
        out = x.copy()
    elif out is not x:
        out[...] = x
    out[key] += u
    return out


def _emit_scatter_add(ctx: Context, eqn: Eqn, args: list[str]) -> Emission | None:
    if len(eqn.invars) != 2 or eqn.invars[0].aval.ndim == 0:
        return None
    if eqn.invars[0].aval.dtype != eqn.outvars[0].aval.dtype:
        return None
    indexer = tuple(eqn.params.get("indexer", ()))
    if _index_source(indexer) is None:
        return None
    key = ctx.bind(tuple(e.slice if type(e).__name__ == "Slice" else e for e in indexer), "ix")
    fn = ctx.bind(_scatter_add_static, "scatter_add")
    return Emission(f"{fn}({args[0]}, {args[1]}, {key})", fresh=True, out="first")


emitters[add_any_p] = _emit_add_any
emitters[_shape.broadcast_in_dim_p] = _emit_bid
emitters[_shape.reshape_p] = _emit_reshape
emitters[_shape.transpose_p] = _emit_transpose
emitters[_ew.convert_element_type_p] = _emit_convert
for _name, _emit in (("squeeze_p", _emit_squeeze), ("expand_dims_p", _emit_expand_dims)):
    if hasattr(_shape, _name):
        emitters[getattr(_shape, _name)] = _emit
if hasattr(_ew, "select_n_p"):
    emitters[_ew.select_n_p] = _emit_select_n
if hasattr(_ew, "integer_pow_p"):
    emitters[_ew.integer_pow_p] = _emit_integer_pow


def _register_optional() -> None:
    try:
        from funcgrad.ops import linalg as _linalg
    except ImportError:  # pragma: no cover - the module is optional while it is written
        return
    p = getattr(_linalg, "dot_general_p", None)
    if p is not None:
        emitters[p] = _emit_dot_general
    try:
        from funcgrad.ops import gather as _gather
        from funcgrad.ops import scatter as _scatter
    except ImportError:  # pragma: no cover
        return
    for mod, name, em in ((_gather, "gather_p", _emit_gather),
                          (_scatter, "scatter_add_p", _emit_scatter_add)):
        p = getattr(mod, name, None)
        if p is not None:
            emitters[p] = em
    if _tie_mask_p is not None:
        emitters[_tie_mask_p] = _emit_tie_mask


_register_optional()


class _DiagMatmulOp:
    """Stands in for ``dot_general(identity * v, r)`` in the equations code generation walks."""

    name = "diag_matmul"
    multiple_results = False
    impl = None


DIAG_MATMUL = _DiagMatmulOp()


def _diag_matmul(xp: Any, v: Any, r: Any, eye: Any, left: bool, check_r: bool) -> Any:
    """``(eye * v) @ r`` (``left``) or ``r @ (eye * v)``, for an identity ``eye``: a row (or
    column) scaling when everything is finite, which is then exactly what the product gives
    (its other terms are zeros; only the sign of a zero result may differ); else the
    product itself, so that infinities and NaNs spread as they would."""
    if bool(xp.isfinite(v).all()) and (not check_r or bool(xp.isfinite(r).all())):
        return xp.multiply(xp.reshape(v, (-1, 1) if left else (1, -1)), r)
    m = xp.multiply(eye, v)
    return xp.matmul(m, r) if left else xp.matmul(r, m)


def _emit_diag_matmul(ctx: Context, eqn: Eqn, args: list[str]) -> Emission:
    v, r, e = args
    fn = ctx.bind(_diag_matmul, "diag_matmul")
    return Emission(f"{fn}(xp, {v}, {r}, {e}, {eqn.params['left']}, "
                    f"{eqn.params['check_r']})", fresh=True)


emitters[DIAG_MATMUL] = _emit_diag_matmul  # type: ignore[index]
_EYE_MAX_SIZE = 1 << 22


def diag_products(eqns: Sequence[Eqn], consts: dict[Var, Any]) -> list[Eqn]:
    """``dot_general(identity * v, r)`` -> a row scaling of ``r`` by ``v`` (and ``r @ (identity
    * v)`` -> a column scaling): what ``jacrev``/``hessian`` make of an elementwise function
    followed by a matrix product, the identity being their basis. An O(n^3) product becomes
    O(n^2); see :func:`_diag_matmul` for why the values do not change."""
    dot = emitters_dot_general()
    if dot is None:
        return list(eqns)
    eyes: set[Var] = set()
    consts = {v: c for v, c in consts.items() if is_frozen(c)}  # values fixed at compile time
    for v, c in consts.items():
        a = v.aval
        if (a.ndim == 2 and a.shape[0] == a.shape[1] and a.size <= _EYE_MAX_SIZE
                and a.dtype.kind == "f" and is_array(c)):
            host = numpy.asarray(to_numpy(c))
            if numpy.array_equal(host, numpy.eye(a.shape[0], dtype=a.dtype)):
                eyes.add(v)
    if not eyes:
        return list(eqns)
    producer = {e.outvars[0]: e for e in eqns if len(e.outvars) == 1}
    matmul_dn = (((1,), (0,)), ((), ()))
    out: list[Eqn] = []
    for eqn in eqns:
        if eqn.prim is dot and eqn.params.get("dimension_numbers") == matmul_dn:
            lhs, rhs = eqn.invars
            for side, m_, r in ((True, lhs, rhs), (False, rhs, lhs)):
                p = producer.get(m_) if type(m_) is Var else None
                if p is None or p.prim is not _ew.mul_p or r.aval.ndim != 2:
                    continue
                a, b = p.invars
                e, v = (a, b) if a in eyes else (b, a) if b in eyes else (None, None)
                if e is None or type(v) is not Var:
                    continue
                n = e.aval.shape[0]
                dts = {e.aval.dtype, v.aval.dtype, m_.aval.dtype, r.aval.dtype,
                       eqn.outvars[0].aval.dtype}
                if v.aval.size != n or v.aval.ndim > 2 or len(dts) != 1:
                    continue
                check_r = True
                if r in consts:  # a const's finiteness is known now
                    if not numpy.isfinite(numpy.asarray(to_numpy(consts[r]))).all():
                        continue
                    check_r = False
                eqn = Eqn(DIAG_MATMUL, [v, r, e], eqn.outvars,
                          {"left": side, "check_r": check_r}, eqn.source_info)
                break
        out.append(eqn)
    return out


def emitters_dot_general() -> Any:
    from funcgrad.ops import linalg as _linalg

    return getattr(_linalg, "dot_general_p", None)


def _broadcasting_elementwise(eqn: Eqn) -> bool:
    """Whether ``eqn`` is elementwise with NumPy broadcasting of its operands."""
    p = eqn.prim
    if p is add_any_p or p is getattr(_ew, "select_n_p", None) or p is _tie_mask_p:
        return True
    return getattr(getattr(p, "impl", None), "__qualname__", "") in _FACTORY_IMPLS


def elide_broadcasts(eqns: Sequence[Eqn], outvars: Sequence[Any]) -> list[Eqn]:
    """``eqns`` where elementwise operations read the operand of a ``broadcast_in_dim``
    (reshaped to the broadcast rank where needed) instead of its result, when NumPy's own
    broadcasting gives the same result shape; broadcasts nobody reads then are dropped.

    ``xp.multiply(xp.broadcast_to(a, s), b)`` costs ``broadcast_to`` (microseconds) and a
    slower strided loop; ``xp.multiply(a, b)`` computes the same values with the same dtype
    (the operand is an array of the same dtype either way).
    """
    prod: dict[Var, tuple[Any, tuple]] = {}  # bid result -> (its stand-in, expanded shape)
    for eqn in eqns:
        if eqn.prim is not _shape.broadcast_in_dim_p or set(eqn.params) != {
                "shape", "broadcast_dimensions"}:
            continue
        x, out = eqn.invars[0], eqn.outvars[0]
        if x.aval.dtype != out.aval.dtype:
            continue
        if x.aval.ndim == 0:
            if type(x) is Literal:
                # Typed as the broadcast result is (strong: an array's promotion).
                prod[out] = (Literal(x.val, out.aval.update(shape=())), ())
            elif not x.aval.weak_type:
                prod[out] = (x, ())
            continue
        expanded = [1] * out.aval.ndim
        for src, dst in enumerate(eqn.params["broadcast_dimensions"]):
            expanded[dst] = x.aval.shape[src]
        prod[out] = (x, tuple(expanded))
    if not prod:
        return list(eqns)
    uses: dict[Var, int] = {}
    for eqn in eqns:
        for a in eqn.invars:
            if type(a) is Var:
                uses[a] = uses.get(a, 0) + 1
    for a in outvars:
        if type(a) is Var:
            uses[a] = uses.get(a, 0) + 1
    new: list[Eqn] = []
    reshaped: dict[tuple, Var] = {}
    # reshape results -> their operand: a reshape of a reshape reads the first operand
    reshape_of = {e.outvars[0]: e.invars[0] for e in eqns
                  if e.prim is _shape.reshape_p and type(e.invars[0]) is Var}
    for eqn in eqns:
        if _broadcasting_elementwise(eqn) and any(type(a) is Var and a in prod
                                                  for a in eqn.invars):
            out_shape = eqn.outvars[0].aval.shape
            plan = None
            for full_rank in (False, True):
                # Each broadcast operand as its source (NumPy prepends the 1-axes itself), or
                # else reshaped to the broadcast rank (when the result's rank needs it).
                cand = []
                for a in eqn.invars:
                    if type(a) is Var and a in prod:
                        x, expanded = prod[a]
                        while type(x) is Var and x in reshape_of and reshape_of[x].aval.ndim >= 1:
                            x = reshape_of[x]
                        if not expanded or x.aval.shape == expanded or (
                                not full_rank
                                and expanded[len(expanded) - x.aval.ndim:] == x.aval.shape):
                            cand.append((a, x, None))
                        else:
                            cand.append((a, x, expanded))
                    else:
                        cand.append((a, a, None))
                shapes = [sh if sh is not None else x.aval.shape for _, x, sh in cand]
                try:
                    if numpy.broadcast_shapes(*shapes) == out_shape:
                        plan = cand
                        break
                except ValueError:
                    pass
            if plan is not None:
                ins = []
                for a, x, shape in plan:
                    if x is not a:
                        uses[a] -= 1
                    if shape is not None:
                        key = (a, shape)
                        r = reshaped.get(key)
                        if r is None:
                            r = reshaped[key] = Var(x.aval.update(shape=shape))
                            new.append(Eqn(_shape.reshape_p, [x], [r], {"new_sizes": shape},
                                           eqn.source_info))
                        x = r
                    ins.append(x)
                eqn = eqn.replace(invars=ins)
        new.append(eqn)
    return new


def _dce(eqns: Sequence[Eqn], outvars: Sequence[Any]) -> list[Eqn]:
    """What the codegen-time rewrites left unread goes (broadcasts, reshapes, products)."""
    live: set[Var] = {a for a in outvars if type(a) is Var}
    kept: list[Eqn] = []
    for e in reversed(eqns):
        if e.prim in effectful_primitives or any(v in live for v in e.outvars):
            live.update(a for a in e.invars if type(a) is Var)
            kept.append(e)
    kept.reverse()
    return kept


def _fallback(ctx: Context, eqn: Eqn, args: list[str]) -> Emission:
    impl = eqn.prim.impl
    if impl is None:
        raise NotImplementedError(f"jit: primitive '{eqn.prim.name}' has no implementation")
    fn = functools.partial(impl, **eqn.params) if eqn.params else impl
    name = ctx.bind(fn, "p")
    call = f"{name}({', '.join(args)})"
    return Emission(call if eqn.prim.multiple_results else f"{call}[0]")


_SCALAR_OPERATORS = {_ew.add_p: "+", add_any_p: "+", _ew.sub_p: "-", _ew.mul_p: "*",
                     _ew.div_p: "/"}


def _scalar_operator(eqn: Eqn, args: list[str]) -> Emission | None:
    """``a * b`` instead of ``xp.multiply(a, b)`` on float scalars: a ufunc call on scalars
    costs ~1 us, NumPy's scalar arithmetic a tenth (the same IEEE operation, the same NEP 50
    types). Only when an operand is a strong value (a NumPy scalar or 0-d array at run time),
    so two Python floats never meet as such; not for integers (scalar overflow warns)."""
    out = eqn.outvars[0].aval
    if out.ndim != 0 or out.dtype.kind not in "fc":
        return None
    if not any(type(a) is Var and a.aval.ndim == 0 and not a.aval.weak_type
               for a in eqn.invars):
        return None
    if any(a.aval.ndim != 0 for a in eqn.invars):
        return None
    if eqn.prim is _ew.neg_p:
        return Emission(f"-{args[0]}")
    return Emission(f"{args[0]} {_SCALAR_OPERATORS[eqn.prim]} {args[1]}")


def _emission(ctx: Context, eqn: Eqn, args: list[str]) -> Emission:
    if eqn.prim in _SCALAR_OPERATORS or eqn.prim is _ew.neg_p:
        em0 = _scalar_operator(eqn, args)
        if em0 is not None:
            return em0
    em = emitters.get(eqn.prim)
    out = em(ctx, eqn, args) if em is not None else _auto_emitter(ctx, eqn, args)
    return out if out is not None else _fallback(ctx, eqn, args)


# ---------------------------------------------------------------------------------------------
# Generation


def _source_comment(eqn: Eqn, what: str | None = None) -> str:
    what = what or eqn.prim.name
    si = eqn.source_info
    if si is None or not si.filename:
        return what
    fname = si.filename.rsplit("/", 1)[-1]
    return f"{what} ({fname}:{si.lineno})"


def generate_source(
    closed: ClosedJaxpr,
    donated: Sequence[bool] | None = None,
    name: str = "jitted",
    identity_outputs: Sequence[int | None] | None = None,
    same_outputs: Sequence[Any] | None = None,
    fusion: Any = None,
) -> tuple[str, dict[str, Any], str]:
    """``(source, globals, function_name)`` of the straight-line function for ``closed``.

    ``closed`` should be optimised already. ``donated`` marks inputs whose buffers may be
    reused. ``identity_outputs[j] = k`` says the traced function returned its input ``k`` as
    output ``j`` (so returning it uncopied is what the user wrote); ``same_outputs`` holds one
    key per output, equal for outputs that were the same value before optimisation.
    ``fusion`` (a :class:`funcgrad.compile.fusion.FusionConfig`; None: no fusion) fuses
    elementwise chains over big arrays (:mod:`funcgrad.compile.fusion`).
    """
    jaxpr = closed.jaxpr
    ctx = Context(fusion)
    eqns = diag_products(jaxpr.eqns, dict(zip(jaxpr.constvars, closed.consts)))
    eqns = _dce(elide_broadcasts(eqns, jaxpr.outvars), jaxpr.outvars)
    if fusion is not None and fusion.mode != "off":
        eqns = _fusion.plan_fusion(Jaxpr(jaxpr.constvars, jaxpr.invars, jaxpr.outvars, eqns),
                                   fusion)
    fname = _py_name(name)
    n_in = len(jaxpr.invars)
    donated = tuple(donated) if donated is not None else (False,) * n_in
    names: dict[Var, str] = {}
    counter = iter(range(1 << 62))

    def new_name(v: Var) -> str:
        n = f"v{next(counter)}"
        names[v] = n
        return n

    def src(a: Any) -> str:
        return ctx.literal(_typed_literal(a)) if type(a) is Literal else names[a]

    # -- emissions first (names in order), so that escape analysis can see them --------------
    params_src = [new_name(v) for v in jaxpr.invars]
    for v, c in zip(jaxpr.constvars, closed.consts):
        names[v] = ctx.bind(c, "c")
    emitted: list[tuple[Emission, list[str]]] = []
    for eqn in eqns:
        em = _emission(ctx, eqn, [src(a) for a in eqn.invars])
        emitted.append((em, [new_name(v) for v in eqn.outvars]))
    # Values that may be (views of) an output: they must not live in scratch buffers.
    escapes: set[Var] = {a for a in jaxpr.outvars if type(a) is Var}
    for eqn, (em, _) in zip(reversed(eqns), reversed(emitted)):
        if not em.fresh and any(v in escapes for v in eqn.outvars):
            escapes.update(a for a in eqn.invars if type(a) is Var)

    # -- liveness ---------------------------------------------------------------------------
    last_use: dict[Var, int] = {}
    for i, eqn in enumerate(eqns):
        for a in eqn.invars:
            if type(a) is Var:
                last_use[a] = i
    for a in jaxpr.outvars:
        if type(a) is Var:
            last_use[a] = _INF

    # -- aliasing: each value maps to the buffers ("roots") it may share memory with --------
    roots: dict[Var, frozenset[Var]] = {}
    group_last: dict[Var, int] = {}
    owned: set[Var] = set()  # roots whose buffer this function may overwrite once dead
    holder: dict[Var, str] = {}  # root -> a name holding exactly that buffer
    full: dict[Var, Var] = {}  # value -> the root whose whole buffer it is (not a view)
    pool: dict[tuple, list[Var]] = {}
    spool: dict[tuple, list[Var]] = {}  # dead scratch buffers
    scratch: dict[Var, int] = {}  # root -> its scratch slot
    specs: list[tuple[tuple, Any]] = []
    scratch_bytes = 0
    for i, v in enumerate(jaxpr.invars):
        roots[v] = frozenset((v,))
        group_last[v] = last_use.get(v, -1)
        holder[v] = names[v]
        full[v] = v
        if donated[i] and v.aval.ndim >= 1 and v.aval.size >= REUSE_MIN_SIZE:
            owned.add(v)
    for v, c in zip(jaxpr.constvars, closed.consts):
        roots[v] = frozenset() if isinstance(c, _IMMUTABLE) else frozenset((v,))
        group_last[v] = _INF  # consts live in the cache: never overwritten

    def pool_key(aval: Any) -> tuple:
        return (aval.shape, aval.dtype)

    def release(r: Var, i: int) -> None:
        if r in owned and group_last.get(r, _INF) == i:
            (spool if r in scratch else pool).setdefault(pool_key(r.aval), []).append(r)

    # Donated inputs nobody reads are free from the start.
    for v in jaxpr.invars:
        if v in owned and group_last[v] < 0:
            pool.setdefault(pool_key(v.aval), []).append(v)

    lines: list[str] = []
    for i, eqn in enumerate(eqns):
        em, out_names = emitted[i]
        expr = em.expr
        outs = eqn.outvars
        in_roots: set[Var] = set()
        for a in eqn.invars:
            if type(a) is Var:
                in_roots |= roots[a]

        target: Var | None = None
        new_slot = False
        targets: dict[Var, Var] = {}  # per output of a fused group: the buffer it goes to
        slots: set[Var] = set()
        if eqn.prim is _fusion.FUSED:
            kw = []
            for k, o in enumerate(outs):
                if o.aval.size < REUSE_MIN_SIZE:
                    continue
                key = pool_key(o.aval)
                local = o not in escapes
                t = (pool[key].pop() if pool.get(key)
                     else spool[key].pop() if local and spool.get(key) else None)
                nbytes = o.aval.size * o.aval.dtype.itemsize
                if t is not None:
                    targets[o] = t
                    kw.append(f"o{k}={holder[t]}")
                elif local and scratch_bytes + nbytes <= SCRATCH_MAX_BYTES:
                    scratch_bytes += nbytes
                    slots.add(o)
                    kw.append(f"o{k}=_sb[{len(specs)}]")
                    scratch[o] = len(specs)
                    specs.append((o.aval.shape, o.aval.dtype))
            if kw:
                expr = f"{expr[:-1]}, {', '.join(kw)})"
        elif em.out is not None and len(outs) == 1:
            o = outs[0]
            if o.aval.ndim >= 1 and o.aval.size >= REUSE_MIN_SIZE:
                key = pool_key(o.aval)
                local = o not in escapes  # may live in a scratch buffer
                if em.out in ("elementwise", "first"):
                    # In place over an operand that dies here, when every operand aliasing
                    # that buffer is the whole buffer (same layout as the output).
                    for a in (eqn.invars if em.out == "elementwise" else eqn.invars[:1]):
                        r = full.get(a) if type(a) is Var else None
                        if (r is not None and r in owned and group_last[r] == i
                                and (local or r not in scratch)
                                and pool_key(r.aval) == key
                                and all(type(b) is not Var or r not in roots[b]
                                        or full.get(b) is r for b in eqn.invars)):
                            target = r
                            break
                if target is None and pool.get(key):
                    target = pool[key].pop()
                if target is None and local and spool.get(key):
                    target = spool[key].pop()
                nbytes = o.aval.size * o.aval.dtype.itemsize
                if (target is None and local and em.fresh
                        and scratch_bytes + nbytes <= SCRATCH_MAX_BYTES):
                    scratch_bytes += nbytes
                    new_slot = True
                    expr = f"{expr[:-1]}, out=_sb[{len(specs)}])"
                    scratch[o] = len(specs)
                    specs.append((o.aval.shape, o.aval.dtype))
                if target is not None:
                    expr = f"{expr[:-1]}, out={holder[target]})"

        lhs = out_names[0] if not eqn.prim.multiple_results else (
            ", ".join(out_names) + ("," if len(out_names) == 1 else ""))
        if not out_names:
            lhs = "_"
        stmt = f"{lhs} = {expr}"
        lines.append(f"    {stmt:<40}  # {_source_comment(eqn, em.comment)}")

        if target is not None:
            targets[outs[0]] = target
        if new_slot:
            slots.add(outs[0])
        for v in outs:
            lu = last_use.get(v, i)
            t = targets.get(v)
            if t is not None:
                r_set = frozenset((t,))
                holder[t] = names[v]
                full[v] = t
            elif em.fresh or v in slots:
                r_set = frozenset((v,))
                holder[v] = names[v]
                full[v] = v
                if v.aval.ndim >= 1 and v.aval.size >= REUSE_MIN_SIZE:
                    owned.add(v)
            else:
                r_set = frozenset(in_roots)
            roots[v] = r_set
            for r in r_set:
                group_last[r] = max(group_last.get(r, -1), lu)
        touched = set(in_roots)
        for v in outs:
            touched |= roots[v]
        for r in touched:
            release(r, i)

    # -- outputs: never alias what the traced function did not -------------------------------
    identity_outputs = (list(identity_outputs) if identity_outputs is not None
                        else [None] * len(jaxpr.outvars))
    same_outputs = list(same_outputs) if same_outputs is not None else [
        object() for _ in jaxpr.outvars]
    in_pos = {v: k for k, v in enumerate(jaxpr.invars)}
    const_set = set(jaxpr.constvars)
    out_srcs: list[str] = []
    for j, a in enumerate(jaxpr.outvars):
        if type(a) is Literal:
            out_srcs.append(f"_arr(xp, {src(a)})" if isinstance(a.val, numpy.generic)
                            else src(a))
            continue
        s = names[a]
        if identity_outputs[j] is not None and in_pos.get(a) == identity_outputs[j]:
            out_srcs.append(s)
            continue
        others: list[str] = []
        certain = False
        for r in roots[a]:
            if r in in_pos and donated[in_pos[r]] and r is not a:
                # A donated argument's buffer is the caller's gift: the output may be it
                # (JAX's "the output reuses the donated buffer").
                continue
            if r in in_pos or r in const_set:
                others.append(names[r])
                certain = certain or r is a
        for k in range(j):
            b = jaxpr.outvars[k]
            if type(b) is Var and roots[a] & roots[b] and same_outputs[k] != same_outputs[j]:
                others.append(out_srcs[k] if b is not a else names[b])
                certain = certain or b is a
        if certain:
            s = f"_copy({s})"
        elif others:
            s = f"_unshare(xp, {s}, {', '.join(dict.fromkeys(others))})"
        if a.aval.ndim == 0 and a not in in_pos:
            s = f"_arr(xp, {s})"
        if s != names[a]:
            # Named, so that later outputs compare against this very array (re-evaluating
            # the expression there would copy again, and check against the wrong copy).
            lines.append(f"    _o{j} = {s}")
            s = f"_o{j}"
        out_srcs.append(s)

    head = f"def {fname}({', '.join(['xp', *params_src])}):"
    if specs:
        scr = ctx.bind(_Scratch(specs), "scratch")
        lines = [f"    _sb = {scr}.get(xp)", *lines, f"    {scr}.put(xp, _sb)"]
    body = lines + [f"    return [{', '.join(out_srcs)}]"]
    main = "\n".join([head, *body]) + "\n"
    if ctx.preamble:
        main = "\n\n".join([*ctx.preamble, main])
    return main, ctx.globals, fname


def _py_name(name: str) -> str:
    s = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in name) or "jitted"
    if s[0].isdigit():
        s = "_" + s
    return s


# ---------------------------------------------------------------------------------------------
# Executables


_file_counter = iter(range(1 << 62))


class Executable:
    """A compiled jaxpr: ``exe(*args) -> list`` runs the generated function.

    ``source`` is the generated Python code, ``jaxpr`` the optimised closed jaxpr it came from
    and ``fn`` the raw function ``fn(xp, *args)``.
    """

    __slots__ = ("jaxpr", "name", "source", "fn", "_xp_hint", "donated", "_variants",
                 "_orig", "_in_avals", "fusion")

    def __init__(self, closed: ClosedJaxpr, optimized: ClosedJaxpr,
                 donated: tuple[bool, ...] | None, name: str, fusion: Any = None) -> None:
        self.jaxpr = optimized
        self.name = name
        self.fusion = fusion
        self.donated = donated if donated is not None and any(donated) else None
        self._variants: dict[tuple[bool, ...], Any] = {}
        self._orig = _output_identity(closed)
        self._in_avals = closed.in_avals
        # Without array arguments, the consts' device decides (else the default device).
        self._xp_hint = tuple(c for c in optimized.consts if is_array(c))[:1]
        self.source, self.fn = self._build(None)

    def _build(self, donated: tuple[bool, ...] | None) -> tuple[str, Any]:
        ident, same = self._orig
        source, glb, fname = generate_source(self.jaxpr, donated, self.name, ident, same,
                                             self.fusion)
        filename = f"<funcgrad-jit-{next(_file_counter)} {self.name}>"
        code = compile(source, filename, "exec")
        glb = dict(glb)
        exec(code, glb)
        # Taken out of its globals, the function dies with this executable (not at the next
        # cycle collection); its source stays readable for tracebacks until then.
        fn = glb.pop(fname)
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        weakref.finalize(fn, linecache.cache.pop, filename, None)
        return source, fn

    def __call__(self, *args: Any) -> list[Any]:
        if self.donated is not None:
            return self._call_donating(args)
        if args:
            return self.fn(xp_for(*args, *self._xp_hint), *args)
        hint = self._xp_hint
        return self.fn(xp_for(*hint) if hint else xp_for_device(get_default_device()))

    def _call_donating(self, args: Sequence[Any]) -> list[Any]:
        xp = xp_for(*args, *self._xp_hint) if args else xp_for_device(get_default_device())
        eff = tuple(
            bool(d) and _donatable(xp, x, aval, args, self.jaxpr.consts)
            for d, x, aval in zip(self.donated, args, self._in_avals)  # type: ignore[arg-type]
        )
        if not any(eff):
            return self.fn(xp, *args)
        fn = self._variants.get(eff)
        if fn is None:
            fn = self._variants[eff] = self._build(eff)[1]
        return fn(xp, *args)


def _output_identity(closed: ClosedJaxpr) -> tuple[list[int | None], list[Any]]:
    j = closed.jaxpr
    pos = {v: k for k, v in enumerate(j.invars)}
    ident = [pos.get(a) if type(a) is Var else None for a in j.outvars]
    same = [a if type(a) is Var else object() for a in j.outvars]
    return ident, same


def _donatable(xp: Any, x: Any, aval: Any, args: Sequence[Any], consts: Sequence[Any]) -> bool:
    """Whether ``x``'s buffer may be overwritten: a writeable contiguous array of exactly the
    traced shape and dtype that shares no memory with another argument or a const."""
    if isinstance(x, _IMMUTABLE) or not is_array(x):
        return False
    flags = getattr(x, "flags", None)
    if flags is None or not flags.c_contiguous or not getattr(flags, "writeable", True):
        return False
    if tuple(x.shape) != aval.shape or x.dtype != aval.dtype:
        return False
    for o in (*args, *consts):
        if o is x:
            continue
        if is_array(o) and not isinstance(o, _IMMUTABLE) and xp.may_share_memory(x, o):
            return False
    return sum(1 for o in args if o is x) == 1


@weak_memo
def compile_executable(
    closed: ClosedJaxpr, donated: tuple[bool, ...] | None = None, name: str = "jitted",
    fusion: Any = None,
) -> Executable:
    """The cached :class:`Executable` of ``closed`` (optimised, then generated, fused with
    the :class:`~funcgrad.compile.fusion.FusionConfig` ``fusion``, None for none)."""
    from funcgrad.compile.passes import optimize_jaxpr

    return Executable(closed, optimize_jaxpr(closed), donated, name, fusion)


#: most executables :func:`compile_by_structure` keeps (least recently used go first)
STRUCTURE_CACHE_SIZE = 64
_by_structure: collections.OrderedDict[Any, Executable] = collections.OrderedDict()
_by_structure_lock = threading.Lock()


def compile_by_structure(closed: ClosedJaxpr, name: str = "jitted",
                         fusion: Any = None) -> Executable:
    """:func:`compile_executable`, cached also on the jaxpr's structure
    (:func:`funcgrad.compile.keys.structure_key`): for jaxprs traced anew on every call that
    compute the same thing each time (an eager loop's body), which would otherwise compile
    once per call. The :data:`STRUCTURE_CACHE_SIZE` most recently used are kept."""
    key = structure_key(closed)
    if key is None:
        return compile_executable(closed, None, name, fusion)
    key = (key, name, fusion)
    with _by_structure_lock:
        exe = _by_structure.get(key)
        if exe is not None:
            _by_structure.move_to_end(key)
            return exe
    exe = compile_executable(closed, None, name, fusion)
    with _by_structure_lock:
        _by_structure[key] = exe
        while len(_by_structure) > STRUCTURE_CACHE_SIZE:
            _by_structure.popitem(last=False)
    return exe


# Imported last: fusion builds on the emitters above (and registers its own).
from funcgrad.compile import fusion as _fusion  # noqa: E402
from funcgrad.compile.passes import is_frozen  # noqa: E402
