"""/search time on big graphs: [RE2] (docs/references.md) over every name, worst patterns included.

Usage::

    python -m bench.bench_search [--ops 1000000] [--repeat 3]

Builds a ``GraphState`` (what a worker holds) of a ``bench_load.distinct_graph`` with ``--ops``
ops, then times ``search.search_graph`` (the whole task but JSON) for patterns that match
nothing, a few, most names, and the ReDoS pattern ``(a+)+$``; the first search also encodes the
names once (reported apart). Printed: median seconds, total matches, and whether the walk
finished inside its 1 s budget (``complete``).
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

from bench.bench_load import distinct_graph  # noqa: E402
from tb_graph_plugin.api import search, tasks  # noqa: E402

PATTERNS = ("zzz_no_match", "block12/", "relu", ".", "(a+)+$", "(x+x+)+y", "stage1.*tanh_7$")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ops", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    t = time.perf_counter()
    state = tasks.GraphState({"graph": distinct_graph(0, args.ops)}, lambda stage, fraction: None)
    print(f"graph: {args.ops:,} ops, {len(state.hierarchy.groups):,} groups, built in {time.perf_counter() - t:.1f} s")
    t = time.perf_counter()
    search._names(state)
    print(f"names encoded once: {time.perf_counter() - t:.2f} s")
    for q in PATTERNS:
        times, answer = [], None
        for _ in range(args.repeat):
            t = time.perf_counter()
            answer = search.search_graph(state, q, None)
            times.append(time.perf_counter() - t)
        print(f"  q={q!r:20s} median {statistics.median(times):.3f} s (max {max(times):.3f})  "
              f"total {answer.total:,}  complete {answer.complete}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
