"""Aspect bench: open every group of the corpus graphs to depth 3 and print the worst
aspect ratios of what the user sees.

    python -m bench.bench_aspect RUN_DIR [RUN_DIR ...] [--depth 3] [--worst 10] [--limit 10]
    python -m bench.bench_aspect --open-times RUN_DIR ...   # time opening each group (layout speed)

Views, per graph, each built with :func:`tb_graph_plugin.layout.scene.build_scene` (the work of
``/scene``, hierarchy and layout cache as the plugin keeps them):

- the first view (``first_view_expanded``, what ``/scene`` without ``expanded`` answers) and the
  top level: the whole scene's box;
- every group at depth 1..``--depth`` below the root with at least 2 children, opened with its
  ancestors: the opened group's own box (the view a user zooms to after a double-click).

The aspect of a ``w x h`` box is ``max(w, h) / min(w, h)``; a view is *outside* when it exceeds 10
(every view should stay within 1:10..10:1). Prints one line per graph (views, outside, worst, seconds) and the
``--worst`` worst views overall.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

__all__ = ["aspect", "graph_views", "open_times", "main"]


def aspect(w: float, h: float) -> float:
    """``max(w, h) / min(w, h)`` (inf for a degenerate box)."""
    lo = min(w, h)
    return max(w, h) / lo if lo > 0 else float("inf")


def _hierarchy(path: str):
    from tb_graph_plugin.cli import load_graph_def
    from tb_graph_plugin.graph import build_slim_graph
    from tb_graph_plugin.hierarchy import build_hierarchy

    return build_hierarchy(build_slim_graph(load_graph_def(path)))


def graph_views(h, depth: int = 3, options=None):
    """Yield ``(view name, width, height, children)`` for every view of ``h`` (see module doc)."""
    from tb_graph_plugin import wire
    from tb_graph_plugin.layout.scene import LayoutCache, SceneOptions, build_scene
    from tb_graph_plugin.layout.scene.first_view import first_view_expanded

    o = options or SceneOptions()
    ref = wire.GraphRef("bench", "aspect", wire.GraphKind.OP)
    cache = LayoutCache()
    first = first_view_expanded(h)
    s = build_scene(h, ref, first, options=o, cache=cache)
    yield "<first view>", s.width, s.height, len(s.nodes)
    s = build_scene(h, ref, [], options=o, cache=cache)
    yield "<top level>", s.width, s.height, len(s.nodes)
    root = h.root.id
    stack = [(c, 1) for c in reversed(h.group(root).children) if h.is_group(c)]
    while stack:
        gid, d = stack.pop()
        g = h.group(gid)
        if len(g.children) >= 2:
            names = [h.name_of(a) for a in h.ancestors(gid) if a != root] + [g.name]
            s = build_scene(h, ref, names, options=o, cache=cache)
            box = next(n for n in s.nodes if n.name == g.name)
            yield g.name, box.width, box.height, len(g.children)
        if d < depth:
            stack.extend((c, d + 1) for c in reversed(g.children) if h.is_group(c))


def open_times(h, depth: int = 3) -> list[tuple[float, str, int]]:
    """``(seconds, group, children)`` of the one ``build_scene`` that opens each group at depth
    1..``depth`` with >= 2 children, its ancestors' layouts already cached (a fresh cache per group)."""
    from tb_graph_plugin import wire
    from tb_graph_plugin.layout.scene import LayoutCache, build_scene

    ref = wire.GraphRef("bench", "open", wire.GraphKind.OP)
    build_scene(h, ref, [], cache=LayoutCache())  # starts the dot worker
    root = h.root.id
    rows = []
    for g in h.walk_groups():
        if g.id == root or len(h.ancestors(g.id)) > depth or len(g.children) < 2:
            continue
        names = [h.name_of(a) for a in h.ancestors(g.id) if a != root][::-1] + [g.name]
        cache = LayoutCache()
        build_scene(h, ref, names[:-1], cache=cache)
        t = time.perf_counter()
        build_scene(h, ref, names, cache=cache)
        rows.append((time.perf_counter() - t, g.name, len(g.children)))
    return sorted(rows, reverse=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("runs", nargs="+", help="run directories (event files of one graph each)")
    ap.add_argument("--depth", type=int, default=3)
    ap.add_argument("--worst", type=int, default=10, help="list this many worst views overall")
    ap.add_argument("--limit", type=float, default=10.0, help="aspect beyond which a view is outside")
    ap.add_argument("--open-times", action="store_true", help="time opening each group instead")
    args = ap.parse_args(argv)
    if args.open_times:
        for path in args.runs:
            rows = open_times(_hierarchy(path), args.depth)
            print(f"{os.path.basename(path.rstrip('/'))}: {sum(r[0] for r in rows):.3f} s over {len(rows)} groups; "
                  f"slowest: " + ", ".join(f"`{n}` ({c} children) {t * 1000:.0f} ms" for t, n, c in rows[: args.worst]))
        return 0
    rows = []
    print("| graph | ops | views | outside 1:10..10:1 | worst aspect | worst view | layout s |")
    print("|---|---:|---:|---:|---:|---|---:|")
    total = outside = 0
    for path in args.runs:
        h = _hierarchy(path)
        t = time.perf_counter()
        views = [(os.path.basename(path.rstrip("/")),) + v for v in graph_views(h, args.depth)]
        dt = time.perf_counter() - t
        rows.extend(views)
        bad = [v for v in views if aspect(v[2], v[3]) > args.limit]
        worst = max(views, key=lambda v: aspect(v[2], v[3]))
        total += len(views)
        outside += len(bad)
        print(f"| {views[0][0]} | {h.root.cardinality:,} | {len(views)} | {len(bad)} | "
              f"{aspect(worst[2], worst[3]):.1f} | `{worst[1]}` {worst[2]:.0f} x {worst[3]:.0f} | {dt:.2f} |",
              flush=True)
    print(f"\ntotal: {total} views, {outside} outside 1:{args.limit:g}..{args.limit:g}:1\n")
    print("| graph | view | children | box px | aspect |")
    print("|---|---|---:|---|---:|")
    for run, name, w, hh, n in sorted(rows, key=lambda v: -aspect(v[2], v[3]))[: args.worst]:
        print(f"| {run} | `{name}` | {n:,} | {w:.0f} x {hh:.0f} | {aspect(w, hh):.1f} |")
    return 1 if outside else 0


if __name__ == "__main__":
    sys.exit(main())
