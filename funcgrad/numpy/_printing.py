"""funcgrad.numpy: printing options and array strings (``jnp.printoptions``, ``array_str``).

funcgrad's arrays are NumPy (or CuPy) arrays, whose printing NumPy's print options govern
(CuPy prints through NumPy), so ``printoptions``, ``set_printoptions`` and
``get_printoptions`` are NumPy's own. ``array_str``/``array_repr`` take arrays on any device
(copied to the host to print); a traced value has no digits to print and raises
``TracerArrayConversionError``, as in JAX (print it with ``funcgrad.debug.print``).

Example:
    >>> import funcgrad.numpy as fnp
    >>> with fnp.printoptions(precision=2):
    ...     print(fnp.array([1.23456, 2.0]))
    [1.23 2.  ]
    >>> array_str(fnp.array([1.23456, 2.0]), precision=3)
    '[1.235 2.   ]'
"""

from __future__ import annotations

from typing import Any

import numpy as _np
from numpy import (
    base_repr,
    binary_repr,
    format_float_positional,
    format_float_scientific,
    get_printoptions,
    printoptions,
    set_printoptions,
)

from funcgrad.backend import to_numpy
from funcgrad.core import Tracer

# (format_float_*, binary_repr and base_repr format Python numbers: NumPy's own)
__all__ = ["printoptions", "set_printoptions", "get_printoptions", "array_str", "array_repr",
           "array2string", "format_float_positional", "format_float_scientific",
           "binary_repr", "base_repr"]


def _host(a: Any) -> Any:
    if isinstance(a, Tracer):
        return _np.asarray(a)  # raises TracerArrayConversionError, naming the fix
    return to_numpy(a) if hasattr(a, "shape") else _np.asarray(a)


def array_str(a: Any, max_line_width: int | None = None, precision: int | None = None,
              suppress_small: bool | None = None) -> str:
    """The string ``print(a)`` shows (NumPy's ``array_str``), for an array on any device.

    Example:
        >>> import numpy as np
        >>> array_str(np.array([1e-9, 1.0]), suppress_small=True)
        '[0. 1.]'
    """
    return _np.array_str(_host(a), max_line_width, precision, suppress_small)


def array_repr(arr: Any, max_line_width: int | None = None, precision: int | None = None,
               suppress_small: bool | None = None) -> str:
    """The ``repr`` of an array (NumPy's ``array_repr``), for an array on any device.

    Example:
        >>> import numpy as np
        >>> array_repr(np.array([1.23456, 2.0]), precision=2)
        'array([1.23, 2.  ])'
    """
    return _np.array_repr(_host(arr), max_line_width, precision, suppress_small)


def array2string(a: Any, *args: Any, **kwargs: Any) -> str:
    """NumPy's ``array2string`` (every option: ``precision``, ``separator``, ``prefix``,
    ``formatter``, ...), for an array on any device.

    Example:
        >>> import numpy as np
        >>> array2string(np.array([1.23456, 2.0]), precision=2, separator=", ")
        '[1.23, 2.  ]'
    """
    return _np.array2string(_host(a), *args, **kwargs)
