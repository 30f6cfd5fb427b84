"""A graph's encoding handed to a busy worker: seconds through the pipe, default vs widened.

Usage::

    python -m bench.bench_hand_off [--mb 165] [--repeat 3]

The way ``api/worker_link.py`` sends a job (one pickle on the worker's stdin, read by the
worker's main thread with ``pickle.load``) with ``--mb`` megabytes of graph (165: a 1M-op
training step), to a child process whose other thread holds the GIL meanwhile (as a worker
building another graph on its other lane, or still importing, does). Each repeat: a fresh
child on a default pipe (64 KiB on Linux) with Python's default switch interval (5 ms), one on a
pipe widened by ``worker_link._widen_pipe``, and one widened with the worker's switch interval
(``worker_process.SWITCH_INTERVAL_S``: what a worker does); printed: seconds from the send to the
child's unpickled message, and the median of each.
"""

from __future__ import annotations

import argparse
import os
import pickle
import statistics
import subprocess
import sys
import time

CHILD = r"""
import pickle, sys, threading, time
if len(sys.argv) > 1:
    sys.setswitchinterval(float(sys.argv[1]))
def busy():  # pure-Python work holding the GIL between switch intervals
    end = time.time() + 60
    while time.time() < end:
        sum(range(1000))
threading.Thread(target=busy, daemon=True).start()
sent_at, _ = pickle.load(sys.stdin.buffer)
sys.stdout.write(repr(time.time() - sent_at))
"""


def hand_off(blob: bytes, widen: bool, switch_s: float | None = None) -> float:
    from tb_graph_plugin.api.worker_link import _widen_pipe

    extra = [] if switch_s is None else [str(switch_s)]
    child = subprocess.Popen([sys.executable, "-c", CHILD, *extra], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    if widen:
        _widen_pipe(child.stdin)
    time.sleep(0.3)  # the busy thread running
    pickle.dump((time.time(), blob), child.stdin, protocol=pickle.HIGHEST_PROTOCOL)
    child.stdin.close()
    out = child.stdout.read()
    child.kill()
    child.wait()
    return float(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=165)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    blob = os.urandom(args.mb << 20)
    from tb_graph_plugin.api.worker_process import SWITCH_INTERVAL_S

    runs = (("default pipe", False, None), ("widened pipe", True, None),
            (f"widened pipe, {SWITCH_INTERVAL_S * 1000:g} ms switch interval", True, SWITCH_INTERVAL_S))
    times: dict[str, list[float]] = {label: [] for label, _, _ in runs}
    for _ in range(args.repeat):
        for label, widen, switch_s in runs:
            times[label].append(hand_off(blob, widen, switch_s))
            print(f"{label}: {times[label][-1]:.3f} s", flush=True)
    for label, ts in times.items():
        print(f"{label}: median {statistics.median(ts):.3f} s over {len(ts)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
