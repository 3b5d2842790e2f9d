"""Linear, LazyLinear, Bilinear, Identity, Flatten, Unflatten."""

from __future__ import annotations

import math
from typing import Any

import funcgrad.numpy as fnp
from funcgrad.backend import device_of
from funcgrad.core import is_tracer
from funcgrad_nn import functional as F
from funcgrad_nn import init
from funcgrad_nn._convolution import dtype_mismatch
from funcgrad_nn.amp import casts
from funcgrad_nn.layers._util import empty, place
from funcgrad_nn.layers.lazy import LazyModuleMixin
from funcgrad_nn.module import BadInputError, Module, Parameter, bad_input
from funcgrad_nn.parameter import UninitializedParameter

__all__ = ["Bilinear", "Flatten", "Identity", "LazyLinear", "Linear", "Unflatten"]


class Identity(Module):
    """Returns its input (extra constructor arguments are ignored, as in PyTorch).

    >>> import numpy as np
    >>> Identity(54, unused="x")(np.ones(2))
    array([1., 1.])
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Any) -> Any:
        return input


class Linear(Module):
    """y = x @ weight.T + bias; weight ``(out_features, in_features)``, PyTorch's default
    init (kaiming_uniform with a=sqrt(5), bias U(-1/sqrt(in), 1/sqrt(in))).

    >>> import numpy as np
    >>> m = Linear(3, 2)
    >>> m.weight.shape, m.bias.shape, m.weight.dtype
    ((2, 3), (2,), dtype('float32'))
    >>> m(np.ones((4, 3), np.float32)).shape
    (4, 2)
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 device: str | None = None, dtype: Any = None) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(empty((out_features, in_features), dtype))
        if bias:
            self.bias = Parameter(empty((out_features,), dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()
        place(self, device)

    def reset_parameters(self, generator: Any = None) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5), generator=generator)
        if self.bias is not None:
            bound = 1 / math.sqrt(self.in_features) if self.in_features > 0 else 0
            init.uniform_(self.bias, -bound, bound, generator=generator)

    def forward(self, input: Any) -> Any:
        weight = self.weight  # read once: a parametrization may compute it on each read
        shape = tuple(getattr(input, "shape", ()))
        wshape = tuple(fnp.shape(weight))
        if len(wshape) != 2:
            # (a weight swapped in by functional_call or load_state_dict(strict=False))
            raise bad_input(self, f"weight: expected a matrix (out_features, in_features) = "
                                  f"({self.out_features}, {self.in_features}), got shape "
                                  f"{wshape}", "pass a 2-D weight")
        if len(shape) == 0 or shape[-1] != weight.shape[1]:
            raise bad_input(self, f"input of shape {shape} does not end in in_features="
                                  f"{weight.shape[1]} (mat1 and mat2 shapes cannot be "
                                  f"multiplied)", f"pass arrays of shape (*, {weight.shape[1]})")
        problem = dtype_mismatch(input, weight)
        if problem is not None and not casts("linear", input, weight):
            raise bad_input(self, *problem.split(". Fix: "))
        return F.linear(input, weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class NonDynamicallyQuantizableLinear(Linear):
    """:class:`Linear` under PyTorch's name for :class:`MultiheadAttention`'s ``out_proj``
    (so the module's repr reads as PyTorch's).

    >>> NonDynamicallyQuantizableLinear(2, 3)
    NonDynamicallyQuantizableLinear(in_features=2, out_features=3, bias=True)
    """


class LazyLinear(LazyModuleMixin, Linear):
    """A :class:`Linear` whose ``in_features`` is read from its first input: until then it
    has ``in_features=0`` and :class:`~funcgrad_nn.parameter.UninitializedParameter`
    placeholders (empty arrays in ``state_dict()`` that follow ``to(device)``/``double()``); the first call (or ``load_state_dict`` with a ``weight``)
    creates them with Linear's initialisation, there and in that dtype, and the module
    becomes a plain ``Linear``, as in PyTorch (run one batch through it before building the
    optimizer).

    >>> import numpy as np
    >>> m = LazyLinear(2)
    >>> m(np.ones((4, 3), np.float32)).shape, type(m).__name__, m.weight.shape
    ((4, 2), 'Linear', (2, 3))
    """

    cls_to_become = Linear  # what the first call turns it into, as PyTorch's

    def __init__(self, out_features: int, bias: bool = True, device: str | None = None,
                 dtype: Any = None) -> None:
        Module.__init__(self)
        self.in_features, self.out_features = 0, out_features
        self.weight = UninitializedParameter(dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)
        else:
            self.register_parameter("bias", None)
        place(self, device)

    def has_uninitialized_params(self) -> bool:
        """True until the first call has created the parameters."""
        return type(self) is not self.cls_to_become

    def reset_parameters(self, generator: Any = None) -> None:
        if not self.has_uninitialized_params():
            super().reset_parameters(generator)

    def _materialize(self, in_features: int) -> None:
        # The placeholder says where and in what dtype (after .to(device), .double()).
        like = self._parameters["weight"]  # the array, not its UninitializedParameter
        real = self.cls_to_become(in_features, self.out_features, self.bias is not None,
                                  dtype=like.dtype)
        place(real, device_of(like))
        self.in_features = in_features
        self._parameters.update(real._parameters)  # the registries stay ours (hooks, frozen)
        self.__class__ = self.cls_to_become

    def initialize_parameters(self, input: Any) -> None:
        """PyTorch's lazy-module hook: create the parameters for ``input``'s last axis
        without running the layer (it becomes a plain ``Linear``)."""
        shape = tuple(getattr(input, "shape", ()))
        if not shape:
            raise bad_input(self, "input must have at least one dimension (its last is "
                                  "in_features)", "pass arrays of shape (*, in_features)")
        if is_tracer(input):
            raise TypeError(f"{type(self).__name__}: its parameters are created by the first "
                            "call, which must run eagerly: call it once on an example input "
                            "(a dry run) before jit, grad or vmap")
        self._materialize(shape[-1])

    def forward(self, input: Any) -> Any:
        self.initialize_parameters(input)
        return self.forward(input)

    def _load_from_state_dict(self, state_dict: dict[str, Any], prefix: str, *args: Any
                              ) -> None:
        cls = self.cls_to_become  # (a class attribute of the lazy class only)
        w = state_dict.get(prefix + "weight")
        if w is not None and len(getattr(w, "shape", ())) == 2:
            self._materialize(int(w.shape[1]))  # the checkpoint's weight says in_features
        # (by then the module may be a plain Linear, which zero-argument super() refuses)
        cls._load_from_state_dict(self, state_dict, prefix, *args)


class Bilinear(Module):
    """y_k = x1 @ weight[k] @ x2 + bias[k]; weight ``(out, in1, in2)``, U(-1/sqrt(in1), ...)
    init like PyTorch.

    >>> import numpy as np
    >>> Bilinear(2, 3, 4)(np.ones((5, 2), np.float32), np.ones((5, 3), np.float32)).shape
    (5, 4)
    """

    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True, device: str | None = None, dtype: Any = None) -> None:
        super().__init__()
        if in1_features <= 0:  # (PyTorch's check; the init bound divides by it)
            raise ValueError(f"in1_features must be > 0, but got (in1_features={in1_features})")
        self.in1_features, self.in2_features = in1_features, in2_features
        self.out_features = out_features
        self.weight = Parameter(empty((out_features, in1_features, in2_features), dtype))
        if bias:
            self.bias = Parameter(empty((out_features,), dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()
        place(self, device)

    def reset_parameters(self, generator: Any = None) -> None:
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound, generator=generator)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound, generator=generator)

    def forward(self, input1: Any, input2: Any) -> Any:
        weight = self.weight  # read once: a parametrization may compute it on each read
        for x in (input1, input2):
            problem = dtype_mismatch(x, weight)
            if problem is not None and not casts("bilinear", x, weight):
                raise bad_input(self, *problem.split(". Fix: "))
        return F.bilinear(input1, input2, weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


def _norm_dim(d: int, ndim: int, what: str) -> int:
    if not -ndim <= d < ndim:
        raise IndexError(f"{what}: dimension {d} out of range for an input with {ndim} dims")
    return d % ndim


class Flatten(Module):
    """Flatten dims ``start_dim..end_dim`` into one.

    >>> import numpy as np
    >>> Flatten()(np.zeros((2, 3, 4))).shape
    (2, 12)
    """

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input: Any) -> Any:
        nd = max(input.ndim, 1)
        s = _norm_dim(self.start_dim, nd, "Flatten")
        e = _norm_dim(self.end_dim, nd, "Flatten")
        if input.ndim == 0:
            return fnp.reshape(input, (1,))
        if s > e:
            raise BadInputError("Flatten: start_dim cannot come after end_dim")
        shape = tuple(input.shape)
        # The size spelled out: -1 cannot be inferred from an empty batch.
        return fnp.reshape(input, shape[:s] + (math.prod(shape[s:e + 1]),) + shape[e + 1:])

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Expand dim ``dim`` into ``unflattened_size`` (may contain one -1).

    >>> import numpy as np
    >>> Unflatten(1, (3, 4))(np.zeros((2, 12))).shape
    (2, 3, 4)
    """

    def __init__(self, dim: int | str, unflattened_size: tuple[int, ...] | list[int]) -> None:
        super().__init__()
        if not isinstance(unflattened_size, (tuple, list)) or not all(
                isinstance(n, int) and not isinstance(n, bool) for n in unflattened_size):
            raise TypeError("unflattened_size must be a tuple or list of ints, but found "
                            f"{unflattened_size!r}")
        # kept as given (a list stays a list in the repr, as PyTorch)
        self.dim, self.unflattened_size = dim, unflattened_size

    def forward(self, input: Any) -> Any:
        d = _norm_dim(self.dim, input.ndim, "Unflatten")
        shape = tuple(input.shape)
        sizes = tuple(self.unflattened_size)
        known = math.prod(n for n in sizes if n != -1)
        if sizes.count(-1) > 1 or (-1 not in sizes and known != shape[d]) or (
                -1 in sizes and (known == 0 or shape[d] % known)):
            raise bad_input(self, f"Provided sizes {list(sizes)} don't multiply up to the size "
                                  f"of dim {self.dim} ({shape[d]}) in the input",
                            "make unflattened_size's product equal that dimension")
        return fnp.reshape(input, shape[:d] + sizes + shape[d + 1:])

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
