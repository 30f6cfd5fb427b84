"""The first view of a graph: open the group that holds most of it, as a user would first do.

Ours (no reference document; Netron and Model Explorer open on the model's layers, the stock tab
on a top level that is often one box). Starting at the root, a group whose visible children are
few (at most ``max_children``) and among which one group holds at least ``min_share`` of the
ops is opened, and so on inside it, at most ``max_depth`` levels: a Keras-callback model is one
box ``small_cnn`` at the top, a PyTorch model is ``input``, ``TransformerEncoder``, ``output``.

Library functions (``__function_library__<fn>`` groups: TF2 control flow bodies, Keras 3's
XLA-compiled grouped convolutions, nested ``tf.function``) are definitions, not part of the flow
(their calls are ops inside the model): they are left out of both counts, so a ConvNeXt trace
whose 18 ``_conv_xla`` functions sit beside ``convnext_tiny_1`` (gathered in ``ƒ library``) opens on
its model like any other.

Inside an opened group, a dominant stack of repeated blocks (its children are groups of one
template, or one series) is opened however many small siblings it has, and also past
``max_depth`` (at most ``extra_depth`` levels): a decoder's ``layers``, whose
``LlamaDecoderLayer[0..23]`` are what its authors draw first (GPT-2's ``h`` sits among 12
position-id and embedding ops), and the series ``ViTLayer[0-11]`` that is all a ViT's encoder
holds (it showed as one closed stack: issue 23). So is a group that is all its parent holds
(opening the parent showed one box: a Swin's ``encoder`` is its ``layers``).

Pre: a Hierarchy. Post: a list of group names, outermost first, each the parent of the next;
empty when the top level already shows the structure (many children, or no dominant group).

Example::

    >>> first_view_expanded(h)  # doctest: +SKIP
    ['TransformerEncoder']
"""

from __future__ import annotations

from typing import Optional

from tb_graph_plugin.graph.model import SlimGraph
from tb_graph_plugin.hierarchy import HierarchyOptions, build_first_view_hierarchy, build_hierarchy
from tb_graph_plugin.hierarchy.copies import first_of_copies
from tb_graph_plugin.hierarchy.model import ROOT_NAME, Hierarchy, SeriesNode

__all__ = ["first_view_expanded", "first_view_levels", "first_view_hierarchy", "expand_ahead_group"]


def first_view_expanded(h: Hierarchy, max_children: int = 8, min_share: float = 0.6, max_depth: int = 2,
                        extra_depth: int = 2) -> list[str]:
    return [h.name_of(g) for g in _first_view_ids(h, max_children, min_share, max_depth, extra_depth)]


def first_view_levels(h: Hierarchy) -> dict[int, int]:
    """Group id -> how deep the first view nests it: -1 for the root, 0 for the outermost group
    :func:`first_view_expanded` opens, 1 for the next ... (the layout folds these groups to fit
    the window a first view has, less the room the levels around them take: ``fold.py``)."""
    return {h.root.id: -1, **{g: i for i, g in enumerate(_first_view_ids(h))}}


def first_view_hierarchy(slim: SlimGraph, options: Optional[HierarchyOptions] = None,
                         max_rounds: int = 4) -> Hierarchy:
    """A Hierarchy to draw the first view from before the whole one is built (issue 21), or the
    whole one (``h.grouped_only`` None) when that view needs it.

    The groups the first view reads are grouped (``hierarchy.build_first_view_hierarchy``), the
    rest left as their scopes made them: the root first, then, round after round, the groups
    the choice above read in the last round, until it reads only grouped ones (a fixed point:
    the same choice on the same children as on the whole Hierarchy; a block series made among
    grouped children is grouped: the 1M corpus graph's ``tower_[0-6]``). The whole Hierarchy when
    that takes more than ``max_rounds`` builds, or when a child of a read group may share its
    structure with another group and is not an exact copy of a sibling whose template id is known
    (``hierarchy.unique``, ``hierarchy.copies``: then its template id, a block series, or the
    choice of a stack needs the whole build's templates).

    Post: a Hierarchy whose first view (:func:`first_view_expanded`, the scene drawn with it
    open) equals the whole Hierarchy's; a partial one (``grouped_only`` set) is for that view only.
    """
    grouped = {ROOT_NAME}
    for _ in range(max_rounds):
        h = build_first_view_hierarchy(slim, options, grouped)
        if h.grouped_only is None:  # the whole one: a grouped group's children may share a template
            return h
        read: list[int] = []
        _first_view_ids(h, read=read)
        names = {h.name_of(g) for g in read}
        if names <= h.grouped_only:  # block series made among grouped children are grouped too
            return h
        grouped |= names
    return build_hierarchy(slim, options)


def expand_ahead_group(h: Hierarchy) -> Optional[str]:
    """The group a user is likeliest to open next on a first view drawn from a partial build, when
    ``hierarchy.build_expand_ahead_hierarchy`` can build it ahead: the largest closed group the
    first view shows (the first of equals), if it is the first of a class of exact copies among
    its siblings (``h.copy_of``: the towers of a multi-tower graph). None otherwise."""
    if h.grouped_only is None or not h.copy_of:
        return None
    opened = _first_view_ids(h)
    shown = [c for g in [h.root.id, *opened] for c in h.group(g).children
             if h.is_group(c) and c not in opened and not _is_library_function(h, c)]
    if not shown:
        return None
    best = max(shown, key=h.cardinality)
    return h.name_of(best) if first_of_copies(h.copy_of, best) else None


def _first_view_ids(h: Hierarchy, max_children: int = 8, min_share: float = 0.6, max_depth: int = 2,
                    extra_depth: int = 2, read: Optional[list[int]] = None) -> list[int]:
    """The groups the first view opens; ``read``, if given, gets every group whose children the
    choice looked at (each opened group, the root, and the last candidate)."""
    read = [] if read is None else read
    opened: list[int] = []
    gid = h.root.id
    for depth in range(max_depth + extra_depth + 1):
        read.append(gid)
        children = [c for c in h.group(gid).children if not _is_library_function(h, c)]
        total = sum(h.cardinality(c) for c in children)
        groups = [c for c in children if h.is_group(c) and h.cardinality(c) > 1]
        if not groups:
            break
        best = max(groups, key=h.cardinality)
        if h.cardinality(best) < min_share * total:
            break
        read.append(best)
        stack = _is_block_stack(h, best)
        only = len(children) == 1  # the group just opened shows one box: open it too
        if len(children) > max_children and not (opened and stack):
            break
        if depth >= max_depth and not (stack or only):
            break
        opened.append(best)
        gid = best
    return opened


def _is_block_stack(h: Hierarchy, gid: int) -> bool:
    """A group whose children are one series, or two or more groups of one template."""
    children = h.group(gid).children
    if len(children) == 1 and h.is_group(children[0]):
        return isinstance(h.group(children[0]), SeriesNode)
    templates = {h.template_of(c) if h.is_group(c) else None for c in children}
    return len(children) >= 2 and len(templates) == 1 and None not in templates


def _is_library_function(h: Hierarchy, node: int) -> bool:
    """``node`` is a group holding one ``GraphDef.library`` function, or the group gathering them
    (``scopes.build_scopes``)."""
    return h.is_group(node) and (h.group(node).function is not None or h.group(node).inferred == "library")
