"""GraphDef -> SlimGraph phases 2 and 5: index names; rename ops that are also namespaces.

Follows the stock dashboard ([TB-SRC] ``tf_graph_common/graph.ts``, see
docs/references.md): a node whose name ``A`` is also a namespace (another node is named
``A/...``) is renamed ``A/(A)`` so the group ``A`` and the op can coexist. Difference on
purpose: only MAIN ops make namespaces (embeddings are not placed by name), so
``avg_pool/Mean`` next to its embedded ``avg_pool/Mean/reduction_indices`` Const stays
an op instead of becoming a group holding one op.

``index_names`` pre-condition: phase 1 done. Post-condition: ``slim.index`` maps every
original name to its first op id; duplicates returned.
``rename_namespace_clashes`` pre-condition: embeddings placed. Post-condition: no MAIN op
name is a strict ``/`` prefix of another MAIN op name; ``slim.index`` also maps the new
names.

Cost: C-level passes (a dict insert per op; an ``rpartition`` per MAIN op and a set lookup per
op); Python loops only over the distinct scopes holding MAIN ops and over the renamed ops.
"""

from __future__ import annotations

from itertools import compress, repeat
from operator import eq, itemgetter

import numpy as np

from tb_graph_plugin.graph.model import SlimGraph
from tb_graph_plugin.wire import EmbeddingRole

__all__ = ["index_names", "rename_namespace_clashes"]


def index_names(slim: SlimGraph, op_ids: list[int]) -> list[str]:
    """Fill ``slim.index`` (name -> op id, from ``op_ids``: ``list(range(n_nodes))``, whose int
    objects the index then shares); return the names seen twice (the first op keeps the name)."""
    names = slim.original_names
    if not slim.index:  # usual case, no duplicate names: one C-level pass
        # A non-str key while it is built: CPython then keeps each key's hash in the table (a
        # str-only dict reads it from each probed key object, a cache miss per probe), so
        # building it and the edges' lookups take ~0.5x and ~0.8x the time at 1M names.
        index = {None: -1}
        index.update(zip(names, op_ids))
        del index[None]
        if len(index) == len(names):
            slim.index = index
            return []
    index = slim.index
    duplicates = []
    for i, name in zip(op_ids, names):
        if name in index:
            duplicates.append(name)
            continue
        index[name] = i
    return duplicates


def rename_namespace_clashes(slim: SlimGraph) -> int:
    names = slim.names
    # the scopes directly holding a MAIN op (C-level: ``rpartition`` gives "" for a name without
    # one), then all their ancestors
    is_main = map(eq, slim.embedding, repeat(EmbeddingRole.MAIN))
    parents = set(map(itemgetter(0), map(str.rpartition, compress(names, is_main), repeat("/"))))
    parents.discard("")
    namespaces = set()
    for scope in parents:
        j = len(scope)
        while j > 0:
            prefix = scope[:j]
            if prefix in namespaces:
                break
            namespaces.add(prefix)
            j = scope.rfind("/", 0, j)
    if namespaces.isdisjoint(names):  # the usual case: one C-level pass
        return 0
    clashes = np.flatnonzero(np.fromiter(map(namespaces.__contains__, names), dtype=bool, count=len(names))).tolist()
    for i in clashes:
        name = names[i]
        leaf = name[name.rfind("/") + 1:]
        names[i] = f"{name}/({leaf})"
        slim.index.setdefault(names[i], i)
    return len(clashes)
