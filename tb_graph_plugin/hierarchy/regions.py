"""Hierarchy phase 2b (optional): dataflow block inference where names carry no block.

InceptionV3 names its layers ``conv2d_17``, ``batch_normalization_17``, ``mixed3``: no
name says which inception module a conv belongs to, so phase 2 leaves 300 siblings. The
modules are still visible in the dataflow: each one starts after one ``mixed`` concat and
ends at the next, and every path of the model passes through those concats. This phase
(ours; after single-entry single-exit region decomposition, cf. the program structure tree
[PST94], simplified to the dominator chain of the main path, [CHK01]; docs/references.md) cuts a
group's children DAG at the separators of its main path (``dataflow.dominator_regions``)
and makes each region with at least ``region_min_size`` children a group named after its
exit, the layer whose output leaves the region (``mixed3``); labels drop the trailing
uniquifier the group's children share (``mixed3_1`` in a Keras 3 trace). When the exit is
an op, not a layer (PyTorch's ``1540``, ``input.3``), the region is named after its last
layer in dataflow order. A region holding more than half of the group's children
structures nothing (a PyTorch model's body between its embedding and its output) and is
not made.

A region holding exactly one block made from names (Xception's ``block2``: its separable
convs are named, its shortcut conv, batch norm and ``add`` are not; ``block5`` and the
``add_3`` after it) completes that block, whatever its size, instead of becoming a new group: the author's name stays, the dataflow says what belongs.
Where names and dataflow both apply, names win: this phase runs after phase 2 and only on
groups that still have at least ``region_min_children`` children, so a ResNet's blocks come
from ``conv2_block1_*`` (they are also regions: an identity block is everything between two
``_out`` adds) and a MobileNetV2's from ``block_1_*`` (its stride blocks have no skip, so
dataflow alone would not see them). A region that is the whole group, or a chain of one
layer, is not grouped; nor is anything inside a block names already made (the author's
block is the unit), nor in a group whose children are mostly ops that are no layers: regions are
cut between layers (``infer_names.Layers``: group children, or a Keras conceptual graph's ops; an
op-level graph, such as a flat TF1 graph, is left as it is). Same switch as phase 2 (``infer_scopes``: False turns both off).

Pre-condition: phase 2 done; no series yet.
Post-condition: the ops under every pre-existing group are unchanged; each new group is
flagged ``inferred = "dataflow"``, holds >= ``region_min_size`` children and is convex, so a
group whose children DAG was acyclic keeps an acyclic metagraph.
"""

from __future__ import annotations

from tb_graph_plugin.hierarchy.dataflow import Contraction, dominator_regions
from tb_graph_plugin.hierarchy.infer_names import Layers, shared_uniquifier
from tb_graph_plugin.hierarchy.model import Hierarchy
from tb_graph_plugin.hierarchy.placement import placed_edges
from tb_graph_plugin.hierarchy.scopes import add_group

__all__ = ["infer_regions"]


def infer_regions(h: Hierarchy) -> int:
    """Insert dataflow region groups; return how many were created."""
    opts = h.options
    if opts.infer_scopes is False:
        return 0
    created = 0
    edges = placed_edges(h)
    is_layer = Layers(h)
    for g in h.regrouped_groups():  # snapshot: new groups are not revisited
        children = g.children
        if len(children) < opts.region_min_children or g.inferred or g.is_series:
            continue
        layers = is_layer.count(children)
        if layers < opts.region_min_children or layers * 2 < len(children):
            continue  # an op-level graph (inside a layer, a training step's root): no layers to cut
        created += _regions_in_group(h, g, edges.graph(g.id), is_layer)
    h.inferred_scopes = h.inferred_scopes or created > 0
    return created


def _regions_in_group(h: Hierarchy, g, succ: list[set[int]], is_layer: Layers) -> int:
    children = g.children
    n = h.n_ops

    def named(members):
        return [k for k in members if children[k] >= n and h.groups[children[k] - n].inferred == "name"]

    regions = [(r, e) for r, e in dominator_regions(succ) if 2 <= len(r) <= len(children) // 2
               and (len(r) >= h.options.region_min_size or len(named(r)) == 1)]
    if not regions:
        return 0
    contraction = Contraction(succ)  # regions are convex; checked anyway (post-condition)
    regions = [(r, e) for r, e in regions if contraction.try_add(r)]
    labels = [h.leaf_name(c) for c in children]  # names, not op-type labels: names name groups
    suffix = shared_uniquifier(labels)
    base = "" if g.parent < 0 else g.name + "/"
    region_of = {}
    made = []
    for members, exit_pos in regions:
        block = named(members)
        if len(block) == 1:  # the block names made, completed by what its dataflow holds
            region_of.update((k, h.groups[children[block[0]] - n]) for k in members if k != block[0])
            continue
        if len(members) < h.options.region_min_size:
            continue
        layers = [k for k in members if is_layer(children[k])]  # members in dataflow order
        if exit_pos >= 0 and is_layer(children[exit_pos]):
            label = labels[exit_pos]
        else:
            label = labels[layers[-1] if layers else members[-1]]
        if suffix and label.endswith(suffix):
            label = label[: -len(suffix)]
        name = base + label
        while name in h.group_index or name in h.slim.index:
            name += "/*"
        sub = add_group(h, name, label, g.id, inferred="dataflow")
        made.append(sub)
        for k in members:
            region_of[k] = sub
    new_children = []
    for k, c in enumerate(children):
        sub = region_of.get(k)
        if sub is None:
            new_children.append(c)
            continue
        if not sub.children and sub.inferred == "dataflow":
            new_children.append(sub.id)  # the region takes its first member's place
        sub.children.append(c)
        h.set_parent(c, sub.id)
    g.children = new_children  # a completed named block keeps its layers first, then what joined
    return len(made)
