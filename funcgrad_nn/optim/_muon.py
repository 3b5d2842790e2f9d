"""optax.contrib's Muon (optax 0.2.8): momentum orthogonalized by a Newton-Schulz iteration
for matrix parameters, AdamW for the others. ``optim.torch_muon`` / ``optim.Muon`` are
PyTorch's (bfloat16 orthogonalization, its learning-rate adjustment); these follow optax:
the same arguments, state, presets, preconditionings and numbers.

The batch axes of a parameter (those that are neither its reduction nor its output axes,
per :class:`MuonDimensionNumbers`) are orthogonalized independently: the matrices are
stacked and the iteration runs on the stack with batched matmuls (optax vmaps), so it
traces once under ``jit``.

>>> import numpy as np
>>> from funcgrad_nn.optim import contrib
>>> w = np.array([[1.0, 0.0], [0.0, 2.0]])
>>> x = contrib.orthogonalize_via_newton_schulz(w, np.array(contrib.MUON_NS_COEFFS))
>>> np.round(x, 3)       # about orthogonal: singular values near 1 (optax's numbers)
array([[1.114, 0.   ],
       [0.   , 0.689]])
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import tree_util
from funcgrad.backend import device_of, device_put
from funcgrad.core import is_tracer
from funcgrad_nn.optim._transform import (
    GradientTransformation,
    ScalarOrSchedule,
    _as_dtype,
    _bias_corrected,
    _cast,
    _dtype,
    _tmap,
    _zero_count,
    adamw,
    add_decayed_weights,
    chain,
    partition,
    scale_by_learning_rate,
)
from funcgrad_nn.optim._transform_more import init_empty_state, safe_increment

__all__ = ["MuonDimensionNumbers", "MuonState", "MUON_NS_COEFFS", "orthogonalize_via_newton_schulz",
           "scale_by_shape", "scale_by_muon", "muon"]

#: optax's default quintic coefficients (Jordan's), and the 'dion' preset (one row a step).
MUON_NS_COEFFS = (3.4445, -4.7750, 2.0315)
_DION_NS_COEFFS = ((4.0848, -6.8946, 2.9270), (3.9505, -6.3029, 2.6377),
                   (3.7418, -5.5913, 2.3037), (2.8769, -3.1427, 1.2046),
                   (2.8366, -3.0525, 1.2012))
_PRESETS = {"standard": MUON_NS_COEFFS, "dion": _DION_NS_COEFFS}
_PRECONDITIONINGS = ("frobenius", "spectral", "aol", "schatten")


class MuonDimensionNumbers(NamedTuple):
    """Which axes of a weight are its matrix's reduction (input) and output axes (optax's);
    the other axes are batch axes, orthogonalized independently. The default is a 2-D
    ``x @ W`` weight: reduction axis 0, output axis 1."""

    reduction_axis: Sequence[int] | int = 0
    output_axis: Sequence[int] | int = 1


class MuonState(NamedTuple):
    """State of :func:`scale_by_muon`: the step count, the momentum and the Newton-Schulz
    coefficients (``(3,)``, or ``(steps, 3)`` one row a step)."""

    count: Any
    mu: Any
    ns_coeffs: Any


def _is_dim_nums(x: Any) -> bool:
    return isinstance(x, MuonDimensionNumbers)


class _Held:
    """A dimension-numbers value as one pytree leaf (the NamedTuple itself is a node)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


def _dim_nums_per_leaf(dim_nums: Any, updates: Any) -> list[Any]:
    """One dimension-numbers value (or None: not a Muon parameter) per leaf of ``updates``.
    ``dim_nums`` is one value for all, or a tree that is a prefix of ``updates``."""
    n = len(tree_util.tree_leaves(updates))
    if dim_nums is None or _is_dim_nums(dim_nums):
        return [dim_nums] * n
    held = tree_util.tree_map(
        lambda d, sub: tree_util.tree_map(lambda _: _Held(d), sub),
        dim_nums, updates, is_leaf=lambda x: x is None or _is_dim_nums(x))
    out = [h.value for h in tree_util.tree_leaves(held, is_leaf=lambda x: isinstance(x, _Held))]
    if len(out) != n:
        raise ValueError(f"weight dimension numbers {dim_nums!r} do not match the parameters' "
                         "structure (a MuonDimensionNumbers or None per parameter)")
    return out


def _map_with_dim_nums(f: Callable[[Any, Any], Any], updates: Any, weight_dim_nums: Any) -> Any:
    dn = weight_dim_nums(updates) if callable(weight_dim_nums) else weight_dim_nums
    leaves, treedef = tree_util.tree_flatten(updates)
    per_leaf = _dim_nums_per_leaf(dn, updates)
    return treedef.unflatten([f(x, d) for x, d in zip(leaves, per_leaf)])


def _axes(x: Any, dim_nums: MuonDimensionNumbers) -> tuple[tuple[int, ...], tuple[int, ...]]:
    red, out = dim_nums.reduction_axis, dim_nums.output_axis
    red = (red,) if isinstance(red, int) else tuple(red)
    out = (out,) if isinstance(out, int) else tuple(out)
    return tuple(a % x.ndim for a in red), tuple(a % x.ndim for a in out)


def _fans(x: Any, dim_nums: MuonDimensionNumbers) -> tuple[int, int]:
    red, out = _axes(x, dim_nums)
    return math.prod(x.shape[a] for a in red), math.prod(x.shape[a] for a in out)


def _as_stack(x: Any, dim_nums: MuonDimensionNumbers) -> tuple[Any, Callable[[Any], Any]]:
    """``x`` as a ``(batch, fan_in, fan_out)`` stack of matrices and the inverse reshape."""
    if x.ndim < 2:
        raise ValueError(f"Muon optimized parameters must have rank >= 2, got x.ndim={x.ndim}")
    red, out = _axes(x, dim_nums)
    if set(red) & set(out):
        raise ValueError(f"Normalized reduction axes and output axes must be disjoint, got "
                         f"{red} and {out}. Originally dim_nums={dim_nums} and "
                         f"x.shape={x.shape}")
    batch = tuple(sorted(set(range(x.ndim)) - set(red) - set(out)))
    perm = batch + red + out
    inv = tuple(sorted(range(x.ndim), key=lambda i: perm[i]))
    shape_of = lambda axes: tuple(x.shape[a] for a in axes)  # noqa: E731
    flat = (math.prod(shape_of(batch)), math.prod(shape_of(red)), math.prod(shape_of(out)))
    unflat = shape_of(batch) + shape_of(red) + shape_of(out)
    return (fnp.transpose(x, perm).reshape(flat),
            lambda y: fnp.transpose(y.reshape(unflat), inv))


def _mT(x: Any) -> Any:
    return fnp.swapaxes(x, -1, -2)


def _ns_base(x: Any, c: Any) -> Any:
    a = x @ fnp.conj(_mT(x))
    b = c[1] * a + c[2] * (a @ a)
    return c[0] * x + b @ x


def _ns_aol_first(x: Any, c: Any, eps: float = 1e-8) -> Any:
    # 'Almost Orthogonal Layer' rescaling folded into the first step (Boissin et al., 2025)
    a = x @ fnp.conj(_mT(x))
    s = (1.0 / fnp.sqrt(fnp.clip(fnp.sum(fnp.abs(a), axis=-1), eps, None)))[..., None]
    x, a = x * s, a * s * _mT(s)
    b = c[1] * a + c[2] * (a @ a)
    return c[0] * x + b @ x


def _ns_schatten_first(x: Any, c: Any, eps: float = 1e-8) -> Any:
    # Schatten-4 rescaling (Grishina et al., 2025); optax uses x @ x.T here, without conj
    a = x @ _mT(x)
    fro = fnp.sqrt(fnp.sum(fnp.abs(a) ** 2, axis=(-2, -1), keepdims=True))
    s = 1.0 / fnp.sqrt(fnp.clip(fro, eps, None))
    x, a = x * s, a * s ** 2
    b = c[1] * a + c[2] * (a @ a)
    return c[0] * x + b @ x


_FIRST_STEP = {"frobenius": _ns_base, "spectral": _ns_base, "aol": _ns_aol_first,
               "schatten": _ns_schatten_first}


def orthogonalize_via_newton_schulz(x: Any, ns_coeffs: Any, ns_steps: int = 5,
                                    preconditioning: str = "frobenius", eps: float = 1e-8,
                                    dimension_numbers: MuonDimensionNumbers | None = None) -> Any:
    """About ``U V^H`` of ``x = U S V^H`` by a quintic Newton-Schulz iteration (optax's):
    the singular values land in about (0.5, 1.5), which Muon does not mind. ``ns_coeffs`` is
    ``(3,)`` (used ``ns_steps`` times) or ``(n, 3)`` (one row a step, ``ns_steps`` ignored);
    ``preconditioning`` scales ``x`` first: ``'frobenius'`` (by its Frobenius norm),
    ``'spectral'`` (its largest singular value), ``'aol'`` or ``'schatten'`` (folded into
    the first step). ``x`` is a matrix, or any rank with ``dimension_numbers``.

    >>> import numpy as np
    >>> x = orthogonalize_via_newton_schulz(np.array([[3.0, 0.0], [0.0, 1.0]]),
    ...                                     np.array(MUON_NS_COEFFS), ns_steps=10)
    >>> np.round(np.diag(x), 2)
    array([1.05, 0.75])
    """
    if x.ndim != 2 and not _is_dim_nums(dimension_numbers):
        raise ValueError(f"Input must have shape (m, n) or weight dimension numbers must be "
                         f"provided. Got shape={x.shape} and dimension_numbers="
                         f"{dimension_numbers}.")
    if x.ndim == 2:
        dimension_numbers = MuonDimensionNumbers(0, 1)
    coeffs = ns_coeffs
    if not is_tracer(coeffs) and not is_tracer(x):
        coeffs = device_put(np.asarray(coeffs) if isinstance(coeffs, list | tuple) else coeffs,
                            device_of(x))
    coeffs = fnp.asarray(coeffs)
    if coeffs.ndim > 2 or coeffs.shape[-1] != 3:
        raise ValueError(f"Newton-Schulz coefficients must have shape (3,) or (n, 3), got "
                         f"{coeffs.shape}")
    if preconditioning not in _PRECONDITIONINGS:
        raise ValueError(f"Unknown preconditioning {preconditioning}")
    stack, back = _as_stack(x, dimension_numbers)
    transposed = stack.shape[1] > stack.shape[2]
    if transposed:  # iterate on the wide side: the Gram matrix is the smaller one
        stack = _mT(stack)
    if preconditioning == "frobenius":
        stack = stack / (fnp.linalg.norm(stack, ord="fro", axis=(-2, -1), keepdims=True) + eps)
    elif preconditioning == "spectral":
        stack = stack / (fnp.linalg.norm(stack, ord=2, axis=(-2, -1), keepdims=True) + eps)
    coeffs = coeffs.astype(stack.dtype)
    rows = [coeffs] * ns_steps if coeffs.ndim == 1 else [coeffs[i] for i in range(coeffs.shape[0])]
    for i, c in enumerate(rows):
        stack = (_FIRST_STEP[preconditioning] if i == 0 else _ns_base)(stack, c)
    if transposed:
        stack = _mT(stack)
    return back(stack)


def scale_by_shape(weight_dimension_numbers: Any = None,
                   consistent_rms: float | None = None) -> GradientTransformation:
    """Scale each update by a factor of its shape (optax.contrib's): ``sqrt(max(1, fan_out /
    fan_in))`` (Jordan's width scaling), or ``sqrt(max(fan_in, fan_out)) * consistent_rms``
    (Liu et al.'s AdamW-like RMS). Fans come from ``weight_dimension_numbers`` (a
    :class:`MuonDimensionNumbers`, a tree of them, or a function of the updates returning
    one; None: every parameter is a matrix ``(fan_in, fan_out)``).

    >>> import numpy as np
    >>> tx = scale_by_shape()
    >>> float(tx.update(np.ones((2, 8)), tx.init(None))[0][0, 0])
    2.0
    """

    def factor(u: Any, d: Any) -> Any:
        if u is None:
            return None
        fan_in, fan_out = _fans(u, d if d is not None else MuonDimensionNumbers())
        if consistent_rms is not None:
            s = np.sqrt(max(fan_in, fan_out)) * consistent_rms
        else:
            s = np.sqrt(max(1.0, fan_out / fan_in))
        return _as_dtype(float(s), u) * u

    def update(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        return _map_with_dim_nums(factor, updates, weight_dimension_numbers), state

    return GradientTransformation(init_empty_state, update)


def _coeffs_array(ns_coeffs: Any, ns_steps: int, like: Any) -> Any:
    c = np.asarray(ns_coeffs, dtype=np.float64)
    if c.ndim > 2 or c.shape[-1] != 3:
        raise ValueError(f"ns_coeffs must have shape (3,) or (n, 3), got {c.shape}")
    if c.ndim == 2:
        if not c.shape[0] <= ns_steps:
            raise ValueError(f"Not enough coeffs to perform {ns_steps} steps")
        c = c[-ns_steps:]
    # on the parameters' device, as the count, so the state never mixes devices
    leaves = tree_util.tree_leaves(like)
    if leaves and not is_tracer(leaves[0]):
        return device_put(c, device_of(leaves[0]))
    return fnp.asarray(c)


def scale_by_muon(ns_coeffs: Any = MUON_NS_COEFFS, ns_steps: int = 5, beta: float = 0.95,
                  eps: float = 1e-8, mu_dtype: Any = None, *, nesterov: bool = True,
                  adaptive: bool = False, preconditioning: str = "frobenius",
                  weight_dimension_numbers: Any = None) -> GradientTransformation:
    """Muon's rescaling (optax.contrib's ``scale_by_muon``): a (Nesterov) momentum with bias
    correction, orthogonalized by :func:`orthogonalize_via_newton_schulz`; ``adaptive``
    scales each result by ``<momentum, result>`` (Bernstein et al.'s dual norm).
    ``weight_dimension_numbers`` as :func:`scale_by_shape`'s.

    >>> import numpy as np
    >>> tx = scale_by_muon()
    >>> u, s = tx.update(np.array([[1.0, 0.0], [0.0, 2.0]]), tx.init(np.zeros((2, 2))))
    >>> np.round(u, 3), int(s.count)
    (array([[1.114, 0.   ],
           [0.   , 0.689]]), 1)
    """
    if preconditioning not in _PRECONDITIONINGS:
        raise ValueError(f"Unknown preconditioning {preconditioning}")
    mu_dtype = _dtype(mu_dtype)

    def init(params: Any) -> MuonState:
        return MuonState(_zero_count(params),
                         _tmap(lambda p: fnp.zeros_like(p, dtype=mu_dtype), params),
                         _coeffs_array(ns_coeffs, ns_steps, params))

    def update(updates: Any, state: MuonState, params: Any = None) -> tuple[Any, MuonState]:
        mu = _tmap(lambda g, m: (1 - beta) * g + beta * m, updates, state.mu)
        count = safe_increment(state.count)
        if nesterov:
            mu_hat = _tmap(lambda m, g: beta * m + (1 - beta) * g,
                           _bias_corrected(mu, beta, safe_increment(count)),
                           _bias_corrected(updates, beta, count))
        else:
            mu_hat = _bias_corrected(mu, beta, count)

        def ortho(x: Any, d: Any) -> Any:
            if x is None:
                return None
            return orthogonalize_via_newton_schulz(x, state.ns_coeffs, ns_steps,
                                                   preconditioning, eps, d)

        out = _map_with_dim_nums(ortho, mu_hat, weight_dimension_numbers)
        if adaptive:
            out = _tmap(lambda m, u: fnp.sum(fnp.conj(m) * u) * u, mu_hat, out)
        return out, MuonState(count, _cast(mu, mu_dtype), state.ns_coeffs)

    return GradientTransformation(init, update)


def muon(learning_rate: ScalarOrSchedule, ns_coeffs: Any = MUON_NS_COEFFS, ns_steps: int = 5,
         beta: float = 0.95, eps: float = 1e-8, weight_decay: float = 0.0,
         weight_decay_mask: Any = None, mu_dtype: Any = None, *, nesterov: bool = True,
         adaptive: bool = False, preconditioning: str = "frobenius", adam_b1: float = 0.9,
         adam_b2: float = 0.999, adam_eps_root: float = 0.0, adam_weight_decay: float = 0.0,
         adam_learning_rate: ScalarOrSchedule | None = None,
         muon_weight_dimension_numbers: Any = None,
         consistent_rms: float | None = None) -> GradientTransformation:
    """Muon (optax.contrib's ``muon``): :func:`scale_by_muon`, :func:`scale_by_shape`, weight
    decay and the learning rate on the Muon parameters (every 2-D parameter, or those given
    a :class:`MuonDimensionNumbers` in ``muon_weight_dimension_numbers``; None there marks
    an AdamW parameter), AdamW (``adam_*`` arguments) on the rest. ``ns_coeffs`` may be a
    preset name: ``'standard'`` or ``'dion'``. The state is a ``PartitionState`` with
    ``'muon'`` and ``'adam'`` entries, as optax's.

    >>> import numpy as np
    >>> from funcgrad_nn import optim
    >>> tx = optim.contrib.muon(0.1)
    >>> p = {"w": np.eye(2), "b": np.zeros(2)}
    >>> u, s = tx.update({"w": np.array([[1.0, 0.0], [0.0, 2.0]]), "b": np.ones(2)},
    ...                  tx.init(p), p)
    >>> np.round(u["w"], 4), np.round(u["b"], 4)
    (array([[-0.1114, -0.    ],
           [-0.    , -0.0689]]), array([-0.1474, -0.1474]))
    """
    if adam_learning_rate is None:
        adam_learning_rate = learning_rate
    if isinstance(ns_coeffs, str):
        if ns_coeffs not in _PRESETS:
            raise ValueError(f"Unknown ns_coeff preset string: {ns_coeffs}")
        ns_coeffs = _PRESETS[ns_coeffs]
    user_dim_nums = muon_weight_dimension_numbers

    def resolved(tree: Any) -> Any:
        return user_dim_nums(tree) if callable(user_dim_nums) else user_dim_nums

    if user_dim_nums is None:
        def param_labels(params: Any) -> Any:
            return tree_util.tree_map(lambda x: "muon" if x.ndim == 2 else "adam", params)

        def muon_dim_nums(updates: Any) -> Any:
            # the Muon branch sees only its (2-D) parameters: the others are None there
            return MuonDimensionNumbers()
    else:
        def param_labels(params: Any) -> Any:
            return tree_util.tree_map(
                lambda d, sub: tree_util.tree_map(lambda _: "adam" if d is None else "muon", sub),
                resolved(params), params, is_leaf=lambda x: x is None or _is_dim_nums(x))

        def muon_dim_nums(updates: Any) -> Any:
            return resolved(updates)

    return partition(
        {"muon": chain(
            scale_by_muon(ns_coeffs, ns_steps, beta, eps, mu_dtype, nesterov=nesterov,
                          adaptive=adaptive, preconditioning=preconditioning,
                          weight_dimension_numbers=muon_dim_nums),
            scale_by_shape(muon_dim_nums, consistent_rms),
            add_decayed_weights(weight_decay, weight_decay_mask),
            scale_by_learning_rate(learning_rate)),
         "adam": adamw(adam_learning_rate, adam_b1, adam_b2, eps, adam_eps_root, mu_dtype,
                       adam_weight_decay, nesterov=nesterov)},
        param_labels)

