"""Every example runs (shortened where it trains): smoke tests of examples/*.py."""

import os
import runpy
import sys

import numpy as np
import pytest

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
