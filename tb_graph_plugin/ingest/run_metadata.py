"""RunMetadata -> one GraphDef: merge the function graphs of a ``trace_export``.

Follows the stock plugin (``tensorboard/plugins/graph/graph_util.merge_graph_defs``), written
anew: one function graph is returned as it is; several get the name prefix ``graph_N/`` on node
names and inputs, and ``graph_N_`` on function names (library functions, gradients, and the
``f`` attr of ``PartitionedCall``), N counting from 1. The function library is kept.

One deliberate difference, unless ``stock_quirks`` is set: a control input ``^x`` becomes
``^graph_N/x``. The stock code prefixes the raw string (``graph_N/^x``), which turns every
control edge of a merged trace into a dangling input; the stock-compatible ``/graph`` route
keeps that behaviour so its answer equals the stock plugin's.

Pre-condition: ``run_metadata`` is a parsed ``RunMetadata``.
Post-condition: every node name of the result is unique when it was unique within its function
graph; raises ``errors.InvalidArgumentError`` when the graphs' ``versions.producer`` differ, or
when the RunMetadata holds no function graph at all (an empty trace).
"""

from __future__ import annotations

from typing import Optional

from tensorboard import errors
from tensorboard.compat.proto import config_pb2, graph_pb2

from tb_graph_plugin.ingest import proto_scan

__all__ = ["merge_function_graphs", "parse_run_metadata", "single_graph_bytes"]

# Field numbers of config.proto: RunMetadata.partition_graphs / function_graphs, and
# RunMetadata.FunctionGraphs.pre_optimization_graph.
_PARTITION_GRAPHS, _FUNCTION_GRAPHS, _PRE_OPTIMIZATION_GRAPH = 3, 4, 2


def single_graph_bytes(blob: bytes) -> Optional[memoryview]:
    """The serialized GraphDef ``merge_function_graphs`` would return as it is, cut out of the
    serialized RunMetadata without parsing or copying it (``proto_scan``: a view into ``blob``,
    which it keeps alive); None when the trace holds
    several graphs (they are merged from parsed protos) or the bytes are not a well-formed
    message (the full parse then reports the error).

    Post-condition: when not None, ``GraphDef.FromString(result)`` equals
    ``merge_function_graphs(parse_run_metadata(blob, ...), ...)`` for a single graph.
    """
    try:
        functions = proto_scan.field_slices(blob, _FUNCTION_GRAPHS)
        if functions:
            graphs = [proto_scan.field_slices(f, _PRE_OPTIMIZATION_GRAPH) for f in functions]
            return graphs[0][0] if len(graphs) == 1 and len(graphs[0]) == 1 else None
        partitions = proto_scan.field_slices(blob, _PARTITION_GRAPHS)
    except ValueError:
        return None
    return partitions[0] if len(partitions) == 1 else None


def parse_run_metadata(blob: bytes, what: str) -> config_pb2.RunMetadata:
    try:
        return config_pb2.RunMetadata.FromString(blob)
    except Exception as e:  # protobuf raises DecodeError, or others on garbage
        raise errors.InvalidArgumentError(f"malformed RunMetadata in {what}: {e}") from None


def merge_function_graphs(
    run_metadata: config_pb2.RunMetadata, what: str, stock_quirks: bool = False
) -> graph_pb2.GraphDef:
    graphs = [fg.pre_optimization_graph for fg in run_metadata.function_graphs]
    if not graphs:
        if run_metadata.partition_graphs:
            graphs = list(run_metadata.partition_graphs)
        else:
            raise errors.NotFoundError(
                f"{what} holds no function graph: trace_export wrote an empty trace. This "
                "happens when no tf.function ran between tf.summary.trace_on() and "
                "trace_export(), or when the function had already been traced before trace_on()."
            )
    if len(graphs) == 1:
        return graphs[0]
    merged = graph_pb2.GraphDef()
    if graphs[0].versions.producer:
        merged.versions.CopyFrom(graphs[0].versions)
    for index, graph in enumerate(graphs, start=1):
        if graph.versions.producer != merged.versions.producer:
            raise errors.InvalidArgumentError(
                f"{what}: cannot merge function graphs of different producer versions "
                f"({merged.versions.producer} and {graph.versions.producer} in graph {index})"
            )
        _add_prefixed(f"graph_{index}", graph, merged, stock_quirks)
    return merged


def _prefixed_input(prefix: str, name: str, stock_quirks: bool) -> str:
    if name.startswith("^") and not stock_quirks:
        return f"^{prefix}/{name[1:]}"
    return f"{prefix}/{name}"


def _add_prefixed(prefix: str, graph: graph_pb2.GraphDef, merged: graph_pb2.GraphDef, stock_quirks: bool) -> None:
    for node in graph.node:
        new = merged.node.add()
        new.CopyFrom(node)
        new.name = f"{prefix}/{node.name}"
        new.input[:] = [_prefixed_input(prefix, name, stock_quirks) for name in node.input]
        if new.op == "PartitionedCall" and new.attr["f"]:
            new.attr["f"].func.name = f"{prefix}_{new.attr['f'].func.name}"
    for function in graph.library.function:
        new_function = merged.library.function.add()
        new_function.CopyFrom(function)
        new_function.signature.name = f"{prefix}_{function.signature.name}"
    for gradient in graph.library.gradient:
        new_gradient = merged.library.gradient.add()
        new_gradient.CopyFrom(gradient)
        new_gradient.function_name = f"{prefix}_{gradient.function_name}"
        new_gradient.gradient_func = f"{prefix}_{gradient.gradient_func}"
