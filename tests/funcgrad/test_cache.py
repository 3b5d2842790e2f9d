"""funcgrad/_cache.py: the LRU and weak-owner LRU caches every memo in funcgrad uses."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import funcgrad
from funcgrad._cache import LRUCache, WeakLRUCache, weak_lru_cache


class _Owner:
    pass


def test_lru_evicts_least_recently_used_not_everything():
    evicted = []
    c = LRUCache(3, on_evict=lambda k, v: evicted.append(k))
    for k in "abc":
        c[k] = k.upper()
    assert c.get("a") == "A"  # a use: "b" is now the oldest
    c["d"] = "D"
    assert evicted == ["b"] and sorted(c.keys()) == ["a", "c", "d"] and len(c) == 3
    c.resize(1)
    assert list(c.keys()) == ["d"] and evicted == ["b", "c", "a"]
    with pytest.raises(KeyError):
        c["a"]
    with pytest.raises(ValueError, match="maxsize"):
        LRUCache(-1)


def test_weak_lru_entries_go_with_their_owner():
    c = WeakLRUCache(maxsize=10)
    a, b = _Owner(), _Owner()
    c.put(a, 1, "a1")
    c.put(a, 2, "a2")
    c.put(b, 1, "b1")
    assert (c.get(a, 1), c.get(a, 2), c.get(b, 1), c.get(b, 2)) == ("a1", "a2", "b1", None)
    del a
    gc.collect()
    assert len(c) == 1 and c.get(b, 1) == "b1"


def test_weak_lru_bound_evicts_oldest_owner_entries():
    c = WeakLRUCache(maxsize=2)
    owners = [_Owner() for _ in range(3)]
    for i, o in enumerate(owners):
        c.put(o, None, i)
    assert len(c) == 2 and c.get(owners[0]) is None and c.get(owners[2]) == 2
    assert len(c._refs) == 2  # the evicted owner's weak reference went too


def test_weak_lru_cache_decorator_and_tuple_owner():
    calls = []

    @weak_lru_cache(maxsize=8)
    def f(owner, n):
        calls.append(n)
        return n * 2

    a, b = _Owner(), _Owner()
    assert f(a, 1) == 2 and f(a, 1) == 2 and calls == [1]
    assert f((a, b), 1) == 2 and calls == [1, 1]  # the tuple's other members join the key
    assert f.cache_len() == 2
    del a
    gc.collect()
    assert f.cache_len() == 0


def test_loop_runners_do_not_keep_jaxprs_alive():
    """The control-flow runner cache is keyed weakly on the jaxpr (it used to hold up to 512
    jaxprs by id, then drop them all at once)."""
    from funcgrad.ops.control_flow._common import runner

    closed = funcgrad.make_jaxpr(lambda x: x * 2.0)(np.ones(3))
    before = runner.cache_len()
    run = runner(closed)
    assert runner(closed) is run and runner.cache_len() == before + 1
    del closed, run
    gc.collect()
    assert runner.cache_len() == before
