"""Bijections with log-abs-det-Jacobians, for :class:`TransformedDistribution` and
normalising flows (``torch.distributions.transforms``'s names).

A transform maps ``x`` (in ``domain``) to ``y = t(x)`` (in ``codomain``); ``t.inv(y)`` maps
back and ``t.log_abs_det_jacobian(x, y)`` is ``log |dy/dx|`` per element (summed over the
transform's event dimensions). With ``cache_size=1`` a transform remembers its last
``(x, y)`` pair, so that the inverse of a value it just produced is the exact ``x``
(``TanhTransform`` needs that to score its own samples at the edges of ``(-1, 1)``).

>>> import numpy as np
>>> from funcgrad_nn.distributions.transforms import AffineTransform, ExpTransform, ComposeTransform
>>> t = ComposeTransform([AffineTransform(1.0, 2.0), ExpTransform()])
>>> x = np.array([0.0, 0.5]); y = t(x)
>>> np.allclose(t.inv(y), x), t.log_abs_det_jacobian(x, y).round(4).tolist()
(True, [1.6931, 2.6931])
"""

from __future__ import annotations

import math
import numbers
import weakref
from typing import Any

import numpy

import funcgrad.nn as fnn
import funcgrad.numpy as fnp
from funcgrad_nn.distributions import constraints
from funcgrad_nn.distributions.utils import (
    _sum_rightmost,
    register_pytree_class,
    tril_matrix_to_vec,
    vec_to_tril_matrix,
)

__all__ = [
    "AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform", "CorrCholeskyTransform", "CumulativeDistributionTransform",
    "ExpTransform", "IndependentTransform", "LowerCholeskyTransform",
    "PositiveDefiniteTransform", "PowerTransform", "ReshapeTransform", "SigmoidTransform",
    "SoftmaxTransform", "SoftplusTransform", "StackTransform", "StickBreakingTransform",
    "TanhTransform",
    "Transform", "identity_transform",
]


class Transform:
    """Base of the transforms: subclasses define ``_call`` (forward), ``_inverse`` and
    ``log_abs_det_jacobian``, and their ``domain``/``codomain`` constraints.

    >>> import numpy as np
    >>> t = ExpTransform()
    >>> t(np.array(0.0)), t.inv(np.array(1.0)), t.sign, t.bijective
    (array(1.), array(0.), 1, True)
    """

    bijective = False
    domain: constraints.Constraint = constraints.real
    codomain: constraints.Constraint = constraints.real

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        register_pytree_class(cls)  # transforms travel through jit with their arrays

    def __init__(self, cache_size: int = 0) -> None:
        if cache_size not in (0, 1):
            raise ValueError("cache_size must be 0 or 1")
        self._cache_size = cache_size
        self._cached_x_y: tuple[Any, Any] | None = None
        self._inv: Any = None

    @property
    def event_dim(self) -> int:
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self) -> Transform:
        """The inverse transform (``t.inv.inv is t``)."""
        inv = self._inv() if self._inv is not None else None
        if inv is None:
            inv = _InverseTransform(self)
            self._inv = weakref.ref(inv)
        return inv

    @property
    def sign(self) -> Any:
        """The sign of the derivative (+1 or -1) of a monotone univariate bijection."""
        raise ValueError(f"{type(self).__name__} has no sign: it is not a monotone univariate "
                         "bijection")

    def with_cache(self, cache_size: int = 1) -> Transform:
        """A copy of this transform with the given cache size."""
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise ValueError(f"{type(self).__name__}.with_cache is not implemented")

    #: a transform without parameters equals every instance of its class (torch's __eq__ of
    #: ExpTransform, SigmoidTransform...); the others only themselves unless they say more
    _equal_by_type = False

    def __eq__(self, other: object) -> bool:
        return self is other or (self._equal_by_type and isinstance(other, type(self)))

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __call__(self, x: Any) -> Any:
        if self._cache_size == 0:
            return self._call(x)
        if self._cached_x_y is not None and x is self._cached_x_y[0]:
            return self._cached_x_y[1]
        y = self._call(x)
        self._cached_x_y = (x, y)
        return y

    def _inv_call(self, y: Any) -> Any:
        if self._cache_size == 0:
            return self._inverse(y)
        if self._cached_x_y is not None and y is self._cached_x_y[1]:
            return self._cached_x_y[0]
        x = self._inverse(y)
        self._cached_x_y = (x, y)
        return x

    def _call(self, x: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} does not define the forward map")

    def _inverse(self, y: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} does not define an inverse")

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        """``log |dy/dx|`` at ``x`` (with ``y = t(x)``)."""
        raise NotImplementedError(f"{type(self).__name__} does not define "
                                  "log_abs_det_jacobian")

    def forward_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        """The shape of ``t(x)`` for ``x`` of ``shape``."""
        return tuple(shape)

    def inverse_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        """The shape of ``t.inv(y)`` for ``y`` of ``shape``."""
        return tuple(shape)

    def __repr__(self) -> str:
        return type(self).__name__ + "()"


register_pytree_class(Transform)


class _InverseTransform(Transform):
    """The inverse of a transform, as ``t.inv`` gives."""

    def __init__(self, transform: Transform) -> None:
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform

    @property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return self._inv.codomain

    @property
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        return self._inv.domain

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return self._inv.bijective

    @property
    def sign(self) -> Any:
        return self._inv.sign

    @property
    def inv(self) -> Transform:
        return self._inv

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._inv!r})"

    def __call__(self, x: Any) -> Any:
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        return self._inv.forward_shape(shape)


class ComposeTransform(Transform):
    """Apply ``parts`` in order; the log-det-Jacobians add up (summed over the event
    dimensions each part adds).

    >>> import numpy as np
    >>> t = ComposeTransform([ExpTransform(), ExpTransform().inv])
    >>> float(t(np.array(2.0))), float(t.log_abs_det_jacobian(np.array(2.0), np.array(2.0)))
    (2.0, 0.0)
    """

    def __init__(self, parts: list[Transform], cache_size: int = 0) -> None:
        if cache_size:
            parts = [part.with_cache(cache_size) for part in parts]
        super().__init__(cache_size=cache_size)
        self.parts = list(parts)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    __hash__ = object.__hash__

    @constraints.dependent_property(is_discrete=False)
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        event_dim = self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):
            event_dim += part.domain.event_dim - part.codomain.event_dim
            event_dim = max(event_dim, part.domain.event_dim)
        if event_dim > domain.event_dim:
            domain = constraints.independent(domain, event_dim - domain.event_dim)
        return domain

    @constraints.dependent_property(is_discrete=False)
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim += part.codomain.event_dim - part.domain.event_dim
            event_dim = max(event_dim, part.codomain.event_dim)
        if event_dim > codomain.event_dim:
            codomain = constraints.independent(codomain, event_dim - codomain.event_dim)
        return codomain

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(p.bijective for p in self.parts)

    @property
    def sign(self) -> Any:
        sign: Any = 1
        for p in self.parts:
            sign = sign * p.sign
        return sign

    @property
    def inv(self) -> Transform:
        inv = self._inv() if self._inv is not None else None
        if inv is None:
            inv = ComposeTransform([p.inv for p in reversed(self.parts)])
            self._inv = weakref.ref(inv)
            inv._inv = weakref.ref(self)
        return inv

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x: Any) -> Any:
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        if not self.parts:
            return fnp.zeros_like(x)
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)
        total: Any = 0
        event_dim = self.domain.event_dim
        for part, xi, yi in zip(self.parts, xs[:-1], xs[1:]):
            total = total + _sum_rightmost(part.log_abs_det_jacobian(xi, yi),
                                           event_dim - part.domain.event_dim)
            event_dim += part.codomain.event_dim - part.domain.event_dim
        return total

    def forward_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        for part in self.parts:
            shape = part.forward_shape(shape)
        return tuple(shape)

    def inverse_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return tuple(shape)

    def __repr__(self) -> str:
        inner = ",\n    ".join(repr(p) for p in self.parts)
        return f"{type(self).__name__}(\n    {inner}\n)"


#: the identity: a composition of no transforms
identity_transform = ComposeTransform([])


class IndependentTransform(Transform):
    """Treat the ``reinterpreted_batch_ndims`` rightmost dimensions of ``base_transform`` as
    one event: its log-det-Jacobian is summed over them.

    >>> import numpy as np
    >>> t = IndependentTransform(ExpTransform(), 1)
    >>> t.log_abs_det_jacobian(np.array([1.0, 2.0]), None).tolist()
    3.0
    """

    def __init__(self, base_transform: Transform, reinterpreted_batch_ndims: int,
                 cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(self.base_transform, self.reinterpreted_batch_ndims,
                                    cache_size=cache_size)

    @constraints.dependent_property(is_discrete=False)
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.independent(self.base_transform.domain,
                                       self.reinterpreted_batch_ndims)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.independent(self.base_transform.codomain,
                                       self.reinterpreted_batch_ndims)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return self.base_transform.bijective

    @property
    def sign(self) -> Any:
        return self.base_transform.sign

    def _call(self, x: Any) -> Any:
        if x.ndim < self.domain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform(x)

    def _inverse(self, y: Any) -> Any:
        if y.ndim < self.codomain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        return _sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y),
                              self.reinterpreted_batch_ndims)

    def forward_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        return self.base_transform.inverse_shape(shape)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({self.base_transform!r}, "
                f"{self.reinterpreted_batch_ndims})")


class ExpTransform(Transform):
    """``y = exp(x)``.

    >>> import numpy as np
    >>> ExpTransform().log_abs_det_jacobian(np.array(1.5), None)
    array(1.5)
    """

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = 1  # type: ignore[assignment]

    _equal_by_type = True

    def _call(self, x: Any) -> Any:
        return fnp.exp(x)

    def _inverse(self, y: Any) -> Any:
        return fnp.log(y)

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        return x


class PowerTransform(Transform):
    """``y = x ** exponent`` on the positive reals.

    >>> import numpy as np
    >>> float(PowerTransform(2.0)(np.array(3.0)))
    9.0
    """

    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent: Any, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.exponent = exponent

    def with_cache(self, cache_size: int = 1) -> Transform:
        return self if self._cache_size == cache_size else PowerTransform(self.exponent,
                                                                          cache_size)

    @property
    def sign(self) -> Any:
        return fnp.sign(self.exponent)

    def _call(self, x: Any) -> Any:
        return x ** self.exponent

    def _inverse(self, y: Any) -> Any:
        return y ** (1 / self.exponent)

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        return fnp.log(fnp.abs(self.exponent * y / x))

    def forward_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        return fnp.broadcast_shapes(tuple(shape), tuple(getattr(self.exponent, "shape", ())))

    def inverse_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        return self.forward_shape(shape)


def _finfo(x: Any) -> Any:
    return numpy.finfo(numpy.dtype(x.dtype))


class SigmoidTransform(Transform):
    """``y = sigmoid(x)``, clipped into ``[tiny, 1 - eps]`` (as torch) so the inverse stays
    finite.

    >>> import numpy as np
    >>> t = SigmoidTransform()
    >>> float(t(np.array(0.0))), round(float(t.log_abs_det_jacobian(np.array(0.0), None)), 4)
    (0.5, -1.3863)
    """

    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = 1  # type: ignore[assignment]

    _equal_by_type = True

    def _call(self, x: Any) -> Any:
        fi = _finfo(x)
        return fnp.clip(fnn.sigmoid(x), float(fi.tiny), 1.0 - float(fi.eps))

    def _inverse(self, y: Any) -> Any:
        fi = _finfo(y)
        y = fnp.clip(y, float(fi.tiny), 1.0 - float(fi.eps))
        return fnp.log(y) - fnp.log1p(-y)

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        return -fnn.softplus(-x) - fnn.softplus(x)


class TanhTransform(Transform):
    """``y = tanh(x)`` (the squashing of SAC-style policies). Its inverse loses precision
    near +-1: build it with ``cache_size=1`` to score the samples it produced exactly.

    >>> import numpy as np
    >>> t = TanhTransform()
    >>> round(float(t.log_abs_det_jacobian(np.array(1.0), None)), 4)
    -0.8676
    """

    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = 1  # type: ignore[assignment]

    _equal_by_type = True

    def _call(self, x: Any) -> Any:
        return fnp.tanh(x)

    def _inverse(self, y: Any) -> Any:
        return fnp.arctanh(y)

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        # log(1 - tanh(x)^2) in a form that stays accurate for large |x|
        return 2.0 * (math.log(2.0) - x - fnn.softplus(-2.0 * x))


class SoftplusTransform(Transform):
    """``y = log(1 + exp(x))``.

    >>> import numpy as np
    >>> round(float(SoftplusTransform()(np.array(0.0))), 4)
    0.6931
    """

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = 1  # type: ignore[assignment]

    _equal_by_type = True

    def _call(self, x: Any) -> Any:
        return fnn.softplus(x)

    def _inverse(self, y: Any) -> Any:
        return fnp.log(-fnp.expm1(-y)) + y

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        return -fnn.softplus(-x)


class AbsTransform(Transform):
    """``y = |x|`` (not bijective; its "inverse" returns ``y``).

    >>> import numpy as np
    >>> AbsTransform()(np.array(-2.0))
    array(2.)
    """

    domain = constraints.real
    codomain = constraints.positive

    _equal_by_type = True

    def _call(self, x: Any) -> Any:
        return fnp.abs(x)

    def _inverse(self, y: Any) -> Any:
        return y


class AffineTransform(Transform):
    """``y = loc + scale * x``; ``event_dim`` rightmost dimensions form one event (their
    log-det-Jacobians are summed).

    >>> import numpy as np
    >>> t = AffineTransform(np.array(1.0), np.array(-2.0))
    >>> float(t(np.array(3.0))), float(t.sign), round(float(t.log_abs_det_jacobian(np.array(3.0), None)), 4)
    (-5.0, -1.0, 0.6931)
    """

    bijective = True

    def __init__(self, loc: Any, scale: Any, event_dim: int = 0, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.loc, self.scale, self._event_dim = loc, scale, event_dim

    @property
    def event_dim(self) -> int:
        return self._event_dim

    @constraints.dependent_property(is_discrete=False)
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        if self._event_dim == 0:
            return constraints.real
        return constraints.independent(constraints.real, self._event_dim)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        return self.domain

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self._event_dim, cache_size=cache_size)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AffineTransform):
            return False
        for a, b in ((self.loc, other.loc), (self.scale, other.scale)):
            if isinstance(a, numbers.Number) and isinstance(b, numbers.Number):
                if a != b:
                    return False
            elif a is not b and not bool(fnp.all(fnp.asarray(a) == fnp.asarray(b))):
                return False
        return True

    __hash__ = object.__hash__

    @property
    def sign(self) -> Any:
        if isinstance(self.scale, numbers.Real):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return fnp.sign(self.scale)

    def _call(self, x: Any) -> Any:
        return self.loc + self.scale * x

    def _inverse(self, y: Any) -> Any:
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        shape = tuple(x.shape)
        if isinstance(self.scale, numbers.Number):
            result = fnp.full_like(x, math.log(abs(self.scale)))
        else:
            result = fnp.log(fnp.abs(self.scale))
        if self._event_dim:
            result = fnp.sum(fnp.reshape(result, tuple(result.shape[:result.ndim
                                                                    - self._event_dim]) + (-1,)),
                             axis=-1)
            shape = shape[:len(shape) - self._event_dim]
        return fnp.broadcast_to(result, shape)

    def forward_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        return fnp.broadcast_shapes(tuple(shape), tuple(getattr(self.loc, "shape", ())),
                                    tuple(getattr(self.scale, "shape", ())))

    def inverse_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        return self.forward_shape(shape)


class SoftmaxTransform(Transform):
    """Unconstrained vectors to the simplex by ``softmax`` (not bijective: its inverse is
    ``log``).

    >>> import numpy as np
    >>> SoftmaxTransform()(np.zeros(2)).tolist()
    [0.5, 0.5]
    """

    domain = constraints.real_vector
    codomain = constraints.simplex

    _equal_by_type = True

    def _call(self, x: Any) -> Any:
        probs = fnp.exp(x - fnp.max(x, axis=-1, keepdims=True))
        return probs / fnp.sum(probs, axis=-1, keepdims=True)

    def _inverse(self, y: Any) -> Any:
        return fnp.log(y)


def _clipped_sigmoid(x: Any) -> Any:
    fi = _finfo(x)
    return fnp.clip(fnn.sigmoid(x), float(fi.tiny), 1.0 - float(fi.eps))


def _stick_offset(x: Any, n: int) -> Any:
    # log of K, K-1, ..., 2: centres the breaks so that x = 0 maps to the uniform point
    return fnp.log(float(n + 1) - fnp.cumsum(fnp.ones_like(x, shape=(n,))))


class StickBreakingTransform(Transform):
    """Unconstrained vectors of length ``K - 1`` to the ``K``-simplex by stick breaking (a
    bijection, unlike :class:`SoftmaxTransform`; ``biject_to(simplex)``).

    >>> import numpy as np
    >>> t = StickBreakingTransform()
    >>> y = t(np.zeros(2)); y.round(4).tolist(), np.allclose(t.inv(y), 0.0)
    ([0.3333, 0.3333, 0.3333], True)
    """

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    _equal_by_type = True

    def _call(self, x: Any) -> Any:
        z = _clipped_sigmoid(x - _stick_offset(x, x.shape[-1]))
        z_cumprod = fnp.cumprod(1 - z, axis=-1)
        ones = fnp.ones_like(z[..., :1])
        return (fnp.concatenate([z, ones], axis=-1)
                * fnp.concatenate([ones, z_cumprod], axis=-1))

    def _inverse(self, y: Any) -> Any:
        y_crop = y[..., :-1]
        offset = _stick_offset(y_crop, y_crop.shape[-1])
        sf = fnp.maximum(1 - fnp.cumsum(y_crop, axis=-1), float(_finfo(y).tiny))
        return fnp.log(y_crop) - fnp.log(sf) + offset

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        x = x - _stick_offset(x, x.shape[-1])
        return fnp.sum(-x + fnn.log_sigmoid(x) + fnp.log(y[..., :-1]), axis=-1)

    def forward_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return tuple(shape[:-1]) + (shape[-1] + 1,)

    def inverse_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return tuple(shape[:-1]) + (shape[-1] - 1,)


def _diag_embed(v: Any) -> Any:
    return v[..., None] * fnp.eye(v.shape[-1], dtype=v.dtype)


class LowerCholeskyTransform(Transform):
    """Unconstrained square matrices to lower-triangular ones with a positive diagonal:
    the strict lower triangle kept, the diagonal exponentiated (``transform_to(
    lower_cholesky)``; not bijective: the upper triangle is dropped).

    >>> import numpy as np
    >>> LowerCholeskyTransform()(np.array([[0.0, 5.0], [2.0, 0.0]])).tolist()
    [[1.0, 0.0], [2.0, 1.0]]
    """

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    _equal_by_type = True

    def _call(self, x: Any) -> Any:
        return fnp.tril(x, -1) + _diag_embed(fnp.exp(fnp.diagonal(x, axis1=-2, axis2=-1)))

    def _inverse(self, y: Any) -> Any:
        return fnp.tril(y, -1) + _diag_embed(fnp.log(fnp.diagonal(y, axis1=-2, axis2=-1)))


class PositiveDefiniteTransform(Transform):
    """Unconstrained square matrices to positive-definite ones, ``L @ L.T`` of
    :class:`LowerCholeskyTransform` (``transform_to(positive_definite)``).

    >>> import numpy as np
    >>> PositiveDefiniteTransform()(np.array([[0.0, 0.0], [1.0, 0.0]])).tolist()
    [[1.0, 1.0], [1.0, 2.0]]
    """

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    _equal_by_type = True

    def _call(self, x: Any) -> Any:
        L = LowerCholeskyTransform()(x)
        return fnp.matmul(L, fnp.swapaxes(L, -1, -2))

    def _inverse(self, y: Any) -> Any:
        return LowerCholeskyTransform().inv(fnp.linalg.cholesky(y))


class ReshapeTransform(Transform):
    """Reshape the rightmost ``in_shape`` dimensions to ``out_shape`` (volume preserving).

    >>> import numpy as np
    >>> ReshapeTransform((4,), (2, 2))(np.arange(8.0).reshape(2, 4)).shape
    (2, 2, 2)
    """

    bijective = True

    def __init__(self, in_shape: Any, out_shape: Any, cache_size: int = 0) -> None:
        self.in_shape = tuple(int(d) for d in in_shape)
        self.out_shape = tuple(int(d) for d in out_shape)
        if math.prod(self.in_shape) != math.prod(self.out_shape):
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @constraints.dependent_property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.independent(constraints.real, len(self.in_shape))

    @constraints.dependent_property
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    def _call(self, x: Any) -> Any:
        batch = tuple(x.shape[:x.ndim - len(self.in_shape)])
        return fnp.reshape(x, batch + self.out_shape)

    def _inverse(self, y: Any) -> Any:
        batch = tuple(y.shape[:y.ndim - len(self.out_shape)])
        return fnp.reshape(y, batch + self.in_shape)

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        return fnp.zeros_like(x, shape=tuple(x.shape[:x.ndim - len(self.in_shape)]))

    def forward_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        shape = tuple(shape)
        if len(shape) < len(self.in_shape):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(self.in_shape)
        if shape[cut:] != self.in_shape:
            raise ValueError(f"Shape mismatch: expected {shape[cut:]} but got {self.in_shape}")
        return shape[:cut] + self.out_shape

    def inverse_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        shape = tuple(shape)
        if len(shape) < len(self.out_shape):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(self.out_shape)
        if shape[cut:] != self.out_shape:
            raise ValueError(f"Shape mismatch: expected {shape[cut:]} but got {self.out_shape}")
        return shape[:cut] + self.in_shape


class CumulativeDistributionTransform(Transform):
    """A univariate distribution's ``cdf`` as a transform to the unit interval (its inverse
    is ``icdf``, its log-det-Jacobian ``log_prob``): copulas, flows onto ``[0, 1]``.

    >>> import numpy as np
    >>> from funcgrad_nn.distributions import Normal
    >>> float(CumulativeDistributionTransform(Normal(0.0, 1.0))(np.array(0.0)))
    0.5
    """

    bijective = True
    codomain = constraints.unit_interval
    sign = 1  # type: ignore[assignment]

    def __init__(self, distribution: Any, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return self.distribution.support

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return CumulativeDistributionTransform(self.distribution, cache_size=cache_size)

    def _call(self, x: Any) -> Any:
        return self.distribution.cdf(x)

    def _inverse(self, y: Any) -> Any:
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        return self.distribution.log_prob(x)


class CorrCholeskyTransform(Transform):
    """Unconstrained vectors of length ``D (D - 1) / 2`` to Cholesky factors of ``D x D``
    correlation matrices (tanh, then stick breaking along each row; ``biject_to(
    corr_cholesky)``, the support of :class:`LKJCholesky`).

    >>> import numpy as np
    >>> L = CorrCholeskyTransform()(np.array([0.5, -0.3, 0.8]))
    >>> L.shape, np.allclose((L ** 2).sum(-1), 1.0)
    ((3, 3), True)
    """

    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    _equal_by_type = True

    def _call(self, x: Any) -> Any:
        eps = float(_finfo(x).eps)
        x = fnp.clip(fnp.tanh(x), -1 + eps, 1 - eps)
        r = vec_to_tril_matrix(x, diag=-1)
        z1m_cumprod_sqrt = fnp.cumprod(fnp.sqrt(1 - r ** 2), axis=-1)
        r = r + fnp.eye(r.shape[-1], dtype=r.dtype)
        ones = fnp.ones_like(z1m_cumprod_sqrt[..., :1])
        return r * fnp.concatenate([ones, z1m_cumprod_sqrt[..., :-1]], axis=-1)

    def _inverse(self, y: Any) -> Any:
        y_cumsum = 1 - fnp.cumsum(y * y, axis=-1)
        ones = fnp.ones_like(y_cumsum[..., :1])
        shifted = fnp.concatenate([ones, y_cumsum[..., :-1]], axis=-1)
        t = tril_matrix_to_vec(y, diag=-1) / fnp.sqrt(tril_matrix_to_vec(shifted, diag=-1))
        return (fnp.log1p(t) - fnp.log1p(-t)) / 2

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        y1m_cumsum = 1 - fnp.cumsum(y * y, axis=-1)
        stick = 0.5 * fnp.sum(fnp.log(tril_matrix_to_vec(y1m_cumsum, diag=-2)), axis=-1)
        tanh_logdet = -2 * fnp.sum(x + fnn.softplus(-2 * x) - math.log(2.0), axis=-1)
        return stick + tanh_logdet

    def forward_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return tuple(shape[:-1]) + (d, d)

    def inverse_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        d = shape[-1]
        return tuple(shape[:-2]) + (d * (d - 1) // 2,)


def _slice_check(dim: int, z: Any, size: int, what: str) -> None:
    if not -z.ndim <= dim < z.ndim:
        raise ValueError(f"dim {dim} out of range for {what} with {z.ndim} dimensions")
    if z.shape[dim] != size:
        raise ValueError(f"{what}.shape[{dim}] = {z.shape[dim]} must equal {size}")


class CatTransform(Transform):
    """Apply ``tseq[i]`` to the ``i``-th consecutive slice (of length ``lengths[i]``) along
    ``dim`` and concatenate (a transform per block of a parameter vector).

    >>> import numpy as np
    >>> t = CatTransform([ExpTransform(), identity_transform], 0, [2, 1])
    >>> t(np.zeros(3)).tolist(), t.log_abs_det_jacobian(np.zeros(3), t(np.zeros(3))).tolist()
    ([1.0, 1.0, 0.0], [0.0, 0.0, 0.0])
    """

    def __init__(self, tseq: Any, dim: int = 0, lengths: Any = None,
                 cache_size: int = 0) -> None:
        if not all(isinstance(t, Transform) for t in tseq):
            raise TypeError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.lengths = tuple(lengths) if lengths is not None else (1,) * len(self.transforms)
        if len(self.lengths) != len(self.transforms):
            raise ValueError(f"lengths ({len(self.lengths)}) must match transforms "
                             f"({len(self.transforms)})")
        self.dim = dim

    @property
    def event_dim(self) -> int:
        return max(t.event_dim for t in self.transforms)

    @property
    def length(self) -> int:
        return sum(self.lengths)

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _pieces(self, z: Any) -> list[Any]:
        out, start = [], 0
        for n in self.lengths:
            out.append(fnp.take(z, fnp.arange(start, start + n), axis=self.dim))
            start += n
        return out

    def _call(self, x: Any) -> Any:
        _slice_check(self.dim, x, self.length, "x")
        return fnp.concatenate([t(p) for t, p in zip(self.transforms, self._pieces(x))],
                               axis=self.dim)

    def _inverse(self, y: Any) -> Any:
        _slice_check(self.dim, y, self.length, "y")
        return fnp.concatenate([t.inv(p) for t, p in zip(self.transforms, self._pieces(y))],
                               axis=self.dim)

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        _slice_check(self.dim, x, self.length, "x")
        _slice_check(self.dim, y, self.length, "y")
        parts = []
        for t, xs, ys in zip(self.transforms, self._pieces(x), self._pieces(y)):
            ladj = t.log_abs_det_jacobian(xs, ys)
            if t.event_dim < self.event_dim:
                ladj = _sum_rightmost(ladj, self.event_dim - t.event_dim)
            parts.append(ladj)
        dim = self.dim - x.ndim if self.dim >= 0 else self.dim
        dim = dim + self.event_dim
        if dim < 0:
            return fnp.concatenate(parts, axis=dim)
        total: Any = 0
        for p in parts:
            total = total + p
        return total

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @constraints.dependent_property
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """Apply ``tseq[i]`` to the ``i``-th slice along ``dim`` and stack the results.

    >>> import numpy as np
    >>> StackTransform([ExpTransform(), identity_transform], 1)(np.zeros((2, 2))).tolist()
    [[1.0, 0.0], [1.0, 0.0]]
    """

    def __init__(self, tseq: Any, dim: int = 0, cache_size: int = 0) -> None:
        if not all(isinstance(t, Transform) for t in tseq):
            raise TypeError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.dim = dim

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slices(self, z: Any) -> list[Any]:
        return [fnp.take(z, i, axis=self.dim) for i in range(z.shape[self.dim])]

    def _call(self, x: Any) -> Any:
        _slice_check(self.dim, x, len(self.transforms), "x")
        return fnp.stack([t(s) for s, t in zip(self._slices(x), self.transforms)],
                         axis=self.dim)

    def _inverse(self, y: Any) -> Any:
        _slice_check(self.dim, y, len(self.transforms), "y")
        return fnp.stack([t.inv(s) for s, t in zip(self._slices(y), self.transforms)],
                         axis=self.dim)

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        _slice_check(self.dim, x, len(self.transforms), "x")
        _slice_check(self.dim, y, len(self.transforms), "y")
        return fnp.stack([t.log_abs_det_jacobian(xs, ys) for xs, ys, t in
                          zip(self._slices(x), self._slices(y), self.transforms)],
                         axis=self.dim)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self) -> constraints.Constraint:  # type: ignore[override]
        return constraints.stack([t.codomain for t in self.transforms], self.dim)
