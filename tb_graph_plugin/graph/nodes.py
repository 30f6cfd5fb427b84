"""Phase 1 of GraphDef -> SlimGraph: read the NodeDefs (and the function library) into columns.

Follows the "GraphDef -> SlimGraph" section of TensorBoard's Graph dashboard docs
([TB-GRAPH-DOC]): devices, ``_XlaCluster``, ``_output_shapes`` -> tensor shapes (and ours:
``_kernel``, read from the NodeDefs that have ``_output_shapes`` or ``_XlaCluster``); library
functions become ``__function_library__<fn>/...`` nodes, input args (op ``input_arg``, with
``functionInputIndex``) and output args (op ``output_arg``, ``functionOutputIndex``, fed by
the function's ``ret`` tensor).

Pre-condition: ``graph`` is a parsed ``GraphDef``, or an ``ingest.graph_encoding.EncodedGraphDef``
(a worker's: its columns are read in C already, and the NodeDefs kept as encodings).
Post-condition: every per-op column of ``slim`` has one entry per NodeDef (GraphDef order,
then library nodes); ``slim.names == slim.original_names``; the raw input strings are
returned for the edge phase (all of them op after op, each op's preceded by a *marker*, a value
no node name and no real input equals: ``ingest.graph_encoding.MARKER`` as read in C, None as
read here), with that marker; shapes are tuples of ints (-1 unknown) or None for unknown rank.
"""

from __future__ import annotations

import sys
from typing import Optional

from tb_graph_plugin.graph.model import FUNCTION_LIBRARY_PREFIX, FunctionInfo, SlimGraph
from tb_graph_plugin.ingest.graph_encoding import EncodedGraphDef, NodeColumns

__all__ = ["read_nodes", "read_node_protos"]


def _shapes(node) -> Optional[list]:
    attr = node.attr
    if "_output_shapes" not in attr:
        return None
    out = []
    for shape in attr["_output_shapes"].list.shape:
        if shape.unknown_rank:
            out.append(None)
        else:
            out.append(tuple(d.size for d in shape.dim))
    return out


def _xla_cluster(node) -> Optional[str]:
    attr = node.attr
    if "_XlaCluster" in attr:
        return attr["_XlaCluster"].s.decode("utf-8", "replace") or None
    return None


def _kernel(node) -> Optional[str]:
    attr = node.attr
    if "_kernel" in attr:
        return attr["_kernel"].s.decode("utf-8", "replace") or None
    return None


def _append(slim: SlimGraph, name: str, op: str, device: Optional[str], xla, shapes, node_def,
            function: Optional[str]) -> int:
    i = len(slim.names)
    slim.names.append(name)
    slim.original_names.append(name)
    slim.ops.append(op)
    slim.devices.append(device)
    slim.xla_clusters.append(xla)
    slim.kernels.append(None)
    slim.output_shapes.append(shapes)
    slim.node_defs.append(node_def)
    slim.functions_of.append(function)
    if shapes is not None:
        slim.has_shape_info = True
    return i


def read_nodes(graph, slim: SlimGraph, function_library: bool = True) -> tuple[list, object]:
    """Fill the per-op columns of ``slim`` from ``graph``, a parsed ``GraphDef`` or an
    ``ingest.graph_encoding.EncodedGraphDef`` (columns read in C; NodeDefs kept as encodings);
    return every op's raw input strings, op after op, each op's preceded by the marker returned
    beside them (module docstring)."""
    encoded = isinstance(graph, EncodedGraphDef)
    if encoded:
        slim.node_defs.set_encodings(graph.nodes)
        columns = graph.columns or read_node_protos(slim.node_defs)
    else:
        slim.node_defs.set_graph(graph)
        columns = read_node_protos(graph.node)
    n = len(columns.names)
    shapes: list = [None] * n
    xlas: list = [None] * n
    kernels: list = [None] * n
    node_defs = slim.node_defs
    for i in columns.attr_nodes:
        node = node_defs[i]
        shapes[i] = _shapes(node)
        xlas[i] = _xla_cluster(node)
        kernels[i] = _kernel(node)
    slim.names.extend(columns.names)
    slim.original_names.extend(columns.names)
    slim.ops.extend(columns.ops)
    slim.devices.extend(columns.devices)
    slim.xla_clusters.extend(xlas)
    slim.kernels.extend(kernels)
    slim.output_shapes.extend(shapes)
    slim.functions_of.extend([None] * n)
    if any(sh is not None for sh in shapes):
        slim.has_shape_info = True
    inputs, marker = columns.inputs, columns.input_marker
    if function_library:
        for func in graph.library.function:
            _read_function(func, slim, inputs, marker)
    return inputs, marker


def read_node_protos(nodes) -> NodeColumns:
    """The columns of ``nodes`` (NodeDefs), one at a time through protobuf's Python API: a
    parsed GraphDef's, or an encoded one's whose columns ``ingest.graph_encoding`` could not read.
    Each op's inputs are preceded by None (no input is None)."""
    names, ops, devices, inputs, attr_nodes = ([], [], [], [], [])
    append_input = inputs.append
    intern = sys.intern  # op types and devices repeat: one string each, not one per op (~90 MB at 1M ops)
    for i, node in enumerate(nodes):  # the hot loop: inlined, one pass over the protos
        names.append(node.name)
        ops.append(intern(node.op))
        device = node.device
        devices.append(intern(device) if device else None)
        attr = node.attr
        if "_output_shapes" in attr or "_XlaCluster" in attr:
            attr_nodes.append(i)
        append_input(None)
        inputs.extend(node.input)
    return NodeColumns(names, ops, devices, inputs, None, attr_nodes)


def _function_input(prefix: str, raw: str) -> str:
    """FunctionDef inputs are ``arg``, ``node:out_arg:idx`` or ``^node``."""
    control = raw.startswith("^")
    body = raw[1:] if control else raw
    parts = body.split(":")
    name = prefix + parts[0]
    if len(parts) == 3:
        name += ":" + parts[2]
    elif len(parts) == 2 and parts[1].isdigit():
        name += ":" + parts[1]
    return ("^" if control else "") + name


def _read_function(func, slim: SlimGraph, inputs: list, marker) -> None:
    """Append ``func``'s nodes to ``slim`` and their inputs (prefixed: never the marker) to ``inputs``."""
    fname = func.signature.name
    prefix = f"{FUNCTION_LIBRARY_PREFIX}{fname}/"
    info = FunctionInfo(name=fname)
    slim.functions[fname] = info
    taken = set()
    for k, arg in enumerate(func.signature.input_arg):
        i = _append(slim, prefix + arg.name, "input_arg", None, None, None, None, fname)
        slim.function_input_index[i] = k
        info.input_arg_ids.append(i)
        info.node_ids.append(i)
        inputs.append(marker)
        taken.add(arg.name)
    for node in func.node_def:
        i = _append(slim, prefix + node.name, node.op, node.device or None, _xla_cluster(node),
                    _shapes(node), node, fname)
        info.node_ids.append(i)
        inputs.append(marker)
        inputs.extend(_function_input(prefix, raw) for raw in node.input)
        taken.add(node.name)
    for k, arg in enumerate(func.signature.output_arg):
        local = arg.name if arg.name not in taken else arg.name + "_output"
        i = _append(slim, prefix + local, "output_arg", None, None, None, None, fname)
        slim.function_output_index[i] = k
        info.output_arg_ids.append(i)
        info.node_ids.append(i)
        inputs.append(marker)
        ret = func.ret.get(arg.name)
        if ret:
            inputs.append(_function_input(prefix, ret))
