"""Node data on a big graph in the browser: colour switch and step change, longest task of our iframe.

Usage::

    python -m bench.bench_node_data RUN_DIR [--steps 4] [--changes 6]

RUN_DIR holds one run with one graph (e.g. ``bench/_out/corpus/keras_transformer_train_step_trace_L128``,
140,888 ops). The run is copied to a temporary logdir and given node data for EVERY op of its
graph at ``--steps`` steps (``tb_graph_plugin.summary.node_data``, random values), a real
TensorBoard serves it (``--samples_per_plugin=graph_explorer_node_data=1000``) and headless
Chromium opens the tab (warm-up done). Measured, in the plugin iframe: choosing the tag in the
Colour picker (first time: the server reads the steps and aggregates in the worker) and then
``--changes`` step changes with the slider; for each, the wall time from the input to the
recoloured frame, and the longest task of our iframe's own document in that span (long-task
observer plus the app's timed draws, as ``tests/ui/bench_ui.py`` measures). Prints medians.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.conftest import launch_chromium  # noqa: E402
from tests.tensorboard_process import TensorBoardProcess  # noqa: E402
from tests.ui.bench_ui import expand_deep, longest_self_since, open_ours  # noqa: E402


def write_values(run_dir: Path, steps: int) -> int:
    import random

    from tb_graph_plugin.ingest.local import load_graph_def_from_path
    from tb_graph_plugin.summary import node_data

    names = [n.name for n in load_graph_def_from_path(str(run_dir)).node]
    rng = random.Random(0)
    for step in range(steps):
        node_data(str(run_dir), "op_value", {n: rng.random() for n in names}, step)
    return len(names)


def summary(rows, ops: int, scene: str) -> None:
    steps = rows[1:]
    print(json.dumps({
        "ops": ops, "scene": scene, "colour_switch_ms": round(rows[0][1] * 1000),
        "colour_switch_longest_task_ms": round(rows[0][2]),
        "step_change_median_ms": round(statistics.median(r[1] for r in steps) * 1000),
        "step_change_longest_task_median_ms": round(statistics.median(r[2] for r in steps)),
        "longest_task_max_ms": round(max(r[2] for r in rows)),
    }))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--changes", type=int, default=6)
    args = ap.parse_args(argv)
    logdir = Path(tempfile.mkdtemp(prefix="bench_node_data_"))
    run = logdir / args.run_dir.name
    shutil.copytree(args.run_dir, run)
    t = time.perf_counter()
    ops = write_values(run, args.steps)
    print(f"{ops:,} ops, node data for each at {args.steps} steps written in {time.perf_counter() - t:.1f} s")
    from playwright.sync_api import sync_playwright

    tb = TensorBoardProcess(logdir, min_runs=1, timeout_s=600,
                            extra_args=["--samples_per_plugin=graph_explorer_node_data=1000"]).start()
    try:
        with sync_playwright() as p:
            browser = launch_chromium(p)
            page, frame, first_paint, _ = open_ours(browser, tb.url)
            print(f"first paint {first_paint:.1f} s, {frame.evaluate('document.body.dataset.sceneNodes')} nodes drawn")
            frame.wait_for_function("[...document.querySelectorAll('[data-picker=color] option')]"
                                    ".some(o => o.value.startsWith('nd:'))", timeout=120_000)
            value = frame.eval_on_selector_all("[data-picker=color] option",
                                               "os => os.map(o => o.value).find(v => v.startsWith('nd:'))")
            rows = []

            def measure(what, act, step_text=None):
                since = frame.evaluate("performance.now()")
                t0 = time.perf_counter()
                act()
                cond = "document.body.dataset.nodeDataState === 'ready'"
                if step_text is not None:
                    cond += f" && document.body.dataset.nodeDataStep === '{step_text}'"
                frame.wait_for_function(cond, timeout=600_000, polling=10)
                frame.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
                wall = time.perf_counter() - t0
                rows.append((what, wall, longest_self_since(frame, since)))
                print(f"{what:>14}: {wall * 1000:7.0f} ms to recoloured frame, longest iframe task "
                      f"{rows[-1][2]:5.0f} ms")

            measure("colour switch", lambda: frame.select_option("[data-picker=color]", value))
            for i in range(args.changes):
                step = i % args.steps
                measure(f"step -> {step}", lambda s=step: frame.eval_on_selector(
                    "[data-nd=step]", f"s => {{ s.value = '{s}'; s.dispatchEvent(new Event('input')); }}"), str(step))
            summary(rows, ops, "first view")
            # the same with a big scene: the largest closed group opened until 15k nodes show
            big = max((n for n in frame.evaluate("window.graphExplorer.nodes()") if n["kind"] == "meta" and not n["expanded"] and not n["extracted"]),
                      key=lambda n: n["cardinality"])
            exp = frame.evaluate("JSON.parse(document.body.dataset.expanded || '[]')")
            frame.evaluate(f"window.graphExplorer.setExpanded({json.dumps(exp + [big['name']])})")
            frame.wait_for_function(f"JSON.parse(document.body.dataset.expanded||'[]').includes({json.dumps(big['name'])})"
                                    " && document.body.dataset.status === 'ready'", timeout=600_000)
            seconds, nodes = expand_deep(frame, big["name"])
            frame.wait_for_function("document.body.dataset.nodeDataState === 'ready'", timeout=600_000)
            print(f"opened {big['name']} deep: {nodes} nodes in {seconds:.1f} s")
            rows.clear()
            frame.select_option("[data-picker=color]", "none")
            measure("colour switch", lambda: frame.select_option("[data-picker=color]", value))
            for i in range(args.changes):
                step = i % args.steps
                measure(f"step -> {step}", lambda s=step: frame.eval_on_selector(
                    "[data-nd=step]", f"s => {{ s.value = '{s}'; s.dispatchEvent(new Event('input')); }}"), str(step))
            summary(rows, ops, f"{nodes} nodes shown")
            browser.close()
    finally:
        tb.stop()
        shutil.rmtree(logdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
