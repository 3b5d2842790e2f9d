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
identity constant ``I`` is a row scaling when ``v`` is finite, ``(s * I) @ r`` is ``s * r``
(:func:`diag_products`); float
arithmetic on scalars uses Python operators; elementwise chains over big arrays are fused
(:mod:`funcgrad.compile.fusion`).

**Outputs never alias what they did not alias before optimisation**: an output that may share
memory with an input, a const or another output (which simplification or CSE can cause, e.g.
``x * 1.0`` -> ``x``) is copied unless the traced function returned that very input.
"""

from __future__ import annotations

import linecache
import re
import weakref
from collections.abc import Sequence
from typing import Any

import numpy

from funcgrad._cache import LRUCache, weak_lru_cache
from funcgrad.backend import (
    device_of,
    get_default_device,
    is_array,
    may_share_memory,
    memory_owner,
    scalar_array,
    to_numpy,
    xp_for,
    xp_for_device,
)
from funcgrad.compile import fusion as _fusion
from funcgrad.compile.emit import IMMUTABLE, Context, Scratch, emission, typed_literal
from funcgrad.compile.keys import structure_key
from funcgrad.compile.passes import is_frozen, optimize_jaxpr
from funcgrad.compile.rules import Emission, broadcasting_primitives, emitters, roles
from funcgrad.errors import DeviceMismatchError, SourceInfo, generated_code
from funcgrad.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var, effectful_primitives

__all__ = [
    "Emission",
    "Context",
    "emitters",
    "Executable",
    "generate_code",
    "REUSE_MIN_SIZE",
]

#: arrays smaller than this are not worth an ``out=`` (the keyword costs more than malloc)
REUSE_MIN_SIZE = 4096
#: most bytes of scratch buffers one generated function keeps between calls
SCRATCH_MAX_BYTES = 1 << 25

_INF = 1 << 62


# ---------------------------------------------------------------------------------------------
# Rewrites at generation time


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


def diag_products(eqns: Sequence[Eqn], consts: dict[Var, Any]) -> Sequence[Eqn]:
    """``dot_general(identity * v, r)`` -> a row scaling of ``r`` by ``v`` (and ``r @ (identity
    * v)`` -> a column scaling): what ``jacrev``/``hessian`` make of an elementwise function
    followed by a matrix product, the identity being their basis; ``dot_general(identity,
    r)`` -> ``r`` (:func:`_identity_product`, what ``jacfwd`` makes of a matrix product). An
    O(n^3) product becomes O(n^2); see :func:`_diag_matmul` for why the values do not
    change. ``eqns`` itself (not a copy) when there is no identity to look for."""
    dot, mul = roles.get("dot_general"), roles.get("mul")
    if dot is None or mul is None:
        return eqns
    eyes: set[Var] = set()  # exact 2-D identities
    scaled: dict[Var, Any] = {}  # scaled identities with unit axes -> (the scale, their axes)
    consts = {v: c for v, c in consts.items() if is_frozen(c)}  # values fixed at compile time
    for v, c in consts.items():
        hit = _scaled_identity(v.aval, c)
        if hit is not None:
            scaled[v] = hit
            if v.aval.ndim == 2 and hit[0] == 1:
                eyes.add(v)
    if not scaled:
        return eqns
    producer = {e.outvars[0]: e for e in eqns if len(e.outvars) == 1}
    matmul_dn = (((1,), (0,)), ((), ()))
    out: list[Eqn] = []
    for eqn in eqns:
        if eqn.prim is dot:
            eqn = _identity_product(eqn, scaled, consts) or eqn
        if eqn.prim is dot and eqn.params.get("dimension_numbers") == matmul_dn:
            lhs, rhs = eqn.invars
            for side, m_, r in ((True, lhs, rhs), (False, rhs, lhs)):
                p = producer.get(m_) if type(m_) is Var else None
                if p is None or p.prim is not mul or r.aval.ndim != 2:
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


def _scaled_identity(aval: Any, c: Any) -> tuple[Any, tuple[int, int]] | None:
    """``(s, (i, j))`` when the const ``c`` is ``s * I`` (``s`` a nonzero finite number,
    ``I`` an ``n x n`` identity, n > 1) on its axes ``i < j``, every other axis of size 1: the
    basis ``jacfwd``/``hessian`` map over, possibly scaled (``0.5 * x @ B @ x``) and with
    the unit axes of an inner size-1 basis. Else None."""
    if aval.dtype.kind != "f" or aval.size > _EYE_MAX_SIZE or not is_array(c):
        return None
    big = [k for k, d in enumerate(aval.shape) if d != 1]
    if len(big) != 2 or aval.shape[big[0]] != aval.shape[big[1]]:
        return None
    n = aval.shape[big[0]]
    host = numpy.asarray(to_numpy(c)).reshape(n, n)
    s = host[0, 0]
    if s == 0 or not numpy.isfinite(s) or not numpy.array_equal(
            host, numpy.eye(n, dtype=host.dtype) * s):
        return None
    return s, (big[0], big[1])


class _IdentityMatmulOp:
    """Stands in for ``dot_general(s * identity, r)`` (or ``r`` times it)."""

    name = "identity_matmul"
    multiple_results = False
    impl = None


IDENTITY_MATMUL = _IdentityMatmulOp()


def _identity_matmul(xp: Any, r: Any, eye: Any, dot: Any, dn: Any, axis: int, left: bool,
                     scale: Any, shape: tuple[int, ...]) -> Any:
    """``dot_general(eye, r)`` (``left``) or ``dot_general(r, eye)`` for ``eye = scale *
    identity`` (unit axes aside) contracted with ``r``'s ``axis``: ``r`` with that axis moved
    first (last), times ``scale``, when ``r`` is finite (the product's other terms are zeros;
    only the sign of a zero may differ); else the product itself (``dot``, the primitive's
    implementation), so infinities and NaNs spread as they would. What ``jit(jacfwd)`` and
    ``jit(hessian)`` make of a matrix product: the basis they map over is the identity."""
    if bool(xp.isfinite(r).all()):
        out = xp.moveaxis(r, axis, 0 if left else -1)
        if scale != 1:
            out = xp.multiply(out, scale)
        return out.reshape(shape)
    return dot(eye, r, dimension_numbers=dn)[0] if left else dot(r, eye, dimension_numbers=dn)[0]


def _emit_identity_matmul(ctx: Context, eqn: Eqn, args: list[str]) -> Emission:
    r, e = args
    fn = ctx.bind(_identity_matmul, "identity_matmul")
    p = eqn.params
    dot = ctx.bind(p["dot"], "dot_impl")
    scale = ctx.bind(p["scale"], "scale")
    # Not fresh: the finite path may return a view of r.
    return Emission(f"{fn}(xp, {r}, {e}, {dot}, {p['dn']!r}, {p['axis']}, {p['left']}, "
                    f"{scale}, {tuple(eqn.outvars[0].aval.shape)!r})")


emitters[IDENTITY_MATMUL] = _emit_identity_matmul  # type: ignore[index]


def _identity_product(eqn: Eqn, scaled: dict[Var, Any], consts: dict[Var, Any]) -> Eqn | None:
    """``dot_general`` of an operand with a scaled identity const (:func:`_scaled_identity`)
    contracted over one of the identity's two axes, as :func:`_identity_matmul`, or None."""
    dn = eqn.params.get("dimension_numbers")
    if dn is None or set(eqn.params) != {"dimension_numbers"} or eqn.prim.impl is None:
        return None
    (lc, rc), (lb, rb) = dn
    lhs, rhs = eqn.invars
    if lb or rb or len(lc) != 1:
        return None
    if len({lhs.aval.dtype, rhs.aval.dtype, eqn.outvars[0].aval.dtype}) != 1:
        return None
    if lhs in scaled:
        left, e, r, e_axis, axis = True, lhs, rhs, lc[0], rc[0]
    elif rhs in scaled:
        left, e, r, e_axis, axis = False, rhs, lhs, rc[0], lc[0]
    else:
        return None
    if type(r) is not Var or r in consts:
        return None  # constant folding has had its chance
    scale, big = scaled[e]
    if e_axis not in big:
        return None
    return Eqn(IDENTITY_MATMUL, [r, e], eqn.outvars,
               {"left": left, "axis": axis, "dn": dn, "dot": eqn.prim.impl,
                "scale": scale}, eqn.source_info)


def elide_broadcasts(eqns: Sequence[Eqn], outvars: Sequence[Any]) -> Sequence[Eqn]:
    """``eqns`` where elementwise operations read the operand of a ``broadcast_in_dim``
    (reshaped to the broadcast rank where needed) instead of its result, when NumPy's own
    broadcasting gives the same result shape; broadcasts nobody reads then are dropped.

    ``xp.multiply(xp.broadcast_to(a, s), b)`` costs ``broadcast_to`` (microseconds) and a
    slower strided loop; ``xp.multiply(a, b)`` computes the same values with the same dtype
    (the operand is an array of the same dtype either way). ``eqns`` itself (not a copy) when
    there is no broadcast to elide.
    """
    bid, reshape = roles.get("broadcast_in_dim"), roles.get("reshape")
    if bid is None or reshape is None:
        return eqns
    prod: dict[Var, tuple[Any, tuple]] = {}  # bid result -> (its stand-in, expanded shape)
    for eqn in eqns:
        if eqn.prim is not bid or set(eqn.params) != {
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
        return eqns
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
                  if e.prim is reshape and type(e.invars[0]) is Var}
    for eqn in eqns:
        if eqn.prim in broadcasting_primitives and any(type(a) is Var and a in prod
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
                            new.append(Eqn(reshape, [x], [r], {"new_sizes": shape},
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
        for v in e.outvars:
            if v in live:
                break
        else:
            if e.prim not in effectful_primitives:
                continue
        for a in e.invars:
            if type(a) is Var:
                live.add(a)
        kept.append(e)
    kept.reverse()
    return kept


# ---------------------------------------------------------------------------------------------
# Generation


_COMMENT_SOURCE = re.compile(r"\(([^():]+):(\d+)\)\s*$")


def _line_sources(lines: list[str], closed: ClosedJaxpr) -> Any:
    """``lookup(lineno) -> SourceInfo | None``: the user's line of the equation written on
    line ``lineno`` of the generated source's ``lines`` (read from its ``# prim (file.py:12)``
    comment)."""

    def lookup(lineno: int) -> SourceInfo | None:
        m = _COMMENT_SOURCE.search(lines[lineno - 1]) if 1 <= lineno <= len(lines) else None
        if m is None:
            return None
        base, line = m.group(1), int(m.group(2))
        for si in _source_infos(closed.jaxpr):
            if si.lineno == line and si.filename.rsplit("/", 1)[-1] == base:
                return si
        return None

    return lookup


def _source_infos(jaxpr: Jaxpr) -> Any:
    for eqn in jaxpr.eqns:
        if eqn.source_info is not None:
            yield eqn.source_info
        for p in eqn.params.values():
            for sub in p if isinstance(p, tuple | list) else (p,):
                if isinstance(sub, ClosedJaxpr):
                    yield from _source_infos(sub.jaxpr)
                elif isinstance(sub, Jaxpr):
                    yield from _source_infos(sub)


def _source_comment(eqn: Eqn, what: str | None = None) -> str:
    what = what or eqn.prim.name
    si = eqn.source_info
    if si is None or not si.filename:
        return what
    fname = si.filename.rsplit("/", 1)[-1]
    return f"{what} ({fname}:{si.lineno})"


def _comment(eqn: Eqn, what: str | None, cache: dict[Any, str]) -> str:
    """:func:`_source_comment`, once per source line and primitive (most equations of a
    differentiated program share a few lines)."""
    si = eqn.source_info
    key = (what or eqn.prim.name, si.filename, si.lineno) if si is not None else what or eqn.prim
    c = cache.get(key)
    if c is None:
        c = cache[key] = _source_comment(eqn, what)
    return c


def _statement(eqn: Eqn, out_names: list[str], expr: str, comment: str) -> tuple[str, str]:
    """The line assigning ``expr`` to the equation's results, and its comment."""
    if not out_names:
        lhs = "_"
    elif eqn.prim.multiple_results:
        lhs = ", ".join(out_names) + ("," if len(out_names) == 1 else "")
    else:
        lhs = out_names[0]
    return f"    {lhs} = {expr}", comment


def _with_comment(line: tuple[str, str | None]) -> str:
    code, comment = line
    return code if comment is None else f"{code:<44}  # {comment}"


def generate_code(
    closed: ClosedJaxpr,
    donated: Sequence[bool] | None = None,
    name: str = "jitted",
    identity_outputs: Sequence[int | None] | None = None,
    same_outputs: Sequence[Any] | None = None,
    fusion: Any = None,
) -> tuple[str, str, dict[str, Any], str]:
    """``(code, source, globals, function_name)`` of the straight-line function for
    ``closed``: ``source`` is ``code`` with each equation's line commented with its primitive
    and the user's line (``# mul (model.py:12)``), for reading and tracebacks; ``code``, line
    for line the same statements, is what is compiled (the comments would double Python's
    parsing time, a first call's cost).

    ``closed`` should be optimised already. ``donated`` marks inputs whose buffers may be
    reused. ``identity_outputs[j] = k`` says the traced function returned its input ``k`` as
    output ``j`` (so returning it uncopied is what the user wrote); ``same_outputs`` holds one
    key per output, equal for outputs that were the same value before optimisation.
    ``fusion`` (a :class:`funcgrad.compile.fusion.FusionConfig`; None: no fusion) fuses
    elementwise chains over big arrays (:mod:`funcgrad.compile.fusion`).
    """
    jaxpr = closed.jaxpr
    # A program whose values live on more than one device (a traced device_put): the one
    # array module `xp` of the generated function cannot compute them all, so every equation
    # calls its impl, which takes its module from its operands, and nothing is fused.
    devices = {v.aval.device for v in (*jaxpr.invars, *jaxpr.constvars)} | {
        v.aval.device for eqn in jaxpr.eqns for v in eqn.outvars}
    per_operand = len(devices - {None}) > 1
    if per_operand:
        fusion = None
    ctx = Context(fusion, _compile_sub)
    ctx.per_operand_modules = per_operand
    eqns = elide_broadcasts(diag_products(jaxpr.eqns, dict(zip(jaxpr.constvars, closed.consts))),
                            jaxpr.outvars)
    # What these rewrites leave unread goes (an optimised jaxpr has no other dead code).
    eqns = list(eqns) if eqns is jaxpr.eqns else _dce(eqns, jaxpr.outvars)
    # Only results of rank >= 1 are ever fused or written into reused buffers.
    shaped = any(v.aval.shape for eqn in eqns for v in eqn.outvars)
    if shaped and fusion is not None and fusion.mode != "off":
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
        return ctx.literal(typed_literal(a)) if type(a) is Literal else names[a]

    # -- emissions first (names in order), so that escape analysis can see them --------------
    params_src = [new_name(v) for v in jaxpr.invars]
    for v, c in zip(jaxpr.constvars, closed.consts):
        names[v] = ctx.bind(c, "c")
    emitted: list[tuple[Emission, list[str]]] = []
    for eqn in eqns:
        em = emission(ctx, eqn, [names[a] if type(a) is Var else src(a) for a in eqn.invars])
        emitted.append((em, [new_name(v) for v in eqn.outvars]))
    # Buffers are reused only for results of REUSE_MIN_SIZE elements and more (and fused
    # groups, whose members are that big): without any, only the roots (what each value may
    # share memory with) matter, for the outputs.
    reuse = shaped and any(v.aval.shape and v.aval.size >= REUSE_MIN_SIZE
                           or eqn.prim is _fusion.FUSED for eqn in eqns for v in eqn.outvars)
    # Values that may be (views of) an output: they must not live in scratch buffers.
    escapes: set[Var] = {a for a in jaxpr.outvars if type(a) is Var}
    if reuse:
        for eqn, (em, _) in zip(reversed(eqns), reversed(emitted)):
            if not em.fresh and any(v in escapes for v in eqn.outvars):
                escapes.update(a for a in eqn.invars if type(a) is Var)

    # -- liveness ---------------------------------------------------------------------------
    last_use: dict[Var, int] = {}
    for i, eqn in enumerate(eqns if reuse else ()):
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
        roots[v] = frozenset() if isinstance(c, IMMUTABLE) else frozenset((v,))
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

    lines: list[tuple[str, str | None]] = []  # (statement, its comment)
    comments: dict[Any, str] = {}
    for i, eqn in enumerate(eqns):
        em, out_names = emitted[i]
        expr = em.expr
        outs = eqn.outvars
        if not reuse:
            lines.append(_statement(eqn, out_names, expr, _comment(eqn, em.comment, comments)))
            if em.fresh:
                for v in outs:
                    roots[v] = frozenset((v,))
            else:
                in_roots = set()
                for a in eqn.invars:
                    if type(a) is Var:
                        in_roots |= roots[a]
                r_set = frozenset(in_roots)
                for v in outs:
                    roots[v] = r_set
            continue
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
            safe = _fusion.overwritable(eqn)
            taken: set[Var] = set()
            for k, o in enumerate(outs):
                if o.aval.size < REUSE_MIN_SIZE:
                    continue
                key = pool_key(o.aval)
                local = o not in escapes
                # An operand dying in this kernel (a donated input, a dead intermediate) whose
                # every read precedes this export's write in the kernel takes the export.
                t = _dying_operand(eqn, i, safe[k], key, local, taken, full, owned,
                                   group_last, roots, scratch, pool_key)
                if t is not None:
                    taken.add(t)
                elif pool.get(key):
                    t = pool[key].pop()
                elif local and spool.get(key):
                    t = spool[key].pop()
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

        lines.append(_statement(eqn, out_names, expr, _comment(eqn, em.comment, comments)))

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
            lines.append((f"    _o{j} = {s}", None))
            s = f"_o{j}"
        out_srcs.append(s)

    head = f"def {fname}({', '.join(['xp', *params_src])}):"
    if specs:
        scr = ctx.bind(Scratch(specs), "scratch")
        lines = [(f"    _sb = {scr}.get(xp)", None), *lines, (f"    {scr}.put(xp, _sb)", None)]
    lines.append((f"    return [{', '.join(out_srcs)}]", None))
    code = "\n".join([head, *[c for c, _ in lines]]) + "\n"
    shown = "\n".join([head, *map(_with_comment, lines)]) + "\n"
    if ctx.preamble:
        code = "\n\n".join([*ctx.preamble, code])
        shown = "\n\n".join([*ctx.preamble, shown])
    return code, shown, ctx.globals, fname


def _dying_operand(eqn: Eqn, i: int, safe: frozenset[int], key: tuple, local: bool,
                   taken: set[Var], full: dict, owned: set, group_last: dict, roots: dict,
                   scratch: dict, pool_key: Any) -> Var | None:
    """The buffer (root) of an operand of the fused equation ``eqn`` (at ``i``) that one of
    its exports may overwrite: owned (allocated here, or donated), dying at ``i``, of the
    export's shape and dtype (``key``), not already taken by another export, and every
    operand that may alias it is that whole buffer and read no later than the export is
    written (``safe``, from :func:`funcgrad.compile.fusion.overwritable`)."""
    for n in sorted(safe):
        a = eqn.invars[n]
        r = full.get(a)
        if (r is None or r in taken or r not in owned or group_last.get(r) != i
                or pool_key(r.aval) != key or (not local and r in scratch)):
            continue
        if all(type(b) is not Var or r not in roots[b]
               or (full.get(b) is r and m in safe) for m, b in enumerate(eqn.invars)):
            return r
    return None


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
        _drop_dead_sources()
        ident, same = self._orig
        code_text, source, glb, fname = generate_code(self.jaxpr, donated, self.name, ident,
                                                      same, self.fusion)
        filename = f"<funcgrad-jit-{next(_file_counter)} {self.name}>"
        # Tracebacks read the commented source (linecache, below): the same lines.
        code = compile(code_text, filename, "exec")
        glb = dict(glb)
        exec(code, glb)
        # Taken out of its globals, the function dies with this executable (not at the next
        # cycle collection); its source stays readable for tracebacks until then.
        fn = glb.pop(fname)
        lines = source.splitlines(True)
        linecache.cache[filename] = (len(source), None, lines, filename)
        generated_code[filename] = _line_sources(lines, self.jaxpr)
        weakref.finalize(fn, _forget_source, filename)
        return source, fn

    def __call__(self, *args: Any) -> list[Any]:
        if self.donated is not None:
            return self._call_donating(args)
        if args:
            xp = call_module(*args, *self._xp_hint)
            if xp is not numpy:
                args = device_scalars(xp, args)
            return self.fn(xp, *args)
        hint = self._xp_hint
        return self.fn(xp_for(*hint) if hint else xp_for_device(get_default_device()))

    def _call_donating(self, args: Sequence[Any]) -> list[Any]:
        xp = call_module(*args, *self._xp_hint) if args else xp_for_device(get_default_device())
        return self.call_donating(xp, *args)

    def call_donating(self, xp: Any, *args: Any) -> list[Any]:
        """Run with the donated arguments that may be overwritten now (checked per call),
        on the array module ``xp`` (which the caller may have fixed for a signature)."""
        eff = _effective_donation(xp, self.donated, args, self._in_avals,  # type: ignore[arg-type]
                                  self.jaxpr.consts)
        if not any(eff):
            return self.fn(xp, *args)
        fn = self._variants.get(eff)
        if fn is None:
            fn = self._variants[eff] = self._build(eff)[1]
        return fn(xp, *args)


def call_module(*values: Any) -> Any:
    """The array module a compiled function is called with for these arguments: theirs
    (``xp_for``), or, for arguments on several devices (which tracing allowed only for a
    program moving values with ``device_put``, whose equations each call their impl on their
    own operands' module), the first array's.

    Example:
        >>> call_module(numpy.ones(2)).__name__
        'numpy'
    """
    try:
        return xp_for(*values)
    except DeviceMismatchError:
        first = next(v for v in values if is_array(v))
        return xp_for_device(device_of(first))


def device_scalars(xp: Any, args: Sequence[Any]) -> Sequence[Any]:
    """``args`` with their NumPy scalars made 0-d arrays of the device module ``xp``: a NumPy
    scalar argument has no device, so it goes where the computation runs (as JAX puts it on
    the default device), and the functions of CuPy that are not ufuncs take arrays only.

    Example:
        >>> import numpy as np
        >>> [type(a).__name__ for a in device_scalars(np, [np.float32(1.0), 2.0])]
        ['ndarray', 'float']
    """
    if not any(isinstance(a, numpy.generic) for a in args):
        return args
    return [scalar_array(xp, a) if isinstance(a, numpy.generic) else a for a in args]


#: Generated files whose function has died, their sources still registered. The finalizer
#: only lists them; the next compilation drops them (:func:`_drop_dead_sources`). A finalizer
#: runs inside whatever allocation triggers the cycle collector, for instance in the middle
#: of ``linecache.checkcache``'s loop over the cache's keys (pdb, doctest and traceback
#: printing call it), which then fails with a KeyError on the entry removed under it.
_dead_sources: list[str] = []


def _forget_source(filename: str) -> None:
    _dead_sources.append(filename)  # atomic: safe from a finalizer


def _drop_dead_sources() -> None:
    while _dead_sources:
        filename = _dead_sources.pop()
        linecache.cache.pop(filename, None)
        generated_code.pop(filename, None)


def _output_identity(closed: ClosedJaxpr) -> tuple[list[int | None], list[Any]]:
    j = closed.jaxpr
    pos = {v: k for k, v in enumerate(j.invars)}
    ident = [pos.get(a) if type(a) is Var else None for a in j.outvars]
    same = [a if type(a) is Var else object() for a in j.outvars]
    return ident, same


_ndarray = numpy.ndarray


def _effective_donation(xp: Any, donated: Sequence[bool], args: Sequence[Any],
                        avals: Sequence[Any], consts: Sequence[Any]) -> tuple[bool, ...]:
    """Per argument, whether its buffer may be overwritten now: it is donated, a writeable
    C-contiguous array of exactly the traced shape and dtype, and shares memory with no other
    argument or const (the same array passed twice, a view of another argument, a const).

    O(n): each array is keyed once by the allocation it belongs to
    (:func:`funcgrad.backend.memory_owner`) and a donated array is refused when its key
    occurs twice; only arrays of unknown ownership are compared pairwise."""
    counts: dict[Any, int] = {}
    unknown: list[Any] = []
    owners: list[Any] = []
    for o in (*args, *consts):
        if type(o) is _ndarray and o.base is None:  # the common case, inline
            k = ("host", id(o)) if o.flags.owndata else None
        elif isinstance(o, IMMUTABLE) or not is_array(o):
            owners.append(None)
            continue
        else:
            k = memory_owner(o)
        owners.append(k)
        if k is None:
            unknown.append(o)
        else:
            counts[k] = counts.get(k, 0) + 1
    eff = []
    for d, x, aval, k in zip(donated, args, avals, owners):
        if not d or (k is not None and counts[k] != 1) or not _writable_whole(x, aval):
            eff.append(False)
        elif k is None:  # unknown ownership: against every other array, pairwise
            arrays = [o for o in (*args, *consts)
                      if not isinstance(o, IMMUTABLE) and is_array(o)]
            eff.append(sum(1 for o in arrays if o is x) == 1 and not any(
                o is not x and may_share_memory(x, o) for o in arrays))
        else:
            eff.append(not any(may_share_memory(x, o) for o in unknown))
    return tuple(eff)


def _writable_whole(x: Any, aval: Any) -> bool:
    flags = getattr(x, "flags", None)
    if flags is None or not flags.c_contiguous or not getattr(flags, "writeable", True):
        return False
    return tuple(x.shape) == aval.shape and x.dtype == aval.dtype


@weak_lru_cache(maxsize=4096)
def compile_executable(
    closed: ClosedJaxpr, donated: tuple[bool, ...] | None = None, name: str = "jitted",
    fusion: Any = None,
) -> Executable:
    """The cached :class:`Executable` of ``closed`` (optimised, then generated, fused with
    the :class:`~funcgrad.compile.fusion.FusionConfig` ``fusion``, None for none)."""

    return Executable(closed, optimize_jaxpr(closed), donated, name, fusion)


def _compile_sub(closed: ClosedJaxpr, name: str, fusion: Any) -> Executable:
    return compile_executable(closed, None, name, fusion)


#: most executables :func:`compile_by_structure` keeps (least recently used go first)
STRUCTURE_CACHE_SIZE = 64
_by_structure = LRUCache(maxsize=STRUCTURE_CACHE_SIZE)


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
    exe = _by_structure.get(key)
    if exe is None:
        exe = _by_structure[key] = compile_executable(closed, None, name, fusion)
    return exe
