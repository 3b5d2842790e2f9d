"""check_p: a user's run-time assertion (``funcgrad.experimental.checkify.check``).

``check_p`` takes a boolean scalar ``pred`` and the array leaves of the message's formatting
arguments; it has no results. ``funcgrad.experimental.checkify.checkify`` turns each check of
a traced program into an error value it returns (the functional form). Outside ``checkify``
a check runs as an assertion: eagerly it raises :class:`~funcgrad.errors.JaxRuntimeError`
when ``pred`` is false, and staged into a program (``jit``) it raises when the program runs
(JAX refuses to stage a check outside ``checkify``; funcgrad keeps it as a run-time assert).
A ``debug`` check does nothing outside ``checkify``. It is effectful: never dropped though it
has no results.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy

from funcgrad import backend
from funcgrad.avals import ShapedArray, get_aval
from funcgrad.core import Primitive, bind
from funcgrad.errors import JaxRuntimeError
from funcgrad.interpreters import batching
from funcgrad.interpreters.jvp import jvp_rules
from funcgrad.ir import effectful_primitives
from funcgrad.jaxpr_codec import Codec, ExportError, register_param_codec
from funcgrad.ops import elementwise as _ew
from funcgrad.ops import reductions as _red
from funcgrad.ops import shape as _sh
from funcgrad.ops._batching_util import moveaxis_to_front
from funcgrad.tree_util import transforms as tree_util  # keys are nodes here

__all__ = ["check_p", "check_error_p", "format_check_message"]


def format_check_message(fmt: str, tree: Any, payload: Sequence[Any]) -> str:
    """The failed check's message: ``fmt`` formatted with the payload arrays (as host NumPy
    values) put back into ``(args, kwargs)``, followed by `` (`check` failed)`` as JAX's."""
    args, kwargs = tree_util.tree_unflatten(tree, [backend.to_numpy(p) for p in payload])
    return f"{fmt.format(*args, **kwargs)} (`check` failed)"


check_p = Primitive("check", multiple_results=True)
effectful_primitives.add(check_p)


def _check_impl(pred: Any, *payload: Any, fmt: str, tree: Any, debug: bool) -> list[Any]:
    if not debug and not bool(backend.to_numpy(pred)):
        raise JaxRuntimeError(format_check_message(fmt, tree, payload))
    return []


def _check_abstract(pred: ShapedArray, *payload: ShapedArray, fmt: str, tree: Any,
                    debug: bool) -> list[ShapedArray]:
    if pred.shape != () or pred.dtype != numpy.dtype(bool):
        raise TypeError(f"check takes a scalar boolean pred, got {pred.str_short()}")
    return []


check_p.def_impl(_check_impl)
check_p.def_abstract_eval(_check_abstract)


def _check_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any):
    # no results, so no tangents: the check runs on the primal values
    bind(check_p, *primals, **params)
    return [], []


jvp_rules[check_p] = _check_jvp


def _check_batch(axis_size: int, vals: Sequence[Any], dims: Sequence[int | None], **params: Any):
    # One check over the batch: it fails when any example's fails, reporting the first
    # failing example's payload.
    pred, *payload = vals
    if dims[0] is None:
        first = None
        ok = pred
    else:
        preds = moveaxis_to_front(pred, dims[0])
        ok = _red.reduce_and(preds, (0,))
        first = _red.argmin(preds, 0)
    rows = [v if d is None else _row(moveaxis_to_front(v, d), 0 if first is None else first)
            for v, d in zip(payload, dims[1:])]
    bind(check_p, ok, *rows, **params)
    return [], []


def _row(x: Any, i: Any) -> Any:
    """Row ``i`` (maybe traced) of ``x``."""
    shape = get_aval(x).shape
    zero = numpy.int64(0)
    sl = _sh.dynamic_slice(x, [i] + [zero] * (len(shape) - 1), (1, *shape[1:]))
    return _sh.squeeze(sl, (0,))


batching.batch_rules[check_p] = _check_batch


# ---------------------------------------------------------------------------------------------
# check_error_p: an error value of checkify (its code and per-site payloads) checked again
# (``checkify.check_error``). ``sites`` are checkify's site objects: each has ``describe``
# (host payload values -> message); ``counts`` how many payload arrays each site has.

check_error_p = Primitive("check_error", multiple_results=True)
effectful_primitives.add(check_error_p)


def split_payloads(payload: Sequence[Any], counts: Sequence[int]) -> list[list[Any]]:
    """The flat payload arrays of ``check_error_p`` cut into one list per site."""
    out, i = [], 0
    for n in counts:
        out.append(list(payload[i:i + n]))
        i += n
    return out


def _check_error_impl(code: Any, *payload: Any, sites: tuple, counts: tuple) -> list[Any]:
    c = int(backend.to_numpy(code))
    if c != 0:
        host = [backend.to_numpy(p) for p in split_payloads(payload, counts)[c - 1]]
        raise JaxRuntimeError(sites[c - 1].describe(host))
    return []


def _check_error_abstract(code: ShapedArray, *payload: ShapedArray, sites: tuple,
                          counts: tuple) -> list[ShapedArray]:
    if code.shape != () or code.dtype.kind not in "iu":
        raise TypeError(f"check_error: expected an Error's scalar integer code, got "
                        f"{code.str_short()} (a batched Error is checked under vmap)")
    return []


check_error_p.def_impl(_check_error_impl)
check_error_p.def_abstract_eval(_check_error_abstract)


def _check_error_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any):
    bind(check_error_p, *primals, **params)
    return [], []


jvp_rules[check_error_p] = _check_error_jvp


def _check_error_batch(axis_size: int, vals: Sequence[Any], dims: Sequence[int | None],
                       **params: Any):
    # the first failing example's error (its code and payloads), or no error
    code, *payload = vals
    if dims[0] is None:
        first: Any = 0
        out_code = code
    else:
        codes = moveaxis_to_front(code, dims[0])
        first = _red.argmax(_ew.ne(codes, _ew.convert_element_type(numpy.int32(0),
                                                                  get_aval(codes).dtype)), 0)
        out_code = _row(codes, first)
    rows = [v if d is None else _row(moveaxis_to_front(v, d), first)
            for v, d in zip(payload, dims[1:])]
    bind(check_error_p, out_code, *rows, **params)
    return [], []


batching.batch_rules[check_error_p] = _check_error_batch


# A check exported with its program (funcgrad.export) keeps its message: the structure of the
# formatting arguments, built-in containers of leaves, as JSON data.
_LEAF = object()


def _encode_tree(tree: Any, enc: Any) -> Any:
    def walk(o: Any) -> Any:
        if o is _LEAF:
            return "*"
        if o is None:
            return {"none": 0}
        if type(o) in (tuple, list):
            return {type(o).__name__: [walk(c) for c in o]}
        if type(o) is dict and all(isinstance(k, str) for k in o):
            return {"dict": [[k, walk(v)] for k, v in o.items()]}
        raise ExportError(f"cannot export a check whose formatting arguments hold a "
                          f"{type(o).__name__}: use arrays, tuples, lists and dicts")

    return walk(tree_util.tree_unflatten(tree, [_LEAF] * tree.num_leaves))


def _decode_tree(data: Any, dec: Any) -> Any:
    def walk(d: Any) -> Any:
        if d == "*":
            return _LEAF
        (kind, body), = d.items()
        if kind == "none":
            return None
        if kind == "dict":
            return {k: walk(v) for k, v in body}
        return (tuple if kind == "tuple" else list)(walk(c) for c in body)

    return tree_util.tree_structure(walk(data), is_leaf=lambda x: x is _LEAF)


register_param_codec(check_p, "tree", Codec("checks.tree", _encode_tree, _decode_tree))
