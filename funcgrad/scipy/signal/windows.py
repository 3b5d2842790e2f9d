"""funcgrad.scipy.signal.windows: the window functions of ``scipy.signal.windows`` --
``hann(M, sym=True)`` and friends -- over :func:`funcgrad.scipy.signal.get_window`
(``sym=True``: the symmetric window, for filter design; ``False``: the periodic one, for
spectral analysis). NumPy float64 arrays, as SciPy's.

Example:
    >>> from funcgrad.scipy.signal.windows import hann, kaiser
    >>> hann(5)
    array([0. , 0.5, 1. , 0.5, 0. ])
    >>> kaiser(4, 5.0, sym=False).round(6)
    array([0.036711, 0.552852, 1.      , 0.552852])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy

from funcgrad.scipy._device import keep_host_inputs_on_host as _keep_host_inputs_on_host
from funcgrad.scipy._signal_spectral import get_window

__all__ = ["boxcar", "triang", "parzen", "bohman", "blackman", "nuttall", "blackmanharris",
           "flattop", "bartlett", "barthann", "hamming", "kaiser", "gaussian",
           "general_gaussian", "general_cosine", "general_hamming", "chebwin", "cosine",
           "hann", "exponential", "tukey", "taylor", "dpss", "lanczos", "get_window"]


def _window(name: str, params: tuple, M: int, sym: bool) -> numpy.ndarray:  # noqa: N803
    if int(M) != M or M < 0:
        raise ValueError("Window length M must be a non-negative integer")
    if M == 0:
        return numpy.array([])
    spec = (name, *params) if params else name
    return get_window(spec, int(M), fftbins=not sym)


def _plain(name: str) -> Callable[..., numpy.ndarray]:
    def window(M: int, sym: bool = True) -> numpy.ndarray:  # noqa: N803
        return _window(name, (), M, sym)

    window.__name__ = window.__qualname__ = name
    window.__doc__ = (f"The ``{name}`` window of ``M`` points, as "
                      f"``scipy.signal.windows.{name}`` (``sym=False``: periodic).\n\n"
                      f"    Example:\n        >>> from funcgrad.scipy.signal.windows import "
                      f"{name}\n        >>> {name}(1)\n        array([1.])\n")
    return window


boxcar = _plain("boxcar")
triang = _plain("triang")
parzen = _plain("parzen")
bohman = _plain("bohman")
blackman = _plain("blackman")
nuttall = _plain("nuttall")
blackmanharris = _plain("blackmanharris")
flattop = _plain("flattop")
bartlett = _plain("bartlett")
barthann = _plain("barthann")
hamming = _plain("hamming")
cosine = _plain("cosine")
hann = _plain("hann")
lanczos = _plain("lanczos")


def tukey(M: int, alpha: float = 0.5, sym: bool = True) -> numpy.ndarray:  # noqa: N803
    """The Tukey (tapered cosine) window, as ``scipy.signal.windows.tukey``.

    Example:
        >>> from funcgrad.scipy.signal.windows import tukey
        >>> tukey(5, 1.0)
        array([0. , 0.5, 1. , 0.5, 0. ])
    """
    return _window("tukey", (alpha,), M, sym)


def kaiser(M: int, beta: float, sym: bool = True) -> numpy.ndarray:  # noqa: N803
    """The Kaiser window with shape ``beta``, as ``scipy.signal.windows.kaiser``.

    Example:
        >>> from funcgrad.scipy.signal.windows import kaiser
        >>> kaiser(3, 0.0)
        array([1., 1., 1.])
    """
    return _window("kaiser", (beta,), M, sym)


def gaussian(M: int, std: float, sym: bool = True) -> numpy.ndarray:  # noqa: N803
    """The Gaussian window with standard deviation ``std`` (samples), as
    ``scipy.signal.windows.gaussian``.

    Example:
        >>> from funcgrad.scipy.signal.windows import gaussian
        >>> gaussian(3, 1.0).round(6)
        array([0.606531, 1.      , 0.606531])
    """
    return _window("gaussian", (std,), M, sym)


def general_gaussian(M: int, p: float, sig: float, sym: bool = True) -> numpy.ndarray:  # noqa: N803
    """The generalized Gaussian window ``exp(-0.5 |n/sig|**(2p))``, as
    ``scipy.signal.windows.general_gaussian``.

    Example:
        >>> from funcgrad.scipy.signal.windows import general_gaussian
        >>> general_gaussian(3, 1.0, 1.0).round(6)
        array([0.606531, 1.      , 0.606531])
    """
    return _window("general_gaussian", (p, sig), M, sym)


def general_cosine(M: int, a: Any, sym: bool = True) -> numpy.ndarray:  # noqa: N803
    """The weighted sum of cosines with coefficients ``a``, as
    ``scipy.signal.windows.general_cosine``.

    Example:
        >>> from funcgrad.scipy.signal.windows import general_cosine
        >>> general_cosine(3, [0.5, 0.5])
        array([0., 1., 0.])
    """
    return _window("general_cosine", (a,), M, sym)


def general_hamming(M: int, alpha: float, sym: bool = True) -> numpy.ndarray:  # noqa: N803
    """The generalized Hamming window ``alpha - (1 - alpha) cos``, as
    ``scipy.signal.windows.general_hamming``.

    Example:
        >>> from funcgrad.scipy.signal.windows import general_hamming
        >>> general_hamming(3, 0.5)
        array([0., 1., 0.])
    """
    return _window("general_hamming", (alpha,), M, sym)


def chebwin(M: int, at: float, sym: bool = True) -> numpy.ndarray:  # noqa: N803
    """The Dolph-Chebyshev window with ``at`` dB attenuation, as
    ``scipy.signal.windows.chebwin``.

    Example:
        >>> from funcgrad.scipy.signal.windows import chebwin
        >>> chebwin(3, 50).round(6)
        array([0.503172, 1.      , 0.503172])
    """
    return _window("chebwin", (at,), M, sym)


def exponential(M: int, center: Any = None, tau: float = 1.0, sym: bool = True  # noqa: N803
                ) -> numpy.ndarray:
    """The exponential (Poisson) window ``exp(-|n - center| / tau)``, as
    ``scipy.signal.windows.exponential``.

    Example:
        >>> from funcgrad.scipy.signal.windows import exponential
        >>> exponential(3, tau=1.0).round(6)
        array([0.367879, 1.      , 0.367879])
    """
    return _window("exponential", (center, tau), M, sym)


def taylor(M: int, nbar: int = 4, sll: float = 30, norm: bool = True, sym: bool = True  # noqa: N803
           ) -> numpy.ndarray:
    """The Taylor window, as ``scipy.signal.windows.taylor``.

    Example:
        >>> from funcgrad.scipy.signal.windows import taylor
        >>> float(taylor(5).max())
        1.0
    """
    return _window("taylor", (nbar, sll, norm), M, sym)


def dpss(M: int, NW: float, Kmax: Any = None, sym: bool = True, norm: Any = None,  # noqa: N803
         return_ratios: bool = False) -> numpy.ndarray:
    """The first discrete prolate spheroidal (Slepian) sequence, as
    ``scipy.signal.windows.dpss`` with ``Kmax=None`` (several tapers, ``norm`` other than
    SciPy's default and ``return_ratios`` are not provided).

    Example:
        >>> from funcgrad.scipy.signal.windows import dpss
        >>> float(dpss(9, 2.0).max()).__round__(6)
        1.0
    """
    if Kmax is not None or norm is not None or return_ratios:
        raise ValueError("dpss: only the single default-normalised window (Kmax=None) is "
                         "provided by funcgrad")
    return _window("dpss", (NW,), M, sym)

# NumPy inputs compute on the host whatever the default device (funcgrad.scipy._device)
_keep_host_inputs_on_host(globals(), __all__)
