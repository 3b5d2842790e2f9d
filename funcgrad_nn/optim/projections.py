"""optax.projections: Euclidean projections of pytrees onto convex sets (projected gradient
descent: step, then project), with optax 0.2.8's names and arguments.

>>> import numpy as np
>>> from funcgrad_nn.optim import projections
>>> projections.projection_simplex(np.array([0.5, 2.0, -1.0]))
array([0., 1., 0.])
>>> projections.projection_l2_ball({"w": np.array([3.0, 4.0])}, scale=1.0)
{'w': array([0.6, 0.8])}
"""

from __future__ import annotations

from typing import Any

import funcgrad.numpy as fnp
from funcgrad import custom_jvp, lax, tree_util
from funcgrad.flatten_util import ravel_pytree
from funcgrad.nn import relu
from funcgrad_nn.optim import tree as _tree

__all__ = ["projection_non_negative", "projection_box", "projection_hypercube",
           "projection_simplex", "projection_l1_sphere", "projection_l1_ball",
           "projection_l2_sphere", "projection_l2_ball", "projection_linf_ball",
           "projection_vector", "projection_hyperplane", "projection_halfspace"]


def projection_non_negative(tree: Any) -> Any:
    """The projection onto the non-negative orthant: ``max(x, 0)`` leafwise.

    >>> import numpy as np
    >>> projection_non_negative([np.array([-1.0, 2.0])])
    [array([0., 2.])]
    """
    return tree_util.tree_map(relu, tree)


def _like(bound: Any, tree: Any) -> Any:
    # a bound is a tree shaped as ``tree`` or one value (array or scalar) for every leaf
    if tree_util.tree_structure(bound) == tree_util.tree_structure(tree):
        return bound
    return tree_util.tree_map(lambda _: bound, tree)


def projection_box(tree: Any, lower: Any, upper: Any) -> Any:
    """The projection onto the box ``lower <= x <= upper`` (bounds: trees shaped as
    ``tree``, or one value for every leaf).

    >>> import numpy as np
    >>> projection_box({"w": np.array([-2.0, 0.5, 3.0])}, -1.0, 1.0)
    {'w': array([-1. ,  0.5,  1. ])}
    """
    return tree_util.tree_map(fnp.clip, tree, _like(lower, tree), _like(upper, tree))


def projection_hypercube(tree: Any, scale: Any = 1) -> Any:
    """The projection onto ``[0, scale]`` per element.

    >>> import numpy as np
    >>> projection_hypercube(np.array([-1.0, 0.5, 2.0]))
    array([0. , 0.5, 1. ])
    """
    return projection_box(tree, lower=0, upper=scale)


@custom_jvp
def _projection_unit_simplex(values: Any) -> Any:
    n = values.shape[0]
    u = fnp.sort(values)[::-1]
    cumsum_u = fnp.cumsum(u)
    ind = fnp.arange(n) + 1
    idx = fnp.count_nonzero(1 / ind + (u - cumsum_u / ind) > 0)
    return relu(1 / idx + (values - cumsum_u[idx - 1] / idx))


@_projection_unit_simplex.defjvp
def _projection_unit_simplex_jvp(primals: Any, tangents: Any) -> tuple[Any, Any]:
    (values,), (values_dot,) = primals, tangents
    out = _projection_unit_simplex(values)
    supp = (out > 0).astype(values_dot.dtype)
    card = fnp.count_nonzero(supp)
    return out, supp * values_dot - fnp.dot(supp, values_dot) / card * supp


def projection_simplex(tree: Any, scale: Any = 1) -> Any:
    """The projection onto the simplex ``{x >= 0, sum(x) = scale}`` of all leaves as one
    vector (its derivative is the projection's, as optax's custom JVP).

    >>> import numpy as np
    >>> projection_simplex([np.array([1.0, 1.0]), np.array([1.0])], scale=3.0)
    [array([1., 1.]), array([1.])]
    """
    values, unravel = ravel_pytree(tree)
    return unravel(scale * _projection_unit_simplex(values / scale))


def projection_l1_sphere(tree: Any, scale: Any = 1) -> Any:
    """The projection onto the l1 sphere ``{sum |x| = scale}``.

    >>> import numpy as np
    >>> projection_l1_sphere(np.array([0.5, -0.25]))
    array([ 0.625, -0.375])
    """
    signs = tree_util.tree_map(fnp.sign, tree)
    return _tree.mul(signs, projection_simplex(tree_util.tree_map(fnp.abs, tree), scale))


def projection_l1_ball(tree: Any, scale: Any = 1) -> Any:
    """The projection onto the l1 ball ``{sum |x| <= scale}`` (points inside unchanged).

    >>> import numpy as np
    >>> projection_l1_ball(np.array([2.0, -2.0]))
    array([ 0.5, -0.5])
    """
    inside = _tree.norm(tree, ord=1) <= scale
    return lax.cond(inside, lambda t: t, lambda t: projection_l1_sphere(t, scale), tree)


def projection_l2_sphere(tree: Any, scale: Any = 1) -> Any:
    """The projection onto the l2 sphere ``{||x|| = scale}``.

    >>> import numpy as np
    >>> projection_l2_sphere(np.array([0.3, 0.4]))
    array([0.6, 0.8])
    """
    return _tree.scale(scale / _tree.norm(tree), tree)


def projection_l2_ball(tree: Any, scale: Any = 1) -> Any:
    """The projection onto the l2 ball ``{||x|| <= scale}``.

    >>> import numpy as np
    >>> projection_l2_ball(np.array([0.3, 0.4]))
    array([0.3, 0.4])
    """
    sq = _tree.norm(tree, squared=True)
    return _tree.scale(scale / fnp.sqrt(fnp.maximum(sq, scale ** 2)), tree)


def projection_linf_ball(tree: Any, scale: Any = 1) -> Any:
    """The projection onto the l-infinity ball ``{max |x| <= scale}``.

    >>> import numpy as np
    >>> projection_linf_ball(np.array([-3.0, 0.5]), scale=2.0)
    array([-2. ,  0.5])
    """
    return projection_box(tree, _tree.full_like(tree, -scale), _tree.full_like(tree, scale))


def projection_vector(x: Any, a: Any) -> Any:
    """The projection of ``x`` onto the line spanned by ``a``.

    >>> import numpy as np
    >>> projection_vector(np.array([2.0, 1.0]), np.array([1.0, 0.0]))
    array([2., 0.])
    """
    return _tree.scale(_tree.vdot(x, a) / _tree.vdot(a, a), a)


def projection_hyperplane(x: Any, a: Any, b: Any) -> Any:
    """The projection onto the hyperplane ``{<a, x> = b}``.

    >>> import numpy as np
    >>> projection_hyperplane(np.array([2.0, 1.0]), np.array([1.0, 0.0]), 0.5)
    array([0.5, 1. ])
    """
    return _tree.add_scale(x, (b - _tree.vdot(x, a)) / _tree.vdot(a, a), a)


def projection_halfspace(x: Any, a: Any, b: Any) -> Any:
    """The projection onto the half-space ``{<a, x> <= b}``.

    >>> import numpy as np
    >>> projection_halfspace(np.array([2.0, 1.0]), np.array([1.0, 0.0]), 3.0)
    array([2., 1.])
    """
    scalar = fnp.minimum((b - _tree.vdot(x, a)) / _tree.vdot(a, a), 0)
    return _tree.add_scale(x, scalar, a)
