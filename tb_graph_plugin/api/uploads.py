"""``/upload``: a graph file or event file posted by the client, kept by the store.

``upload_impl`` is the route's work without HTTP: it asks ``GraphStore.add_upload`` to parse
and keep the blob, and answers the ``Upload`` it returns as a ``wire.UploadAnswer``. Errors are
``PublicError``s: 400 for a blob over the size limit or that is no graph, 413 past the op limit.
"""

from __future__ import annotations

from tb_graph_plugin import wire
from tb_graph_plugin.api.limits import GraphTooLargeError
from tb_graph_plugin.ingest.store import GraphStore, GraphTooLarge

__all__ = ["upload_impl"]


def upload_impl(store: GraphStore, blob: bytes, filename: str) -> tuple[str, str]:
    """Keep the uploaded ``blob``; return ``(body, mime)``: the JSON ``UploadAnswer``."""
    try:
        upload = store.add_upload(blob, filename)
    except GraphTooLarge as e:
        raise GraphTooLargeError(e) from None
    answer = wire.UploadAnswer(graph=upload.ref, ops=upload.ops, warnings=list(upload.warnings),
                               source=upload.source)
    return wire.to_json(answer), "application/json"
