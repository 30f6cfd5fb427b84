"""End to end (TensorBoard subprocess + headless Chromium): the scene worker, search and info-pane
jumps by the server's ancestry, the extraction and series-grouping toggles, graph warnings and
reversed edges, single-op groups, and expand/collapse through /scene_delta.

Graphs are written with real TF APIs and uploaded (``POST /upload``); only the warnings test uses a
hand-written pbtxt, because its point is bad input (a dangling input, a duplicate name).
Screenshots land in tests/_artifacts/screenshots/.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.tensorboard_process import TensorBoardProcess
from tests.ui.conftest import app_frame, wait_settled
from tests.ui.test_graph_explorer_ui import canvas_ink, ds, nodes, open_graph, page_shot_path, to_page

pytestmark = pytest.mark.slow


def upload(frame, path) -> None:
    frame.set_input_files("[data-upload]", str(path))
    frame.wait_for_function("document.body.dataset.status === 'ready' && "
                            "document.querySelector('[data-picker=run]').value === '__upload__'", timeout=60000)
    frame.wait_for_function("Number(document.body.dataset.drawnNodes) > 0")


def write_graph(tmp_path, name: str, body: str) -> str:
    """Runs ``body`` (TF code defining ``graph_def``) in a fresh process; writes ``name``.pbtxt.

    A process of its own: TF1 control flow and graph mode switches are global."""
    code = textwrap.dedent(
        """
        import os, sys
        os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
        import tensorflow as tf
        """
    ) + textwrap.dedent(body) + textwrap.dedent(
        f"""
        tf.io.write_graph(graph_def, {str(tmp_path)!r}, {name + '.pbtxt'!r}, as_text=True)
        """
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=300, capture_output=True)
    return str(tmp_path / f"{name}.pbtxt")


def search(frame, run: str, q: str = "", op: str = "") -> dict:
    params = {"run": run, "tag": "__run_graph__", "kind": "op", "q": q, "op": op, "wait": "10"}
    return frame.evaluate(f"fetch('search?' + new URLSearchParams({json.dumps(params)})).then(r => r.json())")


def node_details(frame, run: str, name: str) -> dict:
    params = {"run": run, "tag": "__run_graph__", "kind": "op", "name": name, "wait": "10"}
    return frame.evaluate(f"fetch('node?' + new URLSearchParams({json.dumps(params)})).then(r => r.json())")


def scene_expanded(frame) -> list[str]:
    return json.loads(ds(frame, "expanded") or "[]")


def wait_expanded(frame, name: str, present: bool = True) -> None:
    op = "" if present else "!"
    frame.wait_for_function(
        f"{op}JSON.parse(document.body.dataset.expanded || '[]').includes({json.dumps(name)}) "
        "&& document.body.dataset.status === 'ready'", timeout=60000)


# --------------------------------------------------------------------------- loading off the main thread
def test_scenes_are_fetched_and_parsed_by_the_worker(page, explorer):
    frame = explorer
    open_graph(frame, "torch_cnn", kind="op", tag="__run_graph__")
    assert ds(frame, "sceneSource") == "worker"
    assert ds(frame, "sceneVia") in ("scene", "delta")
    # the drawing / hit-testing index came built from the worker (typed arrays, transferred)
    assert ds(frame, "sceneIndex") == "worker"
    # the worker script resolves inside TensorBoard's iframe (base href plugin/graph_explorer/)
    status = frame.evaluate("fetch(new URL('static/scene_worker.js', document.baseURI)).then(r => [r.status, r.headers.get('content-type')])")
    assert status[0] == 200 and "javascript" in status[1]
    assert int(ds(frame, "buildYields")) >= 0 and int(ds(frame, "sceneNodes")) > 0
    assert canvas_ink(frame) > 50
    assert page.errors == []


def test_without_the_worker_scenes_load_on_the_main_thread(page, tensorboard_url, ui_logdir):
    page.route("**/static/scene_worker.js", lambda route: route.fulfill(status=404, body="gone"))
    page.goto(f"{tensorboard_url(ui_logdir, min_runs=4)}/#graph_explorer")
    frame = app_frame(page)
    assert wait_settled(frame) == "ready", ds(frame, "error")
    open_graph(frame, "torch_cnn", kind="op", tag="__run_graph__")
    assert ds(frame, "sceneSource") == "main"
    assert ds(frame, "sceneIndex") == "main"  # indexed on the main thread, in slices
    assert canvas_ink(frame) > 50


# --------------------------------------------------------------------------- jumps by ancestry
def test_search_hits_carry_the_server_ancestry_and_the_jump_opens_exactly_it(page, explorer):
    frame = explorer
    open_graph(frame, "torch_cnn", kind="op", tag="__run_graph__")
    answer = search(frame, "torch_cnn", op="aten::relu")
    hits = [h for h in answer["hits"] if h["ancestors"]]
    assert hits, answer
    deep = max(hits, key=lambda h: len(h["ancestors"]))
    # outermost first, root excluded: every ancestor is a group of this graph
    for outer in deep["ancestors"]:
        details = node_details(frame, "torch_cnn", outer)
        assert details["kind"] in ("meta", "series"), details
    frame.fill("[data-search=q]", "")
    frame.fill("[data-search=op]", "aten::relu")
    frame.click("[data-action=search]")
    frame.wait_for_function("Number(document.body.dataset.searchHits) > 0")
    frame.click(f"[data-hit={json.dumps(deep['name'])}]")
    frame.wait_for_function(f"document.body.dataset.selected === {json.dumps(deep['name'])}", timeout=60000)
    assert set(deep["ancestors"]) <= set(scene_expanded(frame))
    node = next(n for n in nodes(frame) if n["name"] == deep["name"])
    canvas = frame.locator("[data-canvas]").bounding_box()
    assert canvas["x"] <= node["x"] <= canvas["x"] + canvas["width"]
    assert canvas["y"] <= node["y"] <= canvas["y"] + canvas["height"]
    page.screenshot(path=str(page_shot_path("search_jump_by_ancestry")))


def test_info_pane_input_jump_opens_the_inputs_groups(page, explorer):
    """Inputs named ``x:1`` or living in another collapsed group: the jump asks the server."""
    frame = explorer
    open_graph(frame, "torch_cnn", kind="op", tag="__run_graph__")
    # a deep op, reached by search; then jump to each of its inputs in turn
    answer = search(frame, "torch_cnn", op="aten::_convolution")
    hit = max(answer["hits"], key=lambda h: len(h["ancestors"]))
    frame.fill("[data-search=op]", "aten::_convolution")
    frame.click("[data-action=search]")
    frame.wait_for_function("Number(document.body.dataset.searchHits) > 0")
    frame.click(f"[data-hit={json.dumps(hit['name'])}]")
    frame.wait_for_function(f"document.body.dataset.infoName === {json.dumps(hit['name'])}", timeout=60000)
    links = frame.eval_on_selector_all("[data-info] [data-io=inputs] [data-jump]", "ls => ls.map(l => l.dataset.jump)")
    assert links
    target = links[0]
    frame.click(f"[data-info] [data-io=inputs] [data-jump={json.dumps(target)}]")
    base = target.split(":")[0] if target.rsplit(":", 1)[-1].isdigit() else target
    frame.wait_for_function(f"document.body.dataset.selected !== {json.dumps(hit['name'])} && document.body.dataset.status === 'ready'",
                            timeout=60000)
    selected = ds(frame, "selected")
    ancestry = search(frame, "torch_cnn", q="^" + re.escape(base) + "$")
    hit_of_input = next(h for h in ancestry["hits"] if h["name"] == base)
    # the input itself when it is drawn, else the deepest group holding it; its groups are open
    assert selected == base or selected == hit_of_input["ancestors"][-1]
    if selected == base:
        assert set(hit_of_input["ancestors"]) <= set(scene_expanded(frame))
    assert ds(frame, "error") == ""


# --------------------------------------------------------------------------- toggles
def test_extraction_toggle_is_sent_and_remembered(page, explorer, tmp_path):
    frame = explorer
    open_graph(frame, "tf2_trace_profile", kind="profile")
    extracted_on = sum(1 for n in nodes(frame) if n["extracted"])
    assert extracted_on > 0, "a TF2 trace extracts its variable handles"
    assert frame.is_checked("[data-toggle=extract]")
    frame.uncheck("[data-toggle=extract]")
    frame.wait_for_function("document.body.dataset.status === 'ready'")
    frame.wait_for_function("!window.graphExplorer.nodes().some(n => n.extracted)", timeout=60000)
    page.screenshot(path=str(page_shot_path("extraction_off")))
    page.reload()
    frame = app_frame(page)
    wait_settled(frame)
    open_graph(frame, "tf2_trace_profile", kind="profile")
    assert not frame.is_checked("[data-toggle=extract]")
    assert not any(n["extracted"] for n in nodes(frame))
    frame.check("[data-toggle=extract]")
    frame.wait_for_function("window.graphExplorer.nodes().some(n => n.extracted)", timeout=60000)


# --------------------------------------------------------------------------- warnings, reversed edges
BAD_PBTXT = """
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "y" op: "Relu" input: "x" input: "ghost:0" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "y" op: "Identity" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "z" op: "Neg" input: "y" attr { key: "T" value { type: DT_FLOAT } } }
"""


def test_graph_warnings_are_shown_as_text(page, explorer, tmp_path):
    path = tmp_path / "warn.pbtxt"
    path.write_text(BAD_PBTXT)
    frame = explorer
    upload(frame, path)
    frame.wait_for_function("Number(document.body.dataset.warningCount) >= 2")
    text = frame.inner_text("[data-warnings]")
    assert "missing node" in text and "ghost" in text, text
    assert "duplicate node name" in text, text
    assert frame.eval_on_selector("div[data-warnings]", "e => e.querySelectorAll('*:not(span)').length") == 0
    assert frame.is_visible("[data-warnings]")


# --------------------------------------------------------------------------- single-op groups
SINGLE_OP_GROUP = """
@tf.function
def f(x):
    with tf.name_scope("lonely"):
        y = tf.nn.relu(x)
    return tf.negative(y) * 2.0
graph_def = f.get_concrete_function(tf.TensorSpec([None, 3])).graph.as_graph_def()
"""


def test_a_group_holding_one_op_opens(page, explorer, tmp_path):
    frame = explorer
    upload(frame, write_graph(tmp_path, "lonely", SINGLE_OP_GROUP))
    group = next(n for n in nodes(frame) if n["name"] == "lonely")
    assert group["kind"] == "meta" and group["cardinality"] == 1
    page.mouse.dblclick(*to_page(frame, group))
    wait_expanded(frame, "lonely")
    assert [n["name"] for n in nodes(frame) if n["parent"] == "lonely" and n["kind"] == "op"] == ["lonely/Relu"]
    page.screenshot(path=str(page_shot_path("single_op_group_open")))


_SCALARS_ONLY = """
import sys
from torch.utils.tensorboard import SummaryWriter
with SummaryWriter(sys.argv[1]) as w:  # a training run that wrote no graph (a subclassed Keras 3 model's callback, say)
    for step in range(3):
        w.add_scalar("loss", 1.0 / (step + 1), step)
"""


def test_a_logdir_without_graphs_says_how_graphs_are_written(page, tmp_path):
    """A logdir of scalars only: the tab says there is no graph, which writers make one (a
    subclassed Keras 3 model's callback writes none) and what can be uploaded; no empty minimap
    frame is left in the corner."""
    repo = Path(__file__).resolve().parents[2]
    subprocess.run([sys.executable, "-c", _SCALARS_ONLY, str(tmp_path / "scalars_only")], cwd=repo,
                   env=dict(os.environ, PYTHONPATH=str(repo)), check=True, timeout=300, capture_output=True)
    with TensorBoardProcess(tmp_path, inactive_ok=True) as tb:  # no graph data: the tab is listed inactive
        page.goto(f"{tb.url}/#graph_explorer")
        frame = app_frame(page)
        assert wait_settled(frame, 60000) == "empty"
        text = frame.locator(".gx-empty.gx-on").inner_text()
        assert text.startswith("No graph data in this logdir.")
        for words in ("trace_export", "FileWriter.add_graph", "subclassed Keras 3 model", "SummaryWriter.add_graph",
                      "tb_graph_plugin.torch.add_graph", "upload"):
            assert words in text, (words, text)
        frame.wait_for_function("getComputedStyle(document.querySelector('canvas.gx-minimap')).visibility === 'hidden'",
                                timeout=10000)
        page.screenshot(path=page_shot_path("empty_logdir"))
