"""Hierarchy phase 7: per-group cardinality, depth, level and histograms.

Follows the stock dashboard ([TB-GRAPH-DOC]: "keep track of device names, XLAClusters,
opHistograms"; glossary: *level* = distance from the root, *depth* = distance to the
bottom-most leaf, a group holding only ops has depth 1).

Pre-condition: the group tree is final.
Post-condition: for every group, ``cardinality`` = number of MAIN ops below it,
``n_embeddings`` = embedding ops beside those ops, ``op_histogram`` counts the ops below
it by op (embeddings excluded), ``device_histogram`` / ``xla_histogram`` count ops with a
device / XLA cluster; the root's cardinality is the number of MAIN ops.
"""

from __future__ import annotations

import numpy as np

from tb_graph_plugin.hierarchy.model import Hierarchy

__all__ = ["compute_stats"]


def compute_stats(h: Hierarchy) -> None:
    n = h.n_ops
    slim = h.slim
    ops, devices, xla = slim.ops, slim.devices, slim.xla_clusters
    any_device, any_xla = any(devices), any(xla)
    # embeddings owned by each main op (an embedding is listed beside its owner, and
    # maybe beside other consumers too: counted once, for its owner)
    owners = np.asarray(slim.owner, dtype=np.int64)
    owned = np.bincount(owners[owners >= 0], minlength=n).tolist() if n else []
    groups = h.groups
    pre = h.pre_order_groups()
    for g in pre:
        g.level = 0 if g.parent < 0 else groups[g.parent - n].level + 1
    for g in reversed(pre):
        card = 0
        direct = 0  # op children
        emb = 0
        depth = 0
        oh: dict[str, int] = {}
        dh: dict[str, int] = {}
        xh: dict[str, int] = {}
        for c in g.children:
            if c < n:
                direct += 1
                emb += owned[c]
                op = ops[c]
                oh[op] = oh.get(op, 0) + 1
                if any_device:
                    dev = devices[c]
                    if dev:
                        dh[dev] = dh.get(dev, 0) + 1
                if any_xla:
                    x = xla[c]
                    if x:
                        xh[x] = xh.get(x, 0) + 1
            else:
                sub = groups[c - n]
                card += sub.cardinality
                emb += sub.n_embeddings
                if sub.depth >= depth:
                    depth = sub.depth + 1
                for k, v in sub.op_histogram.items():
                    oh[k] = oh.get(k, 0) + v
                if sub.device_histogram:
                    for k, v in sub.device_histogram.items():
                        dh[k] = dh.get(k, 0) + v
                if sub.xla_histogram:
                    for k, v in sub.xla_histogram.items():
                        xh[k] = xh.get(k, 0) + v
        if direct and depth < 1:
            depth = 1
        g.cardinality = card + direct
        g.n_embeddings = emb
        g.depth = depth
        g.op_histogram = oh
        g.device_histogram = dh
        g.xla_histogram = xh
