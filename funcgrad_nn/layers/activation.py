"""Activation modules (thin wrappers over ``funcgrad_nn.functional``)."""

from __future__ import annotations

import warnings
from typing import Any

from funcgrad_nn import functional as F
from funcgrad_nn.init import constant_
from funcgrad_nn.layers._util import empty, place
from funcgrad_nn.layers.dropout import _KeyedModule
from funcgrad_nn.module import Module, Parameter

__all__ = ["CELU", "ELU", "GELU", "GLU", "Hardshrink", "Hardsigmoid", "Hardswish", "Hardtanh",
           "LeakyReLU", "LogSigmoid", "LogSoftmax", "Mish", "PReLU", "RReLU", "ReLU", "ReLU6", "SELU",
           "SiLU", "Sigmoid", "Softmax", "Softmax2d", "Softmin", "Softplus", "Softshrink",
           "Softsign", "Tanh", "Tanhshrink", "Threshold"]


def _inplace_suffix(module: Module) -> str:
    return ", inplace=True" if module.inplace else ""


class ReLU(Module):
    """max(x, 0).

    >>> import numpy as np
    >>> ReLU()(np.array([-1.0, 1.0]))
    array([0., 1.])
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace  # shown in the repr; arrays are never mutated

    def forward(self, input: Any) -> Any:
        return F.relu(input)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class ReLU6(Module):
    """min(max(x, 0), 6).

    >>> import numpy as np
    >>> ReLU6()(np.array([7.0]))
    array([6.])
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace  # shown in the repr; arrays are never mutated

    def forward(self, input: Any) -> Any:
        return F.relu6(input)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class LeakyReLU(Module):
    """x if x > 0 else negative_slope * x.

    >>> import numpy as np
    >>> LeakyReLU(0.5)(np.array([-2.0]))
    array([-1.])
    """

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace  # shown in the repr; arrays are never mutated
        self.negative_slope = negative_slope

    def forward(self, input: Any) -> Any:
        return F.leaky_relu(input, self.negative_slope)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + _inplace_suffix(self)


class ELU(Module):
    """x if x > 0 else alpha * (exp(x) - 1).

    >>> import numpy as np
    >>> ELU()(np.array([1.0]))
    array([1.])
    """

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace  # shown in the repr; arrays are never mutated
        self.alpha = alpha

    def forward(self, input: Any) -> Any:
        return F.elu(input, self.alpha)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + _inplace_suffix(self)


class GELU(Module):
    """Gaussian error linear unit (``approximate='none'`` or ``'tanh'``).

    >>> import numpy as np
    >>> GELU(approximate="tanh")(np.array([0.0]))
    array([0.])
    """

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"GELU: approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def forward(self, input: Any) -> Any:
        return F.gelu(input, self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """x * sigmoid(x).

    >>> import numpy as np
    >>> SiLU()(np.array([0.0]))
    array([0.])
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace  # shown in the repr; arrays are never mutated

    def forward(self, input: Any) -> Any:
        return F.silu(input)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Tanh(Module):
    """Hyperbolic tangent.

    >>> import numpy as np
    >>> Tanh()(np.array([0.0]))
    array([0.])
    """

    def forward(self, input: Any) -> Any:
        return F.tanh(input)


class Sigmoid(Module):
    """Logistic sigmoid.

    >>> import numpy as np
    >>> Sigmoid()(np.array([0.0]))
    array([0.5])
    """

    def forward(self, input: Any) -> Any:
        return F.sigmoid(input)


class Softplus(Module):
    """log(1 + exp(beta x)) / beta, linear above ``threshold``.

    >>> import numpy as np
    >>> Softplus(threshold=1.0)(np.array([5.0]))
    array([5.])
    """

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input: Any) -> Any:
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Softmax(Module):
    """Softmax along ``dim`` (without it, PyTorch's deprecated implicit choice and warning).

    >>> import numpy as np
    >>> Softmax(dim=-1)(np.zeros((1, 2)))
    array([[0.5, 0.5]])
    """

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Any) -> Any:
        return F.softmax(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """log(softmax) along ``dim`` (without it, PyTorch's deprecated implicit choice and
    warning).

    >>> import numpy as np
    >>> LogSoftmax(dim=-1)(np.zeros((1, 1)))
    array([[0.]])
    """

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Any) -> Any:
        return F.log_softmax(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class _Elementwise(Module):
    """An activation without parameters: ``forward`` applies ``_fn`` with the stored
    keyword arguments (``inplace`` is accepted and ignored: arrays are never mutated)."""

    _fn: Any = None
    _keys: tuple[str, ...] = ()
    _shows_inplace = True  # PyTorch's Hardswish/Hardsigmoid do not print inplace=True

    def forward(self, input: Any) -> Any:
        return type(self)._fn(input, **{k: getattr(self, k) for k in self._keys})

    def extra_repr(self) -> str:
        if self._keys == ("lambd",):  # PyTorch prints Hardshrink(0.5), Softshrink(0.5)
            return f"{self.lambd}"
        s = ", ".join(f"{k}={getattr(self, k)}" for k in self._keys)
        if self._shows_inplace and getattr(self, "inplace", False):
            s += ", inplace=True" if s else "inplace=True"
        return s


class SELU(_Elementwise):
    """Scaled ELU with the self-normalising constants.

    >>> import numpy as np
    >>> SELU()(np.array([0.0]))
    array([0.])
    """

    _fn = staticmethod(F.selu)

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace  # shown in the repr; arrays are never mutated


class CELU(_Elementwise):
    """x if x > 0 else alpha * (exp(x / alpha) - 1).

    >>> import numpy as np
    >>> CELU(1.0)(np.array([0.0]))
    array([0.])
    """

    _fn = staticmethod(F.celu)
    _keys = ("alpha",)

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace  # shown in the repr; arrays are never mutated
        self.alpha = alpha


class GLU(_Elementwise):
    """Gated linear unit over ``dim`` (first half times sigmoid of the second half).

    >>> import numpy as np
    >>> GLU()(np.ones((2, 4))).shape
    (2, 2)
    """

    _fn = staticmethod(F.glu)
    _keys = ("dim",)

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim


class Mish(_Elementwise):
    """x * tanh(softplus(x)).

    >>> import numpy as np
    >>> Mish()(np.array([0.0]))
    array([0.])
    """

    _fn = staticmethod(F.mish)

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace  # shown in the repr; arrays are never mutated


class Hardswish(_Elementwise):
    """x * relu6(x + 3) / 6.

    >>> import numpy as np
    >>> Hardswish()(np.array([4.0]))
    array([4.])
    """

    _fn = staticmethod(F.hardswish)
    _shows_inplace = False

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace  # shown in the repr; arrays are never mutated


class Hardsigmoid(_Elementwise):
    """relu6(x + 3) / 6.

    >>> import numpy as np
    >>> Hardsigmoid()(np.array([0.0]))
    array([0.5])
    """

    _fn = staticmethod(F.hardsigmoid)
    _shows_inplace = False

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace  # shown in the repr; arrays are never mutated


class Hardtanh(_Elementwise):
    """x clipped to ``[min_val, max_val]``.

    >>> import numpy as np
    >>> Hardtanh(-2.0, 2.0)(np.array([-3.0, 3.0]))
    array([-2.,  2.])
    """

    _fn = staticmethod(F.hardtanh)
    _keys = ("min_val", "max_val")

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0,
                 inplace: bool = False, min_value: float | None = None,
                 max_value: float | None = None) -> None:
        super().__init__()
        self.inplace = inplace  # shown in the repr; arrays are never mutated
        for old, new in (("min_value", "min_val"), ("max_value", "max_val")):
            if locals()[old] is not None:  # PyTorch's deprecated spellings
                warnings.warn(f"keyword argument `{old}` is deprecated and renamed to "
                              f"`{new}`", FutureWarning, stacklevel=2)
        min_val = min_val if min_value is None else min_value
        max_val = max_val if max_value is None else max_value
        if max_val <= min_val:
            raise ValueError(f"Hardtanh: max_val ({max_val}) must be greater than min_val "
                             f"({min_val})")
        self.min_val, self.max_val = min_val, max_val


class Softsign(_Elementwise):
    """x / (1 + |x|).

    >>> import numpy as np
    >>> Softsign()(np.array([1.0]))
    array([0.5])
    """

    _fn = staticmethod(F.softsign)


class Softmin(_Elementwise):
    """softmax(-x) along ``dim``.

    >>> import numpy as np
    >>> Softmin(dim=0)(np.array([0.0, 0.0]))
    array([0.5, 0.5])
    """

    _fn = staticmethod(F.softmin)
    _keys = ("dim",)

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim


class Softmax2d(Module):
    """Softmax over the channel axis of ``(N, C, H, W)`` or ``(C, H, W)`` inputs.

    >>> import numpy as np
    >>> float(Softmax2d()(np.zeros((1, 2, 1, 1))).sum())
    1.0
    """

    def forward(self, input: Any) -> Any:
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input (N, C, H, W) or (C, H, W), got shape "
                             f"{tuple(input.shape)}")
        return F.softmax(input, dim=-3)


class Softshrink(_Elementwise):
    """x - lambd if x > lambd, x + lambd if x < -lambd, else 0.

    >>> import numpy as np
    >>> Softshrink(1.0)(np.array([2.0]))
    array([1.])
    """

    _fn = staticmethod(F.softshrink)
    _keys = ("lambd",)

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd


class Hardshrink(_Elementwise):
    """x if |x| > lambd else 0.

    >>> import numpy as np
    >>> Hardshrink(1.0)(np.array([0.5, 2.0]))
    array([0., 2.])
    """

    _fn = staticmethod(F.hardshrink)
    _keys = ("lambd",)

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd


class Tanhshrink(_Elementwise):
    """x - tanh(x).

    >>> import numpy as np
    >>> Tanhshrink()(np.array([0.0]))
    array([0.])
    """

    _fn = staticmethod(F.tanhshrink)


class Threshold(_Elementwise):
    """x if x > threshold else value.

    >>> import numpy as np
    >>> Threshold(1.0, 0.0)(np.array([0.5, 2.0]))
    array([0., 2.])
    """

    _fn = staticmethod(F.threshold)
    _keys = ("threshold", "value")

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace  # shown in the repr; arrays are never mutated
        self.threshold, self.value = threshold, value


class LogSigmoid(_Elementwise):
    """log(sigmoid(x)), computed stably.

    >>> import numpy as np
    >>> LogSigmoid()(np.array([0.0])).round(4)
    array([-0.6931])
    """

    _fn = staticmethod(F.logsigmoid)


class PReLU(Module):
    """x if x > 0 else a * x with a learnable slope ``weight``: one shared value
    (``num_parameters=1``) or one per channel (axis 1), initialised to ``init``.

    >>> import numpy as np
    >>> PReLU()(np.array([-4.0, 1.0], np.float32))
    array([-1.,  1.], dtype=float32)
    """

    def __init__(self, num_parameters: int = 1, init: float = 0.25,
                 device: str | None = None, dtype: Any = None) -> None:
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(empty((num_parameters,), dtype))
        self.reset_parameters()
        place(self, device)

    def reset_parameters(self) -> None:
        constant_(self.weight, self.init)

    def forward(self, input: Any) -> Any:
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"



class RReLU(_KeyedModule):
    """Randomised leaky ReLU: in training each negative input is scaled by a slope drawn
    uniformly from ``[lower, upper]`` (the key as :class:`Dropout`'s: ``forward(x, key=k)``
    or the module's own advancing ``rng_key``); in eval by ``(lower + upper) / 2``.

    >>> import numpy as np
    >>> RReLU(0.1, 0.3).eval()(np.array([-1.0, 2.0]))
    array([-0.2,  2. ])
    """

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
                 inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace  # shown in the repr; arrays are never mutated
        if lower > upper:
            raise ValueError(f"RReLU: lower bound ({lower}) must not exceed upper bound "
                             f"({upper})")
        self.lower, self.upper = lower, upper

    def forward(self, input: Any, key: Any = None) -> Any:
        if not self.training:
            return F.rrelu(input, self.lower, self.upper, training=False)
        return F.rrelu(input, self.lower, self.upper, training=True, key=self._key(key))

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}" + _inplace_suffix(self)
