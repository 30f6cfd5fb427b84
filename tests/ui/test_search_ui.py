"""The search box on a PyTorch graph, in a real TensorBoard and headless Chromium (issue 23 item 4).

A Hugging Face GPT-2 written by torch's ``SummaryWriter.add_graph`` names its ops by JIT value
numbers (``816``, ``input.5``): searching ``add`` found nothing. Now the box matches names,
labels and op types: typing ``add`` and Enter counts the hits beside the box, jumps to the first
(opening the groups that hold it, the op drawn with its op-type label ``add``); Enter again goes
to the next hit, Shift+Enter back; the "names only" switch finds none of the adds.

Screenshot: ``tests/_artifacts/screenshots/search_add_gpt2.png``.
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


@pytest.fixture(scope="module")
def gpt2_logdir(real_logs, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("search_ui_logdir")
    for run_dir in sorted(p for p in real_logs.get("hf_gpt2").iterdir() if p.is_dir()):
        shutil.copytree(run_dir, root / run_dir.name)
    return root


def ds(frame, key: str) -> str:
    return frame.evaluate(f"document.body.dataset[{json.dumps(key)}] ?? ''")


def count_text(frame) -> str:
    return frame.inner_text("[data-search-count]").strip()


def hit_names(frame) -> list[str]:
    return frame.eval_on_selector_all("[data-hit]", "ls => ls.map(l => l.dataset.hit)")


def wait_selected(frame, name: str) -> None:
    frame.wait_for_function(f"document.body.dataset.selected === {json.dumps(name)}"
                            " && document.body.dataset.status === 'ready'", timeout=60000)


def test_search_add_counts_the_hits_and_enter_jumps_through_them(page, tensorboard_url, gpt2_logdir):
    page.set_viewport_size({"width": 1400, "height": 900})
    page.goto(f"{tensorboard_url(gpt2_logdir)}/#graph_explorer")
    frame = app_frame(page)
    assert wait_settled(frame) == "ready", ds(frame, "error")

    frame.fill("[data-search=q]", "add")
    frame.press("[data-search=q]", "Enter")
    frame.wait_for_function("document.body.dataset.searchIndex === '0'", timeout=60000)
    hits = hit_names(frame)
    total = int(ds(frame, "searchTotal"))
    ops = frame.eval_on_selector_all("[data-hit-index]", "ls => ls.map(l => l.textContent)")
    assert sum("aten::add" in t and not "aten::addmm" in t for t in ops) >= 16, ops  # the adds, by op type
    assert count_text(frame) == f"1 / {len(hits)}" and total == len(hits)
    wait_selected(frame, hits[0])

    # the selected op is drawn, labelled by its op type (its name is a JIT value name)
    first = next(n for n in frame.evaluate("window.graphExplorer.nodes()") if n["name"] == hits[0])
    assert first["kind"] == "op" and first["op"] == "aten::add" and first["label"] == "add"
    assert re.fullmatch(r"[0-9]+|\w+\.[0-9]+", hits[0].rsplit("/", 1)[-1]), hits[0]
    drawn = [lab["text"] for lab in frame.evaluate("window.graphExplorer.drawList()")["labels"]
             if lab["owner"] == hits[0]]
    assert drawn == ["add"], drawn
    page.screenshot(path=str(SCREENSHOTS / "search_add_gpt2.png"))

    frame.press("[data-search=q]", "Enter")
    frame.wait_for_function("document.body.dataset.searchIndex === '1'")
    assert count_text(frame) == f"2 / {len(hits)}"
    wait_selected(frame, hits[1])
    frame.press("[data-search=q]", "Shift+Enter")
    frame.wait_for_function("document.body.dataset.searchIndex === '0'")
    assert count_text(frame) == f"1 / {len(hits)}"
    wait_selected(frame, hits[0])
    frame.press("[data-search=q]", "Shift+Enter")  # wraps around to the last hit
    frame.wait_for_function(f"document.body.dataset.searchIndex === '{len(hits) - 1}'")
    wait_selected(frame, hits[-1])
    assert frame.eval_on_selector_all("li.gx-current", "ls => ls.map(l => l.dataset.hitIndex)") == [str(len(hits) - 1)]

    # names only: none of the adds (their names are numbers)
    frame.check("[data-toggle=names-only]")
    frame.wait_for_function("document.body.dataset.searchHits === '0'")
    assert count_text(frame) == "no hits"
    page.screenshot(path=str(SCREENSHOTS / "search_add_gpt2_names_only.png"))
