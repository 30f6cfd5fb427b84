"""GraphDef -> SlimGraph (no TensorBoard server dependency).

The pipeline, in order (each step timed into ``slim.timings``):

1. ``nodes.read_nodes``          NodeDefs + function library -> per-op columns
2. ``names.index_names``         name -> op id index, duplicate names
3. ``edges.read_edges``          ``^x`` / ``x:N`` inputs -> raw edges, dangling inputs
4. ``embeddings.place_embeddings`` embeddings beside their op, base edges
5. ``names.rename_namespace_clashes``  ``A`` -> ``A/(A)`` when ``A`` is also a namespace

Example::

    >>> from tensorboard.compat.proto import graph_pb2
    >>> g = graph_pb2.GraphDef()
    >>> a = g.node.add(name="a", op="Placeholder")
    >>> b = g.node.add(name="b", op="Relu", input=["a"])
    >>> slim = build_slim_graph(g)
    >>> slim.n_nodes, slim.n_edges
    (2, 1)
"""

from __future__ import annotations

import gc
import time
from typing import Optional

from tb_graph_plugin.graph import edges, embeddings, names, nodes
from tb_graph_plugin.graph.model import (
    BaseEdge,
    DanglingInput,
    FunctionInfo,
    OpNode,
    SlimGraph,
    SlimGraphOptions,
)

__all__ = [
    "build_slim_graph",
    "SlimGraph",
    "SlimGraphOptions",
    "OpNode",
    "BaseEdge",
    "DanglingInput",
    "FunctionInfo",
]


def build_slim_graph(graph_def, options: Optional[SlimGraphOptions] = None) -> SlimGraph:
    """Build the SlimGraph of a ``GraphDef`` (``tensorboard.compat.proto.graph_pb2``).

    Duplicate node names keep the first node in the index and are listed in
    ``slim.duplicate_names``; inputs naming absent nodes are in ``slim.dangling``.
    """
    options = options or SlimGraphOptions()
    was_enabled = gc.isenabled()
    gc.disable()  # millions of small containers, no cycles: GC passes cost O(heap) each
    try:
        return _build(graph_def, options)
    finally:
        if was_enabled:
            gc.enable()


def _build(graph_def, options: SlimGraphOptions) -> SlimGraph:
    slim = SlimGraph()
    t = slim.timings
    t0 = time.perf_counter()
    inputs = nodes.read_nodes(graph_def, slim, options.function_library)
    t1 = time.perf_counter()
    t["nodes"] = t1 - t0
    slim.duplicate_names = names.index_names(slim)
    t2 = time.perf_counter()
    t["index"] = t2 - t1
    raw = edges.read_edges(slim, inputs)
    t3 = time.perf_counter()
    t["edges"] = t3 - t2
    embeddings.place_embeddings(slim, options, *raw)
    t4 = time.perf_counter()
    t["embeddings"] = t4 - t3
    if options.rename_namespace_clashes:
        names.rename_namespace_clashes(slim)
    t["rename"] = time.perf_counter() - t4
    return slim
