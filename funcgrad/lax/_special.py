"""``jax.lax``'s special functions that ``funcgrad.scipy.special`` computes (regularized
incomplete gamma and beta, Hurwitz zeta, exponentially scaled Bessel I0/I1), with ``lax``'s
strictness: float operands of one dtype (Python scalars adopt it), an error naming the ``lax``
function otherwise. One implementation each, SciPy's module's: derivatives, ``vmap`` and
``jit`` come with it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import funcgrad.ops.elementwise as _ew

# funcgrad.scipy.special uses lax.while_loop: funcgrad/lax/__init__.py imports this module
# last, once the control flow it needs is bound.
import funcgrad.scipy.special as _sp
from funcgrad.lax._common import FLOATING, aval_of, check_kind, same_dtypes

Array = Any

__all__ = ["igamma", "igammac", "betainc", "zeta", "bessel_i0e", "bessel_i1e"]


def _checked(name: str, args: dict[str, Any]) -> None:
    if len(args) == 1:
        (arg, x), = args.items()
        check_kind(name, aval_of(name, x, arg), FLOATING, arg)
    else:
        same_dtypes(name, args, FLOATING)


def _strict(name: str, scipy_name: str, params: tuple[str, ...], text: str, example: str,
            result: str) -> Callable[..., Array]:
    def fn(*args: Any) -> Array:
        if len(args) != len(params):
            raise TypeError(f"lax.{name} takes {len(params)} arguments ({', '.join(params)}), "
                            f"got {len(args)}")
        _checked(name, dict(zip(params, args)))
        return _ew.strong(getattr(_sp, scipy_name)(*args))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"{text}\n\n    Example:\n        >>> from funcgrad import lax\n"
                  f"        >>> {example}\n        {result}\n    ")
    return fn


igamma = _strict("igamma", "gammainc", ("a", "x"),
                 "The regularized lower incomplete gamma function P(a, x) (SciPy's gammainc).",
                 "round(float(lax.igamma(2.0, 3.0)), 6)", "0.800852")
igammac = _strict("igammac", "gammaincc", ("a", "x"),
                  "The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x).",
                  "round(float(lax.igammac(2.0, 3.0)), 6)", "0.199148")
betainc = _strict("betainc", "betainc", ("a", "b", "x"),
                  "The regularized incomplete beta function I_x(a, b).",
                  "round(float(lax.betainc(0.5, 2.0, 0.3)), 6)", "0.739425")
zeta = _strict("zeta", "zeta", ("x", "q"),
               "The Hurwitz zeta function: the sum over n >= 0 of (n + q) ** -x.",
               "round(float(lax.zeta(2.0, 1.0)), 6)", "1.644934")
bessel_i0e = _strict("bessel_i0e", "i0e", ("x",),
                     "The exponentially scaled modified Bessel function of order 0: "
                     "exp(-|x|) I0(x).", "round(float(lax.bessel_i0e(1.0)), 6)", "0.46576")
bessel_i1e = _strict("bessel_i1e", "i1e", ("x",),
                     "The exponentially scaled modified Bessel function of order 1: "
                     "exp(-|x|) I1(x).", "round(float(lax.bessel_i1e(1.0)), 6)", "0.20791")
