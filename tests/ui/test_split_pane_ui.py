"""Side-by-side split panes in a real TensorBoard + Chromium, on the TF-written Keras pair of
``keras_diff_pair`` (``changed`` = ``base`` + layer ``fc2``, ``fc1``'s activation relu -> tanh).

The main view shows ``changed`` (B), the second pane ``base`` (A). Asserts: the pane's graph is
the graph compared with (diff colours in the main view, A's changed nodes amber in the pane's
own canvas); selecting a node in one pane selects its match in the other by the diff's matching
(B's ``mlp_1/fc1_1/Tanh`` <-> A's ``mlp_1/fc1_1/Relu``, a pair under different names), opening
the closed group that holds it; a node only in B says so; each pane keeps its own viewport; the
pane is part of the deep link. Screenshots under tests/_artifacts/screenshots/.
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import SCREENSHOTS
from tests.ui.conftest import app_frame, wait_settled
from tests.ui.test_compare_ui import AMBER, pair_frame, pair_logdir, pixels_of  # noqa: F401 (fixtures)
from tests.ui.test_graph_explorer_ui import ds, nodes, open_graph, to_page

pytestmark = pytest.mark.slow

BASE_KEY = json.dumps(["base", "forward", "op", None], separators=(",", ":"))


def pane(frame, key: str) -> str:
    return frame.evaluate(f"document.querySelector('[data-pane=split]').dataset[{json.dumps(key)}] ?? ''")


def pane_nodes(frame) -> list[dict]:
    return frame.evaluate("window.graphExplorer.split.nodes()")


def pane_pixels(frame, rgb) -> int:
    return pixels_of(frame, rgb, "canvas[data-split-canvas]")


def open_split(frame) -> None:
    frame.click("[data-action=split]")
    frame.wait_for_function("document.querySelector('[data-pane=split]').dataset.open === 'true'")
    frame.select_option("[data-picker=split]", BASE_KEY)
    frame.wait_for_function("document.querySelector('[data-pane=split]').dataset.status === 'ready'", timeout=60000)
    frame.wait_for_function("document.body.dataset.diffSame === 'false' && document.body.dataset.colorMode === 'diff'", timeout=60000)


def test_split_pane_selection_follows_the_diff_matching(pair_frame, page, browser):
    frame = pair_frame
    open_graph(frame, "changed", tag="forward")
    main_box = frame.evaluate("(() => { const r = document.querySelector('[data-canvas]').getBoundingClientRect(); return [r.left, r.right]; })()")
    centre = sum(n["x"] for n in nodes(frame)) / len(nodes(frame))
    assert main_box[0] < centre < main_box[1]
    open_split(frame)
    assert pane(frame, "ref") == BASE_KEY and frame.input_value("[data-picker=compare]") == BASE_KEY
    # the main canvas is narrower now: its graph moved with the canvas's centre, none of it behind
    # the pane (it stayed where it was, its right half under the pane)
    frame.wait_for_timeout(300)
    main_box = frame.evaluate("(() => { const r = document.querySelector('[data-canvas]').getBoundingClientRect(); return [r.left, r.right]; })()")
    real = [n for n in nodes(frame) if not n["name"].startswith("__removed__/")]  # the ghost column aside
    assert all(main_box[0] <= n["x"] <= main_box[1] for n in real), (main_box, [(n["name"], n["x"]) for n in real])
    assert ds(frame, "diffChanged") != "0" and int(pane(frame, "sceneNodes")) > 0
    # the relu -> tanh pair, closed in both panes' first views: B's Tanh selected, A's Relu follows
    assert not [n for n in pane_nodes(frame) if n["name"] == "mlp_1/fc1_1/Relu"]
    frame.click("[data-diff-entry='mlp_1/fc1_1/Tanh']")
    frame.wait_for_function("document.body.dataset.selected === 'mlp_1/fc1_1/Tanh'")
    frame.wait_for_function("document.querySelector('[data-pane=split]').dataset.selected === 'mlp_1/fc1_1/Relu'", timeout=30000)
    assert "mlp_1/fc1_1" in json.loads(pane(frame, "expanded"))  # the group holding the match opened
    [relu] = [n for n in pane_nodes(frame) if n["name"] == "mlp_1/fc1_1/Relu"]
    box = frame.evaluate("(() => { const r = document.querySelector('canvas[data-split-canvas]').getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; })()")
    assert box[0] <= relu["x"] <= box[2] and box[1] <= relu["y"] <= box[3]  # revealed on screen
    frame.wait_for_timeout(300)
    assert pane_pixels(frame, AMBER) > 50  # A's changed nodes in the diff's amber, in the pane's own canvas
    page.screenshot(path=str(SCREENSHOTS / "split_pane_tanh_relu.png"))

    # each pane keeps its own viewport: zooming the pane leaves the main view where it was
    main_vp = frame.evaluate("window.graphExplorer.viewport()")
    pane_vp = frame.evaluate("window.graphExplorer.split.viewport()")
    frame_box = frame.frame_element().bounding_box()
    page.mouse.move(frame_box["x"] + (box[0] + box[2]) / 2, frame_box["y"] + (box[1] + box[3]) / 2)
    page.mouse.wheel(0, -300)
    frame.wait_for_timeout(200)
    assert frame.evaluate("window.graphExplorer.viewport()") == main_vp
    assert frame.evaluate("window.graphExplorer.split.viewport()")["k"] > pane_vp["k"]

    # a click in the pane selects there, and its match in the main view (A's MatMul of fc1)
    frame.evaluate("window.graphExplorer.split.center('mlp_1/fc1_1/MatMul')")
    [matmul] = [n for n in pane_nodes(frame) if n["name"] == "mlp_1/fc1_1/MatMul"]
    page.mouse.click(*to_page(frame, matmul))
    frame.wait_for_function("document.querySelector('[data-pane=split]').dataset.selected === 'mlp_1/fc1_1/MatMul'")
    frame.wait_for_function("document.body.dataset.selected === 'mlp_1/fc1_1/MatMul'", timeout=30000)
    assert any(n["name"] == "mlp_1/fc1_1/MatMul" for n in nodes(frame))

    # the keys act on the pane clicked last: an arrow walks the pane's edges (the main view follows
    # the match, as with a click), Backspace closes the pane's group holding the selection
    assert ds(frame, "keysPane") == "split"
    main_expanded = ds(frame, "expanded")
    page.keyboard.press("ArrowUp")
    frame.wait_for_function("!['mlp_1/fc1_1/MatMul', ''].includes(document.querySelector('[data-pane=split]').dataset.selected)")
    walked = pane(frame, "selected")
    assert walked.startswith("mlp_1/fc1_1/") or walked == "mlp_1/fc1_1"
    frame.wait_for_function(f"document.body.dataset.selected === {json.dumps(walked)}", timeout=30000)
    assert f"Selected" in frame.text_content("[data-live]") and walked in frame.text_content("[data-live]")
    page.keyboard.press("Backspace")
    frame.wait_for_function("!JSON.parse(document.querySelector('[data-pane=split]').dataset.expanded || '[]').includes('mlp_1/fc1_1')", timeout=30000)
    frame.wait_for_function("document.querySelector('[data-pane=split]').dataset.selected === 'mlp_1/fc1_1'")
    assert ds(frame, "expanded") == main_expanded  # the main view's groups untouched
    page.screenshot(path=str(SCREENSHOTS / "split_pane_keys.png"))
    # a click in the main view gives the keys back to it
    [main_node] = [n for n in nodes(frame) if n["name"] == ds(frame, "selected")][:1] or [nodes(frame)[0]]
    page.mouse.click(*to_page(frame, main_node))
    assert ds(frame, "keysPane") == "main"

    # a node only B has: the pane says so and selects nothing
    frame.click("[data-diff-entry='mlp_1/fc2_1/MatMul']")
    frame.wait_for_function("document.body.dataset.selected === 'mlp_1/fc2_1/MatMul'")
    frame.wait_for_function("document.querySelector('[data-pane=split]').dataset.selected === ''")
    assert "only in the main graph (added)" in frame.text_content("[data-pane-note]")
    page.screenshot(path=str(SCREENSHOTS / "split_pane_added_node.png"))
    assert not page.errors

    # the pane is part of the view's deep link: a fresh browser context opens both panes
    url = ds(frame, "link")
    assert "p.graph_explorer.split=" in url
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    try:
        page2 = context.new_page()
        page2.goto(url)
        frame2 = app_frame(page2)
        frame2.wait_for_function("document.body.dataset.restored === 'true'", timeout=60000)
        wait_settled(frame2)
        frame2.wait_for_function("document.querySelector('[data-pane=split]').dataset.status === 'ready'", timeout=60000)
        assert pane(frame2, "open") == "true" and pane(frame2, "ref") == BASE_KEY
        assert ds(frame2, "linkWarnings") == "0"
    finally:
        context.close()

    # closing the pane: one view again, the comparison stays
    frame.click("[data-action=split-close]")
    frame.wait_for_function("document.querySelector('[data-pane=split]').dataset.open === 'false'")
    assert "p.graph_explorer.split=" not in ds(frame, "link")


def test_split_pane_removed_nodes_and_ghosts_match(pair_frame, page):
    """The other direction: the main view shows ``base`` (B), the pane ``changed`` (A). fc2 is only
    in A: red in the pane, a ghost in the main view; the ghost selects A's fc2 and back."""
    frame = pair_frame
    open_graph(frame, "base", tag="forward")
    frame.click("[data-action=split]")
    frame.wait_for_function("document.querySelector('[data-pane=split]').dataset.open === 'true'")
    frame.select_option("[data-picker=split]", json.dumps(["changed", "forward", "op", None], separators=(",", ":")))
    frame.wait_for_function("document.querySelector('[data-pane=split]').dataset.status === 'ready'", timeout=60000)
    frame.wait_for_function("document.body.dataset.diffRemoved !== '0' && document.body.dataset.colorMode === 'diff'", timeout=60000)
    assert "removed (only here): 7 ops, 1 groups" in frame.text_content("[data-split-legend]")
    # B's Relu (renamed Tanh in A)
    frame.click("[data-diff-entry='mlp_1/fc1_1/Relu']")
    frame.wait_for_function("document.querySelector('[data-pane=split]').dataset.selected === 'mlp_1/fc1_1/Tanh'", timeout=30000)
    # the ghost of fc2 in the main view <-> A's fc2 in the pane
    frame.click("[data-diff-entry='mlp_1/fc2_1']")
    frame.wait_for_function("document.body.dataset.selected === '__removed__/mlp_1/fc2_1'")
    frame.wait_for_function("document.querySelector('[data-pane=split]').dataset.selected === 'mlp_1/fc2_1'", timeout=30000)
    frame.wait_for_timeout(300)
    assert pane_pixels(frame, (0xE0, 0x60, 0x55)) > 50  # A's removed group, red in the pane (REMOVED_IN_BASE)
    page.screenshot(path=str(SCREENSHOTS / "split_pane_removed_ghost.png"))
    # a click on A's fc2 in the pane selects the ghost in the main view
    frame.evaluate("window.graphExplorer.split.center('mlp_1/fc1_1')")
    [fc1] = [n for n in pane_nodes(frame) if n["name"] == "mlp_1/fc1_1"]
    page.mouse.click(*to_page(frame, {**fc1, "x": fc1["x"] + fc1["w"] / 2 - 8}))  # inside the open group, right of its ops
    frame.wait_for_function("document.body.dataset.selected === 'mlp_1/fc1_1'", timeout=30000)
    frame.evaluate("window.graphExplorer.split.center('mlp_1/fc2_1')")
    [fc2] = [n for n in pane_nodes(frame) if n["name"] == "mlp_1/fc2_1"]
    page.mouse.click(*to_page(frame, {**fc2, "x": fc2["x"] + fc2["w"] / 4}))  # off its +/- control
    frame.wait_for_function("document.body.dataset.selected === '__removed__/mlp_1/fc2_1'", timeout=30000)
    assert not page.errors


def test_split_pane_a_late_first_graph_does_not_take_the_comparison_back(pair_frame, page):
    """The pane opens on a first graph, and the user picks another before that one arrived: the
    late first answer must neither show nor become the graph compared with. The pane's first scene
    request is held until the pick is compared, then let go (the race a slow first load makes)."""
    frame = pair_frame
    open_graph(frame, "base", tag="forward")
    held = []

    def hold_first(route):  # the first scene request waits for first.continue_(); the rest go
        if held:
            route.continue_()
        else:
            held.append(route)

    page.context.route("**/data/plugin/graph_explorer/scene?*", hold_first)
    frame.click("[data-action=split]")
    frame.wait_for_function("document.querySelector('[data-pane=split]').dataset.open === 'true'")
    deadline = 100
    while not held and deadline:
        frame.wait_for_timeout(100)
        deadline -= 1
    assert held, "the pane sent no scene request"
    first = held[0]
    changed = json.dumps(["changed", "forward", "op", None], separators=(",", ":"))
    assert pane(frame, "ref") != changed  # the pane's own first choice, still loading
    frame.select_option("[data-picker=split]", changed)
    frame.wait_for_function("document.querySelector('[data-pane=split]').dataset.status === 'ready'", timeout=60000)
    frame.wait_for_function("document.body.dataset.diffRemoved !== '0' && document.body.dataset.colorMode === 'diff'", timeout=60000)
    first.continue_()
    frame.wait_for_timeout(1500)  # the late answer arrives and is dropped
    assert pane(frame, "ref") == changed and json.loads(ds(frame, "split")) == json.loads(changed)
    assert frame.input_value("[data-picker=compare]") == changed
    assert ds(frame, "diffRemoved") != "0" and ds(frame, "colorMode") == "diff"
    assert not page.errors
