"""``/scene_delta``: applying the delta to the client's old scene gives exactly the new ``/scene``."""

from __future__ import annotations

import json
import random

import pytest

from tb_graph_plugin import wire
from tb_graph_plugin.layout.scene import LayoutCache, apply_delta, build_scene, scene_delta
from tests.tb_app import OURS, TbApp

RUN = "torch_cnn"


@pytest.fixture(scope="module")
def app(real_logs):
    app = TbApp(real_logs.get(RUN))
    yield app
    app.ours.pool.close()


def _scene(app, expanded):
    return app.json(OURS + "/scene", run=RUN, expanded=json.dumps(expanded), wait="30")


def _delta(app, old, new):
    return app.json(OURS + "/scene_delta", run=RUN, **{"from": json.dumps(old)}, expanded=json.dumps(new),
                    wait="30")


def _apply(scene: dict, delta: dict) -> dict:
    """What the frontend does with a delta (plain JSON)."""
    gone = set(delta["removed_nodes"])
    nodes = {n["name"]: n for n in scene["nodes"] if n["name"] not in gone}
    for n in delta["upserted_nodes"]:
        nodes[n["name"]] = n
    return {"graph": delta["graph"], "expanded": delta["expanded"], "nodes": nodes, "edges": delta["edges"],
            "width": delta["width"], "height": delta["height"]}


def _same(got: dict, scene: dict) -> None:
    assert got["expanded"] == scene["expanded"]
    assert got["nodes"] == {n["name"]: n for n in scene["nodes"]}
    assert got["edges"] == scene["edges"]
    assert (got["width"], got["height"], got["graph"]) == (scene["width"], scene["height"], scene["graph"])


def _groups(scene: dict) -> list[str]:
    return [n["name"] for n in scene["nodes"] if n["kind"] in ("meta", "series")]


def test_expand_then_collapse_round_trip(app):
    top = _scene(app, [])
    (model,) = [n for n in top["nodes"] if n["name"] == "ResNetLike"]
    delta = _delta(app, [], ["ResNetLike"])
    assert set(delta) == {"graph", "expanded", "upserted_nodes", "removed_nodes", "edges", "width", "height",
                          "stats", "version"}
    opened = _scene(app, ["ResNetLike"])
    _same(_apply(top, delta), opened)
    assert delta["removed_nodes"] == []
    assert any(n["name"] == "ResNetLike" and n["expanded"] for n in delta["upserted_nodes"])
    # the top-level nodes that did not move are not sent again
    assert delta["stats"]["unchanged"] == len(opened["nodes"]) - len(delta["upserted_nodes"])
    assert delta["stats"]["upserted"] == len(delta["upserted_nodes"])
    assert model["expanded"] is False
    back = _delta(app, ["ResNetLike"], [])
    _same(_apply(opened, back), top)
    assert set(back["removed_nodes"]) == {n["name"] for n in opened["nodes"] if n["parent"] == "ResNetLike"}


def test_random_expand_collapse_walk_stays_exact(app):
    rng = random.Random(4)
    state: list[str] = []
    scene = _scene(app, state)
    for _ in range(8):
        groups = _groups(scene)
        closed = [g for g in groups if g not in state]
        if state and (not closed or rng.random() < 0.35):
            new = [g for g in state if g != rng.choice(state)]  # collapse one
        else:
            new = state + [rng.choice(closed)]  # expand one visible group
        delta = _delta(app, state, new)
        fresh = _scene(app, new)
        _same(_apply(scene, delta), fresh)
        state, scene = fresh["expanded"], fresh
    assert len(state) >= 2


def test_same_state_is_an_empty_delta(app):
    delta = _delta(app, ["ResNetLike"], ["ResNetLike"])
    assert delta["upserted_nodes"] == [] and delta["removed_nodes"] == []
    assert delta["stats"]["groups_laid_out"] == 0


def test_bad_parameters_are_400(app):
    r = app.get(OURS + "/scene_delta", run=RUN, **{"from": '["nope"]'}, expanded="[]", wait="30")
    assert r.status_code == 400 and "nope" in r.get_json()["error"]
    r = app.get(OURS + "/scene_delta", run=RUN, **{"from": "[1]"}, expanded="[]")
    assert r.status_code == 400 and "from" in r.get_json()["error"]
    r = app.get(OURS + "/scene_delta", run=RUN, expanded='["ResNetLike"]', extract="maybe")
    assert r.status_code == 400


def test_delta_lays_out_only_the_new_group_and_ancestors(real_logs):
    """In-process on the real ResNet50 trace: the old scene is all cache hits."""
    from tb_graph_plugin.cli import load_graph_def
    from tb_graph_plugin.graph import build_slim_graph
    from tb_graph_plugin.hierarchy import build_hierarchy

    h = build_hierarchy(build_slim_graph(load_graph_def(str(real_logs.get("keras_resnet50_trace")))))
    ref = wire.GraphRef("r", "forward", wire.GraphKind.OP)
    cache = LayoutCache()
    deep = max(h.walk_groups(), key=lambda g: (g.level, g.cardinality))
    path = [h.name_of(a) for a in reversed(h.ancestors(deep.id)[:-1])]
    old = build_scene(h, ref, path, cache=cache)
    delta = scene_delta(h, ref, path, path + [deep.name], cache=cache)
    assert delta.stats["groups_laid_out"] == len(path) + 2  # the new group, its ancestors, the root
    new = build_scene(h, ref, path + [deep.name], cache=cache)
    got = apply_delta(old, delta)
    assert {n.name: n for n in got.nodes} == {n.name: n for n in new.nodes}
    assert got.edges == new.edges and got.expanded == new.expanded
