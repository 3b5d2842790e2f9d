"""``funcgrad_nn.autograd``: PyTorch's autograd toolbox over funcgrad's functional core.

- :class:`Function` (custom forward/backward with a ``ctx``), :func:`once_differentiable`;
- grad modes: :class:`no_grad`, :class:`enable_grad`, :class:`set_grad_enabled`,
  :class:`inference_mode`, :func:`is_grad_enabled`;
- :mod:`functional` (``jacobian``, ``hessian``, ``vjp``, ``jvp``, ``hvp``, ``vhp``),
  :func:`gradcheck`, :func:`gradgradcheck`;
- anomaly detection: :class:`detect_anomaly`, :func:`set_detect_anomaly`;
- ``profiler``: :mod:`funcgrad.profiler` (``profile``, ``record_function``);
- :mod:`forward_ad` (``dual_level``, ``make_dual``, ``unpack_dual``);
- :mod:`graph` (``saved_tensors_hooks``, ``save_on_cpu``, ``disable_saved_tensors_hooks``:
  pack/unpack hooks on what a custom ``Function`` saves for its backward).

Example:
    >>> import funcgrad, funcgrad_nn as nn
    >>> def f(x):
    ...     with nn.autograd.no_grad():
    ...         c = x * 2.0
    ...     return c * x
    >>> float(funcgrad.grad(f)(1.5))
    3.0
"""

from funcgrad import profiler  # torch.autograd.profiler's place: profile, record_function
from funcgrad_nn.autograd import forward_ad, functional, graph
from funcgrad_nn.autograd.anomaly import (
    detect_anomaly,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_detect_anomaly,
)
from funcgrad_nn.autograd.function import Function, FunctionCtx, once_differentiable
from funcgrad_nn.autograd.functional import GradcheckError, gradcheck, gradgradcheck
from funcgrad_nn.autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)

__all__ = [
    "Function", "FunctionCtx", "once_differentiable", "functional", "forward_ad", "graph",
    "gradcheck",
    "gradgradcheck", "GradcheckError", "no_grad", "enable_grad", "set_grad_enabled",
    "inference_mode", "is_grad_enabled", "is_inference_mode_enabled", "detect_anomaly",
    "set_detect_anomaly", "is_anomaly_enabled", "is_anomaly_check_nan_enabled", "profiler",
]

# PyTorch's tape entry points have no counterpart here (no graph is recorded on arrays); a
# ported program asking for them gets told what to call instead.
_TAPE_NAMES = {
    "grad": "funcgrad.grad(f)(x) for gradients, or out, vjp_fn = funcgrad.vjp(f, *inputs); "
            "vjp_fn(grad_outputs) for torch.autograd.grad(outputs, inputs, grad_outputs)",
    "backward": "grads = funcgrad_nn.grad(loss_fn)(model, ...) (or funcgrad.grad) instead of "
                "loss.backward() and .grad",
    "Variable": "plain arrays (numpy/cupy); differentiate functions of them with funcgrad.grad",
}


def __getattr__(name: str) -> object:
    if name in _TAPE_NAMES:
        raise AttributeError(
            f"funcgrad_nn.autograd has no {name!r}: funcgrad records no graph on arrays, so "
            f"there is no tape to run backward on. Use {_TAPE_NAMES[name]} (docs/autograd.md, "
            "'Tensor-graph idioms').")
    raise AttributeError(f"module 'funcgrad_nn.autograd' has no attribute {name!r}")
