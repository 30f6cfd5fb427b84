"""Wide groups split into ordered artificial sub-groups (``hierarchy/split.py`` post-conditions)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from tensorboard.compat.proto import graph_pb2

from tb_graph_plugin.cli import load_graph_def
from tb_graph_plugin.graph import build_slim_graph
from tb_graph_plugin.hierarchy import HierarchyOptions, build_hierarchy
from tb_graph_plugin.hierarchy.split import DEFAULT_MAX_CHILDREN, SplitNode, is_artificial, split_wide_groups
from tb_graph_plugin.hierarchy.dataflow import graph_from_metaedges, is_acyclic
from tests.hierarchy.invariants import check_invariants

REPO = Path(__file__).resolve().parents[2]


def _wide_graph(n_vars: int, scope: str = "adam") -> graph_pb2.GraphDef:
    """An optimizer-like flat scope: per variable a chain read -> mul -> sub -> assign."""
    g = graph_pb2.GraphDef()
    g.node.add(name="lr", op="Placeholder")
    for k in range(n_vars):
        sfx = "" if k == 0 else f"_{k}"
        g.node.add(name=f"{scope}/ReadVariableOp{sfx}", op="ReadVariableOp", input=["lr"])
        g.node.add(name=f"{scope}/Mul{sfx}", op="Mul", input=[f"{scope}/ReadVariableOp{sfx}", "lr"])
        g.node.add(name=f"{scope}/Sub{sfx}", op="Sub", input=[f"{scope}/Mul{sfx}"])
        g.node.add(name=f"{scope}/Assign{sfx}", op="AssignSubVariableOp", input=[f"{scope}/Sub{sfx}"])
    return g


def _h(g, **opts):
    return build_hierarchy(build_slim_graph(g), HierarchyOptions(**opts))


def _flatten(h, gid):
    """Children of ``gid`` with artificial levels (SplitNodes) opened, in order."""
    out = []
    for c in h.group(gid).children:
        if c >= h.n_ops and isinstance(h.group(c), SplitNode):
            out.extend(_flatten(h, c))
        else:
            out.append(c)
    return out


def _check_split(h, limit):
    check_invariants(h)
    for g in h.groups:
        assert len(g.children) <= limit, (g.name, len(g.children))
        if isinstance(g, SplitNode):
            assert is_artificial(g) and g.kind == "meta"
            assert g.label.endswith(f"[{g.split_range[0]}-{g.split_range[1]}]")
            assert h.parent(g.id) is not None


def test_wide_group_split_keeps_order_and_places_every_op_once():
    g = _wide_graph(300)  # op series off: ReadVariableOp_k etc. would form series
    ref = _h(g, series_min_size=0, split_max_children=10**9)
    assert len(ref.group("adam").children) == 1200  # > 1000: split by default
    before = [ref.name_of(c) for c in ref.group("adam").children]

    h = _h(g, series_min_size=0)
    _check_split(h, DEFAULT_MAX_CHILDREN)
    adam = h.group("adam")
    runs = [h.group(c) for c in adam.children]
    assert len(runs) == 2 and all(isinstance(r, SplitNode) for r in runs)
    assert [h.name_of(c) for c in _flatten(h, adam.id)] == before  # order kept
    # the cut falls between two variables (a chain of 4 ops is never cut): no edge jumps it
    assert all(len(r.children) % 4 == 0 for r in runs)
    assert runs[0].label == f"adam [1-{len(runs[0].children)}]"
    assert runs[1].split_range == (len(runs[0].children) + 1, 1200)
    # the MetaNode of the run is the parent of its ops: search results carry it as ancestor
    op = h.id_of("adam/Sub_5")
    assert h.parent(op) == runs[0].id and h.ancestors(op)[1] == adam.id
    # no edge between the two runs (chains are whole): all edges stay inside the runs
    assert h.metaedges("adam") == []


def test_small_limit_nests_levels_and_names_never_collide():
    g = _wide_graph(60)  # 240 children + 1
    g.node.add(name="adam/[1-3]", op="NoOp")  # a real op with an artificial-looking name
    ref = _h(g, series_min_size=0, split_max_children=10**9)
    before = [ref.name_of(c) for c in ref.group("adam").children]
    h = _h(g, series_min_size=0, split_max_children=3)
    _check_split(h, 3)
    assert [h.name_of(c) for c in _flatten(h, h.id_of("adam"))] == before
    names = [grp.name for grp in h.groups]
    assert len(set(names)) == len(names)
    assert h.kind("adam/[1-3]") == "op" and h.group_index.get("adam/[1-3]") is None
    assert "adam/[1-3]*" in h.group_index  # the artificial group gave way
    depth = max(len(h.ancestors(i)) for i in range(h.n_ops))
    assert depth >= 6  # root, adam, then 241 -> 81 -> 27 -> 9 -> 3 runs: nested levels


def test_split_phase_alone_returns_groups_made():
    from tb_graph_plugin.hierarchy import scopes
    from tb_graph_plugin.hierarchy.model import Hierarchy

    h = Hierarchy(build_slim_graph(_wide_graph(10)), HierarchyOptions())
    scopes.build_scopes(h)
    assert split_wide_groups(h) == 0  # 40 children: nothing to do
    assert split_wide_groups(h, max_children=20) == 2


def test_option_sets_the_limit_and_big_series_are_cut_into_sub_series():
    g = graph_pb2.GraphDef()
    g.node.add(name="x", op="Placeholder")
    for k in range(25):
        g.node.add(name="opt/Add" if k == 0 else f"opt/Add_{k}", op="AddV2", input=["x"])
    h = _h(g, split_max_children=10)
    check_invariants(h)
    series = sorted(h.series_nodes(), key=lambda s: s.indices[0])
    assert [s.label for s in series] == ["Add_[0-8]", "Add_[9-17]", "Add_[18-24]"]
    assert all(is_artificial(s) and len(s.children) <= 10 for s in series)
    assert h.child_names("opt") == [s.name for s in series]
    assert [h.label(c) for s in series for c in s.children] == ["Add"] + [f"Add_{k}" for k in range(1, 25)]
    # default: one series of 25 members, nothing artificial
    (one,) = _h(g).series_nodes()
    assert one.label == "Add_[0-24]" and not is_artificial(one)


@pytest.fixture(scope="module")
def l48_trace() -> Path:
    """The 53k-op 48-layer Keras transformer training step (bench corpus; written if missing)."""
    path = REPO / "bench" / "_out" / "corpus" / "keras_transformer_train_step_trace_L48"
    if not path.is_dir():
        subprocess.run([sys.executable, "-m", "bench.corpus", "keras_transformer_train_step_trace",
                        str(path.parent), "--layers", "48"], cwd=REPO, check=True, timeout=3600)
    return path


def test_real_l48_optimizer_group_is_split(l48_trace):
    h = build_hierarchy(build_slim_graph(load_graph_def(str(l48_trace))))
    _check_split(h, DEFAULT_MAX_CHILDREN)
    adam = h.group("adam")
    assert adam.cardinality > 15000
    runs = [h.group(c) for c in adam.children]
    assert 5 <= len(runs) <= 20 and all(isinstance(r, SplitNode) for r in runs)
    assert runs[0].split_range[0] == 1 and all(
        a.split_range[1] + 1 == b.split_range[0] for a, b in zip(runs, runs[1:]))
    assert sum(r.cardinality for r in runs) == adam.cardinality
    # the optimizer's 1542-member op series are cut into sub-series of <= 1000 members
    assert not any(s.name == "adam/Add_[0-1541]" for s in h.series_nodes())
    assert h.timings["split"] < 1.0


def test_regression_split_runs_never_form_a_cycle():
    # a shared producer written after its consumers (an optimizer's step counter read late in
    # GraphDef): cutting by GraphDef position alone made run 2 feed run 1 and run 1 feed run 2
    g = _wide_graph(300)
    g.node.add(name="adam/late_cast", op="Cast", input=["adam/Assign_5"])  # written last: run 2
    next(node for node in g.node if node.name == "adam/Sub_10").input.append("adam/late_cast")
    ref = _h(g, series_min_size=0, split_max_children=10**9)
    before = [ref.name_of(c) for c in ref.group("adam").children]
    h = _h(g, series_min_size=0)
    _check_split(h, DEFAULT_MAX_CHILDREN)
    after = [h.name_of(c) for c in _flatten(h, h.id_of("adam"))]
    assert sorted(after) == sorted(before)
    assert after.index("adam/Assign_5") < after.index("adam/late_cast") < after.index("adam/Sub_10")
    others = [n for n in after if n != "adam/late_cast"]
    assert others == [n for n in before if n != "adam/late_cast"]  # only what must move moves
    assert is_acyclic(graph_from_metaedges(h, h.id_of("adam")))
