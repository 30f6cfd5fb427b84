"""``/scene`` and ``/scene_delta`` with ``float=on|off`` through a real TensorBoard app, on a
real TF graph written as an event file (a learning-rate Placeholder feeding 20 ops)."""

from __future__ import annotations

import json

import pytest

from tb_graph_plugin import wire
from tb_graph_plugin.api.routes import scene_args
from tests.tb_app import OURS, TbApp

RUN = "hub"


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    import tensorflow as tf
    from tensorboard.compat.proto import event_pb2
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    g = tf.Graph()
    with g.as_default(), tf.name_scope("train"):
        lr = tf.compat.v1.placeholder(tf.float32, shape=(), name="lr")
        y = tf.compat.v1.placeholder(tf.float32, shape=(4,), name="x")
        for i in range(6):
            y = tf.multiply(y, lr, name=f"scale_{chr(97 + i)}x")
    root = tmp_path_factory.mktemp("float_logs")
    w = EventFileWriter(str(root / RUN))
    w.add_event(event_pb2.Event(wall_time=1.0, graph_def=g.as_graph_def().SerializeToString()))
    w.close()
    app = TbApp(root)
    yield app
    app.ours.pool.close()


def _names(body):
    nodes = body["nodes"] if "nodes" in body else body["upserted_nodes"]
    return {n["name"]: n for n in nodes}


def test_float_parameter_on_by_default_and_off(app):
    on = _names(app.json(OURS + "/scene", run=RUN, expanded='["train"]', wait="30"))
    copies = [n for n in on.values() if n["of"] == "train/lr" and n["kind"] == "in_embedding"]
    assert len(copies) == 6 and on["train/lr"]["kind"] == "in_embedding"
    off = _names(app.json(OURS + "/scene", run=RUN, expanded='["train"]', float="off", wait="30"))
    assert off["train/lr"]["kind"] == "op" and not [n for n in off.values() if n["of"] == "train/lr"]
    same = _names(app.json(OURS + "/scene", run=RUN, expanded='["train"]', float="on", wait="30"))
    assert same == on
    delta = app.json(OURS + "/scene_delta", run=RUN, **{"from": "[]"}, expanded='["train"]', float="off", wait="30")
    assert _names(delta)["train/lr"]["kind"] == "op"
    assert app.get(OURS + "/scene", run=RUN, expanded="[]", float="maybe").status_code == 400
    assert app.get(OURS + "/scene_delta", run=RUN, expanded="[]", float="1").status_code == 400


def test_warmup_args_are_the_default_request():
    ref = wire.GraphRef(RUN, "__run_graph__", wire.GraphKind.OP)
    assert scene_args(ref, []) == scene_args(ref, [], extract=True, floating=True)
    assert scene_args(ref, [])["float"] is True
