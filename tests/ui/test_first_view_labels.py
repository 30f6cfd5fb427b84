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
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import SCREENSHOTS
from tests.ui.conftest import app_frame, wait_settled

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
REAL_KINDS = ("keras_resnet50_trace", "keras_inceptionv3_trace", "keras_mobilenetv2_trace", "keras_bert_encoder_trace")
READABLE_PX = 9.0
LABELLED = {"meta", "series", "op", "stub"}  # a stub names its other end (issue 40)


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


_PREFIXED_BLOCKS = """
import sys
from pathlib import Path
import keras, numpy as np
from tests import logwriters as lw
keras.utils.set_random_seed(0)
image = keras.Input((8, 8, 4), name="image")
x = image
for i in range(4):  # Keras applications name every block <model>_<block>_<i>: one long shared prefix
    block = keras.Sequential([keras.layers.Conv2D(4, 3, padding="same", name=f"conv_{i}"),
                              keras.layers.ReLU(name=f"relu_{i}")], name=f"a_very_long_network_name_that_goes_on_and_on_and_on_and_on_stage_{i}")
    x = keras.layers.Add(name=f"a_very_long_network_name_that_goes_on_and_on_and_on_and_on_add_{i}")([x, block(x)])
lw._trace_forward(Path(sys.argv[1]), keras.Model(image, x, name="residual_network"), np.random.rand(1, 8, 8, 4).astype("float32"))
"""


def test_regression_labels_sharing_a_long_prefix_are_cut_in_the_middle(page, tensorboard_url, tmp_path):
    """ConvNeXtTiny's blocks all read ``convnext_tin…`` (every Keras application prefixes its
    blocks with the model's name): a label whose end holds an index is cut in the middle, so
    ``a_very_long_network_name_stage_2_1`` reads ``a_very_long…stage_2_1`` and siblings stay
    apart (boxes are at most 240 px wide: ~37 characters; these names are 68). Written
    with the real Keras API (a subprocess: TensorFlow stays out of this process)."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", KERAS_BACKEND="tensorflow", PYTHONPATH=str(REPO))
    subprocess.run([sys.executable, "-c", _PREFIXED_BLOCKS, str(tmp_path / "prefixed")], cwd=REPO, env=env,
                   check=True, timeout=300, capture_output=True)
    page.goto(f"{tensorboard_url(tmp_path, min_runs=1)}/#graph_explorer")
    frame = app_frame(page)
    assert wait_settled(frame, 120000) == "ready"
    frame.wait_for_function("Number(document.body.dataset.drawnNodes) > 0")
    page.wait_for_timeout(300)
    draw = frame.evaluate("JSON.parse(JSON.stringify(window.graphExplorer.drawList()))")
    page.screenshot(path=str(SCREENSHOTS / "first_view_prefixed_blocks.png"))
    texts = {lab["owner"].rsplit("/", 1)[-1]: lab["text"] for lab in draw["labels"]
             if lab["kind"] != "edge" and not lab["text"].isdigit()}
    stages = {name: text for name, text in texts.items() if re.fullmatch(r"a_very_long_network_name_that_goes_on_and_on_and_on_and_on_(stage|add)_\d_1", name)}
    assert len(stages) == 8, texts
    assert len(set(stages.values())) == 8, stages  # cut at the end, all eight read "a_very_long_net…"
    for name, text in stages.items():
        kind, index = re.search(r"_(stage|add)_(\d)_1$", name).groups()
        assert "…" in text and text.endswith(f"{kind}_{index}_1") and text.startswith("a_very"), (name, text)


def test_a_stub_in_a_training_step_names_and_selects_its_other_end(page, tensorboard_url, corpus_logdir):
    """The Keras train step's first view draws its side column's edges as stubs (``← gradient_tape``
    beside each op the tape feeds): each names its other end, its tooltip names both ends, and a
    click selects that other end (it answered "Not found", the stub not being a node: issue 40)."""
    base = tensorboard_url(corpus_logdir, min_runs=len(REAL_KINDS) + 6)
    page.set_viewport_size({"width": 1400, "height": 900})
    page.goto(f"{base}/#graph_explorer&p.graph_explorer.run=demo_tf2_keras_trace&p.graph_explorer.tag=train_step")
    frame = app_frame(page)
    assert wait_settled(frame, 120000) == "ready"
    frame.wait_for_function("Number(document.body.dataset.drawnNodes) > 0")
    stubs = [n for n in frame.evaluate("window.graphExplorer.nodes()") if n["kind"] == "stub" and n["w"] > 8]
    assert stubs, "no stub in the train step's first view"
    stub = next((n for n in stubs if n["label"].startswith(("←", "→"))), stubs[0])
    far = frame.evaluate(f"window.graphExplorer.nodes().find(n => n.name === {json.dumps(stub['name'])})")
    box = frame.frame_element().bounding_box()
    page.mouse.move(box["x"] + stub["x"], box["y"] + stub["y"])
    frame.wait_for_function("document.querySelector('[data-canvas]').title.includes('\\n')")
    title = frame.evaluate("document.querySelector('[data-canvas]').title")
    assert title.startswith(stub["label"]) and "→" in title.split("\n", 1)[1], title
    page.mouse.click(box["x"] + stub["x"], box["y"] + stub["y"])
    frame.wait_for_function("document.body.dataset.selected && !document.body.dataset.selected.includes('/__')",
                            timeout=30000)
    selected = frame.evaluate("document.body.dataset.selected")
    assert stub["label"].endswith(selected.rsplit("/", 1)[-1]) or selected.rsplit("/", 1)[-1] in stub["label"], \
        (stub, selected, far)
    frame.wait_for_function("document.body.dataset.infoName === document.body.dataset.selected", timeout=30000)
    assert "Not found" not in frame.inner_text("[data-info]")
