"""Helpers shared by the distributions (``torch.distributions.utils``'s names), and the one
place that turns a ``key=`` argument (or its absence) into a ``funcgrad.random`` key.

>>> import numpy as np
>>> from funcgrad_nn.distributions.utils import broadcast_all, probs_to_logits
>>> a, b = broadcast_all(np.zeros(3), 1.0)
>>> b.shape, b.dtype
((3,), dtype('float64'))
>>> float(probs_to_logits(np.array(0.5), is_binary=True))
0.0
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

import numpy

import funcgrad
import funcgrad.nn as fnn
import funcgrad.numpy as fnp
import funcgrad.random as frandom
from funcgrad import core
from funcgrad.backend import device_of
from funcgrad.interpreters.staging import StagingTrace
from funcgrad_nn.init import default_generator, get_default_dtype

__all__ = ["broadcast_all", "clamp_probs", "lazy_property", "logits_to_probs",
           "probs_to_logits", "tril_matrix_to_vec", "vec_to_tril_matrix"]


def _is_number(x: Any) -> bool:
    return isinstance(x, numbers.Number) and not hasattr(x, "shape")


def _float_dtype(*values: Any) -> numpy.dtype:
    """The floating dtype of parameters: their common floating dtype, else the default
    dtype (float32 unless ``nn.set_default_dtype``), as torch makes Python numbers tensors."""
    dts = [numpy.dtype(v.dtype) for v in values if hasattr(v, "dtype")
           and numpy.dtype(v.dtype).kind in "fc"]
    if not dts:
        return get_default_dtype()
    return numpy.result_type(*dts)


def as_float(x: Any, dtype: Any = None) -> Any:
    """``x`` as a floating array (Python numbers and integer arrays in the default dtype).

    >>> import numpy as np
    >>> as_float(np.arange(2)).dtype, as_float(1.5, np.float64).dtype
    (dtype('float32'), dtype('float64'))
    """
    dt = numpy.dtype(dtype) if dtype is not None else _float_dtype(x)
    if hasattr(x, "dtype") and numpy.dtype(x.dtype) == dt and hasattr(x, "shape"):
        return x
    return fnp.asarray(x, dtype=dt)


def broadcast_all(*values: Any) -> tuple[Any, ...]:
    """Broadcast parameters to one shape and one floating dtype, as torch's
    ``broadcast_all``: Python numbers take the arrays' dtype (the default dtype when all are
    numbers).

    >>> import numpy as np
    >>> [v.shape for v in broadcast_all(np.zeros((2, 1)), np.ones(3), 0.5)]
    [(2, 3), (2, 3), (2, 3)]
    """
    for v in values:
        if not (_is_number(v) or hasattr(v, "shape")):
            raise ValueError("Input arguments must all be instances of numbers.Number, "
                             f"funcgrad arrays or objects implementing __array__, got "
                             f"{type(v).__name__}")
    dt = _float_dtype(*values)
    arrays = [as_float(v, dt) for v in values]
    shape = fnp.broadcast_shapes(*[tuple(a.shape) for a in arrays])
    return tuple(a if tuple(a.shape) == shape else fnp.broadcast_to(a, shape) for a in arrays)


def clamp_probs(probs: Any) -> Any:
    """Clip probabilities into ``[eps, 1 - eps]`` (``eps`` of their dtype).

    >>> import numpy as np
    >>> clamp_probs(np.array([0.0, 1.0])).tolist() == [2.220446049250313e-16, 1 - 2.220446049250313e-16]
    True
    """
    eps = float(numpy.finfo(numpy.dtype(probs.dtype)).eps)
    return fnp.clip(probs, eps, 1 - eps)


def probs_to_logits(probs: Any, is_binary: bool = False) -> Any:
    """Logits of probabilities: log-odds when ``is_binary``, else their log.

    >>> import numpy as np
    >>> round(float(probs_to_logits(np.array(0.75), is_binary=True)), 4)
    1.0986
    """
    ps = clamp_probs(probs)
    if is_binary:
        return fnp.log(ps) - fnp.log1p(-ps)
    return fnp.log(ps)


def logits_to_probs(logits: Any, is_binary: bool = False) -> Any:
    """Probabilities of logits: the sigmoid when ``is_binary``, else a softmax over the last
    axis.

    >>> import numpy as np
    >>> logits_to_probs(np.zeros(2)).tolist()
    [0.5, 0.5]
    """
    if is_binary:
        return fnn.sigmoid(logits)
    return fnn.softmax(logits, axis=-1)


class lazy_property:
    """A property computed on first access and then stored on the instance (how a
    distribution made from ``logits`` gets its ``probs`` only when asked).

    >>> class A:
    ...     @lazy_property
    ...     def x(self):
    ...         return 3
    >>> a = A(); a.x, 'x' in a.__dict__
    (3, True)
    """

    def __init__(self, wrapped: Callable[[Any], Any]) -> None:
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__
        self.__name__ = wrapped.__name__

    def __get__(self, instance: Any, obj_type: Any = None) -> Any:
        if instance is None:
            return self
        value = self.wrapped(instance)
        instance.__dict__[self.wrapped.__name__] = value
        return value


def tril_matrix_to_vec(mat: Any, diag: int = 0) -> Any:
    """The lower triangle (below diagonal ``diag``) of the last two axes, row by row.

    >>> import numpy as np
    >>> tril_matrix_to_vec(np.arange(4.0).reshape(2, 2)).tolist()
    [0.0, 2.0, 3.0]
    """
    n = mat.shape[-1]
    rows, cols = numpy.tril_indices(n, k=diag)
    return mat[..., rows, cols]


def vec_to_tril_matrix(vec: Any, diag: int = 0) -> Any:
    """Inverse of :func:`tril_matrix_to_vec`.

    >>> import numpy as np
    >>> vec_to_tril_matrix(np.array([0.0, 2.0, 3.0])).tolist()
    [[0.0, 0.0], [2.0, 3.0]]
    """
    m = vec.shape[-1]
    n = next((n for n in range(1, m + 2) if len(numpy.tril_indices(n, k=diag)[0]) >= m), 0)
    rows, cols = numpy.tril_indices(n, k=diag)
    if len(rows) != m:
        raise ValueError(f"vec_to_tril_matrix: {m} values do not fill a triangle")
    flat = numpy.zeros((n, n), dtype=numpy.int64)
    flat[rows, cols] = numpy.arange(1, m + 1)
    padded = fnp.concatenate([fnp.zeros_like(vec[..., :1]), vec], axis=-1)
    return fnp.reshape(padded[..., flat.reshape(-1)], tuple(vec.shape[:-1]) + (n, n))


def _sum_rightmost(value: Any, dim: int) -> Any:
    """Sum the ``dim`` rightmost axes."""
    if dim == 0:
        return value
    return fnp.sum(value, axis=tuple(range(-dim, 0)))


def _staged() -> bool:
    t = core.current_trace()
    while t is not None:
        if isinstance(t, StagingTrace):
            return True
        t = t.parent
    return False


def _device(like: Any) -> Any:
    if core.is_tracer(like):
        return getattr(getattr(like, "aval", None), "device", None)
    return device_of(like)


def make_key(key: Any, owner: str, like: Any = None) -> Any:
    """The ``funcgrad.random`` key a sampler uses.

    ``key`` given: an int seed or a key array (``funcgrad.random.PRNGKey``/``split``). Not
    given: a fresh key drawn from funcgrad_nn's global generator (``nn.manual_seed``), put
    on the device of ``like`` (a parameter: the noise must live where the parameters do),
    which is only right eagerly: under ``jit`` (or any staged trace) it would be frozen into the
    compiled program and every call would return the same "random" numbers, so there a key
    is required.

    >>> make_key(0, "example").shape
    (2,)
    """
    if key is None:
        if _staged():
            raise TypeError(
                f"{owner}: under jit (or another staged transformation) pass key= (an int seed "
                "or a funcgrad.random key): a key drawn from the global generator would be "
                "frozen into the compiled program and every call would return the same sample")
        seed = default_generator().integers(0, 2**32, size=2, dtype=numpy.uint32)
        return funcgrad.device_put(seed, _device(like))
    if isinstance(key, (int, numpy.integer)) and not isinstance(key, bool):
        k = frandom.PRNGKey(int(key))
        dev = _device(like)
        return k if dev is None else funcgrad.device_put(k, dev)
    return key


def split_key(key: Any, n: int) -> list[Any]:
    """``n`` independent keys from one.

    >>> len(split_key(make_key(0, "example"), 3))
    3
    """
    ks = frandom.split(key, n)
    return [ks[i] for i in range(n)]


# -- distributions and transforms as pytrees ----------------------------------------------
#
# A distribution (or transform) flattens to its array attributes and nested distributions /
# transforms; everything else (shapes, flags, Python numbers) is static. That lets jitted
# functions take and return distributions (a policy network returning a Categorical), and
# vmap return them with the batch axis first.

#: attributes that are caches or back-references, not state: dropped when flattening
_PYTREE_RESET = ("_inv", "_cached_x_y")


class _Static:
    """A static attribute in a treedef: compared by value where it can be, by identity
    where it cannot (unhashable values)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _Static):
            return False
        if self.value is other.value:
            return True
        try:
            return bool(type(self.value) is type(other.value) and self.value == other.value)
        except Exception:  # e.g. arrays compared elementwise: not the same static value
            return False

    def __hash__(self) -> int:
        try:
            return hash((type(self.value), self.value))
        except TypeError:
            return id(self.value)


def _is_node(v: Any) -> bool:
    return getattr(type(v), "_fg_distribution_pytree", False)


def _is_child(v: Any) -> bool:
    if _is_node(v):
        return True
    if isinstance(v, (list, tuple)) and v and all(_is_node(x) for x in v):
        return True
    return hasattr(v, "shape") and hasattr(v, "dtype") and not isinstance(v, numpy.generic)


#: attribute naming the children an unflattened object was built with: they stay children
#: whatever the leaves are (tree utilities unflatten with placeholders and flatten again)
_CHILDREN = "_fg_pytree_children"


def _flatten(obj: Any) -> tuple[list[Any], Any]:
    names, children, static = [], [], []
    first_ndim = None
    known = obj.__dict__.get(_CHILDREN, ())
    for k in sorted(obj.__dict__):
        v = obj.__dict__[k]
        if k == _CHILDREN or (k in _PYTREE_RESET and not _is_node(v)):
            continue
        if k in known or _is_child(v):
            names.append(k)
            children.append(v)
            if first_ndim is None and hasattr(v, "ndim") and not _is_node(v):
                first_ndim = (k, v.ndim)
        else:
            static.append((k, _Static(v)))
    return children, (type(obj), tuple(names), tuple(static), first_ndim)


def _unflatten(aux: Any, children: Any) -> Any:
    cls, names, static, first_ndim = aux
    obj = object.__new__(cls)
    for k in _PYTREE_RESET:
        obj.__dict__[k] = None
    obj.__dict__.update({k: s.value for k, s in static})
    obj.__dict__.update(zip(names, children))
    obj.__dict__[_CHILDREN] = names
    if first_ndim is not None and "_batch_shape" in obj.__dict__:
        # out of vmap the arrays carry the mapped axis in front: it joins the batch shape;
        # inside vmap (a batched distribution mapped over) they lack it: it leaves
        name, ndim = first_ndim
        v = obj.__dict__[name]
        extra = getattr(v, "ndim", ndim) - ndim
        if extra > 0:
            obj._batch_shape = tuple(v.shape[:extra]) + tuple(obj._batch_shape)
        elif extra < 0:
            obj._batch_shape = tuple(obj._batch_shape)[-extra:]
    return obj


def register_pytree_class(cls: type) -> None:
    """Register a distribution or transform class as a pytree node (done for every
    subclass automatically).

    >>> import funcgrad, numpy as np
    >>> from funcgrad_nn.distributions import Normal
    >>> len(funcgrad.tree_util.tree_leaves(Normal(np.zeros(2), 1.0)))
    2
    """
    cls._fg_distribution_pytree = True  # type: ignore[attr-defined]
    funcgrad.tree_util.register_pytree_node(cls, _flatten, lambda aux, ch: _unflatten(aux, ch))
