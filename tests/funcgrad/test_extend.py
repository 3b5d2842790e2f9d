"""funcgrad.extend: jax.extend's names; Primitive with JAX's conventions (one result from
impl, abstract_eval and bind unless multiple_results)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import dev, host

import funcgrad
from funcgrad.core import primitive_registry
from funcgrad.errors import ConcretizationError, MissingRuleError
from funcgrad.extend import backend as ext_backend
from funcgrad.extend import core as ext
from funcgrad.interpreters import batching
from funcgrad.interpreters.jvp import defjvp


@pytest.fixture
def new_primitive():
    made = []

    def make(name, multiple_results=False):
        p = ext.Primitive(name)
        p.multiple_results = multiple_results  # set after construction, as JAX code does
        made.append(p)
        return p

    yield make
    for p in made:
        batching.batch_rules.pop(p, None)
        primitive_registry.remove(p)


def test_single_result_impl_abstract_eval_and_bind(new_primitive):
    # JAX 0.10.2: p.def_impl(lambda x, *, k=2: x * k); p.bind(3.0) -> 6.0, p.bind(3.0, k=3) -> 9.0
    p = new_primitive("test_extend_double")

    @p.def_impl
    def impl(x, *, k=2):
        return x * k

    assert impl(1.0) == 2.0  # def_impl returns the function: a decorator
    p.def_abstract_eval(lambda a, *, k=2: ext.ShapedArray(a.shape, a.dtype))
    assert float(p.bind(3.0)) == 6.0 and float(p.bind(3.0, k=3)) == 9.0
    x = dev(np.array([1.0, 2.0]))
    assert host(p.bind(x)).tolist() == [2.0, 4.0]
    assert host(funcgrad.jit(lambda v: p.bind(v, k=5))(x)).tolist() == [5.0, 10.0]
    # JAX: { lambda ; a:f32[]. let b:f32[] = double[k=5] a in (b,) } (float32 there)
    text = str(funcgrad.make_jaxpr(lambda v: p.bind(v, k=5))(np.float64(1.0)))
    assert text == "{ lambda ; a:f64[]. let b:f64[] = test_extend_double[k=5] a in (b,) }"


def test_multiple_results(new_primitive):
    # JAX: q.multiple_results = True; q.def_impl(lambda x: (x, x + 1)); q.bind(1.0) -> (1.0, 2.0)
    q = new_primitive("test_extend_two", multiple_results=True)
    q.def_impl(lambda x: (x, x + 1))
    q.def_abstract_eval(lambda a: (a, a))
    outs = q.bind(1.0)
    assert isinstance(outs, list) and [float(o) for o in outs] == [1.0, 2.0]
    a, b = funcgrad.jit(lambda v: q.bind(v))(dev(np.array([1.0])))
    assert host(a).tolist() == [1.0] and host(b).tolist() == [2.0]


def test_rules_return_the_wrong_kind_of_value(new_primitive):
    q = new_primitive("test_extend_bad", multiple_results=True)
    q.def_impl(lambda x: x)
    q.def_abstract_eval(lambda a: a)
    with pytest.raises(TypeError, match="multiple_results=True.*sequence"):
        q.bind(np.ones(2))
    r = new_primitive("test_extend_bad_aval")
    r.def_abstract_eval(lambda a: a.shape)
    with pytest.raises(TypeError, match="must return a ShapedArray"):
        funcgrad.make_jaxpr(lambda v: r.bind(v))(np.ones(2))


def test_derivatives_and_batching_come_from_the_rule_tables(new_primitive):
    p = new_primitive("test_extend_scale")
    p.def_impl(lambda x, *, k: x * k)
    p.def_abstract_eval(lambda a, *, k: a)
    with pytest.raises(MissingRuleError, match="test_extend_scale"):
        funcgrad.grad(lambda x: p.bind(x, k=3.0))(1.0)
    with pytest.raises(MissingRuleError, match="test_extend_scale"):
        funcgrad.vmap(lambda x: p.bind(x, k=3.0))(np.ones(2))
    defjvp(p, lambda g, ans, x, *, k: g * k)
    batching.batch_rules[p] = lambda n, vals, dims, *, k: ([p.bind(vals[0], k=k)], list(dims))
    # d/dx (3x * x) = 6x
    assert float(funcgrad.grad(lambda x: p.bind(x, k=3.0) * x)(2.0)) == 12.0
    assert float(funcgrad.jit(funcgrad.grad(lambda x: p.bind(x, k=3.0) * x))(2.0)) == 12.0
    out = funcgrad.vmap(lambda x: p.bind(x, k=3.0))(dev(np.arange(3.0)))
    assert host(out).tolist() == [0.0, 3.0, 6.0]


def test_core_primitive_bind_returns_the_single_result():
    # funcgrad.core.Primitive (list-returning rules) binds as JAX's does too
    from funcgrad.ops.elementwise import sin_p
    from funcgrad.ops.sorting import sort_p

    assert float(sin_p.bind(0.0)) == 0.0
    outs = sort_p.bind(np.array([2.0, 1.0]), dimension=0, is_stable=True, num_keys=1)
    assert isinstance(outs, list) and outs[0].tolist() == [1.0, 2.0]


def test_jaxpr_names_and_helpers():
    closed = funcgrad.make_jaxpr(lambda x: x * 2.0)(np.ones(2))
    assert isinstance(closed, ext.ClosedJaxpr) and isinstance(closed.jaxpr, ext.Jaxpr)
    eqn = closed.eqns[0]
    assert isinstance(eqn, ext.JaxprEqn) and eqn.primitive.name == "mul"
    assert isinstance(eqn.outvars[0], ext.Var)
    ext.check_jaxpr(closed.jaxpr)
    with pytest.raises(TypeError, match="check_jaxpr takes a Jaxpr"):
        ext.check_jaxpr(closed)
    assert ext.jaxpr_as_fun(closed)(np.array([1.0, 2.0]))[0].tolist() == [2.0, 4.0]
    assert ext.concrete_or_error(int, 3.0, "steps") == 3
    with pytest.raises(ConcretizationError, match="steps"):
        funcgrad.jit(lambda x: ext.concrete_or_error(int, x, "steps"))(1.0)
    assert ext.valid_jaxtype(np.ones(2)) and ext.valid_jaxtype(1.5)
    assert not ext.valid_jaxtype("a") and not ext.valid_jaxtype(object())
    d = ext_backend.get_default_device()
    assert d == funcgrad.default_backend() and d.id == 0
