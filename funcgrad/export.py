"""Saving a jitted function's program to a file and loading it back, as ``jax.export``.

``export(f)(*example_args)`` traces ``f`` (jitted; static arguments are baked in) to its
closed jaxpr for those argument types and gives an :class:`Exported`: call it (``.call`` or
directly) with arguments of those types, ``serialize()`` it to bytes, and
:func:`deserialize` them back. :func:`save` / :func:`load` do the same through a file. The
file is JSON (no pickle, nothing executed when reading): constants as raw bytes in base64 with
their dtype and shape, every primitive by name with its params written by type
(:mod:`funcgrad.jaxpr_codec`), nested programs (``cond``, ``scan``, ``while_loop``,
``checkpoint``, inner ``jit``, ``custom_jvp``/``custom_vjp`` functions with their rules) in
place, and a format version.

A loaded program is an ordinary funcgrad function: calling it binds the ``jit`` call primitive
on the loaded jaxpr, so it runs compiled code and composes with ``grad``, ``jvp``, ``vmap`` and
``jit`` like any jitted function.

Example:
    >>> import os, tempfile, numpy as np, funcgrad, funcgrad.numpy as fnp
    >>> def f(w, x):
    ...     return fnp.tanh(x @ w).sum()
    >>> path = os.path.join(tempfile.mkdtemp(), "f.json")
    >>> funcgrad.export.save(f, path, np.ones((3, 2)), np.ones((4, 3)))
    >>> g = funcgrad.export.load(path)
    >>> w, x = np.full((3, 2), 0.1), np.ones((4, 3))
    >>> bool(np.allclose(g(w, x), f(w, x)))
    True
    >>> bool(np.allclose(funcgrad.grad(g)(w, x), funcgrad.grad(f)(w, x)))
    True
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Sequence
from typing import Any

from funcgrad import stages
from funcgrad.api import vjp as _vjp
from funcgrad.api_jit import Jitted, jit
from funcgrad.avals import ShapedArray
from funcgrad.backend import get_default_device, platform_name
from funcgrad.ir import ClosedJaxpr, typecheck_jaxpr
from funcgrad.jaxpr_codec import (
    ExportError,
    decode_closed_jaxpr,
    decode_treedef,
    encode_closed_jaxpr,
    encode_treedef,
    register_namedtuple_serialization,
    register_pytree_node_serialization,
)
from funcgrad.ops.jit import call_jaxpr
from funcgrad.tree_util import transforms as tree_util  # keys are nodes here

__all__ = ["Exported", "export", "deserialize", "save", "load", "ExportError",
           "ExportedCallError", "DisabledSafetyCheck", "default_export_platform", "register_pytree_node_serialization",
           "register_namedtuple_serialization", "FORMAT", "VERSION",
           "minimum_supported_calling_convention_version",
           "maximum_supported_calling_convention_version"]

#: What the ``format`` field of every file holds.
FORMAT = "funcgrad.export"
#: The version of the file layout this funcgrad writes (and the only one it reads).
VERSION = 1
#: JAX's names for the range of versions :func:`deserialize` reads: funcgrad's file layout
#: versions (JAX's count StableHLO calling conventions, 9 to 10 in JAX 0.10.2).
minimum_supported_calling_convention_version = VERSION
maximum_supported_calling_convention_version = VERSION


class ExportedCallError(TypeError, ValueError):
    """An :class:`Exported` called with arguments of another structure, shape or dtype than it
    was exported for: a ``ValueError`` as JAX's ``Exported.call`` raises, and a ``TypeError``
    as a ``Compiled`` called so raises."""


class DisabledSafetyCheck:
    """A safety check :func:`export` is asked to skip (``jax.export.DisabledSafetyCheck``):
    ``DisabledSafetyCheck.platform()`` or ``.custom_call(target_name)``. Accepted for JAX
    compatibility; a funcgrad export makes no such check (it runs where its arguments are and
    holds no custom calls), so nothing is skipped.

    Example:
        >>> DisabledSafetyCheck.platform(), DisabledSafetyCheck.custom_call("lapack").is_custom_call()
        (platform, 'lapack')
    """

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    @classmethod
    def platform(cls) -> DisabledSafetyCheck:
        """Skip the check that the program runs on the platform it was exported for."""
        return cls("platform")

    @classmethod
    def custom_call(cls, target_name: str) -> DisabledSafetyCheck:
        """Allow the custom call ``target_name``."""
        return cls("custom_call:" + target_name)

    def is_custom_call(self) -> str | None:
        """The custom call's target name, or ``None`` for another check."""
        return self._name[len("custom_call:"):] if self._name.startswith("custom_call:") \
            else None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DisabledSafetyCheck) and other._name == self._name

    def __hash__(self) -> int:
        return hash(self._name)

    def __repr__(self) -> str:
        return self._name


def default_export_platform() -> str:
    """The platform :func:`export` writes for by default: the default device's (``"cpu"`` or
    ``"cuda"``), as ``jax.export.default_export_platform``.

    Example:
        >>> import funcgrad
        >>> with funcgrad.default_device("cpu"):
        ...     default_export_platform()
        'cpu'
    """
    return platform_name(get_default_device())


class Exported:
    """A program exported for one argument signature (see :func:`export`).

    Call it (or ``.call(...)``) with the non-static arguments: of the exported shapes and
    dtypes (checked, a mismatch is an :class:`ExportedCallError`, a ``ValueError`` as JAX's and a
    ``TypeError``, naming the argument), in the same pytree structure. ``fun_name``,
    ``in_tree``/``out_tree`` (``in_tree`` is that of ``(args_tuple, kwargs)``),
    ``in_avals``/``out_avals`` (tuples), ``in_info``/``out_info`` (``ShapeDtypeStruct``
    pytrees), ``platforms``, ``nr_devices`` and ``jaxpr`` describe it; ``serialize()`` writes
    it. Unlike JAX's, it is also differentiable to any order and batchable (``vmap``).

    Example:
        >>> import numpy as np, funcgrad
        >>> exp = funcgrad.export.export(lambda x: x * 2.0)(np.ones(3, np.float32))
        >>> exp.in_avals, exp.out_info
        ((ShapedArray(float32[3], device='cpu'),), ShapeDtypeStruct(shape=(3,), dtype=float32))
        >>> again = funcgrad.export.deserialize(exp.serialize())
        >>> again(np.arange(3, dtype=np.float32)).tolist()
        [0.0, 2.0, 4.0]
    """

    __slots__ = ("fun_name", "jaxpr", "in_tree", "out_tree", "arg_labels", "_in_tree_data",
                 "_data")

    def __init__(self, fun_name: str, jaxpr: ClosedJaxpr, in_tree: Any, out_tree: Any,
                 arg_labels: list[str], data: dict[str, Any] | None = None) -> None:
        self.fun_name = fun_name
        self.jaxpr = jaxpr
        self.in_tree = in_tree
        self.out_tree = out_tree
        self.arg_labels = list(arg_labels)
        self._in_tree_data = encode_treedef(in_tree)
        if data is None:
            # Written now, so that what cannot be exported is an error here, naming the
            # primitive, and not later at save time.
            data = {
                "format": FORMAT,
                "version": VERSION,
                "fun_name": fun_name,
                "in_tree": self._in_tree_data,
                "out_tree": encode_treedef(out_tree),
                "arg_labels": self.arg_labels,
                "jaxpr": encode_closed_jaxpr(jaxpr),
            }
        self._data = data

    @property
    def in_avals(self) -> tuple[ShapedArray, ...]:
        """The abstract value of each argument leaf."""
        return tuple(self.jaxpr.in_avals)

    @property
    def out_avals(self) -> tuple[ShapedArray, ...]:
        """The abstract value of each result leaf."""
        return tuple(self.jaxpr.out_avals)

    @property
    def platforms(self) -> tuple[str, ...]:
        """The platform the program was exported on (``("cpu",)`` or ``("cuda",)``); it runs
        wherever its arguments are."""
        devices = {platform_name(a.device) for a in self.jaxpr.in_avals if a.device}
        return tuple(sorted(devices)) or (default_export_platform(),)

    @property
    def nr_devices(self) -> int:
        """The number of devices the program runs on (always 1: no sharding)."""
        return 1

    @property
    def ordered_effects(self) -> tuple:
        """JAX's effects of the program: none (host callbacks cannot be exported)."""
        return ()

    unordered_effects = ordered_effects

    @property
    def calling_convention_version(self) -> int:
        """The version of the file layout the program was written in (JAX's attribute: a
        funcgrad export has its own layout, so this is :data:`VERSION`, within
        ``[minimum_supported_calling_convention_version,
        maximum_supported_calling_convention_version]``)."""
        return int(self._data.get("version", VERSION))

    @property
    def uses_global_constants(self) -> bool:
        """JAX's flag for programs whose shapes depend on symbolic dimensions: always False
        (funcgrad exports concrete shapes)."""
        return False

    @property
    def disabled_safety_checks(self) -> tuple:
        """JAX's disabled safety checks: none (a funcgrad export makes none to disable)."""
        return ()

    def vjp(self) -> Exported:
        """The program's VJP as an :class:`Exported`, as JAX's ``Exported.vjp()``: called with
        the argument leaves then the result cotangent leaves (flat), it gives the argument
        cotangents as a tuple of leaves.

        Example:
            >>> import numpy as np, funcgrad, funcgrad.numpy as fnp
            >>> exp = funcgrad.export.export(fnp.sin)(np.zeros(2))
            >>> exp.vjp()(np.zeros(2), np.ones(2))[0].tolist()
            [1.0, 1.0]
        """
        n_in = len(self.jaxpr.in_avals)
        jaxpr, name = self.jaxpr, self.fun_name

        def fun_vjp_jax(*primals_and_cts: Any) -> tuple:
            primals, cts = primals_and_cts[:n_in], primals_and_cts[n_in:]
            _, pull = _vjp(lambda *xs: tuple(call_jaxpr(jaxpr, *xs, name=name)), *primals)
            return tuple(pull(tuple(cts)))

        avals = [*self.jaxpr.in_avals, *self.jaxpr.out_avals]
        return export(fun_vjp_jax)(*[stages.ShapeDtypeStruct(a.shape, a.dtype) for a in avals])

    def has_vjp(self) -> bool:
        """Whether the program can be differentiated after :func:`deserialize`: always (the
        whole program is written, derivatives are taken of it as of any function)."""
        return True

    @property
    def in_info(self) -> Any:
        """``(args, kwargs)`` with a ``ShapeDtypeStruct`` per array."""
        return stages.out_info(self.in_tree, self.jaxpr.in_avals)

    @property
    def out_info(self) -> Any:
        """The results' structure with a ``ShapeDtypeStruct`` per array."""
        return stages.out_info(self.out_tree, self.jaxpr.out_avals)

    def call(self, *args: Any, **kwargs: Any) -> Any:
        """Run the exported program on ``args`` (differentiable, batchable, jit-able)."""
        what = f"exported {self.fun_name}"
        _, tree = tree_util.tree_flatten((tuple(args), dict(kwargs)))
        try:
            same = encode_treedef(tree) == self._in_tree_data
        except ExportError:
            same = False
        leaves = stages.check_call_args(what, tree if same else self.in_tree,
                                        self.jaxpr.in_avals, self.arg_labels, args, kwargs,
                                        error=ExportedCallError)
        outs = call_jaxpr(self.jaxpr, *leaves, name=self.fun_name)
        return tree_util.tree_unflatten(self.out_tree, outs)

    __call__ = call

    def serialize(self, vjp_order: int = 0) -> bytes:
        """The program as UTF-8 JSON bytes (read back with :func:`deserialize`).
        ``vjp_order`` (JAX's) is accepted: the program is written whole, so the function read
        back is differentiable to any order whatever it is."""
        if not isinstance(vjp_order, int) or vjp_order < 0:
            raise ValueError(f"serialize: vjp_order must be an int >= 0, got {vjp_order!r}")
        return json.dumps(self._data, separators=(",", ":")).encode("utf-8")

    def __repr__(self) -> str:
        return (f"Exported({self.fun_name}: "
                f"{[a.str_short() for a in self.jaxpr.in_avals]} -> "
                f"{[a.str_short() for a in self.jaxpr.out_avals]})")


def export(fun: Callable[..., Any], *, platforms: Sequence[str] | None = None,
           disabled_checks: Sequence[Any] = ()) -> Callable[..., Exported]:
    """``export(fun)(*args, **kwargs)``: ``fun`` traced for these argument types, as an
    :class:`Exported`. ``fun`` may be jitted (its static arguments are then baked in and left
    out when calling the result) or not (it is jitted here). Arguments may be arrays, scalars
    or stand-ins (:class:`~funcgrad.ShapeDtypeStruct`). Raises :class:`ExportError` naming the
    primitive when the program holds something that cannot be written (a Python callback, a
    custom rule that cannot be traced). ``platforms`` (JAX's) may name only the platform of the
    arguments (the program runs where its arguments are); ``disabled_checks`` (a list of
    :class:`DisabledSafetyCheck`) is accepted and changes nothing (there are no such checks).

    Example:
        >>> import numpy as np, funcgrad
        >>> f = funcgrad.jit(lambda x, n: x ** n, static_argnums=1)
        >>> exp = funcgrad.export.export(f)(funcgrad.ShapeDtypeStruct((2,), np.float64), 3)
        >>> exp(np.full(2, 2.0)).tolist()
        [8.0, 8.0]
    """
    jitted = fun if isinstance(fun, Jitted) else jit(fun)
    for check in disabled_checks:
        if not isinstance(check, DisabledSafetyCheck):
            raise TypeError(f"export(disabled_checks=...): expected DisabledSafetyCheck values, "
                            f"got {type(check).__name__} {check!r}")

    def trace_and_export(*args: Any, **kwargs: Any) -> Exported:
        traced = jitted.trace(*args, **kwargs)
        if platforms is not None:
            traced.lower(lowering_platforms=platforms)
        return Exported(traced.fun_name, traced.jaxpr, traced.in_tree, traced.out_tree,
                        list(traced.arg_labels))

    return trace_and_export


def deserialize(blob: bytes | bytearray | str) -> Exported:
    """The :class:`Exported` that :meth:`Exported.serialize` wrote. Raises
    :class:`ExportError` when ``blob`` is not a funcgrad export of this format version, names
    a primitive this funcgrad does not have, or is malformed.

    Example:
        >>> deserialize(b'{"format": "funcgrad.export", "version": 99}')
        Traceback (most recent call last):
        ...
        funcgrad.jaxpr_codec.ExportError: this file has funcgrad export format version 99; \
this funcgrad reads version 1 (export it again with this version)
    """
    try:
        data = json.loads(blob)
    except (ValueError, UnicodeDecodeError) as e:
        raise ExportError(f"not a funcgrad export: not JSON ({e})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ExportError(f"not a funcgrad export: no \"format\": \"{FORMAT}\" field")
    version = data.get("version")
    if version != VERSION:
        raise ExportError(
            f"this file has funcgrad export format version {version}; this funcgrad reads "
            f"version {VERSION} (export it again with this version)"
        )
    try:
        name, labels = str(data["fun_name"]), [str(s) for s in data["arg_labels"]]
        in_tree = stages.args_tree(decode_treedef(data["in_tree"]))
        out_tree = decode_treedef(data["out_tree"])
        closed = decode_closed_jaxpr(data["jaxpr"])
    except (KeyError, TypeError) as e:
        raise ExportError(f"malformed funcgrad export: {type(e).__name__}: {e}") from None
    n_in = len(closed.jaxpr.invars)
    if in_tree.num_leaves != n_in or len(labels) != n_in:
        raise ExportError(f"malformed funcgrad export: {in_tree.num_leaves} argument leaves and "
                          f"{len(labels)} labels for a program of {n_in} inputs")
    if out_tree.num_leaves != len(closed.jaxpr.outvars):
        raise ExportError(f"malformed funcgrad export: {out_tree.num_leaves} result leaves for a "
                          f"program of {len(closed.jaxpr.outvars)} outputs")
    try:
        typecheck_jaxpr(closed.jaxpr)
    except Exception as e:
        raise ExportError(f"the exported program does not type-check: {e}") from e
    return Exported(name, closed, in_tree, out_tree, labels, data)


def save(fun: Callable[..., Any], path: str | os.PathLike[str], *example_args: Any,
         **example_kwargs: Any) -> None:
    """Export ``fun`` for the types of the example arguments and write it to ``path`` (JSON,
    written atomically: a crash leaves the old file or the new one). Static arguments of a
    jitted ``fun`` are baked in. Raises :class:`ExportError` naming the primitive when the
    program cannot be written.

    Example:
        >>> import os, tempfile, numpy as np, funcgrad
        >>> path = os.path.join(tempfile.mkdtemp(), "double.json")
        >>> funcgrad.export.save(lambda x: 2 * x, path, np.ones(2))
        >>> funcgrad.export.load(path)(np.arange(2.0)).tolist()
        [0.0, 2.0]
    """
    blob = export(fun)(*example_args, **example_kwargs).serialize()
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"export.save: the directory of {path!r} does not exist "
                                f"({directory}); create it first")
    fd, tmp = tempfile.mkstemp(prefix=".funcgrad-export-", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(blob)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def load(path: str | os.PathLike[str]) -> Exported:
    """The program :func:`save` wrote to ``path``, as a callable :class:`Exported`
    (differentiable, batchable, jit-able). Raises :class:`ExportError` for a file that is not a
    funcgrad export of this version or names an unknown primitive.

    Example:
        >>> import os, tempfile, numpy as np, funcgrad
        >>> path = os.path.join(tempfile.mkdtemp(), "sq.json")
        >>> funcgrad.export.save(lambda x: x * x, path, 1.0)
        >>> float(funcgrad.grad(funcgrad.export.load(path))(3.0))
        6.0
    """
    with open(path, "rb") as fh:
        return deserialize(fh.read())
