"""optim.assignment.hungarian_algorithm against optax 0.2.8's (the same pairs in the same
order; literals recorded from optax) and SciPy's optimal cost, eager and under jit."""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad
from funcgrad_nn.optim import assignment
from tests.helpers import dev, host

_rng = np.random.default_rng(3)
COSTS = [_rng.normal(size=s).round(2) for s in [(5, 5), (4, 7), (7, 3), (1, 4), (6, 6)]]
OPTAX = [([3, 0, 1, 4, 2], [0, 1, 2, 3, 4], -4.75), ([3, 2, 1, 0], [5, 0, 4, 6], -5.72),
         ([3, 1, 5], [2, 1, 0], -6.68), ([0], [1], -1.05),
         ([3, 0, 4, 1, 5, 2], [0, 1, 2, 3, 4, 5], -7.08)]  # i, j, scipy's optimal cost


@pytest.mark.parametrize("jitted", [False, True])
def test_matches_optax(jitted):
    h = funcgrad.jit(assignment.hungarian_algorithm) if jitted else assignment.hungarian_algorithm
    for c, (i_want, j_want, best) in zip(COSTS, OPTAX):
        i, j = h(dev(c))
        i, j = host(i), host(j)
        assert i.tolist() == i_want and j.tolist() == j_want
        assert round(float(c[i, j].sum()), 10) == best


def test_edge_cases():
    i, j = assignment.hungarian_algorithm(dev(np.ones((2, 2))))
    assert host(i).tolist() == [0, 1] and host(j).tolist() == [0, 1]
    i, j = assignment.hungarian_algorithm(dev(np.zeros((0, 3))))
    assert host(i).shape == (0,) and host(j).shape == (0,)
    with pytest.raises(ValueError, match="must be 2-D"):
        assignment.hungarian_algorithm(dev(np.ones(3)))
