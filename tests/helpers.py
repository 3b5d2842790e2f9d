"""Shared test helpers: device handling, comparisons, and the op-table format.

Run the suite under the strict backend with ``FUNCGRAD_TEST_DEVICE=strict``: every input made
through :func:`dev` then lives on the strict test device, which (like CuPy) refuses implicit
conversion, so host/device mixing bugs fail loudly on a CPU machine.
"""

from __future__ import annotations

import builtins
import dataclasses
import json
import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

import funcgrad
from funcgrad.backend import to_numpy

# the transformations' view: a typed key array is its uint32 data here (dev moves it, host
# copies it back, assert_allclose compares it), as before keys became leaves
from funcgrad.tree_util import transforms as tree_util

DEVICE = os.environ.get("FUNCGRAD_TEST_DEVICE") or "cpu"  # as conftest.TEST_DEVICE (empty: cpu)
_ON_GPU = DEVICE.partition(":")[0].lower() in ("gpu", "cuda")

#: NumPy's floating-point RuntimeWarnings (log(0), 0/0, overflow...) that edge-case tests cause
#: on purpose, filtered there so that the test output shows only real problems.
expected_fp_warnings = pytest.mark.filterwarnings(
    r"ignore:(divide by zero|invalid value|overflow|underflow) encountered:RuntimeWarning",
    r"ignore:(All-NaN (slice|axis) encountered|Mean of empty slice|Degrees of freedom <= 0 "
    r"for slice):RuntimeWarning")


def dev(x: Any) -> Any:
    """Put a pytree of NumPy arrays on the test device (Python scalars stay scalars)."""

    def put(v: Any) -> Any:
        if isinstance(v, np.ndarray):
            return funcgrad.device_put(v, DEVICE)
        return v

    return tree_util.tree_map(put, x)


#: tolerance between two evaluation paths of the same arithmetic (a compiled step and the
#: eager loop): equal to the last bit or so on the CPU; GPU kernels contract multiply-adds
#: (FMA) where the other path does not, a few ulps apart
ON_GPU = _ON_GPU
SAME_ARITHMETIC: dict[str, float] = (
    {"rtol": 1e-12, "atol": 1e-15} if _ON_GPU else {"rtol": 1e-15, "atol": 0.0})


def skip_on_gpu(reason: str) -> None:
    """Skip where CuPy differs from NumPy by design (listed in docs/backends.md)."""
    if _ON_GPU:
        pytest.skip(f"on CuPy: {reason}")


def is_device_array(x: Any) -> bool:
    """An array on the test device (never a NumPy or Python scalar)."""
    from funcgrad.backend import canonical_device, device_of

    return device_of(x) == canonical_device(DEVICE)


def host(x: Any) -> Any:
    """A pytree of host NumPy values from any device."""
    return tree_util.tree_map(to_numpy, x)


def normal_sampler(rng: np.random.Generator, on_device: bool = False) -> Callable[..., Any]:
    """``rnd(*shape, dtype=float64)``: standard-normal arrays drawn from ``rng`` (on the test
    device with ``on_device``)."""

    def rnd(*shape: int, dtype: Any = np.float64) -> Any:
        x = rng.standard_normal(shape).astype(dtype)
        return dev(x) if on_device else x

    return rnd


def uniform_sampler(rng: np.random.Generator, on_device: bool = True) -> Callable[..., Any]:
    """``rnd(*shape, low=0.5, high=1.5)``: uniform arrays drawn from ``rng`` (away from zero,
    for functions with poles or logs), on the test device unless ``on_device=False``."""

    def rnd(*shape: int, low: float = 0.5, high: float = 1.5) -> Any:
        x = rng.uniform(low, high, shape)
        return dev(x) if on_device else x

    return rnd


def assert_close(a: Any, b: Any, rtol: float = 1e-10, atol: float = 1e-12, **kw: Any) -> None:
    """:func:`assert_allclose` with float64-tight tolerances and no dtype check."""
    assert_allclose(a, b, rtol=rtol, atol=atol, check_dtype=False, **kw)


def case_adder(cases: list, prefix: str = "") -> Callable[..., None]:
    """``case(name, fn, ref, args, **kw)`` appending ``OpCase(prefix + name, ...)`` to
    ``cases``: how the op-table modules declare their entries."""

    def case(name: str, fn: Any, ref: Any, args: Any, **kw: Any) -> None:
        cases.append(OpCase(prefix + name, fn, ref, args, **kw))

    return case


def check_device(x: Any) -> None:
    """Every array leaf of ``x`` lives on the test device (no silent host copies)."""
    for leaf in tree_util.tree_leaves(x):
        if isinstance(leaf, np.ndarray) and DEVICE != "cpu" and leaf.dtype != funcgrad.float0:
            raise AssertionError(f"result on host, expected device {DEVICE!r}: {leaf!r}")


def assert_allclose(
    actual: Any,
    desired: Any,
    rtol: float | None = None,
    atol: float | None = None,
    check_dtype: bool = True,
    err_msg: str = "",
) -> None:
    """Compare pytrees leaf by leaf: shapes, dtypes (optionally) and values.

    Tolerances default by dtype: 1e-12/1e-12 for float64, 2e-5/2e-5 for float32.
    """
    a_leaves, a_tree = tree_util.tree_flatten(host(actual))
    d_leaves, d_tree = tree_util.tree_flatten(host(desired))
    assert a_tree == d_tree, f"structure {a_tree} != {d_tree} {err_msg}"
    for a, d in zip(a_leaves, d_leaves):
        a_arr, d_arr = np.asarray(a), np.asarray(d)
        assert a_arr.shape == d_arr.shape, f"shape {a_arr.shape} != {d_arr.shape} {err_msg}"
        if check_dtype:
            assert a_arr.dtype == d_arr.dtype, f"dtype {a_arr.dtype} != {d_arr.dtype} {err_msg}"
        if a_arr.dtype == funcgrad.float0 or d_arr.dtype == funcgrad.float0:
            continue
        low = np.float32 in (a_arr.dtype, d_arr.dtype) or np.complex64 in (
            a_arr.dtype, d_arr.dtype) or np.float16 in (a_arr.dtype, d_arr.dtype)
        r = rtol if rtol is not None else (2e-5 if low else 1e-12)
        t = atol if atol is not None else (2e-5 if low else 1e-12)
        if low and _ON_GPU:  # cuSOLVER / CUDA's libm differ from LAPACK / libm in the last
            r, t = max(r, 2e-5), max(t, 2e-5)  # float32 bits, which host-tight tolerances flag
        if a_arr.dtype.kind in "biu" and d_arr.dtype.kind in "biu":
            np.testing.assert_array_equal(a_arr, d_arr, err_msg=err_msg)
        else:
            np.testing.assert_allclose(a_arr, d_arr, rtol=r, atol=t, err_msg=err_msg)


# ---------------------------------------------------------------------------------------------
# The op table format. One entry per public operation; tables live in tests/funcgrad/op_tables/
# and one set of drivers (forward vs NumPy, check_grads, vmap vs loop, jit vs eager) runs them.


@dataclasses.dataclass
class OpCase:
    """One operation under test.

    ``fn`` is the funcgrad function and ``ref`` the NumPy reference, both taking the same
    positional arrays (bake static options into lambdas). ``args`` are example argument
    tuples of NumPy arrays / Python scalars. ``order`` is the derivative order checked
    numerically (0: not differentiable, only the zero-tangent path is checked).
    ``grad_args`` replaces ``args`` for derivative checks when the op needs a smooth domain
    (away from kinks, ties and branch cuts). ``diff_argnums`` picks which arguments are
    differentiated (default: every float argument).
    """

    name: str
    fn: Callable[..., Any]
    ref: Callable[..., Any]
    args: Sequence[tuple]
    order: int = 2
    grad_args: Sequence[tuple] | None = None
    diff_argnums: tuple[int, ...] | None = None
    rtol: float | None = None
    atol: float | None = None
    grad_rtol: float | None = None
    grad_atol: float | None = None
    check_dtype: bool = True
    vmap: bool = True
    jit: bool = True

    def __repr__(self) -> str:
        return self.name


SHAPES: list[tuple[int, ...]] = [(), (3,), (2, 3)]
BROADCAST_PAIRS: list[tuple[tuple[int, ...], tuple[int, ...]]] = [
    ((2, 3), (2, 3)),
    ((), (3,)),
    ((3,), (2, 3)),
    ((2, 1), (1, 3)),
]


def rand(
    shape: tuple[int, ...],
    dtype: Any = np.float64,
    low: float = -2.0,
    high: float = 2.0,
    seed: int = 0,
) -> np.ndarray:
    """A deterministic random array in [low, high) (integers rounded), of ``dtype``."""
    rng = np.random.default_rng(seed + 7919 * len(shape) + sum(shape))
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return np.asarray(rng.random(shape) > 0.5)
    x = rng.uniform(low, high, size=shape)
    if dt.kind in "iu":
        x = np.round(x)
    if dt.kind == "c":
        x = x + 1j * rng.uniform(low, high, size=shape)
    return np.asarray(x, dtype=dt)


def unary_args(
    low: float = -2.0,
    high: float = 2.0,
    dtypes: Sequence[Any] = (np.float64, np.float32, np.int64),
    shapes: Sequence[tuple[int, ...]] = tuple(SHAPES),
    python_scalar: bool = True,
) -> list[tuple]:
    """Argument tuples for a unary op: every shape x dtype, plus a Python float."""
    out: list[tuple] = [(rand(s, d, low, high, seed=i),) for i, (s, d) in enumerate(
        (s, d) for d in dtypes for s in shapes)]
    if python_scalar:
        out.append((float(rand((), np.float64, low, high, seed=99)),))
    return out


def binary_args(
    low: float = -2.0,
    high: float = 2.0,
    dtypes: Sequence[Any] = (np.float64, np.float32),
    weak_scalars: bool = True,
    ints: bool = True,
) -> list[tuple]:
    """Argument tuples for a broadcasting binary op: broadcast pairs, mixed dtypes, and
    NEP 50 weak-scalar cases (float32 array with a Python float stays float32)."""
    out: list[tuple] = []
    for i, (sa, sb) in enumerate(BROADCAST_PAIRS):
        for d in dtypes:
            out.append((rand(sa, d, low, high, seed=i), rand(sb, d, low, high, seed=i + 50)))
    out.append((rand((3,), np.float32, low, high), rand((3,), np.float64, low, high, seed=3)))
    if weak_scalars:
        out.append((rand((2, 3), np.float32, low, high), 1.5))
        out.append((0.75, rand((3,), np.float32, low, high, seed=5)))
        out.append((rand((3,), np.float64, low, high, seed=8), 2))
    if ints:
        out.append((rand((2, 3), np.int64, low, high, seed=11),
                    rand((2, 3), np.float64, low, high, seed=12)))
    return out


def float_argnums(args: tuple) -> tuple[int, ...]:
    """Indices of the floating-point (differentiable) arguments in ``args``."""
    return tuple(
        i for i, a in enumerate(args)
        if isinstance(a, float) or (isinstance(a, np.ndarray | np.generic) and
                                    np.asarray(a).dtype.kind in "fc")
    )


def assert_like_recorded(expected: dict, call: Callable[[], Any]) -> None:
    """Replay a case recorded from the reference library (PyTorch): ``expected`` is
    ``{"raises": "ValueError"}`` (``call`` must raise that builtin type or a subclass of it) or
    ``{"value": ...}``, the JSON form of the result ``call`` must give."""
    if "raises" in expected:
        with pytest.raises(getattr(builtins, expected["raises"])):
            call()
    else:
        assert json.loads(json.dumps({"value": call()})) == expected
