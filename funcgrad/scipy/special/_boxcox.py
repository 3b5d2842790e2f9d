"""Box-Cox transforms: boxcox, boxcox1p, inv_boxcox, inv_boxcox1p."""

from __future__ import annotations

from typing import Any

from funcgrad.scipy import _quiet
from funcgrad.scipy.special._common import _floats, _fnpm
from funcgrad.scipy.special._exp_log import _exprel, _log1p_rel


def _boxcox_of_log(logx: Any, lmbda: Any) -> Any:
    # (exp(lmbda L) - 1) / lmbda = L exprel(lmbda L): continuous in lmbda through 0, where
    # the value is L and the lmbda-derivative L**2 / 2.
    inf = _fnpm.isinf(logx)
    finite = _fnpm.where(inf, 0.0, logx)
    out = finite * _exprel(lmbda * finite)
    # L = +-inf: -1 / lmbda where lmbda L -> -inf, else L.
    safe = _fnpm.where(lmbda == 0, 1.0, lmbda)
    to_minus = (lmbda != 0) & (_fnpm.sign(lmbda) != _fnpm.sign(logx))
    return _fnpm.where(inf, _fnpm.where(to_minus, -1.0 / safe, logx), out)


def boxcox(x: Any, lmbda: Any) -> Any:
    """Box-Cox transformation: ``(x**lmbda - 1) / lmbda``, ``log(x)`` at ``lmbda == 0``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import boxcox
        >>> boxcox(np.array([1.0, 4.0]), 0.5)
        array([0., 2.])
    """
    x, lmbda = _floats("boxcox", x, lmbda)
    return _boxcox_of_log(_quiet.log(x), lmbda)


def boxcox1p(x: Any, lmbda: Any) -> Any:
    """Box-Cox transformation of ``1 + x`` (accurate for small ``x``): ``((1 + x)**lmbda - 1)
    / lmbda``, ``log1p(x)`` at ``lmbda == 0``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import boxcox1p
        >>> boxcox1p(np.array([0.0, 3.0]), 0.5)
        array([0., 2.])
    """
    x, lmbda = _floats("boxcox1p", x, lmbda)
    return _boxcox_of_log(_quiet.log1p(x), lmbda)


def _inv_boxcox_log(y: Any, lmbda: Any) -> Any:
    # log of the inverse: log1p(lmbda y) / lmbda = y log1p(u)/u, u = lmbda y: continuous in
    # lmbda through 0 (where it is y). Infinite y: the plain formula's value, as SciPy's.
    yf = _fnpm.where(_fnpm.isinf(y), 1.0, y)
    out = yf * _log1p_rel(lmbda * yf)
    ls = _fnpm.where(lmbda == 0, 1.0, lmbda)
    plain = _quiet.div(_quiet.log1p(ls * y), ls)
    return _fnpm.where(_fnpm.isinf(y), _fnpm.where(lmbda == 0, y, plain), out)


def inv_boxcox(y: Any, lmbda: Any) -> Any:
    """Inverse of :func:`boxcox`: ``(1 + lmbda y)**(1/lmbda)``, ``exp(y)`` at ``lmbda == 0``
    (continuous and differentiable through it), as ``scipy.special.inv_boxcox``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import inv_boxcox
        >>> inv_boxcox(np.array([0.0, 2.0]), 0.5)
        array([1., 4.])
    """
    y, lmbda = _floats("inv_boxcox", y, lmbda)
    return _fnpm.exp(_inv_boxcox_log(y, lmbda))


def inv_boxcox1p(y: Any, lmbda: Any) -> Any:
    """Inverse of :func:`boxcox1p`: ``(1 + lmbda y)**(1/lmbda) - 1``, ``expm1(y)`` at
    ``lmbda == 0``, accurate for small ``y``, as ``scipy.special.inv_boxcox1p``.

    Example:
        >>> import numpy as np
        >>> from funcgrad.scipy.special import inv_boxcox1p
        >>> inv_boxcox1p(np.array([0.0, 2.0]), 0.5)
        array([0., 3.])
    """
    y, lmbda = _floats("inv_boxcox1p", y, lmbda)
    return _fnpm.expm1(_inv_boxcox_log(y, lmbda))
