"""How ``--graph_explorer_cache_mb`` is shared out: one memory budget for TensorBoard
and the workers together.

==================================  ======  ==================================================
holder                              share   measured as
==================================  ======  ==================================================
parsed GraphDefs of runs (store)    1/4     ``ByteSize()`` of each cached proto
uploaded GraphDefs                  1/8     bytes uploaded (the newest upload is always kept)
finished answers (result cache)     1/8     JSON bytes, at most 256 MiB
built graphs in the workers         1/2     per worker: RSS growth over its RSS at start
                                            (before its first job, the heap it touched for
                                            it: ``prefault``, at most half this share);
                                            a worker past its share holding two or more
                                            graphs is recycled when idle (one graph bigger
                                            than the share alone is kept: it is in use)
==================================  ======  ==================================================

Post-condition: the shares sum to at most ``cache_bytes``. What is not in the budget (the stated
overhead, measured in BENCHMARKS.md "Memory"): TensorBoard itself and each worker's interpreter
and imports, the 32 MiB of heap TensorBoard's graph reader keeps touched
(``prefault.warm_read_heap``), protobuf's in-memory size beyond ``ByteSize()``, and the one job
per lane a worker may be running past its share before it is recycled.
"""

from __future__ import annotations

import dataclasses

__all__ = ["MemoryBudget", "split"]

MAX_RESULT_CACHE_BYTES = 256 << 20


@dataclasses.dataclass(frozen=True)
class MemoryBudget:
    store_bytes: int
    upload_bytes: int
    result_cache_bytes: int
    worker_graph_bytes: int  # per worker


def split(cache_bytes: int, n_workers: int) -> MemoryBudget:
    """The shares of ``cache_bytes`` for a pool of ``n_workers``.

    >>> split(512 << 20, 2).worker_graph_bytes >> 20
    128
    """
    return MemoryBudget(
        store_bytes=cache_bytes // 4,
        upload_bytes=cache_bytes // 8,
        result_cache_bytes=min(MAX_RESULT_CACHE_BYTES, cache_bytes // 8),
        worker_graph_bytes=cache_bytes // 2 // max(1, n_workers),
    )
