"""GraphStore: every graph source, read through the data provider, parsed once and cached.

The ingest pipeline per ``GraphRef`` kind (the whole stage, in order):

=============  ===========================================  ======================================
kind / tag     blob read (data names, tried in order)       parse
=============  ===========================================  ======================================
op, run graph  ``graphs`` / ``__run_graph__``               ``parse.parse_graph_def``
op, other tag  ``graph_run_metadata``,                      ``run_metadata.merge_function_graphs``
               ``graph_run_metadata_graph``
conceptual     ``graph_keras_model``                        ``keras_model.keras_json_to_graph_def``
profile        stats: ``graph_tagged_run_metadata``,         ``run_metadata.parse_run_metadata``;
               ``graph_run_metadata``; graph: the tag's op  graph as for ``op``
               graph if it has one, else the run graph
upload         the in-memory upload store                    ``parse.read_graph_file`` (GraphDef,
                                                            ONNX), or
                                                            ``event_file.graph_from_event_file``
=============  ===========================================  ======================================

Post-condition: a second request for the same (experiment, run, tag, kind, step) does no
reading or parsing, except ``graph_bytes`` of a blob that is itself the serialized graph (a run
graph, a trace's one function graph): those are read again, as the data provider already holds
them. Callers must not mutate what they get.

The store returns data (protos, ``Upload`` records) and raises ``tensorboard.errors`` (the data
provider's own vocabulary) or ``GraphTooLarge``; ``api/`` turns them into HTTP answers.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import hashlib
from typing import Optional

from tensorboard import errors
from tensorboard.compat.proto import graph_pb2

from tb_graph_plugin import metadata
from tb_graph_plugin import wire
from tb_graph_plugin.cache import LruCache
from tb_graph_plugin.ingest.parse import GraphTooLarge, check_op_limit, count_ops  # noqa: F401 - re-exported
from tb_graph_plugin.ingest import blobs, event_file, keras_model, parse, run_metadata

__all__ = ["GraphStore", "GraphTooLarge", "Upload", "check_op_limit", "count_ops", "DEFAULT_CACHE_BYTES",
           "DEFAULT_UPLOAD_LIMIT_BYTES", "DEFAULT_MAX_OPS"]

DEFAULT_CACHE_BYTES = 2 << 30
DEFAULT_UPLOAD_LIMIT_BYTES = 256 << 20
DEFAULT_MAX_OPS = 6_000_000  # a 5M-op graph opens on a 2-core, 24 GB machine in ~1 min, ~10 GB peak (BENCHMARKS.md)
MAX_UPLOADS = 32  # uploads kept in memory, oldest dropped first (also past ``max_upload_bytes``)

_OP_GRAPH_NAMES = (metadata.RUN_METADATA, metadata.RUN_METADATA_WITH_GRAPH)
_PROFILE_NAMES = (metadata.TAGGED_RUN_METADATA, metadata.RUN_METADATA)


@dataclasses.dataclass(frozen=True)
class Upload:
    """An uploaded graph the store keeps: the ``ref`` that opens it, its op count (function
    library excluded), what was wrong but did not stop it, and what was opened."""

    ref: wire.GraphRef
    ops: int
    warnings: list[str]
    source: str  # "graph file", "run graph (step 0)", ...


def _upload_id(blob: bytes) -> str:
    """The id of an upload: the first 16 hex digits of its SHA-256 (the same file, the same id;
    SHA-256 is the fastest collision-resistant hash here, with the CPU's SHA instructions:
    about 30 ms per 50 MB, against about twice that for BLAKE2b)."""
    return hashlib.sha256(blob).hexdigest()[:16]


def _parse_upload(blob: bytes, filename: str, max_ops: int) -> tuple[graph_pb2.GraphDef, list[str], str]:
    """``(graph, warnings, source)`` of an uploaded event file or graph file (``parse``)."""
    if event_file.looks_like_event_file(blob, filename):
        found = event_file.graph_from_event_file(blob, filename)
        return found.graph, found.warnings, found.source
    graph, source = parse.read_graph_file(blob, f"uploaded file {filename!r}", filename, max_ops)
    return graph, [], source


def _size_of(value) -> int:
    """Bytes an entry holds: serialized graphs by length, protos by their encoded size."""
    return len(value) if isinstance(value, bytes) else value.ByteSize()


def _describe(run: str, tag: str, step: Optional[int]) -> str:
    at = "" if step is None else f" step {step}"
    return f"run {run!r} tag {tag!r}{at}"


class GraphStore:
    """Loads and caches GraphDefs and RunMetadata for ``GraphRef``s of one data provider."""

    def __init__(
        self,
        data_provider,
        max_cache_bytes: int = DEFAULT_CACHE_BYTES,
        upload_limit_bytes: int = DEFAULT_UPLOAD_LIMIT_BYTES,
        max_ops: int = DEFAULT_MAX_OPS,
        max_upload_bytes: Optional[int] = None,
    ):
        self._provider = data_provider
        # a graph bigger than the whole budget is answered but not kept
        self._cache: LruCache = LruCache(max_size=max_cache_bytes, size_of=_size_of)
        # upload id -> (GraphDef, bytes of the uploaded file, what it counts for); an upload is the
        # only copy of its graph: the newest is kept even when over the budget
        self._uploads: LruCache[str, tuple[graph_pb2.GraphDef, int]] = LruCache(
            max_entries=MAX_UPLOADS, max_size=max_cache_bytes if max_upload_bytes is None else max_upload_bytes,
            size_of=lambda entry: entry[1], keep_oversized=True)
        self.upload_limit_bytes = upload_limit_bytes
        self.max_ops = max_ops

    @property
    def cache(self) -> LruCache:
        return self._cache

    # -- graphs ---------------------------------------------------------------------------

    def graph_def(self, ctx, experiment_id, ref: wire.GraphRef, stock_quirks: bool = False) -> graph_pb2.GraphDef:
        """The GraphDef that ``ref`` names (for ``profile``: the graph the stats belong to).

        ``stock_quirks``: merge trace function graphs exactly as the stock plugin does (see
        ``run_metadata``), and convert a Keras model as it does (no ``_keras_config``), for the
        stock-compatible ``/graph``.
        """
        if ref.run == metadata.UPLOAD_RUN:
            return self._upload(ref.tag)
        key = ("graph", experiment_id, ref.run, ref.tag, ref.kind, ref.step, stock_quirks)
        return self._cache.get_or_load(key, lambda: self._load_graph(ctx, experiment_id, ref, stock_quirks))

    def graph_bytes(self, ctx, experiment_id, ref: wire.GraphRef):
        """The serialized GraphDef of ``ref`` (bytes, or a memoryview into the blob the data
        provider returned), as a worker takes it: where the blob already
        holds it (a run graph; a trace of one function graph, cut out of its RunMetadata by
        ``run_metadata.single_graph_bytes``, not copied) the bytes are not parsed here at all, and the
        worker's parse is the only one (it also checks ``max_ops``). A trace of several
        function graphs: merged from that same read, and the merged bytes kept. Otherwise the
        GraphDef of ``graph_def`` serialized, and kept."""
        if ref.kind == wire.GraphKind.PROFILE and ref.run != metadata.UPLOAD_RUN:
            return self._profile_source(ctx, experiment_id, ref, self.graph_bytes)
        if ref.kind == wire.GraphKind.OP and ref.run != metadata.UPLOAD_RUN:
            # Read again each time, not cached: the data provider holds these bytes already, and
            # a copy here doubled them in TensorBoard's memory (165 MB at 1M ops). A worker
            # takes them once per graph; a second read costs what the first did (~0.1 s at 1M).
            if ref.tag == metadata.RUN_GRAPH_TAG:
                return blobs.read_blob(self._provider, ctx, experiment_id, (metadata.RUN_GRAPH,), ref.run,
                                       ref.tag, ref.step)
            key = ("graph_bytes", experiment_id, ref.run, ref.tag, ref.kind, ref.step)
            merged = self._cache.get(key)  # a trace of several function graphs, merged before
            if merged is not None:
                return merged
            blob = blobs.read_blob(self._provider, ctx, experiment_id, _OP_GRAPH_NAMES, ref.run, ref.tag, ref.step)
            single = run_metadata.single_graph_bytes(blob)
            if single is not None:
                return single
            # Merged from this blob (not read again through ``graph_def``); only the bytes kept.
            what = _describe(ref.run, ref.tag, ref.step)
            return self._cache.get_or_load(key, lambda: run_metadata.merge_function_graphs(
                run_metadata.parse_run_metadata(blob, what), what).SerializeToString())
        key = ("graph_bytes", experiment_id, ref.run, ref.tag, ref.kind, ref.step)
        return self._cache.get_or_load(key, lambda: self.graph_def(ctx, experiment_id, ref).SerializeToString())

    def run_metadata_bytes(self, ctx, experiment_id, run: str, tag: str, step=None) -> bytes:
        """The serialized RunMetadata holding step stats for (run, tag), unparsed (a worker
        parses it: ``run_metadata.parse_run_metadata``)."""
        return blobs.read_blob(self._provider, ctx, experiment_id, _PROFILE_NAMES, run, tag, step)

    def run_metadata(self, ctx, experiment_id, run: str, tag: str, step=None):
        """The RunMetadata holding step stats for (run, tag) (the stock ``/run_metadata``)."""
        key = ("run_metadata", experiment_id, run, tag, step)

        def load():
            blob = blobs.read_blob(self._provider, ctx, experiment_id, _PROFILE_NAMES, run, tag, step)
            return run_metadata.parse_run_metadata(blob, _describe(run, tag, step))

        return self._cache.get_or_load(key, load)

    def _load_graph(self, ctx, eid, ref: wire.GraphRef, stock_quirks: bool) -> graph_pb2.GraphDef:
        what = _describe(ref.run, ref.tag, ref.step)
        read = lambda names, tag=ref.tag: blobs.read_blob(  # noqa: E731
            self._provider, ctx, eid, names, ref.run, tag, ref.step
        )
        if ref.kind == wire.GraphKind.CONCEPTUAL:
            # the stock /graph writes no layer configs; the graph we build keeps them (parameter counts)
            return keras_model.keras_json_to_graph_def(read((metadata.KERAS_MODEL,)), what,
                                                       layer_configs=not stock_quirks)
        if ref.kind == wire.GraphKind.OP:
            if ref.tag == metadata.RUN_GRAPH_TAG:
                return parse.parse_graph_def(read((metadata.RUN_GRAPH,)), what)
            rm = run_metadata.parse_run_metadata(read(_OP_GRAPH_NAMES), what)
            return run_metadata.merge_function_graphs(rm, what, stock_quirks)
        if ref.kind == wire.GraphKind.PROFILE:
            return self._profile_source(ctx, eid, ref, self.graph_def)
        raise errors.InvalidArgumentError(f"unknown graph kind {ref.kind!r}")

    def _profile_source(self, ctx, eid, ref: wire.GraphRef, get):
        """The graph a profile's stats are shown on, through ``get`` (``graph_def`` or
        ``graph_bytes``): the tag's op graph if it has one, else the run graph."""
        try:
            return get(ctx, eid, wire.GraphRef(ref.run, ref.tag, wire.GraphKind.OP, ref.step))
        except errors.NotFoundError:
            pass
        try:
            return get(ctx, eid, wire.GraphRef(ref.run, metadata.RUN_GRAPH_TAG, wire.GraphKind.OP, None))
        except errors.NotFoundError:
            raise errors.NotFoundError(
                f"profile {_describe(ref.run, ref.tag, ref.step)} has no graph to show it on: "
                f"the run has no run graph and the tag no op graph"
            ) from None

    def check_op_limit(self, graph: graph_pb2.GraphDef, what: str) -> None:
        """Raise ``GraphTooLarge`` when ``graph`` has more ops than ``max_ops``."""
        check_op_limit(graph, what, self.max_ops)

    # -- uploads --------------------------------------------------------------------------

    def add_upload(self, blob: bytes, filename: str = "upload") -> Upload:
        """Parse an uploaded graph file (.pb/.pbtxt GraphDef, .pt2, .onnx, .mlir) or event file; keep it under a
        content-derived id.

        An event file (``*tfevents*``) is read record by record: corrupt records are skipped and
        listed in the ``Upload``'s ``warnings`` (see ``event_file``). Raises
        ``errors.InvalidArgumentError`` for a blob over ``upload_limit_bytes`` or that is no graph,
        ``GraphTooLarge`` past ``max_ops`` (then nothing is kept). The id (``_upload_id``) is
        hashed on a second thread while the graph is parsed: ``hashlib`` releases the GIL on a
        large buffer, so with a free core the 50 MB hash (about 30 ms) costs no wall time.
        """
        if len(blob) > self.upload_limit_bytes:
            raise errors.InvalidArgumentError(
                f"upload of {len(blob)} bytes exceeds the limit of {self.upload_limit_bytes} "
                "bytes (flag --graph_explorer_upload_limit_mb)"
            )
        with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="upload-id") as hasher:
            upload_id = hasher.submit(_upload_id, blob)
            graph, warnings, source = _parse_upload(blob, filename, self.max_ops)
            self.check_op_limit(graph, f"uploaded file {filename!r}")
            ref = wire.GraphRef(run=metadata.UPLOAD_RUN, tag=upload_id.result(), kind=wire.GraphKind.OP)
        # An upload counts for its size in bytes: the size of its GraphDef for a binary .pb, more
        # for an event file (other records) or a .pbtxt (text); ``ByteSize()`` would serialize the
        # graph again (0.2 s at 50 MB).
        self._uploads.put(ref.tag, (graph, len(blob)))
        return Upload(ref=ref, ops=len(graph.node), warnings=warnings, source=source)

    def _upload(self, upload_id: str) -> graph_pb2.GraphDef:
        graph, _ = self._uploads.get(upload_id) or (None, 0)
        if graph is None:
            raise errors.NotFoundError(
                f"unknown upload {upload_id!r} (uploads live in server memory and are lost "
                "when TensorBoard restarts; upload the file again)"
            )
        return graph

