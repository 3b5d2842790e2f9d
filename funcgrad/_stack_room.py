"""Room on CPython's frame stack for deeply nested tracing (a workaround for CPython gh-142183).

CPython 3.11 and later keep Python frames in 16 KiB "data stack" chunks: a call that does not
fit in the current chunk maps a new one, and the chunk is unmapped again when its first frame
returns. Nested differentiation recurses and returns around the same depth again and again
(every operation passes through every level), so when a chunk boundary falls there each
crossing costs an ``mmap``, a page fault and an ``munmap``: 120 of them in the first call of
a sixth-order ``jit(grad(...))``, a third of its time (benchmarks/README.md, "Why order 6 is
slower per instruction"). Which order is hit depends on how deep the caller already is.

CPython fixed this by caching a chunk (gh-142183), in 3.13 and 3.14 only from their 2026 patch
releases on. Up to 3.14, :func:`call_with_stack_room` therefore runs a nested
trace in a frame that does not fit in any standard chunk: the interpreter gives it a fresh
64 KiB chunk of its own and the trace's frames follow it there, about 31 KiB of room (some
fifteen nested levels) without a boundary. The frame's size is its evaluation stack, which is
reserved but never written, so its pages are never touched; the cost is one chunk mapped and
unmapped per call (about 20 us here), which is why only the third level of nested
differentiation asks for it, once for the levels inside
(:func:`~funcgrad.interpreters.staging.reserves_stack_room`).

Example:
    >>> call_with_stack_room(max, 2, 3)
    3
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

__all__ = ["call_with_stack_room", "needs_stack_room"]

#: Words (pointers) of evaluation stack the trampoline's frame reserves: more than a 16 KiB
#: chunk holds (2048), so that it always opens a chunk of its own, 64 KiB (8192 words).
_RESERVED_WORDS = 4200

#: Whether this interpreter may free a frame-stack chunk as soon as its first frame returns
#: (3.10 keeps frames on the heap; 3.13 and 3.14 do not from some patch release on, where the
#: reservation costs a chunk mapped once per nested first call, nothing more).
needs_stack_room = (3, 11) <= sys.version_info[:2] < (3, 15)


def _call(fn: Callable[..., Any], *args: Any) -> Any:
    return fn(*args)


if needs_stack_room:
    # The same function with a larger evaluation stack: a bigger co_stacksize than the code
    # needs is always valid (the interpreter only reserves it).
    _roomy_call = type(_call)(_call.__code__.replace(co_stacksize=_RESERVED_WORDS), globals(),
                              "call_with_stack_room")
else:
    _roomy_call = _call


def call_with_stack_room(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)``, on interpreters that need it (:data:`needs_stack_room`) with the frame
    stack's room for deep recursion reserved first (see the module's docstring)."""
    return _roomy_call(fn, *args)
