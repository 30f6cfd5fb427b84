"""Compound composition: lay out expanded groups bottom-up and place them into their parents.

Follows [VAST] §5.2 (each group's BridgeGraph is laid out on its own, child sizes
first, and placed into its parent, so expanding a group re-lays out only it and its
ancestors) and [HCG-LAYOUT] (a reusable standalone hierarchical compound layout).
Each group layout is cached in the caller's :class:`LayoutCache` under (group, the expanded
groups below it, options): a sibling's layout is reused untouched when another group is expanded.

The steps of :data:`SCENE`, in order: ``visible`` (the expanded groups whose ancestors are all
expanded), ``group_layouts`` (bottom-up, cached; each group the first view opens folded to
the room :mod:`fit` gives it, the same in every scene), ``place`` (each group's layout into its
parent's box, absolute coordinates), ``scene`` (the wire Scene and its stats).

Pre: a Hierarchy; ``expanded`` names groups (the root is always expanded; a group whose
ancestor is collapsed is not visible and ignored). Post: a wire :class:`Scene` in absolute
coordinates (y down): every visible node once, children inside their expanded parent's box,
no two sibling boxes overlapping, every edge from its source border to its target border.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Iterable, Optional

from tb_graph_plugin import wire
from tb_graph_plugin.hierarchy.model import Hierarchy
from tb_graph_plugin.hierarchy.split import is_artificial
from tb_graph_plugin.hierarchy.stats import top_placement
from tb_graph_plugin.layout.scene.cache import LayoutCache
from tb_graph_plugin.layout.scene.fit import fit_heights
from tb_graph_plugin.layout.scene.group import GroupLayout, layout_group
from tb_graph_plugin.layout.scene.options import SceneOptions
from tb_graph_plugin.layout.scene.placed import PlacedNode
from tb_graph_plugin.layout.scene.sizes import collapsed_size, edge_width, shape_label
from tb_graph_plugin.pipeline import Pipeline, Step

__all__ = ["LayoutCache", "SCENE", "visible_expanded", "group_layouts", "build_scene"]


def visible_expanded(h: Hierarchy, expanded: Iterable[str]) -> set[int]:
    """Ids of the expanded groups that are visible (all ancestors expanded), root included."""
    root = h.root.id
    want = {root}
    for name in expanded:
        if not h.has(name) or not h.is_group(name):
            raise KeyError(f"no group named {name!r}")
        want.add(h.id_of(name))
    return {g for g in want if g == root or all(a in want for a in h.ancestors(g))}


def group_layouts(h: Hierarchy, visible: set[int], o: SceneOptions, cache: LayoutCache,
                  rooms: Optional[dict[int, float]] = None) -> dict[int, GroupLayout]:
    """GroupLayout of every visible expanded group, children before parents; ``rooms``: the
    height the first view gives each group it opens (:mod:`fit`; None: computed, or taken from
    ``cache``)."""
    if rooms is None:
        rooms = fit_heights(h, o, cache, group_layouts)
    below: dict[int, set[int]] = {g: set() for g in visible}
    for g in visible:
        for a in h.ancestors(g):
            if a in below:
                below[a].add(g)
    out: dict[int, GroupLayout] = {}
    root = h.root.id
    # Deepest first: a group's open children are laid out before it. (A loop, not a recursive
    # closure: that closure's cell held ``h`` in a reference cycle, and a worker's ``gc.freeze``
    # after the whole build then kept a first view's partial Hierarchy for good.)
    for gid in sorted(visible, key=lambda g: -len(h.ancestors(g))):
        key = (gid, frozenset(below[gid]), o)
        got = cache.groups.get(key)
        if got is None:
            sizes = {c: (out[c].width, out[c].height) if c in visible else collapsed_size(h, c, o)
                     for c in h.group(gid).children}
            t = time.perf_counter()
            got = layout_group(h, gid, sizes, o, is_root=(gid == root), cache=cache, fit_h=rooms.get(gid))
            got.seconds = time.perf_counter() - t
            cache.groups.put(key, got)
        out[gid] = got
    return out


def _scene_node(h: Hierarchy, p: PlacedNode, x: float, y: float, parent: Optional[str],
                expanded: bool) -> wire.SceneNode:
    node = wire.SceneNode(name=p.name, label=p.label or p.name.rsplit("/", 1)[-1], kind=p.kind, x=x, y=y,
                          width=p.width, height=p.height, parent=parent, expanded=expanded,
                          extracted=p.extracted, of=p.of)
    if p.hid is None:
        return node
    slim = h.slim
    if p.hid < h.n_ops:
        node.label = h.label(p.hid)
        node.op = slim.ops[p.hid]
        node.device = slim.devices[p.hid]
        node.xla_cluster = slim.xla_clusters[p.hid]
    else:
        g = h.group(p.hid)
        node.label = g.label
        node.cardinality = g.cardinality
        node.template = g.template
        node.device, node.xla_cluster = top_placement(h, p.hid)
        node.compute_time_us = g.compute_time_us
        node.memory_bytes = g.memory_bytes
        node.artificial = is_artificial(g)
        node.inferred = g.inferred
    return node


@dataclasses.dataclass
class _Compose:
    """The state the steps of :data:`SCENE` fill in."""

    h: Hierarchy
    graph_ref: wire.GraphRef
    expanded: Iterable[str]
    o: SceneOptions
    cache: LayoutCache
    visible: set[int] = dataclasses.field(default_factory=set)
    layouts: dict[int, GroupLayout] = dataclasses.field(default_factory=dict)
    nodes: list[wire.SceneNode] = dataclasses.field(default_factory=list)
    edges: list[wire.SceneEdge] = dataclasses.field(default_factory=list)
    engines: dict[str, int] = dataclasses.field(default_factory=dict)
    scene: Optional[wire.Scene] = None


def _visible(c: _Compose) -> None:
    c.visible = visible_expanded(c.h, c.expanded)


def _group_layouts(c: _Compose) -> None:
    c.layouts = group_layouts(c.h, c.visible, c.o, c.cache)


def _place(c: _Compose) -> None:
    """Each group's nodes and edges, offset by its box in its parent, root first."""
    h, slim = c.h, c.h.slim
    stack = [(h.root.id, 0.0, 0.0, None)]
    while stack:
        gid, ox, oy, parent = stack.pop()
        gl = c.layouts[gid]
        c.engines[gl.engine] = c.engines.get(gl.engine, 0) + 1
        for p in gl.nodes:
            x, y = p.x + ox, p.y + oy
            is_open = p.hid is not None and p.hid in c.visible
            c.nodes.append(_scene_node(h, p, x, y, parent, is_open))
            if is_open:
                stack.append((p.hid, x - p.width / 2, y - p.height / 2, p.name))
        for e in gl.edges:
            shape = None
            if e.base_edge is not None:
                shape = slim.shape_of(int(slim.edge_src[e.base_edge]), int(slim.edge_output[e.base_edge]))
            c.edges.append(wire.SceneEdge(
                source=e.source, target=e.target, points=[[x + ox, y + oy] for x, y in e.points],
                kind=e.kind, width=edge_width(e.size, c.o),
                label=shape_label(e.count, shape), count=e.count, reversed=e.reversed))


def _scene(c: _Compose) -> None:
    h, root = c.h, c.h.root.id
    ordered = sorted(c.visible - {root}, key=lambda g: h.name_of(g))
    stats = {"ops": h.root.cardinality, "nodes": len(c.nodes), "edges": len(c.edges),
             "groups_laid_out": 0, "engines": c.engines, "layout_seconds": 0.0}  # the two set by build_scene
    c.scene = wire.Scene(graph=c.graph_ref, expanded=[h.name_of(g) for g in ordered], nodes=c.nodes, edges=c.edges,
                         width=c.layouts[root].width, height=c.layouts[root].height, stats=stats)


SCENE: Pipeline[_Compose] = Pipeline("scene", [
    Step("visible", _visible),
    Step("group_layouts", _group_layouts),
    Step("place", _place),
    Step("scene", _scene),
])


def build_scene(h: Hierarchy, graph_ref: wire.GraphRef, expanded: Iterable[str] = (),
                options: SceneOptions = SceneOptions(), cache: Optional[LayoutCache] = None) -> wire.Scene:
    """The laid-out scene of ``h`` with the groups ``expanded`` open (absolute px, y down).

    ``cache``: the :class:`LayoutCache` of ``h``, owned by the caller and reused across calls;
    without one, nothing is reused between calls.
    """
    t0 = time.perf_counter()
    cache = (cache if cache is not None else LayoutCache()).bind(h)
    misses0 = cache.groups.stats.misses
    scene = SCENE.run(_Compose(h, graph_ref, expanded, options, cache)).scene
    assert scene is not None
    scene.stats["groups_laid_out"] = cache.groups.stats.misses - misses0
    scene.stats["layout_seconds"] = time.perf_counter() - t0
    return scene
