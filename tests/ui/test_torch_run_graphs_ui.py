"""The graphs that run, for PyTorch (issue 41), in a real TensorBoard and headless Chromium at 1400 x 900:

- a training step (hand-written CNN with SGD + momentum, HF LLaMA with AdamW, each after one real
  step): the first view shows the model, ``loss``, ``backward`` and ``optimizer`` as boxes
  labelled at >= 9 px;
- what ``torch.compile`` (Inductor) made of a module with 2 graph breaks: searching
  ``graph_break`` finds both, each selectable, with its reason and source line in the info pane;
  **Colour -> Node data: compiled_graph** draws the graphs' ops in different colours.

Screenshots: ``tests/_artifacts/screenshots/torch_train_step_first_view.png``,
``torch_train_step_llama_first_view.png``,
``torch_compiled_breaks_first_view.png``, ``torch_compiled_break_selected.png``,
``torch_compiled_graphs_coloured.png``.
"""

from __future__ import annotations

import json
import urllib.parse
from pathlib import Path

import pytest

from tests.conftest import SCREENSHOTS
from tests.ui.conftest import app_frame
from tests.ui.test_first_view_labels import READABLE_PX
from tests.ui.test_node_data_ui import choose_tag, fills

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def run_graphs_logdir(tmp_path_factory) -> Path:
    from tb_graph_plugin.torch import add_compiled_graph, add_graph
    from tests.pytorch.test_compiled_graph import Breaks
    from tests.pytorch.test_training_step import _cnn, _llama

    root = tmp_path_factory.mktemp("torch_run_graphs")
    model, args, kwargs, loss_fn, optimizer = _cnn()
    loss_fn(model(*args, **kwargs)).backward()
    optimizer.step()
    add_graph(str(root / "train_step"), model, args, kwargs, loss_fn=loss_fn, optimizer=optimizer)
    model, args, kwargs, loss_fn, optimizer = _llama()
    loss_fn(model(*args, **kwargs)).backward()
    optimizer.step()
    add_graph(str(root / "train_step_llama"), model, args, kwargs, loss_fn=loss_fn, optimizer=optimizer)
    torch._dynamo.reset()
    torch.manual_seed(0)
    with torch.no_grad():
        add_compiled_graph(str(root / "compiled_breaks"), Breaks(), (torch.rand(2, 8),), backend="inductor")
    torch._dynamo.reset()
    return root


def _open(browser, base: str, run: str):
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.goto(f"{base}/#graph_explorer&p.graph_explorer.run={urllib.parse.quote(run)}")
    frame = app_frame(page, timeout=120)
    frame.wait_for_function("document.body.dataset.status !== 'loading' && "
                            "Number(document.body.dataset.drawnNodes) > 0", timeout=180_000, polling=50)
    page.wait_for_timeout(300)
    return context, page, frame


@pytest.mark.parametrize("run,model", [("train_step", "SmallCNN"), ("train_step_llama", "LlamaForCausalLM")])
def test_training_step_first_view_shows_model_loss_backward_and_optimizer(browser, tensorboard_url,
                                                                         run_graphs_logdir, run, model):
    base = tensorboard_url(run_graphs_logdir, min_runs=3)
    context, page, frame = _open(browser, base, run)
    try:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / f"torch_{run}_first_view.png"))
        draw = frame.evaluate("JSON.parse(JSON.stringify(window.graphExplorer.drawList()))")
        drawn = {d["name"]: d for d in draw["nodes"]}
        for block in (model, "loss", "backward", "optimizer"):
            assert block in drawn, sorted(drawn)[:40]
            sizes = [lab["px"] for lab in draw["labels"] if lab["owner"] == block and not lab["text"].isdigit()]
            assert sizes and min(sizes) >= READABLE_PX - 0.01, (block, sizes)
    finally:
        context.close()


def test_compiled_graph_breaks_are_found_by_search_with_reason_and_source(browser, tensorboard_url,
                                                                          run_graphs_logdir):
    base = tensorboard_url(run_graphs_logdir, min_runs=3)
    context, page, frame = _open(browser, base, "compiled_breaks")
    try:
        page.screenshot(path=str(SCREENSHOTS / "torch_compiled_breaks_first_view.png"))
        # the warning line counts the breaks
        frame.wait_for_function("Number(document.body.dataset.warningCount) >= 1", timeout=30000)
        items = frame.eval_on_selector_all("[data-warning]", "ls => ls.map(l => l.textContent)")
        assert "2 torch.compile graph breaks (search graph_break)" in items, items
        frame.fill("[data-search=q]", "graph_break")
        frame.press("[data-search=q]", "Enter")
        frame.wait_for_function("document.body.dataset.searchIndex === '0'", timeout=60000)
        hits = frame.eval_on_selector_all("[data-hit]", "ls => ls.map(l => l.dataset.hit)")
        assert sorted(hits) == ["Breaks/Inner[inner]/graph_break", "Breaks/graph_break"], hits
        frame.wait_for_function(f"document.body.dataset.selected === {json.dumps(hits[0])}"
                                " && document.body.dataset.status === 'ready'", timeout=60000)
        frame.wait_for_function("((document.querySelector('[data-info]') || {}).textContent || '')"
                                ".includes('test_compiled_graph.py:')", timeout=30000)
        info = frame.evaluate("(document.querySelector('[data-info]') || {}).textContent || ''")
        assert "graph_break" in info and "test_compiled_graph.py:" in info, info[:600]
        assert "item()" in info or "builtin" in info, info[:600]
        assert "graph breaks2 in this graph" in info, info[:600]  # the info pane counts them too
        page.screenshot(path=str(SCREENSHOTS / "torch_compiled_break_selected.png"))
        # Colour -> Node data: compiled_graph: the ops of graph 0 and graph 2 in different colours
        frame.wait_for_function("[...document.querySelectorAll('[data-picker=color] option')]"
                                ".some(o => o.value.startsWith('nd:'))", timeout=30000)
        choose_tag(frame, "compiled_graph")
        frame.wait_for_timeout(300)
        page.screenshot(path=str(SCREENSHOTS / "torch_compiled_graphs_coloured.png"))
        first, last = fills(frame, "Breaks/Inner[inner]/relu"), fills(frame, "Breaks/sigmoid")
        assert first and last and first != last, (first, last)
        # the tag's own colours (one per graph) are its default scale
        assert frame.input_value("[data-nd=scale]") == "thresholds"
    finally:
        context.close()


def test_compiled_run_lists_its_breaks_and_groups_by_kernel(browser, tensorboard_url, run_graphs_logdir):
    """The run picker says how many breaks the compiled call had; the "group by kernel" switch,
    shown for that graph only, gathers Inner's fused ops into one box named by its kernel."""
    base = tensorboard_url(run_graphs_logdir, min_runs=3)
    context, page, frame = _open(browser, base, "compiled_breaks")
    try:
        runs = frame.eval_on_selector_all("[data-picker=run] option", "os => os.map(o => o.textContent)")
        assert "compiled_breaks · 2 graph breaks" in runs and "train_step" in runs, runs
        steps = frame.eval_on_selector_all("[data-picker=step] option", "os => os.map(o => o.textContent)")
        assert "0 · 2 graph breaks" in steps, steps
        assert frame.is_visible("[data-kernels-switch]")
        frame.check("[data-toggle=kernels]")
        frame.wait_for_function("document.body.dataset.status === 'ready' && window.graphExplorer.drawList()"
                                ".nodes.some(n => n.name.startsWith('Breaks/Inner[inner]/cpp_fused_'))",
                                timeout=60000, polling=100)
        page.wait_for_timeout(300)
        page.screenshot(path=str(SCREENSHOTS / "torch_compiled_grouped_by_kernel.png"))
        draw = frame.evaluate("JSON.parse(JSON.stringify(window.graphExplorer.drawList()))")
        fused = [d["name"] for d in draw["nodes"] if d["name"].startswith("Breaks/Inner[inner]/cpp_fused_")]
        labels = [lab for lab in draw["labels"] if lab["owner"] == fused[0] and lab["text"].startswith("cpp_fused_")]
        assert labels and labels[0]["px"] >= READABLE_PX - 0.01, labels
        frame.uncheck("[data-toggle=kernels]")
        frame.wait_for_function("document.body.dataset.status === 'ready' && !window.graphExplorer.drawList()"
                                ".nodes.some(n => n.name.includes('/cpp_fused_'))", timeout=60000, polling=100)
    finally:
        context.close()
    # a graph with no kernels: no switch
    context, page, frame = _open(browser, base, "train_step")
    try:
        assert not frame.is_visible("[data-kernels-switch]")
    finally:
        context.close()
