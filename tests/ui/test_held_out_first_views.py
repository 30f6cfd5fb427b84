"""First sight on architectures no other test uses (issue 40): held-out Hugging Face and diffusers
models from tiny configs, captured with ``tb_graph_plugin.torch.add_graph``
(``tests/ui/held_out_models.py``: Gemma 3, Qwen3-MoE, Mamba, Jamba, Pegasus, SigLIP, LLaVA,
PatchTST, ConvNeXt, diffusers' UNet2DConditionModel and AutoencoderKL, and an 80-layer
Llama-3-70B-shaped model built on the meta device), opened in a real TensorBoard at 1400 x 900.
For each first view, read from the renderer's own draw list:

- every block (a group named by an index, ``Class[3]``) and every series drawn wholly on the
  canvas is its own box with its label at >= 9 px; past 12 members a series is one box;
- every stub is labelled at >= 9 px with its other end (``→ lm_head``), and a click on one
  selects that other end (it answered "Not found" before);
- with every group open, no edge is drawn reversed (diffusers' interleaved module lists made
  cycles);
- their cost (issue 43): each model's parameters as torch counts them, the FLOPs of its matmuls
  and convolutions as ``FlopCounterMode`` counts them (``facts.json``, written beside the logs).

Screenshots: ``tests/_artifacts/screenshots/held_out_<run>.png``.
"""

from __future__ import annotations

import json
import os
import re
import urllib.parse
from pathlib import Path

import pytest

from tests.conftest import SCREENSHOTS, written_once
from tests.ui import held_out_models
from tests.ui.conftest import app_frame
from tests.ui.test_first_view_labels import READABLE_PX

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"\[\d+\]$")


@pytest.fixture(scope="module")
def held_out_logs() -> Path:
    """The logs of ``held_out_models`` (written once per version of that file and of the torch
    front end, in a process of its own)."""
    sources = [held_out_models.__file__, REPO / "tb_graph_plugin" / "ingest" / "torch_scopes.py",
               REPO / "tb_graph_plugin" / "torch" / "capture.py"]
    return written_once("held_out_models", sources, [["tests.ui.held_out_models", "{out}"]],
                        dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))


def _label_px(draw: dict, name: str) -> float:
    """The smallest font size (screen px) of node ``name``'s label, 0 when none was drawn (the
    cardinality aside)."""
    sizes = [lab["px"] for lab in draw["labels"] if lab["owner"] == name and not lab["text"].isdigit()]
    return min(sizes) if sizes else 0.0


def test_held_out_first_views_show_blocks_and_named_stubs(browser, tensorboard_url, held_out_logs):
    base = tensorboard_url(held_out_logs, min_runs=len(held_out_models.MODELS))
    bad: dict[str, list[str]] = {}
    clicked = 0
    for run in held_out_models.MODELS:
        context = browser.new_context(viewport={"width": 1400, "height": 900})
        page = context.new_page()
        try:
            page.goto(f"{base}/#graph_explorer&p.graph_explorer.run={urllib.parse.quote(run)}")
            frame = app_frame(page, timeout=120)
            frame.wait_for_function("document.body.dataset.status !== 'loading' && "
                                    "Number(document.body.dataset.drawnNodes) > 0", timeout=180_000, polling=50)
            page.wait_for_timeout(300)
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SCREENSHOTS / f"held_out_{run}.png"))
            draw = frame.evaluate("JSON.parse(JSON.stringify(window.graphExplorer.drawList()))")
            nodes = {n["name"]: n for n in frame.evaluate("window.graphExplorer.nodes()")}
            w, h = frame.evaluate("(() => { const c = document.querySelector('[data-canvas]'); "
                                  "return [c.clientWidth, c.clientHeight]; })()")
            found = []
            on_canvas = [d for d in draw["nodes"] if d["x0"] >= 0 and d["y0"] >= 0 and d["x1"] <= w and d["y1"] <= h]
            blocks = [d for d in on_canvas if d["kind"] == "series"
                      or (d["kind"] == "meta" and BLOCK.search(nodes[d["name"]]["label"]))]
            if not blocks:
                found.append("no block in the first view")
            for d in blocks:
                px = _label_px(draw, d["name"])
                if px < READABLE_PX - 0.01:
                    found.append(f"block {d['name']} labelled at {px:.1f} px")
            for d in on_canvas:
                if d["kind"] == "series" and d["expanded"]:
                    members = [n for n in nodes.values() if n["parent"] == d["name"] and n["kind"] == "meta"]
                    if len(members) > 12:
                        found.append(f"series {d['name']} opened with {len(members)} members")
            stubs = [d for d in on_canvas if d["kind"] == "stub"]
            for d in stubs:
                texts = [lab["text"] for lab in draw["labels"] if lab["owner"] == d["name"]]
                px = _label_px(draw, d["name"])
                if px < READABLE_PX - 0.01 or not texts or texts[0][0] not in "→←+":
                    found.append(f"stub {d['name']} labelled {texts} at {px:.1f} px")
            if stubs:  # a click on a stub selects its other end
                stub = nodes[stubs[0]["name"]]
                box = frame.frame_element().bounding_box()
                page.mouse.click(box["x"] + stub["x"], box["y"] + stub["y"])
                frame.wait_for_function("document.body.dataset.selected && "
                                        "!document.body.dataset.selected.includes('/__')", timeout=30_000)
                selected = frame.evaluate("document.body.dataset.selected")
                info = frame.evaluate("(document.querySelector('[data-info]') || {}).textContent || ''")
                if "Not found" in info or "__stub__" in selected:
                    found.append(f"click on {stub['name']}: selected {selected!r}, info {info[:80]!r}")
                clicked += 1
            if run == "llama70b":
                series = [n for n in nodes.values() if n["kind"] == "series"]
                if [(n["label"], n["expanded"]) for n in series] != [("LlamaDecoderLayer[0-79]", False)]:
                    found.append(f"80 layers: {[(n['label'], n['expanded']) for n in series]}")
            if found:
                bad[run] = found[:8] + ([f"... {len(found) - 8} more"] if len(found) > 8 else [])
        finally:
            context.close()
    assert bad == {}, json.dumps(bad, indent=1)
    assert clicked >= 1  # some first view has a stub to click


@pytest.mark.parametrize("run", ["unet2d", "vae", "jamba", "llava"])
def test_held_out_graphs_with_every_group_open_draw_no_edge_reversed(held_out_logs, run):
    from tb_graph_plugin import wire
    from tb_graph_plugin.graph import build_slim_graph
    from tb_graph_plugin.hierarchy import build_hierarchy
    from tb_graph_plugin.ingest.local import load_graph_def_from_path
    from tb_graph_plugin.layout.scene import LayoutCache, build_scene

    h = build_hierarchy(build_slim_graph(load_graph_def_from_path(str(held_out_logs / run))))
    every = [g.name for g in h.walk_groups() if g.id != h.root.id]
    scene = build_scene(h, wire.GraphRef(run=run, tag="t", kind=wire.GraphKind.OP), every, cache=LayoutCache())
    assert [(e.source, e.target) for e in scene.edges if e.reversed] == []


def test_llava_draws_its_language_model_once(held_out_logs):
    """The token embedding LLaVA calls through ``get_input_embeddings()`` is inside
    ``LlamaModel[language_model]``, not in a second box named ``language_model``."""
    from tb_graph_plugin.ingest.local import load_graph_def_from_path

    names = [n.name for n in load_graph_def_from_path(str(held_out_logs / "llava")).node]
    assert not [n for n in names if "/language_model/" in n]
    assert [n for n in names if "/LlamaModel[language_model]/Embedding[embed_tokens]/" in n]


# the ops FlopCounterMode counts (matmuls, convolutions); on CPU it counts no attention kernel
_DENSE = {"aten::linear", "aten::conv1d", "aten::conv2d", "aten::conv_transpose2d", "aten::mm", "aten::bmm",
          "aten::matmul", "aten::addmm", "aten::baddbmm", "aten::einsum", "aten::convolution"}


@pytest.mark.parametrize("run", held_out_models.MODELS)
def test_held_out_costs_match_torch(held_out_logs, run):
    """Issue 43 on the held-out architectures (none written for it): the whole model's ``params``
    are its ``sum(p.numel())`` (the 80-layer 70B on the meta device too: 70,553,706,496), and the
    FLOPs of its matmuls and convolutions are ``FlopCounterMode``'s total for the same call."""
    import json

    from tb_graph_plugin.graph import build_slim_graph
    from tb_graph_plugin.graph.cost import op_costs
    from tb_graph_plugin.hierarchy import build_hierarchy
    from tb_graph_plugin.hierarchy.cost import node_cost
    from tb_graph_plugin.ingest.local import load_graph_def_from_path

    facts = json.loads((held_out_logs / "facts.json").read_text())[run]
    slim = build_slim_graph(load_graph_def_from_path(str(held_out_logs / run)))
    h = build_hierarchy(slim)
    assert node_cost(h, h.root.id).params == facts["params"]
    if "flop_counter" in facts:
        costs = op_costs(slim)
        dense = sum(int(costs.flops[i]) for i, op in enumerate(slim.ops) if op in _DENSE)
        assert dense == facts["flop_counter"], (dense, facts["flop_counter"])
