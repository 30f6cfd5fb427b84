"""Every engine: no overlaps, edges end on borders, ranks respected, deterministic."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from tb_graph_plugin.layout import (Engine, LayoutEdge, LayoutGraph, LayoutMemo, LayoutNode, LayoutOptions, RankDir,
                                    layout)
from tb_graph_plugin.layout.dot import DotTimeout
from tb_graph_plugin.layout.engines import guard

from .invariants import check_result, on_border
from .strategies import graphs

ENGINES = [Engine.FAST, Engine.DOT, Engine.AUTO]


def diamond() -> LayoutGraph:
    nodes = [LayoutNode(c, 30, 10) for c in "abcd"]
    edges = [LayoutEdge("a", "b"), LayoutEdge("a", "c"), LayoutEdge("b", "d"), LayoutEdge("c", "d"), LayoutEdge("a", "d")]
    return LayoutGraph(nodes, edges)


@pytest.mark.parametrize("engine", ENGINES)
def test_diamond_upward_and_valid(engine):
    g = diamond()
    r = layout(g, LayoutOptions(engine=engine, count_crossings=True))
    check_result(g, r, upward=True)
    assert r.crossings == 0
    assert r.positions["a"][1] > r.positions["b"][1] > r.positions["d"][1]


@pytest.mark.parametrize("engine", ENGINES)
def test_cycles_self_loops_and_multi_edges(engine):
    nodes = [LayoutNode(c, 20, 8) for c in "abc"]
    edges = [LayoutEdge("a", "b"), LayoutEdge("b", "c"), LayoutEdge("c", "a"), LayoutEdge("a", "b"), LayoutEdge("b", "b")]
    g = LayoutGraph(nodes, edges)
    r = layout(g, LayoutOptions(engine=engine))
    check_result(g, r)
    assert len(r.edge_points) == 5


@pytest.mark.parametrize("rankdir", list(RankDir))
def test_fast_rank_directions(rankdir):
    g = diamond()
    r = layout(g, LayoutOptions(engine=Engine.FAST, rankdir=rankdir))
    check_result(g, r)
    a, d = r.positions["a"], r.positions["d"]
    expect = {RankDir.BT: a[1] > d[1], RankDir.TB: a[1] < d[1], RankDir.LR: a[0] < d[0], RankDir.RL: a[0] > d[0]}
    assert expect[rankdir]


def test_empty_and_single_node():
    for engine in ENGINES:
        r = layout(LayoutGraph([], []), LayoutOptions(engine=engine))
        assert r.positions == {} and r.width == 0
        g = LayoutGraph([LayoutNode("x", 10, 4)])
        r = layout(g, LayoutOptions(engine=engine))
        assert r.positions["x"] == pytest.approx((5, 2)) and (r.width, r.height) == pytest.approx((10, 4))


def test_input_not_mutated_and_validation():
    g = diamond()
    before = (g.nodes, g.edges)
    layout(g, LayoutOptions(engine=Engine.FAST))
    assert (g.nodes, g.edges) == before
    with pytest.raises(ValueError):
        LayoutGraph([LayoutNode("a", 1, 1)], [LayoutEdge("a", "zz")])
    with pytest.raises(ValueError):
        LayoutGraph([LayoutNode("a", 1, 1), LayoutNode("a", 2, 2)])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs(acyclic=True))
def test_fast_random_dags(g):
    r1 = layout(g, LayoutOptions(engine=Engine.FAST, memoize=False))
    check_result(g, r1, upward=True)
    r2 = layout(g, LayoutOptions(engine=Engine.FAST, memoize=False))
    assert (r1.positions, r1.edge_points) == (r2.positions, r2.edge_points)  # deterministic


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs(acyclic=False))
def test_fast_random_cyclic_graphs(g):
    check_result(g, layout(g, LayoutOptions(engine=Engine.FAST, rank_lp_max_edges=0)))
    check_result(g, layout(g, LayoutOptions(engine=Engine.FAST)))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs(acyclic=False, max_nodes=15))
def test_dot_random_graphs(g):
    r1 = layout(g, LayoutOptions(engine=Engine.DOT, memoize=False))
    check_result(g, r1)
    r2 = layout(g, LayoutOptions(engine=Engine.DOT, memoize=False))
    assert r1.positions == r2.positions


def _big_flat() -> LayoutGraph:
    """A hub fanning out to many chains: the shape that makes dot slow."""
    nodes = [LayoutNode("hub", 15, 6)] + [LayoutNode(f"c{i}_{j}", 15, 6) for i in range(300) for j in range(4)]
    edges = [LayoutEdge(f"c{i}_{j}", f"c{i}_{j + 1}") for i in range(300) for j in range(3)]
    edges += [LayoutEdge("hub", f"c{i}_{i % 4}") for i in range(300)]
    return LayoutGraph(nodes, edges)


def test_dot_time_limit_raises_and_auto_falls_back():
    g = _big_flat()
    with pytest.raises(DotTimeout):
        layout(g, LayoutOptions(engine=Engine.DOT, dot_timeout_s=0.001))
    r = layout(g, LayoutOptions(engine=Engine.AUTO, dot_timeout_s=0.001))
    assert r.engine_used is Engine.FAST
    check_result(g, r, upward=True)
    # the worker pool recovers after a killed worker
    r = layout(diamond(), LayoutOptions(engine=Engine.DOT))
    assert r.engine_used is Engine.DOT


def test_guard_sends_big_or_long_graphs_to_fast():
    g = _big_flat()
    assert guard(g, LayoutOptions()) is Engine.DOT
    assert guard(g, LayoutOptions(dot_max_nodes=100)) is Engine.FAST
    assert guard(g, LayoutOptions(dot_max_dummies=10)) is Engine.FAST


def test_on_border_helper_rejects_inside_points():
    assert on_border((5, 0), 5, 5, 10, 10)
    assert not on_border((5, 5), 5, 5, 10, 10)


@pytest.mark.parametrize("engine", [Engine.FAST, Engine.DOT])
def test_memo_identical_structures_share_one_layout(engine):
    g = diamond()
    renamed = LayoutGraph([LayoutNode("x" + n.id, n.width, n.height) for n in g.nodes],
                          [LayoutEdge("x" + e.source, "x" + e.target) for e in g.edges])
    opts = LayoutOptions(engine=engine)
    memo = LayoutMemo()
    r1 = layout(g, opts, memo=memo)
    r2 = layout(renamed, opts, memo=memo)
    assert memo.stats.hits == 1 and memo.stats.misses == 1
    assert [r1.positions[n.id] for n in g.nodes] == [r2.positions["x" + n.id] for n in g.nodes]
    assert r1.edge_points == r2.edge_points
    check_result(renamed, r2, upward=True)
    r2.edge_points[0][0][0] = -99.0  # callers get copies
    assert layout(renamed, opts, memo=memo).edge_points == r1.edge_points
    assert memo.stats.hits == 2
    fresh = layout(g, LayoutOptions(engine=engine, memoize=False), memo=memo)  # memoize off: not looked up
    assert fresh.positions == r1.positions and fresh.edge_points == r1.edge_points
    assert memo.stats.hits == 2 and memo.stats.misses == 1


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs(acyclic=False, max_nodes=12))
def test_auto_on_small_graphs_keeps_the_fewer_crossings(g):
    from tb_graph_plugin.layout.crossings import count_result_crossings

    opts = dict(memoize=False)
    auto = layout(g, LayoutOptions(engine=Engine.AUTO, **opts))
    dot = layout(g, LayoutOptions(engine=Engine.DOT, **opts))
    fast_ = layout(g, LayoutOptions(engine=Engine.FAST, **opts))
    c = [count_result_crossings(r, "BT") for r in (auto, dot, fast_)]
    assert c[0] == min(c[1], c[2])
