"""A thread-safe LRU cache with a byte budget, where concurrent callers of one key share one load.

Post-conditions: ``get_or_load(key, load)`` calls ``load`` at most once at a time per key (a
second caller waits for the first and gets its value; if the first load raised, the waiter
loads again itself); entries are evicted
least-recently-used first once the summed ``size_of`` exceeds ``max_bytes`` (an entry larger
than the whole budget is returned but not kept).
"""

from __future__ import annotations

import collections
import threading
from typing import Any, Callable, Hashable

__all__ = ["LruCache"]


class LruCache:
    def __init__(self, max_bytes: int, size_of: Callable[[Any], int]):
        self._max_bytes = max_bytes
        self._size_of = size_of
        self._entries: "collections.OrderedDict[Hashable, tuple[Any, int]]" = collections.OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self._loading: dict[Hashable, threading.Event] = {}
        self.loads = 0  # how many times a loader ran (observable by tests)

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    @property
    def bytes(self) -> int:
        return self._bytes

    def get_or_load(self, key: Hashable, load: Callable[[], Any]) -> Any:
        while True:
            with self._lock:
                if key in self._entries:
                    self._entries.move_to_end(key)
                    return self._entries[key][0]
                waiting = self._loading.get(key)
                if waiting is None:
                    done = self._loading[key] = threading.Event()
                    break
            waiting.wait()
        try:
            self.loads += 1
            value = load()
            self._put(key, value)
            return value
        finally:
            with self._lock:
                del self._loading[key]
            done.set()

    def _put(self, key: Hashable, value: Any) -> None:
        size = self._size_of(value)
        with self._lock:
            if size > self._max_bytes:
                return
            self._entries[key] = (value, size)
            self._bytes += size
            while self._bytes > self._max_bytes:
                _, (_, evicted) = self._entries.popitem(last=False)
                self._bytes -= evicted

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0
