"""Benchmark GraphDef -> SlimGraph -> Hierarchy (templates included) on Keras transformer traces.

Usage::

    python -m bench.bench_hierarchy [--layers 9 48 128] [--repeat 5] [--corpus DIR] [--runs DIR ...]
                                    [--every-copy]

For each depth, the training-step trace written by ``python -m bench.corpus
keras_transformer_train_step_trace DIR --layers N`` (~10k, ~53k, ~140k ops) is read once
from its event file (``read s``: event file -> RunMetadata -> merged GraphDef, timed once,
not part of the build). Then ``--repeat`` times: the serialized GraphDef is split again
(``parse s``: ``ingest.graph_encoding.split_graph_def``, what a plugin worker does first: the
nodes' encodings and their columns, no whole parse) and ``build_slim_graph`` +
``build_hierarchy`` run on it (``build s``: the benchmarked number, wall median; ``cpu s``: its process-CPU median, steadier on a shared
machine). ``1st view s``: the median of ``first_view.first_view_hierarchy`` on the same SlimGraph
(what a worker builds before a graph's first view, issue 21), ``whole`` after it when that graph's
first view needs the whole Hierarchy; ``rest s``: the median of the whole build on that SlimGraph
right after that first view (what a worker builds once the first view has gone out: an expand
clicked at once waits for it), ``-`` where the first view was the whole build. Printed: ops/second, ``us/op`` (build time per op: flat when the cost grows
linearly), per-phase medians (``--phases``), the peak Python heap of one extra build under
``tracemalloc`` (plus the process max RSS). Missing corpus entries are written first, each
in its own process. ``--runs`` adds run directories read the same way (the 1M-op towers:
``bench/_out/corpus/keras_transformer_towers``); ``--every-copy`` builds with
``HierarchyOptions(replicate_copies=False)`` (exact copies each grouped, ``hierarchy.replicate``).
"""

from __future__ import annotations

import argparse
import gc
import resource
import statistics
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
KIND = "keras_transformer_train_step_trace"


def _ensure(corpus: Path, layers: int) -> Path:
    run = corpus / f"{KIND}_L{layers}"
    if not run.is_dir():
        subprocess.run([sys.executable, "-m", "bench.corpus", KIND, str(corpus), "--layers",
                        str(layers)], cwd=REPO, check=True)
    return run


OPTIONS: dict = {}  # HierarchyOptions fields (``--every-copy``)


def _build(graph_def):
    from tb_graph_plugin.graph import build_slim_graph
    from tb_graph_plugin.hierarchy import HierarchyOptions, build_hierarchy

    slim = build_slim_graph(graph_def)
    return build_hierarchy(slim, HierarchyOptions(**OPTIONS))


def bench_one(run: Path, repeat: int) -> dict:
    from tb_graph_plugin.cli import load_graph_def
    from tb_graph_plugin.ingest.graph_encoding import split_graph_def
    from tb_graph_plugin.layout.scene.first_view import first_view_hierarchy

    t0 = time.perf_counter()
    graph_def = load_graph_def(str(run))
    read_s = time.perf_counter() - t0
    blob = graph_def.SerializeToString()
    del graph_def
    from tb_graph_plugin.hierarchy import HierarchyOptions, build_hierarchy

    times, cpus, parses, phases, first_views, rests = [], [], [], {}, [], []
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        graph_def = split_graph_def(blob, run.name)
        parses.append(time.perf_counter() - t0)
        c0, t0 = time.process_time(), time.perf_counter()
        h = _build(graph_def)
        times.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
        for k, v in {**{f"slim.{k}": v for k, v in h.slim.timings.items()},
                     **{f"h.{k}": v for k, v in h.timings.items()}}.items():
            phases.setdefault(k, []).append(v)
        slim = h.slim
        del h
        gc.collect()
        t0 = time.perf_counter()
        first = first_view_hierarchy(slim)
        first_views.append(time.perf_counter() - t0)
        whole = first.grouped_only is None
        del first
        if not whole:
            gc.collect()
            t0 = time.perf_counter()
            build_hierarchy(slim, HierarchyOptions(**OPTIONS))
            rests.append(time.perf_counter() - t0)
        del slim
    n_ops = len(graph_def.nodes) + sum(len(f.node_def) for f in graph_def.library.function)
    gc.collect()
    tracemalloc.start()
    h = _build(graph_def)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    median = statistics.median(times)
    return {
        "run": run.name, "ops": n_ops, "groups": len(h.groups), "series": len(h.series_nodes()),
        "templates": len(h.templates), "median_s": median, "min_s": min(times),
        "cpu_s": statistics.median(cpus), "read_s": read_s, "parse_s": statistics.median(parses),
        "ops_per_s": n_ops / median, "us_per_op": median / n_ops * 1e6, "peak_heap_mb": peak / 1e6,
        "phases": {k: statistics.median(v) for k, v in phases.items()},
        "first_view_s": statistics.median(first_views), "first_view_whole": whole,
        "rest_s": statistics.median(rests) if rests else None,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, nargs="*", default=[9, 48, 128])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--corpus", type=Path, default=REPO / "bench" / "_out" / "corpus")
    parser.add_argument("--phases", action="store_true", help="print per-phase medians")
    parser.add_argument("--runs", type=Path, nargs="*", default=[], help="more run directories")
    parser.add_argument("--every-copy", action="store_true", help="group each exact copy (no replication)")
    args = parser.parse_args(argv)
    if args.every_copy:
        OPTIONS["replicate_copies"] = False
    from tensorboard.compat import tf  # import TF (event-file reading) before any timed read

    getattr(tf, "__version__", None)
    print(f"{'run':42s} {'ops':>7s} {'read s':>7s} {'parse s':>7s} {'build s':>8s} {'min s':>7s} "
          f"{'cpu s':>7s} {'ops/s':>8s} {'us/op':>6s} {'heap MB':>8s} {'groups':>7s} {'series':>6s} "
          f"{'tmpls':>6s} {'1st view s':>10s} {'rest s':>6s}")
    for run in [*(_ensure(args.corpus, layers) for layers in args.layers), *args.runs]:
        r = bench_one(run, args.repeat)
        print(f"{r['run']:42s} {r['ops']:7d} {r['read_s']:7.3f} {r['parse_s']:7.3f} {r['median_s']:8.3f} "
              f"{r['min_s']:7.3f} {r['cpu_s']:7.3f} {r['ops_per_s']:8.0f} {r['us_per_op']:6.2f} "
              f"{r['peak_heap_mb']:8.1f} {r['groups']:7d} {r['series']:6d} {r['templates']:6d} "
              f"{r['first_view_s']:10.3f} " + (" whole" if r["rest_s"] is None else f"{r['rest_s']:6.3f}"), flush=True)
        if args.phases:
            print("   " + " ".join(f"{k}={v * 1000:.0f}ms" for k, v in r["phases"].items()))
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"process max RSS {rss:.0f} MB (includes the split GraphDefs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
