"""optax.second_order (deprecated in optax 0.2.7, removed in 0.2.9; kept for code that still
imports it, with optax's DeprecationWarning): a Hessian-vector product, the Hessian diagonal
and the diagonal of the observed Fisher information, of ``loss(params, inputs, targets)``
over the flattened (``ravel_pytree``) parameters.

>>> import warnings
>>> import numpy as np
>>> from funcgrad_nn.optim import second_order
>>> loss = lambda p, x, y: ((x @ p["w"] - y) ** 2).sum()
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore", DeprecationWarning)
...     d = second_order.hessian_diag(loss, {"w": np.ones(2)}, np.eye(2), np.zeros(2))
>>> d
array([2., 2.])
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.flatten_util import ravel_pytree

__all__ = ["hvp", "hessian_diag", "fisher_diag"]


def _deprecated(name: str) -> None:
    warnings.warn(f"The function {name} is deprecated. This function will be/was removed in "
                  "optax 0.2.9.", DeprecationWarning, stacklevel=3)


def _ravel(p: Any) -> Any:
    return ravel_pytree(p)[0]


def _hvp(loss: Callable[..., Any], v: Any, params: Any, inputs: Any, targets: Any) -> Any:
    _, unravel = ravel_pytree(params)
    return funcgrad.jvp(funcgrad.grad(lambda p: loss(p, inputs, targets)), (params,),
                        (unravel(v),))[1]


def hvp(loss: Callable[..., Any], v: Any, params: Any, inputs: Any, targets: Any) -> Any:
    """The Hessian of ``loss`` at ``(params, inputs, targets)`` times ``v`` (a vector of the
    raveled params' size), shaped as the params (optax's deprecated ``second_order.hvp``).

    >>> import warnings
    >>> import numpy as np
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", DeprecationWarning)
    ...     hvp(lambda p, x, y: (p ** 3).sum(), np.array([1.0, 1.0]), np.array([1.0, 2.0]), 0, 0)
    array([ 6., 12.])
    """
    _deprecated("hvp")
    return _hvp(loss, v, params, inputs, targets)


def hessian_diag(loss: Callable[..., Any], params: Any, inputs: Any, targets: Any) -> Any:
    """The diagonal of the Hessian of ``loss`` over the raveled params (optax's deprecated
    ``second_order.hessian_diag``; one Hessian-vector product per parameter, vmapped)."""
    _deprecated("hessian_diag")
    n = _ravel(params).size
    vs = fnp.eye(n, dtype=_ravel(params).dtype)
    return funcgrad.vmap(lambda v: fnp.vdot(v, _ravel(_hvp(loss, v, params, inputs,
                                                            targets))))(vs)


def fisher_diag(negative_log_likelihood: Callable[..., Any], params: Any, inputs: Any,
                targets: Any) -> Any:
    """The diagonal of the observed Fisher information, the squared gradient of the negative
    log likelihood over the raveled params (optax's deprecated ``second_order.fisher_diag``).

    >>> import warnings
    >>> import numpy as np
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", DeprecationWarning)
    ...     fisher_diag(lambda p, x, y: ((p - y) ** 2).sum(), np.ones(2), 0, np.zeros(2))
    array([4., 4.])
    """
    _deprecated("fisher_diag")
    return fnp.square(_ravel(funcgrad.grad(negative_log_likelihood)(params, inputs, targets)))
