"""Load test on loopback: concurrent clients opening and exploring different real graphs.

Usage::

    python -m bench.bench_load [--clients 20] [--seconds 30] [--kinds K ...] [--logdir DIR]
    python -m bench.bench_load --distinct-uploads 30 --ops 10000 --cache-mb 512 [--repeats 3]

Starts a real ``tensorboard`` process (``tests/tensorboard_process.py``, bound to 127.0.0.1,
``--load_fast false``) with the plugin on a logdir holding the real logs of ``--kinds``
(written by ``tests/logwriters.py`` through the cached ``RealLogs``, copied into one logdir),
then runs ``--clients`` threads for ``--seconds``. Each client loops: ``/graphs``, pick the next
graph (clients start on different graphs and rotate), open it, explore it, and repeat.

- *scene mode* (when ``/scene`` answers 200 on the first graph): ``/scene``, then ``/scene``
  with one more group expanded (a meta node of the previous scene), then ``/node`` of a node;
- *search mode* (otherwise): ``/search`` for a random two-letter regex (or ``.``: every node),
  then ``/node`` of up to three hits.

A 202 answer is followed by polling ``/job?id=`` until the job is done, then the request is
repeated (the finished result is cached server-side). Printed: requests, operations and their
p50/p99/max latency (an operation = one logical request including its 202 polling), the error
count (any status other than 200/202, or an exception: must be 0), and the server's memory:
``VmHWM`` (peak RSS) of the tensorboard process and of each worker child from
``/proc/<pid>/status``, plus the peak of the summed ``VmRSS`` sampled every 0.2 s.

*Memory mode* (``--distinct-uploads N``: memory stays within ``--graph_explorer_cache_mb`` plus a
stated overhead): one client opens N different graphs one after
another, as a user trying many models would: each a fresh ``--ops``-op GraphDef (distinct names,
a chain of blocks with attrs), uploaded, then ``/scene`` (first view), ``/search`` and ``/node``.
The server runs with ``--graph_explorer_cache_mb``; printed: the baseline (TensorBoard + idle
workers before the first upload, summed RSS), the peak summed RSS, and peak - baseline against
the budget; ``--repeats`` runs (a fresh server each) give medians.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.tensorboard_process import TensorBoardProcess  # noqa: E402

OURS = "/data/plugin/graph_explorer"
DEFAULT_KINDS = ("tf1_graph", "torch_cnn", "torch_transformer", "keras_callback", "tf2_keras_trace",
                 "tf2_multi_function_trace", "tf2_trace_profile", "keras_resnet50_trace")


def build_logdir(kinds, root: Path) -> Path:
    """One logdir with the run dirs of every kind (real logs, cached by ``tests.conftest.RealLogs``)."""
    from tests.conftest import CACHE_ROOT, RealLogs, _source_hash

    logs = RealLogs(CACHE_ROOT / _source_hash())
    for kind in kinds:
        src = logs.get(kind)
        for run_dir in sorted(p for p in src.iterdir() if p.is_dir()):
            dest = root / (run_dir.name if run_dir.name == kind else f"{kind}_{run_dir.name}")
            shutil.copytree(run_dir, dest)
    return root


# ------------------------------------------------------------------------------ memory


def _status(pid: int) -> dict[str, int]:
    out = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key in ("VmHWM", "VmRSS", "PPid"):
                    out[key] = int(value.split()[0])
    except OSError:
        pass
    return out


def descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            ppid = _status(int(entry)).get("PPid")
            if ppid is not None:
                children.setdefault(ppid, []).append(int(entry))
    found, stack = [], [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


class MemorySampler(threading.Thread):
    """Samples VmRSS/VmHWM of the server and its children (workers may be replaced)."""

    def __init__(self, pid: int, every_s: float = 0.2):
        super().__init__(daemon=True)
        self.pid, self.every_s = pid, every_s
        self.hwm_kb: dict[int, int] = {}
        self.peak_total_rss_kb = 0
        self.stop = threading.Event()

    def sample(self):
        total = 0
        for pid in [self.pid, *descendants(self.pid)]:
            status = _status(pid)
            if "VmHWM" in status:
                self.hwm_kb[pid] = max(self.hwm_kb.get(pid, 0), status["VmHWM"])
                total += status.get("VmRSS", 0)
        self.peak_total_rss_kb = max(self.peak_total_rss_kb, total)

    def run(self):
        while not self.stop.is_set():
            self.sample()
            self.stop.wait(self.every_s)


# ------------------------------------------------------------------------------ clients


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.requests: list[float] = []
        self.operations: dict[str, list[float]] = {}
        self.errors: list[str] = []
        self.polls = 0

    def request(self, seconds: float):
        with self.lock:
            self.requests.append(seconds)

    def operation(self, name: str, seconds: float):
        with self.lock:
            self.operations.setdefault(name, []).append(seconds)

    def error(self, text: str):
        with self.lock:
            self.errors.append(text)


class Client:
    def __init__(self, base: str, stats: Stats, graphs: list[dict], index: int, scene_mode: bool, deadline: float):
        self.base, self.stats, self.graphs = base, stats, graphs
        self.index, self.scene_mode, self.deadline = index, scene_mode, deadline
        self.rng = random.Random(index)

    def get(self, path: str, params: dict | None = None):
        url = self.base + OURS + path + ("?" + urllib.parse.urlencode(params) if params else "")
        t = time.perf_counter()
        try:
            with urllib.request.urlopen(url, timeout=120) as r:
                status, body = r.status, r.read()
        except urllib.error.HTTPError as e:
            status, body = e.code, e.read()
        self.stats.request(time.perf_counter() - t)
        return status, body

    def op(self, name: str, path: str, params: dict):
        """One logical request: follow 202 with /job polling, then ask again. JSON or None."""
        t = time.perf_counter()
        for _ in range(2000):
            status, body = self.get(path, params)
            if status == 200:
                self.stats.operation(name, time.perf_counter() - t)
                return json.loads(body)
            if status != 202:
                self.stats.error(f"{path} {params} -> {status}: {body[:200]!r}")
                return None
            job = json.loads(body)
            while job["state"] == "running":
                time.sleep(0.05)
                self.stats.polls += 1
                status, body = self.get("/job", {"id": job["job_id"]})
                if status != 200:
                    self.stats.error(f"/job {job['job_id']} -> {status}: {body[:200]!r}")
                    return None
                job = json.loads(body)
            if job["state"] == "failed":
                self.stats.error(f"{path} {params} job failed: {job['error']}")
                return None
        self.stats.error(f"{path} {params}: never finished")
        return None

    def run(self):
        turn = self.index
        while time.monotonic() < self.deadline:
            if self.op("graphs", "/graphs", {}) is None:
                continue
            ref = self.graphs[turn % len(self.graphs)]
            turn += 1
            if self.scene_mode:
                self.explore_scene(ref)
            else:
                self.explore_search(ref)

    def explore_scene(self, ref: dict):
        scene = self.op("scene", "/scene", ref)
        if scene is None:
            return
        groups = [n["name"] for n in scene["nodes"] if n["kind"] in ("meta", "series")]
        if groups and time.monotonic() < self.deadline:
            expanded = [self.rng.choice(groups)]
            scene = self.op("expand", "/scene", dict(ref, expanded=json.dumps(expanded))) or scene
        ops = [n["name"] for n in scene["nodes"] if n["kind"] == "op"]
        if ops and time.monotonic() < self.deadline:
            self.op("node", "/node", dict(ref, name=self.rng.choice(ops)))

    def explore_search(self, ref: dict):
        # a fresh two-letter regex most of the time, so workers keep doing new searches
        q = "." if self.rng.random() < 0.2 else "".join(self.rng.choice("abcdefghilmnoprstu") for _ in range(2))
        hits = self.op("search", "/search", dict(ref, q=q))
        if hits is None:
            return
        for hit in self.rng.sample(hits["hits"], min(3, len(hits["hits"]))):
            if time.monotonic() >= self.deadline:
                return
            self.op("node", "/node", dict(ref, name=hit["name"]))


def graph_refs(listing: dict) -> list[dict]:
    refs = []
    for run in listing["runs"]:
        for tag in run["tags"]:
            kinds = (["op"] if tag["run_graph"] or tag["op_graph"] else []) + \
                    (["conceptual"] if tag["conceptual_graph"] else []) + \
                    (["profile"] if tag["profile"] else [])
            for kind in kinds:
                refs.append({"run": run["run"], "tag": tag["tag"], "kind": kind})
    return refs


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))] if values else float("nan")


def distinct_graph(index: int, ops: int) -> bytes:
    """A GraphDef of ``ops`` ops named apart from every other ``index``: blocks of 10 ops
    (MatMul, BiasAdd, Relu, ...) with dtype/shape attrs, each block reading the previous one."""
    from tensorboard.compat.proto import graph_pb2, types_pb2

    graph = graph_pb2.GraphDef()
    kinds = ("MatMul", "BiasAdd", "Relu", "Mul", "Add", "Identity", "Sub", "Tanh", "Sigmoid", "AddV2")
    prev = None
    for i in range(ops):
        block, j = divmod(i, 10)
        node = graph.node.add(name=f"model{index}/stage{block // 50}/block{block}/{kinds[j].lower()}_{j}",
                              op="Placeholder" if i == 0 else kinds[j])
        node.attr["T"].type = types_pb2.DT_FLOAT
        shape = node.attr["_output_shapes"].list.shape.add()
        for size in (-1, 64 + index % 7):
            shape.dim.add(size=size)
        if prev is not None:
            node.input.append(prev)
        prev = node.name
    return graph.SerializeToString()


def _summed_rss_kb(pid: int) -> int:
    return sum(_status(p).get("VmRSS", 0) for p in [pid, *descendants(pid)])


def memory_run(args, logdir: Path) -> dict:
    """One server, ``--distinct-uploads`` graphs opened one after another; figures in MB."""
    extra = ["--graph_explorer_cache_mb", str(args.cache_mb), "--graph_explorer_warmup", "false"]
    with TensorBoardProcess(logdir, extra_args=extra) as tb:
        client = Client(tb.url, Stats(), [], 0, True, time.monotonic() + 3600)
        blobs = [distinct_graph(i, args.ops) for i in range(args.distinct_uploads)]
        # Baseline: TensorBoard and its workers started (one tiny upload opened), nothing kept.
        tiny = distinct_graph(10_000, 10)
        req = urllib.request.Request(tb.url + OURS + "/upload?filename=tiny.pb", data=tiny, method="POST")
        ref = json.loads(urllib.request.urlopen(req, timeout=60).read())["graph"]
        client.op("scene", "/scene", {"run": ref["run"], "tag": ref["tag"]})
        time.sleep(1.0)  # let the workers' start-up settle before reading the baseline
        baseline_kb = _summed_rss_kb(tb.proc.pid)
        sampler = MemorySampler(tb.proc.pid)
        sampler.start()
        t0 = time.monotonic()
        for i, blob in enumerate(blobs):
            req = urllib.request.Request(tb.url + OURS + f"/upload?filename=g{i}.pb", data=blob, method="POST")
            ref = json.loads(urllib.request.urlopen(req, timeout=120).read())["graph"]
            params = {"run": ref["run"], "tag": ref["tag"]}
            client.op("scene", "/scene", params)
            client.op("search", "/search", dict(params, q="relu"))
            client.op("node", "/node", dict(params, name=f"model{i}/stage0/block0/relu_2"))
        elapsed = time.monotonic() - t0
        sampler.stop.set()
        sampler.join()
        sampler.sample()
        end_kb = _summed_rss_kb(tb.proc.pid)
        restarts = tb.output().count("recycled when idle")
    return {"baseline": baseline_kb / 1024, "peak": sampler.peak_total_rss_kb / 1024, "end": end_kb / 1024,
            "seconds": elapsed, "errors": client.stats.errors, "recycled": restarts}


def memory_main(args) -> int:
    tmp = Path(tempfile.mkdtemp(prefix="bench_mem_"))
    try:
        logdir = build_logdir(["tf1_graph"], tmp)  # a run with a graph, so the tab is enabled
        runs = [memory_run(args, logdir) for _ in range(args.repeats)]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    med = lambda key: statistics.median(r[key] for r in runs)  # noqa: E731
    for r in runs:
        print(f"  run: baseline {r['baseline']:.0f} MB, peak {r['peak']:.0f} MB, end {r['end']:.0f} MB, "
              f"peak-baseline {r['peak'] - r['baseline']:.0f} MB, {r['seconds']:.1f} s, errors {len(r['errors'])}")
        for text in r["errors"][:5]:
            print("    ", text)
    print(f"distinct uploads: {args.distinct_uploads} x {args.ops} ops; --graph_explorer_cache_mb {args.cache_mb}; "
          f"runs: {len(runs)} (medians)")
    print(f"baseline (tensorboard + idle workers) {med('baseline'):.0f} MB; peak summed RSS {med('peak'):.0f} MB; "
          f"at the end {med('end'):.0f} MB; peak - baseline {med('peak') - med('baseline'):.0f} MB "
          f"against a budget of {args.cache_mb} MB")
    return 1 if any(r["errors"] for r in runs) else 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--kinds", nargs="+", default=list(DEFAULT_KINDS))
    parser.add_argument("--logdir", help="serve this logdir instead of copying real logs")
    parser.add_argument("--mode", choices=["auto", "scene", "search"], default="auto")
    parser.add_argument("--distinct-uploads", type=int, default=0,
                        help="memory mode: open this many different uploaded graphs one after another")
    parser.add_argument("--ops", type=int, default=10_000, help="memory mode: ops per uploaded graph")
    parser.add_argument("--cache-mb", type=int, default=512, help="memory mode: --graph_explorer_cache_mb")
    parser.add_argument("--repeats", type=int, default=3, help="memory mode: servers started, for medians")
    args = parser.parse_args(argv)
    if args.distinct_uploads:
        return memory_main(args)

    tmp = None
    if args.logdir:
        logdir = Path(args.logdir)
    else:
        tmp = Path(tempfile.mkdtemp(prefix="bench_load_"))
        logdir = build_logdir(args.kinds, tmp)
    try:
        with TensorBoardProcess(logdir) as tb:
            listing = None
            for _ in range(100):  # the multiplexer loads runs in the background
                listing = tb.get_json(OURS + "/graphs")
                if len(listing["runs"]) >= len(list(p for p in logdir.iterdir() if p.is_dir())):
                    break
                time.sleep(0.5)
            refs = graph_refs(listing)
            stats = Stats()
            scene_mode = args.mode == "scene"
            if args.mode == "auto":
                probe = Client(tb.url, Stats(), refs, 0, True, time.monotonic() + 120)
                scene_mode = probe.op("probe", "/scene", refs[0]) is not None
                if not scene_mode:
                    print(f"/scene does not answer ({probe.stats.errors[0][:160]}); search mode", flush=True)
            sampler = MemorySampler(tb.proc.pid)
            sampler.start()
            deadline = time.monotonic() + args.seconds
            clients = [Client(tb.url, stats, refs, i, scene_mode, deadline) for i in range(args.clients)]
            threads = [threading.Thread(target=c.run, daemon=True) for c in clients]
            t0 = time.monotonic()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            elapsed = time.monotonic() - t0
            sampler.stop.set()
            sampler.join()
            sampler.sample()
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)

    ms = lambda s: f"{1000 * s:.0f}"  # noqa: E731
    print(f"graphs: {len(refs)} ({', '.join(sorted({r['run'] for r in refs}))})")
    print(f"mode: {'scene (open + expand + node)' if scene_mode else 'search + node'}; "
          f"clients: {args.clients}; wall: {elapsed:.1f} s")
    req = stats.requests
    print(f"requests: {len(req)} ({len(req) / elapsed:.1f}/s), latency ms p50 {ms(percentile(req, .5))} "
          f"p99 {ms(percentile(req, .99))} max {ms(max(req))}; /job polls: {stats.polls}")
    for name, values in sorted(stats.operations.items()):
        print(f"  op {name:7s} n={len(values):5d}  p50 {ms(percentile(values, .5)):>6s} ms  "
              f"p99 {ms(percentile(values, .99)):>6s} ms  max {ms(max(values)):>6s} ms")
    print(f"errors: {len(stats.errors)}")
    for text in stats.errors[:10]:
        print("  ", text)
    server_hwm = sampler.hwm_kb.get(tb.proc.pid, 0)
    workers = {pid: kb for pid, kb in sampler.hwm_kb.items() if pid != tb.proc.pid}
    print(f"memory: tensorboard VmHWM {server_hwm / 1024:.0f} MB; workers VmHWM "
          f"{', '.join(f'{kb / 1024:.0f}' for kb in sorted(workers.values(), reverse=True))} MB "
          f"({len(workers)} processes seen); peak summed VmRSS {sampler.peak_total_rss_kb / 1024:.0f} MB")
    return 1 if stats.errors else 0


if __name__ == "__main__":
    sys.exit(main())
