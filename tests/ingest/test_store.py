"""GraphStore: caching per (run, tag, kind, step), uploads, merging, and their errors."""

from __future__ import annotations

import pytest
from tensorboard import context as tb_context
from tensorboard import errors
from tensorboard.compat.proto import config_pb2, graph_pb2

from tb_graph_plugin import wire
from tb_graph_plugin.ingest import run_metadata
from tests.tb_app import OURS, TbApp

CTX = tb_context.RequestContext()


def test_second_request_does_no_parsing(real_logs):
    app = TbApp(real_logs.get("tf2_keras_trace"))
    cache = app.ours._store.cache
    first = app.get(OURS + "/graph", run="tf2_keras_trace", tag="train_step").get_data()
    loads = cache.stats.misses
    assert loads >= 1
    second = app.get(OURS + "/graph", run="tf2_keras_trace", tag="train_step").get_data()
    assert second == first
    assert cache.stats.misses == loads
    app.get(OURS + "/graph", run="tf2_keras_trace", tag="predict")
    assert cache.stats.misses == loads + 1


def test_graph_bytes_of_a_run_graph_are_not_copied(real_logs):
    """A worker's bytes of a run graph are the data provider's own: no copy is kept here (it
    doubled a 1M-op graph's 165 MB in TensorBoard's memory). Bytes serialized from a parse (a
    conceptual graph) are cached."""
    app = TbApp(real_logs.get("torch_cnn"))
    store = app.ours._store
    ref = wire.GraphRef("torch_cnn", "__run_graph__", wire.GraphKind.OP)
    first = store.graph_bytes(CTX, "", ref)
    assert store.graph_bytes(CTX, "", ref) == first
    assert graph_pb2.GraphDef.FromString(first) == store.graph_def(CTX, "", ref)  # (maps serialize in any order)
    assert [key for key in store.cache.keys() if key[0] == "graph_bytes"] == []

    keras = TbApp(real_logs.get("keras_callback")).ours._store
    conceptual = wire.GraphRef("train", "keras", wire.GraphKind.CONCEPTUAL)
    assert keras.graph_bytes(CTX, "", conceptual) is keras.graph_bytes(CTX, "", conceptual)


def test_merged_trace_is_read_once_and_its_bytes_kept(real_logs, monkeypatch):
    """A trace of several function graphs is merged from one read of its blob; the merged bytes
    are kept, so a second request reads nothing (the merge is the stock one: ``graph_N/``)."""
    from tb_graph_plugin.ingest import blobs

    app = TbApp(real_logs.get("tf2_multi_function_trace"))
    store = app.ours._store
    reads = []
    real_read = blobs.read_blob
    monkeypatch.setattr(blobs, "read_blob", lambda *a, **k: reads.append(a[3]) or real_read(*a, **k))
    ref = wire.GraphRef("tf2_multi_function_trace", "multi_function", wire.GraphKind.OP)
    first = store.graph_bytes(CTX, "", ref)
    assert len(reads) == 1
    assert store.graph_bytes(CTX, "", ref) is first
    assert len(reads) == 1
    merged = graph_pb2.GraphDef.FromString(first)
    assert merged == store.graph_def(CTX, "", ref)
    assert {n.name.split("/")[0] for n in merged.node} >= {"graph_1", "graph_2"}


def test_conceptual_graph_of_keras_callback(real_logs):
    app = TbApp(real_logs.get("keras_callback"))
    graph = app.ours._store.graph_def(CTX, "", wire.GraphRef("train", "keras", wire.GraphKind.CONCEPTUAL))
    classes = {n.attr["keras_class"].s.decode() for n in graph.node}
    assert "Dense" in classes
    assert all(n.name.count("/") >= 1 for n in graph.node)
    assert any(n.input for n in graph.node)


def test_conceptual_graph_missing_says_so(real_logs):
    app = TbApp(real_logs.get("torch_cnn"))
    with pytest.raises(errors.NotFoundError, match="has no tag 'keras' with graph_keras_model data"):
        app.ours._store.graph_def(CTX, "", wire.GraphRef("torch_cnn", "keras", wire.GraphKind.CONCEPTUAL))


def test_profile_kind_uses_the_run_graph(real_logs):
    app = TbApp(real_logs.get("torch_cnn"))
    store = app.ours._store
    profile = store.graph_def(CTX, "", wire.GraphRef("torch_cnn", "step1", wire.GraphKind.PROFILE))
    run_graph = store.graph_def(CTX, "", wire.GraphRef("torch_cnn", "__run_graph__", wire.GraphKind.OP))
    assert profile is run_graph


def test_multi_function_trace_is_merged_with_prefixes(real_logs):
    app = TbApp(real_logs.get("tf2_multi_function_trace"))
    graph = app.ours._store.graph_def(
        CTX, "", wire.GraphRef("tf2_multi_function_trace", "multi_function", wire.GraphKind.OP)
    )
    prefixes = {n.name.split("/")[0] for n in graph.node}
    assert {"graph_1", "graph_2"} <= prefixes
    assert all(p.startswith("graph_") for p in prefixes)


def _function_graph(producer: int, name: str) -> config_pb2.RunMetadata.FunctionGraphs:
    fg = config_pb2.RunMetadata.FunctionGraphs()
    fg.pre_optimization_graph.versions.producer = producer
    fg.pre_optimization_graph.node.add(name=name, op="NoOp")
    return fg


def test_merge_refuses_different_producer_versions():
    rm = config_pb2.RunMetadata()
    rm.function_graphs.append(_function_graph(100, "a"))
    rm.function_graphs.append(_function_graph(200, "b"))
    with pytest.raises(errors.InvalidArgumentError, match=r"different producer versions \(100 and 200 in graph 2\)"):
        run_metadata.merge_function_graphs(rm, "run 'r' tag 't'")


def test_empty_trace_says_why():
    with pytest.raises(errors.NotFoundError, match="holds no function graph: trace_export wrote an empty trace"):
        run_metadata.merge_function_graphs(config_pb2.RunMetadata(), "run 'r' tag 't'")


def test_malformed_run_graph_blob_is_invalid_argument():
    with pytest.raises(errors.InvalidArgumentError, match="malformed RunMetadata in run 'r'"):
        run_metadata.parse_run_metadata(b"\xff\xff\xff\xff", "run 'r'")


class TestUpload:
    @pytest.fixture(scope="class")
    @classmethod  # pytest 9.2 deprecates class-scoped fixtures on instances (gone in pytest 10)
    def app(cls, real_logs):
        return TbApp(real_logs.get("tf1_graph"), upload_limit_mb=1)

    def test_pbtxt_upload_opens_like_any_graph(self, app, real_logs):
        pbtxt = app.get(OURS + "/graph", run="tf1_graph").get_data()
        response = app.post(OURS + "/upload", pbtxt, filename="g.pbtxt")
        assert response.status_code == 200, response.get_data(as_text=True)
        answer = response.get_json()
        assert answer["graph"]["run"] == "__upload__" and answer["graph"]["kind"] == "op"
        ref = wire.GraphRef(**dict(answer["graph"], kind=wire.GraphKind.OP))
        uploaded = app.ours._store.graph_def(CTX, "", ref)
        assert answer["ops"] == len(uploaded.node) > 0

    def test_binary_upload(self, app):
        graph = app.ours._store.graph_def(CTX, "", wire.GraphRef("tf1_graph", "__run_graph__", wire.GraphKind.OP))
        response = app.post(OURS + "/upload", graph.SerializeToString(), filename="g.pb")
        assert response.status_code == 200
        assert response.get_json()["ops"] == len(graph.node)

    @pytest.mark.parametrize(
        "body, message",
        [
            (b"", "uploaded file 'bad' is empty"),
            (b"\x8a\xff\x00garbage\xfe", "uploaded file 'bad' is not a GraphDef: not a binary GraphDef"),
            (b"node { name: 'a' op: ", "uploaded file 'bad' is not a valid GraphDef pbtxt: 1:"),
            (b"hello world", "is not a valid GraphDef pbtxt"),
            (b'versions { producer: 1 }', "parses as a GraphDef but holds no nodes"),
        ],
    )
    def test_bad_upload_is_400_json(self, app, body, message):
        response = app.post(OURS + "/upload", body, filename="bad")
        assert response.status_code == 400
        assert response.mimetype == "application/json"
        assert message in response.get_json()["error"]

    def test_upload_over_limit(self, app):
        response = app.post(OURS + "/upload", b"node { name: 'a' }\n" * 60000, filename="big")
        assert response.status_code == 400
        assert "exceeds the limit of 1048576 bytes" in response.get_json()["error"]

    def test_upload_takes_post_only(self, app):
        response = app.get(OURS + "/upload")
        assert response.status_code == 405

    def test_unknown_upload_is_404(self, app):
        with pytest.raises(errors.NotFoundError, match="unknown upload 'deadbeef'"):
            app.ours._store.graph_def(CTX, "", wire.GraphRef("__upload__", "deadbeef", wire.GraphKind.OP))
