"""k-th derivatives (k = 1..6) of scalar compositions against sympy, to 1e-9 relative (float64).

Every nesting order is exercised: reverse over reverse (nested ``grad``), forward over forward
(nested ``jvp``), alternating mixes, ``jacfwd``/``jacrev`` towers, and a vmapped tower.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import sympy
from helpers import dev, host

import funcgrad
import funcgrad.numpy as fnp

X = sympy.Symbol("x")

# (name, funcgrad function, sympy expression, domain)
FUNCS: list[tuple[str, Callable[[Any], Any], Any, tuple[float, float]]] = [
    ("tanh(sin(x)*x)", lambda x: fnp.tanh(fnp.sin(x) * x), sympy.tanh(sympy.sin(X) * X),
     (-1.5, 1.5)),
    ("exp(x)*cos(x)", lambda x: fnp.exp(x) * fnp.cos(x), sympy.exp(X) * sympy.cos(X),
     (-2.0, 2.0)),
    ("log1p(x^2)/(1+x)", lambda x: fnp.log1p(x ** 2) / (1 + x),
     sympy.log(1 + X ** 2) / (1 + X), (0.1, 2.0)),
    ("sqrt(1+x^2)*arctan(x)", lambda x: fnp.sqrt(1 + x * x) * fnp.arctan(x),
     sympy.sqrt(1 + X ** 2) * sympy.atan(X), (-2.0, 2.0)),
    ("x^3*sigmoid(x)", lambda x: x ** 3 / (1 + fnp.exp(-x)), X ** 3 / (1 + sympy.exp(-X)),
     (-2.0, 2.0)),
    ("sin(x)^2+cos(3x)", lambda x: fnp.sin(x) ** 2 + fnp.cos(3.0 * x),
     sympy.sin(X) ** 2 + sympy.cos(3 * X), (-2.0, 2.0)),
]

ORDERS = [1, 2, 3, 4, 5, 6]
RTOL = 1e-9


def _points(name: str, domain: tuple[float, float], n: int = 2) -> list[float]:
    seed = sum(map(ord, name))
    rng = np.random.default_rng(seed)
    return [float(v) for v in rng.uniform(*domain, size=n)]


def _reference(expr: Any, k: int, x0: float) -> float:
    return float(sympy.N(sympy.diff(expr, X, k).subs(X, sympy.Float(x0, 30)), 30))


def _close(got: Any, want: float, what: str) -> None:
    got = float(np.asarray(host(got)))
    # Relative to the size of the derivative (absolute near a zero of it).
    tol = RTOL * max(abs(want), 1.0)
    assert abs(got - want) <= tol, f"{what}: got {got!r}, sympy says {want!r}"


def _nest_grad(f: Callable, k: int) -> Callable:
    for _ in range(k):
        f = funcgrad.grad(f)
    return f


def _nest_jvp(f: Callable, k: int) -> Callable:
    for _ in range(k):
        f = (lambda g: lambda x: funcgrad.jvp(g, (x,), (fnp.ones_like(x),))[1])(f)
    return f


def _nest_mixed(f: Callable, k: int) -> Callable:
    for i in range(k):
        if i % 2:
            f = funcgrad.grad(f)
        else:
            f = (lambda g: lambda x: funcgrad.jvp(g, (x,), (fnp.ones_like(x),))[1])(f)
    return f


def _nest_jac(f: Callable, k: int) -> Callable:
    for i in range(k):
        f = funcgrad.jacrev(f) if i % 2 else funcgrad.jacfwd(f)
    return f


def _nest_linearize(f: Callable, k: int) -> Callable:
    for _ in range(k):
        f = (lambda g: lambda x: funcgrad.linearize(g, x)[1](fnp.ones_like(x)))(f)
    return f


NESTINGS = {
    "grad": _nest_grad,
    "jvp": _nest_jvp,
    "mixed": _nest_mixed,
    "jac": _nest_jac,
    "linearize": _nest_linearize,
}


@pytest.mark.parametrize("k", ORDERS)
@pytest.mark.parametrize("name,fn,expr,domain", FUNCS, ids=[f[0] for f in FUNCS])
@pytest.mark.parametrize("nesting", list(NESTINGS))
def test_kth_derivative_matches_sympy(nesting, name, fn, expr, domain, k) -> None:
    if nesting in ("jac", "linearize") and k > 4:
        pytest.skip("the grad/jvp/mixed towers cover orders 5 and 6")
    d = NESTINGS[nesting](fn, k)
    for x0 in _points(name, domain):
        x = dev(np.asarray(x0))
        _close(d(x), _reference(expr, k, x0), f"{nesting}^{k} of {name} at {x0}")


@pytest.mark.parametrize("name,fn,expr,domain", FUNCS, ids=[f[0] for f in FUNCS])
def test_vmapped_derivative_tower(name, fn, expr, domain) -> None:
    xs = np.linspace(domain[0], domain[1], 5)
    d3 = funcgrad.vmap(_nest_mixed(fn, 3))(dev(xs))
    got = np.asarray(host(d3))
    for x0, g in zip(xs, got):
        _close(g, _reference(expr, 3, float(x0)), f"vmap(d^3 {name}) at {x0}")


def test_taylor_coefficients_by_nested_jvp_on_arrays() -> None:
    # The k-th derivative of exp(2x) is 2^k exp(2x), elementwise on an array.
    x = np.array([-0.5, 0.0, 0.25, 1.0])
    d = _nest_jvp(lambda v: fnp.exp(2.0 * v), 5)
    np.testing.assert_allclose(host(d(dev(x))), 32.0 * np.exp(2.0 * x), rtol=RTOL)
