"""Ahead-of-time stages: jit(f).trace / .lower / .compile, ShapeDtypeStruct stand-ins and
make_jaxpr(return_shape=True), as JAX's."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_close, dev, host

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import ShapedArray, ShapeDtypeStruct
from funcgrad.ir import ClosedJaxpr
from funcgrad.stages import ArgInfo, Compiled, Lowered, Traced


def loss(w, x):
    return fnp.mean(fnp.tanh(x @ w) ** 2)


def test_lower_text_shows_optimised_jaxpr_and_source():
    lowered = funcgrad.jit(funcgrad.grad(loss)).lower(np.ones((3, 2)), np.ones((4, 3)))
    assert isinstance(lowered, Lowered)
    text = lowered.as_text()
    for prim in ("dot_general", "tanh", "mul"):
        assert prim in text
    assert "def loss(xp, v0, v1):" in text and "xp.tanh(" in text and "xp.matmul(" in text
    assert isinstance(lowered.compiler_ir(), ClosedJaxpr)
    assert lowered.compiler_ir("source") == lowered.as_text("source")
    assert str(lowered.compiler_ir("jaxpr")) == lowered.as_text("jaxpr")
    assert str(lowered) == text
    with pytest.raises(ValueError, match="unknown dialect 'hlo'"):
        lowered.compiler_ir("hlo")


def test_optimised_jaxpr_differs_from_the_traced_one():
    lowered = funcgrad.jit(lambda x: fnp.sin(x) * 1.0 + 0.0).lower(np.ones(2))
    assert "mul" in str(lowered.jaxpr) and "mul" not in lowered.as_text("jaxpr")


def test_compiled_runs_and_matches_jit():
    w, x = dev(np.full((3, 2), 0.1)), dev(np.ones((4, 3)))
    jf = funcgrad.jit(funcgrad.value_and_grad(loss))
    compiled = jf.lower(w, x).compile()
    assert isinstance(compiled, Compiled)
    v, g = compiled(w, x)
    v2, g2 = jf(w, x)
    assert_close(host(v), host(v2))
    assert_close(host(g), host(g2))
    assert jf.trace_count == 1  # lower traced; the call reused it
    assert "def " in compiled.as_text() and compiled.source in compiled.as_text()


def test_stand_ins_are_accepted():
    class Spec:  # anything with .shape and .dtype, as JAX accepts
        shape, dtype = (4, 3), np.dtype(np.float32)

    jf = funcgrad.jit(loss)
    for x in (ShapeDtypeStruct((4, 3), np.float32), ShapedArray((4, 3), np.float32), Spec()):
        lowered = jf.lower(ShapeDtypeStruct((3, 2), np.float32), x)
        assert lowered.out_info == ShapeDtypeStruct((), np.float32)
        assert [a.shape for a in lowered.in_avals[0]] == [(3, 2), (4, 3)]
        out = lowered.compile()(dev(np.ones((3, 2), np.float32)), dev(np.ones((4, 3), np.float32)))
        assert host(out).dtype == np.float32


def test_in_info_out_info_and_trees():
    def f(d, s):
        return {"y": d["a"] * s, "z": (d["b"].sum(),)}

    lowered = funcgrad.jit(f).lower({"a": np.ones(2), "b": np.ones((2, 2), np.int32)}, 2.0)
    assert lowered.out_info == {"y": ShapeDtypeStruct((2,), np.float64),
                                "z": (ShapeDtypeStruct((), np.int64),)}
    (args, kwargs) = lowered.in_info
    assert args[0]["b"] == ShapeDtypeStruct((2, 2), np.int32) and kwargs == {}
    assert args[1] == ShapeDtypeStruct((), np.float64, weak_type=True)
    assert lowered.in_tree.num_leaves == 3 and lowered.out_tree.num_leaves == 2


def test_trace_stage():
    traced = funcgrad.jit(lambda x: fnp.cos(x)).trace(ShapeDtypeStruct((3,), np.float32))
    assert isinstance(traced, Traced) and traced.fun_name == "<lambda>"
    assert "cos" in str(traced.jaxpr)
    assert traced.out_info == ShapeDtypeStruct((3,), np.float32)
    assert host(traced.lower().compile()(dev(np.zeros(3, np.float32)))).tolist() == [1.0] * 3


def test_mismatched_call_names_each_argument():
    i32 = ShapeDtypeStruct((), np.int32)
    compiled = funcgrad.jit(lambda x, y: 2 * x + y).lower(i32, i32).compile()
    assert int(host(compiled(3, 4))) == 10  # Python ints fit int32 arguments
    with pytest.raises(TypeError) as e:
        compiled(dev(np.arange(3)), dev(np.float32(1.0)))
    msg = str(e.value)
    assert "argument x: lowered for i32[], called with i64[3]" in msg
    assert "argument y: lowered for i32[], called with f32[]" in msg
    with pytest.raises(TypeError, match="argument x: lowered for i32.*Python float"):
        compiled(2.5, 1)
    with pytest.raises(TypeError, match="structure"):
        compiled(1)
    with pytest.raises(TypeError, match="ShapeDtypeStruct"):
        compiled(i32, i32)


def test_static_arguments_are_baked_in():
    def f(x, n, *, mode):
        return x ** n if mode == "pow" else x * n

    jf = funcgrad.jit(f, static_argnums=1, static_argnames="mode")
    lowered = jf.lower(ShapeDtypeStruct((2,), np.float64), 3, mode="pow")
    assert "integer_pow" in lowered.as_text() or "pow" in lowered.as_text()
    compiled = lowered.compile()
    assert host(compiled(dev(np.full(2, 2.0)))).tolist() == [8.0, 8.0]
    with pytest.raises(TypeError, match="structure"):
        compiled(dev(np.full(2, 2.0)), 3)  # static arguments are not passed again


def test_donated_argument_is_reused():
    step = funcgrad.jit(lambda x, g: x - 0.1 * g, donate_argnums=0)
    compiled = step.lower(ShapeDtypeStruct((10_000,), np.float64),
                          ShapeDtypeStruct((10_000,), np.float64)).compile()
    assert compiled.donated_invars == (True, False)
    x, g = dev(np.ones(10_000)), dev(np.full(10_000, 2.0))
    new = compiled(x, g)
    assert float(host(new)[0]) == 0.8
    if isinstance(x, np.ndarray):  # (the strict test device keeps its buffers private)
        assert np.shares_memory(new, x)


def test_compiled_composes_with_transformations():
    compiled = funcgrad.jit(lambda x: fnp.sin(x) * x).lower(ShapeDtypeStruct((3,),
                                                                             np.float64)).compile()
    x = dev(np.linspace(0.1, 1.0, 3))
    gx = funcgrad.grad(lambda v: compiled(v).sum())(x)
    assert_close(host(gx), np.cos(host(x)) * host(x) + np.sin(host(x)))
    batched = funcgrad.vmap(compiled)(dev(np.stack([host(x)] * 2)))
    assert_close(host(batched), np.stack([np.sin(host(x)) * host(x)] * 2))
    assert_close(host(funcgrad.jit(compiled)(x)), np.sin(host(x)) * host(x))


def test_jitted_call_refuses_stand_ins():
    with pytest.raises(TypeError, match="ShapeDtypeStruct, a stand-in"):
        funcgrad.jit(fnp.sin)(ShapeDtypeStruct((2,), np.float64))


def test_lower_closing_over_outer_tracer_is_refused():
    def outer(y):
        funcgrad.jit(lambda x: x * y).lower(np.ones(2))
        return y

    with pytest.raises(TypeError, match="closes over values traced"):
        funcgrad.grad(outer)(1.0)


def test_shape_dtype_struct():
    s = ShapeDtypeStruct([2, 3], "float32")
    assert s.shape == (2, 3) and s.dtype == np.float32 and s.ndim == 2 and s.size == 6
    assert len(s) == 2 and s == ShapeDtypeStruct((2, 3), np.float32) and hash(s) == hash(
        ShapeDtypeStruct((2, 3), np.float32))
    assert s != ShapeDtypeStruct((2, 3), np.float32, weak_type=True)
    assert repr(ShapeDtypeStruct(3, np.int8)) == "ShapeDtypeStruct(shape=(3,), dtype=int8)"
    with pytest.raises(ValueError, match="negative"):
        ShapeDtypeStruct((-1,), np.float32)
    with pytest.raises(funcgrad.DTypeError):
        ShapeDtypeStruct((1,), object)
    out = funcgrad.eval_shape(lambda x: x.sum(0), s)
    assert (out.shape, out.dtype) == ((3,), np.float32)


def test_make_jaxpr_return_shape():
    def f(x, y):
        return {"a": x @ y, "b": [x.sum(), 2 * x]}

    closed, shape = funcgrad.make_jaxpr(f, return_shape=True)(
        ShapeDtypeStruct((2, 3), np.float32), dev(np.ones((3, 4), np.float32)))
    assert isinstance(closed, ClosedJaxpr)
    assert shape == {"a": ShapeDtypeStruct((2, 4), np.float32),
                     "b": [ShapeDtypeStruct((), np.float32),
                           ShapeDtypeStruct((2, 3), np.float32)]}
    _, weak = funcgrad.make_jaxpr(lambda s: s, return_shape=True)(1.0)
    assert weak == ShapeDtypeStruct((), np.float64, weak_type=True)
    plain = funcgrad.make_jaxpr(f)(ShapedArray((2, 3), np.float32),
                                   dev(np.ones((3, 4), np.float32)))
    assert str(plain) == str(closed)


def test_arg_labels_name_each_leaf():
    def f(x, y, *rest, **kw):
        return x

    j = funcgrad.jit(f)
    assert j.trace(1.0, np.ones(2), np.float32(3), 4).arg_labels == ("x", "y", "args[2]",
                                                                       "args[3]")
    assert j.trace(1.0, (np.ones(2), 2.0), z=np.ones(1)).arg_labels == ("x", "y[0]", "y[1]",
                                                                         "z")
    s = funcgrad.jit(f, static_argnums=1)
    assert s.trace(1.0, 2, 3.0).arg_labels == ("x", "args[2]")


def test_stage_trees_and_arg_info_are_jaxs():
    # As JAX 0.10.2: in_tree is that of (args_tuple, kwargs); in_avals/args_info are pytrees
    # of that structure; donate_argnums counts non-static positional arguments.
    x = np.ones(3, np.float32)
    lowered = funcgrad.jit(lambda x, y, n=2: {"s": fnp.sin(x) * n + y["a"]}).lower(x, {"a": x})
    for stage in (lowered.compile(), lowered):
        assert repr(stage.in_tree) == "PyTreeDef(((*, {'a': *}), {}))"
        assert stage.in_tree == funcgrad.tree_util.tree_structure(((0, {"a": 0}), {}))
        args, kwargs = stage.in_avals
        assert kwargs == {} and args[1]["a"].str_short() == "f32[3]"
        assert funcgrad.tree_util.tree_map(lambda a: a.str_short(), stage.out_avals) == {
            "s": "f32[3]"}
        info = stage.args_info[0][1]["a"]
        assert isinstance(info, ArgInfo) and info.shape == (3,) and info.dtype == np.float32
        assert info.donated is False and stage.donate_argnums == ()
    jf = funcgrad.jit(lambda x, n, y: x * n + y, donate_argnums=2, static_argnums=1)
    lowered = jf.lower(x, 2, x)
    assert lowered.donate_argnums == (1,) and lowered.compile().donate_argnums == (1,)
    assert [a.donated for a in lowered.args_info[0]] == [False, True]
    traced = funcgrad.jit(lambda a: (a, a.sum())).trace(x)
    assert [a.str_short() for a in traced.out_avals] == ["f32[3]", "f32[]"]


def test_stage_options_jax_passes_are_accepted():
    x = dev(np.ones(2))
    traced = funcgrad.jit(lambda a: a * 2).trace(x)
    platform = funcgrad.typeof(x).device.split(":")[0]  # "cpu" (or the test device)
    lowered = traced.lower(lowering_platforms=(platform,))
    assert "mul" in lowered.as_text(debug_info=True)
    assert host(lowered.compile(compiler_options={})(x)).tolist() == [2.0, 2.0]
    with pytest.raises(ValueError, match="compiler takes no options"):
        lowered.compile(compiler_options={"xla_cpu_enable_fast_math": True})
    with pytest.raises(ValueError, match="runs on the platform of its arguments"):
        traced.lower(lowering_platforms=("tpu",))


def test_compiled_called_with_a_stand_in_is_a_clear_error():
    compiled = funcgrad.jit(lambda a: a + 1).lower(ShapeDtypeStruct((2,), np.int32)).compile()
    with pytest.raises(TypeError, match="argument a: lowered for i32\\[2\\], called with a "
                                        "ShapeDtypeStruct \\(a stand-in"):
        compiled(ShapeDtypeStruct((2,), np.int32))


def test_compiled_call_method():
    compiled = funcgrad.jit(lambda a: a * 2).lower(np.ones(2)).compile()
    assert compiled.call(np.ones(2)).tolist() == [2.0, 2.0]


def test_memory_analysis_sizes():
    # jax.jit(f).lower(...).compile().memory_analysis(): the same argument/output sizes
    # (JAX's temp size is XLA's fused buffers: 6416 for this program; ours is unfused)
    f = funcgrad.jit(lambda x, y: fnp.sin(x @ y).sum())
    m = f.lower(np.ones((20, 30)), np.ones((30, 40))).compile().memory_analysis()
    assert (m.argument_size_in_bytes, m.output_size_in_bytes, m.alias_size_in_bytes) == (
        14400, 8, 0)
    assert m.temp_size_in_bytes == 2 * 20 * 40 * 8  # x @ y and its sine, alive together
    assert m.host_temp_size_in_bytes == 0 and m.generated_code_size_in_bytes > 0
    assert m.peak_memory_in_bytes == 14400 + 8 + m.temp_size_in_bytes
    d = funcgrad.jit(lambda x: x * 2 + 1, donate_argnums=0).lower(np.ones((20, 30))).compile()
    assert d.memory_analysis().alias_size_in_bytes == 4800


def test_wrapped_protocol():
    # isinstance(jax.jit(f), jax.stages.Wrapped) is True; a plain function is not one
    from funcgrad.stages import CompilerOptions, Wrapped

    assert isinstance(funcgrad.jit(lambda x: x), Wrapped)
    assert not isinstance(lambda x: x, Wrapped)
    assert CompilerOptions == dict[str, str | bool]


def test_compiled_input_and_output_shardings_are_single_device() -> None:
    # JAX: ((SingleDeviceSharding(device=CpuDevice(id=0)),), {'b': ...}) and the outputs' tree
    from funcgrad.sharding import SingleDeviceSharding

    c = funcgrad.jit(lambda a, b: {"o": a * b, "p": a}).lower(dev(np.ones(2)), b=2.0).compile()
    one = SingleDeviceSharding(funcgrad.backend.get_default_device())
    ins, outs = c.input_shardings, c.output_shardings
    assert ins == ((one,), {"b": one}) and outs == {"o": one, "p": one}


def test_typed_key_stand_ins_as_jax():
    # JAX 0.10.2: ShapeDtypeStruct((), random.key(0).dtype) is a key stand-in; eval_shape,
    # lower/trace and make_jaxpr trace it as keys, and key results are key-dtype stand-ins.
    kd = funcgrad.random.key(0).dtype
    k = ShapeDtypeStruct((), kd)
    assert repr(k) == "ShapeDtypeStruct(shape=(), dtype=key<fry>)"
    assert funcgrad.eval_shape(lambda a: funcgrad.random.normal(a, (3,)), k) == \
        ShapeDtypeStruct((3,), np.float64)
    assert funcgrad.eval_shape(lambda a: funcgrad.random.split(a), k) == ShapeDtypeStruct((2,), kd)
    assert funcgrad.eval_shape(funcgrad.vmap(lambda a: funcgrad.random.uniform(a, (2,))),
                               ShapeDtypeStruct((4,), kd)) == ShapeDtypeStruct((4, 2), np.float64)
    assert funcgrad.eval_shape(lambda: funcgrad.random.key(1)) == k
    lowered = funcgrad.jit(lambda a: (funcgrad.random.split(a, 3), a)).lower(k)
    assert lowered.out_info == (ShapeDtypeStruct((3,), kd), k)
    assert lowered.in_info == ((k,), {})
    new, old = lowered.compile()(funcgrad.random.key(0))
    assert new.shape == (3,) and new.dtype == kd
    _, shape = funcgrad.make_jaxpr(lambda a: funcgrad.random.normal(a, (2,)),
                                   return_shape=True)(k)
    assert shape == ShapeDtypeStruct((2,), np.float64)
    rbg = funcgrad.random.key(0, impl="rbg").dtype
    assert funcgrad.eval_shape(funcgrad.random.split, ShapeDtypeStruct((), rbg)) == \
        ShapeDtypeStruct((2,), rbg)


def test_compiled_formats_and_layouts_as_jax():
    # JAX 0.10.2 on CPU: input_formats ((Format(layout=Layout(major_to_minor=(0, 1), tiling=(),
    # sub_byte_element_size_in_bits=0), sharding=SingleDeviceSharding(...)),), {'y': ...});
    # output_formats the results' tree.
    from funcgrad.experimental.layout import Format, Layout
    from funcgrad.sharding import SingleDeviceSharding

    c = funcgrad.jit(lambda x, y: (x, y.sum())).lower(
        ShapeDtypeStruct((2, 3), np.float64), y=ShapeDtypeStruct((3,), np.float32)).compile()
    sd = c.input_shardings[0][0]
    assert isinstance(sd, SingleDeviceSharding)
    assert c.input_formats == ((Format(Layout((0, 1), ()), sd),), {"y": Format(Layout((0,), ()), sd)})
    assert c.output_formats == (Format(Layout((0, 1), ()), sd), Format(Layout((), ()), sd))
    assert repr(c.output_formats[1].layout) == \
        "Layout(major_to_minor=(), tiling=(), sub_byte_element_size_in_bits=0)"
    with pytest.raises(ValueError, match="Sharding has to be concrete"):
        Format(Layout((0,)))
    # ShapeDtypeStruct(sharding=Format(...)) keeps the layout (.format), as JAX's
    s = ShapeDtypeStruct((2, 3), np.float32, sharding=Format(Layout((1, 0)), sd))
    assert s.sharding == sd and s.format == Format(Layout((1, 0)), sd)
    assert ShapeDtypeStruct((2,), np.float32).format == Format()
    with pytest.raises(TypeError, match="Layout.AUTO"):
        ShapeDtypeStruct((2,), np.float32, sharding=Format(Layout.AUTO, sd))
    with pytest.raises(ValueError, match="rank"):
        ShapeDtypeStruct((2, 3), np.float32, sharding=Format(Layout((0,)), sd))
    # JAX 0.10.2's keywords: weak_type, manual_axis_type=None, is_ref=False
    assert ShapeDtypeStruct((), np.float32, weak_type=True, manual_axis_type=None,
                            is_ref=False).weak_type
    with pytest.raises(TypeError, match="mutable array reference"):
        ShapeDtypeStruct((), np.float32, is_ref=True)
    s = ShapeDtypeStruct((), np.float32)
    assert s.is_ref is False and s.manual_axis_type is None
    with pytest.raises(ValueError, match="dtype must be specified"):
        ShapeDtypeStruct((2,), None)


def test_copy_to_host_async_returns_its_input_and_starts_copies():
    # jax.copy_to_host_async(tree) calls each leaf's copy_to_host_async and returns tree
    started = []

    class Leaf:
        def copy_to_host_async(self):
            started.append(self)

    leaf, x = Leaf(), dev(np.ones(2))
    tree = {"a": x, "b": [leaf, 1.0]}
    assert funcgrad.copy_to_host_async(tree) is tree and started == [leaf]


def test_compiled_reports_the_shardings_jit_and_stand_ins_ask_for():
    # JAX 0.10.2: jit(f, in_shardings=s, out_shardings=s).lower(x).compile() reports s for
    # both, as does a ShapeDtypeStruct(..., sharding=s) stand-in; unasked leaves are the
    # device's (SingleDeviceSharding here)
    from funcgrad.sharding import NamedSharding, PartitionSpec, SingleDeviceSharding

    mesh = funcgrad.make_mesh((1,), ("x",))
    s = NamedSharding(mesh, PartitionSpec("x"))
    c = funcgrad.jit(lambda a, b: a * b, in_shardings=(s, None),
                     out_shardings=s).lower(np.ones(4), 2.0).compile()
    (a_s, b_s), kw = c.input_shardings
    assert a_s is s and isinstance(b_s, SingleDeviceSharding) and kw == {}
    assert c.output_shardings is s
    sds = funcgrad.ShapeDtypeStruct((8,), np.float32, sharding=s)
    c = funcgrad.jit(lambda a: a * 2).lower(sds).compile()
    assert c.input_shardings[0][0] is s
    assert isinstance(c.output_shardings, SingleDeviceSharding)
    with funcgrad.set_mesh(mesh):
        c = funcgrad.jit(lambda a: (a, a), out_shardings=(PartitionSpec("x"), None)
                         ).lower(np.ones(4)).compile()
        assert c.output_shardings[0] == NamedSharding(mesh, PartitionSpec("x"))
    with pytest.raises(ValueError, match="in_shardings must be a sharding or a pytree prefix"):
        funcgrad.jit(lambda a: a, in_shardings=(s, s)).lower(np.ones(4))


def test_out_info_and_eval_shape_carry_the_asked_shardings():
    # JAX 0.10.2: jit(f, out_shardings=...).trace(sds).out_info and eval_shape of that jit
    # give ShapeDtypeStructs with the asked sharding (the abstract sharded state of checkpoint
    # restoring); a stand-in's sharding shows in in_info
    from funcgrad.sharding import NamedSharding, PartitionSpec

    s = NamedSharding(funcgrad.make_mesh((1,), ("x",)), PartitionSpec("x"))
    sds = funcgrad.ShapeDtypeStruct((4, 3), np.float32, sharding=s)
    f = funcgrad.jit(lambda a, b: (a * 2, b), out_shardings=(s, None))
    traced = f.trace(sds, np.ones(2))
    (o1, o2) = traced.out_info
    assert o1.sharding is s and o1.shape == (4, 3) and o2.sharding is None
    assert traced.in_info[0][0].sharding is s and traced.lower().out_info[0].sharding is s
    out = funcgrad.eval_shape(funcgrad.jit(lambda a: {"u": a, "v": a.sum()},
                                           out_shardings={"u": s, "v": None}), sds)
    assert out["u"].sharding is s and out["v"].sharding is None and out["v"].shape == ()
