"""Deeply nested input answers 400 (or 413) with a message, never 500 (issue 23, item 8).

Regressions: ``/scene`` with ``expanded`` nested 5,000 deep answered 500 (``RecursionError`` in
the JSON decoder), and an uploaded ``.pbtxt`` nested 2,000 deep answered 500 (``RecursionError``
in protobuf's text parser). Both are now measured before they are decoded
(``ingest/nesting.py``). Also here: the same limits on the other JSON parameters and on a Keras
model's JSON in an uploaded event file, the documents just under the limits (accepted), and op
names nested in 1,000 scopes (the hierarchy recursed per scope: 500; now 413 with a message).

Through a real ``TensorBoardWSGI`` app (``TbApp``) over the committed ``demo_logs`` (real logs).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tensorboard import errors

from tb_graph_plugin.ingest import keras_model, nesting, parse
from tests.tb_app import OURS, json_error

DEMO_LOGS = Path(__file__).resolve().parents[2] / "demo_logs"


@pytest.fixture(scope="module")
def app(app_factory):
    return app_factory(DEMO_LOGS, workers=1)


def _nested_json(depth: int) -> str:
    return "[" * depth + "]" * depth


def _nested_pbtxt(levels: int) -> bytes:
    """A GraphDef whose messages nest ``3 + 3 * levels`` deep: node { attr { value { func { attr
    { value { ... (an AttrValue's func holds attrs, whose values hold funcs ...)."""
    head = 'node { name: "a" op: "Const" attr { key: "k" value { '
    body = 'func { name: "f" attr { key: "k" value { ' * levels
    return (head + body + "} } }" * levels + "} } }").encode()


# ------------------------------------------------------------------ JSON query parameters


def test_regression_scene_expanded_nested_5000_deep_is_400_not_500(app):
    response = app.get(OURS + "/scene", run="tf1_graph", expanded=_nested_json(5000))
    assert json_error(response, 400) == (
        "Invalid argument: query parameter `expanded` must be a JSON array of strings, got JSON "
        "nested 5,000 levels deep (more than the limit of 100)"
    )


@pytest.mark.parametrize("route, name", [("/scene", "ungroup"), ("/scene_delta", "from"),
                                         ("/scene_delta", "expanded"), ("/node", "ungroup")])
def test_every_json_parameter_has_the_nesting_limit(app, route, name):
    params = {"run": "tf1_graph", "name": "x", "from": "[]", "expanded": "[]", name: _nested_json(100_000)}
    message = json_error(app.get(OURS + route, **params), 400)
    assert f"`{name}` must be a JSON array of strings, got JSON nested 100,000 levels deep" in message


def test_brackets_inside_group_names_are_not_nesting(app):
    """Names hold brackets (PyTorch ``Conv2d[conv1]``, series ``layers.[0-5]``): only the JSON's
    own brackets count. 200 unbalanced ``[`` in one name: depth 1, then an unknown group."""
    name = "ResNetLike/" + "[" * 200
    message = json_error(app.get(OURS + "/scene", run="torch_cnn", expanded=json.dumps([name]), wait="10"), 400)
    assert "no such group" in message and "nested" not in message


def test_json_depth_scan():
    assert nesting.json_depth('["a", ["b"]]') == 2
    assert nesting.json_depth('["[[[", "\\"[[", "]]]"]') == 1  # brackets in strings, escaped quotes
    assert nesting.json_depth('"plain"') == 0
    assert nesting.json_depth(_nested_json(5000)) == 5000
    assert nesting.json_depth('{"a": [{"b": {}}]}') == 4


# -------------------------------------------------------------------------- pbtxt uploads


def test_regression_pbtxt_upload_nested_2000_deep_is_400_not_500(app):
    blob = b'node { name: "a" op: "Const" }\n' + b"node { " * 2000 + b"}" * 2000
    assert json_error(app.post(OURS + "/upload", blob, filename="deep.pbtxt"), 400) == (
        "Invalid argument: uploaded file 'deep.pbtxt' is not a GraphDef pbtxt this server reads: its "
        "messages nest 2,000 levels deep, more than the limit of 100 (protobuf's own for binary GraphDefs)"
    )


def test_pbtxt_upload_of_valid_messages_past_the_limit_is_400(app):
    blob = _nested_pbtxt(40)  # 123 levels: text_format would parse it, but no binary GraphDef holds it
    assert nesting.pbtxt_depth(blob.decode()) == 123
    message = json_error(app.post(OURS + "/upload", blob, filename="attrs.pbtxt"), 400)
    assert "nest 123 levels deep, more than the limit of 100" in message


def test_pbtxt_at_the_limit_uploads_and_opens(app):
    """99 levels (3 + 3 * 32): parsed, kept, sent to a worker as binary, built and laid out."""
    blob = _nested_pbtxt(32)
    assert nesting.pbtxt_depth(blob.decode()) == 99
    response = app.post(OURS + "/upload", blob, filename="attrs.pbtxt")
    assert response.status_code == 200, response.get_data(as_text=True)
    ref = json.loads(response.get_data())["graph"]
    scene = app.json(OURS + "/scene", run=ref["run"], tag=ref["tag"], wait="10")
    assert [n["name"] for n in scene["nodes"]] == ["a"]


def test_pbtxt_depth_scan_skips_strings_and_comments():
    text = 'node { name: "{{{" op: \'<<\' # {{{{ "\n attr < key: "k\\"{" > }'
    assert nesting.pbtxt_depth(text) == 2
    with pytest.raises(errors.InvalidArgumentError, match="nest 5,000 levels deep"):
        parse.parse_graph_file(b"a < " * 5000 + b">" * 5000, "f")


# ------------------------------------------------------------------ Keras model JSON


def test_keras_model_json_nested_deep_is_refused_with_a_message():
    blob = b'{"config": ' + _nested_json(20_000).encode() + b"}"
    with pytest.raises(errors.InvalidArgumentError) as info:
        keras_model.keras_json_to_graph_def(blob, "uploaded file 'events', Keras model 'keras'")
    assert str(info.value) == (
        "Invalid argument: uploaded file 'events', Keras model 'keras' is not a Keras model this server "
        "reads: its JSON nests 20,001 levels deep, more than the limit of 100"
    )


# --------------------------------------------------------------- names in deep scopes


def _deep_names(scopes: int) -> tuple[bytes, str]:
    scope = "/".join(f"s{i}" for i in range(scopes))
    blob = f'node {{ name: "{scope}/x" op: "Const" }} node {{ name: "{scope}/y" op: "Identity" input: "{scope}/x" }}'
    return blob.encode(), scope


def test_op_names_in_1000_scopes_answer_413_with_a_message(app):
    blob, _ = _deep_names(1000)
    response = app.post(OURS + "/upload", blob, filename="scopes.pbtxt")
    tag = json.loads(response.get_data())["graph"]["tag"]
    for route, extra in (("/scene", {}), ("/node", {"name": "x"}), ("/search", {"q": "x"})):
        message = json_error(app.get(OURS + route, run="__upload__", tag=tag, wait="10", **extra), 413)
        assert message.startswith(f"graph op of run '__upload__' tag '{tag}' cannot be shown: op 's0/s1/")
        assert message.endswith("is nested in 1,000 name scopes, more than the limit of 200")


def test_op_names_in_200_scopes_open_with_every_group_expanded(app):
    blob, scope = _deep_names(200)
    tag = json.loads(app.post(OURS + "/upload", blob, filename="scopes.pbtxt").get_data())["graph"]["tag"]
    parts = scope.split("/")
    expanded = ["/".join(parts[:k]) for k in range(1, len(parts) + 1)]
    scene = app.json(OURS + "/scene", run="__upload__", tag=tag, expanded=json.dumps(expanded), wait="10")
    assert {f"{scope}/x", f"{scope}/y"} <= {n["name"] for n in scene["nodes"]}


def test_cli_summary_of_names_in_300_scopes_is_one_error_line(tmp_path, capsys):
    from tb_graph_plugin.cli import main

    blob, _ = _deep_names(300)
    (tmp_path / "scopes.pbtxt").write_bytes(blob)
    assert main(["summary", str(tmp_path / "scopes.pbtxt")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tb-graph: error: op 's0/s1/") and err.rstrip().endswith(
        "is nested in 300 name scopes, more than the limit of 200")
