"""The first view before the rest (issue 21): ``first_view.first_view_hierarchy`` builds only what a
first view shows, and the scene drawn from it is the whole build's first view, byte for byte (but
timings); where it cannot prove that (children that may share a template), it gives the whole
Hierarchy instead (built on from its scopes when it stopped right after them)."""

from __future__ import annotations

import json

import pytest

from tb_graph_plugin import wire
from tb_graph_plugin.graph import build_slim_graph
from tb_graph_plugin.hierarchy import build_expand_ahead_hierarchy, build_hierarchy
from tb_graph_plugin.hierarchy.unique import unique_structures
from tb_graph_plugin.ingest.graph_encoding import split_graph_def
from tb_graph_plugin.ingest.local import open_logs
from tb_graph_plugin.layout.scene import LayoutCache, build_scene
from tb_graph_plugin.layout.scene.first_view import expand_ahead_group, first_view_expanded, first_view_hierarchy
from tests.tb_app import OURS, TbApp

_TIMINGS = ("layout_seconds", "timings")


def _graphs(path):
    logs = open_logs(str(path))
    for run in logs.listing().runs:
        for tag in run.tags:
            if tag.run_graph or tag.op_graph:
                ref = wire.GraphRef(run=run.run, tag=tag.tag, kind=wire.GraphKind.OP)
                yield ref, logs.graph_def(ref)


def _first_scene(h, ref, opened=None) -> dict:
    """The scene with the first view's groups open (and ``opened``), but its timings."""
    plain = wire.to_plain(build_scene(h, ref, first_view_expanded(h) + (opened or []), cache=LayoutCache()))
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


def _subtree(h, name: str) -> list:
    """Every group under ``name`` (itself included), by names: as ``_tree`` but comparable across
    two builds whose group ids differ."""
    def names(ids):
        return [h.name_of(c) for c in ids]

    return [(type(g).__name__, g.name, g.label, names([g.parent]), names(g.children), g.template, g.cardinality,
             g.n_embeddings, g.depth, g.level, g.has_non_control_edges,
             [(h.name_of(e.src), h.name_of(e.dst), e.size, e.n_control, sorted(e.base_edges)) for e in g.metaedges])
            for g in h.pre_order_groups(h.group_index[name])]


def test_the_first_tower_built_ahead_is_the_whole_builds(real_logs):
    """After a multi-tower graph's first view (its towers closed), the first tower, the likeliest
    next click, is built ahead with its whole subtree (``build_expand_ahead_hierarchy``): every
    group under it (``towers_deep``: an op series, a block series of ``layer_[0-3]``), their MetaEdges,
    template ids and cardinalities are the whole build's, and so is the scene with it opened,
    byte for byte, and the first view drawn from it is the one drawn before. It is planned only
    where it can be proven: not on a run whose first view needed the whole build (a template
    numbered before the towers', towers not copies), not for a tower that is not the first of
    its copies."""
    planned = set()
    for ref, graph_def in _graphs(real_logs.get("tf1_towers")):
        slim = build_slim_graph(split_graph_def(graph_def.SerializeToString(), ref.tag))
        early = first_view_hierarchy(slim)
        group = expand_ahead_group(early)
        if early.grouped_only is None:
            assert group is None, ref.run
            continue
        assert group == "tower_0", ref.run
        whole = build_hierarchy(slim)
        first_scene = _first_scene(early, ref)
        ahead = build_expand_ahead_hierarchy(early, group)
        assert ahead is early and json.dumps(_first_scene(ahead, ref), sort_keys=True) == json.dumps(first_scene, sort_keys=True)
        assert _subtree(ahead, group) == _subtree(whole, group), ref.run
        assert json.dumps(_first_scene(ahead, ref, [group]), sort_keys=True) == \
            json.dumps(_first_scene(whole, ref, [group]), sort_keys=True), ref.run
        assert build_expand_ahead_hierarchy(first_view_hierarchy(slim), "tower_1") is None  # a copy, not the first
        planned.add(ref.run)
    assert planned == {"towers", "towers_deep"}
    deep = build_hierarchy(_slim_of(real_logs, "towers_deep"))
    assert {"tower_0/add_[0-5]", "tower_0/layer_[0-3]"} <= {deep.name_of(c) for c in deep.group(deep.group_index["tower_0"]).children}


def _slim_of(real_logs, run: str):
    (graph_def,) = [g for ref, g in _graphs(real_logs.get("tf1_towers")) if ref.run == run]
    return build_slim_graph(split_graph_def(graph_def.SerializeToString(), run))


def test_the_worker_opens_the_tower_built_ahead_before_the_whole_hierarchy(real_logs):
    """``worker_main`` in-process, the jobs queued as a user clicking at once would: the first
    view, then the first tower opened (a scene delta, then a scene) answered from the tower built
    ahead (timings: ``expand_ahead``, no ``hierarchy``), then another tower opened, which waits
    for the whole Hierarchy. Each scene is the whole build's."""
    from tb_graph_plugin.api.worker_process import worker_main

    (graph_def,) = [g for ref, g in _graphs(real_logs.get("tf1_towers")) if ref.run == "towers_deep"]
    payload = {"graph": graph_def.SerializeToString(), "hierarchy_options": {}}
    graph = {"run": "towers_deep", "tag": "__run_graph__", "kind": "op", "step": None}

    def job(job_id, task, **args):
        return ("job", "main", job_id, "g", payload if job_id == "first" else None, task,
                {"graph": graph, "extract": True, "float": True, **args}, 4)

    first = ["tower_[0-3]"]
    inbox = [job("first", "scene", expanded=[], first_view=True),
             job("delta", "scene_delta", expanded=[*first, "tower_0"], **{"from": first}),
             job("open0", "scene", expanded=[*first, "tower_0"]),
             job("open2", "scene", expanded=[*first, "tower_2"]), None]
    sent = []
    worker_main(lambda: inbox.pop(0), sent.append)
    done = {m[1]: json.loads(m[2]) for m in sent if m[0] == "done"}
    assert set(done) == {"first", "delta", "open0", "open2"}, [m for m in sent if m[0] == "failed"]
    assert done["first"]["expanded"] == first
    assert "expand_ahead" in done["open0"]["stats"]["timings"] and "hierarchy" not in done["open0"]["stats"]["timings"]
    assert "hierarchy" in done["open2"]["stats"]["timings"]
    assert {n["name"] for n in done["delta"]["upserted_nodes"]} >= {"tower_0/add_[0-5]", "tower_0/layer_[0-3]"}
    whole = build_hierarchy(_slim_of(real_logs, "towers_deep"))
    ref = wire.GraphRef(run="towers_deep", tag="__run_graph__", kind=wire.GraphKind.OP)
    for job_id, group in (("open0", "tower_0"), ("open2", "tower_2")):
        expected = wire.to_plain(build_scene(whole, ref, [*first, group], cache=LayoutCache()))
        for plain in (expected, done[job_id]):  # but the stats: timings, the graph report, cache hits
            plain.pop("stats")
        assert json.dumps(done[job_id], sort_keys=True) == json.dumps(expected, sort_keys=True), job_id


def test_an_info_pane_click_on_the_tower_built_ahead_waits_for_it_not_for_the_whole_build(real_logs):
    """The double-click that opens ``tower_0`` also selects it: its ``node`` job (the quick lane)
    comes while the main lane settles. It waits for the tower built ahead and is answered from it
    (the whole Hierarchy not built yet: no second build beside the main lane's), the same details
    as the whole build gives; a node the tower built ahead does not show waits for the whole one."""
    import threading

    from tb_graph_plugin.api import tasks

    (graph_def,) = [g for ref, g in _graphs(real_logs.get("tf1_towers")) if ref.run == "towers_deep"]
    state = tasks.GraphState({"graph": graph_def.SerializeToString()}, lambda stage, fraction: None)
    graph = {"run": "towers_deep", "tag": "__run_graph__", "kind": "op", "step": None}
    tasks.scene_task(state, {"graph": graph, "expanded": [], "first_view": True}, lambda stage, fraction: None)
    assert state.settling.active and state.ahead_plan is not None
    answers = {}

    def click(name):
        answers[name] = (json.loads(tasks.TASKS["node"](state, {"name": name}, lambda stage, fraction: None)),
                         state.hierarchy is None)

    clicks = [threading.Thread(target=click, args=(name,)) for name in ("tower_0", "tower_2/hidden")]
    for thread in clicks:
        thread.start()

    def serve(linger=0.0):  # after the tower built ahead, before the whole build: the first click is answered meanwhile
        if state.hierarchy is None:
            clicks[0].join(30)

    state.settle(serve)
    for thread in clicks:
        thread.join(30)
    assert answers["tower_0"][1] and not answers["tower_2/hidden"][1]  # from the tower built ahead; after the whole build
    whole = json.loads(tasks.TASKS["node"](state, {"name": "tower_0"}, lambda stage, fraction: None))
    assert answers["tower_0"][0] == whole and whole["template"] == "T0" and whole["cardinality"] > 50


def test_the_main_lane_lingers_for_the_tower_built_ahead_until_a_job_needs_more(real_logs):
    """``worker_main`` in-process, a user clicking a moment after the first view: the first tower
    opened 0.3 s after the first view went out is still answered from the tower built ahead (the
    main lane waits ``AHEAD_LINGER_S`` for it before the whole build, whose steps it would
    otherwise wait between); then a job that needs the whole build ends that wait at once."""
    import threading
    import time

    from tb_graph_plugin.api import tasks
    from tb_graph_plugin.api.worker_process import worker_main

    assert tasks.AHEAD_LINGER_S >= 0.9
    tasks.preload_late()  # the layout engine's imports (a worker makes them before its first job)
    (graph_def,) = [g for ref, g in _graphs(real_logs.get("tf1_towers")) if ref.run == "towers_deep"]
    payload = {"graph": graph_def.SerializeToString(), "hierarchy_options": {}}
    graph = {"run": "towers_deep", "tag": "__run_graph__", "kind": "op", "step": None}
    first = ["tower_[0-3]"]

    def job(job_id, task, **args):
        return ("job", "main", job_id, "g", payload if job_id == "first" else None, task,
                {"graph": graph, "extract": True, "float": True, **args}, 4)

    sent, answered, queued = [], {}, {}
    done_event = {name: threading.Event() for name in ("first", "open0", "open2")}

    def send(message):
        sent.append(message)
        if message[0] in ("done", "failed"):
            answered[message[1]] = time.monotonic()
            done_event[message[1]].set()

    plan = [(None, job("first", "scene", expanded=[], first_view=True)),
            ("first", job("open0", "scene", expanded=[*first, "tower_0"])),
            ("open0", job("open2", "scene", expanded=[*first, "tower_2"])), (None, None)]

    def receive():
        after, message = plan.pop(0)
        if after is not None:
            assert done_event[after].wait(60)
            time.sleep(0.3 if after == "first" else 0.0)
        if message is not None:
            queued[message[2]] = time.monotonic()
        return message

    worker_main(receive, send)
    done = {m[1]: json.loads(m[2]) for m in sent if m[0] == "done"}
    assert set(done) == {"first", "open0", "open2"}, [m for m in sent if m[0] == "failed"]
    assert "expand_ahead" in done["open0"]["stats"]["timings"] and "hierarchy" not in done["open0"]["stats"]["timings"]
    assert "hierarchy" in done["open2"]["stats"]["timings"]
    assert answered["open2"] - queued["open2"] < 0.6  # not the rest of the linger
