"""Per-node data in the browser (issue 22, item 2): a real tensorboard over the logs of a small
PyTorch model trained 6 steps with the hooks helper (block ``layer2[0]`` NaN at step 3), the app
in headless Chromium.

Colour by a node-data tag (the canvas pixels at a node are its value's colour); the step slider
recolours without a new scene; the top-k list jumps to a node (opens its groups, selects it); at
the NaN step the NaN block heads the list, its group is drawn in the NaN colour, and its info
pane shows the value and the history plot.
"""

from __future__ import annotations

import json

import pytest

from tests import logwriters as lw
from tests.conftest import SCREENSHOTS
from tests.ui.conftest import app_frame, wait_settled, set_expanded
from tests.ui.test_deep_link_ui import fresh_frame

NAN_RGB = (0xD5, 0x00, 0xF9)


@pytest.fixture(scope="module")
def nd_logdir(tmp_path_factory):
    root = tmp_path_factory.mktemp("nd_ui_logdir")
    lw.write_torch_node_data(root)
    return root


def ds(frame, key: str) -> str:
    return frame.evaluate(f"document.body.dataset[{json.dumps(key)}] ?? ''")


def pixel(frame, name: str) -> tuple:
    """The canvas colour a little inside the top-left corner of node ``name``'s box."""
    return tuple(frame.evaluate("""(name) => {
      const n = window.graphExplorer.nodes().find(n => n.name === name);
      const c = document.querySelector('[data-canvas]');
      const r = c.getBoundingClientRect();
      const dpr = c.width / r.width;
      const x = Math.round((n.x - n.w / 2 + 6 - r.left) * dpr), y = Math.round((n.y - n.h / 2 + 4 - r.top) * dpr);
      return Array.from(c.getContext('2d').getImageData(x, y, 1, 1).data.slice(0, 3));
    }""", name))


def fills(frame, name: str):
    return frame.evaluate(f"window.graphExplorerNodeData.fill({json.dumps(name)})")


def choose_tag(frame, tag: str) -> None:
    value = frame.eval_on_selector_all("[data-picker=color] option",
                                       f"os => os.map(o => o.value).find(v => v.endsWith({json.dumps(tag)} + '\"]'))")
    assert value, frame.eval_on_selector_all("[data-picker=color] option", "os => os.map(o => o.value)")
    frame.select_option("[data-picker=color]", value)
    frame.wait_for_function("document.body.dataset.nodeDataState === 'ready'", timeout=60000)


def set_step(frame, index: int) -> None:
    frame.eval_on_selector("[data-nd=step]", f"s => {{ s.value = '{index}'; s.dispatchEvent(new Event('input')); }}")
    frame.wait_for_function(f"document.body.dataset.nodeDataStep === '{index}' && "
                            "document.body.dataset.nodeDataState === 'ready'", timeout=60000)
    frame.wait_for_timeout(200)  # the next frame drawn


def open_tab(page, url: str, expanded: list[str] | None = None):
    """The Graph Explorer tab of TensorBoard at ``url``, settled, its node-data tags listed;
    ``expanded``: the groups left open (the first view opens TinyNet's block lists too: these
    tests read the colour of a closed ``layer2``)."""
    page.set_viewport_size({"width": 1400, "height": 900})
    page.goto(f"{url}/#graph_explorer")
    frame = app_frame(page)
    assert wait_settled(frame) == "ready", ds(frame, "error")
    if expanded is not None:
        set_expanded(frame, expanded)
    frame.wait_for_function("[...document.querySelectorAll('[data-picker=color] option')]"
                            ".some(o => o.value.startsWith('nd:'))", timeout=30000)
    return frame


def test_colour_by_node_data_step_slider_top_k_and_the_nan_step(page, tensorboard_url, nd_logdir):
    frame = open_tab(page, tensorboard_url(nd_logdir), expanded=["TinyNet"])
    scene_before = ds(frame, "sceneNodes")

    # colour by activation_max_abs at the last step: layer2 is drawn in its value's colour
    choose_tag(frame, "activation_max_abs")
    assert ds(frame, "colorMode") == "node_data" and ds(frame, "nodeDataStep") == "5"
    layer2 = "TinyNet/Sequential[layer2]"
    fill5 = frame.evaluate(f"window.graphExplorerNodeData.fill({json.dumps(layer2)})")
    assert fill5 and fill5.startswith("rgb("), fill5
    assert pixel(frame, layer2) == tuple(int(c) for c in fill5[4:-1].split(","))
    legend = frame.inner_text("[data-legend]")
    assert "activation_max_abs (max) · step 5" in legend, legend
    page.screenshot(path=str(SCREENSHOTS / "node_data_colour_step5.png"))

    # the step slider: step 0 colours the same nodes differently, with no new scene
    shown = [n["name"] for n in frame.evaluate("window.graphExplorer.nodes()") if n["parent"] == "TinyNet"]
    fills5 = {n: fills(frame, n) for n in shown}
    set_step(frame, 0)
    fills0 = {n: fills(frame, n) for n in shown}
    changed = [n for n in shown if fills0[n] != fills5[n] and fills0[n]]
    assert changed, (fills0, fills5)
    assert pixel(frame, changed[0]) == tuple(int(c) for c in fills0[changed[0]][4:-1].split(","))
    assert ds(frame, "sceneNodes") == scene_before
    page.screenshot(path=str(SCREENSHOTS / "node_data_colour_step0.png"))

    # the NaN step: the NaN block heads the top-k list; its collapsed group is drawn NaN-coloured
    set_step(frame, lw.NAN_STEP)
    top = frame.eval_on_selector_all("[data-nd-top] [data-jump]", "ls => ls.map(l => l.dataset.jump)")
    assert top[0] == lw.NAN_MODULE, top
    assert pixel(frame, layer2) == NAN_RGB
    assert "NaN" in frame.inner_text("[data-legend]")
    page.screenshot(path=str(SCREENSHOTS / "node_data_nan_step.png"))

    # the top-k list jumps: the block's groups open, it is selected, its value and history shown
    frame.click(f"[data-nd-top] [data-jump={json.dumps(lw.NAN_MODULE)}]")
    frame.wait_for_function(f"document.body.dataset.selected === {json.dumps(lw.NAN_MODULE)}", timeout=60000)
    frame.wait_for_selector(f"[data-nd-info={json.dumps(lw.NAN_MODULE)}] [data-nd-history]", timeout=60000)
    assert frame.get_attribute(f"[data-nd-info={json.dumps(lw.NAN_MODULE)}] [data-nd-value]", "data-nd-value") == "NaN"
    assert frame.get_attribute("[data-nd-history]", "data-nd-history") == "6"
    frame.wait_for_function("document.body.dataset.nodeDataState === 'ready'", timeout=60000)
    frame.wait_for_timeout(300)
    assert pixel(frame, lw.NAN_MODULE) == NAN_RGB
    assert frame.inner_text("[data-nd-unmatched]").endswith("0 matched no node")
    page.screenshot(path=str(SCREENSHOTS / "node_data_top_k_jump.png"))


def test_unmatched_names_are_counted_and_listed(page, tensorboard_url, nd_logdir, tmp_path):
    """An uploaded Model Explorer JSON naming one real group and two that are none."""
    page.set_viewport_size({"width": 1400, "height": 900})
    page.goto(f"{tensorboard_url(nd_logdir)}/#graph_explorer")
    frame = app_frame(page)
    assert wait_settled(frame) == "ready"
    set_expanded(frame, ["TinyNet"])  # layer1 closed: its colour is read
    assert frame.is_visible("[data-nd=load]")  # offered before any node data colours the graph
    assert not frame.is_visible("[data-nd=controls]")
    path = tmp_path / "latency.json"
    path.write_text(json.dumps({"results": {"TinyNet/Sequential[layer1]": {"value": 3},
                                            "ghost/op": {"value": 1}, "<img src=x>": {"value": 2}},
                                "thresholds": [{"value": 2, "bgColor": "#00ff00"}, {"value": 5, "bgColor": "#ff0000"}]}))
    frame.set_input_files("[data-nd=file]", str(path))
    frame.wait_for_function("document.body.dataset.nodeDataState === 'ready'", timeout=60000)
    assert frame.get_attribute("[data-nd-unmatched]", "data-nd-unmatched") == "2"
    frame.click("[data-nd-unmatched] ~ details summary")
    listed = frame.eval_on_selector_all("[data-nd=unmatched] details li", "ls => ls.map(l => l.textContent)")
    assert sorted(listed) == ["<img src=x>", "ghost/op"]  # as text, never HTML
    assert frame.evaluate("document.querySelectorAll('img').length") == 0
    frame.select_option("[data-nd=scale]", "thresholds")
    frame.wait_for_timeout(300)
    assert pixel(frame, "TinyNet/Sequential[layer1]") == (0xFF, 0x00, 0x00)  # 3 <= 5: the data's own colour
    assert "latency.json (max) · step 0" in frame.inner_text("[data-legend]")  # the file, not the upload id
    page.screenshot(path=str(SCREENSHOTS / "node_data_upload_unmatched.png"))


def test_a_link_keeps_the_node_data_colouring(page, browser, tensorboard_url, nd_logdir):
    """The deep link (and so a bookmark) names the node-data tag the graph is coloured by and the step
    picked on the slider; a fresh page opened on it colours by the same tag at that step, its option
    chosen once the tags are listed."""
    frame = open_tab(page, tensorboard_url(nd_logdir))
    choose_tag(frame, "nonfinite_count")
    chosen = frame.input_value("[data-picker=color]")
    # at the last step no module has a NaN: a count of 0 everywhere is drawn at the pale end of
    # the scale (it was drawn at the dark end, as if every module were the worst)
    assert ds(frame, "nodeDataStep") == "5"
    assert fills(frame, "TinyNet/Sequential[layer2]") == "rgb(255,245,235)"
    set_step(frame, 3)  # the NaN step: the link keeps it
    frame.wait_for_function("decodeURIComponent(window.parent.location.hash).includes('nd:') && "
                            "decodeURIComponent(window.parent.location.hash).includes('count\",3]')", timeout=30000)
    url = page.url
    assert "p.graph_explorer.color=" in url
    context, _, frame2, errors = fresh_frame(browser, url)
    try:
        frame2.wait_for_function("document.body.dataset.nodeDataState === 'ready'", timeout=60000)
        assert ds(frame2, "colorMode") == "node_data" and ds(frame2, "nodeDataTag") == "nonfinite_count"
        assert ds(frame2, "nodeDataStep") == "3"  # the step the link named, not the latest
        assert fills(frame2, "TinyNet/Sequential[layer2]") != "rgb(255,245,235)"  # its NaN count
        # the graph's own run: its tags are named by tag alone
        labels = frame2.eval_on_selector_all("[data-picker=color] option", "os => os.map(o => o.textContent)")
        assert "Node data: nonfinite_count" in labels, labels
        frame2.wait_for_function(f"document.querySelector('[data-picker=color]').value === {json.dumps(chosen)}",
                                 timeout=30000)
        assert ds(frame2, "linkWarnings") == "0" and not errors
    finally:
        context.close()
