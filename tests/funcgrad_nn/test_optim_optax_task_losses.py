"""optax's NT-Xent, triplet margin, safe softmax cross entropy, hinge/perceptron/sparsemax,
CTC, Dice and ranking losses (``funcgrad_nn.optim.losses``) against optax 0.2.8: values,
gradients and dtypes recorded by ``fixtures/make_optax_task_losses.py`` (JAX x64)."""

from __future__ import annotations

import json
import pathlib
import warnings

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
from funcgrad_nn import optim
from funcgrad_nn.optim import losses
from tests.funcgrad_nn.fixtures.make_optax_task_losses import cases, leaves
from tests.helpers import assert_allclose, dev, host

FIX = json.loads((pathlib.Path(__file__).parent / "fixtures" / "optim"
                  / "optax_task_losses.json").read_text())


@pytest.fixture(scope="module")
def results():
    return cases(losses, funcgrad, fnp, dev)


@pytest.mark.parametrize("name", sorted(FIX))
def test_loss_matches_optax(results, name):
    got = leaves(results[name])
    assert len(got) == len(FIX[name])
    for i, (g, e) in enumerate(zip(got, FIX[name])):
        g = np.asarray(host(g))
        assert (str(g.dtype), list(g.shape)) == (e["dtype"], e["shape"]), f"{name}[{i}]"
        tol = 2e-5 if name.endswith("float32") else 1e-10  # (float32 inputs, any result)
        assert_allclose(g.astype(np.float64).ravel(), np.array(e["value"]), rtol=tol, atol=tol,
                        err_msg=f"{name}[{i}]")


def test_top_level_names_are_optax_top_level_ones():
    for name in ("ctc_loss", "ctc_loss_with_forward_probs", "ntxent",
                 "safe_softmax_cross_entropy"):
        assert getattr(optim, name) is getattr(losses, name)
    assert not hasattr(optim, "dice_loss")  # optax.losses only


def test_ranking_loss_of_a_fully_masked_list_is_zero_as_optax():
    logits = dev(np.array([[1.0, 2.0, 0.5], [0.3, 0.1, 0.2]]))
    labels = dev(np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]))
    where = dev(np.array([[False] * 3, [False] * 3]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (log_softmax of an all -inf list)
        assert float(host(losses.ranking_softmax_loss(logits, labels, where=where))) == 0.0


def test_errors_name_the_problem():
    with pytest.raises(ValueError, match="same leading dimension"):
        losses.ntxent(dev(np.ones((3, 2))), dev(np.array([0, 1])))
    with pytest.raises(TypeError, match="subdtype"):
        losses.triplet_margin_loss(*(dev(np.ones((2, 2), np.int64)),) * 3)
    with pytest.raises(ValueError, match="Unsupported reduction"):
        losses.dice_loss(dev(np.ones((1, 2, 2))), dev(np.ones((1, 2, 2))), reduction="max")
    with pytest.raises(ValueError, match="sum to 1"):
        losses.dice_loss(dev(np.ones((1, 2, 2))), dev(np.ones((1, 2, 2))), apply_softmax=False)
    with pytest.raises(ValueError, match="batch size 2"):
        losses.ctc_loss(dev(np.zeros((2, 3, 4))), dev(np.zeros((2, 3))),
                        dev(np.zeros((1, 2), np.int64)), dev(np.zeros((1, 2))))
