"""GraphDef -> SlimGraph phases 2 and 5: index names; rename ops that are also namespaces.

Follows the stock dashboard (``tf_graph_common/graph.ts``, summarized in the internals
brief section 3): a node whose name ``A`` is also a namespace (another node is named
``A/...``) is renamed ``A/(A)`` so the group ``A`` and the op can coexist. Difference on
purpose: only MAIN ops make namespaces (embeddings are not placed by name), so
``avg_pool/Mean`` next to its embedded ``avg_pool/Mean/reduction_indices`` Const stays
an op instead of becoming a group holding one op.

``index_names`` pre-condition: phase 1 done. Post-condition: ``slim.index`` maps every
original name to its first op id; duplicates returned.
``rename_namespace_clashes`` pre-condition: embeddings placed. Post-condition: no MAIN op
name is a strict ``/`` prefix of another MAIN op name; ``slim.index`` also maps the new
names.
"""

from __future__ import annotations

from tb_graph_plugin.graph.model import MAIN, SlimGraph

__all__ = ["index_names", "rename_namespace_clashes"]


def index_names(slim: SlimGraph) -> list[str]:
    index = slim.index
    duplicates = []
    for i, name in enumerate(slim.original_names):
        if name in index:
            duplicates.append(name)
            continue
        index[name] = i
    return duplicates


def rename_namespace_clashes(slim: SlimGraph) -> int:
    names = slim.names
    embedding = slim.embedding
    namespaces = set()
    for i, name in enumerate(names):
        if embedding[i] != MAIN:
            continue
        j = name.rfind("/")
        while j > 0:
            scope = name[:j]
            if scope in namespaces:
                break
            namespaces.add(scope)
            j = name.rfind("/", 0, j)
    renamed = 0
    for i, name in enumerate(names):
        if name in namespaces:
            leaf = name[name.rfind("/") + 1:]
            names[i] = f"{name}/({leaf})"
            slim.index.setdefault(names[i], i)
            renamed += 1
    return renamed
