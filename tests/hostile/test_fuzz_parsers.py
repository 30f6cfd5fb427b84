"""Fuzz harness for every parsing path: hypothesis mutations of real serialized data.

Seeds are real bytes the real writers produced (``real_logs``): the TF1 run graph (binary and
pbtxt), the TF1 ``add_run_metadata`` RunMetadata, a TF2 ``trace_export`` RunMetadata, the Keras 3
``model.to_json()`` of the Keras callback, the TF1 event file, and ``torch.onnx.export``'s
``.onnx`` files of a CNN (both exporters; ``onnx_files``). Mutations: byte flips,
overwrites with random bytes, inserts, deletions, chunk duplication, truncation; for the Keras
JSON also structural ones (a random subtree replaced by a random JSON value).

Post-condition asserted for every input: the parser returns, or raises a
``tensorboard.errors.PublicError`` subclass - never another exception, never a hang (each
example runs under a ``SIGALRM`` time limit). Whatever parses is then built into a SlimGraph
and a Hierarchy (what a worker does with it), which must not raise either.

Bounded: the whole file runs in well under 60 s (``max_examples`` per target).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import tempfile
from pathlib import Path

import pytest
from google.protobuf import text_format
from hypothesis import HealthCheck, event, given, settings
from hypothesis import errors as hypothesis_errors
from hypothesis import strategies as st
from tensorboard import errors

from tb_graph_plugin import wire
from tb_graph_plugin.graph import build_slim_graph
from tb_graph_plugin.hierarchy import build_hierarchy
from tb_graph_plugin.ingest import keras_model, local, onnx_model, parse, run_metadata
from tests import logwriters

EXAMPLE_TIME_LIMIT_S = 10
FUZZ = settings(max_examples=600, deadline=None, suppress_health_check=list(HealthCheck), database=None)


class Hang(Exception):
    pass


@contextlib.contextmanager
def time_limit(seconds: int = EXAMPLE_TIME_LIMIT_S):
    def on_alarm(signum, frame):
        raise Hang(f"no answer within {seconds} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def note(text: str) -> None:
    """A hypothesis event (shown with --hypothesis-show-statistics); no-op outside @given."""
    with contextlib.suppress(hypothesis_errors.InvalidArgument):
        event(text)


def only_public_errors(fn, *args):
    """``fn(*args)``'s value, or None when it raised a ``PublicError``; anything else propagates."""
    with time_limit():
        try:
            value = fn(*args)
        except errors.PublicError as e:
            note(f"{fn.__name__}: {type(e).__name__}")
            return None
    note(f"{fn.__name__}: accepted")
    return value


def build_graph(graph_def) -> None:
    """What a worker does with a parsed GraphDef; must not raise on anything a parser accepted."""
    with time_limit():
        build_hierarchy(build_slim_graph(graph_def))


# ----------------------------------------------------------------------------- mutations

TEXT_BYTES = st.text(alphabet='{}":<>^/\\ \nabcxyz019_-.', min_size=1, max_size=16).map(str.encode)
MUTATION = st.tuples(
    # flips and small overwrites (most likely to keep the input parseable) are drawn most often
    st.sampled_from(["flip", "flip", "flip", "overwrite", "overwrite", "insert", "delete", "duplicate",
                     "truncate"]),
    st.floats(0, 1, exclude_max=True),
    st.binary(min_size=1, max_size=4) | st.binary(min_size=1, max_size=32) | TEXT_BYTES,
)


def mutate(seed: bytes, mutations) -> bytes:
    data = bytearray(seed)
    for kind, where, payload in mutations:
        if not data:
            data.extend(payload)
            continue
        at = int(where * len(data))
        if kind == "flip":
            data[at] ^= payload[0] or 0xFF
        elif kind == "overwrite":
            data[at:at + len(payload)] = payload
        elif kind == "insert":
            data[at:at] = payload
        elif kind == "delete":
            del data[at:at + len(payload)]
        elif kind == "duplicate":
            data[at:at] = data[at:at + 8 * len(payload)]
        else:
            del data[at:]
    return bytes(data)


MUTATIONS = st.lists(MUTATION, min_size=1, max_size=3) | st.lists(MUTATION, min_size=4, max_size=12)


# --------------------------------------------------------------------------------- seeds


@pytest.fixture(scope="module")
def seeds(real_logs):
    tf1 = real_logs.get("tf1_graph")
    graph = logwriters.read_blobs(tf1, "tf1_graph", logwriters.RUN_GRAPH, "__run_graph__")[0][1]
    graph_def = parse.parse_graph_def(graph, "seed")
    trace = real_logs.get("tf2_trace_profile")
    keras = real_logs.get("keras_callback")
    (event_file,) = list((tf1 / "tf1_graph").glob("events.out.tfevents.*"))
    return {
        "graph_pb": graph,
        "graph_pbtxt": text_format.MessageToString(graph_def).encode(),
        "run_metadata": logwriters.read_blobs(tf1, "tf1_graph", logwriters.TAGGED, "step1")[0][1],
        "trace": logwriters.read_blobs(trace, "tf2_trace_profile", logwriters.PROFILE, "train_step")[0][1],
        "keras_json": logwriters.read_blobs(keras, "train", logwriters.KERAS, "keras")[0][1],
        "event_file": event_file.read_bytes(),
    }


def test_seeds_parse(seeds):
    """The unmutated seeds are accepted (so the fuzz targets below start from valid input)."""
    assert len(parse.parse_graph_file(seeds["graph_pb"], "seed").node) > 20
    assert len(parse.parse_graph_file(seeds["graph_pbtxt"], "seed").node) > 20
    assert run_metadata.parse_run_metadata(seeds["run_metadata"], "seed").step_stats.dev_stats
    rm = run_metadata.parse_run_metadata(seeds["trace"], "seed")
    assert len(run_metadata.merge_function_graphs(rm, "seed").node) > 20
    assert len(keras_model.keras_json_to_graph_def(seeds["keras_json"], "seed").node) > 5


# ---------------------------------------------------------------------------- fuzz targets


@FUZZ
@given(mutations=MUTATIONS)
def test_fuzz_parse_graph_def(seeds, mutations):
    graph = only_public_errors(parse.parse_graph_def, mutate(seeds["graph_pb"], mutations), "fuzz")
    if graph is not None:
        build_graph(graph)


@FUZZ
@given(mutations=MUTATIONS, which=st.sampled_from(["graph_pb", "graph_pbtxt"]))
def test_fuzz_parse_graph_file(seeds, mutations, which):
    graph = only_public_errors(parse.parse_graph_file, mutate(seeds[which], mutations), "fuzz")
    if graph is not None:
        assert graph.node or graph.library.function
        build_graph(graph)


@pytest.fixture(scope="module")
def onnx_seeds(onnx_files):
    return {stem: (onnx_files / f"{stem}.onnx").read_bytes() for stem in ("cnn", "cnn_legacy")}


@FUZZ
@given(mutations=MUTATIONS, which=st.sampled_from(["cnn", "cnn_legacy"]))
def test_fuzz_onnx_model(onnx_seeds, mutations, which):
    graph = only_public_errors(onnx_model.onnx_to_graph_def, mutate(onnx_seeds[which], mutations), "fuzz")
    if graph is not None:
        names = [n.name for n in graph.node]
        assert all(names) and len(names) == len(set(names))
        build_graph(graph)


@FUZZ
@given(mutations=MUTATIONS, which=st.sampled_from(["run_metadata", "trace"]))
def test_fuzz_parse_run_metadata_and_merge(seeds, mutations, which):
    rm = only_public_errors(run_metadata.parse_run_metadata, mutate(seeds[which], mutations), "fuzz")
    if rm is not None:
        graph = only_public_errors(run_metadata.merge_function_graphs, rm, "fuzz")
        if graph is not None:
            build_graph(graph)


@FUZZ
@given(mutations=MUTATIONS)
def test_fuzz_keras_json_bytes(seeds, mutations):
    graph = only_public_errors(keras_model.keras_json_to_graph_def, mutate(seeds["keras_json"], mutations), "fuzz")
    if graph is not None:
        build_graph(graph)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.text(max_size=5),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3),
    max_leaves=6,
)


def _paths(value, path=()):
    yield path
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, path + (i,))


@FUZZ
@given(picks=st.lists(st.tuples(st.floats(0, 1, exclude_max=True), JSON_VALUES), min_size=1, max_size=4))
def test_fuzz_keras_json_structure(seeds, picks):
    """A random subtree of the real model JSON replaced by a random JSON value."""
    model = json.loads(seeds["keras_json"])
    for where, value in picks:
        paths = [p for p in _paths(model) if p]
        path = paths[int(where * len(paths))]
        parent = model
        for key in path[:-1]:
            parent = parent[key]
        parent[path[-1]] = value
    graph = only_public_errors(keras_model.keras_json_to_graph_def, json.dumps(model).encode(), "fuzz")
    if graph is not None:
        build_graph(graph)


def _read_every_graph(path: str) -> int:
    """Open a logdir or event file with ``ingest.local.open_logs`` (TensorBoard's local data
    provider and our ``GraphStore``, the plugin's own code) and load every graph and profile
    its listing names; the number of graphs loaded."""
    logs = only_public_errors(local.open_logs, path)
    if logs is None:
        return 0
    loaded = 0
    for run in logs.listing().runs:
        for tag in run.tags:
            kinds = [wire.GraphKind.OP] if tag.run_graph or tag.op_graph else []
            kinds += [wire.GraphKind.PROFILE] if tag.profile else []
            kinds += [wire.GraphKind.CONCEPTUAL] if tag.conceptual_graph else []
            for kind in kinds:
                ref = wire.GraphRef(run=run.run, tag=tag.tag, kind=kind)
                graph = only_public_errors(logs.graph_def, ref)
                if graph is not None:
                    build_graph(graph)
                    loaded += 1
                if kind == wire.GraphKind.PROFILE:
                    only_public_errors(logs.store.run_metadata, logs.ctx, logs.experiment_id, run.run, tag.tag)
    return loaded


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(mutations=MUTATIONS, as_logdir=st.booleans())
def test_fuzz_event_file(seeds, mutations, as_logdir):
    with tempfile.TemporaryDirectory(prefix="fuzz_events_") as root:
        run = Path(root) / "run"
        run.mkdir()
        event_file = run / "events.out.tfevents.1.fuzz"
        event_file.write_bytes(mutate(seeds["event_file"], mutations))
        with time_limit(30):
            note(f"graphs loaded: {_read_every_graph(root if as_logdir else str(event_file))}")


def test_event_file_seed_loads_every_graph(seeds, tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "events.out.tfevents.1.seed").write_bytes(seeds["event_file"])
    assert _read_every_graph(str(tmp_path)) == 2  # the run graph, and the step1 profile on it
    assert _read_every_graph(str(next((tmp_path / "run").iterdir()))) == 2


def test_open_logs_reads_a_real_logdir(real_logs, tmp_path):
    """Regression: ``ingest.local.LocalLogs`` built the legacy ``event_multiplexer.EventMultiplexer``,
    which has no ``AllSummaryMetadata``, so ``MultiplexerDataProvider`` (and with it ``open_logs``,
    ``load_graph_def_from_path`` and the ``tb-graph`` CLI on a logdir) raised AttributeError.
    Fix: ``plugin_event_multiplexer.EventMultiplexer`` as in TensorBoard's own server."""
    shutil.copytree(real_logs.get("tf1_graph") / "tf1_graph", tmp_path / "tf1_graph")
    logs = local.open_logs(str(tmp_path))
    tags = {t.tag for r in logs.listing().runs for t in r.tags}
    assert tags == {"__run_graph__", "step1"}
    graph = local.load_graph_def_from_path(str(tmp_path))
    assert any(n.name == "eval/features" for n in graph.node)
    assert os.path.isdir(tmp_path)
