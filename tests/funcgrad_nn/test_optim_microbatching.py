"""optim.microbatch / optim.microbatching against optax 0.2.8 (the literals are optax's float64
outputs of the same calls; CI has no optax), eager and under jit."""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
from funcgrad_nn import optim
from tests.helpers import assert_allclose, dev, host

A = optim.microbatching.AccumulationType
X = np.arange(24.0).reshape(6, 4) / 7.0
Y = np.sin(np.arange(6.0))
W = np.array([0.5, -1.0, 0.25, 2.0])
GRAD = [13.623641862404348, 14.554028722621648, 15.48441558283895, 16.414802443056253]


def loss(w, x, y):
    return fnp.mean((x @ w - y) ** 2)


@pytest.mark.parametrize("jitted", [False, True])
def test_matches_optax(jitted):
    J = funcgrad.jit if jitted else (lambda f: f)
    w, x, y = dev(W), dev(X), dev(Y)
    g = J(optim.microbatch(funcgrad.grad(loss), argnums=(1, 2), microbatch_size=2,
                           accumulator=A.MEAN))(w, x, y)
    assert_allclose(host(g), np.array(GRAD), rtol=1e-13)
    g = J(optim.microbatch(funcgrad.grad(loss), argnums=(1, 2), microbatch_size=3,
                           accumulator=A.RUNNING_MEAN))(w, x, y)
    assert_allclose(host(g), np.array(GRAD), rtol=1e-13)
    s = J(optim.microbatch(lambda w, *, xt: fnp.sum(xt * 2.0, axis=1), argnums=(),
                           argnames="xt", microbatch_size=2, in_axes=1))(w, xt=dev(X.T))
    assert_allclose(host(s), np.array([17.142857142857142, 18.857142857142854,
                                       20.57142857142857, 22.285714285714285]), rtol=1e-14)
    r = J(optim.microbatch(lambda x: {"rows": x + 1, "tot": fnp.sum(x), "m": fnp.mean(x)},
                           argnums=0, microbatch_size=2,
                           accumulator={"rows": A.CONCAT, "tot": A.SUM, "m": A.MEAN}))(x)
    assert_allclose(host(r["rows"]), X + 1, rtol=1e-15)  # CONCAT restores the batch order
    assert_allclose(float(host(r["tot"])), 39.42857142857143, rtol=1e-14)
    assert_allclose(float(host(r["m"])), 1.642857142857143, rtol=1e-14)


def test_early_stop_reshape_and_errors():
    early = optim.microbatch(lambda x: fnp.sum(x, axis=0), argnums=0, microbatch_size=2,
                             accumulator=A.RUNNING_MEAN, num_real_microbatches=2)(dev(X))
    assert_allclose(host(early), np.array([2.2857142857142856, 2.571428571428571,
                                           2.857142857142857, 3.142857142857143]), rtol=1e-14)
    r = optim.microbatching.reshape_batch_axis(dev(np.arange(12).reshape(2, 6)), 3, axis=1)
    assert host(r).tolist() == [[[0, 2, 4], [1, 3, 5]], [[6, 8, 10], [7, 9, 11]]]
    f = lambda x: x  # noqa: E731
    assert optim.microbatch(f, 0, None) is f
    with pytest.raises(ValueError, match="must be divisible by microbatch_size=4"):
        optim.microbatch(f, 0, 4)(dev(X))
    with pytest.raises(ValueError, match="equal-size batch axes"):
        optim.microbatch(lambda a, b: a, (0, 1), 2)(dev(X), dev(np.ones(4)))
    with pytest.raises(ValueError, match="require floating-point"):
        optim.microbatch(f, 0, 2, accumulator=A.MEAN)(dev(np.arange(4)))
    with pytest.raises(ValueError, match="Unknown accumulator"):
        optim.microbatch(f, 0, 2, accumulator="sum")(dev(X))
    custom = optim.microbatching.Accumulator(
        init=lambda s: fnp.full(s.shape, -np.inf), update=lambda c, v, i: fnp.maximum(c, v),
        finalize=lambda c: c, aggregate=lambda v: fnp.max(v, axis=0))
    m = optim.microbatch(lambda x: fnp.max(x, axis=0), 0, 3, accumulator=custom)(dev(X))
    assert_allclose(host(m), X.max(axis=0), rtol=0)


# optax's micro_grad / micro_vmap on the same calls
MG = [2.138144538660862, 2.5926406573272445, 3.0471367759936276, 3.50163289466001]
MG_VALUES = [0.6173469387755101, 0.8915954113065936, 3.5209402283213747, 13.28306744871133,
             30.719492267912855, 45.49014931013004]
MG_METRICS = [0.8399639031533336, 3.028315647212743, 10.256562353511992, 28.211694647540234,
              55.53816521153632, 82.97466385909057]
MG_AUX = [0.7857142857142856, 0.9442433009063891, 1.8764168588886039, 3.6445942776544182,
          5.542516781022215, 6.744638560377424]
MV = [0.743645989239444, -1.5420682964748416, 0.45793170352515833, 3.7436459892394436]


@pytest.mark.parametrize("jitted", [False, True])
def test_micro_grad_and_micro_vmap_match_optax(jitted):
    M = optim.microbatching
    J = funcgrad.jit if jitted else (lambda f: f)
    w, x, y = dev(W), dev(X), dev(Y)

    def loss_aux(w, x, y):
        r = x @ w - y
        return fnp.mean(r ** 2), fnp.sum(r)

    clip = lambda g: g * fnp.minimum(1.0, 1.0 / fnp.linalg.norm(g))  # noqa: E731
    g, aux = J(M.micro_grad(loss_aux, has_aux=True, batch_argnums=(1, 2), microbatch_size=2,
                            transform_fn=clip, metrics_fn=fnp.linalg.norm))(w, x, y)
    assert_allclose(host(g), np.array(MG), rtol=1e-13)
    assert_allclose(host(aux.values), np.array(MG_VALUES), rtol=1e-13)
    assert_allclose(host(aux.metrics), np.array(MG_METRICS), rtol=1e-13)
    assert_allclose(host(aux.aux), np.array(MG_AUX), rtol=1e-13)
    g, aux = J(M.micro_grad(lambda w, xi, yi: (xi @ w - yi) ** 2, batch_argnums=(1, 2),
                            keep_batch_dim=False, accumulator=A.MEAN, microbatch_size=3))(w, x, y)
    assert_allclose(host(g), np.array(GRAD), rtol=1e-13)
    v = J(M.micro_vmap(lambda a, b, *, c: a * b + c, in_axes=(0, None), microbatch_size=2,
                       accumulator=A.MEAN))(x, w, c=dev(Y[:, None] * np.ones((6, 4))))
    assert_allclose(host(v), np.array(MV), rtol=1e-13)
    s, twice = M.micro_vmap(lambda a: (a.sum(), a * 2), microbatch_size=3,
                            accumulator=(A.SUM, A.CONCAT))(x)
    assert_allclose(float(host(s)), 39.42857142857143, rtol=1e-14)
    assert_allclose(host(twice), 2 * X, rtol=1e-15)
    with pytest.raises(ValueError, match="out_axes must be 0"):
        M.micro_vmap(lambda a: a, out_axes=1)
