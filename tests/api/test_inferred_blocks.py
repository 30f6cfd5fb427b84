"""Inferred blocks through TensorBoard: the first view of a Keras encoder traced with
``trace_export`` shows its layers (``layer_[0-11]``, each ``inferred: "name"``), ``/node``
says how a group was found, and ``infer_scopes=off`` gives the flat model back."""

from __future__ import annotations

import json

import pytest

from tests.tb_app import OURS, TbApp

RUN = "keras_bert_encoder_trace"
MODEL = "bert_encoder_1"


@pytest.fixture(scope="module")
def app(real_logs):
    app = TbApp(real_logs.get(RUN))
    yield app
    app.ours.pool.close()


def _scene(app, **extra):
    return app.json(OURS + "/scene", run=RUN, tag="forward", wait="30", **extra)


def test_first_view_shows_the_layers_flagged_as_inferred(app):
    scene = _scene(app)  # no expanded: the first view
    assert MODEL in scene["expanded"]
    by_label = {n["label"]: n for n in scene["nodes"]}
    layers = by_label["layer_[0-11]"]
    assert layers["kind"] == "series" and layers["inferred"] == ""
    inside = _scene(app, expanded=json.dumps([MODEL, layers["name"]]))
    members = [n for n in inside["nodes"] if n["parent"] == layers["name"] and n["kind"] == "meta"]  # not bridges
    assert [n["label"] for n in members] == [f"layer_{i}" for i in range(12)]
    assert {n["inferred"] for n in members} == {"name"}
    assert not any(e["reversed"] for e in inside["edges"])
    details = app.json(OURS + "/node", run=RUN, tag="forward", name=members[3]["name"], wait="30")
    assert details["inferred"] == "name" and details["kind"] == "meta"
    assert details["cardinality"] == members[3]["cardinality"] > 20


def test_infer_scopes_off_gives_the_flat_layers(app):
    flat = _scene(app, expanded=json.dumps([MODEL]), infer_scopes="off")
    labels = {n["label"] for n in flat["nodes"] if n["parent"] == MODEL}
    assert not {n["inferred"] for n in flat["nodes"]} - {""}
    assert "layer_3_attention_1" in labels or any(label.startswith("layer_") and "[" in label for label in labels)
