"""Module-API and container behaviour against torch.nn (fixture made by
fixtures/make_module_fixtures.py; torch is not imported)."""

import builtins
import json
import os

import numpy as np
import pytest

import funcgrad_nn as nn
from tests.funcgrad_nn.module_parity_cases import CASES, run_case

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "module_parity.json")
with open(FIXTURE) as _fh:
    EXPECTED = json.load(_fh)["cases"]


def _ones(*shape):
    return np.ones(shape, np.float32)


def _plain(x):
    return json.loads(json.dumps(x))


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    expected = EXPECTED[name]
    if "raises" in expected:  # an exception of (a subclass of) the same builtin type
        with pytest.raises(getattr(builtins, expected["raises"])):
            CASES[name](nn, _ones)
    else:
        assert _plain(run_case(CASES[name], nn, _ones)) == expected


def test_every_case_has_a_fixture():
    assert set(CASES) == set(EXPECTED)
