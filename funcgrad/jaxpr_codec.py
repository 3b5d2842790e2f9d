"""Closed jaxprs as JSON data and back: what :mod:`funcgrad.export` writes to files.

No pickle: every value is written as plain JSON, tagged where JSON has no type of its own.

* arrays (constants) and NumPy scalars: dtype, shape and the raw little-endian bytes in base64,
  so every bit (NaN payloads, -0.0, subnormals) comes back;
* primitives: by name, looked up in :data:`funcgrad.core.primitive_registry` when loading;
* primitive params: by the **type** of each value, through :data:`type_codecs` (ints, floats,
  strings, tuples, dtypes, avals, closed jaxprs -- so the jaxprs nested in ``cond``/``scan``/
  ``while``/``jit``/``remat`` calls are written in place -- and whatever the primitives'
  blocks register, e.g. ``Slice`` for indexing). A param of one primitive that needs more
  than its type (a custom derivative rule, a Python function traced to a jaxpr when written;
  a checkpoint policy, known by name) has a codec in :data:`param_codecs`, registered in
  that primitive's block. Nothing here names a primitive.

A value no codec knows (the Python callable of a debug callback, a custom rule that cannot
be traced) is an :class:`ExportError` when writing, naming the primitive and the param; an
unknown primitive, tag or format version is an :class:`ExportError` when reading.

Example:
    >>> import numpy as np, funcgrad
    >>> closed = funcgrad.make_jaxpr(lambda x: x.sum(0) * 2.0)(np.ones((2, 3), np.float32))
    >>> data = encode_closed_jaxpr(closed)
    >>> print(decode_closed_jaxpr(data))
    { lambda ; a:f32[2,3]. let
        b:f32[3] = reduce_sum[axes=(0,)] a
        c:f32[3] = mul b 2.0:f32[]
      in (c,) }
"""

from __future__ import annotations

import base64
import collections
import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy

from funcgrad.avals import ShapedArray, float0
from funcgrad.backend import device_put, get_default_device, is_array, to_numpy
from funcgrad.core import Primitive, primitive_registry
from funcgrad.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var
from funcgrad.tree_util import transforms as tree_util  # keys are nodes here

__all__ = [
    "ExportError",
    "register_pytree_node_serialization",
    "register_namedtuple_serialization",
    "Codec",
    "type_codecs",
    "param_codecs",
    "register_type_codec",
    "register_param_codec",
    "Encoder",
    "Decoder",
    "encode_closed_jaxpr",
    "decode_closed_jaxpr",
    "encode_treedef",
    "decode_treedef",
    "encode_aval",
    "decode_aval",
]


class ExportError(ValueError):
    """A program cannot be written (a param no codec knows) or a file cannot be read (not a
    funcgrad export, another format version, an unknown primitive, a malformed entry)."""


class Codec(NamedTuple):
    """How one kind of value is written: ``encode(value, enc) -> JSON data`` and
    ``decode(data, dec) -> value``; ``tag`` names it in the file."""

    tag: str
    encode: Callable[[Any, Encoder], Any]
    decode: Callable[[Any, Decoder], Any]


#: Codecs by the Python type of a param value (looked up along the type's MRO, so a
#: subclass uses its base's codec unless it has its own).
type_codecs: dict[type, Codec] = {}
#: Codecs of one param of one primitive, ``(primitive, param name) -> Codec``, for params
#: whose type alone does not say how to write them (functions).
param_codecs: dict[tuple[Primitive, str], Codec] = {}
_by_tag: dict[str, Codec] = {}


def register_type_codec(cls: type, codec: Codec) -> None:
    """Write values of type ``cls`` with ``codec`` (in the block that defines the type).

    Example:
        >>> class Pair:
        ...     def __init__(self, a, b): self.a, self.b = a, b
        >>> register_type_codec(Pair, Codec("doc.Pair", lambda p, enc: [p.a, p.b],
        ...                                 lambda d, dec: Pair(*d)))
        >>> Decoder().value(Encoder().value(Pair(1, 2))).b
        2
    """
    type_codecs[cls] = codec
    _by_tag[codec.tag] = codec


def register_param_codec(prim: Primitive, param: str, codec: Codec) -> None:
    """Write param ``param`` of ``prim`` with ``codec`` (in the primitive's block). The codec's
    ``enc.eqn`` is the equation being written (its operands' avals, its other params)."""
    param_codecs[(prim, param)] = codec
    _by_tag[codec.tag] = codec


# ---------------------------------------------------------------------------------------------
# Avals, arrays, scalars


def _dtype_name(dt: numpy.dtype) -> str:
    return "float0" if dt == float0 else dt.name


def _dtype_of(name: Any) -> numpy.dtype:
    if name == "float0":
        return float0
    try:
        dt = numpy.dtype(name)
    except TypeError:
        raise ExportError(f"unknown dtype {name!r}") from None
    if dt.kind not in "biufc":
        raise ExportError(f"dtype {name!r} is not one funcgrad computes with")
    return dt


def encode_aval(a: ShapedArray) -> dict[str, Any]:
    """``{"shape": [...], "dtype": name, "weak": bool, "device": bool}`` (the device as
    "has one": a loaded program's values live on the device current when it is loaded).

    Example:
        >>> encode_aval(ShapedArray((2,), numpy.float32))
        {'shape': [2], 'dtype': 'float32', 'weak': False, 'device': False}
    """
    return {"shape": list(a.shape), "dtype": _dtype_name(a.dtype), "weak": a.weak_type,
            "device": a.device is not None}


def decode_aval(d: Any) -> ShapedArray:
    """The inverse of :func:`encode_aval` (a device, if any, is the current default one).

    Example:
        >>> decode_aval({"shape": [2], "dtype": "int32", "weak": False, "device": False})
        ShapedArray(int32[2])
    """
    try:
        shape = tuple(int(s) for s in d["shape"])
        return ShapedArray(shape, _dtype_of(d["dtype"]), bool(d["weak"]),
                           get_default_device() if d["device"] else None)
    except (KeyError, TypeError, ValueError) as e:
        if isinstance(e, ExportError):
            raise
        raise ExportError(f"malformed abstract value {d!r}") from None


def _encode_array(x: Any, enc: Encoder) -> dict[str, Any]:
    a = numpy.asarray(to_numpy(x))
    if a.dtype.kind not in "biufc" and a.dtype != float0:
        raise ExportError(f"an array of dtype {a.dtype} cannot be written")
    le = numpy.ascontiguousarray(a).astype(a.dtype.newbyteorder("<"), copy=False)
    return {"dtype": _dtype_name(a.dtype), "shape": list(a.shape),
            "data": base64.b64encode(le.tobytes()).decode("ascii")}


def _decode_raw(d: Any) -> numpy.ndarray:
    try:
        dt = _dtype_of(d["dtype"])
        shape = tuple(int(s) for s in d["shape"])
        raw = base64.b64decode(d["data"], validate=True)
    except (KeyError, TypeError, ValueError) as e:
        if isinstance(e, ExportError):
            raise
        raise ExportError(f"malformed array entry ({e})") from None
    if dt == float0:
        return numpy.zeros(shape, float0)
    want = math.prod(shape) * dt.itemsize
    if len(raw) != want:
        raise ExportError(f"array entry of shape {shape} and dtype {dt} holds {len(raw)} bytes, "
                          f"not {want}")
    return numpy.frombuffer(raw, dt.newbyteorder("<")).astype(dt).reshape(shape)


def _decode_array(d: Any, dec: Decoder) -> Any:
    return device_put(_decode_raw(d), get_default_device())


def _encode_scalar(x: numpy.generic, enc: Encoder) -> dict[str, Any]:
    return _encode_array(numpy.asarray(x), enc)


def _decode_scalar(d: Any, dec: Decoder) -> numpy.generic:
    a = _decode_raw(d)
    if a.shape != ():
        raise ExportError(f"a NumPy scalar entry has shape {a.shape}")
    return a[()]


def _encode_float(x: float, enc: Encoder) -> Any:
    return x.hex()  # exact, and JSON has no NaN or infinity


def _decode_float(d: Any, dec: Decoder) -> float:
    try:
        return float.fromhex(d)
    except (TypeError, ValueError):
        raise ExportError(f"malformed float entry {d!r}") from None


def _encode_complex(x: complex, enc: Encoder) -> Any:
    return [x.real.hex(), x.imag.hex()]


def _decode_complex(d: Any, dec: Decoder) -> complex:
    try:
        return complex(float.fromhex(d[0]), float.fromhex(d[1]))
    except (TypeError, ValueError, IndexError):
        raise ExportError(f"malformed complex entry {d!r}") from None


def _primitive_named(name: Any) -> Primitive:
    # The first primitive made with a name owns it (funcgrad's own are made at import); a
    # later one with the same name cannot be written (see _check_owns_name).
    for p in primitive_registry:
        if p.name == name:
            return p
    raise ExportError(
        f"unknown primitive {name!r}: it is not defined in this funcgrad (a newer version "
        "wrote the file, or the module defining it, e.g. funcgrad_nn, is not imported)"
    )


def _check_owns_name(prim: Primitive) -> None:
    if _primitive_named(prim.name) is not prim:
        raise ExportError(
            f"cannot export primitive {prim.name!r}: another primitive was made earlier with "
            "the same name, and files name primitives; give this one a unique name"
        )


def _plain(tag: str, encode: Callable[[Any], Any], decode: Callable[[Any], Any]) -> Codec:
    return Codec(tag, lambda x, enc: encode(x), lambda d, dec: decode(d))


for _cls, _codec in (
    (float, Codec("float", _encode_float, _decode_float)),
    (complex, Codec("complex", _encode_complex, _decode_complex)),
    (tuple, Codec("tuple", lambda x, enc: [enc.value(v) for v in x],
                  lambda d, dec: tuple(dec.value(v) for v in d))),
    (list, Codec("list", lambda x, enc: [enc.value(v) for v in x],
                 lambda d, dec: [dec.value(v) for v in d])),
    (dict, Codec("dict", lambda x, enc: [[enc.value(k), enc.value(v)] for k, v in x.items()],
                 lambda d, dec: {dec.value(k): dec.value(v) for k, v in d})),
    (frozenset, Codec("frozenset", lambda x, enc: sorted((enc.value(v) for v in x), key=repr),
                      lambda d, dec: frozenset(dec.value(v) for v in d))),
    (numpy.dtype, _plain("dtype", _dtype_name, _dtype_of)),
    (numpy.ndarray, Codec("array", _encode_array, _decode_array)),
    (numpy.generic, Codec("scalar", _encode_scalar, _decode_scalar)),
    (type(Ellipsis), _plain("ellipsis", lambda x: None, lambda d: Ellipsis)),
    (slice, Codec("slice", lambda x, enc: [enc.value(x.start), enc.value(x.stop),
                                           enc.value(x.step)],
                  lambda d, dec: slice(*(dec.value(v) for v in d)))),
    (Primitive, Codec("primitive", lambda p, enc: (_check_owns_name(p), p.name)[1],
                      lambda d, dec: _primitive_named(d))),
    (ShapedArray, _plain("aval", encode_aval, decode_aval)),
    (ClosedJaxpr, Codec("closed_jaxpr", lambda x, enc: enc.closed_jaxpr(x),
                        lambda d, dec: dec.closed_jaxpr(d))),
    (Jaxpr, Codec("jaxpr", lambda x, enc: enc.jaxpr(x), lambda d, dec: dec.jaxpr(d))),
):
    register_type_codec(_cls, _codec)
# A NumPy scalar *type* (numpy.float32 as a param) is written as its dtype's name.
_by_tag["scalar_type"] = _plain("scalar_type", lambda t: numpy.dtype(t).name,
                                lambda d: _dtype_of(d).type)
_JSON_NATIVE = (str, bool, int, type(None))


# ---------------------------------------------------------------------------------------------
# Encoding


class Encoder:
    """Writes values, jaxprs and closed jaxprs as JSON data. ``eqn``/``param`` name what is
    being written (for codecs that need the equation, and for error messages)."""

    def __init__(self) -> None:
        self.eqn: Eqn | None = None
        self.param: str | None = None
        #: state a codec keeps for the length of one encoding, under its own key (the
        #: custom_jvp rule codec's stack of rules being written, for recursive rules)
        self.scratch: dict[str, Any] = {}

    def _fail(self, what: str) -> ExportError:
        if self.eqn is None:
            return ExportError(f"cannot export {what}")
        return ExportError(
            f"cannot export primitive '{self.eqn.prim.name}': its parameter '{self.param}' "
            f"holds {what}, which has no serialisation codec (funcgrad.jaxpr_codec). "
            "Programs with Python callbacks (debug.callback, debug.print, hooks) cannot be "
            "exported; leave them out of the exported function"
        )

    def value(self, x: Any) -> Any:
        """``x`` as JSON data: JSON's own types as they are, others as ``{"$": tag, "v": ...}``."""
        t = type(x)
        if t in _JSON_NATIVE:
            return x
        if isinstance(x, type) and issubclass(x, numpy.generic):
            return {"$": "scalar_type", "v": numpy.dtype(x).name}
        for cls in t.__mro__:
            codec = type_codecs.get(cls)
            if codec is not None:
                return {"$": codec.tag, "v": codec.encode(x, self)}
        if is_array(x):  # a device array
            return {"$": "array", "v": _encode_array(x, self)}
        name = getattr(x, "__qualname__", None) or getattr(x, "__name__", None)
        if callable(x):
            what = (f"the Python callable {name!r}" if isinstance(name, str)
                    else f"a Python callable ({t.__module__}.{t.__qualname__})")
        else:
            what = f"{_short(x)} (a {t.__module__}.{t.__qualname__})"
        raise self._fail(what)

    def atom(self, a: Any, ids: dict[Var, int]) -> Any:
        if type(a) is Literal:
            return {"lit": self.value(a.val), "aval": encode_aval(a.aval)}
        try:
            return ids[a]
        except KeyError:
            raise ExportError(f"variable {a} is used but not defined in its jaxpr") from None

    def jaxpr(self, j: Jaxpr) -> dict[str, Any]:
        ids: dict[Var, int] = {}

        def define(v: Var) -> dict[str, Any]:
            ids[v] = len(ids)
            return encode_aval(v.aval)

        constvars = [define(v) for v in j.constvars]
        invars = [define(v) for v in j.invars]
        eqns = []
        outer, outer_param = self.eqn, self.param
        try:
            for e in j.eqns:
                _check_owns_name(e.prim)
                ins = [self.atom(a, ids) for a in e.invars]
                self.eqn = e
                params = {}
                for k, v in e.params.items():
                    self.param = k
                    codec = param_codecs.get((e.prim, k))
                    if codec is not None:
                        params[k] = {"$": codec.tag, "v": codec.encode(v, self)}
                    else:
                        params[k] = self.value(v)
                self.eqn, self.param = outer, outer_param
                eqns.append({"prim": e.prim.name, "in": ins,
                             "out": [define(v) for v in e.outvars], "params": params})
        finally:
            self.eqn, self.param = outer, outer_param
        return {"constvars": constvars, "invars": invars, "eqns": eqns,
                "outvars": [self.atom(a, ids) for a in j.outvars]}

    def closed_jaxpr(self, c: ClosedJaxpr) -> dict[str, Any]:
        return {"jaxpr": self.jaxpr(c.jaxpr), "consts": [self.value(x) for x in c.consts]}


def encode_closed_jaxpr(closed: ClosedJaxpr) -> dict[str, Any]:
    """``closed`` as JSON data (see the module docstring); raises :class:`ExportError`
    naming the primitive and param that cannot be written."""
    return Encoder().closed_jaxpr(closed)


# ---------------------------------------------------------------------------------------------
# Decoding


class Decoder:
    """Reads what :class:`Encoder` wrote."""

    def __init__(self) -> None:
        #: state a codec keeps for the length of one decoding, under its own key
        self.scratch: dict[str, Any] = {}

    def value(self, d: Any) -> Any:
        if type(d) in _JSON_NATIVE:
            return d
        if type(d) is not dict or set(d) != {"$", "v"}:
            raise ExportError(f"malformed value entry {_short(d)}")
        codec = _by_tag.get(d["$"])
        if codec is None:
            raise ExportError(
                f"unknown value kind {d['$']!r} (written by a newer funcgrad, or by a module "
                "not imported here)"
            )
        try:
            return codec.decode(d["v"], self)
        except ExportError:
            raise
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as e:
            raise ExportError(f"malformed {d['$']!r} entry {_short(d['v'])} "
                              f"({type(e).__name__}: {e})") from None

    def jaxpr(self, d: Any) -> Jaxpr:
        try:
            env: list[Var] = []

            def define(a: Any) -> Var:
                v = Var(decode_aval(a))
                env.append(v)
                return v

            def atom(a: Any) -> Any:
                if type(a) is int:
                    if not 0 <= a < len(env):
                        raise ExportError(f"variable #{a} is used before it is defined")
                    return env[a]
                return Literal(self.value(a["lit"]), decode_aval(a["aval"]))

            constvars = [define(a) for a in d["constvars"]]
            invars = [define(a) for a in d["invars"]]
            eqns = []
            for e in d["eqns"]:
                prim = _primitive_named(e["prim"])
                ins = [atom(a) for a in e["in"]]
                params = {k: self.value(v) for k, v in e["params"].items()}
                eqns.append(Eqn(prim, ins, [define(a) for a in e["out"]], params))
            outvars = [atom(a) for a in d["outvars"]]
        except (KeyError, TypeError, IndexError, AttributeError) as e:
            raise ExportError(f"malformed jaxpr entry ({type(e).__name__}: {e})") from None
        return Jaxpr(constvars, invars, outvars, eqns)

    def closed_jaxpr(self, d: Any) -> ClosedJaxpr:
        if type(d) is not dict or "jaxpr" not in d or "consts" not in d:
            raise ExportError(f"malformed closed jaxpr entry {_short(d)}")
        j = self.jaxpr(d["jaxpr"])
        consts = [self.value(c) for c in d["consts"]]
        if len(consts) != len(j.constvars):
            raise ExportError(f"a closed jaxpr has {len(j.constvars)} constvars but "
                              f"{len(consts)} constants")
        return ClosedJaxpr(j, consts)


def decode_closed_jaxpr(data: Any) -> ClosedJaxpr:
    """The closed jaxpr :func:`encode_closed_jaxpr` wrote (constants on the current default
    device); raises :class:`ExportError` on anything malformed."""
    return Decoder().closed_jaxpr(data)


def _short(d: Any) -> str:
    r = repr(d)
    return r if len(r) <= 80 else r[:77] + "..."


# ---------------------------------------------------------------------------------------------
# Pytree structures (the arguments' and results' treedefs)


class _NodeSerialization(NamedTuple):
    nodetype: type
    name: str
    serialize_auxdata: Callable[[Any], bytes]
    deserialize_auxdata: Callable[[bytes], Any]
    from_children: Callable[[Any, list], Any] | None


#: node type -> how its nodes are written, and serialized name -> the same (filled by
#: :func:`register_pytree_node_serialization`, as JAX's)
_node_serializations: dict[type, _NodeSerialization] = {}
_node_serializations_by_name: dict[str, _NodeSerialization] = {}


def register_pytree_node_serialization(
    nodetype: type, *, serialized_name: str, serialize_auxdata: Callable[[Any], bytes],
    deserialize_auxdata: Callable[[bytes], Any],
    from_children: Callable[[Any, list], Any] | None = None,
) -> type:
    """Make pytree nodes of ``nodetype`` (a registered pytree node class, or a namedtuple)
    writable in an export's argument and result structures, as
    ``jax.export.register_pytree_node_serialization``: the node is written under
    ``serialized_name`` with ``serialize_auxdata(aux)`` (bytes) and read back with
    ``deserialize_auxdata(bytes)`` and ``from_children(aux, children)`` (by default the
    pytree registration's unflatten). Returns ``nodetype`` (usable as a decorator's body).

    Example:
        >>> import numpy as np, funcgrad
        >>> @funcgrad.tree_util.register_pytree_node_class
        ... class Pair:
        ...     def __init__(self, a, b): self.a, self.b = a, b
        ...     def tree_flatten(self): return (self.a, self.b), None
        ...     @classmethod
        ...     def tree_unflatten(cls, aux, kids): return cls(*kids)
        >>> _ = register_pytree_node_serialization(
        ...     Pair, serialized_name="doc.Pair", serialize_auxdata=lambda aux: b"",
        ...     deserialize_auxdata=lambda b: None)
        >>> exp = funcgrad.export.export(lambda p: Pair(p.b, p.a))(Pair(np.ones(1), np.zeros(1)))
        >>> out = funcgrad.export.deserialize(exp.serialize())(Pair(np.ones(1), np.zeros(1)))
        >>> type(out).__name__, out.a.tolist()
        ('Pair', [0.0])
    """
    if not isinstance(nodetype, type):
        raise TypeError(f"register_pytree_node_serialization: expected a class, got "
                        f"{nodetype!r}")
    if not isinstance(serialized_name, str) or not serialized_name:
        raise TypeError("register_pytree_node_serialization: serialized_name must be a "
                        f"non-empty string, got {serialized_name!r}")
    if nodetype in _node_serializations:
        raise ValueError(f"duplicate serialization registration for type {nodetype!r}; "
                         f"it is registered as {_node_serializations[nodetype].name!r}")
    if serialized_name in _node_serializations_by_name:
        raise ValueError(f"duplicate serialization registration for serialized_name "
                         f"{serialized_name!r} (type "
                         f"{_node_serializations_by_name[serialized_name].nodetype!r})")
    if from_children is None and not tree_util.is_tree_node(nodetype):
        raise ValueError(f"register_pytree_node_serialization: {nodetype!r} is not a pytree "
                         "node type: register it with tree_util.register_pytree_node first "
                         "(or pass from_children)")
    entry = _NodeSerialization(nodetype, serialized_name, serialize_auxdata,
                               deserialize_auxdata, from_children)
    _node_serializations[nodetype] = entry
    _node_serializations_by_name[serialized_name] = entry
    return nodetype


def register_namedtuple_serialization(nodetype: type, *, serialized_name: str) -> type:
    """Make a namedtuple class writable in an export's structures so that it is read back as
    that class (an unregistered namedtuple comes back as a new class with the same name and
    fields), as ``jax.export.register_namedtuple_serialization``. Returns ``nodetype``.

    Example:
        >>> import collections
        >>> Pt = register_namedtuple_serialization(collections.namedtuple("Pt", "x y"),
        ...                                        serialized_name="doc.Pt")
        >>> decode_treedef(encode_treedef(tree_util.tree_structure(Pt(1, 2)))).node_data()[0] is Pt
        True
    """
    if not (isinstance(nodetype, type) and issubclass(nodetype, tuple)
            and hasattr(nodetype, "_fields")):
        raise ValueError(f"register_namedtuple_serialization: {nodetype!r} is not a "
                         "namedtuple class")
    fields = tuple(nodetype._fields)

    def serialize(aux: Any) -> bytes:
        return ",".join(fields).encode()

    def deserialize(blob: bytes) -> Any:
        if tuple(blob.decode().split(",")) != fields:
            raise ExportError(f"namedtuple {serialized_name!r} was written with fields "
                              f"{blob.decode()!r}; {nodetype.__name__} here has {fields}")
        return None

    return register_pytree_node_serialization(
        nodetype, serialized_name=serialized_name, serialize_auxdata=serialize,
        deserialize_auxdata=deserialize, from_children=lambda aux, kids: nodetype(*kids))


def encode_treedef(tree: Any) -> Any:
    """A treedef of tuples, lists, dicts, ``None``, namedtuples, OrderedDicts and node types
    registered with :func:`register_pytree_node_serialization` as JSON data (``"*"`` for a
    leaf); other node types raise :class:`ExportError`.

    Example:
        >>> encode_treedef(tree_util.tree_structure(((1, 2), {"w": 0}, None)))
        {'tuple': [{'tuple': ['*', '*']}, {'dict': [['w', '*']]}, None]}
    """
    data = tree.node_data()
    if data is None:
        return "*"
    kind, aux = data
    kids = [encode_treedef(c) for c in tree.children()]
    enc = Encoder()
    ser = _node_serializations.get(kind)
    if ser is not None:
        blob = ser.serialize_auxdata(aux)
        if not isinstance(blob, bytes | bytearray):
            raise ExportError(f"serialize_auxdata of {ser.name!r} returned a "
                              f"{type(blob).__name__}, not bytes")
        return {"custom": ser.name, "aux": base64.b64encode(bytes(blob)).decode("ascii"),
                "kids": kids}
    if kind is tuple:
        return {"tuple": kids}
    if kind is list:
        return {"list": kids}
    if kind is type(None):
        return None
    if kind is dict:
        return {"dict": [[enc.value(k), c] for k, c in zip(aux, kids)]}
    if isinstance(kind, type) and issubclass(kind, tuple) and hasattr(kind, "_fields"):
        return {"namedtuple": kind.__name__, "fields": list(kind._fields), "kids": kids}
    if kind.__name__ == "OrderedDict":
        return {"odict": [[enc.value(k), c] for k, c in zip(aux, kids)]}
    raise ExportError(
        f"cannot export a pytree node of type {kind.__module__}.{kind.__qualname__}: only "
        "tuples, lists, dicts, None, namedtuples, OrderedDicts and types registered with "
        "funcgrad.export.register_pytree_node_serialization are written"
    )


def decode_treedef(d: Any) -> Any:
    """The treedef :func:`encode_treedef` wrote (a namedtuple comes back as a new namedtuple
    class with the same name and fields).

    Example:
        >>> decode_treedef({"tuple": ["*", {"list": ["*"]}]})
        PyTreeDef((*, [*]))
    """
    return tree_util.tree_structure(_example(d), is_leaf=lambda x: x is _LEAF)


_LEAF = object()


def _example(d: Any) -> Any:
    dec = Decoder()
    try:
        if d == "*":
            return _LEAF
        if d is None:
            return None
        if "tuple" in d:
            return tuple(_example(c) for c in d["tuple"])
        if "list" in d:
            return [_example(c) for c in d["list"]]
        if "dict" in d:
            return {dec.value(k): _example(c) for k, c in d["dict"]}
        if "odict" in d:
            return collections.OrderedDict((dec.value(k), _example(c)) for k, c in d["odict"])
        if "custom" in d:
            ser = _node_serializations_by_name.get(d["custom"])
            if ser is None:
                raise ExportError(
                    f"the file has a pytree node serialized as {d['custom']!r}, which is not "
                    "registered here (funcgrad.export.register_pytree_node_serialization)")
            aux = ser.deserialize_auxdata(base64.b64decode(d["aux"], validate=True))
            kids = [_example(c) for c in d["kids"]]
            if ser.from_children is not None:
                return ser.from_children(aux, kids)
            kind = tree_util._raw_kind(ser.nodetype)
            return kind.unflatten(aux, kids)  # type: ignore[union-attr,misc]
        if "namedtuple" in d:
            cls = collections.namedtuple(d["namedtuple"], tuple(d["fields"]))  # type: ignore[misc]
            return cls(*(_example(c) for c in d["kids"]))
    except (TypeError, ValueError, KeyError) as e:
        if isinstance(e, ExportError):
            raise
        raise ExportError(f"malformed pytree structure entry ({e})") from None
    raise ExportError(f"malformed pytree structure entry {_short(d)}")
