"""Taylor rules: the recurrences ``jet`` uses, and the generic rules every primitive falls
back on (see :mod:`funcgrad.interpreters.taylor` for the conventions).

Coefficients are normalized (``x(t) = x0 + x1 t + x2 t^2 + ...``) and a None coefficient is
zero. Own rules (O(K^2) per primitive): ``mul``/``dot_general`` (Cauchy products), ``div``,
``square``, ``integer_pow``, ``exp``, ``log``, ``sin``/``cos``, ``tanh``, ``logistic``,
``sqrt``, ``reduce_max``/``reduce_min``, ``jit``/``remat`` (through the inner program), and
``cond``/``scan``/``while`` (one loop or branch over a body that pushes the series).
Generic rules, in order: primitives linear in their inputs (``linear_jvp_primitives``, and those
linear in their floating inputs listed below) map each coefficient; other elementwise
primitives use ``y' = sum_i df/dx_i x_i'`` with the partials' series from their JVP rules
(O(K^3)); everything else -- custom derivatives, sorting, linear algebra -- pushes the series
of ``(x, x')`` through the primitive's JVP rule at order K-1 (``y' = J(x) x'``: exact, and
polynomial in K when the rule binds the primitive once).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextvars import ContextVar
from typing import Any

import numpy

from funcgrad._cache import weak_lru_cache
from funcgrad.avals import get_aval
from funcgrad.core import Primitive, Tracer, bind, bind1, eval_trace
from funcgrad.interpreters import taylor as _ty
from funcgrad.interpreters.jvp import (
    Zero,
    add_any_p,
    elementwise_primitives,
    jvp_flat,
    linear_jvp_primitives,
    tangent_aval,
    zero_jvp_primitives,
    zeros_like_aval,
)
from funcgrad.interpreters.staging import trace_to_jaxpr
from funcgrad.ir import ClosedJaxpr, eval_jaxpr
from funcgrad.ops import control_flow as _cf
from funcgrad.ops import elementwise as _ew
from funcgrad.ops import gather as _gather
from funcgrad.ops import linalg as _linalg
from funcgrad.ops import reductions as _red
from funcgrad.ops import remat as _remat
from funcgrad.ops import scatter as _scatter
from funcgrad.ops import shape as _shape
from funcgrad.ops import sorting as _sorting
from funcgrad.ops import windows as _windows
from funcgrad.ops.control_flow._common import add_unused_invars, reorder
from funcgrad.ops.elementwise_extra import ldexp_p
from funcgrad.ops.jit import jit_p

__all__ = ["linear_in_float_inputs"]


def _is_float(x: Any) -> bool:
    return get_aval(x).dtype.kind in "fc"


def _order(series: Sequence[Any]) -> int:
    return next(len(s) for s in series if s is not None)


def _full(primal: Any, s: Any, k: int) -> Any:
    """Coefficient k (0: the primal) of an input; None when zero."""
    if k == 0:
        return primal
    return None if s is None else s[k - 1]


def _add(a: Any, b: Any) -> Any:
    if a is None:
        return b
    if b is None:
        return a
    return _ew.add(a, b)


def _scale(c: float, a: Any) -> Any:
    return None if a is None else _ew.mul(a, c)


def _zeros_like(x: Any) -> Any:
    # A constant, not ``x * 0``: that is NaN where x is infinite (e.g. pad's -inf fill).
    return zeros_like_aval(get_aval(x))


def _cauchy(prim: Primitive, a: list, b: list, k: int, params: dict, start: int = 0) -> Any:
    """sum_{j=start..k-start} prim(a_j, b_{k-j}) over nonzero terms (None if none)."""
    out = None
    for j in range(start, k - start + 1):
        if a[j] is not None and b[k - j] is not None:
            out = _add(out, bind1(prim, a[j], b[k - j], **params))
    return out


def _coeffs(primal: Any, s: Any, order: int) -> list:
    return [primal] + (list(s) if s is not None else [None] * order)


# -- generic: linear ---------------------------------------------------------------------------

#: primitives linear in their value operands once their index operands (integer arrays of
#: gathers and slices; ``select_n``'s selector, ``ldexp``'s exponent) are fixed
linear_in_float_inputs: set[Primitive] = {
    _ew.add_p, _ew.sub_p, _ew.select_n_p, _ew.convert_element_type_p, _ew.real_p, _ew.imag_p,
    _ew.complex_p, _ew.conj_p, _ew.copy_p, _ew.neg_p, ldexp_p, _gather.gather_p, _scatter.scatter_p,
    _scatter.scatter_add_p, _shape.dynamic_slice_p, _shape.dynamic_update_slice_p,
    _sorting.gather_along_axis_p, _sorting.scatter_add_along_axis_p, _red.cumsum_p, add_any_p,
    _windows.window_gather_p, _windows.window_scatter_p,
}


#: primitives of that set whose operands at these positions are indices, not values (the
#: others: integer operands are indices, except for elementwise primitives)
_ELEMENTWISE_INDEX_OPERANDS = {_ew.select_n_p: {0}, ldexp_p: {1}}


def _index_operands(prim: Primitive, primals: Sequence[Any]) -> set[int]:
    known = _ELEMENTWISE_INDEX_OPERANDS.get(prim)
    if known is not None:
        return known
    if prim in elementwise_primitives:
        return set()  # an integer constant of add/sub is a value (promoted), not an index
    return {i for i, p in enumerate(primals) if not _is_float(p)}


#: how a linear primitive's parameters change for the higher coefficients: a gather that
#: fills out-of-range positions fills their coefficients with zeros, not its fill value
_coefficient_params = {
    _gather.gather_p: lambda p: {**p, "fill_value": 0} if p.get("mode") == "fill" else p,
    _sorting.gather_along_axis_p:
        lambda p: p if p["fill_value"] is None else {**p, "fill_value": 0},
}


def _linear_rule(prim: Primitive):
    def rule(primals, series, **params):
        outs = bind(prim, *primals, **params)
        coeff_params = _coefficient_params.get(prim, lambda p: p)(params)
        order = _order(series)
        if not any(_is_float(o) for o in outs):
            return outs, [None] * len(outs)
        index = _index_operands(prim, primals)
        out_series: list[list[Any]] = [[] for _ in outs]
        for k in range(1, order + 1):
            cs = [_full(p, s, k) for p, s in zip(primals, series)]
            if all(c is None for i, c in enumerate(cs) if i not in index):
                ys: list[Any] = [None] * len(outs)
            else:
                args = [p if i in index else (_zeros_like(p) if c is None else c)
                        for i, (p, c) in enumerate(zip(primals, cs))]
                ys = bind(prim, *args, **coeff_params)
            for acc, y, o in zip(out_series, ys, outs):
                acc.append(y if _is_float(o) else None)
        return outs, out_series

    return rule


def _linear_factory(prim: Primitive):
    if prim in linear_jvp_primitives or prim in linear_in_float_inputs:
        return _linear_rule(prim), "linear: the primitive of each coefficient"
    return None


# -- sharing recursive evaluations -------------------------------------------------------------

#: While a generic rule runs: its evaluations by (primitive, params, inputs, coefficients,
#: order). The generic rules evaluate JVP rules on Taylor tracers one order lower, and a JVP
#: rule may bind the primitive's relatives more than once (sinh's rule needs sinh for its
#: primal output and cosh for the derivative, whose own rule needs sinh again): shared, each
#: order is computed once instead of 2^K times. Keys are object ids, kept alive by the entry,
#: and the table lives only as long as the outermost generic rule call.
_shared: ContextVar[dict | None] = ContextVar("funcgrad_taylor_shared", default=None)


def _operand_key(x: Any) -> Any:
    # A concrete scalar by value: JVP rules make new ones on every call (pow's y - 1).
    if isinstance(x, (numpy.ndarray, numpy.generic, float, int)) and numpy.ndim(x) == 0:
        return ("value", numpy.asarray(x).dtype.str, numpy.asarray(x).item())
    return id(x)


def _sharing(prim: Primitive, rule):
    def shared(primals, series, **params):
        try:
            key = (prim, tuple(sorted(params.items())), tuple(map(_operand_key, primals)),
                   tuple(None if s is None else tuple(map(id, s)) for s in series))
            hash(key)
        except TypeError:  # unhashable params: not shared
            return rule(primals, series, **params)
        table = _shared.get()
        if table is None:
            token = _shared.set({})
            try:
                return rule(primals, series, **params)
            finally:
                _shared.reset(token)
        hit = table.get(key)
        if hit is None:
            hit = table[key] = (rule(primals, series, **params), primals, series)
        return hit[0]

    return shared


# -- generic: elementwise from the JVP rule ---------------------------------------------------


def _partial(prim: Primitive, i: int, params: dict):
    """x -> d prim / d x_i at x (elementwise), from the primitive's JVP rule."""

    def f(*xs: Any) -> list[Any]:
        xs = list(xs)

        def along(v: Any) -> list[Any]:
            return bind(prim, *xs[:i], v, *xs[i + 1:], **params)

        _, (t,) = jvp_flat(along, [xs[i]], [_ew.add(_zeros_like(xs[i]), 1)])
        return [t]

    return f


def _elementwise_rule(prim: Primitive):
    def rule(primals, series, **params):
        (y0,) = bind(prim, *primals, **params)
        order = _order(series)
        if not _is_float(y0):
            return [y0], [None]
        live = [i for i, s in enumerate(series) if s is not None and _is_float(primals[i])]
        # G[i][m]: coefficient m of d prim / d x_i along the curve, m < order
        G: dict[int, list[Any]] = {}
        for i in live:
            part = _partial(prim, i, params)
            if order == 1:
                (g0,) = part(*primals)
                G[i] = [None if type(g0) is Zero else g0]
                continue
            (g0,), (gs,) = _ty.taylor_flat(
                part, primals, [None if s is None else s[:order - 1] for s in series],
                order - 1)
            if type(g0) is Zero:
                G[i] = [None] * order
            else:
                G[i] = [g0] + (list(gs) if gs is not None else [None] * (order - 1))
        ys: list[Any] = []
        for k in range(1, order + 1):
            acc = None
            for i in live:
                xi = series[i]
                for j in range(1, k + 1):
                    if xi[j - 1] is not None and G[i][k - j] is not None:
                        acc = _add(acc, _scale(j / k, _ew.mul(xi[j - 1], G[i][k - j])))
            ys.append(acc)
        return [y0], [ys]

    return rule


def _elementwise_factory(prim: Primitive):
    if prim in elementwise_primitives and not prim.multiple_results:
        return _sharing(prim, _elementwise_rule(prim)), "elementwise: y' = sum df/dx_i x_i' (O(K^3))"
    return None


# -- generic: primitives without a derivative (defjvp_zero) -------------------------------------


def _constant_rule(prim: Primitive):
    def rule(primals, series, **params):
        outs = bind(prim, *primals, **params)
        return outs, [None] * len(outs)

    return rule


def _constant_factory(prim: Primitive):
    if prim in zero_jvp_primitives:
        return _constant_rule(prim), "constant: no derivative, zero coefficients"
    return None


# -- generic: through the JVP rule ----------------------------------------------------------


def _through_jvp_rule(prim: Primitive):
    """y' = J(x) x' for any primitive, with J(x) x' its JVP rule: the series of (x, x') at
    order K-1 pushed through the JVP rule give y' to order K-1, so y to order K.

    The rule runs on Taylor tracers, so the primitive it binds for its primal output recurses
    at order K-1 (one call per order: polynomial in K, where nesting jvp K times costs 2^K).
    """

    def rule(primals, series, **params):
        order = _order(series)
        outs = bind(prim, *primals, **params)
        if not any(_is_float(o) for o in outs):  # indices, masks: nothing to propagate
            return outs, [None] * len(outs)
        live = [i for i, (p, s) in enumerate(zip(primals, series))
                if s is not None and _is_float(p)]
        if not live:
            return outs, [None] * len(outs)
        zero_out: list[bool] = []

        def tangent(*args: Any) -> list[Any]:
            # (live primals, their tangents) -> tangent of each output (zeros for none)
            xs = list(primals)

            def f(*live_xs: Any) -> list[Any]:
                for i, x in zip(live, live_xs):
                    xs[i] = x
                return bind(prim, *xs, **params)

            _, ts = jvp_flat(f, list(args[:len(live)]), list(args[len(live):]))
            zero_out[:] = [type(t) is Zero for t in ts]
            return [zeros_like_aval(get_aval(o)) if type(t) is Zero else t
                    for t, o in zip(ts, outs)]

        x0 = [primals[i] for i in live]
        v0 = [_zeros_like(primals[i]) if series[i][0] is None else series[i][0] for i in live]
        if order == 1:
            ds = [[d] for d in tangent(*x0, *v0)]
        else:
            # x(t) to order K-1; x'(t) = sum_j (j+1) x_{j+1} t^j
            xs_s = [series[i][:order - 1] for i in live]
            vs_s = [[_scale(float(j + 1), series[i][j]) for j in range(1, order)] for i in live]
            d0, d_s = _ty.taylor_flat(tangent, x0 + v0, xs_s + vs_s, order - 1)
            ds = [[d] + (list(s) if s is not None else [None] * (order - 1))
                  for d, s in zip(d0, d_s)]
        out_series: list[Any] = []
        for o, d, z in zip(outs, ds, zero_out):
            if z or not _is_float(o):
                out_series.append(None)
                continue
            dt = get_aval(o).dtype
            out_series.append([None if c is None else _ew.convert_element_type(
                c if k == 1 else _ew.mul(c, 1.0 / k), dt) for k, c in enumerate(d, start=1)])
        return outs, out_series

    return rule


def _fallback_factory(prim: Primitive):
    return _sharing(prim, _through_jvp_rule(prim)), "fallback: through the JVP rule at order K-1"


_ty.generic_taylor_rules.extend([_constant_factory, _linear_factory, _elementwise_factory,
                                 _fallback_factory])


# -- own rules --------------------------------------------------------------------------------


def _bilinear(prim: Primitive):
    def rule(primals, series, **params):
        (y0,) = bind(prim, *primals, **params)
        order = _order(series)
        a = _coeffs(primals[0], series[0], order)
        b = _coeffs(primals[1], series[1], order)
        return [y0], [[_cauchy(prim, a, b, k, params) for k in range(1, order + 1)]]

    return rule


_ty.taylor_rules[_ew.mul_p] = _bilinear(_ew.mul_p)
_ty.taylor_rules[_linalg.dot_general_p] = _bilinear(_linalg.dot_general_p)


def _div_rule(primals, series):
    a0, b0 = primals
    y0 = _ew.div(a0, b0)
    order = _order(series)
    a = _coeffs(a0, series[0], order)
    b = _coeffs(b0, series[1], order)
    y = [y0]
    for k in range(1, order + 1):
        acc = a[k]
        for j in range(1, k + 1):
            if b[j] is not None and y[k - j] is not None:
                term = _ew.mul(b[j], y[k - j])
                acc = _ew.neg(term) if acc is None else _ew.sub(acc, term)
        y.append(None if acc is None else _ew.div(acc, b0))
    return [y0], [y[1:]]


_ty.taylor_rules[_ew.div_p] = _div_rule


def _square_rule(primals, series):
    (x0,), order = primals, _order(series)
    x = _coeffs(x0, series[0], order)
    return [_ew.square(x0)], [[_cauchy(_ew.mul_p, x, x, k, {}) for k in range(1, order + 1)]]


_ty.taylor_rules[_ew.square_p] = _square_rule


def _series_mul(a: list, b: list, order: int) -> list:
    return [_ew.mul(a[0], b[0])] + [
        _cauchy(_ew.mul_p, a, b, k, {}) for k in range(1, order + 1)]


def _integer_pow_rule(primals, series, *, y: int):
    # Repeated Cauchy products (exact at x0 = 0, unlike the x^p recurrence).
    (x0,), order = primals, _order(series)
    x = _coeffs(x0, series[0], order)
    n = abs(y)
    result = None
    base = x
    while n:
        if n & 1:
            result = base if result is None else _series_mul(result, base, order)
        n >>= 1
        if n:
            base = _series_mul(base, base, order)
    if result is None:  # y == 0
        return [_ew.integer_pow(x0, 0)], [None]
    if y < 0:
        one = [_ew.add(_zeros_like(x0), 1)] + [None] * order
        (r0,), (rs,) = _div_rule([one[0], result[0]], [None, result[1:]])
        return [r0], [rs]
    return [result[0]], [result[1:]]


_ty.taylor_rules[_ew.integer_pow_p] = _integer_pow_rule


def _ode_rule(f0, z_of):
    """y' = z(y) x' with z's coefficients from y's: k y_k = sum_j j x_j z_{k-j}."""

    def rule(primals, series):
        (x0,), order = primals, _order(series)
        x = _coeffs(x0, series[0], order)
        y = [f0(x0)]
        z: list[Any] = []
        for k in range(1, order + 1):
            z.append(z_of(y, k - 1, x0))
            acc = None
            for j in range(1, k + 1):
                if x[j] is not None and z[k - j] is not None:
                    acc = _add(acc, _scale(j / k, _ew.mul(x[j], z[k - j])))
            y.append(acc)
        return [y[0]], [y[1:]]

    return rule


def _sum_products(y: list, m: int) -> Any:
    """coefficient m of y*y"""
    return _cauchy(_ew.mul_p, y, y, m, {})


_ty.taylor_rules[_ew.exp_p] = _ode_rule(_ew.exp, lambda y, m, x0: y[m])
_ty.taylor_rules[_ew.tanh_p] = _ode_rule(
    _ew.tanh, lambda y, m, x0: _ew.sub(1, _ew.square(y[0])) if m == 0
    else _scale(-1.0, _sum_products(y, m)))
_ty.taylor_rules[_ew.logistic_p] = _ode_rule(
    _ew.logistic, lambda y, m, x0: _ew.mul(y[0], _ew.sub(1, y[0])) if m == 0
    else _add(y[m], _scale(-1.0, _sum_products(y, m))))


def _log_rule(primals, series):
    (x0,), order = primals, _order(series)
    x = _coeffs(x0, series[0], order)
    y = [_ew.log(x0)]
    for k in range(1, order + 1):
        acc = x[k]
        for j in range(1, k):
            if y[j] is not None and x[k - j] is not None:
                term = _scale(j / k, _ew.mul(y[j], x[k - j]))
                acc = _ew.neg(term) if acc is None else _ew.sub(acc, term)
        y.append(None if acc is None else _ew.div(acc, x0))
    return [y[0]], [y[1:]]


_ty.taylor_rules[_ew.log_p] = _log_rule


def _sqrt_rule(primals, series):
    (x0,), order = primals, _order(series)
    x = _coeffs(x0, series[0], order)
    y = [_ew.sqrt(x0)]
    two_y0 = _ew.mul(y[0], 2)
    for k in range(1, order + 1):
        acc = x[k]
        for j in range(1, k):
            if y[j] is not None and y[k - j] is not None:
                term = _ew.mul(y[j], y[k - j])
                acc = _ew.neg(term) if acc is None else _ew.sub(acc, term)
        y.append(None if acc is None else _ew.div(acc, two_y0))
    return [y[0]], [y[1:]]


_ty.taylor_rules[_ew.sqrt_p] = _sqrt_rule


def _sin_cos(which: str):
    def rule(primals, series):
        (x0,), order = primals, _order(series)
        x = _coeffs(x0, series[0], order)
        s, c = [_ew.sin(x0)], [_ew.cos(x0)]
        for k in range(1, order + 1):
            sk = ck = None
            for j in range(1, k + 1):
                if x[j] is None:
                    continue
                if c[k - j] is not None:
                    sk = _add(sk, _scale(j / k, _ew.mul(x[j], c[k - j])))
                if s[k - j] is not None:
                    ck = _add(ck, _scale(-j / k, _ew.mul(x[j], s[k - j])))
            s.append(sk)
            c.append(ck)
        y = s if which == "sin" else c
        return [y[0]], [y[1:]]

    return rule


_ty.taylor_rules[_ew.sin_p] = _sin_cos("sin")
_ty.taylor_rules[_ew.cos_p] = _sin_cos("cos")


def _reduce_extremum(prim: Primitive):
    # The coefficients at the extremum's position (ties share them, as the JVP rule does).
    def rule(primals, series, *, axes):
        (x0,) = primals
        (y0,) = bind(prim, x0, axes=axes)
        keep = tuple(d for d in range(get_aval(x0).ndim) if d not in axes)
        shape = get_aval(x0).shape
        hit = _ew.convert_element_type(
            _ew.eq(x0, _shape.broadcast_in_dim(y0, shape, keep)), get_aval(y0).dtype)
        count = _red.reduce_sum(hit, axes)
        ys = [None if c is None else _ew.div(_red.reduce_sum(_ew.mul(c, hit), axes), count)
              for c in series[0]]
        return [y0], [ys]

    return rule


_ty.taylor_rules[_red.reduce_max_p] = _reduce_extremum(_red.reduce_max_p)
_ty.taylor_rules[_red.reduce_min_p] = _reduce_extremum(_red.reduce_min_p)


def _call_rule(primals, series, *, jaxpr, **_):
    # Through the inner program: one Taylor pass over its equations.
    order = _order(series)
    return _ty.taylor_flat(lambda *xs: eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *xs), primals,
                           series, order)


_ty.taylor_rules[jit_p] = _call_rule
_ty.taylor_rules[_remat.remat_p] = _call_rule


# -- control flow: the series go through the body ---------------------------------------------


@weak_lru_cache(maxsize=256)
def _taylor_jaxpr(closed: ClosedJaxpr, has: tuple[bool, ...], order: int,
                  instantiate: tuple[bool, ...]) -> tuple[ClosedJaxpr, tuple[bool, ...]]:
    """``closed`` pushing series: ``(*primals, *series) -> (*outs, *out series)``.

    Each input marked in ``has`` takes its ``order`` coefficients (flat, input by input);
    each float output whose series is nonzero, or marked in ``instantiate``, gives its
    ``order`` coefficients (zeros where they vanish). Returns the jaxpr and, per output,
    whether it has a series.
    """
    in_avals = closed.in_avals
    n = len(in_avals)
    store: list[tuple[bool, ...]] = []

    def f(*args: Any) -> list[Any]:
        it = iter(args[n:])
        series = [[next(it) for _ in range(order)] if h else None for h in has]
        outs, out_s = _ty.taylor_flat(lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs),
                                      list(args[:n]), series, order)
        res, flags = list(outs), []
        for s, a, inst in zip(out_s, closed.out_avals, instantiate):
            if a.dtype.kind not in "fc" or (s is None and not inst):
                flags.append(False)
                continue
            flags.append(True)
            res += [_as_coefficient(c, a) for c in (s if s is not None else [None] * order)]
        store.append(tuple(flags))
        return res

    s_avals = [tangent_aval(a) for a, h in zip(in_avals, has) if h for _ in range(order)]
    return trace_to_jaxpr(f, list(in_avals) + s_avals, eval_trace), store[0]


def _as_coefficient(c: Any, aval: Any) -> Any:
    """A coefficient of a value of ``aval`` as an array of its tangent type (zeros for None)."""
    want = tangent_aval(aval)
    if c is None:
        return zeros_like_aval(want)
    if get_aval(c).dtype != want.dtype or get_aval(c).weak_type:
        c = _ew.convert_element_type(c, want.dtype)
    return c


def _has_series(primals: Sequence[Any], series: Sequence[Any]) -> tuple[bool, ...]:
    return tuple(s is not None and _is_float(p) for p, s in zip(primals, series))


def _flat_series(primals: Sequence[Any], series: Sequence[Any], has: Sequence[bool],
                 order: int) -> list[Any]:
    out: list[Any] = []
    for p, s, h in zip(primals, series, has):
        if h:
            a = get_aval(p)
            out += [_as_coefficient(None if s is None else s[k], a) for k in range(order)]
    return out


def _unflat_series(flat: Sequence[Any], has: Sequence[bool], order: int) -> list[Any]:
    it = iter(flat)
    return [[next(it) for _ in range(order)] if h else None for h in has]


def _outputs_fixed_point(closed: ClosedJaxpr, lead: tuple[bool, ...], carry: tuple[bool, ...],
                         tail: tuple[bool, ...], order: int) -> tuple[bool, ...]:
    """Which carries have series: those fed one, or made one by an iteration of the body."""
    n_out = len(closed.out_avals)
    while True:
        _, out = _taylor_jaxpr(closed, lead + carry + tail, order, (False,) * n_out)
        new = tuple(a or b for a, b in zip(carry, out[:len(carry)]))
        if new == carry:
            return carry
        carry = new


def _cond_taylor(primals, series, *, branches):
    index, *ops = primals
    order = _order(series)
    if not isinstance(index, Tracer):  # the branch is chosen already, as the JVP rule does
        b = branches[min(max(int(index), 0), len(branches) - 1)]
        return _ty.taylor_flat(lambda *xs: eval_jaxpr(b.jaxpr, b.consts, *xs), ops,
                               series[1:], order)
    has = _has_series(ops, series[1:])
    n_out = len(branches[0].out_avals)
    out_has = (False,) * n_out
    for b in branches:
        _, nz = _taylor_jaxpr(b, has, order, (False,) * n_out)
        out_has = tuple(x or y for x, y in zip(out_has, nz))
    new = tuple(_taylor_jaxpr(b, has, order, out_has)[0] for b in branches)
    outs = bind(_cf.cond_p, index, *ops, *_flat_series(ops, series[1:], has, order),
                branches=new)
    return outs[:n_out], _unflat_series(outs[n_out:], out_has, order)


def _scan_taylor(primals, series, **params):
    nc, ncar, length = params["num_consts"], params["num_carry"], params["length"]
    order = _order(series)
    closed = params["jaxpr"]
    has = _has_series(primals, series)
    if length is None and any(h and any(c is None for c in s) for h, s in zip(has, series)):
        # a loop over while_loop tapes, one of whose coefficients is a symbolic zero (a zero
        # tape's length is unknown here): the general rule
        return _through_jvp_rule(_cf.scan_p)(primals, series, **params)
    c_has, x_has = has[:nc], has[nc + ncar:]
    carry_has = _outputs_fixed_point(closed, c_has, has[nc:nc + ncar], x_has, order)
    n_ys = len(closed.out_avals) - ncar
    body, out_has = _taylor_jaxpr(closed, c_has + carry_has + x_has, order,
                                  carry_has + (False,) * n_ys)
    ys_has = out_has[ncar:]
    n_in = len(primals)
    # (consts, carry, xs, their series) -> (consts, series, carry, series, xs, series)
    k_c, k_car, k_x = (sum(h) * order for h in (c_has, carry_has, x_has))
    s0 = n_in
    in_order = (list(range(nc)) + list(range(s0, s0 + k_c)) + list(range(nc, nc + ncar))
                + list(range(s0 + k_c, s0 + k_c + k_car)) + list(range(nc + ncar, n_in))
                + list(range(s0 + k_c + k_car, s0 + k_c + k_car + k_x)))
    k_ys = sum(ys_has) * order
    n_out = ncar + n_ys
    out_order = (list(range(ncar)) + list(range(n_out, n_out + k_car))
                 + list(range(ncar, n_out)) + list(range(n_out + k_car, n_out + k_car + k_ys)))
    body = reorder(body, in_order, out_order)
    consts, init, xs = primals[:nc], primals[nc:nc + ncar], primals[nc + ncar:]
    flat = [_flat_series(ps, ss, hs, order) for ps, ss, hs in (
        (consts, series[:nc], c_has), (init, series[nc:nc + ncar], carry_has),
        (xs, series[nc + ncar:], x_has))]
    outs = bind(_cf.scan_p, *consts, *flat[0], *init, *flat[1], *xs, *flat[2],
                **dict(params, jaxpr=body, num_consts=nc + k_c, num_carry=ncar + k_car))
    carry, carry_s = outs[:ncar], outs[ncar:ncar + k_car]
    ys, ys_s = outs[ncar + k_car:ncar + k_car + n_ys], outs[ncar + k_car + n_ys:]
    return (list(carry) + list(ys),
            _unflat_series(carry_s, carry_has, order) + _unflat_series(ys_s, ys_has, order))


def _while_taylor(primals, series, **params):
    cn, bn = params["cond_nconsts"], params["body_nconsts"]
    cond_j, body_j = params["cond_jaxpr"], params["body_jaxpr"]
    n = len(primals) - cn - bn
    n_ys = len(body_j.out_avals) - n  # per-iteration outputs collected on tapes (grad's)
    order = _order(series)
    has = _has_series(primals, series)
    bc_has = has[cn:cn + bn]
    carry_has = _outputs_fixed_point(body_j, bc_has, has[cn + bn:], (), order)
    if not any(bc_has) and not any(carry_has):
        outs = bind(_cf.while_p, *primals, **params)
        return outs, [None] * len(outs)
    # every float tape gets its coefficients (as tapes): a zero tape has no length here
    ys_inst = tuple(a.dtype.kind in "fc" for a in body_j.out_avals[n:])
    body, out_has = _taylor_jaxpr(body_j, bc_has + carry_has, order, carry_has + ys_inst)
    ys_has = out_has[n:]
    k_bc, k_car, k_ys = (sum(h) * order for h in (bc_has, carry_has, ys_has))
    # (bc, carry, bc series, carry series) -> (bc, bc series, carry, carry series), and
    # (carry, ys, carry series, ys series) -> (carry, carry series, ys, ys series)
    in_order = (list(range(bn)) + list(range(bn + n, bn + n + k_bc)) + list(range(bn, bn + n))
                + list(range(bn + n + k_bc, bn + n + k_bc + k_car)))
    m = n + n_ys
    out_order = (list(range(n)) + list(range(m, m + k_car)) + list(range(n, m))
                 + list(range(m + k_car, m + k_car + k_ys)))
    body = reorder(body, in_order, out_order)
    s_avals = [tangent_aval(a) for a, h in zip(body_j.in_avals[bn:], carry_has) if h
               for _ in range(order)]
    cond = add_unused_invars(cond_j, s_avals, len(cond_j.in_avals))
    cc, bc, init = primals[:cn], primals[cn:cn + bn], primals[cn + bn:]
    bc_s = _flat_series(bc, series[cn:cn + bn], bc_has, order)
    init_s = _flat_series(init, series[cn + bn:], carry_has, order)
    outs = bind(_cf.while_p, *cc, *bc, *bc_s, *init, *init_s,
                **dict(params, cond_jaxpr=cond, body_jaxpr=body, body_nconsts=bn + k_bc))
    carry, carry_s = outs[:n], outs[n:n + k_car]
    ys, ys_s = outs[n + k_car:n + k_car + n_ys], outs[n + k_car + n_ys:n + k_car + n_ys + k_ys]
    pred = list(outs[n + k_car + n_ys + k_ys:])  # record_pred's tape
    return (list(carry) + list(ys) + pred,
            _unflat_series(carry_s, carry_has, order) + _unflat_series(ys_s, ys_has, order)
            + [None] * len(pred))


_ty.taylor_rules[_cf.cond_p] = _cond_taylor
_ty.taylor_rules[_cf.scan_p] = _scan_taylor
_ty.taylor_rules[_cf.while_p] = _while_taylor
