"""Test session set-up: optional strict device, GPU marker handling, Hypothesis profile."""

from __future__ import annotations

import os
import sys

import pytest
from hypothesis import HealthCheck, settings

_ROOT = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(_ROOT, "tests"))  # shared helpers: `from helpers import ...`
sys.path.insert(0, _ROOT)

# The fixture generators are scripts that import PyTorch (not installed in CI); their
# outputs are committed and the tests read those.
collect_ignore_glob = ["tests/*fixtures/make_*.py"]

settings.register_profile(
    "funcgrad",
    deadline=None,
    max_examples=int(os.environ.get("FUNCGRAD_HYPOTHESIS_EXAMPLES", "25")),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    # The same examples on every run: CI must not pass or fail by the luck of the draw.
    # FUNCGRAD_HYPOTHESIS_RANDOM=1 explores new examples (e.g. with more max_examples).
    derandomize=not os.environ.get("FUNCGRAD_HYPOTHESIS_RANDOM"),
)
settings.load_profile("funcgrad")


#: the device the suite runs on (``FUNCGRAD_TEST_DEVICE``; unset or empty: the CPU, NumPy)
TEST_DEVICE = os.environ.get("FUNCGRAD_TEST_DEVICE") or "cpu"


def pytest_configure(config: pytest.Config) -> None:
    device = TEST_DEVICE
    if device != "cpu":
        from funcgrad.backend import _default_device

        # Python scalars and creation functions land on the test device for the whole run.
        _default_device.set(device)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    from funcgrad.backend import cuda_available

    if TEST_DEVICE != "cpu":
        # Doctests show host reprs (`array(...)`); they run in the NumPy pass.
        doctests = [i for i in items if isinstance(i, pytest.DoctestItem)]
        if doctests:
            config.hook.pytest_deselected(items=doctests)
            items[:] = [i for i in items if not isinstance(i, pytest.DoctestItem)]
    if cuda_available():
        return
    skip = pytest.mark.skip(reason="needs CUDA and CuPy (pip install 'funcgrad[cuda]')")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def pytest_report_header(config: pytest.Config) -> str:
    return f"funcgrad test device: {TEST_DEVICE}"
