"""Bad inputs, one test each, asserting the exact error class and message.

Through the HTTP routes of a real ``TensorBoardWSGI`` app (``TbApp``) and through the library:
uploads that are not GraphDefs, truncated / corrupt event files (copies of real logs with their
bytes cut or flipped), GraphDefs with duplicate names, dangling inputs, while-loop cycles, a 20 MB
``Const``, hostile node names, and an empty trace. Nothing here may answer 500.
"""

from __future__ import annotations

import io
import json
import random

import pytest
from tensorboard import errors
from tensorboard.compat.proto import graph_pb2
from werkzeug.test import EnvironBuilder, run_wsgi_app
from werkzeug.wrappers import Response

from tb_graph_plugin.graph import build_slim_graph
from tb_graph_plugin.hierarchy import build_hierarchy
from tb_graph_plugin.ingest import parse
from tests import logwriters
from tests.hierarchy.invariants import check_invariants
from tests.hostile.hostile_logs import BIG_CONST_ELEMENTS
from tests.tb_app import OURS, json_error

JSON = "application/json"
UPLOAD_LIMIT_MB = 1


def _ok(response) -> dict:
    assert response.status_code == 200, (response.status_code, response.get_data(as_text=True)[:500])
    assert response.headers["Content-Type"].startswith(JSON)
    return json.loads(response.get_data())


def _tf1_graph_bytes(real_logs) -> bytes:
    """The serialized run graph (step 0) that real TF1 ``FileWriter`` wrote."""
    return logwriters.read_blobs(real_logs.get("tf1_graph"), "tf1_graph", "graphs", "__run_graph__")[0][1]


# ----------------------------------------------------------------------------------- uploads


@pytest.fixture(scope="module")
def app(app_factory, hostile_logs_root):
    return app_factory(hostile_logs_root / "xss", upload_limit_mb=UPLOAD_LIMIT_MB)


def _upload_error(app, blob: bytes) -> str:
    return json_error(app.post(OURS + "/upload", blob), 400)


def _library_error(blob: bytes) -> str:
    with pytest.raises(errors.InvalidArgumentError) as info:
        parse.parse_graph_file(blob, "uploaded file 'upload'")
    return str(info.value)


NOT_BINARY = "Error parsing message with type 'tensorboard.GraphDef'"
CORRUPT = f"{NOT_BINARY}: Wire format was corrupt"

UPLOAD_CASES = {
    "random_bytes": (
        random.Random(6).randbytes(4096),
        "Invalid argument: uploaded file 'upload' is not a GraphDef: not a binary GraphDef "
        f"({CORRUPT}); as text: not UTF-8 text (invalid start byte at byte 0)",
    ),
    "latin1_text": (
        b'node { name: "caf\xe9" op: "Const" }',
        "Invalid argument: uploaded file 'upload' is not a GraphDef: not a binary GraphDef "
        f"({CORRUPT}); as text: not UTF-8 text (invalid continuation byte at byte 17)",
    ),
    "truncated_pbtxt": (
        b'node { name: "a" op: "Co',
        "Invalid argument: uploaded file 'upload' is not a valid GraphDef pbtxt: 1:22 : "
        "'node { name: \"a\" op: \"Co': String missing ending quote: '\"Co'",
    ),
    "run_metadata_pbtxt": (
        b'step_stats { dev_stats { device: "/cpu:0" } }',
        "Invalid argument: uploaded file 'upload' is not a valid GraphDef pbtxt: 1:1 : "
        'Message type "tensorboard.GraphDef" has no field named "step_stats".',
    ),
    "empty_file": (b"", "Invalid argument: uploaded file 'upload' is empty"),
    "whitespace_only": (
        b"\n  \n",
        "Invalid argument: uploaded file 'upload' parses as a GraphDef but holds no nodes",
    ),
    "node_without_name": (
        b'node { op: "Const" }',
        "Invalid argument: uploaded file 'upload' is not a GraphDef: a node has no name",
    ),
}


@pytest.mark.parametrize("case", sorted(UPLOAD_CASES))
def test_bad_upload_is_400_with_its_cause(app, case):
    blob, message = UPLOAD_CASES[case]
    assert _upload_error(app, blob) == message
    assert _library_error(blob) == message


def test_truncated_binary_graphdef_upload(app, real_logs):
    blob = _tf1_graph_bytes(real_logs)
    graph_pb2.GraphDef.FromString(blob)  # the real bytes parse
    message = _upload_error(app, blob[: len(blob) // 2])
    assert message.startswith(
        f"Invalid argument: uploaded file 'upload' is not a GraphDef: not a binary GraphDef ({NOT_BINARY}"
    ), message
    assert "; as text: not UTF-8 text (" in message


def test_upload_over_the_size_limit(app):
    limit = UPLOAD_LIMIT_MB << 20
    message = _upload_error(app, b"node { name: \"a\" op: \"Const\" }\n" + b" " * limit)
    assert message == (
        f"Invalid argument: upload of {limit + 1} bytes exceeds the limit of {limit} bytes "
        "(flag --graph_explorer_upload_limit_mb)"
    )


def test_upload_exactly_at_the_size_limit_is_accepted(app):
    limit = UPLOAD_LIMIT_MB << 20
    head = b'node { name: "a" op: "Const" }\n'
    answer = _ok(app.post(OURS + "/upload", head + b" " * (limit - len(head))))
    assert answer["ops"] == 1


def _post_raw(app, body: bytes, content_length):
    """POST ``body`` to ``/upload`` with the CONTENT_LENGTH header given (None: without one, as
    a chunked request reaches the app: ``wsgi.input_terminated`` set by the server)."""
    environ = EnvironBuilder(path=OURS + "/upload", method="POST", input_stream=io.BytesIO(body)).get_environ()
    del environ["CONTENT_LENGTH"]
    if content_length is None:
        environ["wsgi.input_terminated"] = True
    else:
        environ["CONTENT_LENGTH"] = str(content_length)
    # Run the app on this environ as it is (``client.open`` would rebuild the environ and
    # recompute CONTENT_LENGTH from the stream).
    body_iter, status, headers = run_wsgi_app(app.client.application, environ, buffered=True)
    return Response(b"".join(body_iter), status=status, headers=headers)


def test_upload_shorter_than_its_content_length_is_400(app):
    """The body is read straight from the WSGI input, bounded by Content-Length: a client that
    sends less (a dropped connection) gets a 400 saying so, not a parse of part of a file."""
    body = b'node { name: "a" op: "Const" }\n'
    assert _ok(_post_raw(app, body, len(body)))["ops"] == 1
    assert json_error(_post_raw(app, body, 100), 400) == (
        f"Invalid argument: upload ended after {len(body)} of its 100 bytes (Content-Length): the client sent less"
    )


def test_upload_without_content_length_is_read_from_the_decoded_stream(app):
    """Chunked transfer (no Content-Length): werkzeug's ``request.stream`` reads it, up to the
    size limit."""
    limit = UPLOAD_LIMIT_MB << 20
    head = b'node { name: "a" op: "Const" }\n'
    assert _ok(_post_raw(app, head, None))["ops"] == 1
    assert json_error(_post_raw(app, head + b" " * limit, None), 400) == (
        f"Invalid argument: upload of {limit + 1} bytes exceeds the limit of {limit} bytes "
        "(flag --graph_explorer_upload_limit_mb)"
    )


def test_upload_with_get_is_405(app):
    response = app.get(OURS + "/upload")
    assert json_error(response, 405) == "upload takes POST with the file as body"
    assert response.headers["Allow"] == "POST"


def test_unknown_upload_id_is_404(app):
    message = json_error(app.get(OURS + "/node", run="__upload__", tag="0123456789abcdef", name="a"), 404)
    assert message == (
        "Not found: unknown upload '0123456789abcdef' (uploads live in server memory and are lost "
        "when TensorBoard restarts; upload the file again)"
    )


def test_parse_graph_def_of_garbage_names_the_source():
    with pytest.raises(errors.InvalidArgumentError) as info:
        parse.parse_graph_def(b"\xff" * 32, "run 'r' tag '__run_graph__'")
    assert str(info.value).startswith(f"Invalid argument: malformed GraphDef in run 'r' tag '__run_graph__': {NOT_BINARY}")


# ----------------------------------------------------------------------- broken event files


@pytest.fixture(scope="module")
def broken_app(app_factory, broken_logdir):
    return app_factory(broken_logdir)


def _steps(listing: dict) -> dict:
    return {
        r["run"]: {t["tag"]: [s["step"] for s in t["steps"]] for t in r["tags"]} for r in listing["runs"]
    }


def test_broken_event_files_keep_the_records_before_the_damage(broken_app):
    steps = _steps(_ok(broken_app.get(OURS + "/graphs")))
    assert steps == {
        "good": {"__run_graph__": [0, 5], "step1": [0]},
        "truncated": {"__run_graph__": [0], "step1": [0]},  # the cut last graph is dropped
        "crc_run_metadata": {"__run_graph__": [0]},  # reading stops at the corrupt record
        "bad_length": {"__run_graph__": [0]},
        # crc_graph, garbage, empty: no graph data readable, so not listed
    }


@pytest.mark.parametrize("run", ["truncated", "crc_run_metadata", "bad_length"])
def test_run_graph_before_the_damage_is_served(broken_app, run):
    response = broken_app.get(OURS + "/graph", run=run)
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("text/x-protobuf")
    assert 'name: "input/x"' in response.get_data(as_text=True)  # the step 0 graph
    hits = _ok(broken_app.get(OURS + "/search", run=run, q="^layer1$", names_only="on", wait="30"))  # not .../gradients/layer1
    assert [h["name"] for h in hits["hits"]] == ["layer1"]


def test_intact_run_beside_broken_ones_is_unaffected(broken_app):
    response = broken_app.get(OURS + "/graph", run="good")
    assert response.status_code == 200
    assert 'name: "eval/features"' in response.get_data(as_text=True)  # latest: step 5
    assert broken_app.get(OURS + "/run_metadata", run="good", tag="step1").status_code == 200


@pytest.mark.parametrize("run", ["crc_graph", "garbage", "empty"])
def test_unreadable_graph_is_404_not_500(broken_app, run):
    response = broken_app.get(OURS + "/graph", run=run)
    assert response.status_code == 404
    assert response.get_data(as_text=True) == f"Not found: run {run!r} has no tag '__run_graph__' with graphs data"
    message = json_error(broken_app.get(OURS + "/search", run=run, q="x"), 404)
    assert message == f"Not found: run {run!r} has no tag '__run_graph__' with graphs data"


def test_profile_lost_to_corruption_is_404(broken_app):
    response = broken_app.get(OURS + "/run_metadata", run="crc_run_metadata", tag="step1")
    assert response.status_code == 404
    assert response.get_data(as_text=True) == (
        "Not found: run 'crc_run_metadata' has no tag 'step1' with graph_tagged_run_metadata "
        "or graph_run_metadata data"
    )


# ------------------------------------------------------------------ graph-model problems


def _upload(app, pbtxt: str) -> str:
    return _ok(app.post(OURS + "/upload", pbtxt.encode("utf-8")))["graph"]["tag"]


def _node(app, tag: str, name: str, status: int = 200):
    response = app.get(OURS + "/node", run="__upload__", tag=tag, name=name, wait="30")
    return _ok(response) if status == 200 else json_error(response, status)


DUPLICATES = 'node { name: "a" op: "Const" }\nnode { name: "a" op: "Identity" input: "a" }\n' \
             'node { name: "b" op: "Relu" input: "a" }\n'


def test_duplicate_node_names_are_reported_and_the_first_kept(app):
    graph = graph_pb2.GraphDef()
    from google.protobuf import text_format

    text_format.Parse(DUPLICATES, graph)
    slim = build_slim_graph(graph)
    assert slim.duplicate_names == ["a"]
    check_invariants(build_hierarchy(slim))
    tag = _upload(app, DUPLICATES)
    assert _node(app, tag, "a")["op"] == "Const"
    assert [i["name"] for i in _node(app, tag, "b")["inputs"]] == ["a"]


DANGLING = 'node { name: "x" op: "Placeholder" }\n' \
           'node { name: "y" op: "Add" input: "x" input: "missing/op:1" input: "^ghost" }\n'


def test_dangling_inputs_are_kept_and_flagged(app):
    from google.protobuf import text_format

    graph = text_format.Parse(DANGLING, graph_pb2.GraphDef())
    slim = build_slim_graph(graph)
    assert [(slim.names[d.node], d.input) for d in slim.dangling] == [("y", "missing/op:1"), ("y", "^ghost")]
    assert slim.n_edges == 1
    check_invariants(build_hierarchy(slim))
    tag = _upload(app, DANGLING)
    assert [i["name"] for i in _node(app, tag, "y")["inputs"]] == ["x"]
    assert _node(app, tag, "missing/op", 404) == "Not found: no node 'missing/op' in this graph"
    stats = _ok(app.get(OURS + "/scene", run="__upload__", tag=tag, wait="30"))["stats"]
    assert stats["dangling_inputs"] == 2 and stats["module_references"] == 0
    assert stats["dangling_examples"] == ["y <- missing/op:1", "y <- ^ghost"]


def test_pytorch_module_references_are_not_reported_as_dangling(app_factory, real_logs):
    """add_graph's ``prim::GetAttr`` inputs name module instances that are never nodes (regression:
    every PyTorch graph showed "52 inputs name missing nodes" in the warning line)."""
    torch_app = app_factory(real_logs.get("torch_cnn"))
    stats = _ok(torch_app.get(OURS + "/scene", run="torch_cnn", wait="30"))["stats"]
    assert stats["dangling_inputs"] == 0 and stats["dangling_examples"] == []
    assert stats["module_references"] > 0


def _run_graph(logdir, run: str) -> graph_pb2.GraphDef:
    blob = logwriters.read_blobs(logdir, run, "graphs", "__run_graph__")[-1][1]
    return parse.parse_graph_def(blob, run)


def test_while_loop_v1_cycles_build_and_are_served(app_factory, hostile_logs_root):
    logdir = hostile_logs_root / "while_v1"
    slim = build_slim_graph(_run_graph(logdir, "while_v1"))
    index = {n: i for i, n in enumerate(slim.names)}
    back = [(slim.names[s], slim.names[d]) for s, d in zip(slim.edge_src, slim.edge_dst)
            if slim.ops[s] == "NextIteration"]
    assert ("loop/while/NextIteration", "loop/while/Merge") in back  # the loop's back edge
    assert index["loop/while/Merge"] < index["loop/while/NextIteration"]
    h = build_hierarchy(slim)
    check_invariants(h)
    app = app_factory(logdir)
    merge = _ok(app.get(OURS + "/node", run="while_v1", name="loop/while/Merge", wait="30"))
    assert sorted(i["name"] for i in merge["inputs"]) == ["loop/while/Enter", "loop/while/NextIteration"]
    hits = _ok(app.get(OURS + "/search", run="while_v1", op="NextIteration", wait="30"))
    assert {h["name"] for h in hits["hits"]} == {"loop/while/NextIteration", "loop/while/NextIteration_1"}


def test_while_loop_in_traced_function(app_factory, hostile_logs_root):
    app = app_factory(hostile_logs_root / "while_trace")
    hits = _ok(app.get(OURS + "/search", run="while_trace", tag="while_fn", op="StatelessWhile", wait="30"))
    assert hits["total"] == 1
    (hit,) = hits["hits"]
    node = _ok(app.get(OURS + "/node", run="while_trace", tag="while_fn", name=hit["name"], wait="30"))
    assert node["op"] == "StatelessWhile"
    assert {a["key"] for a in node["attrs"]} >= {"body", "cond"}


def test_huge_const_attr_is_elided_with_its_size(app_factory, hostile_logs_root):
    app = app_factory(hostile_logs_root / "big_const")
    node = _ok(app.get(OURS + "/node", run="big_const", name="big/value", wait="60"))
    value = [a for a in node["attrs"] if a["key"] == "value"]
    assert value == [{"key": "value", "elided_bytes": value[0]["elided_bytes"]}]
    assert BIG_CONST_ELEMENTS * 4 < value[0]["elided_bytes"] < BIG_CONST_ELEMENTS * 4 + 1024
    assert len(json.dumps(node)) < 2000
    response = app.get(OURS + "/graph", run="big_const", limit_attr_size="1024", large_attrs_key="_too_large_attrs")
    assert response.status_code == 200
    text = response.get_data(as_text=True)
    assert len(text) < 5000 and "tensor_content" not in text
    assert 'key: "_too_large_attrs"' in text and 's: "value"' in text


HOSTILE_NAMES = [
    "^a",  # a leading ^ is the control-input marker
    "a:0",  # :N is the output-index marker
    "x:y:2",
    "//",
    "/a",
    "a/",
    "漢字/😀",
    "<img src=x onerror=alert(1)>",
    "\"><svg onload=alert(1)>",
    "L" * 10000,
]


@pytest.fixture(scope="module")
def hostile_names_tag(app):
    lines = [f"node {{ name: {json.dumps(n, ensure_ascii=False)} op: \"Placeholder\" }}" for n in HOSTILE_NAMES[:1]]
    previous = HOSTILE_NAMES[0]
    for name in HOSTILE_NAMES[1:]:
        ref = "^" + previous if previous.startswith("^") else previous
        lines.append(f"node {{ name: {json.dumps(name, ensure_ascii=False)} op: \"<script>alert(1)</script>\" input: {json.dumps(ref, ensure_ascii=False)} }}")
        previous = name
    return _upload(app, "\n".join(lines))


@pytest.mark.parametrize("index", range(len(HOSTILE_NAMES)))
def test_hostile_node_name_is_answered_as_data(app, hostile_names_tag, index):
    name = HOSTILE_NAMES[index]
    node = _node(app, hostile_names_tag, name)
    assert node["name"] == name
    if index:
        assert node["op"] == "<script>alert(1)</script>"
        previous = HOSTILE_NAMES[index - 1]
        # An input "a:0" means output 0 of node "a": a node whose name holds ":N" cannot be an input.
        expected = [] if ":" in previous else [previous]
        assert [i["name"] for i in node["inputs"]] == expected


def test_hostile_names_are_found_by_search(app, hostile_names_tag):
    hits = _ok(app.get(OURS + "/search", run="__upload__", tag=hostile_names_tag,
                       op="<script>alert(1)</script>", wait="30"))
    assert hits["total"] == len(HOSTILE_NAMES) - 1
    assert {h["name"] for h in hits["hits"]} == set(HOSTILE_NAMES[1:])


def test_slash_only_name_becomes_a_group_and_the_op_is_renamed(app):
    tag = _upload(app, 'node { name: "/" op: "Placeholder" }\nnode { name: "//" op: "Identity" input: "/" }\n')
    assert _node(app, tag, "/")["kind"] == "meta"
    renamed = _ok(app.get(OURS + "/search", run="__upload__", tag=tag, op="Placeholder", wait="30"))["hits"]
    assert [(h["name"], h["kind"]) for h in renamed] == [("//()", "op")]


def test_empty_trace_says_why(app_factory, hostile_logs_root):
    app = app_factory(hostile_logs_root / "empty_trace")
    message = (
        "Not found: run 'empty_trace' tag 'empty' holds no function graph: trace_export wrote an "
        "empty trace. This happens when no tf.function ran between tf.summary.trace_on() and "
        "trace_export(), or when the function had already been traced before trace_on()."
    )
    response = app.get(OURS + "/graph", run="empty_trace", tag="empty")
    assert response.status_code == 404
    assert response.get_data(as_text=True) == message
    assert json_error(app.get(OURS + "/search", run="empty_trace", tag="empty", q="x", wait="30"), 404) == message


# ------------------------------------------------------------------------- bad parameters


def test_bad_search_regex_is_400(app):
    tag = _upload(app, DANGLING)
    message = json_error(app.get(OURS + "/search", run="__upload__", tag=tag, q="(", wait="30"), 400)
    assert message == ("Invalid argument: bad search regex '(': missing ): ( (search uses RE2 syntax, which runs "
                       "in linear time and has no backreferences or look-around)")  # RE2's reason


def test_search_without_query_is_400(app):
    message = json_error(app.get(OURS + "/search", run="xss"), 400)
    assert message == "Invalid argument: search needs `q` (a regex), `op` (an op type) or `pattern` (A -> * -> B)"


def test_bad_infer_scopes_is_400(app):
    message = json_error(app.get(OURS + "/node", run="xss", name="x", infer_scopes="maybe"), 400)
    assert message == "Invalid argument: query parameter `infer_scopes` must be auto, on or off, got 'maybe'"


def test_unknown_job_is_404(app):
    message = json_error(app.get(OURS + "/job", id="nope"), 404)
    assert message == "Not found: unknown job 'nope' (finished jobs are forgotten after a while)"


def test_merged_function_graphs_keep_control_edges(real_logs):
    """Regression: ``run_metadata.merge_function_graphs`` prefixed a control input ``^x`` as
    ``graph_N/^x`` (instead of ``^graph_N/x``), so every control edge of a trace holding several
    function graphs became a dangling input (4 in the real ``tf2_multi_function_trace``). The stock
    ``graph_util.merge_graph_defs`` has the same bug (``_prefixed_op_name`` ignores ``^``)."""
    from tensorboard.compat.proto import config_pb2

    from tb_graph_plugin.ingest import run_metadata

    logdir = real_logs.get("tf2_multi_function_trace")
    blob = logwriters.read_blobs(logdir, "tf2_multi_function_trace", logwriters.OP_GRAPH, "multi_function")[-1][1]
    rm = config_pb2.RunMetadata.FromString(blob)
    assert len(rm.function_graphs) > 1
    control_inputs = sum(
        1 for fg in rm.function_graphs for n in fg.pre_optimization_graph.node for i in n.input if i.startswith("^")
    )
    assert control_inputs > 0
    merged = run_metadata.merge_function_graphs(rm, "trace")
    assert [i for n in merged.node for i in n.input if "/^" in i] == []
    assert sum(1 for n in merged.node for i in n.input if i.startswith("^graph_")) == control_inputs
    assert build_slim_graph(merged).dangling == []


def test_regression_huge_shape_dims_do_not_overflow_metaedge_sizes():
    # Found by test_fuzz_parse_graph_file: a mutated `_output_shapes` with dims near 2**63 made
    # the int64 sum of a MetaEdge's sizes overflow (OverflowError in hierarchy/metaedges.py).
    from tb_graph_plugin.graph import build_slim_graph
    from tb_graph_plugin.graph.edges import MAX_TENSOR_SIZE
    from tb_graph_plugin.hierarchy import build_hierarchy
    from tensorboard.compat.proto import graph_pb2

    g = graph_pb2.GraphDef()
    for k in range(4):
        src = g.node.add(name=f"a/x{k}", op="Placeholder")
        dims = src.attr["_output_shapes"].list.shape.add().dim
        dims.add().size = (1 << 63) - 1
        dims.add().size = (1 << 62)
        g.node.add(name=f"b/y{k}", op="Identity", input=[f"a/x{k}"])
    slim = build_slim_graph(g)
    assert max(slim.edge_size) == MAX_TENSOR_SIZE
    h = build_hierarchy(slim)
    root_edges = h.root.metaedges
    assert root_edges and all(e.size == 4 * MAX_TENSOR_SIZE for e in root_edges)
