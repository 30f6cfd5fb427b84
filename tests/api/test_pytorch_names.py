"""PyTorch ``add_graph`` logs through TensorBoard: labels, search, a group's inputs, module references.

A Hugging Face GPT-2 from a config, written by torch's own ``SummaryWriter.add_graph``
(``tests/logwriters.py``: ``hf_gpt2``), and the demo ResNet-like CNN. Regressions of issue 23:

- item 4: ops were labelled by JIT value names (``816``, ``input.5``) and searching ``add`` in
  GPT-2 found nothing (only names were searched): generated names are labelled by their op type
  (``graph/labels.py``), and ``/search`` matches names, labels and op types, ignoring case;
- item 5: a selected series member (``LlamaDecoderLayer[0]``, here ``GPT2Block[0]``) listed
  "Inputs (0)": its inputs come from outside its series, in a higher metagraph;
- item 6: ``tb-graph summary`` counted the module references every PyTorch graph has as
  ``dangling_inputs`` (102 on a ResNet-18) while ``/scene`` called them ``module_references``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.tb_app import OURS, TbApp

RUN = "hf_gpt2"
BLOCKS = "GPT2Model/GPT2Block[0-3]"
BLOCK0 = "GPT2Model/GPT2Block[0]"
GENERATED = re.compile(r"[0-9]+|[A-Za-z_]\w*\.[0-9]+")
DEMO = Path(__file__).resolve().parents[2] / "demo_logs"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def app(real_logs):
    app = TbApp(real_logs.get(RUN))
    yield app
    app.ours.pool.close()


def _get(app, route, **params):
    return app.json(OURS + route, run=RUN, tag="__run_graph__", wait="30", **params)


def _add_ops(app) -> set[str]:
    """Every ``aten::add`` op of the graph, from the op graph the stock plugin serves."""
    from google.protobuf import text_format
    from tensorboard.compat.proto import graph_pb2

    blob = app.get("/data/plugin/graphs/graph", run=RUN, conceptual="false").get_data()
    graph = text_format.Parse(blob.decode("utf-8"), graph_pb2.GraphDef())
    return {n.name for n in graph.node if n.op == "aten::add"}


def test_generated_names_are_labelled_by_their_op_type(app):
    scene = _get(app, "/scene", expanded=json.dumps(["GPT2Model", BLOCKS, BLOCK0,
                                                     f"{BLOCK0}/GPT2Attention[attn]", f"{BLOCK0}/GPT2MLP[mlp]"]))
    ops = [n for n in scene["nodes"] if n["kind"] in ("op", "in_embedding", "out_embedding") and n.get("op")]
    torch_ops = [n for n in ops if "::" in n["op"]]
    assert len(torch_ops) > 40
    for n in torch_ops:
        leaf = n["name"].rsplit("/", 1)[-1].split("@", 1)[0]
        if GENERATED.fullmatch(leaf):
            assert n["label"] == n["op"].split("::", 1)[1], n
        else:
            assert n["label"] == leaf, n  # an author's name (q_idx, attention_mask) stays
    assert not [n for n in torch_ops if GENERATED.fullmatch(n["label"])]
    labels = {n["label"] for n in torch_ops}
    assert {"add", "view", "Constant"} <= labels


def test_search_add_finds_the_adds_and_names_only_finds_none_of_them(app):
    adds = _add_ops(app)
    assert len(adds) >= 16  # 4 blocks x (2 residual adds + GELU's), the embeddings' sum, ...
    answer = _get(app, "/search", q="add")
    found = {h["name"] for h in answer["hits"] if h["op"] == "aten::add"}
    assert found == adds and answer["complete"]
    labelled = _get(app, "/search", q="^add$")
    assert {h["name"] for h in labelled["hits"]} <= adds
    assert {h["label"] for h in labelled["hits"]} == {"add"} and labelled["total"] >= 12
    assert _get(app, "/search", q="ADD")["total"] == answer["total"]  # ignoring case
    names_only = _get(app, "/search", q="add", names_only="on")
    assert not {h["name"] for h in names_only["hits"]} & adds
    assert _get(app, "/search", q="^add$", names_only="on")["total"] == 0
    bad = app.get(OURS + "/search", run=RUN, tag="__run_graph__", q="add", names_only="yes", wait="30")
    assert bad.status_code == 400 and "names_only" in bad.get_json()["error"]


def test_a_series_member_lists_the_metaedges_that_enter_and_leave_it(app):
    details = _get(app, "/node", name=BLOCK0)
    inputs = {io["name"]: io for io in details["inputs"]}
    outputs = {io["name"]: io for io in details["outputs"]}
    # from outside its series (the metagraph of GPT2Model), then its sibling
    assert "GPT2Model/Dropout[drop]" in inputs and "GPT2Model/attention_mask" in inputs
    assert list(outputs) == ["GPT2Model/GPT2Block[1]"]
    assert all(io["count"] >= 1 and io["kind"] == "data" for io in details["inputs"] + details["outputs"])
    last = _get(app, "/node", name="GPT2Model/GPT2Block[3]")
    assert [io["name"] for io in last["outputs"]] == ["GPT2Model/LayerNorm[ln_f]"]
    assert [io["name"] for io in last["inputs"]][0] == "GPT2Model/GPT2Block[2]"
    series = _get(app, "/node", name=BLOCKS)
    # the series' own inputs hold its members' inputs from outside it
    assert sum(io["count"] for io in series["inputs"]) == sum(
        io["count"] for b in range(4) for io in _get(app, "/node", name=f"GPT2Model/GPT2Block[{b}]")["inputs"]
        if not io["name"].startswith("GPT2Model/GPT2Block["))


def test_summary_and_scene_count_module_references_alike(capsys):
    from tb_graph_plugin import cli

    demo = TbApp(DEMO / "torch_cnn")
    try:
        stats = demo.json(OURS + "/scene", run=".", tag="__run_graph__", wait="30", expanded="[]")["stats"]
    finally:
        demo.ours.pool.close()
    assert cli.main(["summary", str(DEMO / "torch_cnn"), "--compact"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert stats["module_references"] > 0 and stats["dangling_inputs"] == 0
    assert summary["module_references"] == stats["module_references"]
    assert summary["dangling_inputs"] == stats["dangling_inputs"] == 0
