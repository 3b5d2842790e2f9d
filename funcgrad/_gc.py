"""Pausing Python's cycle collector while a program is traced or compiled.

Tracing a nested derivative allocates tens of thousands of small objects that live until the
trace ends (tracers, variables, equations, memo entries). The cycle collector, triggered by
allocation counts, walks them again and again as they age through its generations: at order
8 that was a third of a first call's CPU time, all of it finding nothing (the trace holds what
it made). So tracing and compiling run with the collector paused; reference counting still
frees everything acyclic at once, and what cycles the trace leaves are collected after it.

The collector's switch is the interpreter's, not funcgrad's: it is only turned off when it
was on, and turned back on by whoever turned it off (nested pauses, a user's own
``gc.disable()`` and other threads see a collector that is off for a while, never one left
off). One race is left: a thread that turns the collector off while another thread traces
has it turned back on when that trace ends.

Example:
    >>> import gc
    >>> with paused_gc():
    ...     gc.isenabled()
    False
    >>> gc.isenabled()
    True
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["paused_gc"]


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Run the ``with`` body with the cycle collector off (unless it is off already)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
