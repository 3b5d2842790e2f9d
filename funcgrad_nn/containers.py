"""Sequential, ModuleList, ModuleDict, ParameterList."""

from __future__ import annotations

import collections
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from funcgrad_nn.module import Module, Parameter, is_array

__all__ = ["ModuleDict", "ModuleList", "ParameterList", "Sequential"]


def _index(idx: int, n: int, what: str) -> int:
    if not isinstance(idx, int):
        raise TypeError(f"{what} indices must be integers or slices, got {type(idx).__name__}")
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
            return Sequential(collections.OrderedDict(items[idx]))
        return items[_index(idx, len(items), "Sequential")][1]

    def __setitem__(self, idx: int, module: Module) -> None:
        key = list(self._modules)[_index(idx, len(self), "Sequential")]
        self.add_module(key, module)

    def __delitem__(self, idx: int | slice) -> None:
        keys = list(self._modules)
        for k in (keys[idx] if isinstance(idx, slice) else
                  [keys[_index(idx, len(keys), "Sequential")]]):
            del self._modules[k]

    def append(self, module: Module) -> Sequential:
        """Add a module at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

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
            return ModuleList(mods[idx])
        return mods[_index(idx, len(mods), "ModuleList")]

    def __setitem__(self, idx: int, module: Module) -> None:
        self.add_module(str(_index(idx, len(self), "ModuleList")), module)

    def __delitem__(self, idx: int) -> None:
        mods = list(self._modules.values())
        del mods[_index(idx, len(mods), "ModuleList")]
        self._modules.clear()
        self.extend(mods)

    def append(self, module: Module) -> ModuleList:
        """Add a module at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        """Append each module; returns self."""
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
        items = modules.items() if isinstance(modules, Mapping) else modules
        for k, m in items:
            self.add_module(k, m)


class ParameterList(Module):
    """A list of parameters named ``"0"``, ``"1"``, ...; indexing returns the arrays. Plain
    arrays appended become trainable parameters.

    >>> import numpy as np, funcgrad_nn as nn
    >>> pl = nn.ParameterList([np.zeros(2), nn.Parameter(np.ones(3), requires_grad=False)])
    >>> len(pl), pl[1].shape, [n for n, _ in pl.named_parameters()]
    (2, (3,), ['0'])
    """

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        if values is not None:
            self.extend(values)

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._parameters.values())

    def __getitem__(self, idx: int) -> Any:
        vals = list(self._parameters.values())
        return vals[_index(idx, len(vals), "ParameterList")]

    def __setitem__(self, idx: int, value: Any) -> None:
        i = _index(idx, len(self), "ParameterList")
        setattr(self, str(i), value if isinstance(value, Parameter) else Parameter(value))

    def append(self, value: Any) -> ParameterList:
        """Append a Parameter (or an array, made a trainable Parameter); returns self."""
        if not isinstance(value, Parameter):
            if not is_array(value):
                raise TypeError(f"ParameterList.append: expected an array or Parameter, got "
                                f"{type(value).__name__}")
            value = Parameter(value)
        self.register_parameter(str(len(self)), value)
        return self

    def extend(self, values: Iterable[Any]) -> ParameterList:
        """Append each value; returns self."""
        for v in values:
            self.append(v)
        return self
