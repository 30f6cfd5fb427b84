"""Profile join: step stats per op, summed per group.

Follows the stock dashboard ([TB-SRC] colour modes): an op's compute
time is the sum over its executions of ``all_end_rel_micros`` (the span from
``all_start_micros`` to ``all_start_micros + all_end_rel_micros``), its memory the sum of
the positive ``memory[].total_bytes``, its device the ``dev_stats.device`` it ran on.
``NodeExecStats.node_name`` may carry a ``:N`` suffix; names are matched against both
the original and the normalized op names.

Pre-condition: a built Hierarchy; ``stats`` is a ``RunMetadata`` or ``StepStats`` proto.
Post-condition: ``h.profile[op_id] = {"compute_time_us", "memory_bytes", "device"}`` for
every matched op; every group's ``compute_time_us``/``memory_bytes`` is the sum over the
ops below it and beside them (embeddings count for their owner's group); groups with no
matched op keep None. Returns the number of unmatched node names.
"""

from __future__ import annotations

from tb_graph_plugin.hierarchy.model import Hierarchy

__all__ = ["join_step_stats"]


def join_step_stats(h: Hierarchy, stats) -> int:
    step_stats = stats.step_stats if hasattr(stats, "step_stats") else stats
    index = h.slim.index
    per_op: dict[int, dict] = {}
    unmatched = 0
    for dev in step_stats.dev_stats:
        for ns in dev.node_stats:
            name = ns.node_name
            i = index.get(name)
            if i is None and ":" in name:
                i = index.get(name.split(":", 1)[0])
            if i is None:
                unmatched += 1
                continue
            rec = per_op.get(i)
            if rec is None:
                rec = per_op[i] = {"compute_time_us": 0.0, "memory_bytes": 0, "device": dev.device}
            rec["compute_time_us"] += ns.all_end_rel_micros
            rec["memory_bytes"] += sum(m.total_bytes for m in ns.memory if m.total_bytes > 0)
    h.profile = per_op
    n = h.n_ops
    groups = h.groups
    for g in groups:
        g.compute_time_us = None
        g.memory_bytes = None
        g.profile_devices = {}
    for i, rec in per_op.items():
        p = h.parent(i)
        while p is not None:
            g = groups[p - n]
            g.compute_time_us = (g.compute_time_us or 0.0) + rec["compute_time_us"]
            g.memory_bytes = (g.memory_bytes or 0) + rec["memory_bytes"]
            g.profile_devices[rec["device"]] = g.profile_devices.get(rec["device"], 0) + 1
            p = None if g.parent < 0 else g.parent
    return unmatched
