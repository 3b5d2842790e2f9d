"""Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict (PyTorch's semantics)."""

from __future__ import annotations

import collections
import itertools
import operator
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from funcgrad_nn.module import Module, Parameter, is_array

__all__ = ["ModuleDict", "ModuleList", "ParameterDict", "ParameterList", "Sequential"]


def _renumber(mod: Module) -> None:
    # After a deletion or insertion the children are "0", "1", ... again (as PyTorch).
    mods = list(mod._modules.values())
    mod._modules.clear()
    for i, m in enumerate(mods):
        mod._modules[str(i)] = m


def _delete_children(mod: Module, idx: int | slice, what: str) -> None:
    """``del mod[idx]`` of a numbered container (Sequential, ModuleList), renumbered after."""
    keys = list(mod._modules)
    for k in (keys[idx] if isinstance(idx, slice) else [keys[_index(idx, len(keys), what)]]):
        del mod._modules[k]
    _renumber(mod)


def _check_module(module: Any, what: str) -> None:
    if not isinstance(module, Module):
        raise TypeError(f"{what}: {type(module).__name__} is not a Module subclass")


def _parameters_repr(mod: Module, items: Any = None) -> str:
    # PyTorch's ParameterList extra_repr, with NumPy dtype names (also for ParameterDict,
    # where PyTorch prints legacy tensor type names such as FloatTensor).
    lines = []
    for k, p in (mod._parameters.items() if items is None else items):
        if is_array(p):
            size = "x".join(str(n) for n in p.shape)
            lines.append(f"  ({k}): Parameter containing: [{p.dtype} of size {size}]")
        else:
            lines.append(f"  ({k}): Object of type: {type(p).__name__}")
    return "\n".join(lines)


def _index(idx: int, n: int, what: str) -> int:
    try:
        idx = operator.index(idx)
    except TypeError:
        raise TypeError(f"{what} indices must be integers or slices, got "
                        f"{type(idx).__name__}") from None
    if not -n <= idx < n:
        raise IndexError(f"index {idx} is out of range for {what} of length {n}")
    return idx % n


class Sequential(Module):
    """Chain modules: ``forward`` feeds each output to the next. Accepts modules or one
    ``OrderedDict`` of named modules.

    >>> import numpy as np, funcgrad_nn as nn
    >>> net = nn.Sequential(nn.Linear(2, 3), nn.Tanh())
    >>> len(net), type(net[1]).__name__, net(np.ones((1, 2), np.float32)).shape
    (2, 'Tanh', (1, 3))
    """

    def __init__(self, *args: Any) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], collections.OrderedDict):
            for k, m in args[0].items():
                self.add_module(k, m)
        else:
            for i, m in enumerate(args):
                self.add_module(str(i), m)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __getitem__(self, idx: int | slice) -> Any:
        items = list(self._modules.items())
        if isinstance(idx, slice):
            return type(self)(collections.OrderedDict(items[idx]))
        return items[_index(idx, len(items), "Sequential")][1]

    def __setitem__(self, idx: int, module: Module) -> None:
        key = list(self._modules)[_index(idx, len(self), "Sequential")]
        setattr(self, key, module)

    def __delitem__(self, idx: int | slice) -> None:
        _delete_children(self, idx, "Sequential")

    def pop(self, key: int | slice) -> Any:
        """Remove and return the module (or the Sequential of modules) at ``key``."""
        v = self[key]
        del self[key]
        return v

    def append(self, module: Module) -> Sequential:
        """Add a module at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index: int, module: Module) -> Sequential:
        """Insert a module before position ``index`` (``-len <= index <= len``); returns
        self.

        >>> import funcgrad_nn as nn
        >>> [type(m).__name__ for m in nn.Sequential(nn.ReLU()).insert(0, nn.Tanh())]
        ['Tanh', 'ReLU']
        """
        _check_module(module, "Sequential.insert")
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        mods = list(self._modules.values())
        mods.insert(index + n if index < 0 else index, module)
        self._modules.clear()
        for m in mods:
            self.append(m)
        return self

    def extend(self, sequential: Iterable[Module]) -> Sequential:
        """Append each module of ``sequential``; returns self."""
        for m in sequential:
            self.append(m)
        return self

    def __add__(self, other: Sequential) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError("add operator supports only objects of Sequential class, but "
                             f"{type(other)} is given.")
        return Sequential(*self, *other)

    def __iadd__(self, other: Sequential) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError("add operator supports only objects of Sequential class, but "
                             f"{type(other)} is given.")
        return self.extend(list(other))

    def _repeated(self, times: Any) -> list[Module]:
        if not isinstance(times, int) or isinstance(times, bool):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and "
                            f"{type(times)}")
        if times <= 0:
            raise ValueError(f"Non-positive multiplication factor {times} for {type(self)}")
        return list(self) * times

    def __mul__(self, times: int) -> Sequential:
        # The same module objects repeated (shared parameters), as PyTorch.
        return Sequential(*self._repeated(times))

    __rmul__ = __mul__

    def __imul__(self, times: int) -> Sequential:
        mods = self._repeated(times)
        self._modules.clear()
        return self.extend(mods)

    def forward(self, input: Any) -> Any:
        for m in self._modules.values():
            input = m(input)
        return input


class ModuleList(Module):
    """A list of submodules (registered as ``"0"``, ``"1"``, ...); no forward.

    >>> import funcgrad_nn as nn
    >>> layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    >>> len(layers), [n for n, _ in layers.named_parameters()][:2]
    (3, ['0.weight', '0.bias'])
    """

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __getitem__(self, idx: int | slice) -> Any:
        mods = list(self._modules.values())
        if isinstance(idx, slice):
            return type(self)(mods[idx])
        return mods[_index(idx, len(mods), "ModuleList")]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, str(_index(idx, len(self), "ModuleList")), module)

    def __delitem__(self, idx: int | slice) -> None:
        _delete_children(self, idx, "ModuleList")

    def pop(self, key: int | slice) -> Any:
        """Remove and return the module (or the ModuleList of modules) at ``key``."""
        v = self[key]
        del self[key]
        return v

    def __add__(self, other: Iterable[Module]) -> ModuleList:
        return ModuleList(itertools.chain(self, other))

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def __repr__(self) -> str:
        # Runs of equal reprs print once, as "(0-2): 3 x Linear(...)" (PyTorch's format).
        reprs = [repr(m) for m in self]
        if not reprs:
            return type(self).__name__ + "()"
        lines = []
        for r, run in itertools.groupby(enumerate(reprs), key=lambda ir: ir[1]):
            idx = [i for i, _ in run]
            head = f"({idx[0]})" if len(idx) == 1 else f"({idx[0]}-{idx[-1]}): {len(idx)} x"
            lines.append(f"{head}: {r}" if len(idx) == 1 else f"{head} {r}")
        body = "\n  ".join(line.replace("\n", "\n  ") for line in lines)
        return f"{type(self).__name__}(\n  {body}\n)"

    def append(self, module: Module) -> ModuleList:
        """Add a module at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        """Append each module; returns self."""
        if not isinstance(modules, Iterable):
            raise TypeError("ModuleList.extend should be called with an iterable, but got "
                            + type(modules).__name__)
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> None:
        """Insert a module before ``index``."""
        mods = list(self._modules.values())
        mods.insert(index, module)
        self._modules.clear()
        self.extend(mods)


class ModuleDict(Module):
    """An ordered dict of submodules (insertion order).

    >>> import funcgrad_nn as nn
    >>> d = nn.ModuleDict({"enc": nn.Linear(2, 2), "act": nn.ReLU()})
    >>> list(d.keys()), "enc" in d
    (['enc', 'act'], True)
    """

    def __init__(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]] | None
                 = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: object) -> bool:
        return key in self._modules

    def keys(self) -> Any:
        return self._modules.keys()

    def values(self) -> Any:
        return self._modules.values()

    def items(self) -> Any:
        return self._modules.items()

    def pop(self, key: str) -> Module:
        return self._modules.pop(key)

    def clear(self) -> None:
        self._modules.clear()

    def update(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]]) -> None:
        for k, m in _pairs(modules, "ModuleDict"):
            self.add_module(k, m)


def _pairs(items: Any, what: str) -> list[tuple[Any, Any]]:
    # ``update``'s argument: a mapping, or an iterable of (key, value) pairs (PyTorch's
    # checks and messages).
    if not isinstance(items, Iterable):
        raise TypeError(f"{what}.update should be called with an iterable of key/value "
                        f"pairs, but got {type(items).__name__}")
    if isinstance(items, (Mapping, ModuleDict, ParameterDict)):
        return list(items.items())
    pairs = []
    for j, kv in enumerate(items):
        if not isinstance(kv, Iterable):
            raise TypeError(f"{what} update sequence element #{j} should be Iterable; is"
                            f"{type(kv).__name__}")
        kv = tuple(kv)
        if len(kv) != 2:
            raise ValueError(f"{what} update sequence element #{j} has length {len(kv)}; 2 "
                             "is required")
        pairs.append(kv)
    return pairs


class ParameterList(Module):
    """A list of parameters named ``"0"``, ``"1"``, ...; indexing returns the arrays. Plain
    arrays appended become trainable parameters; as in PyTorch, a module appended becomes a
    submodule and any other object a plain attribute.

    >>> import numpy as np, funcgrad_nn as nn
    >>> pl = nn.ParameterList([np.zeros(2), nn.Parameter(np.ones(3), requires_grad=False)])
    >>> len(pl), pl[1].shape, [n for n, _ in pl.named_parameters()]
    (2, (3,), ['0'])
    """

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        self._size = 0
        if values is not None:
            self.extend(values)

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[Any]:
        return (self[i] for i in range(len(self)))

    def _entry(self, i: int) -> Any:
        """Element ``i`` as stored: a Parameter (keeping its requires_grad), a module or an
        object."""
        k = str(i)
        if k in self._parameters:
            return Parameter(self._parameters[k], requires_grad=k not in self._frozen)
        return getattr(self, k)

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            return type(self)(self._entry(i) for i in range(len(self))[idx])
        return getattr(self, str(_index(idx, len(self), "ParameterList")))

    def __iadd__(self, values: Iterable[Any]) -> ParameterList:
        return self.extend(values)

    def extra_repr(self) -> str:
        return _parameters_repr(self, [(str(i), self[i]) for i in range(len(self))])

    def __setitem__(self, idx: int, value: Any) -> None:
        self._put(_index(idx, len(self), "ParameterList"), value)

    def _put(self, i: int, value: Any) -> None:
        if is_array(value) and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, str(i), value)

    def append(self, value: Any) -> ParameterList:
        """Append a Parameter (or an array, made a trainable Parameter; a module or another
        object is kept as PyTorch keeps it); returns self."""
        i = len(self)
        self._size = i + 1
        self._put(i, value)
        return self

    def extend(self, values: Iterable[Any]) -> ParameterList:
        """Append each value; returns self."""
        if not isinstance(values, Iterable) or is_array(values):
            raise TypeError(f"ParameterList.extend should be called with an iterable, but got "
                            f"{type(values).__name__}")
        for v in values:
            self.append(v)
        return self


class _MissingKey(KeyError, AttributeError):
    """A key a ParameterDict lacks (PyTorch raises AttributeError there; a dict KeyError)."""


class ParameterDict(Module):
    """An ordered dict of parameters; indexing returns the arrays. Plain arrays stored become
    trainable parameters; as in PyTorch, a module stored becomes a submodule and any other
    object a plain attribute. A plain ``dict`` given to the constructor or ``update`` is
    added in sorted key order (an ``OrderedDict`` or pairs in their order).

    >>> import numpy as np, funcgrad_nn as nn
    >>> pd = nn.ParameterDict({"b": np.zeros(2), "a": nn.Parameter(np.ones(3))})
    >>> list(pd.keys()), pd["a"].shape, [n for n, _ in pd.named_parameters()]
    (['a', 'b'], (3,), ['a', 'b'])
    """

    def __init__(self, parameters: Any = None) -> None:
        super().__init__()
        self._keys: dict[str, None] = {}
        if parameters is not None:
            self.update(parameters)

    @staticmethod
    def _attr(key: Any) -> str:
        if not isinstance(key, str):
            raise TypeError(f"Index given to ParameterDict cannot be used as a key as it is not "
                            f"a string (type is '{type(key).__name__}')")
        return key

    def _entry(self, key: str) -> Any:
        """The value as stored: a Parameter (keeping its requires_grad), a module or an
        object."""
        if key in self._parameters:
            return Parameter(self._parameters[key], requires_grad=key not in self._frozen)
        return self[key]

    def __getitem__(self, key: str) -> Any:
        if self._attr(key) not in self._keys:
            raise _MissingKey(key)
        return getattr(self, key)

    def __setitem__(self, key: str, value: Any) -> None:
        attr = self._attr(key)
        if is_array(value) and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, attr, value)
        self._keys[key] = None

    def __delitem__(self, key: str) -> None:
        if key not in self._keys:
            raise KeyError(key)
        del self._keys[key]
        delattr(self, key)

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def extra_repr(self) -> str:
        return _parameters_repr(self, self.items())

    def __reversed__(self) -> Iterator[str]:
        return reversed(list(self._keys))

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def keys(self) -> Any:
        return self._keys.keys()

    def values(self) -> Any:
        return [self[k] for k in self._keys]

    def items(self) -> Any:
        return [(k, self[k]) for k in self._keys]

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self else default

    def pop(self, key: str) -> Any:
        v = self[key]
        del self[key]
        return v

    def popitem(self) -> tuple[str, Any]:
        if not self._keys:
            raise KeyError("popitem(): dictionary is empty")
        k = next(reversed(self._keys))
        return k, self.pop(k)

    def setdefault(self, key: str, default: Any = None) -> Any:
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        for k in list(self._keys):
            del self[k]

    def copy(self) -> ParameterDict:
        return ParameterDict(collections.OrderedDict((k, self._entry(k)) for k in self._keys))

    def fromkeys(self, keys: Any, default: Any = None) -> ParameterDict:
        """A new ParameterDict with ``keys``, each holding ``default`` (as PyTorch's).

        >>> import numpy as np, funcgrad_nn as nn
        >>> list(nn.ParameterDict().fromkeys(["w", "b"], np.zeros(2)))
        ['w', 'b']
        """
        return ParameterDict((k, default) for k in keys)

    def __or__(self, other: ParameterDict) -> ParameterDict:
        out = self.copy()
        out.update(other)
        return out

    def __ror__(self, other: ParameterDict) -> ParameterDict:
        out = other.copy()
        out.update(self)
        return out

    def __ior__(self, other: Any) -> ParameterDict:
        self.update(other)
        return self

    def update(self, parameters: Any) -> None:
        if isinstance(parameters, ParameterDict):
            pairs = [(k, parameters._entry(k)) for k in parameters._keys]
        else:
            pairs = _pairs(parameters, "ParameterDict")
            if isinstance(parameters, Mapping) and not isinstance(parameters,
                                                                  collections.OrderedDict):
                pairs.sort(key=lambda kv: kv[0])  # PyTorch sorts a plain dict's keys
        for k, v in pairs:
            self[k] = v
