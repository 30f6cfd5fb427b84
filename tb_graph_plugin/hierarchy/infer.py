"""Hierarchy phase 2 (optional): infer scopes from the indices in layer names.

Keras 3 names nest only ``model/layer``; stage, block and layer index live in the layer's
own name, so a ResNet50's 176 layers, a MobileNetV2's 150 and a 12-layer encoder's 100
are siblings. This phase (ours; no reference document) reads the indices the way
frameworks write them and recovers the missing levels. It reads the names of *layers*, the
group children (Keras 3 layer scopes, PyTorch modules; in a Keras conceptual graph, its ops:
``infer_names.Layers``); other op children name no block, and are only taken along as glue
(below):

* a child label proposes *candidates*, prefixes ending in an index token (``conv2``,
  ``conv2_block1``), kept by size, nesting and family rules (``infer_names``: how names are read);
* candidates nest, the outermost index first: a layer holds its attention and its norm,
  and attention sublayers of different layers are never siblings of one group;
* a kept candidate becomes a group only if contracting it keeps its parent's metagraph
  acyclic (``dataflow.Contraction``, outer candidates first, larger first): names can lie
  (InceptionV3's ``mixed9_1`` is a concat of module ``mixed10``); a refused candidate's
  inner candidates are tried in its place.

Inferred groups are named ``parent/prefix`` (``/*`` appended on a name clash), labelled
with the prefix and flagged ``inferred = "name"``. Automatic mode (``infer_scopes=None``)
applies this to a group with at least ``infer_min_siblings`` group children when it at
least halves the number of direct children.

Pre-condition: phase 1 done (scopes); no series yet.
Post-condition: the set of ops under every original group is unchanged (inferred groups
only insert levels); member names are unchanged; every inferred group has >= 2 children;
when a group's children graph was acyclic, its new metagraph and every inferred group's
metagraph are acyclic.
"""

from __future__ import annotations

from tb_graph_plugin.hierarchy.dataflow import Contraction, topological_rank
from tb_graph_plugin.hierarchy.infer_names import Layers, kept_chains, labels_of
from tb_graph_plugin.hierarchy.model import Hierarchy
from tb_graph_plugin.hierarchy.placement import ChildEdges, placed_edges
from tb_graph_plugin.hierarchy.scopes import add_group

__all__ = ["infer_scopes"]


def infer_scopes(h: Hierarchy) -> int:
    """Insert inferred groups; return how many were created."""
    opts = h.options
    if opts.infer_scopes is False:
        return 0
    created = 0
    memo: dict[str, list[tuple[str, str]]] = {}  # label -> candidates; labels repeat across groups
    edges = placed_edges(h)
    layers = Layers(h)
    for g in h.regrouped_groups():  # snapshot: new groups are not revisited
        if opts.infer_scopes is None and len(g.children) < opts.infer_min_siblings:  # most groups
            continue
        if opts.infer_scopes is None and layers.count(g.children) < opts.infer_min_siblings:
            continue
        created += _infer_in_group(h, g, opts.infer_scopes is None, memo, edges, layers)
    h.inferred_scopes = h.inferred_scopes or created > 0
    return created


def _reach(succ, start, within, stop) -> set[int]:
    """Positions reachable from ``start`` inside ``within``, not walking past ``stop(x)``."""
    seen: set[int] = set()
    stack = [j for k in start for j in succ[k]]
    while stack:
        x = stack.pop()
        if x in seen or (within is not None and x not in within):
            continue
        seen.add(x)
        if not stop(x):
            stack.extend(succ[x])
    return seen


def _accepted(succ: list[set[int]], chains: list[list[str]]) -> list[list[str]]:
    """The chains restricted to accepted candidates, unclaimed glue ops absorbed.

    A candidate that is not convex only because of siblings no candidate claims (the
    residual ``Add`` between a Keras layer's attention and its norm lives at model level)
    takes them in: its convex hull (what lies on a path from it back to it) is tried, when
    the glue is no bigger than the named part (a name whose layers lie far apart must not
    swallow what lies between them).
    """
    positions: dict[str, list[int]] = {}
    inner: dict[str, list[str]] = {}  # candidate -> candidates directly inside it
    top: list[str] = []
    for k, chain in enumerate(chains):
        for depth, p in enumerate(chain):
            if p not in positions:
                positions[p] = []
                (inner.setdefault(chain[depth - 1], []) if depth else top).append(p)
            positions[p].append(k)
    pred: list[list[int]] = [[] for _ in succ]
    for k, s in enumerate(succ):
        for j in s:
            pred[j].append(k)
    accepted: set[str] = set()
    absorbed: dict[int, str] = {}  # position -> the candidate that took it in
    rank = topological_rank(succ)

    def hull_of(members, within) -> set[int]:
        """What lies on a path from ``members`` back to them (between their ranks, in a DAG)."""
        if rank is None:
            return _reach(succ, members, within, lambda x: False) & _reach(pred, members, within, lambda x: False)
        lo, hi = min(rank[m] for m in members), max(rank[m] for m in members)
        return (_reach(succ, members, within, lambda x: rank[x] >= hi)
                & _reach(pred, members, within, lambda x: rank[x] <= lo))

    def decide(level: list[str], within, claimed_here) -> None:
        contraction = Contraction(succ, within, rank)
        queue = sorted(level, key=lambda p: -len(positions[p]))
        while queue:
            p = queue.pop(0)
            members = positions[p]
            hull = hull_of(members, within)
            glue = hull.difference(members)
            if glue and (len(glue) > len(members) or glue & claimed_here
                         or any(g in contraction.block_of for g in glue)):
                glue = set()  # more glue than block, or a sibling's member: try it as it is
            if contraction.try_add(members + sorted(glue)):
                accepted.add(p)
                for g in glue:
                    absorbed[g] = p
                decide(inner.get(p, []), set(members) | glue,
                       {k for q in inner.get(p, []) for k in positions[q]})
            else:  # refused: what it held is decided at this level
                queue.extend(inner.get(p, []))
                queue.sort(key=lambda q: -len(positions[q]))

    decide(top, None, {k for p in positions for k in positions[p]})
    parent = {q: o for o, qs in inner.items() for q in qs}
    out = []
    for k, chain in enumerate(chains):
        if k in absorbed:  # glue goes where its (innermost) absorber is, under all its ancestors
            path = [absorbed[k]]
            while path[-1] in parent:
                path.append(parent[path[-1]])
            out.append(path[::-1])
        else:
            out.append([p for p in chain if p in accepted])
    return out


def _infer_in_group(h: Hierarchy, g, auto: bool, memo: dict, edges: ChildEdges, layers: Layers) -> int:
    children = g.children
    labels = labels_of(h, children, layers)
    placement = kept_chains(h, labels, memo)
    if not any(placement):
        return 0
    total = len(children)
    tops = {chain[0] for chain in placement if chain}
    n_direct = len(tops) + sum(1 for chain in placement if not chain)
    if auto and n_direct * 2 > total:
        return 0
    placement = _accepted(edges.graph(g.id), placement)
    if not any(placement):
        return 0
    made: dict[str, object] = {}
    new_children: list[int] = []
    base = "" if g.parent < 0 else g.name + "/"
    count = 0
    for c, chain in zip(children, placement):
        holder_children = new_children
        parent = g
        for p in chain:
            sub = made.get(p)
            if sub is None:
                name = base + p
                while name in h.group_index or name in h.slim.index:
                    name += "/*"
                sub = add_group(h, name, p, parent.id, inferred="name")
                made[p] = sub
                holder_children.append(sub.id)
                count += 1
            parent = sub
            holder_children = sub.children
        holder_children.append(c)
        h.set_parent(c, parent.id)
    g.children = new_children
    return count
