"""Per-node details for the info pane, as a ``wire.NodeDetails``.

Follows the stock info pane ([TB-GRAPH-DOC] "View the details and attributes of a selected
node"; ``tensorboard/backend/process_graph.py`` elides large attrs): ops report op,
device, attrs (an attr whose serialized size exceeds ``limit_attr_size`` is replaced by
a ``NodeAttr`` with ``elided_bytes``), inputs and outputs with shapes and edge kinds (including
the edges to embeddings, flagged ``visible: False``), profile stats, owning series and
template; groups report their cardinality, template, op histogram (as attrs) and the
MetaEdges entering and leaving them, at every level (``group_io``).

Pre-condition: a built Hierarchy. Post-condition: returns a ``wire.NodeDetails`` (``/node``
answers it as is); an op's inputs and outputs list every edge touching it, base edges
first, then edges to embeddings, each in SlimGraph order; a group's, every base edge crossing
its boundary, bundled by MetaEdge (``group_io``).
"""

from __future__ import annotations

from itertools import repeat

from google.protobuf import text_format

from tb_graph_plugin.hierarchy.model import Hierarchy, NodeRef
from tb_graph_plugin.hierarchy.stats import histograms
from tb_graph_plugin.wire import EdgeKindCode, EmbeddingRole, NodeAttr, NodeDetails, NodeIo

__all__ = ["node_details", "group_io", "DEFAULT_LIMIT_ATTR_SIZE"]

DEFAULT_LIMIT_ATTR_SIZE = 1024


def _adjacency(h: Hierarchy):
    cache = getattr(h, "_adjacency_cache", None)
    if cache is None:
        slim = h.slim
        ins: dict[int, list] = {}
        outs: dict[int, list] = {}
        for rec in zip(slim.edge_src.tolist(), slim.edge_dst.tolist(), slim.edge_kind.tolist(),
                       slim.edge_output.tolist(), repeat(True)):
            outs.setdefault(rec[0], []).append(rec)
            ins.setdefault(rec[1], []).append(rec)
        for s, d, k, o in slim.embedding_edges:
            rec = (s, d, k, o, False)
            outs.setdefault(s, []).append(rec)
            ins.setdefault(d, []).append(rec)
        cache = h._adjacency_cache = (ins, outs)
    return cache


def _tensor(h: Hierarchy, node: int, out: int, other: int, kind: int, base: bool) -> NodeIo:
    slim = h.slim
    name = slim.names[other]
    shape = slim.shape_of(node, out) if out >= 0 else None
    visible = base and bool(slim.embedding[other] == EmbeddingRole.MAIN)
    return NodeIo(name=name if out <= 0 else f"{name}:{out}", shape=list(shape) if shape is not None else None,
                  kind=EdgeKindCode(kind).kind, visible=visible)


def node_details(h: Hierarchy, ref: NodeRef, limit_attr_size: int = DEFAULT_LIMIT_ATTR_SIZE) -> NodeDetails:
    """The ``NodeDetails`` of op or group ``ref`` (an id or hierarchy name)."""
    i = h.id_of(ref)
    series = h.series_of(i)
    series_name = h.name_of(series) if series is not None else None
    if h.is_group(i):
        return _group_details(h, i, series_name)
    slim = h.slim
    attrs = []
    node_def = slim.node_defs[i]
    if node_def is not None:
        for key in sorted(node_def.attr):
            value = node_def.attr[key]
            size = value.ByteSize()
            if limit_attr_size is not None and size > limit_attr_size:
                attrs.append(NodeAttr(key=key, elided_bytes=size))
            else:
                attrs.append(NodeAttr(key=key, value=text_format.MessageToString(value, as_one_line=True)))
    ins_adj, outs_adj = _adjacency(h)
    inputs = [_tensor(h, s, o, s, k, base) for s, d, k, o, base in ins_adj.get(i, [])]
    outputs = [_tensor(h, s, o, d, k, base) for s, d, k, o, base in outs_adj.get(i, [])]
    stats = h.profile.get(i) if h.profile else None
    parent = h.parent(i)
    return NodeDetails(name=slim.names[i], kind=h.kind(i), op=slim.ops[i], device=slim.devices[i], attrs=attrs,
                       inputs=inputs, outputs=outputs, cardinality=1, series=series_name,
                       template=h.template_of(parent) if parent is not None else None,
                       stats=dict(stats) if stats else None)


def _group_details(h: Hierarchy, i: int, series_name) -> NodeDetails:
    """A group's details: op histogram as attrs (typed ops only), the MetaEdges entering and leaving it as inputs
    and outputs (``group_io``), profile totals."""
    g = h.group(i)
    ins, outs = group_io(h, i)
    counted = histograms(h, i)
    # an op without a type (a Keras conceptual graph's layers: their class is an attr) is not
    # counted: it read as one attribute "op:" holding every layer
    attrs = [NodeAttr(key=f"op:{op}", value=str(c))
             for op, c in sorted(counted.ops.items(), key=lambda kv: -kv[1]) if op]
    stats = None
    if g.compute_time_us is not None:
        stats = {"compute_time_us": g.compute_time_us, "memory_bytes": g.memory_bytes,
                 "devices": dict(g.profile_devices)}
    device = max(counted.devices, key=counted.devices.get) if counted.devices else None
    return NodeDetails(name=g.name, kind=g.kind, op=None, device=device, attrs=attrs, inputs=ins, outputs=outs,
                       cardinality=g.cardinality, series=series_name, template=g.template, stats=stats,
                       inferred=g.inferred)


def group_io(h: Hierarchy, gid: int) -> tuple[list[NodeIo], list[NodeIo]]:
    """The MetaEdges that enter (inputs) and leave (outputs) group ``gid``, nearest level first.

    Every base edge with one end inside the group and one outside is in the MetaEdge of the
    lowest group holding both ends ([TB-GRAPH-DOC]: one MetaEdge per pair of children): the
    group's parent for an edge to a sibling, a higher ancestor for an edge that leaves the parent
    too (a series member's edges from before the series; ``LlamaDecoderLayer[0]``'s inputs are
    in the metagraph holding its series). At each ancestor, the MetaEdges at the child on the
    way down to the group are read; above the parent, only their base edges with the inner end
    inside the group are kept. Each is one ``NodeIo`` named by the other end as that metagraph
    has it, with the ``count``, summed ``size`` and kind of those base edges.

    Post: the ``count`` values add up to the base edges crossing the group's boundary, each counted
    once. Cost: the base edges of the MetaEdges read, times the depth for those above the parent.
    """
    slim = h.slim
    n = h.n_ops
    ins: list[NodeIo] = []
    outs: list[NodeIo] = []
    child, parent = gid, h.groups[gid - n].parent
    while parent >= 0:
        for me in h.groups[parent - n].metaedges:
            if me.dst == child:
                other, inner, out = me.src, slim.edge_dst, ins
            elif me.src == child:
                other, inner, out = me.dst, slim.edge_src, outs
            else:
                continue
            edges = me.base_edges if child == gid else [
                e for e, op in zip(me.base_edges, inner[me.base_edges].tolist()) if _holds(h, gid, child, op)]
            if edges:
                out.append(_metaedge_io(h, other, edges))
        child, parent = parent, h.groups[parent - n].parent
    return ins, outs


def _holds(h: Hierarchy, gid: int, stop: int, op: int) -> bool:
    """Whether ``op`` (inside group ``stop``) is inside group ``gid`` (inside ``stop`` too)."""
    n = h.n_ops
    g = h.op_parent[op]
    while g != gid and g != stop and g >= 0:
        g = h.groups[g - n].parent
    return g == gid


def _metaedge_io(h: Hierarchy, other: int, edges: list[int]) -> NodeIo:
    slim = h.slim
    kinds = slim.edge_kind[edges].tolist()
    if all(k == EdgeKindCode.CONTROL for k in kinds):
        kind = EdgeKindCode.CONTROL.kind
    elif any(k == EdgeKindCode.REFERENCE for k in kinds):
        kind = EdgeKindCode.REFERENCE.kind
    else:
        kind = EdgeKindCode.DATA.kind
    return NodeIo(name=h.name_of(other), shape=None, kind=kind, visible=True, count=len(edges),
                  size=int(slim.edge_size[edges].sum()))
