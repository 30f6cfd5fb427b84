"""Phase 5 (templates): the whole-tree pass over the MetaEdgeTable (a level at a time, the memo
key as bytes, big metagraphs refined together) gives every group the hash the group-by-group pass
gives (which the block series' rehash uses), on real graphs."""

from __future__ import annotations

import pytest

from tb_graph_plugin import hierarchy
from tb_graph_plugin.cli import load_graph_def
from tb_graph_plugin.graph import build_slim_graph
from tb_graph_plugin.hierarchy import HierarchyOptions, templates
from tb_graph_plugin.hierarchy.model import Hierarchy


def _before_templates(real_logs, kind) -> Hierarchy:
    """The hierarchy as the ``templates`` step finds it (metaedges as a table)."""
    h = Hierarchy(build_slim_graph(load_graph_def(str(real_logs.get(kind)))), HierarchyOptions())
    build = hierarchy._Build(h)
    for step in hierarchy.PIPELINE.steps:
        if step.name == "templates":
            return h
        if step.when is None or step.when(build):
            step.run(build)
    raise AssertionError("no templates step")


@pytest.mark.parametrize("big", [templates.BIG_METAGRAPH, 3])
@pytest.mark.parametrize("kind", ["tf2_keras_trace", "torch_transformer", "keras_resnet50_trace"])
def test_table_pass_hashes_as_group_by_group(real_logs, kind, big, monkeypatch):
    # big=3: most metagraphs take the numpy refinement, several per level refined together
    monkeypatch.setattr(templates, "BIG_METAGRAPH", big)
    batches = []
    many = templates._wl_hash_many
    monkeypatch.setattr(templates, "_wl_hash_many", lambda graphs, rounds: batches.append(len(graphs)) or many(graphs, rounds))
    h = _before_templates(real_logs, kind)
    assert h.metaedge_table is not None
    templates.hash_structures(h)
    by_table = [g.structure_hash for g in h.groups]
    h.metaedge_table = None  # the group-by-group pass, reading each group's MetaEdges
    for g in h.groups:
        g.structure_hash = 0
    templates.hash_structures(h)
    assert [g.structure_hash for g in h.groups] == by_table
    if big == 3:  # the batched refinement ran, several metagraphs at once
        assert sum(1 for g in h.groups if len(g.metaedges) >= big) >= 5
        assert batches and (kind != "keras_resnet50_trace" or max(batches) >= 2)


def test_many_metagraphs_hashed_together_as_each_alone():
    """``_wl_hash_many`` is ``_wl_hash_numpy`` of each metagraph (isomorphic ones equal)."""
    import numpy as np

    rng = np.random.default_rng(7)
    graphs = []
    for size in (1, 5, 40, 40, 300):
        colour = [int(x) for x in rng.integers(-2 ** 63, 2 ** 63 - 1, size=size, dtype=np.int64)]
        m = size * 2
        a, b = rng.integers(0, size, m), rng.integers(0, size, m)
        k = rng.integers(1, 4, m).astype(np.uint64)
        graphs.append((colour, a, b, k, bool(size % 2)))
    graphs.append(graphs[2])  # the same metagraph twice
    together = templates._wl_hash_many(graphs, 2)
    assert together == [templates._wl_hash_numpy(c, a, b, k, 2, s) for c, a, b, k, s in graphs]
    assert together[2] == together[-1] and len(set(together)) == len(graphs) - 1
