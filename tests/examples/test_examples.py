"""Every example runs (shortened where it trains): smoke tests of examples/*.py."""

import os
import runpy
import sys

import numpy as np
import pytest
from helpers import DEVICE

import funcgrad

# The examples are host NumPy programs (they build data with NumPy and print results); the
# strict-device pass would only re-test the library, which its own tests do.
pytestmark = pytest.mark.skipif(DEVICE != "cpu",
                                reason="examples run in the NumPy pass")

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "examples")


@pytest.fixture
def example_path(monkeypatch):
    monkeypatch.syspath_prepend(EXAMPLES)
    return EXAMPLES


def _run(name, argv, monkeypatch):
    monkeypatch.setattr(sys, "argv", [name, *argv])
    return runpy.run_path(os.path.join(EXAMPLES, name), run_name="__main__")


def test_train_digits_short_run_checkpoints_and_reloads(example_path, tmp_path, capsys):
    import train_digits

    x, y = train_digits.load_digits()
    assert x.shape == (1797, 1, 8, 8) and x.dtype == np.float32 and 0 <= x.min() <= x.max() <= 1
    assert np.bincount(y).tolist() == [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]
    acc = train_digits.main(["--epochs", "1", "--limit", "256", "--quiet", "--out",
                             str(tmp_path)])
    out = capsys.readouterr().out
    assert 0.1 < acc <= 1.0
    assert "per-class test accuracy" in out and "confusion matrix" in out
    assert "reloaded model accuracy" in out
    for f in ("checkpoint.safetensors", "model.safetensors", "history.csv", "history.json"):
        assert (tmp_path / f).exists(), f


def test_nn_mlp(monkeypatch, capsys):
    _run("nn_mlp.py", [], monkeypatch)
    assert "train accuracy" in capsys.readouterr().out


def test_newton_hessian(example_path, capsys):
    import newton_hessian

    newton_hessian.main()  # asserts convergence to (1, 1) and a zero logistic gradient
    out = capsys.readouterr().out
    assert "minimum at [1. 1.]" in out


def test_per_example_grads(example_path, capsys):
    import per_example_grads

    per_example_grads.main(steps=150)  # checks vmap against a loop; DP-SGD accuracy > 0.8
    assert "identical to the loop" in capsys.readouterr().out


def test_maml(example_path, capsys):
    import maml

    res = maml.main(["--iters", "4", "--meta-batch", "2"])
    out = capsys.readouterr().out
    assert "second-order terms in the meta-gradient" in out
    assert np.isfinite(res["maml"]) and np.isfinite(res["joint"])


def test_maml_meta_gradient_matches_finite_differences(example_path):
    import maml

    params = maml.init_params(np.random.default_rng(1))
    task = maml.sample_tasks(np.random.default_rng(2), 1)
    g = funcgrad.grad(maml.maml_loss)(params, *task)
    rng = np.random.default_rng(0)
    d = funcgrad.tree_util.tree_map(lambda p: rng.standard_normal(p.shape), params)
    eps = 1e-6
    shifted = [funcgrad.tree_util.tree_map(lambda p, v, s=s: p + s * eps * v, params, d)
               for s in (1, -1)]
    fd = (float(maml.maml_loss(shifted[0], *task)) - float(maml.maml_loss(shifted[1], *task)))
    analytic = sum(float(np.sum(a * b)) for a, b in zip(funcgrad.tree_util.tree_leaves(g),
                                                         funcgrad.tree_util.tree_leaves(d)))
    assert fd / (2 * eps) == pytest.approx(analytic, rel=1e-5)


def test_pinn(example_path, capsys):
    import pinn

    err = pinn.main(["--steps", "60"])  # checks u'' against finite differences first
    assert np.isfinite(err)
    assert "max |u - sin(pi x)|" in capsys.readouterr().out


def test_quickstart(monkeypatch, capsys):
    _run("quickstart.py", [], monkeypatch)
    assert capsys.readouterr().out
