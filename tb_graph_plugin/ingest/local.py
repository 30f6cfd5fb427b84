"""Read a graph from a path without a TensorBoard server: a logdir, an event file, or a graph file
(a .pbtxt or .pb GraphDef, a .pt2, an .onnx model, a .mlir: ``parse.read_graph_file``).

Logdirs and event files go through TensorBoard's own local data provider
(``MultiplexerDataProvider``) and our ``GraphStore``, the very code the plugin runs.

Post-condition: ``load_graph_def_from_path`` returns the GraphDef that the plugin would serve for
(run, tag, step) - the first op graph (run graph first) when run/tag are not given - or raises
``errors.PublicError`` naming what is missing and what exists. A single event file with damaged
records is read as an upload is (``event_file``: the intact records kept, the damage reported on
stderr), since TensorBoard's reader would stop at the first bad record.
"""

from __future__ import annotations

import os
import sys
from typing import Optional

from tensorboard import context as tb_context
from tensorboard import errors
from tensorboard.backend.event_processing import data_provider as tb_data_provider
from tensorboard.backend.event_processing import plugin_event_multiplexer
from tensorboard.compat.proto import graph_pb2

from tb_graph_plugin import metadata
from tb_graph_plugin import wire
from tb_graph_plugin.ingest import event_file, listing, parse
from tb_graph_plugin.ingest.store import GraphStore

__all__ = ["LocalLogs", "load_graph_def_from_path", "open_logs"]

_EVENT_MARK = "tfevents"


class LocalLogs:
    """A logdir or event file opened with TensorBoard's local data provider."""

    def __init__(self, path: str):
        # Keep every step of every graph data name (the reservoir would keep 10).
        multiplexer = plugin_event_multiplexer.EventMultiplexer(tensor_size_guidance={
            name: 0 for name in metadata.DATA_PLUGIN_NAMES
        })
        if os.path.isdir(path):
            multiplexer.AddRunsFromDirectory(path)
        else:
            multiplexer.AddRun(path, name=".")
        multiplexer.Reload()
        self.provider = tb_data_provider.MultiplexerDataProvider(multiplexer, path)
        self.ctx = tb_context.RequestContext()
        self.experiment_id = ""
        self.store = GraphStore(self.provider)

    def listing(self) -> wire.Listing:
        return listing.listing(self.provider, self.ctx, self.experiment_id)

    def default_ref(self, run: Optional[str], tag: Optional[str], step: Optional[int]) -> wire.GraphRef:
        """The graph to open when the user names only part of it: the plugin's own choice
        (``listing.default_ref``: op graphs before conceptual ones) among the matching runs and
        tags; a profile is never picked by default here (it is the op graph with stats)."""
        runs = [
            wire.RunListing(r.run, [t for t in r.tags if tag is None or t.tag == tag])
            for r in self.listing().runs
            if run is None or r.run == run
        ]
        found = listing.default_ref(runs)
        if found is None or found.kind == wire.GraphKind.PROFILE:
            wanted = " ".join(
                f"{k} {v!r}" for k, v in (("run", run), ("tag", tag)) if v is not None
            )
            raise errors.NotFoundError(f"no graph found{' for ' + wanted if wanted else ''}")
        return wire.GraphRef(run=found.run, tag=found.tag, kind=found.kind, step=step)

    def graph_def(self, ref: wire.GraphRef) -> graph_pb2.GraphDef:
        return self.store.graph_def(self.ctx, self.experiment_id, ref)


def open_logs(path: str) -> LocalLogs:
    if not os.path.exists(path):
        raise errors.NotFoundError(f"no such file or directory: {path!r}")
    return LocalLogs(path)


def load_graph_def_from_path(
    path: str,
    run: Optional[str] = None,
    tag: Optional[str] = None,
    step: Optional[int] = None,
) -> graph_pb2.GraphDef:
    if os.path.isfile(path) and _EVENT_MARK not in os.path.basename(path):
        with open(path, "rb") as f:
            return parse.parse_graph_file(f.read(), f"file {path!r}", os.path.basename(path))
    if os.path.isfile(path) and run is None and tag is None and step is None:
        damaged = _read_damaged_event_file(path)
        if damaged is not None:
            return damaged
    logs = open_logs(path)
    return logs.graph_def(logs.default_ref(run, tag, step))


def _read_damaged_event_file(path: str) -> Optional[graph_pb2.GraphDef]:
    """For an event file with corrupt or truncated records: its graph, read record by record.

    TensorBoard's reader stops at the first bad record; ``event_file`` skips it and keeps the rest
    (each skipped stretch is reported on stderr). None when the file is intact.
    """
    with open(path, "rb") as f:
        blob = f.read()
    _, problems = event_file.read_records(blob)
    if not problems:
        return None
    found = event_file.graph_from_event_file(blob, os.path.basename(path))
    for warning in found.warnings:
        print(f"tb-graph: warning: {path}: {warning}", file=sys.stderr)
    print(f"tb-graph: showing the {found.source} of {path}", file=sys.stderr)
    return found.graph
