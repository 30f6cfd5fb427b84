"""End to end (issue 42): graphs of real Flax models written by ``tb_graph_plugin.jax.add_graph``,
opened in a real TensorBoard in Chromium.

- the NNX transformer's first view shows its blocks (``NBlock[0]``.. or their series) between
  the embedding and the head, every top-level item on the canvas;
- opening one block (``NBlock[1]``) shows its modules (``MultiHeadAttention[attn]``,
  ``LayerNorm[ln1]``) and the author's ``jax.named_scope("mlp")`` around the rest;
- the linen scan-over-layers model's first view shows the scan body as one group labelled
  ``scan ×4``;
- the linen train step opens on its forward model, loss, backward and optimizer;
- the same step's StableHLO text (``.mlir``) uploaded in the browser opens with the same groups.

Screenshots: ``tests/_artifacts/screenshots/jax_*.png``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.ui.conftest import SHOTS, app_frame, wait_settled
from tests.ui.test_graph_explorer_ui import canvas_ink, ds, nodes, open_graph

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
RUNS = ("nnx", "linen_scan", "linen_step")


@pytest.fixture(scope="module")
def jax_logdir(tmp_path_factory) -> Path:
    written = tmp_path_factory.mktemp("jax_written")
    env = dict(os.environ, PYTHONPATH=str(REPO), JAX_PLATFORMS="cpu")
    subprocess.run([sys.executable, "-m", "tests.flax_jax.jax_logs", str(written)], cwd=REPO, env=env,
                   check=True, timeout=600)
    root = tmp_path_factory.mktemp("jax_ui")
    for run in RUNS:
        shutil.copytree(written / run, root / run)
    shutil.copy(written / "mlir" / "linen_step.mlir", root.parent / "linen_step.mlir")  # outside the logdir
    return root


def _open(page, tensorboard_url, logdir, run):
    base = tensorboard_url(logdir, min_runs=len(RUNS))
    page.goto(f"{base}/#graph_explorer&p.graph_explorer.run={run}")
    frame = app_frame(page)
    wait_settled(frame)
    if frame.input_value("[data-picker=run]") != run:
        open_graph(frame, run, kind="op", tag="__run_graph__")
    frame.wait_for_function("Number(document.body.dataset.drawnNodes) > 0", timeout=60000)
    return frame


def _on_canvas(frame, node) -> bool:
    w, h = frame.evaluate("[document.querySelector('[data-canvas]').clientWidth, "
                          "document.querySelector('[data-canvas]').clientHeight]")
    return 0 <= node["x"] - node["w"] / 2 and node["x"] + node["w"] / 2 <= w + 1 and \
        0 <= node["y"] - node["h"] / 2 and node["y"] + node["h"] / 2 <= h + 1


def test_nnx_first_view_shows_the_blocks_and_one_opened(page, tensorboard_url, jax_logdir):
    frame = _open(page, tensorboard_url, jax_logdir, "nnx")
    assert ds(frame, "status") == "ready", ds(frame, "error")
    assert canvas_ink(frame) > 50
    shown = {n["name"]: n for n in nodes(frame)}
    blocks = [n for n in shown if n.startswith("NTransformer/blocks/NBlock[")]
    assert blocks and all(n.count("/") == 2 for n in blocks), sorted(shown)
    for name in blocks + ["NTransformer/Embed[embed]", "NTransformer/Linear[head]"]:
        assert _on_canvas(frame, shown[name]), (name, shown[name])
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "jax_nnx_first_view.png"))
    block = "NTransformer/blocks/NBlock[1]"
    expanded = json.loads(ds(frame, "expanded") or "[]")
    frame.evaluate(f"window.graphExplorer.setExpanded({json.dumps(expanded + [block])})")
    frame.wait_for_function(f"JSON.parse(document.body.dataset.expanded || '[]').includes({json.dumps(block)})")
    wait_settled(frame)
    frame.evaluate(f"window.graphExplorer.center({json.dumps(block)})")
    wait_settled(frame)
    inside = {n["name"] for n in nodes(frame) if n["name"].startswith(block + "/")}
    assert {f"{block}/MultiHeadAttention[attn]", f"{block}/mlp", f"{block}/LayerNorm[ln1]"} <= inside, sorted(inside)
    page.screenshot(path=str(SHOTS / "jax_nnx_block_open.png"))
    assert not page.errors


def test_linen_scan_body_and_train_step(page, tensorboard_url, jax_logdir):
    frame = _open(page, tensorboard_url, jax_logdir, "linen_scan")
    labels = {n["name"]: n.get("label") for n in nodes(frame)}
    assert labels.get("ScanTransformer/scan ×4") == "scan ×4", sorted(labels)
    page.screenshot(path=str(SHOTS / "jax_linen_scan_first_view.png"))
    open_graph(frame, "linen_step", kind="op", tag="__run_graph__")
    shown = {n["name"] for n in nodes(frame)}
    assert {"Transformer", "loss", "backward", "optimizer"} <= shown, sorted(shown)
    page.screenshot(path=str(SHOTS / "jax_linen_step_first_view.png"))
    assert not page.errors


def test_mlir_upload_opens_with_the_same_groups(page, tensorboard_url, jax_logdir):
    from tests.ui.test_explorer_loading_and_toggles import upload

    frame = _open(page, tensorboard_url, jax_logdir, "linen_step")
    traced = {n["name"] for n in nodes(frame) if n["kind"] == "meta"}
    upload(frame, jax_logdir.parent / "linen_step.mlir")
    assert ds(frame, "error") == ""
    assert ds(frame, "uploadSource") == "StableHLO text (.mlir)"
    uploaded = {n["name"] for n in nodes(frame) if n["kind"] == "meta"}
    io = lambda names: {n for n in names if n.split("/")[0] not in ("input", "output")}  # noqa: E731 (named apart)
    assert {"Transformer", "loss", "backward", "optimizer"} <= uploaded and io(traced) <= uploaded
    page.screenshot(path=str(SHOTS / "jax_mlir_upload.png"))
    assert not page.errors
