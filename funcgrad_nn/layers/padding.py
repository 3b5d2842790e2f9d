"""Padding layers: ZeroPad, ConstantPad, ReflectionPad, ReplicationPad, CircularPad (1-3 D)."""

from __future__ import annotations

from typing import Any

import numpy

from funcgrad_nn import functional as F
from funcgrad_nn.module import BadInputError, Module

__all__ = [
    "CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d",
    "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
    "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d",
    "ZeroPad3d",
]


class _PadNd(Module):
    _n = 1
    _mode = "constant"

    def __init__(self, padding: Any, value: float = 0.0) -> None:
        super().__init__()
        n = self._n
        if isinstance(padding, (int, numpy.integer)):
            self.padding = (int(padding),) * (2 * n)
        else:
            self.padding = tuple(int(p) for p in padding)
            if len(self.padding) != 2 * n:
                raise ValueError(f"{type(self).__name__}: padding must be an int or a tuple "
                                 f"of {2 * n} ints (left, right"
                                 + (", top, bottom" if n > 1 else "")
                                 + (", front, back" if n > 2 else "") + f"), got {padding!r}")
        self.value = value

    def forward(self, input: Any) -> Any:
        n = len(getattr(input, "shape", ()))
        if n not in (self._n + 1, self._n + 2):
            raise BadInputError(f"{self!r}: expected a {self._n + 1}-D or {self._n + 2}-D input "
                             f"(batch and channel axes before {self._n} spatial axes), got "
                             f"shape {tuple(getattr(input, 'shape', ()))}")
        if self._mode == "constant":
            return F.pad(input, self.padding, "constant", self.value)
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        if self._mode == "constant" and type(self).__name__.startswith("Constant"):
            return f"padding={self.padding}, value={self.value}"
        return f"{self.padding}"  # PyTorch's repr: ReflectionPad1d((2, 2))


class ZeroPad1d(_PadNd):
    """Pad with zeros; ``padding`` is an int or ``(left, right[, top, bottom[, front,
    back]])`` (negative values crop).

    >>> import numpy as np
    >>> ZeroPad1d(1)(np.arange(6.0).reshape(1, 2, 3)).shape
    (1, 2, 5)
    """

    _n = 1
    _mode = "constant"

    def __init__(self, padding: Any) -> None:
        super().__init__(padding)


class ZeroPad2d(_PadNd):
    """Pad with zeros; ``padding`` is an int or ``(left, right[, top, bottom[, front,
    back]])`` (negative values crop).

    >>> import numpy as np
    >>> ZeroPad2d(1)(np.arange(6.0).reshape(1, 1, 2, 3)).shape
    (1, 1, 4, 5)
    """

    _n = 2
    _mode = "constant"

    def __init__(self, padding: Any) -> None:
        super().__init__(padding)


class ZeroPad3d(_PadNd):
    """Pad with zeros; ``padding`` is an int or ``(left, right[, top, bottom[, front,
    back]])`` (negative values crop).

    >>> import numpy as np
    >>> ZeroPad3d(1)(np.arange(6.0).reshape(1, 1, 1, 2, 3)).shape
    (1, 1, 3, 4, 5)
    """

    _n = 3
    _mode = "constant"

    def __init__(self, padding: Any) -> None:
        super().__init__(padding)


class ConstantPad1d(_PadNd):
    """Pad with ``value``; ``padding`` as in :class:`ZeroPad2d`.

    >>> import numpy as np
    >>> ConstantPad1d(1, 2.0)(np.arange(6.0).reshape(1, 2, 3)).shape
    (1, 2, 5)
    """

    _n = 1
    _mode = "constant"


class ConstantPad2d(_PadNd):
    """Pad with ``value``; ``padding`` as in :class:`ZeroPad2d`.

    >>> import numpy as np
    >>> ConstantPad2d(1, 2.0)(np.arange(6.0).reshape(1, 1, 2, 3)).shape
    (1, 1, 4, 5)
    """

    _n = 2
    _mode = "constant"


class ConstantPad3d(_PadNd):
    """Pad with ``value``; ``padding`` as in :class:`ZeroPad2d`.

    >>> import numpy as np
    >>> ConstantPad3d(1, 2.0)(np.arange(6.0).reshape(1, 1, 1, 2, 3)).shape
    (1, 1, 3, 4, 5)
    """

    _n = 3
    _mode = "constant"


class ReflectionPad1d(_PadNd):
    """Pad with the reflection of the input (the edge not repeated).

    >>> import numpy as np
    >>> ReflectionPad1d(1)(np.arange(6.0).reshape(1, 2, 3)).shape
    (1, 2, 5)
    """

    _n = 1
    _mode = "reflect"

    def __init__(self, padding: Any) -> None:
        super().__init__(padding)


class ReflectionPad2d(_PadNd):
    """Pad with the reflection of the input (the edge not repeated).

    >>> import numpy as np
    >>> ReflectionPad2d(1)(np.arange(6.0).reshape(1, 1, 2, 3)).shape
    (1, 1, 4, 5)
    """

    _n = 2
    _mode = "reflect"

    def __init__(self, padding: Any) -> None:
        super().__init__(padding)


class ReflectionPad3d(_PadNd):
    """Pad with the reflection of the input (the edge not repeated).

    >>> import numpy as np
    >>> ReflectionPad3d(1)(np.arange(12.0).reshape(1, 1, 2, 2, 3)).shape
    (1, 1, 4, 4, 5)
    """

    _n = 3
    _mode = "reflect"

    def __init__(self, padding: Any) -> None:
        super().__init__(padding)


class ReplicationPad1d(_PadNd):
    """Pad by repeating the edge values.

    >>> import numpy as np
    >>> ReplicationPad1d(1)(np.arange(6.0).reshape(1, 2, 3)).shape
    (1, 2, 5)
    """

    _n = 1
    _mode = "replicate"

    def __init__(self, padding: Any) -> None:
        super().__init__(padding)


class ReplicationPad2d(_PadNd):
    """Pad by repeating the edge values.

    >>> import numpy as np
    >>> ReplicationPad2d(1)(np.arange(6.0).reshape(1, 1, 2, 3)).shape
    (1, 1, 4, 5)
    """

    _n = 2
    _mode = "replicate"

    def __init__(self, padding: Any) -> None:
        super().__init__(padding)


class ReplicationPad3d(_PadNd):
    """Pad by repeating the edge values.

    >>> import numpy as np
    >>> ReplicationPad3d(1)(np.arange(6.0).reshape(1, 1, 1, 2, 3)).shape
    (1, 1, 3, 4, 5)
    """

    _n = 3
    _mode = "replicate"

    def __init__(self, padding: Any) -> None:
        super().__init__(padding)


class CircularPad1d(_PadNd):
    """Pad by wrapping around (periodic boundary).

    >>> import numpy as np
    >>> CircularPad1d(1)(np.arange(6.0).reshape(1, 2, 3)).shape
    (1, 2, 5)
    """

    _n = 1
    _mode = "circular"

    def __init__(self, padding: Any) -> None:
        super().__init__(padding)


class CircularPad2d(_PadNd):
    """Pad by wrapping around (periodic boundary).

    >>> import numpy as np
    >>> CircularPad2d(1)(np.arange(6.0).reshape(1, 1, 2, 3)).shape
    (1, 1, 4, 5)
    """

    _n = 2
    _mode = "circular"

    def __init__(self, padding: Any) -> None:
        super().__init__(padding)


class CircularPad3d(_PadNd):
    """Pad by wrapping around (periodic boundary).

    >>> import numpy as np
    >>> CircularPad3d(1)(np.arange(6.0).reshape(1, 1, 1, 2, 3)).shape
    (1, 1, 3, 4, 5)
    """

    _n = 3
    _mode = "circular"

    def __init__(self, padding: Any) -> None:
        super().__init__(padding)
