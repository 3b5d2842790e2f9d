"""``lax.reduce_window``: a reduction over sliding windows, on the window primitives.

Each window starts from the init value once; padding and base-dilation holes are skipped, as
XLA does (the monoids pad with their identity; the generic fold keeps its accumulator there).
``lax.max``/``lax.min`` end on the max-pooling primitives ``window_argmax``/``window_gather``
(``funcgrad.ops.windows``): the first extremum of each window is found in place (no window
copies) and its value gathered, so the gradient goes to that one element as XLA's
``select_and_scatter`` sends it; :func:`window_max` also hands that argmax out (funcgrad_nn's
``max_pool(return_indices=True)`` sits on it). ``lax.add``/``lax.mul`` are :func:`window_sum`:
the ``patches`` primitive lays the windows out (its own zero padding, no pad copy) and the
kernel axes are reduced (funcgrad_nn's ``avg_pool`` sits on it). Both put the axes the window
leaves alone in the primitives' ``N``/``C`` places, so no layout is copied, and both run from
a cached static plan. Any other ``computation`` (also
over pytrees of operands) is applied elementwise across all windows at once, folding over the
window positions, so it must be a vectorisable binary function (built from ``lax``/
``funcgrad.numpy`` operations). No new primitive: derivatives, batching and jit come from the
rules of ``pad``, the window primitives, the reductions and whatever ``computation`` uses.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy

import funcgrad.ops.elementwise as _ew
import funcgrad.ops.reductions as _red
import funcgrad.ops.shape as _sh
import funcgrad.ops.windows as _winp
from funcgrad import backend
from funcgrad.avals import get_aval
from funcgrad.backend import operator_index
from funcgrad.core import is_tracer
from funcgrad.errors import DTypeError
from funcgrad.lax import _elementwise as _lew
from funcgrad.lax._common import (
    aval_of,
    is_own_identity,
    is_value,
    monoid_identity,
    operands_and_inits,
    static_ints,
)
from funcgrad.lax._convolution import padtype_to_pads
from funcgrad.ops.windows import patches as _patches
from funcgrad.tree_util import transforms as tree_util  # keys are nodes here

Array = Any

__all__ = ["reduce_window", "reduce_window_shape_tuple"]

# computation -> the monoid it is; anything else takes the generic elementwise fold.
_MONOIDS: dict[Any, str] = {
    _lew.add: "add", _ew.add: "add", operator.add: "add",
    _lew.mul: "mul", _ew.mul: "mul", operator.mul: "mul",
    _lew.max: "max", _ew.max: "max",
    _lew.min: "min", _ew.min: "min",
}


def _dilate(n: int, d: int) -> int:
    return 0 if n == 0 else 1 + d * (n - 1)


def reduce_window_shape_tuple(operand_shape: Sequence[int], window_dimensions: Sequence[int],
                              window_strides: Sequence[int], padding: Sequence[Sequence[int]],
                              base_dilation: Sequence[int] | None = None,
                              window_dilation: Sequence[int] | None = None
                              ) -> tuple[int, ...]:
    """The result shape of :func:`reduce_window` for explicit ``(lo, hi)`` padding (as JAX).

    Example:
        >>> from funcgrad import lax
        >>> lax.reduce_window_shape_tuple((5, 6), (2, 3), (1, 3), [(0, 0), (1, 2)])
        (4, 3)
    """
    nd = len(operand_shape)
    base = (1,) * nd if base_dilation is None else tuple(base_dilation)
    wdil = (1,) * nd if window_dilation is None else tuple(window_dilation)
    out = []
    for n, w, s, (lo, hi), b, d in zip(operand_shape, window_dimensions, window_strides,
                                       padding, base, wdil):
        size, win = _dilate(n, b) + lo + hi, _dilate(w, d)
        out.append((size - win) // s + 1 if size >= win else 0)
    return tuple(out)


def _scalar_init(name: str, init: Any, dtype: numpy.dtype, i: int) -> Any:
    """The init value as a scalar of the operand's dtype (a weak Python scalar converts)."""
    a = aval_of(name, init, "init_value")
    if a.shape != ():
        raise TypeError(f"lax.{name}: init_value must be a scalar, got shape {a.shape}")
    if a.dtype == dtype:
        return init
    if a.weak_type and isinstance(init, bool | int | float | complex):
        value = numpy.asarray(init)
        if value.dtype.kind in "fc" and dtype.kind in "biu" and not (
                numpy.isfinite(value) and value == numpy.round(value)):
            raise DTypeError(f"lax.{name}: init_value {init!r} does not fit operand {i}'s "
                             f"dtype {dtype}")
        return dtype.type(init)
    if a.weak_type:
        return _ew.convert_element_type(init, dtype)
    raise DTypeError(f"lax.{name}: init_value {i} has dtype {a.dtype} but its operand has "
                     f"dtype {dtype}; they must match")


def _filled(init: Any, shape: tuple[int, ...], device: str | None) -> Array:
    """``init`` broadcast to ``shape`` on the operand's ``device`` (a host constant would land
    on the default device)."""
    if device is not None and not is_tracer(init):
        init = backend.device_put(init, device)
    return _sh.broadcast_in_dim(init, shape, ())


def _windows(x: Array, init: Any, window: tuple, strides: tuple, pads: tuple, base: tuple,
             wdil: tuple, zero_pad_ok: bool) -> Array:
    """Every window of ``x`` along axis 0: ``(prod(window), *out_shape)``; padding and the
    base-dilation holes hold ``init`` (plain zero padding when ``zero_pad_ok``)."""
    nd = len(window)
    if any(b > 1 for b in base) or any(lo < 0 for lo, _ in pads) or (
            not zero_pad_ok and any(lo or hi > 0 for lo, hi in pads)):
        x = _sh.pad(x, init, [(lo, max(hi, 0), b - 1) for (lo, hi), b in zip(pads, base)])
        pads = tuple((0, min(hi, 0)) for _, hi in pads)
    x = _sh.reshape(x, (1, 1) + tuple(get_aval(x).shape))
    cols = _patches(x, window, strides, wdil, pads)                       # (1, *W, 1, *O)
    shape = get_aval(cols).shape
    return _sh.reshape(cols, (math.prod(window),) + shape[2 + nd:])


def _order_reversed(x: Array) -> Array:
    """``x`` mapped so that its order is reversed exactly: the minimum becomes the maximum
    (negation for floats, NaN stays NaN; bitwise NOT for integers and booleans, which
    cannot overflow)."""
    return _ew.neg(x) if get_aval(x).dtype.kind == "f" else _ew.not_(x)


def window_max(operand: Array, init_value: Any, window_dimensions: Sequence[int],
               window_strides: Sequence[int], padding: Sequence[tuple[int, int]],
               base_dilation: Sequence[int] | None = None,
               window_dilation: Sequence[int] | None = None, *, minimum: bool = False
               ) -> tuple[Array, Array]:
    """The maximum (``minimum=True``: the minimum) of every window of ``operand`` and the
    row-major index, within its window, of the FIRST element holding it (a NaN counts as the
    extremum); padding and base-dilation holes hold ``init_value``, which is NOT otherwise
    combined in. ``padding`` is explicit ``(lo, hi)`` pairs and the result must be non-empty.

    This is ``reduce_window``'s max/min and what funcgrad_nn's ``max_pool(return_indices=True)``
    reads its indices from: the ``window_argmax``/``window_gather`` primitives, which work in
    an ``(N, C, *spatial)`` layout; the axes the window leaves alone (window 1, stride 1) play
    ``N`` and ``C``, so a channels-last or batch-first operand is not copied into another
    layout. The gradient goes to the chosen element only.

    Example:
        >>> import numpy as np
        >>> from funcgrad.lax._windows import window_max
        >>> v, i = window_max(np.array([1.0, 3.0, 3.0, 2.0]), -np.inf, (2,), (2,), [(0, 0)])
        >>> v.tolist(), i.tolist()
        ([3.0, 3.0], [1, 0])
    """
    a = get_aval(operand)
    nd = a.ndim
    plan = _max_plan(tuple(a.shape), tuple(window_dimensions), tuple(window_strides),
                     tuple((int(lo), int(hi)) for lo, hi in padding),
                     (1,) * nd if base_dilation is None else tuple(base_dilation),
                     (1,) * nd if window_dilation is None else tuple(window_dilation))
    config, perm, shape_in, (k, s, d), shape_out, inv = plan
    x = _to_layout(operand if config is None else _sh.pad(operand, init_value, config), perm,
                   shape_in)
    arg = _winp.window_argmax(_order_reversed(x) if minimum else x, k, s, d)
    val = _winp.window_gather(x, arg, k, s, d)
    return _from_layout(val, shape_out, inv), _from_layout(arg, shape_out, inv)


@functools.lru_cache(maxsize=256)
def _max_plan(shape: tuple, window: tuple, strides: tuple, padding: tuple, base: tuple,
              wdil: tuple) -> tuple:
    """The static steps of :func:`window_max` (None: step not needed): the pad config, the
    transpose and reshape into the primitives' layout, their kernel/stride/dilation, and
    the reshape and transpose back."""
    nd = len(shape)
    out_shape = reduce_window_shape_tuple(shape, window, strides, padding, base, wdil)
    if 0 in out_shape:
        raise ValueError(f"lax.window_max: no window fits: operand {shape}, window {window}, "
                         f"padding {padding}")
    # Pad with the init value only as far as the last window reaches; a tail shorter than a
    # stride is left in place (the primitives skip it), a longer one is cropped.
    config = []
    for n, w, s, (lo, _), b, d, o in zip(shape, window, strides, padding, base, wdil,
                                         out_shape):
        hi = (o - 1) * s + _dilate(w, d) - _dilate(n, b) - lo
        config.append((lo, 0 if -s < hi < 0 else hi, b - 1))
    padded = tuple(_dilate(n, b) + lo + hi for n, b, (lo, hi, _) in zip(shape, base, config))
    return (None if all(c == (0, 0, 0) for c in config) else tuple(config),) + \
        _layout(padded, out_shape, window, strides, wdil, [True] * nd)


def _layout(shape: tuple, out_shape: tuple, window: tuple, strides: tuple, wdil: tuple,
            free: list) -> tuple:
    """How ``shape`` goes into the window primitives' ``(N, C, *spatial)`` layout: the axes
    the window leaves alone (window 1, stride 1, and ``free``: no padding there) first (a
    view), merged or padded with unit axes to exactly two; returns (transpose or None,
    reshape or None, the spatial (kernel, stride, dilation), the (N, C, *out) -> out
    reshape or None, the inverse transpose or None)."""
    nd = len(shape)
    lead = [i for i in range(nd) if window[i] == 1 and strides[i] == 1 and free[i]]
    spatial = [i for i in range(nd) if i not in lead]
    if not spatial:
        spatial = [lead.pop()]
    perm = tuple(lead + spatial)
    identity = perm == tuple(range(nd))
    shape_in = shape_out = None
    if len(lead) != 2:
        lead_shape = tuple(shape[i] for i in lead)
        lead_shape = (1,) * (2 - len(lead)) + lead_shape if len(lead) < 2 else \
            (math.prod(lead_shape[:-1]), lead_shape[-1])
        shape_in = lead_shape + tuple(shape[i] for i in spatial)
        shape_out = tuple(out_shape[i] for i in perm)
    inv = tuple(int(i) for i in numpy.argsort(perm))
    pick = (tuple(window[i] for i in spatial), tuple(strides[i] for i in spatial),
            tuple(wdil[i] for i in spatial))
    return (None if identity else perm, shape_in, pick, shape_out, None if identity else inv)


def _to_layout(x: Array, perm: Any, shape_in: Any) -> Array:
    if perm is not None:
        x = _sh.transpose(x, perm)
    return x if shape_in is None else _sh.reshape(x, shape_in)


def _from_layout(r: Array, shape_out: Any, inv: Any) -> Array:
    if shape_out is not None:
        r = _sh.reshape(r, shape_out)
    return r if inv is None else _sh.transpose(r, inv)


def window_sum(operand: Array, init_value: Any, window_dimensions: Sequence[int],
               window_strides: Sequence[int], padding: Sequence[tuple[int, int]],
               base_dilation: Sequence[int] | None = None,
               window_dilation: Sequence[int] | None = None, *, product: bool = False
               ) -> Array:
    """The sum (``product=True``: the product) of every window of ``operand``; padding and
    base-dilation holes hold ``init_value``, which is NOT otherwise combined in. ``padding``
    is explicit ``(lo, hi)`` pairs. Zero padding of a sum is the ``patches`` primitive's own
    (nothing is padded); the windows are laid out with the untouched axes as its ``N`` and
    ``C`` and reduced over the kernel axes. ``reduce_window``'s add and mul, and funcgrad_nn's
    ``avg_pool*d``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.lax._windows import window_sum
        >>> window_sum(np.arange(5.0), 0.0, (2,), (2,), [(0, 1)]).tolist()
        [1.0, 5.0, 4.0]
    """
    a = get_aval(operand)
    nd = a.ndim
    zero = not product and is_value(init_value, monoid_identity("add", a.dtype))
    plan = _sum_plan(tuple(a.shape), tuple(window_dimensions), tuple(window_strides),
                     tuple((int(lo), int(hi)) for lo, hi in padding),
                     (1,) * nd if base_dilation is None else tuple(base_dilation),
                     (1,) * nd if window_dilation is None else tuple(window_dilation), zero)
    config, ppads, perm, shape_in, (k, s, d), shape_out, inv = plan
    x = operand if config is None else _sh.pad(operand, init_value, config)
    cols = _patches(_to_layout(x, perm, shape_in), k, s, d, ppads)        # (C, *K, N, *O)
    reduce = _red.reduce_prod if product else _red.reduce_sum
    out = _sh.moveaxis(_same_dtype(reduce(cols, tuple(range(1, 1 + len(k)))), a.dtype), 0, 1)
    return _from_layout(out, shape_out, inv)


@functools.lru_cache(maxsize=256)
def _sum_plan(shape: tuple, window: tuple, strides: tuple, padding: tuple, base: tuple,
              wdil: tuple, zero: bool) -> tuple:
    """The static steps of :func:`window_sum`: an explicit pad config (None when the
    patches primitive's zero padding does), the patches padding, and the layout."""
    nd = len(shape)
    out_shape = reduce_window_shape_tuple(shape, window, strides, padding, base, wdil)
    if any(b > 1 for b in base) or any(lo < 0 for lo, _ in padding) or (
            not zero and any(lo or hi > 0 for lo, hi in padding)):
        config = tuple((lo, max(hi, 0), b - 1) for (lo, hi), b in zip(padding, base))
        pads = tuple((0, min(hi, 0)) for _, hi in padding)
        shape = tuple(_dilate(n, it + 1) + lo + hi for n, (lo, hi, it) in zip(shape, config))
    else:
        config, pads = None, padding
    perm, shape_in, pick, shape_out, inv = _layout(shape, out_shape, window, strides, wdil,
                                                   [p == (0, 0) for p in pads])
    spatial = (perm if perm is not None else tuple(range(nd)))[nd - len(pick[0]):]
    return (config, tuple(pads[i] for i in spatial), perm, shape_in, pick, shape_out, inv)


def _same_dtype(x: Array, dtype: numpy.dtype) -> Array:
    # Integer sums widen to int64 under NumPy's rules; lax keeps the operand's dtype.
    return x if get_aval(x).dtype == dtype else _ew.convert_element_type(x, dtype)


def _apply(computation: Callable, tree: Any, accs: list, cols: list, name: str) -> list:
    out = computation(tree_util.tree_unflatten(tree, accs), tree_util.tree_unflatten(tree, cols))
    flat, out_tree = tree_util.tree_flatten(out)
    if out_tree != tree:
        raise TypeError(f"lax.{name}: computation must return the structure of its operands "
                        f"({tree}), got {out_tree}")
    for acc, r in zip(accs, flat):
        ra, aa = aval_of(name, r, "computation result"), get_aval(acc)
        if ra.shape != aa.shape or ra.dtype != aa.dtype:
            raise TypeError(
                f"lax.{name}: computation must be an elementwise binary function keeping "
                f"shape and dtype; on {aa.str_short()} it returned {ra.str_short()} (reduce_window "
                "applies it to all windows at once)")
    return flat


def reduce_window(operand: Any, init_value: Any, computation: Callable[[Any, Any], Any],
                  window_dimensions: Sequence[int], window_strides: Sequence[int] | None = None,
                  padding: Any = "VALID", base_dilation: Sequence[int] | None = None,
                  window_dilation: Sequence[int] | None = None) -> Any:
    """Reduce every window of ``operand`` with ``computation``, starting from ``init_value``.

    ``window_strides`` defaults to 1 per axis. ``padding`` is ``'VALID'`` (the default),
    ``'SAME'``, ``'SAME_LOWER'`` (sized for the dilated window) or ``(lo, hi)`` pairs per axis
    (negative crops). Each window's reduction starts from ``init_value`` once; padded
    positions and the holes of ``base_dilation`` are skipped, as XLA does (so a
    ``lax.add`` window with ``init_value=5.0`` adds 5 once, however much padding it covers).
    ``window_dilation`` spreads the window. ``computation`` ``lax.add``/``lax.mul``/
    ``lax.max``/``lax.min`` are recognised (max/min differentiate into the first extremum of a
    window); any other vectorisable binary function, also over pytrees of operands and init
    values, is folded over the window positions.

    Example:
        >>> import numpy as np
        >>> from funcgrad import lax
        >>> x = np.arange(6.0).reshape(2, 3)
        >>> lax.reduce_window(x, -np.inf, lax.max, (2, 2), (1, 1), "VALID").tolist()
        [[4.0, 5.0]]
        >>> lax.reduce_window(x, 0.0, lax.add, (1, 2), (1, 1), "SAME").tolist()
        [[1.0, 3.0, 2.0], [7.0, 9.0, 5.0]]
    """
    name = "reduce_window"
    flat_ops, tree, flat_inits, avals = operands_and_inits(name, operand, init_value,
                                                           ("operand", "init_value"))
    shape = avals[0].shape
    nd = len(shape)
    window = static_ints(name, window_dimensions, "window_dimensions")
    strides = (1,) * nd if window_strides is None else static_ints(name, window_strides,
                                                                   "window_strides")
    base = (1,) * nd if base_dilation is None else static_ints(name, base_dilation,
                                                               "base_dilation")
    wdil = (1,) * nd if window_dilation is None else static_ints(name, window_dilation,
                                                                 "window_dilation")
    for arg, v in (("window_dimensions", window), ("window_strides", strides),
                   ("base_dilation", base), ("window_dilation", wdil)):
        if len(v) != nd:
            raise TypeError(f"lax.{name}: {arg} {v} needs one entry per operand axis ({nd})")
        if any(s < 1 for s in v):
            raise TypeError(f"lax.{name}: {arg} {v} must be positive")
    # A padding name sizes the output for the dilated window over the undilated operand, as
    # JAX does.
    pads: Any = padtype_to_pads(shape, [_dilate(w, d) for w, d in zip(window, wdil)], strides,
                                padding) if isinstance(padding, str) else padding
    try:
        pads = tuple((operator_index(lo), operator_index(hi)) for lo, hi in pads)
    except (TypeError, ValueError):
        raise TypeError(f"lax.{name}: padding must be a padding name or (lo, hi) int pairs, "
                        f"got {padding!r}") from None
    if len(pads) != nd:
        raise TypeError(f"lax.{name}: padding {padding!r} needs one pair per axis ({nd})")
    monoid = _MONOIDS.get(computation) if len(flat_ops) == 1 else None
    if monoid is not None and avals[0].dtype.kind == "b" and monoid in ("add", "mul"):
        monoid = None  # lax.add/mul reject bool: the generic path raises their error
    if monoid in ("max", "min") and avals[0].dtype.kind not in "biuf":
        monoid = None  # no order for the window primitives (complex): the generic fold
    if monoid in ("add", "max", "min") and is_own_identity(monoid, flat_inits[0]):
        # As JAX: an init that is the monoid's identity in its own dtype (-inf for max,
        # 0 for add, whatever its dtype) is the identity of the operand's dtype, so an integer
        # max pool with init -inf (flax.linen.max_pool's) or an f32 sum with an f64 zero runs
        # (mul is no monoid for JAX's reduce_window: its init must match).
        flat_inits = [monoid_identity(monoid, avals[0].dtype)]
    inits = [_scalar_init(name, v, a.dtype, i) for i, (v, a) in enumerate(zip(flat_inits,
                                                                               avals))]
    out_shape = reduce_window_shape_tuple(shape, window, strides, pads, base, wdil)
    if 0 in out_shape:
        return tree_util.tree_unflatten(tree, [_filled(v, out_shape, a.device)
                                               for v, a in zip(inits, avals)])
    if monoid is not None:
        # Padding and holes hold the monoid's identity (XLA skips them); init joins once.
        (x,), (init,), dt = flat_ops, inits, avals[0].dtype
        neutral = monoid_identity(monoid, dt)
        if monoid in ("max", "min"):
            out, _ = window_max(x, neutral, window, strides, pads, base, wdil,
                                minimum=monoid == "min")
        else:
            out = window_sum(x, neutral, window, strides, pads, base, wdil,
                             product=monoid == "mul")
        if not is_value(init, neutral):
            out = computation(out, init)
        return out
    all_cols = [_windows(x, v, window, strides, pads, base, wdil, False)
                for x, v in zip(flat_ops, inits)]
    # Where a window position falls on padding or a base-dilation hole the fold skips it (the
    # accumulator is kept), as XLA does: init is combined once per window, never per hole.
    holes = any(lo > 0 or hi > 0 for lo, hi in pads) or any(b > 1 for b in base)
    real = _windows(_filled(True, shape, avals[0].device), False, window, strides, pads, base,
                    wdil, False) if holes else None
    accs = [_filled(v, out_shape, a.device) for v, a in zip(inits, avals)]
    for k in range(math.prod(window)):
        new = _apply(computation, tree, accs,
                     [_sh.index_in_dim(c, k, 0, keepdims=False) for c in all_cols], name)
        if real is None:
            accs = new
        else:
            here = _sh.index_in_dim(real, k, 0, keepdims=False)
            accs = [_ew.select_n(here, acc, n) for acc, n in zip(accs, new)]
    return tree_util.tree_unflatten(tree, accs)
