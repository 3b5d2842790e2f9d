"""``jax.example_libraries.stax``: a small neural-network library of ``(init_fun,
apply_fun)`` pairs.

A layer constructor returns ``init_fun(rng, input_shape) -> (output_shape, params)`` and
``apply_fun(params, inputs, **kwargs) -> outputs``; the combinators (:func:`serial`,
:func:`parallel`, :func:`FanOut`, ...) compose layers into layers. The initializers are
``funcgrad.nn.initializers`` (JAX's numbers for the same key) and the keys are split as JAX
splits them, so a network initialised from one ``PRNGKey`` has JAX's parameters.

Example:
    >>> import funcgrad.numpy as fnp
    >>> from funcgrad import random
    >>> init_fun, apply_fun = serial(Dense(8), Relu, Dense(2), LogSoftmax)
    >>> out_shape, params = init_fun(random.PRNGKey(0), (-1, 3))
    >>> out_shape, apply_fun(params, fnp.ones((5, 3))).shape
    ((-1, 2), (5, 2))
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

from funcgrad import lax, random
from funcgrad import numpy as fnp
from funcgrad.nn import (
    elu,
    gelu,
    leaky_relu,
    log_softmax,
    relu,
    selu,
    sigmoid,
    softmax,
    softplus,
    standardize,
)
from funcgrad.nn.initializers import glorot_normal, normal, ones, zeros

__all__ = [
    "Dense", "GeneralConv", "Conv", "GeneralConvTranspose", "Conv1DTranspose",
    "ConvTranspose", "BatchNorm", "elementwise", "Tanh", "Relu", "Exp", "LogSoftmax",
    "Softmax", "Softplus", "Sigmoid", "Elu", "LeakyRelu", "Selu", "Gelu", "MaxPool",
    "SumPool", "AvgPool", "Flatten", "Identity", "FanOut", "FanInSum", "FanInConcat",
    "Dropout", "serial", "parallel", "shape_dependent", "glorot", "randn", "logsoftmax",
    "relu", "log_softmax", "softmax", "softplus", "sigmoid", "elu", "leaky_relu", "selu",
    "gelu", "standardize", "glorot_normal", "normal", "ones", "zeros",
]

# JAX's aliases, kept for programs that use them
glorot = glorot_normal
randn = normal
logsoftmax = log_softmax

Layer = tuple[Callable[..., Any], Callable[..., Any]]

# As Keras and tf.layers, layer constructors are CamelCase (Conv, Relu), other functions
# snake_case (lax.conv, relu).


def Dense(out_dim: int, W_init: Callable = glorot_normal(),  # noqa: B008
          b_init: Callable = normal()) -> Layer:  # noqa: B008
    """A dense (fully connected) layer: ``inputs @ W + b``.

    Example:
        >>> from funcgrad import random
        >>> init_fun, apply_fun = Dense(4)
        >>> shape, (W, b) = init_fun(random.PRNGKey(0), (2, 3))
        >>> shape, W.shape, b.shape
        ((2, 4), (3, 4), (4,))
    """
    def init_fun(rng: Any, input_shape: tuple) -> tuple:
        output_shape = input_shape[:-1] + (out_dim,)
        k1, k2 = random.split(rng)
        W, b = W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,))
        return output_shape, (W, b)

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        W, b = params
        return fnp.dot(inputs, W) + b

    return init_fun, apply_fun


def _conv_layer(dimension_numbers: tuple[str, str, str], out_chan: int,
                filter_shape: Sequence[int], W_init: Callable | None, b_init: Callable,  # noqa: N803
                output_shape: Callable, conv: Callable) -> Layer:
    """A (transposed) convolution layer plus bias: ``output_shape(input_shape, kernel_shape)``
    and ``conv(inputs, W)`` are the operation's."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def init_fun(rng: Any, input_shape: tuple) -> tuple:
        kernel_shape = _kernel_shape(lhs_spec, rhs_spec, out_chan, filter_shape, input_shape)
        bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
        k1, k2 = random.split(rng)
        W, b = W_init(k1, kernel_shape), b_init(k2, bias_shape)
        return output_shape(input_shape, kernel_shape), (W, b)

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        W, b = params
        return conv(inputs, W) + b

    return init_fun, apply_fun


def _kernel_shape(lhs_spec: str, rhs_spec: str, out_chan: int, filter_shape: Sequence[int],
                  input_shape: tuple) -> list[int]:
    filter_shape_iter = iter(filter_shape)
    return [out_chan if c == "O" else input_shape[lhs_spec.index("C")] if c == "I"
            else next(filter_shape_iter) for c in rhs_spec]


def GeneralConv(dimension_numbers: tuple[str, str, str], out_chan: int,
                filter_shape: Sequence[int], strides: Sequence[int] | None = None,
                padding: Any = "VALID", W_init: Callable | None = None,
                b_init: Callable = normal(1e-6)) -> Layer:  # noqa: B008
    """A convolution with the layouts ``dimension_numbers = (lhs_spec, rhs_spec,
    out_spec)`` (e.g. ``("NHWC", "HWIO", "NHWC")``), as ``lax.conv_general_dilated``.

    Example:
        >>> from funcgrad import random
        >>> init_fun, _ = GeneralConv(("NCHW", "OIHW", "NCHW"), 4, (3, 3))
        >>> init_fun(random.PRNGKey(0), (1, 2, 8, 8))[0]
        (1, 4, 6, 6)
    """
    one = (1,) * len(filter_shape)
    strides = strides or one
    return _conv_layer(
        dimension_numbers, out_chan, filter_shape, W_init, b_init,
        lambda x_shape, k_shape: lax.conv_general_shape_tuple(
            x_shape, k_shape, strides, padding, dimension_numbers),
        lambda x, W: lax.conv_general_dilated(x, W, strides, padding, one, one,
                                              dimension_numbers=dimension_numbers))


Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))
Conv.__doc__ = "A 2-D convolution over NHWC inputs with HWIO kernels (GeneralConv's layouts)."


def GeneralConvTranspose(dimension_numbers: tuple[str, str, str], out_chan: int,
                         filter_shape: Sequence[int], strides: Sequence[int] | None = None,
                         padding: Any = "VALID", W_init: Callable | None = None,
                         b_init: Callable = normal(1e-6)) -> Layer:  # noqa: B008
    """A transposed convolution (``lax.conv_transpose``) with the layouts
    ``dimension_numbers``.

    Example:
        >>> from funcgrad import random
        >>> init_fun, _ = GeneralConvTranspose(("NHWC", "HWIO", "NHWC"), 4, (3, 3), (2, 2))
        >>> init_fun(random.PRNGKey(0), (1, 5, 5, 2))[0]
        (1, 11, 11, 4)
    """
    strides = strides or (1,) * len(filter_shape)
    return _conv_layer(
        dimension_numbers, out_chan, filter_shape, W_init, b_init,
        lambda x_shape, k_shape: lax.conv_transpose_shape_tuple(
            x_shape, k_shape, strides, padding, dimension_numbers),
        lambda x, W: lax.conv_transpose(x, W, strides, padding,
                                        dimension_numbers=dimension_numbers))


Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))
Conv1DTranspose.__doc__ = "A 1-D transposed convolution over NHC inputs with HIO kernels."
ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))
ConvTranspose.__doc__ = "A 2-D transposed convolution over NHWC inputs with HWIO kernels."


def BatchNorm(axis: int | Sequence[int] = (0, 1, 2), epsilon: float = 1e-5,
              center: bool = True, scale: bool = True, beta_init: Callable = zeros,
              gamma_init: Callable = ones) -> Layer:
    """Batch normalization over ``axis`` (the batch statistics of each call; stax keeps no
    running averages), then ``gamma * z + beta`` per remaining position.

    Example:
        >>> import funcgrad.numpy as fnp
        >>> from funcgrad import random
        >>> init_fun, apply_fun = BatchNorm(axis=0)
        >>> _, params = init_fun(random.PRNGKey(0), (4, 3))
        >>> y = apply_fun(params, fnp.arange(12.0).reshape(4, 3))
        >>> bool(fnp.allclose(y.mean(0), 0.0)), bool(fnp.allclose(y.var(0), 1.0, atol=1e-4))
        (True, True)
    """
    def _beta_init(rng: Any, shape: tuple) -> Any:
        return beta_init(rng, shape) if center else ()

    def _gamma_init(rng: Any, shape: tuple) -> Any:
        return gamma_init(rng, shape) if scale else ()

    axis = (axis,) if fnp.isscalar(axis) else tuple(axis)

    def init_fun(rng: Any, input_shape: tuple) -> tuple:
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        k1, k2 = random.split(rng)
        beta, gamma = _beta_init(k1, shape), _gamma_init(k2, shape)
        return input_shape, (beta, gamma)

    def apply_fun(params: Any, x: Any, **kwargs: Any) -> Any:
        beta, gamma = params
        ed = tuple(None if i in axis else slice(None) for i in range(fnp.ndim(x)))
        z = standardize(x, axis, epsilon=epsilon)
        if center and scale:
            return gamma[ed] * z + beta[ed]
        if center:
            return z + beta[ed]
        if scale:
            return gamma[ed] * z
        return z

    return init_fun, apply_fun


def elementwise(fun: Callable[..., Any], **fun_kwargs: Any) -> Layer:
    """A parameterless layer applying ``fun(inputs, **fun_kwargs)``.

    Example:
        >>> import funcgrad.numpy as fnp
        >>> _, apply_fun = elementwise(fnp.square)
        >>> apply_fun((), fnp.array([1.0, -2.0])).tolist()
        [1.0, 4.0]
    """
    def init_fun(rng: Any, input_shape: Any) -> tuple:
        return input_shape, ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return fun(inputs, **fun_kwargs)

    return init_fun, apply_fun


Tanh = elementwise(fnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(fnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


def _pooling_layer(reducer: Callable, init_val: float,
                   rescaler: Callable | None = None) -> Callable[..., Layer]:
    def PoolingLayer(window_shape: tuple, strides: tuple | None = None,
                     padding: Any = "VALID", spec: str | None = None) -> Layer:
        """A pooling layer over the spatial axes (all but N and C: the first and last unless
        ``spec``, e.g. ``"NCHW"``, says otherwise)."""
        window_shape = tuple(window_shape)
        strides = tuple(strides or (1,) * len(window_shape))
        rescale = rescaler(window_shape, strides, padding) if rescaler else None
        if spec is None:
            non_spatial_axes: tuple[int, int] = (0, len(window_shape) + 1)
        else:
            non_spatial_axes = (spec.index("N"), spec.index("C"))
        for i in sorted(non_spatial_axes):
            window_shape = window_shape[:i] + (1,) + window_shape[i:]
            strides = strides[:i] + (1,) + strides[i:]

        def init_fun(rng: Any, input_shape: tuple) -> tuple:
            padding_vals = lax.padtype_to_pads(input_shape, window_shape, strides, padding)
            ones_ = (1,) * len(window_shape)
            out_shape = lax.reduce_window_shape_tuple(
                input_shape, window_shape, strides, padding_vals, ones_, ones_)
            return out_shape, ()

        def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
            out = lax.reduce_window(inputs, init_val, reducer, window_shape, strides, padding)
            return rescale(out, inputs, spec) if rescale else out

        return init_fun, apply_fun

    return PoolingLayer


def _normalize_by_window_size(dims: tuple, strides: tuple, padding: Any) -> Callable:
    def rescale(outputs: Any, inputs: Any, spec: str | None) -> Any:
        if spec is None:
            non_spatial_axes: tuple[int, int] = (0, inputs.ndim - 1)
        else:
            non_spatial_axes = (spec.index("N"), spec.index("C"))
        spatial_shape = tuple(inputs.shape[i] for i in range(inputs.ndim)
                              if i not in non_spatial_axes)
        one = fnp.ones_like(inputs, shape=spatial_shape)  # on the inputs' device
        # with padding, the windows at the edges hold fewer inputs: divide by each count
        window_sizes = lax.reduce_window(one, 0., lax.add, dims, strides, padding)
        for i in sorted(non_spatial_axes):
            window_sizes = fnp.expand_dims(window_sizes, i)
        return outputs / window_sizes

    return rescale


MaxPool = _pooling_layer(lax.max, -fnp.inf)
MaxPool.__name__ = MaxPool.__qualname__ = "MaxPool"
SumPool = _pooling_layer(lax.add, 0.)
SumPool.__name__ = SumPool.__qualname__ = "SumPool"
AvgPool = _pooling_layer(lax.add, 0., _normalize_by_window_size)
AvgPool.__name__ = AvgPool.__qualname__ = "AvgPool"


def _flatten() -> Layer:
    def init_fun(rng: Any, input_shape: tuple) -> tuple:
        return (input_shape[0], math.prod(input_shape[1:])), ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return fnp.reshape(inputs, (inputs.shape[0], -1))

    return init_fun, apply_fun


#: Flattens all but the leading (batch) axis.
Flatten = _flatten()


def _identity() -> Layer:
    def init_fun(rng: Any, input_shape: Any) -> tuple:
        return input_shape, ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return inputs

    return init_fun, apply_fun


#: Passes its input through.
Identity = _identity()


def FanOut(num: int) -> Layer:
    """``num`` copies of the input, for :func:`parallel` branches.

    Example:
        >>> init_fun, _ = FanOut(2)
        >>> init_fun(None, (3, 4))[0]
        [(3, 4), (3, 4)]
    """
    def init_fun(rng: Any, input_shape: Any) -> tuple:
        return [input_shape] * num, ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return [inputs] * num

    return init_fun, apply_fun


def _fan_in_sum() -> Layer:
    def init_fun(rng: Any, input_shape: Any) -> tuple:
        return input_shape[0], ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return sum(inputs)

    return init_fun, apply_fun


#: The sum of a list of inputs (closing :func:`parallel` branches; residual connections).
FanInSum = _fan_in_sum()


def FanInConcat(axis: int = -1) -> Layer:
    """A list of inputs concatenated along ``axis``.

    Example:
        >>> init_fun, _ = FanInConcat()
        >>> init_fun(None, [(3, 4), (3, 2)])[0]
        (3, 6)
    """
    def init_fun(rng: Any, input_shape: Any) -> tuple:
        ax = axis % len(input_shape[0])
        concat_size = sum(shape[ax] for shape in input_shape)
        out_shape = input_shape[0][:ax] + (concat_size,) + input_shape[0][ax + 1:]
        return out_shape, ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return fnp.concatenate(inputs, axis)

    return init_fun, apply_fun


def Dropout(rate: float, mode: str = "train") -> Layer:
    """Dropout. As in JAX's stax, ``rate`` is the probability of *keeping* an input (kept
    inputs are divided by it); ``mode="test"`` passes inputs through. ``apply_fun`` needs
    ``rng=key`` in train mode.

    Example:
        >>> import funcgrad.numpy as fnp
        >>> from funcgrad import random
        >>> _, apply_fun = Dropout(0.5)
        >>> y = apply_fun((), fnp.ones(1000), rng=random.PRNGKey(0))
        >>> sorted(set(y.tolist()))
        [0.0, 2.0]
    """
    def init_fun(rng: Any, input_shape: Any) -> tuple:
        return input_shape, ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        if mode != "train":
            return inputs
        rng = kwargs.get("rng", None)
        if rng is None:  # (JAX asks for the key in test mode too; it is not used there)
            raise ValueError(
                "Dropout layer requires apply_fun to be called with a PRNG key argument. "
                "That is, instead of `apply_fun(params, inputs)`, call it like "
                "`apply_fun(params, inputs, rng=key)` where `key` is a PRNG key (e.g. from "
                "`funcgrad.random.key`).")
        keep = random.bernoulli(rng, rate, inputs.shape)
        return fnp.where(keep, inputs / rate, 0)

    return init_fun, apply_fun


def serial(*layers: Layer) -> Layer:
    """The layers applied one after another; ``init_fun`` splits its key once per layer
    (as JAX), ``apply_fun`` splits an ``rng=`` key into one per layer.

    Example:
        >>> from funcgrad import random
        >>> init_fun, _ = serial(Dense(4), Relu, Dense(1))
        >>> init_fun(random.PRNGKey(0), (2, 3))[0]
        (2, 1)
    """
    nlayers = len(layers)
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng: Any, input_shape: Any) -> tuple:
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, param = init(layer_rng, input_shape)
            params.append(param)
        return input_shape, params

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, nlayers) if rng is not None else (None,) * nlayers
        for fun, param, r in zip(apply_funs, params, rngs):
            inputs = fun(param, inputs, rng=r, **kwargs)
        return inputs

    return init_fun, apply_fun


def parallel(*layers: Layer) -> Layer:
    """The layers applied to the matching entries of a list of inputs (usually between
    :func:`FanOut` and :func:`FanInSum` / :func:`FanInConcat`).

    Example:
        >>> from funcgrad import random
        >>> init_fun, _ = serial(FanOut(2), parallel(Dense(4), Identity), FanInConcat())
        >>> init_fun(random.PRNGKey(0), (2, 3))[0]
        (2, 7)
    """
    nlayers = len(layers)
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng: Any, input_shape: Any) -> Any:
        rngs = random.split(rng, nlayers)
        # JAX returns the zip itself: (output shapes, params) unpack from it
        return zip(*[init(r, shape) for init, r, shape in zip(init_funs, rngs, input_shape)])

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, nlayers) if rng is not None else (None,) * nlayers
        return [f(p, x, rng=r, **kwargs)
                for f, p, x, r in zip(apply_funs, params, inputs, rngs)]

    return init_fun, apply_fun


def shape_dependent(make_layer: Callable[[tuple], Layer]) -> Layer:
    """A layer built by ``make_layer(input_shape)`` once the input shape is known.

    Example:
        >>> from funcgrad import random
        >>> init_fun, _ = shape_dependent(lambda shape: Dense(shape[-1] * 2))
        >>> init_fun(random.PRNGKey(0), (2, 3))[0]
        (2, 6)
    """
    def init_fun(rng: Any, input_shape: tuple) -> tuple:
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)

    return init_fun, apply_fun
