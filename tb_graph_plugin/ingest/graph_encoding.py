"""Bytes -> a GraphDef split into its NodeDefs' encodings, and their columns, by protobuf's C parser.

A worker never parses the whole GraphDef: upb keeps every message of a parse in one arena, ~660
bytes per op of a training step (93 MB at 141k ops, five times its encoding), and reading
NodeDef by NodeDef through protobuf's Python API costs ~0.35 us per field access: name, op,
device, the attr check and the inputs of a 141k-op training step take ~0.45 s, four times the
parse that made them. Here upb (protobuf's C parser) does that work, through two *projection*
messages declared in this module (same field numbers as ``GraphDef`` and ``NodeDef``, other
shapes):

1. ``GraphNodes {repeated bytes node = 1; bytes library = 2}``: the GraphDef's encoding read as
   this gives each NodeDef's encoding and the function library's (the other fields are skipped).
   The library, small, is parsed as a ``FunctionDefLibrary``.
2. ``NodeFields {repeated string name = 1, op = 2, input = 3, device = 4}``: those encodings,
   each preceded by a *marker* (``MARKER`` in each of the four fields), concatenated and read as
   one message. Repeated fields keep their order across a concatenation, so each list holds
   ``marker, node 0's values, marker, node 1's values, ...``: the markers say where each node's
   values start. A singular field written twice keeps its last value, as protobuf does. The
   inputs are handed on as read, markers included (``NodeColumns.input_marker``): the edge phase
   finds the markers in the same pass that looks the inputs up (``graph.edges``).
3. ``_output_shapes`` and ``_XlaCluster`` are attrs (field 5, skipped by the projection): only the
   nodes whose encoding holds either key's bytes are parsed, one NodeDef each, by the reader
   (``attr_nodes``; usually none, or every node of a TF1 graph written with shapes).

Follows protobuf's encoding rules ("Last One Wins" for a non-repeated field, concatenated
messages merge, https://protobuf.dev/programming-guides/encoding/).

Pre: ``blob`` is a serialized GraphDef (bytes or a memoryview).
Post: :func:`split_graph_def` returns an :class:`EncodedGraphDef` whose ``columns`` equal, field
for field, what reading the parsed ``GraphDef.node`` one NodeDef at a time gives
(``graph.nodes.read_node_protos``; the inputs with ``MARKER`` before each node's, where that
reader puts None), or are ``None`` when a value equals the marker (the reader then
parses NodeDef by NodeDef); or raises ``errors.InvalidArgumentError`` saying the bytes are not a
GraphDef (wire damage, or a name, op, input or device that is not UTF-8: the checks of a whole
parse, except inside attrs, which are parsed when a NodeDef is read).
"""

from __future__ import annotations

import dataclasses
import sys
from typing import Optional

import numpy as np
from google.protobuf import message
from tensorboard import errors
from tensorboard.compat.proto import function_pb2

__all__ = ["MARKER", "NodeColumns", "EncodedGraphDef", "split_graph_def"]

MARKER = "\x01"
"""The value placed before each node in each projected field; a real name, op, input or device
equal to it sends the graph to the NodeDef-by-NodeDef read."""

_ATTR_KEYS = (b"_output_shapes", b"_XlaCluster")
# field 1 name, 2 op, 3 input, 4 device, each the one-byte string MARKER (tag, length 1, byte)
_MARKERS = bytes([0x0A, 1, 1, 0x12, 1, 1, 0x1A, 1, 1, 0x22, 1, 1])

_classes = None


def _projections():
    """The two projection message classes (declared once per process, in their own pool)."""
    global _classes
    if _classes is None:
        from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

        f = descriptor_pb2.FileDescriptorProto(name="tb_graph_plugin_projection.proto",
                                               package="tb_graph_plugin_projection", syntax="proto3")
        graph = f.message_type.add(name="GraphNodes")
        graph.field.add(name="node", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_BYTES,
                        label=descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED)
        graph.field.add(name="library", number=2, type=descriptor_pb2.FieldDescriptorProto.TYPE_BYTES,
                        label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
        fields = f.message_type.add(name="NodeFields")
        for name, number in (("name", 1), ("op", 2), ("input", 3), ("device", 4)):
            fields.field.add(name=name, number=number, type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
                             label=descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED)
        pool = descriptor_pool.DescriptorPool()
        pool.Add(f)
        _classes = tuple(message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{f.package}.{m}"))
                         for m in ("GraphNodes", "NodeFields"))
    return _classes


@dataclasses.dataclass
class NodeColumns:
    """The columns of ``GraphDef.node`` (op id = position), as phase 1 stores them."""

    names: list  # str
    ops: list  # str, interned
    devices: list  # str (interned) or None
    inputs: list  # every op's raw input strings, op after op, each op's preceded by ``input_marker``
    input_marker: object  # a value no node name and no real input equals (``MARKER``, or None)
    attr_nodes: list  # ids of the ops whose encoding holds an ``_output_shapes`` / ``_XlaCluster`` key


@dataclasses.dataclass
class EncodedGraphDef:
    """A GraphDef as a worker holds it: each node's encoding, the parsed function library, and
    the nodes' columns (None when they could not be read in C)."""

    nodes: list  # bytes: each GraphDef.node's encoding, in order
    library: function_pb2.FunctionDefLibrary
    columns: Optional[NodeColumns]


def split_graph_def(blob, what: str) -> EncodedGraphDef:
    """The GraphDef ``blob`` (bytes or a memoryview), split and read (see the module docstring)."""
    graph_nodes, _ = _projections()
    try:
        graph = graph_nodes.FromString(blob)
        nodes = graph.node[:]  # a list (slicing is a little faster than list())
        library = function_pb2.FunctionDefLibrary.FromString(graph.library)
        del graph
        columns = _read_columns(nodes)
    except (message.DecodeError, RuntimeError, ValueError) as e:
        raise errors.InvalidArgumentError(f"malformed GraphDef in {what}: {e}") from None
    return EncodedGraphDef(nodes, library, columns)


def _last_values(values: list, n: int, default) -> Optional[list]:
    """Per node, its last value after its marker (``default`` when it has none)."""
    markers = values.count(MARKER)
    if markers != n:
        return None  # a real value equals the marker
    if len(values) == 2 * n and values[0::2].count(MARKER) == n:
        return values[1::2]  # the usual case: one value per node
    if len(values) == n:
        return [default] * n  # the usual case for devices: none written
    values = np.array(values, dtype=object)
    starts = np.flatnonzero(values == MARKER)
    last = np.append(starts[1:], len(values)) - 1
    out = values[last]
    out[last == starts] = default
    return out.tolist()


_CHUNK = 1 << 15  # nodes read per projection parse: the working set stays small (a 5M-op graph
# read in one go spent more time in fresh pages than in parsing). Not smaller: 8k nodes a parse
# took 15% fewer page faults and ~5% less CPU at 141k ops, but the worker kept 11 MB more after
# the build at 141k, 77 MB more at 1M (each chunk's dropped strings leave holes among the kept ones)


def _read_columns(nodes: list) -> Optional[NodeColumns]:
    """The columns of the NodeDefs encoded in ``nodes`` (see the module docstring), read
    ``_CHUNK`` nodes at a time."""
    out = NodeColumns([], [], [], [], MARKER, [])
    for start in range(0, len(nodes), _CHUNK):
        part = _read_chunk(nodes[start:start + _CHUNK], start)
        if part is None:
            return None
        out.names += part.names
        out.ops += part.ops
        out.devices += part.devices
        out.inputs += part.inputs
        out.attr_nodes += part.attr_nodes
    return out


def _read_chunk(nodes: list, first: int) -> Optional[NodeColumns]:
    """The columns of ``nodes``, op ids counted from ``first``."""
    n = len(nodes)
    _, node_fields = _projections()
    joined = _MARKERS + _MARKERS.join(nodes)
    fields = node_fields.FromString(joined)
    names = _last_values(fields.name[:], n, "")
    ops = _last_values(fields.op[:], n, "")
    # each node gives one marker: no more values than nodes means no device written (the usual case)
    devices = [None] * n if len(fields.device) == n else _last_values(fields.device[:], n, None)
    inputs = fields.input[:]  # each node's inputs after its marker: the edge phase splits them
    del fields
    if names is None or ops is None or devices is None or inputs.count(MARKER) != n:
        return None
    intern = sys.intern  # op types and devices repeat: one string each (~90 MB at 1M ops)
    ops = list(map(intern, ops))
    if any(devices):
        devices = [intern(d) if d else None for d in devices]
    elif devices.count(None) != n:  # devices written, all empty
        devices = [None] * n
    attr_nodes = [first + i for i in _attr_nodes(joined, nodes)]
    return NodeColumns(names, ops, devices, inputs, MARKER, attr_nodes)


def _attr_nodes(joined: bytes, nodes: list) -> list:
    """Ids of the nodes whose encoding (inside ``joined``) holds one of the attr keys' bytes."""
    hits = []
    for key in _ATTR_KEYS:
        at = joined.find(key)
        while at >= 0:
            hits.append(at)
            at = joined.find(key, at + 1)
    if not hits:
        return []
    ends = np.cumsum(np.fromiter(map(len, nodes), dtype=np.int64, count=len(nodes)) + len(_MARKERS))
    return np.unique(np.searchsorted(ends, np.asarray(hits), side="right")).tolist()
