"""``gaussian_kde``: kernel density estimation with Gaussian kernels, as
``scipy.stats.gaussian_kde`` (and ``jax.scipy.stats.gaussian_kde``).

Example:
    >>> import numpy as np
    >>> from funcgrad.scipy.stats import gaussian_kde
    >>> kde = gaussian_kde(np.array([-1.0, 0.0, 1.0]), bw_method=1.0)
    >>> kde(np.array([0.0])).round(6)   # (2 N(1; 0, 1) + N(0; 0, 1)) / 3
    array([0.294295])
"""

from __future__ import annotations

import math
from typing import Any

import numpy

import funcgrad.numpy as fnp
import funcgrad.random as _random
from funcgrad.scipy import linalg as _linalg
from funcgrad.scipy import special as _special
from funcgrad.scipy._device import colocated
from funcgrad.tree_util import register_pytree_node

__all__ = ["gaussian_kde"]


class gaussian_kde:  # noqa: N801 - SciPy's name
    """A Gaussian kernel density estimate of ``dataset`` (shape ``(d, n)``: ``n`` points in
    ``d`` dimensions; 1-D for ``d = 1``), optionally ``weights``-ed. ``bw_method``:
    ``"scott"`` (default), ``"silverman"``, a scalar factor, or a callable taking the
    estimator and returning the factor. The kernel covariance is the data covariance times
    the factor squared.

    Attributes as SciPy: ``dataset``, ``weights``, ``d``, ``n``, ``neff``, ``factor``,
    ``covariance``, ``inv_cov``. ``evaluate``/``__call__``/``pdf`` and ``logpdf`` (a
    ``logsumexp``, accurate far out) take points of shape ``(d, m)``; ``integrate_gaussian``,
    ``integrate_box_1d``, ``integrate_kde``, ``resample(key, shape)`` (with a funcgrad
    ``key``, as JAX; SciPy takes a size and a seed) and ``set_bandwidth``. The estimator is a
    pytree, so it passes through ``jit``/``vmap``/``grad`` (differentiable in the data, the
    weights and the points).

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.stats import gaussian_kde
        >>> kde = gaussian_kde(np.array([[0.0, 1.0, 2.0, 4.0]]))
        >>> round(float(kde.integrate_box_1d(-np.inf, np.inf)), 12)
        1.0
    """

    def __init__(self, dataset: Any, bw_method: Any = None, weights: Any = None) -> None:
        dataset = fnp.atleast_2d(fnp.asarray(dataset))
        if dataset.dtype.kind == "c":
            raise TypeError("gaussian_kde: complex data is not supported")
        if not dataset.size > 1:
            raise ValueError("gaussian_kde: `dataset` input should have multiple elements")
        if not fnp.issubdtype(dataset.dtype, fnp.inexact):
            dataset = dataset.astype(numpy.float64)
        n = dataset.shape[1]
        if weights is not None:
            # (on one device: NumPy weights follow a device dataset, and back)
            weights, dataset = colocated(fnp.atleast_1d(fnp.asarray(weights)), dataset)
            dt = numpy.result_type(dataset.dtype, weights.dtype)
            if dt.kind != "f":
                dt = numpy.dtype(numpy.float64)
            dataset, weights = dataset.astype(dt), weights.astype(dt)
            if weights.ndim != 1:
                raise ValueError("gaussian_kde: `weights` input should be one-dimensional")
            if weights.shape[0] != n:
                raise ValueError(f"gaussian_kde: `weights` input should be of length n = {n}")
            weights = weights / fnp.sum(weights)
        else:
            # (full_like: on the dataset's device, not the default one)
            weights = fnp.full_like(dataset[0], 1.0 / n)
        self.dataset = dataset
        self.weights = weights
        self.neff = 1.0 / fnp.sum(weights * weights)
        self.set_bandwidth(bw_method)

    @property
    def d(self) -> int:
        return self.dataset.shape[0]

    @property
    def n(self) -> int:
        return self.dataset.shape[1]

    def scotts_factor(self) -> Any:
        """``neff ** (-1 / (d + 4))``."""
        return self.neff ** (-1.0 / (self.d + 4))

    def silverman_factor(self) -> Any:
        """``(neff (d + 2) / 4) ** (-1 / (d + 4))``."""
        return (self.neff * (self.d + 2) / 4.0) ** (-1.0 / (self.d + 4))

    covariance_factor = scotts_factor

    def set_bandwidth(self, bw_method: Any = None) -> None:
        """Set the bandwidth rule (as the constructor's ``bw_method``) and recompute the
        kernel covariance, in place (as SciPy)."""
        if bw_method is None or bw_method == "scott":
            factor = self.scotts_factor()
        elif bw_method == "silverman":
            factor = self.silverman_factor()
        elif isinstance(bw_method, str):
            raise ValueError("gaussian_kde: `bw_method` should be 'scott', 'silverman', a "
                             "scalar, or a callable")
        elif callable(bw_method):
            factor = bw_method(self)
        elif numpy.ndim(bw_method) == 0:
            factor = bw_method
        else:
            raise ValueError("gaussian_kde: `bw_method` should be 'scott', 'silverman', a "
                             "scalar, or a callable")
        self.factor = fnp.asarray(factor).astype(self.dataset.dtype)
        data_cov = fnp.atleast_2d(fnp.cov(self.dataset, rowvar=True, bias=False,
                                          aweights=self.weights)).astype(self.dataset.dtype)
        self.covariance = data_cov * self.factor ** 2
        self.inv_cov = fnp.linalg.inv(data_cov) / self.factor ** 2

    def _points(self, points: Any) -> Any:
        # NumPy points follow a device dataset (uncommitted): the formulas' operators meet both
        points = colocated(fnp.atleast_2d(fnp.asarray(points)), self.dataset)[0]
        if points.dtype.kind == "c":
            raise TypeError("gaussian_kde: complex points are not supported")
        d, m = points.shape
        if d != self.d:
            if d == 1 and m == self.d:
                return fnp.reshape(points, (self.d, 1))
            raise ValueError(f"gaussian_kde: points have dimension {d}, dataset has "
                             f"dimension {self.d}")
        return points

    def _log_kernel_terms(self, points: Any) -> Any:
        """``(m, n)``: log weight plus log kernel of each data point at each point."""
        points = self._points(points).astype(self.dataset.dtype)
        white = _linalg.cholesky(self.inv_cov, lower=True)
        data = fnp.matmul(self.dataset.T, white)  # (n, d)
        xs = fnp.matmul(points.T, white)  # (m, d)
        log_norm = fnp.sum(fnp.log(fnp.diagonal(white))) - 0.5 * self.d * math.log(2 * math.pi)
        sq = fnp.sum((xs[:, None, :] - data[None, :, :]) ** 2, axis=-1)
        return fnp.log(self.weights)[None, :] + log_norm - 0.5 * sq

    def evaluate(self, points: Any) -> Any:
        """The estimated density at ``points`` (shape ``(d, m)``): shape ``(m,)``."""
        return fnp.sum(fnp.exp(self._log_kernel_terms(points)), axis=1)

    __call__ = evaluate
    pdf = evaluate

    def logpdf(self, x: Any) -> Any:
        """Log of the estimated density (a ``logsumexp``: finite far from the data)."""
        return _special.logsumexp(self._log_kernel_terms(x), axis=1)

    def integrate_gaussian(self, mean: Any, cov: Any) -> Any:
        """The integral of the density times the Gaussian ``N(mean, cov)``."""
        mean = fnp.atleast_1d(fnp.squeeze(fnp.asarray(mean)))
        cov = fnp.atleast_2d(fnp.asarray(cov))
        if mean.shape != (self.d,):
            raise ValueError(f"gaussian_kde: mean does not have dimension {self.d}")
        if cov.shape != (self.d, self.d):
            raise ValueError(f"gaussian_kde: covariance does not have dimension {self.d}")
        return _convolve(self.covariance + cov, self.dataset, self.weights, mean)

    def integrate_box_1d(self, low: Any, high: Any) -> Any:
        """The integral of a 1-D density from ``low`` to ``high`` (scalars)."""
        if self.d != 1:
            raise ValueError("gaussian_kde: integrate_box_1d() only handles 1D pdfs")
        if numpy.ndim(low) != 0 or numpy.ndim(high) != 0:
            raise ValueError("gaussian_kde: the limits of integration in integrate_box_1d "
                             "must be scalars")
        sigma = fnp.sqrt(self.covariance[0, 0])
        lo = (low - self.dataset[0]) / sigma
        hi = (high - self.dataset[0]) / sigma
        return fnp.sum(self.weights * (_special.ndtr(hi) - _special.ndtr(lo)))

    def integrate_kde(self, other: gaussian_kde) -> Any:
        """The integral of the product of this density and ``other``'s."""
        if other.d != self.d:
            raise ValueError("gaussian_kde: KDEs are not the same dimensionality")
        small, large = (self, other) if self.n < other.n else (other, self)
        cov = self.covariance + other.covariance
        total = 0.0
        for i in range(small.n):
            total = total + small.weights[i] * _convolve(cov, large.dataset, large.weights,
                                                         small.dataset[:, i])
        return total

    def resample(self, key: Any, shape: tuple[int, ...] = ()) -> Any:
        """``shape`` new samples, shape ``(d, *shape)``: a data point drawn by weight plus
        kernel noise. Takes a funcgrad ``key`` (as ``jax.scipy.stats.gaussian_kde``)."""
        shape = tuple(shape)
        ind_key, eps_key = _random.split(key)
        ind = _random.choice(ind_key, self.n, shape=shape, p=self.weights)
        eps = _random.multivariate_normal(eps_key, fnp.zeros((self.d,), self.dataset.dtype),
                                          self.covariance, shape=shape,
                                          dtype=self.dataset.dtype)
        return fnp.take(self.dataset, ind, axis=1) + fnp.moveaxis(eps, -1, 0)


def _convolve(cov: Any, target: Any, weights: Any, mean: Any) -> Any:
    """``sum_j w_j N(target_j; mean, cov)``."""
    chol = _linalg.cho_factor(cov)
    d = cov.shape[0]
    norm = 1.0 / ((2 * math.pi) ** (d / 2) * fnp.prod(fnp.diagonal(chol[0])))
    diff = target - mean[:, None]
    alpha = _linalg.cho_solve(chol, diff)
    arg = 0.5 * fnp.sum(diff * alpha, axis=0)
    return norm * fnp.sum(fnp.exp(-arg) * weights)


def _flatten(kde: gaussian_kde) -> tuple[tuple, None]:
    return (kde.dataset, kde.weights, kde.neff, kde.factor, kde.covariance, kde.inv_cov), None


def _unflatten(aux: None, children: tuple) -> gaussian_kde:
    kde = object.__new__(gaussian_kde)
    (kde.dataset, kde.weights, kde.neff, kde.factor, kde.covariance, kde.inv_cov) = children
    return kde


register_pytree_node(gaussian_kde, _flatten, _unflatten)
