"""Every benchmark in one table: ``python -m benchmarks`` (or ``python benchmarks/run_all.py``).

    python -m benchmarks                  # issue 14's rows first, then every other case
    python -m benchmarks --quick          # smoke run: issue 14's rows, one short round each
    python -m benchmarks --only bench_jit:hessian_d400 'bench_autodiff:chain*'
    python -m benchmarks --list           # the case names

A thin layer over the ``bench_*.py`` modules: each module that defines ``CASES = {name:
setup}`` (``setup()`` returns ``(funcgrad_fn, baseline_fn)``) contributes its cases; its
``BASELINE`` says what the second callable is (``"numpy"``, the default: hand-written NumPy;
``"torch"``: torch eager). For NumPy-baseline cases whose workload has a PyTorch version
(``torch_workloads.FOR_CASE``), torch eager is timed too when torch is importable. Modules
without ``CASES`` (``bench_taylor``, ``bench_compile``'s first-call cases) are run as scripts in a full run; ``bench_distributed``
needs ``mpirun`` and is left to its own command.

Each case runs in a fresh process (BLAS/OpenMP pinned to one thread, torch to one thread).
In it, funcgrad, the baseline and torch are timed in interleaved rounds (``--rounds``, each
about ``--min-time`` seconds): the table shows funcgrad's best and median time with the
spread of its rounds ((max - min) / median), and the ratios of best times to NumPy and to
torch (lower is better). Ratios move by tens of percent between runs on a shared machine:
compare runs made side by side.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
             "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import fnmatch  # noqa: E402
import glob  # noqa: E402
import importlib  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

_HERE = os.path.dirname(os.path.abspath(__file__))
# The bench modules import their neighbours (harness, workloads) as top-level modules, and
# the checkout's funcgrad when it is not installed.
sys.path[:0] = [_HERE, os.path.dirname(_HERE)]

#: issue 14's table, in its order: (module, case, what the row is)
ISSUE_ROWS = [
    ("bench_nn_conv", "cnn_step_eager", "small CNN train step, eager"),
    ("bench_nn_conv", "cnn_step_jit", "small CNN train step, jit"),
    ("bench_optim", "train_eager_adam_mlp", "MLP 784-512-512-10 step (Adam), eager"),
    ("bench_optim", "train_jit_adam_mlp", "MLP 784-512-512-10 step (Adam), jit"),
    ("bench_autodiff", "mlp_small_b32_f64", "small MLP value_and_grad, eager"),
    ("bench_jit", "mlp_small_b32_f64", "small MLP value_and_grad, jit"),
    ("bench_autodiff", "chain100_grad", "100-op chain grad, eager"),
    ("bench_jit", "chain100_grad", "100-op chain grad, jit"),
    ("bench_jacobians", "hessian_d400", "Hessian d=400, eager"),
    ("bench_jit", "hessian_d400", "Hessian d=400, jit"),
    ("bench_jit", "jacfwd_tanh_arg_800_eager", "jacfwd n=800, eager"),
    ("bench_jit", "jacfwd_tanh_arg_800", "jacfwd n=800, jit"),
    ("bench_jit", "hessian_arg_800_eager", "hessian d=800, eager"),
    ("bench_jit", "hessian_arg_800", "hessian d=800, jit"),
    ("bench_autodiff", "hvp_rosenbrock_1e4_rev_rev", "rev-over-rev HVP n=1e4, eager"),
]

#: modules run as scripts (their own table) in a full run: module -> extra arguments
SCRIPTS = {"bench_taylor": ["--quick"], "bench_chunk_memory": []}
#: modules the runner does not run, and why
SKIPPED = {"bench_distributed": "needs mpirun: python benchmarks/bench_distributed.py"}


def modules() -> list[str]:
    """The benchmark modules, by name (``bench_*.py`` next to this file)."""
    return sorted(os.path.basename(p)[:-3] for p in glob.glob(os.path.join(_HERE, "bench_*.py")))


def cases_of(module: str) -> list[str]:
    mod = importlib.import_module(module)
    return list(getattr(mod, "CASES", {}))


def baseline_of(module: str) -> str:
    """What the second callable of the module's cases is: "numpy" or "torch"."""
    return getattr(importlib.import_module(module), "BASELINE", "numpy")


def _torch_available() -> bool:
    if os.environ.get("FUNCGRAD_BENCH_NO_TORCH"):
        return False
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def _torch_setup(case: str):
    if not _torch_available():
        return None
    import torch_workloads

    key = case[:-len("_eager")] if case.endswith("_eager") else case
    return torch_workloads.FOR_CASE.get(key)


def measure(module: str, case: str, rounds: int, min_time: float) -> dict:
    """One case in this process: per-callable best/median/spread and the ratios."""
    from harness import summarize, time_rounds

    mod = importlib.import_module(module)
    baseline = getattr(mod, "BASELINE", "numpy")
    ours, base = mod.CASES[case]()
    fns, names = [ours, base], ["funcgrad", baseline]
    torch_setup = _torch_setup(case) if baseline == "numpy" else None
    if torch_setup is not None:
        fns.append(torch_setup())
        names.append("torch")
    times = time_rounds(fns, rounds=rounds, min_time=min_time)
    stats = {n: summarize(t) for n, t in zip(names, times)}
    return {"module": module, "case": case, **stats}


def _fmt(s: float | None) -> str:
    if s is None:
        return f"{'-':>9s}"
    return f"{s * 1e6:6.1f} us" if s < 1e-3 else f"{s * 1e3:6.2f} ms"


def _ratio(r: dict, other: str) -> str:
    if other not in r:
        return f"{'-':>7s}"
    return f"{r['funcgrad']['best'] / r[other]['best']:7.2f}"


HEADER = (f"{'case':48s} {'best':>9s} {'median':>9s} {'spread':>6s} {'numpy':>9s} "
          f"{'/numpy':>7s} {'torch':>9s} {'/torch':>7s}")


def format_row(label: str, r: dict) -> str:
    ours = r["funcgrad"]
    return (f"{label:48s} {_fmt(ours['best'])} {_fmt(ours['median'])} "
            f"{ours['spread'] * 100:5.0f}% {_fmt(r.get('numpy', {}).get('best'))} "
            f"{_ratio(r, 'numpy')} {_fmt(r.get('torch', {}).get('best'))} {_ratio(r, 'torch')}")


def run_in_child(module: str, case: str, rounds: int, min_time: float,
                 timeout: float | None = None) -> dict:
    """``measure`` in a fresh Python process; ``{"error": ...}`` when it fails."""
    cmd = [sys.executable, os.path.abspath(__file__), "--child", f"{module}:{case}",
           "--rounds", str(rounds), "--min-time", str(min_time)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout} s"}
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def selected(only: list[str] | None, quick: bool) -> list[tuple[str, str, str]]:
    """(module, case, label) to run, issue rows first."""
    missing = [f"{m}:{c}" for m, c, _ in ISSUE_ROWS if c not in cases_of(m)]
    if missing:
        raise SystemExit(f"run_all.ISSUE_ROWS names cases their modules do not define: "
                         f"{', '.join(missing)} (renamed? update ISSUE_ROWS)")
    rows = [(m, c, f"{m}:{c}") for m, c, _ in ISSUE_ROWS]
    if not quick or only:
        seen = {(m, c) for m, c, _ in rows}
        for m in modules():
            if m in SCRIPTS or m in SKIPPED:
                continue
            rows += [(m, c, f"{m}:{c}") for c in cases_of(m) if (m, c) not in seen]
    if only:
        rows = [r for r in rows if any(fnmatch.fnmatchcase(r[2], pat) for pat in only)]
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split(
        "\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: issue 14's rows (or --only's), one short round each")
    parser.add_argument("--only", nargs="*", help="MODULE:CASE patterns (fnmatch)")
    parser.add_argument("--rounds", type=int, default=None, help="timed rounds per callable")
    parser.add_argument("--min-time", type=float, default=None, help="seconds per round")
    parser.add_argument("--timeout", type=float, default=None, help="seconds per case")
    parser.add_argument("--list", action="store_true", help="print the case names")
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--no-torch", action="store_true",
                        help="leave torch out (its column, and cases whose baseline it is)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.no_torch:
        os.environ["FUNCGRAD_BENCH_NO_TORCH"] = "1"  # inherited by the case processes
    rounds = args.rounds or (1 if args.quick else 7)
    min_time = args.min_time or (0.01 if args.quick else 0.2)
    if args.child:
        module, case = args.child.split(":", 1)
        print(json.dumps(measure(module, case, rounds, min_time)))
        return 0
    rows = selected(args.only, args.quick)
    if args.list:
        for _, _, label in rows:
            print(label)
        return 0
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"# {time.strftime('%Y-%m-%d %H:%M')}, load average {load:.1f}, rounds {rounds} x "
          f"~{min_time} s, one thread, torch {'on' if _torch_available() else 'not importable'}")
    print(HEADER, flush=True)
    results, failed = [], 0
    issue = {(m, c): what for m, c, what in ISSUE_ROWS}
    has_torch = _torch_available()
    for module, case, label in rows:
        if baseline_of(module) == "torch" and not has_torch:
            print(f"{label:48s} skipped: its baseline is torch, which is not importable")
            continue
        r = run_in_child(module, case, rounds, min_time, args.timeout)
        if "error" in r:
            failed += 1
            print(f"{label:48s} FAILED: {r['error']}", flush=True)
            continue
        results.append(r)
        note = f"  ({issue[(module, case)]})" if (module, case) in issue else ""
        print(format_row(label, r) + note, flush=True)
    if not args.quick and not args.only:
        for module, extra in SCRIPTS.items():
            print(f"\n## {module} (its own table)", flush=True)
            subprocess.run([sys.executable, os.path.join(_HERE, module + ".py"), *extra])
        for module, why in SKIPPED.items():
            print(f"\n## {module}: not run ({why})")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
