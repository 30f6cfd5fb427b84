"""Write real TensorBoard graph logs with the real TF / Keras / PyTorch APIs.

Purpose: every test, demo and benchmark of this project reads graph data that the real writers
produced (no hand-made protobuf bytes). Each *kind* is one function ``write_<kind>(outdir)`` that
writes one run directory under ``outdir`` and returns its path. Run each kind in its own process
(TF1 graph mode, TF2 eager and torch must not share one), through the CLI::

    python -m tests.logwriters KIND OUTDIR [--layers N]

Post-conditions (checked by ``tests/test_logwriters.py`` through ``MultiplexerDataProvider``):
``EXPECTED[kind]`` maps each run name (relative to ``outdir``) to the data plugin names and tags it
holds. The plugin names and tags follow [TB-SRC] (``plugins/graph/metadata.py``,
docs/references.md) and what the writers were observed to write (TF 2.21, Keras 3.15, torch 2.13).

Heavy imports (tensorflow, keras, torch) happen inside the writer functions so that importing
this module (e.g. from ``conftest.py``) stays cheap.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path
from typing import Callable

__all__ = [
    "KINDS",
    "EXPECTED",
    "WRITERS",
    "write_kind",
    "fresh_run_dir",
    "list_graph_data",
    "read_blobs",
    "count_trace_ops",
    "main",
]

#: Data plugin names of graph data ([TB-SRC] ``plugins/graph/metadata.py``, docs/references.md).
RUN_GRAPH = "graphs"
OP_GRAPH = "graph_run_metadata_graph"
PROFILE = "graph_run_metadata"
TAGGED = "graph_tagged_run_metadata"
KERAS = "graph_keras_model"
GRAPH_PLUGINS = (RUN_GRAPH, OP_GRAPH, PROFILE, TAGGED, KERAS)

#: kind -> run name -> plugin name -> set of tags (graph plugins only).
EXPECTED: dict[str, dict[str, dict[str, set[str]]]] = {
    "tf2_keras_trace": {"tf2_keras_trace": {OP_GRAPH: {"train_step", "predict"}}},
    "tf2_multi_function_trace": {"tf2_multi_function_trace": {OP_GRAPH: {"multi_function"}}},
    "tf2_trace_profile": {"tf2_trace_profile": {PROFILE: {"train_step"}}},
    "tf1_graph": {"tf1_graph": {RUN_GRAPH: {"__run_graph__"}, TAGGED: {"step1"}}},
    "torch_cnn": {"torch_cnn": {RUN_GRAPH: {"__run_graph__"}, TAGGED: {"step1"}}},
    "torch_transformer": {"torch_transformer": {RUN_GRAPH: {"__run_graph__"}, TAGGED: {"step1"}}},
    "keras_callback": {"train": {KERAS: {"keras"}}},
    "keras_unet_callback": {"train": {KERAS: {"keras"}}},
    "keras_resnet50_trace": {"keras_resnet50_trace": {OP_GRAPH: {"forward"}}},
    "keras_inceptionv3_trace": {"keras_inceptionv3_trace": {OP_GRAPH: {"forward"}}},
    "keras_mobilenetv2_trace": {"keras_mobilenetv2_trace": {OP_GRAPH: {"forward"}}},
    "keras_bert_encoder_trace": {"keras_bert_encoder_trace": {OP_GRAPH: {"forward"}}},
    "keras_xception_trace": {"keras_xception_trace": {OP_GRAPH: {"forward"}}},
    "keras_efficientnetb0_trace": {"keras_efficientnetb0_trace": {OP_GRAPH: {"forward"}}},
    "keras_mobilenetv3small_trace": {"keras_mobilenetv3small_trace": {OP_GRAPH: {"forward"}}},
    "hf_gpt2": {"hf_gpt2": {RUN_GRAPH: {"__run_graph__"}, TAGGED: {"step1"}}},
    "hf_t5_wrapped": {"hf_t5_wrapped": {RUN_GRAPH: {"__run_graph__"}, TAGGED: {"step1"}}},
    "hf_llama_export": {"hf_llama_export": {RUN_GRAPH: {"__run_graph__"}}},
    "torch_node_data": {"torch_node_data": {RUN_GRAPH: {"__run_graph__"}}},
    "torch_train_step": {"torch_train_step": {RUN_GRAPH: {"__run_graph__"}}},
    "torch_compiled": {"torch_compiled": {RUN_GRAPH: {"__run_graph__"}}},
    "tf1_towers": {run: {RUN_GRAPH: {"__run_graph__"}} for run in ("towers", "towers_rewired", "towers_renamed",
                                                                   "towers_preprocessed", "towers_deep")},
    "keras_diff_pair": {"base": {OP_GRAPH: {"forward"}}, "changed": {OP_GRAPH: {"forward"}}},
}

KINDS: tuple[str, ...] = tuple(EXPECTED)


def fresh_run_dir(run: Path) -> Path:
    """Remove an old ``run`` directory so a rewrite never appends a second event file to it."""
    import shutil

    shutil.rmtree(run, ignore_errors=True)
    return run


def _quiet_tf() -> None:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")


# --------------------------------------------------------------------------- TF2 / Keras 3


def _small_keras_model(num_classes: int = 10):
    """A few-layer Keras 3 functional CNN: conv + batchnorm + pooling + dense."""
    import keras

    inputs = keras.Input(shape=(16, 16, 3), name="image")
    x = keras.layers.Conv2D(8, 3, padding="same", name="conv1")(inputs)
    x = keras.layers.BatchNormalization(name="bn1")(x)
    x = keras.layers.ReLU(name="relu1")(x)
    x = keras.layers.Conv2D(16, 3, strides=2, padding="same", name="conv2")(x)
    x = keras.layers.BatchNormalization(name="bn2")(x)
    x = keras.layers.ReLU(name="relu2")(x)
    x = keras.layers.GlobalAveragePooling2D(name="pool")(x)
    x = keras.layers.Dense(32, activation="relu", name="fc1")(x)
    outputs = keras.layers.Dense(num_classes, name="logits")(x)
    return keras.Model(inputs, outputs, name="small_cnn")


def _keras_train_step(model, optimizer):
    """A ``tf.function`` training step: GradientTape + ``optimizer.apply``."""
    import keras
    import tensorflow as tf

    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    optimizer.build(model.trainable_variables)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss = loss_fn(y, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply(grads, model.trainable_variables)
        return loss

    return train_step


def _trace(writer, fn, args, name: str, step: int, profiler_outdir: Path | None = None):
    """Call ``fn(*args)`` between ``trace_on`` and ``trace_export`` on ``writer``."""
    import tensorflow as tf

    if profiler_outdir is None:
        tf.summary.trace_on(graph=True)
    else:
        tf.summary.trace_on(graph=True, profiler=True, profiler_outdir=str(profiler_outdir))
    result = fn(*args)
    with writer.as_default():
        tf.summary.trace_export(name=name, step=step)
    writer.flush()
    return result


def write_tf2_keras_trace(outdir: Path, layers: int | None = None) -> Path:
    """Keras functional CNN: training step traced as ``train_step`` (step 0), inference as ``predict`` (step 1)."""
    _quiet_tf()
    import keras
    import numpy as np
    import tensorflow as tf

    run = fresh_run_dir(Path(outdir) / "tf2_keras_trace")
    keras.utils.set_random_seed(0)
    model = _small_keras_model()
    train_step = _keras_train_step(model, keras.optimizers.Adam(1e-3))

    @tf.function
    def predict(x):
        return tf.nn.softmax(model(x, training=False))

    x = np.random.rand(4, 16, 16, 3).astype("float32")
    y = np.random.randint(0, 10, size=(4,)).astype("int32")
    writer = tf.summary.create_file_writer(str(run))
    _trace(writer, train_step, (x, y), "train_step", 0)
    _trace(writer, predict, (x,), "predict", 1)
    writer.close()
    return run


def write_tf2_multi_function_trace(outdir: Path, layers: int | None = None) -> Path:
    """One ``trace_export`` whose RunMetadata holds several function graphs (stock merges them with ``graph_N/``)."""
    _quiet_tf()
    import numpy as np
    import tensorflow as tf

    run = fresh_run_dir(Path(outdir) / "tf2_multi_function_trace")
    w1 = tf.Variable(np.random.rand(8, 16).astype("float32"), name="encoder_kernel")
    w2 = tf.Variable(np.random.rand(16, 4).astype("float32"), name="decoder_kernel")

    @tf.function
    def encode(x):
        with tf.name_scope("encoder"):
            return tf.nn.relu(tf.matmul(x, w1))

    @tf.function
    def decode(h):
        with tf.name_scope("decoder"):
            return tf.nn.sigmoid(tf.matmul(h, w2))

    def both(x):
        return decode(encode(x))

    x = np.random.rand(2, 8).astype("float32")
    writer = tf.summary.create_file_writer(str(run))
    _trace(writer, both, (x,), "multi_function", 0)
    writer.close()
    return run


def write_tf2_trace_profile(outdir: Path, layers: int | None = None) -> Path:
    """Training step traced with ``profiler=True`` -> plugin ``graph_run_metadata``."""
    _quiet_tf()
    import keras
    import numpy as np
    import tensorflow as tf

    run = fresh_run_dir(Path(outdir) / "tf2_trace_profile")
    keras.utils.set_random_seed(0)
    model = _small_keras_model()
    train_step = _keras_train_step(model, keras.optimizers.SGD(1e-2))
    x = np.random.rand(4, 16, 16, 3).astype("float32")
    y = np.random.randint(0, 10, size=(4,)).astype("int32")
    # First call inside the trace: with profiler=True TF collects run metadata (not graph
    # collection), so the function graphs are only recorded when the function is traced here.
    writer = tf.summary.create_file_writer(str(run))
    _trace(writer, train_step, (x, y), "train_step", 0, profiler_outdir=run)
    writer.close()
    return run


def _trace_forward(run: Path, model, x) -> None:
    """Trace one inference call ``model(x)`` in a ``tf.function`` as tag ``forward``, step 0."""
    import tensorflow as tf

    @tf.function
    def forward(batch):
        return model(batch, training=False)

    writer = tf.summary.create_file_writer(str(run))
    _trace(writer, forward, (x,), "forward", 0)
    writer.close()


def _record_layer_scopes(model) -> dict[str, str]:
    """Wrap each layer's ``call`` to record the name scope it runs in while traced.

    Keras 3 uniquifies scopes in a trace (layer ``conv2d_1`` runs in ``model_1/conv2d_1_2``),
    so the scope of a layer is read from TensorFlow itself, not guessed from its name.
    """
    import tensorflow as tf

    scopes: dict[str, str] = {}
    for layer in model.layers:
        call = layer.call

        def recorded(*args, __call=call, __name=layer.name, **kwargs):
            scopes.setdefault(__name, tf.get_current_name_scope())
            return __call(*args, **kwargs)

        layer.call = recorded
    return scopes


def _keras_trace_with_blocks(run: Path, model, x, blocks) -> Path:
    """Trace ``model(x)`` as ``forward`` and write ``expected_blocks.json`` beside the events.

    ``blocks(model)`` names the model's architectural blocks as its authors built them
    (block -> layer names); the file maps each block to the trace scopes of its layers and a
    ``kind`` (the sorted layer classes: blocks of one kind are built the same way).
    """
    import json

    scopes = _record_layer_scopes(model)
    _trace_forward(run, model, x)
    out = {}
    for block, layer_names in blocks(model).items():
        layers = [model.get_layer(n) for n in layer_names]
        out[block] = {"scopes": sorted(scopes[n] for n in layer_names if n in scopes),
                      "kind": sorted(type(layer).__name__ for layer in layers)}
    all_scopes = sorted(set(scopes.values()))
    (run / "expected_blocks.json").write_text(json.dumps({"blocks": out, "layer_scopes": all_scopes}, indent=1))
    return run


def _blocks_by_prefix(pattern: str):
    """Blocks named in the layer names, as the Keras application sources build them."""
    import re

    regex = re.compile(pattern)

    def blocks(model):
        out: dict[str, list[str]] = {}
        for layer in model.layers:
            m = regex.match(layer.name)
            if m:
                out.setdefault(m.group(1), []).append(layer.name)
        return out

    return blocks


def _parents(layer) -> list:
    return [node.operation for node in layer._inbound_nodes[0].parent_nodes]


def _ancestors(layer) -> set[str]:
    seen: set[str] = set()
    stack = _parents(layer)
    while stack:
        x = stack.pop()
        if x.name not in seen:
            seen.add(x.name)
            stack.extend(_parents(x))
    return seen


def _inception_modules(model) -> dict[str, list[str]]:
    """Module ``mixed{k}``: the layers after the previous module's output up to ``mixed{k}``,
    read from the Keras functional graph (InceptionV3's conv names say nothing of modules)."""
    out = {}
    stop = model.get_layer("max_pooling2d_1")  # the stem's last layer (keras.applications source)
    for k in range(11):
        end = model.get_layer(f"mixed{k}")
        out[f"mixed{k}"] = sorted((_ancestors(end) | {end.name}) - _ancestors(stop) - {stop.name})
        stop = end
    return out


def _resnet50_forward_trace(run: Path, batch: int = 1):
    import keras
    import numpy as np

    keras.utils.set_random_seed(0)
    model = keras.applications.ResNet50(weights=None)
    x = np.random.rand(batch, 224, 224, 3).astype("float32")
    return _keras_trace_with_blocks(run, model, x, _blocks_by_prefix(r"(conv\d_block\d+)_"))


def write_keras_resnet50_trace(outdir: Path, layers: int | None = None) -> Path:
    """``keras.applications.ResNet50(weights=None)`` forward pass traced as ``forward`` (~1832 nodes)."""
    _quiet_tf()
    return _resnet50_forward_trace(fresh_run_dir(Path(outdir) / "keras_resnet50_trace"))


def _keras_application_trace(outdir: Path, kind: str, app: str, size: int, blocks) -> Path:
    """``keras.applications.<app>(weights=None)`` at ``size`` x ``size`` traced as ``forward``."""
    _quiet_tf()
    import keras
    import numpy as np

    keras.utils.set_random_seed(0)
    model = getattr(keras.applications, app)(weights=None, input_shape=(size, size, 3))
    x = np.random.rand(1, size, size, 3).astype("float32")
    return _keras_trace_with_blocks(fresh_run_dir(Path(outdir) / kind), model, x, blocks)


def write_keras_inceptionv3_trace(outdir: Path, layers: int | None = None) -> Path:
    """InceptionV3 at 75x75 (~2.2k nodes); its modules read from the Keras functional graph."""
    return _keras_application_trace(outdir, "keras_inceptionv3_trace", "InceptionV3", 75, _inception_modules)


def write_keras_mobilenetv2_trace(outdir: Path, layers: int | None = None) -> Path:
    """MobileNetV2 at 64x64 (~1.1k nodes): blocks ``block_{i}_*``."""
    return _keras_application_trace(outdir, "keras_mobilenetv2_trace", "MobileNetV2", 64,
                                    _blocks_by_prefix(r"(block_\d+)_"))


def write_keras_mobilenetv3small_trace(outdir: Path, layers: int | None = None) -> Path:
    """MobileNetV3Small at 64x64: inverted residual blocks as its Keras source names them, block 0
    ``expanded_conv_<layer>`` (no index) and block k ``expanded_conv_<k>_<layer>``."""
    return _keras_application_trace(outdir, "keras_mobilenetv3small_trace", "MobileNetV3Small", 64,
                                    _blocks_by_prefix(r"(expanded_conv(?:_\d+)?)_[a-z]"))


def write_keras_xception_trace(outdir: Path, layers: int | None = None) -> Path:
    """Xception at 71x71: blocks ``block{k}_*``; its shortcut convs and adds carry Keras default
    names, so the blocks are completed from the dataflow."""
    return _keras_application_trace(outdir, "keras_xception_trace", "Xception", 71, _blocks_by_prefix(r"(block\d+)_"))


def write_keras_efficientnetb0_trace(outdir: Path, layers: int | None = None) -> Path:
    """EfficientNetB0 at 64x64: blocks ``block2a``, ``block2b`` ... inside stages ``block2`` ..."""
    return _keras_application_trace(outdir, "keras_efficientnetb0_trace", "EfficientNetB0", 64,
                                    _blocks_by_prefix(r"(block\d+[a-z])_"))


def _bert_encoder(layers: int, width: int = 32, heads: int = 2, seq: int = 8, vocab: int = 64):
    """A BERT-shaped Keras functional encoder: ``layer_{i}_attention``, ``layer_{i}_attention_ln``,
    ``layer_{i}_intermediate``, ``layer_{i}_output``, ``layer_{i}_output_ln``; residuals are plain ``+``."""
    import keras

    tokens = keras.Input(shape=(seq,), dtype="int32", name="input_ids")
    x = keras.layers.Embedding(vocab, width, name="embeddings")(tokens)
    x = keras.layers.LayerNormalization(name="embeddings_ln")(x)
    for i in range(layers):
        a = keras.layers.MultiHeadAttention(heads, width // heads, name=f"layer_{i}_attention")(x, x)
        x = keras.layers.LayerNormalization(name=f"layer_{i}_attention_ln")(x + a)
        f = keras.layers.Dense(2 * width, activation="gelu", name=f"layer_{i}_intermediate")(x)
        f = keras.layers.Dense(width, name=f"layer_{i}_output")(f)
        x = keras.layers.LayerNormalization(name=f"layer_{i}_output_ln")(x + f)
    pooled = keras.layers.Dense(width, activation="tanh", name="pooler")(x[:, 0])
    return keras.Model(tokens, pooled, name="bert_encoder")


def write_keras_bert_encoder_trace(outdir: Path, layers: int | None = None) -> Path:
    """A 12-layer BERT-shaped Keras functional encoder (``layer_{i}_...``) traced as ``forward``."""
    _quiet_tf()
    import keras
    import numpy as np

    keras.utils.set_random_seed(0)
    model = _bert_encoder(layers or 12)
    x = np.random.randint(0, 64, size=(2, 8)).astype("int32")
    return _keras_trace_with_blocks(fresh_run_dir(Path(outdir) / "keras_bert_encoder_trace"), model, x,
                                    _blocks_by_prefix(r"(layer_\d+)_"))


def _diff_pair_model(changed: bool):
    """The small Keras MLP of ``keras_diff_pair``; ``changed``: ``fc2`` added after ``fc1``, and
    ``fc1``'s activation ``relu`` -> ``tanh``."""
    import keras

    inputs = keras.Input(shape=(12,), name="features")
    x = keras.layers.Dense(16, activation="tanh" if changed else "relu", name="fc1")(inputs)
    if changed:
        x = keras.layers.Dense(16, activation="relu", name="fc2")(x)
    x = keras.layers.Dense(8, activation="relu", name="fc3")(x)
    outputs = keras.layers.Dense(3, name="logits")(x)
    return keras.Model(inputs, outputs, name="mlp")


def _write_diff_pair_run(run: Path, changed: bool) -> None:
    """One run of ``keras_diff_pair`` (called in its own process: a trace in a process that
    already traced records the other eager functions run since, e.g. the writers' own)."""
    _quiet_tf()
    import keras
    import numpy as np

    x = np.random.RandomState(0).rand(2, 12).astype("float32")
    keras.utils.set_random_seed(0)
    model = _diff_pair_model(changed)
    _trace_forward(run, model, x)


def write_keras_diff_pair(outdir: Path, layers: int | None = None) -> Path:
    """Two runs to diff, each a Keras MLP forward pass traced as ``forward`` by TF: ``base`` and
    ``changed`` (one Dense layer added, one activation changed; ``_diff_pair_model``), each
    written in its own process."""
    import subprocess

    repo = Path(__file__).resolve().parent.parent
    for name, changed in (("base", False), ("changed", True)):
        run = fresh_run_dir(Path(outdir) / name)
        code = f"from tests import logwriters as lw; lw._write_diff_pair_run({str(run)!r}, {changed})"
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", KERAS_BACKEND="tensorflow")
        subprocess.run([sys.executable, "-c", code], cwd=repo, env=env, check=True, timeout=600)
    return Path(outdir) / "changed"


def write_keras_callback(outdir: Path, layers: int | None = None) -> Path:
    """``model.fit`` with ``keras.callbacks.TensorBoard(write_graph=True)``: run ``train``, conceptual graph only."""
    _quiet_tf()
    import keras
    import numpy as np

    keras.utils.set_random_seed(0)
    model = _small_keras_model()
    model.compile(
        optimizer="adam",
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    x = np.random.rand(16, 16, 16, 3).astype("float32")
    y = np.random.randint(0, 10, size=(16,)).astype("int32")
    fresh_run_dir(Path(outdir) / "train")
    callback = keras.callbacks.TensorBoard(log_dir=str(outdir), write_graph=True, profile_batch=0)
    model.fit(x, y, batch_size=8, epochs=1, verbose=0, callbacks=[callback])
    return Path(outdir) / "train"


def write_keras_unet_callback(outdir: Path, layers: int | None = None) -> Path:
    """A small hand-written Keras UNet (three levels, skip concatenations), one epoch of ``fit``
    with ``keras.callbacks.TensorBoard(write_graph=True)``: a conceptual graph of 24 layers."""
    _quiet_tf()
    import keras
    import numpy as np

    layers_ = keras.layers
    keras.utils.set_random_seed(0)
    image = keras.Input((32, 32, 3), name="image")
    skips, x = [], image
    for i, f in enumerate((8, 16, 32)):
        x = layers_.Conv2D(f, 3, padding="same", activation="relu", name=f"down{i}_conv1")(x)
        x = layers_.Conv2D(f, 3, padding="same", activation="relu", name=f"down{i}_conv2")(x)
        skips.append(x)
        x = layers_.MaxPooling2D(name=f"down{i}_pool")(x)
    x = layers_.Conv2D(64, 3, padding="same", activation="relu", name="bottleneck_conv")(x)
    for i, f in reversed(list(enumerate((8, 16, 32)))):
        x = layers_.Conv2DTranspose(f, 2, strides=2, name=f"up{i}_deconv")(x)
        x = layers_.Concatenate(name=f"up{i}_concat")([x, skips[i]])
        x = layers_.Conv2D(f, 3, padding="same", activation="relu", name=f"up{i}_conv1")(x)
        x = layers_.Conv2D(f, 3, padding="same", activation="relu", name=f"up{i}_conv2")(x)
    model = keras.Model(image, layers_.Conv2D(2, 1, name="mask")(x), name="unet")
    model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    xs = np.random.rand(8, 32, 32, 3).astype("float32")
    ys = np.random.randint(0, 2, size=(8, 32, 32)).astype("int32")
    fresh_run_dir(Path(outdir) / "train")
    callback = keras.callbacks.TensorBoard(log_dir=str(outdir), write_graph=True, profile_batch=0)
    model.fit(xs, ys, batch_size=4, epochs=1, verbose=0, callbacks=[callback])
    return Path(outdir) / "train"


# --------------------------------------------------------------------------- TF1 graph mode


def write_tf1_graph(outdir: Path, layers: int | None = None) -> Path:
    """TF1 graph mode: ``FileWriter(logdir, sess.graph)``, ``add_run_metadata(rm, 'step1')``, second graph at step 5."""
    _quiet_tf()
    import numpy as np
    import tensorflow as tf

    v1 = tf.compat.v1
    v1.disable_eager_execution()
    run = fresh_run_dir(Path(outdir) / "tf1_graph")

    graph = tf.Graph()
    with graph.as_default():
        with tf.name_scope("input"):
            x = v1.placeholder(tf.float32, shape=[None, 8], name="x")
            y = v1.placeholder(tf.float32, shape=[None, 1], name="y")
        with tf.name_scope("layer1"):
            w1 = v1.Variable(v1.random_normal([8, 16], seed=1), name="weights")
            b1 = v1.Variable(tf.zeros([16]), name="bias")
            h1 = tf.nn.relu(tf.matmul(x, w1) + b1, name="activation")
        with tf.name_scope("layer2"):
            w2 = v1.Variable(v1.random_normal([16, 1], seed=2), name="weights")
            b2 = v1.Variable(tf.zeros([1]), name="bias")
            pred = tf.add(tf.matmul(h1, w2), b2, name="prediction")
        with tf.name_scope("loss"):
            loss = tf.reduce_mean(tf.square(pred - y), name="mse")
        with tf.name_scope("train"):
            global_step = v1.Variable(0, trainable=False, name="global_step")
            train_op = v1.train.GradientDescentOptimizer(0.01).minimize(loss, global_step=global_step)
        with tf.name_scope("reset"):
            reset = tf.group(v1.assign(b1, tf.zeros([16])), v1.assign(b2, tf.zeros([1])), name="reset_biases")
        v1.summary.scalar("loss", loss)
        v1.summary.histogram("layer1_weights", w1)
        merged = v1.summary.merge_all()
        init = v1.global_variables_initializer()

    feed_x = np.random.rand(4, 8).astype("float32")
    feed_y = np.random.rand(4, 1).astype("float32")
    with v1.Session(graph=graph) as sess:
        writer = v1.summary.FileWriter(str(run), sess.graph)
        sess.run(init)
        sess.run(reset)
        options = v1.RunOptions(trace_level=v1.RunOptions.FULL_TRACE)
        run_metadata = v1.RunMetadata()
        summary, _ = sess.run(
            [merged, train_op], feed_dict={x: feed_x, y: feed_y}, options=options, run_metadata=run_metadata
        )
        writer.add_run_metadata(run_metadata, "step1")
        writer.add_summary(summary, 1)

        graph2 = tf.Graph()
        with graph2.as_default():
            with tf.name_scope("eval"):
                a = v1.placeholder(tf.float32, shape=[None, 8], name="features")
                w = v1.Variable(tf.ones([8, 2]), name="weights")
                tf.nn.softmax(tf.matmul(a, w), name="probabilities")
        writer.add_graph(graph2, global_step=5)
        writer.close()
    return run


# --------------------------------------------------------------------------- PyTorch


def _tensorboard_without_tf() -> None:
    """Make TensorBoard's I/O use its own ``tensorflow_stub`` (as when TF is not installed).

    ``torch.utils.tensorboard`` otherwise imports all of TensorFlow (seconds, ~600 MB) just for
    ``tf.io.gfile``; the event files written are the same. TensorBoard checks for the module
    ``tensorboard.compat.notf`` to decide this.
    """
    import types

    sys.modules.setdefault("tensorboard.compat.notf", types.ModuleType("tensorboard.compat.notf"))


def _torch_resnet_like():
    import torch
    from torch import nn

    class BasicBlock(nn.Module):
        def __init__(self, cin: int, cout: int, stride: int = 1):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.downsample = None
            if stride != 1 or cin != cout:
                self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            identity = x if self.downsample is None else self.downsample(x)
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return self.relu(out + identity)

    class ResNetLike(nn.Module):
        def __init__(self, num_classes: int = 10):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 16, 3, 1, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(16)
            self.relu = nn.ReLU(inplace=True)
            self.layer1 = nn.Sequential(BasicBlock(16, 16), BasicBlock(16, 16))
            self.layer2 = nn.Sequential(BasicBlock(16, 32, stride=2), BasicBlock(32, 32))
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(32, num_classes)

        def forward(self, x):
            x = self.relu(self.bn1(self.conv1(x)))
            x = self.layer2(self.layer1(x))
            return self.fc(torch.flatten(self.pool(x), 1))

    return ResNetLike()


def write_torch_cnn(outdir: Path, layers: int | None = None) -> Path:
    """PyTorch ``SummaryWriter.add_graph`` of a hand-written ResNet-like CNN (2 stages of BasicBlocks)."""
    _tensorboard_without_tf()
    import torch
    from torch.utils.tensorboard import SummaryWriter

    torch.manual_seed(0)
    run = fresh_run_dir(Path(outdir) / "torch_cnn")
    model = _torch_resnet_like().eval()
    with SummaryWriter(str(run)) as writer:
        writer.add_graph(model, torch.rand(1, 3, 32, 32))
    return run


def write_torch_transformer(outdir: Path, layers: int | None = None, run_name: str = "torch_transformer") -> Path:
    """PyTorch ``add_graph`` of ``nn.TransformerEncoder`` (default 6 layers, d_model 32), fast path off."""
    _tensorboard_without_tf()
    import torch
    from torch import nn
    from torch.utils.tensorboard import SummaryWriter

    torch.manual_seed(0)
    torch.backends.mha.set_fastpath_enabled(False)
    run = fresh_run_dir(Path(outdir) / run_name)
    layer = nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64, dropout=0.0, batch_first=True)
    model = nn.TransformerEncoder(layer, num_layers=layers or 6, enable_nested_tensor=False).eval()
    with SummaryWriter(str(run)) as writer:
        writer.add_graph(model, torch.rand(2, 10, 32))
    return run


def write_hf_gpt2(outdir: Path, layers: int | None = None) -> Path:
    """Hugging Face ``transformers`` GPT-2 (4 layers, width 32) from a config, random init, PyTorch ``add_graph``."""
    _tensorboard_without_tf()
    import torch
    import transformers
    from torch.utils.tensorboard import SummaryWriter

    torch.manual_seed(0)
    config = transformers.GPT2Config(vocab_size=100, n_embd=32, n_layer=layers or 4, n_head=2, n_positions=32,
                                     use_cache=False, return_dict=False)
    model = transformers.GPT2Model(config).eval()
    run = fresh_run_dir(Path(outdir) / "hf_gpt2")
    with SummaryWriter(str(run)) as writer:
        writer.add_graph(model, torch.randint(0, 100, (1, 8)), use_strict_trace=False)
    return run


def write_hf_t5_wrapped(outdir: Path, layers: int | None = None) -> Path:
    """Hugging Face ``transformers`` T5 (3 + 3 layers, width 32) from a config, random init, inside
    the wrapper a user writes to pass ``decoder_input_ids`` (``add_graph`` takes positional
    tensors), PyTorch ``add_graph``."""
    _tensorboard_without_tf()
    import torch
    import transformers
    from torch.utils.tensorboard import SummaryWriter

    class Seq2Seq(torch.nn.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, input_ids, decoder_input_ids):
            return self.model(input_ids=input_ids, decoder_input_ids=decoder_input_ids,
                              return_dict=True).last_hidden_state

    torch.manual_seed(0)
    config = transformers.T5Config(vocab_size=100, d_model=32, d_kv=16, d_ff=64, num_layers=layers or 3,
                                   num_decoder_layers=layers or 3, num_heads=2, use_cache=False)
    model = Seq2Seq(transformers.T5Model(config).eval()).eval()
    run = fresh_run_dir(Path(outdir) / "hf_t5_wrapped")
    with SummaryWriter(str(run)) as writer:
        writer.add_graph(model, (torch.randint(0, 100, (1, 8)), torch.randint(0, 100, (1, 6))), use_strict_trace=False)
    return run


def write_hf_llama_export(outdir: Path, layers: int | None = None) -> Path:
    """Hugging Face ``transformers`` LLaMA (4 layers, width 32) from a config, random init, called
    as a user calls it, written by ``tb_graph_plugin.torch.add_graph`` (torch.export; torch's own
    ``add_graph`` fails on it)."""
    _tensorboard_without_tf()
    import torch
    import transformers

    from tb_graph_plugin.torch import add_graph

    torch.manual_seed(0)
    config = transformers.LlamaConfig(vocab_size=100, hidden_size=32, intermediate_size=64,
                                      num_hidden_layers=layers or 4, num_attention_heads=4, num_key_value_heads=2,
                                      max_position_embeddings=64, bos_token_id=0, eos_token_id=0)
    model = transformers.LlamaForCausalLM(config).eval()
    run = fresh_run_dir(Path(outdir) / "hf_llama_export")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the use_cache=False note
        add_graph(str(run), model, (torch.randint(0, 100, (1, 8)),))
    return run


def write_torch_train_step(outdir: Path, layers: int | None = None) -> Path:
    """One training step of a Hugging Face LLaMA (4 layers, width 32) with AdamW, after one real
    step, written by ``tb_graph_plugin.torch.add_graph(..., loss_fn=, optimizer=)``: forward,
    ``loss/``, ``backward/``, ``optimizer/`` (issue 41)."""
    _tensorboard_without_tf()
    import torch
    import transformers

    from tb_graph_plugin.torch import add_graph

    torch.manual_seed(0)
    config = transformers.LlamaConfig(vocab_size=100, hidden_size=32, intermediate_size=64,
                                      num_hidden_layers=layers or 4, num_attention_heads=4, num_key_value_heads=2,
                                      max_position_embeddings=64, bos_token_id=0, eos_token_id=0)
    model = transformers.LlamaForCausalLM(config)
    ids, labels = torch.randint(0, 100, (2, 8)), torch.randint(0, 100, (2, 8))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def loss_fn(out):
        return torch.nn.functional.cross_entropy(out.logits.flatten(0, 1), labels.flatten())

    loss_fn(model(ids)).backward()
    optimizer.step()
    run = fresh_run_dir(Path(outdir) / "torch_train_step")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        add_graph(str(run), model, (ids,), loss_fn=loss_fn, optimizer=optimizer)
    return run


def write_torch_compiled(outdir: Path, layers: int | None = None) -> Path:
    """What ``torch.compile`` (Inductor, CPU) makes of a small module with 2 graph breaks (an
    ``.item()`` branch in a block, a ``print``), written by
    ``tb_graph_plugin.torch.add_compiled_graph``: graph indices, ``graph_break`` ops, kernels, and
    node data tags ``compiled_graph`` and ``kernel`` (issue 41)."""
    _tensorboard_without_tf()
    import contextlib
    import io

    import torch
    from torch import nn

    from tb_graph_plugin.torch import add_compiled_graph

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(16, 16)
            self.norm = nn.LayerNorm(16)

        def forward(self, x):
            x = self.norm(torch.relu(self.fc(x)) + x)
            if x.abs().max().item() > 10:  # a value read in Python: a graph break
                x = x.clamp(-10, 10)
            return x

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.block = Block()
            self.head = nn.Linear(16, 4)

        def forward(self, x):
            x = self.block(x)
            print("logging", x.shape)  # a print: a graph break
            return self.head(x).softmax(-1)

    torch.manual_seed(0)
    run = fresh_run_dir(Path(outdir) / "torch_compiled")
    torch._dynamo.reset()
    with warnings.catch_warnings(), torch.no_grad(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        add_compiled_graph(str(run), Model().eval(), (torch.rand(4, 16),), backend="inductor")
    return run


NAN_STEP = 3  # write_torch_node_data: the step at which NAN_MODULE's output is NaN
NAN_MODULE = "TinyNet/Sequential[layer2]/Block[0]"


def write_torch_node_data(outdir: Path, layers: int | None = None) -> Path:
    """A small CNN written by ``tb_graph_plugin.torch.add_graph``, trained 6 steps (SGD) with
    ``NodeDataHooks`` logging per-module statistics each step; at step ``NAN_STEP`` the block
    ``layer2[0]`` multiplies its output by NaN (that step's update is skipped, as a loss scaler
    would), so its NaN is found at that step and only there."""
    _tensorboard_without_tf()
    import torch
    from torch import nn

    from tb_graph_plugin.torch import add_graph
    from tb_graph_plugin.torch.node_data import NodeDataHooks

    class Block(nn.Module):
        def __init__(self, c: int):
            super().__init__()
            self.conv = nn.Conv2d(c, c, 3, padding=1)
            self.bn = nn.BatchNorm2d(c)
            self.relu = nn.ReLU()
            self.poison = False

        def forward(self, x):
            out = self.relu(self.bn(self.conv(x))) + x
            return out * float("nan") if self.poison else out

    class TinyNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Conv2d(3, 8, 3, padding=1)
            self.layer1 = nn.Sequential(Block(8), Block(8))
            self.layer2 = nn.Sequential(Block(8), Block(8))
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(8, 4)

        def forward(self, x):
            return self.fc(torch.flatten(self.pool(self.layer2(self.layer1(self.stem(x)))), 1))

    torch.manual_seed(0)
    run = fresh_run_dir(Path(outdir) / "torch_node_data")
    model = TinyNet()
    x, y = torch.rand(4, 3, 16, 16), torch.randint(0, 4, (4,))
    add_graph(str(run), model.eval(), (x,))
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    with NodeDataHooks(model) as hooks:
        for step in range(6):
            model.layer2[0].poison = step == NAN_STEP
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y)
            if torch.isfinite(loss):
                loss.backward()
                opt.step()
            hooks.log(str(run), step)
    return run


# --------------------------------------------------------------------------- reading back


def _provider(logdir: Path):
    from tensorboard.backend.event_processing import data_provider, plugin_event_multiplexer

    multiplexer = plugin_event_multiplexer.EventMultiplexer(size_guidance={"tensors": 0})
    multiplexer.AddRunsFromDirectory(str(logdir))
    multiplexer.Reload()
    return data_provider.MultiplexerDataProvider(multiplexer, str(logdir))


def list_graph_data(logdir: Path) -> dict[str, dict[str, set[str]]]:
    """Run -> graph data plugin name -> tags, as ``MultiplexerDataProvider`` lists them."""
    from tensorboard import context

    provider = _provider(Path(logdir))
    ctx = context.RequestContext()
    found: dict[str, dict[str, set[str]]] = {}
    for plugin in GRAPH_PLUGINS:
        listing = provider.list_blob_sequences(ctx, experiment_id="", plugin_name=plugin)
        for run, tags in listing.items():
            found.setdefault(run, {})[plugin] = set(tags)
    return found


def read_blobs(logdir: Path, run: str, plugin: str, tag: str) -> list[tuple[int, bytes]]:
    """All (step, first blob bytes) of one run/tag, read through the data provider, oldest first."""
    from tensorboard import context
    from tensorboard.data import provider as dp

    provider = _provider(Path(logdir))
    ctx = context.RequestContext()
    series = provider.read_blob_sequences(
        ctx,
        experiment_id="",
        plugin_name=plugin,
        run_tag_filter=dp.RunTagFilter(runs=[run], tags=[tag]),
        downsample=100,
    )
    out = []
    for datum in series[run][tag]:
        out.append((datum.step, provider.read_blob(ctx, blob_key=datum.values[0].blob_key)))
    return out


def count_trace_ops(logdir: Path, run: str, tag: str, plugin: str = OP_GRAPH) -> dict[str, int]:
    """Op counts of the latest trace: ``functions``, ``pre_optimization_ops`` (summed over function graphs,
    function library bodies excluded), ``library_functions``, ``blob_bytes``."""
    from tensorboard.compat.proto import config_pb2

    step, blob = read_blobs(logdir, run, plugin, tag)[-1]
    meta = config_pb2.RunMetadata.FromString(blob)
    pre = sum(len(fg.pre_optimization_graph.node) for fg in meta.function_graphs)
    lib = sum(len(fg.pre_optimization_graph.library.function) for fg in meta.function_graphs)
    return {
        "step": step,
        "functions": len(meta.function_graphs),
        "pre_optimization_ops": pre,
        "library_functions": lib,
        "blob_bytes": len(blob),
    }


def write_tf1_towers(outdir: Path, layers: int | None = None) -> Path:
    """TF1 graph mode, a multi-tower graph as ``FileWriter.add_graph`` writes it: ``--layers``
    towers (default 4) of one two-layer MLP, each under ``tower_<k>/`` with its own variables,
    fed by ``input/x`` and summed by ``total`` (AddN). Four runs:

    * ``towers``: exact copies;
    * ``towers_rewired``: the last tower's second layer reads the input, not the first layer (the
      same ops and names; one edge differs);
    * ``towers_renamed``: the last two towers' first layer is ``hidden_b``, not ``hidden`` (two
      pairs of copies of one structure);
    * ``towers_preprocessed``: a ``preprocess`` scope before the towers, holding two scopes
      ``left`` and ``right`` of one structure (a template numbered before the towers');
    * ``towers_deep``: exact copies whose insides the grouping phases regroup: 21 layers
      ``block1_conv``, ``block1_bn``, ``block1_act`` .. ``block7_act`` (scopes inferred:
      ``block1`` ..) and
      ``add``, ``add_1`` .. ``add_5`` (an op series), then ``layer_0`` .. ``layer_3`` of one
      structure (a block series)."""
    _quiet_tf()
    import tensorflow as tf

    v1 = tf.compat.v1
    v1.disable_eager_execution()
    towers = layers or 4
    for run_name in ("towers", "towers_rewired", "towers_renamed", "towers_preprocessed", "towers_deep"):
        run = fresh_run_dir(Path(outdir) / run_name)
        graph = tf.Graph()
        with graph.as_default():
            with tf.name_scope("input"):
                x = v1.placeholder(tf.float32, shape=[None, 8], name="x")
            if run_name == "towers_preprocessed":
                with tf.name_scope("preprocess"):
                    sides = []
                    for side in ("left", "right"):
                        with tf.name_scope(side):
                            sides.append(tf.add(tf.multiply(x, 2.0), 1.0, name="scaled"))
                    x = tf.concat(sides, axis=1, name="both")[:, :8]
            outputs = []
            for k in range(towers):
                with tf.name_scope(f"tower_{k}"):
                    renamed = run_name == "towers_renamed" and k >= towers - 2
                    with tf.name_scope("hidden_b" if renamed else "hidden"):
                        w1 = v1.Variable(v1.random_normal([8, 8], seed=k), name="weights")
                        h1 = tf.nn.relu(tf.matmul(x, w1), name="relu")
                    with tf.name_scope("out"):
                        w2 = v1.Variable(v1.random_normal([8, 1], seed=k), name="weights")
                        into = x if run_name == "towers_rewired" and k == towers - 1 else h1
                        y = tf.matmul(into, w2)
                    if run_name == "towers_deep":
                        for i in range(21):
                            with tf.name_scope(f"block{i // 3 + 1}_{('conv', 'bn', 'act')[i % 3]}"):
                                w = v1.Variable(tf.ones([1, 1]), name="weights")
                                y = tf.nn.relu(tf.matmul(y, w), name="relu")
                        for i in range(6):
                            y = tf.add(y, 1.0, name=f"add_{i}" if i else "add")
                        for i in range(4):
                            with tf.name_scope(f"layer_{i}"):
                                w = v1.Variable(tf.ones([1, 1]), name="kernel")
                                y = tf.nn.tanh(tf.matmul(y, w) + 1.0, name="tanh")
                    outputs.append(tf.reduce_sum(y, name="sum"))
            tf.add_n(outputs, name="total")
            v1.global_variables_initializer()
        writer = v1.summary.FileWriter(str(run))
        writer.add_graph(graph)
        writer.close()
    return Path(outdir) / "towers"

# --------------------------------------------------------------------------- CLI

WRITERS: dict[str, Callable[..., Path]] = {
    "tf2_keras_trace": write_tf2_keras_trace,
    "tf2_multi_function_trace": write_tf2_multi_function_trace,
    "tf2_trace_profile": write_tf2_trace_profile,
    "tf1_graph": write_tf1_graph,
    "torch_cnn": write_torch_cnn,
    "torch_transformer": write_torch_transformer,
    "keras_callback": write_keras_callback,
    "keras_unet_callback": write_keras_unet_callback,
    "keras_resnet50_trace": write_keras_resnet50_trace,
    "keras_inceptionv3_trace": write_keras_inceptionv3_trace,
    "keras_mobilenetv2_trace": write_keras_mobilenetv2_trace,
    "keras_bert_encoder_trace": write_keras_bert_encoder_trace,
    "keras_xception_trace": write_keras_xception_trace,
    "keras_efficientnetb0_trace": write_keras_efficientnetb0_trace,
    "keras_mobilenetv3small_trace": write_keras_mobilenetv3small_trace,
    "hf_gpt2": write_hf_gpt2,
    "hf_t5_wrapped": write_hf_t5_wrapped,
    "hf_llama_export": write_hf_llama_export,
    "keras_diff_pair": write_keras_diff_pair,
    "torch_node_data": write_torch_node_data,
    "torch_train_step": write_torch_train_step,
    "torch_compiled": write_torch_compiled,
    "tf1_towers": write_tf1_towers,
}


def write_kind(kind: str, outdir: Path, layers: int | None = None) -> Path:
    """Write one kind into ``outdir`` in THIS process (use the CLI to keep kinds in separate processes)."""
    if kind not in WRITERS:
        raise ValueError(f"unknown kind {kind!r}; known: {', '.join(WRITERS)}")
    Path(outdir).mkdir(parents=True, exist_ok=True)
    return WRITERS[kind](Path(outdir), layers=layers)


def _report(outdir: Path, run_dir: Path) -> str:
    """The graph data listing of the run just written (other runs under ``outdir`` left out)."""
    name = Path(run_dir).resolve().relative_to(Path(outdir).resolve()).as_posix()
    lines = []
    for run, plugins in sorted(list_graph_data(outdir).items()):
        if run != name:
            continue
        for plugin, tags in sorted(plugins.items()):
            lines.append(f"  {run}: {plugin} {sorted(tags)}")
    return "\n".join(lines)


def main(argv: list[str] | None = None, writers: dict[str, Callable[..., Path]] | None = None) -> int:
    """CLI: write one kind, then print its graph data listing and the time taken."""
    writers = writers or WRITERS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=sorted(writers))
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--layers", type=int, default=None, help="depth for kinds that take one")
    parser.add_argument("--quiet", action="store_true", help="do not read the logs back")
    args = parser.parse_args(argv)
    args.outdir.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    run = writers[args.kind](args.outdir, layers=args.layers)
    seconds = time.perf_counter() - start
    print(f"{args.kind}: wrote {run} in {seconds:.1f}s")
    if not args.quiet:
        print(_report(args.outdir, run))
    return 0


if __name__ == "__main__":
    sys.exit(main())
