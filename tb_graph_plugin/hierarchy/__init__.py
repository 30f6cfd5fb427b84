"""SlimGraph -> Hierarchy (no TensorBoard server dependency).

The pipeline is the list :data:`PIPELINE`, in order (each step timed into ``h.timings``;
a step whose condition does not hold is skipped and not timed):

1. ``scopes.build_scopes``          MetaNodes from ``/`` scopes
1a. ``kernels.group_kernels``       each group's ops one fused kernel computes, grouped
                                    (``group_kernels``: a torch.compile graph's Inductor kernels)
1b. ``replicate.find_copies``       large sibling groups that are exact copies: phases 2-3b run
                                    in the first of each class only (``replicate_copies``)
2. ``infer.infer_scopes``           missing levels from indices in names (Keras 3), unless
                                    ``infer_scopes`` is False
2b. ``regions.infer_regions``       blocks cut from the children's dataflow (InceptionV3), idem
3. ``series.detect_op_series``      stock op series ``add_[1-5]`` (``series_min_size`` > 0)
3b. ``split.split_wide_groups``     groups > 1000 children -> ordered artificial sub-groups
3c. ``replicate.replicate_copies``  the first copy's groups made again in the others
4. ``metaedges.build_metaedges``    MetaEdges at the lowest common ancestor
5. ``templates.hash_structures``   structural hash of every group (when templates or block
                                    series are on)
6. ``series.detect_block_series``   repeated blocks ``Layer[0-5]`` (parents' metaedges
                                    re-routed; ``block_series_min_size`` > 0);
                                    ``series_templates``: 5 again for the new series and
                                    their ancestors only (when any were made);
                                    ``template_ids``: ``templates.number_templates``, shared
                                    template ids on the final tree (when templates are on);
                                    ``drop_templates``: template ids cleared when templates are off
7. ``stats.compute_stats``          cardinality, depth, level (op/device/XLA histograms: on demand)
8. ``release``                      the grouping phases' adjacency dropped

:data:`FIRST_VIEW_PIPELINE` (``build_first_view_hierarchy``, issue 21) is steps 1-3b with the
grouping phases run only in the groups a first view shows, checked before and after them by
``unique_scopes`` and ``unique`` (each child group of those groups shares a template with no
other group, ``unique.unproven``, or is an exact copy of a sibling, ``copies.copy_classes``;
else the partial build stops), then 4; where copies were proven, ``copy_series`` (step 6 among
those children, from what the proofs say of their hashes) and ``copy_templates``
(``templates.number_grouped_templates``: their ids, where the tree before them is known; else
the partial build stops); then 7 and 8. What those groups hold, the MetaEdges between their
children, their template ids and every group's cardinality are what the whole build gives
them: a grouping phase run in one group regroups that group's subtree only.

:data:`EXPAND_AHEAD_PIPELINE` (``build_expand_ahead_hierarchy``) takes such a partial build on:
one more shown group grouped with its whole subtree (``h.whole_subtrees``: the grouping phases
2-3b run there only, every group under it included; then the MetaEdges of the shown groups and
that subtree; ``whole_templates``, steps 5-6 there; the template ids; 7; 8). That group must be
the first of a class of exact copies (then every group under it shares its structure with its
counterparts in the copies).

Afterwards, on demand: ``profile.join_step_stats`` (step stats per op, summed per group),
``stats.histograms`` (a group's ops counted by op, device, XLA cluster) and
``details.node_details`` (the info pane).

Example::

    >>> from tensorboard.compat.proto import graph_pb2
    >>> from tb_graph_plugin.graph import build_slim_graph
    >>> g = graph_pb2.GraphDef()
    >>> _ = g.node.add(name="x", op="Placeholder")
    >>> _ = g.node.add(name="dense/MatMul", op="MatMul", input=["x"])
    >>> _ = g.node.add(name="dense/Relu", op="Relu", input=["dense/MatMul"])
    >>> h = build_hierarchy(build_slim_graph(g))
    >>> h.child_names("__root__")
    ['x', 'dense']
    >>> [(h.name_of(e.src), h.name_of(e.dst)) for e in h.metaedges("__root__")]
    [('x', 'dense')]
"""

from __future__ import annotations

import dataclasses
import gc
from typing import Optional

from tb_graph_plugin.graph.model import SlimGraph
from tb_graph_plugin.hierarchy import infer, kernels, metaedges, placement, regions, replicate, scopes, series, split, stats, templates
from tb_graph_plugin.hierarchy.details import node_details
from tb_graph_plugin.hierarchy.model import (
    ROOT_NAME,
    Hierarchy,
    HierarchyOptions,
    MetaEdge,
    MetaNode,
    SeriesNode,
)
from tb_graph_plugin.hierarchy.profile import join_step_stats
from tb_graph_plugin.hierarchy.copies import copy_classes, first_of_copies
from tb_graph_plugin.hierarchy.unique import unproven
from tb_graph_plugin.pipeline import Pipeline, Progress, Step

__all__ = [
    "build_hierarchy",
    "build_first_view_hierarchy",
    "build_expand_ahead_hierarchy",
    "join_step_stats",
    "node_details",
    "Hierarchy",
    "HierarchyOptions",
    "MetaEdge",
    "MetaNode",
    "SeriesNode",
    "ROOT_NAME",
]


def build_hierarchy(slim: SlimGraph, options: Optional[HierarchyOptions] = None,
                    progress: Optional[Progress] = None) -> Hierarchy:
    """Group a SlimGraph into MetaNodes, SeriesNodes and MetaEdges (``progress(step, fraction)``
    called before each step: a worker answers what it can between them)."""
    return _whole(_Build(Hierarchy(slim, options or HierarchyOptions())), progress=progress)


def _whole(b: _Build, start_after: Optional[str] = None, progress: Optional[Progress] = None) -> Hierarchy:
    """:data:`PIPELINE` on ``b`` (from after the step ``start_after``); built again from scratch
    without replicating copies when a replicated name might differ (``replicate.NotReplicated``)."""
    try:
        return _without_gc(PIPELINE, b, start_after=start_after, progress=progress).h
    except replicate.NotReplicated:
        options = dataclasses.replace(b.h.options, replicate_copies=False)
        return _without_gc(PIPELINE, _Build(Hierarchy(b.h.slim, options)), progress=progress).h


def build_first_view_hierarchy(slim: SlimGraph, options: Optional[HierarchyOptions], shown) -> Hierarchy:
    """The Hierarchy :data:`FIRST_VIEW_PIPELINE` gives: the groups named in ``shown`` (the
    root's name included) grouped as :func:`build_hierarchy` groups them, with the block series
    made among their children (added to ``grouped_only``), the others as their scopes made them;
    template ids on those children only; ``grouped_only`` says which. Or, when a child of a group
    in ``shown`` may share its structure with another group and is not proven an exact copy of a
    sibling, or a copy's template id is not known (it, and the block series among those children,
    need the whole build), the whole Hierarchy (``grouped_only`` None), built on from the scopes
    when that showed among them."""
    h = Hierarchy(slim, options or HierarchyOptions())
    h.grouped_only = frozenset(shown)
    b = _without_gc(FIRST_VIEW_PIPELINE, _Build(h))
    if _proven(b):
        h.copy_of = b.copy_of
        return h  # its scope tree is left for the whole build after it (``scopes.build_scopes``)
    scopes.forget_left(slim)
    if b.not_unique_at == "unique_scopes":  # nothing but the scopes made: the whole build goes on from them
        h.grouped_only = None
        return _whole(b, start_after="scopes")
    return build_hierarchy(slim, options)


def build_expand_ahead_hierarchy(first_view: Hierarchy, group: str) -> Optional[Hierarchy]:
    """``first_view`` (a first view's partial build, from :func:`build_first_view_hierarchy`;
    taken, not copied) with ``group`` (a child of one of its grouped groups) opened too and
    grouped with its whole subtree as :func:`build_hierarchy` groups it (``h.whole_subtrees``):
    the first view's likeliest next group, built while the user looks at that view, so that
    opening it need not wait for the whole build (:data:`EXPAND_AHEAD_PIPELINE`). ``group`` must
    be the first of a class of exact copies among its siblings (``h.copy_of``); its template ids
    are then numbered where no template was numbered before it but its own and no new class of
    copies follows it (``templates.number_grouped_templates``). None when that cannot be proven
    (the whole build must answer; ``first_view`` is then spoilt)."""
    h = first_view
    if h.grouped_only is None or not h.copy_of or group not in h.group_index:
        return None
    h.whole_subtrees = frozenset({group})
    if not _whole_roots_are_copied(h, h.copy_of):
        return None
    b = _without_gc(EXPAND_AHEAD_PIPELINE, _Build(h, copy_of=h.copy_of, shown=h.grouped_only | {group}))
    return h if _proven(b) else None


def _without_gc(pipeline: Pipeline, b: _Build, start_after: Optional[str] = None,
                progress: Optional[Progress] = None) -> _Build:
    was_enabled = gc.isenabled()
    gc.disable()  # many small objects, no cycles: GC passes would cost O(heap) each
    try:
        return pipeline.run(b, timings=b.h.timings, start_after=start_after, progress=progress)
    finally:
        if was_enabled:
            gc.enable()


@dataclasses.dataclass
class _Build:
    """The state the steps pass along: the Hierarchy being grouped, and the block series made."""

    h: Hierarchy
    new_series: list = dataclasses.field(default_factory=list)
    not_unique_at: str = ""  # a first view's partial build: the step that found a shown group's
    # children may share a template (``unique_scopes`` or ``unique``) or could not number one
    # (``copy_series``, ``copy_templates``); "" while none did
    copy_of: Optional[dict] = None  # a partial build: each child group of a grouped group that is
    # an exact copy of a sibling -> the first of its copies (``copies.copy_classes``)
    copies_proven: Optional[list] = None  # the lists of sibling groups ``copy_of`` was proven for
    replication: Optional[replicate.Replication] = None  # the whole build: the copies grouped once
    shown: Optional[frozenset] = None  # an expand-ahead build: the groups shown, the one built ahead included
    subtree: Optional[list] = None  # an expand-ahead build: the ids of the group built ahead and every group
    # under it, as the tree is at the step that read them


def _block_series(b: _Build) -> None:
    b.new_series = series.detect_block_series(b.h)


def _rehash_new_series(b: _Build) -> None:
    """Structure hashes again for the new series and their ancestors only."""
    dirty = set()
    for s in b.new_series:
        dirty.add(s.id)
        dirty.update(b.h.ancestors(s.id))
    templates.hash_structures(b.h, dirty)


def _drop_templates(b: _Build) -> None:
    """Hashed for block series only: no template ids in the result."""
    b.h.templates = {}
    for g in b.h.groups:
        g.template = None


def _release_adjacency(b: _Build) -> None:
    """The grouping phases' adjacency: not needed once the tree is final."""
    b.h.child_edges = b.h.edge_arrays = b.h.metaedge_table = None


def _inferring(b: _Build) -> bool:
    return b.h.options.infer_scopes is not False


def _find_copies(b: _Build) -> None:
    b.replication = replicate.find_copies(b.h)


PIPELINE: Pipeline[_Build] = Pipeline("hierarchy", [
    Step("scopes", lambda b: scopes.build_scopes(b.h)),
    Step("kernels", lambda b: kernels.group_kernels(b.h), when=lambda b: b.h.options.group_kernels),
    Step("find_copies", _find_copies, when=lambda b: b.h.options.replicate_copies),
    Step("infer_scopes", lambda b: infer.infer_scopes(b.h), when=_inferring),
    Step("infer_regions", lambda b: regions.infer_regions(b.h), when=_inferring),
    Step("op_series", lambda b: series.detect_op_series(b.h), when=lambda b: b.h.options.series_min_size > 0),
    Step("split", lambda b: split.split_wide_groups(b.h)),
    Step("replicate", lambda b: replicate.replicate_copies(b.h, b.replication),
         when=lambda b: b.replication is not None and bool(b.replication.classes)),
    Step("metaedges", lambda b: metaedges.build_metaedges(b.h)),
    Step("templates", lambda b: templates.hash_structures(b.h),
         when=lambda b: b.h.options.templates or b.h.options.block_series_min_size > 0),
    Step("block_series", _block_series, when=lambda b: b.h.options.block_series_min_size > 0),
    Step("series_templates", _rehash_new_series, when=lambda b: bool(b.new_series)),
    Step("template_ids", lambda b: templates.number_templates(b.h), when=lambda b: b.h.options.templates),
    Step("drop_templates", _drop_templates, when=lambda b: not b.h.options.templates),
    Step("stats", lambda b: stats.compute_stats(b.h)),
    Step("release", _release_adjacency),
])

def _prove_unique(step: str):
    """A step: whether each child group of a grouped group either can share a template with no
    other group (``unique.unproven``) or is an exact copy of a sibling (``copies.copy_classes``:
    then it is grouped and hashed as its copies are); if neither is proven, the partial build
    stops there (the first view needs the whole build's templates)."""
    def prove(b: _Build) -> None:
        h = b.h
        rest = unproven(h, [h.group(g).children for g in h.grouped_ids()])
        if rest != b.copies_proven:  # the same lists as the last proof: what it proved holds
            b.copy_of = copy_classes(h, rest) if any(rest) else {}
            b.copies_proven = rest
        if b.copy_of is None:
            b.not_unique_at = step
    return Step(step, prove, when=_proven)


def _whole_roots_are_copied(h: Hierarchy, copy_of: dict) -> bool:
    """Whether each root of a whole subtree is the first of a class of exact copies among its
    siblings, with another member: then every group under it shares its structure with the
    group in the same place under each copy."""
    firsts = [h.group_index.get(w) for w in h.whole_subtrees]
    return all(w is not None and first_of_copies(copy_of, w) for w in firsts)


def _whole_subtree_templates(b: _Build) -> None:
    """Steps 5 and 6 of the whole build under the roots of whole subtrees: every group's
    structure hash, the block series among their children, the new series and their ancestors
    there hashed again."""
    h = b.h
    roots = h.whole_root_ids()
    inside = [gid for gid in b.subtree if gid not in roots]
    templates.hash_structures(h, set(inside))
    made = series.detect_block_series(h, only=roots + inside)
    if made:
        dirty = {s.id for s in made}
        for s in made:
            dirty.update(a for a in h.ancestors(s.id) if h.under_whole_subtree(a))
        templates.hash_structures(h, dirty)
        b.subtree = b.subtree + [s.id for s in made]


def _copy_series(b: _Build) -> None:
    """Block series among the grouped groups' children, from what the proofs say of their
    structure hashes (a class of copies shares one; a unique group shares none); each series
    made must be proven unique itself, and is then grouped (the whole build puts nothing else
    in it)."""
    h, n = b.h, b.h.n_ops
    grouped = h.grouped_ids()
    for gid in grouped:
        for c in h.group(gid).children:
            if c >= n:
                first = b.copy_of.get(c)
                h.groups[c - n].structure_hash = hash(("copies", first) if first is not None else ("unique", c))
    made = series.detect_block_series(h, only=grouped)
    if made and any(unproven(h, [[s.id for s in made]])):
        b.not_unique_at = "copy_series"
        return
    h.grouped_only = h.grouped_only | {s.name for s in made}


def _number_grouped_templates(b: _Build) -> None:
    if not templates.number_grouped_templates(b.h, b.copy_of):
        b.not_unique_at = "copy_templates"


def _proven(b: _Build) -> bool:
    return not b.not_unique_at


def _if_proven(step: Step) -> Step:
    return Step(step.name, step.run, when=lambda b: _proven(b) and (step.when is None or step.when(b)))


_STEP = {s.name: s for s in PIPELINE.steps}
FIRST_VIEW_PIPELINE: Pipeline[_Build] = Pipeline("first_view_hierarchy", [
    _STEP["scopes"],
    _STEP["kernels"],
    _prove_unique("unique_scopes"),  # the scopes' children already: a stop here loses no work
    _if_proven(_STEP["infer_scopes"]),
    _if_proven(_STEP["infer_regions"]),
    _if_proven(_STEP["op_series"]),
    _if_proven(_STEP["split"]),
    _prove_unique("unique"),
    _if_proven(_STEP["metaedges"]),
    Step("copy_series", _copy_series,
         when=lambda b: _proven(b) and bool(b.copy_of) and b.h.options.block_series_min_size > 0),
    Step("copy_templates", _number_grouped_templates,
         when=lambda b: _proven(b) and bool(b.copy_of) and b.h.options.templates),
    _if_proven(_STEP["stats"]),
    _STEP["release"],
])


def _into_whole_subtree(b: _Build) -> None:
    """The grouping phases run in the whole subtree only (the shown groups are grouped already):
    the base edges placed there only."""
    b.h.grouped_only = frozenset(b.h.whole_subtrees)
    b.subtree = b.h.whole_subtree_ids()  # the walk the grouping phases read too
    b.h.child_edges = placement.ChildEdges(b.h, within=b.subtree)


def _shown_again(b: _Build) -> None:
    """The grouping phases are done: the shown groups grouped again, the subtree as it is now."""
    b.h.grouped_only = b.shown
    b.subtree = b.h.subtree_ids(b.h.whole_root_ids())


EXPAND_AHEAD_PIPELINE: Pipeline[_Build] = Pipeline("expand_ahead_hierarchy", [
    Step("into_subtree", _into_whole_subtree),
    _STEP["infer_scopes"],
    _STEP["infer_regions"],
    _STEP["op_series"],
    _STEP["split"],
    Step("shown", _shown_again),
    Step("metaedges", lambda b: metaedges.build_metaedges(b.h, within=b.subtree)),
    Step("whole_templates", _whole_subtree_templates),
    Step("copy_templates", _number_grouped_templates, when=lambda b: b.h.options.templates),
    Step("stats", lambda b: stats.compute_stats(b.h, within=b.subtree), when=_proven),
    _STEP["release"],
])
