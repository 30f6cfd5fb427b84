"""Read one graph blob of a (run, tag, step) through the data provider.

Pre-condition: ``plugin_names`` are graph data names from ``metadata``.
Post-condition: returns the bytes of the first blob found, trying the names in order (as the
stock plugin does); raises ``errors.NotFoundError`` naming what is missing (run, tag or step)
otherwise. ``step=None`` means the latest step the data provider keeps.
"""

from __future__ import annotations

from typing import Optional, Sequence

from tensorboard import errors

from tb_graph_plugin.ingest import listing

__all__ = ["read_blob"]


def read_blob(
    data_provider,
    ctx,
    experiment_id,
    plugin_names: Sequence[str],
    run: str,
    tag: str,
    step: Optional[int] = None,
) -> bytes:
    steps_seen: list[int] = []
    for plugin_name in plugin_names:
        data = (
            listing.read_steps(data_provider, ctx, experiment_id, plugin_name, run, tag)
            .get(run, {})
            .get(tag, ())
        )
        data = [d for d in data if d.values]
        if not data:
            continue
        if step is None:
            datum = max(data, key=lambda d: (d.step, d.wall_time))
        else:
            matches = [d for d in data if d.step == step]
            if not matches:
                steps_seen.extend(d.step for d in data)
                continue
            datum = max(matches, key=lambda d: d.wall_time)
        return data_provider.read_blob(ctx, blob_key=datum.values[0].blob_key)
    raise errors.NotFoundError(
        _missing_message(data_provider, ctx, experiment_id, plugin_names, run, tag, step, steps_seen)
    )


def _missing_message(data_provider, ctx, experiment_id, plugin_names, run, tag, step, steps_seen):
    if steps_seen:
        kept = ", ".join(str(s) for s in sorted(set(steps_seen)))
        return f"run {run!r} tag {tag!r} has no step {step} (steps kept: {kept})"
    runs = data_provider.list_runs(ctx, experiment_id=experiment_id)
    if run not in {r.run_name for r in runs}:
        return f"unknown run {run!r}"
    kinds = " or ".join(plugin_names)
    return f"run {run!r} has no tag {tag!r} with {kinds} data"
