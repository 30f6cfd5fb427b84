"""``GraphTooLarge``: a graph with more ops than ``--graph_explorer_max_ops``, raised while reading.

Its own module so that the graph file readers (``onnx_model``, ``stablehlo``), which
``parse.read_graph_file`` dispatches to, can raise it without importing ``parse`` back (``parse``
re-exports it for its callers).
"""

from __future__ import annotations

__all__ = ["GraphTooLarge"]


class GraphTooLarge(ValueError):
    """A graph with more ops than a limit (``--graph_explorer_max_ops``): ``what`` it is, its
    ``ops``, the ``limit``. Data only; ``api.limits`` words it as a 413."""

    def __init__(self, what: str, ops: int, limit: int):
        super().__init__(f"{what} has {ops:,} ops, more than the limit of {limit:,}")
        self.what, self.ops, self.limit = what, ops, limit
