"""``torch.nn.utils.parametrize``: parametrizations of your own on any parameter or buffer
(``register_parametrization``), chained, and ``remove_parametrizations`` (which also folds
the built-in :mod:`.parametrizations` such as ``weight_norm``), with PyTorch's state-dict names
(``parametrizations.<name>.original``, the parametrizations' own state under
``parametrizations.<name>.<i>``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import funcgrad.numpy as fnp
from funcgrad_nn.module import Module, Parameter
from funcgrad_nn.utils.parametrizations import (
    ParametrizationList,
    _parametrize,
    is_parametrized,
    name_own_class,
    parametrization_cache,
)

__all__ = ["ParametrizationList", "cached", "is_parametrized", "register_parametrization",
           "remove_parametrizations", "transfer_parametrizations_and_params",
           "type_before_parametrizations"]


def _check_same(before: Any, after: Any) -> None:
    if fnp.shape(before) != fnp.shape(after) or before.dtype != after.dtype:
        raise ValueError(
            "Registering a parametrization may not change the shape or dtype of the tensor, "
            "unless `unsafe` flag is enabled.\n"
            f"unparametrized dtype: {before.dtype}\nparametrized dtype: {after.dtype}\n"
            f"unparametrized shape: {tuple(fnp.shape(before))}\n"
            f"parametrized shape: {tuple(fnp.shape(after))}")


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *,
                             unsafe: bool = False) -> Module:
    """Make ``module.<tensor_name>`` read ``parametrization(original)``; a second call on the
    same name applies the new parametrization after the first. A ``right_inverse(value)``
    method on the parametrization gives the original(s) stored (a tuple: ``original0``,
    ``original1``, ...). Unless ``unsafe``, the result must keep the shape and dtype.

    >>> import numpy as np, funcgrad_nn as nn
    >>> class Symmetric(nn.Module):
    ...     def forward(self, x):
    ...         return np.triu(x) + np.triu(x, 1).T
    >>> lin = register_parametrization(nn.Linear(3, 3), "weight", Symmetric())
    >>> bool((lin.weight == lin.weight.T).all()), sorted(lin.state_dict())
    (True, ['bias', 'parametrizations.weight.original'])
    """
    if not isinstance(parametrization, Module):
        raise TypeError("register_parametrization: the parametrization must be a Module, "
                        f"got {type(parametrization).__name__}")
    if is_parametrized(module, tensor_name):
        plist = module.parametrizations[tensor_name]
        if not unsafe:
            current = getattr(module, tensor_name)
            _check_same(current, parametrization(current))
        plist.append(parametrization)
        plist.unsafe |= unsafe
        return module
    if module._parameters.get(tensor_name) is not None:
        value = module._parameters[tensor_name]
        trainable = tensor_name not in module._frozen
        wrap = lambda x: Parameter(x, trainable)  # noqa: E731
    elif module._buffers.get(tensor_name) is not None:
        value = module._buffers[tensor_name]
        wrap = lambda x: x  # noqa: E731
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a "
                         f"parametrized element with name '{tensor_name}'")
    original = value
    right_inverse = getattr(parametrization, "right_inverse", None)
    if right_inverse is not None:
        try:
            original = right_inverse(value)
        except NotImplementedError:  # as PyTorch: then the original is the value itself
            pass
    if isinstance(original, tuple | list):
        originals = {f"original{i}": wrap(x) for i, x in enumerate(original)}
    else:
        originals = {"original": wrap(original)}
    if not unsafe:
        raw = [o.data if isinstance(o, Parameter) else o for o in originals.values()]
        _check_same(value, parametrization(*raw))
    delattr(module, tensor_name)
    _parametrize(module, tensor_name, parametrization, originals, "register_parametrization")
    module.parametrizations[tensor_name].unsafe = unsafe
    return module


def remove_parametrizations(module: Module, tensor_name: str,
                            leave_parametrized: bool = True) -> Module:
    """Make ``module.<tensor_name>`` a plain parameter (or buffer) again: its current value,
    or (``leave_parametrized=False``) its single original. The module gets its class back
    when no parametrization is left.

    >>> import funcgrad_nn as nn
    >>> from funcgrad_nn.utils.parametrizations import weight_norm
    >>> lin = remove_parametrizations(weight_norm(nn.Linear(3, 2)), "weight")
    >>> type(lin).__name__, sorted(lin.state_dict())
    ('Linear', ['bias', 'weight'])
    """
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    first = plist._names[0]
    is_param = first in plist._parameters
    trainable = first not in plist._frozen
    if leave_parametrized:
        value = getattr(module, tensor_name)
    else:
        if len(plist._names) != 1:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor "
                             "that is parametrized in terms of a sequence of tensors.")
        value = getattr(plist, first)
    del module.parametrizations._modules[tensor_name]
    cls = type(module)
    delattr(cls, tensor_name)
    if not module.parametrizations._modules:
        delattr(module, "parametrizations")
        if not any(isinstance(v, property) for v in vars(cls).values()):
            module.__class__ = cls.__bases__[0]
        else:  # pruned or a hook-based norm still: the class keeps its base's name
            name_own_class(module)
    if is_param:
        module.register_parameter(tensor_name, Parameter(value, trainable))
    else:
        module.register_buffer(tensor_name, value)
    return module


def transfer_parametrizations_and_params(from_module: Module, to_module: Module,
                                         tensor_name: str | None = None) -> Module:
    """Give ``to_module`` the parametrizations of ``from_module`` (all, or ``tensor_name``'s):
    the same parametrization modules, and originals that are ``from_module``'s arrays (so
    both modules share them), as ``torch.nn.utils.parametrize``'s.

    >>> import numpy as np, funcgrad_nn as nn
    >>> from funcgrad_nn.utils.parametrizations import weight_norm
    >>> src, dst = weight_norm(nn.Linear(3, 2)), nn.Linear(3, 2)
    >>> dst = transfer_parametrizations_and_params(src, dst)
    >>> bool(np.array_equal(dst.weight, src.weight)), sorted(dst.state_dict())[1:]
    (True, ['parametrizations.weight.original0', 'parametrizations.weight.original1'])
    """
    if not is_parametrized(from_module):
        return to_module
    names = list(from_module.parametrizations._modules) if tensor_name is None else [tensor_name]
    for name in names:
        source = from_module.parametrizations[name]
        if not hasattr(to_module, name):
            to_module.register_parameter(name, Parameter(fnp.array(getattr(from_module, name))))
        for parametrization in source:
            register_parametrization(to_module, name, parametrization)
        target = to_module.parametrizations[name]
        for original in source._names:
            setattr(target, original, getattr(source, original))
    return to_module


def type_before_parametrizations(module: Module) -> type:
    """The module's class before it was parametrized.

    >>> import funcgrad_nn as nn
    >>> from funcgrad_nn.utils.parametrizations import weight_norm
    >>> type_before_parametrizations(weight_norm(nn.Linear(2, 2))).__name__
    'Linear'
    """
    cls = type(module)
    return cls.__bases__[0] if getattr(cls, "_funcgrad_own_class", False) else cls


@contextlib.contextmanager
def cached() -> Iterator[None]:
    """Inside the block, each parametrized attribute is computed once (on its first access)
    and reused, as PyTorch's ``parametrize.cached()`` (e.g. one power iteration of a
    spectral norm for a whole sequence). Nested blocks share the outer cache.

    >>> import numpy as np, funcgrad_nn as nn
    >>> from funcgrad_nn.utils.parametrizations import weight_norm
    >>> lin = weight_norm(nn.Linear(2, 2))
    >>> with cached():
    ...     lin.weight is lin.weight
    True
    """
    if parametrization_cache.get() is not None:
        yield
        return
    token = parametrization_cache.set({})
    try:
        yield
    finally:
        parametrization_cache.reset(token)
