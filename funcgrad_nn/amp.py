"""``torch.amp``: automatic mixed precision.

:class:`autocast` runs the layers and functions of ``funcgrad_nn`` that PyTorch autocasts in
lower precision (``F.linear``, the convolutions, ``F.prelu``, attention) with their floating
inputs cast to ``float16``, and those PyTorch runs in ``float32`` (the losses, and on CUDA
softmax and the normalisations) with their inputs cast up, following PyTorch's per-device
op lists (:data:`AUTOCAST_POLICIES`). Gradients flow through the casts, so a ``float32``
parameter gets a ``float32`` gradient. A user's own ``fnp.matmul``/``fnp.einsum``/
``fnp.tensordot`` and ``@`` on traced arrays autocast as ``torch.matmul``/``einsum``/
``tensordot`` do (a hook ``funcgrad.numpy`` calls; products inside funcgrad's own ops are not
cast again). :class:`GradScaler` is PyTorch's dynamic loss scaling for gradients returned by
``nn.grad`` (see ``docs/nn.md``, "Mixed precision").

NumPy and CuPy have no ``bfloat16``, so ``dtype=bfloat16`` (the default of
``autocast("cpu")``) is refused with a ``TypeError`` naming ``float16``.

>>> import numpy as np, funcgrad_nn as nn
>>> lin = nn.Linear(3, 2)
>>> with nn.autocast("cpu", dtype=np.float16):
...     y = lin(np.ones((4, 3), np.float32))
...     loss = nn.F.mse_loss(y, np.zeros((4, 2), np.float32))
>>> y.dtype, loss.dtype
(dtype('float16'), dtype('float32'))
>>> import funcgrad.numpy as fnp
>>> with nn.autocast("cpu", dtype=np.float16):
...     fnp.matmul(np.ones((4, 3), np.float32), lin.weight.T).dtype
dtype('float16')
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from types import MappingProxyType
from typing import Any

import numpy

import funcgrad
import funcgrad.numpy as fnp
import funcgrad.numpy._array_methods
import funcgrad.numpy._creation
from funcgrad import tree_util
from funcgrad.backend import cuda_available, device_of, is_array, is_writeable, platform_name
from funcgrad.core import is_tracer
from funcgrad.numpy import _linalg_ops

__all__ = ["AUTOCAST_POLICIES", "GradScaler", "autocast", "autocast_inputs", "casts", "custom_bwd",
           "custom_fwd", "get_autocast_dtype", "is_autocast_available", "is_autocast_enabled"]

LOWER, FP32, PROMOTE, UNSAFE, INPUT = "lower", "fp32", "promote", "unsafe", "input"

_LOWER_OPS = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
              "conv_transpose3d", "prelu", "scaled_dot_product_attention",
              "multi_head_attention_forward", "conv_tbc", "matmul", "einsum")
_RNN_OPS = ("lstm", "gru", "rnn_tanh", "rnn_relu", "lstm_cell", "gru_cell", "rnn_tanh_cell",
            "rnn_relu_cell")
_FP32_LOSSES = ("binary_cross_entropy_with_logits", "cosine_embedding_loss", "cross_entropy",
                "hinge_embedding_loss", "kl_div", "l1_loss", "margin_ranking_loss",
                "mse_loss", "multi_margin_loss", "multilabel_margin_loss", "nll_loss",
                "poisson_nll_loss", "smooth_l1_loss", "soft_margin_loss",
                "triplet_margin_loss", "cdist")

#: device type -> {op name: policy}: PyTorch's autocast op lists (torch/csrc/autocast_mode.cpp)
#: for the ops funcgrad_nn implements. ``lower``: floating inputs other than float64 are cast
#: to the autocast dtype; ``fp32``: to float32; ``promote``: all floating inputs to the widest
#: of them; ``unsafe``: refused (PyTorch's ``binary_cross_entropy`` on CUDA). The CPU lists
#: were read off torch 2.13 (which ops change dtype under ``torch.autocast("cpu")``), the
#: CUDA ones off ATen's autocast_mode.h (AT_FORALL_LOWER_PRECISION_FP, AT_FORALL_FP32,
#: AT_FORALL_FP32_SET_OPT_DTYPE, AT_FORALL_PROMOTE).
AUTOCAST_POLICIES: dict[str, dict[str, str]] = {
    "cuda": {
        **dict.fromkeys(_LOWER_OPS + _RNN_OPS, LOWER),
        # interpolate: the upsample_* kernels (not 'area', an adaptive pooling);
        # local_response_norm and multilabel_soft_margin_loss: their pow and sum are float32
        **dict.fromkeys(_FP32_LOSSES + (
            "softmax", "log_softmax", "softmin", "softplus", "layer_norm", "rms_norm",
            "group_norm", "normalize", "cosine_similarity", "pdist", "huber_loss", "interpolate",
            "local_response_norm", "multilabel_soft_margin_loss"), FP32),
        "affine_grid": LOWER,  # its bmm
        "bilinear": PROMOTE, "grid_sample": PROMOTE, "tensordot": PROMOTE,
        "binary_cross_entropy": UNSAFE,
    },
    "cpu": {
        # tensordot: the CPU list has no entry of its own, so torch's decomposition reaches
        # mm, which is in it (float16 out)
        **dict.fromkeys(_LOWER_OPS + ("lstm", "rnn_tanh", "rnn_relu", "rnn_tanh_cell",
                                      "rnn_relu_cell", "tensordot"), LOWER),
        **dict.fromkeys(("gru", "gru_cell", "lstm_cell"), INPUT),
        "affine_grid": LOWER,  # its bmm
        # the 3-D poolings, unpoolings and the reflect/replicate pads are in the CPU float32
        # list (max_pool3d with indices is not; lp_pool3d and local_response_norm average
        # through avg_pool3d)
        **dict.fromkeys(_FP32_LOSSES + (
            "binary_cross_entropy", "huber_loss", "ctc_loss", "grid_sample", "avg_pool3d",
            "max_pool3d", "lp_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d",
            "fractional_max_pool3d", "max_unpool1d", "max_unpool2d", "max_unpool3d",
            "reflection_pad1d", "reflection_pad2d", "replication_pad1d", "replication_pad2d",
            "replication_pad3d", "local_response_norm"), FP32),
    },
}

_DEFAULT_DTYPES = {"cuda": numpy.dtype(numpy.float16), "cpu": "bfloat16"}

#: device type -> the autocast dtype in force there (absent: autocast off)
_state: ContextVar[Mapping[str, numpy.dtype]] = ContextVar(
    "funcgrad_nn_autocast", default=MappingProxyType({}))

_UNSAFE_MESSAGES = {
    "binary_cross_entropy": (
        "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to "
        "autocast. Many models use a sigmoid layer right before the binary cross entropy "
        "layer. In this case, combine the two layers using "
        "torch.nn.functional.binary_cross_entropy_with_logits or torch.nn.BCEWithLogitsLoss. "
        "binary_cross_entropy_with_logits and BCEWithLogits are safe to autocast."),
}


def _device_type(device_type: Any) -> str:
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    return platform_name(device_type)


def _unavailable(device: str, dt: numpy.dtype) -> str | None:
    """PyTorch's warning when ``autocast(device, dt)`` turns itself off (CUDA without a GPU;
    a CPU autocast dtype other than float16/bfloat16), else None."""
    if device == "cuda" and not cuda_available():
        return "CUDA is not available or torch_xla is imported. Disabling autocast."
    if device == "cpu" and dt != numpy.float16:
        return ("In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
                "CPU Autocast only supports dtypes of torch.bfloat16, torch.float16 currently."
                " (funcgrad_nn: float16 only, NumPy has no bfloat16)")
    return None


def _autocast_dtype(device_type: str, dtype: Any) -> numpy.dtype:
    want = _DEFAULT_DTYPES.get(device_type, numpy.dtype(numpy.float16)) if dtype is None \
        else dtype
    if str(want).rsplit(".", 1)[-1] == "bfloat16" or getattr(want, "__name__", "") == \
            "bfloat16":
        raise TypeError(
            f"autocast({device_type!r}): funcgrad_nn has no bfloat16 dtype (arrays are "
            "NumPy/CuPy arrays and NumPy has no bfloat16"
            + ("; torch.autocast('cpu') defaults to bfloat16" if dtype is None else "")
            + "): pass dtype=numpy.float16")
    try:
        dt = numpy.dtype(want)
    except TypeError:
        raise TypeError(f"autocast: dtype must be a floating dtype, got {want!r}") from None
    if device_type == "cuda" and dt not in (numpy.dtype(numpy.float16),
                                            numpy.dtype(numpy.float32)):
        raise TypeError(f"autocast({device_type!r}): the autocast dtype must be float16 "
                        f"(or float32), got {dt}")
    return dt


class autocast:  # noqa: N801 (PyTorch's name)
    """``torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None)``: inside
    the block (or the decorated function), the ``funcgrad_nn`` ops PyTorch autocasts on
    ``device_type`` (``"cuda"`` or ``"cpu"``; arrays elsewhere are left alone, as PyTorch
    leaves other devices' tensors) run in ``dtype`` (``float16`` by default on CUDA) or in
    float32, per :data:`AUTOCAST_POLICIES`. ``enabled=False`` turns it off for the block.
    ``cache_enabled`` is accepted (the casts are not cached: each call casts again). As
    PyTorch's, ``autocast("cuda")`` on a machine without a GPU, and ``autocast("cpu")`` with a
    dtype other than float16 (float32, as a configurable ``dtype`` often is), warn and act as
    ``enabled=False``; another device type is a ``RuntimeError``.

    Under ``nn.jit`` the autocast state is part of the cache key (a step traced outside
    autocast is traced again inside it); a plain ``funcgrad.jit`` traced outside the block
    keeps its program: enter autocast inside the jitted function instead.

    >>> import numpy as np, funcgrad_nn as nn
    >>> conv = nn.Conv1d(2, 3, 3)
    >>> with nn.autocast("cpu", dtype=np.float16):
    ...     with nn.autocast("cpu", enabled=False):
    ...         inner = conv(np.ones((1, 2, 5), np.float32)).dtype
    ...     outer = conv(np.ones((1, 2, 5), np.float32)).dtype
    >>> inner, outer
    (dtype('float32'), dtype('float16'))
    """

    def __init__(self, device_type: str, dtype: Any = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        self.device = _device_type(device_type)
        if self.device not in AUTOCAST_POLICIES:
            raise RuntimeError(
                f"User specified an unsupported autocast device_type '{device_type}' "
                "(funcgrad_nn: 'cpu' or 'cuda')")
        self.fast_dtype = _autocast_dtype(self.device, dtype) if enabled else None
        if enabled:
            why = _unavailable(self.device, self.fast_dtype)
            if why is not None:
                warnings.warn(why, UserWarning, stacklevel=2)
                enabled = False
        self._enabled = bool(enabled)
        self._cache_enabled = cache_enabled
        self._tokens: list[Any] = []

    def _copy(self) -> autocast:
        # the same settings, checked (and warned about) once, at decoration
        new = object.__new__(autocast)
        new.__dict__.update(self.__dict__, _tokens=[])
        return new

    def __enter__(self) -> autocast:
        state = dict(_state.get())
        if self._enabled:
            state[self.device] = self.fast_dtype
        else:
            state.pop(self.device, None)
        self._tokens.append(_state.set(MappingProxyType(state)))
        return self

    def __exit__(self, *exc: Any) -> None:
        _state.reset(self._tokens.pop())

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            with self._copy():
                return fn(*args, **kwargs)
        return wrapped


def is_autocast_available(device_type: str) -> bool:
    """Whether ``autocast`` supports ``device_type`` (``"cpu"`` and ``"cuda"``).

    >>> is_autocast_available("cuda"), is_autocast_available("tpu")
    (True, False)
    """
    return _device_type(device_type) in AUTOCAST_POLICIES


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether autocast is on for ``device_type`` (PyTorch's default: ``"cuda"``).

    >>> import numpy as np
    >>> with autocast("cpu", dtype=np.float16):
    ...     is_autocast_enabled("cpu"), is_autocast_enabled()
    (True, False)
    """
    return _device_type(device_type or "cuda") in _state.get()


def get_autocast_dtype(device_type: str) -> numpy.dtype | str:
    """The dtype autocast uses on ``device_type`` now (its default when autocast is off:
    ``float16`` on CUDA, ``"bfloat16"`` on the CPU, which funcgrad cannot compute in).

    >>> import numpy as np
    >>> with autocast("cpu", dtype=np.float16):
    ...     get_autocast_dtype("cpu")
    dtype('float16')
    >>> get_autocast_dtype("cuda")
    dtype('float16')
    """
    dev = _device_type(device_type)
    return _state.get().get(dev, _DEFAULT_DTYPES.get(dev, numpy.dtype(numpy.float16)))


def state_key() -> tuple[tuple[str, str], ...]:
    """The autocast state as a hashable key (``nn.jit`` traces once per state).

    >>> state_key()
    ()
    """
    return tuple(sorted((dev, str(dt)) for dev, dt in _state.get().items()))


def _array_device_type(x: Any) -> str | None:
    aval = getattr(x, "aval", None)
    dev = getattr(aval, "device", None) if aval is not None else device_of(x)
    return None if dev is None else platform_name(dev)


def _floating(x: Any) -> bool:
    # arrays and traced values only (not NumPy scalars, masks objects such as CausalBias)
    return (is_tracer(x) or is_array(x)) and numpy.dtype(x.dtype).kind == "f"


def autocast_inputs(op: str, *args: Any) -> tuple[Any, ...]:
    """``args`` as PyTorch's autocast casts them for ``op`` (a name in
    :data:`AUTOCAST_POLICIES`) when autocast is on for their device; unchanged otherwise.
    The ``funcgrad_nn`` functions call it first thing; non-arrays (None, Python numbers)
    pass through.

    >>> import numpy as np
    >>> x = np.ones(2, np.float32)
    >>> autocast_inputs("linear", x)[0].dtype
    dtype('float32')
    >>> with autocast("cpu", dtype=np.float16):
    ...     autocast_inputs("linear", x, None)[0].dtype
    dtype('float16')
    """
    state = _state.get()
    if not state:
        return args
    dev = next((d for d in map(_array_device_type, args) if d is not None), None)
    dtype = state.get(dev) if dev is not None else None
    policy = AUTOCAST_POLICIES.get(dev, {}).get(op) if dtype is not None else None
    if policy is None:
        return args
    if policy == UNSAFE:
        raise RuntimeError(_UNSAFE_MESSAGES[op])
    target = _TARGETS[policy](args, dtype)
    if target is None:
        return args
    # PyTorch casts the floating arguments that are not float64 (cached_cast's is_eligible:
    # a float64 model under autocast stays float64); promote/input take every float along
    keep64 = policy in (LOWER, FP32)
    return tuple(a.astype(target) if _floating(a) and a.dtype != target
                 and not (keep64 and numpy.dtype(a.dtype) == numpy.float64) else a
                 for a in args)


def _widest(args: tuple[Any, ...], dtype: numpy.dtype) -> numpy.dtype | None:
    floats = [numpy.dtype(a.dtype) for a in args if _floating(a)]
    return numpy.result_type(*floats) if floats else None


def _first(args: tuple[Any, ...], dtype: numpy.dtype) -> numpy.dtype | None:
    first = next((a for a in args if _floating(a)), None)
    return None if first is None else numpy.dtype(first.dtype)


#: policy -> the dtype the floating arguments are cast to (given them and the autocast dtype)
_TARGETS: dict[str, Callable[[tuple[Any, ...], numpy.dtype], numpy.dtype | None]] = {
    LOWER: lambda args, dtype: dtype,
    FP32: lambda args, dtype: numpy.dtype(numpy.float32),
    PROMOTE: _widest,
    INPUT: _first,
}


#: where the frames between a caller and a matrix product live (fnp.matmul's out_sharding
#: wrapper, a traced array's ``@``), skipped to find who called it
_DISPATCH_FILES = frozenset(m.__file__ for m in (
    funcgrad.numpy._creation, funcgrad.numpy._array_methods))
#: the libraries' own code: a matrix product they compute inside an op is not autocast, as
#: PyTorch's autocast does not cast again inside an op it has cast (nor inside ops it leaves
#: alone, such as the linear algebra)
_LIBRARY_DIRS = (os.path.dirname(funcgrad.__file__) + os.sep,
                 os.path.dirname(os.path.abspath(__file__)) + os.sep)  # funcgrad_nn's own


def _called_by_user() -> bool:
    # the caller of the product: frames 1-3 are the hook, _linalg_ops._hooked and the product
    # (matmul, einsum, tensordot) itself; a product that one of them calls again (matmul with
    # dtype=) has _linalg_ops as its caller, funcgrad's own code
    frame = sys._getframe(4)
    while frame is not None and frame.f_code.co_filename in _DISPATCH_FILES:
        frame = frame.f_back
    return frame is not None and not frame.f_code.co_filename.startswith(_LIBRARY_DIRS)


def _autocast_user_products(op: str, operands: tuple[Any, ...]) -> tuple[Any, ...]:
    """The operands of a user's ``@``/``fnp.matmul``/``fnp.einsum``/``fnp.tensordot``
    autocast as PyTorch's ``torch.matmul``/``einsum``/``tensordot`` (the hook
    ``funcgrad.numpy`` calls; a product inside funcgrad's own ops is left alone)."""
    if not _state.get() or not _called_by_user():
        return operands
    return autocast_inputs(op, *operands)


_linalg_ops.operand_hooks.append(_autocast_user_products)


@contextlib.contextmanager
def suspended() -> Iterator[None]:
    """Autocast off on every device inside the block: for an op that computes in a dtype of
    its own choosing (half attention in float32) by calling itself again.

    >>> import numpy as np
    >>> with autocast("cpu", dtype=np.float16), suspended():
    ...     is_autocast_enabled("cpu")
    False
    """
    token = _state.set(MappingProxyType({}))
    try:
        yield
    finally:
        _state.reset(token)


def casts(op: str, *args: Any) -> bool:
    """Whether autocast is on for ``op`` on the arguments' device (so :func:`autocast_inputs`
    may change their dtypes): layers skip their own input/weight dtype check then, as
    PyTorch's autocast casts before the op checks.

    >>> import numpy as np
    >>> with autocast("cpu", dtype=np.float16):
    ...     casts("linear", np.ones(2)), casts("relu", np.ones(2))
    (True, False)
    """
    state = _state.get()
    if not state:
        return False
    dev = next((d for d in map(_array_device_type, args) if d is not None), None)
    return dev in state and op in AUTOCAST_POLICIES.get(dev, {})


def _ctx_of(args: tuple[Any, ...]) -> Any:
    # an autograd.Function's ctx (the first argument of forward/backward), else None
    return args[0] if args and hasattr(args[0], "save_for_backward") else None


def custom_fwd(fwd: Callable[..., Any] | None = None, *, device_type: str,
               cast_inputs: Any = None) -> Any:
    """``torch.amp.custom_fwd`` for an ``autograd.Function``'s ``forward``: with
    ``cast_inputs`` given and autocast on for ``device_type``, the floating arrays of that
    device type among the arguments (not float64 ones, as PyTorch's) are cast to
    ``cast_inputs`` and ``forward`` runs with autocast off; otherwise it runs under the
    caller's autocast state, which the ctx remembers for :func:`custom_bwd`.

    >>> import numpy as np
    >>> f = custom_fwd(lambda x, y: (x.dtype, y.dtype), device_type="cpu",
    ...                cast_inputs=np.float32)
    >>> with autocast("cpu", dtype=np.float16):
    ...     f(np.ones(2, np.float16), np.ones(2, np.float64))
    (dtype('float32'), dtype('float64'))
    """
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)
    dev = _device_type(device_type)

    @functools.wraps(fwd)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        on = dev in _state.get()
        ctx = _ctx_of(args)
        if ctx is not None:  # PyTorch's attributes, read by custom_bwd
            ctx._dtype = get_autocast_dtype(dev)
            ctx._fwd_used_autocast = on and cast_inputs is None
        if cast_inputs is None or not on:
            return fwd(*args, **kwargs)
        dt = numpy.dtype(cast_inputs)

        def cast(x: Any) -> Any:
            eligible = (_floating(x) and numpy.dtype(x.dtype) != numpy.float64
                        and _array_device_type(x) == dev)
            return x.astype(dt) if eligible else x
        with autocast(dev, enabled=False):
            return fwd(*tree_util.tree_map(cast, args), **tree_util.tree_map(cast, kwargs))
    return wrapped


def custom_bwd(bwd: Callable[..., Any] | None = None, *, device_type: str) -> Any:
    """``torch.amp.custom_bwd`` for an ``autograd.Function``'s ``backward``: it runs under
    the autocast state its forward (decorated with :func:`custom_fwd`) ran under, as
    PyTorch's: autocast with the forward's dtype when the forward ran autocast, off
    otherwise (and when there is no such ctx).

    >>> g = custom_bwd(lambda ct: ct, device_type="cpu")
    >>> g(1.0)
    1.0
    """
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)
    dev = _device_type(device_type)

    @functools.wraps(bwd)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        ctx = _ctx_of(args)
        state = autocast(dev, enabled=False)
        if ctx is not None and getattr(ctx, "_fwd_used_autocast", False):
            # the forward's own (checked) autocast state, entered again
            state._enabled, state.fast_dtype = True, ctx._dtype
        with state:
            return bwd(*args, **kwargs)
    return wrapped


# -- GradScaler ---------------------------------------------------------------------------


_F32_MAX = float(numpy.finfo(numpy.float32).max)


def _f32(x: float) -> float:
    # PyTorch keeps the scale in a float32 tensor: every value it takes is a float32's.
    return float(numpy.float32(x))


class GradScaler:
    """``torch.amp.GradScaler(device="cuda", init_scale=65536.0, growth_factor=2.0,
    backoff_factor=0.5, growth_interval=2000, enabled=True)``: dynamic loss scaling for
    gradients that ``nn.grad`` returns (PyTorch scales ``.grad``; here the gradients are
    passed in).

    ``scale(loss)`` multiplies by the scale (inside the differentiated function);
    ``step(optimizer, grads)`` unscales the gradients and calls ``optimizer.step`` with them
    unless one is inf or NaN (then it skips the step and returns None);
    ``unscale_(optimizer, grads)`` unscales them in place first (to clip them);
    ``update()`` halves the scale after a skipped step and doubles it after
    ``growth_interval`` good ones. As PyTorch's, a scaler for ``"cuda"`` without a GPU
    warns and disables itself (every method passes through).

    Under ``nn.jit``, ``scale`` runs only while the step is traced, so the compiled step
    keeps that scale: pass the scale as an argument instead
    (``loss_fn(..., s) * s`` called with ``scaler.get_scale()``). ``step`` refuses gradients
    scaled by a value that is no longer the scale.

    >>> import numpy as np, funcgrad_nn as nn
    >>> model = nn.Linear(2, 1)
    >>> opt = nn.optim.SGD(model.parameters(), lr=0.1)
    >>> scaler = GradScaler("cpu", init_scale=1024.0)
    >>> x = np.ones((4, 2), np.float32)
    >>> grads = nn.grad(lambda m: scaler.scale(m(x).sum()))(model)
    >>> float(grads.bias[0])
    4096.0
    >>> scaler.step(opt, grads); scaler.update(); scaler.get_scale()
    1024.0
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        self._device = _device_type(device)
        if enabled and self._device == "cuda" and not cuda_available():
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available. "
                          " Disabling.", UserWarning, stacklevel=2)
            enabled = False
        self._enabled = bool(enabled)
        if not growth_factor > 1.0:
            raise ValueError("The growth factor must be > 1.0.")
        if not backoff_factor < 1.0:
            raise ValueError("The backoff factor must be < 1.0.")
        self._scale = _f32(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._growth_tracker = 0
        self._scale_used: float | None = None  # the scale scale() last multiplied by
        # per optimizer (by id) since the last update(): "unscaled" and found_inf
        self._per_optimizer: dict[int, dict[str, Any]] = {}

    # -- scaling ---------------------------------------------------------------------------

    def scale(self, outputs: Any) -> Any:
        """``outputs`` (an array or a list/tuple/pytree of them) times the scale. A 0-d
        output meets the scale as a float32 array (a float16 loss becomes float32, as in
        PyTorch); others as a Python number (their dtype is kept).

        >>> import numpy as np
        >>> s = GradScaler("cpu", init_scale=8.0)
        >>> s.scale(np.float32(2.0)).item(), [v.tolist() for v in s.scale([np.ones(2)])]
        (16.0, [[8.0, 8.0]])
        """
        if not self._enabled:
            return outputs
        self._scale_used = self._scale

        def one(v: Any) -> Any:
            if not (is_tracer(v) or hasattr(v, "dtype")):
                raise ValueError("outputs must be a Tensor or an iterable of Tensors")
            if fnp.ndim(v) == 0:
                return v * numpy.float32(self._scale)
            return v * self._scale
        return tree_util.tree_map(one, outputs)

    def get_scale(self) -> float:
        """The current scale (1.0 when disabled).

        >>> GradScaler("cpu").get_scale()
        65536.0
        """
        return self._scale if self._enabled else 1.0

    def is_enabled(self) -> bool:
        """Whether scaling is on.

        >>> GradScaler("cpu", enabled=False).is_enabled()
        False
        """
        return self._enabled

    def get_growth_factor(self) -> float:
        """The factor the scale grows by after ``growth_interval`` good steps."""
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        """Set the growth factor."""
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self) -> float:
        """The factor the scale shrinks by after a step with inf/NaN gradients."""
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        """Set the backoff factor."""
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self) -> int:
        """How many good steps in a row make the scale grow."""
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        """Set the growth interval."""
        self._growth_interval = int(new_interval)

    # -- unscaling and stepping ------------------------------------------------------------

    def _check_scale_current(self, fname: str) -> None:
        if self._scale_used is not None and self._scale_used != self._scale:
            raise RuntimeError(
                f"GradScaler.{fname}: the gradients were scaled by {self._scale_used} (the "
                f"scale when scale() last ran) but the scale is now {self._scale}: scale() "
                "did not run since update() changed it. Under nn.jit scale() runs only while "
                "the step is traced, so the compiled step keeps the old scale; pass the "
                "scale as an argument instead: step = nn.jit(nn.value_and_grad(lambda m, x, "
                "s: loss_fn(m, x) * s)); loss, grads = step(model, x, scaler.get_scale())")

    def _unscaled(self, grads: Any, fname: str, in_place: bool) -> tuple[Any, bool]:
        """(``grads`` times 1/scale, whether any is inf or NaN)."""
        if grads is None:
            raise TypeError(
                f"GradScaler.{fname}: pass the gradients (funcgrad stores no .grad on "
                f"parameters): grads = nn.grad(loss_fn)(model, ...); "
                f"scaler.{fname}(optimizer, grads)")
        self._check_scale_current(fname)
        inv = numpy.float32(1.0) / numpy.float32(self._scale)
        # per device, whether each gradient is finite: read back once per device at the end
        # (PyTorch's found_inf per device), not once per gradient (a GPU sync each)
        finite: dict[Any, list[Any]] = {}

        def one(g: Any) -> Any:
            if g is None:
                return None
            if is_tracer(g):
                raise TypeError(f"GradScaler.{fname}: the gradients are traced values "
                                "(inside jit/grad); call it on the concrete gradients the "
                                "step returns")
            if numpy.dtype(g.dtype) == numpy.float16:
                # PyTorch's rule: loss scaling is for float32 parameters under autocast;
                # float16 gradients of float16 parameters would overflow when unscaled back
                raise ValueError("Attempting to unscale FP16 gradients.")
            finite.setdefault(device_of(g), []).append(fnp.all(fnp.isfinite(g)))
            if in_place and is_writeable(g):
                g *= inv.astype(g.dtype) if numpy.dtype(g.dtype).kind == "f" else inv
                return g
            return (g * inv).astype(g.dtype)
        out = tree_util.tree_map(one, grads, is_leaf=lambda v: v is None)
        found = not all(bool(fnp.all(fnp.stack(flags))) for flags in finite.values())
        return out, found

    def unscale_(self, optimizer: Any, grads: Any = None) -> Any:
        """Divide ``grads`` by the scale in place (arrays that cannot be written are
        replaced: use the returned pytree) and remember, for ``optimizer``, whether one
        was inf or NaN; ``step(optimizer, grads)`` then does not unscale again. Once per
        optimizer between two ``update()`` calls, as PyTorch's.

        >>> import numpy as np
        >>> s = GradScaler("cpu", init_scale=4.0)
        >>> g = {"w": np.full(2, 8.0)}
        >>> _ = s.unscale_("opt", g); g["w"].tolist()
        [2.0, 2.0]
        """
        if not self._enabled:
            return grads
        state = self._per_optimizer.setdefault(id(optimizer), {})
        if state.get("unscaled"):
            raise RuntimeError("unscale_() has already been called on this optimizer since "
                               "the last update().")
        out, found = self._unscaled(grads, "unscale_", in_place=True)
        state.update(unscaled=True, found_inf=found, grads=out)
        return out

    def step(self, optimizer: Any, grads: Any = None, *args: Any, **kwargs: Any) -> Any:
        """``optimizer.step(unscaled grads, *args, **kwargs)`` unless a gradient is inf or
        NaN (then the step is skipped and None returned). Gradients already unscaled by
        ``unscale_(optimizer, grads)`` are not unscaled again.

        >>> import numpy as np, funcgrad_nn as nn
        >>> lin = nn.Linear(1, 1)
        >>> s = GradScaler("cpu")
        >>> g = nn.grad(lambda m: s.scale(m(np.ones((1, 1), np.float32)).sum()))(lin)
        >>> g.bias[...] = np.inf
        >>> s.step(nn.optim.SGD(lin.parameters(), lr=0.1), g) is None
        True
        >>> s.update(); s.get_scale()
        32768.0
        """
        if not self._enabled:
            return optimizer.step(grads, *args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        state = self._per_optimizer.setdefault(id(optimizer), {})
        if state.get("stepped"):
            raise RuntimeError("step() has already been called since the last update().")
        if state.get("unscaled"):
            found = state["found_inf"]
            if grads is None:
                grads = state["grads"]
        else:
            grads, found = self._unscaled(grads, "step", in_place=False)
            state.update(unscaled=True, found_inf=found)
        state["stepped"] = True
        if found:
            return None
        return optimizer.step(grads, *args, **kwargs)

    def update(self, new_scale: Any = None) -> None:
        """Adjust the scale for the next iteration: ``new_scale`` if given (a number or a
        1-element array), else ``scale * backoff_factor`` if a step since the last update
        found inf/NaN gradients, ``scale * growth_factor`` (when finite) after
        ``growth_interval`` good updates in a row.

        >>> s = GradScaler("cpu", init_scale=4.0, growth_interval=1)
        >>> s.update(); s.get_scale()
        8.0
        >>> s.update(new_scale=3.0); s.get_scale()
        3.0
        """
        if not self._enabled:
            return
        if new_scale is not None:
            if isinstance(new_scale, (int, float, numpy.number)) and not isinstance(
                    new_scale, bool):
                self._scale = _f32(new_scale)
            elif hasattr(new_scale, "shape") and numpy.size(new_scale) == 1 and \
                    numpy.dtype(new_scale.dtype).kind == "f" and not is_tracer(new_scale):
                self._scale = _f32(numpy.asarray(
                    new_scale.get() if hasattr(new_scale, "get") else new_scale).item())
            else:
                raise TypeError("new_scale should be a float or a 1-element float array, "
                                f"got {new_scale!r}")
        else:
            found = any(s.get("found_inf") for s in self._per_optimizer.values())
            if found:
                self._scale = _f32(self._scale * self._backoff_factor)
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    # PyTorch multiplies in float32 and keeps the old scale on overflow
                    grown = self._scale * self._growth_factor
                    if grown <= _F32_MAX:
                        self._scale = _f32(grown)
                    self._growth_tracker = 0
        self._per_optimizer = {}

    # -- checkpoints -----------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """PyTorch's keys (``{}`` when disabled).

        >>> GradScaler("cpu").state_dict()["scale"]
        65536.0
        """
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """Restore what :meth:`state_dict` returned.

        >>> s = GradScaler("cpu"); s.load_state_dict({"scale": 8.0, "growth_factor": 2.0,
        ...     "backoff_factor": 0.5, "growth_interval": 10, "_growth_tracker": 3})
        >>> s.get_scale(), s.get_growth_interval()
        (8.0, 10)
        """
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was "
                               "saved from a disabled instance of GradScaler.")
        self._scale = _f32(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])
        self._scale_used = None
