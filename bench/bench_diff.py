"""``/diff`` time on big graphs: the structural diff of two built Hierarchies.

Usage::

    python -m bench.bench_diff A_LOGDIR B_LOGDIR [--repeat 5]

Reads each logdir's default graph with the plugin's own reading code (``ingest.local``), builds
SlimGraph + Hierarchy once (what a worker holds; timed apart, not part of the diff), then times
``diff.diff_hierarchies`` ``--repeat`` times: warm = both Hierarchies built, the work the
``diff`` task does once its graphs are held. Also times serialising the answer to JSON (what the
task returns) and the diff of A against itself (every node matched by name). Printed: median and
max seconds, the per-step timings of the last run, the counts.

``--renamed``: also time A against a copy of A whose ops with inputs are all renamed ``p/<name>``
(the scope-rename case: only the source ops keep their names).

``--route``: also time ``GET /diff`` through a real TensorBoard app (``tests.tb_app.TbApp``, werkzeug
client, worker processes) over a temporary logdir linking both runs: the first request (a worker
reads, parses and builds both graphs, then diffs) and a repeated one (answered from the job cache).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tb_graph_plugin import wire  # noqa: E402
from tb_graph_plugin.diff import diff_hierarchies  # noqa: E402
from tb_graph_plugin.graph import build_slim_graph  # noqa: E402
from tb_graph_plugin.hierarchy import build_hierarchy  # noqa: E402
from tb_graph_plugin.ingest.local import load_graph_def_from_path  # noqa: E402


def _timed(fn, repeat):
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return out, statistics.median(times), max(times)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--route", action="store_true", help="also time GET /diff through TensorBoard")
    parser.add_argument("--renamed", action="store_true", help="also diff A against A with its ops renamed p/<name>")
    args = parser.parse_args(argv)
    if args.route:
        _route(args.a, args.b)
    hs = []
    for path in (args.a, args.b):
        t = time.perf_counter()
        h = build_hierarchy(build_slim_graph(load_graph_def_from_path(path)))
        hs.append(h)
        print(f"{path}: {h.n_ops:,} ops, {len(h.groups):,} groups, read+built in {time.perf_counter() - t:.1f} s")
    a, b = hs
    d, med, mx = _timed(lambda: diff_hierarchies(a, b), args.repeat)
    print(f"diff A->B: median {med:.3f} s (max {mx:.3f}) over {args.repeat}")
    print(f"  steps (last run): {d.stats['timings_s']}")
    print(f"  matched: {d.matched}  counts: {d.counts}")
    _, med_j, _ = _timed(lambda: wire.to_json(d), args.repeat)
    print(f"  to_json: median {med_j:.3f} s ({len(wire.to_json(d)) / 1e6:.1f} MB)")
    d_same, med_s, mx_s = _timed(lambda: diff_hierarchies(a, a), args.repeat)
    print(f"diff A->A: median {med_s:.3f} s (max {mx_s:.3f}); same={d_same.same}")
    if args.renamed:
        r = build_hierarchy(build_slim_graph(_renamed(load_graph_def_from_path(args.a))))
        d_r, med_r, mx_r = _timed(lambda: diff_hierarchies(a, r), args.repeat)
        print(f"diff A->A renamed p/: median {med_r:.3f} s (max {mx_r:.3f}); matched {d_r.matched}; ops {d_r.counts['ops']}")
    return 0


def _renamed(graph_def):
    """A copy with every op that has inputs named ``p/<name>`` (inputs renamed to match)."""
    from tensorboard.compat.proto import graph_pb2

    keep = {n.name for n in graph_def.node if not n.input}
    out = graph_pb2.GraphDef()
    out.CopyFrom(graph_def)

    def rename(x: str) -> str:
        control = x.startswith("^")
        bare = x[1:] if control else x
        return x if bare.split(":")[0] in keep else ("^" if control else "") + "p/" + bare

    for n in out.node:
        if n.name not in keep:
            n.name = "p/" + n.name
        inputs = [rename(i) for i in n.input]
        del n.input[:]
        n.input.extend(inputs)
    return out


def _route(a: str, b: str) -> None:
    import json
    import os
    import tempfile

    from tests.tb_app import OURS, TbApp

    with tempfile.TemporaryDirectory() as logdir:
        os.symlink(os.path.abspath(a), os.path.join(logdir, "A"))
        os.symlink(os.path.abspath(b), os.path.join(logdir, "B"))
        app = TbApp(logdir)
        try:
            tags = {r["run"]: r["tags"][0]["tag"] for r in app.json(f"{OURS}/graphs")["runs"]}
            params = dict(run="B", tag=tags["B"], base_run="A", base_tag=tags["A"], wait="10")
            for label in ("first (build both + diff)", "repeated (job cache)"):
                t = time.perf_counter()
                r = app.get(f"{OURS}/diff", **params)
                while r.status_code == 202:
                    r = app.get(f"{OURS}/diff", **params)
                body = json.loads(r.get_data())
                print(f"GET /diff {label}: {time.perf_counter() - t:.2f} s, HTTP {r.status_code}, "
                      f"{len(r.get_data()) / 1e6:.1f} MB, diff step {body['stats']['timings_s']['total']:.2f} s in the worker")
        finally:
            app.ours.pool.close()


if __name__ == "__main__":
    sys.exit(main())
