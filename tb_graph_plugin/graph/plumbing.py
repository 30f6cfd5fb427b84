"""Phase 5 of GraphDef -> SlimGraph: PyTorch tuple and list plumbing joins its producers' scope.

Ours, from how PyTorch's ``add_graph`` writes a traced module (``torch.utils.tensorboard``: a
node's name is its ``scopeName()`` and its debug name): the ``prim::TupleConstruct`` that packs a
submodule's tuple return and the ``prim::TupleUnpack`` / ``prim::ListUnpack`` nodes that split it
carry no scope after tracing, so they all land in the top module. A Hugging Face T5 inside a
user's wrapper showed 53 ``TupleUnpack`` and 26 ``TupleConstruct`` boxes in a grid at the
wrapper's level, between every pair of blocks. Such a node is renamed into the deepest scope its
producers share (``Seq2Seq/3294`` -> ``Seq2Seq/T5Model[model]/T5Stack[encoder]/T5Block[0]/
T5LayerSelfAttention[0]/T5LayerNorm[layer_norm]/3294``), and an unpack follows its pack; it is
only ever moved deeper, below the scope it was written in.

Pre-condition: embeddings placed (base and embedding edges). Post-condition: every plumbing op
(MAIN or embedding) whose producers share a scope strictly below its own is named inside that scope
(``slim.names``; ``slim.original_names`` unchanged, ``slim.index`` maps both); no other name
changes. Ops are visited in GraphDef order, so a pack is placed before its unpacks.
"""

from __future__ import annotations

from tb_graph_plugin.graph.model import SlimGraph

__all__ = ["PLUMBING_OPS", "place_plumbing"]

PLUMBING_OPS = frozenset({"prim::TupleConstruct", "prim::TupleUnpack", "prim::ListConstruct", "prim::ListUnpack"})


def _scope(name: str) -> str:
    j = name.rfind("/")
    return name[:j] if j > 0 else ""


def _common_scope(scopes: list[str]) -> str:
    """The longest ``/``-prefix every scope starts with (whole segments)."""
    first = scopes[0].split("/")
    depth = len(first)
    for s in scopes[1:]:
        parts = s.split("/")
        depth = min(depth, len(parts))
        for k in range(depth):
            if parts[k] != first[k]:
                depth = k
                break
    return "/".join(first[:depth])


def place_plumbing(slim: SlimGraph) -> int:
    """Rename the plumbing ops written above their producers (module docstring); return how many."""
    if not PLUMBING_OPS.intersection(slim.ops):
        return 0
    names, ops = slim.names, slim.ops
    plumbing = [i for i, op in enumerate(ops) if op in PLUMBING_OPS]
    wanted = set(plumbing)
    producers: dict[int, list[int]] = {i: [] for i in plumbing}
    # the GraphDef's own inputs: base edges, and the raw edges of embeddings (a pack of
    # parameters is an in-embedding of its first unpack; the other unpacks read it there)
    for s, d in zip(slim.edge_src.tolist(), slim.edge_dst.tolist()):
        if d in wanted:
            producers[d].append(s)
    for s, d, _, _ in slim.embedding_edges:
        if d in wanted and s != d:
            producers[d].append(s)
    moved = 0
    for i in plumbing:  # GraphDef order: a pack before its unpacks
        if not producers[i]:
            continue
        own = _scope(names[i])
        target = _common_scope([_scope(names[s]) for s in producers[i]])
        if len(target) > len(own) and (not own or target.startswith(own + "/")):
            name = names[i]
            names[i] = f"{target}/{name[name.rfind('/') + 1:]}"
            slim.index.setdefault(names[i], i)
            moved += 1
    return moved
