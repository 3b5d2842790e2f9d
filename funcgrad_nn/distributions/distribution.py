"""The ``Distribution`` base class (``torch.distributions.Distribution``'s interface).

>>> import numpy as np
>>> from funcgrad_nn.distributions import Normal
>>> d = Normal(np.zeros(3), 1.0)
>>> d.batch_shape, d.event_shape, d.sample((5,), key=0).shape
((3,), (), (5, 3))
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.core import is_tracer
from funcgrad_nn.distributions import constraints
from funcgrad_nn.distributions.utils import _device, lazy_property, register_pytree_class

__all__ = ["Distribution"]

_Shape = tuple[int, ...]


def _shape(s: Any) -> _Shape:
    if isinstance(s, (int, numpy.integer)):
        return (int(s),)
    return tuple(int(d) for d in s)


def _all_true(valid: Any) -> bool | None:
    """Whether every entry is true; None when the values are not known (traced)."""
    if is_tracer(valid):
        return None
    return bool(numpy.all(funcgrad.to_numpy(valid)))


def _show(value: Any) -> str:
    if is_tracer(value):
        return f"<traced {tuple(value.shape)}>"
    return str(funcgrad.to_numpy(value))


class Distribution:
    """Base class of the probability distributions, with torch's interface.

    Shapes: a sample has shape ``sample_shape + batch_shape + event_shape``; ``log_prob``
    gives ``sample_shape + batch_shape``. Randomness: ``sample``/``rsample`` take
    ``key=`` (an int seed or a ``funcgrad.random`` key) and are pure functions of it; without
    one they draw a key from funcgrad_nn's global generator (``nn.manual_seed``), which is
    only allowed eagerly: under ``jit`` pass ``key=`` (or the sample would be frozen into
    the compiled program). ``rsample`` is reparameterised: gradients with respect to the
    parameters flow through ``funcgrad.grad``/``jit``/``vmap``.

    Validation (``validate_args``, on by default as in torch; see
    :meth:`set_default_validate_args`) checks parameters against ``arg_constraints`` and the
    values given to ``log_prob``/``cdf`` against ``support``, raising ``ValueError``. It needs
    concrete values: under ``jit``/``vmap`` the check is skipped.

    >>> import numpy as np
    >>> from funcgrad_nn.distributions import Bernoulli
    >>> d = Bernoulli(probs=np.array([0.2, 0.9]))
    >>> d.mean.tolist(), d.log_prob(np.array([0.0, 1.0])).round(4).tolist()
    ([0.2, 0.9], [-0.2231, -0.1054])
    """

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__
    #: parameter name -> its number of event dimensions, for the generic :meth:`expand`
    _expand_params: dict[str, int] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        register_pytree_class(cls)  # jit/vmap take and return distributions

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument validation on or off for distributions made afterwards.

        >>> Distribution.set_default_validate_args(True)
        """
        if value not in (True, False):
            raise ValueError(f"set_default_validate_args: expected True or False, got {value!r}")
        Distribution._validate_args = value

    def __init__(self, batch_shape: Any = (), event_shape: Any = (),
                 validate_args: bool | None = None) -> None:
        self._batch_shape = _shape(batch_shape)
        self._event_shape = _shape(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            for param, constraint in self.arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue  # constraints that depend on other parameters cannot be checked
                if param not in self.__dict__ and isinstance(getattr(type(self), param, None),
                                                             lazy_property):
                    continue  # skip lazily computed parameters (logits of probs)
                value = getattr(self, param)
                if _all_true(constraint.check(value)) is False:
                    raise ValueError(
                        f"Expected parameter {param} "
                        f"({type(value).__name__} of shape {tuple(value.shape)}) "
                        f"of distribution {self!r} "
                        f"to satisfy the constraint {constraint!r}, "
                        f"but found invalid values:\n{_show(value)}")

    # -- shapes and constraints ----------------------------------------------------------
    @property
    def batch_shape(self) -> _Shape:
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self) -> _Shape:
        """The shape of one sample (without batching)."""
        return self._event_shape

    @property
    def arg_constraints(self) -> dict[str, constraints.Constraint]:
        """Parameter name -> the constraint it must satisfy."""
        return {}

    @property
    def support(self) -> Any:
        """The constraint describing where the distribution has mass."""
        raise NotImplementedError(f"{type(self).__name__} does not define support")

    def _extended_shape(self, sample_shape: Any = ()) -> _Shape:
        return _shape(sample_shape) + self._batch_shape + self._event_shape

    # -- moments -------------------------------------------------------------------------
    @property
    def mean(self) -> Any:
        """The mean of the distribution (batched over ``batch_shape``)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement mean")

    @property
    def mode(self) -> Any:
        """The mode of the distribution."""
        raise NotImplementedError(f"{type(self).__name__} does not implement mode")

    @property
    def variance(self) -> Any:
        """The variance of the distribution."""
        raise NotImplementedError(f"{type(self).__name__} does not implement variance")

    @property
    def stddev(self) -> Any:
        """The standard deviation: the square root of :attr:`variance`."""
        return fnp.sqrt(self.variance)

    # -- sampling ------------------------------------------------------------------------
    def sample(self, sample_shape: Any = (), *, key: Any = None) -> Any:
        """A sample of shape ``sample_shape + batch_shape + event_shape``, with no gradient
        (``stop_gradient`` of :meth:`rsample` where there is one)."""
        return funcgrad.lax.stop_gradient(self.rsample(sample_shape, key=key))

    def rsample(self, sample_shape: Any = (), *, key: Any = None) -> Any:
        """A reparameterised sample: differentiable with respect to the parameters."""
        raise NotImplementedError(
            f"{type(self).__name__} has no reparameterised sampler (has_rsample is False): "
            "use sample(), or a relaxed distribution for a differentiable surrogate")

    def sample_n(self, n: int, *, key: Any = None) -> Any:
        """``n`` samples (deprecated in torch: use ``sample((n,))``)."""
        warnings.warn("`sample_n(n)` will be deprecated. Use `sample((n,))` instead.",
                      FutureWarning, stacklevel=2)
        return self.sample((n,), key=key)

    @property
    def _like(self) -> Any:
        """An array parameter: sampling noise is made on its device."""
        for v in self.__dict__.values():
            if isinstance(v, Distribution):
                v = v._like
            if v is not None and hasattr(v, "shape") and hasattr(v, "dtype"):
                return v
        return None

    # -- densities -----------------------------------------------------------------------
    def log_prob(self, value: Any) -> Any:
        """The log density (or mass) at ``value``, of shape ``sample_shape + batch_shape``."""
        raise NotImplementedError(f"{type(self).__name__} does not implement log_prob")

    def cdf(self, value: Any) -> Any:
        """The cumulative distribution function at ``value``."""
        raise NotImplementedError(f"{type(self).__name__} does not implement cdf")

    def icdf(self, value: Any) -> Any:
        """The inverse cumulative distribution function at ``value``."""
        raise NotImplementedError(f"{type(self).__name__} does not implement icdf")

    def enumerate_support(self, expand: bool = True) -> Any:
        """Every value of a discrete distribution along axis 0: shape
        ``(cardinality,) + batch_shape + event_shape`` (batch axes of size 1 when not
        ``expand``)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement "
                                  "enumerate_support")

    def entropy(self) -> Any:
        """The entropy, of shape ``batch_shape``."""
        raise NotImplementedError(f"{type(self).__name__} does not implement entropy")

    def perplexity(self) -> Any:
        """``exp(entropy())``."""
        return fnp.exp(self.entropy())

    # -- validation and expansion --------------------------------------------------------
    def _validate_sample(self, value: Any) -> None:
        if not hasattr(value, "shape"):
            raise ValueError("The value argument to log_prob must be a Tensor")
        shape = tuple(value.shape)
        event_dim_start = len(shape) - len(self._event_shape)
        if shape[event_dim_start:] != self._event_shape:
            raise ValueError(f"The right-most size of value must match event_shape: {shape} "
                             f"vs {self._event_shape}.")
        expected = self._batch_shape + self._event_shape
        for i, j in zip(reversed(shape), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: "
                                 f"{shape} vs {expected}.")
        support = self.support
        if _all_true(support.check(value)) is False:
            raise ValueError(
                "Expected value argument "
                f"({type(value).__name__} of shape {shape}) "
                f"to be within the support ({support!r}) "
                f"of the distribution {self!r}, "
                f"but found invalid values:\n{_show(value)}")

    def _value(self, value: Any) -> Any:
        """``value`` as an array, validated when ``validate_args``."""
        if not hasattr(value, "shape"):
            # a Python number takes the parameters' floating dtype (torch would want a
            # tensor of it): log_prob(0.5) of a float32 distribution stays float32
            like = self._like
            dt = like.dtype if like is not None and numpy.dtype(like.dtype).kind == "f" \
                else None
            value = fnp.asarray(value, dtype=dt)
            if like is not None:  # and on the parameters' device
                value = funcgrad.device_put(value, _device(like))
        if self._validate_args:
            self._validate_sample(value)
        return value

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        """The same distribution with its parameters broadcast to ``batch_shape`` (no
        validation is repeated).

        >>> from funcgrad_nn.distributions import Normal
        >>> Normal(0.0, 1.0).expand((2, 3)).batch_shape
        (2, 3)
        """
        batch_shape = _shape(batch_shape)
        try:
            fnp.broadcast_shapes(self._batch_shape, batch_shape)
        except ValueError:
            raise ValueError(f"{type(self).__name__}.expand: batch_shape {self._batch_shape} "
                             f"cannot be expanded to {batch_shape}") from None
        if len(batch_shape) < len(self._batch_shape) or fnp.broadcast_shapes(
                self._batch_shape, batch_shape) != batch_shape:
            raise ValueError(f"{type(self).__name__}.expand: batch_shape {self._batch_shape} "
                             f"cannot be expanded to {batch_shape}")
        new = object.__new__(type(self)) if _instance is None else _instance
        new.__dict__.update(self.__dict__)
        for name, event_ndim in self._expand_params.items():
            if name in self.__dict__:
                v = self.__dict__[name]
                tail = tuple(v.shape[v.ndim - event_ndim:]) if event_ndim else ()
                new.__dict__[name] = fnp.broadcast_to(v, batch_shape + tail)
        new._expanded(self, batch_shape)
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _expanded(self, source: Distribution, batch_shape: _Shape) -> None:
        """Hook for :meth:`expand`: fix up attributes beyond ``_expand_params``."""

    def __repr__(self) -> str:
        names = [k for k in self.arg_constraints if k in self.__dict__]
        parts = []
        for p in names:
            v = self.__dict__[p]
            size = int(numpy.prod(v.shape)) if hasattr(v, "shape") else 1
            parts.append(f"{p}: {_show(v) if size == 1 else tuple(v.shape)}")
        return f"{type(self).__name__}({', '.join(parts)})"


register_pytree_class(Distribution)
