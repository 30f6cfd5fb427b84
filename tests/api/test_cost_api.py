"""``/node`` with ``cost=on`` and the built-in cost colour modes of ``/node_data`` (``data_run=__cost__``)
through a real TensorBoard app, on a Hugging Face BERT captured with ``tb_graph_plugin.torch.add_graph``."""

from __future__ import annotations

import json
import shutil

import pytest

from tb_graph_plugin import metadata
from tests.tb_app import OURS, TbApp, json_error

RUN = "bert"


@pytest.fixture(scope="module")
def app(cost_models, tmp_path_factory):
    logdir = tmp_path_factory.mktemp("cost_logs")
    shutil.copytree(cost_models / RUN, logdir / RUN)
    a = TbApp(logdir, workers=1)
    yield a
    a.ours.pool.close()


@pytest.fixture(scope="module")
def truth(cost_models):
    return json.loads((cost_models / "truth.json").read_text())[RUN]


def test_node_answers_cost_only_when_asked(app, truth):
    plain = app.json(OURS + "/node", run=RUN, name="BertModel", wait="30")
    assert "cost" not in plain
    got = app.json(OURS + "/node", run=RUN, name="BertModel", cost="on", wait="30")
    cost = got["cost"]
    assert cost["params"] == truth["params"] and cost["param_bytes"] == 4 * truth["params"]
    assert abs(cost["flops"] - truth["flops"]) <= 0.02 * truth["flops"]
    assert cost["unknown_ops"] == 0 and cost["unknown_op_types"] == {}
    layer = app.json(OURS + "/node", run=RUN, name="BertModel/BertEncoder[encoder]/layer/BertLayer[0]", cost="on",
                     wait="30")["cost"]
    assert layer["params"] == truth["modules"]["encoder.layer.0"]


def test_an_op_costs_its_own_flops_and_its_weights(app):
    name = "BertModel/BertEncoder[encoder]/layer/BertLayer[0]/BertIntermediate[intermediate]/Linear[dense]/linear"
    cost = app.json(OURS + "/node", run=RUN, name=name, cost="on", wait="30")["cost"]
    assert cost["params"] == 128 * 512 + 512  # weight and bias, drawn beside it
    assert cost["flops"] == 2 * 16 * 128 * 512  # [1, 16, 128] @ [128, 512]
    assert cost["output_bytes"] == 4 * 16 * 512


def test_bad_cost_switch_is_400(app):
    r = app.get(OURS + "/node", run=RUN, name="BertModel", cost="yes")
    assert "`cost` must be on or off" in json_error(r, 400)


def test_cost_colour_modes_are_listed_and_sum_into_groups(app, truth):
    tags = app.json(OURS + "/node_data_tags")["tags"]
    built_in = [(t["run"], t["tag"]) for t in tags if t["source"] == "built-in"]
    assert built_in == [(metadata.COST_RUN, t) for t in ("params", "flops", "output_bytes")]
    a = app.json(OURS + "/node_data", run=RUN, data_run=metadata.COST_RUN, data_tag="params",
                 expanded='["BertModel"]', node="BertModel/BertEncoder[encoder]", top_k="3", wait="30")
    assert a["agg"] == "sum" and a["steps"] == [0]
    shown = {k: v for k, v in a["values"].items() if k.startswith("BertModel/")}
    assert sum(shown.values()) == truth["params"]  # the children of the model hold every parameter
    assert a["values"]["BertModel/BertEncoder[encoder]"] == truth["modules"]["encoder"]
    assert a["history"] == [{"step": 0, "value": truth["modules"]["encoder"]}]
    assert len(a["top"]) == 3 and a["top"][0]["value"] >= a["top"][1]["value"]
    flops = app.json(OURS + "/node_data", run=RUN, data_run=metadata.COST_RUN, data_tag="flops", wait="30")
    assert flops["range"][1] == flops["values"]["BertModel"]


def test_unknown_cost_colour_mode_is_404(app):
    r = app.get(OURS + "/node_data", run=RUN, data_run=metadata.COST_RUN, data_tag="latency")
    assert "no cost 'latency'" in json_error(r, 404)
