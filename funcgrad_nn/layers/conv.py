"""Convolutions: Conv1d/2d/3d and ConvTranspose1d/2d/3d (PyTorch weight layouts and init).

Each forward is one ``patches``/``fold`` window primitive plus one matrix product (see
``funcgrad_nn._convolution``).
"""

from __future__ import annotations

import inspect
import math
from typing import Any

import funcgrad.numpy as fnp
from funcgrad.backend import device_of
from funcgrad.core import is_tracer
from funcgrad_nn import functional as F
from funcgrad_nn import init
from funcgrad_nn._convolution import dtype_mismatch, transposed_output_padding
from funcgrad_nn.amp import casts
from funcgrad_nn.init import default_generator
from funcgrad_nn.layers._util import empty, ntuple, place
from funcgrad_nn.layers.lazy import LazyModuleMixin
from funcgrad_nn.module import BadInputError, Module, Parameter
from funcgrad_nn.parameter import UninitializedParameter

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
           "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
           "LazyConvTranspose2d", "LazyConvTranspose3d"]


# PyTorch's padding modes, as numpy.pad names them.
_PAD_MODES = {"zeros": "constant", "reflect": "reflect", "replicate": "edge",
              "circular": "wrap"}


class _ConvNd(Module):
    _n = 0

    _transposed = False

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: str | None = None,
                 dtype: Any = None, output_padding: Any = 0) -> None:
        super().__init__()
        name = type(self).__name__
        if self._transposed and padding_mode != "zeros":
            raise ValueError(f'{name}: only padding_mode="zeros" is supported for transposed '
                             f"convolutions, got {padding_mode!r}")
        if isinstance(padding, str) and (self._transposed or padding not in ("same", "valid")):
            raise ValueError(f"{name}: padding must be an int, a tuple"
                             + ("" if self._transposed else ", 'same' or 'valid'")
                             + f", got {padding!r}")
        if padding == "same" and any(s != 1 for s in ntuple(stride, self._n)):
            raise ValueError(f"{name}: padding='same' is not supported for strided "
                             "convolutions (use an explicit padding)")
        if padding_mode not in _PAD_MODES:
            raise ValueError(f"{name}: padding_mode must be one of {sorted(_PAD_MODES)}, got "
                             f"{padding_mode!r}")
        if groups < 1 or in_channels % groups or out_channels % groups:
            raise ValueError(f"{name}: in_channels ({in_channels}) and out_channels "
                             f"({out_channels}) must be divisible by groups ({groups})")
        n = self._n
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = ntuple(kernel_size, n)
        self.stride = ntuple(stride, n)
        self.padding = padding if isinstance(padding, str) else ntuple(padding, n)
        self.dilation = ntuple(dilation, n)
        self.groups, self.padding_mode = groups, padding_mode
        self.output_padding = ntuple(output_padding, n)
        # PyTorch's F.pad argument for the non-zero padding modes (last dim first), which
        # subclasses overriding _conv_forward read
        if padding == "same":
            halves = [(d * (k - 1) // 2, d * (k - 1) - d * (k - 1) // 2)
                      for d, k in zip(self.dilation, self.kernel_size)]
        else:
            halves = [(0, 0)] * n if padding == "valid" else [(p, p) for p in self.padding]
        self._reversed_padding_repeated_twice = tuple(v for pair in reversed(halves)
                                                      for v in pair)
        if self._transposed:
            for op, s, d in zip(self.output_padding, self.stride, self.dilation):
                if op < 0 or (op >= s and op >= d):  # PyTorch: a RuntimeError in forward
                    raise BadInputError(f"{name}: output_padding {self.output_padding} must be "
                                     f"smaller than either stride {self.stride} or dilation "
                                     f"{self.dilation}; to get a larger output, raise the "
                                     "stride or pass output_size= to forward")
            wshape = (in_channels, out_channels // groups)
        else:
            wshape = (out_channels, in_channels // groups)
        self.weight = Parameter(empty(wshape + self.kernel_size, dtype))
        if bias:
            self.bias = Parameter(empty((out_channels,), dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()
        place(self, device)

    def _padded(self, x: Any) -> tuple[Any, Any]:
        """(input, padding for the convolution): other padding modes pad explicitly first."""
        if self.padding_mode == "zeros":
            return x, self.padding
        if self.padding == "valid":
            return x, 0
        if self.padding == "same":
            pads = []
            for k, d in zip(self.kernel_size, self.dilation):
                total = d * (k - 1)
                pads.append((total // 2, total - total // 2))
        else:
            pads = [(p, p) for p in self.padding]
        x = fnp.pad(x, [(0, 0)] * (fnp.ndim(x) - self._n) + pads,
                    mode=_PAD_MODES[self.padding_mode])
        return x, 0

    def _check_input(self, x: Any) -> Any:
        """Rank, channel count and dtype, checked before any work, with the fix in the message;
        returns the weight, read once (a parametrization may compute it on each read)."""
        n = self._n
        shape = tuple(fnp.shape(x))
        dims = {1: "L", 2: "HW", 3: "DHW"}[n]
        want = f"(N, {self.in_channels}, {', '.join(dims)}) or ({self.in_channels}, " \
               f"{', '.join(dims)})"
        if len(shape) not in (n + 1, n + 2):
            raise BadInputError(f"{self!r}: expected a {n + 2}-D batched or {n + 1}-D "
                                f"unbatched input {want}, got shape {shape}; add or remove a "
                                f"batch axis (x[None]) or use a "
                                f"{len(shape) - 2 if len(shape) > 2 else '?'}-D layer")
        c = shape[-n - 1]
        if c != self.in_channels:
            raise BadInputError(f"{self!r}: expected input {want} with {self.in_channels} "
                                f"channels (axis {len(shape) - n - 1}), got shape {shape} with "
                                f"{c}; set in_channels to the input's channel count (channels "
                                "first, as PyTorch: permute channels-last data)")
        weight = self.weight
        problem = dtype_mismatch(x, weight)
        op = f"conv{'_transpose' if self._transposed else ''}{self._n}d"
        if problem is not None and not casts(op, x, weight):
            raise BadInputError(f"{self!r}: {problem}")
        return weight

    def reset_parameters(self, generator: Any = None) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5), generator=generator)
        if self.bias is not None:
            fan_in = self.weight.shape[1] * math.prod(self.kernel_size)
            if fan_in:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound, generator=generator)

    def extra_repr(self) -> str:
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * self._n:  # PyTorch prints padding=valid too
            s += f", padding={self.padding}"
        if self.dilation != (1,) * self._n:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * self._n:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class Conv1d(_ConvNd):
    """1-D convolution over ``(N, C, L)``; weight ``(out, in // groups, k)``.

    >>> import numpy as np
    >>> Conv1d(2, 4, 3, padding=1)(np.ones((1, 2, 5), np.float32)).shape
    (1, 4, 5)
    """

    _n = 1

    def forward(self, input: Any) -> Any:
        return self._conv_forward(input, self._check_input(input), self.bias)

    def _conv_forward(self, input: Any, weight: Any, bias: Any) -> Any:
        """The convolution with ``weight`` and ``bias`` (PyTorch's hook that subclasses such
        as weight-standardised convolutions call or override), after the padding mode."""
        x, padding = self._padded(input)
        return F.conv1d(x, weight, bias, self.stride, padding, self.dilation, self.groups)


class Conv2d(_ConvNd):
    """2-D convolution over ``(N, C, H, W)``; weight ``(out, in // groups, kh, kw)``; stride,
    padding (int, pair, 'same', 'valid'), dilation and groups as in PyTorch.

    >>> import numpy as np
    >>> Conv2d(3, 8, 3, stride=2, padding=1)(np.ones((2, 3, 8, 8), np.float32)).shape
    (2, 8, 4, 4)
    """

    _n = 2

    def forward(self, input: Any) -> Any:
        return self._conv_forward(input, self._check_input(input), self.bias)

    def _conv_forward(self, input: Any, weight: Any, bias: Any) -> Any:
        """The convolution with ``weight`` and ``bias`` (PyTorch's hook that subclasses such
        as weight-standardised convolutions call or override), after the padding mode."""
        x, padding = self._padded(input)
        return F.conv2d(x, weight, bias, self.stride, padding, self.dilation, self.groups)


class Conv3d(_ConvNd):
    """3-D convolution over ``(N, C, D, H, W)``; weight ``(out, in // groups, kd, kh, kw)``.

    >>> import numpy as np
    >>> Conv3d(2, 4, 3, padding=1)(np.ones((1, 2, 4, 5, 6), np.float32)).shape
    (1, 4, 4, 5, 6)
    """

    _n = 3

    def forward(self, input: Any) -> Any:
        return self._conv_forward(input, self._check_input(input), self.bias)

    def _conv_forward(self, input: Any, weight: Any, bias: Any) -> Any:
        """The convolution with ``weight`` and ``bias`` (PyTorch's hook that subclasses such
        as weight-standardised convolutions call or override), after the padding mode."""
        x, padding = self._padded(input)
        return F.conv3d(x, weight, bias, self.stride, padding, self.dilation, self.groups)


class _ConvTransposeNd(_ConvNd):
    _transposed = True

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, output_padding: Any = 0, groups: int = 1,
                 bias: bool = True, dilation: Any = 1, padding_mode: str = "zeros",
                 device: str | None = None, dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype, output_padding)

    def _output_padding(self, input: Any, output_size: Any, stride: Any, padding: Any,
                        kernel_size: Any, num_spatial_dims: int, dilation: Any = None
                        ) -> Any:
        """The output padding that gives ``output_size`` (``self.output_padding`` without
        one): PyTorch's helper, which subclasses writing their own forward call.

        >>> import numpy as np
        >>> m = ConvTranspose1d(1, 1, 3, stride=2)
        >>> m._output_padding(np.ones((1, 1, 4)), [10], m.stride, m.padding, m.kernel_size, 1)
        [1]
        """
        if output_size is None:
            return self.output_padding
        n = int(num_spatial_dims)
        dil = self.dilation if dilation is None else tuple(dilation)
        in_sizes = tuple(int(v) for v in input.shape[-n:])
        return list(transposed_output_padding(
            in_sizes, tuple(kernel_size), tuple(stride), tuple(padding), dil,
            self.output_padding, output_size, n, type(self).__name__))

    def forward(self, input: Any, output_size: Any = None) -> Any:
        weight = self._check_input(input)
        fn = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[self._n - 1]
        return fn(input, weight, self.bias, self.stride, self.padding,
                  self.output_padding, self.groups, self.dilation, output_size=output_size)


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution (a "deconvolution"); weight ``(in, out // groups, k)``;
    ``forward(input, output_size=None)`` as PyTorch.

    >>> import numpy as np
    >>> ConvTranspose1d(2, 3, 4, stride=2, padding=1)(np.ones((1, 2, 5), np.float32)).shape
    (1, 3, 10)
    """

    _n = 1


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution; weight ``(in, out // groups, kh, kw)``; ``stride``,
    ``padding``, ``output_padding``, ``groups``, ``dilation`` and ``output_size=`` in forward.

    >>> import numpy as np
    >>> up = ConvTranspose2d(8, 4, 3, stride=2, padding=1)
    >>> up(np.ones((1, 8, 5, 5), np.float32)).shape
    (1, 4, 9, 9)
    >>> up(np.ones((1, 8, 5, 5), np.float32), output_size=(10, 10)).shape
    (1, 4, 10, 10)
    """

    _n = 2


class ConvTranspose3d(_ConvTransposeNd):
    """3-D transposed convolution; weight ``(in, out // groups, kd, kh, kw)``.

    >>> import numpy as np
    >>> ConvTranspose3d(2, 1, 2, stride=2)(np.ones((1, 2, 2, 3, 4), np.float32)).shape
    (1, 1, 4, 6, 8)
    """

    _n = 3


class _LazyConvMixin(LazyModuleMixin):
    """A convolution whose ``in_channels`` is read off its first input (PyTorch's
    ``LazyConv*``): until then its parameters are ``UninitializedParameter`` placeholders
    (empty arrays in ``state_dict()``, carried by ``to(device)``/``double()``);
    the first call (or a ``load_state_dict`` with a ``weight``) creates and initialises them
    on the placeholders' device and in their dtype, and the module becomes the plain layer
    (``cls_to_become``), as in PyTorch. Run that first call eagerly (a dry run) before
    ``jit``/``grad`` or building an optimizer: the real parameters do not exist before it."""

    cls_to_become: type = _ConvNd

    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 *args: Any, **kwargs: Any) -> None:
        Module.__init__(self)
        self._lazy_args = (kernel_size, stride, padding) + args
        self._lazy_kwargs = dict(kwargs)
        # The settings, checked now as PyTorch does, from a layer of the smallest valid
        # in_channels; its initialisation must not advance the global generator.
        gen = default_generator()
        saved = gen.bit_generator.state
        try:
            probe = self.cls_to_become(self._groups(), out_channels, *self._lazy_args,
                                       **self._lazy_kwargs)
        finally:
            gen.bit_generator.state = saved
        for k, v in vars(probe).items():
            if not k.startswith("_") and k != "training":
                setattr(self, k, v)
        self.in_channels = 0  # PyTorch's value until the first input says
        self.weight = UninitializedParameter(dtype=probe.weight.dtype)
        if probe.bias is not None:
            self.bias = UninitializedParameter(dtype=probe.weight.dtype)
        else:
            self.register_parameter("bias", None)
        place(self, device_of(probe.weight))

    def _materialize(self, in_channels: int) -> None:
        # Created where and in the dtype the placeholder now has (after .to(), .double()).
        like = self._parameters["weight"]  # the array, not its UninitializedParameter
        call = inspect.signature(self.cls_to_become.__init__).bind(
            self, in_channels, self.out_channels, *self._lazy_args, **self._lazy_kwargs)
        call.arguments.update(device=None, dtype=like.dtype)
        real = self.cls_to_become(*call.args[1:], **call.kwargs)
        place(real, device_of(like))
        for k, v in vars(real).items():  # the layer's settings (the registries stay ours)
            if not k.startswith("_") and k != "training":
                setattr(self, k, v)
        self._parameters.update(real._parameters)
        del self._lazy_args, self._lazy_kwargs
        self.__class__ = self.cls_to_become

    def _groups(self) -> int:
        # The positional order after padding: Conv*d's dilation, groups; ConvTranspose*d's
        # output_padding, groups.
        rest = self._lazy_args[3:]
        return int(self._lazy_kwargs.get("groups", rest[1] if len(rest) > 1 else 1))

    def has_uninitialized_params(self) -> bool:
        """True until the first call (or :meth:`initialize_parameters`) creates them."""
        return type(self) is not self.cls_to_become

    def initialize_parameters(self, input: Any, *args: Any, **kwargs: Any) -> None:
        """PyTorch's lazy-module hook: create the parameters for ``input``'s channel count
        without running the layer (it becomes the plain class)."""
        shape = tuple(getattr(input, "shape", ()))
        n = self.cls_to_become._n
        if len(shape) not in (n + 1, n + 2):
            raise BadInputError(f"{type(self).__name__}: expected a {n + 2}-D batched or {n + 1}-D "
                             f"unbatched input to infer in_channels from, got shape {shape}")
        if is_tracer(input):
            raise TypeError(f"{type(self).__name__}: its parameters are created by the first "
                            "call, which must run eagerly: call it once on an example input "
                            "(a dry run) before jit, grad or vmap")
        self._materialize(shape[1] if len(shape) == n + 2 else shape[0])

    def forward(self, input: Any, *args: Any, **kwargs: Any) -> Any:
        self.initialize_parameters(input)
        return self.forward(input, *args, **kwargs)

    def _load_from_state_dict(self, state_dict: dict[str, Any], prefix: str, *args: Any
                              ) -> None:
        cls = self.cls_to_become  # (a class attribute of the lazy class only)
        w = state_dict.get(prefix + "weight")
        if w is not None and len(getattr(w, "shape", ())) == cls._n + 2:
            # the checkpoint's weight says how many input channels
            transposed = cls._transposed
            self._materialize(int(w.shape[0]) if transposed else
                              int(w.shape[1]) * self._groups())
        # The plain layer's loading, lazy or not (zero-argument super() refuses a module
        # whose class changed under it).
        cls._load_from_state_dict(self, state_dict, prefix, *args)


class LazyConv1d(_LazyConvMixin, Conv1d):
    """:class:`Conv1d` with ``in_channels`` inferred from the first input.

    >>> import numpy as np
    >>> conv = LazyConv1d(4, 3)
    >>> conv(np.ones((2, 5, 7), np.float32)).shape, type(conv).__name__, conv.weight.shape
    ((2, 4, 5), 'Conv1d', (4, 5, 3))
    """

    cls_to_become = Conv1d


class LazyConv2d(_LazyConvMixin, Conv2d):
    """:class:`Conv2d` with ``in_channels`` inferred from the first input.

    >>> import numpy as np
    >>> conv = LazyConv2d(8, 3, padding=1)
    >>> conv(np.ones((1, 3, 5, 5), np.float32)).shape, conv.in_channels
    ((1, 8, 5, 5), 3)
    """

    cls_to_become = Conv2d


class LazyConv3d(_LazyConvMixin, Conv3d):
    """:class:`Conv3d` with ``in_channels`` inferred from the first input.

    >>> import numpy as np
    >>> LazyConv3d(2, 2)(np.ones((3, 4, 4, 4), np.float32)).shape
    (2, 3, 3, 3)
    """

    cls_to_become = Conv3d


class _LazyConvTransposeMixin(_LazyConvMixin):
    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1, padding_mode: str = "zeros", device: str | None = None,
                 dtype: Any = None) -> None:
        super().__init__(out_channels, kernel_size, stride, padding, output_padding, groups,
                         bias, dilation, padding_mode, device, dtype)


class LazyConvTranspose1d(_LazyConvTransposeMixin, ConvTranspose1d):
    """:class:`ConvTranspose1d` with ``in_channels`` inferred from the first input.

    >>> import numpy as np
    >>> LazyConvTranspose1d(3, 2, stride=2)(np.ones((1, 4, 5), np.float32)).shape
    (1, 3, 10)
    """

    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTransposeMixin, ConvTranspose2d):
    """:class:`ConvTranspose2d` with ``in_channels`` inferred from the first input.

    >>> import numpy as np
    >>> up = LazyConvTranspose2d(4, 3, stride=2, padding=1)
    >>> up(np.ones((1, 8, 5, 5), np.float32)).shape, up.weight.shape
    ((1, 4, 9, 9), (8, 4, 3, 3))
    """

    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTransposeMixin, ConvTranspose3d):
    """:class:`ConvTranspose3d` with ``in_channels`` inferred from the first input.

    >>> import numpy as np
    >>> LazyConvTranspose3d(1, 2, stride=2)(np.ones((1, 2, 2, 2, 2), np.float32)).shape
    (1, 1, 4, 4, 4)
    """

    cls_to_become = ConvTranspose3d
