"""Bounded caches: one helper for every memo in funcgrad.

:class:`LRUCache` is a dict with a size bound that drops the least recently used entry (never
the whole cache at some arbitrary size). :class:`WeakLRUCache` and :func:`weak_lru_cache` key
results on the *identity* of an owner object (a ``ClosedJaxpr``, a function) held weakly, plus
hashable extras: an entry goes when its owner is garbage collected or when it is the least
recently used one past the bound, whichever comes first. A cache never keeps its owners alive,
so a jaxpr built per call (an eager loop's body) does not pin its compiled program.

An entry's value must not reference its owner strongly if the entry is to go with the owner
(it still goes when it falls out of the LRU bound).

Example:
    >>> cache = LRUCache(maxsize=2)
    >>> cache["a"] = 1; cache["b"] = 2; _ = cache.get("a"); cache["c"] = 3
    >>> sorted(cache.keys())  # "b" was the least recently used
    ['a', 'c']
"""

from __future__ import annotations

import functools
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from typing import Any

__all__ = ["LRUCache", "WeakLRUCache", "weak_lru_cache", "clear_all"]

_MISSING: Any = object()

#: every cache alive, so that clear_all (funcgrad.clear_caches) can empty them
_live: weakref.WeakSet = weakref.WeakSet()


def clear_all() -> None:
    """Empty every :class:`LRUCache` and :class:`WeakLRUCache` alive (``jax.clear_caches``):
    compiled programs, traced jaxprs and transformed bodies are made again when next needed.

    Example:
        >>> cache = LRUCache(maxsize=4); cache["a"] = 1
        >>> clear_all(); len(cache)
        0
    """
    for cache in list(_live):
        cache.clear()


class LRUCache:
    """A mapping bounded to ``maxsize`` entries, evicting the least recently used one.

    ``get`` and ``__getitem__`` count as uses; ``on_evict(key, value)`` (optional) is told of
    each entry dropped for room. ``maxsize=None`` means unbounded. Hot paths may look up with
    ``peek`` (the dict's own ``get``: no Python frame, not a use) and call ``touch(key)`` when
    the entry found is not the one they used last.
    """

    __slots__ = ("maxsize", "_data", "_on_evict", "peek", "touch", "__weakref__")

    def __init__(self, maxsize: int | None,
                 on_evict: Callable[[Any, Any], None] | None = None) -> None:
        if maxsize is not None and maxsize < 0:
            raise ValueError(f"LRUCache: maxsize must be >= 0 or None, got {maxsize}")
        self.maxsize = maxsize
        self._data: OrderedDict[Hashable, Any] = OrderedDict()
        self._on_evict = on_evict
        self.peek = self._data.get
        self.touch = self._data.move_to_end
        _live.add(self)

    def get(self, key: Hashable, default: Any = None) -> Any:
        data = self._data
        try:
            value = data[key]
        except KeyError:
            return default
        data.move_to_end(key)
        return value

    def __getitem__(self, key: Hashable) -> Any:
        value = self._data[key]
        self._data.move_to_end(key)
        return value

    def __setitem__(self, key: Hashable, value: Any) -> None:
        data = self._data
        data[key] = value
        data.move_to_end(key)
        maxsize = self.maxsize
        if maxsize is not None:
            while len(data) > maxsize:
                old_key, old_value = data.popitem(last=False)
                if self._on_evict is not None:
                    self._on_evict(old_key, old_value)

    def pop(self, key: Hashable, default: Any = None) -> Any:
        return self._data.pop(key, default)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._data

    def __len__(self) -> int:
        return len(self._data)

    def keys(self) -> Iterator[Hashable]:
        return iter(list(self._data))

    def values(self) -> Iterator[Any]:
        return iter(list(self._data.values()))

    def clear(self) -> None:
        self._data.clear()

    def resize(self, maxsize: int | None) -> None:
        """Change the bound, evicting the least recently used entries past it."""
        if maxsize is not None and maxsize < 0:
            raise ValueError(f"LRUCache: maxsize must be >= 0 or None, got {maxsize}")
        self.maxsize = maxsize
        data = self._data
        while maxsize is not None and len(data) > maxsize:
            old_key, old_value = data.popitem(last=False)
            if self._on_evict is not None:
                self._on_evict(old_key, old_value)


class WeakLRUCache:
    """Values keyed on ``(owner, extra)``: the owner by identity, held weakly; ``extra``
    hashable (held strongly while the entry lives). At most ``maxsize`` entries in all.

    Example:
        >>> class Owner: pass
        >>> cache, o = WeakLRUCache(maxsize=8), Owner()
        >>> cache.put(o, "flags", 1); cache.get(o, "flags")
        1
        >>> del o; len(cache)  # the entry went with its owner
        0
    """

    __slots__ = ("_lru", "_refs", "_extras", "__weakref__")

    def __init__(self, maxsize: int | None) -> None:
        self._lru = LRUCache(maxsize, on_evict=self._evicted)
        # id(owner) -> (weak reference to it, the extras cached for it)
        self._refs: dict[int, tuple[weakref.ref, set[Hashable]]] = {}
        _live.add(self)

    def get(self, owner: Any, extra: Hashable = None, default: Any = None) -> Any:
        oid = id(owner)
        entry = self._refs.get(oid)
        if entry is None or entry[0]() is not owner:
            return default
        return self._lru.get((oid, extra), default)

    def put(self, owner: Any, extra: Hashable, value: Any) -> None:
        oid = id(owner)
        entry = self._refs.get(oid)
        if entry is None or entry[0]() is not owner:
            if entry is not None:  # a dead owner's id, reused before its callback ran
                self._forget(oid)
            self_ref = weakref.ref(self)

            def dead(_: Any, oid: int = oid, self_ref: Any = self_ref) -> None:
                cache = self_ref()
                if cache is not None:
                    cache._forget(oid)

            entry = self._refs[oid] = (weakref.ref(owner, dead), set())
        entry[1].add(extra)
        self._lru[(oid, extra)] = value

    def _forget(self, oid: int) -> None:
        entry = self._refs.pop(oid, None)
        if entry is not None:
            for extra in entry[1]:
                self._lru.pop((oid, extra))

    def _evicted(self, key: tuple[int, Hashable], value: Any) -> None:
        oid, extra = key
        entry = self._refs.get(oid)
        if entry is not None:
            entry[1].discard(extra)
            if not entry[1]:
                del self._refs[oid]

    def __len__(self) -> int:
        return len(self._lru)

    def clear(self) -> None:
        self._lru.clear()
        self._refs.clear()


def weak_lru_cache(maxsize: int | None = 1024) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Memoise ``fn(owner, *args)`` on the identity of ``owner`` (held weakly) and ``args``.

    ``owner`` is the first positional argument; when it is a tuple (a ``cond``'s branches),
    its first element is the owner and the others join the key. Other arguments must be
    hashable. The wrapper has ``cache_clear()`` and ``cache_len()``.

    Example:
        >>> @weak_lru_cache(maxsize=16)
        ... def double(f, n):
        ...     return f(n) * 2
        >>> double(abs, -3)
        6
    """

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        cache = WeakLRUCache(maxsize)

        @functools.wraps(fn)
        def memo(owner: Any, *args: Any) -> Any:
            if type(owner) is tuple and owner:
                key_owner, extra = owner[0], (owner[1:], args)
            else:
                key_owner, extra = owner, args
            hit = cache.get(key_owner, extra, _MISSING)
            if hit is _MISSING:
                hit = fn(owner, *args)
                cache.put(key_owner, extra, hit)
            return hit

        memo.cache_clear = cache.clear  # type: ignore[attr-defined]
        memo.cache_len = cache.__len__  # type: ignore[attr-defined]
        return memo

    return decorate
