"""``Module`` and ``Parameter``: PyTorch-style stateful modules that are also pytrees.

A module holds plain arrays (NumPy/CuPy, or tracers inside transforms) in three ordered
registries: ``_parameters``, ``_buffers`` and ``_modules``. Every subclass is registered as a
pytree node: the leaves are all parameters (trainable and frozen) and all buffers, in
``state_dict`` order (non-persistent buffers after the persistent ones of the same module);
everything else is static. Unflattening builds a new instance without calling ``__init__``,
so transformed code never mutates the caller's object.

>>> import numpy as np
>>> import funcgrad_nn as nn
>>> from funcgrad import tree_util
>>> class Affine(nn.Module):
...     def __init__(self):
...         super().__init__()
...         self.w = nn.Parameter(np.ones(2, dtype=np.float32))
...         self.register_buffer("count", np.zeros((), dtype=np.int64))
...     def forward(self, x):
...         return x * self.w
>>> m = Affine()
>>> [name for name, _ in m.named_parameters()]
['w']
>>> [tree_util.keystr(p, simple=True, separator=".") for p, _ in
...  tree_util.tree_leaves_with_path(m)]
['w', 'count']
"""

from __future__ import annotations

import collections
import contextvars
import itertools
import warnings
import weakref
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from typing import Any

import numpy

import funcgrad
from funcgrad import tree_util
from funcgrad.backend import (
    canonical_device,
    device_of,
    get_default_device,
    is_writeable,
    xp_for_device,
)
from funcgrad.core import EvalTrace, current_trace, is_tracer
from funcgrad.errors import ShapeError
from funcgrad_nn import hooks as _hooks
from funcgrad_nn._torch_idioms import add_torch_idiom_note
from funcgrad_nn.hooks import _global as _global_module_hooks

__all__ = ["BadInputError", "Buffer", "BufferUpdateLostWarning", "MetaArray", "Module", "Parameter", "ParameterIterator", "bad_input",
           "collect_buffer_updates", "is_array", "is_parameter_array", "module_path"]

# The modules whose forward is running, outermost first: lets a layer name its place in the
# user's model ("Tagger.encoder.layers.0.self_attn") in an error message.
_CALL_STACK: contextvars.ContextVar[tuple[Any, ...]] = contextvars.ContextVar(
    "funcgrad_nn_call_stack", default=())


#: filled by funcgrad_nn.transforms (which builds on this module): the function that runs a
#: compiled module's call, ``caller(module, args, kwargs)`` (see ``Module.compile``)
_COMPILED_CALLER: list[Callable[[Any, tuple, dict], Any]] = []

#: the concrete arrays registered as some module's parameter (by id, held weakly): lets the
#: in-place gradient utilities (``clip_grad_norm_`` and friends) refuse
#: ``list(model.parameters())``, which in PyTorch means "their .grad" but here would change the
#: weights themselves. Filled where a module takes a parameter array (assignment,
#: ``load_state_dict(assign=True)``, ``to()``/``double()``, copy/pickle), not by pytree
#: unflattening, which is how gradient modules are built.
_PARAMETER_ARRAYS: weakref.WeakValueDictionary[int, Any] = weakref.WeakValueDictionary()


def _note_parameter(value: Any) -> Any:
    """Record ``value`` (a parameter array being stored) in :data:`_PARAMETER_ARRAYS`."""
    if value is not None and not is_tracer(value):
        try:
            _PARAMETER_ARRAYS[id(value)] = value
        except TypeError:  # an array type without weak references: not tracked
            pass
    return value


#: every live module built by ``Module.__init__`` or copy/pickle (by id, held weakly), not the
#: gradient modules that pytree unflattening builds: lets an optimizer given plain parameter
#: arrays find the model a Module-shaped gradient mirrors and match its entries to the arrays
#: by identity, as PyTorch matches ``.grad`` (see ``Optimizer._identity_paths_in``).
_LIVE_MODULES: weakref.WeakValueDictionary[int, Any] = weakref.WeakValueDictionary()


#: filled by funcgrad_nn.parameter (which builds on this module): ``view(module, name, array,
#: kind)``, what reading an uninitialised placeholder off a module returns (an
#: UninitializedParameter/UninitializedBuffer whose ``materialize`` replaces the entry)
_PLACEHOLDER_VIEW: list[Callable[[Any, str, Any, str], Any]] = []


#: the empty placeholder arrays that stand for PyTorch's UninitializedParameter /
#: UninitializedBuffer (a lazy layer's before its first call), per kind, by id, held weakly.
#: ``to()``/``double()``/... of a placeholder is a placeholder too (``_apply_arrays``), so
#: where and in what dtype the first call creates the real arrays follows those calls.
_PLACEHOLDERS: dict[str, weakref.WeakValueDictionary[int, Any]] = {
    "parameter": weakref.WeakValueDictionary(), "buffer": weakref.WeakValueDictionary()}


class MetaArray(numpy.ndarray):
    """A parameter or buffer on PyTorch's ``"meta"`` device (``module.to("meta")``): shape
    and dtype only, no data (a read-only view of one zero, every stride 0). A module holding
    one is a template: ``functional_call`` runs it with real arrays (the torch.func
    model-ensembling recipe); calling it directly, or computing with the array, raises
    PyTorch's ``RuntimeError``; ``to_empty(device=...)`` gives it real (uninitialised)
    arrays.

    >>> import funcgrad_nn as nn
    >>> w = nn.Linear(2, 3).to("meta").weight
    >>> w
    MetaArray(..., device='meta', shape=(3, 2), dtype=float32)
    >>> w.device, w.nbytes == 24
    ('meta', True)
    """

    device = "meta"  # (numpy's array-API attribute says "cpu")

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"Tensor on device meta is not on the expected device cpu! "
                           f"({ufunc.__name__} of a MetaArray: it has no data)")

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        raise RuntimeError(f"Tensor on device meta is not on the expected device cpu! "
                           f"({func.__name__} of a MetaArray: it has no data)")

    def __repr__(self) -> str:
        return f"MetaArray(..., device='meta', shape={self.shape}, dtype={self.dtype})"

    __str__ = __repr__


def meta_array(shape: tuple[int, ...], dtype: Any) -> MetaArray:
    """A :class:`MetaArray` of ``shape`` and ``dtype`` (no memory beyond one element)."""
    one = numpy.zeros((), numpy.dtype(dtype))
    view = numpy.lib.stride_tricks.as_strided(one, tuple(shape), (0,) * len(shape),
                                              writeable=False)
    return view.view(MetaArray)


def mark_uninitialized(x: Any, kind: str) -> Any:
    """Record the array ``x`` as an uninitialised ``kind`` (``"parameter"``/``"buffer"``)
    placeholder (see :func:`placeholder_kind`); returns ``x``."""
    try:
        _PLACEHOLDERS[kind][id(x)] = x
    except TypeError:  # an array type without weak references: not tracked
        pass
    return x


def placeholder_kind(x: Any) -> str | None:
    """``"parameter"`` or ``"buffer"`` when ``x`` is (the very object of) an uninitialised
    placeholder array, else None.

    >>> import numpy as np, funcgrad_nn as nn
    >>> placeholder_kind(nn.LazyLinear(3)._parameters["weight"]), placeholder_kind(np.zeros(0))
    ('parameter', None)
    """
    for kind, table in _PLACEHOLDERS.items():
        try:
            if table.get(id(x)) is x:
                return kind
        except TypeError:
            return None
    return None


def is_parameter_array(x: Any) -> bool:
    """True when ``x`` is (the very object of) a parameter array held by a module.

    >>> import numpy as np, funcgrad_nn as nn
    >>> m = nn.Linear(2, 1)
    >>> is_parameter_array(m.weight), is_parameter_array(np.zeros(2))
    (True, False)
    """
    try:
        return _PARAMETER_ARRAYS.get(id(x)) is x
    except TypeError:
        return False


def is_array(x: Any) -> bool:
    """True for anything array-like a module may hold as a parameter/buffer (not Python scalars).

    >>> import numpy as np
    >>> is_array(np.zeros(2)), is_array(3.0)
    (True, False)
    """
    return hasattr(x, "shape") and hasattr(x, "dtype")


class Parameter:
    """Marks an array as a parameter on assignment: ``self.weight = Parameter(x)``.

    The module stores the array itself (there is no tensor wrapper) plus the
    ``requires_grad`` flag; ``module.weight`` returns the array.

    >>> import numpy as np
    >>> p = Parameter(np.zeros(3), requires_grad=False)
    >>> p.requires_grad, p.data.shape
    (False, (3,))
    """

    # (__weakref__: an UninitializedParameter a module hands out is keyed weakly to its
    # owner, see funcgrad_nn.parameter)
    __slots__ = ("data", "requires_grad", "_hooks", "_attached", "__weakref__")

    def __init__(self, data: Any, requires_grad: bool = True) -> None:
        if isinstance(data, Parameter):
            data = data.data
        data = _from_torch(data)  # a PyTorch tensor, when porting: its NumPy array
        if not is_array(data):
            data = numpy.asarray(data)
        dt = getattr(data, "dtype", None)
        if requires_grad and dt is not None and numpy.dtype(dt).kind not in "fc":
            raise RuntimeError(f"Parameter: only arrays of floating point and complex dtype can "
                               f"require gradients, got dtype {numpy.dtype(dt)} (pass "
                               f"requires_grad=False for a {numpy.dtype(dt)} parameter)")
        self.data = data
        self.requires_grad = bool(requires_grad)
        self._hooks: list[Callable[..., Any]] = []
        #: per hook (by id), the module registrations made when this was assigned:
        #: ((id(module), name), handle)
        self._attached: dict[int, list[tuple[tuple[int, str], _hooks.RemovableHandle]]] = {}

    def _add_hook(self, hook: Callable[..., Any]) -> _hooks.RemovableHandle:
        self._hooks.append(hook)

        def remove() -> None:
            if hook in self._hooks:
                self._hooks.remove(hook)
            for _, h in self._attached.pop(id(hook), []):
                h.remove()

        return _hooks.RemovableHandle(remove, id(hook))

    def register_hook(self, hook: Callable[..., Any]) -> _hooks.RemovableHandle:
        """``hook(grad) -> new grad or None``, run on this parameter's total gradient in every
        backward pass once it is assigned to a module (see
        :meth:`Module.register_parameter_hook`). Returns a handle whose ``remove()`` takes the
        hook off (also from the modules it was assigned to).

        >>> import numpy as np
        >>> p = Parameter(np.ones(2))
        >>> h = p.register_hook(lambda g: g * 2)
        >>> h.remove()
        """
        if not callable(hook):
            raise TypeError(f"Parameter.register_hook: expected a callable, got "
                            f"{type(hook).__name__}")
        return self._add_hook(hook)

    def register_post_accumulate_grad_hook(self, hook: Callable[..., Any]
                                           ) -> _hooks.RemovableHandle:
        """``hook(holder)`` after this parameter's total gradient is known, in every backward
        pass; ``holder.grad`` is that gradient (PyTorch's hook receives the parameter with
        its ``.grad``). It cannot change the gradient. Returns a removable handle.

        >>> import numpy as np
        >>> h = Parameter(np.ones(2)).register_post_accumulate_grad_hook(lambda p: None)
        """
        if not callable(hook):
            raise TypeError(f"Parameter.register_post_accumulate_grad_hook: expected a "
                            f"callable, got {type(hook).__name__}")
        return self._add_hook(_hooks.post_accumulate(hook, "parameter"))

    def __repr__(self) -> str:
        return f"Parameter(shape={tuple(self.data.shape)}, dtype={self.data.dtype}, " \
               f"requires_grad={self.requires_grad})"


class Buffer:
    """Marks an array as a buffer on assignment, as ``torch.nn.Buffer``:
    ``self.mean = Buffer(x)`` is ``self.register_buffer("mean", x)`` (``persistent=False``:
    left out of ``state_dict``). The module stores the array itself.

    >>> import numpy as np, funcgrad_nn as nn
    >>> m = nn.Module()
    >>> m.mean = nn.Buffer(np.zeros(2))
    >>> m.step = nn.Buffer(np.zeros(()), persistent=False)
    >>> [n for n, _ in m.named_buffers()], list(m.state_dict())
    (['mean', 'step'], ['mean'])
    """

    __slots__ = ("data", "persistent", "__weakref__")

    def __init__(self, data: Any = None, *, persistent: bool = True) -> None:
        if isinstance(data, Buffer):
            data = data.data
        if data is None:
            data = numpy.zeros((0,), numpy.float32)  # PyTorch's Buffer() is an empty tensor
        else:
            data = _from_torch(data)
            if not is_array(data):
                data = numpy.asarray(data)
        self.data = data
        self.persistent = bool(persistent)

    def __repr__(self) -> str:
        return f"Buffer(shape={tuple(self.data.shape)}, dtype={self.data.dtype}, " \
               f"persistent={self.persistent})"


_REGISTRIES = ("_parameters", "_buffers", "_modules")
_INTERNAL = frozenset(
    ("_parameters", "_buffers", "_modules", "_frozen", "_non_persistent", "_forward_hooks",
     "_forward_pre_hooks", "_autograd_hooks", "_born_in", "_transform_copy", "_compiled",
     "_collects_writes", "_parameter_writes")
)


class Module:
    """Base class of all layers; subclass it and implement ``forward``.

    Assigning a :class:`Parameter` registers a parameter, assigning a ``Module`` registers a
    submodule, ``register_buffer`` registers a buffer; attribute access returns the plain array.

    >>> import numpy as np
    >>> import funcgrad_nn as nn
    >>> net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    >>> [n for n, _ in net.named_parameters()]
    ['0.weight', '0.bias', '2.weight', '2.bias']
    >>> net(np.ones((5, 3), dtype=np.float32)).shape
    (5, 1)
    """

    training: bool

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        tree_util.register_pytree_node(cls, _flatten, _unflatten, _flatten_with_keys)

    def __init__(self) -> None:
        object.__setattr__(self, "_parameters", collections.OrderedDict())
        object.__setattr__(self, "_buffers", collections.OrderedDict())
        object.__setattr__(self, "_modules", collections.OrderedDict())
        object.__setattr__(self, "_frozen", set())
        object.__setattr__(self, "_non_persistent", set())
        object.__setattr__(self, "_forward_hooks", collections.OrderedDict())
        object.__setattr__(self, "_forward_pre_hooks", collections.OrderedDict())
        object.__setattr__(self, "training", True)
        # The trace this module was made under: a traced value from a transformation that
        # started later must not be stored in it (it would outlive that transformation).
        object.__setattr__(self, "_born_in", current_trace().tag)
        _LIVE_MODULES[id(self)] = self

    # -- attribute routing ------------------------------------------------------------------

    def _check_init(self) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError(
                f"cannot assign parameters/submodules before {type(self).__name__}.__init__ "
                "called super().__init__()")

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        if isinstance(value, Parameter):
            self._check_init()
            self._remove_from(name, keep="_parameters")
            d["_parameters"][name] = _note_parameter(value.data)
            if value.requires_grad:
                d["_frozen"].discard(name)
            else:
                d["_frozen"].add(name)
            for hook in getattr(value, "_hooks", ()):
                done = value._attached.setdefault(id(hook), [])
                if not any(where == (id(self), name) for where, _ in done):  # not twice
                    done.append(((id(self), name), _hooks.add_param_hook(self, name, hook)))
        elif "_parameters" in d and name in d["_parameters"]:
            # (before the Module case, as PyTorch: a module cannot replace a parameter)
            if value is not None and not is_array(value):
                raise TypeError(
                    f"cannot assign {type(value).__name__} as parameter {name!r} "
                    "(expected an array, a Parameter or None)")
            d["_parameters"][name] = _note_parameter(value)
        elif isinstance(value, Module):
            self._check_init()
            self._remove_from(name, keep="_modules")
            d["_modules"][name] = value
        elif isinstance(value, Buffer):
            self.register_buffer(name, value.data, persistent=value.persistent)
        elif "_buffers" in d and name in d["_buffers"]:
            if value is not None and not is_array(value):
                raise TypeError(
                    f"cannot assign {type(value).__name__} as buffer {name!r} "
                    "(expected an array or None)")
            d["_buffers"][name] = storable_state_value(self, name, value)
        elif "_modules" in d and name in d["_modules"]:
            if value is not None:
                raise TypeError(
                    f"cannot assign {type(value).__name__} as child module {name!r} "
                    "(expected a Module or None)")
            d["_modules"][name] = None
        else:
            object.__setattr__(self, name, value)

    def _remove_from(self, name: str, keep: str) -> None:
        d = self.__dict__
        d.pop(name, None)
        for reg in _REGISTRIES:
            if reg != keep:
                d[reg].pop(name, None)
        if keep != "_parameters":
            d["_frozen"].discard(name)
        if keep != "_buffers":
            d["_non_persistent"].discard(name)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        if "_compiled" in state:
            state["_compiled"] = {}  # compiled programs are not pickled: a copy recompiles
        lazy = [(reg, name) for reg in ("_parameters", "_buffers")
                for name, v in state.get(reg, {}).items() if placeholder_kind(v) is not None]
        if lazy:  # the copies of uninitialised placeholders are placeholders too
            state["_lazy_placeholders"] = lazy
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        # copy.deepcopy / pickle: the copy's parameter arrays are parameters too
        state = dict(state)
        lazy = state.pop("_lazy_placeholders", ())
        self.__dict__.update(state)
        _LIVE_MODULES[id(self)] = self
        for v in state.get("_parameters", {}).values():
            _note_parameter(v)
        for reg, name in lazy:
            mark_uninitialized(state[reg][name],
                               "parameter" if reg == "_parameters" else "buffer")

    def __getattr__(self, name: str) -> Any:
        # Only called when normal lookup fails: look in the registries.
        d = self.__dict__
        for reg in _REGISTRIES:
            r = d.get(reg)
            if r is not None and name in r:
                v = r[name]
                # A lazy layer's placeholder reads as PyTorch's UninitializedParameter /
                # UninitializedBuffer (materialize(shape) works); the size test keeps the
                # lookup off every ordinary read.
                if reg != "_modules" and getattr(v, "size", 1) == 0 and _PLACEHOLDER_VIEW:
                    kind = placeholder_kind(v)
                    if kind is not None:
                        return _PLACEHOLDER_VIEW[0](self, name, v, kind)
                return v
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __delattr__(self, name: str) -> None:
        d = self.__dict__
        for reg in _REGISTRIES:
            if name in d.get(reg, ()):
                del d[reg][name]
                d["_frozen"].discard(name)
                d["_non_persistent"].discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self) -> list[str]:
        extra = itertools.chain(self._parameters, self._buffers, self._modules)
        # Not numbered children (Sequential's "0"): they are no attribute names, as PyTorch.
        return sorted(set(super().__dir__()) | {k for k in extra if not k[0].isdigit()})

    # -- registration -----------------------------------------------------------------------

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Register ``param`` (a :class:`Parameter`, or None) under ``name``.

        >>> import numpy as np
        >>> m = Module(); m.register_parameter("w", Parameter(np.ones(2)))
        >>> list(m._parameters)
        ['w']
        """
        self._check_init()
        _check_name(name, self, "parameter", "_parameters")
        if param is None:
            self._remove_from(name, keep="_parameters")
            self._parameters[name] = None
        elif not isinstance(param, Parameter):
            raise TypeError(f"register_parameter({name!r}): expected a Parameter or None, "
                            f"got {type(param).__name__}")
        else:
            setattr(self, name, param)

    def register_buffer(self, name: str, tensor: Any, persistent: bool = True) -> None:
        """Register an array as a buffer (saved in ``state_dict`` unless ``persistent=False``).

        >>> import numpy as np
        >>> m = Module(); m.register_buffer("mean", np.zeros(2))
        >>> list(m.state_dict())
        ['mean']
        """
        self._check_init()
        _check_name(name, self, "buffer", "_buffers")
        if isinstance(tensor, Buffer):
            tensor = tensor.data
        if tensor is not None and not is_array(tensor):
            raise TypeError(f"register_buffer({name!r}): expected an array or None, got "
                            f"{type(tensor).__name__}")
        self._remove_from(name, keep="_buffers")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent.discard(name)
        else:
            self._non_persistent.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        """Register a child module (or None) under ``name``.

        >>> m = Module(); m.add_module("act", Module())
        >>> list(dict(m.named_children()))
        ['act']
        """
        self._check_init()
        _check_name(name, self, "module", "_modules")
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"add_module({name!r}): {type(module).__name__} is not a Module")
        self._remove_from(name, keep="_modules")
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target: str) -> Module:
        """The submodule at dotted path ``target`` (``""`` is ``self``).

        >>> import funcgrad_nn as nn
        >>> nn.Sequential(nn.Linear(1, 1)).get_submodule("0").in_features
        1
        """
        mod: Module = self
        if target == "":
            return mod
        for part in target.split("."):
            if part in mod._modules and mod._modules[part] is not None:
                mod = mod._modules[part]
            elif hasattr(mod, part):
                raise AttributeError(f"`{part}` is not an nn.Module (in path {target!r})")
            else:
                raise AttributeError(f"{type(mod).__name__} has no attribute `{part}` "
                                     f"(in path {target!r})")
        return mod

    def set_submodule(self, target: str, module: Module, strict: bool = False) -> None:
        """Put ``module`` at dotted path ``target``, replacing the submodule there or (unless
        ``strict``) adding it to an existing parent, as PyTorch's.

        >>> import funcgrad_nn as nn
        >>> net = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
        >>> net.set_submodule("1", nn.Tanh())
        >>> net
        Sequential(
          (0): Linear(in_features=2, out_features=2, bias=True)
          (1): Tanh()
        )
        """
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        parent_path, _, name = target.rpartition(".")
        parent = self.get_submodule(parent_path)
        if strict and not hasattr(parent, name):
            raise AttributeError(f"{parent._get_name()} has no attribute `{name}`")
        if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
            raise AttributeError(f"`{name}` is not an nn.Module")
        setattr(parent, name, module)

    def _get_name(self) -> str:
        return type(self).__name__

    def _owner_of(self, target: str) -> tuple[Module, str]:
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(f"{type(mod).__name__} has no attribute `{name}` "
                                 f"(in path {target!r})")
        return mod, name

    def get_parameter(self, target: str) -> Any:
        """The parameter array at dotted path ``target`` (``"encoder.0.weight"``).

        >>> import funcgrad_nn as nn
        >>> nn.Sequential(nn.Linear(2, 3)).get_parameter("0.weight").shape
        (3, 2)
        """
        mod, name = self._owner_of(target)
        if name not in mod._parameters:
            raise AttributeError(f"`{name}` is not an nn.Parameter (in path {target!r})")
        return mod._parameters[name]

    def get_buffer(self, target: str) -> Any:
        """The buffer array at dotted path ``target`` (``"0.running_mean"``).

        >>> import funcgrad_nn as nn
        >>> nn.Sequential(nn.BatchNorm1d(3)).get_buffer("0.running_mean").shape
        (3,)
        """
        mod, name = self._owner_of(target)
        if name not in mod._buffers:
            raise AttributeError(f"`{name}` is not a buffer (in path {target!r})")
        return mod._buffers[name]

    # -- forward ----------------------------------------------------------------------------

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        # PyTorch's message (and exception type: forward is the one method a subclass must
        # define)
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                                  '"forward" function')

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if "_compiled" in self.__dict__ and _COMPILED_CALLER:
            return _COMPILED_CALLER[0](self, args, kwargs)
        return self._call_eager(args, kwargs)

    def _call_eager(self, args: tuple, kwargs: dict) -> Any:
        """The call itself (hooks and ``forward``), not compiled."""
        if "_meta" in self.__dict__:
            self._check_not_meta()
        token = _CALL_STACK.set(_CALL_STACK.get() + (self,))
        try:
            if "_autograd_hooks" in self.__dict__ or _global_module_hooks.get() is not None:
                return _hooks.call_module(self, args, kwargs)
            return self._call(args, kwargs)
        except Exception as e:
            # a PyTorch tensor idiom in a ported forward (x.view, x.size(), dim=): say the
            # funcgrad spelling under NumPy's message
            add_torch_idiom_note(e)
            raise
        finally:
            _CALL_STACK.reset(token)

    def compile(self, *args: Any, **kwargs: Any) -> None:
        """PyTorch's ``Module.compile()``: later calls of this module run as one compiled
        program (``funcgrad_nn.jit`` with the module as an argument: parameters are inputs,
        buffer updates are written back; hooks run inside). Array arguments (and pytrees of
        them) are traced; other arguments are static, so a new value recompiles, as
        ``torch.compile`` specialises on them. A forward that needs concrete values (Python
        control flow on array contents) cannot be traced: the module then warns once and runs
        eagerly, as ``torch.compile`` falls back on a graph break. While a forward
        (pre-)hook is registered on it, a submodule or globally, calls run eagerly too (a
        hook run only while tracing would see traced values). PyTorch's ``fullgraph``,
        ``dynamic``, ``backend``, ``mode``, ``options`` are accepted and have no effect;
        ``disable=True`` turns compilation off again. Calls made inside another
        transformation (``nn.grad``, ``nn.jit``) run on its copy of the module, uncompiled
        (the enclosing transformation compiles them anyway).

        >>> import numpy as np, funcgrad_nn as nn
        >>> bn = nn.BatchNorm1d(2)
        >>> bn.compile()
        >>> bn(np.ones((4, 2), np.float32)).shape, int(bn.num_batches_tracked)
        ((4, 2), 1)
        """
        del args
        unknown = set(kwargs) - {"fullgraph", "dynamic", "backend", "mode", "options",
                                 "disable"}
        if unknown:
            raise TypeError(f"Module.compile() got unexpected keyword arguments "
                            f"{sorted(unknown)}")
        if kwargs.get("disable", False):
            self.__dict__.pop("_compiled", None)
        else:
            self.__dict__["_compiled"] = {}  # the compiled calls, by static signature

    def _check_not_meta(self) -> None:
        # A module moved to "meta" runs only with real arrays put in (functional_call)
        for kind, table in (("parameter", self._parameters), ("buffer", self._buffers)):
            for k, v in table.items():
                if isinstance(v, MetaArray):
                    raise RuntimeError(
                        f"Tensor on device meta is not on the expected device cpu! "
                        f"({type(self).__name__}'s {kind} {k!r} is on the meta device: it "
                        "has shape and dtype only. Run the module with real arrays through "
                        "funcgrad_nn.func.functional_call, or give it arrays with "
                        "to_empty(device=...) and load_state_dict)")

    def _call(self, args: tuple, kwargs: dict) -> Any:
        for hook in list(self._forward_pre_hooks.values()):
            res = hook(self, args)
            if res is not None:
                args = res if isinstance(res, tuple) else (res,)
        out = self.forward(*args, **kwargs)
        for hook in list(self._forward_hooks.values()):
            res = hook(self, args, out)
            if res is not None:
                out = res
        return out

    def register_forward_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                              with_kwargs: bool = False, always_call: bool = False
                              ) -> _hooks.RemovableHandle:
        """Call ``hook(module, args, output)`` (``with_kwargs=True``: ``hook(module, args,
        kwargs, output)``) after each forward; a non-None result replaces the output.
        ``always_call=True`` also calls it (with output None) when forward raises. Returns a
        handle with ``remove()``.

        >>> import numpy as np, funcgrad_nn as nn
        >>> m = nn.Identity()
        >>> h = m.register_forward_hook(lambda mod, args, out: out * 2)
        >>> float(m(np.float32(3.0)))
        6.0
        >>> h.remove()
        """
        handle = _hooks.add_ordered(self._forward_hooks, hook, prepend)
        if with_kwargs:
            _hooks.hook_table(self)["fwd_kwargs"][handle.id] = hook
        if always_call:
            _hooks.hook_table(self)["fwd_always"][handle.id] = hook
        return handle

    def register_forward_pre_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                                  with_kwargs: bool = False) -> _hooks.RemovableHandle:
        """Call ``hook(module, args)`` (``with_kwargs=True``: ``hook(module, args, kwargs)``
        returning None or ``(args, kwargs)``) before each forward; a non-None result replaces
        the arguments.

        >>> import funcgrad_nn as nn
        >>> h = nn.Identity().register_forward_pre_hook(lambda mod, args: None)
        >>> h.remove()
        """
        handle = _hooks.add_ordered(self._forward_pre_hooks, hook, prepend)
        if with_kwargs:
            _hooks.hook_table(self)["pre_kwargs"][handle.id] = hook
        return handle

    # -- backward and state-dict hooks (funcgrad_nn/hooks.py) --------------------------------

    def register_full_backward_hook(self, hook: Callable[..., Any], prepend: bool = False
                                    ) -> _hooks.RemovableHandle:
        """``hook(module, grad_input, grad_output) -> new grad_input or None`` in each backward
        pass (``grad_input``: gradients of the array positional inputs, ``None`` for inputs
        not differentiated). Fires under ``jit`` too, with concrete arrays.

        >>> import numpy as np, funcgrad_nn as nn
        >>> m, seen = nn.Linear(2, 1), []
        >>> h = m.register_full_backward_hook(lambda mod, gi, go: seen.append(go[0].shape))
        >>> _ = nn.grad(lambda m: m(np.ones((3, 2), np.float32)).sum())(m)
        >>> seen
        [(3, 1)]
        """
        return _hooks.add_hook(self, "full", hook, prepend)

    register_backward_hook = register_full_backward_hook

    def register_full_backward_pre_hook(self, hook: Callable[..., Any], prepend: bool = False
                                        ) -> _hooks.RemovableHandle:
        """``hook(module, grad_output) -> new grad_output or None`` before the module's
        gradients are computed in each backward pass.

        >>> import numpy as np, funcgrad_nn as nn
        >>> m = nn.Linear(2, 1, bias=False)
        >>> h = m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 0,))
        >>> g = nn.grad(lambda m: m(np.ones((1, 2), np.float32)).sum())(m)
        >>> g.weight.tolist()
        [[0.0, 0.0]]
        """
        return _hooks.add_hook(self, "full_pre", hook, prepend)

    def register_parameter_hook(self, name: str, hook: Callable[..., Any]
                                ) -> _hooks.RemovableHandle:
        """``hook(grad) -> new grad or None`` on parameter ``name``'s total gradient, once per
        backward pass (PyTorch's ``param.register_hook``; parameters here are plain arrays).

        >>> import numpy as np, funcgrad_nn as nn
        >>> m = nn.Linear(2, 1)
        >>> h = m.register_parameter_hook("bias", lambda g: g * 10)
        >>> nn.grad(lambda m: m(np.ones((1, 2), np.float32)).sum())(m).bias.tolist()
        [10.0]
        """
        return _hooks.add_param_hook(self, name, hook)

    def register_post_accumulate_grad_hook(self, name: str, hook: Callable[..., Any]
                                           ) -> _hooks.RemovableHandle:
        """``hook(holder)`` once parameter ``name``'s total gradient is known (``holder.grad``),
        in every backward pass; it observes, the gradient is unchanged.

        >>> import numpy as np, funcgrad_nn as nn
        >>> m, seen = nn.Linear(2, 1), []
        >>> _ = m.register_post_accumulate_grad_hook("bias", lambda p: seen.append(p.grad))
        >>> _ = nn.grad(lambda m: m(np.ones((3, 2), np.float32)).sum())(m)
        >>> seen
        [array([3.], dtype=float32)]
        """
        if not callable(hook):
            raise TypeError(f"register_post_accumulate_grad_hook: a hook must be callable, "
                            f"got {type(hook).__name__}")
        return _hooks.add_param_hook(self, name, _hooks.post_accumulate(hook, name))

    def register_state_dict_pre_hook(self, hook: Callable[..., Any]) -> _hooks.RemovableHandle:
        """``hook(module, prefix, keep_vars)`` before ``state_dict`` collects this module.

        >>> import funcgrad_nn as nn
        >>> m, seen = nn.Linear(1, 1), []
        >>> _ = m.register_state_dict_pre_hook(lambda mod, prefix, keep: seen.append(prefix))
        >>> _ = m.state_dict(); seen
        ['']
        """
        return _hooks.add_hook(self, "state_dict_pre", hook)

    def register_state_dict_post_hook(self, hook: Callable[..., Any]
                                      ) -> _hooks.RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata)`` after ``state_dict``; may edit
        the dict in place.

        >>> import funcgrad_nn as nn
        >>> m = nn.Linear(1, 1)
        >>> def drop_bias(mod, sd, prefix, local_metadata):
        ...     del sd[prefix + "bias"]          # in place; returning a value raises
        >>> _ = m.register_state_dict_post_hook(drop_bias)
        >>> list(m.state_dict())
        ['weight']
        """
        return _hooks.add_hook(self, "state_dict_post", hook)

    def _register_state_dict_hook(self, hook: Callable[..., Any]) -> _hooks.RemovableHandle:
        """PyTorch's older (private, still widely used) form of
        :meth:`register_state_dict_post_hook`: ``hook(module, state_dict, prefix,
        local_metadata)`` may also return a dict, which then replaces the state dict this
        module's ``state_dict()`` returns.

        >>> import funcgrad_nn as nn
        >>> m = nn.Linear(1, 1)
        >>> _ = m._register_state_dict_hook(
        ...     lambda mod, sd, prefix, meta: {k + "_x": v for k, v in sd.items()})
        >>> list(m.state_dict())
        ['weight_x', 'bias_x']
        """
        def returning(mod: Module, sd: Any, prefix: str, meta: Any) -> Any:
            return hook(mod, sd, prefix, meta)

        returning._returns_state_dict = True  # type: ignore[attr-defined]
        if not callable(hook):
            raise TypeError(f"{type(self).__name__}: a hook must be callable, got "
                            f"{type(hook).__name__}")
        return _hooks.add_hook(self, "state_dict_post", returning)

    def _register_load_state_dict_pre_hook(self, hook: Callable[..., Any],
                                           with_module: bool = False
                                           ) -> _hooks.RemovableHandle:
        """PyTorch's older (private, still widely used) form of
        :meth:`register_load_state_dict_pre_hook`: ``hook(state_dict, prefix, local_metadata,
        strict, missing_keys, unexpected_keys, error_msgs)``, with the module first when
        ``with_module``.

        >>> import funcgrad_nn as nn
        >>> m, seen = nn.Linear(1, 1), []
        >>> _ = m._register_load_state_dict_pre_hook(lambda sd, prefix, *rest: seen.append(prefix))
        >>> _ = m.load_state_dict(m.state_dict()); seen
        ['']
        """
        if not callable(hook):
            raise TypeError(f"{type(self).__name__}: a hook must be callable, got "
                            f"{type(hook).__name__}")
        if with_module:
            return _hooks.add_hook(self, "load_pre", hook)

        def without_module(mod: Module, *args: Any) -> Any:
            return hook(*args)

        return _hooks.add_hook(self, "load_pre", without_module)

    def register_load_state_dict_pre_hook(self, hook: Callable[..., Any]
                                          ) -> _hooks.RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` before loading; may edit the (copied) state dict.

        >>> import funcgrad_nn as nn
        >>> m = nn.Linear(1, 1)
        >>> h = m.register_load_state_dict_pre_hook(lambda *a: None); h.remove()
        """
        return _hooks.add_hook(self, "load_pre", hook)

    def register_load_state_dict_post_hook(self, hook: Callable[..., Any]
                                           ) -> _hooks.RemovableHandle:
        """``hook(module, incompatible_keys)`` after ``load_state_dict``; it may edit
        ``incompatible_keys.missing_keys`` / ``unexpected_keys`` (with ``strict``, keys left
        there raise).

        >>> import funcgrad_nn as nn
        >>> a, seen = nn.Linear(1, 1), []
        >>> _ = a.register_load_state_dict_post_hook(lambda mod, keys: seen.append(keys))
        >>> _ = a.load_state_dict(nn.Linear(1, 1).state_dict()); seen
        [<All keys matched successfully>]
        """
        return _hooks.add_hook(self, "load_post", hook)

    # -- iteration --------------------------------------------------------------------------

    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        """(dotted name, module) for this module and all descendants, depth-first.

        >>> import funcgrad_nn as nn
        >>> [n for n, _ in nn.Sequential(nn.Linear(1, 1)).named_modules()]
        ['', '0']
        """
        if memo is None:
            memo = set()
        if remove_duplicate:
            if self in memo:  # the modules themselves, as PyTorch (a caller may pass some)
                return
            memo.add(self)
        yield prefix, self
        for name, mod in self._modules.items():
            if mod is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from mod.named_modules(memo, sub, remove_duplicate)

    def modules(self, remove_duplicate: bool = True) -> Iterator[Module]:
        """All modules in the tree (self first; a shared one once unless
        ``remove_duplicate=False``).

        >>> import funcgrad_nn as nn
        >>> len(list(nn.Sequential(nn.ReLU(), nn.ReLU()).modules()))
        3
        """
        for _, m in self.named_modules(remove_duplicate=remove_duplicate):
            yield m

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """(name, module) for the direct children.

        >>> import funcgrad_nn as nn
        >>> [n for n, _ in nn.Sequential(nn.ReLU()).named_children()]
        ['0']
        """
        seen: set[int] = set()
        for name, mod in self._modules.items():
            if mod is not None and id(mod) not in seen:
                seen.add(id(mod))
                yield name, mod

    def children(self) -> Iterator[Module]:
        """The direct children.

        >>> import funcgrad_nn as nn
        >>> len(list(nn.Sequential(nn.ReLU()).children()))
        1
        """
        for _, m in self.named_children():
            yield m

    def _named_members(self, reg: str, prefix: str, recurse: bool,
                       keep: Callable[[Module, str], bool],
                       remove_duplicate: bool = True) -> Iterator[tuple[str, Any]]:
        for full, _, _, v in self._members(reg, prefix, recurse, keep, remove_duplicate):
            yield full, v

    def _members(self, reg: str, prefix: str, recurse: bool,
                 keep: Callable[[Module, str], bool], remove_duplicate: bool = True
                 ) -> Iterator[tuple[str, Module, str, Any]]:
        # (dotted name, owning module, local name, array): the one walk over the registries.
        seen: set[int] = set()
        mods = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
                if recurse else [(prefix, self)])
        for mprefix, mod in mods:
            for name, v in getattr(mod, reg).items():
                if v is None or not keep(mod, name):
                    continue
                if remove_duplicate:
                    # Tied arrays (the same object under several names) count once, at
                    # their first name, as in PyTorch.
                    if id(v) in seen:
                        continue
                    seen.add(id(v))
                yield mprefix + ("." if mprefix else "") + name, mod, name, v

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True, include_frozen: bool = False
                         ) -> Iterator[tuple[str, Any]]:
        """(dotted name, array) for the trainable parameters (all with ``include_frozen``).

        Order: depth-first, a module's own parameters before its submodules'. A tied array
        (the same object registered under several names) is yielded once, under its first
        name, unless ``remove_duplicate=False``.

        >>> import funcgrad_nn as nn
        >>> [n for n, _ in nn.Linear(2, 3).named_parameters()]
        ['weight', 'bias']
        >>> a, b = nn.Linear(2, 2, bias=False), nn.Linear(2, 2, bias=False)
        >>> b.weight = a.weight
        >>> net = nn.Sequential(a, b)
        >>> [n for n, _ in net.named_parameters()]
        ['0.weight']
        >>> [n for n, _ in net.named_parameters(remove_duplicate=False)]
        ['0.weight', '1.weight']
        """
        if include_frozen:
            return self._named_members("_parameters", prefix, recurse, lambda m, n: True,
                                       remove_duplicate)
        return self._named_members("_parameters", prefix, recurse,
                                   lambda m, n: n not in m._frozen, remove_duplicate)

    def parameters(self, recurse: bool = True) -> ParameterIterator:
        """The live trainable parameter arrays (optimizers update them in place).

        The iterator remembers which module attribute each array came from, so an optimizer
        built from ``model.parameters()`` follows the module when ``to()``/``double()``
        replace the arrays.

        >>> import funcgrad_nn as nn
        >>> [p.shape for p in nn.Linear(2, 3).parameters()]
        [(3, 2), (3,)]
        """
        return ParameterIterator(
            ((mod, name, v) for _, mod, name, v in self._members(
                "_parameters", "", recurse, lambda m, n: n not in m._frozen)),
            self if recurse else None)

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Any]]:
        """(dotted name, array) for all buffers (a shared array once unless
        ``remove_duplicate=False``).

        >>> import funcgrad_nn as nn
        >>> [n for n, _ in nn.BatchNorm1d(2).named_buffers()]
        ['running_mean', 'running_var', 'num_batches_tracked']
        """
        return self._named_members("_buffers", prefix, recurse, lambda m, n: True,
                                   remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Any]:
        """All buffer arrays.

        >>> import funcgrad_nn as nn
        >>> len(list(nn.BatchNorm1d(2).buffers()))
        3
        """
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    # -- modes and flags --------------------------------------------------------------------

    def train(self, mode: bool = True) -> Module:
        """Set training mode on this module and all descendants; returns self.

        >>> import funcgrad_nn as nn
        >>> nn.Dropout().train(False).training
        False
        """
        if not isinstance(mode, bool):
            raise ValueError(f"training mode is expected to be boolean, got "
                             f"{type(mode).__name__}")
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self) -> Module:
        """Evaluation mode (same as ``train(False)``); returns self.

        >>> import funcgrad_nn as nn
        >>> nn.Dropout().eval().training
        False
        """
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Mark every parameter trainable (or frozen); returns self.

        >>> import funcgrad_nn as nn
        >>> len(list(nn.Linear(2, 2).requires_grad_(False).parameters()))
        0
        """
        for m in self.modules():
            for name in m._parameters:
                if requires_grad:
                    m._frozen.discard(name)
                else:
                    m._frozen.add(name)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """No-op: gradients are returned by the transforms, never stored on the module.

        >>> Module().zero_grad()
        """

    def apply(self, fn: Callable[[Module], Any]) -> Module:
        """Call ``fn`` on every submodule (children first, like PyTorch) and then on self.

        >>> import funcgrad_nn as nn
        >>> names = []
        >>> _ = nn.Sequential(nn.ReLU()).apply(lambda m: names.append(type(m).__name__))
        >>> names
        ['ReLU', 'Sequential']
        """
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # -- state dict -------------------------------------------------------------------------

    #: the version of this module's state-dict layout, as PyTorch's ``Module._version``:
    #: ``state_dict()`` records it in the dict's ``_metadata``; a subclass that changes its
    #: layout increases it and converts older entries in ``_load_from_state_dict`` (which
    #: gets the saved version as ``local_metadata.get("version")``).
    _version: int = 1

    def _state_items(self, prefix: str = "", keep_vars: bool = False
                     ) -> Iterator[tuple[str, Any]]:
        for name, p in self._parameters.items():
            if p is not None:
                yield prefix + name, p
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent:
                yield prefix + name, b
        for name, m in self._modules.items():
            if m is not None:
                yield from m._state_items(prefix + name + ".", keep_vars)

    def _hooks_of(self, kind: str) -> list[Callable[..., Any]]:
        table = self.__dict__.get("_autograd_hooks")
        return list(table[kind].values()) if table else []

    def _save_to_state_dict(self, destination: dict[str, Any], prefix: str,
                            keep_vars: bool) -> None:
        """Put this module's own parameters and persistent buffers (not its children's)
        into ``destination`` under ``prefix``; override to save other state (PyTorch's hook).

        >>> import funcgrad_nn as nn
        >>> d = {}
        >>> nn.Linear(2, 3)._save_to_state_dict(d, "fc.", False)
        >>> list(d)
        ['fc.weight', 'fc.bias']
        """
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.copy()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent:
                destination[prefix + name] = b if keep_vars else b.copy()
        if _has_extra_state(self, "get_extra_state"):
            destination[prefix + _EXTRA_STATE] = self.get_extra_state()

    def get_extra_state(self) -> Any:
        """Extra (non-array) state for ``state_dict``, saved under ``"_extra_state"``: override
        it together with :meth:`set_extra_state`, as in PyTorch (the base class has none).

        >>> import funcgrad_nn as nn
        >>> class Counter(nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.calls = 0
        ...     def get_extra_state(self):
        ...         return {"calls": self.calls}
        ...     def set_extra_state(self, state):
        ...         self.calls = state["calls"]
        >>> a, b = Counter(), Counter()
        >>> a.calls = 3
        >>> b.load_state_dict(a.state_dict())
        <All keys matched successfully>
        >>> b.calls
        3
        """
        raise RuntimeError("Module.get_extra_state() is only called when a subclass "
                           "overrides it (with set_extra_state)")

    def set_extra_state(self, state: Any) -> None:
        """Take the ``"_extra_state"`` entry of a loaded state dict (see
        :meth:`get_extra_state`)."""
        raise RuntimeError("Module.set_extra_state() is only called when a subclass "
                           "overrides it (with get_extra_state)")

    def state_dict(self, *args: Any, destination: Any = None, prefix: str = "",
                   keep_vars: bool = False) -> collections.OrderedDict[str, Any]:
        """OrderedDict name -> array copy (``keep_vars=True``: the live arrays).

        PyTorch's signature: the keywords ``destination`` (a dict filled and returned),
        ``prefix`` and ``keep_vars``; positional arguments are read in that order, with
        PyTorch's ``FutureWarning`` (it is deprecating them).

        Parameters then persistent buffers, module by module, in PyTorch's order. As in
        PyTorch, each module runs its state-dict pre hooks, saves itself with
        ``_save_to_state_dict``, then its children, then its post hooks; the dict's
        ``_metadata`` maps each module's prefix (without the dot) to
        ``{"version": module._version}``.

        >>> import funcgrad_nn as nn
        >>> sd = nn.Linear(2, 3).state_dict()
        >>> list(sd), sd._metadata[""]
        (['weight', 'bias'], {'version': 1})
        """
        if args:
            if len(args) > 3:
                raise TypeError(f"Module.state_dict() takes at most 3 positional arguments "
                                f"(destination, prefix, keep_vars), got {len(args)}")
            warnings.warn("Positional args are being deprecated, use kwargs instead (as "
                          "PyTorch's Module.state_dict: destination=, prefix=, keep_vars=)",
                          FutureWarning, stacklevel=2)
            # PyTorch's rule: a positional value is used only where the keyword is unset
            if destination is None:
                destination = args[0]
            if len(args) > 1 and prefix == "":
                prefix = args[1]
            if len(args) > 2 and keep_vars is False:
                keep_vars = args[2]
        if not isinstance(prefix, str):
            raise TypeError(f"Module.state_dict: prefix must be a str, got "
                            f"{type(prefix).__name__}")
        if destination is None:
            destination = collections.OrderedDict()
            destination._metadata = collections.OrderedDict()  # type: ignore[attr-defined]
        local_metadata = {"version": self._version}
        metadata = getattr(destination, "_metadata", None)
        if metadata is not None:
            metadata[prefix[:-1]] = local_metadata
        for hook in self._hooks_of("state_dict_pre"):
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination=destination, prefix=prefix + name + ".",
                             keep_vars=keep_vars)
        for hook in self._hooks_of("state_dict_post"):
            result = hook(self, destination, prefix, local_metadata)
            if result is None:
                continue
            if not getattr(hook, "_returns_state_dict", False):
                raise RuntimeError("state_dict post-hook must return None (edit the state "
                                   "dict in place)")
            destination = result  # the private hook's replacement dict, as PyTorch
        return destination

    def _load_from_state_dict(self, state_dict: dict[str, Any], prefix: str,
                              local_metadata: dict[str, Any], strict: bool,
                              missing_keys: list[str], unexpected_keys: list[str],
                              error_msgs: list[str]) -> None:
        """Load this module's own parameters and persistent buffers from ``state_dict``
        (PyTorch's signature and contract): run the load pre hooks, record absent keys in
        ``missing_keys``, keys under ``prefix`` that name nothing here in
        ``unexpected_keys`` (when ``strict``), and problems in ``error_msgs``.
        ``local_metadata["version"]`` is the saved ``_version`` (absent in dicts without
        metadata); overrides convert older layouts by editing ``state_dict`` and then call
        ``super()._load_from_state_dict``.

        Copies are made by :meth:`load_state_dict` once every module has checked its
        entries, so an error leaves the module unchanged.
        """
        for hook in self._hooks_of("load_pre"):
            hook(self, state_dict, prefix, local_metadata, strict, missing_keys,
                 unexpected_keys, error_msgs)
        local = {k: v for k, v in self._parameters.items() if v is not None}
        local.update((k, v) for k, v in self._buffers.items()
                     if v is not None and k not in self._non_persistent)
        pending = _pending_copies.get()
        if _has_extra_state(self, "set_extra_state"):
            key = prefix + _EXTRA_STATE
            if key in state_dict:
                if pending is not None:  # set with the arrays, once every key is checked
                    pending.append((self, _EXTRA_STATE, state_dict[key]))
                else:
                    self.set_extra_state(state_dict[key])
            elif strict:
                missing_keys.append(key)
        for name, cur in local.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            new = _from_torch(state_dict[key])
            if not (hasattr(new, "shape") and hasattr(new, "dtype")
                    or isinstance(new, (int, float, complex, numpy.generic))):
                error_msgs.append(f'While copying the parameter named "{key}", expected an '
                                  f"array from the checkpoint but received "
                                  f"{type(new).__name__} {new!r:.60}")
                continue
            new_shape = tuple(getattr(new, "shape", numpy.shape(new)))
            if len(new_shape) == 1 and new_shape[0] >= 1 and tuple(cur.shape) == ():
                new, new_shape = new[0], ()  # as PyTorch: old checkpoints' 1-d scalars
            if new_shape != tuple(cur.shape):
                error_msgs.append(f"size mismatch for {key}: copying a param with shape "
                                  f"{new_shape} from checkpoint, the shape in current model "
                                  f"is {tuple(cur.shape)}.")
                continue
            if pending is not None:
                pending.append((self, name, new))
            else:  # called on its own, outside load_state_dict: copy now
                self._copy_state(name, new, {})
        if strict:
            for key in state_dict:
                if not key.startswith(prefix):
                    continue
                head, dot, _ = key[len(prefix):].partition(".")
                if (dot and head not in self._modules) or (not dot and head not in local and not (
                        head == _EXTRA_STATE and _has_extra_state(self, "set_extra_state"))):
                    unexpected_keys.append(key)

    def _assign_state(self, name: str, new: Any) -> None:
        reg = self._parameters if name in self._parameters else self._buffers
        if not is_array(new):
            new = numpy.asarray(new)
        reg[name] = _to_device_like(new, reg[name])
        if reg is self._parameters:
            _note_parameter(reg[name])

    def _copy_state(self, name: str, new: Any, replaced: dict[int, Any]) -> None:
        """Copy ``new`` into parameter/buffer ``name`` in place (read-only arrays, such as
        tied ones, get one shared replacement per original array in ``replaced``)."""
        reg = self._parameters if name in self._parameters else self._buffers
        cur = reg[name]
        new = _to_device_like(new, cur)
        if is_writeable(cur):
            cur[...] = new
        elif id(cur) in replaced:
            replaced[id(cur)][...] = new
            reg[name] = replaced[id(cur)]
        else:
            rep = replaced[id(cur)] = new.astype(cur.dtype, copy=True)
            reg[name] = rep
        if reg is self._parameters:
            _note_parameter(reg[name])

    def load_state_dict(self, state_dict: Any, strict: bool = True, assign: bool = False
                        ) -> _IncompatibleKeys:
        """Copy arrays from ``state_dict`` into this module's parameters/buffers in place.

        Names and shapes follow PyTorch; with ``strict`` missing or unexpected keys raise
        ``RuntimeError``. Returns ``(missing_keys, unexpected_keys)``. As in PyTorch, each
        module's ``_load_from_state_dict`` is called with its prefix and its entry of the
        dict's ``_metadata`` (so subclasses can convert older layouts), and the load post
        hooks (children first) may edit the incompatible keys before ``strict`` judges them.
        Nothing is copied when an error is raised. With ``assign=True`` the module takes the
        state dict's arrays themselves (their dtype; moved to the module's device) instead of
        copying into its own, as PyTorch's ``assign``.

        >>> import funcgrad_nn as nn
        >>> a, b = nn.Linear(2, 3), nn.Linear(2, 3)
        >>> b.load_state_dict(a.state_dict())
        <All keys matched successfully>
        >>> bool((a.weight == b.weight).all())
        True
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = collections.OrderedDict(state_dict)  # overrides and hooks edit a copy
        missing: list[str] = []
        unexpected: list[str] = []
        errors: list[str] = []
        pending: list[tuple[Module, str, Any]] = []
        post_hooks_ran: list[bool] = []

        def load(module: Module, local_state: dict[str, Any], prefix: str) -> None:
            local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
            module._load_from_state_dict(local_state, prefix, local_metadata, True, missing,
                                         unexpected, errors)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    load(child, {k: v for k, v in local_state.items()
                                 if k.startswith(child_prefix)}, child_prefix)
            # Post hooks run as PyTorch's: each module's right after its subtree, seeing the
            # keys found so far (the same lists: a hook clearing them clears them for all).
            for hook in module._hooks_of("load_post"):
                post_hooks_ran.append(True)
                if hook(module, _IncompatibleKeys(missing, unexpected)) is not None:
                    raise AssertionError(
                        "Hooks registered with register_load_state_dict_post_hook are not "
                        "expected to return new values, if incompatible_keys need to be "
                        "modified, it should be done inplace.")

        token = _pending_copies.set(pending)
        try:
            load(self, state_dict, "")
        finally:
            _pending_copies.reset(token)
        if strict and post_hooks_ran and (missing or unexpected):
            errors.append("(the missing / unexpected keys as a load_state_dict post hook "
                          "left them)")
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: " + ", ".join(
                    f'"{k}"' for k in unexpected) + ". ")
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: " + ", ".join(
                    f'"{k}"' for k in missing) + ". ")
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                               + "\n\t".join(errors))
        replaced: dict[int, Any] = {}
        for module, name, new in pending:
            if name == _EXTRA_STATE:
                module.set_extra_state(new)
            elif assign:
                module._assign_state(name, new)
            else:
                module._copy_state(name, new, replaced)
        return _IncompatibleKeys(missing, unexpected)

    # -- device / dtype ---------------------------------------------------------------------

    def _apply_arrays(self, fn: Callable[[Any], Any], params: bool = True,
                      buffers: bool = True, modules: list[Module] | None = None) -> Module:
        # Memoised by identity so tied arrays stay one object after to()/double()/...
        done: dict[int, tuple[Any, Any]] = {}

        def once(v: Any) -> Any:
            hit = done.get(id(v))
            if hit is None:
                hit = done[id(v)] = (v, fn(v))  # keep v alive so its id is not reused
                kind = placeholder_kind(v)
                if kind is not None:  # moved or cast, still uninitialised
                    mark_uninitialized(hit[1], kind)
                if hit[1] is not v and isinstance(v, numpy.ndarray):
                    # The old array is orphaned: an optimizer still holding it (built from
                    # a list) then fails loudly instead of training arrays nobody reads.
                    v.flags.writeable = False
            return hit[1]

        for m in self.modules() if modules is None else modules:
            if params:
                for k, v in m._parameters.items():
                    if v is not None:
                        m._parameters[k] = _note_parameter(once(v))
            if buffers:
                for k, v in m._buffers.items():
                    if v is not None:
                        m._buffers[k] = once(v)
        return self

    def to_empty(self, *, device: Any, recurse: bool = True) -> Module:
        """PyTorch's ``to_empty``: every parameter and buffer (this module's only with
        ``recurse=False``) replaced by an uninitialised array of its shape and dtype on
        ``device`` (the default device for None), to be filled afterwards
        (``load_state_dict``, an init function); returns self.

        >>> import funcgrad_nn as nn
        >>> m = nn.Linear(2, 3).to_empty(device="cpu")
        >>> m.weight.shape, m.weight.dtype
        ((3, 2), dtype('float32'))
        """
        where = get_default_device() if device is None else canonical_device(device)
        xp = xp_for_device(where)
        return self._apply(lambda a: xp.empty(a.shape, a.dtype), recurse=recurse)

    def _apply(self, fn: Callable[[Any], Any], recurse: bool = True) -> Module:
        """Replace every parameter and buffer array ``a`` by ``fn(a)`` (this module's only
        with ``recurse=False``); returns self. PyTorch's hook behind ``to()``/``half()``,
        which libraries call directly (``model._apply(lambda t: t.astype(...))``); tied
        arrays stay tied, and an optimizer built from ``model.parameters()`` follows.

        >>> import numpy as np, funcgrad_nn as nn
        >>> m = nn.Sequential(nn.Linear(2, 2))._apply(lambda a: a.astype(np.float64))
        >>> m[0].weight.dtype
        dtype('float64')
        """
        return self._apply_arrays(fn, modules=None if recurse else [self])

    def to(self, device: Any = None, dtype: Any = None, non_blocking: bool = False, *,
           memory_format: Any = None) -> Module:
        """Move every parameter/buffer to ``device`` (e.g. ``"cpu"``, ``"cuda"``) and/or
        cast floating ones to ``dtype``; replaces the arrays. PyTorch's forms: ``to(device,
        dtype)``, ``to(dtype)``, ``to(array)`` (its device and dtype); ``non_blocking`` and
        ``memory_format`` are accepted and have no effect. ``dtype`` must be a floating or
        complex one (PyTorch's TypeError otherwise). An optimizer built from
        ``model.parameters()`` follows the new arrays; the old host arrays become read-only,
        so one built from a saved list of them raises instead of training orphans.

        >>> import numpy as np, funcgrad_nn as nn
        >>> nn.Linear(2, 2).to(dtype=np.float64).weight.dtype
        dtype('float64')
        >>> nn.Linear(2, 2).to(np.zeros(1, np.float64), non_blocking=True).bias.dtype
        dtype('float64')
        """
        del non_blocking, memory_format  # (no asynchronous copies, no memory formats here)
        if is_array(device) and not isinstance(device, type):  # to(array): its device, dtype
            device, dtype = device_of(device), device.dtype
        elif device is not None and not isinstance(device, str):
            device, dtype = None, device  # to(dtype[, non_blocking])
        if dtype is not None and numpy.dtype(dtype).kind not in "fc":
            raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but "
                            f"got desired dtype={numpy.dtype(dtype)}")
        if device == "meta":
            # PyTorch's meta device: shapes and dtypes only (a template for functional_call)
            self._apply_arrays(lambda v: v if isinstance(v, MetaArray) else
                               meta_array(v.shape, v.dtype))
            for m in self.modules():
                m.__dict__["_meta"] = True
        elif device is not None:
            def move(v: Any) -> Any:
                if isinstance(v, MetaArray):
                    raise RuntimeError(
                        "Cannot copy out of meta tensor; no data! Please use "
                        "funcgrad_nn.Module.to_empty() instead of to() when moving a module "
                        "from meta to a different device.")
                return funcgrad.device_put(v, device)

            self._apply_arrays(move)
        if dtype is not None:
            dt = numpy.dtype(dtype)
            self._apply_arrays(lambda v: v if v.dtype.kind not in "fc" else
                               meta_array(v.shape, dt) if isinstance(v, MetaArray) else
                               v.astype(dt))
        return self

    def cpu(self) -> Module:
        """Move to the host (``to("cpu")``).

        >>> import funcgrad_nn as nn
        >>> nn.Linear(1, 1).cpu().weight.shape
        (1, 1)
        """
        return self.to("cpu")

    def cuda(self, device: int | None = None) -> Module:
        """Move to the GPU (needs CuPy)."""
        return self.to("cuda" if device is None else f"cuda:{device}")

    def double(self) -> Module:
        """Cast floating parameters/buffers to float64.

        >>> import funcgrad_nn as nn
        >>> nn.Linear(1, 1).double().weight.dtype
        dtype('float64')
        """
        return self.to(dtype=numpy.float64)

    def float(self) -> Module:
        """Cast floating parameters/buffers to float32.

        >>> import funcgrad_nn as nn
        >>> nn.Linear(1, 1).double().float().weight.dtype
        dtype('float32')
        """
        return self.to(dtype=numpy.float32)

    def half(self) -> Module:
        """Cast floating parameters/buffers to float16.

        >>> import funcgrad_nn as nn
        >>> nn.Linear(1, 1).half().weight.dtype
        dtype('float16')
        """
        return self.to(dtype=numpy.float16)

    def bfloat16(self) -> Module:
        """PyTorch's cast to bfloat16, which funcgrad_nn cannot do: parameters are NumPy
        (or CuPy) arrays and NumPy has no bfloat16 dtype. Raises a ``TypeError`` saying so;
        :meth:`half` (float16) is the 16-bit float there is.

        >>> import funcgrad_nn as nn
        >>> nn.Linear(1, 1).bfloat16()
        Traceback (most recent call last):
        ...
        TypeError: Module.bfloat16: funcgrad_nn has no bfloat16 dtype (parameters are NumPy/CuPy arrays and NumPy has no bfloat16); use .half() for float16 or .float() for float32
        """
        raise TypeError("Module.bfloat16: funcgrad_nn has no bfloat16 dtype (parameters are "
                        "NumPy/CuPy arrays and NumPy has no bfloat16); use .half() for float16 "
                        "or .float() for float32")

    def type(self, dst_type: Any) -> Module:
        """Cast every parameter and buffer, integer ones too (as PyTorch's ``Module.type``),
        to ``dst_type`` (a NumPy dtype or its name).

        >>> import numpy as np, funcgrad_nn as nn
        >>> nn.BatchNorm1d(2).type(np.float64).num_batches_tracked.dtype
        dtype('float64')
        """
        dt = numpy.dtype(dst_type)
        return self._apply_arrays(lambda v: v if v.dtype == dt else v.astype(dt))

    def share_memory(self) -> Module:
        """Returns self: the arrays are already visible to every thread of the process
        (PyTorch moves them to shared memory for worker processes).

        >>> import funcgrad_nn as nn
        >>> m = nn.Linear(1, 1)
        >>> m.share_memory() is m
        True
        """
        return self

    # -- repr -------------------------------------------------------------------------------

    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        lines = []
        extra = self.extra_repr()
        if extra:
            lines = extra.split("\n")
        for name, m in self._modules.items():
            sub = repr(m).replace("\n", "\n  ")
            lines.append(f"({name}): {sub}")
        main = type(self).__name__ + "("
        if lines:
            if len(lines) == 1 and not self._modules:
                main += lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"


_EXTRA_STATE = "_extra_state"  # the state_dict key of get_extra_state's value, as PyTorch's


def _has_extra_state(mod: Module, method: str) -> bool:
    """Whether ``mod``'s class overrides ``get_extra_state``/``set_extra_state``."""
    return getattr(type(mod), method) is not getattr(Module, method)


def module_path(mod: Module) -> str:
    """Where ``mod`` sits in the model being called: ``"Root.child.0.sub (Type)"``, or just
    the type name when it is called on its own (for error messages).

    >>> import funcgrad_nn as nn
    >>> module_path(nn.Linear(1, 1))
    'Linear'
    """
    stack = _CALL_STACK.get()
    own = type(mod).__name__
    at = next((i for i, m in enumerate(stack) if m is mod), 0)
    if at == 0:
        return own
    parts = [type(stack[0]).__name__]
    parent = stack[0]
    for child in stack[1:at + 1]:
        name = next((n for n, m in parent.named_modules() if m is child), None)
        if name is None:
            continue
        parts.append(name)
        parent = child
    return ".".join(parts) + f" ({own})"


class BadInputError(ShapeError, RuntimeError):
    """A module (or a functional layer op) got an input (or state, or mask) it cannot use; the
    message names the module's place in the model, what was expected, what came, and how to
    fix it. A ``ValueError`` and (as PyTorch raises there) a ``RuntimeError``."""


def bad_input(mod: Module, problem: str, fix: str) -> BadInputError:
    """The error to raise for bad input to ``mod`` (see :class:`BadInputError`).

    >>> import funcgrad_nn as nn
    >>> str(bad_input(nn.Linear(1, 1), "input: expected (*, 1), got (2, 3)", "pass 1 feature"))
    'Linear: input: expected (*, 1), got (2, 3). Fix: pass 1 feature. (at ...)'
    """
    return BadInputError(f"{module_path(mod)}: {problem}. Fix: {fix}.")


class BufferUpdateLostWarning(UserWarning):
    """A buffer (BatchNorm's running statistics, Dropout's key) was updated on the copy that a
    plain funcgrad transformation made of a module argument: the caller's module will not
    see the update (the module-aware ``funcgrad_nn.jit``/``grad``/... write it back)."""


def collect_buffer_updates(mod: Module) -> Module:
    """Mark ``mod`` (a transformation's copy of a module argument) and its submodules as
    copies whose buffer updates the caller collects and writes back (the module-aware
    transforms do): updating their buffers then does not warn. Returns ``mod``.

    >>> import funcgrad_nn as nn
    >>> collect_buffer_updates(nn.BatchNorm1d(2)).training
    True
    """
    for m in mod.modules():
        m.__dict__.pop("_transform_copy", None)
        m.__dict__["_collects_writes"] = True
    return mod


def record_parameter_write(mod: Module, name: str, value: Any) -> bool:
    """Record that ``mod``'s forward pass wrote ``value`` (traced, gradient stopped) into its
    parameter ``name`` in place, as PyTorch layers may (``Embedding``'s ``max_norm``
    renormalisation), when ``mod`` is a module-aware transform's copy: the transform writes
    it into the caller's parameter afterwards. Returns whether it was recorded (elsewhere a
    traced write has nowhere to go and is dropped).

    >>> import funcgrad_nn as nn
    >>> record_parameter_write(nn.Linear(1, 1), "weight", None)
    False
    """
    if not mod.__dict__.get("_collects_writes"):
        return False
    mod.__dict__.setdefault("_parameter_writes", {})[name] = value
    return True


def pop_parameter_writes(mod: Module) -> dict[str, Any]:
    """The parameter writes recorded on ``mod`` and its submodules (see
    :func:`record_parameter_write`) by full dotted name, removed from them.

    >>> import funcgrad_nn as nn
    >>> pop_parameter_writes(nn.Linear(1, 1))
    {}
    """
    out: dict[str, Any] = {}
    for prefix, m in mod.named_modules(remove_duplicate=False):
        for name, value in m.__dict__.pop("_parameter_writes", {}).items():
            out[(prefix + "." if prefix else "") + name] = value
    return out


def _warn_lost_update(mod: Module, name: str) -> None:
    where = mod.__dict__.pop("_transform_copy", None)
    if where is None:
        return
    warnings.warn(
        f"{module_path(mod)}: buffer {name!r} was updated on a copy of the module made inside "
        f"a plain funcgrad transformation ({where}): the copy it made of a module passed as an "
        "argument (or one rebuilt there with tree_unflatten), so the update is lost when the "
        "transformation ends and the caller's module keeps its old value. Pass the module "
        "to the module-aware funcgrad_nn.jit / funcgrad_nn.grad / funcgrad_nn.value_and_grad "
        "/ funcgrad_nn.vjp / funcgrad_nn.vmap / funcgrad_nn.checkpoint, which write buffer "
        "updates (BatchNorm running statistics, Dropout's key) back to it, or call eval() "
        "first; if the function returns the module to carry its new buffers out, filter "
        "this warning (funcgrad_nn.BufferUpdateLostWarning).", BufferUpdateLostWarning, stacklevel=4)


#: ``(id of a module's _buffers dict, name)`` of the non-persistent buffers (random layers'
#: keys) ``functional_call`` has swapped for the duration of its call: an assignment to one
#: is transient (the original comes back afterwards and functional_call drops a traced
#: update), so it may be traced
functional_call_buffers: ContextVar[frozenset[tuple[int, str]]] = ContextVar(
    "funcgrad_nn_functional_call_buffers", default=frozenset())


def storable_state_value(mod: Module, name: str, value: Any) -> Any:
    """What to store when a buffer of ``mod`` is assigned ``value``.

    Under a plain ``funcgrad.grad``/``jit`` the caller's module is not a copy, so a traced
    value (a running statistic) stored in it would outlive the transformation and break the
    module. Where the trace knows the concrete value (``grad``, ``jvp``) that value is stored,
    as PyTorch updates running statistics outside autograd; where it does not (``jit``,
    ``vmap``) this raises. The module-aware transforms pass copies made inside the
    transformation (their values stay traced) and write them back afterwards. Parameters are
    not checked: assigning a traced parameter is how a user differentiates through one.
    On a copy that a plain transformation made of a module argument the update would be
    lost: the first such update warns (:class:`BufferUpdateLostWarning`).
    """
    if (id(mod.__dict__["_buffers"]), name) in functional_call_buffers.get():
        return value
    _warn_lost_update(mod, name)
    while is_tracer(value):
        born = mod.__dict__.get("_born_in")
        trace = value._trace
        ancestor = trace.parent
        while ancestor is not None and ancestor.tag != born:
            ancestor = ancestor.parent
        if born is None or ancestor is None:
            return value  # the module was made inside this transformation: value stays local
        concrete = value.to_concrete_value()
        if concrete is None or getattr(concrete, "shape", None) != value.aval.shape:
            raise funcgrad.UnexpectedTracerError(
                f"{module_path(mod)}: {name!r} was assigned a value traced by "
                f"{trace.user_name}, but the {type(mod).__name__} was created outside that "
                "transformation; "
                "storing the tracer would break the module after it ends. Pass the module as "
                "an argument to the module-aware funcgrad_nn.jit / funcgrad_nn.grad / "
                "funcgrad_nn.value_and_grad / funcgrad_nn.vjp / funcgrad_nn.vmap / "
                "funcgrad_nn.checkpoint (for funcgrad.checkpoint) (they write buffer updates "
                "such as BatchNorm running statistics back to it), or put the module in "
                "eval() mode inside plain funcgrad transforms.")
        value = concrete
    return value


def _check_name(name: Any, mod: Module, kind: str, registry: str) -> None:
    # PyTorch's checks and messages: ``kind`` is "module", "parameter" or "buffer"; a name
    # that is already some other attribute (a method, a plain attribute, or a member of
    # another registry) is refused.
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
    if name == "":
        raise KeyError(f'{kind} name can\'t be empty string ""')
    if "." in name:
        raise KeyError(f'{kind} name can\'t contain ".", got: {name}')
    if name not in _INTERNAL and name not in mod.__dict__[registry] and hasattr(mod, name):
        raise KeyError(f"attribute {name!r} already exists")


def _from_torch(value: Any) -> Any:
    """A PyTorch tensor or ``nn.Parameter`` handed to ``load_state_dict`` (a torch model's
    ``state_dict()`` or ``named_parameters()`` in the same process, when porting) as a host
    NumPy array: detached (NumPy refuses a tensor that requires grad), on the host, and a
    bfloat16 one widened to float32, exactly (NumPy has no bfloat16; torch's ``copy_``
    into a float32 parameter does the same). torch is never imported: the type says it."""
    if not type(value).__module__.startswith("torch") or not hasattr(value, "detach"):
        return value
    tensor = value.detach()
    if getattr(tensor, "is_conj", lambda: False)():
        tensor = tensor.resolve_conj()
    tensor = tensor.cpu()
    if str(tensor.dtype) == "torch.bfloat16":
        tensor = tensor.float()
    return tensor.numpy()


def _to_device_like(new: Any, cur: Any) -> Any:
    if type(new) is not type(cur):
        if isinstance(cur, numpy.ndarray):
            new = funcgrad.to_numpy(new)
        else:
            new = funcgrad.device_put(numpy.asarray(funcgrad.to_numpy(new)),
                                      _device_name(cur))
    return new


def _device_name(x: Any) -> str:
    from funcgrad.backend import device_of  # the one public-ish door to device names

    return device_of(x)


class ParameterIterator:
    """What :meth:`Module.parameters` returns: an iterator over the parameter arrays that
    records, in ``sources``, the ``(module, attribute name)`` each yielded array came from.

    >>> import funcgrad_nn as nn
    >>> m = nn.Linear(2, 1)
    >>> it = m.parameters()
    >>> [p.shape for p in it], [name for _, name in it.sources]
    ([(1, 2), (1,)], ['weight', 'bias'])
    """

    def __init__(self, items: Iterator[tuple[Module, str, Any]],
                 root: Module | None = None) -> None:
        self._items = items
        self.sources: list[tuple[Module, str]] = []
        self.root = root  # the module whose parameters() these are

    def __iter__(self) -> ParameterIterator:
        return self

    def __next__(self) -> Any:
        mod, name, value = next(self._items)
        self.sources.append((mod, name))
        return value


#: the in-place copies that the running ``load_state_dict`` makes once every module has
#: checked its entries (None outside one)
_pending_copies: ContextVar[list[tuple[Module, str, Any]] | None] = ContextVar(
    "funcgrad_nn_pending_state_copies", default=None)


class _IncompatibleKeys(collections.namedtuple("_IncompatibleKeys",
                                               ["missing_keys", "unexpected_keys"])):
    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


# -- pytree registration ---------------------------------------------------------------------


def _static_equal(a: Any, b: Any) -> bool:
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if is_array(a):
        return False  # arrays held as plain attributes: compare by identity only
    try:
        return bool(a == b)
    except Exception:
        return False


class _ModuleAux:
    """Static part of a module node: class, registry layout, flags and plain attributes."""

    __slots__ = ("cls", "param_names", "buffer_names", "module_names", "frozen",
                 "non_persistent", "static", "hooks", "pre_hooks", "nones", "ag_hooks",
                 "_hash")

    def __init__(self, mod: Module) -> None:
        d = mod.__dict__
        self.cls = type(mod)
        self.param_names = tuple(k for k, v in d["_parameters"].items() if v is not None)
        self.buffer_names = tuple(k for k, v in d["_buffers"].items() if v is not None)
        self.module_names = tuple(k for k, v in d["_modules"].items() if v is not None)
        # Entries registered as None (e.g. Linear(bias=False).bias) are kept, not leaves.
        self.nones = tuple((reg, k) for reg in _REGISTRIES for k, v in d[reg].items()
                           if v is None)
        self.frozen = frozenset(d["_frozen"])
        self.non_persistent = frozenset(d["_non_persistent"])
        self.static = tuple((k, v) for k, v in d.items() if k not in _INTERNAL)
        # Snapshots, so hooks added later change the structure (and retrace under jit).
        self.hooks = tuple(d["_forward_hooks"].items())
        self.pre_hooks = tuple(d["_forward_pre_hooks"].items())
        self.ag_hooks = _hooks.snapshot(d.get("_autograd_hooks"))
        h = hash((self.cls, self.param_names, self.buffer_names, self.module_names,
                  self.frozen, self.non_persistent))
        for k, v in self.static:
            try:
                h ^= hash((k, v))
            except TypeError:
                h ^= hash((k, type(v)))
        self._hash = h

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _ModuleAux):
            return NotImplemented
        if self is other:
            return True
        if (self._hash != other._hash or self.cls is not other.cls
                or self.param_names != other.param_names
                or self.buffer_names != other.buffer_names
                or self.module_names != other.module_names or self.frozen != other.frozen
                or self.non_persistent != other.non_persistent
                or self.nones != other.nones or self.hooks != other.hooks or self.pre_hooks != other.pre_hooks
                or self.ag_hooks != other.ag_hooks
                or len(self.static) != len(other.static)):
            return False
        return all(ka == kb and _static_equal(va, vb)
                   for (ka, va), (kb, vb) in zip(self.static, other.static))

    def __repr__(self) -> str:
        return self.cls.__name__


def _leaf_names(aux: _ModuleAux) -> list[tuple[str, str]]:
    persistent = [n for n in aux.buffer_names if n not in aux.non_persistent]
    transient = [n for n in aux.buffer_names if n in aux.non_persistent]
    return ([("_parameters", n) for n in aux.param_names]
            + [("_buffers", n) for n in persistent] + [("_buffers", n) for n in transient]
            + [("_modules", n) for n in aux.module_names])


def _flatten(mod: Module) -> tuple[list[Any], _ModuleAux]:
    aux = _ModuleAux(mod)
    d = mod.__dict__
    return [d[reg][n] for reg, n in _leaf_names(aux)], aux


def _flatten_with_keys(mod: Module) -> tuple[list[tuple[Any, Any]], _ModuleAux]:
    aux = _ModuleAux(mod)
    d = mod.__dict__
    return [(tree_util.GetAttrKey(n), d[reg][n]) for reg, n in _leaf_names(aux)], aux


def _unflatten(aux: _ModuleAux, children: Any) -> Module:
    mod = object.__new__(aux.cls)
    d = mod.__dict__
    for k, v in aux.static:
        d[k] = v
    d["_parameters"] = collections.OrderedDict()
    d["_buffers"] = collections.OrderedDict()
    d["_modules"] = collections.OrderedDict()
    d["_frozen"] = set(aux.frozen)
    d["_non_persistent"] = set(aux.non_persistent)
    d["_forward_hooks"] = collections.OrderedDict(aux.hooks)
    d["_forward_pre_hooks"] = collections.OrderedDict(aux.pre_hooks)
    trace = current_trace()
    d["_born_in"] = trace.tag  # copies made inside a transformation belong to it
    if not isinstance(trace, EvalTrace):
        # a copy that a transformation made of a module argument: buffer updates made on it
        # are lost when the transformation ends unless a module-aware transform collects them
        # (it calls collect_buffer_updates), so the first one warns
        d["_transform_copy"] = trace.user_name
    for reg, n in aux.nones:
        d[reg][n] = None
    for (reg, n), c in zip(_leaf_names(aux), children):
        d[reg][n] = c
    if aux.ag_hooks is not None:
        table = d["_autograd_hooks"] = _hooks.restore(aux.ag_hooks)
        # Rebuilt inside a transformation: gradient hooks watch each hooked parameter.
        for n, reg in table["param"].items():
            if n in d["_parameters"]:
                d["_parameters"][n] = _hooks.hook_param(aux.cls.__name__, n,
                                                        list(reg.values()),
                                                        d["_parameters"][n])
    return mod


tree_util.register_pytree_node(Module, _flatten, _unflatten, _flatten_with_keys)
