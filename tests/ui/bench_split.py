"""UI benchmark of the split pane and bookmarks: one TensorBoard, headless Chromium, two runs.

    python -m tests.ui.bench_split A_RUN_DIR B_RUN_DIR [--repeats 5]

A_RUN_DIR and B_RUN_DIR are run directories of one graph each (e.g. ``python -m bench.corpus
keras_transformer_train_step_trace DIR --layers 9`` and ``--layers 10``); they are linked as runs
``a`` and ``b`` of a temporary logdir. The main view shows ``b``, the pane ``a``. Per round (a fresh
page each time, the same TensorBoard; round 1 also has the server build both graphs and the diff,
reported on its own as "cold"), times in ms:

- open: click Split + pick ``a`` -> the pane's first view drawn and the diff in both panes;
- sync into a closed group: a changed op of B chosen in the change list -> its match selected in the
  pane, the groups holding it opened there (a server search + a scene load);
- sync back: a click on a node in the pane -> its match selected in the main view;
- bookmark: save the view, open another run, open the bookmark -> the view restored;
- the main view's draw time (ms, median of 10 zoom steps) with the pane closed and open.

Prints a Markdown table: medians over the warm rounds (range), and the cold round. A bench, not a test.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

from tests.conftest import launch_chromium
from tests.tensorboard_process import TensorBoardProcess
from tests.ui.conftest import app_frame, wait_settled

PANE = "document.querySelector('[data-pane=split]').dataset"


def wait(frame, js: str, timeout_ms: float = 300000) -> float:
    """Milliseconds until `js` is true (polled by the page every animation frame)."""
    t0 = time.perf_counter()
    frame.wait_for_function(js, timeout=timeout_ms, polling="raf")
    return (time.perf_counter() - t0) * 1000


def draw_ms(frame, page) -> float:
    box = frame.frame_element().bounding_box()
    canvas = frame.evaluate("(() => { const r = document.querySelector('[data-canvas]').getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()")
    page.mouse.move(box["x"] + canvas[0] + canvas[2] / 2, box["y"] + canvas[1] + canvas[3] / 2)
    out = []
    for i in range(10):
        frames = frame.evaluate("Number(document.body.dataset.frames)")
        page.mouse.wheel(0, -120 if i % 2 == 0 else 120)
        frame.wait_for_function(f"Number(document.body.dataset.frames) > {frames}")
        out.append(float(frame.evaluate("document.body.dataset.drawMs")))
    return statistics.median(out)


def one_round(page, url: str) -> dict[str, float]:
    page.goto(url)
    frame = app_frame(page)
    wait_settled(frame)
    frame.select_option("[data-picker=run]", "b")
    wait_settled(frame)
    frame.wait_for_function("Number(document.body.dataset.drawnNodes) > 0")
    r: dict[str, float] = {"draw_closed": draw_ms(frame, page)}
    t0 = time.perf_counter()
    frame.click("[data-action=split]")
    pane_ref = next(v for v in frame.eval_on_selector_all("[data-picker=split] option", "os => os.map(o => o.value)")
                    if json.loads(v)[0] == "a" and json.loads(v)[3] is None)
    frame.select_option("[data-picker=split]", pane_ref)
    wait(frame, f"{PANE}.status === 'ready' && Number({PANE}.drawnNodes) > 0 && document.body.dataset.colorMode === 'diff'"
         " && document.body.dataset.diffSame === 'false'")
    r["open"] = (time.perf_counter() - t0) * 1000
    r["scene_nodes_main"] = float(frame.evaluate("document.body.dataset.sceneNodes"))
    r["scene_nodes_pane"] = float(frame.evaluate(f"{PANE}.sceneNodes"))
    r["diff_entries"] = float(frame.evaluate("Number(document.body.dataset.diffAdded) + Number(document.body.dataset.diffChanged)"
                                             " + Number(document.body.dataset.diffRemoved)"))
    r["draw_open"] = draw_ms(frame, page)
    # a changed op of B whose A match is inside a group closed in the pane
    entries = frame.eval_on_selector_all("[data-diff-entry][data-diff-status=changed]", "els => els.map(e => e.dataset.diffEntry)")
    shown = {n["name"] for n in frame.evaluate("window.graphExplorer.split.nodes()")}
    target = next(e for e in entries if "/" in e and e not in shown)
    frame.evaluate(f"{PANE}.selected = ''")
    t0 = time.perf_counter()
    frame.click(f"[data-diff-entry={json.dumps(target)}]")
    wait(frame, f"!!{PANE}.selected && {PANE}.selected === {PANE}.match")
    r["sync_closed"] = (time.perf_counter() - t0) * 1000
    # a click in the pane: the first op on screen there
    box = frame.frame_element().bounding_box()
    rect = frame.evaluate("(() => { const r = document.querySelector('canvas[data-split-canvas]').getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; })()")
    ops = [n for n in frame.evaluate("window.graphExplorer.split.nodes()") if n["kind"] == "op"
           and rect[0] + 20 < n["x"] < rect[2] - 160 and rect[1] + 40 < n["y"] < rect[3] - 120 and n["name"] != frame.evaluate(f"{PANE}.selected")]
    n = ops[0]
    t0 = time.perf_counter()
    page.mouse.click(box["x"] + n["x"], box["y"] + n["y"])
    wait(frame, f"{PANE}.selected === {json.dumps(n['name'])} && !!{PANE}.match && document.body.dataset.selected === {PANE}.match")
    r["sync_back"] = (time.perf_counter() - t0) * 1000
    # bookmark round trip
    frame.click("[data-action=bookmarks]")
    frame.fill("[data-bookmark-name]", "bench")
    frame.click("[data-action=bookmark-save]")
    link = frame.evaluate("document.body.dataset.link")
    frame.click("[data-action=bookmarks]")
    frame.select_option("[data-picker=run]", "a")
    wait_settled(frame)
    frame.click("[data-action=bookmarks]")
    frame.evaluate("document.body.dataset.restored = ''")
    t0 = time.perf_counter()
    frame.click("[data-bookmark=bench]")
    wait(frame, f"document.body.dataset.restored === 'true' && document.body.dataset.link === {json.dumps(link)}"
         f" && {PANE}.status === 'ready' && document.body.dataset.status === 'ready'")
    r["bookmark"] = (time.perf_counter() - t0) * 1000
    return r


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("a", type=Path)
    ap.add_argument("b", type=Path)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        logdir = Path(tmp)
        (logdir / "a").symlink_to(args.a.resolve())
        (logdir / "b").symlink_to(args.b.resolve())
        tb = TensorBoardProcess(logdir, log_path=logdir / "tb.log", min_runs=2).start()
        rounds = []
        try:
            with sync_playwright() as p:
                browser = launch_chromium(p)
                for i in range(args.repeats + 1):
                    context = browser.new_context(viewport={"width": 1600, "height": 900})
                    page = context.new_page()
                    rounds.append(one_round(page, f"{tb.url}/#graph_explorer"))
                    print(f"round {i + 1}: " + ", ".join(f"{k} {v:.0f}" for k, v in rounds[-1].items()), flush=True)
                    context.close()
                browser.close()
        finally:
            tb.stop()
    cold, warm = rounds[0], rounds[1:]
    print("| step | warm median ms (range) | cold ms |\n|---|---|---|")
    for k in cold:
        vals = [r[k] for r in warm]
        print(f"| {k} | {statistics.median(vals):.1f} ({min(vals):.1f}-{max(vals):.1f}) | {cold[k]:.1f} |")


if __name__ == "__main__":
    main()
