"""Scalar root finding as ``scipy.optimize``: ``brentq``, ``bisect`` and ``root_scalar``
(bracketing methods, and Newton's with the derivative from autodiff).

The search is a ``while_loop`` (so it runs under ``jit`` and ``vmap``), wrapped in
:func:`funcgrad.lax.custom_root`: the root is differentiable in ``args`` by the implicit
function theorem (``dx/dtheta = -(df/dtheta) / (df/dx)`` at the root), not by unrolling the
iterations. JAX has none of these.

Example:
    >>> import funcgrad
    >>> from funcgrad.scipy.optimize import brentq
    >>> round(float(brentq(lambda x, a: x ** 3 - a, 0.0, 2.0, args=(2.0,))), 12)
    1.259921049895
    >>> round(float(funcgrad.grad(lambda a: brentq(lambda x, a: x ** 3 - a, 0.0, 2.0,
    ...                                              args=(a,)))(2.0)), 10)  # 1 / (3 x^2)
    0.2099868416
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy

import funcgrad.numpy as fnp
from funcgrad.api import grad
from funcgrad.core import Tracer
from funcgrad.lax import while_loop
from funcgrad.lax._solves import custom_root
from funcgrad.ops.elementwise import stop_gradient

__all__ = ["RootResults", "brentq", "bisect", "root_scalar"]

_XTOL = 2e-12
_RTOL = 4 * float(numpy.finfo(numpy.float64).eps)


class RootResults(NamedTuple):
    """A root and how it was found (SciPy's ``RootResults``): ``flag`` is ``"converged"`` or
    ``"convergence error"`` when the result is concrete, else ``None`` (see ``converged``)."""

    root: Any
    iterations: Any
    function_calls: Any
    converged: Any
    flag: Any


def _as_float(x: Any) -> Any:
    x = fnp.asarray(x)
    return x if fnp.issubdtype(x.dtype, fnp.floating) else x.astype(fnp.float64)


def _check_bracket(name: str, fa: Any, fb: Any) -> None:
    if isinstance(fa, Tracer) or isinstance(fb, Tracer):
        return  # traced: a bad bracket gives nan (it cannot raise)
    if bool(fnp.sign(fa) * fnp.sign(fb) > 0):
        raise ValueError(f"{name}: f(a) and f(b) must have different signs")


def _brent_search(fun: Callable[[Any], Any], a: Any, b: Any, xtol: float, rtol: float,
                  maxiter: int) -> tuple[Any, Any, Any, Any]:
    """Brent's method (inverse quadratic / secant steps inside the bracket, bisection when
    they do not shrink it fast enough). Returns (root, iterations, calls, converged)."""
    fa, fb = fun(a), fun(b)
    # The point with the smaller |f| is the current estimate; the other one keeps the sign
    # change (the bracket's far end, "blk").
    state = dict(i=fnp.asarray(0), pre=a, cur=b, blk=a, fpre=fa, fcur=fb, fblk=fa,
                 spre=b - a, scur=b - a, done=(fa == 0) | (fb == 0), calls=fnp.asarray(2))
    state["cur"] = fnp.where(fa == 0, a, b)
    state["fcur"] = fnp.where(fa == 0, fa, fb)
    keys = list(state)

    def cond(s: tuple) -> Any:
        d = dict(zip(keys, s))
        return (d["i"] < maxiter) & fnp.logical_not(d["done"])

    def body(s: tuple) -> tuple:
        d = dict(zip(keys, s))
        pre, cur, blk, fpre, fcur, fblk = (d[k] for k in ("pre", "cur", "blk", "fpre",
                                                          "fcur", "fblk"))
        spre, scur = d["spre"], d["scur"]
        new_bracket = (fpre != 0) & (fcur != 0) & (fnp.signbit(fpre) != fnp.signbit(fcur))
        blk = fnp.where(new_bracket, pre, blk)
        fblk = fnp.where(new_bracket, fpre, fblk)
        spre = fnp.where(new_bracket, cur - pre, spre)
        scur = fnp.where(new_bracket, cur - pre, scur)
        swap = fnp.abs(fblk) < fnp.abs(fcur)
        pre, cur, blk = (fnp.where(swap, cur, pre), fnp.where(swap, blk, cur),
                         fnp.where(swap, cur, blk))
        fpre, fcur, fblk = (fnp.where(swap, fcur, fpre), fnp.where(swap, fblk, fcur),
                            fnp.where(swap, fcur, fblk))
        delta = 0.5 * (xtol + rtol * fnp.abs(cur))
        sbis = 0.5 * (blk - cur)
        conv = (fcur == 0) | (fnp.abs(sbis) < delta)
        # Interpolation: secant when only two points are distinct, else inverse quadratic.
        dx_pc = fnp.where(cur == pre, 1.0, cur - pre)
        df_pc = fnp.where(fcur == fpre, 1.0, fcur - fpre)
        secant = -fcur * dx_pc / df_pc
        dpre = (fpre - fcur) / fnp.where(pre == cur, 1.0, pre - cur)
        dblk = (fblk - fcur) / fnp.where(blk == cur, 1.0, blk - cur)
        den = dblk * dpre * (fblk - fpre)
        quad = -fcur * (fblk * dblk - fpre * dpre) / fnp.where(den == 0, 1.0, den)
        stry = fnp.where(pre == blk, secant, quad)
        try_interp = (fnp.abs(spre) > delta) & (fnp.abs(fcur) < fnp.abs(fpre))
        good = try_interp & (2 * fnp.abs(stry) < fnp.minimum(fnp.abs(spre),
                                                           3 * fnp.abs(sbis) - delta))
        spre_n = fnp.where(good, scur, sbis)
        scur_n = fnp.where(good, stry, sbis)
        step = fnp.where(fnp.abs(scur_n) > delta, scur_n, fnp.where(sbis > 0, delta, -delta))
        nxt = cur + step
        fnxt = fun(fnp.where(conv, cur, nxt))
        upd = fnp.logical_not(conv)
        out = dict(i=d["i"] + upd.astype(d["i"].dtype), pre=fnp.where(upd, cur, pre),
                   cur=fnp.where(upd, nxt, cur), blk=blk, fpre=fnp.where(upd, fcur, fpre),
                   fcur=fnp.where(upd, fnxt, fcur), fblk=fblk, spre=spre_n, scur=scur_n,
                   done=conv, calls=d["calls"] + upd.astype(d["calls"].dtype))
        return tuple(out[k] for k in keys)

    res = dict(zip(keys, while_loop(cond, body, tuple(state[k] for k in keys))))
    ok = res["done"] & fnp.logical_not(fnp.sign(fa) * fnp.sign(fb) > 0)
    root = fnp.where(fnp.sign(fa) * fnp.sign(fb) > 0, numpy.nan, res["cur"])
    # SciPy counts the iteration that found convergence too (none for a root at an end).
    it = fnp.where((fa == 0) | (fb == 0), 0, fnp.minimum(res["i"] + 1, maxiter))
    return root, it, res["calls"], ok


def _bisect_search(fun: Callable[[Any], Any], a: Any, b: Any, xtol: float, rtol: float,
                   maxiter: int) -> tuple[Any, Any, Any, Any]:
    """Bisection: halve the step from ``a`` towards ``b``, moving ``a`` up to each midpoint
    where ``f`` keeps its sign there, until the step is below ``xtol + rtol |x|``; the last
    midpoint is the root (SciPy's)."""
    fa, fb = fun(a), fun(b)
    bad = fnp.sign(fa) * fnp.sign(fb) > 0

    def cond(s: tuple) -> Any:
        return (s[0] < maxiter) & fnp.logical_not(s[4])

    def body(s: tuple) -> tuple:
        i, lo, dm, xm, done = s
        dm = 0.5 * dm
        xm = lo + dm
        fm = fun(xm)
        lo = fnp.where(fnp.sign(fm) * fnp.sign(fa) >= 0, xm, lo)
        conv = (fm == 0) | (fnp.abs(dm) < xtol + rtol * fnp.abs(xm))
        return i + 1, lo, dm, xm, conv

    init = (fnp.asarray(0), a, b - a, a, (fa == 0) | (fb == 0) | bad)
    i, _, _, xm, done = while_loop(cond, body, init)
    root = fnp.where(fa == 0, a, fnp.where(fb == 0, b, xm))
    return fnp.where(bad, numpy.nan, root), i, i + 2, done & fnp.logical_not(bad)


def _bracketed(name: str, search: Callable[..., tuple], f: Callable[..., Any], a: Any,
               b: Any, args: Any, xtol: float, rtol: float, maxiter: int) -> tuple:
    if not callable(f):
        raise TypeError(f"{name}: f must be callable, got {type(f).__name__}")
    if not isinstance(args, tuple):
        args = (args,)
    if xtol <= 0:
        raise ValueError(f"{name}: xtol must be positive, got {xtol}")
    if rtol < _RTOL:
        raise ValueError(f"{name}: rtol too small ({rtol} < {_RTOL:g})")
    a, b = stop_gradient(_as_float(a)), stop_gradient(_as_float(b))
    if fnp.ndim(a) or fnp.ndim(b):
        raise ValueError(f"{name}: a and b must be scalars (vmap for many roots)")
    _check_bracket(name, f(a, *args), f(b, *args))

    def solve(fun: Callable[[Any], Any], _: Any) -> Any:
        return search(fun, a, b, xtol, rtol, maxiter)[0]

    def fun(x: Any) -> Any:
        return f(x, *args)

    root = custom_root(fun, 0.5 * (a + b), solve, lambda g, y: y / g(1.0))
    # The statistics come from the same search, run again outside the custom root (whose
    # solve is traced once): cheap compared to the user's derivative work.
    _, it, calls, ok = search(lambda x: stop_gradient(fun(x)), a, b, xtol, rtol, maxiter)
    return root, it, calls, ok


def _results(root: Any, it: Any, calls: Any, ok: Any) -> RootResults:
    flag = None
    if not isinstance(ok, Tracer):
        flag = "converged" if bool(ok) else "convergence error"
    return RootResults(root, it, calls, ok, flag)


def brentq(f: Callable[..., Any], a: Any, b: Any, args: Any = (), xtol: float = _XTOL,
           rtol: float = _RTOL, maxiter: int = 100, full_output: bool = False,
           disp: bool = True) -> Any:
    """A root of ``f(x, *args)`` in ``[a, b]`` by Brent's method (``f(a)``, ``f(b)`` of
    opposite signs: else ``ValueError``, or nan when traced), as ``scipy.optimize.brentq``.
    Differentiable in ``args`` (implicit function theorem); ``full_output=True`` also returns
    a :class:`RootResults`. ``disp=True`` raises ``RuntimeError`` when concrete and not
    converged within ``maxiter``.

    Example:
        >>> from funcgrad.scipy.optimize import brentq
        >>> import funcgrad.numpy as fnp
        >>> round(float(brentq(fnp.cos, 0.0, 3.0)), 12)   # pi / 2
        1.570796326795
    """
    root, it, calls, ok = _bracketed("brentq", _brent_search, f, a, b, args, xtol, rtol,
                                     maxiter)
    return _finish("brentq", root, it, calls, ok, full_output, disp)


def bisect(f: Callable[..., Any], a: Any, b: Any, args: Any = (), xtol: float = _XTOL,
           rtol: float = _RTOL, maxiter: int = 100, full_output: bool = False,
           disp: bool = True) -> Any:
    """A root of ``f(x, *args)`` in ``[a, b]`` by bisection, as ``scipy.optimize.bisect``
    (arguments and derivatives as :func:`brentq`).

    Example:
        >>> from funcgrad.scipy.optimize import bisect
        >>> round(float(bisect(lambda x: x * x - 2.0, 0.0, 2.0)), 10)
        1.4142135624
    """
    root, it, calls, ok = _bracketed("bisect", _bisect_search, f, a, b, args, xtol, rtol,
                                     maxiter)
    return _finish("bisect", root, it, calls, ok, full_output, disp)


def _finish(name: str, root: Any, it: Any, calls: Any, ok: Any, full_output: bool,
            disp: bool) -> Any:
    if disp and not isinstance(ok, Tracer) and not bool(ok) and not bool(fnp.isnan(root)):
        raise RuntimeError(f"{name}: failed to converge after {int(it)} iterations, value "
                           f"is {float(root)}")
    if full_output:
        return root, _results(root, it, calls, ok)
    return root


def _newton(f: Callable[..., Any], fprime: Any, x0: Any, args: tuple, xtol: float,
            rtol: float, maxiter: int) -> tuple:
    x0 = _as_float(x0)

    def fun(x: Any) -> Any:
        return f(x, *args)

    def dfun(x: Any) -> Any:
        return fprime(x, *args) if callable(fprime) else grad(fun)(x)

    def search(fn: Callable[[Any], Any], x: Any) -> tuple[Any, Any, Any]:
        def cond(s: tuple) -> Any:
            return (s[0] < maxiter) & fnp.logical_not(s[2])

        def body(s: tuple) -> tuple:
            i, x, _ = s
            step = fn(x) / dfun(x)
            x_n = x - step
            return i + 1, x_n, fnp.abs(step) <= xtol + rtol * fnp.abs(x_n)

        i, x, ok = while_loop(cond, body, (fnp.asarray(0), x, fnp.asarray(False)))
        return x, i, ok

    x0 = stop_gradient(x0)
    root = custom_root(fun, x0, lambda fn, x: search(fn, x)[0], lambda g, y: y / g(1.0))
    # The statistics from the same search outside the custom root (whose solve is traced).
    _, i, ok = search(lambda x: stop_gradient(fun(x)), x0)
    return root, i, 2 * i, ok


# SciPy's other bracketing methods (brenth, ridder, toms748) find the same root to the same
# tolerance; funcgrad runs Brent's search for them (their iterates and counts differ)
_BRACKET_METHODS = {"brentq": _brent_search, "bisect": _bisect_search,
                    "brenth": _brent_search, "ridder": _brent_search,
                    "toms748": _brent_search}
# the derivative-based ones all run Newton's method with the derivative by autodiff
_OPEN_METHODS = ("newton", "secant", "halley")


def root_scalar(f: Callable[..., Any], args: Any = (), method: str | None = None,
                bracket: Sequence[Any] | None = None, fprime: Any = None,
                fprime2: Any = None, x0: Any = None, x1: Any = None,
                xtol: float | None = None, rtol: float | None = None,
                maxiter: int | None = None, options: dict | None = None) -> RootResults:
    """A root of the scalar ``f(x, *args)``, as ``scipy.optimize.root_scalar``: with a
    ``bracket``, ``method`` ``"brentq"`` (the default) or ``"bisect"`` (SciPy's iterates;
    ``"brenth"``, ``"ridder"``, ``"toms748"`` run Brent's search: the same root, other
    counts); with ``x0``, ``"newton"`` (the default then; ``"secant"`` and ``"halley"`` run
    it too), ``fprime`` a callable or ``True`` (autodiff; SciPy's secant fallback without
    ``fprime`` is not provided: autodiff is used; ``fprime2`` is not needed). Returns a
    :class:`RootResults`; the root is differentiable in ``args``.

    Example:
        >>> from funcgrad.scipy.optimize import root_scalar
        >>> res = root_scalar(lambda x: x ** 3 - 8.0, bracket=(0.0, 5.0))
        >>> round(float(res.root), 12), res.flag
        (2.0, 'converged')
        >>> round(float(root_scalar(lambda x: x ** 3 - 8.0, x0=1.0).root), 12)
        2.0
    """
    if not isinstance(args, tuple):
        args = (args,)
    opts = dict(options or {})
    xtol = opts.pop("xtol", xtol if xtol is not None else _XTOL)
    rtol = opts.pop("rtol", rtol if rtol is not None else _RTOL)
    maxiter = int(opts.pop("maxiter", maxiter if maxiter is not None else 100))
    if method is None:
        method = "brentq" if bracket is not None else "newton"
    method = method.lower()
    if method in _BRACKET_METHODS:
        if bracket is None or len(bracket) != 2:
            raise ValueError(f"root_scalar: method {method!r} needs bracket=(a, b)")
        root, it, calls, ok = _bracketed("root_scalar", _BRACKET_METHODS[method], f,
                                         bracket[0], bracket[1], args, xtol, rtol, maxiter)
        return _results(root, it, calls, ok)
    if method in _OPEN_METHODS:
        if x0 is None:
            raise ValueError(f"root_scalar: method {method!r} needs x0")
        del x1, fprime2
        root, it, calls, ok = _newton(f, fprime, x0, args, xtol, rtol, maxiter)
        return _results(root, it, calls, ok)
    raise ValueError(f"root_scalar: method must be one of {sorted(_BRACKET_METHODS)} or "
                     f"{list(_OPEN_METHODS)}, got {method!r}")
