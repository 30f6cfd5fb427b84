"""The first view (``layout/scene/first_view.py``): the groups holding most of a graph are open
when it is first shown; ``/scene`` without ``expanded`` answers it, ``expanded=[]`` does not."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tb_graph_plugin import wire
from tb_graph_plugin.cli import load_graph_def
from tb_graph_plugin.graph import build_slim_graph
from tb_graph_plugin.hierarchy import build_hierarchy
from tb_graph_plugin.layout.scene import LayoutCache, build_scene
from tb_graph_plugin.layout.scene.first_view import first_view_expanded
from tests.tb_app import OURS, TbApp


def _h(real_logs, kind):
    return build_hierarchy(build_slim_graph(load_graph_def(str(real_logs.get(kind)))))


def _check_chain(h, opened):
    """Post-condition: outermost first, each the parent of the next, each a dominant group."""
    parent = h.root.id
    for name in opened:
        gid = h.id_of(name)
        assert h.parent(gid) == parent and h.is_group(gid)
        siblings = h.group(parent).children
        assert h.cardinality(gid) >= 0.6 * sum(h.cardinality(c) for c in siblings)
        parent = gid


def test_pytorch_model_opens_on_its_module(real_logs):
    h = _h(real_logs, "torch_transformer")
    opened = first_view_expanded(h)
    assert opened[0] == "TransformerEncoder"  # beside `input` and `output`
    _check_chain(h, opened)


def test_keras_callback_model_opens_on_its_layers(real_logs):
    h = build_hierarchy(build_slim_graph(_keras_graph(real_logs)))
    opened = first_view_expanded(h)
    assert opened and opened[0] == h.name_of(h.group(h.root.id).children[0])
    _check_chain(h, opened)


def _keras_graph(real_logs):
    from tb_graph_plugin import wire
    from tb_graph_plugin.ingest.local import LocalLogs

    logs = LocalLogs(str(real_logs.get("keras_callback")))
    ref = next(wire.GraphRef(r.run, t.tag, wire.GraphKind.CONCEPTUAL) for r in logs.listing().runs
               for t in r.tags if t.conceptual_graph)
    return logs.graph_def(ref)


def test_a_top_level_with_many_children_stays_closed(real_logs):
    h = _h(real_logs, "keras_resnet50_trace")
    children = h.group(h.root.id).children
    opened = first_view_expanded(h, max_children=len(children) - 1)
    assert opened == []


_GROUPED_CONVS = """
import sys
from pathlib import Path
import keras, numpy as np
from tests import logwriters as lw
keras.utils.set_random_seed(0)
image = keras.Input((8, 8, 4), name="image")
x = image
for i in range(int(sys.argv[2])):  # grouped convs: Keras 3 runs each as an XLA-compiled library function (ConvNeXt's)
    x = keras.layers.Conv2D(4, 3, padding="same", groups=2, name=f"grouped_{i}")(x)
lw._trace_forward(Path(sys.argv[1]), keras.Model(image, x, name="grouped"), np.random.rand(1, 8, 8, 4).astype("float32"))
"""


def _grouped_convs(tmp_path, layers: int):
    """The Hierarchy of a Keras 3 trace of ``layers`` grouped convolutions (a library function each)."""
    run = tmp_path / "grouped"
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", KERAS_BACKEND="tensorflow")
    subprocess.run([sys.executable, "-c", _GROUPED_CONVS, str(run), str(layers)], cwd=Path(__file__).resolve().parents[2],
                   env=env, check=True, timeout=300, capture_output=True)
    return build_hierarchy(build_slim_graph(load_graph_def(str(tmp_path))))


def test_regression_library_functions_do_not_keep_a_keras_trace_closed(tmp_path):
    """ConvNeXtTiny's trace showed one closed ``convnext_tiny_1`` among its 18 ``_conv_xla``
    library functions: they counted as top-level children (too many to open) and as ops (the
    model under 60%). Written with the real Keras 3 API; the functions are still drawn."""
    h = _grouped_convs(tmp_path, 4)
    top = h.group(h.root.id).children
    library = [c for c in top if h.is_group(c) and h.group(c).function]
    assert len(library) == 4 and len(top) > 8  # what kept it closed
    # each function's label is its own name, not the common __function_library__ head (all
    # four read "__function_librar…" once cut to their boxes)
    labels = sorted(h.label(c) for c in library)
    assert all(label.startswith("ƒ _conv_xla_") for label in labels) and len(set(labels)) == 4, labels
    opened = first_view_expanded(h)
    assert opened and opened[0] == "grouped_1"
    assert h.label(h.id_of(opened[-1])) == "grouped_[0-3]"


_FIRST_CALL_STEP = """
import sys
import keras, numpy as np, tensorflow as tf
keras.utils.set_random_seed(0)
image = keras.Input((8, 8, 4), name="image")
x = keras.layers.Conv2D(4, 3, padding="same", groups=2, name="grouped")(image)  # an XLA library function
model = keras.Model(image, keras.layers.GlobalAveragePooling2D()(x), name="grouped_net")
opt = keras.optimizers.Adam()  # its variables are made in the first call: more function graphs

@tf.function
def train_step(x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(model(x, training=True))
    opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
    return loss

writer = tf.summary.create_file_writer(sys.argv[1])
tf.summary.trace_on(graph=True)  # before the first call, as TensorFlow's docs show: several function graphs
train_step(np.random.rand(2, 8, 8, 4).astype("float32"))
with writer.as_default():
    tf.summary.trace_export("train_step", step=0)
"""


def test_regression_functions_of_a_merged_trace_are_labelled_by_their_own_names(tmp_path):
    """A training step traced on its first call holds several function graphs, merged with a
    ``graph_N/`` prefix on their ops and ``graph_N_`` on their functions (as the stock code does):
    a Keras 3 ConvNeXt's were labelled ``ƒ graph_391___forward__conv_xla_…``, which its box cut
    before the name. A function's label is its own name; TensorFlow's forward and backward
    halves read as words. Written with the real Keras 3 and TensorFlow APIs."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", KERAS_BACKEND="tensorflow")
    subprocess.run([sys.executable, "-c", _FIRST_CALL_STEP, str(tmp_path / "step")], env=env, check=True,
                   timeout=300, capture_output=True, cwd=Path(__file__).resolve().parents[2])
    h = build_hierarchy(build_slim_graph(load_graph_def(str(tmp_path))))
    functions = [g for g in h.groups if g.function is not None]
    assert functions and all(g.function.startswith("graph_") for g in functions)  # merged: prefixed names
    labels = [g.label for g in functions]
    assert not [label for label in labels if label.startswith("ƒ graph_")], labels
    assert any(label.startswith("ƒ forward _conv_xla") for label in labels), labels
    assert any(label.startswith("ƒ backward _conv_xla") for label in labels), labels


def test_regression_many_library_functions_are_one_group(tmp_path):
    """A ConvNeXtTiny training step traced on its first call has 36 ``_conv_xla`` functions (a
    forward and a backward one per grouped convolution): as 36 boxes in rows they pushed the model
    off the first view. Five or more at the top are gathered in one group ``ƒ library``, where the
    first was (the stock tab draws them in a box of its own); the first view opens the model."""
    h = _grouped_convs(tmp_path, 6)
    top = h.group(h.root.id).children
    assert not [c for c in top if h.is_group(c) and h.group(c).function]
    library, = [c for c in top if h.is_group(c) and h.group(c).inferred == "library"]
    assert (h.name_of(library), h.label(library)) == ("__function_library__", "ƒ library")
    functions = h.group(library).children
    assert len(functions) == 6 and all(h.label(c).startswith("ƒ _conv_xla_") for c in functions)
    assert all(h.group(c).parent == library for c in functions)
    assert h.cardinality(library) == sum(h.cardinality(c) for c in functions)
    opened = first_view_expanded(h)
    assert opened and opened[0] == "grouped_1" and h.label(h.id_of(opened[-1])) == "grouped_[0-5]"
    ref = wire.GraphRef(run="grouped", tag="t", kind=wire.GraphKind.OP)
    drawn = {n.name: n for n in build_scene(h, ref, opened, cache=LayoutCache()).nodes}
    assert drawn["__function_library__"].inferred == "library"  # dashed, and said in the info pane
    assert not [name for name in drawn if name.startswith("__function_library__") and name != "__function_library__"]


@pytest.fixture(scope="module")
def app(real_logs):
    app = TbApp(real_logs.get("torch_transformer"))
    yield app
    app.ours.pool.close()


def test_scene_without_expanded_answers_the_first_view(app):
    first = app.json(OURS + "/scene", run="torch_transformer", wait="30")
    assert first["expanded"] and first["expanded"][0] == "TransformerEncoder"
    assert any(n["parent"] == "TransformerEncoder" for n in first["nodes"])
    closed = app.json(OURS + "/scene", run="torch_transformer", expanded="[]", wait="30")
    assert closed["expanded"] == [] and all(n["parent"] is None for n in closed["nodes"])
    again = app.json(OURS + "/scene", run="torch_transformer", expanded=json.dumps(first["expanded"]), wait="30")
    assert {n["name"] for n in again["nodes"]} == {n["name"] for n in first["nodes"]}


_DENSENET_CALLBACK = """
import sys
import keras
model = keras.applications.DenseNet121(weights=None, input_shape=(32, 32, 3), classes=2)
callback = keras.callbacks.TensorBoard(sys.argv[1], write_graph=True, profile_batch=0)
callback.set_model(model)  # what fit does first: the callback writes the model's conceptual graph
callback.on_train_begin()
callback.on_train_end()
"""


def test_regression_a_keras_conceptual_graph_shows_its_blocks(tmp_path):
    """The Keras callback's conceptual graph of DenseNet121 was 429 layers side by side in one
    group, drawn as unreadable bands: its layers are nodes (no op type), and the names' indices
    were read for layer groups only. Its layers are read as layers now (``infer_names.Layers``):
    the stages and blocks Keras's own definition makes (``blocks=[6, 12, 24, 16]``) are groups."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", KERAS_BACKEND="tensorflow")
    subprocess.run([sys.executable, "-c", _DENSENET_CALLBACK, str(tmp_path / "densenet")],
                   cwd=Path(__file__).resolve().parents[2], env=env, check=True, timeout=300, capture_output=True)
    h = build_hierarchy(build_slim_graph(load_graph_def(str(tmp_path))))
    model = h.id_of("densenet121")
    stages = {h.label(c): c for c in h.group(model).children if h.is_group(c)}
    assert {"conv1", "conv2", "conv3", "conv4", "conv5", "pool2", "pool3", "pool4"} <= set(stages), stages
    for stage, blocks in zip(("conv2", "conv3", "conv4", "conv5"), (6, 12, 24, 16)):
        series, = h.group(stages[stage]).children  # identical blocks: one series
        assert h.label(series) == f"{stage}_block[1-{blocks}]"
        assert len(h.group(series).children) == blocks
    assert len(h.group(model).children) < 20  # 429 before
    opened = first_view_expanded(h)
    assert opened[0] == "densenet121"
    # past it, stages that hold block series open while the view stays readable (issue 40), each
    # showing its series; a series of more than 12 blocks stays one box
    stages = {f"densenet121/conv{i}" for i in range(2, 6)}
    series = {f"densenet121/conv{i}/conv{i}_block[1-{n}]" for i, n in zip(range(2, 6), (6, 12, 24, 16)) if n <= 12}
    assert set(opened[1:]) <= stages | series, opened
