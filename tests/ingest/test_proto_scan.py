"""``proto_scan`` and ``run_metadata.single_graph_bytes``: the trace's GraphDef cut out of its
RunMetadata without parsing equals what the full parse and merge give."""

from __future__ import annotations

import pytest
from tensorboard.compat.proto import config_pb2, graph_pb2

from tb_graph_plugin.ingest import blobs, proto_scan, run_metadata
from tb_graph_plugin.ingest.local import open_logs
from tb_graph_plugin.ingest.store import _OP_GRAPH_NAMES


def _trace_blob(real_logs, kind: str, tag: str) -> bytes:
    logs = open_logs(str(real_logs[kind]))
    (run,) = [r.run for r in logs.listing().runs if any(t.tag == tag for t in r.tags)]
    return blobs.read_blob(logs.provider, logs.ctx, "", _OP_GRAPH_NAMES, run, tag, None)


def test_field_slices_of_a_message_written_by_protobuf():
    rm = config_pb2.RunMetadata()
    rm.step_stats.dev_stats.add().device = "/cpu:0"
    for name in ("a", "b"):
        rm.partition_graphs.add().node.add(name=name, op="NoOp")
    rm.function_graphs.add().pre_optimization_graph.node.add(name="f", op="Identity")
    blob = rm.SerializeToString()
    parts = proto_scan.field_slices(blob, 3)
    assert [graph_pb2.GraphDef.FromString(bytes(p)).node[0].name for p in parts] == ["a", "b"]
    (fg,) = proto_scan.field_slices(blob, 4)
    assert config_pb2.RunMetadata.FunctionGraphs.FromString(bytes(fg)) == rm.function_graphs[0]
    assert proto_scan.field_slices(blob, 5) == []


@pytest.mark.parametrize("damage", [lambda b: b[:-3], lambda b: b"\xff" * 12, lambda b: b"\x0b" + b])
def test_damaged_bytes_raise_value_error(damage):
    rm = config_pb2.RunMetadata()
    rm.function_graphs.add().pre_optimization_graph.node.add(name="f", op="Identity")
    with pytest.raises(ValueError):
        proto_scan.field_slices(damage(rm.SerializeToString()), 4)


def test_single_function_trace_is_cut_out_unparsed_and_equals_the_merge(real_logs):
    blob = _trace_blob(real_logs, "tf2_keras_trace", "train_step")
    single = run_metadata.single_graph_bytes(blob)
    assert single is not None and len(single) < len(blob) / 2  # not the partition/post copies
    assert isinstance(single, memoryview) and single.obj is blob  # a view into the blob, no copy
    merged = run_metadata.merge_function_graphs(run_metadata.parse_run_metadata(blob, "x"), "x")
    assert graph_pb2.GraphDef.FromString(single) == merged


def test_several_function_graphs_are_left_to_the_merge(real_logs):
    blob = _trace_blob(real_logs, "tf2_multi_function_trace", "multi_function")
    assert len(run_metadata.parse_run_metadata(blob, "x").function_graphs) > 1
    assert run_metadata.single_graph_bytes(blob) is None


def test_truncated_run_metadata_is_left_to_the_full_parse(real_logs):
    blob = _trace_blob(real_logs, "tf2_keras_trace", "train_step")
    assert run_metadata.single_graph_bytes(blob[: len(blob) // 2]) is None
