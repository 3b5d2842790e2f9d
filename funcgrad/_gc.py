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

import gc

__all__ = ["paused_gc"]


class paused_gc:  # noqa: N801 -- used as a function: ``with paused_gc():``
    """Run the ``with`` body with the cycle collector off (unless it is off already).

    A class rather than a ``contextlib.contextmanager`` generator: every nested
    differentiation level and every compile enters it, and a generator-based context manager
    costs several calls more on each entry."""

    __slots__ = ("_paused",)

    def __enter__(self) -> None:
        self._paused = gc.isenabled()
        if self._paused:
            gc.disable()

    def __exit__(self, *exc: object) -> None:
        if self._paused:
            gc.enable()
