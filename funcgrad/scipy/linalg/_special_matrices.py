"""Special matrices of funcgrad.scipy.linalg: block_diag, toeplitz, circulant, hankel,
companion, hilbert, pascal, and tril/triu."""

from __future__ import annotations

import math
from typing import Any

import numpy

import funcgrad.numpy as fnp
from funcgrad.avals import get_aval
from funcgrad.backend import device_put
from funcgrad.scipy.linalg._util import const_like

__all__ = ["block_diag", "toeplitz", "circulant", "hankel", "companion", "hilbert", "pascal",
           "tril", "triu", "hadamard", "dft", "helmert", "leslie", "invhilbert", "fiedler",
           "convolution_matrix", "fiedler_companion", "invpascal"]


def _batched(fn: Any, signature: str, *arrays: Any, **kwargs: Any) -> Any:
    """``fn`` of 1-D arrays mapped over the leading axes of ``arrays`` (broadcast against each
    other), as SciPy 1.17 and JAX batch the constructors of structured matrices."""
    return fnp.vectorize(lambda *a: fn(*a, **kwargs), signature=signature)(*arrays)


def _any_batched(*arrays: Any) -> bool:
    return any(a is not None and get_aval(a).ndim > 1 for a in arrays)


def block_diag(*arrs: Any) -> Any:
    """Block-diagonal matrix of the arguments (scalars and 1-D arrays count as 1-row
    matrices); ``block_diag()`` is ``(1, 0)``. Leading axes beyond the last two are batch
    axes, broadcast together as SciPy 1.17's: ``(..., m_i, n_i)`` blocks give
    ``(..., sum m_i, sum n_i)``. Differentiable in every block.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.block_diag(np.array([[1, 2]]), 3)
        array([[1, 2, 0],
               [0, 0, 3]])
        >>> fsl.block_diag(np.ones((5, 2, 2)), np.eye(3)).shape
        (5, 5, 5)
    """
    if not arrs:
        return fnp.zeros((1, 0))
    mats = [fnp.atleast_2d(fnp.asarray(a)) for a in arrs]
    shapes = [get_aval(m).shape for m in mats]
    try:
        batch = numpy.broadcast_shapes(*(shape[:-2] for shape in shapes))
    except ValueError:
        raise ValueError("block_diag: the batch shapes (all but the last two axes) of "
                         f"{', '.join(str(shape) for shape in shapes)} do not broadcast") from None
    dt = numpy.result_type(*[get_aval(m).dtype for m in mats])
    cols = sum(shape[-1] for shape in shapes)
    rows, start = [], 0
    for m, shape in zip(mats, shapes):
        c = shape[-1]
        m = fnp.broadcast_to(m.astype(dt), batch + shape[-2:])
        pad = [(0, 0)] * (len(batch) + 1) + [(start, cols - start - c)]
        rows.append(fnp.pad(m, pad))
        start += c
    return fnp.concatenate(rows, axis=-2)


def toeplitz(c: Any, r: Any = None) -> Any:
    """Toeplitz matrix with first column ``c`` and first row ``r`` (``r[0]`` ignored);
    ``r=None`` means ``conj(c)``. Leading axes of ``c`` and ``r`` are batch axes (broadcast):
    ``(..., m)`` and ``(..., n)`` give ``(..., m, n)``, as SciPy 1.17 and JAX.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.toeplitz(np.array([1.0, 2.0, 3.0]), np.array([1.0, 4.0]))
        array([[1., 4.],
               [2., 1.],
               [3., 2.]])
    """
    c = fnp.atleast_1d(fnp.asarray(c))
    r = None if r is None else fnp.atleast_1d(fnp.asarray(r))
    if _any_batched(c, r):
        if r is None:
            return _batched(toeplitz, "(m)->(m,m)", c)
        return _batched(toeplitz, "(m),(n)->(m,n)", c, r)
    r = fnp.conj(c) if r is None else r
    m, n = get_aval(c).shape[0], get_aval(r).shape[0]
    # vals = [c[::-1], r[1:]]; entry (i, j) is vals[m - 1 - i + j].
    vals = fnp.concatenate([c[::-1], r[1:]])
    idx = (m - 1) - numpy.arange(m)[:, None] + numpy.arange(n)[None, :]
    return vals[const_like(vals, idx)]


def circulant(c: Any) -> Any:
    """Circulant matrix with first column ``c``; ``(..., n)`` gives ``(..., n, n)`` (leading
    axes are batch axes, as SciPy and JAX).

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.circulant(np.array([1, 2, 3]))
        array([[1, 3, 2],
               [2, 1, 3],
               [3, 2, 1]])
    """
    c = fnp.atleast_1d(fnp.asarray(c))
    if _any_batched(c):
        return _batched(circulant, "(n)->(n,n)", c)
    n = get_aval(c).shape[0]
    idx = (numpy.arange(n)[:, None] - numpy.arange(n)[None, :]) % max(n, 1)
    return c[const_like(c, idx)]


def hankel(c: Any, r: Any = None) -> Any:
    """Hankel matrix with first column ``c`` and last row ``r`` (``r[0]`` ignored);
    ``r=None`` means zeros. Leading axes of ``c`` and ``r`` are batch axes, as JAX's (SciPy
    1.17 still flattens them).

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.hankel(np.array([1, 2, 3]))
        array([[1, 2, 3],
               [2, 3, 0],
               [3, 0, 0]])
    """
    c = fnp.atleast_1d(fnp.asarray(c))
    r = None if r is None else fnp.atleast_1d(fnp.asarray(r))
    if _any_batched(c, r):
        if r is None:
            return _batched(hankel, "(m)->(m,m)", c)
        return _batched(hankel, "(m),(n)->(m,n)", c, r)
    r = fnp.zeros_like(c) if r is None else r
    m, n = get_aval(c).shape[0], get_aval(r).shape[0]
    vals = fnp.concatenate([c, r[1:]])
    idx = numpy.arange(m)[:, None] + numpy.arange(n)[None, :]
    return vals[const_like(vals, idx)]


def companion(a: Any) -> Any:
    """Companion matrix of the polynomial with coefficients ``a`` (highest degree first):
    first row ``-a[1:] / a[0]``, ones on the sub-diagonal. ``(..., n)`` gives
    ``(..., n - 1, n - 1)``.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.companion(np.array([1.0, -10.0, 31.0, -30.0]))
        array([[ 10., -31.,  30.],
               [  1.,   0.,   0.],
               [  0.,   1.,   0.]])
    """
    a = fnp.asarray(a)
    if _any_batched(a):
        return _batched(companion, "(n)->(k,k)", a)
    if get_aval(a).ndim != 1 or get_aval(a).shape[0] < 2:
        raise ValueError("companion: a must be 1-D with at least two coefficients, got shape "
                         f"{get_aval(a).shape}")
    n = get_aval(a).shape[0] - 1
    first = -a[1:] / a[0]
    dt = get_aval(first).dtype
    return fnp.concatenate([first[None, :], const_like(first, numpy.eye(n - 1, n, dtype=dt))], axis=0)


def hilbert(n: int) -> Any:
    """The ``n x n`` Hilbert matrix ``1 / (i + j + 1)`` (float64).

    Example:
        >>> import funcgrad.scipy.linalg as fsl
        >>> fsl.hilbert(2)
        array([[1.        , 0.5       ],
               [0.5       , 0.33333333]])
    """
    i = numpy.arange(int(n))
    return device_put(1.0 / (i[:, None] + i[None, :] + 1.0))


def pascal(n: int, kind: str = "symmetric", exact: bool = True) -> Any:
    """The ``n x n`` Pascal matrix: ``kind`` ``"symmetric"`` (``C(i + j, i)``), ``"lower"``
    or ``"upper"``; uint64 when ``exact``, float64 otherwise.

    Example:
        >>> import funcgrad.scipy.linalg as fsl
        >>> fsl.pascal(3)
        array([[1, 1, 1],
               [1, 2, 3],
               [1, 3, 6]], dtype=uint64)
    """
    if kind not in ("symmetric", "lower", "upper"):
        raise ValueError(f"pascal: kind must be 'symmetric', 'lower', or 'upper', got {kind!r}")
    n = int(n)
    if kind == "symmetric":
        vals = [[math.comb(i + j, i) for j in range(n)] for i in range(n)]
    else:
        vals = [[math.comb(i, j) if j <= i else 0 for j in range(n)] for i in range(n)]
    if exact and n and max(max(row) for row in vals) > numpy.iinfo(numpy.uint64).max:
        # SciPy returns an object array of Python integers here, which no funcgrad array holds
        raise ValueError(f"pascal: the entries of the {n} x {n} {kind} Pascal matrix exceed "
                         "uint64 with exact=True (SciPy returns Python integers in an object "
                         "array then); pass exact=False for float64")
    out = numpy.array(vals, dtype=numpy.uint64 if exact else numpy.float64).reshape(n, n)
    return device_put(out if kind != "upper" else out.T)


def tril(m: Any, k: int = 0) -> Any:
    """``m`` with the entries above the ``k``-th diagonal zeroed (SciPy's old ``tril``;
    ``funcgrad.numpy.tril``).

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.tril(np.ones((2, 2)))
        array([[1., 0.],
               [1., 1.]])
    """
    return fnp.tril(m, k)


def triu(m: Any, k: int = 0) -> Any:
    """``m`` with the entries below the ``k``-th diagonal zeroed (``funcgrad.numpy.triu``).

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.triu(np.ones((2, 2)))
        array([[1., 1.],
               [0., 1.]])
    """
    return fnp.triu(m, k)


def hadamard(n: int, dtype: Any = int) -> Any:
    """The ``n x n`` Hadamard matrix (Sylvester's construction; ``n`` a power of 2).

    Example:
        >>> import funcgrad.scipy.linalg as fsl
        >>> fsl.hadamard(2)
        array([[ 1,  1],
               [ 1, -1]])
    """
    n = int(n)
    lg = int(math.log2(n)) if n > 0 else -1
    if n < 1 or 2 ** lg != n:
        raise ValueError(f"hadamard: n must be a positive integer and a power of 2, got {n}")
    h = numpy.array([[1]], dtype=dtype)
    for _ in range(lg):
        h = numpy.block([[h, h], [h, -h]])
    return device_put(h)


def dft(n: int, scale: Any = None, *, dtype: Any = None) -> Any:
    """The ``n x n`` discrete Fourier transform matrix ``exp(-2 pi i j k / n)``; ``scale``
    ``None``, ``"sqrtn"`` (divided by ``sqrt(n)``) or ``"n"``; ``dtype`` a complex dtype
    (complex128 by default; JAX's keyword).

    Example:
        >>> import funcgrad.scipy.linalg as fsl
        >>> fsl.dft(2).real
        array([[ 1.,  1.],
               [ 1., -1.]])
    """
    if scale not in (None, "sqrtn", "n"):
        raise ValueError(f"dft: scale must be None, 'sqrtn', or 'n'; {scale!r} is not valid")
    dt = numpy.dtype(numpy.complex128 if dtype is None else dtype)
    if dt.kind != "c":
        raise ValueError(f"dft: dtype must be complex, got {dt}")
    n = int(n)
    jk = numpy.outer(numpy.arange(n), numpy.arange(n)) % max(n, 1)
    m = numpy.exp(-2j * numpy.pi * jk / max(n, 1))
    if scale == "sqrtn":
        m = m / math.sqrt(n)
    elif scale == "n":
        m = m / n
    return device_put(m.astype(dt))


def helmert(n: int, full: bool = False) -> Any:
    """The Helmert matrix of order ``n`` (without its first row unless ``full``).

    Example:
        >>> import funcgrad.scipy.linalg as fsl
        >>> fsl.helmert(2, full=True).round(6)
        array([[ 0.707107,  0.707107],
               [ 0.707107, -0.707107]])
    """
    n = int(n)
    h = numpy.tril(numpy.ones((n, n)), -1) - numpy.diag(numpy.arange(n))
    d = numpy.arange(n) * numpy.arange(1, n + 1)
    h[0] = 1
    d[0] = n
    h = h / numpy.sqrt(d)[:, numpy.newaxis]
    return device_put(h if full else h[1:])


def leslie(f: Any, s: Any) -> Any:
    """Leslie matrix: fecundity ``f`` (length ``n``) in the first row, survival ``s``
    (length ``n - 1``) on the subdiagonal; leading axes are batch axes. Differentiable in both.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.leslie(np.array([0.1, 2.0, 1.0]), np.array([0.2, 0.8]))
        array([[0.1, 2. , 1. ],
               [0.2, 0. , 0. ],
               [0. , 0.8, 0. ]])
    """
    f, s = fnp.asarray(f), fnp.asarray(s)
    if _any_batched(f, s):
        return _batched(leslie, "(n),(k)->(n,n)", f, s)
    if get_aval(f).ndim != 1 or get_aval(s).ndim != 1:
        raise ValueError("leslie: f and s must be 1-D")
    n = get_aval(f).shape[0]
    if get_aval(s).shape[0] < 1:
        raise ValueError("leslie: the length of s must be at least 1")
    if get_aval(s).shape[0] != n - 1:
        raise ValueError(f"leslie: s must have length len(f) - 1 = {n - 1}, got "
                         f"{get_aval(s).shape[0]}")
    dt = numpy.result_type(get_aval(f).dtype, get_aval(s).dtype)
    sub = fnp.pad(fnp.diag(s.astype(dt)), ((0, 0), (0, 1)))
    return fnp.concatenate([f.astype(dt)[None, :], sub], axis=0)


def invhilbert(n: int, exact: bool = False) -> Any:
    """Inverse of the ``n x n`` Hilbert matrix, from its closed form (float64; integers when
    ``exact``, int64 — SciPy switches to Python integers beyond ``n = 14``).

    Example:
        >>> import funcgrad.scipy.linalg as fsl
        >>> fsl.invhilbert(2)
        array([[ 4., -6.],
               [-6., 12.]])
    """
    n = int(n)
    vals = [[(-1) ** (i + j) * (i + j + 1) * math.comb(n + i, n - j - 1)
             * math.comb(n + j, n - i - 1) * math.comb(i + j, i) ** 2 for j in range(n)]
            for i in range(n)]
    if exact and n > 14:
        raise ValueError("invhilbert: exact=True overflows int64 beyond n = 14")
    return device_put(numpy.array(vals, dtype=numpy.int64 if exact else numpy.float64)
                      .reshape(n, n))


def fiedler(a: Any) -> Any:
    """Fiedler matrix ``|a[i] - a[j]|`` of ``a`` (leading axes are batch axes). Differentiable.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.fiedler(np.array([1, 4, 12]))
        array([[ 0,  3, 11],
               [ 3,  0,  8],
               [11,  8,  0]])
    """
    a = fnp.atleast_1d(fnp.asarray(a))
    if _any_batched(a):
        return _batched(fiedler, "(n)->(n,n)", a)
    if get_aval(a).ndim != 1:
        raise ValueError(f"fiedler: a must be 1-D, got shape {get_aval(a).shape}")
    return fnp.abs(a[:, None] - a[None, :])


def convolution_matrix(a: Any, n: int, mode: str = "full") -> Any:
    """The matrix ``A`` with ``A @ v == numpy.convolve(a, v, mode)`` for ``v`` of length
    ``n`` (``mode`` ``"full"``, ``"valid"`` or ``"same"``); leading axes of ``a`` are batch
    axes. Differentiable in ``a``.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.convolution_matrix(np.array([1.0, 2.0]), 2)
        array([[1., 0.],
               [2., 1.],
               [0., 2.]])
    """
    a = fnp.asarray(a)
    if _any_batched(a):
        return _batched(convolution_matrix, "(m)->(p,q)", a, n=n, mode=mode)
    if get_aval(a).ndim != 1 or get_aval(a).shape[0] == 0:
        raise ValueError(f"convolution_matrix: a must be 1-D and not empty, got shape "
                         f"{get_aval(a).shape}")
    if mode not in ("full", "valid", "same"):
        raise ValueError("convolution_matrix: 'mode' argument must be one of ('full', "
                         f"'valid', 'same'), got {mode!r}")
    n = int(n)
    if n < 1:
        raise ValueError(f"convolution_matrix: n must be at least 1, got {n}")
    m = get_aval(a).shape[0]
    az = fnp.pad(a, (0, n - 1))
    raz = fnp.pad(a[::-1], (0, n - 1))
    total = m + n - 1
    if mode == "full":
        col0, row0 = az, raz[total - n:]
    else:
        trim = min(n, m) - 1
        tb = trim // 2 if mode == "same" else trim
        te = trim - tb if mode == "same" else trim
        col0 = az[tb:total - te]
        row0 = raz[total - n - tb:total - tb]
    return toeplitz(col0, row0)


def fiedler_companion(a: Any) -> Any:
    """The Fiedler companion matrix of the polynomial with coefficients ``a`` (highest degree
    first): pentadiagonal, with the roots of the polynomial as eigenvalues (SciPy's and
    JAX's); leading axes are batch axes. Differentiable in ``a``.

    Example:
        >>> import numpy as np, funcgrad.scipy.linalg as fsl
        >>> fsl.fiedler_companion(np.array([1.0, 2.0, 3.0, 4.0]))
        array([[-2., -3.,  1.],
               [ 1.,  0.,  0.],
               [ 0., -4.,  0.]])
    """
    a = fnp.asarray(a)
    if _any_batched(a):
        return _batched(fiedler_companion, "(n)->(k,k)", a)
    shape = get_aval(a).shape
    if len(shape) != 1:
        raise ValueError(f"fiedler_companion: a must be 1-D, got shape {shape}")
    if shape[0] <= 2:
        if shape[0] == 2:
            return (-(a / a[0])[-1]).reshape(1, 1)
        return fnp.zeros((0,), get_aval(a).dtype)
    if get_aval(a).dtype.kind in "biu":
        a = a.astype(numpy.float64)
    a = a / a[0]
    n = shape[0] - 1
    rows = [0, 1] + list(range(3, n, 2)) + list(range(2, n, 2)) + list(range(0, n - 2, 2)) \
        + list(range(0, n - 1, 2))
    cols = [0, 0] + list(range(1, n - 2, 2)) + list(range(1, n - 1, 2)) \
        + list(range(2, n, 2)) + list(range(1, n, 2))
    one = fnp.ones((), get_aval(a).dtype)
    vals = fnp.concatenate([-a[1:2], one[None], fnp.ones(len(range(3, n, 2)), get_aval(a).dtype),
                            -a[3::2], fnp.ones(len(range(0, n - 2, 2)), get_aval(a).dtype),
                            -a[2::2]])
    return fnp.at(fnp.zeros((n, n), get_aval(a).dtype))[
        numpy.array(rows, numpy.intp), numpy.array(cols, numpy.intp)].set(vals)


def invpascal(n: int, kind: str = "symmetric", exact: bool = True) -> Any:
    """The inverse of the ``n x n`` Pascal matrix (SciPy's ``invpascal``): ``kind``
    ``"symmetric"``, ``"lower"`` or ``"upper"``; int64 when ``exact`` (the entries are
    integers), float64 otherwise. JAX's ``invpascal(n, kind)`` returns float64 (take
    ``exact=False``).

    Example:
        >>> import funcgrad.scipy.linalg as fsl
        >>> fsl.invpascal(3).tolist()
        [[3, -3, 1], [-3, 5, -2], [1, -2, 1]]
    """
    kind = "symmetric" if kind is None else kind
    if kind not in ("symmetric", "lower", "upper"):
        raise ValueError(f"invpascal: kind must be 'symmetric', 'lower', or 'upper', got "
                         f"{kind!r}")
    n = int(n)
    # inv(lower Pascal)[i, j] = (-1)^(i - j) C(i, j); inv(symmetric) = inv(L)^T inv(L).
    low = [[(-1) ** (i - j) * math.comb(i, j) if j <= i else 0 for j in range(n)]
           for i in range(n)]
    if kind == "lower":
        vals = low
    elif kind == "upper":
        vals = [list(r) for r in zip(*low)]
    else:
        vals = [[sum(low[k][i] * low[k][j] for k in range(n)) for j in range(n)]
                for i in range(n)]
    out = numpy.array(vals, dtype=numpy.int64 if exact else numpy.float64).reshape(n, n)
    return device_put(out)
