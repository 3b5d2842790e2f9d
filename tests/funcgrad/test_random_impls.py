"""JAX's other PRNG implementations, 'rbg' and 'unsafe_rbg' (bits from XLA's RngBitGenerator,
Philox on CPU), and the ``jax_default_prng_impl`` flag, against JAX 0.10.2 with x64 on CPU.
Reference values are JAX's, recorded as literals."""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad
from funcgrad import random as R
from funcgrad.config import flag_scope
from tests.helpers import assert_allclose as _assert_allclose
from tests.helpers import dev, host


def assert_allclose(actual, expected, **kw):
    _assert_allclose(actual, np.asarray(host(expected)), check_dtype=False, **kw)


def h(x):
    return np.asarray(host(x)).tolist()


def data(k):
    return h(R.key_data(k))


# jax.random.*(key(3, impl=...)), JAX 0.10.2 (x64, CPU)
RBG = {
    "split": [[3716834203, 3481239269, 3716834203, 3481239269],
              [1946498123, 2217676430, 1946498123, 2217676430],
              [1024511538, 2603795180, 1024511538, 2603795180]],
    "fold": [2647473427, 4234374204, 2647473427, 4234374204],
    "randint": [89, 79, 2, 75],
    "perm": [5, 4, 2, 1, 0, 3],
    "gamma": [2.3199148470518685, 1.8725822097842846, 3.479509539352474],
}
URBG = {
    "split": [[3146934739, 3391003311, 1891301882, 1478358120],
              [1089363569, 1607244725, 1190331783, 2650401737],
              [3322181929, 3504230603, 1403867051, 2830808211]],
    "fold": [2104303640, 250182024, 1106406590, 1983638453],
    "randint": [5, 23, 0, 66],
    "perm": [3, 1, 5, 4, 0, 2],
    "gamma": [1.5861628903765455, 4.096996954557725, 2.2567808916135497],
}
# both draw their bits alike (only key derivation differs)
BITS = {
    8: [211, 175, 250, 104, 232],
    16: [27091, 39599, 63994, 62568, 49384],
    32: [3146934739, 3391003311, 1891301882, 1478358120, 965525736],
    64: [14564248324519651795, 6349499779067345402, 15465341218477359336,
         2683447343262304811, 11743940854019372682],
}
UNIFORM = [0.7895294837031286, 0.3442070727330522, 0.8383778273651386]
UNIFORM32 = [0.7327027320861816, 0.7895294427871704, 0.4403529167175293]
NORMAL = [0.8047897239307431, -0.40100812019181936, 0.98781278431949]


@pytest.mark.parametrize("impl, tag, ref", [("rbg", "rbg", RBG), ("unsafe_rbg", "urbg", URBG)])
def test_rbg_keys_equal_jax(impl, tag, ref) -> None:
    k = dev(R.key(3, impl=impl))
    assert str(k.dtype) == f"key<{tag}>" and k.shape == () and R.key_impl(k) == impl
    assert k.dtype == R.key_dtype(impl) and k.dtype != R.key_dtype()
    assert data(k) == [0, 3, 0, 3]
    assert data(R.key(2 ** 40 + 5, impl=impl)) == [256, 5, 256, 5]
    assert data(R.split(k, 3)) == ref["split"]
    assert R.split(k, (2, 2)).shape == (2, 2) and data(R.split(k, (2, 2))[0, 1]) == ref["split"][1]
    assert data(R.fold_in(k, 7)) == ref["fold"]
    for bw, expected in BITS.items():
        assert h(R.bits(k, (5,), np.dtype(f"uint{bw}"))) == expected
    assert_allclose(R.uniform(k, (3,)), UNIFORM, rtol=1e-15)
    assert_allclose(R.uniform(k, (3,), np.float32), UNIFORM32, rtol=1e-7)
    assert_allclose(R.normal(k, (3,)), NORMAL, rtol=1e-13)
    assert h(R.randint(k, (4,), 0, 100)) == ref["randint"]
    assert h(R.permutation(k, 6)) == ref["perm"]
    assert_allclose(R.gamma(k, 2.0, (3,)), ref["gamma"], rtol=1e-12)
    # under jit (keys are pytrees whose implementation is static) as eagerly
    assert_allclose(funcgrad.jit(lambda kk: R.uniform(kk, (3,)))(k), UNIFORM, rtol=1e-15)
    assert data(funcgrad.jit(lambda kk: R.split(kk, 3))(k)) == ref["split"]


def test_rbg_keys_under_vmap_draw_per_key() -> None:
    # Each key draws its own numbers (as without vmap). JAX's batching rule of
    # rng_bit_generator draws all rows from the first key instead (JAX documents rbg as not
    # vmap-exact): row 0 agrees, the others are funcgrad's own keys' draws.
    ks = R.split(dev(R.key(3, impl="rbg")), 3)
    out = funcgrad.vmap(lambda kk: R.uniform(kk, (2,)))(ks)
    for i in range(3):
        assert_allclose(out[i], R.uniform(ks[i], (2,)), rtol=1e-15)
    assert_allclose(out[0], [0.3382003696913225, 0.020228320919531972], rtol=1e-15)


def test_default_prng_impl_flag() -> None:
    assert funcgrad.config.jax_default_prng_impl == "threefry2x32"
    with flag_scope("jax_default_prng_impl", "rbg"):
        assert funcgrad.config.read("jax_default_prng_impl") == "rbg"
        raw = dev(R.PRNGKey(1))
        assert h(raw) == [0, 1, 0, 1] and R.key_impl(raw) == "rbg"
        assert str(R.key(1).dtype) == "key<rbg>"
        # raw keys are keys of the default implementation (JAX's values)
        assert_allclose(R.uniform(raw, (3,)),
                        [0.07439026597553156, 0.6885101410969519, 0.7921092984793592],
                        rtol=1e-15)
        assert h(R.split(raw)) == [[507451445, 1853169794, 507451445, 1853169794],
                                   [1948878966, 4237131848, 1948878966, 4237131848]]
        assert h(R.fold_in(raw, 2)) == [2441914641, 3819641963, 2441914641, 3819641963]
        assert str(R.wrap_key_data(np.zeros(4, np.uint32)).dtype) == "key<rbg>"
        with pytest.raises(ValueError, match="key must have shape \\(4,\\)"):
            R.uniform(dev(np.zeros(2, np.uint32)))
        # a typed key keeps its own implementation
        assert_allclose(R.uniform(R.key(1, impl="threefry2x32"), (2,)),
                        [0.11815024666289675, 0.4537587442869633], rtol=1e-15)
    assert R.key_impl(R.PRNGKey(1)) == "threefry2x32"
    with pytest.raises(ValueError, match="another PRNG implementation"):
        R.uniform(dev(np.zeros(4, np.uint32)))
    with pytest.raises(ValueError, match="unknown PRNG implementation"):
        funcgrad.config.update("jax_default_prng_impl", "philox")


def test_rbg_key_arrays_keep_their_implementation() -> None:
    ks = R.split(R.key(0, impl="unsafe_rbg"), 4)
    for k in (ks[1], ks.reshape(2, 2), ks[::-1], funcgrad.numpy.stack([ks, ks]),
              R.clone(ks), R.wrap_key_data(R.key_data(ks), impl="unsafe_rbg")):
        assert str(k.dtype) == "key<urbg>" and R.key_data(k).shape[-1] == 4
    assert h(ks == ks) == [True] * 4
    with pytest.raises(TypeError, match="different implementations"):
        _ = ks[0] == R.key(0)
    with pytest.raises(TypeError, match="key<urbg>"):
        _ = ks + 1
    assert "key<urbg>" in repr(ks[0])


def test_key_dtype_keyword_and_out_sharding() -> None:
    # jax.random.key(0, dtype=key_dtype('rbg')) is key<rbg>; impl= and dtype= together refused
    assert str(R.key(0, dtype=R.key_dtype("rbg")).dtype) == "key<rbg>"
    assert str(R.wrap_key_data(np.zeros(4, np.uint32), dtype=R.key_dtype("unsafe_rbg")).dtype) \
        == "key<urbg>"
    with pytest.raises(ValueError, match="not both"):
        R.key(0, impl="rbg", dtype=R.key_dtype("rbg"))
    # JAX 0.10's samplers take out_sharding= (one device here: where the draws go)
    k = dev(R.key(0))
    assert_allclose(R.normal(k, (2,), out_sharding=None), R.normal(k, (2,)))
    mesh = funcgrad.make_mesh((1,), ("x",))
    s = funcgrad.sharding.NamedSharding(mesh, funcgrad.sharding.PartitionSpec("x"))
    assert_allclose(R.uniform(k, (2,), out_sharding=s), R.uniform(k, (2,)))
    with pytest.raises(TypeError, match="out_sharding"):
        R.bits(k, (2,), out_sharding="cpu")
