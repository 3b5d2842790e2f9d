"""``scipy.spatial.distance``: ``cdist``, ``pdist``, ``squareform`` and the distance functions
between two vectors (``euclidean``, ``cosine``, ``cityblock``, ...).

Every metric is a formula on funcgrad operations over broadcast pairs of rows, so distances
are differentiable (``euclidean`` and friends have gradient 0, not nan, where two points
coincide) and work under ``jit`` and ``vmap``; a callable ``metric`` is mapped over the pairs
with ``vmap``. ``pdist`` gathers the pairs ``i < j`` (it never forms the diagonal). Integer and
boolean data compute in float64; float32 stays float32 (SciPy always returns float64).

Example:
    >>> import numpy as np
    >>> from funcgrad.scipy.spatial.distance import cdist, pdist, squareform
    >>> x = np.array([[0.0, 0.0], [3.0, 4.0], [6.0, 8.0]])
    >>> pdist(x)
    array([ 5., 10.,  5.])
    >>> squareform(pdist(x, "cityblock"))
    array([[ 0.,  7., 14.],
           [ 7.,  0.,  7.],
           [14.,  7.,  0.]])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.api_devices import device_get
from funcgrad.api_vmap import vmap
from funcgrad.avals import get_aval
from funcgrad.backend import device_put, get_default_device
from funcgrad.core import Tracer
from funcgrad.scipy._device import keep_host_inputs_on_host as _keep_host_inputs_on_host

__all__ = ["cdist", "pdist", "squareform", "braycurtis", "canberra", "chebyshev",
           "cityblock", "correlation", "cosine", "dice", "euclidean", "hamming", "jaccard",
           "jensenshannon", "mahalanobis", "minkowski", "rogerstanimoto", "russellrao",
           "seuclidean", "sokalsneath", "sqeuclidean", "yule", "distance_matrix",
           "minkowski_distance"]


def _sqrt0(s: Any) -> Any:
    """``sqrt`` whose derivative at 0 is 0 (coincident points), not inf."""
    zero = s == 0
    return fnp.where(zero, 0.0, fnp.sqrt(fnp.where(zero, 1.0, s)))


def _div0(a: Any, b: Any) -> Any:
    """``a / b`` with 0 where ``b`` is 0 (SciPy's convention for 0 / 0 terms)."""
    zero = b == 0
    return fnp.where(zero, 0.0, a / fnp.where(zero, 1.0, b))


def _weighted(w: Any, d: Any) -> Any:
    return d if w is None else w * d


def _minkowski(u: Any, v: Any, p: float = 2.0, w: Any = None) -> Any:
    if p <= 0:
        raise ValueError(f"p must be greater than 0, got {p}")
    d = fnp.abs(u - v)
    if p == 1:
        return fnp.sum(_weighted(w, d), axis=-1)
    if p == 2:
        return _sqrt0(fnp.sum(_weighted(w, d * d), axis=-1))
    if p == numpy.inf:
        return fnp.max(d if w is None else fnp.where(w > 0, d, 0), axis=-1)
    s = fnp.sum(_weighted(w, fnp.where(d == 0, 0.0, d) ** p), axis=-1)
    return fnp.where(s == 0, 0.0, fnp.where(s == 0, 1.0, s) ** (1.0 / p))


def _euclidean(u: Any, v: Any, w: Any = None) -> Any:
    return _minkowski(u, v, 2.0, w)


def _sqeuclidean(u: Any, v: Any, w: Any = None) -> Any:
    d = u - v
    return fnp.sum(_weighted(w, d * d), axis=-1)


def _cityblock(u: Any, v: Any, w: Any = None) -> Any:
    return fnp.sum(_weighted(w, fnp.abs(u - v)), axis=-1)


def _chebyshev(u: Any, v: Any, w: Any = None) -> Any:
    return _minkowski(u, v, numpy.inf, w)


def _braycurtis(u: Any, v: Any, w: Any = None) -> Any:
    return _div0(fnp.sum(_weighted(w, fnp.abs(u - v)), axis=-1),
                 fnp.sum(_weighted(w, fnp.abs(u + v)), axis=-1))


def _canberra(u: Any, v: Any, w: Any = None) -> Any:
    return fnp.sum(_weighted(w, _div0(fnp.abs(u - v), fnp.abs(u) + fnp.abs(v))), axis=-1)


def _cosine(u: Any, v: Any, w: Any = None) -> Any:
    uv = fnp.sum(_weighted(w, u * v), axis=-1)
    uu = fnp.sum(_weighted(w, u * u), axis=-1)
    vv = fnp.sum(_weighted(w, v * v), axis=-1)
    return fnp.clip(1.0 - uv / fnp.sqrt(uu * vv), 0.0, 2.0)


def _correlation(u: Any, v: Any, w: Any = None) -> Any:
    if w is None:
        um, vm = fnp.mean(u, axis=-1, keepdims=True), fnp.mean(v, axis=-1, keepdims=True)
    else:
        total = fnp.sum(w)
        um = fnp.sum(w * u, axis=-1, keepdims=True) / total
        vm = fnp.sum(w * v, axis=-1, keepdims=True) / total
    return fnp.clip(_cosine(u - um, v - vm, w), 0.0, 2.0)


def _seuclidean(u: Any, v: Any, V: Any) -> Any:  # noqa: N803 (SciPy's name)
    d = u - v
    return _sqrt0(fnp.sum(d * d / V, axis=-1))


def _mahalanobis(u: Any, v: Any, VI: Any) -> Any:  # noqa: N803 (SciPy's name)
    d = u - v
    return _sqrt0(fnp.maximum(fnp.sum(fnp.matmul(d, VI) * d, axis=-1), 0.0))


def _hamming(u: Any, v: Any, w: Any = None) -> Any:
    ne = (u != v).astype(numpy.float64)
    if w is None:
        return fnp.mean(ne, axis=-1)
    return fnp.sum(w * ne, axis=-1) / fnp.sum(w)


def _counts(u: Any, v: Any, w: Any) -> tuple[Any, Any, Any, Any]:
    """``(ctt, ctf, cft, cff)`` of the boolean vectors (nonzero is true)."""
    ub, vb = u != 0, v != 0

    def count(m: Any) -> Any:
        return fnp.sum(_weighted(w, m.astype(numpy.float64)), axis=-1)

    return count(ub & vb), count(ub & ~vb), count(~ub & vb), count(~ub & ~vb)


def _jaccard(u: Any, v: Any, w: Any = None) -> Any:
    ub, vb = u != 0, v != 0
    differ = _weighted(w, ((ub != vb) & (ub | vb)).astype(numpy.float64))
    either = _weighted(w, (ub | vb).astype(numpy.float64))
    return _div0(fnp.sum(differ, axis=-1), fnp.sum(either, axis=-1))


def _dice(u: Any, v: Any, w: Any = None) -> Any:
    ctt, ctf, cft, _ = _counts(u, v, w)
    return _div0(ctf + cft, 2 * ctt + ctf + cft)


def _rogerstanimoto(u: Any, v: Any, w: Any = None) -> Any:
    ctt, ctf, cft, cff = _counts(u, v, w)
    r = 2.0 * (ctf + cft)
    return r / (ctt + cff + r)


def _russellrao(u: Any, v: Any, w: Any = None) -> Any:
    ctt, ctf, cft, cff = _counts(u, v, w)
    n = ctt + ctf + cft + cff
    return (n - ctt) / n


def _sokalsneath(u: Any, v: Any, w: Any = None) -> Any:
    ctt, ctf, cft, _ = _counts(u, v, w)
    r = 2.0 * (ctf + cft)
    return r / (ctt + r)


def _yule(u: Any, v: Any, w: Any = None) -> Any:
    ctt, ctf, cft, cff = _counts(u, v, w)
    half = ctf * cft
    return _div0(2.0 * half, ctt * cff + half)


def _jensenshannon(u: Any, v: Any, base: Any = None) -> Any:
    p = u / fnp.sum(u, axis=-1, keepdims=True)
    q = v / fnp.sum(v, axis=-1, keepdims=True)
    m = (p + q) / 2.0

    def rel(a: Any, b: Any) -> Any:  # scipy.special.rel_entr summed
        pos = (a > 0) & (b > 0)
        ratio = fnp.where(pos, a, 1.0) / fnp.where(pos, b, 1.0)
        return fnp.sum(fnp.where(pos, a * fnp.log(ratio), fnp.where(a == 0, 0.0, fnp.inf)),
                       axis=-1)

    js = (rel(p, m) + rel(q, m)) / 2.0
    if base is not None:
        js = js / numpy.log(base)
    return fnp.sqrt(fnp.maximum(js, 0.0))


# metric name -> (formula on broadcast rows, its keyword arguments); SciPy's aliases too
_METRICS: dict[str, tuple[Callable[..., Any], tuple[str, ...]]] = {
    "braycurtis": (_braycurtis, ("w",)), "canberra": (_canberra, ("w",)),
    "chebyshev": (_chebyshev, ("w",)), "cityblock": (_cityblock, ("w",)),
    "correlation": (_correlation, ("w",)), "cosine": (_cosine, ("w",)),
    "dice": (_dice, ("w",)), "euclidean": (_euclidean, ("w",)),
    "hamming": (_hamming, ("w",)), "jaccard": (_jaccard, ("w",)),
    "jensenshannon": (_jensenshannon, ("base",)), "mahalanobis": (_mahalanobis, ("VI",)),
    "minkowski": (_minkowski, ("p", "w")), "rogerstanimoto": (_rogerstanimoto, ("w",)),
    "russellrao": (_russellrao, ("w",)), "seuclidean": (_seuclidean, ("V",)),
    "sokalsneath": (_sokalsneath, ("w",)), "sqeuclidean": (_sqeuclidean, ("w",)),
    "yule": (_yule, ("w",)),
}
_ALIASES = {"euclid": "euclidean", "eu": "euclidean", "e": "euclidean", "sqe": "sqeuclidean",
            "sqeuclid": "sqeuclidean", "cblock": "cityblock", "cb": "cityblock",
            "c": "cityblock", "manhattan": "cityblock", "taxicab": "cityblock",
            "chebychev": "chebyshev", "cheby": "chebyshev", "cheb": "chebyshev",
            "ch": "chebyshev", "cos": "cosine", "corr": "correlation", "co": "correlation",
            "mi": "minkowski", "m": "minkowski", "pnorm": "minkowski", "se": "seuclidean",
            "s": "seuclidean", "mahal": "mahalanobis", "mah": "mahalanobis",
            "ham": "hamming", "hamm": "hamming", "h": "hamming", "jacc": "jaccard",
            "ja": "jaccard", "j": "jaccard", "js": "jensenshannon", "bray": "braycurtis",
            "canb": "canberra"}


def _as_float(name: str, x: Any) -> Any:
    x = fnp.asarray(x)
    if get_aval(x).dtype.kind == "c":
        raise TypeError(f"{name}: complex data is not supported")
    if not fnp.issubdtype(get_aval(x).dtype, fnp.floating):
        x = x.astype(numpy.float64)
    return x


def _resolve(name: str, metric: Any, rows: list[Any], kwargs: dict[str, Any]
             ) -> Callable[[Any, Any], Any]:
    """A function of two broadcast row stacks for ``metric`` with its keywords filled in
    (SciPy's data-derived defaults for ``seuclidean``'s ``V`` and ``mahalanobis``'s ``VI``)."""
    if callable(metric):
        f = metric

        def pairs(u: Any, v: Any) -> Any:
            shape = numpy.broadcast_shapes(get_aval(u).shape, get_aval(v).shape)
            uu = fnp.reshape(fnp.broadcast_to(u, shape), (-1, shape[-1]))
            vv = fnp.reshape(fnp.broadcast_to(v, shape), (-1, shape[-1]))
            out = vmap(lambda a, b: fnp.asarray(f(a, b, **kwargs)))(uu, vv)
            return fnp.reshape(out, shape[:-1])

        return pairs
    if not isinstance(metric, str):
        raise TypeError(f"{name}: metric must be a string or a callable, got "
                        f"{type(metric).__name__}")
    key = _ALIASES.get(metric.lower(), metric.lower())
    if key not in _METRICS:
        raise ValueError(f"{name}: unknown distance metric {metric!r}; known: "
                         f"{sorted(_METRICS)}")
    fn, known = _METRICS[key]
    extra = set(kwargs) - set(known)
    if extra:
        raise TypeError(f"{name}: metric {key!r} got unexpected keyword arguments "
                        f"{sorted(extra)}")
    kw = dict(kwargs)
    if key == "seuclidean" and kw.get("V") is None:
        kw["V"] = fnp.var(fnp.concatenate(rows, axis=0), axis=0, ddof=1)
    if key == "mahalanobis" and kw.get("VI") is None:
        stacked = fnp.concatenate(rows, axis=0)
        if get_aval(stacked).shape[0] <= get_aval(stacked).shape[1]:
            raise ValueError(f"{name}: the number of observations "
                             f"({get_aval(stacked).shape[0]}) is too small; the covariance "
                             "matrix is singular. For observations with "
                             f"{get_aval(stacked).shape[1]} dimensions, at least "
                             f"{get_aval(stacked).shape[1] + 1} observations are required.")
        kw["VI"] = fnp.linalg.inv(fnp.cov(stacked.T))
    for k in ("w", "V", "VI"):
        if kw.get(k) is not None:
            kw[k] = _as_float(name, kw[k])
    return lambda u, v: fn(u, v, **kw)


def cdist(XA: Any, XB: Any, metric: Any = "euclidean", *, out: Any = None,  # noqa: N803
          **kwargs: Any) -> Any:
    """The distance between each row of ``XA`` (``m x n``) and each of ``XB`` (``k x n``):
    an ``m x k`` array, as ``scipy.spatial.distance.cdist``. ``metric``: a SciPy name
    (``"euclidean"``, ``"sqeuclidean"``, ``"cityblock"``, ``"chebyshev"``, ``"minkowski"``
    with ``p``, ``"cosine"``, ``"correlation"``, ``"seuclidean"`` with ``V``,
    ``"mahalanobis"`` with ``VI``, ``"braycurtis"``, ``"canberra"``, ``"hamming"``,
    ``"jaccard"``, ``"dice"``, ``"rogerstanimoto"``, ``"russellrao"``, ``"sokalsneath"``,
    ``"yule"``, ``"jensenshannon"``; weights ``w`` where SciPy takes them) or a callable of
    two rows. Differentiable; ``jit``/``vmap`` work.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.spatial.distance import cdist
        >>> cdist(np.array([[0.0, 0.0]]), np.array([[1.0, 0.0], [0.0, 2.0]]), "sqeuclidean")
        array([[1., 4.]])
    """
    if out is not None:
        raise TypeError("cdist: out= is not supported (funcgrad arrays are immutable)")
    xa, xb = _as_float("cdist", XA), _as_float("cdist", XB)
    if get_aval(xa).ndim != 2 or get_aval(xb).ndim != 2:
        raise ValueError("cdist: XA and XB must be 2-dimensional arrays")
    if get_aval(xa).shape[1] != get_aval(xb).shape[1]:
        raise ValueError("cdist: XA and XB must have the same number of columns (i.e. "
                         "feature dimension.)")
    f = _resolve("cdist", metric, [xa, xb], kwargs)
    return f(xa[:, None, :], xb[None, :, :])


def pdist(X: Any, metric: Any = "euclidean", *, out: Any = None, **kwargs: Any) -> Any:  # noqa: N803
    """The distances between the rows of ``X`` (``m x n``), condensed: the ``m (m - 1) / 2``
    pairs ``i < j`` in row-major order, as ``scipy.spatial.distance.pdist``; ``metric`` as in
    :func:`cdist`. :func:`squareform` makes the square matrix. Differentiable.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.spatial.distance import pdist
        >>> pdist(np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]), "cosine").round(6)
        array([1.      , 0.292893, 0.292893])
    """
    if out is not None:
        raise TypeError("pdist: out= is not supported (funcgrad arrays are immutable)")
    x = _as_float("pdist", X)
    if get_aval(x).ndim != 2:
        raise ValueError("pdist: a 2-dimensional array must be passed.")
    m = get_aval(x).shape[0]
    f = _resolve("pdist", metric, [x], kwargs)
    i, j = numpy.triu_indices(m, 1)
    dev = get_aval(x).device or get_default_device()
    return f(x[device_put(i, dev)], x[device_put(j, dev)])


def squareform(X: Any, force: str = "no", checks: bool = True) -> Any:  # noqa: N803
    """Between a condensed distance vector and the square, symmetric, zero-diagonal matrix,
    as ``scipy.spatial.distance.squareform``. With ``checks``, a concrete matrix must be
    symmetric with a zero diagonal.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.spatial.distance import squareform
        >>> squareform(np.array([1.0, 2.0, 3.0]))
        array([[0., 1., 2.],
               [1., 0., 3.],
               [2., 3., 0.]])
    """
    x = fnp.asarray(X)
    shape = get_aval(x).shape
    dev = get_aval(x).device or get_default_device()
    if force.lower() == "tomatrix" and len(shape) != 1:
        raise ValueError("Forcing 'tomatrix' but input X is not a distance vector.")
    if force.lower() == "tovector" and len(shape) != 2:
        raise ValueError("Forcing 'tovector' but input X is not a distance matrix.")
    if len(shape) == 1:
        s = shape[0]
        if s == 0:
            return fnp.zeros((1, 1), dtype=get_aval(x).dtype)
        d = int(numpy.ceil(numpy.sqrt(s * 2)))
        if d * (d - 1) != s * 2:
            raise ValueError("Incompatible vector size. It must be a binomial coefficient n "
                             "choose 2 for some integer n >= 2.")
        i, j = numpy.triu_indices(d, 1)
        pos = numpy.zeros((d, d), dtype=numpy.intp)
        pos[i, j] = pos[j, i] = numpy.arange(s) + 1
        padded = fnp.concatenate([fnp.zeros((1,), dtype=get_aval(x).dtype), x])
        return padded[device_put(pos, dev)]
    if len(shape) == 2:
        if shape[0] != shape[1]:
            raise ValueError("The matrix argument must be square.")
        if checks and not isinstance(x, Tracer):
            host = numpy.asarray(device_get(x))
            if not numpy.allclose(host, host.T):
                raise ValueError("Distance matrix 'X' must be symmetric.")
            if numpy.any(numpy.diag(host) != 0):
                raise ValueError("Distance matrix 'X' diagonal must be zero.")
        i, j = numpy.triu_indices(shape[0], 1)
        return x[device_put(i, dev), device_put(j, dev)]
    raise ValueError(f"The first argument must be one or two dimensional array. A "
                     f"{len(shape)}-dimensional array is not permitted")


def _pair(name: str, metric: str, u: Any, v: Any, **kw: Any) -> Any:
    u, v = _as_float(name, u), _as_float(name, v)
    if get_aval(u).ndim != 1 or get_aval(v).ndim != 1:
        raise ValueError(f"{name}: input vector should be 1-D.")
    kw = {k: val for k, val in kw.items() if val is not None}
    fn, _ = _METRICS[metric]
    for k in ("w", "V", "VI"):
        if k in kw:
            kw[k] = _as_float(name, kw[k])
    return fn(u, v, **kw)


def braycurtis(u: Any, v: Any, w: Any = None) -> Any:
    """Bray-Curtis distance ``sum|u - v| / sum|u + v|``.

    Example:
        >>> from funcgrad.scipy.spatial.distance import braycurtis
        >>> float(braycurtis([1.0, 0.0, 0.0], [0.0, 1.0, 0.0]))
        1.0
    """
    return _pair("braycurtis", "braycurtis", u, v, w=w)


def canberra(u: Any, v: Any, w: Any = None) -> Any:
    """Canberra distance ``sum |u - v| / (|u| + |v|)`` (0 / 0 terms are 0).

    Example:
        >>> from funcgrad.scipy.spatial.distance import canberra
        >>> float(canberra([1.0, 0.0], [0.0, 0.0]))
        1.0
    """
    return _pair("canberra", "canberra", u, v, w=w)


def chebyshev(u: Any, v: Any, w: Any = None) -> Any:
    """Chebyshev distance ``max |u - v|``.

    Example:
        >>> from funcgrad.scipy.spatial.distance import chebyshev
        >>> float(chebyshev([1.0, 5.0], [2.0, 3.0]))
        2.0
    """
    return _pair("chebyshev", "chebyshev", u, v, w=w)


def cityblock(u: Any, v: Any, w: Any = None) -> Any:
    """City block (Manhattan) distance ``sum |u - v|``.

    Example:
        >>> from funcgrad.scipy.spatial.distance import cityblock
        >>> float(cityblock([1.0, 5.0], [2.0, 3.0]))
        3.0
    """
    return _pair("cityblock", "cityblock", u, v, w=w)


def correlation(u: Any, v: Any, w: Any = None, centered: bool = True) -> Any:
    """Correlation distance ``1 - corr(u, v)`` (``centered=False``: the cosine distance).

    Example:
        >>> from funcgrad.scipy.spatial.distance import correlation
        >>> round(float(correlation([1.0, 2.0, 3.0], [3.0, 2.0, 1.0])), 12)
        2.0
    """
    return _pair("correlation", "correlation" if centered else "cosine", u, v, w=w)


def cosine(u: Any, v: Any, w: Any = None) -> Any:
    """Cosine distance ``1 - u.v / (|u| |v|)``.

    Example:
        >>> from funcgrad.scipy.spatial.distance import cosine
        >>> float(cosine([1.0, 0.0], [0.0, 1.0]))
        1.0
    """
    return _pair("cosine", "cosine", u, v, w=w)


def dice(u: Any, v: Any, w: Any = None) -> Any:
    """Dice dissimilarity of boolean vectors.

    Example:
        >>> from funcgrad.scipy.spatial.distance import dice
        >>> float(dice([1, 0, 0], [1, 1, 0]))
        0.3333333333333333
    """
    return _pair("dice", "dice", u, v, w=w)


def euclidean(u: Any, v: Any, w: Any = None) -> Any:
    """Euclidean distance ``sqrt(sum w (u - v)**2)``.

    Example:
        >>> from funcgrad.scipy.spatial.distance import euclidean
        >>> float(euclidean([0.0, 0.0], [3.0, 4.0]))
        5.0
    """
    return _pair("euclidean", "euclidean", u, v, w=w)


def hamming(u: Any, v: Any, w: Any = None) -> Any:
    """The (weighted) fraction of entries that differ.

    Example:
        >>> from funcgrad.scipy.spatial.distance import hamming
        >>> float(hamming([1, 0, 0, 1], [1, 1, 0, 0]))
        0.5
    """
    return _pair("hamming", "hamming", u, v, w=w)


def jaccard(u: Any, v: Any, w: Any = None) -> Any:
    """Jaccard-Needham dissimilarity of boolean vectors (nonzero is true).

    Example:
        >>> from funcgrad.scipy.spatial.distance import jaccard
        >>> float(jaccard([1, 0, 1], [1, 1, 0]))
        0.6666666666666666
    """
    return _pair("jaccard", "jaccard", u, v, w=w)


def jensenshannon(p: Any, q: Any, base: Any = None, *, axis: int = 0,
                  keepdims: bool = False) -> Any:
    """Jensen-Shannon distance (the square root of the divergence) of two probability
    vectors (normalised first), in nats or ``base``.

    Example:
        >>> from funcgrad.scipy.spatial.distance import jensenshannon
        >>> round(float(jensenshannon([1.0, 0.0], [0.0, 1.0], 2.0)), 12)
        1.0
    """
    p, q = fnp.moveaxis(_as_float("jensenshannon", p), axis, -1), \
        fnp.moveaxis(_as_float("jensenshannon", q), axis, -1)
    out = _jensenshannon(p, q, base)
    return fnp.expand_dims(out, axis) if keepdims else out


def mahalanobis(u: Any, v: Any, VI: Any) -> Any:  # noqa: N803
    """Mahalanobis distance ``sqrt((u - v) VI (u - v))`` with the inverse covariance ``VI``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.spatial.distance import mahalanobis
        >>> float(mahalanobis([1.0, 0.0], [0.0, 0.0], np.eye(2) * 4.0))
        2.0
    """
    return _pair("mahalanobis", "mahalanobis", u, v, VI=VI)


def minkowski(u: Any, v: Any, p: float = 2, w: Any = None) -> Any:
    """Minkowski distance ``(sum w |u - v|**p)**(1/p)``.

    Example:
        >>> from funcgrad.scipy.spatial.distance import minkowski
        >>> float(minkowski([0.0, 0.0], [3.0, 4.0], 1))
        7.0
    """
    return _pair("minkowski", "minkowski", u, v, p=p, w=w)


def rogerstanimoto(u: Any, v: Any, w: Any = None) -> Any:
    """Rogers-Tanimoto dissimilarity of boolean vectors.

    Example:
        >>> from funcgrad.scipy.spatial.distance import rogerstanimoto
        >>> float(rogerstanimoto([1, 0, 0], [0, 1, 0]))
        0.8
    """
    return _pair("rogerstanimoto", "rogerstanimoto", u, v, w=w)


def russellrao(u: Any, v: Any, w: Any = None) -> Any:
    """Russell-Rao dissimilarity of boolean vectors.

    Example:
        >>> from funcgrad.scipy.spatial.distance import russellrao
        >>> float(russellrao([1, 0, 0], [0, 1, 0]))
        1.0
    """
    return _pair("russellrao", "russellrao", u, v, w=w)


def seuclidean(u: Any, v: Any, V: Any) -> Any:  # noqa: N803
    """Standardised Euclidean distance ``sqrt(sum (u - v)**2 / V)``.

    Example:
        >>> from funcgrad.scipy.spatial.distance import seuclidean
        >>> float(seuclidean([1.0, 0.0], [0.0, 0.0], [0.25, 1.0]))
        2.0
    """
    return _pair("seuclidean", "seuclidean", u, v, V=V)


def sokalsneath(u: Any, v: Any, w: Any = None) -> Any:
    """Sokal-Sneath dissimilarity of boolean vectors.

    Example:
        >>> from funcgrad.scipy.spatial.distance import sokalsneath
        >>> float(sokalsneath([1, 0, 1], [1, 1, 0]))
        0.8
    """
    return _pair("sokalsneath", "sokalsneath", u, v, w=w)


def sqeuclidean(u: Any, v: Any, w: Any = None) -> Any:
    """Squared Euclidean distance ``sum w (u - v)**2``.

    Example:
        >>> from funcgrad.scipy.spatial.distance import sqeuclidean
        >>> float(sqeuclidean([0.0, 0.0], [3.0, 4.0]))
        25.0
    """
    return _pair("sqeuclidean", "sqeuclidean", u, v, w=w)


def yule(u: Any, v: Any, w: Any = None) -> Any:
    """Yule dissimilarity of boolean vectors.

    Example:
        >>> from funcgrad.scipy.spatial.distance import yule
        >>> float(yule([1, 0, 1, 0], [1, 1, 0, 0]))
        1.0
    """
    return _pair("yule", "yule", u, v, w=w)


def minkowski_distance(x: Any, y: Any, p: float = 2.0) -> Any:
    """The ``p``-norm distance between broadcast rows of ``x`` and ``y``, as
    ``scipy.spatial.minkowski_distance``.

    Example:
        >>> from funcgrad.scipy.spatial.distance import minkowski_distance
        >>> minkowski_distance([[0.0, 0.0], [3.0, 0.0]], [[3.0, 4.0]])
        array([5., 4.])
    """
    return _minkowski(_as_float("minkowski_distance", x), _as_float("minkowski_distance", y), p)


def distance_matrix(x: Any, y: Any, p: float = 2.0, threshold: int = 1000000) -> Any:
    """The ``p``-norm distance between every row of ``x`` and every row of ``y``, as
    ``scipy.spatial.distance_matrix``.

    Example:
        >>> from funcgrad.scipy.spatial.distance import distance_matrix
        >>> distance_matrix([[0.0, 0.0]], [[3.0, 4.0], [0.0, 1.0]])
        array([[5., 1.]])
    """
    x, y = _as_float("distance_matrix", x), _as_float("distance_matrix", y)
    if get_aval(x).shape[-1] != get_aval(y).shape[-1]:
        raise ValueError(f"x contains {get_aval(x).shape[-1]}-dimensional vectors but y "
                         f"contains {get_aval(y).shape[-1]}-dimensional vectors")
    return _minkowski(x[:, None, :], y[None, :, :], p)

# NumPy inputs compute on the host whatever the default device (funcgrad.scipy._device)
_keep_host_inputs_on_host(globals(), __all__)
