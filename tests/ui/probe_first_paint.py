"""Where the warm first paint goes: TensorBoard's shell vs the Graph Explorer iframe.

    python -m tests.ui.probe_first_paint LOGDIR [--loads 2] [--brief]

Starts TensorBoard on LOGDIR, waits for the server's warm-up, then opens the tab ``--loads`` times
and prints, per load: seconds to the painted graph, when the shell created our iframe, and the
resource timings of the shell and of the iframe, and the app's own milestones (``gx:*`` performance
marks and measures, see ``frontend/src/marks.ts``) in the iframe's time; then the median of each over
the loads (``--brief``: medians only). A bench helper, not a test.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import defaultdict
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

from tests.conftest import launch_chromium
from tests.tensorboard_process import TensorBoardProcess
from tests.ui.bench_ui import wait_warm
from tests.ui.conftest import app_frame

REPO = Path(__file__).resolve().parents[2]
MARKS = ("performance.getEntries().filter(e => e.name.startsWith('gx:') && "
         "(e.entryType === 'mark' || e.name.startsWith('gx:worker'))).map(e => "
         "[e.name, Math.round(e.startTime), Math.round(e.duration)])")
RESOURCES = ("performance.getEntriesByType('resource').map(e => "
             "[e.name.split('/').slice(-2).join('/').slice(0, 60), Math.round(e.startTime), Math.round(e.responseEnd)])")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("logdir")
    ap.add_argument("--loads", type=int, default=2)
    ap.add_argument("--brief", action="store_true", help="print only the medians over the loads")
    args = ap.parse_args(argv)
    tb = TensorBoardProcess(Path(args.logdir), log_path=REPO / "bench" / "_out" / "probe_tensorboard.log",
                            min_runs=1).start()
    seen: dict[str, list[float]] = defaultdict(list)
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
                marks = sorted(frame.evaluate(MARKS), key=lambda m: m[1])
                seen["painted after (s, wall clock)"].append(paint)
                seen["shell created the iframe (ms)"].append(iframe_at)
                for name, start, dur in marks:
                    seen[f"{name} (ms in the iframe)"].append(start + dur)
                if args.brief:
                    page.close()
                    continue
                print(f"load {i}: painted after {paint:.2f} s; the shell created our iframe at {iframe_at:.0f} ms")
                for name, start, end in page.evaluate(RESOURCES):
                    print(f"  shell  {start:6d}-{end:6d} ms  {name}")
                for name, start, end in frame.evaluate(RESOURCES):
                    print(f"  iframe {start:6d}-{end:6d} ms  {name}")
                for name, start, dur in marks:
                    print(f"  mark   {start:6d}{f'-{start + dur:6d}' if dur else ' ' * 7} ms  {name}")
                page.close()
            browser.close()
    finally:
        tb.stop()
    print(f"medians over {args.loads} loads (a measure counts at its end):")
    for name, vals in sorted(seen.items(), key=lambda kv: statistics.median(kv[1])):
        print(f"  {statistics.median(vals):9.2f}  (min {min(vals):.2f}, max {max(vals):.2f}, n={len(vals)})  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
