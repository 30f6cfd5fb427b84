"""series_names.op_clusters (one pass by rstrip) against the stock regex on each leaf."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from tb_graph_plugin.hierarchy.series_names import op_clusters, op_clusters_by_regex

_ASCII = st.text(alphabet="ab_/019", min_size=1, max_size=8)  # the one-pass path
_ANY = st.text(alphabet="ab_/019\u0661\n", min_size=1, max_size=8)  # mostly the regex path

_OP = st.sampled_from(["Add", "Mul"])


def _comparable(clusters, bare):
    """The clusters with sorted items (the caller sorts them); the bare keys a cluster key can
    equal (no digit)."""
    return {k: sorted(v) for k, v in clusters.items()}, {k: c for k, c in bare.items() if not re.search(r"\d", k[1])}


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.lists(st.tuples(_ASCII, _OP), min_size=1, max_size=30),
                 st.lists(st.tuples(_ANY, _OP), min_size=1, max_size=30)))
def test_op_clusters_equal_the_regex_on_each_leaf(named_ops):
    names = [n for n, _ in named_ops]
    ops = [o for _, o in named_ops]
    children = list(range(len(names)))[::-1]
    fast = _comparable(*op_clusters(names, ops, children))
    slow = _comparable(*op_clusters_by_regex(names, ops, children))
    assert fast == slow
    assert list(fast[0]) == list(slow[0])  # the same keys in the same (first member) order


def test_op_clusters_of_a_training_step_group():
    names = ["adam/Sub", "adam/Sub_1", "adam/x/Sub_2", "adam/conv2d_1", "adam/conv2d_2", "adam/sub_3"]
    ops = ["Sub", "Sub", "Sub", "Conv2D", "Conv2D", "Sub"]
    clusters, bare = op_clusters(names, ops, list(range(6)))
    assert clusters == {("Sub", "Sub_"): [(1, 1), (2, 2)], ("Sub", "sub_"): [(3, 5)]}
    assert bare == {("Sub", "Sub_"): 0}
