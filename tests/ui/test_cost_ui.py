"""Cost in the browser (issue 43): a real tensorboard over a Hugging Face BERT captured with
``tb_graph_plugin.torch.add_graph`` (``tests/pytorch/cost_models.py``), the app in headless Chromium.

Colour by "Cost: FLOPs": each shown group is drawn in its FLOPs' colour (log scale), the legend says
so, the top list holds the costliest ops in FLOPs and jumps to one; the info pane shows the node's
cost in human units (params, FLOPs, output bytes).

Screenshots: ``cost_flops_first_view.png``, ``cost_flops_top_jump.png``.
"""

from __future__ import annotations

import json
import re

import pytest

from tests.conftest import SCREENSHOTS
from tests.ui.conftest import app_frame, wait_settled, set_expanded
from tests.ui.test_graph_explorer_ui import ds
from tests.ui.test_node_data_ui import pixel

pytestmark = pytest.mark.slow


def test_colour_by_flops_and_the_cost_in_the_info_pane(page, tensorboard_url, bert_logdir, cost_models):
    truth = json.loads((cost_models / "truth.json").read_text())["bert"]
    page.set_viewport_size({"width": 1400, "height": 900})
    page.goto(f"{tensorboard_url(bert_logdir)}/#graph_explorer")
    frame = app_frame(page)
    assert wait_settled(frame) == "ready", ds(frame, "error")
    set_expanded(frame, ["BertModel"])  # the encoder closed (the first view opens its blocks)
    frame.wait_for_function("[...document.querySelectorAll('[data-picker=color] option')]"
                            ".some(o => o.textContent === 'Cost: FLOPs')", timeout=30000)
    labels = frame.eval_on_selector_all("[data-picker=color] option", "os => os.map(o => o.textContent)")
    assert {"Cost: params", "Cost: FLOPs", "Cost: output bytes"} <= set(labels), labels
    value = frame.eval_on_selector_all("[data-picker=color] option",
                                       "os => os.find(o => o.textContent === 'Cost: FLOPs').value")
    frame.select_option("[data-picker=color]", value)
    frame.wait_for_function("document.body.dataset.nodeDataState === 'ready'", timeout=60000)
    frame.wait_for_timeout(300)
    assert ds(frame, "colorMode") == "node_data"
    legend = frame.inner_text("[data-legend]")
    assert "Cost: FLOPs (log scale)" in legend and "FLOPs" in legend.split("(log scale)")[1], legend
    assert frame.is_disabled("[data-nd=agg]") and frame.input_value("[data-nd=agg]") == "sum"

    # the encoder is drawn in its value's colour; the encoder costs more than the pooler
    encoder = "BertModel/BertEncoder[encoder]"
    fill = frame.evaluate(f"window.graphExplorerNodeData.fill({json.dumps(encoder)})")
    assert fill and pixel(frame, encoder) == tuple(int(c) for c in fill[4:-1].split(","))
    answer = frame.evaluate("window.graphExplorerNodeData.answer()")
    assert answer["values"][encoder] > answer["values"]["BertModel/BertPooler[pooler]"] > 0
    assert abs(answer["values"]["BertModel"] - truth["flops"]) <= 0.02 * truth["flops"]
    page.screenshot(path=str(SCREENSHOTS / "cost_flops_first_view.png"))

    # the top list: ops in FLOPs, the costliest first; a click opens its groups and selects it
    top = frame.eval_on_selector_all("[data-nd-top] li", "ls => ls.map(l => l.textContent)")
    assert top and all(re.search(r"\d( [kMG])?FLOPs$|\d FLOPs$", t) for t in top), top
    first = frame.eval_on_selector("[data-nd-top] [data-jump]", "l => l.dataset.jump")
    assert first.endswith("/linear"), first  # a matmul: the MLP's linears are the costliest ops here
    frame.click("[data-nd-top] [data-jump]")
    frame.wait_for_function(f"document.body.dataset.selected === {json.dumps(first)}", timeout=60000)
    frame.wait_for_selector(f"[data-cost={json.dumps(first)}]", timeout=60000)
    rows = dict(zip(frame.eval_on_selector_all("[data-cost] .gx-kv > span:nth-child(odd)", "s => s.map(x => x.textContent)"),
                    frame.eval_on_selector_all("[data-cost] [data-cost-field]", "s => s.map(x => x.textContent)")))
    assert rows["params"] == "66 k (258.0 KB)", rows  # 128 x 512 weight + 512 bias, float32
    assert rows["FLOPs"] == "2.1 MFLOPs", rows  # 2 x 16 x 128 x 512
    assert rows["output bytes"] == "32.0 KB", rows
    page.screenshot(path=str(SCREENSHOTS / "cost_flops_top_jump.png"))

