"""Module-API and container behaviour against torch.nn (fixture made by
fixtures/make_module_fixtures.py; torch is not imported)."""

import json
import os

import numpy as np
import pytest

import funcgrad_nn as nn
from tests.funcgrad_nn.module_parity_cases import CASES
from tests.helpers import assert_like_recorded

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "module_parity.json")
with open(FIXTURE) as _fh:
    EXPECTED = json.load(_fh)["cases"]


def _ones(*shape):
    return np.ones(shape, np.float32)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    assert_like_recorded(EXPECTED[name], lambda: CASES[name](nn, _ones))


def test_every_case_has_a_fixture():
    assert set(CASES) == set(EXPECTED)
