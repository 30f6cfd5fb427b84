"""The first view before the rest (issue 21): ``first_view.first_view_hierarchy`` builds only what a
first view shows, and the scene drawn from it is the whole build's first view, byte for byte (but
timings); where it cannot prove that (children that may share a template), it gives the whole
Hierarchy instead (built on from its scopes when it stopped right after them)."""

from __future__ import annotations

import json

import pytest

from tb_graph_plugin import wire
from tb_graph_plugin.graph import build_slim_graph
from tb_graph_plugin.hierarchy import build_hierarchy
from tb_graph_plugin.hierarchy.unique import unique_structures
from tb_graph_plugin.ingest.graph_encoding import split_graph_def
from tb_graph_plugin.ingest.local import open_logs
from tb_graph_plugin.layout.scene import LayoutCache, build_scene
from tb_graph_plugin.layout.scene.first_view import first_view_expanded, first_view_hierarchy
from tests.tb_app import OURS, TbApp

_TIMINGS = ("layout_seconds", "timings")


def _graphs(path):
    logs = open_logs(str(path))
    for run in logs.listing().runs:
        for tag in run.tags:
            if tag.run_graph or tag.op_graph:
                ref = wire.GraphRef(run=run.run, tag=tag.tag, kind=wire.GraphKind.OP)
                yield ref, logs.graph_def(ref)


def _first_scene(h, ref) -> dict:
    plain = wire.to_plain(build_scene(h, ref, first_view_expanded(h), cache=LayoutCache()))
    for key in _TIMINGS:
        plain["stats"].pop(key, None)
    return plain


# (kind, tags whose first view must come from the partial build): training steps and a TF1 graph,
# whose top levels hold a few unlike groups; the rest may fall back, and must then say None
_KINDS = [("tf1_graph", {"__run_graph__"}), ("tf2_keras_trace", {"train_step"}),
          ("tf2_multi_function_trace", {"multi_function"}), ("torch_cnn", set()),
          ("torch_transformer", set()), ("keras_resnet50_trace", set()), ("hf_gpt2", set())]


@pytest.mark.parametrize("kind,early_tags", _KINDS, ids=[k for k, _ in _KINDS])
def test_the_partial_build_draws_the_whole_builds_first_view(real_logs, kind, early_tags):
    seen = set()
    for ref, graph_def in _graphs(real_logs.get(kind)):
        if _first_view_of_both(ref, graph_def):
            seen.add(ref.tag)
        else:
            assert ref.tag not in early_tags, f"{kind}:{ref.tag}: the first view waited for the whole build"
    assert early_tags <= seen


def _first_view_of_both(ref, graph_def) -> bool:
    """The first view drawn from ``first_view_hierarchy`` equals the whole build's; whether it
    came from the partial build."""
    slim = build_slim_graph(split_graph_def(graph_def.SerializeToString(), ref.tag))
    whole = build_hierarchy(slim)
    early = first_view_hierarchy(slim)
    assert first_view_expanded(early) == first_view_expanded(whole)
    assert json.dumps(_first_scene(early, ref), sort_keys=True) == json.dumps(_first_scene(whole, ref), sort_keys=True)
    if early.grouped_only is None:  # the whole Hierarchy: the same groups as built from scratch
        assert [(g.name, g.children, g.template) for g in early.groups] == \
            [(g.name, g.children, g.template) for g in whole.groups]
        return False
    # the whole build after it starts from the scope tree it left: the same Hierarchy
    assert _tree(build_hierarchy(slim)) == _tree(whole)
    assert len(early.groups) <= len(whole.groups)  # the groups nobody sees were not regrouped
    # MetaEdges only where the first view reads them, and there the whole build's
    for g in early.groups:
        edges = [(early.name_of(e.src), early.name_of(e.dst), e.size, sorted(e.base_edges))
                 for e in early.metaedges(g.id)]
        if g.name in early.grouped_only:
            assert edges == [(whole.name_of(e.src), whole.name_of(e.dst), e.size, sorted(e.base_edges))
                             for e in whole.metaedges(whole.group_index[g.name])]
        else:
            assert edges == []
    return True


def _tree(h) -> list:
    return [(type(g).__name__, g.name, g.label, g.parent, g.children, g.template, g.cardinality,
             [(e.src, e.dst, e.size, sorted(e.base_edges)) for e in g.metaedges]) for g in h.groups]


def test_towers_that_are_exact_copies_are_drawn_from_the_partial_build(real_logs):
    """A TF1 multi-tower graph: its towers share a template, which the partial build knows
    without grouping them when they are exact copies (``hierarchy.copies``) and nothing before
    the first tower may hold another template. The other runs fall back to the whole build, each
    for its reason, and every first view is the whole build's."""
    partial = {ref.run for ref, graph_def in _graphs(real_logs.get("tf1_towers")) if _first_view_of_both(ref, graph_def)}
    assert partial == {"towers", "towers_deep"}


def test_children_of_one_structure_need_the_whole_build(real_logs):
    """ResNet50's blocks share templates: the children of the group it opens cannot be proven
    unique, so its first view waits for the templates; a group holding most of an op type is."""
    (ref, graph_def), = _graphs(real_logs.get("keras_resnet50_trace"))
    slim = build_slim_graph(split_graph_def(graph_def.SerializeToString(), ref.tag))
    whole = build_hierarchy(slim)
    shared = [g.id for g in whole.groups if g.template is not None]
    assert len(shared) >= 2 and not unique_structures(whole, [shared[:2]])
    assert first_view_hierarchy(slim).grouped_only is None
    top = whole.group(whole.root.id).children
    biggest = max((c for c in top if whole.is_group(c)), key=whole.cardinality)
    assert whole.template_of(biggest) is None and unique_structures(whole, [[biggest]])


def test_the_worker_answers_the_first_view_before_the_whole_hierarchy(real_logs):
    """Through TensorBoard: the first ``/scene`` (no ``expanded``) of a training step is drawn
    from the partial build (its timings name ``first_view_hierarchy``, not ``hierarchy``); the
    whole Hierarchy is there for the next jobs, which draw the same first view from it."""
    app = TbApp(real_logs.get("tf2_keras_trace"))
    try:
        ref = {"run": "tf2_keras_trace", "tag": "train_step"}
        first = app.json(OURS + "/scene", wait="60", **ref)
        timings = first["stats"]["timings"]
        assert "first_view_hierarchy" in timings and "hierarchy" not in timings, timings
        opened = next(n["name"] for n in first["nodes"] if n["kind"] == "meta" and not n["expanded"])
        assert app.json(OURS + "/node", wait="60", name=opened, **ref)["name"] == opened
        again = app.json(OURS + "/scene", wait="60", expanded=json.dumps(first["expanded"]), **ref)
        assert "hierarchy" in again["stats"]["timings"]
        assert [(n["name"], n["x"], n["y"]) for n in again["nodes"]] == [(n["name"], n["x"], n["y"]) for n in first["nodes"]]
        assert app.json(OURS + "/scene", wait="60", expanded=json.dumps([*first["expanded"], opened]), **ref)["nodes"]
    finally:
        app.ours.pool.close()


def test_a_graph_too_deep_is_refused_on_its_first_view_and_after(tmp_path):
    """Bad input (hand-made bytes): op names nesting past the scopes' limit. The first view's
    partial build meets it in its scopes and answers the same 413 as the whole build; the next
    request on that graph too, and nothing crashes."""
    from tb_graph_plugin.hierarchy.scopes import MAX_SCOPE_DEPTH
    from tests.api.test_search_linear import graph_bytes

    app = TbApp(tmp_path, workers=1)
    try:
        deep = "/".join(f"s{i}" for i in range(MAX_SCOPE_DEPTH + 5))
        response = app.post(OURS + "/upload", graph_bytes(["x", f"{deep}/op"]), filename="deep.pb")
        assert response.status_code == 200, response.get_data(as_text=True)
        ref = {k: v for k, v in response.get_json()["graph"].items() if v is not None}
        for path, extra in (("/scene", {}), ("/node", {"name": "x"}), ("/scene", {})):
            answer = app.get(OURS + path, wait="60", **ref, **extra)
            assert answer.status_code == 413, (path, answer.status_code, answer.get_data(as_text=True))
            assert "cannot be shown" in answer.get_json()["error"] and "s0/s1/s2" in answer.get_json()["error"]
    finally:
        app.ours.pool.close()


def test_the_partial_build_is_freed_with_its_scene(real_logs):
    """A worker draws the first view from the partial Hierarchy, drops it, builds the whole one and
    then freezes its heap (``gc.freeze``): a partial Hierarchy still held by a reference cycle at
    that point is kept for good (65 MB at 1M ops). Drawing its scene leaves no cycle holding it:
    it is gone as soon as it is dropped, with the collector off."""
    import gc
    import weakref

    (ref, graph_def), = [g for g in _graphs(real_logs.get("tf2_keras_trace")) if g[0].tag == "train_step"]
    slim = build_slim_graph(split_graph_def(graph_def.SerializeToString(), ref.tag))
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        early = first_view_hierarchy(slim)
        assert early.grouped_only is not None
        build_scene(early, ref, first_view_expanded(early), cache=LayoutCache())
        dropped = weakref.ref(early)
        del early
        assert dropped() is None
    finally:
        if was_enabled:
            gc.enable()


def test_the_worker_answers_the_towers_first_view_from_the_partial_build(real_logs):
    """Through TensorBoard: a multi-tower graph's first ``/scene`` comes from the partial build,
    its towers drawn as one template; opening a tower then draws its inside from the whole build."""
    app = TbApp(real_logs.get("tf1_towers"))
    try:
        ref = {"run": "towers_deep", "tag": "__run_graph__"}
        first = app.json(OURS + "/scene", wait="60", **ref)
        assert "first_view_hierarchy" in first["stats"]["timings"] and "hierarchy" not in first["stats"]["timings"]
        towers = {n["name"]: n["template"] for n in first["nodes"] if n["name"].startswith("tower_") and "/" not in n["name"]}
        assert towers == {"tower_[0-3]": None, **{f"tower_{k}": "T0" for k in range(4)}}, towers
        opened = app.json(OURS + "/scene", wait="60", expanded=json.dumps([*first["expanded"], "tower_2"]), **ref)
        inside = {n["name"] for n in opened["nodes"] if n["parent"] == "tower_2"}
        assert {"tower_2/hidden", "tower_2/add_[0-5]"} <= inside, sorted(inside)
    finally:
        app.ours.pool.close()
