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
