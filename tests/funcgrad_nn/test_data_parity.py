"""Data loading against torch.utils.data (fixture made by
fixtures/make_data_fixtures.py; torch is not imported)."""

import builtins
import json
import os

import numpy as np
import pytest

import funcgrad_nn.data as data
from tests.funcgrad_nn.data_parity_cases import CASES, run_case

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "data_parity.json")
with open(FIXTURE) as _fh:
    EXPECTED = json.load(_fh)["cases"]


def _array(x):
    return np.asarray(x)


def _plain(x):
    return json.loads(json.dumps(x))


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    expected = EXPECTED[name]
    if "raises" in expected:  # an exception of (a subclass of) the same builtin type
        with pytest.raises(getattr(builtins, expected["raises"])):
            CASES[name](data, _array)
    else:
        assert _plain(run_case(CASES[name], data, _array)) == expected


def test_every_case_has_a_fixture():
    assert set(CASES) == set(EXPECTED)
