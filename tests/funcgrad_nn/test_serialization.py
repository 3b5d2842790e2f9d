"""save/load of state dicts: round trip, atomic writes, no pickle."""

import os

import numpy as np
import pytest

import funcgrad_nn as nn


def test_round_trip_state_dict_and_nested(tmp_path):
    m = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    path = tmp_path / "ckpt.npz"
    nn.save(m.state_dict(), path)
    sd = nn.load(path)
    assert list(sd) == list(m.state_dict())
    m2 = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    m2.load_state_dict(sd)
    for a, b in zip(m.state_dict().values(), m2.state_dict().values()):
        assert a.dtype == b.dtype and np.array_equal(a, b)
    obj = {"state": {0: {"step": 3, "exp_avg": np.ones(2, np.float32)}},
           "param_groups": [{"lr": 0.1, "params": [0, 1], "name": None}], "t": (1, 2.5)}
    nn.save(obj, str(path))
    back = nn.load(path)
    assert back["state"][0]["step"] == 3 and back["t"] == (1, 2.5)
    assert back["param_groups"][0] == {"lr": 0.1, "params": [0, 1], "name": None}
    assert back["state"][0]["exp_avg"].dtype == np.float32


def test_atomic_write_leaves_old_file_on_failure(tmp_path):
    path = tmp_path / "model.npz"
    nn.save({"w": np.zeros(2)}, path)
    with pytest.raises(TypeError, match="cannot store"):
        nn.save({"w": np.ones(2), "bad": object()}, path)
    assert np.array_equal(nn.load(path)["w"], np.zeros(2))
    assert os.listdir(tmp_path) == ["model.npz"]  # no temp file left behind


def test_load_rejects_foreign_files(tmp_path):
    p = tmp_path / "x.npz"
    np.savez(p, a=np.ones(1))
    with pytest.raises(ValueError, match="not a funcgrad_nn checkpoint"):
        nn.load(p)
    nn.save(nn.Linear(1, 1), tmp_path / "m.npz")  # a Module saves its state_dict
    assert list(nn.load(tmp_path / "m.npz")) == ["weight", "bias"]
