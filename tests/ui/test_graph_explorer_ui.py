"""End to end: TensorBoard (subprocess, plugin installed) + headless Chromium on real logs.

Each test drives the Graph Explorer tab like a user (mouse, keyboard, pickers) and reads the
state the app publishes on ``document.body.dataset`` (status, sceneNodes, selected, expanded,
traced, colorMode, ...) plus canvas pixels. Screenshots land in tests/_artifacts/screenshots/.
"""

from __future__ import annotations

import json
import re

import pytest

from tests.conftest import SCREENSHOTS
from tests.ui.conftest import PLUGIN, app_frame, wait_settled

pytestmark = pytest.mark.slow


def ds(frame, key: str) -> str:
    return frame.evaluate(f"document.body.dataset[{json.dumps(key)}] ?? ''")


def nodes(frame) -> list[dict]:
    return frame.evaluate("window.graphExplorer.nodes()")


def to_page(frame, node: dict) -> tuple[float, float]:
    """A node's centre in page coordinates (the iframe sits inside TensorBoard's page)."""
    box = frame.frame_element().bounding_box()
    return box["x"] + node["x"], box["y"] + node["y"]


def canvas_ink(frame) -> int:
    """How many sampled canvas pixels differ from the background colour."""
    return frame.evaluate(
        """() => {
        const c = document.querySelector('[data-canvas]');
        const ctx = c.getContext('2d');
        const d = ctx.getImageData(0, 0, c.width, c.height).data;
        const bg = [d[0], d[1], d[2]];
        let ink = 0;
        for (let i = 0; i < d.length; i += 4 * 7)
            if (Math.abs(d[i] - bg[0]) + Math.abs(d[i+1] - bg[1]) + Math.abs(d[i+2] - bg[2]) > 30) ink++;
        return ink;
    }"""
    )


def open_graph(frame, run: str, kind: str | None = None, tag: str | None = None) -> None:
    frame.select_option("[data-picker=run]", run)
    wait_settled(frame)
    if tag is not None and frame.input_value("[data-picker=tag]") != tag:
        frame.select_option("[data-picker=tag]", tag)
        wait_settled(frame)
    if kind is not None and frame.input_value("[data-picker=kind]") != kind:
        frame.select_option("[data-picker=kind]", kind)
        wait_settled(frame)
    assert ds(frame, "status") == "ready", ds(frame, "error")
    frame.wait_for_function("Number(document.body.dataset.drawnNodes) > 0")


def visible_group(frame) -> dict:
    groups = [n for n in nodes(frame) if n["kind"] == "meta" and not n["expanded"] and n["cardinality"] > 1
              and n["w"] > 8 and n["h"] > 6]
    assert groups, "no collapsed group visible"
    return max(groups, key=lambda n: n["cardinality"])


def visible_op_with_inputs(frame) -> dict:
    """A visible op node that has an incoming drawn edge (trace/inputs need one)."""
    name = frame.evaluate(
        """() => {
        const ns = window.graphExplorer.nodes();
        let ops = ns.filter(n => n.kind === 'op' && !n.extracted && n.w > 4);
        // A PyTorch graph's top level holds only groups: any main-graph node will do then.
        if (!ops.length) ops = ns.filter(n => n.kind === 'meta' && !n.extracted && n.w > 4);
        return ops.length ? ops[Math.floor(ops.length / 2)].name : null;
    }"""
    )
    assert name
    return next(n for n in nodes(frame) if n["name"] == name)


def test_opens_on_a_graph_that_exists_and_pickers_switch_graphs(page, explorer):
    frame = explorer
    assert ds(frame, "status") == "ready", ds(frame, "error")
    assert int(ds(frame, "sceneNodes")) > 0
    assert canvas_ink(frame) > 50
    runs = frame.eval_on_selector_all("[data-picker=run] option", "os => os.map(o => o.value)")
    assert {"torch_cnn", "keras_callback_train", "tf1_graph", "tf2_trace_profile"} <= set(runs)
    # a Keras-callback run holds only a conceptual graph: the picker must offer just that
    open_graph(frame, "keras_callback_train")
    kinds = frame.eval_on_selector_all("[data-picker=kind] option", "os => os.map(o => o.value)")
    assert kinds == ["conceptual"]
    assert int(ds(frame, "sceneNodes")) > 0 and canvas_ink(frame) > 50
    # its first view opens the one-box model on its layers, each op labelled beside its ellipse
    shown = [n for n in nodes(frame) if n["kind"] == "op" and n["parent"] is not None]
    assert len(shown) >= 5 and json.loads(ds(frame, "expanded"))
    frame.wait_for_function(f"Number(document.body.dataset.drawnLabels) >= {len(shown)}")
    page.screenshot(path=str(page_shot_path("keras_first_view_op_labels")))
    open_graph(frame, "torch_cnn", kind="op", tag="__run_graph__")
    assert canvas_ink(frame) > 50
    assert page.errors == []


def test_pan_zoom_and_fit(page, explorer):
    frame = explorer
    open_graph(frame, "torch_cnn", kind="op", tag="__run_graph__")
    box = frame.frame_element().bounding_box()
    canvas = frame.locator("[data-canvas]").bounding_box()
    cx, cy = box["x"] + canvas["x"] + canvas["width"] / 2, box["y"] + canvas["y"] + canvas["height"] / 2
    k0 = frame.evaluate("window.graphExplorer.viewport().k")
    page.mouse.move(cx, cy)
    page.mouse.wheel(0, -400)
    frame.wait_for_function(f"window.graphExplorer.viewport().k > {k0} * 1.5")
    vp = frame.evaluate("window.graphExplorer.viewport()")
    page.mouse.down()
    page.mouse.move(cx + 120, cy + 60, steps=6)
    page.mouse.up()
    vp2 = frame.evaluate("window.graphExplorer.viewport()")
    assert abs(vp2["tx"] - vp["tx"] - 120) < 2 and abs(vp2["ty"] - vp["ty"] - 60) < 2
    # the drag showed shifted copies of the last drawing, and a full drawing followed when it stopped
    assert int(ds(frame, "shiftedFrames") or 0) > 0
    frame.wait_for_function("document.body.dataset.shifted === 'false'", timeout=2000)
    frame.click("[data-action=fit]")
    frame.wait_for_function(f"window.graphExplorer.viewport().k < {vp2['k']}")
    assert canvas_ink(frame) > 50


def test_expand_and_collapse_a_group_keeps_it_in_place(page, explorer):
    frame = explorer
    open_graph(frame, "torch_cnn", kind="op", tag="__run_graph__")
    group = visible_group(frame)
    before = to_page(frame, group)
    asked = []  # the info pane's requests: a double-click's two clicks select the group once
    page.on("request", lambda r: asked.append(r.url) if "/graph_explorer/node?" in r.url else None)
    page.mouse.dblclick(*before)
    frame.wait_for_function(
        f"JSON.parse(document.body.dataset.expanded || '[]').includes({json.dumps(group['name'])}) "
        "&& document.body.dataset.status === 'ready'"
    )
    frame.wait_for_function(f"document.body.dataset.infoName === {json.dumps(group['name'])}")
    details = [u for u in asked if "cost=on" not in u]  # the node's cost is asked apart, after its details
    assert len(details) == 1 and len(asked) - len(details) <= 1, asked
    expanded = next(n for n in nodes(frame) if n["name"] == group["name"])
    assert expanded["expanded"]
    assert abs(to_page(frame, expanded)[0] - before[0]) < 1.5 and abs(to_page(frame, expanded)[1] - before[1]) < 1.5
    children = [n for n in nodes(frame) if n["parent"] == group["name"]]
    assert children, "expanded group shows no children"
    page.screenshot(path=str(page_shot_path("expand_expanded")))
    page.mouse.dblclick(*to_page(frame, expanded))
    frame.wait_for_function(
        f"!JSON.parse(document.body.dataset.expanded || '[]').includes({json.dumps(group['name'])}) "
        "&& document.body.dataset.status === 'ready'"
    )
    assert not [n for n in nodes(frame) if n["parent"] == group["name"]]


def page_shot_path(name: str):
    from tests.ui.conftest import SHOTS

    SHOTS.mkdir(parents=True, exist_ok=True)
    return SHOTS / f"{name}.png"


def test_select_node_opens_info_pane_and_inputs_jump(page, explorer):
    frame = explorer
    open_graph(frame, "torch_cnn", kind="op", tag="__run_graph__")
    # The first view opens the model group (ResNetLike holds nearly all ops); open its first
    # convolution module. A convolution always reads a tensor from another main op (here the
    # image ``input/x``), so its info pane has an input link: the jump step always runs.
    module = next(n for n in nodes(frame) if n["name"] == "ResNetLike/Conv2d[conv1]")
    page.mouse.dblclick(*to_page(frame, module))
    frame.wait_for_function(f"JSON.parse(document.body.dataset.expanded || '[]').includes({json.dumps(module['name'])})")
    wait_settled(frame)
    target = next(n for n in nodes(frame) if n["parent"] == module["name"] and n["op"] == "aten::_convolution")
    page.mouse.click(*to_page(frame, target))
    frame.wait_for_function(f"document.body.dataset.infoName === {json.dumps(target['name'])}")
    info = frame.inner_text("[data-info]")
    assert target["name"] in info and target["op"] in info
    links = frame.eval_on_selector_all("[data-info] [data-io=inputs] [data-jump]", "ls => ls.map(l => l.dataset.jump)")
    assert links, "a convolution's info pane lists no input link"
    frame.click(f"[data-info] [data-io=inputs] [data-jump={json.dumps(links[0])}]")
    frame.wait_for_function(f"document.body.dataset.selected !== {json.dumps(target['name'])}"
                            " && document.body.dataset.status === 'ready'")
    # the input itself when it is drawn, else the group that holds it (collapsed)
    selected = ds(frame, "selected")
    base = links[0].rsplit(":", 1)[0] if links[0].rsplit(":", 1)[-1].isdigit() else links[0]
    assert selected == base or base.startswith(selected + "/"), (selected, links[0])


def test_search_by_regex_and_jump_expands_ancestors(page, explorer):
    frame = explorer
    open_graph(frame, "torch_cnn", kind="op", tag="__run_graph__")
    group = visible_group(frame)
    frame.fill("[data-search=q]", re.escape(group["name"]) + "/")
    frame.click("[data-action=search]")
    frame.wait_for_function("Number(document.body.dataset.searchHits) > 0")
    hits = frame.eval_on_selector_all("[data-hit]", "ls => ls.map(l => l.dataset.hit)")
    deep = max(hits, key=lambda h: h.count("/"))
    frame.click(f"[data-hit={json.dumps(deep)}]")
    frame.wait_for_function(
        f"JSON.parse(document.body.dataset.expanded || '[]').includes({json.dumps(group['name'])})"
        " && document.body.dataset.selected !== ''"
    )
    selected = ds(frame, "selected")
    assert deep == selected or deep.startswith(selected + "/")
    node = next(n for n in nodes(frame) if n["name"] == selected)
    canvas = frame.locator("[data-canvas]").bounding_box()
    assert canvas["x"] <= node["x"] <= canvas["x"] + canvas["width"]
    assert canvas["y"] <= node["y"] <= canvas["y"] + canvas["height"]


def test_search_by_op_type(page, explorer):
    frame = explorer
    open_graph(frame, "torch_cnn", kind="op", tag="__run_graph__")
    frame.fill("[data-search=q]", "")
    frame.fill("[data-search=op]", "aten::relu")
    frame.press("[data-search=op]", "Enter")
    frame.wait_for_function("document.body.dataset.searchHits !== undefined")
    hits = int(ds(frame, "searchHits"))
    text = frame.inner_text("[data-results]")
    assert hits > 0, text


def test_trace_inputs_highlights_the_upstream_path(page, explorer):
    frame = explorer
    open_graph(frame, "torch_cnn", kind="op", tag="__run_graph__")
    # the last node of the main graph has the most upstream
    name = frame.evaluate(
        """() => {
        const ns = window.graphExplorer.nodes().filter(n => !n.extracted && n.parent === null && n.kind !== 'in_embedding');
        ns.sort((a, b) => a.y - b.y);   // layout flows bottom-to-top or top-to-bottom: try both ends
        return [ns[0].name, ns[ns.length - 1].name];
    }"""
    )
    frame.select_option("[data-picker=trace]", "inputs")
    best = 0
    for candidate in name:
        node = next(n for n in nodes(frame) if n["name"] == candidate)
        page.mouse.click(*to_page(frame, node))
        frame.wait_for_function(f"document.body.dataset.selected === {json.dumps(candidate)}")
        best = max(best, int(ds(frame, "traced")))
        if best > 1:
            break
    assert best > 1, "tracing inputs of an end of the graph highlighted nothing"
    frame.select_option("[data-picker=trace]", "off")
    assert ds(frame, "traced") == "0"


@pytest.mark.parametrize("mode", ["structure", "device", "xla_cluster", "compute_time", "memory", "tpu"])
def test_colour_modes_recolour_and_show_a_legend(page, explorer, mode):
    frame = explorer
    open_graph(frame, "tf2_trace_profile", kind="profile")
    ink_before = frame.evaluate("document.querySelector('[data-canvas]').toDataURL()")
    frame.select_option("[data-picker=color]", mode)
    frame.wait_for_function(f"document.body.dataset.colorMode === '{mode}'")
    assert int(ds(frame, "legendEntries")) >= 1
    assert frame.is_visible("[data-legend]")
    legend = frame.inner_text("[data-legend]")
    assert legend.strip()
    if mode in ("compute_time", "memory", "device"):
        # a profile carries these: the colours must change
        frame.wait_for_timeout(100)
        assert frame.evaluate("document.querySelector('[data-canvas]').toDataURL()") != ink_before, legend


def test_upload_pbtxt_opens_it(page, explorer, tmp_path):
    import tensorflow as tf

    @tf.function
    def f(x):
        return tf.nn.relu(tf.matmul(x, tf.ones([3, 2])) + 1.0)

    graph_def = f.get_concrete_function(tf.TensorSpec([None, 3])).graph.as_graph_def()
    tf.io.write_graph(graph_def, str(tmp_path), "uploaded.pbtxt", as_text=True)
    frame = explorer
    frame.set_input_files("[data-upload]", str(tmp_path / "uploaded.pbtxt"))
    frame.wait_for_function("document.body.dataset.status === 'ready' && "
                            "document.querySelector('[data-picker=run]').value === '__upload__'", timeout=60000)
    assert int(ds(frame, "sceneNodes")) > 0
    assert canvas_ink(frame) > 20
    assert ds(frame, "error") == ""


def test_broken_upload_shows_the_server_message(page, explorer, tmp_path):
    broken = tmp_path / "broken.pbtxt"
    broken.write_text("node { name: 'a' op: \n this is not a graph")
    frame = explorer
    frame.set_input_files("[data-upload]", str(broken))
    frame.wait_for_function("document.body.dataset.status === 'error' && document.body.dataset.error.includes('broken.pbtxt')")
    text = frame.inner_text("[data-error-box]")
    assert "broken.pbtxt" in text and "GraphDef" in text and "HTTP 400" in text
    assert frame.is_visible("[data-error-box]")


def test_follows_tensorboard_dark_mode(page, explorer):
    frame = explorer
    assert ds(frame, "theme") == "light"
    page.evaluate("document.body.classList.add('dark-mode')")
    frame.wait_for_function("document.body.dataset.theme === 'dark'")
    pixel = "Array.from(document.querySelector('[data-canvas]').getContext('2d').getImageData(2, 2, 1, 1).data)"
    # The canvas repaints on the next animation frame after the theme switch.
    try:
        frame.wait_for_function(f"(() => {{ const p = {pixel}; return p[0] + p[1] + p[2] < 200; }})()", timeout=5000)
    finally:
        bg = frame.evaluate(f"(() => {pixel})()")
    assert sum(bg[:3]) < 200, bg
    page.evaluate("document.body.classList.remove('dark-mode')")
    frame.wait_for_function("document.body.dataset.theme === 'light'")


def test_remove_from_main_graph_persists_and_adds_back(page, explorer):
    frame = explorer
    open_graph(frame, "torch_cnn", kind="op", tag="__run_graph__")
    target = visible_op_with_inputs(frame)
    page.mouse.click(*to_page(frame, target))
    frame.wait_for_function(f"document.body.dataset.infoName === {json.dumps(target['name'])}")
    frame.click("[data-info] [data-action=hide]")
    frame.wait_for_function("document.body.dataset.hidden === '1'")
    page.reload()
    frame = app_frame(page)
    wait_settled(frame)
    open_graph(frame, "torch_cnn", kind="op", tag="__run_graph__")
    assert ds(frame, "hidden") == "1"
    frame.click(f"[data-add-back={json.dumps(target['name'])}]")
    frame.wait_for_function("document.body.dataset.hidden === '0'")


LEGEND_RECT = """(() => { const l = document.querySelector('[data-legend]');
  if (!l.classList.contains('gx-on')) return null;
  const r = l.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; })()"""


def under_legend(frame) -> list[str]:
    """Nodes drawn as boxes (not open groups' frames) that meet the legend (iframe page px)."""
    x0, y0, x1, y1 = frame.evaluate(LEGEND_RECT)
    return [n["name"] for n in nodes(frame) if not n["expanded"]
            and n["x"] - n["w"] / 2 < x1 and n["x"] + n["w"] / 2 > x0
            and n["y"] - n["h"] / 2 < y1 and n["y"] + n["h"] / 2 > y0]


def test_fit_keeps_what_it_draws_out_from_under_the_legend(page, tensorboard_url, real_logs):
    """The legend sits over the canvas's bottom-left corner: a fit (the Fit button, a first view)
    leaves no node box under it (a ConvNeXt trace's first view had ``graph_[1-364]`` under it;
    an open group's frame may pass under it). Coloured by structure, InceptionV3's legend is a
    line per template, and its fitted first view reaches that corner: ``conv2d_1`` was under it."""
    base = tensorboard_url(real_logs.get("keras_inceptionv3_trace"))
    page.goto(f"{base}/#{PLUGIN}")
    frame = app_frame(page, timeout=60)
    assert wait_settled(frame, timeout_ms=120_000) == "ready", ds(frame, "error")
    frame.select_option("[data-picker=color]", "structure")
    frame.wait_for_function("document.body.dataset.colorMode === 'structure'")
    assert int(ds(frame, "legendEntries")) >= 5
    frame.click("[data-action=fit]")
    frame.wait_for_timeout(100)
    page.screenshot(path=str(SCREENSHOTS / "fit_clear_of_legend_inceptionv3.png"))
    assert under_legend(frame) == []
    assert max(n["y"] + n["h"] / 2 for n in nodes(frame) if n["parent"] is None) > 0.6 * page.viewport_size["height"]  # still fills the height
