"""Cycles marked: edges drawn against the rank direction carry ``reversed`` (LayoutResult, scene)."""

from __future__ import annotations

import pytest

from tb_graph_plugin import wire
from tb_graph_plugin.cli import load_graph_def
from tb_graph_plugin.graph import build_slim_graph
from tb_graph_plugin.hierarchy import build_hierarchy
from tb_graph_plugin.layout import Engine, LayoutEdge, LayoutGraph, LayoutNode, LayoutOptions, RankDir, layout
from tb_graph_plugin.layout.scene import LayoutCache, SceneOptions, build_scene
from tests.hostile.conftest import hostile_logs_root  # noqa: F401 - the fixture (real TF1 while_loop log)

REF = wire.GraphRef("while_v1", "__run_graph__", wire.GraphKind.OP)


def _ring(n: int) -> LayoutGraph:
    nodes = [LayoutNode(str(i), 30, 10) for i in range(n)]
    edges = [LayoutEdge(str(i), str((i + 1) % n)) for i in range(n)]
    return LayoutGraph(nodes, edges + [LayoutEdge("0", "0")])  # and a self-loop


@pytest.mark.parametrize("engine", [Engine.FAST, Engine.DOT])
@pytest.mark.parametrize("rankdir", [RankDir.BT, RankDir.LR])
def test_a_ring_has_back_edges_marked(engine, rankdir):
    g = _ring(5)
    r = layout(g, LayoutOptions(engine=engine, rankdir=rankdir, memoize=False))
    assert len(r.reversed) == len(g.edges)
    assert r.reversed[-1] is False  # a self-loop is not drawn against the rank direction
    assert 1 <= sum(r.reversed) <= 2  # a 5-ring needs one edge turned round (dot may draw two ranks flat)
    axis, sign = (1, -1) if rankdir is RankDir.BT else (0, 1)
    for e, back in zip(g.edges[:-1], r.reversed):
        step = (r.positions[e.target][axis] - r.positions[e.source][axis]) * sign
        assert back == (step < 0), (e, back, step)


def test_a_dag_has_none():
    nodes = [LayoutNode(str(i), 30, 10) for i in range(6)]
    edges = [LayoutEdge("0", "1"), LayoutEdge("1", "2"), LayoutEdge("0", "3"), LayoutEdge("3", "2"),
             LayoutEdge("2", "4"), LayoutEdge("0", "5")]
    for engine in (Engine.FAST, Engine.DOT):
        assert layout(LayoutGraph(nodes, edges), LayoutOptions(engine=engine)).reversed == [False] * 6


@pytest.mark.parametrize("engine", [Engine.FAST, Engine.DOT])
def test_tf1_while_loop_back_edge_is_reversed_in_the_scene(hostile_logs_root, engine):  # noqa: F811
    h = build_hierarchy(build_slim_graph(load_graph_def(str(hostile_logs_root / "while_v1"))))
    options = SceneOptions(layout=LayoutOptions(engine=engine, memoize=False))
    scene = build_scene(h, REF, ["loop", "loop/while"], options=options, cache=LayoutCache())
    pos = {n.name: n for n in scene.nodes}
    back = [e for e in scene.edges if e.reversed]
    names = {(e.source, e.target) for e in back}
    # every loop's NextIteration -> Merge closes the cycle (TF1 control flow v1)
    loops = [(e.source, e.target) for e in scene.edges
             if e.source.startswith("loop/while/NextIteration") and e.target.startswith("loop/while/Merge")]
    assert len(loops) == 2
    cycle_edges = [e for e in scene.edges if e.source.startswith("loop/while/")
                   and e.target.startswith("loop/while/")]
    assert 1 <= len(back) <= len(cycle_edges)
    assert names & set(loops) or all(p[0].startswith("loop/while/") for p in names)
    for e in scene.edges:  # reversed == the target lies below the source (rankdir BT)
        s, t = pos[e.source], pos[e.target]
        if e.source != e.target and abs(t.y - s.y) > 1e-6 and s.parent == t.parent:
            assert e.reversed == (t.y > s.y), (e.source, e.target)
    payload = wire.to_plain(scene)
    assert any(e["reversed"] for e in payload["edges"])


def _reaches(adj, a, b) -> bool:
    seen, stack = {a}, [a]
    while stack:
        x = stack.pop()
        if x == b:
            return True
        for y in adj.get(x, ()):
            if y not in seen:
                seen.add(y)
                stack.append(y)
    return False


@pytest.mark.parametrize("engine", [Engine.FAST, Engine.DOT])
def test_reversed_edges_are_exactly_a_feedback_set_on_a_real_graph(real_logs, engine):
    """torch_cnn: ``ReLU[relu]`` is called twice per block, so block metagraphs have cycles."""
    h = build_hierarchy(build_slim_graph(load_graph_def(str(real_logs.get("torch_cnn")))))
    groups = [g.name for g in h.walk_groups() if g.id != h.root.id]
    options = SceneOptions(layout=LayoutOptions(engine=engine, memoize=False))
    scene = build_scene(h, REF, groups, options=options, cache=LayoutCache())
    parent = {n.name: n.parent for n in scene.nodes}
    adj, forward = {}, {}
    for e in scene.edges:
        if parent[e.source] == parent[e.target]:
            adj.setdefault(e.source, []).append(e.target)
            if not e.reversed:
                forward.setdefault(e.source, []).append(e.target)
    back = [e for e in scene.edges if e.reversed]
    assert back, "the doubly used ReLU groups close cycles"
    for e in back:  # each reversed edge closes a cycle of its group's metagraph
        assert parent[e.source] == parent[e.target]
        assert _reaches(adj, e.target, e.source), (e.source, e.target)
    for e in scene.edges:  # and without them no cycle is left
        if not e.reversed and parent[e.source] == parent[e.target]:
            assert not _reaches(forward, e.target, e.source), (e.source, e.target)
