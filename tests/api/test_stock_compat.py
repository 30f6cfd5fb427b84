"""Our stock-compatible routes against the stock Graphs plugin, in one TensorBoardWSGI app.

Must show (stock compatibility): for every kind of real log, our ``/info`` equals the stock ``/info``, and our
``/graph`` (and ``/run_metadata``) parse to the same protos as the stock plugin's.
"""

from __future__ import annotations

import json

import pytest
from google.protobuf import text_format
from tensorboard.compat.proto import config_pb2, graph_pb2

from tests.tb_app import OURS, STOCK, TbApp

KINDS = [
    "tf2_keras_trace",
    "tf2_multi_function_trace",
    "tf2_trace_profile",
    "tf1_graph",
    "torch_cnn",
    "torch_transformer",
    "keras_callback",
]


@pytest.fixture(scope="module", params=KINDS)
def app(request, real_logs):
    return TbApp(real_logs.get(request.param))


def _graph(response) -> graph_pb2.GraphDef:
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.mimetype == "text/x-protobuf"
    return text_format.Parse(response.get_data(as_text=True), graph_pb2.GraphDef())


def _graph_requests(info):
    """Every /graph request the stock frontend can make for this /info."""
    for run, run_info in info.items():
        if run_info["run_graph"]:
            yield {"run": run}
        for tag, tag_info in run_info["tags"].items():
            if tag_info["op_graph"]:
                yield {"run": run, "tag": tag}
            if tag_info["conceptual_graph"]:
                yield {"run": run, "tag": tag, "conceptual": "true"}


def test_info_equals_stock(app):
    ours = app.json(OURS + "/info")
    assert ours == app.json(STOCK + "/info")
    assert ours, "the real log holds graph data"


def test_graph_equals_stock(app):
    requests = list(_graph_requests(app.json(STOCK + "/info")))
    assert requests
    for params in requests:
        ours = _graph(app.get(OURS + "/graph", **params))
        stock = _graph(app.get(STOCK + "/graph", **params))
        assert ours == stock, params
        assert len(ours.node) > 0, params


def test_graph_with_attr_limit_equals_stock(app):
    for params in _graph_requests(app.json(STOCK + "/info")):
        params = dict(params, limit_attr_size="64", large_attrs_key="_too_large_attrs")
        assert _graph(app.get(OURS + "/graph", **params)) == _graph(app.get(STOCK + "/graph", **params))


def test_run_metadata_equals_stock(app):
    info = app.json(STOCK + "/info")
    profiles = [(run, tag) for run, r in info.items() for tag, t in r["tags"].items() if t["profile"]]
    for run, tag in profiles:
        ours = app.get(OURS + "/run_metadata", run=run, tag=tag)
        stock = app.get(STOCK + "/run_metadata", run=run, tag=tag)
        assert ours.status_code == 200 and ours.mimetype == "text/x-protobuf"
        parse = lambda r: text_format.Parse(r.get_data(as_text=True), config_pb2.RunMetadata())  # noqa: E731
        assert parse(ours) == parse(stock), (run, tag)


def test_tf1_profile_has_real_step_stats(real_logs):
    app = TbApp(real_logs.get("tf1_graph"))
    body = app.get(OURS + "/run_metadata", run="tf1_graph", tag="step1").get_data(as_text=True)
    rm = text_format.Parse(body, config_pb2.RunMetadata())
    assert sum(len(d.node_stats) for d in rm.step_stats.dev_stats) > 0


def test_listing_carries_stock_flags(app):
    info = app.json(OURS + "/info")
    listing = app.json(OURS + "/graphs")
    assert listing["version"] == 1
    assert sorted(r["run"] for r in listing["runs"]) == sorted(info)
    for run in listing["runs"]:
        stock_run = info[run["run"]]
        for tag in run["tags"]:
            assert tag["steps"], (run["run"], tag["tag"])
            if tag["tag"] == "__run_graph__":
                assert tag["run_graph"] and stock_run["run_graph"]
                continue
            flags = {k: tag[k] for k in ("op_graph", "conceptual_graph", "profile")}
            assert flags == {k: stock_run["tags"][tag["tag"]][k] for k in flags}
    json.dumps(listing)
