"""An uploaded event file (``events.out.tfevents.*``) -> its graph, skipping broken records.

TensorBoard's readers (the Python multiplexer and the Rust data server) stop reading an event
file at its first corrupt record: everything written after it is silently missing from every
dashboard. For a file the user uploads we read the TFRecord framing ([TFRECORD]) ourselves
(``tensorflow/core/lib/io/record_reader.cc``: ``uint64 length, uint32 masked_crc32c(length),
data[length], uint32 masked_crc32c(data)``), keep every intact record, and say which bytes were
skipped and why.

The phases, in order (``graph_from_event_file``): ``read_records`` (framing and checksums; the
records stay views of the upload), ``_collect`` (the graphs the records hold: a run-graph record
by a wire scan of its Event, [PROTO-ENC]; any other record parsed as an Event), ``_open_latest``
(the one graph parsed; a trace of one function graph is cut out of its RunMetadata unparsed,
``run_metadata.single_graph_bytes``). A 50 MB run graph is thus read without a single copy of it before the
GraphDef parse (which takes the view); records under 64 KiB are copied and parsed as before.

Pre-condition: ``blob`` is the whole file (``bytes``; other bytes-like objects work, not mutated
meanwhile, with more copies).
Post-conditions of ``read_records``: every returned record passed both checksums; every byte
not in a returned record is accounted for by exactly one ``problems`` entry (bad length
checksum and the bytes skipped to the next valid header, bad data checksum, truncated tail).
``graph_from_event_file`` returns the file's last run graph, else its last trace (function graphs
merged), else its Keras model, with the record problems, the records that are no Event (and
the other kinds of graph the file holds, when there are) as warnings;
or raises ``errors.InvalidArgumentError`` saying why no graph could be read.
"""

from __future__ import annotations

import dataclasses
import struct
from typing import Optional

import numpy as np
from google.protobuf import message
from tensorboard import errors
from tensorboard.compat.proto import event_pb2, graph_pb2

from tb_graph_plugin import metadata
from tb_graph_plugin.ingest import keras_model, parse, proto_scan, run_metadata
from tb_graph_plugin.ingest.crc32c import masked_crc32c, masked_crc32c_rows

__all__ = ["EventFileGraph", "graph_from_event_file", "looks_like_event_file", "read_records"]

_HEADER = struct.Struct("<QI")
_FOOTER = struct.Struct("<I")
_FRAME = _HEADER.size + _FOOTER.size  # 16 bytes around each record's data
_SCAN_WINDOW = 1 << 20  # candidate header offsets checked per numpy step
_OP_GRAPH_NAMES = (metadata.RUN_METADATA_WITH_GRAPH, metadata.RUN_METADATA)
# Event fields (TensorBoard's ``compat/proto/event.proto``) of a run-graph record: wall_time, step, graph_def.
_STEP, _GRAPH_DEF = 2, 4
_RUN_GRAPH_FIELDS = {1: proto_scan.I64, _STEP: proto_scan.VARINT, _GRAPH_DEF: proto_scan.LEN}
_U64 = (1 << 64) - 1
# Records from this size up stay views of the upload and are scanned for a run graph before any
# parse; smaller ones are copied and parsed (a copy and an Event parse are cheaper there).
_LARGE = 1 << 16


@dataclasses.dataclass
class EventFileGraph:
    graph: graph_pb2.GraphDef
    source: str  # which record the graph came from, e.g. "trace 'train' step 3"
    warnings: list[str]


def looks_like_event_file(blob: bytes, filename: str = "") -> bool:
    """True for TFRecord framing whose first record is an Event with ``file_version``."""
    if "tfevents" in filename:
        return True
    if len(blob) < _FRAME:
        return False
    length, length_crc = _HEADER.unpack_from(blob, 0)
    if masked_crc32c(blob[:8]) != length_crc or length > len(blob) - _FRAME:
        return False
    try:
        event = event_pb2.Event.FromString(memoryview(blob)[12:12 + length])
    except message.DecodeError:
        return False
    return event.file_version.startswith("brain.Event:")


def _next_header(blob: bytes, start: int) -> int:
    """Offset of the first valid record header at or after ``start``; ``len(blob)`` if none.

    Vectorized over windows of candidate offsets: a header is valid when its length fits in the
    rest of the file and its length checksum matches.
    """
    n = len(blob)
    data = np.frombuffer(blob, dtype=np.uint8)
    if n - start < _FRAME:
        return n
    headers = np.lib.stride_tricks.sliding_window_view(data, _HEADER.size)
    last = n - _FRAME  # the last offset where an empty record could start
    for lo in range(start, last + 1, _SCAN_WINDOW):
        window = headers[lo:min(last + 1, lo + _SCAN_WINDOW)]
        offsets = np.arange(lo, lo + len(window), dtype=np.int64)
        lengths = window[:, :8].copy().view("<u8").ravel()
        stored = window[:, 8:].copy().view("<u4").ravel()
        fits = lengths.astype(np.float64) <= (n - offsets - _FRAME)
        hits = np.flatnonzero(fits & (masked_crc32c_rows(window[:, :8]) == stored))
        if len(hits):
            return int(offsets[hits[0]])
    return n


def read_records(blob: bytes) -> tuple[list[tuple[int, memoryview | bytes]], list[str]]:
    """The intact records as ``(offset, data)``, and one message per skipped stretch of bytes.

    ``data`` of a record of ``_LARGE`` bytes or more is a zero-copy memoryview of ``blob`` (a 50
    MB record is never copied here; its checksum is computed through the view,
    ``crc32c.masked_crc32c``); a smaller record is a copy (``bytes``), cheaper than a view there.
    """
    view = memoryview(blob)
    records, problems = [], []
    n, offset = len(blob), 0
    while offset < n:
        if n - offset < _HEADER.size:
            problems.append(f"truncated record header at byte {offset}: the last {n - offset} bytes were skipped")
            break
        length, length_crc = _HEADER.unpack_from(blob, offset)
        if masked_crc32c(blob[offset:offset + 8]) != length_crc:
            resume = _next_header(blob, offset + 1)
            problems.append(
                f"corrupt record header at byte {offset} (length checksum mismatch): "
                f"bytes {offset}..{resume} were skipped"
            )
            offset = resume
            continue
        end = offset + _HEADER.size + length + _FOOTER.size
        if end > n:
            problems.append(
                f"truncated record at byte {offset}: it declares {length} bytes but the file ends "
                f"after {n - offset - _HEADER.size}; the record was skipped"
            )
            break
        data = (view if length >= _LARGE else blob)[offset + _HEADER.size:end - _FOOTER.size]
        if masked_crc32c(data) != _FOOTER.unpack_from(blob, end - _FOOTER.size)[0]:
            problems.append(f"corrupt record at byte {offset} ({length} bytes, data checksum mismatch) was skipped")
        else:
            records.append((offset, data))
        offset = end
    return records, problems


def _run_graph_record(data: memoryview) -> Optional[tuple[int, memoryview]]:
    """``(step, graph_def)`` of a record that is a run-graph Event, read by the wire scan.

    What ``tf.summary.graph`` and ``FileWriter.add_graph`` write: an Event whose top-level fields
    are only ``wall_time`` (1, 8 bytes), ``step`` (2, varint) and a non-empty ``graph_def`` (4,
    length-delimited) ([PROTO-ENC]; TensorBoard's ``event.proto``). Parsing that Event would copy
    the graph, and reading ``event.graph_def`` copy it again; here it stays a view of the record.

    Post-condition: None for any other record (or bytes that are no well-formed message), which
    is then parsed as an Event; else equal to ``(event.step, event.graph_def)`` of
    ``Event.FromString(data)``: the last occurrence of a field wins, ``step`` is a two's
    complement int64, and such an Event cannot fail to parse (no sub-message, no UTF-8 string).
    """
    step, graph = 0, None
    try:
        for number, wire_type, value in proto_scan.fields(data):
            if _RUN_GRAPH_FIELDS.get(number) != wire_type:
                return None
            if number == _STEP:
                step = value & _U64
                step = step - (1 << 64) if step >> 63 else step
            elif number == _GRAPH_DEF:
                graph = value
    except ValueError:
        return None
    return (step, graph) if graph is not None and len(graph) else None


def _summary_blobs(event: event_pb2.Event):
    for value in event.summary.value:
        plugin = value.metadata.plugin_data.plugin_name
        if plugin in metadata.DATA_PLUGIN_NAMES and value.tensor.string_val:
            yield plugin, value.tag, value.tensor.string_val[0]


@dataclasses.dataclass
class _Found:
    """The graphs of an event file in record order: run graphs ``(step, payload)``, traces and
    Keras models ``(tag, step, payload)``; payloads serialized (bytes or views of the file)."""

    run_graphs: list = dataclasses.field(default_factory=list)
    traces: list = dataclasses.field(default_factory=list)
    keras: list = dataclasses.field(default_factory=list)


def _collect(records: list[tuple[int, memoryview]], warnings: list[str]) -> _Found:
    """Every graph the intact ``records`` hold; a record that is not an Event adds a warning.

    A run-graph record of at least ``_LARGE`` bytes is read by ``_run_graph_record``; every
    other record is parsed as an Event (same result: below that size the scan in Python costs
    more than the copies it saves, ~10 us a record against ~1 us).
    """
    found = _Found()
    for offset, data in records:
        run_graph = _run_graph_record(data) if len(data) >= _LARGE else None
        if run_graph is not None:
            found.run_graphs.append(run_graph)
            continue
        try:
            event = event_pb2.Event.FromString(data)
        except message.DecodeError as e:
            warnings.append(f"record at byte {offset} is not an Event ({e}) and was skipped")
            continue
        graph_def = event.graph_def  # read once: every access copies the bytes (50 MB: 0.1 s)
        if graph_def:
            found.run_graphs.append((event.step, graph_def))
        elif event.HasField("meta_graph_def") and not found.run_graphs:
            meta = _meta_graph(event.meta_graph_def)
            if meta is not None:
                found.run_graphs.append((event.step, meta))
        for plugin, tag, payload in _summary_blobs(event):
            if plugin in _OP_GRAPH_NAMES:
                found.traces.append((tag, event.step, payload))
            elif plugin == metadata.KERAS_MODEL:
                found.keras.append((tag, event.step, payload))
    return found


def _open_latest(found: _Found, what: str) -> Optional[tuple[graph_pb2.GraphDef, str]]:
    """``(graph, source)``: the last run graph, else the last trace (function graphs merged),
    else the last Keras model; None when ``found`` holds none."""
    if found.run_graphs:
        step, payload = found.run_graphs[-1]
        return parse.parse_graph_def(payload, f"{what}, run graph step {step}"), f"run graph (step {step})"
    if found.traces:
        tag, step, payload = found.traces[-1]
        trace = f"{what}, trace {tag!r} step {step}"
        single = run_metadata.single_graph_bytes(payload)  # one function graph: cut out, unparsed
        if single is not None:
            graph = parse.parse_graph_def(single, trace)
        else:
            rm = run_metadata.parse_run_metadata(payload, trace)
            graph = run_metadata.merge_function_graphs(rm, trace, False)
        return graph, f"trace {tag!r} (step {step})"
    if found.keras:
        tag, step, payload = found.keras[-1]
        graph = keras_model.keras_json_to_graph_def(payload, f"{what}, Keras model {tag!r}")
        return graph, f"Keras model {tag!r} (step {step}), conceptual graph"
    return None


def graph_from_event_file(blob, filename: str) -> EventFileGraph:
    """The graph to open from an uploaded event file (see the module docstring for the choice)."""
    what = f"uploaded event file {filename!r}"
    records, problems = read_records(blob)
    warnings = list(problems)
    found = _collect(records, warnings)
    opened = _open_latest(found, what)
    if opened is None:
        detail = f"; {len(problems)} damaged stretch(es): " + "; ".join(problems[:3]) if problems else ""
        raise errors.InvalidArgumentError(
            f"{what} holds no graph ({len(records)} intact records, none with a run graph, a "
            f"trace_export graph or a Keras model){detail}"
        )
    graph, source = opened
    kinds = (found.run_graphs, found.traces, found.keras)
    if sum(1 for kind in kinds if kind) > 1:
        counts = (f"{len(found.run_graphs)} run graph(s), {len(found.traces)} trace graph(s), "
                  f"{len(found.keras)} Keras model(s)")
        warnings.append(f"the file holds {counts}; showing the {source}")
    return EventFileGraph(graph=graph, source=source, warnings=warnings)


def _meta_graph(payload: bytes):
    from tensorboard.compat.proto import meta_graph_pb2

    try:
        meta = meta_graph_pb2.MetaGraphDef.FromString(payload)
    except message.DecodeError:
        return None
    return meta.graph_def.SerializeToString() if meta.HasField("graph_def") else None
