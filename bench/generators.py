"""Random-but-realistic graphs for the layout bench and tests (deterministic per seed)."""

from __future__ import annotations

import random

from tb_graph_plugin.layout import LayoutEdge, LayoutGraph, LayoutNode

OP = (15.0, 6.0)  # stock op node size
META = (60.0, 30.0)


def resnet_like(blocks: int, seed: int = 0) -> LayoutGraph:
    """Residual blocks (conv-bn-relu x2 + skip add), every conv/bn with 1-2 variable-read sources."""
    rnd = random.Random(seed)
    nodes, edges = [], []

    def node(name, size=OP):
        nodes.append(LayoutNode(name, *size))
        return name

    prev = node("input", META)
    for b in range(blocks):
        x = prev
        for k in range(2):
            conv = node(f"b{b}/conv{k}", META if rnd.random() < 0.3 else OP)
            edges.append(LayoutEdge(x, conv))
            for v in range(rnd.randint(1, 2)):
                edges.append(LayoutEdge(node(f"b{b}/conv{k}/w{v}"), conv))
            bn = node(f"b{b}/bn{k}")
            edges.append(LayoutEdge(conv, bn))
            edges.append(LayoutEdge(node(f"b{b}/bn{k}/gamma"), bn))
            x = node(f"b{b}/relu{k}")
            edges.append(LayoutEdge(bn, x))
        add = node(f"b{b}/add")
        edges.append(LayoutEdge(x, add))
        edges.append(LayoutEdge(prev, add))  # the skip connection
        prev = add
    edges.append(LayoutEdge(prev, node("logits", META)))
    return LayoutGraph(nodes, edges)


def optimizer_like(variables: int, seed: int = 0) -> LayoutGraph:
    """An Adam-style update group: ~30 ops per variable and a few hubs (lr, betas, step)."""
    rnd = random.Random(seed)
    nodes, edges = [], []
    hubs = []
    for h in ("lr", "beta1", "beta2", "epsilon", "iteration"):
        nodes.append(LayoutNode(h, *OP))
        hubs.append(h)
    for i in range(variables):
        p = f"v{i}/"
        chain = [p + f"grad{k}" for k in range(rnd.randint(3, 6))]
        m = [p + f"m{k}" for k in range(5)]
        v = [p + f"v{k}" for k in range(6)]
        upd = [p + f"apply{k}" for k in range(4)]
        names = chain + m + v + upd + [p + "var", p + "read", p + "m_slot", p + "v_slot"]
        names += [p + f"misc{k}" for k in range(30 - len(names))] if len(names) < 30 else []
        for nm in names:
            nodes.append(LayoutNode(nm, *OP))
        for seq in (chain, m, v, upd):
            for a, b in zip(seq, seq[1:]):
                edges.append(LayoutEdge(a, b))
        edges += [LayoutEdge(chain[-1], m[0]), LayoutEdge(chain[-1], v[0]), LayoutEdge(m[-1], upd[0]),
                  LayoutEdge(v[-1], upd[1]), LayoutEdge(p + "var", p + "read"), LayoutEdge(p + "read", chain[0]),
                  LayoutEdge(p + "m_slot", m[1]), LayoutEdge(p + "v_slot", v[1]), LayoutEdge(upd[-1], p + "var", kind="reference")]
        edges += [LayoutEdge(hubs[0], upd[2]), LayoutEdge(hubs[1], m[2]), LayoutEdge(hubs[2], v[2]),
                  LayoutEdge(hubs[3], v[4]), LayoutEdge(hubs[4], upd[1])]
        misc = [nm for nm in names if "/misc" in nm]
        for a, b in zip(misc, misc[1:]):
            if rnd.random() < 0.7:
                edges.append(LayoutEdge(a, b))
        if misc:
            edges.append(LayoutEdge(misc[-1], upd[3]))
    return LayoutGraph(nodes, edges)


def random_layered(n: int, seed: int = 0, window: int = 25, fan: int = 2, cyclic: float = 0.0) -> LayoutGraph:
    """Mostly local random DAG (inputs from the previous ``window`` nodes); ``cyclic`` adds back edges."""
    rnd = random.Random(seed)
    nodes = [LayoutNode(f"n{i}", rnd.choice([15.0, 30.0, 60.0]), rnd.choice([6.0, 15.0, 30.0])) for i in range(n)]
    edges = []
    for i in range(1, n):
        for _ in range(rnd.randint(1, fan)):
            j = rnd.randrange(max(0, i - window), i)
            edges.append(LayoutEdge(f"n{j}", f"n{i}"))
            if rnd.random() < cyclic:
                edges.append(LayoutEdge(f"n{i}", f"n{j}", kind="control"))
    return LayoutGraph(nodes, edges)
