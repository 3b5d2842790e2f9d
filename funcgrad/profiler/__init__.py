"""Per-primitive profiling in PyTorch's shape: ``profile``, ``record_function``, ``key_averages``.

Inside ``with profile() as prof:`` every primitive run is an event with its call count, total
and self time (total minus the time of the events nested in it) and, with
``record_shapes=True``, its input shapes. ``jit``-compiled functions are run equation by
equation, unoptimised, so each equation of the jitted function is its own event nested in one
event for the call (per-equation timing mode; the times are those of the unfused equations).
Reverse mode under the profiler goes through linearize + transpose, so the backward pass's
primitives appear as well. Nothing of this costs anything when no profile is active: the
profiler works by making an instrumenting trace current (:mod:`funcgrad.debug.instrument`).

``prof.key_averages().table(sort_by="self_cpu_time_total")`` prints PyTorch's table;
``prof.export_chrome_trace(path)`` writes JSON for Perfetto / ``chrome://tracing``;
``record_function("name")`` marks a user range.

Example:
    >>> import numpy as np, funcgrad.numpy as fnp
    >>> from funcgrad.profiler import profile, record_function
    >>> with profile(record_shapes=True) as prof:
    ...     with record_function("my_block"):
    ...         y = fnp.multiply(fnp.sin(np.ones(3)), 2.0)
    >>> sorted(e.key for e in prof.key_averages())
    ['mul', 'my_block', 'sin']
"""

from __future__ import annotations

import enum
import functools
import gzip
import json
import math
import os
import socket
import threading
import time
import warnings
import weakref
from collections.abc import Callable, Iterable, Sequence
from contextvars import ContextVar
from typing import Any, NamedTuple

from funcgrad.avals import get_aval
from funcgrad.backend import canonical_device, device_of, get_default_device
from funcgrad.core import Primitive, current_trace, eval_trace, user_source_info
from funcgrad.debug.callback import callback as debug_callback
from funcgrad.debug.callback import debug_callback_p
from funcgrad.debug.instrument import instrumented
from funcgrad.interpreters.cost import eqn_cost
from funcgrad.ir import Eqn, Var

__all__ = ["profile", "record_function", "FunctionEvent", "FunctionEventAvg", "EventList",
           "Interval", "ProfilerActivity", "supported_activities", "ProfilerAction", "schedule",
           "tensorboard_trace_handler", "trace", "start_trace", "stop_trace",
           "TraceAnnotation", "StepTraceAnnotation", "annotate_function"]


class ProfilerActivity:
    """Accepted for PyTorch compatibility: funcgrad profiles host (CPU) time."""

    CPU = "CPU"
    CUDA = "CUDA"


def supported_activities() -> set[str]:
    """The activities this profiler records (PyTorch's ``supported_activities``): host (CPU)
    time only; for GPU arrays an operation's time is what the host spends on it (CuPy
    launches kernels asynchronously), there is no device trace.

    Example:
        >>> supported_activities() == {ProfilerActivity.CPU}
        True
    """
    return {ProfilerActivity.CPU}


class ProfilerAction(enum.Enum):
    """What a :func:`schedule` asks of the profiler at a step (PyTorch's enum)."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


_RECORDING = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)


class ScheduleError(ValueError, AssertionError):
    """Invalid ``schedule`` arguments (PyTorch asserts them: an ``AssertionError`` there)."""


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0) -> Callable[[int], ProfilerAction]:
    """PyTorch's profiling schedule: skip ``skip_first`` steps, then cycles of ``wait`` idle,
    ``warmup`` and ``active`` recorded steps (``repeat`` cycles, 0: until the end). At the
    last active step of a cycle the profile's ``on_trace_ready`` gets that cycle's events.

    Example:
        >>> s = schedule(wait=1, warmup=1, active=2)
        >>> [s(i).name for i in range(5)]
        ['NONE', 'WARMUP', 'RECORD', 'RECORD_AND_SAVE', 'NONE']
    """
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise ScheduleError(f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), "
                            f"warmup={warmup} (need >= 0), active={active} (need > 0), "
                            f"repeat={repeat} (need >= 0), skip_first={skip_first} "
                            f"(need >= 0).")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results",
                      UserWarning, stacklevel=2)

    def schedule_fn(step: int) -> ProfilerAction:
        if step < 0:
            raise ValueError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:
            step += wait
        num_steps = wait + warmup + active
        if repeat > 0 and step / num_steps >= repeat:
            return ProfilerAction.NONE
        mod_step = step % num_steps
        if mod_step < wait:
            return ProfilerAction.NONE
        if mod_step < wait + warmup:
            return ProfilerAction.WARMUP
        return (ProfilerAction.RECORD if mod_step < num_steps - 1
                else ProfilerAction.RECORD_AND_SAVE)

    return schedule_fn


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None,
                              use_gzip: bool = False) -> Callable[[Any], None]:
    """An ``on_trace_ready`` handler writing each trace as Chrome JSON
    ``{dir_name}/{worker_name}.{time_ns}.pt.trace.json`` (PyTorch's names; ``worker_name``
    defaults to ``host_pid``).

    Example:
        >>> import tempfile, os, numpy as np, funcgrad.numpy as fnp
        >>> d = tempfile.mkdtemp()
        >>> with profile(on_trace_ready=tensorboard_trace_handler(d, "w")):
        ...     _ = fnp.sin(np.ones(2))
        >>> [n.endswith(".pt.trace.json") for n in os.listdir(d)]
        [True]
    """

    def handler_fn(prof: Any) -> None:
        os.makedirs(dir_name, exist_ok=True)
        name = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        path = os.path.join(dir_name, f"{name}.{time.time_ns()}.pt.trace.json")
        if use_gzip:
            import gzip

            tmp = path + ".tmp"
            prof.export_chrome_trace(tmp)
            with open(tmp, "rb") as src, gzip.open(path + ".gz", "wb") as dst:
                dst.write(src.read())
            os.remove(tmp)
        else:
            prof.export_chrome_trace(path)

    return handler_fn


class Interval(NamedTuple):
    """An event's ``time_range``: ``start``/``end`` in microseconds (PyTorch's).

    Example:
        >>> Interval(2.0, 5.5).elapsed_us()
        3.5
    """

    start: float
    end: float

    def elapsed_us(self) -> float:
        return self.end - self.start


class _TimeStrings:
    """PyTorch's formatted-time attributes (``cpu_time_total_str``...)."""

    __slots__ = ()

    @property
    def cpu_time_str(self) -> str:
        return _fmt_time(self.cpu_time)  # type: ignore[attr-defined]

    @property
    def cpu_time_total_str(self) -> str:
        return _fmt_time(self.cpu_time_total)  # type: ignore[attr-defined]

    @property
    def self_cpu_time_total_str(self) -> str:
        return _fmt_time(self.self_cpu_time_total)  # type: ignore[attr-defined]

    # PyTorch's device-side attributes, which scripts read on CPU-only runs too: host time
    # is all this profiler measures, so they are zero (as PyTorch's without a GPU)
    device_type = ProfilerActivity.CPU
    device_time_total = self_device_time_total = 0.0
    cuda_time_total = self_cuda_time_total = 0.0
    device_memory_usage = self_device_memory_usage = 0
    cuda_memory_usage = self_cuda_memory_usage = 0

    @property
    def device_time_total_str(self) -> str:
        return _fmt_time(0.0)

    @property
    def self_device_time_total_str(self) -> str:
        return _fmt_time(0.0)


class FunctionEvent(_TimeStrings):
    """One timed operation (a primitive, a jitted call, or a ``record_function`` range).

    Times are in microseconds, as PyTorch reports them; ``cpu_parent``/``cpu_children`` link
    an event to the events it is nested in / that are nested in it.
    """

    __slots__ = ("name", "start_ns", "end_ns", "child_ns", "input_shapes", "thread", "kind",
                 "source", "id", "self_cpu_memory_usage", "child_memory", "has_children",
                 "cpu_parent", "cpu_children", "flops", "trace_name", "stack")

    def __init__(self, name: str, kind: str, input_shapes: list | None, source: str,
                 trace_name: str | None = None) -> None:
        self.name = name
        #: the name in the Chrome trace: ``name``, but a step range's own number
        #: (``ProfilerStep#3`` for the event named ``ProfilerStep*``), as PyTorch's
        self.trace_name = name if trace_name is None else trace_name
        #: the user's source frames of the operation (``with_stack=True``; else empty), as
        #: PyTorch's ``FunctionEvent.stack``
        self.stack: list[str] = []
        self.kind = kind
        self.input_shapes = input_shapes
        self.source = source
        self.start_ns = 0
        self.end_ns = 0
        self.child_ns = 0
        self.thread = threading.get_ident()
        self.id = 0
        # bytes of the results this operation allocated itself (``profile_memory=True``), and
        # those allocated by the events nested in it
        self.self_cpu_memory_usage = 0
        self.child_memory = 0
        self.has_children = False
        self.cpu_parent: FunctionEvent | None = None
        self.cpu_children: list[FunctionEvent] = []
        #: estimated floating-point operations (``with_flops=True``; 0 otherwise)
        self.flops = 0.0

    @property
    def key(self) -> str:
        return self.name

    @property
    def cpu_time_total(self) -> float:
        return (self.end_ns - self.start_ns) / 1e3

    @property
    def self_cpu_time_total(self) -> float:
        return (self.end_ns - self.start_ns - self.child_ns) / 1e3

    @property
    def count(self) -> int:
        return 1

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total

    @property
    def time_range(self) -> Interval:
        return Interval(self.start_ns / 1e3, self.end_ns / 1e3)

    @property
    def is_user_annotation(self) -> bool:
        return self.kind == "range"

    @property
    def cpu_memory_usage(self) -> int:
        """Bytes allocated by this event and the events nested in it."""
        return self.self_cpu_memory_usage + self.child_memory

    def __repr__(self) -> str:
        return (f"<FunctionEvent {self.name} total={self.cpu_time_total:.1f}us "
                f"self={self.self_cpu_time_total:.1f}us>")


class FunctionEventAvg(_TimeStrings):
    """Events with one key (name, and input shapes when grouped by them), summed."""

    __slots__ = ("key", "count", "cpu_time_total", "self_cpu_time_total", "input_shapes",
                 "cpu_memory_usage", "self_cpu_memory_usage", "flops", "cpu_parent", "stack",
                 "cpu_children")

    def __init__(self, key: str, input_shapes: Any = None, stack: list[str] | None = None
                 ) -> None:
        self.key = key
        #: the grouped frames (``key_averages(group_by_stack_n=n)``: the first ``n``), as
        #: PyTorch's
        self.stack = [] if stack is None else stack
        self.cpu_children: list[Any] = []
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.input_shapes = input_shapes
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.flops = 0.0
        #: the first event's parent, as PyTorch's (None: a top-level event)
        self.cpu_parent: Any = None

    def add(self, e: Any) -> None:
        if self.count == 0:
            self.cpu_parent = e.cpu_parent
        self.count += e.count
        self.flops += e.flops
        self.cpu_time_total += e.cpu_time_total
        self.self_cpu_time_total += e.self_cpu_time_total
        self.cpu_memory_usage += e.cpu_memory_usage
        self.self_cpu_memory_usage += e.self_cpu_memory_usage

    @property
    def cpu_time(self) -> float:
        """Average total time per call (us)."""
        return self.cpu_time_total / self.count if self.count else 0.0

    @property
    def self_cpu_time(self) -> float:
        return self.self_cpu_time_total / self.count if self.count else 0.0

    def __repr__(self) -> str:
        return (f"<FunctionEventAvg key={self.key} count={self.count} "
                f"cpu_time_total={self.cpu_time_total:.1f}us "
                f"self_cpu_time_total={self.self_cpu_time_total:.1f}us>")


_SORT_KEYS = {
    "cpu_time": "cpu_time", "cpu_time_total": "cpu_time_total",
    "self_cpu_time_total": "self_cpu_time_total", "self_cpu_time": "self_cpu_time",
    "count": "count", "flops": "flops",
    "cpu_memory_usage": "cpu_memory_usage", "self_cpu_memory_usage": "self_cpu_memory_usage",
    # Accepted for PyTorch scripts; there is no device time, these sort by host time.
    "cuda_time_total": "cpu_time_total", "self_cuda_time_total": "self_cpu_time_total",
    "device_time_total": "cpu_time_total", "self_device_time_total": "self_cpu_time_total",
}


def _fmt_memory(nbytes: int) -> str:
    """PyTorch's memory column format (``1.00 Kb`` is 1024 bytes)."""
    for unit, size in (("Gb", 1024 ** 3), ("Mb", 1024 ** 2), ("Kb", 1024)):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} b"


def _fmt_time(us: float) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


class EventList(list):
    """A list of events (or averages) with PyTorch's ``table`` and ``total_average``."""

    def table(self, sort_by: str | None = None, row_limit: int = 100,
              max_name_column_width: int = 55, header: str | None = None,
              max_src_column_width: int = 75,
              top_level_events_only: bool = False, **_: Any) -> str:
        """The events as PyTorch's text table, sorted descending by ``sort_by``.

        Example:
            >>> EventList().table()
            'No events recorded.'
        """
        if sort_by is not None and sort_by not in _SORT_KEYS:
            raise ValueError(f"table(sort_by={sort_by!r}): expected one of "
                             f"{sorted(_SORT_KEYS)}")
        rows = list(self)
        if top_level_events_only:  # PyTorch's: the events not nested in another one
            rows = [e for e in rows if getattr(e, "cpu_parent", None) is None]
        if not rows:
            return "No events recorded."
        if sort_by is not None:
            attr = _SORT_KEYS[sort_by]
            rows.sort(key=lambda e: getattr(e, attr), reverse=True)
        rows = rows[:row_limit] if row_limit is not None and row_limit >= 0 else rows
        with_shapes = any(getattr(e, "input_shapes", None) for e in rows)
        # PyTorch shows the memory columns when memory was profiled
        with_memory = any(e.cpu_memory_usage for e in self)
        # PyTorch's "Total FLOPs" column (with_flops=True), scaled to the smallest count
        flop_counts = [e.flops for e in self if e.flops > 0]
        if flop_counts:
            step = min(int(math.log10(min(flop_counts)) // 3), 5) if min(flop_counts) >= 1 \
                else 0
            flops_scale = 10.0 ** (-3 * step)
            flops_header = "Total " + ("FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs",
                                       "PFLOPs")[step]
        total_self = sum(e.self_cpu_time_total for e in self) or 1.0
        total_all = total_self  # PyTorch's percentages are relative to the summed self time
        name_w = min(max_name_column_width, max(4, *(len(e.key) for e in rows)))
        cols = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
        if with_memory:
            cols += ["CPU Mem", "Self CPU Mem"]
        cols.append("# of Calls")
        if flop_counts:
            cols.append(flops_header)
        n_num = len(cols) - 1
        widths = [name_w] + [12] * n_num
        if with_shapes:
            cols.append("Input Shapes")
            widths.append(max(12, min(60, max(len(str(e.input_shapes)) for e in rows))))
        # PyTorch's "Source Location" column: the frames of events that have a stack (one
        # per line below the row), cut from the left to max_src_column_width
        with_stack = any(getattr(e, "stack", None) for e in rows)
        if with_stack:
            cols.append("Source Location")
            widths.append(max(15, min(max_src_column_width, max(
                len(f) for e in rows for f in getattr(e, "stack", []) or [""]))))
        sep = "  ".join("-" * w for w in widths)

        def line(vals: Sequence[str]) -> str:
            out = [vals[0][:name_w].ljust(name_w)]
            out += [v.rjust(w) for v, w in zip(vals[1:n_num + 1], widths[1:n_num + 1])]
            if with_shapes:
                out.append(vals[n_num + 1][:widths[n_num + 1]].ljust(widths[n_num + 1]))
            if with_stack:
                frame = vals[-1]
                if len(frame) > widths[-1]:
                    frame = "..." + frame[len(frame) - widths[-1] + 3:]
                out.append(frame.ljust(widths[-1]))
            return "  ".join(out).rstrip()

        lines = []
        if header is not None:  # PyTorch's banner: a rule of '=' over the table's width
            lines += ["=" * len(sep), header]
        if top_level_events_only:
            lines += ["=" * len(sep), "This report only display top-level ops statistics"]
        lines += [sep, line(cols), sep]
        for e in rows:
            vals = [e.key, f"{100 * e.self_cpu_time_total / total_self:.2f}%",
                    _fmt_time(e.self_cpu_time_total),
                    f"{100 * e.cpu_time_total / total_all:.2f}%", _fmt_time(e.cpu_time_total),
                    _fmt_time(e.cpu_time_total / max(e.count, 1))]
            if with_memory:
                vals += [_fmt_memory(e.cpu_memory_usage), _fmt_memory(e.self_cpu_memory_usage)]
            vals.append(str(e.count))
            if flop_counts:
                vals.append(f"{e.flops * flops_scale:8.3f}" if e.flops > 0 else "--")
            if with_shapes:
                vals.append(str(e.input_shapes or []))
            frames = list(getattr(e, "stack", []) or [])
            if with_stack:
                vals.append(frames[0] if frames else "")
            lines.append(line(vals))
            if with_stack and frames:
                blank = [""] * (len(cols) - 1)
                lines += [line(blank + [f]) for f in frames[1:]]
                lines.append(line(blank + [""]))
        lines.append(sep)
        lines.append(f"Self CPU time total: {_fmt_time(total_self)}")
        return "\n".join(lines)

    def total_average(self) -> FunctionEventAvg:
        """All events summed into one average.

        Example:
            >>> EventList().total_average().count
            0
        """
        avg = FunctionEventAvg("Total")
        for e in self:
            avg.add(e)
        return avg

    @property
    def self_cpu_time_total(self) -> float:
        """The summed self time of the events (us): the profiled time (PyTorch's)."""
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     **_: Any) -> EventList:
        """The events grouped by name (and input shapes, and the first ``group_by_stack_n``
        frames of their ``stack``: recorded with ``with_stack=True``), in first-seen order.

        Example:
            >>> EventList().key_averages()
            []
        """
        groups: dict[Any, FunctionEventAvg] = {}
        for e in self:
            shapes = e.input_shapes if group_by_input_shape else None
            frames = list(getattr(e, "stack", []))[:group_by_stack_n] \
                if group_by_stack_n > 0 else []
            key = (e.key, repr(shapes), tuple(frames))
            avg = groups.get(key)
            if avg is None:
                avg = groups[key] = FunctionEventAvg(e.key, shapes, frames)
            avg.add(e)
        return EventList(groups.values())

    def __str__(self) -> str:
        return self.table()


def _shapes(args: Iterable[Any]) -> list[list[int]]:
    out = []
    for a in args:
        try:
            out.append(list(get_aval(a).shape))
        except TypeError:
            out.append([])
    return out


class _Recorder:
    """The observer: times every operation, keeps the open ones on a stack."""

    def __init__(self, prof: profile) -> None:
        self.prof = prof

    def around(self, prim: Primitive, args: Sequence[Any], params: dict, eqn: Eqn | None,
               run: Callable[[], list]) -> list:
        if prim is debug_callback_p and getattr(params.get("callback"), "name", None) \
                in _RANGE_MARKERS:
            return run()  # a record_function range's marker: the range is the event
        name = prim.name
        call_name = params.get("name") if params else None
        kind = "op"
        if isinstance(call_name, str) and prim.multiple_results:
            name = f"{prim.name}({call_name})"
            kind = "call"
        if eqn is not None:
            src = str(eqn.source_info) if eqn.source_info is not None else ""
        else:
            src = str(user_source_info()) if self.prof.with_stack else ""
        ev = FunctionEvent(name, kind, _shapes(args) if self.prof.record_shapes else None, src)
        if self.prof.with_stack and src:
            ev.stack = [src]
        self.prof._open(ev)
        if self.prof.profile_memory:
            self.prof._memory.seen(args, _PREEXISTING)
        try:
            out = run()
            if self.prof.profile_memory:
                ev.self_cpu_memory_usage = _nbytes(out)
                self.prof._memory.seen(out, _CREATE)
            if self.prof.with_flops and not prim.carries_jaxprs:
                # a call's work is counted by the equations nested in it
                ev.flops = _flops(prim, args, params, out, eqn)
            return out
        finally:
            self.prof._close(ev)


def _flops(prim: Primitive, args: Sequence[Any], params: dict, outs: Sequence[Any],
           eqn: Eqn | None) -> float:
    """The estimated flops of one operation (:func:`funcgrad.interpreters.cost.eqn_cost`,
    ``Compiled.cost_analysis``'s: ``2*M*N*K`` for a matmul, one per element computed by an
    elementwise operation, one per element read by a reduction); an eager operation is
    priced as the equation it would be."""
    if eqn is None:
        try:
            eqn = Eqn(prim, [Var(get_aval(a)) for a in args], [Var(get_aval(o)) for o in outs],
                      params or {}, None)
        except TypeError:  # an operand without an abstract value: not priced
            return 0.0
    return float(eqn_cost(eqn).flops)


def _nbytes(values: Sequence[Any]) -> int:
    total = 0
    for v in values:
        try:
            a = get_aval(v)
        except TypeError:
            continue
        total += math.prod(a.shape) * a.dtype.itemsize
    return total


# PyTorch's memory-timeline vocabulary (torch.profiler._memory_profiler): the actions, numbered
# as its Action enum, and the categories in its plot order, None (unknown) seventh
_PREEXISTING, _CREATE, _DESTROY = 1, 2, 4
_CATEGORIES = ("PARAMETER", "OPTIMIZER_STATE", "INPUT", "TEMPORARY", "ACTIVATION", "GRADIENT",
               "AUTOGRAD_DETAIL", None)
_CATEGORY_COLORS = ("darkgreen", "goldenrod", "black", "mediumpurple", "red", "mediumblue",
                    "royalblue", "grey")
_UNKNOWN = _CATEGORIES.index(None)


def _allocation(x: Any) -> Any:
    """The array owning ``x``'s memory (``x``, or the base a view was taken of)."""
    root = x
    while True:
        base = getattr(root, "base", None)
        if base is None or device_of(base) is None:
            return root
        root = base


class _MemoryTimeline:
    """The allocations a ``profile_memory`` profile saw: each array an operation read that
    was made before (PyTorch's PREEXISTING, timed at the start) or that an operation made
    (CREATE), and when it was freed (DESTROY: a weak reference's callback), as
    ``(ns, action, bytes, device)`` rows. Views are their base's allocation."""

    def __init__(self, prof: profile) -> None:
        self._prof = weakref.ref(prof)
        self.rows: list[tuple[int, int, int, str]] = []
        self._live: dict[int, weakref.ref] = {}

    def seen(self, values: Iterable[Any], action: int) -> None:
        now = -1 if action == _PREEXISTING else time.perf_counter_ns()
        for v in values:
            dev = device_of(v)
            if dev is None:  # a tracer, a Python or NumPy scalar: no allocation of its own
                continue
            owner = _allocation(v)
            key = id(owner)
            if key in self._live:
                continue
            nbytes = int(getattr(owner, "nbytes", 0))
            try:
                ref = weakref.ref(owner, functools.partial(self._freed, key, nbytes, dev))
            except TypeError:  # not weakly referenceable: its end would go unseen
                continue
            self._live[key] = ref
            self.rows.append((now, action, nbytes, dev))

    def _freed(self, key: int, nbytes: int, dev: str, _ref: Any) -> None:
        self._live.pop(key, None)
        prof = self._prof()
        if prof is not None and prof._ctx is not None:  # freed while recording
            self.rows.append((time.perf_counter_ns(), _DESTROY, nbytes, dev))

    def stop(self) -> None:
        self._live.clear()  # arrays freed from now on are past the timeline

    def coalesce(self, device: str) -> tuple[list[int], list[list[int]]]:
        """PyTorch's plot points: times (microseconds; the preexisting allocations at the
        first) and, at each, the bytes live by category (``[0, PARAMETER, ..., unknown]``)."""
        # the preexisting allocations (time -1) first, as in PyTorch's timeline
        rows = sorted((r for r in self.rows if r[3] == device), key=lambda r: r[0])
        t_min = min((r[0] for r in rows if r[0] >= 0), default=0) // 1000
        times: list[int] = []
        sizes: list[list[int]] = []
        for t_ns, action, nbytes, _ in rows:
            t = t_min if t_ns < 0 else t_ns // 1000
            if not times or t != times[-1]:
                times.append(t)
                sizes.append(sizes[-1].copy() if sizes else [0] * (len(_CATEGORIES) + 1))
            sizes[-1][_UNKNOWN + 1] += -nbytes if action == _DESTROY else nbytes
        return times, sizes

    def raw(self, device: str) -> list[tuple[int, int, int, int]]:
        """PyTorch's raw events: ``(ns, action, bytes (negative when freed), category)``."""
        return [(t, a, -n if a == _DESTROY else n, _UNKNOWN)
                for t, a, n, d in sorted(self.rows, key=lambda r: r[0]) if d == device]


_active: ContextVar[profile | None] = ContextVar("funcgrad_profiler", default=None)
_STAGED = object()  # a record_function entry whose range was staged as markers
#: set while a profile is entered (started), recording or not (a schedule's wait steps): a
#: function traced then stages its record_function ranges as markers
_session: ContextVar[bool] = ContextVar("funcgrad_profiler_session", default=False)


class profile:  # noqa: N801  (PyTorch's name)
    """Record every primitive run inside the block (PyTorch's ``torch.profiler.profile``).

    ``record_shapes`` keeps input shapes; ``with_stack`` keeps the user's source line of each
    eager operation (equations of jitted functions always carry theirs), shown in the Chrome
    trace and in ``FunctionEvent.source``; ``profile_memory`` records the bytes of the results
    each operation allocates (``cpu_memory_usage``, ``self_cpu_memory_usage``: allocations
    only, frees are not tracked); ``with_flops`` estimates each operation's floating-point
    operations (``flops``: ``2*M*N*K`` per matmul, one per element an elementwise operation
    computes or a reduction reads; the table's ``Total FLOPs`` column, as PyTorch's);
    ``activities``, ``with_modules`` are accepted for compatibility (host time only). Also
    usable with ``start()``/``stop()``. ``schedule`` (see :func:`schedule`) with ``step()``
    after each training step records only the active steps, and calls
    ``on_trace_ready(prof)`` at the end of each active cycle (without a schedule: once, at
    the end), as PyTorch's.

    Example:
        >>> import numpy as np, funcgrad
        >>> f = funcgrad.jit(lambda x: (x * 2.0 + 1.0).sum())
        >>> with profile() as prof:
        ...     _ = f(np.ones(4))
        >>> {e.key: e.count for e in prof.key_averages()}["mul"]
        1
    """

    def __init__(self, activities: Any = None, *, record_shapes: bool = False,
                 profile_memory: bool = False, with_stack: bool = False,
                 with_flops: bool = False, with_modules: bool = False, enabled: bool = True,
                 schedule: Any = None, on_trace_ready: Callable[..., Any] | None = None,
                 **_: Any) -> None:
        self.record_shapes = bool(record_shapes)
        self.profile_memory = bool(profile_memory)
        self.with_flops = bool(with_flops)
        self.with_stack = bool(with_stack)
        self.enabled = bool(enabled)
        self.on_trace_ready = on_trace_ready
        self.schedule = schedule
        self.step_num = 0
        self._action = ProfilerAction.RECORD
        self._events: list[FunctionEvent] = []
        self._stack: list[FunctionEvent] = []
        self._memory = _MemoryTimeline(self)
        self._ctx: instrumented | None = None
        self._token: Any = None
        self._session_token: Any = None
        self._ids = 0
        #: the open ``ProfilerStep#n`` range (with a schedule, each step is one, as PyTorch's
        #: step markers in the table and trace)
        self._step_range: FunctionEvent | None = None

    # -- recording ------------------------------------------------------------------------

    def _open(self, ev: FunctionEvent) -> None:
        self._ids += 1
        ev.id = self._ids
        if self._stack:
            ev.cpu_parent = self._stack[-1]
            ev.cpu_parent.cpu_children.append(ev)
        self._stack.append(ev)
        ev.start_ns = time.perf_counter_ns()

    def _close(self, ev: FunctionEvent) -> None:
        ev.end_ns = time.perf_counter_ns()
        stack = self._stack
        while stack and stack[-1] is not ev:  # an exception skipped some closes
            stack.pop()
        if stack:
            stack.pop()
        if ev.has_children:
            # a call or range: its results were allocated by the operations nested in it
            ev.self_cpu_memory_usage = 0
        if stack:
            stack[-1].child_ns += ev.end_ns - ev.start_ns
            stack[-1].child_memory += ev.cpu_memory_usage
            stack[-1].has_children = True
        self._events.append(ev)

    def _begin(self) -> None:
        if self._ctx is not None:
            return
        self._events, self._stack = [], []
        self._memory = _MemoryTimeline(self)
        self._ctx = instrumented(_Recorder(self))
        self._ctx.__enter__()
        self._token = _active.set(self)

    def _end(self) -> None:
        if self._ctx is None:
            return
        _active.reset(self._token)
        self._ctx.__exit__(None, None, None)
        self._ctx = None
        self._memory.stop()

    def _enter_step(self) -> None:
        if self.schedule is not None and self._ctx is not None:
            ev = FunctionEvent("ProfilerStep*", "range", [] if self.record_shapes else None, "",
                               trace_name=f"ProfilerStep#{self.step_num}")
            self._open(ev)
            self._step_range = ev

    def _exit_step(self) -> None:
        ev, self._step_range = self._step_range, None
        if ev is not None and self._ctx is not None and ev in self._stack:
            self._close(ev)

    def _trace_ready(self) -> None:
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def start(self) -> None:
        if not self.enabled or self._ctx is not None:
            return
        if self._session_token is None:
            self._session_token = _session.set(True)
        self.step_num = 0
        self._action = (ProfilerAction.RECORD if self.schedule is None
                        else self.schedule(0))
        if self._action in _RECORDING:
            self._begin()
            self._enter_step()

    def stop(self) -> None:
        if not self.enabled:
            return
        if self._session_token is not None:
            try:
                _session.reset(self._session_token)
            except ValueError:  # stopped in another context than it started in
                _session.set(False)
            self._session_token = None
        recording = self._ctx is not None
        self._exit_step()
        self._end()
        if recording:
            self._trace_ready()

    def step(self) -> None:
        """Mark the end of a training step: with a ``schedule``, start or stop recording
        as it says, and hand a finished active cycle to ``on_trace_ready``."""
        if not self.enabled or self.schedule is None:
            self.step_num += 1
            return
        self._exit_step()
        prev = self._action
        self.step_num += 1
        self._action = self.schedule(self.step_num)
        if prev is ProfilerAction.RECORD_AND_SAVE:
            self._end()
            self._trace_ready()
        if self._action in _RECORDING:
            self._begin()
            self._enter_step()
        else:
            self._end()

    def __enter__(self) -> profile:
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # -- results --------------------------------------------------------------------------

    def events(self) -> EventList:
        """Every recorded event, in order of starting."""
        return EventList(sorted(self._events, key=lambda e: e.start_ns))

    @property
    def function_events(self) -> EventList:
        """Every recorded event (PyTorch's legacy ``autograd.profiler`` name)."""
        return self.events()

    @property
    def self_cpu_time_total(self) -> float:
        """The profiled time (us): the summed self time of every event."""
        return self.events().self_cpu_time_total

    def total_average(self) -> FunctionEventAvg:
        """Every event summed into one average."""
        return self.events().total_average()

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     **_: Any) -> EventList:
        """Events grouped by name (and input shapes, and the first ``group_by_stack_n``
        frames of their stack), in first-seen order."""
        return self.events().key_averages(group_by_input_shape, group_by_stack_n)

    def table(self, sort_by: str | None = None, row_limit: int = 100, **kw: Any) -> str:
        return self.key_averages().table(sort_by=sort_by, row_limit=row_limit, **kw)

    def __str__(self) -> str:
        """The table of every event, as ``print(prof)`` gives for PyTorch's
        ``torch.autograd.profiler.profile``."""
        return self.events().table()

    def export_stacks(self, path: str | os.PathLike, metric: str = "self_cpu_time_total"
                      ) -> None:
        """Write PyTorch's flame-graph input: a line ``frame;frame;...;op value`` per event
        with a positive ``metric`` (microseconds, as an integer), for ``flamegraph.pl`` or
        speedscope.

        The frames of an operation are the ranges and jitted calls it ran in (outermost
        first) and, with ``with_stack=True`` (always for equations of jitted functions), the
        user's source line of the operation. ``metric`` is ``"self_cpu_time_total"`` (or
        PyTorch's ``"self_cuda_time_total"``/``"self_device_time_total"``, which give host
        time here).

        Example:
            >>> import numpy as np, os, tempfile, funcgrad.numpy as fnp
            >>> with profile(with_stack=True) as prof:
            ...     with record_function("step"):
            ...         _ = fnp.sin(np.ones(1000))
            >>> path = os.path.join(tempfile.mkdtemp(), "stacks.txt")
            >>> prof.export_stacks(path)
            >>> open(path).read().startswith("step")
            True
        """
        if metric not in ("self_cpu_time_total", "self_cuda_time_total",
                          "self_device_time_total"):
            raise ValueError(f"export_stacks(metric={metric!r}): expected "
                             "'self_cpu_time_total' (or 'self_cuda_time_total', "
                             "'self_device_time_total')")
        blank = str.maketrans(" ;\t\n", "____")  # PyTorch's: frames must not hold these
        lines = []
        for e in self.events():
            value = int(e.self_cpu_time_total)
            if value <= 0:
                continue
            frames, parent = [], e.cpu_parent
            while parent is not None:
                frames.append(parent.name)
                parent = parent.cpu_parent
            frames.reverse()
            if e.source:
                frames.append(e.source)
            frames.append(e.name)
            lines.append(";".join(f.translate(blank) for f in frames) + f" {value}\n")
        tmp = f"{os.fspath(path)}.tmp{os.getpid()}"
        with open(tmp, "w") as f:
            f.writelines(lines)
        os.replace(tmp, path)

    def export_chrome_trace(self, path: str | os.PathLike) -> None:
        """Write the events as Chrome trace JSON (open in Perfetto or chrome://tracing)."""
        pid = os.getpid()
        t0 = min((e.start_ns for e in self._events), default=0)
        trace = []
        for e in self.events():
            args: dict[str, Any] = {}
            if e.input_shapes is not None:
                args["Input Dims"] = e.input_shapes
            if e.source:
                args["Source"] = e.source
            trace.append({
                "ph": "X", "cat": "user_annotation" if e.kind == "range" else "cpu_op",
                "name": e.trace_name, "pid": pid, "tid": e.thread,
                "ts": (e.start_ns - t0) / 1e3, "dur": (e.end_ns - e.start_ns) / 1e3,
                "args": args,
            })
        tmp = f"{os.fspath(path)}.tmp{os.getpid()}"
        with open(tmp, "w") as f:
            json.dump({"traceEvents": trace, "displayTimeUnit": "ms"}, f)
        os.replace(tmp, path)  # atomic: a reader never sees half a file

    def export_memory_timeline(self, path: str | os.PathLike, device: str | None = None
                               ) -> None:
        """Write the memory timeline of ``device`` (PyTorch's ``export_memory_timeline``; by
        default funcgrad's default device), chosen by the suffix of ``path``: ``.json``
        (``.json.gz`` gzipped) holds PyTorch's plot points ``[times, sizes]``, the times in
        microseconds and at each the bytes live per category (``[0, PARAMETER,
        OPTIMIZER_STATE, INPUT, TEMPORARY, ACTIVATION, GRADIENT, AUTOGRAD_DETAIL,
        unknown]``); ``.raw.json.gz`` the raw events ``(ns, action, bytes, category)``
        (actions: 1 preexisting, 2 create, 4 destroy, freed bytes negative); ``.html`` the
        stacked plot as an embedded PNG (needs matplotlib; without it a message is printed,
        as PyTorch does).

        The timeline is of allocations: every array an operation read that existed before
        (preexisting, at the first time), every array an operation made (a view counts as
        its base), and when each was freed. PyTorch also sorts the bytes into categories by
        analysing its autograd graph; funcgrad keeps no such graph, so every allocation is
        in the last, unknown, category. As PyTorch, it needs ``record_shapes``,
        ``profile_memory`` and ``with_stack``.

        Example:
            >>> import json, os, tempfile, numpy as np, funcgrad.numpy as fnp
            >>> x = np.ones(1000)
            >>> with profile(record_shapes=True, profile_memory=True, with_stack=True) as prof:
            ...     y = fnp.sin(x)
            ...     del y
            >>> path = os.path.join(tempfile.mkdtemp(), "memory.json")
            >>> prof.export_memory_timeline(path, device="cpu")
            >>> times, sizes = json.load(open(path))
            >>> [s[-1] for s in sizes]   # x (preexisting) and sin's result, then y freed
            [16000, 8000]
        """
        missing = [f"{name}=True" for name in ("record_shapes", "profile_memory", "with_stack")
                   if not getattr(self, name)]
        if missing:
            raise ValueError(f"{', '.join(missing)} required for memory profiling.")
        where = canonical_device(get_default_device() if device is None else str(device))
        path = os.fspath(path)
        if path.endswith(".html"):
            self._memory_html(path, where)
            return
        data: Any = (self._memory.raw(where) if path.endswith("raw.json.gz")
                     else list(self._memory.coalesce(where)))
        tmp = f"{path}.tmp{os.getpid()}"
        if path.endswith(".gz"):
            with gzip.open(tmp, "wt") as f:
                json.dump(data, f)
        else:
            with open(tmp, "w") as f:
                json.dump(data, f)
        os.replace(tmp, path)

    def _memory_html(self, path: str, device: str) -> None:
        try:
            import matplotlib
        except ImportError:
            print("export_memory_timeline_html failed because matplotlib was not found.")
            return
        import base64
        import io

        import numpy

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        times, sizes = self._memory.coalesce(device)
        t = numpy.asarray(times, float) - (times[0] if times else 0)
        stacked = numpy.cumsum(numpy.asarray(sizes, float).reshape(len(times), -1), axis=1
                               ) / 1024 ** 3
        fig = plt.figure(figsize=(20, 12), dpi=80)
        axes = fig.gca()
        for i, color in enumerate(_CATEGORY_COLORS):
            axes.fill_between(t / 1e3, stacked[:, i], stacked[:, i + 1], color=color,
                              alpha=0.7)
        fig.legend(["Unknown" if c is None else c for c in _CATEGORIES])
        axes.set_xlabel("Time (ms)")
        axes.set_ylabel("Memory (GB)")
        peak = float(stacked[:, -1].max()) if len(times) else 0.0
        axes.set_title(f"Max memory allocated: {peak:.2f} GiB")
        png = io.BytesIO()
        fig.savefig(png, format="png")
        plt.close(fig)
        encoded = base64.b64encode(png.getvalue()).decode("utf-8")
        with open(path, "w", encoding="utf-8") as f:
            f.write("<html>\n<head><meta charset=\"utf-8\" /><title>GPU Memory Timeline HTML"
                    f"</title></head>\n<body>\n  <img src='data:image/png;base64,{encoded}'>\n"
                    "</body>\n</html>")


def _range_enter(name: str, trace_name: str | None = None) -> None:
    """Open the range ``name`` in the active profile (a marker's callback, at run time)."""
    prof = _active.get()
    if prof is not None:
        prof._open(FunctionEvent(name, "range", [] if prof.record_shapes else None, "",
                                 trace_name=trace_name))


def _range_exit(name: str) -> None:
    """Close the innermost open range ``name`` of the active profile."""
    prof = _active.get()
    if prof is None:
        return
    for ev in reversed(prof._stack):
        if ev.kind == "range" and ev.name == name:
            prof._close(ev)
            return


#: the names of the marker callbacks a record_function inside a traced function stages
_RANGE_MARKERS = frozenset((_range_enter.__name__, _range_exit.__name__))


class record_function:  # noqa: N801  (PyTorch's name)
    """A named range in the profile (context manager or decorator); a no-op when no profile
    is active.

    A function traced (``jit``, ``grad``, ``vmap``...) inside a ``with profile(...)`` block
    stages the range as two markers (:func:`funcgrad.debug.callback`s that do nothing unless
    a profile records when they run), so a jitted function's ranges show in every profiled
    call, as PyTorch keeps ``record_function`` ranges in compiled code; their events contain
    the equations between the markers. A function compiled before any profile was entered has
    no markers (its ranges are not seen; nothing is added to its compiled code).

    Example:
        >>> with record_function("setup"):
        ...     pass
    """

    def __init__(self, name: str, args: str | None = None) -> None:
        if not isinstance(name, str):
            raise TypeError(f"record_function(name): expected a str, got {type(name).__name__}")
        self.name = name
        self._trace_name: str | None = None  # the trace's name for the range, if not name
        self._open: list[tuple[profile, FunctionEvent]] = []

    def __enter__(self) -> record_function:
        if _session.get() and current_trace() is not eval_trace:
            debug_callback(_range_enter, self.name,
                           *(() if self._trace_name is None else (self._trace_name,)))
            self._open.append(_STAGED)  # type: ignore[arg-type]
            return self
        prof = _active.get()
        if prof is not None:
            ev = FunctionEvent(self.name, "range", [] if prof.record_shapes else None, "",
                               trace_name=self._trace_name)
            prof._open(ev)
            self._open.append((prof, ev))
        else:
            self._open.append(None)  # type: ignore[arg-type]
        return self

    def __exit__(self, *exc: Any) -> None:
        entry = self._open.pop()
        if entry is _STAGED:
            if exc[0] is None:  # (a failed trace has no program to mark)
                debug_callback(_range_exit, self.name)
            return
        if entry is not None:
            prof, ev = entry
            prof._close(ev)

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*a: Any, **k: Any) -> Any:
            with record_function(self.name):
                return fn(*a, **k)

        return wrapper


# -- JAX's names: jax.profiler.trace / start_trace / stop_trace, TraceAnnotation... -----------

class TraceAnnotation(record_function):
    """``jax.profiler.TraceAnnotation(name, **kwargs)``: a named range in the trace (a
    :class:`record_function`; the keyword metadata is accepted, and shown in the trace's
    event name as ``name#key=value,...#``, as JAX's trace viewer writes it).

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> with profile() as prof:
        ...     with TraceAnnotation("load", batch=3):
        ...         _ = fnp.sin(np.ones(2))
        >>> [e.trace_name for e in prof.events()][0]
        'load#batch=3#'
    """

    def __init__(self, name: str, **kwargs: Any) -> None:
        super().__init__(name)
        self.kwargs = kwargs
        if kwargs:
            meta = ",".join(f"{k}={v}" for k, v in kwargs.items())
            self._trace_name = f"{name}#{meta}#"


class StepTraceAnnotation(TraceAnnotation):
    """``jax.profiler.StepTraceAnnotation(name, step_num=...)``: a training step's range (a
    :class:`TraceAnnotation`; the step number shows in the trace's event name).

    Example:
        >>> with StepTraceAnnotation("train", step_num=0):
        ...     pass
    """

    def __init__(self, name: str, **kwargs: Any) -> None:
        super().__init__(name, **kwargs)


def annotate_function(func: Callable[..., Any], name: str | None = None,
                      **decorator_kwargs: Any) -> Callable[..., Any]:
    """``jax.profiler.annotate_function``: ``func`` with every call a
    :class:`TraceAnnotation` range named ``name`` (default: the function's qualified name).

    Example:
        >>> import numpy as np, funcgrad.numpy as fnp
        >>> f = annotate_function(lambda x: fnp.sin(x), name="my_sin")
        >>> with profile() as prof:
        ...     _ = f(np.ones(2))
        >>> sorted(e.key for e in prof.key_averages())
        ['my_sin', 'sin']
    """
    label = name if name is not None else getattr(func, "__qualname__", repr(func))

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with TraceAnnotation(label, **decorator_kwargs):
            return func(*args, **kwargs)

    return wrapper


#: the trace of start_trace / stop_trace: (profile, log_dir, create_perfetto_trace, link)
_jax_trace: list[tuple[profile, str, bool, bool]] = []


def start_trace(log_dir: str | os.PathLike, create_perfetto_link: bool = False,
                create_perfetto_trace: bool = False, profiler_options: Any = None) -> None:
    """``jax.profiler.start_trace``: record every operation until :func:`stop_trace`, which
    writes the trace under ``log_dir`` (see :func:`trace`). One trace at a time, as JAX.

    Example:
        >>> import tempfile
        >>> start_trace(tempfile.mkdtemp())
        >>> stop_trace()
    """
    del profiler_options  # (host time only: nothing to configure)
    if _jax_trace:
        raise RuntimeError("Profile has already been started. Only one profile may be run at "
                           "a time.")
    prof = profile(record_shapes=True)
    prof.start()
    _jax_trace.append((prof, os.fspath(log_dir), bool(create_perfetto_trace),
                       bool(create_perfetto_link)))


def stop_trace() -> None:
    """``jax.profiler.stop_trace``: end the trace :func:`start_trace` began and write it as
    ``log_dir/plugins/profile/<run>/<host>.trace.json.gz`` (Chrome trace JSON, gzipped:
    TensorBoard's profile plugin and Perfetto open it), plus ``perfetto_trace.json.gz`` beside
    it with ``create_perfetto_trace`` (or ``create_perfetto_link``: there is no server to
    link to here, so the path to open at https://ui.perfetto.dev is printed).

    Example:
        >>> import glob, os, tempfile
        >>> d = tempfile.mkdtemp()
        >>> start_trace(d)
        >>> stop_trace()
        >>> len(glob.glob(os.path.join(d, "plugins", "profile", "*", "*.trace.json.gz")))
        1
    """
    import gzip
    import shutil

    if not _jax_trace:
        raise RuntimeError("No profile started")
    prof, log_dir, perfetto, link = _jax_trace.pop()
    prof.stop()
    run = os.path.join(log_dir, "plugins", "profile",
                       time.strftime("%Y_%m_%d_%H_%M_%S", time.localtime()))
    os.makedirs(run, exist_ok=True)
    plain = os.path.join(run, f".trace-{os.getpid()}.json")
    prof.export_chrome_trace(plain)
    outs = [os.path.join(run, f"{socket.gethostname()}.trace.json.gz")]
    if perfetto or link:
        outs.append(os.path.join(run, "perfetto_trace.json.gz"))
    for out in outs:
        with open(plain, "rb") as src, gzip.open(out + ".tmp", "wb") as dst:
            shutil.copyfileobj(src, dst)
        os.replace(out + ".tmp", out)
    os.remove(plain)
    if link:
        print(f"Open {outs[-1]} at https://ui.perfetto.dev (Open trace file)")


class trace:  # noqa: N801  (JAX's name)
    """``jax.profiler.trace(log_dir, create_perfetto_link=False, create_perfetto_trace=False)``:
    :func:`start_trace` on entering the block, :func:`stop_trace` on leaving it (also as a
    decorator). The trace is Chrome JSON (gzipped) in ``log_dir/plugins/profile/<run>/``.

    Example:
        >>> import os, tempfile, numpy as np, funcgrad.numpy as fnp
        >>> d = tempfile.mkdtemp()
        >>> with trace(d, create_perfetto_trace=True):
        ...     _ = fnp.sin(np.ones(2))
        >>> run = os.path.join(d, "plugins", "profile", os.listdir(os.path.join(d, "plugins", "profile"))[0])
        >>> "perfetto_trace.json.gz" in os.listdir(run)
        True
    """

    def __init__(self, log_dir: str | os.PathLike, create_perfetto_link: bool = False,
                 create_perfetto_trace: bool = False, profiler_options: Any = None) -> None:
        self._args = (log_dir, create_perfetto_link, create_perfetto_trace, profiler_options)

    def __enter__(self) -> trace:
        start_trace(*self._args)
        return self

    def __exit__(self, *exc: Any) -> None:
        stop_trace()

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*a: Any, **k: Any) -> Any:
            with trace(*self._args):
                return fn(*a, **k)

        return wrapper
