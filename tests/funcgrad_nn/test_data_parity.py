"""Data loading against torch.utils.data (fixture made by
fixtures/make_data_fixtures.py; torch is not imported)."""

import json
import os

import numpy as np
import pytest

import funcgrad_nn.data as data
from tests.funcgrad_nn.data_parity_cases import CASES
from tests.helpers import assert_like_recorded

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "data_parity.json")
with open(FIXTURE) as _fh:
    EXPECTED = json.load(_fh)["cases"]


def _array(x):
    return np.asarray(x)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    assert_like_recorded(EXPECTED[name], lambda: CASES[name](data, _array))


def test_every_case_has_a_fixture():
    assert set(CASES) == set(EXPECTED)
