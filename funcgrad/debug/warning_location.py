"""Warnings raised inside funcgrad point at the user's line, eagerly and under ``jit``.

NumPy warns (``invalid value encountered in log``, overflow, division by zero) from the
innermost Python frame, which for ``fnp.log(x)`` is funcgrad's implementation of ``log``, and
for a jitted function is a line of its generated code. Python decides where a warning is
shown before any Python code runs, so funcgrad wraps the warnings module's display step
(``warnings._showwarnmsg``, through which printed and recorded warnings -- ``pytest.warns``,
``catch_warnings(record=True)``, ``logging.captureWarnings`` -- all pass): a warning located
in funcgrad's own files or in generated code is issued again, once, at the user's line, with
that module's filters and its once-per-location registry, exactly as if the user's line had
called NumPy itself. NumPy's reductions and scans (``sum``, ``prod``, ``cumprod``) warn from
NumPy's own Python wrappers (``fromnumeric.py``) instead: a warning located in an array
library's Python files is relocated too when funcgrad called that library, and left where it
is when the user called it directly.

The user's line is, for generated code, the line the equation was traced from (the
``# log (model.py:3)`` comment of that line, resolved through ``funcgrad.errors.
generated_code``); otherwise the innermost frame outside funcgrad. Nothing runs unless a
warning is shown, so this costs nothing per operation.

Example:
    >>> import warnings, numpy as np, funcgrad.numpy as fnp
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = fnp.log(np.array(-1.0))
    >>> caught[0].filename.startswith("<doctest"), str(caught[0].message)
    (True, 'invalid value encountered in log')
"""

from __future__ import annotations

import functools
import importlib.util
import os
import sys
import threading
import warnings
from typing import Any

from funcgrad.errors import SourceInfo, generated_code, is_our_file, replayed_source

__all__ = ["install", "user_location"]

_local = threading.local()
_installed: list[Any] = []
_unknown_modules: dict[str, dict] = {}


# The Python files of the array libraries funcgrad calls (NumPy's fromnumeric.py wrappers
# warn from there), found without importing them.
_LIBRARY_PACKAGES = ("numpy", "cupy", "cupyx", "scipy")


def _is_internal(filename: str) -> bool:
    return is_our_file(filename) or filename in generated_code


@functools.cache
def _library_dirs() -> tuple[str, ...]:
    dirs = []
    for name in _LIBRARY_PACKAGES:
        spec = importlib.util.find_spec(name)
        for d in (spec.submodule_search_locations or ()) if spec is not None else ():
            dirs.append(os.path.join(d, ""))
    return tuple(dirs)


def _is_library_file(filename: str) -> bool:
    return filename.startswith(_library_dirs())


def user_location(filename: str, lineno: int) -> tuple[SourceInfo, dict] | None:
    """Where the user wrote the operation that warned at ``filename:lineno`` (funcgrad's or
    generated code), with that frame's globals; None when it cannot be told."""
    f = sys._getframe(1)
    while f is not None and not (f.f_code.co_filename == filename and f.f_lineno == lineno):
        f = f.f_back
    if f is None:
        return None
    if not _is_internal(filename):
        # An array library's own Python code warned: funcgrad's only when funcgrad called it.
        while f is not None and _is_library_file(f.f_code.co_filename):
            f = f.f_back
        if f is None or not _is_internal(f.f_code.co_filename):
            return None
    while f is not None:
        fn = f.f_code.co_filename
        lookup = generated_code.get(fn)
        if lookup is not None:
            src = lookup(f.f_lineno)
            if src is not None and src.filename:
                return src, _globals_of(src.filename, f)
        elif not is_our_file(fn) and not fn.startswith("<frozen") and fn != warnings.__file__:
            replayed = replayed_source.get()
            if replayed is not None and replayed.filename:
                # an operation evaluated again (the eager tape's backward rule of a sqrt, a
                # replayed equation): the line it came from, not the call that replays it
                return replayed, _globals_of(replayed.filename, f)
            return SourceInfo(fn, f.f_lineno, f.f_code.co_name), f.f_globals
        f = f.f_back
    return None


def _globals_of(filename: str, frame: Any) -> dict:
    """The globals of the module that ``filename`` is, from a frame on the stack running it
    (usually the caller of the jitted function), for its warning registry and filters; a
    registry of its own when no such frame is on the stack."""
    f = frame
    while f is not None:
        if f.f_code.co_filename == filename:
            return f.f_globals
        f = f.f_back
    return _unknown_modules.setdefault(filename, {"__name__": filename})


def _forget(msg: Any) -> None:
    """Undo the bookkeeping Python did for the warning at funcgrad's location, so the next
    such warning (from another user line) is not taken for a repeat."""
    text, category = str(msg.message), msg.category
    f = sys._getframe(2)
    while f is not None:
        if f.f_code.co_filename == msg.filename and f.f_lineno == msg.lineno:
            registry = f.f_globals.get("__warningregistry__")
            if isinstance(registry, dict):
                registry.pop((text, category, msg.lineno), None)
                registry.pop((text, category, 0), None)
            break
        f = f.f_back
    warnings.onceregistry.pop((text, category), None)


def _relocating(show: Any) -> Any:
    def _showwarnmsg(msg: Any) -> None:
        if getattr(_local, "busy", False) or not (_is_internal(msg.filename)
                                                  or _is_library_file(msg.filename)):
            return show(msg)
        found = user_location(msg.filename, msg.lineno)
        if found is None:
            return show(msg)
        src, glb = found
        _forget(msg)
        registry = glb.setdefault("__warningregistry__", {}) if glb else {}
        _local.busy = True
        try:
            # module_globals lets Python read an imported module's source through its
            # loader (zip imports); a script's or stdin's __main__ (no __spec__) has a loader
            # that cannot (BuiltinImporter raises ImportError), and its file is read by name.
            warnings.warn_explicit(msg.message, msg.category, src.filename, src.lineno,
                                   module=glb.get("__name__"), registry=registry,
                                   module_globals=glb if glb.get("__spec__") else None,
                                   source=msg.source)
        finally:
            _local.busy = False
        return None

    _showwarnmsg.__wrapped__ = show  # type: ignore[attr-defined]
    return _showwarnmsg


def install() -> None:
    """Wrap ``warnings._showwarnmsg`` once (idempotent; done when funcgrad is imported)."""
    current = getattr(warnings, "_showwarnmsg", None)
    if current is None or _installed and current is _installed[0]:
        return
    wrapped = _relocating(current)
    _installed[:] = [wrapped]
    warnings._showwarnmsg = wrapped  # type: ignore[attr-defined]
