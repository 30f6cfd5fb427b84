"""End to end (TensorBoard subprocess + headless Chromium): a big scene stays fluid (issue 12).

An uploaded 9,000-op graph (60 name scopes of 150 ops, generated here as a pbtxt), every group
opened: no task of the plugin iframe over 50 ms (PerformanceObserver 'longtask', and the app's
own measures of its drawings, which Chromium does not always report as long tasks) while the scene
arrives and while the view is fitted, panned and zoomed (a long task seen once is measured again
on the same pan and zoom: the 2-core machine's other processes, not the app, must be why, or the
test fails); zoomed out the renderer draws cached
tiles (level of detail, ``drawList().path == "tiles"``), zoomed in every item (``"full"``, with
its draw list); hover and click find the node under the pointer on both paths.
"""

from __future__ import annotations

import json

import pytest

from tests.ui.bench_ui import LONGTASKS, longest_self_since
from tests.ui.conftest import SHOTS, app_frame, wait_settled
from tests.ui.test_explorer_loading_and_toggles import upload

pytestmark = pytest.mark.slow

GROUPS, OPS = 60, 150
LOD_MIN_NODES = 4000  # frontend/src/render/renderer.ts
LONG_TASK_MS = 50


def letters(i: int) -> str:
    """0 -> 'a', 25 -> 'z', 26 -> 'ba': names without a numeric suffix, so that no series forms."""
    s = ""
    while True:
        s = chr(97 + i % 26) + s
        i //= 26
        if not i:
            return s


def scope(g: int) -> str:
    return f"block_{letters(g)}"


def op(g: int, i: int) -> str:
    return f"{scope(g)}/op_{letters(i)}"


def big_graph(path) -> str:
    """GROUPS scopes in a chain, each of OPS ops (every op reads the one or two before it)."""
    lines = []
    for g in range(GROUPS):
        for i in range(OPS):
            name = op(g, i)
            if i == 0:
                ins = [op(g - 1, OPS - 1)] if g else []
            else:
                ins = [op(g, i - 1)] + ([op(g, i - 7)] if i >= 7 and i % 3 == 0 else [])
            kind = "Placeholder" if not ins else ("AddV2" if len(ins) > 1 else "Relu")
            lines.append(f'node {{ name: "{name}" op: "{kind}" ' + " ".join(f'input: "{x}"' for x in ins) + " }")
    p = path / "big.pbtxt"
    p.write_text("\n".join(lines) + "\n")
    return str(p)


def draw_list(frame) -> dict:
    return frame.evaluate("JSON.parse(JSON.stringify(window.graphExplorer.drawList()))")


def settle(frame) -> None:
    """Two frames after the last change, then ready with every tile drawn."""
    frame.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    frame.wait_for_function("document.body.dataset.status === 'ready' && document.body.dataset.tilesMissing === '0'",
                            timeout=120000, polling=20)


def canvas_point(page, frame, node: dict) -> tuple[float, float]:
    box = frame.frame_element().bounding_box()
    return box["x"] + node["x"], box["y"] + node["y"]


def hover_and_click(page, frame, name: str) -> None:
    node = next(n for n in frame.evaluate("window.graphExplorer.nodes()") if n["name"] == name)
    x, y = canvas_point(page, frame, node)
    page.mouse.move(x, y)
    frame.wait_for_function(f"document.querySelector('[data-canvas]').title === {json.dumps(name)}", timeout=5000)
    page.mouse.click(x, y)
    frame.wait_for_function(f"document.body.dataset.selected === {json.dumps(name)}", timeout=5000)


def tile_pixels(frame, groups: list[str]) -> dict:
    """The canvas's near-black pixels (none in the light theme: the canvas is opaque, so a square
    no drawing reached stays black), and the groups whose centre (a 5x5 px window) is darker than
    an open group's pale fill and the few fine lines inside it."""
    return frame.evaluate("""(groups) => {
        const canvas = document.querySelector('[data-canvas]');
        const ctx = canvas.getContext('2d');
        const img = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
        let black = 0;
        for (let i = 0; i < img.length; i += 4) if (img[i] < 40 && img[i + 1] < 40 && img[i + 2] < 40) black++;
        const r = canvas.getBoundingClientRect();
        const dpr = canvas.width / r.width;
        const dark = [];
        for (const n of window.graphExplorer.nodes()) {
            if (!groups.includes(n.name)) continue;
            const w = ctx.getImageData(Math.round((n.x - r.left) * dpr) - 2, Math.round((n.y - r.top) * dpr) - 2, 5, 5).data;
            let lum = 0;
            for (let i = 0; i < w.length; i += 4) lum += (w[i] + w[i + 1] + w[i + 2]) / 3;
            if (lum / 25 < 170) dark.push([n.name, Math.round(lum / 25)]);
        }
        return {black, dark_groups: dark};
    }""", groups)


def _tasks_since(frame, t0: float):
    return frame.evaluate(f"""[window.__selfTasks.filter(t => t[0] >= {t0}).map(t => t.map(Math.round)),
        performance.getEntriesByType('measure').filter(m => m.startTime >= {t0} && m.name.startsWith('gx:'))
          .map(m => [m.name, Math.round(m.startTime), Math.round(m.duration)])]""")


def _pan_zoom_and_zoom_in(page, frame, target: str) -> None:
    """Drag, wheel out and in on the tiles; then centre ``target`` and wheel in to full detail,
    where every item is drawn and listed."""
    canvas = frame.locator("[data-canvas]").bounding_box()
    box = frame.frame_element().bounding_box()
    cx, cy = box["x"] + canvas["x"] + canvas["width"] / 2, box["y"] + canvas["y"] + canvas["height"] / 2
    page.mouse.move(cx, cy)
    page.mouse.down()
    for i in range(30):
        page.mouse.move(cx + 5 * i, cy + 2 * i)
    page.mouse.up()
    for delta in [120] * 5 + [-120] * 10:
        page.mouse.wheel(0, delta)
        page.wait_for_timeout(16)
    settle(frame)
    frame.evaluate(f"window.graphExplorer.center({json.dumps(target)})")
    page.mouse.move(cx, cy)
    for _ in range(60):
        if float(frame.evaluate("window.graphExplorer.viewport().k")) >= 1:
            break
        page.mouse.wheel(0, -200)
        page.wait_for_timeout(16)
    settle(frame)
    draw = draw_list(frame)
    assert draw["path"] == "full" and draw["tiles"] is None
    assert target in {n["name"] for n in draw["nodes"]}


def test_big_scene_lod_tiles_no_long_tasks_and_hits(page, tensorboard_url, ui_logdir, tmp_path):
    page.add_init_script(LONGTASKS)
    page.goto(f"{tensorboard_url(ui_logdir, min_runs=4)}/#graph_explorer")
    frame = app_frame(page)
    wait_settled(frame)
    upload(frame, big_graph(tmp_path))
    groups = [scope(g) for g in range(GROUPS)]
    t0 = frame.evaluate("performance.now()")
    frame.evaluate(f"window.graphExplorer.setExpanded({json.dumps(groups)})")
    frame.wait_for_function(f"JSON.parse(document.body.dataset.expanded || '[]').length === {GROUPS}", timeout=120000)
    settle(frame)
    assert int(frame.evaluate("document.body.dataset.sceneNodes")) > LOD_MIN_NODES
    assert frame.evaluate("document.body.dataset.sceneIndex") == "worker"  # hits below use the worker's index

    # zoomed out: every node on screen, drawn from tiles
    frame.click("[data-action=fit]")
    settle(frame)
    draw = draw_list(frame)
    assert draw["path"] == "tiles", draw["path"]
    assert draw["tiles"]["missing"] == 0 and draw["tiles"]["tiles"] > 0
    assert int(frame.evaluate("document.body.dataset.drawnNodes")) > LOD_MIN_NODES
    page.screenshot(path=str(SHOTS / "render_scale_tiles.png"))
    # what the tiles drew: a heavy tile is drawn a quarter at a time, each part where it belongs
    # (every part used to be drawn at its tile's corner: black, never drawn squares and grey
    # blocks where the groups were)
    pixels = tile_pixels(frame, groups)
    assert pixels["black"] == 0, pixels
    assert pixels["dark_groups"] == [], pixels
    target = op(30, 75)
    hover_and_click(page, frame, target)

    # pan and zoom (out and in) on the tiles, then zoomed in on the target: every item drawn and listed
    _pan_zoom_and_zoom_in(page, frame, target)
    page.screenshot(path=str(SHOTS / "render_scale_full.png"))
    longest = longest_self_since(frame, t0)
    where = _tasks_since(frame, t0)
    if longest > LONG_TASK_MS:
        # one long task that the same interactions do not give again is the 2-core machine's (the
        # test's TensorBoard and workers share it), not the app's: they run once more, measured alone
        # (a draw took 55 ms once in 3 CI runs, 20-26 ms in each of 4 runs alone)
        frame.click("[data-action=fit]")
        settle(frame)
        t1 = frame.evaluate("performance.now()")
        _pan_zoom_and_zoom_in(page, frame, target)
        first = (longest, where)
        longest, where = longest_self_since(frame, t1), _tasks_since(frame, t1)
        where = {"first": first, "again": where}
    assert longest <= LONG_TASK_MS, f"a task of the plugin iframe took {longest:.0f} ms; tasks, measures: {where}"
    hover_and_click(page, frame, op(30, 76))
