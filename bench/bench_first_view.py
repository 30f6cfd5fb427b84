"""First view bench: how long the first view's layout takes and whether it fits the window (issue 23).

    python -m bench.bench_first_view PATH ... [--repeat 5]

For every graph under the paths (as ``bench.fingerprint`` finds them), with the hierarchy built
once: the median time of ``build_scene(h, ref, first_view_expanded(h))`` on a fresh
``LayoutCache`` (what a worker does for a graph's first ``/scene``: the first view's group
layouts, and, since issue 23, the trials of ``layout/scene/fit.py`` when it does not fit), the
main graph's size (world px), and the scale at which it fits TensorBoard's 1083 x 771 canvas
(12 px margins; op labels are readable, >= 9 px, from 9 / 7 = 1.29 on, group labels from 1.0).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

CANVAS = (1083.0, 771.0)
PAD = 12.0


def main(argv=None) -> int:
    from bench.fingerprint import _graphs
    from tb_graph_plugin.graph import build_slim_graph
    from tb_graph_plugin.hierarchy import build_hierarchy
    from tb_graph_plugin.layout.scene import LayoutCache, build_scene
    from tb_graph_plugin.layout.scene.first_view import first_view_expanded

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    print(f"{'graph':58s} {'ops':>6s} {'first view ms':>13s} {'main w x h':>12s} {'fit scale':>9s} ops shown")
    for path in args.paths:
        for label, (ref, graph_def) in _graphs(path):
            h = build_hierarchy(build_slim_graph(graph_def))
            expanded = first_view_expanded(h)
            times, scene = [], None
            for _ in range(args.repeat):
                t = time.perf_counter()
                scene = build_scene(h, ref, expanded, cache=LayoutCache())
                times.append(time.perf_counter() - t)
            main = [n for n in scene.nodes if not n.extracted and n.parent is None]
            w = max(n.x + n.width / 2 for n in main) - min(n.x - n.width / 2 for n in main)
            ht = max(n.y + n.height / 2 for n in main) - min(n.y - n.height / 2 for n in main)
            k = min((CANVAS[0] - 2 * PAD) / w, (CANVAS[1] - 2 * PAD) / ht, 1.5)
            ops = sum(1 for n in scene.nodes if n.kind.value == "op")
            name = label.replace("tests/_artifacts/logs/", "")[-58:]
            print(f"{name:58s} {h.root.cardinality:6d} {statistics.median(times) * 1e3:13.1f} "
                  f"{w:5.0f} x {ht:5.0f} {k:9.2f} {ops}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
