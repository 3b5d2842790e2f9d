"""Fusion of elementwise chains over big arrays.

Straight-line code evaluates ``sin(x) * exp(-x * x) + x`` one whole-array operation at a time:
each intermediate is a fresh array that goes out to memory and comes back, and for big arrays
every fresh array also pays its page faults. :func:`plan_fusion` finds groups of elementwise
equations of one big shape (at least ``min_size`` elements) that can run together, and code
generation writes each group as one *kernel* function, evaluated

* on NumPy, by default (``"chunked"``), in blocks of about ``chunk_bytes`` per intermediate:
  the same ufunc calls as unfused code, written with ``out=`` into a few block-sized buffers
  that stay in cache, so the results are **bit-identical** to unfused evaluation;
* on NumPy with mode ``"numexpr"``, by ``numexpr.evaluate`` (optional: ``pip install
  numexpr``, imported only when asked for, with the chunked path as fallback when it is
  missing or cannot express the group). numexpr uses its own implementations of the
  transcendental functions and its own evaluation order, so results may differ from NumPy's
  in the last bits; constants are passed typed, so float32 stays float32;
* on CuPy, by ``cupy.fuse`` (one GPU kernel; built lazily, checked against the expected
  dtypes, **untested on real hardware**);
* on any other array module (the strict test backend), unfused: the plain calls, so host /
  device mixing is still caught.

Which of these runs is decided when the code is generated, by :func:`fusion_config` (``mode``
``"auto"`` (= ``"chunked"`` on NumPy, ``cupy.fuse`` on CuPy), ``"chunked"``, ``"numexpr"`` or
``"off"``; ``min_size``; ``chunk_bytes``), which is part of the compile cache key. Change it
with :func:`set_fusion` or :func:`fusion_options`, or the ``FUNCGRAD_FUSION`` environment
variable (read at import). Functions jitted before a change keep their code until their
``.clear_cache()``.

Example:
    >>> import numpy as np, funcgrad, funcgrad.numpy as fnp
    >>> f = funcgrad.jit(lambda x: fnp.sin(x) * 2.0 + x)
    >>> with fusion_options(min_size=4):
    ...     src = f.source(np.ones(8))
    >>> "def _fused0(" in src
    True
"""

from __future__ import annotations

import contextlib
import importlib
import math
from collections.abc import Iterator
from typing import Any, NamedTuple

import numpy

from funcgrad import config as _config
from funcgrad.avals import float0
from funcgrad.compile.emit import Context, Emission, Scratch, emission
from funcgrad.compile.rules import array_calls, broadcasting_primitives, emitters
from funcgrad.config import FUSION_CHUNK_BYTES, FUSION_MIN_SIZE, FusionConfig
from funcgrad.core import Primitive
from funcgrad.ir import Eqn, Jaxpr, Literal, Var

__all__ = [
    "FusionConfig",
    "fusion_config",
    "set_fusion",
    "fusion_options",
    "plan_fusion",
    "overwritable",
    "FUSION_MIN_SIZE",
    "FUSION_CHUNK_BYTES",
    "MODES",
]

MODES = _config.FUSION_MODES


def _check_mode(mode: str) -> str:
    if mode not in MODES:
        raise ValueError(f"fusion mode must be one of {MODES}, got {mode!r}")
    return mode


def fusion_config() -> FusionConfig:
    """The fusion settings code generated now will use (:data:`funcgrad.config.fusion`).

    Example:
        >>> fusion_config().mode in MODES
        True
    """
    return _config.fusion.get()


def set_fusion(
    mode: str | None = None, *, min_size: int | None = None, chunk_bytes: int | None = None
) -> FusionConfig:
    """Change the fusion settings (``None`` keeps one) in the current context; returns the
    previous settings.

    Only code generated afterwards is affected: call ``.clear_cache()`` on a function jitted
    before to recompile it.

    Example:
        >>> old = set_fusion("off")
        >>> fusion_config().mode
        'off'
        >>> _ = set_fusion(old.mode, min_size=old.min_size, chunk_bytes=old.chunk_bytes)
    """
    old = _config.fusion.get()
    _config.fusion.set(_updated(old, mode, min_size, chunk_bytes))
    return old


def _updated(old: FusionConfig, mode: str | None, min_size: int | None,
             chunk_bytes: int | None) -> FusionConfig:
    new_mode = _check_mode(mode) if mode is not None else old.mode
    if min_size is not None and (not isinstance(min_size, int) or min_size < 1):
        raise ValueError(f"fusion min_size must be a positive int, got {min_size!r}")
    if chunk_bytes is not None and (not isinstance(chunk_bytes, int) or chunk_bytes < 1):
        raise ValueError(f"fusion chunk_bytes must be a positive int, got {chunk_bytes!r}")
    return FusionConfig(new_mode, min_size if min_size is not None else old.min_size,
                        chunk_bytes if chunk_bytes is not None else old.chunk_bytes)


@contextlib.contextmanager
def fusion_options(
    mode: str | None = None, *, min_size: int | None = None, chunk_bytes: int | None = None
) -> Iterator[FusionConfig]:
    """Context manager: :func:`set_fusion` inside, the previous settings restored after.

    Example:
        >>> with fusion_options("off") as cfg:
        ...     cfg.mode
        'off'
    """
    new = _updated(_config.fusion.get(), mode, min_size, chunk_bytes)
    with _config.override(_config.fusion, new):
        yield new


# ---------------------------------------------------------------------------------------------
# Which equations fuse


class _FusedOp:
    """Stands in for a primitive in the equation list code generation walks (never bound)."""

    name = "fused"
    multiple_results = True

    def __repr__(self) -> str:
        return "fused"


FUSED = _FusedOp()

_PY_SCALARS = (bool, int, float, complex)


def _fusible(eqn: Eqn, min_size: int) -> bool:
    outs = eqn.outvars
    if len(outs) != 1 or not outs[0].aval.shape:  # scalars first: the usual refusal
        return False
    if not isinstance(eqn.prim, Primitive) or eqn.prim.multiple_results:
        return False
    out = outs[0].aval
    if out.size < min_size or out.dtype == float0 or out.dtype.kind not in "biufc":
        return False
    if eqn.prim not in broadcasting_primitives:
        return False
    for a in eqn.invars:
        if a.aval.ndim > out.ndim or a.aval.dtype == float0:
            return False
    return True


class _Ufunc(NamedTuple):
    """A member that is one ufunc call: numpy's ufunc name and, per positional argument,
    the operand index (int) or a literal value (wrapped in a 1-tuple)."""

    name: str
    spec: tuple


def _operand_type(a: Any) -> Any:
    """What ``ufunc.resolve_dtypes`` needs for an operand (Python types are weak, NEP 50)."""
    if type(a) is Literal:
        v = a.val
        return type(v) if type(v) in _PY_SCALARS else numpy.asarray(v).dtype
    return a.aval.dtype


def _ufunc_call(eqn: Eqn) -> _Ufunc | None:
    """The ufunc call ``eqn`` computes, when its result can be written with ``out=`` and has
    exactly the equation's dtype (so writing into a buffer of that dtype casts nothing)."""
    name = array_calls.get(eqn.prim)
    uf = getattr(numpy, name, None) if name is not None else None
    if (not isinstance(uf, numpy.ufunc) or eqn.params or len(eqn.invars) != uf.nin
            or uf.nout != 1):
        return None
    spec = tuple(range(uf.nin))
    out = eqn.outvars[0].aval
    types = []
    for s in spec:
        if type(s) is tuple:
            v = s[0]
            types.append(type(v) if type(v) in _PY_SCALARS else numpy.asarray(v).dtype)
            continue
        a = eqn.invars[s]
        if type(a) is Var and a.aval.ndim == 0 and a.aval.weak_type and a.aval.dtype != out.dtype:
            # At run time this may be a Python scalar or a NumPy one, which promote
            # differently: leave it to the ufunc.
            return None
        types.append(_operand_type(a))
    try:
        resolved = getattr(numpy, name).resolve_dtypes((*types, None))
    except Exception:
        return None
    if resolved[-1] != out.dtype:
        return None
    return _Ufunc(name, spec)


# ---------------------------------------------------------------------------------------------
# Grouping


def plan_fusion(jaxpr: Jaxpr, cfg: FusionConfig | None = None) -> list[Eqn]:
    """``jaxpr``'s equations with each fusible group replaced by one ``fused`` equation.

    A group is a set of elementwise equations whose results all have one shape of at least
    ``cfg.min_size`` elements, connected through their operands. It is evaluated where its
    last member was; so that moving the earlier members there is safe, a group closes (takes
    no more members) as soon as anything outside it reads one of its values. Groups of one
    equation are left alone. The fused equation's inputs are the group's operands defined
    outside it, its outputs the values read outside it (or returned).

    Example:
        >>> import numpy as np, funcgrad
        >>> from funcgrad.ops.elementwise import mul, sin
        >>> j = funcgrad.make_jaxpr(lambda x: mul(sin(x), 2.0))(np.ones(8)).jaxpr
        >>> [e.prim.name for e in plan_fusion(j, FusionConfig("chunked", 4, 1024))]
        ['fused']
    """
    cfg = cfg if cfg is not None else _config.fusion.get()
    eqns = jaxpr.eqns
    if cfg.mode == "off":
        return list(eqns)
    parent: dict[int, int] = {}  # union-find over group ids (the id of a group's first member)
    members: dict[int, list[int]] = {}
    is_open: dict[int, bool] = {}
    shape_of: dict[int, tuple] = {}
    group_of: dict[Var, int] = {}  # member result -> group id (find() it: groups merge)

    def find(g: int) -> int:
        while parent[g] != g:
            parent[g] = parent[parent[g]]
            g = parent[g]
        return g

    for i, eqn in enumerate(eqns):
        if _fusible(eqn, cfg.min_size):
            shape = eqn.outvars[0].aval.shape
            joined: list[int] = []
            for a in eqn.invars:
                if type(a) is Var and a in group_of:
                    g = find(group_of[a])
                    if is_open[g] and shape_of[g] == shape:
                        if g not in joined:
                            joined.append(g)
                    else:
                        is_open[g] = False
            if joined:
                g = joined[0]
                for h in joined[1:]:
                    parent[h] = g
                    members[g].extend(members.pop(h))
                members[g].append(i)
            else:
                g = parent[i] = i
                members[g] = [i]
                is_open[g] = True
                shape_of[g] = shape
            group_of[eqn.outvars[0]] = g
        else:
            for a in eqn.invars:
                if type(a) is Var and a in group_of:
                    is_open[find(group_of[a])] = False

    groups = [sorted(m) for m in members.values() if len(m) >= 2]
    if not groups:
        return list(eqns)
    member_group: dict[int, int] = {}
    for k, m in enumerate(groups):
        for i in m:
            member_group[i] = k
    # Which member results are read outside their group (or returned).
    producer = {eqns[i].outvars[0]: k for i, k in member_group.items()}
    exported: set[Var] = {a for a in jaxpr.outvars if type(a) is Var and a in producer}
    for i, eqn in enumerate(eqns):
        k = member_group.get(i)
        for a in eqn.invars:
            if type(a) is Var and a in producer and producer[a] != k:
                exported.add(a)
    out: list[Eqn] = []
    last = {m[-1]: k for k, m in enumerate(groups)}
    for i, eqn in enumerate(eqns):
        k = member_group.get(i)
        if k is None:
            out.append(eqn)
            continue
        if i not in last:
            continue
        mem = [eqns[j] for j in groups[k]]
        defined = {e.outvars[0] for e in mem}
        ext: list[Var] = []
        seen: set[Var] = set()
        for e in mem:
            for a in e.invars:
                if type(a) is Var and a not in defined and a not in seen:
                    seen.add(a)
                    ext.append(a)
        exports = [e.outvars[0] for e in mem if e.outvars[0] in exported]
        out.append(Eqn(FUSED, ext, exports,
                       {"members": tuple(mem), "config": cfg,
                        "shape": tuple(mem[0].outvars[0].aval.shape)},
                       mem[-1].source_info))
    return out


def overwritable(eqn: Eqn) -> list[frozenset[int]]:
    """Per export of the ``fused`` equation ``eqn``, the operand indices whose buffer the
    export may be written into: the operand is read by no member after the one that computes
    the export (the kernel writes each export's block at that member, after every earlier
    member has read the same block of the operand), and has the export's shape and dtype.

    Whether the buffer may be overwritten at all (donated or dead, no other alias) is the
    caller's question; this is the kernel's statement order only. The numexpr kernel
    evaluates inlined members later than their place, so it gives nothing; the unfused and
    CuPy paths compute every result before copying any into its buffer, so they are safe.

    Example:
        >>> import numpy as np, funcgrad
        >>> from funcgrad.ops.elementwise import add, mul
        >>> j = funcgrad.make_jaxpr(lambda x, y: add(mul(x, 2.0), y))(np.ones(8), np.ones(8))
        >>> [fz] = plan_fusion(j.jaxpr, FusionConfig("chunked", 4, 1024))
        >>> overwritable(fz)
        [frozenset({0, 1})]
    """
    cfg: FusionConfig = eqn.params["config"]
    if cfg.mode == "numexpr":
        return [frozenset() for _ in eqn.outvars]
    members: tuple[Eqn, ...] = eqn.params["members"]
    last_read: dict[Var, int] = {}
    for k, m in enumerate(members):
        for a in m.invars:
            if type(a) is Var:
                last_read[a] = k
    made = {m.outvars[0]: k for k, m in enumerate(members)}
    out = []
    for v in eqn.outvars:
        at = made[v]
        out.append(frozenset(
            n for n, a in enumerate(eqn.invars)
            if type(a) is Var and a.aval.shape == v.aval.shape
            and a.aval.dtype == v.aval.dtype and last_read.get(a, -1) <= at))
    return out


# ---------------------------------------------------------------------------------------------
# Kernels


class _Kernel:
    """The text of one fused group's functions, written into the generated module."""

    def __init__(self, ctx: Context, eqn: Eqn) -> None:
        self.ctx = ctx
        self.members: tuple[Eqn, ...] = eqn.params["members"]
        self.cfg: FusionConfig = eqn.params["config"]
        self.shape: tuple = eqn.params["shape"]
        self.ext: list[Var] = list(eqn.invars)
        self.exports: list[Var] = list(eqn.outvars)
        self.calls = [_ufunc_call(m) for m in self.members]
        self.params = [f"a{k}" for k in range(len(self.ext))]
        self.outs = [f"o{k}" for k in range(len(self.exports))]
        self.np = ctx.bind(numpy, "np")

    def header(self, fname: str) -> str:
        """``def name(xp, a0, ..., o0=None, ...)``: ``o<k>``, when given, is the buffer
        export ``k`` must be written into (a scratch buffer of the calling function)."""
        outs = [f"{o}=None" for o in self.outs]
        return f"def {fname}({', '.join(['xp', *self.params, *outs])}):"

    def dispatch(self, other: str) -> list[str]:
        """The first lines: a module other than NumPy runs ``other`` (results copied into
        the given buffers, so that every path leaves its results in the same place)."""
        np_ = self.np
        into = self.ctx.bind(_into, "into")
        return [f"    if xp is not {np_}:",
                f"        return {into}({other}, ({', '.join(self.outs)},))"]

    def operand(self, a: Any, names: dict[Var, str]) -> str:
        return self.ctx.literal(a.val) if type(a) is Literal else names[a]

    # -- unfused: any array module -----------------------------------------------------------
    def plain(self, fname: str) -> tuple[str, bool]:
        """Straight-line calls (what unfused code does); also whether every export is fresh."""
        names = dict(zip(self.ext, self.params))
        lines = [f"def {fname}({', '.join(['xp', *self.params])}):"]
        fresh: dict[Var, bool] = {}
        for k, m in enumerate(self.members):
            em = emission(self.ctx, m, [self.operand(a, names) for a in m.invars])
            v = m.outvars[0]
            names[v] = f"t{k}"
            fresh[v] = em.fresh
            lines.append(f"    t{k} = {em.expr}")
        lines.append(f"    return [{', '.join(names[v] for v in self.exports)}]")
        return "\n".join(lines), all(fresh[v] for v in self.exports)

    # -- NumPy, block by block ---------------------------------------------------------------
    def chunked(self, fname: str, other: str) -> str:
        """Blocks of about ``chunk_bytes`` per buffer: the same ufunc calls, with ``out=``."""
        np_ = self.np
        shape = self.shape
        size = math.prod(shape)
        flat = all(a.aval.ndim == 0 or a.aval.shape == shape for a in self.ext)
        view = (size,) if flat else shape
        rows, inner = view[0], view[1:]
        inner_size = math.prod(inner)
        itemsize = max(m.outvars[0].aval.dtype.itemsize for m in self.members)
        block = max(1, self.cfg.chunk_bytes // (itemsize * inner_size))
        block = min(block, rows)
        lines = [self.header(fname), *self.dispatch(other)]
        names: dict[Var, str] = {}
        sliced: list[tuple[str, str]] = []
        for a, p in zip(self.ext, self.params):
            if a.aval.ndim == 0:
                names[a] = p
            elif flat or (a.aval.ndim == len(view) and a.aval.shape[0] == rows):
                # Blocks of rows; an operand broadcast along the first axis is used whole.
                if flat and len(shape) > 1:
                    lines.append(f"    {p} = {p}.reshape(-1)")
                names[a] = f"s{p[1:]}"
                sliced.append((names[a], p))
            else:
                names[a] = p
        out_names = {}
        for k, v in enumerate(self.exports):
            dt = self.ctx.bind(v.aval.dtype, "dt")
            # A given buffer is written through a flat view: it must be C-contiguous (else
            # a fresh one is used; the caller only needs the result to be this function's).
            lines.append(f"    if o{k} is None or not o{k}.flags.c_contiguous:")
            lines.append(f"        o{k} = {np_}.empty({shape!r}, {dt})")
            out_names[v] = f"f{k}"
            lines.append(f"    f{k} = o{k}.reshape(-1)" if view != shape else f"    f{k} = o{k}")
        # Assign block buffers: liveness inside the group.
        last: dict[Var, int] = {}
        for k, m in enumerate(self.members):
            for a in m.invars:
                if type(a) is Var:
                    last[a] = k
        body: list[str] = []
        buffers: list[tuple[str, Any]] = []
        pool: dict[Any, list[str]] = {}
        holders: dict[str, set[Var]] = {}  # buffer -> live values that may alias it
        roots: dict[Var, frozenset[str]] = {}
        in_buffer: dict[Var, str] = {}  # value -> the buffer it is exactly
        for k, m in enumerate(self.members):
            v = m.outvars[0]
            ops = [self.operand(a, names) for a in m.invars]
            call = self.calls[k]
            dt = v.aval.dtype
            if v in out_names:
                tgt = f"e{out_names[v][1:]}"  # this block of the export
                body.append(f"{tgt} = {out_names[v]}[i:j]")
                names[v] = tgt
                roots[v] = frozenset()
                if call is not None:
                    body.append(f"{np_}.{call.name}({self._args(call, ops)}, out={tgt})")
                else:
                    em = emission(self.ctx, m, ops)
                    body.append(f"{tgt}[...] = {em.expr}")
            elif call is not None:
                tgt = None
                for a in m.invars:
                    b = in_buffer.get(a) if type(a) is Var else None
                    if (b is not None and last.get(a) == k and holders[b] <= {a}
                            and dict(buffers)[b] == dt):
                        tgt = b
                        break
                if tgt is None:
                    free = pool.get(dt)
                    if free:
                        tgt = free.pop()
                    else:
                        tgt = f"b{len(buffers)}"
                        buffers.append((tgt, dt))
                        holders[tgt] = set()
                body.append(f"{np_}.{call.name}({self._args(call, ops)}, out={tgt})")
                names[v] = tgt
                roots[v] = frozenset((tgt,))
                in_buffer[v] = tgt
            else:
                em = emission(self.ctx, m, ops)
                names[v] = f"t{k}"
                body.append(f"t{k} = {em.expr}")
                r: frozenset[str] = frozenset()
                if not em.fresh:
                    for a in m.invars:
                        if type(a) is Var:
                            r |= roots.get(a, frozenset())
                roots[v] = r
            for b in roots[v]:
                holders[b].add(v)
            # Values dying here release their buffers once nothing aliases them.
            for a in {a for a in m.invars if type(a) is Var and last.get(a) == k}:
                for b in roots.get(a, ()):
                    holders[b].discard(a)
                    if not holders[b] and b != in_buffer.get(v):
                        pool.setdefault(dict(buffers)[b], []).append(b)
        if buffers:
            # Block buffers are kept between calls (fresh ones page-fault on every call).
            scr = self.ctx.bind(Scratch([((block, *inner), dt) for _, dt in buffers]),
                                "blocks")
            lines.append(f"    _bb = {scr}.get(xp)")
            lines.append(f"    {', '.join(b for b, _ in buffers)}, = _bb")
        lines.append(f"    for i in range({0}, {rows}, {block}):")
        lines.append(f"        j = i + {block}")
        if rows % block:
            lines.append(f"        if j > {rows}:")
            lines.append(f"            j = {rows}")
            for b, _ in buffers:
                lines.append(f"            {b} = {b}[:j - i]")
        for s, p in sliced:
            lines.append(f"        {s} = {p}[i:j]")
        lines += [f"        {x}" for x in body]
        if buffers:
            lines.append(f"    {scr}.put(xp, _bb)")
        lines.append(f"    return [{', '.join(self.outs)}]")
        return "\n".join(lines)

    @staticmethod
    def _args(call: _Ufunc, ops: list[str]) -> str:
        return ", ".join(ops[s] if type(s) is int else _lit(s[0]) for s in call.spec)

    # -- NumPy, by numexpr -------------------------------------------------------------------
    def numexpr(self, fname: str, other: str, evaluate: Any) -> str | None:
        """numexpr evaluation, or None when the group has something numexpr cannot do with
        NumPy's semantics (then the chunked path is used)."""
        dts = {m.outvars[0].aval.dtype for m in self.members}
        if len(dts) != 1:
            return None
        dt = dts.pop()
        if dt not in (numpy.dtype(numpy.float32), numpy.dtype(numpy.float64)):
            return None
        uses: dict[Var, int] = {}
        for m in self.members:
            for a in m.invars:
                if type(a) is Var:
                    uses[a] = uses.get(a, 0) + 1
        consts: dict[str, Any] = {}
        exprs: dict[Var, str] = {}  # inlinable text of single-use values
        local: dict[Var, str] = {}  # names in the local dict
        np_ = self.np
        dtn = self.ctx.bind(dt, "dt")
        scalars = []
        for a, p in zip(self.ext, self.params):
            if a.aval.dtype != dt:
                return None
            local[a] = p
            if a.aval.ndim == 0:
                scalars.append(p)
        ne = self.ctx.bind(evaluate, "ne")
        lines = [self.header(fname), *self.dispatch(other)]
        n_tmp = 0

        def text(a: Any) -> str | None:
            if type(a) is Literal:
                v = a.val
                if type(v) is bool or type(v) not in (int, float) and not (
                        isinstance(v, numpy.generic) and v.dtype == dt):
                    return None
                if type(v) is int and abs(v) < (1 << 24):
                    return repr(v)  # an int constant keeps the array's float type
                name = f"k{len(consts)}"
                consts[name] = dt.type(v)
                return name
            if a in exprs:
                return exprs[a]
            return local[a]

        def ldict() -> str:
            items = [f"'{n}': {n}" for n in sorted(set(local.values()))]
            for n in scalars:
                # A Python float would be a float64 constant to numexpr (NEP 50 says weak).
                items[items.index(f"'{n}': {n}")] = f"'{n}': {np_}.asarray({n}, {dtn})"
            items += [f"'{n}': {self.ctx.bind(c, 'k')}" for n, c in consts.items()]
            return "{" + ", ".join(items) + "}"

        for m in self.members:
            call = self._ufunc_for_ne(m)
            if call is None:
                return None
            args = []
            for s in call.spec:
                t = text(m.invars[s]) if type(s) is int else text(Literal(s[0]))
                if t is None:
                    return None
                args.append(t)
            tmpl = _NE_TEMPLATES.get(call.name)
            if tmpl is None:
                return None
            expr = tmpl.format(*args)
            v = m.outvars[0]
            if v in self.exports or uses.get(v, 0) != 1:
                if v in self.exports:
                    name = f"o{self.exports.index(v)}"
                    lines.append(f"    if {name} is None or not {name}.flags.c_contiguous:")
                    lines.append(f"        {name} = {np_}.empty({self.shape!r}, {dtn})")
                else:
                    name = f"t{n_tmp}"
                    n_tmp += 1
                    lines.append(f"    {name} = {np_}.empty({self.shape!r}, {dtn})")
                lines.append(f"    {ne}({expr!r}, {ldict()}, out={name}, casting='no')")
                local[v] = name
            else:
                exprs[v] = expr
        lines.append(f"    return [{', '.join(local[v] for v in self.exports)}]")
        return "\n".join(lines)

    def _ufunc_for_ne(self, m: Eqn) -> _Ufunc | None:
        call = _ufunc_call(m)
        if call is None or call.name not in _NE_TEMPLATES:
            return None
        return call

    # -- CuPy: cupy.fuse ---------------------------------------------------------------------
    def cupy_source(self, fname: str) -> str | None:
        """A function of the externals over ``_cp`` (CuPy) for ``cupy.fuse``: only when every
        member is one ufunc call."""
        if any(c is None for c in self.calls):
            return None
        names = dict(zip(self.ext, self.params))
        lines = [f"def {fname}({', '.join(self.params)}):"]
        for k, (m, call) in enumerate(zip(self.members, self.calls)):
            ops = [self.operand(a, names) for a in m.invars]
            names[m.outvars[0]] = f"t{k}"
            lines.append(f"    t{k} = _cp.{call.name}({self._args(call, ops)})")  # type: ignore[union-attr]
        outs = [names[v] for v in self.exports]
        lines.append(f"    return ({', '.join(outs)},)" if len(outs) == 1
                     else f"    return ({', '.join(outs)})")
        return "\n".join(lines)


def _lit(v: Any) -> str:
    # Literals in a ufunc spec come from static params (plain Python values).
    return repr(v)


_NE_UNARY = ("sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
             "arcsinh", "arccosh", "arctanh", "exp", "expm1", "log", "log1p", "log10", "sqrt")
_NE_TEMPLATES: dict[str, str] = {
    "add": "({0} + {1})",
    "subtract": "({0} - {1})",
    "multiply": "({0} * {1})",
    "true_divide": "({0} / {1})",
    "negative": "(-{0})",
    "square": "({0} ** 2)",
    "reciprocal": "(1 / {0})",
    "abs": "abs({0})",
    "absolute": "abs({0})",
    "arctan2": "arctan2({0}, {1})",
    "power": "({0} ** {1})",
    **{n: n + "({0})" for n in _NE_UNARY},
}


def _into(res: list[Any], outs: tuple) -> list[Any]:
    """``res`` with each result copied into its given buffer (``outs[k]``, or None)."""
    for k, o in enumerate(outs):
        if o is not None:
            o[...] = res[k]
            res[k] = o
    return res


class _OtherBackend:
    """A fused group on a module other than NumPy: ``cupy.fuse`` on CuPy when it gives the
    expected dtypes (checked at each call: a mismatch switches to the plain calls for good),
    else the plain unfused calls (``plain(xp, *args)``)."""

    __slots__ = ("cupy_src", "cupy_fn", "dtypes", "name")

    def __init__(self, cupy_src: str, dtypes: list[Any], name: str) -> None:
        self.cupy_src = cupy_src
        self.cupy_fn: Any = None
        self.dtypes = dtypes
        self.name = name

    def __call__(self, xp: Any, plain: Any, *args: Any) -> list[Any]:
        if getattr(xp, "__name__", "") == "cupy":
            fn = self.cupy_fn
            if fn is None:
                fn = self.cupy_fn = self._build(xp)
            if fn is not False:
                outs = fn(*args)
                outs = list(outs) if isinstance(outs, tuple | list) else [outs]
                if all(o.dtype == d for o, d in zip(outs, self.dtypes)):
                    return outs
                self.cupy_fn = False  # dtype rules differ: never use the kernel again
        return plain(xp, *args)

    def _build(self, cp: Any) -> Any:
        glb: dict[str, Any] = {"_cp": cp}
        try:
            exec(compile(self.cupy_src, f"<funcgrad-fused-cupy {self.name}>", "exec"), glb)
            return cp.fuse(kernel_name=self.name)(glb[self.name])
        except Exception:  # pragma: no cover - needs CuPy
            return False


def _numexpr_evaluate() -> Any:
    """``numexpr.evaluate``, or None when numexpr is not installed (imported only here)."""
    try:
        return importlib.import_module("numexpr").evaluate
    except Exception:
        return None


def emit_fused(ctx: Context, eqn: Eqn, args: list[str]) -> Emission:
    """The emitter of a ``fused`` equation: writes the group's functions into the generated
    module (before the main function) and returns the call of its kernel."""
    k = ctx.count("fused")
    kname, pname = f"_fused{k}", f"_fused{k}_plain"
    kern = _Kernel(ctx, eqn)
    plain_src, fresh = kern.plain(pname)
    ctx.preamble.append(plain_src)
    params = ", ".join(kern.params)
    # What runs on a module other than NumPy: the plain calls, or cupy.fuse first on CuPy.
    cupy_src = kern.cupy_source(f"_fused{k}_cupy")
    if cupy_src is not None:
        disp = ctx.bind(_OtherBackend(cupy_src, [v.aval.dtype for v in kern.exports],
                                      f"_fused{k}_cupy"), "fz")
        other = f"{disp}(xp, {pname}, {params})"
    else:
        other = f"{pname}(xp, {params})"
    src = None
    if kern.cfg.mode == "numexpr":
        evaluate = _numexpr_evaluate()
        if evaluate is not None:
            src = kern.numexpr(kname, other, evaluate)
    if src is None:
        src = kern.chunked(kname, other)
    ctx.preamble.append(src)
    names = [m.prim.name for m in kern.members]
    return Emission(f"{kname}({', '.join(['xp', *args])})", fresh=fresh,
                        comment=f"fused[{', '.join(names)}]")


emitters[FUSED] = emit_fused  # type: ignore[index]
