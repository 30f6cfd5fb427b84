"""``/diff`` through a real TensorBoard app over logs written by TF.

Two graphs of the same Keras MLP traced by TF (``keras_diff_pair``: ``fc2`` added, ``fc1``'s
activation relu -> tanh) and the two ``tf1_graph`` run-graph steps (0: the training graph, 5:
an unrelated eval graph), with the exact added / removed / changed sets; the errors of the
route; and ``tb-graph diff`` on the same logs with its exit codes.
"""

from __future__ import annotations

import json
import re

import pytest
from tensorboard.compat.proto import graph_pb2

from tb_graph_plugin.cli import main
from tests import logwriters as lw
from tests.tb_app import OURS, TbApp

PAIR_ADDED = [
    "mlp_1/fc2_1",
    "mlp_1/fc2_1/BiasAdd",
    "mlp_1/fc2_1/BiasAdd/ReadVariableOp",
    "mlp_1/fc2_1/Cast/ReadVariableOp",
    "mlp_1/fc2_1/MatMul",
    "mlp_1/fc2_1/Relu",
    "mlp_1_fc2_1_biasadd_readvariableop_resource",
    "mlp_1_fc2_1_cast_readvariableop_resource",
]
PAIR_CHANGED = {
    "NoOp": ["inputs"],  # the function's control outputs: one more layer's reads
    "mlp_1": ["contents"],
    "mlp_1/fc1_1": ["contents"],
    "mlp_1/fc1_1/Tanh": ["op", "name"],  # was .../Relu
    "mlp_1/fc3_1": ["contents"],
    "mlp_1/fc3_1/MatMul": ["inputs"],  # now reads fc2
    "mlp_1/logits_1": ["contents"],
    # the function's resource arguments after fc2's: their `index` attr moved by 2
    "mlp_1_fc3_1_biasadd_readvariableop_resource": ["attrs"],
    "mlp_1_fc3_1_cast_readvariableop_resource": ["attrs"],
    "mlp_1_logits_1_biasadd_readvariableop_resource": ["attrs"],
    "mlp_1_logits_1_cast_readvariableop_resource": ["attrs"],
}
TF1_STEP5 = [
    "eval", "eval/MatMul", "eval/MatMul/ReadVariableOp", "eval/features", "eval/ones",
    "eval/probabilities", "eval/weights", "eval/weights/(weights)", "eval/weights/Assign",
    "eval/weights/IsInitialized", "eval/weights/IsInitialized/VarIsInitializedOp",
    "eval/weights/Read", "eval/weights/Read/ReadVariableOp",
]


def _diff(app, **params):
    return app.json(f"{OURS}/diff", wait="10", **params)


@pytest.fixture(scope="module")
def pair(real_logs):
    app = TbApp(real_logs.get("keras_diff_pair"))
    yield app
    app.ours.pool.close()


@pytest.fixture(scope="module")
def tf1(real_logs):
    app = TbApp(real_logs.get("tf1_graph"))
    yield app
    app.ours.pool.close()


def test_keras_layer_added_and_activation_changed(pair):
    d = _diff(pair, run="changed", tag="forward", base_run="base", base_tag="forward")
    assert d["same"] is False and d["version"] == 1
    assert d["added"] == PAIR_ADDED
    assert d["removed"] == []
    assert d["changed"] == sorted(PAIR_CHANGED)
    entries = {e["name"]: e for e in d["entries"]}
    assert {n: entries[n]["fields"] for n in PAIR_CHANGED} == PAIR_CHANGED
    assert entries["mlp_1/fc1_1/Tanh"]["old_name"] == "mlp_1/fc1_1/Relu"
    assert entries["mlp_1/fc2_1"]["kind"] == "meta" and entries["mlp_1/fc2_1/Relu"]["kind"] == "op"
    assert d["graph"] == {"run": "changed", "tag": "forward", "kind": "op", "step": None}
    assert d["base"]["run"] == "base"
    # the other way round: what was added is removed, anchored where it would be drawn
    back = _diff(pair, run="base", tag="forward", base_run="changed", base_tag="forward")
    assert back["removed"] == PAIR_ADDED and back["added"] == []
    anchors = {e["name"]: e["anchor"] for e in back["entries"] if e["status"] == "removed"}
    assert anchors["mlp_1/fc2_1"] == "mlp_1" and anchors["mlp_1/fc2_1/MatMul"] == "mlp_1"


def test_same_graph_is_same(pair):
    d = _diff(pair, run="base", tag="forward", base_run="base", base_tag="forward")
    assert d["same"] is True and d["entries"] == [] and d["counts"]["ops"]["changed"] == 0


def _unrenamed(name):
    """Undo the SlimGraph's namespace-clash rename ``a/(a)`` -> ``a``."""
    return re.sub(r"([^/]+)/\(\1\)$", r"\1", name)


def test_tf1_steps_0_and_5(tf1, real_logs):
    d = _diff(tf1, run="tf1_graph", step="5", base_run="tf1_graph", base_step="0")
    assert d["added"] == TF1_STEP5 and d["changed"] == []
    [(step0, blob)] = [sb for sb in lw.read_blobs(real_logs.get("tf1_graph"), "tf1_graph", lw.RUN_GRAPH,
                                                   "__run_graph__") if sb[0] == 0]
    names = {n.name for n in graph_pb2.GraphDef.FromString(blob).node}
    scopes = {name.rsplit("/", k)[0] for name in names for k in range(1, name.count("/") + 1)}
    removed = {e["name"]: e["kind"] for e in d["entries"] if e["status"] == "removed"}
    assert {_unrenamed(n) for n, kind in removed.items() if kind != "meta"} == names
    groups = {n for n, kind in removed.items() if kind == "meta"}
    # every group of step 0 is a scope of its names (embeddings' scopes make no group)
    assert {"input", "layer1", "layer2", "loss", "train", "reset", "train/gradients/layer1"} <= groups <= scopes
    assert d["counts"]["ops"] == {"same": 0, "changed": 0, "added": 9, "removed": len(names)}
    assert d["counts"]["groups"] == {"same": 0, "changed": 0, "added": 4, "removed": len(groups)}


def test_upload_against_a_run(tf1, real_logs):
    """An uploaded GraphDef (step 0 of the run graph, as a .pb) is the same as that run step, and
    differs from step 5; either side may be the upload."""
    [(_, blob)] = [sb for sb in lw.read_blobs(real_logs.get("tf1_graph"), "tf1_graph", lw.RUN_GRAPH,
                                              "__run_graph__") if sb[0] == 0]
    answer = json.loads(tf1.post(f"{OURS}/upload", blob, filename="step0.pb").get_data())
    up = answer["graph"]
    same = _diff(tf1, run=up["run"], tag=up["tag"], base_run="tf1_graph", base_step="0")
    assert same["same"] is True and same["counts"]["ops"]["same"] == answer["ops"] > 100
    other = _diff(tf1, run="tf1_graph", step="5", base_run=up["run"], base_tag=up["tag"])
    assert other["added"] == TF1_STEP5 and other["changed"] == []


def test_diff_errors(tf1):
    r = tf1.get(f"{OURS}/diff", run="tf1_graph", base_run="no_such_run", wait="10")
    assert r.status_code == 404 and "no_such_run" in json.loads(r.get_data())["error"]
    r = tf1.get(f"{OURS}/diff", run="tf1_graph")
    assert r.status_code == 400 and "base_run" in json.loads(r.get_data())["error"]
    r = tf1.get(f"{OURS}/diff", run="tf1_graph", base_run="tf1_graph", base_kind="nope")
    assert r.status_code == 400 and "base_kind" in json.loads(r.get_data())["error"]


def test_cli_diff_exit_codes_and_json(real_logs, capsys):
    logdir = str(real_logs.get("keras_diff_pair"))
    assert main(["diff", logdir, logdir, "--a-run", "base", "--b-run", "changed", "--json", "--compact"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["added"] == PAIR_ADDED and out["removed"] == [] and out["changed"] == sorted(PAIR_CHANGED)
    assert main(["diff", logdir, logdir, "--run", "base"]) == 0
    assert capsys.readouterr().out.startswith("ops: ")
    assert main(["diff", logdir, logdir, "--a-run", "changed", "--b-run", "base"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert "- meta mlp_1/fc2_1" in lines and "~ op mlp_1/fc1_1/Relu (op, name) was mlp_1/fc1_1/Tanh" in lines
    assert main(["diff", logdir, logdir + "/does_not_exist", "--run", "base"]) == 2
    assert "error" in capsys.readouterr().err
    tf1_dir = str(real_logs.get("tf1_graph"))
    assert main(["diff", tf1_dir, tf1_dir, "--run", "tf1_graph", "--a-step", "0", "--b-step", "5", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["added"] == TF1_STEP5
    assert main(["diff", tf1_dir, tf1_dir, "--run", "tf1_graph", "--a-step", "7"]) == 2
