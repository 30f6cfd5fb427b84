"""Each real-log kind lists exactly the graph plugin names and tags that TensorBoard's
source ([TB-SRC] in docs/references.md) and the observed writers say the real writer produces,
read back through ``MultiplexerDataProvider``."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from tests import logwriters as lw

SLOW_KINDS = {"keras_resnet50_trace"}


def _kind_params():
    for kind in lw.KINDS:
        marks = [pytest.mark.slow] if kind in SLOW_KINDS else []
        yield pytest.param(kind, marks=marks, id=kind)


def _run_metadata(blob: bytes):
    from tensorboard.compat.proto import config_pb2

    return config_pb2.RunMetadata.FromString(blob)


def _graph_def(blob: bytes):
    from tensorboard.compat.proto import graph_pb2

    return graph_pb2.GraphDef.FromString(blob)


def _pre_optimization_nodes(meta):
    return [node for fg in meta.function_graphs for node in fg.pre_optimization_graph.node]


@pytest.mark.parametrize("kind", list(_kind_params()))
def test_kind_lists_expected_graph_plugins_and_tags(real_logs, kind):
    assert lw.list_graph_data(real_logs.get(kind)) == lw.EXPECTED[kind]


def test_tf2_keras_trace_has_training_step_and_predict(real_logs):
    logdir = real_logs.get("tf2_keras_trace")
    [(train_step_no, train_blob)] = lw.read_blobs(logdir, "tf2_keras_trace", lw.OP_GRAPH, "train_step")
    [(predict_step_no, predict_blob)] = lw.read_blobs(logdir, "tf2_keras_trace", lw.OP_GRAPH, "predict")
    assert (train_step_no, predict_step_no) == (0, 1)
    ops = Counter(n.op for n in _pre_optimization_nodes(_run_metadata(train_blob)))
    # forward conv/dense/batchnorm, backward pass and optimizer variable updates are all in the graph
    for op in ("Conv2D", "MatMul", "Conv2DBackpropFilter", "ReluGrad", "AssignSubVariableOp", "_Arg"):
        assert ops[op] > 0, op
    predict_ops = {n.op for n in _pre_optimization_nodes(_run_metadata(predict_blob))}
    assert "Softmax" in predict_ops and "Conv2DBackpropFilter" not in predict_ops


def test_tf2_multi_function_trace_holds_several_function_graphs(real_logs):
    counts = lw.count_trace_ops(real_logs.get("tf2_multi_function_trace"), "tf2_multi_function_trace", "multi_function")
    assert counts["functions"] >= 2
    [(_, blob)] = lw.read_blobs(
        real_logs.get("tf2_multi_function_trace"), "tf2_multi_function_trace", lw.OP_GRAPH, "multi_function"
    )
    names = {n.name for n in _pre_optimization_nodes(_run_metadata(blob))}
    assert any(name.startswith("encoder/") for name in names)
    assert any(name.startswith("decoder/") for name in names)


def test_tf2_trace_profile_has_graph_but_no_step_stats(real_logs):
    [(_, blob)] = lw.read_blobs(real_logs.get("tf2_trace_profile"), "tf2_trace_profile", lw.PROFILE, "train_step")
    meta = _run_metadata(blob)
    assert len(_pre_optimization_nodes(meta)) > 100
    assert len(meta.step_stats.dev_stats) == 0  # observed with TF 2.21: the profiler's step stats are empty


def test_tf1_graph_run_graph_has_two_steps_and_real_step_stats(real_logs):
    logdir = real_logs.get("tf1_graph")
    graphs = lw.read_blobs(logdir, "tf1_graph", lw.RUN_GRAPH, "__run_graph__")
    assert [step for step, _ in graphs] == [0, 5]
    first, second = (_graph_def(blob) for _, blob in graphs)
    names = {n.name for n in first.node}
    assert {"input/x", "layer1/weights", "loss/mse"} <= names
    assert any(n.op in ("Assign", "AssignVariableOp") for n in first.node)
    assert {n.name for n in second.node} >= {"eval/features", "eval/probabilities"}
    [(_, tagged)] = lw.read_blobs(logdir, "tf1_graph", lw.TAGGED, "step1")
    node_stats = [s for dev in _run_metadata(tagged).step_stats.dev_stats for s in dev.node_stats]
    assert len(node_stats) > 10
    assert all(s.all_end_rel_micros >= 0 for s in node_stats)


def test_torch_cnn_run_graph_has_module_scoped_names(real_logs):
    logdir = real_logs.get("torch_cnn")
    [(_, blob)] = lw.read_blobs(logdir, "torch_cnn", lw.RUN_GRAPH, "__run_graph__")
    names = [n.name for n in _graph_def(blob).node]
    assert any(n.startswith("ResNetLike/Sequential[layer1]/BasicBlock[0]/Conv2d[conv1]/") for n in names)
    assert any(n.startswith("ResNetLike/Sequential[layer2]/BasicBlock[1]/") for n in names)
    [(_, tagged)] = lw.read_blobs(logdir, "torch_cnn", lw.TAGGED, "step1")
    assert len(tagged) < 100  # PyTorch writes an (almost) empty step1 run metadata


def test_torch_transformer_has_six_encoder_layers(real_logs):
    [(_, blob)] = lw.read_blobs(real_logs.get("torch_transformer"), "torch_transformer", lw.RUN_GRAPH, "__run_graph__")
    names = [n.name for n in _graph_def(blob).node]
    prefix = "TransformerEncoder/ModuleList[layers]/TransformerEncoderLayer[{}]/"
    assert all(any(n.startswith(prefix.format(i)) for n in names) for i in range(6))
    assert not any(n.startswith(prefix.format(6)) for n in names)


def test_keras_callback_writes_conceptual_graph_json(real_logs):
    [(_, blob)] = lw.read_blobs(real_logs.get("keras_callback"), "train", lw.KERAS, "keras")
    model = json.loads(blob)
    assert model["class_name"] == "Functional"
    assert [layer["name"] for layer in model["config"]["layers"]][:3] == ["image", "conv1", "bn1"]


@pytest.mark.slow
def test_keras_resnet50_trace_matches_observed_shape(real_logs):
    logdir = real_logs.get("keras_resnet50_trace")
    counts = lw.count_trace_ops(logdir, "keras_resnet50_trace", "forward")
    assert counts["pre_optimization_ops"] == 1832
    [(_, blob)] = lw.read_blobs(logdir, "keras_resnet50_trace", lw.OP_GRAPH, "forward")
    nodes = _pre_optimization_nodes(_run_metadata(blob))
    assert "resnet50_1/conv2_block1_2_bn_1/batchnorm/add" in {n.name for n in nodes}
    assert sum(n.op == "_Arg" for n in nodes) == 321


def test_real_logs_cache_is_reused_and_rejects_unknown_kind(real_logs):
    first = real_logs.get("tf2_multi_function_trace")
    mtimes = {p: p.stat().st_mtime_ns for p in first.rglob("*")}
    assert real_logs["tf2_multi_function_trace"] == first
    assert {p: p.stat().st_mtime_ns for p in first.rglob("*")} == mtimes
    with pytest.raises(KeyError):
        real_logs.get("no_such_kind")


def test_cli_rejects_unknown_kind(tmp_path):
    with pytest.raises(SystemExit) as exc:
        lw.main(["no_such_kind", str(tmp_path)])
    assert exc.value.code == 2


def test_committed_demo_logs_list_expected_graph_data():
    from demo_logs.make_demo_logs import DEMO_DIR, DEMO_KINDS, outdir_for

    expected = {}
    for kind in DEMO_KINDS:
        prefix = outdir_for(kind).relative_to(DEMO_DIR).as_posix()
        for run, plugins in lw.EXPECTED[kind].items():
            expected[run if prefix == "." else f"{prefix}/{run}"] = plugins
    assert lw.list_graph_data(DEMO_DIR) == expected


def _run_cli(module: str, *args: str) -> str:
    import os
    import subprocess
    import sys

    from tests.conftest import REPO_ROOT

    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    proc = subprocess.run(
        [sys.executable, "-m", module, *args], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_bench_corpus_torch_transformer_layers_flag(tmp_path):
    out = _run_cli("bench.corpus", "torch_transformer", str(tmp_path), "--layers", "2")
    assert (tmp_path / "torch_transformer_L2").is_dir()
    assert "run_graph_ops=" in out
    assert lw.list_graph_data(tmp_path) == {
        "torch_transformer_L2": {lw.RUN_GRAPH: {"__run_graph__"}, lw.TAGGED: {"step1"}}
    }


@pytest.mark.slow
def test_bench_corpus_keras_transformer_op_count_per_layer(tmp_path):
    from bench import corpus

    # Rewriting into the same run dir replaces the old event file instead of appending a second one.
    _run_cli("bench.corpus", "keras_transformer_train_step_trace", str(tmp_path), "--layers", "1")
    out = _run_cli("bench.corpus", "keras_transformer_train_step_trace", str(tmp_path), "--layers", "1")
    run = tmp_path / "keras_transformer_train_step_trace_L1"
    assert len(list(run.glob("events.out.tfevents.*"))) == 1
    counts = corpus.count_ops(tmp_path, run)
    assert counts["pre_optimization_ops"] == 216 + 1099  # the size formula in bench/corpus.py
    assert f"pre_optimization_ops={counts['pre_optimization_ops']}" in out
