"""The op limit as an HTTP answer: ``ingest.parse.GraphTooLarge`` becomes a 413 ``PublicError``.

Imports no more than ``ingest.parse``: a worker process imports it too (its start-up is on
the cold path).

``GraphStore`` (uploads) and a worker (``check_ops``, given the limit with the graph) raise
``GraphTooLarge`` (data: what, ops, limit);
this module words it for the client (which flag sets the limit, what still works) and gives it
its HTTP code, so the route's ``ErrorAnswer`` (or a job's failure) carries both.
"""

from __future__ import annotations

from tensorboard import errors

from tb_graph_plugin.ingest import parse
from tb_graph_plugin.ingest.parse import GraphTooLarge

__all__ = ["GraphTooLargeError", "GraphTooDeepError", "check_ops"]


class GraphTooLargeError(errors.PublicError):
    """A graph with more ops than the server's ``--graph_explorer_max_ops`` (HTTP 413)."""

    error_code = "graph_too_large"
    http_code = 413

    def __init__(self, found: GraphTooLarge):
        super().__init__(
            f"{found.what} has {found.ops:,} ops, more than this server's limit of {found.limit:,}; "
            f"to open it, restart TensorBoard with --graph_explorer_max_ops={_raised(found.ops)} "
            "(the stock-compatible /graph route still serves its GraphDef)"
        )


class GraphTooDeepError(errors.PublicError):
    """A graph whose op names nest deeper than the hierarchy's limit (HTTP 413, like the op
    limit: a graph this server does not build); ``message`` says which op and how deep."""

    error_code = "graph_too_deep"
    http_code = 413

    def __init__(self, what: str, message: str):
        super().__init__(f"{what} cannot be shown: {message}")


def _raised(ops: int) -> int:
    """A limit that admits ``ops``: rounded up to two significant digits."""
    step = 10 ** max(len(str(ops)) - 2, 0)
    return -(-ops // step) * step


def check_ops(graph, what: str, max_ops: int) -> None:
    """The same check where only the limit is known (a worker, given ``max_ops`` with the graph)."""
    try:
        parse.check_op_limit(graph, what, max_ops)
    except GraphTooLarge as e:
        raise GraphTooLargeError(e) from None
