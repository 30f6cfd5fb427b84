"""Keyboard navigation in a real TensorBoard + Chromium on the PyTorch CNN written by
``SummaryWriter.add_graph`` (``torch_cnn``): Tab reaches the canvas, ArrowUp walks the chain from
the input to the output along drawn edges (announced in the aria-live region), Left/Right move
among siblings, Enter expands, Backspace collapses to the parent, "/" focuses search, "?" opens
the list of keys.
"""

from __future__ import annotations

import pytest

from tests.conftest import SCREENSHOTS
from tests.ui.conftest import set_expanded
from tests.ui.test_graph_explorer_ui import ds, nodes, open_graph

pytestmark = pytest.mark.slow

CHAIN = ["input", "ResNetLike/Conv2d[conv1]", "ResNetLike/BatchNorm2d[bn1]", "ResNetLike/ReLU[relu]",
         "ResNetLike/Sequential[layer1]", "ResNetLike/Sequential[layer2]", "ResNetLike/AdaptiveAvgPool2d[pool]",
         "ResNetLike/input", "ResNetLike/Linear[fc]", "output"]


def focus_canvas_with_tab(page, frame, max_tabs=60) -> int:
    frame.focus("[data-picker=run]")
    for i in range(max_tabs):
        if frame.evaluate("document.activeElement && document.activeElement.hasAttribute('data-canvas')"):
            return i
        page.keyboard.press("Tab")
    raise AssertionError("Tab never reached the canvas")


def press(page, frame, key):
    before = ds(frame, "selected")
    page.keyboard.press(key)
    frame.wait_for_timeout(50)
    return before


def test_arrow_keys_walk_the_cnn_from_input_to_output(page, explorer):
    frame = explorer
    open_graph(frame, "torch_cnn")
    # the first view opens the model and its two block lists (issue 40); the walk runs over the
    # model's top level, with the lists closed
    assert set(frame.evaluate("JSON.parse(document.body.dataset.expanded)")) == \
        {"ResNetLike", "ResNetLike/Sequential[layer1]", "ResNetLike/Sequential[layer2]"}
    set_expanded(frame, ["ResNetLike"])
    assert focus_canvas_with_tab(page, frame) > 0
    page.keyboard.press("ArrowUp")  # nothing selected: the node nearest the view's centre
    assert ds(frame, "selected")
    # start at the input: Down until nothing is below
    for _ in range(20):
        before = press(page, frame, "ArrowDown")
        if ds(frame, "selected") == before:
            break
    assert ds(frame, "selected") == "input"
    walked = ["input"]
    for _ in range(len(CHAIN) + 3):
        press(page, frame, "ArrowUp")
        if ds(frame, "selected") == walked[-1]:
            break
        walked.append(ds(frame, "selected"))
        live = frame.text_content("[data-live]")
        assert live.startswith("Selected") and walked[-1] in live
    assert walked == CHAIN
    ys = {n["name"]: n["y"] for n in nodes(frame)}
    assert all(ys[a] > ys[b] for a, b in zip(walked, walked[1:]))  # each step goes up
    assert frame.evaluate("document.activeElement.hasAttribute('data-canvas')")  # focus stayed
    page.screenshot(path=str(SCREENSHOTS / "keyboard_walk_output.png"))
    assert not page.errors


def click_node(page, frame, name):
    frame.evaluate("name => window.graphExplorer.center(name)", name)
    box = frame.frame_element().bounding_box()
    n = next(n for n in nodes(frame) if n["name"] == name)
    page.mouse.click(box["x"] + n["x"], box["y"] + n["y"])
    frame.wait_for_function("name => document.body.dataset.selected === name", arg=name)


def test_siblings_enter_backspace_search_and_help(page, explorer):
    frame = explorer
    open_graph(frame, "tf1_graph")
    frame.select_option("[data-picker=step]", "0")
    frame.wait_for_function("document.body.dataset.status === 'ready' && Number(document.body.dataset.sceneNodes) > 12")
    click_node(page, frame, "layer2")  # layer2 and layer1_weights sit side by side at the top level
    page.keyboard.press("ArrowRight")
    frame.wait_for_function("document.body.dataset.selected === 'layer1_weights'")
    page.keyboard.press("ArrowLeft")
    frame.wait_for_function("document.body.dataset.selected === 'layer2'")
    page.keyboard.press("Enter")
    frame.wait_for_function("JSON.parse(document.body.dataset.expanded).includes('layer2')")
    assert ds(frame, "selected") == "layer2"
    frame.wait_for_function("document.body.dataset.status === 'ready'")
    click_node(page, frame, "layer2/MatMul")
    assert "layer2/MatMul" in frame.text_content("[data-live]")
    page.keyboard.press("Backspace")  # collapse the group holding it; the group is selected
    frame.wait_for_function("!JSON.parse(document.body.dataset.expanded).includes('layer2')")
    frame.wait_for_function("document.body.dataset.selected === 'layer2'")
    page.keyboard.press("Escape")  # top level: clears the selection
    frame.wait_for_function("document.body.dataset.selected === ''")
    page.keyboard.press("?")
    assert ds(frame, "help") == "open" and "expand the selected group" in frame.text_content("[data-help]")
    page.screenshot(path=str(SCREENSHOTS / "keyboard_help.png"))
    page.keyboard.press("Escape")
    assert ds(frame, "help") == ""
    page.keyboard.press("/")
    assert frame.evaluate("document.activeElement.getAttribute('data-search')") == "q"
    assert not page.errors
