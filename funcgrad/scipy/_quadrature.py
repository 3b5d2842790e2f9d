"""Quadrature of ``scipy.integrate``: ``quad`` and ``dblquad`` (adaptive Gauss-Kronrod, on the
host), ``fixed_quad`` (Gauss-Legendre) and ``romb`` (Romberg on samples).

``quad`` bisects the interval with the largest error estimate, each piece integrated by the
21-point Gauss-Kronrod rule with QUADPACK's error estimate, until the total error is within
``max(epsabs, epsrel |I|)`` or ``limit`` pieces; infinite ranges are mapped onto ``(0, 1]`` by
``x = a + (1 - t) / t``, as QUADPACK's QAGI. It calls ``func`` at concrete floats (a traced
call raises ``TypeError``). QUADPACK's epsilon-algorithm extrapolation is not provided, so an
integrable singularity at an end point may take more pieces (``IntegrationWarning`` when
``limit`` is hit). ``fixed_quad`` and ``romb`` are formulas: differentiable, ``jit``-able.

Example:
    >>> import numpy as np
    >>> from funcgrad.scipy.integrate import quad
    >>> value, err = quad(np.exp, 0.0, 1.0)
    >>> round(value, 14), err < 1e-13
    (1.71828182845905, True)
"""

from __future__ import annotations

import heapq
import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.api_devices import device_get
from funcgrad.avals import get_aval
from funcgrad.backend import device_put, get_default_device
from funcgrad.core import Tracer

__all__ = ["quad", "dblquad", "fixed_quad", "romb", "IntegrationWarning"]


class IntegrationWarning(UserWarning):
    """SciPy's warning for an integral that did not reach the requested accuracy."""


# QUADPACK's dqk21: Kronrod abscissae (Gauss points at odd positions), Kronrod and Gauss weights
_XGK = numpy.array([0.995657163025808080735527280689003, 0.973906528517171720077964012084452,
                    0.930157491355708226001207180059508, 0.865063366688984510732096688423493,
                    0.780817726586416897063717578345042, 0.679409568299024406234327365114874,
                    0.562757134668604683339000099272694, 0.433395394129247190799265943165784,
                    0.294392862701460198131126603103866, 0.148874338981631210884826001129720,
                    0.0])
_WGK = numpy.array([0.011694638867371874278064396062192, 0.032558162307964727478818972459390,
                    0.054755896574351996031381300244580, 0.075039674810919952767043140916190,
                    0.093125454583697605535065465083366, 0.109387158802297641899210590325805,
                    0.123491976262065851077958109831074, 0.134709217311473325928054001771707,
                    0.142775938577060080797094273138717, 0.147739104901338491374841515972068,
                    0.149445554002916905664936468389821])
_WG = numpy.array([0.066671344308688137593568809893332, 0.149451349150580593145776339657697,
                   0.219086362515982043995534934228163, 0.269266719309996355091226921569469,
                   0.295524224714752870173892994651338])
_EPMACH = numpy.finfo(float).eps
_UFLOW = numpy.finfo(float).tiny


def _kronrod(f: Callable[[float], float], a: float, b: float) -> tuple[float, float]:
    """QUADPACK's dqk21 on ``[a, b]``: the 21-point Kronrod value and its error estimate."""
    centr, hlgth = 0.5 * (a + b), 0.5 * (b - a)
    dhlgth = abs(hlgth)
    fc = f(centr)
    resk = _WGK[10] * fc
    resabs = abs(resk)
    resg = 0.0
    f1 = numpy.empty(10)
    f2 = numpy.empty(10)
    for j in range(10):
        absc = hlgth * _XGK[j]
        f1[j], f2[j] = f(centr - absc), f(centr + absc)
        resk += _WGK[j] * (f1[j] + f2[j])
        resabs += _WGK[j] * (abs(f1[j]) + abs(f2[j]))
        if j % 2 == 1:
            resg += _WG[j // 2] * (f1[j] + f2[j])
    reskh = resk * 0.5
    resasc = _WGK[10] * abs(fc - reskh) + float(numpy.sum(_WGK[:10] * (numpy.abs(f1 - reskh)
                                                                     + numpy.abs(f2 - reskh))))
    result = resk * hlgth
    resabs *= dhlgth
    resasc *= dhlgth
    abserr = abs((resk - resg) * hlgth)
    if resasc != 0.0 and abserr != 0.0:
        abserr = resasc * min(1.0, (200.0 * abserr / resasc) ** 1.5)
    if resabs > _UFLOW / (50.0 * _EPMACH):
        abserr = max(_EPMACH * 50.0 * resabs, abserr)
    return float(result), float(abserr)


def _scalar_caller(func: Callable[..., Any], args: tuple) -> Callable[[float], float]:
    def f(x: float) -> float:
        v = func(x, *args)
        if isinstance(v, Tracer):
            raise TypeError("quad: the adaptive subdivision needs concrete function values; "
                            "call it outside jit/vmap/grad (fixed_quad is traceable)")
        out = numpy.asarray(device_get(v))
        if out.size != 1:
            raise ValueError(f"quad: func must return a scalar, got shape {out.shape}")
        if out.dtype.kind == "c":
            raise TypeError("quad: complex values need complex_func=True")
        return float(out.reshape(()))
    return f


def _adaptive(f: Callable[[float], float], pieces: list[tuple[float, float]], epsabs: float,
              epsrel: float, limit: int) -> tuple[float, float, int, int, list]:
    """Bisect the piece with the largest error until the tolerance or ``limit`` pieces."""
    heap = []
    neval = 0
    for a, b in pieces:
        r, e = _kronrod(f, a, b)
        neval += 21
        heapq.heappush(heap, (-e, a, b, r))
    status = 0
    while True:
        total = sum(item[3] for item in heap)
        err = sum(-item[0] for item in heap)
        if err <= max(epsabs, epsrel * abs(total)):
            break
        if len(heap) >= limit:
            status = 1
            break
        neg_e, a, b, _ = heapq.heappop(heap)
        mid = 0.5 * (a + b)
        if not (a < mid < b):  # the piece cannot be halved any more: roundoff
            heapq.heappush(heap, (neg_e, a, b, _))
            status = 2
            break
        for lo, hi in ((a, mid), (mid, b)):
            r, e = _kronrod(f, lo, hi)
            neval += 21
            heapq.heappush(heap, (-e, lo, hi, r))
        if not math.isfinite(err):
            status = 5
            break
    total = math.fsum(item[3] for item in heap)
    err = math.fsum(-item[0] for item in heap)
    return total, err, neval, status, sorted(heap, key=lambda t: t[1])


_MESSAGES = {
    1: "The maximum number of subdivisions ({limit}) has been achieved.\n  If increasing the "
       "limit yields no improvement it is advised to analyze \n  the integrand in order to "
       "determine the difficulties.",
    2: "The occurrence of roundoff error is detected, which prevents \n  the requested "
       "tolerance from being achieved.  The error may be \n  underestimated.",
    5: "The integral is probably divergent, or slowly convergent.",
}


def quad(func: Callable[..., Any], a: float, b: float, args: tuple = (),
         full_output: int = 0, epsabs: float = 1.49e-08, epsrel: float = 1.49e-08,
         limit: int = 50, points: Any = None, weight: Any = None, wvar: Any = None,
         wopts: Any = None, maxp1: int = 50, limlst: int = 50,
         complex_func: bool = False) -> Any:
    """The integral of ``func(x, *args)`` from ``a`` to ``b`` (either may be infinite), as
    ``scipy.integrate.quad``: ``(value, abserr)``, or with ``full_output`` a third item, a
    dict with ``neval`` and ``last`` (and ``message`` when the tolerance was not met, as
    SciPy's fourth item). ``points`` are break points inside ``[a, b]``; ``complex_func``
    integrates real and imaginary parts. ``weight`` functions are not provided. Host
    computation.

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> from funcgrad.scipy.integrate import quad
        >>> value, err = quad(lambda x: fnp.exp(-x ** 2), -np.inf, np.inf)
        >>> round(value, 12) == round(float(np.sqrt(np.pi)), 12)
        True
    """
    if weight is not None:
        raise ValueError("quad: weight functions are not provided by funcgrad")
    if not isinstance(args, tuple):
        args = (args,)
    if complex_func:
        re = quad(lambda x, *a: fnp.real(func(x, *a)), a, b, args, full_output, epsabs,
                  epsrel, limit, points)
        im = quad(lambda x, *a: fnp.imag(func(x, *a)), a, b, args, full_output, epsabs,
                  epsrel, limit, points)
        value = re[0] + 1j * im[0]
        if full_output:
            return value, re[1] + 1j * im[1], {"real": re[2:], "imag": im[2:]}
        return value, re[1] + 1j * im[1]
    a, b = float(a), float(b)
    if limit < 1:
        raise ValueError("quad: limit must be at least 1")
    f = _scalar_caller(func, args)
    sign = 1.0
    if b < a:
        a, b, sign = b, a, -1.0
    if a == b:
        out = (0.0, 0.0)
        return (*out, {"neval": 0, "last": 0}) if full_output else out
    if math.isinf(a) or math.isinf(b):
        if points is not None:
            raise ValueError("Infinity inputs cannot be used with break points.")
        if math.isinf(a) and math.isinf(b):
            def g(t: float) -> float:
                x = (1.0 - t) / t
                return (f(x) + f(-x)) / (t * t)
        elif math.isinf(b):
            def g(t: float) -> float:
                return f(a + (1.0 - t) / t) / (t * t)
        else:
            def g(t: float) -> float:
                return f(b - (1.0 - t) / t) / (t * t)
        pieces = [(0.0, 1.0)]
        integrand = g
    else:
        cuts = sorted({a, b, *[float(p) for p in (points or ()) if a < float(p) < b]})
        pieces = list(zip(cuts[:-1], cuts[1:]))
        integrand = f
        if len(pieces) > limit:
            raise ValueError("quad: more break points than `limit` pieces")
    value, err, neval, status, heap = _adaptive(integrand, pieces, epsabs, epsrel, limit)
    value *= sign
    if status:
        msg = _MESSAGES[status].format(limit=limit)
        if not full_output:
            warnings.warn(msg, IntegrationWarning, stacklevel=2)
    if full_output:
        info = {"neval": neval, "last": len(heap),
                "alist": numpy.array([h[1] for h in heap]),
                "blist": numpy.array([h[2] for h in heap]),
                "rlist": numpy.array([h[3] for h in heap]),
                "elist": numpy.array([-h[0] for h in heap])}
        if status:
            return value, err, info, _MESSAGES[status].format(limit=limit)
        return value, err, info
    return value, err


def dblquad(func: Callable[..., Any], a: float, b: float, gfun: Any, hfun: Any,
            args: tuple = (), epsabs: float = 1.49e-08, epsrel: float = 1.49e-08
            ) -> tuple[float, float]:
    """The double integral of ``func(y, x, *args)`` for ``x`` in ``[a, b]`` and ``y`` from
    ``gfun(x)`` to ``hfun(x)`` (callables or constants), as ``scipy.integrate.dblquad``:
    nested :func:`quad` calls.

    Example:
        >>> from funcgrad.scipy.integrate import dblquad
        >>> round(dblquad(lambda y, x: x * y, 0.0, 1.0, 0.0, 2.0)[0], 12)
        1.0
    """
    lower = gfun if callable(gfun) else (lambda x: gfun)
    upper = hfun if callable(hfun) else (lambda x: hfun)

    def inner(x: float) -> float:
        return quad(func, lower(x), upper(x), args=(x, *args), epsabs=epsabs,
                    epsrel=epsrel)[0]

    return quad(inner, a, b, epsabs=epsabs, epsrel=epsrel)


def fixed_quad(func: Callable[..., Any], a: Any, b: Any, args: tuple = (), n: int = 5
               ) -> tuple[Any, None]:
    """The ``n``-point Gauss-Legendre estimate of the integral of ``func`` over ``[a, b]``, as
    ``scipy.integrate.fixed_quad``: ``(value, None)``. ``func`` is called once on the array
    of nodes (SciPy's contract), so this is differentiable in ``a``, ``b`` and ``args`` and
    works under ``jit``/``vmap``.

    Example:
        >>> import funcgrad.numpy as fnp
        >>> from funcgrad.scipy.integrate import fixed_quad
        >>> round(float(fixed_quad(lambda x: x ** 7, 0.0, 1.0, n=4)[0]), 14)
        0.125
    """
    if math.isinf(float(a) if not isinstance(a, Tracer) else 0.0) or \
            math.isinf(float(b) if not isinstance(b, Tracer) else 0.0):
        raise ValueError("Gaussian quadrature is only available for finite limits.")
    x, w = numpy.polynomial.legendre.leggauss(int(n))
    dev = get_default_device()
    for v in (a, b):
        if hasattr(v, "shape") and not isinstance(v, numpy.ndarray):
            dev = get_aval(v).device or dev
    x, w = device_put(x, dev), device_put(w, dev)
    y = (fnp.asarray(b) - fnp.asarray(a)) * (x + 1) / 2.0 + fnp.asarray(a)
    return (fnp.asarray(b) - fnp.asarray(a)) / 2.0 * fnp.sum(w * func(y, *args), axis=-1), None


def romb(y: Any, dx: float = 1.0, axis: int = -1, show: bool = False) -> Any:
    """Romberg integration of ``2**k + 1`` equally spaced samples along ``axis``, as
    ``scipy.integrate.romb``: Richardson extrapolation of the trapezoidal rule.
    Differentiable in ``y``; ``jit``/``vmap`` work.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.integrate import romb
        >>> float(romb(np.linspace(0.0, 1.0, 5) ** 3, dx=0.25))
        0.25
    """
    y = fnp.asarray(y)
    if not fnp.issubdtype(get_aval(y).dtype, fnp.inexact):
        y = y.astype(numpy.float64)
    y = fnp.moveaxis(y, axis, -1)
    nsamps = get_aval(y).shape[-1]
    n_int = nsamps - 1
    k = n_int.bit_length() - 1
    if n_int != 1 << k:
        raise ValueError("Number of samples must be one plus a non-negative power of 2.")
    h = float(dx) * n_int
    rows = [[(y[..., 0] + y[..., -1]) / 2.0 * h]]
    start = stop = step = n_int
    for i in range(1, k + 1):
        start >>= 1
        prev = rows[-1]
        h /= 2.0
        row = [0.5 * (prev[0] + 2 * h * fnp.sum(y[..., start:stop:step], axis=-1))]
        step >>= 1
        for j in range(1, i + 1):
            row.append(row[j - 1] + (row[j - 1] - prev[j - 1]) / ((1 << (2 * j)) - 1))
        rows.append(row)
    return rows[-1][-1]
