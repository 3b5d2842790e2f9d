"""funcgrad.random.check_key_reuse: a key consumed twice raises, naming both lines."""

from __future__ import annotations

import re
import threading

import numpy as np
import pytest
from helpers import dev, host

import funcgrad
from funcgrad import random


def _line_of(marker: str) -> int:
    with open(__file__) as f:
        for i, line in enumerate(f, 1):
            if marker in line and "_line_of" not in line:
                return i
    raise AssertionError(marker)


def test_second_use_raises_naming_both_lines() -> None:
    key = random.PRNGKey(0)
    with random.check_key_reuse():
        random.normal(key, (2,))  # FIRST-USE
        with pytest.raises(random.KeyReuseError) as info:
            random.uniform(key, (3,))  # SECOND-USE
    msg = str(info.value)
    assert msg.startswith("random.uniform: this key was already consumed by random.normal")
    assert f"test_random_key_reuse.py:{_line_of('# FIRST-USE')}" in msg
    assert f"test_random_key_reuse.py:{_line_of('# SECOND-USE')}" in msg
    assert "split" in msg


@pytest.mark.parametrize("second", [
    lambda k: random.split(k),
    lambda k: random.bits(k, (2,)),
    lambda k: random.gamma(k, 2.0),
    lambda k: random.randint(k, (2,), 0, 5),
    lambda k: random.permutation(k, 4),
])
def test_split_bits_and_samplers_all_consume(second) -> None:
    key = random.PRNGKey(1)
    with random.check_key_reuse():
        random.bernoulli(key)
        with pytest.raises(random.KeyReuseError):
            second(key)


def test_correct_programs_pass_and_values_are_unchanged() -> None:
    key = random.PRNGKey(2)
    want = host(random.lognormal(random.split(key)[1], shape=(3,)))
    with random.check_key_reuse():
        k1, k2 = random.split(key)
        got = random.lognormal(k2, shape=(3,))  # built on normal: consumes k2 once
        random.beta(k1, 2.0, 3.0)  # built on gamma with its own splits
        # fold_in derives keys without consuming.
        for i in range(3):
            random.normal(random.fold_in(key, i))
        random.dirichlet(random.PRNGKey(9), dev(np.ones(3)))
    np.testing.assert_array_equal(host(got), want)
    # Outside the block reuse is not checked (JAX's default).
    random.normal(key)
    random.normal(key)


def test_reuse_inside_jit_vmap_and_grad_is_caught() -> None:
    def twice(k):
        return random.normal(k, (2,)) + random.normal(k, (2,))

    with random.check_key_reuse():
        with pytest.raises(random.KeyReuseError, match="random.normal.*random.normal"):
            funcgrad.jit(twice)(random.PRNGKey(3))
        with pytest.raises(random.KeyReuseError):
            funcgrad.vmap(twice)(random.split(random.PRNGKey(4), 3))
        with pytest.raises(random.KeyReuseError):
            funcgrad.grad(lambda s, k: (s * twice(k)).sum())(1.0, random.PRNGKey(5))

        def once(k):
            a, b = random.split(k)
            return random.normal(a, (2,)) + random.normal(b, (2,))

        jf = funcgrad.jit(once)
        np.testing.assert_array_equal(host(jf(random.PRNGKey(6))), host(once(random.PRNGKey(6))))
        funcgrad.vmap(once)(random.split(random.PRNGKey(7), 3))


def test_state_is_per_context_and_per_thread() -> None:
    key = random.PRNGKey(8)
    with random.check_key_reuse():
        random.normal(key)
    with random.check_key_reuse():  # a new block starts afresh
        random.normal(key)
        errors: list[BaseException] = []

        def other_thread() -> None:
            try:  # the check is not active in a thread that did not opt in
                random.normal(key)
                random.normal(key)
            except BaseException as e:  # pragma: no cover - the failure is reported below
                errors.append(e)

        t = threading.Thread(target=other_thread)
        t.start()
        t.join()
        assert not errors
        with pytest.raises(random.KeyReuseError, match=re.escape("random.normal")):
            random.normal(key)


def test_key_reuse_error_is_in_funcgrad_errors() -> None:
    # jax.errors.KeyReuseError / jax.errors.JaxprTypeError are there in JAX too
    import funcgrad.errors
    import funcgrad.ir

    assert random.KeyReuseError is funcgrad.errors.KeyReuseError
    assert funcgrad.ir.JaxprTypeError is funcgrad.errors.JaxprTypeError


def test_jax_debug_key_reuse_flag_and_context() -> None:
    # jax.config.update("jax_debug_key_reuse", True) / with jax.debug_key_reuse(True)
    import gc

    import funcgrad

    k = random.PRNGKey(0)
    funcgrad.config.update("jax_debug_key_reuse", True)
    try:
        assert funcgrad.config.read("jax_debug_key_reuse") is True
        random.normal(k)
        with pytest.raises(random.KeyReuseError, match="already consumed by random.normal"):
            random.normal(k)
        t = random.key(1)
        random.split(t)
        with pytest.raises(random.KeyReuseError):
            random.uniform(t)
        # keys are held weakly: a dead key's record goes with it
        from funcgrad.random._reuse import _flag_seen

        n = len(_flag_seen.get())
        for i in range(5):
            random.normal(random.PRNGKey(i + 10))
        gc.collect()
        assert len(_flag_seen.get()) == n
    finally:
        funcgrad.config.update("jax_debug_key_reuse", False)
    random.normal(k)  # off again
    with funcgrad.debug_key_reuse(True):
        random.normal(k)
        with pytest.raises(random.KeyReuseError):
            random.normal(k)
    random.normal(k)


def test_one_key_in_two_branches_of_a_cond_is_consumed_once() -> None:
    # As JAX 0.10.2's checker: only one branch runs, so using the key in both is fine; using
    # it again after the cond (or twice in one branch) is reuse.
    from funcgrad import lax

    with random.check_key_reuse():
        key = dev(random.key(4))
        f = funcgrad.jit(lambda k, p: lax.cond(p, lambda: random.normal(k),
                                               lambda: random.uniform(k)))
        assert host(f(key, True)).shape == ()
        k2 = dev(random.key(5))
        out = lax.switch(1, [lambda: random.normal(k2), lambda: random.uniform(k2),
                             lambda: lax.cond(True, lambda: random.normal(k2),
                                              lambda: random.gumbel(k2))])
        assert host(out).shape == ()
        with pytest.raises(random.KeyReuseError):
            random.normal(k2)       # consumed by the switch
        k3 = dev(random.key(6))
        with pytest.raises(random.KeyReuseError):
            lax.cond(True, lambda: random.normal(k3) + random.uniform(k3),
                     lambda: random.normal(k3))


def test_jitted_calls_consume_their_key_arguments_cache_hits_included() -> None:
    # JAX 0.10.2 (jax_debug_key_reuse): the second call of a jitted function with a key it
    # consumes raises, though the call runs from jit's cache; a key the program only folds in
    # or returns is not consumed; eager use after the call (or before it) is reuse.
    from funcgrad import lax

    f = funcgrad.jit(lambda k: random.normal(k))
    g = funcgrad.jit(lambda k: random.fold_in(k, 1))
    h = funcgrad.jit(lambda x, k: x * lax.cond(x > 0, lambda: random.normal(k),
                                               lambda: random.uniform(k)))
    with random.check_key_reuse():
        k = dev(random.key(0))
        f(k)
        with pytest.raises(random.KeyReuseError, match=r"jit\(<lambda>\), argument k: this key "
                           r"was already consumed by jit\(<lambda>\)"):
            f(k)
        k1 = dev(random.key(1))
        f(k1)
        with pytest.raises(random.KeyReuseError, match="random.normal: .*consumed by jit"):
            random.normal(k1)
        k2 = dev(random.key(2))
        random.uniform(k2)
        with pytest.raises(random.KeyReuseError, match="already consumed by random.uniform"):
            f(k2)
        k3 = dev(random.key(3))
        g(k3), g(k3)  # fold_in does not consume
        raw = dev(random.PRNGKey(4))  # funcgrad also checks raw keys, as its samplers do
        h(1.0, raw)
        with pytest.raises(random.KeyReuseError, match="argument k:"):
            h(2.0, raw)
    k = dev(random.key(0))
    assert f(k) == f(k)  # unchecked outside the block


def test_loop_bodies_consuming_the_same_key_every_iteration() -> None:
    # JAX 0.10.2 (jax_debug_key_reuse) refuses a loop body that consumes a key from outside
    # the loop, or a carried key it passes on unchanged; carrying a split key, folding in the
    # iteration or scanning over split keys is fine.
    from funcgrad import lax

    with random.check_key_reuse():
        with pytest.raises(random.KeyReuseError, match="carries on unchanged"):
            lax.scan(lambda c, _: (c, random.normal(c)), random.key(0), None, length=3)
        with pytest.raises(random.KeyReuseError, match="carries on unchanged"):
            lax.while_loop(lambda c: c[1] < 1.0,
                           lambda c: (c[0], c[1] + 1.0 + 0 * random.normal(c[0])),
                           (random.key(1), 0.0))
        k = random.key(2)
        with pytest.raises(random.KeyReuseError, match="from outside the loop"):
            lax.fori_loop(0, 3, lambda i, c: c + random.normal(k), 0.0)
        with pytest.raises(random.KeyReuseError, match="from outside the loop"):
            lax.scan(lambda c, _: (c + funcgrad.jit(random.normal)(random.key(3)), None),
                     0.0, None, length=2)

        def step(c, _):
            c, sub = random.split(c)
            return c, random.normal(sub)

        lax.scan(step, random.key(4), None, length=3)
        k5 = random.key(5)
        lax.fori_loop(0, 3, lambda i, c: c + random.normal(random.fold_in(k5, i)), 0.0)
        lax.scan(lambda c, kk: (c + random.normal(kk), None), 0.0,
                 random.split(random.key(6), 3))


def test_vmapped_calls_consume_their_batched_keys() -> None:
    # JAX 0.10.2: vmap(random.normal)(keys) twice over one batch of keys is reuse; a function
    # that only folds data in does not consume them
    with random.check_key_reuse():
        keys = dev(random.split(random.key(0), 3))
        funcgrad.vmap(random.normal)(keys)
        with pytest.raises(random.KeyReuseError, match="vmap of random.normal"):
            funcgrad.vmap(random.normal)(keys)
        other = dev(random.split(random.key(1), 3))
        funcgrad.vmap(lambda k: random.fold_in(k, 1))(other)
        funcgrad.vmap(lambda k: random.fold_in(k, 2))(other)
        funcgrad.vmap(random.uniform)(other)


def test_keys_taken_from_an_array_are_tracked_by_element_as_jax() -> None:
    # Each keys[0] is a new object holding the same key: JAX's checker (recorded with
    # jax 0.10.2, jax_debug_key_reuse=True) raises for these, by element of the array.
    reused = [
        lambda ks: (random.normal(ks[0]), random.normal(ks[0])),
        lambda ks: (random.normal(ks[-3]), random.uniform(ks[0])),
        lambda ks: (random.normal(ks[0]), random.normal(ks[:1][0])),
        lambda ks: (random.normal(ks[1]), funcgrad.vmap(random.normal)(ks)),
        lambda ks: funcgrad.jit(lambda k: (random.normal(k[np.int64(2)]),
                                           random.normal(k[2])))(ks),
    ]
    for prog in reused:
        with random.check_key_reuse(), pytest.raises(random.KeyReuseError,
                                                     match="key [012] of this key array"):
            prog(random.split(random.key(0), 3))
    with random.check_key_reuse(), pytest.raises(random.KeyReuseError, match="consumed whole"):
        ks = random.split(random.key(0), 3)
        funcgrad.vmap(random.normal)(ks)
        random.normal(ks[2])
    fine = [
        lambda ks: (random.normal(ks[0]), random.normal(ks[1]), random.normal(ks[2])),
        lambda ks: (random.normal(ks[0]), funcgrad.vmap(random.normal)(ks[1:])),
        lambda ks: [random.normal(ks[i]) for i in range(3)],
        lambda ks: funcgrad.jit(lambda k: (random.normal(k[0]), random.normal(k[1])))(ks),
    ]
    with funcgrad.debug_key_reuse(True):
        for prog in fine:
            prog(random.split(random.key(0), 3))
