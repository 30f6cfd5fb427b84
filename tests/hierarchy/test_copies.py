"""``hierarchy.copies``: sibling groups proven exact copies (issue 21), on TF1 multi-tower graphs
written by ``FileWriter.add_graph`` (``tests/logwriters.py``, kind ``tf1_towers``)."""

from __future__ import annotations

from tb_graph_plugin import wire
from tb_graph_plugin.graph import build_slim_graph
from tb_graph_plugin.hierarchy import HierarchyOptions, build_hierarchy, scopes
from tb_graph_plugin.hierarchy.copies import copy_classes
from tb_graph_plugin.hierarchy.model import Hierarchy
from tb_graph_plugin.hierarchy.unique import unproven
from tb_graph_plugin.ingest.local import open_logs
from tb_graph_plugin.layout.scene.first_view import first_view_hierarchy


def _slim(logdir, run: str):
    ref = wire.GraphRef(run=run, tag="__run_graph__", kind=wire.GraphKind.OP)
    return build_slim_graph(open_logs(str(logdir)).graph_def(ref))


def _scoped(slim, options=None) -> Hierarchy:
    h = Hierarchy(slim, options or HierarchyOptions())
    scopes.build_scopes(h)
    return h


def _tower_ids(h: Hierarchy) -> list[int]:
    return [h.group_index[f"tower_{k}"] for k in range(4)]


def test_towers_are_copies_of_the_first(real_logs):
    h = _scoped(_slim(real_logs.get("tf1_towers"), "towers"))
    rest = unproven(h, [h.root.children])
    assert rest == [_tower_ids(h)]  # input and the root's ops are proven unique; the towers are not
    first = _tower_ids(h)[0]
    assert copy_classes(h, rest) == {gid: first for gid in _tower_ids(h)}
    whole = build_hierarchy(h.slim)
    assert {whole.template_of(f"tower_{k}") for k in range(4)} == {"T0"}


def test_one_edge_or_one_scope_name_apart_is_no_copy(real_logs):
    """``towers_rewired``: the last tower's ops and names are the others', one edge is not: it has
    no copy, so nothing is proven. ``towers_renamed``: two pairs of copies whose op type counts
    are equal (the whole build gives all four one template, names aside): not told apart."""
    for run in ("towers_rewired", "towers_renamed"):
        h = _scoped(_slim(real_logs.get("tf1_towers"), run))
        assert copy_classes(h, [_tower_ids(h)]) is None, run
    renamed = build_hierarchy(_slim(real_logs.get("tf1_towers"), "towers_renamed"))
    assert {renamed.template_of(f"tower_{k}") for k in range(4)} == {"T0"}


def test_a_template_numbered_before_the_towers_needs_the_whole_build(real_logs):
    """``towers_preprocessed``: the towers are copies, but ``preprocess`` (not grouped by a first
    view) holds ``left`` and ``right``, whose template is numbered first: the towers' id is T1,
    which only the whole build knows."""
    slim = _slim(real_logs.get("tf1_towers"), "towers_preprocessed")
    h = _scoped(slim)
    assert copy_classes(h, unproven(h, [h.root.children])) is not None
    whole = build_hierarchy(slim)
    assert whole.template_of("preprocess/left") == "T0" and whole.template_of("tower_0") == "T1"
    assert first_view_hierarchy(slim).grouped_only is None


def test_ungrouped_series_proves_nothing(real_logs):
    """The one option that names groups: a series ungrouped in one tower only would group it unlike
    its copies."""
    options = HierarchyOptions(ungrouped_series=frozenset({"tower_2/hidden/x_[1-5]"}))
    h = _scoped(_slim(real_logs.get("tf1_towers"), "towers"), options)
    assert copy_classes(h, [_tower_ids(h)]) is None
