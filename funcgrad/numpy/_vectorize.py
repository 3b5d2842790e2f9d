"""funcgrad.numpy.vectorize: NumPy's ``vectorize`` (with ``signature=``) built on ``vmap``.

The function is traced once per call on one element's core arrays and batched over the loop
dimensions with nested ``vmap`` (an operand whose loop dimension is 1 is passed unbatched, so
nothing is broadcast in memory), so it is differentiable, jit-able and fast, unlike NumPy's
Python loop.

Example:
    >>> import numpy as np, funcgrad.numpy as fnp
    >>> f = fnp.vectorize(lambda a, b: a @ b, signature="(n),(n)->()")
    >>> f(np.ones((3, 2)), np.arange(2.0)).tolist()
    [1.0, 1.0, 1.0]
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from typing import Any

import numpy as _np

import funcgrad.numpy as fnp
from funcgrad.api_vmap import vmap
from funcgrad.avals import get_aval
from funcgrad.backend import device_put
from funcgrad.core import Tracer
from funcgrad.errors import ConcretizationError
from funcgrad.tree_util import transforms as tree_util  # keys are nodes here

__all__ = ["vectorize"]


def _is_scalar(v: Any) -> bool:
    return isinstance(v, bool | int | float | complex | _np.generic)

_DIM = r"\w+"
_CORE = rf"\((?:{_DIM}(?:,{_DIM})*)?\)"
_ARGS = rf"{_CORE}(?:,{_CORE})*"
_SIGNATURE = re.compile(rf"^{_ARGS}->{_ARGS}$")


def _parse_signature(sig: str) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    s = sig.replace(" ", "")
    if not _SIGNATURE.match(s):
        raise ValueError(f"vectorize: not a valid gufunc signature: {sig!r} (e.g. '(m,n),(n)->(m)')")
    ins, outs = s.split("->")
    parse = lambda side: [tuple(d for d in core.split(",") if d)
                          for core in re.findall(r"\(([^)]*)\)", side)]
    return parse(ins), parse(outs)


class vectorize:
    """``numpy.vectorize(pyfunc, otypes=None, doc=None, excluded=None, cache=False,
    signature=None)``: ``pyfunc`` maps over the leading (loop) dimensions of its array
    arguments, broadcast together; ``signature`` names the trailing core dimensions each
    argument and output has. ``excluded`` positions/names are passed through as they are.

    Without ``pyfunc`` it is a decorator (NumPy 2's ``@vectorize(signature=...)``).

    Example:
        >>> import numpy as np
        >>> vectorize(lambda x, p: x ** p, excluded={1})(np.arange(3.0), 2).tolist()
        [0.0, 1.0, 4.0]
        >>> @vectorize(signature="(n)->()")
        ... def total(v):
        ...     return v.sum()
        >>> total(np.ones((2, 3))).tolist()
        [3.0, 3.0]
    """

    def __init__(self, pyfunc: Callable[..., Any] | None = None, otypes: Any = None,
                 doc: str | None = None, excluded: Iterable[int | str] | None = None,
                 cache: bool = False, signature: str | None = None) -> None:
        self._options = (otypes, doc, excluded, cache, signature)
        self.pyfunc = pyfunc
        self.otypes = None if otypes is None else [_np.dtype(t) for t in otypes]
        self.excluded = set(excluded or ())
        self.signature = signature
        self._core = None if signature is None else _parse_signature(signature)
        if pyfunc is None:  # NumPy 2's decorator form: @vectorize(signature=...)
            return
        if not callable(pyfunc):
            raise TypeError(f"vectorize: pyfunc must be callable, got {type(pyfunc).__name__}")
        functools.update_wrapper(self, pyfunc, updated=())
        self.__doc__ = doc if doc is not None else pyfunc.__doc__  # after: wraps copies it

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.pyfunc is None:  # the decorator form, given its function
            if len(args) != 1 or kwargs or not callable(args[0]):
                raise TypeError("vectorize: made without pyfunc, it takes the function to "
                                "vectorize (as a decorator)")
            return vectorize(args[0], *self._options)
        asarray, astype, reshape, squeeze = fnp.asarray, fnp.astype, fnp.reshape, fnp.squeeze
        broadcast_shapes = fnp.broadcast_shapes
        arg_pos = [i for i in range(len(args)) if i not in self.excluded]
        kw_names = [k for k in kwargs if k not in self.excluded]
        values = [args[i] for i in arg_pos] + [kwargs[k] for k in kw_names]
        arrays = [asarray(v) for v in values]
        # A scalar argument (2.0, np.float32(2)) joins the arrays' device, as it would in an
        # elementwise operation with them (asarray alone puts it on the default device).
        device = next((get_aval(a).device for v, a in zip(values, arrays)
                       if not _is_scalar(v) and get_aval(a).device is not None), None)
        if device is not None:
            arrays = [device_put(a, device) if _is_scalar(v) else a
                      for v, a in zip(values, arrays)]
        if self._core is None:
            in_core: list[tuple[str, ...]] = [()] * len(arrays)
            out_core: list[tuple[str, ...]] | None = None
        else:
            in_core, out_core = self._core
            if kw_names:
                raise TypeError("vectorize: with a signature, pass array arguments by position")
            if len(in_core) != len(arrays):
                raise TypeError(f"vectorize: the signature {self.signature!r} has "
                                f"{len(in_core)} inputs, got {len(arrays)} array arguments")
        sizes: dict[str, int] = {}
        loops = []
        for n, (a, core) in enumerate(zip(arrays, in_core)):
            shape = get_aval(a).shape
            if len(shape) < len(core):
                raise ValueError(f"vectorize: argument {n} has {len(shape)} dimensions, fewer "
                                 f"than its core dimensions {core} in {self.signature!r}")
            for name, size in zip(core, shape[len(shape) - len(core):]):
                if sizes.setdefault(name, size) != size:
                    raise ValueError(f"vectorize: core dimension {name!r} has size "
                                     f"{sizes[name]} and {size} in {self.signature!r}")
            loops.append(shape[:len(shape) - len(core)])
        loop = broadcast_shapes(*loops) if loops else ()
        # Every argument gets exactly len(loop) loop dims (leading 1s where it had fewer).
        arrays = [reshape(a, (1,) * (len(loop) - len(lp)) + get_aval(a).shape)
                  for a, lp in zip(arrays, loops)]

        def call(*arrs: Any) -> Any:
            full = list(args)
            kw = dict(kwargs)
            for i, v in zip(arg_pos, arrs):
                full[i] = v
            for k, v in zip(kw_names, arrs[len(arg_pos):]):
                kw[k] = v
            return self.pyfunc(*full, **kw)

        def mapped(level: int, *arrs: Any) -> Any:
            if level == len(loop):
                return call(*arrs)
            axes = [None if get_aval(a).shape[0] == 1 and loop[level] != 1 else 0
                    for a in arrs]
            arrs = [squeeze(a, 0) if ax is None else a for a, ax in zip(arrs, axes)]
            if all(ax is None for ax in axes):
                out = mapped(level + 1, *arrs)
                broadcast_to, expand_dims = fnp.broadcast_to, fnp.expand_dims
                return tree_util.tree_map(lambda o: broadcast_to(
                    expand_dims(o, 0), (loop[level],) + get_aval(o).shape), out)
            return vmap(functools.partial(mapped, level + 1), in_axes=axes)(*arrs)

        try:
            out = mapped(0, *arrays)
        except ConcretizationError:
            if any(isinstance(a, Tracer) for a in arrays):
                raise
            # pyfunc needs its element's values (a Python `if`, float(), a boolean mask):
            # NumPy's loop, one call per element of the loop dimensions
            out = self._loop(call, arrays, loop)
        outs = list(out) if isinstance(out, tuple) else [out]
        if out_core is not None:
            if len(outs) != len(out_core):
                raise ValueError(f"vectorize: the signature {self.signature!r} has "
                                 f"{len(out_core)} outputs, the function returned {len(outs)}")
            for n, (o, core) in enumerate(zip(outs, out_core)):
                got = get_aval(o).shape[len(loop):]
                want = tuple(sizes.get(d, g) for d, g in zip(core, got))
                if len(got) != len(core) or got != want:
                    raise ValueError(f"vectorize: output {n} has core shape {got}, the "
                                     f"signature {self.signature!r} says {core}")
        # 0-d arguments reach pyfunc unmapped, and it may return a scalar (NumPy's arithmetic
        # on 0-d arrays gives NumPy scalars): results are arrays, 0-d ones as NumPy's
        # (made on the arguments' device)
        home = next((get_aval(a).device for a in arrays), None)
        outs = [(_np.asarray(o) if home in (None, "cpu") else device_put(_np.asarray(o), home))
                if _is_scalar(o) else o for o in outs]
        if self.otypes is not None:
            outs = [astype(o, t) for o, t in zip(outs, self.otypes)]
        return tuple(outs) if isinstance(out, tuple) or len(outs) > 1 else outs[0]

    def _loop(self, call: Callable[..., Any], arrays: list[Any], loop: tuple[int, ...]) -> Any:
        """NumPy's Python loop over the loop dimensions: each output in the first call's
        dtype (or ``otypes``'), as NumPy's buffers, stacked back to ``loop`` + its core."""
        full = [fnp.broadcast_to(a, loop + tuple(get_aval(a).shape[len(loop):]))
                for a in arrays]
        results = [call(*(a[idx] for a in full)) for idx in _np.ndindex(*loop)]
        if not results and self.otypes is not None and self._core is None:
            home = next((get_aval(a).device for a in full), None)
            outs = [fnp.zeros(loop, t, device=home) for t in self.otypes]
            return tuple(outs) if len(outs) > 1 else outs[0]
        if not results:
            raise ValueError("vectorize: cannot call pyfunc on an empty input that needs "
                             "its values (NumPy's otypes case: give otypes=)")
        is_tuple = isinstance(results[0], tuple)
        per_out = list(zip(*results)) if is_tuple else [results]
        home = next((get_aval(a).device for a in full), None)  # (Python results go there)
        outs = []
        for k, rs in enumerate(per_out):
            first = fnp.asarray(rs[0])
            dt = self.otypes[k] if self.otypes is not None and k < len(self.otypes) \
                else first.dtype
            stacked = fnp.stack([fnp.asarray(r, dtype=dt, device=home) for r in rs])
            outs.append(fnp.reshape(stacked, loop + tuple(get_aval(stacked).shape[1:])))
        return tuple(outs) if is_tuple else outs[0]
