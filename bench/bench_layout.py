"""Layout bench: crossings and time of our engines (fast, dot, auto) against dagre 0.8.5.

    python -m bench.bench_layout [--quick] [--dagre-timeout 60] [--only NAME]
    python -m bench.bench_layout --corpus LOGDIR_ROOT [--kinds RUN ...]  # every group of real graphs
    python -m bench.bench_layout --scene RUN_DIR ...      # open + expand the biggest group
    python -m bench.bench_layout --scene RUN_DIR --split-max-children 100000  # ... unsplit

The synthetic table also runs igraph's ``layout_sugiyama`` when igraph is installed (the
fast path on 15k nodes should have no more crossings than igraph's).

Instances are random-but-realistic layered graphs from :mod:`bench.generators` (ResNet-like
blocks with variable reads, an Adam-like optimizer group with hubs, local random DAGs with
and without cycles). dagre runs in Node (``bench/dagre``: ``npm install`` there first); its
time is the ``dagre.layout`` call only, measured inside Node. Crossings are counted with
OUR counter (:mod:`tb_graph_plugin.layout.crossings`) on every engine's output. Times are
medians of ``--repeat`` runs (one run for instances above 5000 nodes).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from bench import generators
from tb_graph_plugin.layout import Engine, LayoutMemo, LayoutOptions, LayoutResult, layout
from tb_graph_plugin.layout.crossings import count_crossings, count_result_crossings

DAGRE_DIR = os.path.join(os.path.dirname(__file__), "dagre")


def instances(quick: bool):
    yield "resnet-like 176 (15 blocks)", generators.resnet_like(15, seed=1)
    yield "resnet-like 500 (42 blocks)", generators.resnet_like(42, seed=2)
    yield "random DAG 500", generators.random_layered(500, seed=3)
    yield "random 500 with cycles", generators.random_layered(500, seed=4, cyclic=0.03)
    yield "optimizer-like 3k", generators.optimizer_like(100, seed=5)
    yield "random DAG 1500", generators.random_layered(1500, seed=6)
    if not quick:
        yield "optimizer-like 15k", generators.optimizer_like(515, seed=7)
        yield "random DAG 15k", generators.random_layered(15000, seed=8)


def run_ours(graph, engine: Engine, repeat: int, timeout: float, memo: "LayoutMemo | None" = None):
    opts = LayoutOptions(engine=engine, dot_timeout_s=timeout)
    times, result = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        result = layout(graph, opts, memo)
        times.append(time.perf_counter() - t)
    return statistics.median(times), result


def _dagre_spec(graph) -> str:
    return json.dumps({
        "rankdir": "BT", "nodesep": 5, "ranksep": 25, "edgesep": 5,
        "nodes": [[n.id, n.width, n.height] for n in graph.nodes],
        "edges": [[e.source, e.target] for e in graph.edges],
    })


def _dagre_answer(ans):
    if "error" in ans:
        return "crash: " + ans["error"][:60], None
    rows = [xy[1] for xy in ans["nodes"].values()]
    return ans["ms"] / 1000.0, count_crossings(ans["edges"], rows, vertical=True)


def run_dagre(graph, timeout: float):
    """(seconds, crossings); (None, None) on time-out; ("crash: ...", None) if dagre throws."""
    try:
        out = subprocess.run(["node", os.path.join(DAGRE_DIR, "run_dagre.js")], input=_dagre_spec(graph) + "\n",
                             capture_output=True, text=True, timeout=timeout, check=True)
    except subprocess.TimeoutExpired:
        return None, None
    except subprocess.CalledProcessError as exc:
        lines = [ln for ln in exc.stderr.splitlines() if "Error" in ln]
        return "crash: " + (lines[0].strip()[:60] if lines else f"exit {exc.returncode}"), None
    return _dagre_answer(json.loads(out.stdout))


def run_dagre_batch(graphs, timeout: float):
    """dagre on many small graphs in one Node process."""
    data = "".join(_dagre_spec(g) + "\n" for g in graphs)
    out = subprocess.run(["node", os.path.join(DAGRE_DIR, "run_dagre.js")], input=data, capture_output=True,
                         text=True, timeout=timeout, check=True)
    return [_dagre_answer(json.loads(line)) for line in out.stdout.splitlines() if line.strip()]


def run_igraph(graph):
    """(seconds, crossings) of igraph's ``layout_sugiyama`` (the call only), or (None, None)
    when igraph is not installed (``pip install igraph``: bench only, not a dependency).
    Edges are drawn through igraph's own control points (its dummy vertices); crossings are
    counted by our counter, as for every engine."""
    try:
        import igraph
    except ImportError:
        return None, None
    idx = {n.id: i for i, n in enumerate(graph.nodes)}
    g = igraph.Graph(n=len(graph.nodes), edges=[(idx[e.source], idx[e.target]) for e in graph.edges],
                     directed=True)
    t = time.perf_counter()
    lay = g.layout_sugiyama()
    seconds = time.perf_counter() - t
    coords = lay.coords
    lines = []
    for k, e in enumerate(graph.edges):
        s, d = idx[e.source], idx[e.target]
        if s == d:
            continue
        ctrl = [list(p) for p in (lay.edge_routing[k] if lay.edge_routing else [])]
        lines.append([list(coords[s])] + ctrl + [list(coords[d])])
    rows = [coords[i][1] for i in range(len(graph.nodes))]
    return seconds, count_crossings(lines, rows, vertical=True)


def _hierarchy(path: str, split_max_children: int | None = None):
    from tb_graph_plugin.cli import load_graph_def
    from tb_graph_plugin.graph import build_slim_graph
    from tb_graph_plugin.hierarchy import HierarchyOptions, build_hierarchy

    options = HierarchyOptions()
    if split_max_children is not None:
        options = HierarchyOptions(split_max_children=split_max_children)
    return build_hierarchy(build_slim_graph(load_graph_def(path)), options)


def scene_timings(path: str, split_max_children: int | None = None) -> None:
    """Open (top level) and expand the biggest group, as the plugin does, hierarchy cached.

    ``split_max_children`` (default: the plugin's) large enough leaves wide groups unsplit, so
    the expand draws every child of the group, the work the stock tab does on its expand.
    """
    from tb_graph_plugin import wire
    from tb_graph_plugin.layout.scene import LayoutCache, build_scene

    h = _hierarchy(path, split_max_children)
    ref = wire.GraphRef("bench", os.path.basename(path), wire.GraphKind.OP)
    cache = LayoutCache()
    t = time.perf_counter()
    top = build_scene(h, ref, [], cache=cache)
    t_open = time.perf_counter() - t
    big = max((g for g in h.walk_groups() if g.id != h.root.id), key=lambda g: g.cardinality)
    path_names = [h.name_of(a) for a in h.ancestors(big.id) if a != h.root.id][::-1] + [big.name]
    t = time.perf_counter()
    opened = build_scene(h, ref, path_names, cache=cache)
    t_expand = time.perf_counter() - t
    print(f"| {os.path.basename(path)} | {h.root.cardinality:,} | {fmt(t_open, len(top.nodes)).replace(' / ', ' / nodes ')} | "
          f"`{big.name}` ({big.cardinality:,} ops, {len(big.children):,} children) | "
          f"{fmt(t_expand, len(opened.nodes)).replace(' / ', ' / nodes ')} | {opened.stats['engines']} |", flush=True)


def corpus_instances(root: str, min_children: int = 3, kinds=None):
    """(graph kind, group name, LayoutGraph) for every non-series group of every run under ``root``."""
    from tb_graph_plugin.cli import load_graph_def
    from tb_graph_plugin.graph import build_slim_graph
    from tb_graph_plugin.hierarchy import build_hierarchy
    from tb_graph_plugin.cache import LruCache
    from tb_graph_plugin.layout.scene.group import bridge_layout_graph

    for kind in sorted(os.listdir(root)):
        path = os.path.join(root, kind)
        if not os.path.isdir(path) or (kinds and kind not in kinds):
            continue
        try:
            h = build_hierarchy(build_slim_graph(load_graph_def(path)))
        except Exception as exc:  # noqa: BLE001 - a run without an op graph
            print(f"skip {kind}: {type(exc).__name__}", file=sys.stderr)
            continue
        boundaries = LruCache()  # boundary edges of this hierarchy's groups, each from its parent's
        for g in h.walk_groups():
            if g.is_series or len(g.children) < min_children:
                continue
            yield kind, g.name, bridge_layout_graph(h, g.id, boundaries=boundaries)


def corpus_table(root: str, repeat: int, dagre: bool, timeout: float, kinds=None, dagre_max_nodes: int = 3000,
                 memoize: bool = True) -> None:
    rows = {}
    worst = []
    items = list(corpus_instances(root, kinds=kinds))
    small = [i for i, (_, _, g) in enumerate(items) if len(g.nodes) <= dagre_max_nodes]
    answers = [(None, None)] * len(items)
    if dagre:
        for i, ans in zip(small, run_dagre_batch([items[i][2] for i in small], timeout)):
            answers[i] = ans
    last_kind, memo_auto, memo_fast = None, None, None
    for (kind, name, g), (tg, cg) in zip(items, answers):
        if kind != last_kind:  # identical groups of one graph share a layout, not across graphs
            memo_auto, memo_fast = (LayoutMemo(), LayoutMemo()) if memoize else (None, None)
            last_kind = kind
        ta, ra = run_ours(g, Engine.AUTO, 1, 30.0, memo_auto)
        tf, rf = run_ours(g, Engine.FAST, 1, 30.0, memo_fast)
        ca, cf = count_result_crossings(ra, "BT"), count_result_crossings(rf, "BT")
        r = rows.setdefault(kind, {"groups": 0, "nodes": 0, "max": 0, "auto": 0.0, "ca": 0, "fast": 0.0, "cf": 0,
                                   "dagre": 0.0, "cg": 0, "worse": 0, "dagre_fail": 0})
        r["groups"] += 1
        r["nodes"] += len(g.nodes)
        r["max"] = max(r["max"], len(g.nodes))
        r["auto"] += ta
        r["ca"] += ca
        r["fast"] += tf
        r["cf"] += cf
        if isinstance(tg, float):
            r["dagre"] += tg
            r["cg"] += cg
            if ca > cg:
                r["worse"] += 1
                worst.append((ca - cg, kind, name, len(g.nodes), ca, cg))
        elif dagre:
            r["dagre_fail"] += 1
            print(f"- dagre {'not run (> %d nodes)' % dagre_max_nodes if tg is None else tg}: {kind} `{name}` "
                  f"({len(g.nodes)} nodes): auto {fmt(ta, ca)} ({ra.engine_used.value}), fast {fmt(tf, cf)}")
    print("| graph | groups | nodes (max group) | auto: time / crossings | fast: time / crossings | "
          "dagre 0.8.5: time / crossings | groups where auto > dagre |")
    print("|" + "---|" * 7)
    tot = {"auto": 0.0, "dagre": 0.0}
    for kind, r in rows.items():
        tot["auto"] += r["auto"]
        tot["dagre"] += r["dagre"]
        print(f"| {kind} | {r['groups']} | {r['nodes']} ({r['max']}) | {fmt(r['auto'], r['ca'])} | "
              f"{fmt(r['fast'], r['cf'])} | {fmt(r['dagre'], r['cg']) if dagre else 'not run'} | {r['worse']} |")
    if dagre and tot["auto"]:
        print(f"\ncorpus total: auto {tot['auto']:.2f} s, dagre {tot['dagre']:.2f} s "
              f"({tot['dagre'] / tot['auto']:.1f}x)")
    for d, kind, name, n, ca, cg in sorted(worst, reverse=True)[:5]:
        print(f"- more crossings than dagre: {kind} `{name}` ({n} nodes): {ca} vs {cg}")


def fmt(t, c):
    if t is None:
        return "timeout"
    ms = t * 1000
    return f"{ms:,.0f} ms / {c:,}" if ms >= 10 else f"{ms:.1f} ms / {c:,}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="skip the 15k-node instances")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dagre-timeout", type=float, default=60.0)
    ap.add_argument("--dot-timeout", type=float, default=30.0)
    ap.add_argument("--no-dagre", action="store_true")
    ap.add_argument("--only", default=None, help="substring of an instance name")
    ap.add_argument("--corpus", default=None, help="logdir root with one run per graph: bench every group")
    ap.add_argument("--kinds", nargs="*", default=None, help="with --corpus: only these run dirs")
    ap.add_argument("--no-memo", action="store_true", help="with --corpus: lay out identical groups again")
    ap.add_argument("--scene", nargs="*", default=None, help="run dirs: time opening and expanding the biggest group")
    ap.add_argument("--split-max-children", type=int, default=None,
                    help="with --scene: HierarchyOptions.split_max_children (large: wide groups stay unsplit)")
    args = ap.parse_args(argv)
    if not args.no_dagre and not os.path.isdir(os.path.join(DAGRE_DIR, "node_modules", "dagre")):
        print("run `npm install` in bench/dagre first (or pass --no-dagre)", file=sys.stderr)
        return 2
    layout(generators.resnet_like(2), LayoutOptions(engine=Engine.DOT))  # warm the dot worker
    layout(generators.resnet_like(2), LayoutOptions(engine=Engine.FAST))
    if args.corpus:
        corpus_table(args.corpus, args.repeat, not args.no_dagre, args.dagre_timeout * 10, kinds=args.kinds,
                     memoize=not args.no_memo)
        return 0
    if args.scene:
        print("| run | ops | open: time / scene nodes | biggest group | expand it: time / scene nodes | engines |")
        print("|" + "---|" * 6)
        for path in args.scene:
            scene_timings(path, args.split_max_children)
        return 0
    head = "| instance | nodes | edges | fast | dot | auto (engine) | dagre 0.8.5 | igraph 1.0 sugiyama |"
    print(head)
    print("|" + "---|" * 8)
    totals = {"fast": 0.0, "auto": 0.0, "dagre": 0.0}
    for name, g in instances(args.quick):
        if args.only and args.only not in name:
            continue
        rep = args.repeat if len(g.nodes) <= 5000 else 1
        tf, rf = run_ours(g, Engine.FAST, rep, args.dot_timeout)
        cf = count_result_crossings(rf, "BT")
        if len(g.nodes) <= 5000:
            try:
                td, rd = run_ours(g, Engine.DOT, rep, args.dot_timeout)
                dot_cell = fmt(td, count_result_crossings(rd, "BT"))
            except Exception as exc:  # noqa: BLE001 - the bench reports it
                dot_cell = f"> {args.dot_timeout:.0f} s" if "time limit" in str(exc) else type(exc).__name__
        else:
            dot_cell = "not run"
        ta, ra = run_ours(g, Engine.AUTO, rep, args.dot_timeout)
        ca = count_result_crossings(ra, "BT")
        if args.no_dagre:
            tg = cg = None
            dagre_cell = "not run"
        else:
            tg, cg = run_dagre(g, args.dagre_timeout)
            if isinstance(tg, str):
                dagre_cell, tg = tg, None
            else:
                dagre_cell = fmt(tg, cg) if tg is not None else f"> {args.dagre_timeout:.0f} s"
        ti, ci = run_igraph(g)
        igraph_cell = "not installed" if ti is None else fmt(ti, ci)
        totals["fast"] += tf
        totals["auto"] += ta
        if tg is not None:
            totals["dagre"] += tg
        print(f"| {name} | {len(g.nodes)} | {len(g.edges)} | {fmt(tf, cf)} | {dot_cell} | "
              f"{fmt(ta, ca)} ({ra.engine_used.value}) | {dagre_cell} | {igraph_cell} |", flush=True)
    print(f"\ntotal time: fast {totals['fast']:.2f} s, auto {totals['auto']:.2f} s, "
          f"dagre {totals['dagre']:.2f} s (dagre time-outs not included)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
