"""Deep links in a real TensorBoard + Chromium: the view lives in TensorBoard's own
URL (``#graph_explorer&p.graph_explorer.run=...``), so a link opened in a fresh browser context
restores it; a stale link opens the closest valid view with a warning line, never a blank page.
"""

from __future__ import annotations

import json
from urllib.parse import quote

import pytest

from tests.ui.conftest import app_frame, wait_settled
from tests.ui.test_graph_explorer_ui import ds, nodes, open_graph, to_page

pytestmark = pytest.mark.slow


def fresh_frame(browser, url):
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    frame = app_frame(page)
    frame.wait_for_function("document.body.dataset.restored === 'true'", timeout=60000)
    wait_settled(frame)
    return context, page, frame, errors


def link_for(base, **state):
    parts = ["graph_explorer"] + [f"p.graph_explorer.{k}={quote(v, safe='')}" for k, v in state.items()]
    return f"{base}/#" + "&".join(parts)


def show_layer1_matmul(page, frame) -> None:
    """The view the link and bookmark tests keep: tf1_graph at step 0, layer1 open, layer1/MatMul
    selected by a click, coloured by structure."""
    open_graph(frame, "tf1_graph")
    frame.select_option("[data-picker=step]", "0")
    wait_settled(frame)
    frame.evaluate("window.graphExplorer.setExpanded(['layer1'])")
    frame.wait_for_function("JSON.parse(document.body.dataset.expanded || '[]').includes('layer1')")
    wait_settled(frame)
    frame.evaluate("window.graphExplorer.center('layer1/MatMul')")
    [target] = [n for n in nodes(frame) if n["name"] == "layer1/MatMul"]
    page.mouse.click(*to_page(frame, target))
    frame.wait_for_function("document.body.dataset.selected === 'layer1/MatMul'")
    frame.select_option("[data-picker=color]", "structure")


def test_link_restores_expansion_selection_and_colour(page, explorer, browser, tensorboard_url, ui_logdir):
    frame = explorer
    show_layer1_matmul(page, frame)
    frame.click("[data-action=copy-link]")
    frame.wait_for_function("!!document.body.dataset.linkCopied")
    url = ds(frame, "linkCopied")
    assert "#graph_explorer&" in url and "p.graph_explorer.run=tf1_graph" in url and "p.graph_explorer.step=0" in url
    assert page.url == url  # the TensorBoard page's own URL holds the view
    context, page2, frame2, errors = fresh_frame(browser, url)
    try:
        # TensorBoard's plugin API for URL data answers {} in TB 2.21 (its legacy hash dict is not
        # filled from the URL): the app then reads the parent's hash itself
        assert ds(frame2, "linkVia") in ("plugin_api", "hash")
        assert frame2.input_value("[data-picker=run]") == "tf1_graph" and frame2.input_value("[data-picker=step]") == "0"
        assert "layer1" in json.loads(ds(frame2, "expanded"))
        assert ds(frame2, "selected") == "layer1/MatMul"
        assert ds(frame2, "colorMode") == "structure" and frame2.input_value("[data-picker=color]") == "structure"
        assert frame2.get_attribute("[data-info] [data-node-name]", "data-node-name") == "layer1/MatMul"
        assert ds(frame2, "linkWarnings") == "0" and not errors
        page2.screenshot(path="tests/_artifacts/screenshots/deep_link_restored.png")
    finally:
        context.close()


def test_stale_links_open_the_closest_view_with_a_warning(browser, tensorboard_url, ui_logdir):
    base = tensorboard_url(ui_logdir, min_runs=4)
    url = link_for(base, run="tf1_graph", step="0", expanded=json.dumps(["layer1", "gone_group"]),
                   selected="layer1/NoSuchOp", color="rainbow")
    context, page, frame, errors = fresh_frame(browser, url)
    try:
        assert ds(frame, "status") == "ready" and int(ds(frame, "sceneNodes")) > 0
        assert json.loads(ds(frame, "expanded")) == ["layer1"]
        warning = frame.text_content("[data-link-warning]")
        assert "gone_group" in warning and "layer1/NoSuchOp" in warning and "rainbow" in warning
        assert ds(frame, "linkWarnings") == "3" and not errors
        page.screenshot(path="tests/_artifacts/screenshots/deep_link_stale.png")
    finally:
        context.close()
    context, page, frame, errors = fresh_frame(browser, link_for(base, run="no_such_run", tag="x"))
    try:
        assert ds(frame, "status") == "ready" and int(ds(frame, "sceneNodes")) > 0
        assert "no_such_run" in frame.text_content("[data-link-warning]")
        assert not errors
    finally:
        context.close()


def center_and_scale(frame) -> tuple[float, float, float]:
    """The world point at the main canvas's centre and the scale (window.graphExplorer.viewport)."""
    return tuple(frame.evaluate("""(() => {
        const v = window.graphExplorer.viewport();
        const c = document.querySelector('canvas').getBoundingClientRect();
        return [(c.width / 2 - v.tx) / v.k, (c.height / 2 - v.ty) / v.k, v.k];
    })()"""))


def test_link_keeps_pan_and_zoom(page, explorer, browser, tensorboard_url, ui_logdir):
    """The view's pan and zoom are in the link once the view rests (not a URL write per frame
    while panning); a fresh page shows the same world point at the canvas's centre at the same
    scale; a view that is not three numbers is refused with a warning and the graph fitted."""
    frame = explorer
    show_layer1_matmul(page, frame)
    box = frame.locator("canvas").first.bounding_box()
    page.mouse.move(box["x"] + box["width"] * 0.3, box["y"] + box["height"] * 0.4)
    for _ in range(4):
        page.mouse.wheel(0, -240)
    page.mouse.move(box["x"] + 200, box["y"] + 200)
    page.mouse.down()
    page.mouse.move(box["x"] + 260, box["y"] + 150, steps=5)
    page.mouse.up()
    x, y, k = center_and_scale(frame)
    frame.wait_for_function(f"(document.body.dataset.link || '').includes('p.graph_explorer.view={x:.1f}') || "
                            f"(document.body.dataset.link || '').includes('p.graph_explorer.view={round(x, 1):g}')",
                            timeout=5000)
    url = ds(frame, "link")
    assert page.url == url
    view = dict(part.split("=", 1) for part in url.split("#", 1)[1].split("&") if "=" in part)["p.graph_explorer.view"]
    vx, vy, vk = (float(v) for v in view.replace("%2C", ",").split(","))
    assert abs(vx - x) <= 0.05 and abs(vy - y) <= 0.05 and abs(vk - k) <= k * 1e-3
    assert k > 1.0  # zoomed in past the fitted view

    context, page2, frame2, errors = fresh_frame(browser, url)
    try:
        x2, y2, k2 = center_and_scale(frame2)
        assert abs(x2 - vx) < 0.01 and abs(y2 - vy) < 0.01 and k2 == pytest.approx(vk)
        assert ds(frame2, "selected") == "layer1/MatMul" and ds(frame2, "linkWarnings") == "0" and not errors
        assert "p.graph_explorer.view=" + view in ds(frame2, "link")  # written back unchanged
        page2.screenshot(path="tests/_artifacts/screenshots/deep_link_pan_zoom.png")
    finally:
        context.close()

    base = url.split("#", 1)[0].rstrip("/")
    context, page3, frame3, errors = fresh_frame(browser, link_for(base, run="tf1_graph", step="0", view="12,<b>x</b>,1e400"))
    try:
        warning = frame3.text_content("[data-link-warning]")
        assert "is not a pan and zoom" in warning and "<b>x</b>" in warning  # shown as text
        assert frame3.locator("[data-link-warning] b").count() == 0
        assert ds(frame3, "status") == "ready" and int(ds(frame3, "sceneNodes")) > 0 and not errors
    finally:
        context.close()
