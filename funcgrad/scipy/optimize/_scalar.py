"""``scipy.optimize.minimize_scalar`` (Brent's method with SciPy's bracket search, and the
bounded variant ``fminbound``) and ``bracket``: SciPy's algorithms step for step, so the same
iterates, values and counts.

These run a Python loop on the host over concrete function values (each step branches on
them), as SciPy's do: the objective may be written with funcgrad, but the search cannot be
traced (``TypeError`` under ``jit``).

Example:
    >>> from funcgrad.scipy.optimize import minimize_scalar
    >>> res = minimize_scalar(lambda x: (x - 2.0) ** 2)
    >>> round(float(res.x), 6), bool(res.success)
    (2.0, True)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy

from funcgrad.api_devices import device_get
from funcgrad.core import Tracer

__all__ = ["OptimizeResult", "minimize_scalar", "bracket"]


class OptimizeResult(dict):
    """SciPy's ``OptimizeResult``: a dict whose keys are also attributes (``x``, ``fun``,
    ``nit``, ``nfev``, ``success``, ``status``, ``message`` as the method provides)."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError as e:
            raise AttributeError(name) from e

    def __repr__(self) -> str:
        width = max(map(len, self)) + 1 if self else 0
        return "\n".join(f"{k.rjust(width)}: {v!r}" for k, v in self.items())


def _scalar_fn(name: str, fun: Callable[..., Any], args: tuple) -> Callable[[float], float]:
    def f(x: float) -> float:
        v = fun(x, *args)
        if isinstance(v, Tracer):
            raise TypeError(f"{name}: the search needs concrete function values (it branches "
                            "on them, on the host); call it outside jit/vmap/grad")
        out = numpy.asarray(device_get(v), dtype=float)
        if out.size != 1:
            raise ValueError(f"{name}: the objective must return a scalar, got shape "
                             f"{out.shape}")
        return float(out.reshape(()))
    return f


_GOLD = 1.618034
_VERYSMALL = 1e-21


def bracket(func: Callable[..., Any], xa: float = 0.0, xb: float = 1.0, args: tuple = (),
            grow_limit: float = 110.0, maxiter: int = 1000) -> tuple:
    """Points ``xa, xb, xc`` with ``f(xb)`` below ``f(xa)`` and ``f(xc)`` (a bracket of a
    minimum), searched downhill from ``xa, xb`` with golden and parabolic steps, as
    ``scipy.optimize.bracket``: returns ``(xa, xb, xc, fa, fb, fc, funcalls)``.

    Example:
        >>> from funcgrad.scipy.optimize import bracket
        >>> xa, xb, xc, fa, fb, fc, n = bracket(lambda x: (x - 5.0) ** 2)
        >>> xa < xb < xc and fb < fa and fb < fc
        True
    """
    f = _scalar_fn("bracket", func, tuple(args))
    xa, xb = float(xa), float(xb)
    fa, fb = f(xa), f(xb)
    if fa < fb:
        xa, xb, fa, fb = xb, xa, fb, fa
    xc = xb + _GOLD * (xb - xa)
    fc = f(xc)
    funcalls = 3
    it = 0
    while fc < fb:
        tmp1 = (xb - xa) * (fb - fc)
        tmp2 = (xb - xc) * (fb - fa)
        val = tmp2 - tmp1
        denom = 2.0 * _VERYSMALL if abs(val) < _VERYSMALL else 2.0 * val
        w = xb - ((xb - xc) * tmp2 - (xb - xa) * tmp1) / denom
        wlim = xb + grow_limit * (xc - xb)
        if it > maxiter:
            raise RuntimeError("No valid bracket was found before the iteration limit was "
                               "reached. Consider trying different initial points or "
                               "increasing `maxiter`.")
        it += 1
        if (w - xc) * (xb - w) > 0.0:
            fw = f(w)
            funcalls += 1
            if fw < fc:
                xa, xb, fa, fb = xb, w, fb, fw
                break
            if fw > fb:
                xc, fc = w, fw
                break
            w = xc + _GOLD * (xc - xb)
            fw = f(w)
            funcalls += 1
        elif (w - wlim) * (wlim - xc) >= 0.0:
            w = wlim
            fw = f(w)
            funcalls += 1
        elif (w - wlim) * (xc - w) > 0.0:
            fw = f(w)
            funcalls += 1
            if fw < fc:
                xb, xc = xc, w
                w = xc + _GOLD * (xc - xb)
                fb, fc = fc, fw
                fw = f(w)
                funcalls += 1
        else:
            w = xc + _GOLD * (xc - xb)
            fw = f(w)
            funcalls += 1
        xa, xb, xc = xb, xc, w
        fa, fb, fc = fb, fc, fw
    bad = not ((fb < fc and fb <= fa) or (fb < fa and fb <= fc))
    if bad or not (min(xa, xc) < xb < max(xa, xc)):
        raise RuntimeError("The algorithm terminated without finding a valid bracket. "
                           "Consider trying different initial points.")
    return xa, xb, xc, fa, fb, fc, funcalls


def _brent(f: Callable[[float], float], brack: Any, tol: float, maxiter: int
           ) -> OptimizeResult:
    if brack is None:
        xa, xb, xc, fa, fb, fc, funcalls = bracket(f)
    elif len(brack) == 2:
        xa, xb, xc, fa, fb, fc, funcalls = bracket(f, xa=brack[0], xb=brack[1])
    elif len(brack) == 3:
        xa, xb, xc = (float(v) for v in brack)
        if xa > xc:
            xa, xc = xc, xa
        if not (xa < xb < xc):
            raise ValueError("Bracketing values (xa, xb, xc) do not fulfill this "
                             "requirement: (xa < xb) and (xb < xc)")
        fa, fb, fc = f(xa), f(xb), f(xc)
        if not (fb < fa and fb < fc):
            raise ValueError("Bracketing values (xa, xb, xc) do not fulfill this "
                             "requirement: (f(xb) < f(xa)) and (f(xb) < f(xc))")
        funcalls = 3
    else:
        raise ValueError("Bracketing interval must be length 2 or 3 sequence.")
    mintol, cg = 1.0e-11, 0.3819660
    x = w = v = xb
    fw = fv = fx = fb
    a, b = (xa, xc) if xa < xc else (xc, xa)
    deltax = 0.0
    rat = 0.0
    it = 0
    while it < maxiter:
        tol1 = tol * abs(x) + mintol
        tol2 = 2.0 * tol1
        xmid = 0.5 * (a + b)
        if abs(x - xmid) < (tol2 - 0.5 * (b - a)):
            break
        if abs(deltax) <= tol1:
            deltax = a - x if x >= xmid else b - x
            rat = cg * deltax
        else:
            tmp1 = (x - w) * (fx - fv)
            tmp2 = (x - v) * (fx - fw)
            p = (x - v) * tmp2 - (x - w) * tmp1
            tmp2 = 2.0 * (tmp2 - tmp1)
            if tmp2 > 0.0:
                p = -p
            tmp2 = abs(tmp2)
            dx_temp = deltax
            deltax = rat
            if p > tmp2 * (a - x) and p < tmp2 * (b - x) and abs(p) < abs(0.5 * tmp2 * dx_temp):
                rat = p * 1.0 / tmp2
                u = x + rat
                if (u - a) < tol2 or (b - u) < tol2:
                    rat = tol1 if xmid - x >= 0 else -tol1
            else:
                deltax = a - x if x >= xmid else b - x
                rat = cg * deltax
        if abs(rat) < tol1:
            u = x + tol1 if rat >= 0 else x - tol1
        else:
            u = x + rat
        fu = f(u)
        funcalls += 1
        if fu > fx:
            if u < x:
                a = u
            else:
                b = u
            if fu <= fw or w == x:
                v, w, fv, fw = w, u, fw, fu
            elif fu <= fv or v == x or v == w:
                v, fv = u, fu
        else:
            if u >= x:
                a = x
            else:
                b = x
            v, w, x = w, x, u
            fv, fw, fx = fw, fx, fu
        it += 1
    success = it < maxiter and not (math.isnan(x) or math.isnan(fx))
    if success:
        message = ("\nOptimization terminated successfully;\nThe returned value satisfies "
                   f"the termination criteria\n(using xtol = {tol} )")
    elif math.isnan(x) or math.isnan(fx):
        message = "NaN result encountered."
    else:
        message = "\nMaximum number of iterations exceeded"
    return OptimizeResult(fun=fx, x=x, nit=it, nfev=funcalls, success=success,
                          message=message)


def _bounded(f: Callable[[float], float], bounds: Any, xatol: float, maxiter: int
             ) -> OptimizeResult:
    if len(bounds) != 2:
        raise ValueError("bounds must have two elements.")
    x1, x2 = (float(v) for v in bounds)
    if not (math.isfinite(x1) and math.isfinite(x2)):
        raise ValueError("Optimization bounds must be finite scalars.")
    if x1 > x2:
        raise ValueError("The lower bound exceeds the upper bound.")
    flag = 0
    sqrt_eps = math.sqrt(2.2e-16)
    golden_mean = 0.5 * (3.0 - math.sqrt(5.0))
    a, b = x1, x2
    fulc = a + golden_mean * (b - a)
    nfc, xf = fulc, fulc
    rat = e = 0.0
    x = xf
    fx = f(x)
    num = 1
    fu = math.inf
    ffulc = fnfc = fx
    xm = 0.5 * (a + b)
    tol1 = sqrt_eps * abs(xf) + xatol / 3.0
    tol2 = 2.0 * tol1
    while abs(xf - xm) > (tol2 - 0.5 * (b - a)):
        golden = True
        if abs(e) > tol1:
            golden = False
            r = (xf - nfc) * (fx - ffulc)
            q = (xf - fulc) * (fx - fnfc)
            p = (xf - fulc) * q - (xf - nfc) * r
            q = 2.0 * (q - r)
            if q > 0.0:
                p = -p
            q = abs(q)
            r = e
            e = rat
            if abs(p) < abs(0.5 * q * r) and p > q * (a - xf) and p < q * (b - xf):
                rat = (p + 0.0) / q
                x = xf + rat
                if (x - a) < tol2 or (b - x) < tol2:
                    si = numpy.sign(xm - xf) + ((xm - xf) == 0)
                    rat = tol1 * si
            else:
                golden = True
        if golden:
            e = a - xf if xf >= xm else b - xf
            rat = golden_mean * e
        si = numpy.sign(rat) + (rat == 0)
        x = xf + si * max(abs(rat), tol1)
        fu = f(x)
        num += 1
        if fu <= fx:
            if x >= xf:
                a = xf
            else:
                b = xf
            fulc, ffulc = nfc, fnfc
            nfc, fnfc = xf, fx
            xf, fx = x, fu
        else:
            if x < xf:
                a = x
            else:
                b = x
            if fu <= fnfc or nfc == xf:
                fulc, ffulc = nfc, fnfc
                nfc, fnfc = x, fu
            elif fu <= ffulc or fulc == xf or fulc == nfc:
                fulc, ffulc = x, fu
        xm = 0.5 * (a + b)
        tol1 = sqrt_eps * abs(xf) + xatol / 3.0
        tol2 = 2.0 * tol1
        if num >= maxiter:
            flag = 1
            break
    if math.isnan(xf) or math.isnan(fx) or math.isnan(fu):
        flag = 2
    message = {0: "Solution found.", 1: "Maximum number of function calls reached.",
               2: "NaN result encountered."}[flag]
    return OptimizeResult(fun=fx, status=flag, success=flag == 0, message=message,
                          x=float(xf), nfev=num, nit=num)


def minimize_scalar(fun: Callable[..., Any], bracket: Any = None, bounds: Any = None,
                    args: Any = (), method: str | None = None, tol: float | None = None,
                    options: dict | None = None) -> OptimizeResult:
    """Minimize a function of one variable, as ``scipy.optimize.minimize_scalar``:
    ``method="brent"`` (default; from a ``bracket`` of two or three points, searched downhill
    from ``(0, 1)`` when not given) or ``"bounded"`` (on ``bounds``, the default when they
    are given). ``options``: ``maxiter``, ``xtol`` (brent), ``xatol`` (bounded). Returns an
    :class:`OptimizeResult` (``x``, ``fun``, ``nit``, ``nfev``, ``success``, ``message``).
    Host iterations on concrete values (not traceable).

    Example:
        >>> import math
        >>> from funcgrad.scipy.optimize import minimize_scalar
        >>> res = minimize_scalar(lambda x: math.cos(x), bounds=(0.0, 6.0))
        >>> round(float(res.x), 4), res.message
        (3.1416, 'Solution found.')
    """
    args = args if isinstance(args, tuple) else (args,)
    if method is None:
        method = "bounded" if bounds is not None else "brent"
    method = str(method).lower()
    opts = dict(options or {})
    if method == "brent":
        if bounds is not None:
            raise ValueError("Use of `bounds` is incompatible with 'method=brent'.")
        xtol = float(opts.pop("xtol", 1.48e-8 if tol is None else tol))
        maxiter = int(opts.pop("maxiter", 500))
        opts.pop("disp", None)
        if opts:
            raise TypeError(f"minimize_scalar: unknown options {sorted(opts)} for brent")
        if xtol < 0:
            raise ValueError(f"tolerance should be >= 0, got {xtol!r}")
        return _brent(_scalar_fn("minimize_scalar", fun, args), bracket, xtol, maxiter)
    if method == "bounded":
        if bounds is None:
            raise ValueError("The `bounds` parameter is mandatory for method `bounded`.")
        xatol = float(opts.pop("xatol", 1e-5 if tol is None else tol))
        maxiter = int(opts.pop("maxiter", 500))
        opts.pop("disp", None)
        if opts:
            raise TypeError(f"minimize_scalar: unknown options {sorted(opts)} for bounded")
        return _bounded(_scalar_fn("minimize_scalar", fun, args), bounds, xatol, maxiter)
    raise ValueError(f"minimize_scalar: unknown method {method!r} ('brent' or 'bounded'; "
                     "'golden' is not provided)")
