"""Parameter initialisers with PyTorch's formulas, plus the global default dtype and RNG.

Parameters are created eagerly as host NumPy arrays, so initialisation uses a
``numpy.random.Generator``. Every initialiser takes ``generator=`` (a ``Generator``, or an
int seed); without one it draws from the global default generator, which
:func:`manual_seed` reseeds (like ``torch.manual_seed``; the streams are not PyTorch's, only
the distributions are). Initialisers fill the array IN PLACE and return it, like PyTorch's
trailing-underscore functions; they work on CuPy arrays too (values are drawn on the host).

>>> import numpy as np
>>> from funcgrad_nn import init
>>> w = np.empty((3, 4), dtype=np.float32)
>>> _ = init.xavier_uniform_(w, generator=0)
>>> bool(np.abs(w).max() <= np.sqrt(6 / 7))
True
"""

from __future__ import annotations

import contextvars
import functools
import json
import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy

import funcgrad

__all__ = [
    "InitValueError", "calculate_gain", "constant", "constant_", "default_generator", "dirac",
    "dirac_", "eye", "eye_", "get_default_dtype", "get_rng_state", "initial_seed",
    "kaiming_normal", "kaiming_normal_", "kaiming_uniform", "kaiming_uniform_", "manual_seed",
    "normal", "normal_", "ones_", "orthogonal", "orthogonal_", "seed", "set_default_dtype",
    "set_rng_state", "sparse", "sparse_", "trunc_normal_", "uniform",
    "uniform_", "xavier_normal", "xavier_normal_", "xavier_uniform", "xavier_uniform_",
    "zeros_",
]

_state: dict[str, Any] = {"dtype": numpy.dtype(numpy.float32)}

# The default generator lives in a context variable, not in module state, so that members of a
# ``ThreadGroup`` (each runs in its own copy of the caller's context) or other threads can
# ``manual_seed`` and build models concurrently without drawing from each other's stream. A
# context that never seeded gets a fresh, entropy-seeded generator on first use.
_generator: contextvars.ContextVar[numpy.random.Generator | None] = contextvars.ContextVar(
    "funcgrad_nn_default_generator", default=None)
# The seed the context's generator was made from (initial_seed), set with it.
_seed: contextvars.ContextVar[int | None] = contextvars.ContextVar(
    "funcgrad_nn_default_seed", default=None)


def set_default_dtype(dtype: Any) -> None:
    """Set the floating dtype new parameters are created with (float32 by default).

    >>> import numpy as np, funcgrad_nn as nn
    >>> nn.set_default_dtype(np.float64); nn.Linear(1, 1).weight.dtype
    dtype('float64')
    >>> nn.set_default_dtype(np.float32)
    """
    dt = numpy.dtype(dtype)
    if dt.kind != "f":
        raise TypeError(f"set_default_dtype: only floating dtypes are supported, got {dt}")
    _state["dtype"] = dt


def get_default_dtype() -> numpy.dtype:
    """The floating dtype new parameters get.

    >>> get_default_dtype()
    dtype('float32')
    """
    return _state["dtype"]


def manual_seed(seed: int) -> numpy.random.Generator:
    """Reseed the default generator used by initialisers (and Dropout's default key, and
    the keys ``funcgrad_nn.distributions`` samplers draw when called without ``key=``).

    The generator belongs to the current context (thread, ``ThreadGroup`` member, asyncio
    task): seeding in one thread does not disturb another's stream; a member of a
    ``ThreadGroup`` starts from its caller's generator until it seeds its own.

    >>> import funcgrad_nn as nn
    >>> _ = nn.manual_seed(0); a = nn.Linear(2, 2).weight.copy()
    >>> _ = nn.manual_seed(0); bool((a == nn.Linear(2, 2).weight).all())
    True
    """
    seed = int(seed) % 2**64  # as PyTorch's: int() of the seed, a negative one wrapped to 64 bits
    gen = numpy.random.default_rng(seed)
    _generator.set(gen)
    _seed.set(seed)
    return gen


def default_generator() -> numpy.random.Generator:
    """The current context's default generator (see :func:`manual_seed`).

    >>> import numpy as np
    >>> isinstance(default_generator(), np.random.Generator)
    True
    """
    gen = _generator.get()
    if gen is None:
        gen = manual_seed(_entropy_seed())
    return gen


def _entropy_seed() -> int:
    return int(numpy.random.SeedSequence().entropy) % 2**63  # PyTorch's seeds are 63-bit


def seed() -> int:
    """Reseed the default generator from the operating system's entropy and return the seed
    (``torch.seed``).

    >>> import funcgrad_nn as nn
    >>> s = nn.seed()
    >>> nn.initial_seed() == s
    True
    """
    s = _entropy_seed()
    manual_seed(s)
    return s


def initial_seed() -> int:
    """The seed the default generator was made from: the last :func:`manual_seed` or
    :func:`seed`, else the entropy seed it started with (``torch.initial_seed``).

    >>> import funcgrad_nn as nn
    >>> _ = nn.manual_seed(7)
    >>> nn.initial_seed()
    7
    """
    default_generator()
    return _seed.get()


def get_rng_state() -> numpy.ndarray:
    """The default generator's state as a uint8 array (``torch.get_rng_state``'s byte
    tensor): save it in a checkpoint, restore it with :func:`set_rng_state`, and the
    initialisers, shuffling loaders and samplers that draw from the generator continue as
    if never interrupted.

    Modules that draw random numbers (``Dropout``, ``RReLU``, ...) carry their own key, a
    non-persistent buffer ``rng_key`` seeded from this generator when they are built, which
    ``state_dict()`` leaves out: for an identical continuation, save those buffers too (see
    docs/training.md).

    >>> import numpy as np, funcgrad_nn as nn
    >>> _ = nn.manual_seed(0)
    >>> state = nn.get_rng_state()
    >>> a = nn.Linear(2, 2).weight.copy()
    >>> nn.set_rng_state(state)
    >>> bool((nn.Linear(2, 2).weight == a).all())
    True
    """
    gen = default_generator()
    record = {"seed": initial_seed(), "state": gen.bit_generator.state}
    return numpy.frombuffer(json.dumps(record).encode(), numpy.uint8).copy()


def set_rng_state(new_state: Any) -> None:
    """Restore the default generator to a state :func:`get_rng_state` returned
    (``torch.set_rng_state``); a saved and reloaded state (``nn.save``/``nn.load``, on any
    device) works as well.

    >>> import funcgrad_nn as nn
    >>> state = nn.get_rng_state()
    >>> x = nn.init.default_generator().random()
    >>> nn.set_rng_state(state)
    >>> nn.init.default_generator().random() == x
    True
    """
    try:
        raw = numpy.asarray(funcgrad.to_numpy(new_state))
        if raw.dtype != numpy.uint8 or raw.ndim != 1:
            raise ValueError
        record = json.loads(raw.tobytes().decode())
        seed, state = int(record["seed"]), record["state"]
        gen = numpy.random.Generator(getattr(numpy.random, state["bit_generator"])())
        gen.bit_generator.state = state
    except (ValueError, TypeError, KeyError, AttributeError, UnicodeDecodeError):
        raise TypeError("set_rng_state: expected the uint8 array get_rng_state() returned, "
                        f"got {_describe_state(new_state)}") from None
    _generator.set(gen)
    _seed.set(seed)


def _describe_state(x: Any) -> str:
    shape, dtype = getattr(x, "shape", None), getattr(x, "dtype", None)
    if shape is not None and dtype is not None:
        return f"an array {dtype}{list(shape)}"
    return type(x).__name__


def _gen(generator: Any) -> numpy.random.Generator:
    if generator is None:
        return default_generator()
    if isinstance(generator, numpy.random.Generator):
        return generator
    if isinstance(generator, (int, numpy.integer)):
        return numpy.random.default_rng(int(generator))
    raise TypeError(f"generator: expected None, an int seed or numpy.random.Generator, got "
                    f"{type(generator).__name__}")


def _in_place(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Let an initialiser take a ``Parameter`` too (``nn.init.normal_(nn.Parameter(w))`` as
    in PyTorch): it fills the array inside and returns the Parameter. PyTorch code also
    passes ``m.weight.data`` (the DCGAN tutorial's ``nn.init.normal_(m.weight.data, 0.0,
    0.02)``): for a host array that is NumPy's ``memoryview`` of its buffer, so the array it
    shows is filled; a CuPy array's ``.data`` (a raw device pointer) is refused by name."""
    from funcgrad_nn.module import Parameter

    @functools.wraps(fn)
    def init_(tensor: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(tensor, Parameter):
            fn(tensor.data, *args, **kwargs)
            return tensor
        if isinstance(tensor, memoryview):
            if tensor.readonly:
                raise ValueError(f"{fn.__name__}: the buffer is read-only; pass a writable "
                                 "array")
            fn(numpy.asarray(tensor), *args, **kwargs)
            return tensor
        if type(tensor).__name__ == "MemoryPointer":
            raise TypeError(f"{fn.__name__}: got a raw device pointer (`.data` of a CuPy "
                            "array is not a tensor as in PyTorch); pass the parameter itself, "
                            f"e.g. nn.init.{fn.__name__}(m.weight, ...)")
        return fn(tensor, *args, **kwargs)

    return init_


def _fill(tensor: Any, values: numpy.ndarray) -> Any:
    if not hasattr(tensor, "shape"):
        raise TypeError(f"expected an array to fill in place, got {type(tensor).__name__}")
    values = numpy.asarray(values, dtype=tensor.dtype).reshape(tensor.shape)
    if isinstance(tensor, numpy.ndarray):
        tensor[...] = values
    else:
        tensor[...] = funcgrad.device_put(values, _device(tensor))
    return tensor


def _check_floating(tensor: Any, name: str) -> None:
    """Random values need a floating (or complex) array: cast into integers they would silently
    truncate (PyTorch raises there too, "normal_kernel_cpu" not implemented for 'Long')."""
    dt = numpy.dtype(getattr(tensor, "dtype", numpy.float64))
    if dt.kind not in "fc":
        raise TypeError(f"{name}: random initialisation needs a floating array, got dtype "
                        f"{dt}; create the array as float (e.g. np.empty(shape, np.float32))")


def _device(x: Any) -> str:
    from funcgrad.backend import device_of

    return device_of(x)


class InitValueError(ValueError, RuntimeError):
    """An initialiser's argument out of its range (``uniform_``'s ``a > b``, ``normal_``'s
    negative ``std``): a ``ValueError`` and, as PyTorch raises there, a ``RuntimeError``."""


def _calculate_fan_in_and_fan_out(tensor: Any) -> tuple[int, int]:
    """``(fan_in, fan_out)`` of a weight, PyTorch's private helper of the same name (custom
    layers' ``reset_parameters`` call it): ``shape[1]`` and ``shape[0]``, each times the
    receptive field (the product of the dimensions after the second).

    >>> import numpy as np
    >>> _calculate_fan_in_and_fan_out(np.empty((8, 3, 5, 5)))
    (75, 200)
    """
    shape = tuple(tensor.shape)
    if len(shape) < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         f"dimensions (shape {shape})")
    receptive = math.prod(shape[2:])
    return shape[1] * receptive, shape[0] * receptive


def _calculate_correct_fan(tensor: Any, mode: str) -> int:
    """The fan ``mode`` names (``"fan_in"`` or ``"fan_out"``, any case), PyTorch's private
    helper of the same name.

    >>> import numpy as np
    >>> _calculate_correct_fan(np.empty((8, 3)), "fan_out")
    8
    """
    mode = mode.lower()  # as PyTorch: "FAN_IN" is accepted
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of ['fan_in', 'fan_out']")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """PyTorch's recommended gain for a nonlinearity.

    >>> round(calculate_gain("relu"), 4), round(calculate_gain("leaky_relu", 0.2), 4)
    (1.4142, 1.3868)
    """
    linear = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
              "conv_transpose3d", "sigmoid")
    if nonlinearity in linear:
        return 1  # PyTorch's int (prints as 1, not 1.0)
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        if isinstance(slope, bool) or not isinstance(slope, (int, float)):
            raise ValueError(f"negative_slope {slope} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


@_in_place
def uniform_(tensor: Any, a: float = 0.0, b: float = 1.0, generator: Any = None) -> Any:
    """Fill with U(a, b).

    >>> import numpy as np
    >>> x = uniform_(np.empty(100), -1, 1, generator=0); bool((np.abs(x) <= 1).all())
    True
    """
    _check_floating(tensor, "uniform_")
    if a > b:
        raise InitValueError(f"uniform_ expects to return a [from, to) range, but found "
                             f"from={a} > to={b}")
    return _fill(tensor, _gen(generator).uniform(a, b, size=tensor.shape))


@_in_place
def normal_(tensor: Any, mean: float = 0.0, std: float = 1.0, generator: Any = None) -> Any:
    """Fill with N(mean, std**2).

    >>> import numpy as np
    >>> normal_(np.empty(3), generator=0).shape
    (3,)
    """
    _check_floating(tensor, "normal_")
    if std < 0:
        raise InitValueError(f"normal expects std >= 0.0, but found std {std}")
    return _fill(tensor, _gen(generator).normal(mean, std, size=tensor.shape))


@_in_place
def trunc_normal_(tensor: Any, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator: Any = None) -> Any:
    """Fill with N(mean, std**2) truncated to [a, b] (absolute bounds), as PyTorch: rejection
    from the normal where [a, b] holds more than 30 % of its mass, else from a uniform
    proposal on [a, b] accepted with the normal density (so far tails stay fast).

    >>> import numpy as np
    >>> x = trunc_normal_(np.empty(1000), generator=0); bool((np.abs(x) <= 2).all())
    True
    >>> bool((trunc_normal_(np.empty(100), a=10.0, b=11.0, generator=0) >= 10).all())
    True
    """
    _check_floating(tensor, "trunc_normal_")
    if a > b:
        raise ValueError(f"trunc_normal_: the bounds must satisfy a <= b, got a={a}, b={b}")
    if std <= 0:
        raise ValueError(f"trunc_normal_: std must be positive, got {std}")
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
                      "The distribution of values may be incorrect.", stacklevel=3)
    g = _gen(generator)
    n = math.prod(tensor.shape)

    def cdf(x: float) -> float:
        return (1.0 + math.erf((x - mean) / (std * math.sqrt(2.0)))) / 2.0

    mass = cdf(b) - cdf(a)
    # the mode of the truncated density and its log, for the uniform proposal
    log_peak = -0.5 * ((max(a, min(mean, b)) - mean) / std) ** 2
    out = numpy.empty(0)
    while out.size < n:
        want = max(2 * (n - out.size), 16)
        if mass > 0.3:
            draw = g.normal(mean, std, size=want)
            keep = (draw >= a) & (draw <= b)
        else:
            draw = g.uniform(a, b, size=want)
            log_ratio = -0.5 * ((draw - mean) / std) ** 2 - log_peak
            keep = numpy.log(g.uniform(size=want)) <= log_ratio
        out = numpy.concatenate([out, draw[keep]])
    return _fill(tensor, out[:n])


def _no_grad_uniform_(tensor: Any, a: float, b: float, generator: Any = None) -> Any:
    """PyTorch's private helper behind :func:`uniform_` (code that builds its own
    initialisers imports it); here the same function (initialisers never record gradients).

    >>> import numpy as np
    >>> bool((_no_grad_uniform_(np.empty(5), 2.0, 3.0, generator=0) >= 2).all())
    True
    """
    return uniform_(tensor, a, b, generator)


def _no_grad_normal_(tensor: Any, mean: float, std: float, generator: Any = None) -> Any:
    """PyTorch's private helper behind :func:`normal_` (see :func:`_no_grad_uniform_`).

    >>> import numpy as np
    >>> _no_grad_normal_(np.empty(3), 0.0, 1.0, generator=0).shape
    (3,)
    """
    return normal_(tensor, mean, std, generator)


def _no_grad_trunc_normal_(tensor: Any, mean: float, std: float, a: float, b: float,
                           generator: Any = None) -> Any:
    """PyTorch's private helper behind :func:`trunc_normal_` (timm-style code imports it).

    >>> import numpy as np
    >>> bool((np.abs(_no_grad_trunc_normal_(np.empty(50), 0.0, 1.0, -1.0, 1.0, 0)) <= 1).all())
    True
    """
    return trunc_normal_(tensor, mean, std, a, b, generator)


def _no_grad_fill_(tensor: Any, val: float) -> Any:
    """PyTorch's private helper behind :func:`constant_`.

    >>> import numpy as np
    >>> _no_grad_fill_(np.empty(2), 7.0)
    array([7., 7.])
    """
    return constant_(tensor, val)


def _no_grad_zero_(tensor: Any) -> Any:
    """PyTorch's private helper behind :func:`zeros_`.

    >>> import numpy as np
    >>> _no_grad_zero_(np.ones(2))
    array([0., 0.])
    """
    return zeros_(tensor)


@_in_place
def constant_(tensor: Any, val: float) -> Any:
    """Fill with ``val``.

    >>> import numpy as np
    >>> constant_(np.empty(2), 3.0)
    array([3., 3.])
    """
    return _fill(tensor, numpy.full(tensor.shape, val))


@_in_place
def zeros_(tensor: Any) -> Any:
    """Fill with zeros.

    >>> import numpy as np
    >>> zeros_(np.ones(2))
    array([0., 0.])
    """
    return constant_(tensor, 0.0)


@_in_place
def ones_(tensor: Any) -> Any:
    """Fill with ones.

    >>> import numpy as np
    >>> ones_(np.zeros(2))
    array([1., 1.])
    """
    return constant_(tensor, 1.0)


@_in_place
def eye_(tensor: Any) -> Any:
    """Fill a 2-D array with the identity.

    >>> import numpy as np
    >>> eye_(np.zeros((2, 3)))[1]
    array([0., 1., 0.])
    """
    if len(tensor.shape) != 2:
        raise ValueError(f"eye_: only 2-D arrays are supported, got shape {tensor.shape}")
    return _fill(tensor, numpy.eye(*tensor.shape))


@_in_place
def dirac_(tensor: Any, groups: int = 1) -> Any:
    """Fill a 3-, 4- or 5-D convolution weight with the Dirac delta, so the convolution
    passes its first ``min(out_channels // groups, in_channels)`` input channels of each
    group through unchanged (a one at the kernel's centre), as PyTorch.

    >>> import numpy as np
    >>> w = dirac_(np.empty((2, 2, 3)))
    >>> w[0].tolist(), w[1].tolist()
    ([[0.0, 1.0, 0.0], [0.0, 0.0, 0.0]], [[0.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    """
    shape = tuple(tensor.shape)
    if len(shape) not in (3, 4, 5):
        raise ValueError(f"dirac_: only arrays with 3, 4 or 5 dimensions are supported, got "
                         f"shape {shape}")
    if shape[0] % groups != 0:
        raise ValueError(f"dirac_: dim 0 ({shape[0]}) must be divisible by groups ({groups})")
    per_group = shape[0] // groups
    values = numpy.zeros(shape)
    centre = tuple(s // 2 for s in shape[2:])
    for g in range(groups):
        for d in range(min(per_group, shape[1])):
            values[(g * per_group + d, d, *centre)] = 1.0
    return _fill(tensor, values)


@_in_place
def xavier_uniform_(tensor: Any, gain: float = 1.0, generator: Any = None) -> Any:
    """Glorot uniform: U(-b, b), b = gain * sqrt(6 / (fan_in + fan_out)).

    >>> import numpy as np
    >>> xavier_uniform_(np.empty((2, 2)), generator=0).shape
    (2, 2)
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


@_in_place
def xavier_normal_(tensor: Any, gain: float = 1.0, generator: Any = None) -> Any:
    """Glorot normal: N(0, std**2), std = gain * sqrt(2 / (fan_in + fan_out)).

    >>> import numpy as np
    >>> xavier_normal_(np.empty((2, 2)), generator=0).shape
    (2, 2)
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)), generator)


def _kaiming_std(tensor: Any, a: float, mode: str, nonlinearity: str) -> float:
    return calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode))


@_in_place
def kaiming_uniform_(tensor: Any, a: float = 0.0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator: Any = None) -> Any:
    """He uniform: U(-b, b), b = gain * sqrt(3 / fan). ``a=sqrt(5)`` is PyTorch's Linear/Conv
    default (giving b = 1/sqrt(fan_in)).

    >>> import numpy as np, math
    >>> w = kaiming_uniform_(np.empty((4, 9)), a=math.sqrt(5), generator=0)
    >>> bool(np.abs(w).max() <= 1 / 3)
    True
    """
    if 0 in tuple(tensor.shape):  # as PyTorch: a no-op on zero-element tensors (no fan)
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


@_in_place
def kaiming_normal_(tensor: Any, a: float = 0.0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator: Any = None) -> Any:
    """He normal: N(0, std**2), std = gain / sqrt(fan).

    >>> import numpy as np
    >>> kaiming_normal_(np.empty((2, 3)), generator=0).shape
    (2, 3)
    """
    if 0 in tuple(tensor.shape):  # as PyTorch: a no-op on zero-element tensors (no fan)
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return tensor
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity), generator)


@_in_place
def orthogonal_(tensor: Any, gain: float = 1.0, generator: Any = None) -> Any:
    """A (semi-)orthogonal matrix (trailing dims flattened), scaled by ``gain``.

    >>> import numpy as np
    >>> q = orthogonal_(np.empty((3, 3)), generator=0)
    >>> bool(np.allclose(q @ q.T, np.eye(3)))
    True
    """
    _check_floating(tensor, "orthogonal_")
    if len(tensor.shape) < 2:
        raise ValueError("orthogonal_: only arrays with 2 or more dimensions are supported")
    if 0 in tuple(tensor.shape):  # as PyTorch: nothing to fill
        return tensor
    rows = tensor.shape[0]
    cols = math.prod(tensor.shape[1:])
    flat = _gen(generator).normal(size=(rows, cols))
    if rows < cols:
        flat = flat.T
    q, r = numpy.linalg.qr(flat)
    q = q * numpy.sign(numpy.diag(r))
    if rows < cols:
        q = q.T
    return _fill(tensor, gain * q)


@_in_place
def sparse_(tensor: Any, sparsity: float, std: float = 0.01, generator: Any = None) -> Any:
    """Fill a 2-D array from N(0, std**2), then zero ``ceil(sparsity * rows)`` entries of
    every column at random rows (Martens 2010), as PyTorch.

    >>> import numpy as np
    >>> w = sparse_(np.empty((4, 3)), 0.5, generator=0)
    >>> (w == 0).sum(axis=0).tolist()
    [2, 2, 2]
    """
    _check_floating(tensor, "sparse_")
    if len(tensor.shape) != 2:
        raise ValueError(f"sparse_: only 2-D arrays are supported, got shape "
                         f"{tuple(tensor.shape)}")
    rows, cols = tensor.shape
    g = _gen(generator)
    values = g.normal(0.0, std, size=(rows, cols))
    num_zeros = math.ceil(sparsity * rows)
    for col in range(cols):
        values[g.permutation(rows)[:num_zeros], col] = 0.0
    return _fill(tensor, values)


def _deprecated(fn: Callable[..., Any]) -> Callable[..., Any]:
    old = fn.__name__[:-1]

    @functools.wraps(fn)
    def alias(*args: Any, **kwargs: Any) -> Any:
        warnings.warn(f"`nn.init.{old}` is now deprecated in favor of "
                      f"`nn.init.{fn.__name__}`.", FutureWarning, stacklevel=2)
        return fn(*args, **kwargs)

    alias.__name__ = alias.__qualname__ = old
    alias.__doc__ = (f"Deprecated alias of :func:`{fn.__name__}` (it warns, as PyTorch's).\n\n"
                     f"    >>> callable({old})\n    True\n    ")
    return alias


# PyTorch's deprecated names without the trailing underscore
uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
