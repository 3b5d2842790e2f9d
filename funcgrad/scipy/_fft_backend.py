"""The state of ``scipy.fft``'s backend selection, shared by :mod:`funcgrad.scipy.fft` and
the FFTLog transforms it re-exports (:mod:`funcgrad.scipy._fftlog`), which it imports."""

from __future__ import annotations

from funcgrad import config as _config

__all__ = ["BackendNotImplementedError", "check_backend"]


class BackendNotImplementedError(NotImplementedError):
    """A transform called inside ``skip_backend("scipy")``: no backend is left to run it (as
    uarray's ``BackendNotImplementedError``, which SciPy raises there)."""


BackendNotImplementedError.__module__ = "funcgrad.scipy.fft"


def check_backend() -> None:
    """Raise :class:`BackendNotImplementedError` inside ``skip_backend("scipy")``.

    Example:
        >>> check_backend()  # outside skip_backend: nothing to say
    """
    if _config.fft_backend_skipped.get():
        raise BackendNotImplementedError(
            "No selected backends had an implementation for this function: "
            "skip_backend('scipy') skips funcgrad.scipy.fft's only backend")
