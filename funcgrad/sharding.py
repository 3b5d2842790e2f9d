"""``jax.sharding`` on funcgrad's one device per platform: meshes, partition specs and
shardings, so that programs written for several devices run unchanged.

JAX lays an array out over a *mesh* of devices (:class:`Mesh`: a grid with a name per axis)
by a :class:`PartitionSpec`, one entry per array dimension naming the mesh axes that dimension
is split over. funcgrad computes on one device per platform, so a sharding never moves data:
``device_put(x, NamedSharding(mesh, P("data")))`` checks that the layout is possible (every
split dimension divisible by its mesh axes, as JAX) and puts ``x`` on the mesh's device.
:func:`funcgrad.shard_map` runs a function per shard, with the collectives over the mesh's
axes; it works for meshes of any size (a mesh may list one device several times), so
``shard_map`` programs can be tested here as JAX tests them with forced host devices.

Example:
    >>> import numpy as np, funcgrad
    >>> from funcgrad.sharding import NamedSharding, PartitionSpec as P
    >>> mesh = funcgrad.make_mesh((1,), ("data",))
    >>> x = funcgrad.device_put(np.ones((4, 2)), NamedSharding(mesh, P("data")))
    >>> NamedSharding(mesh, P("data")).shard_shape(x.shape)
    (4, 2)
"""

from __future__ import annotations

import contextlib
import enum
import math
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from typing import Any

import numpy

from funcgrad import avals, backend
from funcgrad.tree_util import transforms as tree_util  # keys are nodes here

__all__ = [
    "AxisType", "Mesh", "PartitionSpec", "Sharding", "NamedSharding", "SingleDeviceSharding",
    "make_mesh", "set_mesh", "use_mesh", "get_mesh", "get_abstract_mesh", "reshard",
    "shard_indices", "make_array_from_callback", "make_array_from_single_device_arrays",
    "make_array_from_process_local_data", "Layout", "Format",
]


class AxisType(enum.Enum):
    """How JAX shards along a mesh axis (``jax.sharding.AxisType``). Kept on the mesh and
    shown as JAX shows it; with one device every type computes the same values."""

    Auto = enum.auto()
    Explicit = enum.auto()
    Manual = enum.auto()

    def __repr__(self) -> str:
        return self.name


class _Unconstrained:
    def __repr__(self) -> str:
        return "UNCONSTRAINED"


class PartitionSpec:
    """How each dimension of an array is split over mesh axes (``jax.P``): per dimension,
    ``None`` (not split), a mesh axis name, or a tuple of names (split over all of them, the
    first the most major). Dimensions past the spec's length are not split.

    Example:
        >>> from funcgrad.sharding import PartitionSpec as P
        >>> P("data", None), len(P("x", ("y", "z"))), P("x") == P("x", None)
        (P('data', None), 2, False)
    """

    __slots__ = ("_parts",)
    UNCONSTRAINED = _Unconstrained()

    def __init__(self, *parts: Any) -> None:
        for p in parts:
            names = p if isinstance(p, tuple) else (p,)
            for n in names:
                if n is not None and n is not PartitionSpec.UNCONSTRAINED and not isinstance(
                        n, str):
                    raise TypeError(
                        f"PartitionSpec entries must be None, a mesh axis name (str) or a tuple "
                        f"of names; got {p!r}")
        self._parts = tuple(parts)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._parts)

    def __len__(self) -> int:
        return len(self._parts)

    def __getitem__(self, i: Any) -> Any:
        return self._parts[i]

    def __eq__(self, other: object) -> bool:
        return type(other) is PartitionSpec and other._parts == self._parts

    def __hash__(self) -> int:
        return hash((PartitionSpec, self._parts))

    def __repr__(self) -> str:
        return "P" + repr(self._parts)

    def axis_names_of(self, dim: int) -> tuple[str, ...]:
        """The mesh axes dimension ``dim`` is split over, major first (none past the end).

        Example:
            >>> PartitionSpec("x", ("y", "z")).axis_names_of(1)
            ('y', 'z')
        """
        if dim >= len(self._parts):
            return ()
        p = self._parts[dim]
        if p is None or p is PartitionSpec.UNCONSTRAINED:
            return ()
        return tuple(p) if isinstance(p, tuple) else (p,)

    def mentioned(self) -> tuple[str, ...]:
        """Every mesh axis the spec splits over, in the order of the dimensions.

        Example:
            >>> PartitionSpec(("x", "y"), None, "z").mentioned()
            ('x', 'y', 'z')
        """
        return tuple(n for d in range(len(self._parts)) for n in self.axis_names_of(d))


_current_mesh: ContextVar[Mesh | None] = ContextVar("funcgrad_mesh", default=None)


class Mesh:
    """A grid of devices with a name per axis (``jax.sharding.Mesh``). ``devices`` is an
    array of devices (``funcgrad.devices()``'s names) whose rank is ``len(axis_names)``; a
    device may appear several times (the shards then run one after another on it). Usable
    as a context manager, which makes it the mesh of :func:`get_mesh` inside.

    Example:
        >>> import numpy as np
        >>> mesh = Mesh(np.array(["cpu"] * 4).reshape(2, 2), ("x", "y"))
        >>> dict(mesh.shape), mesh.size
        ({'x': 2, 'y': 2}, 4)
    """

    def __init__(self, devices: Any, axis_names: str | Sequence[str],
                 axis_types: AxisType | Sequence[AxisType] | None = None) -> None:
        names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
        arr = numpy.empty(numpy.shape(devices), dtype=object)
        arr[...] = devices if isinstance(devices, numpy.ndarray) else numpy.asarray(
            devices, dtype=object)
        if arr.ndim != len(names):
            raise ValueError(
                f"Mesh: the devices array has rank {arr.ndim} (shape {arr.shape}) but "
                f"{len(names)} axis names were given: {names}")
        if len(set(names)) != len(names) or not all(isinstance(n, str) for n in names):
            raise ValueError(f"Mesh: axis names must be distinct strings, got {names}")
        if axis_types is None:
            types = (AxisType.Auto,) * len(names)
        elif isinstance(axis_types, AxisType):
            types = (axis_types,) * len(names)
        else:
            types = tuple(axis_types)
            if len(types) != len(names):
                raise ValueError(f"Mesh: {len(types)} axis_types for {len(names)} axes")
        for d in arr.flat:
            backend.canonical_device(str(d))  # an unknown device fails here, named
        arr.flags.writeable = False
        self.devices = arr
        self.axis_names = names
        self.axis_types = types
        self._token: Any = None

    @property
    def shape(self) -> OrderedDict[str, int]:
        return OrderedDict(zip(self.axis_names, self.devices.shape))

    @property
    def axis_sizes(self) -> tuple[int, ...]:
        return tuple(self.devices.shape)

    @property
    def shape_tuple(self) -> tuple[tuple[str, int], ...]:
        return tuple(zip(self.axis_names, self.devices.shape))

    @property
    def size(self) -> int:
        return int(self.devices.size)

    @property
    def empty(self) -> bool:
        return self.devices.size == 0 or not self.axis_names

    @property
    def local_mesh(self) -> Mesh:
        return self

    @property
    def abstract_mesh(self) -> Mesh:
        return self

    def _key(self) -> tuple:
        return (tuple(str(d) for d in self.devices.flat), self.devices.shape, self.axis_names,
                self.axis_types)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mesh) and other._key() == self._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __str__(self) -> str:
        # JAX's short form, the one NamedSharding's repr shows
        sizes = ", ".join(f"{n!r}: {s}" for n, s in self.shape.items())
        return f"Mesh({sizes}, axis_types={self.axis_types!r})"

    def __repr__(self) -> str:
        return (f"Mesh(axis_sizes={tuple(self.shape.values())!r}, "
                f"axis_names={tuple(self.axis_names)!r}, axis_types={self.axis_types!r})")

    def __enter__(self) -> Mesh:
        self._token = _current_mesh.set(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        _current_mesh.reset(self._token)


def make_mesh(axis_shapes: Sequence[int], axis_names: Sequence[str],
              axis_types: Sequence[AxisType] | None = None, *,
              devices: Sequence[Any] | None = None) -> Mesh:
    """A mesh of the given axis sizes over ``devices`` (``jax.make_mesh``; by default the
    default backend's device, so ``make_mesh((funcgrad.device_count(),), ("data",))`` as in
    JAX). As JAX's, the axis types default to ``Explicit``. To run shards of a bigger mesh on
    this one device, build a :class:`Mesh` listing the device several times.

    Example:
        >>> make_mesh((1, 1), ("data", "model"))
        Mesh(axis_sizes=(1, 1), axis_names=('data', 'model'), axis_types=(Explicit, Explicit))
        >>> print(make_mesh((1, 1), ("data", "model")))
        Mesh('data': 1, 'model': 1, axis_types=(Explicit, Explicit))
    """
    shape = tuple(int(s) for s in axis_shapes)
    devs = list(backend.local_devices() if devices is None else devices)
    if math.prod(shape) > len(devs):
        raise ValueError(f"make_mesh: the mesh shape {shape} needs {math.prod(shape)} "
                         f"devices but {len(devs)} are available ({devs}); funcgrad uses one "
                         "device per platform (a Mesh may list a device several times)")
    if math.prod(shape) != len(devs):
        devs = devs[:math.prod(shape)]
    arr = numpy.empty(len(devs), dtype=object)
    arr[:] = devs
    types = (AxisType.Explicit,) * len(shape) if axis_types is None else axis_types
    return Mesh(arr.reshape(shape), tuple(axis_names), types)


def get_mesh() -> Mesh | None:
    """The mesh set by :func:`set_mesh` / ``with mesh:`` in this context, or None.

    Example:
        >>> with set_mesh(make_mesh((1,), ("d",))):
        ...     get_mesh().axis_names
        ('d',)
    """
    return _current_mesh.get()


def get_abstract_mesh() -> Mesh | None:
    """``jax.sharding.get_abstract_mesh``: here the mesh itself (:func:`get_mesh`).

    Example:
        >>> get_abstract_mesh() is None
        True
    """
    return _current_mesh.get()


class _MeshSetting:
    # set_mesh(m) sets the mesh at once (as JAX's global setter) and, used in a ``with``,
    # restores the previous one on exit.
    def __init__(self, mesh: Mesh | None) -> None:
        self._token = _current_mesh.set(mesh)

    def __enter__(self) -> Mesh | None:
        return _current_mesh.get()

    def __exit__(self, *exc: Any) -> None:
        _current_mesh.reset(self._token)


def set_mesh(mesh: Mesh | None) -> Any:
    """Make ``mesh`` the current mesh (``jax.set_mesh``): the default of
    :func:`funcgrad.shard_map`'s ``mesh``. In a ``with`` statement, only inside it.

    Example:
        >>> with set_mesh(make_mesh((1,), ("batch",))) as m:
        ...     m.size
        1
    """
    if mesh is not None and not isinstance(mesh, Mesh):
        raise TypeError(f"set_mesh expects a Mesh or None, got {type(mesh).__name__}")
    return _MeshSetting(mesh)


@contextlib.contextmanager
def use_mesh(mesh: Mesh) -> Iterator[Mesh]:
    """``jax.sharding.use_mesh``: :func:`set_mesh` for the ``with`` block only.

    Example:
        >>> with use_mesh(make_mesh((1,), ("d",))):
        ...     dict(get_mesh().shape)
        {'d': 1}
    """
    with set_mesh(mesh):
        yield mesh


class Sharding:
    """The layout of an array over devices (``jax.sharding.Sharding``)."""

    memory_kind = "device"

    @property
    def device_set(self) -> set[Any]:
        raise TypeError(f"{type(self).__name__} does not define its devices")

    @property
    def addressable_devices(self) -> set[Any]:
        return self.device_set

    @property
    def num_devices(self) -> int:
        return len(self.device_set)

    def _device(self) -> str:
        # Every device of a funcgrad mesh is one platform's device: the first names it.
        return str(next(iter(self.device_set)))

    def shard_shape(self, global_shape: Sequence[int]) -> tuple[int, ...]:
        return tuple(global_shape)

    def check_shape(self, shape: Sequence[int]) -> None:
        """Raise ValueError unless an array of ``shape`` can be laid out so."""
        self.shard_shape(shape)


class SingleDeviceSharding(Sharding):
    """An array kept whole on one device (``jax.sharding.SingleDeviceSharding``).

    Example:
        >>> SingleDeviceSharding("cpu").shard_shape((3, 2))
        (3, 2)
    """

    def __init__(self, device: Any, *, memory_kind: str | None = None) -> None:
        backend.canonical_device(str(device))
        self.device = device

    @property
    def device_set(self) -> set[Any]:
        return {self.device}

    @property
    def is_fully_replicated(self) -> bool:
        return True

    def __eq__(self, other: object) -> bool:
        return type(other) is SingleDeviceSharding and other.device == self.device

    def __hash__(self) -> int:
        return hash((SingleDeviceSharding, self.device))

    def __repr__(self) -> str:
        return f"SingleDeviceSharding(device={self.device!r}, memory_kind=device)"


class _AutoLayout:
    def __repr__(self) -> str:
        return "AUTO"


class Layout:
    """How an array's elements lie in memory (``jax.experimental.layout.Layout``):
    ``major_to_minor`` lists the dimensions from the slowest-varying to the fastest.

    funcgrad's arrays are NumPy/CuPy arrays, which any strides serve; compiled programs
    describe their arguments and results in the default row-major (C) order,
    ``major_to_minor=(0, 1, ..., ndim - 1)``, without tiling (``tiling=()``), as JAX on CPU.

    Example:
        >>> Layout((0, 1))
        Layout(major_to_minor=(0, 1), tiling=None, sub_byte_element_size_in_bits=0)
    """

    AUTO = _AutoLayout()

    def __init__(self, major_to_minor: Sequence[int],
                 tiling: Sequence[Sequence[int]] | None = None,
                 sub_byte_element_size_in_bits: int = 0) -> None:
        self.major_to_minor = tuple(int(d) for d in major_to_minor)
        if sorted(self.major_to_minor) != list(range(len(self.major_to_minor))):
            raise ValueError(f"Layout: major_to_minor must be a permutation of the dimensions, "
                             f"got {self.major_to_minor}")
        # None (unspecified, JAX's default) stays None; compiled programs say () (no tiling)
        self.tiling = (None if tiling is None
                       else tuple(tuple(int(t) for t in tile) for tile in tiling))
        self.sub_byte_element_size_in_bits = int(sub_byte_element_size_in_bits)

    def update(self, **kwargs: Any) -> Layout:
        """A copy with some of the fields replaced."""
        fields = {"major_to_minor": self.major_to_minor, "tiling": self.tiling,
                  "sub_byte_element_size_in_bits": self.sub_byte_element_size_in_bits}
        unknown = sorted(set(kwargs) - set(fields))
        if unknown:
            raise TypeError(f"Layout.update: unknown field(s) {unknown}; it has "
                            f"{', '.join(fields)}")
        return Layout(**{**fields, **kwargs})

    def check_compatible_aval(self, aval_shape: Sequence[int]) -> None:
        """Raise ValueError unless an array of ``aval_shape`` can have this layout."""
        if len(self.major_to_minor) != len(aval_shape):
            raise ValueError(f"Length of major_to_minor and the rank of the value should "
                             f"match. Got major_to_minor={self.major_to_minor} and "
                             f"shape={tuple(aval_shape)}")

    def _key(self) -> tuple:
        return (self.major_to_minor, self.tiling, self.sub_byte_element_size_in_bits)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Layout) and other._key() == self._key()

    def __hash__(self) -> int:
        return hash((Layout, self._key()))

    def __repr__(self) -> str:
        return (f"Layout(major_to_minor={self.major_to_minor}, tiling={self.tiling}, "
                f"sub_byte_element_size_in_bits={self.sub_byte_element_size_in_bits})")


class Format:
    """A layout with a sharding (``jax.experimental.layout.Format``): what
    ``Compiled.input_formats`` / ``output_formats`` give for each array.

    Example:
        >>> Format(Layout((0,), ()), SingleDeviceSharding("cpu"))
        Format(layout=Layout(major_to_minor=(0,), tiling=(), sub_byte_element_size_in_bits=0), sharding=SingleDeviceSharding(device='cpu', memory_kind=device))
    """

    def __init__(self, layout: Layout | _AutoLayout | None = None,
                 sharding: Sharding | None = None) -> None:
        if layout is not None and not isinstance(layout, Layout | _AutoLayout):
            raise TypeError(f"Format: layout must be a Layout, Layout.AUTO or None, got "
                            f"{type(layout).__name__}")
        if sharding is not None and not isinstance(sharding, Sharding):
            raise TypeError(f"Format: sharding must be a Sharding or None, got "
                            f"{type(sharding).__name__}")
        if isinstance(layout, Layout) and sharding is None:
            # JAX's rule: a concrete layout needs a concrete sharding.
            raise ValueError(
                "Sharding has to be concrete when layout is of type Layout. Please pass a "
                "NamedSharding or SingleDeviceSharding to the sharding argument. Got "
                "sharding None")
        self.layout = layout
        self.sharding = sharding

    def split_format(self, shape: Sequence[int]) -> tuple[Layout | None, Sharding | None]:
        """``(layout, sharding)`` for a ``ShapeDtypeStruct`` of ``shape`` (its ``sharding=``),
        the layout checked against the rank; ``Layout.AUTO`` is refused there, as by JAX."""
        if isinstance(self.layout, _AutoLayout):
            raise TypeError("Layout.AUTO cannot be used in place of a device-local layout in "
                            f"a ShapeDtypeStruct. Got {self}")
        if self.layout is not None:
            self.layout.check_compatible_aval(shape)
        return self.layout, self.sharding

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Format) and other.layout == self.layout
                and other.sharding == self.sharding)

    def __hash__(self) -> int:
        return hash((Format, self.layout, self.sharding))

    def __repr__(self) -> str:
        return f"Format(layout={self.layout!r}, sharding={self.sharding!r})"


def _split_factors(mesh: Mesh, spec: PartitionSpec, ndim: int, what: str) -> list[int]:
    """Per dimension, how many pieces ``spec`` cuts it into over ``mesh``; checks the names."""
    if len(spec) > ndim:
        raise ValueError(f"{what}: {spec} has {len(spec)} entries for an array of rank {ndim}")
    seen: set[str] = set()
    factors = []
    sizes = mesh.shape
    for d in range(ndim):
        f = 1
        for n in spec.axis_names_of(d):
            if n not in sizes:
                raise ValueError(f"{what}: {spec} names the axis {n!r}, which the mesh "
                                 f"{mesh} does not have")
            if n in seen:
                raise ValueError(f"{what}: {spec} maps the mesh axis {n!r} to more than one "
                                 "dimension; a mesh axis may split at most one")
            seen.add(n)
            f *= sizes[n]
        factors.append(f)
    return factors


class NamedSharding(Sharding):
    """An array split over a :class:`Mesh` by a :class:`PartitionSpec`
    (``jax.sharding.NamedSharding``).

    Example:
        >>> import numpy as np
        >>> mesh = Mesh(np.array(["cpu"] * 2), ("x",))
        >>> NamedSharding(mesh, PartitionSpec("x")).shard_shape((4, 3))
        (2, 3)
    """

    def __init__(self, mesh: Mesh, spec: PartitionSpec, *, memory_kind: str | None = None
                 ) -> None:
        if not isinstance(mesh, Mesh):
            raise TypeError(f"NamedSharding: mesh must be a Mesh, got {type(mesh).__name__}")
        if not isinstance(spec, PartitionSpec):
            raise TypeError(f"NamedSharding: spec must be a PartitionSpec, got {spec!r}")
        _split_factors(mesh, spec, len(spec), "NamedSharding")  # names and repeats
        self.mesh = mesh
        self.spec = spec

    @property
    def device_set(self) -> set[Any]:
        return set(self.mesh.devices.flat)

    @property
    def num_devices(self) -> int:
        return self.mesh.size

    @property
    def is_fully_replicated(self) -> bool:
        sizes = self.mesh.shape
        return all(sizes[n] == 1 for n in self.spec.mentioned())

    def shard_shape(self, global_shape: Sequence[int]) -> tuple[int, ...]:
        shape = tuple(int(s) for s in global_shape)
        factors = _split_factors(self.mesh, self.spec, len(shape), "NamedSharding")
        for d, (s, f) in enumerate(zip(shape, factors)):
            if s % f:
                raise ValueError(
                    f"{self!r} splits array axis {d} into {f} pieces, but its size is {s} "
                    f"(full shape {shape}): each split size must divide the dimension")
        return tuple(s // f for s, f in zip(shape, factors))

    def __eq__(self, other: object) -> bool:
        return (type(other) is NamedSharding and other.mesh == self.mesh
                and other.spec == self.spec)

    def __hash__(self) -> int:
        return hash((NamedSharding, self.mesh, self.spec))

    def __repr__(self) -> str:
        return f"NamedSharding(mesh={self.mesh}, spec={self.spec!r}, memory_kind=device)"


def reshard(x: Any, out_shardings: Any) -> Any:
    """``jax.sharding.reshard``: ``x`` laid out by ``out_shardings`` (a Sharding or a
    PartitionSpec over the current mesh, per leaf or a prefix); checks the layout, moves
    nothing (one device).

    Example:
        >>> import numpy as np
        >>> reshard(np.ones(2), SingleDeviceSharding("cpu")).tolist()
        [1.0, 1.0]
    """
    leaves, tree = tree_util.tree_flatten(x)
    shardings = tree_util.broadcast_prefix(
        out_shardings, x, is_leaf=lambda s: isinstance(s, Sharding | PartitionSpec))
    for leaf, s in zip(leaves, shardings):
        if isinstance(s, PartitionSpec):
            mesh = get_mesh()
            if mesh is None:
                raise ValueError("reshard: a PartitionSpec needs a mesh: use "
                                 "NamedSharding(mesh, spec) or set_mesh(mesh)")
            s = NamedSharding(mesh, s)
        if isinstance(s, Sharding):
            s.check_shape(numpy.shape(leaf))
    return tree.unflatten(leaves)


def shard_indices(sharding: Sharding, shape: Sequence[int]) -> list[tuple[slice, ...]]:
    """The index (a tuple of slices) of the block of an array of ``shape`` each device of
    ``sharding`` holds, devices in mesh order (a replicated block is listed once per device
    holding it, as JAX's ``devices_indices_map``).

    Example:
        >>> import numpy as np
        >>> mesh = Mesh(np.array(["cpu"] * 2), ("x",))
        >>> shard_indices(NamedSharding(mesh, PartitionSpec("x")), (4, 3))
        [(slice(0, 2, None), slice(None, None, None)), (slice(2, 4, None), slice(None, None, None))]
    """
    shape = tuple(int(s) for s in shape)
    if not isinstance(sharding, NamedSharding):
        return [tuple(slice(None) for _ in shape)]
    block = sharding.shard_shape(shape)
    mesh, spec = sharding.mesh, sharding.spec
    sizes = mesh.shape
    out = []
    for pos in numpy.ndindex(*mesh.devices.shape):
        coord = dict(zip(mesh.axis_names, pos))
        index = []
        for d in range(len(shape)):
            names = spec.axis_names_of(d)
            if not names:
                index.append(slice(None))
                continue
            i = 0
            for n in names:  # mixed radix, the first name the most major
                i = i * sizes[n] + coord[n]
            index.append(slice(i * block[d], (i + 1) * block[d]))
        out.append(tuple(index))
    return out


def _assembled(shape: Sequence[int], sharding: Sharding, blocks: Sequence[Any],
               dtype: Any, what: str) -> Any:
    indices = shard_indices(sharding, shape)
    if len(blocks) != len(indices):
        raise ValueError(f"{what}: {len(blocks)} arrays for the {len(indices)} devices of "
                         f"{sharding!r}")
    host = [backend.to_numpy(numpy.asarray(b) if not hasattr(b, "shape") else b)
            for b in blocks]
    expected = sharding.shard_shape(shape)
    for k, b in enumerate(host):
        if tuple(b.shape) != expected:
            raise ValueError(f"{what}: the block for device {k} has shape {tuple(b.shape)}; "
                             f"{sharding!r} gives blocks of shape {expected} for the global "
                             f"shape {tuple(shape)}")
    out = numpy.empty(tuple(shape), dtype=dtype if dtype is not None else (
        host[0].dtype if host else numpy.float64))
    for index, b in zip(indices, host):
        out[index] = b
    return backend.device_put(out, sharding._device())


def make_array_from_callback(shape: Sequence[int], sharding: Sharding,
                             data_callback: Any, dtype: Any = None) -> Any:
    """An array of ``shape`` laid out by ``sharding``, each device's block given by
    ``data_callback(index)`` (``jax.make_array_from_callback``; called once per device, as
    JAX does, and assembled on the one device).

    Example:
        >>> import numpy as np
        >>> g = np.arange(8.0).reshape(4, 2)
        >>> mesh = Mesh(np.array(["cpu"] * 2), ("x",))
        >>> make_array_from_callback((4, 2), NamedSharding(mesh, PartitionSpec("x")),
        ...                          lambda idx: g[idx]).tolist()
        [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [6.0, 7.0]]
    """
    blocks = [data_callback(index) for index in shard_indices(sharding, shape)]
    return _assembled(shape, sharding, blocks, dtype, "make_array_from_callback")


def make_array_from_single_device_arrays(shape: Sequence[int], sharding: Sharding,
                                         arrays: Sequence[Any], *, dtype: Any = None) -> Any:
    """The array of ``shape`` whose blocks, one per device of ``sharding`` in mesh order,
    are ``arrays`` (``jax.make_array_from_single_device_arrays``).

    Example:
        >>> import numpy as np
        >>> mesh = Mesh(np.array(["cpu"] * 2), ("x",))
        >>> make_array_from_single_device_arrays(
        ...     (4,), NamedSharding(mesh, PartitionSpec("x")), [np.zeros(2), np.ones(2)]).tolist()
        [0.0, 0.0, 1.0, 1.0]
    """
    return _assembled(shape, sharding, list(arrays), dtype,
                      "make_array_from_single_device_arrays")


def make_array_from_process_local_data(sharding: Sharding, local_data: Any,
                                       global_shape: Sequence[int] | None = None) -> Any:
    """``jax.make_array_from_process_local_data`` for funcgrad's one process: its local data
    is the whole array, laid out by ``sharding`` (checked) on the mesh's device.

    Example:
        >>> import numpy as np
        >>> mesh = Mesh(np.array(["cpu"] * 2), ("x",))
        >>> make_array_from_process_local_data(
        ...     NamedSharding(mesh, PartitionSpec("x")), np.arange(4.0)).tolist()
        [0.0, 1.0, 2.0, 3.0]
    """
    shape = tuple(numpy.shape(local_data) if not hasattr(local_data, "shape")
                  else local_data.shape)
    if global_shape is not None and tuple(global_shape) != shape:
        raise ValueError(f"make_array_from_process_local_data: global_shape {tuple(global_shape)}"
                         f" differs from the local data's {shape}; with one process they are "
                         "the same array")
    sharding.check_shape(shape)
    return backend.device_put(local_data, sharding._device())


# ShapeDtypeStruct(sharding=...) takes these (avals sits below this module).
avals.sharding_types.extend((Sharding, PartitionSpec))
avals.format_types.append(Format)
