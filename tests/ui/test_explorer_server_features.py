"""End to end (TensorBoard subprocess + headless Chromium) for the features that need the
server's newer parts: series ungroup/regroup (``ungroup`` on every per-graph route), reversed
cycle edges (``SceneEdge.reversed``), expand/collapse through ``/scene_delta``, and the first scene
fetched by the page while the scene worker is still starting (then kept by the worker for deltas).
Screenshots land in tests/_artifacts/screenshots/.
"""

from __future__ import annotations

import json

import pytest

from tests.ui.conftest import app_frame, wait_settled
from tests.ui.test_explorer_loading_and_toggles import upload, wait_expanded, write_graph
from tests.ui.test_graph_explorer_ui import canvas_ink, ds, nodes, open_graph, page_shot_path, to_page

pytestmark = pytest.mark.slow


SERIES_GRAPH = """
@tf.function
def f(x):
    y = x
    for _ in range(7):
        y = tf.add(y, 1.0)   # add, add_1 .. add_6: one series of 7 same-op siblings
    return tf.nn.relu(y)
graph_def = f.get_concrete_function(tf.TensorSpec([None, 3])).graph.as_graph_def()
"""


def test_series_ungroup_and_regroup_persist(page, explorer, tmp_path):
    frame = explorer
    upload(frame, write_graph(tmp_path, "series", SERIES_GRAPH))
    series = [n for n in nodes(frame) if n["kind"] == "series"]
    assert series, [(n["name"], n["kind"]) for n in nodes(frame)]
    s = series[0]
    page.mouse.click(*to_page(frame, s))
    frame.wait_for_function(f"document.body.dataset.infoName === {json.dumps(s['name'])}")
    frame.click("[data-info] [data-action=ungroup]")
    frame.wait_for_function(f"JSON.parse(document.body.dataset.ungrouped).includes({json.dumps(s['name'])}) "
                            "&& document.body.dataset.status === 'ready'")
    frame.wait_for_function("!window.graphExplorer.nodes().some(n => n.kind === 'series')", timeout=60000)
    assert sum(1 for n in nodes(frame) if n["op"] == "AddV2") >= 7
    assert ds(frame, "infoName") == "" and ds(frame, "selected") == "", "the info pane still shows the gone series"
    page.screenshot(path=str(page_shot_path("series_ungrouped")))
    frame.click(f"[data-regroup={json.dumps(s['name'])}]")
    frame.wait_for_function("window.graphExplorer.nodes().some(n => n.kind === 'series')", timeout=60000)
    assert ds(frame, "ungrouped") == "[]"



CYCLE_GRAPH = """
tf.compat.v1.disable_eager_execution()
tf.compat.v1.disable_control_flow_v2()
g = tf.Graph()
with g.as_default():
    x = tf.compat.v1.placeholder(tf.float32, [3], name="x")
    i0 = tf.constant(0)
    _, out = tf.compat.v1.while_loop(lambda i, v: i < 5, lambda i, v: (i + 1, v * 2.0), [i0, x])
    tf.identity(out, name="result")
graph_def = g.as_graph_def()
"""


def test_reversed_cycle_edges_are_dashed_and_in_the_legend(page, explorer, tmp_path):
    frame = explorer
    upload(frame, write_graph(tmp_path, "cycle", CYCLE_GRAPH))
    loop = next(n for n in nodes(frame) if n["kind"] == "meta" and "while" in n["name"])
    if not loop["expanded"]:  # the first view may already have opened it (it holds most ops)
        frame.evaluate(f"window.graphExplorer.toggle({json.dumps(loop['name'])})")
        wait_expanded(frame, loop["name"])
    frame.wait_for_function("Number(document.body.dataset.legendEdgeEntries) === 1", timeout=30000)
    assert "reversed" in frame.inner_text("[data-legend]")
    assert "reversed" in frame.inner_text("[data-warnings]")
    frame.click("[data-action=fit]")
    page.wait_for_timeout(300)
    # the reversed-edge colour (#8e24aa) is on the canvas
    purple = frame.evaluate(
        """() => {
        const c = document.querySelector('[data-canvas]');
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0;
        for (let i = 0; i < d.length; i += 4) if (Math.abs(d[i] - 0x8e) + Math.abs(d[i+1] - 0x24) + Math.abs(d[i+2] - 0xaa) < 60) n++;
        return n;
    }""")
    assert purple > 5



# --------------------------------------------------------------------------- /scene_delta
def test_expand_and_collapse_go_through_scene_delta(page, explorer):
    frame = explorer
    open_graph(frame, "torch_cnn", kind="op", tag="__run_graph__")
    before = {n["name"] for n in nodes(frame)}
    group = max((n for n in nodes(frame) if n["kind"] == "meta" and not n["expanded"]), key=lambda n: n["cardinality"])
    frame.evaluate(f"window.graphExplorer.toggle({json.dumps(group['name'])})")
    wait_expanded(frame, group["name"])
    assert ds(frame, "sceneVia") == "delta"
    assert any(n["parent"] == group["name"] for n in nodes(frame))
    frame.evaluate(f"window.graphExplorer.toggle({json.dumps(group['name'])})")
    wait_expanded(frame, group["name"], present=False)
    assert ds(frame, "sceneVia") == "delta"
    assert {n["name"] for n in nodes(frame)} == before


def test_a_failing_scene_delta_falls_back_to_the_whole_scene(page, explorer):
    frame = explorer
    page.route("**/scene_delta?**", lambda route: route.fulfill(status=500, body='{"error": "boom"}'))
    open_graph(frame, "torch_cnn", kind="op", tag="__run_graph__")
    group = max((n for n in nodes(frame) if n["kind"] == "meta" and not n["expanded"]), key=lambda n: n["cardinality"])
    frame.evaluate(f"window.graphExplorer.toggle({json.dumps(group['name'])})")
    wait_expanded(frame, group["name"])
    assert ds(frame, "sceneVia") == "scene"
    assert ds(frame, "error") == ""
    assert any(n["parent"] == group["name"] for n in nodes(frame))


def test_the_first_scene_does_not_wait_for_the_worker_and_seeds_its_deltas(page, tensorboard_url, ui_logdir):
    # hold the worker's script back: the first scene must be fetched and drawn without it
    held = []
    page.route("**/static/scene_worker.js", lambda route: held.append(route))
    page.goto(f"{tensorboard_url(ui_logdir, min_runs=4)}/#graph_explorer")
    frame = app_frame(page)
    assert wait_settled(frame) == "ready", ds(frame, "error")
    frame.wait_for_function("Number(document.body.dataset.drawnNodes) > 0")
    assert ds(frame, "sceneVia") == "first"
    assert canvas_ink(frame) > 50
    assert held, "the worker's script was never asked for"
    assert frame.evaluate("performance.getEntriesByName('gx:worker-boot').length") == 0
    for route in held:
        route.continue_()
    frame.wait_for_function("performance.getEntriesByName('gx:worker-boot').length > 0")
    # the worker got the first scene as its seed: expand and collapse come as deltas from it
    before = {n["name"] for n in nodes(frame)}
    group = max((n for n in nodes(frame) if n["kind"] == "meta" and not n["expanded"]), key=lambda n: n["cardinality"])
    frame.evaluate(f"window.graphExplorer.toggle({json.dumps(group['name'])})")
    wait_expanded(frame, group["name"])
    assert ds(frame, "sceneVia") == "delta"
    assert ds(frame, "sceneSource") == "worker"
    assert any(n["parent"] == group["name"] for n in nodes(frame))
    frame.evaluate(f"window.graphExplorer.toggle({json.dumps(group['name'])})")
    wait_expanded(frame, group["name"], present=False)
    assert ds(frame, "sceneVia") == "delta"
    assert {n["name"] for n in nodes(frame)} == before
    marks = frame.evaluate("performance.getEntriesByType('mark').map(e => e.name)")
    assert [m for m in ("gx:module", "gx:listing", "gx:scene", "gx:model", "gx:paint") if m in marks] == \
        ["gx:module", "gx:listing", "gx:scene", "gx:model", "gx:paint"]
    assert page.errors == []
