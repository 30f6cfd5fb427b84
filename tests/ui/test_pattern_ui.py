"""The search box's "pattern" switch in the browser (issue 43): a real tensorboard over a Hugging Face
BERT captured with ``tb_graph_plugin.torch.add_graph``, the app in headless Chromium.

``aten::linear -> aten::gelu -> aten::linear`` finds one match per MLP: the matches are listed (their
ops in path order) and counted; the closed group holding them (the encoder, closed) is outlined
in the match colour; Enter jumps to the first match (its groups open, its last op selected) with its
three ops outlined, Enter again to the next; switching the pattern off drops the outlines.

Screenshots: ``pattern_first_view.png``, ``pattern_match_1.png``.
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import SCREENSHOTS
from tests.ui.conftest import app_frame, wait_settled, set_expanded
from tests.ui.test_graph_explorer_ui import ds

pytestmark = pytest.mark.slow

MATCH_RGB = (0xD8, 0x1B, 0x60)
MLP = "aten::linear -> aten::gelu -> aten::linear"


def outlined(frame, name: str) -> bool:
    """Whether node ``name``'s box edge (left side, around its middle) is drawn in the match colour."""
    pixels = frame.evaluate("""(name) => {
      const n = window.graphExplorer.nodes().find(n => n.name === name);
      if (!n) return [];
      const c = document.querySelector('[data-canvas]');
      const r = c.getBoundingClientRect();
      const dpr = c.width / r.width;
      const out = [];
      for (const [ex, ey] of [[n.x - n.w / 2, n.y + 2], [n.x + n.w / 2, n.y + 2], [n.x, n.y - n.h / 2], [n.x, n.y + n.h / 2]])
        for (let d = -3; d <= 3; d++) {
          const horizontal = ey !== n.y + 2;
          const x = Math.round(((horizontal ? ex : ex + d) - r.left) * dpr), y = Math.round(((horizontal ? ey + d : ey) - r.top) * dpr);
          out.push(Array.from(c.getContext('2d').getImageData(x, y, 1, 1).data.slice(0, 3)));
        }
      return out;
    }""", name)
    return any(sum(abs(a - b) for a, b in zip(p, MATCH_RGB)) < 60 for p in pixels)


def test_pattern_switch_lists_outlines_and_steps_through_matches(page, tensorboard_url, bert_logdir):
    page.set_viewport_size({"width": 1400, "height": 900})
    page.goto(f"{tensorboard_url(bert_logdir)}/#graph_explorer")
    frame = app_frame(page)
    assert wait_settled(frame) == "ready", ds(frame, "error")
    set_expanded(frame, ["BertModel"])  # the encoder closed (the first view opens its blocks)
    encoder = "BertModel/BertEncoder[encoder]"
    nodes = {n["name"]: n for n in frame.evaluate("window.graphExplorer.nodes()")}
    assert encoder in nodes and not nodes[encoder]["expanded"]  # closed at first view
    assert not outlined(frame, encoder)

    frame.check("[data-toggle=pattern]")
    assert frame.is_disabled("[data-search=op]") and frame.is_disabled("[data-toggle=names-only]")
    frame.fill("[data-search=q]", MLP)
    frame.click("[data-action=search]")
    frame.wait_for_function("document.body.dataset.searchTotal === '2'", timeout=60000)
    frame.wait_for_timeout(300)
    items = frame.eval_on_selector_all("[data-hit-index] [data-hit]", "ls => ls.map(l => l.textContent)")
    assert items == ["linear → gelu → linear"] * 2, items
    assert frame.inner_text("[data-search-count]").strip() == "2 hits"
    assert int(ds(frame, "patternMarked")) >= 6  # 2 x 3 ops, and the groups holding them
    assert outlined(frame, encoder)  # the closed group holding both matches is marked
    assert not outlined(frame, "BertModel/BertPooler[pooler]")
    assert "a pattern match" in frame.inner_text("[data-legend]")
    page.screenshot(path=str(SCREENSHOTS / "pattern_first_view.png"))

    frame.press("[data-search=q]", "Enter")
    frame.wait_for_function("document.body.dataset.searchIndex === '0' && document.body.dataset.status === 'ready'",
                            timeout=60000)
    hits = frame.eval_on_selector_all("[data-hit]", "ls => ls.map(l => l.dataset.hit)")
    frame.wait_for_function(f"document.body.dataset.selected === {json.dumps(hits[0])}", timeout=60000)
    assert "/BertLayer[0]/BertOutput[output]/" in hits[0] and hits[0].endswith("/linear")
    frame.wait_for_timeout(300)
    names = {n["name"] for n in frame.evaluate("window.graphExplorer.nodes()")}
    intermediate = "BertModel/BertEncoder[encoder]/layer/BertLayer[0]/BertIntermediate[intermediate]"
    assert intermediate in names and outlined(frame, intermediate)  # closed, holding the first linear and the gelu
    assert outlined(frame, "BertModel/BertEncoder[encoder]/layer/BertLayer[1]")  # closed, holding the other match
    assert not outlined(frame, "BertModel/BertEncoder[encoder]/layer/BertLayer[0]/BertAttention[attention]")
    assert frame.inner_text("[data-search-count]").strip() == "1 / 2"
    page.screenshot(path=str(SCREENSHOTS / "pattern_match_1.png"))

    frame.press("[data-search=q]", "Enter")
    frame.wait_for_function("document.body.dataset.searchIndex === '1'", timeout=60000)
    frame.wait_for_function(f"document.body.dataset.selected === {json.dumps(hits[1])}", timeout=60000)
    assert "/BertLayer[1]/" in hits[1]

    frame.uncheck("[data-toggle=pattern]")  # the same text as a regex: a bad one, and the outlines go
    frame.wait_for_function("document.body.dataset.patternMarked === '0'", timeout=60000)
    assert "a pattern match" not in frame.inner_text("[data-legend]")
    assert not page.errors
