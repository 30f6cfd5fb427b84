"""The NodeDef behind each op of a SlimGraph, kept parsed or serialized.

The info pane shows an op's attrs and the diff compares them, so a SlimGraph keeps each op's
``NodeDef``. Kept as parsed protos, they hold the whole parsed GraphDef alive: upb keeps every
message of a parse in one arena, ~660 bytes per op of a training step (93 MB at 141k ops, five
times its 19 MB encoding), plus a Python wrapper per op (~170 bytes). A worker that has built its
graph needs one NodeDef at a time (a click in the info pane), so :meth:`NodeDefs.keep_serialized`
swaps the parsed GraphDef for its encoding and the offsets of its nodes (found on first use,
``ingest.proto_scan.field_spans``; 0.2 s at 141k ops), and parses a node when it is asked for.

Ids are SlimGraph op ids: ``0 .. n_graph-1`` are ``GraphDef.node`` in order, then the nodes
appended one by one (function library nodes, or ``None`` for synthetic ops without a NodeDef).

Pre: ``set_graph`` is given the GraphDef the SlimGraph reads, before any ``append``.
Post: ``defs[i]`` is a ``NodeDef`` equal to the one op ``i`` was read from, or ``None``, whether
kept parsed or serialized; ``present(i)`` says which without parsing.
"""

from __future__ import annotations

from typing import Any, Iterator, Optional

from tensorboard.compat.proto import graph_pb2, node_def_pb2

__all__ = ["NodeDefs"]

_GRAPH_NODE_FIELD = 1  # GraphDef.node


class NodeDefs:
    """A sequence of ``Optional[NodeDef]`` indexed by op id (see the module docstring)."""

    def __init__(self) -> None:
        self._graph_def: Any = None  # parsed GraphDef whose node[i] is op i (i < n_graph)
        self._n_graph = 0
        self._blob: Optional[bytes] = None  # its encoding, once kept serialized
        self._spans: Optional[tuple] = None  # (starts, ends) of each node in _blob, found on first use
        self._more: list = []  # ops n_graph..: NodeDef, its encoding (bytes) once serialized, or None

    # ---- filling (graph.nodes) -----------------------------------------------------------
    def set_graph(self, graph_def) -> None:
        self._graph_def, self._n_graph = graph_def, len(graph_def.node)

    def append(self, node_def) -> None:
        self._more.append(node_def)

    # ---- reading -------------------------------------------------------------------------
    def __len__(self) -> int:
        return self._n_graph + len(self._more)

    def present(self, i: int) -> bool:
        """True when op ``i`` has a NodeDef (no parse)."""
        return i < self._n_graph or self._more[i - self._n_graph] is not None

    def __getitem__(self, i: int):
        if i < 0:
            i += len(self)
        if i < self._n_graph:
            if self._graph_def is None and self.index() is not None:
                start, end = self._spans
                return node_def_pb2.NodeDef.FromString(memoryview(self._blob)[int(start[i]):int(end[i])])
            return self._graph_def.node[i]
        kept = self._more[i - self._n_graph]
        if isinstance(kept, bytes):
            return node_def_pb2.NodeDef.FromString(kept)
        return kept

    def __iter__(self) -> Iterator:
        if self._graph_def is None and self._n_graph:  # one parse for a whole pass
            yield from graph_pb2.GraphDef.FromString(self._blob).node
        else:
            yield from (self._graph_def.node if self._n_graph else ())
        for k in range(len(self._more)):
            yield self[self._n_graph + k]

    # ---- memory --------------------------------------------------------------------------
    def index(self) -> Optional[tuple]:
        """Find where each graph node lies in the kept encoding (once; None while kept parsed).
        A worker calls it after its first answer, so that the first info-pane click does not."""
        if self._spans is None and self._blob is not None:
            from tb_graph_plugin.ingest import proto_scan

            try:
                spans = proto_scan.field_spans(self._blob, _GRAPH_NODE_FIELD)
            except ValueError:  # fields our scan does not walk (groups) that protobuf skipped
                spans = None
            if spans is None or len(spans[0]) != self._n_graph:  # kept parsed after all
                self._graph_def = graph_pb2.GraphDef.FromString(self._blob)
                self._blob = None
                return None
            self._spans = spans
        return self._spans

    def keep_serialized(self, blob=None) -> None:
        """Drop every reference to the parsed protos: graph nodes are parsed again from ``blob``
        (the GraphDef's encoding: the bytes it was parsed from; default, serialize it now), the
        appended ones from their own encoding. The parsed GraphDef's arena is freed once its
        last holder lets go."""
        if self._graph_def is None:
            return
        if blob is None:
            blob = self._graph_def.SerializeToString()
        elif isinstance(blob, memoryview):
            blob = bytes(blob)  # not the buffer it may view (an uploaded event file)
        self._blob = blob
        self._more = [nd if nd is None else nd.SerializeToString() for nd in self._more]
        self._graph_def = None
