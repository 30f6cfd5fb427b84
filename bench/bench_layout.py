"""Layout bench: crossings and time of our engines (fast, dot, auto) against dagre 0.8.5.

    python -m bench.bench_layout [--quick] [--dagre-timeout 60] [--only NAME]

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
from tb_graph_plugin.layout import Engine, LayoutOptions, LayoutResult, layout
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


def run_ours(graph, engine: Engine, repeat: int, timeout: float):
    opts = LayoutOptions(engine=engine, dot_timeout_s=timeout)
    times, result = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        result = layout(graph, opts)
        times.append(time.perf_counter() - t)
    return statistics.median(times), result


def run_dagre(graph, timeout: float):
    spec = {
        "rankdir": "BT", "nodesep": 5, "ranksep": 25, "edgesep": 5,
        "nodes": [[n.id, n.width, n.height] for n in graph.nodes],
        "edges": [[e.source, e.target] for e in graph.edges],
    }
    try:
        out = subprocess.run(["node", os.path.join(DAGRE_DIR, "run_dagre.js")], input=json.dumps(spec) + "\n",
                             capture_output=True, text=True, timeout=timeout, check=True)
    except subprocess.TimeoutExpired:
        return None, None
    except subprocess.CalledProcessError as exc:
        lines = [ln for ln in exc.stderr.splitlines() if "Error" in ln]
        return "crash: " + (lines[0].strip()[:60] if lines else f"exit {exc.returncode}"), None
    ans = json.loads(out.stdout)
    rows = [xy[1] for xy in ans["nodes"].values()]
    return ans["ms"] / 1000.0, count_crossings(ans["edges"], rows, vertical=True)


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
    args = ap.parse_args(argv)
    if not args.no_dagre and not os.path.isdir(os.path.join(DAGRE_DIR, "node_modules", "dagre")):
        print("run `npm install` in bench/dagre first (or pass --no-dagre)", file=sys.stderr)
        return 2
    layout(generators.resnet_like(2), LayoutOptions(engine=Engine.DOT))  # warm the dot worker
    layout(generators.resnet_like(2), LayoutOptions(engine=Engine.FAST))
    head = "| instance | nodes | edges | fast | dot | auto (engine) | dagre 0.8.5 |"
    print(head)
    print("|" + "---|" * 7)
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
        totals["fast"] += tf
        totals["auto"] += ta
        if tg is not None:
            totals["dagre"] += tg
        print(f"| {name} | {len(g.nodes)} | {len(g.edges)} | {fmt(tf, cf)} | {dot_cell} | "
              f"{fmt(ta, ca)} ({ra.engine_used.value}) | {dagre_cell} |", flush=True)
    print(f"\ntotal time: fast {totals['fast']:.2f} s, auto {totals['auto']:.2f} s, "
          f"dagre {totals['dagre']:.2f} s (dagre time-outs not included)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
