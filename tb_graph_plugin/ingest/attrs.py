"""Elide large attributes from a GraphDef before it is sent as pbtxt (the stock ``/graph``).

Follows ``tensorboard/backend/process_graph.prepare_graph_for_ui``, written anew, except that it
never mutates its input (graphs are cached and shared) and that bad parameters are a 400.

Pre-condition: ``limit_attr_size`` is None or an int; ``large_attrs_key`` a str or None.
Post-condition: returns ``graph`` itself when there is no limit; otherwise a copy in which every
attr whose serialized size exceeds the limit is removed and its key appended to the node's
``large_attrs_key`` attr (a list of strings).
"""

from __future__ import annotations

from typing import Optional

from tensorboard import errors
from tensorboard.compat.proto import graph_pb2

__all__ = ["limit_attr_size"]


def limit_attr_size(
    graph: graph_pb2.GraphDef, limit: Optional[int], large_attrs_key: Optional[str]
) -> graph_pb2.GraphDef:
    if limit is None:
        return graph
    if large_attrs_key is None:
        raise errors.InvalidArgumentError(
            "query parameter `large_attrs_key` is required when `limit_attr_size` is given"
        )
    if limit <= 0:
        raise errors.InvalidArgumentError(
            f"query parameter `limit_attr_size` must be > 0, got {limit}"
        )
    limited = graph_pb2.GraphDef()
    limited.CopyFrom(graph)
    for node in limited.node:
        for key in list(node.attr.keys()):
            size = node.attr[key].ByteSize()
            if size > limit:
                del node.attr[key]
                node.attr[large_attrs_key].list.s.append(key.encode("utf-8"))
    return limited
