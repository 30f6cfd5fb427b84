"""An idle worker touches the heap its first graph build will use, before that graph arrives.

Ours (issue 21; no reference document). A fresh worker's first build runs on memory the process
has never touched: every new page is a page fault, and on a VM that backs guest memory on first
touch one costs up to ~9 us (BENCHMARKS.md, session 11). A 141k-op training step's split,
SlimGraph and first-view Hierarchy touch ~180 MB (~45k faults) and took ~0.55 s in a fresh
process against ~0.39 s on a heap touched beforehand (session 13). A worker waits idle for its
first job (the pool starts its workers when a page lists the plugins), so it touches that memory
then, in the two allocators a build uses, and keeps it:

- **pymalloc** (Python objects up to 512 bytes: names, inputs, NodeDef encodings) takes memory
  in 1 MiB arenas and gives an arena back to the system once every object in it is freed.
  :func:`prefault` fills arenas with small objects and keeps one in every ``_PIN_EVERY``: each
  arena stays mapped with its pages touched, and its empty pools serve any object size.
- **glibc malloc** (larger blocks: numpy arrays, lists, the graph's encoding, protobuf's
  arena): :func:`malloc_env` is the worker's environment, which keeps blocks under
  ``MMAP_THRESHOLD`` in the heap (not a fresh ``mmap`` each) and does not give the heap's top
  back under ``trim threshold`` bytes; blocks touched and freed then stay in the heap.

TensorBoard's process has the same cost on the way to a first view: the read of the graph's blob
(``ingest.blobs``: the data provider copies it into one ``bytes``, 30 MB at 53k ops) lands on pages
a fresh reader thread has never touched (~7.5k faults, ~15 ms of a 20 ms read). We do not own that
process's environment, so :func:`warm_read_heap`, run on the reader thread once the workers start,
uses glibc's own dynamic threshold (``mallopt(3)``, ``M_MMAP_THRESHOLD``: freeing a block that
was ``mmap``-ed raises the threshold to its size, up to 32 MiB, and the trim threshold to twice
that): it frees one such block (untouched), then touches and frees a block just under it, which the
thread's heap keeps. A blob up to that size is then read into touched pages (the state
TensorBoard reaches by itself once it has freed a 32 MiB block; the heap keeps ~32 MiB).

After its first job the worker drops the pins and gives back what is free (:meth:`Prefault.release`,
``malloc_trim``), and after each later job what is free again, so what it holds once idle is its
graphs (what ``workers.WorkerPool`` measures against each worker's share).

Pre: :func:`malloc_env` was the process's environment at start (else only the pymalloc part is
kept). Post: :func:`prefault` touches at most ``nbytes`` and returns early once ``stop`` is set;
nothing here raises where glibc is absent (``malloc_trim`` is skipped).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import threading
from typing import Optional

__all__ = ["MMAP_THRESHOLD", "PREFAULT_BYTES", "READ_HEAP_BYTES", "Prefault", "malloc_env", "prefault", "trim",
           "warm_read_heap"]

PREFAULT_BYTES = 192 << 20
"""What an idle worker touches by default (at most half its share of the memory budget): a 141k-op
training step's first build needed ~115 MB of pymalloc arenas and ~80 MB of heap (session 13)."""

MMAP_THRESHOLD = 32 << 20  # glibc's own ceiling for its moving threshold: blocks up to it in the heap
_PYMALLOC_SHARE = 0.6  # of the bytes: the rest is glibc's heap
_OBJECT_BYTES = 448  # a ``bytes`` of this length is a 496-byte pymalloc block (33 in a 16 KiB pool)
_PIN_EVERY = 1024  # objects: ~31 pools, two or three pins in each 1 MiB arena
_HEAP_BLOCK = 4 << 20  # glibc blocks touched at a time (under MMAP_THRESHOLD: in the heap)


def malloc_env(nbytes: int) -> dict[str, str]:
    """The environment variables that make glibc keep what :func:`prefault` touches (empty when
    ``nbytes`` is 0)."""
    if nbytes <= 0:
        return {}
    heap = nbytes - int(nbytes * _PYMALLOC_SHARE)
    return {"MALLOC_ARENA_MAX": "1",  # one heap for all threads: the lanes build where the prefault touched
            "MALLOC_MMAP_THRESHOLD_": str(MMAP_THRESHOLD),
            "MALLOC_TRIM_THRESHOLD_": str(2 * heap + MMAP_THRESHOLD)}


class Prefault:
    """The pins keeping the touched pymalloc arenas, until :meth:`release`."""

    def __init__(self):
        self.pins: list = []
        self.touched = 0  # bytes

    def release(self) -> None:
        """Drop the pins (their arenas go back once empty) and give back the free heap."""
        self.pins = []
        trim()


def prefault(nbytes: int, stop: Optional[threading.Event] = None) -> Prefault:
    """Touch ``nbytes`` (pymalloc arenas, kept by pins, then glibc's heap, kept by the
    environment of :func:`malloc_env`), a block at a time, until ``stop`` is set."""
    done = Prefault()
    arenas = int(nbytes * _PYMALLOC_SHARE)
    batches: list = []  # all alive at once: a freed batch's pools would take the next one
    while done.touched < arenas and not (stop is not None and stop.is_set()):
        batches.append([bytes(_OBJECT_BYTES) for _ in range(_PIN_EVERY)])
        done.touched += _PIN_EVERY * (_OBJECT_BYTES + 48)
    done.pins = [batch[0] for batch in batches]
    del batches
    heap: list = []
    while done.touched < nbytes and not (stop is not None and stop.is_set()):
        heap.append(bytearray(_HEAP_BLOCK))  # zero-filled: every page written
        done.touched += _HEAP_BLOCK
    del heap  # freed into the heap's top, which ``MALLOC_TRIM_THRESHOLD_`` keeps
    return done


READ_HEAP_BYTES = MMAP_THRESHOLD - (128 << 10)
"""What :func:`warm_read_heap` leaves touched in the reader thread's heap: a blob up to this size
is read into it (its ``mmap``-ed block, 64 KiB larger, stays under glibc's 32 MiB ceiling)."""


def warm_read_heap(nbytes: int = READ_HEAP_BYTES) -> int:
    """Leave ``nbytes`` (at most :data:`READ_HEAP_BYTES`) of touched, free heap in the calling
    thread's glibc arena, where its next block up to that size is allocated; return the bytes
    touched. Pre: called on the thread that will read (``workers.WorkerPool``'s reader). Post:
    the process's mmap threshold is at least ``nbytes`` + 64 KiB (glibc's dynamic rule; nothing is
    set), so the block read next comes from this heap. Elsewhere than glibc the block is touched
    and freed to no effect."""
    nbytes = max(0, min(nbytes, READ_HEAP_BYTES))
    if not nbytes:
        return 0
    # ``bytes(n)`` is a calloc: an mmap-ed block comes zeroed and is not touched; freed, it raises
    # the threshold (and the trim threshold) to its size
    raise_threshold = bytes(nbytes + (64 << 10))
    del raise_threshold
    touched = bytearray(nbytes)  # under the threshold now: from this thread's heap, every page written
    del touched  # freed into the heap's top, which the raised trim threshold keeps
    return nbytes


_libc = None


def trim() -> None:
    """Give the free heap back to the system (glibc's ``malloc_trim(0)``; nothing elsewhere)."""
    global _libc
    if _libc is None:
        try:
            _libc = ctypes.CDLL(ctypes.util.find_library("c") or None)
            _libc.malloc_trim.argtypes = [ctypes.c_size_t]
        except (OSError, AttributeError, TypeError):  # no such library, or no malloc_trim in it
            _libc = False
    if _libc:
        _libc.malloc_trim(0)
