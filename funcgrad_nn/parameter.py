"""``torch.nn.parameter``'s names, for code that imports them from there
(``from torch.nn.parameter import Parameter``): funcgrad_nn's :class:`Parameter` and
:class:`Buffer`, the same classes as ``funcgrad_nn.Parameter`` and ``funcgrad_nn.Buffer``.

>>> import numpy as np
>>> import funcgrad_nn as nn
>>> from funcgrad_nn.parameter import Parameter
>>> m = nn.Module()
>>> m.scale = Parameter(np.ones(2, np.float32))
>>> Parameter is nn.Parameter, [name for name, _ in m.named_parameters()]
(True, ['scale'])
"""

from funcgrad_nn.module import Buffer, Parameter

__all__ = ["Buffer", "Parameter"]
