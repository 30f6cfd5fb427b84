"""Compare two graphs in the browser: TensorBoard (subprocess) + headless Chromium on
the TF-written Keras pair of ``keras_diff_pair`` (``changed`` = ``base`` + layer ``fc2``, with
``fc1``'s activation relu -> tanh).

Asserts what the app publishes (diff counts, colour mode, legend, the list of changes, the info
pane's old/new rows, ghost nodes for removed nodes) and the canvas pixels in the diff colours;
saves screenshots of both directions under tests/_artifacts/screenshots/.
"""

from __future__ import annotations

import json
import shutil

import pytest

from tests.api.test_diff import PAIR_ADDED, PAIR_CHANGED
from tests.conftest import SCREENSHOTS
from tests.ui.conftest import app_frame, wait_settled
from tests.ui.test_graph_explorer_ui import ds, nodes, open_graph

pytestmark = pytest.mark.slow

GREEN, AMBER = (0x34, 0xA8, 0x53), (0xF9, 0xAB, 0x00)


@pytest.fixture(scope="module")
def pair_logdir(real_logs, tmp_path_factory):
    root = tmp_path_factory.mktemp("pair_logdir")
    for run in ("base", "changed"):
        shutil.copytree(real_logs.get("keras_diff_pair") / run, root / run)
    return root


@pytest.fixture
def pair_frame(page, tensorboard_url, pair_logdir):
    base = tensorboard_url(pair_logdir, min_runs=2)
    page.goto(f"{base}/#graph_explorer")
    frame = app_frame(page)
    wait_settled(frame)
    return frame


def compare_with(frame, run: str) -> None:
    frame.select_option("[data-picker=compare]", json.dumps([run, "forward", "op", None], separators=(",", ":")))
    frame.wait_for_function("document.body.dataset.diffSame === 'false'", timeout=60000)
    frame.wait_for_function("document.body.dataset.colorMode === 'diff'")


def pixels_of(frame, rgb, canvas: str = "[data-canvas]") -> int:
    """Pixels of ``canvas`` (the main view's by default) within a small distance of colour ``rgb``."""
    return frame.evaluate(
        """([r, g, b, canvas]) => {
        const c = document.querySelector(canvas);
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0;
        for (let i = 0; i < d.length; i += 4)
            if (Math.abs(d[i] - r) + Math.abs(d[i+1] - g) + Math.abs(d[i+2] - b) < 12) n++;
        return n;
    }""",
        [*rgb, canvas],
    )


def expand_all(frame) -> None:
    """Open every group (the pair is small): each change is then drawn as its own node."""
    groups = [n["name"] for n in nodes(frame) if n["kind"] == "meta"]
    while True:
        frame.evaluate("(g) => window.graphExplorer.setExpanded(g)", groups)
        frame.wait_for_function("(n) => JSON.parse(document.body.dataset.expanded || '[]').length >= n", arg=len(groups))
        wait_settled(frame)
        more = sorted({n["name"] for n in nodes(frame) if n["kind"] == "meta"} - set(groups))
        if not more:
            return
        groups += more


def test_changed_against_base_colours_added_and_changed(pair_frame, page):
    frame = pair_frame
    open_graph(frame, "changed", tag="forward")
    compare_with(frame, "base")
    assert ds(frame, "diffAdded") == str(len(PAIR_ADDED))
    assert ds(frame, "diffChanged") == str(len(PAIR_CHANGED)) and ds(frame, "diffRemoved") == "0"
    assert "8 added" not in ds(frame, "error")
    counts = frame.text_content("[data-diff-counts]")
    assert counts.startswith("ops: 7 added, 0 removed, 7 changed") and "groups: 1 added, 0 removed, 4 changed" in counts
    listed = frame.eval_on_selector_all("[data-diff-entry]", "els => els.map(e => [e.dataset.diffEntry, e.dataset.diffStatus])")
    assert sorted(n for n, s in listed if s == "added") == PAIR_ADDED
    assert sorted(n for n, s in listed if s == "changed") == sorted(PAIR_CHANGED)
    legend = frame.text_content("[data-legend]")
    assert "added: 7 ops, 1 groups" in legend and "changed: 7 ops, 4 groups" in legend
    expand_all(frame)
    # a change in the list jumps to its node (at a readable zoom): green and amber nodes drawn
    frame.click("[data-diff-entry='mlp_1/fc2_1/MatMul']")
    frame.wait_for_function("document.body.dataset.selected === 'mlp_1/fc2_1/MatMul'")
    frame.wait_for_timeout(300)
    assert pixels_of(frame, GREEN) > 100 and pixels_of(frame, AMBER) > 100  # canvas pixels only (the legend is DOM)
    page.screenshot(path=str(SCREENSHOTS / "compare_changed_vs_base_zoomed.png"))
    # the info pane of a changed node shows old and new side by side
    frame.click("[data-diff-entry='mlp_1/fc1_1/Tanh']")
    frame.wait_for_function("document.body.dataset.selected === 'mlp_1/fc1_1/Tanh'")
    frame.wait_for_function("document.body.dataset.diffInfoShown === 'mlp_1/fc1_1/Tanh'")
    rows = frame.eval_on_selector_all(
        "section[data-diff-info] tr[data-diff-row]", "rs => rs.map(r => [r.dataset.key, r.dataset.diffRow, r.children[1].textContent, r.children[2].textContent])")
    by_key = {k: (state, old, new) for k, state, old, new in rows}
    assert by_key["op"] == ("changed", "Relu", "Tanh")
    assert by_key["name"] == ("changed", "mlp_1/fc1_1/Relu", "mlp_1/fc1_1/Tanh")
    assert by_key["T"][0] == "same"
    page.screenshot(path=str(SCREENSHOTS / "compare_changed_vs_base.png"))
    assert not page.errors
    # the compare target is part of the deep link: a fresh browser context opens the same diff
    url = ds(frame, "link")
    assert "p.graph_explorer.compare=" in url and "p.graph_explorer.color=diff" in url
    context = page.context.browser.new_context(viewport={"width": 1400, "height": 900})
    try:
        page2 = context.new_page()
        page2.goto(url)
        frame2 = app_frame(page2)
        frame2.wait_for_function("document.body.dataset.restored === 'true'", timeout=60000)
        assert ds(frame2, "diffAdded") == str(len(PAIR_ADDED)) and ds(frame2, "colorMode") == "diff"
        assert ds(frame2, "selected") == "mlp_1/fc1_1/Tanh" and ds(frame2, "linkWarnings") == "0"
    finally:
        context.close()


def test_base_against_changed_shows_removed_as_ghosts(pair_frame, page):
    frame = pair_frame
    open_graph(frame, "base", tag="forward")
    compare_with(frame, "changed")
    assert ds(frame, "diffRemoved") == str(len(PAIR_ADDED)) and ds(frame, "diffAdded") == "0"
    ghosts = sorted(n["name"] for n in nodes(frame) if n["name"].startswith("__removed__/"))
    assert ghosts == ["__removed__/mlp_1/fc2_1", "__removed__/mlp_1_fc2_1_biasadd_readvariableop_resource",
                      "__removed__/mlp_1_fc2_1_cast_readvariableop_resource"]
    frame.click("[data-diff-entry='mlp_1/fc2_1']")
    frame.wait_for_function("document.body.dataset.selected === '__removed__/mlp_1/fc2_1'")
    frame.wait_for_function("document.body.dataset.diffInfoShown === '__removed__/mlp_1/fc2_1'")
    head = frame.text_content("section[data-diff-info] h3")
    assert head.startswith("Removed: only in changed"), head
    page.screenshot(path=str(SCREENSHOTS / "compare_base_vs_changed_ghosts.png"))
    # stop comparing: ghosts and diff colours go
    frame.select_option("[data-picker=compare]", "")
    frame.wait_for_function("document.body.dataset.colorMode === 'none'")
    assert not [n for n in nodes(frame) if n["name"].startswith("__removed__/")]
    assert not page.errors
