"""Multivariate normal distributions: full covariance (``MultivariateNormal``, given a
covariance, precision or Cholesky factor) and low-rank-plus-diagonal
(``LowRankMultivariateNormal``).

>>> import numpy as np
>>> from funcgrad_nn.distributions import MultivariateNormal
>>> d = MultivariateNormal(np.zeros(2), covariance_matrix=np.array([[2.0, 0.5], [0.5, 1.0]]))
>>> round(float(d.log_prob(np.array([1.0, -1.0]))), 4), d.rsample((3,), key=0).shape
(-3.2605, (3, 2))
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy

import funcgrad
import funcgrad.numpy as fnp
import funcgrad.random as frandom
import funcgrad.scipy.linalg as fsl
import funcgrad.scipy.special as fsp
from funcgrad.core import is_tracer
from funcgrad_nn.distributions import constraints
from funcgrad_nn.distributions.continuous import Chi2
from funcgrad_nn.distributions.distribution import Distribution
from funcgrad_nn.distributions.exp_family import ExponentialFamily
from funcgrad_nn.distributions.utils import _float_dtype, as_float, lazy_property, make_key

__all__ = ["LowRankMultivariateNormal", "MultivariateNormal", "Wishart"]


def _mT(x: Any) -> Any:
    return fnp.swapaxes(x, -1, -2)


def _batch_mv(bmat: Any, bvec: Any) -> Any:
    return fnp.matmul(bmat, bvec[..., None])[..., 0]


def _batch_mahalanobis(bL: Any, bx: Any) -> Any:
    """``x^T (L L^T)^-1 x`` for a batch of lower-triangular ``L`` and vectors ``x`` whose
    batch shapes broadcast."""
    n = bx.shape[-1]
    if bL.ndim == 2:
        # one factor for every vector: a single triangular solve with the vectors as the
        # columns of the right-hand side (not one solve per sample)
        cols = fnp.reshape(bx, (-1, n)).T
        y = fsl.solve_triangular(bL, cols, lower=True)
        return fnp.reshape(fnp.sum(y ** 2, axis=0), tuple(bx.shape[:-1]))
    batch = fnp.broadcast_shapes(tuple(bL.shape[:-2]), tuple(bx.shape[:-1]))
    L = fnp.broadcast_to(bL, batch + (n, n))
    x = fnp.broadcast_to(bx, batch + (n,))
    y = fsl.solve_triangular(L, x[..., None], lower=True)[..., 0]
    return fnp.sum(y ** 2, axis=-1)


def _precision_to_scale_tril(P: Any) -> Any:
    # torch's route: the Cholesky factor of the flipped precision gives the inverse of the
    # covariance's lower Cholesky factor without inverting P
    Lf = fnp.linalg.cholesky(fnp.flip(P, axis=(-2, -1)))
    L_inv = _mT(fnp.flip(Lf, axis=(-2, -1)))
    eye = fnp.broadcast_to(fnp.eye(P.shape[-1], dtype=P.dtype), tuple(P.shape))
    return fsl.solve_triangular(L_inv, eye, lower=True)


def _diag(x: Any) -> Any:
    return fnp.diagonal(x, axis1=-2, axis2=-1)


def _diag_embed(v: Any) -> Any:
    return v[..., None] * fnp.eye(v.shape[-1], dtype=v.dtype)


def _broadcast(shape: tuple[int, ...], *shapes: tuple[int, ...], what: str) -> tuple[int, ...]:
    try:
        return fnp.broadcast_shapes(shape, *shapes)
    except ValueError:
        raise ValueError(f"Incompatible batch shapes: {what}") from None


class MultivariateNormal(Distribution):
    """The multivariate normal distribution with mean ``loc`` and exactly one of
    ``covariance_matrix``, ``precision_matrix`` or ``scale_tril`` (a lower Cholesky factor
    of the covariance).

    >>> import numpy as np
    >>> d = MultivariateNormal(np.zeros(2), scale_tril=np.array([[1.0, 0.0], [0.5, 2.0]]))
    >>> d.covariance_matrix.tolist(), round(float(d.entropy()), 4)
    ([[1.0, 0.5], [0.5, 4.25]], 3.531)
    """

    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True
    _expand_params = {"loc": 1, "covariance_matrix": 2, "precision_matrix": 2, "scale_tril": 2}

    def __init__(self, loc: Any, covariance_matrix: Any = None, precision_matrix: Any = None,
                 scale_tril: Any = None, validate_args: bool | None = None) -> None:
        dt = _float_dtype(*[v for v in (loc, covariance_matrix, precision_matrix, scale_tril)
                            if v is not None])
        loc = as_float(loc, dt)
        if loc.ndim < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [(n, v) for n, v in (("covariance_matrix", covariance_matrix),
                                     ("precision_matrix", precision_matrix),
                                     ("scale_tril", scale_tril)) if v is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        name, mat = given[0]
        mat = as_float(mat, dt)
        if mat.ndim < 2:
            raise ValueError(f"{name} matrix must be at least two-dimensional, "
                             "with optional leading batch dimensions" if name == "scale_tril"
                             else f"{name} must be at least two-dimensional, "
                             "with optional leading batch dimensions")
        n = loc.shape[-1]
        if tuple(mat.shape[-2:]) != (n, n):
            raise ValueError(f"{name} must be a batch of {n} x {n} matrices to match loc's "
                             f"event shape ({n},), got shape {tuple(mat.shape)}")
        batch_shape = _broadcast(tuple(mat.shape[:-2]), tuple(loc.shape[:-1]),
                                 what=f"loc {tuple(loc.shape)}, {name} {tuple(mat.shape)}")
        setattr(self, name, fnp.broadcast_to(mat, batch_shape + (n, n)))
        self.loc = fnp.broadcast_to(loc, batch_shape + (n,))
        super().__init__(batch_shape, (n,), validate_args=validate_args)
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = mat
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = fnp.linalg.cholesky(mat)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(mat)

    def _full(self, m: Any) -> Any:
        return fnp.broadcast_to(m, self._batch_shape + self._event_shape * 2)

    @lazy_property
    def scale_tril(self) -> Any:
        return self._full(self._unbroadcasted_scale_tril)

    @lazy_property
    def covariance_matrix(self) -> Any:
        L = self._unbroadcasted_scale_tril
        return self._full(fnp.matmul(L, _mT(L)))

    @lazy_property
    def precision_matrix(self) -> Any:
        L = self._unbroadcasted_scale_tril
        eye = fnp.broadcast_to(fnp.eye(L.shape[-1], dtype=L.dtype), tuple(L.shape))
        L_inv = fsl.solve_triangular(L, eye, lower=True)
        return self._full(fnp.matmul(_mT(L_inv), L_inv))

    @property
    def mean(self) -> Any:
        return self.loc

    @property
    def mode(self) -> Any:
        return self.loc

    @property
    def variance(self) -> Any:
        return fnp.broadcast_to(fnp.sum(self._unbroadcasted_scale_tril ** 2, axis=-1),
                                self._batch_shape + self._event_shape)

    def rsample(self, sample_shape: Any = (), *, key: Any = None) -> Any:
        eps = frandom.normal(make_key(key, "MultivariateNormal.rsample", self._like),
                             self._extended_shape(sample_shape), dtype=self.loc.dtype)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def _half_log_det(self) -> Any:
        return fnp.sum(fnp.log(_diag(self._unbroadcasted_scale_tril)), axis=-1)

    def log_prob(self, value: Any) -> Any:
        value = self._value(value)
        m = _batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + m) - self._half_log_det()

    def entropy(self) -> Any:
        h = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return fnp.broadcast_to(h, self._batch_shape)


def _batch_capacitance_tril(W: Any, D: Any) -> Any:
    """Cholesky factor of ``I + W^T D^-1 W``."""
    m = W.shape[-1]
    K = fnp.matmul(_mT(W) / D[..., None, :], W)
    return fnp.linalg.cholesky(K + fnp.eye(m, dtype=K.dtype))


class LowRankMultivariateNormal(Distribution):
    """A multivariate normal with covariance ``cov_factor @ cov_factor.T + diag(cov_diag)``;
    log densities use the Woodbury identity and the matrix determinant lemma, so only the
    small ``rank x rank`` capacitance matrix is factorised.

    >>> import numpy as np
    >>> d = LowRankMultivariateNormal(np.zeros(2), np.array([[1.0], [0.0]]), np.ones(2))
    >>> d.covariance_matrix.tolist(), round(float(d.log_prob(np.zeros(2))), 4)
    ([[2.0, 0.0], [0.0, 1.0]], -2.1845)
    """

    arg_constraints = {"loc": constraints.real_vector,
                       "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True
    _expand_params = {"loc": 1, "cov_factor": 2, "cov_diag": 1}

    def __init__(self, loc: Any, cov_factor: Any, cov_diag: Any,
                 validate_args: bool | None = None) -> None:
        dt = _float_dtype(loc, cov_factor, cov_diag)
        loc, cov_factor, cov_diag = (as_float(v, dt) for v in (loc, cov_factor, cov_diag))
        if loc.ndim < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = tuple(loc.shape[-1:])
        if cov_factor.ndim < 2:
            raise ValueError("cov_factor must be at least two-dimensional, "
                             "with optional leading batch dimensions")
        if tuple(cov_factor.shape[-2:-1]) != event_shape:
            raise ValueError(f"cov_factor must be a batch of matrices with shape "
                             f"{event_shape[0]} x m")
        if tuple(cov_diag.shape[-1:]) != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        shape = _broadcast(tuple(loc.shape) + (1,), tuple(cov_factor.shape),
                           tuple(cov_diag.shape) + (1,),
                           what=f"loc {tuple(loc.shape)}, cov_factor {tuple(cov_factor.shape)}, "
                                f"cov_diag {tuple(cov_diag.shape)}")
        self.cov_factor = fnp.broadcast_to(cov_factor, shape)
        self.loc = fnp.broadcast_to(loc, shape[:-1])
        self.cov_diag = fnp.broadcast_to(cov_diag, shape[:-1])
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _batch_capacitance_tril(cov_factor, cov_diag)
        super().__init__(shape[:-2], event_shape, validate_args=validate_args)

    def _full(self, m: Any) -> Any:
        return fnp.broadcast_to(m, self._batch_shape + self._event_shape * 2)

    @property
    def mean(self) -> Any:
        return self.loc

    @property
    def mode(self) -> Any:
        return self.loc

    @property
    def variance(self) -> Any:
        return fnp.broadcast_to(fnp.sum(self._unbroadcasted_cov_factor ** 2, axis=-1)
                                + self._unbroadcasted_cov_diag,
                                self._batch_shape + self._event_shape)

    @lazy_property
    def scale_tril(self) -> Any:
        n = self._event_shape[0]
        d_sqrt = fnp.sqrt(self._unbroadcasted_cov_diag)[..., None]
        dw = self._unbroadcasted_cov_factor / d_sqrt
        K = fnp.matmul(dw, _mT(dw)) + fnp.eye(n, dtype=dw.dtype)
        return self._full(d_sqrt * fnp.linalg.cholesky(K))

    @lazy_property
    def covariance_matrix(self) -> Any:
        W = self._unbroadcasted_cov_factor
        return self._full(fnp.matmul(W, _mT(W)) + _diag_embed(self._unbroadcasted_cov_diag))

    @lazy_property
    def precision_matrix(self) -> Any:
        D = self._unbroadcasted_cov_diag
        wt_dinv = _mT(self._unbroadcasted_cov_factor) / D[..., None, :]
        C = self._capacitance_tril
        batch = fnp.broadcast_shapes(tuple(C.shape[:-2]), tuple(wt_dinv.shape[:-2]))
        A = fsl.solve_triangular(fnp.broadcast_to(C, batch + tuple(C.shape[-2:])),
                                 fnp.broadcast_to(wt_dinv, batch + tuple(wt_dinv.shape[-2:])),
                                 lower=True)
        return self._full(_diag_embed(1 / D) - fnp.matmul(_mT(A), A))

    def rsample(self, sample_shape: Any = (), *, key: Any = None) -> Any:
        shape = self._extended_shape(sample_shape)
        w_shape = shape[:-1] + tuple(self.cov_factor.shape[-1:])
        k1, k2 = frandom.split(make_key(key, "LowRankMultivariateNormal.rsample", self._like))
        eps_w = frandom.normal(k1, w_shape, dtype=self.loc.dtype)
        eps_d = frandom.normal(k2, shape, dtype=self.loc.dtype)
        return (self.loc + _batch_mv(self._unbroadcasted_cov_factor, eps_w)
                + fnp.sqrt(self._unbroadcasted_cov_diag) * eps_d)

    def _log_det(self) -> Any:
        return (2 * fnp.sum(fnp.log(_diag(self._capacitance_tril)), axis=-1)
                + fnp.sum(fnp.log(self._unbroadcasted_cov_diag), axis=-1))

    def log_prob(self, value: Any) -> Any:
        value = self._value(value)
        diff = value - self.loc
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        wt_dinv_x = _batch_mv(_mT(W) / D[..., None, :], diff)
        m = (fnp.sum(diff ** 2 / D, axis=-1)
             - _batch_mahalanobis(self._capacitance_tril, wt_dinv_x))
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + self._log_det() + m)

    def entropy(self) -> Any:
        h = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._log_det())
        return fnp.broadcast_to(h, self._batch_shape)

    def _expanded(self, source: Distribution, batch_shape: tuple[int, ...]) -> None:
        pass  # the unbroadcasted factors and the capacitance stay as they are


def _solve_lower_b(L: Any, B: Any) -> Any:
    """``L^-1 B`` for lower-triangular ``L`` with batch shapes that broadcast."""
    batch = fnp.broadcast_shapes(tuple(L.shape[:-2]), tuple(B.shape[:-2]))
    return fsl.solve_triangular(fnp.broadcast_to(L, batch + tuple(L.shape[-2:])),
                                fnp.broadcast_to(B, batch + tuple(B.shape[-2:])), lower=True)


def _mvdigamma(x: Any, p: int) -> Any:
    return fnp.sum(fsp.digamma(x[..., None] - fnp.arange(p, dtype=x.dtype) / 2), axis=-1)


class Wishart(ExponentialFamily):
    """The Wishart distribution over ``p x p`` positive-definite matrices with ``df``
    degrees of freedom and scale given by exactly one of ``covariance_matrix``,
    ``precision_matrix`` or ``scale_tril``. ``rsample`` is Bartlett's construction
    (differentiable through the chi-squared diagonal); the rare singular draws (``df``
    between ``p - 1`` and ``p``) are redrawn a few times, as torch does under tracing.

    >>> import numpy as np
    >>> d = Wishart(np.array(4.0), covariance_matrix=np.eye(2))
    >>> d.mean.tolist(), round(float(d.log_prob(np.eye(2) * 3.0)), 4)
    ([[4.0, 0.0], [0.0, 4.0]], -5.1256)
    """

    support = constraints.positive_definite
    has_rsample = True
    _expand_params = {"df": 0, "covariance_matrix": 2, "precision_matrix": 2, "scale_tril": 2}

    @property
    def arg_constraints(self) -> dict[str, constraints.Constraint]:  # type: ignore[override]
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df: Any, covariance_matrix: Any = None, precision_matrix: Any = None,
                 scale_tril: Any = None, validate_args: bool | None = None) -> None:
        given = [(n, v) for n, v in (("covariance_matrix", covariance_matrix),
                                     ("precision_matrix", precision_matrix),
                                     ("scale_tril", scale_tril)) if v is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        name, mat = given[0]
        dt = _float_dtype(df, mat)
        mat = as_float(mat, dt)
        if mat.ndim < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        p = mat.shape[-1]
        if mat.shape[-2] != p:
            raise ValueError(f"{name} must be a batch of square matrices, got shape "
                             f"{tuple(mat.shape)}")
        df = as_float(df, dt)
        batch_shape = _broadcast(tuple(mat.shape[:-2]), tuple(df.shape),
                                 what=f"df {tuple(df.shape)}, {name} {tuple(mat.shape)}")
        self.df = fnp.broadcast_to(df, batch_shape)
        if not is_tracer(self.df):
            dfv = numpy.asarray(funcgrad.to_numpy(self.df))
            if numpy.any(dfv <= p - 1):
                raise ValueError(f"Value of df={dfv} expected to be greater than ndim - 1 = "
                                 f"{p - 1}.")
            if numpy.any(dfv < p):
                warnings.warn("Low df values detected. Singular samples are highly likely to "
                              "occur for ndim - 1 < df < ndim.", stacklevel=2)
        setattr(self, name, fnp.broadcast_to(mat, batch_shape + (p, p)))
        super().__init__(batch_shape, (p, p), validate_args=validate_args)
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = mat
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = fnp.linalg.cholesky(mat)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(mat)

    def _full(self, m: Any) -> Any:
        return fnp.broadcast_to(m, self._batch_shape + self._event_shape)

    @lazy_property
    def scale_tril(self) -> Any:
        return self._full(self._unbroadcasted_scale_tril)

    @lazy_property
    def covariance_matrix(self) -> Any:
        L = self._unbroadcasted_scale_tril
        return self._full(fnp.matmul(L, _mT(L)))

    @lazy_property
    def precision_matrix(self) -> Any:
        L = self._unbroadcasted_scale_tril
        eye = fnp.broadcast_to(fnp.eye(L.shape[-1], dtype=L.dtype), tuple(L.shape))
        L_inv = fsl.solve_triangular(L, eye, lower=True)
        return self._full(fnp.matmul(_mT(L_inv), L_inv))

    def _df(self) -> Any:
        return self.df[..., None, None]

    @property
    def mean(self) -> Any:
        return self._df() * self.covariance_matrix

    @property
    def mode(self) -> Any:
        factor = self.df - self._event_shape[-1] - 1
        factor = fnp.where(factor <= 0, math.nan, factor)
        return factor[..., None, None] * self.covariance_matrix

    @property
    def variance(self) -> Any:
        V = self.covariance_matrix
        d = _diag(V)
        return self._df() * (V ** 2 + d[..., :, None] * d[..., None, :])

    def _bartlett(self, sample_shape: tuple[int, ...], key: Any) -> Any:
        p = self._event_shape[-1]
        k1, k2 = frandom.split(key)
        chi2_df = self.df[..., None] - fnp.arange(p, dtype=self.df.dtype)
        chi = fnp.sqrt(Chi2(chi2_df, validate_args=False).rsample(sample_shape, key=k1))
        eps = float(numpy.finfo(numpy.dtype(chi.dtype)).eps)
        diag = fnp.maximum(chi, eps)
        lower = fnp.tril(frandom.normal(k2, tuple(sample_shape) + self._batch_shape + (p, p),
                                        dtype=chi.dtype), -1)
        noise = lower + _diag_embed(diag)
        chol = fnp.matmul(self._unbroadcasted_scale_tril, noise)
        return fnp.matmul(chol, _mT(chol))

    def rsample(self, sample_shape: Any = (), *, key: Any = None) -> Any:
        sample_shape = tuple(sample_shape) if not isinstance(sample_shape, int) \
            else (sample_shape,)
        key = make_key(key, "Wishart.rsample", self._like)
        key, sub = frandom.split(key)
        sample = self._bartlett(sample_shape, sub)
        for _ in range(3):  # redraw singular samples (a fixed count: the same under jit)
            singular = ~self.support.check(sample)
            key, sub = frandom.split(key)
            sample = fnp.where(singular[..., None, None], self._bartlett(sample_shape, sub),
                               sample)
        return sample

    def log_prob(self, value: Any) -> Any:
        value = self._value(value)
        nu, p = self.df, self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        half_logdet = fnp.sum(fnp.log(_diag(L)), axis=-1)
        X = _solve_lower_b(L, value)                    # L^-1 V
        trace = fnp.trace(_solve_lower_b(L, _mT(X)), axis1=-2, axis2=-1)  # tr(S^-1 V)
        logdet_v = fnp.linalg.slogdet(value)[1]
        return (-nu * (p * math.log(2) / 2 + half_logdet) - fsp.multigammaln(nu / 2, p)
                + (nu - p - 1) / 2 * logdet_v - trace / 2)

    def entropy(self) -> Any:
        nu, p = self.df, self._event_shape[-1]
        half_logdet = fnp.sum(fnp.log(_diag(self._unbroadcasted_scale_tril)), axis=-1)
        return ((p + 1) * (p * math.log(2) / 2 + half_logdet) + fsp.multigammaln(nu / 2, p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p) + nu * p / 2)

    _mean_carrier_measure = 0

    @property
    def _natural_params(self) -> tuple[Any, ...]:
        return (-self.precision_matrix / 2, (self.df - self._event_shape[-1] - 1) / 2)

    def _log_normalizer(self, x: Any, y: Any) -> Any:
        p = self._event_shape[-1]
        return ((y + (p + 1) / 2) * (-fnp.linalg.slogdet(-2 * x)[1] + math.log(2) * p)
                + fsp.multigammaln(y + (p + 1) / 2, p))
