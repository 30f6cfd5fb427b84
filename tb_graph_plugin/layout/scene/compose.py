"""Compound composition: lay out expanded groups bottom-up and place them into their parents.

Follows [VAST] §5.2 (each group's BridgeGraph is laid out on its own, child sizes
first, and placed into its parent, so expanding a group re-lays out only it and its
ancestors) and [HCG-LAYOUT] (a reusable standalone hierarchical compound layout).
Each group layout is cached under (group, the expanded groups below it, options): a
sibling's layout is reused untouched when another group is expanded.

Pre: a Hierarchy; ``expanded`` names groups (the root is always expanded; a group whose
ancestor is collapsed is not visible and ignored). Post: a wire :class:`Scene` in absolute
coordinates (y down): every visible node once, children inside their expanded parent's box,
no two sibling boxes overlapping, every edge from its source border to its target border.
"""

from __future__ import annotations

import collections
import threading
import time
import weakref
from typing import Iterable, Optional

from tb_graph_plugin import wire
from tb_graph_plugin.hierarchy.split import is_artificial
from tb_graph_plugin.layout.scene.group import GroupLayout, layout_group
from tb_graph_plugin.layout.scene.options import SceneOptions
from tb_graph_plugin.layout.scene.sizes import edge_width, meta_size, shape_label

__all__ = ["LayoutCache", "visible_expanded", "group_layouts", "build_scene"]


class LayoutCache:
    """LRU cache of :class:`GroupLayout` keyed by (group id, expanded below, options)."""

    def __init__(self, max_entries: int = 2048):
        self.max_entries = max_entries
        self._data: collections.OrderedDict = collections.OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key) -> Optional[GroupLayout]:
        with self._lock:
            got = self._data.get(key)
            if got is not None:
                self._data.move_to_end(key)
                self.hits += 1
            else:
                self.misses += 1
            return got

    def put(self, key, value: GroupLayout) -> None:
        with self._lock:
            self._data[key] = value
            while len(self._data) > self.max_entries:
                self._data.popitem(last=False)


_CACHES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_CACHES_LOCK = threading.Lock()


def cache_for(hierarchy) -> LayoutCache:
    """The LayoutCache living as long as ``hierarchy``."""
    with _CACHES_LOCK:
        c = _CACHES.get(hierarchy)
        if c is None:
            c = _CACHES[hierarchy] = LayoutCache()
        return c


def visible_expanded(h, expanded: Iterable[str]) -> set[int]:
    """Ids of the expanded groups that are visible (all ancestors expanded), root included."""
    root = h.root.id
    want = {root}
    for name in expanded:
        if not h.has(name) or not h.is_group(name):
            raise KeyError(f"no group named {name!r}")
        want.add(h.id_of(name))
    return {g for g in want if g == root or all(a in want for a in h.ancestors(g))}


def _collapsed_size(h, c: int, o: SceneOptions) -> tuple[float, float]:
    if c < h.n_ops:
        return o.op_size
    return meta_size(h.cardinality(c), o, h.label(c))


def group_layouts(h, visible: set[int], o: SceneOptions, cache: LayoutCache) -> dict[int, GroupLayout]:
    """GroupLayout of every visible expanded group, children before parents."""
    below: dict[int, set[int]] = {g: set() for g in visible}
    for g in visible:
        for a in h.ancestors(g):
            if a in below:
                below[a].add(g)
    out: dict[int, GroupLayout] = {}
    root = h.root.id

    def get(gid: int) -> GroupLayout:
        if gid in out:
            return out[gid]
        key = (gid, frozenset(below[gid]), o)
        got = cache.get(key)
        if got is None:
            sizes = {}
            for c in h.group(gid).children:
                if c in visible:
                    gl = get(c)
                    sizes[c] = (gl.width, gl.height)
                else:
                    sizes[c] = _collapsed_size(h, c, o)
            t = time.perf_counter()
            got = layout_group(h, gid, sizes, o, is_root=(gid == root))
            got.seconds = time.perf_counter() - t
            cache.put(key, got)
        out[gid] = got
        return got

    for g in sorted(visible, key=lambda g: -len(h.ancestors(g))):  # deepest first
        get(g)
    return out


def _top(hist: dict) -> Optional[str]:
    return max(hist.items(), key=lambda kv: (kv[1], kv[0]))[0] if hist else None


def _scene_node(h, p, x, y, parent: Optional[str], expanded: bool) -> wire.SceneNode:
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
        node.device = _top(g.device_histogram)
        node.xla_cluster = _top(g.xla_histogram)
        node.compute_time_us = g.compute_time_us
        node.memory_bytes = g.memory_bytes
        node.artificial = is_artificial(g)
        node.inferred = g.inferred
    return node


def build_scene(h, graph_ref: wire.GraphRef, expanded: Iterable[str] = (), options: SceneOptions = SceneOptions(),
                cache: Optional[LayoutCache] = None) -> wire.Scene:
    """The laid-out scene of ``h`` with the groups ``expanded`` open (absolute px, y down)."""
    t0 = time.perf_counter()
    cache = cache if cache is not None else cache_for(h)
    misses0 = cache.misses
    visible = visible_expanded(h, expanded)
    layouts = group_layouts(h, visible, options, cache)
    root = h.root.id
    nodes: list[wire.SceneNode] = []
    edges: list[wire.SceneEdge] = []
    engines: dict[str, int] = {}
    stack = [(root, 0.0, 0.0, None)]
    while stack:
        gid, ox, oy, parent = stack.pop()
        gl = layouts[gid]
        engines[gl.engine] = engines.get(gl.engine, 0) + 1
        for p in gl.nodes:
            x, y = p.x + ox, p.y + oy
            is_open = p.hid is not None and p.hid in visible
            nodes.append(_scene_node(h, p, x, y, parent, is_open))
            if is_open:
                stack.append((p.hid, x - p.width / 2, y - p.height / 2, p.name))
        for e in gl.edges:
            shape = None
            if e.base_edge is not None:
                shape = h.slim.shape_of(h.slim.edge_src[e.base_edge], h.slim.edge_output[e.base_edge])
            edges.append(wire.SceneEdge(
                source=e.source, target=e.target, points=[[x + ox, y + oy] for x, y in e.points],
                kind=e.kind, width=edge_width(e.size, options),
                label=shape_label(e.count, shape), count=e.count, reversed=e.reversed))
    ordered = sorted(visible - {root}, key=lambda g: h.name_of(g))
    stats = {
        "ops": h.root.cardinality,
        "nodes": len(nodes),
        "edges": len(edges),
        "groups_laid_out": cache.misses - misses0,
        "engines": engines,
        "layout_seconds": time.perf_counter() - t0,
    }
    return wire.Scene(graph=graph_ref, expanded=[h.name_of(g) for g in ordered], nodes=nodes, edges=edges,
                      width=layouts[root].width, height=layouts[root].height, stats=stats)
