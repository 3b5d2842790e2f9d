"""Shared benchmark harness: fresh process per case, pinned threads, warm-up, medians, ratios.

Each benchmark module defines ``CASES = {name: setup}`` where ``setup()`` returns
``(funcgrad_fn, numpy_fn)``: two zero-argument callables computing the same thing, one with
funcgrad and one hand-written in NumPy. ``main(CASES)`` runs every case in a fresh Python
process (so one case's allocations and caches do not colour the next) and prints a table of
median times and the ratio funcgrad / NumPy. Run one case in-process with ``--case NAME``.
"""

from __future__ import annotations

import os

# Pin BLAS/OpenMP to one thread *before* NumPy loads: on this 2-core shared machine,
# oversubscription makes timings meaningless.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
             "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402


def time_callable(fn: Callable[[], object], rounds: int = 7, min_time: float = 0.2) -> float:
    """Median seconds per call over ``rounds`` rounds, after a warm-up."""
    n = _calls_per_round(fn, min_time)
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        times.append((time.perf_counter() - t) / n)
    return statistics.median(times)


def _calls_per_round(fn: Callable[[], object], min_time: float) -> int:
    """How many calls of ``fn`` make a round of about ``min_time`` seconds (after a warm-up:
    the first calls trace, compile and fill caches)."""
    for _ in range(3):
        fn()
    n = 1
    while True:
        t = time.perf_counter()
        for _ in range(n):
            fn()
        dt = time.perf_counter() - t
        if dt >= min_time / 4 or n > 1_000_000:
            break
        n *= 2
    return max(1, int(n * (min_time / max(dt, 1e-9))))


def time_rounds(fns: list[Callable[[], object]], rounds: int = 7,
                min_time: float = 0.2) -> list[list[float]]:
    """Seconds per call of each of ``fns``, one list of ``rounds`` values each; the callables
    are timed round by round in turn (interleaved), so a neighbour's burst of load slows all
    of them alike instead of one."""
    counts = [_calls_per_round(fn, min_time) for fn in fns]
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(rounds):
        for fn, n, acc in zip(fns, counts, times):
            t = time.perf_counter()
            for _ in range(n):
                fn()
            acc.append((time.perf_counter() - t) / n)
    return times


def interleaved_cpu(ours: Callable[[], object], theirs: Callable[[], object],
                    rounds: int = 15, per_round: int = 5, warm_up: int = 3) -> dict:
    """CPU time (``process_time``) per call of two callables timed in alternating rounds, so
    a busy neighbour slows both alike: each one's best round (``ours_s``, ``theirs_s``), the
    ratio of the bests, and the per-round ratios' median and interquartile range."""
    for _ in range(warm_up):
        ours()
        theirs()
    t_o: list[float] = []
    t_t: list[float] = []
    for _ in range(rounds):
        for fn, acc in ((ours, t_o), (theirs, t_t)):
            t = time.process_time()
            for _ in range(per_round):
                fn()
            acc.append((time.process_time() - t) / per_round)
    ratios = sorted(a / b for a, b in zip(t_o, t_t))
    return {"ours_s": min(t_o), "theirs_s": min(t_t), "ratio": min(t_o) / min(t_t),
            "ratio_median": statistics.median(ratios), "ratio_lo": ratios[len(ratios) // 4],
            "ratio_hi": ratios[3 * len(ratios) // 4]}


def summarize(times: list[float]) -> dict:
    """Best, median and spread (max - min, relative to the median) of per-round times."""
    med = statistics.median(times)
    return {"best": min(times), "median": med,
            "spread": (max(times) - min(times)) / med if med else 0.0}


def run_case(cases: dict, name: str) -> dict:
    ours, baseline = cases[name]()
    t_ours = time_callable(ours)
    t_base = time_callable(baseline)
    # Interleave once more and keep the better median of each: less sensitive to a noisy
    # neighbour appearing halfway through.
    t_ours = min(t_ours, time_callable(ours))
    t_base = min(t_base, time_callable(baseline))
    return {"case": name, "funcgrad_s": t_ours, "numpy_s": t_base, "ratio": t_ours / t_base}


def _fmt(s: float) -> str:
    return f"{s * 1e6:9.1f} us" if s < 1e-3 else f"{s * 1e3:9.2f} ms"


def main(cases: dict, argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--case", help="run one case in this process and print JSON")
    parser.add_argument("--only", nargs="*", help="subset of cases to run")
    args = parser.parse_args(argv)
    if args.case:
        print(json.dumps(run_case(cases, args.case)))
        return
    names = args.only or list(cases)
    print(f"{'case':44s} {'funcgrad':>12s} {'numpy':>12s} {'ratio':>7s}")
    script = sys.modules["__main__"].__file__
    for name in names:
        proc = subprocess.run([sys.executable, script, "--case", name],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            err = (proc.stderr.strip().splitlines() or ["?"])[-1]
            print(f"{name:44s} FAILED: {err}")
            continue
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        print(f"{name:44s} {_fmt(r['funcgrad_s'])} {_fmt(r['numpy_s'])} {r['ratio']:7.2f}")


def _load() -> str:
    try:
        return " ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return "?"


def first_call_round(cases: dict, name: str, warm_up: Callable[[], None] | None) -> dict:
    """One round of a first-call case, in this process: ``cases[name]()`` builds the callable
    (untimed), whose first call is timed (wall clock and this process's CPU time)."""
    import gc

    if warm_up is not None:
        warm_up()
    fn = cases[name]()
    gc.collect()
    counted = os.environ.get(COUNT_FIFO_VAR)
    if counted:  # under callgrind (--instructions): instrumentation on around the call only
        _handshake(counted, "on")
    t, c = time.perf_counter(), time.process_time()
    fn()
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    if counted:
        _handshake(counted, "off")
    return {"case": name, "wall_s": wall, "cpu_s": cpu}


#: the environment variable naming the FIFO through which a round run under callgrind asks
#: its parent to switch instrumentation on and off (``--instructions``)
COUNT_FIFO_VAR = "FUNCGRAD_BENCH_COUNT_FIFO"


def _handshake(fifo: str, what: str) -> None:
    with open(fifo, "w") as f:
        f.write(what + "\n")
    with open(fifo + ".ack") as f:  # the parent answers once callgrind has switched
        f.read()


def _first_call_instructions(script: str, name: str, root: str | None) -> int | str:
    """Instructions executed by one first call (callgrind, instrumentation switched on for
    the call alone): deterministic to a few per cent, so comparable on a loaded machine where
    CPU times are not. Needs ``valgrind`` on the PATH."""
    import re
    import tempfile

    env = dict(os.environ)
    if root is not None:
        env[BENCH_ROOT_VAR] = root
    with tempfile.TemporaryDirectory() as tmp:
        fifo = os.path.join(tmp, "fifo")
        os.mkfifo(fifo)
        os.mkfifo(fifo + ".ack")
        env[COUNT_FIFO_VAR] = fifo
        env["PYTHONHASHSEED"] = "0"
        proc = subprocess.Popen(
            ["valgrind", "--tool=callgrind", "--instr-atstart=no",
             f"--callgrind-out-file={os.path.join(tmp, 'out')}", sys.executable, script,
             "--case", name], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True)
        for _ in range(2):
            with open(fifo) as f:
                what = f.read().strip()
            subprocess.run(["callgrind_control", "-i", what, str(proc.pid)],
                           capture_output=True, check=True)
            with open(fifo + ".ack", "w") as f:
                f.write("ok\n")
        out, err = proc.communicate()
    m = re.search(r"Collected\s*:\s*(\d+)", err)
    if proc.returncode != 0 or m is None:
        return (err.strip().splitlines() or ["?"])[-1]
    return int(m.group(1))


#: the environment variable a first-call script reads for the tree whose funcgrad it imports
#: (``--against``); unset, the tree it lives in
BENCH_ROOT_VAR = "FUNCGRAD_BENCH_ROOT"


def _first_call_run(script: str, name: str, root: str | None) -> dict | str:
    env = dict(os.environ)
    if root is not None:
        env[BENCH_ROOT_VAR] = root
    proc = subprocess.run([sys.executable, script, "--case", name], capture_output=True,
                          text=True, env=env)
    if proc.returncode != 0:
        return (proc.stderr.strip().splitlines() or ["?"])[-1]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _instructions_against(script: str, names: list[str], against: str | None) -> None:
    """Instructions of one first call per case, here and (if given) in the tree ``against``."""
    print("instructions of the first call (callgrind), one fresh process per case and tree"
          + (f", against {against}" if against else ""))
    print(f"{'case':28s} {'here':>14s}" + (f" {'there':>14s} {'there/here':>11s}"
                                           if against else ""))
    for name in names:
        here = _first_call_instructions(script, name, None)
        there = _first_call_instructions(script, name, against) if against else None
        if isinstance(here, str) or isinstance(there, str):
            print(f"{name:28s} FAILED {here if isinstance(here, str) else there}")
            continue
        row = f"{name:28s} {here:14,d}"
        if there is not None:
            row += f" {there:14,d} {there / here:11.1f}"
        print(row, flush=True)


def _first_call_against(script: str, names: list[str], rounds: int, against: str) -> None:
    """CPU time of the first call here and in the tree ``against``, rounds interleaved (the
    order alternating round by round): min | median of each, and the ratio of the minima
    (the steadier statistic on a shared machine) and of the medians."""
    print(f"load average at start: {_load()}; {rounds} fresh processes per case and tree, "
          f"against {against}")
    print(f"{'case':28s} {'CPU here min|median':>22s} {'CPU there min|median':>22s} "
          f"{'there/here min':>15s} {'median':>7s}")
    for name in names:
        here: list[float] = []
        there: list[float] = []
        failed = None
        for r in range(rounds):
            order = [(None, here), (against, there)]
            for root, out in order if r % 2 == 0 else order[::-1]:
                res = _first_call_run(script, name, root)
                if isinstance(res, str):
                    failed = f"{'there' if root else 'here'}: {res}"
                    break
                out.append(res["cpu_s"])
            if failed:
                break
        if failed:
            print(f"{name:28s} FAILED {failed}")
            continue
        h = f"{_fmt(min(here)).strip()} | {_fmt(statistics.median(here)).strip()}"
        t = f"{_fmt(min(there)).strip()} | {_fmt(statistics.median(there)).strip()}"
        print(f"{name:28s} {h:>22s} {t:>22s} {min(there) / min(here):15.1f} "
              f"{statistics.median(there) / statistics.median(here):7.1f}", flush=True)
    print(f"load average at end: {_load()}")


def first_call_main(cases: dict, warm_up: Callable[[], None] | None = None,
                    argv: list[str] | None = None) -> None:
    """Like :func:`main` for costs paid once (compilation): each round of each case runs in a
    fresh process that times one first call; prints the median wall time with its range over
    the rounds, and the median CPU time."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--case", help="run one round of one case in this process (JSON)")
    parser.add_argument("--only", nargs="*", help="subset of cases to run")
    parser.add_argument("--rounds", type=int, default=5, help="fresh processes per case")
    parser.add_argument("--against", metavar="TREE",
                        help="a checkout of another commit: each round also runs the case on "
                             "its funcgrad (alternating which goes first) and the table "
                             "compares CPU times")
    parser.add_argument("--instructions", action="store_true",
                        help="count the instructions of each first call under valgrind's "
                             "callgrind instead of timing (with --against: of both trees)")
    args = parser.parse_args(argv)
    if args.case:
        print(json.dumps(first_call_round(cases, args.case, warm_up)))
        return
    script = sys.modules["__main__"].__file__
    if args.instructions:
        _instructions_against(script, args.only or list(cases), args.against)
        return
    if args.against:
        _first_call_against(script, args.only or list(cases), args.rounds, args.against)
        return
    print(f"load average at start: {_load()}; {args.rounds} fresh processes per case")
    print(f"{'case':28s} {'wall median':>12s} {'(min-max)':>22s} {'cpu median':>12s}")
    for name in args.only or list(cases):
        runs = []
        for _ in range(args.rounds):
            proc = subprocess.run([sys.executable, script, "--case", name],
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                err = (proc.stderr.strip().splitlines() or ["?"])[-1]
                print(f"{name:28s} FAILED: {err}")
                break
            runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        else:
            walls = [r["wall_s"] for r in runs]
            cpu = statistics.median(r["cpu_s"] for r in runs)
            spread = f"({_fmt(min(walls)).strip()}-{_fmt(max(walls)).strip()})"
            print(f"{name:28s} {_fmt(statistics.median(walls))} {spread:>22s} {_fmt(cpu)}",
                  flush=True)
    print(f"load average at end: {_load()}")
