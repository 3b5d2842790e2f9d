"""Ahead-of-time stages of :func:`~funcgrad.jit`: ``Traced`` -> ``Lowered`` -> ``Compiled``.

As ``jax.stages``: ``jit(f).trace(*args)`` stages ``f`` out for the types of ``args`` (a
:class:`Traced`, holding the jaxpr); ``.lower()`` (or ``jit(f).lower(*args)``) gives a
:class:`Lowered`, whose ``as_text()`` shows the optimised jaxpr and the Python source the
compiler generates from it; ``.compile()`` gives a :class:`Compiled`, callable with arguments of
exactly the lowered types (static arguments left out) and checking them first. Arguments may be
stand-ins (:class:`~funcgrad.ShapeDtypeStruct`, :class:`~funcgrad.ShapedArray`): only their
shape, dtype and weak type matter.

Example:
    >>> import numpy as np, funcgrad
    >>> lowered = funcgrad.jit(lambda x, y: 2 * x + y).lower(
    ...     funcgrad.ShapeDtypeStruct((3,), np.float32), np.ones(3, np.float32))
    >>> compiled = lowered.compile()
    >>> compiled(np.arange(3, dtype=np.float32), np.ones(3, np.float32)).tolist()
    [1.0, 3.0, 5.0]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy

from funcgrad.avals import ShapedArray, ShapeDtypeStruct, get_aval
from funcgrad.backend import get_default_device, platform_name, xp_for_device
from funcgrad.core import Tracer
from funcgrad.interpreters import cost as _cost
from funcgrad.ir import ClosedJaxpr, Var
from funcgrad.sharding import Format, Layout, SingleDeviceSharding
from funcgrad.tree_util import transforms as tree_util  # keys are nodes here

__all__ = ["Traced", "Lowered", "Compiled", "ArgInfo", "Signature", "check_call_args",
           "out_info", "args_tree", "CompiledMemoryStats", "Wrapped", "CompilerOptions"]

#: JAX's type of ``compile(compiler_options=...)`` (funcgrad's compiler takes none)
CompilerOptions = dict[str, str | bool]


@runtime_checkable
class Wrapped(Protocol):
    """What ``jit`` returns, as JAX's ``jax.stages.Wrapped`` protocol: callable, with
    ``trace`` and ``lower`` (``isinstance(funcgrad.jit(f), Wrapped)`` holds).

    Example:
        >>> import funcgrad
        >>> isinstance(funcgrad.jit(abs), Wrapped), isinstance(abs, Wrapped)
        (True, False)
    """

    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...

    def trace(self, *args: Any, **kwargs: Any) -> Traced: ...

    def lower(self, *args: Any, **kwargs: Any) -> Lowered: ...

_PY_SCALARS = (bool, int, float, complex)
_PY_KIND = {bool: "b", int: "i", float: "f", complex: "c"}
_KIND_ORDER = "biufc"  # a Python scalar may stand for a dtype of its kind or a later one


def out_info(out_tree: Any, avals: Sequence[ShapedArray],
             shardings: Sequence[Any] | None = None) -> Any:
    """The output structure with a :class:`~funcgrad.ShapeDtypeStruct` per array, with the
    sharding ``shardings`` asks for per array (jit's ``in_shardings``/``out_shardings``, a
    stand-in's), as JAX's ``out_info``/``eval_shape`` (None: none).

    Example:
        >>> out_info(tree_util.tree_structure((0, 0)), [ShapedArray((2,), numpy.int32)] * 2)
        (ShapeDtypeStruct(shape=(2,), dtype=int32), ShapeDtypeStruct(shape=(2,), dtype=int32))
    """
    shardings = shardings or [None] * len(avals)
    return tree_util.tree_unflatten(
        out_tree, [ShapeDtypeStruct(a.shape, a.dtype, a.weak_type, sharding=s)
                   for a, s in zip(avals, shardings)])


def args_tree(tree: Any) -> Any:
    """The treedef of ``(args, kwargs)`` with ``args`` a tuple (as JAX's ``in_tree``), from
    that of ``(list(args), kwargs)`` (the form jit's cache keys on) or of the tuple form.

    Example:
        >>> args_tree(tree_util.tree_structure(([0, {"a": 0}], {})))
        PyTreeDef(((*, {'a': *}), {}))
    """
    args, kwargs = tree_util.tree_unflatten(tree, list(range(tree.num_leaves)))
    return tree_util.tree_structure((tuple(args), kwargs))


class ArgInfo:
    """One argument leaf of a lowered computation (``jax.stages.ArgInfo``): its abstract
    value, ``shape``, ``dtype`` and whether its buffer is ``donated``.

    Example:
        >>> info = ArgInfo(ShapedArray((2,), numpy.float32), False)
        >>> info.shape, info.dtype, info.donated
        ((2,), dtype('float32'), False)
    """

    __slots__ = ("_aval", "donated")

    def __init__(self, aval: ShapedArray, donated: bool) -> None:
        self._aval = aval
        self.donated = donated

    @property
    def shape(self) -> tuple[int, ...]:
        """The argument's shape."""
        return self._aval.shape

    @property
    def dtype(self) -> numpy.dtype:
        """The argument's dtype."""
        return self._aval.dtype

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, ArgInfo) and self._aval == other._aval
                and self.donated == other.donated)

    def __hash__(self) -> int:
        return hash((self._aval, self.donated))

    def __repr__(self) -> str:
        return f"ArgInfo(_aval={self._aval!r}, donated={self.donated})"


def _mismatch(label: str, want: ShapedArray, got: str) -> str:
    return f"  argument {label}: lowered for {want.str_short()}, called with {got}"


def _coerce_leaf(x: Any, want: ShapedArray, label: str, problems: list[str]) -> Any:
    """``x`` as the value a computation lowered for ``want`` takes (or a problem noted)."""
    t = type(x)
    if isinstance(x, ShapeDtypeStruct | ShapedArray):
        problems.append(_mismatch(label, want, f"a {t.__name__} (a stand-in: lowering takes "
                                               "those; call with arrays)"))
        return x
    if t in _PY_SCALARS:
        ok = want.shape == () and (
            _KIND_ORDER.index(_PY_KIND[t]) <= _KIND_ORDER.index(want.dtype.kind)
            if want.dtype.kind in _KIND_ORDER else False)
        if not ok:
            problems.append(_mismatch(label, want, f"a Python {t.__name__}"))
            return x
        if want.weak_type:  # traced with a Python scalar: stays one (NEP 50 promotion)
            return {"b": bool, "i": int, "u": int, "f": float, "c": complex}[
                want.dtype.kind](x)
        return xp_for_device(want.device or get_default_device()).asarray(x, dtype=want.dtype)
    try:
        got = get_aval(x)
    except TypeError:
        problems.append(_mismatch(label, want, f"a {t.__name__}"))
        return x
    if got.shape != want.shape or got.dtype != want.dtype:
        problems.append(_mismatch(label, want, got.str_short()))
    elif (not isinstance(x, Tracer) and got.device and want.device
          and got.device != want.device):
        problems.append(f"  argument {label}: lowered for device {want.device!r}, called with "
                        f"an array on {got.device!r} (move it with funcgrad.device_put)")
    elif want.weak_type and not isinstance(x, Tracer) and numpy.ndim(x) == 0:
        return x.item()  # a concrete scalar where a Python scalar was traced
    return x


def check_call_args(what: str, in_tree: Any, in_avals: Sequence[ShapedArray],
                    labels: Sequence[str], args: tuple, kwargs: dict,
                    error: type[Exception] = TypeError) -> list[Any]:
    """The leaves of ``(args, kwargs)`` checked against a lowered signature (``in_tree`` the
    treedef of ``(args_tuple, kwargs)``).

    Raises ``error`` (``TypeError``) naming each argument whose structure, shape, dtype or
    device differs from what ``what`` was lowered for. Python scalars are accepted for 0-d
    arguments of their kind (or a wider one) and converted.

    Example:
        >>> tree = tree_util.tree_structure(((0,), {}))
        >>> avals = [ShapedArray((2,), numpy.float32)]
        >>> check_call_args("f", tree, avals, ["x"], (numpy.ones(2),), {})
        Traceback (most recent call last):
        ...
        TypeError: f: argument types differ from those it was lowered for:
          argument x: lowered for f32[2], called with f64[2]
    """
    leaves, tree = tree_util.tree_flatten((tuple(args), dict(kwargs)))
    if tree != in_tree:
        raise error(
            f"{what}: called with arguments of structure {tree}, but it was lowered for "
            f"{in_tree} (positional arguments, then keyword arguments; static arguments are "
            "given to lower(), not to the compiled function)"
        )
    problems: list[str] = []
    out = [_coerce_leaf(x, a, lab, problems) for x, a, lab in zip(leaves, in_avals, labels)]
    if problems:
        raise error(f"{what}: argument types differ from those it was lowered for:\n"
                        + "\n".join(problems))
    return out


def _check_platforms(platforms: Sequence[str], avals: Sequence[ShapedArray]) -> None:
    """``platforms`` (JAX's lowering platforms) must be this computation's one platform: a
    funcgrad computation runs where its arguments are."""
    if isinstance(platforms, str):
        platforms = (platforms,)
    here = {platform_name(a.device) for a in avals} or {platform_name()}
    asked = {platform_name(p) for p in platforms}
    if not asked or not asked <= here:
        raise ValueError(
            f"lowering for platforms {tuple(platforms)}: a funcgrad computation runs on the "
            f"platform of its arguments ({', '.join(sorted(here))}); put the arguments there "
            "with funcgrad.device_put instead")


def _text(optimized: ClosedJaxpr, source: str) -> str:
    return (f"# optimised jaxpr\n{optimized}\n\n# generated Python "
            f"(called as fn(xp, *args); xp is the array module)\n{source}")


class Signature:
    """What the three stages share: names, structures and types of one traced signature."""

    __slots__ = ("name", "closed", "in_tree", "out_tree", "labels", "donated",
                 "in_shardings", "out_shardings")

    def __init__(self, name: str, closed: ClosedJaxpr, in_tree: Any, out_tree: Any,
                 labels: Sequence[str], donated: tuple[bool, ...] | None,
                 in_shardings: Sequence[Any] | None = None,
                 out_shardings: Sequence[Any] | None = None) -> None:
        self.name = name
        self.closed = closed
        self.in_tree = args_tree(in_tree)
        self.out_tree = out_tree
        self.labels = tuple(labels)
        self.donated = donated
        # per leaf, the layout jit's in_shardings/out_shardings or a stand-in's sharding
        # asked for (None: the leaf's device), what Compiled.input/output_shardings report
        self.in_shardings = in_shardings
        self.out_shardings = out_shardings


class _Stage:
    """What every stage has: the signature, the executable (compiled on first use, shared
    with the jitted function's cache) and the runner of the compiled call."""

    __slots__ = ("_sig", "_executable", "_run")

    def __init__(self, sig: Signature, executable: Callable[[], Any],
                 run: Callable[[list[Any]], list[Any]]) -> None:
        self._sig = sig
        self._executable = executable
        self._run = run

    @property
    def fun_name(self) -> str:
        """The jitted function's name."""
        return self._sig.name

    @property
    def arg_labels(self) -> tuple[str, ...]:
        """How errors name each argument leaf (``x``, ``params['w']``, ...)."""
        return self._sig.labels

    @property
    def jaxpr(self) -> ClosedJaxpr:
        """The closed jaxpr traced for this signature (before optimisation)."""
        return self._sig.closed

    @property
    def in_tree(self) -> Any:
        """The treedef of ``(args, kwargs)`` (non-static arguments only; ``args`` a tuple)."""
        return self._sig.in_tree

    @property
    def out_tree(self) -> Any:
        """The treedef of the results."""
        return self._sig.out_tree

    @property
    def in_avals(self) -> Any:
        """``(args, kwargs)`` (non-static) with the abstract value of each array, as JAX's
        (the flat list is ``.jaxpr.in_avals``)."""
        return tree_util.tree_unflatten(self._sig.in_tree, list(self._sig.closed.in_avals))

    @property
    def out_avals(self) -> Any:
        """The results' structure with the abstract value of each array."""
        return tree_util.tree_unflatten(self._sig.out_tree, list(self._sig.closed.out_avals))

    @property
    def args_info(self) -> Any:
        """``(args, kwargs)`` (non-static) with an :class:`ArgInfo` per array (shape, dtype,
        whether it is donated), as JAX's."""
        return tree_util.tree_unflatten(
            self._sig.in_tree,
            [ArgInfo(a, d) for a, d in zip(self._sig.closed.in_avals, self.donated_invars)])

    @property
    def donate_argnums(self) -> tuple[int, ...]:
        """The positions, among the non-static positional arguments, of those donated."""
        args = self.args_info[0]
        return tuple(i for i, a in enumerate(args)
                     if any(x.donated for x in tree_util.tree_leaves(a)))

    @property
    def in_info(self) -> Any:
        """``(args, kwargs)`` (non-static) with a :class:`~funcgrad.ShapeDtypeStruct` per
        array."""
        return out_info(self._sig.in_tree, self._sig.closed.in_avals, self._sig.in_shardings)

    @property
    def out_info(self) -> Any:
        """The results' structure with a :class:`~funcgrad.ShapeDtypeStruct` per array."""
        return out_info(self._sig.out_tree, self._sig.closed.out_avals,
                        self._sig.out_shardings)

    @property
    def donated_invars(self) -> tuple[bool, ...]:
        """Per argument leaf, whether its buffer is donated (``donate_argnums``)."""
        d = self._sig.donated
        return d if d is not None else (False,) * len(self._sig.labels)


class Traced(_Stage):
    """``f`` staged out for one signature (``jit(f).trace(*args)``): ``.jaxpr``,
    ``.out_info``, ``.lower()``.

    Example:
        >>> import numpy as np, funcgrad
        >>> traced = funcgrad.jit(lambda x: x * 2.0).trace(np.ones(2))
        >>> print(traced.jaxpr)
        { lambda ; a:f64[2]. let b:f64[2] = mul a 2.0:f64[] in (b,) }
    """

    __slots__ = ()

    def lower(self, *, lowering_platforms: Sequence[str] | None = None,
              _private_parameters: Any = None) -> Lowered:
        """The lowered computation (optimised jaxpr and generated code).
        ``lowering_platforms`` (JAX's) may only name the platform the arguments are on."""
        del _private_parameters
        if lowering_platforms is not None:
            _check_platforms(lowering_platforms, self._sig.closed.in_avals)
        return Lowered(self._sig, self._executable, self._run)

    def __repr__(self) -> str:
        return f"<Traced {self._sig.name}>"


class Lowered(_Stage):
    """``jit(f).lower(*args)``: the computation for one signature, optimised and written as
    Python (``as_text()``, ``compiler_ir()``), ready to ``compile()``.

    Example:
        >>> import numpy as np, funcgrad, funcgrad.numpy as fnp
        >>> lowered = funcgrad.jit(lambda x: fnp.sin(x) * 1.0).lower(np.ones(2))
        >>> print(lowered.as_text("jaxpr"))
        { lambda ; a:f64[2]. let b:f64[2] = sin a in (b,) }
        >>> lowered.compile()(np.zeros(2)).tolist()
        [0.0, 0.0]
    """

    __slots__ = ()

    def compiler_ir(self, dialect: str | None = "jaxpr") -> Any:
        """The compiler's input and output: ``"jaxpr"`` gives the optimised
        :class:`~funcgrad.ir.ClosedJaxpr`, ``"source"`` (or ``"python"``) the generated Python
        code (a string).

        Example:
            >>> import numpy as np, funcgrad
            >>> print(funcgrad.jit(lambda x: x + 0.0).lower(np.ones(2)).compiler_ir())
            { lambda ; a:f64[2]. let  in (a,) }
        """
        exe = self._executable()
        if dialect in (None, "jaxpr"):
            return exe.jaxpr
        if dialect in ("source", "python"):
            return exe.source
        raise ValueError(f"compiler_ir: unknown dialect {dialect!r}; use 'jaxpr' or 'source'")

    def as_text(self, dialect: str | None = None, *, debug_info: bool = False) -> str:
        """The optimised jaxpr and the generated Python source, as text (``dialect="jaxpr"``
        or ``"source"`` for one of them). ``debug_info`` is accepted for JAX compatibility
        (equations keep their source lines either way).

        Example:
            >>> import numpy as np, funcgrad, funcgrad.numpy as fnp
            >>> text = funcgrad.jit(fnp.cos).lower(np.ones(2)).as_text()
            >>> "cos a" in text and "xp.cos(v0)" in text
            True
        """
        del debug_info
        if dialect is not None:
            return str(self.compiler_ir(dialect))
        exe = self._executable()
        return _text(exe.jaxpr, exe.source)

    def cost_analysis(self) -> dict[str, float]:
        """Estimated cost of running the optimised program once, as JAX's:
        ``{'flops', 'transcendentals', 'bytes accessed'}`` (see :class:`Compiled`)."""
        return _cost.cost_analysis(self._executable().jaxpr)

    def compile(self, compiler_options: dict[str, Any] | None = None) -> Compiled:
        """The compiled computation: call it with arguments of the lowered types.
        ``compiler_options`` (JAX's XLA options) must be empty: there is no XLA here."""
        if compiler_options:
            raise ValueError(f"compile(compiler_options={compiler_options!r}): funcgrad's "
                             "compiler takes no options (there is no XLA); leave them out")
        self._executable()
        return Compiled(self._sig, self._executable, self._run)

    def __str__(self) -> str:
        return self.as_text()

    def __repr__(self) -> str:
        return f"<Lowered {self._sig.name}: {self._sig.closed.in_avals} -> " \
               f"{self._sig.closed.out_avals}>"


class Compiled(_Stage):
    """A computation compiled for one signature: call it with the non-static arguments, of
    exactly the lowered shapes and dtypes (checked; a mismatch is a ``TypeError`` naming the
    argument). Donated arguments are donated. ``as_text()`` shows the code.

    Unlike JAX's, a ``Compiled`` may be transformed (``grad``, ``vmap``, ``jit``): it binds the
    same ``jit`` call primitive a jitted function does.

    Example:
        >>> import numpy as np, funcgrad
        >>> c = funcgrad.jit(lambda x, n: x ** n, static_argnums=1).lower(np.ones(2), 3).compile()
        >>> c(np.full(2, 2.0)).tolist()
        [8.0, 8.0]
        >>> c(np.ones(3))
        Traceback (most recent call last):
        ...
        TypeError: jit(<lambda>).compile(): argument types differ from those it was lowered for:
          argument x: lowered for f64[2], called with f64[3]
    """

    __slots__ = ()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        s = self._sig
        leaves = check_call_args(f"jit({s.name}).compile()", s.in_tree, s.closed.in_avals,
                                 s.labels, args, kwargs)
        return tree_util.tree_unflatten(s.out_tree, self._run(leaves))

    call = __call__  # JAX's Compiled.call

    def _shardings(self, tree: Any, avals: Sequence[ShapedArray],
                   asked: Sequence[Any] | None) -> Any:
        # A Python scalar's aval has no device: it is put on the default device.
        default = get_default_device()
        asked = asked or [None] * len(avals)
        return tree_util.tree_unflatten(
            tree, [s if s is not None else SingleDeviceSharding(a.device or default)
                   for a, s in zip(avals, asked)])

    @property
    def input_shardings(self) -> Any:
        """``(args, kwargs)`` (non-static) with each array's layout, as JAX's: the sharding
        ``jit(in_shardings=...)`` or a :class:`~funcgrad.ShapeDtypeStruct` stand-in gave it,
        else (one device) a :class:`~funcgrad.sharding.SingleDeviceSharding`.

        Example:
            >>> import numpy as np, funcgrad
            >>> funcgrad.jit(lambda x: x * 2).lower(np.ones(2)).compile().input_shardings
            ((SingleDeviceSharding(device='cpu', memory_kind=device),), {})
        """
        return self._shardings(self._sig.in_tree, self._sig.closed.in_avals,
                               self._sig.in_shardings)

    @property
    def output_shardings(self) -> Any:
        """The results' structure with each array's layout: ``jit(out_shardings=...)``'s,
        else a :class:`~funcgrad.sharding.SingleDeviceSharding` (see :attr:`input_shardings`)."""
        return self._shardings(self._sig.out_tree, self._sig.closed.out_avals,
                               self._sig.out_shardings)

    def _formats(self, tree: Any, avals: Sequence[ShapedArray]) -> Any:
        default = get_default_device()
        return tree_util.tree_unflatten(tree, [
            Format(Layout(tuple(range(len(a.shape))), ()),
                   SingleDeviceSharding(a.device or default))
            for a in avals])

    @property
    def input_formats(self) -> Any:
        """``(args, kwargs)`` (non-static) with each array's
        :class:`~funcgrad.sharding.Format`, as JAX's: the default row-major layout and the
        array's :attr:`input_shardings` entry.

        Example:
            >>> import numpy as np, funcgrad
            >>> fmt = funcgrad.jit(lambda x: x.T).lower(np.ones((2, 3))).compile().input_formats
            >>> fmt[0][0].layout
            Layout(major_to_minor=(0, 1), tiling=(), sub_byte_element_size_in_bits=0)
        """
        return self._formats(self._sig.in_tree, self._sig.closed.in_avals)

    @property
    def output_formats(self) -> Any:
        """The results' structure with each array's format (see :attr:`input_formats`)."""
        return self._formats(self._sig.out_tree, self._sig.closed.out_avals)

    def as_text(self) -> str:
        """The optimised jaxpr and the generated Python source this runs."""
        exe = self._executable()
        return _text(exe.jaxpr, exe.source)

    @property
    def source(self) -> str:
        """The generated Python source."""
        return self._executable().source

    def cost_analysis(self) -> dict[str, float]:
        """Estimated cost of one call, as ``jax.stages.Compiled.cost_analysis()``: ``'flops'``,
        ``'transcendentals'`` and ``'bytes accessed'`` of the optimised program, summed over its
        operations from the rules the primitives register (:mod:`funcgrad.interpreters.cost`):
        one flop per element of an elementwise result, one per element a reduction reads,
        ``2*M*N*K`` for a matrix product, loops' bodies times their static trip counts.

        Example:
            >>> import numpy as np, funcgrad, funcgrad.numpy as fnp
            >>> c = funcgrad.jit(lambda a, b: fnp.tanh(a @ b).sum()).lower(
            ...     np.ones((8, 4), np.float32), np.ones((4, 2), np.float32)).compile()
            >>> c.cost_analysis()
            {'flops': 160.0, 'transcendentals': 16.0, 'bytes accessed': 420.0}
        """
        return _cost.cost_analysis(self._executable().jaxpr)

    def memory_analysis(self) -> CompiledMemoryStats:
        """Memory of one call, as ``jax.stages.Compiled.memory_analysis()``: the arguments',
        outputs' and generated code's sizes, the donated bytes an output can reuse
        (``alias_size_in_bytes``) and ``temp_size_in_bytes``, the most bytes of intermediate
        values of the optimised program alive at once (between an equation's result and its
        last use; the inside of loops and other nested programs counts as their results).

        Example:
            >>> import numpy as np, funcgrad, funcgrad.numpy as fnp
            >>> m = funcgrad.jit(lambda x: fnp.sin(x * 2).sum()).lower(np.ones(100)).compile(
            ...     ).memory_analysis()
            >>> m.argument_size_in_bytes, m.output_size_in_bytes
            (800, 8)
        """
        exe = self._executable()
        closed = self._sig.closed
        ins = [_nbytes(a) for a in closed.in_avals]
        outs = [_nbytes(a) for a in closed.out_avals]
        donated = self._sig.donated or (False,) * len(ins)
        # a donated buffer can hold an output of its own shape and dtype (one each)
        free = [a for a, d in zip(closed.in_avals, donated) if d]
        alias = 0
        for o in closed.out_avals:
            match = next((a for a in free if a.shape == o.shape and a.dtype == o.dtype), None)
            if match is not None:
                free.remove(match)
                alias += _nbytes(o)
        jaxpr = exe.jaxpr.jaxpr if isinstance(exe.jaxpr, ClosedJaxpr) else exe.jaxpr
        temp = _peak_intermediates(jaxpr)
        code = len(exe.source.encode())
        return CompiledMemoryStats(
            generated_code_size_in_bytes=code, argument_size_in_bytes=sum(ins),
            output_size_in_bytes=sum(outs), alias_size_in_bytes=alias,
            temp_size_in_bytes=temp,
            peak_memory_in_bytes=sum(ins) + sum(outs) - alias + temp)

    def __repr__(self) -> str:
        return f"<Compiled {self._sig.name}>"


class CompiledMemoryStats:
    """What :meth:`Compiled.memory_analysis` gives, with JAX's field names (the ``host_*``
    ones are 0: the program's arrays all live on its device)."""

    _FIELDS = ("generated_code_size_in_bytes", "argument_size_in_bytes",
               "output_size_in_bytes", "alias_size_in_bytes", "temp_size_in_bytes",
               "host_generated_code_size_in_bytes", "host_argument_size_in_bytes",
               "host_output_size_in_bytes", "host_alias_size_in_bytes",
               "host_temp_size_in_bytes", "peak_memory_in_bytes")
    __slots__ = _FIELDS

    def __init__(self, **sizes: int) -> None:
        for f in self._FIELDS:
            setattr(self, f, int(sizes.get(f, 0)))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CompiledMemoryStats) and all(
            getattr(self, f) == getattr(other, f) for f in self._FIELDS)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        body = ", ".join(f"{f}={getattr(self, f)}" for f in self._FIELDS)
        return f"CompiledMemoryStats({body})"


def _nbytes(aval: Any) -> int:
    return int(numpy.prod(aval.shape, dtype=numpy.int64)) * numpy.dtype(aval.dtype).itemsize


def _peak_intermediates(jaxpr: Any) -> int:
    """The most bytes of equation results (not the program's outputs) alive at once."""
    outs = {v for v in jaxpr.outvars if isinstance(v, Var)}
    last: dict[Any, int] = {}
    for i, eqn in enumerate(jaxpr.eqns):
        for v in eqn.invars:
            if isinstance(v, Var):
                last[v] = i
    live = peak = 0
    dying: dict[int, int] = {}
    for i, eqn in enumerate(jaxpr.eqns):
        for v in eqn.outvars:
            if v in outs or v not in last:  # an output, or never read (dropped at once)
                continue
            size = _nbytes(v.aval)
            live += size
            dying[last[v]] = dying.get(last[v], 0) + size
        peak = max(peak, live)
        live -= dying.pop(i, 0)
    return peak
