"""``hierarchy.replicate``: exact copies grouped once, their grouping replicated (issue 21), on
TF1 multi-tower graphs written by ``FileWriter.add_graph`` (``tests/logwriters.py``, kind
``tf1_towers``). The tree must be the one the grouping phases give when run in every copy."""

from __future__ import annotations

import pytest

from tb_graph_plugin import wire
from tb_graph_plugin.graph import build_slim_graph
from tb_graph_plugin.hierarchy import HierarchyOptions, build_hierarchy, replicate
from tb_graph_plugin.hierarchy.model import Hierarchy
from tb_graph_plugin.ingest.local import open_logs

RUNS = ("towers", "towers_deep", "towers_rewired", "towers_renamed", "towers_preprocessed")


def _slim(logdir, run: str):
    ref = wire.GraphRef(run=run, tag="__run_graph__", kind=wire.GraphKind.OP)
    return build_slim_graph(open_logs(str(logdir)).graph_def(ref))


def _tree(h: Hierarchy) -> list:
    """Every group as names (ids differ between the two builds), with what the later phases set."""
    out = []
    for g in h.pre_order_groups():
        out.append((g.name, type(g).__name__, g.label, [h.name_of(c) for c in g.children], g.template,
                    g.inferred, g.cardinality, g.depth, getattr(g, "split_range", None),
                    getattr(g, "artificial", False), list(getattr(g, "indices", ())),
                    [(h.name_of(e.src), h.name_of(e.dst), e.size, sorted(e.base_edges)) for e in g.metaedges]))
    series = sorted((h.name_of(m), h.name_of(s)) for m, s in h.series_of_op.items())
    parents = [h.name_of(p) if p >= 0 else None for p in h.op_parent]
    return [out, series, parents, sorted(h.group_index)]


@pytest.fixture
def small_copies(monkeypatch):
    """The test towers hold 16-60 ops: look at copies of any size."""
    monkeypatch.setattr(replicate, "MIN_COPY_OPS", 1)


@pytest.mark.parametrize("split_max_children", [1000, 4])
def test_the_replicated_tree_is_the_one_every_copy_grouped_gives(real_logs, small_copies, split_max_children):
    """``towers_deep``'s copies get inferred scopes (``block1`` .., with ``infer_scopes`` on), an op
    series (``add_[0-5]``) and, with 4 children at most, SplitNodes labelled after the tower
    itself (``tower_3 [1-12]``)."""
    replicated = set()
    for run in RUNS:
        slim = _slim(real_logs.get("tf1_towers"), run)
        options = dict(split_max_children=split_max_children, infer_scopes=True)
        once = build_hierarchy(slim, HierarchyOptions(**options))
        every = build_hierarchy(slim, HierarchyOptions(replicate_copies=False, **options))
        assert _tree(once) == _tree(every), run
        if "replicate" in once.timings:
            replicated.add(run)
    assert replicated == set(RUNS)  # copies in each: all four towers, or the three / two alike
    deep = build_hierarchy(_slim(real_logs.get("tf1_towers"), "towers_deep"),
                           HierarchyOptions(split_max_children=split_max_children, infer_scopes=True))
    for k in range(4):
        assert deep.group(f"tower_{k}/block1").inferred == "name"
        assert any(g.is_series and g.series_kind == "op" and g.name.startswith(f"tower_{k}/add_[") for g in deep.groups)
    if split_max_children == 4:
        splits = [g.label for g in deep.groups if type(g).__name__ == "SplitNode" and g.name.startswith("tower_3/")]
        assert splits and all(label.startswith("tower_3 [") for label in splits), splits


def test_small_copies_are_left_to_the_phases(real_logs, monkeypatch):
    """Below ``MIN_COPY_OPS`` (and 1% of the graph) nothing is replicated, nor past ``MAX_PROOFS``
    proofs: a proof reads every op."""
    slim = _slim(real_logs.get("tf1_towers"), "towers_deep")
    h = build_hierarchy(slim)
    assert "find_copies" in h.timings and "replicate" not in h.timings
    monkeypatch.setattr(replicate, "MIN_COPY_OPS", 1)
    assert "replicate" in build_hierarchy(slim).timings
    monkeypatch.setattr(replicate, "MAX_PROOFS", 0)
    assert "replicate" not in build_hierarchy(slim).timings


def test_a_name_taken_in_a_copy_builds_every_copy(real_logs, small_copies, monkeypatch):
    """A replicated name already taken (the phases would have named it with a ``*``) is not
    guessed: the build runs again with the phases in every copy, and gives their tree."""
    slim = _slim(real_logs.get("tf1_towers"), "towers_deep")
    every = build_hierarchy(slim, HierarchyOptions(replicate_copies=False))
    real = replicate._replicate

    def taken(h, first, other, *args):
        h.group_index[h.name_of(other) + "/add_[0-5]"] = h.root.id  # what a stray group would do
        return real(h, first, other, *args)

    monkeypatch.setattr(replicate, "_replicate", taken)
    with pytest.raises(replicate.NotReplicated):
        h = Hierarchy(slim, HierarchyOptions())
        from tb_graph_plugin.hierarchy import PIPELINE, _Build
        PIPELINE.run(_Build(h))
    again = build_hierarchy(slim)
    assert again.options.replicate_copies is False and "replicate" not in again.timings
    assert _tree(again) == _tree(every)
