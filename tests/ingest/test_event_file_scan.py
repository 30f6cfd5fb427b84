"""``event_file._run_graph_record``: the wire scan of a run-graph Event gives what protobuf's own
parse gives (the oracle: ``Event.FromString``), and declines every other record."""

from __future__ import annotations

import struct

import pytest
from tensorboard.compat.proto import config_pb2, event_pb2, graph_pb2

from tb_graph_plugin.ingest import event_file
from tb_graph_plugin.ingest.crc32c import masked_crc32c



def _graph(name: str, op: str) -> bytes:
    graph = graph_pb2.GraphDef()
    graph.node.add(name=name, op=op)
    return graph.SerializeToString()


GRAPH, OTHER = _graph("a", "Const"), _graph("b", "Identity")


def _key(number: int, wire_type: int) -> bytes:
    return bytes([number << 3 | wire_type])


def _len_field(number: int, payload: bytes) -> bytes:
    assert len(payload) < 128
    return _key(number, 2) + bytes([len(payload)]) + payload


RUN_GRAPHS = {
    "as written": event_pb2.Event(wall_time=1.5, step=7, graph_def=GRAPH).SerializeToString(),
    "negative step": event_pb2.Event(wall_time=1.5, step=-3, graph_def=GRAPH).SerializeToString(),
    "step 0 omitted": event_pb2.Event(graph_def=GRAPH).SerializeToString(),
    "graph_def twice: the last wins": _len_field(4, GRAPH) + _len_field(4, OTHER),
    "step twice: the last wins": _key(2, 0) + b"\x05" + _len_field(4, GRAPH) + _key(2, 0) + b"\x09",
    "graph before wall_time": _len_field(4, GRAPH) + _key(1, 1) + struct.pack("<d", 2.0),
}
OTHER_RECORDS = {
    "file_version": event_pb2.Event(wall_time=1.0, file_version="brain.Event:2").SerializeToString(),
    "empty graph_def": _key(2, 0) + b"\x01" + _key(4, 2) + b"\x00",
    "summary after the graph (oneof: summary wins)": _len_field(4, GRAPH) + _len_field(5, b""),
    "graph then meta graph": _len_field(4, GRAPH) + _len_field(9, b""),
    "step with the wrong wire type": _len_field(2, b"\x01") + _len_field(4, GRAPH),
    "truncated": event_pb2.Event(step=1, graph_def=GRAPH).SerializeToString()[:-2],
    "garbage": b"\xff" * 12,
    "empty": b"",
}


@pytest.mark.parametrize("name", list(RUN_GRAPHS))
def test_run_graph_records_read_as_protobuf_reads_them(name):
    data = RUN_GRAPHS[name]
    event = event_pb2.Event.FromString(data)
    step, graph = event_file._run_graph_record(memoryview(data))
    assert (step, bytes(graph)) == (event.step, event.graph_def)
    assert event.WhichOneof("what") == "graph_def"


@pytest.mark.parametrize("name", list(OTHER_RECORDS))
def test_other_records_are_left_to_the_event_parse(name):
    assert event_file._run_graph_record(memoryview(OTHER_RECORDS[name])) is None


def _record(data: bytes) -> bytes:
    header = struct.pack("<Q", len(data))
    return header + struct.pack("<I", masked_crc32c(header)) + data + struct.pack("<I", masked_crc32c(data))


def _big_graph() -> bytes:
    """A GraphDef over ``event_file._LARGE`` bytes (a Const's tensor), so that its record is
    read by the scan inside ``graph_from_event_file``."""
    graph = graph_pb2.GraphDef()
    graph.node.add(name="w", op="Const").attr["value"].tensor.tensor_content = bytes(event_file._LARGE)
    return graph.SerializeToString()


@pytest.mark.parametrize("graph", [GRAPH, _big_graph()], ids=["small: parsed", "large: scanned"])
def test_event_file_opens_the_last_run_graph_with_its_negative_step(graph):
    first = event_pb2.Event(wall_time=1.0, step=1, graph_def=OTHER).SerializeToString()
    last = event_pb2.Event(wall_time=2.0, step=-3, graph_def=graph).SerializeToString()
    blob = b"".join(_record(r) for r in (OTHER_RECORDS["file_version"], first, last))
    found = event_file.graph_from_event_file(blob, "events.out.tfevents.x")
    assert found.source == "run graph (step -3)" and found.warnings == []
    assert found.graph.SerializeToString() == graph


def test_read_records_returns_views_of_the_file_for_large_records():
    big = event_pb2.Event(step=1, graph_def=_big_graph()).SerializeToString()
    small = RUN_GRAPHS["as written"]
    blob = _record(big) + _record(small) + _record(b"")
    records, problems = event_file.read_records(blob)
    assert problems == [] and [o for o, _ in records] == [0, 16 + len(big), 32 + len(big) + len(small)]
    assert isinstance(records[0][1], memoryview) and records[0][1].obj is blob
    assert [bytes(d) for _, d in records] == [big, small, b""]


def _trace_records(real_logs) -> list[tuple[str, bytes, bytes]]:
    """``(tag, record data, RunMetadata)`` of every trace the real TF2 trace logs hold."""
    from tb_graph_plugin import metadata

    found = []
    for kind in ("tf2_keras_trace", "tf2_multi_function_trace"):
        for path in real_logs.get(kind).rglob("events.out.tfevents.*"):
            for _, data in event_file.read_records(path.read_bytes())[0]:
                for value in event_pb2.Event.FromString(data).summary.value:
                    if value.metadata.plugin_data.plugin_name in (metadata.RUN_METADATA,
                                                                  metadata.RUN_METADATA_WITH_GRAPH):
                        found.append((value.tag, bytes(data), value.tensor.string_val[0]))
    return found


def test_trace_event_file_opens_the_merge_of_its_function_graphs(real_logs):
    """A trace of one function graph is cut out of its RunMetadata unparsed
    (``run_metadata.single_graph_bytes``), several are merged: either way the graph is the merge
    of the trace's parsed RunMetadata (the oracle). Each trace of the real logs alone in a file."""
    from tb_graph_plugin.ingest import run_metadata

    traces = _trace_records(real_logs)
    singles = [run_metadata.single_graph_bytes(rm) is not None for _, _, rm in traces]
    assert True in singles and False in singles, [(tag, single) for (tag, _, _), single in zip(traces, singles)]
    for tag, data, rm in traces:
        blob = _record(OTHER_RECORDS["file_version"]) + _record(data)
        found = event_file.graph_from_event_file(blob, "events.out.tfevents.x")
        assert found.source == f"trace {tag!r} (step {event_pb2.Event.FromString(data).step})"
        assert found.graph == run_metadata.merge_function_graphs(config_pb2.RunMetadata.FromString(rm), "x"), tag
