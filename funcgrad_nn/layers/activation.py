"""Activation modules (thin wrappers over ``funcgrad_nn.functional``)."""

from __future__ import annotations

from typing import Any

from funcgrad_nn import functional as F
from funcgrad_nn.module import Module

__all__ = ["ELU", "GELU", "LeakyReLU", "LogSoftmax", "ReLU", "ReLU6", "SiLU", "Sigmoid",
           "Softmax", "Softplus", "Tanh"]


class ReLU(Module):
    """max(x, 0).

    >>> import numpy as np
    >>> ReLU()(np.array([-1.0, 1.0]))
    array([0., 1.])
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()  # inplace is accepted and ignored: arrays are never mutated

    def forward(self, input: Any) -> Any:
        return F.relu(input)


class ReLU6(Module):
    """min(max(x, 0), 6).

    >>> import numpy as np
    >>> ReLU6()(np.array([7.0]))
    array([6.])
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()

    def forward(self, input: Any) -> Any:
        return F.relu6(input)


class LeakyReLU(Module):
    """x if x > 0 else negative_slope * x.

    >>> import numpy as np
    >>> LeakyReLU(0.5)(np.array([-2.0]))
    array([-1.])
    """

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, input: Any) -> Any:
        return F.leaky_relu(input, self.negative_slope)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}"


class ELU(Module):
    """x if x > 0 else alpha * (exp(x) - 1).

    >>> import numpy as np
    >>> ELU()(np.array([1.0]))
    array([1.])
    """

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha

    def forward(self, input: Any) -> Any:
        return F.elu(input, self.alpha)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}"


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

    def forward(self, input: Any) -> Any:
        return F.silu(input)


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
    """Softmax along ``dim`` (required).

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
    """log(softmax) along ``dim`` (required).

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
