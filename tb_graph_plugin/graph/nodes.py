"""Phase 1 of GraphDef -> SlimGraph: read the NodeDefs (and the function library) into columns.

Follows the "GraphDef -> SlimGraph" section of TensorBoard's Graph dashboard docs
([TB-GRAPH-DOC]): devices, ``_XlaCluster``, ``_output_shapes`` -> tensor shapes; library
functions become ``__function_library__<fn>/...`` nodes, input args (op ``input_arg``, with
``functionInputIndex``) and output args (op ``output_arg``, ``functionOutputIndex``, fed by
the function's ``ret`` tensor).

Pre-condition: ``graph_def`` is a parsed ``GraphDef``.
Post-condition: every per-op column of ``slim`` has one entry per NodeDef (GraphDef order,
then library nodes); ``slim.names == slim.original_names``; the raw input strings are
returned (one list per op) for the edge phase; shapes are tuples of ints (-1 unknown) or
None for unknown rank.
"""

from __future__ import annotations

import sys
from typing import Optional

from tb_graph_plugin.graph.model import FUNCTION_LIBRARY_PREFIX, FunctionInfo, SlimGraph

__all__ = ["read_nodes"]


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


def _append(slim: SlimGraph, name: str, op: str, device: Optional[str], xla, shapes, node_def,
            function: Optional[str]) -> int:
    i = len(slim.names)
    slim.names.append(name)
    slim.original_names.append(name)
    slim.ops.append(op)
    slim.devices.append(device)
    slim.xla_clusters.append(xla)
    slim.output_shapes.append(shapes)
    slim.node_defs.append(node_def)
    slim.functions_of.append(function)
    if shapes is not None:
        slim.has_shape_info = True
    return i


def read_nodes(graph_def, slim: SlimGraph, function_library: bool = True) -> list[list[str]]:
    """Fill the per-op columns of ``slim``; return the raw input strings of each op."""
    inputs: list = []  # repeated-string containers of the NodeDefs (not copied)
    nodes = graph_def.node
    names, ops, devices, xlas, shapes = ([], [], [], [], [])
    intern = sys.intern  # op types and devices repeat: one string each, not one per op (~90 MB at 1M ops)
    for node in nodes:  # the hot loop: inlined, one pass over the protos
        names.append(node.name)
        ops.append(intern(node.op))
        device = node.device
        devices.append(intern(device) if device else None)
        attr = node.attr
        if "_output_shapes" in attr:
            shapes.append(_shapes(node))
        else:
            shapes.append(None)
        xlas.append(attr["_XlaCluster"].s.decode("utf-8", "replace") or None
                    if "_XlaCluster" in attr else None)
        inputs.append(node.input)
    slim.names.extend(names)
    slim.original_names.extend(names)
    slim.ops.extend(ops)
    slim.devices.extend(devices)
    slim.xla_clusters.extend(xlas)
    slim.output_shapes.extend(shapes)
    slim.node_defs.set_graph(graph_def)
    slim.functions_of.extend([None] * len(names))
    if any(sh is not None for sh in shapes):
        slim.has_shape_info = True
    if function_library:
        for func in graph_def.library.function:
            _read_function(func, slim, inputs)
    return inputs


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


def _read_function(func, slim: SlimGraph, inputs: list[list[str]]) -> None:
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
        inputs.append([])
        taken.add(arg.name)
    for node in func.node_def:
        i = _append(slim, prefix + node.name, node.op, node.device or None, _xla_cluster(node),
                    _shapes(node), node, fname)
        info.node_ids.append(i)
        inputs.append([_function_input(prefix, raw) for raw in node.input])
        taken.add(node.name)
    for k, arg in enumerate(func.signature.output_arg):
        local = arg.name if arg.name not in taken else arg.name + "_output"
        i = _append(slim, prefix + local, "output_arg", None, None, None, None, fname)
        slim.function_output_index[i] = k
        info.output_arg_ids.append(i)
        info.node_ids.append(i)
        ret = func.ret.get(arg.name)
        inputs.append([_function_input(prefix, ret)] if ret else [])
