"""GraphDef -> SlimGraph (no TensorBoard server dependency).

The pipeline is the list :data:`PIPELINE`, in order (each step timed into ``slim.timings``):

1. ``nodes.read_nodes``          NodeDefs + function library -> per-op columns
2. ``names.index_names``         name -> op id index, duplicate names
3. ``edges.read_edges``          ``^x`` / ``x:N`` inputs -> raw edges, dangling inputs
4. ``embeddings.place_embeddings`` embeddings beside their op, base edges
5. ``plumbing.place_plumbing``  PyTorch tuple/list plumbing renamed into its producers' scope
   (when ``options.place_plumbing``)
6. ``names.main_op_scopes``    the scope directly holding each MAIN op (its name cut at the last ``/``)
7. ``names.rename_namespace_clashes``  ``A`` -> ``A/(A)`` when ``A`` is also a namespace
   (when ``options.rename_namespace_clashes``)
8. ``names.index_scopes``      those scopes numbered: ``slim.op_scopes``, what ``hierarchy.scopes`` reads

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

import dataclasses
import gc
from typing import Any, Optional

from tb_graph_plugin.graph import edges, embeddings, names, nodes, plumbing
from tb_graph_plugin.graph.model import (
    BaseEdge,
    DanglingInput,
    FunctionInfo,
    OpNode,
    SlimGraph,
    SlimGraphOptions,
)
from tb_graph_plugin.pipeline import Pipeline, Step

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
    """Build the SlimGraph of a ``GraphDef`` (``tensorboard.compat.proto.graph_pb2``), or of
    an ``ingest.graph_encoding.EncodedGraphDef`` (a worker's: same SlimGraph, no whole parse).
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


@dataclasses.dataclass
class _Build:
    """The state the steps pass along: the input, the SlimGraph being filled, intermediates."""

    graph_def: Any
    options: SlimGraphOptions
    slim: SlimGraph
    inputs: Optional[tuple] = None  # every op's raw input strings, each op's after a marker, and the
    # marker (``nodes`` -> ``edges``)
    raw_edges: Optional[tuple] = None  # edge columns before embeddings are placed
    main_scopes: Optional[tuple] = None  # MAIN op ids and the scope of each (``main_scopes`` -> ``op_scopes``)


def _read_nodes(b: _Build) -> None:
    b.inputs = nodes.read_nodes(b.graph_def, b.slim, b.options.function_library)


def _index_names(b: _Build) -> None:
    b.slim.duplicate_names = names.index_names(b.slim, list(range(b.slim.n_nodes)))


def _read_edges(b: _Build) -> None:
    b.raw_edges = edges.read_edges(b.slim, *b.inputs)
    b.inputs = None


def _place_embeddings(b: _Build) -> None:
    embeddings.place_embeddings(b.slim, b.options, *b.raw_edges)
    b.raw_edges = None


def _main_op_scopes(b: _Build) -> None:
    b.main_scopes = names.main_op_scopes(b.slim)


def _index_scopes(b: _Build) -> None:
    names.index_scopes(b.slim, *b.main_scopes)
    b.main_scopes = None


PIPELINE: Pipeline[_Build] = Pipeline("graph", [
    Step("nodes", _read_nodes),
    Step("index", _index_names),
    Step("edges", _read_edges),
    Step("embeddings", _place_embeddings),
    Step("plumbing", lambda b: plumbing.place_plumbing(b.slim), when=lambda b: b.options.place_plumbing),
    Step("main_scopes", _main_op_scopes),
    Step("rename", lambda b: names.rename_namespace_clashes(b.slim, *b.main_scopes),
         when=lambda b: b.options.rename_namespace_clashes),
    Step("op_scopes", _index_scopes),
])


def _build(graph_def, options: SlimGraphOptions) -> SlimGraph:
    slim = SlimGraph()
    PIPELINE.run(_Build(graph_def, options, slim), timings=slim.timings)
    return slim
