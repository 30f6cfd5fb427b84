"""One cache abstraction: a thread-safe, size-bounded LRU with stats.

Owned by the object that needs it and passed explicitly (a worker's graphs, a graph's layouts,
the GraphDefs of a data provider): the package keeps no module-level cache.

Bounds: at most ``max_entries`` entries and at most ``max_size`` summed ``size_of(value)``
(each ``None``: unbounded). Post-conditions of :meth:`LruCache.put`: the least recently used
entries are evicted first until both bounds hold, never the entry just put; an entry whose own
size exceeds ``max_size`` is not kept at all unless ``keep_oversized`` (then it is kept alone).
:meth:`LruCache.get_or_load` calls ``load`` at most once at a time per key: a second caller
waits for the first and gets its value (if the first load raised, the waiter loads itself).

Example::

    >>> c = LruCache(max_entries=2)
    >>> _ = c.put("a", 1), c.put("b", 2), c.get("a"), c.put("c", 3)
    >>> sorted(c.keys()), c.get("b")
    (['a', 'c'], None)
    >>> c.stats
    CacheStats(hits=1, misses=1, evictions=1, size=2, entries=2)
"""

from __future__ import annotations

import collections
import dataclasses
import threading
from typing import Callable, Generic, Hashable, Iterator, Optional, TypeVar

__all__ = ["LruCache", "CacheStats"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


@dataclasses.dataclass(frozen=True)
class CacheStats:
    hits: int
    misses: int
    evictions: int
    size: int  # summed size_of of the entries kept (their count without size_of)
    entries: int


class LruCache(Generic[K, V]):
    def __init__(self, max_entries: Optional[int] = None, max_size: Optional[int] = None,
                 size_of: Optional[Callable[[V], int]] = None, keep_oversized: bool = False):
        self.max_entries = max_entries
        self.max_size = max_size
        self._size_of = size_of
        self._keep_oversized = keep_oversized
        self._entries: "collections.OrderedDict[K, tuple[V, int]]" = collections.OrderedDict()
        self._size = 0
        self._lock = threading.Lock()
        self._loading: dict[K, threading.Event] = {}
        self.hits = self.misses = self.evictions = 0

    @property
    def stats(self) -> CacheStats:
        with self._lock:
            return CacheStats(self.hits, self.misses, self.evictions, self._size, len(self._entries))

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: K) -> bool:
        """Held (no LRU touch, not counted in the stats)."""
        return key in self._entries

    def keys(self) -> list[K]:
        """Held keys, least recently used first."""
        with self._lock:
            return list(self._entries)

    def __iter__(self) -> Iterator[K]:
        return iter(self.keys())

    def get(self, key: K, default: Optional[V] = None) -> Optional[V]:
        """The value under ``key`` (now the most recently used), else ``default``."""
        with self._lock:
            got = self._entries.get(key)
            if got is None:
                self.misses += 1
                return default
            self._entries.move_to_end(key)
            self.hits += 1
            return got[0]

    def put(self, key: K, value: V) -> list[tuple[K, V]]:
        """Keep ``value`` under ``key`` as the most recently used; returns the evicted entries."""
        size = self._size_of(value) if self._size_of is not None else 1
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._size -= old[1]
            if self.max_size is not None and size > self.max_size and not self._keep_oversized:
                return [(key, old[0])] if old is not None else []
            self._entries[key] = (value, size)
            self._size += size
            return self._evict()

    def _evict(self) -> list[tuple[K, V]]:
        evicted = []
        while len(self._entries) > 1 and (
                (self.max_entries is not None and len(self._entries) > self.max_entries)
                or (self.max_size is not None and self._size > self.max_size)):
            key, (value, size) = self._entries.popitem(last=False)
            self._size -= size
            self.evictions += 1
            evicted.append((key, value))
        return evicted

    def pop(self, key: K, default: Optional[V] = None) -> Optional[V]:
        with self._lock:
            got = self._entries.pop(key, None)
            if got is None:
                return default
            self._size -= got[1]
            return got[0]

    def get_or_load(self, key: K, load: Callable[[], V]) -> V:
        """The value under ``key``, loaded (and kept) if absent; one load at a time per key."""
        while True:
            with self._lock:
                got = self._entries.get(key)
                if got is not None:
                    self._entries.move_to_end(key)
                    self.hits += 1
                    return got[0]
                waiting = self._loading.get(key)
                if waiting is None:
                    self.misses += 1
                    done = self._loading[key] = threading.Event()
                    break
            waiting.wait()
        try:
            value = load()
            self.put(key, value)
            return value
        finally:
            with self._lock:
                del self._loading[key]
            done.set()

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._size = 0
