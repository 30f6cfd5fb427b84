"""placement.ChildEdges (base edges placed once for every grouping phase) and
wide.WideContraction (Contraction's answers in numpy): their post-conditions against the plain
definitions."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tb_graph_plugin.cli import load_graph_def
from tb_graph_plugin.graph import build_slim_graph
from tb_graph_plugin.hierarchy import HierarchyOptions, infer, metaedges, regions, scopes, series, split
from tb_graph_plugin.hierarchy.dataflow import Contraction, series_shape, topological_rank
from tb_graph_plugin.hierarchy.placement import ChildEdges
from tb_graph_plugin.hierarchy.wide import WideContraction, distinct
from tb_graph_plugin.hierarchy.model import Hierarchy
from tests.hierarchy.random_dags import draw_dag


@pytest.mark.parametrize("kind", ["keras_resnet50_trace", "keras_inceptionv3_trace", "keras_xception_trace",
                                  "torch_transformer"])
def test_edges_placed_before_the_grouping_phases_answer_for_every_group_after_them(real_logs, kind):
    """Placed right after the scopes, asked after inferred scopes, regions, op series and
    splitting (a small ``split_max_children`` cuts wide groups): every group's edges are its
    metaedges', each base edge once."""
    slim = build_slim_graph(load_graph_def(str(real_logs.get(kind))))
    h = Hierarchy(slim, HierarchyOptions(infer_scopes=True, split_max_children=40))
    scopes.build_scopes(h)
    placed = ChildEdges(h)
    placed.of(h.root.id)  # placed now, for the scope tree
    n_placed = len(h.groups)
    infer.infer_scopes(h)
    regions.infer_regions(h)
    series.detect_op_series(h)
    split.split_wide_groups(h)
    metaedges.build_metaedges(h)
    assert len(h.groups) > n_placed  # groups were made since the placement
    for g in h.groups:
        at = {c: k for k, c in enumerate(g.children)}
        src, dst = placed.of(g.id)
        expected = sorted((at[me.src], at[me.dst]) for me in g.metaedges for _ in me.base_edges)
        assert sorted(zip(src.tolist(), dst.tolist())) == expected, g.name


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_wide_contraction_decides_as_contraction(data):
    succ = draw_dag(data)
    n = len(succ)
    pairs = distinct(np.asarray([k * n + j for k, s in enumerate(succ) for j in s], dtype=np.int64))
    wide = WideContraction(pairs, n, np.asarray(topological_rank(succ), dtype=np.int64))
    plain = Contraction(succ)
    free = list(range(n))
    while len(free) >= 1:
        size = data.draw(st.integers(1, min(6, len(free))))
        block = data.draw(st.lists(st.sampled_from(free), min_size=size, max_size=size, unique=True))
        assert wide.shape(block) == series_shape(succ, block), (succ, block)
        accepted = plain.try_add(block)
        assert wide.try_add(block) == accepted, (succ, block)
        if accepted:
            with pytest.raises(ValueError):
                wide.try_add([block[0]])
        free = [k for k in free if k not in block]
