"""``tb_graph_plugin.torch.add_compiled_graph``: what ``torch.compile`` makes of a call (issue 41).

A module with 2 graph breaks (an ``.item()`` branch and a ``print``), counted by
``torch._dynamo.explain`` itself, compiled with Inductor on CPU; a Hugging Face LLaMA (tiny
config) that compiles without a break. Graphs are read back from the event files written.
"""

from __future__ import annotations

import inspect
import json

import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

from tb_graph_plugin import wire  # noqa: E402
from tb_graph_plugin.graph import build_slim_graph  # noqa: E402
from tb_graph_plugin.hierarchy import build_hierarchy  # noqa: E402
from tb_graph_plugin.ingest.local import load_graph_def_from_path  # noqa: E402
from tb_graph_plugin.layout.scene import LayoutCache, build_scene  # noqa: E402
from tb_graph_plugin.torch import add_compiled_graph  # noqa: E402
from tests.hierarchy.invariants import check_invariants  # noqa: E402


class Inner(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        x = torch.relu(self.fc(x)) * 2 + 1
        if x.sum().item() > 0:  # break 1: .item()
            x = x * 3
        return x


class Breaks(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Inner()
        self.head = nn.Linear(8, 4)

    def forward(self, x):
        x = self.inner(x)
        print("logging")  # break 2: print
        return self.head(x).sigmoid()


class Logs(nn.Module):
    def forward(self, x):
        x = x.relu() + 1
        print("in block")  # a break in a module called twice, on inputs of two shapes
        return x * 2


class CallsTwice(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Logs()

    def forward(self, x):
        a = self.block(x)
        b = self.block(x[:, :3])  # another shape: the block's frames are compiled again
        return a.sum() + b.sum()


_RUNS: dict = {}


def _breaks(tmp_path_factory):
    if "breaks" not in _RUNS:
        torch.manual_seed(0)
        model, x = Breaks(), torch.rand(2, 8)
        torch._dynamo.reset()
        explained = torch._dynamo.explain(model)(x)
        torch._dynamo.reset()
        log = tmp_path_factory.mktemp("compiled_breaks")
        with torch.no_grad():
            written, summary = add_compiled_graph(str(log / "run"), model, (x,), backend="inductor")
        _RUNS["breaks"] = (explained, summary, load_graph_def_from_path(str(log / "run")))
        _RUNS["breaks_logdir"] = log
    return _RUNS["breaks"]


def test_two_breaks_give_three_graph_indices_and_two_graph_break_nodes_with_source_lines(tmp_path_factory):
    explained, summary, graph_def = _breaks(tmp_path_factory)
    assert (explained.graph_count, explained.graph_break_count) == (3, 2)
    ops = [n for n in graph_def.node if n.op not in ("IO Node", "graph_break") and not n.op.startswith("torch::")]
    assert sorted({n.attr["_compiled_graph"].i for n in ops}) == [0, 1, 2]
    breaks = [n for n in graph_def.node if n.op == "graph_break"]
    assert len(breaks) == 2 == summary.graph_breaks
    # explain's reasons hold only the breaks that ended a graph (the .item()); the print's frame
    # had traced nothing before it. The lines, from this file:
    lines = set()
    for method, call in ((Inner.forward, ".item()"), (Breaks.forward, "print(")):
        code, first = inspect.getsourcelines(method)
        lines.update(f"test_compiled_graph.py:{first + i} in forward" for i, line in enumerate(code) if call in line)
    assert len(lines) == 2
    assert {f"test_compiled_graph.py:{r.user_stack[-1].lineno} in forward" for r in explained.break_reasons} < lines
    assert {n.attr["source"].s.decode().rsplit("/", 1)[-1] for n in breaks} == lines
    assert "item()" in breaks[0].attr["reason"].s.decode() and "builtin" in breaks[1].attr["reason"].s.decode()
    # named where they happened: the .item() in Inner's forward, the print in the root's
    assert breaks[0].name.startswith("Breaks/Inner[inner]/graph_break")
    assert breaks[1].name == "Breaks/graph_break"
    # between the graphs they separate: a break reads graph k's ops and feeds graph k + 1's
    graph_of = {n.name: n.attr["_compiled_graph"].i for n in ops}
    for k, b in enumerate(breaks):
        assert {graph_of[i.split(":")[0]] for i in b.input} == {k}
        readers = [n for n in ops if any(i.split(":")[0] == b.name for i in n.input)]
        assert readers and {graph_of[n.name] for n in readers} == {k + 1}
    assert summary.graphs == 3 and summary.recompilations == 0


def test_inductor_kernels_name_the_fused_ops(tmp_path_factory):
    _, summary, graph_def = _breaks(tmp_path_factory)
    by_leaf = {n.name: n for n in graph_def.node}
    fused = [by_leaf[f"Breaks/Inner[inner]/{op}"] for op in ("relu", "mul", "add")]
    kernels = {n.attr["_kernel"].s.decode() for n in fused}
    assert len(kernels) == 1 and next(iter(kernels)).startswith("cpp_fused_")  # one fused kernel
    assert by_leaf["Breaks/Inner[inner]/Linear[fc]/addmm"].attr["_kernel"].s.decode() == "extern_kernels.addmm"
    computing = [n for n in graph_def.node if n.op.startswith("aten::")
                 and n.op not in ("aten::t", "aten::view", "aten::permute", "aten::expand")]
    assert [n.name for n in computing if "_kernel" not in n.attr] == []
    assert summary.kernels >= 4


def test_compiled_graph_draws_no_edge_reversed(tmp_path_factory):
    _, _, graph_def = _breaks(tmp_path_factory)
    h = build_hierarchy(build_slim_graph(graph_def))
    check_invariants(h)
    every = [g.name for g in h.walk_groups() if g.id != h.root.id]
    scene = build_scene(h, wire.GraphRef(run="c", tag="t", kind=wire.GraphKind.OP), every, cache=LayoutCache())
    assert [(e.source, e.target) for e in scene.edges if e.reversed] == []


def test_hugging_face_model_without_break_is_one_graph(tmp_path):
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(transformers.LlamaConfig(
        hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        vocab_size=100, max_position_embeddings=64, bos_token_id=0, eos_token_id=0)).eval()
    ids = torch.randint(0, 100, (1, 8))
    torch._dynamo.reset()
    with torch.no_grad():
        _, summary = add_compiled_graph(str(tmp_path), model, (ids,), {"use_cache": False}, backend="eager")
    graph_def = load_graph_def_from_path(str(tmp_path))
    assert summary.graph_breaks == 0 and summary.graphs == 1
    ops = [n for n in graph_def.node if n.op.startswith("aten::")]
    assert len(ops) > 100 and {n.attr["_compiled_graph"].i for n in ops} == {0}
    assert not [n for n in graph_def.node if n.op == "graph_break"]
    names = {n.name for n in graph_def.node}
    assert any(n.startswith("LlamaForCausalLM/LlamaModel[model]/layers/LlamaDecoderLayer[1]/") for n in names)
    # the mask Hugging Face's helpers compute is one call of LlamaModel's forward, as add_graph draws
    # it (Dynamo's stack traces go on into masking_utils: cut at the module's forward frame)
    mask = [n for n in names if n.startswith("LlamaForCausalLM/LlamaModel[model]/create_causal_mask()/")]
    loose = [n.name for n in graph_def.node if n.name.count("/") == 2 and n.name.startswith("LlamaForCausalLM/LlamaModel[model]/")
             and "masking_utils" in n.attr["_source"].s.decode()]
    assert len(mask) >= 5 and loose == [], (len(mask), loose[:5])


def test_no_graph_handed_over_is_a_clear_error_and_nothing_is_written(tmp_path):
    """Dynamo's recompile limit reached for the code (each call compiles afresh): no graph reaches
    the recorder, and the error says what to do."""
    from tb_graph_plugin.torch import CaptureError

    model, x = Breaks(), torch.rand(2, 8)
    torch._dynamo.reset()
    with torch._dynamo.config.patch(recompile_limit=1), torch.no_grad():
        add_compiled_graph(str(tmp_path / "first"), model, (x,), backend="eager")
        with pytest.raises(CaptureError, match=r"torch._dynamo.reset\(\)"):
            add_compiled_graph(str(tmp_path / "second"), model, (x,), backend="eager")
    torch._dynamo.reset()
    assert not (tmp_path / "second").exists()


def test_graphs_and_kernels_colour_through_node_data(tmp_path_factory):
    """``compiled_graph`` and ``kernel`` node data tags, read through a real TensorBoard app:
    the values are the ops' ``_compiled_graph`` and their kernels' numbers, one colour each."""
    from tests.tb_app import OURS, TbApp

    _, summary, graph_def = _breaks(tmp_path_factory)
    app = TbApp(_RUNS["breaks_logdir"], workers=1)
    try:
        tags = {t["tag"] for t in app.json(OURS + "/node_data_tags")["tags"] if t["run"] == "run"}
        assert tags == {"compiled_graph", "kernel"}
        answer = app.json(OURS + "/node_data", run="run", data_tag="compiled_graph", data_step="0", wait="20",
                          expanded='["Breaks", "Breaks/Inner[inner]"]')
        ops = {n.name: n.attr["_compiled_graph"].i for n in graph_def.node if "_compiled_graph" in n.attr}
        assert answer["unmatched"] == 0 and answer["matched"] == len(ops)
        for name in ("Breaks/Inner[inner]/relu", "Breaks/Inner[inner]/mul_1", "Breaks/sigmoid"):
            assert answer["values"][name] == ops[name]
        kernels = app.json(OURS + "/node_data", run="run", data_tag="kernel", data_step="0", wait="20",
                           expanded='["Breaks", "Breaks/Inner[inner]"]')
        relu, add = kernels["values"]["Breaks/Inner[inner]/relu"], kernels["values"]["Breaks/Inner[inner]/add"]
        assert relu == add != kernels["values"]["Breaks/sigmoid"]  # fused together, not with the sigmoid
    finally:
        app.ours.pool.close()


VIEWS = {"aten::t", "aten::view", "aten::_unsafe_view", "aten::transpose", "aten::permute", "aten::expand",
         "aten::unsqueeze", "aten::squeeze", "aten::slice", "aten::reshape"}


def test_hugging_face_model_under_inductor_every_computing_op_has_its_kernel(tmp_path):
    """Inductor on a tiny LLaMA: each op that computes (not a view, which Inductor folds into the
    kernels' indexing; not a factory such as ``arange`` it may fold into a constant) names its kernel."""
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(transformers.LlamaConfig(
        hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        vocab_size=100, max_position_embeddings=64, bos_token_id=0, eos_token_id=0)).eval()
    torch._dynamo.reset()
    with torch.no_grad():
        graph_def, summary = add_compiled_graph(str(tmp_path), model, (torch.randint(0, 100, (1, 8)),),
                                                {"use_cache": False}, backend="inductor")
    torch._dynamo.reset()
    ops = [n for n in graph_def.node if n.op.startswith("aten::")]
    missing = [n.name for n in ops if "_kernel" not in n.attr and n.op not in VIEWS and n.op != "aten::arange"]
    assert missing == []
    kernels = {n.attr["_kernel"].s.decode() for n in ops if "_kernel" in n.attr}
    assert summary.kernels == len(kernels) >= 5
    assert "extern_kernels.mm" in kernels and any(k.startswith("cpp_fused_") for k in kernels)
    # the projections' matmuls are extern calls, the norms' pointwise ops fused kernels
    q = [n for n in ops if "/LlamaAttention[self_attn]/Linear[q_proj]/" in n.name and n.op == "aten::mm"]
    assert q and all(n.attr["_kernel"].s.decode() == "extern_kernels.mm" for n in q)


def test_kernel_groups_close_no_cycle_on_gpt2(tmp_path):
    """GPT-2 under Inductor fuses its position ids (before the ``wpe`` embedding) with the sum of
    the two embeddings (after it) into one kernel: gathered into a box among GPT2Model's children
    it would feed ``Embedding[wpe]`` and read it back. Grouped by kernel with every group open, no
    edge is drawn reversed, and the other kernels are boxes."""
    transformers = pytest.importorskip("transformers")
    from tb_graph_plugin.hierarchy import HierarchyOptions

    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(transformers.GPT2Config(
        n_embd=32, n_layer=1, n_head=4, vocab_size=100, n_positions=64, bos_token_id=0, eos_token_id=0)).eval()
    torch._dynamo.reset()
    with torch.no_grad():
        graph_def, _ = add_compiled_graph(str(tmp_path), model, (torch.randint(0, 100, (1, 8)),),
                                          {"use_cache": False}, backend="inductor")
    torch._dynamo.reset()
    h = build_hierarchy(build_slim_graph(graph_def), HierarchyOptions(group_kernels=True))
    check_invariants(h)
    assert len([g for g in h.walk_groups() if g.inferred == "kernel"]) >= 3
    every = [g.name for g in h.walk_groups() if g.id != h.root.id]
    scene = build_scene(h, wire.GraphRef(run="c", tag="t", kind=wire.GraphKind.OP), every, cache=LayoutCache())
    assert [(e.source, e.target) for e in scene.edges if e.reversed] == []


def test_recompilations_are_counted_and_values_flow_between_graphs(tmp_path):
    """The block's frame (and its resumed half) compiled again for the second shape: 2
    recompilations. Each op sits in its module call, a frame with no parameter of its own too
    (found by its ``self``, or by the ``forward`` holding its lines when Dynamo resumed it); a
    value made by one graph and read by a later one is an edge from the op that made it."""
    torch._dynamo.reset()
    with torch.no_grad():
        graph_def, summary = add_compiled_graph(str(tmp_path), CallsTwice(), (torch.rand(2, 4),), backend="eager")
    torch._dynamo.reset()
    assert summary.recompilations == 2 and summary.graphs == 6
    by_name = {n.name: n for n in graph_def.node}
    block_ops = [n for n in graph_def.node if n.op in ("aten::relu", "aten::mul")]
    assert block_ops and all(n.name.startswith("CallsTwice/Logs[block]/") for n in block_ops)
    assert by_name["CallsTwice/slice"].input[0] == "input/x"  # the call's input, read again later
    sums = [n for n in graph_def.node if n.op == "aten::sum"]
    assert {i for n in sums for i in n.input} == {"CallsTwice/Logs[block]/mul", "CallsTwice/Logs[block]/mul_1"}
    assert len([n for n in graph_def.node if n.op == "IO Node" and n.name.startswith("input/")]) == 1
    outputs = [n for n in graph_def.node if n.op == "IO Node" and n.name.startswith("output/")]
    assert [list(n.input) for n in outputs] == [["CallsTwice/add"]]  # the call's result, not the block's


class ClampsRarely(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        x = self.fc(x)
        if x.abs().max().item() > 100:  # not taken: the resumed frame traces nothing
            x = x.clamp(-100, 100)
        return x


class PrintsAfter(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = ClampsRarely()

    def forward(self, x):
        x = self.block(x)
        print("logging")  # straight after the block's break: no graph between the two breaks
        return x.sigmoid()


def test_each_break_is_named_in_the_module_whose_forward_holds_its_line(tmp_path):
    """Two breaks with no graph between them: the print is the root's (its forward holds the
    line), not the block's whose ops ran last."""
    torch._dynamo.reset()
    with torch.no_grad():
        graph_def, summary = add_compiled_graph(str(tmp_path), PrintsAfter(), (torch.rand(2, 8),), backend="eager")
    torch._dynamo.reset()
    breaks = [n for n in graph_def.node if n.op == "graph_break"]
    assert [n.name for n in breaks] == ["PrintsAfter/ClampsRarely[block]/graph_break", "PrintsAfter/graph_break"]
    assert breaks[1].input == [breaks[0].name]  # one after the other
    # sources relative to the working directory (pytest runs from the repository root)
    assert all(s.startswith("tests/pytorch/test_compiled_graph.py:") and s.endswith(" in forward")
               for _, s in summary.breaks), summary.breaks


def test_group_by_kernel_and_the_break_count_in_the_listing(tmp_path_factory):
    """Through a real TensorBoard app: ``/graphs`` gives each step's compile facts (3 graphs,
    2 breaks) before the graph is built, and the stock Graphs tab still shows the graph; ``/scene?group=kernels`` gathers the ops one Inductor
    kernel fused (Inner's relu, mul, add: one ``cpp_fused_*`` group, inferred ``kernel``) inside
    their module, and without it the module holds them as ops; a bad ``group`` is a 400."""
    from tests.tb_app import OURS, TbApp, json_error

    _, summary, graph_def = _breaks(tmp_path_factory)
    app = TbApp(_RUNS["breaks_logdir"], workers=1)
    try:
        run = next(r for r in app.json(OURS + "/graphs")["runs"] if r["run"] == "run")
        steps = next(t for t in run["tags"] if t["run_graph"])["steps"]
        assert [s["compile"] for s in steps] == [{"graphs": 3, "graph_breaks": 2, "recompilations": 0,
                                                  "kernels": summary.kernels}]
        expanded = '["Breaks", "Breaks/Inner[inner]"]'
        plain = app.json(OURS + "/scene", run="run", expanded=expanded, wait="30")
        assert not [n for n in plain["nodes"] if n["inferred"] == "kernel"]
        assert {"Breaks/Inner[inner]/relu", "Breaks/Inner[inner]/add"} <= {n["name"] for n in plain["nodes"]}
        names = {n.name for n in graph_def.node}
        kernels = {n.attr["_kernel"].s.decode() for n in graph_def.node if "_kernel" in n.attr}
        assert plain["stats"]["kernels"] == len(kernels) >= 2
        grouped = app.json(OURS + "/scene", run="run", expanded=expanded, group="kernels", wait="30")
        fused = [n for n in grouped["nodes"] if n["inferred"] == "kernel" and n["parent"] == "Breaks/Inner[inner]"]
        assert len(fused) == 1 and fused[0]["label"].startswith("cpp_fused_") and fused[0]["cardinality"] >= 3, fused
        inside = app.json(OURS + "/scene", run="run", group="kernels", wait="30",
                          expanded=json.dumps(["Breaks", "Breaks/Inner[inner]", fused[0]["name"]]))
        members = {n["name"] for n in inside["nodes"] if n["parent"] == fused[0]["name"] and n["kind"] == "op"}
        assert {f"Breaks/Inner[inner]/{op}" for op in ("relu", "mul", "add")} <= members <= names, members
        # a kernel that computes all its module holds (Linear[fc]'s t and addmm) adds no level
        assert not [n for n in grouped["nodes"] if n["parent"] == "Breaks/Inner[inner]/Linear[fc]"]
        fc = app.json(OURS + "/scene", run="run", group="kernels", wait="30",
                      expanded=json.dumps(["Breaks", "Breaks/Inner[inner]", "Breaks/Inner[inner]/Linear[fc]"]))
        assert {n["name"] for n in fc["nodes"] if n["parent"] == "Breaks/Inner[inner]/Linear[fc]"
                and n["kind"] == "op"} == {"Breaks/Inner[inner]/Linear[fc]/t", "Breaks/Inner[inner]/Linear[fc]/addmm"}
        # the module tree is the same: Linear[fc] (its addmm an extern kernel, alone) stays a module
        assert "Breaks/Inner[inner]/Linear[fc]" in {n["name"] for n in grouped["nodes"]}
        message = json_error(app.get(OURS + "/scene", run="run", group="ops"), 400)
        assert "`group` must be scopes or kernels" in message
        # the stock Graphs tab shows the same GraphDef (the compile facts beside it change nothing)
        from google.protobuf import text_format
        from tensorboard.compat.proto import graph_pb2

        from tests.tb_app import STOCK

        assert app.json(STOCK + "/info")["run"]["run_graph"]
        stock = graph_pb2.GraphDef()
        text_format.Parse(app.get(STOCK + "/graph", run="run").get_data(as_text=True), stock)
        assert sum(n.op == "graph_break" for n in stock.node) == 2 and len(stock.node) == len(graph_def.node)
    finally:
        app.ours.pool.close()


def test_kernel_groups_keep_the_hierarchy_whole(tmp_path_factory):
    from tb_graph_plugin.hierarchy import HierarchyOptions

    _, _, graph_def = _breaks(tmp_path_factory)
    h = build_hierarchy(build_slim_graph(graph_def), HierarchyOptions(group_kernels=True))
    check_invariants(h)
    fused = [g for g in h.walk_groups() if g.inferred == "kernel"]
    assert fused and all(len(g.children) >= 2 for g in fused)
    assert all(len({h.slim.kernels[c] for c in g.children}) == 1 for g in fused)
