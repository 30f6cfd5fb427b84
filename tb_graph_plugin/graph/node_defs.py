"""The NodeDef behind each op of a SlimGraph, kept parsed or as its encoding.

The info pane shows an op's attrs and the diff compares them, so a SlimGraph keeps each op's
``NodeDef``. Kept as parsed protos, they hold the whole parsed GraphDef alive: upb keeps every
message of a parse in one arena, ~660 bytes per op of a training step (93 MB at 141k ops, five
times its 19 MB encoding), plus a Python wrapper per op (~170 bytes). A worker needs one NodeDef at
a time (a click in the info pane), so it never parses the whole GraphDef
(``ingest.graph_encoding``): :meth:`NodeDefs.set_encodings` keeps each node's encoding, and a node
is parsed when it is asked for.

Ids are SlimGraph op ids: ``0 .. n_graph-1`` are ``GraphDef.node`` in order, then the nodes
appended one by one (function library nodes, or ``None`` for synthetic ops without a NodeDef).

Pre: ``set_graph`` (a parsed GraphDef) or ``set_encodings`` (its nodes' encodings) is called before
any ``append``.
Post: ``defs[i]`` is a ``NodeDef`` equal to the one op ``i`` was read from, or ``None``, whichever
way it is kept; ``present(i)`` says which without parsing; a node whose encoding protobuf cannot
parse (damage inside an attr, which splitting the GraphDef does not look into) raises
:class:`MalformedNodeDef`.
"""

from __future__ import annotations

from typing import Any, Iterator

from google.protobuf import message
from tensorboard.compat.proto import node_def_pb2

__all__ = ["NodeDefs", "MalformedNodeDef"]


class MalformedNodeDef(ValueError):
    """A kept NodeDef encoding that protobuf cannot parse: ``op`` is its op id."""

    def __init__(self, op: int, reason: str):
        super().__init__(f"the NodeDef of op {op} is malformed: {reason}")
        self.op = op


class NodeDefs:
    """A sequence of ``Optional[NodeDef]`` indexed by op id (see the module docstring)."""

    def __init__(self) -> None:
        self._graph: Any = ()  # GraphDef.node (parsed), or a list of each node's encoding
        self._encoded = False
        self._more: list = []  # ops n_graph..: NodeDef or None

    # ---- filling (graph.nodes) -----------------------------------------------------------
    def set_graph(self, graph_def) -> None:
        self._graph, self._encoded = graph_def.node, False

    def set_encodings(self, nodes: list) -> None:
        """``nodes[i]``: the encoding of ``GraphDef.node[i]`` (bytes), parsed when asked for."""
        self._graph, self._encoded = nodes, True

    def append(self, node_def) -> None:
        self._more.append(node_def)

    # ---- reading -------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._graph) + len(self._more)

    def present(self, i: int) -> bool:
        """True when op ``i`` has a NodeDef (no parse)."""
        n = len(self._graph)
        return i < n or self._more[i - n] is not None

    def __getitem__(self, i: int):
        if i < 0:
            i += len(self)
        n = len(self._graph)
        if i >= n:
            return self._more[i - n]
        if not self._encoded:
            return self._graph[i]
        return self.parse(i)

    def encoding(self, i: int):
        """Op ``i``'s kept encoding (bytes), or None when the NodeDefs are kept parsed or op ``i``
        was appended (no parse)."""
        return self._graph[i] if self._encoded and 0 <= i < len(self._graph) else None

    def parse(self, i: int):
        """Op ``i``'s NodeDef parsed from its kept encoding (``i`` < the graph's node count)."""
        try:
            return node_def_pb2.NodeDef.FromString(self._graph[i])
        except (message.DecodeError, RuntimeError) as e:
            raise MalformedNodeDef(i, str(e)) from None

    def __iter__(self) -> Iterator:
        if self._encoded:
            yield from map(self.parse, range(len(self._graph)))
        else:
            yield from self._graph
        yield from self._more
