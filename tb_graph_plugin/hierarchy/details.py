"""Per-node details for the info pane, as a ``wire.NodeDetails``.

Follows the stock info pane ([TB-GRAPH-DOC] "View the details and attributes of a selected
node"; ``tensorboard/backend/process_graph.py`` elides large attrs): ops report op,
device, attrs (an attr whose serialized size exceeds ``limit_attr_size`` is replaced by
a ``NodeAttr`` with ``elided_bytes``), inputs and outputs with shapes and edge kinds (including
the edges to embeddings, flagged ``visible: False``), profile stats, owning series and
template; groups report their cardinality, template, op histogram (as attrs) and the
metaedges touching them in their parent's metagraph.

Pre-condition: a built Hierarchy. Post-condition: returns a ``wire.NodeDetails`` (``/node``
answers it as is); an op's inputs and outputs list every edge touching it, base edges
first, then edges to embeddings, each in SlimGraph order; a group's, the metaedges of its parent's metagraph
at it.
"""

from __future__ import annotations

from google.protobuf import text_format

from tb_graph_plugin.hierarchy.model import Hierarchy, NodeRef
from tb_graph_plugin.wire import EdgeKindCode, EmbeddingRole, NodeAttr, NodeDetails, NodeIo

__all__ = ["node_details", "DEFAULT_LIMIT_ATTR_SIZE"]

DEFAULT_LIMIT_ATTR_SIZE = 1024


def _adjacency(h: Hierarchy):
    cache = getattr(h, "_adjacency_cache", None)
    if cache is None:
        slim = h.slim
        ins: dict[int, list] = {}
        outs: dict[int, list] = {}
        for e, (s, d) in enumerate(zip(slim.edge_src, slim.edge_dst)):
            rec = (s, d, slim.edge_kind[e], slim.edge_output[e], True)
            outs.setdefault(s, []).append(rec)
            ins.setdefault(d, []).append(rec)
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
    visible = base and slim.embedding[other] == EmbeddingRole.MAIN
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
    """A group's details: op histogram as attrs, its metaedges in its parent's metagraph as
    inputs and outputs (with count and size), profile totals."""
    g = h.group(i)
    parent = h.parent(i)
    ins, outs = [], []
    if parent is not None:
        for me in h.metaedges(parent):
            if me.dst == i:
                ins.append(NodeIo(name=h.name_of(me.src), shape=None, kind=me.kind, visible=True,
                                  count=me.count, size=me.size))
            elif me.src == i:
                outs.append(NodeIo(name=h.name_of(me.dst), shape=None, kind=me.kind, visible=True,
                                   count=me.count, size=me.size))
    attrs = [NodeAttr(key=f"op:{op}", value=str(c))
             for op, c in sorted(g.op_histogram.items(), key=lambda kv: -kv[1])]
    stats = None
    if g.compute_time_us is not None:
        stats = {"compute_time_us": g.compute_time_us, "memory_bytes": g.memory_bytes,
                 "devices": dict(g.profile_devices)}
    device = max(g.device_histogram, key=g.device_histogram.get) if g.device_histogram else None
    return NodeDetails(name=g.name, kind=g.kind, op=None, device=device, attrs=attrs, inputs=ins, outputs=outs,
                       cardinality=g.cardinality, series=series_name, template=g.template, stats=stats,
                       inferred=g.inferred)
