"""A fresh worker's first build, on fresh memory vs on the heap an idle worker touched beforehand.

Usage::

    python -m bench.bench_prefault RUN_DIR [RUN_DIR ...] [--repeat 8] [--mb 192]

Each repeat, for each graph, alternating: a fresh child process (the imports of
``tasks.preload`` done; not its dot process, which a worker starts long before a build) reads the GraphDef's bytes from a file and builds what a first
view needs (``graph_encoding.split_graph_def``, ``build_slim_graph``,
``first_view.first_view_hierarchy``), once with the worker's malloc environment and
``api.prefault.prefault(--mb)`` run before it (what an idle worker does), once without either.
Printed: each child's seconds (read + split, SlimGraph, first-view Hierarchy, total) and page
faults during the build, then the medians of each side. The figures in BENCHMARKS.md (session 13)
come from this.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

CHILD = r"""
import gc, json, resource, sys, time
from tb_graph_plugin.api import prefault
from tb_graph_plugin.graph import build_slim_graph
from tb_graph_plugin.ingest import graph_encoding
from tb_graph_plugin.layout.scene.first_view import first_view_hierarchy
import tb_graph_plugin.hierarchy, tb_graph_plugin.layout.scene  # what ``tasks.preload`` imports
graph_encoding._projections()
nbytes = int(sys.argv[2])
kept = prefault.prefault(nbytes) if nbytes else None
gc.disable()
faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
t0 = time.perf_counter()
with open(sys.argv[1], "rb") as f:
    blob = f.read()
encoded = graph_encoding.split_graph_def(blob, "graph")
t1 = time.perf_counter()
slim = build_slim_graph(encoded)
t2 = time.perf_counter()
first_view_hierarchy(slim)
t3 = time.perf_counter()
print(json.dumps({"split": t1 - t0, "slim": t2 - t1, "first_view": t3 - t2, "total": t3 - t0,
                  "faults": resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults}))
"""


def _child(path: str, nbytes: int) -> dict:
    from tb_graph_plugin.api.worker_link import worker_env

    out = subprocess.run([sys.executable, "-c", CHILD, path, str(nbytes)], env=worker_env(nbytes),
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runs", nargs="+")
    parser.add_argument("--repeat", type=int, default=8)
    parser.add_argument("--mb", type=int, default=192)
    args = parser.parse_args(argv)
    from tb_graph_plugin.ingest.local import load_graph_def_from_path

    with tempfile.TemporaryDirectory() as tmp:
        for run in args.runs:
            path = os.path.join(tmp, "graph.pb")
            with open(path, "wb") as f:
                f.write(load_graph_def_from_path(run).SerializeToString())
            sides: dict[str, list] = {"fresh": [], "prefaulted": []}
            for _ in range(args.repeat):
                for side, nbytes in (("fresh", 0), ("prefaulted", args.mb << 20)):
                    r = _child(path, nbytes)
                    sides[side].append(r)
                    print(f"{os.path.basename(run.rstrip('/')):44s} {side:10s} " +
                          " ".join(f"{k} {v:.3f}" if k != "faults" else f"faults {v}" for k, v in r.items()))
            for side, rs in sides.items():
                print(f"{os.path.basename(run.rstrip('/')):44s} {side:10s} median " +
                      " ".join(f"{k} {statistics.median(r[k] for r in rs):.3f}" if k != "faults"
                               else f"faults {int(statistics.median(r[k] for r in rs))}" for k in rs[0]))


if __name__ == "__main__":
    main()
