"""``funcgrad.scipy.linalg.solve_sylvester`` (JAX's signature and methods) against SciPy:
values, defective matrices, JAX's NaN for singular equations, batches, derivatives."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla
from helpers import assert_allclose, dev, host

import funcgrad
import funcgrad.scipy.linalg as fsl
from funcgrad.test_util import check_grads

_RNG = np.random.default_rng(0)
_A, _B, _C = _RNG.normal(size=(4, 4)), _RNG.normal(size=(3, 3)), _RNG.normal(size=(4, 3))


@pytest.mark.parametrize("method", ["schur", "eigen"])
def test_as_scipy(method) -> None:
    x = fsl.solve_sylvester(dev(_A), dev(_B), dev(_C), method=method)
    assert host(x).dtype == np.float64
    assert_allclose(x, sla.solve_sylvester(_A, _B, _C), rtol=1e-9, atol=1e-12)
    ac = _A + 1j * _RNG.normal(size=(4, 4))
    xc = host(fsl.solve_sylvester(dev(ac), dev(_B), dev(_C + 0j), method=method))
    assert_allclose(ac @ xc + xc @ _B, _C + 0j, rtol=1e-10, atol=1e-12)


def test_defective_singular_and_errors() -> None:
    jordan = np.array([[1.0, 1.0], [0.0, 1.0]])    # Bartels-Stewart copes with it
    assert_allclose(fsl.solve_sylvester(dev(jordan), dev(jordan), dev(np.eye(2))),
                    sla.solve_sylvester(jordan, jordan, np.eye(2)))
    # No unique solution (an eigenvalue sum is 0): NaN, as JAX.
    eye = dev(np.eye(2))
    assert np.isnan(host(fsl.solve_sylvester(eye, -eye, eye))).all()
    with pytest.raises(ValueError, match="incompatible shapes"):
        fsl.solve_sylvester(dev(_A), dev(_B), dev(_C.T))
    with pytest.raises(ValueError, match="method"):
        fsl.solve_sylvester(dev(_A), dev(_B), dev(_C), method="bogus")


def test_scipy_keyword_names() -> None:
    # SciPy's solve_sylvester(a, b, q) keywords, JAX's A/B/C, positions: the same equation.
    want = sla.solve_sylvester(a=_A, b=_B, q=_C)
    assert_allclose(fsl.solve_sylvester(a=dev(_A), b=dev(_B), q=dev(_C)), want, rtol=1e-9)
    assert_allclose(fsl.solve_sylvester(dev(_A), dev(_B), q=dev(_C)), want, rtol=1e-9)
    assert_allclose(fsl.solve_sylvester(A=dev(_A), B=dev(_B), C=dev(_C)), want, rtol=1e-9)
    with pytest.raises(TypeError, match="both 'C' and SciPy's name for it, 'q'"):
        fsl.solve_sylvester(dev(_A), dev(_B), dev(_C), q=dev(_C))
    with pytest.raises(TypeError, match="missing the argument 'B'"):
        fsl.solve_sylvester(dev(_A), C=dev(_C))


def test_batches_jit_and_derivatives() -> None:
    xs = funcgrad.vmap(fsl.solve_sylvester)(dev(np.stack([_A, 2 * _A])),
                                            dev(np.stack([_B, _B])), dev(np.stack([_C, _C])))
    assert_allclose(xs[1], sla.solve_sylvester(2 * _A, _B, _C), rtol=1e-9, atol=1e-12)
    assert_allclose(funcgrad.jit(fsl.solve_sylvester)(dev(_A), dev(_B), dev(_C)),
                    sla.solve_sylvester(_A, _B, _C), rtol=1e-9, atol=1e-12)
    check_grads(lambda a, c: fsl.solve_sylvester(a, dev(_B), c, method="eigen"),
                (dev(_A), dev(_C)), order=1)


def test_schur_method_differentiates_implicitly() -> None:
    # method="schur" (the default) had no derivative (Schur forms have none, nor has JAX's);
    # dX now solves A dX + dX B = dC - dA X - X dB, checked against SciPy's values
    a, b, c = _A[:3, :3], _B[:2, :2], _C[:3, :2]
    check_grads(lambda x, y, z: fsl.solve_sylvester(x, y, z), (dev(a), dev(b), dev(c)),
                order=1, modes=("fwd", "rev"))
    eps, d = 1e-6, _RNG.normal(size=(3, 3))
    want = (sla.solve_sylvester(a + eps * d, b, c) - sla.solve_sylvester(a - eps * d, b, c)) / (
        2 * eps)
    _, got = funcgrad.jvp(lambda x: fsl.solve_sylvester(x, dev(b), dev(c)), (dev(a),), (dev(d),))
    assert_allclose(got, want, rtol=1e-6, atol=1e-8)
    # so do the Lyapunov equations above 32x32, which go through it
    q = np.eye(34)
    big = _RNG.normal(size=(34, 34)) - 8 * np.eye(34)
    g = funcgrad.grad(lambda m: fsl.solve_continuous_lyapunov(m, dev(q)).sum())(dev(big))
    d = _RNG.normal(size=(34, 34))
    want = (sla.solve_continuous_lyapunov(big + eps * d, q).sum()
            - sla.solve_continuous_lyapunov(big - eps * d, q).sum()) / (2 * eps)
    assert np.sum(host(g) * d) == pytest.approx(want, rel=1e-6)


def test_second_derivatives_and_the_clear_error_where_schur_has_none() -> None:
    # JAX 0.10.2 differentiates neither method (schur: no rule; eigen: eigenvector derivatives
    # refused). The Hessian below checked against central differences of the gradient (4e-12).
    a = np.array([[3.0, 1.0], [0.5, 4.0]])
    b = dev(np.array([[2.0, 0.3], [0.1, 5.0]]))
    c = dev(np.array([[1.0, 2.0], [3.0, 4.0]]))
    want = [[0.004790028241846593, 0.010311419740019825, 0.00453613718170318,
             -0.002161867802009901],
            [0.010311419740019822, 0.02340172416747439, 0.019227159323362917,
             -0.002970753868508402],
            [0.004536137181703179, 0.019227159323362913, 3.909491843574113e-05,
             0.006110951235970778],
            [-0.0021618678020099004, -0.0029707538685084067, 0.006110951235970783,
             0.05029541967437755]]

    def f(m, method="schur"):
        return funcgrad.numpy.sum(fsl.solve_sylvester(m, b, c, method=method) ** 2)

    h = funcgrad.hessian(lambda m: f(m, "eigen"))(dev(a))
    assert_allclose(host(h).reshape(4, 4), np.array(want), rtol=1e-9, atol=1e-14)
    # schur: reverse over forward works; a derivative of the reverse-mode derivative needs the
    # Schur solver's transpose differentiated, which names the way out instead of recursing
    h = funcgrad.jacrev(funcgrad.jacfwd(f))(dev(a))
    assert_allclose(host(h).reshape(4, 4), np.array(want), rtol=1e-9, atol=1e-14)
    with pytest.raises(funcgrad.errors.MissingRuleError, match="method='eigen'"):
        funcgrad.hessian(f)(dev(a))
