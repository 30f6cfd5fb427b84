"""First views name things and nothing is drawn on top of anything.

A real TensorBoard with ResNet50, InceptionV3, MobileNetV2, a Keras transformer (BERT-shaped
encoder), and every demo log (``demo_logs/``: TF1 graph, TF2 traces, the PyTorch CNN and
transformer, the Keras callback's conceptual graph); for the first view of every graph (each
run and tag, the default graph kind) the test reads back the renderer's own draw list
(``window.graphExplorer.drawList()``: every text box it drew with the canvas's font metrics, and
every node box, in canvas CSS px) and checks:

- every group, series and op whose box lies wholly on the canvas has its label drawn at >= 9 px;
- no two text boxes intersect; no text box covers a node other than its own (expanded groups
  are containers, not obstacles).

Screenshots: ``tests/_artifacts/screenshots/first_view_<run>_<tag>.png``.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from tests.conftest import SCREENSHOTS
from tests.ui.conftest import app_frame, wait_settled

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
REAL_KINDS = ("keras_resnet50_trace", "keras_inceptionv3_trace", "keras_mobilenetv2_trace", "keras_bert_encoder_trace")
READABLE_PX = 9.0
LABELLED = {"meta", "series", "op"}


@pytest.fixture(scope="module")
def corpus_logdir(real_logs, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("first_view_logdir")
    for kind in REAL_KINDS:
        for run_dir in sorted(p for p in real_logs.get(kind).iterdir() if p.is_dir()):
            shutil.copytree(run_dir, root / run_dir.name)
    demo = REPO / "demo_logs"
    for run_dir in sorted(p for p in demo.iterdir() if p.is_dir()):
        shutil.copytree(run_dir, root / f"demo_{run_dir.name}")
    return root


def intersect(a: dict, b: dict, tol: float = 0.01) -> bool:
    return a["x0"] < b["x1"] - tol and b["x0"] < a["x1"] - tol and a["y0"] < b["y1"] - tol and b["y0"] < a["y1"] - tol


def problems(draw: dict, width: float, height: float) -> list[str]:
    """What breaks those rules (named nodes, no text over a text or a foreign node) in one draw
    list (empty when the view is right)."""
    out = []
    labels, nodes = draw["labels"], draw["nodes"]
    by_owner: dict[str, list[dict]] = {}
    for lab in labels:
        by_owner.setdefault(lab["owner"], []).append(lab)
    for n in nodes:
        if n["kind"] not in LABELLED:
            continue
        if n["x0"] < 0 or n["y0"] < 0 or n["x1"] > width or n["y1"] > height:
            continue  # partly off the canvas
        names = [lab for lab in by_owner.get(n["name"], []) if not lab["text"].isdigit()]  # not the cardinality
        if not names:
            out.append(f"no label for {n['kind']} {n['name']}")
        elif min(lab["px"] for lab in names) < READABLE_PX - 0.01:
            out.append(f"label of {n['name']} at {min(lab['px'] for lab in names):.1f} px")
    for i, a in enumerate(labels):
        for b in labels[i + 1:]:
            if intersect(a, b):
                out.append(f"text {a['text']!r} ({a['owner']}) over text {b['text']!r} ({b['owner']})")
    obstacles = [n for n in nodes if not n["expanded"]]  # expanded groups contain, they do not cover
    for lab in labels:
        for n in obstacles:
            if n["name"] != lab["owner"] and intersect(lab, n):
                out.append(f"text {lab['text']!r} ({lab['owner']}) over node {n['name']}")
    return out


def graphs(frame) -> list[tuple[str, str]]:
    out = []
    for run in frame.eval_on_selector_all("[data-picker=run] option", "os => os.map(o => o.value)"):
        frame.select_option("[data-picker=run]", run)
        wait_settled(frame)
        for tag in frame.eval_on_selector_all("[data-picker=tag] option", "os => os.map(o => o.value)"):
            out.append((run, tag))
    return out


def test_first_views_name_every_node_readably_without_overlaps(page, tensorboard_url, corpus_logdir):
    base = tensorboard_url(corpus_logdir, min_runs=len(REAL_KINDS) + 6)
    page.goto(f"{base}/#graph_explorer")
    frame = app_frame(page)
    wait_settled(frame, 120000)
    seen, bad = [], {}
    for run, tag in graphs(frame):
        frame.select_option("[data-picker=run]", run)
        wait_settled(frame, 120000)
        if frame.input_value("[data-picker=tag]") != tag:
            frame.select_option("[data-picker=tag]", tag)
            wait_settled(frame, 120000)
        if frame.evaluate("document.body.dataset.status") != "ready":
            continue  # e.g. a run whose only graph is a profile
        frame.wait_for_function("Number(document.body.dataset.drawnNodes) > 0")
        page.wait_for_timeout(300)  # the frame loop's full drawing after the fit
        draw = frame.evaluate("JSON.parse(JSON.stringify(window.graphExplorer.drawList()))")
        w, h = frame.evaluate("(() => { const c = document.querySelector('[data-canvas]'); return [c.clientWidth, c.clientHeight]; })()")
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / f"first_view_{re.sub(r'[^A-Za-z0-9_]+', '_', run + '_' + tag)}.png"))
        found = problems(draw, w, h)
        seen.append((run, tag, len(draw["labels"]), sum(1 for n in draw["nodes"] if n["kind"] in LABELLED)))
        if found:
            bad[f"{run}/{tag}"] = found[:8] + ([f"... {len(found) - 8} more"] if len(found) > 8 else [])
    runs = {r for r, _, _, _ in seen}
    assert {"keras_resnet50_trace", "keras_inceptionv3_trace", "keras_mobilenetv2_trace", "keras_bert_encoder_trace",
            "demo_torch_cnn", "demo_tf1_graph", "demo_tf2_keras_trace", "demo_torch_transformer"} <= runs, seen
    assert all(labels > 0 for _, _, labels, _ in seen), seen
    assert bad == {}, json.dumps(bad, indent=1)
