"""funcgrad.export: programs written to JSON and read back stay the same function -- values,
derivatives, batching and jit -- and bad files or unexportable programs fail clearly."""

from __future__ import annotations

import collections
import json

import numpy as np
import pytest
from helpers import assert_close, dev, host

import funcgrad
import funcgrad.numpy as fnp
import funcgrad.random as fr
from funcgrad import tree_util
from funcgrad.export import ExportError, deserialize, export, load, save

rng = np.random.default_rng(0)


def _r(*shape):
    return rng.normal(size=shape)


@funcgrad.custom_jvp
def _halved_grad_identity(x):
    return x


@_halved_grad_identity.defjvp
def _halved_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return x, 0.5 * t


def _scan_program(x, w):
    def body(c, xi):
        c = fnp.tanh(c * w + xi)
        return c, c * c
    c, ys = funcgrad.lax.scan(body, 0.0 * w, x)
    return c + ys.sum()


def _while_program(x):
    def cond(s):
        return s[0] < 5

    def body(s):
        return s[0] + 1, s[1] * 0.9 + fnp.sin(s[1])
    return funcgrad.while_loop(cond, body, (0, x))[1].sum()


def _cond_program(x, y):
    return funcgrad.cond(fnp.sum(x) > 0, lambda a, b: a * b, lambda a, b: a - fnp.exp(b), x, y)


def _indexing_program(x):
    x = fnp.asarray(x)
    idx = dev(np.array([2, 0, 2]))
    y = x[idx] * 2.0 + x[1:, ::2].sum() + x[::-1, None, 0].sum() + x[..., 1].sum()
    y = fnp.at(y)[dev(np.array([0, 1]))].add(x[0])
    return fnp.at(y)[1, 2].set(x[2, 0] ** 2)


def _remat_program(x, w):
    layer = funcgrad.checkpoint(lambda h: fnp.tanh(h @ w),
                                policy=funcgrad.checkpoint_policies.dots_saveable)
    return layer(layer(x)).sum()


@funcgrad.custom_vjp
def _tripled_x_grad_product(x, y):
    return x * y


_tripled_x_grad_product.defvjp(lambda x, y: (x * y, (x, y)),
                               lambda res, ct: (3 * ct * res[1], ct * res[0]))


def _scaled_vjp_program(x, y):
    return fnp.sum(fnp.sin(_tripled_x_grad_product(x, y)))


# (name, function, argument makers, differentiated argnums); every program is also batched
# over the leading axis of its first argument.
PROGRAMS = [
    ("elementwise", lambda x, y: fnp.sin(x) * fnp.exp(-y) + x ** 3 / (1.0 + y * y),
     lambda: (_r(3, 4), _r(3, 4)), (0, 1)),
    ("reductions", lambda x: (fnp.sum(x, 0), fnp.max(x, axis=1), fnp.mean(x), fnp.var(x, 1),
                              fnp.prod(x, axis=0), fnp.argmax(x, axis=1)),
     lambda: (_r(3, 4),), (0,)),
    ("dot_general", lambda a, b: fnp.tanh(a @ b) + fnp.einsum("ij,kj->ik", a, a) @ (a @ b),
     lambda: (_r(3, 4), _r(4, 2)), (0, 1)),
    ("indexing", _indexing_program, lambda: (_r(3, 4),), (0,)),
    ("scan", _scan_program, lambda: (_r(5, 3), _r(3)), (0, 1)),
    ("while", _while_program, lambda: (_r(3),), (0,)),
    ("cond", _cond_program, lambda: (_r(3), _r(3)), (0, 1)),
    ("custom_jvp", lambda x: fnp.sum(_halved_grad_identity(x) * fnp.cos(x)),
     lambda: (_r(3),), (0,)),
    ("custom_vjp", _scaled_vjp_program, lambda: (_r(3), _r(3)), (0, 1)),
    ("scipy_special", lambda x: funcgrad.scipy.special.gammaln(x) + funcgrad.scipy.special.erf(x),
     lambda: (np.abs(_r(3)) + 0.5,), (0,)),
    ("random", lambda key, x: x * fr.normal(key, (3,)) + fr.uniform(fr.fold_in(key, 1), (3,)),
     lambda: (host(fr.PRNGKey(3)), _r(3)), (1,)),
    ("remat", _remat_program, lambda: (_r(2, 3), _r(3, 3)), (0, 1)),
    ("nested_jit", lambda x: funcgrad.jit(lambda y: fnp.cos(y) * 2.0)(x) + x,
     lambda: (_r(4),), (0,)),
    ("linalg", lambda a: fnp.linalg.solve(a @ a.T + 3 * fnp.eye(3), a[:, 0]),
     lambda: (_r(3, 3),), (0,)),
    ("sort_cumsum", lambda x: fnp.cumsum(fnp.sort(x)) * fnp.clip(x, -0.5, 0.5),
     lambda: (_r(5),), (0,)),
]
IDS = [p[0] for p in PROGRAMS]


def _round_trip(fn, *args, **kwargs):
    exp = export(fn)(*args, **kwargs)
    return exp, deserialize(exp.serialize())


def _assert_trees_close(a, b, **kw):
    la, lb = tree_util.tree_leaves(a), tree_util.tree_leaves(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        assert np.asarray(host(x)).dtype == np.asarray(host(y)).dtype
        assert_close(host(x), host(y), **kw)


@pytest.mark.parametrize("name, fn, make, argnums", PROGRAMS, ids=IDS)
def test_round_trip_same_function(name, fn, make, argnums):
    args = tuple(dev(a) for a in make())
    exp, loaded = _round_trip(fn, *args)
    if name not in ("custom_jvp", "custom_vjp", "scipy_special"):  # (rules print renamed)
        assert str(loaded.jaxpr) == str(exp.jaxpr)
    _assert_trees_close(loaded(*args), fn(*args), rtol=1e-12, atol=1e-12)
    _assert_trees_close(funcgrad.jit(loaded)(*args), fn(*args), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name, fn, make, argnums", PROGRAMS, ids=IDS)
def test_round_trip_same_derivatives(name, fn, make, argnums):
    args = tuple(dev(a) for a in make())
    _, loaded = _round_trip(fn, *args)

    def scalar(f):
        return lambda *a: sum(fnp.sum(fnp.real(o)) for o in tree_util.tree_leaves(f(*a))
                              if o.dtype.kind in "fc")

    want = funcgrad.grad(scalar(fn), argnums=argnums)(*args)
    _assert_trees_close(funcgrad.grad(scalar(loaded), argnums=argnums)(*args), want,
                        rtol=1e-10, atol=1e-12)
    _assert_trees_close(funcgrad.jit(funcgrad.grad(scalar(loaded), argnums=argnums))(*args),
                        want, rtol=1e-10, atol=1e-12)
    tangents = tuple(np.ones_like(host(a)) if i in argnums else
                     np.zeros(np.shape(a), funcgrad.float0) for i, a in enumerate(args))
    tangents = tuple(t if t.dtype == funcgrad.float0 else dev(t) for t in tangents)
    _, t_loaded = funcgrad.jvp(loaded, args, tangents)
    _, t_want = funcgrad.jvp(fn, args, tangents)
    _assert_trees_close(t_loaded, t_want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name, fn, make, argnums", PROGRAMS, ids=IDS)
def test_round_trip_batches_like_a_loop(name, fn, make, argnums):
    examples = [make() for _ in range(3)]
    first = np.stack([host(e[0]) for e in examples])
    rest = tuple(dev(a) for a in examples[0][1:])
    _, loaded = _round_trip(fn, dev(examples[0][0]), *rest)
    batched = funcgrad.vmap(loaded, in_axes=(0,) + (None,) * len(rest))(dev(first), *rest)
    loop = [loaded(dev(first[i]), *rest) for i in range(3)]
    stacked = tree_util.tree_map(lambda *xs: np.stack([host(x) for x in xs]), *loop)
    _assert_trees_close(batched, stacked, rtol=1e-10, atol=1e-12)


def test_file_round_trip_is_json_and_atomic(tmp_path):
    path = tmp_path / "model.json"
    x = dev(_r(3))
    save(lambda v: fnp.sin(v) * 2.0, path, x)
    data = json.loads(path.read_text())
    assert data["format"] == "funcgrad.export" and data["version"] == 1
    assert [p.name for p in tmp_path.iterdir()] == ["model.json"]  # no temporary left behind
    assert_close(host(load(path)(x)), np.sin(host(x)) * 2.0)
    save(lambda v: v + 1.0, path, x)  # overwriting replaces the program
    assert_close(host(load(str(path))(x)), host(x) + 1.0)
    with pytest.raises(FileNotFoundError, match="the directory of .* does not exist"):
        save(lambda v: v, tmp_path / "missing" / "f.json", x)


def test_constants_keep_every_bit():
    bits = np.array([0x7FF8000000000123, 0x8000000000000000],
                    np.uint64).view(np.float64)  # NaN payload, -0.0
    ints = np.array([-(2 ** 63), 2 ** 63 - 1], np.int64)
    halfs = np.array([1.5, -2.25], np.float16)
    d_bits, d_ints, d_halfs = dev(bits), dev(ints), dev(halfs)

    def f(x):
        return x + d_bits, x.astype(np.int64) + d_ints, x[:2].astype(np.float16) + d_halfs, \
            np.complex64(1 - 2j) * x

    exp, loaded = _round_trip(f, dev(np.zeros(2)))
    consts = [host(c) for c in loaded.jaxpr.consts]
    for want in (bits, ints, halfs):
        assert any(c.dtype == want.dtype and c.tobytes() == want.tobytes() for c in consts)
    for got, want in zip(loaded(dev(np.zeros(2))), f(dev(np.zeros(2)))):
        assert np.asarray(host(got)).tobytes() == np.asarray(host(want)).tobytes()


def test_pytrees_kwargs_and_static_arguments():
    Point = collections.namedtuple("Point", "x y")

    def f(p, scale, *, n, extra):
        return {"sum": (p.x + p.y) * scale ** n, "extra": [extra["a"] * 2]}

    jf = funcgrad.jit(f, static_argnames="n")
    p = Point(dev(_r(2)), dev(_r(2)))
    exp, loaded = _round_trip(jf, p, 2.0, n=3, extra={"a": dev(np.arange(3))})
    got = loaded(p, 2.0, extra={"a": dev(np.arange(3))})
    want = f(p, 2.0, n=3, extra={"a": np.arange(3)})
    _assert_trees_close(got, want)
    assert loaded.out_info["sum"] == funcgrad.ShapeDtypeStruct((2,), np.float64)
    with pytest.raises(TypeError, match="structure"):
        loaded(p, 2.0, n=3, extra={"a": dev(np.arange(3))})  # n is baked in


def test_stand_in_arguments_and_python_scalars():
    exp = export(lambda x, s: x * s)(funcgrad.ShapeDtypeStruct((2,), np.float32), 1.0)
    loaded = deserialize(exp.serialize())
    out = loaded(dev(np.ones(2, np.float32)), 3)  # an int for a weak float: still float32
    assert host(out).dtype == np.float32 and host(out).tolist() == [3.0, 3.0]
    assert float(funcgrad.grad(lambda s: loaded(dev(np.ones(2, np.float32)), s).sum())(2.0)) == 2


def test_call_with_wrong_types_names_the_argument():
    loaded = deserialize(export(lambda x, y: x + y)(np.ones(3), np.ones(3)).serialize())
    with pytest.raises(TypeError, match=r"argument y: lowered for f64\[3\], called with f32\[3\]"):
        loaded(dev(np.ones(3)), dev(np.ones(3, np.float32)))
    with pytest.raises(TypeError, match=r"argument x: lowered for f64\[3\], called with f64\[4\]"):
        loaded(dev(np.ones(4)), dev(np.ones(3)))
    with pytest.raises(TypeError, match="structure"):
        loaded(dev(np.ones(3)))
    # JAX's Exported.call raises ValueError for these: ours is both.
    with pytest.raises(ValueError, match=r"argument x: lowered for f64\[3\], called with f64\[4\]"):
        loaded.call(dev(np.ones(4)), dev(np.ones(3)))
    with pytest.raises(ValueError, match="structure"):
        loaded.call(dev(np.ones(3)), y=dev(np.ones(3)))


def test_exported_describes_itself_as_jaxs():
    # As jax.export.Exported (JAX 0.10.2): in_tree of (args_tuple, kwargs), tuples of avals,
    # one device, no effects, a vjp.
    x = dev(np.ones(3, np.float32))
    exp = export(funcgrad.jit(lambda x, y: {"s": fnp.sin(x) + y}))(x, y=x)
    for e in (exp, deserialize(exp.serialize(vjp_order=1))):
        assert repr(e.in_tree) == "PyTreeDef(((*,), {'y': *}))"
        assert isinstance(e.in_avals, tuple) and [a.str_short() for a in e.in_avals] == [
            "f32[3]", "f32[3]"]
        assert isinstance(e.out_avals, tuple) and len(e.out_avals) == 1
        assert e.nr_devices == 1 and e.ordered_effects == () and e.has_vjp()
        # JAX's platform names: the GPU is "cuda", the strict test backend a "cpu"
        assert e.platforms == (funcgrad.backend.platform_name(funcgrad.typeof(x).device),)
        assert_close(e.call(x, y=x)["s"], np.sin(np.ones(3, np.float32)) + 1)
    assert funcgrad.export.default_export_platform() in ("cpu", "cuda")
    export(fnp.sin, platforms=exp.platforms)(x)


def test_exported_vjp_and_calling_convention_as_jaxs():
    # JAX 0.10.2: exp.vjp() is an Exported of (arg leaves, result cotangent leaves) -> tuple
    # of argument cotangents; for sin(x) * y at x = y = [1, 2] with ones as cotangent:
    # ([0.5403023, -0.8322937], [0.84147096, 0.9092974])
    x = dev(np.array([1.0, 2.0], np.float32))
    exp = export(lambda x, y: {"s": fnp.sin(x) * y})(x, y=x)
    for e in (exp, deserialize(exp.serialize(vjp_order=1))):
        v = e.vjp()
        assert v.fun_name == "fun_vjp_jax" and repr(v.in_tree) == "PyTreeDef(((*, *, *), {}))"
        assert repr(v.out_tree) == "PyTreeDef((*, *))"
        dx, dy = v(x, x, dev(np.ones(2, np.float32)))
        assert_close(dx, np.array([0.5403023, -0.8322937], np.float32), rtol=1e-6)
        assert_close(dy, np.array([0.84147096, 0.9092974], np.float32), rtol=1e-6)
        assert (funcgrad.export.minimum_supported_calling_convention_version
                <= e.calling_convention_version
                <= funcgrad.export.maximum_supported_calling_convention_version)
        assert e.uses_global_constants is False
    checks = [funcgrad.export.DisabledSafetyCheck.platform(),
              funcgrad.export.DisabledSafetyCheck.custom_call("lapack_dgetrf")]
    assert [c.is_custom_call() for c in checks] == [None, "lapack_dgetrf"]
    assert checks[0] == funcgrad.export.DisabledSafetyCheck.platform() and str(checks[0]) == (
        "platform")
    assert_close(export(fnp.sin, disabled_checks=checks)(x).call(x), np.sin(host(x)))
    with pytest.raises(TypeError, match="DisabledSafetyCheck"):
        export(fnp.sin, disabled_checks=["platform"])(x)
    with pytest.raises(ValueError, match="platform of its arguments"):
        export(fnp.sin, platforms=("tpu",))(x)


def test_a_file_with_the_list_form_of_in_tree_still_loads():
    # Files written before in_tree became JAX's (args_tuple, kwargs) hold a list for args.
    data = json.loads(export(lambda x: x * 2)(np.ones(2)).serialize())
    assert data["in_tree"] == {"tuple": [{"tuple": ["*"]}, {"dict": []}]}
    data["in_tree"] = {"tuple": [{"list": ["*"]}, {"dict": []}]}
    loaded = deserialize(json.dumps(data))
    assert repr(loaded.in_tree) == "PyTreeDef(((*,), {}))"
    assert host(loaded(dev(np.ones(2)))).tolist() == [2.0, 2.0]


# -- what cannot be exported --------------------------------------------------------------------


def test_debug_callback_is_refused_naming_the_primitive():
    def f(x):
        funcgrad.debug.callback(lambda v: None, x)
        return x * 2

    with pytest.raises(ExportError, match="primitive 'debug_callback'"):
        export(f)(np.ones(2))


def test_untraceable_custom_rule_is_refused_naming_the_primitive():
    @funcgrad.custom_vjp
    def g(x):
        return x * 2

    def bwd(res, ct):
        if float(ct[0]) > 0:  # needs a concrete value: cannot be traced
            return (ct,)
        return (-ct,)

    g.defvjp(lambda x: (x * 2, None), bwd)
    with pytest.raises(ExportError, match="primitive 'custom_vjp_call': tracing its rule bwd"):
        export(lambda x: g(x).sum())(np.ones(2))


@funcgrad.custom_jvp
def _calls_itself(x, y):
    return fnp.sin(x) * y


@_calls_itself.defjvp
def _calls_itself_jvp(primals, tangents):
    # JAX's documented pattern: the rule calls the function itself for the primal output.
    x, y = primals
    x_dot, y_dot = tangents
    primal_out = _calls_itself(x, y)
    return primal_out, 2 * fnp.cos(x) * x_dot * y + fnp.sin(x) * y_dot  # deliberately 2x


def test_custom_jvp_rule_calling_its_own_function_round_trips():
    # The rule's jaxpr holds the same custom_jvp_call again: written as a reference to the
    # enclosing rule (tracing it again never ended: RecursionError).
    x, y = 2.0, 3.0
    blob = export(_calls_itself)(x, y).serialize()
    assert '"rule_ref":0' in blob.decode()
    loaded = deserialize(blob)
    assert float(loaded(x, y)) == float(_calls_itself(x, y))
    for d in (funcgrad.grad, lambda h: funcgrad.grad(funcgrad.grad(h)),
              lambda h: funcgrad.jacfwd(funcgrad.grad(h))):
        assert_close(host(d(loaded)(x, y)), host(d(_calls_itself)(x, y)))
    assert_close(funcgrad.grad(loaded)(x, y), 2 * np.cos(x) * y)  # the custom rule, kept
    a = dev(np.linspace(-1, 1, 12).reshape(4, 3))
    lse = deserialize(export(lambda v: funcgrad.scipy.special.logsumexp(v, axis=1))(a)
                      .serialize())
    assert_close(host(lse(a)), host(funcgrad.scipy.special.logsumexp(a, axis=1)))
    assert_close(host(funcgrad.hessian(lambda v: lse(v).sum())(a)),
                 host(funcgrad.hessian(
                     lambda v: funcgrad.scipy.special.logsumexp(v, axis=1).sum())(a)))


def test_a_tower_of_custom_rules_is_cut_to_forward_mode():
    # i1e's rule calls g_2, whose rule calls g_3, ...: tracing each rule to write it never
    # ended (OverflowError deep down). Rules are written 4 deep, then forward mode of the
    # function; the values and derivatives are the same.
    a = dev(np.array([0.0, 0.5, 1.5, 6.0]))
    loaded = deserialize(export(funcgrad.scipy.special.i1e)(a).serialize())
    assert_close(host(loaded(a)), host(funcgrad.scipy.special.i1e(a)))

    def third(f):
        return funcgrad.grad(lambda s: funcgrad.grad(lambda t: funcgrad.grad(
            lambda u: f(u * dev(np.ones(4))).sum())(t))(s))

    for s in (0.0, 0.7):
        assert_close(host(third(loaded)(s)), host(third(funcgrad.scipy.special.i1e)(s)),
                     rtol=1e-9, atol=1e-12)


def test_a_rule_reference_outside_any_rule_is_refused():
    data = json.loads(export(_calls_itself)(2.0, 3.0).serialize())
    eqn = data["jaxpr"]["jaxpr"]["eqns"][0]
    eqn["params"]["jvp"]["v"] = {"rule_ref": 0}
    with pytest.raises(ExportError, match="refers to enclosing rule 0, but it is inside 0"):
        deserialize(json.dumps(data))


def test_linearized_custom_vjp_round_trips():
    x, y = dev(np.linspace(0.1, 1, 3)), dev(np.linspace(1, 2, 3))
    ones = dev(np.ones(3))

    def tangent(a, b):
        return funcgrad.linearize(_scaled_vjp_program, a, b)[1](ones, ones)

    exp, loaded = _round_trip(tangent, x, y)
    assert "custom_lin" in str(exp.jaxpr)
    assert_close(host(loaded(x, y)), host(tangent(x, y)))


def test_custom_checkpoint_policy_is_refused():
    layer = funcgrad.checkpoint(fnp.sin, policy=lambda prim, *a, **p: False)
    with pytest.raises(ExportError, match="primitive 'remat'.*policy"):
        export(layer)(np.ones(2))


def test_named_checkpoint_policies_are_written():
    pol = funcgrad.checkpoint_policies
    for policy in (pol.nothing_saveable, pol.save_only_these_names("h"),
                   pol.save_from_both_policies(pol.dots_saveable,
                                               pol.save_any_names_but_these("a", "b"))):
        layer = funcgrad.checkpoint(lambda x: funcgrad.checkpoint_name(fnp.sin(x), "h"),
                                    policy=policy)
        exp, loaded = _round_trip(layer, np.ones(2))
        (eqn,) = [e for e in loaded.jaxpr.eqns if e.prim.name == "remat"]
        assert eqn.params["policy"] == policy


def test_unsupported_pytree_node_is_refused():
    @tree_util.register_pytree_node_class
    class Box:
        def __init__(self, v):
            self.v = v

        def tree_flatten(self):
            return (self.v,), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

    with pytest.raises(ExportError, match="pytree node of type"):
        export(lambda b: b.v * 2)(Box(np.ones(2)))


_Point = collections.namedtuple("_Point", "x y")
funcgrad.export.register_namedtuple_serialization(_Point, serialized_name="tests.export.Point")


@tree_util.register_pytree_node_class
class _Scaled:
    def __init__(self, v, scale):
        self.v, self.scale = v, scale

    def tree_flatten(self):
        return (self.v,), self.scale

    @classmethod
    def tree_unflatten(cls, scale, children):
        return cls(children[0], scale)


funcgrad.export.register_pytree_node_serialization(
    _Scaled, serialized_name="tests.export.Scaled",
    serialize_auxdata=lambda scale: str(scale).encode(),
    deserialize_auxdata=lambda b: float(b.decode()))


def test_registered_pytree_nodes_round_trip():
    # As jax.export.register_pytree_node_serialization / register_namedtuple_serialization:
    # registered nodes are written by name and read back as their own classes.
    def f(s, p):
        return _Scaled(s.v * s.scale, s.scale + 1), _Point(p.y, p.x)

    s, p = _Scaled(dev(np.ones(2)), 3.0), _Point(dev(np.ones(1)), dev(np.zeros(1)))
    blob = export(f)(s, p).serialize()
    assert '"custom":"tests.export.Scaled"' in blob.decode()
    out_s, out_p = deserialize(blob)(s, p)
    assert type(out_s) is _Scaled and out_s.scale == 4.0
    assert host(out_s.v).tolist() == [3.0, 3.0]
    assert type(out_p) is _Point and host(out_p.x).tolist() == [0.0]
    # The aux data is part of the structure: another scale is another signature.
    with pytest.raises(ValueError, match="structure"):
        deserialize(blob).call(_Scaled(dev(np.ones(2)), 2.0), p)
    with pytest.raises(ValueError, match="duplicate serialization registration"):
        funcgrad.export.register_namedtuple_serialization(_Point, serialized_name="other")
    with pytest.raises(ValueError, match="duplicate serialization registration"):
        funcgrad.export.register_namedtuple_serialization(
            collections.namedtuple("Q", "a"), serialized_name="tests.export.Point")
    data = json.loads(blob)
    data["in_tree"]["tuple"][0]["tuple"][0]["custom"] = "tests.export.Nope"
    with pytest.raises(ExportError, match="'tests.export.Nope', which is not registered"):
        deserialize(json.dumps(data))


# -- bad files ----------------------------------------------------------------------------------


def _data(fn=lambda x: fnp.sin(x) * 2.0, *args):
    return json.loads(export(fn)(*(args or (np.ones(3),))).serialize())


def _load(data):
    return deserialize(json.dumps(data).encode())


def test_not_json_or_not_an_export():
    with pytest.raises(ExportError, match="not JSON"):
        deserialize(b"\x80\x04 pickle?")
    with pytest.raises(ExportError, match="not a funcgrad export"):
        deserialize(b'{"hello": 1}')
    with pytest.raises(ExportError, match="not a funcgrad export"):
        deserialize(b"[1, 2]")


def test_other_version_is_refused():
    data = _data()
    data["version"] = 2
    with pytest.raises(ExportError, match="version 2; this funcgrad reads version 1"):
        _load(data)


def test_unknown_primitive_is_named():
    data = _data()
    data["jaxpr"]["jaxpr"]["eqns"][0]["prim"] = "frobnicate"
    with pytest.raises(ExportError, match="unknown primitive 'frobnicate'"):
        _load(data)


def test_malformed_entries():
    data = _data(lambda x: x + np.arange(3.0), np.ones(3))
    bad = json.loads(json.dumps(data))
    bad["jaxpr"]["consts"][0]["v"]["data"] = "AAAA"
    with pytest.raises(ExportError, match="holds 3 bytes, not 24"):
        _load(bad)
    bad = json.loads(json.dumps(data))
    bad["jaxpr"]["jaxpr"]["eqns"][0]["in"] = [7, 0]
    with pytest.raises(ExportError, match="used before it is defined"):
        _load(bad)
    bad = json.loads(json.dumps(data))
    bad["jaxpr"]["jaxpr"]["eqns"][0]["out"][0]["shape"] = [4]
    with pytest.raises(ExportError, match="does not type-check"):
        _load(bad)
    bad = json.loads(json.dumps(data))
    bad["jaxpr"]["consts"][0] = {"$": "pickle", "v": "..."}
    with pytest.raises(ExportError, match="unknown value kind 'pickle'"):
        _load(bad)
    bad = json.loads(json.dumps(data))
    del bad["jaxpr"]["jaxpr"]["eqns"]
    with pytest.raises(ExportError, match="malformed jaxpr"):
        _load(bad)
    bad = json.loads(json.dumps(data))
    bad["in_tree"] = {"tuple": ["*", "*"]}
    with pytest.raises(ExportError, match="malformed funcgrad export"):
        _load(bad)


def test_linear_call_exports_with_its_transpose() -> None:
    from funcgrad.custom_derivatives import linear_call

    f = funcgrad.jit(lambda x, y: linear_call(lambda r, v: v * r, lambda r, c: 10 * c * r,
                                              y, x))
    x = dev(np.array([1.0, 2.0]))
    g = funcgrad.export.deserialize(funcgrad.export.export(f)(x, 3.0).serialize())
    assert host(g.call(x, 3.0)).tolist() == [3.0, 6.0]
    # the exported program still transposes with fun_transpose (10 times the true one)
    assert host(funcgrad.grad(lambda v: fnp.sum(g.call(v, 3.0)))(x)).tolist() == [30.0, 30.0]


@funcgrad.custom_vjp
def _own_forward_rule(x):
    return x * x


# forward mode's rule (7 x t) deliberately differs from bwd transposed (5 x ct)
_own_forward_rule.defvjp(lambda x: (x * x, x), lambda x, ct: (5.0 * x * ct,),
                         tangent_map=lambda x, t: 7.0 * x * t[0])


def test_custom_vjp_tangent_map_survives_export():
    x, ones = dev(np.linspace(0.1, 1, 3)), dev(np.ones(3))

    def tangent(a):  # custom_lin staged: its bwd entry carries the tangent_map
        return funcgrad.linearize(_own_forward_rule, a)[1](ones)

    exp, loaded = _round_trip(tangent, x)
    assert "custom_lin" in str(exp.jaxpr)
    assert_close(host(loaded(x)), 7.0 * np.linspace(0.1, 1, 3))
    # the function itself exported, differentiated after loading
    _, loaded = _round_trip(_own_forward_rule, x)
    assert_close(host(funcgrad.jvp(loaded, (x,), (ones,))[1]), 7.0 * np.linspace(0.1, 1, 3))
    assert_close(host(funcgrad.grad(lambda a: loaded(a).sum())(x)), 5.0 * np.linspace(0.1, 1, 3))
