"""Where the warm first paint goes: TensorBoard's shell vs the Graph Explorer iframe.

    python -m tests.ui.probe_first_paint LOGDIR [--loads 2]

Starts TensorBoard on LOGDIR, waits for the server's warm-up, then opens the tab ``--loads`` times
and prints, per load: seconds to the painted graph, when the shell created our iframe, and the
resource timings of the shell and of the iframe. A bench helper, not a test.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

from tests.conftest import launch_chromium
from tests.tensorboard_process import TensorBoardProcess
from tests.ui.bench_ui import wait_warm
from tests.ui.conftest import app_frame

REPO = Path(__file__).resolve().parents[2]
RESOURCES = ("performance.getEntriesByType('resource').map(e => "
             "[e.name.split('/').slice(-2).join('/').slice(0, 60), Math.round(e.startTime), Math.round(e.responseEnd)])")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("logdir")
    ap.add_argument("--loads", type=int, default=2)
    args = ap.parse_args(argv)
    tb = TensorBoardProcess(Path(args.logdir), log_path=REPO / "bench" / "_out" / "probe_tensorboard.log",
                            min_runs=1).start()
    try:
        print(f"warm-up done after {wait_warm(tb):.2f} s")
        with sync_playwright() as p:
            browser = launch_chromium(p)
            for i in range(args.loads):
                page = browser.new_page(viewport={"width": 1400, "height": 900})
                t0 = time.perf_counter()
                page.goto(f"{tb.url}/#graph_explorer")
                frame = app_frame(page, timeout=600)
                frame.wait_for_function("document.body.dataset.status !== 'loading' && "
                                        "Number(document.body.dataset.drawnNodes) > 0", timeout=600_000, polling=20)
                paint = time.perf_counter() - t0
                iframe_at = frame.evaluate("performance.timeOrigin") - page.evaluate("performance.timeOrigin")
                print(f"load {i}: painted after {paint:.2f} s; the shell created our iframe at {iframe_at:.0f} ms")
                for name, start, end in page.evaluate(RESOURCES):
                    print(f"  shell  {start:6d}-{end:6d} ms  {name}")
                for name, start, end in frame.evaluate(RESOURCES):
                    print(f"  iframe {start:6d}-{end:6d} ms  {name}")
                page.close()
            browser.close()
    finally:
        tb.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
