"""``jax.extend.core``'s names that funcgrad backs: :class:`Primitive` with JAX's conventions,
and jaxprs with their parts (``ClosedJaxpr``, ``Jaxpr``, ``JaxprEqn``, ``Var``, ``Literal``).

A primitive made here works eagerly, under ``jit`` (the compiled program calls its
implementation) and, once rules are registered for it, under ``grad``/``jvp`` and ``vmap``
(docs/jaxpr.md, "Your own primitive").

Example:
    >>> import funcgrad, numpy as np
    >>> from funcgrad.extend.core import Primitive
    >>> double_p = Primitive("double")
    >>> _ = double_p.def_impl(lambda x, *, k=2: k * x)
    >>> _ = double_p.def_abstract_eval(lambda a, *, k=2: a)
    >>> double_p.bind(3.0, k=3), funcgrad.jit(lambda x: double_p.bind(x))(np.array(1.5))
    (array(9.), array(3.))
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy

from funcgrad import core as _core
from funcgrad.avals import ShapedArray, get_aval
from funcgrad.ir import (
    ClosedJaxpr,
    Effect,
    Jaxpr,
    JaxprTypeError,
    Literal,
    Var,
    jaxpr_as_fun,
)
from funcgrad.ir import Eqn as JaxprEqn
from funcgrad.ir import typecheck_jaxpr as _typecheck

__all__ = [
    "Primitive",
    "ClosedJaxpr",
    "Jaxpr",
    "JaxprEqn",
    "Var",
    "Literal",
    "Effect",
    "JaxprTypeError",
    "ShapedArray",
    "jaxpr_as_fun",
    "check_jaxpr",
    "concrete_or_error",
    "valid_jaxtype",
]


class Primitive(_core.Primitive):
    """A primitive with JAX's conventions (``jax.extend.core.Primitive``).

    ``def_impl(impl)``: ``impl(*arrays, **params)`` returns the result itself (a sequence of
    results when ``multiple_results`` is set). ``def_abstract_eval(rule)``:
    ``rule(*avals, **params)`` returns the result's :class:`ShapedArray` (a sequence of them
    when ``multiple_results``). ``bind(*args, **params)`` returns the result (the list of
    results when ``multiple_results``). Both ``def_*`` return their argument, so they serve as
    decorators; ``multiple_results`` may be set after construction, as JAX code does.

    funcgrad's own primitives (:class:`funcgrad.core.Primitive`) write their rules with lists
    of results; a primitive made here keeps that inside, so funcgrad's transformations treat
    it like any other.

    Example:
        >>> from funcgrad.extend.core import Primitive
        >>> split_p = Primitive("split_sign")
        >>> split_p.multiple_results = True
        >>> @split_p.def_impl
        ... def _split(x):
        ...     return x * (x > 0), x * (x < 0)
        >>> @split_p.def_abstract_eval
        ... def _split_shape(a):
        ...     return a, a
        >>> split_p.bind(-2.0)
        [array(-0.), array(-2.)]
    """

    __slots__ = ()

    def def_impl(self, impl: Callable[..., Any]) -> Callable[..., Any]:
        if not callable(impl):
            raise TypeError(f"Primitive '{self.name}'.def_impl takes a function, got "
                            f"{type(impl).__name__}")

        def listed_impl(*args: Any, **params: Any) -> list[Any]:
            out = impl(*args, **params)
            return _listed(self, out, "impl")

        super().def_impl(listed_impl)
        return impl

    def def_abstract_eval(self, abstract_eval: Callable[..., Any]) -> Callable[..., Any]:
        if not callable(abstract_eval):
            raise TypeError(f"Primitive '{self.name}'.def_abstract_eval takes a function, "
                            f"got {type(abstract_eval).__name__}")

        def listed_rule(*avals: Any, **params: Any) -> list[ShapedArray]:
            outs = _listed(self, abstract_eval(*avals, **params), "abstract_eval")
            # JAX's avals carry no device: a result made as ShapedArray(shape, dtype) is on
            # its operands' device
            device = next((a.device for a in avals if a.device is not None), None)
            for i, o in enumerate(outs):
                if isinstance(o, ShapedArray) and o.device is None and device is not None:
                    outs[i] = o = o.update(device=device)
                if not isinstance(o, ShapedArray):
                    raise TypeError(
                        f"Primitive '{self.name}': the abstract evaluation rule must return "
                        f"{'ShapedArrays' if self.multiple_results else 'a ShapedArray'} "
                        f"(funcgrad.extend.core.ShapedArray(shape, dtype)), got "
                        f"{type(o).__name__}")
            return outs

        super().def_abstract_eval(listed_rule)
        return abstract_eval


def _listed(prim: Primitive, out: Any, what: str) -> list[Any]:
    if not prim.multiple_results:
        return [out]
    if not isinstance(out, Sequence) or isinstance(out, str):
        raise TypeError(
            f"Primitive '{prim.name}' has multiple_results=True, so its {what} must return a "
            f"sequence of results, got {type(out).__name__}")
    return list(out)


def check_jaxpr(jaxpr: Jaxpr) -> None:
    """Check that ``jaxpr`` is well formed (each variable defined once before use, every
    equation's avals what its primitive's shape rule gives): raises :class:`JaxprTypeError`
    otherwise (JAX's ``jax.extend.core.check_jaxpr``).

    Example:
        >>> import funcgrad, numpy as np
        >>> check_jaxpr(funcgrad.make_jaxpr(lambda x: x * 2)(np.ones(2)).jaxpr)
    """
    if not isinstance(jaxpr, Jaxpr):
        raise TypeError(f"check_jaxpr takes a Jaxpr (a ClosedJaxpr's .jaxpr), got "
                        f"{type(jaxpr).__name__}")
    _typecheck(jaxpr)


def concrete_or_error(force: Callable[[Any], Any] | None, val: Any, context: str = "") -> Any:
    """``force(val)`` for a concrete ``val`` (``val`` itself when ``force`` is None); a
    :class:`funcgrad.errors.ConcretizationError` naming ``context`` and the line when ``val``
    is traced (JAX's ``jax.extend.core.concrete_or_error``).

    Example:
        >>> concrete_or_error(int, 3.0, "the number of steps")
        3
    """
    concrete = _core.concrete_or_error(val, context or "a Python value")
    return concrete if force is None else force(concrete)


def valid_jaxtype(x: Any) -> bool:
    """Whether ``x`` is a value funcgrad's operations take: an array of a supported dtype
    (NumPy's, CuPy's, the strict device's), a NumPy scalar or a Python number (JAX's
    ``jax.extend.core.valid_jaxtype``).

    Example:
        >>> import numpy as np
        >>> valid_jaxtype(np.ones(2)), valid_jaxtype(1.5), valid_jaxtype("a")
        (True, True, False)
    """
    if isinstance(x, str | bytes) or (isinstance(x, numpy.ndarray) and x.dtype.kind == "O"):
        return False
    try:
        get_aval(x)
    except Exception:
        return False
    return True
