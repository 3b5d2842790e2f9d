"""optax.contrib's normalize and split_real_and_imaginary: values of optax 0.2.8 (float64,
jax_enable_x64) on the same inputs: rng = np.random.default_rng(2); params
{"z": 3 complex, "r": 2 real}, then 3 complex/real gradient dicts drawn the same way."""

import numpy as np
from helpers import dev, host

from funcgrad_nn import optim
from funcgrad_nn.optim import contrib

RNG = np.random.default_rng(2)
P = {"z": RNG.standard_normal(3) + 1j * RNG.standard_normal(3), "r": RNG.standard_normal(2)}
GS = [{"z": RNG.standard_normal(3) + 1j * RNG.standard_normal(3), "r": RNG.standard_normal(2)}
      for _ in range(3)]

ADAM_SPLIT = [
    {"r": [-0.09999999780199531, 0.09999998991915789],
     "z": [-0.0999999964439473 + 0.0999999967799746j, 0.09999999819436844 + 0.09999999695885867j,
           -0.09999999897705268 + 0.09999999873760768j]},
    {"r": [-0.09795380021690353, -0.056602279311465324],
     "z": [-0.09684367168892036 + 0.09229802775273187j,
           0.10013389307896577 - 0.04493655388544944j,
           -0.07602714308739422 + 0.04799806179041078j]},
    {"r": [-0.09517479442818537, -0.060484209683788925],
     "z": [0.015790251643612096 + 0.09097287525259719j,
           0.011927456577688001 + 0.04055155697763299j,
           -0.08299735076162051 + 0.07383971989303059j]},
]


def test_split_real_and_imaginary_adam_matches_optax():
    tx = contrib.split_real_and_imaginary(optim.adam(0.1))
    p = dev(P)
    s = tx.init(p)
    for g, want in zip(GS, ADAM_SPLIT):
        u, s = tx.update(dev(g), s, p)
        u = host(u)
        assert u["z"].dtype == np.complex128 and u["r"].dtype == np.float64
        for k in want:
            np.testing.assert_allclose(u[k], want[k], rtol=1e-12, atol=1e-15)


def test_normalize_matches_optax():
    u, s = contrib.normalize().update(dev(GS[0]), contrib.NormalizeState())
    u = host(u)
    np.testing.assert_allclose(u["r"], [0.2942675105305514, -0.06416143722594386], rtol=1e-12)
    np.testing.assert_allclose(u["z"], [0.18188745066174367 - 0.20086840445561321j,
                                        -0.35821337756462623 - 0.21268375651884525j,
                                        0.6322919811796547 - 0.5123616183762825j], rtol=1e-12)
    assert s == contrib.NormalizeState()


def test_the_norm_of_host_leaves_stays_on_the_host():
    # NumPy reduces to NumPy scalars, which funcgrad would place on the default device (a
    # GPU, or the strict test device): dividing host updates by it then mixed devices
    n = optim.tree.norm(GS[1])
    assert isinstance(n, np.ndarray)
    u, _ = contrib.normalize().update(GS[1], contrib.NormalizeState())
    assert isinstance(u["z"], np.ndarray)
    np.testing.assert_allclose(optim.tree.norm(u), 1.0, rtol=1e-12)
    assert isinstance(optim.tree.norm(GS[1], ord=1), np.ndarray)
