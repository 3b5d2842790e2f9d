"""Where arrays live: ``device_put``/``device_get``, ``block_until_ready``, the transfer
guards, ``effects_barrier`` and ``print_environment_info`` (the device-facing part of JAX's
top-level API).

Example:
    >>> import numpy as np, funcgrad
    >>> funcgrad.device_get(funcgrad.device_put(np.ones(2))).tolist()
    [1.0, 1.0]
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import logging
import platform
import sys
from collections.abc import Iterator
from typing import Any

import numpy

from funcgrad import backend, config, sharding
from funcgrad.avals import get_aval
from funcgrad.core import Tracer
from funcgrad.ops import elementwise as _ew
from funcgrad.tree_util import transforms as tree_util  # keys are nodes here

__all__ = [
    "device_put", "device_get", "block_until_ready", "copy_to_host_async", "effects_barrier",
    "print_environment_info", "transfer_guard", "transfer_guard_host_to_device",
    "transfer_guard_device_to_host", "transfer_guard_device_to_device",
]


_DIRECTIONS = ("host_to_device", "device_to_host", "device_to_device")


@contextlib.contextmanager
def _guarded(directions: tuple[str, ...], new_val: str) -> Iterator[None]:
    if new_val not in config.TRANSFER_GUARD_LEVELS:
        raise ValueError(f"transfer_guard: the level must be one of "
                         f"{config.TRANSFER_GUARD_LEVELS}, got {new_val!r}")
    levels = dict(config.transfer_guard_level.get())
    levels.update((d, new_val) for d in directions)
    token = config.transfer_guard_level.set(tuple(levels.items()))
    try:
        yield
    finally:
        config.transfer_guard_level.reset(token)


def _guard_flag(directions: tuple[str, ...]) -> tuple[Any, Any]:
    """(read, write) of JAX's flag for ``directions`` (``jax_transfer_guard`` and its
    one-direction forms): the level from now on in this context; read: the level, or None
    when the directions differ."""
    def read() -> str | None:
        levels = dict(config.transfer_guard_level.get())
        found = {levels.get(d, "allow") for d in directions}
        return found.pop() if len(found) == 1 else None

    def write(value: Any) -> None:
        value = "allow" if value is None else value
        if value not in config.TRANSFER_GUARD_LEVELS:
            raise ValueError(f"jax_transfer_guard: the level must be one of "
                             f"{config.TRANSFER_GUARD_LEVELS}, got {value!r}")
        levels = dict(config.transfer_guard_level.get())
        levels.update((d, value) for d in directions)
        config.transfer_guard_level.set(tuple(levels.items()))
    return read, write


config.register_flag("jax_transfer_guard", *_guard_flag(_DIRECTIONS))
for _d in _DIRECTIONS:
    config.register_flag(f"jax_transfer_guard_{_d}", *_guard_flag((_d,)))


def transfer_guard(new_val: str) -> Any:
    """Guard transfers between host and devices in the ``with`` block (``jax.transfer_guard``;
    levels ``"allow"``, ``"log"``, ``"disallow"``, ``"log_explicit"``,
    ``"disallow_explicit"``). The one implicit transfer is a NumPy array copied to the device
    of the arrays it meets in an operation (JAX's uncommitted NumPy inputs:
    ``core.place_uncommitted``): ``"log"`` logs it and ``"disallow"`` refuses it with a
    ``RuntimeError``; the ``*_explicit`` levels also log or refuse ``device_put`` /
    ``device_get`` between different devices.

    Example:
        >>> import numpy as np, funcgrad
        >>> with funcgrad.transfer_guard("disallow"):
        ...     funcgrad.device_put(np.ones(2), "cpu").tolist()  # no transfer: same device
        [1.0, 1.0]
    """
    return _guarded(_DIRECTIONS, new_val)


def transfer_guard_host_to_device(new_val: str) -> Any:
    """:func:`transfer_guard` for host-to-device transfers only.

    Example:
        >>> import funcgrad
        >>> with funcgrad.transfer_guard_host_to_device("log_explicit"):
        ...     pass
    """
    return _guarded(("host_to_device",), new_val)


def transfer_guard_device_to_host(new_val: str) -> Any:
    """:func:`transfer_guard` for device-to-host transfers only.

    Example:
        >>> import funcgrad
        >>> with funcgrad.transfer_guard_device_to_host("allow"):
        ...     pass
    """
    return _guarded(("device_to_host",), new_val)


def transfer_guard_device_to_device(new_val: str) -> Any:
    """:func:`transfer_guard` for device-to-device transfers only.

    Example:
        >>> import funcgrad
        >>> with funcgrad.transfer_guard_device_to_device("disallow"):
        ...     pass
    """
    return _guarded(("device_to_device",), new_val)


def _check_transfer(src: str | None, dst: str | None) -> None:
    """Apply the explicit transfer guard to a ``device_put``/``device_get`` from ``src`` to
    ``dst`` (device names; None: a Python value, host-side)."""
    levels = config.transfer_guard_level.get()
    if not levels:
        return
    src, dst = src or "cpu", dst or "cpu"
    if src == dst:
        return
    direction = ("host_to_device" if src == "cpu" else
                 "device_to_host" if dst == "cpu" else "device_to_device")
    level = dict(levels).get(direction)
    if level == "disallow_explicit":
        raise RuntimeError(f"Disallowed {direction.replace('_', '-')} transfer from {src!r} "
                           f"to {dst!r} (funcgrad.transfer_guard('disallow_explicit'))")
    if level == "log_explicit":
        logging.getLogger("funcgrad").warning("explicit %s transfer from %r to %r",
                                              direction.replace("_", "-"), src, dst)


def device_put(x: Any, device: Any = None, *, src: Any = None, donate: bool = False,
               may_alias: bool | None = None) -> Any:
    """Copy an array, or every array of a pytree, to ``device`` ("cpu", "gpu" or "strict";
    the default device when None). Traced values (under ``jit``, ``vmap``, ``grad``) move
    too, as an operation of the program (JAX's ``device_put`` primitive), unless no device
    is named.

    As in JAX, ``device`` may also be a :class:`~funcgrad.sharding.Sharding` (or a
    :class:`~funcgrad.sharding.PartitionSpec` over the current mesh), or a pytree prefix of
    them: the layout is checked against each array's shape (a split dimension must divide
    evenly) and the array goes to the mesh's device -- one device per platform, so nothing is
    split. ``src``, ``donate`` and ``may_alias`` are accepted as JAX's (a copy is made only
    when the device changes).

    Example:
        >>> import numpy as np, funcgrad
        >>> y = funcgrad.device_put({"w": np.ones(2)}, "strict")
        >>> type(y["w"]).__name__
        'StrictArray'
    """
    del src, donate, may_alias
    if device is None or isinstance(device, str):
        return tree_util.tree_map(lambda v: _put(v, device), x)
    def is_target(d: Any) -> bool:
        return d is None or isinstance(d, str | sharding.Sharding | sharding.PartitionSpec)

    leaves, tree = tree_util.tree_flatten(x)
    targets = tree_util.broadcast_prefix(device, x, is_leaf=is_target)
    out = []
    for v, d in zip(leaves, targets):
        if isinstance(d, sharding.PartitionSpec):
            mesh = sharding.get_mesh()
            if mesh is None:
                raise ValueError("device_put: a PartitionSpec needs a mesh: pass "
                                 "NamedSharding(mesh, spec) or use funcgrad.set_mesh(mesh)")
            d = sharding.NamedSharding(mesh, d)
        if isinstance(d, sharding.Sharding):
            d.check_shape(numpy.shape(v) if not hasattr(v, "shape") else v.shape)
            d = d._device()
        elif d is not None and not isinstance(d, str):
            raise TypeError(f"device_put: device must be a device name, a Sharding or a "
                            f"PartitionSpec, got {type(d).__name__}")
        out.append(_put(v, d))
    return tree.unflatten(out)


def _put(v: Any, device: str | None) -> Any:
    if isinstance(v, Tracer):
        if device is None:
            return v  # no device named: a traced value stays where it is (as under JAX's jit)
        # Under jit/vmap/grad the move is an operation of the program (JAX's device_put
        # primitive): the result lives on `device`, and its cotangent goes back.
        device = backend.canonical_device(device)
        return v if v.aval.device == device else _ew.device_put(v, device)
    if not isinstance(v, Tracer):
        try:
            get_aval(v)  # as JAX's: a string, bytes or an object array is no array
        except TypeError as e:
            raise TypeError(f"device_put: {e}") from None
    if config.transfer_guard_level.get() and not isinstance(v, Tracer):
        _check_transfer(backend.device_of(v),
                        backend.canonical_device(device) if device else
                        backend.default_backend())
    return backend.device_put(v, device)


def device_get(x: Any) -> Any:
    """Every array of the pytree ``x`` as a host NumPy array (copied from the device where
    it lives on one); other leaves (Python numbers, strings) as they are. As
    ``jax.device_get``.

    Example:
        >>> import numpy as np, funcgrad
        >>> funcgrad.device_get({"w": funcgrad.device_put(np.ones(2), "strict"), "n": 3})
        {'n': 3, 'w': array([1., 1.])}
    """
    def get(v: Any) -> Any:
        if not backend.is_array(v):
            return v
        if config.transfer_guard_level.get():
            _check_transfer(backend.device_of(v), "cpu")
        return backend.to_numpy(v)

    return tree_util.tree_map(get, x)


def block_until_ready(x: Any) -> Any:
    """``x`` (any pytree), once every array in it is computed: waits for the GPU's queued
    work when an array lives there (NumPy computes before returning). As
    ``jax.block_until_ready``, for timing code.

    Example:
        >>> import numpy as np, funcgrad
        >>> funcgrad.block_until_ready({"y": np.ones(2)})["y"].tolist()
        [1.0, 1.0]
    """
    for leaf in tree_util.tree_leaves(x):
        if backend.device_of(leaf) == "gpu":
            backend.xp_for_device("gpu").cuda.get_current_stream().synchronize()
            break
    return x


def copy_to_host_async(x: Any) -> Any:
    """``x`` (any pytree), with a host copy of each leaf that has a ``copy_to_host_async``
    method started, as ``jax.copy_to_host_async``; other leaves (NumPy arrays, which are on
    the host already, CuPy arrays, scalars) are left as they are, as JAX leaves leaves
    without the method.

    Example:
        >>> import numpy as np, funcgrad
        >>> funcgrad.copy_to_host_async({"y": np.ones(2)})["y"].tolist()
        [1.0, 1.0]
    """
    for leaf in tree_util.tree_leaves(x):
        start = getattr(leaf, "copy_to_host_async", None)
        if callable(start):
            start()
    return x


def effects_barrier() -> None:
    """Wait until every effect (``io_callback``, ``debug.print``/``callback``) of the
    computations started so far has run (``jax.effects_barrier``): funcgrad runs them in
    program order as each call executes, so they have.

    Example:
        >>> import funcgrad
        >>> funcgrad.effects_barrier()
    """


def _installed(dist: str) -> bool:
    try:
        importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def print_environment_info(return_string: bool = False) -> str | None:
    """funcgrad's version, its array libraries and devices, Python and the platform, as
    ``jax.print_environment_info`` (for bug reports).

    Example:
        >>> import funcgrad
        >>> "funcgrad:" in funcgrad.print_environment_info(return_string=True)
        True
    """
    try:
        version = importlib.metadata.version("funcgrad")
    except importlib.metadata.PackageNotFoundError:  # run from a source tree
        version = "(not installed)"
    try:
        cupy_version = importlib.metadata.version("cupy-cuda12x")
    except importlib.metadata.PackageNotFoundError:
        cupy_version = next((importlib.metadata.version(n) for n in ("cupy-cuda13x", "cupy")
                             if _installed(n)), "not installed")
    lines = [f"funcgrad: {version}", f"numpy:    {numpy.__version__}",
             f"cupy:     {cupy_version}",
             f"python:   {sys.version}",
             f"devices:  {backend.available_devices()} (default: {backend.default_backend()})",
             "process_count: 1", f"platform: {platform.uname()}"]
    text = "\n".join(lines)
    if return_string:
        return text
    print(text)
    return None
