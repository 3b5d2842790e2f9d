"""Descriptive statistics of ``scipy.stats``: ``mode``, ``rankdata`` and ``sem`` (which
``jax.scipy.stats`` has too), ``entropy``, ``zscore``, ``skew``, ``kurtosis`` and
``pearsonr`` (SciPy's only).

Each works along one axis: the axis is moved last and a function of one 1-D row is mapped
over the others with ``vmap`` (so they also work under ``jit`` and ``vmap``). Ranks and modes
are piecewise constant (no derivative); ``sem`` is differentiable.

Example:
    >>> import numpy as np
    >>> from funcgrad.scipy.stats import rankdata
    >>> rankdata(np.array([10, 30, 20, 20]))
    array([1. , 4. , 2.5, 2.5])
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy

import funcgrad.numpy as fnp
from funcgrad import tree_util
from funcgrad.api_vmap import vmap
from funcgrad.avals import get_aval
from funcgrad.core import Tracer
from funcgrad.ops.elementwise import stop_gradient
from funcgrad.scipy import _quiet as _q
from funcgrad.scipy import special as _special
from funcgrad.scipy.stats import beta as _beta

__all__ = ["ModeResult", "mode", "rankdata", "sem", "entropy", "zscore", "skew", "kurtosis",
           "PearsonRResult", "pearsonr"]

_NAN_POLICIES = ("propagate", "omit", "raise")
_RANK_METHODS = ("average", "min", "max", "dense", "ordinal")


class ConfidenceInterval(NamedTuple):
    """A confidence interval: its lower and upper ends."""

    low: Any
    high: Any


class ModeResult(NamedTuple):
    """The result of :func:`mode`: the modal values and how often each occurs."""

    mode: Any
    count: Any


def _check_nan_policy(name: str, a: Any, nan_policy: str) -> None:
    if nan_policy not in _NAN_POLICIES:
        raise ValueError(f"{name}: nan_policy must be one of {_NAN_POLICIES}, got "
                         f"{nan_policy!r}")
    if nan_policy != "raise" or not fnp.issubdtype(get_aval(a).dtype, fnp.inexact):
        return
    if isinstance(a, Tracer):
        raise ValueError(f"{name}: nan_policy='raise' needs concrete values (it cannot look "
                         "for nans in a traced array); check outside jit/vmap/grad, or use "
                         "'propagate' or 'omit'")
    if bool(fnp.any(fnp.isnan(a))):
        raise ValueError(f"{name}: the input contains nan values (nan_policy='raise')")


def _rows(a: Any, axis: int | None) -> tuple[Any, tuple[int, ...]]:
    """``a`` as ``(rows, n)`` with ``axis`` last (flattened for ``axis=None``) and the
    shape of the other axes."""
    if axis is None:
        return fnp.reshape(a, (1, a.size)), ()
    a = fnp.moveaxis(a, axis, -1)
    batch = tuple(a.shape[:-1])
    return fnp.reshape(a, (int(numpy.prod(batch)), a.shape[-1])), batch


def _norm_axis(name: str, axis: Any, ndim: int) -> int | None:
    if axis is None:
        return None
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name}: axis {axis} is out of bounds for an array of dimension "
                         f"{ndim}")
    return axis % ndim


def _mode_row(row: Any, omit: bool) -> tuple[Any, Any]:
    srt = fnp.sort(row)
    counts = fnp.searchsorted(srt, srt, side="right") - fnp.searchsorted(srt, srt, side="left")
    if omit:
        counts = fnp.where(fnp.isnan(srt), -1, counts)
    i = fnp.argmax(counts)  # the first maximum: the smallest of the most common values
    count = counts[i]
    if omit:  # an all-nan row: nan, count 0
        return fnp.where(count < 0, numpy.nan, srt[i]), fnp.maximum(count, 0)
    return srt[i], count


def mode(a: Any, axis: Any = 0, nan_policy: str = "propagate", keepdims: bool = False
         ) -> ModeResult:
    """The most common value along ``axis`` (the smallest of equally common ones) and its
    count, as ``scipy.stats.mode``: ``axis=None`` looks at every element. With
    ``nan_policy="propagate"`` nan counts as a value (as SciPy); ``"omit"`` leaves nans out.
    Values keep ``a``'s dtype, counts are int64; an empty axis gives nan with count 0 (a
    float 0.0 where the result is a scalar, as SciPy 1.18).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import mode
        >>> mode(np.array([[1, 2, 1, 3], [3, 1, 3, 2], [1, 2, 2, 3]]))
        ModeResult(mode=array([1, 2, 1, 3]), count=array([2, 2, 1, 2]))
    """
    a = fnp.asarray(a)
    if get_aval(a).dtype.kind == "c":
        raise TypeError("mode: complex input is not supported")
    _check_nan_policy("mode", a, nan_policy)
    a = fnp.atleast_1d(a)
    axis = _norm_axis("mode", axis, a.ndim)
    rows, batch = _rows(stop_gradient(a), axis)
    if axis is None:
        shape = (1,) * a.ndim if keepdims else ()
    elif keepdims:
        shape = batch[:axis] + (1,) + batch[axis:]
    else:
        shape = batch
    if a.size == 0:
        # As SciPy (1.18): nan modes with counts 0, int64 counts unless the result is a
        # scalar (then the float 0.0 of SciPy's nan result). SciPy before 1.18 gave float
        # counts for every empty input.
        vals = fnp.full(rows.shape[:-1], numpy.nan)
        counts = fnp.zeros(rows.shape[:-1], fnp.int64 if shape else fnp.float64)
    else:
        omit = nan_policy == "omit" and fnp.issubdtype(a.dtype, fnp.inexact)
        vals, counts = vmap(lambda r: _mode_row(r, omit))(rows)
        counts = counts.astype(fnp.int64)
    return ModeResult(fnp.reshape(vals, shape), fnp.reshape(counts, shape))


def _rank_row(row: Any, method: str, omit: bool) -> Any:
    srt = fnp.sort(row)
    if method == "ordinal":
        order = fnp.argsort(row, stable=True)
        ranks = fnp.argsort(order, stable=True).astype(fnp.float64) + 1.0
    else:
        lo = fnp.searchsorted(srt, row, side="left")
        hi = fnp.searchsorted(srt, row, side="right")
        if method == "min":
            ranks = lo + 1.0
        elif method == "max":
            ranks = hi + 0.0
        elif method == "average":
            ranks = 0.5 * (lo + 1.0 + hi)
        else:  # dense
            new = fnp.concatenate([fnp.ones((1,), bool), srt[1:] != srt[:-1]])
            ranks = fnp.cumsum(new)[lo] + 0.0
    ranks = ranks.astype(fnp.float64)
    nan = fnp.isnan(row)
    if omit:
        return fnp.where(nan, numpy.nan, ranks)
    return fnp.where(fnp.any(nan), numpy.nan, ranks)


def rankdata(a: Any, method: str = "average", *, axis: Any = None,
             nan_policy: str = "propagate") -> Any:
    """Ranks of the data, from 1, as ``scipy.stats.rankdata``: ties get the ``"average"``,
    ``"min"``, ``"max"``, ``"dense"`` rank, or ``"ordinal"`` (order of appearance).
    ``axis=None`` ranks the flattened array (a 1-D result). A row with a nan is all nan
    (``nan_policy="propagate"``); ``"omit"`` ranks the other entries and leaves nan at the
    nans. Ranks are float64 for every method (SciPy gives int64 for the integer methods when
    there is no nan; JAX its default float).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import rankdata
        >>> rankdata(np.array([[0, 2], [3, 2]]), method="min", axis=1)
        array([[1., 2.],
               [2., 1.]])
    """
    if method not in _RANK_METHODS:
        raise ValueError(f"rankdata: unknown method {method!r}; expected one of "
                         f"{_RANK_METHODS}")
    a = fnp.asarray(a)
    if get_aval(a).dtype.kind == "c":
        raise TypeError("rankdata: complex input is not supported")
    _check_nan_policy("rankdata", a, nan_policy)
    if a.ndim == 0 and axis is None:
        a = fnp.reshape(a, (1,))
    axis = _norm_axis("rankdata", axis, max(a.ndim, 1))
    a = fnp.atleast_1d(stop_gradient(a))
    if not fnp.issubdtype(a.dtype, fnp.inexact):
        # Integers and bools have no nan; compare them exactly in their own type.
        omit = False
    else:
        omit = nan_policy == "omit"
    rows, batch = _rows(a, axis)
    if rows.shape[-1] == 0:
        ranks = fnp.zeros(rows.shape, fnp.float64)
    else:
        ranks = vmap(lambda r: _rank_row(r, method, omit))(rows)
    if axis is None:
        return fnp.reshape(ranks, (-1,))
    return fnp.moveaxis(fnp.reshape(ranks, batch + (rows.shape[-1],)), -1, axis)


def sem(a: Any, axis: Any = 0, ddof: int = 1, nan_policy: str = "propagate", *,
        keepdims: bool = False) -> Any:
    """Standard error of the mean, ``std(a, ddof=ddof) / sqrt(n)`` along ``axis`` (all
    elements for ``axis=None``), as ``scipy.stats.sem``; ``nan_policy="omit"`` leaves nans
    out (``n`` counts the rest). float32 stays float32, integers give float64.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import sem
        >>> round(float(sem(np.array([2, 4, 1, 1, 3, 4, 4, 2, 3]))), 12)
        0.408248290464
    """
    a = fnp.asarray(a)
    _check_nan_policy("sem", a, nan_policy)
    if not fnp.issubdtype(a.dtype, fnp.inexact):
        a = a.astype(fnp.float64)
    if a.ndim == 0:
        a = fnp.reshape(a, (1,))
    axis = _norm_axis("sem", axis, a.ndim)
    if nan_policy == "omit":
        n = fnp.sum(~fnp.isnan(a), axis=axis, keepdims=keepdims).astype(a.dtype)
        return fnp.nanstd(a, axis=axis, ddof=ddof, keepdims=keepdims) / fnp.sqrt(n)
    n = a.size if axis is None else a.shape[axis]
    return fnp.std(a, axis=axis, ddof=ddof, keepdims=keepdims) / numpy.sqrt(n).astype(a.dtype)


def _float_array(a: Any) -> Any:
    a = fnp.asarray(a)
    if not fnp.issubdtype(a.dtype, fnp.inexact):
        a = a.astype(fnp.float64)
    if fnp.issubdtype(a.dtype, fnp.complexfloating):
        raise ValueError("complex data is not supported")
    return a


def entropy(pk: Any, qk: Any = None, base: float | None = None, axis: int = 0, *,
            nan_policy: str = "propagate", keepdims: bool = False) -> Any:
    """Shannon entropy ``-sum(pk log pk)`` of the distribution ``pk`` along ``axis``, or with
    ``qk`` the relative entropy (Kullback-Leibler divergence) ``sum(pk log(pk / qk))``, as
    ``scipy.stats.entropy``: ``pk`` and ``qk`` are normalised to sum to 1 first (so counts
    work), ``base`` picks the logarithm (natural by default). ``nan_policy="omit"`` leaves out
    the entries where ``pk`` or ``qk`` is nan. Differentiable in ``pk`` and ``qk``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import entropy
        >>> float(entropy(np.array([1, 1]), base=2))                 # one fair coin: 1 bit
        1.0
        >>> round(float(entropy(np.array([0.5, 0.5]), np.array([0.9, 0.1]))), 12)
        0.510825623766
    """
    if base is not None and not base > 0:
        raise ValueError(f"entropy: base must be a positive number or None, got {base!r}")
    pk = _float_array(pk)
    _check_nan_policy("entropy", pk, nan_policy)
    if qk is not None:
        qk = _float_array(qk)
        _check_nan_policy("entropy", qk, nan_policy)
        pk, qk = fnp.broadcast_arrays(pk, qk)
    axis = _norm_axis("entropy", axis, pk.ndim)
    if nan_policy == "omit":
        keep = ~fnp.isnan(pk) if qk is None else ~(fnp.isnan(pk) | fnp.isnan(qk))
        # an omitted entry has no mass: it adds 0 to the sums and to the entropy
        pk = fnp.where(keep, pk, 0.0)
        qk = None if qk is None else fnp.where(keep, qk, 0.0)
    pk = pk / fnp.sum(pk, axis=axis, keepdims=True)
    if qk is None:
        vec = _special.entr(pk)
    else:
        qk = qk / fnp.sum(qk, axis=axis, keepdims=True)
        vec = _special.rel_entr(pk, qk)
    s = fnp.sum(vec, axis=axis, keepdims=keepdims)
    return s / numpy.log(base) if base is not None else s


def zscore(a: Any, axis: Any = 0, ddof: int = 0, nan_policy: str = "propagate") -> Any:
    """``(a - mean) / std`` along ``axis`` (all elements for ``axis=None``), as
    ``scipy.stats.zscore``; ``nan_policy="omit"`` takes the mean and deviation of the other
    entries (nan entries stay nan). A constant slice gives nan (0 / 0).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import zscore
        >>> zscore(np.array([1.0, 2.0, 3.0]))
        array([-1.22474487,  0.        ,  1.22474487])
    """
    a = _float_array(a)
    return _standardized("zscore", a, a, axis, ddof, nan_policy)


def zmap(scores: Any, compare: Any, axis: Any = 0, ddof: int = 0,
         nan_policy: str = "propagate") -> Any:
    """``(scores - mean(compare)) / std(compare)`` along ``axis``, as ``scipy.stats.zmap``
    (``nan_policy="omit"`` ignores nan entries of ``compare``). Differentiable.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import zmap
        >>> zmap(np.array([1.0, 4.0]), np.array([1.0, 2.0, 3.0]))
        array([-1.22474487,  2.44948974])
    """
    return _standardized("zmap", _float_array(scores), _float_array(compare), axis, ddof,
                         nan_policy)


def _standardized(name: str, a: Any, c: Any, axis: Any, ddof: int, nan_policy: str) -> Any:
    """``(a - mean(c)) / std(c)`` along ``axis``: zscore (``c`` is ``a``) and zmap."""
    _check_nan_policy(name, c, nan_policy)
    axis = _norm_axis(name, axis, c.ndim) if c.ndim else None
    if nan_policy == "omit":
        mean = fnp.nanmean(c, axis=axis, keepdims=True)
        std = fnp.nanstd(c, axis=axis, ddof=ddof, keepdims=True)
    else:
        mean = fnp.mean(c, axis=axis, keepdims=True)
        std = fnp.std(c, axis=axis, ddof=ddof, keepdims=True)
    if axis is None:  # all of c: broadcast against scores of any shape
        mean, std = fnp.reshape(mean, ()), fnp.reshape(std, ())
    # 0 / 0 is SciPy's nan for a constant slice, without NumPy's warning
    return _q.div(a - mean, std)


def _moments(name: str, a: Any, axis: Any, nan_policy: str
             ) -> tuple[Any, Any, Any, Any, int | None]:
    """(n, mean, m2, central moment function, axis) of ``a`` along ``axis``."""
    a = _float_array(a)
    _check_nan_policy(name, a, nan_policy)
    if a.ndim == 0:
        a = fnp.reshape(a, (1,))
    axis = _norm_axis(name, axis, a.ndim)
    omit = nan_policy == "omit"
    mean_of = fnp.nanmean if omit else fnp.mean
    mean = mean_of(a, axis=axis, keepdims=True)
    d = a - mean

    def moment(k: int) -> Any:
        return mean_of(d ** k, axis=axis, keepdims=True)

    if omit:
        n = fnp.sum(~fnp.isnan(a), axis=axis, keepdims=True).astype(a.dtype)
    else:
        n = a.size if axis is None else a.shape[axis]
    return n, mean, moment(2), moment, axis


def _squeeze(v: Any, axis: int | None, keepdims: bool) -> Any:
    if keepdims:
        return v
    return fnp.reshape(v, ()) if axis is None else fnp.squeeze(v, axis=axis)


def skew(a: Any, axis: Any = 0, bias: bool = True, nan_policy: str = "propagate", *,
         keepdims: bool = False) -> Any:
    """Sample skewness ``m3 / m2**1.5`` along ``axis``, as ``scipy.stats.skew``;
    ``bias=False`` applies the adjusted Fisher-Pearson correction (for more than 2 values).
    A constant slice gives nan, as SciPy. Differentiable.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import skew
        >>> round(float(skew(np.array([1.0, 2.0, 3.0, 10.0]))), 12)
        1.018233764909
    """
    n, mean, m2, moment, axis = _moments("skew", a, axis, nan_policy)
    m3 = moment(3)
    # SciPy's test for a constant slice (m2 at rounding level relative to the mean)
    zero = m2 <= (numpy.finfo(m2.dtype).resolution * mean) ** 2
    m2s = fnp.where(zero, 1.0, m2)
    vals = fnp.where(zero, numpy.nan, m3 / m2s ** 1.5)
    if not bias:
        ok = ~zero & (n > 2)
        ns = fnp.where(n > 2, n, 3.0) if not isinstance(n, int) else max(n, 3)
        vals = fnp.where(ok, fnp.sqrt((ns - 1.0) * ns) / (ns - 2.0) * m3 / m2s ** 1.5, vals)
    return _squeeze(vals, axis, keepdims)


def kurtosis(a: Any, axis: Any = 0, fisher: bool = True, bias: bool = True,
             nan_policy: str = "propagate", *, keepdims: bool = False) -> Any:
    """Sample kurtosis ``m4 / m2**2`` along ``axis``, minus 3 with ``fisher=True`` (the
    excess, 0 for a normal sample), as ``scipy.stats.kurtosis``; ``bias=False`` corrects for
    the sample size (for more than 3 values). A constant slice gives nan. Differentiable.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import kurtosis
        >>> round(float(kurtosis(np.array([1.0, 2.0, 3.0, 10.0]))), 12)
        -0.7696
    """
    n, mean, m2, moment, axis = _moments("kurtosis", a, axis, nan_policy)
    m4 = moment(4)
    zero = m2 <= (numpy.finfo(m2.dtype).resolution * mean) ** 2
    m2s = fnp.where(zero, 1.0, m2)
    vals = fnp.where(zero, numpy.nan, m4 / m2s ** 2.0)
    if not bias:
        ok = ~zero & (n > 3)
        ns = fnp.where(n > 3, n, 4.0) if not isinstance(n, int) else max(n, 4)
        nval = 1.0 / (ns - 2) / (ns - 3) * ((ns ** 2 - 1.0) * m4 / m2s ** 2.0
                                            - 3 * (ns - 1) ** 2.0)
        vals = fnp.where(ok, nval + 3.0, vals)
    vals = vals - 3.0 if fisher else vals
    return _squeeze(vals, axis, keepdims)


@tree_util.register_pytree_node_class
class PearsonRResult:
    """The result of :func:`pearsonr`, as SciPy's: unpacks as ``(statistic, pvalue)``;
    :meth:`confidence_interval` is the Fisher-transformation interval of the correlation. A
    pytree (through ``jit``)."""

    def __init__(self, statistic: Any, pvalue: Any, n: int = 0,
                 alternative: str = "two-sided") -> None:
        self.statistic, self.pvalue = statistic, pvalue
        self._n, self._alternative = n, alternative

    def __iter__(self) -> Any:
        return iter((self.statistic, self.pvalue))

    def __len__(self) -> int:
        return 2

    def __getitem__(self, i: int) -> Any:
        return (self.statistic, self.pvalue)[i]

    def __repr__(self) -> str:
        return f"PearsonRResult(statistic={self.statistic!r}, pvalue={self.pvalue!r})"

    def tree_flatten(self) -> tuple[tuple, tuple]:
        return (self.statistic, self.pvalue), (self._n, self._alternative)

    @classmethod
    def tree_unflatten(cls, aux: tuple, children: tuple) -> PearsonRResult:
        return cls(*children, *aux)

    def confidence_interval(self, confidence_level: float = 0.95, method: Any = None) -> Any:
        """The ``confidence_level`` interval of the correlation by Fisher's transformation
        (``tanh(atanh(r) -+ z / sqrt(n - 3))``; one-sided for the alternatives ``"less"``
        / ``"greater"``), as SciPy's; ``(-1, 1)`` for ``n <= 3``. Only ``method=None``.

        Example:
            >>> import numpy as np
            >>> from funcgrad.scipy.stats import pearsonr
            >>> res = pearsonr(np.arange(6.0), np.array([1.0, 3.0, 2.0, 5.0, 4.0, 6.0]))
            >>> ci = res.confidence_interval()
            >>> round(float(ci.low), 6), round(float(ci.high), 6)
            (0.263713, 0.98747)
        """
        if method is not None:
            raise ValueError("pearsonr: confidence_interval(method=...) (bootstrap) is not "
                             "provided; use method=None (Fisher's transformation)")
        cl = float(confidence_level)
        if not 0.0 < cl < 1.0:
            raise ValueError(f"confidence_level must be a number between 0 and 1, got {cl}")
        r = self.statistic
        n = self._n
        if n <= 3:
            ones = fnp.ones_like(r)
            return ConfidenceInterval(-ones, ones)
        zr = fnp.arctanh(fnp.clip(r, -1.0, 1.0))
        se = (1.0 / (n - 3)) ** 0.5
        ones = fnp.ones_like(r)
        if self._alternative == "two-sided":
            h = float(_special.ndtri(0.5 + cl / 2.0))
            return ConfidenceInterval(fnp.tanh(zr - h * se), fnp.tanh(zr + h * se))
        h = float(_special.ndtri(cl))
        if self._alternative == "less":
            return ConfidenceInterval(-ones, fnp.tanh(zr + h * se))
        return ConfidenceInterval(fnp.tanh(zr - h * se), ones)


_ALTERNATIVES = ("two-sided", "less", "greater")


def pearsonr(x: Any, y: Any, *, alternative: str = "two-sided", axis: Any = 0
             ) -> PearsonRResult:
    """Pearson correlation coefficient of ``x`` and ``y`` along ``axis`` (all elements for
    ``axis=None``) and the p-value of the test of no correlation, as ``scipy.stats.pearsonr``
    (``r`` has the beta distribution ``beta(n/2 - 1, n/2 - 1)`` on ``[-1, 1]`` under the null
    hypothesis; ``alternative`` ``"two-sided"``, ``"less"`` or ``"greater"``). A constant
    input gives nan; two samples give ``r = +-1`` with p-value 1. The result unpacks as
    ``r, p``; its ``confidence_interval()`` is Fisher's. Differentiable in ``x`` and ``y``.
    SciPy's ``method=`` (permutation and Monte Carlo tests) is not provided.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import pearsonr
        >>> r, p = pearsonr(np.array([1.0, 2.0, 3.0, 4.0]), np.array([1.0, 3.0, 2.0, 5.0]))
        >>> round(float(r), 12), round(float(p), 12)
        (0.83152184062, 0.16847815938)
    """
    if alternative not in _ALTERNATIVES:
        raise ValueError(f"pearsonr: alternative must be one of {_ALTERNATIVES}, got "
                         f"{alternative!r}")
    x, y = _float_array(x), _float_array(y)
    if axis is None:
        x, y, axis = fnp.reshape(x, (-1,)), fnp.reshape(y, (-1,)), -1
    try:
        shape = numpy.broadcast_shapes(x.shape, y.shape)
    except ValueError:
        raise ValueError(f"pearsonr: x and y must be broadcastable, got shapes {x.shape} "
                         f"and {y.shape}") from None
    nd = len(shape)
    x = fnp.reshape(x, (1,) * (nd - x.ndim) + x.shape)
    y = fnp.reshape(y, (1,) * (nd - y.ndim) + y.shape)
    axis = _norm_axis("pearsonr", axis, nd)
    if x.shape[axis] != y.shape[axis]:
        raise ValueError("pearsonr: x and y must have the same length along axis")
    n = x.shape[axis]
    if n < 2:
        raise ValueError("pearsonr: x and y must have length at least 2")
    x, y = fnp.moveaxis(x, axis, -1), fnp.moveaxis(y, axis, -1)
    x, y = fnp.broadcast_arrays(x, y)
    dt = numpy.result_type(x.dtype, y.dtype)
    x, y = x.astype(dt), y.astype(dt)
    const = fnp.all(x == x[..., :1], axis=-1) | fnp.all(y == y[..., :1], axis=-1)
    xm = x - fnp.mean(x, axis=-1, keepdims=True)
    ym = y - fnp.mean(y, axis=-1, keepdims=True)
    # Scaled by the largest deviation first (SciPy's guard against premature overflow); a
    # constant slice divides by 1 instead of 0 and is set to nan below.
    xmax = fnp.max(fnp.abs(xm), axis=-1, keepdims=True)
    ymax = fnp.max(fnp.abs(ym), axis=-1, keepdims=True)
    xs = xm / fnp.where(xmax == 0, 1.0, xmax)
    ys = ym / fnp.where(ymax == 0, 1.0, ymax)
    nx = fnp.linalg.norm(xs, axis=-1, keepdims=True)
    ny = fnp.linalg.norm(ys, axis=-1, keepdims=True)
    r = fnp.sum((xs / fnp.where(nx == 0, 1.0, nx)) * (ys / fnp.where(ny == 0, 1.0, ny)),
                axis=-1)
    r = fnp.where(const, numpy.nan, fnp.clip(r, -1.0, 1.0))
    if n == 2:  # exactly +-1 with p-value 1 (SciPy's special case)
        r = fnp.round(r)
        return PearsonRResult(r, fnp.where(fnp.isnan(r), numpy.nan, fnp.ones_like(r)), n,
                              alternative)
    ab = n / 2.0 - 1.0
    if alternative == "less":
        p = _beta.cdf(r, ab, ab, loc=-1.0, scale=2.0)
    elif alternative == "greater":
        p = _beta.sf(r, ab, ab, loc=-1.0, scale=2.0)
    else:
        p = 2.0 * _beta.sf(fnp.abs(r), ab, ab, loc=-1.0, scale=2.0)
    return PearsonRResult(r, p.astype(dt), n, alternative)
