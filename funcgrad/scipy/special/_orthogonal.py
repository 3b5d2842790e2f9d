"""Orthogonal polynomials as ``scipy.special``'s ``eval_*`` functions: eval_legendre,
eval_chebyt, eval_chebyu, eval_hermite, eval_hermitenorm, eval_laguerre, eval_genlaguerre,
eval_jacobi, eval_gegenbauer.

SciPy's two kernels: an integer order runs the three-term recurrence (a ``while_loop`` to the
largest order present, so traced orders work under ``jit``/``vmap``), a float order (any
real value) is the hypergeometric closed form, as SciPy's ``d`` loops. Differentiable in
``x`` and in the real parameters (``alpha``, ``beta``); the order is not differentiable."""

from __future__ import annotations

from typing import Any

import numpy

from funcgrad.avals import get_aval
from funcgrad.scipy.special._combinatorics import binom
from funcgrad.scipy.special._common import _floats, _fnpm, _while
from funcgrad.scipy.special._hypergeometric import hyp1f1, hyp2f1


def _integer_order(n: Any) -> bool:
    """Whether ``n`` selects SciPy's integer kernel (Python int or an integer/bool dtype)."""
    if isinstance(n, (bool, int, numpy.integer)):
        return True
    if isinstance(n, float):
        return False
    return get_aval(n).dtype.kind in "iub"


def _args(name: str, n: Any, *xs: Any) -> tuple[Any, bool, list[Any]]:
    """(n, integer order?, floats): everything broadcast together; an integer ``n`` stays
    integer (``int64``), a float ``n`` takes the floats' dtype."""
    if _integer_order(n):
        n = _fnpm.asarray(n).astype(numpy.int64)
        xs = [_fnpm.asarray(v) for v in _floats(name, *xs)]
        n, *xs = _fnpm.broadcast_arrays(n, *xs)
        return n, True, xs
    n, *xs = (_fnpm.asarray(v) for v in _floats(name, n, *xs))
    n, *xs = _fnpm.broadcast_arrays(n, *xs)
    return n, False, xs


def _recurrence(m: Any, p0: Any, p1: Any, step: Any) -> Any:
    """``p_m`` for integer ``m >= 0`` (elementwise, ``m`` as floats) from ``p_0``, ``p_1`` and
    ``step(k, p_{k-1}, p_k) = p_{k+1}``, run up to the largest ``m`` present."""
    fnp = _fnpm
    out = fnp.where(m == 0, p0, p1)
    if m.size == 0:
        return out
    top = fnp.max(m)

    def cond(s: tuple) -> Any:
        return s[0] < top

    def body(s: tuple) -> tuple:
        k, a, b, acc = s
        c = step(k, a, b)
        return k + 1.0, b, c, fnp.where(m == k + 1.0, c, acc)

    k0 = fnp.ones((), dtype=p1.dtype)
    return _while(cond, body, (k0, p0, p1, out))[3]


def _by_order(n: Any, rec: Any, closed: Any) -> Any:
    """A float order's value: the recurrence ``rec(m)`` where ``n`` is a whole number >= 0 (the
    polynomial itself, as SciPy's hypergeometric kernels give it there: the closed forms'
    terminating series cancel badly for large ``n``), ``closed(n)`` elsewhere (each on a
    harmless stand-in order off its own lanes)."""
    fnp = _fnpm
    whole = (n >= 0) & (n == fnp.floor(n)) & fnp.isfinite(n)
    return fnp.where(whole, rec(fnp.where(whole, n, 0.0)), closed(fnp.where(whole, 0.5, n)))


def _one(x: Any) -> Any:
    return _fnpm.ones_like(x)


def eval_legendre(n: Any, x: Any) -> Any:
    """Legendre polynomial ``P_n(x)``, as ``scipy.special.eval_legendre``: integer ``n`` by
    the three-term recurrence (``P_{-n-1} = P_n``), real ``n`` as
    ``hyp2f1(-n, n + 1, 1, (1 - x) / 2)``; differentiable in ``x``.

    Example:
        >>> import numpy as np, funcgrad
        >>> from funcgrad.scipy.special import eval_legendre
        >>> eval_legendre(3, np.array([0.5, 1.0, 2.0]))   # (5 x^3 - 3 x) / 2
        array([-0.4375,  1.    , 17.    ])
        >>> float(funcgrad.grad(eval_legendre, argnums=1)(2, 0.5))   # P_2' = 3 x
        1.5
    """
    n, integer, (x,) = _args("eval_legendre", n, x)

    def rec(m: Any) -> Any:
        return _recurrence(m, _one(x), x,
                           lambda k, a, b: ((2.0 * k + 1.0) * x * b - k * a) / (k + 1.0))

    if not integer:
        return _by_order(n, rec, lambda v: hyp2f1(-v, v + 1.0, _one(x), (1.0 - x) / 2.0))
    return rec(_fnpm.where(n < 0, -n - 1, n).astype(x.dtype))


def eval_chebyt(n: Any, x: Any) -> Any:
    """Chebyshev polynomial of the first kind ``T_n(x)``, as ``scipy.special.eval_chebyt``:
    integer ``n`` by the recurrence (``T_{-n} = T_n``), real ``n`` as
    ``hyp2f1(-n, n, 1/2, (1 - x) / 2)``; differentiable in ``x``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import eval_chebyt
        >>> eval_chebyt(3, np.array([-1.0, 0.5, 2.0]))   # 4 x^3 - 3 x
        array([-1., -1., 26.])
    """
    n, integer, (x,) = _args("eval_chebyt", n, x)

    def rec(m: Any) -> Any:
        return _recurrence(m, _one(x), x, lambda k, a, b: 2.0 * x * b - a)

    if not integer:
        return _by_order(n, rec, lambda v: hyp2f1(-v, v, 0.5 * _one(x), (1.0 - x) / 2.0))
    return rec(_fnpm.abs(n).astype(x.dtype))


def eval_chebyu(n: Any, x: Any) -> Any:
    """Chebyshev polynomial of the second kind ``U_n(x)``, as ``scipy.special.eval_chebyu``:
    integer ``n`` by the recurrence (``U_{-1} = 0``, ``U_{-n} = -U_{n-2}``), real ``n`` as
    ``(n + 1) hyp2f1(-n, n + 2, 3/2, (1 - x) / 2)``; differentiable in ``x``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import eval_chebyu
        >>> eval_chebyu(2, np.array([0.0, 0.5, 1.0]))   # 4 x^2 - 1
        array([-1.,  0.,  3.])
    """
    n, integer, (x,) = _args("eval_chebyu", n, x)

    def rec(m: Any) -> Any:
        return _recurrence(m, _one(x), 2.0 * x, lambda k, a, b: 2.0 * x * b - a)

    if not integer:
        return _by_order(n, rec, lambda v: (v + 1.0) * hyp2f1(-v, v + 2.0, 1.5 * _one(x),
                                                               (1.0 - x) / 2.0))
    neg = n < 0
    m = _fnpm.where(neg, -n - 2, n)
    sign = _fnpm.where(neg, -1.0, 1.0).astype(x.dtype)
    out = sign * rec(_fnpm.abs(m).astype(x.dtype))
    # U_{-1} = 0; m = -1 stands for n = -1 only.
    return _fnpm.where(m == -1, 0.0, out)


def _nonneg_order(name: str, n: Any, x: Any) -> tuple[Any, Any]:
    if not _integer_order(n):
        raise TypeError(f"funcgrad.scipy.special.{name}: the order n must be an integer (as "
                        f"SciPy's, which has no real-order kernel), got {get_aval(n).dtype}")
    n, _, (x,) = _args(name, n, x)
    return n, x


def eval_hermite(n: Any, x: Any) -> Any:
    """Physicists' Hermite polynomial ``H_n(x)`` for integer ``n >= 0`` (nan for ``n < 0``;
    a float ``n`` raises ``TypeError``, as SciPy), by the recurrence; differentiable in ``x``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import eval_hermite
        >>> eval_hermite(3, np.array([1.0, 2.0, 3.0]))   # 8 x^3 - 12 x
        array([ -4.,  40., 180.])
    """
    n, x = _nonneg_order("eval_hermite", n, x)
    m = _fnpm.maximum(n, 0).astype(x.dtype)
    out = _recurrence(m, _one(x), 2.0 * x, lambda k, a, b: 2.0 * (x * b - k * a))
    return _fnpm.where(n < 0, numpy.nan, out)


def eval_hermitenorm(n: Any, x: Any) -> Any:
    """Probabilists' Hermite polynomial ``He_n(x)`` for integer ``n >= 0`` (nan for
    ``n < 0``; a float ``n`` raises ``TypeError``, as SciPy); differentiable in ``x``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import eval_hermitenorm
        >>> eval_hermitenorm(3, np.array([1.0, 2.0, 3.0]))   # x^3 - 3 x
        array([-2.,  2., 18.])
    """
    n, x = _nonneg_order("eval_hermitenorm", n, x)
    m = _fnpm.maximum(n, 0).astype(x.dtype)
    out = _recurrence(m, _one(x), x, lambda k, a, b: x * b - k * a)
    return _fnpm.where(n < 0, numpy.nan, out)


def eval_genlaguerre(n: Any, alpha: Any, x: Any) -> Any:
    """Generalized Laguerre polynomial ``L_n^(alpha)(x)`` (``alpha > -1``, nan otherwise), as
    ``scipy.special.eval_genlaguerre``: integer ``n`` by the recurrence (0 for ``n < 0``), real
    ``n`` as ``binom(n + alpha, n) hyp1f1(-n, alpha + 1, x)``; differentiable in ``alpha`` and
    ``x``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import eval_genlaguerre
        >>> eval_genlaguerre(2, 1.0, np.array([0.0, 1.0]))   # (x^2 - 6 x + 6) / 2
        array([3. , 0.5])
    """
    n, integer, (alpha, x) = _args("eval_genlaguerre", n, alpha, x)

    def rec(m: Any) -> Any:
        return _recurrence(
            m, _one(x), 1.0 + alpha - x,
            lambda k, a, b: ((2.0 * k + 1.0 + alpha - x) * b - (k + alpha) * a) / (k + 1.0))

    if integer:
        out = _fnpm.where(n < 0, 0.0, rec(_fnpm.maximum(n, 0).astype(x.dtype)))
    else:
        out = _by_order(n, rec, lambda v: binom(v + alpha, v) * hyp1f1(-v, alpha + 1.0, x))
    return _fnpm.where(alpha > -1.0, out, numpy.nan)


def eval_laguerre(n: Any, x: Any) -> Any:
    """Laguerre polynomial ``L_n(x)``, ``eval_genlaguerre(n, 0, x)`` (as SciPy: integer ``n``
    by the recurrence, 0 for ``n < 0``; real ``n`` through ``hyp1f1``); differentiable in ``x``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import eval_laguerre
        >>> eval_laguerre(2, np.array([0.0, 1.0, 2.0]))   # (x^2 - 4 x + 2) / 2
        array([ 1. , -0.5, -1. ])
    """
    return eval_genlaguerre(n, _fnpm.zeros_like(_fnpm.asarray(_floats("eval_laguerre", x)[0])),
                            x)


def eval_jacobi(n: Any, alpha: Any, beta: Any, x: Any) -> Any:
    """Jacobi polynomial ``P_n^(alpha, beta)(x)``, as ``scipy.special.eval_jacobi``: integer
    ``n`` by the recurrence (0 for ``n < 0``), real ``n`` as
    ``binom(n + alpha, n) hyp2f1(-n, n + alpha + beta + 1, alpha + 1, (1 - x) / 2)``;
    differentiable in ``alpha``, ``beta`` and ``x``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import eval_jacobi
        >>> eval_jacobi(1, 0.5, 1.5, np.array([-1.0, 0.0, 1.0]))   # (a+1) + (a+b+2)(x-1)/2
        array([-2.5, -0.5,  1.5])
    """
    n, integer, (a, b, x) = _args("eval_jacobi", n, alpha, beta, x)

    def closed(v: Any) -> Any:
        return binom(v + a, v) * hyp2f1(-v, v + a + b + 1.0, a + 1.0, (1.0 - x) / 2.0)

    # Where a + b is an integer <= -2 the recurrence divides by 0 at some step (2k + a + b or
    # k + a + b + 1): those lanes take the closed form (stand-in parameters in the recurrence).
    ab0 = a + b
    degenerate = (ab0 <= -2.0) & (ab0 == _fnpm.floor(ab0))
    ar, br = _fnpm.where(degenerate, 0.0, a), _fnpm.where(degenerate, 0.0, b)
    ab = ar + br
    a2b2 = (ar - br) * (ar + br)

    def step(k: Any, p_prev: Any, p: Any) -> Any:
        s = 2.0 * k + ab
        c1 = 2.0 * (k + 1.0) * (k + ab + 1.0) * s
        c2 = (s + 1.0) * ((s + 2.0) * s * x + a2b2)
        c3 = 2.0 * (k + ar) * (k + br) * (s + 2.0)
        return (c2 * p - c3 * p_prev) / c1

    def rec(m: Any) -> Any:
        out = _recurrence(m, _one(x), (ar + 1.0) + (ab + 2.0) * (x - 1.0) / 2.0, step)
        if isinstance(degenerate, numpy.ndarray) and not degenerate.any():
            return out
        return _fnpm.where(degenerate, closed(_fnpm.where(degenerate, m, 0.5)), out)

    if not integer:
        return _by_order(n, rec, closed)
    # A negative integer order takes the real-order kernel, as SciPy's.
    neg = n < 0
    return _fnpm.where(neg, closed(_fnpm.where(neg, n.astype(x.dtype), -0.5)),
                       rec(_fnpm.maximum(n, 0).astype(x.dtype)))


def eval_gegenbauer(n: Any, alpha: Any, x: Any) -> Any:
    """Gegenbauer (ultraspherical) polynomial ``C_n^(alpha)(x)`` (``alpha > -1/2``, nan
    otherwise), as ``scipy.special.eval_gegenbauer``: integer ``n`` by the recurrence (0 for
    ``n < 0``), real ``n`` as ``Gamma(n + 2 alpha) / (Gamma(n + 1) Gamma(2 alpha))
    hyp2f1(-n, n + 2 alpha, alpha + 1/2, (1 - x) / 2)``; differentiable in ``alpha`` and ``x``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import eval_gegenbauer
        >>> eval_gegenbauer(2, 1.0, np.array([0.0, 0.5, 1.0]))   # 4 x^2 - 1 (= U_2)
        array([-1.,  0.,  3.])
    """
    n, integer, (a, x) = _args("eval_gegenbauer", n, alpha, x)

    def rec(m: Any) -> Any:
        return _recurrence(
            m, _one(x), 2.0 * a * x,
            lambda k, p_prev, p: (2.0 * (k + a) * x * p - (k + 2.0 * a - 1.0) * p_prev)
            / (k + 1.0))

    if integer:
        out = _fnpm.where(n < 0, 0.0, rec(_fnpm.maximum(n, 0).astype(x.dtype)))
        # As SciPy's integer kernel: orders 0 and 1 for every alpha, and near x = 0 (its
        # series there); otherwise nan unless alpha > -1/2.
        ok = (a > -0.5) | (n < 2) | (_fnpm.abs(x) < 1e-5)
        return _fnpm.where(ok, out, numpy.nan)
    out = _by_order(n, rec, lambda v: binom(v + 2.0 * a - 1.0, v)
                    * hyp2f1(-v, v + 2.0 * a, a + 0.5, (1.0 - x) / 2.0))
    return _fnpm.where(a > -0.5, out, numpy.nan)
