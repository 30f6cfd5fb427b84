"""Pattern search (``graph.pattern``, ``/search?pattern=``, ``tb-graph search --pattern``).

Real graphs: a BERT-like TensorFlow graph in the original BERT code's style (``tf_bert_like.py``):
``(MatMul|BatchMatMulV2) -> * -> Softmax`` finds one match per attention layer; a Hugging Face BERT
captured with ``tb_graph_plugin.torch.add_graph``: ``aten::linear -> aten::gelu -> aten::linear``
one per MLP. Hand-built graphs: each rule of the syntax and of a match.
"""

from __future__ import annotations

import json

import pytest
from tensorboard.compat.proto import graph_pb2

from tb_graph_plugin.cli import main
from tb_graph_plugin.graph import build_slim_graph
from tb_graph_plugin.graph.pattern import PatternError, find_pattern, parse_pattern
from tb_graph_plugin.ingest.local import load_graph_def_from_path
from tests.tb_app import OURS, TbApp, json_error

ATTENTION = "(MatMul|BatchMatMulV2) -> * -> Softmax"
MLP = "aten::linear -> aten::gelu -> aten::linear"


def _edges(slim) -> set:
    return set(zip(slim.edge_src.tolist(), slim.edge_dst.tolist()))


def _check_paths(slim, found, first_ops, last_op):
    edges = _edges(slim)
    for path in found.matches:
        assert slim.ops[path[0]] in first_ops and slim.ops[path[-1]] == last_op
        assert all((a, b) in edges for a, b in zip(path, path[1:])), [slim.names[i] for i in path]


def test_one_match_per_attention_layer_of_a_bert_like_tf_graph(tf_bert_like):
    layers = json.loads(tf_bert_like.with_name("bert_like.pb.json").read_text())["layers"]
    slim = build_slim_graph(load_graph_def_from_path(str(tf_bert_like)))
    found = find_pattern(slim, ATTENTION)
    assert found.total == layers == len(found.matches)
    _check_paths(slim, found, {"MatMul", "BatchMatMulV2"}, "Softmax")
    assert sorted(slim.names[p[-1]] for p in found.matches) == [f"layer_{i}/attention/Softmax" for i in range(layers)]
    assert all(len(p) - 2 <= 3 for p in found.matches)  # '*': at most 3 ops between
    # the softmax is 2 ops after the scores' matmul: no match without a gap
    assert find_pattern(slim, "(MatMul|BatchMatMulV2) -> Softmax").total == 0
    assert find_pattern(slim, "BatchMatMulV2 -> *1 -> Softmax").total == 0
    assert find_pattern(slim, "BatchMatMulV2 -> *2 -> Softmax").total == layers


@pytest.mark.slow
def test_one_match_per_mlp_of_a_torch_bert(cost_models):
    truth = json.loads((cost_models / "truth.json").read_text())["bert"]
    layers = sum(1 for path in truth["modules"] if path.count(".") == 2 and path.startswith("encoder.layer."))
    slim = build_slim_graph(load_graph_def_from_path(str(cost_models / "bert")))
    found = find_pattern(slim, MLP)
    assert found.total == layers == 2
    _check_paths(slim, found, {"aten::linear"}, "aten::linear")
    for i, path in enumerate(sorted(found.matches)):
        names = [slim.names[k] for k in path]
        assert all(f"/BertLayer[{i}]/" in n for n in names), names
        assert "BertIntermediate[intermediate]" in names[0] and "BertOutput[output]" in names[-1]
    # short op types and labels say the same
    assert find_pattern(slim, "linear -> gelu -> linear").total == layers
    assert find_pattern(slim, "label:linear -> label:gelu -> label:linear").total == layers
    assert find_pattern(slim, "name:intermediate -> gelu").total == layers


def _graph(*nodes):
    g = graph_pb2.GraphDef()
    for name, op, inputs in nodes:
        g.node.add(name=name, op=op, input=inputs)
    return build_slim_graph(g)


def test_gaps_are_bounded_and_paths_follow_edges():
    chain = [("n0", "A", [])] + [(f"n{i}", "X", [f"n{i - 1}"]) for i in range(1, 6)] + [("n6", "B", ["n5"])]
    slim = _graph(*chain)
    assert find_pattern(slim, "A -> * -> B").total == 0  # 5 ops between
    assert find_pattern(slim, "A -> *5 -> B").total == 1
    assert find_pattern(slim, "A -> *4 -> B").total == 0
    assert find_pattern(slim, "A -> *2 -> *3 -> B").total == 1  # gaps in a row add up
    assert [slim.names[i] for i in find_pattern(slim, "A -> *5 -> B").matches[0]] == [f"n{i}" for i in range(7)]
    assert find_pattern(slim, "B -> *9 -> A").total == 0  # along the edges' direction only


def test_control_edges_and_embeddings_are_not_paths():
    slim = _graph(("a", "A", []), ("c", "Const", []), ("b", "B", ["^a", "c"]))
    assert find_pattern(slim, "A -> B").total == 0
    assert find_pattern(slim, "Const -> B").total == 0  # a Const is drawn beside its reader, no step


def test_matches_ending_at_one_op_are_one_match_even_in_a_cycle():
    slim = _graph(("x", "A", ["z"]), ("y", "A", ["x"]), ("z", "B", ["y"]))  # x -> y -> z -> x
    found = find_pattern(slim, "A -> *3 -> B")
    assert found.total == 1 and [slim.names[i] for i in found.matches[0]] == ["y", "z"]  # the fewest gap ops


def test_op_steps_match_the_whole_type_ignoring_case():
    slim = _graph(("m", "BatchMatMulV2", []), ("s", "LogSoftmax", ["m"]), ("t", "Softmax", ["m"]))
    assert find_pattern(slim, "MatMul -> Softmax").total == 0
    assert find_pattern(slim, "batchmatmulv2 -> softmax").total == 1
    assert find_pattern(slim, "(?-i)batchmatmulv2 -> Softmax").total == 0
    assert find_pattern(slim, ".*MatMul.* -> .*Softmax").total == 2


@pytest.mark.parametrize("pattern, message", [
    ("* -> A", "starts with a step"), ("A -> *", "ends with a step"), ("A -> -> B", "step 2 of the pattern is empty"),
    ("A -> *17 -> B", "gap of 17"), ("(a)\\1 -> B", "bad regex"), (" -> ".join(["A"] * 17), "17 steps"),
])
def test_bad_patterns_say_why(pattern, message):
    with pytest.raises(PatternError, match=message.replace("(", r"\(").replace("*", r"\*")):
        parse_pattern(pattern) if "regex" not in message else find_pattern(_graph(("a", "A", [])), pattern)


# -- through a real TensorBoard app and the CLI ---------------------------------------------------


@pytest.fixture(scope="module")
def app(tf_bert_like, tmp_path_factory):
    from tensorboard.compat.proto import event_pb2
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    logdir = tmp_path_factory.mktemp("pattern_logs")
    writer = EventFileWriter(str(logdir / "bert_like"))
    writer.add_event(event_pb2.Event(wall_time=0, graph_def=tf_bert_like.read_bytes()))
    writer.close()
    a = TbApp(logdir, workers=1)
    yield a
    a.ours.pool.close()


def test_search_route_answers_the_matches(app):
    a = app.json(OURS + "/search", run="bert_like", pattern=ATTENTION, wait="30")
    assert a["total"] == 4 and a["complete"] and len(a["hits"]) == len(a["matches"]) == 4
    for hit, match in zip(a["hits"], a["matches"]):
        assert hit["name"] == match[-1] and hit["op"] == "Softmax"
        layer = hit["name"].split("/")[0]
        assert hit["ancestors"] == ["layer_[0-3]", layer, f"{layer}/attention"]  # the layers are a series
    assert {"layer_[0-3]", "layer_0", "layer_0/attention"} <= set(a["match_groups"])


def test_search_route_refuses_bad_patterns(app):
    r = app.get(OURS + "/search", run="bert_like", pattern="* -> Softmax")
    assert "a pattern starts with a step" in json_error(r, 400)
    r = app.get(OURS + "/search", run="bert_like", pattern="A -> B", q="x")
    assert "not both" in json_error(r, 400)


def test_cli_search_pattern(tf_bert_like, capsys):
    assert main(["search", str(tf_bert_like), "--pattern", ATTENTION, "--compact"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["total"] == 4 and out["matches"][0][-1] == "layer_0/attention/Softmax"
    assert main(["search", str(tf_bert_like), "--pattern", "Softmax -> *3 -> BatchMatMulV2 -> Softmax"]) == 1
    assert main(["search", str(tf_bert_like), "--pattern", "A -> *"]) == 2
    assert "ends with a step" in capsys.readouterr().err
