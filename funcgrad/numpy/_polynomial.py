"""funcgrad.numpy: NumPy's classic polynomial functions on coefficient arrays (highest power
first): ``poly, polyval, polyadd, polysub, polymul, polyder, polyint, polydiv, polyfit, roots``.

They are composed from funcgrad.numpy operations, so they differentiate, batch and jit, except
where NumPy's result depends on the values: ``roots`` strips leading and trailing zero
coefficients by value, so it needs concrete coefficients (``strip_zeros=False`` works traced);
``polydiv`` trims the remainder's leading zeros by value only when the input is concrete. Roots
(and ``poly`` of a matrix) come from ``funcgrad.numpy.linalg.eigvals`` and differentiate
through it; a result known to be real is returned real, as NumPy does, which needs the values
(under ``jit``/``vmap`` it stays complex).
"""

from __future__ import annotations

from typing import Any

import numpy

import funcgrad.numpy._creation as _fc
import funcgrad.numpy._elementwise as _fe
import funcgrad.numpy._indexing as _fi
import funcgrad.numpy._linalg_ops as _fl
import funcgrad.numpy._manipulation as _manipulation
import funcgrad.numpy._reductions as _fr
import funcgrad.numpy._shape as _fs
import funcgrad.numpy.linalg as _linalg
import funcgrad.ops.elementwise as _ew
import funcgrad.ops.shape as _shape
from funcgrad.avals import get_aval
from funcgrad.backend import device_of, device_put, get_default_device, operator_index, to_numpy
from funcgrad.core import Tracer, concrete_or_error
from funcgrad.errors import ConcretizationError

__all__ = [
    "poly",
    "polyval",
    "polyadd",
    "polysub",
    "polymul",
    "polyder",
    "polyint",
    "polydiv",
    "polyfit",
    "roots",
]

_arr = _fs._arr


def _cast(x: Any, dt: Any) -> Any:
    dt = numpy.dtype(dt)
    return x if get_aval(x).dtype == dt else _ew.convert_element_type(x, dt)


def _1d(x: Any) -> Any:
    return _fs.atleast_1d(_arr(x))


def _device(x: Any) -> str:
    return get_aval(x).device or get_default_device()


def _const(host: Any, like: Any) -> Any:
    return device_put(numpy.asarray(host), _device(like))


def _concrete_host(x: Any, what: str) -> numpy.ndarray | None:
    """Host values of ``x`` if known (plain arrays, or tracers with a concrete value)."""
    if isinstance(x, Tracer):
        x = x.to_concrete_value()
        if x is None:
            return None
    return numpy.asarray(to_numpy(x) if device_of(x) is not None else x)


def _check_1d(fname: str, x: Any, what: str) -> None:
    if get_aval(x).ndim != 1:
        raise ValueError(f"{fname}: {what} must be a 1-d array of coefficients, got "
                         f"{get_aval(x).str_short()}")


def polyval(p: Any, x: Any, *, unroll: int = 16) -> Any:
    """The polynomial with coefficients ``p`` (highest power first) evaluated at ``x`` by
    Horner's scheme; differentiable in both. As NumPy and JAX, ``p`` may have more axes:
    ``p[i]`` is the i-th coefficient, broadcast against ``x`` (many polynomials at once).
    JAX's ``unroll`` (its loop's unrolling) is accepted: funcgrad unrolls Horner's scheme
    fully.

    Example:
        >>> polyval([3, 0, 1], 5).tolist()
        76
    """
    p, x = _manipulation._arrs_together(p, x)
    pa = get_aval(p)
    if pa.ndim == 0:
        # NumPy iterates over p, so a 0-d p is a TypeError there ("iteration over a 0-d array")
        raise TypeError(f"polyval: p must be an array of coefficients with at least one "
                        f"axis, got {pa.str_short()}")
    y = _fc.zeros_like(x)
    for i in range(pa.shape[0]):
        y = _fe.add(_fe.multiply(y, x), _shape.index_in_dim(p, i, 0, keepdims=False))
    return y


def _zeros_front(a: Any, n: int) -> Any:
    """``a`` with ``n`` zero rows in front along axis 0 (made on ``a``'s device, in its dtype)."""
    if n == 0:
        return a
    aval = get_aval(a)
    z = _const(numpy.zeros((n,) + tuple(aval.shape[1:]), dtype=aval.dtype), a)
    return _fs.concatenate([z, a], 0)


def _add_sub(fname: str, a1: Any, a2: Any, op: Any) -> Any:
    """JAX's rule (``a1.at[-n:].add(a2)`` for the shorter ``a2``): the coefficients run along
    axis 0; the shorter operand is broadcast into the longer one's last rows and padded with
    leading zeros there, so the result has the longer one's shape (``[[1, 2]]`` plus ``[1]``
    is ``[[2, 3]]``, as NumPy and JAX give; more axes are many polynomials at once)."""
    a, b = (_fs.atleast_1d(v) for v in _manipulation._arrs_together(a1, a2))
    sa, sb = tuple(get_aval(a).shape), tuple(get_aval(b).shape)
    if sa[0] == sb[0]:
        return op(a, b)
    swap = sa[0] < sb[0]
    long, short, what = (b, a, "a1") if swap else (a, b, "a2")
    lshape, sshape = (sb, sa) if swap else (sa, sb)
    rows = (sshape[0],) + lshape[1:]
    try:
        numpy.broadcast_shapes(sshape, rows)
        ok = numpy.broadcast_shapes(sshape, rows) == rows
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"{fname}: the shorter polynomial {what} (shape {sshape}) must "
                         f"broadcast into the last {sshape[0]} rows of the longer one, shape "
                         f"{rows}")
    short = _zeros_front(_fs.broadcast_to(short, rows), lshape[0] - sshape[0])
    return op(short, long) if swap else op(long, short)


def polyadd(a1: Any, a2: Any) -> Any:
    """The sum of two polynomials (the shorter one padded with leading zeros).

    Example:
        >>> polyadd([1, 2], [9, 5, 4]).tolist()
        [9, 6, 6]
    """
    return _add_sub("polyadd", a1, a2, _fe.add)


def polysub(a1: Any, a2: Any) -> Any:
    """The difference ``a1 - a2`` of two polynomials.

    Example:
        >>> polysub([2, 10, -2], [3, 10, -4]).tolist()
        [-1, 0, 2]
    """
    return _add_sub("polysub", a1, a2, _fe.subtract)


def polymul(a1: Any, a2: Any, *, trim_leading_zeros: bool | None = None) -> Any:
    """The product of two polynomials (the full convolution of their coefficients).

    NumPy first drops the factors' leading zero coefficients (keeping one coefficient): so
    does funcgrad for concrete (untraced) input, the default ``trim_leading_zeros=None``.
    Traced factors are not trimmed (their values are unknown under ``jit``/``vmap``, and
    under ``grad`` a zero leading coefficient still has a derivative), as JAX's default
    ``trim_leading_zeros=False``, which never trims; ``True`` always trims (concrete values).

    Example:
        >>> polymul([1, 2, 3], [9, 5, 1]).tolist()
        [9, 23, 38, 17, 3]
        >>> polymul([0, 0, 1, 2], [0, 3]).tolist(), polymul([0, 1], [3], trim_leading_zeros=False).tolist()
        ([3, 6], [0, 3])
    """
    a, b = (_fs.atleast_1d(v) for v in _manipulation._arrs_together(a1, a2))
    _check_1d("polymul", a, "a1")
    _check_1d("polymul", b, "a2")
    if trim_leading_zeros is not False:
        a = _trim_leading_zeros(a, trim_leading_zeros, "a1")
        b = _trim_leading_zeros(b, trim_leading_zeros, "a2")
    # An empty coefficient array is the zero polynomial [0] (NumPy's poly1d, JAX).
    a, b = (_const(numpy.zeros(1, get_aval(c).dtype), c) if get_aval(c).shape[0] == 0 else c
            for c in (a, b))
    na, nb = get_aval(a).shape[0], get_aval(b).shape[0]
    prod = _fs.ravel(_fl.outer(a, b))
    # Coefficient k of the product gathers a[i] * b[j] over i + j == k: one scatter-add with
    # static positions.
    pos = (numpy.arange(na)[:, None] + numpy.arange(nb)[None, :]).ravel()
    base = _const(numpy.zeros(na + nb - 1, dtype=get_aval(prod).dtype), prod)
    return _fi.at(base)[_const(pos, prod)].add(prod, mode="raise")


def _trim_leading_zeros(c: Any, required: bool | None, what: str) -> Any:
    """``c`` without its leading zero coefficients (one kept), as NumPy's ``poly1d``; traced
    ``c`` untouched unless ``required`` (then it needs a concrete value)."""
    if isinstance(c, Tracer) and not required:
        return c
    h = _concrete_host(c, "polymul")
    if h is None:
        raise ConcretizationError(
            f"polymul: trim_leading_zeros=True needs the concrete values of {what}; pass "
            "trim_leading_zeros=False under jit/vmap")
    nz = numpy.flatnonzero(h)
    start = int(nz[0]) if nz.size else max(h.shape[0] - 1, 0)
    return _shape.slice_in_dim(c, start, h.shape[0], 1, 0) if start else c


def polyder(p: Any, m: int = 1) -> Any:
    """The ``m``-th derivative of a polynomial.

    Example:
        >>> polyder([1, 1, 1, 1]).tolist()
        [3, 2, 1]
    """
    m = operator_index(m)
    if m < 0:
        raise ValueError("polyder: Order of derivative must be positive (see polyint)")
    p = _arr(p)
    _check_1d("polyder", p, "p")
    for _ in range(m):
        n = get_aval(p).shape[0] - 1
        if n <= 0:
            # NumPy: the derivative of a constant is [0]-like of length... an empty product.
            p = _fe.multiply(_shape.slice_in_dim(p, 0, 0, 1, 0),
                             _const(numpy.arange(0, 0, -1), p))
            continue
        p = _fe.multiply(_shape.slice_in_dim(p, 0, n, 1, 0), _const(numpy.arange(n, 0, -1), p))
    return p


def polyint(p: Any, m: int = 1, k: Any = None) -> Any:
    """The ``m``-th antiderivative of a polynomial, with integration constants ``k`` (one per
    integration, or one used for all; zeros by default).

    Example:
        >>> polyint([3, 2, 1], k=5).tolist()
        [1.0, 1.0, 1.0, 5.0]
    """
    m = operator_index(m)
    if m < 0:
        raise ValueError("polyint: Order of integral must be positive (see polyder)")
    p = _arr(p)
    _check_1d("polyint", p, "p")
    if m == 0:
        return p
    if k is None:
        k = _const(numpy.zeros(m, float), p)
    k = _fs.atleast_1d(_manipulation._arrs_together(p, k)[1])
    if get_aval(k).shape[0] == 1 and m > 1:
        k = _fs.broadcast_to(k, (m,))
    if get_aval(k).shape[0] < m:
        raise ValueError("polyint: k must be a scalar or a rank-1 array of length 1 or >m.")
    for i in range(m):
        n = get_aval(p).shape[0]
        q = _fe.true_divide(p, _const(numpy.arange(n, 0, -1), p))
        ki = _shape.slice_in_dim(k, i, i + 1, 1, 0)
        p = _fs.concatenate([q, ki], 0)
    return p


def polydiv(u: Any, v: Any, *, trim_leading_zeros: bool | None = None) -> tuple[Any, Any]:
    """Quotient and remainder of polynomial division ``u / v``.

    NumPy drops the remainder's leading (near-)zeros; funcgrad does the same for concrete input,
    and under ``jit``/``vmap`` (values unknown) drops the leading entries that division zeroes
    by construction, so the remainder has length ``len(v) - 1`` there (the default,
    ``trim_leading_zeros=None``). ``trim_leading_zeros=False`` (``jax.numpy``'s default)
    keeps the remainder at ``len(u)`` entries; ``True`` trims as NumPy (concrete values).

    Example:
        >>> q, r = polydiv([3.0, 5.0, 2.0], [2.0, 1.0])
        >>> q.tolist(), r.tolist()
        ([1.5, 1.75], [0.25])
    """
    u, v = (_fe.add(_fs.atleast_1d(w), 0.0) for w in _manipulation._arrs_together(u, v))
    _check_1d("polydiv", u, "u")
    _check_1d("polydiv", v, "v")
    dt = numpy.result_type(get_aval(u).dtype, get_aval(v).dtype)
    m, n = get_aval(u).shape[0] - 1, get_aval(v).shape[0] - 1
    # NumPy's arithmetic exactly: 1/v[0] is rounded in v's dtype before promotion.
    scale = _fe.true_divide(1.0, _shape.index_in_dim(v, 0, 0, keepdims=False))
    r = _cast(u, dt)
    qs = []
    for k in range(0, m - n + 1):
        d = _cast(_fe.multiply(scale, _shape.index_in_dim(r, k, 0, keepdims=False)), dt)
        qs.append(d)
        r = _fi.at(r)[k:k + n + 1].subtract(_fe.multiply(d, v))
    q = _fs.stack(qs, 0) if qs else _const(numpy.zeros(1, dtype=dt), u)
    if trim_leading_zeros is False:
        return q, r
    h = _concrete_host(r, "polydiv")
    if trim_leading_zeros and h is None:
        h = numpy.asarray(to_numpy(concrete_or_error(
            r, "polydiv: trim_leading_zeros=True (the remainder's length depends on its "
            "values; pass trim_leading_zeros=False under jit/vmap)")))
    if h is not None:
        start = 0
        while start < h.shape[0] - 1 and numpy.allclose(h[start], 0, rtol=1e-14):
            start += 1
    else:
        start = max(m - n + 1, 0) if n > 0 else m
    return q, _shape.slice_in_dim(r, start, get_aval(r).shape[0], 1, 0)


def _poly_from_matrix(a: Any) -> Any:
    return _linalg.eigvals(a)


def poly(seq_of_zeros: Any) -> Any:
    """Coefficients of the monic polynomial with the given roots (or of a square matrix's
    characteristic polynomial). Real when complex roots pair up (known only for concrete
    values: under ``jit``/``vmap`` complex roots give complex coefficients), and always for
    a real matrix, whose eigenvalues pair up.

    Example:
        >>> poly([1.0, 2.0]).tolist()
        [1.0, -3.0, 2.0]
    """
    z = _1d(seq_of_zeros)
    za = get_aval(z)
    # A real matrix's eigenvalues pair up (LAPACK's real eigensolver gives exact conjugates),
    # so its characteristic polynomial is real whether or not the values are known.
    real_matrix = False
    if za.ndim == 2 and za.shape[0] == za.shape[1] and za.shape[0] != 0:
        real_matrix = za.dtype.kind != "c"
        z = _poly_from_matrix(z)
    elif za.ndim != 1:
        raise ValueError("poly: input must be 1d or non-empty square 2d array.")
    else:
        kind = za.dtype.kind
        if kind not in "fc" or za.dtype == numpy.float16:
            z = _cast(z, numpy.float64 if kind != "c" else za.dtype)
    if get_aval(z).shape[0] == 0:
        return 1.0
    dt = get_aval(z).dtype
    a = _const(numpy.ones(1, dtype=dt), z)
    for i in range(get_aval(z).shape[0]):
        zi = _shape.slice_in_dim(z, i, i + 1, 1, 0)
        a = polymul(a, _fs.concatenate([_const(numpy.ones(1, dtype=dt), z), _fe.negative(zi)],
                                       0))
    if dt.kind == "c" and real_matrix:
        a = _fe.real(a)
    elif dt.kind == "c":
        h = _concrete_host(z, "poly")
        if h is not None:
            pos = numpy.sort(h[h.imag > 0])
            neg = numpy.sort(numpy.conjugate(h[h.imag < 0]))
            if len(pos) == len(neg) and numpy.all(neg == pos):
                a = _fe.real(a)
    return a


def polyfit(x: Any, y: Any, deg: int, rcond: Any = None, full: bool = False, w: Any = None,
            cov: Any = False) -> Any:
    """Least-squares polynomial fit of degree ``deg`` (coefficients highest power first);
    ``y`` may be 2-D (one fit per column). Differentiable in ``x``, ``y`` and ``w``.

    ``full=True`` also returns ``(residuals, rank, singular_values, rcond)``; ``cov=True``
    (or ``'unscaled'``) also returns the covariance matrix. NumPy's ``RankWarning`` is not
    emitted.

    Example:
        >>> x = numpy.array([0.0, 1.0, 2.0, 3.0])
        >>> numpy.round(polyfit(x, 2 * x**2 - x + 1, 2), 6).tolist()
        [2.0, -1.0, 1.0]
    """

    order = operator_index(deg) + 1
    # (Python data among x, y and w goes to the arrays' device)
    xs = _manipulation._arrs_together(x, y, *(() if w is None else (w,)))
    x, y = _fe.add(xs[0], 0.0), _fe.add(xs[1], 0.0)
    if w is not None:
        w = xs[2]
    xa, ya = get_aval(x), get_aval(y)
    if order < 1:
        raise ValueError("polyfit: expected deg >= 0")
    if xa.ndim != 1:
        raise TypeError("polyfit: expected 1D vector for x")
    if xa.shape[0] == 0:
        raise TypeError("polyfit: expected non-empty vector for x")
    if ya.ndim < 1 or ya.ndim > 2:
        raise TypeError("polyfit: expected 1D or 2D array for y")
    if xa.shape[0] != ya.shape[0]:
        raise TypeError("polyfit: expected x and y to have same length")
    if rcond is None:
        rcond = xa.shape[0] * numpy.finfo(xa.dtype).eps
    lhs = _manipulation.vander(x, order)
    rhs = y
    if w is not None:
        w = _fe.add(_arr(w), 0.0)
        if get_aval(w).ndim != 1:
            raise TypeError("polyfit: expected a 1-d array for weights")
        if get_aval(w).shape[0] != ya.shape[0]:
            raise TypeError("polyfit: expected w and y to have the same length")
        lhs = _fe.multiply(lhs, _shape.expand_dims(w, (1,)))
        rhs = _fe.multiply(rhs, w if ya.ndim == 1 else _shape.expand_dims(w, (1,)))
    scale = _fe.sqrt(_fr.sum(_fe.multiply(lhs, lhs), axis=0))
    lhs = _fe.true_divide(lhs, scale)
    c, resids, rank, s = _linalg.lstsq(lhs, rhs, rcond)
    c = _fe.true_divide(c, scale if ya.ndim == 1 else _shape.expand_dims(scale, (1,)))
    if full:
        return c, resids, rank, s, rcond
    if cov:
        vbase = _linalg.inv(_fl.dot(_fs.transpose(lhs), lhs))
        vbase = _fe.true_divide(vbase, _fl.outer(scale, scale))
        if cov == "unscaled":
            fac = 1
        else:
            if xa.shape[0] <= order:
                raise ValueError("polyfit: the number of data points must exceed order to "
                                 "scale the covariance matrix")
            fac = _fe.true_divide(resids, xa.shape[0] - order)
        if ya.ndim == 1:
            return c, _fe.multiply(vbase, fac)
        return c, _fe.multiply(_shape.expand_dims(vbase, (2,)),
                               _shape.reshape(fac, (1, 1, -1)) if not isinstance(fac, int)
                               else fac)
    return c


def _real_if_real(w: Any, real_input: bool) -> Any:
    """``w`` as real when NumPy's ``eigvals`` would give real (real input, every imaginary
    part zero); decidable only when the values are known."""
    if not real_input:
        return w
    h = _concrete_host(w, "roots")
    if h is not None and numpy.all(h.imag == 0):
        return _fe.real(w)
    return w


def _companion_eigvals(p: Any) -> Any:
    """Eigenvalues of the companion matrix of ``p`` (length >= 2), built as NumPy builds it."""
    n = get_aval(p).shape[0]
    first = _fe.true_divide(_fe.negative(_shape.slice_in_dim(p, 1, n, 1, 0)),
                            _shape.index_in_dim(p, 0, 0, keepdims=False))
    below = _const(numpy.eye(n - 2, n - 1, dtype=get_aval(p).dtype), p)
    return _linalg.eigvals(_fs.concatenate([_shape.expand_dims(first, (0,)), below], 0))


def _float_coeffs(p: Any) -> Any:
    kind = get_aval(p).dtype.kind
    return p if kind in "fc" else _cast(p, numpy.float64)


def roots(p: Any, *, strip_zeros: bool = True) -> Any:
    """The roots of the polynomial with coefficients ``p`` (highest power first), as the
    eigenvalues of its companion matrix: NumPy's values, order and dtype (real when all roots
    are real, else complex). Differentiable through ``funcgrad.numpy.linalg.eigvals``.

    ``strip_zeros=True`` (NumPy's behaviour) drops leading zero coefficients and returns
    trailing ones as zero roots, which needs concrete coefficients. ``strip_zeros=False`` (as
    in ``jax.numpy.roots``) keeps the length fixed for ``jit``/``vmap``: always
    ``len(p) - 1`` complex roots, with NaN for each leading zero coefficient, and zero roots
    last.

    Example:
        >>> roots([1.0, -3.0, 2.0]).tolist()
        [2.0, 1.0]
    """
    p = _1d(p)
    if get_aval(p).ndim != 1:
        raise ValueError("roots: Input must be a rank-1 array.")
    if not strip_zeros:
        return _roots_fixed_length(_float_coeffs(p))
    h = _concrete_host(p, "roots")
    if h is None:
        raise ConcretizationError(
            f"roots: stripping the zero coefficients (strip_zeros=True, NumPy's behaviour) "
            f"needs concrete coefficients, but got a traced array ({get_aval(p).str_short()}) under "
            "jit/vmap, where the number of roots cannot depend on the values. Pass "
            "strip_zeros=False for len(p) - 1 roots (NaN for leading zero coefficients)."
        )
    nonzero = numpy.flatnonzero(h)
    if nonzero.size == 0:
        return _const(numpy.array([]), p)
    trailing = h.shape[0] - int(nonzero[-1]) - 1
    p = _float_coeffs(_shape.slice_in_dim(p, int(nonzero[0]), int(nonzero[-1]) + 1, 1, 0))
    if get_aval(p).shape[0] > 1:
        w = _real_if_real(_companion_eigvals(p), get_aval(p).dtype.kind != "c")
    else:
        w = _const(numpy.array([]), p)  # NumPy's array([]): float64 whatever p's dtype
    if trailing:
        w = _fs.concatenate([w, _const(numpy.zeros(trailing, dtype=get_aval(w).dtype), w)], 0)
    return w


def _roots_fixed_length(p: Any) -> Any:
    n = get_aval(p).shape[0]
    cdt = numpy.result_type(get_aval(p).dtype, numpy.complex64)
    if n < 2:
        return _const(numpy.zeros(0, dtype=cdt), p)
    lead = _fr.argmin(_fe.equal(p, 0))  # leading zero coefficients (n if all are zero)
    lead = _fe.where(_fr.all(_fe.equal(p, 0)), n, lead)
    # Leading zeros rolled to the end become zero roots; an all-zero p gets dummy
    # coefficients so the companion matrix stays finite (every root is NaN then).
    idx = _fe.remainder(_fe.add(_const(numpy.arange(n), p), lead), n)
    q = _fe.where(_fe.equal(lead, n), _fc.ones_like(p), _fi.take(p, idx))
    w = _companion_eigvals(q)
    order = _fr.argsort(_fe.equal(w, 0), stable=True)
    w = _fi.take(w, order)
    keep = _fe.less(_const(numpy.arange(n - 1), p), n - 1 - lead)
    return _fe.where(keep, w, _const(numpy.array(complex(numpy.nan, numpy.nan), dtype=cdt), w))
