"""Write the benchmark corpus of large real graphs with the real Keras / PyTorch APIs.

Purpose: benchmarks of ingest -> hierarchy -> layout need big graphs of the shapes users really
have (Keras forward traces, training-step traces with optimizer updates, very deep transformer
encoders, PyTorch traces). Same pattern as ``tests/logwriters.py``: one kind per process::

    python -m bench.corpus KIND [OUTDIR] [--layers N]      # OUTDIR defaults to bench/_out/corpus

Each kind writes one run dir under OUTDIR named after the kind (``<kind>_L<N>`` when ``--layers``
is given) and then prints the op count of the written graph: for TF traces the nodes of all
``pre_optimization_graph``s of the trace (what the stock tab merges and shows), for PyTorch the
nodes of the run graph. ``keras_transformer_train_step_trace`` has 216 + 1099 x layers ops:
10,107 at ``--layers 9``, 52,968 at 48 (the default), 140,888 at 128.

Writing takes seconds for the forward traces and minutes for the deep transformer (TF traces
and compiles the whole training step): run kinds one at a time on this 2-core machine.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Callable

from tests import logwriters as lw

__all__ = ["CORPUS_KINDS", "DEFAULT_OUTDIR", "write_corpus_kind", "count_ops", "main"]

DEFAULT_OUTDIR = Path(__file__).resolve().parent / "_out" / "corpus"


def _run_dir(outdir: Path, kind: str, layers: int | None) -> Path:
    """The (emptied) run dir of ``kind``: ``<kind>`` or ``<kind>_L<layers>``."""
    return lw.fresh_run_dir(Path(outdir) / (kind if layers is None else f"{kind}_L{layers}"))


def _keras_forward_trace(run: Path, build_model, image_size: int) -> Path:
    """Trace one forward pass of ``build_model()`` in a ``tf.function`` as tag ``forward``."""
    lw._quiet_tf()
    import keras
    import numpy as np
    import tensorflow as tf

    keras.utils.set_random_seed(0)
    model = build_model()

    @tf.function
    def forward(x):
        return model(x, training=False)

    x = np.random.rand(1, image_size, image_size, 3).astype("float32")
    writer = tf.summary.create_file_writer(str(run))
    lw._trace(writer, forward, (x,), "forward", 0)
    writer.close()
    return run


def _keras_train_step_trace(run: Path, model, x, y, loss_fn, optimizer) -> Path:
    """Trace one ``tf.function`` training step (GradientTape + ``optimizer.apply``) as tag ``train_step``."""
    import tensorflow as tf

    optimizer.build(model.trainable_variables)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply(grads, model.trainable_variables)
        return loss

    writer = tf.summary.create_file_writer(str(run))
    lw._trace(writer, train_step, (x, y), "train_step", 0)
    writer.close()
    return run


def write_keras_mobilenetv2_trace(outdir: Path, layers: int | None = None) -> Path:
    """``keras.applications.MobileNetV2(weights=None)`` forward trace."""
    lw._quiet_tf()
    import keras

    return _keras_forward_trace(
        _run_dir(outdir, "keras_mobilenetv2_trace", None), lambda: keras.applications.MobileNetV2(weights=None), 224
    )


def write_keras_inceptionv3_trace(outdir: Path, layers: int | None = None) -> Path:
    """``keras.applications.InceptionV3(weights=None)`` forward trace."""
    lw._quiet_tf()
    import keras

    return _keras_forward_trace(
        _run_dir(outdir, "keras_inceptionv3_trace", None), lambda: keras.applications.InceptionV3(weights=None), 299
    )


def write_keras_resnet50_train_step_trace(outdir: Path, layers: int | None = None) -> Path:
    """ResNet50 (weights=None) training step with SGD+momentum, traced as ``train_step``."""
    lw._quiet_tf()
    import keras
    import numpy as np

    keras.utils.set_random_seed(0)
    model = keras.applications.ResNet50(weights=None, input_shape=(64, 64, 3), classes=10)
    x = np.random.rand(2, 64, 64, 3).astype("float32")
    y = np.random.randint(0, 10, size=(2,)).astype("int32")
    return _keras_train_step_trace(
        _run_dir(outdir, "keras_resnet50_train_step_trace", None),
        model,
        x,
        y,
        keras.losses.SparseCategoricalCrossentropy(),
        keras.optimizers.SGD(0.01, momentum=0.9),
    )


def _keras_transformer_encoder(layers: int, width: int = 32, heads: int = 2, seq: int = 8, vocab: int = 64):
    """Token embedding + ``layers`` post-norm encoder blocks (MHA, LayerNorm, Dense FFN) + classifier."""
    import keras

    tokens = keras.Input(shape=(seq,), dtype="int32", name="tokens")
    x = keras.layers.Embedding(vocab, width, name="embedding")(tokens)
    for i in range(layers):
        attn = keras.layers.MultiHeadAttention(heads, width // heads, dropout=0.1, name=f"encoder_{i}_attention")(x, x)
        attn = keras.layers.Dropout(0.1, name=f"encoder_{i}_attention_dropout")(attn)
        x = keras.layers.LayerNormalization(name=f"encoder_{i}_attention_norm")(x + attn)
        h = keras.layers.Dense(2 * width, activation="gelu", name=f"encoder_{i}_ffn_in")(x)
        h = keras.layers.Dense(width, name=f"encoder_{i}_ffn_out")(h)
        h = keras.layers.Dropout(0.1, name=f"encoder_{i}_ffn_dropout")(h)
        x = keras.layers.LayerNormalization(name=f"encoder_{i}_ffn_norm")(x + h)
    x = keras.layers.GlobalAveragePooling1D(name="pool")(x)
    outputs = keras.layers.Dense(vocab, name="classifier")(x)
    return keras.Model(tokens, outputs, name="transformer_encoder")


def write_keras_transformer_train_step_trace(outdir: Path, layers: int | None = None) -> Path:
    """Deep Keras transformer encoder (width 32), Adam training step traced as ``train_step``."""
    lw._quiet_tf()
    import keras
    import numpy as np

    keras.utils.set_random_seed(0)
    depth = layers or 48
    model = _keras_transformer_encoder(depth)
    x = np.random.randint(0, 64, size=(2, 8)).astype("int32")
    y = np.random.randint(0, 64, size=(2,)).astype("int32")
    return _keras_train_step_trace(
        _run_dir(outdir, "keras_transformer_train_step_trace", layers),
        model,
        x,
        y,
        keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        keras.optimizers.Adam(1e-3),
    )


def write_keras_resnet50_trace(outdir: Path, layers: int | None = None) -> Path:
    """Reuses ``tests.logwriters``: ResNet50 forward trace (~1832 ops)."""
    return lw.write_keras_resnet50_trace(outdir)


def write_torch_transformer(outdir: Path, layers: int | None = None) -> Path:
    """Reuses ``tests.logwriters``: PyTorch ``nn.TransformerEncoder`` (6 layers unless ``--layers``)."""
    return lw.write_torch_transformer(outdir, layers=layers, run_name=_run_dir(outdir, "torch_transformer", layers).name)


def write_keras_transformer_towers(outdir: Path, layers: int | None = None) -> Path:
    """``--layers`` towers (default 7) of the 128-layer transformer training step in one run
    graph (~141k ops each: 7 make ~1M), as a TF1 multi-tower training graph has them: each
    tower's ops under ``tower_<k>/``, one function library. Built from the 128-layer trace
    (written first into ``outdir`` unless there) and written with ``tf.summary.graph``."""
    lw._quiet_tf()
    import tensorflow as tf
    from tensorboard.compat.proto import graph_pb2

    from tb_graph_plugin.ingest.local import load_graph_def_from_path

    towers = layers or 7
    base_dir = Path(outdir) / "keras_transformer_train_step_trace_L128"
    if not base_dir.exists():
        write_keras_transformer_train_step_trace(Path(outdir), layers=128)
    one = load_graph_def_from_path(str(base_dir))
    graph = graph_pb2.GraphDef()
    graph.versions.CopyFrom(one.versions)
    graph.library.CopyFrom(one.library)
    for k in range(towers):
        prefix = f"tower_{k}/"
        for node in one.node:
            new = graph.node.add()
            new.CopyFrom(node)
            new.name = prefix + node.name
            new.input[:] = [("^" + prefix + i[1:]) if i.startswith("^") else prefix + i for i in node.input]
    run = _run_dir(outdir, "keras_transformer_towers", layers)
    writer = tf.summary.create_file_writer(str(run))
    with writer.as_default():
        tf.summary.graph(tf.compat.v1.GraphDef.FromString(graph.SerializeToString()))
    writer.close()
    return run


CORPUS_KINDS: dict[str, Callable[..., Path]] = {
    "keras_transformer_towers": write_keras_transformer_towers,
    "keras_mobilenetv2_trace": write_keras_mobilenetv2_trace,
    "keras_resnet50_trace": write_keras_resnet50_trace,
    "keras_inceptionv3_trace": write_keras_inceptionv3_trace,
    "keras_resnet50_train_step_trace": write_keras_resnet50_train_step_trace,
    "keras_transformer_train_step_trace": write_keras_transformer_train_step_trace,
    "torch_transformer": write_torch_transformer,
}


def write_corpus_kind(kind: str, outdir: Path = DEFAULT_OUTDIR, layers: int | None = None) -> Path:
    """Write one corpus kind into ``outdir`` in THIS process; returns the run dir."""
    if kind not in CORPUS_KINDS:
        raise ValueError(f"unknown corpus kind {kind!r}; known: {', '.join(CORPUS_KINDS)}")
    Path(outdir).mkdir(parents=True, exist_ok=True)
    return CORPUS_KINDS[kind](Path(outdir), layers=layers)


def count_ops(outdir: Path, run_dir: Path) -> dict[str, int]:
    """Op counts of the graph in ``run_dir`` (read back through the data provider)."""
    run = Path(run_dir).resolve().relative_to(Path(outdir).resolve()).as_posix()
    listing = lw.list_graph_data(outdir)[run]
    if lw.OP_GRAPH in listing:
        [tag] = sorted(listing[lw.OP_GRAPH])
        return lw.count_trace_ops(outdir, run, tag)
    from tensorboard.compat.proto import graph_pb2

    step, blob = lw.read_blobs(outdir, run, lw.RUN_GRAPH, "__run_graph__")[-1]
    return {"step": step, "run_graph_ops": len(graph_pb2.GraphDef.FromString(blob).node), "blob_bytes": len(blob)}


def main(argv: list[str] | None = None) -> int:
    """CLI: write one corpus kind, print the time taken and the op counts."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=sorted(CORPUS_KINDS))
    parser.add_argument("outdir", type=Path, nargs="?", default=DEFAULT_OUTDIR)
    parser.add_argument("--layers", type=int, default=None, help="encoder depth (transformer kinds)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    run_dir = write_corpus_kind(args.kind, args.outdir, layers=args.layers)
    seconds = time.perf_counter() - start
    counts = count_ops(args.outdir, run_dir)
    size = sum(p.stat().st_size for p in run_dir.rglob("events.out.tfevents.*"))
    print(f"{args.kind}: wrote {run_dir} in {seconds:.1f}s ({size / 1e6:.1f} MB)")
    print("  " + " ".join(f"{k}={v}" for k, v in counts.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
