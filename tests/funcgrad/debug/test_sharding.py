"""jax.debug's sharding tools on one device: inspect_array_sharding hands each array's
sharding to the callback (JAX 0.10.2 on CPU: SingleDeviceSharding of CPU 0 eagerly), and
visualize_array_sharding draws one block labelled with the device."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import dev

import funcgrad
from funcgrad import debug, sharding


def test_inspect_array_sharding_eager_and_jit(capsys) -> None:
    x = dev(np.ones((4, 8)))
    seen = []
    debug.inspect_array_sharding({"a": x, "b": x[0]}, callback=seen.append)
    funcgrad.jit(lambda v: debug.inspect_array_sharding(v, callback=seen.append) or v)(x)
    assert len(seen) == 3
    assert all(isinstance(s, sharding.SingleDeviceSharding) and s.is_fully_replicated
               for s in seen)
    with pytest.raises(TypeError, match="callback must be callable"):
        debug.inspect_array_sharding(x, callback=None)


def test_visualize_array_sharding(capsys) -> None:
    debug.visualize_array_sharding(dev(np.ones((4, 8))), max_width=20)
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "┌" + "─" * 18 + "┐" and out[-1] == "└" + "─" * 18 + "┘"
    label = {"cpu": "CPU 0", "cuda": "GPU 0"}.get(funcgrad.backend.platform_name(), None)
    if label is not None:
        assert any(label in line for line in out)
    assert len(out) == 5  # a 2-d array is a block three lines high
    debug.visualize_array_sharding(dev(np.ones(3)), max_width=20)
    assert len(capsys.readouterr().out.splitlines()) == 3
    with pytest.raises(ValueError, match="1 or 2 dimensions"):
        debug.visualize_array_sharding(dev(np.ones((2, 2, 2))))
