"""``tb-graph summary --cost`` and the cost changes of ``tb-graph diff`` on real captures
(``tests/pytorch/cost_models.py``: a Hugging Face BERT, and the same with a wider MLP)."""

from __future__ import annotations

import json

import pytest

from tb_graph_plugin.cli import main

pytestmark = pytest.mark.slow


def _run(capsys, *argv):
    code = main(list(argv))
    return code, capsys.readouterr().out


def test_summary_cost_gives_the_totals_and_each_top_level_node(cost_models, capsys):
    truth = json.loads((cost_models / "truth.json").read_text())["bert"]
    code, out = _run(capsys, "summary", str(cost_models / "bert"), "--cost", "--compact")
    assert code == 0
    cost = json.loads(out)["cost"]
    assert cost["total"]["params"] == truth["params"]
    assert abs(cost["total"]["flops"] - truth["flops"]) <= 0.02 * truth["flops"]
    assert set(cost["top_level"]) == {"input", "BertModel", "output"}
    assert cost["top_level"]["BertModel"]["params"] == truth["params"]
    assert sum(c["flops"] for c in cost["top_level"].values()) == cost["total"]["flops"]
    code, out = _run(capsys, "summary", str(cost_models / "bert"), "--compact")
    assert "cost" not in json.loads(out)


def test_summary_cost_lists_each_series_and_says_what_it_does_not_know(real_logs, capsys):
    """torch's own (JIT) ``add_graph`` records no shapes: every op's cost is unknown, and said so."""
    code, out = _run(capsys, "summary", str(real_logs.get("torch_transformer")), "--cost", "--compact")
    summary = json.loads(out)
    series = [s["name"] for s in summary["series"] if s["kind"] == "block"]
    assert series and set(summary["cost"]["series"]) == {s["name"] for s in summary["series"]}
    blocks = summary["cost"]["series"][series[0]]
    assert blocks["flops"] == 0 and blocks["unknown_ops"] > 0
    assert summary["cost"]["total"]["unknown_ops"] >= summary["main_ops"]  # every op, embeddings too
    assert "aten::linear" in summary["cost"]["total"]["unknown_op_types"]


def test_diff_reports_the_cost_changes_of_changed_groups(cost_models, capsys):
    truth = json.loads((cost_models / "truth.json").read_text())
    a, b = truth["bert"]["modules"], truth["bert_wide"]["modules"]
    code, out = _run(capsys, "diff", str(cost_models / "bert"), str(cost_models / "bert_wide"), "--json", "--compact")
    assert code == 1
    changes = {c["name"]: c for c in json.loads(out)["cost_changes"]}
    layer = "BertModel/BertEncoder[encoder]/layer/BertLayer[1]"
    assert changes[layer]["delta"]["params"] == b["encoder.layer.1"] - a["encoder.layer.1"] > 0
    assert changes[layer]["a"]["params"] == a["encoder.layer.1"]
    assert changes["__root__"]["delta"]["params"] == truth["bert_wide"]["params"] - truth["bert"]["params"]
    assert changes["__root__"]["delta"]["flops"] > 0
    assert not any("Pooler" in name for name in changes)  # unchanged groups are not listed
    code, text = _run(capsys, "diff", str(cost_models / "bert"), str(cost_models / "bert_wide"))
    line = next(l for l in text.splitlines() if l.startswith(f"$ {layer}:"))
    assert f"params {a['encoder.layer.1']:,} -> {b['encoder.layer.1']:,}" in line, line
    code, out = _run(capsys, "diff", str(cost_models / "bert"), str(cost_models / "bert_wide"), "--json", "--no-cost")
    assert "cost_changes" not in json.loads(out)
