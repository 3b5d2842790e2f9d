"""Information theory and convex losses: xlogy, xlog1py, entr, rel_entr, kl_div, huber,
pseudo_huber."""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.ops.elementwise as _ew
from funcgrad.avals import get_aval
from funcgrad.scipy import _quiet
from funcgrad.scipy.special._common import _floats, _fnp, _like


def xlogy(x: Any, y: Any) -> Any:
    """``x * log(y)``, taken as 0 where ``x == 0`` (unless ``y`` is nan).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import xlogy
        >>> xlogy(np.array([0.0, 2.0]), np.array([0.0, np.e]))
        array([0., 2.])
    """
    x, y = _floats("xlogy", x, y)
    # Only where log(y) is not finite is the 0 forced: elsewhere x * log(y) is 0 by itself
    # and keeps its derivative log(y) in x.
    bad_y = _ew.logical_not(_ew.and_(_ew.gt(y, 0), _ew.is_finite(y)))
    zero = _ew.and_(_ew.and_(_ew.eq(x, 0), _ew.logical_not(_ew.is_nan(y))), bad_y)
    y_safe = _ew.select_n(zero, y, 1.0)
    # The quiet log: log(0) = -inf and log(-1) = nan silently, as SciPy and JAX.
    return _ew.select_n(zero, _ew.mul(x, _quiet.log(y_safe)), 0.0)


def xlog1py(x: Any, y: Any) -> Any:
    """``x * log1p(y)``, taken as 0 where ``x == 0`` (unless ``y`` is nan).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import xlog1py
        >>> xlog1py(np.array([0.0, 1.0]), np.array([-1.0, 0.0]))
        array([0., 0.])
    """
    x, y = _floats("xlog1py", x, y)
    bad_y = _ew.logical_not(_ew.and_(_ew.gt(y, -1.0), _ew.is_finite(y)))
    zero = _ew.and_(_ew.and_(_ew.eq(x, 0), _ew.logical_not(_ew.is_nan(y))), bad_y)
    y_safe = _ew.select_n(zero, y, 0.0)
    return _ew.select_n(zero, _ew.mul(x, _quiet.log1p(y_safe)), 0.0)


def entr(x: Any) -> Any:
    """Elementwise entropy ``-x log x`` for ``x > 0``, 0 at 0, ``-inf`` for ``x < 0``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import entr
        >>> entr(np.array([0.0, 1.0, -1.0]))
        array([  0.,  -0., -inf])
    """
    (x,) = _floats("entr", x)
    pos = _ew.gt(x, 0)
    x_safe = _ew.select_n(pos, 1.0, x)
    out = _ew.select_n(pos, -numpy.inf, _ew.neg(_ew.mul(x_safe, _ew.log(x_safe))))
    out = _ew.select_n(_ew.eq(x, 0), out, 0.0)
    return _ew.select_n(_ew.is_nan(x), out, x)


# ---------------------------------------------------------------------------------------------
# Divergences


def rel_entr(x: Any, y: Any) -> Any:
    """Elementwise relative entropy: ``x log(x / y)`` for ``x, y > 0``; 0 for ``x = 0,
    y >= 0``; ``inf`` otherwise.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import rel_entr
        >>> rel_entr(np.array([0.5, 0.0, 1.0]), np.array([0.25, 1.0, 0.0]))
        array([0.34657359, 0.        ,        inf])
    """
    x, y = _floats("rel_entr", x, y)
    fnp = _fnp()
    both = (x > 0) & (y > 0)
    x_s, y_s = fnp.where(both, x, 1.0), fnp.where(both, y, 1.0)
    out = fnp.where(both, x_s * _log_ratio(x_s, y_s), numpy.inf)
    out = fnp.where((x == 0) & (y >= 0), 0.0, out)
    return fnp.where(fnp.isnan(x) | fnp.isnan(y), numpy.nan, out)


def _log_ratio(x: Any, y: Any) -> Any:
    """``log(x / y)`` for ``x, y > 0`` as SciPy's rel_entr: ``log1p((x - y) / y)`` near 1 (x - y
    is exact there), ``log x - log y`` where ``x / y`` overflows or underflows."""
    fnp = _fnp()
    r = x / y
    near = (r > 0.5) & (r < 2.0)
    ranged = (r > numpy.finfo(get_aval(r).dtype).tiny) & (r < numpy.inf)
    r_s = fnp.where(ranged, r, 1.0)
    # Each branch on arguments that are safe where it is not chosen (no log1p(-1) or
    # inf / inf warnings from the branches thrown away).
    x_n, y_n = fnp.where(near, x, 1.0), fnp.where(near, y, 1.0)
    x_f, y_f = fnp.where(ranged, 1.0, x), fnp.where(ranged, 1.0, y)
    return fnp.where(near, fnp.log1p((x_n - y_n) / y_n),
                     fnp.where(ranged, fnp.log(r_s), fnp.log(x_f) - fnp.log(y_f)))


def kl_div(x: Any, y: Any) -> Any:
    """Elementwise ``x log(x / y) - x + y`` for ``x, y > 0``; ``y`` for ``x = 0, y >= 0``;
    ``inf`` otherwise.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import kl_div
        >>> kl_div(np.array([0.5, 0.0]), np.array([0.25, 2.0]))
        array([0.09657359, 2.        ])
    """
    x, y = _floats("kl_div", x, y)
    fnp = _fnp()
    both = (x > 0) & (y > 0)
    # An infinite x or y beside a positive other is inf - inf: nan (SciPy's), computed on
    # stand-ins without the warning.
    inf_lane = both & (fnp.isinf(x) | fnp.isinf(y))
    both = both & ~inf_lane
    x_s, y_s = fnp.where(both, x, 1.0), fnp.where(both, y, 1.0)
    # x / y may underflow to 0 or overflow to inf: the quiet log's value.
    out = fnp.where(both, x_s * _quiet.log(x_s / y_s) - x_s + y_s,
                    fnp.where(inf_lane, _like(x_s, numpy.nan), _like(x_s, numpy.inf)))
    out = fnp.where((x == 0) & (y >= 0), y, out)
    return fnp.where(fnp.isnan(x) | fnp.isnan(y), numpy.nan, out)


# ---------------------------------------------------------------------------------------------
# SciPy's elementwise conveniences: huber, pseudo_huber, softplus, cbrt, exp2, exp10, expm1,
# log1p (not in jax.scipy.special)


def huber(delta: Any, r: Any) -> Any:
    """Huber loss ``r**2 / 2`` for ``|r| <= delta``, ``delta (|r| - delta / 2)`` beyond; ``inf``
    for ``delta < 0``, as ``scipy.special.huber``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import huber
        >>> huber(1.0, np.array([-3.0, 0.5, 2.0]))
        array([2.5  , 0.125, 1.5  ])
    """
    delta, r = _floats("huber", delta, r)
    fnp = _fnp()
    ar = fnp.abs(r)
    inside = ar <= delta
    out = fnp.where(inside, 0.5 * r * r, delta * (ar - 0.5 * delta))
    return fnp.where(delta < 0, numpy.inf, out)


def pseudo_huber(delta: Any, r: Any) -> Any:
    """Pseudo-Huber loss ``delta**2 (sqrt(1 + (r / delta)**2) - 1)`` (smooth, ``r**2 / 2`` near
    0, ``delta |r|`` far out); 0 where ``delta`` or ``r`` is 0, ``inf`` for ``delta < 0``, as
    ``scipy.special.pseudo_huber``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import pseudo_huber
        >>> pseudo_huber(1.0, np.array([0.0, 2.0]))
        array([0.        , 1.23606798])
    """
    delta, r = _floats("pseudo_huber", delta, r)
    fnp = _fnp()
    zero = (delta == 0) | (r == 0)
    d = fnp.where(zero, 1.0, delta)   # the zero cases take no 0 / 0
    v = r / d
    # SciPy's form, accurate for small r / delta: expm1(log1p(v**2) / 2)
    out = fnp.where(zero, 0.0, d * d * fnp.expm1(0.5 * fnp.log1p(v * v)))
    return fnp.where(delta < 0, numpy.inf, out)
