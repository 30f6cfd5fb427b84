"""Per-node data (issue 22, items 1-2) through a real TensorBoard app (``TbApp``) and a real
``tensorboard`` process under both data providers: written by the PyTorch hooks helper during a
few real training steps (one block made to produce NaN at a known step) and by the plain writer
for a TF/Keras model; read back by ``/node_data_tags`` and ``/node_data``; Model Explorer's JSON.
"""

from __future__ import annotations

import json
import math
import shutil
import time
import urllib.parse

import pytest

from tb_graph_plugin.summary import node_data
from tests import logwriters as lw
from tests.tb_app import OURS, TbApp
from tests.tensorboard_process import TensorBoardProcess

ALL_STEPS = {"graph_explorer_node_data": 0}  # the multiplexer keeps every step (TensorBoard: --samples_per_plugin)
RUN = "torch_node_data"


@pytest.fixture(scope="module")
def torch_logs(tmp_path_factory):
    logdir = tmp_path_factory.mktemp("nd_torch")
    lw.write_torch_node_data(logdir)
    return logdir


@pytest.fixture(scope="module")
def torch_app(torch_logs):
    app = TbApp(torch_logs, workers=1, samples_per_plugin=ALL_STEPS)
    yield app
    app.ours.pool.close()


def _nd(app, **params):
    params.setdefault("run", RUN)
    params.setdefault("wait", "20")
    return app.json(OURS + "/node_data", **params)


def test_hooks_tags_are_listed_with_their_last_step(torch_app):
    tags = [t for t in torch_app.json(OURS + "/node_data_tags")["tags"] if t["source"] != "built-in"]
    assert {(t["run"], t["tag"], t["max_step"]) for t in tags} == {
        (RUN, s, 5) for s in ("activation_mean_abs", "activation_max_abs", "nonfinite_count", "module_ms")}


def test_the_nan_block_is_found_at_its_step_and_only_there(torch_app):
    for step in range(6):
        a = _nd(torch_app, data_tag="nonfinite_count", data_step=str(step), expanded='["TinyNet"]', top_k="3")
        assert a["step"] == step and a["steps"] == list(range(6))
        assert a["unmatched"] == 0 and a["matched"] == 22  # every module call names a group of the graph
        first = a["top"][0]
        if step == lw.NAN_STEP:
            # the block that multiplied by NaN is the first module whose output holds non-finite
            # values (data order breaks the tie with the layers after it)
            assert first["name"] == lw.NAN_MODULE and first["value"] == 4 * 8 * 16 * 16  # its whole output
            assert a["values"]["TinyNet/Sequential[layer1]"] == 0
        else:
            assert first["value"] == 0, (step, first)
    nan = _nd(torch_app, data_tag="activation_max_abs", data_step=str(lw.NAN_STEP), expanded='["TinyNet"]',
              top_k="1", node=lw.NAN_MODULE)
    assert nan["top"] == [{"name": lw.NAN_MODULE, "value": None, "nonfinite": "nan"}]
    # collapsed, layer2 shows the NaN inside it; layer1, upstream, stays finite
    assert nan["nonfinite"]["TinyNet/Sequential[layer2]"] == "nan"
    assert math.isfinite(nan["values"]["TinyNet/Sequential[layer1]"])
    assert [p["step"] for p in nan["history"]] == list(range(6))
    assert [p.get("nonfinite") for p in nan["history"]] == [None] * lw.NAN_STEP + ["nan"] + [None] * (5 - lw.NAN_STEP)


def test_a_module_group_shows_its_own_value_not_its_childrens(torch_app):
    kids = ["TinyNet/Sequential[layer1]/Block[0]", "TinyNet/Sequential[layer1]/Block[1]"]
    a = _nd(torch_app, data_tag="module_ms", data_step="0", expanded='["TinyNet","TinyNet/Sequential[layer1]"]',
            agg="sum")
    # layer1's hook timed the call around its two blocks: its own value, at least their sum
    assert a["values"]["TinyNet/Sequential[layer1]"] >= a["values"][kids[0]] + a["values"][kids[1]]
    # the input group holds no module call: no value, not sent
    assert "input" not in a["values"] and "input" not in a["nonfinite"]
    assert a["range"] == [min(a["values"].values()), max(a["values"].values())]


@pytest.fixture(scope="module")
def keras_logs(tmp_path_factory):
    """A Keras model traced with tf.summary.trace (TF writer), trained 3 steps; each op of each
    Dense layer gets its layer's mean |kernel| that step, written by the plain writer."""
    import numpy as np

    logdir = tmp_path_factory.mktemp("nd_keras")
    lw.write_tf2_keras_trace(logdir)
    run = logdir / "tf2_keras_trace"
    app = TbApp(logdir, workers=1)
    try:
        scene = app.json(OURS + "/search", run="tf2_keras_trace", tag="predict", q=".", names_only="on", wait="30")
    finally:
        app.ours.pool.close()
    ops = [h["name"] for h in scene["hits"] if h["kind"] == "op"]
    rng = np.random.default_rng(0)
    steps = {}
    for step in range(3):
        values = {name: float(rng.random()) for name in ops}
        values["no/such/op"] = 1.0
        values["Net/Linear[nope]"] = 2.0
        node_data(str(run), "op_value", values, step)
        steps[step] = values
    return logdir, ops, steps


def test_plain_writer_values_on_a_keras_graph_aggregate_to_groups(keras_logs):
    logdir, ops, steps = keras_logs
    app = TbApp(logdir, workers=1, samples_per_plugin=ALL_STEPS)
    try:
        first = app.json(OURS + "/scene", run="tf2_keras_trace", tag="predict", wait="30")
        groups = [n["name"] for n in first["nodes"] if n["kind"] in ("meta", "series") and n["parent"] is None]
        assert groups
        for agg in ("max", "mean", "sum"):
            a = app.json(OURS + "/node_data", run="tf2_keras_trace", tag="predict", data_tag="op_value",
                         data_step="2", agg=agg, expanded="[]", wait="20")
            assert a["unmatched"] == 2 and sorted(a["unmatched_names"]) == ["Net/Linear[nope]", "no/such/op"]
            assert a["matched"] == len(steps[2]) - 2
            for g in groups:
                inside = [v for n, v in steps[2].items() if n.startswith(g + "/")]
                if not inside:
                    continue
                want = {"max": max(inside), "sum": math.fsum(inside), "mean": math.fsum(inside) / len(inside)}[agg]
                assert a["values"][g] == pytest.approx(want), (agg, g)
        a = app.json(OURS + "/node_data", run="tf2_keras_trace", tag="predict", data_tag="op_value", node=ops[0],
                     wait="20")
        assert [p["value"] for p in a["history"]] == [steps[s][ops[0]] for s in range(3)]
    finally:
        app.ours.pool.close()


def test_model_explorer_json_uploads_and_colours(torch_app):
    body = {"results": {lw.NAN_MODULE: {"value": 7}, "TinyNet/Conv2d[stem]": {"value": 2.5, "bgColor": "#f00"},
                        "nowhere": {"value": 1}},
            "thresholds": [{"value": 3, "bgColor": "#00ff00"}, {"value": 10, "bgColor": "#ff0000"}]}
    r = torch_app.post(OURS + "/upload_node_data", json.dumps(body).encode(), filename="latency.json")
    assert r.status_code == 200, r.get_data(as_text=True)
    [tag] = json.loads(r.get_data())["tags"]
    assert tag["run"] == "__upload__" and tag["source"] == "upload latency.json"
    assert tag in torch_app.json(OURS + "/node_data_tags")["tags"]
    a = _nd(torch_app, data_run="__upload__", data_tag=tag["tag"], expanded='["TinyNet"]')
    assert a["values"]["TinyNet/Conv2d[stem]"] == 2.5 and a["values"]["TinyNet/Sequential[layer2]"] == 7
    assert a["unmatched_names"] == ["nowhere"]
    assert a["thresholds"] == [{"at": 3, "color": "#00ff00"}, {"at": 10, "color": "#ff0000"}]
    # a ModelNodeData (graph id -> GraphNodeData): one tag per graph
    two = {"g1": {"results": {"a": {"value": 1}}}, "g2": {"results": {"b": {"value": 2}}}}
    r = torch_app.post(OURS + "/upload_node_data", json.dumps(two).encode(), filename="two.json")
    assert [t["source"] for t in json.loads(r.get_data())["tags"]] == ["upload two.json:g1", "upload two.json:g2"]


@pytest.mark.parametrize("body, message", [
    (b"not json", "is not JSON"),
    (b"[1, 2]", "not a JSON object"),
    (b'{"g": {"nodes": []}}', "has no `results` object"),
    (b'{"results": {"a": {"value": "high"}}}', "is not a number"),
])
def test_bad_node_data_uploads_say_why(torch_app, body, message):
    r = torch_app.post(OURS + "/upload_node_data", body, filename="bad.json")
    assert r.status_code == 400 and message in json.loads(r.get_data())["error"]


@pytest.mark.parametrize("params, code, message", [
    ({"data_tag": "nope"}, 404, "no node data 'nope'"),
    ({"data_tag": "module_ms", "data_step": "99"}, 404, "has no step 99"),
    ({"data_tag": "module_ms", "agg": "median"}, 400, "must be max, mean or sum"),
    ({"data_tag": "module_ms", "top_k": "1000"}, 400, "top_k"),
    ({"data_tag": "module_ms", "expanded": '["nope"]'}, 400, "no such group"),
    ({"data_tag": "module_ms", "node": "nope"}, 404, "no node 'nope'"),
])
def test_bad_node_data_requests_are_4xx_with_their_cause(torch_app, params, code, message):
    r = torch_app.get(OURS + "/node_data", run=RUN, wait="20", **params)
    assert r.status_code == code and message in json.loads(r.get_data())["error"], r.get_data(as_text=True)


def test_a_step_that_is_not_node_data_is_400(tmp_path):
    """A summary of our plugin whose payload is not node data (another writer's bug)."""
    from tb_graph_plugin.summary import event_writer, node_data_event

    event = node_data_event("broken", {"a": 1.0}, 0)
    event.summary.value[0].tensor.string_val[0] = b'{"names": ["a"], "values": []}'
    event_writer.write_events(str(tmp_path / "run"), [event])
    from google.protobuf import text_format
    from tensorboard.compat.proto import graph_pb2

    from tb_graph_plugin.summary.event_writer import write_graph

    write_graph(str(tmp_path / "run"), text_format.Parse('node { name: "a" op: "Const" }', graph_pb2.GraphDef()))
    app = TbApp(tmp_path, workers=1)
    try:
        r = app.get(OURS + "/node_data", run="run", data_tag="broken", wait="20")
        assert r.status_code == 400 and "1 names but 0 values" in json.loads(r.get_data())["error"]
    finally:
        app.ours.pool.close()


def test_names_match_a_graph_written_by_torchs_own_add_graph(tmp_path):
    """The hooks' names are tb_graph_plugin.torch's; torch's JIT add_graph names the same modules
    without containers or call numbers: every name still finds its group (module keys)."""
    lw._tensorboard_without_tf()
    import torch
    from torch.utils.tensorboard import SummaryWriter

    from tb_graph_plugin.torch.node_data import NodeDataHooks

    torch.manual_seed(0)
    model = lw._torch_resnet_like().eval()
    x = torch.rand(2, 3, 32, 32)
    with SummaryWriter(str(tmp_path / "jit")) as writer:
        writer.add_graph(model, x)
    with NodeDataHooks(model) as hooks:
        model(x)
        written = hooks.log(str(tmp_path / "jit"), 0)
    assert "ResNetLike/Sequential[layer1]/BasicBlock[0]/ReLU[relu@1]" in written["module_ms"]  # relu called twice
    app = TbApp(tmp_path, workers=1)
    try:
        a = app.json(OURS + "/node_data", run="jit", data_tag="activation_max_abs", expanded='["ResNetLike"]',
                     wait="20")
        assert a["unmatched"] == 0 and a["matched"] == len(written["activation_max_abs"])
        assert a["values"]["ResNetLike/Sequential[layer2]"] == written["activation_max_abs"]["ResNetLike/Sequential[layer2]"]
    finally:
        app.ours.pool.close()


def _get_json(tb, path, **params):
    return tb.get_json(f"{path}?{urllib.parse.urlencode(params)}")


@pytest.mark.slow
@pytest.mark.parametrize("load_fast", [False, True], ids=["python_multiplexer", "rust_data_server"])
def test_a_real_tensorboard_serves_node_data(torch_logs, load_fast):
    with TensorBoardProcess(torch_logs, load_fast=load_fast,
                            extra_args=["--samples_per_plugin=graph_explorer_node_data=1000"]) as tb:
        deadline = time.monotonic() + 60
        while True:
            tags = [t for t in _get_json(tb, OURS + "/node_data_tags")["tags"] if t["source"] != "built-in"]
            if len(tags) == 4 or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert {t["tag"] for t in tags} == {"activation_mean_abs", "activation_max_abs", "nonfinite_count", "module_ms"}
        a = _get_json(tb, OURS + "/node_data", run=RUN, data_tag="activation_max_abs", data_step=lw.NAN_STEP,
                      expanded='["TinyNet"]', wait=10)
        assert a["steps"] == list(range(6))
        assert a["top"][0] == {"name": lw.NAN_MODULE, "value": None, "nonfinite": "nan"}
        assert a["unmatched"] == 0


def test_the_cli_writes_model_explorer_json_as_node_data(tmp_path, torch_logs):
    from tb_graph_plugin import cli

    path = tmp_path / "me.json"
    path.write_text(json.dumps({"results": {"TinyNet/Conv2d[stem]": {"value": 4}, "x": {"value": 1}},
                                "gradient": [{"stop": 0, "bgColor": "#fff"}, {"stop": 1, "bgColor": "#f00"}]}))
    logdir = tmp_path / "logs"
    shutil.copytree(torch_logs / RUN, logdir / RUN)
    assert cli.main(["node-data", str(path), str(logdir / RUN), "--tag", "latency", "--step", "7"]) == 0
    app = TbApp(logdir, workers=1)
    try:
        a = app.json(OURS + "/node_data", run=RUN, data_tag="latency", expanded='["TinyNet"]', wait="20")
        assert a["step"] == 7 and a["values"]["TinyNet/Conv2d[stem]"] == 4 and a["unmatched_names"] == ["x"]
        assert a["gradient"] == [{"at": 0, "color": "#fff"}, {"at": 1, "color": "#f00"}]
    finally:
        app.ours.pool.close()
