"""Pattern search (``/search?pattern=``, ``graph/pattern.py``) and the cost of every op
(``graph/cost.py``, ``hierarchy/cost.py``) on a big real graph, in a worker's place.

Usage::

    python -m bench.corpus keras_transformer_train_step_trace --layers 128      # 140,888 ops, once
    python -m bench.bench_pattern bench/_out/corpus/keras_transformer_train_step_trace_L128 [--repeat 3]

RUN_DIR holds one run with one graph. Builds the ``GraphState`` a worker holds (the graph's
encoding, SlimGraph, whole Hierarchy), then times, each ``--repeat`` times (median printed):

- ``search.search_pattern`` (the whole task but JSON) for 3-step patterns: ``MatMul -> * -> Softmax``
  (few matches), ``(MatMul|BatchMatMulV2|Einsum) -> * -> Softmax``, ``Mul -> * -> AddV2 -> * -> Mul``
  (many), ``name:attention -> * -> label:Softmax`` (a name step: one RE2 call per op), and a
  pattern matching nothing; the first search also builds the columns kept on the SlimGraph
  (reported apart). The issue's target: a 3-step pattern under 1 s at 141k ops.
- the cost: ``graph.cost.op_costs`` (every op's NodeDef parsed from its encoding, first time), then
  ``hierarchy.cost.node_cost`` of the root and ``cost_values`` (the colour mode's data).
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

from tb_graph_plugin.api import search, tasks  # noqa: E402

PATTERNS = ("MatMul -> * -> Softmax", "(MatMul|BatchMatMulV2|Einsum) -> * -> Softmax",
            "Mul -> * -> AddV2 -> * -> Mul", "name:attention -> * -> label:Softmax", "NoSuchOp -> * -> Softmax")


def _median(fn, repeat: int):
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), max(times), out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    from tb_graph_plugin.cli import _without_tensorflow
    from tb_graph_plugin.ingest.local import load_graph_def_from_path

    _without_tensorflow()
    blob = load_graph_def_from_path(args.run_dir).SerializeToString()
    t = time.perf_counter()
    state = tasks.GraphState({"graph": blob}, lambda stage, fraction: None)
    state.build_hierarchy()
    slim = state.hierarchy.slim
    print(f"graph: {slim.n_nodes:,} ops, {slim.n_edges:,} edges, built in {time.perf_counter() - t:.1f} s")
    from tb_graph_plugin.graph import pattern

    t = time.perf_counter()
    pattern._columns(slim)
    print(f"pattern columns, once: {time.perf_counter() - t:.3f} s")
    for p in PATTERNS:
        med, worst, answer = _median(lambda: search.search_pattern(state, p), args.repeat)
        print(f"  pattern {p!r:50s} median {med:.3f} s (max {worst:.3f})  matches {answer.total:,}")
    from tb_graph_plugin.graph.cost import op_costs
    from tb_graph_plugin.hierarchy.cost import cost_values, node_cost

    med, worst, costs = _median(lambda: op_costs(slim), args.repeat)
    print(f"op costs (every op): median {med:.2f} s (max {worst:.2f}), {int(costs.unknown.sum()):,} unknown ops")
    slim.cost_memo = costs
    med, _, root = _median(lambda: node_cost(state.hierarchy, state.hierarchy.root.id), args.repeat)
    print(f"root cost: median {med:.3f} s  flops {root.flops:,} params {root.params:,} unknown {root.unknown_ops:,}")
    med, _, _ = _median(lambda: cost_values(state.hierarchy, "flops"), args.repeat)
    print(f"cost_values(flops): median {med:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
