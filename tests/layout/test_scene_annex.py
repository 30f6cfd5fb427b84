"""Annex nodes drawn in a child's columns: floating copies of high fan-out parameters
(``scene/floating.py``, [NGRAPH-VIS]) and annotation stubs for edges touching an extracted
node (``scene/annotate.py``, stock tab / [VAST] §5.2; docs/references.md). Asserts the modules'
post-conditions."""

from __future__ import annotations

import collections

from tb_graph_plugin import wire
from tb_graph_plugin.cli import load_graph_def
from tb_graph_plugin.graph import build_slim_graph
from tb_graph_plugin.graph.model import SlimGraphOptions
from tb_graph_plugin.hierarchy import build_hierarchy
from tb_graph_plugin.layout.scene import LayoutCache, SceneOptions, build_scene
from tb_graph_plugin.layout.scene.bridge import boundary_edges
from tb_graph_plugin.layout.scene.group import bridge_layout_graph

from .invariants import TOL, boxes_overlap
from .test_scene import REF, _hub_graph_hierarchy, check_scene


def _box(n):
    return (n.x, n.y, n.width, n.height)


def check_floats(h, scene: wire.Scene, group: str, original: str, o: SceneOptions = SceneOptions()):
    """Post-conditions of floating for the floated child ``original`` of expanded ``group``."""
    by_name = {n.name: n for n in scene.nodes}
    gid, oid = h.id_of(group), h.id_of(original)
    # the layout graph no longer contains the floated node
    assert str(oid) not in {n.id for n in bridge_layout_graph(h, gid, o).nodes}
    copies = {n.name: n for n in scene.nodes if n.of == original and n.kind == wire.NodeKind.IN_EMBEDDING}
    assert original in copies
    assert all(c.parent == group for c in copies.values())
    # every original metaedge from the floated node is drawn from one of its copies, to its target;
    # edges leaving the group start at one more copy (the carrier, in the flow) and end on bridges
    want = collections.Counter(h.name_of(me.dst) for me in h.group(gid).metaedges if me.src == oid)
    got = collections.Counter(e.target for e in scene.edges if e.source in copies and by_name[e.target].kind != wire.NodeKind.BRIDGE)
    leaving = {e.source for e in scene.edges if e.source in copies and by_name[e.target].kind == wire.NodeKind.BRIDGE}
    assert got == want and len(copies) == len(want) + len(leaving) and len(leaving) <= 1
    assert bool(leaving) == any(be.inner == oid and not be.incoming for be in boundary_edges(h, gid))
    parent = by_name[group]
    for e in scene.edges:
        if e.source not in copies or e.source in leaving:
            assert e.target not in copies
            continue
        copy, consumer = copies[e.source], by_name[e.target]
        # beside the consumer: left of it, within its row, close, inside the parent
        assert copy.x + copy.width / 2 <= consumer.x - consumer.width / 2 + TOL
        assert consumer.x - consumer.width / 2 - (copy.x + copy.width / 2) <= o.embedding_gap + TOL
        assert abs(copy.y - consumer.y) <= max(consumer.height, copy.height * 12) / 2
        assert parent.x - parent.width / 2 <= copy.x - copy.width / 2 + TOL
        assert copy.x + copy.width / 2 <= parent.x + parent.width / 2 + TOL
    for c in copies.values():  # no overlap with anything drawn in the same group
        for n in scene.nodes:
            if n.parent == group and n.name != c.name:
                assert not boxes_overlap(_box(c), _box(n)), (c.name, n.name)
    return copies


def test_hub_parameter_floats_beside_each_consumer():
    h = _hub_graph_hierarchy()
    scene = build_scene(h, REF, ["train"], cache=LayoutCache())
    check_scene(h, scene)
    copies = check_floats(h, scene, "train", "train/lr")
    assert len(copies) == 20  # scale_ax .. scale_tx
    assert "train/lr@train/scale_bx" in copies
    assert not any(n.extracted for n in scene.nodes if n.name.startswith("train/lr"))
    # the NoOp is still extracted; the floated hub took no part in extraction
    assert {n.name for n in scene.nodes if n.extracted} == {"train/update"}


def test_float_threshold_and_off():
    h = _hub_graph_hierarchy()
    off = build_scene(h, REF, ["train"], SceneOptions(float_fanout=0), cache=LayoutCache())
    assert next(n for n in off.nodes if n.name == "train/lr").kind == wire.NodeKind.OP
    assert not [n for n in off.nodes if n.of == "train/lr" and n.kind == wire.NodeKind.IN_EMBEDDING]
    high = build_scene(h, REF, ["train"], SceneOptions(float_fanout=21), cache=LayoutCache())
    assert next(n for n in high.nodes if n.name == "train/lr").kind == wire.NodeKind.OP  # 20 consumers < 21
    # `x` feeds one op only: never floated
    on = build_scene(h, REF, ["train"], SceneOptions(float_fanout=1), cache=LayoutCache())
    assert next(n for n in on.nodes if n.name == "train/x").kind == wire.NodeKind.IN_EMBEDDING


def test_real_tf1_variable_handle_floats(real_logs):
    """tf1_graph with variable reads not embedded: its VarHandleOp feeds 3 ops of its group and
    one outside it (a carrier copy takes that edge to the bridge)."""
    gd = load_graph_def(str(real_logs.get("tf1_graph")))
    h = build_hierarchy(build_slim_graph(gd, SlimGraphOptions(embed_variable_reads=False)))
    hid = next(i for i in range(h.n_ops) if h.slim.ops[i] == "VarHandleOp" and h.has(h.name_of(i)))
    gid = h.parent(hid)
    expanded = [h.name_of(a) for a in h.ancestors(hid) if a != h.root.id]
    scene = build_scene(h, REF, expanded, cache=LayoutCache())
    check_scene(h, scene)
    if gid != h.root.id:
        copies = check_floats(h, scene, h.name_of(gid), h.name_of(hid))
    else:  # no group box at the root: the same checks but the parent one
        name = h.name_of(hid)
        assert str(hid) not in {n.id for n in bridge_layout_graph(h, gid).nodes}
        copies = {n.name for n in scene.nodes if n.of == name and n.kind == wire.NodeKind.IN_EMBEDDING}
        want = collections.Counter(h.name_of(me.dst) for me in h.group(gid).metaedges if me.src == hid)
        assert collections.Counter(e.target for e in scene.edges if e.source in copies) == want
    assert len(copies) >= 3
    plain = build_scene(h, REF, expanded, SceneOptions(float_fanout=0), cache=LayoutCache())
    check_scene(h, plain)
    assert next(n for n in plain.nodes if n.name == h.name_of(hid)).kind == wire.NodeKind.OP
    assert len([e for e in plain.edges if e.source == h.name_of(hid)]) == len(copies)


def _side_sets(scene: wire.Scene):
    """Extracted node name -> names drawn in its side-column slot (itself and its stubs)."""
    sides = {n.name: {n.name} for n in scene.nodes if n.extracted}
    for n in scene.nodes:
        for x in sides:
            if n.name.startswith(x + "/__ann_"):
                sides[x].add(n.name)
    return sides


def check_no_edge_into_side_columns(scene: wire.Scene):
    by_name = {n.name: n for n in scene.nodes}
    sides = _side_sets(scene)
    slot = {m: x for x, names in sides.items() for m in names}
    for e in scene.edges:
        a, b = slot.get(e.source), slot.get(e.target)
        assert a == b, (e.source, e.target)  # both in one side slot, or both outside every side slot
        if a is None:
            continue
        boxes = [by_name[m] for m in sides[a]]
        lo = min(n.x - n.width / 2 for n in boxes) - TOL
        hi = max(n.x + n.width / 2 for n in boxes) + TOL
        assert all(lo <= p[0] <= hi for p in e.points), (e.source, e.target)
    return sides


def test_edges_to_extracted_nodes_become_labelled_stubs():
    h = _hub_graph_hierarchy()
    o = SceneOptions(float_fanout=0)
    scene = build_scene(h, REF, ["train"], o, cache=LayoutCache())
    check_scene(h, scene)
    sides = check_no_edge_into_side_columns(scene)
    assert set(sides) == {"train/lr", "train/update"}
    by_name = {n.name: n for n in scene.nodes}
    flow = [n.name for n in scene.nodes if n.parent == "train" and n.kind == wire.NodeKind.OP and not n.extracted]
    scale = [f for f in flow if "scale_" in f]
    for f in scale:  # each flow op names both extracted neighbours with a stub in its own columns
        stubs = {n.of: n for n in scene.nodes if n.name.startswith(f + "/__ann_")}
        assert set(stubs) == {"train/lr", "train/update"}
        assert stubs["train/lr"].label == "\u2190 lr" and stubs["train/update"].label == "\u2192 update"
        assert stubs["train/lr"].x < by_name[f].x < stubs["train/update"].x
        assert [e for e in scene.edges if (e.source, e.target) == (stubs["train/lr"].name, f)]
        assert [e for e in scene.edges if (e.source, e.target) == (f, stubs["train/update"].name)]
    # the extracted NoOp shows max_annotations named stubs and one "+N more" for the rest
    ann = [by_name[m] for m in sides["train/update"] if m != "train/update"]
    named = [n for n in ann if n.of is not None]
    more = [n for n in ann if n.of is None]
    assert len(named) == o.max_annotations and len(more) == 1
    n_in = len({me.src for me in h.group(h.id_of("train")).metaedges if me.dst == h.id_of("train/update")})
    assert n_in == 20 and more[0].label == f"+{n_in - o.max_annotations} more"
    assert all(n.kind == wire.NodeKind.STUB for n in ann)
    # every metaedge touching an extracted child is drawn at its flow end
    g = h.group(h.id_of("train"))
    side_ids = {h.id_of(x) for x in sides}
    for me in g.metaedges:
        if me.src in side_ids and me.dst not in side_ids:
            assert [e for e in scene.edges if e.target == h.name_of(me.dst) and by_name[e.source].of == h.name_of(me.src)]
        elif me.dst in side_ids and me.src not in side_ids:
            assert [e for e in scene.edges if e.source == h.name_of(me.src) and by_name[e.target].of == h.name_of(me.dst)]


def test_real_graph_no_edge_into_side_columns(real_logs):
    """A real TF2 training step (profile trace): its ``gradient_tape`` group is extracted."""
    h = build_hierarchy(build_slim_graph(load_graph_def(str(real_logs.get("tf2_trace_profile")))))
    groups = [g.name for g in h.walk_groups() if g.id != h.root.id]
    scene = build_scene(h, REF, groups, cache=LayoutCache())
    check_scene(h, scene)
    sides = check_no_edge_into_side_columns(scene)
    assert sides and any(len(v) > 1 for v in sides.values())  # extracted nodes, with stubs
    stubs = [n for n in scene.nodes if "/__ann_" in n.name]
    assert stubs and all(n.kind == wire.NodeKind.STUB for n in stubs)
    by_name = {n.name: n for n in scene.nodes}
    for n in stubs:  # a named stub names a drawn node (or a bridge's outer node, maybe inside a collapsed group)
        assert n.of is None or n.of in by_name or any(m.of == n.of for m in scene.nodes if m.kind == wire.NodeKind.BRIDGE)
