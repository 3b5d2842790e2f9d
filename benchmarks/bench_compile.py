"""Compile latency: the first call of a jitted function (trace + optimise + generate code).

    python benchmarks/bench_compile.py                  # every case, 5 fresh processes each
    python benchmarks/bench_compile.py --rounds 9 --only deriv6_tanh_sin_jit
    python benchmarks/bench_compile.py --case chain100_grad_jit   # one round, in-process (JSON)
    python benchmarks/bench_compile.py --against /path/to/checkout/of/891ca4a --rounds 7

What a first call costs is paid once per input signature, so it is timed once per process:
each round runs in a fresh Python process (BLAS/OpenMP pinned to one thread by the harness),
which first warms funcgrad up with a trivial ``jit(grad)`` (import-time and first-use costs are
not the case's), then times one call. The table gives the median wall-clock time with its range
(min-max) over the rounds and the median CPU time of the process (``time.process_time``: less
sensitive to other jobs on a shared machine), with the load average when the run started.

Cases:
- ``chain100_grad_jit``: ``jit(grad(f))`` of the 100-op elementwise chain of ``bench_jit.py``
  (16 elements).
- ``deriv{k}_sin_exp_jit``, k = 2..8: ``jit`` of ``grad`` nested k times of ``sin(x) exp(x)``
  at a scalar; ``deriv{k}_sin_exp_eager``: the same nested ``grad`` without ``jit`` (one call).
- ``deriv{k}_tanh_sin_jit`` / ``_eager``: the same for ``tanh(sin(x) x)`` (``bench_jit.py``'s
  ``deriv6_tanh_sin``).
- ``deriv{k}_tanh3_jit``: the same for ``tanh(tanh(tanh(x)))``.
"""

from __future__ import annotations

import os
import sys

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
             "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS"):
    os.environ[_var] = "1"
_HERE = os.path.dirname(os.path.abspath(__file__))
# --against TREE runs the rounds of that tree with its funcgrad (harness.BENCH_ROOT_VAR).
sys.path[:0] = [_HERE, os.environ.get("FUNCGRAD_BENCH_ROOT") or os.path.dirname(_HERE)]

from harness import first_call_main  # noqa: E402

import funcgrad  # noqa: E402
import funcgrad.numpy as fnp  # noqa: E402

FUNCTIONS = {
    "sin_exp": lambda x: fnp.sin(x) * fnp.exp(x),
    "tanh_sin": lambda x: fnp.tanh(fnp.sin(x) * x),
    "tanh3": lambda x: fnp.tanh(fnp.tanh(fnp.tanh(x))),
}


def nested_grad(name: str, k: int, jitted: bool):
    def setup():
        g = FUNCTIONS[name]
        for _ in range(k):
            g = funcgrad.grad(g)
        if jitted:
            g = funcgrad.jit(g)
        return lambda: g(0.3)
    return setup


def warm_up() -> None:
    funcgrad.jit(funcgrad.grad(lambda x: fnp.sum(fnp.sin(x) * 2.0)))(fnp.ones(3))
    funcgrad.grad(funcgrad.grad(fnp.tanh))(0.5)


# Named apart from run_all's CASES (steady-state (funcgrad, baseline) pairs): these time the
# first call, so run_all runs this module as a script.
FIRST_CALL_CASES: dict = {}
for _name in FUNCTIONS:
    for _k in range(2, 9):
        if _name == "tanh3" and _k % 2:
            continue
        FIRST_CALL_CASES[f"deriv{_k}_{_name}_jit"] = nested_grad(_name, _k, True)
        if _name != "tanh3" and _k in (4, 6, 8):
            FIRST_CALL_CASES[f"deriv{_k}_{_name}_eager"] = nested_grad(_name, _k, False)


def chain100_setup():
    # workloads.chain100's function, jitted here: chain100 itself checks its result (a first
    # call), which would hide the first-call time measured here.
    import numpy as np
    from workloads import chain100_fn

    x = np.linspace(0.1, 1.0, 16)
    g = funcgrad.jit(funcgrad.grad(chain100_fn))
    return lambda: g(x)


FIRST_CALL_CASES = {"chain100_grad_jit": chain100_setup, **FIRST_CALL_CASES}

if __name__ == "__main__":
    first_call_main(FIRST_CALL_CASES, warm_up)
