"""``torch.nn.grad``'s convolution gradients (``F.grad.conv2d_input`` and friends): the
gradient of ``conv{1,2,3}d`` with respect to its input or its weight, given the other operand
and the output's gradient. Each is the pullback of the convolution itself (``funcgrad.vjp``),
so it agrees with differentiating :func:`funcgrad_nn.functional.conv2d` by construction; the
primal point does not matter (a convolution is linear in each operand), so zeros of the
requested size stand in for the missing operand.

>>> import numpy as np
>>> import funcgrad_nn as nn
>>> gy = np.ones((1, 1, 3))
>>> nn.F.grad.conv1d_input((1, 1, 4), np.ones((1, 1, 2)), gy)
array([[[1., 2., 2., 1.]]])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy

import funcgrad
import funcgrad.numpy as fnp
from funcgrad_nn import _convolution as _conv
from funcgrad_nn.module import BadInputError

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input",
           "conv3d_weight"]

_CONVS = {1: _conv.conv1d, 2: _conv.conv2d, 3: _conv.conv3d}


def _zeros(size: Sequence[int], like: Any, fname: str, what: str) -> Any:
    try:
        shape = tuple(int(n) for n in size)
    except TypeError:
        raise BadInputError(f"{fname}: {what} must be a sequence of ints (the full shape), "
                            f"got {size!r}") from None
    dtype = numpy.result_type(fnp.result_type(like), numpy.float32)
    return _conv._const_like(numpy.zeros(shape, dtype), like)


def _pullback(nd: int, fname: str, x: Any, w: Any, grad_output: Any, stride: Any,
              padding: Any, dilation: Any, groups: int, wrt: int) -> Any:
    def conv(a: Any, b: Any) -> Any:
        return _CONVS[nd](a, b, None, stride, padding, dilation, groups)

    out, pullback = funcgrad.vjp(conv, x, w)
    if tuple(fnp.shape(out)) != tuple(fnp.shape(grad_output)):
        raise BadInputError(f"{fname}: grad_output has shape {tuple(fnp.shape(grad_output))} "
                            f"but the convolution's output has shape {tuple(fnp.shape(out))}")
    return pullback(fnp.asarray(grad_output, dtype=out.dtype))[wrt]


def _input(nd: int) -> Any:
    name = f"conv{nd}d_input"

    def grad_input(input_size: Sequence[int], weight: Any, grad_output: Any, stride: Any = 1,
                   padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Any:
        x = _zeros(input_size, weight, name, "input_size")
        return _pullback(nd, name, x, weight, grad_output, stride, padding, dilation, groups, 0)

    grad_input.__name__ = grad_input.__qualname__ = name
    grad_input.__doc__ = (
        f"The gradient of ``conv{nd}d`` with respect to its input of shape ``input_size``, "
        f"given ``weight`` and the output's gradient ``grad_output`` (and the convolution's "
        f"stride, padding, dilation and groups), as ``torch.nn.grad.{name}``.\n\n"
        f"    >>> import numpy as np, funcgrad_nn as nn\n"
        f"    >>> nn.F.grad.{name}((1, 2) + (4,) * {nd}, np.ones((3, 2) + (2,) * {nd}),\n"
        f"    ...                  np.ones((1, 3) + (3,) * {nd})).shape\n"
        f"    (1, 2{', 4' * nd})\n")
    return grad_input


def _weight(nd: int) -> Any:
    name = f"conv{nd}d_weight"

    def grad_weight(input: Any, weight_size: Sequence[int], grad_output: Any, stride: Any = 1,
                    padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Any:
        w = _zeros(weight_size, input, name, "weight_size")
        return _pullback(nd, name, input, w, grad_output, stride, padding, dilation, groups, 1)

    grad_weight.__name__ = grad_weight.__qualname__ = name
    grad_weight.__doc__ = (
        f"The gradient of ``conv{nd}d`` with respect to its weight of shape ``weight_size``, "
        f"given ``input`` and the output's gradient ``grad_output`` (and the convolution's "
        f"stride, padding, dilation and groups), as ``torch.nn.grad.{name}``.\n\n"
        f"    >>> import numpy as np, funcgrad_nn as nn\n"
        f"    >>> nn.F.grad.{name}(np.ones((1, 2) + (4,) * {nd}), (3, 2) + (2,) * {nd},\n"
        f"    ...                   np.ones((1, 3) + (3,) * {nd})).shape\n"
        f"    (3, 2{', 2' * nd})\n")
    return grad_weight


conv1d_input, conv2d_input, conv3d_input = (_input(n) for n in (1, 2, 3))
conv1d_weight, conv2d_weight, conv3d_weight = (_weight(n) for n in (1, 2, 3))
