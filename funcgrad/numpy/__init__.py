"""funcgrad.numpy: a NumPy-compatible, differentiable namespace.

Plain ``numpy.ndarray`` (or ``cupy.ndarray``) in and out; inside transformations the same
functions trace. Dtypes are what NumPy gives.

Example:
    >>> import numpy as np, funcgrad.numpy as fnp
    >>> fnp.sum(fnp.sin(np.zeros(3)))
    array(0.)
"""

from __future__ import annotations

from typing import Any

# dtypes and constants, as NumPy names them
from numpy import (  # noqa: E402, F401
    dtype,
    e,
    euler_gamma,
    inf,
    nan,
    newaxis,
    pi,
)

from funcgrad.numpy import (  # noqa: F401, E402
    _array_methods,  # noqa: F401  (tracer operators and methods)
    _dtypes,
    _ufunc_methods,  # noqa: E402
    fft,
    lib,
    linalg,
)
from funcgrad.numpy._astype import astype  # noqa: F401
from funcgrad.numpy._creation import *  # noqa: F403
from funcgrad.numpy._dtype_utils import *  # noqa: F403
from funcgrad.numpy._dtypes import *  # noqa: F403
from funcgrad.numpy._elementwise import *  # noqa: F403
from funcgrad.numpy._elementwise_extra import *  # noqa: F403
from funcgrad.numpy._index_tricks import *  # noqa: F403
from funcgrad.numpy._indexing import *  # noqa: F403
from funcgrad.numpy._interop import *  # noqa: F403
from funcgrad.numpy._linalg_ops import *  # noqa: F403
from funcgrad.numpy._manipulation import *  # noqa: F403
from funcgrad.numpy._polynomial import *  # noqa: F403
from funcgrad.numpy._printing import *  # noqa: F403
from funcgrad.numpy._reductions import *  # noqa: F403
from funcgrad.numpy._setops import *  # noqa: F403
from funcgrad.numpy._shape import *  # noqa: F403
from funcgrad.numpy._statistics import *  # noqa: F403
from funcgrad.numpy._types import *  # noqa: F403  (after _dtypes: its concrete aliases)
from funcgrad.numpy._ufunc_methods import frompyfunc, ufunc  # noqa: F401
from funcgrad.numpy._vectorize import vectorize  # noqa: F401

_ufunc_methods.install(globals())  # fnp.add.outer/reduce/accumulate/at, as jnp.add's



def __getattr__(name: str) -> Any:
    # jax.numpy's ml_dtypes names (bfloat16, float8_*, int4, ...): a clear error saying why
    # they are missing, which is still an AttributeError for hasattr/getattr(..., default).
    if name in _dtypes.UNSUPPORTED_DTYPES:
        raise _dtypes.unsupported_dtype(name)
    raise AttributeError(f"module 'funcgrad.numpy' has no attribute {name!r}")
