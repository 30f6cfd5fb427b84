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

A training step's ``backward`` and ``optimizer`` (beside its ``loss``) stay one box each: they
mirror the forward's tree, which opens (``_is_step_mirror``).

A series of more than ``MAX_SERIES`` (12) members is not opened: it is one box labelled with its
range (``LlamaDecoderLayer[0-79]``); its 80 members in columns read as nothing (issue 40).

Past that chain, the groups holding the model's blocks are opened while the view stays readable
(``_reveal_blocks``, issue 40: both towers, encoder and decoder, down and up blocks, the blocks
inside stages), by one rule for every graph: a closed group that holds a list of blocks (a block
series, or groups named by an index or sharing a template) within two levels opens, with its
peers, when the boxes shown then take at most ``REVEAL_AREA`` (a share of the window's room at a
readable zoom, calibrated on 12 held-out models: ``tests/ui/test_held_out_first_views.py``).

Pre: a Hierarchy. Post: a list of group names, each after its parent (the dominant chain first,
each the parent of the next); empty when the top level already shows the structure (many
children, or no dominant group).

Example::

    >>> first_view_expanded(h)  # doctest: +SKIP
    ['TransformerEncoder']
"""

from __future__ import annotations

import collections
import heapq
import re
from typing import Optional

from tb_graph_plugin.graph.model import SlimGraph
from tb_graph_plugin.hierarchy import HierarchyOptions, build_first_view_hierarchy, build_hierarchy
from tb_graph_plugin.hierarchy.copies import first_of_copies
from tb_graph_plugin.hierarchy.model import ROOT_NAME, Hierarchy, SeriesNode
from tb_graph_plugin.layout.scene.options import SceneOptions
from tb_graph_plugin.layout.scene.sizes import meta_size

_OPTIONS = SceneOptions()

# A first view opens a series of at most this many members (each a box labelled >= 9 px in a
# 1400 x 900 TensorBoard; ViT-B's and BERT's 12 layers open); a longer one stays one box.
MAX_SERIES = 12

__all__ = ["first_view_expanded", "first_view_levels", "first_view_hierarchy", "expand_ahead_group", "is_training_step"]


def first_view_expanded(h: Hierarchy, max_children: int = 8, min_share: float = 0.6, max_depth: int = 2,
                        extra_depth: int = 2, max_series: int = MAX_SERIES) -> list[str]:
    return [h.name_of(g) for g in _first_view_ids(h, max_children, min_share, max_depth, extra_depth,
                                                  max_series=max_series)]


def first_view_levels(h: Hierarchy) -> dict[int, int]:
    """Group id -> how deep the first view nests it: -1 for the root, 0 for the outermost group
    :func:`first_view_expanded` opens, 1 for the next ... (the layout folds these groups to fit
    the window a first view has, less the room the levels around them take: ``fold.py``)."""
    opened = _first_view_ids(h)
    inside = set(opened)
    return {h.root.id: -1, **{g: sum(1 for a in h.ancestors(g) if a in inside) for g in opened}}


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
                    extra_depth: int = 2, read: Optional[list[int]] = None, max_series: int = MAX_SERIES) -> list[int]:
    """The groups the first view opens; ``read``, if given, gets every group whose children the
    choice looked at (each opened group, the root, and the last candidate)."""
    read = [] if read is None else read
    opened: list[int] = []
    gid = h.root.id
    for depth in range(max_depth + extra_depth + 1):
        read.append(gid)
        children = [c for c in h.group(gid).children if not _is_library_function(h, c)]
        total = sum(h.cardinality(c) for c in children)
        groups = [c for c in children if h.is_group(c) and h.cardinality(c) > 1 and not _is_step_mirror(h, c)]
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
        if _is_long_series(h, best, max_series):
            break  # shown as one labelled series box: its members would not read (issue 40)
        opened.append(best)
        gid = best
    # a top level of many nodes shows the structure; a partial build (``first_view_hierarchy``:
    # exact-copy towers drawn before they are grouped) shows the dominant chain only
    if h.grouped_only is None and (opened or len(_shown(h, h.root.id)) <= max_children):
        _reveal_blocks(h, opened, read, max_series)
    return opened


# The room a first view's boxes may take, in world px^2: a share of SceneOptions.fold_window
# (810 x 568, the whole view at a readable zoom), the rest for the gaps, edges and group frames.
REVEAL_AREA = 0.32 * 810.0 * 568.0
_OP_AREA = (15.0 + 30.0) * (6.0 + 20.0)  # an op, its label beside it, the gaps
_FRAME_AREA = 40.0 * 160.0  # an opened group's header, padding and border bridges
_INDEX = re.compile(r"(\[\d+(-\d+)?\]|[_.]\d+)$")
REVEAL_MAX_LOOKS = 200  # closed groups looked at, at most (a wide top level: an optimizer's 1000s)


def _reveal_blocks(h: Hierarchy, opened: list[int], read: list[int], max_series: int) -> None:
    """Open, past the dominant chain, the groups that hold the model's blocks while the view
    still fits the window readable (issue 40: both towers, encoder and decoder, down and up blocks,
    the blocks inside stages were closed). One rule for every graph: among the closed groups
    shown, shallowest and largest first, a group that holds a list of blocks within two levels
    (:func:`_holds_blocks`) opens when the boxes shown then take at most :data:`REVEAL_AREA`; it
    opens with its peers (all the blocks of its list, else its siblings of its template: never
    one of a stack alone), and each opened group with the block list that holds most of it (a
    stage with its ``layers``). Appends to ``opened`` (parents before children) and ``read``."""
    is_open = set(opened) | {h.root.id}
    shown = [c for g in is_open for c in _shown(h, g) if c not in is_open]
    area = sum(_area(h, c) for c in shown) + _FRAME_AREA * len(opened)
    seen: set[int] = set()
    queue: list[tuple] = []

    def push(k: int) -> None:  # shallowest first, then lists of blocks, then the largest
        heapq.heappush(queue, (len(h.ancestors(k)), -_block_share(h, k), -h.cardinality(k), k))

    for c in shown:
        if h.is_group(c):
            push(c)
    looked = 0
    while queue and looked < REVEAL_MAX_LOOKS and area < REVEAL_AREA:
        c = heapq.heappop(queue)[-1]
        if c in seen or c in is_open:
            continue
        seen.add(c)
        looked += 1
        read.append(c)
        if not _openable(h, c, max_series) or not _holds_blocks(h, c, 2, read):
            continue
        unit = [u for u in _peers(h, c) if u not in is_open]
        seen.update(unit)
        if not all(_openable(h, u, max_series) for u in unit):
            continue
        unit += [d for u in unit for d in _dominant_lists(h, u, max_series)]
        grown = area + sum(_FRAME_AREA - _area(h, u) + sum(_area(h, k) for k in _shown(h, u)) for u in unit)
        if grown > REVEAL_AREA:
            continue
        area = grown
        for u in unit:
            is_open.add(u)
            opened.append(u)
            read.append(u)
        for u in unit:
            for k in _shown(h, u):
                if h.is_group(k) and k not in is_open:
                    push(k)


def _peers(h: Hierarchy, gid: int) -> list[int]:
    """``gid`` and what opens with it: every block of its parent's list if it is one (in order),
    else its siblings of its template."""
    parent = h.parent(gid)
    blocks = _blocks(h, parent)
    if len(blocks) >= 2 and gid in blocks:
        return blocks
    t = h.template_of(gid)
    return [gid] + [s for s in _shown(h, parent) if s != gid and t is not None and h.template_of(s) == t]


def _dominant_lists(h: Hierarchy, gid: int, max_series: int) -> list[int]:
    """The block lists under ``gid`` that each hold most of their parent (``min_share``), opened
    with it: a stage shows its ``layers``' blocks, not a closed ``layers``."""
    out = []
    while True:
        groups = [c for c in _shown(h, gid) if h.is_group(c)]
        best = max(groups, key=h.cardinality, default=None)
        if (best is None or h.cardinality(best) < 0.6 * h.cardinality(gid) or not _is_block_list(h, best)
                or not _openable(h, best, max_series) or best in _blocks(h, gid)):  # never one block alone
            return out
        out.append(best)
        gid = best


def _shown(h: Hierarchy, gid: int) -> list[int]:
    return [c for c in h.group(gid).children if not _is_library_function(h, c)]


def _area(h: Hierarchy, node: int) -> float:
    """The room a closed node takes in a layout: its box (``sizes.collapsed_size``) and the gaps."""
    if not h.is_group(node):
        return _OP_AREA
    w, ht = meta_size(h.cardinality(node), _OPTIONS, h.label(node))
    return (w + 10.0) * (ht + 25.0)


def _openable(h: Hierarchy, gid: int, max_series: int) -> bool:
    return h.cardinality(gid) > 1 and not _is_long_series(h, gid, max_series) and not _is_step_mirror(h, gid)


# a training step's phases that mirror the forward (tb_graph_plugin.torch.training)
_STEP_MIRRORS = frozenset({"backward", "optimizer"})


def is_training_step(h: Hierarchy) -> bool:
    """Whether ``h`` is a training step: its top level holds ``loss`` beside ``backward`` or
    ``optimizer`` (``tb_graph_plugin.torch.add_graph(..., loss_fn=)``, the JAX front end's step)."""
    return any(_is_step_mirror(h, c) for c in h.root.children if h.is_group(c))


def _is_step_mirror(h: Hierarchy, gid: int) -> bool:
    """``backward`` or ``optimizer`` at the top of a training step (beside ``loss``): they mirror
    the forward's module tree (per module call, per parameter), so the first view shows them as
    one box each and opens the forward (issue 41: opened first, the optimizer's tree took the
    view and every label fell under 9 px)."""
    if h.group(gid).parent != h.root.id or h.name_of(gid) not in _STEP_MIRRORS:
        return False
    return any(h.is_group(c) and h.name_of(c) == "loss" for c in h.root.children)


def _blocks(h: Hierarchy, gid: Optional[int]) -> list[int]:
    """The blocks of a list of blocks: its children that are groups of 4 ops or more named by an
    index (``Class[3]``, ``layer_3``, ``h.3``) or sharing a template with another; a series child
    is one block list of its own."""
    if gid is None:
        return []
    groups = [c for c in h.group(gid).children if h.is_group(c) and h.cardinality(c) >= 4]
    templates = [h.template_of(c) for c in groups]
    count = collections.Counter(templates)
    return [c for c, t in zip(groups, templates)
            if _INDEX.search(h.label(c)) or (t is not None and count[t] > 1)]


def _block_share(h: Hierarchy, gid: int) -> float:
    """The share of a block list's children that are its blocks (a list of blocks first: 1.0
    for ``down_blocks``, 2/3 for a ``mid_block`` that holds a block between two), 0 for others."""
    if not _is_block_list(h, gid):
        return 0.0
    children = h.group(gid).children
    return max(len(_blocks(h, gid)), 1) / len(children)


def _is_block_list(h: Hierarchy, gid: int) -> bool:
    """A group whose children are a list of blocks: a block series, or two or more blocks (:func:`_blocks`)."""
    if any(isinstance(g, SeriesNode) and g.series_kind == "block" for g in
           (h.group(c) for c in h.group(gid).children if h.is_group(c))):
        return True
    return len(_blocks(h, gid)) >= 2


def _holds_blocks(h: Hierarchy, gid: int, depth: int, read: list[int]) -> bool:
    """``gid`` is a block list, or a group within ``depth`` levels under it is (each group
    looked into goes to ``read``)."""
    if _is_block_list(h, gid):
        return True
    if depth <= 0:
        return False
    for c in h.group(gid).children:
        if h.is_group(c) and h.cardinality(c) > 1:
            read.append(c)
            if _holds_blocks(h, c, depth - 1, read):
                return True
    return False


def _is_long_series(h: Hierarchy, gid: int, most: int) -> bool:
    """A series of more than ``most`` members: a first view shows it closed, one box labelled
    with its range (``LlamaDecoderLayer[0-79]``), not as columns of unreadable members."""
    g = h.group(gid)
    return isinstance(g, SeriesNode) and len(g.children) > most


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
