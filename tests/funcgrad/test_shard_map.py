"""funcgrad.shard_map and funcgrad.sharding against JAX 0.10.2.

The expected values are JAX's, recorded as literals from runs with
``XLA_FLAGS=--xla_force_host_platform_device_count=4`` on a ``Mesh`` of shape (2, 2) named
("x", "y"); funcgrad builds the same mesh by listing its one device four times.
"""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.sharding import (
    AxisType,
    Mesh,
    NamedSharding,
    SingleDeviceSharding,
    get_mesh,
    make_mesh,
    reshard,
    set_mesh,
    use_mesh,
)
from funcgrad.sharding import PartitionSpec as P
from tests.helpers import dev
from tests.helpers import host as to_host


def _mesh(*shape: int, names=("x", "y")) -> Mesh:
    dev = funcgrad.local_devices()[0]
    return Mesh(np.array([dev] * int(np.prod(shape)), dtype=object).reshape(shape),
                names[:len(shape)])


X = np.arange(16.0).reshape(4, 4)
XD = dev(X)


def test_blocks_see_their_axis_indices():
    mesh = _mesh(2, 2)
    f = funcgrad.shard_map(lambda a: a * lax.axis_index("x") + 10 * lax.axis_index("y"),
                           mesh=mesh, in_specs=P("x", "y"), out_specs=P("x", "y"))
    expected = [[0.0, 0.0, 10.0, 10.0], [0.0, 0.0, 10.0, 10.0],
                [8.0, 9.0, 20.0, 21.0], [12.0, 13.0, 24.0, 25.0]]
    np.testing.assert_array_equal(to_host(f(XD)), expected)
    np.testing.assert_array_equal(to_host(funcgrad.jit(f)(XD)), expected)


def test_psum_over_both_axes_is_replicated():
    g = funcgrad.shard_map(lambda a: lax.psum(a.sum(), ("x", "y")), mesh=_mesh(2, 2),
                           in_specs=P("x", "y"), out_specs=P())
    assert float(to_host(g(XD))) == 120.0


def test_tuple_of_axes_major_first_in_and_out():
    h = funcgrad.shard_map(
        lambda a: a + 100 * lax.axis_index("x") + 10 * lax.axis_index("y"), mesh=_mesh(2, 2),
        in_specs=P(("x", "y")), out_specs=P(("y", "x")))
    np.testing.assert_array_equal(to_host(h(dev(np.arange(8.0)))),
                                  [0.0, 1.0, 104.0, 105.0, 12.0, 13.0, 116.0, 117.0])


def test_pytree_specs_are_prefixes():
    d = funcgrad.shard_map(
        lambda p, b: {"s": p["w"] * lax.psum(b.sum(), "x") + lax.axis_index("y"),
                      "t": lax.psum(b, "x")},
        mesh=_mesh(2, 2), in_specs=({"w": P()}, P("x", "y")),
        out_specs={"s": P("y"), "t": P(None, "y")})
    out = d({"w": dev(np.array([1.0, 2.0]))}, XD)
    np.testing.assert_array_equal(to_host(out["s"]), [52.0, 104.0, 69.0, 137.0])
    np.testing.assert_array_equal(to_host(out["t"]),
                                  [[8.0, 10.0, 12.0, 14.0], [16.0, 18.0, 20.0, 22.0]])


def test_collectives_inside():
    mesh = _mesh(2, 2)
    ps = funcgrad.shard_map(lambda a: lax.psum_scatter(a, "x", tiled=True), mesh=mesh,
                            in_specs=P(None), out_specs=P("x"), check_vma=False)
    np.testing.assert_array_equal(to_host(ps(dev(np.arange(4.0)))), [0.0, 2.0, 4.0, 6.0])
    ag = funcgrad.shard_map(lambda a: lax.all_gather(a, "x", tiled=True) * 2, mesh=mesh,
                            in_specs=P("x"), out_specs=P(), check_vma=False)
    np.testing.assert_array_equal(to_host(ag(dev(np.arange(4.0)))), [0.0, 2.0, 4.0, 6.0])


def test_grad_through_shard_map_under_jit():
    mesh = _mesh(2, 2)

    def loss(v):
        return funcgrad.shard_map(lambda a: lax.pmean(fnp.sin(a).sum(), ("x", "y")),
                                  mesh=mesh, in_specs=P(("x", "y")), out_specs=P())(v)

    expected = [0.25, 0.13507556915283203, -0.10403671115636826, -0.24749812483787537,
                -0.16341090202331543, 0.07091554999351501, 0.2400425672531128,
                0.1884755641222]  # JAX computes in float32
    np.testing.assert_allclose(to_host(funcgrad.jit(funcgrad.grad(loss))(np.arange(8.0))),
                               expected, rtol=1e-6)
    # and it is the cosine over the count of shards' elements, as the plain function's
    np.testing.assert_allclose(to_host(funcgrad.grad(loss)(np.arange(8.0))),
                               np.cos(np.arange(8.0)) / 4)


def test_vmap_of_shard_map():
    f = funcgrad.shard_map(lambda a: a * lax.axis_index("x"), mesh=_mesh(2, 2),
                           in_specs=P("x"), out_specs=P("x"))
    np.testing.assert_array_equal(
        to_host(funcgrad.vmap(f)(XD)),
        [[0.0, 0.0, 2.0, 3.0], [0.0, 0.0, 6.0, 7.0], [0.0, 0.0, 10.0, 11.0],
         [0.0, 0.0, 14.0, 15.0]])


def test_axis_names_maps_a_subset():
    sub = funcgrad.shard_map(lambda a: a.sum(0, keepdims=True), mesh=_mesh(2, 2),
                             in_specs=P("x"), out_specs=P("x"), axis_names={"x"})
    np.testing.assert_array_equal(to_host(sub(XD)),
                                  [[4.0, 6.0, 8.0, 10.0], [20.0, 22.0, 24.0, 26.0]])


def test_unchecked_replication_returns_the_first_shard():
    f = funcgrad.shard_map(lambda a: a + lax.axis_index("x"), mesh=_mesh(2, 2),
                           in_specs=P("x"), out_specs=P(), check_vma=False)
    np.testing.assert_array_equal(to_host(f(XD)), X[:2])


def test_replicated_output_may_be_tiled():
    # an output the same on every shard, under a spec that splits it: each block is it
    f = funcgrad.shard_map(lambda a: lax.psum(a, "x"), mesh=_mesh(2), in_specs=P("x"),
                           out_specs=P("x"))
    np.testing.assert_array_equal(to_host(f(dev(np.arange(4.0)))), [2.0, 4.0, 2.0, 4.0])


@pytest.mark.parametrize("kwargs, arg, message", [
    (dict(in_specs=P("x"), out_specs=P("x")), np.arange(3.0), "divisible"),
    (dict(in_specs=P("x", "x"), out_specs=P("x")), X, "more than one dimension"),
    (dict(in_specs=P("z"), out_specs=P("x")), X, "'z'"),
    (dict(in_specs=P("x", None, None), out_specs=P("x")), X, "rank 2"),
    (dict(in_specs=P("x"), out_specs=P("x")), X, "varies along 'y'"),
    (dict(in_specs=P("x"), out_specs=P()), X, "must be the same on every shard"),
])
def test_errors(kwargs, arg, message):
    f = funcgrad.shard_map(lambda a: a + lax.axis_index("y"), mesh=_mesh(2, 2), **kwargs)
    with pytest.raises(ValueError, match=message):
        f(dev(arg))


def test_mesh_from_context():
    f = funcgrad.shard_map(lambda a: lax.psum(a, "x"), in_specs=P("x"), out_specs=P())
    with pytest.raises(ValueError, match="no mesh"):
        f(np.ones(2))
    with set_mesh(_mesh(2)):
        assert float(to_host(f(np.ones(2)))[0]) == 2.0
        assert get_mesh().axis_names == ("x",)
    assert get_mesh() is None
    with use_mesh(_mesh(2)), _mesh(2, 2):  # a Mesh is a context manager too
        assert get_mesh().axis_names == ("x", "y")
    assert get_mesh() is None


def test_decorator_form():
    @funcgrad.shard_map(mesh=_mesh(2), in_specs=P("x"), out_specs=P("x"))
    def double(a):
        return 2 * a

    np.testing.assert_array_equal(to_host(double(dev(np.arange(4.0)))), [0.0, 2.0, 4.0, 6.0])


# -- funcgrad.sharding ------------------------------------------------------------------------


def test_partition_spec_is_jax_like():
    assert repr(P("x", None, ("a", "b"))) == "P('x', None, ('a', 'b'))"
    assert repr(P()) == "P()" and repr(P("x")) == "P('x',)"
    assert len(P("x", None)) == 2 and P("x") == P("x")
    assert P("x", None) != P("x") and P("x") != ("x",)
    assert funcgrad.tree_util.tree_leaves([P("x")]) == [P("x")]  # a leaf, as JAX's
    with pytest.raises(TypeError, match="PartitionSpec entries"):
        P(0)


def test_named_sharding():
    mesh = _mesh(2, 2)
    s = NamedSharding(mesh, P("x"))
    assert s.shard_shape((4, 4)) == (2, 4)
    assert not s.is_fully_replicated and s.num_devices == 4
    assert NamedSharding(mesh, P()).is_fully_replicated
    assert s == NamedSharding(mesh, P("x")) and hash(s) == hash(NamedSharding(mesh, P("x")))
    assert repr(s).startswith("NamedSharding(mesh=Mesh('x': 2, 'y': 2, axis_types=(Auto, Auto))"
                              ", spec=P('x',)")
    with pytest.raises(ValueError, match="does not have"):
        NamedSharding(mesh, P("z"))
    with pytest.raises(ValueError, match="size is 3"):
        s.shard_shape((3, 4))


def test_device_put_checks_the_layout():
    mesh = _mesh(2)
    y = funcgrad.device_put(X, NamedSharding(mesh, P("x")))
    np.testing.assert_array_equal(to_host(y), X)
    tree = funcgrad.device_put({"a": X, "b": np.ones(3)},
                               {"a": NamedSharding(mesh, P("x")),
                                "b": SingleDeviceSharding(funcgrad.local_devices()[0])})
    np.testing.assert_array_equal(to_host(tree["b"]), np.ones(3))
    with pytest.raises(ValueError, match="size is 3"):
        funcgrad.device_put(np.ones(3), NamedSharding(mesh, P("x")))
    with pytest.raises(ValueError, match="needs a mesh"):
        funcgrad.device_put(X, P("x"))
    with set_mesh(mesh):
        np.testing.assert_array_equal(to_host(funcgrad.device_put(X, P("x"))), X)
        np.testing.assert_array_equal(reshard(X, P(None, "x")), X)


def test_make_mesh_follows_jax():
    n = funcgrad.device_count()
    mesh = make_mesh((n,), ("data",))
    assert mesh.axis_types == (AxisType.Explicit,) and mesh.size == n
    # JAX 0.10.2's repr and str (NamedSharding's repr shows the str)
    assert repr(make_mesh((1, 1), ("a", "b"))) == (
        "Mesh(axis_sizes=(1, 1), axis_names=('a', 'b'), axis_types=(Explicit, Explicit))")
    assert str(make_mesh((1, 1), ("a", "b"))) == (
        "Mesh('a': 1, 'b': 1, axis_types=(Explicit, Explicit))")
    assert repr(funcgrad.sharding.NamedSharding(make_mesh((1,), ("x",)), P("x"))) == (
        "NamedSharding(mesh=Mesh('x': 1, axis_types=(Explicit,)), spec=P('x',), "
        "memory_kind=device)")
    with pytest.raises(ValueError, match="needs 2 devices"):
        make_mesh((2,), ("x",))
    with pytest.raises(ValueError, match="rank"):
        Mesh(np.array(["cpu"] * 2), ("x", "y"))


def test_jit_accepts_shardings():
    mesh = _mesh(2)
    f = funcgrad.jit(lambda a: a * 2, in_shardings=NamedSharding(mesh, P("x")),
                     out_shardings=NamedSharding(mesh, P()))
    np.testing.assert_array_equal(to_host(f(dev(np.arange(2.0)))), [0.0, 2.0])


def test_pcast_and_pbroadcast():
    mesh = _mesh(2)
    # JAX 0.10.2: [0, 1, 0, 1] (a replicated input marked varying, each block the whole)
    f = funcgrad.shard_map(lambda a: lax.pcast(a, "x", to="varying"), mesh=mesh,
                           in_specs=P(), out_specs=P("x"))
    np.testing.assert_array_equal(to_host(f(dev(np.arange(2.0)))), [0.0, 1.0, 0.0, 1.0])
    with pytest.raises(ValueError, match="to must be"):
        funcgrad.vmap(lambda a: lax.pcast(a, "x", to="invariant"), axis_name="x")(np.ones(2))
    # pbroadcast: JAX's documented equivalent, psum(where(axis_index == source, x, 0))
    g = funcgrad.shard_map(lambda a: lax.pbroadcast(a, "x", 1), mesh=mesh, in_specs=P("x"),
                           out_specs=P("x"))
    x = dev(np.array([0.0, np.nan, 2.0, 3.0]))
    np.testing.assert_array_equal(to_host(g(x)), [2.0, 3.0, 2.0, 3.0])  # the NaN stays home
    np.testing.assert_array_equal(
        to_host(funcgrad.grad(lambda v: g(v).sum())(dev(np.arange(4.0)))), [0.0, 0.0, 2.0, 2.0])
    with pytest.raises(ValueError, match="source must be"):
        funcgrad.vmap(lambda a: lax.pbroadcast(a, "x", 2), axis_name="x")(np.ones(2))


def test_make_array_from_callback_calls_per_device_as_jax():
    mesh = _mesh(2, 2)
    calls = []
    a = funcgrad.make_array_from_callback((4, 4), NamedSharding(mesh, P("x")),
                                          lambda idx: (calls.append(idx), X[idx])[1])
    np.testing.assert_array_equal(to_host(a), X)
    full = slice(None, None, None)
    assert calls == [(slice(0, 2), full), (slice(0, 2), full), (slice(2, 4), full),
                     (slice(2, 4), full)]  # JAX 0.10.2's indices, in device order
    # a dimension split over two axes: the first the most major
    b = funcgrad.make_array_from_single_device_arrays(
        (8,), NamedSharding(mesh, P(("y", "x"))),
        [np.full(2, float(k)) for k in range(4)])  # devices (x, y) = 00, 01, 10, 11
    np.testing.assert_array_equal(to_host(b), [0, 0, 2, 2, 1, 1, 3, 3])
    with pytest.raises(ValueError, match="block for device 0 has shape"):
        funcgrad.make_array_from_callback((4, 4), NamedSharding(mesh, P("x")), lambda i: X)
    c = funcgrad.make_array_from_process_local_data(NamedSharding(mesh, P("x")), X)
    np.testing.assert_array_equal(to_host(c), X)
    with pytest.raises(ValueError, match="global_shape"):
        funcgrad.make_array_from_process_local_data(NamedSharding(mesh, P("x")), X, (8, 4))


def test_mesh_utils_pjit_and_environment():
    from funcgrad.experimental import mesh_utils
    from funcgrad.experimental.pjit import pjit

    devs = mesh_utils.create_device_mesh((funcgrad.device_count(),))
    assert devs.shape == (1,) and list(devs.flat) == funcgrad.local_devices()
    assert Mesh(mesh_utils.create_device_mesh((2, 2), ["cpu"] * 4), ("x", "y")).size == 4
    with pytest.raises(ValueError, match="product is 2"):
        mesh_utils.create_device_mesh((2,))
    f = pjit(lambda a: a * 2, in_shardings=NamedSharding(_mesh(2), P("x")), static_argnums=())
    np.testing.assert_array_equal(to_host(f(dev(np.arange(2.0)))), [0.0, 2.0])
    funcgrad.effects_barrier()
    info = funcgrad.print_environment_info(return_string=True)
    assert "numpy:" in info and "devices:" in info


# -- gradients inside the body: JAX's typed (check_vma=True) rules ---------------------------

# JAX 0.10.2's results of tests/funcgrad/shard_map_grad_cases.py (its __main__ prints them).
SHARD_MAP_GRADS_JAX = {
    ('varying_loss', True):
        [[4.97849548, 4.94980862], [4.97849548, 4.94980862], [4.97849548, 4.94980862],
        [4.97849548, 4.94980862]],
    ('varying_loss_plus_invariant', True):
        [[20.0, 32.0], [20.0, 32.0], [20.0, 32.0], [20.0, 32.0]],
    ('psum_loss', True):
        [[14.0, 20.0], [14.0, 20.0], [14.0, 20.0], [14.0, 20.0]],
    ('pmean_loss', True):
        [[1.24462387, 1.23745215], [1.24462387, 1.23745215], [1.24462387, 1.23745215],
        [1.24462387, 1.23745215]],
    ('wrt_varying_psum_loss', True):
        [[1.0, 2.0], [1.0, 2.0], [1.0, 2.0], [1.0, 2.0]],
    ('wrt_varying_varying_loss', True):
        [[24.0, 32.0], [24.0, 32.0], [24.0, 32.0], [24.0, 32.0]],
    ('invariant_only', True):
        [[3.0, 12.0], [3.0, 12.0], [3.0, 12.0], [3.0, 12.0]],
    ('all_gather', True):
        [[0.0, 8.0], [16.0, 24.0], [32.0, 40.0], [48.0, 56.0]],
    ('all_gather_of_w', True):
        [[112.0, 112.0], [112.0, 112.0], [112.0, 112.0], [112.0, 112.0]],
    ('ppermute', True):
        [[112.0, 336.0], [112.0, 336.0], [112.0, 336.0], [112.0, 336.0]],
    ('psum_scatter', True):
        [[800.0, 1600.0], [800.0, 1600.0], [800.0, 1600.0], [800.0, 1600.0]],
    ('vjp_of_psum', True):
        [[12.0, 16.0], [12.0, 16.0], [12.0, 16.0], [12.0, 16.0]],
    ('vjp_varying_ct', True):
        [[56.0, 68.0], [56.0, 68.0], [56.0, 68.0], [56.0, 68.0]],
    ('jvp', True):
        [1.0, 5.0, 9.0, 13.0],
    ('value_and_grad', True):
        [[4.97849548, 4.94980862], [4.97849548, 4.94980862], [4.97849548, 4.94980862],
        [4.97849548, 4.94980862]],
    ('argnums_both', True):
        [[4.97849548, 4.94980862, -0.7568025, -1.51360499], [4.97849548, 4.94980862, -0.28790332,
        -0.57580663], [4.97849548, 4.94980862, 0.27090579, 0.54181158], [4.97849548, 4.94980862,
        0.74511316, 1.49022632]],
    ('jacrev', True):
        [[[2.70444118, 2.68761359]], [[2.70444118, 2.68761359]], [[2.70444118, 2.68761359]],
        [[2.70444118, 2.68761359]]],
    ('hessian', True):
        [[[-86.484204, -106.0189456], [-106.0189456, -132.03538125]], [[-86.484204, -106.0189456],
        [-106.0189456, -132.03538125]], [[-86.484204, -106.0189456], [-106.0189456,
        -132.03538125]], [[-86.484204, -106.0189456], [-106.0189456, -132.03538125]]],
    ('grad_of_grad', True):
        [[-1910.66941942, -2362.72941983], [-1910.66941942, -2362.72941983], [-1910.66941942,
        -2362.72941983], [-1910.66941942, -2362.72941983]],
    ('jit_in_body', True):
        [[4.97849548, 4.94980862], [4.97849548, 4.94980862], [4.97849548, 4.94980862],
        [4.97849548, 4.94980862]],
    ('scan_in_body', True):
        [[4.97849548, 4.94980862], [4.97849548, 4.94980862], [4.97849548, 4.94980862],
        [4.97849548, 4.94980862]],
    ('fori_in_body', True):
        [[0.06115104, 1.03680293], [0.06115104, 1.03680293], [0.06115104, 1.03680293],
        [0.06115104, 1.03680293]],
    ('cond_in_body', True):
        [[4.97849548, 4.94980862], [4.97849548, 4.94980862], [4.97849548, 4.94980862],
        [4.97849548, 4.94980862]],
    ('pcast_varying', True):
        [[0.0, -0.7568025], [-0.57580663, -0.86370995], [1.08362315, 1.35452894], [4.47067896,
        5.21579212]],
    ('pcast_inside_loss', True):
        [[4.97849548, 4.94980862], [4.97849548, 4.94980862], [4.97849548, 4.94980862],
        [4.97849548, 4.94980862]],
    ('vmap_in_body', True):
        [[4.97849548, 4.94980862], [4.97849548, 4.94980862], [4.97849548, 4.94980862],
        [4.97849548, 4.94980862]],
    ('varying_loss', False):
        [[0.0, -0.7568025], [-0.57580663, -0.86370995], [1.08362315, 1.35452894], [4.47067896,
        5.21579212]],
    ('varying_loss_plus_invariant', False):
        [[2.0, 5.0], [4.0, 7.0], [6.0, 9.0], [8.0, 11.0]],
    ('psum_loss', False):
        [[2.0, 8.0], [10.0, 16.0], [18.0, 24.0], [26.0, 32.0]],
    ('pmean_loss', False):
        [[0.0, -0.7568025], [-0.57580663, -0.86370995], [1.08362315, 1.35452894], [4.47067896,
        5.21579212]],
    ('wrt_varying_psum_loss', False):
        [[4.0, 8.0], [4.0, 8.0], [4.0, 8.0], [4.0, 8.0]],
    ('wrt_varying_varying_loss', False):
        [[24.0, 32.0], [24.0, 32.0], [24.0, 32.0], [24.0, 32.0]],
    ('invariant_only', False):
        [[3.0, 12.0], [3.0, 12.0], [3.0, 12.0], [3.0, 12.0]],
    ('all_gather', False):
        [[0.0, 8.0], [16.0, 24.0], [32.0, 40.0], [48.0, 56.0]],
    ('all_gather_of_w', False):
        [[28.0, 28.0], [28.0, 28.0], [28.0, 28.0], [28.0, 28.0]],
    ('ppermute', False):
        [[0.0, 4.0], [8.0, 36.0], [32.0, 100.0], [72.0, 196.0]],
    ('psum_scatter', False):
        [[32.0, 64.0], [144.0, 288.0], [256.0, 512.0], [368.0, 736.0]],
    ('vjp_of_psum', False):
        [[0.0, 4.0], [8.0, 12.0], [16.0, 20.0], [24.0, 28.0]],
    ('vjp_varying_ct', False):
        [[0.0, 0.0], [4.0, 6.0], [16.0, 20.0], [36.0, 42.0]],
    ('jvp', False):
        [1.0, 5.0, 9.0, 13.0],
    ('value_and_grad', False):
        [[0.0, -0.7568025], [-0.57580663, -0.86370995], [1.08362315, 1.35452894], [4.47067896,
        5.21579212]],
    ('argnums_both', False):
        [[0.0, -0.7568025, -0.7568025, -1.51360499], [-0.57580663, -0.86370995, -0.28790332,
        -0.57580663], [1.08362315, 1.35452894, 0.27090579, 0.54181158], [4.47067896, 5.21579212,
        0.74511316, 1.49022632]],
    ('jacrev', False):
        [[[0.0, -0.41614684]], [[-0.29100007, -0.4365001]], [[0.54694887, 0.68368609]],
        [[2.44849237, 2.85657443]]],
    ('hessian', False):
        [[[0.0, 0.0], [0.0, -1.30728724]], [[-7.66127584, -11.49191376], [-11.49191376,
        -17.23787065]], [[-30.80338772, -38.50423465], [-38.50423465, -48.13029332]],
        [[-48.01954044, -56.02279718], [-56.02279718, -65.35993004]]],
    ('grad_of_grad', False):
        [[0.0, 1.97871649], [28.67418742, 43.01128114], [-171.06872868, -213.83591086],
        [-1013.766427, -1182.72749817]],
    ('jit_in_body', False):
        [[0.0, -0.7568025], [-0.57580663, -0.86370995], [1.08362315, 1.35452894], [4.47067896,
        5.21579212]],
    ('scan_in_body', False):
        [[0.0, -0.7568025], [-0.57580663, -0.86370995], [1.08362315, 1.35452894], [4.47067896,
        5.21579212]],
    ('fori_in_body', False):
        [[1.0, 2.16035108], [1.23012074, 2.34518111], [0.65089267, 1.56361584], [0.06795259,
        0.91261136]],
    ('cond_in_body', False):
        [[0.0, -0.7568025], [-0.57580663, -0.86370995], [1.08362315, 1.35452894], [4.47067896,
        5.21579212]],
    ('pcast_varying', False):
        [[0.0, -0.7568025], [-0.57580663, -0.86370995], [1.08362315, 1.35452894], [4.47067896,
        5.21579212]],
    ('pcast_inside_loss', False):
        [[0.0, -0.7568025], [-0.57580663, -0.86370995], [1.08362315, 1.35452894], [4.47067896,
        5.21579212]],
    ('vmap_in_body', False):
        [[0.0, -0.7568025], [-0.57580663, -0.86370995], [1.08362315, 1.35452894], [4.47067896,
        5.21579212]],
}


@pytest.mark.parametrize("case", sorted(SHARD_MAP_GRADS_JAX), ids=lambda c: f"{c[0]}-{c[1]}")
def test_gradients_inside_the_body_follow_jax(case):
    # check_vma=True: the gradient of a replicated input sums the shards', a psum/pmean loss
    # counts once; check_vma=False: every gradient per shard. Under jit, scan, cond, vmap too.
    from tests.funcgrad.shard_map_grad_cases import XS, W, cases

    name, check_vma = case
    body = cases(funcgrad, fnp, lax)[name]
    f = funcgrad.shard_map(body, mesh=_mesh(4, names=("i",)), in_specs=(P(), P("i")),
                           out_specs=P("i"), check_vma=check_vma)
    np.testing.assert_allclose(to_host(f(dev(W), dev(XS))), SHARD_MAP_GRADS_JAX[case],
                               rtol=1e-7, atol=1e-8)


def test_gradient_of_a_replicated_input_under_jit_outside():
    mesh = _mesh(4, names=("i",))
    per_shard = funcgrad.shard_map(lambda w, x: funcgrad.grad(lambda w: fnp.sum(x @ w))(w),
                                   mesh=mesh, in_specs=(P(), P("i")), out_specs=P())
    # JAX: the sum over the shards of x_s.sum(0), replicated (so out_specs P() is accepted)
    np.testing.assert_allclose(to_host(funcgrad.jit(per_shard)(dev(np.ones(2)), XD[:, :2])),
                               [24.0, 28.0])


def test_all_gather_varies_over_a_checked_axis():
    mesh = _mesh(4, names=("i",))
    with pytest.raises(ValueError, match="varies along 'i'"):  # JAX rejects P() as well
        funcgrad.shard_map(lambda a: lax.all_gather(a, "i", tiled=True), mesh=mesh,
                           in_specs=P("i"), out_specs=P())(XD)
    # unchanged under vmap, whose all_gather result is the same for every example (as JAX)
    g = funcgrad.vmap(lambda a: lax.all_gather(a, "i"), axis_name="i", out_axes=None)
    np.testing.assert_array_equal(to_host(g(dev(np.arange(3.0)))), [0.0, 1.0, 2.0])


def test_in_specs_none_replicates_but_left_out_is_an_error():
    mesh = _mesh(4, names=("i",))
    # JAX 0.10.2: in_specs=None (or a None entry) gives every shard the whole argument ...
    f = funcgrad.shard_map(lambda a, b: a * b.sum(), mesh=mesh, in_specs=(P("i"), None),
                           out_specs=P("i"))
    np.testing.assert_array_equal(to_host(f(dev(np.arange(4.0)), dev(np.ones(3)))),
                                  [0.0, 3.0, 6.0, 9.0])
    assert to_host(funcgrad.shard_map(lambda a: a, mesh=mesh, in_specs=None,
                                      out_specs=P("i"))(XD)).shape == (16, 4)
    # ... but left out, it is inferred from the arguments' shardings (an error on meshes of
    # Auto axes); funcgrad's arrays have none, and replicating would change the result.
    with pytest.raises(TypeError, match="in_specs is required"):
        funcgrad.shard_map(lambda a: a * 2, mesh=mesh, out_specs=P("i"))(XD)
    # None in out_specs matches a None output only (JAX: a pytree structure error otherwise)
    g = funcgrad.shard_map(lambda a: (a, None), mesh=mesh, in_specs=P("i"),
                           out_specs=(P("i"), None))
    assert g(XD)[1] is None
    with pytest.raises(ValueError, match="out_specs is None for output leaf 1"):
        funcgrad.shard_map(lambda a: (a, lax.psum(a, "i")), mesh=mesh, in_specs=P("i"),
                           out_specs=(P("i"), None))(XD)


def test_none_arguments_and_outputs_take_no_spec():
    # JAX 0.10.2: a None argument or output is an empty pytree; the specs of the arrays after
    # it stay theirs.
    mesh = _mesh(4, names=("i",))
    f = funcgrad.shard_map(lambda n, a: (None, a * lax.axis_index("i")), mesh=mesh,
                           in_specs=(None, P("i")), out_specs=(None, P("i")))
    out = f(None, dev(np.ones(4)))
    assert out[0] is None
    np.testing.assert_array_equal(to_host(out[1]), [0.0, 1.0, 2.0, 3.0])


def test_shape_dtype_struct_takes_a_sharding():
    # as jax.ShapeDtypeStruct(shape, dtype, sharding=...): kept, shown, checked against the
    # shape (JAX 0.10.2 checks at lowering), usable as a stand-in
    mesh = _mesh(2)
    sh = NamedSharding(mesh, P("x"))
    s = funcgrad.ShapeDtypeStruct((4,), np.float32, sharding=sh)
    assert s.sharding == sh and "sharding=NamedSharding" in repr(s)
    assert s != funcgrad.ShapeDtypeStruct((4,), np.float32)
    assert s.update(shape=(6,)).sharding == sh
    out = funcgrad.jit(lambda a: a * 2).lower(s).compile()(dev(np.ones(4, np.float32)))
    np.testing.assert_array_equal(to_host(out), [2.0] * 4)
    assert funcgrad.ShapeDtypeStruct((3,), np.float32, sharding=P()).sharding == P()
    with pytest.raises(ValueError, match="each split size must divide"):
        funcgrad.ShapeDtypeStruct((3,), np.float32, sharding=sh)
    with pytest.raises(ValueError, match="sharding should be an instance"):
        funcgrad.ShapeDtypeStruct((3,), np.float32, sharding="cpu")


def test_experimental_shard_map_is_the_deprecated_spelling():
    # from jax.experimental.shard_map import shard_map (JAX 0.10.2: deprecated, check_rep is
    # check_vma): the gradient of a replicated input is summed over the shards, or not
    from funcgrad.experimental.shard_map import shard_map
    from tests.funcgrad.shard_map_grad_cases import XS, W

    mesh = _mesh(4, names=("i",))
    body = lambda w, x: funcgrad.grad(lambda w: fnp.sum(x @ w) + fnp.sum(w ** 2))(w)[None]
    with pytest.warns(DeprecationWarning, match="funcgrad.shard_map"):
        checked = shard_map(body, mesh, (P(), P("i")), P("i"))
    np.testing.assert_array_equal(to_host(checked(dev(W), dev(XS))), [[20.0, 32.0]] * 4)
    with pytest.warns(DeprecationWarning):
        unchecked = shard_map(body, mesh, (P(), P("i")), P("i"), check_rep=False)
    np.testing.assert_array_equal(to_host(unchecked(dev(W), dev(XS))),
                                  [[2.0, 5.0], [4.0, 7.0], [6.0, 9.0], [8.0, 11.0]])


def test_pjit_passes_device_backend_and_compiler_options_to_jit():
    from funcgrad.experimental.pjit import pjit

    with pytest.warns(DeprecationWarning):  # as jit(backend=...)
        f = pjit(lambda a: a * 2, backend="strict")
    assert funcgrad.backend.device_of(f(np.ones(2))) == "strict"
    with pytest.raises(ValueError, match="compiler takes no options"):
        pjit(lambda a: a, compiler_options={"xla_cpu_enable_fast_math": True})


def test_linear_transpose_inside_a_checked_body_follows_jaxs_types() -> None:
    # JAX 0.10.2 (4 shards of arange(8.)): an invariant output's cotangent is not counted once
    # per shard, an invariant input's is summed over the shards; a varying cotangent of an
    # invariant output is a TypeError ("cotangent type does not match function output").
    mesh = _mesh(4, names=("i",))
    x, w = dev(np.arange(8.0)), dev(np.ones(2))

    def sm(f, in_specs, out_specs):
        return funcgrad.shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs)

    def psum_t(a):
        return funcgrad.linear_transpose(lambda b: lax.psum(b, "i"), a)(lax.psum(a, "i"))[0]

    np.testing.assert_allclose(to_host(sm(psum_t, P("i"), P("i"))(x)), [12.0, 16.0] * 4)

    def mixed(a, v):
        return funcgrad.linear_transpose(lambda b, u: b * 3 + u, a, v)(a)

    ca, cv = sm(mixed, (P("i"), P()), (P("i"), P()))(x, w)
    np.testing.assert_allclose(to_host(ca), 3 * np.arange(8.0))
    np.testing.assert_allclose(to_host(cv), [12.0, 16.0])

    def mixed_invariant_out(a, v):
        return funcgrad.linear_transpose(lambda b, u: lax.psum(b, "i") + u, a, v)(v)

    ca, cv = sm(mixed_invariant_out, (P("i"), P()), (P("i"), P()))(x, w)
    np.testing.assert_allclose(to_host(ca), np.ones(8))
    np.testing.assert_allclose(to_host(cv), [1.0, 1.0])

    def varying_ct(a):
        return funcgrad.linear_transpose(lambda b: lax.psum(b, "i"), a)(a)

    with pytest.raises(TypeError, match="cotangent type does not match function output"):
        sm(varying_ct, P("i"), P("i"))(x)
    with pytest.raises(TypeError, match="cotangent type does not match function output"):
        sm(lambda a: funcgrad.vjp(lambda b: lax.psum(b, "i"), a)[1](a), P("i"), P("i"))(x)


def test_smap_maps_one_mesh_axis_as_jax() -> None:
    # JAX 0.10.2's jax.smap under jax.set_mesh (forced host devices), values recorded
    x = dev(np.arange(8.0).reshape(4, 2))
    with pytest.raises(ValueError, match="context mesh cannot be empty"):
        funcgrad.smap(lambda a: a, in_axes=0, out_axes=0, axis_name="i")(x)
    with set_mesh(_mesh(4, names=("i",))):
        f = funcgrad.smap(lambda a: a * lax.axis_index("i"), in_axes=1, out_axes=1,
                          axis_name="i")
        np.testing.assert_allclose(to_host(f(dev(np.arange(8.0).reshape(2, 4)))),
                                   [[0, 1, 4, 9], [0, 5, 12, 21]])
        total = funcgrad.grad(lambda w: funcgrad.smap(
            lambda a, w: lax.psum((a * w).sum(), "i"), in_axes=(0, None), out_axes=None,
            axis_name="i")(x, w))(1.0)
        assert float(total) == 28.0
        deco = funcgrad.smap(in_axes=0, out_axes=-1, axis_name="i")(lambda a: a + 1)
        assert deco(x).shape == (1, 8)  # the blocks (1, 2) put together along the last axis
        with pytest.raises(TypeError, match="in_axes is required"):
            funcgrad.smap(lambda a: a, out_axes=0, axis_name="i")(x)
        with pytest.raises(TypeError, match="must be an int, None, or a tuple"):
            funcgrad.smap(lambda a, b: a, in_axes=[0, None], out_axes=0, axis_name="i")(x, 1)
        with pytest.raises(ValueError, match="must be the same on every shard"):
            funcgrad.smap(lambda a: a, in_axes=0, out_axes=None, axis_name="i")(x)
    with set_mesh(_mesh(2, 2, names=("i", "j"))):
        # the other mesh axis is not mapped over
        f = funcgrad.smap(lambda a: a * 2 + lax.axis_index("i"), in_axes=0, out_axes=0,
                          axis_name="i")
        np.testing.assert_allclose(to_host(f(x)), [[0, 2], [4, 6], [9, 11], [13, 15]])
        inner = funcgrad.smap(lambda a: a + 10 * lax.axis_index("i") + lax.axis_index("j"),
                              in_axes=1, out_axes=1, axis_name="j")
        nested = funcgrad.smap(inner, in_axes=0, out_axes=0, axis_name="i")
        np.testing.assert_allclose(to_host(nested(dev(np.zeros((2, 2))))), [[0, 1], [10, 11]])


def test_all_gather_to_invarying_is_the_same_on_every_shard() -> None:
    # JAX 0.10.2: all_gather(..., to='invarying') may be returned with P(), and a gradient
    # inside the body counts it once (2x; the varying result counts every shard's copy: 8x)
    mesh = _mesh(4, names=("i",))
    x = dev(np.arange(8.0))

    def sm(f, out_specs):
        return funcgrad.shard_map(f, mesh=mesh, in_specs=P("i"), out_specs=out_specs)

    def gathered(to):
        return lambda a: lax.all_gather(a, "i", tiled=True, to=to)

    np.testing.assert_allclose(to_host(sm(gathered("invarying"), P())(x)), np.arange(8.0))
    for to, scale in [("invarying", 2.0), ("varying", 8.0)]:
        inner = sm(lambda a, to=to: funcgrad.grad(lambda b: (gathered(to)(b) ** 2).sum())(a),
                   P("i"))
        np.testing.assert_allclose(to_host(inner(x)), scale * np.arange(8.0))
    outer = funcgrad.grad(lambda a: sm(lambda b: (gathered("invarying")(b) ** 2).sum(), P())(a))
    np.testing.assert_allclose(to_host(outer(x)), 2 * np.arange(8.0))
    with pytest.raises(ValueError, match="to must be"):
        sm(gathered("invariant"), P())(x)
