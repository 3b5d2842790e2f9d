"""The benchmark runner (``python -m benchmarks``) imports, lists every case and runs one.

A smoke test only: no timing is asserted (timings belong in benchmarks/README.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _run(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    env = dict(os.environ, FUNCGRAD_BENCH_NO_TORCH="1")
    return subprocess.run([sys.executable, "-m", "benchmarks", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


def test_lists_issue_rows_and_every_module_case() -> None:
    proc = _run("--list")
    assert proc.returncode == 0, proc.stderr
    names = proc.stdout.split()
    # issue 14's rows come first, then the rest of every bench module's CASES
    assert names[0] == "bench_nn_conv:cnn_step_eager"
    for expected in ("bench_jit:hessian_d400", "bench_jit:hessian_arg_800",
                     "bench_jit:jacfwd_tanh_arg_800", "bench_autodiff:hvp_rosenbrock_1e4_rev_rev",
                     "bench_vmap:mlp_b256_chunk64", "bench_jacobians:jacfwd_tanh_200x300"):
        assert expected in names
    assert len(names) == len(set(names))


def test_quick_run_of_one_case(tmp_path) -> None:
    out = tmp_path / "r.json"
    proc = _run("--quick", "--no-torch", "--only", "bench_autodiff:chain100_grad",
                "--json", str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "bench_autodiff:chain100_grad" in proc.stdout and "FAILED" not in proc.stdout
    (r,) = json.loads(out.read_text())
    assert r["case"] == "chain100_grad" and "torch" not in r
    for side in ("funcgrad", "numpy"):
        assert r[side]["best"] > 0 and r[side]["median"] >= r[side]["best"]
