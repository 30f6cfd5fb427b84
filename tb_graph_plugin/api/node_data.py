"""``/node_data_tags`` and ``/node_data``: per-node data read in TensorBoard, put on the graph in a worker.

The request thread reads a tag's steps through the data provider (``ingest.node_data``; decoded
steps kept per tag until the tag changes, ``NodeDataReader``) or from an upload (Model Explorer's
node-data JSON), and sends one step's names and values to the worker holding the graph. The
worker (``on_hierarchy``) resolves the names and aggregates (``hierarchy.node_values``), and
answers the values of the nodes the expansion state shows: a step change is a small job and no
layout. The history of the selected node over every step is made here, from the data indices the
worker says make its value (``history``).
"""

from __future__ import annotations

import collections
import hashlib
import json
import math
import threading
from typing import Optional

from tensorboard import errors

from tb_graph_plugin import metadata, wire
from tb_graph_plugin.ingest import node_data as codec

__all__ = ["NodeDataReader", "Series", "on_hierarchy", "finish", "TOP_K_MAX", "UNMATCHED_LISTED"]

TOP_K_MAX = 100
UNMATCHED_LISTED = 200
MAX_UPLOADS = 16
_CACHED_TAGS = 4


def _nonfinite(v: float) -> Optional[str]:
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return None


class Series:
    """Every step of one node-data tag, decoded once per step when first asked."""

    def __init__(self, run: str, tag: str, blobs: dict[int, bytes], decoded: Optional[dict] = None):
        self.run, self.tag = run, tag
        self._blobs = blobs
        self._decoded: dict[int, codec.NodeValues] = dict(decoded or {})
        self._maps: dict[int, dict[str, float]] = {}
        self.steps = sorted(set(blobs) | set(self._decoded))

    def step(self, step: int) -> codec.NodeValues:
        values = self._decoded.get(step)
        if values is None:
            blob = self._blobs.get(step)
            if blob is None:
                raise errors.NotFoundError(f"node data {self.tag!r} of run {self.run!r} has no step {step} "
                                           f"(steps: {', '.join(map(str, self.steps[:20]))})")
            values = self._decoded[step] = codec.decode(blob, f"node data {self.tag!r} step {step}")
        return values

    def by_name(self, step: int) -> dict[str, float]:
        m = self._maps.get(step)
        if m is None:
            v = self.step(step)
            m = self._maps[step] = dict(zip(v.names, v.values))
        return m

    def digest(self, step: int) -> str:
        blob = self._blobs.get(step)
        if blob is None:
            v = self.step(step)
            blob = codec.encode(dict(zip(v.names, v.values)))
        return hashlib.blake2b(blob, digest_size=8).hexdigest()


class NodeDataReader:
    """Node-data tags of an experiment and their steps (data provider), plus uploaded files."""

    def __init__(self, provider):
        self._provider = provider
        self._lock = threading.Lock()
        self._series: "collections.OrderedDict[tuple, Series]" = collections.OrderedDict()
        self._uploads: "collections.OrderedDict[str, tuple[str, Series]]" = collections.OrderedDict()

    def listing(self, ctx, eid: str) -> wire.NodeDataListing:
        tags = [wire.NodeDataTag(run=run, tag=tag, max_step=int(last[0]))
                for run, by_tag in sorted(codec.list_tags(self._provider, ctx, eid).items())
                for tag, last in sorted(by_tag.items())]
        with self._lock:
            uploads = list(self._uploads.items())
        tags += [wire.NodeDataTag(run=metadata.UPLOAD_RUN, tag=uid, max_step=0, source=f"upload {filename}")
                 for uid, (filename, _) in uploads]
        tags += [wire.NodeDataTag(run=metadata.COST_RUN, tag=t, max_step=0, source="built-in") for t in metadata.COST_TAGS]
        return wire.NodeDataListing(tags=tags)

    def series(self, ctx, eid: str, run: str, tag: str) -> Series:
        if run == metadata.UPLOAD_RUN:
            with self._lock:
                upload = self._uploads.get(tag)
            if upload is None:
                raise errors.NotFoundError(f"no uploaded node data {tag!r} (uploads live in server memory, the {MAX_UPLOADS} newest)")
            return upload[1]
        listed = codec.list_tags(self._provider, ctx, eid)
        last = listed.get(run, {}).get(tag)
        if last is None:
            raise errors.NotFoundError(f"no node data {tag!r} in run {run!r}")
        key = (eid, run, tag, last)
        with self._lock:
            cached = self._series.get(key)
            if cached is not None:
                self._series.move_to_end(key)
                return cached
        series = Series(run, tag, codec.read_steps(self._provider, ctx, eid, run, tag))
        with self._lock:
            self._series[key] = series
            while len(self._series) > _CACHED_TAGS:
                self._series.popitem(last=False)
        return series

    def upload(self, blob: bytes, filename: str) -> wire.NodeDataListing:
        """Model Explorer's node-data JSON: one tag per graph in it (``filename`` or ``filename:graph``)."""
        graphs = codec.from_model_explorer(blob, f"uploaded file {filename!r}")
        added = []
        with self._lock:
            for graph_id, values in graphs.items():
                label = f"{filename}:{graph_id}" if graph_id else filename
                uid = hashlib.blake2b(blob + graph_id.encode(), digest_size=8).hexdigest()
                self._uploads[uid] = (label, Series(metadata.UPLOAD_RUN, uid, {}, {0: values}))
                self._uploads.move_to_end(uid)
                added.append(wire.NodeDataTag(run=metadata.UPLOAD_RUN, tag=uid, max_step=0, source=f"upload {label}"))
            while len(self._uploads) > MAX_UPLOADS:
                self._uploads.popitem(last=False)
        return wire.NodeDataListing(tags=added)


# -- in the worker ----------------------------------------------------------------------------


def on_hierarchy(state, args: dict) -> str:
    """The worker's part: ``args`` holds ``names``, ``values``, ``expanded``, ``agg``, ``top_k``,
    ``node``. Answers JSON: the shown nodes' values, the top nodes, the unmatched names, and
    ``covering`` (for ``node``: per valued node, the data indices that make its value)."""
    from tb_graph_plugin.hierarchy import node_values

    h = state.hierarchy
    keys = getattr(state, "node_data_keys", None)
    if keys is None:
        keys = state.node_data_keys = node_values.module_keys(h)
    for g in args["expanded"]:
        if not h.has(g) or not h.is_group(g):
            raise errors.InvalidArgumentError(f"`expanded` names {g!r}: no such group in this graph")
    if args.get("cost"):  # a built-in cost colour mode: every op's cost, no names to resolve
        from tb_graph_plugin.hierarchy.cost import cost_values

        ids, values = cost_values(h, args["cost"])
        names, unmatched = ids, []
    else:
        names, values = args["names"], args["values"]
        ids, unmatched = node_values.resolve(h, names, keys)
    stats = node_values.aggregate(h, ids, values, args["agg"])
    shown = list(h.children(h.root.name))
    for g in args["expanded"]:
        shown.append(h.id_of(g))
        shown.extend(h.children(g))
    finite: dict[str, float] = {}
    bad: dict[str, str] = {}
    for i in shown:
        if not stats.has(i):
            continue
        v = stats.value(i)
        kind = _nonfinite(v)
        if kind:
            bad[h.name_of(i)] = kind
        else:
            finite[h.name_of(i)] = v
    own = [i for i in dict.fromkeys(ids) if i >= 0]  # in data order: ties (NaNs) keep the order written
    ranked = sorted(own, key=lambda i: _rank(stats.value(i)))[:args["top_k"]]
    top = [_entry(h.name_of(i), stats.value(i)) for i in ranked]
    answer = {
        "values": finite, "nonfinite": bad,
        "range": [min(finite.values()), max(finite.values())] if finite else None,
        "top": [wire.to_plain(e) for e in top],
        "matched": len(names) - len(unmatched), "unmatched": len(unmatched),
        "unmatched_names": unmatched[:UNMATCHED_LISTED], "covering": None,
    }
    node = args.get("node")
    if node:
        if not h.has(node):
            raise errors.NotFoundError(f"no node {node!r} in this graph")
        by_node: dict[int, list[int]] = {}
        for d, i in enumerate(ids):
            if i >= 0:
                by_node.setdefault(i, []).append(d)
        answer["covering"] = [by_node[i] for i in node_values.covering(h, stats, h.id_of(node))]
        if args.get("cost"):  # costs are finite sums: the node's value is its history (one step)
            answer["node_value"] = stats.value(h.id_of(node)) if stats.has(h.id_of(node)) else None
    return json.dumps(answer, separators=(",", ":"), allow_nan=False)


def _rank(v: float) -> tuple:
    """Sort key: NaN first, then +inf, then the largest values."""
    return (0, 0.0) if math.isnan(v) else (1, -v) if not math.isinf(v) or v > 0 else (2, 0.0)


def _entry(name: str, v: float) -> wire.NodeDataEntry:
    kind = _nonfinite(v)
    return wire.NodeDataEntry(name=name, value=None if kind else v, nonfinite=kind)


# -- back on the request thread -------------------------------------------------------------------


def finish_cost(worker_json: str, ref: wire.GraphRef, field: str) -> str:
    """The ``wire.NodeDataAnswer`` of a built-in cost colour mode: one step (0), its value as history."""
    part = json.loads(worker_json)
    history = []
    if part.get("node_value") is not None:
        history = [wire.NodeDataPoint(step=0, value=part["node_value"])]
    answer = wire.NodeDataAnswer(
        graph=ref, data_run=metadata.COST_RUN, data_tag=field, step=0, steps=[0], agg="sum",
        values=part["values"], nonfinite=part["nonfinite"], range=part["range"],
        top=[wire.NodeDataEntry(**e) for e in part["top"]], matched=part["matched"], unmatched=0,
        unmatched_names=[], history=history, thresholds=[], gradient=[])
    return wire.to_json(answer)


def finish(worker_json: str, ref: wire.GraphRef, series: Series, step: int, agg: str) -> str:
    """The ``wire.NodeDataAnswer`` from the worker's answer, with the node's history over steps."""
    from tb_graph_plugin.hierarchy.node_values import combine

    part = json.loads(worker_json)
    history = []
    if part["covering"] is not None:
        names = series.step(step).names
        groups = [[names[d] for d in data] for data in part["covering"]]
        for s in series.steps:
            m = series.by_name(s)
            # each valued node's own value at step s (its data names there), then those combined
            vals = [combine([m[n] for n in group if n in m], agg) for group in groups if any(n in m for n in group)]
            if vals:
                v = combine(vals, agg)
                kind = _nonfinite(v)
                history.append(wire.NodeDataPoint(step=s, value=None if kind else v, nonfinite=kind))
    current = series.step(step)
    answer = wire.NodeDataAnswer(
        graph=ref, data_run=series.run, data_tag=series.tag, step=step, steps=series.steps, agg=agg,
        values=part["values"], nonfinite=part["nonfinite"], range=part["range"],
        top=[wire.NodeDataEntry(**e) for e in part["top"]], matched=part["matched"], unmatched=part["unmatched"],
        unmatched_names=part["unmatched_names"], history=history,
        thresholds=[wire.NodeDataColorStop(at=t["value"], color=t["bgColor"]) for t in current.thresholds],
        gradient=[wire.NodeDataColorStop(at=g["stop"], color=g["bgColor"]) for g in current.gradient],
    )
    return wire.to_json(answer)
