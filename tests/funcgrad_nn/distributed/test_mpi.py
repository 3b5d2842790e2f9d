"""Real processes: `mpiexec -n 2` runs mpi_program.py; results are compared with one process
on the global batch. Skipped when mpi4py or mpiexec is missing (the `distributed` extra)."""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

import funcgrad_nn as nn
from tests.funcgrad_nn.distributed import mpi_program
from tests.helpers import dev, host

pytest.importorskip("mpi4py")
MPIEXEC = shutil.which("mpiexec")
pytestmark = pytest.mark.skipif(MPIEXEC is None, reason="mpiexec not installed")
ROOT = pathlib.Path(__file__).resolve().parents[3]
PROGRAM = pathlib.Path(mpi_program.__file__)


def _mpiexec(out: pathlib.Path, scenario: str, timeout: float = 240) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1",
               OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    env.pop("FUNCGRAD_TEST_DEVICE", None)  # plain NumPy arrays between processes
    return subprocess.run([MPIEXEC, "-n", "2", "--oversubscribe", sys.executable, str(PROGRAM),
                           str(out), scenario], env=env, capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture(scope="module")
def ranks(tmp_path_factory):
    out = tmp_path_factory.mktemp("mpi")
    proc = _mpiexec(out, "train")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return [dict(np.load(out / f"rank{r}.npz")) for r in range(2)]


def test_ddp_on_two_processes_equals_one_process_on_the_global_batch(ranks):
    model, x, y = mpi_program.model_and_data()
    opt = nn.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(5):
        _, g = nn.value_and_grad(mpi_program.loss_fn)(model, x, y)
        opt.step(g)
    expected = np.concatenate([np.ravel(p) for p in model.parameters()])
    for r in ranks:
        np.testing.assert_allclose(r["ddp_params"], expected, rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(r["ddp_running_mean"], model[1].running_mean, rtol=1e-6,
                                   atol=1e-9)


def test_no_sync_accumulation_equals_the_global_gradient(ranks):
    model, x, y = mpi_program.model_and_data()
    # four micro-batches of 4 (two per rank), averaged: the mean of micro-batch gradients
    gs = [nn.grad(mpi_program.loss_fn)(model, x[i:i + 4], y[i:i + 4]) for i in range(0, 16, 4)]
    expected = np.concatenate([np.mean([np.ravel(leaf) for leaf in leaves], 0) for leaves in
                               zip(*[nn.tree_leaves(g) for g in gs])])
    for r in ranks:
        np.testing.assert_allclose(r["accumulated_grad"], expected, rtol=1e-10, atol=1e-12)


def test_collectives_across_processes_equal_vmap(ranks):
    import funcgrad
    from funcgrad import lax

    x = dev(np.stack([np.arange(3.0), np.arange(3.0)]))
    gathered = host(funcgrad.vmap(
        lambda v: lax.all_gather(v * (lax.axis_index("p") + 1.0), "p"), axis_name="p")(x))
    v = dev(np.stack([np.arange(1.0, 4.0) * (r + 1) for r in range(2)]))
    grads = host(funcgrad.vmap(funcgrad.grad(lambda u: (u / lax.psum(u, "p")).sum() ** 2),
                               axis_name="p")(v))
    a2a = host(funcgrad.vmap(lambda u: lax.all_to_all(u, "p", 0, 0), axis_name="p")(
        dev(np.stack([np.arange(4.0).reshape(2, 2) + 10 * r for r in range(2)]))))
    for i, r in enumerate(ranks):
        np.testing.assert_allclose(r["all_gather"], gathered[i])
        np.testing.assert_allclose(r["grad_psum"], grads[i], rtol=1e-12)
        np.testing.assert_allclose(r["all_to_all"], a2a[i])


def test_torch_style_calls(ranks):
    for r in ranks:
        np.testing.assert_array_equal(r["all_reduce"], [3.0, 3.0])
        np.testing.assert_array_equal(r["broadcast"], [6.0, 6.0])
        np.testing.assert_array_equal(r["gathered"], [0.0, 1.0])
        np.testing.assert_array_equal(r["bxor"], [1, 13, 0])  # torch.distributed/gloo's
        np.testing.assert_array_equal(r["object_pads"], [0, 100])
        np.testing.assert_array_equal(r["broadcast_object"], [1, 1])
    np.testing.assert_array_equal(ranks[0]["scatter"], [1.0, 2.0])
    np.testing.assert_array_equal(ranks[1]["scatter"], [3.0, 4.0])


def test_a_hung_peer_gives_a_clear_error_within_the_timeout(tmp_path):
    start = time.monotonic()
    proc = _mpiexec(tmp_path, "hung_peer", timeout=120)
    assert proc.returncode != 0
    assert time.monotonic() - start < 100  # 3 s timeout plus mpiexec start-up, never 120 s
    msg = (tmp_path / "rank0.txt").read_text()
    assert "did not complete within 3 s" in msg and "peer process" in msg


def test_a_peer_that_exits_ends_the_job(tmp_path):
    proc = _mpiexec(tmp_path, "exit_early", timeout=120)
    assert proc.returncode != 0
