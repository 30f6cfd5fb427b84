"""List the graph data a data provider holds: the stock ``/info`` and our ``/graphs`` listing.

Reads only through ``context.data_provider`` (``list_blob_sequences`` and
``read_blob_sequences``; ``read_tensors`` for what torch.compile made of a run graph's call), so it works with the Python multiplexer and the Rust data server.

The flags follow the stock Graphs plugin (``graphs_plugin.info_impl``) exactly, so that our
``/info`` is a drop-in superset of the stock one:

- ``graph_run_metadata_graph`` (content ``b"1"``) -> ``op_graph``;
- ``graph_run_metadata`` (content ``b"1"``) -> ``op_graph`` and ``profile``;
- ``graph_keras_model`` (content ``b"1"``) -> ``conceptual_graph``;
- ``graphs`` with tag ``__run_graph__`` -> the run's ``run_graph``;
- ``graph_tagged_run_metadata`` -> ``profile``.
"""

from __future__ import annotations

import logging
from typing import Any, Optional

from tensorboard.data import provider

from tb_graph_plugin import metadata
from tb_graph_plugin import wire

__all__ = ["info", "listing", "compile_facts", "read_steps", "kinds_of", "default_ref", "ALL_STEPS"]

logger = logging.getLogger(__name__)

# Ask the data provider for every step it keeps (the reservoir keeps 10 unless
# --samples_per_plugin says otherwise).
ALL_STEPS = 1_000_000

# (data plugin name, flags it sets on a tag, whether the content version must be b"1")
_TAG_FLAGS = (
    (metadata.RUN_METADATA_WITH_GRAPH, ("op_graph",), True),
    (metadata.RUN_METADATA, ("profile", "op_graph"), True),
    (metadata.KERAS_MODEL, ("conceptual_graph",), True),
    (metadata.TAGGED_RUN_METADATA, ("profile",), False),
)


def info(data_provider, ctx, experiment_id) -> dict[str, Any]:
    """The stock ``/info`` body: run -> {run, run_graph, tags: tag -> flags}.

    Post-condition: equal to ``GraphsPlugin.info_impl`` for the same data.
    """
    result: dict[str, Any] = {}

    def run_item(run):
        return result.setdefault(run, {"run": run, "tags": {}, "run_graph": False})

    def tag_item(run, tag):
        return run_item(run)["tags"].setdefault(
            tag, {"tag": tag, "conceptual_graph": False, "op_graph": False, "profile": False}
        )

    # The stock plugin visits the data names in this order; the order of keys in the
    # answer follows it, which keeps a byte-for-byte comparison possible.
    order = (_TAG_FLAGS[0], _TAG_FLAGS[1], _TAG_FLAGS[2])
    for plugin_name, flags, versioned in order:
        _apply_tag_flags(data_provider, ctx, experiment_id, plugin_name, flags, versioned, tag_item)

    mapping = data_provider.list_blob_sequences(
        ctx, experiment_id=experiment_id, plugin_name=metadata.RUN_GRAPH
    )
    for run, tags in mapping.items():
        if metadata.RUN_GRAPH_TAG in tags:
            run_item(run)["run_graph"] = True

    plugin_name, flags, versioned = _TAG_FLAGS[3]
    _apply_tag_flags(data_provider, ctx, experiment_id, plugin_name, flags, versioned, tag_item)
    return result


def _apply_tag_flags(data_provider, ctx, experiment_id, plugin_name, flags, versioned, tag_item):
    mapping = data_provider.list_blob_sequences(
        ctx, experiment_id=experiment_id, plugin_name=plugin_name
    )
    for run, tags in mapping.items():
        for tag, series in tags.items():
            if versioned and series.plugin_content != metadata.CONTENT_VERSION_1:
                logger.warning(
                    "Ignoring %s/%s: unknown %s content version %r",
                    run, tag, plugin_name, series.plugin_content,
                )
                continue
            item = tag_item(run, tag)
            for flag in flags:
                item[flag] = True


def read_steps(data_provider, ctx, experiment_id, plugin_name, run=None, tag=None):
    """Every step the data provider keeps for ``plugin_name``: run -> tag -> [datum].

    Each datum has ``step``, ``wall_time`` and ``values`` (blob references), ordered by step.
    """
    run_tag_filter = None
    if run is not None:
        run_tag_filter = provider.RunTagFilter(
            runs=[run], tags=None if tag is None else [tag]
        )
    return data_provider.read_blob_sequences(
        ctx,
        experiment_id=experiment_id,
        plugin_name=plugin_name,
        run_tag_filter=run_tag_filter,
        downsample=ALL_STEPS,
    )


def listing(data_provider, ctx, experiment_id) -> wire.Listing:
    """Our ``/graphs`` body: the stock flags per (run, tag), plus every kept step.

    The run graph is listed as the tag ``__run_graph__`` with ``run_graph`` set.
    Runs and tags are sorted by name. ``data_location`` is the data provider's (the logdir).
    """
    stock = info(data_provider, ctx, experiment_id)
    steps: dict[tuple[str, str], dict[int, float]] = {}
    for plugin_name in metadata.DATA_PLUGIN_NAMES:
        for run, tags in read_steps(data_provider, ctx, experiment_id, plugin_name).items():
            for tag, data in tags.items():
                known = steps.setdefault((run, tag), {})
                for datum in data:
                    known.setdefault(datum.step, datum.wall_time)

    facts = compile_facts(data_provider, ctx, experiment_id)
    runs = []
    for run in sorted(stock):
        run_info = stock[run]
        tags = []
        if run_info["run_graph"]:
            tags.append(_tag_listing(metadata.RUN_GRAPH_TAG, {"run_graph": True}, steps.get((run, metadata.RUN_GRAPH_TAG), {}),
                                     facts.get(run, {})))
        for tag in sorted(run_info["tags"]):
            tags.append(_tag_listing(tag, run_info["tags"][tag], steps.get((run, tag), {})))
        runs.append(wire.RunListing(run=run, tags=tags))
    location = data_provider.experiment_metadata(ctx, experiment_id=experiment_id).data_location
    return wire.Listing(runs=runs, default=default_ref(runs), data_location=location or "")


_DEFAULT_KIND_ORDER = (wire.GraphKind.OP, wire.GraphKind.CONCEPTUAL, wire.GraphKind.PROFILE)


def kinds_of(tag: wire.TagListing) -> list[wire.GraphKind]:
    """The graph kinds a (run, tag) can be opened as, in picker order."""
    kinds = []
    if tag.run_graph or tag.op_graph:
        kinds.append(wire.GraphKind.OP)
    if tag.conceptual_graph:
        kinds.append(wire.GraphKind.CONCEPTUAL)
    if tag.profile:
        kinds.append(wire.GraphKind.PROFILE)
    return kinds


def default_ref(runs: list[wire.RunListing]) -> Optional[wire.GraphRef]:
    """The graph to open first: op graphs before conceptual graphs before profiles, runs in order.

    A Keras-callback log holds only a conceptual graph: it opens on that (the stock tab asks for
    an op graph there and shows "Malformed GraphDef").
    """
    for kind in _DEFAULT_KIND_ORDER:
        for run in runs:
            for tag in run.tags:
                if kind in kinds_of(tag):
                    return wire.GraphRef(run=run.run, tag=tag.tag, kind=kind)
    return None


def compile_facts(data_provider, ctx, experiment_id) -> dict[str, dict[int, wire.CompileFacts]]:
    """run -> step -> what torch.compile made of that step's run graph call, as
    ``tb_graph_plugin.torch.add_compiled_graph`` wrote it (``metadata.COMPILE_FACTS``: a few bytes
    a step, read whole). A payload that is no such JSON is left out, with a log line."""
    import json

    read = data_provider.read_tensors(ctx, experiment_id=experiment_id, plugin_name=metadata.COMPILE_FACTS,
                                      downsample=ALL_STEPS) or {}
    out: dict[str, dict[int, wire.CompileFacts]] = {}
    for run, tags in read.items():
        for datum in sorted(tags.get(metadata.COMPILE_FACTS_TAG) or (), key=lambda d: d.wall_time):
            value = datum.numpy.item() if getattr(datum.numpy, "size", 0) == 1 else None
            try:
                body = json.loads(value)
                facts = wire.CompileFacts(**{f: int(body[f]) for f in ("graphs", "graph_breaks", "recompilations", "kernels")})
            except (TypeError, ValueError, KeyError) as e:
                logger.warning("Ignoring %s step %s of %s: %s", run, datum.step, metadata.COMPILE_FACTS, e)
                continue
            out.setdefault(run, {})[datum.step] = facts
    return out


def _tag_listing(tag, flags, steps, facts: Optional[dict] = None) -> wire.TagListing:
    facts = facts or {}
    return wire.TagListing(
        tag=tag,
        run_graph=bool(flags.get("run_graph", False)),
        op_graph=bool(flags.get("op_graph", False)),
        conceptual_graph=bool(flags.get("conceptual_graph", False)),
        profile=bool(flags.get("profile", False)),
        steps=[wire.StepListing(step=s, wall_time=w, compile=facts.get(s)) for s, w in sorted(steps.items())],
    )
