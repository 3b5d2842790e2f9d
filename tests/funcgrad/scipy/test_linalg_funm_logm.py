"""``funcgrad.scipy.linalg.funm`` and ``logm`` against SciPy (and ``jax.scipy.linalg.funm``'s
complex results): values, ``disp=False`` error estimates, derivatives by finite differences,
``jit``/``vmap``."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla
from helpers import assert_allclose, dev, host

import funcgrad
import funcgrad.numpy as fnp
import funcgrad.scipy.linalg as fsl
from funcgrad.test_util import check_grads

_A = np.random.default_rng(0).normal(size=(4, 4)) + 4 * np.eye(4)


def test_logm_as_scipy() -> None:
    x = fsl.logm(dev(_A))
    assert host(x).dtype == np.complex128          # always complex, like sqrtm
    assert_allclose(x, sla.logm(_A).astype(complex), rtol=1e-10, atol=1e-12)
    neg = np.array([[-1.0, 0.0], [0.0, 1.0]])     # principal branch: i pi
    assert_allclose(fsl.logm(dev(neg)), sla.logm(neg), rtol=1e-10, atol=1e-12)
    x, err = fsl.logm(dev(_A), disp=False)
    assert float(err) < 1e-13
    # SciPy computes logm in double precision whatever the input (a name JAX lacks: SciPy's
    # dtypes), complex here as sqrtm's.
    assert host(fsl.logm(dev(np.eye(2, dtype=np.float32)))).dtype == np.complex128
    assert host(fsl.logm(dev(np.array([[1, 2], [0, 3]])))).dtype == np.complex128


def test_funm_as_scipy_and_jax() -> None:
    f = fsl.funm(dev(_A), fnp.exp)
    assert host(f).dtype == np.complex128           # jax.scipy.linalg.funm's type
    assert_allclose(f, sla.expm(_A).astype(complex), rtol=1e-10, atol=1e-10)
    assert_allclose(fsl.funm(dev(_A), lambda w: w ** 3), np.linalg.matrix_power(_A, 3)
                    .astype(complex), rtol=1e-10, atol=1e-10)
    f, err = fsl.funm(dev(_A), fnp.sin, disp=False)
    assert_allclose(f, sla.funm(_A, np.sin).astype(complex), rtol=1e-10, atol=1e-10)
    assert float(err) < 1e-12
    with pytest.raises(TypeError, match="callable"):
        fsl.funm(dev(_A), None)


def test_derivatives_and_transforms() -> None:
    check_grads(lambda a: fnp.real(fsl.logm(a)), (dev(_A),), order=1, modes=("rev",))
    check_grads(lambda a: fnp.real(fsl.funm(a, fnp.exp)), (dev(_A),), order=1)
    many = np.stack([_A, _A.T])
    assert_allclose(funcgrad.vmap(fsl.logm)(dev(many)),
                    np.stack([sla.logm(m) for m in many]).astype(complex), rtol=1e-10,
                    atol=1e-12)
    assert_allclose(funcgrad.jit(fsl.logm)(dev(_A)), sla.logm(_A).astype(complex),
                    rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("a", [
    np.array([[1.0, 1.0], [0.0, 1.0]]),                               # a Jordan block
    np.array([[4.0, 1.0, 0.0], [0.0, 4.0, 1.0], [0.0, 0.0, 4.0]]),
    np.array([[-1.0, 1.0], [0.0, -1.0]]),                             # on the branch cut
    np.array([[1.0, 1.0, 1.0], [0.0, 1.0, 1.0], [0.0, 0.0, 1.0]]) + 0j,
])
def test_sqrtm_logm_and_powers_of_defective_matrices_are_scipys(a) -> None:
    # V^-1 is meaningless there: the values came out wrong (sqrtm of the Jordan block gave
    # the identity); they now come from the Schur form, as SciPy's.
    x = fsl.sqrtm(dev(a))
    assert_allclose(x, sla.sqrtm(a).astype(complex), rtol=1e-12, atol=1e-12)
    assert_allclose(fsl.logm(dev(a)), sla.logm(a).astype(complex), rtol=1e-12, atol=1e-12)
    for t in (0.5, -0.3, 1.7):
        assert_allclose(fsl.fractional_matrix_power(dev(a), t),
                        sla.fractional_matrix_power(a, t).astype(complex), rtol=1e-12,
                        atol=1e-12)


def test_sqrtm_derivative_at_a_jordan_block() -> None:
    # dX solves X dX + dX X = dA; central differences of SciPy's sqrtm give these values.
    j = np.array([[1.0, 1.0], [0.0, 1.0]])
    g = funcgrad.grad(lambda m: fnp.real(fsl.sqrtm(m)).sum())(dev(j))
    assert_allclose(g, np.array([[0.375, 0.5], [0.3125, 0.375]]), rtol=1e-10)
