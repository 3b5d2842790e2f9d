"""funcgrad: composable functional automatic differentiation on NumPy and CuPy arrays.

Example:
    >>> import funcgrad, funcgrad.numpy as fnp
    >>> float(funcgrad.grad(lambda x: fnp.sin(x) * x)(0.0))
    0.0
"""

from funcgrad import ad_checkpoint as ad_checkpoint
from funcgrad import config, custom_batching, custom_derivatives, flatten_util, lax, tree, tree_util
from funcgrad import debug as debug
from funcgrad import dtypes as dtypes
from funcgrad import experimental as experimental
from funcgrad import export as export
from funcgrad import image as image
from funcgrad import nn as nn
from funcgrad import numpy as numpy  # installs tracer operators/methods; fnp namespace
from funcgrad import ops as _ops  # noqa: F401  (registers every primitive)
from funcgrad import profiler as profiler
from funcgrad import random as random
from funcgrad import sharding as sharding
from funcgrad import typing as typing
from funcgrad import viz as viz
from funcgrad._cache import clear_all as _clear_all
from funcgrad.api import (
    closure_convert,
    elementwise_grad,
    fwd_and_bwd,
    grad,
    hessian,
    hvp,
    jacfwd,
    jacobian,
    jacrev,
    jvp,
    linear_transpose,
    linearize,
    make_jaxpr,
    typeof,
    value_and_grad,
    vhp,
    vjp,
)
from funcgrad.api_devices import (
    block_until_ready,
    copy_to_host_async,
    device_get,
    device_put,
    effects_barrier,
    print_environment_info,
    transfer_guard,
    transfer_guard_device_to_device,
    transfer_guard_device_to_host,
    transfer_guard_host_to_device,
)
from funcgrad.api_jit import (
    RetraceWarning,
    compiled_source,
    disable_jit,
    eval_shape,
    explain_cache_misses,
    jit,
    log_compiles,
    no_tracing,
)
from funcgrad.api_pmap import pmap
from funcgrad.api_scopes import ensure_compile_time_eval, named_call, named_scope
from funcgrad.api_shard_map import shard_map, smap
from funcgrad.api_taylor import derivatives, divergence, jet, laplacian, taylor_coefficients
from funcgrad.api_vmap import vmap
from funcgrad.avals import ShapedArray, ShapeDtypeStruct, float0
from funcgrad.backend import (
    Device,
    default_backend,
    default_device,
    device_count,
    devices,
    local_device_count,
    local_devices,
    process_count,
    process_index,
    process_indices,
    to_numpy,
)
from funcgrad.config import (
    check_tracer_leaks,
    checking_leaks,
    default_matmul_precision,
    enable_checks,
    enable_x64,
    numpy_dtype_promotion,
    numpy_rank_promotion,
)
from funcgrad.custom_derivatives import custom_gradient
from funcgrad.debug import debug_infs, debug_nans
from funcgrad.errors import (
    ArgumentMismatchError,
    ConcretizationError,
    DeviceMismatchError,
    DTypeError,
    MissingRuleError,
    ShapeError,
    TracerMutationError,
    UnexpectedTracerError,
)
from funcgrad.lax import stop_gradient
from funcgrad.ops.control_flow import cond, fori_loop, map, scan, switch, while_loop
from funcgrad.ops.custom_derivatives import custom_jvp, custom_vjp
from funcgrad.ops.pure_callback import pure_callback
from funcgrad.ops.remat import checkpoint, checkpoint_name, checkpoint_policies, remat
from funcgrad.random import debug_key_reuse
from funcgrad.sharding import (
    NamedSharding,
    make_array_from_callback,
    make_array_from_process_local_data,
    make_array_from_single_device_arrays,
    make_mesh,
    reshard,
    set_mesh,
)
from funcgrad.sharding import PartitionSpec as P
from funcgrad.typing import Array

__version__ = "0.1.0"


def clear_caches() -> None:
    """Empty funcgrad's caches of traced and compiled programs (``jax.clear_caches``): every
    ``jit`` traces again on its next call, and memory held by compiled programs is released.

    Example:
        >>> import funcgrad
        >>> f = funcgrad.jit(lambda x: x * 2)
        >>> _ = f(1.0); funcgrad.clear_caches(); f._cache_size()
        0
    """
    _clear_all()


__all__ = [
    "jet",
    "derivatives",
    "taylor_coefficients",
    "laplacian",
    "divergence",
    "grad",
    "value_and_grad",
    "jvp",
    "vjp",
    "fwd_and_bwd",
    "linearize",
    "make_jaxpr",
    "closure_convert",
    "jit",
    "disable_jit",
    "explain_cache_misses",
    "log_compiles",
    "no_tracing",
    "ensure_compile_time_eval",
    "named_scope",
    "named_call",
    "block_until_ready",
    "copy_to_host_async",
    "device_get",
    "typeof",
    "eval_shape",
    "compiled_source",
    "RetraceWarning",
    "linear_transpose",
    "jacfwd",
    "jacrev",
    "jacobian",
    "hessian",
    "hvp",
    "vhp",
    "elementwise_grad",
    "custom_jvp",
    "custom_vjp",
    "custom_gradient",
    "custom_derivatives",
    "custom_batching",
    "cond",
    "switch",
    "while_loop",
    "fori_loop",
    "scan",
    "map",
    "lax",
    "random",
    "vmap",
    "pmap",
    "stop_gradient",
    "pure_callback",
    "debug",
    "debug_infs",
    "debug_nans",
    "debug_key_reuse",
    "export",
    "profiler",
    "viz",
    "checkpoint",
    "remat",
    "checkpoint_name",
    "checkpoint_policies",
    "tree",
    "tree_util",
    "flatten_util",
    "config",
    "dtypes",
    "clear_caches",
    "default_matmul_precision",
    "enable_x64",
    "enable_checks",
    "checking_leaks",
    "check_tracer_leaks",
    "numpy_dtype_promotion",
    "numpy_rank_promotion",
    "devices",
    "device_count",
    "local_devices",
    "local_device_count",
    "default_backend",
    "process_index",
    "process_count",
    "process_indices",
    "Device",
    "Array",
    "typing",
    "nn",
    "ad_checkpoint",
    "device_put",
    "effects_barrier",
    "print_environment_info",
    "transfer_guard",
    "transfer_guard_host_to_device",
    "transfer_guard_device_to_host",
    "transfer_guard_device_to_device",
    "sharding",
    "shard_map",
    "smap",
    "make_mesh",
    "set_mesh",
    "reshard",
    "NamedSharding",
    "P",
    "make_array_from_callback",
    "make_array_from_process_local_data",
    "make_array_from_single_device_arrays",
    "default_device",
    "to_numpy",
    "ShapedArray",
    "ShapeDtypeStruct",
    "float0",
    "ArgumentMismatchError",
    "ConcretizationError",
    "DeviceMismatchError",
    "DTypeError",
    "MissingRuleError",
    "ShapeError",
    "TracerMutationError",
    "UnexpectedTracerError",
]
