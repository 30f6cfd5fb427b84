"""The first view of a graph: open the group that holds most of it, as a user would first do.

Ours (no reference document; Netron and Model Explorer open on the model's layers, the stock tab
on a top level that is often one box). Starting at the root, a group whose visible children are
few (at most ``max_children``) and among which one group holds at least ``min_share`` of the
ops is opened, and so on inside it, at most ``max_depth`` levels: a Keras-callback model is one
box ``small_cnn`` at the top, a PyTorch model is ``input``, ``TransformerEncoder``, ``output``.

Pre: a Hierarchy. Post: a list of group names, outermost first, each the parent of the next;
empty when the top level already shows the structure (many children, or no dominant group).

Example::

    >>> first_view_expanded(h)  # doctest: +SKIP
    ['TransformerEncoder']
"""

from __future__ import annotations

from tb_graph_plugin.hierarchy.model import Hierarchy

__all__ = ["first_view_expanded"]


def first_view_expanded(h: Hierarchy, max_children: int = 8, min_share: float = 0.6, max_depth: int = 2) -> list[str]:
    opened: list[str] = []
    gid = h.root.id
    for _ in range(max_depth):
        children = h.group(gid).children
        if not children or len(children) > max_children:
            break
        total = sum(h.cardinality(c) for c in children)
        groups = [c for c in children if h.is_group(c) and h.cardinality(c) > 1]
        if not groups:
            break
        best = max(groups, key=h.cardinality)
        if h.cardinality(best) < min_share * total:
            break
        opened.append(h.name_of(best))
        gid = best
    return opened
