"""Bytes -> GraphDef: the serialized run graph, and graph files (uploads, local paths).

``read_graph_file`` is the one place a graph file's format is chosen, by its name and first
bytes, in this order (``GRAPH_FILE_FORMATS``, then GraphDef):

==============  ==========================================  =====================================
format          recognised by                               read by
==============  ==========================================  =====================================
torch.export    a zip archive (``pt2.looks_like_pt2``)       ``pt2.read_pt2``
``.pt2``
ONNX model      name ``*.onnx``, or a ModelProto's opening  ``onnx_model.read_onnx``
                bytes (``onnx_proto.looks_like_onnx``)
StableHLO text  name ``*.mlir``, or text opening with        ``stablehlo.read_stablehlo``
(``.mlir``)     ``module @`` / ``#loc`` holding ``func.func``
GraphDef        anything else: pbtxt (UTF-8 text) first,    ``parse_graph_file`` (this module)
                then binary ``.pb``
==============  ==========================================  =====================================

Event files are told apart before this (``event_file.looks_like_event_file``): they hold
graphs among other records. A new format is one more row of ``GRAPH_FILE_FORMATS``.

Post-condition: a parsed GraphDef, or ``errors.InvalidArgumentError`` whose message says what
the bytes are not (not a binary GraphDef, not UTF-8, the pbtxt line that failed, messages nested
deeper than ``nesting.MAX_PBTXT_DEPTH``, no nodes).
"""

from __future__ import annotations

from typing import Callable, Optional

from google.protobuf import message, text_format
from tensorboard import errors
from tensorboard.compat.proto import graph_pb2

from tb_graph_plugin.ingest import nesting
from tb_graph_plugin.ingest.too_large import GraphTooLarge  # re-exported: the readers raise it

__all__ = ["parse_graph_def", "parse_graph_file", "read_graph_file", "GraphTooLarge", "count_ops",
           "check_op_limit", "GRAPH_FILE_FORMATS"]


def count_ops(graph) -> int:
    """Ops of the graph and of its function library (the nodes the SlimGraph will hold): a
    ``GraphDef`` or an ``ingest.graph_encoding.EncodedGraphDef``."""
    return len(graph.nodes if hasattr(graph, "nodes") else graph.node) + sum(
        len(f.node_def) for f in graph.library.function)


def check_op_limit(graph, what: str, max_ops: int) -> None:
    """Raise ``GraphTooLarge`` when ``graph`` has more ops than ``max_ops``."""
    ops = count_ops(graph)
    if ops > max_ops:
        raise GraphTooLarge(what, ops, max_ops)


def parse_graph_def(blob, what: str) -> graph_pb2.GraphDef:
    """A serialized (binary) GraphDef, as written in ``Event.graph_def``: bytes, or a memoryview
    of them (protobuf 7's upb parser reads the buffer in place; older upb releases copy a
    memoryview into bytes first, which costs time, not correctness)."""
    try:
        return graph_pb2.GraphDef.FromString(blob)
    except (message.DecodeError, RuntimeError, ValueError) as e:
        raise errors.InvalidArgumentError(f"malformed GraphDef in {what}: {e}") from None


def _pt2_format():
    from tb_graph_plugin.ingest import pt2  # imported when a graph file is read

    return pt2.looks_like_pt2, pt2.read_pt2


def _onnx_format():
    from tb_graph_plugin.ingest import onnx_model  # imported when a graph file is read

    return onnx_model.looks_like_onnx, onnx_model.read_onnx


def _stablehlo_format():
    from tb_graph_plugin.ingest import stablehlo  # imported when a graph file is read

    return stablehlo.looks_like_stablehlo, stablehlo.read_stablehlo


# Graph file formats other than GraphDef: name -> () -> (recognise(blob, filename),
# read(blob, what, max_ops) -> (GraphDef, source)); tried in order.
GRAPH_FILE_FORMATS: dict[str, Callable[[], tuple[Callable, Callable]]] = {
    "pt2": _pt2_format,
    "onnx": _onnx_format,
    "stablehlo": _stablehlo_format,
}


def read_graph_file(blob, what: str, filename: Optional[str] = None,
                    max_ops: Optional[int] = None) -> tuple[graph_pb2.GraphDef, str]:
    """``(GraphDef, source)`` of a graph file of any format this plugin reads (see above).

    ``source`` says what was read (``graph file``, ``ONNX model (pytorch 2.13.0)``);
    ``max_ops`` lets a format that converts node by node refuse a graph before converting it
    (``GraphTooLarge``); callers still check the GraphDef (``check_op_limit``).
    """
    if not blob:
        raise errors.InvalidArgumentError(f"{what} is empty")
    for load in GRAPH_FILE_FORMATS.values():
        recognise, read = load()
        if recognise(blob, filename):
            return read(blob, what, max_ops)
    return _parse_graph_def_file(blob, what), "graph file"


def parse_graph_file(blob, what: str, filename: Optional[str] = None) -> graph_pb2.GraphDef:
    """The GraphDef of a graph file of any format (``read_graph_file`` without the source)."""
    return read_graph_file(blob, what, filename)[0]


def _parse_graph_def_file(blob: bytes, what: str) -> graph_pb2.GraphDef:
    """A GraphDef file of either format: pbtxt (UTF-8 text) or binary ``.pb``.

    Text is tried first when the bytes decode as UTF-8 and look like text; then binary. Text
    nested deeper than binary protobuf allows is refused before ``text_format`` recurses into it
    (``nesting.pbtxt_depth``).
    """
    text_error = None
    try:
        text = blob.decode("utf-8")
    except UnicodeDecodeError as e:
        text = None
        text_error = f"not UTF-8 text ({e.reason} at byte {e.start})"
    if text is not None and _looks_like_text(text):
        depth = nesting.pbtxt_depth(text)
        if depth > nesting.MAX_PBTXT_DEPTH:
            raise errors.InvalidArgumentError(
                f"{what} is not a GraphDef pbtxt this server reads: its messages nest {depth:,} levels "
                f"deep, more than the limit of {nesting.MAX_PBTXT_DEPTH} (protobuf's own for binary GraphDefs)"
            )
        graph = graph_pb2.GraphDef()
        try:
            text_format.Parse(text, graph)
        except text_format.ParseError as e:
            raise errors.InvalidArgumentError(f"{what} is not a valid GraphDef pbtxt: {e}") from None
        return _non_empty(graph, what)
    try:
        graph = graph_pb2.GraphDef.FromString(blob)
    except (message.DecodeError, RuntimeError, ValueError) as e:
        detail = f"; as text: {text_error}" if text_error else ""
        raise errors.InvalidArgumentError(
            f"{what} is not a GraphDef: not a binary GraphDef ({e}){detail}"
        ) from None
    return _non_empty(graph, what)


def _looks_like_text(text: str) -> bool:
    sample = text[:4096]
    return all(c.isprintable() or c in "\t\r\n" for c in sample)


def _non_empty(graph: graph_pb2.GraphDef, what: str) -> graph_pb2.GraphDef:
    if not graph.node and not graph.library.function:
        raise errors.InvalidArgumentError(f"{what} parses as a GraphDef but holds no nodes")
    if any(not node.name for node in graph.node):
        raise errors.InvalidArgumentError(f"{what} is not a GraphDef: a node has no name")
    return graph
