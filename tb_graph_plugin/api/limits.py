"""The op limit as an HTTP answer: ``ingest.store.GraphTooLarge`` becomes a 413 ``PublicError``.

``GraphStore`` knows its ``max_ops`` and raises ``GraphTooLarge`` (data: what, ops, limit);
this module words it for the client (which flag sets the limit, what still works) and gives it
its HTTP code, so the route's ``ErrorAnswer`` (or a job's failure) carries both.
"""

from __future__ import annotations

from tensorboard import errors
from tensorboard.compat.proto import graph_pb2

from tb_graph_plugin.ingest.store import GraphStore, GraphTooLarge

__all__ = ["GraphTooLargeError", "check_op_limit"]


class GraphTooLargeError(errors.PublicError):
    """A graph with more ops than the server's ``--graph_explorer_max_ops`` (HTTP 413)."""

    error_code = "graph_too_large"
    http_code = 413

    def __init__(self, found: GraphTooLarge):
        super().__init__(
            f"{found.what} has {found.ops:,} ops, more than this server's limit of {found.limit:,} "
            "(TensorBoard flag --graph_explorer_max_ops); the stock-compatible /graph route still "
            "serves its GraphDef"
        )


def check_op_limit(store: GraphStore, graph: graph_pb2.GraphDef, what: str) -> None:
    """``store.check_op_limit``, raising ``GraphTooLargeError`` (413) past the limit."""
    try:
        store.check_op_limit(graph, what)
    except GraphTooLarge as e:
        raise GraphTooLargeError(e) from None
