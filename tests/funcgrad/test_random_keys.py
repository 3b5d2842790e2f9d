"""Typed key arrays (``random.key``, JAX's ``key<fry>`` arrays) against JAX 0.10 (x64): shapes,
dtype, printing, ``split``/``fold_in``/``key_data``/``wrap_key_data``/``key_impl``, indexing and
reshaping, and keys through jit, vmap, grad, scan, cond and fori_loop. Reference values are
JAX's, recorded as literals."""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import dtypes, lax, tree_util
from funcgrad import random as R
from tests.helpers import assert_allclose, dev, host

SPLIT3 = [[1797259609, 2579123966], [928981903, 3453687069], [4146024105, 2718843009]]


def h(x):
    return np.asarray(host(x))


def data(k):
    return h(R.key_data(k)).tolist()


def test_key_is_a_scalar_of_key_dtype() -> None:
    k = dev(R.key(0))
    assert isinstance(k, R.PRNGKeyArray)
    assert (k.shape, k.ndim, k.size, str(k.dtype)) == ((), 0, 1, "key<fry>")
    assert k.dtype == R.key(1).dtype and hash(k.dtype) == hash(R.key(1).dtype)
    assert fnp.issubdtype(k.dtype, dtypes.prng_key) and fnp.issubdtype(k.dtype, dtypes.extended)
    assert not fnp.issubdtype(k.dtype, np.integer) and not fnp.issubdtype(np.uint32, dtypes.prng_key)
    assert not fnp.issubdtype(R.PRNGKey(0).dtype, dtypes.prng_key)
    assert dtypes.canonicalize_dtype(k.dtype, allow_extended_dtype=True) == k.dtype
    assert data(k) == [0, 0]
    # the raw key keeps being a uint32 array
    r = R.PRNGKey(0)
    assert r.dtype == np.uint32 and r.shape == (2,)
    assert h(R.key_data(r)).tolist() == [0, 0]


def test_printing_as_jax() -> None:
    assert repr(R.key(0)) == "Array((), dtype=key<fry>) overlaying:\n[0 0]"
    assert str(R.split(R.key(0), 2)) == (
        "Array((2,), dtype=key<fry>) overlaying:\n"
        "[[1797259609 2579123966]\n [ 928981903 3453687069]]")


def test_split_fold_in_clone_keep_keys_typed() -> None:
    k = dev(R.key(0))
    ks = R.split(k, 3)
    assert isinstance(ks, R.PRNGKeyArray) and ks.shape == (3,) and data(ks) == SPLIT3
    assert R.split(k, (2, 3)).shape == (2, 3)
    f = R.fold_in(k, 1)
    assert isinstance(f, R.PRNGKeyArray) and data(f) == [928981903, 3453687069]
    c = R.clone(k)
    assert isinstance(c, R.PRNGKeyArray) and data(c) == [0, 0]
    # clone takes key arrays of any shape, typed or raw, as jax.random.clone
    assert R.clone(ks).shape == (3,) and data(R.clone(ks)) == SPLIT3
    assert h(R.clone(R.split(dev(R.PRNGKey(0)), 3))).tolist() == SPLIT3
    with pytest.raises(ValueError, match="clone: key must have shape"):
        R.clone(dev(np.zeros(3, np.uint32)))
    # raw in, raw out
    assert h(R.split(dev(R.PRNGKey(0)), 3)).tolist() == SPLIT3


def test_wrap_key_data_and_key_impl() -> None:
    raw = dev(R.PRNGKey(0))
    w = R.wrap_key_data(raw)
    assert isinstance(w, R.PRNGKeyArray) and w.shape == () and data(w) == [0, 0]
    assert R.wrap_key_data(dev(np.array(SPLIT3, np.uint32))).shape == (3,)
    assert R.key_impl(R.key(0)) == R.key_impl(raw) == "threefry2x32"
    with pytest.raises(TypeError, match="uint32 key data"):
        R.wrap_key_data(np.zeros(3, np.uint32))
    with pytest.raises(TypeError, match="already wrapped"):
        R.wrap_key_data(R.key(0))
    with pytest.raises(TypeError, match="key data"):
        R.key_data(np.zeros(2, np.float32))


def test_samplers_draw_the_same_from_typed_and_raw_keys() -> None:
    k, r = dev(R.key(0)), dev(R.PRNGKey(0))
    # jax.random.normal(jax.random.key(0), (3,))
    assert_allclose(R.normal(k, (3,)), np.array([-0.20584214, -0.78476578, 1.81608667]),
                    rtol=1e-7)
    assert_allclose(R.normal(k, (3,)), R.normal(r, (3,)))
    assert_allclose(R.randint(k, (4,), 0, 10), R.randint(r, (4,), 0, 10))
    assert_allclose(R.gamma(k, 2.0, (2,)), R.gamma(r, 2.0, (2,)))
    with pytest.raises(ValueError, match=r"single key.*shape \(3,\)"):
        R.normal(R.split(k, 3))


def test_indexing_reshaping_iterating() -> None:
    ks = R.split(dev(R.key(0)), 3)
    assert data(ks[0]) == SPLIT3[0] and ks[0].shape == ()
    assert ks[1:].shape == (2,) and data(ks[-1]) == SPLIT3[2]
    assert data(ks[np.array([True, False, True])]) == [SPLIT3[0], SPLIT3[2]]
    assert ks[None].shape == (1, 3) and ks[..., 0].shape == ()
    assert len(ks) == 3 and [x.shape for x in ks] == [(), (), ()]
    a, b, c = ks
    assert data(b) == SPLIT3[1]
    r = ks.reshape(3, 1)
    assert r.shape == (3, 1) and r.T.shape == (1, 3) and r.squeeze().shape == (3,)
    assert ks.reshape(-1, 1).shape == (3, 1) and r.ravel().shape == (3,)
    assert data(r.T[0]) == SPLIT3
    # Fortran order moves whole keys (each key's two words stay together)
    ks6 = R.split(dev(R.key(0)), 6)
    d = h(R.key_data(ks6))
    assert data(ks6.reshape((2, 3), order="F")) == np.stack(
        [d[:, 0].reshape((2, 3), order="F"), d[:, 1].reshape((2, 3), order="F")], -1).tolist()
    # a traced index into concrete keys (jit, vmap); out of range clamps, as JAX's key arrays
    assert data(funcgrad.jit(lambda kk, i: kk[i])(ks, 2)) == SPLIT3[2]
    assert data(funcgrad.vmap(lambda i: ks[i])(dev(np.arange(2)))) == SPLIT3[:2]
    assert data(ks[10]) == SPLIT3[2]
    with pytest.raises(IndexError, match="too many indices"):
        R.key(0)[0]
    with pytest.raises(TypeError, match="unsized"):
        len(R.key(0))


def test_comparison_and_what_keys_refuse() -> None:
    k = dev(R.key(0))
    ks = R.split(k, 3)
    assert bool(h(k == k)) and not bool(h(k != k))
    assert h(ks == ks).tolist() == [True, True, True]
    assert h(ks == k).tolist() == [False, False, False]
    with pytest.raises(TypeError, match="key_data"):
        np.asarray(k)
    with pytest.raises(TypeError, match="arithmetic"):
        k + 1
    with pytest.raises(TypeError, match="needs another key array"):
        k == 0  # noqa: B015


def test_vmap_axes_of_key_arrays_count_key_axes_only() -> None:
    # a key array's data ends with the key's two words, which in_axes/out_axes do not count:
    # -1 is the key array's last axis, as jax.vmap's (JAX 0.10 values, x64)
    ks = R.split(dev(R.key(0)), (2, 3))
    got = funcgrad.vmap(lambda k: R.uniform(k[0]) + 10 * R.uniform(k[1]), in_axes=-1)(ks)
    assert_allclose(got, np.array([8.475636827145339, 7.003660268141022, 6.853074233186765]),
                    rtol=1e-12)
    got = funcgrad.vmap(lambda k: R.uniform(k, (2,)), in_axes=-1, out_axes=-1)(ks[0])
    assert_allclose(got, np.array([[0.9699479979898888, 0.08062436666431605, 0.651922255581562],
                                   [0.31518185988363556, 0.923948835561414,
                                    0.8795451917764219]]), rtol=1e-12)
    out = funcgrad.vmap(lambda k: R.split(k, 2), out_axes=-1)(ks[0])
    assert out.shape == (2, 3)
    assert data(out) == [[[4165894930, 804218099], [346279018, 360566543],
                          [2799984767, 1105366846]],
                         [[1353695780, 2116000888], [3968330031, 3923691647],
                          [3777617834, 145086855]]]
    assert data(funcgrad.jit(funcgrad.vmap(lambda k: R.split(k, 2), out_axes=-1))(ks[0])) \
        == data(out)
    # an output that does not depend on the batch is broadcast at the key axis asked for
    rep = funcgrad.vmap(lambda x: R.split(R.key(0), 3), out_axes=-1)(dev(np.ones(4)))
    assert rep.shape == (3, 4) and data(rep[:, 1]) == SPLIT3
    # axes past the key array's rank are out of range, though its data has one more
    with pytest.raises(ValueError, match="in_axes=2 is out of range.*rank 2"):
        funcgrad.vmap(R.uniform, in_axes=2)(ks)
    with pytest.raises(ValueError, match="in_axes=0 is out of range.*rank 0"):
        funcgrad.vmap(R.uniform)(dev(R.key(0)))
    with pytest.raises(ValueError, match="out_axes=2 is out of range"):
        funcgrad.vmap(lambda k: R.split(k, 2), out_axes=2)(ks[0])


def test_keys_through_transformations() -> None:
    k = dev(R.key(0))
    ks = R.split(k, 3)
    # jax.vmap(lambda k: jax.random.normal(k))(jax.random.split(jax.random.key(0), 3))
    assert_allclose(funcgrad.vmap(lambda kk: R.normal(kk))(ks),
                    np.array([1.88002989, -1.4008841, 0.39051537]), rtol=1e-7)
    j = funcgrad.jit(lambda kk: R.split(kk))(k)
    assert isinstance(j, R.PRNGKeyArray) and data(j) == SPLIT3[:2]
    v = funcgrad.vmap(lambda i: R.fold_in(k, i))(fnp.arange(2))
    assert isinstance(v, R.PRNGKeyArray) and data(v) == SPLIT3[:2]
    assert funcgrad.vmap(R.split)(ks).shape == (3, 2)
    # lax.scan over keys: JAX 1.70249462
    c, _ = lax.scan(lambda c, kk: (c + R.uniform(kk), None), 0.0, ks)
    assert_allclose(c, np.array(1.70249462), rtol=1e-7)
    assert data(lax.cond(True, R.split, R.split, k)) == SPLIT3[:2]
    f = lax.fori_loop(0, 3, lambda i, kk: R.split(kk)[0], k)
    assert isinstance(f, R.PRNGKeyArray) and data(f) == [683029726, 1624662641]
    g = funcgrad.grad(lambda x, kk: x * R.normal(kk))(1.0, k)
    assert_allclose(g, np.array(-0.20584213947964347), rtol=1e-12)
    s = funcgrad.eval_shape(lambda: R.key(0))
    assert s.shape == () and s.dtype == k.dtype
    assert repr(s) == "ShapeDtypeStruct(shape=(), dtype=key<fry>)"


def test_keys_in_pytrees() -> None:
    state = dev({"key": R.key(0), "w": np.ones(2)})
    out = funcgrad.jit(lambda s: {"key": R.split(s["key"])[0], "w": s["w"] * 2})(state)
    assert data(out["key"]) == SPLIT3[0]
    # JAX 0.10.2: a key array is a pytree leaf: tree_leaves(key) == [key], tree_map sees keys
    leaves, treedef = tree_util.tree_flatten(state)
    assert leaves[0] is state["key"] and str(treedef) == "PyTreeDef({'key': *, 'w': *})"
    assert funcgrad.device_put(state)["key"].shape == ()
    shapes = tree_util.tree_map(lambda x: x.shape, state)
    assert shapes == {"key": (), "w": (2,)}
    assert [tree_util.keystr(p) for p, _ in tree_util.tree_flatten_with_path(state)[0]] == ["['key']", "['w']"]
    # ... and transformations still take them: vmap over a batch of keys, scan carrying one
    ks = R.split(state["key"], 3)
    assert funcgrad.vmap(lambda t: R.normal(t["k"]))({"k": ks}).shape == (3,)
    carry, _ = funcgrad.lax.scan(lambda c, _: ({"k": R.split(c["k"])[0]}, None),
                                 {"k": state["key"]}, None, length=2)
    assert isinstance(carry["k"], R.PRNGKeyArray) and carry["k"].shape == ()


def test_key_leaves_pass_through_every_transformation() -> None:
    # JAX 0.10.2: keys are leaves to jax.tree_util and arguments/carries/results of every
    # transformation
    k = dev(R.key(1))
    out = funcgrad.jit(lambda t: {"k": R.fold_in(t["k"], 3), "n": t["n"] + 1})({"k": k, "n": 0})
    assert data(out["k"]) == data(R.fold_in(k, 3)) and int(out["n"]) == 1
    g = funcgrad.grad(lambda w, t: w * R.uniform(t["k"]))(2.0, {"k": k})
    assert float(g) == float(R.uniform(k))
    kk = lax.cond(True, lambda t: R.split(t)[1], lambda t: t, k)
    assert data(kk) == data(R.split(k)[1])
    kk = lax.fori_loop(0, 2, lambda i, t: R.fold_in(t, i), k)
    assert data(kk) == data(R.fold_in(R.fold_in(k, 0), 1))
    shape = funcgrad.eval_shape(lambda t: R.split(t, 4), k)
    assert shape.shape == (4,) and str(shape.dtype) == "key<fry>"

    @funcgrad.custom_vjp
    def scaled_noise(w, t):
        return w * R.normal(t)

    scaled_noise.defvjp(lambda w, t: (scaled_noise(w, t), R.normal(t)),
                        lambda z, ct: (ct * z * 2.0, None))
    assert float(funcgrad.grad(scaled_noise)(1.0, k)) == 2.0 * float(R.normal(k))


def test_initializers_and_stax_take_typed_keys() -> None:
    from funcgrad.example_libraries import stax
    from funcgrad.nn import initializers

    k, r = dev(R.key(0)), dev(R.PRNGKey(0))
    assert_allclose(initializers.glorot_normal()(k, (2, 2)),
                    initializers.glorot_normal()(r, (2, 2)))
    assert initializers.zeros(k, (2,)).shape == (2,)
    init, _ = stax.serial(stax.Dense(4), stax.Relu, stax.Dense(2))
    assert init(k, (-1, 3))[0] == (-1, 2)


def test_key_array_is_an_array_on_a_device() -> None:
    k = dev(R.key(0))
    # isinstance(jax.random.key(0), jax.Array) is True; jax.random.key_dtype() is key<fry>
    assert isinstance(k, funcgrad.Array) and not isinstance(R.KeyDType(), funcgrad.Array)
    assert R.key_dtype() == k.dtype and str(R.key_dtype("threefry2x32")) == "key<fry>"
    assert str(R.key_dtype("rbg")) == "key<rbg>"
    with pytest.raises(ValueError, match="unknown PRNG implementation"):
        R.key_dtype("philox")
    assert k.device == funcgrad.backend.device_of(R.key_data(k)) and k.devices() == {k.device}


def test_numpy_structural_functions_take_key_arrays() -> None:
    # jnp.stack / concatenate / where / take / expand_dims / broadcast_to / reshape / flip /
    # asarray on key arrays, as jax.numpy's (values: JAX's key_data of the results)
    k = dev(R.key(0))
    ks = R.split(k, 3)
    a, b, c = SPLIT3
    s = fnp.stack([k, k])
    assert isinstance(s, R.PRNGKeyArray) and s.shape == (2,) and data(s) == [[0, 0], [0, 0]]
    assert data(fnp.stack([ks, ks], axis=-1)) == [[a, a], [b, b], [c, c]]
    assert data(fnp.concatenate([ks, ks[:1]])) == [a, b, c, a]
    assert fnp.concatenate([ks.reshape(3, 1), ks.reshape(3, 1)], axis=None).shape == (6,)
    assert data(fnp.where(dev(np.array([True, False, True])), ks, ks[::-1])) == [a, b, c]
    assert data(fnp.where(dev(np.array([False, True, False])), ks, ks[::-1])) == [c, b, a]
    assert data(fnp.where(True, k, ks)) == [[0, 0]] * 3
    assert data(fnp.take(ks, dev(np.array([0, 2])))) == [a, c]
    assert data(fnp.take(ks.reshape(3, 1), dev(np.array([0])), axis=1)) == [[a], [b], [c]]
    assert fnp.expand_dims(k, 0).shape == (1,) and fnp.expand_dims(ks, -1).shape == (3, 1)
    assert fnp.broadcast_to(ks, (2, 3)).shape == (2, 3)
    assert data(fnp.broadcast_to(k, (2,))) == [[0, 0], [0, 0]]
    assert fnp.reshape(ks, (3, 1)).shape == (3, 1) and fnp.reshape(ks, -1).shape == (3,)
    assert data(fnp.flip(ks)) == [c, b, a]
    assert fnp.asarray(k) is k
    assert data(funcgrad.jit(lambda t, x, y: fnp.where(t, x, y))(False, k, ks[1])) == b
    assert funcgrad.vmap(lambda x: fnp.stack([x, x]))(ks).shape == (3, 2)
    with pytest.raises(TypeError, match="only be combined with key arrays"):
        fnp.stack([k, np.zeros(2, np.uint32)])
    with pytest.raises(TypeError):
        fnp.add(k, 1)


def test_seed_errors_name_key() -> None:
    with pytest.raises(TypeError, match=r"^key: seed must be an integer, got dtype float64"):
        R.key(np.float64(1.5))
    with pytest.raises(TypeError, match=r"^key: seed must be a scalar"):
        R.key(np.array([1, 2]))
    with pytest.raises(TypeError, match=r"^PRNGKey: seed must be an integer, got NoneType"):
        R.PRNGKey(None)


def test_a_jax_training_script_with_typed_keys() -> None:
    # A JAX program as written for JAX (typed keys split in a jitted scan, dropout masks,
    # value_and_grad, tree.map updates): its losses equal JAX 0.10's (x64) to rounding.
    import funcgrad as jax
    import funcgrad.numpy as jnp

    def dropout(key, x, rate):
        return jnp.where(jax.random.bernoulli(key, 1 - rate, x.shape), x / (1 - rate), 0.0)

    def forward(params, x, key):
        keys = jax.random.split(key, len(params))
        for p, k in zip(params[:-1], keys):
            x = dropout(k, jax.nn.relu(x @ p["w"] + p["b"]), 0.1)
        return x @ params[-1]["w"] + params[-1]["b"]

    def loss(params, x, y, key):
        logits = forward(params, x, key)
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * jax.nn.one_hot(y, 3), -1))

    @jax.jit
    def train(params, x, y, key):
        def step(carry, _):
            params, key = carry
            key, sub = jax.random.split(key)
            val, g = jax.value_and_grad(loss)(params, x, y, sub)
            return (jax.tree.map(lambda p, d: p - 0.1 * d, params, g), key), val
        (params, key), losses = jax.lax.scan(step, (params, key), None, length=50)
        return params, key, losses

    key = dev(jax.random.key(42))
    key, k1, k2 = jax.random.split(key, 3)
    x = jax.random.normal(k1, (64, 4))
    y = jax.random.randint(k2, (64,), 0, 3)
    keys = jax.random.split(key, 2)
    params = [{"w": jax.random.normal(k, (m, n)) / jnp.sqrt(m), "b": jnp.zeros(n)}
              for k, m, n in zip(keys, [4, 16], [16, 3])]
    params, key, losses = train(params, x, y, key)
    assert_allclose(h(losses)[::10], np.array([1.1161589633120585, 1.0549506130071342,
                                               1.0066284799580263, 0.9607989007457398,
                                               0.9217887426589688]), rtol=1e-10)
    assert key.shape == () and data(key) == [882418880, 2943921724]


def test_exported_programs_take_and_return_keys() -> None:
    from funcgrad import export

    f = funcgrad.jit(lambda kk, x: (R.split(kk), R.normal(kk, (2,)) + x))
    k = dev(R.key(0))
    e = export.deserialize(export.export(f)(k, 1.0).serialize())
    ks, y = e.call(k, 1.0)
    assert isinstance(ks, R.PRNGKeyArray) and data(ks) == SPLIT3[:2]
    assert_allclose(y, R.normal(k, (2,)) + 1.0)


def test_key_array_at_set_and_swapaxes() -> None:
    # jax.random.split(key(0), (2, 3)) updated with .at[...].set, as JAX 0.10 (x64)
    ks = R.split(dev(R.key(0)), (2, 3))
    k5 = dev(R.key(5))
    assert data(ks.at[..., 0].set(k5)) == [
        [[0, 5], [928981903, 3453687069], [4146024105, 2718843009]],
        [[0, 5], [2285895361, 433833334], [1524306142, 1887795613]]]
    row = [[2724472204, 3573582090], [202567368, 3886822060], [3594430910, 1784718894]]
    assert data(ks.at[1].set(R.split(k5, 3))) == [
        [[1797259609, 2579123966], [928981903, 3453687069], [4146024105, 2718843009]], row]
    got = funcgrad.jit(lambda ks, i, k: ks.at[i].set(k))(ks, 1, k5)
    assert isinstance(got, R.PRNGKeyArray) and data(got)[1] == [[0, 5]] * 3
    got = funcgrad.vmap(lambda ks, k: ks.at[0].set(k))(ks, R.split(k5, 2))
    assert [r[0] for r in data(got)] == row[:2]
    assert data(ks.at[1, 2].get()) == [1524306142, 1887795613]
    with pytest.raises(TypeError, match="not defined on key arrays"):
        ks.at[0].add(ks[1])
    with pytest.raises(TypeError, match="needs key values"):
        ks.at[0].set(R.key_data(ks[1]))
    sw = ks.swapaxes(0, 1)
    assert sw.shape == (3, 2) and data(sw)[0] == [[1797259609, 2579123966],
                                                   [2467461003, 3840466878]]


def test_lax_dynamic_slicing_and_concatenate_take_key_arrays() -> None:
    # jax.lax's structural operations on key arrays (JAX 0.10, x64): axes and start indices
    # count key axes; clamping as for arrays
    ks = R.split(dev(R.key(0)), (3, 2))
    k9 = R.split(dev(R.key(9)), (1, 2))
    rows = data(ks)
    got = lax.dynamic_slice(ks, (-1, 5), (2, 1))
    assert isinstance(got, R.PRNGKeyArray) and data(got) == [[rows[1][1]], [rows[2][1]]]
    assert data(lax.dynamic_update_slice(ks, k9, (5, 0))) == rows[:2] + data(k9)
    assert data(lax.dynamic_index_in_dim(ks, -1, axis=-1, keepdims=False)) == [
        r[1] for r in rows]
    assert data(lax.dynamic_update_index_in_dim(ks, k9[0], 0, 0)) == data(k9) + rows[1:]
    assert data(lax.concatenate([ks, k9], 0)) == rows + data(k9)
    assert lax.concatenate([ks, ks], 1).shape == (3, 4)
    assert data(funcgrad.jit(lambda ks, i: lax.dynamic_index_in_dim(ks, i, keepdims=False))(
        ks, 1)) == rows[1]
    assert data(funcgrad.vmap(lambda k: lax.dynamic_slice(k, (1,), (1,)))(ks)) == [
        [r[1]] for r in rows]
    with pytest.raises(TypeError, match="must be a key array"):
        lax.dynamic_update_slice(ks, R.key_data(k9), (0, 0))


def test_fold_in_data_as_jax() -> None:
    # JAX 0.10: NumPy integers wrap to their low 32 bits, bools count as 0/1; only a Python
    # int out of [0, 2**32) is an OverflowError
    k = dev(R.key(0))
    assert data(R.fold_in(k, np.int64(2 ** 33))) == data(R.fold_in(k, 0)) == [1797259609,
                                                                              2579123966]
    assert data(R.fold_in(k, np.int64(2 ** 33 + 5))) == [1524306142, 1887795613]
    assert data(R.fold_in(k, np.int8(-1))) == data(R.fold_in(k, 2 ** 32 - 1)) == [
        743310391, 3789761811]
    assert data(R.fold_in(k, np.uint64(2 ** 40 + 2))) == [4146024105, 2718843009]
    for flag in (True, np.bool_(True), dev(np.array(True))):
        assert data(R.fold_in(k, flag)) == [928981903, 3453687069]
    assert data(funcgrad.jit(R.fold_in)(k, np.int64(2 ** 33 + 5))) == [1524306142, 1887795613]
    with pytest.raises(OverflowError, match="out of bounds for uint32"):
        R.fold_in(k, -1)


def test_fold_in_float_data_truncates_as_jax() -> None:
    # JAX 0.10.2: jnp.asarray(data, dtype='uint32'); Python floats through int() (2.9 -> 2,
    # -1.0 overflows), float arrays cast; complex and non-scalar arrays refused
    k = dev(R.key(0))
    two = [4146024105, 2718843009]
    assert data(R.fold_in(k, 2.9)) == two
    assert data(R.fold_in(k, 1.0)) == [928981903, 3453687069]
    assert data(R.fold_in(k, np.float32(3.5))) == [2467461003, 3840466878]
    assert data(R.fold_in(k, dev(np.array(2.2)))) == two
    assert data(funcgrad.jit(R.fold_in)(k, 2.7)) == two
    assert data(funcgrad.vmap(lambda d: R.fold_in(k, d))(dev(np.array([2.5])))) == [two]
    with pytest.raises(OverflowError, match="out of bounds for uint32"):
        R.fold_in(k, -1.0)
    with pytest.raises(TypeError, match="real scalar"):
        R.fold_in(k, 1 + 0j)
    with pytest.raises(TypeError, match=r"accepts a scalar, but was given an array of shape \(2,\)"):
        R.fold_in(k, dev(np.array([1, 2])))


def test_lax_select_takes_key_arrays() -> None:
    # jax.lax.select / select_n on key arrays pick whole keys (JAX 0.10, x64)
    ks = R.split(dev(R.key(0)), (3, 2))
    k2 = R.split(dev(R.key(9)), (3, 2))
    k3 = R.split(dev(R.key(3)), (3, 2))
    pred = dev(np.array([[True, False], [False, True], [True, True]]))
    got = lax.select(pred, ks, k2)
    assert isinstance(got, R.PRNGKeyArray) and data(got) == [
        [[1797259609, 2579123966], [143080583, 4281670255]],
        [[2676565412, 4109519897], [2467461003, 3840466878]],
        [[2285895361, 433833334], [1524306142, 1887795613]]]
    assert data(lax.select(dev(np.array(False)), ks, k2)) == data(k2)
    which = dev(np.array([[0, 1], [2, 0], [1, 2]], np.int32))
    assert data(lax.select_n(which, ks, k2, k3))[1] == [[1024511538, 2603795180],
                                                         [2467461003, 3840466878]]
    got = funcgrad.vmap(lambda p, a, b: lax.select(p, a, b))(
        dev(np.array([True, False, True])), ks, k2)
    assert data(got)[1] == [[2676565412, 4109519897], [1877436067, 1979300842]]
    with pytest.raises(TypeError, match="all be key arrays"):
        lax.select(dev(np.array(True)), ks, R.key_data(k2))


def test_numpy_functions_of_key_arrays() -> None:
    # jnp.zeros_like / ones_like / full_like of keys fill the key data (JAX 0.10.2: zeros_like
    # of split(key(0), 3) has data [[0, 0]] * 3, ones_like [[1, 1]] * 3); the functions of the
    # element axes give the keys those functions pick (JAX: key arrays of the same dtype)
    ks = dev(R.split(R.key(0), 6)).reshape(2, 3)
    d = np.asarray(h(R.key_data(ks)))
    for f, words in ((fnp.zeros_like, 0), (fnp.ones_like, 1), (fnp.empty_like, 0),
                     (lambda k: fnp.full_like(k, 5), 5)):
        z = f(ks)
        assert z.dtype == ks.dtype and data(z) == np.full((2, 3, 2), words).tolist()
    assert data(fnp.full_like(ks, ks[0, 1])) == np.broadcast_to(d[0, 1], (2, 3, 2)).tolist()
    assert data(fnp.zeros_like(ks, shape=(4,))) == [[0, 0]] * 4
    assert data(funcgrad.jit(fnp.zeros_like)(ks)) == np.zeros((2, 3, 2)).tolist()
    assert fnp.zeros_like(R.key(0, impl="rbg")).dtype == R.key_dtype("rbg")
    cases = [
        (lambda k: fnp.squeeze(k[None]), lambda x: x),
        (fnp.ravel, lambda x: x.reshape(6, 2)),
        (fnp.transpose, lambda x: x.transpose(1, 0, 2)),
        (lambda k: fnp.moveaxis(k, 0, 1), lambda x: x.transpose(1, 0, 2)),
        (lambda k: fnp.swapaxes(k, 0, 1), lambda x: x.transpose(1, 0, 2)),
        (lambda k: fnp.tile(k, 2), lambda x: np.tile(x, (1, 2, 1))),
        (lambda k: fnp.repeat(k, 2, axis=1), lambda x: np.repeat(x, 2, axis=1)),
        (lambda k: fnp.roll(k, 1, axis=1), lambda x: np.roll(x, 1, axis=1)),
        (fnp.rot90, lambda x: np.rot90(x, axes=(0, 1))),
        (lambda k: fnp.atleast_1d(k[0, 0]), lambda x: x[0, :1]),
        (lambda k: fnp.array(k, ndmin=3), lambda x: x[None]),
        (fnp.copy, lambda x: x),
    ]
    for f, expected in cases:
        out = f(ks)
        assert out.dtype == ks.dtype and data(out) == expected(d).tolist()
    parts = fnp.split(ks, 3, axis=1)
    assert [data(p) for p in parts] == [d[:, i:i + 1].tolist() for i in range(3)]
    rows = fnp.unstack(ks)
    assert isinstance(rows, tuple) and [data(r) for r in rows] == [d[0].tolist(), d[1].tolist()]
    assert fnp.array_equal(ks, fnp.copy(ks)) is True
    assert fnp.array_equal(ks, ks[:1]) is False


def test_key_arrays_byte_sizes_and_lists_of_keys_as_jax() -> None:
    # JAX 0.10.2: itemsize 8 (threefry) / 16 (rbg), nbytes = size * itemsize; jnp.array and
    # jnp.asarray of a (nested) list of keys stack them
    k = dev(R.key(0))
    ks = R.split(k, 6)
    assert (ks.itemsize, ks.nbytes, ks.dtype.itemsize) == (8, 48, 8)
    assert R.key(0, impl="rbg").itemsize == 16
    assert fnp.array([[k, k], [k, k]]).shape == (2, 2)
    assert str(fnp.asarray((k, k)).dtype) == "key<fry>"
    stacked = funcgrad.jit(lambda a, b: fnp.array([a, b]))(ks[0], ks[1])
    assert host(R.key_data(stacked)).tolist() == host(R.key_data(ks[:2])).tolist()


def test_python_bool_seed_is_an_int_as_jax() -> None:
    # JAX 0.10.2: PRNGKey(True) is [0, 1] (a Python bool is an int); NumPy's bool is refused
    assert host(R.PRNGKey(True)).tolist() == [0, 1]
    assert host(R.key_data(R.key(False))).tolist() == [0, 0]
    with pytest.raises(TypeError, match="bool"):
        R.PRNGKey(np.bool_(True))
