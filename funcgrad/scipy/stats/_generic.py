"""SciPy's distribution methods beyond the densities, for every distribution module of
``funcgrad.scipy.stats``: ``mean``, ``var``, ``std``, ``stats`` (``moments="mv"``),
``entropy``, ``median``, ``interval``, ``support``, ``fit`` (the closed-form families), and
*freezing* -- calling a distribution
module, ``norm(loc=1.0, scale=2.0)``, gives an object whose methods take the parameters as
SciPy's frozen distributions do (``rv.pdf(x)``, ``rv.interval(0.95)``).

Moments and entropies are closed forms (per distribution in :data:`_TABLE`, of the
standardized distribution; ``loc`` and ``scale`` applied here), so they are differentiable
and jit-safe; ``median`` and ``interval`` go through the module's ``ppf``. A method whose
closed form a distribution lacks is simply absent from its module (AttributeError).

Example:
    >>> from funcgrad.scipy.stats import norm, t
    >>> lo, hi = t.interval(0.95, 9, loc=10.0, scale=0.5)
    >>> round(float(lo), 6), round(float(hi), 6)
    (8.868921, 11.131079)
    >>> rv = norm(loc=1.0, scale=2.0)
    >>> float(rv.mean()), float(rv.var()), round(float(rv.cdf(1.0)), 6)
    (1.0, 4.0, 0.5)
"""

from __future__ import annotations

import functools
import inspect
import math
import types
from collections.abc import Callable
from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.core import Tracer
from funcgrad.scipy import special as _sp
from funcgrad.scipy._device import keep_host_inputs_on_host
from funcgrad.scipy.stats._util import promote

__all__ = ["rv_frozen", "install"]

_EULER = 0.57721566490153286061
_INF = numpy.inf
_NAN = numpy.nan


def _where(cond: Any, a: Any, b: Any) -> Any:
    return fnp.where(cond, a, b)


def _t_mv(df: Any) -> tuple[Any, Any]:
    dfs = fnp.where(df > 2, df, 3.0)
    return (_where(df > 1, 0.0, _INF),  # SciPy: inf for df <= 1
            _where(df > 2, dfs / (dfs - 2.0), _where(df > 1, _INF, _NAN)))


def _t_entropy(df: Any) -> Any:
    h = 0.5 * (df + 1.0)
    return (h * (_sp.digamma(h) - _sp.digamma(0.5 * df))
            + 0.5 * fnp.log(df) + _sp.betaln(0.5 * df, 0.5))


def _f_mv(d1: Any, d2: Any) -> tuple[Any, Any]:
    d2m = fnp.where(d2 > 2, d2, 3.0)
    d2v = fnp.where(d2 > 4, d2, 5.0)
    var = 2.0 * d2v ** 2 * (d1 + d2v - 2.0) / (d1 * (d2v - 2.0) ** 2 * (d2v - 4.0))
    return _where(d2 > 2, d2m / (d2m - 2.0), _INF), _where(d2 > 4, var, _INF)


def _f_entropy(d1: Any, d2: Any) -> Any:
    h1, h2, hs = 0.5 * d1, 0.5 * d2, 0.5 * (d1 + d2)
    return (fnp.log(d2) - fnp.log(d1) + _sp.betaln(h1, h2) + (1.0 - h1) * _sp.digamma(h1)
            - (1.0 + h2) * _sp.digamma(h2) + hs * _sp.digamma(hs))


def _pareto_mv(b: Any) -> tuple[Any, Any]:
    b1 = fnp.where(b > 1, b, 2.0)
    b2 = fnp.where(b > 2, b, 3.0)
    return (_where(b > 1, b1 / (b1 - 1.0), _INF),
            _where(b > 2, b2 / ((b2 - 1.0) ** 2 * (b2 - 2.0)), _INF))


def _beta_mv(a: Any, b: Any) -> tuple[Any, Any]:
    s = a + b
    return a / s, a * b / (s * s * (s + 1.0))


def _beta_entropy(a: Any, b: Any) -> Any:
    return (_sp.betaln(a, b) - (a - 1.0) * _sp.digamma(a) - (b - 1.0) * _sp.digamma(b)
            + (a + b - 2.0) * _sp.digamma(a + b))


def _truncnorm_mv(a: Any, b: Any) -> tuple[Any, Any]:
    phi_a = fnp.exp(-0.5 * a * a) / math.sqrt(2.0 * math.pi)
    phi_b = fnp.exp(-0.5 * b * b) / math.sqrt(2.0 * math.pi)
    # the mass from the nearer tail (both bounds above 0: upper tails, keeping digits)
    upper = a > 0
    z = fnp.where(upper, _sp.ndtr(-a) - _sp.ndtr(-b), _sp.ndtr(b) - _sp.ndtr(a))
    aphi = fnp.where(fnp.isfinite(a), a * phi_a, 0.0)
    bphi = fnp.where(fnp.isfinite(b), b * phi_b, 0.0)
    m = (phi_a - phi_b) / z
    return m, 1.0 + (aphi - bphi) / z - m * m


def _weibull_mv(c: Any) -> tuple[Any, Any]:
    g1 = fnp.exp(_sp.gammaln(1.0 + 1.0 / c))
    return g1, fnp.exp(_sp.gammaln(1.0 + 2.0 / c)) - g1 * g1


def _gennorm_var(beta: Any) -> Any:
    return fnp.exp(_sp.gammaln(3.0 / beta) - _sp.gammaln(1.0 / beta))


def _const(v: float) -> Callable[..., Any]:
    return lambda *shapes: v


# name -> (mean and variance of the standardized distribution, its entropy or None, support)
# (continuous: shapes then loc/scale; discrete: shapes then loc, no scale).
_TABLE: dict[str, tuple[Callable[..., Any], Callable[..., Any] | None,
                        Callable[..., tuple[Any, Any]]]] = {
    "norm": (lambda: (0.0, 1.0), _const(0.5 * math.log(2.0 * math.pi * math.e)),
             lambda: (-_INF, _INF)),
    "t": (_t_mv, _t_entropy, lambda df: (-_INF, _INF)),
    "chi2": (lambda k: (k, 2.0 * k),
             lambda k: (0.5 * k + math.log(2.0) + _sp.gammaln(0.5 * k)
                        + (1.0 - 0.5 * k) * _sp.digamma(0.5 * k)),
             lambda k: (0.0, _INF)),
    "gamma": (lambda a: (a, a), lambda a: a + _sp.gammaln(a) + (1.0 - a) * _sp.digamma(a),
              lambda a: (0.0, _INF)),
    "beta": (_beta_mv, _beta_entropy, lambda a, b: (0.0, 1.0)),
    "lognorm": (lambda s: (fnp.exp(0.5 * s * s), fnp.expm1(s * s) * fnp.exp(s * s)),
                lambda s: 0.5 * (1.0 + math.log(2.0 * math.pi)) + fnp.log(s),
                lambda s: (0.0, _INF)),
    "expon": (lambda: (1.0, 1.0), _const(1.0), lambda: (0.0, _INF)),
    "laplace": (lambda: (0.0, 2.0), _const(1.0 + math.log(2.0)), lambda: (-_INF, _INF)),
    "logistic": (lambda: (0.0, math.pi ** 2 / 3.0), _const(2.0), lambda: (-_INF, _INF)),
    "cauchy": (lambda: (_NAN, _NAN), _const(math.log(4.0 * math.pi)), lambda: (-_INF, _INF)),
    "uniform": (lambda: (0.5, 1.0 / 12.0), _const(0.0), lambda: (0.0, 1.0)),
    "f": (_f_mv, _f_entropy, lambda d1, d2: (0.0, _INF)),
    "pareto": (_pareto_mv, lambda b: 1.0 / b + 1.0 - fnp.log(b), lambda b: (1.0, _INF)),
    "gumbel_r": (lambda: (_EULER, math.pi ** 2 / 6.0), _const(_EULER + 1.0),
                 lambda: (-_INF, _INF)),
    "gumbel_l": (lambda: (-_EULER, math.pi ** 2 / 6.0), _const(_EULER + 1.0),
                 lambda: (-_INF, _INF)),
    "gennorm": (lambda beta: (0.0 * beta, _gennorm_var(beta)),
                lambda beta: 1.0 / beta - fnp.log(beta) + math.log(2.0)
                + _sp.gammaln(1.0 / beta),
                lambda beta: (-_INF, _INF)),
    "halfnorm": (lambda: (math.sqrt(2.0 / math.pi), 1.0 - 2.0 / math.pi),
                 _const(0.5 * math.log(math.pi / 2.0) + 0.5), lambda: (0.0, _INF)),
    "rayleigh": (lambda: (math.sqrt(math.pi / 2.0), (4.0 - math.pi) / 2.0),
                 _const(_EULER / 2.0 + 1.0 - 0.5 * math.log(2.0)), lambda: (0.0, _INF)),
    "weibull_min": (_weibull_mv, lambda c: _EULER * (1.0 - 1.0 / c) - fnp.log(c) + 1.0,
                    lambda c: (0.0, _INF)),
    "truncnorm": (_truncnorm_mv, None, lambda a, b: (a, b)),
    "wrapcauchy": (None, lambda c: fnp.log(2.0 * math.pi * (1.0 - c * c)),
                   lambda c: (0.0, 2.0 * math.pi)),
    "vonmises": (None, None, lambda kappa: (-_INF, _INF)),
    # discrete
    "poisson": (lambda mu: (mu, mu), None, lambda mu: (0.0, _INF)),
    "binom": (lambda n, p: (n * p, n * p * (1.0 - p)), None, lambda n, p: (0.0, n)),
    "nbinom": (lambda n, p: (n * (1.0 - p) / p, n * (1.0 - p) / (p * p)), None,
               lambda n, p: (0.0, _INF)),
    "geom": (lambda p: (1.0 / p, (1.0 - p) / (p * p)), None, lambda p: (1.0, _INF)),
    "bernoulli": (lambda p: (p, p * (1.0 - p)), None, lambda p: (0.0, 1.0)),
    "betabinom": (lambda n, a, b: (n * a / (a + b),
                                   n * a * b * (a + b + n) / ((a + b) ** 2 * (a + b + 1.0))),
                  None, lambda n, a, b: (0.0, n)),
}


def _shape_names(module: types.ModuleType) -> tuple[list[str], bool]:
    """(the shape parameters' names, whether the distribution has a scale) from the
    signature of its cdf (or logpdf / logpmf)."""
    for fname in ("cdf", "logpdf", "logpmf"):
        f = getattr(module, fname, None)
        if f is not None:
            params = list(inspect.signature(f).parameters)[1:]
            return [p for p in params if p not in ("loc", "scale")], "scale" in params
    raise TypeError(f"{module.__name__} has no cdf/logpdf/logpmf")


def _bind(module: types.ModuleType, name: str, args: tuple, kwds: dict
          ) -> tuple[list[Any], Any, Any]:
    """(shapes, loc, scale) from SciPy-style ``*args, **kwds`` (shapes positional or by
    name, then loc and scale)."""
    shapes, has_scale = _shape_names(module)
    names = [*shapes, "loc", "scale"] if has_scale else [*shapes, "loc"]
    if len(args) > len(names):
        raise TypeError(f"{module.__name__.rsplit('.', 1)[-1]}.{name}: takes at most "
                        f"{len(names)} parameters ({', '.join(names)}), got {len(args)}")
    values = dict(zip(names, args))
    for k, v in kwds.items():
        if k not in names:
            raise TypeError(f"{module.__name__.rsplit('.', 1)[-1]}.{name}: unexpected "
                            f"parameter {k!r} (parameters: {', '.join(names)})")
        if k in values:
            raise TypeError(f"{module.__name__.rsplit('.', 1)[-1]}.{name}: got multiple "
                            f"values for {k!r}")
        values[k] = v
    missing = [s for s in shapes if s not in values]
    if missing:
        raise TypeError(f"{module.__name__.rsplit('.', 1)[-1]}.{name}: missing shape "
                        f"parameter(s) {', '.join(missing)}")
    return [values[s] for s in shapes], values.get("loc", 0.0), values.get("scale", 1.0)


def _valid(module: types.ModuleType, shapes: list[Any], loc: Any, scale: Any) -> Any:
    """Where the parameters are valid: the module's own check, read off its logpdf/logpmf
    at a point (nan there exactly when a parameter is invalid)."""
    f = getattr(module, "logpdf", None) or module.logpmf
    _, has_scale = _shape_names(module)
    lo, _hi = _TABLE[module.__name__.rsplit(".", 1)[-1]][2](*shapes)
    probe = fnp.where(fnp.isfinite(lo), lo, 0.0)
    kw = {"loc": 0.0, "scale": 1.0} if has_scale else {"loc": 0.0}
    out = f(probe, *shapes, **kw)
    return ~fnp.isnan(out) & (scale > 0)


def mean(module: types.ModuleType, *args: Any, **kwds: Any) -> Any:
    """The mean: ``loc + scale * m`` with ``m`` the standardized distribution's (nan for
    invalid parameters, inf/nan where SciPy's is).

    Example:
        >>> from funcgrad.scipy.stats import gamma
        >>> float(gamma.mean(2.5, scale=2.0))
        5.0
    """
    shapes, loc, scale = _bind(module, "mean", args, kwds)
    name = module.__name__.rsplit(".", 1)[-1]
    shapes_p = promote(f"{name}.mean", *shapes, loc, scale)
    *shapes, loc, scale = shapes_p
    m, _ = _TABLE[name][0](*shapes)
    return fnp.where(_valid(module, shapes, loc, scale), loc + scale * m, numpy.nan)


def var(module: types.ModuleType, *args: Any, **kwds: Any) -> Any:
    """The variance ``scale**2 * v``.

    Example:
        >>> from funcgrad.scipy.stats import t
        >>> round(float(t.var(5)), 12)
        1.666666666667
    """
    shapes, loc, scale = _bind(module, "var", args, kwds)
    name = module.__name__.rsplit(".", 1)[-1]
    *shapes, loc, scale = promote(f"{name}.var", *shapes, loc, scale)
    _, v = _TABLE[name][0](*shapes)
    return fnp.where(_valid(module, shapes, loc, scale), scale * scale * v, numpy.nan)


def std(module: types.ModuleType, *args: Any, **kwds: Any) -> Any:
    """The standard deviation.

    Example:
        >>> from funcgrad.scipy.stats import expon
        >>> float(expon.std(scale=3.0))
        3.0
    """
    return fnp.sqrt(var(module, *args, **kwds))


def stats(module: types.ModuleType, *args: Any, moments: str = "mv", **kwds: Any) -> Any:
    """SciPy's ``stats``: the requested moments in order, of ``"m"`` (mean) and ``"v"``
    (variance); one moment alone is returned bare, as SciPy.

    Example:
        >>> from funcgrad.scipy.stats import binom
        >>> m, v = binom.stats(10, 0.3)
        >>> float(m), round(float(v), 12)
        (3.0, 2.1)
    """
    name = module.__name__.rsplit(".", 1)[-1]
    if not moments or any(c not in "mv" for c in moments):
        raise ValueError(f"{name}.stats: moments must be made of 'm' and 'v' (skewness and "
                         f"kurtosis are not available), got {moments!r}")
    out = tuple(mean(module, *args, **kwds) if c == "m" else var(module, *args, **kwds)
                for c in moments)
    return out[0] if len(out) == 1 else out


def entropy(module: types.ModuleType, *args: Any, **kwds: Any) -> Any:
    """The differential entropy: the standardized one plus ``log(scale)``.

    Example:
        >>> from funcgrad.scipy.stats import norm
        >>> round(float(norm.entropy(scale=2.0)), 12)
        2.112085713765
    """
    shapes, loc, scale = _bind(module, "entropy", args, kwds)
    name = module.__name__.rsplit(".", 1)[-1]
    *shapes, loc, scale = promote(f"{name}.entropy", *shapes, loc, scale)
    h = _TABLE[name][1](*shapes) + fnp.log(fnp.where(scale > 0, scale, 1.0))
    return fnp.where(_valid(module, shapes, loc, scale), h, numpy.nan)


def median(module: types.ModuleType, *args: Any, **kwds: Any) -> Any:
    """The median: ``ppf(0.5, ...)``.

    Example:
        >>> from funcgrad.scipy.stats import expon
        >>> round(float(expon.median()), 12)
        0.69314718056
    """
    return module.ppf(0.5, *args, **kwds)


def interval(module: types.ModuleType, confidence: Any, *args: Any, **kwds: Any) -> Any:
    """The central interval holding probability ``confidence``:
    ``(ppf((1 - c) / 2), ppf((1 + c) / 2))`` (nan outside ``[0, 1]``), as SciPy.

    Example:
        >>> from funcgrad.scipy.stats import norm
        >>> lo, hi = norm.interval(0.95)
        >>> round(float(lo), 6), round(float(hi), 6)
        (-1.959964, 1.959964)
    """
    c = fnp.asarray(confidence)
    ok = (c >= 0) & (c <= 1)
    c = fnp.where(ok, c, numpy.nan)
    return (module.ppf((1.0 - c) / 2.0, *args, **kwds),
            module.ppf((1.0 + c) / 2.0, *args, **kwds))


def support(module: types.ModuleType, *args: Any, **kwds: Any) -> Any:
    """The support's ends ``(a, b)``, after ``loc`` and ``scale``.

    Example:
        >>> from funcgrad.scipy.stats import uniform
        >>> tuple(float(v) for v in uniform.support(loc=1.0, scale=2.0))
        (1.0, 3.0)
    """
    shapes, loc, scale = _bind(module, "support", args, kwds)
    name = module.__name__.rsplit(".", 1)[-1]
    *shapes, loc, scale = promote(f"{name}.support", *shapes, loc, scale)
    lo, hi = _TABLE[name][2](*shapes)
    ok = _valid(module, shapes, loc, scale)
    return (fnp.where(ok, loc + scale * lo, numpy.nan), fnp.where(ok, loc + scale * hi,
                                                                   numpy.nan))


def _fit_norm(x: Any, floc: Any, fscale: Any) -> tuple[Any, Any]:
    loc = fnp.mean(x) if floc is None else fnp.asarray(floc, dtype=x.dtype)
    scale = fnp.sqrt(fnp.mean((x - loc) ** 2)) if fscale is None else fscale
    return loc, scale


def _fit_expon(x: Any, floc: Any, fscale: Any) -> tuple[Any, Any]:
    loc = fnp.min(x) if floc is None else fnp.asarray(floc, dtype=x.dtype)
    if floc is not None and not isinstance(x, Tracer) and bool(fnp.min(x) < loc):
        raise ValueError("expon.fit: all data must be >= floc")
    scale = fnp.mean(x) - loc if fscale is None else fscale
    return loc, scale


def _fit_uniform(x: Any, floc: Any, fscale: Any) -> tuple[Any, Any]:
    lo, hi = fnp.min(x), fnp.max(x)
    if floc is None and fscale is None:
        return lo, hi - lo
    if floc is not None and fscale is None:
        return fnp.asarray(floc, dtype=x.dtype), hi - floc
    if floc is None:
        return (lo + hi - fscale) / 2.0, fscale
    return floc, fscale


def _fit_laplace(x: Any, floc: Any, fscale: Any) -> tuple[Any, Any]:
    loc = fnp.median(x) if floc is None else fnp.asarray(floc, dtype=x.dtype)
    scale = fnp.mean(fnp.abs(x - loc)) if fscale is None else fscale
    return loc, scale


_FIT = {"norm": _fit_norm, "expon": _fit_expon, "uniform": _fit_uniform,
        "laplace": _fit_laplace}


def fit(module: types.ModuleType, data: Any, *, floc: Any = None, fscale: Any = None
        ) -> tuple[Any, Any]:
    """The maximum-likelihood ``(loc, scale)`` of ``data`` (flattened), with ``floc`` /
    ``fscale`` held fixed when given, as SciPy's ``fit`` for the families with closed forms
    (``norm``: mean and the ``ddof=0`` deviation; ``expon``: minimum and mean excess;
    ``uniform``: the range; ``laplace``: median and mean absolute deviation).
    Differentiable in the data.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import norm
        >>> loc, scale = norm.fit(np.array([1.0, 2.0, 3.0, 4.0]))
        >>> float(loc), round(float(scale), 12)
        (2.5, 1.11803398875)
    """
    name = module.__name__.rsplit(".", 1)[-1]
    x = fnp.reshape(fnp.asarray(data), (-1,))
    if not fnp.issubdtype(x.dtype, fnp.inexact):
        x = x.astype(numpy.float64)
    if x.shape[0] == 0:
        raise ValueError(f"{name}.fit: data must not be empty")
    if floc is not None and fscale is not None:
        raise ValueError("All parameters fixed. There is nothing to optimize.")
    if fscale is not None and not float(fscale) > 0:
        raise ValueError(f"{name}.fit: fscale must be positive, got {fscale!r}")
    return _FIT[name](x, floc, fscale)


class rv_frozen:  # noqa: N801 (SciPy's name)
    """A distribution with its parameters fixed, as SciPy's frozen distributions:
    ``norm(1.0, 2.0).pdf(x)`` is ``norm.pdf(x, 1.0, 2.0)``. ``dist`` is the distribution
    module, ``args``/``kwds`` the parameters.

    Example:
        >>> from funcgrad.scipy.stats import gamma
        >>> rv = gamma(2.0, scale=3.0)
        >>> round(float(rv.pdf(1.0)), 12), float(rv.mean())
        (0.079614590064, 6.0)
    """

    def __init__(self, dist: types.ModuleType, *args: Any, **kwds: Any) -> None:
        if dist.__name__.rsplit(".", 1)[-1] in _TABLE:
            _bind(dist, "freeze", args, kwds)  # bad parameters fail here, not at first use
        self.dist = dist
        self.args = args
        self.kwds = kwds

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        f = getattr(self.dist, name)  # AttributeError names the missing method
        if not callable(f):
            return f
        return lambda *a, **k: f(*a, *self.args, **{**self.kwds, **k})

    def __repr__(self) -> str:
        params = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwds.items()]
        return f"{self.dist.__name__.rsplit('.', 1)[-1]}({', '.join(params)})"


class _DistributionModule(types.ModuleType):
    """A distribution module that freezes when called (``norm(loc, scale)``)."""

    def __call__(self, *args: Any, **kwds: Any) -> rv_frozen:
        return rv_frozen(self, *args, **kwds)


_GENERIC = {"mean": 0, "var": 0, "std": 0, "stats": 0, "entropy": 1, "median": None,
            "interval": None, "support": 2, "fit": "fit"}


def install(module: types.ModuleType) -> None:
    """Give ``module`` the methods above that it lacks and its table entry supports, and
    make it callable (freezing)."""
    name = module.__name__.rsplit(".", 1)[-1]
    entry = _TABLE.get(name)
    extra = []
    for meth, column in _GENERIC.items():
        if hasattr(module, meth):
            continue
        if column == "fit":
            if name not in _FIT:
                continue
        elif column is None:
            if not hasattr(module, "ppf"):
                continue
        elif entry is None or entry[column] is None:
            continue
        generic = globals()[meth]
        f = functools.wraps(generic)(functools.partial(generic, module))
        f.__doc__ = f"SciPy's ``{name}.{meth}``: see :func:`funcgrad.scipy.stats._generic.{meth}`."
        f.__module__ = __name__  # documented (and doctested) once, here
        setattr(module, meth, f)
        extra.append(meth)
    module.__all__ = [*module.__all__, *extra]
    # NumPy inputs compute on the host whatever the default device (funcgrad.scipy._device)
    keep_host_inputs_on_host(vars(module), module.__all__)
    module.__class__ = _DistributionModule
