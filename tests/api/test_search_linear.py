"""/search runs in linear time ([RE2] in docs/references.md) and never stalls the worker that holds the graph.

Regression: ``(a+)+$`` against a node named 36 ``a``s then ``!`` took ~2^36 backtracking steps
in Python's ``re``; the search job ran until the 300 s job time limit and every other request on
that worker (the ``/scene`` of another graph) waited behind it.
"""

from __future__ import annotations

import json
import time

import pytest
from tensorboard import errors
from tensorboard.compat.proto import graph_pb2

from tb_graph_plugin.api import search, tasks
from tests.tb_app import OURS, TbApp

REDOS_NAME = "a" * 36 + "!"


def graph_bytes(names, op="Identity") -> bytes:
    """A chain GraphDef: each named node reads the previous one."""
    graph = graph_pb2.GraphDef()
    for i, name in enumerate(names):
        node = graph.node.add(name=name, op="Placeholder" if i == 0 else op)
        if i:
            node.input.append(names[i - 1])
    return graph.SerializeToString()


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    # One worker: the ReDoS graph and the other graph are held by the same process, as when a
    # pattern is sent against every worker's graphs.
    app = TbApp(tmp_path_factory.mktemp("empty_logdir"), workers=1)
    yield app
    app.ours.pool.close()


def _upload(app, blob, filename="g.pb") -> dict:
    response = app.post(OURS + "/upload", blob, filename=filename)
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.get_json()["graph"]


def test_redos_pattern_answers_at_once_and_the_next_scene_does_not_wait(app):
    redos = _upload(app, graph_bytes(["input", REDOS_NAME, "aaa", "scope/aaaa", "out"]))
    other = _upload(app, graph_bytes([f"net/layer{i}/op" for i in range(30)]))
    ref = {k: v for k, v in other.items() if v is not None}
    assert app.json(OURS + "/scene", wait="30", expanded="[]", **ref)["nodes"]  # built, on the same worker
    app.json(OURS + "/node", wait="30", name="input", **{k: v for k, v in redos.items() if v is not None})

    t0 = time.monotonic()
    response = app.get(OURS + "/search", q="(a+)+$", wait="10", **{k: v for k, v in redos.items() if v is not None})
    searched = time.monotonic() - t0
    assert response.status_code == 200, response.get_data(as_text=True)
    answer = response.get_json()
    assert searched < 2.0
    assert {h["name"] for h in answer["hits"]} == {"aaa", "scope/aaaa"}  # 36 a's then '!' does not match
    assert answer["total"] == 2 and answer["complete"] is True

    t0 = time.monotonic()
    scene = app.get(OURS + "/scene", wait="10", expanded=json.dumps(["net"]), **ref)
    assert scene.status_code == 200 and time.monotonic() - t0 < 2.0
    assert any(n["name"] == "net/layer0" for n in scene.get_json()["nodes"])


@pytest.mark.parametrize("q, reason", [
    (r"(a)\1", "invalid escape sequence"),
    ("(?=a)b", "invalid perl operator"),
    ("(", "missing )"),
])
def test_patterns_re2_refuses_answer_400_with_the_reason(app, q, reason):
    ref = _upload(app, graph_bytes(["input", "aaa"]))
    response = app.get(OURS + "/search", q=q, wait="10", **{k: v for k, v in ref.items() if v is not None})
    assert response.status_code == 400
    error = response.get_json()["error"]
    assert f"bad search regex {q!r}" in error and reason in error and "RE2 syntax" in error


def test_overlong_pattern_is_400():
    with pytest.raises(errors.InvalidArgumentError, match="longer than the limit of 1000"):
        search.compile_query("a" * 1001)


def _state(names):
    state = tasks.GraphState({"graph": graph_bytes(names)}, lambda stage, fraction: None)
    state.build_hierarchy()  # as every task but a first view has it
    return state


def test_search_stops_at_its_time_budget_and_says_so():
    state = _state([f"n{i}" for i in range(20_000)])
    partial = search.search_graph(state, "n", "e", budget_s=0.0)  # ops only (Placeholder, Identity)
    assert partial.complete is False and partial.total < 20_000 and len(partial.hits) == search.MAX_SEARCH_HITS
    full = search.search_graph(state, "n", "e")
    assert full.complete is True and full.total == 20_000


def test_search_semantics_kept_anywhere_in_the_name_and_op_filter():
    state = _state(["input", "enc/relu_1", "enc/Relu", "dec/x"])
    answer = search.search_graph(state, "elu", None)
    assert [h.name for h in answer.hits] == ["enc/relu_1", "enc/Relu"]
    assert [h.name for h in search.search_graph(state, "^dec", None).hits] == ["dec", "dec/x"]  # group first
    assert [h.name for h in search.search_graph(state, "", "identity").hits] == ["enc/relu_1", "enc/Relu", "dec/x"]


def test_search_matches_labels_and_op_types_ignoring_case_unless_names_only():
    """Issue 23 item 4: names, labels and op types; case-insensitive; a names-only switch."""
    graph = graph_pb2.GraphDef()
    graph.node.add(name="x", op="Placeholder")
    graph.node.add(name="m/816", op="aten::add", input=["x"])  # label "add" (a JIT value name)
    graph.node.add(name="m/q_idx", op="aten::add", input=["m/816"])  # label "q_idx" (the author's)
    graph.node.add(name="m/Relu", op="Relu", input=["m/q_idx"])
    state = tasks.GraphState({"graph": graph.SerializeToString()}, lambda stage, fraction: None)
    state.build_hierarchy()

    def names(q, **kw):
        return [h.name for h in search.search_graph(state, q, None, **kw).hits]

    assert names("add") == ["m/816", "m/q_idx"]  # the op type
    assert names("^add$") == ["m/816"]  # the label, anchored
    assert names("ADD") == names("add") and names("(?-i)ADD") == []
    assert names("^relu") == ["m/Relu"]  # a label that is the name's last part, anchored
    assert names("add", names_only=True) == [] and names("^m/816$", names_only=True) == ["m/816"]
    assert names("relu", names_only=True) == ["m/Relu"]  # names ignore case too
    hit = search.search_graph(state, "816", None).hits[0]
    assert (hit.name, hit.label, hit.op) == ("m/816", "add", "aten::add")
