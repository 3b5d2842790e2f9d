"""LayerNorm, RMSNorm, BatchNorm1d/2d/3d, InstanceNorm1d/2d/3d (running statistics as buffers),
their Lazy forms, GroupNorm, LocalResponseNorm, CrossMapLRN2d."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.backend import device_of
from funcgrad.core import is_tracer
from funcgrad_nn import functional as F
from funcgrad_nn import init
from funcgrad_nn._convolution import norm_params_dtype
from funcgrad_nn.layers._util import empty, place
from funcgrad_nn.layers.lazy import LazyModuleMixin
from funcgrad_nn.module import BadInputError, Module, Parameter, mark_uninitialized

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "GroupNorm", "InstanceNorm1d",
           "InstanceNorm2d", "InstanceNorm3d", "LayerNorm", "LazyBatchNorm1d", "LazyBatchNorm2d",
           "LazyBatchNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d",
           "LocalResponseNorm", "CrossMapLRN2d", "RMSNorm"]


def _reset_affine(module: Module) -> None:
    """The norms' affine parameters as initialised: weight ones, bias zeros (where present)."""
    if module.weight is not None:
        init.ones_(module.weight)
    if getattr(module, "bias", None) is not None:
        init.zeros_(module.bias)


class LayerNorm(Module):
    """Normalise the trailing ``normalized_shape`` dims; affine ``weight``/``bias`` (ones /
    zeros) when ``elementwise_affine``.

    >>> import numpy as np
    >>> ln = LayerNorm(2)
    >>> np.round(ln(np.array([[1.0, 3.0]], np.float32)), 3)
    array([[-1.,  1.]], dtype=float32)
    """

    def __init__(self, normalized_shape: int | tuple[int, ...], eps: float = 1e-5,
                 elementwise_affine: bool = True, bias: bool = True,
                 device: str | None = None, dtype: Any = None) -> None:
        super().__init__()
        if isinstance(normalized_shape, (int, numpy.integer)):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(int(n) for n in normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(init.ones_(empty(self.normalized_shape, dtype)))
            if bias:
                self.bias = Parameter(empty(self.normalized_shape, dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        place(self, device)

    def reset_parameters(self) -> None:
        _reset_affine(self)

    def forward(self, input: Any) -> Any:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class _NormBase(Module):
    """What batch and instance norms share, as in PyTorch: the affine parameters and the
    running statistics (``running_mean``, ``running_var``, ``num_batches_tracked``)."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True,
                 device: str | None = None, dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = Parameter(init.ones_(empty((num_features,), dtype)))
            if bias:  # PyTorch's bias=False: an affine scale without a shift
                self.bias = Parameter(empty((num_features,), dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", empty((num_features,), dtype))
            self.register_buffer("running_var", init.ones_(empty((num_features,), dtype)))
            self.register_buffer("num_batches_tracked", numpy.zeros((), numpy.int64))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        place(self, device)

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            init.zeros_(self.running_mean)
            init.ones_(self.running_var)
            self.num_batches_tracked = numpy.zeros((), numpy.int64)

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        _reset_affine(self)

    def _blend_running_stats(self, mean: Any, var: Any, factor: Any) -> None:
        """``running = (1 - factor) * running + factor * batch`` for the mean and the
        (already unbiased) variance; batch statistics carry no gradient."""
        rm, rv = self.running_mean, self.running_var
        mean, var = funcgrad.stop_gradient(mean), funcgrad.stop_gradient(var)
        self.running_mean = (1 - factor) * rm + factor * mean.astype(rm.dtype)
        self.running_var = (1 - factor) * rv + factor * var.astype(rv.dtype)

    def extra_repr(self) -> str:
        # PyTorch's: bias= says whether there is a shift parameter
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class _BatchNorm(_NormBase):
    _ndims: tuple[int, ...] = ()
    _version = 2  # as PyTorch: version 2 added the num_batches_tracked buffer

    def _load_from_state_dict(self, state_dict: dict[str, Any], prefix: str,
                              local_metadata: dict[str, Any], strict: bool,
                              missing_keys: list[str], unexpected_keys: list[str],
                              error_msgs: list[str]) -> None:
        version = local_metadata.get("version")
        key = prefix + "num_batches_tracked"
        if (version is None or version < 2) and self.track_running_stats \
                and key not in state_dict:
            state_dict[key] = numpy.zeros((), numpy.int64)  # older layouts: none tracked
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict,
                                      missing_keys, unexpected_keys, error_msgs)


    def _check_input_dim(self, input: Any) -> None:
        """Refuse an input of the wrong rank (PyTorch's hook: a subclass overrides it to
        accept other ranks, e.g. a BatchNorm2d over 3-D input; the statistics are over every
        axis but the channels, axis 1)."""
        if input.ndim not in self._ndims:
            raise ValueError(f"{type(self).__name__}: expected "
                             f"{' or '.join(f'{d}D' for d in self._ndims)} input (got "
                             f"{input.ndim}D input of shape {tuple(input.shape)})")

    def forward(self, input: Any) -> Any:
        name = type(self).__name__
        self._check_input_dim(input)
        if input.ndim < 2:
            raise ValueError(f"{name}: expected an input with a channel axis (N, C, ...), "
                             f"got shape {tuple(input.shape)}")
        if input.shape[1] != self.num_features:
            raise BadInputError(f"{name}: expected {self.num_features} channels (dim 1), got "
                             f"input shape {tuple(input.shape)}")
        if self.running_mean is not None:
            # PyTorch hands its running statistics to the kernel in training too, so their
            # dtype is checked there as well (eval checks them in F.batch_norm).
            norm_params_dtype(name, input, self.running_mean, self.running_var)
        use_batch = self.training or not self.track_running_stats
        if not use_batch:
            return F.batch_norm(input, self.running_mean, self.running_var, self.weight,
                                self.bias, False, 0.0, self.eps)
        n = math.prod(input.shape) // input.shape[1]
        if self.training and n == 1:
            raise ValueError(f"{name}: expected more than 1 value per channel when training, "
                             f"got input shape {tuple(input.shape)}")
        if self.training and self.track_running_stats:
            if n == 0:  # an empty batch counts, but has no statistics to blend in (PyTorch)
                self._count_batch()
            else:
                mean, var = F._batch_stats(funcgrad.stop_gradient(input))
                self._track_batch(mean, var, n)
        return F.batch_norm(input, None, None, self.weight, self.bias, True, 0.0, self.eps)

    def _count_batch(self) -> None:
        count = self.num_batches_tracked + 1
        # NumPy gives a scalar for 0-d + 1; the buffer must stay an array (copied into in
        # place by load_state_dict and swa_utils.AveragedModel)
        self.num_batches_tracked = numpy.asarray(count) if isinstance(count, numpy.generic) else count

    def _track_batch(self, mean: Any, var: Any, n: int) -> None:
        """Count the batch and blend its statistics (``var`` biased, over ``n`` values per
        channel) into the running ones: momentum-weighted, or the cumulative average when
        ``momentum`` is None; running_var tracks the unbiased variance, as in PyTorch."""
        self._count_batch()
        factor: Any = self.momentum
        if factor is None:
            factor = 1.0 / self.num_batches_tracked.astype(self.running_mean.dtype)
        self._blend_running_stats(mean, var * (n / (n - 1)), factor)


class BatchNorm1d(_BatchNorm):
    """Batch norm over ``(N, C)`` or ``(N, C, L)`` inputs; in training mode normalises with
    the batch statistics and updates the ``running_mean``/``running_var`` buffers
    (momentum-weighted, unbiased variance; ``momentum=None``: cumulative average); in eval
    mode uses them.

    >>> import numpy as np
    >>> bn = BatchNorm1d(1)
    >>> np.round(bn(np.array([[1.0], [3.0]], np.float32)), 3).ravel()
    array([-1.,  1.], dtype=float32)
    >>> bn.running_mean, bn.running_var, int(bn.num_batches_tracked)
    (array([0.2], dtype=float32), array([1.1], dtype=float32), 1)
    """

    _ndims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch norm over ``(N, C, H, W)`` inputs (see :class:`BatchNorm1d`).

    >>> import numpy as np
    >>> BatchNorm2d(3)(np.random.default_rng(0).normal(size=(2, 3, 4, 4)).astype(np.float32)).shape
    (2, 3, 4, 4)
    """

    _ndims = (4,)


class GroupNorm(Module):
    """Normalise ``(N, C, ...)`` over groups of ``num_channels // num_groups`` channels and
    the spatial axes; per-channel affine ``weight``/``bias`` (ones / zeros) when ``affine``.

    >>> import numpy as np
    >>> gn = GroupNorm(2, 4)
    >>> np.round(gn(np.array([[1.0, 3.0, 0.0, 2.0]], np.float32)), 3)
    array([[-1.,  1., -1.,  1.]], dtype=float32)
    """

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, device: str | None = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__()
        if num_groups <= 0 or num_channels % num_groups:
            raise ValueError(f"GroupNorm: num_channels ({num_channels}) must be divisible by "
                             f"num_groups ({num_groups})")
        self.num_groups, self.num_channels = num_groups, num_channels
        self.eps, self.affine = eps, affine
        if affine:
            self.weight = Parameter(init.ones_(empty((num_channels,), dtype)))
            if bias:
                self.bias = Parameter(empty((num_channels,), dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        place(self, device)

    def reset_parameters(self) -> None:
        _reset_affine(self)

    def forward(self, input: Any) -> Any:
        if input.ndim < 2 or input.shape[1] != self.num_channels:
            raise BadInputError(f"GroupNorm: expected input (N, {self.num_channels}, ...), got "
                             f"shape {tuple(input.shape)}")
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, "
                f"affine={self.affine}, bias={self.bias is not None}")


class BatchNorm3d(_BatchNorm):
    """Batch norm over ``(N, C, D, H, W)`` inputs (see :class:`BatchNorm1d`).

    >>> import numpy as np
    >>> x = np.random.default_rng(0).normal(size=(2, 2, 3, 4, 4)).astype(np.float32)
    >>> BatchNorm3d(2)(x).shape
    (2, 2, 3, 4, 4)
    """

    _ndims = (5,)


class _InstanceNorm(_NormBase):
    _n = 1

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = False, track_running_stats: bool = False,
                 device: str | None = None, dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)

    def _get_no_batch_dim(self) -> int:
        """The rank of an unbatched input (PyTorch's helper)."""
        return self._n + 1

    def _want(self) -> str:
        dims = ("L",) if self._n == 1 else ("H", "W") if self._n == 2 else ("D", "H", "W")
        return f"(N, {self.num_features}, {', '.join(dims)}) or ({self.num_features}, " \
               f"{', '.join(dims)})"

    def _check_input_dim(self, input: Any) -> None:
        """Refuse an input of the wrong rank (PyTorch's hook, which a subclass may override)."""
        n, shape = self._n, tuple(input.shape)
        if len(shape) not in (n + 1, n + 2):
            raise ValueError(f"{self!r}: expected a {n + 2}-D batched or {n + 1}-D unbatched "
                             f"input {self._want()}, got shape {shape}; use InstanceNorm"
                             f"{max(len(shape) - 2, 1)}d for this rank or add a batch axis")

    def forward(self, input: Any) -> Any:
        n = self._n
        shape = tuple(input.shape)
        want = self._want()
        self._check_input_dim(input)
        unbatched = len(shape) == self._get_no_batch_dim()
        x = input[None] if unbatched else input
        if x.shape[1] != self.num_features:
            if self.affine or self.track_running_stats:
                # (PyTorch: ValueError with affine, RuntimeError from the running stats)
                raise BadInputError(f"{self!r}: expected input {want} with "
                                    f"{self.num_features} channels, got shape {shape}; set "
                                    "num_features to the channel count (channels first)")
            # Nothing per channel is kept: PyTorch normalises anyway, with this warning.
            warnings.warn("input's size at dim=1 does not match num_features. You can silence "
                          "this warning by not passing in num_features, which is not used "
                          "because affine=False", UserWarning, stacklevel=3)
        use_input = self.training or not self.track_running_stats
        if self.training and self.track_running_stats:
            # As PyTorch: momentum=None means 0 here (no update), and num_batches_tracked
            # is registered but never advanced by instance norm.
            factor: Any = 0.0 if self.momentum is None else self.momentum
            fixed = funcgrad.stop_gradient(x)
            axes = tuple(range(2, x.ndim))
            m = math.prod(x.shape[2:])
            mean = fixed.mean(axis=axes)
            var = ((fixed - mean.reshape(mean.shape + (1,) * n)) ** 2).sum(axis=axes) / max(
                m - 1, 1)
            # PyTorch averages the per-instance statistics over the batch (unbiased var).
            self._blend_running_stats(mean.mean(axis=0), var.mean(axis=0), factor)
        out = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                              use_input, 0.0, self.eps)
        return out[0] if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    """Normalise each channel of each example of ``(N, C, L)`` (or ``(C, L)``) over ``L``;
    ``affine`` (default False) and ``track_running_stats`` (default False) as PyTorch.

    >>> import numpy as np
    >>> InstanceNorm1d(1)(np.array([[[1.0, 3.0]]], np.float32)).round(3)
    array([[[-1.,  1.]]], dtype=float32)
    """

    _n = 1


class InstanceNorm2d(_InstanceNorm):
    """Instance norm over ``(N, C, H, W)`` or ``(C, H, W)`` (see :class:`InstanceNorm1d`).

    >>> import numpy as np
    >>> InstanceNorm2d(3, affine=True)(np.ones((2, 3, 4, 4), np.float32)).shape
    (2, 3, 4, 4)
    """

    _n = 2


class InstanceNorm3d(_InstanceNorm):
    """Instance norm over ``(N, C, D, H, W)`` or ``(C, D, H, W)``.

    >>> import numpy as np
    >>> InstanceNorm3d(1)(np.ones((1, 1, 2, 2, 2))).shape
    (1, 1, 2, 2, 2)
    """

    _n = 3


class _LazyNormMixin(LazyModuleMixin):
    """A batch or instance norm whose ``num_features`` is read from its first input's channel
    axis, as PyTorch's ``LazyBatchNorm*d``/``LazyInstanceNorm*d``: until then
    ``num_features`` is 0 and the parameters and running statistics are empty arrays (the
    state-dict keys are already there); the first call (or loading a state dict) creates
    them and the module becomes the plain layer (``cls_to_become``). Run that first call
    eagerly, before ``jit``/``grad`` or building an optimizer."""

    cls_to_become: type = _NormBase

    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: str | None = None,
                 dtype: Any = None, *, bias: bool = True) -> None:
        self.cls_to_become.__init__(self, 0, eps, momentum, affine, track_running_stats,
                                    device, dtype, bias=bias)
        self._lazy_bias = bias
        # PyTorch's UninitializedParameter/UninitializedBuffer (num_batches_tracked is real)
        for reg, kind in (("_parameters", "parameter"), ("_buffers", "buffer")):
            for name, v in getattr(self, reg).items():
                if v is not None and name != "num_batches_tracked":
                    mark_uninitialized(v, kind)

    def has_uninitialized_params(self) -> bool:
        """True until the first call has created the parameters."""
        return type(self) is not self.cls_to_become

    def _channel_axis(self, shape: tuple[int, ...]) -> int:
        cls = self.cls_to_become
        if issubclass(cls, _BatchNorm):
            ranks, axis = cls._ndims, 1
        else:
            ranks, axis = (cls._n + 1, cls._n + 2), int(len(shape) == cls._n + 2)
        if len(shape) not in ranks:
            raise ValueError(f"{type(self).__name__}: expected "
                             f"{' or '.join(f'{d}D' for d in ranks)} input to infer "
                             f"num_features from, got shape {shape}")
        return axis

    def _materialize(self, num_features: int) -> None:
        # the arrays, not their UninitializedParameter/UninitializedBuffer
        like = next((a for a in (self._parameters.get("weight"), self._buffers.get("running_mean"))
                     if a is not None), None)
        dtype = None if like is None else like.dtype  # after .double() and the like
        real = self.cls_to_become(num_features, self.eps, self.momentum, self.affine,
                                  self.track_running_stats, dtype=dtype, bias=self._lazy_bias)
        if like is not None and device_of(like) not in (None, "cpu"):
            real.to(device_of(like))
        self.num_features = num_features
        for reg in ("_parameters", "_buffers"):  # the registries stay ours (hooks, frozen)
            getattr(self, reg).update(getattr(real, reg))
        del self._lazy_bias
        self.__class__ = self.cls_to_become

    def initialize_parameters(self, input: Any) -> None:
        """PyTorch's lazy-module hook: create the parameters and buffers for ``input``'s
        channel count without running the layer (it becomes the plain class)."""
        shape = tuple(getattr(input, "shape", ()))
        axis = self._channel_axis(shape)
        if is_tracer(input):
            raise TypeError(f"{type(self).__name__}: its parameters are created by the first "
                            "call, which must run eagerly: call it once on an example input "
                            "(a dry run) before jit, grad or vmap")
        self._materialize(shape[axis])

    def forward(self, input: Any) -> Any:
        self.initialize_parameters(input)
        return self.forward(input)

    def _load_from_state_dict(self, state_dict: dict[str, Any], prefix: str, *args: Any
                              ) -> None:
        cls = self.cls_to_become  # (a class attribute of the lazy class only)
        for name in ("weight", "running_mean"):  # the checkpoint's arrays say how many
            saved = state_dict.get(prefix + name)
            # (an unmaterialised lazy layer's empty placeholders say nothing)
            if saved is not None and getattr(self, name) is not None and saved.shape[0]:
                self._materialize(int(saved.shape[0]))
                break
        # The plain layer's loading, lazy or not (zero-argument super() refuses a module
        # whose class changed under it).
        cls._load_from_state_dict(self, state_dict, prefix, *args)


class LazyBatchNorm1d(_LazyNormMixin, BatchNorm1d):
    """:class:`BatchNorm1d` with ``num_features`` inferred from the first input.

    >>> import numpy as np
    >>> bn = LazyBatchNorm1d()
    >>> bn(np.ones((4, 3), np.float32)).shape, type(bn).__name__, bn.running_mean.shape
    ((4, 3), 'BatchNorm1d', (3,))
    """

    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyNormMixin, BatchNorm2d):
    """:class:`BatchNorm2d` with ``num_features`` inferred from the first input.

    >>> import numpy as np
    >>> LazyBatchNorm2d()(np.ones((2, 3, 4, 4), np.float32)).shape
    (2, 3, 4, 4)
    """

    cls_to_become = BatchNorm2d


class LazyBatchNorm3d(_LazyNormMixin, BatchNorm3d):
    """:class:`BatchNorm3d` with ``num_features`` inferred from the first input.

    >>> import numpy as np
    >>> LazyBatchNorm3d()(np.ones((2, 3, 2, 2, 2), np.float32)).shape
    (2, 3, 2, 2, 2)
    """

    cls_to_become = BatchNorm3d


class LazyInstanceNorm1d(_LazyNormMixin, InstanceNorm1d):
    """:class:`InstanceNorm1d` with ``num_features`` inferred from the first input (the
    channel axis of ``(N, C, L)`` or ``(C, L)``); ``affine`` and ``track_running_stats``
    default to True, as PyTorch's lazy instance norms.

    >>> import numpy as np
    >>> m = LazyInstanceNorm1d()
    >>> m(np.ones((3, 5), np.float32)).shape, m.num_features
    ((3, 5), 3)
    """

    cls_to_become = InstanceNorm1d


class LazyInstanceNorm2d(_LazyNormMixin, InstanceNorm2d):
    """:class:`InstanceNorm2d` with ``num_features`` inferred from the first input.

    >>> import numpy as np
    >>> LazyInstanceNorm2d()(np.ones((2, 3, 4, 4), np.float32)).shape
    (2, 3, 4, 4)
    """

    cls_to_become = InstanceNorm2d


class LazyInstanceNorm3d(_LazyNormMixin, InstanceNorm3d):
    """:class:`InstanceNorm3d` with ``num_features`` inferred from the first input.

    >>> import numpy as np
    >>> LazyInstanceNorm3d()(np.ones((1, 2, 2, 2, 2), np.float32)).shape
    (1, 2, 2, 2, 2)
    """

    cls_to_become = InstanceNorm3d


class RMSNorm(Module):
    """x / sqrt(mean(x**2) + eps) over the trailing ``normalized_shape`` dims, times a
    learnable ``weight`` (ones) when ``elementwise_affine``; ``eps=None``: machine epsilon.

    >>> import numpy as np
    >>> RMSNorm(2)(np.array([[3.0, 4.0]], np.float32)).round(4)
    array([[0.8485, 1.1314]], dtype=float32)
    """

    def __init__(self, normalized_shape: int | tuple[int, ...], eps: float | None = None,
                 elementwise_affine: bool = True, device: str | None = None,
                 dtype: Any = None) -> None:
        super().__init__()
        if isinstance(normalized_shape, (int, numpy.integer)):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(int(n) for n in normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(init.ones_(empty(self.normalized_shape, dtype)))
        else:
            self.register_parameter("weight", None)
        place(self, device)

    def reset_parameters(self) -> None:
        _reset_affine(self)

    def forward(self, x: Any) -> Any:  # (PyTorch's name for RMSNorm's input)
        input = x
        k = len(self.normalized_shape)
        if tuple(input.shape[input.ndim - k:]) != self.normalized_shape:
            raise BadInputError(f"{self!r}: expected input (*, {', '.join(map(str, self.normalized_shape))}), "
                             f"got shape {tuple(input.shape)}; normalized_shape must match "
                             "the input's trailing dims")
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class LocalResponseNorm(Module):
    """Normalise each channel by its ``size`` neighbours' mean square (AlexNet's LRN).

    >>> import numpy as np
    >>> LocalResponseNorm(2)(np.ones((1, 3, 2, 2))).shape
    (1, 3, 2, 2)
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75,
                 k: float = 1.0) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Any) -> Any:
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class CrossMapLRN2d(Module):
    """Lua Torch's cross-channel LRN on ``(N, C, H, W)`` (PyTorch's legacy ``CrossMapLRN2d``):
    ``x / (k + alpha / size * s)**beta`` where ``s`` sums ``x**2`` over the channels within
    ``p - 1`` of each one, ``p = (size - 1) // 2 + 1``, and, as PyTorch's running sum never
    takes channel 0 out again, also over channel 0 for every channel ``c >= p``. (So it
    differs from :class:`LocalResponseNorm`, and from it for even ``size``.) Gradients are the
    derivative of this forward pass; PyTorch's hand-written backward is not (its
    ``gradcheck`` fails).

    >>> import numpy as np
    >>> CrossMapLRN2d(3, alpha=1.0, beta=1.0, k=0.0)(np.ones((1, 2, 1, 1)))[0, :, 0, 0]
    array([1.5, 1.5])
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Any) -> Any:
        if fnp.ndim(input) != 4:
            raise ValueError(f"CrossMapLRN2d: expected 4D input (N, C, H, W), got shape "
                             f"{tuple(fnp.shape(input))}")
        n, c, h, w = fnp.shape(input)
        p = int((self.size - 1) / 2 + 1)
        sq = input * input
        padded = fnp.pad(sq, [(0, 0), (p - 1, p - 1), (0, 0), (0, 0)])
        window = sum(padded[:, t:t + c] for t in range(2 * p - 1))
        if c > p:  # channel 0 stays in the running sum from channel p on
            kept = fnp.broadcast_to(sq[:, :1], (n, c - p, h, w))
            window = window + fnp.concatenate([fnp.zeros_like(sq[:, :p]), kept], axis=1)
        return input * (self.k + self.alpha / self.size * window) ** (-self.beta)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
