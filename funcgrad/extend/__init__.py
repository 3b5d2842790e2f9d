"""``jax.extend``'s names that funcgrad backs: :mod:`funcgrad.extend.core` (primitives with
JAX's conventions, jaxprs and their parts) and :mod:`funcgrad.extend.backend` (the default
device). docs/jaxpr.md, "Your own primitive", shows a primitive made with them.

Example:
    >>> from funcgrad.extend.core import Primitive
    >>> double_p = Primitive("double")
    >>> _ = double_p.def_impl(lambda x: 2 * x)
    >>> _ = double_p.def_abstract_eval(lambda a: a)
    >>> double_p.bind(3.0)
    array(6.)
"""

from funcgrad.extend import backend, core

__all__ = ["backend", "core"]
