"""cache.LruCache: both bounds, oversized entries, stats, one load at a time per key."""

from __future__ import annotations

import threading
import time

import pytest

from tb_graph_plugin.cache import CacheStats, LruCache


def test_count_bound_evicts_least_recently_used_first():
    c = LruCache(max_entries=3)
    for k in "abc":
        c.put(k, k.upper())
    assert c.get("a") == "A"  # a is now the most recently used
    evicted = c.put("d", "D")
    assert evicted == [("b", "B")]
    assert c.keys() == ["c", "a", "d"]
    assert c.stats == CacheStats(hits=1, misses=0, evictions=1, size=3, entries=3)


def test_size_bound_sums_size_of_and_replacing_a_key_does_not_count_twice():
    c = LruCache(max_size=10, size_of=len)
    c.put("a", "xxxx")
    c.put("a", "xxxxxx")  # replaced: 6, not 10
    c.put("b", "xxxx")
    assert c.stats.size == 10 and len(c) == 2
    assert c.put("c", "x") == [("a", "xxxxxx")]
    assert c.stats.size == 5


def test_oversized_entry_dropped_or_kept_alone():
    dropped = LruCache(max_size=10, size_of=len)
    dropped.put("a", "xx")
    assert dropped.put("big", "x" * 11) == []
    assert "big" not in dropped and "a" in dropped
    kept = LruCache(max_size=10, size_of=len, keep_oversized=True)
    kept.put("a", "xx")
    assert kept.put("big", "x" * 11) == [("a", "xx")]
    assert kept.keys() == ["big"]


def test_misses_and_pop():
    c = LruCache(max_entries=2)
    assert c.get("nope", 7) == 7
    c.put("a", 1)
    assert c.pop("a") == 1 and c.pop("a") is None
    assert c.stats == CacheStats(hits=0, misses=1, evictions=0, size=0, entries=0)


def test_get_or_load_runs_one_load_per_key_for_concurrent_callers():
    c = LruCache(max_entries=4)
    calls = []

    def load():
        calls.append(1)
        time.sleep(0.05)
        return "v"

    got = []
    threads = [threading.Thread(target=lambda: got.append(c.get_or_load("k", load))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == ["v"] * 4 and len(calls) == 1
    assert c.stats.misses == 1 and c.stats.hits == 3


def test_get_or_load_failure_lets_the_next_caller_load():
    c = LruCache(max_entries=4)

    def boom():
        raise RuntimeError("no")

    with pytest.raises(RuntimeError):
        c.get_or_load("k", boom)
    assert c.get_or_load("k", lambda: 5) == 5 and c.stats.misses == 2
