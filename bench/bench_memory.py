"""Resident memory of TensorBoard and our workers once a graph's first view has gone out.

Usage::

    python -m bench.bench_memory RUN_DIR [RUN_DIR ...] [--repeat 2] [--load-fast]

For each run directory (e.g. ``bench/_out/corpus/keras_transformer_towers``, ~1M ops, written by
``python -m bench.corpus keras_transformer_towers``): a fresh ``tensorboard`` process with this
checkout's plugin (warm-up off, so the page's request starts the build), the default graph's
first-view scene asked for (retried while it answers 202), then, 3 s after the answer (the
worker's after-the-first-answer work done: ``tasks.GraphState.settle``), the RSS of the
TensorBoard process, of each worker process and of the Rust data server (``--load-fast``); the
peak of their sum while the build ran (sampled every 0.25 s), and the seconds from the first
request to the first answer (``--max-ops`` raises ``--graph_explorer_max_ops``). The
scene's server stage timings are printed beside (they are noisy; ``bench_hierarchy`` is the
build's speed bench). Memory does not depend on the machine's load; run it alone anyway.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _rss_mb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS"):
                    return int(line.split()[1]) // 1024
    except OSError:
        pass
    return 0


def _descendants(pid: int) -> list[tuple[int, str]]:
    out = subprocess.run(["ps", "-o", "pid=,args=", "--ppid", str(pid)], capture_output=True, text=True).stdout
    found = []
    for line in out.strip().splitlines():
        child, args = line.split(None, 1)
        found.append((int(child), args))
        found += _descendants(int(child))
    return found


def _total_mb(pid: int) -> int:
    return _rss_mb(pid) + sum(_rss_mb(child) for child, _ in _descendants(pid))


def measure(run: Path, load_fast: bool, max_ops: int = 0) -> dict:
    sys.path.insert(0, str(REPO))
    from tests.tensorboard_process import TensorBoardProcess
    from tests.ui.bench_ui import server_timings

    extra = ["--graph_explorer_warmup=false"] + ([f"--graph_explorer_max_ops={max_ops}"] if max_ops else [])
    with TensorBoardProcess(run, load_fast=load_fast, min_runs=1, extra_args=extra, timeout_s=1800) as tb:
        timings = {}
        peak = [_total_mb(tb.proc.pid)]
        done = threading.Event()

        def sample() -> None:  # the peak of TensorBoard and its children while the build runs
            while not done.wait(0.25):
                peak.append(_total_mb(tb.proc.pid))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        start = time.perf_counter()
        for _ in range(900):  # a 1M-op build answers 202 for a while
            try:
                timings = server_timings(tb.url)
                break
            except KeyError:
                time.sleep(2)
        answered = time.perf_counter() - start
        time.sleep(3)
        done.set()
        sampler.join()
        workers, other = [], 0
        for pid, args in _descendants(tb.proc.pid):
            if "worker_process" in args:
                workers.append(_rss_mb(pid))
            elif "_dot_worker" not in args:
                other += _rss_mb(pid)  # the Rust data server with --load_fast
        return {"run": run.name, "tensorboard_mb": _rss_mb(tb.proc.pid), "workers_mb": workers,
                "data_server_mb": other, "peak_mb": max(peak), "answered_s": answered,
                "timings_ms": {k: round(v * 1000) for k, v in timings.items()}}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", type=Path, nargs="+")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--load-fast", action="store_true")
    parser.add_argument("--max-ops", type=int, default=0, help="--graph_explorer_max_ops for TensorBoard")
    args = parser.parse_args(argv)
    for run in args.runs:
        for _ in range(args.repeat):
            r = measure(run.resolve(), args.load_fast, args.max_ops)
            total = r["tensorboard_mb"] + sum(r["workers_mb"]) + r["data_server_mb"]
            print(f"{r['run']:40s} tensorboard {r['tensorboard_mb']:5d} MB  workers {r['workers_mb']} MB  "
                  f"data server {r['data_server_mb']} MB  total {total} MB  peak {r['peak_mb']} MB  "
                  f"first answer {r['answered_s']:.1f} s  {json.dumps(r['timings_ms'])}",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
