"""The stock Graphs plugin's HTTP API, served by our code: ``/info``, ``/graph``, ``/run_metadata``.

Each ``*_impl`` returns ``(body, mime_type)`` and is testable without HTTP. Bodies equal the stock
plugin's for the same data (pbtxt as ``text/x-protobuf``); errors say their cause.
"""

from __future__ import annotations

from typing import Optional

from tb_graph_plugin import metadata
from tb_graph_plugin import wire
from tb_graph_plugin.ingest import attrs, listing
from tb_graph_plugin.ingest.store import GraphStore

__all__ = ["info_impl", "graph_impl", "run_metadata_impl"]

PBTXT_MIME = "text/x-protobuf"


def info_impl(store: GraphStore, data_provider, ctx, experiment_id):
    return listing.info(data_provider, ctx, experiment_id), "application/json"


def graph_impl(
    store: GraphStore,
    ctx,
    experiment_id,
    run: str,
    tag: Optional[str],
    conceptual: bool,
    limit_attr_size: Optional[int] = None,
    large_attrs_key: Optional[str] = None,
):
    """Stock semantics: no tag = the run graph; ``conceptual`` = the Keras model of the tag."""
    if conceptual:
        ref = wire.GraphRef(run, tag or "", wire.GraphKind.CONCEPTUAL)
    else:
        ref = wire.GraphRef(run, tag or metadata.RUN_GRAPH_TAG, wire.GraphKind.OP)
    graph = store.graph_def(ctx, experiment_id, ref, stock_quirks=True)
    graph = attrs.limit_attr_size(graph, limit_attr_size, large_attrs_key)
    return str(graph), PBTXT_MIME


def run_metadata_impl(store: GraphStore, ctx, experiment_id, run: str, tag: str):
    return str(store.run_metadata(ctx, experiment_id, run, tag)), PBTXT_MIME
