"""An idle worker touches the heap its first build will use (``api.prefault``)."""

from __future__ import annotations

import platform
import subprocess
import sys
import textwrap
import threading

import pytest

from tb_graph_plugin.api import prefault
from tb_graph_plugin.api.worker_link import worker_env
from tb_graph_plugin.api.worker_process import _Heap

glibc_linux = pytest.mark.skipif(not (sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"),
                                 reason="the heap part keeps pages through glibc's malloc tunables")


def test_no_bytes_no_environment():
    assert prefault.malloc_env(0) == {}


def test_the_environment_keeps_what_the_heap_part_touches():
    env = prefault.malloc_env(192 << 20)
    assert env["MALLOC_ARENA_MAX"] == "1"  # the lanes' threads allocate in the heap the prefault touched
    heap_part = (192 << 20) - int((192 << 20) * prefault._PYMALLOC_SHARE)
    assert int(env["MALLOC_TRIM_THRESHOLD_"]) > heap_part  # a top of exactly the threshold is trimmed
    assert int(env["MALLOC_MMAP_THRESHOLD_"]) > prefault._HEAP_BLOCK  # the heap part's blocks come from the heap


def test_a_job_arriving_stops_it():
    stop = threading.Event()
    stop.set()
    touched = prefault.prefault(64 << 20, stop)
    assert touched.touched == 0 and touched.pins == []


def test_it_touches_what_it_is_asked_and_pins_the_arenas():
    touched = prefault.prefault(16 << 20)
    assert 16 << 20 <= touched.touched < (16 << 20) + prefault._HEAP_BLOCK + (1 << 20)
    # one pin per ``_PIN_EVERY`` objects of the pymalloc part (~0.5 MiB each)
    assert len(touched.pins) == -(-int((16 << 20) * prefault._PYMALLOC_SHARE) // (prefault._PIN_EVERY * 496))
    touched.release()
    assert touched.pins == []


def test_the_first_job_gives_it_back_and_later_jobs_trim():
    heap = _Heap()
    heap.prefault(8 << 20)
    assert heap._touched is not None and heap._touched.pins
    heap.give_back()
    assert heap._touched is None and heap.stop.is_set()
    heap.give_back()  # nothing held: a trim only
    heap.prefault(8 << 20)  # after a give-back: stopped at once, nothing kept
    assert heap._touched is None


_WORKLOAD = textwrap.dedent("""
    import resource, sys
    from tb_graph_plugin.api import prefault
    if sys.argv[1] == "1":
        kept = prefault.prefault(96 << 20)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    names = [("scope/layer_%d/" % i) * 2 for i in range(300_000)]  # ~40 MB of small objects
    arrays = [bytearray(1 << 20) for _ in range(24)]  # 24 MB of larger blocks
    print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
""")


def _faults(with_prefault: bool) -> int:
    out = subprocess.run([sys.executable, "-c", _WORKLOAD, "1" if with_prefault else "0"], env=worker_env(96 << 20),
                         capture_output=True, text=True, check=True, timeout=60)
    return int(out.stdout.split()[-1])


@glibc_linux
def test_a_build_after_it_takes_no_fresh_pages():
    """What a build allocates after the prefault (small objects and large blocks) lands on pages
    already touched: a twentieth of the page faults, or fewer, of a fresh process doing the same."""
    cold, warm = _faults(False), _faults(True)
    assert cold > 10_000  # ~64 MB of fresh pages
    assert warm * 20 < cold, (warm, cold)


_READ = textwrap.dedent("""
    import resource, sys, threading
    from tb_graph_plugin.api import prefault
    blob = bytes(range(256)) * (28 << 12)  # 28 MiB, as a data provider's blob
    out = []
    def read():
        touched = prefault.warm_read_heap() if sys.argv[1] == "1" else 0
        before = resource.getrusage(resource.RUSAGE_THREAD).ru_minflt
        copy = bytes(memoryview(blob))  # the read's copy
        out.append((touched, resource.getrusage(resource.RUSAGE_THREAD).ru_minflt - before))
    thread = threading.Thread(target=read)
    thread.start()
    thread.join()
    print(*out[0])
""")


def _read_faults(warm: bool) -> tuple[int, int]:
    out = subprocess.run([sys.executable, "-c", _READ, "1" if warm else "0"], capture_output=True, text=True,
                         check=True, timeout=60)
    touched, faults = map(int, out.stdout.split())
    return touched, faults


@glibc_linux
def test_a_blob_read_after_the_reader_warmed_its_heap_takes_no_fresh_pages():
    """``warm_read_heap`` on the reader thread of a fresh process (TensorBoard's, whose environment
    we do not set): a 28 MiB copy made there afterwards lands on touched pages; without it, on
    ~7k fresh ones."""
    touched, faults = _read_faults(True)
    assert touched == prefault.READ_HEAP_BYTES
    _, cold = _read_faults(False)
    assert cold > 5000, cold  # the baseline really faults (28 MiB = 7168 pages)
    assert faults < cold // 20, (faults, cold)


def test_warming_the_read_heap_touches_at_most_its_ceiling():
    assert prefault.warm_read_heap(0) == 0
    assert prefault.warm_read_heap(1 << 20) == 1 << 20
    assert prefault.warm_read_heap(1 << 30) == prefault.READ_HEAP_BYTES
    assert prefault.READ_HEAP_BYTES + (64 << 10) < prefault.MMAP_THRESHOLD  # its mmap-ed block raises glibc's threshold
